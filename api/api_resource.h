/* api_resource: the field tables of every resource we serve and the checks
 * that go beyond field types (cross-field rules, the math). Tables live one
 * file per resource: api_project.c, api_location.c, api_pool.c,
 * api_volume.c, api_snapshot.c. All functions are pure. */
#ifndef AQ_API_RESOURCE_H
#define AQ_API_RESOURCE_H

#include <jansson.h>

#include "api/api_math.h"
#include "api/api_schema.h"

extern const struct api_field api_project_fields[];
extern const struct api_field api_location_fields[];
extern const struct api_field api_pool_fields[];
extern const struct api_field api_volume_fields[];
extern const struct api_field api_snapshot_fields[];
extern const struct api_field api_smb_user_fields[];
extern const struct api_field api_backup_vault_fields[];
extern const struct api_field api_backup_policy_fields[];

/* Read the math facts out of a normalised pool / volume document. */
void api_pool_math_from(const json_t *pool, struct api_pool_math *out);
void api_vol_math_from(const json_t *vol, struct api_vol_math *out);

/* Pool rules that do not need other resources: unsupported features refused,
 * defaults filled in (qosType AUTO, customPerformance IOPS derived), then
 * api_math_check_pool(). doc is modified (defaults). */
int api_pool_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);

/* Fill the pool's computed output fields: totalThroughputMibps (budget),
 * totalIops (FLEX), availableThroughputMibps (budget minus manual_sum for
 * MANUAL pools, budget minus auto-derived volume limits... see .c),
 * volumeCount and volumeCapacityGib. */
void api_pool_fill_output(const struct api_math_params *p, json_t *doc, int64_t volume_count,
			  int64_t volume_capacity_gib, double allocated_mibps);

/* Volume rules that need only the volume itself: protocols combination,
 * export rules (CIDRs, squash/anonUid), unixPermissions, shareName, tiering
 * days; defaults filled in (tieringPolicy.coolingThresholdDays 31, ...). */
int api_volume_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);

/* The agent serves SMB (agent/smb/, --smb-listen): volumes whose protocols
 * are ["SMB"] or ["NFSV3","SMB"] are accepted. 0 refuses them. */
#define API_SERVES_SMB 1

/* Refuse, naming the field and value, what the request sets (given: a
 * create body, or the fields an updateMask names) for a feature that does
 * not exist yet: protocols, smbSettings and securityStyle the data path
 * does not serve (one table in api_volume.c), snapReserve (no space is
 * reserved for snapshots), multipleEndpoints, the export
 * rules' kerberos5* flags.
 * Their "off" values are accepted. */
int api_volume_check_supported(const json_t *given, aq_msg *msg);

/* The same for a pool: activeDirectory and replicaZone are refused; zone is
 * accepted only equal to location (every node of a location shares one
 * shelf: a location is one zone). */
int api_pool_check_supported(const json_t *given, const char *location, aq_msg *msg);

/* Fill the volume's computed fields from its pool: serviceLevel, network,
 * throughputMibps for AUTO and FLEX pools (the limit the math gives). */
/* The pool ID of a volume's storagePool, which is stored as the client sent
 * it (an ID, or the full name projects/P/locations/L/storagePools/ID), so
 * that it reads back unchanged: GCNV echoes it, and Terraform diffs otherwise. */
const char *api_volume_pool_id(const json_t *vol);

void api_volume_fill_output(const struct api_math_params *p, const json_t *pool, json_t *vol);

/* SmbUser (api_smb_user.c): password (input only, at most
 * API_SMB_USER_PASSWORD_LEN bytes, not empty, no NUL), uid and gid
 * 0-API_SMB_USER_ID_MAX. Messages never quote the password. The name is
 * api_intent_smb_user_name_check's rule. */
#define API_SMB_USER_PASSWORD_LEN 256
#define API_SMB_USER_ID_MAX 4294967294LL
int api_smb_user_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);

/* Location coldStore (doc is the location's "coldStore" object, may be
 * NULL = none): exactly one of s3 {endpoint (http/https URL), bucket (S3
 * naming rules), region (default "us-east-1" filled in), accessKeyId,
 * secretAccessKey (all required)} or directory {path (absolute, no "..")}.
 * AQ_EINVAL with a message naming the field. */
int api_cold_store_check(json_t *cold_store, aq_msg *msg);
/* The same store: both absent, the same S3 endpoint and bucket, or the same
 * directory path (credentials and region may differ: a rotation). */
bool api_cold_store_same(const json_t *a, const json_t *b);
/* The same S3 store and the same accessKeyId: a PATCH without a new
 * secretAccessKey keeps the stored one only then. */
bool api_cold_store_same_key(const json_t *a, const json_t *b);

/* ---- backup vaults and policies (api_backup.c) ---- */

#define API_BACKUP_RETENTION_DAYS_MAX 36500 /* a hundred years */
#define API_BACKUP_LIMIT_MAX 1019           /* per kind: ONTAP's snapshots-per-volume bound, 1023, less 4 */
/* A vault create or patch body (doc normalised, modified): kmsConfig
 * refused (each vault has its own key, kept by aquiferd); backupVaultType
 * defaults to IN_REGION (UNSPECIFIED too, written into doc); backupRegion
 * required (a location ID) for CROSS_REGION and refused otherwise;
 * backupRetentionPolicy.backupMinimumEnforcedRetentionDays
 * 0-API_BACKUP_RETENTION_DAYS_MAX and, when above 0, at least one of the
 * four *BackupImmutable flags true (GCNV's rule). AQ_EINVAL naming the field. */
int api_backup_vault_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);
/* A backup policy body: each *BackupLimit 0-API_BACKUP_LIMIT_MAX,
 * dailyBackupLimit at least 2 when given, their sum at least 2 (GCNV);
 * enabled defaults to true (written into doc). */
int api_backup_policy_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);

/* Backups (google.cloud.netapp.v1.Backup; api_backup.c): the table and the
 * pure rules server/srv_backup.c serves. */
extern const struct api_field api_backup_fields[];
/* A backup create body: sourceVolume required, a volume's full name
 * (projects/P/locations/L/volumes/V, ids by api_id_check's rule);
 * sourceSnapshot, when given, a snapshot of that volume
 * (<sourceVolume>/snapshots/S). Whether they exist, are READY and lie in
 * the vault's project and location is the server's check. */
int api_backup_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);
/* The enforcedRetentionEndTime (unix seconds) of a backup of kind
 * ("manual", "daily", "weekly", "monthly") made at create_unix in vault:
 * create + backupMinimumEnforcedRetentionDays days when the kind's
 * *BackupImmutable flag is true. AQ_ENOENT (and 0) when the kind is not
 * retained, AQ_EINVAL for an unknown kind. */
int api_backup_retention_end(const json_t *vault, const char *kind, int64_t create_unix, int64_t *end_unix);
/* AQ_EPRECOND naming the backup and the end time (RFC 3339, UTC) while
 * now_unix is before end_unix (0: none); else AQ_OK. */
int api_backup_delete_check(const char *name, int64_t end_unix, int64_t now_unix, aq_msg *msg);
/* The ID of the scheduled backup of kind ("daily", "weekly", "monthly") of
 * volume (its ID) at slot (seconds, UTC): "daily-vol1-20261201-0000", the
 * snapshot scheduler's date spelling (api_snapshot_sched_id); a volume ID
 * past 32 characters is cut to 23 and followed by "-" and 8 hex digits of
 * a hash of the whole ID, so that the result stays within the ID rules
 * (63 characters) and distinct per volume. */
void api_backup_sched_id(const char *kind, const char *volume, int64_t slot, char *out, size_t cap);

/* ---- snapshots (api_snapshot.c) ---- */

/* A snapshot create or patch body: nothing beyond its field table (the
 * srv_check_fn shape). */
int api_snapshot_check(const struct api_math_params *p, json_t *doc, aq_msg *msg);
/* A volume's snapshotPolicy: each schedule needs snapshotsToKeep (a whole
 * number 0..API_INTENT_MAX_SNAPSHOTS, their sum too), minute 0..59, hour
 * 0..23, weeklySchedule.day comma-separated day names, monthlySchedule
 * .daysOfMonth comma-separated 1..31, and no field of another kind (hour
 * in hourlySchedule, ...). Defaults are not written into the document
 * (minute 0, hour 0, day Sunday, daysOfMonth 1 apply when the schedule
 * runs), so the volume reads back as it was given. */
int api_snapshot_policy_check(const json_t *vol, aq_msg *msg);
/* restoreParameters: sourceSnapshot a snapshot's full name; sourceBackup
 * refused (no backups). Whether the snapshot exists, is READY and lies in
 * the volume's project and location is the server's check. */
int api_snapshot_restore_check(const json_t *vol, aq_msg *msg);

/* One schedule of an enabled snapshotPolicy, defaults applied. */
struct api_snap_sched {
	const char *kind;        /* "hourly", "daily", "weekly", "monthly" */
	int keep, minute, hour;
	unsigned weekdays;       /* bit 0 Sunday .. bit 6 Saturday */
	unsigned monthdays;      /* bit d: day d of the month (1..31) */
};
/* The number of kinds, and kind i of vol's policy: AQ_ENOENT when the
 * policy is off or has no such schedule. */
int api_snapshot_kind_count(void);
int api_snapshot_kind(int i, struct api_snap_sched *out, const json_t *vol);
/* The newest slot of s at or before t (seconds, UTC). */
int64_t api_snapshot_slot(const struct api_snap_sched *s, int64_t t);
/* The ID of the scheduled snapshot of kind at slot: "hourly-20261201-1705"
 * (ONTAP's create_time naming, "hourly.2026-12-01_1705", spelled within
 * the resource ID rules). */
void api_snapshot_sched_id(const char *kind, int64_t slot, char *out, size_t cap);

#endif
