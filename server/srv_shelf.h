/* srv_shelf: shelves, the storage a location's nodes share. Stored kind
 * "shelf" (shelves/S, parent locations/L); a location's shelves bound what
 * placement may put on its nodes (srv_place.h). Calls run in the caller's
 * transaction or their own; no state of their own. */
#ifndef AQ_SRV_SHELF_H
#define AQ_SRV_SHELF_H

#include <jansson.h>

struct db;
struct srv_req;

/* Seed figures of a shelf (DESIGN.md): ~140 GB/s read, 70 GB/s (TLC)
 * write, in MiB/s. */
#define SRV_SHELF_READ_MIBPS 133514.0
#define SRV_SHELF_WRITE_MIBPS 66757.0

/* Create the default shelf of a new location (in the caller's
 * transaction); one that exists already is no error. */
int srv_shelf_default(struct db *db, const char *location_id);

/* POST /v1/shelves?shelfId=S, GET /v1/shelves, GET /v1/shelves/S. */
int srv_h_shelf_create(struct srv_req *req, json_t **resp);
int srv_h_shelf_list(struct srv_req *req, json_t **resp);
int srv_h_shelf_get(struct srv_req *req, json_t **resp);

#endif
