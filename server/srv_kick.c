/* srv_kick: the reconciler's doorbell (see srv_kick.h). */
#include "server/srv_kick.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "api/api_error.h"
#include "server/srv_internal.h"
#include "util/ut_clock.h"

struct srv_kick {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool rung, stop;
	json_t *dirty;             /* {node name: wall ms of its first ring} */
	bool all;
};

int srv_kick_init(struct srv *srv)
{
	if (!(srv->kick = calloc(1, sizeof(*srv->kick))))
		return AQ_ENOMEM;
	pthread_mutex_init(&srv->kick->lock, NULL);
	pthread_cond_init(&srv->kick->cond, NULL);
	return AQ_OK;
}

void srv_kick_free(struct srv *srv)
{
	if (!srv->kick)
		return;
	json_decref(srv->kick->dirty);
	pthread_cond_destroy(&srv->kick->cond);
	pthread_mutex_destroy(&srv->kick->lock);
	free(srv->kick);
	srv->kick = NULL;
}

void srv_kick(struct srv *srv, const char *node)
{
	struct srv_kick *k = srv->kick;

	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	if (!node)
		k->all = true;
	else if ((k->dirty || (k->dirty = json_object())) && !json_object_get(k->dirty, node))
		json_object_set_new(k->dirty, node, json_integer(ut_clock_real_ms()));
	k->rung = true;
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->lock);
}

void srv_kick_marks(struct srv *srv)
{
	struct srv_kick *k = srv->kick;

	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	k->rung = true;
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->lock);
}

void srv_kick_stop(struct srv *srv)
{
	pthread_mutex_lock(&srv->kick->lock);
	srv->kick->stop = true;
	pthread_cond_signal(&srv->kick->cond);
	pthread_mutex_unlock(&srv->kick->lock);
}

bool srv_kick_wait(struct srv *srv, json_t **dirty, bool *all)
{
	struct srv_kick *k = srv->kick;
	struct timespec until;
	bool go;

	pthread_mutex_lock(&k->lock);
	ut_clock_deadline(&until, 1000);
	while (!k->rung && !k->stop)
		if (pthread_cond_timedwait(&k->cond, &k->lock, &until) != 0)
			break;
	k->rung = false;
	go = !k->stop;
	*dirty = go ? k->dirty : NULL;
	*all = go && k->all;
	if (go) {
		k->dirty = NULL;
		k->all = false;
	}
	pthread_mutex_unlock(&k->lock);
	return go;
}
