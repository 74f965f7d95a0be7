/* db_engine: what db.c (the engine-neutral half of db.h) shares with the
 * engines, db_sqlite.c and db_pg.c. Not for use outside db/.
 *
 * db.c owns everything both engines do alike: the open dispatch by URL,
 * the numbered migrations' loop, the process's writer mutex, the document
 * cache's commit-ordered publication, filter parsing and page tokens. An
 * engine runs SQL: it fills a struct db_ops and embeds struct db first in
 * its own connection struct.
 */
#ifndef AQ_DB_ENGINE_H
#define AQ_DB_ENGINE_H

#include "db/db.h"
#include "util/ut_fifo.h"

enum db_kind { DB_SQLITE, DB_PG, DB_NKINDS };

#define DB_MAX_PAGE 1000
#define DB_MAX_FILTER_TERMS 8
#define DB_MAX_AGG 8
#define DB_NAME_MAX 512

struct db {
	const struct db_ops *ops;
	bool in_tx;
	uint64_t commit_seq; /* this connection's last commit (db.c's group commit) */
	uint64_t commit_epoch; /* db_epoch_bump's count when it was written (db.c) */
	struct ut_fifo pending; /* writes of the open transaction, for the cache (db.c) */
	struct db_puts *puts;   /* inserts held for one db_puts_send (db_puts.c), or NULL */
};

/* An insert db_put holds while a batch is open (db_puts_start): its own
 * copies of the inputs, the document as text. */
#define DB_PUTS_MAX 8
struct db_put_q {
	char *kind, *parent, *name, *text;
};
struct db_puts {
	int n;
	struct db_put_q q[DB_PUTS_MAX];
};

/* A parsed list filter: up to DB_MAX_FILTER_TERMS "path=value" terms. path
 * is letters, digits, '_' and inner single dots; a bare true/false value
 * compares as 1/0 (SQLite's json_extract gives JSON booleans so). */
struct db_filter {
	int n;
	char path[DB_MAX_FILTER_TERMS][80];
	char value[DB_MAX_FILTER_TERMS][256];
	bool quoted[DB_MAX_FILTER_TERMS];
};

/* One row of a listing: return AQ_OK for more, 1 to stop, or an error. */
typedef int (*db_row_fn)(void *arg, const char *name, const char *doc);

/* db_reads as db.c hands it to an engine's reads op: r is the caller's
 * (db.h, struct db_reads: its inputs are read from there, one definition);
 * each read is made when its input is set (names_json for r->names,
 * r->share, r->parent, pool_infix for r->usage_loc), with the same SQL and
 * row handling as the engine's own get_many, share_count, fields and
 * usage_location, its rows to many_fn(docs), fields_fn(rows) and
 * r->usage_fn(r->usage_arg); share_n is set by the engine. db_reads
 * publishes docs, rows and share_n to r only when every read succeeded. */
struct db_reads_engine {
	const struct db_reads *r;
	char *names_json;
	json_t *docs, *rows;
	int64_t share_n;
	db_row_fn many_fn, fields_fn;
	const char *pool_infix, *node_parent;
};

/* The engine's half of each db.h call; db.c has already checked arguments,
 * holds the writer mutex where db.h says so and keeps the cache. Every
 * call returns AQ_OK or an aq_err code as db.h describes. */
struct db_ops {
	enum db_kind kind;
	const char *name;
	void (*close)(struct db *db);
	/* A transaction that sees every commit made before it and keeps its
	 * guarantees against any other writer (SQLite: BEGIN IMMEDIATE;
	 * PostgreSQL: SERIALIZABLE, a conflict is AQ_EBUSY). */
	int (*begin)(struct db *db);
	int (*commit)(struct db *db);
	void (*rollback)(struct db *db);
	/* NULL when commit returns only once the transaction is on disk.
	 * Else commit only writes the log (SQLite WAL with synchronous=NORMAL;
	 * PostgreSQL with synchronous_commit off) and sync makes durable
	 * everything committed through any connection of the database before
	 * it began: db.c calls it without the writer mutex, for a group of
	 * commits (group commit). */
	int (*sync)(struct db *db);
	/* NULL or housekeeping the thread that ran sync does next, without the
	 * writer mutex and after the commits it covered were released
	 * (SQLite: the WAL checkpoint, kept out of every COMMIT). */
	void (*after_sync)(struct db *db);
	/* Migrations. schema_lock/schema_unlock (NULL when begin already
	 * excludes every other migrator, as SQLite's write lock does) bracket
	 * the migration's transaction, so that two openers migrate one after
	 * the other and the second sees what the first committed. Inside
	 * begin/commit: the version the database is at, one step's script,
	 * and the version it is now at. */
	int (*schema_lock)(struct db *db, aq_msg *msg);
	void (*schema_unlock)(struct db *db);
	int (*schema_get)(struct db *db, int *version, aq_msg *msg);
	int (*script)(struct db *db, const char *sql, aq_msg *msg);
	int (*schema_set)(struct db *db, int version, const char *what, aq_msg *msg);
	/* name's committed-or-own JSON text, malloc'd */
	int (*get)(struct db *db, const char *name, char **text, size_t *len);
	/* every row whose name is in names_json (a JSON array text), to fn */
	int (*get_many)(struct db *db, const char *names_json, db_row_fn fn, void *arg);
	/* every distinct parent in names_json that has a row of kind, to fn
	 * (its doc argument NULL) */
	int (*parents_with)(struct db *db, const char *kind, const char *names_json, db_row_fn fn, void *arg);
	int (*put)(struct db *db, const char *kind, const char *parent, const char *name,
		   const char *text, bool create);
	int (*del)(struct db *db, const char *name);
	/* Rows of q (filter f; after: "" or the last name of the previous page)
	 * in q's order, at most max_rows, each to fn. */
	int (*list)(struct db *db, const struct db_query *q, const struct db_filter *f,
		    const char *after, int max_rows, db_row_fn fn, void *arg, aq_msg *msg);
	/* COUNT(*) when field is NULL, else the sum of a numeric JSON field */
	int (*scalar)(struct db *db, const char *kind, const char *parent, const char *field,
		      double *out);
	int (*sum_by_parent)(struct db *db, const char *kind, const char *field,
			     const char *parent_kind, const char *grandparent, json_t *sums);
	int (*aggregate)(struct db *db, const char *kind, const char *parent,
			 const char *where_field, const char *where_value, const char *const *fields,
			 int n, int64_t *count, double *sums);
	int (*share_count)(struct db *db, const char *location, const char *share, int64_t *n);
	int (*count_kinds)(struct db *db, void (*fn)(const char *kind, int64_t n, void *arg),
			   void *arg);
	/* db.h's usage counters: one row (zeros when none), and every row whose
	 * name starts with prefix, in name order */
	int (*usage_get)(struct db *db, const char *name, struct db_usage *u);
	int (*usage_each)(struct db *db, const char *prefix, db_usage_fn fn, void *arg);
	/* db_usage_location: every row whose name starts with "projects/" and
	 * contains pool_infix ("/locations/<loc>/storagePools/"), and every
	 * row named after a node resource under node_parent ("locations/<loc>") */
	int (*usage_location)(struct db *db, const char *pool_infix, const char *node_parent, db_usage_fn fn,
			      void *arg);
	/* db_list_fields: every row of kind or kind2 (the same for one kind)
	 * under parent in name order, to fn with doc a JSON object of the n
	 * top-level fields (checked by db.c: letters, digits, '_') */
	int (*fields)(struct db *db, const char *kind, const char *kind2, const char *parent,
		      const char *const *fields, int n, db_row_fn fn, void *arg);
	/* db_reads: NULL runs the reads above one after another (SQLite,
	 * where nothing waits for a server); else all of e's at once */
	int (*reads)(struct db *db, struct db_reads_engine *e);
	/* db_puts_send: NULL runs each insert through put, one after another
	 * (SQLite); else all n at once. AQ_OK, or the first failure with its
	 * index in *failed (AQ_EEXIST: that name exists; later ones may have
	 * been written: the caller rolls back) */
	int (*puts)(struct db *db, const struct db_put_q *q, int n, int *failed);
	/* db.h's dirty marks: every mark to fn (name: the node, doc: the
	 * mark as decimal text); delete node's mark when it is still mark */
	int (*dirty_each)(struct db *db, db_row_fn fn, void *arg);
	int (*dirty_clear)(struct db *db, const char *node, int64_t mark);
	/* one more mark for node, in the open transaction */
	int (*dirty_mark)(struct db *db, const char *node);
	/* Every resource in seq order, each to fn, in one statement (one
	 * snapshot of the database) */
	int (*each)(struct db *db, db_each_fn fn, void *arg, aq_msg *msg);
};

/* The durability of every commit written so far is unknown (a
 * PostgreSQL connection re-established: its server may have restarted and
 * lost the commits it had not flushed): db.c answers them AQ_EIO. */
void db_epoch_bump(void);

/* Count one statement handed to the engine (db_sync_stats' statements):
 * each engine calls it once per statement it runs. */
void db_stmt_note(void);
/* n statements sent together, answered in one wait (a pipeline) */
void db_stmt_note_batch(unsigned n);
/* A write of the open transaction, for the cache once it commits (db.c) */
void db_pending_add(struct db *db, const char *name, const char *text);
/* db_put's insert held by the open batch (db_puts.c); takes text */
int db_puts_add(struct db *db, const char *kind, const char *parent, const char *name, char *text);

/* db.c's row handlers, shared with db_reads.c: a (name, JSON text) row
 * into the object arg ({name: doc}, db_get_many) or appended to the array
 * arg with its name (db_list_fields2); and db_list_fields2's check of its
 * field names (1..DB_MAX_AGG of letters, digits, '_'). */
int db_many_row(void *arg, const char *name, const char *text);
int db_fields_row(void *arg, const char *name, const char *text);
bool db_fields_ok(const char *const *fields, int n);

/* The engines' openers: a connected, not yet migrated struct db. */
int db_sqlite_open(const char *path, struct db **out, aq_msg *msg);
int db_pg_open(const char *url, struct db **out, aq_msg *msg);

/* The numbered migrations (db_migrations.c): step i brings the schema from
 * version i to i+1 on either engine; db_schema_version steps in all. */
struct db_step {
	const char *what;
	const char *sql[DB_NKINDS];
};
extern const struct db_step db_steps[];

/* A JSON field path of a filter or aggregate is letters, digits, '_' and
 * inner single dots, so it can go into SQL text as is. */
bool db_path_ok(const char *path);

#endif
