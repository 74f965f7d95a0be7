/* srv_location: locations, cluster-wide, created by the cluster admin and
 * seen per project, and each location's cold store (see srv_location.h).
 *
 * A location's coldStore (issue 11) is set by the cluster admin on create or
 * with PATCH. Its S3 secretAccessKey is input only: it is kept in a separate
 * document ("coldsecret", coldsecrets/L) that no route returns, and joins the
 * store again only in the intent pushed to the location's nodes. A store that
 * would strand cold data (another store while tiered volumes exist) is
 * refused. */
#include "server/srv_location.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_kick.h"
#include "server/srv_mark.h"
#include "server/srv_project.h"
#include "server/srv_req.h"
#include "server/srv_shelf.h"
#include "server/srv_svcaddr.h"

static int cold_secret_put(struct db *db, const char *loc_id, json_t *secret);
static json_t *cold_secret_take(json_t *doc);

/* A location comes with one shelf of the seed's ceilings. */
int srv_h_location_create(struct srv_req *req, json_t **resp)
{
	const char *id;
	json_t *doc = NULL, *secret = NULL;
	bool validate;
	int rc;

	if ((rc = srv_create_top_input(req, "locationId", api_location_fields, "location", "locations", "locationId",
				       &id, &validate, &doc)) != AQ_OK)
		goto out;
	if ((rc = api_cold_store_check(json_object_get(doc, "coldStore"), &req->msg)) != AQ_OK ||
	    (rc = srv_svcaddr_location_check(req->db, id, doc, &req->msg)) != AQ_OK)
		goto out;
	secret = cold_secret_take(doc);
	if (!validate && ((rc = srv_create_put(req, "location", "", doc, "location", id)) != AQ_OK ||
			  (rc = srv_shelf_default(req->db, id)) != AQ_OK || (rc = cold_secret_put(req->db, id, secret)) != AQ_OK ||
			  (rc = db_commit(req->db)) != AQ_OK))
		goto out;
	*resp = doc;
	doc = NULL;
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(secret);
	return rc;
}

/* The per-project view of a location, as google.cloud.location.Location. */
static json_t *location_view(const json_t *loc, const char *project)
{
	json_t *v = json_deep_copy(loc);
	char name[300];
	const char *id = api_json_str(loc, "locationId", "");

	if (!v)
		return NULL;
	api_schema_strip_input(api_location_fields, v);
	if (project) {
		snprintf(name, sizeof(name), "projects/%s/locations/%s", project, id);
		json_object_set_new(v, "name", json_string(name));
		json_object_del(v, "coldStore"); /* where the cold tier lives is the cluster admin's */
	}
	json_object_set_new(v, "metadata",
			    json_pack("{s:s,s:[s,s,s,s],s:[s,s],s:b}", "@type",
				      "type.googleapis.com/google.cloud.netapp.v1.LocationMetadata",
				      "supportedServiceLevels", "STANDARD", "PREMIUM", "EXTREME", "FLEX",
				      "supportedFlexPerformance", "FLEX_PERFORMANCE_DEFAULT",
				      "FLEX_PERFORMANCE_CUSTOM", "hasVcp", 0));
	return v;
}

static int location_list(struct srv_req *req, const char *project, json_t **resp)
{
	json_t *items = NULL, *out = json_array(), *l;
	char *next = NULL;
	size_t i;
	int rc;

	if (!out)
		return AQ_ENOMEM;
	if ((rc = srv_list(req, "location", "", &items, &next)) != AQ_OK)
		goto out;
	json_array_foreach(items, i, l)
		json_array_append_new(out, location_view(l, project));
	*resp = srv_list_page("locations", out, next);
	out = NULL;
out:
	json_decref(out);
	json_decref(items);
	free(next);
	return rc;
}

static int location_get(struct srv_req *req, const char *id, const char *project, json_t **resp)
{
	char name[300];
	json_t *doc = NULL;
	int rc;

	snprintf(name, sizeof(name), "locations/%s", id);
	if ((rc = db_get(req->db, name, &doc)) == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "location \"%s\" not found", id);
	if (rc != AQ_OK)
		return rc;
	*resp = location_view(doc, project);
	json_decref(doc);
	return *resp ? AQ_OK : AQ_ENOMEM;
}

int srv_h_location_list_admin(struct srv_req *req, json_t **resp)
{
	return location_list(req, NULL, resp);
}

int srv_h_location_get_admin(struct srv_req *req, json_t **resp)
{
	return location_get(req, req->params[0], NULL, resp);
}

int srv_h_location_list(struct srv_req *req, json_t **resp)
{
	int rc = srv_check_parent(req, SRV_PARENT_PROJECT);

	return rc != AQ_OK ? rc : location_list(req, req->params[0], resp);
}

int srv_h_location_get(struct srv_req *req, json_t **resp)
{
	int rc = srv_check_parent(req, SRV_PARENT_PROJECT);

	return rc != AQ_OK ? rc : location_get(req, req->params[1], req->params[0], resp);
}

/* A deleted location takes its shelves and its handle key along. */
static int location_forget(struct db *db, const char *name, const char *id)
{
	struct db_query q = { .kind = "shelf", .parent = name };
	json_t *items = NULL, *sh;
	char *next = NULL, key[200];
	size_t i;
	int rc;

	if ((rc = db_list(db, &q, &items, &next, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(items, i, sh)
		if ((rc = db_delete(db, api_json_str(sh, "name", ""))) != AQ_OK)
			break;
	json_decref(items);
	free(next);
	snprintf(key, sizeof(key), "locsecrets/%s", id);
	if (rc == AQ_OK && (rc = db_delete(db, key)) == AQ_ENOENT)
		rc = AQ_OK;
	if (rc == AQ_OK)
		rc = cold_secret_put(db, id, NULL);
	return rc;
}

int srv_h_location_delete(struct srv_req *req, json_t **resp)
{
	char name[300], sparent[300];
	int64_t n = 0, m = 0, k = 0;
	int rc;

	snprintf(name, sizeof(name), "locations/%s", req->params[0]);
	if ((rc = db_begin(req->db)) != AQ_OK)
		return rc;
	if ((rc = srv_project_count(req, "pool", NULL, req->params[0], &n)) != AQ_OK)
		goto out;
	if (n) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "location \"%s\" still holds %lld storage pools", req->params[0], (long long)n);
		goto out;
	}
	/* SMB users (srv_smbuser.h: their secrets are per location) */
	if ((rc = srv_project_count(req, "smbuser", NULL, req->params[0], &n)) != AQ_OK)
		goto out;
	if (n) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "location \"%s\" still holds %lld SMB users", req->params[0], (long long)n);
		goto out;
	}
	/* backup vaults and policies of the location, and vaults of other
	 * locations whose store lives here (CROSS_REGION, srv_bvault.h) */
	if ((rc = srv_project_count(req, "bvault", NULL, req->params[0], &n)) != AQ_OK)
		goto out;
	snprintf(sparent, sizeof(sparent), "bvsecrets/%s", req->params[0]);
	if ((rc = db_count(req->db, "bvsecret", sparent, &m)) != AQ_OK ||
	    (rc = srv_project_count(req, "bpolicy", NULL, req->params[0], &k)) != AQ_OK)
		goto out;
	if (n || m || k) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "location \"%s\" still holds %lld backup vaults, %lld backup policies and the store of %lld backup vaults",
			     req->params[0], (long long)n, (long long)k, (long long)m);
		goto out;
	}
	if ((rc = db_count(req->db, "node", name, &n)) != AQ_OK)
		goto out;
	if (n) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "location \"%s\" still has %lld storage nodes; drain and delete them first (DELETE /v1/nodes/NAME)",
			     req->params[0], (long long)n);
		goto out;
	}
	rc = db_delete(req->db, name);
	if (rc == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "location \"%s\" not found", req->params[0]);
	if (rc != AQ_OK || (rc = location_forget(req->db, name, req->params[0])) != AQ_OK ||
	    (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	*resp = json_object();
out:
	db_rollback(req->db);
	return rc;
}

/* ---- cold store ---- */

/* Remove coldStore.s3.secretAccessKey from doc; returns it (new reference)
 * or NULL. */
static json_t *cold_secret_take(json_t *doc)
{
	json_t *s3 = json_object_get(json_object_get(doc, "coldStore"), "s3");
	json_t *secret = json_incref(json_object_get(s3, "secretAccessKey"));

	json_object_del(s3, "secretAccessKey");
	return secret;
}

/* Store (secret a JSON string) or forget (NULL) the location's secret. */
static int cold_secret_put(struct db *db, const char *loc_id, json_t *secret)
{
	char name[200];
	json_t *doc;
	int rc;

	snprintf(name, sizeof(name), "coldsecrets/%s", loc_id);
	if (!secret) {
		rc = db_delete(db, name);
		return rc == AQ_ENOENT ? AQ_OK : rc;
	}
	if (!(doc = json_pack("{s:O}", "secretAccessKey", secret)))
		return AQ_ENOMEM;
	rc = db_put(db, "coldsecret", "", name, doc, true);
	if (rc == AQ_EEXIST)
		rc = db_put(db, "coldsecret", "", name, doc, false);
	json_decref(doc);
	return rc;
}

json_t *srv_cold_store_intent(struct db *db, const char *loc_id)
{
	char name[200];
	json_t *loc = NULL, *sec = NULL, *cs = NULL, *s3;

	snprintf(name, sizeof(name), "locations/%s", loc_id);
	if (db_get(db, name, &loc) != AQ_OK || !json_object_get(loc, "coldStore"))
		goto out;
	cs = json_deep_copy(json_object_get(loc, "coldStore"));
	snprintf(name, sizeof(name), "coldsecrets/%s", loc_id);
	if ((s3 = json_object_get(cs, "s3")) && db_get(db, name, &sec) == AQ_OK)
		json_object_set(s3, "secretAccessKey", json_object_get(sec, "secretAccessKey"));
out:
	json_decref(loc);
	json_decref(sec);
	return cs;
}

/* Volumes of location loc_id (any project) that have or may have cold data:
 * tieringPolicy.tierAction ENABLED, or coldTierSizeGib > 0. */
static int cold_tiered_volumes(struct srv_req *req, const char *loc_id, int64_t *n)
{
	struct db_query pq = { .kind = "project", .parent = "" };
	json_t *projects = NULL, *p;
	size_t i;
	int rc;

	*n = 0;
	if ((rc = db_list_all(req->db, &pq, &projects, &req->msg)) != AQ_OK)
		return rc;
	json_array_foreach(projects, i, p) {
		char parent[600];
		struct db_query vq = { .kind = "volume", .parent = parent };
		json_t *vols = NULL, *v;
		size_t j;

		snprintf(parent, sizeof(parent), "projects/%s/locations/%s", api_json_str(p, "projectId", ""), loc_id);
		if ((rc = db_list_all(req->db, &vq, &vols, &req->msg)) != AQ_OK)
			break;
		json_array_foreach(vols, j, v)
			if (strcmp(api_json_str(json_object_get(v, "tieringPolicy"), "tierAction", ""), "ENABLED") == 0 ||
			    api_json_int64(v, "coldTierSizeGib", 0) > 0)
				(*n)++;
		json_decref(vols);
	}
	json_decref(projects);
	return rc;
}

/* PATCH /v1/locations/L?updateMask=displayName,labels,coldStore */
int srv_h_location_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	const char *id = req->params[0];
	char name[300], sname[300];
	json_t *old = NULL, *patch = NULL, *doc = NULL, *oldsec = NULL, *secret = NULL, *s3, *nodes = NULL;
	json_t *ocs, *ncs;
	bool validate;
	int npaths, rc;

	if ((rc = srv_patch_input(req, api_location_fields, "Location", "location", &validate, paths, &npaths, &patch)) != AQ_OK)
		return rc;
	snprintf(name, sizeof(name), "locations/%s", id);
	snprintf(sname, sizeof(sname), "coldsecrets/%s", id);
	if ((rc = db_begin(req->db)) != AQ_OK)
		goto out;
	if ((rc = db_get(req->db, name, &old)) == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "location \"%s\" not found", id);
	if (rc != AQ_OK)
		goto out;
	if ((rc = db_get(req->db, sname, &oldsec)) != AQ_OK && rc != AQ_ENOENT)
		goto out;
	if ((rc = api_mask_patch(old, patch, paths, npaths, &doc, NULL)) != AQ_OK)
		goto out;
	ocs = json_object_get(old, "coldStore");
	ncs = json_object_get(doc, "coldStore");
	/* the same store and key without a new secret: keep the stored one */
	s3 = json_object_get(ncs, "s3");
	if (s3 && !json_object_get(s3, "secretAccessKey") && oldsec) {
		if (!api_cold_store_same_key(ocs, ncs)) {
			rc = aq_fail(&req->msg, AQ_EINVAL, "coldStore.s3.secretAccessKey is required when the endpoint, bucket or accessKeyId change");
			goto out;
		}
		json_object_set(s3, "secretAccessKey", json_object_get(oldsec, "secretAccessKey"));
	}
	if ((rc = api_cold_store_check(ncs, &req->msg)) != AQ_OK)
		goto out;
	if (!api_cold_store_same(ocs, ncs)) {
		int64_t n = 0;

		if ((rc = cold_tiered_volumes(req, id, &n)) != AQ_OK)
			goto out;
		if (n > 0) {
			rc = aq_fail(&req->msg, AQ_EPRECOND, "location \"%s\" has %lld volumes with tiering enabled or cold data; %s the cold store would strand their cold data",
				     id, (long long)n, ncs ? "changing" : "removing");
			goto out;
		}
	}
	secret = cold_secret_take(doc);
	if (!validate) {
		if (!(nodes = json_object())) {
			rc = AQ_ENOMEM;
			goto out;
		}
		if ((rc = db_put(req->db, "location", "", name, doc, false)) != AQ_OK ||
		    (rc = cold_secret_put(req->db, id, secret)) != AQ_OK ||
		    (rc = srv_mark_location(req->db, name, nodes)) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
			goto out;
		srv_mark_ring(req->srv, nodes); /* the location's nodes get the new store */
	}
	*resp = location_view(doc, NULL);
	rc = *resp ? AQ_OK : AQ_ENOMEM;
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	json_decref(oldsec);
	json_decref(secret);
	json_decref(nodes);
	return rc;
}
