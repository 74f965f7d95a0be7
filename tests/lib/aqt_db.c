/* aqt_db: a fresh database for the db suites (aqt_db.h). */
#include "tests/lib/aqt_db.h"

#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "db/db.h"

void aqt_db_pg_exec(const char *pg_url, const char *sql)
{
	PGconn *c = PQconnectdb(pg_url);
	PGresult *res;

	ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
	PQclear(PQexec(c, "SET client_min_messages = warning"));
	res = PQexec(c, sql);
	ck_assert_msg(PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s",
		      sql, PQresultErrorMessage(res));
	PQclear(res);
	PQfinish(c);
}

const char *aqt_db_pg_url(void)
{
	const char *url = getenv("AQ_TEST_PG_URL");

	return url && *url ? url : NULL;
}

void aqt_db_fresh(const char *pg_url, const char *tag, char *path, size_t cap)
{
	if (pg_url) {
		aqt_db_pg_exec(pg_url, "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
		snprintf(path, cap, "%s", pg_url);
	} else {
		int fd;

		snprintf(path, cap, "/tmp/aq-test-%s-XXXXXX", tag);
		fd = mkstemp(path);
		ck_assert_int_ge(fd, 0);
		close(fd);
		unlink(path);
	}
}

void aqt_db_open(const char *pg_url, const char *tag, char *path, size_t cap, struct db **db)
{
	aq_msg msg = { .text = { 0 } };

	aqt_db_fresh(pg_url, tag, path, cap);
	ck_assert_msg(db_open(path, db, &msg) == AQ_OK, "db_open: %s", msg.text);
}

void aqt_db_close(const char *pg_url, const char *path, struct db *db)
{
	db_close(db);
	aqt_db_remove(pg_url, path);
}

void aqt_db_remove(const char *pg_url, const char *path)
{
	char side[1100];

	if (pg_url)
		return;
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}
