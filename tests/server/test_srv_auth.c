/* Unit tests for server/srv_auth.c: the route access rules every request
 * passes (role, project, cluster admin, node and metrics tokens), the
 * node-role rules (who may join as what, which node token speaks for which
 * node incarnation, when a token is renewed) and token signing and
 * verification. */
#include "server/srv_auth.h"

#include <check.h>
#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

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
	aq_msg msg = { .text = "" };
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
	aq_msg msg = { .text = "" };
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
	aq_msg msg = { .text = "" };
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


static struct srv_auth project_token(enum srv_role role, const char *project)
{
	struct srv_auth a = { .role = role };

	snprintf(a.project, sizeof(a.project), "%s", project);
	snprintf(a.subject, sizeof(a.subject), "someone");
	return a;
}

/* The access matrix: each role against each access level, on its own
 * project and on another. */
START_TEST(test_route_access)
{
	aq_msg msg = { .text = "" };
	struct srv_auth v = project_token(SRV_ROLE_VIEWER, "acme"), e = project_token(SRV_ROLE_EDITOR, "acme");
	struct srv_auth ad = project_token(SRV_ROLE_ADMIN, "acme"), cl = project_token(SRV_ROLE_ADMIN, "");
	struct srv_auth n = node_token("n1", "aa"), m = { .role = SRV_ROLE_METRICS };

	cl.cluster = true;
	/* project levels: the role must reach the level, on the token's project */
	ck_assert_int_eq(srv_auth_route(&v, SRV_ACCESS_VIEWER, "acme", &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_route(&v, SRV_ACCESS_EDITOR, "acme", &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "role viewer may not call this method on project \"acme\"; it needs editor") != NULL);
	ck_assert_int_eq(srv_auth_route(&e, SRV_ACCESS_EDITOR, "acme", &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_route(&e, SRV_ACCESS_ADMIN, "acme", &msg), AQ_EACCES);
	ck_assert_int_eq(srv_auth_route(&ad, SRV_ACCESS_ADMIN, "acme", &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_route(&ad, SRV_ACCESS_VIEWER, "other", &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "permission denied on project \"other\"") != NULL);
	ck_assert_int_eq(srv_auth_route(&ad, SRV_ACCESS_VIEWER, NULL, &msg), AQ_EACCES);
	/* a project admin is no cluster admin */
	ck_assert_int_eq(srv_auth_route(&ad, SRV_ACCESS_CLUSTER, "acme", &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "cluster admin") != NULL);
	ck_assert_int_eq(srv_auth_route(&ad, SRV_ACCESS_NODE, NULL, &msg), AQ_EACCES);
	ck_assert_int_eq(srv_auth_route(&v, SRV_ACCESS_ANY, NULL, &msg), AQ_OK);
	/* the cluster admin passes everything */
	for (int acc = SRV_ACCESS_VIEWER; acc <= SRV_ACCESS_OPEN; acc++)
		ck_assert_int_eq(srv_auth_route(&cl, (enum srv_access)acc, "acme", &msg), AQ_OK);
	/* node tokens: the agent API only, never a project */
	ck_assert_int_eq(srv_auth_route(&n, SRV_ACCESS_NODE, NULL, &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_route(&n, SRV_ACCESS_ANY, NULL, &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "node tokens may only call the agent API") != NULL);
	n.project[0] = '\0';
	ck_assert_int_eq(srv_auth_route(&n, SRV_ACCESS_VIEWER, "", &msg), AQ_EACCES);
	ck_assert_int_eq(srv_auth_route(&n, SRV_ACCESS_CLUSTER, NULL, &msg), AQ_EACCES);
	/* metrics tokens: nothing but GET /metrics (srv_auth_metrics) */
	ck_assert_int_eq(srv_auth_route(&m, SRV_ACCESS_ANY, NULL, &msg), AQ_EACCES);
	ck_assert(strstr(msg.text, "a metrics token may only read GET /metrics") != NULL);
	ck_assert_int_eq(srv_auth_route(&m, SRV_ACCESS_NODE, NULL, &msg), AQ_EACCES);
	ck_assert_int_eq(srv_auth_metrics(&m, &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_metrics(&cl, &msg), AQ_OK);
	ck_assert_int_eq(srv_auth_metrics(&ad, &msg), AQ_EACCES);
	ck_assert_int_eq(srv_auth_metrics(&n, &msg), AQ_EACCES);
	/* open routes need nobody */
	ck_assert_int_eq(srv_auth_route(&(struct srv_auth){ .role = SRV_ROLE_NONE }, SRV_ACCESS_OPEN, NULL, &msg), AQ_OK);
}
END_TEST

/* What verification refuses: no header, not a bearer, garbage, another
 * key, another algorithm, an expired token, an unknown role. */
START_TEST(test_verify_refuses)
{
	static const unsigned char other[SRV_KEY_LEN] = "ffffffffffffffffffffffffffffffff";
	struct srv_auth in = project_token(SRV_ROLE_EDITOR, "acme"), out;
	aq_msg msg = { .text = "" };
	char *tok = NULL, authz[4200], *raw;
	jwt_t *jwt = NULL;

	ck_assert_int_eq(srv_auth_token_verify(key, NULL, &out, &msg), AQ_EUNAUTH);
	ck_assert_int_eq(srv_auth_token_verify(key, "Basic abc", &out, &msg), AQ_EUNAUTH);
	ck_assert_int_eq(srv_auth_token_verify(key, "Bearer not.a.jwt", &out, &msg), AQ_EUNAUTH);
	ck_assert_int_eq(srv_auth_token_make(other, &in, 600, &tok, &msg), AQ_OK);
	snprintf(authz, sizeof(authz), "Bearer %s", tok);
	ck_assert_int_eq(srv_auth_token_verify(key, authz, &out, &msg), AQ_EUNAUTH);
	free(tok);
	ck_assert_int_eq(srv_auth_token_make(key, &in, 600, &tok, &msg), AQ_OK);
	snprintf(authz, sizeof(authz), "Bearer %s", tok);
	ck_assert_int_eq(srv_auth_token_verify(key, authz, &out, &msg), AQ_OK);
	ck_assert_int_eq(out.role, SRV_ROLE_EDITOR);
	ck_assert_str_eq(out.project, "acme");
	free(tok);
	/* "alg": "none" */
	ck_assert_int_eq(jwt_new(&jwt), 0);
	jwt_add_grant(jwt, "role", "admin");
	jwt_add_grant(jwt, "sub", "x");
	jwt_add_grant_int(jwt, "exp", 4000000000L);
	raw = jwt_encode_str(jwt);
	ck_assert_ptr_nonnull(raw);
	snprintf(authz, sizeof(authz), "Bearer %s", raw);
	ck_assert_int_eq(srv_auth_token_verify(key, authz, &out, &msg), AQ_EUNAUTH);
	free(raw);
	/* signed with the key, but expired */
	jwt_del_grants(jwt, "exp");
	jwt_add_grant_int(jwt, "exp", 1000);
	jwt_set_alg(jwt, JWT_ALG_HS256, key, SRV_KEY_LEN);
	raw = jwt_encode_str(jwt);
	snprintf(authz, sizeof(authz), "Bearer %s", raw);
	ck_assert_int_eq(srv_auth_token_verify(key, authz, &out, &msg), AQ_EUNAUTH);
	free(raw);
	/* signed with the key, a role nobody knows */
	jwt_del_grants(jwt, "exp");
	jwt_del_grants(jwt, "role");
	jwt_add_grant_int(jwt, "exp", 4000000000L);
	jwt_add_grant(jwt, "role", "root");
	raw = jwt_encode_str(jwt);
	snprintf(authz, sizeof(authz), "Bearer %s", raw);
	ck_assert_int_eq(srv_auth_token_verify(key, authz, &out, &msg), AQ_EUNAUTH);
	ck_assert(strstr(msg.text, "no known role") != NULL);
	free(raw);
	jwt_free(jwt);
}
END_TEST

START_TEST(test_role_names)
{
	for (int r = SRV_ROLE_VIEWER; r <= SRV_ROLE_METRICS; r++)
		ck_assert_int_eq(srv_auth_role_parse(srv_auth_role_name((enum srv_role)r)), r);
	ck_assert_int_eq(srv_auth_role_parse("root"), SRV_ROLE_NONE);
	ck_assert_int_eq(srv_auth_role_parse(NULL), SRV_ROLE_NONE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_auth");
	TCase *tc = tcase_create("srv_auth");

	tcase_add_test(tc, test_route_access);
	tcase_add_test(tc, test_verify_refuses);
	tcase_add_test(tc, test_role_names);
	tcase_add_test(tc, test_join_check);
	tcase_add_test(tc, test_node_token_check);
	tcase_add_test(tc, test_token_stale);
	tcase_add_test(tc, test_claims);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
