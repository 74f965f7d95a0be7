/* srv_bkpsched: the scheduled-backup scheduler (see srv_bkpsched.h). The
 * slot arithmetic is the snapshot scheduler's (api_snapshot_slot, pure and
 * unit-tested) on fixed times; this file walks the volumes, records the
 * slots taken, and starts creates and deletes through srv_backup.h, so a
 * scheduled backup is made, reported and deleted exactly as a manual one.
 * Each volume and kind has its own transaction, so a refusal rolls back
 * only what that one kind wrote. */
#include "server/srv_bkpsched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_math.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_backup.h"
#include "server/srv_backup_int.h"
#include "server/srv_internal.h"
#include "server/srv_lead.h"
#include "util/ut_clock.h"
#include "util/ut_log.h"

/* The kinds, their policy field and their fixed times (GCNV's policies
 * name no times): 00:00 UTC daily, Sundays weekly, the 1st monthly. The
 * rarest first: when slots coincide, one backup of a volume runs at a
 * time, and a daily that waits loses a day where a monthly would lose a
 * month. */
static const struct bs_kind {
	const char *kind, *limit;
	unsigned weekdays, monthdays;
} bs_kinds[] = {
	{ .kind = "monthly", .limit = "monthlyBackupLimit", .monthdays = 1u << 1 },
	{ .kind = "weekly", .limit = "weeklyBackupLimit", .weekdays = 1u },
	{ .kind = "daily", .limit = "dailyBackupLimit" },
};

int64_t srv_bkpsched_now(const struct srv *srv)
{
	int64_t ms = ut_clock_real_ms();
	int period = srv->cfg.backup_schedule_period;

	/* a day lasts period seconds: t = ms * 86400 / (period * 1000) */
	return period > 0 ? ms / 1000 * 86400 / period + (ms % 1000) * 86400 / period / 1000 : ms / 1000;
}

static int bs_slot_cmp(const void *a, const void *b)
{
	int64_t x = api_json_int64(*(json_t *const *)a, "slot", 0), y = api_json_int64(*(json_t *const *)b, "slot", 0);

	return x < y ? -1 : x > y;
}

/* Delete the oldest READY scheduled backups of kind past limit. */
static int bs_prune(struct db *db, const char *location, const char *vault, const char *vn, const char *kind,
		    int64_t limit, int *made)
{
	json_t *refs = NULL, *r, **mine = NULL;
	size_t i, n = 0;
	int rc;

	if ((rc = srv_bk_refs_of(db, location, vault, vn, &refs)) != AQ_OK)
		return rc;
	if (!(mine = calloc(json_array_size(refs) + 1, sizeof(*mine)))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	json_array_foreach(refs, i, r)
		if (strcmp(api_json_str(r, "sched", ""), kind) == 0 && api_json_bool(r, "ready", false) &&
		    !*api_json_str(r, "action", ""))
			mine[n++] = r;
	qsort(mine, n, sizeof(*mine), bs_slot_cmp);
	for (i = 0; n > (size_t)limit && i < n - (size_t)limit; i++) {
		aq_msg why = { .text = "" };

		rc = srv_backup_start_delete(db, api_json_str(mine[i], "backup", ""), "", &why);
		if (rc == AQ_EPRECOND) { /* retained, or restored from: a later pass */
			rc = AQ_OK;
			continue;
		}
		if (rc != AQ_OK)
			goto out;
		UT_INFO("srv_bkpsched", NULL, "volume %s: scheduled backup %s deleted (%s limit %lld)", vn,
			api_json_str(mine[i], "backup", ""), kind, (long long)limit);
		(*made)++;
	}
out:
	free(mine);
	json_decref(refs);
	return rc;
}

/* The volume's schedule when it has one: its vault and the policy's limit
 * for kind k. AQ_ENOENT when it has none (or the volume is not served). */
static int bs_schedule(struct db *db, const json_t *vol, int k, const char **vault, int64_t *limit)
{
	const json_t *bc = json_object_get(vol, "backupConfig");
	const char *st = api_json_str(vol, "state", ""), *pn = json_string_value(json_array_get(json_object_get(bc, "backupPolicies"), 0));
	json_t *pol = NULL;
	int rc;

	*vault = api_json_str(bc, "backupVault", "");
	if (!api_json_bool(bc, "scheduledBackupEnabled", false) || !pn || !**vault ||
	    (strcmp(st, "READY") != 0 && strcmp(st, "UPDATING") != 0))
		return AQ_ENOENT;
	if ((rc = db_get(db, pn, &pol)) != AQ_OK)
		return rc;
	*limit = api_json_int64(pol, bs_kinds[k].limit, 0);
	rc = api_json_bool(pol, "enabled", true) ? AQ_OK : AQ_ENOENT;
	json_decref(pol);
	return rc;
}

/* Record slot as kind's last in the volume's record (created when absent). */
static int bs_take(struct db *db, const char *vn, const char *kind, int64_t slot)
{
	char rn[800];
	json_t *rec = NULL;
	bool fresh = false;
	int rc;

	snprintf(rn, sizeof(rn), "bkpscheds/%s", vn);
	if ((rc = db_get(db, rn, &rec)) == AQ_ENOENT) {
		fresh = true;
		rc = (rec = json_pack("{s:s}", "volume", vn)) ? AQ_OK : AQ_ENOMEM;
	}
	if (rc == AQ_OK) {
		json_object_set_new(rec, kind, json_integer(slot));
		rc = db_put(db, "bkpsched", "", rn, rec, fresh);
	}
	json_decref(rec);
	return rc;
}

static int64_t bs_last(struct db *db, const char *vn, const char *kind)
{
	char rn[800];
	json_t *rec = NULL;
	int64_t last = INT64_MIN;

	snprintf(rn, sizeof(rn), "bkpscheds/%s", vn);
	if (db_get(db, rn, &rec) == AQ_OK)
		last = api_json_int64(rec, kind, INT64_MIN);
	json_decref(rec);
	return last;
}

/* Start the backup of slot; *take: the slot is taken (started, or refused
 * for good), false when it must wait. */
static int bs_start(struct db *db, const json_t *vol, const char *vault, const char *kind, int64_t slot, bool *take,
		    int *made)
{
	const char *vn = api_json_str(vol, "name", ""), *vid = strrchr(vn, '/');
	struct srv_backup_spec sp = { .vault = vault, .type = "SCHEDULED", .kind = kind, .slot = slot, .op = "" };
	char id[80];
	aq_msg why = { .text = "" };
	int rc;

	api_backup_sched_id(kind, vid ? vid + 1 : vn, slot, id, sizeof(id));
	sp.id = id;
	if (!(sp.doc = json_pack("{s:s}", "sourceVolume", vn)))
		return AQ_ENOMEM;
	rc = srv_backup_start(db, &sp, &why);
	json_decref(sp.doc);
	*take = rc != AQ_EPRECOND;
	if (rc == AQ_OK) {
		(*made)++;
		UT_INFO("srv_bkpsched", NULL, "volume %s: scheduled backup %s started in %s", vn, id, vault);
	} else if (rc == AQ_EPRECOND) {
		UT_DEBUG("srv_bkpsched", NULL, "volume %s: %s backup waits: %s", vn, kind, why.text);
	} else if (rc == AQ_EINVAL || rc == AQ_ENOENT || rc == AQ_EEXIST || rc == AQ_EEXHAUSTED) {
		UT_WARN("srv_bkpsched", NULL, "volume %s: %s backup %s skipped: %s", vn, kind, id, why.text);
	}
	return rc;
}

/* Volume vn, kind k, at time t: in its own transaction. */
static int bs_volume_kind(struct db *db, const struct db_fence *fence, const char *vn, int k, int64_t t, int *made)
{
	struct api_snap_sched s = { .kind = bs_kinds[k].kind, .weekdays = bs_kinds[k].weekdays,
				    .monthdays = bs_kinds[k].monthdays };
	const char *vault = "";
	char location[80];
	json_t *vol = NULL;
	int64_t limit = 0, slot = api_snapshot_slot(&s, t), last;
	bool take = true, again = false;
	int rc;

	api_name_location(vn, location, sizeof(location));
	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	/* the leader's epoch is still current: a stale leader records nothing;
	 * read again in the transaction: a delete may have started since the list */
	if ((rc = srv_lead_fence(db, fence)) != AQ_OK || (rc = db_get(db, vn, &vol)) != AQ_OK ||
	    (rc = bs_schedule(db, vol, k, &vault, &limit)) != AQ_OK)
		goto out;
	last = bs_last(db, vn, s.kind);
	if (slot != INT64_MIN && slot > last) {
		/* a kind first seen starts at its next slot; a limit of 0 takes none */
		if (last != INT64_MIN && limit > 0 && (rc = bs_start(db, vol, vault, s.kind, slot, &take, made)) != AQ_OK) {
			db_rollback(db); /* what the refused start wrote */
			if (rc != AQ_EPRECOND && rc != AQ_EINVAL && rc != AQ_ENOENT && rc != AQ_EEXIST && rc != AQ_EEXHAUSTED)
				goto out;
			if ((rc = db_begin(db)) != AQ_OK || (rc = srv_lead_fence(db, fence)) != AQ_OK)
				goto out;
			again = true;
		}
		if (take && (rc = bs_take(db, vn, s.kind, slot)) != AQ_OK)
			goto out;
	}
	if (!again && (rc = bs_prune(db, location, vault, vn, s.kind, limit, made)) != AQ_OK)
		goto out;
	rc = db_commit(db);
out:
	db_rollback(db);
	json_decref(vol);
	return rc == AQ_ENOENT ? AQ_OK : rc;
}

int srv_bkpsched_pass(struct db *db, const struct db_fence *fence, int64_t t, int *made)
{
	json_t *vols = NULL, *v;
	size_t i;
	int rc;

	if ((rc = db_list_all(db, &(struct db_query){ .kind = "volume", .filter = "backupConfig.scheduledBackupEnabled=true" },
			      &vols, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(vols, i, v)
		for (int k = 0; k < (int)(sizeof(bs_kinds) / sizeof(bs_kinds[0])); k++)
			if ((rc = bs_volume_kind(db, fence, api_json_str(v, "name", ""), k, t, made)) != AQ_OK)
				goto out;
out:
	json_decref(vols);
	return rc;
}
