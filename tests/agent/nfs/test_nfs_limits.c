/* test_nfs_limits: the NFS server's connection limits (agent/nfs/nfs_limits.h),
 * first as a pure module on a fake clock (who is evicted for a new
 * connection, who times out), then on a live nfs_srv with tiny limits over
 * raw sockets from 127.0.0.2.. (Linux routes 127/8 locally): the oldest idle
 * connection makes room at the per-address and the total limit, a busy one
 * never does, and silent, half-sent and idle connections are closed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/nfs/nfs_limits.h"
#include "agent/nfs/nfs_srv.h"
#include "tests/lib/aqt.h"

#define S 1000000000ull

struct fake {
	struct nfs_limits_node nd;
	bool busy, started, closed;
};

static struct nfs_limits lim;

static struct fake *fake_of(struct nfs_limits_node *nd)
{
	return (struct fake *)(void *)nd;
}

static bool f_busy(struct nfs_limits_node *nd)
{
	return fake_of(nd)->busy;
}

static bool f_started(struct nfs_limits_node *nd)
{
	return fake_of(nd)->started;
}

static void f_close(struct nfs_limits_node *nd, void *ctx)
{
	(void)ctx;
	nfs_limits_del(&lim, nd);
	fake_of(nd)->closed = true;
}

static const struct nfs_limits_ops ops = { .busy = f_busy, .started = f_started, .close = f_close };

static struct sockaddr_storage ip4(const char *a)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	s4->sin_family = AF_INET;
	inet_pton(AF_INET, a, &s4->sin_addr);
	return ss;
}

/* Admit and add f from address a at now; true if admitted. */
static bool join(struct fake *f, const char *a, uint64_t now)
{
	struct sockaddr_storage ss = ip4(a);

	memset(f, 0, sizeof(*f));
	if (!nfs_limits_admit(&lim, &ss, &ops, NULL))
		return false;
	ck_assert_int_eq(nfs_limits_add(&lim, &f->nd, &ss, now), 0);
	return true;
}

START_TEST(test_per_ip_evicts_oldest_idle_of_that_address)
{
	struct nfs_srv_limits cfg = { .max_conns = 100, .per_ip = 2, .record_s = 10, .idle_s = 360 };
	struct fake a, b, c, d, other;

	nfs_limits_init(&lim, &cfg);
	ck_assert(join(&other, "10.0.0.9", 0));
	ck_assert(join(&a, "10.0.0.1", 1 * S));
	ck_assert(join(&b, "10.0.0.1", 2 * S));
	nfs_limits_call(&lim, &a.nd, 3 * S); /* a proved itself, b did not */
	ck_assert(join(&c, "10.0.0.1", 4 * S));
	ck_assert(b.closed && !a.closed && !other.closed); /* the one without a call goes first */
	a.busy = true;
	nfs_limits_call(&lim, &c.nd, 5 * S);
	ck_assert(join(&d, "10.0.0.1", 6 * S)); /* a is busy: c, the idle one, goes */
	ck_assert(c.closed && !a.closed);
	nfs_limits_call(&lim, &d.nd, 7 * S);
	d.busy = true;
	ck_assert(!join(&c, "10.0.0.1", 8 * S)); /* all busy: refused */
	ck_assert(!other.closed);
	f_close(&a.nd, NULL);
	f_close(&d.nd, NULL);
	f_close(&other.nd, NULL);
	ck_assert_uint_eq(lim.n, 0);
	nfs_limits_cleanup(&lim);
}
END_TEST

START_TEST(test_total_limit_evicts_fresh_then_least_recent)
{
	struct nfs_srv_limits cfg = { .max_conns = 3, .per_ip = 10, .record_s = 10, .idle_s = 360 };
	struct fake a, b, c, d, e;

	nfs_limits_init(&lim, &cfg);
	ck_assert(join(&a, "10.0.0.1", 0));
	ck_assert(join(&b, "10.0.0.2", 1 * S));
	ck_assert(join(&c, "10.0.0.3", 2 * S));
	nfs_limits_call(&lim, &a.nd, 3 * S);
	nfs_limits_call(&lim, &c.nd, 4 * S);
	ck_assert(join(&d, "10.0.0.4", 5 * S)); /* b never sent a call */
	ck_assert(b.closed && !a.closed && !c.closed);
	nfs_limits_call(&lim, &d.nd, 6 * S);
	nfs_limits_seen(&lim, &a.nd, 7 * S); /* a active again: c is the least recent */
	ck_assert(join(&e, "10.0.0.5", 8 * S));
	ck_assert(c.closed && !a.closed && !d.closed);
	f_close(&a.nd, NULL);
	f_close(&d.nd, NULL);
	f_close(&e.nd, NULL);
	nfs_limits_cleanup(&lim);
}
END_TEST

START_TEST(test_timeouts)
{
	struct nfs_srv_limits cfg = { .max_conns = 100, .per_ip = 100, .record_s = 10, .idle_s = 360 };
	struct fake fresh, idle, half, busy, chatty;

	nfs_limits_init(&lim, &cfg);
	ck_assert(join(&fresh, "10.0.0.1", 0));
	ck_assert(join(&idle, "10.0.0.2", 0));
	ck_assert(join(&half, "10.0.0.3", 0));
	ck_assert(join(&busy, "10.0.0.4", 0));
	ck_assert(join(&chatty, "10.0.0.5", 0));
	nfs_limits_call(&lim, &idle.nd, 1 * S);
	nfs_limits_call(&lim, &half.nd, 1 * S);
	nfs_limits_call(&lim, &busy.nd, 1 * S);
	nfs_limits_call(&lim, &chatty.nd, 1 * S);
	half.started = true; /* a call partly received, then silence */
	busy.busy = true;
	nfs_limits_sweep(&lim, 9 * S, &ops, NULL);
	ck_assert(!fresh.closed && !half.closed);
	nfs_limits_sweep(&lim, 10 * S, &ops, NULL);
	ck_assert(fresh.closed); /* no whole call within 10 s of its accept */
	ck_assert(!half.closed);
	nfs_limits_sweep(&lim, 11 * S, &ops, NULL);
	ck_assert(half.closed && !idle.closed && !busy.closed);
	for (uint64_t t = 20; t < 360; t += 20) {
		nfs_limits_seen(&lim, &chatty.nd, t * S);
		nfs_limits_sweep(&lim, t * S, &ops, NULL);
	}
	ck_assert(!idle.closed);
	nfs_limits_sweep(&lim, 361 * S, &ops, NULL);
	ck_assert(idle.closed && !chatty.closed && !busy.closed); /* busy never times out */
	busy.busy = false; /* done now: its idle time started at the last sweep */
	nfs_limits_sweep(&lim, 400 * S, &ops, NULL);
	ck_assert(!busy.closed);
	nfs_limits_sweep(&lim, 361 * S + 360 * S, &ops, NULL);
	ck_assert(busy.closed && chatty.closed);
	ck_assert_uint_eq(lim.n, 0);
	ck_assert_ptr_null(nfs_limits_any(&lim));
	nfs_limits_cleanup(&lim);
}
END_TEST

/* ---- live ---- */

static int port;

static int dial_from(const char *from)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in b = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	inet_pton(AF_INET, from, &b.sin_addr);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&b, sizeof(b)), 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* The server closed fd within ms. */
static bool closed_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, ms) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

/* An NFS NULL call answered on fd. */
static bool null_call(int fd)
{
	static const uint8_t call[] = {
		0x80, 0, 0, 40, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3,
		0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t r[64];
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (send(fd, call, sizeof(call), MSG_NOSIGNAL) != (ssize_t)sizeof(call) || poll(&p, 1, 3000) != 1)
		return false;
	return recv(fd, r, sizeof(r), 0) >= 28 && r[4] == 0 && r[5] == 0 && r[6] == 0 && r[7] == 7;
}

static struct vol_store *live_store; /* the caller owns the store the server borrows */

static struct nfs_srv *live_start(const struct nfs_srv_limits *cfg)
{
	uint8_t key[VOL_KEY_LEN] = { 1 };
	struct nfs_srv *srv;

	ck_assert_int_eq(vol_store_new(key, &live_store), 0);
	ck_assert_int_eq(nfs_srv_new("127.0.0.1:0", live_store, 2, &srv), 0);
	ck_assert_int_eq(nfs_srv_set_limits(srv, cfg), 0);
	ck_assert_int_eq(nfs_srv_start(srv), 0);
	ck_assert_int_eq(nfs_srv_set_limits(srv, cfg), -EBUSY);
	port = nfs_srv_port(srv);
	return srv;
}

static void live_stop(struct nfs_srv *srv)
{
	nfs_srv_free(srv);
	vol_store_free(live_store);
	live_store = NULL;
}

START_TEST(test_live_eviction)
{
	struct nfs_srv_limits cfg = { .max_conns = 4, .per_ip = 2, .record_s = 30, .idle_s = 30 };
	struct nfs_srv *srv = live_start(&cfg);
	int a1, a2, a3, b1, c1, d1;

	/* per address: a third connection from .2 closes the silent one */
	a1 = dial_from("127.0.0.2");
	a2 = dial_from("127.0.0.2");
	ck_assert(null_call(a2));
	a3 = dial_from("127.0.0.2");
	ck_assert(closed_within(a1, 2000));
	ck_assert(null_call(a2) && null_call(a3));
	/* in all: .3 and .4 fill it; .5 closes the proven connection longest
	 * without traffic (a2), not the ones that spoke after it */
	b1 = dial_from("127.0.0.3");
	ck_assert(null_call(b1));
	c1 = dial_from("127.0.0.4");
	ck_assert(null_call(c1));
	ck_assert(null_call(a3) && null_call(b1) && null_call(c1));
	/* A reply reaches us before its worker counts it done (nfs_reply_send),
	 * and a connection with a call in flight is never the victim: give a
	 * descheduled worker time to finish, so the choice below is the LRU's. */
	usleep(200 * 1000);
	d1 = dial_from("127.0.0.5");
	ck_assert(null_call(d1));
	ck_assert(closed_within(a2, 2000));
	ck_assert(null_call(a3) && null_call(b1) && null_call(c1) && null_call(d1));
	close(a1);
	close(a2);
	close(a3);
	close(b1);
	close(c1);
	close(d1);
	live_stop(srv);
}
END_TEST

START_TEST(test_live_timeouts)
{
	struct nfs_srv_limits cfg = { .max_conns = 16, .per_ip = 8, .record_s = 1, .idle_s = 6 };
	struct nfs_srv *srv = live_start(&cfg);
	int silent = dial_from("127.0.0.2"), half = dial_from("127.0.0.2"), idle = dial_from("127.0.0.2");

	ck_assert(null_call(half) && null_call(idle));
	/* a call begun, then silence */
	ck_assert_int_eq(send(half, "\x80\0\0\x28\0\0", 6, MSG_NOSIGNAL), 6);
	ck_assert(closed_within(silent, 4000));   /* no call within record_s */
	ck_assert(closed_within(half, 4000));     /* paused inside a call */
	ck_assert(!closed_within(idle, 200));     /* idle_s is longer */
	ck_assert(closed_within(idle, 8000));
	close(silent);
	close(half);
	close(idle);
	live_stop(srv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nfs_limits");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_per_ip_evicts_oldest_idle_of_that_address);
	tcase_add_test(tc, test_total_limit_evicts_fresh_then_least_recent);
	tcase_add_test(tc, test_timeouts);
	tcase_add_test(tc, test_live_eviction);
	tcase_add_test(tc, test_live_timeouts);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
