/* srv_op: the operations collection (google.longrunning.Operations). */
#include "server/srv_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "api/api_schema.h"

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
	char name[900];

	return op_load(req, name, sizeof(name), resp);
}

int srv_h_op_list(struct srv_req *req, json_t **resp)
{
	char parent[600], *next = NULL;
	json_t *items = NULL;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	if ((rc = srv_check_parent(req, SRV_PARENT_LIST)) != AQ_OK ||
	    (rc = srv_list(req, "operation", parent, &items, &next)) != AQ_OK)
		return rc;
	*resp = srv_list_page("operations", items, next);
	free(next);
	return *resp ? AQ_OK : AQ_ENOMEM;
}

/* Cancel: a done operation stays as it is (AIP-151); a running one records
 * the request, and the work that owns it ends it with CANCELLED. */
int srv_h_op_cancel(struct srv_req *req, json_t **resp)
{
	char name[900], parent[600];
	json_t *op = NULL;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK || (rc = op_load(req, name, sizeof(name), &op)) != AQ_OK)
		goto out;
	if (!json_is_true(json_object_get(op, "done"))) {
		json_object_set_new(json_object_get(op, "metadata"), "requestedCancellation", json_true());
		srv_parent(req, parent, sizeof(parent));
		if ((rc = db_put(req->db, "operation", parent, name, op, false)) != AQ_OK)
			goto out;
	}
	if ((rc = db_commit(req->db)) != AQ_OK)
		goto out;
	*resp = json_object();
out:
	db_rollback(req->db);
	json_decref(op);
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
