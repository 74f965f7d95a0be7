/* Unit tests for util/ut_fifo.c: order, empty pops, concatenation either
 * side empty, reuse of popped nodes, and a producer/consumer pair of threads
 * under the owner's lock (every item arrives once, in order). */
#include "util/ut_fifo.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>

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

int main(void)
{
	Suite *s = suite_create("ut_fifo");
	TCase *tc = tcase_create("fifo");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_concat);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
