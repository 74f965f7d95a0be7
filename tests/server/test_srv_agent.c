/* Unit tests for the agent calls of server/srv_agent.c over a real
 * database: a join spends its token once, creates the node READY with a
 * fresh incarnation and answers a node token of it, and refuses what it
 * must (another location, a joined name, missing fields); a status report
 * is taken only from the node's own current token, marks the node seen,
 * records what it applied and never a generation it was not sent; its
 * snapshot entries finish the snapshot operations they answer and the
 * volume's usedGib counts its snapshots' space (issue 20); a renewal (no
 * "volumes") renews the node without a sample of its series (issue 22). */
#include "server/srv_agent.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_node.h"
#include "server/srv_req.h"
#include "server/srv_series.h"
#include "util/ut_clock.h"
#include "server/srv_snapshot.h"
#include "tests/lib/aqt.h"
#include "tests/server/srv_test.h"

static struct srv srv;
static struct db *db;

static void setup(void)
{
	json_t *loc = json_pack("{s:s,s:s}", "name", "locations/east", "locationId", "east");

	db = srv_test_db_open();
	memset(&srv, 0, sizeof(srv));
	srv_cfg_defaults(&srv.cfg);
	memcpy(srv.key, "0123456789abcdef0123456789abcdef", SRV_KEY_LEN);
	ck_assert_int_eq(srv_node_live_init(&srv, 1000), AQ_OK);
	ck_assert_int_eq(srv_series_new(1000, &srv.series), AQ_OK);
	ck_assert_int_eq(db_put(db, "location", "", "locations/east", loc, true), AQ_OK);
	json_decref(loc);
}

static void teardown(void)
{
	srv_series_free(srv.series);
	srv_node_live_free(&srv);
	srv_test_db_close(db);
}

/* A request as the router hands it: verified claims, parsed body. */
static void request(struct srv_req *req, const struct srv_auth *who, json_t *body)
{
	memset(req, 0, sizeof(*req));
	req->srv = &srv;
	req->db = db;
	req->auth = *who;
	req->body = body;
}

static struct srv_auth join_token(const char *loc, const char *jti)
{
	struct srv_auth a = { .role = SRV_ROLE_NODE, .exp = 4000000000L };

	snprintf(a.use, sizeof(a.use), "%s", SRV_USE_JOIN);
	snprintf(a.subject, sizeof(a.subject), "join");
	snprintf(a.location, sizeof(a.location), "%s", loc);
	snprintf(a.jti, sizeof(a.jti), "%s", jti);
	return a;
}

static json_t *join_body(const char *node)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "node", node, "location", "east", "address", "http://10.0.0.5:9000",
			 "nfsAddress", "10.0.0.5:2049");
}

/* Join node with a fresh token; *who gets the node token it answers. */
static void join(const char *node, const char *jti, struct srv_auth *who)
{
	struct srv_auth j = join_token("east", jti);
	struct srv_req req;
	json_t *resp = NULL;
	char authz[4200];
	aq_msg msg = { .text = "" };

	request(&req, &j, join_body(node));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_OK);
	snprintf(authz, sizeof(authz), "Bearer %s", json_string_value(json_object_get(resp, "nodeToken")));
	ck_assert_int_eq(srv_auth_token_verify(srv.key, authz, who, &msg), AQ_OK);
	json_decref(resp);
	json_decref(req.body);
}

START_TEST(test_join)
{
	struct srv_auth j = join_token("east", "aaaa"), who;
	struct srv_req req;
	json_t *resp = NULL, *doc = NULL, *key = NULL;
	char authz[4200];
	aq_msg msg = { .text = "" };

	request(&req, &j, join_body("n1"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_OK);
	ck_assert_int_eq(db_get(db, "nodes/n1", &doc), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "state")), "READY");
	ck_assert_str_eq(json_string_value(json_object_get(doc, "location")), "east");
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(json_object_get(doc, "internal"), "incarnation"))), 32);
	/* the answer: a node token of this incarnation, the push secret, the location's key */
	snprintf(authz, sizeof(authz), "Bearer %s", json_string_value(json_object_get(resp, "nodeToken")));
	ck_assert_int_eq(srv_auth_token_verify(srv.key, authz, &who, &msg), AQ_OK);
	ck_assert_str_eq(who.use, SRV_USE_NODE);
	ck_assert_str_eq(who.subject, "n1");
	ck_assert_str_eq(who.nid, json_string_value(json_object_get(json_object_get(doc, "internal"), "incarnation")));
	ck_assert_str_eq(json_string_value(json_object_get(resp, "pushSecret")),
			 json_string_value(json_object_get(json_object_get(doc, "internal"), "pushSecret")));
	ck_assert_int_eq(db_get(db, "locsecrets/east", &key), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(resp, "handleKey")),
			 json_string_value(json_object_get(key, "handleKey")));
	ck_assert_int_gt(srv_node_live_last(&srv, "nodes/n1"), 1000);
	json_decref(resp);
	json_decref(doc);
	json_decref(key);
	/* the token is spent: not even another name joins with it */
	json_decref(req.body);
	request(&req, &j, join_body("n2"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_EACCES);
	ck_assert(strstr(req.msg.text, "already used") != NULL);
	ck_assert_int_eq(db_get(db, "nodes/n2", &doc), AQ_ENOENT);
	json_decref(req.body);
	/* a joined name does not join again, even with a fresh token */
	j = join_token("east", "bbbb");
	request(&req, &j, join_body("n1"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_EEXIST);
	json_decref(req.body);
	/* and that refusal did not spend the fresh token */
	request(&req, &j, join_body("n3"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_OK);
	json_decref(resp);
	json_decref(req.body);
}
END_TEST

START_TEST(test_join_refused)
{
	struct srv_auth west = join_token("west", "cccc"), ok = join_token("east", "dddd");
	struct srv_req req;
	json_t *resp = NULL, *doc = NULL;

	/* a token for another location */
	request(&req, &west, join_body("n1"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_EACCES);
	json_decref(req.body);
	/* missing fields, a bad address, a bad name */
	request(&req, &ok, json_pack("{s:s,s:s}", "node", "n1", "location", "east"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_EINVAL);
	json_decref(req.body);
	request(&req, &ok, json_pack("{s:s,s:s,s:s,s:s}", "node", "n1", "location", "east", "address", "10.0.0.5:9000",
				     "nfsAddress", "10.0.0.5:2049"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_EINVAL);
	ck_assert(strstr(req.msg.text, "http(s) URL") != NULL);
	json_decref(req.body);
	request(&req, &ok, join_body("N/1"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_EINVAL);
	json_decref(req.body);
	/* nothing was created, and the token is still good */
	ck_assert_int_eq(db_get(db, "nodes/n1", &doc), AQ_ENOENT);
	request(&req, &ok, join_body("n1"));
	ck_assert_int_eq(srv_h_agent_join(&req, &resp), AQ_OK);
	json_decref(resp);
	json_decref(req.body);
}
END_TEST

START_TEST(test_status)
{
	struct srv_auth who, other, j = join_token("east", "ffff");
	struct srv_req req;
	json_t *resp = NULL, *doc = NULL;

	join("n1", "eeee", &who);
	join("n2", "ffff", &other);
	/* the node's own token: seen, generation answered */
	request(&req, &who, json_pack("{s:s,s:I,s:[]}", "node", "n1", "appliedGeneration", (json_int_t)0, "volumes"));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(resp, "generation")), 0);
	json_decref(resp);
	json_decref(req.body);
	/* a generation above the node's own was never sent: not recorded */
	request(&req, &who, json_pack("{s:I,s:[]}", "appliedGeneration", (json_int_t)7, "volumes"));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_OK);
	json_decref(resp);
	json_decref(req.body);
	ck_assert_int_eq(db_get(db, "nodes/n1", &doc), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "appliedGeneration")), 0);
	json_decref(doc);
	/* a token speaks for its own node only */
	request(&req, &other, json_pack("{s:s,s:I}", "node", "n1", "appliedGeneration", (json_int_t)0));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_EACCES);
	json_decref(req.body);
	/* a join token reports nothing; nor does a report without a generation */
	request(&req, &j, json_pack("{s:I}", "appliedGeneration", (json_int_t)0));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_EUNAUTH);
	json_decref(req.body);
	request(&req, &who, json_object());
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_EINVAL);
	json_decref(req.body);
	/* a token of an earlier incarnation: revoked */
	snprintf(who.nid, sizeof(who.nid), "0123456789abcdef0123456789abcdef");
	request(&req, &who, json_pack("{s:I}", "appliedGeneration", (json_int_t)0));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_EUNAUTH);
	json_decref(req.body);
	/* the node of a deleted row: no node to speak for */
	ck_assert_int_eq(db_delete(db, "nodes/n2"), AQ_OK);
	request(&req, &other, json_pack("{s:I}", "appliedGeneration", (json_int_t)0));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_EUNAUTH);
	ck_assert(strstr(req.msg.text, "no joined node") != NULL);
	json_decref(req.body);
}
END_TEST


/* A renewal (a report without "volumes", api_intent.h: the agent sends it
 * while its full report is late) renews the node but is no sample of its
 * series: a node with volumes must not look idle between two full
 * reports. */
START_TEST(test_status_renewal)
{
	struct srv_auth who;
	struct srv_req req;
	json_t *resp = NULL, *pts;

	join("n1", "eeee", &who);
	request(&req, &who, json_pack("{s:s,s:I,s:[]}", "node", "n1", "appliedGeneration", (json_int_t)0, "failed"));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(resp, "generation")), 0);
	json_decref(resp);
	json_decref(req.body);
	pts = srv_series_points(srv.series, SRV_SERIES_NODE, "nodes/n1", 600, ut_clock_real_ms());
	ck_assert_uint_eq(json_array_size(pts), 0);
	json_decref(pts);
	/* a full report is one */
	request(&req, &who, json_pack("{s:s,s:I,s:[]}", "node", "n1", "appliedGeneration", (json_int_t)0, "volumes"));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_OK);
	json_decref(resp);
	json_decref(req.body);
	pts = srv_series_points(srv.series, SRV_SERIES_NODE, "nodes/n1", 600, ut_clock_real_ms());
	ck_assert_uint_eq(json_array_size(pts), 1);
	json_decref(pts);
}
END_TEST

#define VOL "projects/p/locations/east/volumes/v1"
#define GIB 1073741824LL

START_TEST(test_status_snapshots)
{
	struct srv_auth who;
	struct srv_req req;
	json_t *resp = NULL, *doc = NULL, *vol;
	char uid[17];
	aq_msg msg = { .text = "" };

	join("n1", "eeee", &who);
	srv_test_put(db, "volume", "projects/p/locations/east", VOL,
		     json_pack("{s:s,s:s,s:s}", "name", VOL, "state", "READY", "usedGib", "0"));
	srv_test_put(db, "placement", "nodes/n1", "placements/" VOL,
		     json_pack("{s:s,s:s,s:s,s:s}", "volume", VOL, "node", "nodes/n1", "dir", "volumes/ab", "action", ""));
	srv_test_put(db, "operation", "projects/p/locations/east", "projects/p/locations/east/operations/o1",
		     json_pack("{s:s,s:b,s:{}}", "name", "projects/p/locations/east/operations/o1", "done", 0, "metadata"));
	ck_assert_ptr_nonnull(vol = json_pack("{s:s,s:s}", "name", VOL, "usedGib", "0"));
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(srv_snapshot_add(db, vol, "s1", NULL, "projects/p/locations/east/operations/o1", NULL, 0, &msg), AQ_OK);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	json_decref(vol);
	ck_assert_int_eq(db_get(db, "snaprefs/" VOL "/snapshots/s1", &doc), AQ_OK);
	snprintf(uid, sizeof(uid), "%s", json_string_value(json_object_get(doc, "uid")));
	json_decref(doc);
	/* 2 GiB of live data and 1 GiB + 1 byte held by the snapshot: 4 GiB used */
	request(&req, &who, json_pack("{s:I,s:[{s:s,s:I,s:I,s:[{s:s,s:s,s:s,s:I,s:I}],s:I}]}", "appliedGeneration",
				      (json_int_t)0, "volumes", "name", VOL, "usedBytes", (json_int_t)(2 * GIB), "snapshotBytes",
				      (json_int_t)(GIB + 1), "snapshots", "id", "s1", "uid", uid, "state", "READY", "createUnix",
				      (json_int_t)1, "usedBytes", (json_int_t)(GIB + 1), "revertSeq", (json_int_t)0));
	ck_assert_int_eq(srv_h_agent_status(&req, &resp), AQ_OK);
	json_decref(resp);
	json_decref(req.body);
	ck_assert_int_eq(db_get(db, VOL, &doc), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "usedGib")), "4");
	json_decref(doc);
	ck_assert_int_eq(db_get(db, VOL "/snapshots/s1", &doc), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "state")), "READY");
	json_decref(doc);
	ck_assert_int_eq(db_get(db, "projects/p/locations/east/operations/o1", &doc), AQ_OK);
	ck_assert(json_is_true(json_object_get(doc, "done")));
	json_decref(doc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_agent");
	TCase *tc = tcase_create("srv_agent");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_join);
	tcase_add_test(tc, test_join_refused);
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_status_renewal);
	tcase_add_test(tc, test_status_snapshots);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
