/* srv_shelf: shelves, the storage a location's nodes share (cluster
 * admin: POST/GET /v1/shelves), and the default shelf every new location
 * gets (see srv_shelf.h). */
#include "server/srv_shelf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_req.h"
#include "util/ut_clock.h"

int srv_shelf_default(struct db *db, const char *location_id)
{
	char name[200], parent[200], now[48];
	json_t *doc;
	int rc;

	snprintf(name, sizeof(name), "shelves/%s-shelf-1", location_id);
	snprintf(parent, sizeof(parent), "locations/%s", location_id);
	ut_clock_now_text(now, sizeof(now));
	doc = json_pack("{s:s,s:s,s:f,s:f,s:s,s:s,s:s}", "name", name, "location", location_id,
			"readThroughputMibps", SRV_SHELF_READ_MIBPS, "writeThroughputMibps",
			SRV_SHELF_WRITE_MIBPS, "media", "TLC", "backend", "directory", "createTime", now);
	if (!doc)
		return AQ_ENOMEM;
	rc = db_put(db, "shelf", parent, name, doc, true);
	json_decref(doc);
	return rc == AQ_EEXIST ? AQ_OK : rc;
}

int srv_h_shelf_list(struct srv_req *req, json_t **resp)
{
	json_t *items = NULL;
	char *next = NULL;
	int rc;

	if ((rc = srv_list_cluster(req, "shelf", &items, &next)) != AQ_OK)
		return rc;
	*resp = srv_list_page("shelves", items, next);
	free(next);
	return *resp ? AQ_OK : AQ_ENOMEM;
}

int srv_h_shelf_get(struct srv_req *req, json_t **resp)
{
	char name[300];
	int rc;

	snprintf(name, sizeof(name), "shelves/%s", req->params[0]);
	if ((rc = db_get(req->db, name, resp)) == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "shelf \"%s\" not found", req->params[0]);
	return rc;
}

/* POST /v1/shelves?shelfId=S {location, readThroughputMibps, writeThroughputMibps, media} */
int srv_h_shelf_create(struct srv_req *req, json_t **resp)
{
	const char *id = srv_query(req, "shelfId");
	const json_t *b = req->body;
	const char *loc = api_json_str(b, "location", NULL), *media = api_json_str(b, "media", "TLC");
	double rd = api_json_double(b, "readThroughputMibps", SRV_SHELF_READ_MIBPS);
	double wr = api_json_double(b, "writeThroughputMibps", strcmp(media, "QLC") == 0 ? SRV_SHELF_WRITE_MIBPS / 2 : SRV_SHELF_WRITE_MIBPS);
	char name[200], parent[200], now[48];
	json_t *doc = NULL, *l = NULL;
	int rc;

	if (!id || (rc = api_id_check(id, "shelfId", &req->msg)) != AQ_OK)
		return id ? rc : aq_fail(&req->msg, AQ_EINVAL, "shelfId is required");
	if (!loc)
		return aq_fail(&req->msg, AQ_EINVAL, "location is required");
	if (strcmp(media, "TLC") != 0 && strcmp(media, "QLC") != 0)
		return aq_fail(&req->msg, AQ_EINVAL, "media must be TLC or QLC");
	if (rd <= 0 || wr <= 0)
		return aq_fail(&req->msg, AQ_EINVAL, "readThroughputMibps and writeThroughputMibps must be positive");
	snprintf(name, sizeof(name), "shelves/%s", id);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	ut_clock_now_text(now, sizeof(now));
	if ((rc = db_begin(req->db)) != AQ_OK)
		return rc;
	if ((rc = db_get(req->db, parent, &l)) == AQ_ENOENT)
		rc = aq_fail(&req->msg, rc, "location \"%s\" not found", loc);
	if (rc != AQ_OK)
		goto out;
	doc = json_pack("{s:s,s:s,s:f,s:f,s:s,s:s,s:s}", "name", name, "location", loc,
			"readThroughputMibps", rd, "writeThroughputMibps", wr, "media", media, "backend",
			"directory", "createTime", now);
	if ((rc = srv_put_new(req, "shelf", parent, name, doc, "shelf", id)) != AQ_OK ||
	    (rc = db_commit(req->db)) != AQ_OK)
		goto out;
	*resp = doc;
	doc = NULL;
out:
	db_rollback(req->db);
	json_decref(doc);
	json_decref(l);
	return rc;
}

