/* bkp_internal: what the files of agent/bkp/ share: the vault handle, the
 * keys and sealing (bkp_crypt.c), the manifest in memory and its bounded
 * codec (bkp_mf.c), the set of chunk names (bkp_vault.c). */
#ifndef AQ_AGENT_BKP_INTERNAL_H
#define AQ_AGENT_BKP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/bkp/bkp.h"

#define BKP_ID_LEN 32                  /* chunk name: HMAC-SHA256 */
#define BKP_NONCE_LEN 12
#define BKP_TAG_LEN 16
#define BKP_SEAL_MAGIC "AQB1"
#define BKP_SEAL_OVERHEAD (4 + BKP_NONCE_LEN + BKP_TAG_LEN)
#define BKP_PATH_MAX 4095              /* a path or symlink target in a manifest */
#define BKP_MF_MAX (512u << 20)        /* a sealed manifest (about 3 M files) */
#define BKP_MF_ENTRIES_MAX (16u << 20)
#define BKP_MF_VERSION 2               /* what bkp_mf_init makes and a backup writes */
#define BKP_CHUNK_KEY_LEN (2 + 3 + 2 * BKP_ID_LEN) /* "c/hh/" + 64 hex */

enum bkp_type { BKP_T_DIR = 1, BKP_T_REG = 2, BKP_T_SYMLINK = 3, BKP_T_LINK = 4 };

/* The extended attributes a backup carries for folders and files: the user
 * data the SMB server keeps in the store's trusted.* namespace (agent/vol/
 * vol.h: the DOS attributes, the EA list, an NTFS volume's security
 * descriptors), each at most BKP_XA_MAX bytes.
 * The store's own marks (trusted.aquifer.vol, .snap, the tier's fid) are
 * not carried: they belong to the volume they were made for. Index = bit
 * of the manifest entry's mask; names in bkp_xa_name. */
enum bkp_xa { BKP_XA_DOS, BKP_XA_EA, BKP_XA_SD, BKP_XA_N };
#define BKP_XA_MAX 65535u
extern const char *const bkp_xa_name[BKP_XA_N];

struct bkp_cref {
	uint8_t id[BKP_ID_LEN];
	bool zero; /* all zero bytes: a hole, no object, id unused */
};

struct bkp_ent {
	uint8_t type;
	char *path;          /* "" for the root, else "a/b" (no leading '/') */
	uint32_t mode, uid, gid;
	int64_t atime_ns, mtime_ns, ctime_ns;
	uint64_t ino, size;
	uint32_t nchunks;    /* BKP_T_REG: ceil(size / chunk_size) */
	struct bkp_cref *chunks;
	char *target;        /* BKP_T_SYMLINK */
	uint32_t link;       /* BKP_T_LINK: index of an earlier BKP_T_REG entry */
	uint8_t *xa[BKP_XA_N];  /* BKP_T_DIR, BKP_T_REG: the carried xattrs (NULL: none) */
	uint32_t xa_len[BKP_XA_N];
};

struct bkp_mf {
	uint32_t version;    /* BKP_MF_VERSION; 1: a manifest without xattrs */
	uint32_t chunk_size;
	int64_t create_unix_ns;
	struct bkp_stats stats;
	char source[1024];
	char prev_id[BKP_ID_MAX + 1];
	struct bkp_ent *ents;
	size_t n, cap;
};

/* ---- bkp_mf.c: the manifest codec ---- */
void bkp_mf_init(struct bkp_mf *m);
void bkp_mf_cleanup(struct bkp_mf *m);
/* A new entry at the end (zeroed, path copied); NULL on ENOMEM or cap. */
struct bkp_ent *bkp_mf_add(struct bkp_mf *m, uint8_t type, const char *path);
/* The plaintext encoding into *out (malloc, caller frees). -EINVAL if m
 * breaks a rule the decoder checks; -ENOMEM; -E2BIG past BKP_MF_MAX. */
int bkp_mf_encode(const struct bkp_mf *m, uint8_t **out, size_t *len);
/* Decodes len bytes (bounded: every count is checked against the bytes left
 * before anything is allocated; paths checked; trailing bytes refused).
 * -EBADMSG with nothing published on any flaw. */
int bkp_mf_decode(const uint8_t *buf, size_t len, struct bkp_mf *m);
/* 0 when p is a relative path the manifest accepts: no leading or trailing
 * '/', no empty, "." or ".." component, no NUL, at most BKP_PATH_MAX. "" is
 * valid (the root). */
int bkp_path_check(const char *p, size_t len);

/* ---- bkp_crypt.c ---- */
struct bkp_keys {
	uint8_t id[32], chunk[32], meta[32];
};
int bkp_keys_derive(const uint8_t key[BKP_KEY_LEN], struct bkp_keys *k);
int bkp_chunk_id(const struct bkp_keys *k, const void *buf, size_t len, uint8_t id[BKP_ID_LEN]);
/* out must hold len + BKP_SEAL_OVERHEAD; aad is the object's key. */
int bkp_seal(const uint8_t key[32], const char *aad, const void *pt, size_t len, uint8_t *out);
/* in of len bytes -> out (len - BKP_SEAL_OVERHEAD bytes); -EBADMSG when it
 * does not authenticate. */
int bkp_open_sealed(const uint8_t key[32], const char *aad, const uint8_t *in, size_t len, uint8_t *out);
void bkp_chunk_key(const uint8_t id[BKP_ID_LEN], char out[BKP_CHUNK_KEY_LEN + 1]);

/* ---- bkp_vault.c ---- */
struct bkp_vault {
	struct obj_store *store;
	struct bkp_keys keys;
	int (*put_hook)(void *arg, const char *key);
	void *put_hook_arg;
};
/* obj_put through the test hook. */
int bkp_put(struct bkp_vault *v, const char *key, const void *buf, size_t len);
/* Reads, opens (meta key) and decodes manifest id into m. */
int bkp_mf_load(struct bkp_vault *v, const char *id, struct bkp_mf *m, aq_msg *msg);
/* Seals and writes m as manifest id; *put gets the bytes put. */
int bkp_mf_store(struct bkp_vault *v, const char *id, const struct bkp_mf *m, uint64_t *put, aq_msg *msg);

/* A set of chunk names (open addressing). */
struct bkp_set {
	uint8_t (*slot)[BKP_ID_LEN];
	uint8_t *used;
	size_t n, cap;
};
void bkp_set_init(struct bkp_set *s);
void bkp_set_cleanup(struct bkp_set *s);
int bkp_set_add(struct bkp_set *s, const uint8_t id[BKP_ID_LEN]);
bool bkp_set_has(const struct bkp_set *s, const uint8_t id[BKP_ID_LEN]);
/* Every chunk in the store into s. */
int bkp_set_load(struct bkp_vault *v, struct bkp_set *s, aq_msg *msg);

/* Locks: kind "backup" or "gc", named l/<kind>-<who> (who NULL: random).
 * acquire refuses (-EBUSY) when a live lock of the other kind (gc: of any
 * kind) exists; *name gets the lock's key. */
int bkp_lock_acquire(struct bkp_vault *v, const char *kind, const char *who, unsigned stale_sec, char *name,
		     size_t cap, uint64_t *stale_removed, aq_msg *msg);
int bkp_lock_refresh(struct bkp_vault *v, const char *name);
void bkp_lock_release(struct bkp_vault *v, const char *name);

/* ---- bkp_pool.c: puts in parallel ---- */
struct bkp_slot;
struct bkp_pool {
	struct bkp_vault *v;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct bkp_slot *slots;
	size_t nslots;
	pthread_t threads[BKP_PARALLEL_MAX];
	unsigned nthreads;
	bool inited, stop;
	int err;             /* the first put that failed */
	char errtext[256];   /* its obj_last_error */
};
/* workers threads, 2 * workers slots of bufsize bytes. */
int bkp_pool_start(struct bkp_pool *p, struct bkp_vault *v, unsigned workers, size_t bufsize);
/* A free slot's buffer to seal into (waits for one); NULL once a put has
 * failed (*err: its code). */
uint8_t *bkp_pool_slot(struct bkp_pool *p, int *err);
/* Queues buf (from bkp_pool_slot) to be put as key; key NULL gives the
 * slot back unused. */
void bkp_pool_submit(struct bkp_pool *p, uint8_t *buf, const char *key, size_t len);
/* Waits until every queued put ended; the first failure's code, or 0. */
int bkp_pool_drain(struct bkp_pool *p);
/* Stops and joins the workers, frees the slots; fine after a failed start. */
void bkp_pool_finish(struct bkp_pool *p);

#endif
