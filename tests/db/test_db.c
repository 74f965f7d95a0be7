/* Unit tests for db/db_sqlite.c through db/db.h, on a temporary file:
 * migrations, single-resource calls, listing (paging, order, filters, page
 * tokens), aggregates, transactions and a second connection. */
#include "db/db.h"

#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

static char db_path[64];
static struct db *db;

static void setup(void)
{
	aq_msg msg = { .text = { 0 } };
	int fd;

	snprintf(db_path, sizeof(db_path), "/tmp/aq-test-db-XXXXXX");
	fd = mkstemp(db_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(db_path);
	ck_assert_msg(db_open(db_path, &db, &msg) == AQ_OK, "db_open: %s", msg.text);
}

static void teardown(void)
{
	char side[96];

	db_close(db);
	db = NULL;
	unlink(db_path);
	snprintf(side, sizeof(side), "%s-wal", db_path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", db_path);
	unlink(side);
}

static int user_version(const char *path)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int v = -1;

	ck_assert_int_eq(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

static void put(const char *kind, const char *parent, const char *name, const char *json)
{
	json_t *doc = json_loads(json, 0, NULL);

	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(db_put(db, kind, parent, name, doc, true), AQ_OK);
	json_decref(doc);
}

START_TEST(test_open_migrate)
{
	aq_msg msg = { .text = { 0 } };
	struct db *again = NULL;

	ck_assert_int_ge(db_schema_version, 1);
	ck_assert_int_eq(user_version(db_path), db_schema_version);
	put("project", "", "projects/p", "{\"name\": \"projects/p\"}");
	/* a second open (and a reopen) is idempotent and keeps the data */
	ck_assert_msg(db_open(db_path, &again, &msg) == AQ_OK, "%s", msg.text);
	db_close(again);
	db_close(db);
	db = NULL;
	ck_assert_msg(db_open(db_path, &db, &msg) == AQ_OK, "%s", msg.text);
	ck_assert_int_eq(user_version(db_path), db_schema_version);
	{
		json_t *doc = NULL;

		ck_assert_int_eq(db_get(db, "projects/p", &doc), AQ_OK);
		json_decref(doc);
	}
	/* a file from a newer program is refused */
	{
		sqlite3 *h = NULL;
		char sql[64];

		ck_assert_int_eq(sqlite3_open(db_path, &h), SQLITE_OK);
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", db_schema_version + 1);
		ck_assert_int_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(h);
		again = NULL;
		ck_assert_int_eq(db_open(db_path, &again, &msg), AQ_EINVAL);
		ck_assert_ptr_null(again);
		ck_assert_msg(strstr(msg.text, "newer"), "%s", msg.text);
	}
	/* a path that cannot be opened */
	ck_assert_int_eq(db_open("/nonexistent-dir/x/y.db", &again, &msg), AQ_EIO);
}
END_TEST

START_TEST(test_put_get_delete)
{
	json_t *doc = NULL, *in = json_pack("{s:s,s:s}", "name", "projects/p/x", "capacityGib", "100");

	ck_assert_int_eq(db_get(db, "projects/p/x", &doc), AQ_ENOENT);
	ck_assert_int_eq(db_put(db, "volume", "projects/p", "projects/p/x", in, false), AQ_ENOENT);
	ck_assert_int_eq(db_put(db, "volume", "projects/p", "projects/p/x", in, true), AQ_OK);
	ck_assert_int_eq(db_put(db, "volume", "projects/p", "projects/p/x", in, true), AQ_EEXIST);
	ck_assert_int_eq(db_get(db, "projects/p/x", &doc), AQ_OK);
	ck_assert(json_equal(doc, in));
	json_decref(doc);
	json_object_set_new(in, "capacityGib", json_string("200"));
	ck_assert_int_eq(db_put(db, "volume", "projects/p", "projects/p/x", in, false), AQ_OK);
	ck_assert_int_eq(db_get(db, "projects/p/x", &doc), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "capacityGib")), "200");
	json_decref(doc);
	ck_assert_int_eq(db_delete(db, "projects/p/x"), AQ_OK);
	ck_assert_int_eq(db_delete(db, "projects/p/x"), AQ_ENOENT);
	ck_assert_int_eq(db_get(db, "projects/p/x", &doc), AQ_ENOENT);
	json_decref(in);
}
END_TEST

static void put_ten(void)
{
	for (int i = 0; i < 10; i++) {
		char name[64], json[256];

		snprintf(name, sizeof(name), "projects/p/volumes/v%02d", i);
		snprintf(json, sizeof(json),
			 "{\"name\": \"%s\", \"capacityGib\": \"%d\", \"state\": \"%s\","
			 " \"large\": %s, \"tp\": {\"days\": %d}, \"mibps\": %d.5}",
			 name, 100 * (i % 3 + 1), i % 2 ? "READY" : "CREATING", i < 4 ? "true" : "false",
			 i, i);
		put("volume", "projects/p", name, json);
	}
	put("volume", "projects/q", "projects/q/volumes/other", "{\"state\": \"READY\"}");
	put("pool", "projects/p", "projects/p/storagePools/pool", "{\"state\": \"READY\"}");
}

/* List q fully, page by page; returns the names joined by ',' and the page count. */
static int list_all(struct db_query q, char *names, size_t cap)
{
	aq_msg msg = { .text = { 0 } };
	char *token = NULL;
	size_t off = 0;
	int pages = 0;

	names[0] = '\0';
	do {
		json_t *items = NULL, *it;
		size_t i;
		char *next = NULL;

		q.page_token = token;
		ck_assert_msg(db_list(db, &q, &items, &next, &msg) == AQ_OK, "%s", msg.text);
		pages++;
		if (q.page_size > 0)
			ck_assert_int_le((int)json_array_size(items), q.page_size);
		json_array_foreach(items, i, it) {
			const char *n = json_string_value(json_object_get(it, "name"));
			const char *leaf = n ? strrchr(n, '/') + 1 : "?";

			off += (size_t)snprintf(names + off, cap - off, "%s%s", off ? "," : "", leaf);
		}
		/* a page with a token is full */
		if (next && q.page_size > 0)
			ck_assert_int_eq((int)json_array_size(items), q.page_size);
		json_decref(items);
		free(token);
		token = next;
	} while (token && pages < 100);
	return pages;
}

START_TEST(test_list_paging)
{
	struct db_query q = { .kind = "volume", .parent = "projects/p", .page_size = 3 };
	char names[512];

	put_ten();
	ck_assert_int_eq(list_all(q, names, sizeof(names)), 4);
	ck_assert_str_eq(names, "v00,v01,v02,v03,v04,v05,v06,v07,v08,v09");
	q.order_desc = true;
	ck_assert_int_eq(list_all(q, names, sizeof(names)), 4);
	ck_assert_str_eq(names, "v09,v08,v07,v06,v05,v04,v03,v02,v01,v00");
	/* exactly one page: no token */
	q.order_desc = false;
	q.page_size = 10;
	ck_assert_int_eq(list_all(q, names, sizeof(names)), 1);
	q.page_size = 5;
	ck_assert_int_eq(list_all(q, names, sizeof(names)), 2);
	q.page_size = 0;
	ck_assert_int_eq(list_all(q, names, sizeof(names)), 1);
	q.page_size = 100000;
	ck_assert_int_eq(list_all(q, names, sizeof(names)), 1);
	/* every parent */
	q.parent = NULL;
	ck_assert_int_eq(list_all(q, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "v00,v01,v02,v03,v04,v05,v06,v07,v08,v09,?");
	/* kind is part of the query */
	q.kind = "pool";
	list_all(q, names, sizeof(names));
	ck_assert_str_eq(names, "?");
	q.kind = "nothing";
	list_all(q, names, sizeof(names));
	ck_assert_str_eq(names, "");
}
END_TEST

static void expect_names(const char *filter, const char *want)
{
	struct db_query q = { .kind = "volume", .parent = "projects/p", .filter = filter };
	char names[512];

	list_all(q, names, sizeof(names));
	ck_assert_msg(strcmp(names, want) == 0, "filter %s: got \"%s\", want \"%s\"", filter, names,
		      want);
}

START_TEST(test_list_filter)
{
	put_ten();
	expect_names("state=READY", "v01,v03,v05,v07,v09");
	expect_names("state=\"READY\"", "v01,v03,v05,v07,v09");
	expect_names("  state = READY ", "v01,v03,v05,v07,v09");
	expect_names("capacityGib=300", "v02,v05,v08");
	expect_names("capacityGib=\"300\"", "v02,v05,v08");
	expect_names("capacityGib=300 AND state=CREATING", "v02,v08");
	expect_names("large=true", "v00,v01,v02,v03");
	expect_names("large=false", "v04,v05,v06,v07,v08,v09");
	expect_names("large=true AND state=READY", "v01,v03");
	expect_names("tp.days=7", "v07");
	expect_names("name=\"projects/p/volumes/v04\"", "v04");
	expect_names("state=NOPE", "");
	expect_names("missing=x", "");
	expect_names("mibps=2.5", "v02");
	expect_names("", "v00,v01,v02,v03,v04,v05,v06,v07,v08,v09");
}
END_TEST

static int list_rc(const char *filter, const char *token, bool desc)
{
	struct db_query q = { .kind = "volume", .parent = "projects/p", .filter = filter,
			      .page_token = token, .order_desc = desc, .page_size = 3 };
	aq_msg msg = { .text = { 0 } };
	json_t *items = NULL;
	static char sentinel[] = "sentinel";
	char *next = sentinel;
	int rc = db_list(db, &q, &items, &next, &msg);

	if (rc == AQ_OK) {
		json_decref(items);
		free(next);
	} else {
		ck_assert_ptr_null(next);
		ck_assert_msg(msg.text[0], "rc %d without a message", rc);
	}
	return rc;
}

START_TEST(test_list_bad_filter_and_token)
{
	struct db_query q = { .kind = "volume", .parent = "projects/p", .page_size = 3,
			      .filter = "state=READY" };
	aq_msg msg = { .text = { 0 } };
	json_t *items = NULL;
	char *token = NULL, *bad;

	put_ten();
	ck_assert_int_eq(list_rc("state", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("state!=READY", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("state>READY", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("=READY", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("state=READY OR large=true", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("state=READY large=true", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("state=\"READY", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("a'b=1", NULL, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("a=1 AND b=1 AND c=1 AND d=1 AND e=1 AND f=1 AND g=1 AND h=1",
				 NULL, false),
			 AQ_OK);
	ck_assert_int_eq(list_rc("a=1 AND b=1 AND c=1 AND d=1 AND e=1 AND f=1 AND g=1 AND h=1 AND i=1",
				 NULL, false),
			 AQ_EINVAL);

	/* a token is bound to its query */
	ck_assert_int_eq(db_list(db, &q, &items, &token, &msg), AQ_OK);
	json_decref(items);
	ck_assert_ptr_nonnull(token);
	ck_assert_int_eq(list_rc("state=READY", token, false), AQ_OK);
	ck_assert_int_eq(list_rc("state=CREATING", token, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc(NULL, token, false), AQ_EINVAL);
	ck_assert_int_eq(list_rc("state=READY", token, true), AQ_EINVAL);
	q.page_token = token;
	q.parent = "projects/q";
	ck_assert_int_eq(db_list(db, &q, &items, &bad, &msg), AQ_EINVAL);
	q.parent = "projects/p";
	q.kind = "pool";
	ck_assert_int_eq(db_list(db, &q, &items, &bad, &msg), AQ_EINVAL);
	/* garbage tokens */
	ck_assert_int_eq(list_rc(NULL, "zz", false), AQ_EINVAL);
	ck_assert_int_eq(list_rc(NULL, "abc", false), AQ_EINVAL);
	ck_assert_int_eq(list_rc(NULL, "6162", false), AQ_EINVAL);
	/* the query checksum travels in the token's tail: altering it is refused */
	token[strlen(token) - 1] = token[strlen(token) - 1] == '1' ? '2' : '1';
	ck_assert_int_eq(list_rc("state=READY", token, false), AQ_EINVAL);
	free(token);
}
END_TEST

static void count_cb(const char *kind, int64_t n, void *arg)
{
	char *out = arg;
	size_t len = strlen(out);

	snprintf(out + len, 128 - len, "%s=%lld;", kind, (long long)n);
}

START_TEST(test_aggregates)
{
	int64_t n = -1;
	double sum = -1;
	char kinds[128] = "";

	ck_assert_int_eq(db_count(db, "volume", NULL, &n), AQ_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(db_sum(db, "volume", NULL, "capacityGib", &sum), AQ_OK);
	ck_assert(sum == 0);
	put_ten();
	ck_assert_int_eq(db_count(db, "volume", "projects/p", &n), AQ_OK);
	ck_assert_int_eq(n, 10);
	ck_assert_int_eq(db_count(db, "volume", NULL, &n), AQ_OK);
	ck_assert_int_eq(n, 11);
	ck_assert_int_eq(db_count(db, "volume", "projects/none", &n), AQ_OK);
	ck_assert_int_eq(n, 0);
	/* int64 strings count as numbers: 4x100 + 3x200 + 3x300 */
	ck_assert_int_eq(db_sum(db, "volume", "projects/p", "capacityGib", &sum), AQ_OK);
	ck_assert(sum == 1900);
	ck_assert_int_eq(db_sum(db, "volume", "projects/p", "mibps", &sum), AQ_OK);
	ck_assert(sum == 50);
	ck_assert_int_eq(db_sum(db, "volume", "projects/p", "tp.days", &sum), AQ_OK);
	ck_assert(sum == 45);
	ck_assert_int_eq(db_sum(db, "volume", NULL, "missing", &sum), AQ_OK);
	ck_assert(sum == 0);
	ck_assert_int_eq(db_count_kinds(db, count_cb, kinds), AQ_OK);
	ck_assert_str_eq(kinds, "pool=1;volume=11;");
}
END_TEST

/* Share names are unique per location across projects: the count sees
 * every project's volumes of that location and no other location's. */
START_TEST(test_volume_share_count)
{
	int64_t n = -1;

	put("project", "", "projects/a", "{}");
	put("project", "", "projects/b", "{}");
	put("volume", "projects/a/locations/east", "projects/a/locations/east/volumes/v1", "{\"shareName\":\"demo\"}");
	put("volume", "projects/a/locations/west", "projects/a/locations/west/volumes/v2", "{\"shareName\":\"west\"}");
	put("pool", "projects/b/locations/east", "projects/b/locations/east/storagePools/demo", "{\"shareName\":\"demo\"}");
	ck_assert_int_eq(db_volume_share_count(db, "east", "demo", &n), AQ_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(db_volume_share_count(db, "west", "demo", &n), AQ_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(db_volume_share_count(db, "east", "west", &n), AQ_OK);
	ck_assert_int_eq(n, 0);
	put("volume", "projects/b/locations/east", "projects/b/locations/east/volumes/v3", "{\"shareName\":\"demo\"}");
	ck_assert_int_eq(db_volume_share_count(db, "east", "demo", &n), AQ_OK);
	ck_assert_int_eq(n, 2);
	/* a volume of a project that no longer exists does not count */
	ck_assert_int_eq(db_delete(db, "projects/b"), AQ_OK);
	ck_assert_int_eq(db_volume_share_count(db, "east", "demo", &n), AQ_OK);
	ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(test_transactions)
{
	aq_msg msg = { .text = { 0 } };
	struct db *other = NULL;
	json_t *doc = NULL;
	int64_t n = -1;

	ck_assert_msg(db_open(db_path, &other, &msg) == AQ_OK, "%s", msg.text);
	/* rollback discards */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	put("volume", "projects/p", "projects/p/volumes/a", "{\"x\": 1}");
	ck_assert_int_eq(db_get(db, "projects/p/volumes/a", &doc), AQ_OK);
	json_decref(doc);
	/* the other connection does not see the uncommitted write */
	ck_assert_int_eq(db_get(other, "projects/p/volumes/a", &doc), AQ_ENOENT);
	db_rollback(db);
	ck_assert_int_eq(db_get(db, "projects/p/volumes/a", &doc), AQ_ENOENT);
	db_rollback(db); /* without a transaction: harmless */
	db_rollback(NULL);

	/* commit: the other connection sees it */
	ck_assert_int_eq(db_begin(db), AQ_OK);
	put("volume", "projects/p", "projects/p/volumes/b", "{\"x\": 2}");
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_int_eq(db_get(other, "projects/p/volumes/b", &doc), AQ_OK);
	ck_assert_int_eq(json_integer_value(json_object_get(doc, "x")), 2);
	json_decref(doc);
	ck_assert_int_eq(db_count(other, "volume", NULL, &n), AQ_OK);
	ck_assert_int_eq(n, 1);
	/* and the other way round, without an explicit transaction */
	ck_assert_int_eq(db_delete(other, "projects/p/volumes/b"), AQ_OK);
	ck_assert_int_eq(db_get(db, "projects/p/volumes/b", &doc), AQ_ENOENT);
	db_close(other);
}
END_TEST

/* db_list_all: every page at once, past the 1,000-row page cap. */
START_TEST(test_list_all)
{
	struct db_query q = { .kind = "volume", .parent = "projects/big", .filter = "state=READY",
			      .page_size = 3 };
	json_t *items = NULL;
	int ready = 0;

	ck_assert_int_eq(db_begin(db), AQ_OK);
	for (int i = 0; i < 1205; i++) {
		char name[64], json[128];

		snprintf(name, sizeof(name), "projects/big/volumes/v%04d", i);
		snprintf(json, sizeof(json), "{\"name\": \"%s\", \"state\": \"%s\"}", name,
			 i % 5 ? "READY" : "CREATING");
		json_t *doc = json_loads(json, 0, NULL);

		ck_assert_int_eq(db_put(db, "volume", "projects/big", name, doc, true), AQ_OK);
		json_decref(doc);
		ready += i % 5 != 0;
	}
	ck_assert_int_eq(db_commit(db), AQ_OK);
	ck_assert_int_eq(db_list_all(db, &q, &items, NULL), AQ_OK);
	ck_assert_int_eq((int)json_array_size(items), ready);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "name")),
			 "projects/big/volumes/v0001");
	json_decref(items);
}
END_TEST

static Suite *db_suite(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create("sqlite");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_open_migrate);
	tcase_add_test(tc, test_put_get_delete);
	tcase_add_test(tc, test_list_paging);
	tcase_add_test(tc, test_list_filter);
	tcase_add_test(tc, test_list_bad_filter_and_token);
	tcase_add_test(tc, test_aggregates);
	tcase_add_test(tc, test_volume_share_count);
	tcase_add_test(tc, test_transactions);
	tcase_add_test(tc, test_list_all);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(db_suite());
}
