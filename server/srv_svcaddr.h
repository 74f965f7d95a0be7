/* srv_svcaddr: service addresses that move with their volumes (issue 25,
 * api/api_svcaddr.h). A location with serviceAddresses gives each volume
 * placed in it one address of the range, kept in the volume's placement
 * ("serviceAddress", the intent's form), so it travels with the placement
 * when srv_drain.c moves the volume. The intent of the serving node carries
 * it (the agent holds it on its --service-interface) unless another node of
 * the location that is not DOWN still reports holding it: no address is
 * ever given to two live nodes. mountOptions show it instead of the node's
 * address. All functions run inside the caller's transaction. */
#ifndef AQ_SRV_SVCADDR_H
#define AQ_SRV_SVCADDR_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;

/* The location document doc (id loc_id) may carry serviceAddresses: checked
 * (api_svcaddr_range_check) and refused when it overlaps another
 * location's range (AQ_EINVAL naming both). */
int srv_svcaddr_location_check(struct db *db, const char *loc_id, const json_t *doc, aq_msg *msg);

/* Give the new placement pl of a volume in location loc_id its service
 * address when the location has a range: the lowest one no placement of
 * the location holds. AQ_EEXHAUSTED when the range is full. loc: the
 * location's document as read in the caller's transaction, or NULL to
 * read it here. */
int srv_svcaddr_assign(struct db *db, const char *loc_id, const json_t *loc, json_t *pl, aq_msg *msg);

/* The serviceAddress the intent of node (its document) carries for
 * placement pl into *out: a new reference, or NULL when pl has none or
 * when node does not report holding it yet and another node of the
 * location that is not DOWN does (then it waits for that node's release).
 * AQ_OK, or a db error (the intent is not built). */
int srv_svcaddr_intent(struct db *db, const json_t *node, const json_t *pl, json_t **out);

/* Does node (its document) report holding the address of pl? true when pl
 * has no service address. */
bool srv_svcaddr_held(const json_t *node, const json_t *pl);

/* The status answer's "serviceAddressLeaseMs" (agent_svc.h): how long after
 * sending its last accepted status report an agent may hold its service
 * addresses. Half of node_down_ms: aquiferd declares a node DOWN (and only
 * then gives its addresses to another node) node_down_ms after it received
 * the node's last report, and a replica that does not lead persists the
 * time it saw one only every quarter of node_down_ms (srv_agent.c), so the
 * leader's view may lag a quarter; the other quarter is the agent's margin
 * (its fence check, the removal, clock-rate differences). Both sides count
 * on monotonic-rate clocks from their own event (the agent from the send,
 * before aquiferd's receipt), so no clock offset between them matters. */
int64_t srv_svcaddr_lease_ms(int node_down_ms);

/* A create or move of pl onto node was applied (srv_reconcile.c): it is
 * done only once node reports holding pl's service address. Until then
 * *waits is set and vol's stateDetails (vol: the volume's document, kept
 * under vparent) says the address is not served yet, so the volume is not
 * taken as served (aquifer_volume_served stays 0). action: the placement's
 * ("create", "move", ...); others never wait. AQ_OK or a db error. */
int srv_svcaddr_applied_wait(struct db *db, const json_t *node, const json_t *pl, const char *action, json_t *vol,
			     const char *vparent, bool *waits);

#endif
