/* srv_http: aquiferd's HTTP plumbing on libmicrohttpd.
 *
 * One MHD thread multiplexes sockets (epoll). When a request's head has
 * arrived it matches the route and verifies the bearer token, and refuses at
 * once (before a byte of body is read) what fails there: no route, no or a
 * bad token, a body the route does not take or one over the 1 MiB cap. Then
 * it collects the body, suspends the connection and queues the request for
 * the worker pool. A worker authorises, parses JSON, runs the handler with
 * its own db connection, renders the answer and resumes the connection; the
 * socket thread then queues the response. No SQLite or disk I/O ever runs
 * on the socket thread.
 *
 * Connections (tls.h, struct tls_listen_limits): a limit in all and per
 * client address; until a request showed a valid token, header-timeout
 * seconds of silence close a connection (idle, half-open, stuck in its TLS
 * handshake), afterwards idle-timeout seconds between keep-alive requests.
 */
#include "server/srv_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_fields.h"
#include "db/db.h"
#include "db/db_cache.h"
#include "server/srv_ca.h"
#include "util/ut_buf.h"
#include "util/ut_clock.h"
#include "server/srv_internal.h"
#include "server/srv_metrics.h"
#include "server/srv_req.h"
#include "server/srv_routes.h"
#include "tls/tls.h"
#include "util/ut_fifo.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

/* The front's own state: the listener, the work queues and their workers.
 * Two lanes: GETs go to their own queue and --read-workers threads
 * (struct srv_lane reads), everything else to --workers threads. A write
 * holds its worker while it waits for the process's writer mutex and the
 * engine's commit (on PostgreSQL a WAL flush per commit); with one lane, a
 * create storm plus the agents' status reports kept every worker waiting
 * so, and a GET queued behind them for seconds (bench/sim: GET volume p99
 * 24 ms idle, 1.45 s during creates). A GET needs no writer mutex. */
struct srv_lane {
	struct srv *srv;
	struct ut_fifo_wq queue;
	bool ready;
	pthread_t *threads;
	int nthreads;  /* threads started */
};

struct srv_http {
	void *mhd;                 /* struct MHD_Daemon * */
	struct srv_lane lanes[2];  /* SRV_LANE_WRITE, SRV_LANE_READ */
	int handed;                /* requests given to a worker, not yet answered (atomic) */
};

/* How long a stop waits for the answers of the requests the workers ran
 * to be sent, before the daemon closes its connections. */
#define SRV_STOP_ANSWER_MS 5000

enum { SRV_LANE_WRITE = 0, SRV_LANE_READ };

enum { REQ_NEW = 0, REQ_BODY, REQ_QUEUED, REQ_DONE };

/* Request ids: a counter per process, in hex; each record a route's handler
 * logs carries its request's id (req=1f). */
static unsigned long long srv_req_seq;

/* Per-connection memory pool of libmicrohttpd (request line, headers,
 * response headers; bodies stream through our own buffers). MHD clears the
 * pool between keep-alive requests, so its size is a per-request cost: 16 KiB
 * holds an 8 KiB URL and a JWT with room to spare (MHD's default is 32 KiB).
 * A request whose head does not fit gets 431 from MHD. */
#define SRV_CONN_POOL (16 * 1024)

static void req_free(struct srv_req *req)
{
	if (!req)
		return;
	for (int i = 0; i < req->nquery; i++) {
		free(req->qkey[i]);
		free(req->qval[i]);
	}
	free(req->url);
	free(req->authz);
	ut_buf_cleanup(&req->body_raw);
	free(req->peer);
	json_decref(req->body);
	free(req->text);
	free(req);
}

/* Render an error as the Google error body (google.rpc.Status, AIP-193):
 * details carry a google.rpc.ErrorInfo (reason, domain) and, for an
 * INVALID_ARGUMENT that names a field, a google.rpc.BadRequest. */
static void req_set_error(struct srv_req *req, int code)
{
	const char *text = req->msg.text[0] ? req->msg.text : aq_err_str(code);
	char field[128];
	json_t *details = json_pack("[{s:s,s:s,s:s}]", "@type", "type.googleapis.com/google.rpc.ErrorInfo", "reason",
				    aq_err_reason(code), "domain", AQ_ERR_DOMAIN);
	json_t *body;

	aq_msg_field(&req->msg, field, sizeof(field));
	if (details && *field && code == AQ_EINVAL)
		json_array_append_new(details, json_pack("{s:s,s:[{s:s,s:s}]}", "@type", "type.googleapis.com/google.rpc.BadRequest",
							 "fieldViolations", "field", field, "description", text));
	body = json_pack("{s:{s:i,s:s,s:s,s:o*}}", "error", "code", aq_err_http(code), "message", text, "status",
			 aq_err_status(code), "details", details);

	free(req->text);
	req->text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	req->text_len = req->text ? strlen(req->text) : 0;
	req->ctype = "application/json";
	req->status = aq_err_http(code);
	json_decref(body);
}

static void req_set_json(struct srv_req *req, json_t *resp)
{
	free(req->text);
	req->text = json_dumps(resp, JSON_COMPACT | JSON_REAL_PRECISION(17));
	if (!req->text) {
		req_set_error(req, AQ_ENOMEM);
		return;
	}
	req->text_len = strlen(req->text);
	req->ctype = "application/json";
	req->status = 200;
}

/* The route's access rule for the caller (project: the first path
 * parameter). */
static int req_authorize(struct srv_req *req)
{
	return srv_auth_route(&req->auth, req->route->access, req->nparams ? req->params[0] : NULL, &req->msg);
}

/* Everything a worker does for one request. */

/* A random pause of up to 2^tries ms, at most 128 ms, before a retry. */
static void tx_backoff(int tries)
{
	static __thread unsigned seed;
	unsigned cap = 1u << (tries < 7 ? tries : 7);
	struct timespec ts;

	if (!seed)
		seed = (unsigned)ut_clock_mono_ns() ^ (unsigned)(uintptr_t)&ts;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(rand_r(&seed) % (cap * 1000u)) * 1000L;
	nanosleep(&ts, NULL);
}

static void req_run(struct srv_req *req)
{
	const struct srv_route *rt = req->route;
	json_t *resp = NULL;
	json_error_t jerr;
	int rc = AQ_OK;

	if (rt->access != SRV_ACCESS_OPEN && !req->authed) {
		if (!req->verified &&
		    (rc = srv_auth_token_verify(req->srv->key, req->authz, &req->auth, &req->msg)) != AQ_OK)
			goto out;
		if ((rc = req_authorize(req)) != AQ_OK)
			goto out;
	}
	if ((rt->flags & SRV_F_NODECERT) && (rc = srv_ca_check_node(req)) != AQ_OK)
		goto out;
	if (ut_buf_len(&req->body_raw) > 0) {
		if (!(rt->flags & SRV_F_BODY)) {
			rc = aq_fail(&req->msg, AQ_EINVAL, "this method takes no request body");
			goto out;
		}
		req->body = json_loadb(ut_buf_str(&req->body_raw), ut_buf_len(&req->body_raw), JSON_REJECT_DUPLICATES, &jerr);
		if (!req->body) {
			rc = aq_fail(&req->msg, AQ_EINVAL, "Invalid JSON payload received: %s (line %d, column %d)",
				     jerr.text, jerr.line, jerr.column);
			goto out;
		}
		if (!json_is_object(req->body)) {
			rc = aq_fail(&req->msg, AQ_EINVAL, "Invalid JSON payload received: the body must be a JSON object");
			goto out;
		}
	}
	/* SQLite's busy handler polls, so under a stream of writes one worker can
	 * lose the write lock for its whole busy timeout, and PostgreSQL may fail
	 * either of two conflicting SERIALIZABLE transactions. A transaction that
	 * found the database busy changed nothing: run the handler again, after
	 * a random pause of up to 2^tries ms (at most 128 ms), so two requests
	 * that keep failing each other do not retry in step. */
	for (int tries = 1;; tries++) {
		rc = rt->handler(req, &resp);
		if (rc != AQ_EBUSY || tries == SRV_TX_RETRIES)
			break;
		db_rollback(req->db);
		tx_backoff(tries);
		json_decref(resp);
		resp = NULL;
		req->msg.text[0] = '\0';
		req->msg.field[0] = '\0';
	}
	if (rc == AQ_OK && resp)
		req_set_json(req, resp);
out:
	if (rc != AQ_OK)
		req_set_error(req, rc);
	else if (!req->text)
		req_set_error(req, AQ_EINTERNAL);
	json_decref(resp);
}

/* A stopping server (srv->stopping, set at SIGTERM): a mutation not run
 * yet is refused with 503 UNAVAILABLE and changes nothing; GETs are still
 * answered while the workers run. True when req was refused. */
static bool req_refused_stopping(struct srv_req *req)
{
	if (!__atomic_load_n(&req->srv->stopping, __ATOMIC_RELAXED) || strcmp(req->method, "GET") == 0 ||
	    strcmp(req->method, "HEAD") == 0)
		return false;
	aq_fail(&req->msg, AQ_EUNAVAIL,
		"aquiferd is stopping: this %s %s was not run and changed nothing; send it again once aquiferd is back "
		"(or to another replica)", req->method, req->url);
	req_set_error(req, AQ_EUNAVAIL);
	return true;
}

static void *srv_worker(void *arg)
{
	struct srv_lane *lane = arg;
	struct srv *srv = lane->srv;
	struct db *db = NULL;
	aq_msg msg = { .text = "" };

	if (db_open(srv->cfg.db_path, &db, &msg) != AQ_OK) {
		UT_ERROR("srv_http", NULL, "worker: %s", msg.text);
		return NULL;
	}
	for (;;) {
		struct ut_fifo_node *n = ut_fifo_wq_pop(&lane->queue);
		struct srv_req *req;

		if (!n)
			break; /* stopped and drained */
		req = UT_FIFO_ENTRY(n, struct srv_req, qnode);

		if (!req_refused_stopping(req)) {
			req->db = db;
			req_run(req);
			db_rollback(db); /* a handler that failed mid-transaction */
			req->db = NULL;
		}
		req->state = REQ_DONE;
		MHD_resume_connection(req->conn);
	}
	db_close(db);
	return NULL;
}


static enum MHD_Result copy_query(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct srv_req *req = cls;

	(void)kind;
	if (req->nquery == SRV_MAX_QUERY)
		return MHD_NO;
	req->qkey[req->nquery] = strdup(key);
	req->qval[req->nquery] = strdup(value ? value : "");
	if (!req->qkey[req->nquery] || !req->qval[req->nquery]) {
		free(req->qkey[req->nquery]);
		free(req->qval[req->nquery]);
		return MHD_NO;
	}
	req->nquery++;
	return MHD_YES;
}

/* hang_up: close the connection after the answer (a body it did not read
 * must not be taken for the next request). */
/* ?fields= (Google's partial response) on a JSON answer: only the members
 * it selects are sent; a selector that does not parse is a 400. */
static void req_apply_fields(struct srv_req *req)
{
	const char *spec = req->route ? srv_query(req, "fields") : NULL;
	json_t *tree = NULL, *doc = NULL, *part = NULL;
	int rc;

	if (!spec || req->status != 200 || !req->text || !req->ctype || strcmp(req->ctype, "application/json") != 0)
		return;
	if ((rc = api_fields_parse(spec, &tree, &req->msg)) != AQ_OK) {
		req_set_error(req, rc);
		return;
	}
	doc = json_loadb(req->text, req->text_len, 0, NULL);
	if (doc && (part = api_fields_apply(tree, doc))) {
		json_decref(doc);
		doc = part;
		req_set_json(req, doc);
	}
	json_decref(doc);
	json_decref(tree);
}

static enum MHD_Result send_answer(struct MHD_Connection *conn, struct srv_req *req, bool hang_up)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	uint64_t ns;

	req_apply_fields(req);

	r = MHD_create_response_from_buffer(req->text_len, req->text, MHD_RESPMEM_MUST_FREE);
	if (!r)
		return MHD_NO;
	req->text = NULL; /* owned by the response now */
	MHD_add_response_header(r, "Content-Type", req->ctype ? req->ctype : "application/json");
	if (req->status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"aquifer\"");
	if (hang_up)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	MHD_add_response_header(r, "X-Request-Id", req->id);
	ret = MHD_queue_response(conn, (unsigned)req->status, r);
	MHD_destroy_response(r);
	ns = ut_clock_mono_ns() - req->start_ns;
	srv_metrics_observe(req->route, req->route_idx, req->status, ns);
	/* one record per answer: debug, or warn for a server-side failure */
	UT_LOG(req->status >= 500 ? UT_LOG_WARN : UT_LOG_DEBUG, "srv_http", req->id, "%s %s %d %.3f ms%s%s", req->method,
	       req->url ? req->url : "", req->status, (double)ns / 1e6, req->status >= 500 ? ": " : "",
	       req->status >= 500 ? req->msg.text : "");
	return ret;
}

/* The lane a queued request goes to: GETs to the read lane when it has
 * workers (--read-workers, default 2), everything else to the write lane. */
static struct srv_lane *srv_lane_for(struct srv_http *http, const struct srv_req *req)
{
	struct srv_lane *reads = &http->lanes[SRV_LANE_READ];

	if (reads->nthreads > 0 && strcmp(req->route->method, "GET") == 0)
		return reads;
	return &http->lanes[SRV_LANE_WRITE];
}

/* The socket thread's fast path for GET of one stored document: checks that
 * need no I/O (token, route rules), then the document cache. AQ_OK when the
 * answer is ready (the document, or an auth error); anything else sends the
 * request on to a worker as usual. */
static int try_cached(struct srv *srv, struct srv_req *req)
{
	char name[900];
	int rc;

	if ((!req->verified && (rc = srv_auth_token_verify(srv->key, req->authz, &req->auth, &req->msg)) != AQ_OK) ||
	    (rc = req_authorize(req)) != AQ_OK) {
		req_set_error(req, rc);
		return AQ_OK;
	}
	req->authed = true;
	if (srv_doc_name(req, name, sizeof(name)) != AQ_OK ||
	    db_cache_lookup(name, &req->text, &req->text_len) != AQ_OK)
		return AQ_ENOENT;
	req->ctype = "application/json";
	req->status = 200;
	return AQ_OK;
}

/* The checks a request's head allows, before any body is read: the token
 * of a route that needs one (so that no client without valid credentials
 * ever has a body buffered), and a body the route does not take or one over
 * the cap, from its Content-Length. A chunked body is checked as it comes.
 * AQ_OK, or the error rendered into req. */
static int check_head(struct srv *srv, struct srv_req *req, struct MHD_Connection *conn)
{
	unsigned long long len;
	int rc = AQ_OK;

	tls_listen_body(conn, &len);
	if (req->route->access != SRV_ACCESS_OPEN) {
		if ((rc = srv_auth_token_verify(srv->key, req->authz, &req->auth, &req->msg)) != AQ_OK)
			goto out;
		req->verified = true;
		tls_listen_trusted(conn, &srv->cfg.http);
	}
	if (len > 0 && !(req->route->flags & SRV_F_BODY))
		rc = aq_fail(&req->msg, AQ_EINVAL, "this method takes no request body");
	else if (len > SRV_ROUTE_BODY_MAX(req->route))
		rc = aq_fail(&req->msg, AQ_ETOOBIG, "request body is larger than %zu bytes", SRV_ROUTE_BODY_MAX(req->route));
out:
	if (rc != AQ_OK)
		req_set_error(req, rc);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct srv *srv = cls;
	struct srv_req *req = *con_cls;
	const char *authz;
	int rc;

	(void)version;
	if (!req) {
		if (!(req = calloc(1, sizeof(*req))))
			return MHD_NO;
		*con_cls = req;
		req->srv = srv;
		req->conn = conn;
		req->start_ns = ut_clock_mono_ns();
		req->route_idx = -1;
		ut_buf_init(&req->body_raw, SRV_BODY_MAX);
		snprintf(req->id, sizeof(req->id), "%llx", __atomic_add_fetch(&srv_req_seq, 1, __ATOMIC_RELAXED));
		snprintf(req->method, sizeof(req->method), "%s", method);
		if (!(req->url = strdup(url)))
			return MHD_NO;
		rc = srv_route_match(method, url, &req->route_idx, req->params, &req->nparams);
		if (rc != AQ_OK) {
			aq_fail(&req->msg, rc, rc == AQ_ENOMETHOD ? "method %s is not allowed on %s"
								 : "no such resource path: %s %s",
				method, url);
			req_set_error(req, rc);
		} else {
			req->route = &srv_routes[req->route_idx];
			ut_buf_init(&req->body_raw, SRV_ROUTE_BODY_MAX(req->route));
			if (MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, copy_query, req) < 0 ||
			    req->nquery == SRV_MAX_QUERY) {
				aq_fail(&req->msg, AQ_EINVAL, "too many query parameters (at most %d)", SRV_MAX_QUERY - 1);
				req_set_error(req, AQ_EINVAL);
			}
			authz = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
			snprintf(req->host, sizeof(req->host), "%s", authz ? authz : srv->cfg.listen);
			authz = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
			if (authz && !(req->authz = strdup(authz)))
				return MHD_NO;
			/* the TLS session belongs to this thread: copy the peer's
			 * certificate now, the worker checks it */
			if ((req->route->flags & SRV_F_NODECERT) && srv_ca_tls(srv) &&
			    tls_mhd_peer_der(conn, &req->peer, &req->peer_len) == AQ_ENOMEM)
				return MHD_NO;
			if (!req->text)
				check_head(srv, req, conn);
		}
		if (req->text) { /* refused from its head: answer before any body */
			unsigned long long len;

			return send_answer(conn, req, tls_listen_body(conn, &len));
		}
		req->state = REQ_BODY;
		return MHD_YES;
	}
	if (req->state == REQ_BODY && *upload_size) {
		size_t n = *upload_size;

		if (!(req->route->flags & SRV_F_BODY))
			return MHD_NO; /* a chunked body the route does not take: hang up */
		if (ut_buf_add(&req->body_raw, upload_data, n) == AQ_ENOMEM)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (req->state == REQ_BODY) {
		if (ut_buf_err(&req->body_raw) == AQ_ETOOBIG) {
			aq_fail(&req->msg, AQ_ETOOBIG, "request body is larger than %zu bytes", SRV_ROUTE_BODY_MAX(req->route));
			req_set_error(req, AQ_ETOOBIG);
			return send_answer(conn, req, false);
		}
		if (req->route->flags & SRV_F_INLINE) {
			json_t *resp = NULL;

			req->route->handler(req, &resp);
			req_set_json(req, resp);
			json_decref(resp);
			return send_answer(conn, req, false);
		}
		if (req->route->doc_name && ut_buf_len(&req->body_raw) == 0 && try_cached(srv, req) == AQ_OK)
			return send_answer(conn, req, false);
		if (req_refused_stopping(req))
			return send_answer(conn, req, false);
		req->state = REQ_QUEUED;
		__atomic_add_fetch(&srv->http->handed, 1, __ATOMIC_RELAXED);
		MHD_suspend_connection(conn);
		if (!ut_fifo_wq_offer(&srv_lane_for(srv->http, req)->queue, &req->qnode)) {
			/* the workers are gone (a stop): answer here */
			aq_fail(&req->msg, AQ_EUNAVAIL, "aquiferd is stopping: this request was not run; send it again "
				"once aquiferd is back (or to another replica)");
			req_set_error(req, AQ_EUNAVAIL);
			req->state = REQ_DONE;
			MHD_resume_connection(conn);
		}
		return MHD_YES;
	}
	if (req->state == REQ_DONE)
		return send_answer(conn, req, false);
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct srv *srv = cls;
	struct srv_req *req = *con_cls;

	(void)conn;
	(void)toe;
	if (req && (req->state == REQ_QUEUED || req->state == REQ_DONE))
		__atomic_sub_fetch(&srv->http->handed, 1, __ATOMIC_RELAXED);
	req_free(*con_cls);
	*con_cls = NULL;
}

/* Start n workers on lane (n 0: a lane without threads, never chosen). */
static int lane_start(struct srv *srv, struct srv_lane *lane, int n, aq_msg *msg)
{
	lane->srv = srv;
	if (n <= 0)
		return AQ_OK;
	if (ut_fifo_wq_init(&lane->queue) != AQ_OK)
		return AQ_ENOMEM;
	lane->ready = true;
	if (!(lane->threads = calloc((size_t)n, sizeof(pthread_t))))
		return AQ_ENOMEM;
	for (; lane->nthreads < n; lane->nthreads++)
		if (pthread_create(&lane->threads[lane->nthreads], NULL, srv_worker, lane) != 0)
			return aq_fail(msg, AQ_EINTERNAL, "cannot start worker threads");
	return AQ_OK;
}

/* Drain the lane's queue and join its workers. */
static void lane_stop(struct srv_lane *lane)
{
	if (lane->ready)
		ut_fifo_wq_stop(&lane->queue);
	for (int i = 0; i < lane->nthreads; i++)
		pthread_join(lane->threads[i], NULL);
	if (lane->ready)
		ut_fifo_wq_cleanup(&lane->queue);
	free(lane->threads);
	lane->threads = NULL;
	lane->nthreads = 0;
	lane->ready = false;
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len)
{
	struct ut_hostport hp;

	if (ut_hostport_parse(listen, 0, UT_HP_PORT0, &hp, NULL) != AQ_OK)
		return AQ_EINVAL;
	return ut_hostport_sockaddr(&hp, ss, len, NULL);
}

int srv_http_start(struct srv *srv, aq_msg *msg)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem limits[TLS_LISTEN_MHD_OPTS];
	int rc;
	/* HTTPS: our pair, and the cluster CA as trust so that GnuTLS asks
	 * for (but does not demand) client certificates; srv_ca checks them */
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key_pem },
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert_pem },
		{ MHD_OPTION_HTTPS_MEM_TRUST, 0, srv->ca ? (void *)(uintptr_t)tls_ca_pem(srv->ca) : NULL },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (parse_listen(srv->cfg.listen, &ss, &sl) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "--listen %s: expected HOST:PORT (IPv4, [IPv6] or localhost)", srv->cfg.listen);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (srv_ca_tls(srv))
		flags |= MHD_USE_TLS;
	/* databases, pushes to agents and logs keep 256 descriptors */
	tls_listen_mhd_options(&srv->cfg.http, srv_ca_tls(srv), 256, "aquiferd", limits);
	if (!(srv->http = calloc(1, sizeof(*srv->http))))
		return AQ_ENOMEM;
	if ((rc = lane_start(srv, &srv->http->lanes[SRV_LANE_WRITE], srv->cfg.workers > 0 ? srv->cfg.workers : 4, msg)) != AQ_OK ||
	    (rc = lane_start(srv, &srv->http->lanes[SRV_LANE_READ], srv->cfg.read_workers, msg)) != AQ_OK)
		return rc;
	srv->http->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv,
				    MHD_OPTION_ARRAY, limits,
				    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				    MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SRV_CONN_POOL,
				    MHD_OPTION_ARRAY, srv_ca_tls(srv) ? tls : &tls[3],
				    MHD_OPTION_END);
	if (!srv->http->mhd)
		return aq_fail(msg, AQ_EIO, "cannot listen on %s (address in use or not available)", srv->cfg.listen);
	return AQ_OK;
}

void srv_http_stop(struct srv *srv)
{
	/* Workers drain the queue and resume their connections before the
	 * daemon goes away: MHD must not be stopped with suspended connections. */
	if (!srv->http)
		return;
	if (srv->http->mhd)
		MHD_quiesce_daemon(srv->http->mhd);
	for (int l = 0; l < 2; l++)
		lane_stop(&srv->http->lanes[l]);
	/* what the workers ran is answered before the connections close: a
	 * committed create's 200 must reach its client (bounded: a client
	 * that does not read its answer does not hold the stop) */
	for (int ms = 0; ms < SRV_STOP_ANSWER_MS && __atomic_load_n(&srv->http->handed, __ATOMIC_RELAXED) > 0; ms += 10)
		usleep(10000);
	if (srv->http->mhd)
		MHD_stop_daemon(srv->http->mhd);
	free(srv->http);
	srv->http = NULL;
}

int srv_http_workers(const struct srv *srv)
{
	return srv->http ? srv->http->lanes[SRV_LANE_WRITE].nthreads : 0;
}

int srv_http_read_workers(const struct srv *srv)
{
	return srv->http ? srv->http->lanes[SRV_LANE_READ].nthreads : 0;
}
