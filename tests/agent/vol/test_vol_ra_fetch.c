/* test_vol_ra_fetch: cross-file read-ahead in the volume store
 * (agent/vol/vol_ra_fetch.c, issue 23): a READ from a file's start
 * prefetches the next depthFiles files that exist, a READ of them counts
 * hits, a film played again is fetched again, the depth ramps up with a
 * stream's run, a write forgets them (wasted), the caps per volume and per node
 * hold (a volume at its cap waits; at the node's cap the fuller volume
 * gives way), a volume without readAhead prefetches nothing, and neither
 * does a name without successors. The worker pool (with a slow fake cold
 * tier that counts the reads in flight): several chunks are read at once,
 * a second volume gets a worker while the first has a long queue, a client
 * READ takes over a chunk whose prefetch waits behind other demand, the cap
 * holds with the workers racing, and a stop with reads in flight and jobs
 * queued or parked in QoS frees everything (run under ASan). Needs root
 * (open_by_handle_at). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_ra.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FRAME (256u << 10)

static struct aqt_store ts;
static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
static char *buf;

/* export 0 and 1 CROSS_FILE_SEQUENTIAL depth 2, export 2 without readAhead;
 * f0001..f0005.bin of FRAME bytes and solo.bin in each */
static void setup(void)
{
	char p[128];

	aqt_store_init(&ts, 3,
		       &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 300, .capacity = 64 << 20,
						 .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 9 });
	buf = calloc(1, FRAME);
	ck_assert_ptr_nonnull(buf);
	for (int v = 0; v < 3; v++) {
		for (int i = 1; i <= 5; i++) {
			snprintf(p, sizeof(p), "f%04d.bin", i);
			aqt_store_put(&ts, v, p, FRAME);
		}
		aqt_store_put(&ts, v, "solo.bin", FRAME);
		if (v < 2)
			ts.cfg[v].read_ahead = (struct api_intent_read_ahead){ .mode = API_INTENT_RA_CROSS_FILE,
									      .depth_files = 2 };
	}
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 3), 0);
	ck_assert_int_eq(vol_store_qos_start(ts.store), 0);
	/* these cases look at what one trigger of full depth does; the ramp
	 * (a stream's depth growing with its run) has test_ramp */
	vol_store_set_read_ahead_ramp(ts.store, false);
}

static void teardown(void)
{
	if (ts.store) /* test_stop_in_flight freed it */
		vol_store_qos_stop(ts.store);
	aqt_store_cleanup(&ts);
	free(buf);
}

static void client_write(int v, const char *name)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[v].path, strlen(ts.cfg[v].path));
	struct vol_obj dir, f;
	int committed;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &dir), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_lookup(&dir, &root, name, strlen(name), &f), 0);
	ck_assert_int_eq(vol_write(&f, &root, 0, "x", 1, 2, &committed), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&dir);
}

START_TEST(test_prefetch_hits_wasted)
{
	struct vol_stats st;

	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME); /* f0002, f0003 */
	/* a READ of a prefetched file is a hit; its whole read starts f0004 */
	aqt_store_read(&ts, 0, "f0002.bin", 0, FRAME);
	ck_assert_uint_ge(aqt_store_stats(&ts, 0).ra_hits, 1);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 3 * FRAME), 3 * FRAME); /* f0003 was there: only f0004 */
	/* written before it was read: forgotten, its bytes wasted */
	client_write(0, "f0004.bin");
	st = aqt_store_stats(&ts, 0);
	ck_assert_uint_eq(st.ra_wasted, FRAME);
	/* no successor: nothing */
	aqt_store_read(&ts, 0, "solo.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 3 * FRAME);
}
END_TEST

/* A film played again: the files the first play read whole are fetched
 * again (not taken as still cached), and only then are their READs hits. */
START_TEST(test_replay)
{
	uint64_t hits;

	aqt_store_read(&ts, 0, "f0004.bin", 0, 4096);    /* f0005: the last one */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, FRAME), FRAME);
	aqt_store_read(&ts, 0, "f0005.bin", 0, FRAME);   /* read whole: a hit */
	hits = aqt_store_stats(&ts, 0).ra_hits;
	ck_assert_uint_ge(hits, 1);
	usleep(200000);                                          /* the job passes f0005's end */
	aqt_store_read(&ts, 0, "f0004.bin", 0, 4096);    /* again: f0005 is fetched again */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME);
	aqt_store_read(&ts, 0, "f0005.bin", 0, FRAME);
	ck_assert_uint_gt(aqt_store_stats(&ts, 0).ra_hits, hits);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, 0);
}
END_TEST

/* The ramp: a film's first frame asks for one file at its first READ (it
 * is opened), a prefetched one for one more than its run, up to depthFiles
 * (here 3). */
START_TEST(test_ramp)
{
	vol_store_set_read_ahead_ramp(ts.store, true);
	ts.cfg[0].read_ahead.depth_files = 3;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 3), 0);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);    /* run 0, from its start: f0002 only */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, FRAME), FRAME);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), FRAME);
	aqt_store_read(&ts, 0, "f0001.bin", 4096, FRAME - 4096); /* ... to its end: nothing new */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), FRAME);
	aqt_store_read(&ts, 0, "f0002.bin", 0, 4096);    /* run 1: f0003, f0004 */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 3 * FRAME), 3 * FRAME);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 3 * FRAME);
	aqt_store_read(&ts, 0, "f0003.bin", 0, 4096);    /* run 2: up to f0006 (none): f0005 */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 4 * FRAME), 4 * FRAME);
	aqt_store_read(&ts, 0, "f0002.bin", FRAME - 4096, 4096); /* its end, run 1 again: nothing new */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 4 * FRAME);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, 0);
}
END_TEST

START_TEST(test_off_and_no_match)
{
	aqt_store_read(&ts, 2, "f0001.bin", 0, 4096);    /* no readAhead */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 2, 0), 0);
	aqt_store_read(&ts, 0, "f0005.bin", 0, 4096);    /* the last frame */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);
	aqt_store_read(&ts, 0, "f0003.bin", 4096, 4096); /* not from the start, not to the end */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_hits, 0);
}
END_TEST

START_TEST(test_volume_cap)
{
	/* room for one frame and a bit: the second waits for the client */
	vol_store_set_read_ahead(ts.store, 64 << 20, FRAME + FRAME / 4);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, FRAME), FRAME);
	/* half of f0002 read: still no room for f0003 */
	aqt_store_read(&ts, 0, "f0002.bin", 0, FRAME / 2);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), FRAME);
	/* f0002 read to its end: it leaves the cache, and that READ starts f0003 */
	aqt_store_read(&ts, 0, "f0002.bin", FRAME / 2, FRAME / 2);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, 0);
}
END_TEST

START_TEST(test_node_cap_fair)
{
	/* the node holds 2.5 frames: volume 0 takes two, volume 1 then gets
	 * one by taking volume 0's oldest (the fuller volume gives way) */
	vol_store_set_read_ahead(ts.store, 2 * FRAME + FRAME / 2, 2 * FRAME);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME);
	aqt_store_read(&ts, 1, "f0001.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 1, FRAME), FRAME);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, FRAME);
	ck_assert_uint_eq(aqt_store_stats(&ts, 1).ra_wasted, 0);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 1, 0), FRAME); /* 1 vs 1 frame: no more room */
}
END_TEST

START_TEST(test_qos_charged)
{
	struct vol_export_cfg cfg[3];
	struct vol_stats st;

	/* 8 MiB/s (a bucket of 800 KiB): the two frames' prefetch is charged
	 * like reads, with tokens no client waits for */
	memcpy(cfg, ts.cfg, sizeof(cfg));
	cfg[0].qos.bytes_per_s = 8 << 20;
	ck_assert_int_eq(vol_store_set(ts.store, cfg, 3), 0);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME);
	st = aqt_store_stats(&ts, 0);
	ck_assert_uint_ge(st.qos.admitted_bytes, 2 * FRAME);
	ck_assert_uint_ge(st.qos.admitted_bytes, st.ra_bytes);  /* every prefetched byte charged */
}
END_TEST

static void held_release(void *arg, struct qos_item *it)
{
	(void)it;
	__atomic_store_n((int *)arg, 1, __ATOMIC_SEQ_CST);
}

/* A volume at its limit with a client's request waiting for tokens: the
 * prefetch stands down (it would take the tokens from the client's own
 * READs), charging nothing and parking nothing; once nobody waits, the
 * next READ of the film prefetches again. */
START_TEST(test_qos_client_waits)
{
	struct vol_export_cfg cfg[3];
	struct vol_export *e;
	struct qos_item it = { .release = held_release };
	int released = 0;

	memcpy(cfg, ts.cfg, sizeof(cfg));
	cfg[0].qos.bytes_per_s = 1 << 20;
	ck_assert_int_eq(vol_store_set(ts.store, cfg, 3), 0);
	e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	ck_assert_ptr_nonnull(e);
	it.release_arg = &released;
	/* the bucket holds 100 ms (100 KiB): the first 512 KiB goes into
	 * debt, the second waits about half a second */
	ck_assert_int_eq(vol_admit_export(e, 7, QOS_READ, 512 << 10, &it), QOS_ADMIT);
	ck_assert_int_eq(vol_admit_export(e, 7, QOS_READ, 512 << 10, &it), QOS_PARKED);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);                          /* stood down */
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).qos.admitted_bytes, 1 << 20); /* charged nothing */
	for (int i = 0; i < 1000 && !__atomic_load_n(&released, __ATOMIC_SEQ_CST); i++)
		usleep(10000);
	ck_assert_int_eq(released, 1);
	vol_export_unref(e);
	aqt_store_read(&ts, 0, "f0002.bin", 0, 4096);                   /* the film goes on */
	ck_assert_uint_gt(aqt_ra_wait(&ts, 0, FRAME), 0);
}
END_TEST

/* remove, rename and truncate of a prefetched, unread file: forgotten,
 * wasted; and a later prefetch does not count them again */
START_TEST(test_forget)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	struct vol_sattr cut = { .set_size = true, .size = 10 };
	struct vol_obj dir, f;

	ck_assert_int_eq(vol_root(e, &dir), 0);
	vol_export_unref(e);
	vol_store_set_read_ahead(ts.store, 64 << 20, 64 << 20);
	ts.cfg[0].read_ahead.depth_files = 3;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 3), 0);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 3 * FRAME), 3 * FRAME); /* f0002..f0004 */
	ck_assert_int_eq(vol_remove(&dir, &root, "f0002.bin", 9), 0);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, FRAME);
	ck_assert_int_eq(vol_rename(&dir, "f0003.bin", 9, &dir, "g0003.bin", 9, &root), 0);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, 2 * FRAME);
	ck_assert_int_eq(vol_lookup(&dir, &root, "f0004.bin", 9, &f), 0);
	ck_assert_int_eq(vol_setattr(&f, &root, &cut), 0);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, 3 * FRAME);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&dir);
}
END_TEST


/* ---- a slow cold tier: every range longer than 8 KiB is cold (the
 * tests' client READs are 4 KiB and go the plain way), and a read of it
 * (a GET) takes fake.delay_ms (a client's: demand_ms, when set); it counts
 * GETs in flight and notes who read. Like the tier's chunk cache, what a
 * prefetch brought is kept until a client READ takes it (no GET then); a
 * client READ's GET leaves nothing behind, so a prefetch of the same bytes
 * after it is a second GET. The test's thread is the client. */
static struct {
	pthread_mutex_t mu;
	unsigned delay_ms, demand_ms, inflight, max_inflight, started, done;
	unsigned demand, pf_during_demand; /* client GETs now; prefetch GETs started meanwhile */
	unsigned client_gets;  /* GETs of the test's thread */
	uint64_t order[64];    /* the fsid of each read, in the order started */
	pthread_t client;
	unsigned ncached;
	struct { uint64_t ino, off; } cached[64];
} fake = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* (ino, off) is in the fake's cache: take it out when take (mu held). */
static bool fake_cached(uint64_t ino, uint64_t off, bool take)
{
	for (unsigned i = 0; i < fake.ncached; i++)
		if (fake.cached[i].ino == ino && fake.cached[i].off == off) {
			if (take)
				fake.cached[i] = fake.cached[--fake.ncached];
			return true;
		}
	return false;
}

static int fake_cold(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)st, (void)off;
	return len > 8192;
}

static int fake_read(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *b, size_t len,
		     size_t *got, void **swap)
{
	bool client = pthread_equal(pthread_self(), fake.client) != 0;
	unsigned ms;

	(void)arg, (void)st, (void)swap;
	if (!fake_cold(arg, fsid, st, off, len))
		return 1; /* hot: the store reads it */
	pthread_mutex_lock(&fake.mu);
	if (fake_cached((uint64_t)st->st_ino, off, client)) {
		pthread_mutex_unlock(&fake.mu);
		*got = pread(fd, b, len, (off_t)off) == (ssize_t)len ? len : 0;
		return 0;
	}
	ms = client && fake.demand_ms ? fake.demand_ms : fake.delay_ms;
	if (client) {
		fake.demand++;
		fake.client_gets++;
	} else if (fake.demand)
		fake.pf_during_demand++;
	if (fake.started < 64)
		fake.order[fake.started] = fsid;
	fake.started++;
	if (++fake.inflight > fake.max_inflight)
		fake.max_inflight = fake.inflight;
	pthread_mutex_unlock(&fake.mu);
	usleep(ms * 1000u);
	*got = pread(fd, b, len, (off_t)off) == (ssize_t)len ? len : 0;
	pthread_mutex_lock(&fake.mu);
	if (client)
		fake.demand--;
	else if (fake.ncached < 64)
		fake.cached[fake.ncached++] = (typeof(fake.cached[0])){ (uint64_t)st->st_ino, off };
	fake.inflight--;
	fake.done++;
	pthread_mutex_unlock(&fake.mu);
	return 0;
}

static int fake_write_begin(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)fd, (void)st, (void)off, (void)len;
	return 0;
}

static void fake_write_end(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)fd, (void)st, (void)off, (void)len;
}

static const struct vol_tier_ops fake_tier = {
	.read = fake_read, .cold = fake_cold, .write_begin = fake_write_begin, .write_end = fake_write_end,
};

static void fake_install(unsigned delay_ms)
{
	pthread_mutex_lock(&fake.mu);
	fake.delay_ms = delay_ms;
	fake.demand_ms = fake.demand = fake.pf_during_demand = fake.ncached = fake.client_gets = 0;
	fake.client = pthread_self();
	fake.inflight = fake.max_inflight = fake.started = fake.done = 0;
	pthread_mutex_unlock(&fake.mu);
	vol_store_set_tier(ts.store, &fake_tier, NULL);
}

static unsigned fake_get(const unsigned *field)
{
	unsigned v;

	pthread_mutex_lock(&fake.mu);
	v = *field;
	pthread_mutex_unlock(&fake.mu);
	return v;
}

/* Wait (20 s at most) until the fake finished n reads. */
static void fake_wait_done(unsigned n)
{
	for (int i = 0; i < 2000 && fake_get(&fake.done) < n; i++)
		usleep(10000);
	ck_assert_uint_ge(fake_get(&fake.done), n);
}

static void set_depth(int v, int depth)
{
	ts.cfg[v].read_ahead.depth_files = depth;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 3), 0);
}

/* 4 workers (the default): the four next frames are read at once, not
 * one after the other; one worker reads one at a time */
START_TEST(test_workers_concurrent)
{
	fake_install(300);
	set_depth(0, 4);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	fake_wait_done(4);                                       /* f0002..f0005 */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 4 * FRAME), 4 * FRAME);
	ck_assert_uint_ge(fake_get(&fake.max_inflight), 2);
	ck_assert_uint_le(fake_get(&fake.max_inflight), VOL_RA_WORKERS);
}
END_TEST

START_TEST(test_one_worker)
{
	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, 0), -EINVAL);
	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, VOL_RA_WORKERS_MAX + 1), -EINVAL);
	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, 1), 0);
	fake_install(100);
	set_depth(0, 4);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	fake_wait_done(4);
	ck_assert_uint_eq(fake_get(&fake.max_inflight), 1);
	/* the pool runs: its size is fixed now */
	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, 4), -EBUSY);
}
END_TEST

/* Volume 0 queues 16 frames behind 2 workers; volume 1's prefetch starts
 * with the next worker that comes free, long before volume 0's queue is
 * through (all on one queue, it would come after the 16) */
START_TEST(test_fair)
{
	char p[128];
	unsigned first1 = 64, n;

	for (int i = 6; i <= 17; i++) { /* f0006..f0017: 16 successors of f0001 */
		int fd;

		snprintf(p, sizeof(p), "%s/v0/f%04d.bin", ts.dir, i);
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, buf, FRAME), (ssize_t)FRAME);
		close(fd);
	}
	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, 2), 0);
	fake_install(150);
	ts.cfg[0].read_ahead.depth_files = 16;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 3), 0);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	for (int i = 0; i < 2000 && fake_get(&fake.started) < 1; i++)
		usleep(5000);
	ck_assert_uint_ge(fake_get(&fake.started), 1);
	aqt_store_read(&ts, 1, "f0001.bin", 0, 4096);    /* f0002, f0003 of volume 1 */
	fake_wait_done(18);
	pthread_mutex_lock(&fake.mu);
	n = fake.started;
	for (unsigned i = 0; i < n && i < 64; i++)
		if (fake.order[i] == ts.cfg[1].fsid && first1 == 64)
			first1 = i;
	pthread_mutex_unlock(&fake.mu);
	ck_assert_uint_eq(n, 18);
	ck_assert_uint_lt(first1, 8);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 1, 2 * FRAME), 2 * FRAME);
}
END_TEST

/* Wait (20 s at most) until the fake has n GETs in flight. */
static void fake_wait_inflight(unsigned n)
{
	for (int i = 0; i < 4000 && fake_get(&fake.inflight) < n; i++)
		usleep(5000);
	ck_assert_uint_ge(fake_get(&fake.inflight), n);
}

/* f0006..f(last) in volume v, FRAME bytes each */
static void more_frames(int v, int last)
{
	char p[128];

	for (int i = 6; i <= last; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/v%d/f%04d.bin", ts.dir, v, i);
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, buf, FRAME), (ssize_t)FRAME);
		close(fd);
	}
}

/* A client READ of a file whose prefetch is on its way joins it: it waits
 * for that GET and reads what it brought, no second GET */
START_TEST(test_demand_joins)
{
	fake_install(400);
	set_depth(0, 1);
	aqt_store_read(&ts, 0, "f0004.bin", 0, 4096);    /* f0005's GET starts */
	fake_wait_inflight(1);
	aqt_store_read(&ts, 0, "f0005.bin", 0, FRAME);   /* cold, while it is in flight */
	ck_assert_uint_eq(fake_get(&fake.started), 1);
	ck_assert_uint_ge(aqt_store_stats(&ts, 0).ra_hits, 1);
}
END_TEST

/* A file the client reads before the prefetch gets to it is not fetched
 * again by the prefetch (that would be a second GET): one worker, f0003
 * on its way, the client reads f0004 itself; the job goes on with f0005 */
START_TEST(test_demand_overtakes)
{
	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, 1), 0);
	fake_install(300);
	set_depth(0, 3);
	aqt_store_read(&ts, 0, "f0002.bin", 0, 4096);    /* f0003, f0004, f0005 queued */
	fake_wait_inflight(1);                                   /* f0003 */
	aqt_store_read(&ts, 0, "f0004.bin", 0, FRAME);   /* the client's own GET */
	fake_wait_done(3);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 2 * FRAME); /* f0003 and f0005 */
	ck_assert_uint_eq(fake_get(&fake.started), 3);
}
END_TEST

/* Demand first: 16 frames queued for prefetch on 4 workers; a client READ
 * of a file nothing prefetched goes to the tier while they are fetched.
 * While it is there, prefetch GETs start one at a time (VOL_RA_DEMAND_SHARE),
 * not on every worker: the READ does not queue at the store behind them.
 * 600 ms of client GET and 200 ms per prefetch GET: at most ~4 start
 * meanwhile (without the priority, the 12 still queued all would). */
START_TEST(test_demand_first)
{
	unsigned before;

	more_frames(0, 17);
	fake_install(200);
	fake.demand_ms = 600;
	set_depth(0, 16);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	fake_wait_inflight(VOL_RA_WORKERS);
	before = fake_get(&fake.started);
	aqt_store_read(&ts, 0, "solo.bin", 0, FRAME);
	ck_assert_uint_le(before, 8);                            /* most were still queued */
	ck_assert_uint_le(fake_get(&fake.pf_during_demand), 5);
	fake_wait_done(17);                                      /* and then they all come */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 16 * FRAME), 16 * FRAME);
}
END_TEST

static void *read_solo(void *arg)
{
	(void)arg;
	aqt_store_read(&ts, 0, "solo.bin", 0, FRAME);
	return NULL;
}

/* A client READ of a chunk whose prefetch waits at the gate (another
 * client's READ is at the tier, a first prefetch GET is there too) takes
 * it over: it fetches it at once, as demand, instead of waiting behind
 * the other client's demand and then for the prefetch's own GET (a film's
 * second frame behind the other film's first). 2 workers, 1 s per
 * prefetch GET, 100 ms per GET of the test's thread: f0003's READ takes
 * ~100 ms (waiting, it took ~1.8 s: f0002's GET, then f0003's), the test's
 * thread did that GET, and the worker did not fetch f0003 a second time. */
START_TEST(test_demand_takes_gated)
{
	struct timespec t0, t1;
	pthread_t other;
	double ms;

	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, 2), 0);
	fake_install(1000);
	fake.demand_ms = 100;
	set_depth(0, 2);
	ck_assert_int_eq(pthread_create(&other, NULL, read_solo, NULL), 0); /* another client, at the tier */
	fake_wait_inflight(1);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);    /* f0002 through the gate (one), f0003 held */
	fake_wait_inflight(2);
	usleep(200000);                                          /* f0003's worker comes to the gate */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	aqt_store_read(&ts, 0, "f0003.bin", FRAME / 4, FRAME / 2); /* inside it: no trigger of its own */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_msg(ms < 700, "f0003's READ waited %.0f ms for the prefetch held at the gate", ms);
	ck_assert_uint_eq(fake_get(&fake.client_gets), 1);
	ck_assert_int_eq(pthread_join(other, NULL), 0);
	fake_wait_done(3);                                       /* solo, f0002, f0003 (the client's) */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, FRAME), FRAME);    /* f0002 only: f0003 was not prefetched */
	ck_assert_uint_eq(fake_get(&fake.started), 3);
}
END_TEST

/* A tier that tells read-ahead reads apart (vol_tier_ops.read_ahead, whose
 * GETs yield to clients' at the tier) gets the prefetch there, the client's
 * READs at read (a 4 KiB client READ is hot here: it never reaches it). */
static unsigned ra_via_ahead, ra_pf_via_read;

static int fake_read_counted(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *b,
			     size_t len, size_t *got, void **swap)
{
	if (!pthread_equal(pthread_self(), fake.client) && fake_cold(arg, fsid, st, off, len)) {
		pthread_mutex_lock(&fake.mu);
		ra_pf_via_read++;
		pthread_mutex_unlock(&fake.mu);
	}
	return fake_read(arg, fsid, fd, st, off, b, len, got, swap);
}

static int fake_read_ahead(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *b,
			   size_t len, size_t *got)
{
	pthread_mutex_lock(&fake.mu);
	ra_via_ahead++;
	pthread_mutex_unlock(&fake.mu);
	return fake_read(arg, fsid, fd, st, off, b, len, got, NULL);
}

START_TEST(test_read_ahead_op)
{
	static const struct vol_tier_ops tier2 = {
		.read = fake_read_counted, .read_ahead = fake_read_ahead, .cold = fake_cold,
		.write_begin = fake_write_begin, .write_end = fake_write_end,
	};

	fake_install(50);
	ra_via_ahead = ra_pf_via_read = 0;
	vol_store_set_tier(ts.store, &tier2, NULL);
	set_depth(0, 2);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);    /* f0002, f0003 prefetched */
	fake_wait_done(2);
	ck_assert_uint_eq(fake_get(&ra_via_ahead), 2);
	ck_assert_uint_eq(fake_get(&ra_pf_via_read), 0);
}
END_TEST

/* the volume's cap with four workers racing for it: two frames, not four */
START_TEST(test_cap_workers)
{
	fake_install(200);
	vol_store_set_read_ahead(ts.store, 64 << 20, 2 * FRAME);
	set_depth(0, 4);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	fake_wait_done(2);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 2 * FRAME);
	ck_assert_uint_eq(fake_get(&fake.started), 2);
}
END_TEST

/* the store goes while reads are in flight and jobs wait in the queues:
 * the workers end, everything is freed (ASan's leak check runs at this
 * test's exit) */
START_TEST(test_stop_in_flight)
{
	struct vol_export_cfg cfg[3];

	memcpy(cfg, ts.cfg, sizeof(cfg));
	cfg[0].read_ahead.depth_files = 4;
	cfg[1].read_ahead.depth_files = 4;
	ck_assert_int_eq(vol_store_set(ts.store, cfg, 3), 0);
	ck_assert_int_eq(vol_store_set_read_ahead_workers(ts.store, 2), 0);
	fake_install(400);
	aqt_store_read(&ts, 1, "f0001.bin", 0, 4096);
	aqt_store_read(&ts, 0, "f0001.bin", 0, 4096);
	for (int i = 0; i < 2000 && fake_get(&fake.inflight) < 2; i++)
		usleep(5000);
	ck_assert_uint_ge(fake_get(&fake.inflight), 2);          /* both workers reading, jobs queued */
	aqt_store_cleanup(&ts);                                  /* QoS stops after the workers */
	ck_assert_uint_eq(fake_get(&fake.inflight), 0);
	ck_assert_uint_eq(fake_get(&fake.done), fake_get(&fake.started));
	ck_assert_uint_lt(fake_get(&fake.started), 8);           /* it stopped: not all of them */
}
END_TEST

static Suite *ra_fetch_suite(void)
{
	Suite *s = suite_create("vol_ra_fetch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120); /* a loaded machine, sanitizers */
	tcase_add_test(tc, test_prefetch_hits_wasted);
	tcase_add_test(tc, test_replay);
	tcase_add_test(tc, test_ramp);
	tcase_add_test(tc, test_off_and_no_match);
	tcase_add_test(tc, test_volume_cap);
	tcase_add_test(tc, test_node_cap_fair);
	tcase_add_test(tc, test_qos_charged);
	tcase_add_test(tc, test_qos_client_waits);
	tcase_add_test(tc, test_forget);
	tcase_add_test(tc, test_workers_concurrent);
	tcase_add_test(tc, test_one_worker);
	tcase_add_test(tc, test_fair);
	tcase_add_test(tc, test_cap_workers);
	tcase_add_test(tc, test_stop_in_flight);
	tcase_add_test(tc, test_demand_joins);
	tcase_add_test(tc, test_demand_overtakes);
	tcase_add_test(tc, test_demand_first);
	tcase_add_test(tc, test_demand_takes_gated);
	tcase_add_test(tc, test_read_ahead_op);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(ra_fetch_suite());
}
