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

/* SQLite's usage triggers (step 4): a volume counts in its pool (its
 * storagePool as stored, an ID or a full name), a placement in its node
 * (the placement's parent). */
#define SQ_NUM(row, field) "IFNULL(CAST(json_extract(" row ".doc, '$." field "') AS REAL), 0)"
#define SQ_NUM_SUM(field) "TOTAL(CAST(json_extract(r.doc, '$." field "') AS REAL))"
#define SQ_VOL_KEY(row)                                                                           \
	"CASE WHEN instr(IFNULL(json_extract(" row ".doc, '$.storagePool'), ''), '/') > 0"        \
	" THEN json_extract(" row ".doc, '$.storagePool')"                                         \
	" ELSE " row ".parent || '/storagePools/' || IFNULL(json_extract(" row ".doc, '$.storagePool'), '') END"
#define SQ_VOL_ROW(row, sign)                                                                     \
	SQ_VOL_KEY(row) ", " sign "1, " sign SQ_NUM(row, "capacityGib") ", " sign                \
		SQ_NUM(row, "throughputMibps") ", " sign SQ_NUM(row, "coldTierSizeGib") ", " sign \
		SQ_NUM(row, "hotTierSizeUsedGib")
#define SQ_PL_ROW(row, sign) row ".parent, " sign "1, 0, " sign SQ_NUM(row, "mibps") ", 0, 0"
#define SQ_USAGE_ZERO(col) col " = CASE WHEN n + excluded.n = 0 THEN 0 ELSE " col " + excluded." col " END"
#define SQ_USAGE_UPSERT                                                                           \
	" ON CONFLICT(name) DO UPDATE SET n = n + excluded.n, " SQ_USAGE_ZERO("capacity_gib") ", " \
	SQ_USAGE_ZERO("mibps") ", " SQ_USAGE_ZERO("cold_gib") ", " SQ_USAGE_ZERO("hot_gib")
#define SQ_USAGE_TRIGGER(id, event, row, kind, values)                                            \
	"CREATE TRIGGER usage_" id " AFTER " event " ON resources WHEN " row ".kind = '" kind "'"    \
	" BEGIN INSERT INTO usage VALUES (" values ")" SQ_USAGE_UPSERT "; END;"

/* aq_json_num's body (step 1; step 9 lets PostgreSQL inline it). */
#define PG_JSON_NUM_BODY                                                                           \
	" SELECT CASE json_typeof(doc #> path)"                                                    \
	"  WHEN 'number' THEN (doc #>> path)::double precision"                                    \
	"  WHEN 'boolean' THEN CASE WHEN doc #>> path = 'true' THEN 1 ELSE 0 END"                  \
	/* the leading number of a string, as SQLite's CAST AS REAL reads it,                      \
	 * bounded so that it always fits a double */                                              \
	"  WHEN 'string' THEN COALESCE(substring(doc #>> path FROM"                                \
	"   '^[[:space:]]*([-+]?([0-9]{1,200}([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]{1,2})?)')"      \
	"   ::double precision, 0)"                                                                \
	"  WHEN 'object' THEN 0 WHEN 'array' THEN 0 END $$;"

/* SQLite's dirty-mark triggers (step 5): one more mark for a node. */
#define SQ_DIRTY_UPSERT " ON CONFLICT(node) DO UPDATE SET mark = mark + 1;"
#define SQ_DIRTY_PL(id, event, row)                                                               \
	"CREATE TRIGGER dirty_" id " AFTER " event " ON resources WHEN " row ".kind = 'placement'"  \
	" BEGIN INSERT INTO dirty VALUES (" row ".parent, 1)" SQ_DIRTY_UPSERT " END;"
#define SQ_DIRTY_VOL(id, event, row)                                                              \
	"CREATE TRIGGER dirty_" id " AFTER " event " ON resources WHEN " row ".kind = 'volume'"     \
	" BEGIN INSERT INTO dirty SELECT parent, 1 FROM resources WHERE name = 'placements/' || " row \
	".name" SQ_DIRTY_UPSERT " END;"

/* SQLite's placement-version triggers (step 7): a new random value in the
 * usage row "placever/<parent>" whenever a node or shelf under parent is
 * made, removed, or changes a field placement reads (srv_place.h). */
#define SQ_PV_SET(par)                                                                            \
	" INSERT INTO usage VALUES ('placever/' || " par ", random(), 0, 0, 0, 0)"                 \
	" ON CONFLICT(name) DO UPDATE SET n = excluded.n;"
#define SQ_PV_DIFF(f) " OR json_extract(old.doc, '$." f "') IS NOT json_extract(new.doc, '$." f "')"
#define PG_PV_SAME(f) " AND (OLD.doc -> '" f "')::text IS NOT DISTINCT FROM (NEW.doc -> '" f "')::text"

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
			PG_JSON_NUM_BODY,
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
	{
		/* Usage counters (db.h, db_usage_get): what a pool's volumes and a
		 * node's placements add up to, kept by triggers in the transaction
		 * that writes the volume or placement, so that a create's checks
		 * read one row instead of summing the location. A row whose count
		 * falls to 0 has its sums reset to exactly 0 (no float residue). */
		.what = "usage counters of pools and nodes",
		.sql[DB_SQLITE] =
			"CREATE TABLE usage ("
			"  name TEXT PRIMARY KEY NOT NULL,"
			"  n INTEGER NOT NULL,"
			"  capacity_gib REAL NOT NULL,"
			"  mibps REAL NOT NULL,"
			"  cold_gib REAL NOT NULL,"
			"  hot_gib REAL NOT NULL"
			") WITHOUT ROWID;"
			SQ_USAGE_TRIGGER("volume_ins", "INSERT", "new", "volume", SQ_VOL_ROW("new", ""))
			SQ_USAGE_TRIGGER("volume_del", "DELETE", "old", "volume", SQ_VOL_ROW("old", "-"))
			SQ_USAGE_TRIGGER("volume_upd_old", "UPDATE", "old", "volume", SQ_VOL_ROW("old", "-"))
			SQ_USAGE_TRIGGER("volume_upd_new", "UPDATE", "new", "volume", SQ_VOL_ROW("new", ""))
			SQ_USAGE_TRIGGER("placement_ins", "INSERT", "new", "placement", SQ_PL_ROW("new", ""))
			SQ_USAGE_TRIGGER("placement_del", "DELETE", "old", "placement", SQ_PL_ROW("old", "-"))
			SQ_USAGE_TRIGGER("placement_upd_old", "UPDATE", "old", "placement", SQ_PL_ROW("old", "-"))
			SQ_USAGE_TRIGGER("placement_upd_new", "UPDATE", "new", "placement", SQ_PL_ROW("new", ""))
			"INSERT INTO usage SELECT " SQ_VOL_KEY("r") ", COUNT(*), " SQ_NUM_SUM("capacityGib") ", "
			SQ_NUM_SUM("throughputMibps") ", " SQ_NUM_SUM("coldTierSizeGib") ", " SQ_NUM_SUM("hotTierSizeUsedGib")
			" FROM resources r WHERE kind = 'volume' GROUP BY 1;"
			"INSERT INTO usage SELECT parent, COUNT(*), 0, " SQ_NUM_SUM("mibps") ", 0, 0"
			" FROM resources r WHERE kind = 'placement' GROUP BY 1 HAVING true" SQ_USAGE_UPSERT ";",
		.sql[DB_PG] =
			"CREATE TABLE usage ("
			"  name text COLLATE \"C\" PRIMARY KEY,"
			"  n bigint NOT NULL,"
			"  capacity_gib double precision NOT NULL,"
			"  mibps double precision NOT NULL,"
			"  cold_gib double precision NOT NULL,"
			"  hot_gib double precision NOT NULL"
			");"
			"CREATE FUNCTION aq_usage_key(kind text, parent text, doc json) RETURNS text"
			" LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$"
			" SELECT CASE WHEN kind = 'placement' THEN parent"
			"  WHEN strpos(COALESCE(doc ->> 'storagePool', ''), '/') > 0 THEN doc ->> 'storagePool'"
			"  ELSE parent || '/storagePools/' || COALESCE(doc ->> 'storagePool', '') END $$;"
			"CREATE FUNCTION aq_usage_add(r resources, sign integer) RETURNS void LANGUAGE sql AS $$"
			" INSERT INTO usage AS u VALUES (aq_usage_key(r.kind, r.parent, r.doc), sign,"
			"  CASE WHEN r.kind = 'volume' THEN sign * COALESCE(aq_json_num(r.doc, '{capacityGib}'), 0) ELSE 0 END,"
			"  sign * COALESCE(aq_json_num(r.doc, CASE WHEN r.kind = 'volume' THEN '{throughputMibps}'"
			"   ELSE '{mibps}' END::text[]), 0),"
			"  CASE WHEN r.kind = 'volume' THEN sign * COALESCE(aq_json_num(r.doc, '{coldTierSizeGib}'), 0) ELSE 0 END,"
			"  CASE WHEN r.kind = 'volume' THEN sign * COALESCE(aq_json_num(r.doc, '{hotTierSizeUsedGib}'), 0) ELSE 0 END)"
			" ON CONFLICT (name) DO UPDATE SET n = u.n + excluded.n,"
			"  capacity_gib = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.capacity_gib + excluded.capacity_gib END,"
			"  mibps = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.mibps + excluded.mibps END,"
			"  cold_gib = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.cold_gib + excluded.cold_gib END,"
			"  hot_gib = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.hot_gib + excluded.hot_gib END $$;"
			"CREATE FUNCTION aq_usage_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
			" IF TG_OP <> 'INSERT' AND OLD.kind IN ('volume', 'placement') THEN PERFORM aq_usage_add(OLD, -1); END IF;"
			" IF TG_OP <> 'DELETE' AND NEW.kind IN ('volume', 'placement') THEN PERFORM aq_usage_add(NEW, 1); END IF;"
			" RETURN NULL; END $$;"
			"CREATE TRIGGER resources_usage AFTER INSERT OR UPDATE OR DELETE ON resources"
			" FOR EACH ROW EXECUTE FUNCTION aq_usage_trg();"
			"SELECT aq_usage_add(r, 1) FROM resources r WHERE kind IN ('volume', 'placement') ORDER BY seq;",
	},
	{
		/* Dirty marks (db.h, db_dirty_list): the nodes whose intent a write
		 * may have changed, marked by triggers in the transaction of every
		 * write of a placement (its node, before and after a move) or of a
		 * volume (the node its placement names), whoever writes it (a
		 * handler of any replica, an agent's report, the reconciler). The
		 * reconciler rebuilds only marked nodes and deletes a mark only
		 * when it is still the count it read. */
		.what = "dirty marks of nodes",
		.sql[DB_SQLITE] =
			"CREATE TABLE dirty ("
			"  node TEXT PRIMARY KEY NOT NULL,"
			"  mark INTEGER NOT NULL"
			") WITHOUT ROWID;"
			SQ_DIRTY_PL("placement_ins", "INSERT", "new")
			SQ_DIRTY_PL("placement_del", "DELETE", "old")
			SQ_DIRTY_PL("placement_upd_old", "UPDATE", "old")
			SQ_DIRTY_PL("placement_upd_new", "UPDATE", "new")
			SQ_DIRTY_VOL("volume_ins", "INSERT", "new")
			SQ_DIRTY_VOL("volume_upd", "UPDATE", "new")
			SQ_DIRTY_VOL("volume_del", "DELETE", "old"),
		.sql[DB_PG] =
			"CREATE TABLE dirty ("
			"  node text COLLATE \"C\" PRIMARY KEY,"
			"  mark bigint NOT NULL"
			");"
			"CREATE FUNCTION aq_dirty_mark(n text) RETURNS void LANGUAGE sql AS $$"
			" INSERT INTO dirty AS d VALUES (n, 1) ON CONFLICT (node) DO UPDATE SET mark = d.mark + 1 $$;"
			"CREATE FUNCTION aq_dirty_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
			" IF TG_OP <> 'INSERT' AND OLD.kind = 'placement' THEN PERFORM aq_dirty_mark(OLD.parent); END IF;"
			" IF TG_OP <> 'DELETE' AND NEW.kind = 'placement' THEN PERFORM aq_dirty_mark(NEW.parent); END IF;"
			" IF TG_OP = 'DELETE' AND OLD.kind = 'volume' THEN"
			"  PERFORM aq_dirty_mark(r.parent) FROM resources r WHERE r.name = 'placements/' || OLD.name; END IF;"
			" IF TG_OP <> 'DELETE' AND NEW.kind = 'volume' THEN"
			"  PERFORM aq_dirty_mark(r.parent) FROM resources r WHERE r.name = 'placements/' || NEW.name; END IF;"
			" RETURN NULL; END $$;"
			"CREATE TRIGGER resources_dirty AFTER INSERT OR UPDATE OR DELETE ON resources"
			" FOR EACH ROW EXECUTE FUNCTION aq_dirty_trg();",
	},
	{
		/* Cache invalidation across replicas (db.h, db_watch_start): every
		 * write of a resource notifies channel aq_doc with its name, which
		 * PostgreSQL delivers to every listening session when (and only
		 * if) the transaction commits, so each aquiferd replica drops that
		 * name from its document cache. SQLite has one process and no
		 * other writer to hear from: nothing to do there. */
		.what = "notify of every resource write",
		.sql[DB_SQLITE] = "SELECT 1;",
		.sql[DB_PG] =
			"CREATE FUNCTION aq_notify_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
			" PERFORM pg_notify('aq_doc', CASE WHEN TG_OP = 'DELETE' THEN OLD.name ELSE NEW.name END);"
			" RETURN NULL; END $$;"
			"CREATE TRIGGER resources_notify AFTER INSERT OR UPDATE OR DELETE ON resources"
			" FOR EACH ROW EXECUTE FUNCTION aq_notify_trg();",
	},
	{
		/* Placement versions (db.h "placever/"): what a create's placement
		 * reads of a location's nodes and shelves (state, throughput
		 * ceiling, capacity, read throughput) is cached per process
		 * (srv_place.c) under the value of the usage row
		 * "placever/locations/<L>", which every write that changes one of
		 * those fields, or makes or removes a node or shelf, sets to a
		 * value never used before (SQLite: random(), 64 bits; PostgreSQL:
		 * a sequence, which a rollback does not give back, started at a
		 * random value so that two databases do not share values), so a
		 * value read in a transaction names exactly one set of those rows
		 * (0: no node or shelf was ever made there; not cached). */
		.what = "placement versions of locations",
		.sql[DB_SQLITE] =
			"CREATE TRIGGER placever_ins AFTER INSERT ON resources WHEN new.kind IN ('node', 'shelf')"
			" BEGIN" SQ_PV_SET("new.parent") " END;"
			"CREATE TRIGGER placever_del AFTER DELETE ON resources WHEN old.kind IN ('node', 'shelf')"
			" BEGIN" SQ_PV_SET("old.parent") " END;"
			"CREATE TRIGGER placever_upd AFTER UPDATE ON resources"
			" WHEN (old.kind IN ('node', 'shelf') OR new.kind IN ('node', 'shelf')) AND (old.kind IS NOT new.kind"
			" OR old.parent IS NOT new.parent" SQ_PV_DIFF("state") SQ_PV_DIFF("throughputCeilingMibps")
			SQ_PV_DIFF("capacityGib") SQ_PV_DIFF("readThroughputMibps") ")"
			" BEGIN" SQ_PV_SET("old.parent") SQ_PV_SET("new.parent") " END;"
			"INSERT INTO usage SELECT 'placever/' || parent, random(), 0, 0, 0, 0 FROM resources"
			" WHERE kind IN ('node', 'shelf') GROUP BY parent;",
		.sql[DB_PG] =
			"CREATE SEQUENCE placever_seq;"
			"SELECT setval('placever_seq', 1 + (random() * 4e18)::bigint);"
			"CREATE FUNCTION aq_placever_set(p text) RETURNS void LANGUAGE sql AS $$"
			" INSERT INTO usage VALUES ('placever/' || p, nextval('placever_seq'), 0, 0, 0, 0)"
			" ON CONFLICT (name) DO UPDATE SET n = excluded.n $$;"
			"CREATE FUNCTION aq_placever_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
			" IF NOT ((TG_OP <> 'INSERT' AND OLD.kind IN ('node', 'shelf'))"
			"  OR (TG_OP <> 'DELETE' AND NEW.kind IN ('node', 'shelf'))) THEN RETURN NULL; END IF;"
			" IF TG_OP = 'UPDATE' AND OLD.kind = NEW.kind AND OLD.parent = NEW.parent" PG_PV_SAME("state")
			PG_PV_SAME("throughputCeilingMibps") PG_PV_SAME("capacityGib") PG_PV_SAME("readThroughputMibps")
			" THEN RETURN NULL; END IF;"
			" IF TG_OP <> 'INSERT' AND OLD.kind IN ('node', 'shelf') THEN PERFORM aq_placever_set(OLD.parent); END IF;"
			" IF TG_OP <> 'DELETE' AND NEW.kind IN ('node', 'shelf') THEN PERFORM aq_placever_set(NEW.parent); END IF;"
			" RETURN NULL; END $$;"
			"CREATE TRIGGER resources_placever AFTER INSERT OR UPDATE OR DELETE ON resources"
			" FOR EACH ROW EXECUTE FUNCTION aq_placever_trg();"
			"INSERT INTO usage SELECT 'placever/' || parent, nextval('placever_seq'), 0, 0, 0, 0 FROM resources"
			" WHERE kind IN ('node', 'shelf') GROUP BY parent;",
	},
	{
		/* Group commit on PostgreSQL (db_pg.c): transactions commit with
		 * synchronous_commit off, and one flush then makes every commit
		 * before it durable. The flush is a transaction that sets this
		 * sequence with synchronous_commit on: setval always writes WAL
		 * and takes a transaction id, so its COMMIT waits until the WAL
		 * up to it, every earlier commit's included, is on disk; a
		 * sequence takes no row lock, so the flushes of several replicas
		 * never wait for one another. Nothing to do on SQLite. */
		.what = "the sequence group commit's flush sets",
		.sql[DB_SQLITE] = "SELECT 1;",
		.sql[DB_PG] = "CREATE SEQUENCE aq_flush_seq;",
	},
	{
		/* The cost of a write's triggers on PostgreSQL (bench/api: a volume
		 * create's transactions and its agent's reports spent most of their
		 * time in them, under the writer mutex). An UPDATE that changes
		 * none of what a row adds to usage (kind, parent, storagePool and
		 * the summed fields, compared as their JSON text) leaves usage as
		 * it is, instead of subtracting and adding the same row: most
		 * updates of a volume or placement are state changes. And the
		 * triggers' helpers become PL/pgSQL, whose statements are planned
		 * once per session, where a SQL function called from a trigger is
		 * parsed and planned at every call; aq_json_num loses STRICT (its
		 * body gives NULL for a NULL argument all the same), which kept
		 * PostgreSQL from inlining it: each of the four a usage row sums
		 * was a function call of its own. */
		.what = "cheaper usage and dirty-mark triggers",
		.sql[DB_SQLITE] = "SELECT 1;",
		.sql[DB_PG] =
			"CREATE OR REPLACE FUNCTION aq_usage_add(r resources, sign integer) RETURNS void LANGUAGE plpgsql AS $$"
			" BEGIN INSERT INTO usage AS u VALUES (aq_usage_key(r.kind, r.parent, r.doc), sign,"
			"  CASE WHEN r.kind = 'volume' THEN sign * COALESCE(aq_json_num(r.doc, '{capacityGib}'), 0) ELSE 0 END,"
			"  sign * COALESCE(aq_json_num(r.doc, CASE WHEN r.kind = 'volume' THEN '{throughputMibps}'"
			"   ELSE '{mibps}' END::text[]), 0),"
			"  CASE WHEN r.kind = 'volume' THEN sign * COALESCE(aq_json_num(r.doc, '{coldTierSizeGib}'), 0) ELSE 0 END,"
			"  CASE WHEN r.kind = 'volume' THEN sign * COALESCE(aq_json_num(r.doc, '{hotTierSizeUsedGib}'), 0) ELSE 0 END)"
			" ON CONFLICT (name) DO UPDATE SET n = u.n + excluded.n,"
			"  capacity_gib = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.capacity_gib + excluded.capacity_gib END,"
			"  mibps = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.mibps + excluded.mibps END,"
			"  cold_gib = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.cold_gib + excluded.cold_gib END,"
			"  hot_gib = CASE WHEN u.n + excluded.n = 0 THEN 0 ELSE u.hot_gib + excluded.hot_gib END; END $$;"
			"CREATE OR REPLACE FUNCTION aq_usage_trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
			" IF TG_OP = 'UPDATE' AND OLD.kind = NEW.kind AND OLD.parent = NEW.parent AND ((OLD.kind = 'volume'"
			PG_PV_SAME("storagePool") PG_PV_SAME("capacityGib") PG_PV_SAME("throughputMibps")
			PG_PV_SAME("coldTierSizeGib") PG_PV_SAME("hotTierSizeUsedGib") ") OR (OLD.kind = 'placement'"
			PG_PV_SAME("mibps") ")) THEN RETURN NULL; END IF;"
			" IF TG_OP <> 'INSERT' AND OLD.kind IN ('volume', 'placement') THEN PERFORM aq_usage_add(OLD, -1); END IF;"
			" IF TG_OP <> 'DELETE' AND NEW.kind IN ('volume', 'placement') THEN PERFORM aq_usage_add(NEW, 1); END IF;"
			" RETURN NULL; END $$;"
			"CREATE OR REPLACE FUNCTION aq_json_num(doc json, path text[]) RETURNS double precision"
			" LANGUAGE sql IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE AS $$" PG_JSON_NUM_BODY
			"CREATE OR REPLACE FUNCTION aq_dirty_mark(n text) RETURNS void LANGUAGE plpgsql AS $$"
			" BEGIN INSERT INTO dirty AS d VALUES (n, 1) ON CONFLICT (node) DO UPDATE SET mark = d.mark + 1; END $$;",
	},
};

const int db_schema_version = (int)(sizeof(db_steps) / sizeof(db_steps[0]));
