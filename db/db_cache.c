/* db_cache: committed documents by name, in memory, for the read path.
 *
 * aquiferd answers "GET one resource" on its socket thread from here, so the
 * hot read path never touches SQLite there. Coherence: every write goes
 * through db_put/db_delete, which queue (name, new text) on their connection
 * and publish to the cache when the transaction commits, while still holding
 * the process's writer mutex (db_sqlite.c); a miss is filled by a reader that
 * also holds that mutex. So the cache only ever holds committed text, in
 * commit order. Bounded: past DB_CACHE_MAX entries a random chain is evicted.
 */
#include "db/db_cache.h"

#include <pthread.h>
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

/* The process-wide cache of the one database a process serves. */
static struct {
	pthread_rwlock_t lock;
	struct centry *b[DB_CACHE_BUCKETS];
	size_t n;
	unsigned evict;
} cache = { .lock = PTHREAD_RWLOCK_INITIALIZER };

static unsigned c_hash(const char *s)
{
	return ut_hash_fnv32_str(s) % DB_CACHE_BUCKETS;
}

int db_cache_lookup(const char *name, char **text, size_t *len)
{
	struct centry *e;
	int rc = AQ_ENOENT;

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

void db_cache_store(const char *name, const char *text)
{
	unsigned h = c_hash(name);
	struct centry **pp, *e, *fresh = NULL;

	if (text) {
		fresh = calloc(1, sizeof(*fresh));
		if (fresh && (!(fresh->name = strdup(name)) || !(fresh->text = strdup(text)))) {
			c_free(fresh);
			fresh = NULL;
		}
		if (fresh)
			fresh->len = strlen(text);
	}
	pthread_rwlock_wrlock(&cache.lock);
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
	pthread_rwlock_unlock(&cache.lock);
	/* text NULL (a delete) or an allocation failure both leave no entry:
	 * the next read goes to the database. */
}
