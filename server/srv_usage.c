/* srv_usage: the time series routes (issue 8), answered from the
 * in-memory series of srv_series.c:
 *   GET /v1/projects/P/locations/L/volumes/V/metrics?window=15m
 *   GET /v1/projects/P/locations/L/storagePools/S/metrics  (sum of its volumes)
 *   GET /v1/nodes/N/metrics                                 (cluster admin)
 * The resource must exist (404 otherwise); RBAC is the route table's. */
#include "server/srv_usage.h"

#include <stdio.h>
#include <time.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "util/ut_clock.h"
#include "server/srv_internal.h"
#include "server/srv_req.h"
#include "server/srv_series.h"

static int usage_answer(struct srv_req *req, enum srv_series_kind kind, const char *name,
			const char *what, json_t **resp)
{
	const char *w = srv_query(req, "window");
	int window = 3600, rc;
	json_t *doc = NULL, *points;

	if (w && srv_series_window(w, &window) != AQ_OK)
		return aq_fail(&req->msg, AQ_EINVAL, "window \"%s\": expected 1s..1h as 90s, 15m or 1h", w);
	if ((rc = db_get(req->db, name, &doc)) == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "%s \"%s\" not found", what, name);
	json_decref(doc);
	if (rc != AQ_OK)
		return rc;
	if (!(points = srv_series_points(req->srv->series, kind, name, window, ut_clock_real_ms())))
		return AQ_ENOMEM;
	*resp = json_pack("{s:s,s:i,s:i,s:o}", "name", name, "windowSeconds", window, "stepSeconds",
			  SRV_SERIES_STEP_S, "points", points);
	return *resp ? AQ_OK : AQ_ENOMEM;
}

int srv_h_volume_metrics(struct srv_req *req, json_t **resp)
{
	char name[800];

	snprintf(name, sizeof(name), "projects/%s/locations/%s/volumes/%s", req->params[0], req->params[1],
		 req->params[2]);
	return usage_answer(req, SRV_SERIES_VOLUME, name, "volume", resp);
}

int srv_h_pool_metrics(struct srv_req *req, json_t **resp)
{
	char name[800];

	snprintf(name, sizeof(name), "projects/%s/locations/%s/storagePools/%s", req->params[0],
		 req->params[1], req->params[2]);
	return usage_answer(req, SRV_SERIES_POOL, name, "storage pool", resp);
}

int srv_h_node_metrics(struct srv_req *req, json_t **resp)
{
	char name[300];

	snprintf(name, sizeof(name), "nodes/%s", req->params[0]);
	return usage_answer(req, SRV_SERIES_NODE, name, "node", resp);
}
