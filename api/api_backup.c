/* api_backup: the BackupVault and BackupPolicy resources
 * (google.cloud.netapp.v1.BackupVault, .BackupPolicy; issue 21): their
 * field tables and the rules beyond field types. All pure: whether a
 * CROSS_REGION vault's backupRegion names a location that exists is the
 * server's check (srv_bvault.c). The Backup field table and its pure rules
 * (body, retention end, the early-delete refusal) serve the backups routes
 * (server/srv_backup.h). A volume's backupConfig is checked against the
 * database by server/srv_bconfig.h; its scheduledBackupEnabled true stays
 * refused by name (api_volume_check_supported). */
#include "api/api_resource.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>


static const char *const bkp_states[] = { "STATE_UNSPECIFIED", "CREATING", "READY", "DELETING", "ERROR",
					  "UPDATING", NULL };
static const char *const vault_types[] = { "BACKUP_VAULT_TYPE_UNSPECIFIED", "IN_REGION", "CROSS_REGION", NULL };

static const struct api_field retention_fields[] = {
	{ "backupMinimumEnforcedRetentionDays", API_T_INT32, API_F_REQUIRED, NULL, NULL, 0 },
	{ "dailyBackupImmutable", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "weeklyBackupImmutable", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "monthlyBackupImmutable", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "manualBackupImmutable", API_T_BOOL, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

const struct api_field api_backup_vault_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "state", API_T_ENUM, API_F_OUTPUT, bkp_states, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "description", API_T_STRING, 0, NULL, NULL, 2048 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "backupVaultType", API_T_ENUM, API_F_IMMUTABLE, vault_types, NULL, 0 },
	{ "backupRegion", API_T_STRING, API_F_IMMUTABLE, NULL, NULL, 63 },
	{ "sourceRegion", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "sourceBackupVault", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "destinationBackupVault", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "backupRetentionPolicy", API_T_OBJECT, 0, NULL, retention_fields, 0 },
	{ "kmsConfig", API_T_STRING, 0, NULL, NULL, 0 },
	{ "encryptionState", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

const struct api_field api_backup_policy_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "dailyBackupLimit", API_T_INT32, 0, NULL, NULL, 0 },
	{ "weeklyBackupLimit", API_T_INT32, 0, NULL, NULL, 0 },
	{ "monthlyBackupLimit", API_T_INT32, 0, NULL, NULL, 0 },
	{ "description", API_T_STRING, 0, NULL, NULL, 2048 },
	{ "enabled", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "assignedVolumeCount", API_T_INT32, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "state", API_T_ENUM, API_F_OUTPUT, bkp_states, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

int api_backup_vault_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	static const char *const imm[] = { "dailyBackupImmutable", "weeklyBackupImmutable",
					   "monthlyBackupImmutable", "manualBackupImmutable" };
	const char *type = api_json_str(doc, "backupVaultType", "IN_REGION");
	const char *region = api_json_str(doc, "backupRegion", NULL);
	json_t *rp = json_object_get(doc, "backupRetentionPolicy");

	(void)p;
	if (json_object_get(doc, "kmsConfig"))
		return aq_fail(msg, AQ_EINVAL, "kmsConfig is not supported: every vault is encrypted with its own "
			       "key held by the control plane");
	if (strcmp(type, "BACKUP_VAULT_TYPE_UNSPECIFIED") == 0 || !json_object_get(doc, "backupVaultType")) {
		json_object_set_new(doc, "backupVaultType", json_string("IN_REGION"));
		type = api_json_str(doc, "backupVaultType", "IN_REGION"); /* the old string is gone */
	}
	if (strcmp(type, "CROSS_REGION") == 0) {
		if (!region)
			return aq_fail(msg, AQ_EINVAL, "backupRegion is required when backupVaultType is CROSS_REGION");
		if (api_id_check(region, "backupRegion", msg) != AQ_OK)
			return AQ_EINVAL;
	} else if (region) {
		return aq_fail(msg, AQ_EINVAL, "backupRegion is only for a CROSS_REGION vault (backupVaultType is %s)",
			       type);
	}
	if (rp) {
		int64_t days = api_json_int64(rp, "backupMinimumEnforcedRetentionDays", 0);
		bool any = false;

		if (days < 0 || days > API_BACKUP_RETENTION_DAYS_MAX)
			return aq_fail(msg, AQ_EINVAL, "backupRetentionPolicy.backupMinimumEnforcedRetentionDays must "
				       "be 0-%d, got %lld", API_BACKUP_RETENTION_DAYS_MAX, (long long)days);
		for (int i = 0; i < 4; i++)
			any = any || api_json_bool(rp, imm[i], false);
		/* GCNV: "At least one of daily_backup_immutable, weekly_backup_immutable,
		 * monthly_backup_immutable and manual_backup_immutable must be true." */
		if (days > 0 && !any)
			return aq_fail(msg, AQ_EINVAL, "backupRetentionPolicy: at least one of dailyBackupImmutable, "
				       "weeklyBackupImmutable, monthlyBackupImmutable and manualBackupImmutable must "
				       "be true when backupMinimumEnforcedRetentionDays is set");
	}
	return AQ_OK;
}

int api_backup_policy_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	static const char *const lims[] = { "dailyBackupLimit", "weeklyBackupLimit", "monthlyBackupLimit" };
	int64_t sum = 0;

	(void)p;
	for (int i = 0; i < 3; i++) {
		int64_t v = api_json_int64(doc, lims[i], 0);

		if (v < 0 || v > API_BACKUP_LIMIT_MAX)
			return aq_fail(msg, AQ_EINVAL, "%s must be 0-%d, got %lld", lims[i], API_BACKUP_LIMIT_MAX,
				       (long long)v);
		sum += v;
	}
	/* GCNV: "the minimum daily backup limit is 2"; "the sum of daily,
	 * weekly and monthly backups should be greater than 1" */
	if (json_object_get(doc, "dailyBackupLimit") && api_json_int64(doc, "dailyBackupLimit", 0) < 2)
		return aq_fail(msg, AQ_EINVAL, "dailyBackupLimit must be at least 2, got %lld",
			       (long long)api_json_int64(doc, "dailyBackupLimit", 0));
	if (sum < 2)
		return aq_fail(msg, AQ_EINVAL, "dailyBackupLimit + weeklyBackupLimit + monthlyBackupLimit must be at "
			       "least 2, got %lld", (long long)sum);
	if (!json_object_get(doc, "enabled"))
		json_object_set_new(doc, "enabled", json_true()); /* GCNV: "default is true" */
	return AQ_OK;
}

/* ---- backups (routes: server/srv_backup.h) ---- */

static const char *const backup_states[] = { "STATE_UNSPECIFIED", "CREATING", "UPLOADING", "READY", "DELETING",
					     "ERROR", "UPDATING", NULL };
static const char *const backup_types[] = { "TYPE_UNSPECIFIED", "MANUAL", "SCHEDULED", NULL };

const struct api_field api_backup_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "state", API_T_ENUM, API_F_OUTPUT, backup_states, NULL, 0 },
	{ "stateDetails", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "description", API_T_STRING, 0, NULL, NULL, 2048 },
	{ "volumeUsageBytes", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "backupType", API_T_ENUM, API_F_OUTPUT, backup_types, NULL, 0 },
	{ "sourceVolume", API_T_STRING, API_F_IMMUTABLE, NULL, NULL, 255 },
	{ "sourceSnapshot", API_T_STRING, API_F_IMMUTABLE, NULL, NULL, 255 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "chainStorageBytes", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "volumeRegion", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "backupRegion", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "enforcedRetentionEndTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* "projects/<id>/locations/<id>/volumes/<id>": the parts' lengths in n[3]. */
static bool volume_name_ok(const char *s, size_t *len)
{
	static const char *const parts[] = { "projects/", "/locations/", "/volumes/" };
	const char *p = s;

	for (int i = 0; i < 3; i++) {
		size_t k = strlen(parts[i]), n;

		if (strncmp(p, parts[i], k) != 0)
			return false;
		p += k;
		n = strcspn(p, "/");
		if (n == 0 || n > 63 || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-") < n)
			return false;
		p += n;
	}
	*len = (size_t)(p - s);
	return true;
}

int api_backup_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	const char *vol = api_json_str(doc, "sourceVolume", NULL);
	const char *snap = api_json_str(doc, "sourceSnapshot", NULL);
	size_t n = 0;

	(void)p;
	if (!vol)
		return aq_fail(msg, AQ_EINVAL, "sourceVolume is required: projects/P/locations/L/volumes/V");
	if (!volume_name_ok(vol, &n) || vol[n] != '\0')
		return aq_fail(msg, AQ_EINVAL, "sourceVolume must be a volume's full name, "
			       "projects/P/locations/L/volumes/V");
	if (snap) {
		size_t m = 0;

		if (!volume_name_ok(snap, &m) || m != n || strncmp(snap, vol, n) != 0 ||
		    strncmp(snap + n, "/snapshots/", 11) != 0 || api_id_check(snap + n + 11, "sourceSnapshot", NULL) != AQ_OK)
			return aq_fail(msg, AQ_EINVAL, "sourceSnapshot must be a snapshot of sourceVolume: "
				       "%s/snapshots/S", vol);
	}
	return AQ_OK;
}

int api_backup_retention_end(const json_t *vault, const char *kind, int64_t create_unix, int64_t *end_unix)
{
	static const struct { const char *kind, *flag; } flags[] = {
		{ "manual", "manualBackupImmutable" }, { "daily", "dailyBackupImmutable" },
		{ "weekly", "weeklyBackupImmutable" }, { "monthly", "monthlyBackupImmutable" },
	};
	const json_t *rp = json_object_get(vault, "backupRetentionPolicy");
	int64_t days = api_json_int64(rp, "backupMinimumEnforcedRetentionDays", 0);

	*end_unix = 0;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(kind, flags[i].kind) == 0) {
			if (days <= 0 || !api_json_bool(rp, flags[i].flag, false))
				return AQ_ENOENT;
			*end_unix = create_unix + days * 86400;
			return AQ_OK;
		}
	return AQ_EINVAL;
}

int api_backup_delete_check(const char *name, int64_t end_unix, int64_t now_unix, aq_msg *msg)
{
	struct tm tm;
	time_t t = (time_t)end_unix;
	char when[40];

	if (end_unix <= 0 || now_unix >= end_unix)
		return AQ_OK;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return aq_fail(msg, AQ_EPRECOND, "backup \"%s\" is retained until %s (the vault's minimum enforced "
		       "retention); it cannot be deleted before then", name, when);
}

void api_backup_sched_id(const char *kind, const char *volume, int64_t slot, char *out, size_t cap)
{
	char vol[40], when[48];
	uint32_t h = 2166136261u; /* FNV-1a */

	if (strlen(volume) > 32) {
		for (const char *c = volume; *c; c++)
			h = (h ^ (uint8_t)*c) * 16777619u;
		snprintf(vol, sizeof(vol), "%.23s-%08x", volume, h);
	} else {
		snprintf(vol, sizeof(vol), "%s", volume);
	}
	/* "daily-YYYYMMDD-HHMM": the date part after the kind's hyphen */
	api_snapshot_sched_id(kind, slot, when, sizeof(when));
	snprintf(out, cap, "%s-%s%s", kind, vol, when + strlen(kind));
}
