/* srv_shelf: shelves, the storage a location's nodes share (cluster
 * admin: /v1/shelves), and the default shelf every new location gets (see
 * srv_shelf.h; the fields and their rules are api/api_shelf.h's). */
#include "server/srv_shelf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "api/api_shelf.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_place.h"
#include "server/srv_req.h"
#include "server/srv_shelfio.h"
#include "util/ut_clock.h"
#include "util/ut_log.h"

int srv_shelf_default(struct db *db, const char *location_id)
{
	char name[200], parent[200], now[48];
	json_t *doc;
	int rc;

	snprintf(name, sizeof(name), "shelves/%s-shelf-1", location_id);
	snprintf(parent, sizeof(parent), "locations/%s", location_id);
	ut_clock_now_text(now, sizeof(now));
	doc = json_pack("{s:s,s:s,s:f,s:f,s:s,s:s,s:s}", "name", name, "location", location_id,
			"readThroughputMibps", API_SHELF_READ_MIBPS, "writeThroughputMibps",
			API_SHELF_WRITE_MIBPS, "media", "TLC", "backend", "directory", "createTime", now);
	if (!doc)
		return AQ_ENOMEM;
	rc = db_put(db, "shelf", parent, name, doc, true);
	json_decref(doc);
	return rc == AQ_EEXIST ? AQ_OK : rc;
}

/* What placement promised in location loc: the summed throughput limits
 * (MiB/s) and the number of volumes placed on its nodes. */
static int shelf_location_use(struct db *db, const char *loc, double *mibps, int64_t *volumes)
{
	static const char *const fields[] = { "state" };
	char parent[200];
	json_t *nodes = NULL, *n;
	size_t i;
	int rc;

	*mibps = 0;
	*volumes = 0;
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	if ((rc = db_list_fields(db, "node", parent, fields, 1, &nodes)) != AQ_OK)
		return rc;
	json_array_foreach(nodes, i, n) {
		double m = 0;
		int64_t c = 0;

		if ((rc = srv_place_allocated(db, api_json_str(n, "name", ""), &m, &c)) != AQ_OK)
			break;
		*mibps += m;
		*volumes += c;
	}
	json_decref(nodes);
	return rc;
}

/* A location whose shelves would read at most others + mine MiB/s: refused
 * when placement already promised more, or when volumes remain and no
 * shelf would (mine < 0: this shelf goes). */
static int shelf_room_check(struct db *db, const char *id, const char *loc, double mine, aq_msg *msg)
{
	char parent[200];
	double all = 0, own = 0, used = 0;
	int64_t vols = 0, shelves = 0;
	char name[300];
	json_t *cur = NULL;
	int rc;

	snprintf(parent, sizeof(parent), "locations/%s", loc);
	snprintf(name, sizeof(name), "shelves/%s", id);
	if ((rc = db_sum(db, "shelf", parent, "readThroughputMibps", &all)) != AQ_OK ||
	    (rc = db_count(db, "shelf", parent, &shelves)) != AQ_OK ||
	    (rc = shelf_location_use(db, loc, &used, &vols)) != AQ_OK)
		return rc;
	if (db_get(db, name, &cur) == AQ_OK)
		own = api_json_double(cur, "readThroughputMibps", 0);
	json_decref(cur);
	if (mine < 0 && vols > 0 && shelves <= 1)
		return aq_fail(msg, AQ_EPRECOND, "shelf \"%s\" is the last shelf of location %s, which holds %lld volumes; delete them first",
			       id, loc, (long long)vols);
	if (all - own + (mine < 0 ? 0 : mine) < used - 1e-6)
		return aq_fail(msg, AQ_EPRECOND, "shelf \"%s\" is in use: location %s's volumes are promised %.1f MiB/s and its shelves would read only %.1f",
			       id, loc, used, all - own + (mine < 0 ? 0 : mine));
	return AQ_OK;
}

/* Capacity like throughput: the location's shelves, with this one as doc
 * has it (NULL: it goes), must still hold what its volumes take. */
static int shelf_gib_check(struct db *db, const char *id, const char *loc, const json_t *doc, aq_msg *msg)
{
	const json_t *mine = doc ? json_object_get(doc, "capacityGib") : NULL;
	double cap = 0, used = 0;
	bool bounded = false;
	size_t others = 0;
	int rc;

	if ((rc = srv_place_shelf_gib(db, loc, id, &bounded, &cap, &used, &others, NULL, 0)) != AQ_OK)
		return rc;
	if (doc) {
		/* unbounded when this shelf, or another one, states no capacity */
		if (!mine || json_is_null(mine) || (others > 0 && !bounded))
			return AQ_OK;
		cap += (double)api_json_int64(doc, "capacityGib", 0);
	} else if (!bounded) {
		return AQ_OK; /* no shelf left (the last-shelf rule answers), or one without a capacity */
	}
	if (cap + 1e-6 < used)
		return aq_fail(msg, AQ_EPRECOND, "shelf \"%s\" is in use: location %s's volumes take %.0f GiB and its shelves would hold only %.0f GiB",
			       id, loc, used, cap);
	return AQ_OK;
}

/* The answer: the stored document and, as ioStats, what its agents report
 * (srv_shelfio.h); shelves: the shelves of doc's location (NULL: read
 * here). */
static json_t *shelf_answer(struct srv_req *req, json_t *doc, const json_t *shelves)
{
	char parent[200];
	struct db_query q = { .kind = "shelf", .parent = parent };
	json_t *own = NULL, *io;

	snprintf(parent, sizeof(parent), "locations/%s", api_json_str(doc, "location", ""));
	if (!shelves && db_list_all(req->db, &q, &own, NULL) == AQ_OK)
		shelves = own;
	if ((io = srv_shelfio_stats(req->srv->shelfio, shelves, doc, ut_clock_real_ms())))
		json_object_set_new(doc, "ioStats", io);
	json_decref(own);
	return doc;
}

int srv_h_shelf_list(struct srv_req *req, json_t **resp)
{
	struct db_query q = { .kind = "shelf" };
	json_t *items = NULL, *all = NULL, *s;
	char *next = NULL;
	size_t i;
	int rc;

	if ((rc = srv_list_cluster(req, "shelf", &items, &next)) != AQ_OK)
		return rc;
	/* a page's shelves are matched among all (srv_shelfio_match) */
	if (json_array_size(items) && db_list_all(req->db, &q, &all, NULL) == AQ_OK)
		json_array_foreach(items, i, s)
			shelf_answer(req, s, all);
	json_decref(all);
	*resp = srv_list_page("shelves", items, next);
	free(next);
	return *resp ? AQ_OK : AQ_ENOMEM;
}

static int shelf_load(struct srv_req *req, char *name, size_t cap, json_t **doc)
{
	int rc;

	if (api_id_check(req->params[0], "shelf", &req->msg) != AQ_OK)
		return AQ_EINVAL;
	snprintf(name, cap, "shelves/%s", req->params[0]);
	if ((rc = db_get(req->db, name, doc)) == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "shelf \"%s\" not found", req->params[0]);
	return rc;
}

int srv_h_shelf_get(struct srv_req *req, json_t **resp)
{
	char name[300];
	int rc;

	if ((rc = shelf_load(req, name, sizeof(name), resp)) == AQ_OK)
		shelf_answer(req, *resp, NULL);
	return rc;
}

/* POST /v1/shelves?shelfId=S: a Shelf (api_shelf.h). */
int srv_h_shelf_create(struct srv_req *req, json_t **resp)
{
	const char *id = NULL, *loc;
	char name[200], parent[200], now[48];
	json_t *doc = NULL, *l = NULL;
	bool validate;
	int rc;

	if ((rc = srv_create_input(req, "shelfId", api_shelf_fields, "shelf", api_shelf_check, &id, &validate, &doc)) != AQ_OK)
		return rc;
	loc = api_json_str(doc, "location", "");
	snprintf(name, sizeof(name), "shelves/%s", id);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	ut_clock_now_text(now, sizeof(now));
	json_object_set_new(doc, "name", json_string(name));
	json_object_set_new(doc, "createTime", json_string(now));
	if ((rc = db_begin(req->db)) != AQ_OK)
		goto out;
	if ((rc = db_get(req->db, parent, &l)) == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "location \"%s\" not found", loc);
	if (rc != AQ_OK)
		goto out;
	if (validate) {
		rc = srv_put_new(req, "shelf", parent, name, doc, "shelf", id); /* the ID's uniqueness too */
		goto answer;
	}
	if ((rc = srv_put_new(req, "shelf", parent, name, doc, "shelf", id)) != AQ_OK ||
	    (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	UT_INFO("srv_shelf", req->id, "shelf %s (%s) created in %s", id, api_json_str(doc, "backend", ""), loc);
answer:
	if (rc == AQ_OK) {
		*resp = doc;
		doc = NULL;
	}
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(l);
	return rc;
}

/* PATCH /v1/shelves/S?updateMask=...: addresses, capacityGib, the ceilings
 * and media (the rest is immutable); the whole result is checked again. */
int srv_h_shelf_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	char name[300], parent[200], now[48];
	json_t *old = NULL, *patch = NULL, *doc = NULL;
	bool validate;
	int npaths, rc;

	if ((rc = srv_patch_input(req, api_shelf_fields, "Shelf", "shelf", &validate, paths, &npaths, &patch)) != AQ_OK)
		return rc;
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = shelf_load(req, name, sizeof(name), &old)) != AQ_OK)
		goto out;
	if ((rc = api_mask_patch(old, patch, paths, npaths, &doc, NULL)) != AQ_OK)
		goto out;
	/* a media change derives the write ceiling again unless it is given */
	for (int i = 0; i < npaths; i++)
		if (strcmp(paths[i].field->name, "media") == 0 && !json_object_get(patch, "writeThroughputMibps"))
			json_object_del(doc, "writeThroughputMibps");
	if ((rc = api_shelf_check(&req->srv->cfg.math, doc, &req->msg)) != AQ_OK ||
	    (rc = shelf_room_check(req->db, req->params[0], api_json_str(doc, "location", ""),
				   api_json_double(doc, "readThroughputMibps", 0), &req->msg)) != AQ_OK ||
	    (rc = shelf_gib_check(req->db, req->params[0], api_json_str(doc, "location", ""), doc, &req->msg)) != AQ_OK)
		goto out;
	ut_clock_now_text(now, sizeof(now));
	json_object_set_new(doc, "updateTime", json_string(now));
	snprintf(parent, sizeof(parent), "locations/%s", api_json_str(doc, "location", ""));
	if (!validate && ((rc = db_put(req->db, "shelf", parent, name, doc, false)) != AQ_OK ||
			  (rc = db_commit(req->db)) != AQ_OK))
		goto out;
	*resp = shelf_answer(req, doc, NULL);
	doc = NULL;
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	return rc;
}

/* DELETE /v1/shelves/S: refused while it is in use (srv_shelf.h). */
int srv_h_shelf_delete(struct srv_req *req, json_t **resp)
{
	char name[300];
	json_t *doc = NULL;
	int rc;

	if ((rc = db_begin(req->db)) != AQ_OK || (rc = shelf_load(req, name, sizeof(name), &doc)) != AQ_OK ||
	    (rc = shelf_room_check(req->db, req->params[0], api_json_str(doc, "location", ""), -1, &req->msg)) != AQ_OK ||
	    (rc = shelf_gib_check(req->db, req->params[0], api_json_str(doc, "location", ""), NULL, &req->msg)) != AQ_OK)
		goto out;
	if ((rc = db_delete(req->db, name)) != AQ_OK || (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	UT_INFO("srv_shelf", req->id, "shelf %s deleted", req->params[0]);
	*resp = json_object();
out:
	db_rollback(req->db);
	json_decref(doc);
	return rc;
}
