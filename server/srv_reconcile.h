/* srv_reconcile: the control loop that pushes each node its desired state
 * (level-triggered, one thread with its own db connection that hands the
 * nodes to visit to a pool of pushers, srv_pusher.h; see srv_reconcile.c
 * for the whole story). Handlers ring its doorbell
 * (srv_kick.h) after a commit that changed desired state; each pass runs the node lifecycle
 * (srv_drain.h), builds each visited node's intent (srv_intent.h), bumps
 * the node's generation when it changed and pushes it (srv_push.h).
 */
#ifndef AQ_SRV_RECONCILE_H
#define AQ_SRV_RECONCILE_H

#include <stdint.h>

#include <stdbool.h>

#include <jansson.h>

#include "api/api_error.h"

struct api_math_params;
struct db;
struct db_fence;
struct srv;

/* A node's intent (srv_intent.h), what it could not carry (bad), its
 * canonical text and that text's SHA-256 in hex; pending: the placements
 * the intent carries that wait for a generation, {placement name: "op|action"}
 * as the build read them. */
struct srv_reconcile_intent {
	json_t *intent, *bad, *pending;
	char *text;
	char hash[65];
};

int srv_reconcile_start(struct srv *srv, aq_msg *msg);
void srv_reconcile_stop(struct srv *srv);
/* Node node_name reported generation g applied (a push's answer or its
 * status report): finish what waited for it, in its own transaction.
 * failed (may be NULL): [{name, error}] of volumes the node could not
 * serve; their operations fail with the node's reason and the volumes show
 * ERROR. */
/* Build node's intent into ri (what was there is freed first). */
int srv_reconcile_intent_build(const struct api_math_params *math, struct db *db, const json_t *node,
			       struct srv_reconcile_intent *ri);
void srv_reconcile_intent_cleanup(struct srv_reconcile_intent *ri);
/* The generation to push to node: ri is the intent built without the
 * write lock (srv_reconcile_intent_build). When its hash differs from what
 * the node was last given, the generation goes up in one short
 * transaction; in the same transaction exactly the pending placements ri
 * carries take the generation, each only if it still stands as the build
 * read it (same op and action): a placement committed or changed after the
 * build waits for the next one (*more is then true: build again), so no
 * placement ever takes a generation whose intent lacks it (issue 20). The
 * transaction reads the node and ri's pending placements only: its cost
 * does not grow with the volumes the node holds. On return ri is what
 * *gen carries. fence (NULL: none): the leader's epoch, checked in that
 * transaction (srv_lead.h). more may be NULL. */
int srv_reconcile_generation(const struct api_math_params *math, struct db *db, const struct db_fence *fence,
			     const json_t *node, struct srv_reconcile_intent *ri, int64_t *gen, bool *more);
int srv_reconcile_applied(struct srv *srv, struct db *db, const char *node_name, int64_t g, const json_t *failed);

#endif
