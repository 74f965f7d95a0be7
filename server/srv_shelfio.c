/* srv_shelfio: per-shelf I/O from the agents' status reports (see
 * srv_shelfio.h): the last two reports of each node, matched to shelf
 * resources when asked. */
#include "server/srv_shelfio.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "api/api_shelf.h"
#include "util/ut_buf.h"

enum { IO_RB, IO_RO, IO_RTO, IO_RUS, IO_WB, IO_WO, IO_WUS, IO_N };

static const char *const io_keys[IO_N] = { "readBytes", "readOps", "readTimedOps", "readUs",
					    "writeBytes", "writeOps", "writeUs" };

struct shelfio_node {
	char node[128], location[64], backend[16], nqn[API_SHELF_NQN_LEN + 1];
	uint64_t cur[IO_N], prev[IO_N];
	int64_t cur_ms, prev_ms;
	bool has_prev;
};

struct srv_shelfio {
	pthread_mutex_t mu;
	struct shelfio_node *nodes;
	size_t n, cap;
};

int srv_shelfio_new(struct srv_shelfio **out)
{
	struct srv_shelfio *s = calloc(1, sizeof(*s));

	if (!s)
		return AQ_ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	*out = s;
	return AQ_OK;
}

void srv_shelfio_free(struct srv_shelfio *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->mu);
	free(s->nodes);
	free(s);
}

/* The report's counters and identity, checked whole before anything is kept. */
static bool shelfio_parse(const json_t *shelf, uint64_t *v, const char **backend, const char **nqn)
{
	if (!json_is_object(shelf))
		return false;
	*backend = api_json_str(shelf, "backend", "");
	*nqn = api_json_str(shelf, "nqn", "");
	if (strcmp(*backend, "nvmeof") == 0) {
		if (!api_shelf_nqn_ok(*nqn, strlen(*nqn)))
			return false;
	} else if (strcmp(*backend, "directory") != 0 || **nqn) {
		return false;
	}
	for (int k = 0; k < IO_N; k++) {
		const json_t *x = json_object_get(shelf, io_keys[k]);

		if (!json_is_integer(x) || json_integer_value(x) < 0)
			return false;
		v[k] = (uint64_t)json_integer_value(x);
	}
	return true;
}

static struct shelfio_node *shelfio_slot(struct srv_shelfio *s, const char *node)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->nodes[i].node, node) == 0)
			return &s->nodes[i];
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct shelfio_node *g;

		if (s->cap >= SRV_SHELFIO_NODES_MAX)
			return NULL;
		if (cap > SRV_SHELFIO_NODES_MAX)
			cap = SRV_SHELFIO_NODES_MAX;
		if (!(g = realloc(s->nodes, cap * sizeof(*g))))
			return NULL;
		s->nodes = g;
		s->cap = cap;
	}
	memset(&s->nodes[s->n], 0, sizeof(s->nodes[0]));
	snprintf(s->nodes[s->n].node, sizeof(s->nodes[0].node), "%s", node);
	return &s->nodes[s->n++];
}

void srv_shelfio_report(struct srv_shelfio *s, const char *node, const char *location, const json_t *shelf,
			int64_t ms)
{
	uint64_t v[IO_N];
	const char *backend, *nqn;
	struct shelfio_node *e;
	bool reset = false;

	if (!s || !shelfio_parse(shelf, v, &backend, &nqn) || strlen(node) >= sizeof(e->node) ||
	    strlen(location) >= sizeof(e->location))
		return;
	pthread_mutex_lock(&s->mu);
	if ((e = shelfio_slot(s, node))) {
		for (int k = 0; k < IO_N; k++)
			reset = reset || v[k] < e->cur[k];
		if (strcmp(e->backend, backend) != 0 || strcmp(e->nqn, nqn) != 0 || strcmp(e->location, location) != 0)
			reset = true; /* another shelf: another series */
		e->has_prev = e->cur_ms > 0 && !reset && ms > e->cur_ms;
		memcpy(e->prev, e->cur, sizeof(e->prev));
		e->prev_ms = e->cur_ms;
		memcpy(e->cur, v, sizeof(e->cur));
		e->cur_ms = ms;
		snprintf(e->location, sizeof(e->location), "%s", location);
		snprintf(e->backend, sizeof(e->backend), "%s", backend);
		snprintf(e->nqn, sizeof(e->nqn), "%s", nqn);
	}
	pthread_mutex_unlock(&s->mu);
}

const char *srv_shelfio_match(const json_t *shelves, const char *location, const char *backend, const char *nqn)
{
	const char *best = NULL;
	const json_t *sh;
	size_t i;

	json_array_foreach(shelves, i, sh) {
		const char *name = api_json_str(sh, "name", "");

		if (strcmp(api_json_str(sh, "location", ""), location) != 0 ||
		    strcmp(api_json_str(sh, "backend", "directory"), backend) != 0)
			continue;
		if (strcmp(backend, "nvmeof") == 0) {
			if (strcmp(api_json_str(sh, "nqn", ""), nqn) == 0)
				return name;
		} else if (!best || strcmp(name, best) < 0) {
			best = name;
		}
	}
	return best;
}

json_t *srv_shelfio_stats(struct srv_shelfio *s, const json_t *shelves, const json_t *shelf, int64_t now_ms)
{
	const char *name = api_json_str(shelf, "name", "");
	uint64_t sum[IO_N] = { 0 }, d[IO_N] = { 0 };
	double rmib = 0, wmib = 0;
	json_t *out = NULL, *nodes = json_array();

	if (!s || !nodes)
		goto out;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->n; i++) {
		const struct shelfio_node *e = &s->nodes[i];
		const char *m;

		if (now_ms - e->cur_ms > SRV_SHELFIO_STALE_MS ||
		    !(m = srv_shelfio_match(shelves, e->location, e->backend, e->nqn)) || strcmp(m, name) != 0)
			continue;
		json_array_append_new(nodes, json_string(e->node));
		for (int k = 0; k < IO_N; k++)
			sum[k] += e->cur[k];
		if (e->has_prev) {
			double dt = (double)(e->cur_ms - e->prev_ms) / 1000.0;

			for (int k = 0; k < IO_N; k++)
				d[k] += e->cur[k] - e->prev[k];
			rmib += (double)(e->cur[IO_RB] - e->prev[IO_RB]) / 1048576.0 / dt;
			wmib += (double)(e->cur[IO_WB] - e->prev[IO_WB]) / 1048576.0 / dt;
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (json_array_size(nodes) == 0)
		goto out;
	out = json_pack("{s:s,s:s,s:s,s:s,s:f,s:f,s:O}", "readBytes", "", "writeBytes", "", "readOps", "", "writeOps", "",
			"readMibps", rmib, "writeMibps", wmib, "nodes", nodes);
	if (!out)
		goto out;
	api_json_set_int64(out, "readBytes", (int64_t)sum[IO_RB]);
	api_json_set_int64(out, "writeBytes", (int64_t)sum[IO_WB]);
	api_json_set_int64(out, "readOps", (int64_t)sum[IO_RO]);
	api_json_set_int64(out, "writeOps", (int64_t)sum[IO_WO]);
	if (d[IO_RTO])
		json_object_set_new(out, "readLatencyMs", json_real((double)d[IO_RUS] / (double)d[IO_RTO] / 1000.0));
	if (d[IO_WO])
		json_object_set_new(out, "writeLatencyMs", json_real((double)d[IO_WUS] / (double)d[IO_WO] / 1000.0));
out:
	json_decref(nodes);
	return out;
}

void srv_shelfio_metrics(struct srv_shelfio *s, const json_t *shelves, struct ut_buf *b, int64_t now_ms)
{
	static const struct {
		const char *name, *help;
		int k;
		double scale;
	} rows[] = {
		{ "aquifer_shelf_read_bytes_total", "Bytes the node's volume store read from the shelf.", IO_RB, 1 },
		{ "aquifer_shelf_write_bytes_total", "Bytes the node's volume store wrote to the shelf.", IO_WB, 1 },
		{ "aquifer_shelf_read_ops_total", "Reads the node's volume store issued to the shelf.", IO_RO, 1 },
		{ "aquifer_shelf_write_ops_total", "Writes the node's volume store issued to the shelf.", IO_WO, 1 },
		{ "aquifer_shelf_read_timed_ops_total", "Reads of read_latency_seconds_total (zero-copy sends are counted, not timed).", IO_RTO, 1 },
		{ "aquifer_shelf_read_latency_seconds_total", "Summed latency of the timed reads.", IO_RUS, 1e-6 },
		{ "aquifer_shelf_write_latency_seconds_total", "Summed latency of the writes.", IO_WUS, 1e-6 },
	};
	const json_t *sh;
	size_t i;

	ut_buf_addf(b, "# HELP aquifer_shelf_read_ceiling_mibps A shelf's read ceiling (placement counts it).\n"
		       "# TYPE aquifer_shelf_read_ceiling_mibps gauge\n");
	json_array_foreach(shelves, i, sh)
		ut_buf_addf(b, "aquifer_shelf_read_ceiling_mibps{shelf=\"%s\",location=\"%s\"} %g\n",
			    api_json_str(sh, "name", "shelves/") + 8, api_json_str(sh, "location", ""),
			    api_json_double(sh, "readThroughputMibps", 0));
	ut_buf_addf(b, "# HELP aquifer_shelf_write_ceiling_mibps A shelf's write ceiling.\n"
		       "# TYPE aquifer_shelf_write_ceiling_mibps gauge\n");
	json_array_foreach(shelves, i, sh)
		ut_buf_addf(b, "aquifer_shelf_write_ceiling_mibps{shelf=\"%s\",location=\"%s\"} %g\n",
			    api_json_str(sh, "name", "shelves/") + 8, api_json_str(sh, "location", ""),
			    api_json_double(sh, "writeThroughputMibps", 0));
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		ut_buf_addf(b, "# HELP %s %s\n# TYPE %s counter\n", rows[r].name, rows[r].help, rows[r].name);
		for (size_t j = 0; j < s->n; j++) {
			const struct shelfio_node *e = &s->nodes[j];
			const char *m = srv_shelfio_match(shelves, e->location, e->backend, e->nqn);

			if (now_ms - e->cur_ms > SRV_SHELFIO_STALE_MS)
				continue;
			ut_buf_addf(b, "%s{shelf=\"%s\",location=\"%s\",node=\"%s\",backend=\"%s\"} %.9g\n", rows[r].name,
				    m ? m + 8 : "", e->location, strncmp(e->node, "nodes/", 6) == 0 ? e->node + 6 : e->node,
				    e->backend, (double)e->cur[rows[r].k] * rows[r].scale);
		}
	}
	pthread_mutex_unlock(&s->mu);
}
