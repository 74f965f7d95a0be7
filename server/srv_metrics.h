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
/* One reconciler pass: its time (deciding which nodes to visit and
 * handing them to the pushers, srv_pusher.h), the nodes it handed over,
 * whether that was all of them, and the nodes queued or in flight after. */
void srv_metrics_reconcile(uint64_t ns, int nodes, bool full, int busy);
/* The phases of one node's visit (aquifer_reconcile_visit_phase_seconds):
 * wait, from the first ring of the node's doorbell (srv_kick.h; a create,
 * an update) to a pusher taking it; build, its intent built; generation,
 * the transaction that gives it its generation; push, the round trip to
 * its agent; applied, the transaction that finishes what waited for it
 * (operations done, volumes READY). */
enum srv_visit_phase {
	SRV_VISIT_WAIT,
	SRV_VISIT_BUILD,
	SRV_VISIT_GENERATION,
	SRV_VISIT_PUSH,
	SRV_VISIT_APPLIED,
	SRV_VISIT_PHASES
};
/* One visit: its phases' times (0: not reached), whether wait was measured
 * (rung), and its outcome (1 pushed, -1 the push failed, 0 none due, -2
 * the intent could not be built). */
void srv_metrics_visit(const uint64_t ns[SRV_VISIT_PHASES], bool rung, int result);

int srv_h_metrics(struct srv_req *req, json_t **resp);

#endif
