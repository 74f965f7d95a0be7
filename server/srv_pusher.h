/* srv_pusher: the reconciler's pushers, a bounded pool of threads that
 * visit nodes (build the intent, take a generation, push it, finish what
 * waited for it) several at a time, so that a slow or dead node (a push
 * waits up to its 5 s timeout) never holds up another node's visit.
 *
 * The reconciler's pass (srv_reconcile.c) decides which nodes to visit and
 * hands each to srv_pusher_visit. Per-node ordering: a node is queued or in
 * flight at most once; a visit asked for while it is in flight is
 * remembered and the node's doorbell rung (srv_kick.h) when its visit
 * ends, so the next pass visits it again with whatever changed. The nodes
 * a change marked or rang for go first (a create's node never waits
 * behind a full pass); the visits' writes go through db_group_run (db.h),
 * so the pushers' and the status reports' transactions share commits
 * instead of each queueing on db.c's one writer mutex. Fencing: each visit carries the
 * epoch of the pass that asked for it; one whose epoch is no longer the
 * pusher's (srv_pusher_reset, a lost or new lease) is dropped unvisited,
 * and every generation it writes checks the fence in its transaction
 * (srv_visit_generation). What a push learnt (the generation the node
 * answered) is kept in memory per epoch. Each thread has its own database
 * connection. Thread-safe.
 */
#ifndef AQ_SRV_PUSHER_H
#define AQ_SRV_PUSHER_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"
#include "server/srv_cfg.h"

struct db_fence;
struct srv;
struct srv_pusher;

/* Start threads (1..SRV_PUSHER_MAX) pushers. */
#define SRV_PUSHER_MAX SRV_CFG_PUSH_WORKERS_MAX
int srv_pusher_new(struct srv *srv, int threads, struct srv_pusher **out, aq_msg *msg);
/* Stop and join every thread (a visit in flight finishes first); NULL ok. */
void srv_pusher_free(struct srv_pusher *p);
/* A new epoch (fence NULL: this replica no longer leads): what the pushes
 * learnt is forgotten and queued visits of older epochs are dropped. */
void srv_pusher_reset(struct srv_pusher *p, const struct db_fence *fence);
/* Is node (its document) behind: has it not applied its generation, as
 * far as its status reports and our pushes know? */
bool srv_pusher_behind(struct srv_pusher *p, const json_t *node);
/* Visit node (its document, copied) at the current epoch; mark (may be
 * NULL) is its dirty mark as the pass read it, handed back by
 * srv_pusher_built once its intent was built; rung_ms (0: unknown) when its doorbell first rang, for the
 * queue-wait metric. False when the node is already queued or in flight:
 * it is visited again once that visit ends. */
bool srv_pusher_visit(struct srv_pusher *p, const json_t *node, const json_t *mark, int64_t rung_ms);
/* The dirty marks ({node name: mark}, new reference, never NULL unless
 * out of memory) of the visits that built their node's intent since the
 * last call, for the caller to clear (db_dirty_clear) in one transaction. */
json_t *srv_pusher_built(struct srv_pusher *p);
/* Nodes queued or in flight now. */
int srv_pusher_busy(struct srv_pusher *p);

#endif
