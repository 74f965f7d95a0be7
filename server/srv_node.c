/* srv_node: storage nodes as the cluster admin sees them (GET /v1/nodes,
 * GET /v1/nodes/N), the public view of a node document, and liveness: when
 * each node last reported, kept in memory (see srv_node.h). Joins and
 * status reports: srv_agent.c; drain, undrain, delete and failover:
 * srv_drain.c; placement: srv_place.c. */
#include "server/srv_node.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_place.h"
#include "server/srv_req.h"

int srv_node_save(struct db *db, json_t *node)
{
	char parent[200];

	snprintf(parent, sizeof(parent), "locations/%s", api_json_str(node, "location", ""));
	return db_put(db, "node", parent, api_json_str(node, "name", ""), node, false);
}

/* What a node's state means for its volumes, in a sentence (srv_drain.c
 * has the life cycle); READY needs none. */
static void node_details(json_t *node, int64_t count)
{
	const char *state = api_json_str(node, "state", ""), *nn = api_json_str(node, "name", "");
	const char *id = strchr(nn, '/') ? strchr(nn, '/') + 1 : nn, *loc = api_json_str(node, "location", "");
	char text[600] = "";

	if (strcmp(state, "DRAINING") == 0 && count)
		snprintf(text, sizeof(text),
			 "draining: it still serves %lld volumes that found no other READY node in %s with room; they "
			 "move by themselves once one joins or is undrained", (long long)count, loc);
	else if (strcmp(state, "DRAINING") == 0)
		snprintf(text, sizeof(text), "drained: it holds no volumes; delete it (aquifer nodes delete %s) or "
			 "undrain it (aquifer nodes undrain %s)", id, id);
	else if (strcmp(state, "DOWN") == 0 && count)
		snprintf(text, sizeof(text), "silent since %s: %lld volumes wait for another READY node in %s and are "
			 "not served meanwhile", api_json_str(node, "lastSeenTime", "?"), (long long)count, loc);
	else if (strcmp(state, "DOWN") == 0)
		snprintf(text, sizeof(text), "silent since %s; its volumes moved to other nodes: delete it (aquifer "
			 "nodes delete %s) or start its agent again", api_json_str(node, "lastSeenTime", "?"), id);
	if (*text)
		json_object_set_new(node, "stateDetails", json_string(text));
	else
		json_object_del(node, "stateDetails");
}

int srv_node_view(struct db *db, json_t *node)
{
	double alloc = 0;
	int64_t count = 0;
	int rc;

	json_object_del(node, "internal");
	if ((rc = srv_place_allocated(db, api_json_str(node, "name", ""), &alloc, &count)) != AQ_OK)
		return rc;
	json_object_set_new(node, "allocatedThroughputMibps", json_real(alloc));
	json_object_set_new(node, "volumeCount", json_integer(count));
	json_object_set_new(node, "overcommitted",
			    json_boolean(alloc > api_json_double(node, "throughputCeilingMibps", 0) + 1e-6));
	node_details(node, count);
	return AQ_OK;
}

/* ---- liveness ---- */

/* When each node last reported (node name -> ms since the epoch), and
 * when aquiferd started. */
struct srv_live {
	pthread_mutex_t lock;
	json_t *seen;
	int64_t started_ms;
};

int srv_node_live_init(struct srv *srv, int64_t started_ms)
{
	if (!(srv->live = calloc(1, sizeof(*srv->live))) || !(srv->live->seen = json_object())) {
		free(srv->live);
		srv->live = NULL;
		return AQ_ENOMEM;
	}
	pthread_mutex_init(&srv->live->lock, NULL);
	srv->live->started_ms = started_ms;
	return AQ_OK;
}

void srv_node_live_free(struct srv *srv)
{
	if (!srv->live)
		return;
	pthread_mutex_destroy(&srv->live->lock);
	json_decref(srv->live->seen);
	free(srv->live);
	srv->live = NULL;
}

void srv_node_live_seen(struct srv *srv, const char *node, int64_t ms)
{
	pthread_mutex_lock(&srv->live->lock);
	json_object_set_new(srv->live->seen, node, json_integer(ms));
	pthread_mutex_unlock(&srv->live->lock);
}

int64_t srv_node_live_last(struct srv *srv, const char *node)
{
	int64_t ms;

	pthread_mutex_lock(&srv->live->lock);
	ms = json_integer_value(json_object_get(srv->live->seen, node));
	pthread_mutex_unlock(&srv->live->lock);
	return ms > srv->live->started_ms ? ms : srv->live->started_ms;
}

/* ---- the cluster admin's views ---- */

int srv_h_node_list(struct srv_req *req, json_t **resp)
{
	json_t *items = NULL, *n;
	char *next = NULL;
	size_t i;
	int rc;

	if ((rc = srv_list_cluster(req, "node", &items, &next)) != AQ_OK)
		return rc;
	json_array_foreach(items, i, n)
		if ((rc = srv_node_view(req->db, n)) != AQ_OK)
			goto out;
	*resp = srv_list_page("nodes", items, next);
	items = NULL;
out:
	json_decref(items);
	free(next);
	return rc;
}

int srv_node_load(struct srv_req *req, char *name, size_t cap, json_t **node)
{
	int rc;

	snprintf(name, cap, "nodes/%s", req->params[0]);
	if ((rc = db_get(req->db, name, node)) == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "node \"%s\" not found", req->params[0]);
	return rc;
}

int srv_h_node_get(struct srv_req *req, json_t **resp)
{
	char name[300];
	json_t *doc = NULL;
	int rc;

	if ((rc = srv_node_load(req, name, sizeof(name), &doc)) == AQ_OK &&
	    (rc = srv_node_view(req->db, doc)) == AQ_OK) {
		*resp = doc;
		doc = NULL;
	}
	json_decref(doc);
	return rc;
}

