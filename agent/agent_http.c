/* agent_http: the agent's own API, for aquiferd and operators.
 *   PUT /v1/intent   desired state (aquiferd's push secret required)
 *   GET /v1/status   applied generation and per-volume state (push secret)
 *   GET /healthz     liveness, no credentials
 *   GET /metrics     Prometheus text, no credentials
 *   GET /v1/tier/scan[?volume=FSID]  cold tier consistency scan (push secret)
 * One MHD thread multiplexes the sockets (epoll). It decides from a request's
 * head alone, before any body is read: the route, aquiferd's credentials
 * (push secret, and under TLS its client certificate), whether a body may
 * come and its size; anything refused there is answered at once and the
 * connection closed, so nobody without the secret gets a byte of body
 * buffered. Accepted requests are suspended and run by a small worker pool
 * (the intent handler does disk I/O and waits for the agent's lock).
 * Connection limits and timeouts: tls.h (struct tls_listen_limits).
 */
#include "agent/agent_internal.h"

#include <errno.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs/nfs3.h"
#include "api/api_intent.h"
#include "api/api_schema.h"
#include "tls/tls.h"
#include "util/ut_buf.h"
#include "util/ut_fifo.h"
#include "util/ut_hex.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

#define AGENT_BODY_MAX API_INTENT_BODY_MAX
/* The text of /metrics: a few hundred bytes per volume and family. */
#define AH_METRICS_MAX (16u << 20)
/* Threads that run the handlers (the socket thread never does). */
#define AH_WORKERS 4
/* libmicrohttpd's memory per connection (request head, answer headers):
 * aquiferd's requests have small heads, bodies go through ah_req. */
#define AH_CONN_POOL (16 * 1024)

enum { AH_NEW = 0, AH_BODY, AH_QUEUED, AH_DONE };

struct ah_route;

struct ah_req {
	struct MHD_Connection *conn;
	const struct ah_route *route;
	int state;
	struct ut_buf body;      /* up to AGENT_BODY_MAX; AQ_ETOOBIG past it */
	const char *volume;      /* ?volume= (borrowed from the connection) */
	/* the answer */
	int status;
	char *text;
	const char *ctype;
	struct ut_fifo_node node; /* work queue link */
	char id[24];             /* the log's request id: "http-N" */
};

typedef int (*ah_handler)(struct agent *a, struct ah_req *r, int *status, char **text,
			  const char **ctype);

static int ah_json(json_t *doc, int status_in, int *status, char **text, const char **ctype)
{
	*text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	*status = *text ? status_in : 500;
	*ctype = "application/json";
	return AQ_OK;
}

static int ah_error(int code, const char *message, int *status, char **text, const char **ctype)
{
	return ah_json(json_pack("{s:{s:i,s:s,s:s}}", "error", "code", aq_err_http(code), "message", message,
				 "status", aq_err_status(code)),
		       aq_err_http(code), status, text, ctype);
}

static uint64_t vol_stats_errors(const struct vol_stats *st)
{
	uint64_t n = 0;

	for (int k = 0; k < VOL_NOPS; k++)
		n += st->errors[k];
	return n;
}

/* Per-volume figures of a status report. Counters are cumulative since the
 * export appeared on this node, countersAgeMs ago (so aquiferd counts the
 * first report of a new export from zero); aquiferd turns them into per-interval deltas
 * (srv_series.c). latUsHist[i] counts operations with latency < 2^i us (and
 * >= 2^(i-1) us); coldBytes live only in the cold store, hotBytes are the
 * rest of the file data (tier.h): usedBytes less the 4 KiB charged per name
 * (metadata, vol.h "Capacity") less coldBytes. */
static json_t *status_volume(struct agent *a, const json_t *v, const struct vol_stats *st, bool live)
{
	json_t *hist = json_array(), *doc;
	struct tier_stats ts;
	uint64_t meta = st->names * VOL_NAME_COST, data = st->used > meta ? st->used - meta : 0, cold;

	if (!live || tier_stats(a->tier, strtoull(api_json_str(v, "fsid", "0"), NULL, 16), &ts) != 0)
		memset(&ts, 0, sizeof(ts));
	cold = ts.cold_bytes < data ? ts.cold_bytes : data;

	for (int k = 0; k < VOL_LAT_BUCKETS; k++)
		json_array_append_new(hist, json_integer(live ? (json_int_t)st->lat_us_hist[k] : 0));
	doc = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:o}", "name",
			api_json_str(v, "name", ""), "shareName", api_json_str(v, "shareName", ""), "state",
			live ? "LIVE" : "ERROR", "usedBytes", (json_int_t)(live ? st->used : 0), "capacityBytes",
			(json_int_t)(live ? st->capacity : 0), "readBytes",
			(json_int_t)(live ? st->bytes[NFS3_READ] : 0), "writeBytes",
			(json_int_t)(live ? st->bytes[NFS3_WRITE] : 0), "readOps",
			(json_int_t)(live ? st->ops[NFS3_READ] : 0), "writeOps",
			(json_int_t)(live ? st->ops[NFS3_WRITE] : 0), "hotBytes",
			(json_int_t)(live ? data - cold : 0), "coldBytes", (json_int_t)cold, "errors", (json_int_t)(live ? vol_stats_errors(st) : 0),
			"throughputLimitMibps", api_json_double(v, "throughputMibps", 0), "latUsHist", hist);
	if (doc && live) { /* read-ahead (agent/vol/vol_ra.h) */
		json_object_set_new(doc, "readAheadBytes", json_integer((json_int_t)st->ra_bytes));
		json_object_set_new(doc, "readAheadHits", json_integer((json_int_t)st->ra_hits));
		json_object_set_new(doc, "readAheadWastedBytes", json_integer((json_int_t)st->ra_wasted));
	}
	if (doc && live) { /* time requests waited for QoS tokens; how old the counters are */
		json_object_set_new(doc, "throttledUs", json_integer((json_int_t)(st->qos.throttled_ns / 1000)));
		json_object_set_new(doc, "countersAgeMs", json_integer((json_int_t)st->age_ms));
	}
	if (doc) {
		json_object_set_new(doc, "coldReadBytes", json_integer((json_int_t)ts.cold_read_bytes));
		json_object_set_new(doc, "coldWriteBytes", json_integer((json_int_t)ts.cold_write_bytes));
		json_object_set_new(doc, "tierState", json_string(ts.state));
		json_object_set_new(doc, "tierDetails", json_string(ts.details));
	}
	return doc;
}

/* The shelf's figures of a status report: what it is and the I/O the store
 * issued to it, cumulative since the agent started (srv_shelfio.h turns
 * them into rates and latencies). */
static json_t *status_shelf(struct agent *a)
{
	struct vol_shelf_io io;
	const char *backend, *transport, *nqn;

	vol_store_shelf_io(a->store, &io);
	agent_shelf_describe(&a->shelf, &backend, &transport, &nqn);
	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "backend", backend, "transport", transport,
			 "nqn", nqn, "readBytes", (json_int_t)io.read_bytes, "readOps", (json_int_t)io.read_ops,
			 "readTimedOps", (json_int_t)io.read_timed_ops, "readUs", (json_int_t)io.read_us,
			 "writeBytes", (json_int_t)io.write_bytes, "writeOps", (json_int_t)io.write_ops,
			 "writeUs", (json_int_t)io.write_us);
}

json_t *agent_status_doc(struct agent *a, bool volumes)
{
	json_t *doc, *vols = json_array(), *v, *intent, *notes;
	char smb[400];
	size_t i;

	/* always sent: "" tells aquiferd this agent serves no SMB */
	agent_smb_address(a, smb, sizeof(smb));
	/* the applied state under a->lock, its O(volumes) report outside it:
	 * an apply publishes under it too (agent_apply), and neither waits
	 * for the other's pass over every volume. a->intent is never changed
	 * in place, only replaced. */
	pthread_mutex_lock(&a->lock);
	/* tokenRenewal: this agent keeps the node token a report's answer renews */
	intent = volumes ? json_incref(a->intent) : NULL;
	notes = volumes && a->shelf_notes ? json_deep_copy(a->shelf_notes) : NULL;
	doc = json_pack("{s:s,s:s,s:I,s:s,s:s,s:I,s:o,s:b}", "node", a->cfg.node, "location", a->cfg.location,
			"appliedGeneration", (json_int_t)a->applied, "agentVersion", AQ_VERSION, "lastError",
			a->last_error, "reportsDelivered", (json_int_t)a->reports_ok, "failed",
			a->failed ? json_deep_copy(a->failed) : json_array(), "tokenRenewal", 1);
	if (doc)
		json_object_set_new(doc, "serviceAddresses", agent_svc_report(&a->svc));
	pthread_mutex_unlock(&a->lock);
	json_array_foreach(json_object_get(intent, "volumes"), i, v) {
		struct vol_stats st;
		bool live = vol_store_stats(a->store, api_json_str(v, "fsid", ""), &st) == 0;
		json_t *vd = status_volume(a, v, &st, live);

		if (vd)
			agent_snap_status(a, api_json_str(v, "dir", ""), vd);
		/* a resize the shelf could not make: the volume serves at its old size */
		if (vd && json_object_get(notes, api_json_str(v, "name", "")))
			json_object_set(vd, "shelfDetails", json_object_get(notes, api_json_str(v, "name", "")));
		json_array_append_new(vols, vd);
	}
	if (doc && volumes) {
		json_object_set(doc, "volumes", vols);
		if (a->store)
			json_object_set_new(doc, "shelf", status_shelf(a));
	}
	if (doc) {
		json_object_set_new(doc, API_INTENT_SMB_ADDRESS, json_string(smb));
		agent_bkjob_status(a, doc);
	}
	json_decref(vols);
	json_decref(intent);
	json_decref(notes);
	return doc;
}

static int h_healthz(struct agent *a, struct ah_req *r, int *status, char **text, const char **ctype)
{
	(void)a;
	(void)r;
	return ah_json(json_pack("{s:s}", "status", "ok"), 200, status, text, ctype);
}

static int h_status(struct agent *a, struct ah_req *r, int *status, char **text, const char **ctype)
{
	(void)r;
	return ah_json(agent_status_doc(a, true), 200, status, text, ctype);
}

/* Objects under each tiered volume's prefix against its records: orphans
 * (objects no record names) and missing (records without their object). */
static int h_tier_scan(struct agent *a, struct ah_req *r, int *status, char **text, const char **ctype)
{
	uint64_t fsid = 0;
	char *json = NULL;
	int rc;

	if (r->volume) {
		if (strlen(r->volume) != 16 || !ut_hex_valid(r->volume, 16))
			return ah_error(AQ_EINVAL, "volume must be a volume's fsid (16 hex digits)", status, text, ctype);
		fsid = strtoull(r->volume, NULL, 16);
	}
	rc = tier_scan(a->tier, fsid, &json);
	if (rc == -ENOENT)
		return ah_error(AQ_ENOENT, "no tiered volume with that fsid", status, text, ctype);
	if (rc != 0)
		return ah_error(AQ_EUNAVAIL, "the cold store cannot be listed now", status, text, ctype);
	*text = json;
	*status = 200;
	*ctype = "application/json";
	return AQ_OK;
}

static int h_intent(struct agent *a, struct ah_req *r, int *status, char **text, const char **ctype)
{
	json_error_t err;
	json_t *intent, *failed;
	aq_msg msg = { .text = "" };
	int64_t applied;
	int rc;

	if (ut_buf_err(&r->body) == AQ_ETOOBIG)
		return ah_error(AQ_ETOOBIG, "intent larger than 16 MiB", status, text, ctype);
	intent = json_loadb(ut_buf_str(&r->body), ut_buf_len(&r->body), 0, &err);
	if (!intent || !json_is_object(intent)) {
		json_decref(intent);
		return ah_error(AQ_EINVAL, "intent is not a JSON object", status, text, ctype);
	}
	if (strcmp(api_json_str(intent, "node", ""), a->cfg.node) != 0 &&
	    strcmp(api_json_str(intent, "node", ""), "") != 0) {
		char want[100];

		snprintf(want, sizeof(want), "nodes/%s", a->cfg.node);
		if (strcmp(api_json_str(intent, "node", ""), want) != 0) {
			json_decref(intent);
			return ah_error(AQ_EINVAL, "intent is for another node", status, text, ctype);
		}
	}
	rc = agent_apply(a, intent, &msg);
	json_decref(intent);
	pthread_mutex_lock(&a->lock);
	applied = a->applied;
	failed = a->failed ? json_deep_copy(a->failed) : json_array();
	if (rc != AQ_OK)
		snprintf(a->last_error, sizeof(a->last_error), "%s", msg.text);
	pthread_mutex_unlock(&a->lock);
	if (rc != AQ_OK) {
		json_decref(failed);
		return ah_error(rc, msg.text, status, text, ctype);
	}
	return ah_json(json_pack("{s:I,s:o}", "appliedGeneration", (json_int_t)applied, "failed", failed), 200,
		       status, text, ctype);
}

/* QoS families (issue 5), one per metric with every volume's sample. */
static const struct {
	const char *name, *type, *help;
} ah_qos_metrics[] = {
	{ "aquifer_agent_volume_qos_limit_bytes_per_second", "gauge",
	  "Throughput limit of the volume (0 = none; FLEX pools: see the pool limit)." },
	{ "aquifer_agent_volume_qos_limit_iops", "gauge", "Operations/s limit of the volume (0 = none)." },
	{ "aquifer_agent_volume_qos_pool_limit_bytes_per_second", "gauge",
	  "Shared throughput budget of the volume's FLEX pool on this node (0 = none)." },
	{ "aquifer_agent_volume_qos_pool_limit_iops", "gauge",
	  "Shared operations/s budget of the volume's FLEX pool on this node (0 = none)." },
	{ "aquifer_agent_volume_qos_delivered_bytes_total", "counter",
	  "Bytes admitted by QoS (READ/WRITE payload, metadata at its nominal cost)." },
	{ "aquifer_agent_volume_qos_delivered_ops_total", "counter", "Requests admitted by QoS." },
	{ "aquifer_agent_volume_qos_delivered_bytes_per_second", "gauge",
	  "Bytes/s charged (admitted less refunded) since the previous scrape at least 1 s earlier." },
	{ "aquifer_agent_volume_throttled_seconds_total", "counter",
	  "Total time requests spent waiting for QoS tokens." },
	{ "aquifer_agent_volume_qos_delayed_requests_total", "counter", "Requests that had to wait for tokens." },
	{ "aquifer_agent_volume_qos_queued_requests", "gauge", "Requests waiting for tokens now." },
	{ "aquifer_agent_volume_qos_refunded_bytes_total", "counter",
	  "Admitted bytes given back: what a READ did not move, and READs served by read-ahead, which was charged "
	  "when it prefetched." },
};

static double ah_qos_value(const struct qos_stats *q, size_t m)
{
	switch (m) {
	case 0: return (double)q->limit_bytes_per_s;
	case 1: return (double)q->limit_ops_per_s;
	case 2: return (double)q->pool_bytes_per_s;
	case 3: return (double)q->pool_ops_per_s;
	case 4: return (double)q->admitted_bytes;
	case 5: return (double)q->admitted_ops;
	case 6: return (double)q->delivered_bytes_per_s;
	case 7: return (double)q->throttled_ns / 1e9;
	case 8: return (double)q->delayed;
	case 9: return (double)q->queued;
	default: return (double)q->refunded_bytes;
	}
}

/* Append the QoS families to b. */
static void ah_qos_lines(struct agent *a, struct ut_buf *b)
{
	json_t *vols;
	struct qos_stats *st = NULL;
	size_t n, i, m;

	pthread_mutex_lock(&a->lock);
	vols = json_incref(json_object_get(a->intent, "volumes"));
	pthread_mutex_unlock(&a->lock);
	n = json_array_size(vols);
	if (n && !(st = calloc(n, sizeof(*st))))
		goto out;
	for (i = 0; i < n; i++) {
		struct vol_stats vs;

		if (vol_store_stats(a->store, api_json_str(json_array_get(vols, i), "fsid", ""), &vs) == 0)
			st[i] = vs.qos;
	}
	for (m = 0; m < sizeof(ah_qos_metrics) / sizeof(ah_qos_metrics[0]); m++) {
		ut_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", ah_qos_metrics[m].name, ah_qos_metrics[m].help,
			    ah_qos_metrics[m].name, ah_qos_metrics[m].type);
		for (i = 0; i < n; i++)
			ut_buf_addf(b, "%s{node=\"%s\",volume=\"%s\"} %.17g\n", ah_qos_metrics[m].name, a->cfg.node,
				    api_json_str(json_array_get(vols, i), "name", ""), ah_qos_value(&st[i], m));
	}
out:
	free(st);
	json_decref(vols);
}

/* The per-volume counter families of /metrics (docs/metrics.md), one
 * family at a time as the text format wants; appended to *buf. */
static const struct {
	const char *name, *type, *field, *help;
} ah_vol_families[] = {
	{ "aquifer_agent_volume_read_bytes_total", "counter", "readBytes", "Bytes read by NFS READ since the export appeared on this node." },
	{ "aquifer_agent_volume_write_bytes_total", "counter", "writeBytes", "Bytes written by NFS WRITE since the export appeared on this node." },
	{ "aquifer_agent_volume_read_ops_total", "counter", "readOps", "NFS READ operations." },
	{ "aquifer_agent_volume_write_ops_total", "counter", "writeOps", "NFS WRITE operations." },
	{ "aquifer_agent_volume_errors_total", "counter", "errors", "NFS operations that failed." },
	{ "aquifer_agent_volume_capacity_bytes", "gauge", "capacityBytes", "Capacity of each served volume." },
	{ "aquifer_agent_volume_tiered_bytes", "gauge", "coldBytes", "File data that lives only in the cold store." },
	{ "aquifer_agent_volume_cold_tier_read_bytes_total", "counter", "coldReadBytes", "Bytes read from the cold store." },
	{ "aquifer_agent_volume_cold_tier_write_bytes_total", "counter", "coldWriteBytes", "Bytes written to the cold store." },
	{ "aquifer_agent_volume_snapshots", "gauge", "snapshotCount", "Snapshots the volume has on the shelf." },
	{ "aquifer_agent_volume_snapshot_bytes", "gauge", "snapshotBytes", "Bytes only the volume's snapshots hold (the sum of their usedBytes)." },
	{ "aquifer_agent_volume_read_ahead_bytes_total", "counter", "readAheadBytes", "Bytes read ahead by cross-file read-ahead (charged to the volume's QoS)." },
	{ "aquifer_agent_volume_read_ahead_hits_total", "counter", "readAheadHits", "READs served from read-ahead data." },
	{ "aquifer_agent_volume_read_ahead_wasted_bytes_total", "counter", "readAheadWastedBytes", "Read-ahead bytes dropped before a client read them." },
};

static void ah_volume_metrics(struct agent *a, const json_t *st, struct ut_buf *b)
{
	const json_t *v;
	size_t i;

	for (size_t f = 0; f < sizeof(ah_vol_families) / sizeof(ah_vol_families[0]); f++) {
		ut_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", ah_vol_families[f].name,
			      ah_vol_families[f].help, ah_vol_families[f].name, ah_vol_families[f].type);
		json_array_foreach(json_object_get(st, "volumes"), i, v)
			ut_buf_addf(b, "%s{node=\"%s\",volume=\"%s\"} %lld\n", ah_vol_families[f].name,
				      a->cfg.node, api_json_str(v, "name", ""),
				      (long long)api_json_int64(v, ah_vol_families[f].field, 0));
	}
	ut_buf_addf(b, "# HELP aquifer_agent_volume_throughput_limit_bytes_per_second QoS limit of each served volume.\n"
		    "# TYPE aquifer_agent_volume_throughput_limit_bytes_per_second gauge\n");
	json_array_foreach(json_object_get(st, "volumes"), i, v)
		ut_buf_addf(b, "aquifer_agent_volume_throughput_limit_bytes_per_second{node=\"%s\",volume=\"%s\"} %.0f\n",
			      a->cfg.node, api_json_str(v, "name", ""),
			      api_json_double(v, "throughputLimitMibps", 0) * 1048576.0);
}

/* The cold tier's node-wide counters of its read path (tier_counters):
 * where cold READs miss the chunk cache, and read-ahead that was wasted. */
static const struct {
	const char *name, *help;
} ah_tier_families[] = {
	{ "aquifer_agent_tier_read_cached_declined_total",
	  "Cold READ ranges the chunk cache did not hold whole: served by a worker's read instead of on the spot." },
	{ "aquifer_agent_tier_prefetch_evicted_unread_total",
	  "Chunks the cold tier's read-ahead fetched that the chunk cache gave up before any read used them." },
};

static void ah_tier_lines(struct agent *a, struct ut_buf *b)
{
	struct tier_counters tc;
	uint64_t v[2];

	tier_counters(a->tier, &tc);
	v[0] = tc.read_cached_declined;
	v[1] = tc.prefetch_evicted_unread;
	for (size_t f = 0; f < sizeof(ah_tier_families) / sizeof(ah_tier_families[0]); f++)
		ut_buf_addf(b, "# HELP %s %s\n# TYPE %s counter\n%s{node=\"%s\"} %llu\n", ah_tier_families[f].name,
			    ah_tier_families[f].help, ah_tier_families[f].name, ah_tier_families[f].name, a->cfg.node,
			    (unsigned long long)v[f]);
}

static int h_metrics(struct agent *a, struct ah_req *r, int *status, char **text, const char **ctype)
{
	json_t *st = agent_status_doc(a, true), *v;
	struct ut_buf b;
	size_t i;
	int err;

	(void)r;
	if (!st)
		return ah_error(AQ_ENOMEM, "out of memory", status, text, ctype);
	ut_buf_init(&b, AH_METRICS_MAX);
	ut_buf_addf(&b,
		    "# HELP aquifer_agent_applied_generation Generation of the desired state applied.\n"
		    "# TYPE aquifer_agent_applied_generation gauge\n"
		    "aquifer_agent_applied_generation{node=\"%s\"} %lld\n"
		    "# HELP aquifer_agent_volume_used_bytes Bytes used by each served volume.\n"
		    "# TYPE aquifer_agent_volume_used_bytes gauge\n",
		    a->cfg.node, (long long)api_json_int64(st, "appliedGeneration", 0));
	json_array_foreach(json_object_get(st, "volumes"), i, v)
		ut_buf_addf(&b, "aquifer_agent_volume_used_bytes{node=\"%s\",volume=\"%s\"} %lld\n", a->cfg.node,
			    api_json_str(v, "name", ""), (long long)api_json_int64(v, "usedBytes", 0));
	ah_volume_metrics(a, st, &b);
	json_decref(st);
	ah_qos_lines(a, &b);
	ah_tier_lines(a, &b);
	if ((err = ut_buf_err(&b)) != AQ_OK || !(*text = ut_buf_steal(&b, NULL))) {
		ut_buf_cleanup(&b);
		return ah_error(err == AQ_ETOOBIG ? err : AQ_ENOMEM,
				err == AQ_ETOOBIG ? "metrics text larger than 16 MiB" : "out of memory", status, text, ctype);
	}
	*status = 200;
	*ctype = "text/plain; version=0.0.4; charset=utf-8";
	return AQ_OK;
}

/* The routes. auth: aquiferd's push secret (and under TLS its client
 * certificate), checked from the request's head; body: the route takes one. */
static const struct ah_route {
	const char *method, *path;
	ah_handler handler;
	bool auth, body;
} ah_routes[] = {
	{ .method = "GET", .path = "/healthz", .handler = h_healthz },
	{ .method = "GET", .path = "/metrics", .handler = h_metrics },
	{ .method = "GET", .path = "/v1/status", .handler = h_status, .auth = true },
	{ .method = "GET", .path = "/v1/tier/scan", .handler = h_tier_scan, .auth = true },
	{ .method = "PUT", .path = "/v1/intent", .handler = h_intent, .auth = true, .body = true },
};

/* The API's server: the MHD daemon and its worker pool. */
struct agent_http {
	struct MHD_Daemon *mhd;
	char want[128];              /* "Bearer <push secret>", fixed before the API serves */
	struct ut_fifo_wq wq;        /* requests for the workers */
	atomic_ullong seq;           /* requests seen: the log's request ids */
	pthread_t workers[AH_WORKERS];
	int nworkers;
};

/* The push secret, compared in constant time. It is set before the API
 * starts (credentials at start, or the join) and never changes while it
 * serves, so the socket thread compares with its own copy instead of
 * waiting for the agent's lock, which an intent being applied holds. */
static bool ah_authorized(const struct agent_http *h, struct MHD_Connection *conn)
{
	const char *got = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	size_t n = strlen(h->want);

	return n > 7 && got && strlen(got) == n && CRYPTO_memcmp(got, h->want, n) == 0;
}

/* Queue r's answer (taking its text); hang_up when the head announced a body
 * that was not read, so that it is not taken for the next request. */
static enum MHD_Result ah_send(struct MHD_Connection *conn, struct ah_req *r, bool hang_up)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (!r->text)
		ah_error(AQ_EINTERNAL, "no answer", &r->status, &r->text, &r->ctype);
	resp = MHD_create_response_from_buffer(r->text ? strlen(r->text) : 0, r->text, MHD_RESPMEM_MUST_FREE);
	if (!resp)
		return MHD_NO;
	r->text = NULL;
	MHD_add_response_header(resp, "Content-Type", r->ctype);
	if (hang_up)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(conn, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Everything the head decides, before any body is read: the route, the
 * credentials of a route that needs them, whether a body may come and how
 * large. false with the refusal in r. */
static bool ah_check_head(struct agent *a, struct ah_req *r, struct MHD_Connection *conn, const char *url,
			  const char *method, unsigned long long body_len)
{
	bool path_known = false;

	for (size_t i = 0; i < sizeof(ah_routes) / sizeof(ah_routes[0]); i++) {
		if (strcmp(ah_routes[i].path, url) != 0)
			continue;
		path_known = true;
		if (strcmp(ah_routes[i].method, method) == 0)
			r->route = &ah_routes[i];
	}
	if (!r->route)
		ah_error(path_known ? AQ_ENOMETHOD : AQ_ENOENT, path_known ? "method not allowed" : "no such path",
			 &r->status, &r->text, &r->ctype);
	else if (r->route->auth && !agent_tls_peer_ok(a, conn, url, r->id))
		ah_error(AQ_EUNAUTH, "a client certificate of aquiferd from the cluster CA is required", &r->status,
			 &r->text, &r->ctype);
	else if (r->route->auth && !ah_authorized(a->http, conn))
		ah_error(AQ_EUNAUTH, "credentials from aquiferd are required", &r->status, &r->text, &r->ctype);
	else if (body_len > 0 && !r->route->body)
		ah_error(AQ_EINVAL, "this method takes no request body", &r->status, &r->text, &r->ctype);
	else if (body_len > AGENT_BODY_MAX)
		ah_error(AQ_ETOOBIG, "intent larger than 16 MiB", &r->status, &r->text, &r->ctype);
	return r->text == NULL;
}

/* A worker: handlers may block (the intent's disk I/O, a tier scan, the
 * agent's lock), so they never run on the thread that multiplexes sockets. */
static void *ah_worker(void *arg)
{
	struct agent *a = arg;
	struct ut_fifo_node *n;

	while ((n = ut_fifo_wq_pop(&a->http->wq))) {
		struct ah_req *r = UT_FIFO_ENTRY(n, struct ah_req, node);

		r->route->handler(a, r, &r->status, &r->text, &r->ctype);
		UT_DEBUG("agent_http", r->id, "%s %s: %d", r->route->method, r->route->path, r->status);
		r->state = AH_DONE;
		MHD_resume_connection(r->conn);
	}
	return NULL;
}

static enum MHD_Result ah_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct agent *a = cls;
	struct ah_req *r = *con_cls;

	(void)version;
	if (!r) {
		unsigned long long len;
		bool body = tls_listen_body(conn, &len);

		if (!(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		*con_cls = r;
		ut_buf_init(&r->body, AGENT_BODY_MAX);
		snprintf(r->id, sizeof(r->id), "http-%llu", atomic_fetch_add(&a->http->seq, 1) + 1);
		r->conn = conn;
		r->ctype = "application/json";
		if (!ah_check_head(a, r, conn, url, method, len))
			return ah_send(conn, r, body);
		if (r->route->auth)
			tls_listen_trusted(conn, &a->cfg.api_limits);
		if (r->route->handler == h_healthz) {
			h_healthz(a, r, &r->status, &r->text, &r->ctype);
			return ah_send(conn, r, body);
		}
		r->state = AH_BODY;
		return MHD_YES;
	}
	if (r->state == AH_BODY && *upload_size) {
		if (!r->route->body)
			return MHD_NO; /* a chunked body the route does not take: hang up */
		/* past AGENT_BODY_MAX the rest is read and dropped: h_intent says 413 */
		if (ut_buf_add(&r->body, upload, *upload_size) == AQ_ENOMEM)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->state == AH_BODY) {
		r->volume = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "volume");
		r->state = AH_QUEUED;
		MHD_suspend_connection(conn);
		ut_fifo_wq_push(&a->http->wq, &r->node);
		return MHD_YES;
	}
	if (r->state == AH_DONE)
		return ah_send(conn, r, false);
	return MHD_YES;
}

static void ah_done(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode t)
{
	struct ah_req *r = *con_cls;

	(void)cls;
	(void)conn;
	(void)t;
	if (r) {
		ut_buf_cleanup(&r->body);
		free(r->text);
		free(r);
	}
	*con_cls = NULL;
}

int agent_http_start(struct agent *a, unsigned reserve, aq_msg *msg)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct ut_hostport hp;
	struct MHD_OptionItem limits[TLS_LISTEN_MHD_OPTS];
	struct agent_http *h;
	/* with a certificate from the cluster CA: HTTPS, asking for client
	 * certificates (agent_tls_peer_ok checks them) */
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, a->tls_key_pem },
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, a->tls_cert_pem },
		{ MHD_OPTION_HTTPS_MEM_TRUST, 0, a->ca ? (void *)(uintptr_t)tls_ca_pem(a->ca) : NULL },
		{ MHD_OPTION_END, 0, NULL },
	};

	/* IPv4 only: the daemon is started without MHD_USE_IPv6 */
	if (ut_hostport_parse(a->cfg.listen, 0, UT_HP_PORT0, &hp, msg) != AQ_OK || hp.v6 ||
	    ut_hostport_sockaddr(&hp, &ss, &sl, msg) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "--listen %s: expected IPv4:PORT", a->cfg.listen);
	if (!(h = calloc(1, sizeof(*h))))
		return AQ_ENOMEM;
	a->http = h;
	pthread_mutex_lock(&a->lock);
	snprintf(h->want, sizeof(h->want), "Bearer %s", a->push_secret);
	pthread_mutex_unlock(&a->lock);
	if (ut_fifo_wq_init(&h->wq) != AQ_OK) {
		free(h);
		a->http = NULL;
		return AQ_ENOMEM;
	}
	for (h->nworkers = 0; h->nworkers < AH_WORKERS; h->nworkers++)
		if (pthread_create(&h->workers[h->nworkers], NULL, ah_worker, a) != 0)
			return aq_fail(msg, AQ_EINTERNAL, "cannot start the API's worker threads");
	tls_listen_mhd_options(&a->cfg.api_limits, a->tls_cert_pem != NULL, reserve, "aquifer-agent", limits);
	h->mhd = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
					  (a->tls_cert_pem ? MHD_USE_TLS : 0),
				  0, NULL, NULL, ah_request, a, MHD_OPTION_ARRAY, limits, MHD_OPTION_SOCK_ADDR,
				  (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, ah_done, a,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)AH_CONN_POOL, MHD_OPTION_ARRAY,
				  a->tls_cert_pem ? tls : &tls[3], MHD_OPTION_END);
	if (!h->mhd)
		return aq_fail(msg, AQ_EIO, "cannot listen on %s", a->cfg.listen);
	return AQ_OK;
}

void agent_http_stop(struct agent *a)
{
	struct agent_http *h = a->http;

	if (!h)
		return;
	/* Workers finish the queue and resume their connections before the
	 * daemon goes: MHD must not be stopped with suspended connections. */
	if (h->mhd)
		MHD_quiesce_daemon(h->mhd);
	ut_fifo_wq_stop(&h->wq);
	for (int i = 0; i < h->nworkers; i++)
		pthread_join(h->workers[i], NULL);
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	ut_fifo_wq_cleanup(&h->wq);
	free(h);
	a->http = NULL;
}
