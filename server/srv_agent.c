/* srv_agent: the calls a node's agent makes (see srv_agent.h): the join
 * (POST /v1/agent/join, with a single-use join token) and the status
 * report every two seconds (POST /v1/agent/status, with the node token the
 * join answered), which feeds liveness, the time series, the volumes'
 * usage and the generation the node applied. A renewal, a report without
 * "volumes" that an agent sends while its full report is late
 * (api_intent.h), feeds all but the series and the volumes' usage. */
#include "server/srv_agent.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_svcaddr.h"
#include "api/api_resource.h"
#include "api/api_intent.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_backup.h"
#include "server/srv_ca.h"
#include "util/ut_clock.h"
#include "util/ut_hostport.h"
#include "server/srv_internal.h"
#include "server/srv_join.h"
#include "server/srv_kick.h"
#include "server/srv_lead.h"
#include "server/srv_node.h"
#include "server/srv_visit.h"
#include "server/srv_req.h"
#include "server/srv_series.h"
#include "server/srv_shelfio.h"
#include "server/srv_snapshot.h"
#include "server/srv_svcaddr.h"
#include "tls/tls.h"
#include "util/ut_log.h"

/* ---- the join ---- */

static int ensure_loc_key(struct db *db, const char *loc, char *hex, size_t cap)
{
	char name[200];
	json_t *doc = NULL;
	int rc;

	snprintf(name, sizeof(name), "locsecrets/%s", loc);
	rc = db_get(db, name, &doc);
	if (rc == AQ_ENOENT) {
		char key[65];

		srv_rand_hex(key, 32);
		doc = json_pack("{s:s}", "handleKey", key);
		if (!doc)
			return AQ_ENOMEM;
		rc = db_put(db, "locsecret", "", name, doc, true);
	}
	if (rc == AQ_OK)
		snprintf(hex, cap, "%s", api_json_str(doc, "handleKey", ""));
	json_decref(doc);
	return rc;
}

/* Spend the join token (in the caller's transaction): record its jti, and
 * forget records of tokens that have expired since (they fail on their exp). */
static int join_spend(struct srv_req *req, const char *node)
{
	struct db_query q = { .kind = "join" };
	char name[100], now[48];
	json_t *doc, *old = NULL, *o;
	long t = (long)time(NULL);
	size_t i;
	int rc;

	snprintf(name, sizeof(name), "joins/%s", req->auth.jti);
	ut_clock_now_text(now, sizeof(now));
	doc = json_pack("{s:s,s:s,s:s,s:s,s:I}", "name", name, "node", node, "location", req->auth.location,
			"joinTime", now, "expiresAt", (json_int_t)req->auth.exp);
	if (!doc)
		return AQ_ENOMEM;
	rc = db_put(req->db, "join", "", name, doc, true);
	json_decref(doc);
	if (rc == AQ_EEXIST)
		return aq_fail(&req->msg, AQ_EACCES,
			       "this join token was already used (a join token joins one node, once); "
			       "mint a new one with aquifer nodes join-token --location=%s", req->auth.location);
	if (rc != AQ_OK || (rc = db_list_all(req->db, &q, &old, &req->msg)) != AQ_OK)
		return rc;
	json_array_foreach(old, i, o)
		if (api_json_int64(o, "expiresAt", 0) < t && (rc = db_delete(req->db, api_json_str(o, "name", ""))) != AQ_OK)
			break;
	json_decref(old);
	return rc;
}

/* The report's smbAddress (api_intent.h) differs from the node's. */
static bool smb_address_moved(const json_t *body, const json_t *node)
{
	const json_t *a = json_object_get(body, API_INTENT_SMB_ADDRESS);

	return json_is_string(a) && strcmp(json_string_value(a), api_json_str(node, API_INTENT_SMB_ADDRESS, "")) != 0;
}

/* The report's serviceAddresses (the addresses the agent holds, issue 25)
 * differ from the node's: absent in the report means none. */
static bool service_addresses_moved(const json_t *body, const json_t *node)
{
	const json_t *a = json_object_get(body, "serviceAddresses"), *b = json_object_get(node, "serviceAddresses");

	if (!json_is_array(a) || json_array_size(a) == 0)
		return json_array_size(b) != 0;
	return !json_equal(a, b);
}

/* Take the body's serviceAddresses into node: at most 4096 strings of an
 * IPv4 address each (srv_svcaddr.h compares them), none: removed. */
static int node_service_addresses(struct srv_req *req, json_t *node)
{
	const json_t *a = json_object_get(req->body, "serviceAddresses"), *s;
	uint32_t ip;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0) {
		json_object_del(node, "serviceAddresses");
		return AQ_OK;
	}
	if (json_array_size(a) > 4096)
		return aq_fail(&req->msg, AQ_EINVAL, "serviceAddresses lists more than 4096 addresses");
	json_array_foreach(a, i, s)
		if (!json_is_string(s) || api_svcaddr_parse_ip(json_string_value(s), &ip) != AQ_OK)
			return aq_fail(&req->msg, AQ_EINVAL, "serviceAddresses[%zu] must be an IPv4 address", i);
	json_object_set_new(node, "serviceAddresses", json_deep_copy(a));
	return AQ_OK;
}

/* Take the body's smbAddress into node: HOST:PORT sets it, "" removes it,
 * absent keeps it. */
static int node_smb_address(struct srv_req *req, json_t *node)
{
	const json_t *a = json_object_get(req->body, API_INTENT_SMB_ADDRESS);
	struct ut_hostport hp;

	if (!a)
		return AQ_OK;
	if (!json_is_string(a))
		return aq_fail(&req->msg, AQ_EINVAL, "smbAddress must be a string HOST:PORT");
	if (!*json_string_value(a)) {
		json_object_del(node, API_INTENT_SMB_ADDRESS);
		return AQ_OK;
	}
	if (ut_hostport_parse(json_string_value(a), API_INTENT_SMB_PORT, 0, &hp, &req->msg) != AQ_OK)
		return aq_fail(&req->msg, AQ_EINVAL, "smbAddress must be HOST:PORT");
	json_object_set_new(node, API_INTENT_SMB_ADDRESS, json_string(json_string_value(a)));
	return AQ_OK;
}

int srv_h_agent_join(struct srv_req *req, json_t **resp)
{
	const json_t *b = req->body;
	const char *node = api_json_str(b, "node", NULL), *loc = api_json_str(b, "location", NULL);
	const char *addr = api_json_str(b, "address", NULL), *nfs = api_json_str(b, "nfsAddress", NULL);
	char name[200], parent[200], now[48], secret[65], key[65], nid[33];
	json_t *doc = NULL, *locdoc = NULL, *tls = NULL, *answer = NULL;
	int rc;

	if (!node || !loc || !addr || !nfs)
		return aq_fail(&req->msg, AQ_EINVAL, "join needs node, location, address and nfsAddress");
	if ((rc = api_id_check(node, "node", &req->msg)) != AQ_OK ||
	    (rc = srv_auth_join_check(&req->auth, node, loc, &req->msg)) != AQ_OK)
		return rc;
	if (strncmp(addr, "http://", 7) != 0 && strncmp(addr, "https://", 8) != 0)
		return aq_fail(&req->msg, AQ_EINVAL, "address must be the agent's http(s) URL");
	/* under TLS: the agent's certificate from its CSR (srv_ca.h) */
	if ((rc = srv_ca_join(req, node, addr, &tls)) != AQ_OK)
		return rc;
	snprintf(name, sizeof(name), "nodes/%s", node);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	if ((rc = db_begin(req->db)) != AQ_OK)
		goto out;
	if ((rc = db_get(req->db, parent, &locdoc)) == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "location \"%s\" not found", loc);
	if (rc != AQ_OK)
		goto out;
	if ((rc = db_get(req->db, name, &doc)) == AQ_OK) {
		rc = aq_fail(&req->msg, AQ_EEXIST,
			     "node \"%s\" is already joined (location %s, %s, at %s); a node joins once. To register it "
			     "again, drain it (aquifer nodes drain %s) until it holds no volumes, delete it "
			     "(aquifer nodes delete %s), then join with a new join token",
			     node, api_json_str(doc, "location", ""), api_json_str(doc, "state", ""),
			     api_json_str(doc, "address", ""), node, node);
		goto out;
	}
	if (rc != AQ_ENOENT || (rc = join_spend(req, node)) != AQ_OK)
		goto out;
	ut_clock_now_text(now, sizeof(now));
	srv_rand_hex(secret, 32);
	srv_rand_hex(nid, 16);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:I,s:I,s:{s:s,s:s,s:I}}", "name", name,
			"createTime", now, "location", loc, "state", "READY", "lastSeenTime", now, "address", addr,
			"nfsAddress", nfs, "agentVersion", api_json_str(b, "agentVersion", ""),
			"throughputCeilingMibps", api_json_double(b, "throughputCeilingMibps", SRV_NODE_READ_MIBPS),
			"writeThroughputCeilingMibps", api_json_double(b, "writeThroughputCeilingMibps", SRV_NODE_WRITE_MIBPS),
			"generation", (json_int_t)0, "appliedGeneration", (json_int_t)0, "internal", "pushSecret", secret,
			"incarnation", nid, "lastSeenMs", (json_int_t)ut_clock_real_ms());
	answer = json_object();
	if (!doc || !answer) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = node_smb_address(req, doc)) != AQ_OK)
		goto out;
	if ((rc = db_put(req->db, "node", parent, name, doc, true)) != AQ_OK ||
	    (rc = ensure_loc_key(req->db, loc, key, sizeof(key))) != AQ_OK ||
	    (rc = srv_node_token_issue(req->srv, node, loc, nid, answer, &req->msg)) != AQ_OK ||
	    (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	json_object_set_new(answer, "pushSecret", json_string(secret));
	json_object_set_new(answer, "handleKey", json_string(key));
	json_object_set_new(answer, "generation", json_integer(0));
	if (tls)
		json_object_update(answer, tls);
	UT_INFO("srv_agent", req->id, "node %s joined %s from %s", node, loc, addr);
	*resp = answer;
	answer = NULL;
	srv_node_live_seen(req->srv, name, ut_clock_real_ms());
	srv_kick(req->srv, name);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(locdoc);
	json_decref(tls);
	json_decref(answer);
	return rc;
}

/* ---- status reports ---- */

/* The node a node token speaks for: its own node, of the incarnation the
 * token was issued to (srv_auth_node_check). */
static int node_of_token(struct srv_req *req, struct db *db, char *name, size_t cap, json_t **doc)
{
	int rc;

	if (req->auth.role != SRV_ROLE_NODE)
		return aq_fail(&req->msg, AQ_EACCES, "only a joined node may report status");
	if (strcmp(req->auth.use, SRV_USE_JOIN) == 0)
		return aq_fail(&req->msg, AQ_EUNAUTH, "a join token only joins; report with the node token the join answered");
	snprintf(name, cap, "nodes/%s", req->auth.subject);
	rc = db_get(db, name, doc);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, AQ_EUNAUTH,
			       "this token belongs to no joined node (node \"%s\" was deleted or never joined); join it with a new join token",
			       req->auth.subject);
	if (rc == AQ_OK && (rc = srv_auth_node_check(&req->auth, *doc, &req->msg)) != AQ_OK) {
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
		 api_volume_pool_id(vol));
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
 * (the shelf's failed resize, else the tiering problem the agent reports,
 * "" once it is fine again). The
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
	const char *sdet = api_json_str(v, "shelfDetails", "");

	/* GCNV counts snapshot space in the volume's used capacity */
	r->used = gib_up(used_b + api_json_int64(v, "snapshotBytes", 0));
	r->hot = gib_up(hot_b);
	r->cold = gib_up(cold_b);
	r->details[0] = '\0';
	if (*sdet) /* a resize the shelf could not make: serving at the old size */
		snprintf(r->details, sizeof(r->details), "shelf: %.500s", sdet);
	else if (*tdet)
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
			 api_volume_pool_id(vol));
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
 * changes; liveness itself is tracked in memory by the leader. A replica
 * that does not lead (srv_lead.h) makes it durable every quarter of
 * node-down-seconds, since the leader sees its reports only so. */
#define NODE_SEEN_PERSIST_MS 30000

static int64_t node_seen_persist_ms(struct srv *srv)
{
	return srv_lead_held(srv, NULL) ? NODE_SEEN_PERSIST_MS : srv->cfg.node_down_ms / 4;
}

/* The documents of the volumes a report names and of their placements,
 * {name: doc}, read with db_get_many, and *snaps {volume name: true} of
 * those with snapshot work to report on (a snapref or a snaprevert; the
 * others have none, srv_snapshot_report would find nothing): four queries,
 * not four per volume. */
static int report_docs(struct db *db, const json_t *vols, json_t **known, json_t **snaps)
{
	json_t *names = json_array(), *pnames = json_array(), *rnames = json_array(), *v, *pls = NULL, *revs = NULL;
	const char *rn;
	size_t i;
	int rc = AQ_ENOMEM;

	if (!names || !pnames || !rnames)
		goto out;
	json_array_foreach(vols, i, v) {
		const char *vn = api_json_str(v, "name", "");

		json_array_append_new(names, json_string(vn));
		json_array_append_new(pnames, json_sprintf("placements/%s", vn));
		json_array_append_new(rnames, json_sprintf("snapreverts/%s", vn));
	}
	if ((rc = db_get_many(db, names, known)) != AQ_OK || (rc = db_get_many(db, pnames, &pls)) != AQ_OK ||
	    (rc = db_parents_with(db, "snapref", names, snaps)) != AQ_OK ||
	    (rc = db_get_many(db, rnames, &revs)) != AQ_OK)
		goto out;
	json_object_foreach(revs, rn, v)
		json_object_set_new(*snaps, rn + strlen("snapreverts/"), json_true());
	rc = json_object_update(*known, pls) == 0 ? AQ_OK : AQ_ENOMEM;
out:
	json_decref(names);
	json_decref(pnames);
	json_decref(rnames);
	json_decref(pls);
	json_decref(revs);
	return rc;
}

/* A report's write (db_group_run's body: it may share its transaction
 * with other reports and visits, and run again alone): the node's
 * liveness, applied generation and addresses, the usage of the volumes
 * the read pass saw change (todo), snapshot and backup progress. *doc
 * gets the node as written; kick: its intent changed. */
struct st_tx {
	struct srv_req *req;
	const json_t *todo;
	int64_t applied, t;
	json_t *doc;
	bool kick;
};

static int status_body(struct db *db, void *arg)
{
	struct st_tx *a = arg;
	struct srv_req *req = a->req;
	char name[200], parent[200], now[48];
	json_t *doc = NULL, *v;
	bool changed = true, kick = false;
	size_t i;
	int rc;

	json_decref(a->doc);
	a->doc = NULL;
	a->kick = false;
	if ((rc = node_of_token(req, db, name, sizeof(name), &doc)) != AQ_OK)
		goto out;
	ut_clock_now_text(now, sizeof(now));
	if (strcmp(api_json_str(doc, "state", ""), "DOWN") == 0) {
		json_object_set_new(doc, "state", json_string("READY"));
		kick = true; /* back: what moved away while it was DOWN leaves its intent */
	}
	json_object_set_new(doc, "lastSeenTime", json_string(now));
	if (a->applied > api_json_int64(doc, "appliedGeneration", 0) && a->applied <= api_json_int64(doc, "generation", 0))
		json_object_set_new(doc, "appliedGeneration", json_integer(a->applied));
	json_object_set_new(json_object_get(doc, "internal"), "lastSeenMs", json_integer(a->t));
	if (json_object_get(req->body, "agentVersion"))
		json_object_set(doc, "agentVersion", json_object_get(req->body, "agentVersion"));
	if ((rc = node_smb_address(req, doc)) != AQ_OK || (rc = node_service_addresses(req, doc)) != AQ_OK)
		goto out;
	snprintf(parent, sizeof(parent), "locations/%s", api_json_str(doc, "location", ""));
	if ((rc = db_put(db, "node", parent, name, doc, false)) != AQ_OK)
		goto out;
	/* usage of the volumes this node serves, where the read pass saw a change */
	json_array_foreach(a->todo, i, v) {
		const char *vn = api_json_str(v, "name", "");
		char pname[800], vparent[600];
		json_t *pl = NULL, *vol = NULL;
		const char *slash = strstr(vn, "/volumes/");
		struct vol_report r;
		bool repriced = false;

		snprintf(pname, sizeof(pname), "placements/%s", vn);
		if (!slash || db_get(db, pname, &pl) != AQ_OK ||
		    strcmp(api_json_str(pl, "node", ""), name) != 0 || db_get(db, vn, &vol) != AQ_OK) {
			json_decref(pl);
			continue;
		}
		vol_report_read(v, &r);
		if (vol_report_differs(&r, vol)) {
			vol_report_apply(&req->srv->cfg.math, db, &r, vol, &repriced);
			snprintf(vparent, sizeof(vparent), "%.*s", (int)(slash - vn), vn);
			rc = db_put(db, "volume", vparent, vn, vol, false);
		}
		/* snapshot creates, deletes and reverts the node finished: a delete
		 * or a revert done changes its intent */
		if (rc == AQ_OK)
			rc = srv_snapshot_report(db, vol, v, true, &repriced);
		kick = kick || repriced;
		json_decref(pl);
		json_decref(vol);
		if (rc != AQ_OK)
			goto out;
	}
	if ((rc = srv_backup_report(db, doc, req->body, true, &changed, &kick)) != AQ_OK)
		goto out;
	a->doc = doc;
	doc = NULL;
	a->kick = kick;
out:
	json_decref(doc);
	return rc;
}

int srv_h_agent_status(struct srv_req *req, json_t **resp)
{
	char name[200];
	json_t *doc = NULL, *vols = json_object_get(req->body, "volumes"), *v, *fed = NULL, *todo = NULL, *known = NULL,
	       *snaps = NULL;
	int64_t applied = api_json_int64(req->body, "appliedGeneration", -1), t = ut_clock_real_ms();
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
	todo = json_array(); /* the reports of volumes whose documents change */
	/* read first: most reports change nothing durable */
	if ((rc = node_of_token(req, req->db, name, sizeof(name), &doc)) != AQ_OK)
		goto out;
	srv_node_live_seen(req->srv, name, t);
	/* A generation above the node's own was never pushed by us (a node that
	 * kept an intent.json of an earlier incarnation, a restored database):
	 * it proves nothing was applied. It is not recorded and finishes
	 * nothing; the reconciler pushes past it (srv_pusher.c, pu_push_past). */
	if (applied > api_json_int64(doc, "generation", 0)) {
		srv_kick(req->srv, name);
		applied = api_json_int64(doc, "appliedGeneration", 0);
		ahead = true;
	}
	changed = strcmp(api_json_str(doc, "state", ""), "DOWN") == 0 ||
		  applied > api_json_int64(doc, "appliedGeneration", 0) ||
		  t - api_json_int64(json_object_get(doc, "internal"), "lastSeenMs", 0) > node_seen_persist_ms(req->srv);
	if (smb_address_moved(req->body, doc) || service_addresses_moved(req->body, doc))
		changed = true;
	/* the reported volumes and their placements, in two queries; a
	 * renewal (no "volumes", api_intent.h) names none */
	if (vols && (rc = report_docs(req->db, vols, &known, &snaps)) != AQ_OK)
		goto out;
	json_array_foreach(vols, i, v) {
		char pname[800];
		json_t *pl, *vol;
		struct vol_report r;
		bool vchanged = false;

		snprintf(pname, sizeof(pname), "placements/%s", api_json_str(v, "name", ""));
		pl = json_object_get(known, pname);
		vol = json_object_get(known, api_json_str(v, "name", ""));
		if (pl && vol && strcmp(api_json_str(pl, "node", ""), name) == 0) {
			vol_report_read(v, &r);
			if (vol_report_differs(&r, vol))
				vchanged = true;
			if (json_object_get(snaps, api_json_str(v, "name", "")) &&
			    srv_snapshot_report(req->db, vol, v, false, &vchanged) != AQ_OK)
				vchanged = true; /* the write pass tells */
			series_entry(fed, v, vol);
		}
		/* only these are written again under the write lock: a report that
		 * moves the node's applied generation alone costs O(1) there, not
		 * O(volumes on the node) */
		if (vchanged) {
			changed = true;
			json_array_append(todo, v);
		}
	}
	/* backup jobs' progress and ends (srv_backup.h) */
	if (srv_backup_report(req->db, doc, req->body, false, &changed, &kick) != AQ_OK)
		changed = true;
	kick = false;
	/* the time series: in memory, every report with figures (srv_series.h);
	 * a renewal has none, and is no sample of an idle node */
	if (vols) {
		srv_series_report(req->srv->series, name, api_json_str(doc, "location", ""),
				  api_json_double(doc, "throughputCeilingMibps", 0), fed, t);
		srv_shelfio_report(req->srv->shelfio, name, api_json_str(doc, "location", ""),
				   json_object_get(req->body, "shelf"), t);
	}
	if (!changed)
		goto answer;
	json_decref(doc);
	doc = NULL;
	/* in one transaction with other reports and visits (db_group_run):
	 * one commit for many, not one each */
	{
		struct st_tx w = { .req = req, .todo = todo, .applied = applied, .t = t };

		rc = db_group_run(req->db, DB_GROUP_LIVE, status_body, &w);
		doc = w.doc;
		kick = w.kick;
		if (rc != AQ_OK)
			goto out;
	}
	if (kick)
		srv_kick(req->srv, name); /* a QoS limit followed the cold tier, a backup job ended */
	if (!ahead &&
	    (rc = srv_visit_applied(req->srv, req->db, name, applied, json_object_get(req->body, "failed"))) != AQ_OK)
		goto out;
answer:
	*resp = json_pack("{s:I,s:I}", "generation", (json_int_t)api_json_int64(doc, "generation", 0),
			  "serviceAddressLeaseMs", (json_int_t)srv_svcaddr_lease_ms(req->srv->cfg.node_down_ms));
	if (*resp && srv_auth_node_stale(&req->auth, req->srv->cfg.node_token_ttl, (long)(t / 1000)))
		rc = status_renew(req, name, doc, *resp);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(fed);
	json_decref(todo);
	json_decref(known);
	json_decref(snaps);
	return rc;
}

