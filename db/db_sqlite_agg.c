/* db_sqlite_agg: the SQLite engine's counts, sums, aggregates, usage
 * counters and field listings (db_ops of db_engine.h; split out of
 * db_sqlite.c, which keeps the connection, its statement cache, documents,
 * listings, dirty marks and db_each). Each reads one prepared statement
 * through db_sqlite.c's cache (db_sqlite_int.h). */
#include "db/db_sqlite_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* One aggregate over kind (under parent, or everywhere): COUNT(*) when
 * field is NULL, else the TOTAL of a numeric JSON field. */
int db_sq_scalar(struct db *db, const char *kind, const char *parent, const char *field,
		     double *out)
{
	sqlite3_stmt *st = NULL;
	char sql[200], path[96];
	int rc;

	db_sq_path(field ? field : "", path, sizeof(path));
	snprintf(sql, sizeof(sql), "SELECT %s FROM resources WHERE kind = ?1%s",
		 field ? "TOTAL(CAST(json_extract(doc, ?3) AS REAL))" : "COUNT(*)",
		 parent ? " AND parent = ?2" : "");
	if ((rc = db_sq_prepare(db, sql, &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	if (parent)
		sqlite3_bind_text(st, 2, parent, -1, SQLITE_STATIC);
	if (field)
		sqlite3_bind_text(st, 3, path, -1, SQLITE_TRANSIENT);
	if ((rc = db_sq_step_row(db, st)) != AQ_OK)
		goto out;
	*out = sqlite3_column_double(st, 0);
out:
	db_sq_finish(db, st);
	return rc;
}

int db_sq_sum_by_parent(struct db *db, const char *kind, const char *field,
			    const char *parent_kind, const char *grandparent, json_t *sums)
{
	sqlite3_stmt *st = NULL;
	char path[96];
	int rc, s;

	db_sq_path(field, path, sizeof(path));
	rc = db_sq_prepare(db,
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
		json_object_set_new(sums, (const char *)sqlite3_column_text(st, 0),
				    json_real(sqlite3_column_double(st, 1)));
	if (s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
out:
	db_sq_finish(db, st);
	return rc;
}

int db_sq_aggregate(struct db *db, const char *kind, const char *parent,
			const char *where_field, const char *where_value, const char *const *fields,
			int n, int64_t *count, double *sums)
{
	char sql[1024], path[96];
	size_t off = 0;
	sqlite3_stmt *st = NULL;
	int rc;

	off += (size_t)snprintf(sql + off, sizeof(sql) - off, "SELECT COUNT(*)");
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off,
					", TOTAL(CAST(json_extract(doc, ?%d) AS REAL))", i + 4);
	/* the literal path (checked by db.c) lets SQLite use resources_volume_pool */
	snprintf(sql + off, sizeof(sql) - off,
		 " FROM resources WHERE kind = ?1 AND parent = ?2 AND json_extract(doc, '$.%s') = ?3",
		 where_field);
	if ((rc = db_sq_prepare(db, sql, &st)) != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, parent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, where_value, -1, SQLITE_STATIC);
	for (int i = 0; i < n; i++) {
		db_sq_path(fields[i], path, sizeof(path));
		sqlite3_bind_text(st, i + 4, path, -1, SQLITE_TRANSIENT);
	}
	if ((rc = db_sq_step_row(db, st)) != AQ_OK)
		goto out;
	*count = sqlite3_column_int64(st, 0);
	for (int i = 0; i < n; i++)
		sums[i] = sqlite3_column_double(st, i + 1);
out:
	db_sq_finish(db, st);
	return rc;
}

int db_sq_share_count(struct db *db, const char *location, const char *share, int64_t *n)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* one probe of resources_volume_share (parent, shareName) per project:
	 * the planner would otherwise walk every volume of the location */
	rc = db_sq_prepare(db,
			"SELECT COUNT(*) FROM resources INDEXED BY resources_volume_share"
			" WHERE kind = 'volume' AND parent IN"
			" (SELECT name || '/locations/' || ?1 FROM resources WHERE kind = 'project')"
			" AND json_extract(doc, '$.shareName') = ?2",
			&st);
	if (rc != AQ_OK)
		goto out;
	sqlite3_bind_text(st, 1, location, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, share, -1, SQLITE_STATIC);
	if ((rc = db_sq_step_row(db, st)) != AQ_OK)
		goto out;
	*n = sqlite3_column_int64(st, 0);
out:
	db_sq_finish(db, st);
	return rc;
}

int db_sq_count_kinds(struct db *db, void (*fn)(const char *kind, int64_t n, void *arg),
			  void *arg)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	rc = db_sq_prepare(db, "SELECT kind, COUNT(*) FROM resources GROUP BY kind ORDER BY kind", &st);
	if (rc != AQ_OK)
		goto out;
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		fn((const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1), arg);
	if (s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
out:
	db_sq_finish(db, st);
	return rc;
}

#define SQ_USAGE_COLS "SELECT name, n, capacity_gib, mibps, cold_gib, hot_gib FROM usage"

static void sq_usage_row(sqlite3_stmt *st, struct db_usage *u)
{
	u->count = sqlite3_column_int64(st, 1);
	u->capacity_gib = sqlite3_column_double(st, 2);
	u->mibps = sqlite3_column_double(st, 3);
	u->cold_gib = sqlite3_column_double(st, 4);
	u->hot_gib = sqlite3_column_double(st, 5);
}

int db_sq_usage_get(struct db *db, const char *name, struct db_usage *u)
{
	sqlite3_stmt *st = NULL;
	int rc, s;

	if ((rc = db_sq_prepare(db, SQ_USAGE_COLS " WHERE name = ?1", &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if ((s = sqlite3_step(st)) == SQLITE_ROW)
		sq_usage_row(st, u);
	else if (s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	db_sq_finish(db, st);
	return rc;
}

/* Every row of a prepared usage query, to fn; finishes st. */
static int sq_usage_rows(struct db *db, sqlite3_stmt *st, db_usage_fn fn, void *arg)
{
	int rc = AQ_OK, s;

	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_usage u;

		sq_usage_row(st, &u);
		fn(arg, (const char *)sqlite3_column_text(st, 0), &u);
	}
	if (s != SQLITE_DONE)
		rc = db_sq_err(db, s, NULL);
	db_sq_finish(db, st);
	return rc;
}

int db_sq_usage_each(struct db *db, const char *prefix, db_usage_fn fn, void *arg)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = db_sq_prepare(db, SQ_USAGE_COLS " WHERE name >= ?1 AND substr(name, 1, length(?1)) = ?1 ORDER BY name",
			     &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
	return sq_usage_rows(db, st, fn, arg);
}

int db_sq_usage_location(struct db *db, const char *pool_infix, const char *node_parent, db_usage_fn fn,
			     void *arg)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = db_sq_prepare(db, SQ_USAGE_COLS " WHERE (substr(name, 1, 9) = 'projects/' AND instr(name, ?1) > 0)"
				 " OR name IN (SELECT name FROM resources WHERE kind = 'node' AND parent = ?2) OR name = 'placever/' || ?2 ORDER BY name",
			     &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, pool_infix, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, node_parent, -1, SQLITE_STATIC);
	return sq_usage_rows(db, st, fn, arg);
}

int db_sq_fields(struct db *db, const char *kind, const char *kind2, const char *parent,
		     const char *const *fields, int n, db_row_fn fn, void *arg)
{
	char sql[1024];
	size_t off = 0;
	sqlite3_stmt *st = NULL;
	int rc;

	off += (size_t)snprintf(sql + off, sizeof(sql) - off, "SELECT name, json_object(");
	for (int i = 0; i < n && off < sizeof(sql); i++)
		off += (size_t)snprintf(sql + off, sizeof(sql) - off, "%s'%s', json_extract(doc, '$.%s')", i ? ", " : "",
					fields[i], fields[i]);
	if (off < sizeof(sql))
		snprintf(sql + off, sizeof(sql) - off, ") FROM resources WHERE kind IN (?1, ?3) AND parent = ?2 ORDER BY name");
	if ((rc = db_sq_prepare(db, sql, &st)) != AQ_OK)
		return rc;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, parent, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, kind2, -1, SQLITE_STATIC);
	return db_sq_pairs(db, st, fn, arg);
}
