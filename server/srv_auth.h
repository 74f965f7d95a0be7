/* srv_auth: who a bearer token says the caller is, and what it may call.
 *
 * Tokens are JWTs (HS256, libjwt) signed with the 256-bit key kept with the
 * state; srv_auth_token_verify accepts only HS256 and remembers verified
 * tokens by their text (256 slots, until the token's own expiry). The rules
 * of who may call what are pure functions of the claims (no I/O): the route
 * check the router runs before every handler (srv_auth_route), the metrics
 * rule, and the node-role rules of joins and node tokens. The key file is
 * the only I/O here (srv_auth_key_load). Thread-safe. */
#ifndef AQ_SRV_AUTH_H
#define AQ_SRV_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/api_error.h"

#define SRV_KEY_LEN 32

/* metrics: reads GET /metrics and nothing else (a Prometheus scraper). */
enum srv_role { SRV_ROLE_NONE = 0, SRV_ROLE_VIEWER, SRV_ROLE_EDITOR, SRV_ROLE_ADMIN, SRV_ROLE_NODE,
		SRV_ROLE_METRICS };

/* What a route needs of its caller (struct srv_route's .access). Project
 * levels compare the token's project with the route's first path
 * parameter. A cluster admin passes every check. */
enum srv_access {
	SRV_ACCESS_VIEWER = 0,     /* project viewer (or better) of params[0] */
	SRV_ACCESS_EDITOR,         /* project editor */
	SRV_ACCESS_ADMIN,          /* project admin */
	SRV_ACCESS_CLUSTER,        /* cluster admin only */
	SRV_ACCESS_NODE,           /* a node-role token */
	SRV_ACCESS_ANY,            /* any valid token but a node's or a metrics one; the handler filters */
	SRV_ACCESS_OPEN,           /* no token needed */
};

/* Node-role tokens come in two uses (claim "use"): a join token ("join",
 * single-use: its jti is recorded at the join; bound to a location and
 * optionally a node name) and a node token ("node", subject = the node's
 * name, nid = the node's incarnation, which a delete or re-join changes, so
 * older tokens of that name stop working). Tokens of older versions carry
 * no use: see srv_auth_node_check. */
#define SRV_USE_JOIN "join"
#define SRV_USE_NODE "node"

/* The claims of a verified token. */
struct srv_auth {
	enum srv_role role;
	bool cluster;          /* admin without a project: the cluster admin */
	char project[64];      /* the project the token is for ("" = none) */
	char subject[128];
	char location[64];     /* node tokens: the location the node joins */
	char use[8];           /* node-role tokens: SRV_USE_JOIN or SRV_USE_NODE ("" = older) */
	char node[64];         /* join tokens: the only node name it may join ("" = any) */
	char nid[40];          /* node tokens: the node's incarnation */
	char jti[40];          /* the token's id */
	long iat, exp;         /* issued at, expires (seconds since the epoch) */
};

/* Read the key at path, or create it (mode 0600, atomically: a racing
 * process's key wins) on first use. */
int srv_auth_key_load(const char *path, unsigned char key[SRV_KEY_LEN], aq_msg *msg);
/* The key file: key_file when given, else aquiferd.key in state_dir
 * (srv_cfg.h). */
void srv_auth_key_path(const char *key_file, const char *state_dir, char *out, size_t cap);

/* Sign who's claims for ttl seconds; *token is malloc'd. */
int srv_auth_token_make(const unsigned char key[SRV_KEY_LEN], const struct srv_auth *who, long ttl,
			char **token, aq_msg *msg);
/* Verify an Authorization header value ("Bearer <jwt>") into *who.
 * AQ_EUNAUTH with the reason (missing, malformed, wrongly signed, other
 * algorithm, expired, no known role). */
int srv_auth_token_verify(const unsigned char key[SRV_KEY_LEN], const char *authz, struct srv_auth *who,
			  aq_msg *msg);

/* May the caller call a route that needs access? project: the route's
 * first path parameter (NULL when it has none). AQ_OK or AQ_EACCES saying
 * what is missing. SRV_ACCESS_OPEN routes never get here. */
int srv_auth_route(const struct srv_auth *a, enum srv_access access, const char *project, aq_msg *msg);
/* GET /metrics under --metrics-auth: a cluster-admin or a metrics token. */
int srv_auth_metrics(const struct srv_auth *a, aq_msg *msg);
/* A join as node in location loc: the token must be a join token for loc
 * (and name node if it names one) with an id. */
int srv_auth_join_check(const struct srv_auth *a, const char *node, const char *loc, aq_msg *msg);
/* A call of node node_doc (its stored document, internal included) with
 * token a: a node token of that node's current incarnation. A token without
 * use (issued before incarnations existed) passes only while the node has
 * none. AQ_EUNAUTH (revoked, join token) with the reason. */
int srv_auth_node_check(const struct srv_auth *a, const json_t *node_doc, aq_msg *msg);
/* Whether token a should be replaced now: past half its life, longer-lived
 * than ttl allows, or without an incarnation. */
bool srv_auth_node_stale(const struct srv_auth *a, long ttl, long now);

enum srv_role srv_auth_role_parse(const char *s);
const char *srv_auth_role_name(enum srv_role r);

#endif
