/* tier_internal: what the files of agent/tier/ share: the engine's structs
 * and the functions one file offers the others. Not part of the contract
 * (tier.h); nothing outside agent/tier/ includes it.
 *
 * Locks, outermost first: t->lk (rwlock over the volume set and the store
 * holder), v->mu (a volume's in-memory file table and chunk states; held
 * only for bookkeeping, never across network or disk I/O), v->dbmu (the
 * volume's SQLite connection), t->cmu (the chunk cache). A chunk being moved
 * in or out is CH_BUSY while its local bytes change (punch or pwrite); hot
 * I/O touching it waits on v->cv for that local step only.
 */
#ifndef AQ_AGENT_TIER_INTERNAL_H
#define AQ_AGENT_TIER_INTERNAL_H

#include "agent/tier/tier.h"
#include "util/ut_clock.h"
#include "util/ut_hex.h"
#include "util/ut_log.h"

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
#define TIER_PREFETCH_Q 64            /* keys queued per lane */
/* Demand first. A client READ that misses the chunk cache GETs its chunk at
 * once (it never queues). The read-ahead queue has two lanes: NEAR, the
 * next chunks of a stream a client reads (pushed by a client READ), and
 * FAR, those of a stream the store's cross-file read-ahead reads ahead of
 * its client (pushed by a vol_tier_ops.read_ahead read). Workers take NEAR
 * first; a FAR key pushed again from NEAR moves to NEAR. While client GETs
 * are in flight (t->dem) at most TIER_PF_FAR_SHARE FAR GETs run (queued
 * ones and read_ahead reads of a chunk alike wait; one keeps FAR from
 * starving); NEAR and FAR together stay within TIER_PF_MAX. */
#define TIER_PF_MAX (TIER_PREFETCH_WORKERS * TIER_PREFETCH_BATCH)
#define TIER_PF_FAR_SHARE 1
/* Chunks one read_cached call may span (a VOL_IO_MAX READ spans two). */
#define TIER_CACHED_CHUNKS 4

enum tier_lane { TIER_NEAR = 0, TIER_FAR = 1, TIER_LANES = 2 };

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
	int frozen;                /* snapshots being made (v->mu): no chunk moves */
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
	bool pf_unread;            /* a prefetch fetched it and no read copied from it yet */
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
	struct tier_lane_q {         /* a ring; an entry with key "" was moved to NEAR */
		char key[TIER_PREFETCH_Q][TIER_KEY_MAX];
		struct tier_vol *v[TIER_PREFETCH_Q];
		size_t head, len;
	} pq[TIER_LANES];
	unsigned dem;               /* client GETs at the store now */
	atomic_ullong rc_declined;  /* tier_counters: cold ranges read_cached found not whole in the cache */
	atomic_ullong pf_evicted_unread; /* tier_counters: prefetched chunks given up unread */
	unsigned pf[TIER_LANES];    /* read-ahead GETs at the store now, per lane */
	pthread_t pw[TIER_PREFETCH_WORKERS];
	size_t npw;
};


/* Keys collected from the object store or the tier map. */
struct tier_keylist {
	char **k;
	size_t n, cap;
};

/* tier.c */
uint32_t tier_day_of(const struct tier *t, double secs);
uint32_t tier_today(const struct tier *t);
void tier_key(const struct tier_vol *v, const char *fid, uint32_t idx, uint64_t ver, char *out);
/* The SHA-256 of buf as 64 lowercase digits and a NUL in hex[TIER_SUM_HEX]. */
#define TIER_SUM_HEX 65
void tier_sum(const void *buf, size_t len, char *hex);
struct tier_store *tier_store_get(struct tier *t);
void tier_store_put(struct tier_store *s);
void tier_health(struct tier *t, int rc, const char *what);
bool tier_is_down(struct tier *t);
time_t tier_down_for(struct tier *t);
struct tier_vol *tier_vol_find(struct tier *t, uint64_t fsid);

/* tier_file.c */
struct tier_file *tier_file_find(struct tier_vol *v, uint64_t ino);
struct tier_file *tier_file_get(struct tier_vol *v, uint64_t ino, uint32_t nchunks);
void tier_file_free(struct tier_file *f);
void tier_file_unhash(struct tier_vol *v, struct tier_file *f);

/* tier_map.c */
int tier_map_exec(struct tier_vol *v, const char *sql, const char *a, const char *b, const char *c, int64_t i,
	int64_t j);
int tier_map_begin(struct tier_vol *v);
int tier_map_end(struct tier_vol *v, int rc);
int tier_map_pending_add(struct tier_vol *v, const char *key, const char *why);
void tier_map_pending_del(struct tier_vol *v, const char *key);
void tier_map_gc(struct tier_vol *v, struct tier_store *s);
int tier_vol_open(struct tier *t, const struct tier_vol_cfg *cfg, struct tier_vol **out);
void tier_vol_unref(struct tier_vol *v);
void tier_map_flush_heat(struct tier_vol *v);
int tier_map_sum(struct tier_vol *v, const char *fid, uint32_t idx, char *out);

/* tier_cache.c */
int tier_fetch(struct tier_vol *v, const char *key, uint64_t off, void *buf, size_t len, size_t *got);
/* Copy [coff, coff+len) of chunk object key through the chunk cache; lane
 * TIER_NEAR for a client READ (its GET starts at once and counts in t->dem),
 * TIER_FAR for a read-ahead read (its GET waits for its turn, above). */
int tier_cache_read(struct tier_vol *v, const char *key, uint64_t coff, void *dst, size_t len, void **swap,
		    enum tier_lane lane);
/* A random (not streamed) client read of part of a chunk: the cache's copy
 * when the chunk is there or being fetched (a read-ahead GET in flight is
 * joined, not repeated), else a ranged GET of just that part, which counts
 * as a client GET. */
int tier_cache_read_part(struct tier_vol *v, const char *key, uint64_t coff, void *dst, size_t len);
/* The cache's copy of a range that spans the n chunk objects keys[0..n)
 * (at most TIER_CACHED_CHUNKS), starting coff into the first, len bytes,
 * into dst: 0 when every one of them is ready in the cache (copied under
 * cmu, nothing waited for), else 1 with nothing copied (one missing, being
 * fetched or handed over). vol_tier_ops.read_cached's half. */
int tier_cache_copy(struct tier *t, char (*keys)[TIER_KEY_MAX], size_t n, uint64_t coff, uint8_t *dst, size_t len);
void tier_prefetch_push(struct tier_vol *v, const char *key, enum tier_lane lane);
void *tier_prefetch_main(void *arg);

/* tier_move.c */
void tier_kick(struct tier *t);
struct tier_file *tier_wait_idle(struct tier_vol *v, uint64_t ino, uint32_t a, uint32_t b);
ssize_t tier_pread_all(int fd, void *buf, size_t len, uint64_t off);
int tier_rehydrate(struct tier_vol *v, uint64_t ino, uint32_t c, int fd);
int tier_move_out(struct tier_vol *v, struct tier_store *s, int fd, uint64_t ino, uint64_t serial,
	const char *fid, uint32_t c, uint32_t snap);
size_t tier_take_cold(struct tier_vol *v, struct tier_file *f, uint32_t from, char (**keys)[TIER_KEY_MAX],
	uint32_t **idx);
void tier_drop_records(struct tier_vol *v, const char *fid, char (*keys)[TIER_KEY_MAX], uint32_t *idx, size_t n,
	bool whole);

/* tier_pass.c */
size_t tier_vols_get(struct tier *t, struct tier_vol ***out);
void tier_vols_put(struct tier_vol **vs, size_t n);
void *tier_main(void *arg);

/* tier_snap.c: whether a snapshot's rows name the object key (then it
 * stays in the store). */
bool tier_snap_held(struct tier_vol *v, const char *key);

/* tier_scan.c */
int tier_keylist_add(void *arg, const char *key, uint64_t size);
void tier_keylist_free(struct tier_keylist *l);

#endif
