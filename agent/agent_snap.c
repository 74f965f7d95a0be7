/* agent_snap: a volume entry's snapshot fields (api_intent.h "snapshots")
 * applied to the shelf through agent/snap/, and reported back.
 *
 * Order within one volume: a clone's folder is made from its source snapshot
 * before the folder is attached (only while it does not exist), then a
 * revert (once per seq), then the deletes, then the creates, so a snapshot
 * the same intent asks for after a revert holds the reverted content.
 * Every step is idempotent: the intent is level-triggered and applied again
 * after a restart.
 *
 * usedBytes walk whole trees (snap_used_bytes), so they are computed by a
 * thread of their own, every --snapshot-usage-seconds (and at once after an
 * intent changed snapshots), into a table the status
 * reads; a snapshot not measured yet reports 0.
 */
#include "agent/agent_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "agent/agent_backup.h"
#include "agent/snap/snap.h"
#include "api/api_schema.h"
#include "util/ut_hex.h"

/* The last part of a volume's dir ("volumes/<hex>"): its name under
 * .snapshots; NULL when dir is not of that form (never reach elsewhere). */
static const char *snap_name_of(const char *dir)
{
	size_t l;

	if (strncmp(dir, "volumes/", 8) != 0)
		return NULL;
	dir += 8;
	l = strlen(dir);
	return l > 0 && l <= 64 && ut_hex_valid(dir, l) ? dir : NULL;
}

/* A clone of a tiered volume's snapshot: its cold chunks come back into the
 * copy before it is attached (tier_snap_fill). */
struct agent_snap_fill {
	struct tier *tier;
	uint64_t fsid;
	const char *snap;
};

static int agent_snap_fill(void *arg, int dirfd, const char *name)
{
	const struct agent_snap_fill *f = arg;

	return tier_snap_fill(f->tier, f->fsid, f->snap, dirfd, name);
}

/* A revert of a tiered volume: the copy filled, then the live map reset. */
static int agent_snap_revert_fill(void *arg, int dirfd, const char *name)
{
	const struct agent_snap_fill *f = arg;
	int rc = tier_snap_fill(f->tier, f->fsid, f->snap, dirfd, name);

	return rc ? rc : tier_snap_revert(f->tier, f->fsid);
}

/* A volume created from a backup starts as its content (agent_backup.h). */
static int agent_snap_restore(struct agent *a, const struct api_intent_snapset *ss, const char *dst, aq_msg *msg)
{
	struct api_intent_backup job = { .op = API_INTENT_BKP_RESTORE };
	int rc;

	snprintf(job.id, sizeof(job.id), "%s", ss->restore_id);
	snprintf(job.name, sizeof(job.name), "%s", ss->restore_name);
	snprintf(job.key_hex, sizeof(job.key_hex), "%s", ss->restore_key);
	snprintf(job.store_path, sizeof(job.store_path), "%s", ss->restore_store);
	rc = agent_backup_restore(a->cfg.shelf, &job, dst, msg);
	OPENSSL_cleanse(job.key_hex, sizeof(job.key_hex));
	return rc == 0 ? AQ_OK : rc;
}

int agent_snap_prepare(struct agent *a, const struct api_intent_volume *v, const struct api_intent_snapset *ss,
		       aq_msg *msg)
{
	const char *src;
	char dst[1200];
	struct stat st;
	struct agent_snap_fill fill;
	aq_msg why = { .text = "" };

	if (!ss->clone && !ss->restore)
		return AQ_OK;
	snprintf(dst, sizeof(dst), "%s/%s", a->cfg.shelf, v->dir);
	if (lstat(dst, &st) == 0)
		return AQ_OK; /* made already: a clone or a restore is made once */
	if (ss->restore)
		return agent_snap_restore(a, ss, dst, msg);
	if (!(src = snap_name_of(ss->clone_dir)) || !snap_name_of(v->dir))
		return aq_fail(msg, AQ_EINVAL, "cloneSource.dir %s is not a volume folder", ss->clone_dir);
	fill.tier = a->tier;
	fill.fsid = strtoull(src, NULL, 16);
	fill.snap = ss->clone_snap.id;
	if (snap_clone(a->cfg.shelf, src, &ss->clone_snap, dst, &(struct snap_fill){ .fn = agent_snap_fill, .arg = &fill },
		       &why) != 0)
		return aq_fail(msg, AQ_EIO, "cannot clone snapshot %s: %s", ss->clone_snap.id, why.text);
	UT_INFO("agent_snap", NULL, "volume %s made from snapshot %s of %s", v->fsid, ss->clone_snap.id, src);
	return AQ_OK;
}

void agent_snap_dir(struct agent *a, const struct api_intent_volume *v, const struct api_intent_snapset *ss,
		    char *out, size_t cap, bool *hidden)
{
	const char *name = snap_name_of(v->dir);
	/* SMB previous versions reach the snapshots without .snapshot showing */
	bool prev = (v->protocols & API_INTENT_SMB) && (v->smb_settings & API_INTENT_SMB_SHOW_PREVIOUS_VERSIONS);

	out[0] = '\0';
	*hidden = !ss->directory;
	if (!(ss->directory || prev) || !name)
		return;
	snap_dir_of(a->cfg.shelf, name, out, cap);
	if (mkdir(out, 0711) != 0 && errno != EEXIST)
		out[0] = '\0';
}

/* The tier rows of snapshots that do not exist (a create or a delete a
 * crash cut short) go. */
static void agent_snap_sweep(struct agent *a, const char *name, uint64_t fsid)
{
	struct snap_info *si = calloc(API_INTENT_MAX_SNAPSHOTS, sizeof(*si));
	struct api_intent_snap *keep = calloc(API_INTENT_MAX_SNAPSHOTS, sizeof(*keep));
	size_t n = 0, k = 0;

	if (si && keep && snap_list(a->cfg.shelf, name, si, API_INTENT_MAX_SNAPSHOTS, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (si[i].ready)
				keep[k++] = si[i].snap;
		tier_snap_sweep(a->tier, fsid, keep, k);
	}
	free(si);
	free(keep);
}

bool agent_snap_apply(struct agent *a, const struct api_intent_volume *v, const struct api_intent_snapset *ss,
		      const char *root, const char *req)
{
	const char *name = snap_name_of(v->dir);
	uint64_t fsid = strtoull(v->fsid, NULL, 16);
	bool reverted = false;
	size_t i;

	if (!name)
		return false;
	if (ss->revert_seq && ss->revert_seq > snap_revert_seq(a->cfg.shelf, name)) {
		struct agent_snap_fill fill = { .tier = a->tier, .fsid = fsid, .snap = ss->revert.id };
		aq_msg why = { .text = "" };
		/* a tiered volume: no chunk moves meanwhile; the copy gets the
		 * chunks cold at snapshot time, the old tree's rows go */
		bool tiered = tier_snap_freeze(a->tier, fsid) == 0;
		int rc = snap_revert(a->cfg.shelf, name, root, &ss->revert, ss->revert_seq,
				     tiered ? &(struct snap_fill){ .fn = agent_snap_revert_fill, .arg = &fill } : NULL, &why);

		if (tiered)
			tier_snap_thaw(a->tier, fsid);
		if (rc == 0) {
			UT_INFO("agent_snap", req, "volume %s reverted to snapshot %s (seq %llu)", v->fsid, ss->revert.id,
				(unsigned long long)ss->revert_seq);
			reverted = true;
		} else {
			UT_ERROR("agent_snap", req, "volume %s: revert to %s failed: %s", v->fsid, ss->revert.id, why.text);
			pthread_mutex_lock(&a->lock); /* the apply runs without it (agent_apply) */
			snprintf(a->last_error, sizeof(a->last_error), "volume %s: revert to %s failed: %s", v->fsid,
				 ss->revert.id, why.text);
			pthread_mutex_unlock(&a->lock);
		}
	}
	for (i = 0; i < ss->ndeletes; i++) {
		aq_msg why = { .text = "" };

		if (snap_delete(a->cfg.shelf, name, &ss->deletes[i], &why) != 0)
			UT_ERROR("agent_snap", req, "volume %s: %s", v->fsid, why.text);
		else if (!snap_exists(a->cfg.shelf, name, &ss->deletes[i]))
			tier_snap_forget(a->tier, fsid, ss->deletes[i].id, ss->deletes[i].uid); /* its cold objects may go */
	}
	for (i = 0; i < ss->nsnaps; i++) {
		struct timespec t0, t1;
		aq_msg why = { .text = "" };
		bool tiered;
		int rc;

		if (snap_exists(a->cfg.shelf, name, &ss->snaps[i]))
			continue;
		if (snap_id_used(a->cfg.shelf, name, ss->snaps[i].id)) {
			UT_ERROR("agent_snap", req, "volume %s: snapshot %s (uid %s) not made: another snapshot has that id",
				 v->fsid, ss->snaps[i].id, ss->snaps[i].uid);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* a tiered volume: no chunk moves while the snapshot is made, and
		 * its copy of the chunk rows is durable before it exists */
		tiered = tier_snap_freeze(a->tier, fsid) == 0;
		if (tiered && tier_snap_record(a->tier, fsid, ss->snaps[i].id, ss->snaps[i].uid) != 0) {
			tier_snap_thaw(a->tier, fsid);
			UT_ERROR("agent_snap", req, "volume %s: snapshot %s: cannot record its cold chunks", v->fsid,
				 ss->snaps[i].id);
			continue; /* tried again at the next intent */
		}
		rc = snap_create(a->cfg.shelf, name, root, fsid, &ss->snaps[i], &why);
		if (tiered)
			tier_snap_thaw(a->tier, fsid);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (rc == 0)
			UT_INFO("agent_snap", req, "volume %s: snapshot %s made in %.3f s", v->fsid, ss->snaps[i].id,
				(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		else if (rc != -EEXIST)
			UT_ERROR("agent_snap", req, "volume %s: snapshot %s failed: %s", v->fsid, ss->snaps[i].id, why.text);
	}
	agent_snap_sweep(a, name, fsid);
	return reverted;
}

uint64_t agent_snap_tree_seq(struct agent *a, const struct api_intent_volume *v)
{
	const char *name = snap_name_of(v->dir);

	return name ? snap_revert_seq(a->cfg.shelf, name) : 0;
}

void agent_snap_destroy(struct agent *a, const char *dir)
{
	const char *name = snap_name_of(dir);

	if (name)
		snap_destroy_volume(a->cfg.shelf, name);
}

/* ---------- usedBytes, in the background ---------- */

struct agent_snap_used {
	char name[65];
	struct api_intent_snap snap;
	uint64_t bytes;
};

static uint64_t agent_snap_lookup_used(struct agent *a, const char *name, const struct api_intent_snap *s)
{
	uint64_t b = 0;

	pthread_mutex_lock(&a->snap_mu);
	for (size_t i = 0; i < a->nsnap_used; i++) {
		const struct agent_snap_used *u = &a->snap_used[i];

		if (!strcmp(u->name, name) && !strcmp(u->snap.id, s->id) && !strcmp(u->snap.uid, s->uid)) {
			b = u->bytes;
			break;
		}
	}
	pthread_mutex_unlock(&a->snap_mu);
	return b;
}

int agent_snap_status(struct agent *a, const char *dir, json_t *doc)
{
	const char *name = snap_name_of(dir);
	struct snap_info *si = NULL;
	json_t *list = json_array();
	uint64_t total = 0;
	size_t n = 0, i;

	if (!list)
		return AQ_ENOMEM;
	if (name && (si = calloc(API_INTENT_MAX_SNAPSHOTS, sizeof(*si))) != NULL)
		snap_list(a->cfg.shelf, name, si, API_INTENT_MAX_SNAPSHOTS, &n);
	for (i = 0; i < n; i++) {
		struct api_intent_snap_state st = {
			.snap = si[i].snap,
			.ready = si[i].ready,
			.create_unix = si[i].create_unix,
			.used_bytes = si[i].ready ? agent_snap_lookup_used(a, name, &si[i].snap) : 0,
		};

		snprintf(st.detail, sizeof(st.detail), "%s", si[i].detail);
		total += st.used_bytes;
		json_array_append_new(list, api_intent_snap_state_encode(&st));
	}
	free(si);
	json_object_set_new(doc, "snapshots", list);
	json_object_set_new(doc, "revertSeq", json_integer(name ? (json_int_t)snap_revert_seq(a->cfg.shelf, name) : 0));
	json_object_set_new(doc, "snapshotBytes", json_integer((json_int_t)total));
	json_object_set_new(doc, "snapshotCount", json_integer((json_int_t)n));
	return AQ_OK;
}

/* One measuring round over the volumes of the applied intent. */
static void agent_snap_measure(struct agent *a)
{
	struct agent_snap_used *tab = NULL;
	struct snap_info *si = calloc(API_INTENT_MAX_SNAPSHOTS, sizeof(*si));
	json_t *vols, *v;
	size_t i, ntab = 0, cap = 0;

	pthread_mutex_lock(&a->lock);
	vols = json_deep_copy(json_object_get(a->intent, "volumes"));
	pthread_mutex_unlock(&a->lock);
	json_array_foreach(vols, i, v) {
		const char *name = snap_name_of(api_json_str(v, "dir", ""));
		size_t n = 0;

		if (!name || !si || snap_list(a->cfg.shelf, name, si, API_INTENT_MAX_SNAPSHOTS, &n) != 0)
			continue;
		for (size_t k = 0; k < n; k++) {
			uint64_t b = 0;

			if (!si[k].ready || snap_used_bytes(a->cfg.shelf, name, si[k].snap.id, &b) != 0)
				continue;
			if (ntab == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct agent_snap_used *t = realloc(tab, nc * sizeof(*t));

				if (!t)
					goto out;
				tab = t;
				cap = nc;
			}
			snprintf(tab[ntab].name, sizeof(tab[ntab].name), "%s", name);
			tab[ntab].snap = si[k].snap;
			tab[ntab++].bytes = b;
		}
	}
	pthread_mutex_lock(&a->snap_mu);
	free(a->snap_used);
	a->snap_used = tab;
	a->nsnap_used = ntab;
	tab = NULL;
	pthread_mutex_unlock(&a->snap_mu);
out:
	free(tab);
	free(si);
	json_decref(vols);
}

static void *agent_snap_usage(void *arg)
{
	struct agent *a = arg;

	pthread_mutex_lock(&a->snap_mu);
	while (!a->snap_stop) {
		struct timespec until;

		pthread_mutex_unlock(&a->snap_mu);
		agent_snap_measure(a);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += a->cfg.snap_usage_s ? a->cfg.snap_usage_s : 1;
		pthread_mutex_lock(&a->snap_mu);
		if (!a->snap_stop && !a->snap_kick)
			pthread_cond_timedwait(&a->snap_cv, &a->snap_mu, &until);
		a->snap_kick = false;
	}
	pthread_mutex_unlock(&a->snap_mu);
	return NULL;
}

void agent_snap_kick(struct agent *a)
{
	pthread_mutex_lock(&a->snap_mu);
	a->snap_kick = true;
	pthread_cond_signal(&a->snap_cv);
	pthread_mutex_unlock(&a->snap_mu);
}

int agent_snap_usage_start(struct agent *a)
{
	return pthread_create(&a->snap_thread, NULL, agent_snap_usage, a) == 0 ? AQ_OK : AQ_EINTERNAL;
}

void agent_snap_usage_stop(struct agent *a)
{
	pthread_mutex_lock(&a->snap_mu);
	a->snap_stop = true;
	pthread_cond_signal(&a->snap_cv);
	pthread_mutex_unlock(&a->snap_mu);
	pthread_join(a->snap_thread, NULL);
	free(a->snap_used);
	a->snap_used = NULL;
	a->nsnap_used = 0;
}
