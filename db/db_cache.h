/* db_cache: the in-memory copy of committed documents (see db_cache.c).
 * Filled and updated only by db_sqlite.c; read by anyone. */
#ifndef AQ_DB_CACHE_H
#define AQ_DB_CACHE_H

#include <stddef.h>

#include "api/api_error.h"

/* A malloc'd copy of name's committed JSON text: AQ_OK, or AQ_ENOENT when
 * the cache does not hold it (which says nothing about the database). */
int db_cache_lookup(const char *name, char **text, size_t *len);
/* Publish name's committed text (NULL: it was deleted). */
void db_cache_store(const char *name, const char *text);

#endif
