/* tier: the cold tier of the data path (issue 11).
 *
 * For every volume whose tieringPolicy.tierAction is ENABLED the engine
 * tracks the temperature of each TIER_CHUNK bytes of file data, moves chunks
 * untouched for coolingThresholdDays "days" to an object store, and brings
 * them back following the retrievalPolicy. It plugs into the volume store
 * through struct vol_tier_ops (vol.h), so every protocol front end gets it.
 *
 * Units: only whole chunks of regular files are tiered (chunk i covers
 * [i*TIER_CHUNK, (i+1)*TIER_CHUNK) and lies below the file size); the
 * partial last chunk, files smaller than a chunk and all metadata stay hot.
 * A day lasts cfg.day_seconds of cfg.now(); a chunk's temperature is the day
 * number of its last read or write (kept in memory, persisted at every pass;
 * a chunk never seen takes the file's mtime day).
 *
 * Durability (the tier map): per volume an SQLite database (WAL,
 * synchronous=FULL) in <state_dir> (on the shelf, outside the export root),
 * with tables files(fid, ino), chunks(fid, idx, key, len, sum) (a row exists
 * only for a chunk whose object was uploaded and verified) and
 * pending(key) (objects that may exist but are not referenced: an upload
 * in progress, or an object to delete). Moving a chunk out: pending row ->
 * put -> head (size check) -> one transaction {chunk row, drop pending} ->
 * punch the hole. Bringing it back: get -> pwrite -> fdatasync -> one
 * transaction {drop chunk row, pending row} -> delete object -> drop pending.
 * At start and after every pass the objects named by pending rows are
 * deleted. kill -9 at any point therefore leaves every byte in the file or
 * in a recorded object, and no unrecorded object once recovery ran.
 *
 * Snapshots (tier_snap.c): table snapchunks(snap, uid, fid, idx, key, len,
 * sum) holds each snapshot's copy of the chunk rows; an object any of them
 * names is never deleted.
 *
 * Files are named by a file id kept in the xattr "user.aquifer.fid" (16 hex
 * digits, set at the first pass that sees the file), so hard links share it
 * and rename keeps it; the database maps it to the inode for the data path.
 *
 * Demand first (tier_cache.c): a sequential read of cold data goes through
 * a chunk cache and queues the next TIER_READAHEAD chunks for prefetch
 * workers (parallel ranged GETs, at most TIER_PF_MAX at once). A client
 * READ that misses the cache GETs its chunk at once, never behind queued
 * prefetch; one that finds its chunk being fetched (by read-ahead or
 * another READ) waits for that GET instead of a second one. The queue has
 * two lanes: the next chunks of a client's stream (NEAR) go before those
 * the store's cross-file read-ahead (vol_tier_ops.read_ahead) asked for
 * (FAR), and a FAR key a client stream asks for moves to NEAR. While
 * client GETs are at the store, FAR GETs (queued or read_ahead's own) start
 * only while fewer than TIER_PF_FAR_SHARE run, so a film's first frame does
 * not share the store with the prefetch of the frames after it.
 *
 * An event loop's READ (vol_read_nowait) of a cold range the chunk cache
 * holds whole is copied from it without a wait (vol_tier_ops.read_cached);
 * one that would GET, wait for a GET or rehydrate is left to a worker.
 *
 * The chunk cache gives up the ready chunk used longest ago, and a chunk a
 * client READ took whole (copied or handed over) counts as used longest
 * ago: a stream reads each chunk once, so the chunks prefetched and not
 * read yet (the frames due next) stay, although they were fetched before
 * the chunks just read.
 *
 * Errors: negative errno. Cold reads that cannot finish within
 * TIER_COLD_DEADLINE_MS (store down or slow) fail with -ETIMEDOUT, which the
 * NFS layer answers as NFS3ERR_JUKEBOX. Thread-safe.
 */
#ifndef AQ_AGENT_TIER_H
#define AQ_AGENT_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/obj/obj.h"
#include "agent/vol/vol.h"

#define TIER_CHUNK (1024u * 1024u)
#define TIER_COLD_DEADLINE_MS 3000
#define TIER_READAHEAD 32           /* chunks prefetched ahead of a sequential stream */
#define TIER_CACHE_CHUNKS 64        /* in-memory chunk cache (64 MiB) */

enum tier_action { TIER_OFF = 0, TIER_ENABLED = 1, TIER_PAUSED = 2 };
enum tier_retrieval { TIER_RET_DEFAULT = 0, TIER_RET_ON_READ = 1, TIER_RET_NEVER = 2 };

struct tier_vol_cfg {
	uint64_t fsid;
	char root[4096];            /* the export root (the volume's folder) */
	char state_dir[4096];       /* holds tier.db; outside the export root */
	enum tier_action action;
	int cooling_days;
	bool bypass;                /* hotTierBypassModeEnabled */
	enum tier_retrieval retrieval;
};

struct tier_cfg {
	char location[64];          /* object keys start "<location>/<fsid>/" */
	unsigned day_seconds;       /* 0 = 86400 */
	/* Clock in seconds (tests pass a fake one); NULL = CLOCK_REALTIME. */
	double (*now)(void *arg);
	void *now_arg;
};

struct tier_stats {
	uint64_t cold_bytes;
	uint64_t cold_read_bytes, cold_write_bytes;
	char state[32];             /* "", "ACTIVE", "PAUSED", "STORE_UNAVAILABLE" */
	char details[512];
};

struct tier;

int tier_new(const struct tier_cfg *cfg, struct tier **out);
/* Stops the thread, flushes temperatures, closes everything. NULL is fine. */
void tier_free(struct tier *t);
/* The vol hooks; install with vol_store_set_tier(store, tier_ops(), t). */
const struct vol_tier_ops *tier_ops(void);
/* Replace the cold store (NULL cfg: keep none). Takes effect at once. */
int tier_set_store(struct tier *t, const struct obj_cfg *cfg);
/* Bytes of all tiered volumes that live only in the cold store. */
uint64_t tier_cold_total(struct tier *t);
/* Replace the set of tiered volumes (action TIER_OFF entries are ignored).
 * Volumes that stay keep their state; new ones open their database and
 * run recovery. A volume whose database cannot be opened is left out (its
 * rcs[i] < 0 when rcs is given; the caller must not serve it, its cold
 * data would read as holes); the first such error is returned. */
int tier_set_volumes(struct tier *t, const struct tier_vol_cfg *v, size_t n, int *rcs);
/* A volume was deleted: remove every object under its prefix and its
 * database folder. */
int tier_destroy_volume(struct tier *t, uint64_t fsid, const char *state_dir);
/* Background thread: one pass shortly after start, then once per day. */
int tier_start(struct tier *t);
/* One tiering pass over every volume, now (tests; the thread calls it). */
int tier_pass(struct tier *t);
/* Let queued background work (bypass uploads, deferred deletes) finish. */
void tier_drain(struct tier *t);
/* No chunk GET of the cache in flight (a client READ's or a prefetch's)
 * and no prefetch queued that may start: every fetched chunk is in the
 * cache by then (tests: a store's GET returns before its chunk is). */
bool tier_prefetch_idle(struct tier *t);
int tier_stats(struct tier *t, uint64_t fsid, struct tier_stats *out);
/* Node-wide counters of the cold read path, since tier_new (the agent's
 * aquifer_agent_tier_* metrics). read_cached_declined: cold ranges
 * (vol_tier_ops.read_cached, every chunk cold and to be streamed) that the
 * chunk cache did not hold whole, so the READ went to a worker's vol_read;
 * prefetch_evicted_unread: chunks a prefetch fetched that the cache gave up
 * for another before any read copied from them. t NULL: zeros. */
struct tier_counters {
	uint64_t read_cached_declined, prefetch_evicted_unread;
};
void tier_counters(struct tier *t, struct tier_counters *out);
/* Consistency scan of one volume (fsid) or all (fsid 0): a JSON text
 * {"volumes":[{"fsid","objects","records","pending","orphans":[keys],
 * "missing":[keys]}]} in *json (malloc'd). */
int tier_scan(struct tier *t, uint64_t fsid, char **json);

/* Snapshots of a tiered volume (issue 20; tier_snap.c). Making one:
 * freeze (no chunk moves in or out until thaw; 1 when fsid is not tiered:
 * nothing to do), record its copy of the chunk rows under its id and uid,
 * make the snapshot, thaw. forget: the snapshot went, its rows go and the
 * objects nothing else names are deleted; sweep: forget every snapshot
 * (id and uid) not in keep (rows a crash left). An object is deleted only when neither
 * the live file nor a snapshot names it, and the scan counts both as
 * records. read: vol_tier_ops.snap_read. fill: the copy of snapshot snap
 * at name in dirfd (a clone being made) gets back every chunk the snapshot
 * recorded cold, from the store, synced: the clone holds all its bytes and
 * depends on nothing of the source's tier. When fsid is not tiered on this
 * node, a file that was tiered (it has a file id) and has holes fails it
 * with -EREMOTE: its cold chunks may be in a tier map this node lacks. */
int tier_snap_freeze(struct tier *t, uint64_t fsid);
void tier_snap_thaw(struct tier *t, uint64_t fsid);
int tier_snap_record(struct tier *t, uint64_t fsid, const char *snap, const char *uid);
int tier_snap_forget(struct tier *t, uint64_t fsid, const char *snap, const char *uid);
int tier_snap_sweep(struct tier *t, uint64_t fsid, const struct api_intent_snap *keep, size_t n);
int tier_snap_fill(struct tier *t, uint64_t fsid, const char *snap, int dirfd, const char *name);
/* A revert of fsid is about to replace its tree with a filled copy (the
 * caller holds the freeze): in one transaction the live chunk rows go (their
 * objects become pending deletes unless a snapshot names them), with the
 * heat and file rows, then everything known in memory of the old files. A
 * crash after it and before the exchange leaves the old tree without its
 * cold chunks, which the revert, applied again at the next intent, replaces. */
int tier_snap_revert(struct tier *t, uint64_t fsid);
int tier_snap_read(struct tier *t, uint64_t fsid, const char *snap, int fd, const struct stat *st, uint64_t off,
		   void *buf, size_t len, size_t *got);

#endif
