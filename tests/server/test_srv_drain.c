/* Unit tests for the node lifecycle pass of server/srv_drain.c over a real
 * database: a silent node goes DOWN and its volumes move to a READY node of
 * its location (past ceilings if need be); a DRAINING node's volumes move
 * only within ceilings, keep being served where they are until a node has
 * room, and move by themselves once one has. */
#include "server/srv_drain.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_node.h"
#include "tests/lib/aqt.h"
#include "tests/server/srv_test.h"

#define VOL "projects/p/locations/east/volumes/"

static struct srv srv;
static struct db *db;

static void node(const char *id, const char *state, double ceiling)
{
	char name[100];

	snprintf(name, sizeof(name), "nodes/%s", id);
	srv_test_put(db, "node", "locations/east", name,
	    json_pack("{s:s,s:s,s:s,s:f}", "name", name, "location", "east", "state", state, "throughputCeilingMibps", ceiling));
}

static void volume(const char *id, const char *on, double mibps)
{
	char vn[200], pn[300], nn[100];

	snprintf(vn, sizeof(vn), VOL "%s", id);
	snprintf(pn, sizeof(pn), "placements/%s", vn);
	snprintf(nn, sizeof(nn), "nodes/%s", on);
	srv_test_put(db, "volume", "projects/p/locations/east", vn, json_pack("{s:s,s:s}", "name", vn, "state", "READY"));
	srv_test_put(db, "placement", nn, pn, json_pack("{s:s,s:s,s:f,s:s,s:I}", "volume", vn, "node", nn, "mibps", mibps, "action", "",
					   "pendingGeneration", (json_int_t)0));
}

/* The field of the stored document name, "" when absent. */
static const char *field(const char *name, const char *key, char *out, size_t cap)
{
	json_t *doc = NULL;

	out[0] = '\0';
	if (db_get(db, name, &doc) == AQ_OK)
		snprintf(out, cap, "%s", json_string_value(json_object_get(doc, key)) ?: "");
	json_decref(doc);
	return out;
}

static void setup(void)
{

	db = srv_test_db_open();
	memset(&srv, 0, sizeof(srv));
	srv_cfg_defaults(&srv.cfg); /* a node silent 10 s is DOWN */
	ck_assert_int_eq(srv_node_live_init(&srv, 1000), AQ_OK);
	srv_test_put(db, "shelf", "locations/east", "shelves/east-1", json_pack("{s:s,s:f}", "name", "shelves/east-1", "readThroughputMibps", 100000.0));
	/* n1 never reports; n2 and n3 report at 20 s */
	node("n1", "READY", 1000);
	node("n2", "READY", 1000);
	node("n3", "DRAINING", 1000);
	volume("v1", "n1", 300);
	volume("v2", "n2", 300);
	volume("v3", "n3", 900);
	srv_node_live_seen(&srv, "nodes/n2", 20000);
	srv_node_live_seen(&srv, "nodes/n3", 20000);
}

static void teardown(void)
{
	srv_node_live_free(&srv);
	srv_test_db_close(db);
}

START_TEST(test_pass)
{
	char buf[700];

	/* 5 s after the start nobody is silent yet (the start is a grace
	 * period), and v3 finds no room (n2 has 700 left) */
	ck_assert(!srv_drain_pass(&srv, db, 6000));
	ck_assert_str_eq(field("nodes/n1", "state", buf, sizeof(buf)), "READY");
	/* at 20 s: n1 is DOWN, v1 moves to n2 (the only READY node) and says so */
	ck_assert(srv_drain_pass(&srv, db, 20000));
	ck_assert_str_eq(field("nodes/n1", "state", buf, sizeof(buf)), "DOWN");
	ck_assert_str_eq(field("placements/" VOL "v1", "node", buf, sizeof(buf)), "nodes/n2");
	ck_assert_str_eq(field("placements/" VOL "v1", "from", buf, sizeof(buf)), "nodes/n1");
	ck_assert_str_eq(field("placements/" VOL "v1", "action", buf, sizeof(buf)), "move");
	ck_assert(strstr(field(VOL "v1", "stateDetails", buf, sizeof(buf)), "moving from node n1 (DOWN) to node n2") != NULL);
	/* v3 (900) finds no room on n2 (400 left): it stays on DRAINING n3 */
	ck_assert_str_eq(field("placements/" VOL "v3", "node", buf, sizeof(buf)), "nodes/n3");
	ck_assert_str_eq(field("nodes/n3", "state", buf, sizeof(buf)), "DRAINING");
	/* nothing new on the next pass */
	ck_assert(!srv_drain_pass(&srv, db, 20500));
	ck_assert_str_eq(field("placements/" VOL "v3", "node", buf, sizeof(buf)), "nodes/n3");
	/* a node with room joins: v3 moves by itself */
	node("n4", "READY", 5000);
	srv_node_live_seen(&srv, "nodes/n4", 20500);
	ck_assert(srv_drain_pass(&srv, db, 21000));
	ck_assert_str_eq(field("placements/" VOL "v3", "node", buf, sizeof(buf)), "nodes/n4");
}
END_TEST

/* A DOWN node's volume that finds no READY node says so and stays. */
START_TEST(test_nowhere)
{
	char buf[700];

	ck_assert_int_eq(db_delete(db, "nodes/n2"), AQ_OK);
	ck_assert(srv_drain_pass(&srv, db, 20000));
	ck_assert_str_eq(field("nodes/n1", "state", buf, sizeof(buf)), "DOWN");
	ck_assert_str_eq(field("placements/" VOL "v1", "node", buf, sizeof(buf)), "nodes/n1");
	ck_assert(strstr(field(VOL "v1", "stateDetails", buf, sizeof(buf)), "no node serves this volume") != NULL);
	ck_assert_str_eq(field(VOL "v1", "state", buf, sizeof(buf)), "READY");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_drain");
	TCase *tc = tcase_create("srv_drain");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pass);
	tcase_add_test(tc, test_nowhere);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
