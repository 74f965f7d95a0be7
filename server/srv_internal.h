/* srv_internal: what the pieces of aquiferd share.
 *
 * A request goes: MHD socket thread (srv_http.c: route match, body cap,
 * suspend) -> worker thread (authenticate, parse JSON, authorise, handler,
 * build the response) -> resume on the socket thread (queue the response).
 * Handlers therefore run off the socket thread and may block on SQLite.
 * Each worker owns one db connection, handed to the handler in req->db.
 */
#ifndef AQ_SRV_INTERNAL_H
#define AQ_SRV_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"
#include "api/api_math.h"
#include "db/db.h"
#include "tls/tls.h"

#define SRV_MAX_PARAMS 6
#define SRV_MAX_QUERY 24
#define SRV_BODY_MAX (1024 * 1024)
#define SRV_KEY_LEN 32

struct srv_cfg {
	char listen[128];
	char db_path[1024];
	char key_file[1024];
	int workers;
	int node_down_ms;          /* a node silent this long is DOWN (default 10 s) */
	int repush_ms;             /* re-push unchanged state this often (default 10 s) */
	char tls_cert[1024];       /* --tls-cert: PEM, serve HTTPS (srv_ca.h) */
	char tls_key[1024];        /* --tls-key */
	bool insecure_listen;      /* plain HTTP on a non-loopback --listen */
	char public_url[512];      /* --public-url: how nodes reach aquiferd ("" until serve derives it) */
	bool metrics_auth;         /* --metrics-auth: GET /metrics needs a metrics or cluster-admin token */
	long node_token_ttl;       /* --node-token-ttl: lifetime of a node token, seconds */
	struct tls_listen_limits http; /* connection limits and timeouts (srv_http.c) */
	struct api_math_params math;
};

/* metrics: reads GET /metrics and nothing else (a Prometheus scraper). */
enum srv_role { SRV_ROLE_NONE = 0, SRV_ROLE_VIEWER, SRV_ROLE_EDITOR, SRV_ROLE_ADMIN, SRV_ROLE_NODE,
		SRV_ROLE_METRICS };

/* Node-role tokens come in two uses (claim "use"): a join token ("join",
 * single-use: its jti is recorded at the join; bound to a location and
 * optionally a node name) and a node token ("node", subject = the node's
 * name, nid = the node's incarnation, which a delete or re-join changes, so
 * older tokens of that name stop working). Tokens of older versions carry
 * no use: see srv_node_token_check. */
#define SRV_USE_JOIN "join"
#define SRV_USE_NODE "node"

struct srv_auth {
	enum srv_role role;
	bool cluster;          /* admin without a project: the cluster admin */
	char project[64];      /* the project the token is for ("" = none) */
	char subject[128];
	char location[64];     /* node tokens: the location the node joins */
	char use[8];           /* node-role tokens: SRV_USE_JOIN or SRV_USE_NODE ("" = older) */
	char node[64];         /* join tokens: the only node name it may join ("" = any) */
	char nid[40];          /* node tokens: the node's incarnation */
	char jti[40];          /* the token's id */
	long iat, exp;         /* issued at, expires (seconds since the epoch) */
};

struct srv;
struct srv_req;
struct srv_route;

/* A handler returns AQ_OK with *resp set (a JSON body, status 200), or AQ_OK
 * with req->text set (a non-JSON body), or an error code with req->msg
 * explaining it; the router builds the Google error body. */
typedef int (*srv_handler)(struct srv_req *req, json_t **resp);

enum srv_route_flag {
	SRV_F_NOAUTH = 1 << 0,     /* no token needed */
	SRV_F_CLUSTER = 1 << 1,    /* cluster admin only */
	SRV_F_READ = 1 << 2,       /* project viewer (param 0 is the project) */
	SRV_F_WRITE = 1 << 3,      /* project editor */
	SRV_F_PADMIN = 1 << 4,     /* project admin */
	SRV_F_NODE = 1 << 5,       /* node token (or cluster admin) */
	SRV_F_BODY = 1 << 6,       /* takes a JSON body (may be empty) */
	SRV_F_ANYAUTH = 1 << 7,    /* any valid token; the handler filters */
	SRV_F_NODECERT = 1 << 8,   /* under TLS: the token's node's client certificate */
};

struct srv_route {
	const char *method;
	const char *path;          /* "*" matches one segment; "*:verb" a custom method */
	srv_handler handler;
	unsigned flags;
	/* GET of one stored document: its name from the path parameters ("*"
	 * replaced in order). Such GETs are answered on the socket thread from
	 * the document cache when it holds the name (no I/O there), else by
	 * the handler on a worker. */
	const char *doc_name;
};

struct srv_req {
	struct srv *srv;
	struct db *db;
	const struct srv_route *route;
	int route_idx;
	void *conn;                 /* struct MHD_Connection * */
	char method[8];
	char *url;
	char params[SRV_MAX_PARAMS][256];
	int nparams;
	char *qkey[SRV_MAX_QUERY];
	char *qval[SRV_MAX_QUERY];
	int nquery;
	char *authz;                /* Authorization header, copied */
	char host[256];             /* Host header, for links the answer gives */
	char *body_raw;
	size_t body_len;
	bool body_too_big;
	json_t *body;               /* parsed body, or NULL */
	struct srv_auth auth;
	aq_msg msg;
	/* the answer */
	int status;
	char *text;                 /* response body (malloc'd) */
	size_t text_len;
	const char *ctype;
	uint64_t start_ns;
	int state;                  /* srv_http.c's request state */
	bool authed;                /* token and route checks already passed */
	bool verified;              /* the token verified from the head (req->auth) */
	unsigned char *peer;        /* SRV_F_NODECERT: the client certificate (DER) */
	size_t peer_len;
	struct srv_req *next;       /* work queue link */
};

/* The stored document name of a doc_name route (see struct srv_route). */
int srv_doc_name(const struct srv_req *req, char *out, size_t cap);
/* Answer the stored document of a doc_name route (a worker-side handler
 * body): the committed text, or NOT_FOUND saying what is missing. */
int srv_doc_answer(struct srv_req *req, const char *what);

/* Query parameter or NULL. */
const char *srv_query(const struct srv_req *req, const char *key);
/* Query parameter "true"/"false" as bool (absent: dflt). Anything else is
 * AQ_EINVAL with a message. */
int srv_query_bool(struct srv_req *req, const char *key, bool dflt, bool *out);

/* The context of a running aquiferd. */
struct srv {
	struct srv_cfg cfg;
	unsigned char key[SRV_KEY_LEN];
	void *mhd;
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct srv_req *qhead, *qtail;
	bool stopping;
	pthread_t *threads;
	int nthreads;
	uint64_t start_ns;
	/* the reconciler (srv_reconcile.c) */
	pthread_t rec_thread;
	pthread_mutex_t rec_lock;
	pthread_cond_t rec_cond;
	bool rec_kick, rec_stop, rec_running;
	json_t *rec_dirty;         /* node names whose intent may have changed */
	bool rec_all_dirty;
	/* node liveness, in memory: status reports every 2 s per node would
	 * otherwise be a durable write each (srv_node.c) */
	pthread_mutex_t live_lock;
	json_t *live;              /* node name -> last report, ms since the epoch */
	int64_t started_ms;
	/* per-volume and per-node time series fed by status reports, in memory
	 * only (srv_series.h) */
	struct srv_series *series;
	/* TLS (srv_ca.h): the cluster CA, the served pair (PEM), the state folder */
	struct tls_ca *ca;
	char *tls_cert_pem, *tls_key_pem;
	char ca_dir[1024];
};

/* srv_node.c: liveness. A node last seen at max(report, aquiferd's start):
 * a restarted aquiferd gives every node a fresh grace period. */
void srv_live_seen(struct srv *srv, const char *node, int64_t ms);
int64_t srv_live_last(struct srv *srv, const char *node);

/* srv_routes.c */
extern const struct srv_route srv_routes[];
extern const int srv_nroutes;
/* Match method+path; *idx the route, params filled. AQ_ENOENT no path,
 * AQ_ENOMETHOD path matches with another method. */
int srv_route_match(const char *method, const char *path, int *idx,
		    char params[][256], int *nparams);

/* srv_auth.c */
int srv_key_load(const char *path, unsigned char key[SRV_KEY_LEN], aq_msg *msg);
/* Derive the key file path from the db path when none is given. */
void srv_key_path(const struct srv_cfg *cfg, char *out, size_t cap);
int srv_token_make(const unsigned char key[SRV_KEY_LEN], const struct srv_auth *who, long ttl,
		   char **token, aq_msg *msg);
int srv_token_verify(const unsigned char key[SRV_KEY_LEN], const char *authz,
		     struct srv_auth *who, aq_msg *msg);
/* Apply the route's flags to the caller; project is params[0] for project routes. */
int srv_authorize(const struct srv_req *req, aq_msg *msg);
/* GET /metrics under --metrics-auth: a cluster-admin or metrics token
 * (verified here, the route itself is open so that metrics_auth = false
 * needs no token). AQ_OK when allowed or when metrics_auth is off. */
int srv_metrics_authorize(struct srv_req *req);
/* Pure checks of node-role tokens (no I/O; tests/server/test_srv_auth.c).
 * A join as node in location loc: the token must be a join token for loc
 * (and name node if it names one). */
int srv_join_check(const struct srv_auth *a, const char *node, const char *loc, aq_msg *msg);
/* A call of node node_doc (its stored document, internal included) with
 * token a: a node token of that node's current incarnation. A token without
 * use (issued before incarnations existed) passes only while the node has
 * none. AQ_EUNAUTH (revoked, join token) with the reason. */
int srv_node_token_check(const struct srv_auth *a, const json_t *node_doc, aq_msg *msg);
/* Whether token a should be replaced now: past half its life, longer-lived
 * than ttl allows, or without an incarnation. */
bool srv_node_token_stale(const struct srv_auth *a, long ttl, long now);
enum srv_role srv_role_parse(const char *s);
const char *srv_role_name(enum srv_role r);

/* srv_metrics.c */
void srv_metrics_observe(int route_idx, int status, uint64_t ns);
void srv_metrics_reconcile(uint64_t ns, int nodes, int pushed, int failed, bool full);
int srv_h_metrics(struct srv_req *req, json_t **resp);

/* srv_http.c */
int srv_http_start(struct srv *srv, aq_msg *msg);
void srv_http_stop(struct srv *srv);
uint64_t srv_now_ns(void);

/* srv_op.c: operations */
/* Create an Operation document for verb on target in parent
 * ("projects/p/locations/l"), store it (inside the caller's transaction) and
 * return it in *op (new reference). done/response/error as given. */
int srv_op_create(struct srv_req *req, const char *parent, const char *target,
		  const char *verb, bool done, const json_t *response, json_t **op);
/* Mark an operation done with a response or an error (code + message). */
int srv_op_finish(struct db *db, const char *op_name, const json_t *response, int err,
		  const char *errmsg);
/* validateOnly answer: a done operation, not stored. */
json_t *srv_op_preview(const char *parent, const char *target, const char *verb,
		       const json_t *response);

/* Handlers (one file per resource). */
int srv_h_openapi(struct srv_req *req, json_t **resp);
int srv_h_docs(struct srv_req *req, json_t **resp);
int srv_h_healthz(struct srv_req *req, json_t **resp);
int srv_h_project_create(struct srv_req *req, json_t **resp);
int srv_h_project_get(struct srv_req *req, json_t **resp);
int srv_h_project_list(struct srv_req *req, json_t **resp);
int srv_h_project_delete(struct srv_req *req, json_t **resp);
int srv_h_location_create(struct srv_req *req, json_t **resp);
int srv_h_location_list_admin(struct srv_req *req, json_t **resp);
int srv_h_location_get_admin(struct srv_req *req, json_t **resp);
int srv_h_location_delete(struct srv_req *req, json_t **resp);
int srv_h_location_patch(struct srv_req *req, json_t **resp);
int srv_h_location_list(struct srv_req *req, json_t **resp);
int srv_h_location_get(struct srv_req *req, json_t **resp);
int srv_h_pool_create(struct srv_req *req, json_t **resp);
int srv_h_pool_get(struct srv_req *req, json_t **resp);
int srv_h_pool_list(struct srv_req *req, json_t **resp);
int srv_h_pool_patch(struct srv_req *req, json_t **resp);
int srv_h_pool_delete(struct srv_req *req, json_t **resp);
int srv_h_volume_create(struct srv_req *req, json_t **resp);
int srv_h_volume_get(struct srv_req *req, json_t **resp);
int srv_h_volume_list(struct srv_req *req, json_t **resp);
int srv_h_volume_patch(struct srv_req *req, json_t **resp);
int srv_h_volume_delete(struct srv_req *req, json_t **resp);
int srv_h_op_get(struct srv_req *req, json_t **resp);
int srv_h_op_list(struct srv_req *req, json_t **resp);
int srv_h_op_cancel(struct srv_req *req, json_t **resp);
int srv_h_op_delete(struct srv_req *req, json_t **resp);
int srv_h_agent_join(struct srv_req *req, json_t **resp);
int srv_h_agent_status(struct srv_req *req, json_t **resp);
int srv_h_node_list(struct srv_req *req, json_t **resp);
int srv_h_node_get(struct srv_req *req, json_t **resp);
int srv_h_node_drain(struct srv_req *req, json_t **resp);
int srv_h_node_undrain(struct srv_req *req, json_t **resp);
int srv_h_node_delete(struct srv_req *req, json_t **resp);
int srv_h_shelf_list(struct srv_req *req, json_t **resp);
int srv_h_shelf_get(struct srv_req *req, json_t **resp);
int srv_h_shelf_create(struct srv_req *req, json_t **resp);
int srv_h_join_token(struct srv_req *req, json_t **resp);
int srv_h_volume_metrics(struct srv_req *req, json_t **resp);
int srv_h_pool_metrics(struct srv_req *req, json_t **resp);
int srv_h_node_metrics(struct srv_req *req, json_t **resp);
int srv_h_ui(struct srv_req *req, json_t **resp);

/* srv_common.c: shared pieces of handlers */
/* Check that project params[0] (and location params[1]) exist. LIST also
 * accepts location "-", meaning every location of the project. */
enum srv_parent_check { SRV_PARENT_PROJECT, SRV_PARENT_LOCATION, SRV_PARENT_LIST };
int srv_check_parent(struct srv_req *req, enum srv_parent_check what);
/* List kind under parent with the request's pageSize/pageToken/filter/orderBy;
 * *items and *next as db_list. */
int srv_list(struct srv_req *req, const char *kind, const char *parent, json_t **items,
	     char **next);
/* Wrap a list page: {plural: items, "nextPageToken"?: next}. Steals items. */
json_t *srv_list_page(const char *plural, json_t *items, const char *next);
/* The input of a create: validateOnly, the ID query parameter idparam, the
 * body checked against table (what names it) and then by check. On success
 * *doc is the normalised body (new reference). */
struct api_field;
typedef int (*srv_check_fn)(const struct api_math_params *p, json_t *doc, aq_msg *msg);
int srv_create_input(struct srv_req *req, const char *idparam, const struct api_field *table,
		     const char *what, srv_check_fn check, const char **id, bool *validate, json_t **doc);
/* The parent collection path "projects/P/locations/L" from params. */
void srv_parent(const struct srv_req *req, char *out, size_t cap);
/* Retry a whole transaction body on AQ_EBUSY. */
#define SRV_TX_RETRIES 5

#endif
