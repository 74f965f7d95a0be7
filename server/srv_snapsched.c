/* srv_snapsched: the snapshotPolicy scheduler (see srv_snapsched.h). The
 * slot arithmetic is api_snapshot.c's (pure, unit-tested); this file walks
 * the volumes, records the slots taken and starts the creates and deletes
 * through srv_snapshot.h, so a scheduled snapshot is made and reported
 * exactly as a manual one. */
#include "server/srv_snapsched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_bkpsched.h"
#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "server/srv_lead.h"
#include "server/srv_mark.h"
#include "server/srv_snapshot.h"
#include "util/ut_clock.h"
#include "util/ut_log.h"

struct srv_sched {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
};

int64_t srv_snapsched_now(const struct srv *srv)
{
	int64_t ms = ut_clock_real_ms();
	int period = srv->cfg.snapshot_schedule_period;

	return period > 0 ? ms / 1000 * 3600 / period + (ms % 1000) * 3600 / period / 1000 : ms / 1000;
}

/* The scheduled snapshots of kind that count toward snapshotsToKeep
 * (created or being created, not being deleted), oldest slot first. */
static int sched_cmp(const void *a, const void *b)
{
	int64_t x = api_json_int64(*(json_t *const *)a, "slot", 0), y = api_json_int64(*(json_t *const *)b, "slot", 0);

	return x < y ? -1 : x > y;
}

/* Delete the oldest of kind past keep (a clone's source stays). */
static int sched_trim(struct db *db, const char *vn, const char *kind, int keep, int *made)
{
	json_t *refs = NULL, *r, **mine = NULL;
	size_t i, n = 0;
	int rc;

	if ((rc = db_list_all(db, &(struct db_query){ .kind = "snapref", .parent = vn }, &refs, NULL)) != AQ_OK)
		return rc;
	if (!(mine = calloc(json_array_size(refs) + 1, sizeof(*mine)))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	json_array_foreach(refs, i, r)
		if (strcmp(api_json_str(r, "sched", ""), kind) == 0 && strcmp(api_json_str(r, "action", ""), "delete") != 0)
			mine[n++] = r;
	qsort(mine, n, sizeof(*mine), sched_cmp);
	for (i = 0; n > (size_t)keep && i < n - (size_t)keep; i++) {
		json_t *snap = NULL;
		aq_msg why = { .text = "" };

		if ((rc = db_get(db, api_json_str(mine[i], "snapshot", ""), &snap)) != AQ_OK)
			goto out;
		rc = srv_snapshot_start_delete(db, snap, "", &why);
		json_decref(snap);
		if (rc == AQ_EPRECOND) {
			rc = AQ_OK; /* being created, or a clone's source: the next pass */
			continue;
		}
		if (rc != AQ_OK)
			goto out;
		(*made)++;
	}
out:
	free(mine);
	json_decref(refs);
	return rc;
}

/* One volume at time t, in its own transaction. */
static int sched_volume(struct db *db, const struct db_fence *fence, const char *vn, int64_t t, int *made)
{
	char sname[800], made_ids[8][80];
	json_t *vol = NULL, *rec = NULL, *marked = NULL;
	bool dirty = false, fresh = false;
	int rc, nmade = 0, made0 = *made;

	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	/* the leader's epoch is still current: a stale leader records no slot */
	if ((rc = srv_lead_fence(db, fence)) != AQ_OK || (rc = db_get(db, vn, &vol)) != AQ_OK)
		goto out;
	/* read again in the transaction: a delete may have started since the list */
	if (strcmp(api_json_str(vol, "state", ""), "READY") != 0 && strcmp(api_json_str(vol, "state", ""), "UPDATING") != 0)
		goto out;
	snprintf(sname, sizeof(sname), "snapscheds/%s", vn);
	if ((rc = db_get(db, sname, &rec)) == AQ_ENOENT) {
		fresh = true;
		rec = json_pack("{s:s}", "volume", vn);
		rc = rec ? AQ_OK : AQ_ENOMEM;
	}
	if (rc != AQ_OK)
		goto out;
	for (int k = 0; k < api_snapshot_kind_count(); k++) {
		struct api_snap_sched s;
		int64_t slot, last;
		char id[80], sig[64], sigkey[32];
		aq_msg why = { .text = "" };

		if (api_snapshot_kind(k, &s, vol) != AQ_OK)
			continue;
		slot = api_snapshot_slot(&s, t);
		/* a changed schedule starts at its next slot, as a new one does */
		snprintf(sig, sizeof(sig), "%d:%d:%x:%x", s.minute, s.hour, s.weekdays, s.monthdays);
		snprintf(sigkey, sizeof(sigkey), "%sTimes", s.kind);
		last = strcmp(api_json_str(rec, sigkey, ""), sig) == 0 ? api_json_int64(rec, s.kind, INT64_MIN) : INT64_MIN;
		if (last == INT64_MIN) {
			json_object_set_new(rec, sigkey, json_string(sig));
			dirty = true;
		}
		if (slot == INT64_MIN || slot <= last)
			continue;
		json_object_set_new(rec, s.kind, json_integer(slot));
		dirty = true;
		/* a schedule first seen starts at its next slot */
		if (last == INT64_MIN || s.keep == 0)
			continue;
		api_snapshot_sched_id(s.kind, slot, id, sizeof(id));
		rc = srv_snapshot_add(db, vol, id, NULL, "", s.kind, slot, &why);
		if (rc == AQ_EEXIST || rc == AQ_EEXHAUSTED) {
			UT_WARN("srv_snapsched", NULL, "volume %s: %s snapshot skipped: %s", vn, s.kind, why.text);
			rc = AQ_OK;
		} else if (rc == AQ_OK) {
			(*made)++;
			if (nmade < 8)
				snprintf(made_ids[nmade++], sizeof(made_ids[0]), "%s", id);
		}
		if (rc != AQ_OK || (rc = sched_trim(db, vn, s.kind, s.keep, made)) != AQ_OK)
			goto out;
	}
	if (dirty && (rc = db_put(db, "snapsched", "", sname, rec, fresh)) != AQ_OK)
		goto out;
	/* snapshots made or trimmed: the volume's node, and no other, gets a
	 * new intent (srv_mark.h) */
	if (*made > made0 && (marked = json_object()) && (rc = srv_mark_volume(db, vn, marked)) != AQ_OK)
		goto out;
	if ((rc = db_commit(db)) == AQ_OK)
		for (int i = 0; i < nmade; i++) /* which replica made each slot's snapshot, at which epoch */
			UT_INFO("srv_snapsched", NULL, "volume %s: scheduled snapshot %s made (leader epoch %lld)", vn,
				made_ids[i], (long long)(fence && fence->lease ? fence->epoch : 0));
out:
	db_rollback(db);
	json_decref(vol);
	json_decref(rec);
	json_decref(marked);
	return rc;
}

int srv_snapsched_pass(struct db *db, const struct db_fence *fence, int64_t t, int *made)
{
	json_t *vols = NULL, *v;
	size_t i;
	int rc;

	/* only volumes a node serves take snapshots */
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "volume", .filter = "snapshotPolicy.enabled=true" }, &vols, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(vols, i, v) {
		const char *st = api_json_str(v, "state", "");

		if (strcmp(st, "READY") != 0 && strcmp(st, "UPDATING") != 0)
			continue;
		if ((rc = sched_volume(db, fence, api_json_str(v, "name", ""), t, made)) != AQ_OK && rc != AQ_ENOENT)
			break;
		rc = AQ_OK;
	}
	json_decref(vols);
	return rc;
}

static void *sched_main(void *arg)
{
	struct srv *srv = arg;
	struct srv_sched *s = srv->sched;
	struct db *db = NULL;
	aq_msg msg = { .text = "" };
	/* a tick well inside the shortest slot: a minute of the clock */
	int tick_ms = srv->cfg.snapshot_schedule_period > 0 || srv->cfg.backup_schedule_period > 0 ? 200 : 10000;

	if (db_open(srv->cfg.db_path, &db, &msg) != AQ_OK) {
		UT_ERROR("srv_snapsched", NULL, "snapshot scheduler: %s", msg.text);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec until;
		struct db_fence fence;
		int made = 0, rc = AQ_OK;

		pthread_mutex_unlock(&s->lock);
		/* the leader's job (srv_lead.h) */
		if (srv_lead_held(srv, &fence)) {
			if ((rc = srv_snapsched_pass(db, &fence, srv_snapsched_now(srv), &made)) != AQ_OK)
				UT_WARN("srv_snapsched", NULL, "snapshot schedule pass: %s", aq_err_str(rc));
			/* scheduled backups share the thread (srv_bkpsched.h) */
			if ((rc = srv_bkpsched_pass(db, &fence, srv_bkpsched_now(srv), &made)) != AQ_OK)
				UT_WARN("srv_bkpsched", NULL, "backup schedule pass: %s", aq_err_str(rc));
		}
		if (made) /* their nodes are marked (srv_mark.h, srv_bk_mark) */
			srv_kick_marks(srv);
		pthread_mutex_lock(&s->lock);
		ut_clock_deadline(&until, tick_ms);
		while (!s->stop && pthread_cond_timedwait(&s->cond, &s->lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&s->lock);
	db_close(db);
	return NULL;
}

int srv_snapsched_start(struct srv *srv, aq_msg *msg)
{
	if (!(srv->sched = calloc(1, sizeof(*srv->sched))))
		return AQ_ENOMEM;
	pthread_mutex_init(&srv->sched->lock, NULL);
	pthread_cond_init(&srv->sched->cond, NULL);
	if (pthread_create(&srv->sched->thread, NULL, sched_main, srv) != 0) {
		free(srv->sched);
		srv->sched = NULL;
		return aq_fail(msg, AQ_EINTERNAL, "cannot start the snapshot scheduler");
	}
	return AQ_OK;
}

void srv_snapsched_stop(struct srv *srv)
{
	struct srv_sched *s = srv->sched;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
	srv->sched = NULL;
}
