/* srv_node: storage nodes and shelves (cluster admin), the agents' status
 * reports, and placement of volumes on nodes. Joins: srv_join.c; drain,
 * undrain, delete and failover: srv_drain.c. */
#include "server/srv_node.h"

#include <inttypes.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_place.h"
#include "api/api_resource.h"
#include "server/srv_series.h"

int64_t srv_node_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sum of the placement weights on a node. */
static int node_allocated(struct db *db, const char *node_name, double *mibps, int64_t *count)
{
	int rc = db_sum(db, "placement", node_name, "mibps", mibps);

	if (rc == AQ_OK && count)
		rc = db_count(db, "placement", node_name, count);
	return rc;
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
	if ((rc = node_allocated(db, api_json_str(node, "name", ""), &alloc, &count)) != AQ_OK)
		return rc;
	json_object_set_new(node, "allocatedThroughputMibps", json_real(alloc));
	json_object_set_new(node, "volumeCount", json_integer(count));
	json_object_set_new(node, "overcommitted",
			    json_boolean(alloc > api_json_double(node, "throughputCeilingMibps", 0) + 1e-6));
	node_details(node, count);
	return AQ_OK;
}

int srv_shelf_default(struct db *db, const char *location_id)
{
	char name[200], parent[200], now[48];
	json_t *doc;
	int rc;

	snprintf(name, sizeof(name), "shelves/%s-shelf-1", location_id);
	snprintf(parent, sizeof(parent), "locations/%s", location_id);
	api_time_now(now, sizeof(now));
	doc = json_pack("{s:s,s:s,s:f,s:f,s:s,s:s,s:s}", "name", name, "location", location_id,
			"readThroughputMibps", SRV_SHELF_READ_MIBPS, "writeThroughputMibps",
			SRV_SHELF_WRITE_MIBPS, "media", "TLC", "backend", "directory", "createTime", now);
	if (!doc)
		return AQ_ENOMEM;
	rc = db_put(db, "shelf", parent, name, doc, true);
	json_decref(doc);
	return rc == AQ_EEXIST ? AQ_OK : rc;
}

/* ---- liveness ---- */

void srv_live_seen(struct srv *srv, const char *node, int64_t ms)
{
	pthread_mutex_lock(&srv->live_lock);
	if (!srv->live)
		srv->live = json_object();
	json_object_set_new(srv->live, node, json_integer(ms));
	pthread_mutex_unlock(&srv->live_lock);
}

int64_t srv_live_last(struct srv *srv, const char *node)
{
	int64_t ms;

	pthread_mutex_lock(&srv->live_lock);
	ms = json_integer_value(json_object_get(srv->live, node));
	pthread_mutex_unlock(&srv->live_lock);
	return ms > srv->started_ms ? ms : srv->started_ms;
}

/* ---- agent-facing calls ---- */

/* The node a node token speaks for: its own node, of the incarnation the
 * token was issued to (srv_node_token_check). */
static int node_of_token(struct srv_req *req, char *name, size_t cap, json_t **doc)
{
	int rc;

	if (req->auth.role != SRV_ROLE_NODE)
		return aq_fail(&req->msg, AQ_EACCES, "only a joined node may report status");
	if (strcmp(req->auth.use, SRV_USE_JOIN) == 0)
		return aq_fail(&req->msg, AQ_EUNAUTH, "a join token only joins; report with the node token the join answered");
	snprintf(name, cap, "nodes/%s", req->auth.subject);
	rc = db_get(req->db, name, doc);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, AQ_EUNAUTH,
			       "this token belongs to no joined node (node \"%s\" was deleted or never joined); join it with a new join token",
			       req->auth.subject);
	if (rc == AQ_OK && (rc = srv_node_token_check(&req->auth, *doc, &req->msg)) != AQ_OK) {
		json_decref(*doc);
		*doc = NULL;
	}
	return rc;
}

/* A report's volume entry v for the time series, with its pool's full name
 * and its limit from the stored volume vol (the agent's copy may lag). */
static void series_entry(json_t *fed, const json_t *v, const json_t *vol)
{
	const char *vn = api_json_str(vol, "name", ""), *slash = strstr(vn, "/volumes/");
	char pool[800];
	json_t *e = json_deep_copy(v);

	if (!e || !slash) {
		json_decref(e);
		return;
	}
	snprintf(pool, sizeof(pool), "%.*s/storagePools/%s", (int)(slash - vn), vn,
		 api_json_str(vol, "storagePool", ""));
	json_object_set_new(e, "pool", json_string(pool));
	json_object_set_new(e, "limitMibps", json_real(api_json_double(vol, "throughputMibps", 0)));
	json_array_append_new(fed, e);
}

/* Bytes to GiB, rounded up (what usedGib has always shown). */
static int64_t gib_up(int64_t bytes)
{
	return bytes > 0 ? (bytes + (1LL << 30) - 1) >> 30 : 0;
}

/* What a report's volume entry says of the stored volume (contract:
 * notes/tier-contract.md section 3): usedGib, hotTierSizeUsedGib and
 * coldTierSizeGib (GiB rounded up), and the stateDetails of a READY volume
 * (the tiering problem the agent reports, "" once it is fine again). The
 * figures only move by whole GiB, so a busy volume does not rewrite its
 * document (or push a new intent) on every report. */
struct vol_report {
	int64_t used, hot, cold;
	char details[600];
};

static void vol_report_read(const json_t *v, struct vol_report *r)
{
	int64_t used_b = api_json_int64(v, "usedBytes", 0), cold_b = api_json_int64(v, "coldBytes", 0);
	int64_t hot_b = json_object_get(v, "hotBytes") ? api_json_int64(v, "hotBytes", 0) : used_b - cold_b;
	const char *tstate = api_json_str(v, "tierState", ""), *tdet = api_json_str(v, "tierDetails", "");

	r->used = gib_up(used_b);
	r->hot = gib_up(hot_b);
	r->cold = gib_up(cold_b);
	r->details[0] = '\0';
	if (*tdet)
		snprintf(r->details, sizeof(r->details), "cold tier: %.500s", tdet);
	else if (strcmp(tstate, "STORE_UNAVAILABLE") == 0)
		snprintf(r->details, sizeof(r->details),
			 "cold tier: the cold store is unavailable; tiering paused, cold reads retry");
}

static bool vol_report_differs(const struct vol_report *r, const json_t *vol)
{
	return api_json_int64(vol, "usedGib", -1) != r->used ||
	       api_json_int64(vol, "hotTierSizeUsedGib", -1) != r->hot ||
	       api_json_int64(vol, "coldTierSizeGib", -1) != r->cold ||
	       (strcmp(api_json_str(vol, "state", ""), "READY") == 0 &&
		strcmp(api_json_str(vol, "stateDetails", ""), r->details) != 0);
}

/* Write r into vol. When the cold GiB moved, the AUTO QoS limit follows (hot
 * GiB at the level's rate, cold GiB at 2 KiB/s: api_volume_fill_output);
 * *repriced: throughputMibps changed, so the node's intent did. */
static void vol_report_apply(const struct api_math_params *p, struct db *db, const struct vol_report *r,
			     json_t *vol, bool *repriced)
{
	bool cold_moved = api_json_int64(vol, "coldTierSizeGib", 0) != r->cold;

	api_json_set_int64(vol, "usedGib", r->used);
	api_json_set_int64(vol, "hotTierSizeUsedGib", r->hot);
	api_json_set_int64(vol, "coldTierSizeGib", r->cold);
	if (strcmp(api_json_str(vol, "state", ""), "READY") == 0)
		json_object_set_new(vol, "stateDetails", json_string(r->details));
	if (cold_moved) {
		const char *vn = api_json_str(vol, "name", ""), *slash = strstr(vn, "/volumes/");
		double before = api_json_double(vol, "throughputMibps", 0);
		char pname[800];
		json_t *pool = NULL;

		snprintf(pname, sizeof(pname), "%.*s/storagePools/%s", slash ? (int)(slash - vn) : 0, vn,
			 api_json_str(vol, "storagePool", ""));
		if (slash && db_get(db, pname, &pool) == AQ_OK) {
			api_volume_fill_output(p, pool, vol);
			*repriced = api_json_double(vol, "throughputMibps", 0) != before;
		}
		json_decref(pool);
	}
}

/* The node token of a report is past half its life (or older than node
 * tokens may live, or without an incarnation): the answer carries its
 * successor (nodeToken, nodeTokenExpireTime), which the agent keeps. A node
 * from before incarnations gets one here, but only from an agent that says
 * it keeps renewed tokens (tokenRenewal), so an older agent is never locked
 * out by its own upgrade of the server. */
static int status_renew(struct srv_req *req, const char *name, const json_t *doc, json_t *answer)
{
	const char *nid = api_json_str(json_object_get(doc, "internal"), "incarnation", "");
	char fresh[33], parent[200];
	json_t *cur = NULL;
	int rc = AQ_OK;

	if (!json_is_true(json_object_get(req->body, "tokenRenewal")))
		return AQ_OK;
	if (!*nid) {
		srv_rand_hex(fresh, 16);
		if ((rc = db_begin(req->db)) != AQ_OK || (rc = db_get(req->db, name, &cur)) != AQ_OK)
			goto out;
		if (!*api_json_str(json_object_get(cur, "internal"), "incarnation", "")) {
			json_object_set_new(json_object_get(cur, "internal"), "incarnation", json_string(fresh));
			snprintf(parent, sizeof(parent), "locations/%s", api_json_str(cur, "location", ""));
			if ((rc = db_put(req->db, "node", parent, name, cur, false)) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
				goto out;
		}
		nid = api_json_str(json_object_get(cur, "internal"), "incarnation", "");
	}
	rc = srv_node_token_issue(req->srv, req->auth.subject, api_json_str(doc, "location", ""), nid, answer, &req->msg);
out:
	db_rollback(req->db);
	json_decref(cur);
	return rc;
}

/* How often a node's lastSeenTime is made durable while nothing else
 * changes; liveness itself is tracked in memory. */
#define NODE_SEEN_PERSIST_MS 30000

int srv_h_agent_status(struct srv_req *req, json_t **resp)
{
	char name[200], parent[200], now[48];
	json_t *doc = NULL, *vols = json_object_get(req->body, "volumes"), *v, *fed = NULL;
	int64_t applied = api_json_int64(req->body, "appliedGeneration", -1), t = srv_node_now_ms();
	const char *body_node = api_json_str(req->body, "node", NULL);
	bool changed, kick = false, ahead = false;
	size_t i;
	int rc;

	if (applied < 0)
		return aq_fail(&req->msg, AQ_EINVAL, "status needs appliedGeneration");
	if (body_node && strcmp(body_node, req->auth.subject) != 0 &&
	    !(strncmp(body_node, "nodes/", 6) == 0 && strcmp(body_node + 6, req->auth.subject) == 0))
		return aq_fail(&req->msg, AQ_EACCES, "this token speaks for node \"%s\" only, not for \"%s\"",
			       req->auth.subject, body_node);
	fed = json_array();
	/* read first: most reports change nothing durable */
	if ((rc = node_of_token(req, name, sizeof(name), &doc)) != AQ_OK)
		goto out;
	srv_live_seen(req->srv, name, t);
	/* A generation above the node's own was never pushed by us (a node that
	 * kept an intent.json of an earlier incarnation, a restored database):
	 * it proves nothing was applied. It is not recorded and finishes
	 * nothing; the reconciler pushes past it (rec_node). */
	if (applied > api_json_int64(doc, "generation", 0)) {
		srv_reconcile_kick(req->srv, name);
		applied = api_json_int64(doc, "appliedGeneration", 0);
		ahead = true;
	}
	changed = strcmp(api_json_str(doc, "state", ""), "DOWN") == 0 ||
		  applied > api_json_int64(doc, "appliedGeneration", 0) ||
		  t - api_json_int64(json_object_get(doc, "internal"), "lastSeenMs", 0) > NODE_SEEN_PERSIST_MS;
	json_array_foreach(vols, i, v) {
		char pname[800];
		json_t *pl = NULL, *vol = NULL;
		struct vol_report r;

		snprintf(pname, sizeof(pname), "placements/%s", api_json_str(v, "name", ""));
		if (db_get(req->db, pname, &pl) == AQ_OK && strcmp(api_json_str(pl, "node", ""), name) == 0 &&
		    db_get(req->db, api_json_str(v, "name", ""), &vol) == AQ_OK) {
			vol_report_read(v, &r);
			if (vol_report_differs(&r, vol))
				changed = true;
			series_entry(fed, v, vol);
		}
		json_decref(pl);
		json_decref(vol);
	}
	/* the time series: in memory, every report (srv_series.h) */
	srv_series_report(req->srv->series, name, api_json_str(doc, "location", ""),
			  api_json_double(doc, "throughputCeilingMibps", 0), fed, t);
	if (!changed)
		goto answer;
	json_decref(doc);
	doc = NULL;
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = node_of_token(req, name, sizeof(name), &doc)) != AQ_OK)
		goto out;
	api_time_now(now, sizeof(now));
	if (strcmp(api_json_str(doc, "state", ""), "DOWN") == 0)
		json_object_set_new(doc, "state", json_string("READY"));
	json_object_set_new(doc, "lastSeenTime", json_string(now));
	if (applied > api_json_int64(doc, "appliedGeneration", 0) && applied <= api_json_int64(doc, "generation", 0))
		json_object_set_new(doc, "appliedGeneration", json_integer(applied));
	json_object_set_new(json_object_get(doc, "internal"), "lastSeenMs", json_integer(t));
	if (json_object_get(req->body, "agentVersion"))
		json_object_set(doc, "agentVersion", json_object_get(req->body, "agentVersion"));
	snprintf(parent, sizeof(parent), "locations/%s", api_json_str(doc, "location", ""));
	if ((rc = db_put(req->db, "node", parent, name, doc, false)) != AQ_OK)
		goto out;
	/* usage of the volumes this node serves */
	json_array_foreach(vols, i, v) {
		const char *vn = api_json_str(v, "name", "");
		char pname[800], vparent[600];
		json_t *pl = NULL, *vol = NULL;
		const char *slash = strstr(vn, "/volumes/");
		struct vol_report r;
		bool repriced = false;

		snprintf(pname, sizeof(pname), "placements/%s", vn);
		if (!slash || db_get(req->db, pname, &pl) != AQ_OK ||
		    strcmp(api_json_str(pl, "node", ""), name) != 0 || db_get(req->db, vn, &vol) != AQ_OK) {
			json_decref(pl);
			continue;
		}
		vol_report_read(v, &r);
		if (vol_report_differs(&r, vol)) {
			vol_report_apply(&req->srv->cfg.math, req->db, &r, vol, &repriced);
			snprintf(vparent, sizeof(vparent), "%.*s", (int)(slash - vn), vn);
			rc = db_put(req->db, "volume", vparent, vn, vol, false);
		}
		kick = kick || repriced;
		json_decref(pl);
		json_decref(vol);
		if (rc != AQ_OK)
			goto out;
	}
	if ((rc = db_commit(req->db)) != AQ_OK)
		goto out;
	if (kick)
		srv_reconcile_kick(req->srv, name); /* a QoS limit followed the cold tier */
	if (!ahead &&
	    (rc = srv_node_applied(req->srv, req->db, name, applied, json_object_get(req->body, "failed"))) != AQ_OK)
		goto out;
answer:
	*resp = json_pack("{s:I}", "generation", (json_int_t)api_json_int64(doc, "generation", 0));
	if (*resp && srv_node_token_stale(&req->auth, req->srv->cfg.node_token_ttl, (long)(t / 1000)))
		rc = status_renew(req, name, doc, *resp);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(fed);
	return rc;
}

/* ---- cluster admin views ---- */

static int list_kind_view(struct srv_req *req, const char *kind, const char *plural, json_t **resp)
{
	json_t *items = NULL, *n;
	char *next = NULL;
	size_t i;
	int rc;
	struct db_query q = { .kind = kind, .parent_prefix = "locations/" };
	const char *ps = srv_query(req, "pageSize");

	q.page_token = srv_query(req, "pageToken");
	q.filter = srv_query(req, "filter");
	q.page_size = ps ? (int)strtol(ps, NULL, 10) : 0;
	if ((rc = db_list(req->db, &q, &items, &next, &req->msg)) != AQ_OK)
		return rc;
	if (strcmp(kind, "node") == 0)
		json_array_foreach(items, i, n)
			if ((rc = srv_node_view(req->db, n)) != AQ_OK)
				goto out;
	*resp = srv_list_page(plural, items, next);
	items = NULL;
out:
	json_decref(items);
	free(next);
	return rc;
}

int srv_h_node_list(struct srv_req *req, json_t **resp)
{
	return list_kind_view(req, "node", "nodes", resp);
}

int srv_h_node_get(struct srv_req *req, json_t **resp)
{
	char name[300];
	json_t *doc = NULL;
	int rc;

	snprintf(name, sizeof(name), "nodes/%s", req->params[0]);
	if ((rc = db_get(req->db, name, &doc)) == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "node \"%s\" not found", req->params[0]);
	if (rc == AQ_OK && (rc = srv_node_view(req->db, doc)) == AQ_OK) {
		*resp = doc;
		doc = NULL;
	}
	json_decref(doc);
	return rc;
}

int srv_h_shelf_list(struct srv_req *req, json_t **resp)
{
	return list_kind_view(req, "shelf", "shelves", resp);
}

int srv_h_shelf_get(struct srv_req *req, json_t **resp)
{
	char name[300];
	int rc;

	snprintf(name, sizeof(name), "shelves/%s", req->params[0]);
	if ((rc = db_get(req->db, name, resp)) == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "shelf \"%s\" not found", req->params[0]);
	return rc;
}

/* POST /v1/shelves?shelfId=S {location, readThroughputMibps, writeThroughputMibps, media} */
int srv_h_shelf_create(struct srv_req *req, json_t **resp)
{
	const char *id = srv_query(req, "shelfId");
	const json_t *b = req->body;
	const char *loc = api_json_str(b, "location", NULL), *media = api_json_str(b, "media", "TLC");
	double rd = api_json_double(b, "readThroughputMibps", SRV_SHELF_READ_MIBPS);
	double wr = api_json_double(b, "writeThroughputMibps", strcmp(media, "QLC") == 0 ? SRV_SHELF_WRITE_MIBPS / 2 : SRV_SHELF_WRITE_MIBPS);
	char name[200], parent[200], now[48];
	json_t *doc = NULL, *l = NULL;
	int rc;

	if (!id || (rc = api_id_check(id, "shelfId", &req->msg)) != AQ_OK)
		return id ? rc : aq_fail(&req->msg, AQ_EINVAL, "shelfId is required");
	if (!loc)
		return aq_fail(&req->msg, AQ_EINVAL, "location is required");
	if (strcmp(media, "TLC") != 0 && strcmp(media, "QLC") != 0)
		return aq_fail(&req->msg, AQ_EINVAL, "media must be TLC or QLC");
	if (rd <= 0 || wr <= 0)
		return aq_fail(&req->msg, AQ_EINVAL, "readThroughputMibps and writeThroughputMibps must be positive");
	snprintf(name, sizeof(name), "shelves/%s", id);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	api_time_now(now, sizeof(now));
	if ((rc = db_begin(req->db)) != AQ_OK)
		return rc;
	if ((rc = db_get(req->db, parent, &l)) == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "location \"%s\" not found", loc);
	if (rc != AQ_OK)
		goto out;
	doc = json_pack("{s:s,s:s,s:f,s:f,s:s,s:s,s:s}", "name", name, "location", loc,
			"readThroughputMibps", rd, "writeThroughputMibps", wr, "media", media, "backend",
			"directory", "createTime", now);
	if ((rc = db_put(req->db, "shelf", parent, name, doc, true)) == AQ_EEXIST)
		rc = aq_fail(&req->msg, rc, "shelf \"%s\" already exists", id);
	if (rc != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	*resp = doc;
	doc = NULL;
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(l);
	return rc;
}

/* ---- placement ---- */

/* Candidate nodes of a location with their allocation; *shelf_head is what
 * the location's shelves can still take. */
static int place_candidates(struct db *db, const char *loc, const char *skip, json_t **nodes,
			    struct api_place_node **cand, double *shelf_head, aq_msg *msg)
{
	char parent[200];
	struct db_query q = { .kind = "node", .parent = parent };
	char *next = NULL;
	double shelves = 0, total = 0;
	json_t *n, *alloc = NULL;
	size_t i;
	int rc;

	snprintf(parent, sizeof(parent), "locations/%s", loc);
	if ((rc = db_list(db, &q, nodes, &next, msg)) != AQ_OK)
		return rc;
	free(next);
	/* what is placed on each node of the location, in one query */
	if ((rc = db_sum_by_parent(db, "placement", "mibps", "node", parent, &alloc)) != AQ_OK)
		return rc;
	*cand = calloc(json_array_size(*nodes) + 1, sizeof(**cand));
	if (!*cand) {
		json_decref(alloc);
		return AQ_ENOMEM;
	}
	json_array_foreach(*nodes, i, n) {
		struct api_place_node *c = &(*cand)[i];

		c->name = api_json_str(n, "name", "");
		c->ceiling_mibps = api_json_double(n, "throughputCeilingMibps", 0);
		c->allocated_mibps = api_json_double(alloc, c->name, 0);
		c->eligible = strcmp(api_json_str(n, "state", ""), "READY") == 0 &&
			      (!skip || strcmp(c->name, skip) != 0);
		total += c->allocated_mibps;
	}
	json_decref(alloc);
	if ((rc = db_sum(db, "shelf", parent, "readThroughputMibps", &shelves)) != AQ_OK)
		return rc;
	*shelf_head = shelves - total;
	return AQ_OK;
}

int srv_place_pick(struct db *db, const char *loc, const char *skip, double mibps, bool overcommit,
		   char *node, size_t cap, aq_msg *msg)
{
	json_t *nodes = NULL;
	struct api_place_node *cand = NULL;
	double shelf_head = 0;
	size_t pick;
	int rc;

	if ((rc = place_candidates(db, loc, skip, &nodes, &cand, &shelf_head, msg)) == AQ_OK &&
	    (rc = api_place(cand, json_array_size(nodes), mibps, shelf_head, overcommit, &pick, msg)) == AQ_OK)
		snprintf(node, cap, "%s", cand[pick].name);
	if (rc == AQ_EUNAVAIL)
		rc = aq_fail(msg, AQ_EEXHAUSTED, "no READY storage node in location \"%s\"; join one with aquifer-agent", loc);
	free(cand);
	json_decref(nodes);
	return rc;
}

static void vol_location(const char *vol_name, char *loc, size_t cap)
{
	const char *l = strstr(vol_name, "/locations/");
	const char *e = l ? strchr(l + 11, '/') : NULL;

	snprintf(loc, cap, "%.*s", e ? (int)(e - l - 11) : 0, l ? l + 11 : "");
}

int srv_place_volume(struct srv_req *req, const json_t *vol, const char *op_name,
		     const char *action, char *node, size_t node_cap, aq_msg *msg)
{
	const char *vn = api_json_str(vol, "name", "");
	double mibps = api_json_double(vol, "throughputMibps", 0);
	char pname[800], loc[100];
	json_t *pl = NULL;
	int rc;

	snprintf(pname, sizeof(pname), "placements/%s", vn);
	vol_location(vn, loc, sizeof(loc));
	rc = db_get(req->db, pname, &pl);
	if (rc == AQ_ENOENT && strcmp(action, "create") == 0) {
		unsigned char sum[SHA256_DIGEST_LENGTH];
		char fsid[17], dir[64], seed[900];

		if ((rc = srv_place_pick(req->db, loc, NULL, mibps, false, node, node_cap, msg)) != AQ_OK)
			goto out;
		/* fsid: stable for this incarnation of the name (its createTime) */
		snprintf(seed, sizeof(seed), "%s|%s", vn, api_json_str(vol, "createTime", ""));
		SHA256((const unsigned char *)seed, strlen(seed), sum);
		for (int i = 0; i < 8; i++)
			snprintf(fsid + i * 2, 3, "%02x", sum[i]);
		snprintf(dir, sizeof(dir), "volumes/%s", fsid);
		pl = json_pack("{s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:I}", "volume", vn, "node", node, "mibps",
			       mibps, "fsid", fsid, "dir", dir, "op", op_name, "action", action,
			       "pendingGeneration", (json_int_t)0);
		rc = pl ? db_put(req->db, "placement", node, pname, pl, true) : AQ_ENOMEM;
		goto out;
	}
	if (rc != AQ_OK)
		goto out;
	snprintf(node, node_cap, "%s", api_json_str(pl, "node", ""));
	if (strcmp(action, "update") == 0) {
		double alloc = 0, old = api_json_double(pl, "mibps", 0);
		json_t *nd = NULL;

		if ((rc = node_allocated(req->db, node, &alloc, NULL)) != AQ_OK ||
		    (rc = db_get(req->db, node, &nd)) != AQ_OK)
			goto out;
		if (mibps > old && alloc - old + mibps > api_json_double(nd, "throughputCeilingMibps", 0) + 1e-6)
			rc = aq_fail(msg, AQ_EEXHAUSTED, "node %s has %.2f MiB/s of headroom; the volume needs %.2f more",
				     node, api_json_double(nd, "throughputCeilingMibps", 0) - alloc, mibps - old);
		json_decref(nd);
		if (rc != AQ_OK)
			goto out;
		json_object_set_new(pl, "mibps", json_real(mibps));
	}
	json_object_set_new(pl, "op", json_string(op_name));
	json_object_set_new(pl, "action", json_string(action));
	json_object_set_new(pl, "pendingGeneration", json_integer(0));
	rc = db_put(req->db, "placement", node, pname, pl, false);
out:
	json_decref(pl);
	return rc;
}
