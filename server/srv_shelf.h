/* srv_shelf: shelves, the storage a location's nodes share (cluster admin:
 * /v1/shelves). Stored kind "shelf" (shelves/S, parent locations/L); the
 * document's fields and rules are api/api_shelf.h's. A location's shelves
 * bound what placement may put on its nodes (the sum of their
 * readThroughputMibps, srv_place.c), so a PATCH that lowers a ceiling below
 * what placement promised, or a DELETE that takes a location's last shelf
 * (or the bandwidth its volumes use), is refused (FAILED_PRECONDITION).
 * Capacity likewise (srv_place_shelf_gib): a PATCH of capacityGib, or a
 * DELETE, that would leave the location's shelves holding less than its
 * volumes take is refused (FAILED_PRECONDITION); a shelf without
 * capacityGib leaves its location unbounded.
 * GET answers carry ioStats, what the shelf's agents report of the I/O
 * they issue to it (srv_shelfio.h). Calls run in the caller's transaction
 * or their own. */
#ifndef AQ_SRV_SHELF_H
#define AQ_SRV_SHELF_H

#include <jansson.h>

struct db;
struct srv_req;

/* Create the default shelf of a new location (in the caller's
 * transaction): a directory with the seed's ceilings; one that exists
 * already is no error. */
int srv_shelf_default(struct db *db, const char *location_id);

/* POST /v1/shelves?shelfId=S, GET /v1/shelves, GET/PATCH/DELETE /v1/shelves/S. */
int srv_h_shelf_create(struct srv_req *req, json_t **resp);
int srv_h_shelf_list(struct srv_req *req, json_t **resp);
int srv_h_shelf_get(struct srv_req *req, json_t **resp);
int srv_h_shelf_patch(struct srv_req *req, json_t **resp);
int srv_h_shelf_delete(struct srv_req *req, json_t **resp);

#endif
