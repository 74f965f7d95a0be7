/* aqt_db: a fresh, empty database for the db suites, on either engine.
 *
 * - aqt_db_fresh: with pg_url (not NULL) its public schema is dropped and
 *   made again and path gets pg_url; without, path (cap bytes) gets the name
 *   of a new temporary SQLite file, /tmp/aq-test-<tag>-XXXXXX, which does not
 *   exist yet. Fails the running Check test on any error.
 * - aqt_db_open: aqt_db_fresh, then db_open(path) into *db (the caller
 *   closes it with aqt_db_close).
 * - aqt_db_close: db_close(db) (NULL is fine), then aqt_db_remove.
 * - aqt_db_remove: for SQLite (pg_url NULL), unlink path and its -wal and
 *   -shm files; nothing for PostgreSQL (the next fresh drops the schema).
 * - aqt_db_pg_url: the PostgreSQL URL the suite runs on (AQ_TEST_PG_URL, set
 *   by tests/db/test_db_pg.sh), NULL when unset or empty (SQLite).
 * - aqt_db_pg_exec: run sql (notices off) on pg_url outside db/; fails the
 *   running Check test unless it succeeds.
 */
#ifndef AQ_TESTS_LIB_AQT_DB_H
#define AQ_TESTS_LIB_AQT_DB_H

#include <stddef.h>

struct db;

void aqt_db_fresh(const char *pg_url, const char *tag, char *path, size_t cap);
void aqt_db_open(const char *pg_url, const char *tag, char *path, size_t cap, struct db **db);
void aqt_db_close(const char *pg_url, const char *path, struct db *db);
void aqt_db_remove(const char *pg_url, const char *path);
const char *aqt_db_pg_url(void);
void aqt_db_pg_exec(const char *pg_url, const char *sql);

#endif
