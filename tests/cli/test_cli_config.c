/* Unit tests for cli/cli_config.c and the settings precedence of cli_run():
 * file mode 0600, flags over environment over file, config and auth verbs,
 * and the exit status classes that need no server. */
#include "cli/cli.h"

#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

#define W(s) ((char *)(uintptr_t)(s))

static char dir[256];
static char *out_text, *err_text;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/aq-cli-conf-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("XDG_CONFIG_HOME", dir, 1);
	unsetenv("AQUIFER_ENDPOINT");
	unsetenv("AQUIFER_TOKEN");
	unsetenv("AQUIFER_PROJECT");
	unsetenv("AQUIFER_LOCATION");
	unsetenv("AQUIFER_CA_FILE");
}

static void teardown(void)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/aquifer/config", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/aquifer", dir);
	rmdir(path);
	rmdir(dir);
	free(out_text);
	free(err_text);
	out_text = err_text = NULL;
}

/* Run aquifer with the words given; stdout and stderr land in out_text/err_text. */
static int run(const char *first, ...)
{
	char *argv[32];
	size_t olen = 0, elen = 0;
	FILE *out, *err;
	va_list ap;
	int argc = 0, rc;
	const char *w = first;

	free(out_text);
	free(err_text);
	out_text = err_text = NULL;
	argv[argc++] = W("aquifer");
	va_start(ap, first);
	while (w && argc < 31) {
		argv[argc++] = W(w);
		w = va_arg(ap, const char *);
	}
	va_end(ap);
	argv[argc] = NULL;
	out = open_memstream(&out_text, &olen);
	err = open_memstream(&err_text, &elen);
	rc = cli_run(argc, argv, out, err);
	fclose(out);
	fclose(err);
	return rc;
}

START_TEST(test_path)
{
	char path[512], want[512];
	aq_msg msg = { .text = { 0 } };

	ck_assert_int_eq(cli_conf_path(path, sizeof(path), &msg), AQ_OK);
	snprintf(want, sizeof(want), "%s/aquifer/config", dir);
	ck_assert_str_eq(path, want);
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/home/someone", 1);
	ck_assert_int_eq(cli_conf_path(path, sizeof(path), &msg), AQ_OK);
	ck_assert_str_eq(path, "/home/someone/.config/aquifer/config");
	setenv("XDG_CONFIG_HOME", dir, 1);
	ck_assert_int_eq(cli_conf_path(path, 8, &msg), AQ_ETOOBIG);
}
END_TEST

START_TEST(test_set_get_mode)
{
	char path[512];
	struct stat st;

	ck_assert_int_eq(run("config", "set", "project", "p1", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(run("config", "set", "location", "us-east1", NULL), CLI_EXIT_OK);
	snprintf(path, sizeof(path), "%s/aquifer/config", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/aquifer", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(run("config", "get", "project", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "p1\n");
	ck_assert_int_eq(run("config", "list", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "project = p1\nlocation = us-east1\n");
	ck_assert_int_eq(run("config", "unset", "project", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(run("config", "get", "project", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "");
	ck_assert_str_eq(err_text, "(unset)\n");
	ck_assert_int_eq(run("config", "set", "colour", "blue", NULL), CLI_EXIT_USAGE);
	ck_assert_int_eq(run("config", "set", "endpoint", "localhost:8080", NULL), CLI_EXIT_USAGE);
	ck_assert_int_eq(run("config", "set", "endpoint", "https://aq.example:8443", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(run("volumes", "list", "--project=p", "--endpoint=ftp://x", NULL),
			 CLI_EXIT_USAGE);
	ck_assert_int_eq(run("config", "set", "project", NULL), CLI_EXIT_USAGE);
}
END_TEST

START_TEST(test_precedence)
{
	ck_assert_int_eq(run("config", "set", "project", "from-file", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(run("config", "get", "project", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "from-file\n");
	setenv("AQUIFER_PROJECT", "from-env", 1);
	ck_assert_int_eq(run("config", "get", "project", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "from-env\n");
	ck_assert_int_eq(run("config", "get", "project", "--project=from-flag", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "from-flag\n");
	unsetenv("AQUIFER_PROJECT");
	ck_assert_int_eq(run("config", "get", "endpoint", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, CLI_CONF_DEFAULT_ENDPOINT "\n");
	setenv("AQUIFER_ENDPOINT", "http://127.0.0.1:9", 1);
	ck_assert_int_eq(run("config", "get", "endpoint", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "http://127.0.0.1:9\n");
	unsetenv("AQUIFER_ENDPOINT");
}
END_TEST

START_TEST(test_auth)
{
	ck_assert_int_eq(run("auth", "print-token", NULL), CLI_EXIT_FAIL);
	ck_assert_int_eq(run("auth", "login", "--token", "tok-123", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(run("auth", "print-token", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "tok-123\n");
	ck_assert_int_eq(run("config", "list", NULL), CLI_EXIT_OK);
	ck_assert_msg(strstr(out_text, "tok-123") == NULL, "config list shows the token: %s", out_text);
	setenv("AQUIFER_TOKEN", "env-tok", 1);
	ck_assert_int_eq(run("auth", "print-token", NULL), CLI_EXIT_OK);
	ck_assert_str_eq(out_text, "env-tok\n");
	unsetenv("AQUIFER_TOKEN");
	ck_assert_int_eq(run("auth", "login", NULL), CLI_EXIT_USAGE);
}
END_TEST

START_TEST(test_load_file)
{
	struct cli_conf c;
	aq_msg msg = { .text = { 0 } };
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/hand-written", dir);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("# comment\n\n  endpoint =  http://h:1  \nfuture_key = x\nca_file=/etc/ca.pem\n", fp);
	fclose(fp);
	cli_conf_init(&c);
	ck_assert_int_eq(cli_conf_load(&c, path, &msg), AQ_OK);
	ck_assert_str_eq(c.val[CLI_CONF_ENDPOINT], "http://h:1");
	ck_assert_str_eq(c.val[CLI_CONF_CA_FILE], "/etc/ca.pem");
	ck_assert_ptr_null(c.val[CLI_CONF_TOKEN]);
	cli_conf_cleanup(&c);
	fp = fopen(path, "w");
	fputs("no equals sign\n", fp);
	fclose(fp);
	ck_assert_int_eq(cli_conf_load(&c, path, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, ":1:") != NULL, "%s", msg.text);
	cli_conf_cleanup(&c);
	unlink(path);
	/* A missing file is an empty config. */
	ck_assert_int_eq(cli_conf_load(&c, path, &msg), AQ_OK);
	cli_conf_cleanup(&c);
}
END_TEST

START_TEST(test_exit_classes)
{
	/* usage: nothing is sent */
	ck_assert_int_eq(run("volumes", "list", "--bogus", NULL), CLI_EXIT_USAGE);
	ck_assert_msg(strstr(err_text, "--bogus") != NULL, "%s", err_text);
	ck_assert_int_eq(run(NULL), CLI_EXIT_USAGE);
	ck_assert_int_eq(run("volumes", NULL), CLI_EXIT_USAGE);
	ck_assert_int_eq(run("volumes", "list", NULL), CLI_EXIT_USAGE);   /* no project */
	ck_assert_msg(strstr(err_text, "no project") != NULL, "%s", err_text);
	ck_assert_int_eq(run("volumes", "list", "--project=p", "--location=l", "--format=xml", NULL),
			 CLI_EXIT_USAGE);
	ck_assert_int_eq(run("storage-pools", "update", "p1", "--project=p", "--location=l", NULL),
			 CLI_EXIT_USAGE);
	ck_assert_msg(strstr(err_text, "nothing to update") != NULL, "%s", err_text);
	/* network: port 9 (discard) is closed on loopback */
	ck_assert_int_eq(run("volumes", "list", "--project=p", "--location=l",
			     "--endpoint=http://127.0.0.1:9", NULL), CLI_EXIT_NET);
	ck_assert_msg(strstr(err_text, "cannot reach") != NULL, "%s", err_text);
	/* help is not an error */
	ck_assert_int_eq(run("volumes", "create", "--help", NULL), CLI_EXIT_OK);
	ck_assert_msg(strstr(out_text, "--share-name") != NULL, "%s", out_text);
	ck_assert_int_eq(run("--help", NULL), CLI_EXIT_OK);
	ck_assert_int_eq(run("__routes", NULL), CLI_EXIT_OK);
	ck_assert_msg(strstr(out_text, "GET /v1/projects\n") != NULL, "%s", out_text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_config");
	TCase *tc = tcase_create("cli_config");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_path);
	tcase_add_test(tc, test_set_get_mode);
	tcase_add_test(tc, test_precedence);
	tcase_add_test(tc, test_auth);
	tcase_add_test(tc, test_load_file);
	tcase_add_test(tc, test_exit_classes);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
