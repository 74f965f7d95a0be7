/* srv_shelfio: per-shelf I/O from the agents' status reports (issue 24).
 *
 * Each report carries "shelf": {backend, transport, nqn, readBytes,
 * readOps, readTimedOps, readUs, writeBytes, writeOps, writeUs}, what the
 * node's volume store issued to its shelf since the agent started
 * (agent/vol/vol.h, vol_store_shelf_io). This keeps the last two reports
 * of each node, in memory only (a restart of aquiferd starts empty), and
 * attributes a node to a shelf resource of its location: an nvmeof node to
 * the nvmeof shelf with its NQN, a directory node to the location's
 * directory shelf first by name (agents do not name which directory shelf
 * they mount; a location normally has one). A node not reported for
 * SRV_SHELFIO_STALE_MS counts nowhere. Thread-safe (one mutex).
 */
#ifndef AQ_SRV_SHELFIO_H
#define AQ_SRV_SHELFIO_H

#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct ut_buf;

#define SRV_SHELFIO_NODES_MAX 4096   /* nodes tracked; reports of more are dropped */
#define SRV_SHELFIO_STALE_MS 60000

struct srv_shelfio;

int srv_shelfio_new(struct srv_shelfio **out);
void srv_shelfio_free(struct srv_shelfio *s);

/* One status report's "shelf" object (NULL or malformed: ignored; counters
 * must be non-negative integers, the NQN one api_shelf_nqn_ok takes) of
 * node ("nodes/N") in location, at ms (wall clock). A counter below the
 * last one (the agent restarted) starts the node's series again. */
void srv_shelfio_report(struct srv_shelfio *s, const char *node, const char *location, const json_t *shelf,
			int64_t ms);

/* The ioStats of shelf (a stored shelf document) among shelves (every
 * shelf of its location, the shelf too), at now_ms: a new object {readBytes,
 * writeBytes, readOps, writeOps (int64 strings, the sum over its nodes
 * since each started), readMibps, writeMibps (over each node's last
 * report interval), readLatencyMs, writeLatencyMs (mean over that interval;
 * absent without timed operations), nodes}; NULL when no node reports it. */
json_t *srv_shelfio_stats(struct srv_shelfio *s, const json_t *shelves, const json_t *shelf, int64_t now_ms);

/* Prometheus lines of every fresh node, labelled shelf (the ID, "" when no
 * shelf resource matches), location, node, backend: aquifer_shelf_read_bytes_total,
 * _write_bytes_total, _read_ops_total, _write_ops_total,
 * aquifer_shelf_read_latency_seconds_total / _write_ (sum of timed
 * operations' latency; with aquifer_shelf_read_timed_ops_total a mean),
 * and each shelf's ceilings (aquifer_shelf_read_ceiling_mibps,
 * _write_ceiling_mibps). shelves: every shelf document. */
void srv_shelfio_metrics(struct srv_shelfio *s, const json_t *shelves, struct ut_buf *b, int64_t now_ms);

/* The shelf (its name, "shelves/S") of shelves that a node of location
 * with backend and nqn is attributed to, or NULL. */
const char *srv_shelfio_match(const json_t *shelves, const char *location, const char *backend, const char *nqn);

#endif
