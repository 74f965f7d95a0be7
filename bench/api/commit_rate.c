/* aq-commit-rate: the database engine's own single-row commit rate, the
 * yardstick bench/api/run.sh sets aquiferd's creates/s against.
 *
 *   aq-commit-rate --db FILE [--seconds N]          SQLite
 *   aq-commit-rate --db postgresql://... [--seconds N]
 *
 * One connection, one thread: a loop of transactions that each insert one
 * row and commit, for N seconds (default 5). SQLite runs as aquiferd did
 * before group commit and as a lone writer must: WAL with synchronous=FULL,
 * BEGIN IMMEDIATE, an fsync of the WAL per COMMIT. PostgreSQL runs each
 * INSERT as its own transaction with the server's settings (synchronous_commit
 * on: a WAL flush per commit). Prints one line:
 *   commits/s=R p50_ms=X p99_ms=Y n=N
 */
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
	const char *db = NULL;
	double secs = 5, total = 0;
	struct cr_run r = { 0 };
	int rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--db") == 0)
			db = argv[i + 1];
		else if (strcmp(argv[i], "--seconds") == 0)
			secs = strtod(argv[i + 1], NULL);
	}
	if (!db || secs <= 0 || secs > 600) {
		fprintf(stderr, "usage: aq-commit-rate --db FILE|postgresql://... [--seconds 0<N<=600]\n");
		return 2;
	}
	if (!(r.lat_ms = calloc(CR_MAX_SAMPLES, sizeof(double))))
		return 1;
	rc = strncmp(db, "postgres", 8) == 0 ? cr_pg(db, secs, &r) : cr_sqlite(db, secs, &r);
	if (rc == 0 && r.n > 0) {
		for (long i = 0; i < r.n; i++)
			total += r.lat_ms[i];
		qsort(r.lat_ms, (size_t)r.n, sizeof(double), cr_cmp);
		printf("commits/s=%.1f p50_ms=%.3f p99_ms=%.3f n=%ld\n", (double)r.n / (total / 1000.0),
		       r.lat_ms[r.n / 2], r.lat_ms[(r.n * 99) / 100], r.n);
	}
	free(r.lat_ms);
	return rc;
}
