/* srv_place: which node serves a volume (see srv_place.h). A volume goes
 * to a READY node of its location with throughput headroom, within what
 * the location's shelves can still take (throughput here, capacity in
 * srv_place_shelf_room, which the volume handlers call before they write);
 * the choice itself is api_place_pick's (api/api_place.h), this file
 * feeds it the candidates and writes the placement. Both read what they
 * need of the location in one struct srv_place_loc (one round trip with
 * a create's own reads, db_reads; the nodes and shelves a second one,
 * only when they changed), so
 * that a create, which needs it for its pool, its shelves and its node,
 * reads it once under the writer mutex (on PostgreSQL, each statement is
 * a round trip there). */
#include "server/srv_place.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
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

/* db_usage_location: each row into {name: [count, capacityGib, mibps, cold, hot]} */
static void place_use_row(void *arg, const char *name, const struct db_usage *u)
{
	json_object_set_new(arg, name, json_pack("[Iffff]", (json_int_t)u->count, u->capacity_gib, u->mibps,
						  u->cold_gib, u->hot_gib));
}

/* The nodes and shelves placement reads of a location, as this process
 * last read them, under the location's placement version (db_placever):
 * a create reads the version (one row) and reads the rows (one per node
 * and shelf of the location) only when it changed, so its transaction no
 * longer grows with the node count. Every version value is used once
 * (db.h), so a cached pair can only match the rows it was read with, also
 * when they were read in a transaction that later rolled back, or in
 * another database (version 0, no node or shelf ever, is not cached). Cached
 * arrays are never changed (readers share them by reference; jansson's
 * reference counts are atomic). */
#define PLACE_CACHE_MAX 64
static struct {
	char loc[100];
	int64_t v;
	json_t *nodes, *shelves;
} place_cache[PLACE_CACHE_MAX];
static unsigned place_cache_next;
static pthread_mutex_t place_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t place_cache_hits, place_cache_misses;

static bool place_cache_get(struct srv_place_loc *pl, int64_t v)
{
	bool hit = false;

	pthread_mutex_lock(&place_cache_mu);
	for (unsigned i = 0; i < PLACE_CACHE_MAX && !hit; i++)
		if (place_cache[i].nodes && place_cache[i].v == v && strcmp(place_cache[i].loc, pl->id) == 0) {
			pl->nodes = json_incref(place_cache[i].nodes);
			pl->shelves = json_incref(place_cache[i].shelves);
			hit = true;
		}
	pthread_mutex_unlock(&place_cache_mu);
	atomic_fetch_add(hit ? &place_cache_hits : &place_cache_misses, 1);
	return hit;
}

static void place_cache_put(const struct srv_place_loc *pl, int64_t v)
{
	unsigned i;

	pthread_mutex_lock(&place_cache_mu);
	for (i = 0; i < PLACE_CACHE_MAX && !(place_cache[i].nodes && strcmp(place_cache[i].loc, pl->id) == 0); i++)
		;
	if (i == PLACE_CACHE_MAX)
		i = place_cache_next++ % PLACE_CACHE_MAX;
	json_decref(place_cache[i].nodes);
	json_decref(place_cache[i].shelves);
	snprintf(place_cache[i].loc, sizeof(place_cache[i].loc), "%s", pl->id);
	place_cache[i].v = v;
	place_cache[i].nodes = json_incref(pl->nodes);
	place_cache[i].shelves = json_incref(pl->shelves);
	pthread_mutex_unlock(&place_cache_mu);
}

void srv_place_cache_stats(uint64_t *hits, uint64_t *misses)
{
	*hits = atomic_load(&place_cache_hits);
	*misses = atomic_load(&place_cache_misses);
}

/* pl->nodes and pl->shelves of location pl->id: from the cache when the
 * version this transaction read with the usage counters (db.h
 * db_usage_location: the row "placever/locations/<id>") is the cached
 * one, else from the database (a second statement). */
static int place_nodes_read(struct db *db, struct srv_place_loc *pl)
{
	/* a few fields of each, not whole documents, nodes and shelves in one
	 * query */
	static const char *const fields[] = { "state", "throughputCeilingMibps", "capacityGib", "readThroughputMibps" };
	char vname[160];
	struct db_usage u;
	json_t *rows = NULL, *r;
	size_t i;
	int rc;

	snprintf(vname, sizeof(vname), "placever/%s", pl->parent);
	srv_place_loc_usage(pl, vname, &u);
	if (u.count != 0 && place_cache_get(pl, u.count))
		return AQ_OK;
	if (!(pl->nodes = json_array()) || !(pl->shelves = json_array()))
		return AQ_ENOMEM;
	if ((rc = db_list_fields2(db, "node", "shelf", pl->parent, fields, 4, &rows)) != AQ_OK)
		return rc;
	json_array_foreach(rows, i, r)
		if (json_array_append(strncmp(api_json_str(r, "name", ""), "nodes/", 6) == 0 ? pl->nodes : pl->shelves,
				      r) != 0)
			rc = AQ_ENOMEM;
	json_decref(rows);
	if (rc == AQ_OK && u.count != 0)
		place_cache_put(pl, u.count);
	return rc;
}

int srv_place_loc_want(const char *loc, struct srv_place_loc *pl, struct db_reads *r)
{
	memset(pl, 0, sizeof(*pl));
	snprintf(pl->id, sizeof(pl->id), "%s", loc);
	snprintf(pl->parent, sizeof(pl->parent), "locations/%s", loc);
	if (!(pl->usage = json_object()))
		return AQ_ENOMEM;
	/* the location's pools' and nodes' counters (db.h) and its placement
	 * version in one query: O(pools + nodes of the location), not
	 * O(volumes) */
	r->usage_loc = pl->id;
	r->usage_fn = place_use_row;
	r->usage_arg = pl->usage;
	return AQ_OK;
}

int srv_place_loc_take(struct db *db, struct srv_place_loc *pl)
{
	return place_nodes_read(db, pl);
}

int srv_place_loc_read(struct db *db, const char *loc, struct srv_place_loc *pl)
{
	struct db_reads r = { .names = NULL };
	int rc;

	if ((rc = srv_place_loc_want(loc, pl, &r)) == AQ_OK && (rc = db_reads(db, &r)) == AQ_OK)
		rc = srv_place_loc_take(db, pl);
	json_decref(r.rows);
	json_decref(r.docs);
	return rc;
}

void srv_place_loc_cleanup(struct srv_place_loc *pl)
{
	json_decref(pl->nodes);
	json_decref(pl->shelves);
	json_decref(pl->usage);
	pl->nodes = pl->shelves = pl->usage = NULL;
}

void srv_place_loc_usage(const struct srv_place_loc *pl, const char *name, struct db_usage *u)
{
	const json_t *row = json_object_get(pl->usage, name);

	memset(u, 0, sizeof(*u));
	if (!row)
		return;
	u->count = json_integer_value(json_array_get(row, 0));
	u->capacity_gib = json_real_value(json_array_get(row, 1));
	u->mibps = json_real_value(json_array_get(row, 2));
	u->cold_gib = json_real_value(json_array_get(row, 3));
	u->hot_gib = json_real_value(json_array_get(row, 4));
}

/* Candidate nodes of the location with their allocation (from the nodes'
 * usage counters: O(nodes), not O(volumes)); *shelf_head is what the
 * location's shelves can still take; *full counts the READY nodes left out
 * for serving API_NODE_VOLUMES_MAX volumes already (api_intent.h: their
 * agents would refuse one more), on failover too. */
static int place_candidates(const struct srv_place_loc *pl, const char *skip, struct api_place_node **cand,
			    double *shelf_head, size_t *full)
{
	double shelves = 0, total = 0;
	json_t *n, *sh;
	size_t i;

	*cand = calloc(json_array_size(pl->nodes) + 1, sizeof(**cand));
	if (!*cand)
		return AQ_ENOMEM;
	json_array_foreach(pl->nodes, i, n) {
		struct api_place_node *c = &(*cand)[i];
		struct db_usage u;

		c->name = api_json_str(n, "name", "");
		srv_place_loc_usage(pl, c->name, &u);
		c->ceiling_mibps = api_json_double(n, "throughputCeilingMibps", 0);
		c->allocated_mibps = u.mibps;
		c->eligible = strcmp(api_json_str(n, "state", ""), "READY") == 0 &&
			      (!skip || strcmp(c->name, skip) != 0);
		if (c->eligible && u.count >= (int64_t)API_NODE_VOLUMES_MAX) {
			c->eligible = false;
			(*full)++;
		}
		total += c->allocated_mibps;
	}
	json_array_foreach(pl->shelves, i, sh)
		shelves += api_json_double(sh, "readThroughputMibps", 0);
	*shelf_head = shelves - total;
	return AQ_OK;
}

static int place_pick_in(const struct srv_place_loc *pl, const char *skip, double mibps, bool overcommit,
			 char *node, size_t cap, aq_msg *msg)
{
	struct api_place_node *cand = NULL;
	double shelf_head = 0;
	size_t pick, full = 0;
	int rc;

	if ((rc = place_candidates(pl, skip, &cand, &shelf_head, &full)) == AQ_OK &&
	    (rc = api_place(cand, json_array_size(pl->nodes), mibps, shelf_head, overcommit, &pick, msg)) == AQ_OK)
		snprintf(node, cap, "%s", cand[pick].name);
	if (rc == AQ_EUNAVAIL && full > 0)
		rc = aq_fail(msg, AQ_EEXHAUSTED,
			     "every READY storage node in location \"%s\" serves %u volumes, the most a node serves "
			     "(API_NODE_VOLUMES_MAX); join another with aquifer-agent",
			     pl->id, API_NODE_VOLUMES_MAX);
	else if (rc == AQ_EUNAVAIL)
		rc = aq_fail(msg, AQ_EEXHAUSTED, "no READY storage node in location \"%s\"; join one with aquifer-agent",
			     pl->id);
	free(cand);
	return rc;
}

int srv_place_pick(struct db *db, const char *loc, const char *skip, double mibps, bool overcommit,
		   char *node, size_t cap, aq_msg *msg)
{
	struct srv_place_loc pl;
	int rc;

	if ((rc = srv_place_loc_read(db, loc, &pl)) == AQ_OK)
		rc = place_pick_in(&pl, skip, mibps, overcommit, node, cap, msg);
	srv_place_loc_cleanup(&pl);
	return rc;
}

void srv_place_location(const char *vol_name, char *loc, size_t cap)
{
	const char *l = strstr(vol_name, "/locations/");
	const char *e = l ? strchr(l + 11, '/') : NULL;

	snprintf(loc, cap, "%.*s", e ? (int)(e - l - 11) : 0, l ? l + 11 : "");
}

/* srv_place_shelf_gib from what pl holds */
static void place_shelf_gib_in(const struct srv_place_loc *pl, const char *skip, bool *bounded, double *cap,
			       double *used, size_t *counted, char *names, size_t names_cap)
{
	char skipname[200];
	const char *key;
	json_t *sh, *row;
	size_t i, at = 0, n = 0;

	*bounded = true;
	*cap = 0;
	*used = 0;
	if (names && names_cap)
		names[0] = 0;
	snprintf(skipname, sizeof(skipname), "shelves/%s", skip ? skip : "");
	json_array_foreach(pl->shelves, i, sh) {
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
	/* what the location's pools (of every project) hold */
	json_object_foreach(pl->usage, key, row)
		if (strstr(key, "/storagePools/"))
			*used += json_real_value(json_array_get(row, 1));
}

int srv_place_shelf_gib(struct db *db, const char *loc, const char *skip, bool *bounded, double *cap,
			double *used, size_t *counted, char *names, size_t names_cap)
{
	struct srv_place_loc pl;
	int rc;

	if ((rc = srv_place_loc_read(db, loc, &pl)) == AQ_OK)
		place_shelf_gib_in(&pl, skip, bounded, cap, used, counted, names, names_cap);
	srv_place_loc_cleanup(&pl);
	return rc;
}

int srv_place_shelf_room_in(const struct srv_place_loc *pl, double grow_gib, aq_msg *msg)
{
	char names[400];
	double cap = 0, used = 0;
	bool bounded = false;

	if (grow_gib <= 0)
		return AQ_OK;
	place_shelf_gib_in(pl, NULL, &bounded, &cap, &used, NULL, names, sizeof(names));
	return bounded ? api_place_capacity(cap, used, grow_gib, names, pl->id, msg) : AQ_OK;
}

int srv_place_shelf_room(struct db *db, const char *loc, double grow_gib, aq_msg *msg)
{
	struct srv_place_loc pl;
	int rc;

	if (grow_gib <= 0)
		return AQ_OK;
	if ((rc = srv_place_loc_read(db, loc, &pl)) == AQ_OK)
		rc = srv_place_shelf_room_in(&pl, grow_gib, msg);
	srv_place_loc_cleanup(&pl);
	return rc;
}

int srv_place_volume(struct srv_req *req, const json_t *vol, const char *op_name,
		     const char *action, char *node, size_t node_cap, const struct srv_place_loc *seen, aq_msg *msg)
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

		if ((rc = seen ? place_pick_in(seen, NULL, mibps, false, node, node_cap, msg)
			       : srv_place_pick(req->db, loc, NULL, mibps, false, node, node_cap, msg)) != AQ_OK)
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
		else if ((rc = srv_svcaddr_assign(req->db, loc, seen ? seen->doc : NULL, pl, msg)) == AQ_OK)
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
