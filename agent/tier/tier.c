/* tier: the cold tier engine; see tier.h for the contract. This file holds
 * the engine object (create, start, free), the store holder and its health,
 * the volume set and the per-volume figures.
 *
 * (Locks: tier_internal.h.)
 *
 * Races with writes: every read or write bumps the touched chunks' ver and a
 * write counts as in flight until it ended. A pass snapshots ver before it
 * reads a chunk and only records and punches when ver is unchanged and no
 * write is in flight, so a racing access wins and the chunk stays hot (the
 * uploaded copy is dropped). A read that saw a chunk hot and sends it later
 * with sendfile bumped ver before, so the pass cannot punch under it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

/* ---------- small helpers ---------- */

static double tier_now(const struct tier *t)
{
	if (t->cfg.now)
		return t->cfg.now(t->cfg.now_arg);
	return (double)ut_clock_real_ns() / 1e9;
}

uint32_t tier_day_of(const struct tier *t, double secs)
{
	return secs <= 0 ? 1 : (uint32_t)(secs / (double)t->cfg.day_seconds) + 1;
}

uint32_t tier_today(const struct tier *t)
{
	return tier_day_of(t, tier_now(t));
}

void tier_key(const struct tier_vol *v, const char *fid, uint32_t idx, uint64_t ver, char *out)
{
	snprintf(out, TIER_KEY_MAX, "%s%s/%" PRIu32 "-%016" PRIx64, v->prefix, fid, idx, ver);
}

void tier_sum(const void *buf, size_t len, char *hex)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL);
	ut_hex_encode(md, n, hex, TIER_SUM_HEX);
}

struct tier_store *tier_store_get(struct tier *t)
{
	struct tier_store *s;

	pthread_rwlock_rdlock(&t->lk);
	s = t->store;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_rwlock_unlock(&t->lk);
	return s;
}

void tier_store_put(struct tier_store *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	obj_close(s->obj);
	free(s);
}

void tier_health(struct tier *t, int rc, const char *what)
{
	pthread_mutex_lock(&t->hmu);
	if (rc == -EAGAIN && !t->down) {
		struct tier_store *s = tier_store_get(t);

		t->down = true;
		t->down_since = time(NULL);
		snprintf(t->down_why, sizeof(t->down_why), "%s: %s", what, obj_strerror(rc));
		UT_WARN("tier", NULL, "cold store %s unreachable (%s); tiering paused",
			s ? s->desc : "?", t->down_why);
		tier_store_put(s);
	} else if (rc != -EAGAIN && t->down) {
		t->down = false;
		UT_INFO("tier", NULL, "cold store reachable again; tiering resumes");
	}
	pthread_mutex_unlock(&t->hmu);
}

bool tier_is_down(struct tier *t)
{
	bool d;

	pthread_mutex_lock(&t->hmu);
	d = t->down;
	pthread_mutex_unlock(&t->hmu);
	return d;
}

/* Seconds the store has been unreachable (0: it is fine). */
time_t tier_down_for(struct tier *t)
{
	time_t d = 0;

	pthread_mutex_lock(&t->hmu);
	if (t->down)
		d = time(NULL) - t->down_since + 1;
	pthread_mutex_unlock(&t->hmu);
	return d;
}

/* t->vols is sorted by fsid (tier_set_volumes): every tier hook of a read
 * or write and every status report entry finds its volume by binary
 * search, not a pass over the node's tiered volumes (issue 22 follow-up). */
struct tier_vol *tier_vol_find(struct tier *t, uint64_t fsid)
{
	struct tier_vol *v = NULL;
	size_t lo = 0, hi;

	pthread_rwlock_rdlock(&t->lk);
	hi = t->nvols;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->vols[mid]->cfg.fsid < fsid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nvols && t->vols[lo]->cfg.fsid == fsid) {
		v = t->vols[lo];
		atomic_fetch_add(&v->refs, 1);
	}
	pthread_rwlock_unlock(&t->lk);
	return v;
}

static int tier_vol_cmp(const void *a, const void *b)
{
	uint64_t x = (*(struct tier_vol *const *)a)->cfg.fsid, y = (*(struct tier_vol *const *)b)->cfg.fsid;

	return x < y ? -1 : x > y;
}

/* ---------- configuration ---------- */

int tier_new(const struct tier_cfg *cfg, struct tier **out)
{
	struct tier *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	if (obj_key_check(cfg->location) != 0 || strchr(cfg->location, '/')) {
		free(t);
		return -EINVAL;
	}
	t->cfg = *cfg;
	if (!t->cfg.day_seconds)
		t->cfg.day_seconds = 86400;
	pthread_rwlock_init(&t->lk, NULL);
	pthread_mutex_init(&t->hmu, NULL);
	pthread_mutex_init(&t->tmu, NULL);
	pthread_cond_init(&t->tcv, NULL);
	pthread_mutex_init(&t->cmu, NULL);
	pthread_cond_init(&t->ccv, NULL);
	*out = t;
	return 0;
}

void tier_free(struct tier *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->tmu);
	pthread_mutex_lock(&t->cmu);
	t->stopping = true;
	pthread_cond_broadcast(&t->ccv);
	pthread_mutex_unlock(&t->cmu);
	pthread_cond_signal(&t->tcv);
	pthread_mutex_unlock(&t->tmu);
	if (t->running)
		pthread_join(t->thr, NULL);
	for (size_t i = 0; i < t->npw; i++)
		pthread_join(t->pw[i], NULL);
	for (int l = 0; l < TIER_LANES; l++)
		for (size_t i = 0; i < t->pq[l].len; i++) {
			size_t k = (t->pq[l].head + i) % TIER_PREFETCH_Q;

			if (t->pq[l].key[k][0])
				tier_vol_unref(t->pq[l].v[k]);
		}
	for (size_t i = 0; i < t->nvols; i++) {
		tier_map_flush_heat(t->vols[i]);
		tier_vol_unref(t->vols[i]);
	}
	free(t->vols);
	tier_store_put(t->store);
	for (size_t i = 0; i < TIER_CACHE_CHUNKS; i++)
		free(t->cache[i].buf);
	pthread_rwlock_destroy(&t->lk);
	pthread_mutex_destroy(&t->hmu);
	pthread_mutex_destroy(&t->tmu);
	pthread_cond_destroy(&t->tcv);
	pthread_mutex_destroy(&t->cmu);
	pthread_cond_destroy(&t->ccv);
	free(t);
}

int tier_start(struct tier *t)
{
	if (t->running)
		return 0;
	for (size_t i = 0; i < TIER_PREFETCH_WORKERS; i++) {
		if (pthread_create(&t->pw[i], NULL, tier_prefetch_main, t) != 0)
			break;
		t->npw++;
	}
	if (pthread_create(&t->thr, NULL, tier_main, t) != 0)
		return -EAGAIN;
	t->running = true;
	return 0;
}

int tier_set_store(struct tier *t, const struct obj_cfg *cfg)
{
	struct tier_store *s = NULL, *old;
	struct obj_cfg c;
	int rc;

	if (cfg) {
		c = *cfg;
		if (!c.timeout_ms)
			c.timeout_ms = 2500; /* under the cold-read deadline, so a hung store is retried */
		if (!(s = calloc(1, sizeof(*s))))
			return -ENOMEM;
		if ((rc = obj_open(&c, &s->obj)) != 0) {
			free(s);
			return rc;
		}
		atomic_init(&s->refs, 1);
		snprintf(s->desc, sizeof(s->desc), "%s", obj_describe(s->obj));
		rc = obj_ensure_bucket(s->obj);
		if (rc != 0 && rc != -EAGAIN) {
			UT_ERROR("tier", NULL, "cold store %s: %s", s->desc, obj_strerror(rc));
		}
		tier_health(t, rc == -EAGAIN ? rc : 0, "create bucket");
	}
	pthread_rwlock_wrlock(&t->lk);
	old = t->store;
	t->store = s;
	pthread_rwlock_unlock(&t->lk);
	tier_store_put(old);
	return 0;
}

int tier_set_volumes(struct tier *t, const struct tier_vol_cfg *cfg, size_t n, int *rcs)
{
	struct tier_vol **nv = calloc(n ? n : 1, sizeof(*nv)), **old = NULL;
	struct tier_store *s = tier_store_get(t);
	size_t m = 0, nold = 0;
	int rc = 0;

	if (!nv) {
		tier_store_put(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct tier_vol *v;
		int vrc;

		if (rcs)
			rcs[i] = 0;
		if (cfg[i].action == TIER_OFF)
			continue;
		if ((v = tier_vol_find(t, cfg[i].fsid)) != NULL) {
			pthread_mutex_lock(&v->mu);
			v->cfg.action = cfg[i].action;
			v->cfg.cooling_days = cfg[i].cooling_days;
			v->cfg.bypass = cfg[i].bypass;
			v->cfg.retrieval = cfg[i].retrieval;
			pthread_mutex_unlock(&v->mu);
		} else if ((vrc = tier_vol_open(t, &cfg[i], &v)) != 0) {
			if (rcs)
				rcs[i] = vrc;
			if (!rc)
				rc = vrc;
			continue; /* left out; the others go on */
		} else if (s) {
			tier_map_gc(v, s); /* recovery: objects of unfinished moves go */
		}
		nv[m++] = v;
	}
	qsort(nv, m, sizeof(*nv), tier_vol_cmp); /* for tier_vol_find */
	pthread_rwlock_wrlock(&t->lk);
	old = t->vols;
	nold = t->nvols;
	t->vols = nv;
	t->nvols = m;
	nv = NULL;
	pthread_rwlock_unlock(&t->lk);
	tier_store_put(s);
	tier_vols_put(nv, m);
	tier_vols_put(old, nold);
	return rc;
}

int tier_destroy_volume(struct tier *t, uint64_t fsid, const char *state_dir)
{
	struct tier_store *s = tier_store_get(t);
	struct tier_keylist l = {0};
	char prefix[96], path[4200];
	int rc = 0;

	snprintf(prefix, sizeof(prefix), "%s/%016" PRIx64 "/", t->cfg.location, fsid);
	if (s && (rc = obj_list(s->obj, prefix, tier_keylist_add, &l)) == 0) {
		for (size_t i = 0; i < l.n && rc == 0; i++)
			rc = obj_delete(s->obj, l.k[i]);
	}
	if (rc == 0) {
		static const char *files[] = {"tier.db", "tier.db-wal", "tier.db-shm"};

		for (size_t i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/%s", state_dir, files[i]);
			unlink(path);
		}
		rmdir(state_dir);
	} else {
		UT_ERROR("tier", NULL, "cannot delete the cold objects under %s: %s", prefix, obj_strerror(rc));
	}
	tier_keylist_free(&l);
	tier_store_put(s);
	return rc;
}

uint64_t tier_cold_total(struct tier *t)
{
	uint64_t sum = 0;

	pthread_rwlock_rdlock(&t->lk);
	for (size_t i = 0; i < t->nvols; i++)
		sum += atomic_load(&t->vols[i]->cold_bytes);
	pthread_rwlock_unlock(&t->lk);
	return sum;
}

int tier_stats(struct tier *t, uint64_t fsid, struct tier_stats *out)
{
	struct tier_vol *v = tier_vol_find(t, fsid);

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOENT;
	out->cold_bytes = atomic_load(&v->cold_bytes);
	out->cold_read_bytes = atomic_load(&v->cold_read);
	out->cold_write_bytes = atomic_load(&v->cold_write);
	pthread_mutex_lock(&t->hmu);
	if (t->down) {
		struct tier_store *s = tier_store_get(t);
		struct tm tm;

		gmtime_r(&t->down_since, &tm);
		snprintf(out->state, sizeof(out->state), "STORE_UNAVAILABLE");
		snprintf(out->details, sizeof(out->details),
			 "cold store %s unreachable since %02d:%02d:%02d UTC (%s); tiering paused, cold reads retry",
			 s ? s->desc : "(none)", tm.tm_hour, tm.tm_min, tm.tm_sec, t->down_why);
		tier_store_put(s);
	} else {
		snprintf(out->state, sizeof(out->state), "%s", v->cfg.action == TIER_PAUSED ? "PAUSED" : "ACTIVE");
	}
	pthread_mutex_unlock(&t->hmu);
	tier_vol_unref(v);
	return 0;
}

void tier_counters(struct tier *t, struct tier_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (!t)
		return;
	out->read_cached_declined = atomic_load(&t->rc_declined);
	out->prefetch_evicted_unread = atomic_load(&t->pf_evicted_unread);
}
