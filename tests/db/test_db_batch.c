/* Unit tests for db.h's batch reads, on either engine: db_get_many gives
 * the documents of the names that exist (missing ones left out, an empty
 * list giving an empty object, a name's own uncommitted write inside its
 * transaction) and db_parents_with the parents that have a resource of a
 * kind. The reconciler builds a node's intent and the status handler reads
 * a report's volumes with them (issue 22). db_reads gives what each of its
 * reads' own calls gives, in one round trip on PostgreSQL, and fails as a
 * whole, leaving the connection usable. db_puts_send writes a
 * transaction's held inserts in one round trip on PostgreSQL (one each on
 * SQLite), and a failed one (a name that exists, in the middle) is
 * reported by its index and undone with the rest by the rollback. By default on a temporary
 * SQLite file; with AQ_TEST_PG_URL set (tests/db/test_db_pg.sh) on that
 * PostgreSQL database. */
#include "db/db.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"
#include "tests/lib/aqt_db.h"

static char db_path[1024];
static const char *pg_url;
static struct db *db;

static void setup(void)
{
	aqt_db_open(pg_url, "batch", db_path, sizeof(db_path), &db);
}

static void teardown(void)
{
	aqt_db_close(pg_url, db_path, db);
}

static void put(const char *kind, const char *parent, const char *name, int x)
{
	json_t *doc = json_pack("{s:s,s:i}", "name", name, "x", x);

	ck_assert_int_eq(db_put(db, kind, parent, name, doc, true), AQ_OK);
	json_decref(doc);
}

/* Put a document (taken) of kind under parent. */
static void put_doc(const char *kind, const char *parent, const char *name, json_t *doc)
{
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(db_put(db, kind, parent, name, doc, true), AQ_OK);
	json_decref(doc);
}

START_TEST(test_get_many)
{
	json_t *names = json_pack("[s,s,s]", "p/volumes/a", "p/volumes/missing", "p/volumes/c"), *docs = NULL;

	put("volume", "p", "p/volumes/a", 1);
	put("volume", "p", "p/volumes/b", 2);
	put("volume", "p", "p/volumes/c", 3);
	ck_assert_int_eq(db_get_many(db, names, &docs), AQ_OK);
	ck_assert_uint_eq(json_object_size(docs), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(docs, "p/volumes/a"), "x")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(docs, "p/volumes/c"), "x")), 3);
	ck_assert_ptr_null(json_object_get(docs, "p/volumes/b")); /* not asked for */
	json_decref(docs);
	/* its own transaction's write is seen */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	put("volume", "p", "p/volumes/missing", 9);
	ck_assert_int_eq(db_get_many(db, names, &docs), AQ_OK);
	ck_assert_uint_eq(json_object_size(docs), 3);
	json_decref(docs);
	db_rollback(db);
	json_decref(names);
	names = json_array();
	ck_assert_int_eq(db_get_many(db, names, &docs), AQ_OK);
	ck_assert_uint_eq(json_object_size(docs), 0);
	json_decref(docs);
	json_decref(names);
}
END_TEST

START_TEST(test_parents_with)
{
	json_t *parents = json_pack("[s,s,s]", "p/volumes/a", "p/volumes/b", "p/volumes/c"), *found = NULL;

	put("snapref", "p/volumes/a", "snaprefs/a/1", 1);
	put("snapref", "p/volumes/a", "snaprefs/a/2", 2);
	put("snapref", "p/volumes/z", "snaprefs/z/1", 1); /* not asked for */
	put("other", "p/volumes/b", "others/b", 1);       /* another kind */
	ck_assert_int_eq(db_parents_with(db, "snapref", parents, &found), AQ_OK);
	ck_assert_uint_eq(json_object_size(found), 1);
	ck_assert(json_is_true(json_object_get(found, "p/volumes/a")));
	json_decref(found);
	json_decref(parents);
}
END_TEST

/* db_list_fields: the named fields of each row of kind under parent, in
 * name order, null where a document lacks one; bad field names refused. */
START_TEST(test_list_fields)
{
	static const char *const f[] = { "x", "state", "nope" };
	static const char *const bad[] = { "x", "a.b" };
	json_t *items = NULL, *doc = json_pack("{s:s,s:i,s:{s:s}}", "state", "READY", "x", 7, "deep", "k", "v");

	ck_assert_int_eq(db_put(db, "node", "locations/b", "nodes/b2", doc, true), AQ_OK);
	json_decref(doc);
	put("node", "locations/b", "nodes/b1", 3);
	put("node", "locations/c", "nodes/c1", 4);
	ck_assert_int_eq(db_list_fields(db, "node", "locations/b", f, 3, &items), AQ_OK);
	ck_assert_int_eq(json_array_size(items), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "name")), "nodes/b1");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(items, 0), "x")), 3);
	ck_assert(json_is_null(json_object_get(json_array_get(items, 0), "state")));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 1), "state")), "READY");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(items, 1), "x")), 7);
	ck_assert(json_is_null(json_object_get(json_array_get(items, 1), "nope")));
	ck_assert_ptr_null(json_object_get(json_array_get(items, 1), "deep"));
	json_decref(items);
	items = NULL;
	ck_assert_int_eq(db_list_fields(db, "node", "locations/b", bad, 2, &items), AQ_EINVAL);
	ck_assert_int_eq(db_list_fields(db, "node", "locations/b", f, 0, &items), AQ_EINVAL);
	ck_assert_ptr_null(items);
}
END_TEST

/* db_list_fields2: the rows of both kinds under parent in one list, in
 * name order; neither a third kind there nor the kinds elsewhere. */
START_TEST(test_list_fields2)
{
	static const char *const f[] = { "x" };
	json_t *items = NULL;
	char seen[128] = "";
	size_t i;
	json_t *it;

	put("shelf", "locations/b", "shelves/s1", 1);
	put("node", "locations/b", "nodes/b1", 2);
	put("pool", "locations/b", "pools/p1", 3);
	put("node", "locations/c", "nodes/c1", 4);
	put("shelf", "locations/c", "shelves/s2", 5);
	ck_assert_int_eq(db_list_fields2(db, "node", "shelf", "locations/b", f, 1, &items), AQ_OK);
	json_array_foreach(items, i, it) {
		size_t n = strlen(seen);

		snprintf(seen + n, sizeof(seen) - n, "%s=%lld;", json_string_value(json_object_get(it, "name")),
			 (long long)json_integer_value(json_object_get(it, "x")));
	}
	ck_assert_str_eq(seen, "nodes/b1=2;shelves/s1=1;");
	json_decref(items);
}
END_TEST

/* More distinct statements than the engine keeps prepared (SQLite's cache
 * holds 64): the ones past it are prepared, run and finalized each time,
 * and give the same answers. */
START_TEST(test_many_statements)
{
	char names[100][8];
	const char *f[1];
	json_t *items = NULL;

	put("node", "locations/b", "nodes/b1", 3);
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		f[0] = i == 99 ? "x" : names[i];
		ck_assert_int_eq(db_list_fields(db, "node", "locations/b", f, 1, &items), AQ_OK);
		ck_assert_int_eq(json_array_size(items), 1);
		json_decref(items);
		items = NULL;
	}
	f[0] = "x";
	ck_assert_int_eq(db_list_fields(db, "node", "locations/b", f, 1, &items), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(items, 0), "x")), 3);
	json_decref(items);
}
END_TEST

/* db_reads: a volume create's four reads at once (on PostgreSQL one
 * pipeline, one round trip). */
static void use_row(void *arg, const char *name, const struct db_usage *u)
{
	json_object_set_new(arg, name, json_pack("[If]", (json_int_t)u->count, u->capacity_gib + u->mibps));
}

static void reads_fill(void)
{
	put("project", "", "projects/p", 0);
	put("project", "", "projects/q", 0);
	put("location", "", "locations/east", 0);
	put_doc("volume", "projects/p/locations/east", "projects/p/locations/east/volumes/a",
		json_pack("{s:s,s:s,s:i}", "storagePool", "pool1", "shareName", "s1", "capacityGib", 10));
	put_doc("volume", "projects/q/locations/west", "projects/q/locations/west/volumes/b",
		json_pack("{s:s,s:s,s:i}", "storagePool", "pool9", "shareName", "s1", "capacityGib", 99));
	put_doc("node", "locations/east", "nodes/n1", json_pack("{s:s,s:i}", "state", "READY", "capacityGib", 1));
	put_doc("shelf", "locations/east", "shelves/s1", json_pack("{s:i}", "capacityGib", 100));
	put_doc("node", "locations/west", "nodes/w1", json_pack("{s:s}", "state", "READY"));
	put_doc("placement", "nodes/n1", "placements/projects/p/locations/east/volumes/a",
		json_pack("{s:s,s:s,s:f}", "volume", "projects/p/locations/east/volumes/a", "node", "nodes/n1", "mibps", 5.0));
}

/* db_reads of everything in r's inputs against each read's own call:
 * the same answers, and on PostgreSQL one round trip for all four. */
static void reads_match(const json_t *names)
{
	static const char *const f[] = { "state", "capacityGib" };
	struct db_reads r = { .names = names, .share_loc = "east", .share = "s1", .kind = "node", .kind2 = "shelf",
			      .parent = "locations/east", .fields = f, .nfields = 2, .usage_loc = "east",
			      .usage_fn = use_row };
	struct db_sync_stats s0, s1;
	json_t *docs = NULL, *rows = NULL, *use = json_object(), *use1 = json_object();
	int64_t n = -1;

	r.usage_arg = use;
	db_sync_stats(&s0);
	ck_assert_int_eq(db_reads(db, &r), AQ_OK);
	db_sync_stats(&s1);
	ck_assert_uint_eq(s1.statements - s0.statements, 4);
	ck_assert_uint_eq(s1.round_trips - s0.round_trips, pg_url ? 1 : 4);
	ck_assert_int_eq(db_get_many(db, names, &docs), AQ_OK);
	ck_assert(json_equal(r.docs, docs));
	ck_assert_int_eq(db_volume_share_count(db, "east", "s1", &n), AQ_OK);
	ck_assert_int_eq(r.share_n, n);
	ck_assert_int_eq(db_list_fields2(db, "node", "shelf", "locations/east", f, 2, &rows), AQ_OK);
	ck_assert(json_equal(r.rows, rows));
	ck_assert_int_eq(db_usage_location(db, "east", use_row, use1), AQ_OK);
	ck_assert(json_equal(use, use1));
	json_decref(docs);
	json_decref(rows);
	json_decref(use);
	json_decref(use1);
	json_decref(r.docs);
	json_decref(r.rows);
}

START_TEST(test_reads)
{
	json_t *names = json_pack("[s,s,s]", "projects/p", "locations/east", "projects/p/locations/east/storagePools/x");
	static const char *const f[] = { "state" };
	struct db_reads r = { .names = names };
	json_t *use = json_object();

	reads_fill();
	/* what a create reads, by hand: the parents, one volume with share
	 * s1 in east (not west's), a node and a shelf, pool1's and n1's counters */
	r.usage_arg = use;
	r.share_loc = "east";
	r.share = "s1";
	r.kind = "node";
	r.kind2 = "shelf";
	r.parent = "locations/east";
	r.fields = f;
	r.nfields = 1;
	r.usage_loc = "east";
	r.usage_fn = use_row;
	ck_assert_int_eq(db_reads(db, &r), AQ_OK);
	ck_assert_uint_eq(json_object_size(r.docs), 2);
	ck_assert_ptr_nonnull(json_object_get(r.docs, "locations/east"));
	ck_assert_int_eq(r.share_n, 1);
	ck_assert_int_eq(json_array_size(r.rows), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.rows, 0), "name")), "nodes/n1");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.rows, 0), "state")), "READY");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r.rows, 1), "name")), "shelves/s1");
	/* and the location's placement version (db_placever) */
	ck_assert_uint_eq(json_object_size(use), 3);
	ck_assert_ptr_nonnull(json_object_get(use, "placever/locations/east"));
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(use, "projects/p/locations/east/storagePools/pool1"), 0)), 1);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(use, "nodes/n1"), 0)), 1);
	json_decref(r.docs);
	json_decref(r.rows);
	json_decref(use);
	reads_match(names);
	/* inside a transaction: its own writes are read (a second s1 volume,
	 * counted in pool1), as each call alone would read them */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	put_doc("volume", "projects/q/locations/east", "projects/q/locations/east/volumes/c",
		json_pack("{s:s,s:s,s:i}", "storagePool", "projects/q/locations/east/storagePools/pool1", "shareName",
			  "s1", "capacityGib", 7));
	put_doc("shelf", "locations/east", "shelves/s2", json_pack("{s:i}", "capacityGib", 5));
	reads_match(names);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	json_decref(names);
}
END_TEST

/* Only the reads asked for are made; inputs a single call refuses are
 * refused before anything runs, with no output. */
START_TEST(test_reads_some_and_refused)
{
	static const char *const bad[] = { "a.b" };
	json_t *names = json_pack("[s]", "projects/p");
	struct db_reads r = { .names = names };
	struct db_sync_stats s0, s1;

	reads_fill();
	ck_assert_int_eq(db_reads(db, &r), AQ_OK);
	ck_assert_uint_eq(json_object_size(r.docs), 1);
	ck_assert_ptr_null(r.rows);
	ck_assert_int_eq(r.share_n, 0);
	json_decref(r.docs);
	r = (struct db_reads){ .names = names, .kind = "node", .kind2 = "shelf", .parent = "locations/east",
			       .fields = bad, .nfields = 1 };
	db_sync_stats(&s0);
	ck_assert_int_eq(db_reads(db, &r), AQ_EINVAL);
	r = (struct db_reads){ .names = names, .usage_loc = "ea/st", .usage_fn = use_row };
	ck_assert_int_eq(db_reads(db, &r), AQ_EINVAL);
	r = (struct db_reads){ .names = names, .share = "s1" }; /* no location */
	ck_assert_int_eq(db_reads(db, &r), AQ_EINVAL);
	db_sync_stats(&s1);
	ck_assert_uint_eq(s1.statements, s0.statements);
	ck_assert_ptr_null(r.docs);
	ck_assert_ptr_null(r.rows);
	json_decref(names);
}
END_TEST

/* A read the server refuses (PostgreSQL: a parameter that is not UTF-8)
 * fails the whole db_reads with no output and the transaction with it;
 * the connection comes out of its pipeline and serves the next
 * transaction. SQLite takes the bytes as they are. */
START_TEST(test_reads_failure)
{
	json_t *names = json_pack("[s]", "projects/p"), *doc = NULL;
	struct db_reads r = { .names = names, .share_loc = "east", .share = "s\xff" };

	reads_fill();
	ck_assert_int_eq(db_begin(db), AQ_OK);
	put("project", "", "projects/z", 0);
	ck_assert_int_eq(db_reads(db, &r), pg_url ? AQ_EIO : AQ_OK);
	if (pg_url) {
		ck_assert_ptr_null(r.docs);
		ck_assert_int_ne(db_commit(db), AQ_OK);
	}
	json_decref(r.docs);
	db_rollback(db);
	ck_assert_int_eq(db_get(db, "projects/z", &doc), AQ_ENOENT);
	r = (struct db_reads){ .names = names, .share_loc = "east", .share = "s1" };
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(db_reads(db, &r), AQ_OK);
	ck_assert_int_eq(r.share_n, 1);
	ck_assert_uint_eq(json_object_size(r.docs), 1);
	put("project", "", "projects/z", 0);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_int_eq(db_get(db, "projects/z", &doc), AQ_OK);
	json_decref(doc);
	json_decref(r.docs);
	json_decref(names);
}
END_TEST

/* Three inserts held, then sent: nothing is written before the send, one
 * round trip on PostgreSQL (a pipeline), the same three statements as
 * db_put on SQLite; committed, each is there as put. */
START_TEST(test_puts)
{
	struct db_sync_stats s0, s1;
	json_t *doc = NULL;
	int failed = 7;

	ck_assert_int_eq(db_puts_start(db), AQ_EINVAL); /* outside a transaction */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(db_puts_start(db), AQ_OK);
	ck_assert_int_eq(db_puts_start(db), AQ_EINVAL); /* one batch at a time */
	db_sync_stats(&s0);
	put("volume", "p", "p/volumes/a", 1);
	put("operation", "p", "p/operations/o", 2);
	put("placement", "nodes/n1", "placements/p/volumes/a", 3);
	db_sync_stats(&s1);
	ck_assert_uint_eq(s1.statements, s0.statements); /* held */
	ck_assert_int_eq(db_puts_send(db, &failed), AQ_OK);
	ck_assert_int_eq(failed, -1);
	db_sync_stats(&s1);
	ck_assert_uint_eq(s1.statements - s0.statements, 3);
	ck_assert_uint_eq(s1.round_trips - s0.round_trips, pg_url ? 1 : 3);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_int_eq(db_get(db, "p/volumes/a", &doc), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "x")), 1);
	json_decref(doc);
	ck_assert_int_eq(db_get(db, "placements/p/volumes/a", &doc), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "x")), 3);
	json_decref(doc);
	/* a commit sends what a batch still holds; a rollback drops it */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(db_puts_start(db), AQ_OK);
	put("volume", "p", "p/volumes/b", 4);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_int_eq(db_get(db, "p/volumes/b", &doc), AQ_OK);
	json_decref(doc);
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(db_puts_start(db), AQ_OK);
	put("volume", "p", "p/volumes/c", 5);
	db_rollback(db);
	ck_assert_int_eq(db_get(db, "p/volumes/c", &doc), AQ_ENOENT);
}
END_TEST

/* The second of three held inserts names a resource that exists: the
 * send fails with AQ_EEXIST at index 1, and the rollback undoes the first
 * and (on PostgreSQL, where it was sent too) the third; the existing one
 * is unchanged and the connection serves the next transaction. */
START_TEST(test_puts_failure)
{
	json_t *doc = NULL;
	int failed = -1;

	put("volume", "p", "p/volumes/b", 9);
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(db_puts_start(db), AQ_OK);
	put("volume", "p", "p/volumes/a", 1);
	put("volume", "p", "p/volumes/b", 2);
	put("placement", "nodes/n1", "placements/p/volumes/a", 3);
	ck_assert_int_eq(db_puts_send(db, &failed), AQ_EEXIST);
	ck_assert_int_eq(failed, 1);
	db_rollback(db);
	ck_assert_int_eq(db_get(db, "p/volumes/a", &doc), AQ_ENOENT);
	ck_assert_int_eq(db_get(db, "placements/p/volumes/a", &doc), AQ_ENOENT);
	ck_assert_int_eq(db_get(db, "p/volumes/b", &doc), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "x")), 9);
	json_decref(doc);
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(db_puts_start(db), AQ_OK);
	put("volume", "p", "p/volumes/a", 1);
	ck_assert_int_eq(db_puts_send(db, &failed), AQ_OK);
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_int_eq(db_get(db, "p/volumes/a", &doc), AQ_OK);
	json_decref(doc);
}
END_TEST

static Suite *batch_suite(void)
{
	Suite *s = suite_create("db_batch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_get_many);
	tcase_add_test(tc, test_parents_with);
	tcase_add_test(tc, test_list_fields);
	tcase_add_test(tc, test_list_fields2);
	tcase_add_test(tc, test_many_statements);
	tcase_add_test(tc, test_reads);
	tcase_add_test(tc, test_reads_some_and_refused);
	tcase_add_test(tc, test_reads_failure);
	tcase_add_test(tc, test_puts);
	tcase_add_test(tc, test_puts_failure);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	pg_url = aqt_db_pg_url();
	return aqt_run(batch_suite());
}
