/* srv_drain: a node's life after its join: failover, drain, undrain, delete.
 *
 *   READY     serves its volumes and takes new ones.
 *   DRAINING  (POST /v1/nodes/N:drain) takes no new volumes; its volumes
 *             move to READY nodes of the location within their ceilings. A
 *             drain that would leave volumes behind (no other READY node has
 *             room) is refused unless force=true; a forced drain keeps
 *             serving what could not move, and every reconciler pass tries
 *             again, so the moves resume by themselves when a node joins or
 *             is undrained. POST /v1/nodes/N:undrain makes it READY again
 *             (volumes that moved away stay where they are).
 *   DOWN      silent for --node-down-seconds: its volumes move to READY nodes,
 *             past ceilings if need be (availability first), again on every
 *             pass while some wait. A volume that finds no node says so in
 *             its stateDetails (it stays READY: GCNV has no state for it).
 *   deleted   DELETE /v1/nodes/N once it holds no volumes (DRAINING or DOWN):
 *             its row goes, and with it the incarnation its node tokens carry,
 *             so they are refused from then on; the name may join again.
 * A moved volume's placement waits for a generation of its new node, so the
 * move (and any operation that was pending on the old node) finishes only
 * when the new node reports it applied, i.e. serves it.
 */
#include "server/srv_drain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "server/srv_lead.h"
#include "server/srv_node.h"
#include "server/srv_place.h"
#include "server/srv_req.h"
#include "util/ut_log.h"

/* Say in a READY volume's stateDetails what its move means (text "" clears
 * it); written only when it changes. */
static int vol_note(struct db *db, const char *vn, const char *text)
{
	const char *slash = strstr(vn, "/volumes/");
	char parent[600];
	json_t *vol = NULL;
	int rc;

	if (!slash || (rc = db_get(db, vn, &vol)) == AQ_ENOENT)
		return AQ_OK;
	if (rc == AQ_OK && strcmp(api_json_str(vol, "state", ""), "READY") == 0 &&
	    strcmp(api_json_str(vol, "stateDetails", ""), text) != 0) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - vn), vn);
		json_object_set_new(vol, "stateDetails", json_string(text));
		rc = db_put(db, "volume", parent, vn, vol, false);
	}
	json_decref(vol);
	return rc;
}

/* Move the placements pls (as read in the caller's transaction; those no
 * longer on node are skipped) to other READY nodes of node's location, in
 * the caller's transaction. *left: those that found no node; *moved: those
 * that did. */
static int move_away(struct db *db, const json_t *node, const json_t *pls, bool overcommit, int *left, int *moved)
{
	const char *nn = api_json_str(node, "name", ""), *loc = api_json_str(node, "location", "");
	const char *state = api_json_str(node, "state", ""), *id = strchr(nn, '/') ? strchr(nn, '/') + 1 : nn;
	json_t *pl;
	char text[700];
	size_t i;
	int rc = AQ_OK;

	*left = *moved = 0;
	json_array_foreach(pls, i, pl) {
		const char *vn = api_json_str(pl, "volume", ""), *tid;
		char to[200], pname[800];
		aq_msg why = { .text = "" };

		if (strcmp(api_json_str(pl, "node", ""), nn) != 0)
			continue; /* moved meanwhile */
		if (srv_place_pick(db, loc, nn, api_json_double(pl, "mibps", 0), overcommit, to, sizeof(to), &why) != AQ_OK) {
			(*left)++;
			if (strcmp(state, "DOWN") != 0)
				continue; /* a DRAINING node still serves it */
			snprintf(text, sizeof(text),
				 "no node serves this volume: its node %s is DOWN and location %s has no other READY node to "
				 "take it; it moves by itself once a node joins or is undrained", id, loc);
			if ((rc = vol_note(db, vn, text)) != AQ_OK)
				break;
			continue;
		}
		snprintf(pname, sizeof(pname), "placements/%s", vn);
		json_object_set_new(pl, "node", json_string(to));
		json_object_set_new(pl, "from", json_string(nn));
		/* whatever waited for the old node now waits for the new one; a
		 * placement with nothing pending records the move, so the volume's
		 * mountOptions follow once the new node serves it */
		json_object_set_new(pl, "pendingGeneration", json_integer(0));
		if (!*api_json_str(pl, "action", ""))
			json_object_set_new(pl, "action", json_string("move"));
		tid = strchr(to, '/') ? strchr(to, '/') + 1 : to;
		snprintf(text, sizeof(text), "moving from node %s (%s) to node %s: not served until %s applies it", id,
			 state, tid, tid);
		if ((rc = db_put(db, "placement", to, pname, pl, false)) != AQ_OK || (rc = vol_note(db, vn, text)) != AQ_OK)
			break;
		(*moved)++;
	}
	return rc;
}

/* The placements named in names[from, from + n), as stored now: {name:
 * doc} turned into an array (those gone are left out). */
static int placements_slice(struct db *db, const json_t *names, size_t from, size_t n, json_t **out)
{
	json_t *want = json_array(), *docs = NULL, *doc;
	const char *k;
	int rc = AQ_ENOMEM;

	*out = NULL;
	if (!want)
		goto out;
	for (size_t i = from; i < from + n && i < json_array_size(names); i++)
		json_array_append(want, json_array_get(names, i));
	if ((rc = db_get_many(db, want, &docs)) != AQ_OK)
		goto out;
	rc = AQ_ENOMEM;
	if (!(*out = json_array()))
		goto out;
	json_object_foreach(docs, k, doc)
		json_array_append(*out, doc);
	rc = AQ_OK;
out:
	json_decref(want);
	json_decref(docs);
	return rc;
}

/* One node's lifecycle step (srv_drain_pass): DOWN when silent, then its
 * placements move, SRV_DRAIN_BATCH a transaction, each checking the fence
 * and that the node is still DOWN or DRAINING (a report that brought it
 * back, an undrain, stops the moves). Between two transactions the agents'
 * reports queued for the writer go first (db_group_yield), so a renewal
 * waits for one batch, not for the node's every volume. A kill between two
 * batches leaves the node DOWN with volumes: the next pass goes on. True
 * when the node went DOWN or a volume moved. */
static bool drain_node(struct srv *srv, struct db *db, const struct db_fence *fence, const char *nn, bool silent,
		       int64_t seen, int64_t now_ms)
{
	struct db_query q = { .kind = "placement", .parent = nn };
	json_t *all = NULL, *names = json_array(), *pl, *cur = NULL, *pls = NULL;
	bool changed = false;
	size_t i, at = 0;

	if (!names || db_list_all(db, &q, &all, NULL) != AQ_OK)
		goto out;
	json_array_foreach(all, i, pl)
		json_array_append_new(names, json_sprintf("placements/%s", api_json_str(pl, "volume", "")));
	do {
		int left = 0, moved = 0;
		bool down = false, ok = false;
		const char *state;

		if (db_begin(db) != AQ_OK)
			break;
		if (srv_lead_fence(db, fence) == AQ_OK && db_get(db, nn, &cur) == AQ_OK) {
			/* silent still: a report another replica recorded since the
			 * pass read the node list keeps it READY */
			int64_t stored = api_json_int64(json_object_get(cur, "internal"), "lastSeenMs", 0);

			seen = stored > seen ? stored : seen;
			down = silent && at == 0 && strcmp(api_json_str(cur, "state", ""), "DOWN") != 0 &&
			       now_ms - seen > srv->cfg.node_down_ms;
			if (down) {
				UT_WARN("srv_drain", NULL, "node %s silent for %lld ms: DOWN", nn, (long long)(now_ms - seen));
				json_object_set_new(cur, "state", json_string("DOWN"));
			}
			state = api_json_str(cur, "state", "");
			ok = (!down || srv_node_save(db, cur) == AQ_OK) &&
			     (strcmp(state, "DOWN") == 0 || strcmp(state, "DRAINING") == 0) &&
			     placements_slice(db, names, at, SRV_DRAIN_BATCH, &pls) == AQ_OK &&
			     move_away(db, cur, pls, strcmp(state, "DOWN") == 0, &left, &moved) == AQ_OK &&
			     db_commit(db) == AQ_OK;
			changed = changed || (ok && (down || moved > 0));
		}
		db_rollback(db);
		json_decref(cur);
		json_decref(pls);
		cur = pls = NULL;
		if (!ok)
			break;
		at += SRV_DRAIN_BATCH;
		if (at < json_array_size(names))
			db_group_yield(SRV_DRAIN_YIELD_NS);
	} while (at < json_array_size(names) && !__atomic_load_n(&srv->stopping, __ATOMIC_RELAXED));
out:
	json_decref(all);
	json_decref(names);
	return changed;
}

bool srv_drain_pass(struct srv *srv, struct db *db, int64_t now_ms)
{
	struct db_query q = { .kind = "node" };
	json_t *nodes = NULL;
	bool changed;

	if (!srv_lead_held(srv, NULL) || db_list_all(db, &q, &nodes, NULL) != AQ_OK)
		return false;
	changed = srv_drain_pass_nodes(srv, db, nodes, now_ms);
	json_decref(nodes);
	return changed;
}

bool srv_drain_pass_nodes(struct srv *srv, struct db *db, const json_t *nodes, int64_t now_ms)
{
	struct db_fence fence;
	bool changed = false;
	const json_t *n;
	int64_t since;
	size_t i;

	/* the leader's job; its writes carry its epoch (srv_lead.h) */
	if (!srv_lead_held(srv, &fence))
		return false;
	since = srv_lead_since_ms(srv);
	json_array_foreach(nodes, i, n) {
		const char *nn = api_json_str(n, "name", ""), *state = api_json_str(n, "state", "");
		/* seen: by this replica, by the replica it reports to (the node's
		 * lastSeenMs, srv_agent.c), or when this replica began to lead */
		int64_t seen = srv_node_live_last(srv, nn), held = 0;
		int64_t stored = api_json_int64(json_object_get(n, "internal"), "lastSeenMs", 0);
		bool silent;

		if (__atomic_load_n(&srv->stopping, __ATOMIC_RELAXED))
			break; /* the next leader's pass goes on */
		seen = stored > seen ? stored : seen;
		seen = since > seen ? since : seen;
		silent = strcmp(state, "DOWN") != 0 && now_ms - seen > srv->cfg.node_down_ms;

		/* DOWN and DRAINING nodes holding volumes try again every pass */
		if (!silent && (strcmp(state, "DOWN") != 0 && strcmp(state, "DRAINING") != 0))
			continue;
		if (!silent && (db_count(db, "placement", nn, &held) != AQ_OK || held == 0))
			continue;
		if (drain_node(srv, db, &fence, nn, silent, seen, now_ms))
			changed = true;
	}
	return changed;
}

/* Commit a node's change, ring for the node (the moves its change made
 * marked their nodes in the transaction; those it left to the lifecycle
 * follow in the next pass, srv_drain_pass) and answer the node's view
 * (takes *node). */
static int node_commit_answer(struct srv_req *req, json_t **node, json_t **resp)
{
	int rc;

	if ((rc = db_commit(req->db)) != AQ_OK)
		return rc;
	srv_kick(req->srv, api_json_str(*node, "name", ""));
	if ((rc = srv_node_view(req->db, *node)) != AQ_OK)
		return rc;
	*resp = *node;
	*node = NULL;
	return AQ_OK;
}

/* POST /v1/nodes/N:drain[?force=true]: DRAINING, and its volumes move within
 * ceilings. Refused (nothing changes) when some would find no node, unless
 * forced. */
int srv_h_node_drain(struct srv_req *req, json_t **resp)
{
	char name[300];
	json_t *node = NULL, *pls = NULL;
	int left = 0, moved = 0, rc;
	bool force = false;

	if ((rc = srv_query_bool(req, "force", false, &force)) != AQ_OK || (rc = db_begin(req->db)) != AQ_OK)
		return rc;
	if ((rc = srv_node_load(req, name, sizeof(name), &node)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(node, "state", ""), "DOWN") == 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND,
			     "node \"%s\" is DOWN: its volumes move to other nodes by themselves; delete it once it holds "
			     "none (aquifer nodes delete %s), or drain it when its agent is back",
			     req->params[0], req->params[0]);
		goto out;
	}
	json_object_set_new(node, "state", json_string("DRAINING"));
	if ((rc = srv_node_save(req->db, node)) != AQ_OK ||
	    (rc = db_list_all(req->db, &(struct db_query){ .kind = "placement", .parent = name }, &pls, NULL)) != AQ_OK ||
	    (rc = move_away(req->db, node, pls, false, &left, &moved)) != AQ_OK)
		goto out;
	if (left && !force) {
		rc = aq_fail(&req->msg, AQ_EPRECOND,
			     "%d of the %d volumes of node \"%s\" find no other READY node in location %s with room for "
			     "them, so nothing changed: join or undrain a node first, or drain with force=true (aquifer "
			     "nodes drain %s --force): the node is then DRAINING, keeps serving those volumes and they "
			     "move by themselves once a node with room joins or is undrained",
			     left, left + moved, req->params[0], api_json_str(node, "location", ""), req->params[0]);
		goto out;
	}
	rc = node_commit_answer(req, &node, resp);
out:
	db_rollback(req->db);
	json_decref(node);
	json_decref(pls);
	return rc;
}

/* POST /v1/nodes/N:undrain: a DRAINING node is READY again and takes new
 * volumes (and pending moves of other nodes); what moved away stays. */
int srv_h_node_undrain(struct srv_req *req, json_t **resp)
{
	char name[300];
	json_t *node = NULL;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK)
		return rc;
	if ((rc = srv_node_load(req, name, sizeof(name), &node)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(node, "state", ""), "DRAINING") != 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "node \"%s\" is %s, not DRAINING: there is nothing to undrain",
			     req->params[0], api_json_str(node, "state", ""));
		goto out;
	}
	json_object_set_new(node, "state", json_string("READY"));
	if ((rc = srv_node_save(req->db, node)) == AQ_OK)
		rc = node_commit_answer(req, &node, resp);
out:
	db_rollback(req->db);
	json_decref(node);
	return rc;
}

/* DELETE /v1/nodes/N: forget a node that serves nothing (DOWN or drained);
 * its node tokens die with its incarnation. */
int srv_h_node_delete(struct srv_req *req, json_t **resp)
{
	char name[300];
	json_t *node = NULL;
	int64_t held = 0;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK)
		return rc;
	if ((rc = srv_node_load(req, name, sizeof(name), &node)) != AQ_OK ||
	    (rc = db_count(req->db, "placement", name, &held)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(node, "state", ""), "READY") == 0 || held > 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "node \"%s\" is %s and holds %lld volumes; drain it (POST /v1/nodes/%s:drain) or stop its agent first",
			     req->params[0], api_json_str(node, "state", ""), (long long)held, req->params[0]);
		goto out;
	}
	if ((rc = db_delete(req->db, name)) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	UT_INFO("srv_drain", req->id, "node %s deleted; its node tokens are revoked", req->params[0]);
	*resp = json_object();
out:
	db_rollback(req->db);
	json_decref(node);
	return rc;
}
