/* srv_req: the accessors handlers share (see srv_req.h): query
 * parameters, stored documents, parents, list paging and create input. */
#include "server/srv_req.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_math.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "util/ut_clock.h"

const char *srv_query(const struct srv_req *req, const char *key)
{
	for (int i = 0; i < req->nquery; i++)
		if (strcmp(req->qkey[i], key) == 0)
			return req->qval[i];
	return NULL;
}

int srv_query_bool(struct srv_req *req, const char *key, bool dflt, bool *out)
{
	const char *v = srv_query(req, key);

	if (!v) {
		*out = dflt;
		return AQ_OK;
	}
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || *v == '\0') {
		*out = true;
		return AQ_OK;
	}
	if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0) {
		*out = false;
		return AQ_OK;
	}
	return aq_fail(&req->msg, AQ_EINVAL, "query parameter %s must be true or false", key);
}

int srv_doc_name(const struct srv_req *req, char *out, size_t cap)
{
	const char *t = req->route->doc_name;
	size_t off = 0;
	int p = 0;

	for (; t && *t && off + 1 < cap; t++) {
		if (*t != '*') {
			out[off++] = *t;
			continue;
		}
		if (p >= req->nparams)
			return AQ_EINTERNAL;
		for (const char *v = req->params[p++]; *v && off + 1 < cap; v++)
			out[off++] = *v;
	}
	out[off] = '\0';
	return t && *t ? AQ_EINVAL : AQ_OK;
}

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

int srv_load(struct srv_req *req, const char *collection, const char *what, char *name, size_t cap, json_t **doc)
{
	char parent[600];
	int rc;

	srv_parent(req, parent, sizeof(parent));
	snprintf(name, cap, "%s/%s/%s", parent, collection, req->params[2]);
	rc = db_get(req->db, name, doc);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "%s \"%s\" not found", what, name);
	return rc;
}

/* validateOnly and the new resource's ID (query parameter idparam). */
static int create_id(struct srv_req *req, const char *idparam, const char **id, bool *validate)
{
	int rc;

	if ((rc = srv_query_bool(req, "validateOnly", false, validate)) != AQ_OK)
		return rc;
	if (!(*id = srv_query(req, idparam)))
		return aq_fail(&req->msg, AQ_EINVAL, "%s is required", idparam);
	return api_id_check(*id, idparam, &req->msg);
}

int srv_create_input(struct srv_req *req, const char *idparam, const struct api_field *table,
		     const char *what, srv_check_fn check, const char **id, bool *validate, json_t **doc)
{
	int rc;

	if ((rc = create_id(req, idparam, id, validate)) != AQ_OK)
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

int srv_patch_input(struct srv_req *req, const struct api_field *table, const char *type, const char *what,
		    bool *validate, struct api_mask_path *paths, int *npaths, json_t **patch)
{
	int rc;

	if ((rc = srv_query_bool(req, "validateOnly", false, validate)) != AQ_OK)
		return rc;
	if ((rc = api_mask_parse(table, srv_query(req, "updateMask"), paths, npaths, &req->msg)) != AQ_OK)
		return rc;
	if (!req->body)
		return aq_fail(&req->msg, AQ_EINVAL, "request body must be a %s", type);
	return api_schema_check(table, req->body, false, what, patch, &req->msg);
}

int srv_create_top_input(struct srv_req *req, const char *idparam, const struct api_field *table,
			 const char *what, const char *prefix, const char *idfield, const char **id,
			 bool *validate, json_t **doc)
{
	char name[128], now[48];
	int rc;

	if ((rc = create_id(req, idparam, id, validate)) != AQ_OK)
		return rc;
	if (!req->body && !(req->body = json_object()))
		return AQ_ENOMEM;
	if ((rc = api_schema_check(table, req->body, true, what, doc, &req->msg)) != AQ_OK)
		return rc;
	snprintf(name, sizeof(name), "%s/%s", prefix, *id);
	ut_clock_now_text(now, sizeof(now));
	json_object_set_new(*doc, "name", json_string(name));
	json_object_set_new(*doc, idfield, json_string(*id));
	json_object_set_new(*doc, "createTime", json_string(now));
	return AQ_OK;
}

int srv_create_put(struct srv_req *req, const char *kind, const char *parent, const json_t *doc, const char *what,
		   const char *id)
{
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK)
		return rc;
	return srv_put_new(req, kind, parent, json_string_value(json_object_get(doc, "name")), doc, what, id);
}

int srv_put_new(struct srv_req *req, const char *kind, const char *parent, const char *name, const json_t *doc,
		const char *what, const char *id)
{
	int rc = db_put(req->db, kind, parent, name, doc, true);

	return rc == AQ_EEXIST ? aq_fail(&req->msg, AQ_EEXIST, "%s \"%s\" already exists", what, id) : rc;
}

void srv_parent(const struct srv_req *req, char *out, size_t cap)
{
	snprintf(out, cap, "projects/%s/locations/%s", req->params[0], req->params[1]);
}

void srv_create_name(const struct srv_req *req, const char *collection, const char *id, json_t *doc,
		     char parent[600], char name[700])
{
	char now[48];

	srv_parent(req, parent, 600);
	snprintf(name, 700, "%s/%s/%s", parent, collection, id);
	ut_clock_now_text(now, sizeof(now));
	json_object_set_new(doc, "name", json_string(name));
	json_object_set_new(doc, "state", json_string("READY"));
	json_object_set_new(doc, "createTime", json_string(now));
}

/* Which of the parent's documents are missing, from what was read. */
static int check_parent_found(struct srv_req *req, bool need_location, bool project, bool location)
{
	if (!project)
		return aq_fail(&req->msg, AQ_ENOENT, "project \"%s\" not found", req->params[0]);
	if (need_location && !location)
		return aq_fail(&req->msg, AQ_ENOENT, "location \"%s\" not found (a cluster admin creates locations with POST /v1/locations?locationId=ID)", req->params[1]);
	return AQ_OK;
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
		return check_parent_found(req, need_location, false, false);
	if (rc != AQ_OK || !need_location)
		return rc;
	snprintf(name, sizeof(name), "locations/%s", req->params[1]);
	rc = db_get(req->db, name, &doc);
	json_decref(doc);
	if (rc == AQ_ENOENT)
		return check_parent_found(req, need_location, true, false);
	return rc;
}

int srv_check_parent_names(const struct srv_req *req, json_t *names)
{
	char name[600];

	snprintf(name, sizeof(name), "projects/%s", req->params[0]);
	if (json_array_append_new(names, json_string(name)) != 0)
		return AQ_ENOMEM;
	snprintf(name, sizeof(name), "locations/%s", req->params[1]);
	return json_array_append_new(names, json_string(name)) == 0 ? AQ_OK : AQ_ENOMEM;
}

int srv_check_parent_in(struct srv_req *req, const json_t *docs)
{
	char project[600], location[600];

	snprintf(project, sizeof(project), "projects/%s", req->params[0]);
	snprintf(location, sizeof(location), "locations/%s", req->params[1]);
	return check_parent_found(req, true, json_object_get(docs, project) != NULL,
				  json_object_get(docs, location) != NULL);
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
		else if (strcmp(kind, "volume") != 0)
			return aq_fail(&req->msg, AQ_EINVAL, "orderBy supports \"name\" and \"name desc\"");
		/* volumes: orderBy is a hint (GCNV), so any other order lists by name */
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

int srv_list_cluster(struct srv_req *req, const char *kind, json_t **items, char **next)
{
	struct db_query q = { .kind = kind, .parent_prefix = "locations/" };
	const char *ps = srv_query(req, "pageSize");

	q.page_token = srv_query(req, "pageToken");
	q.filter = srv_query(req, "filter");
	q.page_size = ps ? (int)strtol(ps, NULL, 10) : 0;
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

int srv_list_answer(struct srv_req *req, const char *kind, const char *plural, json_t **resp)
{
	char parent[600], *next = NULL;
	json_t *items = NULL;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	if ((rc = srv_check_parent(req, SRV_PARENT_LIST)) != AQ_OK ||
	    (rc = srv_list(req, kind, parent, &items, &next)) != AQ_OK)
		return rc;
	*resp = srv_list_page(plural, items, next);
	free(next);
	return *resp ? AQ_OK : AQ_ENOMEM;
}
