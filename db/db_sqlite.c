/* db_sqlite: the SQLite engine behind db.h.
 *
 * One table holds every resource as a JSON document; kind and parent are
 * indexed for listing, seq keeps insertion order for counting and debugging.
 * WAL mode with synchronous=FULL: a commit that returned is on disk, so a
 * kill -9 right after an acknowledged request loses nothing.
 */
#define _GNU_SOURCE /* memmem */
#include "db/db.h"
#include "db/db_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "util/ut_fifo.h"
#include "util/ut_hex.h"

/* A write waiting for its transaction to commit before the cache sees it. */
struct db_pending {
	struct ut_fifo_node node;
	char *name;
	char *text;  /* NULL: deleted */
};

struct db {
	sqlite3 *h;
	bool in_tx;
	struct ut_fifo pending;  /* of struct db_pending, in write order */
};

/* Numbered migrations: index i brings the schema from version i to i+1. */
static const char *const db_migrations[] = {
	/* 1: resources */
	"CREATE TABLE resources ("
	"  name TEXT PRIMARY KEY,"
	"  kind TEXT NOT NULL,"
	"  parent TEXT NOT NULL,"
	"  seq INTEGER NOT NULL,"
	"  doc TEXT NOT NULL"
	");"
	"CREATE INDEX resources_kind_parent ON resources(kind, parent, name);"
	"CREATE INDEX resources_kind_name ON resources(kind, name);",
	/* 2: volumes by pool, for the pool's sums */
	"CREATE INDEX resources_volume_pool ON resources(parent, json_extract(doc, '$.storagePool'))"
	" WHERE kind = 'volume';",
	/* 3: volumes by share name (unique per location) */
	"CREATE INDEX resources_volume_share ON resources(parent, json_extract(doc, '$.shareName'))"
	" WHERE kind = 'volume';",
};

const int db_schema_version = (int)(sizeof(db_migrations) / sizeof(db_migrations[0]));

#define DB_BUSY_MS 10000
#define DB_MAX_PAGE 1000
#define DB_MAX_FILTER_TERMS 8

static int db_err(struct db *db, int rc, aq_msg *msg)
{
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return aq_fail(msg, AQ_EBUSY, "database is busy, retry");
	return aq_fail(msg, AQ_EIO, "database error: %s", sqlite3_errmsg(db->h));
}

static int db_exec(struct db *db, const char *sql, aq_msg *msg)
{
	char *err = NULL;
	int rc = sqlite3_exec(db->h, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK) {
		rc = (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			     ? aq_fail(msg, AQ_EBUSY, "database is busy, retry")
			     : aq_fail(msg, AQ_EIO, "database error: %s", err ? err : "?");
		sqlite3_free(err);
		return rc;
	}
	return AQ_OK;
}

static int db_prepare(struct db *db, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(db->h, sql, -1, st, NULL);

	return rc == SQLITE_OK ? AQ_OK : db_err(db, rc, NULL);
}

/* Step a statement that must give one row (a scalar query): AQ_OK on it,
 * else the database's error. */
static int db_step_row(struct db *db, sqlite3_stmt *st)
{
	return sqlite3_step(st) == SQLITE_ROW ? AQ_OK : db_err(db, sqlite3_errcode(db->h), NULL);
}

static int db_user_version(struct db *db, int *version)
{
	sqlite3_stmt *st = NULL;
	int rc = AQ_OK;

	if ((rc = db_prepare(db, "PRAGMA user_version", &st)) != AQ_OK || (rc = db_step_row(db, st)) != AQ_OK)
		goto out;
	*version = sqlite3_column_int(st, 0);
out:
	sqlite3_finalize(st);
	return rc;
}

static int db_migrate(struct db *db, aq_msg *msg)
{
	int rc, version = 0;
	char sql[64];

	if ((rc = db_exec(db, "BEGIN IMMEDIATE", msg)) != AQ_OK)
		return rc;
	if ((rc = db_user_version(db, &version)) != AQ_OK)
		goto out;
	if (version > db_schema_version) {
		rc = aq_fail(msg, AQ_EINVAL, "database schema version %d is newer than this program (%d)",
			     version, db_schema_version);
		goto out;
	}
	for (; version < db_schema_version; version++)
		if ((rc = db_exec(db, db_migrations[version], msg)) != AQ_OK)
			goto out;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
	if ((rc = db_exec(db, sql, msg)) != AQ_OK)
		goto out;
	rc = db_exec(db, "COMMIT", msg);
out:
	if (rc != AQ_OK)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int db_open(const char *path, struct db **out, aq_msg *msg)
{
	struct db *db = calloc(1, sizeof(*db));
	int rc = AQ_OK;

	if (!db)
		return AQ_ENOMEM;
	ut_fifo_init(&db->pending);
	if (sqlite3_open_v2(path, &db->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		rc = aq_fail(msg, AQ_EIO, "cannot open database %s: %s", path,
			     db->h ? sqlite3_errmsg(db->h) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(db->h, DB_BUSY_MS);
	if ((rc = db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
			      " PRAGMA foreign_keys=ON;", msg)) != AQ_OK)
		goto out;
	if ((rc = db_migrate(db, msg)) != AQ_OK)
		goto out;
	*out = db;
	db = NULL;
out:
	db_close(db);
	return rc;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	db_rollback(db);
	sqlite3_close(db->h);
	free(db);
}

/* Writers of this process queue on a mutex before they take SQLite's write
 * lock: SQLite's busy handler polls with growing sleeps, so under a stream
 * of writes one connection could lose the lock for its whole busy timeout.
 * The mutex makes the wait fair and SQLITE_BUSY a matter of other processes
 * only. One process serves one database, so one mutex is enough. */
static pthread_mutex_t db_writer = PTHREAD_MUTEX_INITIALIZER;

static void db_pending_drop(struct db *db, bool publish)
{
	struct ut_fifo_node *n;

	while ((n = ut_fifo_pop(&db->pending))) {
		struct db_pending *p = UT_FIFO_ENTRY(n, struct db_pending, node);

		if (publish)
			db_cache_store(p->name, p->text);
		free(p->name);
		free(p->text);
		free(p);
	}
}

/* Record a committed-to-be write: in a transaction it waits for the commit;
 * outside one (autocommit, writer mutex held by the caller) it is published
 * at once. On allocation failure the entry is dropped from the cache, which
 * is always safe. */
static void db_pending_add(struct db *db, const char *name, const char *text)
{
	struct db_pending *p = calloc(1, sizeof(*p));

	if (p && ((p->name = strdup(name)) == NULL || (text && (p->text = strdup(text)) == NULL))) {
		free(p->name);
		free(p);
		p = NULL;
	}
	if (!p) {
		db_cache_store(name, NULL);
		return;
	}
	ut_fifo_push(&db->pending, &p->node);
	if (!db->in_tx)
		db_pending_drop(db, true);
}

int db_begin(struct db *db)
{
	int rc;

	pthread_mutex_lock(&db_writer);
	rc = db_exec(db, "BEGIN IMMEDIATE", NULL);
	if (rc == AQ_OK)
		db->in_tx = true;
	else
		pthread_mutex_unlock(&db_writer);
	return rc;
}

int db_commit(struct db *db)
{
	int rc = db_exec(db, "COMMIT", NULL);

	if (rc == AQ_OK) {
		db->in_tx = false;
		db_pending_drop(db, true); /* still under the writer mutex: commit order */
		pthread_mutex_unlock(&db_writer);
	}
	return rc;
}

void db_rollback(struct db *db)
{
	if (db && db->in_tx) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		db->in_tx = false;
		db_pending_drop(db, false);
		pthread_mutex_unlock(&db_writer);
	}
}

/* The stored text of document name: AQ_OK with *st on its row (column 0),
 * AQ_ENOENT, or the database's error. The caller finalizes *st either way. */
static int db_doc_row(struct db *db, const char *name, sqlite3_stmt **st)
{
	int rc;

	if ((rc = db_prepare(db, "SELECT doc FROM resources WHERE name = ?", st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(*st, 1, name, -1, SQLITE_STATIC);
	switch (sqlite3_step(*st)) {
	case SQLITE_ROW:
		return AQ_OK;
	case SQLITE_DONE:
		return AQ_ENOENT;
	default:
		return db_err(db, sqlite3_errcode(db->h), NULL);
	}
}

int db_get(struct db *db, const char *name, json_t **doc)
{
	sqlite3_stmt *st = NULL;
	json_t *j = NULL;
	int rc;

	if ((rc = db_doc_row(db, name, &st)) != AQ_OK)
		goto out;
	j = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
	if (!j) {
		rc = AQ_EIO;
		goto out;
	}
	*doc = j;
out:
	sqlite3_finalize(st);
	return rc;
}

int db_get_text(struct db *db, const char *name, char **text, size_t *len)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (db_cache_lookup(name, text, len) == AQ_OK)
		return AQ_OK;
	/* fill under the writer mutex, so no commit slips between read and store */
	pthread_mutex_lock(&db_writer);
	if ((rc = db_doc_row(db, name, &st)) != AQ_OK)
		goto out;
	db_cache_store(name, (const char *)sqlite3_column_text(st, 0));
	*len = (size_t)sqlite3_column_bytes(st, 0);
	if (!(*text = malloc(*len + 1))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	memcpy(*text, sqlite3_column_text(st, 0), *len + 1);
out:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&db_writer);
	return rc;
}

int db_put(struct db *db, const char *kind, const char *parent, const char *name,
	   const json_t *doc, bool create)
{
	sqlite3_stmt *st = NULL;
	char *text = json_dumps(doc, JSON_COMPACT);
	int rc, s;

	bool own = !db->in_tx;

	if (!text)
		return AQ_ENOMEM;
	if (own)
		pthread_mutex_lock(&db_writer);
	rc = db_prepare(db,
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
		rc = db_err(db, s, NULL);
	else if (!create && sqlite3_changes(db->h) == 0)
		rc = AQ_ENOENT;
	if (rc == AQ_OK)
		db_pending_add(db, name, text);
out:
	sqlite3_finalize(st);
	if (own)
		pthread_mutex_unlock(&db_writer);
	free(text);
	return rc;
}

int db_delete(struct db *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	bool own = !db->in_tx;
	int rc, s;

	if (own)
		pthread_mutex_lock(&db_writer);
	if ((rc = db_prepare(db, "DELETE FROM resources WHERE name = ?", &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	s = sqlite3_step(st);
	if (s != SQLITE_DONE)
		rc = db_err(db, s, NULL);
	else if (sqlite3_changes(db->h) == 0)
		rc = AQ_ENOENT;
	if (rc == AQ_OK)
		db_pending_add(db, name, NULL);
out:
	sqlite3_finalize(st);
	if (own)
		pthread_mutex_unlock(&db_writer);
	return rc;
}

/* A parsed filter: up to DB_MAX_FILTER_TERMS "path=value" terms. */
struct db_filter {
	int n;
	char path[DB_MAX_FILTER_TERMS][80];
	char value[DB_MAX_FILTER_TERMS][256];
	bool quoted[DB_MAX_FILTER_TERMS];
};

static const char *db_skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int db_filter_parse(const char *text, struct db_filter *f, aq_msg *msg)
{
	const char *s = text;

	memset(f, 0, sizeof(*f));
	if (!text)
		return AQ_OK;
	for (s = db_skip_ws(s); *s; s = db_skip_ws(s)) {
		size_t n = 0;

		if (f->n == DB_MAX_FILTER_TERMS)
			return aq_fail(msg, AQ_EINVAL, "filter has more than %d terms", DB_MAX_FILTER_TERMS);
		if (f->n > 0) {
			if (strncmp(s, "AND ", 4) != 0)
				return aq_fail(msg, AQ_EINVAL, "filter terms must be joined with AND: %s", text);
			s = db_skip_ws(s + 4);
		}
		while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		       (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '.')
			n++;
		if (n == 0 || n >= sizeof(f->path[0]) || s[0] == '.' || s[n - 1] == '.' ||
		    memmem(s, n, "..", 2))
			return aq_fail(msg, AQ_EINVAL, "filter must be field=value[ AND field=value]: %s", text);
		memcpy(f->path[f->n], s, n);
		s = db_skip_ws(s + n);
		if (*s != '=')
			return aq_fail(msg, AQ_EINVAL, "filter supports only field=value equality: %s", text);
		s = db_skip_ws(s + 1);
		n = 0;
		if (*s == '"') {
			f->quoted[f->n] = true;
			s++;
			while (s[n] && s[n] != '"')
				n++;
			if (s[n] != '"')
				return aq_fail(msg, AQ_EINVAL, "unterminated quote in filter: %s", text);
		} else {
			while (s[n] && s[n] != ' ' && s[n] != '\t')
				n++;
		}
		if (n >= sizeof(f->value[0]))
			return aq_fail(msg, AQ_EINVAL, "filter value too long");
		memcpy(f->value[f->n], s, n);
		s += n + (s[n] == '"');
		f->n++;
	}
	return AQ_OK;
}

/* Page tokens are hex of "<last name>\n<checksum of the query>". */
static unsigned long db_query_sum(const struct db_query *q)
{
	unsigned long h = 5381;
	const char *parts[4] = { q->kind, q->parent ? q->parent : "", q->filter ? q->filter : "",
				 q->parent_prefix ? q->parent_prefix : "" };

	for (int i = 0; i < 4; i++)
		for (const char *c = parts[i]; *c; c++)
			h = h * 33 + (unsigned char)*c;
	return h * 2 + (q->order_desc ? 1 : 0);
}

static char *db_token_make(const struct db_query *q, const char *last)
{
	char plain[600];
	int n = snprintf(plain, sizeof(plain), "%s\n%lx", last, db_query_sum(q));
	char *hex;

	if (n < 0 || (size_t)n >= sizeof(plain))
		return NULL;
	hex = malloc((size_t)n * 2 + 1);
	if (!hex)
		return NULL;
	ut_hex_encode(plain, (size_t)n, hex, (size_t)n * 2 + 1);
	return hex;
}

static int db_token_parse(const struct db_query *q, const char *token, char *last, size_t cap,
			  aq_msg *msg)
{
	char plain[600], sum[32];
	size_t n;
	char *nl;

	if (ut_hex_decode(token, strlen(token), plain, sizeof(plain) - 1, &n) != AQ_OK)
		goto bad;
	plain[n] = '\0';
	nl = strchr(plain, '\n');
	if (!nl || (size_t)(nl - plain) >= cap)
		goto bad;
	*nl = '\0';
	snprintf(sum, sizeof(sum), "%lx", db_query_sum(q));
	if (strcmp(nl + 1, sum) != 0)
		goto bad;
	memcpy(last, plain, (size_t)(nl - plain) + 1);
	return AQ_OK;
bad:
	return aq_fail(msg, AQ_EINVAL, "invalid pageToken (it must come from a previous call with the same filter and orderBy)");
}

int db_list(struct db *db, const struct db_query *q, json_t **items, char **next_token,
	    aq_msg *msg)
{
	struct db_filter f;
	char sql[2048], last[512] = "";
	size_t off = 0;
	sqlite3_stmt *st = NULL;
	json_t *arr = json_array(), *lastdoc = NULL;
	int rc, limit = q->page_size <= 0 || q->page_size > DB_MAX_PAGE ? DB_MAX_PAGE : q->page_size;
	int bind = 1, count = 0, s;
	bool more = false;

	*next_token = NULL;
	if (!arr)
		return AQ_ENOMEM;
	if ((rc = db_filter_parse(q->filter, &f, msg)) != AQ_OK)
		goto out;
	if (q->page_token && *q->page_token &&
	    (rc = db_token_parse(q, q->page_token, last, sizeof(last), msg)) != AQ_OK)
		goto out;
	off += (size_t)snprintf(sql + off, sizeof(sql) - off,
				"SELECT name, doc FROM resources WHERE kind = ?");
	if (q->parent)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, " AND parent = ?");
	else if (q->parent_prefix)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, " AND substr(parent, 1, ?) = ?");
	if (*last)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, " AND name %s ?",
					q->order_desc ? "<" : ">");
	for (int i = 0; i < f.n; i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off,
					" AND CAST(json_extract(doc, ?) AS TEXT) IS ?");
	snprintf(sql + off, sizeof(sql) - off, " ORDER BY name %s LIMIT %d",
		 q->order_desc ? "DESC" : "ASC", limit + 1);
	if ((rc = db_prepare(db, sql, &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, bind++, q->kind, -1, SQLITE_STATIC);
	if (q->parent) {
		sqlite3_bind_text(st, bind++, q->parent, -1, SQLITE_STATIC);
	} else if (q->parent_prefix) {
		sqlite3_bind_int(st, bind++, (int)strlen(q->parent_prefix));
		sqlite3_bind_text(st, bind++, q->parent_prefix, -1, SQLITE_STATIC);
	}
	if (*last)
		sqlite3_bind_text(st, bind++, last, -1, SQLITE_STATIC);
	for (int i = 0; i < f.n; i++) {
		char path[96];
		const char *v = f.value[i];

		snprintf(path, sizeof(path), "$.%s", f.path[i]);
		sqlite3_bind_text(st, bind++, path, -1, SQLITE_TRANSIENT);
		/* json_extract gives 1/0 for JSON booleans; a quoted value is a string */
		if (!f.quoted[i] && strcmp(v, "true") == 0)
			v = "1";
		else if (!f.quoted[i] && strcmp(v, "false") == 0)
			v = "0";
		sqlite3_bind_text(st, bind++, v, -1, SQLITE_TRANSIENT);
	}
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *doc;

		if (count == limit) {
			more = true;
			break;
		}
		doc = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
		if (!doc) {
			rc = AQ_EIO;
			goto out;
		}
		json_array_append_new(arr, doc);
		lastdoc = doc;
		snprintf(last, sizeof(last), "%s", (const char *)sqlite3_column_text(st, 0));
		count++;
	}
	if (s != SQLITE_ROW && s != SQLITE_DONE) {
		rc = db_err(db, s, msg);
		goto out;
	}
	if (more && lastdoc && !(*next_token = db_token_make(q, last))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	*items = arr;
	arr = NULL;
out:
	sqlite3_finalize(st);
	json_decref(arr);
	return rc;
}

int db_list_all(struct db *db, const struct db_query *q, json_t **items, aq_msg *msg)
{
	struct db_query page_q = *q;
	json_t *all = json_array(), *page = NULL;
	char *tok = NULL, *next = NULL;
	int rc = AQ_OK;

	if (!all)
		return AQ_ENOMEM;
	page_q.page_size = 0;
	do {
		page_q.page_token = tok;
		if ((rc = db_list(db, &page_q, &page, &next, msg)) != AQ_OK)
			break;
		json_array_extend(all, page);
		json_decref(page);
		page = NULL;
		free(tok);
		tok = next;
		next = NULL;
	} while (tok);
	free(tok);
	if (rc != AQ_OK) {
		json_decref(all);
		return rc;
	}
	*items = all;
	return AQ_OK;
}

/* One aggregate over kind (under parent, or everywhere): COUNT(*) when
 * field is NULL, else the TOTAL of a numeric JSON field. */
static int db_scalar(struct db *db, const char *kind, const char *parent, const char *field,
		     double *out)
{
	sqlite3_stmt *st = NULL;
	char sql[200], path[96];
	int rc;

	snprintf(path, sizeof(path), "$.%s", field ? field : "");
	snprintf(sql, sizeof(sql), "SELECT %s FROM resources WHERE kind = ?1%s",
		 field ? "TOTAL(CAST(json_extract(doc, ?3) AS REAL))" : "COUNT(*)",
		 parent ? " AND parent = ?2" : "");
	if ((rc = db_prepare(db, sql, &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	if (parent)
		sqlite3_bind_text(st, 2, parent, -1, SQLITE_STATIC);
	if (field)
		sqlite3_bind_text(st, 3, path, -1, SQLITE_TRANSIENT);
	if ((rc = db_step_row(db, st)) != AQ_OK)
		goto out;
	*out = sqlite3_column_double(st, 0);
out:
	sqlite3_finalize(st);
	return rc;
}

int db_count(struct db *db, const char *kind, const char *parent, int64_t *n)
{
	double v = 0;
	int rc = db_scalar(db, kind, parent, NULL, &v);

	if (rc == AQ_OK)
		*n = (int64_t)v;
	return rc;
}

int db_sum(struct db *db, const char *kind, const char *parent, const char *field, double *sum)
{
	return db_scalar(db, kind, parent, field, sum);
}

int db_sum_by_parent(struct db *db, const char *kind, const char *field, const char *parent_kind,
		     const char *grandparent, json_t **sums)
{
	sqlite3_stmt *st = NULL;
	json_t *out = json_object();
	char path[96];
	int rc, s;

	if (!out)
		return AQ_ENOMEM;
	snprintf(path, sizeof(path), "$.%s", field);
	rc = db_prepare(db,
			"SELECT r.parent, TOTAL(CAST(json_extract(r.doc, ?4) AS REAL)) FROM resources r"
			" WHERE r.kind = ?1 AND r.parent IN"
			" (SELECT name FROM resources WHERE kind = ?2 AND parent = ?3) GROUP BY r.parent",
			&st);
	if (rc != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, parent_kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, grandparent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, path, -1, SQLITE_TRANSIENT);
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(out, (const char *)sqlite3_column_text(st, 0),
				    json_real(sqlite3_column_double(st, 1)));
	if (s != SQLITE_DONE) {
		rc = db_err(db, s, NULL);
		goto out;
	}
	*sums = out;
	out = NULL;
out:
	sqlite3_finalize(st);
	json_decref(out);
	return rc;
}

#define DB_MAX_AGG 8

int db_aggregate(struct db *db, const char *kind, const char *parent, const char *where_field,
		 const char *where_value, const char *const *fields, int n, int64_t *count,
		 double *sums)
{
	char sql[1024], path[96];
	size_t off = 0;
	sqlite3_stmt *st = NULL;
	int rc;

	if (n < 0 || n > DB_MAX_AGG || strspn(where_field, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != strlen(where_field))
		return AQ_EINVAL;
	off += (size_t)snprintf(sql + off, sizeof(sql) - off, "SELECT COUNT(*)");
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off,
					", TOTAL(CAST(json_extract(doc, ?%d) AS REAL))", i + 4);
	/* the literal path lets SQLite use resources_volume_pool */
	snprintf(sql + off, sizeof(sql) - off,
		 " FROM resources WHERE kind = ?1 AND parent = ?2 AND json_extract(doc, '$.%s') = ?3",
		 where_field);
	if ((rc = db_prepare(db, sql, &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, parent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, where_value, -1, SQLITE_STATIC);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "$.%s", fields[i]);
		sqlite3_bind_text(st, i + 4, path, -1, SQLITE_TRANSIENT);
	}
	if ((rc = db_step_row(db, st)) != AQ_OK)
		goto out;
	*count = sqlite3_column_int64(st, 0);
	for (int i = 0; i < n; i++)
		sums[i] = sqlite3_column_double(st, i + 1);
out:
	sqlite3_finalize(st);
	return rc;
}

int db_volume_share_count(struct db *db, const char *location, const char *share, int64_t *n)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* one probe of resources_volume_share (parent, shareName) per project:
	 * the planner would otherwise walk every volume of the location */
	rc = db_prepare(db,
			"SELECT COUNT(*) FROM resources INDEXED BY resources_volume_share"
			" WHERE kind = 'volume' AND parent IN"
			" (SELECT name || '/locations/' || ?1 FROM resources WHERE kind = 'project')"
			" AND json_extract(doc, '$.shareName') = ?2",
			&st);
	if (rc != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, location, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, share, -1, SQLITE_STATIC);
	if ((rc = db_step_row(db, st)) != AQ_OK)
		goto out;
	*n = sqlite3_column_int64(st, 0);
out:
	sqlite3_finalize(st);
	return rc;
}

int db_count_kinds(struct db *db, void (*fn)(const char *kind, int64_t n, void *arg), void *arg)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_prepare(db, "SELECT kind, COUNT(*) FROM resources GROUP BY kind", &st)) != AQ_OK)
		goto out;
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		fn((const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1), arg);
	if (s != SQLITE_DONE)
		rc = db_err(db, s, NULL);
out:
	sqlite3_finalize(st);
	return rc;
}
