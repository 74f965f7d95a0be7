/* srv_place: which node serves a volume (see srv_place.h). A volume goes
 * to a READY node of its location with throughput headroom, within what
 * the location's shelves can still take (throughput here, capacity in
 * srv_place_shelf_room, which the volume handlers call before they write);
 * the choice itself is
 * api_place_pick's (api/api_place.h), this file feeds it the candidates
 * and writes the placement. */
#include "server/srv_place.h"

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_place.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_req.h"
#include "server/srv_svcaddr.h"
#include "util/ut_hex.h"

int srv_place_allocated(struct db *db, const char *node_name, double *mibps, int64_t *count)
{
	struct db_usage u;
	int rc = db_usage_get(db, node_name, &u);

	if (rc == AQ_OK) {
		*mibps = u.mibps;
		if (count)
			*count = u.count;
	}
	return rc;
}

/* db_usage_each: each node's allocated MiB/s into {node: mibps} */
static void place_alloc_row(void *arg, const char *name, const struct db_usage *u)
{
	json_object_set_new(arg, name, json_real(u->mibps));
}

/* Candidate nodes of a location with their allocation; *shelf_head is what
 * the location's shelves can still take. */
static int place_candidates(struct db *db, const char *loc, const char *skip, json_t **nodes,
			    struct api_place_node **cand, double *shelf_head, aq_msg *msg)
{
	static const char *const fields[] = { "state", "throughputCeilingMibps" };
	char parent[200];
	double shelves = 0, total = 0;
	json_t *n, *alloc = NULL;
	size_t i;
	int rc;

	snprintf(parent, sizeof(parent), "locations/%s", loc);
	/* two fields of each node, not whole documents: this runs inside a
	 * create's transaction, once per create, over every node */
	if ((rc = db_list_fields(db, "node", parent, fields, 2, nodes)) != AQ_OK)
		return rc;
	/* what is placed on each node, from the nodes' usage counters (db.h) in
	 * one query: O(nodes), not O(volumes) */
	if (!(alloc = json_object()))
		return AQ_ENOMEM;
	if ((rc = db_usage_each(db, "nodes/", place_alloc_row, alloc)) != AQ_OK) {
		json_decref(alloc);
		return rc;
	}
	*cand = calloc(json_array_size(*nodes) + 1, sizeof(**cand));
	if (!*cand) {
		json_decref(alloc);
		return AQ_ENOMEM;
	}
	json_array_foreach(*nodes, i, n) {
		struct api_place_node *c = &(*cand)[i];

		c->name = api_json_str(n, "name", "");
		c->ceiling_mibps = api_json_double(n, "throughputCeilingMibps", 0);
		c->allocated_mibps = api_json_double(alloc, c->name, 0);
		c->eligible = strcmp(api_json_str(n, "state", ""), "READY") == 0 &&
			      (!skip || strcmp(c->name, skip) != 0);
		total += c->allocated_mibps;
	}
	json_decref(alloc);
	if ((rc = db_sum(db, "shelf", parent, "readThroughputMibps", &shelves)) != AQ_OK)
		return rc;
	*shelf_head = shelves - total;
	return AQ_OK;
}

int srv_place_pick(struct db *db, const char *loc, const char *skip, double mibps, bool overcommit,
		   char *node, size_t cap, aq_msg *msg)
{
	json_t *nodes = NULL;
	struct api_place_node *cand = NULL;
	double shelf_head = 0;
	size_t pick;
	int rc;

	if ((rc = place_candidates(db, loc, skip, &nodes, &cand, &shelf_head, msg)) == AQ_OK &&
	    (rc = api_place(cand, json_array_size(nodes), mibps, shelf_head, overcommit, &pick, msg)) == AQ_OK)
		snprintf(node, cap, "%s", cand[pick].name);
	if (rc == AQ_EUNAVAIL)
		rc = aq_fail(msg, AQ_EEXHAUSTED, "no READY storage node in location \"%s\"; join one with aquifer-agent", loc);
	free(cand);
	json_decref(nodes);
	return rc;
}

void srv_place_location(const char *vol_name, char *loc, size_t cap)
{
	const char *l = strstr(vol_name, "/locations/");
	const char *e = l ? strchr(l + 11, '/') : NULL;

	snprintf(loc, cap, "%.*s", e ? (int)(e - l - 11) : 0, l ? l + 11 : "");
}

/* db_usage_each over "projects/": the capacity of the pools of one
 * location ("/locations/<loc>/storagePools/" in the name). */
struct place_gib {
	char infix[140];
	double used;
};

static void place_gib_row(void *arg, const char *name, const struct db_usage *u)
{
	struct place_gib *g = arg;

	if (strstr(name, g->infix))
		g->used += u->capacity_gib;
}

int srv_place_shelf_gib(struct db *db, const char *loc, const char *skip, bool *bounded, double *cap,
			double *used, size_t *counted, char *names, size_t names_cap)
{
	static const char *const fields[] = { "capacityGib" };
	struct place_gib g = { .used = 0 };
	char parent[200], skipname[200];
	json_t *shelves = NULL, *sh;
	size_t i, at = 0, n = 0;
	int rc;

	*bounded = true;
	*cap = 0;
	*used = 0;
	if (names && names_cap)
		names[0] = 0;
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	snprintf(skipname, sizeof(skipname), "shelves/%s", skip ? skip : "");
	if ((rc = db_list_fields(db, "shelf", parent, fields, 1, &shelves)) != AQ_OK)
		goto out;
	json_array_foreach(shelves, i, sh) {
		const char *sn = api_json_str(sh, "name", "");
		json_t *c = json_object_get(sh, "capacityGib");

		if (skip && strcmp(sn, skipname) == 0)
			continue;
		n++;
		if (!c || json_is_null(c))
			*bounded = false;
		*cap += (double)api_json_int64(sh, "capacityGib", 0);
		if (names && at < names_cap) {
			int w = snprintf(names + at, names_cap - at, "%s%s", at ? ", " : "",
					 strncmp(sn, "shelves/", 8) == 0 ? sn + 8 : sn);
			at += w > 0 ? (size_t)w : 0;
		}
	}
	if (n == 0)
		*bounded = false;
	if (counted)
		*counted = n;
	snprintf(g.infix, sizeof(g.infix), "/locations/%s/storagePools/", loc);
	if ((rc = db_usage_each(db, "projects/", place_gib_row, &g)) != AQ_OK)
		goto out;
	*used = g.used;
out:
	json_decref(shelves);
	return rc;
}

int srv_place_shelf_room(struct db *db, const char *loc, double grow_gib, aq_msg *msg)
{
	char names[400];
	double cap = 0, used = 0;
	bool bounded = false;
	int rc;

	if (grow_gib <= 0)
		return AQ_OK;
	if ((rc = srv_place_shelf_gib(db, loc, NULL, &bounded, &cap, &used, NULL, names, sizeof(names))) != AQ_OK || !bounded)
		return rc;
	return api_place_capacity(cap, used, grow_gib, names, loc, msg);
}

int srv_place_volume(struct srv_req *req, const json_t *vol, const char *op_name,
		     const char *action, char *node, size_t node_cap, aq_msg *msg)
{
	const char *vn = api_json_str(vol, "name", "");
	double mibps = api_json_double(vol, "throughputMibps", 0);
	char pname[800], loc[100];
	json_t *pl = NULL;
	int rc;

	snprintf(pname, sizeof(pname), "placements/%s", vn);
	srv_place_location(vn, loc, sizeof(loc));
	if (strcmp(action, "create") == 0) {
		/* no read first (a statement, on PostgreSQL a round trip, under
		 * the writer mutex): the INSERT says whether the name still has
		 * a placement */
		unsigned char sum[SHA256_DIGEST_LENGTH];
		char fsid[17], dir[64], seed[900];

		if ((rc = srv_place_pick(req->db, loc, NULL, mibps, false, node, node_cap, msg)) != AQ_OK)
			goto out;
		/* fsid: stable for this incarnation of the name (its createTime) */
		snprintf(seed, sizeof(seed), "%s|%s", vn, api_json_str(vol, "createTime", ""));
		SHA256((const unsigned char *)seed, strlen(seed), sum);
		ut_hex_encode(sum, 8, fsid, sizeof(fsid));
		snprintf(dir, sizeof(dir), "volumes/%s", fsid);
		pl = json_pack("{s:s,s:s,s:f,s:s,s:s,s:s,s:s,s:I}", "volume", vn, "node", node, "mibps",
			       mibps, "fsid", fsid, "dir", dir, "op", op_name, "action", action,
			       "pendingGeneration", (json_int_t)0);
		/* its service address, for its life (srv_svcaddr.h) */
		if (!pl)
			rc = AQ_ENOMEM;
		else if ((rc = srv_svcaddr_assign(req->db, loc, pl, msg)) == AQ_OK)
			rc = db_put(req->db, "placement", node, pname, pl, true);
		if (rc == AQ_EEXIST)
			rc = aq_fail(msg, AQ_EBUSY, "volume \"%s\" was just removed and its node is still deleting its data; retry in a few seconds",
				     vn);
		goto out;
	}
	if ((rc = db_get(req->db, pname, &pl)) != AQ_OK)
		goto out;
	snprintf(node, node_cap, "%s", api_json_str(pl, "node", ""));
	if (strcmp(action, "update") == 0) {
		double alloc = 0, old = api_json_double(pl, "mibps", 0);
		json_t *nd = NULL;

		if ((rc = srv_place_allocated(req->db, node, &alloc, NULL)) != AQ_OK ||
		    (rc = db_get(req->db, node, &nd)) != AQ_OK)
			goto out;
		if (mibps > old && alloc - old + mibps > api_json_double(nd, "throughputCeilingMibps", 0) + 1e-6)
			rc = aq_fail(msg, AQ_EEXHAUSTED, "node %s has %.2f MiB/s of headroom; the volume needs %.2f more",
				     node, api_json_double(nd, "throughputCeilingMibps", 0) - alloc, mibps - old);
		json_decref(nd);
		if (rc != AQ_OK)
			goto out;
		json_object_set_new(pl, "mibps", json_real(mibps));
	}
	json_object_set_new(pl, "op", json_string(op_name));
	json_object_set_new(pl, "action", json_string(action));
	json_object_set_new(pl, "pendingGeneration", json_integer(0));
	rc = db_put(req->db, "placement", node, pname, pl, false);
out:
	json_decref(pl);
	return rc;
}
