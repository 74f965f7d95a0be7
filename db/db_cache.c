/* db_cache: committed documents by name, in memory, for the read path.
 *
 * aquiferd answers "GET one resource" on its socket thread from here, so the
 * hot read path never touches SQLite there. Coherence: every write goes
 * through db_put/db_delete, which queue (name, new text) on their connection
 * and publish to the cache when the transaction commits, while still holding
 * the process's writer mutex (db_sqlite.c); a miss is filled by a reader that
 * also holds that mutex. So the cache only ever holds committed text, in
 * commit order. Bounded: past DB_CACHE_MAX entries a random chain is evicted.
 *
 * On PostgreSQL other aquiferd replicas write too, and this process hears of
 * their commits only through its listener (db_watch.c: LISTEN aq_doc, one
 * NOTIFY per written name at commit). There the cache works by
 * invalidation instead: a commit (own or heard of) removes its names and
 * bumps their bucket's generation; a reader fills a miss only when neither
 * its bucket's generation nor the cache's epoch moved while it read the
 * database (db_cache_token/db_cache_fill), so a fill can never put back
 * text older than a commit already heard of. A lookup is served only while
 * the listener is connected and has nothing unread (db_cache_watch_fresh:
 * its socket not readable, not busy applying), so a notification that
 * reached this process is applied before any GET after it is answered from
 * memory. A lost listener connection drops everything and the cache stays
 * off until it listens again.
 */
#include "db/db_cache.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_hash.h"

#define DB_CACHE_BUCKETS 65536u
#define DB_CACHE_MAX 100000u

struct centry {
	struct centry *next;
	char *name;
	char *text;
	size_t len;
};

/* The process-wide cache of the one database a process serves. gen and
 * epoch change under the write lock (db_cache_token reads them under the
 * read lock). The watch fields are the listener's (db_cache_watch_*). */
static struct {
	pthread_rwlock_t lock;
	struct centry *b[DB_CACHE_BUCKETS];
	uint32_t gen[DB_CACHE_BUCKETS];
	uint64_t epoch;
	size_t n;
	unsigned evict;
	atomic_bool watched;  /* invalidation mode: a listener owns freshness */
	atomic_bool listening; /* ... and is connected and listening */
	atomic_int busy;      /* ... and is reading or applying notifications */
	atomic_int fd;        /* ... on this socket (-1: none) */
} cache = { .lock = PTHREAD_RWLOCK_INITIALIZER, .fd = -1 };

static unsigned c_hash(const char *s)
{
	return ut_hash_fnv32_str(s) % DB_CACHE_BUCKETS;
}

bool db_cache_watch_fresh(void)
{
	struct pollfd p = { .events = POLLIN };

	if (!atomic_load(&cache.watched))
		return true;
	if (!atomic_load(&cache.listening) || (p.fd = atomic_load(&cache.fd)) < 0)
		return false;
	/* first the socket, then busy: a notification read off the socket
	 * before the poll is still being applied (busy) or is applied */
	if (poll(&p, 1, 0) != 0)
		return false;
	return atomic_load(&cache.busy) == 0;
}

int db_cache_lookup(const char *name, char **text, size_t *len)
{
	struct centry *e;
	int rc = AQ_ENOENT;

	if (!db_cache_watch_fresh())
		return AQ_ENOENT;
	pthread_rwlock_rdlock(&cache.lock);
	for (e = cache.b[c_hash(name)]; e; e = e->next)
		if (strcmp(e->name, name) == 0) {
			*text = malloc(e->len + 1);
			if (*text) {
				memcpy(*text, e->text, e->len + 1);
				*len = e->len;
				rc = AQ_OK;
			} else {
				rc = AQ_ENOMEM;
			}
			break;
		}
	pthread_rwlock_unlock(&cache.lock);
	return rc;
}

static void c_free(struct centry *e)
{
	free(e->name);
	free(e->text);
	free(e);
}

/* Replace name's entry in bucket h by text (NULL: remove it); write lock
 * held. fresh is the new entry (NULL: none). */
static void c_put_locked(unsigned h, const char *name, struct centry *fresh)
{
	struct centry **pp, *e;

	for (pp = &cache.b[h]; (e = *pp); pp = &e->next)
		if (strcmp(e->name, name) == 0) {
			*pp = e->next;
			c_free(e);
			cache.n--;
			break;
		}
	while (fresh && cache.n >= DB_CACHE_MAX) { /* evict some chain */
		struct centry **vb = &cache.b[cache.evict++ % DB_CACHE_BUCKETS];

		while ((e = *vb)) {
			*vb = e->next;
			c_free(e);
			cache.n--;
		}
	}
	if (fresh) {
		fresh->next = cache.b[h];
		cache.b[h] = fresh;
		cache.n++;
	}
}

static struct centry *c_new(const char *name, const char *text)
{
	struct centry *fresh = NULL;

	if (text) {
		fresh = calloc(1, sizeof(*fresh));
		if (fresh && (!(fresh->name = strdup(name)) || !(fresh->text = strdup(text)))) {
			c_free(fresh);
			fresh = NULL;
		}
		if (fresh)
			fresh->len = strlen(text);
	}
	return fresh;
}

void db_cache_store(const char *name, const char *text)
{
	struct centry *fresh = c_new(name, text);

	pthread_rwlock_wrlock(&cache.lock);
	c_put_locked(c_hash(name), name, fresh);
	pthread_rwlock_unlock(&cache.lock);
	/* text NULL (a delete) or an allocation failure both leave no entry:
	 * the next read goes to the database. */
}

uint64_t db_cache_token(const char *name)
{
	uint64_t tok;

	pthread_rwlock_rdlock(&cache.lock);
	tok = (cache.epoch << 32) | cache.gen[c_hash(name)];
	pthread_rwlock_unlock(&cache.lock);
	return tok;
}

void db_cache_fill(const char *name, const char *text, uint64_t token)
{
	unsigned h = c_hash(name);
	struct centry *fresh = c_new(name, text);

	pthread_rwlock_wrlock(&cache.lock);
	if (fresh && atomic_load(&cache.listening) && ((cache.epoch << 32) | cache.gen[h]) == token) {
		c_put_locked(h, name, fresh);
		fresh = NULL;
	}
	pthread_rwlock_unlock(&cache.lock);
	if (fresh)
		c_free(fresh);
}

void db_cache_invalidate(const char *name)
{
	unsigned h = c_hash(name);

	pthread_rwlock_wrlock(&cache.lock);
	cache.gen[h]++;
	c_put_locked(h, name, NULL);
	pthread_rwlock_unlock(&cache.lock);
}

void db_cache_drop_all(void)
{
	struct centry *e;

	pthread_rwlock_wrlock(&cache.lock);
	cache.epoch++;
	for (unsigned i = 0; i < DB_CACHE_BUCKETS; i++)
		while ((e = cache.b[i])) {
			cache.b[i] = e->next;
			c_free(e);
		}
	cache.n = 0;
	pthread_rwlock_unlock(&cache.lock);
}

void db_cache_watch_begin(void)
{
	atomic_store(&cache.watched, true);
}

void db_cache_watch_state(int fd, bool listening)
{
	if (!listening) {
		/* off first, then empty: no lookup or fill is served from what
		 * was cached while notifications may have been lost */
		atomic_store(&cache.listening, false);
		atomic_store(&cache.fd, -1);
		db_cache_drop_all();
		return;
	}
	atomic_store(&cache.fd, fd);
	atomic_store(&cache.listening, true);
}

void db_cache_watch_busy(bool busy)
{
	atomic_store(&cache.busy, busy ? 1 : 0);
}

bool db_cache_watched(void)
{
	return atomic_load(&cache.watched);
}
