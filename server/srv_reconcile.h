/* srv_reconcile: the control loop that pushes each node its desired state
 * (level-triggered, one thread with its own db connection that hands the
 * nodes to visit to a pool of pushers, srv_pusher.h; see srv_reconcile.c
 * for the whole story). Handlers ring its doorbell
 * (srv_kick.h) after a commit that changed desired state; each pass runs the node lifecycle
 * (srv_drain.h); each visit builds the node's intent, bumps its
 * generation when it changed (srv_visit.h) and pushes it (srv_push.h).
 */
#ifndef AQ_SRV_RECONCILE_H
#define AQ_SRV_RECONCILE_H

#include "api/api_error.h"

struct srv;

int srv_reconcile_start(struct srv *srv, aq_msg *msg);
void srv_reconcile_stop(struct srv *srv);

#endif
