/* srv_lead: the leader lease's thread and the leadership view (see
 * srv_lead.h). */
#include "server/srv_lead.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "util/ut_clock.h"
#include "util/ut_log.h"

struct srv_lead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	char holder[128];
	/* under lock */
	bool leader;            /* the last take or renew succeeded */
	bool ticked;            /* a take or renew was answered once */
	int64_t epoch;          /* ours when leader, else the holder's last seen */
	uint64_t valid_until;   /* monotonic ms: leads until then at most */
	int64_t since_ms;       /* wall ms our epoch began */
	char url[256];          /* the holder's public URL, last seen */
};

bool srv_lead_held(struct srv *srv, struct db_fence *f)
{
	struct srv_lead *l = srv->lead;
	bool held;

	if (!l) {
		if (f)
			*f = (struct db_fence){ .lease = NULL };
		return true;
	}
	pthread_mutex_lock(&l->lock);
	held = l->leader && ut_clock_mono_ms() < l->valid_until;
	if (held && f)
		*f = (struct db_fence){ .lease = SRV_LEAD_LEASE, .holder = l->holder, .epoch = l->epoch };
	pthread_mutex_unlock(&l->lock);
	return held;
}

int srv_lead_fence(struct db *db, const struct db_fence *f)
{
	int rc;

	if (!f || !f->lease)
		return AQ_OK;
	rc = db_lease_check(db, f, ut_clock_real_ms());
	if (rc == AQ_EPRECOND)
		UT_WARN("srv_lead", NULL, "write of epoch %lld refused: this replica no longer holds the leader lease",
			(long long)f->epoch);
	return rc;
}

int64_t srv_lead_since_ms(struct srv *srv)
{
	int64_t since = 0;

	if (!srv->lead)
		return 0;
	if (srv_lead_held(srv, NULL)) {
		pthread_mutex_lock(&srv->lead->lock);
		since = srv->lead->since_ms;
		pthread_mutex_unlock(&srv->lead->lock);
	}
	return since;
}

void srv_lead_view(struct srv *srv, json_t *obj)
{
	struct srv_lead *l = srv->lead;
	bool held = srv_lead_held(srv, NULL);

	json_object_set_new(obj, "leader", json_boolean(held));
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	json_object_set_new(obj, "leaderEpoch", json_integer(l->epoch));
	json_object_set_new(obj, "leaderUrl", json_string(held ? srv->cfg.public_url : l->url));
	pthread_mutex_unlock(&l->lock);
}

/* One take or renew; logs each change of role. */
static void lead_tick(struct srv *srv, struct db *db)
{
	struct srv_lead *l = srv->lead;
	struct db_lease got = { .epoch = 0 };
	uint64_t t0 = ut_clock_mono_ms();
	int64_t now = ut_clock_real_ms();
	int rc = db_lease_take(db, SRV_LEAD_LEASE, l->holder, srv->cfg.public_url, now, srv->cfg.lead_lease_ms, &got);
	bool was, kick = false;

	pthread_mutex_lock(&l->lock);
	was = l->leader && t0 < l->valid_until;
	if (rc == AQ_OK) {
		if (!was || got.epoch != l->epoch) {
			l->since_ms = now;
			kick = true;
			UT_INFO("srv_lead", NULL, "leader: took the lease at epoch %lld (lease %d ms, renewed every %d ms)",
				(long long)got.epoch, srv->cfg.lead_lease_ms, srv->cfg.lead_renew_ms);
		}
		l->leader = true;
		l->epoch = got.epoch;
		l->valid_until = t0 + (uint64_t)srv->cfg.lead_lease_ms;
	} else if (rc == AQ_EPRECOND) {
		if (was || l->epoch != got.epoch)
			UT_INFO("srv_lead", NULL, "follower: %s (%s) leads at epoch %lld", got.holder, got.url,
				(long long)got.epoch);
		l->leader = false;
		l->epoch = got.epoch;
	} else if (was && ut_clock_mono_ms() >= l->valid_until) {
		UT_WARN("srv_lead", NULL, "lease of epoch %lld expired unrenewed (%s): no longer leading",
			(long long)l->epoch, aq_err_str(rc));
		l->leader = false;
	} else if (rc != AQ_EBUSY) {
		UT_WARN("srv_lead", NULL, "cannot take or renew the leader lease: %s", aq_err_str(rc));
	}
	if (rc == AQ_OK || rc == AQ_EPRECOND)
		snprintf(l->url, sizeof(l->url), "%s", got.url);
	/* a replica taking over wakes its reconciler at once; at start it
	 * makes its first pass when it would without a lease (within 1 s) */
	kick = kick && l->ticked;
	if (rc == AQ_OK || rc == AQ_EPRECOND)
		l->ticked = true;
	pthread_mutex_unlock(&l->lock);
	if (kick)
		srv_kick(srv, NULL); /* a new leader's first pass visits every node */
}

static void *lead_main(void *arg)
{
	struct srv *srv = arg;
	struct srv_lead *l = srv->lead;
	struct db *db = NULL;
	aq_msg msg = { .text = "" };
	struct db_fence f;

	pthread_mutex_lock(&l->lock);
	while (!l->stop) {
		struct timespec until;

		pthread_mutex_unlock(&l->lock);
		if (!db && db_open(srv->cfg.db_path, &db, &msg) != AQ_OK)
			UT_WARN("srv_lead", NULL, "leader lease: %s", msg.text);
		if (db)
			lead_tick(srv, db);
		pthread_mutex_lock(&l->lock);
		ut_clock_deadline(&until, (uint64_t)srv->cfg.lead_renew_ms);
		while (!l->stop && pthread_cond_timedwait(&l->cond, &l->lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&l->lock);
	if (db && srv_lead_held(srv, &f) && db_lease_release(db, &f) == AQ_OK)
		UT_INFO("srv_lead", NULL, "gave the leader lease of epoch %lld up", (long long)f.epoch);
	db_close(db);
	return NULL;
}

int srv_lead_start(struct srv *srv, aq_msg *msg)
{
	char host[64] = "localhost";

	if (srv_cfg_check(&srv->cfg, msg) != AQ_OK)
		return AQ_EINVAL;
	if (!(srv->lead = calloc(1, sizeof(*srv->lead))))
		return AQ_ENOMEM;
	gethostname(host, sizeof(host) - 1);
	snprintf(srv->lead->holder, sizeof(srv->lead->holder), "%s/%s", host, srv->cfg.listen);
	pthread_mutex_init(&srv->lead->lock, NULL);
	pthread_cond_init(&srv->lead->cond, NULL);
	if (pthread_create(&srv->lead->thread, NULL, lead_main, srv) != 0) {
		pthread_cond_destroy(&srv->lead->cond);
		pthread_mutex_destroy(&srv->lead->lock);
		free(srv->lead);
		srv->lead = NULL;
		return aq_fail(msg, AQ_EINTERNAL, "cannot start the leader lease thread");
	}
	return AQ_OK;
}

void srv_lead_stop(struct srv *srv)
{
	struct srv_lead *l = srv->lead;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	free(l);
	srv->lead = NULL;
}
