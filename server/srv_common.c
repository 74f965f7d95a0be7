/* srv_common: pieces every resource handler uses: parent checks, list
 * paging, operation documents. */
#include "server/srv_internal.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_math.h"
#include "api/api_schema.h"

int srv_doc_answer(struct srv_req *req, const char *what)
{
	char name[900];
	int rc;

	if ((rc = srv_doc_name(req, name, sizeof(name))) != AQ_OK)
		return rc;
	rc = db_get_text(req->db, name, &req->text, &req->text_len);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "%s \"%s\" not found", what, name);
	if (rc == AQ_OK) {
		req->ctype = "application/json";
		req->status = 200;
	}
	return rc;
}

int srv_create_input(struct srv_req *req, const char *idparam, const struct api_field *table,
		     const char *what, srv_check_fn check, const char **id, bool *validate, json_t **doc)
{
	int rc;

	if ((rc = srv_query_bool(req, "validateOnly", false, validate)) != AQ_OK)
		return rc;
	if (!(*id = srv_query(req, idparam)))
		return aq_fail(&req->msg, AQ_EINVAL, "%s is required", idparam);
	if ((rc = api_id_check(*id, idparam, &req->msg)) != AQ_OK)
		return rc;
	if (!req->body)
		return aq_fail(&req->msg, AQ_EINVAL, "the request body must be a %s", what);
	if ((rc = api_schema_check(table, req->body, true, what, doc, &req->msg)) != AQ_OK)
		return rc;
	if ((rc = check(&req->srv->cfg.math, *doc, &req->msg)) != AQ_OK) {
		json_decref(*doc);
		*doc = NULL;
	}
	return rc;
}

void srv_parent(const struct srv_req *req, char *out, size_t cap)
{
	snprintf(out, cap, "projects/%s/locations/%s", req->params[0], req->params[1]);
}

int srv_check_parent(struct srv_req *req, enum srv_parent_check what)
{
	bool need_location = what != SRV_PARENT_PROJECT;

	if (what == SRV_PARENT_LIST && strcmp(req->params[1], "-") == 0)
		need_location = false; /* "-": every location of the project */
	char name[600];
	json_t *doc = NULL;
	int rc;

	snprintf(name, sizeof(name), "projects/%s", req->params[0]);
	rc = db_get(req->db, name, &doc);
	json_decref(doc);
	doc = NULL;
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, AQ_ENOENT, "project \"%s\" not found", req->params[0]);
	if (rc != AQ_OK || !need_location)
		return rc;
	snprintf(name, sizeof(name), "locations/%s", req->params[1]);
	rc = db_get(req->db, name, &doc);
	json_decref(doc);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, AQ_ENOENT, "location \"%s\" not found (a cluster admin creates locations with POST /v1/locations?locationId=ID)", req->params[1]);
	return rc;
}

int srv_list(struct srv_req *req, const char *kind, const char *parent, json_t **items, char **next)
{
	struct db_query q = { .kind = kind, .parent = parent };
	char prefix[300];
	const char *ps = srv_query(req, "pageSize"), *ob = srv_query(req, "orderBy");
	char *end;

	if (ps) {
		long n = strtol(ps, &end, 10);

		if (!*ps || *end || n < 0 || n > 100000)
			return aq_fail(&req->msg, AQ_EINVAL, "pageSize must be a non-negative integer");
		q.page_size = (int)n;
	}
	if (ob && *ob) {
		if (strcmp(ob, "name") == 0 || strcmp(ob, "name asc") == 0)
			q.order_desc = false;
		else if (strcmp(ob, "name desc") == 0)
			q.order_desc = true;
		else
			return aq_fail(&req->msg, AQ_EINVAL, "orderBy supports \"name\" and \"name desc\"");
	}
	/* location "-" lists every location of the project (gcloud's default) */
	if (parent && req->nparams >= 2 && strcmp(req->params[1], "-") == 0) {
		snprintf(prefix, sizeof(prefix), "projects/%s/locations/", req->params[0]);
		q.parent = NULL;
		q.parent_prefix = prefix;
	}
	q.filter = srv_query(req, "filter");
	q.page_token = srv_query(req, "pageToken");
	return db_list(req->db, &q, items, next, &req->msg);
}

json_t *srv_list_page(const char *plural, json_t *items, const char *next)
{
	json_t *page = json_object();

	if (!page) {
		json_decref(items);
		return NULL;
	}
	json_object_set_new(page, plural, items);
	if (next)
		json_object_set_new(page, "nextPageToken", json_string(next));
	return page;
}

static json_t *op_doc(const char *parent, const char *target, const char *verb, bool done,
		      const json_t *response)
{
	unsigned char rnd[8];
	char id[64], name[700], now[48];
	struct timespec ts;
	json_t *op;

	RAND_bytes(rnd, sizeof(rnd));
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(id, sizeof(id), "operation-%lld-%02x%02x%02x%02x%02x%02x%02x%02x",
		 (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, rnd[0], rnd[1], rnd[2], rnd[3],
		 rnd[4], rnd[5], rnd[6], rnd[7]);
	snprintf(name, sizeof(name), "%s/operations/%s", parent, id);
	api_time_now(now, sizeof(now));
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

int srv_op_finish(struct db *db, const char *op_name, const json_t *response, int err,
		  const char *errmsg)
{
	json_t *op = NULL, *md;
	char now[48], parent[600];
	const char *slash;
	int rc;

	if ((rc = db_get(db, op_name, &op)) != AQ_OK)
		return rc;
	api_time_now(now, sizeof(now));
	md = json_object_get(op, "metadata");
	json_object_set_new(md, "endTime", json_string(now));
	json_object_set_new(op, "done", json_true());
	if (err != AQ_OK)
		json_object_set_new(op, "error", json_pack("{s:i,s:s}", "code", aq_err_rpc_code(err),
							   "message", errmsg ? errmsg : aq_err_str(err)));
	else if (response)
		json_object_set_new(op, "response", json_deep_copy(response));
	slash = strstr(op_name, "/operations/");
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - op_name) : 0, op_name);
	rc = db_put(db, "operation", parent, op_name, op, false);
	json_decref(op);
	return rc;
}
