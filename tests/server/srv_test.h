/* tests/server/srv_test: what the server suites that run over a real
 * database share: a fresh database in a folder of its own per test, and
 * storing fixture documents. Check's assertions: a failure ends the
 * test. */
#ifndef AQ_SRV_TEST_H
#define AQ_SRV_TEST_H

#include <jansson.h>

struct db;

/* A new database in a fresh /tmp folder. */
struct db *srv_test_db_open(void);
/* The database srv_test_db_open made (for more connections): a SQLite
 * file, or with AQ_TEST_PG_URL set (tests/server/test_srv_pg.sh) that
 * PostgreSQL database, its schema emptied for each test. */
const char *srv_test_db_path(void);
/* Close it and remove its folder. */
void srv_test_db_close(struct db *db);
/* Store doc (a new resource of kind under parent, named name); takes doc. */
void srv_test_put(struct db *db, const char *kind, const char *parent, const char *name, json_t *doc);

#endif
