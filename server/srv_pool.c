/* srv_pool: storage pools. Check (pure, api_) then apply (db) in one
 * transaction with the operation record, so an acknowledged create is never
 * half-written. Pools are ready as soon as the row is committed: capacity is
 * a promise of the shared shelf, placed per volume. */
#include "server/srv_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "server/srv_mark.h"
#include "server/srv_op.h"
#include "server/srv_req.h"

#define POOL_TYPE "type.googleapis.com/google.cloud.netapp.v1.StoragePool"

void srv_pool_usage_of(const struct db_usage *du, struct srv_pool_usage *u)
{
	u->count = du->count;
	u->capacity_gib = (int64_t)du->capacity_gib;
	u->mibps = du->mibps;
	u->cold_gib = (int64_t)du->cold_gib;
	u->hot_used_gib = (int64_t)du->hot_gib;
}

int srv_pool_usage(struct db *db, const char *pool_name, struct srv_pool_usage *u, aq_msg *msg)
{
	struct db_usage du;
	int rc;

	memset(u, 0, sizeof(*u));
	if (!strstr(pool_name, "/storagePools/"))
		return aq_fail(msg, AQ_EINVAL, "not a storage pool name: %s", pool_name);
	/* the pool's counters, kept in every volume write's transaction (db.h):
	 * one row, however many volumes the pool holds */
	if ((rc = db_usage_get(db, pool_name, &du)) != AQ_OK)
		return rc;
	srv_pool_usage_of(&du, u);
	return AQ_OK;
}

void srv_pool_output(const struct srv_cfg *cfg, json_t *pool, const struct srv_pool_usage *u)
{
	bool flex = strcmp(api_json_str(pool, "serviceLevel", ""), "FLEX") == 0;

	api_pool_fill_output(&cfg->math, pool, u->count, u->capacity_gib, flex ? 0 : u->mibps);
	api_json_set_int64(pool, "coldTierSizeUsedGib", u->cold_gib);
	api_json_set_int64(pool, "hotTierSizeUsedGib", u->hot_used_gib);
}

static int pool_load(struct srv_req *req, char *name, size_t cap, json_t **doc)
{
	return srv_load(req, "storagePools", "storagePool", name, cap, doc);
}

int srv_h_pool_create(struct srv_req *req, json_t **resp)
{
	const char *id;
	char parent[600], name[700];
	json_t *doc = NULL, *out = NULL;
	struct srv_pool_usage none = { 0 };
	bool validate;
	int rc;

	if ((rc = srv_create_input(req, "storagePoolId", api_pool_fields, "storagePool", api_pool_check,
				   &id, &validate, &doc)) != AQ_OK)
		return rc;
	if ((rc = api_pool_check_supported(doc, req->params[1], &req->msg)) != AQ_OK)
		goto out;
	srv_create_name(req, "storagePools", id, doc, parent, name);
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = srv_check_parent(req, SRV_PARENT_LOCATION)) != AQ_OK)
		goto out;
	out = json_deep_copy(doc);
	srv_pool_output(&req->srv->cfg, out, &none);
	json_object_set_new(out, "@type", json_string(POOL_TYPE));
	rc = srv_op_save(req, validate, "create", "pool", parent, name, doc, "storagePool", out, resp);
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(out);
	return rc;
}

int srv_h_pool_get(struct srv_req *req, json_t **resp)
{
	char name[700];
	struct srv_pool_usage u;
	json_t *doc = NULL;
	int rc;

	if ((rc = pool_load(req, name, sizeof(name), &doc)) != AQ_OK ||
	    (rc = srv_pool_usage(req->db, name, &u, &req->msg)) != AQ_OK) {
		json_decref(doc);
		return rc;
	}
	srv_pool_output(&req->srv->cfg, doc, &u);
	*resp = doc;
	return AQ_OK;
}

int srv_h_pool_list(struct srv_req *req, json_t **resp)
{
	char parent[600], *next = NULL;
	json_t *items = NULL, *p;
	size_t i;
	int rc;

	srv_parent(req, parent, sizeof(parent));
	if ((rc = srv_check_parent(req, SRV_PARENT_LIST)) != AQ_OK ||
	    (rc = srv_list(req, "pool", parent, &items, &next)) != AQ_OK)
		return rc;
	json_array_foreach(items, i, p) {
		struct srv_pool_usage u;

		if ((rc = srv_pool_usage(req->db, api_json_str(p, "name", ""), &u, &req->msg)) != AQ_OK)
			goto out;
		srv_pool_output(&req->srv->cfg, p, &u);
	}
	*resp = srv_list_page("storagePools", items, next);
	items = NULL;
out:
	json_decref(items);
	free(next);
	return rc;
}

int srv_h_pool_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	struct api_pool_math om, nm;
	struct srv_pool_usage u;
	char name[700], parent[600];
	json_t *old = NULL, *patch = NULL, *doc = NULL, *out = NULL, *given = NULL, *nodes = NULL;
	bool validate;
	int npaths, rc;

	if ((rc = srv_patch_input(req, api_pool_fields, "StoragePool", "storagePool", &validate, paths, &npaths, &patch)) != AQ_OK)
		return rc;
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = pool_load(req, name, sizeof(name), &old)) != AQ_OK)
		goto out;
	/* what this request sets must exist (not what an older pool stored) */
	if ((rc = api_mask_patch(old, patch, paths, npaths, &doc, &given)) != AQ_OK)
		goto out;
	if ((rc = api_pool_check_supported(given, req->params[1], &req->msg)) != AQ_OK ||
	    (rc = api_pool_check(&req->srv->cfg.math, doc, &req->msg)) != AQ_OK ||
	    (rc = srv_pool_usage(req->db, name, &u, &req->msg)) != AQ_OK)
		goto out;
	api_pool_math_from(old, &om);
	api_pool_math_from(doc, &nm);
	if ((rc = api_math_check_pool_change(&req->srv->cfg.math, &om, &nm, u.capacity_gib,
					     u.mibps, &req->msg)) != AQ_OK)
		goto out;
	out = json_deep_copy(doc);
	srv_pool_output(&req->srv->cfg, out, &u);
	json_object_set_new(out, "@type", json_string(POOL_TYPE));
	srv_parent(req, parent, sizeof(parent));
	if (validate) {
		*resp = srv_op_preview(parent, name, "update", out);
		goto out;
	}
	/* AUTO -> MANUAL: each volume keeps the limit it had, which its stored
	 * throughputMibps already holds; srv_pool_reprice_volumes leaves MANUAL
	 * volumes alone. */
	/* the nodes of this pool's volumes, and no other (srv_mark.h) */
	if (!(nodes = json_object())) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = db_put(req->db, "pool", parent, name, doc, false)) != AQ_OK ||
	    (rc = srv_pool_reprice_volumes(req, doc)) != AQ_OK ||
	    (rc = srv_mark_volumes_of(req->db, parent, name, nodes)) != AQ_OK ||
	    (rc = srv_op_commit(req, parent, name, "update", out, resp)) != AQ_OK)
		goto out;
	srv_mark_ring(req->srv, nodes); /* volume limits may have moved */
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	json_decref(out);
	json_decref(given);
	json_decref(nodes);
	return rc;
}

int srv_h_pool_delete(struct srv_req *req, json_t **resp)
{
	struct srv_pool_usage u;
	char name[700], parent[600];
	json_t *old = NULL;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK || (rc = pool_load(req, name, sizeof(name), &old)) != AQ_OK ||
	    (rc = srv_pool_usage(req->db, name, &u, &req->msg)) != AQ_OK)
		goto out;
	if (u.count > 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "storagePool \"%s\" still holds %lld volumes; delete them first",
			     name, (long long)u.count);
		goto out;
	}
	srv_parent(req, parent, sizeof(parent));
	if ((rc = db_delete(req->db, name)) != AQ_OK ||
	    (rc = srv_op_commit(req, parent, name, "delete", NULL, resp)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	json_decref(old);
	return rc;
}

/* After a pool change, AUTO and FLEX volume limits follow the pool. */
int srv_pool_reprice_volumes(struct srv_req *req, const json_t *pool)
{
	const char *pool_name = api_json_str(pool, "name", "");
	const char *slash = strstr(pool_name, "/storagePools/");
	char parent[600], filter[700];
	struct db_query q = { .kind = "volume", .parent = parent, .filter = filter };
	struct api_pool_math pm;
	json_t *items = NULL, *v;
	size_t i;
	int rc;

	api_pool_math_from(pool, &pm);
	if (pm.qos == API_QOS_MANUAL && pm.level != API_LEVEL_FLEX)
		return AQ_OK;
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - pool_name) : 0, pool_name);
	/* both forms a volume may name its pool by: the ID, the full name */
	for (int form = 0; form < 2; form++) {
		snprintf(filter, sizeof(filter), "storagePool=\"%s\"", form || !slash ? pool_name : slash + 14);
		json_decref(items);
		items = NULL;
		if ((rc = db_list_all(req->db, &q, &items, &req->msg)) != AQ_OK)
			goto out;
		json_array_foreach(items, i, v) {
			api_volume_fill_output(&req->srv->cfg.math, pool, v);
			if ((rc = db_put(req->db, "volume", parent, api_json_str(v, "name", ""), v, false)) != AQ_OK)
				goto out;
		}
	}
out:
	json_decref(items);
	return rc;
}
