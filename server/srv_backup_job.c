/* srv_backup_job: the reconciler's side of backups (see srv_backup.h): the
 * backup, delete and restore jobs of a node's intent and the node's reports
 * of them, which move a backup along and finish its operation. Split from
 * srv_backup.c (the routes and srv_backup_start). */
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
#include "server/srv_op.h"
#include "server/srv_snapshot.h"

/* ---- the reconciler's side ---- */

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
	b->op = strcmp(api_json_str(ref, "action", ""), "files") == 0	  ? API_INTENT_BKP_RESTORE_FILES
		: strcmp(api_json_str(ref, "action", ""), "delete") == 0 ? API_INTENT_BKP_DELETE
		: strcmp(api_json_str(ref, "action", ""), "restore") == 0 ? API_INTENT_BKP_RESTORE
									  : API_INTENT_BKP_BACKUP;
	snprintf(b->id, sizeof(b->id), "%s", api_json_str(ref, "uid", ""));
	snprintf(b->name, sizeof(b->name), "%s", api_json_str(ref, "backup", ""));
	snprintf(b->key_hex, sizeof(b->key_hex), "%s", api_json_str(sec, "key", ""));
	snprintf(b->store_path, sizeof(b->store_path), "%s",
		 api_json_str(json_object_get(json_object_get(sec, "store"), "directory"), "path", ""));
	snprintf(b->volume, sizeof(b->volume), "%s", api_json_str(ref, "volume", ""));
	snprintf(b->prev_id, sizeof(b->prev_id), "%s", api_json_str(ref, "prevId", ""));
	if (b->op == API_INTENT_BKP_RESTORE_FILES) {
		const json_t *f = json_object_get(ref, "files"), *p;
		size_t i;

		snprintf(b->backup_id, sizeof(b->backup_id), "%s", b->id);
		snprintf(b->id, sizeof(b->id), "%s", api_json_str(f, "uid", ""));
		snprintf(b->volume, sizeof(b->volume), "%s", api_json_str(f, "volume", ""));
		snprintf(b->dest, sizeof(b->dest), "%s", api_json_str(f, "dest", "/"));
		json_array_foreach(json_object_get(f, "paths"), i, p)
			if (i < API_INTENT_BKP_FILES_MAX)
				snprintf(b->paths[b->npaths++], sizeof(b->paths[0]), "%s", json_string_value(p));
		snap = NULL;
	}
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
	if ((rc = srv_bk_get(db, src, "restoreParameters.sourceBackup", &bk, msg)) != AQ_OK)
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
	srv_bk_ref_name(src, rn, sizeof(rn));
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

	srv_bk_ref_parent(loc, parent, sizeof(parent));
	if (!jobs || (rc = db_list_all(db, &(struct db_query){ .kind = "bkref", .parent = parent }, &refs, NULL)) != AQ_OK) {
		rc = jobs ? rc : AQ_ENOMEM;
		goto out;
	}
	json_array_foreach(refs, i, r) {
		json_t *job = NULL;

		if (!*api_json_str(r, "action", "") || json_array_size(jobs) >= API_INTENT_MAX_BACKUPS)
			continue;
		if ((rc = srv_bk_job_node(db, r, loc, target, sizeof(target))) != AQ_OK)
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

int srv_backup_chain_bytes(struct db *db, const char *vn, const char *vault, int64_t *sum)
{
	char location[80];
	json_t *refs = NULL, *r;
	size_t i;
	int rc;

	*sum = 0;
	api_name_location(vn, location, sizeof(location));
	if ((rc = srv_bk_refs_of(db, location, vault, vn, &refs)) != AQ_OK)
		return rc;
	json_array_foreach(refs, i, r)
		if (api_json_bool(r, "ready", false))
			*sum += api_json_int64(r, "uploadedBytes", 0);
	json_decref(refs);
	return AQ_OK;
}

int srv_backup_volume_chain(struct db *db, json_t *vol)
{
	json_t *bc = json_object_get(vol, "backupConfig");
	const char *vault = api_json_str(bc, "backupVault", "");
	int64_t sum = 0;
	int rc;

	if (!json_is_object(bc))
		return AQ_OK;
	json_object_del(bc, "backupChainBytes");
	if (!*vault)
		return AQ_OK;
	if ((rc = srv_backup_chain_bytes(db, api_json_str(vol, "name", ""), vault, &sum)) == AQ_OK)
		api_json_set_int64(bc, "backupChainBytes", sum);
	return rc;
}

/* After the chain of volume vn in vault changed (a backup READY or gone):
 * its sum into every READY backup of the chain (chainStorageBytes; doc,
 * the reported one, written by the caller) and into the volume's
 * backupConfig.backupChainBytes when the volume still names that vault. */
static int bk_chain_refresh(struct db *db, const char *vn, const char *vault, json_t *doc)
{
	char location[80], vparent[300];
	json_t *refs = NULL, *r, *vol = NULL;
	int64_t sum = 0;
	size_t i;
	int rc;

	api_name_location(vn, location, sizeof(location));
	if ((rc = srv_backup_chain_bytes(db, vn, vault, &sum)) != AQ_OK ||
	    (rc = srv_bk_refs_of(db, location, vault, vn, &refs)) != AQ_OK)
		goto out;
	if (doc)
		api_json_set_int64(doc, "chainStorageBytes", sum);
	json_array_foreach(refs, i, r) {
		const char *bn = api_json_str(r, "backup", "");
		json_t *b = NULL;

		if (!api_json_bool(r, "ready", false) || (doc && strcmp(bn, api_json_str(doc, "name", "")) == 0))
			continue;
		if ((rc = db_get(db, bn, &b)) == AQ_OK && api_json_int64(b, "chainStorageBytes", -1) != sum) {
			api_json_set_int64(b, "chainStorageBytes", sum);
			rc = db_put(db, "backup", vault, bn, b, false);
		}
		json_decref(b);
		if (rc != AQ_OK && rc != AQ_ENOENT)
			goto out;
	}
	rc = db_get(db, vn, &vol);
	if (rc == AQ_ENOENT || (rc == AQ_OK && strcmp(api_json_str(json_object_get(vol, "backupConfig"), "backupVault", ""), vault) != 0)) {
		rc = AQ_OK; /* gone, or backed up into another vault now */
		goto out;
	}
	if (rc != AQ_OK || api_json_int64(json_object_get(vol, "backupConfig"), "backupChainBytes", -1) == sum)
		goto out;
	api_json_set_int64(json_object_get(vol, "backupConfig"), "backupChainBytes", sum);
	snprintf(vparent, sizeof(vparent), "%.*s", (int)(strstr(vn, "/volumes/") ? strstr(vn, "/volumes/") - vn : 0), vn);
	rc = db_put(db, "volume", vparent, vn, vol, false);
out:
	json_decref(refs);
	json_decref(vol);
	return rc;
}

/* What a report of ref's job works with: the backup and its vault (borrowed
 * from ref), ref's own name and parent, and the job's operation, copied
 * because the job's end clears ref's "op". */
struct bk_job_names {
	const char *bn, *vault;
	char opn[800], rn[820], rparent[300];
};

static void bk_job_names(const char *location, const json_t *ref, struct bk_job_names *n)
{
	n->bn = api_json_str(ref, "backup", "");
	n->vault = api_json_str(ref, "vault", "");
	snprintf(n->opn, sizeof(n->opn), "%s", api_json_str(ref, "op", ""));
	srv_bk_ref_name(n->bn, n->rn, sizeof(n->rn));
	srv_bk_ref_parent(location, n->rparent, sizeof(n->rparent));
}

/* The node reported how ref's job ended: ref runs nothing more (stored by
 * the caller) and the node's intent changes. */
static void bk_job_end(json_t *ref, bool *kick)
{
	*kick = true;
	json_object_set_new(ref, "action", json_string(""));
	json_object_set_new(ref, "op", json_string(""));
}

/* A backup's state and its details, as the API shows them. */
static void bk_doc_state(json_t *doc, const char *state, const char *detail)
{
	json_object_set_new(doc, "state", json_string(state));
	json_object_set_new(doc, "stateDetails", json_string(detail));
}

/* What one report does to a backup job's ref. */
static int bk_report_backup(struct db *db, const char *location, json_t *ref, json_t *doc,
			    const struct api_intent_backup_state *st, bool *kick)
{
	struct bk_job_names n;
	char text[900];
	json_t *resp = NULL;
	int rc;

	bk_job_names(location, ref, &n);
	if (st->state == API_INTENT_BKP_UPLOADING) {
		bk_doc_state(doc, "UPLOADING", st->detail);
		api_json_set_int64(ref, "bytesDone", (int64_t)st->bytes_done);
		snprintf(text, sizeof(text), "uploaded %llu of %llu bytes%s%s", (unsigned long long)st->bytes_done,
			 (unsigned long long)st->bytes_total, st->detail[0] ? "; " : "", st->detail);
		if ((rc = db_put(db, "backup", n.vault, n.bn, doc, false)) == AQ_OK &&
		    (rc = db_put(db, "bkref", n.rparent, n.rn, ref, false)) == AQ_OK)
			rc = bk_op_progress(db, n.opn, text);
		return rc;
	}
	bk_job_end(ref, kick);
	if (st->state == API_INTENT_BKP_READY) {
		json_object_set_new(ref, "ready", json_true());
		api_json_set_int64(ref, "uploadedBytes", (int64_t)st->uploaded_bytes);
		bk_doc_state(doc, "READY", "");
		api_json_set_int64(doc, "volumeUsageBytes", (int64_t)st->logical_bytes);
	} else {
		bk_doc_state(doc, "ERROR", st->detail);
	}
	/* the chain's bytes, stored: in this backup, the chain's others, the volume */
	if ((rc = db_put(db, "bkref", n.rparent, n.rn, ref, false)) != AQ_OK ||
	    (st->state == API_INTENT_BKP_READY &&
	     (rc = bk_chain_refresh(db, api_json_str(ref, "volume", ""), n.vault, doc)) != AQ_OK))
		return rc;
	snprintf(text, sizeof(text), "backup \"%s\" failed and is in state ERROR: %s", n.bn, st->detail);
	resp = srv_bk_answer(doc);
	if ((rc = db_put(db, "backup", n.vault, n.bn, doc, false)) == AQ_OK && (rc = bk_drop_temp(db, ref)) == AQ_OK)
		rc = srv_op_end(db, n.opn, st->state == API_INTENT_BKP_READY ? resp : NULL,
				st->state == API_INTENT_BKP_READY ? AQ_OK : AQ_EINTERNAL, text);
	json_decref(resp);
	return rc;
}

/* What one report does to a delete job's ref. */
static int bk_report_delete(struct db *db, const char *location, json_t *ref, json_t *doc,
			    const struct api_intent_backup_state *st, bool *kick)
{
	struct bk_job_names n;
	char text[900];
	json_t *resp = NULL;
	int rc;

	bk_job_names(location, ref, &n);
	*kick = true;
	if (st->state == API_INTENT_BKP_DELETED) {
		resp = json_pack("{s:s}", "@type", SRV_EMPTY_TYPE);
		if (((rc = db_delete(db, n.bn)) == AQ_OK || rc == AQ_ENOENT) && (rc = db_delete(db, n.rn)) == AQ_OK &&
		    (rc = bk_chain_refresh(db, api_json_str(ref, "volume", ""), n.vault, NULL)) == AQ_OK)
			rc = srv_op_end(db, n.opn, resp, AQ_OK, NULL);
		json_decref(resp);
		return rc;
	}
	bk_job_end(ref, kick);
	bk_doc_state(doc, "ERROR", st->detail);
	snprintf(text, sizeof(text), "the delete of backup \"%s\" failed; the backup is in state ERROR: %s", n.bn,
		 st->detail);
	if ((rc = db_put(db, "bkref", n.rparent, n.rn, ref, false)) == AQ_OK &&
	    (rc = db_put(db, "backup", n.vault, n.bn, doc, false)) == AQ_OK)
		rc = srv_op_end(db, n.opn, NULL, AQ_EINTERNAL, text);
	return rc;
}

/* What one report does to a file restore (the backup's ref, action "files"):
 * the operation ends with the volume, or with the node's reason (NOT_FOUND
 * when a path is not in the backup). */
static int bk_report_files(struct db *db, const char *location, json_t *ref, const struct api_intent_backup_state *st,
			   bool *kick)
{
	struct bk_job_names n;
	char vn[700], text[900];
	json_t *vol = NULL, *resp = NULL;
	int rc;

	bk_job_names(location, ref, &n);
	snprintf(vn, sizeof(vn), "%s", api_json_str(json_object_get(ref, "files"), "volume", ""));
	bk_job_end(ref, kick);
	json_object_del(ref, "files");
	if ((rc = db_put(db, "bkref", n.rparent, n.rn, ref, false)) != AQ_OK)
		return rc;
	if (st->state == API_INTENT_BKP_READY) {
		if ((rc = db_get(db, vn, &vol)) == AQ_OK) {
			json_object_set_new(vol, "@type", json_string("type.googleapis.com/google.cloud.netapp.v1.Volume"));
			resp = vol;
		}
		rc = srv_op_end(db, n.opn, resp, AQ_OK, NULL);
		json_decref(vol);
		return rc;
	}
	snprintf(text, sizeof(text), "restoring files from backup \"%s\" into volume \"%s\" failed: %s", n.bn, vn,
		 st->detail);
	return srv_op_end(db, n.opn, NULL, strstr(st->detail, " is not in backup ") ? AQ_ENOENT : AQ_EINTERNAL, text);
}

/* Whether st changes ref's backup (doc). */
static bool bk_report_news(const json_t *ref, const json_t *doc, const struct api_intent_backup_state *st)
{
	bool del = strcmp(api_json_str(ref, "action", ""), "delete") == 0;

	if (strcmp(api_json_str(ref, "action", ""), "files") == 0)
		return st->state == API_INTENT_BKP_READY || st->state == API_INTENT_BKP_ERROR;

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
	srv_bk_ref_parent(loc, parent, sizeof(parent));
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "bkref", .parent = parent }, &refs, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(arr, i, it) {
		struct api_intent_backup_state st;
		json_t *doc = NULL;

		if (i >= API_INTENT_MAX_BACKUPS * 2 || api_intent_backup_state_decode(it, &st, NULL) != AQ_OK)
			continue;
		json_array_foreach(refs, j, r) /* a file restore reports under its own uid */
			if (*api_json_str(r, "action", "") &&
			    strcmp(strcmp(api_json_str(r, "action", ""), "files") == 0 ?
					   api_json_str(json_object_get(r, "files"), "uid", "") : api_json_str(r, "uid", ""),
				   st.id) == 0)
				break;
		if (j == json_array_size(refs) || db_get(db, api_json_str(r, "backup", ""), &doc) != AQ_OK)
			continue;
		if (bk_report_news(r, doc, &st)) {
			*changed = true;
			if (apply && strcmp(api_json_str(r, "action", ""), "files") == 0)
				rc = bk_report_files(db, loc, r, &st, kick);
			else if (apply)
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
