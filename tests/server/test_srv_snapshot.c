/* Unit tests for the control plane's snapshot bookkeeping over a real
 * database (server/srv_snapshot.c, server/srv_snapsched.c), with the
 * node's status reports faked: a create is done when the node reports its
 * uid READY (ERROR fails it with the node's reason), a delete when the uid
 * is no longer reported, a revert when revertSeq reaches its seq; what the
 * intent entry carries at each step; 255 per volume; a clone's source
 * cannot go; a volume with snapshots needs force; the scheduler keeps
 * exactly snapshotsToKeep per kind and never replays missed slots. */
#include "server/srv_snapshot.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_snapsched.h"
#include "tests/lib/aqt.h"
#include "util/ut_clock.h"
#include "tests/server/srv_test.h"

#define LOC "projects/p/locations/east"
#define VN LOC "/volumes/v1"

static struct db *db;

static json_t *get(const char *name)
{
	json_t *doc = NULL;

	return db_get(db, name, &doc) == AQ_OK ? doc : NULL;
}

/* Whether the document name is stored. */
static bool has(const char *name)
{
	json_t *doc = get(name);

	json_decref(doc);
	return doc != NULL;
}

static const char *str(const json_t *doc, const char *field)
{
	return json_string_value(json_object_get(doc, field));
}

static void setup(void)
{
	db = srv_test_db_open();
	srv_test_put(db, "volume", LOC, VN,
		     json_pack("{s:s,s:s,s:s,s:s}", "name", VN, "state", "READY", "shareName", "v1", "usedGib", "7"));
	srv_test_put(db, "placement", "nodes/n1", "placements/" VN,
		     json_pack("{s:s,s:s,s:s,s:s,s:s}", "volume", VN, "node", "nodes/n1", "fsid", "00112233445566aa", "dir",
			       "volumes/00112233445566aa", "action", ""));
}

static void teardown(void)
{
	srv_test_db_close(db);
}

/* A running operation named LOC/operations/<id>. */
static const char *op(const char *id)
{
	static char name[200];

	snprintf(name, sizeof(name), LOC "/operations/%s", id);
	srv_test_put(db, "operation", LOC, name, json_pack("{s:s,s:b,s:{}}", "name", name, "done", 0, "metadata"));
	return name;
}

static void add(const char *id, const char *opname)
{
	json_t *vol = get(VN);
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_msg(srv_snapshot_add(db, vol, id, NULL, opname, NULL, 0, &msg) == AQ_OK, "%s", msg.text);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	json_decref(vol);
}

/* The uid drawn for snapshot id of v1. */
static const char *uid_of(const char *id)
{
	static char uid[17];
	char rn[300];
	json_t *ref;

	snprintf(rn, sizeof(rn), "snaprefs/" VN "/snapshots/%s", id);
	ck_assert_ptr_nonnull(ref = get(rn));
	snprintf(uid, sizeof(uid), "%s", str(ref, "uid"));
	json_decref(ref);
	return uid;
}

/* The node reports v1 with snapshots (JSON array text) and revertSeq;
 * answers whether anything changed. */
static bool report(const char *snaps, int seq)
{
	char text[4096];
	json_t *v, *vol = get(VN);
	bool look = false, changed = false;

	snprintf(text, sizeof(text), "{\"name\":\"%s\",\"snapshots\":%s,\"revertSeq\":%d}", VN, snaps, seq);
	ck_assert_ptr_nonnull(v = json_loads(text, 0, NULL));
	ck_assert_int_eq(srv_snapshot_report(db, vol, v, false, &look), AQ_OK);
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(srv_snapshot_report(db, vol, v, true, &changed), AQ_OK);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_int_eq(look, changed); /* the read pass sees what the write pass does */
	json_decref(v);
	json_decref(vol);
	return changed;
}

static const char *ready(const char *id, long used)
{
	static char text[300];

	snprintf(text, sizeof(text), "{\"id\":\"%s\",\"uid\":\"%s\",\"state\":\"READY\",\"createUnix\":1,\"usedBytes\":%ld}",
		 id, uid_of(id), used);
	return text;
}

/* v1's intent entry, decoded. */
static void intent(struct api_intent_snapset *set)
{
	json_t *vol = get(VN), *e = json_pack("{s:s}", "name", VN);
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(srv_snapshot_intent(db, vol, e), AQ_OK);
	ck_assert_msg(api_intent_snapset_decode(e, set, &msg) == AQ_OK, "%s", msg.text);
	json_decref(vol);
	json_decref(e);
}

static bool op_done(const char *name, const char *err_needle)
{
	json_t *o = get(name);
	bool done = json_is_true(json_object_get(o, "done"));
	const char *m = json_string_value(json_object_get(json_object_get(o, "error"), "message"));

	if (err_needle)
		ck_assert_msg(m && strstr(m, err_needle), "operation %s error \"%s\" lacks \"%s\"", name, m ? m : "", err_needle);
	else if (done)
		ck_assert_ptr_null(json_object_get(o, "error"));
	json_decref(o);
	return done;
}

START_TEST(test_create_delete)
{
	struct api_intent_snapset *set = calloc(1, sizeof(*set));
	const char *o1 = op("c1");
	char line[1024];
	json_t *s;

	add("s1", o1);
	s = get(VN "/snapshots/s1");
	ck_assert_str_eq(str(s, "state"), "CREATING");
	json_decref(s);
	intent(set);
	ck_assert_uint_eq(set->nsnaps, 1);
	ck_assert_str_eq(set->snaps[0].id, "s1");
	ck_assert_uint_eq(strlen(set->snaps[0].uid), 16);
	/* a report without the uid, or an agent without snapshots: still running */
	ck_assert(!report("[]", 0));
	ck_assert(!op_done(o1, NULL));
	snprintf(line, sizeof(line), "[%s]", ready("s1", 4096));
	ck_assert(report(line, 0));
	ck_assert(op_done(o1, NULL));
	s = get(VN "/snapshots/s1");
	ck_assert_str_eq(str(s, "state"), "READY");
	ck_assert(json_number_value(json_object_get(s, "usedBytes")) == 4096);
	/* the same report again changes nothing; new usedBytes do */
	ck_assert(!report(line, 0));
	snprintf(line, sizeof(line), "[%s]", ready("s1", 8192));
	ck_assert(report(line, 0));
	/* delete: listed in snapshotDeletes until the node stops reporting it */
	{
		const char *o2 = op("d1");
		aq_msg msg = { .text = "" };

		ck_assert_int_eq(db_begin(db), AQ_OK);
		ck_assert_int_eq(srv_snapshot_start_delete(db, s, o2, &msg), AQ_OK);
		ck_assert_int_eq(db_commit(db), AQ_OK);
		json_decref(s);
		s = get(VN "/snapshots/s1");
		ck_assert_str_eq(str(s, "state"), "DELETING");
		ck_assert_int_eq(srv_snapshot_start_delete(db, s, o2, &msg), AQ_EPRECOND);
		intent(set);
		ck_assert_uint_eq(set->nsnaps, 0);
		ck_assert_uint_eq(set->ndeletes, 1);
		ck_assert(!report(line, 0));
		ck_assert(!op_done(o2, NULL));
		ck_assert(report("[]", 0));
		ck_assert(op_done(o2, NULL));
		ck_assert_ptr_null(get(VN "/snapshots/s1"));
		ck_assert_ptr_null(get("snaprefs/" VN "/snapshots/s1"));
		intent(set);
		ck_assert_uint_eq(set->ndeletes, 0);
	}
	json_decref(s);
	free(set);
}
END_TEST

START_TEST(test_error_and_limits)
{
	struct api_intent_snapset *set = calloc(1, sizeof(*set));
	const char *o1 = op("c1");
	json_t *vol = get(VN), *s;
	char line[1024], id[16];
	aq_msg msg = { .text = "" };

	add("bad", o1);
	/* deleting a snapshot being created is refused */
	s = get(VN "/snapshots/bad");
	ck_assert_int_eq(srv_snapshot_start_delete(db, s, "", &msg), AQ_EPRECOND);
	ck_assert(strstr(msg.text, "being created") != NULL);
	json_decref(s);
	snprintf(line, sizeof(line), "[{\"id\":\"bad\",\"uid\":\"%s\",\"state\":\"ERROR\",\"stateDetails\":\"shelf full\"}]",
		 uid_of("bad"));
	ck_assert(report(line, 0));
	ck_assert(op_done(o1, "shelf full"));
	s = get(VN "/snapshots/bad");
	ck_assert_str_eq(str(s, "state"), "ERROR");
	ck_assert(strstr(str(s, "stateDetails"), "shelf full") != NULL);
	json_decref(s);
	intent(set);
	ck_assert_uint_eq(set->nsnaps, 0); /* kept as the node has it */
	/* the same id twice is refused; 255 per volume, the 256th refused */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(srv_snapshot_add(db, vol, "bad", NULL, "", NULL, 0, &msg), AQ_EEXIST);
	for (int i = 1; i < 255; i++) {
		snprintf(id, sizeof(id), "s%d", i);
		ck_assert_int_eq(srv_snapshot_add(db, vol, id, NULL, "", NULL, 0, &msg), AQ_OK);
	}
	ck_assert_int_eq(srv_snapshot_add(db, vol, "one-more", NULL, "", NULL, 0, &msg), AQ_EEXHAUSTED);
	ck_assert(strstr(msg.text, "255") != NULL);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	intent(set); /* 254 wanted: the contract's limits hold */
	ck_assert_uint_eq(set->nsnaps, 254);
	json_decref(vol);
	free(set);
}
END_TEST

START_TEST(test_revert_clone_force)
{
	struct api_intent_snapset *set = calloc(1, sizeof(*set));
	char line[1024];
	json_t *vol, *clone, *s;
	aq_msg msg = { .text = "" };
	const char *orev;

	add("s1", "");
	snprintf(line, sizeof(line), "[%s]", ready("s1", 1));
	ck_assert(report(line, 0));
	/* a revert in flight: the intent carries it until revertSeq reaches it */
	orev = op("r1");
	srv_test_put(db, "snaprevert", "", "snapreverts/" VN,
		     json_pack("{s:s,s:s,s:s,s:I,s:s}", "volume", VN, "id", "s1", "uid", uid_of("s1"), "seq", (json_int_t)2,
			       "op", orev));
	intent(set);
	ck_assert_uint_eq(set->revert_seq, 2);
	ck_assert_str_eq(set->revert.id, "s1");
	ck_assert(!report(line, 1));
	ck_assert(report(line, 2));
	ck_assert(op_done(orev, NULL));
	intent(set);
	ck_assert_uint_eq(set->revert_seq, 0);
	/* a clone of s1: its check fills cloneDetails; its intent (CREATING) the source */
	clone = json_pack("{s:s,s:s,s:{s:s}}", "name", LOC "/volumes/c1", "state", "CREATING", "restoreParameters",
			  "sourceSnapshot", VN "/snapshots/s1");
	ck_assert_int_eq(srv_snapshot_clone_check(db, "projects/p/locations/west", clone, &msg), AQ_EINVAL);
	ck_assert_int_eq(srv_snapshot_clone_check(db, LOC, clone, &msg), AQ_OK);
	ck_assert_str_eq(str(json_object_get(clone, "cloneDetails"), "sourceVolume"), VN);
	ck_assert_str_eq(str(json_object_get(clone, "cloneDetails"), "sharedSpaceGib"), "7");
	srv_test_put(db, "volume", LOC, LOC "/volumes/c1", json_incref(clone));
	{
		json_t *e = json_pack("{s:s}", "name", LOC "/volumes/c1");

		ck_assert_int_eq(srv_snapshot_intent(db, clone, e), AQ_OK);
		ck_assert_int_eq(api_intent_snapset_decode(e, set, &msg), AQ_OK);
		ck_assert(set->clone);
		ck_assert_str_eq(set->clone_dir, "volumes/00112233445566aa");
		ck_assert_str_eq(set->clone_snap.uid, uid_of("s1"));
		json_decref(e);
	}
	/* the clone's source snapshot cannot go, nor its volume, force or not */
	s = get(VN "/snapshots/s1");
	ck_assert_int_eq(srv_snapshot_start_delete(db, s, "", &msg), AQ_EPRECOND);
	ck_assert(strstr(msg.text, "clone volume \"" LOC "/volumes/c1\"") != NULL);
	vol = get(VN);
	ck_assert_int_eq(srv_snapshot_volume_delete(db, vol, true, &msg), AQ_EPRECOND);
	ck_assert_int_eq(srv_snapshot_volume_delete(db, vol, false, &msg), AQ_EPRECOND);
	ck_assert(strstr(msg.text, "force=true") != NULL);
	/* once the clone is gone, force deletes every snapshot with the volume */
	ck_assert_int_eq(db_delete(db, LOC "/volumes/c1"), AQ_OK);
	add("s2", op("c2"));
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(srv_snapshot_volume_delete(db, vol, true, &msg), AQ_OK);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_ptr_null(get(VN "/snapshots/s1"));
	ck_assert_ptr_null(get("snaprefs/" VN "/snapshots/s2"));
	ck_assert_ptr_null(get("snapreverts/" VN));
	ck_assert(op_done(LOC "/operations/c2", "being deleted"));
	json_decref(s);
	json_decref(vol);
	json_decref(clone);
	free(set);
}
END_TEST

/* The scheduled snapshots of v1 that are not being deleted. */
static int kept(const char *kind)
{
	json_t *all = NULL, *s;
	size_t i;
	int n = 0;

	ck_assert_int_eq(db_list_all(db, &(struct db_query){ .kind = "snapshot", .parent = VN }, &all, NULL), AQ_OK);
	json_array_foreach(all, i, s)
		if (strncmp(strrchr(str(s, "name"), '/') + 1, kind, strlen(kind)) == 0 && strcmp(str(s, "state"), "DELETING") != 0)
			n++;
	json_decref(all);
	return n;
}

/* Every snapshot of v1 reported as the node would: READY unless deleted. */
static void node_catches_up(void)
{
	json_t *all = NULL, *s;
	char line[8192] = "[";
	size_t i, off = 1;

	ck_assert_int_eq(db_list_all(db, &(struct db_query){ .kind = "snapshot", .parent = VN }, &all, NULL), AQ_OK);
	json_array_foreach(all, i, s) {
		if (strcmp(str(s, "state"), "DELETING") == 0)
			continue;
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%s", off > 1 ? "," : "",
					ready(strrchr(str(s, "name"), '/') + 1, 1));
	}
	snprintf(line + off, sizeof(line) - off, "]");
	report(line, 0);
	json_decref(all);
}

START_TEST(test_schedule)
{
	const int64_t t0 = 1796083200LL; /* 2026-12-01 00:00 UTC */
	json_t *vol = get(VN);
	int made = 0;

	json_object_set_new(vol, "snapshotPolicy",
			    json_pack("{s:b,s:{s:i,s:i}}", "enabled", 1, "hourlySchedule", "snapshotsToKeep", 3, "minute", 5));
	ck_assert_int_eq(db_put(db, "volume", LOC, VN, vol, false), AQ_OK);
	/* first seen at 00:30: the 00:05 slot is past, nothing is made */
	ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + 1800, &made), AQ_OK);
	ck_assert_int_eq(made, 0);
	ck_assert_int_eq(kept("hourly"), 0);
	for (int h = 1; h <= 6; h++) {
		ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + h * 3600 + 300, &made), AQ_OK);
		ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + h * 3600 + 600, &made), AQ_OK); /* same slot: nothing */
		node_catches_up();
		ck_assert_int_eq(kept("hourly"), h < 3 ? h : 3);
	}
	ck_assert(has(VN "/snapshots/hourly-20261201-0605"));
	ck_assert(!has(VN "/snapshots/hourly-20261201-0105")); /* the oldest went */
	/* aquiferd down for ten hours: one catch-up, no burst */
	ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + 16 * 3600 + 1200, &made), AQ_OK);
	node_catches_up();
	ck_assert(has(VN "/snapshots/hourly-20261201-1605"));
	ck_assert(!has(VN "/snapshots/hourly-20261201-1005"));
	ck_assert_int_eq(kept("hourly"), 3);
	/* a changed schedule starts at its next slot: no snapshot for 15:30 at 16:25 */
	json_object_set_new(json_object_get(json_object_get(vol, "snapshotPolicy"), "hourlySchedule"), "minute", json_integer(30));
	ck_assert_int_eq(db_put(db, "volume", LOC, VN, vol, false), AQ_OK);
	made = 0;
	ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + 16 * 3600 + 1500, &made), AQ_OK);
	ck_assert_int_eq(made, 0);
	ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + 16 * 3600 + 2100, &made), AQ_OK);
	ck_assert(has(VN "/snapshots/hourly-20261201-1630"));
	node_catches_up();
	ck_assert_int_eq(kept("hourly"), 3);
	/* the policy removed: no more snapshots, the kept ones stay */
	json_object_del(vol, "snapshotPolicy");
	ck_assert_int_eq(db_put(db, "volume", LOC, VN, vol, false), AQ_OK);
	made = 0;
	ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + 20 * 3600 + 600, &made), AQ_OK);
	ck_assert_int_eq(made, 0);
	ck_assert_int_eq(kept("hourly"), 3);
	/* fencing (srv_lead.h): a replica whose epoch is no longer the lease's
	 * records no slot and makes no snapshot; the current holder does */
	json_object_set_new(vol, "snapshotPolicy",
			    json_pack("{s:b,s:{s:i,s:i}}", "enabled", 1, "hourlySchedule", "snapshotsToKeep", 3, "minute", 5));
	ck_assert_int_eq(db_put(db, "volume", LOC, VN, vol, false), AQ_OK);
	ck_assert_int_eq(srv_snapsched_pass(db, NULL, t0 + 21 * 3600 + 600, &made), AQ_OK); /* first seen */
	ck_assert_int_eq(db_lease_take(db, "leases/leader", "old", "", ut_clock_real_ms(), 60000, NULL), AQ_OK);
	ck_assert_int_eq(db_lease_release(db, &(struct db_fence){ .lease = "leases/leader", .holder = "old", .epoch = 1 }), AQ_OK);
	ck_assert_int_eq(db_lease_take(db, "leases/leader", "new", "", ut_clock_real_ms(), 60000, NULL), AQ_OK);
	made = 0;
	ck_assert_int_eq(srv_snapsched_pass(db, &(struct db_fence){ .lease = "leases/leader", .holder = "old", .epoch = 1 },
					    t0 + 22 * 3600 + 600, &made), AQ_EPRECOND);
	ck_assert_int_eq(made, 0);
	ck_assert(!has(VN "/snapshots/hourly-20261201-2205"));
	ck_assert_int_eq(srv_snapsched_pass(db, &(struct db_fence){ .lease = "leases/leader", .holder = "new", .epoch = 2 },
					    t0 + 22 * 3600 + 600, &made), AQ_OK);
	ck_assert_int_eq(made, 2); /* 22:05 made, the oldest deleted */
	ck_assert(has(VN "/snapshots/hourly-20261201-2205"));
	json_decref(vol);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_snapshot");
	TCase *tc = tcase_create("srv_snapshot");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_create_delete);
	tcase_add_test(tc, test_error_and_limits);
	tcase_add_test(tc, test_revert_clone_force);
	tcase_add_test(tc, test_schedule);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
