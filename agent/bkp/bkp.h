/* bkp: the backup engine of the agent (issue 21): incremental-forever,
 * encrypted, content-addressed backups of a snapshot folder into an object
 * store (agent/obj/, directory or S3), restore of a whole backup or of
 * selected paths, delete, and a garbage collector. The format and how the
 * control plane drives this are in agent/bkp/README.md; in short:
 *
 *   vault objects (every byte below is AES-256-GCM ciphertext, except locks)
 *     vault              key check: a known text sealed under the vault key
 *     c/<hh>/<64 hex>    a chunk; the name is HMAC-SHA256(k_id, plaintext),
 *                        so equal data is stored once and the store operator
 *                        learns no plaintext hash
 *     m/<backup id>      a manifest: the whole tree with attributes and, per
 *                        regular file, its chunk references (self-contained)
 *     l/<kind>-<random>  a lock ("backup" or "gc"), plain "<unix seconds>"
 *
 * Keys (HKDF-SHA256 of the caller's 32-byte vault key): one to name chunks,
 * one to seal chunks, one to seal manifests and the key check. Every object's
 * key in the store is its GCM additional data, so no object can stand in for
 * another.
 *
 * Integrity: chunks are durable (obj_put) before the manifest is written; the
 * manifest is written last, so a backup exists exactly when m/<id> does. A
 * store failing mid-way (-EAGAIN) leaves no manifest; the same call again
 * skips the chunks already stored. Restores check every chunk's tag and
 * recompute its name from the plaintext.
 *
 * Errors are negative errno with a sentence in *msg (may be NULL):
 *   -EAGAIN        the store is unreachable or throttled: retry later
 *   -EKEYREJECTED  the key is not this vault's
 *   -EBADMSG       an object failed authentication or verification, or a
 *                  manifest is malformed (corrupt or tampered store)
 *   -EEXIST        backup id exists already (a finished backup: see bkp_info)
 *   -ENOENT        no such backup, or a selected path is not in the backup
 *   -EBUSY         a gc holds the vault (backup) or a backup does (gc)
 *   -EINVAL        bad id, bad path, a path escaping the target
 *   -ENOTEMPTY     the whole-restore target is not empty
 *   -ESTALE        the source changed while it was read (not a snapshot?)
 *   -EACCES / -EIO from the store or the file system
 *
 * Thread-safety: a vault handle is used by one thread at a time (a backup
 * runs its chunk puts on worker threads of its own, joined before it
 * returns); several processes may use one vault (the locks order backups
 * against gc). A put hook must then be thread-safe.
 */
#ifndef AQ_AGENT_BKP_H
#define AQ_AGENT_BKP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/obj/obj.h"
#include "api/api_error.h"

#define BKP_KEY_LEN 32
#define BKP_ID_MAX 63                       /* backup ids: [A-Za-z0-9._-], 1..63, not "." or ".." */
#define BKP_CHUNK_DEFAULT (1u << 20)        /* fixed-size chunks, see README */
#define BKP_CHUNK_MIN (4u << 10)
#define BKP_CHUNK_MAX (16u << 20)
#define BKP_LOCK_STALE_DEFAULT 3600         /* seconds without refresh before a lock is dead */
#define BKP_PARALLEL_DEFAULT 4              /* chunk puts in flight */
#define BKP_PARALLEL_MAX 32

struct bkp_vault;

/* Opens the vault in store cfg with the 32-byte key: reads the key check
 * (writes it when the vault is new; obj_ensure_bucket is called first).
 * -EKEYREJECTED when the vault was made with another key. */
int bkp_vault_open(const struct obj_cfg *cfg, const uint8_t key[BKP_KEY_LEN], struct bkp_vault **out,
		   aq_msg *msg);
/* NULL is fine. */
void bkp_vault_close(struct bkp_vault *v);

/* Test hook: called before every put with the object's key; a non-zero
 * return fails that put with that code (e.g. -EAGAIN after N puts). */
void bkp_vault_set_put_hook(struct bkp_vault *v, int (*fn)(void *arg, const char *key), void *arg);

/* What a backup did (out of bkp_backup) and what it holds (in its manifest,
 * bkp_info). bytes_* count payload; uploaded counts ciphertext put. */
struct bkp_stats {
	uint64_t files, dirs, symlinks, hardlinks, skipped; /* skipped: fifos, sockets, devices */
	uint64_t logical_bytes;    /* sum of regular files' sizes (hard links once) */
	uint64_t bytes_read;       /* read from the source (unchanged files are not read) */
	uint64_t bytes_uploaded;   /* put to the store, chunks and manifest */
	uint64_t files_unchanged;  /* taken from the previous manifest by identity */
	uint64_t chunks;           /* chunk references of the backup (zero chunks excluded) */
	uint64_t chunks_new;       /* put by this backup */
	uint64_t chunks_zero;      /* all-zero chunks: stored as holes, no object */
	uint64_t manifest_bytes;   /* size of the sealed manifest */
};

/* Which (source) identity lets an unchanged file be taken from the previous
 * manifest without reading it (see README, "identity"). */
enum bkp_ident {
	BKP_IDENT_STRICT = 0, /* inode, size, mtime ns and ctime ns all equal: btrfs snapshots */
	BKP_IDENT_MTIME = 1,  /* size and mtime ns: copied snapshots (new inodes, ctime of the copy) */
	BKP_IDENT_NONE = 2,   /* read every file (a verifying full backup; still dedups) */
};

typedef void (*bkp_progress_fn)(void *arg, uint64_t done, uint64_t total);

struct bkp_opts {
	const char *prev_id;    /* previous backup of this volume, or NULL (first backup) */
	const char *source;     /* label kept in the manifest (e.g. the snapshot's name), may be NULL */
	uint32_t chunk_size;    /* 0 = BKP_CHUNK_DEFAULT; BKP_CHUNK_MIN..BKP_CHUNK_MAX */
	enum bkp_ident ident;
	unsigned lock_stale_sec; /* 0 = BKP_LOCK_STALE_DEFAULT */
	unsigned parallel;      /* chunk puts in flight, 1..BKP_PARALLEL_MAX; 0 = BKP_PARALLEL_DEFAULT */
	bkp_progress_fn progress; /* bytes done / total; may be NULL */
	void *progress_arg;
	/* Reads len bytes at off of the file open as fd (path: relative to the
	 * source) into buf: the count read, or -errno. NULL: pread. A tiered
	 * volume's snapshot must pass the tier's reader here, which reads the
	 * ranges held in the cold tier (holes in the file) from there. */
	ssize_t (*read)(void *arg, int fd, const char *path, void *buf, size_t len, uint64_t off);
	void *read_arg;
};

/* Backs up the tree at src (a snapshot folder: nothing may change in it) as
 * backup id. Uploads only chunks the vault lacks; with prev_id, files whose
 * identity matches the previous manifest are not read. The manifest is the
 * last object written. *st (may be NULL) gets the counts. */
int bkp_backup(struct bkp_vault *v, const char *id, const char *src, const struct bkp_opts *o,
	       struct bkp_stats *st, aq_msg *msg);

struct bkp_info {
	struct bkp_stats stats;   /* as recorded by the backup */
	int64_t create_unix_ns;
	uint32_t chunk_size;
	char source[1024];
	char prev_id[BKP_ID_MAX + 1];
};
/* Reads and verifies manifest id. */
int bkp_info(struct bkp_vault *v, const char *id, struct bkp_info *out, aq_msg *msg);

/* Calls cb(arg, id) for every backup in the vault (unspecified order); a
 * non-zero cb return stops and is returned. */
int bkp_list(struct bkp_vault *v, int (*cb)(void *arg, const char *id), void *arg, aq_msg *msg);

/* Deletes backup id (its manifest; chunks go at the next bkp_gc). -ENOENT
 * when missing. Every other backup stays restorable. */
int bkp_delete(struct bkp_vault *v, const char *id, aq_msg *msg);

struct bkp_gc_stats {
	uint64_t manifests, chunks_kept, chunks_swept, bytes_kept, bytes_swept, stale_locks;
};
/* Marks every chunk referenced by a remaining manifest and deletes the rest.
 * Takes the gc lock: -EBUSY while a backup runs (live lock). Sweeps nothing
 * unless every manifest was read and verified. */
int bkp_gc(struct bkp_vault *v, unsigned lock_stale_sec, struct bkp_gc_stats *st, aq_msg *msg);

struct bkp_restore_opts {
	bkp_progress_fn progress; /* bytes done / total, may be NULL; called from the restore's
				   * worker threads, one call at a time */
	void *progress_arg;
	bool no_owner;            /* do not chown (restore as an unprivileged user) */
	unsigned parallel;        /* files written at once, 1..BKP_PARALLEL_MAX; 0 = BKP_PARALLEL_DEFAULT */
};
/* paths == NULL: restores the whole backup into dst, which must be empty or
 * missing (it is made), root attributes included. Else restores each of the
 * npaths paths (as in the volume, "/a/b" or "a/b"; "/" is the root) into the
 * existing folder dst as dst/<last component> (a folder with its subtree),
 * replacing files of the same name. Paths with "." or ".." components, or a
 * dst tree whose folders are symlinks, are refused (-EINVAL); nothing is
 * ever written outside dst. Every chunk is verified before it is written.
 * *st (may be NULL): files, dirs, symlinks, hardlinks, logical_bytes and
 * bytes_read (payload fetched). */
int bkp_restore(struct bkp_vault *v, const char *id, const char *dst, const char *const *paths, size_t npaths,
		const struct bkp_restore_opts *o, struct bkp_stats *st, aq_msg *msg);

/* 0 when id is a valid backup id, else -EINVAL. */
int bkp_id_check(const char *id);

#endif
