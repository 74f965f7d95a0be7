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
 * - aqt_kill9: the kill -9 scaffolding of the durability tests. Forks a
 *   child that runs child(ack_fd, arg) and then _exits; the child writes one
 *   struct aqt_ack to ack_fd for each thing it was told is committed (by
 *   db_commit, db_group_run...). The parent hands each ack to ack(a, arg) at
 *   once (NULL: none), and SIGKILLs the child as soon as kill_now(acks,
 *   arg) says so (asked after every ack and every 5 ms; NULL: after
 *   kill_after acks). Returns the acks read, once the child is reaped;
 *   *killed (may be NULL) says whether the kill came before the child was
 *   done. The caller then reopens the database and checks what survived.
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

#include <stdbool.h>

struct aqt_ack {
	int a, b;
};
typedef void (*aqt_kill9_child_fn)(int ack_fd, void *arg);
typedef void (*aqt_kill9_ack_fn)(const struct aqt_ack *ack, void *arg);
typedef bool (*aqt_kill9_when_fn)(int acks, void *arg);
int aqt_kill9(aqt_kill9_child_fn child, aqt_kill9_ack_fn ack, aqt_kill9_when_fn kill_now, int kill_after, void *arg,
	      bool *killed);
/* For a child: write one ack; false when the parent is gone. */
bool aqt_kill9_ack(int ack_fd, int a, int b);

#endif
