/* vol_internal: what the files of the volume store share. Internal to
 * agent/vol*.c; the contract is vol.h.
 *   vol.c     the store, export sets, export rules, counters, QoS admission
 *   vol_fh.c  handles, the open-file cache, credentials, content descriptors
 *   vol_io.c  attributes, capacity, file data
 *   vol_ns.c  names: lookup, create, remove, rename, link, readdir
 *   vol_snap.c /.snapshot: its lookups and its handles' containment
 *   vol_watch.c change notification (vol_watch.h)
 *   vol_ra.c, vol_ra_fetch.c  read-ahead: the name predictor, the prefetch
 */
#ifndef AQ_AGENT_VOL_INTERNAL_H
#define AQ_AGENT_VOL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_grace.h"

#define VOL_MAC_LEN 16
#define VOL_FH_HDR 14
#define VOL_LOCKS 64
#define VOL_SNAP_DEVS 256          /* snapshot roots of one export (API: 255) */

/* Accounting that survives export-set replacement (keyed by export id). */
struct vol_acct {
	atomic_int refs;
	char id[128];
	_Atomic uint64_t used;
	_Atomic uint64_t names;    /* names charged VOL_NAME_COST each (part of used) */
	_Atomic uint64_t ops[VOL_NOPS], bytes[VOL_NOPS], errors[VOL_NOPS];
	_Atomic uint64_t lat[VOL_LAT_BUCKETS];
	/* Size-changing operations on one inode are serialized so growth is
	 * computed exactly; different inodes proceed in parallel. */
	pthread_mutex_t locks[VOL_LOCKS];
	struct vol_pend {
		uint64_t ino;
		uint64_t end;      /* highest end of in-flight writes */
		int count;         /* writes in flight on this inode */
	} pend[VOL_LOCKS];
	struct qos_vol *qos;       /* limits updated in place on every set */
	struct vol_grace *grace;   /* lock holders and grace (vol_grace.c), or NULL: no cfg.lockdir */
	uint64_t born_ns;          /* qos_now() when the counters began (the export appeared) */
	/* Group commit of directory fsyncs (vol_ns.c), one stripe per
	 * directory inode: a sync started after a change covers it. */
	struct vol_dsync {
		pthread_mutex_t mu;
		pthread_cond_t cv;
		uint64_t dev, ino; /* the object this stripe batches */
		uint64_t ticket;   /* changes registered */
		uint64_t done;     /* changes a finished sync covered */
		/* fsync stripes only (vol_sync.c): changes of the object noted
		 * since the stripe took it (vol_dirty; 1 at taking: what came
		 * before is not known), the count a finished sync covered, and the
		 * object's ctime when that sync started (a change made around the
		 * store shows there) */
		uint64_t gen, synced;
		struct timespec ctime;
		bool running;
		int waiters;
	} dsync[VOL_LOCKS];
	/* The same for COMMIT (vol_commit), one stripe per file inode: COMMITs
	 * of one file from any connection share the fsync that starts after
	 * them, and one with nothing new since the last sync makes none. */
	struct vol_dsync fsync[VOL_LOCKS];
	_Atomic uint64_t filesyncs; /* file fsyncs COMMIT issued */
	_Atomic uint64_t syncs_clean; /* COMMITs and vol_syncs answered with nothing to sync */
	_Atomic uint64_t logsyncs, logsyncs_done; /* log syncs started, and finished without error */
	/* changes made with VOL_CRED_DEFER_SYNC without their log sync, and
	 * how many of them a finished log sync covers (vol_sync.c) */
	_Atomic uint64_t deferred, deferred_stable;
	_Atomic uint64_t logstamp; /* the log file's next times (vol_log_force): one value per change */
	_Atomic uint64_t dirsyncs; /* directory fsyncs issued */
	_Atomic uint64_t dirsyncs_covered; /* directory fsyncs a new object's own fsync made needless */
	/* read-ahead (vol_ra_fetch.c): bytes prefetched, READs served by a
	 * prefetch, prefetched bytes dropped unread */
	_Atomic uint64_t ra_bytes, ra_hits, ra_wasted;
	uint64_t tree_seq;         /* cfg.tree_seq used was counted for */
	_Atomic unsigned watchers; /* change watches on the volume (vol_watch.c) */
};

/* HMAC-SHA256 under one key with the key's inner and outer hash states
 * computed once (vol_fh.c): a MAC then costs two SHA-256 finishes from
 * copies of them. Both NULL when that setup failed: the MAC is computed the
 * slow way (HMAC()), with the same result. */
struct evp_md_ctx_st;
struct vol_mackey {
	struct evp_md_ctx_st *in, *out;
};

struct vol_export {
	atomic_int refs;
	struct vol_export_cfg cfg;
	int root_fd;               /* O_RDONLY|O_DIRECTORY: mount_fd for handles */
	dev_t dev;
	ino_t ino;
	size_t nnets[VOL_MAX_RULES];
	struct api_intent_net nets[VOL_MAX_RULES][VOL_MAX_NETS]; /* host order */
	struct vol_acct *acct;
	uint8_t fhkey[VOL_KEY_LEN];  /* this export's handle key (vol_fh_key) */
	struct vol_mackey fhmac;     /* ...its HMAC states (vol_mackey_init) */
	bool marks;                /* objects carry the containment mark (vol_fh.c) */
	/* The root's file system orders metadata in one log (ext4, XFS): the
	 * fsync of a new object also makes its name stable (vol_ns.c). */
	bool ordered_meta;
	/* ...and it is a log of whole changes committed in order (XFS; ext4
	 * with a journal, not without): one fsync of anything a RENAME or LINK
	 * touched makes the whole change stable (vol_ns.c, vol_one_log). */
	bool one_log;
	/* where one_log: an unnamed file of the root's file system
	 * (O_TMPFILE) whose change and fsync commit the log up to it
	 * (vol_sync.c), or -1 */
	int logfd;
	/* /.snapshot (vol_snap.c): cfg.snapdir open, or -1 */
	int snap_fd;
	dev_t snap_dev;
	ino_t snap_ino;
	pthread_mutex_t snap_mu;   /* guards the st_devs of the snapshot roots */
	size_t nsnap_devs;
	dev_t snap_devs[VOL_SNAP_DEVS];
	char snap_names[VOL_SNAP_DEVS][API_INTENT_SNAP_ID_LEN + 1]; /* the id of each */
	struct vol_store *store;   /* not counted: the store outlives its exports' use */
	atomic_int clone_ok;       /* vol_clone.c: 1 clones, -1 does not, -2 unknown (vol_clone_attach) */
};

/* The hash indexes of one export set (vol_index.c): positions in its e[]
 * + 1 (0: a free slot) by fsid, id and path (without trailing slashes),
 * mask + 1 slots each, at most half used. All NULL: the empty set. */
struct vol_index {
	size_t mask;
	uint32_t *fsid, *id, *path;
};

struct vol_set {
	atomic_int refs;
	size_t n;
	struct vol_index ix;       /* built with the set, never changed */
	struct vol_export *e[];
};

#define VOL_INDEX_NONE ((size_t)-1)
/* Index cfg[0..n) (what set->e[] will hold, in that order): 0, -EINVAL
 * when two entries share an id, fsid or path (trailing slashes aside),
 * -ENOMEM; on error ix holds nothing. Free with vol_index_cleanup. */
int vol_index_build(struct vol_index *ix, const struct vol_export_cfg *cfg, size_t n);
void vol_index_cleanup(struct vol_index *ix);
/* Position in set->e[] of the export with that fsid, id, or path (len
 * bytes, no trailing slash but the root's), or VOL_INDEX_NONE. O(1). */
size_t vol_index_fsid(const struct vol_set *set, uint64_t fsid);
size_t vol_index_id(const struct vol_set *set, const char *id);
size_t vol_index_path(const struct vol_set *set, const char *path, size_t len);
/* The export whose path is the longest prefix of path ending at a '/' or at
 * its end, the root "/" a prefix of every path; *rest: that prefix's
 * length. O(slashes in path). */
size_t vol_index_prefix(const struct vol_set *set, const char *path, size_t len, size_t *rest);

/* Open-file cache: direct-mapped by handle. An entry keeps the object's
 * O_PATH descriptor and, once asked for, a content descriptor opened as root
 * (O_RDWR, else O_RDONLY), so a READ or WRITE on a known handle costs no
 * open/close. Objects borrow an entry (refs); an entry is replaced or closed
 * only when nobody borrows it. A deleted object is dropped on REMOVE/RENAME
 * and at its next use (nlink 0). */
#define VOL_FCACHE 1024
#define VOL_FKEY_MAX (VOL_FH_MAX - VOL_MAC_LEN)

struct vol_fent {
	pthread_mutex_t mu;
	int refs;
	bool valid;
	uint32_t klen;
	uint8_t key[VOL_FKEY_MAX];  /* handle bytes 1..14+n: size, type, fsid, kernel handle */
	int fd;                     /* O_PATH */
	int iofd;                   /* content, -1 until needed */
	bool iorw;                  /* iofd is O_RDWR */
	bool snap;                  /* a snapshot object's (version 3 handle) */
};

struct vol_store {
	uint8_t key[VOL_KEY_LEN];
	pthread_mutex_t mu;        /* guards cur */
	struct vol_set *cur;
	struct vol_fent *fc;       /* VOL_FCACHE entries */
	struct qos_sched *qos;
	pthread_mutex_t qos_mu;    /* guards qos_users */
	unsigned qos_users;        /* front ends that started the QoS timer */
	const struct vol_tier_ops *tier;  /* cold tier hooks, or NULL */
	void *tier_arg;
	int procfd;                /* O_PATH /proc/self/fd: marks of O_PATH objects */
	bool xattrat;              /* getxattrat/setxattrat exist (Linux 6.13) */
	struct vol_lock_tab *locks; /* byte-range locks and share reservations (vol_lock.h) */
	struct vol_ra *ra;         /* read-ahead (vol_ra_fetch.c) */
	pthread_mutex_t watch_mu;  /* change watches (vol_watch.c): the list, their queues */
	struct vol_watch *watches;
	unsigned nwatches;
	pthread_mutex_t lease_mu;  /* cached opens (vol_lease.c): the list */
	struct vol_lease *leases;
	unsigned nleases;          /* atomic: read without lease_mu first */
	unsigned grace_s;          /* grace period of volumes attached from now on (vol_grace.h) */
	pthread_mutex_t grace_mu;  /* guards notify */
	struct vol_grace_host *notify; /* NLM hosts to notify (VOL_GRACE_NOTIFY_MAX, on first use) */
	size_t nnotify;
	pthread_cond_t lease_cv;   /* breakers waiting for an acknowledgment (CLOCK_MONOTONIC) */
	unsigned lease_ms;         /* atomic: the break timeout */
	struct vol_shelf_io io;    /* atomic counters (vol_store_shelf_io, vol_io.c) */
};

/* vol_clone.c: whether e's folder clones blocks, decided as vol_store_set
 * attaches it (never on a protocol's loop: the probe writes a block): the
 * answer of `like` (an export already attached on the same file system,
 * st_dev: FICLONERANGE is the file system's), else a probe (also when
 * like's could not be made). */
void vol_clone_attach(struct vol_export *e, const struct vol_export *like);
/* vol_grace.c */
/* The grace state of a volume first attached here, its records read from
 * dir (NULL when dir is empty or memory runs out: no records). */
struct vol_grace *vol_grace_open(struct vol_store *s, const char *dir);
void vol_grace_close(struct vol_grace *g);

/* vol.c */
/* The export with this fsid in the current set (counted), or NULL. */
struct vol_export *vol_find_fsid(struct vol_store *s, uint64_t fsid);
uint64_t vol_get64(const uint8_t *p);

/* vol_fh.c */
/* The handle key of export fsid, derived from the location key (32 bytes). */
void vol_fh_key(const uint8_t *lockey, uint64_t fsid, uint8_t *out);
/* The HMAC states of key (VOL_KEY_LEN bytes); cleanup accepts one whose
 * init failed or never ran (zeroed). */
void vol_mackey_init(struct vol_mackey *k, const uint8_t *key);
void vol_mackey_cleanup(struct vol_mackey *k);
/* The export a MAC-valid handle names (counted), or NULL. */
struct vol_export *vol_fh_export(struct vol_store *s, const uint8_t *fh, size_t len);
/* The containment mark of name in directory fd (never following a symlink),
 * or of the object fd itself when name is NULL: 0, -ENODATA (none),
 * -EOPNOTSUPP (the file system takes no marks), -EINVAL (not a mark), -errno. */
int vol_mark_get(const struct vol_store *s, int fd, const char *name, uint64_t *fsid);
int vol_mark_set(const struct vol_store *s, int fd, const char *name, uint64_t fsid);
/* The 8-byte extended attribute attr of name in fd (of fd when name is
 * NULL) read into / written from v: the syscall's result, errno set. */
long vol_mark_sys(const struct vol_store *s, const char *attr, int fd, const char *name, bool set, uint8_t *v);
/* vol_mark_get of the mark named attr (VOL_MARK, VOL_SNAP_MARK). */
int vol_xmark_get(const struct vol_store *s, const char *attr, int fd, const char *name, uint64_t *fsid);
/* name was found in dir: 0 when it carries dir's export mark (an unmarked
 * object gets it: reached by name from inside, it is the volume's), -EACCES
 * when it belongs to another volume. */
int vol_mark_adopt(struct vol_obj *dir, const char *name);
/* Whether getxattrat/setxattrat exist (else marks go through /proc paths). */
bool vol_mark_probe(void);
/* Adopt fd as an object of e (takes a new reference on e; closes fd on error). */
int vol_obj_adopt(struct vol_export *e, int fd, struct vol_obj *out);
/* Switch this thread's fs identity to c (no-op for root) and back. */
void vol_become(const struct vol_cred *c);
void vol_unbecome(const struct vol_cred *c);
/* Whether c may change an attribute the store keeps for obj in trusted.*
 * (DOS attributes, EAs), which the server then writes as root: c is root,
 * obj's owner, or may write obj (checked as c). 0 or -EACCES. */
int vol_may_set_attr(const struct vol_obj *obj, const struct vol_cred *cred);
/* Open the object's content with flags, as the current fs identity. */
int vol_reopen(const struct vol_obj *obj, int flags);
/* A descriptor for the object's content (see vol_fh.c); *owned: close it. */
int vol_iofd(struct vol_obj *obj, const struct vol_cred *cred, bool write, bool *owned);
/* vol_sync.c: fsync o, batched with every other caller of the same inode on
 * stripes (group commit: a sync covers each caller registered before it
 * started); *count counts the fsyncs issued. 0 or -errno. */
int vol_groupsync(struct vol_obj *o, struct vol_dsync *stripes, _Atomic uint64_t *count);
/* fsync o now, alone (as root). 0 or -errno. */
int vol_fsync_obj(struct vol_obj *o);
/* Make a namespace change stable (vol_ns.c). Where the export has a log
 * (vol_export.logfd: one_log) both are the volume's log sync, which makes
 * stable every change of any object that finished before it started (the
 * file system's log joins concurrent ones in one commit). Elsewhere
 * vol_obj_stable fsyncs the object (fd when >= 0, else its own), and
 * vol_dir_stable fsyncs the directory through its group commit
 * (vol_stats.dirsyncs). 0 or -errno. */
int vol_obj_stable(struct vol_obj *o, int fd);
int vol_dir_stable(struct vol_obj *dir);
/* Whether a change of o (or in the folder o) made with cred leaves its sync
 * for later: cred has VOL_CRED_DEFER_SYNC and o is on the export's own file
 * system (what its log sync, or syncfs of its root, covers). Then the
 * change is counted (vol_stats.deferred) and the caller makes no sync;
 * else false and the caller syncs as before. */
bool vol_defer(struct vol_obj *o, const struct vol_cred *cred);
/* Note that o's data or attributes changed (after the change is made, never
 * before): the next vol_commit / vol_sync of o syncs. Every change of a
 * file the store makes calls it. */
void vol_dirty(struct vol_obj *o);
/* A stable (FILE_SYNC) write's fsync of fd, o's content, made after the
 * write: notes the change as vol_dirty does, and when the fsync succeeds
 * and nothing else of o was noted since, that the file is synced, so the
 * client's COMMIT that follows makes no other fsync. 0 or -errno. */
int vol_dirty_synced(struct vol_obj *o, int fd);
/* The log file of an export rooted at root_fd (vol_export.logfd), or -1
 * where the file system has none to give. */
int vol_log_open(int root_fd);
/* Drop the open-file cache entry of name nm in dir (it is being removed). */
void vol_drop_name(struct vol_obj *dir, const char *nm, struct vol_store *s);
/* Whether nm in the folder dirfd is a temporary name of vol_link_replace
 * (vol_ns.c): exactly VOL_LINK_TMP "<pid>.<n>" (decimal), not a folder,
 * and its file linked under another name too (nlink > 1: removing this
 * name loses no data). A file of a user's named like it with one link is
 * not one. any_pid: also one this process may be using right now (for
 * hiding it from listings); else only another process's, a leftover of a
 * kill between the link and the rename (for sweeping it away). st: nm's
 * attributes when the caller has them, else NULL (read here, only when
 * the name matches). */
#define VOL_LINK_TMP ".aq-link."
bool vol_link_leftover(int dirfd, const char *nm, const struct stat *st, bool any_pid);

/* vol_snap.c: /.snapshot */
/* Open e's cfg.snapdir when set (at build); close it. */
int vol_snap_open(struct vol_export *e);
void vol_snap_close(struct vol_export *e);
/* Whether o (opened from a version 3 handle) lies in e's own snapshots. */
bool vol_snap_contained(struct vol_export *e, const struct vol_obj *o);
/* The id of the snapshot the snapshot object o (content descriptor fd)
 * lies in: 0, or -ENOENT (.snapshot itself, or not known). */
int vol_snap_id(const struct vol_obj *o, int fd, char *id, size_t cap);
/* nm in dir is the export root's ".snapshot" while it is served. */
bool vol_snap_reserved(const struct vol_obj *dir, const char *nm);
/* The lookup of nm in dir when it is .snapshot or dir is a snapshot
 * object: 0 or -errno with out set; 1: an ordinary lookup. */
int vol_snap_lookup(struct vol_obj *dir, const char *nm, struct vol_obj *out);

/* vol_ra_fetch.c, vol_ra_cache.c: read-ahead (vol_ra.h) */
struct vol_ra;
int vol_ra_new(struct vol_store *s, struct vol_ra **out);
/* Join the workers and drop the queued jobs (jobs parked in QoS are freed
 * when QoS hands them back); free also stops. */
void vol_ra_stop(struct vol_ra *ra);
void vol_ra_free(struct vol_ra *ra);
/* A lookup or create in dir found file under nm: remember its name. */
void vol_ra_note(struct vol_obj *dir, const char *nm, const struct vol_obj *file);
/* A READ of n bytes at off of obj (fd: its content, or -1): hits, the
 * next files' prefetch, AGGRESSIVE's window. */
void vol_ra_read(struct vol_obj *obj, int fd, uint64_t off, uint64_t n);
/* ino of e changed or went (write, truncate, remove, rename): forget it. */
void vol_ra_forget(struct vol_export *e, uint64_t ino);
/* A client READ of [off, off + len) of obj goes to the tier now: prefetch
 * gives way (VOL_RA_DEMAND_SHARE), skips what the READ asks for, and a
 * chunk of it that a worker reads now is waited for (joined, not read a
 * second time). Every begin has its end once the read is done. */
void vol_ra_demand_begin(struct vol_obj *obj, uint64_t off, uint64_t len);
void vol_ra_demand_end(struct vol_obj *obj);

/* vol_io.c */
pthread_mutex_t *vol_lock_of(struct vol_obj *obj);
/* Reserve growth bytes of capacity (lock-free, exact): 0 or -EDQUOT. */
int vol_reserve(struct vol_export *e, uint64_t growth);
void vol_adjust(struct vol_export *e, int64_t delta);
/* The bytes of the SMB blobs (vol_ea.c: the EA list, the security
 * descriptor) of name in dirfd, 0 when none. */
uint64_t vol_ea_size_at(int dirfd, const char *name);
/* One opaque blob in the xattr attr (vol_ea.c): get as vol_ea_get; set
 * as vol_ea_set without its checks of the caller's right and of the cap
 * (the caller's): -EBADF, -EROFS in a snapshot, the growth reserved,
 * synced before 0 (vol_sync_as cred: NULL syncs), reported to the watches
 * as watch. */
int vol_xa_get(const struct vol_obj *obj, const char *attr, uint8_t *buf, size_t cap, size_t *len);
int vol_xa_set(struct vol_obj *obj, const char *attr, const uint8_t *blob, size_t len, unsigned watch,
	       const struct vol_cred *cred);
/* A new name: charge VOL_NAME_COST (0 or -EDQUOT); a name gone: give it back. */
int vol_name_charge(struct vol_export *e);
void vol_name_refund(struct vol_export *e);
/* vol_setattr as the current fs identity. */
int vol_setattr_nocred(struct vol_obj *obj, const struct vol_sattr *sa);
struct vol_lease_by;
int vol_setattr_nocred_by(struct vol_obj *obj, const struct vol_sattr *sa, const struct vol_lease_by *by);

#endif
