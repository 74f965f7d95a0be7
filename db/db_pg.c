/* db_pg: the PostgreSQL engine behind db.h (see db_engine.h), on libpq.
 *
 * The same table and indexes as SQLite (db_migrations.c). Transactions run
 * SERIALIZABLE: a check-then-apply of one aquiferd (a manual-QoS budget, a
 * share name's uniqueness, a node's headroom) stays correct when another
 * process writes the same database, because PostgreSQL fails one of two
 * conflicting transactions with a serialization failure (SQLSTATE 40001),
 * which is AQ_EBUSY here: the caller runs the transaction again, as it does
 * when SQLite is busy. Creates use ON CONFLICT DO NOTHING rather than a
 * unique violation, so that AQ_EEXIST leaves the transaction usable, as it
 * is on SQLite.
 *
 * Group commit, as on SQLite (db.c). Once the schema is migrated a session
 * commits with synchronous_commit off: COMMIT makes the transaction
 * visible without waiting for the WAL flush, so the process's writer
 * mutex (and PostgreSQL's own commit-time lock of NOTIFY, which every
 * resource write takes: db_migrations.c) is held for the statements only,
 * not for a flush. db.c then acknowledges the commit only once pg_sync, a
 * transaction with synchronous_commit on whose COMMIT waits for the WAL up
 * to it, ran after it: one flush for every
 * commit written before, from any thread. Each commit waiting for its own
 * flush under the mutex, 8 threads committed fewer transactions (220/s)
 * than one plain connection (517/s, bench/api/REPORT.md). As on SQLite,
 * another session may read a commit in the short window before its flush;
 * what a client was told is on disk. A mended connection (a restarted
 * server may have lost what it had not flushed) makes db.c answer the
 * commits not yet flushed AQ_EIO (db_epoch_bump).
 *
 * The schema version is the schema_version table, read and
 * migrated under a session advisory lock taken before the migration's
 * transaction (a serializable snapshot taken before the lock was granted
 * would not see what the previous migrator committed). A connection lost between transactions
 * (a restarted server) is re-established by the next call.
 */
#include "db/db_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "db/db_pg_int.h"

/* Statements are prepared once per connection (named, PQprepare) and run
 * with PQexecPrepared after that, so the server parses and plans each
 * once, not at every call: keyed by their SQL text like SQLite's cache,
 * PG_CACHE of them; a statement built with varying text beyond that runs
 * unnamed (PQexecParams). A mended connection (PQreset) starts empty. */

/* The advisory lock that makes concurrent openers migrate one at a time
 * (any constant: "aquifer" in ASCII). */
#define PG_MIGRATE_LOCK "30803237083833714"
/* The oldest server: starts_with() came in PostgreSQL 11. */
#define PG_MIN_VERSION 110000

static struct db_pg *pg(struct db *db)
{
	return (struct db_pg *)db;
}

/* libpq's texts end with a newline: the length without it */
static int pg_len(const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	return (int)n;
}

static bool pg_busy_state(const char *state)
{
	/* serialization_failure, deadlock_detected, lock_not_available */
	return strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0;
}

int db_pg_fail(struct db *db, const PGresult *res, aq_msg *msg)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *text = res ? PQresultErrorMessage(res) : "";

	if (!*text)
		text = PQerrorMessage(pg(db)->c);
	/* the first failure says why; the statements after it fail with 25P02
	 * (in failed transaction), which is the same conflict to the caller:
	 * a retry of the whole transaction, not an error */
	if (db->in_tx && !pg(db)->failed[0])
		snprintf(pg(db)->failed, sizeof(pg(db)->failed), "%s", state ? state : "08006");
	if (db->in_tx && pg_busy_state(pg(db)->failed))
		state = pg(db)->failed;
	if (state && pg_busy_state(state))
		return aq_fail(msg, AQ_EBUSY, "database is busy (a concurrent change, SQLSTATE %s), retry", state);
	if (PQstatus(pg(db)->c) == CONNECTION_BAD)
		return aq_fail(msg, AQ_EIO, "lost the connection to PostgreSQL: %.*s", pg_len(text), text);
	return aq_fail(msg, AQ_EIO, "database error: %.*s", pg_len(text), text);
}

static void pg_cache_clear(struct db_pg *p)
{
	for (int i = 0; i < p->ncached; i++)
		free(p->cache[i].sql);
	p->ncached = 0;
}

bool db_pg_prepare(struct db_pg *p, const char *sql, int n, char name[16])
{
	unsigned long h = 5381;
	PGresult *res;
	int i;

	for (const char *c = sql; *c; c++)
		h = h * 33 + (unsigned char)*c;
	for (i = 0; i < p->ncached; i++)
		if (p->cache[i].hash == h && strcmp(p->cache[i].sql, sql) == 0)
			break;
	if (i == p->ncached) {
		/* only plain DML and queries; never inside a failed transaction */
		if (p->ncached == PG_CACHE || p->failed[0] ||
		    (strncmp(sql, "SELECT", 6) != 0 && strncmp(sql, "INSERT", 6) != 0 && strncmp(sql, "UPDATE", 6) != 0 &&
		     strncmp(sql, "DELETE", 6) != 0))
			return false;
		if (!(p->cache[i].sql = strdup(sql)))
			return false;
		snprintf(name, 16, "aq%d", i);
		res = PQprepare(p->c, name, sql, n, NULL);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			PQclear(res);
			free(p->cache[i].sql);
			p->cache[i].sql = NULL;
			return false; /* run unnamed: that error, if any, is the statement's */
		}
		PQclear(res);
		p->cache[i].hash = h;
		p->ncached++;
	}
	snprintf(name, 16, "aq%d", i);
	return true;
}

/* Run sql prepared: the cached statement's result, or NULL when sql is not
 * (and cannot be) cached, for the caller to run it unnamed. */
static PGresult *pg_exec_cached(struct db_pg *p, const char *sql, int n, const char *const *params)
{
	char name[16];

	if (!db_pg_prepare(p, sql, n, name))
		return NULL;
	return PQexecPrepared(p->c, name, n, params, NULL, NULL, 0);
}

/* Commit without waiting for the WAL flush (db.c's group commit flushes,
 * pg_sync). If the server refuses, commits wait for their own flush:
 * slower, as safe. */
static void pg_async(struct db_pg *p)
{
	PQclear(PQexec(p->c, "SET synchronous_commit TO off"));
}

/* Flush the WAL up to now (db_migrations.c, aq_flush_seq): every commit of
 * any session written before is then durable. */
static int pg_sync(struct db *db)
{
	PGconn *c = pg(db)->c;
	PGresult *res;
	const char *state;
	int rc = AQ_EIO;

	/* a sync, counted as one (db_sync_stats), not as the statements of
	 * what it flushes: SQLite's fsync is no statement either */
	res = PQexec(c, "BEGIN; SET LOCAL synchronous_commit TO on; SELECT setval('aq_flush_seq', 1); COMMIT");
	if (PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(res), "COMMIT") == 0) {
		rc = AQ_OK;
	} else {
		/* no sequence yet: the schema is being migrated and no session
		 * of this process commits asynchronously yet (pg_schema_unlock) */
		state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		if (state && strcmp(state, "42P01") == 0)
			rc = AQ_OK;
		else
			fprintf(stderr, "aquifer: PostgreSQL: cannot flush the WAL: %.*s\n", pg_len(PQerrorMessage(c)),
				PQerrorMessage(c));
	}
	PQclear(res);
	if (PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) != PQTRANS_IDLE)
		PQclear(PQexec(c, "ROLLBACK"));
	return rc;
}

void db_pg_mend(struct db *db)
{
	/* between transactions a broken connection is mended: a server restart
	 * costs the statements in flight, not the process, and its prepared
	 * statements */
	if ((PQstatus(pg(db)->c) == CONNECTION_BAD || PQpipelineStatus(pg(db)->c) != PQ_PIPELINE_OFF) && !db->in_tx) {
		db_epoch_bump(); /* before anything runs on the new connection */
		PQreset(pg(db)->c);
		pg_cache_clear(pg(db));
		if (pg(db)->async)
			pg_async(pg(db));
	}
}

/* Run one statement with text parameters; *out (if given) gets the result
 * of a successful one. */
static int pg_run(struct db *db, const char *sql, int n, const char *const *params, PGresult **out,
		  aq_msg *msg)
{
	PGconn *c = pg(db)->c;
	PGresult *res;
	ExecStatusType st;
	int rc = AQ_OK;

	db_stmt_note();
	db_pg_mend(db);
	if (!(res = pg_exec_cached(pg(db), sql, n, params)))
		res = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = db_pg_fail(db, res, msg);
		PQclear(res);
		return rc;
	}
	if (out)
		*out = res;
	else
		PQclear(res);
	return AQ_OK;
}

/* The first column of the first row as a number (COUNT, SUM). */
static int pg_number(struct db *db, const char *sql, int n, const char *const *params, double *v)
{
	PGresult *res = NULL;
	int rc = pg_run(db, sql, n, params, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	*v = PQntuples(res) == 1 ? strtod(PQgetvalue(res, 0, 0), NULL) : 0;
	PQclear(res);
	return AQ_OK;
}

/* "{a,b}", the text[] path of a checked field path "a.b" */
static void pg_path(const char *field, char *out, size_t cap)
{
	size_t i = 0;

	if (cap < 3) {
		*out = '\0';
		return;
	}
	out[i++] = '{';
	for (; *field && i + 2 < cap; field++)
		out[i++] = *field == '.' ? ',' : *field;
	out[i++] = '}';
	out[i] = '\0';
}

static void pg_close(struct db *db)
{
	pg_cache_clear(pg(db));
	PQfinish(pg(db)->c);
	free(db);
}

static int pg_begin(struct db *db)
{
	pg(db)->failed[0] = '\0';
	return pg_run(db, "BEGIN ISOLATION LEVEL SERIALIZABLE", 0, NULL, NULL, NULL);
}

static int pg_commit(struct db *db)
{
	PGresult *res = NULL;
	int rc = pg_run(db, "COMMIT", 0, NULL, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	/* COMMIT of a transaction in which a statement failed is a ROLLBACK */
	if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
		rc = pg_busy_state(pg(db)->failed) ? AQ_EBUSY : AQ_EIO;
	PQclear(res);
	return rc;
}

static void pg_rollback(struct db *db)
{
	if (PQtransactionStatus(pg(db)->c) != PQTRANS_IDLE)
		pg_run(db, "ROLLBACK", 0, NULL, NULL, NULL);
}

static int pg_schema_lock(struct db *db, aq_msg *msg)
{
	return pg_run(db, "SELECT pg_advisory_lock(" PG_MIGRATE_LOCK ")", 0, NULL, NULL, msg);
}

static void pg_schema_unlock(struct db *db)
{
	pg_run(db, "SELECT pg_advisory_unlock(" PG_MIGRATE_LOCK ")", 0, NULL, NULL, NULL);
	/* migrated (or db_open fails): aq_flush_seq is there, group commit on */
	pg(db)->async = true;
	pg_async(pg(db));
}

static int pg_schema_get(struct db *db, int *version, aq_msg *msg)
{
	double v = 0;
	int rc;

	if ((rc = pg_run(db, "CREATE TABLE IF NOT EXISTS schema_version ("
			     "  version integer PRIMARY KEY,"
			     "  what text NOT NULL,"
			     "  applied_at timestamptz NOT NULL DEFAULT now())",
			 0, NULL, NULL, msg)) != AQ_OK ||
	    (rc = pg_number(db, "SELECT COALESCE(MAX(version), 0) FROM schema_version", 0, NULL, &v)) != AQ_OK)
		return rc == AQ_OK ? rc : aq_fail(msg, rc, "cannot read the schema version (%s)", aq_err_str(rc));
	*version = (int)v;
	return AQ_OK;
}

static int pg_script(struct db *db, const char *sql, aq_msg *msg)
{
	/* several statements, no parameters: the simple query protocol */
	PGresult *res = PQexec(pg(db)->c, sql);
	int rc = AQ_OK;

	db_stmt_note();
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = db_pg_fail(db, res, msg);
	PQclear(res);
	return rc;
}

static int pg_schema_set(struct db *db, int version, const char *what, aq_msg *msg)
{
	char v[16];
	const char *params[] = { v, what };

	snprintf(v, sizeof(v), "%d", version);
	return pg_run(db, "INSERT INTO schema_version (version, what) VALUES ($1, $2)", 2, params, NULL, msg);
}

static int pg_get(struct db *db, const char *name, char **text, size_t *len)
{
	PGresult *res = NULL;
	int rc = pg_run(db, "SELECT doc FROM resources WHERE name = $1", 1, &name, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	if (PQntuples(res) == 0) {
		rc = AQ_ENOENT;
		goto out;
	}
	*len = (size_t)PQgetlength(res, 0, 0);
	if (!(*text = malloc(*len + 1))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	memcpy(*text, PQgetvalue(res, 0, 0), *len + 1);
out:
	PQclear(res);
	return rc;
}

static int pg_get_many(struct db *db, const char *names_json, db_row_fn fn, void *arg)
{
	PGresult *res = NULL;
	int rc = pg_run(db, DB_PG_SQL_GET_MANY, 1, &names_json, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	rc = db_pg_rows(res, fn, arg);
	PQclear(res);
	return rc;
}

int db_pg_rows(PGresult *res, db_row_fn fn, void *arg)
{
	int rc = AQ_OK;

	for (int i = 0; i < PQntuples(res) && rc == AQ_OK; i++)
		rc = fn(arg, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
	return rc;
}

static int pg_parents_with(struct db *db, const char *kind, const char *names_json, db_row_fn fn, void *arg)
{
	const char *params[] = { kind, names_json };
	PGresult *res = NULL;
	int rc = pg_run(db, "SELECT DISTINCT parent FROM resources WHERE kind = $1 AND parent IN"
			    " (SELECT json_array_elements_text($2::json))", 2, params, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	for (int i = 0; i < PQntuples(res) && rc == AQ_OK; i++)
		rc = fn(arg, PQgetvalue(res, i, 0), NULL);
	PQclear(res);
	return rc;
}

/* The rows an INSERT/UPDATE/DELETE changed. */
static int pg_changed(struct db *db, const char *sql, int n, const char *const *params, long *changed)
{
	PGresult *res = NULL;
	int rc = pg_run(db, sql, n, params, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	*changed = strtol(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return AQ_OK;
}

static int pg_put(struct db *db, const char *kind, const char *parent, const char *name,
		  const char *text, bool create)
{
	const char *params[] = { name, kind, parent, text };
	long changed = 0;
	int rc = pg_changed(db,
			    create ? DB_PG_SQL_INSERT
				   : "UPDATE resources SET kind = $2, parent = $3, doc = $4 WHERE name = $1",
			    4, params, &changed);

	if (rc == AQ_OK && changed == 0)
		rc = create ? AQ_EEXIST : AQ_ENOENT;
	return rc;
}

static int pg_del(struct db *db, const char *name)
{
	long changed = 0;
	int rc = pg_changed(db, "DELETE FROM resources WHERE name = $1", 1, &name, &changed);

	return rc == AQ_OK && changed == 0 ? AQ_ENOENT : rc;
}

/* A statement being built with numbered parameters. */
struct pg_stmt {
	char sql[2048];
	size_t off;
	const char *params[4 + 2 * DB_MAX_FILTER_TERMS + DB_MAX_AGG];
	int n;
};

/* Append text with "$?" standing for the next parameter, which is value. */
static void pg_add(struct pg_stmt *s, const char *text, const char *value)
{
	const char *q = value ? strstr(text, "$?") : NULL;

	if (!q) {
		s->off += (size_t)snprintf(s->sql + s->off, sizeof(s->sql) - s->off, "%s", text);
		return;
	}
	s->params[s->n++] = value;
	s->off += (size_t)snprintf(s->sql + s->off, sizeof(s->sql) - s->off, "%.*s$%d%s",
				   (int)(q - text), text, s->n, q + 2);
}

static int pg_list(struct db *db, const struct db_query *q, const struct db_filter *f,
		   const char *after, int max_rows, db_row_fn fn, void *arg, aq_msg *msg)
{
	struct pg_stmt s = { .off = 0 };
	char paths[DB_MAX_FILTER_TERMS][96], limit[32];
	PGresult *res = NULL;
	int rc;

	pg_add(&s, "SELECT name, doc FROM resources WHERE kind = $?", q->kind);
	if (q->parent)
		pg_add(&s, " AND parent = $?", q->parent);
	else if (q->parent_prefix)
		pg_add(&s, " AND starts_with(parent, $?)", q->parent_prefix);
	if (*after)
		pg_add(&s, q->order_desc ? " AND name < $?" : " AND name > $?", after);
	for (int i = 0; i < f->n; i++) {
		pg_path(f->path[i], paths[i], sizeof(paths[i]));
		pg_add(&s, " AND aq_json_text(doc, $?::text[])", paths[i]);
		pg_add(&s, " = $?", f->value[i]);
	}
	snprintf(limit, sizeof(limit), " LIMIT %d", max_rows);
	pg_add(&s, q->order_desc ? " ORDER BY name DESC" : " ORDER BY name ASC", NULL);
	pg_add(&s, limit, NULL);
	if ((rc = pg_run(db, s.sql, s.n, s.params, &res, msg)) != AQ_OK)
		return rc;
	for (int i = 0; i < PQntuples(res) && rc == AQ_OK; i++)
		rc = fn(arg, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
	PQclear(res);
	return rc > 0 ? AQ_OK : rc;
}

static int pg_scalar(struct db *db, const char *kind, const char *parent, const char *field,
		     double *out)
{
	struct pg_stmt s = { .off = 0 };
	char path[96];

	if (field) {
		pg_path(field, path, sizeof(path));
		pg_add(&s, "SELECT COALESCE(SUM(aq_json_num(doc, $?::text[])), 0)", path);
	} else {
		pg_add(&s, "SELECT COUNT(*)", NULL);
	}
	pg_add(&s, " FROM resources WHERE kind = $?", kind);
	if (parent)
		pg_add(&s, " AND parent = $?", parent);
	return pg_number(db, s.sql, s.n, s.params, out);
}

static int pg_sum_by_parent(struct db *db, const char *kind, const char *field,
			    const char *parent_kind, const char *grandparent, json_t *sums)
{
	char path[96];
	const char *params[] = { kind, parent_kind, grandparent, path };
	PGresult *res = NULL;
	int rc;

	pg_path(field, path, sizeof(path));
	rc = pg_run(db,
		    "SELECT r.parent, COALESCE(SUM(aq_json_num(r.doc, $4::text[])), 0) FROM resources r"
		    " WHERE r.kind = $1 AND r.parent IN"
		    " (SELECT name FROM resources WHERE kind = $2 AND parent = $3) GROUP BY r.parent",
		    4, params, &res, NULL);
	if (rc != AQ_OK)
		return rc;
	for (int i = 0; i < PQntuples(res); i++)
		json_object_set_new(sums, PQgetvalue(res, i, 0), json_real(strtod(PQgetvalue(res, i, 1), NULL)));
	PQclear(res);
	return AQ_OK;
}

static int pg_aggregate(struct db *db, const char *kind, const char *parent,
			const char *where_field, const char *where_value, const char *const *fields,
			int n, int64_t *count, double *sums)
{
	struct pg_stmt s = { .off = 0 };
	char paths[DB_MAX_AGG][96], where[160];
	PGresult *res = NULL;
	int rc;

	pg_add(&s, "SELECT COUNT(*)", NULL);
	for (int i = 0; i < n; i++) {
		pg_path(fields[i], paths[i], sizeof(paths[i]));
		pg_add(&s, ", COALESCE(SUM(aq_json_num(doc, $?::text[])), 0)", paths[i]);
	}
	pg_add(&s, " FROM resources WHERE kind = $?", kind);
	pg_add(&s, " AND parent = $?", parent);
	/* a literal expression (the path is checked by db.c), the one
	 * resources_volume_pool indexes for storagePool */
	if (strchr(where_field, '.')) {
		char path[96];

		pg_path(where_field, path, sizeof(path));
		snprintf(where, sizeof(where), " AND doc #>> '%s' = $?", path);
	} else {
		snprintf(where, sizeof(where), " AND doc ->> '%s' = $?", where_field);
	}
	pg_add(&s, where, where_value);
	if ((rc = pg_run(db, s.sql, s.n, s.params, &res, NULL)) != AQ_OK)
		return rc;
	*count = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	for (int i = 0; i < n; i++)
		sums[i] = strtod(PQgetvalue(res, 0, i + 1), NULL);
	PQclear(res);
	return AQ_OK;
}

static int pg_share_count(struct db *db, const char *location, const char *share, int64_t *n)
{
	const char *params[] = { location, share };
	double v = 0;
	int rc = pg_number(db, DB_PG_SQL_SHARE_COUNT, 2, params, &v);

	if (rc == AQ_OK)
		*n = (int64_t)v;
	return rc;
}

static int pg_count_kinds(struct db *db, void (*fn)(const char *kind, int64_t n, void *arg),
			  void *arg)
{
	PGresult *res = NULL;
	int rc = pg_run(db, "SELECT kind, COUNT(*) FROM resources GROUP BY kind ORDER BY kind", 0, NULL,
			&res, NULL);

	if (rc != AQ_OK)
		return rc;
	for (int i = 0; i < PQntuples(res); i++)
		fn(PQgetvalue(res, i, 0), strtoll(PQgetvalue(res, i, 1), NULL, 10), arg);
	PQclear(res);
	return AQ_OK;
}

static int pg_each(struct db *db, db_each_fn fn, void *arg, aq_msg *msg)
{
	PGresult *res = NULL;
	int rc;

	if ((rc = pg_run(db, "SELECT kind, parent, name, doc FROM resources ORDER BY seq", 0, NULL, &res, msg)) != AQ_OK)
		return rc;
	for (int i = 0; i < PQntuples(res) && rc == AQ_OK; i++)
		rc = fn(arg, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), PQgetvalue(res, i, 2), PQgetvalue(res, i, 3));
	PQclear(res);
	return rc;
}

static void pg_usage_row(PGresult *res, int i, struct db_usage *u)
{
	u->count = strtoll(PQgetvalue(res, i, 1), NULL, 10);
	u->capacity_gib = strtod(PQgetvalue(res, i, 2), NULL);
	u->mibps = strtod(PQgetvalue(res, i, 3), NULL);
	u->cold_gib = strtod(PQgetvalue(res, i, 4), NULL);
	u->hot_gib = strtod(PQgetvalue(res, i, 5), NULL);
}

static int pg_usage_get(struct db *db, const char *name, struct db_usage *u)
{
	PGresult *res = NULL;
	int rc = pg_run(db, DB_PG_USAGE_COLS " WHERE name = $1", 1, &name, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	if (PQntuples(res) == 1)
		pg_usage_row(res, 0, u);
	PQclear(res);
	return AQ_OK;
}

/* Every row of a usage query, to fn. */
static int pg_usage_rows(struct db *db, const char *sql, int n, const char *const *params, db_usage_fn fn,
			 void *arg)
{
	PGresult *res = NULL;
	int rc = pg_run(db, sql, n, params, &res, NULL);

	if (rc != AQ_OK)
		return rc;
	db_pg_usage_rows(res, fn, arg);
	PQclear(res);
	return AQ_OK;
}

void db_pg_usage_rows(PGresult *res, db_usage_fn fn, void *arg)
{
	for (int i = 0; i < PQntuples(res); i++) {
		struct db_usage u;

		pg_usage_row(res, i, &u);
		fn(arg, PQgetvalue(res, i, 0), &u);
	}
}

static int pg_usage_each(struct db *db, const char *prefix, db_usage_fn fn, void *arg)
{
	return pg_usage_rows(db, DB_PG_USAGE_COLS " WHERE starts_with(name, $1) ORDER BY name", 1, &prefix, fn, arg);
}

static int pg_usage_location(struct db *db, const char *pool_infix, const char *node_parent, db_usage_fn fn,
			     void *arg)
{
	const char *params[2] = { pool_infix, node_parent };

	return pg_usage_rows(db, DB_PG_SQL_USAGE_LOCATION, 2, params, fn, arg);
}

static int pg_fields(struct db *db, const char *kind, const char *kind2, const char *parent,
		     const char *const *fields, int n, db_row_fn fn, void *arg)
{
	const char *params[3] = { kind, parent, kind2 };
	char sql[1024];
	PGresult *res = NULL;
	int rc;

	db_pg_fields_sql(fields, n, sql, sizeof(sql));
	if ((rc = pg_run(db, sql, 3, params, &res, NULL)) != AQ_OK)
		return rc;
	rc = db_pg_rows(res, fn, arg);
	PQclear(res);
	return rc;
}

void db_pg_fields_sql(const char *const *fields, int n, char *sql, size_t cap)
{
	size_t off = 0;

	off += (size_t)snprintf(sql + off, cap - off, "SELECT name, json_build_object(");
	for (int i = 0; i < n && off < cap; i++)
		off += (size_t)snprintf(sql + off, cap - off, "%s'%s', doc -> '%s'", i ? ", " : "", fields[i], fields[i]);
	if (off < cap)
		snprintf(sql + off, cap - off, ")::text FROM resources WHERE kind IN ($1, $3) AND parent = $2 ORDER BY name");
}

static int pg_dirty_each(struct db *db, db_row_fn fn, void *arg)
{
	PGresult *res = NULL;
	int rc = pg_run(db, "SELECT node, mark FROM dirty", 0, NULL, &res, NULL);

	for (int i = 0; rc == AQ_OK && i < PQntuples(res); i++)
		rc = fn(arg, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
	PQclear(res);
	return rc;
}

static int pg_dirty_clear(struct db *db, const char *node, int64_t mark)
{
	char m[24];
	const char *params[2] = { node, m };

	snprintf(m, sizeof(m), "%lld", (long long)mark);
	return pg_run(db, "DELETE FROM dirty WHERE node = $1 AND mark = $2", 2, params, NULL, NULL);
}

static int pg_dirty_mark(struct db *db, const char *node)
{
	const char *params[1] = { node };

	return pg_run(db, "SELECT aq_dirty_mark($1)", 1, params, NULL, NULL);
}

/* Warnings and errors of the server go to stderr; its notices ("relation
 * already exists, skipping") do not. */
static void pg_notice(void *arg, const PGresult *res)
{
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *text = PQresultErrorMessage(res);

	(void)arg;
	if (sev && (strcmp(sev, "NOTICE") == 0 || strcmp(sev, "INFO") == 0 || strcmp(sev, "LOG") == 0 ||
		    strncmp(sev, "DEBUG", 5) == 0))
		return;
	fprintf(stderr, "aquifer: PostgreSQL: %.*s\n", pg_len(text), text);
}

static const struct db_ops pg_ops = {
	.kind = DB_PG,
	.name = "postgres",
	.close = pg_close,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.sync = pg_sync,
	.schema_lock = pg_schema_lock,
	.schema_unlock = pg_schema_unlock,
	.schema_get = pg_schema_get,
	.script = pg_script,
	.schema_set = pg_schema_set,
	.get = pg_get,
	.get_many = pg_get_many,
	.parents_with = pg_parents_with,
	.put = pg_put,
	.puts = db_pg_puts,
	.del = pg_del,
	.list = pg_list,
	.scalar = pg_scalar,
	.sum_by_parent = pg_sum_by_parent,
	.aggregate = pg_aggregate,
	.share_count = pg_share_count,
	.count_kinds = pg_count_kinds,
	.usage_get = pg_usage_get,
	.usage_each = pg_usage_each,
	.usage_location = pg_usage_location,
	.fields = pg_fields,
	.reads = db_pg_reads,
	.dirty_each = pg_dirty_each,
	.dirty_clear = pg_dirty_clear,
	.dirty_mark = pg_dirty_mark,
	.each = pg_each,
};

/* A password in the URL would show in process lists, logs and shell history. */
static int pg_url_check(const char *url, aq_msg *msg)
{
	char *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(url, &err);
	int rc = AQ_OK;

	if (!opts) {
		rc = aq_fail(msg, AQ_EINVAL, "cannot read the database URL: %.*s", err ? pg_len(err) : 0,
			     err ? err : "");
		PQfreemem(err);
		return rc;
	}
	for (const PQconninfoOption *o = opts; o->keyword; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
			rc = aq_fail(msg, AQ_EINVAL,
				     "the database URL carries a password, which would show in process lists, logs and"
				     " shell history: remove it and put it in a password file (?passfile=FILE in the"
				     " URL, or PGPASSFILE; lines host:port:database:user:password, mode 0600) or in"
				     " the PGPASSWORD environment variable");
	PQconninfoFree(opts);
	return rc;
}

int db_pg_open(const char *url, struct db **out, aq_msg *msg)
{
	static const char *const keys[] = { "dbname", "fallback_application_name", "client_encoding", NULL };
	const char *const vals[] = { url, "aquiferd", "UTF8", NULL };
	struct db_pg *p = NULL;
	const char *err;
	int rc;

	if ((rc = pg_url_check(url, msg)) != AQ_OK)
		return rc;
	if (!(p = calloc(1, sizeof(*p))))
		return AQ_ENOMEM;
	p->base.ops = &pg_ops;
	/* expand_dbname: the URL is the connection string; the environment
	 * (PGHOST, PGUSER, PGPASSFILE, ...) fills what it leaves out */
	p->c = PQconnectdbParams(keys, vals, 1);
	if (!p->c) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if (PQstatus(p->c) != CONNECTION_OK) {
		err = PQerrorMessage(p->c);
		rc = aq_fail(msg, AQ_EIO, "cannot connect to PostgreSQL: %.*s%s", pg_len(err), err,
			     strstr(err, "password") ? " (aquiferd takes the password from a password file:"
						       " ?passfile=FILE in the URL or PGPASSFILE; or from PGPASSWORD)"
						     : "");
		goto out;
	}
	if (PQserverVersion(p->c) < PG_MIN_VERSION) {
		rc = aq_fail(msg, AQ_EINVAL, "PostgreSQL %d.%d is too old: aquiferd needs %d or newer",
			     PQserverVersion(p->c) / 10000, PQserverVersion(p->c) / 100 % 100,
			     PG_MIN_VERSION / 10000);
		goto out;
	}
	PQsetNoticeReceiver(p->c, pg_notice, NULL);
	*out = &p->base;
	p = NULL;
out:
	if (p)
		pg_close(&p->base);
	return rc;
}
