/* srv_operation: the operations collection of a location (GET
 * .../operations, GET .../operations/O, POST .../operations/O:cancel,
 * DELETE .../operations/O). Cancelling a running volume create rolls it
 * back (srv_volume_cancel_create) and rings the reconciler so its node
 * removes what it made. Each handler runs in its own transaction on a
 * worker. */
#ifndef AQ_SRV_OPERATION_H
#define AQ_SRV_OPERATION_H

#include <jansson.h>

struct srv_req;

int srv_h_op_get(struct srv_req *req, json_t **resp);
int srv_h_op_list(struct srv_req *req, json_t **resp);
int srv_h_op_cancel(struct srv_req *req, json_t **resp);
int srv_h_op_delete(struct srv_req *req, json_t **resp);

#endif
