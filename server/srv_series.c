/* srv_series: ring buffers of per-volume and per-node figures fed by agent
 * status reports (see srv_series.h). One mutex guards the store; a report
 * takes it once, queries copy what they need out under it. */
#include "server/srv_series.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_error.h"
#include "api/api_schema.h"
#include "util/ut_clock.h"
#include "util/ut_hash.h"

#define SER_HASH 1024
#define SER_NAME 512
#define SER_EVICT_MS (SRV_SERIES_MAX_WINDOW_S * 1000LL + 60000)

/* One 10 s slot: deltas summed, gauges as last reported. */
struct ser_point {
	int64_t slot;                 /* ms / (step * 1000); 0 = empty */
	uint64_t rb, wb, ro, wo, thr_us;
	uint64_t crb, cwb;            /* cold-tier read / write bytes */
	uint64_t used, tiered;
	double limit;
	uint32_t lat[SRV_SERIES_LAT_BUCKETS];
};

/* The cumulative counters of the last report, to take deltas from. */
struct ser_cum {
	uint64_t rb, wb, ro, wo, thr_us;
	uint64_t crb, cwb;
	uint64_t lat[SRV_SERIES_LAT_BUCKETS];
};

struct ser {
	struct ser *next;             /* hash chain */
	enum srv_series_kind kind;
	char name[SER_NAME];
	char pool[SER_NAME];          /* volumes: the pool's full name */
	char node[128];               /* volumes: the node of the baseline */
	char location[64];
	bool have_base;
	struct ser_cum base;
	struct ser_cum total;         /* deltas summed since aquiferd started */
	uint64_t used, tiered;
	double limit;
	int64_t last_ms;
	struct ser_point ring[SRV_SERIES_POINTS];
};

struct srv_series {
	pthread_mutex_t lock;
	struct ser *bucket[SER_HASH];
	int64_t evicted_ms;
	int64_t started_ms;           /* counters begun before this hold history never seen */
};

int srv_series_new(int64_t started_ms, struct srv_series **out)
{
	struct srv_series *s = calloc(1, sizeof(*s));

	if (!s)
		return AQ_ENOMEM;
	s->started_ms = started_ms;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return AQ_OK;
}

void srv_series_free(struct srv_series *s)
{
	if (!s)
		return;
	for (int h = 0; h < SER_HASH; h++)
		for (struct ser *e = s->bucket[h], *n; e; e = n) {
			n = e->next;
			free(e);
		}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static unsigned ser_hash(const char *name)
{
	return ut_hash_fnv32_str(name) % SER_HASH;
}

static struct ser *ser_find(struct srv_series *s, const char *name)
{
	for (struct ser *e = s->bucket[ser_hash(name)]; e; e = e->next)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static struct ser *ser_get(struct srv_series *s, enum srv_series_kind kind, const char *name)
{
	struct ser *e = ser_find(s, name);
	unsigned h;

	if (e || strlen(name) >= SER_NAME || !(e = calloc(1, sizeof(*e))))
		return e;
	h = ser_hash(name);
	e->kind = kind;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->next = s->bucket[h];
	s->bucket[h] = e;
	return e;
}

/* Forget series nobody reported for longer than the window (deleted
 * volumes, forgotten nodes); at most once a minute. */
static void ser_evict(struct srv_series *s, int64_t now_ms)
{
	if (now_ms - s->evicted_ms < 60000)
		return;
	s->evicted_ms = now_ms;
	for (int h = 0; h < SER_HASH; h++)
		for (struct ser **pp = &s->bucket[h]; *pp;) {
			struct ser *e = *pp;

			if (now_ms - e->last_ms > SER_EVICT_MS) {
				*pp = e->next;
				free(e);
			} else {
				pp = &e->next;
			}
		}
}

static struct ser_point *ser_slot(struct ser *e, int64_t ms)
{
	int64_t slot = ms / (SRV_SERIES_STEP_S * 1000LL);
	struct ser_point *p = &e->ring[slot % SRV_SERIES_POINTS];

	if (p->slot != slot) {
		memset(p, 0, sizeof(*p));
		p->slot = slot;
	}
	return p;
}

static uint64_t delta(uint64_t cur, uint64_t last)
{
	return cur >= last ? cur - last : cur; /* a reset counter starts from zero */
}

static uint64_t json_u64(const json_t *doc, const char *name)
{
	int64_t v = api_json_int64(doc, name, 0);

	return v > 0 ? (uint64_t)v : 0;
}

static void cum_from(const json_t *v, struct ser_cum *c)
{
	const json_t *hist = json_object_get(v, "latUsHist");

	memset(c, 0, sizeof(*c));
	c->rb = json_u64(v, "readBytes");
	c->wb = json_u64(v, "writeBytes");
	c->ro = json_u64(v, "readOps");
	c->wo = json_u64(v, "writeOps");
	c->thr_us = json_u64(v, "throttledUs");
	c->crb = json_u64(v, "coldReadBytes");
	c->cwb = json_u64(v, "coldWriteBytes");
	for (size_t k = 0; k < SRV_SERIES_LAT_BUCKETS && k < json_array_size(hist); k++) {
		json_int_t n = json_integer_value(json_array_get(hist, k));

		c->lat[k] = n > 0 ? (uint64_t)n : 0;
	}
}

/* Add d into the slot and totals of e. */
static void ser_add(struct ser *e, struct ser_point *p, const struct ser_cum *d)
{
	p->rb += d->rb;
	p->wb += d->wb;
	p->ro += d->ro;
	p->wo += d->wo;
	p->thr_us += d->thr_us;
	p->crb += d->crb;
	p->cwb += d->cwb;
	e->total.crb += d->crb;
	e->total.cwb += d->cwb;
	e->total.rb += d->rb;
	e->total.wb += d->wb;
	e->total.ro += d->ro;
	e->total.wo += d->wo;
	e->total.thr_us += d->thr_us;
	for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++) {
		p->lat[k] += (uint32_t)d->lat[k];
		e->total.lat[k] += d->lat[k];
	}
}

/* A volume first seen from a node (new, moved, or after aquiferd started):
 * do its counters hold only traffic since they began, after aquiferd
 * started and recently enough that no series of them was evicted? The agent
 * says how long ago they began (countersAgeMs, free of clock skew). Such a
 * first report counts from zero, so the seconds after a create or a move
 * are not lost to the baseline. */
static bool counters_fresh(const struct srv_series *s, const json_t *v, int64_t ms)
{
	int64_t age = api_json_int64(v, "countersAgeMs", -1);

	return age >= 0 && ms - age >= s->started_ms && age <= SER_EVICT_MS;
}

static void label_of(const char *name, const char *key, char *out, size_t cap)
{
	const char *p = strstr(name, key);
	size_t n;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen(key);
	n = strcspn(p, "/");
	snprintf(out, cap, "%.*s", (int)n, p);
}

void srv_series_report(struct srv_series *s, const char *node, const char *location,
		       double ceiling_mibps, const json_t *fed, int64_t ms)
{
	struct ser *ne;
	struct ser_point *np;
	const json_t *v;
	uint64_t used = 0, tiered = 0;
	size_t i;

	pthread_mutex_lock(&s->lock);
	ser_evict(s, ms);
	if (!(ne = ser_get(s, SRV_SERIES_NODE, node)))
		goto out;
	snprintf(ne->location, sizeof(ne->location), "%s", location);
	np = ser_slot(ne, ms);
	json_array_foreach(fed, i, v) {
		struct ser *e = ser_get(s, SRV_SERIES_VOLUME, api_json_str(v, "name", ""));
		struct ser_cum cur, d = { 0 };
		struct ser_point *p;

		if (!e)
			continue;
		cum_from(v, &cur);
		if (!(e->have_base && strcmp(e->node, node) == 0) && counters_fresh(s, v, ms)) {
			d = cur; /* the counters began with the export, after we started: all new */
		} else if (e->have_base && strcmp(e->node, node) == 0) {
			d.rb = delta(cur.rb, e->base.rb);
			d.wb = delta(cur.wb, e->base.wb);
			d.ro = delta(cur.ro, e->base.ro);
			d.wo = delta(cur.wo, e->base.wo);
			d.thr_us = delta(cur.thr_us, e->base.thr_us);
			d.crb = delta(cur.crb, e->base.crb);
			d.cwb = delta(cur.cwb, e->base.cwb);
			for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++)
				d.lat[k] = delta(cur.lat[k], e->base.lat[k]);
		}
		e->base = cur;
		e->have_base = true;
		snprintf(e->node, sizeof(e->node), "%s", node);
		snprintf(e->pool, sizeof(e->pool), "%s", api_json_str(v, "pool", ""));
		label_of(e->name, "/locations/", e->location, sizeof(e->location));
		e->used = json_u64(v, "usedBytes");
		e->tiered = json_u64(v, "coldBytes");
		e->limit = api_json_double(v, "limitMibps", 0);
		e->last_ms = ms;
		p = ser_slot(e, ms);
		ser_add(e, p, &d);
		p->used = e->used;
		p->tiered = e->tiered;
		p->limit = e->limit;
		ser_add(ne, np, &d);
		used += e->used;
		tiered += e->tiered;
	}
	ne->used = used;
	ne->tiered = tiered;
	np->tiered = tiered;
	ne->limit = ceiling_mibps;
	ne->last_ms = ms;
	np->used = used;
	np->limit = ceiling_mibps;
out:
	pthread_mutex_unlock(&s->lock);
}

/* Latency quantile q in ms from a histogram (bucket k: [2^(k-1), 2^k) us),
 * interpolated within the bucket; < 0 when there were no operations. */
static double lat_quantile(const uint64_t *lat, double q)
{
	uint64_t total = 0, below = 0;
	double target;

	for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++)
		total += lat[k];
	if (total == 0)
		return -1;
	target = q * (double)total;
	for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++) {
		if (lat[k] && (double)(below + lat[k]) >= target) {
			double lo = k == 0 ? 0 : ldexp(1, k - 1), hi = ldexp(1, k);
			double frac = (target - (double)below) / (double)lat[k];

			return (lo + (hi - lo) * (frac < 0 ? 0 : frac)) / 1000.0;
		}
		below += lat[k];
	}
	return ldexp(1, SRV_SERIES_LAT_BUCKETS - 1) / 1000.0;
}

static json_t *ms_or_null(double ms)
{
	return ms < 0 ? json_null() : json_real(round(ms * 1000.0) / 1000.0);
}

static json_t *str64(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	return json_string(b);
}

static void slot_time(int64_t slot, char *out, size_t cap)
{
	ut_clock_format(slot * SRV_SERIES_STEP_S * 1000000000LL, 0, out, cap);
}

static bool ser_matches(const struct ser *e, enum srv_series_kind kind, const char *name)
{
	if (kind == SRV_SERIES_POOL)
		return e->kind == SRV_SERIES_VOLUME && strcmp(e->pool, name) == 0;
	return e->kind == kind && strcmp(e->name, name) == 0;
}

json_t *srv_series_points(struct srv_series *s, enum srv_series_kind kind, const char *name,
			  int window_s, int64_t now_ms)
{
	int64_t last = now_ms / (SRV_SERIES_STEP_S * 1000LL);
	int n = (window_s + SRV_SERIES_STEP_S - 1) / SRV_SERIES_STEP_S;
	struct ser_point *sum;
	uint64_t lat[SRV_SERIES_LAT_BUCKETS];
	json_t *points = json_array();

	if (n > SRV_SERIES_POINTS)
		n = SRV_SERIES_POINTS;
	if (n < 1)
		n = 1;
	if (!points || !(sum = calloc((size_t)n, sizeof(*sum)))) {
		json_decref(points);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	for (int h = 0; h < SER_HASH; h++)
		for (const struct ser *e = s->bucket[h]; e; e = e->next) {
			if (!ser_matches(e, kind, name))
				continue;
			for (int i = 0; i < n; i++) {
				int64_t slot = last - n + 1 + i;
				const struct ser_point *p = &e->ring[slot % SRV_SERIES_POINTS];
				struct ser_point *o = &sum[i];

				if (slot <= 0 || p->slot != slot)
					continue;
				o->slot = slot;
				o->rb += p->rb;
				o->wb += p->wb;
				o->ro += p->ro;
				o->wo += p->wo;
				o->thr_us += p->thr_us;
				o->crb += p->crb;
				o->cwb += p->cwb;
				o->tiered += p->tiered;
				o->used += p->used;
				o->limit += p->limit;
				for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++)
					o->lat[k] += p->lat[k];
			}
		}
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < n; i++) {
		const struct ser_point *o = &sum[i];
		char t[32];
		json_t *pt;

		if (!o->slot)
			continue;
		for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++)
			lat[k] = o->lat[k];
		slot_time(o->slot, t, sizeof(t));
		pt = json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:f,s:o,s:f,s:o,s:o,s:o}", "time", t,
							"readBytes", str64(o->rb), "writeBytes", str64(o->wb),
							"readOps", str64(o->ro), "writeOps", str64(o->wo),
							"latencyP50Ms", ms_or_null(lat_quantile(lat, 0.50)),
							"latencyP99Ms", ms_or_null(lat_quantile(lat, 0.99)),
							"throughputLimitMibps", o->limit, "usedBytes", str64(o->used),
							"throttledSeconds", (double)o->thr_us / 1e6,
							"tieredBytes", str64(o->tiered),
							"coldTierReadByteCount", str64(o->crb),
							"coldTierWriteByteCount", str64(o->cwb));
		/* the slot still filling holds only part of its bytes: said here, by
		 * aquiferd's clock, so that no reader (a browser whose clock is behind)
		 * takes it for a drop */
		if (pt && o->slot == last)
			json_object_set_new(pt, "partial", json_true());
		json_array_append_new(points, pt);
	}
	free(sum);
	return points;
}

/* Latency histogram of the last minute of e. */
static void recent_lat(const struct ser *e, int64_t now_ms, uint64_t *lat)
{
	int64_t last = now_ms / (SRV_SERIES_STEP_S * 1000LL);

	memset(lat, 0, sizeof(uint64_t) * SRV_SERIES_LAT_BUCKETS);
	for (int64_t slot = last - 60 / SRV_SERIES_STEP_S + 1; slot <= last; slot++) {
		const struct ser_point *p = &e->ring[slot % SRV_SERIES_POINTS];

		if (slot > 0 && p->slot == slot)
			for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++)
				lat[k] += p->lat[k];
	}
}

json_t *srv_series_totals(struct srv_series *s, int64_t now_ms)
{
	json_t *out = json_array();
	uint64_t lat[SRV_SERIES_LAT_BUCKETS];

	if (!out)
		return NULL;
	pthread_mutex_lock(&s->lock);
	for (int h = 0; h < SER_HASH; h++)
		for (const struct ser *e = s->bucket[h]; e; e = e->next) {
			char project[64], pool[64], id[64], node[128];
			json_t *labels;

			if (now_ms - e->last_ms > SRV_SERIES_STALE_MS)
				continue;
			if (e->kind == SRV_SERIES_VOLUME) {
				label_of(e->name, "projects/", project, sizeof(project));
				label_of(e->name, "/volumes/", id, sizeof(id));
				label_of(e->pool, "/storagePools/", pool, sizeof(pool));
				labels = json_pack("{s:s,s:s,s:s,s:s}", "project", project, "location", e->location,
						   "pool", pool, "volume", id);
			} else {
				label_of(e->name, "nodes/", node, sizeof(node));
				labels = json_pack("{s:s,s:s}", "node", node, "location", e->location);
			}
			recent_lat(e, now_ms, lat);
			json_array_append_new(out, json_pack("{s:s,s:s,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:I,s:I,s:I}",
							     "kind", e->kind == SRV_SERIES_VOLUME ? "volume" : "node",
							     "name", e->name, "labels", labels,
							     "readBytes", (json_int_t)e->total.rb,
							     "writeBytes", (json_int_t)e->total.wb,
							     "readOps", (json_int_t)e->total.ro,
							     "writeOps", (json_int_t)e->total.wo,
							     "throttledUs", (json_int_t)e->total.thr_us,
							     "usedBytes", (json_int_t)e->used, "limitMibps", e->limit,
							     "latencyP50Ms", lat_quantile(lat, 0.50),
							     "latencyP99Ms", lat_quantile(lat, 0.99),
							     "tieredBytes", (json_int_t)e->tiered,
							     "coldReadBytes", (json_int_t)e->total.crb,
							     "coldWriteBytes", (json_int_t)e->total.cwb));
		}
	pthread_mutex_unlock(&s->lock);
	return out;
}

int srv_series_window(const char *text, int *seconds)
{
	char *end;
	long v;
	int mult = 1;

	if (!text || !*text)
		return AQ_EINVAL;
	v = strtol(text, &end, 10);
	if (end == text)
		return AQ_EINVAL;
	if (*end == 's')
		end++;
	else if (*end == 'm')
		mult = 60, end++;
	else if (*end == 'h')
		mult = 3600, end++;
	if (*end || v <= 0 || v > SRV_SERIES_MAX_WINDOW_S / mult)
		return AQ_EINVAL;
	*seconds = (int)v * mult;
	return AQ_OK;
}
