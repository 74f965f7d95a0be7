/* srv_bconfig: a volume's backupConfig (see srv_bconfig.h). */
#include "server/srv_bconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"

/* name is parent/<coll>/<id> and exists; its document in *doc. */
static int bc_ref(struct db *db, const char *parent, const char *field, const char *coll, const char *name,
		  json_t **doc, aq_msg *msg)
{
	size_t n = strlen(parent), c = strlen(coll);
	int rc;

	if (strncmp(name, parent, n) != 0 || name[n] != '/' || strncmp(name + n + 1, coll, c) != 0 ||
	    name[n + 1 + c] != '/' || !name[n + 2 + c] || strchr(name + n + 2 + c, '/'))
		return aq_fail(msg, AQ_EINVAL, "%s: \"%s\" is not a full name %s/%s/ID of the volume's project "
			       "and location", field, name, parent, coll);
	rc = db_get(db, name, doc);
	if (rc == AQ_ENOENT)
		return aq_fail(msg, AQ_EINVAL, "%s: \"%s\" does not exist", field, name);
	return rc;
}

int srv_bconfig_check(struct db *db, const char *parent, const json_t *vol, aq_msg *msg)
{
	const json_t *bc = json_object_get(vol, "backupConfig");
	const json_t *pols = json_object_get(bc, "backupPolicies");
	const char *vault = api_json_str(bc, "backupVault", "");
	json_t *doc = NULL;
	int rc = AQ_OK;

	if (json_array_size(pols) > 1)
		return aq_fail(msg, AQ_EINVAL, "backupConfig.backupPolicies: at most one backup policy per volume "
			       "(%zu given)", json_array_size(pols));
	if (json_array_size(pols) == 1 && !*vault)
		return aq_fail(msg, AQ_EINVAL, "backupConfig.backupVault: required when backupConfig.backupPolicies "
			       "is given (scheduled backups go to that vault)");
	/* the flag has its effect or is refused: the schedule is the policy's */
	if (api_json_bool(bc, "scheduledBackupEnabled", false) && json_array_size(pols) == 0)
		return aq_fail(msg, AQ_EINVAL, "backupConfig.scheduledBackupEnabled: true needs a backup policy in "
			       "backupConfig.backupPolicies (its limits say how many scheduled backups to keep)");
	if (json_array_size(pols) == 1 &&
	    (rc = bc_ref(db, parent, "backupConfig.backupPolicies[0]", "backupPolicies",
			 json_string_value(json_array_get(pols, 0)), &doc, msg)) != AQ_OK)
		goto out;
	json_decref(doc);
	doc = NULL;
	if (*vault && (rc = bc_ref(db, parent, "backupConfig.backupVault", "backupVaults", vault, &doc, msg)) != AQ_OK)
		goto out;
	if (*vault && strcmp(api_json_str(doc, "backupVaultType", "IN_REGION"), "CROSS_REGION") == 0)
		rc = aq_fail(msg, AQ_EINVAL, "backupConfig.backupVault: \"%s\" is CROSS_REGION: backups into it are "
			     "not supported yet", vault);
out:
	json_decref(doc);
	return rc;
}

static bool bc_names(const json_t *vol, const char *target)
{
	const json_t *bc = json_object_get(vol, "backupConfig"), *p;
	size_t i;

	if (strcmp(api_json_str(bc, "backupVault", ""), target) == 0)
		return true;
	json_array_foreach(json_object_get(bc, "backupPolicies"), i, p)
		if (strcmp(json_string_value(p), target) == 0)
			return true;
	return false;
}

int srv_bconfig_users(struct db *db, const char *parent, const char *target, int64_t *n, aq_msg *msg)
{
	struct db_query q = { .kind = "volume", .parent = parent };
	json_t *items = NULL, *v;
	size_t i;
	int rc;

	*n = 0;
	if ((rc = db_list_all(db, &q, &items, msg)) != AQ_OK)
		return rc;
	json_array_foreach(items, i, v)
		if (bc_names(v, target))
			(*n)++;
	json_decref(items);
	return AQ_OK;
}
