/* vol_lock: the volume store's byte-range lock and share-reservation table,
 * protocol-neutral, so that SMB now and NFSv4.1 / NLM later see each
 * other's locks on the same file.
 *
 * Files are named by their identity in the store (struct vol_lock_key: the
 * export's fsid and the inode the store's file handles resolve to), which
 * hard links share and renames keep. Every entry belongs to an owner
 * (struct vol_lock_owner: protocol, client, owner id: opaque to the table,
 * compared whole); an owner is released all at once when what it stands for
 * goes away (vol_lock_release: an SMB open, an NFSv4 lock-owner or open-owner,
 * an NLM host's svid) or all the owners of one client (vol_lock_release_client:
 * an SMB connection, an NFSv4 client's lease, an NLM host).
 *
 * Ranges: start and len, 64-bit. len VOL_LOCK_EOF (all ones, NFSv4's "to the
 * end"; NLM's len 0 maps to it) covers [start, 2^64): "to end of file" for
 * every file size. Otherwise start + len must not pass 2^64 (-EINVAL).
 * len 0 (SMB only) is a point that overlaps only a range strictly around it
 * (start < p < end), and no other point; two ranges with the same start and
 * the same non-zero length always overlap. These are Windows' rules (Samba's
 * brlock.c follows them).
 *
 * Two flavours of lock, per request (VOL_LOCK_F_POSIX):
 * - Windows (SMB, mandatory): every lock is a separate entry; the same owner
 *   may stack a shared lock over its own exclusive one, nothing else
 *   overlapping an exclusive lock is granted, even to its owner; an unlock
 *   names exactly one held entry (same owner, start, len), else -ENOENT.
 *   vol_lock_test refuses I/O across them (read: another owner's exclusive
 *   lock; write: another owner's exclusive lock, or anyone's shared lock).
 * - POSIX (NFSv4, NLM, advisory): an owner holds at most one type per byte:
 *   a lock over its own range replaces the type there (upgrade/downgrade),
 *   adjacent equal ranges merge, an unlock removes whatever the owner holds
 *   in the range (splitting entries; a range not held is fine: 0). POSIX
 *   locks never refuse I/O (vol_lock_test ignores them).
 * Across owners, whatever the flavour, overlapping locks conflict unless both
 * are shared.
 *
 * Share reservations (vol_lock_share): access and deny bits (VOL_SHARE_*),
 * one reservation per owner and file (a new one replaces the owner's, as
 * NFSv4 OPEN_UPGRADE/OPEN_DOWNGRADE do). A reservation conflicts with
 * another owner's when its access meets the other's deny or its deny meets
 * the other's access. SMB maps DesiredAccess to access and the complement of
 * ShareAccess to deny; NFSv4 share_access and share_deny map as they are. A
 * reservation with access 0 (an SMB open of attributes only) is neither
 * checked nor kept, as Windows does.
 *
 * Waiters (blocking locks: SMB2 LOCK without FAIL_IMMEDIATELY now, NLM's
 * blocking LOCK later): a protocol that must wait for a lock registers a
 * struct vol_lock_waiter on the file (vol_lock_wait). Every call that takes
 * a lock off that file (vol_lock_unlock, vol_lock_release,
 * vol_lock_release_client) then calls w->wake(w), with the table's mutex
 * held, on whatever thread released: wake must not block and must not call
 * the table (the SMB server sets a flag and writes its loop's eventfd).
 * The protocol then retries its vol_lock_lock on its own thread, and stays
 * registered until it is granted or gives up (vol_lock_unwait, after which
 * wake is never called again on w). A waiter is the caller's memory. The
 * waiters are capped per node (VOL_LOCK_WAIT_MAX): past it, -ENOLCK.
 *
 * Bounds: locks plus reservations are capped per volume (fsid) and per node
 * (the table); past a cap a request is refused with -ENOLCK and nothing
 * changes. Errors: -EAGAIN (a lock conflicts), -EBUSY (a share conflicts),
 * -ENOENT (a Windows unlock of a range not held), -EINVAL (bad range),
 * -ENOLCK (full), -ENOMEM. Every call is atomic and thread-safe (one mutex).
 */
#ifndef AQ_AGENT_VOL_LOCK_H
#define AQ_AGENT_VOL_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VOL_LOCK_EOF UINT64_MAX
#define VOL_LOCK_NODE_MAX (1u << 20)   /* default entries per node */
#define VOL_LOCK_VOL_MAX (1u << 16)    /* default entries per volume */
#define VOL_LOCK_WAIT_MAX 4096u        /* waiters per node */

/* Who holds an entry; compared whole. */
enum vol_lock_proto { VOL_LOCK_SMB = 1, VOL_LOCK_NFS4 = 2, VOL_LOCK_NLM = 3 };
struct vol_lock_owner {
	uint32_t proto;  /* enum vol_lock_proto */
	uint64_t client; /* SMB: the connection; NFSv4: the clientid; NLM: the host */
	uint64_t id;     /* SMB: the open; NFSv4: the state owner; NLM: the svid */
};

struct vol_lock_key {
	uint64_t fsid;   /* the export: what the per-volume cap counts */
	uint64_t dev, ino;
};

enum vol_lock_flags {
	VOL_LOCK_F_EXCL = 1 << 0,  /* exclusive (write) lock; else shared (read) */
	VOL_LOCK_F_POSIX = 1 << 1, /* POSIX flavour (above); else Windows */
};

/* A held lock, as a conflict names it (NFSv4 LOCK4denied, NLM holder). */
struct vol_lock_desc {
	struct vol_lock_owner owner;
	uint64_t start, len;
	unsigned flags;
};

enum { VOL_SHARE_READ = 1, VOL_SHARE_WRITE = 2, VOL_SHARE_DELETE = 4, VOL_SHARE_ALL = 7 };

struct vol_lock_tab;

/* A table with these caps (0: the defaults above). */
int vol_lock_new(size_t per_vol, size_t per_node, struct vol_lock_tab **out);
void vol_lock_free(struct vol_lock_tab *t);

/* Take [start, start+len) of file k for o; on -EAGAIN, *conflict (when not
 * NULL) is one lock in the way. */
int vol_lock_lock(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		  uint64_t start, uint64_t len, unsigned flags, struct vol_lock_desc *conflict);
/* Would vol_lock_lock(k, o, start, len, flags) conflict? 0, or -EAGAIN with
 * *conflict (when not NULL) one lock in the way; -EINVAL for a bad range.
 * Takes nothing (NFSv4 LOCKT, NLM TEST). */
int vol_lock_probe(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		   uint64_t start, uint64_t len, unsigned flags, struct vol_lock_desc *conflict);
/* How many locks (not reservations) o holds on k. */
size_t vol_lock_held(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o);
/* Release what o holds there (flags: VOL_LOCK_F_POSIX or 0). */
int vol_lock_unlock(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		    uint64_t start, uint64_t len, unsigned flags);
/* May o read (write false) or write [start, start+len) of k against the
 * Windows locks: 0 or -EAGAIN. len 0 never conflicts. */
int vol_lock_test(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		  uint64_t start, uint64_t len, bool write);

/* Set o's reservation on k to access/deny (VOL_SHARE_* bits). */
int vol_lock_share(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		   unsigned access, unsigned deny);

/* Whether an owner not of (proto, client) holds a reservation on k with one
 * of the access bits (an NFSv4.1 read delegation is given only when nobody
 * else has the file open for writing). */
bool vol_lock_share_held(struct vol_lock_tab *t, const struct vol_lock_key *k, uint32_t proto, uint64_t client,
			 unsigned access);

/* Drop every lock and reservation of o / of every owner of (proto, client). */
void vol_lock_release(struct vol_lock_tab *t, const struct vol_lock_owner *o);
void vol_lock_release_client(struct vol_lock_tab *t, uint32_t proto, uint64_t client);
/* Drop every entry of every owner of proto (a front end going away). */
void vol_lock_release_client_proto(struct vol_lock_tab *t, uint32_t proto);
/* Drop every entry on the files of volume fsid (the volume was detached:
 * vol_store_set without it). Waiters there are woken. */
void vol_lock_release_fsid(struct vol_lock_tab *t, uint64_t fsid);

/* A registered wait for locks on key to be released (above). */
struct vol_lock_waiter {
	struct vol_lock_key key;
	void (*wake)(struct vol_lock_waiter *w);
	void *arg;                            /* the caller's */
	struct vol_lock_waiter *next_, *prev_; /* the table's */
	bool linked_;
};

/* Register w (its key, wake and arg set): 0, or -ENOLCK past the cap. */
int vol_lock_wait(struct vol_lock_tab *t, struct vol_lock_waiter *w);
/* Unregister w (a no-op when it is not registered). */
void vol_lock_unwait(struct vol_lock_tab *t, struct vol_lock_waiter *w);
/* Waiters registered on the node. */
size_t vol_lock_waiters(struct vol_lock_tab *t);

/* Entries held: on k's volume (k->fsid) when k is not NULL, else on the node. */
size_t vol_lock_count(struct vol_lock_tab *t, const struct vol_lock_key *k);

#endif
