/* srv_routes: the route table of aquiferd. Every route the server serves is
 * one row here: method, path template ("*" = one segment, "*:verb" = a custom
 * method on a resource), handler and the checks the router runs first. The
 * CLI's command table and openapi/openapi.yaml are tested against this list
 * (`aquiferd routes`). */
#include "server/srv_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PL "/v1/projects/*/locations/*"

const struct srv_route srv_routes[] = {
	{ "GET", "/healthz", srv_h_healthz, SRV_F_NOAUTH, NULL },
	{ "GET", "/metrics", srv_h_metrics, SRV_F_NOAUTH, NULL },
	{ "GET", "/v1/openapi.yaml", srv_h_openapi, SRV_F_NOAUTH, NULL },
	{ "GET", "/docs/", srv_h_docs, SRV_F_NOAUTH, NULL },
	{ "GET", "/ui/", srv_h_ui, SRV_F_NOAUTH, NULL },
	{ "GET", "/ui/*", srv_h_ui, SRV_F_NOAUTH, NULL },

	{ "POST", "/v1/projects", srv_h_project_create, SRV_F_CLUSTER | SRV_F_BODY, NULL },
	{ "GET", "/v1/projects", srv_h_project_list, SRV_F_ANYAUTH, NULL },
	{ "GET", "/v1/projects/*", srv_h_project_get, SRV_F_READ, "projects/*" },
	{ "DELETE", "/v1/projects/*", srv_h_project_delete, SRV_F_CLUSTER, NULL },

	{ "POST", "/v1/locations", srv_h_location_create, SRV_F_CLUSTER | SRV_F_BODY, NULL },
	{ "GET", "/v1/locations", srv_h_location_list_admin, SRV_F_CLUSTER, NULL },
	{ "GET", "/v1/locations/*", srv_h_location_get_admin, SRV_F_CLUSTER, NULL },
	{ "PATCH", "/v1/locations/*", srv_h_location_patch, SRV_F_CLUSTER | SRV_F_BODY, NULL },
	{ "DELETE", "/v1/locations/*", srv_h_location_delete, SRV_F_CLUSTER, NULL },
	{ "GET", "/v1/projects/*/locations", srv_h_location_list, SRV_F_READ, NULL },
	{ "GET", PL, srv_h_location_get, SRV_F_READ, NULL },

	{ "POST", PL "/storagePools", srv_h_pool_create, SRV_F_WRITE | SRV_F_BODY, NULL },
	{ "GET", PL "/storagePools", srv_h_pool_list, SRV_F_READ, NULL },
	{ "GET", PL "/storagePools/*", srv_h_pool_get, SRV_F_READ, NULL },
	{ "PATCH", PL "/storagePools/*", srv_h_pool_patch, SRV_F_WRITE | SRV_F_BODY, NULL },
	{ "DELETE", PL "/storagePools/*", srv_h_pool_delete, SRV_F_WRITE, NULL },
	{ "GET", PL "/storagePools/*/metrics", srv_h_pool_metrics, SRV_F_READ, NULL },

	{ "POST", PL "/volumes", srv_h_volume_create, SRV_F_WRITE | SRV_F_BODY, NULL },
	{ "GET", PL "/volumes", srv_h_volume_list, SRV_F_READ, NULL },
	{ "GET", PL "/volumes/*", srv_h_volume_get, SRV_F_READ, "projects/*/locations/*/volumes/*" },
	{ "PATCH", PL "/volumes/*", srv_h_volume_patch, SRV_F_WRITE | SRV_F_BODY, NULL },
	{ "DELETE", PL "/volumes/*", srv_h_volume_delete, SRV_F_WRITE, NULL },
	{ "GET", PL "/volumes/*/metrics", srv_h_volume_metrics, SRV_F_READ, NULL },

	{ "GET", "/v1/nodes", srv_h_node_list, SRV_F_CLUSTER, NULL },
	{ "GET", "/v1/nodes/*", srv_h_node_get, SRV_F_CLUSTER, NULL },
	{ "POST", "/v1/nodes/*:drain", srv_h_node_drain, SRV_F_CLUSTER | SRV_F_BODY, NULL },
	{ "POST", "/v1/nodes/*:undrain", srv_h_node_undrain, SRV_F_CLUSTER | SRV_F_BODY, NULL },
	{ "DELETE", "/v1/nodes/*", srv_h_node_delete, SRV_F_CLUSTER, NULL },
	{ "GET", "/v1/nodes/*/metrics", srv_h_node_metrics, SRV_F_CLUSTER, NULL },
	{ "POST", "/v1/shelves", srv_h_shelf_create, SRV_F_CLUSTER | SRV_F_BODY, NULL },
	{ "GET", "/v1/shelves", srv_h_shelf_list, SRV_F_CLUSTER, NULL },
	{ "GET", "/v1/shelves/*", srv_h_shelf_get, SRV_F_CLUSTER, NULL },
	{ "POST", "/v1/locations/*:joinToken", srv_h_join_token, SRV_F_CLUSTER | SRV_F_BODY, NULL },
	{ "POST", "/v1/agent/join", srv_h_agent_join, SRV_F_NODE | SRV_F_BODY, NULL },
	{ "POST", "/v1/agent/status", srv_h_agent_status, SRV_F_NODE | SRV_F_BODY | SRV_F_NODECERT, NULL },

	{ "GET", PL "/operations", srv_h_op_list, SRV_F_READ, NULL },
	{ "GET", PL "/operations/*", srv_h_op_get, SRV_F_READ, "projects/*/locations/*/operations/*" },
	{ "DELETE", PL "/operations/*", srv_h_op_delete, SRV_F_WRITE, NULL },
	{ "POST", PL "/operations/*:cancel", srv_h_op_cancel, SRV_F_WRITE | SRV_F_BODY, NULL },
};

const int srv_nroutes = (int)(sizeof(srv_routes) / sizeof(srv_routes[0]));

/* Does segment seg (length n) match template segment t? */
static bool seg_match(const char *t, size_t tn, const char *seg, size_t n, char *param)
{
	const char *verb;

	if (n == 0)
		return tn == 0; /* a trailing "/" matches only a trailing "/" */
	if (tn == 1 && t[0] == '*') {
		if (memchr(seg, ':', n) || n >= 256)
			return false;
		memcpy(param, seg, n);
		param[n] = '\0';
		return true;
	}
	if (t[0] == '*' && t[1] == ':') {
		verb = t + 1;
		size_t vn = tn - 1;

		if (n <= vn || n - vn >= 256 || memcmp(seg + n - vn, verb, vn) != 0 ||
		    memchr(seg, ':', n - vn))
			return false;
		memcpy(param, seg, n - vn);
		param[n - vn] = '\0';
		return true;
	}
	return tn == n && memcmp(t, seg, n) == 0;
}

/* A path split at '/': "/a/b/" -> "a", "b", "" (an empty segment matches
 * only an empty template segment). Templates are split once, at the first
 * match; a request path once per request, so each route costs a segment
 * count compare and, for the few with the same count, memcmps. */
#define SRV_MAX_SEGS 16

struct seg_list {
	int n;                  /* -1: not a path (no leading '/', too many segments) */
	const char *p[SRV_MAX_SEGS];
	size_t len[SRV_MAX_SEGS];
};

static void seg_split(const char *s, struct seg_list *out)
{
	out->n = 0;
	if (*s != '/') {
		out->n = -1;
		return;
	}
	while (*s == '/') {
		size_t n = 0;

		s++;
		while (s[n] && s[n] != '/')
			n++;
		if (out->n == SRV_MAX_SEGS) {
			out->n = -1;
			return;
		}
		out->p[out->n] = s;
		out->len[out->n++] = n;
		s += n;
	}
	if (*s)
		out->n = -1;
}

static struct seg_list *route_segs;
static pthread_once_t route_segs_once = PTHREAD_ONCE_INIT;

static void route_segs_init(void)
{
	route_segs = calloc((size_t)srv_nroutes, sizeof(*route_segs));
	for (int i = 0; route_segs && i < srv_nroutes; i++)
		seg_split(srv_routes[i].path, &route_segs[i]);
}

static bool path_match(const struct seg_list *t, const struct seg_list *path, char params[][256],
		       int *nparams)
{
	int np = 0;

	if (t->n < 0 || t->n != path->n)
		return false;
	for (int i = 0; i < t->n; i++) {
		char *param = NULL;

		if (t->len[i] && t->p[i][0] == '*') {
			if (np == SRV_MAX_PARAMS)
				return false;
			param = params[np++];
		}
		if (!seg_match(t->p[i], t->len[i], path->p[i], path->len[i], param))
			return false;
	}
	*nparams = np;
	return true;
}

int srv_doc_name(const struct srv_req *req, char *out, size_t cap)
{
	const char *t = req->route->doc_name;
	size_t off = 0;
	int p = 0;

	for (; t && *t && off + 1 < cap; t++) {
		if (*t != '*') {
			out[off++] = *t;
			continue;
		}
		if (p >= req->nparams)
			return AQ_EINTERNAL;
		for (const char *v = req->params[p++]; *v && off + 1 < cap; v++)
			out[off++] = *v;
	}
	out[off] = '\0';
	return t && *t ? AQ_EINVAL : AQ_OK;
}

int srv_route_match(const char *method, const char *path, int *idx, char params[][256],
		    int *nparams)
{
	struct seg_list segs;
	bool path_seen = false;

	pthread_once(&route_segs_once, route_segs_init);
	if (!route_segs)
		return AQ_ENOMEM;
	seg_split(path, &segs);
	for (int i = 0; i < srv_nroutes; i++) {
		if (!path_match(&route_segs[i], &segs, params, nparams))
			continue;
		if (strcmp(srv_routes[i].method, method) == 0) {
			*idx = i;
			return AQ_OK;
		}
		path_seen = true;
	}
	return path_seen ? AQ_ENOMETHOD : AQ_ENOENT;
}
