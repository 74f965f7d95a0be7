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
/* Ring for node (a name), or for every node (NULL: a new leader only;
 * a change that knows its nodes marks them, srv_mark.h). */
void srv_kick(struct srv *srv, const char *node);
/* Ring for no node in particular: the next pass starts now and visits the
 * nodes the database marks dirty (a change that marked its nodes in its
 * transaction without learning their names here, e.g. a backup's). */
void srv_kick_marks(struct srv *srv);
/* Wake the waiter for good: srv_kick_wait answers false from now on. */
void srv_kick_stop(struct srv *srv);
/* Wait up to a second for a ring. False once stopped; else *dirty (new
 * reference or NULL) holds the node names rung since the last wait, each
 * with the wall-clock ms of its first ring (the reconciler's queue-wait
 * metric), and *all whether one ring was for every node. */
bool srv_kick_wait(struct srv *srv, json_t **dirty, bool *all);

#endif
