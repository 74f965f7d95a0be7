/* srv_routes: the route table of aquiferd. Every route the server serves is
 * one row here: method, path template ("*" = one segment, "*:verb" = a custom
 * method on a resource), handler and the checks the router runs first. The
 * CLI's command table and openapi/openapi.yaml are tested against this list
 * (`aquiferd routes`). */
#include "server/srv_routes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
#include "server/srv_agent.h"
#include "server/srv_backup.h"
#include "server/srv_bpolicy.h"
#include "server/srv_bvault.h"
#include "server/srv_docs.h"
#include "server/srv_drain.h"
#include "server/srv_health.h"
#include "server/srv_join.h"
#include "server/srv_location.h"
#include "server/srv_metrics.h"
#include "server/srv_node.h"
#include "server/srv_operation.h"
#include "server/srv_pool.h"
#include "server/srv_project.h"
#include "server/srv_shelf.h"
#include "server/srv_snapshot.h"
#include "server/srv_smbuser.h"
#include "server/srv_usage.h"
#include "server/srv_volume.h"

#define PL "/v1/projects/*/locations/*"

const struct srv_route srv_routes[] = {
	{ .method = "GET", .path = "/healthz", .handler = srv_h_healthz,
	  .access = SRV_ACCESS_OPEN, .flags = SRV_F_INLINE },
	{ .method = "GET", .path = "/metrics", .handler = srv_h_metrics, .access = SRV_ACCESS_OPEN },
	{ .method = "GET", .path = "/v1/openapi.yaml", .handler = srv_h_openapi, .access = SRV_ACCESS_OPEN },
	{ .method = "GET", .path = "/docs/", .handler = srv_h_docs, .access = SRV_ACCESS_OPEN },
	{ .method = "GET", .path = "/ui/", .handler = srv_h_ui, .access = SRV_ACCESS_OPEN },
	{ .method = "GET", .path = "/ui/*", .handler = srv_h_ui, .access = SRV_ACCESS_OPEN },

	{ .method = "POST", .path = "/v1/projects", .handler = srv_h_project_create,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "GET", .path = "/v1/projects", .handler = srv_h_project_list, .access = SRV_ACCESS_ANY },
	{ .method = "GET", .path = "/v1/projects/*", .handler = srv_h_project_get,
	  .access = SRV_ACCESS_VIEWER, .doc_name = "projects/*" },
	{ .method = "DELETE", .path = "/v1/projects/*", .handler = srv_h_project_delete, .access = SRV_ACCESS_CLUSTER },

	{ .method = "POST", .path = "/v1/locations", .handler = srv_h_location_create,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "GET", .path = "/v1/locations", .handler = srv_h_location_list_admin,
	  .access = SRV_ACCESS_CLUSTER },
	{ .method = "GET", .path = "/v1/locations/*", .handler = srv_h_location_get_admin,
	  .access = SRV_ACCESS_CLUSTER },
	{ .method = "PATCH", .path = "/v1/locations/*", .handler = srv_h_location_patch,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = "/v1/locations/*", .handler = srv_h_location_delete,
	  .access = SRV_ACCESS_CLUSTER },
	{ .method = "GET", .path = "/v1/projects/*/locations", .handler = srv_h_location_list,
	  .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL, .handler = srv_h_location_get, .access = SRV_ACCESS_VIEWER },

	{ .method = "POST", .path = PL "/storagePools", .handler = srv_h_pool_create,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "GET", .path = PL "/storagePools", .handler = srv_h_pool_list, .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL "/storagePools/*", .handler = srv_h_pool_get, .access = SRV_ACCESS_VIEWER },
	{ .method = "PATCH", .path = PL "/storagePools/*", .handler = srv_h_pool_patch,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = PL "/storagePools/*", .handler = srv_h_pool_delete, .access = SRV_ACCESS_EDITOR },
	{ .method = "GET", .path = PL "/storagePools/*/metrics", .handler = srv_h_pool_metrics,
	  .access = SRV_ACCESS_VIEWER },

	{ .method = "POST", .path = PL "/volumes", .handler = srv_h_volume_create,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "GET", .path = PL "/volumes", .handler = srv_h_volume_list, .access = SRV_ACCESS_VIEWER },
	/* from the cache: backupConfig.backupChainBytes is stored (srv_bconfig.h) */
	{ .method = "GET", .path = PL "/volumes/*", .handler = srv_h_volume_get, .access = SRV_ACCESS_VIEWER,
	  .doc_name = "projects/*/locations/*/volumes/*" },
	{ .method = "PATCH", .path = PL "/volumes/*", .handler = srv_h_volume_patch,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = PL "/volumes/*", .handler = srv_h_volume_delete, .access = SRV_ACCESS_EDITOR },
	{ .method = "GET", .path = PL "/volumes/*/metrics", .handler = srv_h_volume_metrics,
	  .access = SRV_ACCESS_VIEWER },
	{ .method = "POST", .path = PL "/volumes/*:revert", .handler = srv_h_volume_revert,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	/* RestoreBackupFiles (srv_backup.h) */
	{ .method = "POST", .path = PL "/volumes/*:restore", .handler = srv_h_volume_restore,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "POST", .path = PL "/volumes/*/snapshots", .handler = srv_h_snapshot_create,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "GET", .path = PL "/volumes/*/snapshots", .handler = srv_h_snapshot_list, .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL "/volumes/*/snapshots/*", .handler = srv_h_snapshot_get,
	  .access = SRV_ACCESS_VIEWER, .doc_name = "projects/*/locations/*/volumes/*/snapshots/*" },
	{ .method = "PATCH", .path = PL "/volumes/*/snapshots/*", .handler = srv_h_snapshot_patch,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = PL "/volumes/*/snapshots/*", .handler = srv_h_snapshot_delete,
	  .access = SRV_ACCESS_EDITOR },

	/* SMB users (srv_smbuser.h); no doc_name: a GET goes through the handler */
	{ .method = "POST", .path = PL "/smbUsers", .handler = srv_h_smbuser_create,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "GET", .path = PL "/smbUsers", .handler = srv_h_smbuser_list, .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL "/smbUsers/*", .handler = srv_h_smbuser_get, .access = SRV_ACCESS_VIEWER },
	{ .method = "PATCH", .path = PL "/smbUsers/*", .handler = srv_h_smbuser_patch,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = PL "/smbUsers/*", .handler = srv_h_smbuser_delete,
	  .access = SRV_ACCESS_EDITOR },

	/* backup vaults and policies (srv_bvault.h, srv_bpolicy.h, issue 21) */
	{ .method = "POST", .path = PL "/backupVaults", .handler = srv_h_bvault_create,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "GET", .path = PL "/backupVaults", .handler = srv_h_bvault_list, .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL "/backupVaults/*", .handler = srv_h_bvault_get, .access = SRV_ACCESS_VIEWER },
	{ .method = "PATCH", .path = PL "/backupVaults/*", .handler = srv_h_bvault_patch,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = PL "/backupVaults/*", .handler = srv_h_bvault_delete,
	  .access = SRV_ACCESS_EDITOR },
	/* backups (srv_backup.h) */
	{ .method = "POST", .path = PL "/backupVaults/*/backups", .handler = srv_h_backup_create,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "GET", .path = PL "/backupVaults/*/backups", .handler = srv_h_backup_list,
	  .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL "/backupVaults/*/backups/*", .handler = srv_h_backup_get,
	  .access = SRV_ACCESS_VIEWER, .doc_name = "projects/*/locations/*/backupVaults/*/backups/*" },
	{ .method = "PATCH", .path = PL "/backupVaults/*/backups/*", .handler = srv_h_backup_patch,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = PL "/backupVaults/*/backups/*", .handler = srv_h_backup_delete,
	  .access = SRV_ACCESS_EDITOR },
	{ .method = "POST", .path = PL "/backupPolicies", .handler = srv_h_bpolicy_create,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "GET", .path = PL "/backupPolicies", .handler = srv_h_bpolicy_list, .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL "/backupPolicies/*", .handler = srv_h_bpolicy_get, .access = SRV_ACCESS_VIEWER },
	{ .method = "PATCH", .path = PL "/backupPolicies/*", .handler = srv_h_bpolicy_patch,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = PL "/backupPolicies/*", .handler = srv_h_bpolicy_delete,
	  .access = SRV_ACCESS_EDITOR },

	{ .method = "GET", .path = "/v1/nodes", .handler = srv_h_node_list, .access = SRV_ACCESS_CLUSTER },
	{ .method = "GET", .path = "/v1/nodes/*", .handler = srv_h_node_get, .access = SRV_ACCESS_CLUSTER },
	{ .method = "POST", .path = "/v1/nodes/*:drain", .handler = srv_h_node_drain,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "POST", .path = "/v1/nodes/*:undrain", .handler = srv_h_node_undrain,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = "/v1/nodes/*", .handler = srv_h_node_delete, .access = SRV_ACCESS_CLUSTER },
	{ .method = "GET", .path = "/v1/nodes/*/metrics", .handler = srv_h_node_metrics, .access = SRV_ACCESS_CLUSTER },
	{ .method = "POST", .path = "/v1/shelves", .handler = srv_h_shelf_create,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "GET", .path = "/v1/shelves", .handler = srv_h_shelf_list, .access = SRV_ACCESS_CLUSTER },
	{ .method = "GET", .path = "/v1/shelves/*", .handler = srv_h_shelf_get, .access = SRV_ACCESS_CLUSTER },
	{ .method = "PATCH", .path = "/v1/shelves/*", .handler = srv_h_shelf_patch,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "DELETE", .path = "/v1/shelves/*", .handler = srv_h_shelf_delete, .access = SRV_ACCESS_CLUSTER },
	{ .method = "POST", .path = "/v1/locations/*:joinToken", .handler = srv_h_join_token,
	  .access = SRV_ACCESS_CLUSTER, .flags = SRV_F_BODY },
	{ .method = "POST", .path = "/v1/agent/join", .handler = srv_h_agent_join,
	  .access = SRV_ACCESS_NODE, .flags = SRV_F_BODY },
	/* a report names every volume of the node: the intent contract's cap */
	{ .method = "POST", .path = "/v1/agent/status", .handler = srv_h_agent_status,
	  .access = SRV_ACCESS_NODE, .flags = SRV_F_BODY | SRV_F_NODECERT, .body_max = API_INTENT_BODY_MAX },

	{ .method = "GET", .path = PL "/operations", .handler = srv_h_op_list, .access = SRV_ACCESS_VIEWER },
	{ .method = "GET", .path = PL "/operations/*", .handler = srv_h_op_get,
	  .access = SRV_ACCESS_VIEWER, .doc_name = "projects/*/locations/*/operations/*" },
	{ .method = "DELETE", .path = PL "/operations/*", .handler = srv_h_op_delete, .access = SRV_ACCESS_EDITOR },
	{ .method = "POST", .path = PL "/operations/*:cancel", .handler = srv_h_op_cancel,
	  .access = SRV_ACCESS_EDITOR, .flags = SRV_F_BODY },
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
