/* srv_health: GET /healthz, {"status": "ok", "leader": BOOL, "leaderEpoch":
 * N, "leaderUrl": URL} while aquiferd serves: leader tells whether this
 * replica holds the leader lease now, leaderEpoch and leaderUrl name the
 * lease as this replica last saw it (srv_lead.h). Its
 * route is SRV_F_INLINE: answered on the socket thread, no token, no I/O,
 * so it answers even when every worker is busy. */
#ifndef AQ_SRV_HEALTH_H
#define AQ_SRV_HEALTH_H

#include <jansson.h>

struct srv_req;

int srv_h_healthz(struct srv_req *req, json_t **resp);

#endif
