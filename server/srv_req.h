/* srv_req: one HTTP request as handlers see it, the route it matched, and
 * the accessors every handler shares: query parameters, the stored
 * document of a GET, the parent a path names, list paging and the input of
 * a create.
 *
 * A request goes: MHD socket thread (srv_http.c: route match, token, body
 * cap, suspend) -> worker thread (route check, JSON parse, handler, answer)
 * -> resume on the socket thread. Handlers therefore run off the socket
 * thread and may block on SQLite; each worker owns one db connection,
 * handed to the handler in req->db. A request belongs to one thread at a
 * time; nothing here locks.
 */
#ifndef AQ_SRV_REQ_H
#define AQ_SRV_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"
#include "api/api_math.h"
#include "server/srv_auth.h"
#include "util/ut_buf.h"
#include "util/ut_fifo.h"

#define SRV_MAX_PARAMS 6
#define SRV_MAX_QUERY 24
#define SRV_BODY_MAX (1024 * 1024)
/* Retry a whole transaction body on AQ_EBUSY, after a random pause that
 * doubles with each try (srv_http.c). */
#define SRV_TX_RETRIES 8

struct db;
struct srv;
struct srv_req;

/* A handler returns AQ_OK with *resp set (a JSON body, status 200), or AQ_OK
 * with req->text set (a non-JSON body), or an error code with req->msg
 * explaining it; the router builds the Google error body. */
typedef int (*srv_handler)(struct srv_req *req, json_t **resp);

enum srv_route_flag {
	SRV_F_BODY = 1 << 0,       /* takes a JSON body (may be empty) */
	SRV_F_NODECERT = 1 << 1,   /* under TLS: the token's node's client certificate */
	SRV_F_INLINE = 1 << 2,     /* answered on the socket thread: no token, no I/O */
};

/* One row of the route table (srv_routes.c): the router checks .access
 * and .flags before the handler runs, so handlers assume them. */
struct srv_route {
	const char *method;
	const char *path;          /* "*" matches one segment; "*:verb" a custom method */
	srv_handler handler;
	enum srv_access access;    /* who may call it (srv_auth.h) */
	unsigned flags;            /* enum srv_route_flag */
	/* GET of one stored document: its name from the path parameters ("*"
	 * replaced in order). Such GETs are answered on the socket thread from
	 * the document cache when it holds the name (no I/O there), else by
	 * the handler on a worker. */
	const char *doc_name;
	/* the largest body it takes; 0: SRV_BODY_MAX */
	size_t body_max;
};

/* The largest body route rt takes. */
#define SRV_ROUTE_BODY_MAX(rt) ((rt)->body_max ? (rt)->body_max : (size_t)SRV_BODY_MAX)

struct srv_req {
	struct srv *srv;
	struct db *db;
	const struct srv_route *route;
	int route_idx;
	void *conn;                 /* struct MHD_Connection * */
	char method[8];
	char id[20];                /* the request id of its log records (srv_http.c) */
	char *url;
	char params[SRV_MAX_PARAMS][256];
	int nparams;
	char *qkey[SRV_MAX_QUERY];
	char *qval[SRV_MAX_QUERY];
	int nquery;
	char *authz;                /* Authorization header, copied */
	char host[256];             /* Host header, for links the answer gives */
	struct ut_buf body_raw;     /* the body as it came, capped at SRV_BODY_MAX */
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
	struct ut_fifo_node qnode;  /* work queue link */
};

/* Query parameter or NULL. */
const char *srv_query(const struct srv_req *req, const char *key);
/* Query parameter "true"/"false" as bool (absent: dflt). Anything else is
 * AQ_EINVAL with a message. */
int srv_query_bool(struct srv_req *req, const char *key, bool dflt, bool *out);

/* The stored document name of a doc_name route (see struct srv_route). */
int srv_doc_name(const struct srv_req *req, char *out, size_t cap);
/* Answer the stored document of a doc_name route (a worker-side handler
 * body): the committed text, or NOT_FOUND saying what is missing. */
int srv_doc_answer(struct srv_req *req, const char *what);

/* The parent collection path "projects/P/locations/L" from params. */
void srv_parent(const struct srv_req *req, char *out, size_t cap);
/* The resource of the request's location its third path parameter names:
 * name (cap bytes) "<srv_parent>/<collection>/<params[2]>", *doc its
 * document (new reference); AQ_ENOENT says "<what> \"<name>\" not found". */
int srv_load(struct srv_req *req, const char *collection, const char *what, char *name, size_t cap, json_t **doc);
/* Check that project params[0] (and location params[1]) exist. LIST also
 * accepts location "-", meaning every location of the project. */
enum srv_parent_check { SRV_PARENT_PROJECT, SRV_PARENT_LOCATION, SRV_PARENT_LIST };
int srv_check_parent(struct srv_req *req, enum srv_parent_check what);
/* The same check (SRV_PARENT_LOCATION) from documents read with others in
 * one db_get_many: srv_check_parent_names appends the parent's names to
 * names; srv_check_parent_in answers from docs ({name: doc} of those that
 * exist) as srv_check_parent would. */
int srv_check_parent_names(const struct srv_req *req, json_t *names);
int srv_check_parent_in(struct srv_req *req, const json_t *docs);

/* List kind under parent with the request's pageSize/pageToken/filter/orderBy;
 * *items and *next as db_list. */
int srv_list(struct srv_req *req, const char *kind, const char *parent, json_t **items, char **next);
/* The cluster admin's lists (nodes, shelves): kind under every location,
 * with the request's pageSize, pageToken and filter. */
int srv_list_cluster(struct srv_req *req, const char *kind, json_t **items, char **next);
/* Wrap a list page: {plural: items, "nextPageToken"?: next}. Steals items. */
json_t *srv_list_page(const char *plural, json_t *items, const char *next);
/* A list handler's whole answer: the parent (srv_check_parent LIST)
 * checked, one page of kind under it (srv_list) as {plural: [...],
 * "nextPageToken"?}. */
int srv_list_answer(struct srv_req *req, const char *kind, const char *plural, json_t **resp);

/* The input of a create under a location: validateOnly, the ID query
 * parameter idparam, the body checked against table (what names it) and
 * then by check. On success *doc is the normalised body (new reference). */
struct api_field;
typedef int (*srv_check_fn)(const struct api_math_params *p, json_t *doc, aq_msg *msg);
int srv_create_input(struct srv_req *req, const char *idparam, const struct api_field *table,
		     const char *what, srv_check_fn check, const char **id, bool *validate, json_t **doc);
/* Begin a transaction and store doc, a new resource of kind under parent
 * with doc's "name"; AQ_EEXIST says "<what> \"<id>\" already exists". The
 * transaction stays open for the caller to add to and commit (db_rollback
 * when the caller gives up). */
int srv_create_put(struct srv_req *req, const char *kind, const char *parent, const json_t *doc, const char *what,
		   const char *id);
/* Store doc, a new resource of kind under parent named name, in the caller's
 * transaction; AQ_EEXIST says "<what> \"<id>\" already exists". */
int srv_put_new(struct srv_req *req, const char *kind, const char *parent, const char *name, const json_t *doc,
		const char *what, const char *id);
/* The name of a new resource of the request's location: parent (srv_parent)
 * and name ("<parent>/<collection>/<id>"), each of 600 and 700 bytes; doc
 * gets that name, state READY and createTime (now). */
void srv_create_name(const struct srv_req *req, const char *collection, const char *id, json_t *doc,
		     char parent[600], char name[700]);
/* The input of a PATCH: validateOnly, the updateMask query parameter parsed
 * against table into paths[API_MASK_MAX] (*npaths of them), and the body,
 * which must be there (type names it in the error: "Volume") and is checked
 * against table (what names it: "volume"). On success *patch is the
 * normalised body (new reference). */
struct api_mask_path;
int srv_patch_input(struct srv_req *req, const struct api_field *table, const char *type, const char *what,
		    bool *validate, struct api_mask_path *paths, int *npaths, json_t **patch);
/* The input of a create of a top-level resource (project, location): as
 * srv_create_input without a check, an absent body taken as {}; *doc gets
 * name (prefix/ID), idfield (the ID) and createTime. */
int srv_create_top_input(struct srv_req *req, const char *idparam, const struct api_field *table,
			 const char *what, const char *prefix, const char *idfield, const char **id,
			 bool *validate, json_t **doc);

#endif
