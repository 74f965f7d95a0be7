/* db_pg_int: what the PostgreSQL engine's files share (db_pg.c, the
 * connection and its statements; db_pg_pipe.c, db_reads' pipeline). Not
 * for use outside db/.
 */
#ifndef AQ_DB_PG_INT_H
#define AQ_DB_PG_INT_H

#include <libpq-fe.h>

#include "db/db_engine.h"

/* Statements are prepared once per connection (named, PQprepare) and run
 * with PQexecPrepared after that, so the server parses and plans each
 * once, not at every call: keyed by their SQL text like SQLite's cache,
 * PG_CACHE of them; a statement built with varying text beyond that runs
 * unnamed (PQexecParams). A mended connection (PQreset) starts empty. */
#define PG_CACHE 64

struct pg_cached {
	char *sql;
	unsigned long hash;
};

struct db_pg {
	struct db base; /* first: a struct db * is a struct db_pg * */
	PGconn *c;
	int ncached;
	struct pg_cached cache[PG_CACHE];
	/* SQLSTATE of a statement that failed in the open transaction: its
	 * COMMIT then only rolls back, and says which failure it was */
	char failed[8];
	/* the schema is migrated: this session commits with synchronous_commit
	 * off, db.c's group commit flushing (pg_sync) */
	bool async;
};

/* db_put's insert (create), which db_puts_send pipelines */
#define DB_PG_SQL_INSERT "INSERT INTO resources (name, kind, parent, doc) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING"
/* The reads db_reads pipelines, the same text as their own calls run. */
#define DB_PG_SQL_GET_MANY "SELECT name, doc FROM resources WHERE name IN (SELECT json_array_elements_text($1::json))"
#define DB_PG_SQL_SHARE_COUNT                                                                          \
	"SELECT COUNT(*) FROM resources WHERE kind = 'volume' AND parent IN"                           \
	" (SELECT name || '/locations/' || $1 FROM resources WHERE kind = 'project')"                   \
	" AND doc ->> 'shareName' = $2"
#define DB_PG_USAGE_COLS "SELECT name, n, capacity_gib, mibps, cold_gib, hot_gib FROM usage"
#define DB_PG_SQL_USAGE_LOCATION                                                                       \
	DB_PG_USAGE_COLS " WHERE (starts_with(name, 'projects/') AND strpos(name, $1) > 0)"              \
			 " OR name IN (SELECT name FROM resources WHERE kind = 'node' AND parent = $2) OR name = 'placever/' || $2 ORDER BY name"

/* Prepare sql on p's connection once (cached by its text): true and its
 * statement name in name, or false when it is not (and cannot be) cached,
 * to be run unnamed. Not in pipeline mode (PQprepare waits). */
bool db_pg_prepare(struct db_pg *p, const char *sql, int n, char name[16]);
/* A broken connection between transactions is re-established. */
void db_pg_mend(struct db *db);
/* A failed result (or NULL: the connection's error) as an aq_err code,
 * the first failure of a transaction remembered (db_pg.c). */
int db_pg_fail(struct db *db, const PGresult *res, aq_msg *msg);
/* Each (name, doc) row of res to fn; fn's first non-AQ_OK result. */
int db_pg_rows(PGresult *res, db_row_fn fn, void *arg);
/* Each row of a DB_PG_USAGE_COLS query to fn. */
void db_pg_usage_rows(PGresult *res, db_usage_fn fn, void *arg);
/* db_list_fields2's SQL for n checked field names ($1 kind, $2 parent,
 * $3 kind2). */
void db_pg_fields_sql(const char *const *fields, int n, char *sql, size_t cap);
/* The engine's reads op (db_pg_pipe.c). */
int db_pg_reads(struct db *db, struct db_reads_engine *e);
/* The engine's puts op (db_pg_pipe.c). */
int db_pg_puts(struct db *db, const struct db_put_q *q, int n, int *failed);

#endif
