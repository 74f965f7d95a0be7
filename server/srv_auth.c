/* srv_auth: bearer tokens (JWT, HS256, libjwt) and the per-route checks.
 *
 * Tokens carry: sub (who), role (admin|editor|viewer|node|metrics), project
 * (absent for the cluster admin, nodes and metrics), loc (nodes: the location
 * they join), iat, exp, jti; node-role tokens also use (join|node), node (a
 * join token's only node name) and nid (a node token's incarnation, see
 * srv_auth.h). They are signed with a 256-bit key kept with the state (mode
 * 0600, created on first use) and verified against it; only HS256 is
 * accepted, so "alg": "none" and algorithm-confusion tokens fail.
 */
#include "server/srv_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <jwt.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/api_schema.h"
#include "util/ut_file.h"
#include "util/ut_hash.h"
#include "util/ut_hex.h"
#include "util/ut_log.h"

static const char *const role_names[] = {
	[SRV_ROLE_NONE] = "", [SRV_ROLE_VIEWER] = "viewer", [SRV_ROLE_EDITOR] = "editor",
	[SRV_ROLE_ADMIN] = "admin", [SRV_ROLE_NODE] = "node", [SRV_ROLE_METRICS] = "metrics",
};

enum srv_role srv_auth_role_parse(const char *s)
{
	for (int r = SRV_ROLE_VIEWER; r <= SRV_ROLE_METRICS; r++)
		if (s && strcmp(s, role_names[r]) == 0)
			return (enum srv_role)r;
	return SRV_ROLE_NONE;
}

const char *srv_auth_role_name(enum srv_role r)
{
	return r <= SRV_ROLE_METRICS ? role_names[r] : "";
}

void srv_auth_key_path(const char *key_file, const char *state_dir, char *out, size_t cap)
{
	if (key_file[0])
		snprintf(out, cap, "%s", key_file);
	else
		snprintf(out, cap, "%s/aquiferd.key", state_dir);
}

#define KEY_FILE_MAX 65536 /* what is read of a key file; the key is its start */

/* Read the key, or create it on first use: ut_file_create installs it only
 * if no other process created one first (then theirs is read). A longer
 * file is read for its first SRV_KEY_LEN bytes, as it always was. */
int srv_auth_key_load(const char *path, unsigned char key[SRV_KEY_LEN], aq_msg *msg)
{
	unsigned char fresh[SRV_KEY_LEN];
	char *data = NULL;
	size_t n = 0;
	struct stat st;
	int rc;

	if (stat(path, &st) != 0 && errno == ENOENT) {
		if (RAND_bytes(fresh, sizeof(fresh)) != 1)
			return aq_fail(msg, AQ_EIO, "cannot generate a signing key");
		rc = ut_file_create(path, fresh, sizeof(fresh), msg);
		if (rc != AQ_OK && rc != AQ_EEXIST)
			return rc;
	}
	if ((rc = ut_file_read(path, KEY_FILE_MAX, &data, &n, msg)) != AQ_OK)
		return rc;
	if (stat(path, &st) == 0 && (st.st_mode & 077))
		UT_WARN("srv_auth", NULL, "key file %s is readable by others (mode %o)", path, st.st_mode & 0777);
	if (n < SRV_KEY_LEN)
		rc = aq_fail(msg, AQ_EIO, "key file %s must hold %d bytes", path, SRV_KEY_LEN);
	else
		memcpy(key, data, SRV_KEY_LEN);
	free(data);
	return rc;
}

int srv_auth_token_make(const unsigned char key[SRV_KEY_LEN], const struct srv_auth *who, long ttl,
			char **token, aq_msg *msg)
{
	jwt_t *jwt = NULL;
	unsigned char rnd[12];
	char jti[32];
	time_t now = time(NULL);
	int rc = AQ_OK;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return aq_fail(msg, AQ_EIO, "no randomness");
	ut_hex_encode(rnd, sizeof(rnd), jti, sizeof(jti));
	if (jwt_new(&jwt) != 0) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if (jwt_add_grant(jwt, "iss", "aquiferd") || jwt_add_grant(jwt, "sub", who->subject) ||
	    jwt_add_grant(jwt, "role", srv_auth_role_name(who->role)) || jwt_add_grant(jwt, "jti", jti) ||
	    jwt_add_grant_int(jwt, "iat", (long)now) || jwt_add_grant_int(jwt, "exp", (long)now + ttl) ||
	    (who->project[0] && jwt_add_grant(jwt, "project", who->project)) ||
	    (who->location[0] && jwt_add_grant(jwt, "loc", who->location)) ||
	    (who->use[0] && jwt_add_grant(jwt, "use", who->use)) ||
	    (who->node[0] && jwt_add_grant(jwt, "node", who->node)) ||
	    (who->nid[0] && jwt_add_grant(jwt, "nid", who->nid)) ||
	    jwt_set_alg(jwt, JWT_ALG_HS256, key, SRV_KEY_LEN)) {
		rc = aq_fail(msg, AQ_EINTERNAL, "cannot build token");
		goto out;
	}
	if (!(*token = jwt_encode_str(jwt)))
		rc = AQ_ENOMEM;
out:
	jwt_free(jwt);
	return rc;
}

/* Verified tokens, remembered by their exact text so a client that sends the
 * same token on every call pays for JWT parsing once. A slot is found by a
 * cheap hash and hit only when the whole token matches. Only successes are
 * cached; an entry is used only until the token's own expiry. */
#define TOKEN_CACHE 256
#define TOKEN_MAX 4096
static struct token_slot {
	char *tok;
	long exp;
	struct srv_auth who;
} token_cache[TOKEN_CACHE];
static pthread_mutex_t token_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned token_slot_of(const char *tok, size_t len)
{
	return ut_hash_fnv32(tok, len) % TOKEN_CACHE;
}

static bool token_cached(const char *tok, size_t len, struct srv_auth *who)
{
	struct token_slot *t = &token_cache[token_slot_of(tok, len)];
	bool hit;

	pthread_mutex_lock(&token_lock);
	hit = t->tok && strcmp(t->tok, tok) == 0 && t->exp > (long)time(NULL);
	if (hit)
		*who = t->who;
	pthread_mutex_unlock(&token_lock);
	return hit;
}

static void token_remember(const char *tok, size_t len, long exp, const struct srv_auth *who)
{
	struct token_slot *t = &token_cache[token_slot_of(tok, len)];
	char *copy = strdup(tok);

	if (!copy)
		return; /* not cached: the next call verifies again */
	pthread_mutex_lock(&token_lock);
	free(t->tok);
	t->tok = copy;
	t->exp = exp;
	t->who = *who;
	pthread_mutex_unlock(&token_lock);
}

int srv_auth_token_verify(const unsigned char key[SRV_KEY_LEN], const char *authz, struct srv_auth *who,
			  aq_msg *msg)
{
	size_t len;
	jwt_t *jwt = NULL;
	const char *tok, *role, *project, *sub, *loc, *use, *node, *nid, *jti;
	long exp;
	int rc = AQ_OK;

	memset(who, 0, sizeof(*who));
	if (!authz || strncasecmp(authz, "Bearer ", 7) != 0)
		return aq_fail(msg, AQ_EUNAUTH, "missing bearer token: send 'Authorization: Bearer <token>'");
	tok = authz + 7;
	while (*tok == ' ')
		tok++;
	if ((len = strlen(tok)) > TOKEN_MAX)
		return aq_fail(msg, AQ_EUNAUTH, "bearer token is too long");
	if (token_cached(tok, len, who))
		return AQ_OK;
	if (jwt_decode(&jwt, tok, key, SRV_KEY_LEN) != 0 || !jwt) {
		rc = aq_fail(msg, AQ_EUNAUTH, "invalid bearer token (malformed or wrongly signed)");
		goto out;
	}
	if (jwt_get_alg(jwt) != JWT_ALG_HS256) {
		rc = aq_fail(msg, AQ_EUNAUTH, "invalid bearer token: algorithm not accepted");
		goto out;
	}
	errno = 0;
	exp = jwt_get_grant_int(jwt, "exp");
	if (errno == ENOENT || exp <= (long)time(NULL)) {
		rc = aq_fail(msg, AQ_EUNAUTH, "bearer token has expired (or carries no expiry)");
		goto out;
	}
	role = jwt_get_grant(jwt, "role");
	who->role = srv_auth_role_parse(role);
	if (who->role == SRV_ROLE_NONE) {
		rc = aq_fail(msg, AQ_EUNAUTH, "bearer token carries no known role");
		goto out;
	}
	project = jwt_get_grant(jwt, "project");
	sub = jwt_get_grant(jwt, "sub");
	loc = jwt_get_grant(jwt, "loc");
	use = jwt_get_grant(jwt, "use");
	node = jwt_get_grant(jwt, "node");
	nid = jwt_get_grant(jwt, "nid");
	jti = jwt_get_grant(jwt, "jti");
	snprintf(who->project, sizeof(who->project), "%s", project ? project : "");
	snprintf(who->subject, sizeof(who->subject), "%s", sub ? sub : "");
	snprintf(who->location, sizeof(who->location), "%s", loc ? loc : "");
	snprintf(who->use, sizeof(who->use), "%s", use ? use : "");
	snprintf(who->node, sizeof(who->node), "%s", node ? node : "");
	snprintf(who->nid, sizeof(who->nid), "%s", nid ? nid : "");
	snprintf(who->jti, sizeof(who->jti), "%s", jti ? jti : "");
	who->exp = exp;
	errno = 0;
	who->iat = jwt_get_grant_int(jwt, "iat");
	if (errno == ENOENT)
		who->iat = 0;
	who->cluster = who->role == SRV_ROLE_ADMIN && !project;
	token_remember(tok, len, exp, who);
out:
	jwt_free(jwt);
	return rc;
}

int srv_auth_route(const struct srv_auth *a, enum srv_access access, const char *project, aq_msg *msg)
{
	enum srv_role need;

	if (access == SRV_ACCESS_OPEN || a->cluster)
		return AQ_OK;
	if (a->role == SRV_ROLE_METRICS)
		return aq_fail(msg, AQ_EACCES, "a metrics token may only read GET /metrics");
	switch (access) {
	case SRV_ACCESS_ANY:
		return a->role == SRV_ROLE_NODE ? aq_fail(msg, AQ_EACCES, "node tokens may only call the agent API")
						: AQ_OK;
	case SRV_ACCESS_NODE:
		return a->role == SRV_ROLE_NODE ? AQ_OK
						: aq_fail(msg, AQ_EACCES, "only storage nodes may call this method");
	case SRV_ACCESS_CLUSTER:
		return aq_fail(msg, AQ_EACCES, "this method needs a cluster admin token");
	default:
		break;
	}
	need = access == SRV_ACCESS_ADMIN ? SRV_ROLE_ADMIN : access == SRV_ACCESS_EDITOR ? SRV_ROLE_EDITOR : SRV_ROLE_VIEWER;
	if (a->role == SRV_ROLE_NODE || !project || strcmp(a->project, project) != 0)
		return aq_fail(msg, AQ_EACCES, "permission denied on project \"%s\" (or it does not exist)",
			       project ? project : "");
	if (a->role < need)
		return aq_fail(msg, AQ_EACCES, "role %s may not call this method on project \"%s\"; it needs %s",
			       srv_auth_role_name(a->role), project, srv_auth_role_name(need));
	return AQ_OK;
}

int srv_auth_metrics(const struct srv_auth *a, aq_msg *msg)
{
	if (a->cluster || a->role == SRV_ROLE_METRICS)
		return AQ_OK;
	return aq_fail(msg, AQ_EACCES,
		       "GET /metrics names every project's volumes: it needs a metrics token "
		       "(aquiferd token --role metrics) or a cluster-admin token");
}

int srv_auth_join_check(const struct srv_auth *a, const char *node, const char *loc, aq_msg *msg)
{
	if (a->role != SRV_ROLE_NODE || strcmp(a->use, SRV_USE_JOIN) != 0)
		return aq_fail(msg, AQ_EACCES,
			       "only a join token may join (a node token acts only as its own, joined node); "
			       "a cluster admin mints one with aquifer nodes join-token --location=%s", loc);
	if (!a->location[0])
		return aq_fail(msg, AQ_EACCES, "this join token names no location");
	if (strcmp(a->location, loc) != 0)
		return aq_fail(msg, AQ_EACCES, "this join token is for location \"%s\", not \"%s\"", a->location, loc);
	if (a->node[0] && strcmp(a->node, node) != 0)
		return aq_fail(msg, AQ_EACCES, "this join token is for node \"%s\", not \"%s\"", a->node, node);
	if (!a->jti[0])
		return aq_fail(msg, AQ_EACCES, "this join token carries no id (jti), so it cannot be used once");
	return AQ_OK;
}

int srv_auth_node_check(const struct srv_auth *a, const json_t *node_doc, aq_msg *msg)
{
	const char *nid = api_json_str(json_object_get(node_doc, "internal"), "incarnation", "");
	const char *name = api_json_str(node_doc, "name", "");

	if (a->role != SRV_ROLE_NODE)
		return aq_fail(msg, AQ_EACCES, "only a joined node may call this method");
	if (strcmp(a->use, SRV_USE_JOIN) == 0)
		return aq_fail(msg, AQ_EUNAUTH, "a join token only joins; report with the node token the join answered");
	if (strncmp(name, "nodes/", 6) != 0 || strcmp(name + 6, a->subject) != 0)
		return aq_fail(msg, AQ_EUNAUTH, "this token speaks for node \"%s\", not for %s", a->subject, name);
	if (!a->use[0] && !*nid)
		return AQ_OK; /* a token of an older version, for a node that predates incarnations */
	if (!*nid || strcmp(a->nid, nid) != 0)
		return aq_fail(msg, AQ_EUNAUTH,
			       "this node token was revoked: node \"%s\" was deleted or joined again since it was issued; "
			       "remove the agent's credentials.json and join it with a new join token", a->subject);
	return AQ_OK;
}

bool srv_auth_node_stale(const struct srv_auth *a, long ttl, long now)
{
	return !a->nid[0] || a->exp - now > ttl || (a->exp - now) * 2 < a->exp - a->iat;
}
