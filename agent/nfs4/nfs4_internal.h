/* nfs4_internal: what the files of the NFSv4.1 front end share: protocol
 * numbers (RFC 8881 section 18 and its XDR), the COMPOUND context the
 * operations run in, the state (clients, sessions, slots, opens) and the
 * functions one file offers the others. Not part of the contract (nfs4.h).
 *
 *   nfs4_compound.c  the program table, COMPOUND, the operation table
 *   nfs4_state.c     clients, sessions, slots and their reply cache, opens
 *   nfs4_session.c   EXCHANGE_ID ... RECLAIM_COMPLETE, SEQUENCE
 *   nfs4_attr.c      fattr4: GETATTR's encoder, SETATTR's and OPEN's decoder
 *   nfs4_fh.c        file handles, the pseudo root, LOOKUP(P), SECINFO
 *   nfs4_io.c        OPEN, CLOSE, READ, WRITE, COMMIT, stateid checks
 *   nfs4_dir.c       ACCESS, CREATE, REMOVE, RENAME, LINK, READDIR, READLINK
 *   nfs4_lock.c      LOCK, LOCKT, LOCKU over the store's lock table (vol_lock.h)
 *   nfs4_deleg.c     delegations: grant, conflict checks, DELEGRETURN, backchannel set-up
 *   nfs4_recall.c    the backchannel thread: probes, CB_RECALL, CB_GETATTR, revocation, replies
 *   nfs4_cb.c        CB_COMPOUND's encoder and its reply's bounded decoder
 */
#ifndef AQ_AGENT_NFS4_INTERNAL_H
#define AQ_AGENT_NFS4_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/nfs/xdr.h"
#include "agent/nfs4/nfs4.h"
#include "agent/vol/vol.h"
#include "agent/vol/vol_grace.h"
#include "agent/vol/vol_lease.h"
#include "agent/vol/vol_lock.h"

enum nfs4_op {
	OP_ACCESS = 3, OP_CLOSE = 4, OP_COMMIT = 5, OP_CREATE = 6, OP_DELEGPURGE = 7, OP_DELEGRETURN = 8,
	OP_GETATTR = 9, OP_GETFH = 10, OP_LINK = 11, OP_LOCK = 12, OP_LOCKT = 13, OP_LOCKU = 14,
	OP_LOOKUP = 15, OP_LOOKUPP = 16, OP_NVERIFY = 17, OP_OPEN = 18, OP_OPENATTR = 19,
	OP_OPEN_CONFIRM = 20, OP_OPEN_DOWNGRADE = 21, OP_PUTFH = 22, OP_PUTPUBFH = 23, OP_PUTROOTFH = 24,
	OP_READ = 25, OP_READDIR = 26, OP_READLINK = 27, OP_REMOVE = 28, OP_RENAME = 29, OP_RENEW = 30,
	OP_RESTOREFH = 31, OP_SAVEFH = 32, OP_SECINFO = 33, OP_SETATTR = 34, OP_SETCLIENTID = 35,
	OP_SETCLIENTID_CONFIRM = 36, OP_VERIFY = 37, OP_WRITE = 38, OP_RELEASE_LOCKOWNER = 39,
	OP_BACKCHANNEL_CTL = 40, OP_BIND_CONN_TO_SESSION = 41, OP_EXCHANGE_ID = 42, OP_CREATE_SESSION = 43,
	OP_DESTROY_SESSION = 44, OP_FREE_STATEID = 45, OP_GET_DIR_DELEGATION = 46, OP_GETDEVICEINFO = 47,
	OP_GETDEVICELIST = 48, OP_LAYOUTCOMMIT = 49, OP_LAYOUTGET = 50, OP_LAYOUTRETURN = 51,
	OP_SECINFO_NO_NAME = 52, OP_SEQUENCE = 53, OP_SET_SSV = 54, OP_TEST_STATEID = 55,
	OP_WANT_DELEGATION = 56, OP_DESTROY_CLIENTID = 57, OP_RECLAIM_COMPLETE = 58,
	OP_MAX = 58, OP_ILLEGAL = 10044,
};

enum nfs4_stat {
	NFS4_OK = 0, NFS4ERR_PERM = 1, NFS4ERR_NOENT = 2, NFS4ERR_IO = 5, NFS4ERR_NXIO = 6,
	NFS4ERR_ACCESS = 13, NFS4ERR_EXIST = 17, NFS4ERR_XDEV = 18, NFS4ERR_NOTDIR = 20, NFS4ERR_ISDIR = 21,
	NFS4ERR_INVAL = 22, NFS4ERR_FBIG = 27, NFS4ERR_NOSPC = 28, NFS4ERR_ROFS = 30, NFS4ERR_MLINK = 31,
	NFS4ERR_NAMETOOLONG = 63, NFS4ERR_NOTEMPTY = 66, NFS4ERR_DQUOT = 69, NFS4ERR_STALE = 70,
	NFS4ERR_BADHANDLE = 10001, NFS4ERR_BAD_COOKIE = 10003, NFS4ERR_NOTSUPP = 10004,
	NFS4ERR_TOOSMALL = 10005, NFS4ERR_SERVERFAULT = 10006, NFS4ERR_BADTYPE = 10007, NFS4ERR_DELAY = 10008,
	NFS4ERR_SAME = 10009, NFS4ERR_DENIED = 10010, NFS4ERR_EXPIRED = 10011, NFS4ERR_LOCKED = 10012,
	NFS4ERR_GRACE = 10013, NFS4ERR_SHARE_DENIED = 10015, NFS4ERR_WRONGSEC = 10016,
	NFS4ERR_CLID_INUSE = 10017, NFS4ERR_RESOURCE = 10018, NFS4ERR_NOFILEHANDLE = 10020,
	NFS4ERR_MINOR_VERS_MISMATCH = 10021, NFS4ERR_STALE_CLIENTID = 10022, NFS4ERR_STALE_STATEID = 10023,
	NFS4ERR_OLD_STATEID = 10024, NFS4ERR_BAD_STATEID = 10025, NFS4ERR_BAD_SEQID = 10026,
	NFS4ERR_NOT_SAME = 10027, NFS4ERR_SYMLINK = 10029, NFS4ERR_RESTOREFH = 10030,
	NFS4ERR_ATTRNOTSUPP = 10032, NFS4ERR_NO_GRACE = 10033, NFS4ERR_RECLAIM_BAD = 10034, NFS4ERR_BADXDR = 10036, NFS4ERR_LOCKS_HELD = 10037,
	NFS4ERR_OPENMODE = 10038, NFS4ERR_BADOWNER = 10039, NFS4ERR_BADCHAR = 10040, NFS4ERR_BADNAME = 10041,
	NFS4ERR_OP_ILLEGAL = 10044, NFS4ERR_BADSESSION = 10052, NFS4ERR_BADSLOT = 10053,
	NFS4ERR_COMPLETE_ALREADY = 10054, NFS4ERR_CONN_NOT_BOUND_TO_SESSION = 10055,
	NFS4ERR_SEQ_MISORDERED = 10063, NFS4ERR_SEQUENCE_POS = 10064, NFS4ERR_REQ_TOO_BIG = 10065,
	NFS4ERR_REP_TOO_BIG = 10066, NFS4ERR_REP_TOO_BIG_TO_CACHE = 10067, NFS4ERR_RETRY_UNCACHED_REP = 10068,
	NFS4ERR_TOO_MANY_OPS = 10070, NFS4ERR_OP_NOT_IN_SESSION = 10071, NFS4ERR_CLIENTID_BUSY = 10074,
	NFS4ERR_SEQ_FALSE_RETRY = 10076, NFS4ERR_DEADSESSION = 10078, NFS4ERR_NOT_ONLY_OP = 10081,
	NFS4ERR_WRONG_TYPE = 10083, NFS4ERR_DELEG_REVOKED = 10087,
};

enum nfs4_ftype { NF4REG = 1, NF4DIR = 2, NF4BLK = 3, NF4CHR = 4, NF4LNK = 5, NF4SOCK = 6, NF4FIFO = 7 };

enum {
	NFS4_FH_MAX = 128,          /* NFS4_FHSIZE */
	NFS4_OPAQUE_LIMIT = 1024,
	NFS4_SESSIONID = 16,
	NFS4_OTHER = 12,            /* stateid4.other */
	NFS4_TAG_MAX = 1024,
	NFS4_REQ_MAX = 1056768,     /* RPC_REC_MAX: a session's ca_maxrequestsize */
	NFS4_IO_MAX = 1u << 20,     /* maxread/maxwrite */
	NFS4_CACHED_MAX = 64u << 10, /* ca_maxresponsesize_cached */
	/* ca_maxresponsesize: what the NFS server sends in one reply (NFS_SRV_REPLY_MAX) less the RPC header */
	NFS4_REP_MAX = (1u << 20) + 8192 - 128,
	NFS4_MAX_CLIENTS = 4096,
	NFS4_MAX_SESSIONS = 4096,
	NFS4_MAX_OPENS = 65536,
	NFS4_CONNS_PER_SESSION = 64,
};

/* EXCHANGE_ID flags and state protection (RFC 8881 18.35) */
enum {
	EXCHGID4_FLAG_SUPP_MOVED_REFER = 0x1, EXCHGID4_FLAG_SUPP_MOVED_MIGR = 0x2,
	EXCHGID4_FLAG_BIND_PRINC_STATEID = 0x100, EXCHGID4_FLAG_USE_NON_PNFS = 0x10000,
	EXCHGID4_FLAG_USE_PNFS_MDS = 0x20000, EXCHGID4_FLAG_USE_PNFS_DS = 0x40000,
	EXCHGID4_FLAG_MASK_PNFS = 0x70000, EXCHGID4_FLAG_UPD_CONFIRMED_REC_A = 0x40000000,
	EXCHGID4_FLAG_CONFIRMED_R = 0x80000000u,
	SP4_NONE = 0,
	CREATE_SESSION4_FLAG_PERSIST = 0x1, CREATE_SESSION4_FLAG_CONN_BACK_CHAN = 0x2,
	SEQ4_STATUS_RECALLABLE_STATE_REVOKED = 0x40, SEQ4_STATUS_CB_PATH_DOWN = 0x1,
	SEQ4_STATUS_CB_PATH_DOWN_SESSION = 0x200,
};

/* share_access (OPEN) and want bits (RFC 8881 18.16.3) */
enum { OPEN4_SHARE_ACCESS_READ = 1, OPEN4_SHARE_ACCESS_WRITE = 2, OPEN4_SHARE_ACCESS_BOTH = 3,
       OPEN4_SHARE_ACCESS_MASK = 3, OPEN4_SHARE_DENY_MASK = 3,
       OPEN4_SHARE_ACCESS_WANT_DELEG_MASK = 0xff00, OPEN4_SHARE_ACCESS_WANT_NO_PREFERENCE = 0,
       OPEN4_SHARE_ACCESS_WANT_READ_DELEG = 0x100, OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG = 0x200,
       OPEN4_SHARE_ACCESS_WANT_ANY_DELEG = 0x300, OPEN4_SHARE_ACCESS_WANT_NO_DELEG = 0x400,
       OPEN4_SHARE_ACCESS_WANT_CANCEL = 0x500,
       OPEN4_SHARE_ACCESS_WANT_SIGNAL_DELEG_WHEN_RESRC_AVAIL = 0x10000,
       OPEN4_SHARE_ACCESS_WANT_PUSH_DELEG_WHEN_UNCONTENDED = 0x20000 };
/* open_delegation_type4 and why_no_delegation4 */
enum { NFS_LIMIT_SIZE = 1, NFS_LIMIT_BLOCKS = 2 }; /* limit_by4 of nfs_space_limit4 */
enum { OPEN_DELEGATE_NONE = 0, OPEN_DELEGATE_READ = 1, OPEN_DELEGATE_WRITE = 2, OPEN_DELEGATE_NONE_EXT = 3,
       WND4_NOT_WANTED = 0, WND4_CONTENTION = 1, WND4_RESOURCE = 2, WND4_NOT_SUPP_FTYPE = 3,
       WND4_WRITE_DELEG_NOT_SUPP_FTYPE = 4, WND4_NOT_SUPP_UPGRADE = 5, WND4_NOT_SUPP_DOWNGRADE = 6,
       WND4_CANCELLED = 7, WND4_IS_DIR = 8 };
/* A session's backchannel as its CB_NULL probe found it (nfs4_recall.c):
 * unknown (none, or not probed yet: delegations may be given, as knfsd
 * does for 4.1), probe to send, probe sent, answered, or down (no answer
 * within the probe time, or it could not be sent). */
enum { NFS4_CB_UNKNOWN = 0, NFS4_CB_PROBE, NFS4_CB_PROBING, NFS4_CB_UP, NFS4_CB_DOWN };

/* ---- state (nfs4_state.c) ---- */
struct nfs4_stateid {
	uint32_t seqid;
	uint8_t other[NFS4_OTHER];
};

struct nfs4_slot {
	uint32_t seqid;
	bool busy;                   /* a request on it is being served */
	bool cached;                 /* rep holds the reply to seqid */
	uint8_t *rep;
	size_t rep_len;
};

struct nfs4_client;

struct nfs4_session {
	uint8_t id[NFS4_SESSIONID];
	struct nfs4_client *clp;
	uint32_t nslots;
	uint32_t refs;               /* requests in it, plus one while it exists */
	bool dead;                   /* destroyed; freed at the last release */
	uint64_t conns[NFS4_CONNS_PER_SESSION]; /* bound connections (nfs_call.conn_id) */
	uint32_t nconns;
	/* the backchannel (nfs4_deleg.c, nfs4_recall.c): one slot, on the connection held */
	struct nfs_conn *back;       /* NULL: none */
	uint32_t cb_prog;            /* csa_cb_program */
	uint32_t cb_flavor;          /* AUTH_NONE or AUTH_SYS (csa_cb_sec_parms' first we speak) */
	uint32_t cb_seq;             /* the last CB_SEQUENCE's sequenceid */
	bool cb_seq_keep;            /* its reply said the client did not take it (a refusal, a failed
				      * CB_SEQUENCE): the next call uses it again (RFC 8881 20.9.3) */
	uint32_t cb_xid;             /* the CB_COMPOUND in flight's */
	bool cb_busy;                /* a CB_COMPOUND waits for its reply */
	bool cb_ga;                  /* it is a CB_GETATTR of the delegation cb_ga_sid names */
	struct nfs4_stateid cb_ga_sid;
	uint64_t cb_sent_ns;
	uint8_t cb_state;            /* NFS4_CB_*: the probe's finding */
	uint32_t cb_null_xid;        /* the CB_NULL probe in flight's */
	uint64_t cb_null_ns;         /* when it was sent */
	struct nfs4_session *next;   /* in its client's list */
	struct nfs4_slot slots[];
};

/* A stateid's state: an open, one per (client, open owner, file), or a
 * lock state, one per (client, lock owner, file), under the open it came
 * with (kind NFS4_ST_LOCK: owner is the lock owner, parent the open; its
 * locks are in the store's table under nfs4_lock_owner()). */
enum { NFS4_ST_OPEN = 0, NFS4_ST_LOCK = 1, NFS4_ST_DELEG = 2 };

/* A delegation (NFS4_ST_DELEG's state entry holds it): a grant of R|H (a
 * read delegation) or R|W|H with recall_on_access (a write delegation) in
 * the store's cached-open table, recalled when its brk is called. */
struct nfs4_deleg {
	struct vol_lease lease;      /* lease.arg: this */
	struct nfs4_srv *srv;
	struct vol_store *store;     /* the grant's table */
	bool wanted;                 /* brk: recall it (atomic: set under the table's mutex) */
	bool recalling;              /* CB_RECALL sent (or its sending tried) at recall_ns */
	bool resend;                 /* its CB_COMPOUND's CB_SEQUENCE answered NFS4ERR_DELAY: sent again,
				      * recall_ns kept */
	uint32_t cb_xid;             /* the CB_COMPOUND that carried the recall */
	bool revoked;                /* not returned in time: only FREE_STATEID / DELEGRETURN remain */
	uint64_t recall_ns;
	bool ask;                    /* lease.ask: send a CB_GETATTR (atomic: set under the table's mutex) */
	uint64_t change_seen;        /* a write delegation: the change attribute last heard (the file's at
				      * the grant, then its holder's CB_GETATTR answers) */
	uint64_t mod_ns;             /* when an answer first told of a change (CLOCK_REALTIME; 0: none) */
};
struct nfs4_open {
	bool used;
	uint8_t kind;                /* NFS4_ST_* */
	struct nfs4_open *parent;    /* NFS4_ST_LOCK: its open */
	struct vol_lock_key lkey;    /* NFS4_ST_LOCK: the file in the lock table */
	uint32_t gen;                /* in stateid.other, bumped at every reuse of the entry */
	uint32_t seqid;              /* the stateid's seqid */
	struct nfs4_client *clp;
	uint8_t *owner;              /* malloc()ed, owner_len bytes */
	uint32_t owner_len;
	struct vol_fh fh;            /* the file's handle */
	uint32_t access;             /* OPEN4_SHARE_ACCESS_* bits held */
	uint32_t deny;               /* OPEN4_SHARE_DENY_* bits held (its reservation in the store's table) */
	struct nfs4_deleg *dl;       /* NFS4_ST_DELEG: malloc()ed */
	struct nfs4_open *next;      /* in its client's list */
	uint32_t free_next;          /* free list */
};

struct nfs4_client {
	uint64_t id;                 /* clientid4 */
	uint8_t owner[NFS4_OPAQUE_LIMIT]; /* co_ownerid */
	uint32_t owner_len;
	uint8_t verf[8];
	uint32_t cs_seq;             /* the sequence CREATE_SESSION expects */
	bool confirmed;
	bool reclaimed;              /* RECLAIM_COMPLETE done */
	bool recorded;               /* on some volume's holder records (vol_grace.h) */
	unsigned nrevoked;           /* revoked delegations not yet freed (SEQUENCE's flags) */
	uint64_t renewed_ns;
	uint8_t cs_rep[256];         /* the last CREATE_SESSION result (its replay) */
	size_t cs_rep_len;
	struct nfs4_session *sessions;
	struct nfs4_open *opens;
	struct nfs4_client *next;
};

struct nfs4_srv {
	pthread_mutex_t mu;
	unsigned max_slots;
	unsigned lease_s;
	uint32_t boot;               /* this server run: in client ids and stateids */
	uint64_t next_client;
	uint64_t next_session;
	uint8_t server_owner[16];
	struct nfs4_client *clients;
	unsigned nclients, nsessions;
	struct nfs4_open *opens;     /* NFS4_MAX_OPENS entries (calloc: pages touched as used) */
	uint32_t open_free;          /* head of the free list, NFS4_MAX_OPENS: empty */
	uint32_t open_hwm;           /* entries below it were used once */
	struct vol_lock_tab *locks;  /* the store's lock table, set at the first LOCK */
	struct vol_store *store;     /* the store served, set at the first COMPOUND (holder records) */
	/* the backchannel's thread (nfs4_recall.c): sends recalls, revokes late ones */
	pthread_mutex_t cb_mu;
	pthread_cond_t cb_cv;
	pthread_t cb_thr;
	bool cb_started, cb_stopped, cb_kick;
	struct nfs_srv *nsrv;        /* the NFS server the calls go out through */
	uint32_t cb_next_xid;
	unsigned ndelegs;            /* delegations held (not revoked) */
};

/* ---- COMPOUND context (nfs4_compound.c) ---- */
struct nfs4_fhc {               /* a current or saved file handle */
	bool set;
	bool pseudo;                 /* the pseudo-file-system root */
	struct vol_obj obj;          /* otherwise, with the caller's verdict on it */
	struct vol_cred ecred;
	enum vol_access access;
	struct nfs4_stateid cur_stateid; /* the stateid the last OPEN gave (the "current stateid") */
};

struct nfs4_cx {
	struct nfs_call *call;
	struct nfs4_srv *srv;
	struct nfs4_fhc cur, saved;
	struct nfs4_session *sess;   /* after SEQUENCE: held, with slot busy */
	uint32_t slot;
	bool cachethis;
	struct ut_buf *out;
	const uint8_t *replay;       /* SEQUENCE found a cached reply: send these bytes */
	size_t replay_len;
	uint8_t *replay_owned;
	uint32_t op;                 /* the operation running (counters) */
};

/* An operation: decode its arguments from in, do it, write its result body
 * (after the status word) to cx->out; returns the status. */
typedef uint32_t (*nfs4_op_fn)(struct nfs4_cx *cx, struct xdr_cur *in);

/* nfs4_compound.c */
uint32_t nfs4_status(int rc);
void nfs4_fhc_clear(struct nfs4_fhc *f);
/* The change attribute of an object: its ctime in nanoseconds. */
uint64_t nfs4_change(const struct stat *st);
/* Read a bitmap4 of at most max words into w (the rest zeroed); false (and
 * in->err set) past max. */
bool nfs4_get_bitmap(struct xdr_cur *in, uint32_t *w, uint32_t max, uint32_t *n);
/* Put a bitmap4 of n words. */
void nfs4_put_bitmap(struct ut_buf *b, const uint32_t *w, uint32_t n);
/* A component name (utf8str_cs): NFS4ERR_INVAL when empty, BADNAME for "." ".." or a '/' or NUL,
 * NAMETOOLONG past VOL_NAME_MAX. */
uint32_t nfs4_name(struct xdr_cur *in, const char **name, uint32_t *len);

/* nfs4_state.c (all under s->mu unless said) */
uint64_t nfs4_now_ns(void);
struct nfs4_client *nfs4_client_find(struct nfs4_srv *s, uint64_t id);
void nfs4_client_free(struct nfs4_srv *s, struct nfs4_client *c);
void nfs4_expire(struct nfs4_srv *s);
struct nfs4_session *nfs4_session_find(struct nfs4_srv *s, const uint8_t id[NFS4_SESSIONID]);
void nfs4_session_destroy(struct nfs4_srv *s, struct nfs4_session *se);
void nfs4_session_put(struct nfs4_srv *s, struct nfs4_session *se);
bool nfs4_session_bound(const struct nfs4_session *se, uint64_t conn);
int nfs4_session_bind(struct nfs4_session *se, uint64_t conn);
struct nfs4_open *nfs4_open_get(struct nfs4_srv *s, struct nfs4_client *c, const uint8_t *owner, uint32_t olen,
				const struct vol_fh *fh, bool *fresh);
/* A new state entry of client c (seqid 0), or NULL when the table is full. */
struct nfs4_open *nfs4_state_alloc(struct nfs4_srv *s, struct nfs4_client *c, uint8_t kind, const uint8_t *owner,
				   uint32_t olen, const struct vol_fh *fh);
/* Free o (an open: with its lock states and their locks; a lock state: with its locks). */
void nfs4_open_release(struct nfs4_srv *s, struct nfs4_open *o);
/* The lock table's owner of lock state o. */
struct vol_lock_owner nfs4_lock_owner(const struct nfs4_srv *s, const struct nfs4_open *o);
/* The state entry named by a lock table owner id (NULL: none now). */
struct nfs4_open *nfs4_state_by_id(struct nfs4_srv *s, uint64_t id);
void nfs4_open_stateid(const struct nfs4_srv *s, const struct nfs4_open *o, struct nfs4_stateid *out);
/* The open a stateid names for client c: NFS4_OK with *out, or BAD_STATEID,
 * OLD_STATEID, STALE_STATEID. */
uint32_t nfs4_open_find(struct nfs4_srv *s, struct nfs4_client *c, const struct nfs4_stateid *sid,
			struct nfs4_open **out);

/* nfs4_deleg.c */
/* After OPEN's share reservation of o (an open of the session's client
 * with access; k the file): a read delegation (write: a write delegation)
 * when it is safe, its stateid in *sid; false: none, and why
 * (WND4_CONTENTION: other opens write the file (write: any other open of
 * it, of any client or protocol), a break of it is under way, or the client
 * holds one on it already; WND4_RESOURCE: no working backchannel, a read
 * delegation asked with an open for writing, or no room). Under s->mu. */
bool nfs4_deleg_grant(struct nfs4_cx *cx, struct nfs4_open *o, const struct vol_lock_key *k, uint32_t access,
		      bool write, uint64_t change, uint32_t *why, struct nfs4_stateid *sid);
/* Before a change of k's data or an open for writing by the session's
 * client: recall the delegations on it (open_w: an open for writing, a
 * REMOVE or RENAME: every client's, the caller's own too; else a WRITE or
 * a SETATTR of the size: other clients'); true while one is out (the
 * caller answers NFS4ERR_DELAY). Not under s->mu. */
bool nfs4_deleg_conflict(struct nfs4_cx *cx, const struct vol_lock_key *k, bool open_w);
/* Before a read of k's data or attributes (another client's OPEN for
 * reading, READ, GETATTR of size or change): recall the write delegations
 * of other clients on it; true while one is out (NFS4ERR_DELAY). Read
 * delegations are left alone. Not under s->mu. */
bool nfs4_deleg_conflict_read(struct nfs4_cx *cx, const struct vol_lock_key *k);
/* Before an OPEN by open owner (owner, olen) of the session's client: when
 * the client holds a write delegation on k taken by another open owner
 * (another mount of it, caching apart), recall it; true while it is out
 * (NFS4ERR_DELAY). Not under s->mu. */
bool nfs4_deleg_conflict_owner(struct nfs4_cx *cx, const struct vol_lock_key *k, const uint8_t *owner, uint32_t olen);
/* The lease group of the session's client in the cached-open table. */
/* A SETATTR giving regular file k set-uid or set-gid by a client that
 * holds a write delegation on it: recall that delegation (true: answer
 * NFS4ERR_DELAY until its DELEGRETURN), so that no SETATTR of the size made
 * under it comes with the holder's credential while the file has them.
 * Other clients' delegations: nfs4_deleg_conflict_read. SETATTR asks
 * again after the change (ignoring the answer): a delegation an OPEN of
 * the same client got meanwhile is recalled too. Not under s->mu. */
bool nfs4_deleg_conflict_setid(struct nfs4_cx *cx, const struct vol_lock_key *k);
/* Whether mode is a regular file's with set-uid or set-gid: no write
 * delegation is given on it (knfsd's nfsd4_verify_setuid_write). The Linux
 * client sends a SETATTR of the size made under its write delegation
 * (truncate(2) by any user of the mount, whose open it makes locally under
 * the delegation) with the delegation's stateid and credential, not the
 * truncating user's, so the store would keep the bits a truncation by that
 * user clears (test_vm_nfs41 check 33, test_nfs4_wsetid). */
bool nfs4_setid_file(mode_t mode);
uint64_t nfs4_deleg_group(const struct nfs4_client *c);
/* The same, under s->mu taken here (0: no client). */
uint64_t nfs4_deleg_client_group(struct nfs4_cx *cx);
/* Who a v4.1 WRITE or SETATTR is made by (vol_write_by): the session's
 * client's group, never waiting (nfs4_deleg_conflict answered first). */
void nfs4_deleg_by(struct nfs4_cx *cx, struct vol_lease_by *by);
/* Release a delegation entry's grant (from nfs4_open_release, under s->mu). */
void nfs4_deleg_release(struct nfs4_srv *s, struct nfs4_open *o);
/* Whether c has a revoked delegation (SEQUENCE's status flags). Under s->mu. */
bool nfs4_deleg_revoked(const struct nfs4_client *c);
/* SEQUENCE's status flags of the delegation side for a request in se:
 * RECALLABLE_STATE_REVOKED, CB_PATH_DOWN_SESSION (se's backchannel did not
 * answer its probe), CB_PATH_DOWN (no session of the client has a
 * backchannel that works, and one was found down). Under s->mu. */
uint32_t nfs4_deleg_seq_flags(const struct nfs4_session *se);
/* se's backchannel changed (bound, or its program or flavor): probe it
 * with a CB_NULL from the backchannel thread (under s->mu). */
void nfs4_deleg_probe(struct nfs4_cx *cx, struct nfs4_session *se);
/* The session takes the backchannel on the caller's connection (CREATE_SESSION
 * with CONN_BACK_CHAN, BIND_CONN_TO_SESSION): false when the call has no
 * connection to hold (nothing changes). Under s->mu. */
bool nfs4_deleg_back(struct nfs4_cx *cx, struct nfs4_session *se);
/* Let go of the session's backchannel (it is destroyed). Under s->mu. */
void nfs4_deleg_back_drop(struct nfs4_session *se);
uint32_t nfs4_op_delegreturn(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_backchannel_ctl(struct nfs4_cx *cx, struct xdr_cur *in);
/* csa_cb_sec_parms / bctsa_sec_parms: the first flavor we speak (AUTH_SYS or
 * AUTH_NONE) in *flavor (UINT32_MAX: none); in->err on a bad encoding. */
void nfs4_cb_sec(struct xdr_cur *in, uint32_t *flavor);
/* A session of c whose backchannel may work (its probe did not find it
 * down), or NULL. Under s->mu. */
struct nfs4_session *nfs4_deleg_back_session(struct nfs4_client *c);

/* nfs4_recall.c: the backchannel thread */
#define NFS4_CB_TICK_MS 200u      /* the backchannel thread looks at recalls this often */
#define NFS4_CB_ASK_MAX_MS 5000u  /* a CB_GETATTR unanswered this long (or half a lease): recalled instead */
/* Start the backchannel thread once (nsrv: the server it calls back
 * through): whether it runs. Under s->mu or not. */
bool nfs4_cb_start(struct nfs4_srv *s, struct nfs_srv *nsrv);
/* Wake the thread for a round now (a break, an ask, a probe to send).
 * Takes cb_mu only: callable under the lease table's mutex. */
void nfs4_cb_kick(struct nfs4_srv *s);
/* The program's hooks (nfs_prog.reply, nfs_prog.stop). */
void nfs4_cb_reply(void *ctx, uint64_t conn_id, const uint8_t *rec, size_t len);
void nfs4_cb_stop(void *ctx);

/* nfs4_cb.c: the wire of the backchannel */
#define NFS4_CB_MAX_RECALLS 8u   /* CB_RECALLs in one CB_COMPOUND */
#define NFS4_CB_MAX_RES 16u      /* results a CB_COMPOUND reply may carry */
struct nfs4_cb_recall {
	struct nfs4_stateid sid;
	struct vol_fh fh;
};
/* A CB_COMPOUND call (record mark slot, RPC header, CB_SEQUENCE on slot 0,
 * n CB_RECALLs; n 0 and ga not NULL: one CB_GETATTR of ga asking change
 * and size) into b. */
void nfs4_cb_encode(struct ut_buf *b, uint32_t xid, uint32_t prog, uint32_t flavor, const uint8_t sess[NFS4_SESSIONID],
		    uint32_t seq, const struct nfs4_cb_recall *r, uint32_t n, const struct vol_fh *ga);
/* A CB_COMPOUND reply, decoded. */
struct nfs4_cb_res {
	uint32_t xid;
	bool accepted;               /* MSG_ACCEPTED and SUCCESS */
	uint32_t status;             /* the COMPOUND's */
	uint32_t nres;
	uint32_t ops[NFS4_CB_MAX_RES], stats[NFS4_CB_MAX_RES];
	bool seq_ok;                 /* CB_SEQUENCE's result came whole with NFS4_OK */
	uint8_t sess[NFS4_SESSIONID];
	uint32_t seq, slot;
	bool ga_ok;                  /* a CB_GETATTR result came with NFS4_OK and its fattr4: */
	bool ga_size, ga_change;     /* which of these it carried */
	uint64_t size, change;
};
/* Decode a reply record (from its xid) with the bounded cursor: 0, or
 * -EBADMSG for anything short, oversized or not a reply (nothing kept). */
int nfs4_cb_decode(const uint8_t *rec, size_t len, struct nfs4_cb_res *out);
/* Whether decoded reply r answers the CB_COMPOUND sent in session sess
 * with CB_SEQUENCE sequenceid seq on slot 0: a refusal and a failed
 * CB_SEQUENCE do (a failed callback); a CB_SEQUENCE that succeeded must
 * name that session, sequence and slot, and must come first. */
bool nfs4_cb_res_ours(const struct nfs4_cb_res *r, const uint8_t sess[NFS4_SESSIONID], uint32_t seq);
/* The error r's CB_SEQUENCE failed with; NFS4_OK when it did not fail
 * (it succeeded, or the call was refused before it ran). */
uint32_t nfs4_cb_res_seq_status(const struct nfs4_cb_res *r);
/* A CB_NULL call (the probe of a new backchannel) into b, its record mark
 * left for the sender. */
void nfs4_cb_encode_null(struct ut_buf *b, uint32_t xid, uint32_t prog, uint32_t flavor);
/* Decode the reply to a CB_NULL (bounded, nothing allocated): 0 with its
 * xid and whether it was accepted with SUCCESS, or -EBADMSG. */
int nfs4_cb_decode_null(const uint8_t *rec, size_t len, uint32_t *xid, bool *ok);

/* the operations, by file */
uint32_t nfs4_op_exchange_id(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_create_session(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_destroy_session(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_destroy_clientid(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_bind_conn(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_sequence(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_reclaim_complete(struct nfs4_cx *cx, struct xdr_cur *in);
/* After the COMPOUND: keep its reply in the slot and free the slot. */
void nfs4_sequence_done(struct nfs4_cx *cx, const uint8_t *rep, size_t len);

uint32_t nfs4_op_getattr(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_setattr(struct nfs4_cx *cx, struct xdr_cur *in);
/* Decode a fattr4 for SETATTR, CREATE and OPEN into sa; *set gets the bits
 * it set (for OPEN's attrset); ATTRNOTSUPP / INVAL / BADOWNER. */
uint32_t nfs4_fattr_decode(struct xdr_cur *in, struct vol_sattr *sa, uint32_t set[3]);
/* Write the attributes asked for (req, nreq words) of the object at f. */
uint32_t nfs4_fattr_encode(struct nfs4_cx *cx, struct nfs4_fhc *f, const uint32_t *req, uint32_t nreq,
			   struct ut_buf *out);
/* Whether a GETATTR bitmap (req, n words) asks for what a write
 * delegation's holder caches: change, size, space_used, time_modify. */
bool nfs4_attr_of_data(const uint32_t *req, uint32_t n);
/* fileid of an export's entry in the pseudo root. */
uint64_t nfs4_pseudo_fileid(uint64_t fsid);

uint32_t nfs4_op_putfh(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_putrootfh(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_getfh(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_lookup(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_lookupp(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_savefh(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_restorefh(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_secinfo(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_secinfo_no_name(struct nfs4_cx *cx, struct xdr_cur *in);
/* Make f the object obj (taken over) authorized for the caller; ACCESS when the rules refuse. */
uint32_t nfs4_fhc_set(struct nfs4_cx *cx, struct nfs4_fhc *f, struct vol_obj *obj);
bool nfs4_is_export_root(struct vol_obj *obj);
/* Readdir of the pseudo root. */
uint32_t nfs4_pseudo_readdir(struct nfs4_cx *cx, uint64_t cookie, uint32_t maxcount, const uint32_t *req,
			     uint32_t nreq);

uint32_t nfs4_op_open(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_close(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_read(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_write(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_commit(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_test_stateid(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_open_downgrade(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_verify(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_nverify(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_free_stateid(struct nfs4_cx *cx, struct xdr_cur *in);
void nfs4_get_stateid(struct xdr_cur *in, struct nfs4_stateid *sid);
void nfs4_put_stateid(struct ut_buf *b, const struct nfs4_stateid *sid);

uint32_t nfs4_op_access(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_create(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_remove(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_rename(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_link(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_readdir(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_readlink(struct nfs4_cx *cx, struct xdr_cur *in);

uint32_t nfs4_op_lock(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_lockt(struct nfs4_cx *cx, struct xdr_cur *in);
uint32_t nfs4_op_locku(struct nfs4_cx *cx, struct xdr_cur *in);
/* FREE_STATEID of lock state o (under s->mu): LOCKS_HELD while it holds locks. */
uint32_t nfs4_lock_free_state(struct nfs4_srv *s, struct nfs4_open *o);
/* Put the session's client on the records of the volume of obj before it
 * gets state there (vol_grace_record): NFS4_OK, or SERVERFAULT when the
 * records cannot be written (nothing may be granted then). Not under s->mu. */
uint32_t nfs4_grace_record(struct nfs4_cx *cx, const struct vol_obj *obj);
/* May the session's client reclaim on the volume of obj now? Not under s->mu. */
bool nfs4_grace_may_reclaim(struct nfs4_cx *cx, const struct vol_obj *obj);

#endif
