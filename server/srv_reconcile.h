/* srv_reconcile: the control loop that pushes each node its desired state
 * (level-triggered, one thread with its own db connection; see
 * srv_reconcile.c for the whole story). Handlers ring its doorbell
 * (srv_kick.h) after a commit that changed desired state; each pass runs the node lifecycle
 * (srv_drain.h), builds each visited node's intent (srv_intent.h), bumps
 * the node's generation when it changed and pushes it (srv_push.h).
 */
#ifndef AQ_SRV_RECONCILE_H
#define AQ_SRV_RECONCILE_H

#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;
struct srv;

int srv_reconcile_start(struct srv *srv, aq_msg *msg);
void srv_reconcile_stop(struct srv *srv);
/* Node node_name reported generation g applied (a push's answer or its
 * status report): finish what waited for it, in its own transaction.
 * failed (may be NULL): [{name, error}] of volumes the node could not
 * serve; their operations fail with the node's reason and the volumes show
 * ERROR. */
int srv_reconcile_applied(struct srv *srv, struct db *db, const char *node_name, int64_t g, const json_t *failed);

#endif
