/* srv_agent: the calls a node's agent makes (node-role tokens only; the
 * router checks the role, these check the token's use and incarnation).
 *
 * POST /v1/agent/join spends a join token (srv_join.h) and creates the
 * node, answering its node token, push secret and the location's handle
 * key (stored kinds "locsecret", locsecrets/L, and "join", joins/<jti>).
 * POST /v1/agent/status is the node's report: liveness, the time series,
 * the volumes' usage and the generation it applied, which finishes what
 * waited for it (srv_visit_applied). Both run on a worker; a join in its
 * own transaction, a report's writes (when it changes anything durable)
 * through db_group_run (db.h) in the live lane (DB_GROUP_LIVE, taken before
 * the reconciler's visits), in one transaction with other reports and
 * visits, answered once that transaction committed (503 UNAVAILABLE when
 * aquiferd is stopping and its body had not run).
 */
#ifndef AQ_SRV_AGENT_H
#define AQ_SRV_AGENT_H

#include <jansson.h>

struct srv_req;

int srv_h_agent_join(struct srv_req *req, json_t **resp);
int srv_h_agent_status(struct srv_req *req, json_t **resp);

#endif
