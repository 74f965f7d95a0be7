/* srv_mark: which nodes a change of desired state that the database's
 * triggers do not see (a pool, a snapshot, an SMB user, a location) affects.
 * A handler calls these in its transaction, before the commit: each marks
 * exactly those nodes dirty (db_dirty_mark), so whichever replica leads
 * rebuilds them and no other node, and adds their names to nodes (a JSON
 * object {node: true}) for srv_mark_ring to ring this process's doorbell
 * after the commit. All return AQ_OK or the db's code. */
#ifndef AQ_SRV_MARK_H
#define AQ_SRV_MARK_H

#include <jansson.h>

#include "api/api_error.h"

struct db;
struct srv;

/* The node of volume's placement (none when it has none yet). */
int srv_mark_volume(struct db *db, const char *volume, json_t *nodes);
/* The nodes of every volume under parent ("projects/P/locations/L"), or,
 * with pool (its full name) not NULL, of that pool's volumes only. */
int srv_mark_volumes_of(struct db *db, const char *parent, const char *pool, json_t *nodes);
/* Every node of location ("locations/L"). */
int srv_mark_location(struct db *db, const char *location, json_t *nodes);
/* Ring the doorbell (srv_kick.h) for each node of nodes. */
void srv_mark_ring(struct srv *srv, json_t *nodes);

#endif
