/* Unit tests for the node-token rules (server/srv_auth.c) and the join
 * token's install command (server/srv_join.c): who may join as what, which
 * node token speaks for which node incarnation, when a token is renewed,
 * shell quoting and the public URL. */
#include "server/srv_auth.h"
#include "server/srv_cfg.h"
#include "server/srv_join.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char key[SRV_KEY_LEN] = "0123456789abcdef0123456789abcdef";

static struct srv_auth join_token(const char *loc, const char *node)
{
	struct srv_auth a = { .role = SRV_ROLE_NODE };

	snprintf(a.use, sizeof(a.use), "%s", SRV_USE_JOIN);
	snprintf(a.subject, sizeof(a.subject), "join");
	snprintf(a.location, sizeof(a.location), "%s", loc);
	snprintf(a.node, sizeof(a.node), "%s", node);
	snprintf(a.jti, sizeof(a.jti), "00112233445566778899aabb");
	return a;
}

static struct srv_auth node_token(const char *node, const char *nid)
{
	struct srv_auth a = { .role = SRV_ROLE_NODE };

	snprintf(a.use, sizeof(a.use), "%s", SRV_USE_NODE);
	snprintf(a.subject, sizeof(a.subject), "%s", node);
	snprintf(a.location, sizeof(a.location), "east");
	snprintf(a.nid, sizeof(a.nid), "%s", nid);
	return a;
}

START_TEST(test_join_check)
{
	aq_msg msg = { "" };
	struct srv_auth a = join_token("east", ""), b = join_token("east", "n1"), n = node_token("n1", "aa");

	ck_assert_int_eq(srv_auth_join_check(&a, "n7", "east", &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_join_check(&a, "n7", "west", &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "for location \"east\"") != NULL);
	ck_assert_int_eq(srv_auth_join_check(&b, "n1", "east", &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_join_check(&b, "n2", "east", &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "for node \"n1\"") != NULL);
	/* a node token never joins, not even as itself */
	ck_assert_int_eq(srv_auth_join_check(&n, "n1", "east", &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "only a join token may join") != NULL);
	/* no location, no id: refused */
	a.location[0] = '\0';
	ck_assert_int_eq(srv_auth_join_check(&a, "n7", "east", &msg), AQ_EACCES);
	b.jti[0] = '\0';
	ck_assert_int_eq(srv_auth_join_check(&b, "n1", "east", &msg), AQ_EACCES);
	a = join_token("east", "");
	a.role = SRV_ROLE_ADMIN;
	ck_assert_int_eq(srv_auth_join_check(&a, "n7", "east", &msg), AQ_EACCES);
}
END_TEST

START_TEST(test_node_token_check)
{
	aq_msg msg = { "" };
	json_t *doc = json_pack("{s:s,s:{s:s}}", "name", "nodes/n1", "internal", "incarnation", "aa");
	json_t *legacy = json_pack("{s:s,s:{}}", "name", "nodes/n1", "internal");
	struct srv_auth ok = node_token("n1", "aa"), old = node_token("n1", "bb"), other = node_token("n2", "aa");
	struct srv_auth join = join_token("east", "n1"), pre = node_token("n1", "");

	ck_assert_int_eq(srv_auth_node_check(&ok, doc, &msg), AQ_OK);
	/* a token of an earlier incarnation (deleted and joined again) */
	ck_assert_int_eq(srv_auth_node_check(&old, doc, &msg), AQ_EUNAUTH);
	ck_assert(strstr(msg.text, "revoked") != NULL);
	/* a token of another node */
	ck_assert_int_eq(srv_auth_node_check(&other, doc, &msg), AQ_EUNAUTH);
	/* a join token reports nothing */
	ck_assert_int_eq(srv_auth_node_check(&join, doc, &msg), AQ_EUNAUTH);
	/* a token from before incarnations: only while the node has none */
	pre.use[0] = '\0';
	ck_assert_int_eq(srv_auth_node_check(&pre, legacy, &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_node_check(&pre, doc, &msg), AQ_EUNAUTH);
	/* a current-use token without incarnation for a node without one */
	ck_assert_int_eq(srv_auth_node_check(&ok, legacy, &msg), AQ_EUNAUTH);
	ok.role = SRV_ROLE_ADMIN;
	ck_assert_int_eq(srv_auth_node_check(&ok, doc, &msg), AQ_EACCES);
	json_decref(doc);
	json_decref(legacy);
}
END_TEST

START_TEST(test_token_stale)
{
	struct srv_auth a = node_token("n1", "aa");
	long ttl = 1000;

	a.iat = 10000;
	a.exp = 11000;
	ck_assert(!srv_auth_node_stale(&a, ttl, 10100));
	ck_assert(!srv_auth_node_stale(&a, ttl, 10499));
	ck_assert(srv_auth_node_stale(&a, ttl, 10501)); /* past half its life */
	a.exp = 10000 + 10L * 365 * 86400;               /* longer-lived than allowed */
	ck_assert(srv_auth_node_stale(&a, ttl, 10001));
	a = node_token("n1", "");                         /* no incarnation */
	a.iat = 10000;
	a.exp = 11000;
	ck_assert(srv_auth_node_stale(&a, ttl, 10001));
}
END_TEST

/* The claims survive a round trip through a signed token. */
START_TEST(test_claims)
{
	struct srv_auth in = join_token("east", "n1"), out;
	aq_msg msg = { "" };
	char *tok = NULL, authz[4200];

	ck_assert_int_eq(srv_auth_token_make(key, &in, 600, &tok, &msg), AQ_OK);
	snprintf(authz, sizeof(authz), "Bearer %s", tok);
	ck_assert_int_eq(srv_auth_token_verify(key, authz, &out, &msg), AQ_OK);
	ck_assert_str_eq(out.use, SRV_USE_JOIN);
	ck_assert_str_eq(out.node, "n1");
	ck_assert_str_eq(out.location, "east");
	ck_assert_int_eq(strlen(out.jti), 24);
	ck_assert_int_eq(out.exp - out.iat, 600);
	free(tok);
	in = node_token("n1", "0123abcd");
	ck_assert_int_eq(srv_auth_token_make(key, &in, 600, &tok, &msg), AQ_OK);
	snprintf(authz, sizeof(authz), "Bearer %s", tok);
	ck_assert_int_eq(srv_auth_token_verify(key, authz, &out, &msg), AQ_OK);
	ck_assert_str_eq(out.use, SRV_USE_NODE);
	ck_assert_str_eq(out.nid, "0123abcd");
	ck_assert_str_eq(out.node, "");
	free(tok);
}
END_TEST

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
	aq_msg msg = { "" };
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
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_join_check);
	tcase_add_test(tc, test_node_token_check);
	tcase_add_test(tc, test_token_stale);
	tcase_add_test(tc, test_claims);
	tcase_add_test(tc, test_shell_quote);
	tcase_add_test(tc, test_install_command);
	tcase_add_test(tc, test_public_url);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
