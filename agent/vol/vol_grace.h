/* vol_grace: who held locks on a volume, kept on the shelf next to the
 * volume, and the grace period a volume enters when a node picks it up
 * (agent restart, failover, drain), for every lock protocol at once.
 *
 * Records: each volume whose export sets cfg.lockdir (the agent: the
 * folder <shelf>/.aquifer-locks/<fsid>, outside every export root, on the
 * shelf that every node of the location reaches) keeps there the file
 * "holders": the NLM hosts (name and address) and the NFSv4.1 clients
 * (co_ownerid) that took lock state on the volume. A front end calls
 * vol_grace_record before it grants a holder its first state on the volume;
 * a new holder is written durably (the file rewritten whole: a temporary
 * file, fsync, rename, fsync of the folder) before the call returns, an
 * already recorded one costs a lookup in memory. A holder is forgotten when
 * it lets go of everything on the node (NLM FREE_ALL or SM_NOTIFY, NFSv4.1
 * DESTROY_CLIENTID or lease expiry: vol_grace_forget), never when the agent
 * stops: a stopped or killed agent leaves its holders on the shelf for the
 * next node.
 *
 * Grace: when a node's store first attaches a volume (vol_store_set adding
 * it; not when an attached volume's settings change) and its records name
 * holders, the volume is in grace for vol_store_set_grace seconds (default
 * VOL_GRACE_DEFAULT_S; 0: never). Meanwhile front ends grant only
 * reclaims on it: NLM LOCK with reclaim set, NFSv4.1 OPEN CLAIM_PREVIOUS and
 * LOCK with reclaim from a recorded client that has not sent
 * RECLAIM_COMPLETE (vol_grace_may_reclaim); new locks are refused
 * (NLM4_DENIED_GRACE_PERIOD, NFS4ERR_GRACE), and so are new share
 * reservations that deny reading or writing (NFSv4.1 OPEN with deny, NLM
 * SHARE, an SMB CREATE of an existing file whose ShareAccess leaves out
 * FILE_SHARE_READ or FILE_SHARE_WRITE) and SMB byte-range locks
 * (STATUS_FILE_LOCK_CONFLICT): each could stand in the way of state still
 * to be reclaimed. The grace period ends early
 * once every recorded holder is an NFSv4.1 client that sent
 * RECLAIM_COMPLETE (vol_grace_reclaim_done); NLM has no such message, so a
 * volume with recorded NLM hosts waits the whole period. When it ends, the
 * holders that did not come back (neither reclaimed nor took new state) are
 * dropped from the records. The recorded NLM hosts of a volume entering
 * grace are queued for the lock manager to send them SM_NOTIFY
 * (vol_grace_notify_take), so their lock managers reclaim.
 *
 * Bounds: at most VOL_GRACE_MAX holders a volume (past it vol_grace_record
 * answers -ENOLCK: the front end refuses the lock, as for a full lock
 * table), names at most VOL_GRACE_NAME_MAX bytes; the records file is read
 * line by line with both caps checked before anything is kept, and a line
 * that does not parse is skipped. Thread-safe; errors are negative errno.
 */
#ifndef AQ_AGENT_VOL_GRACE_H
#define AQ_AGENT_VOL_GRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define VOL_GRACE_DEFAULT_S 90u   /* the NFSv4.1 lease: one grace period */
#define VOL_GRACE_MAX 4096u       /* holders recorded per volume */
#define VOL_GRACE_NAME_MAX 1024u  /* NLM caller_name, NFSv4.1 co_ownerid */
#define VOL_GRACE_NOTIFY_MAX 1024u /* NLM hosts queued for SM_NOTIFY per store */
#define VOL_GRACE_FILE "holders"

struct vol_store;
struct vol_export;

enum vol_grace_proto { VOL_GRACE_NLM = 1, VOL_GRACE_NFS4 = 2 };

/* An NLM host to notify (vol_grace_notify_take). */
struct vol_grace_host {
	char name[VOL_GRACE_NAME_MAX + 1];
	struct sockaddr_storage addr;
};

/* The grace period of volumes attached from now on, seconds (0: none). */
void vol_store_set_grace(struct vol_store *s, unsigned grace_s);

/* Record holder (proto, name) on e's volume, durably, before it is granted
 * state there; addr (NLM: the host's address; may be NULL) is kept for
 * SM_NOTIFY. 0 (also when e keeps no records), -EINVAL for an empty or
 * oversized name, -ENOLCK past VOL_GRACE_MAX, -errno when the file cannot
 * be written (nothing changed). A recorded holder counts as having come
 * back (it is kept when grace ends). */
int vol_grace_record(struct vol_export *e, unsigned proto, const void *name, size_t len,
		     const struct sockaddr *addr);
/* Is e's volume in its grace period now? */
bool vol_grace_active(struct vol_export *e);
/* May holder (proto, name) reclaim on e now: in grace, recorded by the
 * node that held the volume before, and (NFSv4.1) no RECLAIM_COMPLETE yet. */
bool vol_grace_may_reclaim(struct vol_export *e, unsigned proto, const void *name, size_t len);
/* Holder (proto, name) finished reclaiming (RECLAIM_COMPLETE), on every
 * volume of s. */
void vol_grace_reclaim_done(struct vol_store *s, unsigned proto, const void *name, size_t len);
/* Holder (proto, name) holds nothing on this node any more: drop its
 * record on every volume of s. */
void vol_grace_forget(struct vol_store *s, unsigned proto, const void *name, size_t len);
/* Take up to max NLM hosts queued for SM_NOTIFY (the volumes that entered
 * grace); returns how many were written to out. */
size_t vol_grace_notify_take(struct vol_store *s, struct vol_grace_host *out, size_t max);

/* One line of the records file: 0 with *proto, the name (at most
 * VOL_GRACE_NAME_MAX bytes into name, *len) and addr (AF_UNSPEC when "-"),
 * or -EINVAL (public for the fuzz harness and the tests). */
int vol_grace_parse_line(const char *line, unsigned *proto, uint8_t *name, size_t *len,
			 struct sockaddr_storage *addr);

#endif
