/* db_sqlite_int: what the SQLite engine's files share (db_sqlite.c, the
 * connection, its statement cache, documents, listings, dirty marks and
 * db_each; db_sqlite_agg.c, the counts, sums, aggregates, usage counters
 * and field listings). Not for use outside db/. Each function returns
 * AQ_OK or an aq_err code as db.h describes; the db_sq_ ops below are
 * db_ops entries (db_engine.h), called by db.c with arguments checked.
 */
#ifndef AQ_DB_SQLITE_INT_H
#define AQ_DB_SQLITE_INT_H

#include <sqlite3.h>

#include "db/db_engine.h"

/* The engine's error rc (a SQLite code) as an aq_err code (busy or
 * locked: AQ_EBUSY), the database's text to msg (may be NULL). */
int db_sq_err(struct db *db, int rc, aq_msg *msg);
/* A statement for sql, from the connection's cache when it holds one; give
 * it back with db_sq_finish (NULL is fine: a cached one is reset for its
 * next use, another finalized). */
int db_sq_prepare(struct db *db, const char *sql, sqlite3_stmt **st);
void db_sq_finish(struct db *db, sqlite3_stmt *st);
/* Step a statement that must give one row (a scalar query): AQ_OK on it,
 * else the database's error. */
int db_sq_step_row(struct db *db, sqlite3_stmt *st);
/* "$.a.b", the json_extract path of a field path db.c checked. */
void db_sq_path(const char *field, char *out, size_t cap);
/* Step st (prepared and bound), handing each row's first two text columns
 * to fn until it returns other than AQ_OK (that code is returned);
 * finishes st. */
int db_sq_pairs(struct db *db, sqlite3_stmt *st, db_row_fn fn, void *arg);

/* db_sqlite_agg.c: the db_ops entries of the same names. */
int db_sq_scalar(struct db *db, const char *kind, const char *parent, const char *field, double *out);
int db_sq_sum_by_parent(struct db *db, const char *kind, const char *field, const char *parent_kind,
			const char *grandparent, json_t *sums);
int db_sq_aggregate(struct db *db, const char *kind, const char *parent, const char *where_field,
		    const char *where_value, const char *const *fields, int n, int64_t *count, double *sums);
int db_sq_share_count(struct db *db, const char *location, const char *share, int64_t *n);
int db_sq_count_kinds(struct db *db, void (*fn)(const char *kind, int64_t n, void *arg), void *arg);
int db_sq_usage_get(struct db *db, const char *name, struct db_usage *u);
int db_sq_usage_each(struct db *db, const char *prefix, db_usage_fn fn, void *arg);
int db_sq_usage_location(struct db *db, const char *pool_infix, const char *node_parent, db_usage_fn fn,
			 void *arg);
int db_sq_fields(struct db *db, const char *kind, const char *kind2, const char *parent,
		 const char *const *fields, int n, db_row_fn fn, void *arg);

#endif
