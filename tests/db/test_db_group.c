/* Unit tests for group transactions (db/db_group.c, db.h db_group_run):
 * N callers' bodies queued while another writer holds the writer mutex
 * cost one commit; a failing body undoes its own writes only; a body is
 * refused inside a transaction; and a process killed with SIGKILL while
 * its threads run groups keeps every write it acknowledged. On a
 * temporary SQLite file; with AQ_TEST_PG_URL set (tests/db/test_db_pg.sh)
 * the same on PostgreSQL. */
#include "db/db.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/aqt.h"
#include "tests/lib/aqt_db.h"

#define GR_THREADS 16
#define GR_KILL_THREADS 8
#define GR_KILL_PER_THREAD 200

static char db_path[1024]; /* the SQLite file or the PostgreSQL URL */
static const char *pg_url; /* NULL: SQLite */

static void setup(void)
{
	struct db *d = NULL;
	aq_msg msg = { .text = "" };

	aqt_db_fresh(pg_url, "dbg", db_path, sizeof(db_path));
	/* the schema first, so the threads only write */
	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	db_close(d);
}

static void teardown(void)
{
	aqt_db_remove(pg_url, db_path);
}

/* A status report's write: node t's document with its applied generation
 * g; fail (not AQ_OK) undoes it. */
struct gr_body {
	int t, g;
	int fail;
	enum db_group_lane lane;
};

/* The lanes of the bodies in the order they ran (test_group_live_first). */
static pthread_mutex_t gr_order_mu = PTHREAD_MUTEX_INITIALIZER;
static enum db_group_lane gr_order[GR_THREADS * 2];
static int gr_ran;

static int gr_report(struct db *db, void *arg)
{
	const struct gr_body *b = arg;
	char name[64];
	json_t *doc = json_pack("{s:i,s:i}", "node", b->t, "appliedGeneration", b->g);
	int rc;

	snprintf(name, sizeof(name), "nodes/n%d-%d", b->t, b->g);
	rc = doc ? db_put(db, "node", "locations/l", name, doc, true) : AQ_ENOMEM;
	pthread_mutex_lock(&gr_order_mu);
	if (gr_ran < GR_THREADS * 2)
		gr_order[gr_ran++] = b->lane;
	pthread_mutex_unlock(&gr_order_mu);
	json_decref(doc);
	return rc == AQ_OK && b->fail ? b->fail : rc;
}

struct gr_thread {
	pthread_t th;
	struct gr_body body;
	int rc;
	int per;    /* bodies to run, one after another (kill test) */
	int ack_fd; /* >= 0: write each acknowledged body's numbers here */
	struct db *db; /* opened before (db_open migrates: it needs the writer) */
};

static void *gr_run(void *arg)
{
	struct gr_thread *g = arg;
	aq_msg msg = { .text = "" };
	struct db *d = g->db;

	if (!d && (g->rc = db_open(db_path, &d, &msg)) != AQ_OK)
		return NULL;
	for (int i = 0; i < (g->per ? g->per : 1); i++) {
		if (g->per)
			g->body.g = i;
		if ((g->rc = db_group_run(d, g->body.lane, gr_report, &g->body)) != AQ_OK)
			break;
		if (g->ack_fd >= 0 && !aqt_kill9_ack(g->ack_fd, g->body.t, i))
			break;
	}
	db_close(d);
	return NULL;
}

/* Hold the writer mutex (an open transaction on blocker) while GR_THREADS
 * callers queue their bodies; wait until all are queued. */
static void gr_queue_behind(struct db *blocker, struct gr_thread *g, int fail_at)
{
	struct db_group_stats st;
	aq_msg msg = { .text = "" };

	for (int t = 0; t < GR_THREADS; t++) {
		g[t] = (struct gr_thread){ .body = { .t = t, .g = 1, .fail = t == fail_at ? AQ_EINVAL : 0,
						     .lane = t % 2 ? DB_GROUP_RECON : DB_GROUP_LIVE }, .ack_fd = -1 };
		ck_assert_msg(db_open(db_path, &g[t].db, &msg) == AQ_OK, "db_open: %s", msg.text);
	}
	ck_assert_int_eq(db_begin(blocker), AQ_OK);
	for (int t = 0; t < GR_THREADS; t++)
		ck_assert_int_eq(pthread_create(&g[t].th, NULL, gr_run, &g[t]), 0);
	for (int i = 0; i < 3000; i++) {
		db_group_stats(&st);
		if (st.queued >= GR_THREADS)
			break;
		usleep(10000);
	}
	db_group_stats(&st);
	ck_assert_uint_eq(st.queued, GR_THREADS);
}

/* GR_THREADS reports queued while another writer holds the lock: one
 * group, one commit for them all, every report written. */
START_TEST(test_group_one_commit)
{
	struct gr_thread g[GR_THREADS];
	struct db_sync_stats c0, c1;
	struct db_group_stats s0, s1;
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	int64_t n = -1;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	db_group_limits(0, 60 * 1000000000ull); /* no cut by the clock under load */
	db_group_stats(&s0);
	gr_queue_behind(d, g, -1);
	db_sync_stats(&c0);
	db_rollback(d); /* the writer mutex goes to the group's leader */
	for (int t = 0; t < GR_THREADS; t++) {
		pthread_join(g[t].th, NULL);
		ck_assert_msg(g[t].rc == AQ_OK, "report %d: %s", t, aq_err_str(g[t].rc));
	}
	db_sync_stats(&c1);
	db_group_stats(&s1);
	ck_assert_msg(c1.commits - c0.commits == 1, "%d reports cost %llu commits, not 1", GR_THREADS,
		      (unsigned long long)(c1.commits - c0.commits));
	ck_assert_uint_eq(s1.groups - s0.groups, 1);
	ck_assert_uint_eq(s1.items - s0.items, GR_THREADS);
	ck_assert_uint_eq(s1.alone - s0.alone, 0);
	ck_assert_uint_eq(s1.queued, 0);
	ck_assert_int_eq(db_count(d, "node", "locations/l", &n), AQ_OK);
	ck_assert_int_eq(n, GR_THREADS);
	db_close(d);
}
END_TEST

/* The bounds hold: at most max bodies a group (16 queued, max 4: four
 * commits), and no body taken once a group ran its budget (1 ns: one
 * body a group, sixteen commits). */
static void gr_bounded(size_t max, uint64_t budget_ns, uint64_t want)
{
	struct gr_thread g[GR_THREADS];
	struct db_sync_stats c0, c1;
	struct db_group_stats s0, s1;
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	int64_t n = -1;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	db_group_limits(max, budget_ns);
	db_group_stats(&s0);
	gr_queue_behind(d, g, -1);
	db_sync_stats(&c0);
	db_rollback(d);
	for (int t = 0; t < GR_THREADS; t++) {
		pthread_join(g[t].th, NULL);
		ck_assert_msg(g[t].rc == AQ_OK, "report %d: %s", t, aq_err_str(g[t].rc));
	}
	db_sync_stats(&c1);
	db_group_stats(&s1);
	ck_assert_msg(c1.commits - c0.commits == want, "%d reports, max %zu, budget %llu ns: %llu commits, not %llu",
		      GR_THREADS, max, (unsigned long long)budget_ns, (unsigned long long)(c1.commits - c0.commits),
		      (unsigned long long)want);
	ck_assert_uint_eq(s1.groups - s0.groups, want);
	ck_assert_int_eq(db_count(d, "node", "locations/l", &n), AQ_OK);
	ck_assert_int_eq(n, GR_THREADS);
	db_close(d);
}

START_TEST(test_group_bounded)
{
	gr_bounded(4, 60 * 1000000000ull, GR_THREADS / 4);
}
END_TEST

START_TEST(test_group_budget)
{
	gr_bounded(0, 1, GR_THREADS);
}
END_TEST

/* One body of the group fails after writing: its caller gets its error
 * and its write is undone; every other caller's write is committed (each
 * run again alone). */
START_TEST(test_group_failure_isolated)
{
	struct gr_thread g[GR_THREADS];
	struct db_group_stats s0, s1;
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	json_t *doc = NULL;
	int64_t n = -1;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	db_group_stats(&s0);
	gr_queue_behind(d, g, 5);
	db_rollback(d);
	for (int t = 0; t < GR_THREADS; t++) {
		pthread_join(g[t].th, NULL);
		ck_assert_msg(g[t].rc == (t == 5 ? AQ_EINVAL : AQ_OK), "report %d: %s", t, aq_err_str(g[t].rc));
	}
	db_group_stats(&s1);
	ck_assert_uint_gt(s1.alone - s0.alone, 0);
	ck_assert_int_eq(db_count(d, "node", "locations/l", &n), AQ_OK);
	ck_assert_int_eq(n, GR_THREADS - 1);
	ck_assert_int_eq(db_get(d, "nodes/n5-1", &doc), AQ_ENOENT);
	ck_assert_int_eq(db_get(d, "nodes/n4-1", &doc), AQ_OK);
	json_decref(doc);
	db_close(d);
}
END_TEST

/* Lanes: half the bodies are the reconciler's (DB_GROUP_RECON), half
 * status reports (DB_GROUP_LIVE), all queued behind a writer; groups of
 * 8: the first group runs the eight live bodies, whatever their arrival
 * order, and the lane counters say so. */
START_TEST(test_group_live_first)
{
	struct gr_thread g[GR_THREADS];
	struct db_group_stats s0, s1;
	aq_msg msg = { .text = "" };
	struct db *d = NULL;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	db_group_limits(GR_THREADS / 2, 60 * 1000000000ull);
	db_group_stats(&s0);
	gr_ran = 0;
	gr_queue_behind(d, g, -1);
	db_rollback(d);
	for (int t = 0; t < GR_THREADS; t++) {
		pthread_join(g[t].th, NULL);
		ck_assert_msg(g[t].rc == AQ_OK, "body %d: %s", t, aq_err_str(g[t].rc));
	}
	db_group_stats(&s1);
	ck_assert_int_eq(gr_ran, GR_THREADS);
	for (int i = 0; i < GR_THREADS / 2; i++)
		ck_assert_msg(gr_order[i] == DB_GROUP_LIVE, "body %d of the first group was the %s lane's", i,
			      db_group_lane_name(gr_order[i]));
	ck_assert_uint_eq(s1.lane[DB_GROUP_LIVE].items - s0.lane[DB_GROUP_LIVE].items, GR_THREADS / 2);
	ck_assert_uint_eq(s1.lane[DB_GROUP_RECON].items - s0.lane[DB_GROUP_RECON].items, GR_THREADS / 2);
	ck_assert_uint_eq(s1.lane[DB_GROUP_LIVE].groups - s0.lane[DB_GROUP_LIVE].groups, 1);
	ck_assert_uint_eq(s1.lane[DB_GROUP_RECON].groups - s0.lane[DB_GROUP_RECON].groups, 1);
	ck_assert_uint_gt(s1.lane[DB_GROUP_LIVE].wait_max_ns, 0);
	db_close(d);
}
END_TEST

/* A stop: bodies queued behind a writer fail with AQ_EUNAVAIL when the
 * queue closes and write nothing; a later call is refused at once; reopen
 * takes bodies again. */
START_TEST(test_group_close)
{
	struct gr_thread g[GR_THREADS];
	struct gr_body b = { .t = 99, .g = 1 };
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	int64_t n = -1;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	gr_queue_behind(d, g, -1);
	db_group_close();
	db_rollback(d);
	for (int t = 0; t < GR_THREADS; t++) {
		pthread_join(g[t].th, NULL);
		/* the leader too: its body waited in the queue with the others */
		ck_assert_msg(g[t].rc == AQ_EUNAVAIL, "body %d: %s", t, aq_err_str(g[t].rc));
	}
	ck_assert_int_eq(db_group_run(d, DB_GROUP_LIVE, gr_report, &b), AQ_EUNAVAIL);
	ck_assert_int_eq(db_count(d, "node", "locations/l", &n), AQ_OK);
	ck_assert_msg(n == 0, "%lld refused bodies written", (long long)n);
	db_group_reopen();
	ck_assert_int_eq(db_group_run(d, DB_GROUP_LIVE, gr_report, &b), AQ_OK);
	db_close(d);
}
END_TEST

/* Inside a transaction the caller would wait for its own writer mutex. */
START_TEST(test_group_refused_in_tx)
{
	struct gr_body b = { .t = 1, .g = 1 };
	aq_msg msg = { .text = "" };
	struct db *d = NULL;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	ck_assert_int_eq(db_begin(d), AQ_OK);
	ck_assert_int_eq(db_group_run(d, DB_GROUP_LIVE, gr_report, &b), AQ_EINVAL);
	db_rollback(d);
	ck_assert_int_eq(db_group_run(d, DB_GROUP_LIVE, gr_report, &b), AQ_OK);
	db_close(d);
}
END_TEST

/* A child runs groups from eight threads and acks each body once
 * db_group_run returned; it is killed with SIGKILL midway (aqt_kill9).
 * Every acked write is readable at once, and there after the kill. */
static void gr_kill_child(int ack_fd, void *arg)
{
	struct gr_thread g[GR_KILL_THREADS];

	(void)arg;
	for (int t = 0; t < GR_KILL_THREADS; t++) {
		g[t] = (struct gr_thread){ .body = { .t = t }, .per = GR_KILL_PER_THREAD, .ack_fd = ack_fd };
		pthread_create(&g[t].th, NULL, gr_run, &g[t]);
	}
	for (int t = 0; t < GR_KILL_THREADS; t++)
		pthread_join(g[t].th, NULL);
}

static void gr_kill_ack(const struct aqt_ack *ack, void *arg)
{
	char name[64];
	json_t *doc = NULL;

	snprintf(name, sizeof(name), "nodes/n%d-%d", ack->a, ack->b);
	ck_assert_msg(db_get(arg, name, &doc) == AQ_OK, "acknowledged %s is missing", name);
	json_decref(doc);
}

START_TEST(test_group_kill9_keeps_acknowledged)
{
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	int64_t n = -1;
	int got;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	got = aqt_kill9(gr_kill_child, gr_kill_ack, NULL, GR_KILL_THREADS * GR_KILL_PER_THREAD / 3, d, NULL);
	db_close(d);
	d = NULL;
	ck_assert_msg(got >= GR_KILL_THREADS * GR_KILL_PER_THREAD / 3, "only %d writes before the kill", got);
	/* reopened after the kill (recovery): every acknowledged write is there */
	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open after kill: %s", msg.text);
	ck_assert_int_eq(db_count(d, "node", "locations/l", &n), AQ_OK);
	ck_assert_msg(n >= got, "%lld writes after the kill, %d acknowledged", (long long)n, got);
	db_close(d);
}
END_TEST

static Suite *db_group_suite(void)
{
	Suite *s = suite_create("db_group");
	TCase *tc = tcase_create(pg_url ? "postgres" : "sqlite");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_group_one_commit);
	tcase_add_test(tc, test_group_bounded);
	tcase_add_test(tc, test_group_budget);
	tcase_add_test(tc, test_group_failure_isolated);
	tcase_add_test(tc, test_group_refused_in_tx);
	tcase_add_test(tc, test_group_live_first);
	tcase_add_test(tc, test_group_close);
	tcase_add_test(tc, test_group_kill9_keeps_acknowledged);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	pg_url = aqt_db_pg_url();
	return aqt_run(db_group_suite());
}
