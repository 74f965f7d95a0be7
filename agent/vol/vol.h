/* vol: the protocol-neutral volume store of the data path.
 *
 * Every protocol front end (NFSv3 now; SMB and NFSv4.1 later) reaches the
 * shelf only through these functions, so capacity, QoS, tiering and counters
 * live in one place. Its owner (the agent, or a test) creates it, hands it
 * to each front end, and frees it after them; front ends never own it. The
 * store holds an immutable, refcounted set of exports
 * that vol_store_set() replaces atomically while requests run.
 *
 * File handles: opaque, at most VOL_FH_MAX bytes:
 *   [0] version (2) [1] n = kernel handle bytes [2..5] kernel handle type
 *   [6..13] export fsid [14..14+n) kernel handle (name_to_handle_at)
 *   [14+n..30+n) HMAC-SHA256(export key, bytes 0..14+n) truncated to 16 bytes,
 * where the export key is derived from the location key and the fsid
 * (HKDF-Expand, vol_fh_encode). Version 1 handles (MACed with the location
 * key itself, before per-export keys) are still resolved, never minted. The
 * kernel handle is resolved with open_by_handle_at() against the export's
 * root, so a handle stays valid on every node that mounts the same shelf
 * directory (same key on every node of a location). A handle whose MAC fails
 * is VOL_EBADHANDLE; one whose export is gone or whose object was deleted is
 * -ESTALE. Handles are only minted for objects reached from the export root
 * by single-component lookups (O_NOFOLLOW, ".." at the root stays at the
 * root, names with '/' are refused), and a resolved object must carry its
 * export's containment mark (the extended attribute trusted.aquifer.vol =
 * fsid, set on everything the store creates, on what a lookup finds inside
 * the volume, and on a volume made before marks when it is first attached),
 * else -ESTALE: even a MAC-valid handle forged with the location key never
 * names an object outside its export. A file system without extended
 * attributes has no marks; its exports must be file system roots; and an
 * export that is its file system's or btrfs subvolume's root needs none
 * (the device check alone keeps handles inside it).
 *
 * Snapshots (issue 20): with cfg.snapdir set, ".snapshot" in the export
 * root is that folder, read-only (every change: -EROFS), reached by LOOKUP
 * only (READDIR of the root does not list it); its objects have version 3
 * handles, which resolve only inside this export's own snapshots
 * (vol_snap.c). A snapshot folder that goes, or cfg.snapdir emptied, makes
 * them stale. With cfg.snapdir_hidden the name ".snapshot" stays reserved
 * but finds nothing (-ENOENT); vol_snap_root still reaches the folder (SMB
 * previous versions, which name snapshots by time, not by that path).
 *
 * Credentials: vol_authorize() applies the export rules (clients, access,
 * squash, the protocols a rule is for) to the caller's address, protocol
 * and AUTH_SYS identity. Operations taking a struct vol_cred run with the
 * thread's fsuid/fsgid/groups switched to it (per-thread setfsuid/setfsgid
 * and the raw setgroups syscall), so the kernel checks permissions and new
 * objects get the caller's owner.
 *
 * Capacity: used bytes = sum of st_size of regular files (a hard-linked file
 * counts size/nlink at the scan) + the bytes of every object's EA blob
 * (vol_ea_set, vol_sd_set) + VOL_NAME_COST (4 KiB) per name below the
 * root: every directory, symlink, special file and link costs what the
 * smallest block of metadata would, so a volume cannot fill the shared shelf
 * with inodes and directory blocks. Scanned when an export id first appears,
 * then kept up to date by write, truncate, create, link, remove and rename.
 * A write, truncate or new name that would take used past capacity fails
 * with -EDQUOT. FSSTAT's file counts are capacity and free space in names.
 *
 * Locks: one table per store (vol_store_locks, vol_lock.h) holds the
 * byte-range locks and share reservations of every front end, keyed by
 * vol_lock_key_of, so SMB's locks and share modes and NFSv4's and NLM's
 * meet on the same file. vol_store_set releases every entry on the files of
 * a volume it drops (detached from this node).
 *
 * Change watches (vol_watch.h): every namespace and write operation below
 * reports what it changed to the watches of its volume (SMB2 CHANGE_NOTIFY
 * uses them), so a change over any protocol reaches a watcher of any other.
 *
 * Errors: negative errno (-ENOENT, -EEXIST, -ENOTDIR, -EISDIR, -ENOTEMPTY,
 * -EACCES, -EPERM, -EROFS, -EDQUOT, -ENAMETOOLONG, -EXDEV, -ESTALE, -EINVAL,
 * -ENOTSUP, -EIO, ...) or VOL_EBADHANDLE. Thread-safe throughout.
 */
#ifndef AQ_AGENT_VOL_H
#define AQ_AGENT_VOL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "agent/vol/vol_lock.h"
#include "agent/vol/vol_qos.h"
#include "api/api_intent.h"

#define VOL_FH_MAX 64
#define VOL_IO_MAX (1u << 20)   /* most bytes one READ or WRITE moves (rtmax/wtmax) */
#define VOL_QOS_IO_MAX (8u << 20) /* most bytes one request of any front end moves (SMB's large MTU) */
#define VOL_NAME_COST 4096u     /* capacity every name (file, directory, link...) uses */
#define VOL_FILE_MAX (128ull << 40) /* largest file (GCNV's 128 TiB): past it, -EFBIG */
#define VOL_KEY_LEN 32
/* the contract's limits (api_intent.h): what aquiferd accepts, the store holds */
#define VOL_MAX_RULES API_INTENT_MAX_RULES
#define VOL_MAX_NETS API_INTENT_MAX_CLIENTS
#define VOL_NAME_MAX 255
#define VOL_NOPS 32            /* op slots for counters (NFS proc numbers) */
#define VOL_LAT_BUCKETS 24     /* bucket i: latency < 2^i microseconds */

enum { VOL_EBADHANDLE = -1101, VOL_ECOLD = -1102 };

/* Containment marks (extended attributes, 8 bytes: the fsid big-endian):
 * every object of a volume's live tree carries VOL_MARK, every object of a
 * snapshot made by copying (agent/snap/snap.h) VOL_SNAP_MARK instead. */
#define VOL_MARK "trusted.aquifer.vol"
#define VOL_SNAP_MARK "trusted.aquifer.snap"
/* ... and, on its regular files, the snapshot's id (a btrfs snapshot's files
 * are told by their st_dev instead: vol_snap.c). */
#define VOL_SNAP_ID "trusted.aquifer.snapid"

enum vol_access { VOL_ACCESS_NONE = 0, VOL_ACCESS_RO = 1, VOL_ACCESS_RW = 2 };
enum vol_squash { VOL_SQUASH_NONE = 0, VOL_SQUASH_ROOT = 1, VOL_SQUASH_ALL = 2 };
/* The protocol a front end serves, for the rules that name theirs. */
enum vol_proto { VOL_PROTO_NFSV3 = API_INTENT_NFSV3, VOL_PROTO_NFSV4 = API_INTENT_NFSV4 };

struct vol_rule {
	char clients[API_INTENT_CLIENTS_LEN + 1]; /* "10.0.0.1,192.168.0.0/16"; "0.0.0.0/0" = all */
	enum vol_access access;
	enum vol_squash squash;
	uint32_t anon_uid, anon_gid;
	unsigned not_for;         /* VOL_PROTO_* bits the rule does not apply to (0: every protocol) */
};

struct vol_export_cfg {
	char id[128];             /* stable id (volume resource name) */
	uint64_t fsid;            /* 64-bit, unique per export */
	char path[256];           /* export path: "/<shareName>" */
	char root[4096];          /* directory on the shelf */
	uint64_t capacity;        /* bytes */
	size_t nrules;            /* first matching rule wins; none = no access */
	struct vol_rule rules[VOL_MAX_RULES];
	struct qos_limits qos;    /* all zero: unlimited */
	/* snapshots (agent/snap/snap.h): the folder /.snapshot serves at the
	 * export root ("": none, .snapshot does not exist), and the tree's
	 * generation: when it changes (a revert replaced the tree) used bytes
	 * are counted again. */
	char snapdir[4096];
	bool snapdir_hidden;      /* snapdir set but ".snapshot" not reachable by name:
				   * only vol_snap_root reaches it (SMB previous versions) */
	uint64_t tree_seq;
	unsigned protocols;       /* API_INTENT_NFSV3/NFSV4/SMB bits serving it; 0: NFSv3 (as before protocols) */
	struct api_intent_read_ahead read_ahead; /* readAhead (agent/vol/vol_ra.h) */
	/* lock holders' records and grace (agent/vol/vol_grace.h): a folder on
	 * the shelf outside the export root ("": none kept, never in grace) */
	char lockdir[4096];
};

struct vol_fh {
	uint32_t len;
	uint8_t data[VOL_FH_MAX];
};

struct vol_cred {
	uint32_t uid, gid;
	uint32_t ngids;
	uint32_t gids[16];
	unsigned flags;            /* VOL_CRED_* */
};

/* VOL_CRED_DEFER_SYNC: the namespace changes (create, mkdir, symlink, mknod,
 * remove, rmdir, rename, link) and the attribute changes that would be
 * made stable before the return (vol_sync_as, vol_ea_set, the cut of an
 * UNCHECKED create) made with this cred return without their sync (on the
 * export's own file system; elsewhere they sync as without the flag).
 * They are in the page cache (a kill -9 of the agent loses nothing; a
 * crash of the node may lose what the file system had not written),
 * counted in vol_stats.deferred, and stable at the volume's next log sync
 * (any caller's without the flag), and at the next vol_commit of any file
 * of the volume or FILE_SYNC vol_write, which force one when a deferred
 * change is not covered yet (where the file system has no log: a syncfs
 * of it, counted in vol_stats.filesyncs). The SMB front end sets it on a
 * share that is not CONTINUOUSLY_AVAILABLE and for opens without
 * FILE_WRITE_THROUGH (MS-SMB2: changes are stable on FLUSH or
 * write-through; Samba syncs none); NFS never sets it. */
#define VOL_CRED_DEFER_SYNC 0x1u

struct vol_store;
struct vol_export;

struct vol_fent;
struct vol_grant;

/* An open object: O_PATH descriptor plus attributes at open time. When fent
 * is set the descriptor is borrowed from the store's open-file cache. grant
 * (vol_obj_grant) is the holder's open's access checked once: NULL for
 * every object the store yields; copies of the object share it, only its
 * holder's vol_obj_cleanup releases it. */
struct vol_obj {
	struct vol_export *exp;   /* counted reference */
	int fd;
	struct stat st;
	struct vol_fent *fent;
	struct vol_grant *grant;
	bool snap;                /* below /.snapshot: read-only, version 3 handles */
};

struct vol_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	uint32_t mode, uid, gid;
	uint64_t size;
	int atime_how, mtime_how; /* 0 don't change, 1 server time, 2 client */
	struct timespec atime, mtime;
};

struct vol_stats {
	uint64_t ops[VOL_NOPS];
	uint64_t bytes[VOL_NOPS];
	uint64_t errors[VOL_NOPS];
	uint64_t lat_us_hist[VOL_LAT_BUCKETS];
	uint64_t used;            /* file data + VOL_NAME_COST per name */
	uint64_t names;           /* names (their VOL_NAME_COST is part of used) */
	uint64_t capacity;
	uint64_t dirsyncs;        /* directory fsyncs that made namespace changes stable */
	uint64_t dirsyncs_covered; /* ...and those another sync of the change covered: a new object's
				    * own (ext4, XFS), a RENAME's target's or a LINK's file's (one_log) */
	uint64_t filesyncs;       /* file fsyncs COMMITs and vol_sync issued (one covers all COMMITs
				   * of the file that arrived before it started: group commit) */
	uint64_t syncs_clean;     /* COMMITs and vol_syncs answered at once: nothing of the object
				   * changed since a sync that covered it */
	uint64_t logsyncs;        /* log syncs vol_sync started where the file system logs every
				   * change in order (one per caller; one covers every change
				   * finished before it) */
	uint64_t logsyncs_done;   /* ...and those that finished without error */
	uint64_t deferred;        /* changes made with VOL_CRED_DEFER_SYNC that skipped their sync */
	uint64_t age_ms;           /* how long ago the counters began (the export appeared here) */
	uint64_t ra_bytes;        /* read-ahead (vol_ra.h): bytes prefetched, */
	uint64_t ra_hits;         /* READs served by a prefetch, */
	uint64_t ra_wasted;       /* prefetched bytes dropped unread */
	struct qos_stats qos;
};

/* Cold tier hooks (agent/tier/tier_hook.c implements them). fd is the file's content
 * descriptor, st its attributes; calls run as root, outside vol's locks.
 *   read:  fill buf with [off, off+len) when the range touches cold data
 *          (returns 0, *got) or answer 1 when the file holds every byte (the
 *          caller reads it); records the access either way. swap (may be
 *          NULL) points at buf, a malloc()ed block of at least len bytes:
 *          the tier may exchange it for one of its own malloc()ed blocks that
 *          already holds the data (no copy), keeping the caller's block.
 *   read_ahead (may be NULL: read is used): read, for the store's own
 *          read-ahead (vol_ra.h), not a client: its fetches from the cold
 *          store yield to those of client READs (tier.h, "Demand first").
 *   cold:  vol_read_fd's check: 1 when the range touches cold data (then
 *          vol_read_fd answers VOL_ECOLD and the caller uses vol_read_cached,
 *          vol_read or vol_read_swap, whose hooks record the access), 0 otherwise
 *          (and records the access). One READ is one recorded access.
 *   read_cached (may be NULL): vol_read_nowait's and vol_read_cached's
 *          try of a cold range: fill
 *          buf with [off, off+len) and answer 0 (recording the access, as
 *          read would) when every chunk of the range is cold and held whole
 *          in the tier's chunk cache (a prefetch fetched it) and the
 *          retrieval policy would stream it rather than bring it back;
 *          else 1, recording nothing. Never waits for the store, the disk
 *          or a fetch in flight: an event loop may call it.
 *   write_begin/write_end: around a write; begin brings cold chunks of the
 *          range back first and marks the range in flight.
 *   truncate/truncate_end: around cutting the file to size (the range past
 *          the new end counts as written meanwhile).
 *   unlinked: the last link of a regular file is gone.
 *   snap_read: read of a file in snapshot snap (its id, agent/snap/snap.h)
 *          of volume fsid, as read (1: the file holds every byte). */
struct vol_tier_ops {
	int (*read)(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf,
		    size_t len, size_t *got, void **swap);
	int (*read_ahead)(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf,
			  size_t len, size_t *got);
	int (*cold)(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, size_t len);
	int (*read_cached)(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, void *buf, size_t len);
	int (*write_begin)(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len);
	void (*write_end)(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len);
	int (*truncate)(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t size);
	void (*truncate_end)(void *arg, uint64_t fsid, const struct stat *st);
	void (*unlinked)(void *arg, uint64_t fsid, const struct stat *st);
	int (*snap_read)(void *arg, uint64_t fsid, const char *snap, int fd, const struct stat *st, uint64_t off,
			 void *buf, size_t len, size_t *got);
};

/* ---- store and exports ---- */
/* Install the cold tier hooks (NULL: none). Call before serving. */
void vol_store_set_tier(struct vol_store *s, const struct vol_tier_ops *ops, void *arg);
/* Caps of the read-ahead cache (vol_ra.h): unread prefetched bytes per node
 * and per volume (defaults VOL_RA_NODE_BYTES, VOL_RA_VOLUME_BYTES). */
void vol_store_set_read_ahead(struct vol_store *s, uint64_t node_bytes, uint64_t volume_bytes);
/* Whether a stream's prefetch depth ramps up (vol_ra.h: the default, true)
 * or every trigger asks for depthFiles files at once (false). */
void vol_store_set_read_ahead_ramp(struct vol_store *s, bool ramp);
/* The read-ahead worker pool's size, 1..VOL_RA_WORKERS_MAX (default
 * VOL_RA_WORKERS): -EINVAL out of range, -EBUSY once the workers started
 * (with the first prefetch). */
int vol_store_set_read_ahead_workers(struct vol_store *s, unsigned n);
/* A client opens file to read it (SMB CREATE asking FILE_READ_DATA, NFSv4.1
 * OPEN with OPEN4_SHARE_ACCESS_READ, NFSv3 LOOKUP of a regular file) after a
 * lookup or create by name noted its name: on a CROSS_FILE_SEQUENTIAL volume
 * the fetch of its head and of the predicted next files' heads is queued
 * (vol_ra.h, "At open"). Takes a mutex and queues a job: never waits for
 * I/O, so a front end's loop may call it. */
void vol_read_ahead_open(struct vol_obj *file);
/* key: VOL_KEY_LEN bytes, copied. */
int vol_store_new(const uint8_t *key, struct vol_store **out);
void vol_store_free(struct vol_store *s);
/* The store's lock and share-reservation table (vol_lock.h), shared by
 * every front end; it lives as long as the store. */
struct vol_lock_tab *vol_store_locks(struct vol_store *s);
/* The identity the table knows obj's file by (fsid, st_dev, st_ino: what
 * its handles resolve to, on every protocol, across links and renames). */
void vol_lock_key_of(const struct vol_obj *obj, struct vol_lock_key *k);
/* Replace the whole export set atomically, while front ends serve it.
 * Validates every entry first (unique ids, fsids and paths, where "/a/"
 * is "/a"; root is a directory, client lists parse); on error nothing
 * changes. O(n) plus each new export's folder scan: the set carries hash
 * indexes (vol_index.c), so the lookups below are O(1) at any size. Exports whose id
 * stays keep their used bytes and counters; handles of exports no longer
 * present are stale; rule and capacity changes apply to the next request. */
int vol_store_set(struct vol_store *s, const struct vol_export_cfg *cfg, size_t n);
/* Close the open-file cache's descriptors of objects on file system dev
 * (borrowed ones as soon as their requests end): a volume that left the
 * node (after vol_store_set) so its own file system can be unmounted, as the
 * NVMe-oF shelf does (agent/agent_shelf.h). */
void vol_store_forget_dev(struct vol_store *s, dev_t dev);
/* Counted references; release with vol_export_unref. NULL if not found. */
struct vol_export *vol_export_by_path(struct vol_store *s, const char *path, size_t len);
/* The export whose path is the longest prefix of path ending at a '/' or at
 * its end ("/share/a/b" -> "/share"); *rest: where the rest of path starts. */
struct vol_export *vol_export_by_prefix(struct vol_store *s, const char *path, size_t len, size_t *rest);
struct vol_export *vol_export_at(struct vol_store *s, size_t i);
void vol_export_unref(struct vol_export *e);
/* Another counted reference to e (which the caller holds one of); e. */
struct vol_export *vol_export_ref(struct vol_export *e);
const struct vol_export_cfg *vol_export_config(const struct vol_export *e);
uint64_t vol_export_fsid(const struct vol_export *e);
/* Counters and used bytes of export id; -ENOENT if no such export. */
int vol_store_stats(struct vol_store *s, const char *id, struct vol_stats *out);
/* The I/O this store issued to the shelf, over every volume and protocol,
 * since it was made (what the agent reports per shelf, srv_shelfio.h).
 * Reads through vol_read/vol_read_swap and writes are timed around the
 * call (their *_us); ranges handed out by vol_read_fd are counted in
 * read_bytes/read_ops but not timed (the caller's sendfile reads them), so
 * a mean read latency is read_us / read_timed_ops. */
struct vol_shelf_io {
	uint64_t read_bytes, read_ops, read_timed_ops, read_us;
	uint64_t write_bytes, write_ops, write_us;
};
void vol_store_shelf_io(struct vol_store *s, struct vol_shelf_io *out);
/* Record one operation (front ends call this once per request). */
void vol_export_record(struct vol_export *e, unsigned op, uint64_t bytes, uint64_t ns, bool failed);

/* QoS admission (issue 5), called by every front end before it does a
 * request's work: charge the request to the export the handle names (MAC
 * checked) and to client's round-robin turn (any stable key of the client or
 * connection). bytes: READ count / WRITE length (ignored for QOS_META),
 * charged up to VOL_QOS_IO_MAX: a peer's count never costs more than one
 * request can move (a READ's unmoved part comes back with vol_export_settle). The caller sets it->release and it->release_arg first.
 * Returns QOS_ADMIT (go on now; also for bad handles and unknown exports,
 * which the normal path answers) or QOS_PARKED: it owns nothing; it is handed
 * back later through it->release (on the QoS timer's thread), never
 * dropped, and must then be served without calling vol_admit again. */
enum qos_verdict vol_admit(struct vol_store *s, const uint8_t *fh, size_t len, uint64_t client,
			   enum qos_kind kind, uint64_t bytes, struct qos_item *it);
/* vol_admit on an export the caller holds (an SMB tree's volume: a
 * compound's READs and WRITEs name their opens through the chain, so the
 * frame is charged to its trees' volumes, not by handle). bytes is
 * charged whole (the caller capped each request's part with vol_io_cost). */
enum qos_verdict vol_admit_export(struct vol_export *e, uint64_t client, enum qos_kind kind, uint64_t bytes,
				  struct qos_item *it);
/* The bytes vol_admit charges a READ or WRITE of count bytes. */
uint64_t vol_io_cost(uint64_t count);
/* A READ admitted for count moved only moved bytes: give its volume's
 * buckets the difference back (charge what is moved). */
void vol_export_settle(struct vol_export *e, uint64_t count, uint64_t moved);
/* The timer that releases parked requests runs while at least one front end
 * started it: each front end calls start once when it starts serving and
 * stop once when it stops. Stop releases every request parked at that
 * moment (of every front end) unthrottled, so the one stopping gets all of
 * its own back before it returns; the timer then goes on for the others. */
int vol_store_qos_start(struct vol_store *s);
void vol_store_qos_stop(struct vol_store *s);

/* Apply the export rules: VOL_ACCESS_NONE if the export's protocols (when
 * set) do not name proto; else returns the access of the first rule matching the
 * client and applying to proto (VOL_ACCESS_NONE if none) and writes the
 * effective credentials. VOL_SQUASH_ROOT maps uid 0 to anon_uid and, independently, gid 0 to
 * anon_gid as primary and as supplementary group (knfsd's root_squash);
 * VOL_SQUASH_ALL maps everyone to anon_uid:anon_gid with no other groups. */
enum vol_access vol_authorize(const struct vol_export *e, const struct sockaddr *client, enum vol_proto proto,
			      const struct vol_cred *in, struct vol_cred *out);

/* ---- handles and objects ---- */
int vol_root(struct vol_export *e, struct vol_obj *out);
/* Whether obj is its export's root (not a snapshot's). */
bool vol_obj_is_root(const struct vol_obj *obj);
/* Whether obj is a snapshot's root: a folder of the export's snapshot
 * folder (cfg.snapdir), the volume's root as that snapshot kept it
 * (vol_snap.c; one fstatat of its ".."). */
bool vol_obj_is_snap_root(const struct vol_obj *obj);
int vol_fh_open(struct vol_store *s, const uint8_t *fh, size_t len, struct vol_obj *out);
int vol_fh_make(struct vol_store *s, const struct vol_obj *obj, struct vol_fh *out);
/* Re-read attributes into obj->st. */
int vol_refresh(struct vol_obj *obj);
/* Releases the object, its grant too. */
void vol_obj_cleanup(struct vol_obj *obj);
/* An open of a regular file (an SMB open: MS-SMB2 READ and WRITE check the
 * open's GrantedAccess, not the file's permissions again) checks once, as
 * cred, that cred may read (read) and write (write) it, and keeps a content
 * descriptor for what passed: the open-file cache's shared one for a cached
 * object, else one opened now as cred. vol_read/vol_write and the rest of
 * the content calls on obj (or a copy) then switch no credentials, check
 * nothing and reopen nothing for a granted access, even after the file's mode
 * changed (as on Windows and smbd); an access not granted is checked per call
 * as without a grant. 0 if something was granted, -EACCES if nothing passed
 * (obj unchanged), -EINVAL not a regular file, -EEXIST already granted,
 * -EMFILE past VOL_GRANT_FDS_MAX, -ENOMEM. A snapshot object is never granted write. */
int vol_obj_grant(struct vol_obj *obj, const struct vol_cred *cred, bool read, bool write);
/* Grants held now (for tests and leak checks). */
uint64_t vol_grant_count(void);
/* At most this many grants hold a descriptor of their own (an uncached
 * object's); past it vol_obj_grant is -EMFILE and the open is checked per
 * I/O. vol_grant_set_max changes it (0: back to the default; for tests). */
#define VOL_GRANT_FDS_MAX 65536u
void vol_grant_set_max(uint64_t fds);
/* MAC check only (no lookup); for tests. 0 or VOL_EBADHANDLE. */
int vol_fh_verify(struct vol_store *s, const uint8_t *fh, size_t len);
/* The export's snapshot folder (cfg.snapdir, hidden or not) as a read-only
 * snapshot object; -ENOENT when the export has none. */
int vol_snap_root(struct vol_export *e, struct vol_obj *out);

/* The handle of export fsid for a kernel handle (name_to_handle_at's type
 * and bytes), MACed with the export key derived from the location key
 * lockey: what vol_fh_make builds (snap: a snapshot object's, version 3);
 * tests use it to forge handles. */
int vol_fh_encode(const uint8_t *lockey, bool snap, uint64_t fsid, uint32_t ktype, const uint8_t *kbytes,
		  size_t klen, struct vol_fh *out);

/* ---- operations (all run under cred) ----
 * Namespace changes (create, mkdir, symlink, mknod, remove, rmdir, rename,
 * link) return only once they are stable: the directories they changed and
 * a new file or directory are fsync'ed, concurrent changes of one directory
 * sharing the directory's fsync. On ext4 and XFS a new file's or directory's
 * own fsync also makes its entry stable, and its directory is not synced
 * again (vol_stats.dirsyncs_covered); where the file system logs each change
 * whole (XFS, ext4 with a journal and without fast_commit) a RENAME across
 * directories syncs only the target directory and a LINK of a file only the
 * file, the other part
 * counted in dirsyncs_covered. With a cred of VOL_CRED_DEFER_SYNC they
 * return without any of these syncs (see there). */
int vol_lookup(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	       struct vol_obj *out);
/* mask of R_OK|W_OK|X_OK; *allowed receives the subset allowed. */
int vol_access(struct vol_obj *obj, const struct vol_cred *cred, int mask, int *allowed);
int vol_setattr(struct vol_obj *obj, const struct vol_cred *cred, const struct vol_sattr *sa);
/* vol_setattr and vol_write made for a holder of cached opens (vol_lease.h):
 * its own grants are not broken, and by->nowait never waits for another's
 * acknowledgment. by NULL: as vol_setattr / vol_write (break all, wait). */
struct vol_lease_by;
int vol_setattr_by(struct vol_obj *obj, const struct vol_cred *cred, const struct vol_sattr *sa,
		   const struct vol_lease_by *by);
/* DOS attributes (vol_dos.c): the bits SMB clients set (READONLY, HIDDEN,
 * SYSTEM, ARCHIVE, SPARSE_FILE: VOL_DOS_KEPT), kept per object in the
 * store as the extended attribute VOL_DOS_ATTR (8 bytes, big-endian), so
 * every node serving the volume sees them; NFS neither shows nor enforces
 * them. get: 0 and *attrs, -ENODATA when none were ever set (the caller
 * shows its default), -errno. set: needs the caller to own obj or be
 * allowed to write it (-EACCES), -EROFS in a snapshot; bits outside
 * VOL_DOS_KEPT are dropped; a change is reported to the watches as
 * VOL_WATCH_ATTRIBUTES. */
#define VOL_DOS_ATTR "trusted.aquifer.dos"
#define VOL_DOS_KEPT 0x00000227u /* READONLY|HIDDEN|SYSTEM|ARCHIVE|SPARSE_FILE */
int vol_dos_get(const struct vol_obj *obj, uint32_t *attrs);
int vol_dos_set(struct vol_obj *obj, const struct vol_cred *cred, uint32_t attrs);
/* Extended attributes (vol_ea.c): what SMB clients keep with an object
 * (FileFullEaInformation), one opaque blob of at most VOL_EA_MAX bytes per
 * object whose format is the front end's, kept as the extended attribute
 * VOL_EA_ATTR (trusted.*: NFS neither shows nor sets it; snapshots copy it,
 * backups carry it, agent/bkp). Its bytes count against capacity like file
 * data. get: 0 and *len (0: none), -ERANGE when cap is smaller than the
 * blob (cap 0: only the length), -errno. set: replaces the blob (len 0:
 * removes it); needs the caller to own obj or be allowed to write it
 * (-EACCES), -EROFS in a snapshot, -E2BIG past VOL_EA_MAX or past what the
 * shelf's file system holds for one object (ext4 without ea_inode: about
 * one block with the store's own attributes; XFS and btrfs hold it all),
 * -EDQUOT when the growth does not fit, nothing
 * changed on any error; the file or folder is synced before 0 (acknowledged
 * is kept, vol_sync: counted in vol_stats.filesyncs);
 * reported to the watches as VOL_WATCH_EA. */
#define VOL_EA_ATTR "trusted.aquifer.ea"
#define VOL_EA_MAX 65535u
int vol_ea_get(const struct vol_obj *obj, uint8_t *buf, size_t cap, size_t *len);
int vol_ea_set(struct vol_obj *obj, const struct vol_cred *cred, const uint8_t *blob, size_t len);
/* Security descriptors (vol_sd.c): on a volume of security style NTFS,
 * the SMB front end's self-relative descriptor of an object, one opaque
 * blob of at most VOL_SD_MAX bytes, kept as VOL_SD_ATTR like the EA list
 * (trusted.*: NFS neither shows nor sets it; snapshots copy it, backups
 * carry it; its bytes count against capacity). get: as vol_ea_get (0 and
 * *len, 0: none stored). set: replaces it (len 0: removes it); the caller
 * has checked its right to (the descriptor says who may change it, not
 * the POSIX mode); -EROFS in a snapshot, -E2BIG past VOL_SD_MAX or past
 * what the shelf holds, -EDQUOT when the growth does not fit, nothing
 * changed on any error; synced before 0; reported to the watches as
 * VOL_WATCH_SECURITY. */
#define VOL_SD_ATTR "trusted.aquifer.sd"
#define VOL_SD_MAX 65535u /* >= any descriptor agent/smb encodes (SMB_SD_ACE_MAX ACEs: ~10 KB) */
int vol_sd_get(const struct vol_obj *obj, uint8_t *buf, size_t cap, size_t *len);
/* cred: NULL, or the changer's: with VOL_CRED_DEFER_SYNC the sync is left
 * to the next log sync (vol_sync_as), as vol_ea_set's. */
int vol_sd_set(struct vol_obj *obj, const uint8_t *blob, size_t len, const struct vol_cred *cred);
int vol_readlink(struct vol_obj *obj, const struct vol_cred *cred, char *buf, size_t cap, size_t *len);
int vol_read(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
	     size_t *got, bool *eof);
/* vol_read into *buf, a malloc()ed block of count bytes that the cold tier
 * may exchange for its own block holding the data (see vol_tier_ops.read):
 * *buf is always the caller's to free(). */
int vol_read_swap(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void **buf, size_t count,
		  size_t *got, bool *eof);
/* vol_read that never waits for the disk or the cold tier (an event loop's
 * first try): -EAGAIN, with nothing read, when the file is a snapshot's, the
 * range touches cold data the tier's chunk cache does not hold whole
 * (vol_tier_ops.read_cached: a cold range a prefetch already fetched is
 * copied from the cache here, without a GET), or a byte of it is not in the
 * page cache (preadv2 RWF_NOWAIT; where the file system has no RWF_NOWAIT,
 * always); then read it with vol_read on a thread that may wait. Otherwise
 * as vol_read (VOL_IO_MAX a call). obj is not written (its st stays as it
 * was). */
/* Whether some byte of the regular file obj lies in the cold tier (its
 * truncate or overwrite then waits for the tier's work: an event loop
 * hands it to a worker). Asks the tier's cold hook only: no wait. */
bool vol_cold(const struct vol_obj *obj);
int vol_read_nowait(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
		    size_t *got, bool *eof);
/* Zero-copy read: instead of copying, give the caller a descriptor to send
 * *n bytes from at off (sendfile/splice), with *eof. VOL_ECOLD: the range
 * touches data in the cold tier; read it with vol_read into a buffer. *fd must be closed by
 * the caller when *owned. The size is sampled now: if the file shrinks before
 * the caller sends, fewer bytes come out of the descriptor. */
int vol_read_fd(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, size_t count,
		int *fd, size_t *n, bool *eof, bool *owned);
/* After vol_read_fd's VOL_ECOLD: the range copied into buf (count bytes)
 * from the tier's chunk cache when it holds every chunk of it whole
 * (vol_tier_ops.read_cached: a prefetched frame), without a GET or a wait;
 * -EAGAIN, with nothing read, when it does not (or the tier has no such
 * hook, or the file is a snapshot's): read it with vol_read_swap on a
 * thread that may wait. Otherwise as vol_read. Does not ask the tier
 * again whether the range is cold. */
int vol_read_cached(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
		    size_t *got, bool *eof);
/* stable: 0 unstable, 1 data sync, 2 file sync; *committed gets what was done. */
int vol_write(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, const void *data,
	      size_t len, int stable, int *committed);
int vol_write_by(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, const void *data,
		 size_t len, int stable, int *committed, const struct vol_lease_by *by);
/* Make every change the store made to the regular file obj stable (NFSv3
 * and NFSv4.1 COMMIT, SMB FLUSH): fsync, shared by every COMMIT of the file
 * registered before it started (group commit, vol_stats.filesyncs). When
 * nothing changed since a sync that covered the file (the store notes
 * each write, truncation, hole and attribute change; the file's ctime
 * shows a change made around it; a FILE_SYNC write's own fsync covers
 * the file), it returns 0 at once
 * (vol_stats.syncs_clean): the verifier a COMMIT answers is the same. After
 * a restart nothing is known clean: the first COMMIT of each file syncs.
 * Then, when a change of the volume made with VOL_CRED_DEFER_SYNC is not
 * yet covered by a log sync, one log sync (without a log: syncfs) makes
 * them all stable (SMB FLUSH keeps the file's name and attributes too).
 * -EISDIR / -EINVAL for a folder / not a regular file, -errno when the
 * sync fails. */
int vol_commit(struct vol_obj *obj, const struct vol_cred *cred);
/* Make obj's attributes stable (what NFSv3 and NFSv4.1 ask of SETATTR before its
 * reply, as knfsd's commit_metadata), not its data. Where the file system
 * logs every change whole and in order (vol_export.one_log: XFS, ext4 with a
 * journal and without fast_commit), by a log sync of the volume: a change of
 * the export's unnamed log file and its fsync, which commits the log up to
 * it, so every change finished before it started is stable; each caller
 * makes its own at once and the file system's log joins concurrent ones in
 * one commit (vol_stats.logsyncs), and no file's data is written. Elsewhere a
 * regular file or directory is fsync'ed through vol_commit's group commit
 * (nothing when nothing changed), and a symlink, FIFO or socket, which no
 * descriptor can fsync, by syncfs of its file system. No-op in a snapshot.
 * -errno when the sync fails. vol_setattr itself does not sync (SMB's
 * SET_INFO asks for no stability; its FLUSH does). */
int vol_sync(struct vol_obj *obj);
/* What an NFS SETATTR does (NFSv3 and NFSv4.1 alike): vol_setattr_by, then
 * vol_sync, so the reply follows its own durability point. 0 or -errno of
 * the first that failed. */
/* vol_sync, or nothing when cred defers it (VOL_CRED_DEFER_SYNC: counted
 * in vol_stats.deferred, stable at the next log sync or vol_commit). 0 or
 * -errno. */
int vol_sync_as(struct vol_obj *obj, const struct vol_cred *cred);
int vol_setattr_stable(struct vol_obj *obj, const struct vol_cred *cred, const struct vol_sattr *sa,
		       const struct vol_lease_by *by);
/* Sparse files (vol_sparse.c). zero_range: the bytes [off, off+len) read
 * as zeroes; with dealloc their blocks are given back (a hole), without
 * they stay allocated (zeroes where the file system cannot do either in
 * place are written); nothing past the end of the file is
 * zeroed and the size stays. Needs write access (-EACCES), -EROFS in a
 * snapshot, -EISDIR / -EINVAL for a folder / not a regular file, -EINVAL
 * when off+len overflows; len 0 does nothing. Cached data of other
 * holders is broken as for vol_write_by (by as there). alloc_ranges: the
 * allocated extents of [off, off+len) clipped to the file's size, in
 * order and merged, at most cap of them in out (*n; *more when there were
 * more); a range touching cold-tier data is answered allocated whole.
 * Needs read access; -EINVAL on overflow. */
struct vol_range {
	uint64_t off, len;
};
int vol_zero_range(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, uint64_t len, bool dealloc,
		   const struct vol_lease_by *by);
int vol_alloc_ranges(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, uint64_t len,
		     struct vol_range *out, size_t cap, size_t *n, bool *more);
/* excl_verf non-NULL: exclusive create storing the 8-byte verifier in
 * atime/mtime (sa's times are ignored, the rest applied before the
 * verifier is stored); a retry with the same verifier succeeds. guarded: fail with
 * -EEXIST if the name exists. Neither (UNCHECKED): an existing regular
 * file is opened and only sa's size applied to it (a size it already has
 * is left; its mode, owner and times stay, as knfsd's), made stable before
 * the return as vol_setattr_stable's (vol_sync) when it was cut; an
 * existing object of another type is -EEXIST. A new file and its entry are
 * stable as every namespace change. */
int vol_create(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	       bool guarded, const uint8_t *excl_verf, const struct vol_sattr *sa,
	       struct vol_obj *out);
int vol_mkdir(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	      const struct vol_sattr *sa, struct vol_obj *out);
int vol_symlink(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
		const char *target, size_t tlen, const struct vol_sattr *sa, struct vol_obj *out);
/* type: S_IFIFO or S_IFSOCK; device nodes are -EPERM (what knfsd answers a
 * caller without CAP_MKNOD, which no caller of a cloud volume has). */
int vol_mknod(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen, mode_t type,
	      const struct vol_sattr *sa, struct vol_obj *out);
int vol_remove(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen);
int vol_rmdir(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen);
int vol_rename(struct vol_obj *fdir, const char *fname, size_t flen, struct vol_obj *tdir,
	       const char *tname, size_t tlen, const struct vol_cred *cred);
/* vol_remove and vol_rename break H of the cached opens (vol_lease.h) of
 * the file removed, renamed or replaced, and wait for the holders; the _by
 * forms for a holder of cached opens, as vol_setattr_by (by NULL: as
 * vol_remove / vol_rename). */
int vol_remove_by(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
		  const struct vol_lease_by *by);
int vol_rename_by(struct vol_obj *fdir, const char *fname, size_t flen, struct vol_obj *tdir,
		  const char *tname, size_t tlen, const struct vol_cred *cred, const struct vol_lease_by *by);
int vol_link(struct vol_obj *obj, struct vol_obj *dir, const char *name, size_t nlen,
	     const struct vol_cred *cred);
/* vol_link that replaces an existing non-folder name in one atomic step
 * (a temporary name in dir renamed over it: name resolves to the old
 * object or the new at every moment; a failure leaves the old one and no
 * temporary). As vol_remove_by, clients caching a handle to the replaced
 * file close it first; the capacity counts one name, the replaced file's
 * data go with its last link; watches see REMOVED then ADDED. A name that
 * is already the file is left as it is. */
int vol_link_replace(struct vol_obj *obj, struct vol_obj *dir, const char *name, size_t nlen,
		     const struct vol_cred *cred, const struct vol_lease_by *by);

/* Directory iteration from cookie (0 = start). Cookies are the kernel's
 * getdents64 d_off values: ext4 returns hash positions and tmpfs (Linux 6.6+)
 * stable offsets, so a cookie stays valid while entries come and go. For each
 * entry cb(arg, name, nlen, ino, next_cookie) is called; a non-zero return
 * stops before consuming that entry. *eof is set when the end was reached. */
typedef int (*vol_dirent_cb)(void *arg, const char *name, size_t nlen, uint64_t ino,
			     uint64_t cookie);
int vol_readdir(struct vol_obj *dir, const struct vol_cred *cred, uint64_t cookie,
		vol_dirent_cb cb, void *arg, bool *eof);

struct vol_fsstat {
	uint64_t tbytes, fbytes, abytes, tfiles, ffiles, afiles;
};
int vol_fsstat(struct vol_obj *obj, struct vol_fsstat *out);
/* Capacity held for space promised but not yet written (an SMB allocation
 * size past the end of file, MS-FSCC 2.4.4): vol_hold counts bytes in the
 * used bytes of obj's volume when they fit (-EDQUOT: nothing counted), so
 * vol_fsstat and every later write see them taken; vol_unhold gives bytes
 * back. The caller keeps what it holds and gives all of it back. Held
 * bytes are the process's: an agent restart recounts the volume from its
 * files, so nothing held outlives it (and nothing written is lost). */
int vol_hold(struct vol_obj *obj, uint64_t bytes);
void vol_unhold(struct vol_obj *obj, uint64_t bytes);

#endif
