/* Unit tests for db/db_usage.c and the usage triggers (schema step 4), on
 * either engine: the counters follow every write of a volume (pool by ID
 * or full name, resize, move, delete, rollback) and of a placement;
 * db_usage_verify agrees with them and catches a tampered row; the
 * migration computes them for a database written before step 4; two
 * processes racing on the last MiB/s of a pool, each checking the counter,
 * create exactly one volume; db_usage_location reads one location's pools
 * and nodes only. By default on a temporary SQLite file; with
 * AQ_TEST_PG_URL set (tests/db/test_db_pg.sh) on that PostgreSQL database. */
#include "db/db.h"
#include "db/db_engine.h"

#include <check.h>
#include <libpq-fe.h>
#include <math.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/aqt.h"
#include "tests/lib/aqt_db.h"

static char db_path[1024];
static const char *pg_url;
static struct db *db;

#define LOC "projects/p/locations/east"
#define POOL LOC "/storagePools/pool"

/* SQL on the test database outside db/ (either engine). */
static void raw_sql(const char *sql)
{
	if (pg_url) {
		aqt_db_pg_exec(pg_url, sql);
	} else {
		sqlite3 *h = NULL;
		char *err = NULL;

		ck_assert_int_eq(sqlite3_open(db_path, &h), SQLITE_OK);
		sqlite3_busy_timeout(h, 5000);
		ck_assert_msg(sqlite3_exec(h, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err ? err : "?");
		sqlite3_close(h);
	}
}

static void setup(void)
{
	aqt_db_open(pg_url, "usage", db_path, sizeof(db_path), &db);
}

static void teardown(void)
{
	aqt_db_close(pg_url, db_path, db);
	db = NULL;
}

static void vol(const char *id, const char *pool, const char *cap, double mibps, bool create)
{
	char name[200];
	json_t *doc;

	snprintf(name, sizeof(name), LOC "/volumes/%s", id);
	doc = json_pack("{s:s,s:s,s:s,s:f,s:s,s:I}", "name", name, "storagePool", pool, "capacityGib", cap,
			"throughputMibps", mibps, "coldTierSizeGib", "5", "hotTierSizeUsedGib", (json_int_t)7);
	ck_assert_int_eq(db_put(db, "volume", LOC, name, doc, create), AQ_OK);
	json_decref(doc);
}

static void placement(const char *vol_id, const char *node, double mibps, bool create)
{
	char name[200], vn[200];
	json_t *doc;

	snprintf(vn, sizeof(vn), LOC "/volumes/%s", vol_id);
	snprintf(name, sizeof(name), "placements/%s", vn);
	doc = json_pack("{s:s,s:s,s:f}", "volume", vn, "node", node, "mibps", mibps);
	ck_assert_int_eq(db_put(db, "placement", node, name, doc, create), AQ_OK);
	json_decref(doc);
}

static void usage_is(const char *name, int64_t n, double cap, double mibps, double cold, double hot)
{
	struct db_usage u;

	ck_assert_int_eq(db_usage_get(db, name, &u), AQ_OK);
	ck_assert_msg(u.count == n && fabs(u.capacity_gib - cap) < 1e-9 && fabs(u.mibps - mibps) < 1e-9 &&
			      fabs(u.cold_gib - cold) < 1e-9 && fabs(u.hot_gib - hot) < 1e-9,
		      "%s: n=%lld cap=%g mibps=%g cold=%g hot=%g, want n=%lld cap=%g mibps=%g cold=%g hot=%g", name,
		      (long long)u.count, u.capacity_gib, u.mibps, u.cold_gib, u.hot_gib, (long long)n, cap, mibps,
		      cold, hot);
}

static void verify_ok(void)
{
	aq_msg msg = { .text = { 0 } };

	ck_assert_msg(db_usage_verify(db, &msg) == AQ_OK, "db_usage_verify: %s", msg.text);
}

/* db_usage_each: the names seen, "a;b;" (into a 512-byte buffer) */
static void count_row(void *arg, const char *name, const struct db_usage *u)
{
	char *seen = arg;
	size_t n = strlen(seen);

	(void)u;
	snprintf(seen + n, 512 - n, "%s;", name);
}

START_TEST(test_counters_follow_writes)
{
	char seen[512] = "";

	usage_is(POOL, 0, 0, 0, 0, 0);
	vol("a", "pool", "100", 6.25, true);          /* by ID */
	vol("b", POOL, "200", 12.5, true);            /* by full name: the same pool */
	vol("c", "other", "50", 1, true);
	usage_is(POOL, 2, 300, 18.75, 10, 14);
	usage_is(LOC "/storagePools/other", 1, 50, 1, 5, 7);
	vol("a", "pool", "1000", 62.5, false);        /* resize */
	usage_is(POOL, 2, 1200, 75, 10, 14);
	vol("b", "other", "200", 12.5, false);        /* move */
	usage_is(POOL, 1, 1000, 62.5, 5, 7);
	usage_is(LOC "/storagePools/other", 2, 250, 13.5, 10, 14);
	/* a rolled-back write counts nothing */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	vol("d", "pool", "999", 99, true);
	usage_is(POOL, 2, 1999, 161.5, 10, 14); /* its own transaction sees it */
	db_rollback(db);
	usage_is(POOL, 1, 1000, 62.5, 5, 7);
	placement("a", "nodes/n1", 62.5, true);
	placement("b", "nodes/n1", 12.5, true);
	placement("c", "nodes/n2", 1, true);
	usage_is("nodes/n1", 2, 0, 75, 0, 0);
	placement("b", "nodes/n1", 20, false);
	usage_is("nodes/n1", 2, 0, 82.5, 0, 0);
	verify_ok();
	ck_assert_int_eq(db_usage_each(db, "nodes/", count_row, seen), AQ_OK);
	ck_assert_str_eq(seen, "nodes/n1;nodes/n2;");
	ck_assert_int_eq(db_delete(db, LOC "/volumes/a"), AQ_OK);
	ck_assert_int_eq(db_delete(db, "placements/" LOC "/volumes/a"), AQ_OK);
	usage_is(POOL, 0, 0, 0, 0, 0);
	usage_is("nodes/n1", 1, 0, 20, 0, 0);
	verify_ok();
}
END_TEST

/* A volume with every field usage counts given, and a state. */
static void vol_full(const char *pool, const char *cap, double mibps, const char *cold, int hot, const char *state,
		     bool create)
{
	json_t *doc = json_pack("{s:s,s:s,s:s,s:f,s:s,s:I,s:s}", "name", LOC "/volumes/a", "storagePool", pool,
				"capacityGib", cap, "throughputMibps", mibps, "coldTierSizeGib", cold,
				"hotTierSizeUsedGib", (json_int_t)hot, "state", state);

	ck_assert_int_eq(db_put(db, "volume", LOC, LOC "/volumes/a", doc, create), AQ_OK);
	json_decref(doc);
}

/* An update that changes one of the fields a volume or placement adds to
 * usage, each alone in turn, moves the counters; one that changes none of
 * them (a state) leaves them as they are (on PostgreSQL the trigger skips
 * such an update's usage work, schema step 9). */
START_TEST(test_counters_one_field)
{
	vol_full("pool", "100", 6.25, "5", 7, "CREATING", true);
	usage_is(POOL, 1, 100, 6.25, 5, 7);
	vol_full("pool", "100", 6.25, "5", 7, "READY", false);
	usage_is(POOL, 1, 100, 6.25, 5, 7);
	vol_full("pool", "200", 6.25, "5", 7, "READY", false);
	usage_is(POOL, 1, 200, 6.25, 5, 7);
	vol_full("pool", "200", 12.5, "5", 7, "READY", false);
	usage_is(POOL, 1, 200, 12.5, 5, 7);
	vol_full("pool", "200", 12.5, "6", 7, "READY", false);
	usage_is(POOL, 1, 200, 12.5, 6, 7);
	vol_full("pool", "200", 12.5, "6", 8, "READY", false);
	usage_is(POOL, 1, 200, 12.5, 6, 8);
	vol_full("other", "200", 12.5, "6", 8, "READY", false);
	usage_is(POOL, 0, 0, 0, 0, 0);
	usage_is(LOC "/storagePools/other", 1, 200, 12.5, 6, 8);
	placement("a", "nodes/n1", 1, true);
	placement("a", "nodes/n1", 2, false);
	usage_is("nodes/n1", 1, 0, 2, 0, 0);
	verify_ok();
}
END_TEST

/* A volume (id) of pool pool_id in project proj, location loc, placed on
 * node: the documents the usage triggers count. */
static void vol_at(const char *proj, const char *loc, const char *pool_id, const char *id, const char *node)
{
	char parent[200], name[300], pname[400];
	json_t *doc, *pl;

	snprintf(parent, sizeof(parent), "projects/%s/locations/%s", proj, loc);
	snprintf(name, sizeof(name), "%s/volumes/%s", parent, id);
	snprintf(pname, sizeof(pname), "placements/%s", name);
	doc = json_pack("{s:s,s:s,s:s,s:f}", "name", name, "storagePool", pool_id, "capacityGib", "10",
			"throughputMibps", 1.0);
	pl = json_pack("{s:s,s:s,s:f}", "volume", name, "node", node, "mibps", 2.0);
	ck_assert_int_eq(db_put(db, "volume", parent, name, doc, true), AQ_OK);
	ck_assert_int_eq(db_put(db, "placement", node, pname, pl, true), AQ_OK);
	json_decref(doc);
	json_decref(pl);
}

/* db_usage_location: the pools of the location in every project and the
 * nodes whose resource is under it, nothing of another location (one
 * whose id only starts like it, or has it as a pool id), in name order. */
START_TEST(test_location_rows)
{
	char seen[512] = "";
	json_t *n;

	n = json_pack("{s:s}", "name", "nodes/n1");
	ck_assert_int_eq(db_put(db, "node", "locations/east", "nodes/n1", n, true), AQ_OK);
	json_decref(n);
	n = json_pack("{s:s}", "name", "nodes/w1");
	ck_assert_int_eq(db_put(db, "node", "locations/west", "nodes/w1", n, true), AQ_OK);
	json_decref(n);
	vol_at("p", "east", "pool", "a", "nodes/n1");
	vol_at("q", "east", "qpool", "b", "nodes/n1");
	vol_at("p", "west", "east", "c", "nodes/w1");    /* a west pool named "east" */
	vol_at("p", "east2", "pool", "d", "nodes/e2");   /* a node with no resource */
	ck_assert_int_eq(db_usage_location(db, "east", count_row, seen), AQ_OK);
	ck_assert_str_eq(seen, "nodes/n1;placever/locations/east;projects/p/locations/east/storagePools/pool;"
			       "projects/q/locations/east/storagePools/qpool;");
	seen[0] = '\0';
	ck_assert_int_eq(db_usage_location(db, "nowhere", count_row, seen), AQ_OK);
	ck_assert_str_eq(seen, "");
	ck_assert_int_eq(db_usage_location(db, "a/b", count_row, seen), AQ_EINVAL);
	ck_assert_int_eq(db_usage_location(db, "", count_row, seen), AQ_EINVAL);
}
END_TEST

/* The check sees a counter that disagrees with the documents. */
/* db_placever: a new value for every node or shelf change placement reads
 * (made, removed, state, ceiling, shelf capacity or throughput), none for
 * the others (a report's lastSeenTime), none for other locations, never a
 * value a rolled-back transaction saw; db_usage_verify skips the rows. */
static int64_t pv(const char *loc)
{
	int64_t v = -1;

	ck_assert_int_eq(db_placever(db, loc, &v), AQ_OK);
	return v;
}

static void put_node(const char *name, const char *parent, const char *state, const char *seen, bool create)
{
	json_t *n = json_pack("{s:s,s:s,s:s,s:f}", "name", name, "state", state, "lastSeenTime", seen,
			      "throughputCeilingMibps", 1000.0);

	ck_assert_int_eq(db_put(db, "node", parent, name, n, create), AQ_OK);
	json_decref(n);
}

START_TEST(test_placever)
{
	int64_t v0, v1, v2, v3, west;
	aq_msg msg = { .text = "" };
	json_t *sh;

	ck_assert_int_eq(pv("east"), 0);
	put_node("nodes/n1", "locations/east", "READY", "t0", true);
	put_node("nodes/w1", "locations/west", "READY", "t0", true);
	v0 = pv("east");
	west = pv("west");
	ck_assert(v0 != 0 && west != 0 && v0 != west);
	put_node("nodes/n1", "locations/east", "READY", "t1", false); /* lastSeenTime only */
	ck_assert(pv("east") == v0);
	put_node("nodes/n1", "locations/east", "DOWN", "t1", false);
	v1 = pv("east");
	ck_assert(v1 != v0);
	ck_assert(pv("west") == west);
	/* a change rolled back: its value is never seen again */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	put_node("nodes/n1", "locations/east", "READY", "t1", false);
	v2 = pv("east");
	ck_assert(v2 != v1 && v2 != v0);
	db_rollback(db);
	ck_assert(pv("east") == v1);
	put_node("nodes/n1", "locations/east", "READY", "t1", false);
	v3 = pv("east");
	ck_assert(v3 != v2 && v3 != v1 && v3 != v0);
	/* a shelf made, changed, removed */
	sh = json_pack("{s:s,s:f}", "name", "shelves/s1", "readThroughputMibps", 100.0);
	ck_assert_int_eq(db_put(db, "shelf", "locations/east", "shelves/s1", sh, true), AQ_OK);
	ck_assert(pv("east") != v3);
	v3 = pv("east");
	json_object_set_new(sh, "readThroughputMibps", json_real(200));
	ck_assert_int_eq(db_put(db, "shelf", "locations/east", "shelves/s1", sh, false), AQ_OK);
	ck_assert(pv("east") != v3);
	v3 = pv("east");
	ck_assert_int_eq(db_delete(db, "shelves/s1"), AQ_OK);
	ck_assert(pv("east") != v3);
	json_decref(sh);
	ck_assert_int_eq(db_placever(db, "a/b", &v3), AQ_EINVAL);
	ck_assert_msg(db_usage_verify(db, &msg) == AQ_OK, "%s", msg.text);
}
END_TEST

START_TEST(test_verify_catches_drift)
{
	aq_msg msg = { .text = { 0 } };

	vol("a", "pool", "100", 6.25, true);
	placement("a", "nodes/n1", 6.25, true);
	verify_ok();
	raw_sql("UPDATE usage SET mibps = mibps + 1 WHERE name = '" POOL "'");
	ck_assert_int_eq(db_usage_verify(db, &msg), AQ_EIO);
	ck_assert_msg(strstr(msg.text, POOL) && strstr(msg.text, "throughputMibps"), "%s", msg.text);
	raw_sql("DELETE FROM usage WHERE name = 'nodes/n1'");
	raw_sql("UPDATE usage SET mibps = mibps - 1 WHERE name = '" POOL "'");
	ck_assert_int_eq(db_usage_verify(db, &msg), AQ_EIO);
	ck_assert_msg(strstr(msg.text, "nodes/n1"), "%s", msg.text);
}
END_TEST

/* A database written before step 4 gets its counters from the migration. */
START_TEST(test_migration_computes)
{
	aq_msg msg = { .text = { 0 } };
	char sql[4096];

	db_close(db);
	db = NULL;
	teardown();
	aqt_db_fresh(pg_url, "usage", db_path, sizeof(db_path));
	if (pg_url) {
		raw_sql("CREATE TABLE schema_version (version integer PRIMARY KEY, what text NOT NULL,"
			" applied_at timestamptz NOT NULL DEFAULT now())");
		for (int i = 0; i < 3; i++) {
			raw_sql(db_steps[i].sql[DB_PG]);
			snprintf(sql, sizeof(sql), "INSERT INTO schema_version (version, what) VALUES (%d, 'x')", i + 1);
			raw_sql(sql);
		}
	} else {
		for (int i = 0; i < 3; i++)
			raw_sql(db_steps[i].sql[DB_SQLITE]);
		raw_sql("PRAGMA user_version = 3");
	}
	raw_sql("INSERT INTO resources (name, kind, parent, seq, doc) VALUES"
		" ('" LOC "/volumes/a', 'volume', '" LOC "', 1, '{\"name\":\"" LOC "/volumes/a\",\"storagePool\":\"pool\",\"capacityGib\":\"100\",\"throughputMibps\":6.25}'),"
		" ('" LOC "/volumes/b', 'volume', '" LOC "', 2, '{\"name\":\"" LOC "/volumes/b\",\"storagePool\":\"" POOL "\",\"capacityGib\":\"300\",\"throughputMibps\":18.75,\"coldTierSizeGib\":\"4\"}'),"
		" ('placements/" LOC "/volumes/a', 'placement', 'nodes/n1', 3, '{\"node\":\"nodes/n1\",\"mibps\":6.25}'),"
		" ('placements/" LOC "/volumes/b', 'placement', 'nodes/n1', 4, '{\"node\":\"nodes/n1\",\"mibps\":18.75}')");
	ck_assert_msg(db_open(db_path, &db, &msg) == AQ_OK, "db_open: %s", msg.text);
	usage_is(POOL, 2, 400, 25, 4, 0);
	usage_is("nodes/n1", 2, 0, 25, 0, 0);
	verify_ok();
	/* and the triggers count from there */
	vol("c", "pool", "100", 6.25, true);
	usage_is(POOL, 3, 500, 31.25, 9, 7);
	verify_ok();
}
END_TEST

/* Two processes check the pool's counter and create at once: exactly one
 * fits in the 100 MiB/s budget. */
#define BUDGET 100.0

static int race_once(struct db *d, const char *id, int step_fd)
{
	char name[200];
	struct db_usage u;
	json_t *doc;
	int rc;

	snprintf(name, sizeof(name), LOC "/volumes/%s", id);
	doc = json_pack("{s:s,s:s,s:f}", "name", name, "storagePool", "pool", "throughputMibps", 60.0);
	if ((rc = db_begin(d)) != AQ_OK || (rc = db_usage_get(d, POOL, &u)) != AQ_OK)
		goto out;
	if (step_fd >= 0 && write(step_fd, "c", 1) != 1)
		rc = AQ_EIO;
	else if (u.mibps + 60.0 > BUDGET)
		rc = 0;
	else if (step_fd >= 0 && poll(&(struct pollfd){ .fd = step_fd, .events = POLLIN }, 1, 1000) < 0)
		rc = AQ_EIO;
	else if ((rc = db_put(d, "volume", LOC, name, doc, true)) == AQ_OK && (rc = db_commit(d)) == AQ_OK)
		rc = 1;
out:
	db_rollback(d);
	json_decref(doc);
	return rc;
}

static int race_side(struct db *d, const char *id, int step_fd)
{
	int rc = AQ_EBUSY;

	for (int tries = 0; tries < 5 && rc == AQ_EBUSY; tries++) {
		rc = race_once(d, id, step_fd);
		step_fd = -1;
	}
	return rc;
}

START_TEST(test_race_budget_counter)
{
	aq_msg msg = { .text = { 0 } };
	int sv[2], status = 0, mine, theirs;
	pid_t pid;
	char c;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct db *d = NULL;

		close(sv[0]);
		if (read(sv[1], &c, 1) != 1 || db_open(db_path, &d, &msg) != AQ_OK)
			_exit(100);
		_exit(race_side(d, "child", -1) + 10);
	}
	close(sv[1]);
	mine = race_side(db, "parent", sv[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(sv[0]);
	ck_assert(WIFEXITED(status));
	theirs = WEXITSTATUS(status) - 10;
	ck_assert_msg(mine >= 0 && theirs >= 0, "parent %d, child %d", mine, theirs);
	ck_assert_msg(mine + theirs == 1, "%d of the two racing creates went through", mine + theirs);
	usage_is(POOL, 1, 0, 60, 0, 0);
	verify_ok();
}
END_TEST

static Suite *usage_suite(void)
{
	Suite *s = suite_create("db_usage");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_counters_follow_writes);
	tcase_add_test(tc, test_counters_one_field);
	tcase_add_test(tc, test_location_rows);
	tcase_add_test(tc, test_placever);
	tcase_add_test(tc, test_verify_catches_drift);
	tcase_add_test(tc, test_migration_computes);
	tcase_add_test(tc, test_race_budget_counter);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	pg_url = aqt_db_pg_url();
	return aqt_run(usage_suite());
}
