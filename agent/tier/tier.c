/* tier: the cold tier engine; see tier.h for the contract.
 *
 * Locks, outermost first: t->lk (rwlock over the volume set and the store
 * holder), v->mu (a volume's in-memory file table and chunk states; held
 * only for bookkeeping, never across network or disk I/O), v->dbmu (the
 * volume's SQLite connection), t->cmu (the chunk cache). A chunk being moved
 * in or out is CH_BUSY while its local bytes change (punch or pwrite); hot
 * I/O touching it waits on v->cv for that local step only.
 *
 * Races with writes: every read or write bumps the touched chunks' ver and a
 * write counts as in flight until it ended. A pass snapshots ver before it
 * reads a chunk and only records and punches when ver is unchanged and no
 * write is in flight, so a racing access wins and the chunk stays hot (the
 * uploaded copy is dropped). A read that saw a chunk hot and sends it later
 * with sendfile bumped ver before, so the pass cannot punch under it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define TIER_HASH 1024
#define TIER_KEY_MAX 256
#define TIER_FID_XATTR "user.aquifer.fid"
#define TIER_SEQ_WINDOW (1ull * TIER_CHUNK)   /* a stream's next read lands this near */
#define TIER_SEQ_READ (256u * 1024u)    /* a read this large counts as sequential */
/* Read-ahead keeps up to WORKERS x BATCH chunks in flight: a worker waits
 * for its whole batch, so small batches on many workers keep the pipe full
 * (10 ms x ~2 GB/s = ~20 MiB must be in flight to match hot reads). */
#define TIER_PREFETCH_WORKERS 8
#define TIER_PREFETCH_BATCH 4
#define TIER_PREFETCH_Q 64

enum { CH_HOT = 0, CH_COLD = 1, CH_BUSY = 2 };

/* One regular file (inode) of a tiered volume. */
struct tier_file {
	struct tier_file *next;
	uint64_t ino, serial;
	char fid[17];              /* "" until a pass named the file */
	uint32_t n;                /* chunk slots */
	uint32_t *day;             /* day of last access; 0 = never seen */
	uint32_t *ver;             /* bumped by every access */
	uint64_t *cver;            /* object version of a cold chunk */
	uint8_t *state;
	uint32_t inflight;         /* writes in flight */
	uint64_t seq_end;          /* stream detection */
	int seq_run;
	bool dirty;                /* heat changed since the last flush */
	bool recorded;             /* has a files row */
};

struct tier_vol {
	atomic_int refs;
	struct tier *t;
	struct tier_vol_cfg cfg;
	char prefix[96];           /* "<location>/<fsid>/" */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct tier_file *hash[TIER_HASH];
	uint64_t serial;
	pthread_mutex_t dbmu;
	sqlite3 *db;
	_Atomic uint64_t cold_bytes, cold_read, cold_write;
	atomic_bool bypass_due;
};

/* The store behind a counted holder, so it can be replaced while calls run. */
struct tier_store {
	atomic_int refs;
	struct obj_store *obj;
	char desc[600];
};

struct tier_centry {
	char key[TIER_KEY_MAX];
	int state;                 /* 0 empty, 1 loading, 2 ready, 3 consumed (handed over; buf is spare) */
	uint8_t *buf;
	size_t len;
	uint64_t used;
	struct tier_vol *v;        /* counted while loading, for byte counters */
};

struct tier {
	struct tier_cfg cfg;
	pthread_rwlock_t lk;
	struct tier_vol **vols;
	size_t nvols;
	struct tier_store *store;
	/* store health */
	pthread_mutex_t hmu;
	bool down;
	time_t down_since;
	char down_why[160];
	/* thread */
	pthread_t thr;
	bool running;
	atomic_bool stopping;       /* also ends a pass early */
	pthread_mutex_t tmu;
	pthread_cond_t tcv;
	bool kick;
	/* chunk cache + prefetch */
	pthread_mutex_t cmu;
	pthread_cond_t ccv;
	struct tier_centry cache[TIER_CACHE_CHUNKS];
	uint64_t tick;
	char pq[TIER_PREFETCH_Q][TIER_KEY_MAX];
	struct tier_vol *pqv[TIER_PREFETCH_Q];
	size_t pq_head, pq_len;
	pthread_t pw[TIER_PREFETCH_WORKERS];
	size_t npw;
};

/* ---------- small helpers ---------- */

static double tier_now(const struct tier *t)
{
	struct timespec ts;

	if (t->cfg.now)
		return t->cfg.now(t->cfg.now_arg);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint32_t tier_day_of(const struct tier *t, double secs)
{
	return secs <= 0 ? 1 : (uint32_t)(secs / (double)t->cfg.day_seconds) + 1;
}

static uint32_t tier_today(const struct tier *t)
{
	return tier_day_of(t, tier_now(t));
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void tier_key(const struct tier_vol *v, const char *fid, uint32_t idx, uint64_t ver, char *out)
{
	snprintf(out, TIER_KEY_MAX, "%s%s/%" PRIu32 "-%016" PRIx64, v->prefix, fid, idx, ver);
}

static void tier_sum(const void *buf, size_t len, char *hex)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL);
	for (unsigned i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

static struct tier_store *tier_store_get(struct tier *t)
{
	struct tier_store *s;

	pthread_rwlock_rdlock(&t->lk);
	s = t->store;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_rwlock_unlock(&t->lk);
	return s;
}

static void tier_store_put(struct tier_store *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	obj_close(s->obj);
	free(s);
}

static void tier_health(struct tier *t, int rc, const char *what)
{
	pthread_mutex_lock(&t->hmu);
	if (rc == -EAGAIN && !t->down) {
		struct tier_store *s = tier_store_get(t);

		t->down = true;
		t->down_since = time(NULL);
		snprintf(t->down_why, sizeof(t->down_why), "%s: %s", what, obj_strerror(rc));
		fprintf(stderr, "aquifer-agent: cold store %s unreachable (%s); tiering paused\n",
			s ? s->desc : "?", t->down_why);
		tier_store_put(s);
	} else if (rc != -EAGAIN && t->down) {
		t->down = false;
		fprintf(stderr, "aquifer-agent: cold store reachable again; tiering resumes\n");
	}
	pthread_mutex_unlock(&t->hmu);
}

static bool tier_is_down(struct tier *t)
{
	bool d;

	pthread_mutex_lock(&t->hmu);
	d = t->down;
	pthread_mutex_unlock(&t->hmu);
	return d;
}

/* Seconds the store has been unreachable (0: it is fine). */
static time_t tier_down_for(struct tier *t)
{
	time_t d = 0;

	pthread_mutex_lock(&t->hmu);
	if (t->down)
		d = time(NULL) - t->down_since + 1;
	pthread_mutex_unlock(&t->hmu);
	return d;
}

static void tier_vol_unref(struct tier_vol *v);

static struct tier_vol *tier_vol_find(struct tier *t, uint64_t fsid)
{
	struct tier_vol *v = NULL;

	pthread_rwlock_rdlock(&t->lk);
	for (size_t i = 0; i < t->nvols; i++)
		if (t->vols[i]->cfg.fsid == fsid) {
			v = t->vols[i];
			atomic_fetch_add(&v->refs, 1);
			break;
		}
	pthread_rwlock_unlock(&t->lk);
	return v;
}

/* ---------- in-memory file table (v->mu held) ---------- */

static struct tier_file *file_find(struct tier_vol *v, uint64_t ino)
{
	struct tier_file *f = v->hash[ino % TIER_HASH];

	while (f && f->ino != ino)
		f = f->next;
	return f;
}

static int file_grow(struct tier_file *f, uint32_t n)
{
	uint32_t m = f->n ? f->n : 16;
	void *a, *b, *c, *d;

	if (n <= f->n)
		return 0;
	while (m < n)
		m *= 2;
	a = realloc(f->day, m * sizeof(*f->day));
	if (a)
		f->day = a;
	b = realloc(f->ver, m * sizeof(*f->ver));
	if (b)
		f->ver = b;
	c = realloc(f->cver, m * sizeof(*f->cver));
	if (c)
		f->cver = c;
	d = realloc(f->state, m);
	if (d)
		f->state = d;
	if (!a || !b || !c || !d)
		return -ENOMEM;
	memset(f->day + f->n, 0, (m - f->n) * sizeof(*f->day));
	memset(f->ver + f->n, 0, (m - f->n) * sizeof(*f->ver));
	memset(f->cver + f->n, 0, (m - f->n) * sizeof(*f->cver));
	memset(f->state + f->n, CH_HOT, m - f->n);
	f->n = m;
	return 0;
}

static struct tier_file *file_get(struct tier_vol *v, uint64_t ino, uint32_t nchunks)
{
	struct tier_file *f = file_find(v, ino);

	if (!f) {
		if (!(f = calloc(1, sizeof(*f))))
			return NULL;
		f->ino = ino;
		f->serial = ++v->serial;
		f->next = v->hash[ino % TIER_HASH];
		v->hash[ino % TIER_HASH] = f;
	}
	if (file_grow(f, nchunks) != 0)
		return NULL;
	return f;
}

static void file_free(struct tier_file *f)
{
	if (!f)
		return;
	free(f->day);
	free(f->ver);
	free(f->cver);
	free(f->state);
	free(f);
}

static void file_unlink_from_hash(struct tier_vol *v, struct tier_file *f)
{
	struct tier_file **pp = &v->hash[f->ino % TIER_HASH];

	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
}

/* ---------- database ---------- */

static const char tier_schema[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"CREATE TABLE IF NOT EXISTS files(fid TEXT PRIMARY KEY, ino INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS chunks(fid TEXT NOT NULL, idx INTEGER NOT NULL, key TEXT NOT NULL,"
	" len INTEGER NOT NULL, sum TEXT NOT NULL, PRIMARY KEY(fid, idx));"
	"CREATE TABLE IF NOT EXISTS pending(key TEXT PRIMARY KEY, why TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS heat(fid TEXT NOT NULL, idx INTEGER NOT NULL, day INTEGER NOT NULL,"
	" PRIMARY KEY(fid, idx));";

/* Run sql with up to three text parameters (?1..?3) and two integers (?4,
 * ?5); v->dbmu held. */
static int db_exec(struct tier_vol *v, const char *sql, const char *a, const char *b, const char *c, int64_t i,
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
	fprintf(stderr, "aquifer-agent: tier db %s: %s\n", v->cfg.state_dir, sqlite3_errmsg(v->db));
	sqlite3_finalize(st);
	return -EIO;
}

static int db_begin(struct tier_vol *v)
{
	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_exec(v->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&v->dbmu);
		return -EIO;
	}
	return 0;
}

static int db_end(struct tier_vol *v, int rc)
{
	if (rc == 0 && sqlite3_exec(v->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = -EIO;
	if (rc != 0)
		sqlite3_exec(v->db, "ROLLBACK", NULL, NULL, NULL);
	pthread_mutex_unlock(&v->dbmu);
	return rc;
}

static int db_pending_add(struct tier_vol *v, const char *key, const char *why)
{
	int rc;

	pthread_mutex_lock(&v->dbmu);
	rc = db_exec(v, "INSERT OR REPLACE INTO pending(key, why) VALUES(?1, ?2)", key, why, NULL, 0, 0);
	pthread_mutex_unlock(&v->dbmu);
	return rc;
}

static void db_pending_del(struct tier_vol *v, const char *key)
{
	pthread_mutex_lock(&v->dbmu);
	db_exec(v, "DELETE FROM pending WHERE key = ?1", key, NULL, NULL, 0, 0);
	pthread_mutex_unlock(&v->dbmu);
}

/* Delete the objects of pending rows (recovery and deferred deletes). */
static void tier_gc(struct tier_vol *v, struct tier_store *s)
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
		int rc = obj_delete(s->obj, keys[i]);

		if (rc == -EAGAIN) {
			tier_health(v->t, rc, "delete");
			break;
		}
		if (rc == 0 || rc == -EINVAL)
			db_pending_del(v, keys[i]);
	}
	free(keys);
}

/* Load the tier map into memory. */
static int tier_vol_load(struct tier_vol *v)
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
			struct tier_file *f = file_get(v, ino, idx + 1);

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

static int tier_vol_open(struct tier *t, const struct tier_vol_cfg *cfg, struct tier_vol **out)
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
	    sqlite3_exec(v->db, tier_schema, NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "aquifer-agent: tier db %s: %s\n", path, v->db ? sqlite3_errmsg(v->db) : "?");
		rc = -EIO;
		goto out;
	}
	sqlite3_busy_timeout(v->db, 5000);
	rc = tier_vol_load(v);
out:
	if (rc) {
		tier_vol_unref(v);
		return rc;
	}
	*out = v;
	return 0;
}

static void tier_vol_unref(struct tier_vol *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	for (size_t i = 0; i < TIER_HASH; i++) {
		while (v->hash[i]) {
			struct tier_file *f = v->hash[i];

			v->hash[i] = f->next;
			file_free(f);
		}
	}
	sqlite3_close(v->db);
	pthread_mutex_destroy(&v->mu);
	pthread_cond_destroy(&v->cv);
	pthread_mutex_destroy(&v->dbmu);
	free(v);
}

/* Persist temperatures and file ids of files touched since the last flush. */
static void tier_flush_heat(struct tier_vol *v)
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
				file_free(f);
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
	if (n && db_begin(v) == 0) {
		int rc = 0;

		for (size_t i = 0; i < n && rc == 0; i++) {
			if (rows[i].day)
				rc = db_exec(v, "INSERT OR REPLACE INTO heat(fid, idx, day) VALUES(?1, ?5, ?4)",
					     rows[i].fid, NULL, NULL, rows[i].day, rows[i].idx);
			else
				rc = db_exec(v, "INSERT OR REPLACE INTO files(fid, ino) VALUES(?1, ?4)", rows[i].fid,
					     NULL, NULL, (int64_t)rows[i].ino, 0);
		}
		db_end(v, rc);
	}
	free(rows);
}

static int db_sum(struct tier_vol *v, const char *fid, uint32_t idx, char *out)
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

/* ---------- reading from the store ---------- */

/* [off, off+len) of key, retrying an unreachable store with backoff until
 * TIER_COLD_DEADLINE_MS passed (then -ETIMEDOUT). */
static int tier_fetch(struct tier_vol *v, const char *key, uint64_t off, void *buf, size_t len, size_t *got)
{
	double end = mono_ms() + TIER_COLD_DEADLINE_MS, wait = 50;

	/* Down for longer than a read may wait (the tier thread probes it every
	 * second): answer at once, so cold reads do not tie up the NFS workers
	 * hot reads need. A store that just failed once is retried as usual. */
	if (tier_down_for(v->t) > TIER_COLD_DEADLINE_MS / 1000)
		return -ETIMEDOUT;
	for (;;) {
		struct tier_store *s = tier_store_get(v->t);
		int rc = s ? obj_get(s->obj, key, off, buf, len, got) : -EAGAIN;

		tier_store_put(s);
		if (rc == 0) {
			atomic_fetch_add(&v->cold_read, *got);
			if (tier_is_down(v->t))
				tier_health(v->t, 0, "read");
			return 0;
		}
		if (rc != -EAGAIN)
			return rc == -ENOENT ? -EIO : rc;
		tier_health(v->t, rc, "read");
		if (mono_ms() + wait > end)
			return -ETIMEDOUT;
		usleep((useconds_t)(wait * 1000));
		wait = wait * 2 > 800 ? 800 : wait * 2;
	}
}

static struct tier_centry *cache_find(struct tier *t, const char *key)
{
	for (size_t i = 0; i < TIER_CACHE_CHUNKS; i++)
		if (t->cache[i].state && !strcmp(t->cache[i].key, key))
			return &t->cache[i];
	return NULL;
}

/* A slot to load into (empty, else least recently used ready), or NULL. */
static struct tier_centry *cache_slot(struct tier *t)
{
	struct tier_centry *best = NULL;

	for (size_t i = 0; i < TIER_CACHE_CHUNKS; i++) {
		struct tier_centry *e = &t->cache[i];

		if (e->state == 0)
			return e;
		if (e->state >= 2 && (!best || e->used < best->used))
			best = e;
	}
	return best;
}

static struct tier_centry *cache_claim(struct tier *t, const char *key)
{
	struct tier_centry *e = cache_slot(t);

	if (!e)
		return NULL;
	if (!e->buf && !(e->buf = malloc(TIER_CHUNK)))
		return NULL;
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->state = 1;
	e->len = 0;
	return e;
}

/* Copy [coff, coff+len) of the chunk object key through the cache. With
 * swap (*swap == dst, a malloc()ed block of at least TIER_CHUNK bytes) and a
 * read of the whole chunk, the cached block is handed over instead: the
 * caller gets it in *swap, the entry takes dst and is empty again (a stream
 * reads each chunk once; this saves copying 1 MiB per READ). */
static int cache_read(struct tier_vol *v, const char *key, uint64_t coff, void *dst, size_t len, void **swap)
{
	struct tier *t = v->t;
	struct tier_centry *e;
	size_t got = 0;
	int rc = 0;

	pthread_mutex_lock(&t->cmu);
	for (;;) {
		e = cache_find(t, key);
		if (e && e->state == 1) {
			pthread_cond_wait(&t->ccv, &t->cmu);
			continue;
		}
		if (e && e->state == 2) {
			if (coff + len > e->len) {
				rc = -EIO;
			} else if (swap && coff == 0 && len == TIER_CHUNK && e->len == TIER_CHUNK) {
				/* Handed over; the entry stays as "consumed" so the
				 * read-ahead of a stream does not fetch it again. */
				*swap = e->buf;
				e->buf = dst;
				e->state = 3;
				e->len = 0;
			} else {
				memcpy(dst, e->buf + coff, len);
				e->used = ++t->tick;
			}
			break;
		}
		if (e) { /* consumed: read again into its block */
			e->state = 1;
		} else if (!(e = cache_claim(t, key))) {
			pthread_mutex_unlock(&t->cmu);
			rc = tier_fetch(v, key, coff, dst, len, &got);
			return rc == 0 && got != len ? -EIO : rc;
		}
		pthread_mutex_unlock(&t->cmu);
		rc = tier_fetch(v, key, 0, e->buf, TIER_CHUNK, &got);
		pthread_mutex_lock(&t->cmu);
		e->state = rc == 0 ? 2 : 0;
		e->len = got;
		e->used = ++t->tick;
		pthread_cond_broadcast(&t->ccv);
		if (rc != 0)
			break;
	}
	pthread_mutex_unlock(&t->cmu);
	return rc;
}

static void prefetch_push(struct tier_vol *v, const char *key)
{
	struct tier *t = v->t;

	pthread_mutex_lock(&t->cmu);
	if (t->npw && !cache_find(t, key) && t->pq_len < TIER_PREFETCH_Q) {
		for (size_t i = 0; i < t->pq_len; i++)
			if (!strcmp(t->pq[(t->pq_head + i) % TIER_PREFETCH_Q], key))
				goto out;
		size_t slot = (t->pq_head + t->pq_len++) % TIER_PREFETCH_Q;

		snprintf(t->pq[slot], TIER_KEY_MAX, "%s", key);
		atomic_fetch_add(&v->refs, 1);
		t->pqv[slot] = v;
		pthread_cond_broadcast(&t->ccv);
	}
out:
	pthread_mutex_unlock(&t->cmu);
}

/* Prefetch worker: loads queued chunks into the cache, up to
 * TIER_PREFETCH_BATCH at once with parallel ranged GETs. */
static void *prefetch_main(void *arg)
{
	struct tier *t = arg;

	pthread_mutex_lock(&t->cmu);
	while (!t->stopping) {
		struct obj_range r[TIER_PREFETCH_BATCH];
		struct tier_centry *e[TIER_PREFETCH_BATCH];
		struct tier_vol *vv[TIER_PREFETCH_BATCH];
		struct tier_store *s;
		size_t n = 0;

		if (!t->pq_len) {
			pthread_cond_wait(&t->ccv, &t->cmu);
			continue;
		}
		while (t->pq_len && n < TIER_PREFETCH_BATCH) {
			const char *key = t->pq[t->pq_head];
			struct tier_vol *v = t->pqv[t->pq_head];

			t->pq_head = (t->pq_head + 1) % TIER_PREFETCH_Q;
			t->pq_len--;
			if (cache_find(t, key) || !(e[n] = cache_claim(t, key))) {
				tier_vol_unref(v);
				continue;
			}
			vv[n] = v;
			r[n] = (struct obj_range){.key = e[n]->key, .off = 0, .buf = e[n]->buf, .len = TIER_CHUNK};
			n++;
		}
		if (!n)
			continue;
		pthread_mutex_unlock(&t->cmu);
		s = tier_store_get(t);
		if (s)
			obj_get_many(s->obj, r, n, TIER_PREFETCH_BATCH);
		tier_store_put(s);
		pthread_mutex_lock(&t->cmu);
		for (size_t i = 0; i < n; i++) {
			bool ok = s && r[i].rc == 0;

			e[i]->state = ok ? 2 : 0;
			e[i]->len = ok ? r[i].got : 0;
			e[i]->used = ++t->tick;
			if (ok)
				atomic_fetch_add(&vv[i]->cold_read, r[i].got);
			tier_vol_unref(vv[i]);
		}
		pthread_cond_broadcast(&t->ccv);
	}
	pthread_mutex_unlock(&t->cmu);
	return NULL;
}

/* ---------- moving chunks ---------- */

static void tier_kick(struct tier *t)
{
	pthread_mutex_lock(&t->tmu);
	t->kick = true;
	pthread_cond_signal(&t->tcv);
	pthread_mutex_unlock(&t->tmu);
}

/* Wait (v->mu held) until no chunk of f in [a, b) is busy; f may be gone
 * after (re-find by ino). */
static struct tier_file *wait_idle(struct tier_vol *v, uint64_t ino, uint32_t a, uint32_t b)
{
	struct tier_file *f;

	for (;;) {
		bool busy = false;

		if (!(f = file_find(v, ino)))
			return NULL;
		for (uint32_t c = a; c < b && c < f->n; c++)
			busy |= f->state[c] == CH_BUSY;
		if (!busy)
			return f;
		pthread_cond_wait(&v->cv, &v->mu);
	}
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t k = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		done += (size_t)k;
	}
	return 0;
}

static ssize_t pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t k = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		done += (size_t)k;
	}
	return (ssize_t)done;
}

/* Bring cold chunk c of inode ino back into the file (fd: any descriptor
 * of it). 0 also when someone else did it first. */
static int tier_rehydrate(struct tier_vol *v, uint64_t ino, uint32_t c, int fd)
{
	char key[TIER_KEY_MAX], fid[17], sum[65], want[65], p[64];
	uint8_t *buf = NULL;
	uint64_t cver, serial;
	struct tier_file *f;
	size_t got = 0;
	int rc = 0, wfd = -1;

	pthread_mutex_lock(&v->mu);
	f = wait_idle(v, ino, c, c + 1);
	if (!f || c >= f->n || f->state[c] != CH_COLD) {
		pthread_mutex_unlock(&v->mu);
		return 0;
	}
	cver = f->cver[c];
	serial = f->serial;
	memcpy(fid, f->fid, sizeof(fid));
	pthread_mutex_unlock(&v->mu);
	tier_key(v, fid, c, cver, key);
	if (!(buf = malloc(TIER_CHUNK)))
		return -ENOMEM;
	rc = tier_fetch(v, key, 0, buf, TIER_CHUNK, &got);
	pthread_mutex_lock(&v->mu);
	f = wait_idle(v, ino, c, c + 1);
	if (rc != 0 && (!f || f->serial != serial || f->state[c] != CH_COLD || f->cver[c] != cver))
		rc = 0; /* another reader brought it back and deleted the object under our GET */
	if (rc != 0) {
		pthread_mutex_unlock(&v->mu);
		goto out;
	}
	if (!f || f->serial != serial || f->state[c] != CH_COLD || f->cver[c] != cver) {
		pthread_mutex_unlock(&v->mu);
		goto out; /* another reader or writer brought it back first */
	}
	f->state[c] = CH_BUSY;
	pthread_mutex_unlock(&v->mu);
	/* Busy: the record cannot go away under the check. */
	tier_sum(buf, got, sum);
	if (got != TIER_CHUNK || db_sum(v, fid, c, want) != 0 || strcmp(sum, want) != 0) {
		fprintf(stderr, "aquifer-agent: cold object %s fails its checksum\n", key);
		rc = -EIO;
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if (rc == 0 && (wfd = open(p, O_WRONLY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		rc = pwrite_all(wfd, buf, TIER_CHUNK, (uint64_t)c * TIER_CHUNK);
	if (rc == 0 && fdatasync(wfd) != 0)
		rc = -errno;
	if (rc == 0 && (rc = db_begin(v)) == 0) {
		rc = db_exec(v, "DELETE FROM chunks WHERE fid = ?1 AND idx = ?5", fid, NULL, NULL, 0, c);
		if (rc == 0)
			rc = db_exec(v, "INSERT OR REPLACE INTO pending(key, why) VALUES(?1, 'rehydrated')", key, NULL,
				     NULL, 0, 0);
		rc = db_end(v, rc);
	}
	pthread_mutex_lock(&v->mu);
	f->state[c] = rc == 0 ? CH_HOT : CH_COLD;
	if (rc == 0) {
		f->cver[c] = 0;
		f->ver[c]++;
		f->day[c] = tier_today(v->t);
		f->dirty = true;
	}
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	if (rc == 0) {
		struct tier_store *s = tier_store_get(v->t);

		atomic_fetch_sub(&v->cold_bytes, TIER_CHUNK);
		if (s && obj_delete(s->obj, key) == 0)
			db_pending_del(v, key);
		tier_store_put(s);
	}
out:
	if (wfd >= 0)
		close(wfd);
	free(buf);
	return rc;
}

/* Move chunk c of the file (fd, inode ino, serial) out when it is still
 * untouched since snap. 0 when moved or skipped. */
static int tier_move_out(struct tier_vol *v, struct tier_store *s, int fd, uint64_t ino, uint64_t serial,
			 const char *fid, uint32_t c, uint32_t snap)
{
	char key[TIER_KEY_MAX], sum[65];
	uint8_t *buf = malloc(TIER_CHUNK);
	struct tier_file *f;
	uint64_t ver = 0, size = 0;
	bool recorded;
	ssize_t n;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	n = pread_all(fd, buf, TIER_CHUNK, (uint64_t)c * TIER_CHUNK);
	if (n != (ssize_t)TIER_CHUNK) {
		free(buf);
		return n < 0 ? (int)n : 0; /* the file shrank meanwhile */
	}
	while (!ver && getrandom(&ver, sizeof(ver), 0) != sizeof(ver))
		;
	tier_key(v, fid, c, ver, key);
	if ((rc = db_pending_add(v, key, "upload")) != 0)
		goto out;
	if ((rc = obj_put(s->obj, key, buf, TIER_CHUNK)) != 0 || (rc = obj_head(s->obj, key, &size)) != 0 ||
	    (size != TIER_CHUNK && (rc = -EIO))) {
		tier_health(v->t, rc, "upload");
		goto drop;
	}
	tier_sum(buf, TIER_CHUNK, sum);
	pthread_mutex_lock(&v->mu);
	f = file_find(v, ino);
	if (!f || f->serial != serial || c >= f->n || f->state[c] != CH_HOT || f->ver[c] != snap || f->inflight) {
		pthread_mutex_unlock(&v->mu);
		goto drop; /* touched meanwhile: stays hot */
	}
	f->state[c] = CH_BUSY;
	recorded = f->recorded;
	pthread_mutex_unlock(&v->mu);
	if ((rc = db_begin(v)) == 0) {
		if (!recorded)
			rc = db_exec(v, "INSERT OR REPLACE INTO files(fid, ino) VALUES(?1, ?4)", fid, NULL, NULL,
				     (int64_t)ino, 0);
		if (rc == 0)
			rc = db_exec(v, "INSERT OR REPLACE INTO chunks(fid, idx, key, len, sum) VALUES(?1, ?5, ?2, ?4, ?3)",
				     fid, key, sum, TIER_CHUNK, c);
		if (rc == 0)
			rc = db_exec(v, "DELETE FROM pending WHERE key = ?1", key, NULL, NULL, 0, 0);
		rc = db_end(v, rc);
	}
	/* Recorded: now the local copy may go. */
	if (rc == 0 && fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)c * TIER_CHUNK, TIER_CHUNK) != 0)
		fprintf(stderr, "aquifer-agent: cannot punch a hole in a tiered file: %s\n", strerror(errno));
	pthread_mutex_lock(&v->mu);
	f->state[c] = rc == 0 ? CH_COLD : CH_HOT;
	if (rc == 0) {
		f->cver[c] = ver;
		f->recorded = true;
	}
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	if (rc == 0) {
		atomic_fetch_add(&v->cold_bytes, TIER_CHUNK);
		atomic_fetch_add(&v->cold_write, TIER_CHUNK);
		goto out;
	}
drop:
	if (obj_delete(s->obj, key) == 0)
		db_pending_del(v, key);
out:
	free(buf);
	return rc;
}

/* Forget the cold chunks of f (v->mu held; none busy): their rows go and
 * their objects become pending deletes. Returns the keys (malloc'd). */
static size_t take_cold(struct tier_vol *v, struct tier_file *f, uint32_t from, char (**keys)[TIER_KEY_MAX],
			uint32_t **idx)
{
	size_t n = 0;

	*keys = NULL;
	*idx = NULL;
	for (uint32_t c = from; c < f->n; c++)
		n += f->state[c] == CH_COLD;
	if (!n || !(*keys = calloc(n, TIER_KEY_MAX)) || !(*idx = calloc(n, sizeof(uint32_t)))) {
		free(*keys);
		*keys = NULL;
		return 0;
	}
	n = 0;
	for (uint32_t c = from; c < f->n; c++) {
		if (f->state[c] != CH_COLD)
			continue;
		tier_key(v, f->fid, c, f->cver[c], (*keys)[n]);
		(*idx)[n++] = c;
		f->state[c] = CH_HOT;
		f->cver[c] = 0;
	}
	return n;
}

static void drop_records(struct tier_vol *v, const char *fid, char (*keys)[TIER_KEY_MAX], uint32_t *idx, size_t n,
			 bool whole)
{
	int rc;

	if ((n || whole) && db_begin(v) == 0) {
		rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			rc = db_exec(v, "DELETE FROM chunks WHERE fid = ?1 AND idx = ?5", fid, NULL, NULL, 0, idx[i]);
			if (rc == 0)
				rc = db_exec(v, "INSERT OR REPLACE INTO pending(key, why) VALUES(?1, 'dropped')", keys[i],
					     NULL, NULL, 0, 0);
		}
		if (rc == 0 && whole)
			rc = db_exec(v, "DELETE FROM heat WHERE fid = ?1", fid, NULL, NULL, 0, 0);
		if (rc == 0 && whole)
			rc = db_exec(v, "DELETE FROM files WHERE fid = ?1", fid, NULL, NULL, 0, 0);
		db_end(v, rc);
	}
	atomic_fetch_sub(&v->cold_bytes, (uint64_t)n * TIER_CHUNK);
	if (n)
		tier_kick(v->t);
}

/* ---------- the data path hooks ---------- */

static uint32_t chunk_of(uint64_t off)
{
	return (uint32_t)(off / TIER_CHUNK);
}

/* Record an access to [off, off+len) (v->mu held); returns f or NULL. Sets
 * *cold when a touched chunk is not hot, *seq when the file is read as a
 * stream. */
static struct tier_file *touch(struct tier_vol *v, uint64_t ino, uint64_t off, size_t len, bool *cold, bool *seq)
{
	uint32_t a = chunk_of(off), b = chunk_of(off + len - 1) + 1, today = tier_today(v->t);
	struct tier_file *f = file_get(v, ino, b);

	*cold = false;
	if (!f)
		return NULL;
	for (uint32_t c = a; c < b; c++) {
		f->ver[c]++;
		if (f->day[c] != today) {
			f->day[c] = today;
			f->dirty = true;
		}
		*cold |= f->state[c] != CH_HOT;
	}
	if (seq) {
		/* A stream: starts at 0 or continues near the previous end (NFS
		 * clients keep several reads in flight, so allow reordering). */
		if (off == 0)
			f->seq_run = 3;
		else if (off + TIER_SEQ_WINDOW >= f->seq_end && off <= f->seq_end + TIER_SEQ_WINDOW)
			f->seq_run++;
		else
			f->seq_run = 0;
		if (off + len > f->seq_end || f->seq_run == 0)
			f->seq_end = off + len;
		/* Large reads are streaming reads too: the first reads of a
		 * stream arrive in parallel and out of order, before the stream
		 * is recognised. */
		*seq = f->seq_run >= 3 || len >= TIER_SEQ_READ;
	}
	return f;
}

static int hk_cold(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, size_t len)
{
	struct tier_vol *v;
	bool cold = false, seq;

	if (st->st_size < (off_t)TIER_CHUNK || !(v = tier_vol_find(arg, fsid)))
		return 0;
	pthread_mutex_lock(&v->mu);
	touch(v, st->st_ino, off, len, &cold, &seq);
	pthread_mutex_unlock(&v->mu);
	tier_vol_unref(v);
	return cold ? 1 : 0;
}

static int read_range(struct tier_vol *v, uint64_t ino, int fd, uint64_t off, uint8_t *dst, size_t len, bool seq,
		      void **swap)
{
	int rc = 0, tries = 0;

	while (len > 0 && rc == 0) {
		uint32_t c = chunk_of(off);
		uint64_t coff = off - (uint64_t)c * TIER_CHUNK;
		size_t piece = TIER_CHUNK - coff < len ? (size_t)(TIER_CHUNK - coff) : len;
		char key[TIER_KEY_MAX], fid[17];
		struct tier_file *f;
		uint64_t cver = 0;
		bool cold;

		pthread_mutex_lock(&v->mu);
		f = wait_idle(v, ino, c, c + 1);
		cold = f && c < f->n && f->state[c] == CH_COLD;
		if (cold) {
			cver = f->cver[c];
			memcpy(fid, f->fid, sizeof(fid));
		}
		pthread_mutex_unlock(&v->mu);
		if (!cold) {
			ssize_t n = pread_all(fd, dst, piece, off);

			if (n < 0) {
				rc = (int)n;
				break;
			}
			memset(dst + n, 0, piece - (size_t)n);
		} else if (tries < 3 && (v->cfg.retrieval == TIER_RET_ON_READ ||
					 (v->cfg.retrieval == TIER_RET_DEFAULT && !seq))) {
			tries++;
			rc = tier_rehydrate(v, ino, c, fd);
			continue; /* read it again, now hot */
		} else {
			tier_key(v, fid, c, cver, key);
			if (seq) {
				rc = cache_read(v, key, coff, dst, piece, swap && *swap == dst && piece == len ? swap : NULL);
				pthread_mutex_lock(&v->mu);
				f = file_find(v, ino);
				for (uint32_t k = c + 1; f && k < f->n && k <= c + TIER_READAHEAD; k++) {
					char nk[TIER_KEY_MAX];

					if (f->state[k] != CH_COLD)
						continue;
					tier_key(v, f->fid, k, f->cver[k], nk);
					pthread_mutex_unlock(&v->mu);
					prefetch_push(v, nk);
					pthread_mutex_lock(&v->mu);
					f = file_find(v, ino);
				}
				pthread_mutex_unlock(&v->mu);
			} else {
				size_t got = 0;

				rc = tier_fetch(v, key, coff, dst, piece, &got);
				if (rc == 0 && got != piece)
					rc = -EIO;
			}
		}
		tries = 0;
		off += piece;
		dst += piece;
		len -= piece;
	}
	return rc;
}

static int hk_read(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf, size_t len,
		   size_t *got, void **swap)
{
	struct tier_vol *v;
	bool cold = false, seq = false;
	int rc;

	*got = 0;
	if (st->st_size < (off_t)TIER_CHUNK || !(v = tier_vol_find(arg, fsid)))
		return 1;
	pthread_mutex_lock(&v->mu);
	touch(v, st->st_ino, off, len, &cold, &seq);
	pthread_mutex_unlock(&v->mu);
	if (!cold) {
		tier_vol_unref(v);
		return 1;
	}
	rc = read_range(v, st->st_ino, fd, off, buf, len, seq, swap);
	if (rc == 0)
		*got = len;
	tier_vol_unref(v);
	return rc;
}

static int hk_write_begin(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	uint32_t a = chunk_of(off), b = chunk_of(off + len - 1) + 1;
	int rc = 0;

	if (!v)
		return 0;
	for (;;) {
		struct tier_file *f;
		uint32_t cold = UINT32_MAX;
		bool any;

		pthread_mutex_lock(&v->mu);
		if (!file_get(v, st->st_ino, b) || !(f = wait_idle(v, st->st_ino, a, b))) {
			pthread_mutex_unlock(&v->mu);
			rc = -ENOMEM;
			break;
		}
		for (uint32_t c = a; c < b && cold == UINT32_MAX; c++)
			if (f->state[c] == CH_COLD)
				cold = c;
		if (cold == UINT32_MAX) {
			f->inflight++;
			touch(v, st->st_ino, off, len, &any, NULL);
			pthread_mutex_unlock(&v->mu);
			break;
		}
		pthread_mutex_unlock(&v->mu);
		/* Writes to a cold chunk bring it back first. */
		if ((rc = tier_rehydrate(v, st->st_ino, cold, fd)) != 0)
			break;
	}
	tier_vol_unref(v);
	return rc;
}

/* A write or truncate of file ino ended: it is no longer in flight, and
 * chunks [a, b) changed, so a pass that read them before must not record or
 * punch them. */
static void mutation_end(struct tier_vol *v, uint64_t ino, uint32_t a, uint32_t b)
{
	struct tier_file *f;

	pthread_mutex_lock(&v->mu);
	if ((f = file_find(v, ino)) != NULL) {
		if (f->inflight)
			f->inflight--;
		for (uint32_t c = a; c < b && c < f->n; c++)
			f->ver[c]++;
	}
	pthread_mutex_unlock(&v->mu);
}

static void hk_write_end(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	uint32_t a = chunk_of(off), b = chunk_of(off + len - 1) + 1;

	(void)fd;
	if (!v)
		return;
	mutation_end(v, st->st_ino, a, b);
	/* Bypass mode: a write that completes a chunk sends it to cold soon. */
	if (v->cfg.bypass && v->cfg.action == TIER_ENABLED && chunk_of(off + len) > chunk_of(off)) {
		atomic_store(&v->bypass_due, true);
		tier_kick(v->t);
	}
	tier_vol_unref(v);
}

static int hk_truncate(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t size)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	char (*keys)[TIER_KEY_MAX] = NULL;
	uint32_t *idx = NULL, keep = (uint32_t)((size + TIER_CHUNK - 1) / TIER_CHUNK);
	char fid[17];
	size_t n = 0;
	int rc = 0;

	if (!v)
		return 0;
	/* The chunk that the new end cuts comes back first, whole. */
	if (size % TIER_CHUNK && (rc = tier_rehydrate(v, st->st_ino, chunk_of(size), fd)) != 0)
		goto out;
	pthread_mutex_lock(&v->mu);
	struct tier_file *f = file_get(v, st->st_ino, 1);

	if (f && (f = wait_idle(v, st->st_ino, keep, UINT32_MAX)) != NULL) {
		n = take_cold(v, f, keep, &keys, &idx);
		memcpy(fid, f->fid, sizeof(fid));
		/* In flight until truncate_end: a pass that read a chunk past the
		 * new end before the cut must not record it. */
		f->inflight++;
		for (uint32_t c = keep; c < f->n; c++)
			f->ver[c]++;
	} else {
		rc = -ENOMEM;
	}
	pthread_mutex_unlock(&v->mu);
	if (n)
		drop_records(v, fid, keys, idx, n, false);
out:
	free(keys);
	free(idx);
	tier_vol_unref(v);
	return rc;
}

static void hk_truncate_end(void *arg, uint64_t fsid, const struct stat *st)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);

	if (!v)
		return;
	mutation_end(v, st->st_ino, 0, UINT32_MAX);
	tier_vol_unref(v);
}

static void hk_unlinked(void *arg, uint64_t fsid, const struct stat *st)
{
	struct tier_vol *v = tier_vol_find(arg, fsid);
	char (*keys)[TIER_KEY_MAX] = NULL;
	uint32_t *idx = NULL;
	struct tier_file *f;
	size_t n = 0;

	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	f = wait_idle(v, st->st_ino, 0, UINT32_MAX);
	if (f) {
		n = take_cold(v, f, 0, &keys, &idx);
		file_unlink_from_hash(v, f);
	}
	pthread_mutex_unlock(&v->mu);
	if (f && f->fid[0])
		drop_records(v, f->fid, keys, idx, n, true);
	file_free(f);
	free(keys);
	free(idx);
	tier_vol_unref(v);
}

static const struct vol_tier_ops tier_vol_ops = {
	.read = hk_read,
	.cold = hk_cold,
	.write_begin = hk_write_begin,
	.write_end = hk_write_end,
	.truncate = hk_truncate,
	.truncate_end = hk_truncate_end,
	.unlinked = hk_unlinked,
};

const struct vol_tier_ops *tier_ops(void)
{
	return &tier_vol_ops;
}

/* ---------- the pass ---------- */

/* The file id of fd, assigned now if it has none. */
static int file_id(int fd, char *fid)
{
	ssize_t n = fgetxattr(fd, TIER_FID_XATTR, fid, 16);
	uint64_t r = 0;

	if (n == 16) {
		fid[16] = '\0';
		return strspn(fid, "0123456789abcdef") == 16 ? 0 : -EINVAL;
	}
	if (n >= 0 || errno != ENODATA)
		return n >= 0 ? -EINVAL : -errno;
	while (!r && getrandom(&r, sizeof(r), 0) != sizeof(r))
		;
	snprintf(fid, 17, "%016" PRIx64, r);
	if (fsetxattr(fd, TIER_FID_XATTR, fid, 16, XATTR_CREATE) != 0)
		return errno == EEXIST ? file_id(fd, fid) : -errno;
	return 0;
}

static int pass_file(struct tier_vol *v, struct tier_store *s, int dirfd, const char *name, uint32_t threshold)
{
	int fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	char fid[17], (*keys)[TIER_KEY_MAX] = NULL, old[17] = "";
	uint32_t today = tier_today(v->t), mday, nfull, *idx = NULL;
	uint64_t serial;
	struct stat st;
	size_t nstale = 0;
	int rc = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || file_id(fd, fid) != 0)
		goto out;
	nfull = (uint32_t)((uint64_t)st.st_size / TIER_CHUNK);
	mday = tier_day_of(v->t, (double)st.st_mtim.tv_sec);
	pthread_mutex_lock(&v->mu);
	struct tier_file *f = file_get(v, st.st_ino, nfull);

	if (f && f->fid[0] && strcmp(f->fid, fid) != 0 && (f = wait_idle(v, st.st_ino, 0, UINT32_MAX))) {
		/* The inode now holds another file: the old one went behind our back. */
		memcpy(old, f->fid, sizeof(old));
		nstale = take_cold(v, f, 0, &keys, &idx);
		f->fid[0] = '\0';
		f->recorded = false;
	}
	if (f && !f->fid[0]) {
		memcpy(f->fid, fid, sizeof(fid));
		f->dirty = true;
	}
	serial = f ? f->serial : 0;
	pthread_mutex_unlock(&v->mu);
	if (old[0])
		drop_records(v, old, keys, idx, nstale, true);
	for (uint32_t c = 0; f && c < nfull && rc == 0 && !atomic_load(&v->t->stopping); c++) {
		uint32_t snap, d;

		pthread_mutex_lock(&v->mu);
		f = file_find(v, st.st_ino);
		if (!f || f->serial != serial || c >= f->n) {
			pthread_mutex_unlock(&v->mu);
			break;
		}
		d = f->day[c] ? f->day[c] : mday;
		if (f->state[c] != CH_HOT || f->inflight || today < d + threshold) {
			pthread_mutex_unlock(&v->mu);
			continue;
		}
		snap = f->ver[c];
		pthread_mutex_unlock(&v->mu);
		rc = tier_move_out(v, s, fd, st.st_ino, serial, fid, c, snap);
	}
out:
	free(keys);
	free(idx);
	close(fd);
	return rc == -EAGAIN ? rc : 0;
}

static int pass_dir(struct tier_vol *v, struct tier_store *s, int dirfd, uint32_t threshold, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while (rc == 0 && !atomic_load(&v->t->stopping) && (de = readdir(d)) != NULL) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISREG(st.st_mode) && st.st_size >= (off_t)TIER_CHUNK) {
			rc = pass_file(v, s, dirfd, de->d_name, threshold);
		} else if (S_ISDIR(st.st_mode) && depth < 256) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				rc = pass_dir(v, s, sub, threshold, depth + 1);
		}
	}
	closedir(d);
	return rc;
}

static int pass_vol(struct tier_vol *v, struct tier_store *s, bool bypass_only)
{
	int fd, rc = 0;

	if (v->cfg.action == TIER_ENABLED && (!bypass_only || v->cfg.bypass)) {
		atomic_store(&v->bypass_due, false);
		fd = open(v->cfg.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			rc = pass_dir(v, s, fd, v->cfg.bypass ? 0 : (uint32_t)v->cfg.cooling_days, 0);
	}
	if (!bypass_only)
		tier_flush_heat(v);
	if (rc != -EAGAIN)
		tier_gc(v, s);
	return rc;
}

/* Snapshot of the volume set (counted). */
static size_t vols_get(struct tier *t, struct tier_vol ***out)
{
	size_t n;

	pthread_rwlock_rdlock(&t->lk);
	*out = calloc(t->nvols ? t->nvols : 1, sizeof(**out));
	n = *out ? t->nvols : 0;
	for (size_t i = 0; i < n; i++) {
		(*out)[i] = t->vols[i];
		atomic_fetch_add(&t->vols[i]->refs, 1);
	}
	pthread_rwlock_unlock(&t->lk);
	return n;
}

static void vols_put(struct tier_vol **vs, size_t n)
{
	for (size_t i = 0; vs && i < n; i++)
		tier_vol_unref(vs[i]);
	free(vs);
}

static int tier_pass_mode(struct tier *t, bool bypass_only)
{
	struct tier_store *s = tier_store_get(t);
	struct tier_vol **vs;
	size_t n = vols_get(t, &vs);
	int rc = s ? 0 : -EAGAIN;

	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!bypass_only || atomic_load(&vs[i]->bypass_due))
			rc = pass_vol(vs[i], s, bypass_only);
		else
			tier_gc(vs[i], s); /* deferred deletes */
	}
	vols_put(vs, n);
	tier_store_put(s);
	return rc;
}

int tier_pass(struct tier *t)
{
	return tier_pass_mode(t, false);
}

void tier_drain(struct tier *t)
{
	tier_pass_mode(t, true);
}

/* Is the store back? */
static void tier_probe(struct tier *t)
{
	struct tier_store *s = tier_store_get(t);
	char key[96];
	uint64_t size;
	int rc;

	if (!s)
		return;
	snprintf(key, sizeof(key), "%s/probe", t->cfg.location);
	rc = obj_head(s->obj, key, &size);
	tier_health(t, rc == -ENOENT ? 0 : rc, "probe");
	tier_store_put(s);
}

static void *tier_main(void *arg)
{
	struct tier *t = arg;
	double next = mono_ms() + 1500;

	pthread_mutex_lock(&t->tmu);
	while (!t->stopping) {
		struct timespec ts;
		double now = mono_ms(), until = next < now + 1000 ? next : now + 1000;

		if (!t->kick && until > now) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)((until - now) / 1000);
			ts.tv_nsec += (long)(((long)(until - now) % 1000) * 1000000);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&t->tcv, &t->tmu, &ts);
		}
		t->kick = false;
		pthread_mutex_unlock(&t->tmu);
		if (tier_is_down(t)) {
			tier_probe(t);
		} else if (mono_ms() >= next) {
			tier_pass(t);
			next = mono_ms() + t->cfg.day_seconds * 1000.0;
		} else {
			tier_drain(t);
		}
		pthread_mutex_lock(&t->tmu);
	}
	pthread_mutex_unlock(&t->tmu);
	return NULL;
}

/* ---------- configuration ---------- */

int tier_new(const struct tier_cfg *cfg, struct tier **out)
{
	struct tier *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	if (obj_key_check(cfg->location) != 0 || strchr(cfg->location, '/')) {
		free(t);
		return -EINVAL;
	}
	t->cfg = *cfg;
	if (!t->cfg.day_seconds)
		t->cfg.day_seconds = 86400;
	pthread_rwlock_init(&t->lk, NULL);
	pthread_mutex_init(&t->hmu, NULL);
	pthread_mutex_init(&t->tmu, NULL);
	pthread_cond_init(&t->tcv, NULL);
	pthread_mutex_init(&t->cmu, NULL);
	pthread_cond_init(&t->ccv, NULL);
	*out = t;
	return 0;
}

void tier_free(struct tier *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->tmu);
	pthread_mutex_lock(&t->cmu);
	t->stopping = true;
	pthread_cond_broadcast(&t->ccv);
	pthread_mutex_unlock(&t->cmu);
	pthread_cond_signal(&t->tcv);
	pthread_mutex_unlock(&t->tmu);
	if (t->running)
		pthread_join(t->thr, NULL);
	for (size_t i = 0; i < t->npw; i++)
		pthread_join(t->pw[i], NULL);
	for (size_t i = 0; i < t->pq_len; i++)
		tier_vol_unref(t->pqv[(t->pq_head + i) % TIER_PREFETCH_Q]);
	for (size_t i = 0; i < t->nvols; i++) {
		tier_flush_heat(t->vols[i]);
		tier_vol_unref(t->vols[i]);
	}
	free(t->vols);
	tier_store_put(t->store);
	for (size_t i = 0; i < TIER_CACHE_CHUNKS; i++)
		free(t->cache[i].buf);
	pthread_rwlock_destroy(&t->lk);
	pthread_mutex_destroy(&t->hmu);
	pthread_mutex_destroy(&t->tmu);
	pthread_cond_destroy(&t->tcv);
	pthread_mutex_destroy(&t->cmu);
	pthread_cond_destroy(&t->ccv);
	free(t);
}

int tier_start(struct tier *t)
{
	if (t->running)
		return 0;
	for (size_t i = 0; i < TIER_PREFETCH_WORKERS; i++) {
		if (pthread_create(&t->pw[i], NULL, prefetch_main, t) != 0)
			break;
		t->npw++;
	}
	if (pthread_create(&t->thr, NULL, tier_main, t) != 0)
		return -EAGAIN;
	t->running = true;
	return 0;
}

int tier_set_store(struct tier *t, const struct obj_cfg *cfg)
{
	struct tier_store *s = NULL, *old;
	struct obj_cfg c;
	int rc;

	if (cfg) {
		c = *cfg;
		if (!c.timeout_ms)
			c.timeout_ms = 2500; /* under the cold-read deadline, so a hung store is retried */
		if (!(s = calloc(1, sizeof(*s))))
			return -ENOMEM;
		if ((rc = obj_open(&c, &s->obj)) != 0) {
			free(s);
			return rc;
		}
		atomic_init(&s->refs, 1);
		snprintf(s->desc, sizeof(s->desc), "%s", obj_describe(s->obj));
		rc = obj_ensure_bucket(s->obj);
		if (rc != 0 && rc != -EAGAIN) {
			fprintf(stderr, "aquifer-agent: cold store %s: %s\n", s->desc, obj_strerror(rc));
		}
		tier_health(t, rc == -EAGAIN ? rc : 0, "create bucket");
	}
	pthread_rwlock_wrlock(&t->lk);
	old = t->store;
	t->store = s;
	pthread_rwlock_unlock(&t->lk);
	tier_store_put(old);
	return 0;
}

int tier_set_volumes(struct tier *t, const struct tier_vol_cfg *cfg, size_t n, int *rcs)
{
	struct tier_vol **nv = calloc(n ? n : 1, sizeof(*nv)), **old = NULL;
	struct tier_store *s = tier_store_get(t);
	size_t m = 0, nold = 0;
	int rc = 0;

	if (!nv) {
		tier_store_put(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct tier_vol *v;
		int vrc;

		if (rcs)
			rcs[i] = 0;
		if (cfg[i].action == TIER_OFF)
			continue;
		if ((v = tier_vol_find(t, cfg[i].fsid)) != NULL) {
			pthread_mutex_lock(&v->mu);
			v->cfg.action = cfg[i].action;
			v->cfg.cooling_days = cfg[i].cooling_days;
			v->cfg.bypass = cfg[i].bypass;
			v->cfg.retrieval = cfg[i].retrieval;
			pthread_mutex_unlock(&v->mu);
		} else if ((vrc = tier_vol_open(t, &cfg[i], &v)) != 0) {
			if (rcs)
				rcs[i] = vrc;
			if (!rc)
				rc = vrc;
			continue; /* left out; the others go on */
		} else if (s) {
			tier_gc(v, s); /* recovery: objects of unfinished moves go */
		}
		nv[m++] = v;
	}
	pthread_rwlock_wrlock(&t->lk);
	old = t->vols;
	nold = t->nvols;
	t->vols = nv;
	t->nvols = m;
	nv = NULL;
	pthread_rwlock_unlock(&t->lk);
	tier_store_put(s);
	vols_put(nv, m);
	vols_put(old, nold);
	return rc;
}

struct keylist {
	char **k;
	size_t n, cap;
};

static int keylist_add(void *arg, const char *key, uint64_t size)
{
	struct keylist *l = arg;

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

static void keylist_free(struct keylist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->k[i]);
	free(l->k);
	memset(l, 0, sizeof(*l));
}

int tier_destroy_volume(struct tier *t, uint64_t fsid, const char *state_dir)
{
	struct tier_store *s = tier_store_get(t);
	struct keylist l = {0};
	char prefix[96], path[4200];
	int rc = 0;

	snprintf(prefix, sizeof(prefix), "%s/%016" PRIx64 "/", t->cfg.location, fsid);
	if (s && (rc = obj_list(s->obj, prefix, keylist_add, &l)) == 0) {
		for (size_t i = 0; i < l.n && rc == 0; i++)
			rc = obj_delete(s->obj, l.k[i]);
	}
	if (rc == 0) {
		static const char *files[] = {"tier.db", "tier.db-wal", "tier.db-shm"};

		for (size_t i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/%s", state_dir, files[i]);
			unlink(path);
		}
		rmdir(state_dir);
	} else {
		fprintf(stderr, "aquifer-agent: cannot delete the cold objects under %s: %s\n", prefix, obj_strerror(rc));
	}
	keylist_free(&l);
	tier_store_put(s);
	return rc;
}

uint64_t tier_cold_total(struct tier *t)
{
	uint64_t sum = 0;

	pthread_rwlock_rdlock(&t->lk);
	for (size_t i = 0; i < t->nvols; i++)
		sum += atomic_load(&t->vols[i]->cold_bytes);
	pthread_rwlock_unlock(&t->lk);
	return sum;
}

int tier_stats(struct tier *t, uint64_t fsid, struct tier_stats *out)
{
	struct tier_vol *v = tier_vol_find(t, fsid);

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOENT;
	out->cold_bytes = atomic_load(&v->cold_bytes);
	out->cold_read_bytes = atomic_load(&v->cold_read);
	out->cold_write_bytes = atomic_load(&v->cold_write);
	pthread_mutex_lock(&t->hmu);
	if (t->down) {
		struct tier_store *s = tier_store_get(t);
		struct tm tm;

		gmtime_r(&t->down_since, &tm);
		snprintf(out->state, sizeof(out->state), "STORE_UNAVAILABLE");
		snprintf(out->details, sizeof(out->details),
			 "cold store %s unreachable since %02d:%02d:%02d UTC (%s); tiering paused, cold reads retry",
			 s ? s->desc : "(none)", tm.tm_hour, tm.tm_min, tm.tm_sec, t->down_why);
		tier_store_put(s);
	} else {
		snprintf(out->state, sizeof(out->state), "%s", v->cfg.action == TIER_PAUSED ? "PAUSED" : "ACTIVE");
	}
	pthread_mutex_unlock(&t->hmu);
	tier_vol_unref(v);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has(struct keylist *l, const char *k)
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

static int db_keys(struct tier_vol *v, const char *sql, struct keylist *l)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	pthread_mutex_lock(&v->dbmu);
	if (sqlite3_prepare_v2(v->db, sql, -1, &st, NULL) != SQLITE_OK)
		rc = -EIO;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
		rc = keylist_add(l, (const char *)sqlite3_column_text(st, 0), 0);
	sqlite3_finalize(st);
	pthread_mutex_unlock(&v->dbmu);
	if (l->n)
		qsort(l->k, l->n, sizeof(*l->k), cmp_str);
	return rc;
}

static void sb_keys(struct sbuf *b, const char *name, struct keylist *l, struct keylist *other, struct keylist *also)
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
	size_t n = vols_get(t, &vs), seen = 0;
	struct sbuf b = {0};
	int rc = s ? 0 : -EAGAIN;

	*json = NULL;
	sb_add(&b, "{\"volumes\":[");
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct keylist objs = {0}, recs = {0}, pend = {0};
		struct tier_vol *v = vs[i];

		if (fsid && v->cfg.fsid != fsid)
			continue;
		rc = obj_list(s->obj, v->prefix, keylist_add, &objs);
		if (rc == 0) {
			if (objs.n)
				qsort(objs.k, objs.n, sizeof(*objs.k), cmp_str);
			rc = db_keys(v, "SELECT key FROM chunks", &recs);
		}
		if (rc == 0)
			rc = db_keys(v, "SELECT key FROM pending", &pend);
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
		keylist_free(&objs);
		keylist_free(&recs);
		keylist_free(&pend);
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
	vols_put(vs, n);
	tier_store_put(s);
	return rc;
}
