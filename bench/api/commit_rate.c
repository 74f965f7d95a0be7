/* aq-commit-rate: the database engine's own single-row commit rate, the
 * yardstick bench/api/run.sh sets aquiferd's creates/s against.
 *
 *   aq-commit-rate --db FILE [--seconds N]          SQLite
 *   aq-commit-rate --db postgresql://... [--seconds N]
 *   aq-commit-rate --db FILE|URL --via-db THREADS [--seconds N]
 *
 * One connection, one thread: a loop of transactions that each insert one
 * row and commit, for N seconds (default 5). SQLite runs as aquiferd did
 * before group commit and as a lone writer must: WAL with synchronous=FULL,
 * BEGIN IMMEDIATE, an fsync of the WAL per COMMIT. PostgreSQL runs each
 * INSERT as its own transaction with the server's settings (synchronous_commit
 * on: a WAL flush per commit). With --via-db, THREADS threads each open
 * their own connection through Aquifer's db layer (db.h) and commit one
 * volume-sized document per transaction with db_begin/db_put/db_commit:
 * group commit on SQLite, so the figure shows what it gives without the
 * API's work around it. Prints one line:
 *   commits/s=R p50_ms=X p99_ms=Y n=N
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/ut_clock.h"

#define CR_MAX_SAMPLES 1000000

struct cr_run {
	double *lat_ms; /* one per commit */
	long n;
};

static int cr_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cr_sqlite(const char *path, double secs, struct cr_run *r)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *ins = NULL;
	uint64_t t0 = ut_clock_mono_ns(), end = t0 + (uint64_t)(secs * 1e9);
	int rc = 1;

	if (sqlite3_open(path, &h) != SQLITE_OK ||
	    sqlite3_exec(h, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
			    " CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT)", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(h, "INSERT INTO t(v) VALUES ('one row, one commit')", -1, &ins, NULL) != SQLITE_OK) {
		fprintf(stderr, "aq-commit-rate: %s: %s\n", path, h ? sqlite3_errmsg(h) : "out of memory");
		goto out;
	}
	while (r->n < CR_MAX_SAMPLES) {
		uint64_t s = ut_clock_mono_ns();

		if (s >= end)
			break;
		if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_step(ins) != SQLITE_DONE || sqlite3_reset(ins) != SQLITE_OK ||
		    sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			fprintf(stderr, "aq-commit-rate: %s\n", sqlite3_errmsg(h));
			goto out;
		}
		r->lat_ms[r->n++] = (double)(ut_clock_mono_ns() - s) / 1e6;
	}
	rc = 0;
out:
	sqlite3_finalize(ins);
	sqlite3_close(h);
	return rc;
}

static int cr_pg_ok(PGconn *c, PGresult *res)
{
	int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

	if (!ok)
		fprintf(stderr, "aq-commit-rate: %s", PQerrorMessage(c));
	PQclear(res);
	return ok;
}

static int cr_pg(const char *url, double secs, struct cr_run *r)
{
	PGconn *c = PQconnectdb(url);
	uint64_t t0 = ut_clock_mono_ns(), end = t0 + (uint64_t)(secs * 1e9);
	int rc = 1;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "aq-commit-rate: %s", PQerrorMessage(c));
		goto out;
	}
	if (!cr_pg_ok(c, PQexec(c, "SET client_min_messages = warning;"
				   " CREATE TABLE IF NOT EXISTS aq_commit_rate(id bigserial PRIMARY KEY, v text)")))
		goto out;
	while (r->n < CR_MAX_SAMPLES) {
		uint64_t s = ut_clock_mono_ns();

		if (s >= end)
			break;
		if (!cr_pg_ok(c, PQexec(c, "INSERT INTO aq_commit_rate(v) VALUES ('one row, one commit')")))
			goto out;
		r->lat_ms[r->n++] = (double)(ut_clock_mono_ns() - s) / 1e6;
	}
	rc = 0;
out:
	PQfinish(c);
	return rc;
}

/* --via-db: one thread of commits through db.h */
struct cr_thread {
	pthread_t th;
	const char *url;
	int id;
	uint64_t end;
	struct cr_run r;
	int rc;
};

static void *cr_db_thread(void *arg)
{
	struct cr_thread *t = arg;
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	json_t *doc = json_pack("{s:s,s:s,s:s,s:[s]}", "shareName", "bench", "storagePool", "pool1", "capacityGib", "100",
				"protocols", "NFSV3");
	char name[128];

	if (!doc || (t->rc = db_open(t->url, &d, &msg)) != AQ_OK) {
		fprintf(stderr, "aq-commit-rate: %s\n", msg.text);
		t->rc = 1;
		goto out;
	}
	for (long i = 0; t->r.n < CR_MAX_SAMPLES / 64; i++) {
		uint64_t s = ut_clock_mono_ns();

		if (s >= t->end)
			break;
		snprintf(name, sizeof(name), "projects/b/locations/l/volumes/t%d-%ld-%llu", t->id, i,
			 (unsigned long long)s);
		if ((t->rc = db_begin(d)) != AQ_OK ||
		    (t->rc = db_put(d, "volume", "projects/b/locations/l", name, doc, true)) != AQ_OK ||
		    (t->rc = db_commit(d)) != AQ_OK) {
			fprintf(stderr, "aq-commit-rate: commit: %s\n", aq_err_str(t->rc));
			goto out;
		}
		t->r.lat_ms[t->r.n++] = (double)(ut_clock_mono_ns() - s) / 1e6;
	}
	t->rc = 0;
out:
	db_close(d);
	json_decref(doc);
	return NULL;
}

/* THREADS threads through db.h; all latencies gathered into r */
static int cr_via_db(const char *url, int threads, double secs, struct cr_run *r, double *wall_s)
{
	struct cr_thread *t = calloc((size_t)threads, sizeof(*t));
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	uint64_t t0;
	int rc = 0;

	if (!t)
		return 1;
	if (db_open(url, &d, &msg) != AQ_OK) { /* migrate once, before the clock */
		fprintf(stderr, "aq-commit-rate: %s\n", msg.text);
		free(t);
		return 1;
	}
	db_close(d);
	t0 = ut_clock_mono_ns();
	for (int i = 0; i < threads; i++) {
		t[i] = (struct cr_thread){ .url = url, .id = i, .end = t0 + (uint64_t)(secs * 1e9) };
		t[i].r.lat_ms = r->lat_ms + (size_t)i * (CR_MAX_SAMPLES / 64);
		pthread_create(&t[i].th, NULL, cr_db_thread, &t[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i].th, NULL);
	*wall_s = (double)(ut_clock_mono_ns() - t0) / 1e9;
	for (int i = 0; i < threads; i++) { /* pack the samples */
		memmove(r->lat_ms + r->n, t[i].r.lat_ms, (size_t)t[i].r.n * sizeof(double));
		r->n += t[i].r.n;
		rc |= t[i].rc;
	}
	free(t);
	return rc;
}

int main(int argc, char **argv)
{
	const char *db = NULL;
	double secs = 5, total = 0, wall = 0;
	struct cr_run r = { 0 };
	int rc, threads = 0;
	struct db_sync_stats st;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--db") == 0)
			db = argv[i + 1];
		else if (strcmp(argv[i], "--seconds") == 0)
			secs = strtod(argv[i + 1], NULL);
		else if (strcmp(argv[i], "--via-db") == 0)
			threads = (int)strtol(argv[i + 1], NULL, 10);
	}
	if (!db || secs <= 0 || secs > 600 || threads < 0 || threads > 64) {
		fprintf(stderr, "usage: aq-commit-rate --db FILE|postgresql://... [--seconds 0<N<=600] [--via-db 1..64]\n");
		return 2;
	}
	if (!(r.lat_ms = calloc(CR_MAX_SAMPLES, sizeof(double))))
		return 1;
	if (threads > 0)
		rc = cr_via_db(db, threads, secs, &r, &wall);
	else
		rc = strncmp(db, "postgres", 8) == 0 ? cr_pg(db, secs, &r) : cr_sqlite(db, secs, &r);
	if (rc == 0 && r.n > 0) {
		for (long i = 0; i < r.n; i++)
			total += r.lat_ms[i];
		qsort(r.lat_ms, (size_t)r.n, sizeof(double), cr_cmp);
		/* one connection: commits over the time spent committing; threads: over the wall clock */
		printf("commits/s=%.1f p50_ms=%.3f p99_ms=%.3f n=%ld", threads ? (double)r.n / wall : (double)r.n / (total / 1000.0),
		       r.lat_ms[r.n / 2], r.lat_ms[(r.n * 99) / 100], r.n);
		if (threads) {
			db_sync_stats(&st);
			printf(" threads=%d fsyncs=%llu", threads, (unsigned long long)st.syncs);
		}
		printf("\n");
	}
	free(r.lat_ms);
	return rc;
}
