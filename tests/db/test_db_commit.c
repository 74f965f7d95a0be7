/* Unit tests for group commit (db/db.c, db_sqlite.c): db_commit() and an
 * autocommit db_put() return only once a sync of the log covered them,
 * concurrent commits share syncs, and a process killed with SIGKILL while
 * committing from several threads loses none of the commits it had
 * acknowledged. On a temporary SQLite file; with AQ_TEST_PG_URL set
 * (tests/db/test_db_pg.sh) the same on PostgreSQL, whose sessions commit
 * with synchronous_commit off and share WAL flushes the same way
 * (db_pg.c, pg_sync). */
#include "db/db.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/aqt.h"
#include "tests/lib/aqt_db.h"

#define GC_THREADS 8
#define GC_PER_THREAD 40

static char db_path[1024]; /* the SQLite file or the PostgreSQL URL */
static const char *pg_url; /* NULL: SQLite */

static void setup(void)
{
	aqt_db_fresh(pg_url, "dbc", db_path, sizeof(db_path));
}

static void teardown(void)
{
	aqt_db_remove(pg_url, db_path);
}

/* One volume document named by thread and number, in its own transaction. */
static int create_one(struct db *d, int t, int i)
{
	char name[128];
	json_t *doc = json_pack("{s:i,s:i}", "t", t, "i", i);
	int rc;

	snprintf(name, sizeof(name), "projects/p/volumes/t%d-%d", t, i);
	if ((rc = db_begin(d)) == AQ_OK && (rc = db_put(d, "volume", "projects/p", name, doc, true)) == AQ_OK)
		rc = db_commit(d);
	db_rollback(d);
	json_decref(doc);
	return rc;
}

struct gc_thread {
	pthread_t th;
	int t;
	int fails;      /* commits that did not return AQ_OK */
	int early;      /* commits that returned before a sync covered them */
	int ack_fd;     /* >= 0: write each acknowledged name's numbers here */
};

static void *gc_run(void *arg)
{
	struct gc_thread *g = arg;
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	struct db_sync_stats st;

	if (db_open(db_path, &d, &msg) != AQ_OK) {
		g->fails = GC_PER_THREAD;
		return NULL;
	}
	for (int i = 0; i < GC_PER_THREAD; i++) {
		if (create_one(d, g->t, i) != AQ_OK) {
			g->fails++;
			continue;
		}
		db_sync_stats(&st);
		if (st.synced < db_commit_seq(d))
			g->early++;
		if (g->ack_fd >= 0 && !aqt_kill9_ack(g->ack_fd, g->t, i))
			g->fails++;
	}
	db_close(d);
	return NULL;
}

static void gc_all(struct gc_thread *g, int ack_fd)
{
	for (int t = 0; t < GC_THREADS; t++) {
		g[t] = (struct gc_thread){ .t = t, .ack_fd = ack_fd };
		ck_assert_int_eq(pthread_create(&g[t].th, NULL, gc_run, &g[t]), 0);
	}
	for (int t = 0; t < GC_THREADS; t++)
		pthread_join(g[t].th, NULL);
}

/* Eight threads, each on its own connection, commit 40 transactions each:
 * every commit returns only once synced covers it, every row is there,
 * and the syncs were fewer than the commits (shared). */
START_TEST(test_group_commit)
{
	struct gc_thread g[GC_THREADS];
	struct db_sync_stats before, after;
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	int64_t n = -1;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	db_sync_stats(&before);
	gc_all(g, -1);
	db_sync_stats(&after);
	for (int t = 0; t < GC_THREADS; t++) {
		ck_assert_msg(g[t].fails == 0, "thread %d: %d commits failed", t, g[t].fails);
		ck_assert_msg(g[t].early == 0, "thread %d: %d commits returned before their sync", t, g[t].early);
	}
	ck_assert_int_eq(db_count(d, "volume", "projects/p", &n), AQ_OK);
	ck_assert_int_eq(n, GC_THREADS * GC_PER_THREAD);
	ck_assert_uint_ge(after.commits - before.commits, GC_THREADS * GC_PER_THREAD);
	{
		uint64_t commits = after.commits - before.commits, syncs = after.syncs - before.syncs;

		ck_assert_uint_eq(after.synced, after.commits);
		ck_assert_msg(syncs > 0 && syncs < commits, "%llu syncs for %llu commits", (unsigned long long)syncs,
			      (unsigned long long)commits);
		fprintf(stderr, "# group commit: %llu commits, %llu syncs\n", (unsigned long long)commits,
			(unsigned long long)syncs);
	}
	db_close(d);
}
END_TEST

/* A write outside a transaction (autocommit) is synced before it returns,
 * as is a delete. */
START_TEST(test_autocommit_synced)
{
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	struct db_sync_stats st;
	json_t *doc = json_pack("{s:i}", "x", 1);
	uint64_t seq;

	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	ck_assert_int_eq(db_put(d, "volume", "projects/p", "projects/p/volumes/a", doc, true), AQ_OK);
	seq = db_commit_seq(d);
	ck_assert_uint_gt(seq, 0);
	db_sync_stats(&st);
	ck_assert_uint_ge(st.synced, seq);
	ck_assert_int_eq(db_delete(d, "projects/p/volumes/a"), AQ_OK);
	ck_assert_uint_gt(db_commit_seq(d), seq);
	db_sync_stats(&st);
	ck_assert_uint_ge(st.synced, db_commit_seq(d));
	/* a refused write commits nothing */
	seq = db_commit_seq(d);
	ck_assert_int_eq(db_delete(d, "projects/p/volumes/a"), AQ_ENOENT);
	ck_assert_uint_eq(db_commit_seq(d), seq);
	json_decref(doc);
	db_close(d);
}
END_TEST

/* The WAL is checkpointed outside COMMIT (db_sqlite.c: after a group
 * commit's sync, once past 1,000 pages): 3,000 commits of 4 KiB documents
 * write some 50 MB of WAL frames; with the checkpoints the WAL file is
 * reused and stays a few MB, without them it holds them all. */
START_TEST(test_wal_checkpointed)
{
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	char name[64], side[1100], *pad = calloc(1, 4097);
	json_t *doc;
	FILE *f;
	long size;

	if (pg_url) {
		free(pad);
		return; /* PostgreSQL checkpoints itself */
	}
	memset(pad, 'x', 4096);
	doc = json_pack("{s:s}", "pad", pad);
	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "projects/p/volumes/v%d", i);
		ck_assert_int_eq(db_put(d, "volume", "projects/p", name, doc, true), AQ_OK);
	}
	snprintf(side, sizeof(side), "%s-wal", db_path);
	ck_assert_ptr_nonnull(f = fopen(side, "rb"));
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	ck_assert_msg(size < 16L << 20, "the WAL holds %ld bytes after 3,000 commits: never checkpointed", size);
	json_decref(doc);
	free(pad);
	db_close(d);
}
END_TEST

/* A child commits from eight threads and acks each commit once db_commit()
 * returned; it is killed with SIGKILL midway (aqt_kill9). Every acked
 * commit is readable at once from another connection, and there after
 * the kill. */
static void gc_kill_child(int ack_fd, void *arg)
{
	struct gc_thread g[GC_THREADS];

	(void)arg;
	gc_all(g, ack_fd);
}

static void gc_kill_ack(const struct aqt_ack *ack, void *arg)
{
	char name[128];
	json_t *doc = NULL;

	/* read back at once: committed is visible to another connection */
	snprintf(name, sizeof(name), "projects/p/volumes/t%d-%d", ack->a, ack->b);
	ck_assert_msg(db_get(arg, name, &doc) == AQ_OK, "acknowledged %s is missing", name);
	json_decref(doc);
}

START_TEST(test_kill9_keeps_acknowledged)
{
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	int64_t n = -1;
	int got;

	/* the schema first, so the child only commits volumes */
	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open: %s", msg.text);
	got = aqt_kill9(gc_kill_child, gc_kill_ack, NULL, GC_THREADS * GC_PER_THREAD / 3, d, NULL);
	db_close(d);
	d = NULL;
	ck_assert_msg(got >= GC_THREADS * GC_PER_THREAD / 3, "only %d commits before the kill", got);
	/* reopened after the kill (recovery from the WAL): the same count or more */
	ck_assert_msg(db_open(db_path, &d, &msg) == AQ_OK, "db_open after kill: %s", msg.text);
	ck_assert_int_eq(db_count(d, "volume", "projects/p", &n), AQ_OK);
	ck_assert_msg(n >= got, "%lld volumes after the kill, %d acknowledged", (long long)n, got);
	db_close(d);
}
END_TEST

static Suite *db_commit_suite(void)
{
	Suite *s = suite_create("db_commit");
	TCase *tc = tcase_create(pg_url ? "postgres" : "sqlite");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_group_commit);
	tcase_add_test(tc, test_autocommit_synced);
	tcase_add_test(tc, test_kill9_keeps_acknowledged);
	tcase_add_test(tc, test_wal_checkpointed);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	pg_url = aqt_db_pg_url();
	return aqt_run(db_commit_suite());
}
