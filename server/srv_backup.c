/* srv_backup: the backup routes (see srv_backup.h). Each handler checks
 * its input (api_backup_check, then the vault, the volume, its node and
 * snapshot), then writes the backup, its bkref and its operation in one
 * transaction and rings the reconciler; the second half of the file is the
 * reconciler's side: the intent's backup jobs and the node's reports,
 * which move the backup along and finish the operations. */
#include "server/srv_backup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api/api_intent_backup.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_bvault.h"
#include "server/srv_internal.h"
#include "server/srv_join.h"
#include "server/srv_kick.h"
#include "server/srv_op.h"
#include "server/srv_req.h"
#include "server/srv_snapshot.h"
#include "util/ut_clock.h"

#define BACKUP_TYPE "type.googleapis.com/google.cloud.netapp.v1.Backup"
#define EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"
#define TEMP_SNAP_PREFIX "bkp-"

/* The vault of the path (params[2]) and, with id, a backup in it. */
static void bk_names(const struct srv_req *req, char *vn, size_t vcap, const char *id, char *bn, size_t bcap)
{
	snprintf(vn, vcap, "projects/%s/locations/%s/backupVaults/%s", req->params[0], req->params[1],
		 req->params[2]);
	if (bn)
		snprintf(bn, bcap, "%s/backups/%s", vn, id ? id : req->params[3]);
}

static void bkref_name(const char *bn, char *out, size_t cap)
{
	snprintf(out, cap, "bkrefs/%s", bn);
}

static void bkref_parent(const char *location, char *out, size_t cap)
{
	snprintf(out, cap, "bkrefs/%s", location);
}

static int bk_get(struct db *db, const char *name, const char *what, json_t **doc, aq_msg *msg)
{
	int rc = db_get(db, name, doc);
	return rc == AQ_ENOENT ? aq_fail(msg, rc, "%s \"%s\" not found", what, name) : rc;
}

static json_t *bk_answer(const json_t *doc)
{
	json_t *out = json_deep_copy(doc);

	if (out)
		json_object_set_new(out, "@type", json_string(BACKUP_TYPE));
	return out;
}

/* Commit, then answer op as stored now and ring every node. */
static int bk_commit(struct srv_req *req, json_t *op, json_t **resp)
{
	int rc;

	if ((rc = db_commit(req->db)) != AQ_OK)
		return rc;
	if (db_get(req->db, api_json_str(op, "name", ""), resp) != AQ_OK)
		*resp = json_incref(op);
	srv_kick(req->srv, NULL);
	return AQ_OK;
}

/* ---- create ---- */

/* The source volume: of this project and location, READY, served by a node
 * (a tiered one too: the node reads its cold ranges from the tier). */
static int bk_source_volume(struct srv_req *req, const char *src, json_t **vol, aq_msg *msg)
{
	char want[300], pname[800];
	json_t *pl = NULL;
	const char *st;
	int rc;

	snprintf(want, sizeof(want), "projects/%s/", req->params[0]);
	/* another project's volume: refused before any lookup (nothing learnt) */
	if (strncmp(src, want, strlen(want)) != 0)
		return aq_fail(msg, AQ_EINVAL, "sourceVolume \"%s\" is not a volume of project %s", src, req->params[0]);
	snprintf(want, sizeof(want), "projects/%s/locations/%s/volumes/", req->params[0], req->params[1]);
	if (strncmp(src, want, strlen(want)) != 0)
		return aq_fail(msg, AQ_EINVAL, "sourceVolume \"%s\" is not in location %s: a vault takes backups of "
			       "volumes of its own location", src, req->params[1]);
	if ((rc = bk_get(req->db, src, "sourceVolume", vol, msg)) != AQ_OK)
		return rc;
	st = api_json_str(*vol, "state", "");
	if (strcmp(st, "READY") != 0 && strcmp(st, "UPDATING") != 0)
		return aq_fail(msg, AQ_EPRECOND, "sourceVolume \"%s\" is %s: a backup needs a READY volume", src, st);
	snprintf(pname, sizeof(pname), "placements/%s", src);
	rc = db_get(req->db, pname, &pl);
	if (rc == AQ_OK && (strcmp(api_json_str(pl, "action", ""), "delete") == 0 || !*api_json_str(pl, "node", "")))
		rc = AQ_ENOENT;
	if (rc == AQ_ENOENT)
		rc = aq_fail(msg, AQ_EPRECOND, "sourceVolume \"%s\" is not served by any node: a backup is made by the "
			     "node serving the volume", src);
	json_decref(pl);
	return rc;
}

/* The volume's bkrefs in vault (location's), as an array (new reference). */
static int bk_refs_of(struct db *db, const char *location, const char *vault, const char *vn, json_t **out)
{
	char parent[300];
	json_t *all = NULL, *r;
	size_t i;
	int rc;

	*out = json_array();
	bkref_parent(location, parent, sizeof(parent));
	if (!*out || (rc = db_list_all(db, &(struct db_query){ .kind = "bkref", .parent = parent }, &all, NULL)) != AQ_OK) {
		rc = *out ? rc : AQ_ENOMEM;
		goto out;
	}
	json_array_foreach(all, i, r)
		if ((!vault || strcmp(api_json_str(r, "vault", ""), vault) == 0) &&
		    (!vn || strcmp(api_json_str(r, "volume", ""), vn) == 0))
			json_array_append(*out, r);
out:
	json_decref(all);
	return rc;
}

/* The previous backup (the newest READY one of the volume in the vault) into
 * prev; refused while another backup of it runs. */
static int bk_chain(struct srv_req *req, const char *vault, const char *vn, char *prev, size_t cap, aq_msg *msg)
{
	json_t *refs = NULL, *r;
	int64_t best = -1;
	size_t i;
	int rc;

	prev[0] = '\0';
	if ((rc = bk_refs_of(req->db, req->params[1], vault, vn, &refs)) != AQ_OK)
		return rc;
	json_array_foreach(refs, i, r) {
		if (strcmp(api_json_str(r, "action", ""), "backup") == 0) {
			rc = aq_fail(msg, AQ_EPRECOND, "backup \"%s\" of volume \"%s\" is still running: one backup of a "
				     "volume at a time; wait for it", api_json_str(r, "backup", ""), vn);
			break;
		}
		if (api_json_bool(r, "ready", false) && api_json_int64(r, "seq", 0) > best) {
			best = api_json_int64(r, "seq", 0);
			snprintf(prev, cap, "%s", api_json_str(r, "uid", ""));
		}
	}
	json_decref(refs);
	return rc;
}

/* The source snapshot: of the volume (api_backup_check), READY; its uid. */
static int bk_source_snapshot(struct db *db, const char *sn, json_t *ref, aq_msg *msg)
{
	char rn[820];
	json_t *snap = NULL, *sref = NULL;
	int rc;

	snprintf(rn, sizeof(rn), "snaprefs/%s", sn);
	if ((rc = bk_get(db, sn, "sourceSnapshot", &snap, msg)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(snap, "state", ""), "READY") != 0) {
		rc = aq_fail(msg, AQ_EPRECOND, "sourceSnapshot \"%s\" is %s: a backup needs a READY snapshot", sn,
			     api_json_str(snap, "state", ""));
		goto out;
	}
	if ((rc = db_get(db, rn, &sref)) != AQ_OK)
		goto out;
	json_object_set_new(ref, "snapshot", json_pack("{s:s,s:s,s:s}", "name", sn, "id", api_json_str(sref, "id", ""),
						       "uid", api_json_str(sref, "uid", "")));
out:
	json_decref(snap);
	json_decref(sref);
	return rc;
}

/* Without sourceSnapshot: a snapshot bkp-<uid> made by the same intent. */
static int bk_temp_snapshot(struct db *db, const json_t *vol, const char *uid, json_t *ref, aq_msg *msg)
{
	char id[64], sn[800], rn[820];
	json_t *sref = NULL;
	int rc;

	snprintf(id, sizeof(id), TEMP_SNAP_PREFIX "%s", uid);
	snprintf(sn, sizeof(sn), "%s/snapshots/%s", api_json_str(vol, "name", ""), id);
	snprintf(rn, sizeof(rn), "snaprefs/%s", sn);
	if ((rc = srv_snapshot_add(db, vol, id, NULL, "", NULL, 0, msg)) != AQ_OK || (rc = db_get(db, rn, &sref)) != AQ_OK)
		goto out;
	json_object_set_new(ref, "snapshot", json_pack("{s:s,s:s,s:s,s:b}", "name", sn, "id", id, "uid",
						       api_json_str(sref, "uid", ""), "temporary", 1));
out:
	json_decref(sref);
	return rc;
}

static int bk_vault_ok(struct srv_req *req, const char *vname, json_t **vault)
{
	int rc = bk_get(req->db, vname, "backupVault", vault, &req->msg);

	if (rc == AQ_OK && strcmp(api_json_str(*vault, "backupVaultType", "IN_REGION"), "CROSS_REGION") == 0)
		rc = aq_fail(&req->msg, AQ_EINVAL, "backupVault \"%s\" is CROSS_REGION: backups into it are not supported "
			     "yet (its store is on location %s's shelf, which the nodes of %s do not reach)", vname,
			     api_json_str(*vault, "backupRegion", ""), req->params[1]);
	return rc;
}

static void bk_set_retention(json_t *doc, const json_t *vault, json_t *ref)
{
	int64_t now = ut_clock_real_ms() / 1000, end = 0;
	char text[48];

	if (api_backup_retention_end(vault, "manual", now, &end) != AQ_OK)
		return;
	ut_clock_format(end * 1000000000LL, 0, text, sizeof(text));
	json_object_set_new(doc, "enforcedRetentionEndTime", json_string(text));
	json_object_set_new(ref, "endUnix", json_integer(end));
}

int srv_h_backup_create(struct srv_req *req, json_t **resp)
{
	char parent[600], vname[700], bn[800], rn[820], rparent[300], uid[17], prev[17], now[48];
	json_t *doc = NULL, *vault = NULL, *vol = NULL, *ref = NULL, *op = NULL, *out = NULL;
	const char *id, *src, *snap;
	bool validate;
	int rc;

	if ((rc = srv_create_input(req, "backupId", api_backup_fields, "backup", api_backup_check, &id, &validate,
				   &doc)) != AQ_OK)
		return rc;
	srv_parent(req, parent, sizeof(parent));
	bk_names(req, vname, sizeof(vname), id, bn, sizeof(bn));
	bkref_name(bn, rn, sizeof(rn));
	bkref_parent(req->params[1], rparent, sizeof(rparent));
	src = api_json_str(doc, "sourceVolume", "");
	snap = api_json_str(doc, "sourceSnapshot", NULL);
	srv_rand_hex(uid, 8);
	ut_clock_now_text(now, sizeof(now));
	ref = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "backup", bn, "uid", uid, "volume", src, "vault", vname, "action",
			"backup", "seq", (json_int_t)ut_clock_real_ns());
	if ((rc = ref ? db_begin(req->db) : AQ_ENOMEM) != AQ_OK ||
	    (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK ||
	    (rc = bk_vault_ok(req, vname, &vault)) != AQ_OK ||
	    (rc = bk_source_volume(req, src, &vol, &req->msg)) != AQ_OK ||
	    (rc = bk_chain(req, vname, src, prev, sizeof(prev), &req->msg)) != AQ_OK ||
	    (snap && (rc = bk_source_snapshot(req->db, snap, ref, &req->msg)) != AQ_OK))
		goto out;
	json_object_set_new(doc, "name", json_string(bn));
	json_object_set_new(doc, "state", json_string("CREATING"));
	json_object_set_new(doc, "backupType", json_string("MANUAL"));
	json_object_set_new(doc, "createTime", json_string(now));
	json_object_set_new(doc, "volumeRegion", json_string(req->params[1]));
	json_object_set_new(doc, "backupRegion", json_string(req->params[1]));
	api_json_set_int64(doc, "volumeUsageBytes", 0);
	api_json_set_int64(doc, "chainStorageBytes", 0);
	bk_set_retention(doc, vault, ref);
	if (prev[0])
		json_object_set_new(ref, "prevId", json_string(prev));
	out = bk_answer(doc);
	if (validate) {
		*resp = srv_op_preview(parent, bn, "create", out);
		goto out;
	}
	if ((rc = srv_put_new(req, "backup", vname, bn, doc, "backup", id)) != AQ_OK ||
	    (!snap && (rc = bk_temp_snapshot(req->db, vol, uid, ref, &req->msg)) != AQ_OK) ||
	    (rc = srv_op_create(req, parent, bn, "create", false, NULL, &op)) != AQ_OK)
		goto out;
	json_object_set_new(ref, "op", json_string(api_json_str(op, "name", "")));
	/* its snapshot is not deleted while the backup reads it */
	if ((rc = db_put(req->db, "bkref", rparent, rn, ref, true)) != AQ_OK ||
	    (rc = srv_snapshot_hold(req->db, api_json_str(json_object_get(ref, "snapshot"), "name", ""), bn)) != AQ_OK)
		goto out;
	rc = bk_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(vault);
	json_decref(vol);
	json_decref(ref);
	json_decref(op);
	json_decref(out);
	return rc;
}

/* ---- get, list, patch, delete ---- */

int srv_h_backup_get(struct srv_req *req, json_t **resp)
{
	(void)resp;
	return srv_doc_answer(req, "backup");
}

int srv_h_backup_list(struct srv_req *req, json_t **resp)
{
	char vname[700], *next = NULL;
	json_t *items = NULL, *vault = NULL;
	int rc;

	bk_names(req, vname, sizeof(vname), NULL, NULL, 0);
	if ((rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK ||
	    (rc = bk_get(req->db, vname, "backupVault", &vault, &req->msg)) != AQ_OK ||
	    (rc = srv_list(req, "backup", vname, &items, &next)) != AQ_OK)
		goto out;
	*resp = srv_list_page("backups", items, next);
	rc = *resp ? AQ_OK : AQ_ENOMEM;
out:
	free(next);
	json_decref(vault);
	return rc;
}

/* description and labels change in the database only: a done operation. */
int srv_h_backup_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	char parent[600], vname[700], bn[800];
	json_t *old = NULL, *patch = NULL, *doc = NULL, *op = NULL, *out = NULL;
	bool validate;
	int npaths, rc;

	if ((rc = srv_patch_input(req, api_backup_fields, "Backup", "backup", &validate, paths, &npaths, &patch)) != AQ_OK)
		return rc;
	srv_parent(req, parent, sizeof(parent));
	bk_names(req, vname, sizeof(vname), NULL, bn, sizeof(bn));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = bk_get(req->db, bn, "backup", &old, &req->msg)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(old, "state", ""), "DELETING") == 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "backup \"%s\" is being deleted", bn);
		goto out;
	}
	if ((rc = api_mask_patch(old, patch, paths, npaths, &doc, NULL)) != AQ_OK)
		goto out;
	out = bk_answer(doc);
	if (validate) {
		*resp = srv_op_preview(parent, bn, "update", out);
		goto out;
	}
	if ((rc = db_put(req->db, "backup", vname, bn, doc, false)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, bn, "update", true, out, &op)) != AQ_OK)
		goto out;
	rc = bk_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	json_decref(op);
	json_decref(out);
	return rc;
}

/* A backup a volume is being restored from is not deleted. */
static int bk_restoring_from(struct db *db, const char *parent, const char *bn, aq_msg *msg)
{
	json_t *vols = NULL, *v;
	size_t i;
	int rc;

	if ((rc = db_list_all(db, &(struct db_query){ .kind = "volume", .parent = parent }, &vols, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(vols, i, v)
		if (strcmp(api_json_str(v, "state", ""), "RESTORING") == 0 &&
		    strcmp(api_json_str(json_object_get(v, "restoreParameters"), "sourceBackup", ""), bn) == 0) {
			rc = aq_fail(msg, AQ_EPRECOND, "volume \"%s\" is being restored from backup \"%s\"; wait for it",
				     api_json_str(v, "name", ""), bn);
			break;
		}
	json_decref(vols);
	return rc;
}

int srv_h_backup_delete(struct srv_req *req, json_t **resp)
{
	char parent[600], vname[700], bn[800], rn[820], rparent[300];
	json_t *doc = NULL, *ref = NULL, *op = NULL;
	const char *st;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	bk_names(req, vname, sizeof(vname), NULL, bn, sizeof(bn));
	bkref_name(bn, rn, sizeof(rn));
	bkref_parent(req->params[1], rparent, sizeof(rparent));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = bk_get(req->db, bn, "backup", &doc, &req->msg)) != AQ_OK ||
	    (rc = db_get(req->db, rn, &ref)) != AQ_OK)
		goto out;
	st = api_json_str(doc, "state", "");
	if (strcmp(st, "CREATING") == 0 || strcmp(st, "UPLOADING") == 0 || strcmp(st, "DELETING") == 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "backup \"%s\" is %s: wait for it to finish", bn, st);
		goto out;
	}
	if ((rc = api_backup_delete_check(bn, api_json_int64(ref, "endUnix", 0), ut_clock_real_ms() / 1000,
					  &req->msg)) != AQ_OK ||
	    (rc = bk_restoring_from(req->db, parent, bn, &req->msg)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, bn, "delete", false, NULL, &op)) != AQ_OK)
		goto out;
	json_object_set_new(doc, "state", json_string("DELETING"));
	json_object_set_new(doc, "stateDetails", json_string(""));
	json_object_set_new(ref, "action", json_string("delete"));
	json_object_set_new(ref, "op", json_string(api_json_str(op, "name", "")));
	if ((rc = db_put(req->db, "backup", vname, bn, doc, false)) != AQ_OK ||
	    (rc = db_put(req->db, "bkref", rparent, rn, ref, false)) != AQ_OK)
		goto out;
	rc = bk_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(ref);
	json_decref(op);
	return rc;
}

int srv_backup_volume_busy(struct db *db, const char *vn, aq_msg *msg)
{
	char loc[128];
	const char *l = strstr(vn, "/locations/");
	json_t *refs = NULL, *r;
	size_t i;
	int rc;

	snprintf(loc, sizeof(loc), "%.*s", l ? (int)strcspn(l + 11, "/") : 0, l ? l + 11 : "");
	if ((rc = bk_refs_of(db, loc, NULL, vn, &refs)) != AQ_OK)
		return rc;
	json_array_foreach(refs, i, r)
		if (strcmp(api_json_str(r, "action", ""), "backup") == 0) {
			rc = aq_fail(msg, AQ_EPRECOND, "volume \"%s\" is being backed up (backup \"%s\"); wait for the backup "
				     "to finish", vn, api_json_str(r, "backup", ""));
			break;
		}
	json_decref(refs);
	return rc;
}

/* ---- the reconciler's side ---- */

/* The node that runs ref's job: the node serving its volume; a delete of a
 * volume no node serves goes to the first node of the location not DOWN. */
static int bk_job_node(struct db *db, const json_t *ref, const char *location, char *node, size_t cap)
{
	char pname[800], lparent[200];
	json_t *pl = NULL, *nodes = NULL, *n;
	size_t i;
	int rc;

	node[0] = '\0';
	snprintf(pname, sizeof(pname), "placements/%s", api_json_str(ref, "volume", ""));
	if ((rc = db_get(db, pname, &pl)) == AQ_OK && strcmp(api_json_str(pl, "action", ""), "delete") != 0)
		snprintf(node, cap, "%s", api_json_str(pl, "node", ""));
	json_decref(pl);
	if (rc != AQ_OK && rc != AQ_ENOENT)
		return rc;
	if (*node || strcmp(api_json_str(ref, "action", ""), "delete") != 0)
		return AQ_OK;
	snprintf(lparent, sizeof(lparent), "locations/%s", location);
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "node", .parent = lparent }, &nodes, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(nodes, i, n) {
		const char *nn = api_json_str(n, "name", "");

		if (strcmp(api_json_str(n, "state", ""), "DOWN") != 0 && (!*node || strcmp(nn, node) < 0))
			snprintf(node, cap, "%s", nn);
	}
	json_decref(nodes);
	return AQ_OK;
}

/* ref's job (api_intent_backup.h) with its vault's key and store. */
static int bk_job(struct db *db, const json_t *ref, json_t **job)
{
	struct api_intent_backup *b = calloc(1, sizeof(*b));
	const json_t *snap = json_object_get(ref, "snapshot");
	json_t *sec = NULL;
	int rc;

	*job = NULL;
	if (!b)
		return AQ_ENOMEM;
	if ((rc = srv_bvault_secret(db, api_json_str(ref, "vault", ""), &sec)) != AQ_OK)
		goto out;
	b->op = strcmp(api_json_str(ref, "action", ""), "delete") == 0	  ? API_INTENT_BKP_DELETE
		: strcmp(api_json_str(ref, "action", ""), "restore") == 0 ? API_INTENT_BKP_RESTORE
									  : API_INTENT_BKP_BACKUP;
	snprintf(b->id, sizeof(b->id), "%s", api_json_str(ref, "uid", ""));
	snprintf(b->name, sizeof(b->name), "%s", api_json_str(ref, "backup", ""));
	snprintf(b->key_hex, sizeof(b->key_hex), "%s", api_json_str(sec, "key", ""));
	snprintf(b->store_path, sizeof(b->store_path), "%s",
		 api_json_str(json_object_get(json_object_get(sec, "store"), "directory"), "path", ""));
	snprintf(b->volume, sizeof(b->volume), "%s", api_json_str(ref, "volume", ""));
	snprintf(b->prev_id, sizeof(b->prev_id), "%s", api_json_str(ref, "prevId", ""));
	if (snap) {
		b->has_snap = true;
		snprintf(b->snap.id, sizeof(b->snap.id), "%s", api_json_str(snap, "id", ""));
		snprintf(b->snap.uid, sizeof(b->snap.uid), "%s", api_json_str(snap, "uid", ""));
	}
	*job = api_intent_backup_encode(b);
	rc = *job ? AQ_OK : AQ_ENOMEM;
out:
	OPENSSL_cleanse(b, sizeof(*b));
	free(b);
	json_decref(sec);
	return rc;
}

/* ---- restore into a new volume ---- */

int srv_backup_restore_check(struct db *db, const char *parent, json_t *vol, aq_msg *msg)
{
	const char *src = api_json_str(json_object_get(vol, "restoreParameters"), "sourceBackup", NULL);
	size_t n = strlen(parent);
	json_t *bk = NULL;
	int64_t need, cap;
	int rc;

	if (!src)
		return AQ_OK;
	if (strncmp(src, parent, n) != 0 || strncmp(src + n, "/backupVaults/", 14) != 0)
		return aq_fail(msg, AQ_EINVAL, "restoreParameters.sourceBackup \"%s\" must be in %s: a volume is restored "
			       "from a backup of its own project and location", src, parent);
	if ((rc = bk_get(db, src, "restoreParameters.sourceBackup", &bk, msg)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(bk, "state", ""), "READY") != 0) {
		rc = aq_fail(msg, AQ_EPRECOND, "restoreParameters.sourceBackup \"%s\" is %s: a volume is restored from a "
			     "READY backup", src, api_json_str(bk, "state", ""));
		goto out;
	}
	need = api_json_int64(bk, "volumeUsageBytes", 0);
	cap = api_json_int64(vol, "capacityGib", 0);
	if (cap < (need + (1LL << 30) - 1) >> 30) {
		rc = aq_fail(msg, AQ_EINVAL, "capacityGib %lld is too small for restoreParameters.sourceBackup \"%s\", "
			     "which holds %lld bytes (at least %lld GiB)", (long long)cap, src, (long long)need,
			     (long long)((need + (1LL << 30) - 1) >> 30));
		goto out;
	}
	json_object_set_new(vol, "state", json_string("RESTORING"));
out:
	json_decref(bk);
	return rc;
}

int srv_backup_restore_intent(struct db *db, const json_t *vol, json_t *e)
{
	const char *src = api_json_str(json_object_get(vol, "restoreParameters"), "sourceBackup", NULL);
	char rn[820];
	json_t *ref = NULL, *job = NULL;
	int rc;

	if (!src || strcmp(api_json_str(vol, "state", ""), "RESTORING") != 0)
		return AQ_OK;
	bkref_name(src, rn, sizeof(rn));
	/* gone (the backup or its vault's secret): AQ_ENOENT, the caller fails
	 * the volume rather than serve it empty */
	if ((rc = db_get(db, rn, &ref)) != AQ_OK)
		return rc;
	json_object_set_new(ref, "action", json_string("restore"));
	if ((rc = bk_job(db, ref, &job)) == AQ_OK)
		rc = json_object_set_new(e, "restoreSource", job) ? AQ_ENOMEM : AQ_OK;
	json_decref(ref);
	return rc;
}

int srv_backup_intent(struct db *db, const json_t *node, json_t *intent)
{
	const char *nn = api_json_str(node, "name", ""), *loc = api_json_str(node, "location", "");
	char parent[300], target[200];
	json_t *refs = NULL, *r, *jobs = json_array();
	size_t i;
	int rc;

	bkref_parent(loc, parent, sizeof(parent));
	if (!jobs || (rc = db_list_all(db, &(struct db_query){ .kind = "bkref", .parent = parent }, &refs, NULL)) != AQ_OK) {
		rc = jobs ? rc : AQ_ENOMEM;
		goto out;
	}
	json_array_foreach(refs, i, r) {
		json_t *job = NULL;

		if (!*api_json_str(r, "action", "") || json_array_size(jobs) >= API_INTENT_MAX_BACKUPS)
			continue;
		if ((rc = bk_job_node(db, r, loc, target, sizeof(target))) != AQ_OK)
			goto out;
		if (strcmp(target, nn) != 0)
			continue;
		if ((rc = bk_job(db, r, &job)) == AQ_ENOENT)
			continue; /* the vault's secret is gone: nothing can run */
		if (rc != AQ_OK || (rc = json_array_append_new(jobs, job) ? AQ_ENOMEM : AQ_OK) != AQ_OK)
			goto out;
	}
	rc = AQ_OK;
	if (json_array_size(jobs) > 0)
		rc = json_object_set(intent, "backups", jobs) ? AQ_ENOMEM : AQ_OK;
out:
	json_decref(refs);
	json_decref(jobs);
	return rc;
}

/* The operation's progress line (no new operation state: still running). */
static int bk_op_progress(struct db *db, const char *opn, const char *text)
{
	char parent[600];
	const char *slash = strstr(opn, "/operations/");
	json_t *op = NULL;
	int rc;

	if (!*opn || !slash)
		return AQ_OK;
	if ((rc = db_get(db, opn, &op)) != AQ_OK)
		return rc == AQ_ENOENT ? AQ_OK : rc;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - opn), opn);
	json_object_set_new(json_object_get(op, "metadata"), "statusMessage", json_string(text));
	rc = json_is_true(json_object_get(op, "done")) ? AQ_OK : db_put(db, "operation", parent, opn, op, false);
	json_decref(op);
	return rc;
}

/* Once its backup ended, ref's snapshot is released and, when the backup
 * made it, deleted. */
static int bk_drop_temp(struct db *db, const json_t *ref)
{
	const json_t *snap = json_object_get(ref, "snapshot");
	json_t *doc = NULL;
	aq_msg why = { .text = "" };
	int rc;

	if ((rc = srv_snapshot_hold(db, api_json_str(snap, "name", ""), "")) != AQ_OK && rc != AQ_ENOENT)
		return rc;
	if (!api_json_bool(snap, "temporary", false))
		return AQ_OK;
	if ((rc = db_get(db, api_json_str(snap, "name", ""), &doc)) != AQ_OK)
		return rc == AQ_ENOENT ? AQ_OK : rc;
	rc = srv_snapshot_start_delete(db, doc, "", &why);
	json_decref(doc);
	return rc == AQ_EPRECOND ? AQ_OK : rc; /* being deleted already, or still being made: left */
}

/* The sum of uploadedBytes over the volume's READY backups in the vault. */
static int bk_chain_bytes(struct db *db, const json_t *ref, const char *location, int64_t *sum)
{
	json_t *refs = NULL, *r;
	size_t i;
	int rc;

	*sum = 0;
	if ((rc = bk_refs_of(db, location, api_json_str(ref, "vault", ""), api_json_str(ref, "volume", ""), &refs)) != AQ_OK)
		return rc;
	json_array_foreach(refs, i, r)
		if (api_json_bool(r, "ready", false))
			*sum += api_json_int64(r, "uploadedBytes", 0);
	json_decref(refs);
	return AQ_OK;
}

/* What one report does to a backup job's ref. */
static int bk_report_backup(struct db *db, const char *location, json_t *ref, json_t *doc,
			    const struct api_intent_backup_state *st, bool *kick)
{
	const char *bn = api_json_str(ref, "backup", ""), *vname = api_json_str(ref, "vault", "");
	char opn[800], text[900], rn[820], rparent[300];
	json_t *resp = NULL;
	int64_t chain = 0;
	int rc;

	snprintf(opn, sizeof(opn), "%s", api_json_str(ref, "op", ""));
	bkref_name(bn, rn, sizeof(rn));
	bkref_parent(location, rparent, sizeof(rparent));
	if (st->state == API_INTENT_BKP_UPLOADING) {
		json_object_set_new(doc, "state", json_string("UPLOADING"));
		json_object_set_new(doc, "stateDetails", json_string(st->detail));
		api_json_set_int64(ref, "bytesDone", (int64_t)st->bytes_done);
		snprintf(text, sizeof(text), "uploaded %llu of %llu bytes%s%s", (unsigned long long)st->bytes_done,
			 (unsigned long long)st->bytes_total, st->detail[0] ? "; " : "", st->detail);
		if ((rc = db_put(db, "backup", vname, bn, doc, false)) == AQ_OK &&
		    (rc = db_put(db, "bkref", rparent, rn, ref, false)) == AQ_OK)
			rc = bk_op_progress(db, opn, text);
		return rc;
	}
	*kick = true;
	json_object_set_new(ref, "action", json_string(""));
	json_object_set_new(ref, "op", json_string(""));
	if (st->state == API_INTENT_BKP_READY) {
		json_object_set_new(ref, "ready", json_true());
		api_json_set_int64(ref, "uploadedBytes", (int64_t)st->uploaded_bytes);
		json_object_set_new(doc, "state", json_string("READY"));
		json_object_set_new(doc, "stateDetails", json_string(""));
		api_json_set_int64(doc, "volumeUsageBytes", (int64_t)st->logical_bytes);
	} else {
		json_object_set_new(doc, "state", json_string("ERROR"));
		json_object_set_new(doc, "stateDetails", json_string(st->detail));
	}
	if ((rc = db_put(db, "bkref", rparent, rn, ref, false)) != AQ_OK ||
	    (rc = bk_chain_bytes(db, ref, location, &chain)) != AQ_OK)
		return rc;
	if (st->state == API_INTENT_BKP_READY)
		api_json_set_int64(doc, "chainStorageBytes", chain);
	snprintf(text, sizeof(text), "backup \"%s\" failed and is in state ERROR: %s", bn, st->detail);
	resp = bk_answer(doc);
	if ((rc = db_put(db, "backup", vname, bn, doc, false)) == AQ_OK && (rc = bk_drop_temp(db, ref)) == AQ_OK)
		rc = srv_op_end(db, opn, st->state == API_INTENT_BKP_READY ? resp : NULL,
				st->state == API_INTENT_BKP_READY ? AQ_OK : AQ_EINTERNAL, text);
	json_decref(resp);
	return rc;
}

/* What one report does to a delete job's ref. */
static int bk_report_delete(struct db *db, const char *location, json_t *ref, json_t *doc,
			    const struct api_intent_backup_state *st, bool *kick)
{
	const char *bn = api_json_str(ref, "backup", ""), *vname = api_json_str(ref, "vault", "");
	char opn[800], text[900], rn[820], rparent[300];
	json_t *resp = NULL;
	int rc;

	snprintf(opn, sizeof(opn), "%s", api_json_str(ref, "op", ""));
	bkref_name(bn, rn, sizeof(rn));
	bkref_parent(location, rparent, sizeof(rparent));
	*kick = true;
	if (st->state == API_INTENT_BKP_DELETED) {
		resp = json_pack("{s:s}", "@type", EMPTY_TYPE);
		if (((rc = db_delete(db, bn)) == AQ_OK || rc == AQ_ENOENT) && (rc = db_delete(db, rn)) == AQ_OK)
			rc = srv_op_end(db, opn, resp, AQ_OK, NULL);
		json_decref(resp);
		return rc;
	}
	json_object_set_new(ref, "action", json_string(""));
	json_object_set_new(ref, "op", json_string(""));
	json_object_set_new(doc, "state", json_string("ERROR"));
	json_object_set_new(doc, "stateDetails", json_string(st->detail));
	snprintf(text, sizeof(text), "the delete of backup \"%s\" failed; the backup is in state ERROR: %s", bn, st->detail);
	if ((rc = db_put(db, "bkref", rparent, rn, ref, false)) == AQ_OK &&
	    (rc = db_put(db, "backup", vname, bn, doc, false)) == AQ_OK)
		rc = srv_op_end(db, opn, NULL, AQ_EINTERNAL, text);
	return rc;
}

/* Whether st changes ref's backup (doc). */
static bool bk_report_news(const json_t *ref, const json_t *doc, const struct api_intent_backup_state *st)
{
	bool del = strcmp(api_json_str(ref, "action", ""), "delete") == 0;

	if (del)
		return st->state == API_INTENT_BKP_DELETED || st->state == API_INTENT_BKP_ERROR;
	if (st->state == API_INTENT_BKP_DELETED)
		return false;
	if (st->state != API_INTENT_BKP_UPLOADING)
		return true;
	return strcmp(api_json_str(doc, "state", ""), "UPLOADING") != 0 ||
	       api_json_int64(ref, "bytesDone", -1) != (int64_t)st->bytes_done ||
	       strcmp(api_json_str(doc, "stateDetails", ""), st->detail) != 0;
}

int srv_backup_report(struct db *db, const json_t *node, const json_t *body, bool apply, bool *changed, bool *kick)
{
	const char *loc = api_json_str(node, "location", "");
	const json_t *arr = json_object_get(body, "backups"), *it;
	char parent[300];
	json_t *refs = NULL, *r = NULL;
	size_t i, j;
	int rc = AQ_OK;

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return AQ_OK;
	bkref_parent(loc, parent, sizeof(parent));
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "bkref", .parent = parent }, &refs, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(arr, i, it) {
		struct api_intent_backup_state st;
		json_t *doc = NULL;

		if (i >= API_INTENT_MAX_BACKUPS * 2 || api_intent_backup_state_decode(it, &st, NULL) != AQ_OK)
			continue;
		json_array_foreach(refs, j, r)
			if (*api_json_str(r, "action", "") && strcmp(api_json_str(r, "uid", ""), st.id) == 0)
				break;
		if (j == json_array_size(refs) || db_get(db, api_json_str(r, "backup", ""), &doc) != AQ_OK)
			continue;
		if (bk_report_news(r, doc, &st)) {
			*changed = true;
			if (apply)
				rc = strcmp(api_json_str(r, "action", ""), "delete") == 0 ?
					bk_report_delete(db, loc, r, doc, &st, kick) :
					bk_report_backup(db, loc, r, doc, &st, kick);
		}
		json_decref(doc);
		if (rc != AQ_OK)
			break;
	}
	json_decref(refs);
	return rc;
}
