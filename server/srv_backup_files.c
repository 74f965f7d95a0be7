/* srv_backup_files: POST .../volumes/V:restore (GCNV RestoreBackupFiles,
 * see srv_backup.h): the check of the request, then the file-restore job
 * recorded in the backup's bkref (action "files"), which srv_backup_job.c
 * puts in the intent of the node serving V and ends with the node's
 * report. */
#include "server/srv_backup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent_backup.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_backup_int.h"
#include "server/srv_internal.h"
#include "server/srv_join.h"
#include "server/srv_kick.h"
#include "server/srv_op.h"
#include "server/srv_req.h"

/* The body, checked whole before anything is read from the database. */
static int files_check(json_t *body, const char *parent, aq_msg *msg)
{
	const json_t *list = json_object_get(body, "fileList"), *p;
	const char *bn = api_json_str(body, "backup", NULL), *k;
	const json_t *v;
	size_t i, n = strlen(parent);
	char what[40];

	json_object_foreach(body, k, v)
		if (strcmp(k, "backup") && strcmp(k, "fileList") && strcmp(k, "restoreDestinationPath"))
			return aq_fail(msg, AQ_EINVAL, "%s: not a field of a restore (backup, fileList, "
				       "restoreDestinationPath)", k);
	if (!bn || !*bn)
		return aq_fail(msg, AQ_EINVAL, "backup is required: projects/P/locations/L/backupVaults/V/backups/B");
	if (strncmp(bn, parent, n) != 0 || strncmp(bn + n, "/backupVaults/", 14) != 0 || !strstr(bn + n + 14, "/backups/"))
		return aq_fail(msg, AQ_EINVAL, "backup \"%s\" must be a backup's full name in %s", bn, parent);
	if (!json_is_array(list) || json_array_size(list) == 0 || json_array_size(list) > API_INTENT_BKP_FILES_MAX)
		return aq_fail(msg, AQ_EINVAL, "fileList must list 1-%d absolute paths", API_INTENT_BKP_FILES_MAX);
	json_array_foreach(list, i, p) {
		snprintf(what, sizeof(what), "fileList[%zu]", i);
		if (!json_is_string(p) || strlen(json_string_value(p)) != json_string_length(p))
			return aq_fail(msg, AQ_EINVAL, "%s must be a path", what);
		if (api_backup_path_check(json_string_value(p), false, what, msg) != AQ_OK)
			return AQ_EINVAL;
	}
	v = json_object_get(body, "restoreDestinationPath");
	if (v && (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)))
		return aq_fail(msg, AQ_EINVAL, "restoreDestinationPath must be a path");
	return v ? api_backup_path_check(json_string_value(v), true, "restoreDestinationPath", msg) : AQ_OK;
}

int srv_h_volume_restore(struct srv_req *req, json_t **resp)
{
	char parent[600], vn[700], rn[820], rparent[300], pn[800], uid[17];
	json_t *vol = NULL, *bk = NULL, *ref = NULL, *op = NULL, *files = NULL, *pl = NULL;
	const char *bn;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	snprintf(vn, sizeof(vn), "%s/volumes/%s", parent, req->params[2]);
	if (!req->body)
		return aq_fail(&req->msg, AQ_EINVAL, "a restore needs a body: {backup, fileList, restoreDestinationPath}");
	if ((rc = files_check(req->body, parent, &req->msg)) != AQ_OK)
		return rc;
	bn = api_json_str(req->body, "backup", "");
	srv_bk_ref_name(bn, rn, sizeof(rn));
	srv_bk_ref_parent(req->params[1], rparent, sizeof(rparent));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK ||
	    (rc = srv_bk_get(req->db, vn, "volume", &vol, &req->msg)) != AQ_OK ||
	    (rc = srv_bk_get(req->db, bn, "backup", &bk, &req->msg)) != AQ_OK || (rc = db_get(req->db, rn, &ref)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(vol, "state", ""), "READY") != 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "volume \"%s\" is %s: files are restored into a READY volume", vn,
			     api_json_str(vol, "state", ""));
		goto out;
	}
	if (strcmp(api_json_str(bk, "state", ""), "READY") != 0 || *api_json_str(ref, "action", "")) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "backup \"%s\" is %s%s: files are restored from a READY backup, one "
			     "restore at a time", bn, api_json_str(bk, "state", ""),
			     *api_json_str(ref, "action", "") ? " and busy" : "");
		goto out;
	}
	snprintf(pn, sizeof(pn), "placements/%s", vn);
	if ((rc = db_get(req->db, pn, &pl)) == AQ_ENOENT || (rc == AQ_OK && !*api_json_str(pl, "node", ""))) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "volume \"%s\" is not served by any node", vn);
		goto out;
	}
	if (rc != AQ_OK || (rc = srv_op_create(req, parent, vn, "restore", false, NULL, &op)) != AQ_OK)
		goto out;
	srv_rand_hex(uid, 8);
	files = json_pack("{s:s,s:s,s:O,s:s}", "uid", uid, "volume", vn, "paths", json_object_get(req->body, "fileList"),
			  "dest", api_json_str(req->body, "restoreDestinationPath", "/"));
	if (!files) {
		rc = AQ_ENOMEM;
		goto out;
	}
	json_object_set_new(ref, "action", json_string("files"));
	json_object_set_new(ref, "op", json_string(api_json_str(op, "name", "")));
	json_object_set(ref, "files", files);
	if ((rc = db_put(req->db, "bkref", rparent, rn, ref, false)) != AQ_OK ||
	    (rc = db_dirty_mark(req->db, api_json_str(pl, "node", ""))) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	if (db_get(req->db, api_json_str(op, "name", ""), resp) != AQ_OK)
		*resp = json_incref(op);
	srv_kick(req->srv, api_json_str(pl, "node", "")); /* the node of the volume the files go into */
out:
	db_rollback(req->db);
	json_decref(vol);
	json_decref(bk);
	json_decref(ref);
	json_decref(op);
	json_decref(files);
	json_decref(pl);
	return rc;
}
