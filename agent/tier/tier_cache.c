/* tier_cache: reading cold chunks back from the object store: the bounded
 * fetch with its deadline, the chunk cache and the read-ahead workers, with
 * client GETs first (the lanes and shares: tier_internal.h, TIER_PF_MAX).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

/* ---------- reading from the store ---------- */

/* [off, off+len) of key, retrying an unreachable store with backoff until
 * TIER_COLD_DEADLINE_MS passed (then -ETIMEDOUT). */
int tier_fetch(struct tier_vol *v, const char *key, uint64_t off, void *buf, size_t len, size_t *got)
{
	double end = (double)ut_clock_mono_ms() + TIER_COLD_DEADLINE_MS, wait = 50;

	/* Down for longer than a read may wait (the tier thread probes it every
	 * second): answer at once, so cold reads do not tie up the NFS workers
	 * hot reads need. A store that just failed once is retried as usual. */
	if (tier_down_for(v->t) > TIER_COLD_DEADLINE_MS / 1000)
		return -ETIMEDOUT;
	for (;;) {
		struct tier_store *s = tier_store_get(v->t);
		int rc = s ? obj_get(s->obj, key, off, buf, len, got) : -EAGAIN;

		tier_store_put(s);
		if (rc == 0) {
			atomic_fetch_add(&v->cold_read, *got);
			if (tier_is_down(v->t))
				tier_health(v->t, 0, "read");
			return 0;
		}
		if (rc != -EAGAIN)
			return rc == -ENOENT ? -EIO : rc;
		tier_health(v->t, rc, "read");
		if ((double)ut_clock_mono_ms() + wait > end)
			return -ETIMEDOUT;
		usleep((useconds_t)(wait * 1000));
		wait = wait * 2 > 800 ? 800 : wait * 2;
	}
}

static struct tier_centry *tier_cache_find(struct tier *t, const char *key)
{
	for (size_t i = 0; i < TIER_CACHE_CHUNKS; i++)
		if (t->cache[i].state && !strcmp(t->cache[i].key, key))
			return &t->cache[i];
	return NULL;
}

/* A slot to load into (empty, else least recently used ready), or NULL.
 * A chunk a client READ took whole counts as used longest ago (used 0,
 * tier_cache_used): a stream reads each chunk once, so it goes before the
 * chunks a prefetch fetched that no client read yet, which an LRU by read
 * time would give up first (they were fetched before the last READs). */
static struct tier_centry *tier_cache_slot(struct tier *t)
{
	struct tier_centry *best = NULL;

	for (size_t i = 0; i < TIER_CACHE_CHUNKS; i++) {
		struct tier_centry *e = &t->cache[i];

		if (e->state == 0)
			return e;
		if (e->state >= 2 && (!best || e->used < best->used))
			best = e;
	}
	return best;
}

/* A client READ copied [lo, hi) out of e (cmu held): the whole chunk, it is
 * the first to go (tier_cache_slot); a part, it was used now. */
static void tier_cache_used(struct tier *t, struct tier_centry *e, uint64_t lo, uint64_t hi)
{
	e->used = lo == 0 && hi >= e->len ? 0 : ++t->tick;
}

static struct tier_centry *tier_cache_claim(struct tier *t, const char *key)
{
	struct tier_centry *e = tier_cache_slot(t);

	if (!e)
		return NULL;
	if (!e->buf && !(e->buf = malloc(TIER_CHUNK)))
		return NULL;
	if (e->state == 2 && e->pf_unread) /* read-ahead that no read used */
		atomic_fetch_add(&t->pf_evicted_unread, 1);
	e->pf_unread = false;
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->state = 1;
	e->len = 0;
	return e;
}

/* Whether a read-ahead GET of lane may start now (cmu held): within
 * TIER_PF_MAX, and while client GETs are at the store FAR only within its
 * share. */
static bool tier_pf_may(const struct tier *t, enum tier_lane lane)
{
	if (t->pf[TIER_NEAR] + t->pf[TIER_FAR] >= TIER_PF_MAX)
		return false;
	return lane == TIER_NEAR || !t->dem || t->pf[TIER_FAR] < TIER_PF_FAR_SHARE;
}

/* A GET of a client READ (NEAR) or of a read_ahead read (FAR) starts / ended
 * (cmu held). */
static void tier_get_begin(struct tier *t, enum tier_lane lane)
{
	if (lane == TIER_NEAR)
		t->dem++;
	else
		t->pf[TIER_FAR]++;
}

static void tier_get_end(struct tier *t, enum tier_lane lane)
{
	if (lane == TIER_NEAR)
		t->dem--;
	else
		t->pf[TIER_FAR]--;
	pthread_cond_broadcast(&t->ccv);
}

/* Copy [coff, coff+len) of the chunk object key through the cache. With
 * swap (*swap == dst, a malloc()ed block of at least TIER_CHUNK bytes) and a
 * read of the whole chunk, the cached block is handed over instead: the
 * caller gets it in *swap, the entry takes dst and is empty again (a stream
 * reads each chunk once; this saves copying 1 MiB per READ). A chunk being
 * fetched is waited for (joined). A FAR read takes its turn before it
 * claims the chunk, so a client READ of the same chunk meanwhile fetches it
 * at once and the FAR read joins that. */
int tier_cache_read(struct tier_vol *v, const char *key, uint64_t coff, void *dst, size_t len, void **swap,
		    enum tier_lane lane)
{
	struct tier *t = v->t;
	struct tier_centry *e;
	size_t got = 0;
	int rc = 0;

	pthread_mutex_lock(&t->cmu);
	for (;;) {
		e = tier_cache_find(t, key);
		if (e && e->state == 1) {
			pthread_cond_wait(&t->ccv, &t->cmu);
			continue;
		}
		if (e && e->state == 2) {
			if (coff + len > e->len) {
				rc = -EIO;
			} else if (swap && coff == 0 && len == TIER_CHUNK && e->len == TIER_CHUNK) {
				/* Handed over; the entry stays as "consumed" so the
				 * read-ahead of a stream does not fetch it again. */
				*swap = e->buf;
				e->buf = dst;
				e->pf_unread = false;
				e->state = 3;
				e->len = 0;
				e->used = 0; /* its block is spare: the first to reuse */
			} else {
				memcpy(dst, e->buf + coff, len);
				e->pf_unread = false;
				if (lane == TIER_NEAR) /* a client's; a FAR read only fetched it */
					tier_cache_used(t, e, coff, coff + len);
				else
					e->used = ++t->tick;
			}
			break;
		}
		if (lane == TIER_FAR && !t->stopping && !tier_pf_may(t, TIER_FAR)) {
			pthread_cond_wait(&t->ccv, &t->cmu);
			continue;
		}
		tier_get_begin(t, lane);
		if (e) { /* consumed: read again into its block */
			e->state = 1;
		} else if (!(e = tier_cache_claim(t, key))) {
			pthread_mutex_unlock(&t->cmu);
			rc = tier_fetch(v, key, coff, dst, len, &got);
			pthread_mutex_lock(&t->cmu);
			tier_get_end(t, lane);
			pthread_mutex_unlock(&t->cmu);
			return rc == 0 && got != len ? -EIO : rc;
		}
		pthread_mutex_unlock(&t->cmu);
		rc = tier_fetch(v, key, 0, e->buf, TIER_CHUNK, &got);
		pthread_mutex_lock(&t->cmu);
		tier_get_end(t, lane);
		e->state = rc == 0 ? 2 : 0;
		e->len = got;
		e->used = ++t->tick;
		pthread_cond_broadcast(&t->ccv);
		if (rc != 0)
			break;
	}
	pthread_mutex_unlock(&t->cmu);
	return rc;
}

int tier_cache_read_part(struct tier_vol *v, const char *key, uint64_t coff, void *dst, size_t len)
{
	struct tier *t = v->t;
	struct tier_centry *e;
	size_t got = 0;
	int rc;

	pthread_mutex_lock(&t->cmu);
	while ((e = tier_cache_find(t, key)) != NULL && e->state == 1)
		pthread_cond_wait(&t->ccv, &t->cmu);
	if (e && e->state == 2 && coff + len <= e->len) {
		memcpy(dst, e->buf + coff, len);
		e->pf_unread = false;
		e->used = ++t->tick;
		pthread_mutex_unlock(&t->cmu);
		return 0;
	}
	tier_get_begin(t, TIER_NEAR);
	pthread_mutex_unlock(&t->cmu);
	rc = tier_fetch(v, key, coff, dst, len, &got);
	pthread_mutex_lock(&t->cmu);
	tier_get_end(t, TIER_NEAR);
	pthread_mutex_unlock(&t->cmu);
	return rc == 0 && got != len ? -EIO : rc;
}

int tier_cache_copy(struct tier *t, char (*keys)[TIER_KEY_MAX], size_t n, uint64_t coff, uint8_t *dst, size_t len)
{
	struct tier_centry *e[TIER_CACHED_CHUNKS];
	bool ok = n > 0 && n <= TIER_CACHED_CHUNKS && coff < TIER_CHUNK;

	pthread_mutex_lock(&t->cmu);
	/* all of them ready first: a range is copied whole or not at all */
	for (size_t i = 0; ok && i < n; i++) {
		uint64_t hi = i + 1 == n ? coff + len - i * (uint64_t)TIER_CHUNK : TIER_CHUNK;

		e[i] = tier_cache_find(t, keys[i]);
		ok = e[i] && e[i]->state == 2 && hi <= e[i]->len;
	}
	for (size_t i = 0; ok && i < n; i++) {
		uint64_t lo = i == 0 ? coff : 0;
		uint64_t hi = i + 1 == n ? coff + len - i * (uint64_t)TIER_CHUNK : TIER_CHUNK;

		memcpy(dst + (i * (uint64_t)TIER_CHUNK + lo - coff), e[i]->buf + lo, hi - lo);
		e[i]->pf_unread = false;
		tier_cache_used(t, e[i], lo, hi);
	}
	pthread_mutex_unlock(&t->cmu);
	return ok ? 0 : 1;
}

/* Where key waits in lane q, or -1 (cmu held). */
static long tier_pq_find(const struct tier_lane_q *q, const char *key)
{
	for (size_t i = 0; i < q->len; i++) {
		size_t k = (q->head + i) % TIER_PREFETCH_Q;

		if (q->key[k][0] && !strcmp(q->key[k], key))
			return (long)k;
	}
	return -1;
}

void tier_prefetch_push(struct tier_vol *v, const char *key, enum tier_lane lane)
{
	struct tier *t = v->t;
	struct tier_lane_q *q = &t->pq[lane], *far = &t->pq[TIER_FAR];
	long k;

	pthread_mutex_lock(&t->cmu);
	if (!t->npw || tier_cache_find(t, key) || tier_pq_find(q, key) >= 0 || q->len >= TIER_PREFETCH_Q)
		goto out;
	/* a client stream now wants what the read-ahead queued: it moves up */
	if (lane == TIER_NEAR && (k = tier_pq_find(far, key)) >= 0) {
		far->key[k][0] = '\0';
		tier_vol_unref(far->v[k]);
	}
	size_t slot = (q->head + q->len++) % TIER_PREFETCH_Q;

	snprintf(q->key[slot], TIER_KEY_MAX, "%s", key);
	atomic_fetch_add(&v->refs, 1);
	q->v[slot] = v;
	pthread_cond_broadcast(&t->ccv);
out:
	pthread_mutex_unlock(&t->cmu);
}

/* The next live key of lane into key, its volume (counted) into *v (cmu
 * held); false when the lane is empty. */
static bool tier_pq_pop(struct tier *t, enum tier_lane lane, char *key, struct tier_vol **v)
{
	struct tier_lane_q *q = &t->pq[lane];

	while (q->len) {
		size_t k = q->head;

		q->head = (q->head + 1) % TIER_PREFETCH_Q;
		q->len--;
		if (!q->key[k][0])
			continue; /* moved to NEAR */
		memcpy(key, q->key[k], TIER_KEY_MAX);
		*v = q->v[k];
		return true;
	}
	return false;
}

/* The lane a worker serves next (cmu held): NEAR first, FAR when its turn
 * allows; false: nothing may start now. */
static bool tier_pq_pick(struct tier *t, enum tier_lane *lane)
{
	for (int l = TIER_NEAR; l < TIER_LANES; l++) {
		const struct tier_lane_q *q = &t->pq[l];
		bool live = false;

		for (size_t i = 0; i < q->len && !live; i++)
			live = q->key[(q->head + i) % TIER_PREFETCH_Q][0] != '\0';
		if (live && tier_pf_may(t, (enum tier_lane)l)) {
			*lane = (enum tier_lane)l;
			return true;
		}
	}
	return false;
}

bool tier_prefetch_idle(struct tier *t)
{
	enum tier_lane lane;
	bool idle;

	pthread_mutex_lock(&t->cmu);
	idle = !t->dem && !t->pf[TIER_NEAR] && !t->pf[TIER_FAR] && !tier_pq_pick(t, &lane);
	pthread_mutex_unlock(&t->cmu);
	return idle;
}

/* Prefetch worker: loads queued chunks into the cache, up to
 * TIER_PREFETCH_BATCH of one lane at once with parallel ranged GETs, each
 * within its lane's turn (tier_pf_may). */
void *tier_prefetch_main(void *arg)
{
	struct tier *t = arg;

	pthread_mutex_lock(&t->cmu);
	while (!t->stopping) {
		struct obj_range r[TIER_PREFETCH_BATCH];
		struct tier_centry *e[TIER_PREFETCH_BATCH];
		struct tier_vol *vv[TIER_PREFETCH_BATCH];
		char key[TIER_KEY_MAX];
		struct tier_store *s;
		enum tier_lane lane;
		struct tier_vol *v;
		size_t n = 0;

		if (!tier_pq_pick(t, &lane)) {
			pthread_cond_wait(&t->ccv, &t->cmu);
			continue;
		}
		while (n < TIER_PREFETCH_BATCH && tier_pf_may(t, lane) && tier_pq_pop(t, lane, key, &v)) {
			if (tier_cache_find(t, key) || !(e[n] = tier_cache_claim(t, key))) {
				tier_vol_unref(v);
				continue;
			}
			vv[n] = v;
			r[n] = (struct obj_range){.key = e[n]->key, .off = 0, .buf = e[n]->buf, .len = TIER_CHUNK};
			t->pf[lane]++;
			n++;
		}
		if (!n)
			continue;
		pthread_mutex_unlock(&t->cmu);
		s = tier_store_get(t);
		if (s)
			obj_get_many(s->obj, r, n, TIER_PREFETCH_BATCH);
		tier_store_put(s);
		pthread_mutex_lock(&t->cmu);
		t->pf[lane] -= (unsigned)n;
		for (size_t i = 0; i < n; i++) {
			bool ok = s && r[i].rc == 0;

			e[i]->state = ok ? 2 : 0;
			e[i]->len = ok ? r[i].got : 0;
			e[i]->pf_unread = ok;
			e[i]->used = ++t->tick;
			if (ok)
				atomic_fetch_add(&vv[i]->cold_read, r[i].got);
			tier_vol_unref(vv[i]);
		}
		pthread_cond_broadcast(&t->ccv);
	}
	pthread_mutex_unlock(&t->cmu);
	return NULL;
}
