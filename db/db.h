/* db: Aquifer's persistence behind one interface.
 *
 * Resources (projects, locations, pools, volumes, operations, nodes, shelves)
 * are JSON documents keyed by their full resource name, with their kind and
 * parent collection indexed. One struct db is one connection and belongs to
 * one thread at a time; open one per worker thread. Two engines sit behind
 * it: SQLite (WAL; the default, one file) and PostgreSQL (libpq), chosen by
 * the database URL given to db_open(). Schema changes are numbered
 * migrations, the same numbers on both engines, run by db_open().
 *
 * All functions return AQ_OK or a negative aq_err code: AQ_ENOENT (no such
 * row), AQ_EEXIST (create of an existing name), AQ_EBUSY (lock contention
 * that outlived the busy timeout, or on PostgreSQL a serialization failure:
 * the transaction changed nothing and may be run again), AQ_EINVAL (bad page
 * token or filter, refused URL),
 * AQ_EIO (anything else from the engine; the engine's text goes to msg).
 * Documents returned through json_t ** are new references owned by the caller.
 */
#ifndef AQ_DB_H
#define AQ_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

struct db;

/* The newest schema version db_open() migrates to. A database records its
 * version in SQLite's user_version (what every SQLite file so far carries)
 * or in PostgreSQL's schema_version table (one row per step applied). */
extern const int db_schema_version;

/* Open the database url names and migrate it to db_schema_version:
 *   PATH or sqlite:PATH   a SQLite file (created if missing)
 *   postgres://... or postgresql://...   a PostgreSQL database (libpq URI).
 * The PostgreSQL URL must not carry a password (AQ_EINVAL: it would show
 * in process lists, logs and shell history): libpq takes it from a password
 * file (?passfile=FILE or PGPASSFILE, else ~/.pgpass) or PGPASSWORD, and
 * the rest of the standard PG environment (PGHOST, PGUSER, PGSSLMODE...)
 * fills what the URL leaves out. A database at a newer version than this
 * program is refused (AQ_EINVAL). */
int db_open(const char *url, struct db **out, aq_msg *msg);
void db_close(struct db *db);

/* The SQLite file a db_open() url names, or NULL when url names a database
 * server (PostgreSQL), which has no local folder. */
const char *db_file_path(const char *url);
/* "sqlite" or "postgres". */
const char *db_engine_name(const struct db *db);

/* Transactions: every mutation with its Operation is one. db_begin() starts
 * one that sees every commit made before it, and keeps a check-then-apply
 * sequence correct against every other writer: SQLite takes the write lock
 * at once (BEGIN IMMEDIATE); PostgreSQL runs it SERIALIZABLE, so when
 * another process (another aquiferd replica) committed a conflicting change
 * meanwhile, a call or db_commit() fails with AQ_EBUSY and the caller runs
 * the whole transaction again. Writers of one process queue on one mutex
 * first, on both engines. Nesting is not supported. After a failed
 * db_commit() the transaction is still open: call db_rollback(), which is
 * also safe to call without an open transaction.
 *
 * db_commit() (and db_put/db_delete outside a transaction) returns AQ_OK
 * only once the change is on disk: acknowledge after it, never before.
 * On SQLite that is group commit: COMMIT writes the WAL without waiting
 * for the disk, the writer mutex goes to the next transaction, and one
 * fsync of the WAL then serves every commit written before it started
 * (db.c). Other connections may read a commit in that short window
 * before its fsync; what a client was told is always on disk. A failed
 * fsync stops the process (a restart recovers what is on disk). PostgreSQL
 * the same way (db_pg.c: synchronous_commit off, one WAL flush for every
 * commit before it); there a failed flush or a re-established connection
 * makes the commits it did not cover return AQ_EIO (outcome unknown). */
int db_begin(struct db *db);
int db_commit(struct db *db);
void db_rollback(struct db *db);

/* Group commit's counters, process-wide: commits written, commits known on
 * disk (synced <= commits), and the syncs (fsyncs of the log; on
 * PostgreSQL WAL flushes, pg_sync) that made them so. statements: every
 * statement the engine was given to run (BEGIN and COMMIT included, the
 * syncs not); round_trips: the waits for
 * the engine's answer among them (on PostgreSQL a round trip to the
 * server each, a pipeline of statements one, db_reads; on SQLite every
 * statement is one), so that a handler's cost can be measured and held.
 * For /metrics and tests. */
struct db_sync_stats {
	uint64_t commits;
	uint64_t synced;
	uint64_t syncs;
	uint64_t statements;
	uint64_t round_trips;
};
void db_sync_stats(struct db_sync_stats *st);
/* The number db_sync_stats counts this connection's last commit as (0:
 * none yet): on SQLite, once db_commit() returned, synced >= it. */
uint64_t db_commit_seq(const struct db *db);

/* Group transactions (db_group.c): fn's writes, in one transaction with
 * other callers' bodies. fn runs between a begin and a commit that
 * db_group_run makes (it must not call db_begin/db_commit), on the
 * connection of whichever caller leads the group (its db argument, not
 * necessarily the caller's), with the other bodies queued meanwhile.
 * db_group_run returns once the transaction holding fn's writes committed
 * (and is durable, as db_commit), or failed: fn's result (or the commit's)
 * is returned and fn's writes are undone. fn returns AQ_OK to keep its
 * writes or an error to undo them; then the group rolls back and each of
 * its bodies runs again alone, so fn may run twice and must set its
 * outputs from what it reads. Groups form while another writer holds the
 * writer mutex (no timer): at most DB_GROUP_MAX bodies, and no more are
 * taken once a group has run DB_GROUP_BUDGET_NS. Never called inside a
 * transaction of db (AQ_EINVAL). Thread-safe; one queue per lane per
 * process.
 *
 * Lanes: a leader takes every queued DB_GROUP_LIVE body (the agents'
 * status reports, which renew their node's liveness) before any
 * DB_GROUP_API body (volume creates), and those before any DB_GROUP_RECON
 * body (the reconciler's visits), each lane in arrival order; a long writer that runs many transactions (the failover pass)
 * lets the live lane through between them with db_group_yield.
 *
 * db_group_close (a stopping process): every body queued and not yet taken
 * fails with AQ_EUNAVAIL (nothing of it was written), and so does every
 * later call; a group already running finishes and its callers get its
 * result. db_group_reopen undoes it (tests). */
#define DB_GROUP_MAX 256
#define DB_GROUP_BUDGET_NS (20 * 1000000ull)
enum db_group_lane {
	DB_GROUP_LIVE,  /* agents' status reports (liveness first) */
	DB_GROUP_API,   /* volume creates: one commit for many clients' */
	DB_GROUP_RECON, /* the reconciler's visits */
	DB_GROUP_LANES
};
typedef int (*db_group_fn)(struct db *db, void *arg);
int db_group_run(struct db *db, enum db_group_lane lane, db_group_fn fn, void *arg);
/* Wait until the live lane's bodies queued now have run (and no group is
 * running), at most timeout_ns: for a writer between two of its own
 * transactions, never inside one. True when the lane was empty in time. */
bool db_group_yield(uint64_t timeout_ns);
void db_group_close(void);
void db_group_reopen(void);
/* Counters: groups committed or lost, bodies they ran, bodies run again
 * alone, bodies queued now; per lane, the groups that held at least one
 * of its bodies (its commits), its bodies, and each body's time from its
 * call to its result (sum and max: a report's wait for its commit). */
struct db_group_lane_stats {
	uint64_t groups;
	uint64_t items;
	uint64_t wait_ns;
	uint64_t wait_max_ns;
};
struct db_group_stats {
	uint64_t groups;
	uint64_t items;
	uint64_t alone;
	uint64_t queued;
	struct db_group_lane_stats lane[DB_GROUP_LANES];
};
void db_group_stats(struct db_group_stats *st);
/* The lane's name for metrics ("live", "api", "recon"). */
const char *db_group_lane_name(enum db_group_lane lane);
/* Lower the bounds (max 1..DB_GROUP_MAX bodies, budget_ns; 0 or out of
 * range: the default), process-wide: for tests, which need a group not
 * cut by the clock on a loaded machine, and to see each bound hold. */
void db_group_limits(size_t max, uint64_t budget_ns);
/* The time budget in force (DB_GROUP_BUDGET_NS unless db_group_limits set
 * another): for batches that run inside one body (server/srv_visit.c). */
uint64_t db_group_budget(void);

/* One resource. */
int db_get(struct db *db, const char *name, json_t **doc);
/* Several resources in one query: names is a JSON array of names; *docs
 * gets {name: document} of those that exist (a new reference). For
 * sweeps that would otherwise read one row per round trip. */
int db_get_many(struct db *db, const json_t *names, json_t **docs);
/* Which of the names in parents (a JSON array) are the parent of at least
 * one resource of kind: *found gets {parent: true} (a new reference). One
 * query, to skip per-parent work where there is nothing. */
int db_parents_with(struct db *db, const char *kind, const json_t *parents, json_t **found);
/* The committed JSON text of one resource (malloc'd, NUL-terminated), from
 * the process's document cache when it holds it (db_cache.h), else from the
 * database (filling the cache). On PostgreSQL, where other aquiferd
 * replicas write too, the cache serves only while db_watch_start()'s
 * listener is up (else every read goes to the database). Outside a
 * transaction only. */
int db_get_text(struct db *db, const char *name, char **text, size_t *len);

/* The process's cache invalidation listener (db_watch.c), for a server
 * process on PostgreSQL: one thread and one more connection to url that
 * LISTENs on channel aq_doc, where every committed write of a resource
 * (any replica's, any tool's: a trigger, schema step 7) notifies its name,
 * and removes that name from the document cache. Until it listens, and
 * from the moment its connection is lost until it listens again, the
 * cache is empty and serves nothing; on a lost connection it reconnects
 * every second. On a SQLite url: nothing to do (AQ_OK). Once per process;
 * a second start is a no-op. db_watch_stop: join the thread (the cache then
 * serves nothing). db_watch_connects: how many times it started listening. */
int db_watch_start(const char *url, aq_msg *msg);
void db_watch_stop(void);
unsigned long db_watch_connects(void);
/* Insert (create=true: AQ_EEXIST if the name exists) or replace
 * (create=false: AQ_ENOENT if it does not). kind and parent are stored for
 * listing; doc is not consumed. */
int db_put(struct db *db, const char *kind, const char *parent, const char *name,
	   const json_t *doc, bool create);
int db_delete(struct db *db, const char *name);

/* Listing. filter: NULL or "field=value[ AND field2=value2...]" where field is a
 * top-level or dotted JSON path of letters/digits/_ and value is bare or
 * double-quoted; order_desc sorts by name descending. page_token is the
 * opaque token from a previous call (bound to the same kind/parent/filter/
 * order; anything else is AQ_EINVAL). page_size 0 means "no limit" and
 * values over 1000 are lowered to 1000. *items gets a JSON array; *next_token a
 * malloc'd token or NULL when this was the last page. parent NULL means
 * every parent (a cluster-wide list); parent "-"-suffixed paths are not
 * interpreted here. */
struct db_query {
	const char *kind;
	const char *parent;
	const char *parent_prefix;  /* instead of parent: every parent starting so */
	const char *filter;
	bool order_desc;
	int page_size;
	const char *page_token;
};
int db_list(struct db *db, const struct db_query *q, json_t **items, char **next_token,
	    aq_msg *msg);

/* Every page of q at once (q->page_token and q->page_size are ignored):
 * *items is one JSON array. For internal sweeps, not for client paging. */
int db_list_all(struct db *db, const struct db_query *q, json_t **items, aq_msg *msg);

/* Number of resources of kind under parent (NULL: everywhere), and an
 * aggregate helper: the sum of a numeric JSON field over them (int64 strings
 * count as numbers). parent_prefix matches parent exactly. */
int db_count(struct db *db, const char *kind, const char *parent, int64_t *n);
int db_sum(struct db *db, const char *kind, const char *parent, const char *field,
	   double *sum);

/* Aggregates over the resources of kind under parent whose JSON field
 * where_field equals where_value: *count, and sums[i] of the numeric JSON
 * fields fields[0..n-1] (int64 strings count as numbers). Served by an index
 * for volumes by storagePool. */
int db_aggregate(struct db *db, const char *kind, const char *parent, const char *where_field,
		 const char *where_value, const char *const *fields, int n, int64_t *count,
		 double *sums);

/* Number of volumes of every project in location (parent
 * "projects/<p>/locations/<location>") whose shareName is share: share
 * names are unique per location across projects (one NFS export path per
 * node). Served by the volumes-by-shareName index. */
int db_volume_share_count(struct db *db, const char *location, const char *share, int64_t *n);

/* Usage counters, kept by the database in the transaction of every write
 * of a volume or a placement (triggers, schema step 4), so that a check
 * reads one row however full the location is:
 *   a storage pool's full name: its volumes (count) and the sums of their
 *     capacityGib, throughputMibps, coldTierSizeGib, hotTierSizeUsedGib
 *     (a volume's storagePool, an ID or a full name, resolved in its
 *     parent);
 *   a node's name ("nodes/N"): its placements (count) and the sum of their
 *     mibps (in mibps; the other sums stay 0).
 * Inside a transaction they include its own writes. */
struct db_usage {
	int64_t count;
	double capacity_gib;
	double mibps;
	double cold_gib;
	double hot_gib;
};
/* The counters of name; all 0 (and AQ_OK) when nothing counts there. */
int db_usage_get(struct db *db, const char *name, struct db_usage *u);
/* Every counter row whose name starts with prefix, in name order, to fn. */
typedef void (*db_usage_fn)(void *arg, const char *name, const struct db_usage *u);
int db_usage_each(struct db *db, const char *prefix, db_usage_fn fn, void *arg);
/* The counters a volume create's checks need, in one query (on PostgreSQL
 * one round trip under the writer mutex): every storage pool's of location
 * loc (an id; pools of any project, names
 * "projects/<p>/locations/<loc>/storagePools/<id>"), every node's whose
 * resource is under "locations/<loc>", and the location's placement
 * version (the row "placever/locations/<loc>", db_placever: its count is
 * the version), in name order, to fn. Rows of other
 * locations are not read. AQ_EINVAL for an empty loc, one with a '/', or
 * one over 200 bytes. */
int db_usage_location(struct db *db, const char *loc, db_usage_fn fn, void *arg);
/* The placement version of location loc (an id, as db_usage_location):
 * the value of the usage row "placever/locations/<loc>", which triggers
 * (schema step 7) set to a value never used before in the transaction of
 * every write that makes or removes a node or shelf of the location or
 * changes its state, throughputCeilingMibps, capacityGib or
 * readThroughputMibps; 0 while none did. Equal values read in two
 * transactions mean those fields of those resources are the same
 * (srv_place.c caches them under it). One indexed row: one round trip. */
int db_placever(struct db *db, const char *loc, int64_t *v);
/* The consistency check: recompute every counter from the volumes and
 * placements as they stand (in C, apart from the triggers) and compare
 * with the stored rows, within 1e-6 of each sum. AQ_OK when all agree;
 * AQ_EIO naming the first that differs in msg ("placever/" rows are
 * versions, not counters: skipped). For tests and operators
 * (aquiferd db check). Reads one snapshot only inside a transaction. */
int db_usage_verify(struct db *db, aq_msg *msg);

/* A few top-level fields of every resource of kind under parent, in name
 * order: *items is a JSON array of {"name": ..., field: value...} (a
 * field a document lacks is null). Cheaper than db_list_all where a sweep
 * needs only these (placement reads every node of a location inside a
 * create's transaction). 1..8 fields of letters, digits and '_' (else
 * AQ_EINVAL). */
int db_list_fields(struct db *db, const char *kind, const char *parent, const char *const *fields, int n,
		   json_t **items);
/* The same over the resources of two kinds under parent, in one list in
 * name order (one query where two would be two round trips: a location's
 * nodes and shelves, told apart by their names). */
int db_list_fields2(struct db *db, const char *kind, const char *kind2, const char *parent,
		    const char *const *fields, int n, json_t **items);

/* Several of the reads above, independent of one another, at once: on
 * PostgreSQL in one round trip (a libpq pipeline: every statement sent,
 * then every result read), on SQLite one after another. For a transaction
 * whose checks read several things before they write (a volume create:
 * its parents and pool, its share name, its location's nodes, shelves and
 * counters), so that under the writer mutex they cost one wait for the
 * server instead of one each. A read whose input is NULL is not made;
 * each one's result is what its own call (named below) gives, inside the
 * caller's transaction as that would be. The first failure is returned
 * and then no output is set (docs and rows stay NULL; usage_fn may have
 * seen rows). docs and rows are new references for the caller. */
struct db_reads {
	/* db_get_many: names (a JSON array) -> docs */
	const json_t *names;
	json_t *docs;
	/* db_volume_share_count: share_loc, share -> share_n */
	const char *share_loc, *share;
	int64_t share_n;
	/* db_list_fields2: kind, kind2, parent, fields[nfields] -> rows */
	const char *kind, *kind2, *parent;
	const char *const *fields;
	int nfields;
	json_t *rows;
	/* db_usage_location: usage_loc -> usage_fn(usage_arg, ...) per row */
	const char *usage_loc;
	db_usage_fn usage_fn;
	void *usage_arg;
};
int db_reads(struct db *db, struct db_reads *r);

/* A transaction's inserts at once: between db_puts_start and db_puts_send,
 * db_put(create=true) in the open transaction only records the insert
 * (AQ_OK, or AQ_EINVAL past DB_PUTS_MAX: a caller's bug), and
 * db_puts_send writes them all in the order given: on PostgreSQL in one
 * round trip (a libpq pipeline), on SQLite one after another, the same
 * statements db_put runs. For a transaction that decides all its writes
 * before it makes them (a volume create: the volume, its operation and
 * its placement), so that under the writer mutex they cost one wait for
 * the server instead of one each. db_puts_send returns AQ_OK or the first
 * failure (AQ_EEXIST: that name exists), with the index of the failed
 * insert (0 = the first db_put) in *failed when failed is not NULL; after
 * a failure the transaction must be rolled back (on PostgreSQL the inserts
 * after the failed one were sent too). Either way the batch is closed.
 * db_commit sends what a batch still holds first; db_rollback drops it
 * (db_puts_drop). db_puts_start: AQ_EINVAL outside a transaction or in
 * an open batch, AQ_ENOMEM. */
int db_puts_start(struct db *db);
int db_puts_send(struct db *db, int *failed);
void db_puts_drop(struct db *db);

/* Dirty marks: which nodes' intents may have changed since the reconciler
 * last built them. The engines keep them with triggers (schema step 5) in
 * the transaction of every write of a placement (its node, before and after
 * a move) or of a volume (the node its placement names), whoever writes it
 * (any replica's handler, an agent's report, aquiferd db migrate), so a
 * committed change is never without its mark. A mark is a count that every
 * such write raises. db_dirty_list: *marks = {node name: mark} of every
 * marked node (a new reference). db_dirty_clear: in its own transaction
 * (outside one only; AQ_EINVAL inside), delete each node's mark of marks
 * (as db_dirty_list gave them) that is still that count: a write committed
 * after the list keeps its node marked. */
int db_dirty_list(struct db *db, json_t **marks);
int db_dirty_clear(struct db *db, json_t *marks);
/* One more mark for node, in the caller's open transaction (AQ_EINVAL
 * outside one), for a change the triggers do not see: a pool, snapshot,
 * SMB user or location write that changes the intents of the nodes its
 * handler names (srv_mark.h). */
int db_dirty_mark(struct db *db, const char *node);

/* Sums of a numeric JSON field of kind, grouped by parent, for every parent
 * that is the name of a resource of parent_kind under grandparent:
 * *sums = {parent: sum}. One query, however many parents. */
int db_sum_by_parent(struct db *db, const char *kind, const char *field, const char *parent_kind,
		     const char *grandparent, json_t **sums);

/* Every resource, each given to fn with its kind, parent, name and JSON
 * text, in the order they were made, read in one statement so that the walk
 * sees one snapshot of the database even while others write: for copying a
 * database (aquiferd db migrate). fn returns AQ_OK for more, 1 to stop, or
 * an error, which ends the walk with it. */
typedef int (*db_each_fn)(void *arg, const char *kind, const char *parent, const char *name, const char *doc);
int db_each(struct db *db, db_each_fn fn, void *arg, aq_msg *msg);

/* Count of every kind, for metrics: calls fn(kind, count, arg) per kind, in
 * the order of the kinds' names. */
int db_count_kinds(struct db *db, void (*fn)(const char *kind, int64_t n, void *arg), void *arg);

/* Leases with a fencing token (db_lease.c): one document of kind "lease"
 * per name, written only through these calls, so they work alike on both
 * engines. Times are wall-clock ms since the Unix epoch as the caller
 * gives them: the replicas sharing a lease need clocks in step (NTP); the
 * epoch keeps a holder that outlived its lease from writing anyway. */
struct db_lease {
	char holder[128];  /* who holds it ("" before the first take) */
	char url[256];     /* the holder's address, for operators */
	int64_t epoch;     /* the fencing token: one more at every take */
	int64_t expire_ms; /* the holder's until then, others' after */
};
/* What a holder's fenced write names: the lease, its holder id, the epoch
 * it took the lease at. */
struct db_fence {
	const char *lease;
	const char *holder;
	int64_t epoch;
};
/* Take or renew lease name for holder at now_ms, in its own transaction:
 * free (no row yet) or expired (expire_ms <= now_ms), it is taken at the
 * next epoch; held by holder and unexpired, it is renewed at the same
 * epoch. Either way it then expires at now_ms + ttl_ms. AQ_OK: holder holds
 * it; AQ_EPRECOND: another holder does, unexpired; AQ_EBUSY: a concurrent
 * taker committed first (try again later). *out (may be NULL) gets the
 * lease as it stands for holder (AQ_OK) or as read (AQ_EPRECOND). */
int db_lease_take(struct db *db, const char *name, const char *holder, const char *url, int64_t now_ms,
		  int64_t ttl_ms, struct db_lease *out);
/* The lease name as committed (AQ_ENOENT: never taken). */
int db_lease_get(struct db *db, const char *name, struct db_lease *out);
/* The fencing check, in the caller's open transaction: AQ_OK when f's
 * holder holds f's lease at f's epoch, unexpired at now_ms; else
 * AQ_EPRECOND and the caller rolls back. On PostgreSQL the read makes the
 * transaction conflict with a concurrent take (AQ_EBUSY at commit). */
int db_lease_check(struct db *db, const struct db_fence *f, int64_t now_ms);
/* Give the lease up (a clean stop): it expires at once when f still holds
 * it at f's epoch (else AQ_EPRECOND, nothing changed). */
int db_lease_release(struct db *db, const struct db_fence *f);

#endif
