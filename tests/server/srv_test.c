/* tests/server/srv_test: the shared fixture of the db-backed server
 * suites (see srv_test.h). */
#include "tests/server/srv_test.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/api_error.h"
#include "db/db.h"

#include "tests/lib/aqt_db.h"

static char dir[64];
static char dbfile[1024];

const char *srv_test_db_path(void)
{
	return dbfile;
}

struct db *srv_test_db_open(void)
{
	char path[128];
	struct db *db = NULL;
	aq_msg msg = { .text = "" };

	snprintf(dir, sizeof(dir), "/tmp/aq-test-srv.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	snprintf(dbfile, sizeof(dbfile), "%s", path);
	/* on PostgreSQL (AQ_TEST_PG_URL, tests/server/test_srv_pg.sh): its
	 * schema emptied for each test */
	if (aqt_db_pg_url())
		aqt_db_fresh(aqt_db_pg_url(), "srv", dbfile, sizeof(dbfile));
	ck_assert_msg(db_open(dbfile, &db, &msg) == AQ_OK, "%s", msg.text);
	return db;
}

void srv_test_db_close(struct db *db)
{
	char cmd[128];

	db_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

void srv_test_put(struct db *db, const char *kind, const char *parent, const char *name, json_t *doc)
{
	ck_assert_ptr_nonnull(doc);
	ck_assert_int_eq(db_put(db, kind, parent, name, doc, true), AQ_OK);
	json_decref(doc);
}
