/* Unit tests for volume creates (server/srv_volume.c) over a real
 * database (issue 22, creates that scale): a create costs a bounded number
 * of statements and round trips (db_sync_stats' counts; on PostgreSQL the
 * round trips under the writer mutex are its price; tests/server/
 * test_srv_pg.sh runs this suite there), and a name still being
 * deleted is refused (AQ_EBUSY) with nothing stored; the location a create
 * reads once serves its service address and its shelves' room (every
 * project's pools of the location, no other location's); creates that
 * queue while
 * another writer holds the database commit together, in one group
 * transaction of the api lane (db_group_run), each answered with its own
 * operation; and one create of such a group that is refused (its share
 * name taken) undoes only itself, the others are stored. */
#include "server/srv_volume.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_pool.h"
#include "server/srv_req.h"
#include "tests/lib/aqt.h"
#include "tests/server/srv_test.h"

#define VT_THREADS 4

static struct srv srv;
static struct db *db;

/* A request as the router hands it: parent projects/p/locations/east, one
 * query parameter (the new resource's id), a parsed body (taken). */
static void request(struct srv_req *req, struct db *d, const char *idparam, const char *id, json_t *body)
{
	memset(req, 0, sizeof(*req));
	req->srv = &srv;
	req->db = d;
	req->auth.role = SRV_ROLE_ADMIN;
	snprintf(req->params[0], sizeof(req->params[0]), "p");
	snprintf(req->params[1], sizeof(req->params[1]), "east");
	req->nparams = 2;
	req->qkey[0] = strdup(idparam);
	req->qval[0] = strdup(id);
	req->nquery = 1;
	req->body = body;
}

static void request_free(struct srv_req *req)
{
	free(req->qkey[0]);
	free(req->qval[0]);
	json_decref(req->body);
}

static json_t *vol_body(const char *share, const char *gib)
{
	return json_pack("{s:s,s:s,s:s,s:[s]}", "shareName", share, "storagePool", "pool1", "capacityGib", gib,
			 "protocols", "NFSV3");
}

/* Create volume id (share name share, gib GiB) on connection d: the
 * handler's code. */
static int create_gib(struct db *d, const char *id, const char *share, const char *gib, json_t **resp, char *msg,
		      size_t cap)
{
	struct srv_req req;
	int rc;

	request(&req, d, "volumeId", id, vol_body(share, gib));
	*resp = NULL;
	rc = srv_h_volume_create(&req, resp);
	if (msg)
		snprintf(msg, cap, "%s", req.msg.text);
	request_free(&req);
	return rc;
}

static int create(struct db *d, const char *id, const char *share, json_t **resp, char *msg, size_t cap)
{
	return create_gib(d, id, share, "100", resp, msg, cap);
}

static void setup(void)
{
	struct srv_req req;
	json_t *resp = NULL;
	const char *loc = "locations/east";

	db = srv_test_db_open();
	memset(&srv, 0, sizeof(srv));
	srv_cfg_defaults(&srv.cfg);
	srv_test_put(db, "project", "", "projects/p", json_pack("{s:s}", "name", "projects/p"));
	srv_test_put(db, "location", "", loc, json_pack("{s:s,s:s}", "name", loc, "locationId", "east"));
	srv_test_put(db, "node", loc, "nodes/n1",
		     json_pack("{s:s,s:s,s:s,s:f}", "name", "nodes/n1", "location", "east", "state", "READY",
			       "throughputCeilingMibps", 1e6));
	srv_test_put(db, "shelf", loc, "shelves/s1", json_pack("{s:s,s:f}", "name", "shelves/s1", "readThroughputMibps", 1e6));
	request(&req, db, "storagePoolId", "pool1",
		json_pack("{s:s,s:s,s:s}", "network", "projects/vpc-host/global/networks/default", "serviceLevel", "PREMIUM",
			  "capacityGib", "10485760"));
	ck_assert_msg(srv_h_pool_create(&req, &resp) == AQ_OK, "pool: %s", req.msg.text);
	request_free(&req);
	json_decref(resp);
}

static void teardown(void)
{
	srv_test_db_close(db);
}

/* Statements of one create, counted by the db layer, all of them under the
 * writer mutex but the last: BEGIN; the project, location and pool in one
 * read; the share name's count; the location's placement version (its
 * nodes and shelves, in one list, only when that changed since this
 * process read them: not here, the first create read them), and the usage
 * counters of its pools and nodes (srv_place_loc_read:
 * the pool's room, the shelves' room and placement all read these, once); the
 * volume and operation INSERTs; the placement INSERT (which also finds a
 * name still being deleted; its service address comes from the location
 * read first); COMMIT; then the operation read back for the answer.
 * Round trips (waits for the engine; on PostgreSQL each one to the server):
 * the four reads are one (db_reads, a pipeline) and the three INSERTs one
 * (db_puts_send, a pipeline), so 5 of the 10, 4 under the writer mutex
 * (BEGIN and COMMIT shared by a group of creates); on SQLite every
 * statement is one. */
#define VT_CREATE_STMTS 10
#define VT_CREATE_TRIPS_PG 5

START_TEST(create_statements)
{
	struct db_sync_stats s0, s1;
	json_t *resp = NULL;
	char msg[512];

	/* a first create, so that nothing of a cold start counts below */
	ck_assert_msg(create(db, "v0", "v0", &resp, msg, sizeof(msg)) == AQ_OK, "%s", msg);
	json_decref(resp);
	db_sync_stats(&s0);
	ck_assert_msg(create(db, "v1", "v1", &resp, msg, sizeof(msg)) == AQ_OK, "%s", msg);
	db_sync_stats(&s1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(resp, "metadata"), "target")),
			 "projects/p/locations/east/volumes/v1");
	json_decref(resp);
	ck_assert_msg(s1.statements - s0.statements <= VT_CREATE_STMTS, "one create ran %llu statements (at most %d)",
		      (unsigned long long)(s1.statements - s0.statements), VT_CREATE_STMTS);
	ck_assert_uint_eq(s1.commits - s0.commits, 1);
	if (strcmp(db_engine_name(db), "postgres") == 0)
		ck_assert_msg(s1.round_trips - s0.round_trips <= VT_CREATE_TRIPS_PG,
			      "one create waited for PostgreSQL %llu times (at most %d)",
			      (unsigned long long)(s1.round_trips - s0.round_trips), VT_CREATE_TRIPS_PG);
	else
		ck_assert_uint_eq(s1.round_trips - s0.round_trips, s1.statements - s0.statements);
}
END_TEST

/* The operations of the test's location. */
static size_t ops_count(void)
{
	json_t *items = NULL;
	size_t n;

	ck_assert_int_eq(db_list_all(db, &(struct db_query){ .kind = "operation", .parent = "projects/p/locations/east" },
				     &items, NULL),
			 AQ_OK);
	n = json_array_size(items);
	json_decref(items);
	return n;
}

/* A name whose earlier volume's placement is still there (its node still
 * deleting the data) is refused, retryable, and nothing is stored: the
 * placement is the last of the create's three inserts sent together
 * (db_puts_send), so the volume's and the operation's, written before it
 * fails, are rolled back with it. */
START_TEST(create_of_a_name_still_deleting)
{
	const char *vn = "projects/p/locations/east/volumes/gone";
	json_t *resp = NULL, *doc = NULL;
	size_t ops = ops_count();
	char msg[512];

	srv_test_put(db, "placement", "nodes/n1", "placements/projects/p/locations/east/volumes/gone",
		     json_pack("{s:s,s:s,s:f,s:s}", "volume", vn, "node", "nodes/n1", "mibps", 0.0, "action", "delete"));
	ck_assert_int_eq(create(db, "gone", "gone", &resp, msg, sizeof(msg)), AQ_EBUSY);
	ck_assert_msg(strstr(msg, "still deleting its data"), "%s", msg);
	ck_assert_ptr_null(resp);
	ck_assert_int_eq(db_get(db, vn, &doc), AQ_ENOENT);
	ck_assert_uint_eq(ops_count(), ops);
}
END_TEST

/* A volume id in use (another share name, so the checks pass) fails the
 * first of the three inserts sent together: refused as existing, and the
 * operation and placement sent after it are rolled back; the volume
 * stays as it was. */
START_TEST(create_of_an_existing_id)
{
	const char *vn = "projects/p/locations/east/volumes/dup";
	json_t *resp = NULL, *doc = NULL;
	size_t ops;
	char msg[512];

	ck_assert_msg(create(db, "dup", "d1", &resp, msg, sizeof(msg)) == AQ_OK, "%s", msg);
	json_decref(resp);
	ops = ops_count();
	ck_assert_int_eq(create(db, "dup", "d2", &resp, msg, sizeof(msg)), AQ_EEXIST);
	ck_assert_msg(strstr(msg, "already exists"), "%s", msg);
	ck_assert_ptr_null(resp);
	ck_assert_uint_eq(ops_count(), ops);
	ck_assert_int_eq(db_get(db, vn, &doc), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "shareName")), "d1");
	json_decref(doc);
}
END_TEST

/* The service address of a location with a range comes from the location
 * as the create read it with its parents (no read of its own): each
 * create's placement holds the next free one. */
START_TEST(create_takes_a_service_address)
{
	static const char *const want[] = { "10.99.0.33", "10.99.0.34" };
	json_t *loc, *resp = NULL, *pl = NULL;
	char msg[512], id[8], pname[128];

	loc = json_pack("{s:s,s:s,s:{s:s}}", "name", "locations/east", "locationId", "east", "serviceAddresses",
			"range", "10.99.0.32/28");
	ck_assert_int_eq(db_put(db, "location", "", "locations/east", loc, false), AQ_OK);
	json_decref(loc);
	for (int i = 0; i < 2; i++) {
		snprintf(id, sizeof(id), "a%d", i);
		ck_assert_msg(create(db, id, id, &resp, msg, sizeof(msg)) == AQ_OK, "%s", msg);
		json_decref(resp);
		snprintf(pname, sizeof(pname), "placements/projects/p/locations/east/volumes/%s", id);
		ck_assert_int_eq(db_get(db, pname, &pl), AQ_OK);
		ck_assert_str_eq(api_json_str(json_object_get(pl, "serviceAddress"), "address", "(none)"), want[i]);
		json_decref(pl);
	}
}
END_TEST

/* A volume of location loc in project proj, pool pool, gib GiB, stored as
 * a handler would (the usage triggers count it in its pool). */
static void put_volume(const char *proj, const char *loc, const char *pool, const char *id, const char *gib)
{
	char parent[128], name[200];

	snprintf(parent, sizeof(parent), "projects/%s/locations/%s", proj, loc);
	snprintf(name, sizeof(name), "%s/volumes/%s", parent, id);
	srv_test_put(db, "volume", parent, name,
		     json_pack("{s:s,s:s,s:s,s:s}", "name", name, "storagePool", pool, "capacityGib", gib, "state", "READY"));
}

/* The shelves' room of a create counts every pool of its location, in
 * any project, and nothing of another location. */
START_TEST(create_shelf_room_counts_the_location_only)
{
	json_t *resp = NULL, *doc = NULL, *shelf;
	char msg[512];

	shelf = json_pack("{s:s,s:f,s:I}", "name", "shelves/s1", "readThroughputMibps", 1e6, "capacityGib",
			  (json_int_t)1000);
	ck_assert_int_eq(db_put(db, "shelf", "locations/east", "shelves/s1", shelf, false), AQ_OK);
	json_decref(shelf);
	put_volume("q", "east", "qpool", "big", "600");   /* counts: another project, this location */
	put_volume("p", "west", "pool1", "huge", "5000"); /* does not: another location */
	ck_assert_msg(create_gib(db, "fits", "fits", "300", &resp, msg, sizeof(msg)) == AQ_OK, "%s", msg);
	json_decref(resp);
	resp = NULL;
	ck_assert_int_eq(create_gib(db, "over", "over", "200", &resp, msg, sizeof(msg)), AQ_EEXHAUSTED);
	ck_assert_msg(strstr(msg, "shelf capacity exhausted: location east's shelves (s1) hold 1000 GiB with 100 GiB free"),
		      "%s", msg);
	ck_assert_ptr_null(resp);
	ck_assert_int_eq(db_get(db, "projects/p/locations/east/volumes/over", &doc), AQ_ENOENT);
}
END_TEST

/* One create per thread, on its own connection (a worker's). */
struct vt_worker {
	pthread_t th;
	struct db *d; /* opened before the writer is held: db_open migrates under it */
	char id[16], share[16];
	int rc;
	char msg[512];
	char op_target[128];
};

static void *vt_worker(void *arg)
{
	struct vt_worker *w = arg;
	json_t *resp = NULL;

	w->rc = create(w->d, w->id, w->share, &resp, w->msg, sizeof(w->msg));
	snprintf(w->op_target, sizeof(w->op_target), "%s",
		 json_string_value(json_object_get(json_object_get(resp, "metadata"), "target")) ?: "");
	json_decref(resp);
	return NULL;
}

/* VT_THREADS creates queued behind a writer (another connection's open
 * transaction), with share names shares[i]; returns once they finished.
 * g0, g1: group counters before and after; c0, c1: commits around the release. */
static void vt_run_queued(struct vt_worker *w, const char *const *shares, struct db_group_stats *g0,
			  struct db_group_stats *g1, struct db_sync_stats *c0, struct db_sync_stats *c1)
{
	struct db *holder = NULL;
	aq_msg m = { .text = "" };
	struct db_group_stats g;
	int i;

	ck_assert_msg(db_open(srv_test_db_path(), &holder, &m) == AQ_OK, "%s", m.text);
	for (i = 0; i < VT_THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		snprintf(w[i].id, sizeof(w[i].id), "q%d", i);
		snprintf(w[i].share, sizeof(w[i].share), "%s", shares[i]);
		ck_assert_msg(db_open(srv_test_db_path(), &w[i].d, &m) == AQ_OK, "%s", m.text);
	}
	db_group_limits(0, 60ull * 1000000000ull); /* no group cut by the clock on a loaded machine */
	db_group_stats(g0);
	ck_assert_int_eq(db_begin(holder), AQ_OK); /* the writer mutex, held */
	for (i = 0; i < VT_THREADS; i++)
		ck_assert_int_eq(pthread_create(&w[i].th, NULL, vt_worker, &w[i]), 0);
	/* every create waits in the api lane: none can begin meanwhile */
	for (i = 0; i < 1000; i++) {
		db_group_stats(&g);
		if (g.queued == VT_THREADS)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000 }, NULL);
	}
	ck_assert_msg(g.queued == VT_THREADS, "creates queued in a group lane behind the writer: %llu of %d",
		      (unsigned long long)g.queued, VT_THREADS);
	db_sync_stats(c0);
	db_rollback(holder);
	for (i = 0; i < VT_THREADS; i++) {
		pthread_join(w[i].th, NULL);
		db_close(w[i].d);
	}
	db_sync_stats(c1);
	db_group_stats(g1);
	db_group_limits(0, 0);
	db_close(holder);
}

START_TEST(creates_share_a_commit)
{
	static const char *const shares[VT_THREADS] = { "s0", "s1", "s2", "s3" };
	struct vt_worker w[VT_THREADS];
	struct db_group_stats g0, g1;
	struct db_sync_stats c0, c1;
	char name[128];
	json_t *doc = NULL;

	vt_run_queued(w, shares, &g0, &g1, &c0, &c1);
	for (int i = 0; i < VT_THREADS; i++) {
		ck_assert_msg(w[i].rc == AQ_OK, "create %s: %s (%s)", w[i].id, aq_err_str(w[i].rc), w[i].msg);
		snprintf(name, sizeof(name), "projects/p/locations/east/volumes/%s", w[i].id);
		ck_assert_str_eq(w[i].op_target, name); /* its own operation */
		ck_assert_int_eq(db_get(db, name, &doc), AQ_OK);
		json_decref(doc);
	}
	/* one transaction, one commit, for the four */
	ck_assert_uint_eq(g1.lane[DB_GROUP_API].groups - g0.lane[DB_GROUP_API].groups, 1);
	ck_assert_uint_eq(g1.lane[DB_GROUP_API].items - g0.lane[DB_GROUP_API].items, VT_THREADS);
	ck_assert_uint_eq(c1.commits - c0.commits, 1);
	ck_assert_uint_eq(g1.alone - g0.alone, 0);
}
END_TEST

START_TEST(refused_create_undoes_only_itself)
{
	/* q2's share name is v-taken's: refused; the group runs again alone */
	static const char *const shares[VT_THREADS] = { "s0", "s1", "taken", "s3" };
	struct vt_worker w[VT_THREADS];
	struct db_group_stats g0, g1;
	struct db_sync_stats c0, c1;
	char name[128];
	json_t *resp = NULL, *doc = NULL;
	char msg[512];

	ck_assert_msg(create(db, "v-taken", "taken", &resp, msg, sizeof(msg)) == AQ_OK, "%s", msg);
	json_decref(resp);
	vt_run_queued(w, shares, &g0, &g1, &c0, &c1);
	for (int i = 0; i < VT_THREADS; i++) {
		snprintf(name, sizeof(name), "projects/p/locations/east/volumes/%s", w[i].id);
		if (i == 2) {
			ck_assert_int_eq(w[i].rc, AQ_EEXIST);
			ck_assert_msg(strstr(w[i].msg, "shareName \"taken\" is already taken"), "%s", w[i].msg);
			ck_assert_int_eq(db_get(db, name, &doc), AQ_ENOENT);
			continue;
		}
		ck_assert_msg(w[i].rc == AQ_OK, "create %s: %s (%s)", w[i].id, aq_err_str(w[i].rc), w[i].msg);
		ck_assert_int_eq(db_get(db, name, &doc), AQ_OK);
		json_decref(doc);
	}
	/* all went through the api lane; the bodies that shared the refused
	 * one's group (how many depends on arrival order) ran again alone */
	ck_assert_uint_ge(g1.lane[DB_GROUP_API].items - g0.lane[DB_GROUP_API].items, VT_THREADS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_volume");
	TCase *tc = tcase_create("srv_volume");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, create_statements);
	tcase_add_test(tc, create_of_a_name_still_deleting);
	tcase_add_test(tc, create_of_an_existing_id);
	tcase_add_test(tc, create_takes_a_service_address);
	tcase_add_test(tc, create_shelf_room_counts_the_location_only);
	tcase_add_test(tc, creates_share_a_commit);
	tcase_add_test(tc, refused_create_undoes_only_itself);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
