/* aqt_db: a fresh database for the db suites (aqt_db.h). */
#include "tests/lib/aqt_db.h"

#include <check.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
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

bool aqt_kill9_ack(int ack_fd, int a, int b)
{
	struct aqt_ack ack = { .a = a, .b = b };

	return write(ack_fd, &ack, sizeof(ack)) == (ssize_t)sizeof(ack);
}

int aqt_kill9(aqt_kill9_child_fn child, aqt_kill9_ack_fn ack, aqt_kill9_when_fn kill_now, int kill_after, void *arg,
	      bool *killed)
{
	struct aqt_ack rec;
	int pfd[2], got = 0, status = 0;
	bool sent = false;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		child(pfd[1], arg);
		_exit(0);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int r = poll(&p, 1, 5);

		if (r > 0) {
			if (read(pfd[0], &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
				break; /* the child is gone */
			got++;
			if (ack)
				ack(&rec, arg);
		}
		if (!sent && (kill_now ? kill_now(got, arg) : got >= kill_after)) {
			/* killed (-9) unless it had exited already */
			sent = kill(pid, SIGKILL) == 0;
		}
	}
	close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (killed)
		*killed = sent && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	return got;
}
