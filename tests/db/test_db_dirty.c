/* Unit tests for the dirty marks (db.h, db_dirty_list / db_dirty_clear;
 * the triggers of schema step 5), on either engine: a write of a volume
 * marks only the node its placement names, a placement write marks its
 * node (both nodes when it moves), a rolled-back write marks nothing, a
 * clear deletes only marks no write raised since they were read, and a
 * write by another connection (another aquiferd replica) marks the node
 * too. By default on a temporary SQLite file; with AQ_TEST_PG_URL set
 * (tests/db/test_db_pg.sh) on that PostgreSQL database. */
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

#define LOC "projects/p/locations/east"

static void setup(void)
{
	aqt_db_open(pg_url, "dirty", db_path, sizeof(db_path), &db);
}

static void teardown(void)
{
	aqt_db_close(pg_url, db_path, db);
	db = NULL;
}

static void vol_on(struct db *d, const char *id, int64_t cap, bool create)
{
	char name[200];
	json_t *doc;

	snprintf(name, sizeof(name), LOC "/volumes/%s", id);
	doc = json_pack("{s:s,s:s,s:I}", "name", name, "storagePool", "pool", "capacityGib", (json_int_t)cap);
	ck_assert_int_eq(db_put(d, "volume", LOC, name, doc, create), AQ_OK);
	json_decref(doc);
}

static void placement(const char *vol_id, const char *node, bool create)
{
	char name[200], vn[200];
	json_t *doc;

	snprintf(vn, sizeof(vn), LOC "/volumes/%s", vol_id);
	snprintf(name, sizeof(name), "placements/%s", vn);
	doc = json_pack("{s:s,s:s,s:f}", "volume", vn, "node", node, "mibps", 1.0);
	ck_assert_int_eq(db_put(db, "placement", node, name, doc, create), AQ_OK);
	json_decref(doc);
}

/* The marked nodes, sorted, "a;b;" */
static const char *marked(void)
{
	static char out[512];
	json_t *m = NULL, *keys;
	const char *k;
	json_t *v;
	size_t i;

	ck_assert_int_eq(db_dirty_list(db, &m), AQ_OK);
	keys = json_array();
	json_object_foreach(m, k, v) {
		ck_assert_int_gt(json_integer_value(v), 0);
		json_array_append_new(keys, json_string(k));
	}
	/* a handful of names: insertion sort */
	for (i = 1; i < json_array_size(keys); i++)
		for (size_t j = i; j > 0 && strcmp(json_string_value(json_array_get(keys, j - 1)),
						    json_string_value(json_array_get(keys, j))) > 0; j--) {
			json_t *a = json_incref(json_array_get(keys, j - 1));

			json_array_set(keys, j - 1, json_array_get(keys, j));
			json_array_set_new(keys, j, a);
		}
	out[0] = '\0';
	json_array_foreach(keys, i, v) {
		size_t off = strlen(out);

		snprintf(out + off, sizeof(out) - off, "%s;", json_string_value(v));
	}
	json_decref(keys);
	json_decref(m);
	return out;
}

static void clear_all(void)
{
	json_t *m = NULL;

	ck_assert_int_eq(db_dirty_list(db, &m), AQ_OK);
	ck_assert_int_eq(db_dirty_clear(db, m), AQ_OK);
	json_decref(m);
	ck_assert_str_eq(marked(), "");
}

START_TEST(test_marks_follow_writes)
{
	ck_assert_str_eq(marked(), "");
	vol_on(db, "a", 100, true);
	ck_assert_str_eq(marked(), ""); /* no placement yet: no node to mark */
	placement("a", "nodes/n1", true);
	vol_on(db, "b", 100, true);
	placement("b", "nodes/n2", true);
	ck_assert_str_eq(marked(), "nodes/n1;nodes/n2;");
	clear_all();

	/* a volume's change marks its node only */
	vol_on(db, "a", 200, false);
	ck_assert_str_eq(marked(), "nodes/n1;");
	clear_all();
	/* a rolled-back write marks nothing */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	vol_on(db, "b", 300, false);
	db_rollback(db);
	ck_assert_str_eq(marked(), "");
	/* a placement moved: both nodes */
	placement("a", "nodes/n2", false);
	ck_assert_str_eq(marked(), "nodes/n1;nodes/n2;");
	clear_all();
	/* a volume deleted: its node */
	ck_assert_int_eq(db_delete(db, LOC "/volumes/b"), AQ_OK);
	ck_assert_str_eq(marked(), "nodes/n2;");
	clear_all();
	/* a placement deleted: its node */
	ck_assert_int_eq(db_delete(db, "placements/" LOC "/volumes/a"), AQ_OK);
	ck_assert_str_eq(marked(), "nodes/n2;");
	/* inside a transaction a clear is refused */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	ck_assert_int_eq(db_dirty_clear(db, NULL), AQ_EINVAL);
	db_rollback(db);
}
END_TEST

/* A write after the list keeps its node marked: the clear deletes a mark
 * only while it is the count that was read. */
START_TEST(test_clear_keeps_newer_marks)
{
	json_t *m = NULL;

	vol_on(db, "a", 100, true);
	placement("a", "nodes/n1", true);
	vol_on(db, "b", 100, true);
	placement("b", "nodes/n2", true);
	ck_assert_int_eq(db_dirty_list(db, &m), AQ_OK);
	vol_on(db, "a", 150, false); /* committed while the reconciler builds */
	ck_assert_int_eq(db_dirty_clear(db, m), AQ_OK);
	json_decref(m);
	ck_assert_str_eq(marked(), "nodes/n1;");
}
END_TEST

/* Another connection's write (another replica's handler) marks the node
 * in the database, where this connection reads it. */
START_TEST(test_other_connection_marks)
{
	struct db *other = NULL;
	aq_msg msg = { .text = { 0 } };

	vol_on(db, "a", 100, true);
	placement("a", "nodes/n1", true);
	vol_on(db, "b", 100, true);
	placement("b", "nodes/n2", true);
	clear_all();
	ck_assert_msg(db_open(db_path, &other, &msg) == AQ_OK, "db_open: %s", msg.text);
	ck_assert_int_eq(db_begin(other), AQ_OK);
	vol_on(other, "b", 500, false);
	ck_assert_int_eq(db_commit(other), AQ_OK);
	db_close(other);
	ck_assert_str_eq(marked(), "nodes/n2;");
}
END_TEST

static Suite *dirty_suite(void)
{
	Suite *s = suite_create("db_dirty");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_marks_follow_writes);
	tcase_add_test(tc, test_clear_keeps_newer_marks);
	tcase_add_test(tc, test_other_connection_marks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	pg_url = aqt_db_pg_url();
	return aqt_run(dirty_suite());
}
