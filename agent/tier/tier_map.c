/* tier_map: the tier map, a per-volume SQLite database (files, chunks,
 * pending deletes, heat): open and load, flush the heat, the pending-delete
 * garbage collector. Its helpers are tier_map_* (not db/'s db_* API).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

/* ---------- database ---------- */

static const char tier_map_schema[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"CREATE TABLE IF NOT EXISTS files(fid TEXT PRIMARY KEY, ino INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS chunks(fid TEXT NOT NULL, idx INTEGER NOT NULL, key TEXT NOT NULL,"
	" len INTEGER NOT NULL, sum TEXT NOT NULL, PRIMARY KEY(fid, idx));"
	"CREATE TABLE IF NOT EXISTS pending(key TEXT PRIMARY KEY, why TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS heat(fid TEXT NOT NULL, idx INTEGER NOT NULL, day INTEGER NOT NULL,"
	" PRIMARY KEY(fid, idx));"
	"CREATE TABLE IF NOT EXISTS snapchunks(snap TEXT NOT NULL, uid TEXT NOT NULL, fid TEXT NOT NULL,"
	" idx INTEGER NOT NULL, key TEXT NOT NULL, len INTEGER NOT NULL, sum TEXT NOT NULL, PRIMARY KEY(snap, fid, idx));"
	"CREATE INDEX IF NOT EXISTS snapchunks_key ON snapchunks(key);";

/* Run sql with up to three text parameters (?1..?3) and two integers (?4,
 * ?5); v->dbmu held. */
int tier_map_exec(struct tier_vol *v, const char *sql, const char *a, const char *b, const char *c, int64_t i,
		   int64_t j)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(v->db, sql, -1, &st, NULL) != SQLITE_OK)
		goto fail;
	if (a)
		sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	if (b)
		sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
	if (c)
		sqlite3_bind_text(st, 3, c, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(st) >= 4)
		sqlite3_bind_int64(st, 4, i);
	if (sqlite3_bind_parameter_count(st) >= 5)
		sqlite3_bind_int64(st, 5, j);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
fail:
	UT_ERROR("tier_map", NULL, "tier db %s: %s", v->cfg.state_dir, sqlite3_errmsg(v->db));
	sqlite3_finalize(st);
	return -EIO;
}

int tier_map_begin(struct tier_vol *v)
{
	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_exec(v->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&v->dbmu);
		return -EIO;
	}
	return 0;
}

int tier_map_end(struct tier_vol *v, int rc)
{
	if (rc == 0 && sqlite3_exec(v->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = -EIO;
	if (rc != 0)
		sqlite3_exec(v->db, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&v->dbmu);
	return rc;
}

int tier_map_pending_add(struct tier_vol *v, const char *key, const char *why)
{
	int rc;

	pthread_mutex_lock(&v->dbmu);
	rc = tier_map_exec(v, "INSERT OR REPLACE INTO pending(key, why) VALUES(?1, ?2)", key, why, NULL, 0, 0);
	pthread_mutex_unlock(&v->dbmu);
	return rc;
}

void tier_map_pending_del(struct tier_vol *v, const char *key)
{
	pthread_mutex_lock(&v->dbmu);
	tier_map_exec(v, "DELETE FROM pending WHERE key = ?1", key, NULL, NULL, 0, 0);
	pthread_mutex_unlock(&v->dbmu);
}

/* Delete the objects of pending rows (recovery and deferred deletes). */
void tier_map_gc(struct tier_vol *v, struct tier_store *s)
{
	sqlite3_stmt *st = NULL;
	char (*keys)[TIER_KEY_MAX] = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_prepare_v2(v->db, "SELECT key FROM pending LIMIT 4096", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (n == cap) {
				void *p = realloc(keys, (cap = cap ? cap * 2 : 64) * sizeof(*keys));

				if (!p)
					break;
				keys = p;
			}
			snprintf(keys[n++], TIER_KEY_MAX, "%s", (const char *)sqlite3_column_text(st, 0));
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&v->dbmu);
	for (size_t i = 0; i < n; i++) {
		/* a snapshot still reads it: only the pending row goes */
		int rc = tier_snap_held(v, keys[i]) ? 0 : obj_delete(s->obj, keys[i]);

		if (rc == -EAGAIN) {
			tier_health(v->t, rc, "delete");
			break;
		}
		if (rc == 0 || rc == -EINVAL)
			tier_map_pending_del(v, keys[i]);
	}
	free(keys);
}

/* Load the tier map into memory. */
static int tier_map_load(struct tier_vol *v)
{
	static const char *q[] = {
		"SELECT f.ino, c.idx, c.key, c.len FROM chunks c JOIN files f USING(fid)",
		"SELECT f.ino, h.idx, f.fid, h.day FROM heat h JOIN files f USING(fid)",
		"SELECT ino, 0, fid, 0 FROM files",
	};
	int rc = 0;

	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
		sqlite3_stmt *st = NULL;

		if (sqlite3_prepare_v2(v->db, q[k], -1, &st, NULL) != SQLITE_OK)
			return -EIO;
		while (sqlite3_step(st) == SQLITE_ROW) {
			uint64_t ino = (uint64_t)sqlite3_column_int64(st, 0);
			uint32_t idx = (uint32_t)sqlite3_column_int64(st, 1);
			const char *txt = (const char *)sqlite3_column_text(st, 2);
			struct tier_file *f = tier_file_get(v, ino, idx + 1);

			if (!f || !txt) {
				rc = -ENOMEM;
				break;
			}
			f->recorded = true;
			if (k == 0) {
				const char *dash = strrchr(txt, '-'), *slash = strrchr(txt, '/');

				f->state[idx] = CH_COLD;
				f->cver[idx] = dash ? strtoull(dash + 1, NULL, 16) : 0;
				if (slash && slash - txt >= 17 && !f->fid[0])
					memcpy(f->fid, slash - 16, 16);
				atomic_fetch_add(&v->cold_bytes, (uint64_t)sqlite3_column_int64(st, 3));
			} else if (k == 1) {
				f->day[idx] = (uint32_t)sqlite3_column_int64(st, 3);
			}
			if (k > 0 && strlen(txt) == 16)
				memcpy(f->fid, txt, 17);
		}
		sqlite3_finalize(st);
	}
	return rc;
}

int tier_vol_open(struct tier *t, const struct tier_vol_cfg *cfg, struct tier_vol **out)
{
	struct tier_vol *v = calloc(1, sizeof(*v));
	char path[4200];
	int rc = 0;

	if (!v)
		return -ENOMEM;
	atomic_init(&v->refs, 1);
	v->t = t;
	v->cfg = *cfg;
	snprintf(v->prefix, sizeof(v->prefix), "%s/%016" PRIx64 "/", t->cfg.location, cfg->fsid);
	pthread_mutex_init(&v->mu, NULL);
	pthread_cond_init(&v->cv, NULL);
	pthread_mutex_init(&v->dbmu, NULL);
	if (mkdir(cfg->state_dir, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/tier.db", cfg->state_dir);
	if (sqlite3_open_v2(path, &v->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK ||
	    sqlite3_exec(v->db, tier_map_schema, NULL, NULL, NULL) != SQLITE_OK) {
		UT_ERROR("tier_map", NULL, "tier db %s: %s", path, v->db ? sqlite3_errmsg(v->db) : "?");
		rc = -EIO;
		goto out;
	}
	sqlite3_busy_timeout(v->db, 5000);
	rc = tier_map_load(v);
out:
	if (rc) {
		tier_vol_unref(v);
		return rc;
	}
	*out = v;
	return 0;
}

void tier_vol_unref(struct tier_vol *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	for (size_t i = 0; i < TIER_HASH; i++) {
		while (v->hash[i]) {
			struct tier_file *f = v->hash[i];

			v->hash[i] = f->next;
			tier_file_free(f);
		}
	}
	sqlite3_close(v->db);
	pthread_mutex_destroy(&v->mu);
	pthread_cond_destroy(&v->cv);
	pthread_mutex_destroy(&v->dbmu);
	free(v);
}

/* Persist temperatures and file ids of files touched since the last flush. */
void tier_map_flush_heat(struct tier_vol *v)
{
	struct hrow {
		char fid[17];
		uint64_t ino;
		uint32_t idx, day;
	} *rows = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&v->mu);
	for (size_t i = 0; i < TIER_HASH; i++) {
		/* Files no pass named (under 1 MiB, or the volume is paused)
		 * are forgotten: their counters only matter to a pass running
		 * now (which sees the entry's serial change and backs off), and
		 * their temperature falls back to the mtime day. */
		for (struct tier_file **pp = &v->hash[i]; *pp;) {
			struct tier_file *f = *pp;
			bool idle = !f->fid[0] && !f->inflight;

			for (uint32_t c = 0; idle && c < f->n; c++)
				idle = f->state[c] == CH_HOT;
			if (idle) {
				*pp = f->next;
				tier_file_free(f);
			} else {
				pp = &f->next;
			}
		}
		for (struct tier_file *f = v->hash[i]; f; f = f->next) {
			if (!f->dirty || !f->fid[0])
				continue;
			f->dirty = false;
			for (uint32_t c = 0; c <= f->n; c++) {
				if (c < f->n && !f->day[c])
					continue;
				if (n == cap) {
					void *p = realloc(rows, (cap = cap ? cap * 2 : 256) * sizeof(*rows));

					if (!p)
						goto done;
					rows = p;
				}
				memcpy(rows[n].fid, f->fid, 17);
				rows[n].ino = f->ino;
				rows[n].idx = c;
				rows[n].day = c < f->n ? f->day[c] : 0; /* c == n: the files row */
				n++;
			}
			f->recorded = true;
		}
	}
done:
	pthread_mutex_unlock(&v->mu);
	if (n && tier_map_begin(v) == 0) {
		int rc = 0;

		for (size_t i = 0; i < n && rc == 0; i++) {
			if (rows[i].day)
				rc = tier_map_exec(v, "INSERT OR REPLACE INTO heat(fid, idx, day) VALUES(?1, ?5, ?4)",
					     rows[i].fid, NULL, NULL, rows[i].day, rows[i].idx);
			else
				rc = tier_map_exec(v, "INSERT OR REPLACE INTO files(fid, ino) VALUES(?1, ?4)", rows[i].fid,
					     NULL, NULL, (int64_t)rows[i].ino, 0);
		}
		tier_map_end(v, rc);
	}
	free(rows);
}

int tier_map_sum(struct tier_vol *v, const char *fid, uint32_t idx, char *out)
{
	sqlite3_stmt *st = NULL;
	int rc = -ENOENT;

	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_prepare_v2(v->db, "SELECT sum FROM chunks WHERE fid = ?1 AND idx = ?2", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, fid, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, idx);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
			snprintf(out, 65, "%s", (const char *)sqlite3_column_text(st, 0));
			rc = 0;
		}
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&v->dbmu);
	return rc;
}
