/* srv_op: operation documents (google.longrunning.Operation); see
 * srv_op.h. The collection's routes are srv_operation.c's. */
#include "server/srv_op.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_req.h"
#include "util/ut_clock.h"
#include "util/ut_hex.h"

static json_t *op_doc(const char *parent, const char *target, const char *verb, bool done,
		      const json_t *response)
{
	unsigned char rnd[8];
	char id[64], name[700], now[48];
	char hex[2 * sizeof(rnd) + 1];
	json_t *op;

	RAND_bytes(rnd, sizeof(rnd));
	ut_hex_encode(rnd, sizeof(rnd), hex, sizeof(hex));
	snprintf(id, sizeof(id), "operation-%lld-%s", (long long)ut_clock_real_ms(), hex);
	snprintf(name, sizeof(name), "%s/operations/%s", parent, id);
	ut_clock_now_text(now, sizeof(now));
	op = json_pack("{s:s,s:{s:s,s:s,s:s,s:s,s:s,s:b,s:s},s:b}", "name", name, "metadata", "@type",
		       "type.googleapis.com/google.cloud.netapp.v1.OperationMetadata", "createTime",
		       now, "target", target, "verb", verb, "statusMessage", "", "requestedCancellation",
		       0, "apiVersion", "v1", "done", done);
	if (op && done) {
		json_object_set_new(json_object_get(op, "metadata"), "endTime", json_string(now));
		if (response)
			json_object_set_new(op, "response", json_deep_copy(response));
	}
	return op;
}

json_t *srv_op_preview(const char *parent, const char *target, const char *verb,
		       const json_t *response)
{
	return op_doc(parent, target, verb, true, response);
}

int srv_op_create(struct srv_req *req, const char *parent, const char *target, const char *verb,
		  bool done, const json_t *response, json_t **out)
{
	json_t *op = op_doc(parent, target, verb, done, response);
	int rc;

	if (!op)
		return AQ_ENOMEM;
	rc = db_put(req->db, "operation", parent, json_string_value(json_object_get(op, "name")), op, true);
	if (rc != AQ_OK) {
		json_decref(op);
		return rc;
	}
	*out = op;
	return AQ_OK;
}

int srv_op_commit(struct srv_req *req, const char *parent, const char *target, const char *verb,
		  const json_t *response, json_t **op)
{
	json_t *empty = NULL;
	int rc;

	if (!response && !(response = empty = json_pack("{s:s}", "@type", "type.googleapis.com/google.protobuf.Empty")))
		return AQ_ENOMEM;
	if ((rc = srv_op_create(req, parent, target, verb, true, response, op)) == AQ_OK)
		rc = db_commit(req->db);
	json_decref(empty);
	return rc;
}

int srv_op_finish(struct db *db, const char *op_name, const json_t *response, int err,
		  const char *errmsg)
{
	json_t *op = NULL, *md;
	char now[48], parent[600];
	const char *slash;
	int rc;

	if ((rc = db_get(db, op_name, &op)) != AQ_OK)
		return rc;
	ut_clock_now_text(now, sizeof(now));
	md = json_object_get(op, "metadata");
	json_object_set_new(md, "endTime", json_string(now));
	json_object_set_new(op, "done", json_true());
	if (err != AQ_OK)
		json_object_set_new(op, "error", json_pack("{s:i,s:s,s:[{s:s,s:s,s:s}]}", "code", aq_err_rpc_code(err),
							   "message", errmsg ? errmsg : aq_err_str(err), "details",
							   "@type", "type.googleapis.com/google.rpc.ErrorInfo",
							   "reason", aq_err_reason(err), "domain", AQ_ERR_DOMAIN));
	else if (response)
		json_object_set_new(op, "response", json_deep_copy(response));
	slash = strstr(op_name, "/operations/");
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - op_name) : 0, op_name);
	rc = db_put(db, "operation", parent, op_name, op, false);
	json_decref(op);
	return rc;
}

int srv_op_end(struct db *db, const char *op, const json_t *response, int err, const char *errmsg)
{
	int rc = op && *op ? srv_op_finish(db, op, response, err, errmsg) : AQ_OK;

	return rc == AQ_ENOENT ? AQ_OK : rc; /* the operation was deleted by its owner */
}

int srv_op_save(struct srv_req *req, bool validate, const char *verb, const char *kind, const char *parent,
		const char *name, const json_t *doc, const char *what, const json_t *out, json_t **resp)
{
	int rc;

	if (validate) {
		*resp = srv_op_preview(parent, name, verb, out);
		return *resp ? AQ_OK : AQ_ENOMEM;
	}
	if (strcmp(verb, "create") == 0)
		rc = srv_put_new(req, kind, parent, name, doc, what, name);
	else
		rc = db_put(req->db, kind, parent, name, doc, false);
	if (rc != AQ_OK)
		return rc;
	return srv_op_commit(req, parent, name, verb, out, resp);
}
