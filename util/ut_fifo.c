/* ut_fifo: the intrusive queue and the work queue on it (see ut_fifo.h). */
#include "util/ut_fifo.h"

#include "api/api_error.h"

void ut_fifo_init(struct ut_fifo *q)
{
	*q = (struct ut_fifo){ .head = NULL };
}

void ut_fifo_push(struct ut_fifo *q, struct ut_fifo_node *n)
{
	n->next = NULL;
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	q->len++;
}

struct ut_fifo_node *ut_fifo_pop(struct ut_fifo *q)
{
	struct ut_fifo_node *n = q->head;

	if (!n)
		return NULL;
	if (!(q->head = n->next))
		q->tail = NULL;
	n->next = NULL;
	q->len--;
	return n;
}

struct ut_fifo_node *ut_fifo_peek(const struct ut_fifo *q)
{
	return q->head;
}

void ut_fifo_concat(struct ut_fifo *dst, struct ut_fifo *src)
{
	if (!src->head)
		return;
	if (dst->tail)
		dst->tail->next = src->head;
	else
		dst->head = src->head;
	dst->tail = src->tail;
	dst->len += src->len;
	ut_fifo_init(src);
}

size_t ut_fifo_len(const struct ut_fifo *q)
{
	return q->len;
}

bool ut_fifo_empty(const struct ut_fifo *q)
{
	return q->head == NULL;
}

int ut_fifo_wq_init(struct ut_fifo_wq *wq)
{
	ut_fifo_init(&wq->q);
	wq->stop = false;
	if (pthread_mutex_init(&wq->mu, NULL) != 0)
		return AQ_ENOMEM;
	if (pthread_cond_init(&wq->cv, NULL) != 0) {
		pthread_mutex_destroy(&wq->mu);
		return AQ_ENOMEM;
	}
	return AQ_OK;
}

void ut_fifo_wq_cleanup(struct ut_fifo_wq *wq)
{
	pthread_cond_destroy(&wq->cv);
	pthread_mutex_destroy(&wq->mu);
}

void ut_fifo_wq_push(struct ut_fifo_wq *wq, struct ut_fifo_node *n)
{
	pthread_mutex_lock(&wq->mu);
	ut_fifo_push(&wq->q, n);
	pthread_cond_signal(&wq->cv);
	pthread_mutex_unlock(&wq->mu);
}

struct ut_fifo_node *ut_fifo_wq_pop(struct ut_fifo_wq *wq)
{
	struct ut_fifo_node *n;

	pthread_mutex_lock(&wq->mu);
	while (ut_fifo_empty(&wq->q) && !wq->stop)
		pthread_cond_wait(&wq->cv, &wq->mu);
	n = ut_fifo_pop(&wq->q); /* NULL only when stopped and drained */
	pthread_mutex_unlock(&wq->mu);
	return n;
}

void ut_fifo_wq_stop(struct ut_fifo_wq *wq)
{
	pthread_mutex_lock(&wq->mu);
	wq->stop = true;
	pthread_cond_broadcast(&wq->cv);
	pthread_mutex_unlock(&wq->mu);
}
