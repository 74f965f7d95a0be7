/* srv_lead: which aquiferd replica leads (issue 22). Several replicas may
 * serve one database; every one serves the whole API, and exactly one, the
 * holder of the database lease SRV_LEAD_LEASE (db.h's db_lease_*), runs
 * the reconciler and its pushes, node liveness (DOWN, failover) and the
 * snapshot scheduler. A thread takes or renews the lease every
 * leader-renew-seconds for leader-lease-seconds. A replica leads while its
 * last successful take or renew began less than leader-lease-seconds ago
 * (its own monotonic clock), so one that cannot renew stops by itself at
 * that bound, and one that finds another holder stops at once; the others
 * take the lease once it has expired, at the next epoch (the fencing
 * token). The leader's writes of reconciler and scheduler state check the
 * epoch in their own transaction (srv_lead_fence) and are refused once a
 * newer epoch holds it. The holder id is the host name and --listen
 * (unique among the running processes of a host: one binds it; a second
 * one exits at its failed bind without giving the lease up), so an
 * aquiferd restarted in place takes its lease back at once.
 */
#ifndef AQ_SRV_LEAD_H
#define AQ_SRV_LEAD_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"
#include "db/db.h"

struct srv;

#define SRV_LEAD_LEASE "leases/leader"

/* Start the lease thread (before the reconciler and the scheduler). */
int srv_lead_start(struct srv *srv, aq_msg *msg);
/* Stop it and give the lease up, so another replica takes it at once. */
void srv_lead_stop(struct srv *srv);
/* Does this replica lead now? When it does, *f (may be NULL) names the
 * lease, holder and epoch its writes are fenced with. Without a lease
 * thread (srv->lead NULL: unit tests) it always leads, unfenced
 * (f->lease NULL). */
bool srv_lead_held(struct srv *srv, struct db_fence *f);
/* The fencing check in the caller's open transaction: AQ_OK when f still
 * holds the lease (or f->lease is NULL), else AQ_EPRECOND. */
int srv_lead_fence(struct db *db, const struct db_fence *f);
/* When this replica's current epoch began (wall ms; 0 when it does not
 * lead): node liveness counts every node as seen then at the latest. */
int64_t srv_lead_since_ms(struct srv *srv);
/* For /healthz and /metrics: leader (bool), leaderEpoch (the epoch last
 * seen), leaderUrl (the holder's public URL) into obj. */
void srv_lead_view(struct srv *srv, json_t *obj);

#endif
