/* srv_location: locations (stored kind "location", locations/L), created
 * by the cluster admin and seen per project, and each location's cold
 * store. The S3 secretAccessKey of a cold store is input only: it lives in
 * its own document ("coldsecret", coldsecrets/L) that no route returns and
 * joins the store again only in the intent (srv_intent.h). Handlers run in
 * their own transaction on a worker. */
#ifndef AQ_SRV_LOCATION_H
#define AQ_SRV_LOCATION_H

#include <jansson.h>

struct db;
struct srv_req;

/* The location's coldStore as the intent carries it (secretAccessKey
 * included), or NULL when it has none (the agents' embedded default). New
 * reference. */
json_t *srv_cold_store_intent(struct db *db, const char *location_id);

int srv_h_location_create(struct srv_req *req, json_t **resp);
int srv_h_location_list_admin(struct srv_req *req, json_t **resp);
int srv_h_location_get_admin(struct srv_req *req, json_t **resp);
int srv_h_location_patch(struct srv_req *req, json_t **resp);
int srv_h_location_delete(struct srv_req *req, json_t **resp);
int srv_h_location_list(struct srv_req *req, json_t **resp);
int srv_h_location_get(struct srv_req *req, json_t **resp);

#endif
