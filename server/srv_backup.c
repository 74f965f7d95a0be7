/* srv_backup: the backup routes (see srv_backup.h) and the request-free
 * starts they share with the backup scheduler (srv_bkpsched.h):
 * srv_backup_start checks a create (the vault, the volume, its node and
 * snapshot) and writes the backup and its bkref; srv_backup_start_delete
 * checks a delete (state, retention, restores) and marks it. The handlers
 * add the operation, commit and ring the reconciler. The reconciler's side
 * (the intent's jobs, the node's reports) is srv_backup_job.c. */
#include "server/srv_backup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api/api_intent_backup.h"
#include "api/api_math.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_backup_int.h"
#include "server/srv_bvault.h"
#include "server/srv_internal.h"
#include "server/srv_join.h"
#include "server/srv_kick.h"
#include "server/srv_op.h"
#include "server/srv_req.h"
#include "server/srv_snapshot.h"
#include "util/ut_clock.h"



#define TEMP_SNAP_PREFIX "bkp-"

/* The vault of the path (params[2]) and, with id, a backup in it. */
static void bk_names(const struct srv_req *req, char *vn, size_t vcap, const char *id, char *bn, size_t bcap)
{
	snprintf(vn, vcap, "projects/%s/locations/%s/backupVaults/%s", req->params[0], req->params[1],
		 req->params[2]);
	if (bn)
		snprintf(bn, bcap, "%s/backups/%s", vn, id ? id : req->params[3]);
}

void srv_bk_ref_name(const char *bn, char *out, size_t cap)
{
	snprintf(out, cap, "bkrefs/%s", bn);
}

void srv_bk_ref_parent(const char *location, char *out, size_t cap)
{
	snprintf(out, cap, "bkrefs/%s", location);
}

int srv_bk_get(struct db *db, const char *name, const char *what, json_t **doc, aq_msg *msg)
{
	int rc = db_get(db, name, doc);
	return rc == AQ_ENOENT ? aq_fail(msg, rc, "%s \"%s\" not found", what, name) : rc;
}

json_t *srv_bk_answer(const json_t *doc)
{
	json_t *out = json_deep_copy(doc);

	if (out)
		json_object_set_new(out, "@type", json_string(SRV_BACKUP_TYPE));
	return out;
}

/* Commit, then answer op as stored now and wake the reconciler: the
 * transaction marked the node that runs the backup's job (srv_bk_mark). */
static int bk_commit(struct srv_req *req, json_t *op, json_t **resp)
{
	int rc;

	if ((rc = db_commit(req->db)) != AQ_OK)
		return rc;
	if (db_get(req->db, api_json_str(op, "name", ""), resp) != AQ_OK)
		*resp = json_incref(op);
	srv_kick_marks(req->srv);
	return AQ_OK;
}

/* ---- create ---- */

/* The source volume: of project and location, READY, served by a node
 * (a tiered one too: the node reads its cold ranges from the tier). */
static int bk_source_volume(struct db *db, const char *project, const char *location, const char *src, json_t **vol,
			    aq_msg *msg)
{
	char want[300], pname[800];
	json_t *pl = NULL;
	const char *st;
	int rc;

	snprintf(want, sizeof(want), "projects/%s/", project);
	/* another project's volume: refused before any lookup (nothing learnt) */
	if (strncmp(src, want, strlen(want)) != 0)
		return aq_fail(msg, AQ_EINVAL, "sourceVolume \"%s\" is not a volume of project %s", src, project);
	snprintf(want, sizeof(want), "projects/%s/locations/%s/volumes/", project, location);
	if (strncmp(src, want, strlen(want)) != 0)
		return aq_fail(msg, AQ_EINVAL, "sourceVolume \"%s\" is not in location %s: a vault takes backups of "
			       "volumes of its own location", src, location);
	if ((rc = srv_bk_get(db, src, "sourceVolume", vol, msg)) != AQ_OK)
		return rc;
	st = api_json_str(*vol, "state", "");
	if (strcmp(st, "READY") != 0 && strcmp(st, "UPDATING") != 0)
		return aq_fail(msg, AQ_EPRECOND, "sourceVolume \"%s\" is %s: a backup needs a READY volume", src, st);
	snprintf(pname, sizeof(pname), "placements/%s", src);
	rc = db_get(db, pname, &pl);
	if (rc == AQ_OK && (strcmp(api_json_str(pl, "action", ""), "delete") == 0 || !*api_json_str(pl, "node", "")))
		rc = AQ_ENOENT;
	if (rc == AQ_ENOENT)
		rc = aq_fail(msg, AQ_EPRECOND, "sourceVolume \"%s\" is not served by any node: a backup is made by the "
			     "node serving the volume", src);
	json_decref(pl);
	return rc;
}

/* The volume's bkrefs in vault (location's), as an array (new reference). */
int srv_bk_refs_of(struct db *db, const char *location, const char *vault, const char *vn, json_t **out)
{
	char parent[300];
	json_t *all = NULL, *r;
	size_t i;
	int rc;

	*out = json_array();
	srv_bk_ref_parent(location, parent, sizeof(parent));
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
static int bk_chain(struct db *db, const char *location, const char *vault, const char *vn, char *prev, size_t cap,
		    aq_msg *msg)
{
	json_t *refs = NULL, *r;
	int64_t best = -1;
	size_t i;
	int rc;

	prev[0] = '\0';
	if ((rc = srv_bk_refs_of(db, location, vault, vn, &refs)) != AQ_OK)
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
	if ((rc = srv_bk_get(db, sn, "sourceSnapshot", &snap, msg)) != AQ_OK)
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

static int bk_vault_ok(struct db *db, const char *vname, const char *location, json_t **vault, aq_msg *msg)
{
	int rc = srv_bk_get(db, vname, "backupVault", vault, msg);

	if (rc == AQ_OK && strcmp(api_json_str(*vault, "backupVaultType", "IN_REGION"), "CROSS_REGION") == 0)
		rc = aq_fail(msg, AQ_EINVAL, "backupVault \"%s\" is CROSS_REGION: backups into it are not supported "
			     "yet (its store is on location %s's shelf, which the nodes of %s do not reach)", vname,
			     api_json_str(*vault, "backupRegion", ""), location);
	return rc;
}

/* enforcedRetentionEndTime by the vault's flag for kind ("manual", "daily"...). */
static void bk_set_retention(json_t *doc, const json_t *vault, const char *kind, json_t *ref)
{
	int64_t now = ut_clock_real_ms() / 1000, end = 0;
	char text[48];

	if (api_backup_retention_end(vault, kind, now, &end) != AQ_OK)
		return;
	ut_clock_format(end * 1000000000LL, 0, text, sizeof(text));
	json_object_set_new(doc, "enforcedRetentionEndTime", json_string(text));
	json_object_set_new(ref, "endUnix", json_integer(end));
}

/* projects/P/locations/L/backupVaults/V: P and L. */
static int bk_vault_parts(const char *vname, char *project, size_t pcap, char *location, size_t lcap, aq_msg *msg)
{
	const char *p = strncmp(vname, "projects/", 9) == 0 ? vname + 9 : NULL;
	const char *l = p ? strstr(p, "/locations/") : NULL;
	size_t pn = p && l ? (size_t)(l - p) : 0, ln = l ? strcspn(l + 11, "/") : 0;

	if (!l || pn == 0 || pn >= pcap || ln == 0 || ln >= lcap || strncmp(l + 11 + ln, "/backupVaults/", 14) != 0)
		return aq_fail(msg, AQ_EINVAL, "backupVault \"%s\" is not a vault's full name", vname);
	snprintf(project, pcap, "%.*s", (int)pn, p);
	snprintf(location, lcap, "%.*s", (int)ln, l + 11);
	return AQ_OK;
}

int srv_backup_start(struct db *db, const struct srv_backup_spec *sp, aq_msg *msg)
{
	char project[80], location[80], bn[800], rn[820], rparent[300], uid[17], prev[17], now[48];
	json_t *doc = sp->doc, *vault = NULL, *vol = NULL, *ref = NULL;
	const char *src = api_json_str(doc, "sourceVolume", ""), *snap = api_json_str(doc, "sourceSnapshot", NULL);
	bool sched = strcmp(sp->type, "SCHEDULED") == 0;
	int rc;

	if ((rc = bk_vault_parts(sp->vault, project, sizeof(project), location, sizeof(location), msg)) != AQ_OK)
		return rc;
	snprintf(bn, sizeof(bn), "%s/backups/%s", sp->vault, sp->id);
	srv_bk_ref_name(bn, rn, sizeof(rn));
	srv_bk_ref_parent(location, rparent, sizeof(rparent));
	srv_rand_hex(uid, 8);
	ut_clock_now_text(now, sizeof(now));
	ref = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:s}", "backup", bn, "uid", uid, "volume", src, "vault", sp->vault,
			"action", "backup", "seq", (json_int_t)ut_clock_real_ns(), "op", sp->op ? sp->op : "");
	if (!ref) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if (sched) { /* which schedule made it, for the scheduler's count (srv_bkpsched.h) */
		json_object_set_new(ref, "sched", json_string(sp->kind));
		json_object_set_new(ref, "slot", json_integer(sp->slot));
	}
	if ((rc = bk_vault_ok(db, sp->vault, location, &vault, msg)) != AQ_OK ||
	    (rc = bk_source_volume(db, project, location, src, &vol, msg)) != AQ_OK ||
	    (rc = bk_chain(db, location, sp->vault, src, prev, sizeof(prev), msg)) != AQ_OK ||
	    (snap && (rc = bk_source_snapshot(db, snap, ref, msg)) != AQ_OK))
		goto out;
	json_object_set_new(doc, "name", json_string(bn));
	json_object_set_new(doc, "state", json_string("CREATING"));
	json_object_set_new(doc, "backupType", json_string(sp->type));
	json_object_set_new(doc, "createTime", json_string(now));
	json_object_set_new(doc, "volumeRegion", json_string(location));
	json_object_set_new(doc, "backupRegion", json_string(location));
	api_json_set_int64(doc, "volumeUsageBytes", 0);
	api_json_set_int64(doc, "chainStorageBytes", 0);
	bk_set_retention(doc, vault, sp->kind, ref);
	if (prev[0])
		json_object_set_new(ref, "prevId", json_string(prev));
	if (sp->validate)
		goto out;
	rc = db_put(db, "backup", sp->vault, bn, doc, true);
	if (rc == AQ_EEXIST)
		rc = aq_fail(msg, AQ_EEXIST, "backup \"%s\" already exists", sp->id);
	/* its snapshot is not deleted while the backup reads it */
	if (rc != AQ_OK || (!snap && (rc = bk_temp_snapshot(db, vol, uid, ref, msg)) != AQ_OK) ||
	    (rc = db_put(db, "bkref", rparent, rn, ref, true)) != AQ_OK || (rc = srv_bk_mark(db, ref, location)) != AQ_OK ||
	    (rc = srv_snapshot_hold(db, api_json_str(json_object_get(ref, "snapshot"), "name", ""), bn)) != AQ_OK)
		goto out;
out:
	json_decref(vault);
	json_decref(vol);
	json_decref(ref);
	return rc;
}

int srv_h_backup_create(struct srv_req *req, json_t **resp)
{
	char parent[600], vname[700], bn[800];
	json_t *doc = NULL, *op = NULL, *out = NULL;
	struct srv_backup_spec sp = { .type = "MANUAL", .kind = "manual" };
	int rc;

	if ((rc = srv_create_input(req, "backupId", api_backup_fields, "backup", api_backup_check, &sp.id, &sp.validate,
				   &doc)) != AQ_OK)
		return rc;
	srv_parent(req, parent, sizeof(parent));
	bk_names(req, vname, sizeof(vname), sp.id, bn, sizeof(bn));
	sp.vault = vname;
	sp.doc = doc;
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK)
		goto out;
	/* the operation first, so that the backup's record names it */
	if (!sp.validate && (rc = srv_op_create(req, parent, bn, "create", false, NULL, &op)) != AQ_OK)
		goto out;
	sp.op = api_json_str(op, "name", "");
	if ((rc = srv_backup_start(req->db, &sp, &req->msg)) != AQ_OK)
		goto out;
	if (sp.validate) {
		out = srv_bk_answer(doc);
		*resp = srv_op_preview(parent, bn, "create", out);
		goto out;
	}
	rc = bk_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(doc);
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
	    (rc = srv_bk_get(req->db, vname, "backupVault", &vault, &req->msg)) != AQ_OK ||
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
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_bk_get(req->db, bn, "backup", &old, &req->msg)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(old, "state", ""), "DELETING") == 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "backup \"%s\" is being deleted", bn);
		goto out;
	}
	if ((rc = api_mask_patch(old, patch, paths, npaths, &doc, NULL)) != AQ_OK)
		goto out;
	out = srv_bk_answer(doc);
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

int srv_backup_start_delete(struct db *db, const char *bn, const char *opn, aq_msg *msg)
{
	char vname[700], parent[600], rn[820], rparent[300], loc[80];
	const char *bv = strstr(bn, "/backups/"), *bl = strstr(bn, "/backupVaults/"), *l = strstr(bn, "/locations/");
	json_t *doc = NULL, *ref = NULL;
	const char *st;
	int rc;

	if (!bv || !bl || !l || bl < l)
		return aq_fail(msg, AQ_EINVAL, "\"%s\" is not a backup's full name", bn);
	snprintf(vname, sizeof(vname), "%.*s", (int)(bv - bn), bn);
	snprintf(parent, sizeof(parent), "%.*s", (int)(bl - bn), bn);
	snprintf(loc, sizeof(loc), "%.*s", (int)strcspn(l + 11, "/"), l + 11);
	srv_bk_ref_name(bn, rn, sizeof(rn));
	srv_bk_ref_parent(loc, rparent, sizeof(rparent));
	if ((rc = srv_bk_get(db, bn, "backup", &doc, msg)) != AQ_OK || (rc = db_get(db, rn, &ref)) != AQ_OK)
		goto out;
	st = api_json_str(doc, "state", "");
	if (strcmp(st, "CREATING") == 0 || strcmp(st, "UPLOADING") == 0 || strcmp(st, "DELETING") == 0) {
		rc = aq_fail(msg, AQ_EPRECOND, "backup \"%s\" is %s: wait for it to finish", bn, st);
		goto out;
	}
	if (strcmp(api_json_str(ref, "action", ""), "files") == 0) {
		rc = aq_fail(msg, AQ_EPRECOND, "files are being restored from backup \"%s\" into volume \"%s\"; wait for it",
			     bn, api_json_str(json_object_get(ref, "files"), "volume", ""));
		goto out;
	}
	if ((rc = api_backup_delete_check(bn, api_json_int64(ref, "endUnix", 0), ut_clock_real_ms() / 1000, msg)) !=
		    AQ_OK ||
	    (rc = bk_restoring_from(db, parent, bn, msg)) != AQ_OK)
		goto out;
	json_object_set_new(doc, "state", json_string("DELETING"));
	json_object_set_new(doc, "stateDetails", json_string(""));
	json_object_set_new(ref, "action", json_string("delete"));
	json_object_set_new(ref, "op", json_string(opn ? opn : ""));
	if ((rc = db_put(db, "backup", vname, bn, doc, false)) == AQ_OK &&
	    (rc = db_put(db, "bkref", rparent, rn, ref, false)) == AQ_OK)
		rc = srv_bk_mark(db, ref, loc);
out:
	json_decref(doc);
	json_decref(ref);
	return rc;
}

int srv_h_backup_delete(struct srv_req *req, json_t **resp)
{
	char parent[600], vname[700], bn[800];
	json_t *doc = NULL, *op = NULL;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	bk_names(req, vname, sizeof(vname), NULL, bn, sizeof(bn));
	/* NOT_FOUND before an operation is made */
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_bk_get(req->db, bn, "backup", &doc, &req->msg)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, bn, "delete", false, NULL, &op)) != AQ_OK ||
	    (rc = srv_backup_start_delete(req->db, bn, api_json_str(op, "name", ""), &req->msg)) != AQ_OK)
		goto out;
	rc = bk_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(op);
	return rc;
}

int srv_backup_volume_busy(struct db *db, const char *vn, aq_msg *msg)
{
	char loc[128];
	json_t *refs = NULL, *r;
	size_t i;
	int rc;

	api_name_location(vn, loc, sizeof(loc));
	if ((rc = srv_bk_refs_of(db, loc, NULL, vn, &refs)) != AQ_OK)
		return rc;
	json_array_foreach(refs, i, r)
		if (strcmp(api_json_str(r, "action", ""), "backup") == 0) {
			rc = aq_fail(msg, AQ_EPRECOND, "volume \"%s\" is being backed up (backup \"%s\"); wait for the backup "
				     "to finish", vn, api_json_str(r, "backup", ""));
			break;
		}
	json_decref(refs);
	refs = NULL;
	/* files being restored into it, from a backup of any volume */
	if (rc == AQ_OK && (rc = srv_bk_refs_of(db, loc, NULL, NULL, &refs)) == AQ_OK)
		json_array_foreach(refs, i, r)
			if (strcmp(api_json_str(r, "action", ""), "files") == 0 &&
			    strcmp(api_json_str(json_object_get(r, "files"), "volume", ""), vn) == 0) {
				rc = aq_fail(msg, AQ_EPRECOND, "files are being restored into volume \"%s\" from backup "
					     "\"%s\"; wait for the restore to finish", vn, api_json_str(r, "backup", ""));
				break;
			}
	json_decref(refs);
	return rc;
}

/* The node that runs ref's job: the node serving its volume; a delete of a
 * volume no node serves goes to the first node of the location not DOWN. */
int srv_bk_job_node(struct db *db, const json_t *ref, const char *location, char *node, size_t cap)
{
	char pname[800], lparent[200];
	json_t *pl = NULL, *nodes = NULL, *n;
	size_t i;
	int rc;

	node[0] = '\0';
	/* a file restore runs where the volume the files go into is served */
	snprintf(pname, sizeof(pname), "placements/%s",
		 strcmp(api_json_str(ref, "action", ""), "files") == 0 ?
			 api_json_str(json_object_get(ref, "files"), "volume", "") : api_json_str(ref, "volume", ""));
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

int srv_bk_mark(struct db *db, const json_t *ref, const char *location)
{
	char node[600];
	int rc;

	if ((rc = srv_bk_job_node(db, ref, location, node, sizeof(node))) != AQ_OK || !*node)
		return rc;
	return db_dirty_mark(db, node);
}
