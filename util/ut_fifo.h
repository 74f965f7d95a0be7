/* ut_fifo: the one first-in first-out queue of Aquifer, intrusive (the shape
 * of knot's worker queue): the element embeds a struct ut_fifo_node, so a
 * push never allocates and never fails.
 *
 *     struct job { ...; struct ut_fifo_node node; };
 *     ut_fifo_push(&q, &job->node);
 *     struct ut_fifo_node *n = ut_fifo_pop(&q);
 *     struct job *j = n ? UT_FIFO_ENTRY(n, struct job, node) : NULL;
 *
 * Contract:
 * - A node is in at most one queue at a time; ut_fifo_push of a node already
 *   queued is a broken invariant (the caller's bug), not checked.
 * - ut_fifo_pop/ut_fifo_peek return NULL when the queue is empty; a popped
 *   node's next is NULL again.
 * - ut_fifo_concat moves every node of src, in order, behind those of dst;
 *   src is empty afterwards.
 * - The queue is plain memory (copying an empty one is fine) and is not
 *   thread-safe: its owner locks, typically with the mutex of the condition
 *   variable its workers wait on.
 *
 * struct ut_fifo_wq is that lock, condition variable and queue together: the
 * work queue of a pool of worker threads (the NFS workers and cold pool, the
 * HTTP workers of aquiferd and of the agent).
 * - ut_fifo_wq_push queues a node and wakes one waiting worker.
 * - ut_fifo_wq_offer is ut_fifo_wq_push unless the queue is stopped: then
 *   it queues nothing and returns false, and the caller answers the work
 *   itself (its workers may be gone already).
 * - ut_fifo_wq_pop waits for a node and returns it; after ut_fifo_wq_stop it
 *   still returns what is queued, then NULL at once: a worker loops
 *   `while ((n = ut_fifo_wq_pop(wq)))` and ends when stopped and drained.
 * - ut_fifo_wq_stop wakes every worker. ut_fifo_wq_cleanup (the workers have
 *   been joined) frees the lock and the condition, not the nodes.
 */
#ifndef AQ_UT_FIFO_H
#define AQ_UT_FIFO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct ut_fifo_node {
	struct ut_fifo_node *next;
};

struct ut_fifo {
	struct ut_fifo_node *head, *tail;
	size_t len;
};

/* The element that embeds node as its member. */
#define UT_FIFO_ENTRY(node, type, member) ((type *)(void *)((char *)(node) - offsetof(type, member)))

/* The queue operations are a few stores each and sit on the hot paths (QoS
 * admission and release, the NFS and HTTP work queues): inline, so a call
 * costs what the hand-written lists it replaced cost (bench/REPORT.md,
 * "Restructure A/B": out of line they added 20% to QoS admission). */
static inline void ut_fifo_init(struct ut_fifo *q)
{
	*q = (struct ut_fifo){ .head = NULL };
}

static inline void ut_fifo_push(struct ut_fifo *q, struct ut_fifo_node *n)
{
	n->next = NULL;
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	q->len++;
}

static inline struct ut_fifo_node *ut_fifo_pop(struct ut_fifo *q)
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

static inline struct ut_fifo_node *ut_fifo_peek(const struct ut_fifo *q)
{
	return q->head;
}

static inline void ut_fifo_concat(struct ut_fifo *dst, struct ut_fifo *src)
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

static inline size_t ut_fifo_len(const struct ut_fifo *q)
{
	return q->len;
}

static inline bool ut_fifo_empty(const struct ut_fifo *q)
{
	return q->head == NULL;
}

struct ut_fifo_wq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ut_fifo q;
	bool stop;
};

/* AQ_OK, or AQ_ENOMEM when the lock or the condition cannot be made. */
int ut_fifo_wq_init(struct ut_fifo_wq *wq);
void ut_fifo_wq_cleanup(struct ut_fifo_wq *wq);
void ut_fifo_wq_push(struct ut_fifo_wq *wq, struct ut_fifo_node *n);
bool ut_fifo_wq_offer(struct ut_fifo_wq *wq, struct ut_fifo_node *n);
struct ut_fifo_node *ut_fifo_wq_pop(struct ut_fifo_wq *wq);
void ut_fifo_wq_stop(struct ut_fifo_wq *wq);

#endif
