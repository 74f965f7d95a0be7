/* srv_metrics: GET /metrics (Prometheus text): request counters and
 * latency histograms per route, the reconciler's passes, uptime, resource
 * counts and the time series' totals. The counters are lock-free atomics,
 * fed from the socket thread (srv_metrics_observe) and the reconciler's
 * (srv_metrics_reconcile). */
#ifndef AQ_SRV_METRICS_H
#define AQ_SRV_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct srv_req;
struct srv_route;

/* One answered request of route rt (row route_idx of the table; NULL or
 * -1: unmatched) with status after ns nanoseconds. */
void srv_metrics_observe(const struct srv_route *rt, int route_idx, int status, uint64_t ns);
/* One reconciler pass: its time, the nodes it visited, pushed and failed,
 * and whether it visited all of them. */
void srv_metrics_reconcile(uint64_t ns, int nodes, int pushed, int failed, bool full);

int srv_h_metrics(struct srv_req *req, json_t **resp);

#endif
