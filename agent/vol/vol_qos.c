/* vol_qos: token buckets and parked requests of the data path; see
 * vol_qos.h for the contract.
 *
 * One mutex per scheduler guards every bucket, flow and queue: a critical
 * section is a few arithmetic operations, and unlimited volumes never take
 * it (their admission is an atomic flag and two counters). Volumes with
 * parked requests are on the scheduler's active list; the timer thread
 * sleeps until the earliest moment one of them has tokens again (or until a
 * submit/limit change wakes it), releases what is due, and hands it to the
 * release callback outside the lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_qos.h"
#include "util/ut_clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct qos_bucket {
	double rate;               /* units per second; 0 = unlimited */
	double burst;              /* most tokens it holds */
	double tokens;             /* may go negative: debt of one request */
	uint64_t last;             /* time of the last refill */
};

struct qos_pool {
	struct qos_pool *next;
	int refs;                  /* volumes linked to it */
	uint64_t nqueued;          /* parked requests of its volumes */
	struct qos_bucket bytes, ops;
	char name[QOS_POOL_NAME_MAX];
};

struct qos_flow {
	struct ut_fifo_node node;  /* in its volume's flows */
	uint64_t key;
	struct ut_fifo items;      /* parked, never empty while the flow is listed */
};

struct qos_vol {
	atomic_int refs;
	atomic_bool limited;       /* any rate set (own or pool) */
	struct qos_sched *s;
	/* under s->mu: */
	struct qos_bucket bytes, ops;
	struct qos_pool *pool;
	struct ut_fifo flows;      /* served from the head, round-robin */
	uint64_t nqueued;
	bool active;
	struct ut_fifo_node anode; /* in s->active */
	uint64_t delayed, throttled_ns;
	uint64_t rate_t0, rate_b0, rate_last;
	_Atomic uint64_t admitted_bytes, admitted_ops;
	_Atomic uint64_t refunded_bytes; /* given back by qos_refund */
};

struct qos_sched {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	qos_clock_fn clock;
	struct qos_pool *pools;
	struct ut_fifo active;     /* volumes with parked requests (anode) */
	uint64_t gen;              /* bumped by anything the timer must see */
	bool running, stop;
	pthread_t thr;
	qos_release_fn cb;
	void *cb_arg;
};

uint64_t qos_now(const struct qos_sched *s)
{
	return s->clock ? s->clock() : ut_clock_mono_ns();
}

/* ---------- buckets ---------- */

static void qos_refill(struct qos_bucket *b, uint64_t now)
{
	if (b->rate <= 0 || now <= b->last) {
		if (now > b->last)
			b->last = now;
		return;
	}
	b->tokens += b->rate * (double)(now - b->last) / 1e9;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	b->last = now;
}

static bool qos_ok(const struct qos_bucket *b)
{
	return b->rate <= 0 || b->tokens >= 0;
}

static void qos_charge(struct qos_bucket *b, double cost)
{
	if (b->rate > 0)
		b->tokens -= cost;
}

static uint64_t qos_ready(const struct qos_bucket *b, uint64_t now)
{
	double ns;

	if (qos_ok(b))
		return now;
	ns = -b->tokens * 1e9 / b->rate;
	return now + (uint64_t)ns + 1; /* rounded up: tokens >= 0 by then */
}

/* Set a bucket's rate in place (after a refill at the old rate): a bucket
 * that was unlimited starts full; otherwise what it holds stays, capped at
 * the new size, so a change neither forgives debt nor grants a burst. */
static void qos_set_rate(struct qos_bucket *b, uint64_t rate, uint64_t now)
{
	double burst = (double)rate * (double)QOS_BURST_NS / 1e9;

	if (burst < 1)
		burst = 1;
	if (rate == 0) {
		memset(b, 0, sizeof(*b));
		b->last = now;
		return;
	}
	if (b->rate <= 0)
		b->tokens = burst;
	else if (b->tokens > burst)
		b->tokens = burst;
	b->rate = (double)rate;
	b->burst = burst;
	b->last = now;
}

/* ---------- volumes (s->mu held) ---------- */

static void qos_vol_refill(struct qos_vol *v, uint64_t now)
{
	qos_refill(&v->bytes, now);
	qos_refill(&v->ops, now);
	if (v->pool) {
		qos_refill(&v->pool->bytes, now);
		qos_refill(&v->pool->ops, now);
	}
}

static bool qos_vol_ok(const struct qos_vol *v)
{
	return qos_ok(&v->bytes) && qos_ok(&v->ops) &&
	       (!v->pool || (qos_ok(&v->pool->bytes) && qos_ok(&v->pool->ops)));
}

static void qos_vol_charge(struct qos_vol *v, uint64_t bytes)
{
	qos_charge(&v->bytes, (double)bytes);
	qos_charge(&v->ops, 1);
	if (v->pool) {
		qos_charge(&v->pool->bytes, (double)bytes);
		qos_charge(&v->pool->ops, 1);
	}
	atomic_fetch_add_explicit(&v->admitted_bytes, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&v->admitted_ops, 1, memory_order_relaxed);
}

static uint64_t qos_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t qos_vol_ready(const struct qos_vol *v, uint64_t now)
{
	uint64_t t = qos_max(qos_ready(&v->bytes, now), qos_ready(&v->ops, now));

	if (v->pool)
		t = qos_max(t, qos_max(qos_ready(&v->pool->bytes, now), qos_ready(&v->pool->ops, now)));
	return t;
}

static bool qos_vol_limited(const struct qos_vol *v)
{
	return v->bytes.rate > 0 || v->ops.rate > 0 ||
	       (v->pool && (v->pool->bytes.rate > 0 || v->pool->ops.rate > 0));
}

/* Pop the next parked item, round-robin over flows. */
static struct qos_item *qos_vol_pop(struct qos_vol *v)
{
	struct ut_fifo_node *n = ut_fifo_pop(&v->flows);
	struct qos_flow *f;
	struct qos_item *it;

	if (!n)
		return NULL;
	f = UT_FIFO_ENTRY(n, struct qos_flow, node);
	it = UT_FIFO_ENTRY(ut_fifo_pop(&f->items), struct qos_item, node);
	if (ut_fifo_empty(&f->items))
		free(f);
	else
		ut_fifo_push(&v->flows, &f->node); /* the flow goes to the back of the round */
	v->nqueued--;
	if (v->pool)
		v->pool->nqueued--;
	return it;
}

static void qos_pool_unlink(struct qos_sched *s, struct qos_vol *v)
{
	struct qos_pool *p = v->pool, **pp;

	if (!p)
		return;
	v->pool = NULL;
	p->nqueued -= v->nqueued;
	if (--p->refs > 0)
		return;
	for (pp = &s->pools; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	free(p);
}

static int qos_pool_link(struct qos_sched *s, struct qos_vol *v, const char *name)
{
	struct qos_pool *p;

	for (p = s->pools; p; p = p->next)
		if (strcmp(p->name, name) == 0)
			break;
	if (!p) {
		if (!(p = calloc(1, sizeof(*p))))
			return -ENOMEM;
		snprintf(p->name, sizeof(p->name), "%s", name);
		p->next = s->pools;
		s->pools = p;
	}
	p->refs++;
	p->nqueued += v->nqueued;
	v->pool = p;
	return 0;
}

/* ---------- scheduler ---------- */

int qos_sched_new(qos_clock_fn clock, struct qos_sched **out)
{
	struct qos_sched *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!s)
		return -ENOMEM;
	s->clock = clock;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	*out = s;
	return 0;
}

static void qos_active_add(struct qos_sched *s, struct qos_vol *v)
{
	v->active = true;
	ut_fifo_push(&s->active, &v->anode);
}

uint64_t qos_poll(struct qos_sched *s, uint64_t now, qos_release_fn cb, void *arg)
{
	struct ut_fifo rel, wait, served;
	struct ut_fifo_node *n;
	struct qos_item *it;
	struct qos_vol *v;
	uint64_t next = UINT64_MAX;
	bool progress = true;

	ut_fifo_init(&rel);
	pthread_mutex_lock(&s->mu);
	/* One request per volume per pass, and a volume that got one goes to
	 * the back of the list: volumes sharing a pool take turns at its
	 * tokens, whoever came first. */
	while (progress) {
		ut_fifo_init(&wait);
		ut_fifo_init(&served);
		progress = false;
		next = UINT64_MAX; /* the last pass (nothing served) sees every volume left */
		while ((n = ut_fifo_pop(&s->active)) != NULL) {
			v = UT_FIFO_ENTRY(n, struct qos_vol, anode);
			qos_vol_refill(v, now);
			if (qos_vol_ok(v) && (it = qos_vol_pop(v)) != NULL) {
				qos_vol_charge(v, it->bytes);
				v->delayed++;
				v->throttled_ns += now > it->enq_ns ? now - it->enq_ns : 0;
				ut_fifo_push(&rel, &it->node);
				progress = true;
				if (!v->nqueued)
					v->active = false;
				else
					ut_fifo_push(&served, &v->anode);
			} else {
				uint64_t due = qos_vol_ready(v, now);

				next = next < due ? next : due;
				ut_fifo_push(&wait, &v->anode);
			}
		}
		/* those still waiting keep their place ahead of those served */
		ut_fifo_concat(&wait, &served);
		ut_fifo_concat(&s->active, &wait);
	}
	pthread_mutex_unlock(&s->mu);
	while ((n = ut_fifo_pop(&rel)) != NULL) {
		it = UT_FIFO_ENTRY(n, struct qos_item, node);
		v = it->vol;
		it->vol = NULL;
		cb(arg, it);
		qos_vol_unref(v);
	}
	return next;
}

static void *qos_timer(void *arg)
{
	struct qos_sched *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		uint64_t gen = s->gen, next;

		pthread_mutex_unlock(&s->mu);
		next = qos_poll(s, ut_clock_mono_ns(), s->cb, s->cb_arg);
		pthread_mutex_lock(&s->mu);
		if (s->stop || s->gen != gen)
			continue;
		if (next == UINT64_MAX) {
			pthread_cond_wait(&s->cv, &s->mu);
		} else {
			struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
					      .tv_nsec = (long)(next % 1000000000ull)};

			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		}
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int qos_sched_start(struct qos_sched *s, qos_release_fn cb, void *arg)
{
	int rc;

	pthread_mutex_lock(&s->mu);
	if (s->running) {
		pthread_mutex_unlock(&s->mu);
		return -EALREADY;
	}
	s->cb = cb;
	s->cb_arg = arg;
	s->stop = false;
	rc = pthread_create(&s->thr, NULL, qos_timer, s);
	s->running = rc == 0;
	pthread_mutex_unlock(&s->mu);
	return -rc;
}

void qos_sched_stop(struct qos_sched *s)
{
	struct ut_fifo rel;
	struct ut_fifo_node *n;
	struct qos_item *it;
	struct qos_vol *v;

	ut_fifo_init(&rel);
	pthread_mutex_lock(&s->mu);
	if (!s->running) {
		pthread_mutex_unlock(&s->mu);
		return;
	}
	s->stop = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thr, NULL);
	pthread_mutex_lock(&s->mu);
	s->running = false;
	while ((n = ut_fifo_pop(&s->active)) != NULL) {
		v = UT_FIFO_ENTRY(n, struct qos_vol, anode);
		while ((it = qos_vol_pop(v)) != NULL)
			ut_fifo_push(&rel, &it->node);
		v->active = false;
	}
	pthread_mutex_unlock(&s->mu);
	while ((n = ut_fifo_pop(&rel)) != NULL) {
		it = UT_FIFO_ENTRY(n, struct qos_item, node);
		v = it->vol;
		it->vol = NULL;
		s->cb(s->cb_arg, it);
		qos_vol_unref(v);
	}
}

void qos_sched_free(struct qos_sched *s)
{
	if (!s)
		return;
	qos_sched_stop(s);
	while (s->pools) { /* only if volumes outlive the scheduler: a bug */
		struct qos_pool *p = s->pools;

		s->pools = p->next;
		free(p);
	}
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* ---------- volumes ---------- */

int qos_vol_new(struct qos_sched *s, struct qos_vol **out)
{
	struct qos_vol *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	atomic_init(&v->refs, 1);
	atomic_init(&v->limited, false);
	v->s = s;
	v->rate_t0 = qos_now(s);
	*out = v;
	return 0;
}

void qos_vol_unref(struct qos_vol *v)
{
	struct qos_sched *s;

	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	s = v->s;
	pthread_mutex_lock(&s->mu);
	qos_pool_unlink(s, v);
	pthread_mutex_unlock(&s->mu);
	/* Parked items hold references, so no flow is left here. */
	free(v);
}

int qos_vol_set(struct qos_vol *v, const struct qos_limits *l, uint64_t now)
{
	struct qos_sched *s = v->s;
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	qos_vol_refill(v, now);
	qos_set_rate(&v->bytes, l->bytes_per_s, now);
	qos_set_rate(&v->ops, l->ops_per_s, now);
	if (v->pool && strcmp(v->pool->name, l->pool) != 0)
		qos_pool_unlink(s, v);
	if (!v->pool && l->pool[0])
		rc = qos_pool_link(s, v, l->pool);
	if (v->pool) {
		/* every volume of the pool carries the pool's budget: last wins */
		qos_set_rate(&v->pool->bytes, l->pool_bytes_per_s, now);
		qos_set_rate(&v->pool->ops, l->pool_ops_per_s, now);
	}
	atomic_store(&v->limited, qos_vol_limited(v));
	s->gen++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void qos_vol_stats(struct qos_vol *v, uint64_t now, struct qos_stats *out)
{
	struct qos_sched *s = v->s;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->mu);
	out->limit_bytes_per_s = (uint64_t)v->bytes.rate;
	out->limit_ops_per_s = (uint64_t)v->ops.rate;
	if (v->pool) {
		out->pool_bytes_per_s = (uint64_t)v->pool->bytes.rate;
		out->pool_ops_per_s = (uint64_t)v->pool->ops.rate;
	}
	out->admitted_bytes = atomic_load(&v->admitted_bytes);
	out->admitted_ops = atomic_load(&v->admitted_ops);
	out->refunded_bytes = atomic_load(&v->refunded_bytes);
	out->delayed = v->delayed;
	out->throttled_ns = v->throttled_ns;
	out->queued = v->nqueued;
	/* delivered rate over the interval since the previous look >= 1 s ago */
	if (now >= v->rate_t0 + 1000000000ull) { /* charged: net of refunds */
		uint64_t net = out->admitted_bytes - out->refunded_bytes;

		v->rate_last = net > v->rate_b0 ? (uint64_t)((double)(net - v->rate_b0) * 1e9 / (double)(now - v->rate_t0)) : 0;
		v->rate_t0 = now;
		v->rate_b0 = net;
	}
	out->delivered_bytes_per_s = v->rate_last;
	pthread_mutex_unlock(&s->mu);
}

/* A volume without a limit: count the request as admitted, true. */
static bool qos_unlimited(struct qos_vol *v, uint64_t cost)
{
	if (atomic_load_explicit(&v->limited, memory_order_relaxed))
		return false;
	atomic_fetch_add_explicit(&v->admitted_bytes, cost, memory_order_relaxed);
	atomic_fetch_add_explicit(&v->admitted_ops, 1, memory_order_relaxed);
	return true;
}

/* Whether a request may go at once (s->mu held, buckets refilled): nobody
 * waits before it, on the volume or its pool, and tokens are left. */
static bool qos_vol_go(const struct qos_vol *v)
{
	return !v->nqueued && (!v->pool || !v->pool->nqueued) && qos_vol_ok(v);
}

static void qos_give(struct qos_bucket *b, double n)
{
	if (b->rate <= 0)
		return;
	b->tokens += n;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
}

void qos_refund(struct qos_vol *v, uint64_t bytes, uint64_t now)
{
	struct qos_sched *s = v->s;

	if (!bytes)
		return;
	atomic_fetch_add_explicit(&v->refunded_bytes, bytes, memory_order_relaxed);
	if (!atomic_load_explicit(&v->limited, memory_order_relaxed))
		return;
	pthread_mutex_lock(&s->mu);
	qos_vol_refill(v, now);
	qos_give(&v->bytes, (double)bytes);
	if (v->pool)
		qos_give(&v->pool->bytes, (double)bytes);
	if (v->active) { /* parked requests may be due sooner */
		s->gen++;
		pthread_cond_signal(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
}

void qos_debit(struct qos_vol *v, uint64_t bytes, uint64_t now)
{
	struct qos_sched *s = v->s;

	if (qos_unlimited(v, bytes))
		return;
	pthread_mutex_lock(&s->mu);
	qos_vol_refill(v, now);
	qos_vol_charge(v, bytes); /* into debt if need be: the volume's next requests wait for it */
	pthread_mutex_unlock(&s->mu);
}

bool qos_take(struct qos_vol *v, uint64_t bytes, uint64_t now)
{
	struct qos_sched *s = v->s;
	bool ok;

	if (qos_unlimited(v, bytes))
		return true;
	pthread_mutex_lock(&s->mu);
	qos_vol_refill(v, now);
	ok = qos_vol_go(v);
	if (ok)
		qos_vol_charge(v, bytes);
	pthread_mutex_unlock(&s->mu);
	return ok;
}

enum qos_verdict qos_submit(struct qos_vol *v, uint64_t flow, enum qos_kind kind, uint64_t bytes,
			    struct qos_item *it, uint64_t now)
{
	struct qos_sched *s = v->s;
	struct qos_flow *f;
	uint64_t cost = kind == QOS_META ? QOS_META_BYTES : bytes;

	if (qos_unlimited(v, cost))
		return QOS_ADMIT;
	pthread_mutex_lock(&s->mu);
	qos_vol_refill(v, now);
	if (qos_vol_go(v))
		goto admit;
	f = NULL;
	for (struct ut_fifo_node *n = ut_fifo_peek(&v->flows); n && !f; n = n->next)
		if (UT_FIFO_ENTRY(n, struct qos_flow, node)->key == flow)
			f = UT_FIFO_ENTRY(n, struct qos_flow, node);
	if (!f) {
		if (!(f = calloc(1, sizeof(*f))))
			goto admit; /* never drop: pass, charged into debt */
		f->key = flow;
		ut_fifo_push(&v->flows, &f->node);
	}
	it->bytes = cost;
	it->enq_ns = now;
	it->vol = v;
	atomic_fetch_add(&v->refs, 1);
	ut_fifo_push(&f->items, &it->node);
	v->nqueued++;
	if (v->pool)
		v->pool->nqueued++;
	if (!v->active) { /* a new due time the timer must learn */
		qos_active_add(s, v);
		s->gen++;
		pthread_cond_signal(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return QOS_PARKED;
admit:
	qos_vol_charge(v, cost);
	pthread_mutex_unlock(&s->mu);
	return QOS_ADMIT;
}
