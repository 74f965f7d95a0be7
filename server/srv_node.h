/* srv_node: storage nodes as the cluster admin sees them, and their
 * liveness.
 *
 * Stored kind "node" (nodes/N, parent locations/L): the public document
 * plus an "internal" object (push secret, incarnation) that never leaves the
 * server; srv_node_view makes the public view. Liveness (when a node last
 * reported) is kept in memory, not in the db: status reports every 2 s per
 * node would otherwise each be a durable write. Liveness calls are
 * thread-safe (one mutex); the rest runs in the caller's transaction.
 */
#ifndef AQ_SRV_NODE_H
#define AQ_SRV_NODE_H

#include <stdint.h>

#include <jansson.h>

struct db;
struct srv;
struct srv_req;

/* Seed hardware figures of a node (DESIGN.md): ~35 GB/s read, ~10 GB/s
 * write, in MiB/s: a join's default ceilings. */
#define SRV_NODE_READ_MIBPS 33379.0
#define SRV_NODE_WRITE_MIBPS 9537.0

/* The public view of a node: internal fields removed, allocation, volume
 * count, overcommitted and stateDetails filled. */
int srv_node_view(struct db *db, json_t *node);
/* The node the route's params[0] names: *node its stored document (new
 * reference), name ("nodes/N", cap bytes) its key; NOT_FOUND says which. */
int srv_node_load(struct srv_req *req, char *name, size_t cap, json_t **node);
/* Store a node document (in the caller's transaction). */
int srv_node_save(struct db *db, json_t *node);

/* Liveness. srv_node_live_init before any other call (serve). A node is
 * last seen at max(its last report, aquiferd's start): a restarted
 * aquiferd gives every node a fresh grace period. */
int srv_node_live_init(struct srv *srv, int64_t started_ms);
void srv_node_live_free(struct srv *srv);
void srv_node_live_seen(struct srv *srv, const char *node, int64_t ms);
int64_t srv_node_live_last(struct srv *srv, const char *node);

/* GET /v1/nodes, GET /v1/nodes/N (cluster admin). */
int srv_h_node_list(struct srv_req *req, json_t **resp);
int srv_h_node_get(struct srv_req *req, json_t **resp);

#endif
