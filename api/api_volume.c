/* api_volume: the Volume resource (google.cloud.netapp.v1.Volume) and its
 * export rules. */
#include "api/api_resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"

static const char *const vol_states[] = { "READY", "CREATING", "DELETING", "UPDATING", "RESTORING",
					  "DISABLED", "ERROR", "PREPARING", "READ_ONLY", NULL };
/* Proto enums in proto order from X_UNSPECIFIED (= 0): api_schema maps their
 * numbers (proto3 JSON) by index. */
static const char *const vol_protocols[] = { "PROTOCOLS_UNSPECIFIED", "NFSV3", "NFSV4", "SMB", "ISCSI", NULL };
static const char *const vol_smb[] = { "SMB_SETTINGS_UNSPECIFIED", "ENCRYPT_DATA", "BROWSABLE", "CHANGE_NOTIFY", "NON_BROWSABLE",
				       "OPLOCKS", "SHOW_SNAPSHOT", "SHOW_PREVIOUS_VERSIONS",
				       "ACCESS_BASED_ENUMERATION", "CONTINUOUSLY_AVAILABLE", NULL };
static const char *const vol_levels[] = { "SERVICE_LEVEL_UNSPECIFIED", "PREMIUM", "EXTREME", "STANDARD", "FLEX", NULL };
static const char *const vol_security[] = { "SECURITY_STYLE_UNSPECIFIED", "NTFS", "UNIX", NULL };
static const char *const vol_restricted[] = { "RESTRICTED_ACTION_UNSPECIFIED", "DELETE", NULL };
static const char *const vol_access[] = { "ACCESS_TYPE_UNSPECIFIED", "READ_ONLY", "READ_WRITE", "READ_NONE", NULL };
static const char *const vol_squash[] = { "SQUASH_MODE_UNSPECIFIED", "NO_ROOT_SQUASH", "ROOT_SQUASH", "ALL_SQUASH", NULL };
static const char *const vol_tier_action[] = { "TIER_ACTION_UNSPECIFIED", "ENABLED", "PAUSED", NULL };
static const char *const vol_retrieval[] = { "DEFAULT", "ON_READ", "NEVER", NULL };
static const char *const vol_enc[] = { "ENCRYPTION_TYPE_UNSPECIFIED", "SERVICE_MANAGED", "CLOUD_KMS", NULL };
/* Aquifer's readAhead.mode (issue 23): the names of enum api_intent_ra_mode */
static const char *const vol_ra_modes[] = { "NONE", "AGGRESSIVE", "CROSS_FILE_SEQUENTIAL", NULL };

static const struct api_field vol_rule_fields[] = {
	{ "allowedClients", API_T_STRING, 0, NULL, NULL, API_INTENT_CLIENTS_LEN },
	{ "hasRootAccess", API_T_STRING, 0, NULL, NULL, 8 },
	{ "accessType", API_T_ENUM, 0, vol_access, NULL, 0 },
	{ "nfsv3", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "nfsv4", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "kerberos5ReadOnly", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "kerberos5ReadWrite", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "kerberos5iReadOnly", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "kerberos5iReadWrite", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "kerberos5pReadOnly", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "kerberos5pReadWrite", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "squashMode", API_T_ENUM, 0, vol_squash, NULL, 0 },
	{ "anonUid", API_T_INT64, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_export_fields[] = {
	{ "rules", API_T_OBJECT_LIST, 0, NULL, vol_rule_fields, API_INTENT_MAX_RULES },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_mount_fields[] = {
	{ "export", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "exportFull", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "protocol", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "instructions", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "ipAddress", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "port", API_T_INT32, API_F_OUTPUT, NULL, NULL, 0 }, /* Aquifer: the NFS (and MOUNT) port */
	{ "libnfsUrl", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 }, /* Aquifer: nfs://HOST/SHARE?... for libnfs tools */

	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_sched_fields[] = {
	{ "snapshotsToKeep", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "minute", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "hour", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "day", API_T_STRING, 0, NULL, NULL, 64 },
	{ "daysOfMonth", API_T_STRING, 0, NULL, NULL, 128 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_snap_policy_fields[] = {
	{ "enabled", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "hourlySchedule", API_T_OBJECT, 0, NULL, vol_sched_fields, 0 },
	{ "dailySchedule", API_T_OBJECT, 0, NULL, vol_sched_fields, 0 },
	{ "weeklySchedule", API_T_OBJECT, 0, NULL, vol_sched_fields, 0 },
	{ "monthlySchedule", API_T_OBJECT, 0, NULL, vol_sched_fields, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_tiering_fields[] = {
	{ "tierAction", API_T_ENUM, 0, vol_tier_action, NULL, 0 },
	{ "coolingThresholdDays", API_T_INT32, 0, NULL, NULL, 0 },
	{ "hotTierBypassModeEnabled", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "retrievalPolicy", API_T_ENUM, 0, vol_retrieval, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* Aquifer: read-ahead (issue 23), checked by api_intent_read_ahead_from_api */
static const struct api_field vol_ra_fields[] = {
	{ "mode", API_T_ENUM, 0, vol_ra_modes, NULL, 0 },
	{ "depthFiles", API_T_INT32, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_restore_fields[] = {
	{ "sourceSnapshot", API_T_STRING, 0, NULL, NULL, 512 },
	{ "sourceBackup", API_T_STRING, 0, NULL, NULL, 512 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_clone_fields[] = {
	{ "sourceSnapshot", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "sourceVolume", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "sharedSpaceGib", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field vol_backup_fields[] = {
	{ "backupPolicies", API_T_STRING_LIST, 0, NULL, NULL, 1 }, /* at most one (GCNV) */
	{ "backupVault", API_T_STRING, 0, NULL, NULL, 512 },
	{ "scheduledBackupEnabled", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "backupChainBytes", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

const struct api_field api_volume_fields[] = {
	{ "name", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "state", API_T_ENUM, API_F_OUTPUT, vol_states, NULL, 0 },
	{ "stateDetails", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "createTime", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "shareName", API_T_STRING, API_F_REQUIRED | API_F_IMMUTABLE, NULL, NULL, API_INTENT_SHARE_LEN },
	{ "psaRange", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "storagePool", API_T_STRING, API_F_REQUIRED, NULL, NULL, 512 },
	{ "network", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "serviceLevel", API_T_ENUM, API_F_OUTPUT, vol_levels, NULL, 0 },
	{ "capacityGib", API_T_INT64, API_F_REQUIRED, NULL, NULL, 0 },
	{ "exportPolicy", API_T_OBJECT, 0, NULL, vol_export_fields, 0 },
	{ "protocols", API_T_ENUM_LIST, API_F_REQUIRED | API_F_IMMUTABLE, vol_protocols, NULL, 4 },
	{ "smbSettings", API_T_ENUM_LIST, 0, vol_smb, NULL, 9 },
	{ "mountOptions", API_T_OBJECT_LIST, API_F_OUTPUT, NULL, vol_mount_fields, 0 },
	{ "unixPermissions", API_T_STRING, 0, NULL, NULL, 4 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "description", API_T_STRING, 0, NULL, NULL, 2048 },
	{ "snapshotPolicy", API_T_OBJECT, 0, NULL, vol_snap_policy_fields, 0 },
	{ "snapReserve", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "snapshotDirectory", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "usedGib", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "securityStyle", API_T_ENUM, API_F_IMMUTABLE, vol_security, NULL, 0 },
	{ "kerberosEnabled", API_T_BOOL, API_F_IMMUTABLE, NULL, NULL, 0 },
	{ "ldapEnabled", API_T_BOOL, API_F_OUTPUT, NULL, NULL, 0 },
	{ "activeDirectory", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "kmsConfig", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "encryptionType", API_T_ENUM, API_F_OUTPUT, vol_enc, NULL, 0 },
	{ "hasReplication", API_T_BOOL, API_F_OUTPUT, NULL, NULL, 0 },
	{ "restoreParameters", API_T_OBJECT, API_F_IMMUTABLE, NULL, vol_restore_fields, 0 },
	{ "backupConfig", API_T_OBJECT, 0, NULL, vol_backup_fields, 0 },
	{ "restrictedActions", API_T_ENUM_LIST, 0, vol_restricted, NULL, 1 },
	{ "largeCapacity", API_T_BOOL, API_F_IMMUTABLE, NULL, NULL, 0 },
	{ "multipleEndpoints", API_T_BOOL, API_F_IMMUTABLE, NULL, NULL, 0 },
	{ "tieringPolicy", API_T_OBJECT, 0, NULL, vol_tiering_fields, 0 },
	{ "replicaZone", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "zone", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "coldTierSizeGib", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "hotTierSizeUsedGib", API_T_INT64, API_F_OUTPUT, NULL, NULL, 0 },
	{ "throughputMibps", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "cloneDetails", API_T_OBJECT, API_F_OUTPUT, NULL, vol_clone_fields, 0 },
	{ "readAhead", API_T_OBJECT, 0, NULL, vol_ra_fields, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

void api_vol_math_from(const json_t *vol, struct api_vol_math *out)
{
	json_t *tp = json_object_get(vol, "tieringPolicy");

	memset(out, 0, sizeof(*out));
	out->capacity_gib = api_json_int64(vol, "capacityGib", 0);
	out->large_capacity = api_json_bool(vol, "largeCapacity", false);
	out->throughput_mibps = api_json_double(vol, "throughputMibps", 0);
	out->tiering_enabled = tp && strcmp(api_json_str(tp, "tierAction", "PAUSED"), "ENABLED") == 0;
	out->cold_gib = api_json_int64(vol, "coldTierSizeGib", 0);
}

static int vol_check_rules(const json_t *doc, aq_msg *msg)
{
	json_t *rules = json_object_get(json_object_get(doc, "exportPolicy"), "rules"), *r;
	struct api_intent_rule rule;
	size_t i;
	int rc;

	/* the intent's own conversion: what the API accepts, a node serves */
	json_array_foreach(rules, i, r)
		if ((rc = api_intent_rule_from_api(r, i, &rule, msg)) != AQ_OK)
			return rc;
	return AQ_OK;
}

static int vol_check_protocols(const json_t *doc, aq_msg *msg)
{
	json_t *ps = json_object_get(doc, "protocols"), *p;
	unsigned seen = 0;
	size_t i;

	json_array_foreach(ps, i, p) {
		const char *s = json_string_value(p);
		unsigned bit = strcmp(s, "NFSV3") == 0 ? 1u : strcmp(s, "NFSV4") == 0 ? 2u
							 : strcmp(s, "SMB") == 0 ? 4u : 8u;
		if (seen & bit)
			return aq_fail(msg, AQ_EINVAL, "protocols lists %s twice", s);
		seen |= bit;
	}
	/* Allowed sets: NFSV3, NFSV4, SMB, NFSV3+NFSV4, SMB+NFSV3, SMB+NFSV4. */
	if (seen == 0 || (seen & 8u) || seen == 7u)
		return aq_fail(msg, AQ_EINVAL, "protocols must be one of NFSV3, NFSV4, SMB, NFSV3+NFSV4, SMB+NFSV3, SMB+NFSV4 (ISCSI is not supported)");
	return AQ_OK;
}

/* NTFS (Windows descriptors stored per object, enforced by the SMB
 * server) with NFS: NFS would have to enforce the same ACLs, which it does
 * not: refused by naming the combination. On the whole document, so that
 * an update adding NFS to an NTFS volume is refused too. */
static int vol_check_security(const json_t *doc, aq_msg *msg)
{
	const char *sec = api_json_str(doc, "securityStyle", "UNIX");
	json_t *v;
	size_t i;

	if (strcmp(sec, "NTFS") != 0)
		return AQ_OK;
	json_array_foreach(json_object_get(doc, "protocols"), i, v)
		if (json_is_string(v) && strncmp(json_string_value(v), "NFS", 3) == 0)
			return aq_fail(msg, AQ_EINVAL,
				       "securityStyle: NTFS with protocols %s is not served (NFS does not enforce a volume's "
				       "NTFS ACLs); give protocols [\"SMB\"] or securityStyle UNIX",
				       json_string_value(v));
	return AQ_OK;
}

int api_volume_check(const struct api_math_params *p, json_t *doc, aq_msg *msg)
{
	const char *share = api_json_str(doc, "shareName", "");
	const char *perm = api_json_str(doc, "unixPermissions", NULL);
	json_t *tp = json_object_get(doc, "tieringPolicy");
	int rc;

	if ((rc = api_intent_share_check(share, msg)) != AQ_OK)
		return rc;
	if ((rc = vol_check_protocols(doc, msg)) != AQ_OK || (rc = vol_check_security(doc, msg)) != AQ_OK)
		return rc;
	if ((rc = vol_check_rules(doc, msg)) != AQ_OK)
		return rc;
	if (perm) {
		size_t n = strlen(perm);

		if (n < 3 || n > 4 || strspn(perm, "01234567") != n)
			return aq_fail(msg, AQ_EINVAL, "unixPermissions must be 3 or 4 octal digits, e.g. \"0770\"");
	}
	if (api_json_bool(doc, "kerberosEnabled", false))
		return aq_fail(msg, AQ_EINVAL, "kerberosEnabled is not supported by this deployment");
	if ((rc = api_snapshot_restore_check(doc, msg)) != AQ_OK || (rc = api_snapshot_policy_check(doc, msg)) != AQ_OK)
		return rc;
	if (tp) {
		if (!json_object_get(tp, "tierAction"))
			json_object_set_new(tp, "tierAction", json_string("PAUSED"));
		if (!json_object_get(tp, "coolingThresholdDays"))
			json_object_set_new(tp, "coolingThresholdDays", json_integer(p->tiering_default_days));
		if (!json_object_get(tp, "retrievalPolicy"))
			json_object_set_new(tp, "retrievalPolicy", json_string("DEFAULT"));
		if ((rc = api_math_check_cooling_days(p, api_json_int64(tp, "coolingThresholdDays", 0), msg)) != AQ_OK)
			return rc;
	}
	if ((rc = api_intent_read_ahead_check(json_object_get(doc, "readAhead"), msg)) != AQ_OK)
		return rc;
	if (!json_object_get(doc, "securityStyle"))
		json_object_set_new(doc, "securityStyle", json_string("UNIX"));
	/* proto3's default: a config that leaves it out plans no change */
	if (!json_object_get(doc, "snapshotDirectory"))
		json_object_set_new(doc, "snapshotDirectory", json_false());
	return AQ_OK;
}

/* GCNV fields whose feature Aquifer does not have yet, accepted only with
 * the value that means "off" (false, 0, empty), so nothing accepted is
 * ignored. */
static const struct {
	const char *field;
	const char *why;
} vol_off_bools[] = {
	{ "multipleEndpoints", "each volume is served at its node's one NFS address" },
};

static const char *const vol_kerberos[] = { "kerberos5ReadOnly", "kerberos5ReadWrite", "kerberos5iReadOnly",
					    "kerberos5iReadWrite", "kerberos5pReadOnly", "kerberos5pReadWrite", NULL };

/* What the data path serves, in one place: the protocol sets, smbSettings
 * and securityStyles a node's agent honours. Anything else is refused
 * naming the field, so accepting more later is a one-line change here once
 * the agent does it. API_SERVES_SMB (api_resource.h) switches SMB as a whole. */
static const struct {
	unsigned protocols;                       /* enum api_intent_proto bits */
	const char *text;
	bool served;
} vol_serves_protocols[] = {
	{ API_INTENT_NFSV3, "[\"NFSV3\"]", true },
	/* NFSv4.1 (agent/nfs4/), on the NFS port */
	{ API_INTENT_NFSV4, "[\"NFSV4\"]", true },
	{ API_INTENT_NFSV3 | API_INTENT_NFSV4, "[\"NFSV3\",\"NFSV4\"]", true },
	{ API_INTENT_SMB, "[\"SMB\"]", API_SERVES_SMB },
	{ API_INTENT_NFSV3 | API_INTENT_SMB, "[\"NFSV3\",\"SMB\"]", API_SERVES_SMB },
	{ API_INTENT_NFSV4 | API_INTENT_SMB, "[\"NFSV4\",\"SMB\"]", API_SERVES_SMB },
};

static const struct {
	const char *name;
	bool served;
} vol_serves_smb[] = {
	/* the agent refuses unencrypted requests on such shares (agent/smb) */
	{ "ENCRYPT_DATA", true },
	{ "BROWSABLE", false },
	{ "CHANGE_NOTIFY", true },                /* SMB2 CHANGE_NOTIFY from the store's change watches (agent/smb/smb_notify.c) */
	{ "NON_BROWSABLE", true },                /* the agent lists no shares at all */
	{ "OPLOCKS", true },                      /* Level II oplocks and R leases, broken by writes of any protocol (agent/smb/smb_lease.c) */
	{ "SHOW_SNAPSHOT", false },
	{ "SHOW_PREVIOUS_VERSIONS", true },       /* snapshots as Windows previous versions (agent/smb/smb_prev.c) */
	{ "ACCESS_BASED_ENUMERATION", false },
	{ "CONTINUOUSLY_AVAILABLE", false },
};

static const struct {
	const char *name;
	bool served;
} vol_serves_security[] = {
	{ "UNIX", true },
	{ "NTFS", true },                         /* SMB only (vol_check_security); agent/smb/smb_acl_open.c */
};

static int vol_check_served(const json_t *given, aq_msg *msg)
{
	json_t *ps = json_object_get(given, "protocols"), *v;
	const char *sec = api_json_str(given, "securityStyle", NULL);
	char served[160] = "";
	const char *unserved = NULL;
	unsigned bits = 0, any = 0;
	size_t i, k;
	bool ok = false;

	json_array_foreach(ps, i, v)
		bits |= strcmp(json_string_value(v), "NFSV3") == 0 ? API_INTENT_NFSV3
			: strcmp(json_string_value(v), "NFSV4") == 0 ? API_INTENT_NFSV4
			: strcmp(json_string_value(v), "SMB") == 0 ? API_INTENT_SMB : 1u << 30;
	for (k = 0; k < sizeof(vol_serves_protocols) / sizeof(vol_serves_protocols[0]); k++) {
		if (!vol_serves_protocols[k].served)
			continue;
		ok = ok || vol_serves_protocols[k].protocols == bits;
		any |= vol_serves_protocols[k].protocols;
		snprintf(served + strlen(served), sizeof(served) - strlen(served), "%s%s", *served ? " or " : "",
			 vol_serves_protocols[k].text);
	}
	/* name the first protocol no served set has, when there is one */
	json_array_foreach(ps, i, v)
		if (!unserved && !((strcmp(json_string_value(v), "NFSV3") == 0 && (any & API_INTENT_NFSV3)) ||
				   (strcmp(json_string_value(v), "NFSV4") == 0 && (any & API_INTENT_NFSV4)) ||
				   (strcmp(json_string_value(v), "SMB") == 0 && (any & API_INTENT_SMB))))
			unserved = json_string_value(v);
	if (ps && !ok && unserved)
		return aq_fail(msg, AQ_EINVAL, "protocols: %s is not served yet; give protocols %s", unserved, served);
	if (ps && !ok)
		return aq_fail(msg, AQ_EINVAL, "protocols: this combination is not served yet; give protocols %s", served);
	json_array_foreach(json_object_get(given, "smbSettings"), i, v)
		for (k = 0; k < sizeof(vol_serves_smb) / sizeof(vol_serves_smb[0]); k++)
			if (strcmp(json_string_value(v), vol_serves_smb[k].name) == 0 && !vol_serves_smb[k].served)
				return aq_fail(msg, AQ_EINVAL, "smbSettings: %s is not served yet; leave it out",
					       vol_serves_smb[k].name);
	for (k = 0; sec && k < sizeof(vol_serves_security) / sizeof(vol_serves_security[0]); k++)
		if (strcmp(sec, vol_serves_security[k].name) == 0 && !vol_serves_security[k].served)
			return aq_fail(msg, AQ_EINVAL, "securityStyle: %s is not served yet; use UNIX", sec);
	return AQ_OK;
}

int api_volume_check_supported(const json_t *given, aq_msg *msg)
{
	json_t *rules, *r;
	size_t i;
	int rc;

	if ((rc = vol_check_served(given, msg)) != AQ_OK)
		return rc;
	/* GCNV deprecates snapReserve; no space is set aside: snapshots count in usedGib */
	if (api_json_double(given, "snapReserve", 0) != 0)
		return aq_fail(msg, AQ_EINVAL, "snapReserve: no space is reserved for snapshots (deprecated in GCNV; snapshot space counts in usedGib against capacityGib); leave it out or 0");
	/* backupConfig (its policies, vault and scheduledBackupEnabled) is
	 * checked against the db (server/srv_bconfig.h) */
	for (i = 0; i < sizeof(vol_off_bools) / sizeof(vol_off_bools[0]); i++)
		if (api_json_bool(given, vol_off_bools[i].field, false))
			return aq_fail(msg, AQ_EINVAL, "%s: true is not supported (%s); leave it out or false",
				       vol_off_bools[i].field, vol_off_bools[i].why);
	rules = json_object_get(json_object_get(given, "exportPolicy"), "rules");
	json_array_foreach(rules, i, r)
		for (int k = 0; vol_kerberos[k]; k++)
			if (api_json_bool(r, vol_kerberos[k], false))
				return aq_fail(msg, AQ_EINVAL, "exportPolicy.rules[%zu].%s: Kerberos is not supported; leave it out or false",
					       i, vol_kerberos[k]);
	return AQ_OK;
}

const char *api_volume_pool_id(const json_t *vol)
{
	const char *sp = api_json_str(vol, "storagePool", ""), *slash = strrchr(sp, '/');

	return slash ? slash + 1 : sp;
}

void api_volume_fill_output(const struct api_math_params *p, const json_t *pool, json_t *vol)
{
	struct api_pool_math pm;
	struct api_vol_math vm;

	api_pool_math_from(pool, &pm);
	api_vol_math_from(vol, &vm);
	json_object_set(vol, "serviceLevel", json_object_get(pool, "serviceLevel"));
	json_object_set(vol, "network", json_object_get(pool, "network"));
	if (pm.qos != API_QOS_MANUAL)
		json_object_set_new(vol, "throughputMibps", json_real(api_math_vol_mibps(p, &pm, &vm)));
	if (!json_object_get(vol, "encryptionType"))
		json_object_set_new(vol, "encryptionType", json_string("SERVICE_MANAGED"));
}
