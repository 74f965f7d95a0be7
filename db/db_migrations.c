/* db_migrations: the numbered schema steps, one row per version, with the
 * SQL of each engine side by side so a version means the same schema on
 * both. db_open() runs the steps a database lacks, in one transaction.
 * Never edit a released step: add one.
 *
 * One table holds every resource as a JSON document; kind and parent are
 * indexed for listing, seq keeps insertion order (counting, debugging,
 * aquiferd db migrate). On PostgreSQL the text columns sort bytewise
 * (COLLATE "C", as SQLite does), so names page in the same order on both,
 * and doc is json (not jsonb), which keeps the text exactly as written.
 * Two SQL functions give PostgreSQL SQLite's json_extract semantics for
 * filters and sums: a JSON boolean reads as 1/0, a numeric string sums as
 * its number.
 */
#include "db/db_engine.h"

const struct db_step db_steps[] = {
	{
		.what = "resources",
		.sql[DB_SQLITE] =
			"CREATE TABLE resources ("
			"  name TEXT PRIMARY KEY,"
			"  kind TEXT NOT NULL,"
			"  parent TEXT NOT NULL,"
			"  seq INTEGER NOT NULL,"
			"  doc TEXT NOT NULL"
			");"
			"CREATE INDEX resources_kind_parent ON resources(kind, parent, name);"
			"CREATE INDEX resources_kind_name ON resources(kind, name);",
		.sql[DB_PG] =
			"CREATE TABLE resources ("
			"  name text COLLATE \"C\" PRIMARY KEY,"
			"  kind text COLLATE \"C\" NOT NULL,"
			"  parent text COLLATE \"C\" NOT NULL,"
			"  seq bigserial NOT NULL,"
			"  doc json NOT NULL"
			");"
			"CREATE INDEX resources_kind_parent ON resources (kind, parent, name);"
			"CREATE INDEX resources_kind_name ON resources (kind, name);"
			"CREATE FUNCTION aq_json_text(doc json, path text[]) RETURNS text"
			" LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$"
			" SELECT CASE json_typeof(doc #> path)"
			"  WHEN 'boolean' THEN CASE WHEN doc #>> path = 'true' THEN '1' ELSE '0' END"
			"  ELSE doc #>> path END $$;"
			"CREATE FUNCTION aq_json_num(doc json, path text[]) RETURNS double precision"
			" LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$"
			" SELECT CASE json_typeof(doc #> path)"
			"  WHEN 'number' THEN (doc #>> path)::double precision"
			"  WHEN 'boolean' THEN CASE WHEN doc #>> path = 'true' THEN 1 ELSE 0 END"
			/* the leading number of a string, as SQLite's CAST AS REAL reads
			 * it, bounded so that it always fits a double */
			"  WHEN 'string' THEN COALESCE(substring(doc #>> path FROM"
			"   '^[[:space:]]*([-+]?([0-9]{1,200}([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]{1,2})?)')"
			"   ::double precision, 0)"
			"  WHEN 'object' THEN 0 WHEN 'array' THEN 0 END $$;",
	},
	{
		.what = "volumes by pool, for the pool's sums",
		.sql[DB_SQLITE] =
			"CREATE INDEX resources_volume_pool ON resources(parent, json_extract(doc, '$.storagePool'))"
			" WHERE kind = 'volume';",
		.sql[DB_PG] =
			"CREATE INDEX resources_volume_pool ON resources (parent, (doc ->> 'storagePool'))"
			" WHERE kind = 'volume';",
	},
	{
		.what = "volumes by share name (unique per location)",
		.sql[DB_SQLITE] =
			"CREATE INDEX resources_volume_share ON resources(parent, json_extract(doc, '$.shareName'))"
			" WHERE kind = 'volume';",
		.sql[DB_PG] =
			"CREATE INDEX resources_volume_share ON resources (parent, (doc ->> 'shareName'))"
			" WHERE kind = 'volume';",
	},
};

const int db_schema_version = (int)(sizeof(db_steps) / sizeof(db_steps[0]));
