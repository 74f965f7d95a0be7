/* tier_hook: the data path hooks the volume store calls (struct
 * vol_tier_ops): temperature and stream detection on every read, cold
 * reads (and an event loop's no-wait read of what the chunk cache holds),
 * writes and truncates that rehydrate, unlinks that drop records.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

/* ---------- the data path hooks ---------- */

static uint32_t tier_chunk_of(uint64_t off)
{
	return (uint32_t)(off / TIER_CHUNK);
}

/* The stream detector: what a read of [off, off+len) of f makes of its run
 * and end (into *run, *end; f is not changed, so a caller may only look),
 * and whether the read is sequential (v->mu held). */
static bool tier_seq_step(const struct tier_file *f, uint64_t off, size_t len, int *run, uint64_t *end)
{
	/* A stream: starts at 0 or continues near the previous end (NFS
	 * clients keep several reads in flight, so allow reordering). */
	if (off == 0)
		*run = 3;
	else if (off + TIER_SEQ_WINDOW >= f->seq_end && off <= f->seq_end + TIER_SEQ_WINDOW)
		*run = f->seq_run + 1;
	else
		*run = 0;
	*end = off + len > f->seq_end || *run == 0 ? off + len : f->seq_end;
	/* Large reads are streaming reads too: the first reads of a stream
	 * arrive in parallel and out of order, before the stream is
	 * recognised. */
	return *run >= 3 || len >= TIER_SEQ_READ;
}

/* Record an access to [off, off+len) (v->mu held); returns f or NULL. Sets
 * *cold when a touched chunk is not hot, *seq when the file is read as a
 * stream. */
static struct tier_file *tier_touch(struct tier_vol *v, uint64_t ino, uint64_t off, size_t len, bool *cold, bool *seq)
{
	uint32_t a = tier_chunk_of(off), b = tier_chunk_of(off + len - 1) + 1, today = tier_today(v->t);
	struct tier_file *f = tier_file_get(v, ino, b);

	*cold = false;
	if (!f)
		return NULL;
	for (uint32_t c = a; c < b; c++) {
		f->ver[c]++;
		if (f->day[c] != today) {
			f->day[c] = today;
			f->dirty = true;
		}
		*cold |= f->state[c] != CH_HOT;
	}
	if (seq)
		*seq = tier_seq_step(f, off, len, &f->seq_run, &f->seq_end);
	return f;
}

/* Does [off, off+len) touch a chunk that is not hot? (v->mu held) */
static bool tier_range_cold(struct tier_vol *v, uint64_t ino, uint64_t off, size_t len)
{
	uint32_t a = tier_chunk_of(off), b = tier_chunk_of(off + len - 1) + 1;
	struct tier_file *f = tier_file_find(v, ino);

	for (uint32_t c = a; f && c < b && c < f->n; c++)
		if (f->state[c] != CH_HOT)
			return true;
	return false;
}

/* A hot range is the access (recorded here: its ver bump also keeps a pass
 * from punching what sendfile is about to send). A cold one records
 * nothing: the read hook that follows is the access, so the stream
 * detector counts the READ once. */
static int hk_cold(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, size_t len)
{
	struct tier_vol *v;
	bool cold = false, seq;

	if (st->st_size < (off_t)TIER_CHUNK || !(v = tier_vol_find(arg, fsid)))
		return 0;
	pthread_mutex_lock(&v->mu);
	if (!(cold = tier_range_cold(v, st->st_ino, off, len)))
		tier_touch(v, st->st_ino, off, len, &cold, &seq);
	pthread_mutex_unlock(&v->mu);
	tier_vol_unref(v);
	return cold ? 1 : 0;
}

/* A stream read chunk c of file ino: queue the cold chunks after it, up to
 * TIER_READAHEAD, for the prefetch workers in lane. */
static void tier_push_next(struct tier_vol *v, uint64_t ino, uint32_t c, enum tier_lane lane)
{
	struct tier_file *f;

	pthread_mutex_lock(&v->mu);
	f = tier_file_find(v, ino);
	for (uint32_t k = c + 1; f && k < f->n && k <= c + TIER_READAHEAD; k++) {
		char nk[TIER_KEY_MAX];

		if (f->state[k] != CH_COLD)
			continue;
		tier_key(v, f->fid, k, f->cver[k], nk);
		pthread_mutex_unlock(&v->mu);
		tier_prefetch_push(v, nk, lane);
		pthread_mutex_lock(&v->mu);
		f = tier_file_find(v, ino);
	}
	pthread_mutex_unlock(&v->mu);
}

/* Read [off, off+len) of a file with cold chunks: hot chunks from fd, cold
 * ones per the retrieval policy. lane: TIER_NEAR for a client READ,
 * TIER_FAR for the store's read-ahead (its GETs yield to clients'). */
static int tier_read_range(struct tier_vol *v, uint64_t ino, int fd, uint64_t off, uint8_t *dst, size_t len, bool seq,
			   void **swap, enum tier_lane lane)
{
	int rc = 0, tries = 0;

	while (len > 0 && rc == 0) {
		uint32_t c = tier_chunk_of(off);
		uint64_t coff = off - (uint64_t)c * TIER_CHUNK;
		size_t piece = TIER_CHUNK - coff < len ? (size_t)(TIER_CHUNK - coff) : len;
		char key[TIER_KEY_MAX], fid[17];
		struct tier_file *f;
		uint64_t cver = 0;
		bool cold;

		pthread_mutex_lock(&v->mu);
		f = tier_wait_idle(v, ino, c, c + 1);
		cold = f && c < f->n && f->state[c] == CH_COLD;
		if (cold) {
			cver = f->cver[c];
			memcpy(fid, f->fid, sizeof(fid));
		}
		pthread_mutex_unlock(&v->mu);
		if (!cold) {
			ssize_t n = tier_pread_all(fd, dst, piece, off);

			if (n < 0) {
				rc = (int)n;
				break;
			}
			memset(dst + n, 0, piece - (size_t)n);
		} else if (tries < 3 && (v->cfg.retrieval == TIER_RET_ON_READ ||
					 (v->cfg.retrieval == TIER_RET_DEFAULT && !seq))) {
			tries++;
			rc = tier_rehydrate(v, ino, c, fd);
			continue; /* read it again, now hot */
		} else {
			tier_key(v, fid, c, cver, key);
			if (seq) {
				rc = tier_cache_read(v, key, coff, dst, piece, swap && *swap == dst && piece == len ? swap : NULL,
						     lane);
				tier_push_next(v, ino, c, lane);
			} else {
				rc = tier_cache_read_part(v, key, coff, dst, piece);
			}
		}
		tries = 0;
		off += piece;
		dst += piece;
		len -= piece;
	}
	return rc;
}

static int tier_read(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf, size_t len,
		     size_t *got, void **swap, enum tier_lane lane)
{
	struct tier_vol *v;
	bool cold = false, seq = false;
	int rc;

	*got = 0;
	if (st->st_size < (off_t)TIER_CHUNK || !(v = tier_vol_find(arg, fsid)))
		return 1;
	pthread_mutex_lock(&v->mu);
	tier_touch(v, st->st_ino, off, len, &cold, &seq);
	pthread_mutex_unlock(&v->mu);
	if (!cold) {
		tier_vol_unref(v);
		return 1;
	}
	rc = tier_read_range(v, st->st_ino, fd, off, buf, len, seq, swap, lane);
	if (rc == 0)
		*got = len;
	tier_vol_unref(v);
	return rc;
}

static int hk_read(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf, size_t len,
		   size_t *got, void **swap)
{
	return tier_read(arg, fsid, fd, st, off, buf, len, got, swap, TIER_NEAR);
}

static int hk_read_ahead(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf,
			 size_t len, size_t *got)
{
	return tier_read(arg, fsid, fd, st, off, buf, len, got, NULL, TIER_FAR);
}

/* vol_read_nowait's try (vol_tier_ops.read_cached): every chunk of
 * [off, off+len) cold (not hot, not being moved) and, per the retrieval
 * policy, streamed rather than brought back (what tier_read_range would do
 * with it); then, under the cache's lock, all of them ready in the chunk
 * cache, copied out. Only then is the READ recorded (the stream detector
 * and the next chunks queued, as tier_read would): a range it declines
 * leaves no trace, and the worker's read that follows is the access. No
 * wait for a GET, a move or the disk: locks held for bookkeeping only. */
static int hk_read_cached(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, void *buf, size_t len)
{
	uint32_t a = tier_chunk_of(off), b = tier_chunk_of(off + len - 1) + 1;
	char keys[TIER_CACHED_CHUNKS][TIER_KEY_MAX];
	struct tier_file *f;
	struct tier_vol *v;
	uint64_t end;
	bool ok = true, seq, cold;
	int run;

	if (!len || b - a > TIER_CACHED_CHUNKS || st->st_size < (off_t)TIER_CHUNK || !(v = tier_vol_find(arg, fsid)))
		return 1;
	pthread_mutex_lock(&v->mu);
	f = tier_file_find(v, st->st_ino);
	ok = f && b <= f->n;
	for (uint32_t c = a; ok && c < b; c++) {
		ok = f->state[c] == CH_COLD;
		if (ok)
			tier_key(v, f->fid, c, f->cver[c], keys[c - a]);
	}
	seq = ok && tier_seq_step(f, off, len, &run, &end);
	if (ok && (v->cfg.retrieval == TIER_RET_ON_READ || (v->cfg.retrieval == TIER_RET_DEFAULT && !seq)))
		ok = false; /* the read brings it back: a worker's job */
	pthread_mutex_unlock(&v->mu);
	if (ok && tier_cache_copy(v->t, keys, b - a, off - (uint64_t)a * TIER_CHUNK, buf, len) != 0) {
		ok = false; /* a cold range the cache does not hold whole: a worker's vol_read */
		atomic_fetch_add(&v->t->rc_declined, 1);
	}
	if (ok) {
		pthread_mutex_lock(&v->mu);
		tier_touch(v, st->st_ino, off, len, &cold, &seq);
		pthread_mutex_unlock(&v->mu);
		if (seq)
			tier_push_next(v, st->st_ino, b - 1, TIER_NEAR);
	}
	tier_vol_unref(v);
	return ok ? 0 : 1;
}

static int hk_write_begin(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	uint32_t a = tier_chunk_of(off), b = tier_chunk_of(off + len - 1) + 1;
	int rc = 0;

	if (!v)
		return 0;
	for (;;) {
		struct tier_file *f;
		uint32_t cold = UINT32_MAX;
		bool any;

		pthread_mutex_lock(&v->mu);
		if (!tier_file_get(v, st->st_ino, b) || !(f = tier_wait_idle(v, st->st_ino, a, b))) {
			pthread_mutex_unlock(&v->mu);
			rc = -ENOMEM;
			break;
		}
		for (uint32_t c = a; c < b && cold == UINT32_MAX; c++)
			if (f->state[c] == CH_COLD)
				cold = c;
		if (cold == UINT32_MAX) {
			f->inflight++;
			tier_touch(v, st->st_ino, off, len, &any, NULL);
			pthread_mutex_unlock(&v->mu);
			break;
		}
		pthread_mutex_unlock(&v->mu);
		/* Writes to a cold chunk bring it back first. */
		if ((rc = tier_rehydrate(v, st->st_ino, cold, fd)) != 0)
			break;
	}
	tier_vol_unref(v);
	return rc;
}

/* A write or truncate of file ino ended: it is no longer in flight, and
 * chunks [a, b) changed, so a pass that read them before must not record or
 * punch them. */
static void tier_mutation_end(struct tier_vol *v, uint64_t ino, uint32_t a, uint32_t b)
{
	struct tier_file *f;

	pthread_mutex_lock(&v->mu);
	if ((f = tier_file_find(v, ino)) != NULL) {
		if (f->inflight)
			f->inflight--;
		for (uint32_t c = a; c < b && c < f->n; c++)
			f->ver[c]++;
	}
	pthread_mutex_unlock(&v->mu);
}

static void hk_write_end(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	uint32_t a = tier_chunk_of(off), b = tier_chunk_of(off + len - 1) + 1;

	(void)fd;
	if (!v)
		return;
	tier_mutation_end(v, st->st_ino, a, b);
	/* Bypass mode: a write that completes a chunk sends it to cold soon. */
	if (v->cfg.bypass && v->cfg.action == TIER_ENABLED && tier_chunk_of(off + len) > tier_chunk_of(off)) {
		atomic_store(&v->bypass_due, true);
		tier_kick(v->t);
	}
	tier_vol_unref(v);
}

static int hk_truncate(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t size)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	char (*keys)[TIER_KEY_MAX] = NULL;
	uint32_t *idx = NULL, keep = (uint32_t)((size + TIER_CHUNK - 1) / TIER_CHUNK);
	char fid[17];
	size_t n = 0;
	int rc = 0;

	if (!v)
		return 0;
	/* The chunk that the new end cuts comes back first, whole. */
	if (size % TIER_CHUNK && (rc = tier_rehydrate(v, st->st_ino, tier_chunk_of(size), fd)) != 0)
		goto out;
	pthread_mutex_lock(&v->mu);
	struct tier_file *f = tier_file_get(v, st->st_ino, 1);

	if (f && (f = tier_wait_idle(v, st->st_ino, keep, UINT32_MAX)) != NULL) {
		n = tier_take_cold(v, f, keep, &keys, &idx);
		memcpy(fid, f->fid, sizeof(fid));
		/* In flight until truncate_end: a pass that read a chunk past the
		 * new end before the cut must not record it. */
		f->inflight++;
		for (uint32_t c = keep; c < f->n; c++)
			f->ver[c]++;
	} else {
		rc = -ENOMEM;
	}
	pthread_mutex_unlock(&v->mu);
	if (n)
		tier_drop_records(v, fid, keys, idx, n, false);
out:
	free(keys);
	free(idx);
	tier_vol_unref(v);
	return rc;
}

static void hk_truncate_end(void *arg, uint64_t fsid, const struct stat *st)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);

	if (!v)
		return;
	tier_mutation_end(v, st->st_ino, 0, UINT32_MAX);
	tier_vol_unref(v);
}

static int hk_snap_read(void *arg, uint64_t fsid, const char *snap, int fd, const struct stat *st, uint64_t off,
			void *buf, size_t len, size_t *got)
{
	return tier_snap_read(arg, fsid, snap, fd, st, off, buf, len, got);
}

static void hk_unlinked(void *arg, uint64_t fsid, const struct stat *st)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	char (*keys)[TIER_KEY_MAX] = NULL;
	uint32_t *idx = NULL;
	struct tier_file *f;
	size_t n = 0;

	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	f = tier_wait_idle(v, st->st_ino, 0, UINT32_MAX);
	if (f) {
		n = tier_take_cold(v, f, 0, &keys, &idx);
		tier_file_unhash(v, f);
	}
	pthread_mutex_unlock(&v->mu);
	if (f && f->fid[0])
		tier_drop_records(v, f->fid, keys, idx, n, true);
	tier_file_free(f);
	free(keys);
	free(idx);
	tier_vol_unref(v);
}

static const struct vol_tier_ops tier_vol_ops = {
	.read = hk_read,
	.read_ahead = hk_read_ahead,
	.cold = hk_cold,
	.read_cached = hk_read_cached,
	.write_begin = hk_write_begin,
	.write_end = hk_write_end,
	.truncate = hk_truncate,
	.truncate_end = hk_truncate_end,
	.unlinked = hk_unlinked,
	.snap_read = hk_snap_read,
};

const struct vol_tier_ops *tier_ops(void)
{
	return &tier_vol_ops;
}
