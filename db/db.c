/* db: the engine-neutral half of db.h.
 *
 * db_open() picks the engine from the URL and runs the numbered migrations;
 * every other call checks its arguments here, then lets the engine
 * (db_ops, db_engine.h) run the SQL. What must behave the same on both
 * engines lives here once: the writer mutex, group commit (one sync of the
 * log shared by every commit written before it), the document cache's
 * publication at commit. Listing (filter parsing, page tokens) is
 * db_list.c's.
 */
#include "db/db_engine.h"
#include "db/db_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A write waiting for its transaction to commit before the cache sees it. */
struct db_pending {
	struct ut_fifo_node node;
	char *name;
	char *text;  /* NULL: deleted */
};

static bool db_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool db_is_pg(const char *url)
{
	return db_prefix(url, "postgres://") || db_prefix(url, "postgresql://");
}

const char *db_file_path(const char *url)
{
	if (db_prefix(url, "sqlite:"))
		return url + strlen("sqlite:");
	return strstr(url, "://") ? NULL : url;
}

const char *db_engine_name(const struct db *db)
{
	return db->ops->name;
}

/* Writers of this process queue on a mutex before they take the engine's
 * write lock or start a serializable transaction. SQLite's busy handler
 * polls with growing sleeps, so under a stream of writes one connection
 * could lose the lock for its whole busy timeout; on PostgreSQL, workers of
 * one process would otherwise fail each other's serializable transactions.
 * With the mutex the wait is fair, AQ_EBUSY comes from other processes only,
 * and the cache sees commits in commit order. One process serves one
 * database, so one mutex is enough. */
static pthread_mutex_t db_writer = PTHREAD_MUTEX_INITIALIZER;

/* Group commit. An engine whose COMMIT does not wait for the disk (SQLite:
 * WAL with synchronous=NORMAL, db_sqlite.c) has a sync op; db_commit() then
 * returns only once a sync of the log started after that COMMIT's write has
 * finished, and one sync serves every commit written before it began (the
 * log is one append-only file: syncing it makes all earlier frames durable).
 * The COMMIT itself stays short under the writer mutex, so while one thread
 * waits for the disk the next transactions run and write theirs; the next
 * sync takes them all. Like PostgreSQL's XLogFlush: the first committer to
 * find no sync running starts one for everything committed so far, the
 * others wait for it and return if it covered them. Counters: committed
 * (written under db_writer), synced (known durable), syncs (fsyncs run). */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t committed;
	uint64_t synced;
	uint64_t syncs;
	bool syncing;
} db_gc = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* A sync that failed, or a PostgreSQL connection re-established
 * (db_epoch_bump), makes the durability of every commit written before it
 * unknown: on PostgreSQL a commit is written asynchronously and a server
 * that crashed meanwhile lost it, while a later flush on the restarted
 * server says nothing of it. Each commit notes the epoch before its first
 * statement (db_epoch_note: a bump between its COMMIT and the note would
 * go unseen) and is acknowledged only if none of these happened before
 * its sync. */
static uint64_t db_epoch;

void db_epoch_bump(void)
{
	__atomic_add_fetch(&db_epoch, 1, __ATOMIC_SEQ_CST);
}

static void db_epoch_note(struct db *db)
{
	db->commit_epoch = __atomic_load_n(&db_epoch, __ATOMIC_SEQ_CST);
}

/* A commit was written (writer mutex held): its number, for db_durable. */
static uint64_t db_committed(struct db *db)
{
	db->commit_seq = __atomic_add_fetch(&db_gc.committed, 1, __ATOMIC_SEQ_CST);
	return db->commit_seq;
}

/* Return once commit seq is on disk (writer mutex not held: others commit
 * meanwhile). A failed sync of SQLite's WAL leaves the log's state on disk
 * unknown (Linux may drop the dirty pages and report success next time),
 * so, as PostgreSQL does, the process stops: nothing unsynced was
 * acknowledged, and a restart recovers from what is on disk. A failed
 * flush on PostgreSQL (a lost connection, a restarted server) is AQ_EIO
 * for every commit it was to cover: their outcome is unknown, as when the
 * answer to a COMMIT is lost. */
static int db_durable(struct db *db, uint64_t seq)
{
	uint64_t epoch = db->commit_epoch;
	int rc = AQ_OK;

	if (!db->ops->sync)
		return AQ_OK; /* the engine's COMMIT already waited for the disk */
	pthread_mutex_lock(&db_gc.mu);
	while (db_gc.synced < seq && __atomic_load_n(&db_epoch, __ATOMIC_SEQ_CST) == epoch) {
		uint64_t target;

		if (db_gc.syncing) {
			pthread_cond_wait(&db_gc.cv, &db_gc.mu);
			continue;
		}
		db_gc.syncing = true;
		/* every commit numbered up to target has written its frames */
		target = __atomic_load_n(&db_gc.committed, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&db_gc.mu);
		rc = db->ops->sync(db);
		pthread_mutex_lock(&db_gc.mu);
		db_gc.syncing = false;
		if (rc != AQ_OK && db->ops->kind != DB_PG) {
			fprintf(stderr, "db: cannot sync the database log to disk (%s): stopping, a restart recovers what is on disk\n",
				aq_err_str(rc));
			abort();
		}
		if (rc != AQ_OK) {
			db_epoch_bump(); /* every waiter up to target: unknown */
			pthread_cond_broadcast(&db_gc.cv);
			continue;
		}
		db_gc.syncs++;
		if (target > db_gc.synced)
			db_gc.synced = target;
		pthread_cond_broadcast(&db_gc.cv);
		if (db->ops->after_sync) {
			/* the commits it covered are answered meanwhile; others
			 * commit and the next sync may start */
			pthread_mutex_unlock(&db_gc.mu);
			db->ops->after_sync(db);
			pthread_mutex_lock(&db_gc.mu);
		}
	}
	/* synced first, then the epoch: a connection mended (a restarted
	 * server) before the sync that covered seq bumped it before that
	 * sync's synced was set */
	rc = __atomic_load_n(&db_epoch, __ATOMIC_SEQ_CST) == epoch ? AQ_OK : AQ_EIO;
	pthread_mutex_unlock(&db_gc.mu);
	return rc;
}

/* Statements run, process-wide (db.h, db_sync_stats). */
static uint64_t db_stmts, db_trips;

void db_stmt_note(void)
{
	__atomic_add_fetch(&db_stmts, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&db_trips, 1, __ATOMIC_RELAXED);
}

void db_stmt_note_batch(unsigned n)
{
	__atomic_add_fetch(&db_stmts, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&db_trips, 1, __ATOMIC_RELAXED);
}

void db_sync_stats(struct db_sync_stats *st)
{
	pthread_mutex_lock(&db_gc.mu);
	st->commits = __atomic_load_n(&db_gc.committed, __ATOMIC_SEQ_CST);
	st->synced = db_gc.synced;
	st->syncs = db_gc.syncs;
	pthread_mutex_unlock(&db_gc.mu);
	st->statements = __atomic_load_n(&db_stmts, __ATOMIC_RELAXED);
	st->round_trips = __atomic_load_n(&db_trips, __ATOMIC_RELAXED);
}

uint64_t db_commit_seq(const struct db *db)
{
	return db->commit_seq;
}

static int db_migrate(struct db *db, aq_msg *msg)
{
	int rc, version = 0;

	if (db->ops->schema_lock && (rc = db->ops->schema_lock(db, msg)) != AQ_OK)
		return rc;
	if ((rc = db_begin(db)) != AQ_OK) {
		aq_fail(msg, rc, "cannot start the schema migration (%s)", aq_err_str(rc));
		goto out;
	}
	if ((rc = db->ops->schema_get(db, &version, msg)) != AQ_OK)
		goto out;
	if (version > db_schema_version) {
		rc = aq_fail(msg, AQ_EINVAL, "database schema version %d is newer than this program (%d)",
			     version, db_schema_version);
		goto out;
	}
	for (; version < db_schema_version; version++)
		if ((rc = db->ops->script(db, db_steps[version].sql[db->ops->kind], msg)) != AQ_OK ||
		    (rc = db->ops->schema_set(db, version + 1, db_steps[version].what, msg)) != AQ_OK)
			goto out;
	if ((rc = db_commit(db)) != AQ_OK)
		aq_fail(msg, rc, "cannot commit the schema migration (%s)", aq_err_str(rc));
out:
	db_rollback(db);
	if (db->ops->schema_unlock)
		db->ops->schema_unlock(db);
	return rc;
}

int db_open(const char *url, struct db **out, aq_msg *msg)
{
	struct db *db = NULL;
	const char *path = db_file_path(url);
	int rc;

	if (db_is_pg(url))
		rc = db_pg_open(url, &db, msg);
	else if (!path)
		rc = aq_fail(msg, AQ_EINVAL, "unsupported database URL \"%.80s\": give a SQLite file (PATH or sqlite:PATH) or postgres://...", url);
	else if (!*path)
		rc = aq_fail(msg, AQ_EINVAL, "the database file name is empty");
	else
		rc = db_sqlite_open(path, &db, msg);
	if (rc == AQ_OK)
		ut_fifo_init(&db->pending);
	if (rc == AQ_OK && (rc = db_migrate(db, msg)) == AQ_OK) {
		*out = db;
		db = NULL;
	}
	db_close(db);
	return rc;
}

static void db_pending_drop(struct db *db, bool publish)
{
	struct ut_fifo_node *n;

	while ((n = ut_fifo_pop(&db->pending))) {
		struct db_pending *p = UT_FIFO_ENTRY(n, struct db_pending, node);

		/* on PostgreSQL other replicas write too: a commit only
		 * invalidates (db_cache.c), before it is acknowledged */
		if (publish && db->ops->kind != DB_PG)
			db_cache_store(p->name, p->text);
		else if (publish && db_cache_watched())
			db_cache_invalidate(p->name);
		free(p->name);
		free(p->text);
		free(p);
	}
}

void db_close(struct db *db)
{
	if (!db)
		return;
	db_rollback(db);
	db->ops->close(db);
}

/* Record a committed-to-be write: in a transaction it waits for the commit;
 * outside one (autocommit, writer mutex held by the caller) it is published
 * at once. On allocation failure the entry is dropped from the cache, which
 * is always safe. */
void db_pending_add(struct db *db, const char *name, const char *text)
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
	rc = db->ops->begin(db);
	if (rc == AQ_OK) {
		db->in_tx = true;
		db_epoch_note(db); /* after a reconnect the begin made */
	} else {
		pthread_mutex_unlock(&db_writer);
	}
	return rc;
}

int db_commit(struct db *db)
{
	int rc = db->puts ? db_puts_send(db, NULL) : AQ_OK; /* nothing held is lost */
	uint64_t seq;

	if (rc == AQ_OK)
		rc = db->ops->commit(db);

	if (rc == AQ_OK) {
		db->in_tx = false;
		seq = db_committed(db);
		db_pending_drop(db, true); /* still under the writer mutex: commit order */
		pthread_mutex_unlock(&db_writer);
		rc = db_durable(db, seq); /* group commit: share the sync with others */
	}
	return rc;
}

void db_rollback(struct db *db)
{
	if (db && db->in_tx) {
		db_puts_drop(db);
		db->ops->rollback(db);
		db->in_tx = false;
		db_pending_drop(db, false);
		pthread_mutex_unlock(&db_writer);
	}
}

int db_get(struct db *db, const char *name, json_t **doc)
{
	char *text = NULL;
	size_t len = 0;
	json_t *j;
	int rc = db->ops->get(db, name, &text, &len);

	if (rc != AQ_OK)
		return rc;
	j = json_loadb(text, len, 0, NULL);
	free(text);
	if (!j)
		return AQ_EIO;
	*doc = j;
	return AQ_OK;
}

int db_many_row(void *arg, const char *name, const char *text)
{
	json_t *doc = json_loads(text, 0, NULL);

	if (!doc)
		return AQ_EIO;
	return json_object_set_new(arg, name, doc) == 0 ? AQ_OK : AQ_ENOMEM;
}

int db_get_many(struct db *db, const json_t *names, json_t **docs)
{
	json_t *out = json_object();
	char *text = json_dumps(names, JSON_COMPACT);
	int rc = out && text ? db->ops->get_many(db, text, db_many_row, out) : AQ_ENOMEM;

	free(text);
	if (rc == AQ_OK) {
		*docs = out;
		out = NULL;
	}
	json_decref(out);
	return rc;
}

static int db_parent_row(void *arg, const char *name, const char *text)
{
	(void)text;
	return json_object_set_new(arg, name, json_true()) == 0 ? AQ_OK : AQ_ENOMEM;
}

int db_parents_with(struct db *db, const char *kind, const json_t *parents, json_t **found)
{
	json_t *out = json_object();
	char *text = json_dumps(parents, JSON_COMPACT);
	int rc = out && text ? db->ops->parents_with(db, kind, text, db_parent_row, out) : AQ_ENOMEM;

	free(text);
	if (rc == AQ_OK) {
		*found = out;
		out = NULL;
	}
	json_decref(out);
	return rc;
}

int db_get_text(struct db *db, const char *name, char **text, size_t *len)
{
	int rc;

	/* PostgreSQL may have other writers (aquiferd replicas): the cache
	 * serves there only with the listener (db_watch.c) up; a miss fills
	 * with a token, refused if a commit of name was heard of meanwhile */
	if (db->ops->kind == DB_PG) {
		uint64_t tok;

		if (!db_cache_watched())
			return db->ops->get(db, name, text, len);
		if (db_cache_lookup(name, text, len) == AQ_OK)
			return AQ_OK;
		tok = db_cache_token(name);
		rc = db->ops->get(db, name, text, len);
		if (rc == AQ_OK)
			db_cache_fill(name, *text, tok);
		return rc;
	}
	if (db_cache_lookup(name, text, len) == AQ_OK)
		return AQ_OK;
	/* fill under the writer mutex, so no commit slips between read and store */
	pthread_mutex_lock(&db_writer);
	rc = db->ops->get(db, name, text, len);
	if (rc == AQ_OK)
		db_cache_store(name, *text);
	pthread_mutex_unlock(&db_writer);
	return rc;
}

int db_put(struct db *db, const char *kind, const char *parent, const char *name,
	   const json_t *doc, bool create)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	bool own = !db->in_tx;
	uint64_t seq = 0;
	int rc;

	if (!text)
		return AQ_ENOMEM;
	if (create && !own && db->puts)
		return db_puts_add(db, kind, parent, name, text); /* sent by db_puts_send */
	if (own) {
		pthread_mutex_lock(&db_writer);
		db_epoch_note(db);
	}
	rc = db->ops->put(db, kind, parent, name, text, create);
	if (rc == AQ_OK)
		db_pending_add(db, name, text);
	if (own && rc == AQ_OK)
		seq = db_committed(db); /* autocommit */
	if (own)
		pthread_mutex_unlock(&db_writer);
	if (seq)
		rc = db_durable(db, seq);
	free(text);
	return rc;
}

int db_delete(struct db *db, const char *name)
{
	bool own = !db->in_tx;
	uint64_t seq = 0;
	int rc;

	if (own) {
		pthread_mutex_lock(&db_writer);
		db_epoch_note(db);
	}
	rc = db->ops->del(db, name);
	if (rc == AQ_OK)
		db_pending_add(db, name, NULL);
	if (own && rc == AQ_OK)
		seq = db_committed(db); /* autocommit */
	if (own)
		pthread_mutex_unlock(&db_writer);
	if (seq)
		rc = db_durable(db, seq);
	return rc;
}

int db_count(struct db *db, const char *kind, const char *parent, int64_t *n)
{
	double v = 0;
	int rc = db->ops->scalar(db, kind, parent, NULL, &v);

	if (rc == AQ_OK)
		*n = (int64_t)v;
	return rc;
}

int db_sum(struct db *db, const char *kind, const char *parent, const char *field, double *sum)
{
	if (!db_path_ok(field))
		return AQ_EINVAL;
	return db->ops->scalar(db, kind, parent, field, sum);
}

int db_sum_by_parent(struct db *db, const char *kind, const char *field, const char *parent_kind,
		     const char *grandparent, json_t **sums)
{
	json_t *out = json_object();
	int rc;

	if (!out)
		return AQ_ENOMEM;
	if (!db_path_ok(field))
		rc = AQ_EINVAL;
	else
		rc = db->ops->sum_by_parent(db, kind, field, parent_kind, grandparent, out);
	if (rc == AQ_OK) {
		*sums = out;
		out = NULL;
	}
	json_decref(out);
	return rc;
}

int db_aggregate(struct db *db, const char *kind, const char *parent, const char *where_field,
		 const char *where_value, const char *const *fields, int n, int64_t *count,
		 double *sums)
{
	if (n < 0 || n > DB_MAX_AGG || !db_path_ok(where_field))
		return AQ_EINVAL;
	for (int i = 0; i < n; i++)
		if (!db_path_ok(fields[i]))
			return AQ_EINVAL;
	return db->ops->aggregate(db, kind, parent, where_field, where_value, fields, n, count, sums);
}

int db_volume_share_count(struct db *db, const char *location, const char *share, int64_t *n)
{
	return db->ops->share_count(db, location, share, n);
}

int db_count_kinds(struct db *db, void (*fn)(const char *kind, int64_t n, void *arg), void *arg)
{
	return db->ops->count_kinds(db, fn, arg);
}

bool db_fields_ok(const char *const *fields, int n)
{
	if (n < 1 || n > DB_MAX_AGG)
		return false;
	for (int i = 0; i < n; i++) {
		if (!fields[i] || !*fields[i] || strlen(fields[i]) > 64)
			return false;
		for (const char *c = fields[i]; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
				return false;
	}
	return true;
}

int db_fields_row(void *arg, const char *name, const char *text)
{
	json_t *doc = json_loads(text, 0, NULL);

	if (!doc || json_object_set_new(doc, "name", json_string(name)) != 0 || json_array_append_new(arg, doc) != 0)
		return AQ_ENOMEM;
	return AQ_OK;
}

int db_list_fields(struct db *db, const char *kind, const char *parent, const char *const *fields, int n,
		   json_t **items)
{
	return db_list_fields2(db, kind, kind, parent, fields, n, items);
}

int db_list_fields2(struct db *db, const char *kind, const char *kind2, const char *parent,
		    const char *const *fields, int n, json_t **items)
{
	json_t *a;
	int rc;

	if (!db_fields_ok(fields, n))
		return AQ_EINVAL;
	if (!(a = json_array()))
		return AQ_ENOMEM;
	if ((rc = db->ops->fields(db, kind, kind2, parent, fields, n, db_fields_row, a)) != AQ_OK) {
		json_decref(a);
		return rc;
	}
	*items = a;
	return AQ_OK;
}

static int db_dirty_row(void *arg, const char *node, const char *mark)
{
	return json_object_set_new(arg, node, json_integer(strtoll(mark, NULL, 10))) == 0 ? AQ_OK : AQ_ENOMEM;
}

int db_dirty_list(struct db *db, json_t **marks)
{
	json_t *m = json_object();
	int rc;

	if (!m)
		return AQ_ENOMEM;
	if ((rc = db->ops->dirty_each(db, db_dirty_row, m)) != AQ_OK) {
		json_decref(m);
		return rc;
	}
	*marks = m;
	return AQ_OK;
}

int db_dirty_clear(struct db *db, json_t *marks)
{
	const char *node;
	json_t *mark;
	int rc;

	if (db->in_tx)
		return AQ_EINVAL;
	if (json_object_size(marks) == 0)
		return AQ_OK;
	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	json_object_foreach(marks, node, mark)
		if ((rc = db->ops->dirty_clear(db, node, json_integer_value(mark))) != AQ_OK)
			goto out;
	rc = db_commit(db);
out:
	db_rollback(db);
	return rc;
}

int db_dirty_mark(struct db *db, const char *node)
{
	if (!db->in_tx)
		return AQ_EINVAL;
	return db->ops->dirty_mark(db, node);
}

int db_each(struct db *db, db_each_fn fn, void *arg, aq_msg *msg)
{
	int rc = db->ops->each(db, fn, arg, msg);

	return rc > 0 ? AQ_OK : rc;
}
