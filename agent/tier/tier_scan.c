/* tier_scan: the consistency report of one volume: the keys the tier map,
 * the object store and the pending list hold, compared (JSON for the agent
 * API).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

int tier_keylist_add(void *arg, const char *key, uint64_t size)
{
	struct tier_keylist *l = arg;

	(void)size;
	if (l->n == l->cap) {
		void *p = realloc(l->k, (l->cap = l->cap ? l->cap * 2 : 256) * sizeof(*l->k));

		if (!p)
			return -ENOMEM;
		l->k = p;
	}
	if (!(l->k[l->n] = strdup(key)))
		return -ENOMEM;
	l->n++;
	return 0;
}

void tier_keylist_free(struct tier_keylist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->k[i]);
	free(l->k);
	memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has(struct tier_keylist *l, const char *k)
{
	return l->n && bsearch(&k, l->k, l->n, sizeof(*l->k), cmp_str) != NULL;
}

/* Append to a growing text buffer. */
struct sbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if (b->p && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap ? b->cap : 4096);

		while (cap <= b->len + (size_t)n)
			cap *= 2;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

static int tier_map_keys(struct tier_vol *v, const char *sql, struct tier_keylist *l)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_prepare_v2(v->db, sql, -1, &st, NULL) != SQLITE_OK)
		rc = -EIO;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
		rc = tier_keylist_add(l, (const char *)sqlite3_column_text(st, 0), 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&v->dbmu);
	if (l->n)
		qsort(l->k, l->n, sizeof(*l->k), cmp_str);
	return rc;
}

static void sb_keys(struct sbuf *b, const char *name, struct tier_keylist *l, struct tier_keylist *other, struct tier_keylist *also)
{
	size_t n = 0;

	sb_add(b, ",\"%s\":[", name);
	for (size_t i = 0; i < l->n; i++)
		if (!has(other, l->k[i]) && (!also || !has(also, l->k[i])))
			sb_add(b, "%s\"%s\"", n++ ? "," : "", l->k[i]); /* keys use [A-Za-z0-9._/-] only */
	sb_add(b, "],\"%sCount\":%zu", name, n);
}

int tier_scan(struct tier *t, uint64_t fsid, char **json)
{
	struct tier_store *s = tier_store_get(t);
	struct tier_vol **vs;
	size_t n = tier_vols_get(t, &vs), seen = 0;
	struct sbuf b = {0};
	int rc = s ? 0 : -EAGAIN;

	*json = NULL;
	sb_add(&b, "{\"volumes\":[");
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct tier_keylist objs = {0}, recs = {0}, pend = {0};
		struct tier_vol *v = vs[i];

		if (fsid && v->cfg.fsid != fsid)
			continue;
		rc = obj_list(s->obj, v->prefix, tier_keylist_add, &objs);
		if (rc == 0) {
			if (objs.n)
				qsort(objs.k, objs.n, sizeof(*objs.k), cmp_str);
			rc = tier_map_keys(v, "SELECT key FROM chunks", &recs);
		}
		if (rc == 0)
			rc = tier_map_keys(v, "SELECT key FROM pending", &pend);
		if (rc == 0) {
			/* orphans: objects no chunk record names; missing: records
			 * without their object; pending: known leftovers to delete. */
			sb_add(&b, "%s{\"fsid\":\"%016" PRIx64 "\",\"prefix\":\"%s\",\"objects\":%zu,\"records\":%zu,"
				   "\"pending\":%zu,\"coldBytes\":%" PRIu64,
			       seen++ ? "," : "", v->cfg.fsid, v->prefix, objs.n, recs.n, pend.n,
			       (uint64_t)atomic_load(&v->cold_bytes));
			sb_keys(&b, "orphans", &objs, &recs, NULL);
			sb_keys(&b, "missing", &recs, &objs, NULL);
			sb_add(&b, "}");
		}
		tier_keylist_free(&objs);
		tier_keylist_free(&recs);
		tier_keylist_free(&pend);
	}
	sb_add(&b, "]}");
	if (rc == 0 && fsid && !seen)
		rc = -ENOENT;
	if (rc == 0 && b.err)
		rc = b.err;
	if (rc == 0) {
		*json = b.p;
		b.p = NULL;
	}
	free(b.p);
	tier_vols_put(vs, n);
	tier_store_put(s);
	return rc;
}
