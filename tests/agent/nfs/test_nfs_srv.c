/* test_nfs_srv: the public server API in-process (agent/nfs/nfs_srv.h): start on
 * port 0, MNT + GETATTR + CREATE over a raw socket, counters, and
 * vol_store_set while serving: a read-only switch answers ROFS, a
 * removed export's handles answer STALE, all without restart; one worker
 * serving as loop and server, the loop role passing on before a call is
 * served, replies batched per connection (leader/follower); a deferred cold
 * READ resumes where it stopped, and one the tier's chunk cache holds is
 * answered by the worker, not the cold pool. Needs root. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs/xdr.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts; /* ours: the server borrows ts.store */
static struct nfs_srv *srv;
static int fd = -1;
static uint32_t xid = 1;

static int connect_srv(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	int s;

	a.sin_port = htons(nfs_srv_port(srv));
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	s = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	return s;
}

static void setup_workers(unsigned workers)
{
	aqt_store_init(&ts, 2,
		       &(struct aqt_store_spec){ .id_prefix = "v", .fsid = 7, .capacity = 1 << 30,
						 .clients = "127.0.0.1", .key_byte = 3 });
	ts.cfg[0].qos.ops_per_s = workers == 1 ? 20 : 0; /* test_one_worker */
	ck_assert_int_eq(nfs_srv_new("127.0.0.1:0", ts.store, workers, &srv), 0);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	ck_assert_int_eq(nfs_srv_start(srv), 0);
	ck_assert_uint_ne(nfs_srv_port(srv), 0);
	fd = connect_srv();
}

static void setup(void)
{
	setup_workers(2);
}

static void setup_one(void)
{
	setup_workers(1);
}

static void teardown(void)
{
	close(fd);
	nfs_srv_free(srv);
	aqt_store_cleanup(&ts);
}

/* Send one call with AUTH_SYS uid 0; return the reply body after the
 * accept_stat word in *out (caller frees). Returns accept_stat. */
/* Append one call record (AUTH_SYS uid 0) of xid ++xid to b. */
static void put_call(struct ut_buf *b, uint32_t prog, uint32_t proc, const struct ut_buf *args)
{
	size_t at = b->len;

	xdr_put_u32(b, 0);           /* mark, set below */
	xdr_put_u32(b, ++xid);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, prog);
	xdr_put_u32(b, 3);
	xdr_put_u32(b, proc);
	xdr_put_u32(b, 1);           /* AUTH_SYS */
	xdr_put_u32(b, 20);
	xdr_put_u32(b, 0);           /* stamp */
	xdr_put_u32(b, 0);           /* machine "" */
	xdr_put_u32(b, 0);           /* uid */
	xdr_put_u32(b, 0);           /* gid */
	xdr_put_u32(b, 0);           /* gids */
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	if (args)
		xdr_put_fixed(b, args->p, args->len);
	ut_buf_set_be32(b, at, 0x80000000u | (uint32_t)(b->len - at - 4));
}

static int rpc(uint32_t prog, uint32_t proc, const struct ut_buf *args, struct xdr_cur *out, uint8_t **mem)
{
	struct ut_buf b;
	uint8_t m[4], *body;
	uint32_t len;
	struct xdr_cur c;
	int st;

	ut_buf_init(&b, 4096);
	put_call(&b, prog, proc, args);
	ck_assert_int_eq(send(fd, ut_buf_bytes(&b), b.len, 0), (ssize_t)b.len);
	ut_buf_cleanup(&b);
	ck_assert_int_eq(recv(fd, m, 4, MSG_WAITALL), 4);
	len = ((uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3]) & 0x7fffffff;
	body = malloc(len);
	ck_assert_int_eq(recv(fd, body, len, MSG_WAITALL), (ssize_t)len);
	xdr_cur_init(&c, body, len);
	ck_assert_uint_eq(xdr_u32(&c), xid);
	ck_assert_uint_eq(xdr_u32(&c), 1);
	ck_assert_uint_eq(xdr_u32(&c), 0);
	xdr_u32(&c);
	xdr_u32(&c);
	st = (int)xdr_u32(&c);
	*out = c;
	*mem = body;
	return st;
}

/* A call whose reply is a status (OK expected) and then a file handle:
 * MOUNT MNT, NFSv3 LOOKUP. Consumes a. */
static void call_fh(uint32_t prog, uint32_t proc, struct ut_buf *a, uint8_t *fh, uint32_t *fhlen)
{
	struct xdr_cur c;
	uint8_t *mem;
	const uint8_t *p;

	ck_assert_int_eq(rpc(prog, proc, a, &c, &mem), 0);
	ck_assert_uint_eq(xdr_u32(&c), 0);
	p = xdr_opaque(&c, 64, fhlen);
	ck_assert_ptr_nonnull(p);
	memcpy(fh, p, *fhlen);
	free(mem);
	ut_buf_cleanup(a);
}

static void mnt(const char *path, uint8_t *fh, uint32_t *fhlen)
{
	struct ut_buf a;

	ut_buf_init(&a, 1024);
	xdr_put_opaque(&a, path, (uint32_t)strlen(path));
	call_fh(100005, 1, &a, fh, fhlen);
}

static uint32_t getattr(const uint8_t *fh, uint32_t fhlen)
{
	struct ut_buf a;
	struct xdr_cur c;
	uint8_t *mem;
	uint32_t st;

	ut_buf_init(&a, 1024);
	xdr_put_opaque(&a, fh, fhlen);
	ck_assert_int_eq(rpc(100003, 1, &a, &c, &mem), 0);
	st = xdr_u32(&c);
	free(mem);
	ut_buf_cleanup(&a);
	return st;
}

static uint32_t create(const uint8_t *fh, uint32_t fhlen, const char *name)
{
	struct ut_buf a;
	struct xdr_cur c;
	uint8_t *mem;
	uint32_t st;
	int i;

	ut_buf_init(&a, 1024);
	xdr_put_opaque(&a, fh, fhlen);
	xdr_put_opaque(&a, name, (uint32_t)strlen(name));
	xdr_put_u32(&a, 0); /* UNCHECKED */
	for (i = 0; i < 6; i++)
		xdr_put_u32(&a, 0);
	ck_assert_int_eq(rpc(100003, 8, &a, &c, &mem), 0);
	st = xdr_u32(&c);
	free(mem);
	ut_buf_cleanup(&a);
	return st;
}

/* A stand-in cold tier that calls every range cold and counts how often the
 * server asks (cold) and reads (read). */
static atomic_uint tier_checks, tier_reads;

static int fake_read(void *arg, uint64_t fsid, int file, const struct stat *st, uint64_t off, void *buf, size_t len,
		     size_t *got, void **swap)
{
	(void)arg, (void)fsid, (void)file, (void)st, (void)off, (void)swap;
	atomic_fetch_add(&tier_reads, 1);
	memset(buf, 'c', len);
	*got = len;
	return 0;
}

static int fake_cold(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)st, (void)off, (void)len;
	atomic_fetch_add(&tier_checks, 1);
	return 1;
}

static int fake_write_begin(void *arg, uint64_t fsid, int file, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)file, (void)st, (void)off, (void)len;
	return 0;
}

static const struct vol_tier_ops fake_tier = {
	.read = fake_read,
	.cold = fake_cold,
	.write_begin = fake_write_begin,
};

static void lookup(const uint8_t *dfh, uint32_t dlen, const char *name, uint8_t *fh, uint32_t *fhlen)
{
	struct ut_buf a;

	ut_buf_init(&a, 1024);
	xdr_put_opaque(&a, dfh, dlen);
	xdr_put_opaque(&a, name, (uint32_t)strlen(name));
	call_fh(100003, 3, &a, fh, fhlen);
}

/* READ count bytes at off; returns the status, *n the count read. */
static uint32_t read3(const uint8_t *fh, uint32_t fhlen, uint64_t off, uint32_t count, uint32_t *n)
{
	struct ut_buf a;
	struct xdr_cur c;
	uint8_t *mem;
	uint32_t st;

	ut_buf_init(&a, 1024);
	xdr_put_opaque(&a, fh, fhlen);
	xdr_put_u64(&a, off);
	xdr_put_u32(&a, count);
	ck_assert_int_eq(rpc(100003, 6, &a, &c, &mem), 0);
	st = xdr_u32(&c);
	*n = 0;
	if (st == 0) {
		if (xdr_u32(&c)) /* post_op_attr: fattr3 is 84 bytes */
			ck_assert_ptr_nonnull(xdr_fixed(&c, 84));
		*n = xdr_u32(&c);
	}
	free(mem);
	ut_buf_cleanup(&a);
	return st;
}

/* Write file f of volume 0, set tier, mount and look f up (its handle in
 * fh, fl), and zero the tier's counters. */
static void cold_file(const struct vol_tier_ops *tier, uint8_t *fh, uint32_t *fl)
{
	uint8_t root[64];
	uint32_t rl;
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/f", ts.cfg[0].root);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	ck_assert_int_eq(fputs("hot bytes on disk", f) >= 0, 1);
	fclose(f);
	vol_store_set_tier(ts.store, tier, NULL);
	mnt("/v0", root, &rl);
	lookup(root, rl, "f", fh, fl);
	atomic_store(&tier_checks, 0);
	atomic_store(&tier_reads, 0);
}

/* A deferred cold READ resumes where it stopped (decoded arguments, object
 * and verdict kept): the cold pool does not ask the tier again whether the
 * range is cold, so N cold READs are N checks and N reads. Re-running the
 * call from the start asked twice per READ. */
START_TEST(test_cold_read_resumes)
{
	uint8_t fh[64];
	uint32_t fl, n;

	cold_file(&fake_tier, fh, &fl);
	for (int i = 0; i < 5; i++) {
		ck_assert_uint_eq(read3(fh, fl, (uint64_t)i, 8, &n), 0);
		ck_assert_uint_eq(n, 8);
	}
	ck_assert_uint_eq(atomic_load(&tier_reads), 5);
	ck_assert_uint_eq(atomic_load(&tier_checks), 5);
	vol_store_set_tier(ts.store, NULL, NULL);
}
END_TEST

/* A tier whose chunk cache holds the range (read_cached answers, unless
 * cached_declines): a cold READ is answered by the NFS worker from it, not
 * deferred to the cold pool (no read through the tier's read hook); one it
 * declines goes to the cold pool as before. */
static atomic_uint tier_cached;
static atomic_bool cached_declines;

static int fake_read_cached(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, void *buf, size_t len)
{
	(void)arg, (void)fsid, (void)st, (void)off;
	atomic_fetch_add(&tier_cached, 1);
	if (atomic_load(&cached_declines))
		return 1;
	memset(buf, 'h', len);
	return 0;
}

START_TEST(test_cold_read_cached)
{
	static const struct vol_tier_ops tier2 = {
		.read = fake_read, .cold = fake_cold, .read_cached = fake_read_cached, .write_begin = fake_write_begin,
	};
	uint8_t fh[64];
	uint32_t fl, n;

	cold_file(&tier2, fh, &fl);
	atomic_store(&tier_cached, 0);
	atomic_store(&cached_declines, false);
	for (int i = 0; i < 5; i++) {
		ck_assert_uint_eq(read3(fh, fl, (uint64_t)i, 8, &n), 0);
		ck_assert_uint_eq(n, 8);
	}
	ck_assert_msg(atomic_load(&tier_cached) == 5 && atomic_load(&tier_reads) == 0,
		      "5 cold READs the chunk cache holds: %u answered from it, %u through the cold pool",
		      atomic_load(&tier_cached), atomic_load(&tier_reads));
	ck_assert_uint_eq(atomic_load(&tier_checks), 5); /* and the tier was asked once per READ */
	atomic_store(&cached_declines, true);
	ck_assert_uint_eq(read3(fh, fl, 0, 8, &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_msg(atomic_load(&tier_cached) == 6 && atomic_load(&tier_reads) == 1,
		      "a READ the chunk cache declines goes to the cold pool: %u tries, %u reads",
		      atomic_load(&tier_cached), atomic_load(&tier_reads));
	vol_store_set_tier(ts.store, NULL, NULL);
}
END_TEST

START_TEST(test_live_reconfigure)
{
	uint8_t fh0[64], fh1[64];
	uint32_t l0, l1;
	struct vol_stats st;

	mnt("/v0", fh0, &l0);
	mnt("/v1", fh1, &l1);
	ck_assert_uint_eq(getattr(fh0, l0), 0);
	ck_assert_uint_eq(create(fh0, l0, "a"), 0);
	ck_assert_int_eq(vol_store_stats(ts.store, "v0", &st), 0);
	ck_assert_uint_eq(st.ops[1], 1); /* GETATTR */
	ck_assert_uint_eq(st.ops[8], 1); /* CREATE */
	ck_assert_str_eq(nfs_srv_proc_name(8), "CREATE");
	ck_assert_ptr_null(nfs_srv_proc_name(22));

	/* read-only from now on, same connection, no restart */
	ts.cfg[0].rules[0].access = VOL_ACCESS_RO;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	ck_assert_uint_eq(create(fh0, l0, "b"), 30); /* ROFS */
	ck_assert_uint_eq(getattr(fh0, l0), 0);
	/* client no longer allowed */
	snprintf(ts.cfg[0].rules[0].clients, sizeof(ts.cfg[0].rules[0].clients), "10.0.0.0/8");
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	ck_assert_uint_eq(getattr(fh0, l0), 13); /* ACCES */
	/* v1 removed: its handles are stale; v0's stats survive */
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
	ck_assert_uint_eq(getattr(fh1, l1), 70); /* STALE */
	ck_assert_int_eq(vol_store_stats(ts.store, "v1", &st), -ENOENT);
	ck_assert_int_eq(vol_store_stats(ts.store, "v0", &st), 0);
	ck_assert_uint_ge(st.ops[1], 2);
	nfs_srv_stop(srv);
	nfs_srv_stop(srv); /* idempotent */
}
END_TEST

/* The agent owns the store and hands it to the front end: the server refuses
 * to run without one, and freeing the server leaves the store, its exports
 * and the counters the server charged in place (the old server freed it). */
START_TEST(test_store_borrowed)
{
	uint8_t fh0[64];
	uint32_t l0;
	struct nfs_srv *none = NULL;
	struct vol_stats st;
	struct vol_export *e;

	ck_assert_int_eq(nfs_srv_new("127.0.0.1:0", NULL, 2, &none), -EINVAL);
	ck_assert_ptr_null(none);
	mnt("/v0", fh0, &l0);
	ck_assert_uint_eq(getattr(fh0, l0), 0);
	nfs_srv_free(srv);
	srv = NULL;
	ck_assert_int_eq(vol_store_stats(ts.store, "v0", &st), 0);
	ck_assert_uint_eq(st.ops[1], 1); /* the GETATTR served before the free */
	e = vol_export_by_path(ts.store, "/v1", 3);
	ck_assert_ptr_nonnull(e);
	vol_export_unref(e);
}
END_TEST

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Leader/follower (nfs_loop.c): with one worker, that thread is the loop
 * and the server: it serves two connections in turn, and a call QoS parks
 * (v0: 20 ops/s, bursts of 2) comes back through the queue while the thread
 * waits in epoll_wait: the release wakes it (evfd) at once. 20 GETATTRs
 * take about 0.9 s so; without the wake a parked call waits for the loop's
 * 1 s time-out (5 s in all, the bucket refilling meanwhile). Then stop with
 * a connection open. */
START_TEST(test_one_worker)
{
	uint8_t fh0[64], fh1[64];
	uint32_t l0, l1;
	int fd1 = fd, fd2 = connect_srv();
	double t0, dt;

	mnt("/v0", fh0, &l0);
	fd = fd2;
	mnt("/v1", fh1, &l1);
	for (int i = 0; i < 4; i++) {
		fd = i % 2 ? fd1 : fd2;
		ck_assert_uint_eq(getattr(fh1, l1), 0);
	}
	fd = fd1;
	t0 = mono_s();
	for (int i = 0; i < 20; i++)
		ck_assert_uint_eq(getattr(fh0, l0), 0);
	dt = mono_s() - t0;
	fprintf(stderr, "# 20 GETATTRs at 20 ops/s, one worker: %.3f s\n", dt);
	ck_assert_double_ge(dt, 0.5);  /* QoS parked them: the path is taken */
	ck_assert_double_lt(dt, 3.0);
	close(fd2);
	nfs_srv_stop(srv);
}
END_TEST

/* Replies batched per connection (nfs_reply.c): 16 GETATTRs sent in one
 * go come back whole, each xid once, and the last reply of the batch is not
 * held back: all but the last go with MSG_MORE, the last without, which
 * pushes them. Sent with MSG_MORE too, the tail of every batch waits for
 * the kernel's cork timer (200 ms): even the fastest of 7 batches shows it,
 * and a loaded machine does not slow all 7 past the bound. */
START_TEST(test_pipelined_batch)
{
	uint8_t fh0[64];
	uint32_t l0;
	double t[7];

	mnt("/v0", fh0, &l0);
	for (int k = 0; k < 7; k++) {
		struct ut_buf b, a;
		uint32_t first = xid + 1, seen = 0;
		double t0;

		ut_buf_init(&a, 128);
		xdr_put_opaque(&a, fh0, l0);
		ut_buf_init(&b, 8192);
		for (int i = 0; i < 16; i++)
			put_call(&b, 100003, 1, &a);
		t0 = mono_s();
		ck_assert_int_eq(send(fd, ut_buf_bytes(&b), b.len, 0), (ssize_t)b.len);
		for (int i = 0; i < 16; i++) {
			uint8_t m[4], body[512];
			uint32_t len, x;

			ck_assert_int_eq(recv(fd, m, 4, MSG_WAITALL), 4);
			len = ((uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3]) & 0x7fffffff;
			ck_assert_uint_le(len, sizeof(body));
			ck_assert_int_eq(recv(fd, body, len, MSG_WAITALL), (ssize_t)len);
			x = (uint32_t)body[0] << 24 | (uint32_t)body[1] << 16 | (uint32_t)body[2] << 8 | body[3];
			ck_assert_uint_ge(x, first);
			ck_assert_uint_lt(x, first + 16);
			ck_assert_uint_eq(seen & (1u << (x - first)), 0);
			seen |= 1u << (x - first);
			ck_assert_uint_eq(body[23], 0); /* accept_stat SUCCESS */
			ck_assert_uint_eq(body[27], 0); /* NFS3_OK */
		}
		t[k] = mono_s() - t0;
		ck_assert_uint_eq(seen, 0xffffu);
		ut_buf_cleanup(&a);
		ut_buf_cleanup(&b);
	}
	for (int i = 1; i < 7; i++) /* insertion sort: fastest, median, slowest */
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double x = t[j];

			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	fprintf(stderr, "# 16 pipelined GETATTRs: fastest %.3f s, median %.3f, slowest %.3f\n", t[0], t[3], t[6]);
	ck_assert_double_lt(t[0], 0.15);
}
END_TEST

/* The loop role passes on before the call is served: a client that does
 * not read its replies (4 KiB receive buffer, 8 READs of 1 MiB sent one by
 * one: more than the server's 4 MiB send buffer) holds the worker sending
 * to it, and the other worker, woken to take the role, answers another
 * connection at once. Were the role freed without waking anyone, nobody
 * would read the sockets until that send gave up (15 s). */
START_TEST(test_stuck_reader)
{
	uint8_t root[64], fh[64];
	uint32_t rl, fl;
	char path[600], chunk[65536];
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct ut_buf args, b;
	int a, rcv = 4096, q = 0;
	double t0, dt;
	FILE *f;

	snprintf(path, sizeof(path), "%s/big", ts.cfg[0].root);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	memset(chunk, 'b', sizeof(chunk));
	for (int i = 0; i < 16; i++)
		ck_assert_uint_eq(fwrite(chunk, 1, sizeof(chunk), f), sizeof(chunk));
	fclose(f);
	mnt("/v0", root, &rl);
	lookup(root, rl, "big", fh, &fl);
	sa.sin_port = htons(nfs_srv_port(srv));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	ck_assert_int_ge(a = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(setsockopt(a, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)), 0);
	ck_assert_int_eq(connect(a, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ut_buf_init(&args, 128);
	xdr_put_opaque(&args, fh, fl);
	xdr_put_u64(&args, 0);
	xdr_put_u32(&args, 1u << 20);
	for (int i = 0; i < 8; i++) { /* one at a time: each its own epoll batch */
		ut_buf_init(&b, 256);
		put_call(&b, 100003, 6, &args);
		ck_assert_int_eq(send(a, ut_buf_bytes(&b), b.len, 0), (ssize_t)b.len);
		ut_buf_cleanup(&b);
		usleep(50000);
	}
	usleep(200000);
	ck_assert_int_eq(ioctl(a, FIONREAD, &q), 0);
	ck_assert_int_lt(q, 1 << 19); /* the reply is stuck in the server's send */
	t0 = mono_s();
	ck_assert_uint_eq(getattr(root, rl), 0);
	dt = mono_s() - t0;
	fprintf(stderr, "# GETATTR while a worker is stuck sending: %.3f s (%d bytes of the READ arrived)\n", dt, q);
	ck_assert_double_lt(dt, 3.0);
	close(a);
	ut_buf_cleanup(&args);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nfs_srv");
	TCase *tc = tcase_create("core");

	if (geteuid() != 0)
		return 77;
	signal(SIGPIPE, SIG_IGN); /* as the agent: sendfile to a closed peer (nfs_srv.h) */
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_live_reconfigure);
	tcase_add_test(tc, test_store_borrowed);
	tcase_add_test(tc, test_cold_read_resumes);
	tcase_add_test(tc, test_cold_read_cached);
	tcase_add_test(tc, test_pipelined_batch);
	tcase_add_test(tc, test_stuck_reader);
	suite_add_tcase(s, tc);
	tc = tcase_create("leader");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup_one, teardown);
	tcase_add_test(tc, test_one_worker);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
