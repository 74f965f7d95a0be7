/* cli_config: config file, environment and defaults (see cli_config.h). */
#include "cli/cli_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_buf.h"

struct conf_key {
	const char *name;
	const char *env;
	const char *flag;
};

/* Indexed by enum cli_conf_key. */
static const struct conf_key conf_keys[CLI_CONF_COUNT] = {
	[CLI_CONF_ENDPOINT] = { "endpoint", "AQUIFER_ENDPOINT", "endpoint" },
	[CLI_CONF_TOKEN] = { "token", "AQUIFER_TOKEN", NULL },
	[CLI_CONF_PROJECT] = { "project", "AQUIFER_PROJECT", "project" },
	[CLI_CONF_LOCATION] = { "location", "AQUIFER_LOCATION", "location" },
	[CLI_CONF_CA_FILE] = { "ca_file", "AQUIFER_CA_FILE", "ca-file" },
};

#define CONF_LINE_MAX 8192

void cli_conf_init(struct cli_conf *c)
{
	memset(c, 0, sizeof(*c));
}

void cli_conf_cleanup(struct cli_conf *c)
{
	int i;

	for (i = 0; i < CLI_CONF_COUNT; i++)
		free(c->val[i]);
	cli_conf_init(c);
}

int cli_conf_key(const char *name)
{
	int i;

	for (i = 0; i < CLI_CONF_COUNT; i++)
		if (strcmp(conf_keys[i].name, name) == 0)
			return i;
	return -1;
}

const char *cli_conf_key_name(int key)
{
	return key >= 0 && key < CLI_CONF_COUNT ? conf_keys[key].name : NULL;
}

const char *cli_conf_key_env(int key)
{
	return key >= 0 && key < CLI_CONF_COUNT ? conf_keys[key].env : NULL;
}

const char *cli_conf_key_flag(int key)
{
	return key >= 0 && key < CLI_CONF_COUNT ? conf_keys[key].flag : NULL;
}

int cli_conf_path(char *buf, size_t size, aq_msg *msg)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && *xdg)
		n = snprintf(buf, size, "%s/aquifer/config", xdg);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.config/aquifer/config", home);
	else
		return aq_fail(msg, AQ_EINVAL, "cannot find the config file: set HOME or XDG_CONFIG_HOME");
	if (n < 0 || (size_t)n >= size)
		return aq_fail(msg, AQ_ETOOBIG, "config file path too long");
	return AQ_OK;
}

int cli_conf_set(struct cli_conf *c, int key, const char *value)
{
	char *copy = NULL;

	if (key < 0 || key >= CLI_CONF_COUNT)
		return AQ_EINVAL;
	if (value && (copy = strdup(value)) == NULL)
		return AQ_ENOMEM;
	free(c->val[key]);
	c->val[key] = copy;
	return AQ_OK;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

int cli_conf_load(struct cli_conf *c, const char *path, aq_msg *msg)
{
	FILE *fp = fopen(path, "r");
	char line[CONF_LINE_MAX];
	int rc = AQ_OK, lineno = 0;

	if (fp == NULL) {
		if (errno == ENOENT)
			return AQ_OK;
		return aq_fail(msg, AQ_EIO, "cannot read %s: %s", path, strerror(errno));
	}
	while (fgets(line, sizeof(line), fp)) {
		char *eq, *key, *val;
		int k;
		lineno++;
		key = trim(line);
		if (*key == '\0' || *key == '#')
			continue;
		if ((eq = strchr(key, '=')) == NULL) {
			rc = aq_fail(msg, AQ_EINVAL, "%s:%d: expected key = value", path, lineno);
			goto out;
		}
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		if ((k = cli_conf_key(key)) < 0)
			continue;   /* a newer aquifer's key: keep going */
		if ((rc = cli_conf_set(c, k, val)) != AQ_OK)
			goto out;
	}
out:
	fclose(fp);
	return rc;
}

/* mkdir -p the parent folder of path, mode 0700. */
static int make_parent(const char *path, aq_msg *msg)
{
	char dir[4096];
	char *p;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return aq_fail(msg, AQ_ETOOBIG, "config file path too long");
	if ((p = strrchr(dir, '/')) == NULL)
		return AQ_OK;
	*p = '\0';
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			return aq_fail(msg, AQ_EIO, "cannot create %s: %s", dir, strerror(errno));
		*p = '/';
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return aq_fail(msg, AQ_EIO, "cannot create %s: %s", dir, strerror(errno));
	return AQ_OK;
}

int cli_conf_save(const struct cli_conf *c, const char *path, aq_msg *msg)
{
	struct cli_buf tmp, text;
	int fd = -1, rc = AQ_OK, i;
	size_t off = 0;

	cli_buf_init(&tmp);
	cli_buf_init(&text);
	if ((rc = make_parent(path, msg)) != AQ_OK)
		goto out;
	cli_buf_addf(&tmp, "%s.%ld.tmp", path, (long)getpid());
	cli_buf_add(&text, "# aquifer CLI configuration (aquifer config set KEY VALUE)\n");
	for (i = 0; i < CLI_CONF_COUNT; i++)
		if (c->val[i])
			cli_buf_addf(&text, "%s = %s\n", conf_keys[i].name, c->val[i]);
	if (tmp.err || text.err) {
		rc = AQ_ENOMEM;
		goto out;
	}
	unlink(cli_buf_str(&tmp));
	fd = open(cli_buf_str(&tmp), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) != 0) {
		rc = aq_fail(msg, AQ_EIO, "cannot write %s: %s", cli_buf_str(&tmp), strerror(errno));
		goto out;
	}
	while (off < text.len) {
		ssize_t n = write(fd, text.p + off, text.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = aq_fail(msg, AQ_EIO, "cannot write %s: %s", cli_buf_str(&tmp), strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		rc = aq_fail(msg, AQ_EIO, "cannot write %s: %s", cli_buf_str(&tmp), strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(cli_buf_str(&tmp), path) != 0) {
		rc = aq_fail(msg, AQ_EIO, "cannot replace %s: %s", path, strerror(errno));
		goto out;
	}
out:
	if (fd >= 0)
		close(fd);
	if (rc != AQ_OK && tmp.len)
		unlink(cli_buf_str(&tmp));
	cli_buf_cleanup(&tmp);
	cli_buf_cleanup(&text);
	return rc;
}
