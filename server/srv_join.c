/* srv_join: how a storage node comes into the cluster.
 *
 * A cluster admin mints a join token (POST /v1/locations/L:joinToken or
 * `aquiferd token --role node --location L`): single-use, bound to its
 * location and, when it names one, to a node name. POST /v1/agent/join spends
 * it (its jti is recorded in the same transaction that creates the node, as
 * "joins/<jti>" until the token would have expired anyway) and answers the
 * node's own credentials: a node token bound to the node's incarnation (a
 * random id made here, so that deleting the node and joining the name again
 * revokes every older token), the push secret and the location's handle key.
 * A name that is already joined is refused: registering it again is an
 * explicit admin step (drain, then DELETE /v1/nodes/N, then a new join).
 * The installCommand of a join token is built from the configured public URL
 * (never from the request's Host header), every word shell-quoted.
 */
#include "server/srv_node.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_schema.h"
#include "server/srv_ca.h"
#include "tls/tls.h"

void srv_rand_hex(char *out, size_t bytes)
{
	unsigned char b[64];

	if (bytes > sizeof(b))
		bytes = sizeof(b);
	RAND_bytes(b, (int)bytes);
	for (size_t i = 0; i < bytes; i++)
		snprintf(out + i * 2, 3, "%02x", b[i]);
}

/* ---- the public URL and the install command (pure) ---- */

int srv_shell_quote(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	bool plain = *s != '\0';

	for (const char *p = s; *p; p++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:=@%+,", *p))
			plain = false;
	if (plain)
		return snprintf(out, cap, "%s", s) < (int)cap ? AQ_OK : AQ_ETOOBIG;
	/* 'it'\''s': a single quote ends the quoting, is escaped, reopens it */
	if (cap < 3)
		return AQ_ETOOBIG;
	out[n++] = '\'';
	for (const char *p = s; *p; p++) {
		const char *piece = *p == '\'' ? "'\\''" : NULL;
		size_t len = piece ? 4 : 1;

		if (n + len + 2 > cap)
			return AQ_ETOOBIG;
		memcpy(out + n, piece ? piece : p, len);
		n += len;
	}
	out[n++] = '\'';
	out[n] = '\0';
	return AQ_OK;
}

int srv_public_url_check(const char *url, aq_msg *msg)
{
	const char *host = strncmp(url, "https://", 8) == 0 ? url + 8 : strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;

	if (!host)
		return aq_fail(msg, AQ_EINVAL, "public-url must start with https:// or http://, got \"%s\"", url);
	if (!*host || *host == '/')
		return aq_fail(msg, AQ_EINVAL, "public-url \"%s\" names no host", url);
	for (const char *p = url; *p; p++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%", *p))
			return aq_fail(msg, AQ_EINVAL, "public-url may hold only URL characters (RFC 3986), got \"%s\"", url);
	return AQ_OK;
}

void srv_public_url_default(const char *listen, bool tls, const char *hostname, char *out, size_t cap)
{
	const char *colon = strrchr(listen, ':');
	size_t hl = colon ? (size_t)(colon - listen) : strlen(listen);
	bool wild = (hl == 7 && strncmp(listen, "0.0.0.0", 7) == 0) || (hl == 4 && strncmp(listen, "[::]", 4) == 0) ||
		    hl == 0;

	if (wild)
		snprintf(out, cap, "%s://%s%s", tls ? "https" : "http", hostname, colon ? colon : "");
	else
		snprintf(out, cap, "%s://%s", tls ? "https" : "http", listen);
}

int srv_install_command(const char *public_url, const char *token, const char *loc, const char *node, bool tls,
			char *out, size_t cap)
{
	const char *words[16];
	size_t nw = 0, n = 0;
	char q[5000];

	words[nw++] = "install-agent.sh";
	words[nw++] = "--server";
	words[nw++] = public_url;
	words[nw++] = "--token";
	words[nw++] = token;
	words[nw++] = "--location";
	words[nw++] = loc;
	if (node && *node) {
		words[nw++] = "--node";
		words[nw++] = node;
	}
	words[nw++] = "--shelf";
	words[nw++] = "/srv/aquifer/shelf";
	if (tls) {
		words[nw++] = "--ca-file";
		words[nw++] = "/etc/aquifer/ca.crt";
	}
	out[0] = '\0';
	for (size_t i = 0; i < nw; i++) {
		if (srv_shell_quote(words[i], q, sizeof(q)) != AQ_OK ||
		    snprintf(out + n, cap - n, "%s%s", i ? " " : "", q) >= (int)(cap - n))
			return AQ_ETOOBIG;
		n += strlen(out + n);
	}
	return AQ_OK;
}

/* ---- join tokens ---- */

static void rfc3339(time_t t, char *out, size_t cap)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* POST /v1/locations/L:joinToken?ttl=S&node=N: a single-use join token for L
 * (and only node N when given). */
int srv_h_join_token(struct srv_req *req, json_t **resp)
{
	struct srv_auth who = { .role = SRV_ROLE_NODE };
	const char *ttls = srv_query(req, "ttl"), *node = srv_query(req, "node");
	long ttl = ttls ? strtol(ttls, NULL, 10) : 3600;
	char name[200], exp[32], cmd[6000], *tok = NULL;
	json_t *l = NULL;
	bool tls = srv_ca_tls(req->srv);
	int rc;

	if (ttl <= 0 || ttl > 31L * 86400)
		return aq_fail(&req->msg, AQ_EINVAL, "ttl must be 1..%ld seconds", 31L * 86400);
	if (node && (rc = api_id_check(node, "node", &req->msg)) != AQ_OK)
		return rc;
	snprintf(name, sizeof(name), "locations/%s", req->params[0]);
	if ((rc = db_get(req->db, name, &l)) == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "location \"%s\" not found", req->params[0]);
	json_decref(l);
	if (rc != AQ_OK)
		return rc;
	snprintf(who.subject, sizeof(who.subject), "join");
	snprintf(who.use, sizeof(who.use), "%s", SRV_USE_JOIN);
	snprintf(who.location, sizeof(who.location), "%s", req->params[0]);
	snprintf(who.node, sizeof(who.node), "%s", node ? node : "");
	if ((rc = srv_token_make(req->srv->key, &who, ttl, &tok, &req->msg)) != AQ_OK)
		return rc;
	rfc3339(time(NULL) + ttl, exp, sizeof(exp));
	/* the one line an admin runs on the new node (deploy/install-agent.sh);
	 * under TLS the node verifies aquiferd from its first contact on with
	 * the CA given here as caCertificate, saved on the node first */
	if ((rc = srv_install_command(req->srv->cfg.public_url, tok, req->params[0], node, tls, cmd, sizeof(cmd))) != AQ_OK)
		goto out;
	*resp = json_pack("{s:s,s:s,s:s,s:s}", "token", tok, "expireTime", exp, "location", req->params[0],
			  "installCommand", cmd);
	if (*resp && node)
		json_object_set_new(*resp, "node", json_string(node));
	if (*resp && tls)
		json_object_set_new(*resp, "caCertificate", json_string(tls_ca_pem(req->srv->ca)));
	rc = *resp ? AQ_OK : AQ_ENOMEM;
out:
	free(tok);
	return rc;
}

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
	api_time_now(now, sizeof(now));
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

int srv_node_token_issue(struct srv *srv, const char *node, const char *loc, const char *nid, json_t *into,
			 aq_msg *msg)
{
	struct srv_auth who = { .role = SRV_ROLE_NODE };
	char exp[32], *tok = NULL;
	int rc;

	snprintf(who.subject, sizeof(who.subject), "%s", node);
	snprintf(who.location, sizeof(who.location), "%s", loc);
	snprintf(who.use, sizeof(who.use), "%s", SRV_USE_NODE);
	snprintf(who.nid, sizeof(who.nid), "%s", nid);
	if ((rc = srv_token_make(srv->key, &who, srv->cfg.node_token_ttl, &tok, msg)) != AQ_OK)
		return rc;
	rfc3339(time(NULL) + srv->cfg.node_token_ttl, exp, sizeof(exp));
	json_object_set_new(into, "nodeToken", json_string(tok));
	json_object_set_new(into, "nodeTokenExpireTime", json_string(exp));
	free(tok);
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
	    (rc = srv_join_check(&req->auth, node, loc, &req->msg)) != AQ_OK)
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
	api_time_now(now, sizeof(now));
	srv_rand_hex(secret, 32);
	srv_rand_hex(nid, 16);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:f,s:I,s:I,s:{s:s,s:s,s:I}}", "name", name,
			"createTime", now, "location", loc, "state", "READY", "lastSeenTime", now, "address", addr,
			"nfsAddress", nfs, "agentVersion", api_json_str(b, "agentVersion", ""),
			"throughputCeilingMibps", api_json_double(b, "throughputCeilingMibps", SRV_NODE_READ_MIBPS),
			"writeThroughputCeilingMibps", api_json_double(b, "writeThroughputCeilingMibps", SRV_NODE_WRITE_MIBPS),
			"generation", (json_int_t)0, "appliedGeneration", (json_int_t)0, "internal", "pushSecret", secret,
			"incarnation", nid, "lastSeenMs", (json_int_t)srv_node_now_ms());
	answer = json_object();
	if (!doc || !answer) {
		rc = AQ_ENOMEM;
		goto out;
	}
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
	fprintf(stderr, "aquiferd: node %s joined %s from %s\n", node, loc, addr);
	*resp = answer;
	answer = NULL;
	srv_live_seen(req->srv, name, srv_node_now_ms());
	srv_reconcile_kick(req->srv, name);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(locdoc);
	json_decref(tls);
	json_decref(answer);
	return rc;
}
