/* db_cache: the in-memory copy of committed documents (see db_cache.c).
 * Filled and updated only by db/ (db.c, db_watch.c); read by anyone.
 * Two modes: on SQLite (one writer process) commits publish their text;
 * on PostgreSQL, once db_watch_start() runs (db.h), the cache is
 * "watched": commits and notifications only invalidate, misses fill with
 * a token, and lookups are served only while the listener is fresh. */
#ifndef AQ_DB_CACHE_H
#define AQ_DB_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api_error.h"

/* A malloc'd copy of name's committed JSON text: AQ_OK, or AQ_ENOENT when
 * the cache does not hold it (which says nothing about the database). */
int db_cache_lookup(const char *name, char **text, size_t *len);
/* Publish name's committed text (NULL: it was deleted). */
void db_cache_store(const char *name, const char *text);

/* Invalidation (watched mode). db_cache_token: take before reading name
 * from the database; db_cache_fill then stores the text read only when no
 * invalidation of name's bucket and no drop happened since, and the
 * listener is up. db_cache_invalidate: a commit wrote name (remove it,
 * bump its bucket). db_cache_drop_all: everything goes (a new epoch). */
uint64_t db_cache_token(const char *name);
void db_cache_fill(const char *name, const char *text, uint64_t token);
void db_cache_invalidate(const char *name);
void db_cache_drop_all(void);

/* The listener's side (db_watch.c). watch_begin: the cache is watched from
 * now on (lookups need a fresh listener). watch_state: listening on fd
 * (true), or not (false: drops everything, lookups miss until listening
 * again). watch_busy: reading or applying notifications. */
void db_cache_watch_begin(void);
void db_cache_watch_state(int fd, bool listening);
void db_cache_watch_busy(bool busy);
/* Watched mode on. */
bool db_cache_watched(void);
/* Whether a lookup may be served now: not watched, or the listener is
 * connected, its socket holds nothing unread and it is not applying. A
 * poll() with zero timeout, no I/O beyond it: safe on the socket thread. */
bool db_cache_watch_fresh(void);

#endif
