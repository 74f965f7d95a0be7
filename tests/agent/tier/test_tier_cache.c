/* test_tier_cache: demand first at the cold tier (agent/tier/tier_cache.c,
 * issue 23). The directory store under a stub that delays each GET by a
 * time set per file and counts, per chunk, the GETs started and in flight.
 * Checked: while a client GET is at the store, the read-ahead of the store
 * (vol_tier_ops.read_ahead and the FAR chunks it queues) runs at most
 * TIER_PF_FAR_SHARE GETs, while a client stream's own read-ahead (NEAR)
 * starts at once; a chunk a client stream asks for moves from FAR to NEAR;
 * a chunk a client read fetched itself is not fetched again by the queue;
 * a random client read of a chunk whose read-ahead GET is in flight joins
 * it (one GET); vol_read_nowait answers a cold range the chunk cache holds
 * whole from it (no GET, no -EAGAIN, the right bytes) and still -EAGAIN for
 * one not fetched yet, for a snapshot's file, and for one the retrieval
 * policy would bring back (ON_READ, a random read under DEFAULT); a chunk a
 * client read whole is the first the cache gives up, before prefetched
 * chunks not read yet; the node's counters of ranges the cache declined
 * and of prefetched chunks it gave up unread move when they should. Needs root
 * (open_by_handle_at) and user xattrs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "agent/obj/obj_be.h"
#include "agent/tier/tier_internal.h"
#include "agent/vol/vol.h"
#include "tests/agent/tier/tier_harness.h"
#include "tests/lib/aqt.h"

#define MIB (1024u * 1024u)
#define DAY 100
#define NCH 8                   /* whole chunks per file */
#define FSIZE (NCH * MIB + 100)

static char tmp[64];
static struct tiert_clock clk; /* the fake clock */
static struct vol_store *S;
static struct tier *T;
static struct vol_export_cfg cfg;
static struct tier_vol_cfg tcfg;

/* ---- the stub store: delays and counts GETs per (file id, chunk) ---- */

#define STUB_FILES 8
static struct {
	pthread_mutex_t mu;
	struct {
		char fid[17];
		unsigned delay_ms;
		int started[NCH + 1], inflight[NCH + 1];
	} f[STUB_FILES];
	size_t n;
	struct obj_ops ops;
} stub = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* "<location>/<fsid>/<fid>/<chunk>-<version>": the file's slot and chunk. */
static int stub_slot(const char *key, unsigned *chunk)
{
	const char *p = strchr(key, '/'), *q;

	p = p ? strchr(p + 1, '/') : NULL;
	if (!p || !(q = strchr(p + 1, '/')) || q - p - 1 != 16)
		return -1;
	*chunk = (unsigned)strtoul(q + 1, NULL, 10);
	for (size_t i = 0; i < stub.n; i++)
		if (!strncmp(stub.f[i].fid, p + 1, 16) && *chunk <= NCH)
			return (int)i;
	return -1;
}

static void stub_begin(const char *key, unsigned *delay)
{
	unsigned c;
	int i;

	pthread_mutex_lock(&stub.mu);
	if ((i = stub_slot(key, &c)) >= 0) {
		stub.f[i].started[c]++;
		stub.f[i].inflight[c]++;
		if (stub.f[i].delay_ms > *delay)
			*delay = stub.f[i].delay_ms;
	}
	pthread_mutex_unlock(&stub.mu);
}

static void stub_end(const char *key)
{
	unsigned c;
	int i;

	pthread_mutex_lock(&stub.mu);
	if ((i = stub_slot(key, &c)) >= 0)
		stub.f[i].inflight[c]--;
	pthread_mutex_unlock(&stub.mu);
}

static int stub_get(struct obj_store *s, const char *key, uint64_t off, void *buf, size_t len, size_t *got)
{
	unsigned delay = 0;
	int rc;

	stub_begin(key, &delay);
	usleep(delay * 1000u);
	rc = obj_dir_ops.get(s, key, off, buf, len, got);
	stub_end(key);
	return rc;
}

static int stub_get_many(struct obj_store *s, struct obj_range *r, size_t n, unsigned parallel)
{
	unsigned delay = 0;
	int rc;

	for (size_t i = 0; i < n; i++)
		stub_begin(r[i].key, &delay);
	usleep(delay * 1000u); /* in parallel: the batch takes its slowest */
	rc = obj_dir_ops.get_many(s, r, n, parallel);
	for (size_t i = 0; i < n; i++)
		stub_end(r[i].key);
	return rc;
}

static int stub_started(int f, unsigned c)
{
	int v;

	pthread_mutex_lock(&stub.mu);
	v = stub.f[f].started[c];
	pthread_mutex_unlock(&stub.mu);
	return v;
}

/* GETs of chunk c of file f in flight now. */
static int stub_busy(int f, unsigned c)
{
	int v;

	pthread_mutex_lock(&stub.mu);
	v = stub.f[f].inflight[c];
	pthread_mutex_unlock(&stub.mu);
	return v;
}

/* GETs of file f in flight now, of chunks from on. */
static int stub_inflight(int f, unsigned from)
{
	int v = 0;

	pthread_mutex_lock(&stub.mu);
	for (unsigned c = from; c <= NCH; c++)
		v += stub.f[f].inflight[c];
	pthread_mutex_unlock(&stub.mu);
	return v;
}

/* ---- the volume, its files and reads through the hooks ---- */

static void make_file(const char *name)
{
	struct vol_obj o = tiert_make_file(S, name, FSIZE);

	vol_obj_cleanup(&o);
}

/* The stub's slot for name (after the pass named it), GETs delayed by ms. */
static int stub_file(const char *name, unsigned ms)
{
	char p[256];
	int i = (int)stub.n++;

	snprintf(p, sizeof(p), "%s/%s", cfg.root, name);
	ck_assert_int_eq(getxattr(p, TIER_FID_XATTR, stub.f[i].fid, 16), 16);
	stub.f[i].delay_ms = ms;
	return i;
}

struct rd {
	const char *name;
	uint64_t off;
	size_t len;
	bool ahead;            /* the store's read-ahead (read_ahead), else a client READ */
	int rc;
	pthread_t th;
};

static void *rd_run(void *arg)
{
	struct rd *r = arg;
	uint8_t *buf = malloc(r->len);
	char p[256];
	struct stat st;
	size_t got = 0;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", cfg.root, r->name);
	fd = open(p, O_RDONLY);
	r->rc = -EIO;
	if (fd >= 0 && buf && fstat(fd, &st) == 0) {
		if (r->ahead)
			r->rc = tier_ops()->read_ahead(T, cfg.fsid, fd, &st, r->off, buf, r->len, &got);
		else
			r->rc = tier_ops()->read(T, cfg.fsid, fd, &st, r->off, buf, r->len, &got, NULL);
		for (size_t i = 0; r->rc == 0 && i < r->len; i++)
			if (buf[i] != tiert_pat(r->off + i))
				r->rc = -EILSEQ;
		if (r->rc == 0 && got != r->len)
			r->rc = -EIO;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static void rd_start(struct rd *r)
{
	ck_assert_int_eq(pthread_create(&r->th, NULL, rd_run, r), 0);
}

static void rd_join(struct rd *r)
{
	pthread_join(r->th, NULL);
	ck_assert_int_eq(r->rc, 0);
}

static void rd_now(struct rd *r)
{
	rd_start(r);
	rd_join(r);
}

/* Wait (up to 10 s) until every GET of every stub file ended. */
/* No GET at the stub store and none in the tier's hands: a GET's chunk
 * enters the cache after the store answered it (the prefetch worker takes
 * the cache's lock again first), so the stub alone is not enough. */
static void settle(void)
{
	for (int i = 0; i < 1000; i++) {
		int n = 0;

		for (size_t f = 0; f < stub.n; f++)
			n += stub_inflight((int)f, 0);
		if (!n && tier_prefetch_idle(T))
			return;
		usleep(10000);
	}
	ck_abort_msg("GETs still in flight");
}

static void setup(void)
{
	struct tier_store *ts;

	tiert_vol_up("/tmp/aqtierc-XXXXXX", tmp, sizeof(tmp), &cfg, &tcfg, &S);
	clk.now = (long)time(NULL);
	tcfg.retrieval = TIER_RET_NEVER; /* every read streams from the store */
	tiert_tier_up(tmp, DAY, &clk, &tcfg, S, &T);
	/* the stub goes between the tier and its directory store */
	memset(stub.f, 0, sizeof(stub.f));
	stub.n = 0;
	stub.ops = obj_dir_ops;
	stub.ops.get = stub_get;
	stub.ops.get_many = stub_get_many;
	ts = tier_store_get(T);
	ck_assert_ptr_nonnull(ts);
	ts->obj->ops = &stub.ops;
	tier_store_put(ts);
	make_file("a.bin");
	make_file("b.bin");
	make_file("c.bin");
	make_file("d.bin");
	clk.now += 3 * DAY;
	ck_assert_int_eq(tier_pass(T), 0);
	ck_assert_int_eq(tier_start(T), 0); /* the prefetch workers */
}

static void teardown(void)
{
	tiert_down(tmp, S, T);
}

/* A client GET at the store holds the FAR lane to its share, not NEAR; a
 * FAR chunk a client stream asks for moves to NEAR; nothing is fetched
 * twice. Times: C0 (the client GET held at the store) 2.5 s, A 400 ms a
 * GET, B 100 ms: the checks leave 300 ms or more of margin. */
START_TEST(test_far_yields_to_client)
{
	int a = stub_file("a.bin", 400), b = stub_file("b.bin", 100), c = stub_file("c.bin", 2500);
	struct rd rc0 = { .name = "c.bin", .off = 0, .len = 4096 };
	struct rd ra0 = { .name = "a.bin", .off = 0, .len = MIB, .ahead = true };
	struct rd rb0 = { .name = "b.bin", .off = 0, .len = MIB };
	struct rd ra6 = { .name = "a.bin", .off = 6ull * MIB, .len = MIB };
	int far;

	/* a client read of C from its start: a GET that stays 2.5 s */
	rd_start(&rc0);
	for (int i = 0; i < 500 && !stub_started(c, 0); i++)
		usleep(10000);
	ck_assert_int_eq(stub_started(c, 0), 1);
	/* the store's read-ahead of A: its own GET (FAR's share), then A1..A7 queued FAR */
	rd_now(&ra0);
	ck_assert_int_eq(stub_started(a, 0), 1);
	usleep(150000);
	far = 0;
	for (unsigned k = 1; k < NCH; k++)
		far += stub_started(a, k);
	ck_assert_msg(far <= 1, "%d FAR GETs started while a client GET waits (share %d)", far, TIER_PF_FAR_SHARE);
	ck_assert_int_le(stub_inflight(a, 1), TIER_PF_FAR_SHARE);
	/* a client stream of B: B0 its own GET, B1..B7 NEAR, all at once */
	rd_now(&rb0);
	usleep(150000);
	for (unsigned k = 1; k < NCH; k++)
		ck_assert_msg(stub_started(b, k) == 1, "NEAR chunk B%u not started", k);
	ck_assert_int_le(stub_inflight(a, 1), TIER_PF_FAR_SHARE);
	/* a client stream reaches A6 (queued FAR): it GETs A6 at once, A7 moves to NEAR */
	ck_assert_int_eq(stub_started(a, 6), 0);
	rd_now(&ra6);
	ck_assert_int_eq(stub_started(a, 6), 1);
	usleep(150000);
	ck_assert_msg(stub_started(a, 7) == 1, "A7 did not move to NEAR");
	ck_assert_msg(stub_started(a, 5) == 0, "FAR A5 started while the client GET waits");
	ck_assert_int_eq(stub_inflight(c, 0), 1);
	/* C0 ends: FAR runs; every chunk was fetched once */
	rd_join(&rc0);
	settle();
	for (unsigned k = 0; k < NCH; k++) {
		ck_assert_msg(stub_started(a, k) == 1, "A%u fetched %d times", k, stub_started(a, k));
		ck_assert_msg(stub_started(b, k) == 1, "B%u fetched %d times", k, stub_started(b, k));
	}
	ck_assert_int_eq(stub_started(c, 0), 1);
}
END_TEST

/* A random client read of a chunk whose read-ahead GET is in flight waits
 * for it and reads what it brought: one GET, right bytes. */
START_TEST(test_random_read_joins)
{
	int d = stub_file("d.bin", 600);
	struct rd rd0 = { .name = "d.bin", .off = 0, .len = MIB, .ahead = true };
	struct rd rd3 = { .name = "d.bin", .off = 3ull * MIB + 4096, .len = 4096 };

	rd_now(&rd0); /* D1..D7 queued and, with no client at the store, fetched at once */
	for (int i = 0; i < 500 && !stub_started(d, 3); i++)
		usleep(10000);
	ck_assert_int_eq(stub_busy(d, 3), 1);
	rd_now(&rd3);
	settle();
	ck_assert_int_eq(stub_started(d, 3), 1);
}
END_TEST

/* GETs of file f started so far, all chunks. */
static int stub_total(int f)
{
	int v = 0;

	for (unsigned c = 0; c <= NCH; c++)
		v += stub_started(f, c);
	return v;
}

/* vol_read_nowait of [off, off + len) of o: its rc; when 0, every byte
 * checked against the pattern. */
static int nowait(struct vol_obj *o, uint64_t off, size_t len)
{
	static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
	uint8_t *buf = malloc(len);
	size_t got = 1;
	bool eof = true;
	int rc;

	ck_assert_ptr_nonnull(buf);
	rc = vol_read_nowait(o, &root, off, buf, len, &got, &eof);
	if (rc == 0) {
		ck_assert_uint_eq(got, len);
		ck_assert(!eof);
		for (size_t i = 0; i < len; i++)
			ck_assert_msg(buf[i] == tiert_pat(off + i), "byte %zu of [%" PRIu64 ", +%zu) wrong", i, off, len);
	} else {
		ck_assert_uint_eq(got, 0);
	}
	free(buf);
	return rc;
}

/* The store's read-ahead reads A2 of a.bin (stub file a; its GET) and
 * queues A3..A7 in the tier: wait until all are fetched. */
static void prefetch_a(int a)
{
	struct rd ra2 = { .name = "a.bin", .off = 2ull * MIB, .len = MIB, .ahead = true };

	rd_now(&ra2);
	for (int i = 0; i < 1000 && stub_total(a) < NCH - 2; i++)
		usleep(10000); /* queued chunks a worker has not taken yet */
	settle();
	for (unsigned k = 2; k < NCH; k++)
		ck_assert_msg(stub_started(a, k) == 1, "A%u not prefetched", k);
}

/* The SMB loop's first try of a READ (vol_read_nowait) of a cold range:
 * answered from the chunk cache when a prefetch fetched every chunk of it
 * (no GET, no worker: no -EAGAIN), -EAGAIN for a chunk not fetched yet
 * (without a GET of its own) and for a snapshot's file. */
START_TEST(test_nowait_cached)
{
	static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
	int a = stub_file("a.bin", 0);
	struct vol_export *e = vol_export_by_path(S, "/v0", 3);
	struct vol_obj dir, o, snap;
	int gets;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &dir), 0);
	ck_assert_int_eq(vol_lookup(&dir, &root, "a.bin", 5, &o), 0);
	/* nothing fetched: -EAGAIN, and the try itself GETs nothing */
	ck_assert_int_eq(nowait(&o, 2ull * MIB, MIB), -EAGAIN);
	ck_assert_int_eq(stub_total(a), 0);
	prefetch_a(a);
	gets = stub_total(a);
	/* whole chunks, a part of one, a range across two: from the cache */
	ck_assert_int_eq(nowait(&o, 2ull * MIB, MIB), 0);
	ck_assert_int_eq(nowait(&o, 3ull * MIB, MIB), 0);
	ck_assert_int_eq(nowait(&o, 4ull * MIB + 4096, 65536), 0);
	ck_assert_int_eq(nowait(&o, 5ull * MIB + MIB / 2, MIB), 0);
	ck_assert_int_eq(stub_total(a), gets);
	/* A0, A1 were not fetched: -EAGAIN, also for a range that ends in A2 */
	ck_assert_int_eq(nowait(&o, 0, MIB), -EAGAIN);
	ck_assert_int_eq(nowait(&o, MIB + MIB / 2, MIB), -EAGAIN);
	ck_assert_int_eq(stub_started(a, 0), 0);
	/* a snapshot's file goes to the worker (the tier knows what was cold
	 * then): the store's flag below /.snapshot, on the same object */
	snap = o;
	snap.snap = true;
	ck_assert_int_eq(nowait(&snap, 6ull * MIB, MIB), -EAGAIN);
	ck_assert_int_eq(stub_total(a), gets);
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&dir);
	vol_export_unref(e);
}
END_TEST

/* The chunk of a stub file the cache gives up next for a new one when no
 * slot is empty (the ready entry used longest ago: tier_cache_slot's
 * choice): its file's stub slot, *c its chunk; -1 when none is ready. */
static int next_out(unsigned *c)
{
	const struct tier_centry *best = NULL;
	int f;

	pthread_mutex_lock(&T->cmu);
	for (size_t i = 0; i < TIER_CACHE_CHUNKS; i++) {
		const struct tier_centry *e = &T->cache[i];

		if (e->state >= 2 && (!best || e->used < best->used))
			best = e;
	}
	f = best ? stub_slot(best->key, c) : -1;
	pthread_mutex_unlock(&T->cmu);
	return f;
}

/* A chunk a client READ took whole (a stream reads it once) is the first
 * the cache gives up, before the prefetched chunks no client read yet,
 * although those were fetched before it was read: an LRU by read time
 * gave up A3, the next chunk the stream wants. A part of a chunk read
 * (a random read may come back) counts as used now. */
START_TEST(test_cache_keeps_unread)
{
	static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
	int a = stub_file("a.bin", 0);
	struct vol_export *e = vol_export_by_path(S, "/v0", 3);
	struct vol_obj dir, o;
	unsigned c = 99;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &dir), 0);
	ck_assert_int_eq(vol_lookup(&dir, &root, "a.bin", 5, &o), 0);
	prefetch_a(a);                                           /* A2, then A3..A7 */
	ck_assert_int_eq(nowait(&o, 2ull * MIB, MIB), 0);       /* A2 read whole */
	ck_assert_int_eq(next_out(&c), a);
	ck_assert_msg(c == 2, "the cache gives up A%u next, not A2 (read whole)", c);
	ck_assert_int_eq(nowait(&o, 3ull * MIB, MIB), 0);       /* A3 too: A2 or A3 next */
	ck_assert_int_eq(next_out(&c), a);
	ck_assert_uint_le(c, 3);
	ck_assert_int_eq(nowait(&o, 4ull * MIB, MIB / 2), 0);   /* half of A4: used now, kept */
	ck_assert_int_eq(next_out(&c), a);
	ck_assert_uint_le(c, 3);
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&dir);
	vol_export_unref(e);
}
END_TEST

/* A cached cold range the retrieval policy would bring back (ON_READ; a
 * random read under DEFAULT) is a worker's read: -EAGAIN, recording
 * nothing; a streamed read under DEFAULT comes from the cache. */
START_TEST(test_nowait_policy)
{
	static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
	int a = stub_file("a.bin", 0);
	struct vol_export *e = vol_export_by_path(S, "/v0", 3);
	struct vol_obj dir, o;
	int gets;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &dir), 0);
	ck_assert_int_eq(vol_lookup(&dir, &root, "a.bin", 5, &o), 0);
	prefetch_a(a);
	gets = stub_total(a);
	tcfg.retrieval = TIER_RET_ON_READ;
	ck_assert_int_eq(tier_set_volumes(T, &tcfg, 1, NULL), 0);
	ck_assert_int_eq(nowait(&o, 3ull * MIB, MIB), -EAGAIN);
	tcfg.retrieval = TIER_RET_DEFAULT;
	ck_assert_int_eq(tier_set_volumes(T, &tcfg, 1, NULL), 0);
	ck_assert_int_eq(nowait(&o, 6ull * MIB + 8192, 4096), -EAGAIN); /* random: it would come back */
	ck_assert_int_eq(nowait(&o, 3ull * MIB, MIB), 0);               /* a stream's READ */
	ck_assert_int_eq(stub_total(a), gets);
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&dir);
	vol_export_unref(e);
}
END_TEST

/* tier_counters' read_cached_declined moves for a cold range the chunk
 * cache does not hold whole (the READ goes to a worker), not for one it
 * answers, nor for a snapshot's file (the store sends that to a worker
 * without asking the cache). */
START_TEST(test_read_cached_declined)
{
	static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
	int a = stub_file("a.bin", 0);
	struct vol_export *e = vol_export_by_path(S, "/v0", 3);
	struct vol_obj dir, o, snap;
	struct tier_counters tc;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &dir), 0);
	ck_assert_int_eq(vol_lookup(&dir, &root, "a.bin", 5, &o), 0);
	tier_counters(T, &tc);
	ck_assert_uint_eq(tc.read_cached_declined, 0);
	ck_assert_int_eq(nowait(&o, 2ull * MIB, MIB), -EAGAIN);        /* nothing fetched yet */
	tier_counters(T, &tc);
	ck_assert_uint_eq(tc.read_cached_declined, 1);
	prefetch_a(a);
	ck_assert_int_eq(nowait(&o, 2ull * MIB, MIB), 0);              /* held whole: answered */
	snap = o;
	snap.snap = true;
	ck_assert_int_eq(nowait(&snap, 6ull * MIB, MIB), -EAGAIN);     /* never asked */
	tier_counters(T, &tc);
	ck_assert_uint_eq(tc.read_cached_declined, 1);
	ck_assert_int_eq(nowait(&o, MIB + MIB / 2, MIB), -EAGAIN);     /* A1 missing: not whole */
	tier_counters(T, &tc);
	ck_assert_uint_eq(tc.read_cached_declined, 2);
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&dir);
	vol_export_unref(e);
}
END_TEST

/* Whether chunk c of stub file f is ready in the cache. */
static bool cached(int f, unsigned c)
{
	bool in = false;
	unsigned k;

	pthread_mutex_lock(&T->cmu);
	for (size_t i = 0; i < TIER_CACHE_CHUNKS && !in; i++)
		in = T->cache[i].state == 2 && stub_slot(T->cache[i].key, &k) == f && k == c;
	pthread_mutex_unlock(&T->cmu);
	return in;
}

/* tier_counters' prefetch_evicted_unread moves when the cache gives up
 * chunks a prefetch fetched that no read used (A4..A7 of a.bin, the oldest
 * once every cold chunk of nine more files was read ahead: 72, more than
 * the cache's 64); none before. */
START_TEST(test_prefetch_evicted_unread)
{
	static const char *const names[] = { "b.bin", "c.bin", "d.bin", "e.bin", "f.bin",
					     "g.bin", "h.bin", "i.bin", "j.bin" };
	int a = stub_file("a.bin", 0);
	struct rd part = { .name = "a.bin", .off = 3ull * MIB + 4096, .len = 4096 };
	struct tier_counters tc;
	uint64_t gone = 0;

	for (size_t i = 3; i < 9; i++)
		make_file(names[i]);
	clk.now += 3 * DAY;
	ck_assert_int_eq(tier_pass(T), 0);
	prefetch_a(a);                                   /* A3..A7 by the prefetch, unread */
	rd_now(&part);                                   /* A3 read (a part: kept as used now) */
	settle();
	tier_counters(T, &tc);
	ck_assert_uint_eq(tc.prefetch_evicted_unread, 0);
	for (unsigned c = 4; c < NCH; c++)
		ck_assert_msg(cached(a, c), "A%u not cached", c);
	for (size_t i = 0; i < 9; i++)
		for (unsigned c = 0; c < NCH; c++) { /* the whole chunks (the tail stays hot) */
			struct rd r = { .name = names[i], .off = (uint64_t)c * MIB, .len = MIB, .ahead = true };

			rd_now(&r);
		}
	settle();
	for (unsigned c = 4; c < NCH; c++)
		gone += !cached(a, c);
	tier_counters(T, &tc);
	ck_assert_uint_gt(gone, 0);
	ck_assert_uint_ge(tc.prefetch_evicted_unread, gone);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tier_cache");
	TCase *tc = tcase_create("demand");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_far_yields_to_client);
	tcase_add_test(tc, test_random_read_joins);
	tcase_add_test(tc, test_nowait_cached);
	tcase_add_test(tc, test_nowait_policy);
	tcase_add_test(tc, test_cache_keeps_unread);
	tcase_add_test(tc, test_read_cached_declined);
	tcase_add_test(tc, test_prefetch_evicted_unread);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
