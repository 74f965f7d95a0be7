/* db_sqlite: the SQLite engine behind db.h (see db_engine.h).
 *
 * WAL mode with synchronous=NORMAL and group commit (db.c): COMMIT appends
 * the transaction's frames to the WAL with write() and returns without an
 * fsync, so the process's writer mutex is held for the statements only;
 * sq_sync then fsyncs the WAL once for every commit written before it, and
 * db_commit() returns (the request is acknowledged) only after that. With
 * synchronous=FULL every COMMIT fsyncs under the lock, one commit per
 * fsync: 116 creates/s (bench/api). Why this shape rather than one writer
 * connection batching requests in SAVEPOINTs: handlers keep their own
 * connection and transaction as they are, a failing request needs no
 * savepoint bookkeeping, and every guarantee of BEGIN IMMEDIATE (one
 * writer at a time, check-then-apply) is unchanged. What it costs: other
 * connections can read a commit for the length of one fsync before it is
 * durable (an OS crash or power loss in that window loses it, and a reader
 * may have seen it; no client was told it succeeded). A kill -9 of the
 * process loses nothing written: the frames are in the kernel's page cache.
 * NORMAL still fsyncs the WAL before each checkpoint and the database
 * after it, so a checkpoint never loses synced commits. The schema
 * version is SQLite's user_version, which every file so far carries; the
 * schema itself is db_migrations.c's.
 */
#include "db/db_sqlite_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* Prepared statements are kept per connection, keyed by their SQL text: a
 * create runs some twenty statements, and preparing each again was a sixth
 * of its time (bench/api). Statements built with varying text (listings
 * with filters) take a slot while there are free ones and are prepared
 * per call after that; a cached statement already stepping (a listing
 * whose callback reads again) is not shared: the second user gets its own. */
#define SQ_CACHE 64

struct sq_cached {
	char *sql;
	unsigned long hash;
	sqlite3_stmt *st;
	bool busy;
};

/* WAL checkpoints: SQLite's automatic one runs inside the COMMIT that
 * pushes the WAL past 1,000 pages, i.e. under the process's writer mutex,
 * with two fsyncs (WAL, database): every ~50 creates one of them held every
 * writer up. Here the WAL hook only notes its size, and the thread that
 * just ran a group commit's sync checkpoints (PASSIVE: it never waits for
 * or blocks a writer) once it passed SQ_CHECKPOINT_FRAMES. */
#define SQ_CHECKPOINT_FRAMES 1000

struct db_sqlite {
	struct db base; /* first: a struct db * is a struct db_sqlite * */
	sqlite3 *h;
	int wal_frames; /* the WAL's size after this connection's last commit */
	int ncached;
	struct sq_cached cache[SQ_CACHE];
};

#define DB_BUSY_MS 10000

static sqlite3 *sq(struct db *db)
{
	return ((struct db_sqlite *)db)->h;
}

int db_sq_err(struct db *db, int rc, aq_msg *msg)
{
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return aq_fail(msg, AQ_EBUSY, "database is busy, retry");
	return aq_fail(msg, AQ_EIO, "database error: %s", sqlite3_errmsg(sq(db)));
}

static int sq_exec(struct db *db, const char *sql, aq_msg *msg)
{
	char *err = NULL;
	int rc = sqlite3_exec(sq(db), sql, NULL, NULL, &err);

	db_stmt_note();
	if (rc != SQLITE_OK) {
		rc = (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			     ? aq_fail(msg, AQ_EBUSY, "database is busy, retry")
			     : aq_fail(msg, AQ_EIO, "database error: %s", err ? err : "?");
		sqlite3_free(err);
		return rc;
	}
	return AQ_OK;
}

static unsigned long sq_hash(const char *s)
{
	unsigned long h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* A statement for sql, from the connection's cache when it holds one; give
 * it back with db_sq_finish. */
int db_sq_prepare(struct db *db, const char *sql, sqlite3_stmt **st)
{
	struct db_sqlite *s = (struct db_sqlite *)db;
	unsigned long h = sq_hash(sql);
	struct sq_cached *c;
	int rc;

	db_stmt_note(); /* every statement run comes here first */
	for (int i = 0; i < s->ncached; i++) {
		c = &s->cache[i];
		if (c->hash == h && !c->busy && strcmp(c->sql, sql) == 0) {
			c->busy = true;
			*st = c->st;
			return AQ_OK;
		}
	}
	if (s->ncached < SQ_CACHE) {
		c = &s->cache[s->ncached];
		if (!(c->sql = strdup(sql)))
			return AQ_ENOMEM;
		rc = sqlite3_prepare_v3(sq(db), sql, -1, SQLITE_PREPARE_PERSISTENT, &c->st, NULL);
		if (rc != SQLITE_OK) {
			free(c->sql);
			c->sql = NULL;
			return db_sq_err(db, rc, NULL);
		}
		c->hash = h;
		c->busy = true;
		s->ncached++;
		*st = c->st;
		return AQ_OK;
	}
	rc = sqlite3_prepare_v2(sq(db), sql, -1, st, NULL);
	return rc == SQLITE_OK ? AQ_OK : db_sq_err(db, rc, NULL);
}

/* Give back a statement of db_sq_prepare (NULL is fine): a cached one is reset
 * for its next use, another finalized. */
void db_sq_finish(struct db *db, sqlite3_stmt *st)
{
	struct db_sqlite *s = (struct db_sqlite *)db;

	if (!st)
		return;
	for (int i = 0; i < s->ncached; i++)
		if (s->cache[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			s->cache[i].busy = false;
			return;
		}
	sqlite3_finalize(st);
}

/* Run a statement without parameters or rows, cached. */
static int sq_simple(struct db *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_sq_prepare(db, sql, &st)) != AQ_OK)
		return rc;
	if ((s = sqlite3_step(st)) != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	db_sq_finish(db, st);
	return rc;
}

/* Step a statement that must give one row (a scalar query): AQ_OK on it,
 * else the database's error. */
int db_sq_step_row(struct db *db, sqlite3_stmt *st)
{
	return sqlite3_step(st) == SQLITE_ROW ? AQ_OK : db_sq_err(db, sqlite3_errcode(sq(db)), NULL);
}

/* "$.a.b", the json_extract path of a field path db.c checked */
void db_sq_path(const char *field, char *out, size_t cap)
{
	snprintf(out, cap, "$.%s", field);
}

static void sq_close(struct db *db)
{
	struct db_sqlite *s = (struct db_sqlite *)db;

	for (int i = 0; i < s->ncached; i++) {
		sqlite3_finalize(s->cache[i].st);
		free(s->cache[i].sql);
	}
	sqlite3_close(sq(db));
	free(db);
}

static int sq_begin(struct db *db)
{
	return sq_simple(db, "BEGIN IMMEDIATE");
}

static int sq_commit(struct db *db)
{
	return sq_simple(db, "COMMIT");
}

static void sq_rollback(struct db *db)
{
	sq_simple(db, "ROLLBACK");
}

/* fsync this connection's handle on the WAL: the file is one inode for
 * every connection, so this covers the frames of every commit any of them
 * wrote before. Called by a thread that has just committed on db, so the
 * WAL is open. */
static int sq_sync(struct db *db)
{
	sqlite3_file *wal = NULL;

	if (sqlite3_file_control(sq(db), "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
	    !wal || !wal->pMethods)
		return AQ_EIO;
	return wal->pMethods->xSync(wal, SQLITE_SYNC_FULL) == SQLITE_OK ? AQ_OK : AQ_EIO;
}

static int sq_wal_hook(void *arg, sqlite3 *h, const char *name, int frames)
{
	(void)h;
	(void)name;
	((struct db_sqlite *)arg)->wal_frames = frames;
	return SQLITE_OK;
}

static void sq_after_sync(struct db *db)
{
	struct db_sqlite *s = (struct db_sqlite *)db;

	if (s->wal_frames < SQ_CHECKPOINT_FRAMES)
		return;
	s->wal_frames = 0;
	/* SQLITE_BUSY (another checkpoint runs) is fine: the next one does it */
	sqlite3_wal_checkpoint_v2(s->h, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

static int sq_schema_get(struct db *db, int *version, aq_msg *msg)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = db_sq_prepare(db, "PRAGMA user_version", &st)) != AQ_OK || (rc = db_sq_step_row(db, st)) != AQ_OK) {
		aq_fail(msg, rc, "cannot read the schema version: %s", sqlite3_errmsg(sq(db)));
		goto out;
	}
	*version = sqlite3_column_int(st, 0);
out:
	db_sq_finish(db, st);
	return rc;
}

static int sq_script(struct db *db, const char *sql, aq_msg *msg)
{
	return sq_exec(db, sql, msg);
}

static int sq_schema_set(struct db *db, int version, const char *what, aq_msg *msg)
{
	char sql[64];

	(void)what; /* user_version is one number */
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
	return sq_exec(db, sql, msg);
}

/* The stored text of document name: AQ_OK with *st on its row (column 0),
 * AQ_ENOENT, or the database's error. The caller finalizes *st either way. */
static int sq_doc_row(struct db *db, const char *name, sqlite3_stmt **st)
{
	int rc;

	if ((rc = db_sq_prepare(db, "SELECT doc FROM resources WHERE name = ?", st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(*st, 1, name, -1, SQLITE_STATIC);
	switch (sqlite3_step(*st)) {
	case SQLITE_ROW:
		return AQ_OK;
	case SQLITE_DONE:
		return AQ_ENOENT;
	default:
		return db_sq_err(db, sqlite3_errcode(sq(db)), NULL);
	}
}

static int sq_get(struct db *db, const char *name, char **text, size_t *len)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = sq_doc_row(db, name, &st)) != AQ_OK)
		goto out;
	*len = (size_t)sqlite3_column_bytes(st, 0);
	if (!(*text = malloc(*len + 1))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	memcpy(*text, sqlite3_column_text(st, 0), *len + 1);
out:
	db_sq_finish(db, st);
	return rc;
}

/* Step st (prepared and bound), handing each row's first two text columns to
 * fn until it returns other than AQ_OK (that code is returned); finishes st. */
int db_sq_pairs(struct db *db, sqlite3_stmt *st, db_row_fn fn, void *arg)
{
	int rc = AQ_OK, s;

	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = fn(arg, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1))) != AQ_OK)
			break;
	if (rc == AQ_OK && s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	db_sq_finish(db, st);
	return rc;
}

static int sq_get_many(struct db *db, const char *names_json, db_row_fn fn, void *arg)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = db_sq_prepare(db, "SELECT name, doc FROM resources WHERE name IN (SELECT value FROM json_each(?1))",
			     &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, names_json, -1, SQLITE_STATIC);
	return db_sq_pairs(db, st, fn, arg);
}

static int sq_parents_with(struct db *db, const char *kind, const char *names_json, db_row_fn fn, void *arg)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_sq_prepare(db, "SELECT DISTINCT parent FROM resources WHERE kind = ?1 AND parent IN"
				 " (SELECT value FROM json_each(?2))", &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, names_json, -1, SQLITE_STATIC);
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = fn(arg, (const char *)sqlite3_column_text(st, 0), NULL)) != AQ_OK)
			break;
	if (rc == AQ_OK && s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	db_sq_finish(db, st);
	return rc;
}

static int sq_put(struct db *db, const char *kind, const char *parent, const char *name,
		  const char *text, bool create)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	rc = db_sq_prepare(db,
			create ? "INSERT INTO resources(name, kind, parent, seq, doc) VALUES"
				 " (?1, ?2, ?3, (SELECT IFNULL(MAX(rowid), 0) + 1 FROM resources), ?4)"
			       : "UPDATE resources SET kind = ?2, parent = ?3, doc = ?4 WHERE name = ?1",
			&st);
	if (rc != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, parent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, text, -1, SQLITE_STATIC);
	s = sqlite3_step(st);
	if (s == SQLITE_CONSTRAINT)
		rc = AQ_EEXIST;
	else if (s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	else if (!create && sqlite3_changes(sq(db)) == 0)
		rc = AQ_ENOENT;
out:
	db_sq_finish(db, st);
	return rc;
}

static int sq_del(struct db *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_sq_prepare(db, "DELETE FROM resources WHERE name = ?", &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	s = sqlite3_step(st);
	if (s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	else if (sqlite3_changes(sq(db)) == 0)
		rc = AQ_ENOENT;
out:
	db_sq_finish(db, st);
	return rc;
}

static int sq_list(struct db *db, const struct db_query *q, const struct db_filter *f,
		   const char *after, int max_rows, db_row_fn fn, void *arg, aq_msg *msg)
{
	char sql[2048];
	size_t off = 0;
	sqlite3_stmt *st = NULL;
	int rc, bind = 1, s;

	off += (size_t)snprintf(sql + off, sizeof(sql) - off,
				"SELECT name, doc FROM resources WHERE kind = ?");
	if (q->parent)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, " AND parent = ?");
	else if (q->parent_prefix)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, " AND substr(parent, 1, ?) = ?");
	if (*after)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, " AND name %s ?",
					q->order_desc ? "<" : ">");
	for (int i = 0; i < f->n; i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off,
					" AND CAST(json_extract(doc, ?) AS TEXT) IS ?");
	snprintf(sql + off, sizeof(sql) - off, " ORDER BY name %s LIMIT %d",
		 q->order_desc ? "DESC" : "ASC", max_rows);
	if ((rc = db_sq_prepare(db, sql, &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, bind++, q->kind, -1, SQLITE_STATIC);
	if (q->parent) {
		sqlite3_bind_text(st, bind++, q->parent, -1, SQLITE_STATIC);
	} else if (q->parent_prefix) {
		sqlite3_bind_int(st, bind++, (int)strlen(q->parent_prefix));
		sqlite3_bind_text(st, bind++, q->parent_prefix, -1, SQLITE_STATIC);
	}
	if (*after)
		sqlite3_bind_text(st, bind++, after, -1, SQLITE_STATIC);
	for (int i = 0; i < f->n; i++) {
		char path[96];

		db_sq_path(f->path[i], path, sizeof(path));
		sqlite3_bind_text(st, bind++, path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, bind++, f->value[i], -1, SQLITE_STATIC);
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = fn(arg, (const char *)sqlite3_column_text(st, 0),
			     (const char *)sqlite3_column_text(st, 1))) != AQ_OK)
			break;
	if (rc > 0)
		rc = AQ_OK; /* fn had enough */
	else if (rc == AQ_OK && s != SQLITE_DONE)
		rc = db_sq_err(db, s, msg);
out:
	db_sq_finish(db, st);
	return rc;
}

static int sq_dirty_each(struct db *db, db_row_fn fn, void *arg)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = db_sq_prepare(db, "SELECT node, CAST(mark AS TEXT) FROM dirty", &st)) != AQ_OK)
		return rc;
	return db_sq_pairs(db, st, fn, arg);
}

static int sq_dirty_clear(struct db *db, const char *node, int64_t mark)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_sq_prepare(db, "DELETE FROM dirty WHERE node = ?1 AND mark = ?2", &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, mark);
	if ((s = sqlite3_step(st)) != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	db_sq_finish(db, st);
	return rc;
}

static int sq_dirty_mark(struct db *db, const char *node)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_sq_prepare(db, "INSERT INTO dirty VALUES (?1, 1) ON CONFLICT(node) DO UPDATE SET mark = mark + 1", &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
	if ((s = sqlite3_step(st)) != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	db_sq_finish(db, st);
	return rc;
}

static int sq_each(struct db *db, db_each_fn fn, void *arg, aq_msg *msg)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_sq_prepare(db, "SELECT kind, parent, name, doc FROM resources ORDER BY seq", &st)) != AQ_OK)
		return rc;
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = fn(arg, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
			     (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3))) != AQ_OK)
			break;
	if (rc == AQ_OK && s != SQLITE_DONE)
		rc = db_sq_err(db, s, msg);
	db_sq_finish(db, st);
	return rc;
}

static const struct db_ops sq_ops = {
	.kind = DB_SQLITE,
	.name = "sqlite",
	.close = sq_close,
	.begin = sq_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.sync = sq_sync,
	.after_sync = sq_after_sync,
	.schema_get = sq_schema_get,
	.script = sq_script,
	.schema_set = sq_schema_set,
	.get = sq_get,
	.get_many = sq_get_many,
	.parents_with = sq_parents_with,
	.put = sq_put,
	.del = sq_del,
	.list = sq_list,
	.scalar = db_sq_scalar,
	.sum_by_parent = db_sq_sum_by_parent,
	.aggregate = db_sq_aggregate,
	.share_count = db_sq_share_count,
	.count_kinds = db_sq_count_kinds,
	.usage_get = db_sq_usage_get,
	.usage_each = db_sq_usage_each,
	.usage_location = db_sq_usage_location,
	.fields = db_sq_fields,
	.dirty_each = sq_dirty_each,
	.dirty_clear = sq_dirty_clear,
	.dirty_mark = sq_dirty_mark,
	.each = sq_each,
};

int db_sqlite_open(const char *path, struct db **out, aq_msg *msg)
{
	struct db_sqlite *s = calloc(1, sizeof(*s));
	int rc = AQ_OK;

	if (!s)
		return AQ_ENOMEM;
	s->base.ops = &sq_ops;
	if (sqlite3_open_v2(path, &s->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		rc = aq_fail(msg, AQ_EIO, "cannot open database %s: %s", path,
			     s->h ? sqlite3_errmsg(s->h) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(s->h, DB_BUSY_MS);
	/* replaces the automatic checkpoint (see SQ_CHECKPOINT_FRAMES) */
	sqlite3_wal_hook(s->h, sq_wal_hook, s);
	if ((rc = sq_exec(&s->base, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			      " PRAGMA foreign_keys=ON;", msg)) != AQ_OK)
		goto out;
	*out = &s->base;
	s = NULL;
out:
	if (s)
		sq_close(&s->base);
	return rc;
}
