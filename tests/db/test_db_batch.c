/* Unit tests for db.h's batch reads, on either engine: db_get_many gives
 * the documents of the names that exist (missing ones left out, an empty
 * list giving an empty object, a name's own uncommitted write inside its
 * transaction) and db_parents_with the parents that have a resource of a
 * kind. The reconciler builds a node's intent and the status handler reads
 * a report's volumes with them (issue 22). By default on a temporary
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
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	pg_url = aqt_db_pg_url();
	return aqt_run(batch_suite());
}
