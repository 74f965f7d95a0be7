/* srv_bvault: backup vaults (see srv_bvault.h). Check (pure,
 * api_backup_vault_check) then apply (db) in one transaction with the
 * operation record and the secret document, so a vault never exists
 * without its key. */
#include "server/srv_bvault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_bconfig.h"
#include "server/srv_internal.h"
#include "server/srv_op.h"
#include "server/srv_req.h"
#include "util/ut_hex.h"

#define VAULT_TYPE "type.googleapis.com/google.cloud.netapp.v1.BackupVault"

static int vault_load(struct srv_req *req, char *name, size_t cap, json_t **doc)
{
	return srv_load(req, "backupVaults", "backupVault", name, cap, doc);
}

static json_t *vault_answer(const json_t *doc)
{
	json_t *out = json_deep_copy(doc);

	if (out)
		json_object_set_new(out, "@type", json_string(VAULT_TYPE));
	return out;
}

/* A CROSS_REGION vault's backupRegion: an existing location other than the
 * vault's own. */
static int vault_region_check(struct srv_req *req, const json_t *doc)
{
	const char *region = api_json_str(doc, "backupRegion", NULL);
	char lname[128];
	json_t *loc = NULL;
	int rc;

	if (!region)
		return AQ_OK;
	if (strcmp(region, req->params[1]) == 0)
		return aq_fail(&req->msg, AQ_EINVAL, "backupRegion must be another location than the vault's own "
			       "(\"%s\"); use backupVaultType IN_REGION", region);
	snprintf(lname, sizeof(lname), "locations/%s", region);
	rc = db_get(req->db, lname, &loc);
	json_decref(loc);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, AQ_EINVAL, "backupRegion \"%s\" is not a location", region);
	return rc;
}

/* The vault's secret: a fresh key and uid, the store on the store
 * location's shelf. */
static int secret_put(struct srv_req *req, const json_t *doc)
{
	const char *name = api_json_str(doc, "name", "");
	const char *loc = api_json_str(doc, "backupRegion", req->params[1]);
	unsigned char key[SRV_BVAULT_KEY_LEN], uid[8];
	char khex[2 * SRV_BVAULT_KEY_LEN + 1] = "", uhex[17], path[64], sname[900], sparent[300];
	json_t *sec = NULL;
	int rc;

	if (RAND_bytes(key, sizeof(key)) != 1 || RAND_bytes(uid, sizeof(uid)) != 1) {
		rc = aq_fail(&req->msg, AQ_EIO, "no randomness for the vault key");
		goto out;
	}
	if ((rc = ut_hex_encode(key, sizeof(key), khex, sizeof(khex))) != AQ_OK ||
	    (rc = ut_hex_encode(uid, sizeof(uid), uhex, sizeof(uhex))) != AQ_OK)
		goto out;
	snprintf(path, sizeof(path), ".backups/%s", uhex);
	snprintf(sname, sizeof(sname), "bvsecrets/%s", name);
	snprintf(sparent, sizeof(sparent), "bvsecrets/%s", loc);
	sec = json_pack("{s:s, s:s, s:s, s:s, s:{s:{s:s}}}", "vault", name, "key", khex, "uid", uhex, "location", loc,
			"store", "directory", "path", path);
	rc = sec ? db_put(req->db, "bvsecret", sparent, sname, sec, true) : AQ_ENOMEM;
out:
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(khex, sizeof(khex));
	if (sec)
		json_object_del(sec, "key");
	json_decref(sec);
	return rc;
}

int srv_bvault_secret(struct db *db, const char *vault_name, json_t **out)
{
	char sname[900];

	snprintf(sname, sizeof(sname), "bvsecrets/%s", vault_name);
	return db_get(db, sname, out);
}

int srv_h_bvault_create(struct srv_req *req, json_t **resp)
{
	const char *id;
	char parent[600], name[700];
	json_t *doc = NULL, *out = NULL;
	bool validate;
	int rc;

	if ((rc = srv_create_input(req, "backupVaultId", api_backup_vault_fields, "backupVault",
				   api_backup_vault_check, &id, &validate, &doc)) != AQ_OK)
		return rc;
	srv_create_name(req, "backupVaults", id, doc, parent, name);
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK ||
	    (rc = vault_region_check(req, doc)) != AQ_OK)
		goto out;
	if (json_object_get(doc, "backupRegion"))
		json_object_set_new(doc, "sourceRegion", json_string(req->params[1]));
	out = vault_answer(doc);
	if (validate) {
		*resp = srv_op_preview(parent, name, "create", out);
		goto out;
	}
	if ((rc = srv_put_new(req, "bvault", parent, name, doc, "backupVault", name)) != AQ_OK ||
	    (rc = secret_put(req, doc)) != AQ_OK ||
	    (rc = srv_op_commit(req, parent, name, "create", out, resp)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(out);
	return rc;
}

int srv_h_bvault_get(struct srv_req *req, json_t **resp)
{
	char name[700];
	json_t *doc = NULL;
	int rc;

	if ((rc = vault_load(req, name, sizeof(name), &doc)) == AQ_OK)
		*resp = doc;
	return rc;
}

int srv_h_bvault_list(struct srv_req *req, json_t **resp)
{
	return srv_list_answer(req, "bvault", "backupVaults", resp);
}

int srv_h_bvault_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	char name[700], parent[600];
	json_t *old = NULL, *patch = NULL, *doc = NULL, *out = NULL;
	bool validate;
	int npaths, rc;

	if ((rc = srv_patch_input(req, api_backup_vault_fields, "BackupVault", "backupVault", &validate, paths, &npaths,
				  &patch)) != AQ_OK)
		return rc;
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = vault_load(req, name, sizeof(name), &old)) != AQ_OK ||
	    (rc = api_mask_patch(old, patch, paths, npaths, &doc, NULL)) != AQ_OK ||
	    (rc = api_backup_vault_check(&req->srv->cfg.math, doc, &req->msg)) != AQ_OK)
		goto out;
	out = vault_answer(doc);
	srv_parent(req, parent, sizeof(parent));
	rc = srv_op_save(req, validate, "update", "bvault", parent, name, doc, "backupVault", out, resp);
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	json_decref(out);
	return rc;
}

int srv_h_bvault_delete(struct srv_req *req, json_t **resp)
{
	char name[700], parent[600], sname[900];
	json_t *old = NULL;
	int64_t n = 0;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK || (rc = vault_load(req, name, sizeof(name), &old)) != AQ_OK ||
	    (rc = db_count(req->db, "backup", name, &n)) != AQ_OK)
		goto out;
	if (n > 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "backupVault \"%s\" still holds %lld backups; delete them first",
			     name, (long long)n);
		goto out;
	}
	srv_parent(req, parent, sizeof(parent));
	if ((rc = srv_bconfig_users(req->db, parent, name, &n, &req->msg)) != AQ_OK)
		goto out;
	if (n > 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "backupVault \"%s\" is the backupConfig.backupVault of %lld volumes; "
			     "change their backupConfig first", name, (long long)n);
		goto out;
	}
	snprintf(sname, sizeof(sname), "bvsecrets/%s", name);
	if ((rc = db_delete(req->db, name)) != AQ_OK || ((rc = db_delete(req->db, sname)) != AQ_OK && rc != AQ_ENOENT) ||
	    (rc = srv_op_commit(req, parent, name, "delete", NULL, resp)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	json_decref(old);
	return rc;
}
