/* srv_operation: the operations collection of a location
 * (google.longrunning.Operations: get, list, cancel, delete); see
 * srv_operation.h. */
#include "server/srv_operation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_mark.h"
#include "server/srv_op.h"
#include "server/srv_req.h"
#include "server/srv_volume.h"

static void op_name(const struct srv_req *req, char *out, size_t cap)
{
	snprintf(out, cap, "projects/%s/locations/%s/operations/%s", req->params[0], req->params[1],
		 req->params[2]);
}

static int op_load(struct srv_req *req, char *name, size_t cap, json_t **doc)
{
	int rc;

	op_name(req, name, cap);
	rc = db_get(req->db, name, doc);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "operation \"%s\" not found", name);
	return rc;
}

int srv_h_op_get(struct srv_req *req, json_t **resp)
{
	(void)resp;
	return srv_doc_answer(req, "operation");
}

int srv_h_op_list(struct srv_req *req, json_t **resp)
{
	return srv_list_answer(req, "operation", "operations", resp);
}

/* Cancel (google.longrunning CancelOperation): a running volume create is
 * rolled back (the volume goes, its node removes whatever it made) and its
 * operation ends at once with CANCELLED (code 1). Anything else is refused
 * with FAILED_PRECONDITION saying why: a done operation has nothing left to
 * cancel; an update may already be in effect on its node; an accepted
 * delete always completes (it is never lost); pool operations finish when
 * they are answered. */
int srv_h_op_cancel(struct srv_req *req, json_t **resp)
{
	char name[900], parent[600], why[700];
	json_t *op = NULL, *md, *nodes = NULL;
	const char *verb, *target;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK || (rc = op_load(req, name, sizeof(name), &op)) != AQ_OK)
		goto out;
	md = json_object_get(op, "metadata");
	verb = api_json_str(md, "verb", "");
	target = api_json_str(md, "target", "");
	if (json_is_true(json_object_get(op, "done"))) {
		json_t *err = json_object_get(op, "error");

		rc = aq_fail(&req->msg, AQ_EPRECOND, "operation %s is already done (%s %s %s); there is nothing to cancel",
			     name, verb, target, !err ? "succeeded" : api_json_int64(err, "code", 0) == 1 ? "was cancelled" : "failed");
		goto out;
	}
	if (strcmp(verb, "create") != 0 || !strstr(target, "/volumes/")) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "operation %s (%s of %s) cannot be cancelled: %s", name, verb, target,
			     strcmp(verb, "delete") == 0 ? "an accepted delete always completes"
							 : "the change may already be in effect on its node; wait for it to finish");
		goto out;
	}
	/* its node, read before the rollback takes its placement away */
	if (!(nodes = json_object())) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = srv_mark_volume(req->db, target, nodes)) != AQ_OK ||
	    (rc = srv_volume_cancel_create(req, target, name)) != AQ_OK)
		goto out;
	json_object_set_new(md, "requestedCancellation", json_true());
	srv_parent(req, parent, sizeof(parent));
	snprintf(why, sizeof(why), "cancelled: the create was rolled back and volume %s deleted", target);
	if ((rc = db_put(req->db, "operation", parent, name, op, false)) != AQ_OK ||
	    (rc = srv_op_finish(req->db, name, NULL, AQ_ECANCELLED, why)) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	srv_mark_ring(req->srv, nodes); /* its node removes what it made */
	*resp = json_object();
out:
	db_rollback(req->db);
	json_decref(op);
	json_decref(nodes);
	return rc;
}

int srv_h_op_delete(struct srv_req *req, json_t **resp)
{
	char name[900];
	int rc;

	op_name(req, name, sizeof(name));
	rc = db_delete(req->db, name);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "operation \"%s\" not found", name);
	if (rc == AQ_OK)
		*resp = json_object();
	return rc;
}
