/* srv_drain: a node's life after its join (READY, DRAINING, DOWN,
 * deleted; see srv_drain.c): the admin's drain, undrain and delete, and the
 * reconciler's lifecycle pass (failover of silent nodes, pending drains).
 * Handlers run on a worker in their own transaction; the pass runs on the
 * reconciler's thread.
 */
#ifndef AQ_SRV_DRAIN_H
#define AQ_SRV_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct db;
struct srv;
struct srv_req;

/* One pass over node lifecycles: silent nodes become DOWN, and the volumes
 * of DOWN nodes (past ceilings) and DRAINING nodes (within them) move to
 * READY nodes of their location, retried every pass while some wait. A
 * node's volumes move SRV_DRAIN_BATCH a transaction, and between two the
 * agents' status reports queued for the writer go first (db_group_yield,
 * at most SRV_DRAIN_YIELD_NS), so that a failover never holds the writer
 * long enough for healthy nodes' renewals to miss --node-down-seconds. A
 * stopping server (srv->stopping) ends the pass between transactions; what
 * is left, the next pass does. True when a node went DOWN or a volume
 * moved. */
#define SRV_DRAIN_BATCH 32
#define SRV_DRAIN_YIELD_NS (200 * 1000000ull)
bool srv_drain_pass(struct srv *srv, struct db *db, int64_t now_ms);
/* The same over nodes, every node's document as the caller just read them
 * (the reconciler's pass reads them once for this and its visits). */
bool srv_drain_pass_nodes(struct srv *srv, struct db *db, const json_t *nodes, int64_t now_ms);

/* POST /v1/nodes/N:drain, POST /v1/nodes/N:undrain, DELETE /v1/nodes/N. */
int srv_h_node_drain(struct srv_req *req, json_t **resp);
int srv_h_node_undrain(struct srv_req *req, json_t **resp);
int srv_h_node_delete(struct srv_req *req, json_t **resp);

#endif
