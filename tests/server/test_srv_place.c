/* Unit tests for server/srv_place.c over a real database: which node of a
 * location a volume goes to (the most headroom among READY nodes, within
 * the shelves' bound; past ceilings only on failover), and the placement a
 * create, update and delete write. */
#include "server/srv_place.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_intent.h"
#include "db/db.h"
#include "server/srv_req.h"
#include "tests/lib/aqt.h"
#include "tests/server/srv_test.h"

static struct db *db;

static void node(const char *loc, const char *id, const char *state, double ceiling, double placed)
{
	char name[100], parent[100], pl[200];

	snprintf(name, sizeof(name), "nodes/%s", id);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	srv_test_put(db, "node", parent, name,
	    json_pack("{s:s,s:s,s:s,s:f}", "name", name, "location", loc, "state", state, "throughputCeilingMibps", ceiling));
	if (placed > 0) {
		snprintf(pl, sizeof(pl), "placements/projects/p/locations/%s/volumes/old-%s", loc, id);
		srv_test_put(db, "placement", name, pl, json_pack("{s:s,s:f}", "node", name, "mibps", placed));
	}
}

static void shelf(const char *loc, double read)
{
	char name[100], parent[100];

	snprintf(name, sizeof(name), "shelves/%s-1", loc);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	srv_test_put(db, "shelf", parent, name, json_pack("{s:s,s:f}", "name", name, "readThroughputMibps", read));
}

static void setup(void)
{

	db = srv_test_db_open();
	/* east: n1 800 of 1000 placed, n2 100 of 1000, n3 DRAINING and empty,
	 * n4 DOWN and empty; shelves take 10000 */
	node("east", "n1", "READY", 1000, 800);
	node("east", "n2", "READY", 1000, 100);
	node("east", "n3", "DRAINING", 5000, 0);
	node("east", "n4", "DOWN", 5000, 0);
	shelf("east", 10000);
	/* tight: room on the node, none on the shelf (1000 - 900 placed) */
	node("tight", "t1", "READY", 5000, 900);
	shelf("tight", 1000);
	/* empty: a node, but not READY */
	node("empty", "e1", "DRAINING", 5000, 0);
	shelf("empty", 10000);
}

static void teardown(void)
{
	srv_test_db_close(db);
}

START_TEST(test_pick)
{
	char got[100];
	aq_msg msg = { .text = "" };

	/* the most headroom among READY nodes: n2 (900), not n3 (DRAINING) or n4 (DOWN) */
	ck_assert_int_eq(srv_place_pick(db, "east", NULL, 100, false, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/n2");
	/* the node being left is no candidate */
	ck_assert_int_eq(srv_place_pick(db, "east", "nodes/n2", 100, false, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/n1");
	/* exactly the headroom fits; one more does not */
	ck_assert_int_eq(srv_place_pick(db, "east", NULL, 900, false, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/n2");
	ck_assert_int_eq(srv_place_pick(db, "east", NULL, 950, false, got, sizeof(got), &msg), AQ_EEXHAUSTED);
	/* failover: past ceilings, still the most headroom and still READY only */
	ck_assert_int_eq(srv_place_pick(db, "east", NULL, 950, true, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/n2");
	ck_assert_int_eq(srv_place_pick(db, "east", "nodes/n2", 5000, true, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/n1");
}
END_TEST

/* A node serving API_NODE_VOLUMES_MAX volumes (api_intent.h: its agent
 * refuses an intent over it, and its status report must fit the body cap)
 * is no candidate, on failover neither; none left: RESOURCE_EXHAUSTED
 * naming the limit. */
START_TEST(test_node_volume_limit)
{
	char got[100], pl[200];
	aq_msg msg = { .text = "" };
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	node("full", "f1", "READY", 1e9, 1);
	shelf("full", 1e9);
	ck_assert_int_eq(db_begin(db), AQ_OK); /* one commit: the machine is shared */
	for (unsigned i = 1; i < API_NODE_VOLUMES_MAX; i++) {
		snprintf(pl, sizeof(pl), "placements/projects/p/locations/full/volumes/v%u", i);
		srv_test_put(db, "placement", "nodes/f1", pl, json_pack("{s:s,s:f}", "node", "nodes/f1", "mibps", 1.0));
	}
	ck_assert_int_eq(db_commit(db), AQ_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%u placements written in %ld s (one transaction)\n", API_NODE_VOLUMES_MAX, (long)(t1.tv_sec - t0.tv_sec));
	ck_assert_int_eq(srv_place_pick(db, "full", NULL, 1, false, got, sizeof(got), &msg), AQ_EEXHAUSTED);
	ck_assert_msg(strstr(msg.text, "API_NODE_VOLUMES_MAX") != NULL, "%s", msg.text);
	ck_assert_int_eq(srv_place_pick(db, "full", NULL, 1, true, got, sizeof(got), &msg), AQ_EEXHAUSTED);
	/* one volume fewer: taken again */
	ck_assert_int_eq(db_delete(db, "placements/projects/p/locations/full/volumes/v1"), AQ_OK);
	ck_assert_int_eq(srv_place_pick(db, "full", NULL, 1, false, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/f1");
	srv_test_put(db, "placement", "nodes/f1", "placements/projects/p/locations/full/volumes/v1",
		     json_pack("{s:s,s:f}", "node", "nodes/f1", "mibps", 1.0));
	/* another node, with less headroom, takes it */
	node("full", "f2", "READY", 10, 0);
	ck_assert_int_eq(srv_place_pick(db, "full", NULL, 1, false, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/f2");
	ck_assert_int_eq(srv_place_pick(db, "full", NULL, 100, true, got, sizeof(got), &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/f2");
}
END_TEST

START_TEST(test_bounds)
{
	char got[100];
	aq_msg msg = { .text = "" };

	/* the shelves bound the location: 100 left though the node has 4100 */
	ck_assert_int_eq(srv_place_pick(db, "tight", NULL, 100, false, got, sizeof(got), &msg), AQ_OK);
	ck_assert_int_eq(srv_place_pick(db, "tight", NULL, 200, false, got, sizeof(got), &msg), AQ_EEXHAUSTED);
	/* no READY node at all, or no node: said so */
	ck_assert_int_eq(srv_place_pick(db, "empty", NULL, 1, false, got, sizeof(got), &msg), AQ_EEXHAUSTED);
	ck_assert(strstr(msg.text, "no READY storage node in location \"empty\"") != NULL);
	ck_assert_int_eq(srv_place_pick(db, "nowhere", NULL, 1, true, got, sizeof(got), &msg), AQ_EEXHAUSTED);
}
END_TEST

/* The process's cache of a location's nodes and shelves (srv_place.c,
 * under db_placever) never serves rows other than the transaction's own:
 * a change of state is seen at once, a change placement does not read is
 * a hit, and rows read inside a transaction that rolled back are not
 * served for a later change (a version is never reused). */
static void pick_is(const char *want)
{
	char got[100] = "";
	aq_msg msg = { .text = "" };

	ck_assert_msg(srv_place_pick(db, "east", NULL, 100, false, got, sizeof(got), &msg) == AQ_OK, "%s", msg.text);
	ck_assert_str_eq(got, want);
}

static void node_state(const char *id, const char *state)
{
	char name[100];
	json_t *doc = NULL;

	snprintf(name, sizeof(name), "nodes/%s", id);
	ck_assert_int_eq(db_get(db, name, &doc), AQ_OK);
	json_object_set_new(doc, "state", json_string(state));
	ck_assert_int_eq(db_put(db, "node", "locations/east", name, doc, false), AQ_OK);
	json_decref(doc);
}

START_TEST(test_place_cache)
{
	uint64_t h0, m0, h1, m1;
	json_t *n1 = NULL;

	pick_is("nodes/n2");
	srv_place_cache_stats(&h0, &m0);
	pick_is("nodes/n2");
	srv_place_cache_stats(&h1, &m1);
	ck_assert_uint_eq(h1, h0 + 1); /* nothing changed: from the cache */
	ck_assert_uint_eq(m1, m0);
	/* a field placement does not read (a report's lastSeenTime): still a hit */
	ck_assert_int_eq(db_get(db, "nodes/n1", &n1), AQ_OK);
	json_object_set_new(n1, "lastSeenTime", json_string("2026-12-07T11:00:00Z"));
	ck_assert_int_eq(db_put(db, "node", "locations/east", "nodes/n1", n1, false), AQ_OK);
	json_decref(n1);
	pick_is("nodes/n2");
	srv_place_cache_stats(&h0, &m0);
	ck_assert_uint_eq(h0, h1 + 1);
	/* n2 goes DOWN: seen at once (n1 has 200 left, n3 DRAINING, n4 DOWN) */
	node_state("n2", "DOWN");
	pick_is("nodes/n1");
	srv_place_cache_stats(&h1, &m1);
	ck_assert_uint_eq(m1, m0 + 1);
	/* read inside a transaction that rolls back (n1 DOWN too: no node) ... */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	node_state("n1", "DOWN");
	{
		char got[100];
		aq_msg msg = { .text = "" };

		ck_assert_int_eq(srv_place_pick(db, "east", NULL, 100, false, got, sizeof(got), &msg), AQ_EEXHAUSTED);
	}
	db_rollback(db);
	/* ... then another change commits: n3 READY with 5000 of room. What the
	 * rolled-back transaction read must not stand for it. */
	node_state("n3", "READY");
	pick_is("nodes/n3");
}
END_TEST

START_TEST(test_allocated)
{
	double mibps = -1;
	int64_t n = -1;

	ck_assert_int_eq(srv_place_allocated(db, "nodes/n1", &mibps, &n), AQ_OK);
	ck_assert_double_eq_tol(mibps, 800, 1e-9);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(srv_place_allocated(db, "nodes/n3", &mibps, NULL), AQ_OK);
	ck_assert_double_eq_tol(mibps, 0, 1e-9);
}
END_TEST

/* A create writes a placement on the picked node; an update keeps the node
 * and re-checks its headroom; a delete keeps the node. */
START_TEST(test_place_volume)
{
	struct srv_req req = { .db = db };
	const char *vn = "projects/p/locations/east/volumes/v1";
	json_t *vol = json_pack("{s:s,s:f,s:s}", "name", vn, "throughputMibps", 300.0, "createTime", "2026-01-01T00:00:00Z");
	json_t *pl = NULL;
	char got[100], again[100];
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(srv_place_volume(&req, vol, "ops/1", "create", got, sizeof(got), NULL, &msg), AQ_OK);
	ck_assert_str_eq(got, "nodes/n2");
	ck_assert_int_eq(db_get(db, "placements/projects/p/locations/east/volumes/v1", &pl), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(pl, "node")), "nodes/n2");
	ck_assert_str_eq(json_string_value(json_object_get(pl, "action")), "create");
	ck_assert_str_eq(json_string_value(json_object_get(pl, "op")), "ops/1");
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(pl, "fsid"))), 16);
	ck_assert_str_eq(json_string_value(json_object_get(pl, "dir")) + 8, json_string_value(json_object_get(pl, "fsid")));
	json_decref(pl);
	/* n2 now holds 400 of 1000: growing to 900 (600 more) fits, to 1000 not */
	json_object_set_new(vol, "throughputMibps", json_real(900));
	ck_assert_int_eq(srv_place_volume(&req, vol, "ops/2", "update", again, sizeof(again), NULL, &msg), AQ_OK);
	ck_assert_str_eq(again, "nodes/n2");
	json_object_set_new(vol, "throughputMibps", json_real(1000));
	ck_assert_int_eq(srv_place_volume(&req, vol, "ops/3", "update", again, sizeof(again), NULL, &msg), AQ_EEXHAUSTED);
	ck_assert(strstr(msg.text, "headroom") != NULL);
	ck_assert_int_eq(srv_place_volume(&req, vol, "ops/4", "delete", again, sizeof(again), NULL, &msg), AQ_OK);
	ck_assert_str_eq(again, "nodes/n2");
	ck_assert_int_eq(db_get(db, "placements/projects/p/locations/east/volumes/v1", &pl), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(pl, "action")), "delete");
	ck_assert_double_eq_tol(json_real_value(json_object_get(pl, "mibps")), 900, 1e-9);
	json_decref(pl);
	/* an update or delete of a volume never placed is no create */
	json_object_set_new(vol, "name", json_string("projects/p/locations/east/volumes/none"));
	ck_assert_int_eq(srv_place_volume(&req, vol, "ops/5", "update", again, sizeof(again), NULL, &msg), AQ_ENOENT);
	json_decref(vol);
}
END_TEST

static void cap_shelf(const char *loc, const char *id, const char *gib)
{
	char name[100], parent[100];

	snprintf(name, sizeof(name), "shelves/%s", id);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	srv_test_put(db, "shelf", parent, name,
		     gib ? json_pack("{s:s,s:f,s:s}", "name", name, "readThroughputMibps", 1e5, "capacityGib", gib)
			 : json_pack("{s:s,s:f}", "name", name, "readThroughputMibps", 1e5));
}

static void cap_volume(const char *loc, const char *id, const char *pool, const char *gib)
{
	char name[200], parent[100], pn[200];

	snprintf(parent, sizeof(parent), "projects/p/locations/%s", loc);
	snprintf(name, sizeof(name), "%s/volumes/%s", parent, id);
	snprintf(pn, sizeof(pn), "%s/storagePools/%s", parent, pool);
	srv_test_put(db, "volume", parent, name,
		     json_pack("{s:s,s:s,s:s}", "name", name, "storagePool", pn, "capacityGib", gib));
}

/* Shelf capacity: what a location's shelves hold bounds what its volumes
 * (in any pool) take; another location's volumes do not count; a shelf
 * stating no capacity leaves the location unbounded. */
START_TEST(test_shelf_capacity)
{
	aq_msg msg = { .text = "" };
	char names[200];
	double cap = -1, used = -1;
	bool bounded = false;
	size_t counted = 0;

	cap_shelf("cap", "cap-1", "1000");
	cap_volume("cap", "a", "p1", "500");
	cap_volume("cap", "b", "p2", "100"); /* another pool, the same shelves */
	cap_volume("east", "big", "p1", "90000");
	ck_assert_int_eq(srv_place_shelf_gib(db, "cap", NULL, &bounded, &cap, &used, &counted, names, sizeof(names)),
			 AQ_OK);
	ck_assert(bounded);
	ck_assert_double_eq_tol(cap, 1000, 1e-9);
	ck_assert_double_eq_tol(used, 600, 1e-9);
	ck_assert_uint_eq(counted, 1);
	ck_assert_str_eq(names, "cap-1");
	/* exactly the free 400 GiB fits; one more is refused, naming the shelf */
	ck_assert_int_eq(srv_place_shelf_room(db, "cap", 400, &msg), AQ_OK);
	ck_assert_int_eq(srv_place_shelf_room(db, "cap", 401, &msg), AQ_EEXHAUSTED);
	ck_assert_msg(strstr(msg.text, "cap-1") && strstr(msg.text, "400 GiB free") && strstr(msg.text, "401 GiB more"),
		      "%s", msg.text);
	/* a shrink always fits, even on a full shelf */
	cap_volume("cap", "c", "p2", "400");
	ck_assert_int_eq(srv_place_shelf_room(db, "cap", 1, &msg), AQ_EEXHAUSTED);
	ck_assert_int_eq(srv_place_shelf_room(db, "cap", -100, &msg), AQ_OK);
	/* leaving the shelf out: nothing counted, nothing bounded */
	ck_assert_int_eq(srv_place_shelf_gib(db, "cap", "cap-1", &bounded, &cap, &used, &counted, NULL, 0), AQ_OK);
	ck_assert(!bounded);
	ck_assert_uint_eq(counted, 0);
	/* a second shelf adds its capacity; one without capacityGib unbounds */
	cap_shelf("cap", "cap-2", "50");
	ck_assert_int_eq(srv_place_shelf_room(db, "cap", 50, &msg), AQ_OK);
	ck_assert_int_eq(srv_place_shelf_room(db, "cap", 51, &msg), AQ_EEXHAUSTED);
	ck_assert_msg(strstr(msg.text, "cap-1, cap-2") != NULL, "%s", msg.text);
	cap_shelf("cap", "cap-3", NULL);
	ck_assert_int_eq(srv_place_shelf_room(db, "cap", 1e6, &msg), AQ_OK);
	/* east's shelf states no capacity: its 90000 GiB volume was never refused */
	ck_assert_int_eq(srv_place_shelf_room(db, "east", 1e6, &msg), AQ_OK);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_place");
	TCase *tc = tcase_create("srv_place");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pick);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_node_volume_limit);
	tcase_add_test(tc, test_allocated);
	tcase_add_test(tc, test_place_cache);
	tcase_add_test(tc, test_place_volume);
	tcase_add_test(tc, test_shelf_capacity);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
