/* db_watch: the PostgreSQL listener that keeps this process's document
 * cache (db_cache.c) valid while other aquiferd replicas write the same
 * database.
 *
 * Schema step 7 makes every write of a resource NOTIFY channel aq_doc with
 * the resource's name; PostgreSQL delivers those to every listening session
 * when the writing transaction commits. One thread per process holds its
 * own connection (application_name "aquiferd-watch-PID"), LISTENs, and removes
 * each name it hears of from the cache. The cache is served only while this
 * thread is connected, listening and has nothing unread (db_cache.h,
 * db_cache_watch_fresh); when the connection is lost (the server restarts,
 * an operator's pg_terminate_backend, a network error) the whole cache is
 * dropped at once and stays off until the thread has connected and
 * listens again (every second it tries). Notifications lost with the
 * connection cannot matter: nothing cached before the loss survives it.
 */
#include "db/db.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db_cache.h"
#include "util/ut_log.h"

#define WATCH_RETRY_MS 1000

/* The process's one listener (the cache it serves is process-wide too). */
static struct {
	pthread_mutex_t mu;  /* start/stop */
	bool running;
	pthread_t thread;
	int stop_pipe[2];    /* written once to stop the thread */
	char *url;
	PGconn *c;           /* the thread's */
	atomic_ulong connects; /* successful LISTENs, for tests and logs */
} watch = { .mu = PTHREAD_MUTEX_INITIALIZER, .stop_pipe = { -1, -1 } };

static int watch_len(const char *s)
{
	size_t n = strcspn(s, "\n");

	return n > 200 ? 200 : (int)n;
}

/* Connect and LISTEN; on success the cache starts a new epoch (anything a
 * reader took a token for before now is refused) and is served again. */
static int watch_connect(void)
{
	static const char *const keys[] = { "dbname", "application_name", "client_encoding", NULL };
	char app[64];
	const char *const vals[] = { watch.url, app, "UTF8", NULL };
	PGresult *res = NULL;
	int rc = AQ_EIO;

	/* operators (and tests) find a replica's listener by its process id */
	snprintf(app, sizeof(app), "aquiferd-watch-%ld", (long)getpid());
	watch.c = PQconnectdbParams(keys, vals, 1);
	if (!watch.c || PQstatus(watch.c) != CONNECTION_OK)
		goto out;
	res = PQexec(watch.c, "LISTEN aq_doc");
	if (PQresultStatus(res) != PGRES_COMMAND_OK || PQsocket(watch.c) < 0)
		goto out;
	db_cache_drop_all();
	db_cache_watch_state(PQsocket(watch.c), true);
	atomic_fetch_add(&watch.connects, 1);
	rc = AQ_OK;
out:
	if (rc != AQ_OK && watch.c) {
		const char *err = PQerrorMessage(watch.c);

		UT_WARN("db_watch", NULL, "cannot listen for cache invalidations (document cache off): %.*s",
			watch_len(err), err);
		PQfinish(watch.c);
		watch.c = NULL;
	}
	PQclear(res);
	return rc;
}

/* Read what the server sent and apply every notification; false when the
 * connection is gone (the cache is then off and empty). */
static bool watch_drain(void)
{
	PGnotify *n;
	bool ok;

	db_cache_watch_busy(true);
	ok = PQconsumeInput(watch.c) == 1;
	while ((n = PQnotifies(watch.c))) {
		db_cache_invalidate(n->extra);
		PQfreemem(n);
	}
	if (!ok || PQstatus(watch.c) != CONNECTION_OK) {
		const char *err = PQerrorMessage(watch.c);

		db_cache_watch_state(-1, false);
		UT_WARN("db_watch", NULL, "lost the cache invalidation listener, cache dropped: %.*s", watch_len(err),
			err);
		PQfinish(watch.c);
		watch.c = NULL;
		ok = false;
	}
	db_cache_watch_busy(false);
	return ok;
}

static void *watch_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p[2] = { { .fd = -1, .events = POLLIN }, { .fd = watch.stop_pipe[0], .events = POLLIN } };

		if (!watch.c && watch_connect() != AQ_OK) {
			if (poll(&p[1], 1, WATCH_RETRY_MS) > 0)
				break;
			continue;
		}
		p[0].fd = PQsocket(watch.c);
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			break;
		if (p[0].revents)
			watch_drain();
	}
	if (watch.c) {
		db_cache_watch_state(-1, false);
		PQfinish(watch.c);
		watch.c = NULL;
	}
	return NULL;
}

int db_watch_start(const char *url, aq_msg *msg)
{
	int rc = AQ_OK;

	if (db_file_path(url))
		return AQ_OK; /* SQLite: one process, commits publish themselves */
	pthread_mutex_lock(&watch.mu);
	if (watch.running)
		goto out;
	if (!(watch.url = strdup(url))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if (pipe(watch.stop_pipe) != 0) {
		rc = aq_fail(msg, AQ_EIO, "db_watch: cannot make a pipe");
		goto out;
	}
	fcntl(watch.stop_pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(watch.stop_pipe[1], F_SETFD, FD_CLOEXEC);
	/* watched before the first lookup: misses until the thread listens */
	db_cache_watch_begin();
	if (pthread_create(&watch.thread, NULL, watch_main, NULL) != 0) {
		rc = aq_fail(msg, AQ_EINTERNAL, "db_watch: cannot start the listener thread");
		goto out;
	}
	watch.running = true;
out:
	if (rc != AQ_OK) {
		free(watch.url);
		watch.url = NULL;
		for (int i = 0; i < 2; i++)
			if (watch.stop_pipe[i] >= 0)
				close(watch.stop_pipe[i]);
		watch.stop_pipe[0] = watch.stop_pipe[1] = -1;
	}
	pthread_mutex_unlock(&watch.mu);
	return rc;
}

void db_watch_stop(void)
{
	pthread_mutex_lock(&watch.mu);
	if (watch.running) {
		if (write(watch.stop_pipe[1], "x", 1) != 1)
			UT_WARN("db_watch", NULL, "cannot signal the listener to stop");
		pthread_join(watch.thread, NULL);
		close(watch.stop_pipe[0]);
		close(watch.stop_pipe[1]);
		watch.stop_pipe[0] = watch.stop_pipe[1] = -1;
		free(watch.url);
		watch.url = NULL;
		watch.running = false;
	}
	pthread_mutex_unlock(&watch.mu);
}

unsigned long db_watch_connects(void)
{
	return atomic_load(&watch.connects);
}
