/* srv_snapshot: the snapshot routes, revert and clones (see
 * srv_snapshot.h). Each handler checks its input first (api_snapshot.c,
 * the volume's state), then writes the snapshot, its snapref and its
 * operation in one transaction and rings the reconciler; the second half
 * of the file is the reconciler's side: the intent entry's snapshot fields
 * and the node's status report, which finishes the operations. */
#include "server/srv_snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_join.h"
#include "server/srv_kick.h"
#include "server/srv_mark.h"
#include "server/srv_op.h"
#include "server/srv_req.h"
#include "util/ut_clock.h"

#define SNAP_TYPE "type.googleapis.com/google.cloud.netapp.v1.Snapshot"
#define VOL_TYPE "type.googleapis.com/google.cloud.netapp.v1.Volume"

/* The volume of the path (params[2]) and, with id, a snapshot of it. */
static void snap_names(const struct srv_req *req, char *vn, size_t vcap, const char *id, char *sn, size_t scap)
{
	snprintf(vn, vcap, "projects/%s/locations/%s/volumes/%s", req->params[0], req->params[1], req->params[2]);
	if (sn)
		snprintf(sn, scap, "%s/snapshots/%s", vn, id ? id : req->params[3]);
}

static int snap_get(struct db *db, const char *name, const char *what, json_t **doc, aq_msg *msg)
{
	int rc = db_get(db, name, doc);

	return rc == AQ_ENOENT ? aq_fail(msg, rc, "%s \"%s\" not found", what, name) : rc;
}

/* A volume takes snapshots, reverts and clones only while a node serves it. */
static int snap_vol_ready(const json_t *vol, const char *verb, aq_msg *msg)
{
	const char *st = api_json_str(vol, "state", "");

	if (strcmp(st, "READY") == 0 || strcmp(st, "UPDATING") == 0)
		return AQ_OK;
	return aq_fail(msg, AQ_EPRECOND, "volume \"%s\" is %s: %s needs a READY volume", api_json_str(vol, "name", ""), st,
		       verb);
}

static void snapref_name(const char *snap, char *out, size_t cap)
{
	snprintf(out, cap, "snaprefs/%s", snap);
}

int srv_snapshot_add(struct db *db, const json_t *vol, const char *id, const json_t *body, const char *op,
		     const char *sched, int64_t slot, aq_msg *msg)
{
	const char *vn = api_json_str(vol, "name", "");
	char sn[800], rn[820], uid[17], now[48];
	json_t *snap = body ? json_deep_copy(body) : json_object(), *ref = NULL;
	int64_t n = 0;
	int rc;

	if (!snap)
		return AQ_ENOMEM;
	if ((rc = db_count(db, "snapshot", vn, &n)) != AQ_OK)
		goto out;
	if (n >= API_INTENT_MAX_SNAPSHOTS) {
		rc = aq_fail(msg, AQ_EEXHAUSTED, "volume \"%s\" has %lld snapshots, the most a volume holds (%d); delete one first",
			     vn, (long long)n, API_INTENT_MAX_SNAPSHOTS);
		goto out;
	}
	snprintf(sn, sizeof(sn), "%s/snapshots/%s", vn, id);
	snapref_name(sn, rn, sizeof(rn));
	srv_rand_hex(uid, 8);
	ut_clock_now_text(now, sizeof(now));
	json_object_set_new(snap, "name", json_string(sn));
	json_object_set_new(snap, "state", json_string("CREATING"));
	json_object_set_new(snap, "stateDetails", json_string(""));
	json_object_set_new(snap, "createTime", json_string(now));
	json_object_set_new(snap, "usedBytes", json_real(0));
	/* the volume's used space now: what a clone of it shares (cloneDetails) */
	ref = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "snapshot", sn, "id", id, "uid", uid, "action", "create", "op", op,
			"volumeUsedGib", (json_int_t)api_json_int64(vol, "usedGib", 0));
	if (!ref) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if (sched) {
		json_object_set_new(ref, "sched", json_string(sched));
		json_object_set_new(ref, "slot", json_integer(slot));
	}
	if ((rc = db_put(db, "snapshot", vn, sn, snap, true)) == AQ_EEXIST)
		rc = aq_fail(msg, rc, "snapshot \"%s\" already exists", sn);
	if (rc == AQ_OK)
		rc = db_put(db, "snapref", vn, rn, ref, true);
out:
	json_decref(snap);
	json_decref(ref);
	return rc;
}

/* The first clone volume that depends on snapshot sn (in its volume's
 * project and location: clones live there), into clone; "" when none. */
static int snap_clone_of(struct db *db, const char *sn, char *clone, size_t cap)
{
	const char *slash = strstr(sn, "/volumes/");
	char parent[600];
	json_t *items = NULL, *v;
	size_t i;
	int rc;

	clone[0] = '\0';
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - sn) : 0, sn);
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "volume", .parent = parent }, &items, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(items, i, v)
		if (strcmp(api_json_str(json_object_get(v, "cloneDetails"), "sourceSnapshot", ""), sn) == 0) {
			snprintf(clone, cap, "%s", api_json_str(v, "name", ""));
			break;
		}
	json_decref(items);
	return AQ_OK;
}

int srv_snapshot_start_delete(struct db *db, const json_t *snap, const char *op, aq_msg *msg)
{
	const char *sn = api_json_str(snap, "name", ""), *st = api_json_str(snap, "state", "");
	const char *slash = strstr(sn, "/snapshots/");
	char rn[820], vn[700], clone[700];
	json_t *ref = NULL, *doc = NULL;
	int rc;

	if (strcmp(st, "CREATING") == 0 || strcmp(st, "DELETING") == 0)
		return aq_fail(msg, AQ_EPRECOND, "snapshot \"%s\" is %s: one change at a time; wait for it to finish", sn,
			       strcmp(st, "CREATING") == 0 ? "being created" : "already being deleted");
	if ((rc = snap_clone_of(db, sn, clone, sizeof(clone))) != AQ_OK)
		return rc;
	/* ONTAP's FlexClone (GCNV's clones): the parent snapshot backs the clone
	 * until a split, which Aquifer does not have */
	if (*clone)
		return aq_fail(msg, AQ_EPRECOND, "snapshot \"%s\" is the source of clone volume \"%s\"; delete the clone first",
			       sn, clone);
	snprintf(vn, sizeof(vn), "%.*s", slash ? (int)(slash - sn) : 0, sn);
	snapref_name(sn, rn, sizeof(rn));
	if ((rc = db_get(db, rn, &ref)) != AQ_OK)
		goto out;
	if (*api_json_str(ref, "heldBy", "")) {
		rc = aq_fail(msg, AQ_EPRECOND, "snapshot \"%s\" is the source of backup \"%s\", which is still running; "
			     "wait for it", sn, api_json_str(ref, "heldBy", ""));
		goto out;
	}
	json_object_set_new(ref, "action", json_string("delete"));
	json_object_set_new(ref, "op", json_string(op));
	doc = json_deep_copy(snap);
	json_object_set_new(doc, "state", json_string("DELETING"));
	if ((rc = db_put(db, "snapref", vn, rn, ref, false)) == AQ_OK)
		rc = db_put(db, "snapshot", vn, sn, doc, false);
out:
	json_decref(ref);
	json_decref(doc);
	return rc;
}

int srv_snapshot_hold(struct db *db, const char *sn, const char *holder)
{
	const char *slash = strstr(sn, "/snapshots/");
	char rn[820], vn[700];
	json_t *ref = NULL;
	int rc;

	if (!slash)
		return AQ_EINVAL;
	snprintf(vn, sizeof(vn), "%.*s", (int)(slash - sn), sn);
	snapref_name(sn, rn, sizeof(rn));
	if ((rc = db_get(db, rn, &ref)) != AQ_OK)
		return rc;
	json_object_set_new(ref, "heldBy", json_string(holder));
	rc = db_put(db, "snapref", vn, rn, ref, false);
	json_decref(ref);
	return rc;
}

/* Mark the volume's node (the route's volume, params[2]; srv_mark.h),
 * commit and answer the operation op (re-read: srv_op_end may have
 * finished it), ringing that node only. */
static int snap_commit(struct srv_req *req, json_t *op, json_t **resp)
{
	char vn[800];
	json_t *nodes = json_object();
	int rc;

	if (!nodes)
		return AQ_ENOMEM;
	snprintf(vn, sizeof(vn), "projects/%s/locations/%s/volumes/%s", req->params[0], req->params[1],
		 req->nparams > 2 ? req->params[2] : "");
	if ((rc = srv_mark_volume(req->db, vn, nodes)) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	if (db_get(req->db, api_json_str(op, "name", ""), resp) != AQ_OK)
		*resp = json_incref(op);
	srv_mark_ring(req->srv, nodes);
out:
	json_decref(nodes);
	return rc;
}

int srv_h_snapshot_create(struct srv_req *req, json_t **resp)
{
	char parent[600], vn[700], sn[800];
	json_t *body = NULL, *vol = NULL, *op = NULL, *out = NULL;
	const char *id;
	bool validate;
	int rc;

	if (!req->body && !(req->body = json_object()))
		return AQ_ENOMEM;
	if ((rc = srv_create_input(req, "snapshotId", api_snapshot_fields, "snapshot", api_snapshot_check, &id,
				   &validate, &body)) != AQ_OK)
		return rc;
	srv_parent(req, parent, sizeof(parent));
	snap_names(req, vn, sizeof(vn), id, sn, sizeof(sn));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK ||
	    (rc = snap_get(req->db, vn, "volume", &vol, &req->msg)) != AQ_OK ||
	    (rc = snap_vol_ready(vol, "a snapshot", &req->msg)) != AQ_OK)
		goto out;
	if (validate) {
		out = json_deep_copy(body);
		json_object_set_new(out, "name", json_string(sn));
		json_object_set_new(out, "@type", json_string(SNAP_TYPE));
		*resp = srv_op_preview(parent, sn, "create", out);
		goto out;
	}
	if ((rc = srv_op_create(req, parent, sn, "create", false, NULL, &op)) != AQ_OK ||
	    (rc = srv_snapshot_add(req->db, vol, id, body, api_json_str(op, "name", ""), NULL, 0, &req->msg)) != AQ_OK)
		goto out;
	rc = snap_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(body);
	json_decref(vol);
	json_decref(op);
	json_decref(out);
	return rc;
}

int srv_h_snapshot_get(struct srv_req *req, json_t **resp)
{
	(void)resp;
	return srv_doc_answer(req, "snapshot");
}

int srv_h_snapshot_list(struct srv_req *req, json_t **resp)
{
	char vn[700], *next = NULL;
	json_t *items = NULL, *vol = NULL;
	int rc;

	snap_names(req, vn, sizeof(vn), NULL, NULL, 0);
	if ((rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK ||
	    (rc = snap_get(req->db, vn, "volume", &vol, &req->msg)) != AQ_OK ||
	    (rc = srv_list(req, "snapshot", vn, &items, &next)) != AQ_OK)
		goto out;
	*resp = srv_list_page("snapshots", items, next);
	rc = *resp ? AQ_OK : AQ_ENOMEM;
out:
	free(next);
	json_decref(vol);
	return rc;
}

/* description and labels change in the database only: the operation is
 * done when answered, as a pool's are. */
int srv_h_snapshot_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	char parent[600], vn[700], sn[800];
	json_t *patch = NULL, *snap = NULL, *op = NULL, *out = NULL;
	bool validate;
	int npaths, rc;

	if ((rc = srv_query_bool(req, "validateOnly", false, &validate)) != AQ_OK ||
	    (rc = api_mask_parse(api_snapshot_fields, srv_query(req, "updateMask"), paths, &npaths, &req->msg)) != AQ_OK)
		return rc;
	if (!req->body)
		return aq_fail(&req->msg, AQ_EINVAL, "request body must be a Snapshot");
	if ((rc = api_schema_check(api_snapshot_fields, req->body, false, "snapshot", &patch, &req->msg)) != AQ_OK)
		return rc;
	srv_parent(req, parent, sizeof(parent));
	snap_names(req, vn, sizeof(vn), NULL, sn, sizeof(sn));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = snap_get(req->db, sn, "snapshot", &snap, &req->msg)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(snap, "state", ""), "DELETING") == 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "snapshot \"%s\" is being deleted", sn);
		goto out;
	}
	if ((rc = api_mask_apply(snap, patch, paths, npaths)) != AQ_OK)
		goto out;
	out = json_deep_copy(snap);
	json_object_set_new(out, "@type", json_string(SNAP_TYPE));
	if (validate) {
		*resp = srv_op_preview(parent, sn, "update", out);
		goto out;
	}
	if ((rc = db_put(req->db, "snapshot", vn, sn, snap, false)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, sn, "update", true, out, &op)) != AQ_OK)
		goto out;
	rc = snap_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(patch);
	json_decref(snap);
	json_decref(op);
	json_decref(out);
	return rc;
}

int srv_h_snapshot_delete(struct srv_req *req, json_t **resp)
{
	char parent[600], vn[700], sn[800];
	json_t *snap = NULL, *op = NULL;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	snap_names(req, vn, sizeof(vn), NULL, sn, sizeof(sn));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = snap_get(req->db, sn, "snapshot", &snap, &req->msg)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, sn, "delete", false, NULL, &op)) != AQ_OK ||
	    (rc = srv_snapshot_start_delete(req->db, snap, api_json_str(op, "name", ""), &req->msg)) != AQ_OK)
		goto out;
	rc = snap_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(snap);
	json_decref(op);
	return rc;
}

/* The snapshots newer than snap (by createTime) go with a revert: refused
 * when one is still being created or backs a clone, else each delete starts
 * with no operation waiting (the revert's stands for them). */
static int revert_newer(struct db *db, const char *vn, const json_t *snap, aq_msg *msg)
{
	const char *t = api_json_str(snap, "createTime", "");
	json_t *all = NULL, *s;
	size_t i;
	int rc;

	if ((rc = db_list_all(db, &(struct db_query){ .kind = "snapshot", .parent = vn }, &all, msg)) != AQ_OK)
		return rc;
	json_array_foreach(all, i, s) {
		if (strcmp(api_json_str(s, "createTime", ""), t) <= 0 || strcmp(api_json_str(s, "state", ""), "DELETING") == 0)
			continue;
		if ((rc = srv_snapshot_start_delete(db, s, "", msg)) != AQ_OK) {
			char why[sizeof(msg->text)];

			snprintf(why, sizeof(why), "%s", msg->text);
			rc = aq_fail(msg, rc, "a revert deletes the newer snapshots, and %s", why);
			break;
		}
	}
	json_decref(all);
	return rc;
}

int srv_h_volume_revert(struct srv_req *req, json_t **resp)
{
	char parent[600], vn[700], sn[800], rn[800];
	json_t *vol = NULL, *snap = NULL, *ref = NULL, *rev = NULL, *op = NULL;
	const char *id = api_json_str(req->body, "snapshotId", NULL);
	int64_t seq = 0;
	int rc;

	if (req->body && (json_object_size(req->body) != (id ? 1u : 0u)))
		return aq_fail(&req->msg, AQ_EINVAL, "a revert body holds only snapshotId");
	if (!id)
		return aq_fail(&req->msg, AQ_EINVAL, "snapshotId is required: the ID of the snapshot to revert to");
	if ((rc = api_id_check(id, "snapshotId", &req->msg)) != AQ_OK)
		return rc;
	srv_parent(req, parent, sizeof(parent));
	snap_names(req, vn, sizeof(vn), id, sn, sizeof(sn));
	snapref_name(sn, rn, sizeof(rn));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = snap_get(req->db, vn, "volume", &vol, &req->msg)) != AQ_OK ||
	    (rc = snap_get(req->db, sn, "snapshot", &snap, &req->msg)) != AQ_OK)
		goto out;
	/* one change at a time: not while an update, another revert or a create runs */
	if (strcmp(api_json_str(vol, "state", ""), "READY") != 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "volume \"%s\" is %s: a revert needs a READY volume; wait for its change to finish",
			     vn, api_json_str(vol, "state", ""));
		goto out;
	}
	if (strcmp(api_json_str(snap, "state", ""), "READY") != 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "snapshot \"%s\" is %s: a volume reverts only to a READY snapshot", sn,
			     api_json_str(snap, "state", ""));
		goto out;
	}
	if ((rc = db_get(req->db, rn, &ref)) != AQ_OK)
		goto out;
	snprintf(rn, sizeof(rn), "snapreverts/%s", vn);
	if ((rc = db_get(req->db, rn, &rev)) == AQ_OK) {
		seq = api_json_int64(rev, "seq", 0);
		json_decref(rev);
		rev = NULL;
	} else if (rc != AQ_ENOENT) {
		goto out;
	}
	if ((rc = revert_newer(req->db, vn, snap, &req->msg)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, vn, "revert", false, NULL, &op)) != AQ_OK)
		goto out;
	rev = json_pack("{s:s,s:s,s:s,s:I,s:s}", "volume", vn, "id", id, "uid", api_json_str(ref, "uid", ""), "seq",
			(json_int_t)(seq + 1), "op", api_json_str(op, "name", ""));
	json_object_set_new(vol, "state", json_string("RESTORING"));
	if (!rev) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = db_put(req->db, "snaprevert", "", rn, rev, seq == 0)) != AQ_OK ||
	    (rc = db_put(req->db, "volume", parent, vn, vol, false)) != AQ_OK)
		goto out;
	rc = snap_commit(req, op, resp);
out:
	db_rollback(req->db);
	json_decref(vol);
	json_decref(snap);
	json_decref(ref);
	json_decref(rev);
	json_decref(op);
	return rc;
}

int srv_snapshot_clone_check(struct db *db, const char *parent, json_t *vol, aq_msg *msg)
{
	const char *src = api_json_str(json_object_get(vol, "restoreParameters"), "sourceSnapshot", NULL);
	size_t n = strlen(parent);
	char vn[700], rn[820];
	json_t *snap = NULL, *ref = NULL, *sv = NULL;
	int rc;

	if (!src)
		return AQ_OK;
	if (strncmp(src, parent, n) != 0 || strncmp(src + n, "/volumes/", 9) != 0)
		return aq_fail(msg, AQ_EINVAL, "restoreParameters.sourceSnapshot \"%s\" must be in %s: a clone shares its parent's shelf",
			       src, parent);
	snprintf(vn, sizeof(vn), "%.*s", (int)(strstr(src, "/snapshots/") - src), src);
	snapref_name(src, rn, sizeof(rn));
	if ((rc = snap_get(db, src, "restoreParameters.sourceSnapshot", &snap, msg)) != AQ_OK ||
	    (rc = db_get(db, rn, &ref)) != AQ_OK || (rc = db_get(db, vn, &sv)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(snap, "state", ""), "READY") != 0 || strcmp(api_json_str(sv, "state", ""), "DELETING") == 0) {
		rc = aq_fail(msg, AQ_EPRECOND, "restoreParameters.sourceSnapshot \"%s\" is %s (volume %s): a clone needs a READY snapshot",
			     src, api_json_str(snap, "state", ""), api_json_str(sv, "state", ""));
		goto out;
	}
	json_object_set_new(vol, "cloneDetails", json_pack("{s:s,s:s}", "sourceSnapshot", src, "sourceVolume", vn));
	api_json_set_int64(json_object_get(vol, "cloneDetails"), "sharedSpaceGib", api_json_int64(ref, "volumeUsedGib", 0));
out:
	json_decref(snap);
	json_decref(ref);
	json_decref(sv);
	return rc;
}

int srv_snapshot_volume_delete(struct db *db, const json_t *vol, bool force, aq_msg *msg)
{
	const char *vn = api_json_str(vol, "name", "");
	json_t *snaps = NULL, *s;
	char rn[820], clone[700];
	size_t i;
	int rc;

	if ((rc = db_list_all(db, &(struct db_query){ .kind = "snapshot", .parent = vn }, &snaps, msg)) != AQ_OK)
		return rc;
	/* those being deleted already go: they do not need force */
	json_array_foreach(snaps, i, s)
		if (!force && strcmp(api_json_str(s, "state", ""), "DELETING") != 0) {
			rc = aq_fail(msg, AQ_EPRECOND, "volume \"%s\" has snapshots (\"%s\", %zu in all): delete them first or delete with force=true",
				     vn, api_json_str(s, "name", ""), json_array_size(snaps));
			goto out;
		}
	json_array_foreach(snaps, i, s) {
		const char *sn = api_json_str(s, "name", "");
		json_t *ref = NULL;

		if ((rc = snap_clone_of(db, sn, clone, sizeof(clone))) != AQ_OK)
			goto out;
		if (*clone) {
			rc = aq_fail(msg, AQ_EPRECOND, "snapshot \"%s\" of volume \"%s\" is the source of clone volume \"%s\"; delete the clone first",
				     sn, vn, clone);
			goto out;
		}
		snapref_name(sn, rn, sizeof(rn));
		if ((rc = db_get(db, rn, &ref)) == AQ_OK) {
			rc = srv_op_end(db, api_json_str(ref, "op", ""), NULL, AQ_EBUSY, "the snapshot's volume is being deleted");
			if (rc == AQ_OK)
				rc = db_delete(db, rn);
		}
		json_decref(ref);
		if ((rc != AQ_OK && rc != AQ_ENOENT) || ((rc = db_delete(db, sn)) != AQ_OK))
			goto out;
	}
	snprintf(rn, sizeof(rn), "snapreverts/%s", vn);
	if ((rc = db_get(db, rn, &s)) == AQ_OK) {
		rc = srv_op_end(db, api_json_str(s, "op", ""), NULL, AQ_EBUSY, "the volume is being deleted");
		json_decref(s);
		if (rc == AQ_OK)
			rc = db_delete(db, rn);
	}
	if (rc == AQ_ENOENT)
		rc = AQ_OK;
	if (rc == AQ_OK) {
		snprintf(rn, sizeof(rn), "snapscheds/%s", vn);
		if ((rc = db_delete(db, rn)) == AQ_ENOENT)
			rc = AQ_OK;
	}
out:
	json_decref(snaps);
	return rc;
}

/* ---- the reconciler's side: intent entries and status reports ---- */

#define EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"

/* The placement folder of volume vn, into dir. */
static int snap_vol_dir(struct db *db, const char *vn, char *dir, size_t cap)
{
	char pname[800];
	json_t *pl = NULL;
	int rc;

	snprintf(pname, sizeof(pname), "placements/%s", vn);
	if ((rc = db_get(db, pname, &pl)) == AQ_OK)
		snprintf(dir, cap, "%s", api_json_str(pl, "dir", ""));
	json_decref(pl);
	return rc;
}

static void snap_copy(struct api_intent_snap *to, const json_t *ref)
{
	snprintf(to->id, sizeof(to->id), "%s", api_json_str(ref, "id", ""));
	snprintf(to->uid, sizeof(to->uid), "%s", api_json_str(ref, "uid", ""));
}

/* A clone still being made starts as its source snapshot (cloneSource):
 * the source volume's folder (a location's nodes share one shelf) and the
 * snapshot's uid. */
static int snap_intent_clone(struct db *db, const json_t *vol, struct api_intent_snapset *set)
{
	const char *src = api_json_str(json_object_get(vol, "cloneDetails"), "sourceSnapshot", NULL);
	const char *sv = api_json_str(json_object_get(vol, "cloneDetails"), "sourceVolume", "");
	char rn[820];
	json_t *ref = NULL;
	int rc;

	if (!src || strcmp(api_json_str(vol, "state", ""), "CREATING") != 0)
		return AQ_OK;
	snapref_name(src, rn, sizeof(rn));
	if ((rc = db_get(db, rn, &ref)) == AQ_OK && (rc = snap_vol_dir(db, sv, set->clone_dir, sizeof(set->clone_dir))) == AQ_OK) {
		snap_copy(&set->clone_snap, ref);
		set->clone = true;
	}
	json_decref(ref);
	return rc == AQ_ENOENT ? AQ_OK : rc; /* gone: the volume create fails on the node */
}

int srv_snapshot_intent(struct db *db, const json_t *vol, json_t *e)
{
	const char *vn = api_json_str(vol, "name", "");
	struct api_intent_snapset *set = calloc(1, sizeof(*set));
	json_t *refs = NULL, *ref, *rev = NULL;
	char rn[800];
	size_t i;
	int rc;

	if (!set)
		return AQ_ENOMEM;
	set->directory = api_json_bool(vol, "snapshotDirectory", false);
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "snapref", .parent = vn }, &refs, NULL)) != AQ_OK)
		goto out;
	json_array_foreach(refs, i, ref) {
		const char *action = api_json_str(ref, "action", "");

		/* a snapshot the node could not make is kept as it has it (ERROR) */
		if (strcmp(action, "delete") == 0 && set->ndeletes < API_INTENT_MAX_SNAPSHOTS)
			snap_copy(&set->deletes[set->ndeletes++], ref);
		else if ((strcmp(action, "create") == 0 || !*action) && set->nsnaps < API_INTENT_MAX_SNAPSHOTS)
			snap_copy(&set->snaps[set->nsnaps++], ref);
	}
	snprintf(rn, sizeof(rn), "snapreverts/%s", vn);
	if (db_get(db, rn, &rev) == AQ_OK && *api_json_str(rev, "op", "")) {
		set->revert_seq = (uint64_t)api_json_int64(rev, "seq", 0);
		snap_copy(&set->revert, rev);
	}
	if ((rc = snap_intent_clone(db, vol, set)) == AQ_OK)
		rc = api_intent_snapset_encode(set, e);
out:
	free(set);
	json_decref(refs);
	json_decref(rev);
	return rc;
}

/* The report's state of uid, or NULL. */
static const struct api_intent_snap_state *snap_reported(const struct api_intent_snap_state *st, size_t n, const char *uid)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].snap.uid, uid) == 0)
			return &st[i];
	return NULL;
}

/* What the node's report does to one snapshot (its snapref ref). */
static int snap_report_one(struct db *db, const char *vn, json_t *ref, const struct api_intent_snap_state *st,
			   bool apply, bool *changed)
{
	char rn[820], op[800], text[600], action[16], sn[800];
	json_t *snap = NULL, *resp = NULL;
	int rc = AQ_OK;

	/* copies: ref is edited below */
	snprintf(action, sizeof(action), "%s", api_json_str(ref, "action", ""));
	snprintf(sn, sizeof(sn), "%s", api_json_str(ref, "snapshot", ""));
	snprintf(op, sizeof(op), "%s", api_json_str(ref, "op", ""));
	snapref_name(sn, rn, sizeof(rn));
	if (strcmp(action, "delete") == 0 && !st) {
		*changed = true;
		if (!apply)
			return AQ_OK;
		resp = json_pack("{s:s}", "@type", EMPTY_TYPE);
		if ((rc = db_delete(db, sn)) == AQ_OK || rc == AQ_ENOENT)
			if ((rc = db_delete(db, rn)) == AQ_OK)
				rc = srv_op_end(db, op, resp, AQ_OK, NULL);
		goto out;
	}
	if (!st || strcmp(action, "delete") == 0 || strcmp(action, "error") == 0 ||
	    (!*action && api_json_int64(ref, "usedBytes", -1) == (int64_t)st->used_bytes))
		return AQ_OK;
	*changed = true;
	if (!apply)
		return AQ_OK;
	if ((rc = db_get(db, sn, &snap)) != AQ_OK)
		goto out;
	json_object_set_new(snap, "usedBytes", json_real((double)st->used_bytes));
	api_json_set_int64(ref, "usedBytes", (int64_t)st->used_bytes);
	if (strcmp(action, "create") == 0) {
		json_object_set_new(snap, "state", json_string(st->ready ? "READY" : "ERROR"));
		snprintf(text, sizeof(text), "the node could not create the snapshot: %s", st->detail);
		json_object_set_new(snap, "stateDetails", json_string(st->ready ? "" : text));
		json_object_set_new(ref, "action", json_string(st->ready ? "" : "error"));
		json_object_set_new(ref, "op", json_string(""));
		resp = json_deep_copy(snap);
		json_object_set_new(resp, "@type", json_string(SNAP_TYPE));
	}
	if ((rc = db_put(db, "snapshot", vn, sn, snap, false)) == AQ_OK && (rc = db_put(db, "snapref", vn, rn, ref, false)) == AQ_OK &&
	    strcmp(action, "create") == 0)
		rc = srv_op_end(db, op, st->ready ? resp : NULL, st->ready ? AQ_OK : AQ_EINTERNAL, text);
out:
	json_decref(snap);
	json_decref(resp);
	return rc;
}

/* A revert is done once the node reports its seq applied. */
static int snap_report_revert(struct db *db, const char *vn, const json_t *v, bool apply, bool *changed)
{
	char rn[800], parent[600];
	json_t *rev = NULL, *vol = NULL, *resp = NULL;
	int rc;

	snprintf(rn, sizeof(rn), "snapreverts/%s", vn);
	if ((rc = db_get(db, rn, &rev)) != AQ_OK)
		return rc == AQ_ENOENT ? AQ_OK : rc;
	if (!*api_json_str(rev, "op", "") || api_json_int64(v, "revertSeq", 0) < api_json_int64(rev, "seq", 0))
		goto out;
	*changed = true;
	if (!apply)
		goto out;
	snprintf(parent, sizeof(parent), "%.*s", (int)(strstr(vn, "/volumes/") - vn), vn);
	if ((rc = db_get(db, vn, &vol)) != AQ_OK)
		goto out;
	if (strcmp(api_json_str(vol, "state", ""), "RESTORING") == 0)
		json_object_set_new(vol, "state", json_string("READY"));
	resp = json_deep_copy(vol);
	json_object_set_new(resp, "@type", json_string(VOL_TYPE));
	if ((rc = db_put(db, "volume", parent, vn, vol, false)) != AQ_OK ||
	    (rc = srv_op_end(db, api_json_str(rev, "op", ""), resp, AQ_OK, NULL)) != AQ_OK)
		goto out;
	json_object_set_new(rev, "op", json_string(""));
	rc = db_put(db, "snaprevert", "", rn, rev, false);
out:
	json_decref(rev);
	json_decref(vol);
	json_decref(resp);
	return rc;
}

int srv_snapshot_report(struct db *db, const json_t *vol, const json_t *v, bool apply, bool *changed)
{
	const char *vn = api_json_str(vol, "name", "");
	json_t *arr = json_object_get(v, "snapshots"), *it, *refs = NULL, *ref;
	struct api_intent_snap_state *st = NULL;
	size_t i, n = 0;
	int rc = AQ_OK;

	if (!json_is_array(arr) || !strstr(vn, "/volumes/"))
		return AQ_OK;
	if (!(st = calloc(json_array_size(arr) + 1, sizeof(*st))))
		return AQ_ENOMEM;
	/* an entry that does not decode is not taken as the snapshot's state */
	json_array_foreach(arr, i, it)
		if (i < API_INTENT_MAX_SNAPSHOTS * 2 && api_intent_snap_state_decode(it, &st[n], NULL) == AQ_OK)
			n++;
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "snapref", .parent = vn }, &refs, NULL)) != AQ_OK)
		goto out;
	json_array_foreach(refs, i, ref)
		if ((rc = snap_report_one(db, vn, ref, snap_reported(st, n, api_json_str(ref, "uid", "")), apply, changed)) != AQ_OK)
			goto out;
	rc = snap_report_revert(db, vn, v, apply, changed);
out:
	free(st);
	json_decref(refs);
	return rc;
}
