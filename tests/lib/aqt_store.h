/* aqt_store: a volume store over a fresh temporary folder, the set-up the
 * volume-store and NFS suites share:
 *
 *     static struct aqt_store ts;
 *     aqt_store_init(&ts, 2, &(struct aqt_store_spec){ .id_prefix = "vol", ... });
 *     ...hand ts.store to a front end, or not...
 *     ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
 *     ...
 *     aqt_store_cleanup(&ts);
 *
 * Export i is "<id_prefix><i>" at /v<i>, its root the folder DIR/v<i>, fsid
 * spec->fsid + i, one read-write rule for spec->clients. The exports are
 * not set by init: a test may create a front end over the empty store first
 * (the agent does it in that order). Init fails the test (ck_assert) when
 * anything cannot be made; it lives in its own library (libaqtstore.a),
 * linked before the store's, so suites that need no store do not pull it in.
 */
#ifndef AQ_TESTS_LIB_AQT_STORE_H
#define AQ_TESTS_LIB_AQT_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/vol/vol.h"

#define AQT_STORE_MAX 4

struct aqt_store_spec {
	const char *id_prefix; /* export ids: "<id_prefix><i>" */
	uint64_t fsid;         /* of export 0; export i has fsid + i */
	uint64_t capacity;     /* bytes, each export */
	const char *clients;   /* the clients of the one read-write rule */
	uint32_t anon;         /* anon_uid and anon_gid of that rule */
	uint8_t key_byte;      /* the location key: VOL_KEY_LEN such bytes */
};

struct aqt_store {
	char dir[64];          /* the temporary folder */
	struct vol_export_cfg cfg[AQT_STORE_MAX];
	int n;                 /* exports in cfg */
	uint8_t key[VOL_KEY_LEN];
	struct vol_store *store;
};

/* mkdtemp, n (<= AQT_STORE_MAX) export folders and their cfg, and an empty
 * store with the key. */
void aqt_store_init(struct aqt_store *t, int n, const struct aqt_store_spec *spec);
/* What an attacker holding location key KEY builds: a MAC-valid handle of
 * export FSID (a snapshot handle when SNAP) whose kernel handle names PATH,
 * anywhere on the file system. Fails the test when PATH has no handle. */
struct vol_fh aqt_store_forge(const uint8_t *key, bool snap, uint64_t fsid, const char *path);
/* Frees the store and removes the folder and everything below it. */
void aqt_store_cleanup(struct aqt_store *t);
/* Export v's helpers for the read-ahead suites (vol, NFSv4.1, SMB):
 * put: a file name of len zero bytes in its folder (as root, not through
 * the store); read: [off, off+len) of name read through the store as a
 * client would (a lookup by name, then vol_read as root), all of it;
 * stats: its vol_stats. */
void aqt_store_put(const struct aqt_store *t, int v, const char *name, size_t len);
void aqt_store_read(const struct aqt_store *t, int v, const char *name, uint64_t off, size_t len);
struct vol_stats aqt_store_stats(const struct aqt_store *t, int v);
/* What export v prefetched (vol_stats.ra_bytes) once want bytes came (10 s
 * at most: the machine is shared) and 200 ms more, to see it does not go
 * past; with want 0, after a second of quiet (nothing more is due). */
uint64_t aqt_ra_wait(const struct aqt_store *t, int v, uint64_t want);
/* Whether dir's file system logs each change whole, told as the store's
 * vol_one_log tells it: XFS, or ext4 with a jbd2 journal. */
bool aqt_store_one_log(const char *dir);

/* A loop file system for the suites that need one (btrfs for cloning, a
 * journalled ext4 for the log sync): TAG names a new folder in /tmp (top),
 * an image of SIZE (truncate's syntax) in it made by the shell command MKFS
 * (given the image's path after it), mounted on top/mnt. Meant for an
 * unchecked fixture of the parent (a failing test cannot leave it mounted).
 * top[0] == 0 when none could be made here (no tool, not root). */
struct aqt_loop {
	char top[64];
	char mnt[96];
};
void aqt_loop_up(struct aqt_loop *l, const char *tag, const char *size, const char *mkfs);
/* Export v of t gets a new folder of l's mount as its root (before
 * vol_store_set); nothing when l made no mount. */
void aqt_loop_export(const struct aqt_loop *l, struct aqt_store *t, int v);
/* Unmounts and removes what aqt_loop_up made (nothing when it made none). */
void aqt_loop_down(struct aqt_loop *l);

#endif
