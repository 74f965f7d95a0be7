/* nlm: the Network Lock Manager v4 (program 100021 version 4) and the Network
 * Status Monitor (program 100024 version 1) for NFSv3 clients, served on the
 * NFS server's one port (nfs_srv_add_prog), over the volume store's
 * protocol-neutral lock table (agent/vol/vol_lock.h, POSIX flavour), so an
 * NLM lock, an NFSv4.1 lock and an SMB byte-range lock on the same range of
 * the same file exclude each other both ways. Specs: the Open Group XNFS
 * (NLM, NSM) and RFC 1813 appendix II (NLM v4).
 *
 * NLM4 procedures served: NULL, TEST, LOCK, CANCEL, UNLOCK, GRANTED_RES,
 * SHARE, UNSHARE, NM_LOCK, FREE_ALL. The asynchronous _MSG/_RES procedures
 * of UDP clients (6 to 14) and GRANTED (5, a client's procedure) answer
 * PROC_UNAVAIL. The file is the NFSv3 handle, resolved and checked as NFSv3
 * does (a handle of a vanished export or a forged one: NLM4_STALE_FH; the
 * export's rules for the caller's address: NLM4_FAILED when they refuse it,
 * NLM4_ROFS for an exclusive lock or a write share on read-only access).
 *
 * Owners: a lock belongs to (caller_name, svid, oh): in the table, client =
 * FNV-1a 64 of caller_name (the host: FREE_ALL and SM_NOTIFY name it) and id
 * = svid | FNV-1a 32 of oh << 32, so TEST can name a holder's svid. Two
 * owners of one host collide only with the same svid and a 32-bit hash
 * collision of different oh (the Linux client's oh is "pid@host" per svid).
 * A range is l_offset and l_len (0: to the end of every file size); a range
 * past 2^64 answers NLM4_FBIG. A full table answers NLM4_DENIED_NOLOCKS.
 *
 * Blocking LOCK (block true) that conflicts answers NLM4_BLOCKED and waits in
 * the table (vol_lock_wait, at most NLM_BLOCKS_MAX per server: past it
 * NLM4_DENIED_NOLOCKS). When a release wakes it, the server's callback thread
 * takes the lock for the client and calls the client's NLM4_GRANTED (its
 * address from the connection the LOCK came on, the port from its portmapper,
 * cfg.pmap_port; each step bounded by cfg.cb_timeout_ms). A client that
 * answers GRANTED keeps the lock; one that answers DENIED (it gave up) has it
 * taken back. A client that cannot be reached keeps the lock granted until
 * it polls again (the Linux client re-sends a blocked LOCK every 30 s: that
 * LOCK answers GRANTED at once) or NLM_GRANT_UNCLAIMED_S pass, after which
 * it is taken back: a callback never holds a worker, and an unreachable
 * client never holds a lock for ever. CANCEL drops a wait (and a granted but
 * unclaimed lock); it answers DENIED when no such wait exists.
 *
 * NSM: NULL, STAT, MON, UNMON, UNMON_ALL, SIMU_CRASH, NOTIFY. NOTIFY (a
 * client's statd after its restart) and NLM FREE_ALL release every lock,
 * share and wait of the host named, unless that host holds locks (is
 * recorded) from another address than the caller's: then they are ignored,
 * so one client cannot drop another's locks by naming it. MON, UNMON, UNMON_ALL and SIMU_CRASH are
 * a local lock manager's procedures: as rpc.statd, they are refused
 * (STAT_FAIL) to callers that are not on the loopback address; MON keeps at
 * most NSM_MON_MAX registrations. Our own state number is odd while up and
 * moves by 2 with SIMU_CRASH.
 *
 * Grace: when cfg.state_dir is set, the hosts that held NLM locks are kept in
 * its file "nlm-hosts" (name and address, at most NLM_HOSTS_MAX); an agent
 * that starts with hosts there answers non-reclaim LOCK, TEST and SHARE with
 * NLM4_DENIED_GRACE_PERIOD for cfg.grace_s seconds (reclaims are granted; a
 * reclaim after the grace period is DENIED_GRACE_PERIOD, as knfsd) and sends
 * SM_NOTIFY to each of them from the callback thread (bounded, best effort),
 * so their lock managers reclaim. Without recorded hosts there is nothing to
 * reclaim and no grace period.
 *
 * Grace per volume (agent/vol/vol_grace.h): LOCK and SHARE also put the host
 * on the records of the file's volume on the shelf before granting
 * (NLM4_DENIED_NOLOCKS when they cannot be written); FREE_ALL and SM_NOTIFY
 * take it off. On a volume in grace on this node (attached with holders
 * recorded: a restart, a failover, a drain) TEST, non-reclaim LOCK and
 * SHARE, CANCEL and UNLOCK answer NLM4_DENIED_GRACE_PERIOD, and the callback
 * thread sends SM_NOTIFY to the volume's recorded hosts. nlm_srv_in_grace
 * says only whether the node's own (state_dir) grace period runs.
 *
 * Thread-safe; errors are negative errno values.
 */
#ifndef AQ_AGENT_NLM_H
#define AQ_AGENT_NLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/nfs/nfs_prog.h"

enum {
	NLM_PROG = 100021,
	NLM_VERS = 4,
	NSM_PROG = 100024,
	NSM_VERS = 1,
	NLM_NAME_MAX = 1024,      /* LM_MAXSTRLEN: caller_name, mon_name */
	NLM_OBJ_MAX = 1024,       /* MAXNETOBJ_SZ: cookie, oh */
	NLM_FH_MAX = 64,          /* an NFSv3 handle (NFS3_FHSIZE) */
	NLM_BLOCKS_MAX = 1024,    /* blocked LOCKs waiting or granted unclaimed, per server */
	NLM_HOSTS_MAX = 1024,     /* hosts recorded for notification after a restart */
	NSM_MON_MAX = 256,        /* MON registrations */
	NLM_GRANT_UNCLAIMED_S = 90, /* a granted block the client never claims goes back */
	NLM_GRACE_DEFAULT_S = 90,     /* the v4.1 lease: one grace period for the node */
};

enum nlm4_stat {
	NLM4_GRANTED = 0, NLM4_DENIED = 1, NLM4_DENIED_NOLOCKS = 2, NLM4_BLOCKED = 3,
	NLM4_DENIED_GRACE_PERIOD = 4, NLM4_DEADLCK = 5, NLM4_ROFS = 6, NLM4_STALE_FH = 7,
	NLM4_FBIG = 8, NLM4_FAILED = 9,
};

enum nlm4_proc {
	NLM4_NULL = 0, NLM4_TEST = 1, NLM4_LOCK = 2, NLM4_CANCEL = 3, NLM4_UNLOCK = 4, NLM4_GRANTED_P = 5,
	NLM4_GRANTED_RES = 15, NLM4_SHARE = 20, NLM4_UNSHARE = 21, NLM4_NM_LOCK = 22, NLM4_FREE_ALL = 23,
};

enum nsm_proc {
	NSM_NULL = 0, NSM_STAT = 1, NSM_MON = 2, NSM_UNMON = 3, NSM_UNMON_ALL = 4, NSM_SIMU_CRASH = 5,
	NSM_NOTIFY = 6,
};

struct nlm_cfg {
	const char *state_dir;    /* NULL: no host records, no grace period */
	unsigned grace_s;         /* after a restart with recorded hosts */
	uint16_t pmap_port;       /* where clients' portmappers answer (0: 111) */
	unsigned cb_timeout_ms;   /* each connect/call of a callback (0: 2000) */
	const char *my_name;      /* mon_name in SM_NOTIFY (NULL: the host name) */
};

/* ---- wire types (public for the fuzz harness) ---- */
struct nlm_obj { uint32_t len; const uint8_t *data; }; /* into the record */

struct nlm4_lock {
	struct nlm_obj caller, fh, oh;
	uint32_t svid;
	uint64_t off, len;
};

/* TEST, LOCK, NM_LOCK, CANCEL, UNLOCK, GRANTED_RES, SHARE, UNSHARE, FREE_ALL */
struct nlm_args {
	struct nlm_obj cookie;
	bool block, excl, reclaim;
	uint32_t state;
	struct nlm4_lock lock;
	uint32_t mode, access;    /* SHARE / UNSHARE */
	uint32_t stat;            /* GRANTED_RES */
};

struct nlm_res {
	uint32_t stat;
	struct nlm_obj cookie;
	bool test;                /* TEST: the holder follows DENIED */
	bool share;               /* SHARE: the sequence follows */
	bool excl;
	uint32_t svid;
	uint64_t off, len;
	const char *oh;           /* the holder's oh (static text) */
};

int nlm_dec_test(struct xdr_cur *c, void *a);    /* nlm4_testargs */
int nlm_dec_lock(struct xdr_cur *c, void *a);    /* nlm4_lockargs */
int nlm_dec_cancel(struct xdr_cur *c, void *a);  /* nlm4_cancargs */
int nlm_dec_unlock(struct xdr_cur *c, void *a);  /* nlm4_unlockargs */
int nlm_dec_res(struct xdr_cur *c, void *a);     /* nlm4_res (GRANTED_RES) */
int nlm_dec_share(struct xdr_cur *c, void *a);   /* nlm4_shareargs */
int nlm_dec_notify(struct xdr_cur *c, void *a);  /* nlm4_notify (FREE_ALL) */

struct nsm_args {
	struct nlm_obj name;      /* mon_name */
	struct nlm_obj my_name;
	uint32_t my_prog, my_vers, my_proc;
	uint8_t priv[16];
	uint32_t state;           /* NOTIFY */
};
int nsm_dec_name(struct xdr_cur *c, void *a);    /* sm_name */
int nsm_dec_mon(struct xdr_cur *c, void *a);     /* mon */
int nsm_dec_unmon(struct xdr_cur *c, void *a);   /* mon_id */
int nsm_dec_my_id(struct xdr_cur *c, void *a);   /* my_id */
int nsm_dec_notify(struct xdr_cur *c, void *a);  /* stat_chge */

extern const struct nfs_prog nlm_prog;
extern const struct nfs_prog nsm_prog;

/* ---- the service ---- */
struct nlm_srv;

/* A lock manager over store (borrowed, must outlive it); starts its callback
 * thread, reads the recorded hosts (a grace period and notifications when
 * there are some). Register it on a server with
 * nfs_srv_add_prog(srv, &nlm_prog, nlm) and nfs_srv_add_prog(srv, &nsm_prog,
 * nlm). */
int nlm_srv_new(const struct nlm_cfg *cfg, struct vol_store *store, struct nlm_srv **out);
/* Stop the thread, release every NLM lock, share and wait; accepts NULL.
 * Free it after the NFS server that serves it. */
void nlm_srv_free(struct nlm_srv *s);
/* Release every lock, share and wait of host caller_name. */
void nlm_srv_release_host(struct nlm_srv *s, const char *name, size_t len);
/* The same, asked by a peer (FREE_ALL, SM_NOTIFY): ignored when the host is
 * recorded (it held locks) with another address than from's. */
void nlm_srv_release_host_from(struct nlm_srv *s, const char *name, size_t len, const struct sockaddr *from);
/* Blocked LOCKs waiting or granted unclaimed; whether the grace period runs. */
size_t nlm_srv_blocks(struct nlm_srv *s);
bool nlm_srv_in_grace(struct nlm_srv *s);

#endif
