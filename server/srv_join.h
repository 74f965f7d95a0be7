/* srv_join: the tokens a node holds: join tokens (POST
 * /v1/locations/L:joinToken, with the one-line install command) and node
 * tokens (issued by the join and renewed by status reports). The pure
 * pieces (shell quoting, the install command) have unit tests
 * (tests/server/test_srv_join.c). No state of its own.
 */
#ifndef AQ_SRV_JOIN_H
#define AQ_SRV_JOIN_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "api/api_error.h"

struct srv;
struct srv_req;

/* bytes random bytes (at most 64) as hex into out (2 * bytes + 1). */
void srv_rand_hex(char *out, size_t bytes);
/* A node token for node (of location loc, incarnation nid) with the
 * configured lifetime: sets "nodeToken" and "nodeTokenExpireTime" in into. */
int srv_node_token_issue(struct srv *srv, const char *node, const char *loc, const char *nid, json_t *into,
			 aq_msg *msg);
/* s as one POSIX shell word: as is when it holds only safe characters,
 * else in single quotes ('\'' for a quote). AQ_ETOOBIG when out is short. */
int srv_shell_quote(const char *s, char *out, size_t cap);
/* The installCommand of a join token: deploy/install-agent.sh with every
 * word shell-quoted (node NULL or "": no --node; tls: --ca-file). */
int srv_install_command(const char *public_url, const char *token, const char *loc, const char *node, bool tls,
			char *out, size_t cap);

/* POST /v1/locations/L:joinToken (cluster admin). */
int srv_h_join_token(struct srv_req *req, json_t **resp);

#endif
