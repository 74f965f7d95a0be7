/* tier_scan: the consistency report of one volume: the keys the tier map,
 * the object store and the pending list hold, compared (JSON for the agent
 * API).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"
#include "util/ut_buf.h"

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

/* The largest report: every key of a volume, twice at most (~100 bytes a key). */
#define TIER_SCAN_MAX (256u << 20)

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

static void scan_keys(struct ut_buf *b, const char *name, struct tier_keylist *l, struct tier_keylist *other, struct tier_keylist *also)
{
	size_t n = 0;

	ut_buf_addf(b, ",\"%s\":[", name);
	for (size_t i = 0; i < l->n; i++)
		if (!has(other, l->k[i]) && (!also || !has(also, l->k[i])))
			ut_buf_addf(b, "%s\"%s\"", n++ ? "," : "", l->k[i]); /* keys use [A-Za-z0-9._/-] only */
	ut_buf_addf(b, "],\"%sCount\":%zu", name, n);
}

int tier_scan(struct tier *t, uint64_t fsid, char **json)
{
	struct tier_store *s = tier_store_get(t);
	struct tier_vol **vs;
	size_t n = tier_vols_get(t, &vs), seen = 0;
	struct ut_buf b;
	int rc = s ? 0 : -EAGAIN;

	*json = NULL;
	ut_buf_init(&b, TIER_SCAN_MAX);
	ut_buf_addf(&b, "{\"volumes\":[");
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct tier_keylist objs = {0}, recs = {0}, pend = {0};
		struct tier_vol *v = vs[i];

		if (fsid && v->cfg.fsid != fsid)
			continue;
		rc = obj_list(s->obj, v->prefix, tier_keylist_add, &objs);
		if (rc == 0) {
			if (objs.n)
				qsort(objs.k, objs.n, sizeof(*objs.k), cmp_str);
			rc = tier_map_keys(v, "SELECT key FROM chunks UNION SELECT key FROM snapchunks", &recs);
		}
		if (rc == 0)
			rc = tier_map_keys(v, "SELECT key FROM pending", &pend);
		if (rc == 0) {
			/* orphans: objects no chunk record (live or a snapshot's) names; missing: records
			 * without their object; pending: known leftovers to delete. */
			ut_buf_addf(&b, "%s{\"fsid\":\"%016" PRIx64 "\",\"prefix\":\"%s\",\"objects\":%zu,\"records\":%zu,"
				   "\"pending\":%zu,\"coldBytes\":%" PRIu64,
			       seen++ ? "," : "", v->cfg.fsid, v->prefix, objs.n, recs.n, pend.n,
			       (uint64_t)atomic_load(&v->cold_bytes));
			scan_keys(&b, "orphans", &objs, &recs, NULL);
			scan_keys(&b, "missing", &recs, &objs, NULL);
			ut_buf_addf(&b, "}");
		}
		tier_keylist_free(&objs);
		tier_keylist_free(&recs);
		tier_keylist_free(&pend);
	}
	ut_buf_addf(&b, "]}");
	if (rc == 0 && fsid && !seen)
		rc = -ENOENT;
	if (rc == 0 && ut_buf_err(&b) != AQ_OK)
		rc = ut_buf_err(&b) == AQ_ENOMEM ? -ENOMEM : -E2BIG;
	if (rc == 0 && !(*json = ut_buf_steal(&b, NULL)))
		rc = -ENOMEM;
	ut_buf_cleanup(&b);
	tier_vols_put(vs, n);
	tier_store_put(s);
	return rc;
}
