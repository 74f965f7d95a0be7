/* srv_visit: one visit of a node, shared by the reconciler's pushers
 * (srv_pusher.h) and the status reports (srv_agent.h): build the node's
 * intent, take the generation that carries it, finish what waited for a
 * generation the node applied. Each call runs its own transactions on the
 * db handle it is given (one per thread). */
#ifndef AQ_SRV_VISIT_H
#define AQ_SRV_VISIT_H

#include <stdbool.h>
#include <stdint.h>

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
struct srv_visit_intent {
	json_t *intent, *bad, *pending;
	char *text;
	char hash[65];
};

/* Build node's intent into ri (what was there is freed first). */
int srv_visit_intent_build(const struct api_math_params *math, struct db *db, const json_t *node,
			   struct srv_visit_intent *ri);
void srv_visit_intent_cleanup(struct srv_visit_intent *ri);
/* The generation to push to node: ri is the intent built without the
 * write lock (srv_visit_intent_build). When its hash differs from what
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
int srv_visit_generation(const struct api_math_params *math, struct db *db, const struct db_fence *fence,
			 const json_t *node, struct srv_visit_intent *ri, int64_t *gen, bool *more);
/* Node node_name reported generation g applied (a push's answer or its
 * status report): finish what waited for it, in its own transaction.
 * failed (may be NULL): [{name, error}] of volumes the node could not
 * serve; their operations fail with the node's reason and the volumes show
 * ERROR. */
int srv_visit_applied(struct srv *srv, struct db *db, const char *node_name, int64_t g, const json_t *failed);

/* Both writes above are batched, process-wide: the first caller that finds
 * no batch running leads one, which takes every request queued by the time
 * its group body runs (db_group_run, lane DB_GROUP_RECON), reads all they
 * read in one query, checks each fence once, and commits them in one
 * transaction; each caller returns once that committed (durable, so a
 * generation is on disk before its push). A batch that fails runs each of
 * its requests again alone, so each caller gets its own result and one
 * failure undoes no other's writes. A batch runs requests while it has run
 * less than the group budget (db_group_budget) and gives the rest back to the front of the
 * queue (the live lane's status reports never wait behind a long batch).
 * Counters: batches committed or lost, the requests they ran, those run
 * again alone, those given back, requests queued now. */
struct srv_visit_batch_stats {
	uint64_t batches;
	uint64_t requests;
	uint64_t alone;
	uint64_t given_back;
	uint64_t queued;
};
void srv_visit_batch_stats(struct srv_visit_batch_stats *st);


#endif
