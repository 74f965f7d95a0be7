/* ut_fifo: the intrusive queue (see ut_fifo.h). */
#include "util/ut_fifo.h"

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
