/* srv_intent: a node's desired state as the reconciler pushes it: every
 * volume placed on the node (export rules, QoS, tiering), the volumes whose
 * data it must delete, the location's handle key and cold store. Encoded
 * through the one intent contract (api/api_intent.h). Reads the db in the
 * caller's transaction (or none); no state, no locks.
 */
#ifndef AQ_SRV_INTENT_H
#define AQ_SRV_INTENT_H

#include <stddef.h>

#include <jansson.h>

#include "api/api_math.h"

struct db;

/* Build node's intent body (without generation) from its placements into
 * *out; *bad lists the volumes that could not be encoded ({name, error}),
 * so that their operations fail with that reason instead of waiting. Both
 * new references. pending (may be NULL) gets {placement name: "op|action"}
 * of every placement that waits for a generation (an action, no
 * pendingGeneration yet), as read. The node's volumes are read in one
 * query (db_get_many), their pools once each. */
int srv_intent_build(const struct api_math_params *math, struct db *db, const json_t *node, json_t **out,
		     json_t **bad, json_t *pending);
/* The parent "projects/P/locations/L" of volume name vn. AQ_EINVAL when vn
 * names no volume. */
int srv_intent_vol_parent(const char *vn, char *out, size_t cap);

#endif
