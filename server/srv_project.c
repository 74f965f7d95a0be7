/* srv_project: projects, real resources in Aquifer (see srv_project.h).
 * They answer synchronously: they are metadata, with nothing to wait for. */
#include "server/srv_project.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_req.h"

int srv_h_project_create(struct srv_req *req, json_t **resp)
{
	const char *id;
	json_t *doc = NULL;
	bool validate;
	int rc;

	if ((rc = srv_create_top_input(req, "projectId", api_project_fields, "project", "projects", "projectId", &id,
				       &validate, &doc)) != AQ_OK)
		goto out;
	json_object_set_new(doc, "state", json_string("ACTIVE"));
	if (!validate && ((rc = srv_create_put(req, "project", "", doc, "project", id)) != AQ_OK ||
			  (rc = db_commit(req->db)) != AQ_OK))
		goto out;
	*resp = doc;
	doc = NULL;
out:
	db_rollback(req->db);
	json_decref(doc);
	return rc;
}

int srv_h_project_get(struct srv_req *req, json_t **resp)
{
	(void)resp;
	return srv_doc_answer(req, "project");
}

int srv_h_project_list(struct srv_req *req, json_t **resp)
{
	json_t *items = NULL;
	char *next = NULL;
	int rc;

	if (!req->auth.cluster) {
		/* a project token sees its own project only */
		json_t *one = NULL;
		char name[128];

		items = json_array();
		snprintf(name, sizeof(name), "projects/%s", req->auth.project);
		if (req->auth.project[0] && db_get(req->db, name, &one) == AQ_OK)
			json_array_append_new(items, one);
		*resp = srv_list_page("projects", items, NULL);
		return *resp ? AQ_OK : AQ_ENOMEM;
	}
	if ((rc = srv_list(req, "project", "", &items, &next)) != AQ_OK)
		return rc;
	*resp = srv_list_page("projects", items, next);
	free(next);
	return *resp ? AQ_OK : AQ_ENOMEM;
}

int srv_project_count(struct srv_req *req, const char *kind, const char *project, const char *location,
		      int64_t *total)
{
	struct db_query q = { .kind = project ? "location" : "project", .parent = "" };
	json_t *items = NULL, *it;
	char parent[600];
	size_t i;
	int rc;

	*total = 0;
	if ((rc = db_list_all(req->db, &q, &items, &req->msg)) != AQ_OK)
		return rc;
	json_array_foreach(items, i, it) {
		int64_t n = 0;

		snprintf(parent, sizeof(parent), "projects/%s/locations/%s",
			 project ? project : api_json_str(it, "projectId", ""),
			 location ? location : api_json_str(it, "locationId", ""));
		if ((rc = db_count(req->db, kind, parent, &n)) != AQ_OK)
			break;
		*total += n;
	}
	json_decref(items);
	return rc;
}

int srv_h_project_delete(struct srv_req *req, json_t **resp)
{
	char name[300];
	int64_t pools = 0, vols = 0, users = 0, vaults = 0, policies = 0;
	json_t *doc = NULL;
	int rc;

	snprintf(name, sizeof(name), "projects/%s", req->params[0]);
	if ((rc = db_begin(req->db)) != AQ_OK)
		return rc;
	rc = db_get(req->db, name, &doc);
	if (rc == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "project \"%s\" not found", req->params[0]);
	if (rc != AQ_OK)
		goto out;
	/* any pool or volume of the project, in any location */
	if ((rc = srv_project_count(req, "pool", req->params[0], NULL, &pools)) != AQ_OK ||
	    (rc = srv_project_count(req, "volume", req->params[0], NULL, &vols)) != AQ_OK ||
	    (rc = srv_project_count(req, "smbuser", req->params[0], NULL, &users)) != AQ_OK ||
	    (rc = srv_project_count(req, "bvault", req->params[0], NULL, &vaults)) != AQ_OK ||
	    (rc = srv_project_count(req, "bpolicy", req->params[0], NULL, &policies)) != AQ_OK)
		goto out;
	/* backup vaults and policies (srv_bvault.h, srv_bpolicy.h): their
	 * secrets and store must not pass to a project created again */
	if (vaults || policies) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "project \"%s\" still holds %lld backup vaults and %lld backup policies; delete them first",
			     req->params[0], (long long)vaults, (long long)policies);
		goto out;
	}
	/* SMB users too: a project created again under the id must not find them */
	if (pools || vols || users) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "project \"%s\" still holds %lld storage pools, %lld volumes and %lld SMB users; delete them first",
			     req->params[0], (long long)pools, (long long)vols, (long long)users);
		goto out;
	}
	if ((rc = db_delete(req->db, name)) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	*resp = json_object();
out:
	json_decref(doc);
	db_rollback(req->db);
	return rc;
}

