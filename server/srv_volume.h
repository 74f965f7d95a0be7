/* srv_volume: volumes (stored kind "volume", under
 * projects/P/locations/L). A create, patch or delete places the volume
 * (srv_place.h) and answers a running operation that ends when the node
 * reports the generation carrying it applied (srv_reconcile.h). Handlers
 * run in their own transaction on a worker. */
#ifndef AQ_SRV_VOLUME_H
#define AQ_SRV_VOLUME_H

#include <jansson.h>

struct srv_req;

/* Roll back the volume create operation op runs (in the caller's
 * transaction): the volume row goes and its placement becomes a delete
 * nothing waits for, so its node removes whatever it made; the caller ends
 * op. AQ_EPRECOND with a message when op no longer runs it. */
int srv_volume_cancel_create(struct srv_req *req, const char *volume, const char *op);

int srv_h_volume_create(struct srv_req *req, json_t **resp);
int srv_h_volume_get(struct srv_req *req, json_t **resp);
int srv_h_volume_list(struct srv_req *req, json_t **resp);
int srv_h_volume_patch(struct srv_req *req, json_t **resp);
int srv_h_volume_delete(struct srv_req *req, json_t **resp);

#endif
