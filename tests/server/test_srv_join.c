/* Unit tests for the join token's install command (server/srv_join.c):
 * shell quoting, and the public URL it is built from (server/srv_cfg.c).
 * The node-token rules are tests/server/test_srv_auth.c's. */
#include "server/srv_cfg.h"
#include "server/srv_join.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

START_TEST(test_shell_quote)
{
	char out[200];

	ck_assert_int_eq(srv_shell_quote("https://cp.example:8443", out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "https://cp.example:8443");
	ck_assert_int_eq(srv_shell_quote("a b", out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "'a b'");
	ck_assert_int_eq(srv_shell_quote("x;$(id)`id`", out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "'x;$(id)`id`'");
	ck_assert_int_eq(srv_shell_quote("it's", out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "'it'\\''s'");
	ck_assert_int_eq(srv_shell_quote("", out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "''");
	ck_assert_int_eq(srv_shell_quote("'''''''", out, 10), AQ_ETOOBIG);
}
END_TEST

START_TEST(test_install_command)
{
	char out[1000];

	ck_assert_int_eq(srv_install_command("https://cp:8443", "T.O.K", "east", "n1", true, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "install-agent.sh --server https://cp:8443 --token T.O.K --location east --node n1 "
			      "--shelf /srv/aquifer/shelf --ca-file /etc/aquifer/ca.crt");
	ck_assert_int_eq(srv_install_command("http://h:1/a'b", "T", "east", NULL, false, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "install-agent.sh --server 'http://h:1/a'\\''b' --token T --location east "
			      "--shelf /srv/aquifer/shelf");
	ck_assert_int_eq(srv_install_command("http://h", "T", "east", "", false, out, 20), AQ_ETOOBIG);
}
END_TEST

START_TEST(test_public_url)
{
	aq_msg msg = { .text = "" };
	char out[300];

	ck_assert_int_eq(srv_cfg_public_url_check("https://cp.example:8443", &msg), AQ_OK);
	ck_assert_int_eq(srv_cfg_public_url_check("http://[fd00::1]:8080/aq", &msg), AQ_OK);
	ck_assert_int_eq(srv_cfg_public_url_check("ftp://x", &msg), AQ_EINVAL);
	ck_assert_int_eq(srv_cfg_public_url_check("https://", &msg), AQ_EINVAL);
	ck_assert_int_eq(srv_cfg_public_url_check("https://a b", &msg), AQ_EINVAL);
	ck_assert_int_eq(srv_cfg_public_url_check("https://a\"b", &msg), AQ_EINVAL);
	ck_assert_int_eq(srv_cfg_public_url_check("https://a\nb", &msg), AQ_EINVAL);
	srv_cfg_public_url_default("127.0.0.1:8080", true, "cp", out, sizeof(out));
	ck_assert_str_eq(out, "https://127.0.0.1:8080");
	srv_cfg_public_url_default("0.0.0.0:8080", false, "cp", out, sizeof(out));
	ck_assert_str_eq(out, "http://cp:8080");
	srv_cfg_public_url_default("[::]:8443", true, "cp.example", out, sizeof(out));
	ck_assert_str_eq(out, "https://cp.example:8443");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_join");
	TCase *tc = tcase_create("srv_join");

	tcase_add_test(tc, test_shell_quote);
	tcase_add_test(tc, test_install_command);
	tcase_add_test(tc, test_public_url);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
