/* srv_kick: the reconciler's doorbell. A handler that committed a change
 * of desired state rings it for one node or for all; the reconciler's
 * thread waits on it between passes. Kept apart from the loop
 * (srv_reconcile.h) so that handlers depend on the bell only, not on the
 * loop and everything it runs. Thread-safe (one mutex and a condition
 * variable); a ring before srv_kick_init or after srv_kick_free is a
 * no-op.
 */
#ifndef AQ_SRV_KICK_H
#define AQ_SRV_KICK_H

#include <stdbool.h>

#include <jansson.h>

struct srv;

int srv_kick_init(struct srv *srv);
void srv_kick_free(struct srv *srv);
/* Ring for node (a name), or for every node (NULL). */
void srv_kick(struct srv *srv, const char *node);
/* Wake the waiter for good: srv_kick_wait answers false from now on. */
void srv_kick_stop(struct srv *srv);
/* Wait up to a second for a ring. False once stopped; else *dirty (new
 * reference or NULL) holds the node names rung since the last wait and
 * *all whether one ring was for every node. */
bool srv_kick_wait(struct srv *srv, json_t **dirty, bool *all);

#endif
