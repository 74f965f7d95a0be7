/* bkp_pool: the puts of a backup, several at once. A store's cost is per
 * object (a directory store fsyncs each one, S3 pays a round trip), so a
 * backup of many small files is bound by put latency unless puts overlap.
 * The backup thread seals each new chunk into a free slot; workers put the
 * slots. The first failure is kept and stops further submissions; the
 * backup waits for every slot to be free again before it writes the
 * manifest, so the manifest is still written after every chunk is durable.
 */
#include "agent/bkp/bkp_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* TAKEN: the backup thread is sealing into it; BUSY: a worker puts it */
enum { SLOT_FREE, SLOT_TAKEN, SLOT_READY, SLOT_BUSY };

struct bkp_slot {
	int state;
	char key[BKP_CHUNK_KEY_LEN + 1];
	uint8_t *buf;
	size_t len;
};

static void *bkp_pool_worker(void *arg)
{
	struct bkp_pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct bkp_slot *s = NULL;

		for (size_t i = 0; i < p->nslots && !s; i++)
			if (p->slots[i].state == SLOT_READY)
				s = &p->slots[i];
		if (!s) {
			if (p->stop)
				break;
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		s->state = SLOT_BUSY;
		int rc = p->err; /* after a failure the rest is not put */
		pthread_mutex_unlock(&p->mu);
		if (rc == 0)
			rc = bkp_put(p->v, s->key, s->buf, s->len);
		pthread_mutex_lock(&p->mu);
		if (rc != 0 && p->err == 0) {
			p->err = rc;
			obj_last_error(p->v->store, p->errtext, sizeof p->errtext);
		}
		s->state = SLOT_FREE;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int bkp_pool_start(struct bkp_pool *p, struct bkp_vault *v, unsigned workers, size_t bufsize)
{
	memset(p, 0, sizeof *p);
	p->v = v;
	p->nslots = 2 * (size_t)workers;
	if (workers == 0 || workers > BKP_PARALLEL_MAX || !(p->slots = calloc(p->nslots, sizeof *p->slots)))
		return workers ? -ENOMEM : -EINVAL;
	for (size_t i = 0; i < p->nslots; i++)
		if (!(p->slots[i].buf = malloc(bufsize)))
			goto fail;
	if (pthread_mutex_init(&p->mu, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&p->cv, NULL) != 0) {
		pthread_mutex_destroy(&p->mu);
		goto fail;
	}
	p->inited = true;
	for (; p->nthreads < workers; p->nthreads++)
		if (pthread_create(&p->threads[p->nthreads], NULL, bkp_pool_worker, p) != 0) {
			bkp_pool_finish(p);
			return -EAGAIN;
		}
	return 0;
fail:
	for (size_t i = 0; i < p->nslots; i++)
		free(p->slots[i].buf);
	free(p->slots);
	p->slots = NULL;
	return -ENOMEM;
}

uint8_t *bkp_pool_slot(struct bkp_pool *p, int *err)
{
	uint8_t *buf = NULL;

	pthread_mutex_lock(&p->mu);
	while (!p->err) {
		for (size_t i = 0; i < p->nslots && !buf; i++)
			if (p->slots[i].state == SLOT_FREE) {
				p->slots[i].state = SLOT_TAKEN;
				buf = p->slots[i].buf;
			}
		if (buf)
			break;
		pthread_cond_wait(&p->cv, &p->mu);
	}
	*err = p->err;
	pthread_mutex_unlock(&p->mu);
	return buf;
}

void bkp_pool_submit(struct bkp_pool *p, uint8_t *buf, const char *key, size_t len)
{
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->nslots; i++)
		if (p->slots[i].buf == buf) {
			if (key) {
				memcpy(p->slots[i].key, key, sizeof p->slots[i].key);
				p->slots[i].len = len;
			}
			p->slots[i].state = key ? SLOT_READY : SLOT_FREE;
		}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int bkp_pool_drain(struct bkp_pool *p)
{
	int rc;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		bool idle = true;

		for (size_t i = 0; i < p->nslots; i++)
			idle &= p->slots[i].state == SLOT_FREE || p->slots[i].state == SLOT_TAKEN;
		if (idle)
			break;
		pthread_cond_wait(&p->cv, &p->mu);
	}
	rc = p->err;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void bkp_pool_finish(struct bkp_pool *p)
{
	if (!p->slots)
		return;
	if (p->inited) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		for (unsigned i = 0; i < p->nthreads; i++)
			pthread_join(p->threads[i], NULL);
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	for (size_t i = 0; i < p->nslots; i++)
		free(p->slots[i].buf);
	free(p->slots);
	p->slots = NULL;
}
