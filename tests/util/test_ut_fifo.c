/* Unit tests for util/ut_fifo.c: order, empty pops, concatenation either
 * side empty, reuse of popped nodes, a producer/consumer pair of threads
 * under the owner's lock (every item arrives once, in order), and the work
 * queue: several workers each get distinct items, every item is served once,
 * a stop drains what is queued and then ends every worker. */
#include "util/ut_fifo.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "api/api_error.h"
#include "tests/lib/aqt.h"

struct item {
	int v;
	struct ut_fifo_node node;
};

static int pop_v(struct ut_fifo *q)
{
	struct ut_fifo_node *n = ut_fifo_pop(q);

	return n ? UT_FIFO_ENTRY(n, struct item, node)->v : -1;
}

START_TEST(test_order)
{
	struct item it[5];
	struct ut_fifo q;

	ut_fifo_init(&q);
	ck_assert(ut_fifo_empty(&q));
	ck_assert_ptr_null(ut_fifo_pop(&q));
	ck_assert_ptr_null(ut_fifo_peek(&q));
	for (int i = 0; i < 5; i++) {
		it[i].v = i;
		ut_fifo_push(&q, &it[i].node);
	}
	ck_assert_uint_eq(ut_fifo_len(&q), 5);
	ck_assert_ptr_eq(ut_fifo_peek(&q), &it[0].node);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(pop_v(&q), i);
	ck_assert(ut_fifo_empty(&q));
	ck_assert_uint_eq(ut_fifo_len(&q), 0);
	ck_assert_int_eq(pop_v(&q), -1);
	/* popped nodes go back in, and the tail was reset */
	ut_fifo_push(&q, &it[3].node);
	ut_fifo_push(&q, &it[1].node);
	ck_assert_int_eq(pop_v(&q), 3);
	ck_assert_ptr_null(it[3].node.next);
	ck_assert_int_eq(pop_v(&q), 1);
	ck_assert_int_eq(pop_v(&q), -1);
}
END_TEST

START_TEST(test_concat)
{
	struct item it[6];
	struct ut_fifo a, b;

	ut_fifo_init(&a);
	ut_fifo_init(&b);
	for (int i = 0; i < 6; i++)
		it[i].v = i;
	ut_fifo_concat(&a, &b); /* both empty */
	ck_assert(ut_fifo_empty(&a));
	ut_fifo_push(&b, &it[0].node);
	ut_fifo_push(&b, &it[1].node);
	ut_fifo_concat(&a, &b); /* into an empty one */
	ck_assert(ut_fifo_empty(&b));
	ck_assert_uint_eq(ut_fifo_len(&a), 2);
	ut_fifo_concat(&a, &b); /* from an empty one */
	ck_assert_uint_eq(ut_fifo_len(&a), 2);
	ut_fifo_push(&b, &it[2].node);
	ut_fifo_push(&b, &it[3].node);
	ut_fifo_concat(&a, &b);
	ut_fifo_push(&a, &it[4].node); /* the tail moved to b's last */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(pop_v(&a), i);
	ck_assert(ut_fifo_empty(&a));
}
END_TEST

#define NITEMS 20000

struct shared {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ut_fifo q;
	struct item items[NITEMS];
};

static void *producer(void *arg)
{
	struct shared *s = arg;

	for (int i = 0; i < NITEMS; i++) {
		s->items[i].v = i;
		pthread_mutex_lock(&s->mu);
		ut_fifo_push(&s->q, &s->items[i].node);
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

START_TEST(test_threads)
{
	static struct shared s = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	pthread_t t;
	int want = 0;

	ut_fifo_init(&s.q);
	ck_assert_int_eq(pthread_create(&t, NULL, producer, &s), 0);
	while (want < NITEMS) {
		int v;

		pthread_mutex_lock(&s.mu);
		while (ut_fifo_empty(&s.q))
			pthread_cond_wait(&s.cv, &s.mu);
		v = pop_v(&s.q);
		pthread_mutex_unlock(&s.mu);
		ck_assert_int_eq(v, want);
		want++;
	}
	pthread_join(t, NULL);
	ck_assert(ut_fifo_empty(&s.q));
}
END_TEST

#define NWORKERS 3

struct pool {
	struct ut_fifo_wq wq;
	int served[NITEMS]; /* times each item was popped */
	int count[NWORKERS];
	int idx;
	pthread_mutex_t mu;
};

static struct pool pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void *worker(void *arg)
{
	struct ut_fifo_node *n;
	int me;

	(void)arg;
	pthread_mutex_lock(&pool.mu);
	me = pool.idx++;
	pthread_mutex_unlock(&pool.mu);
	while ((n = ut_fifo_wq_pop(&pool.wq)) != NULL) {
		__atomic_add_fetch(&pool.served[UT_FIFO_ENTRY(n, struct item, node)->v], 1, __ATOMIC_RELAXED);
		pool.count[me]++;
	}
	return NULL;
}

START_TEST(test_work_queue)
{
	static struct item items[NITEMS];
	pthread_t t[NWORKERS];
	int total = 0;

	ck_assert_int_eq(ut_fifo_wq_init(&pool.wq), AQ_OK);
	for (int i = 0; i < NWORKERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker, NULL), 0);
	for (int i = 0; i < NITEMS; i++) {
		items[i].v = i;
		ut_fifo_wq_push(&pool.wq, &items[i].node);
	}
	ut_fifo_wq_stop(&pool.wq); /* what is queued is still served */
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(t[i], NULL); /* and every worker ends */
	for (int i = 0; i < NITEMS; i++)
		ck_assert_int_eq(pool.served[i], 1);
	for (int i = 0; i < NWORKERS; i++)
		total += pool.count[i];
	ck_assert_int_eq(total, NITEMS);
	ck_assert_ptr_null(ut_fifo_wq_pop(&pool.wq)); /* stopped and empty: at once */
	/* an offer after the stop is refused and queues nothing */
	ck_assert(!ut_fifo_wq_offer(&pool.wq, &items[0].node));
	ck_assert_ptr_null(ut_fifo_wq_pop(&pool.wq));
	ut_fifo_wq_cleanup(&pool.wq);
}
END_TEST

static void *idle_worker(void *arg)
{
	return ut_fifo_wq_pop(arg); /* NULL once stopped */
}

/* Workers blocked on an empty queue all end at the stop (a stop that woke
 * one would leave the others waiting, and the test would time out). */
START_TEST(test_stop_wakes_all)
{
	struct ut_fifo_wq wq;
	pthread_t t[NWORKERS];
	void *got;

	ck_assert_int_eq(ut_fifo_wq_init(&wq), AQ_OK);
	for (int i = 0; i < NWORKERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, idle_worker, &wq), 0);
	usleep(100000); /* let them block; the test holds either way */
	ut_fifo_wq_stop(&wq);
	for (int i = 0; i < NWORKERS; i++) {
		pthread_join(t[i], &got);
		ck_assert_ptr_null(got);
	}
	ut_fifo_wq_cleanup(&wq);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_fifo");
	TCase *tc = tcase_create("fifo");

	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_concat);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_work_queue);
	tcase_add_test(tc, test_stop_wakes_all);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
