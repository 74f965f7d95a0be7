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
#include "util/ut_conf.h"
#include "util/ut_file.h"

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

static int conf_line(void *arg, const char *key, const char *value, aq_msg *msg)
{
	int k = cli_conf_key(key), rc;

	if (k < 0)
		return AQ_OK; /* a newer aquifer's key: keep going */
	if ((rc = cli_conf_set(arg, k, value)) != AQ_OK)
		return aq_fail(msg, rc, "%s", aq_err_str(rc));
	return AQ_OK;
}

/* util/ut_conf's format; no file is no setting (UT_CONF_MISSING_OK). */
int cli_conf_load(struct cli_conf *c, const char *path, aq_msg *msg)
{
	return ut_conf_load(path, UT_CONF_MISSING_OK, conf_line, c, msg);
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
	struct ut_buf text;
	int rc, i;

	ut_buf_init(&text, CLI_BUF_MAX);
	if ((rc = make_parent(path, msg)) != AQ_OK)
		goto out;
	ut_buf_adds(&text, "# aquifer CLI configuration (aquifer config set KEY VALUE)\n");
	for (i = 0; i < CLI_CONF_COUNT; i++)
		if (c->val[i])
			ut_buf_addf(&text, "%s = %s\n", conf_keys[i].name, c->val[i]);
	if (text.err) {
		rc = AQ_ENOMEM;
		goto out;
	}
	rc = ut_file_write(path, text.p, text.len, msg); /* 0600, temporary, fsync, rename */
out:
	ut_buf_cleanup(&text);
	return rc;
}
