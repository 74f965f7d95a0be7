/* srv_http: the HTTP front (libmicrohttpd, TLS through tls/): one socket
 * thread matches the route, verifies the token from the head, caps the
 * body and suspends the connection; the request goes to a queue served by
 * --workers threads (GETs: their own queue and --read-workers threads),
 * each with its own db connection, which run the
 * route's checks and handler; the answer resumes on the socket thread.
 * Stored-document GETs are answered on the socket thread from the db's
 * document cache when it holds them. The queue and the threads are this
 * module's (struct srv_http, private). */
#ifndef AQ_SRV_HTTP_H
#define AQ_SRV_HTTP_H

#include "api/api_error.h"

struct srv;

/* Listen on srv->cfg.listen and start the workers. */
int srv_http_start(struct srv *srv, aq_msg *msg);
/* Stop listening, drain the queue, join the workers, and wait (at most
 * 5 s) until what they ran is answered, so that a committed write's answer
 * reaches its client before the connections close. Once srv->stopping is
 * set (SIGTERM, srv_main.c), a mutation (not GET/HEAD) that has not
 * started, queued or newly arrived on a kept-alive connection, is
 * answered 503 UNAVAILABLE and changes nothing. */
void srv_http_stop(struct srv *srv);
/* How many worker threads run (0 before start): the write lane's
 * (--workers), which serves everything but GETs, and the read lane's
 * (--read-workers), which serves GETs so that they never queue behind
 * writes waiting for the writer mutex or a commit (0: GETs share the
 * write lane). */
int srv_http_workers(const struct srv *srv);
int srv_http_read_workers(const struct srv *srv);

#endif
