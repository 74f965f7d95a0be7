/* srv_join: the tokens of how a storage node comes into the cluster (the
 * join call itself is srv_agent.c's).
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
#include "server/srv_join.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_ca.h"
#include "server/srv_internal.h"
#include "server/srv_req.h"
#include "tls/tls.h"
#include "util/ut_clock.h"
#include "util/ut_hex.h"

void srv_rand_hex(char *out, size_t bytes)
{
	unsigned char b[64];

	if (bytes > sizeof(b))
		bytes = sizeof(b);
	RAND_bytes(b, (int)bytes);
	ut_hex_encode(b, bytes, out, bytes * 2 + 1);
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
	ut_clock_format((int64_t)t * 1000000000LL, 0, out, cap);
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
	if ((rc = srv_auth_token_make(req->srv->key, &who, ttl, &tok, &req->msg)) != AQ_OK)
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
	if ((rc = srv_auth_token_make(srv->key, &who, srv->cfg.node_token_ttl, &tok, msg)) != AQ_OK)
		return rc;
	rfc3339(time(NULL) + srv->cfg.node_token_ttl, exp, sizeof(exp));
	json_object_set_new(into, "nodeToken", json_string(tok));
	json_object_set_new(into, "nodeTokenExpireTime", json_string(exp));
	free(tok);
	return AQ_OK;
}
