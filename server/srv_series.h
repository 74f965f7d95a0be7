/* srv_series: the in-memory time series of volumes and nodes.
 *
 * Agents report cumulative counters per volume every 2 s. aquiferd turns
 * them into per-interval deltas and adds them into 10 s slots of a ring
 * buffer per volume and per node (SRV_SERIES_POINTS slots: the last hour).
 * Pools are the sum of their volumes at query time. Nothing here touches
 * the database: a restart of aquiferd starts with empty series.
 *
 * Counters reset (an agent restarted) are taken as starting from zero. The
 * first report of a volume from a node (a new volume, a moved one, or any
 * after aquiferd started) counts from zero when the agent's countersAgeMs
 * says the counters began after aquiferd started (so the traffic right after
 * a create reaches the series); otherwise it only sets the baseline, so old
 * history is never counted as one burst.
 */
#ifndef AQ_SRV_SERIES_H
#define AQ_SRV_SERIES_H

#include <stdint.h>

#include <jansson.h>

#define SRV_SERIES_STEP_S 10
#define SRV_SERIES_POINTS 361          /* one hour of complete slots plus the current one */
#define SRV_SERIES_MAX_WINDOW_S 3600
#define SRV_SERIES_LAT_BUCKETS 24      /* bucket i: latency < 2^i us (agent/vol.h) */
#define SRV_SERIES_STALE_MS 60000      /* /metrics leaves out series not reported this long */

struct srv_series;

/* started_ms: when aquiferd started (wall clock, ms since the epoch). */
int srv_series_new(int64_t started_ms, struct srv_series **out);
void srv_series_free(struct srv_series *s);

/* One status report of node (its name "nodes/N", location and ceiling):
 * fed is an array of the report's volume entries the node really serves,
 * each with "pool" (the pool's full name) and "limitMibps" (the volume's
 * throughputMibps) added by the caller, and the agent's countersAgeMs (ms
 * since the counters began; absent: unknown, baseline rule). ms: the
 * report's time. */
void srv_series_report(struct srv_series *s, const char *node, const char *location,
		       double ceiling_mibps, const json_t *fed, int64_t ms);

enum srv_series_kind { SRV_SERIES_VOLUME, SRV_SERIES_POOL, SRV_SERIES_NODE };

/* The points of a volume (name = its full name), pool (the sum of the
 * volumes whose pool is name) or node ("nodes/N") over the last window_s
 * seconds before now_ms: a new JSON array of
 * {time, readBytes, writeBytes, readOps, writeOps (per-slot deltas, int64 as
 * strings), latencyP50Ms, latencyP99Ms (null without operations),
 * throughputLimitMibps, usedBytes, throttledSeconds, and the cold tier with
 * GCNV's metric names: tieredBytes (gauge, volume/auto_tiering/tiered_bytes),
 * coldTierReadByteCount and coldTierWriteByteCount (per-slot deltas of the
 * report's coldReadBytes / coldWriteBytes)}. Slots without a report
 * are left out. NULL when out of memory. */
json_t *srv_series_points(struct srv_series *s, enum srv_series_kind kind, const char *name,
			  int window_s, int64_t now_ms);

/* Totals for /metrics: a new JSON array of the series reported within
 * SRV_SERIES_STALE_MS of now_ms, each {kind: "volume"|"node", name, labels
 * (project, location, pool, volume | node, location), readBytes, writeBytes,
 * readOps, writeOps, throttledUs, coldReadBytes, coldWriteBytes (counters
 * since aquiferd started), usedBytes, tieredBytes, limitMibps, latencyP50Ms,
 * latencyP99Ms (over the last minute)}. */
json_t *srv_series_totals(struct srv_series *s, int64_t now_ms);

/* Parse a window ("90s", "15m", "1h", or plain seconds) into seconds,
 * 1..SRV_SERIES_MAX_WINDOW_S. AQ_OK or AQ_EINVAL. */
int srv_series_window(const char *text, int *seconds);

#endif
