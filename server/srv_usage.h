/* srv_usage: the metrics sub-resources of volumes, pools and nodes (GET
 * .../metrics?window=...), answered from the in-memory time series
 * (srv_series.h) after the resource itself is checked. */
#ifndef AQ_SRV_USAGE_H
#define AQ_SRV_USAGE_H

#include <jansson.h>

struct srv_req;

int srv_h_volume_metrics(struct srv_req *req, json_t **resp);
int srv_h_pool_metrics(struct srv_req *req, json_t **resp);
int srv_h_node_metrics(struct srv_req *req, json_t **resp);

#endif
