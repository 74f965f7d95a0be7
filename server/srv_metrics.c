/* srv_metrics: aquiferd's Prometheus text. Request counts and latency
 * histograms by route and status are lock-free counters indexed by route;
 * resource counts and whether each volume is served come from the database
 * at scrape time (on a worker). The text names every project's volumes, so
 * under metrics_auth (the default) it needs a metrics or cluster-admin
 * token; internal kinds (secrets, spent join tokens, placements) are never
 * counted in it. */
#include "server/srv_metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "util/ut_buf.h"
#include "util/ut_clock.h"
#include "server/srv_internal.h"
#include "server/srv_lead.h"
#include "server/srv_place.h"
#include "server/srv_req.h"
#include "server/srv_series.h"
#include "server/srv_shelfio.h"
#include "server/srv_visit.h"

#define M_ROUTES 64
static const int m_statuses[] = { 200, 400, 401, 403, 404, 405, 409, 413, 429, 499, 500, 501, 503, 504 };
#define M_NSTATUS ((int)(sizeof(m_statuses) / sizeof(m_statuses[0])))
static const double m_bounds[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5 };
#define M_NBUCKETS ((int)(sizeof(m_bounds) / sizeof(m_bounds[0])))

/* Process-wide counters: the metrics sink, like the log sink. Index M_ROUTES
 * collects requests that matched no route. */
static struct {
	unsigned long long count[M_ROUTES + 1][M_NSTATUS];
	unsigned long long bucket[M_ROUTES + 1][M_NBUCKETS];
	unsigned long long total[M_ROUTES + 1];
	unsigned long long sum_ns[M_ROUTES + 1];
} m;

/* The reconciler's passes: how long the last one took, how many nodes it
 * visited and pushed to. */
static struct {
	unsigned long long passes, pushes, push_failures, last_ns, last_nodes, full_ns, busy, visits;
	/* per phase (srv_metrics.h): visits that reached it, their sum and max */
	unsigned long long ph_count[SRV_VISIT_PHASES], ph_sum_ns[SRV_VISIT_PHASES], ph_max_ns[SRV_VISIT_PHASES];
} rec;

static const char *const m_phase[SRV_VISIT_PHASES] = {
	[SRV_VISIT_WAIT] = "wait",
	[SRV_VISIT_BUILD] = "build",
	[SRV_VISIT_GENERATION] = "generation",
	[SRV_VISIT_PUSH] = "push",
	[SRV_VISIT_APPLIED] = "applied",
};

void srv_metrics_reconcile(uint64_t ns, int nodes, bool full, int busy)
{
	if (full)
		__atomic_store_n(&rec.full_ns, ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&rec.passes, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&rec.last_ns, ns, __ATOMIC_RELAXED);
	__atomic_store_n(&rec.last_nodes, (unsigned long long)nodes, __ATOMIC_RELAXED);
	__atomic_store_n(&rec.busy, (unsigned long long)(busy > 0 ? busy : 0), __ATOMIC_RELAXED);
}

void srv_metrics_visit(const uint64_t ns[SRV_VISIT_PHASES], bool rung, int result)
{
	__atomic_fetch_add(&rec.visits, 1, __ATOMIC_RELAXED);
	if (result == 1)
		__atomic_fetch_add(&rec.pushes, 1, __ATOMIC_RELAXED);
	if (result == -1)
		__atomic_fetch_add(&rec.push_failures, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < SRV_VISIT_PHASES; i++) {
		unsigned long long max = __atomic_load_n(&rec.ph_max_ns[i], __ATOMIC_RELAXED);

		if (ns[i] == 0 && !(i == SRV_VISIT_WAIT && rung))
			continue;
		__atomic_fetch_add(&rec.ph_count[i], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&rec.ph_sum_ns[i], ns[i], __ATOMIC_RELAXED);
		while (ns[i] > max && !__atomic_compare_exchange_n(&rec.ph_max_ns[i], &max, ns[i], false,
								  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}

/* The route of each index, recorded by its first request: a route no
 * request reached has no line to label. */
static const struct srv_route *m_route[M_ROUTES];

void srv_metrics_observe(const struct srv_route *rt, int route_idx, int status, uint64_t ns)
{
	int r = rt && route_idx >= 0 && route_idx < M_ROUTES ? route_idx : M_ROUTES;
	double s = (double)ns / 1e9;

	if (r < M_ROUTES && !__atomic_load_n(&m_route[r], __ATOMIC_ACQUIRE))
		__atomic_store_n(&m_route[r], rt, __ATOMIC_RELEASE);

	for (int i = 0; i < M_NSTATUS; i++)
		if (m_statuses[i] == status)
			__atomic_fetch_add(&m.count[r][i], 1, __ATOMIC_RELAXED);
	for (int b = 0; b < M_NBUCKETS; b++)
		if (s <= m_bounds[b])
			__atomic_fetch_add(&m.bucket[r][b], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&m.total[r], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&m.sum_ns[r], ns, __ATOMIC_RELAXED);
}

/* What one /metrics answer may hold: every route's rows and a row per
 * volume of a large cluster fit many times over. */
#define M_TEXT_MAX (64u * 1024 * 1024)

/* The labels of counter row r; false for a route no request reached. */
static bool m_route_labels(int r, char *out, size_t cap)
{
	const struct srv_route *rt = r < M_ROUTES ? __atomic_load_n(&m_route[r], __ATOMIC_ACQUIRE) : NULL;

	if (r == M_ROUTES)
		snprintf(out, cap, "method=\"\",route=\"unmatched\"");
	else if (rt)
		snprintf(out, cap, "method=\"%s\",route=\"%s\"", rt->method, rt->path);
	return r == M_ROUTES || rt;
}

/* GET /metrics under --metrics-auth: a cluster-admin or metrics token
 * (verified here: the route itself is open, so that metrics_auth = false
 * needs no token). */
static int m_authorize(struct srv_req *req)
{
	int rc;

	if (!req->srv->cfg.metrics_auth)
		return AQ_OK;
	if ((rc = srv_auth_token_verify(req->srv->key, req->authz, &req->auth, &req->msg)) != AQ_OK)
		return rc;
	return srv_auth_metrics(&req->auth, &req->msg);
}

/* The kinds aquifer_resources counts: the API's resources, nothing internal. */
static const char *const m_public_kinds[] = { "project", "location", "pool", "volume", "snapshot", "operation",
					      "node", "shelf" };

static void m_kind(const char *kind, int64_t n, void *arg)
{
	for (size_t i = 0; i < sizeof(m_public_kinds) / sizeof(m_public_kinds[0]); i++)
		if (strcmp(kind, m_public_kinds[i]) == 0)
			ut_buf_addf(arg, "aquifer_resources{kind=\"%s\"} %lld\n", kind, (long long)n);
}

/* aquifer_volume_served: 1 when the node a volume is placed on is up and has
 * applied it (no create or move waits for it), 0 otherwise: a READY volume
 * whose only node is DOWN, or one moving to a node that has not applied it
 * yet. One read of volumes, placements and nodes. */
static int m_served(struct db *db, struct ut_buf *b)
{
	struct db_query qv = { .kind = "volume" }, qp = { .kind = "placement" }, qn = { .kind = "node" };
	json_t *vols = NULL, *pls = NULL, *nodes = NULL, *byvol = json_object(), *bynode = json_object(), *e;
	size_t i;
	int rc;

	if (!byvol || !bynode) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = db_list_all(db, &qv, &vols, NULL)) != AQ_OK || (rc = db_list_all(db, &qp, &pls, NULL)) != AQ_OK ||
	    (rc = db_list_all(db, &qn, &nodes, NULL)) != AQ_OK)
		goto out;
	json_array_foreach(pls, i, e)
		json_object_set(byvol, api_json_str(e, "volume", ""), e);
	json_array_foreach(nodes, i, e)
		json_object_set(bynode, api_json_str(e, "name", ""), e);
	ut_buf_addf(b, "# HELP aquifer_volume_served Whether a node serves the volume now (1) or not (0: its node is "
		    "DOWN, or it is being created or moved and its node has not applied it yet).\n"
		    "# TYPE aquifer_volume_served gauge\n");
	json_array_foreach(vols, i, e) {
		const char *vn = api_json_str(e, "name", ""), *state = api_json_str(e, "state", "");
		const json_t *pl = json_object_get(byvol, vn);
		const json_t *node = json_object_get(bynode, api_json_str(pl, "node", ""));
		const char *action = api_json_str(pl, "action", "");
		char project[64], loc[64], vol[64];
		bool served = pl && node && strcmp(api_json_str(node, "state", ""), "DOWN") != 0 &&
			      strcmp(action, "create") != 0 && strcmp(action, "move") != 0 &&
			      strcmp(action, "delete") != 0 && strcmp(state, "ERROR") != 0;

		if (sscanf(vn, "projects/%63[^/]/locations/%63[^/]/volumes/%63[^/]", project, loc, vol) != 3)
			continue;
		ut_buf_addf(b, "aquifer_volume_served{project=\"%s\",location=\"%s\",pool=\"%s\",volume=\"%s\"} %d\n",
			 project, loc, api_volume_pool_id(e), vol, served ? 1 : 0);
	}
out:
	json_decref(vols);
	json_decref(pls);
	json_decref(nodes);
	json_decref(byvol);
	json_decref(bynode);
	return rc;
}

/* aquifer_volume_snapshots and aquifer_volume_snapshot_bytes: each volume's
 * snapshots (every state but DELETING) and the bytes they alone hold, as
 * its node last reported them. One read of the snapshots. */
static int m_snapshots(struct db *db, struct ut_buf *b)
{
	json_t *snaps = NULL, *s, *byvol = json_object(), *e;
	const char *vn;
	size_t i;
	int rc;

	if (!byvol)
		return AQ_ENOMEM;
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "snapshot" }, &snaps, NULL)) != AQ_OK)
		goto out;
	json_array_foreach(snaps, i, s) {
		const char *sn = api_json_str(s, "name", ""), *cut = strstr(sn, "/snapshots/");
		char vname[700];

		if (!cut || strcmp(api_json_str(s, "state", ""), "DELETING") == 0)
			continue;
		snprintf(vname, sizeof(vname), "%.*s", (int)(cut - sn), sn);
		if (!(e = json_object_get(byvol, vname)))
			json_object_set_new(byvol, vname, e = json_pack("{s:i,s:f}", "n", 0, "bytes", 0.0));
		json_object_set_new(e, "n", json_integer(json_integer_value(json_object_get(e, "n")) + 1));
		json_object_set_new(e, "bytes", json_real(json_real_value(json_object_get(e, "bytes")) +
							   api_json_double(s, "usedBytes", 0)));
	}
	ut_buf_addf(b, "# HELP aquifer_volume_snapshots Snapshots of the volume (being created, ready or in error).\n"
		    "# TYPE aquifer_volume_snapshots gauge\n");
	json_object_foreach(byvol, vn, e) {
		char project[64], loc[64], vol[64];

		if (sscanf(vn, "projects/%63[^/]/locations/%63[^/]/volumes/%63[^/]", project, loc, vol) == 3)
			ut_buf_addf(b, "aquifer_volume_snapshots{project=\"%s\",location=\"%s\",volume=\"%s\"} %lld\n", project,
				    loc, vol, (long long)json_integer_value(json_object_get(e, "n")));
	}
	ut_buf_addf(b, "# HELP aquifer_volume_snapshot_bytes Bytes the volume's snapshots alone hold (what deleting them frees).\n"
		    "# TYPE aquifer_volume_snapshot_bytes gauge\n");
	json_object_foreach(byvol, vn, e) {
		char project[64], loc[64], vol[64];

		if (sscanf(vn, "projects/%63[^/]/locations/%63[^/]/volumes/%63[^/]", project, loc, vol) == 3)
			ut_buf_addf(b, "aquifer_volume_snapshot_bytes{project=\"%s\",location=\"%s\",volume=\"%s\"} %.17g\n",
				    project, loc, vol, json_real_value(json_object_get(e, "bytes")));
	}
out:
	json_decref(snaps);
	json_decref(byvol);
	return rc;
}

/* The per-volume and per-node families from the in-memory series (docs/metrics.md). */
static const struct {
	const char *kind, *name, *type, *field, *help;
	double scale;
} m_series[] = {
	{ "volume", "aquifer_volume_read_bytes_total", "counter", "readBytes", "Bytes read from the volume over NFS.", 1 },
	{ "volume", "aquifer_volume_write_bytes_total", "counter", "writeBytes", "Bytes written to the volume over NFS.", 1 },
	{ "volume", "aquifer_volume_read_ops_total", "counter", "readOps", "NFS READ operations on the volume.", 1 },
	{ "volume", "aquifer_volume_write_ops_total", "counter", "writeOps", "NFS WRITE operations on the volume.", 1 },
	{ "volume", "aquifer_volume_throttled_seconds_total", "counter", "throttledUs", "Time the volume's requests waited for QoS.", 1e-6 },
	{ "volume", "aquifer_volume_throughput_limit_bytes_per_second", "gauge", "limitMibps", "The volume's throughput limit (QoS).", 1048576 },
	{ "volume", "aquifer_volume_used_bytes", "gauge", "usedBytes", "Bytes used by the volume's files.", 1 },
	{ "volume", "aquifer_volume_latency_p50_seconds", "gauge", "latencyP50Ms", "Median NFS operation latency over the last minute.", 1e-3 },
	{ "volume", "aquifer_volume_latency_p99_seconds", "gauge", "latencyP99Ms", "99th percentile NFS operation latency over the last minute.", 1e-3 },
	/* the cold tier, GCNV's volume/auto_tiering/... and storage_pool/auto_tiering/... */
	{ "volume", "aquifer_volume_auto_tiering_tiered_bytes", "gauge", "tieredBytes", "Bytes of the volume's data that live on the cold tier (GCNV tiered_bytes).", 1 },
	{ "volume", "aquifer_volume_auto_tiering_cold_tier_read_bytes_total", "counter", "coldReadBytes", "Bytes read from the cold tier for the volume (GCNV cold_tier_read_byte_count).", 1 },
	{ "volume", "aquifer_volume_auto_tiering_cold_tier_write_bytes_total", "counter", "coldWriteBytes", "Bytes written to the cold tier for the volume (GCNV cold_tier_write_byte_count).", 1 },
	{ "pool", "aquifer_pool_auto_tiering_tiered_bytes", "gauge", "tieredBytes", "Bytes of the pool's volumes on the cold tier.", 1 },
	{ "pool", "aquifer_pool_auto_tiering_cold_tier_read_bytes_total", "counter", "coldReadBytes", "Bytes read from the cold tier for the pool's volumes.", 1 },
	{ "pool", "aquifer_pool_auto_tiering_cold_tier_write_bytes_total", "counter", "coldWriteBytes", "Bytes written to the cold tier for the pool's volumes.", 1 },
	{ "node", "aquifer_node_read_bytes_total", "counter", "readBytes", "Bytes read over NFS from the volumes a node serves.", 1 },
	{ "node", "aquifer_node_write_bytes_total", "counter", "writeBytes", "Bytes written over NFS to the volumes a node serves.", 1 },
	{ "node", "aquifer_node_read_ops_total", "counter", "readOps", "NFS READ operations a node served.", 1 },
	{ "node", "aquifer_node_write_ops_total", "counter", "writeOps", "NFS WRITE operations a node served.", 1 },
	{ "node", "aquifer_node_throughput_ceiling_bytes_per_second", "gauge", "limitMibps", "What placement may put on the node.", 1048576 },
	{ "node", "aquifer_node_used_bytes", "gauge", "usedBytes", "Bytes used by the volumes a node serves.", 1 },
};

/* The pool entries: the cold-tier figures of totals' volumes summed per
 * (project, location, pool); appended to totals as kind "pool". */
static void m_pool_sums(json_t *totals)
{
	static const char *const fields[] = { "tieredBytes", "coldReadBytes", "coldWriteBytes" };
	json_t *pools = json_object(), *e, *p;
	const char *k;
	size_t i, n = json_array_size(totals);

	if (!pools)
		return;
	for (i = 0; i < n; i++) {
		const json_t *l;
		char key[256];

		e = json_array_get(totals, i);
		l = json_object_get(e, "labels");
		if (strcmp(api_json_str(e, "kind", ""), "volume") != 0)
			continue;
		snprintf(key, sizeof(key), "%s/%s/%s", api_json_str(l, "project", ""), api_json_str(l, "location", ""),
			 api_json_str(l, "pool", ""));
		if (!(p = json_object_get(pools, key))) {
			p = json_pack("{s:s,s:{s:s,s:s,s:s}}", "kind", "pool", "labels", "project",
				      api_json_str(l, "project", ""), "location", api_json_str(l, "location", ""),
				      "pool", api_json_str(l, "pool", ""));
			if (!p || json_object_set_new(pools, key, p) != 0)
				continue;
		}
		for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
			json_object_set_new(p, fields[f], json_integer(api_json_int64(p, fields[f], 0) +
								       api_json_int64(e, fields[f], 0)));
	}
	json_object_foreach(pools, k, p)
		json_array_append(totals, p);
	json_decref(pools);
}

static void m_series_print(struct ut_buf *b, json_t *totals)
{
	const json_t *e;
	size_t i;

	m_pool_sums(totals);
	for (size_t f = 0; f < sizeof(m_series) / sizeof(m_series[0]); f++) {
		ut_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", m_series[f].name, m_series[f].help, m_series[f].name,
			 m_series[f].type);
		json_array_foreach(totals, i, e) {
			const json_t *l = json_object_get(e, "labels");
			double v = api_json_double(e, m_series[f].field, 0);

			if (strcmp(api_json_str(e, "kind", ""), m_series[f].kind) != 0 || v < 0)
				continue; /* a latency without operations is left out */
			if (strcmp(m_series[f].kind, "pool") == 0)
				ut_buf_addf(b, "%s{project=\"%s\",location=\"%s\",pool=\"%s\"} %.17g\n", m_series[f].name,
					 api_json_str(l, "project", ""), api_json_str(l, "location", ""),
					 api_json_str(l, "pool", ""), v * m_series[f].scale);
			else if (strcmp(m_series[f].kind, "volume") == 0)
				ut_buf_addf(b, "%s{project=\"%s\",location=\"%s\",pool=\"%s\",volume=\"%s\"} %.17g\n",
					 m_series[f].name, api_json_str(l, "project", ""), api_json_str(l, "location", ""),
					 api_json_str(l, "pool", ""), api_json_str(l, "volume", ""), v * m_series[f].scale);
			else
				ut_buf_addf(b, "%s{node=\"%s\",location=\"%s\"} %.17g\n", m_series[f].name,
					 api_json_str(l, "node", ""), api_json_str(l, "location", ""), v * m_series[f].scale);
		}
	}
}

/* Per-shelf ceilings and the I/O the agents report (srv_shelfio.h). */
static int m_shelves(struct srv_req *req, struct ut_buf *b)
{
	struct db_query q = { .kind = "shelf" };
	json_t *shelves = NULL;
	int rc;

	if ((rc = db_list_all(req->db, &q, &shelves, NULL)) == AQ_OK)
		srv_shelfio_metrics(req->srv->shelfio, shelves, b, ut_clock_real_ms());
	json_decref(shelves);
	return rc;
}

int srv_h_metrics(struct srv_req *req, json_t **resp)
{
	struct ut_buf b;
	int rc;

	(void)resp;
	if ((rc = m_authorize(req)) != AQ_OK)
		return rc;
	ut_buf_init(&b, M_TEXT_MAX);
	ut_buf_addf(&b, "# HELP aquifer_http_requests_total HTTP requests served, by route and status.\n"
		     "# TYPE aquifer_http_requests_total counter\n");
	for (int r = 0; r <= M_ROUTES; r++) {
		char lab[300];

		if (!m_route_labels(r, lab, sizeof(lab)))
			continue;
		for (int s = 0; s < M_NSTATUS; s++) {
			unsigned long long c = __atomic_load_n(&m.count[r][s], __ATOMIC_RELAXED);

			if (c)
				ut_buf_addf(&b, "aquifer_http_requests_total{%s,code=\"%d\"} %llu\n", lab, m_statuses[s], c);
		}
	}
	ut_buf_addf(&b, "# HELP aquifer_http_request_duration_seconds Time from request start to response, by route.\n"
		     "# TYPE aquifer_http_request_duration_seconds histogram\n");
	for (int r = 0; r <= M_ROUTES; r++) {
		char lab[300];
		unsigned long long total = __atomic_load_n(&m.total[r], __ATOMIC_RELAXED);

		if (total == 0 || !m_route_labels(r, lab, sizeof(lab)))
			continue;
		for (int k = 0; k < M_NBUCKETS; k++)
			ut_buf_addf(&b, "aquifer_http_request_duration_seconds_bucket{%s,le=\"%g\"} %llu\n", lab,
				 m_bounds[k], __atomic_load_n(&m.bucket[r][k], __ATOMIC_RELAXED));
		ut_buf_addf(&b, "aquifer_http_request_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n", lab, total);
		ut_buf_addf(&b, "aquifer_http_request_duration_seconds_sum{%s} %.9f\n", lab,
			 (double)__atomic_load_n(&m.sum_ns[r], __ATOMIC_RELAXED) / 1e9);
		ut_buf_addf(&b, "aquifer_http_request_duration_seconds_count{%s} %llu\n", lab, total);
	}
	ut_buf_addf(&b, "# HELP aquifer_resources Resources stored, by kind.\n# TYPE aquifer_resources gauge\n");
	db_count_kinds(req->db, m_kind, &b);
	ut_buf_addf(&b, "# HELP aquifer_reconcile_passes_total Reconciler passes over every node.\n"
		     "# TYPE aquifer_reconcile_passes_total counter\naquifer_reconcile_passes_total %llu\n"
		     "# HELP aquifer_reconcile_pushes_total Desired-state pushes to agents.\n"
		     "# TYPE aquifer_reconcile_pushes_total counter\naquifer_reconcile_pushes_total %llu\n"
		     "# HELP aquifer_reconcile_push_failures_total Pushes that did not reach or were refused by an agent.\n"
		     "# TYPE aquifer_reconcile_push_failures_total counter\naquifer_reconcile_push_failures_total %llu\n"
		     "# HELP aquifer_reconcile_last_pass_seconds Duration of the last reconciler pass.\n"
		     "# TYPE aquifer_reconcile_last_pass_seconds gauge\naquifer_reconcile_last_pass_seconds %.6f\n"
		     "# HELP aquifer_reconcile_last_pass_nodes Nodes visited by the last reconciler pass.\n"
		     "# TYPE aquifer_reconcile_last_pass_nodes gauge\naquifer_reconcile_last_pass_nodes %llu\n"
		     "# HELP aquifer_reconcile_last_full_pass_seconds Duration of the last pass over every node.\n"
		     "# TYPE aquifer_reconcile_last_full_pass_seconds gauge\naquifer_reconcile_last_full_pass_seconds %.6f\n",
		 __atomic_load_n(&rec.passes, __ATOMIC_RELAXED), __atomic_load_n(&rec.pushes, __ATOMIC_RELAXED),
		 __atomic_load_n(&rec.push_failures, __ATOMIC_RELAXED),
		 (double)__atomic_load_n(&rec.last_ns, __ATOMIC_RELAXED) / 1e9,
		 __atomic_load_n(&rec.last_nodes, __ATOMIC_RELAXED),
		 (double)__atomic_load_n(&rec.full_ns, __ATOMIC_RELAXED) / 1e9);
	ut_buf_addf(&b, "# HELP aquifer_reconcile_busy_nodes Nodes queued for or in a pusher's visit after the last pass.\n"
		     "# TYPE aquifer_reconcile_busy_nodes gauge\naquifer_reconcile_busy_nodes %llu\n"
		     "# HELP aquifer_reconcile_visits_total Node visits by the reconciler's pushers.\n"
		     "# TYPE aquifer_reconcile_visits_total counter\naquifer_reconcile_visits_total %llu\n"
		     "# HELP aquifer_reconcile_visit_phase_seconds Time of each phase of a node's visit: wait (doorbell to pusher), build, generation, push, applied.\n"
		     "# TYPE aquifer_reconcile_visit_phase_seconds summary\n",
		 __atomic_load_n(&rec.busy, __ATOMIC_RELAXED), __atomic_load_n(&rec.visits, __ATOMIC_RELAXED));
	for (int i = 0; i < SRV_VISIT_PHASES; i++)
		ut_buf_addf(&b, "aquifer_reconcile_visit_phase_seconds_sum{phase=\"%s\"} %.6f\n"
			     "aquifer_reconcile_visit_phase_seconds_count{phase=\"%s\"} %llu\n",
			 m_phase[i], (double)__atomic_load_n(&rec.ph_sum_ns[i], __ATOMIC_RELAXED) / 1e9, m_phase[i],
			 __atomic_load_n(&rec.ph_count[i], __ATOMIC_RELAXED));
	ut_buf_addf(&b, "# HELP aquifer_reconcile_visit_phase_max_seconds The longest of each phase of a visit since start.\n"
		     "# TYPE aquifer_reconcile_visit_phase_max_seconds gauge\n");
	for (int i = 0; i < SRV_VISIT_PHASES; i++)
		ut_buf_addf(&b, "aquifer_reconcile_visit_phase_max_seconds{phase=\"%s\"} %.6f\n", m_phase[i],
			 (double)__atomic_load_n(&rec.ph_max_ns[i], __ATOMIC_RELAXED) / 1e9);
	{
		json_t *lead = json_object();

		srv_lead_view(req->srv, lead);
		ut_buf_addf(&b, "# HELP aquifer_leader 1 while this replica holds the leader lease (it reconciles, tracks node liveness and schedules snapshots).\n"
			     "# TYPE aquifer_leader gauge\naquifer_leader %d\n"
			     "# HELP aquifer_leader_epoch The leader lease's epoch (fencing token) as this replica last saw it.\n"
			     "# TYPE aquifer_leader_epoch gauge\naquifer_leader_epoch %lld\n",
			     json_is_true(json_object_get(lead, "leader")) ? 1 : 0,
			     (long long)json_integer_value(json_object_get(lead, "leaderEpoch")));
		json_decref(lead);
	}
	{
		struct db_sync_stats st;

		db_sync_stats(&st);
		ut_buf_addf(&b, "# HELP aquifer_db_commits_total Database commits of this process (transactions and single writes).\n"
			     "# TYPE aquifer_db_commits_total counter\naquifer_db_commits_total %llu\n"
			     "# HELP aquifer_db_syncs_total Group commit's syncs of the log (SQLite: fsyncs of the WAL; PostgreSQL: WAL flushes), each shared by the commits written before it.\n"
			     "# TYPE aquifer_db_syncs_total counter\naquifer_db_syncs_total %llu\n"
			     "# HELP aquifer_db_statements_total Statements this process gave the database engine.\n"
			     "# TYPE aquifer_db_statements_total counter\naquifer_db_statements_total %llu\n"
			     "# HELP aquifer_db_round_trips_total Waits for the engine's answer (PostgreSQL: round trips to the server, a pipeline of statements one).\n"
			     "# TYPE aquifer_db_round_trips_total counter\naquifer_db_round_trips_total %llu\n",
			     (unsigned long long)st.commits, (unsigned long long)st.syncs,
			     (unsigned long long)st.statements, (unsigned long long)st.round_trips);
	}
	{
		uint64_t hit, miss;

		srv_place_cache_stats(&hit, &miss);
		ut_buf_addf(&b, "# HELP aquifer_place_cache_total Reads of a location's nodes and shelves for placement: from this process's cache (its placement version unchanged) or from the database.\n"
			     "# TYPE aquifer_place_cache_total counter\naquifer_place_cache_total{result=\"hit\"} %llu\n"
			     "aquifer_place_cache_total{result=\"miss\"} %llu\n",
			     (unsigned long long)hit, (unsigned long long)miss);
	}
	{
		struct db_group_stats gs;

		db_group_stats(&gs);
		ut_buf_addf(&b, "# HELP aquifer_db_group_transactions_total Group transactions (db_group_run: the reconciler's visits, the status reports and volume creates, many in one commit).\n"
			     "# TYPE aquifer_db_group_transactions_total counter\naquifer_db_group_transactions_total %llu\n"
			     "# HELP aquifer_db_group_bodies_total Writes those group transactions ran (bodies per transaction: this over the transactions).\n"
			     "# TYPE aquifer_db_group_bodies_total counter\naquifer_db_group_bodies_total %llu\n"
			     "# HELP aquifer_db_group_alone_total Bodies run again alone after their group failed (a body's error or a conflict).\n"
			     "# TYPE aquifer_db_group_alone_total counter\naquifer_db_group_alone_total %llu\n",
			     (unsigned long long)gs.groups, (unsigned long long)gs.items, (unsigned long long)gs.alone);
		ut_buf_addf(&b, "# HELP aquifer_db_group_lane_commits_total Group transactions that held at least one write of the lane (live: agents' status reports, taken first; api: volume creates; recon: the reconciler's visits).\n"
			     "# TYPE aquifer_db_group_lane_commits_total counter\n");
		for (int l = 0; l < DB_GROUP_LANES; l++)
			ut_buf_addf(&b, "aquifer_db_group_lane_commits_total{lane=\"%s\"} %llu\n", db_group_lane_name(l),
				     (unsigned long long)gs.lane[l].groups);
		ut_buf_addf(&b, "# HELP aquifer_db_group_lane_bodies_total Writes of the lane run in group transactions (the lane's batch size: this over its commits).\n"
			     "# TYPE aquifer_db_group_lane_bodies_total counter\n");
		for (int l = 0; l < DB_GROUP_LANES; l++)
			ut_buf_addf(&b, "aquifer_db_group_lane_bodies_total{lane=\"%s\"} %llu\n", db_group_lane_name(l),
				     (unsigned long long)gs.lane[l].items);
		ut_buf_addf(&b, "# HELP aquifer_db_group_lane_wait_seconds_total Time the lane's writes waited from their call to their commit, in all.\n"
			     "# TYPE aquifer_db_group_lane_wait_seconds_total counter\n");
		for (int l = 0; l < DB_GROUP_LANES; l++)
			ut_buf_addf(&b, "aquifer_db_group_lane_wait_seconds_total{lane=\"%s\"} %.6f\n", db_group_lane_name(l),
				     (double)gs.lane[l].wait_ns / 1e9);
		ut_buf_addf(&b, "# HELP aquifer_db_group_lane_wait_max_seconds The longest a write of the lane waited for its commit since the start.\n"
			     "# TYPE aquifer_db_group_lane_wait_max_seconds gauge\n");
		for (int l = 0; l < DB_GROUP_LANES; l++)
			ut_buf_addf(&b, "aquifer_db_group_lane_wait_max_seconds{lane=\"%s\"} %.6f\n", db_group_lane_name(l),
				     (double)gs.lane[l].wait_max_ns / 1e9);
	}
	{
		struct srv_visit_batch_stats vs;

		srv_visit_batch_stats(&vs);
		ut_buf_addf(&b, "# HELP aquifer_visit_batches_total Batches of the reconciler's visit writes (generations before a push, applied marks after), each one group body.\n"
			     "# TYPE aquifer_visit_batches_total counter\naquifer_visit_batches_total %llu\n"
			     "# HELP aquifer_visit_batch_requests_total Visit writes run in batches (requests per batch: this over the batches).\n"
			     "# TYPE aquifer_visit_batch_requests_total counter\naquifer_visit_batch_requests_total %llu\n"
			     "# HELP aquifer_visit_batch_alone_total Visit writes run again alone after their batch failed.\n"
			     "# TYPE aquifer_visit_batch_alone_total counter\naquifer_visit_batch_alone_total %llu\n"
			     "# HELP aquifer_visit_batch_given_back_total Visit writes a batch gave back to the queue when its time budget ran out.\n"
			     "# TYPE aquifer_visit_batch_given_back_total counter\naquifer_visit_batch_given_back_total %llu\n",
			     (unsigned long long)vs.batches, (unsigned long long)vs.requests,
			     (unsigned long long)vs.alone, (unsigned long long)vs.given_back);
	}
	ut_buf_addf(&b, "# HELP aquifer_uptime_seconds Seconds since aquiferd started.\n# TYPE aquifer_uptime_seconds gauge\n"
		     "aquifer_uptime_seconds %.3f\n", (double)(ut_clock_mono_ns() - req->srv->start_ns) / 1e9);
	{
		json_t *totals = srv_series_totals(req->srv->series, ut_clock_real_ms());

		if (!totals)
			b.err = AQ_ENOMEM;
		m_series_print(&b, totals);
		json_decref(totals);
	}
	if ((rc = m_served(req->db, &b)) != AQ_OK || (rc = m_snapshots(req->db, &b)) != AQ_OK ||
	    (rc = m_shelves(req, &b)) != AQ_OK ||
	    (rc = ut_buf_err(&b)) != AQ_OK) {
		ut_buf_cleanup(&b);
		return rc;
	}
	req->text = ut_buf_steal(&b, &req->text_len);
	req->ctype = "text/plain; version=0.0.4; charset=utf-8";
	req->status = 200;
	return AQ_OK;
}
