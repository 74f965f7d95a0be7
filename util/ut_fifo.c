/* ut_fifo: the work queue on the intrusive queue (see ut_fifo.h; the queue
 * operations themselves are inline there). */
#include "util/ut_fifo.h"

#include "api/api_error.h"

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

bool ut_fifo_wq_offer(struct ut_fifo_wq *wq, struct ut_fifo_node *n)
{
	bool queued;

	pthread_mutex_lock(&wq->mu);
	queued = !wq->stop;
	if (queued) {
		ut_fifo_push(&wq->q, n);
		pthread_cond_signal(&wq->cv);
	}
	pthread_mutex_unlock(&wq->mu);
	return queued;
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
