/* srv_volume: volumes. Validation is pure (api_volume_check, the math);
 * the apply step writes the volume and its operation in one transaction.
 * A create's transaction is a group body (db_group_run, the api lane):
 * the creates of clients that arrive while one runs share one commit.
 * A volume's throughputMibps is stored: the user's figure in MANUAL pools,
 * the computed limit in AUTO and FLEX pools (recomputed whenever its
 * capacity, tiering or pool changes), so pool sums are one query. */
#include "server/srv_volume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_backup.h"
#include "server/srv_bconfig.h"
#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "server/srv_op.h"
#include "server/srv_place.h"
#include "server/srv_pool.h"
#include "server/srv_req.h"
#include "server/srv_snapshot.h"
#include "util/ut_clock.h"

#define VOL_TYPE "type.googleapis.com/google.cloud.netapp.v1.Volume"
#define EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"

/* The volume's full name; id NULL means the one in the path. */
static void vol_name(struct srv_req *req, const char *id, char *name, size_t cap, char *parent,
		     size_t pcap)
{
	srv_parent(req, parent, pcap);
	snprintf(name, cap, "%s/volumes/%s", parent, id ? id : req->params[2]);
}

static int vol_load(struct srv_req *req, const char *name, json_t **doc)
{
	int rc = db_get(req->db, name, doc);

	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, rc, "volume \"%s\" not found", name);
	return rc;
}

/* The full name of the volume's storagePool (an ID or a full name in this
 * project and location). */
static int vol_pool_name(struct srv_req *req, const json_t *vol, char *full, size_t cap)
{
	char parent[600];
	const char *sp = api_json_str(vol, "storagePool", "");
	int rc;

	srv_parent(req, parent, sizeof(parent));
	if (strchr(sp, '/')) {
		size_t n = strlen(parent);

		if (strncmp(sp, parent, n) != 0 || strncmp(sp + n, "/storagePools/", 14) != 0)
			return aq_fail(&req->msg, AQ_EINVAL, "storagePool \"%s\" must be in %s", sp, parent);
		snprintf(full, cap, "%s", sp);
	} else {
		if ((rc = api_id_check(sp, "storagePool", &req->msg)) != AQ_OK)
			return rc;
		snprintf(full, cap, "%s/storagePools/%s", parent, sp);
	}
	return AQ_OK;
}

/* Resolve the volume's storagePool to its full name and load the pool. */
static int vol_pool(struct srv_req *req, json_t *vol, json_t **pool)
{
	char full[800];
	int rc;

	if ((rc = vol_pool_name(req, vol, full, sizeof(full))) != AQ_OK)
		return rc;
	rc = db_get(req->db, full, pool);
	if (rc == AQ_ENOENT)
		return aq_fail(&req->msg, AQ_ENOENT, "storagePool \"%s\" not found", full);
	/* kept as sent (ID or full name): it reads back as the client wrote it,
	 * so a Terraform config using either form shows no diff */
	return rc;
}

/* shareName is unique per location across projects, as GCNV's is (n: the
 * volumes of the location that have it already): a node
 * exports one path per share name, whoever owns the volume, so a second
 * project's "demo" would collide on the node. The refusal names no other
 * tenant's resources: only that the name is taken here. */
static int vol_share_free(struct srv_req *req, const char *share, int64_t n)
{
	return n ? aq_fail(&req->msg, AQ_EEXIST, "shareName \"%s\" is already taken in location %s; choose another",
			   share, req->params[1])
		 : AQ_OK;
}

/* One mutation at a time per volume (GCNV refuses concurrent changes of a
 * resource): a PATCH or DELETE while an operation on the volume runs is
 * FAILED_PRECONDITION naming it, so every operation finishes and none is
 * overwritten. A PATCH of a volume no node holds (its create failed) is
 * refused too: only a delete helps it. */
static int vol_idle(struct srv_req *req, const json_t *vol, const char *verb)
{
	const char *vn = api_json_str(vol, "name", ""), *state = api_json_str(vol, "state", "");
	char pname[800], op[800] = "";
	json_t *pl = NULL;
	int rc;

	snprintf(pname, sizeof(pname), "placements/%s", vn);
	if ((rc = db_get(req->db, pname, &pl)) == AQ_OK)
		snprintf(op, sizeof(op), "%s", api_json_str(pl, "op", ""));
	json_decref(pl);
	if (rc == AQ_ENOENT && strcmp(verb, "update") == 0) /* its create failed: no node holds it */
		return aq_fail(&req->msg, AQ_EPRECOND, "volume \"%s\" is %s and no node serves it (%s); delete it and create it again",
			       vn, state, api_json_str(vol, "stateDetails", "its create failed"));
	if (rc != AQ_OK && rc != AQ_ENOENT)
		return rc;
	if (strcmp(state, "CREATING") != 0 && strcmp(state, "UPDATING") != 0 && strcmp(state, "DELETING") != 0 &&
	    strcmp(state, "RESTORING") != 0)
		return AQ_OK;
	if (strcmp(state, "DELETING") == 0)
		return aq_fail(&req->msg, AQ_EPRECOND, "volume \"%s\" is already being deleted%s%s%s", vn,
			       *op ? " (operation " : "", op, *op ? ")" : "");
	return aq_fail(&req->msg, AQ_EPRECOND,
		       "volume \"%s\" is %s (operation %s): one change at a time; wait for it to finish%s before this %s",
		       vn, state, *op ? op : "unknown",
		       strcmp(state, "CREATING") == 0 || strcmp(state, "RESTORING") == 0 ? " or cancel it" : "", verb);
}

/* Check the volume against its pool and fill what the pool decides. old:
 * the stored volume when it already exists (its own usage is not
 * "other"); seen: the location as the caller read it (the pool's usage
 * counters among it), or NULL to read the pool's here. */
static int vol_fit(struct srv_req *req, const json_t *pool, json_t *vol, const json_t *old,
		   bool throughput_given, const struct srv_place_loc *seen)
{
	const struct api_math_params *p = &req->srv->cfg.math;
	struct api_pool_math pm;
	struct api_vol_math vm;
	struct srv_pool_usage u;
	int64_t other_cap;
	double other_mibps;
	int rc;

	api_pool_math_from(pool, &pm);
	if (pm.qos != API_QOS_MANUAL || pm.level == API_LEVEL_FLEX) {
		if (throughput_given)
			return aq_fail(&req->msg, AQ_EINVAL, "throughputMibps can be set only on volumes in MANUAL QoS pools; pool %s uses %s QoS",
				       api_json_str(pool, "name", ""), pm.level == API_LEVEL_FLEX ? "FLEX (shared)" : "AUTO");
		json_object_del(vol, "throughputMibps");
	} else if (!json_object_get(vol, "throughputMibps")) {
		return aq_fail(&req->msg, AQ_EINVAL, "throughputMibps is required for volumes in MANUAL QoS pool %s",
			       api_json_str(pool, "name", ""));
	}
	if (json_object_get(vol, "tieringPolicy") && !pm.allow_tiering)
		return aq_fail(&req->msg, AQ_EINVAL, "tieringPolicy needs a pool with allowAutoTiering; pool %s does not allow it",
			       api_json_str(pool, "name", ""));
	if (api_json_bool(json_object_get(vol, "tieringPolicy"), "hotTierBypassModeEnabled", false) &&
	    pm.level != API_LEVEL_FLEX)
		return aq_fail(&req->msg, AQ_EINVAL, "tieringPolicy.hotTierBypassModeEnabled is available on FLEX pools only; pool %s is %s",
			       api_json_str(pool, "name", ""), api_level_name(pm.level));
	if (seen) {
		struct db_usage du;

		srv_place_loc_usage(seen, api_json_str(pool, "name", ""), &du);
		srv_pool_usage_of(&du, &u);
	} else if ((rc = srv_pool_usage(req->db, api_json_str(pool, "name", ""), &u, &req->msg)) != AQ_OK) {
		return rc;
	}
	other_cap = u.capacity_gib;
	other_mibps = u.mibps;
	if (old && strcmp(api_volume_pool_id(old), api_volume_pool_id(vol)) == 0) {
		other_cap -= api_json_int64(old, "capacityGib", 0);
		other_mibps -= api_json_double(old, "throughputMibps", 0);
	}
	api_vol_math_from(vol, &vm);
	if ((rc = api_math_check_volume(p, &pm, &vm, other_cap, other_mibps, &req->msg)) != AQ_OK)
		return rc;
	api_volume_fill_output(p, pool, vol);
	return AQ_OK;
}

/* A resize: the location's shelves must hold what the volume grows by
 * (old: the stored volume, which the counters include); a shrink never
 * goes below what the volume uses. (A create checks its shelves' room in
 * vol_create_check, from what it read of the location.) */
static int vol_shelf_room(struct srv_req *req, const char *name, const json_t *vol, const json_t *old)
{
	char loc[100];
	int64_t cap = api_json_int64(vol, "capacityGib", 0);
	double grow = (double)cap - (old ? (double)api_json_int64(old, "capacityGib", 0) : 0);

	/* a shrink below what the volume holds (usedGib, its node's last report) */
	if (old && grow < 0 && cap < api_json_int64(old, "usedGib", 0))
		return aq_fail(&req->msg, AQ_EPRECOND, "capacityGib %lld is below what volume \"%s\" uses (usedGib %lld); free space first",
			       (long long)cap, name, (long long)api_json_int64(old, "usedGib", 0));
	srv_place_location(name, loc, sizeof(loc));
	return srv_place_shelf_room(req->db, loc, grow, &req->msg);
}

/* A create's reads in one db_reads (on PostgreSQL one round trip under
 * the writer mutex, where they were four): its project, location and
 * pool, the count of its share name (vol_share_free), and what placement
 * and the room checks read of the location (into *seen, which the caller
 * cleans up). Refused as srv_check_parent, vol_pool and vol_share_free
 * would, in that order; *loc gets the location's document (for its
 * service addresses, srv_svcaddr). */
static int vol_create_reads(struct srv_req *req, json_t *vol, json_t **pool, json_t **loc,
			    struct srv_place_loc *seen)
{
	char lname[200];
	char full[800];
	aq_msg pool_msg = { .text = "" };
	struct db_reads r = { .names = NULL };
	json_t *names = json_array();
	int rc, pool_rc;

	if (!names)
		return AQ_ENOMEM;
	if ((rc = srv_check_parent_names(req, names)) != AQ_OK)
		goto out;
	pool_rc = vol_pool_name(req, vol, full, sizeof(full));
	pool_msg = req->msg;
	if (pool_rc == AQ_OK && json_array_append_new(names, json_string(full)) != 0) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = srv_place_loc_want(req->params[1], seen, &r)) != AQ_OK)
		goto out;
	r.names = names;
	r.share_loc = req->params[1];
	r.share = api_json_str(vol, "shareName", "");
	if ((rc = db_reads(req->db, &r)) != AQ_OK || (rc = srv_check_parent_in(req, r.docs)) != AQ_OK)
		goto out;
	if (pool_rc != AQ_OK) {
		req->msg = pool_msg;
		rc = pool_rc;
		goto out;
	}
	if (!(*pool = json_incref(json_object_get(r.docs, full)))) {
		rc = aq_fail(&req->msg, AQ_ENOENT, "storagePool \"%s\" not found", full);
		goto out;
	}
	snprintf(lname, sizeof(lname), "locations/%s", req->params[1]);
	*loc = json_incref(json_object_get(r.docs, lname));
	if ((rc = vol_share_free(req, r.share, r.share_n)) == AQ_OK)
		rc = srv_place_loc_take(req->db, seen);
out:
	json_decref(names);
	json_decref(r.docs);
	json_decref(r.rows);
	return rc;
}

/* The apply step's writes, in the caller's transaction: an operation that
 * is done when the volume's node has applied the change
 * (srv_reconcile.c) and the placement that carries it (seen: what a
 * create's checks read of the location, or NULL). *op gets the
 * operation, node its node; a volume no node can take is AQ_EEXHAUSTED or
 * AQ_EUNAVAIL with why saying so, for vol_unplaced. */
static int vol_apply(struct srv_req *req, const char *parent, const char *name, const json_t *vol,
		     const char *verb, const struct srv_place_loc *seen, json_t **op, char *node, size_t node_cap,
		     aq_msg *why)
{
	int rc;

	node[0] = '\0';
	if ((rc = srv_op_create(req, parent, name, verb, false, NULL, op)) != AQ_OK)
		return rc;
	rc = srv_place_volume(req, vol, api_json_str(*op, "name", ""), verb, node, node_cap, seen, why);
	if (rc == AQ_ENOENT && strcmp(verb, "delete") == 0) {
		/* never placed (a failed create): nothing for a node to do */
		json_t *empty = json_pack("{s:s}", "@type", EMPTY_TYPE);

		rc = db_delete(req->db, name);
		if (rc == AQ_OK)
			rc = srv_op_finish(req->db, api_json_str(*op, "name", ""), empty, AQ_OK, NULL);
		json_decref(empty);
	} else if (rc != AQ_OK && rc != AQ_EEXHAUSTED && rc != AQ_EUNAVAIL && why->text[0]) {
		req->msg = *why; /* placement's own refusal (a name still in use) */
	}
	return rc;
}

/* No node could take the volume (why): nothing but a failed operation is
 * kept, in a transaction of its own; *resp gets it. */
static int vol_unplaced(struct srv_req *req, const char *parent, const char *name, const char *verb,
			const aq_msg *why, json_t **resp)
{
	json_t *op = NULL;
	int rc;

	db_rollback(req->db);
	if ((rc = db_begin(req->db)) != AQ_OK ||
	    (rc = srv_op_create(req, parent, name, verb, true, NULL, &op)) != AQ_OK ||
	    (rc = srv_op_finish(req->db, api_json_str(op, "name", ""), NULL, AQ_EEXHAUSTED, why->text)) != AQ_OK)
		goto out;
	if ((rc = db_commit(req->db)) == AQ_OK)
		rc = db_get(req->db, api_json_str(op, "name", ""), resp);
out:
	db_rollback(req->db);
	json_decref(op);
	return rc;
}

/* After the commit: the operation as stored (else as written) to *resp
 * (takes op) and a kick to the reconciler for node. */
static void vol_answer(struct srv_req *req, json_t *op, const char *node, json_t **resp)
{
	if (db_get(req->db, api_json_str(op, "name", ""), resp) != AQ_OK) {
		*resp = op;
		op = NULL;
	}
	json_decref(op);
	if (*node)
		srv_kick(req->srv, node);
}

/* The apply step every update and delete ends with: vol_apply, commit,
 * vol_answer; a volume no node can take fails its operation with
 * RESOURCE_EXHAUSTED and stores nothing else. */
static int vol_pending(struct srv_req *req, const char *parent, const char *name, const json_t *vol,
		       const char *verb, json_t **resp)
{
	json_t *op = NULL;
	aq_msg why = { .text = "" };
	char node[200] = "";
	int rc = vol_apply(req, parent, name, vol, verb, NULL, &op, node, sizeof(node), &why);

	if (rc == AQ_EEXHAUSTED || rc == AQ_EUNAVAIL) {
		json_decref(op);
		return vol_unplaced(req, parent, name, verb, &why, resp);
	}
	if (rc == AQ_OK && (rc = db_commit(req->db)) == AQ_OK) {
		vol_answer(req, op, node, resp);
		op = NULL;
	}
	json_decref(op);
	return rc;
}

/* A create's checks, in the caller's transaction: its parents and pool,
 * the share name, what placement and the room checks read of the location
 * (vol_create_reads: one db_reads; into *seen, which the caller cleans
 * up; seen->doc borrows *loc), the pool's and the shelves' room, and
 * what a clone, restore or backup config asks. vol gets what the pool
 * decides; *pool the pool, *loc the location's document. */
static int vol_create_check(struct srv_req *req, const char *parent, json_t *vol, bool throughput_given,
			    json_t **pool, json_t **loc, struct srv_place_loc *seen)
{
	int rc;

	if ((rc = vol_create_reads(req, vol, pool, loc, seen)) != AQ_OK)
		return rc;
	seen->doc = *loc;
	if ((rc = vol_fit(req, *pool, vol, NULL, throughput_given, seen)) != AQ_OK ||
	    (rc = srv_place_shelf_room_in(seen, (double)api_json_int64(vol, "capacityGib", 0), &req->msg)) != AQ_OK ||
	    (rc = srv_snapshot_clone_check(req->db, parent, vol, &req->msg)) != AQ_OK ||
	    (rc = srv_backup_restore_check(req->db, parent, vol, &req->msg)) != AQ_OK ||
	    (rc = srv_bconfig_check(req->db, parent, vol, &req->msg)) != AQ_OK)
		return rc;
	return srv_backup_volume_chain(req->db, vol);
}

/* One create as a group body (db_group_run, lane DB_GROUP_API): its checks
 * and writes in a transaction it may share with other clients' creates,
 * so that one commit (one WAL flush on PostgreSQL, one COMMIT on SQLite)
 * serves them all; each is answered only once that commit is durable. It
 * runs on the group leader's connection (req->db for its time) and may run
 * twice (alone, when its group failed), so it starts from the request's
 * input each time. */
struct vol_create {
	struct srv_req *req;
	const char *parent, *name;
	const json_t *in;    /* the volume as the request made it */
	bool throughput_given;
	json_t *op;          /* out: the operation written */
	char node[200];      /* out: the node that takes it */
	aq_msg why;          /* out: why no node could */
	bool unplaced;       /* out: no node could (why) */
};

/* The create's three inserts, held since db_puts_start (the volume, its
 * operation, its placement, in that order), written at once: on
 * PostgreSQL one round trip under the writer mutex where they were three.
 * A name in use is refused as srv_put_new and srv_place_volume refuse it
 * one by one: the volume's as existing, the placement's as still being
 * deleted by its node. */
#define VOL_PUT_VOLUME 0
#define VOL_PUT_PLACEMENT 2

static int vol_create_send(struct srv_req *req, const char *name)
{
	int failed = -1;
	int rc = db_puts_send(req->db, &failed);

	if (rc == AQ_EEXIST && failed == VOL_PUT_VOLUME)
		return aq_fail(&req->msg, AQ_EEXIST, "volume \"%s\" already exists", name);
	if (rc == AQ_EEXIST && failed == VOL_PUT_PLACEMENT)
		return aq_fail(&req->msg, AQ_EBUSY,
			       "volume \"%s\" was just removed and its node is still deleting its data; retry in a few seconds",
			       name);
	return rc;
}

static int vol_create_body(struct db *db, void *arg)
{
	struct vol_create *c = arg;
	struct srv_req *req = c->req;
	struct db *own = req->db;
	struct srv_place_loc seen = { .nodes = NULL };
	json_t *doc = json_deep_copy(c->in), *pool = NULL, *loc = NULL;
	int rc;

	json_decref(c->op);
	c->op = NULL;
	c->unplaced = false;
	c->why.text[0] = '\0';
	if (!doc)
		return AQ_ENOMEM;
	req->db = db;
	if ((rc = vol_create_check(req, c->parent, doc, c->throughput_given, &pool, &loc, &seen)) != AQ_OK ||
	    (rc = db_puts_start(db)) != AQ_OK ||
	    (rc = srv_put_new(req, "volume", c->parent, c->name, doc, "volume", c->name)) != AQ_OK)
		goto out;
	rc = vol_apply(req, c->parent, c->name, doc, "create", &seen, &c->op, c->node, sizeof(c->node), &c->why);
	c->unplaced = rc == AQ_EEXHAUSTED || rc == AQ_EUNAVAIL;
	if (rc == AQ_OK)
		rc = vol_create_send(req, c->name);
out:
	db_puts_drop(db); /* what a failure left held (the group rolls back) */
	req->db = own;
	srv_place_loc_cleanup(&seen);
	json_decref(doc);
	json_decref(pool);
	json_decref(loc);
	return rc;
}

int srv_h_volume_create(struct srv_req *req, json_t **resp)
{
	const char *id;
	char parent[600], name[700], now[48];
	json_t *doc = NULL, *pool = NULL, *loc = NULL;
	struct srv_place_loc seen = { .nodes = NULL };
	struct vol_create c;
	bool validate, throughput_given;
	int rc;

	if ((rc = srv_create_input(req, "volumeId", api_volume_fields, "volume", api_volume_check, &id,
				   &validate, &doc)) != AQ_OK)
		return rc;
	vol_name(req, id, name, sizeof(name), parent, sizeof(parent));
	ut_clock_now_text(now, sizeof(now));
	json_object_set_new(doc, "name", json_string(name));
	json_object_set_new(doc, "createTime", json_string(now));
	json_object_set_new(doc, "state", json_string("CREATING"));
	api_json_set_int64(doc, "usedGib", 0);
	api_json_set_int64(doc, "coldTierSizeGib", 0);
	api_json_set_int64(doc, "hotTierSizeUsedGib", 0);
	if ((rc = api_volume_check_supported(doc, &req->msg)) != AQ_OK)
		goto out;
	throughput_given = json_object_get(doc, "throughputMibps") != NULL;
	if (validate) {
		if ((rc = db_begin(req->db)) != AQ_OK ||
		    (rc = vol_create_check(req, parent, doc, throughput_given, &pool, &loc, &seen)) != AQ_OK)
			goto out;
		json_object_set_new(doc, "@type", json_string(VOL_TYPE));
		*resp = srv_op_preview(parent, name, "create", doc);
		goto out;
	}
	c = (struct vol_create){ .req = req, .parent = parent, .name = name, .in = doc,
				 .throughput_given = throughput_given };
	rc = db_group_run(req->db, DB_GROUP_API, vol_create_body, &c);
	if (c.unplaced && (rc == AQ_EEXHAUSTED || rc == AQ_EUNAVAIL))
		rc = vol_unplaced(req, parent, name, "create", &c.why, resp);
	else if (rc == AQ_OK) {
		vol_answer(req, c.op, c.node, resp);
		c.op = NULL;
	}
	json_decref(c.op);
out:
	db_rollback(req->db);
	srv_place_loc_cleanup(&seen);
	json_decref(doc);
	json_decref(pool);
	json_decref(loc);
	return rc;
}

int srv_h_volume_get(struct srv_req *req, json_t **resp)
{
	char parent[600], name[700];
	json_t *doc = NULL;
	int rc;

	vol_name(req, NULL, name, sizeof(name), parent, sizeof(parent));
	if ((rc = vol_load(req, name, &doc)) != AQ_OK)
		return rc;
	*resp = doc;
	return AQ_OK;
}

int srv_h_volume_list(struct srv_req *req, json_t **resp)
{
	return srv_list_answer(req, "volume", "volumes", resp);
}

/* A volume moves only between PREMIUM and EXTREME pools (GCNV). */
static int vol_move_ok(struct srv_req *req, const json_t *from, const json_t *to)
{
	const char *a = api_json_str(from, "serviceLevel", ""), *b = api_json_str(to, "serviceLevel", "");
	bool pa = strcmp(a, "PREMIUM") == 0 || strcmp(a, "EXTREME") == 0;
	bool pb = strcmp(b, "PREMIUM") == 0 || strcmp(b, "EXTREME") == 0;

	if (!pa || !pb)
		return aq_fail(&req->msg, AQ_EINVAL, "a volume can move only between PREMIUM and EXTREME pools (from %s to %s)", a, b);
	return AQ_OK;
}

int srv_h_volume_patch(struct srv_req *req, json_t **resp)
{
	struct api_mask_path paths[API_MASK_MAX];
	char parent[600], name[700];
	json_t *old = NULL, *patch = NULL, *doc = NULL, *pool = NULL, *oldpool = NULL, *out = NULL, *given = NULL;
	bool validate, tput_given = false;
	int npaths, rc;

	if ((rc = srv_patch_input(req, api_volume_fields, "Volume", "volume", &validate, paths, &npaths, &patch)) != AQ_OK)
		return rc;
	for (int i = 0; i < npaths; i++)
		if (strcmp(paths[i].camel, "throughputMibps") == 0)
			tput_given = json_object_get(patch, "throughputMibps") != NULL;
	vol_name(req, NULL, name, sizeof(name), parent, sizeof(parent));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = vol_load(req, name, &old)) != AQ_OK ||
	    (rc = vol_idle(req, old, "update")) != AQ_OK)
		goto out;
	/* what this request sets (not what an older volume stored) must exist */
	if ((rc = api_mask_patch(old, patch, paths, npaths, &doc, &given)) != AQ_OK)
		goto out;
	if ((rc = api_volume_check_supported(given, &req->msg)) != AQ_OK)
		goto out;
	if (json_object_get(old, "tieringPolicy") && !json_object_get(doc, "tieringPolicy")) {
		rc = aq_fail(&req->msg, AQ_EINVAL, "tiering cannot be switched off once enabled; set tieringPolicy.tierAction to PAUSED instead");
		goto out;
	}
	if ((rc = api_volume_check(&req->srv->cfg.math, doc, &req->msg)) != AQ_OK ||
	    (rc = srv_bconfig_check(req->db, parent, doc, &req->msg)) != AQ_OK ||
	    (rc = srv_backup_volume_chain(req->db, doc)) != AQ_OK ||
	    (rc = vol_pool(req, doc, &pool)) != AQ_OK)
		goto out;
	if (strcmp(api_volume_pool_id(doc), api_volume_pool_id(old)) != 0) {
		if ((rc = vol_pool(req, old, &oldpool)) != AQ_OK || (rc = vol_move_ok(req, oldpool, pool)) != AQ_OK)
			goto out;
	}
	/* In MANUAL pools an unchanged volume keeps its figure; elsewhere the
	 * stored limit is derived, so drop it before the check recomputes it. */
	if ((rc = vol_fit(req, pool, doc, old, tput_given, NULL)) != AQ_OK ||
	    (rc = vol_shelf_room(req, name, doc, old)) != AQ_OK)
		goto out;
	out = json_deep_copy(doc);
	json_object_set_new(out, "@type", json_string(VOL_TYPE));
	if (validate) {
		*resp = srv_op_preview(parent, name, "update", out);
		goto out;
	}
	json_object_set_new(doc, "state", json_string("UPDATING"));
	if ((rc = db_put(req->db, "volume", parent, name, doc, false)) != AQ_OK ||
	    (rc = vol_pending(req, parent, name, doc, "update", resp)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	json_decref(old);
	json_decref(patch);
	json_decref(doc);
	json_decref(pool);
	json_decref(oldpool);
	json_decref(out);
	json_decref(given);
	return rc;
}

static bool vol_restricted(const json_t *vol, const char *action)
{
	json_t *a;
	size_t i;

	json_array_foreach(json_object_get(vol, "restrictedActions"), i, a)
		if (strcmp(json_string_value(a), action) == 0)
			return true;
	return false;
}

int srv_h_volume_delete(struct srv_req *req, json_t **resp)
{
	char parent[600], name[700];
	json_t *old = NULL;
	bool force;
	int rc;

	if ((rc = srv_query_bool(req, "force", false, &force)) != AQ_OK)
		return rc;
	vol_name(req, NULL, name, sizeof(name), parent, sizeof(parent));
	if ((rc = db_begin(req->db)) != AQ_OK || (rc = vol_load(req, name, &old)) != AQ_OK)
		goto out;
	if ((rc = vol_idle(req, old, "delete")) != AQ_OK)
		goto out;
	if (vol_restricted(old, "DELETE")) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "volume \"%s\" has restrictedActions DELETE: it cannot be deleted; remove DELETE from restrictedActions first (updateMask=restrictedActions)",
			     name);
		goto out;
	}
	if ((rc = srv_backup_volume_busy(req->db, name, &req->msg)) != AQ_OK ||
	    (rc = srv_snapshot_volume_delete(req->db, old, force, &req->msg)) != AQ_OK)
		goto out;
	json_object_set_new(old, "state", json_string("DELETING"));
	if ((rc = db_put(req->db, "volume", parent, name, old, false)) != AQ_OK ||
	    (rc = vol_pending(req, parent, name, old, "delete", resp)) != AQ_OK)
		goto out;
out:
	db_rollback(req->db);
	json_decref(old);
	return rc;
}

int srv_volume_cancel_create(struct srv_req *req, const char *volume, const char *op)
{
	char pname[800];
	json_t *pl = NULL;
	int rc;

	snprintf(pname, sizeof(pname), "placements/%s", volume);
	if ((rc = db_get(req->db, pname, &pl)) != AQ_OK && rc != AQ_ENOENT)
		goto out;
	if (rc == AQ_ENOENT || strcmp(api_json_str(pl, "op", ""), op) != 0 ||
	    strcmp(api_json_str(pl, "action", ""), "create") != 0) {
		rc = aq_fail(&req->msg, AQ_EPRECOND, "operation %s no longer runs the create of volume \"%s\"; nothing to cancel",
			     op, volume);
		goto out;
	}
	json_object_set_new(pl, "op", json_string(""));
	json_object_set_new(pl, "action", json_string("delete"));
	json_object_set_new(pl, "pendingGeneration", json_integer(0));
	if ((rc = db_delete(req->db, volume)) != AQ_OK && rc != AQ_ENOENT)
		goto out;
	rc = db_put(req->db, "placement", api_json_str(pl, "node", ""), pname, pl, false);
out:
	json_decref(pl);
	return rc;
}
