/* Unit tests for db/ through db/db.h, on either engine: migrations,
 * single-resource calls, listing (paging, order, filters, page tokens),
 * aggregates, transactions, a second connection, two processes racing
 * on one check-then-apply, and leases (take, renew, expiry, fencing). By
 * default on a temporary SQLite file; with AQ_TEST_PG_URL set
 * (tests/db/test_db_pg.sh starts a server) on that PostgreSQL database,
 * whose schema each test starts from empty. */
#include "db/db.h"

#include <check.h>
#include <libpq-fe.h>
#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/aqt.h"
#include "tests/lib/aqt_db.h"

static char db_path[1024]; /* the SQLite file or the PostgreSQL URL */
static const char *pg_url; /* NULL: SQLite */
static struct db *db;

static void setup(void)
{
	aqt_db_open(pg_url, "db", db_path, sizeof(db_path), &db);
}

static void teardown(void)
{
	aqt_db_close(pg_url, db_path, db);
	db = NULL;
}

/* The schema version the database records (SQLite's user_version,
 * PostgreSQL's schema_version table). */
static int schema_version(const char *path)
{
	sqlite3 *h = NULL;
	sqlite3_stmt *st = NULL;
	int v = -1;

	if (pg_url) {
		PGconn *c = PQconnectdb(pg_url);
		PGresult *res = PQexec(c, "SELECT MAX(version) FROM schema_version");

		ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s", PQresultErrorMessage(res));
		v = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
		PQfinish(c);
		return v;
	}
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
	ck_assert_int_eq(schema_version(db_path), db_schema_version);
	put("project", "", "projects/p", "{\"name\": \"projects/p\"}");
	/* a second open (and a reopen) is idempotent and keeps the data */
	ck_assert_msg(db_open(db_path, &again, &msg) == AQ_OK, "%s", msg.text);
	db_close(again);
	db_close(db);
	db = NULL;
	ck_assert_msg(db_open(db_path, &db, &msg) == AQ_OK, "%s", msg.text);
	ck_assert_int_eq(schema_version(db_path), db_schema_version);
	{
		json_t *doc = NULL;

		ck_assert_int_eq(db_get(db, "projects/p", &doc), AQ_OK);
		json_decref(doc);
	}
	/* a database from a newer program is refused */
	{
		sqlite3 *h = NULL;
		char sql[96];

		if (pg_url) {
			snprintf(sql, sizeof(sql), "INSERT INTO schema_version (version, what) VALUES (%d, 'future')",
				 db_schema_version + 1);
			aqt_db_pg_exec(pg_url, sql);
		} else {
			ck_assert_int_eq(sqlite3_open(db_path, &h), SQLITE_OK);
			snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", db_schema_version + 1);
			ck_assert_int_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
			sqlite3_close(h);
		}
		again = NULL;
		ck_assert_int_eq(db_open(db_path, &again, &msg), AQ_EINVAL);
		ck_assert_ptr_null(again);
		ck_assert_msg(strstr(msg.text, "newer"), "%s", msg.text);
	}
	/* a path that cannot be opened, a server that is not there */
	ck_assert_int_eq(db_open(pg_url ? "postgresql:///x?host=/nonexistent-dir" : "/nonexistent-dir/x/y.db",
				 &again, &msg), AQ_EIO);
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

/* URLs refused before any connection: a password in a PostgreSQL URL (it
 * would show in process lists and logs), an engine db/ does not have, an
 * empty file name. Nothing is created. */
START_TEST(test_open_refused)
{
	aq_msg msg = { .text = { 0 } };
	struct db *other = NULL;

	ck_assert_int_eq(db_open("postgres://aq:s3cret@127.0.0.1:1/aquifer", &other, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "password") && !strstr(msg.text, "s3cret"), "%s", msg.text);
	ck_assert_int_eq(db_open("postgresql:///aquifer?host=/nonexistent-dir&password=s3cret", &other, &msg),
			 AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "PGPASSFILE"), "%s", msg.text);
	ck_assert_int_eq(db_open("mysql://127.0.0.1/aquifer", &other, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "unsupported"), "%s", msg.text);
	ck_assert_int_eq(db_open("sqlite:", &other, &msg), AQ_EINVAL);
	ck_assert_ptr_null(other);
	ck_assert_ptr_null(db_file_path("postgres://127.0.0.1/aquifer"));
	ck_assert_str_eq(db_file_path("sqlite:/var/lib/aquifer/aq.db"), "/var/lib/aquifer/aq.db");
	ck_assert_str_eq(db_file_path("aq.db"), "aq.db");
	ck_assert_str_eq(db_engine_name(db), pg_url ? "postgres" : "sqlite");
}
END_TEST

/* One side of a race: in one transaction, check that the location has no
 * volume named share (by share name) or that pool has mibps left for one
 * more volume of `want`, and create one when it has; a transaction found
 * in conflict (AQ_EBUSY) is run again, as srv_http.c does. 1: this side
 * created its volume, 0: the check said no, else an error. */
enum race_kind { RACE_SHARE, RACE_BUDGET };
#define RACE_POOL "projects/p/locations/east/storagePools/pool"
#define RACE_BUDGET_MIBPS 100.0

static int race_once(struct db *d, enum race_kind kind, const char *volume, int step_fd)
{
	const char *fields[] = { "throughputMibps" };
	int64_t n = 0;
	double used = 0;
	json_t *doc = json_pack("{s:s,s:s,s:s,s:f}", "name", volume, "shareName", "same",
				"storagePool", RACE_POOL, "throughputMibps", 60.0);
	int rc;

	if ((rc = db_begin(d)) != AQ_OK)
		goto out;
	rc = kind == RACE_SHARE ? db_volume_share_count(d, "east", "same", &n)
				: db_aggregate(d, "volume", "projects/p/locations/east", "storagePool", RACE_POOL,
					       fields, 1, &n, &used);
	if (rc != AQ_OK)
		goto out;
	/* the other side may run its whole transaction now */
	if (step_fd >= 0 && write(step_fd, "c", 1) != 1)
		rc = AQ_EIO;
	else if (kind == RACE_SHARE ? n > 0 : used + 60.0 > RACE_BUDGET_MIBPS)
		rc = 0;
	else if (step_fd >= 0 && poll(&(struct pollfd){ .fd = step_fd, .events = POLLIN }, 1, 1000) < 0)
		rc = AQ_EIO;
	else if ((rc = db_put(d, "volume", "projects/p/locations/east", volume, doc, true)) == AQ_EBUSY) {
		/* once a statement found the conflict, the rest of the transaction
		 * says so too (PostgreSQL: 25P02 after 40001), not a database error */
		if (db_count(d, "volume", NULL, &n) != AQ_EBUSY)
			rc = AQ_EIO;
	} else if (rc == AQ_OK && (rc = db_commit(d)) == AQ_OK) {
		rc = 1;
	}
out:
	db_rollback(d);
	json_decref(doc);
	return rc;
}

static int race_side(struct db *d, enum race_kind kind, const char *volume, int step_fd)
{
	int rc = AQ_EBUSY;

	for (int tries = 0; tries < 5 && rc == AQ_EBUSY; tries++) {
		rc = race_once(d, kind, volume, step_fd);
		step_fd = -1; /* a retry runs alone */
	}
	return rc;
}

/* Two processes (two aquiferd replicas) check and create at the same time:
 * the first has read and waits while the second runs its whole
 * transaction (PostgreSQL), or the second waits on the first's write lock
 * (SQLite). Exactly one volume is created either way. */
static void race(enum race_kind kind)
{
	aq_msg msg = { .text = { 0 } };
	int sv[2], status = 0, mine, theirs;
	int64_t n = -1;
	pid_t pid;
	char c;

	put("project", "", "projects/p", "{}");
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* its own connection; the parent's is never touched */
		struct db *d = NULL;

		close(sv[0]);
		if (read(sv[1], &c, 1) != 1 || db_open(db_path, &d, &msg) != AQ_OK)
			_exit(100);
		_exit(race_side(d, kind, "projects/p/locations/east/volumes/child", -1) + 10);
	}
	close(sv[1]);
	mine = race_side(db, kind, "projects/p/locations/east/volumes/parent", sv[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(sv[0]);
	ck_assert(WIFEXITED(status));
	theirs = WEXITSTATUS(status) - 10;
	ck_assert_msg(mine >= 0 && theirs >= 0, "parent %d, child %d", mine, theirs);
	ck_assert_msg(mine + theirs == 1, "%d of the two racing creates went through (parent %d, child %d)",
		      mine + theirs, mine, theirs);
	ck_assert_int_eq(db_count(db, "volume", "projects/p/locations/east", &n), AQ_OK);
	ck_assert_int_eq(n, 1);
}

START_TEST(test_race_share_name)
{
	race(RACE_SHARE);
}
END_TEST

START_TEST(test_race_budget)
{
	race(RACE_BUDGET);
}
END_TEST

/* Leases (db_lease.c): take, renew, expiry, a take at a higher epoch, the
 * stale holder's renew, fenced write and release refused; then two
 * processes take a free lease at once: exactly one holds it. */
#define LEASE "leases/test"

static int fenced_put(struct db *d, const char *holder, int64_t epoch, int64_t now, const char *name)
{
	struct db_fence f = { .lease = LEASE, .holder = holder, .epoch = epoch };
	json_t *doc = json_pack("{s:s}", "by", holder);
	int rc;

	if ((rc = db_begin(d)) == AQ_OK && (rc = db_lease_check(d, &f, now)) == AQ_OK &&
	    (rc = db_put(d, "snapsched", "", name, doc, true)) == AQ_OK)
		rc = db_commit(d);
	db_rollback(d);
	json_decref(doc);
	return rc;
}

START_TEST(test_lease)
{
	struct db_lease l;
	struct db *d2 = NULL;
	aq_msg msg = { .text = { 0 } };
	json_t *doc = NULL;

	ck_assert_int_eq(db_lease_get(db, LEASE, &l), AQ_ENOENT);
	ck_assert_int_eq(db_lease_take(db, LEASE, "", "u", 1000, 100, &l), AQ_EINVAL);
	ck_assert_int_eq(db_lease_take(db, LEASE, "a", "http://a", 1000, 100, &l), AQ_OK);
	ck_assert_int_eq(l.epoch, 1);
	ck_assert_int_eq(l.expire_ms, 1100);
	/* another connection (another replica) sees it taken */
	ck_assert_msg(db_open(db_path, &d2, &msg) == AQ_OK, "%s", msg.text);
	ck_assert_int_eq(db_lease_take(d2, LEASE, "b", "http://b", 1050, 100, &l), AQ_EPRECOND);
	ck_assert_str_eq(l.holder, "a");
	ck_assert_str_eq(l.url, "http://a");
	ck_assert_int_eq(l.epoch, 1);
	/* renewed: same epoch, later expiry, so b still waits past 1100 */
	ck_assert_int_eq(db_lease_take(db, LEASE, "a", "http://a", 1080, 100, &l), AQ_OK);
	ck_assert_int_eq(l.epoch, 1);
	ck_assert_int_eq(l.expire_ms, 1180);
	ck_assert_int_eq(db_lease_take(d2, LEASE, "b", "http://b", 1150, 100, &l), AQ_EPRECOND);
	ck_assert_int_eq(fenced_put(db, "a", 1, 1150, "snapscheds/a1"), AQ_OK);
	/* a's fence: the wrong epoch, or past its expiry, is refused */
	ck_assert_int_eq(fenced_put(db, "a", 2, 1150, "snapscheds/a2"), AQ_EPRECOND);
	ck_assert_int_eq(fenced_put(db, "a", 1, 1180, "snapscheds/a3"), AQ_EPRECOND);
	/* expired: b takes it at the next epoch */
	ck_assert_int_eq(db_lease_take(d2, LEASE, "b", "http://b", 1180, 100, &l), AQ_OK);
	ck_assert_int_eq(l.epoch, 2);
	ck_assert_int_eq(db_lease_get(db, LEASE, &l), AQ_OK);
	ck_assert_str_eq(l.holder, "b");
	ck_assert_int_eq(l.epoch, 2);
	/* the stale holder: its renew, its fenced write and its release are refused */
	ck_assert_int_eq(db_lease_take(db, LEASE, "a", "http://a", 1190, 100, &l), AQ_EPRECOND);
	ck_assert_str_eq(l.holder, "b");
	ck_assert_int_eq(fenced_put(db, "a", 1, 1190, "snapscheds/a4"), AQ_EPRECOND);
	ck_assert_int_eq(db_get(db, "snapscheds/a4", &doc), AQ_ENOENT);
	ck_assert_int_eq(db_lease_release(db, &(struct db_fence){ .lease = LEASE, .holder = "a", .epoch = 1 }), AQ_EPRECOND);
	ck_assert_int_eq(fenced_put(d2, "b", 2, 1190, "snapscheds/b1"), AQ_OK);
	/* b gives it up: a takes it at once, at epoch 3 */
	ck_assert_int_eq(db_lease_release(d2, &(struct db_fence){ .lease = LEASE, .holder = "b", .epoch = 2 }), AQ_OK);
	ck_assert_int_eq(db_lease_take(db, LEASE, "a", "http://a", 1200, 100, &l), AQ_OK);
	ck_assert_int_eq(l.epoch, 3);
	ck_assert_int_eq(fenced_put(d2, "b", 2, 1210, "snapscheds/b2"), AQ_EPRECOND);
	/* a's own expired lease taken again by a: a new epoch too */
	ck_assert_int_eq(db_lease_take(db, LEASE, "a", "http://a", 1400, 100, &l), AQ_OK);
	ck_assert_int_eq(l.epoch, 4);
	db_close(d2);
}
END_TEST

/* Two processes take a free lease at once, each trying again on AQ_EBUSY:
 * one holds it (AQ_OK), the other sees it held (AQ_EPRECOND). */
static int lease_side(struct db *d, const char *holder)
{
	int rc = AQ_EBUSY;

	for (int tries = 0; tries < 20 && rc == AQ_EBUSY; tries++)
		rc = db_lease_take(d, LEASE, holder, "", 5000, 10000, NULL);
	return rc == AQ_OK ? 1 : rc == AQ_EPRECOND ? 0 : 2;
}

START_TEST(test_lease_race)
{
	aq_msg msg = { .text = { 0 } };
	struct db_lease l;
	int sv[2], status = 0, mine, theirs;
	pid_t pid;
	char c = 'g';

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct db *d = NULL;

		close(sv[0]);
		if (db_open(db_path, &d, &msg) != AQ_OK || write(sv[1], &c, 1) != 1 || read(sv[1], &c, 1) != 1)
			_exit(100);
		_exit(lease_side(d, "child") + 10);
	}
	close(sv[1]);
	ck_assert_int_eq(read(sv[0], &c, 1), 1);
	ck_assert_int_eq(write(sv[0], &c, 1), 1);
	mine = lease_side(db, "parent");
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(sv[0]);
	ck_assert(WIFEXITED(status));
	theirs = WEXITSTATUS(status) - 10;
	ck_assert_msg(mine + theirs == 1 && mine <= 1 && theirs <= 1, "parent %d, child %d (1: holds it)", mine, theirs);
	ck_assert_int_eq(db_lease_get(db, LEASE, &l), AQ_OK);
	ck_assert_str_eq(l.holder, mine ? "parent" : "child");
	ck_assert_int_eq(l.epoch, 1);
}
END_TEST

static Suite *db_suite(void)
{
	Suite *s = suite_create("db");
	TCase *tc = tcase_create(pg_url ? "postgres" : "sqlite");

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
	tcase_add_test(tc, test_open_refused);
	tcase_add_test(tc, test_race_share_name);
	tcase_add_test(tc, test_race_budget);
	tcase_add_test(tc, test_lease);
	tcase_add_test(tc, test_lease_race);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	pg_url = aqt_db_pg_url();
	return aqt_run(db_suite());
}
