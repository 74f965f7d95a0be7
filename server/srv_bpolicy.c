/* srv_bpolicy: backup policies (see srv_bpolicy.h). Check (pure,
 * api_backup_policy_check) then apply (db) in one transaction with the
 * operation record. */
#include "server/srv_bpolicy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_bconfig.h"
#include "server/srv_internal.h"
#include "server/srv_op.h"
#include "server/srv_req.h"

#define POLICY_TYPE "type.googleapis.com/google.cloud.netapp.v1.BackupPolicy"

/* assignedVolumeCount: the volumes of the location whose backupConfig
 * names the policy (srv_bconfig), computed on every answer. */
static void policy_output(struct db *db, json_t *doc)
{
	char parent[600];
	const char *name = api_json_str(doc, "name", ""), *cut = strstr(name, "/backupPolicies/");
	aq_msg msg = { 0 };
	int64_t n = 0;

	snprintf(parent, sizeof(parent), "%.*s", cut ? (int)(cut - name) : 0, name);
	if (cut)
		srv_bconfig_users(db, parent, name, &n, &msg);
	json_object_set_new(doc, "assignedVolumeCount", json_integer(n));
}

static int policy_load(struct srv_req *req, char *name, size_t cap, json_t **doc)
{
	int rc = srv_load(req, "backupPolicies", "backupPolicy", name, cap, doc);

	if (rc == AQ_OK)
		policy_output(req->db, *doc);
	return rc;
}

static json_t *policy_answer(struct db *db, const json_t *doc)
{
	json_t *out = json_deep_copy(doc);

	if (out) {
		policy_output(db, out);
		json_object_set_new(out, "@type", json_string(POLICY_TYPE));
	}
	return out;
}

int srv_h_bpolicy_create(struct srv_req *req, json_t **resp)
{
	const char *id;
	char parent[600], name[700];
	json_t *doc = NULL, *out = NULL;
	bool validate;
	int rc;

	if ((rc = srv_create_input(req, "backupPolicyId", api_backup_policy_fields, "backupPolicy",
				   api_backup_policy_check, &id, &validate, &doc)) != AQ_OK)
		return rc;
	srv_create_name(req, "backupPolicies", id, doc, parent, name);
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK)
		goto out;
	out = policy_answer(req->db, doc);
	rc = srv_op_save(req, validate, "create", "bpolicy", parent, name, doc, "backupPolicy", out, resp);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(out);
	return rc;
}

int srv_h_bpolicy_get(struct srv_req *req, json_t **resp)
{
	char name[700];
	json_t *doc = NULL;
	int rc;

	if ((rc = policy_load(req, name, sizeof(name), &doc)) == AQ_OK)
		*resp = doc;
	return rc;
}

int srv_h_bpolicy_list(struct srv_req *req, json_t **resp)
{
	char parent[600], *next = NULL;
	json_t *items = NULL, *it;
	size_t i;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	if ((rc = srv_check_parent(req, SRV_PARENT_LIST)) != AQ_OK ||
	    (rc = srv_list(req, "bpolicy", parent, &items, &next)) != AQ_OK)
		return rc;
	json_array_foreach(items, i, it)
		policy_output(req->db, it);
	*resp = srv_list_page("backupPolicies", items, next);
	free(next);
	return *resp ? AQ_OK : AQ_ENOMEM;
}

int srv_h_bpolicy_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	char name[700], parent[600];
	json_t *old = NULL, *patch = NULL, *doc = NULL, *out = NULL;
	bool validate;
	int npaths, rc;

	if ((rc = srv_patch_input(req, api_backup_policy_fields, "BackupPolicy", "backupPolicy", &validate, paths,
				  &npaths, &patch)) != AQ_OK)
		return rc;
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = policy_load(req, name, sizeof(name), &old)) != AQ_OK ||
	    (rc = api_mask_patch(old, patch, paths, npaths, &doc, NULL)) != AQ_OK ||
	    (rc = api_backup_policy_check(&req->srv->cfg.math, doc, &req->msg)) != AQ_OK)
		goto out;
	json_object_del(doc, "assignedVolumeCount"); /* computed, never stored */
	out = policy_answer(req->db, doc);
	srv_parent(req, parent, sizeof(parent));
	rc = srv_op_save(req, validate, "update", "bpolicy", parent, name, doc, "backupPolicy", out, resp);
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	json_decref(out);
	return rc;
}

int srv_h_bpolicy_delete(struct srv_req *req, json_t **resp)
{
	char name[700], parent[600];
	json_t *old = NULL;
	int64_t n = 0;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = policy_load(req, name, sizeof(name), &old)) != AQ_OK ||
	    (rc = srv_bconfig_users(req->db, parent, name, &n, &req->msg)) != AQ_OK)
		goto out;
	if (n > 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "backupPolicy \"%s\" is assigned to %lld volumes; remove it from "
			     "their backupConfig.backupPolicies first", name, (long long)n);
		goto out;
	}
	if ((rc = db_delete(req->db, name)) != AQ_OK ||
	    (rc = srv_op_commit(req, parent, name, "delete", NULL, resp)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	json_decref(old);
	return rc;
}
