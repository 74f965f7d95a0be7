/* test_vol_qos: agent/vol/vol_qos.c token buckets and parked requests, driven by a
 * fake clock: closed-loop clients (each keeps `depth` requests outstanding;
 * an admitted request completes at once) against volumes with limits, with
 * qos_poll run every millisecond as the timer thread would. Rates, bursts,
 * ops limits, fairness between clients, FLEX pool sharing, independence of
 * volumes, limit changes in place, counters, and the real timer thread.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/vol/vol_qos.h"
#include "tests/lib/aqt.h"
#include "util/ut_clock.h"

#define MIB (1024.0 * 1024.0)
#define MS 1000000ull
#define SEC 1000000000ull
#define SIM_DEPTH_MAX 64

struct sim_client {
	struct qos_vol *v;
	uint64_t flow;
	enum qos_kind kind;
	uint64_t size;
	int depth, inflight;
	uint64_t done_bytes, done_ops;
	struct qos_item items[SIM_DEPTH_MAX];
	bool busy[SIM_DEPTH_MAX];
};

static uint64_t zero_clock(void)
{
	return 0;
}

static void sim_release(void *arg, struct qos_item *it)
{
	struct sim_client *c = NULL, **cs = arg;
	size_t i;

	for (; *cs; cs++) {
		if (it >= (*cs)->items && it < (*cs)->items + SIM_DEPTH_MAX) {
			c = *cs;
			break;
		}
	}
	ck_assert_ptr_nonnull(c);
	i = (size_t)(it - c->items);
	ck_assert(c->busy[i]);
	c->busy[i] = false;
	c->inflight--;
	c->done_bytes += c->size;
	c->done_ops++;
}

/* Top every client up to its depth at now. */
static void sim_fill(struct sim_client **cs, uint64_t now)
{
	for (; *cs; cs++) {
		struct sim_client *c = *cs;
		int guard = 0;

		while (c->inflight < c->depth && guard++ < 100000) {
			int i = 0;

			while (c->busy[i])
				i++;
			if (qos_submit(c->v, c->flow, c->kind, c->size, &c->items[i], now) == QOS_ADMIT) {
				c->done_bytes += c->size;
				c->done_ops++;
				continue;
			}
			c->busy[i] = true;
			c->inflight++;
		}
	}
}

/* Run from t0 to t1 in 1 ms steps; returns t1. */
static uint64_t sim_run(struct qos_sched *s, struct sim_client **cs, uint64_t t0, uint64_t t1)
{
	uint64_t t;

	for (t = t0; t < t1; t += MS) {
		sim_fill(cs, t);
		qos_poll(s, t, sim_release, cs);
		sim_fill(cs, t);
	}
	return t1;
}

static struct qos_sched *sched;

static void setup(void)
{
	ck_assert_int_eq(qos_sched_new(zero_clock, &sched), 0);
}

static void teardown(void)
{
	qos_sched_free(sched);
	sched = NULL;
}

static struct qos_vol *vol_with(uint64_t bps, uint64_t ops, const char *pool, uint64_t pbps, uint64_t pops)
{
	struct qos_vol *v;
	struct qos_limits l = {.bytes_per_s = bps, .ops_per_s = ops, .pool_bytes_per_s = pbps, .pool_ops_per_s = pops};

	snprintf(l.pool, sizeof(l.pool), "%s", pool ? pool : "");
	ck_assert_int_eq(qos_vol_new(sched, &v), 0);
	ck_assert_int_eq(qos_vol_set(v, &l, 0), 0);
	return v;
}

static void client_init(struct sim_client *c, struct qos_vol *v, uint64_t flow, uint64_t size, int depth)
{
	memset(c, 0, sizeof(*c));
	c->v = v;
	c->flow = flow;
	c->kind = QOS_READ;
	c->size = size;
	c->depth = depth;
}

/* Drain what is parked (limits off) so the volumes can be freed. */
static void drain(struct sim_client **cs, struct qos_vol **vs, uint64_t now)
{
	struct qos_limits none = {0};

	for (; *vs; vs++)
		qos_vol_set(*vs, &none, now);
	qos_poll(sched, now, sim_release, cs);
	for (; *cs; cs++)
		ck_assert_int_eq((*cs)->inflight, 0);
}

static void near(double got, double want, double tol, const char *what)
{
	ck_assert_msg(got >= want * (1 - tol) && got <= want * (1 + tol), "%s: got %.1f, want %.1f +- %.1f%%",
		      what, got, want, tol * 100);
}

START_TEST(test_rate_bytes)
{
	struct qos_vol *v = vol_with((uint64_t)(100 * MIB), 0, NULL, 0, 0);
	struct sim_client c, *cs[] = {&c, NULL};
	struct qos_vol *vs[] = {v, NULL};
	uint64_t t;

	client_init(&c, v, 1, 1 << 20, 8);
	t = sim_run(sched, cs, 0, SEC); /* warm-up: burst spent */
	c.done_bytes = 0;
	t = sim_run(sched, cs, t, t + 10 * SEC);
	near((double)c.done_bytes / MIB / 10, 100, 0.01, "MiB/s over 10 s");
	drain(cs, vs, t);
	qos_vol_unref(v);
}
END_TEST

START_TEST(test_burst_size)
{
	struct qos_vol *v = vol_with((uint64_t)(100 * MIB), 0, NULL, 0, 0);
	struct sim_client c, *cs[] = {&c, NULL};
	struct qos_vol *vs[] = {v, NULL};
	struct qos_stats st;

	/* An idle bucket holds 100 ms of rate: 10 MiB pass at once, plus the
	 * one request that takes it into debt; the rest waits. */
	client_init(&c, v, 1, 64 << 10, 64);
	sim_fill(cs, 10 * SEC);
	ck_assert_uint_ge(c.done_bytes, (uint64_t)(10 * MIB));
	ck_assert_uint_le(c.done_bytes, (uint64_t)(10 * MIB) + (64 << 10));
	ck_assert_int_eq(c.inflight, 64);
	/* the next release is due when the debt is paid back */
	{
		uint64_t due = qos_poll(sched, 10 * SEC, sim_release, cs);

		ck_assert_uint_gt(due, 10 * SEC);
		ck_assert_uint_le(due, 10 * SEC + 700 * 1000); /* 64 KiB at 100 MiB/s = 625 us */
	}
	qos_vol_stats(v, 10 * SEC, &st);
	ck_assert_uint_eq(st.queued, 64);
	ck_assert_uint_eq(st.limit_bytes_per_s, (uint64_t)(100 * MIB));
	drain(cs, vs, 10 * SEC);
	qos_vol_unref(v);
}
END_TEST

START_TEST(test_rate_ops_and_meta)
{
	struct qos_vol *v = vol_with(0, 1000, NULL, 0, 0);
	struct sim_client c, m, *cs[] = {&c, &m, NULL};
	struct qos_vol *vs[] = {v, NULL};
	uint64_t t;

	client_init(&c, v, 1, 4096, 32);
	client_init(&m, v, 2, 0, 4);
	m.kind = QOS_META; /* metadata requests count as ops too */
	t = sim_run(sched, cs, 0, SEC);
	c.done_ops = m.done_ops = 0;
	t = sim_run(sched, cs, t, t + 5 * SEC);
	near((double)(c.done_ops + m.done_ops) / 5, 1000, 0.01, "ops/s");
	near((double)c.done_ops, (double)m.done_ops, 0.05, "data vs metadata turns");
	drain(cs, vs, t);
	qos_vol_unref(v);
}
END_TEST

START_TEST(test_fair_clients)
{
	struct qos_vol *v = vol_with((uint64_t)(100 * MIB), 0, NULL, 0, 0);
	struct sim_client a, b, *cs[] = {&a, &b, NULL};
	struct qos_vol *vs[] = {v, NULL};
	uint64_t t;

	/* A greedy client (depth 64) and a modest one (depth 2) each get half. */
	client_init(&a, v, 1, 1 << 20, 64);
	client_init(&b, v, 2, 1 << 20, 2);
	t = sim_run(sched, cs, 0, SEC);
	a.done_bytes = b.done_bytes = 0;
	t = sim_run(sched, cs, t, t + 10 * SEC);
	near((double)a.done_bytes / MIB / 10, 50, 0.05, "greedy client MiB/s");
	near((double)b.done_bytes / MIB / 10, 50, 0.05, "modest client MiB/s");
	drain(cs, vs, t);
	qos_vol_unref(v);
}
END_TEST

START_TEST(test_flex_pool_shared)
{
	struct qos_vol *v1 = vol_with(0, 0, "pools/flex", 64 * 1048576ull, 1024);
	struct qos_vol *v2 = vol_with(0, 0, "pools/flex", 64 * 1048576ull, 1024);
	struct qos_vol *v3 = vol_with(0, 0, NULL, 0, 0);
	struct sim_client a, b, c, *cs[] = {&a, &b, &c, NULL};
	struct qos_vol *vs[] = {v1, v2, v3, NULL};
	struct qos_stats st;
	uint64_t t;

	client_init(&a, v1, 1, 4096, 32);
	client_init(&b, v2, 2, 4096, 8);
	client_init(&c, v3, 3, 4096, 1);
	c.depth = 0; /* v3 is probed by hand below */
	t = sim_run(sched, cs, 0, SEC);
	a.done_ops = b.done_ops = 0;
	t = sim_run(sched, cs, t, t + 5 * SEC);
	near((double)(a.done_ops + b.done_ops) / 5, 1024, 0.01, "pool ops/s");
	near((double)a.done_ops / 5, 512, 0.1, "first volume's share");
	near((double)b.done_ops / 5, 512, 0.1, "second volume's share");
	/* A volume outside the pool is not slowed by it. */
	ck_assert_int_eq(qos_submit(v3, 3, QOS_READ, 4096, &c.items[0], t), QOS_ADMIT);
	qos_vol_stats(v1, t, &st);
	ck_assert_uint_eq(st.pool_ops_per_s, 1024);
	ck_assert_uint_eq(st.limit_ops_per_s, 0);
	ck_assert_uint_gt(st.throttled_ns, 0);
	ck_assert_uint_gt(st.delayed, 0);
	drain(cs, vs, t);
	qos_vol_unref(v1);
	qos_vol_unref(v2);
	qos_vol_unref(v3);
}
END_TEST

START_TEST(test_volumes_independent)
{
	struct qos_vol *slow = vol_with((uint64_t)(10 * MIB), 0, NULL, 0, 0);
	struct qos_vol *fast = vol_with((uint64_t)(200 * MIB), 0, NULL, 0, 0);
	struct sim_client a, b, *cs[] = {&a, &b, NULL};
	struct qos_vol *vs[] = {slow, fast, NULL};
	uint64_t t;

	client_init(&a, slow, 1, 1 << 20, 64);
	client_init(&b, fast, 2, 1 << 20, 8);
	t = sim_run(sched, cs, 0, SEC);
	a.done_bytes = b.done_bytes = 0;
	t = sim_run(sched, cs, t, t + 5 * SEC);
	near((double)a.done_bytes / MIB / 5, 10, 0.03, "slow volume MiB/s");
	near((double)b.done_bytes / MIB / 5, 200, 0.01, "fast volume MiB/s");
	drain(cs, vs, t);
	qos_vol_unref(slow);
	qos_vol_unref(fast);
}
END_TEST

START_TEST(test_limit_change_in_place)
{
	struct qos_vol *v = vol_with((uint64_t)(40 * MIB), 0, NULL, 0, 0);
	struct sim_client c, *cs[] = {&c, NULL};
	struct qos_vol *vs[] = {v, NULL};
	struct qos_limits l = {.bytes_per_s = (uint64_t)(80 * MIB)};
	uint64_t t;
	int parked;

	client_init(&c, v, 1, 1 << 20, 8);
	t = sim_run(sched, cs, 0, SEC);
	c.done_bytes = 0;
	t = sim_run(sched, cs, t, t + 4 * SEC);
	near((double)c.done_bytes / MIB / 4, 40, 0.02, "before: MiB/s");
	/* parked requests stay parked across the change; none is lost */
	parked = c.inflight;
	ck_assert_int_gt(parked, 0);
	ck_assert_int_eq(qos_vol_set(v, &l, t), 0);
	ck_assert_int_eq(c.inflight, parked);
	c.done_bytes = 0;
	t = sim_run(sched, cs, t, t + 4 * SEC);
	near((double)c.done_bytes / MIB / 4, 80, 0.02, "after: MiB/s");
	/* and back down */
	l.bytes_per_s = (uint64_t)(16 * MIB);
	qos_vol_set(v, &l, t);
	t = sim_run(sched, cs, t, t + SEC);
	c.done_bytes = 0;
	t = sim_run(sched, cs, t, t + 4 * SEC);
	near((double)c.done_bytes / MIB / 4, 16, 0.03, "lowered: MiB/s");
	drain(cs, vs, t);
	qos_vol_unref(v);
}
END_TEST

START_TEST(test_unlimited_releases_all)
{
	struct qos_vol *v = vol_with(1 << 20, 0, NULL, 0, 0);
	struct sim_client c, *cs[] = {&c, NULL};
	struct qos_limits none = {0};
	struct qos_stats st;

	client_init(&c, v, 1, 1 << 20, 16);
	sim_fill(cs, 0);
	ck_assert_int_eq(c.inflight, 16);
	qos_vol_set(v, &none, 5 * MS);
	ck_assert_uint_eq(qos_poll(sched, 5 * MS, sim_release, cs), UINT64_MAX);
	ck_assert_int_eq(c.inflight, 0);
	ck_assert_int_eq(qos_submit(v, 1, QOS_WRITE, 1 << 20, &c.items[0], 6 * MS), QOS_ADMIT);
	qos_vol_stats(v, 6 * MS, &st);
	ck_assert_uint_eq(st.limit_bytes_per_s, 0);
	ck_assert_uint_eq(st.queued, 0);
	ck_assert_uint_eq(st.throttled_ns, 16 * 5 * MS);
	qos_vol_unref(v);
}
END_TEST

struct thr_ctx {
	pthread_mutex_t mu;
	int released;
};

static void thr_release(void *arg, struct qos_item *it)
{
	struct thr_ctx *x = arg;

	(void)it;
	pthread_mutex_lock(&x->mu);
	x->released++;
	pthread_mutex_unlock(&x->mu);
}

START_TEST(test_timer_thread)
{
	struct qos_sched *s;
	struct qos_vol *v;
	struct qos_limits l = {.bytes_per_s = 10 << 20};
	struct qos_item items[20];
	struct thr_ctx x = {.released = 0};
	int parked = 0, i, got = 0;
	uint64_t t0;

	pthread_mutex_init(&x.mu, NULL);
	ck_assert_int_eq(qos_sched_new(NULL, &s), 0);
	ck_assert_int_eq(qos_vol_new(s, &v), 0);
	qos_vol_set(v, &l, qos_now(s));
	ck_assert_int_eq(qos_sched_start(s, thr_release, &x), 0);
	/* 1 MiB bucket, 20 x 256 KiB: about 4 pass, 16 wait ~0.4 s in all */
	t0 = ut_clock_mono_ns();
	for (i = 0; i < 20; i++)
		parked += qos_submit(v, 7, QOS_READ, 256 << 10, &items[i], qos_now(s)) == QOS_PARKED;
	ck_assert_int_ge(parked, 14);
	for (i = 0; i < 300 && got < parked; i++) {
		usleep(10000);
		pthread_mutex_lock(&x.mu);
		got = x.released;
		pthread_mutex_unlock(&x.mu);
	}
	ck_assert_int_eq(got, parked);
	/* it did wait (>= ~0.3 s), not release at once: measured on the clock,
	 * not in polls, which a loaded machine stretches */
	ck_assert_uint_ge(ut_clock_mono_ns() - t0, 250 * 1000 * 1000ull);
	qos_sched_stop(s);
	qos_vol_unref(v);
	qos_sched_free(s);
	pthread_mutex_destroy(&x.mu);
}
END_TEST


/* Issue 15 item 5: charge what is moved. A READ charged its count gets back
 * what it did not move, so the request parked behind its debt goes at once. */
START_TEST(test_refund)
{
	struct qos_vol *v = vol_with((uint64_t)(10 * MIB), 0, NULL, 0, 0);
	struct sim_client c, *cs[] = {&c, NULL};
	struct qos_vol *vs[] = {v, NULL};
	struct qos_stats st;

	client_init(&c, v, 1, 1 << 20, 1);
	/* the bucket holds 1 MiB (100 ms): one 1 MiB READ empties it, the next
	 * goes into debt, the third waits */
	ck_assert_int_eq(qos_submit(v, 1, QOS_READ, 1 << 20, &c.items[0], 0), QOS_ADMIT);
	ck_assert_int_eq(qos_submit(v, 1, QOS_READ, 1 << 20, &c.items[0], 0), QOS_ADMIT);
	c.busy[0] = true;
	c.inflight = 1;
	ck_assert_int_eq(qos_submit(v, 1, QOS_READ, 4096, &c.items[0], 0), QOS_PARKED);
	ck_assert_uint_gt(qos_poll(sched, 0, sim_release, cs), 50 * MS); /* ~100 ms of debt */
	/* a request waits: qos_take charges nothing and parks nothing */
	ck_assert(!qos_take(v, 4096, 0));
	qos_vol_stats(v, 0, &st);
	ck_assert_uint_eq(st.admitted_bytes, 2 << 20);
	ck_assert_uint_eq(st.queued, 1);
	/* both READs hit the end of the file and moved nothing */
	qos_refund(v, 1 << 20, 0);
	qos_refund(v, 1 << 20, 0);
	qos_vol_stats(v, 0, &st);
	ck_assert_uint_eq(st.refunded_bytes, 2 << 20);              /* what came back is counted */
	qos_poll(sched, 0, sim_release, cs);
	ck_assert_int_eq(c.inflight, 0);
	ck_assert(qos_take(v, 4096, 0));                            /* nobody waits, tokens: charged */
	qos_vol_stats(v, 0, &st);
	ck_assert_uint_eq(st.admitted_bytes, (2 << 20) + 4096 + 4096);
	/* a refund never grows the bucket past its size */
	qos_refund(v, 1ull << 32, 0);
	ck_assert_int_eq(qos_submit(v, 1, QOS_READ, 1 << 20, &c.items[0], 0), QOS_ADMIT);
	ck_assert_int_eq(qos_submit(v, 1, QOS_READ, 1 << 20, &c.items[0], 0), QOS_ADMIT);
	ck_assert_int_eq(qos_submit(v, 1, QOS_READ, 1 << 20, &c.items[0], 0), QOS_PARKED);
	c.busy[0] = true;
	c.inflight = 1;
	qos_vol_stats(v, 0, &st);
	ck_assert_uint_eq(st.admitted_bytes, 4 * (1 << 20) + 2 * 4096); /* counters keep what was charged */
	drain(cs, vs, 0);
	qos_vol_unref(v);
}
END_TEST

/* A server-side copy's source side: qos_debit charges a volume without
 * parking, into debt, and the volume's next request waits it out. */
START_TEST(test_debit)
{
	struct qos_vol *v = vol_with((uint64_t)(10 * MIB), 0, NULL, 0, 0);
	struct sim_client c, *cs[] = {&c, NULL};
	struct qos_vol *vs[] = {v, NULL};
	struct qos_stats st;

	client_init(&c, v, 1, 4096, 1);
	qos_debit(v, 4 << 20, 0); /* 4 MiB against a 1 MiB bucket: never parked */
	ck_assert_int_eq(qos_submit(v, 1, QOS_READ, 4096, &c.items[0], 0), QOS_PARKED);
	c.busy[0] = true;
	c.inflight = 1;
	/* ~300 ms of debt at 10 MiB/s */
	ck_assert_uint_gt(qos_poll(sched, 0, sim_release, cs), 250 * MS);
	qos_vol_stats(v, 0, &st);
	ck_assert_uint_eq(st.admitted_bytes, 4 << 20);
	drain(cs, vs, 0);
	qos_vol_unref(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qos");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_rate_bytes);
	tcase_add_test(tc, test_burst_size);
	tcase_add_test(tc, test_rate_ops_and_meta);
	tcase_add_test(tc, test_fair_clients);
	tcase_add_test(tc, test_flex_pool_shared);
	tcase_add_test(tc, test_volumes_independent);
	tcase_add_test(tc, test_limit_change_in_place);
	tcase_add_test(tc, test_unlimited_releases_all);
	tcase_add_test(tc, test_timer_thread);
	tcase_add_test(tc, test_refund);
	tcase_add_test(tc, test_debit);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
