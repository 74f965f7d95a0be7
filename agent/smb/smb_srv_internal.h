/* smb_srv_internal: what the files of the SMB server share: the server,
 * connection, session, tree and open state, the request being served, the
 * command table's handler type and the NTSTATUS values it answers.
 *
 * Threads: everything below struct smb_srv is touched only by the server's
 * loop thread, except srv->cfg (cfg_lock), the released-QoS list
 * (rel_lock, written by the store's QoS timer) and the read pool's lists
 * (smb_read.c: its workers read, write or flush through a copy of an open's
 * vol_obj, never the open; a parked frame, smb_frame.c, is the loop's).
 */
#ifndef AQ_AGENT_SMB_SRV_INTERNAL_H
#define AQ_AGENT_SMB_SRV_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "agent/smb/smb_crypto.h"
#include "agent/smb/smb_srv.h"
#include "agent/smb/smb_wire.h"
#include "agent/vol/vol.h"
#include "agent/vol/vol_lease.h"
#include "agent/vol/vol_watch.h"

/* NTSTATUS values (MS-ERREF 2.3) the server answers. */
#define STATUS_SUCCESS 0x00000000u
#define STATUS_PENDING 0x00000103u
#define STATUS_NOTIFY_CLEANUP 0x0000010Bu
#define STATUS_NOTIFY_ENUM_DIR 0x0000010Cu
#define STATUS_BUFFER_OVERFLOW 0x80000005u
#define STATUS_NO_MORE_FILES 0x80000006u
#define STATUS_UNSUCCESSFUL 0xC0000001u
#define STATUS_NOT_IMPLEMENTED 0xC0000002u
#define STATUS_INVALID_INFO_CLASS 0xC0000003u
#define STATUS_INFO_LENGTH_MISMATCH 0xC0000004u
#define STATUS_INVALID_PARAMETER 0xC000000Du
#define STATUS_NO_SUCH_FILE 0xC000000Fu
#define STATUS_INVALID_HANDLE 0xC0000008u
#define STATUS_INVALID_DEVICE_REQUEST 0xC0000010u
#define STATUS_END_OF_FILE 0xC0000011u
#define STATUS_INVALID_VIEW_SIZE 0xC000001Fu
#define STATUS_MORE_PROCESSING_REQUIRED 0xC0000016u
#define STATUS_NO_MEMORY 0xC0000017u
#define STATUS_ACCESS_DENIED 0xC0000022u
#define STATUS_BUFFER_TOO_SMALL 0xC0000023u
#define STATUS_OBJECT_NAME_INVALID 0xC0000033u
#define STATUS_OBJECT_NAME_NOT_FOUND 0xC0000034u
#define STATUS_OBJECT_NAME_COLLISION 0xC0000035u
#define STATUS_OBJECT_PATH_NOT_FOUND 0xC000003Au
#define STATUS_SHARING_VIOLATION 0xC0000043u
#define STATUS_FILE_LOCK_CONFLICT 0xC0000054u
#define STATUS_LOCK_NOT_GRANTED 0xC0000055u
#define STATUS_NO_EAS_ON_FILE 0xC0000052u
#define STATUS_DELETE_PENDING 0xC0000056u
#define STATUS_LOGON_FAILURE 0xC000006Du
#define STATUS_PRIVILEGE_NOT_HELD 0xC0000061u
#define STATUS_RANGE_NOT_LOCKED 0xC000007Eu
#define STATUS_DISK_FULL 0xC000007Fu
#define STATUS_INSUFFICIENT_RESOURCES 0xC000009Au
#define STATUS_MEDIA_WRITE_PROTECTED 0xC00000A2u
#define STATUS_BAD_IMPERSONATION_LEVEL 0xC00000A5u
#define STATUS_FILE_IS_A_DIRECTORY 0xC00000BAu
#define STATUS_NOT_SUPPORTED 0xC00000BBu
#define STATUS_INVALID_OPLOCK_PROTOCOL 0xC00000E3u
#define STATUS_REQUEST_NOT_ACCEPTED 0xC00000D0u
#define STATUS_REQUEST_OUT_OF_SEQUENCE 0xC000042Au
#define STATUS_NETWORK_NAME_DELETED 0xC00000C9u
#define STATUS_BAD_NETWORK_NAME 0xC00000CCu
#define STATUS_NOT_SAME_DEVICE 0xC00000D4u
#define STATUS_INTERNAL_ERROR 0xC00000E5u
#define STATUS_UNEXPECTED_IO_ERROR 0xC00000E9u
#define STATUS_DIRECTORY_NOT_EMPTY 0xC0000101u
#define STATUS_NOT_A_DIRECTORY 0xC0000103u
#define STATUS_CANCELLED 0xC0000120u
#define STATUS_FILE_CLOSED 0xC0000128u
#define STATUS_FILE_FORCED_CLOSED 0xC00000B6u
#define STATUS_USER_SESSION_DELETED 0xC0000203u
#define STATUS_INVALID_LOCK_RANGE 0xC00001A1u
#define STATUS_NOT_FOUND 0xC0000225u

#define STATUS_CANNOT_DELETE 0xC0000121u

/* DOS attributes (MS-FSCC 2.6) */
#define FILE_ATTRIBUTE_READONLY 0x0001u
#define FILE_ATTRIBUTE_HIDDEN 0x0002u
#define FILE_ATTRIBUTE_SYSTEM 0x0004u
#define FILE_ATTRIBUTE_DIRECTORY 0x0010u
#define FILE_ATTRIBUTE_ARCHIVE 0x0020u
#define FILE_ATTRIBUTE_NORMAL 0x0080u
#define FILE_ATTRIBUTE_TEMPORARY 0x0100u
/* what no CREATE may ask (MS-FSA 2.1.5.1: VOLUME, DEVICE, INTEGRITY_STREAM and the undefined bits) */
#define SMB_DOS_INVALID 0xFFFF8048u
#define FILE_ATTRIBUTE_SPARSE_FILE 0x0200u
/* what CREATE and SET_INFO set (SPARSE_FILE only through FSCTL_SET_SPARSE) */
#define SMB_DOS_SETTABLE (FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_HIDDEN | FILE_ATTRIBUTE_SYSTEM | FILE_ATTRIBUTE_ARCHIVE)

#define SMB_SRV_CREDITS_MAX 8192u  /* credits a connection may hold (Samba's and Windows' 8192) */
#define SMB_SRV_PER_IP 64u         /* connections from one address not yet authenticated */
#define SMB_SRV_PER_IP_ALL 512u    /* and all of them (multichannel: 32 channels a session) */
#define SMB_SRV_SETUP_S 30         /* NEGOTIATE + SESSION_SETUP must finish within */
#define SMB_SRV_IDLE_S 900         /* silence with nothing open */
#define SMB_ASYNC_PER_CONN 64u     /* requests waiting (STATUS_PENDING) per connection */
#define SMB_ASYNC_NODE_MAX 1024u   /* and per node */
#define SMB_SESS_GONE_KEEP 4u      /* logged-off sessions kept per connection */
/* Opens (each holds descriptors: its file's, its parent's, a grant's): of
 * one session, and the node's default share of RLIMIT_NOFILE (1/SMB_SRV_OPENS_NOFILE_DIV
 * of it, at least SMB_SRV_OPENS_MIN); past either a CREATE answers
 * STATUS_INSUFFICIENT_RESOURCES (MS-SMB2 3.3.5.9) before it makes anything.
 * smb_srv_set_open_limits changes them. */
#define SMB_SESS_OPENS_MAX 4096u
#define SMB_SRV_OPENS_NOFILE_DIV 4u
#define SMB_SRV_OPENS_MIN 64u
#define SMB_SRV_RSP_IDLE_S 2 /* idle seconds after which a connection gives its reply room back */
#define SMB_SRV_OUT_PAUSE (32u << 20) /* queued reply bytes past which reading pauses */
#define SMB_SRV_OUT_TAKE (64u << 10)  /* a reply's rest this long is queued in its own buffer, not copied */
#define SMB_SRV_IN_KEEP (64u << 10)   /* a served frame's buffer this big is the next frame's room */
#define SMB_SRV_SEAL_MAX (SMB_WIRE_FRAME_MAX + SMB2_TRANSFORM_LEN) /* an encrypted reply: transform and frame */
#define SMB_SRV_SEAL_SPARES 3u /* more rooms of sent encrypted replies a connection keeps (pipelined READs) */
#define SMB_READ_WORKERS 8u        /* threads serving READs that may block (smb_read.c) */
#define SMB_READ_PER_FILE 2u       /* of them on one file at once */
#define SMB_WRITE_ASYNC_MIN (256u << 10) /* a WRITE of this many bytes or more goes to them too */
#define SMB_READ_QUEUE_MAX 1024u   /* READ jobs on the node; past it a READ is served on the loop */
#define SMB_READ_FILE_MAX 64u      /* and of one file */
#define SMB_READ_TICK_MS 100      /* the loop's turn while READ jobs are out */
#define SMB_READ_PENDING_MS 500u   /* a READ unanswered this long gets its interim STATUS_PENDING (Samba's 500) */
#define SMB_FRAME_PARK_PER_CONN 4u /* frames of a connection waiting for a worker (smb_frame.c) */
#define SMB_FRAME_PARK_MAX 64u     /* and of the node; past either the request is served on the loop */

struct smb_async;
struct smb_read_pool;
struct smb_read_job;
struct smb_frame;
struct smb_admit;
struct smb_ctx_req; /* smb_srv_info.h */

struct smb_cfg {
	struct smb_srv_share *shares;
	size_t nshares;
	struct smb_srv_user *users;
	size_t nusers;
};

struct smb_open {
	struct smb_open *next;
	uint64_t id;                 /* FileId persistent = volatile */
	struct smb_tree *tree;
	struct vol_obj obj;
	struct vol_obj parent;       /* fd -1 for the share root */
	char name[VOL_NAME_MAX + 1]; /* leaf name in parent */
	char path[SMB_WIRE_NAME_MAX];/* from the share root, '/'-separated ("" = root) */
	struct vol_fh fh;            /* for QoS admission */
	bool dir, delete_on_close;
	bool write_through;          /* CreateOptions FILE_WRITE_THROUGH: every WRITE is file-sync */
	bool delete_pending;         /* SET_INFO disposition: other opens of the file are DELETE_PENDING */
	uint32_t access;
	/* FSCTL_SRV_REQUEST_RESUME_KEY (smb_copy.c): the open's id then these
	 * random bytes name it as the source of a server-side copy */
	bool has_resume_key;
	uint8_t resume_key[16];
	uint64_t position;           /* FilePositionInformation, as the client last set it */
	uint32_t ea_next;            /* FileFullEaInformation: the next EA a scan answers (smb_info_ea.c) */
	uint64_t alloc_size;         /* AllocationSize set (AlSi, SET_INFO), reported while the blocks are fewer (0: none) */
	uint64_t held;               /* volume capacity held for it past the end of file (smb_alloc.c) */
	uint64_t cookie;             /* QUERY_DIRECTORY position */
	bool dir_started, dir_eof;
	char pattern[256];
	/* byte-range locks and share reservation (smb_lock.c) */
	struct vol_lock_tab *locks;  /* the store's table; NULL until the open has its file */
	struct vol_lock_key lkey;
	struct vol_lock_owner owner;
	uint8_t lock_seq[64];        /* LOCK replay (3.3.5.14): per bucket, the last LockSequenceNumber done + 1 (0: none) */
	/* CHANGE_NOTIFY (smb_notify.c): the store's watch, made by the first
	 * request; the wake flags the open for the loop */
	struct vol_watch *watch;
	struct smb_srv *srv;         /* for the wake, which runs on the changer's thread */
	int notify_woken;            /* atomic */
	unsigned nnotify;            /* its CHANGE_NOTIFYs waiting (smb_async.c) */
	bool notify_set;             /* notify_max holds */
	uint32_t notify_max;         /* the first CHANGE_NOTIFY's OutputBufferLength: later ones get at most that */
	/* oplock or lease (smb_lease.c): its grant in the store's table */
	struct vol_lease lease;
	uint64_t group;              /* its cache in the table: the lease (key on this connection) or the open */
	uint8_t oplock;              /* SMB2_OPLOCK_LEVEL_NONE, _II, _EXCLUSIVE or _BATCH */
	bool leased, lease_v2;       /* a lease context was answered: its key */
	uint8_t lease_key[16];
	uint16_t lease_epoch;
	uint32_t lease_state;        /* what the client was last told it holds */
	int break_woken;             /* atomic: the store broke the grant; the loop sends the break */
	bool break_sent;             /* the break waiting for its ack was sent (once per lease) */
	bool break_next;             /* an ack left a further break (a step of it): no new epoch */
	uint64_t break_on;           /* the key of the connection the waiting break went out on */
	/* durable handle (smb_durable.c): kept for its owner when the connection drops */
	bool durable, durable_v2;
	struct vol_cred cred;        /* its user's, for a kept delete-on-close open's delete */
	uint32_t durable_ms;         /* how long it is kept disconnected */
	uint8_t create_guid[16];     /* v2 */
	uint8_t client_guid[16];     /* the granting connection's ClientGuid: a leased one's reconnect must match */
	char owner_project[API_INTENT_PROJECT_LEN + 1], owner_name[API_INTENT_SMB_USER_LEN + 1];
	char share_name[API_INTENT_SHARE_LEN + 1];
	struct timespec durable_until; /* CLOCK_MONOTONIC, while disconnected */
	/* SMB2_CREATE_APP_INSTANCE_ID/_VERSION of its CREATE (smb_durable.c) */
	bool app, app_ver;
	uint8_t app_id[16];
	uint64_t app_hi, app_lo;
	/* READs a worker has (smb_read.c): a freed open (released) stays until
	 * the last one ends, with its descriptor */
	unsigned nreads;
	bool released;
	bool counted;                /* in srv->nopens (smb_open_create made it): its free takes it out */
};

struct smb_tree {
	struct smb_tree *next;
	uint32_t id;
	bool ipc;
	bool encrypt;                /* ENCRYPT_DATA: unencrypted requests refused */
	struct smb_srv_share share;
	struct vol_export *exp;      /* counted reference (NULL for IPC$) */
};

enum smb_sess_state { SMB_SESS_NTLM_CHALLENGED = 1, SMB_SESS_VALID = 2 };

/* An NTLM exchange under way: a logon, a re-authentication or a binding. */
struct smb_auth {
	uint8_t challenge[8];
	uint8_t *ntlm_neg, *ntlm_chal; /* kept for the MIC */
	size_t ntlm_neg_len, ntlm_chal_len;
	bool raw_ntlmssp;            /* the client sent bare NTLMSSP (Linux cifs): answer bare */
};

/* A channel of a session on another connection than the one that set it
 * up (multichannel, MS-SMB2 3.3.1.8, 3.3.5.5.2): bound by a SESSION_SETUP
 * with SMB2_SESSION_FLAG_BINDING that authenticated the session's user on
 * that connection. Linked in its session's list and in its connection's;
 * freed with either. Until bound, only the binding SESSION_SETUP sees it. */
struct smb_chan {
	struct smb_chan *next;       /* the session's channels */
	struct smb_chan *cnext;      /* the connection's channels */
	struct smb_sess *sess;
	struct smb_conn *conn;
	bool bound;                  /* signing holds: the channel serves requests */
	uint8_t signing[16];         /* Channel.SigningKey (3.3.5.5.3) */
	struct smb_crypto_ctx cx;    /* its signing contexts (freed with it) */
	uint8_t preauth[SMB_CRYPTO_PREAUTH_LEN]; /* 3.1.1: the binding connection's hash */
	struct smb_auth auth;
};

#define SMB_SESS_MAX_CHANNELS 32u    /* channels of a session, its first included (Windows' limit) */

struct smb_sess {
	struct smb_sess *next;
	/* the connection whose list holds the session: the one that set it
	 * up, or, once that one is gone, one of its bound channels' (the
	 * session lives while any channel does) */
	struct smb_conn *conn;
	uint64_t id;
	uint64_t client_key;         /* the setting-up connection's key: its opens' lock owner */
	enum smb_sess_state state;
	uint8_t preauth[SMB_CRYPTO_PREAUTH_LEN];
	struct smb_auth auth;
	struct smb_chan *chans;      /* channels on other connections */
	unsigned nchans;
	bool alg_kept;               /* sign_alg holds (its first connection is gone); else that one's */
	uint16_t sign_alg;
	struct smb_srv_user user;
	struct vol_cred cred;
	struct smb_crypto_keys keys;
	struct smb_crypto_ctx cx;    /* keys' signing, sealing and unsealing contexts (freed with it) */
	bool encrypt;                /* the client encrypts: so do we */
	uint64_t nonce_ctr;
	uint8_t nonce_fixed[4];
	struct smb_tree *trees;
	uint32_t next_tree;
	struct smb_open *opens;
	unsigned nopens;             /* in opens: the session cap's count (smb_open_room), kept as the list changes */
	time_t started;
	bool logged_off;             /* LOGOFF answered: kept (keys only) to sign USER_SESSION_DELETED */
	bool reauth;                 /* a re-authentication of the valid session is under way */
};

struct smb_conn {
	struct smb_conn *next, *prev;
	struct smb_srv *srv;
	int fd;
	uint64_t key;                /* QoS flow and log id */
	char peer[64];
	uint32_t peer_ip;            /* for the per-address cap (0 for v6) */
	/* input */
	uint8_t pfx[4];
	size_t pfx_got;
	uint8_t *frame;
	uint32_t frame_len, frame_got;
	size_t frame_cap;            /* frame's allocation (in_room's, when it was taken) */
	uint8_t *in_room;            /* a served big frame's buffer, the next's room (smb_conn_in_keep) */
	size_t in_cap;
	uint8_t *in_lent;            /* the frame being served's receive buffer, while it is served: */
	size_t in_lent_cap;          /* a request that parks takes it instead of a copy (smb_frame_park_ready) */
	/* a frame waiting for QoS admission */
	uint8_t *parked;             /* plain: a sealed frame is parked decrypted */
	size_t parked_len;
	bool parked_sealed;          /* it came encrypted by session parked_enc */
	uint64_t parked_enc;
	struct smb_admit *admit;     /* its frame's volumes still to charge (smb_admit.c) */
	struct qos_item qi;
	bool is_parked;
	uint64_t parked_t0_ms;       /* CLOCK_MONOTONIC, when it parked */
	uint64_t parked_async;       /* nonzero once its interim STATUS_PENDING went */
	uint64_t parked_async_mid;   /* the MessageId it named (a compound's charged message) */
	uint64_t serve_async;        /* that AsyncId, for smb_frame_serve of the frame it releases */
	uint64_t serve_async_mid;    /* ... for the message with this MessageId */
	/* output: the copied bytes of c->out go first, then the replies
	 * queued in their own buffers (segs, segs_bytes of them unsent) */
	uint8_t *out;
	size_t out_len, out_off, out_cap;
	struct smb_out_seg *segs, *segs_tail;
	size_t segs_bytes;
	bool want_out, reading;
	uint32_t ev_mask;            /* the epoll events asked for (ev_set: asked at all) */
	bool ev_set;
	/* the room of the last reply, kept for the next one while the
	 * connection is busy (smb_dispatch_frame; the sweep frees it after
	 * SMB_SRV_RSP_IDLE_S idle): a stream of READs writes into pages it
	 * has, not into fresh ones that fault in at every READ */
	struct ut_buf rsp;
	/* the room an encrypted reply is sealed into (smb_dispatch_send_encrypted),
	 * kept as rsp is; a queued one taken comes back once written */
	struct ut_buf seal;
	struct ut_buf seal_spare[SMB_SRV_SEAL_SPARES]; /* more of them, sent: a new seal's room before a new buffer */
	/* protocol */
	bool negotiated;
	uint16_t dialect;
	uint16_t cipher, signing;
	uint32_t client_caps, server_caps;
	uint16_t client_secmode;
	uint8_t client_guid[16];
	uint8_t preauth[SMB_CRYPTO_PREAUTH_LEN];
	uint32_t credits;            /* granted and not yet used */
	struct smb_async *pending;   /* requests answered STATUS_PENDING (smb_async.c) */
	unsigned npending;
	uint64_t next_async;
	unsigned nframes;            /* its compounds parked for a READ (smb_frame.c) */
	bool freeing;                /* being freed: waiters go without an answer */
	struct smb_sess *sessions;
	struct smb_chan *chans;      /* channels bound here of sessions set up on other connections */
	uint64_t next_sess, next_open;
	time_t accepted, last;
	bool authed, closing;
};

#define SMB_SRV_IFACES_MAX 16u /* addresses FSCTL_QUERY_NETWORK_INTERFACE_INFO names */

/* One address for multichannel clients (smb_iface.c). */
struct smb_srv_iface {
	bool v6;
	uint8_t addr[16];            /* network order; IPv4 in the first 4 */
	uint32_t ifindex;
	uint64_t speed;              /* bits per second */
};

struct smb_srv {
	char listen[128];
	struct smb_srv_iface ifaces[SMB_SRV_IFACES_MAX]; /* set at start (smb_iface_collect) */
	size_t nifaces;
	struct vol_store *store;
	int lfd, epfd, evfd;
	pthread_t thr;
	bool started, stop;
	uint16_t port;
	uint8_t guid[16];
	uint64_t start_time;
	struct smb_conn *conns;
	unsigned nconns;
	uint64_t next_key;
	pthread_mutex_t cfg_lock;
	struct smb_cfg cfg;
	pthread_mutex_t rel_lock;
	struct smb_conn **released;  /* parked frames the QoS timer handed back */
	size_t nreleased, released_cap;
	unsigned npending;           /* async requests on the node (loop thread) */
	unsigned ncreates;           /* of which CREATEs waiting for a break (loop thread) */
	struct smb_open *durable;    /* durable opens whose connection dropped (smb_durable.c) */
	unsigned ndurable;
	uint64_t next_open;          /* FileIds, unique on the server: a durable open keeps its own */
	uint64_t next_group;         /* cached-open groups (smb_lease.c, loop thread) */
	int async_woken;             /* a waiter was woken (atomic: any thread) */
	struct smb_read_pool *reads; /* READs off the loop (smb_read.c), from the first */
	bool admit_waiting;          /* a parked frame waits for its interim (smb_dispatch_admit_tick) */
	uint64_t reads_deferred;     /* READs given to it (loop thread) */
	uint64_t reads_inline;       /* READs that may block served on the loop: its caps were reached */
	uint64_t reads_ended;        /* jobs answered or dropped (loop thread) */
	unsigned nframes;            /* compounds parked for a READ (smb_frame.c, loop thread) */
	uint64_t park_copies;        /* of them whose bytes were copied to park (not their receive buffer) */
	/* the caps on opens (atomic: smb_srv_set_open_limits from any thread) */
	unsigned sess_opens_max, opens_max;
	unsigned nopens;             /* opens alive: sessions', kept durable ones, released ones a READ holds (loop thread) */
	uint64_t opens_refused;      /* CREATEs answered INSUFFICIENT_RESOURCES by a cap (loop thread) */
};

/* One message of a frame being served. */
struct smb_req {
	struct smb_conn *c;
	struct smb_wire_msg m;
	struct ut_buf *out;    /* the response body goes at out->len */
	size_t hdr_off;              /* where its header is */
	struct smb_sess *sess;       /* may be NULL */
	struct smb_tree *tree;       /* may be NULL */
	bool encrypted;              /* the request came in a transform */
	uint64_t rsp_session;        /* SessionId the response names */
	uint32_t rsp_tree;
	struct smb_wire_fid *related; /* the previous open of a compound */
	bool sign_rsp;               /* sign even if the request was not (final SESSION_SETUP) */
	struct smb_sess *sign_sess;
	struct smb_chan *bind_chan;  /* a binding SESSION_SETUP's channel: its hash takes the answer as signed */
	bool last;                   /* the last message of its frame: it may go async */
	uint64_t async_id;           /* set with STATUS_PENDING: the interim response's AsyncId */
	uint64_t async_final;        /* nonzero: the final answer after an interim with this AsyncId
				      * (async, CreditResponse 0: the credits went with the interim) */
	struct smb_async *resume;    /* a waiting CREATE served again (smb_async.c) */
	bool keep_body;              /* an error answered with the handler's body (SRV_COPYCHUNK's counts) */
	/* compounds (MS-SMB2 3.3.5.2.7): a related request works on the
	 * previous request's session and tree, and a FileId of all ones names
	 * the open the chain's last CREATE made; a CREATE of the chain that
	 * failed is what its related requests answer (Windows, Samba) */
	bool chained;
	uint32_t chain_err;
	uint32_t status;             /* what smb_serve_msg answered */
	bool lone;                   /* the only message of its frame: a READ may be deferred */
	bool deferred;               /* a worker answers it (smb_read.c): nothing now */
	struct smb_frame *frame;     /* the frame being served (smb_frame.c); NULL outside one */
	struct smb_read_job *read_job; /* set with deferred: the worker's job */
	struct smb_async *wait;      /* or a compound's CREATE waiting for a break (smb_async.c) */
	bool park;                   /* smb_frame_park_ready said yes: a deferred r parks its frame */
};

typedef uint32_t (*smb_handler_fn)(struct smb_req *r);

/* smb_dispatch.c */
void smb_dispatch_frame(struct smb_conn *c, uint8_t *frame, size_t len);
/* One message of a frame served into r->out (smb_frame.c calls it for
 * each); msg_end: the end of its answer (ERROR body, credits, header) once
 * the body from body_at holds what the handler wrote. */
void smb_dispatch_msg(struct smb_req *r);
void smb_dispatch_msg_end(struct smb_req *r, uint32_t status, size_t body_at);
/* smb_frame.c: a frame's messages served in order and answered as one.
 * serve: frame[0..len) (the caller's; plain: decrypted bytes the frame
 *   takes, enc_sess their session, else NULL) served and answered, or
 *   parked while a worker reads one of its READs.
 * park_ready: r, a request that would wait (a compound's READ, a WRITE
 *   that syncs, a FLUSH), may park its frame (the caps, the bytes made the
 *   frame's own, r->m and r->park set): false: serve it on the loop.
 * resume: the parked READ ended with status (and, on success, its READ
 *   response body and data): its answer, the rest of the frame served, the
 *   whole answered (or parked again).
 * resume_call: the same for a parked request that finishes on the loop (a
 *   CREATE whose overwrite a worker made): fn is called once, with the
 *   parked request (its session and tree still there: it serves the
 *   message, its answer body into r->out after the header, and returns its
 *   status) or with NULL (they went: it frees arg; the answer is the error
 *   resume gives).
 * free: a parked frame whose connection went (no answer). */
typedef uint32_t (*smb_frame_cont)(struct smb_req *r, void *arg, int rc);
/* async_id: nonzero when a lone request's interim went (its answer is then async). */
void smb_frame_serve(struct smb_conn *c, const uint8_t *frame, size_t len, uint8_t *plain, struct smb_sess *enc_sess);
bool smb_frame_park_ready(struct smb_req *r);
void smb_frame_resume(struct smb_frame *f, uint32_t status, const uint8_t *body, size_t body_len);
void smb_frame_resume_call(struct smb_frame *f, smb_frame_cont fn, void *arg, int rc, uint64_t async_id);
void smb_frame_free(struct smb_frame *f);
uint32_t smb_status_from_errno(int err);
struct smb_sess *smb_sess_find(struct smb_conn *c, uint64_t id);
struct smb_tree *smb_tree_find(struct smb_sess *s, uint32_t id);
struct smb_open *smb_open_find(struct smb_req *r, const struct smb_wire_fid *fid);
/* smb_admit.c: QoS admission of a frame before it is served. admit: the
 * plain (decrypted) frame's READs, WRITEs and COPYCHUNKs charged to their
 * volumes (their trees', a related one's tree the chain's; a copy's source
 * on its open's), one volume after the
 * other: QOS_PARKED: c->qi is parked on one of them, the rest to charge
 * kept in c->admit (admit_free drops it). recv: a received frame
 * (heap, taken) unsealed (smb_dispatch_unseal), admitted and served, or
 * kept on c parked (decrypted, with the id of the session that sealed it).
 * resume: c's parked frame, released: charged on its next volumes (parked
 * again on one over its limit), then served without a second charge (a
 * sealed one whose session went is dropped: nothing could answer it). */
int smb_dispatch_admit(struct smb_conn *c, const uint8_t *frame, size_t len);
void smb_dispatch_admit_free(struct smb_conn *c);
int smb_dispatch_recv(struct smb_conn *c, uint8_t *frame, size_t len);
/* recv_cap: of a frame in c's receive buffer of cap bytes, which, served,
 * goes to smb_conn_in_keep. in_keep: a served frame's buffer is c's next
 * frame's room if SMB_SRV_IN_KEEP or more and none is kept (a stream of
 * 1 MiB WRITEs lands in pages it has; the sweep frees it after
 * SMB_SRV_RSP_IDLE_S idle), else freed. smb_conn_read: the loop's read of
 * c's socket, frames dispatched as they complete; -1: close. */
int smb_dispatch_recv_cap(struct smb_conn *c, uint8_t *frame, size_t len, size_t cap);
void smb_conn_in_keep(struct smb_conn *c, uint8_t *buf, size_t cap);
int smb_conn_read(struct smb_conn *c);
void smb_dispatch_resume(struct smb_conn *c);
/* tick (each turn of the loop): a parked frame still waiting
 * SMB_READ_PENDING_MS gets its interim response (smb_dispatch_interim), as
 * a lone READ a worker has: for its request, or a compound's first READ,
 * WRITE or IOCTL; that final answer is then async (serve_async).
 * Whether a parked frame still waits for its interim (the loop then turns
 * every SMB_READ_TICK_MS). */
bool smb_dispatch_admit_tick(struct smb_srv *srv);
/* smb_dispatch.c: unseal: a transform decrypted in place (the message is
 * then frame + SMB2_TRANSFORM_LEN, len - SMB2_TRANSFORM_LEN bytes, in the
 * caller's buffer) with the session that sealed it in *enc (NULL: a plain
 * SMB2 frame, untouched). That session encrypts from then on only once its
 * frame decrypted to an SMB2 frame; a tag that does not verify, or a
 * message that is not SMB2, closes the connection. 0: serve it; -1:
 * nothing to serve (an SMB1 negotiate answered, or the connection closing).
 * serve: p[0..len) (plain, when set, is p, heap, and taken; else p stays
 * the caller's and a frame that parks copies it) through smb_frame_serve,
 * then what it woke. */
int smb_dispatch_unseal(struct smb_conn *c, uint8_t *frame, size_t len, struct smb_sess **enc);
void smb_dispatch_serve(struct smb_conn *c, const uint8_t *p, size_t len, uint8_t *plain, struct smb_sess *enc);
/* The interim response (MS-SMB2 3.3.4.2) of the request whose header is q,
 * on c: async with a new AsyncId, STATUS_PENDING, the credits q asks (they
 * go with it: the final answer grants none), an ERROR body; not signed,
 * encrypted when the request was or its session encrypts. The AsyncId, or
 * 0 when q's session is gone (nothing sent). */
uint64_t smb_dispatch_interim(struct smb_conn *c, const struct smb_wire_hdr *q, bool encrypted);
/* Sign the message at [off, end) of out / wrap out in a transform and queue
 * it, for s (sealed into c->seal, not a fresh buffer per reply). */
void smb_dispatch_sign(struct smb_conn *c, struct smb_sess *s, struct ut_buf *out, size_t off, size_t end);
void smb_dispatch_send_encrypted(struct smb_conn *c, struct smb_sess *s, const struct ut_buf *out);
/* The signing algorithm of c's dialect and negotiate contexts (SMB2_SIGNING_*). */
uint16_t smb_dispatch_sign_alg(const struct smb_conn *c);
/* A response's CreditResponse (MS-SMB2 3.3.1.2): charge taken from c's
 * credits, what the request asked granted within SMB_SRV_CREDITS_MAX (at
 * least 1 when c would hold none). */
uint16_t smb_dispatch_credits(struct smb_conn *c, uint16_t charge, uint16_t asked);
/* smb_read.c: READs that may block, served by a worker pool.
 * queue: r (a lone READ of o, checked) becomes a job: STATUS_PENDING and
 *   r->deferred (nothing to answer now); STATUS_INSUFFICIENT_RESOURCES or
 *   STATUS_NO_MEMORY when a cap is reached or there is no pool: the caller
 *   reads on the loop.
 * run: the loop answers the jobs the workers finished (smb_async_run calls it).
 * tick: jobs unanswered SMB_READ_PENDING_MS get their interim response.
 * busy: jobs are out (the loop then turns every SMB_READ_TICK_MS).
 * cancel: a CANCEL of s on c, by AsyncId (async) or MessageId: whether a job was it.
 * conn_gone: c is going: its queued jobs go, running ones end unanswered.
 * stop: join the workers, free every job (connections already gone). */
uint32_t smb_read_queue(struct smb_req *r, struct smb_open *o, const struct smb_wire_read_req *q);
/* A WRITE (stable: file-sync) / a FLUSH of o as a job, as smb_read_queue;
 * r's frame must be ready to park (smb_frame_park_ready: q's data lies in
 * its own bytes): the frame waits for it, lone or not. */
uint32_t smb_read_queue_write(struct smb_req *r, struct smb_open *o, const struct smb_wire_write_req *q, bool stable);
uint32_t smb_read_queue_flush(struct smb_req *r, struct smb_open *o);
/* The cut to size 0 of o's file (a CREATE that overwrites a cold file) as a
 * job, as smb_read_queue_write (a lone CREATE gets its interim after
 * SMB_READ_PENDING_MS, as a lone READ); when it ends the loop resumes r's frame
 * with fn(r, arg, the truncate's result; -ECANCELED: a CANCEL came before a
 * worker took it, nothing was cut) (smb_frame_resume_call); a job dropped
 * with its connection calls fn(NULL, arg, 0). */
uint32_t smb_read_queue_trunc(struct smb_req *r, struct smb_open *o, smb_frame_cont fn, void *arg);
void smb_read_run(struct smb_srv *srv);
void smb_read_tick(struct smb_srv *srv);
bool smb_read_busy(const struct smb_srv *srv);
bool smb_read_cancel(struct smb_conn *c, const struct smb_sess *s, bool async, uint64_t id);
void smb_read_conn_gone(struct smb_conn *c);
void smb_read_stop(struct smb_srv *srv);
/* The frame f waits for job j (queued by a READ of f): j's end resumes it. */
void smb_read_attach(struct smb_read_job *j, struct smb_frame *f);
/* smb_srv.c */
/* Write what c has queued and re-arm its epoll events (a reply sent outside its frame). */
void smb_conn_kick(struct smb_conn *c);
/* Drop c: its sessions, opens, locks and waiting requests, its socket (the loop; tests). */
void smb_conn_free(struct smb_conn *c);
/* Send one frame (its length prefix added) after what c has queued: what is
 * queued is written first as far as the socket takes it; then the frame
 * goes from the caller's buffer, and only what the socket leaves of it is
 * copied into c's queue. */
void smb_conn_send(struct smb_conn *c, const uint8_t *payload, size_t len);
/* A reply queued whole in its own buffer (smb_conn_send_buf): its length
 * prefix, then b; off of those bytes written. */
struct smb_out_seg {
	struct smb_out_seg *next;
	uint8_t pfx[4];
	struct ut_buf b;
	size_t off;
};
/* As smb_conn_send for the reply in b, but when the socket leaves
 * SMB_SRV_OUT_TAKE bytes of it or more (or replies are queued that way
 * already), b's buffer is taken into c's queue instead of copied (b is left
 * empty); once written it becomes c->rsp, the room of the next reply, when
 * that is free and b was a frame's (max SMB_WIRE_FRAME_MAX). */
void smb_conn_send_buf(struct smb_conn *c, struct ut_buf *b);
/* The QoS release of a parked frame (struct qos_item.release). */
void smb_srv_release(void *arg, struct qos_item *it);
uint64_t smb_filetime_now(void);
uint64_t smb_filetime(const struct timespec *ts);
/* Look up a user (copied out) / share by name under cfg_lock. */
size_t smb_srv_users(struct smb_srv *srv, const char *name, struct smb_srv_user *out, size_t cap);
bool smb_srv_share(struct smb_srv *srv, const char *name, struct smb_srv_share *out);
/* smb_sess.c */
uint32_t smb_sess_negotiate(struct smb_req *r);
uint32_t smb_sess_setup(struct smb_req *r);
uint32_t smb_sess_logoff(struct smb_req *r);
void smb_sess_free(struct smb_conn *c, struct smb_sess *s);
int smb_sess_smb1(struct smb_conn *c, const uint8_t *frame, size_t len);
/* The key that signs s's messages on c: its channel's there, else the
 * session's (its first channel's; a binding in progress signs with it);
 * *cx: the contexts that keep that key (the channel's or the session's). */
const uint8_t *smb_sess_signing_key(struct smb_sess *s, const struct smb_conn *c, uint16_t *alg,
				    struct smb_crypto_ctx **cx);
/* The algorithm of the session's own key (its first channel's connection's). */
uint16_t smb_sess_sign_alg(const struct smb_sess *s);
/* c is going: its channels of other connections' sessions go, and each of
 * its own sessions that has a bound channel elsewhere moves to that
 * channel's connection (its trees, opens and grants untouched). Returns
 * how many moved (their opens' locks must then stay). */
unsigned smb_sess_conn_gone(struct smb_conn *c);
/* Every connection s is on (its home first), for what waits per connection. */
size_t smb_sess_conns(const struct smb_sess *s, struct smb_conn **out, size_t cap);
/* smb_tree.c */
uint32_t smb_tree_connect(struct smb_req *r);
uint32_t smb_tree_disconnect(struct smb_req *r);
/* The cred a change on share t is made with, user's own plus
 * VOL_CRED_DEFER_SYNC (agent/vol/vol.h) unless the share's volume is
 * CONTINUOUSLY_AVAILABLE or write_through (the open's FILE_WRITE_THROUGH)
 * or t is NULL (a kept durable open's, its tree gone):
 * SMB makes names and attributes stable on FLUSH (vol_commit) and on
 * write-through, not on each change (MS-SMB2 3.3.5.11, as Samba). */
struct vol_cred smb_tree_cred(const struct smb_tree *t, const struct vol_cred *user, bool write_through);
void smb_tree_free(struct smb_sess *s, struct smb_tree *t);
uint32_t smb_tree_ioctl(struct smb_req *r);
/* smb_open.c */
uint32_t smb_open_create(struct smb_req *r);
uint32_t smb_open_close(struct smb_req *r);
uint32_t smb_open_read(struct smb_req *r);
uint32_t smb_open_write(struct smb_req *r);
uint32_t smb_open_flush(struct smb_req *r);
void smb_open_free(struct smb_sess *s, struct smb_open *o, bool closing);
/* Whether r's session may hold one more open and, unless `counted` (a
 * kept durable open coming back is in the node's count already), the
 * node: STATUS_SUCCESS, else STATUS_INSUFFICIENT_RESOURCES (counted in
 * srv->opens_refused, logged). O(1): s->nopens and srv->nopens. */
uint32_t smb_open_room(struct smb_req *r, bool counted);
/* The end of a freed open: its vol_obj and struct, now, or (o->nreads) by
 * the last READ job of it. */
void smb_open_release(struct smb_open *o);
void smb_open_attrs(const struct smb_open *o, struct smb_wire_attrs *a);
/* o's DOS attributes as the store keeps them (VOL_DOS_KEPT bits), or the
 * default of a file never given any (ARCHIVE; a directory: none). */
uint32_t smb_open_dos(const struct smb_open *o);
/* Whether o was opened with every bit of an access mask (GENERIC_* mapped,
 * MAXIMUM_ALLOWED and GENERIC_ALL take all) / for reading data (READ_DATA
 * or EXECUTE, as Windows' and Samba's read check). */
bool smb_open_may(const struct smb_open *o, uint32_t bits);
bool smb_open_may_read(const struct smb_open *o);
int smb_open_walk(struct smb_tree *t, const struct vol_cred *cred, const char *path, struct vol_obj *start,
		  struct vol_obj *parent, char *leaf, size_t leafcap);
int smb_open_path(const uint8_t *name, size_t len, char *out, size_t cap);
/* smb_lock.c */
uint32_t smb_lock_lock(struct smb_req *r);
/* o's share reservation for this DesiredAccess and ShareAccess:
 * STATUS_SHARING_VIOLATION when another open's stands in the way. */
uint32_t smb_lock_share(struct smb_open *o, uint32_t desired_access, uint32_t share_mode);
/* Whether DesiredAccess asks to write data (an open for writing). */
bool smb_lock_wants_write(uint32_t desired_access);
/* May o read or write these bytes: STATUS_FILE_LOCK_CONFLICT when another
 * open's lock (or, for a write, any shared lock) covers them. */
uint32_t smb_lock_io(const struct smb_open *o, uint64_t offset, uint64_t length, bool write);
/* Drop what an open / a connection holds in the table. */
void smb_lock_open_gone(struct smb_open *o);
void smb_lock_conn_gone(struct smb_conn *c);
/* One element of a LOCK tried again: 0 or the table's -errno; its NTSTATUS. */
int smb_lock_try(struct smb_open *o, const struct smb_wire_lock_elem *e);
uint32_t smb_lock_status(int rc);
/* smb_async.c: requests answered STATUS_PENDING (MS-SMB2 3.3.4.2):
 * blocking LOCKs and CHANGE_NOTIFY. lock: queue r's element e on o (the first try was
 * refused): STATUS_PENDING with r->async_id set, STATUS_SUCCESS when a try
 * after registering grants it, STATUS_INSUFFICIENT_RESOURCES past a cap
 * (SMB_ASYNC_PER_CONN, SMB_ASYNC_NODE_MAX, the table's waiters); bucket
 * (one of o->lock_seq, or NULL) gets seq when run grants it (3.3.5.14).
 * cancel: SMB2 CANCEL h (3.3.5.16). open_gone: o closes: its waiters are
 * tried once more (granted, or STATUS_RANGE_NOT_LOCKED). conn_gone: free
 * c's silently. run: retry the woken waiters (the loop, on its eventfd). */
uint32_t smb_async_lock(struct smb_req *r, struct smb_open *o, const struct smb_wire_lock_elem *e, uint8_t *bucket,
			uint8_t seq);
void smb_async_cancel(struct smb_conn *c, const struct smb_wire_msg *m, bool encrypted);
void smb_async_open_gone(struct smb_conn *c, struct smb_open *o);
void smb_async_conn_gone(struct smb_conn *c);
void smb_async_run(struct smb_srv *srv);
/* A CHANGE_NOTIFY on o waits (output_len: its OutputBufferLength):
 * STATUS_PENDING with r->async_id set, or STATUS_INSUFFICIENT_RESOURCES
 * past a cap. It ends with the changes (smb_notify_collect), CANCELLED, or
 * NOTIFY_CLEANUP when o closes (CLOSE, TREE_DISCONNECT, LOGOFF). */
uint32_t smb_async_notify(struct smb_req *r, struct smb_open *o, uint32_t output_len);
/* A CREATE (or a SET_INFO renaming a file: the same request is served
 * again) waits for the breaks of cached opens of other groups than
 * `group` on key to be acknowledged (or to time out: vol_lease_timeout,
 * then revoked): STATUS_PENDING with r->async_id set (a copy of the request
 * is kept and served again then, its final answer async), or
 * STATUS_INSUFFICIENT_RESOURCES past a cap. A CREATE that is not the last
 * message of its compound parks its frame instead (r->deferred, r->park,
 * r->wait; no interim is sent): once the break is over the frame goes on
 * from it (smb_frame_resume_call) and is answered whole; its frame cannot
 * park (the caps): STATUS_NOT_SUPPORTED.
 * attach: the frame f waits for a (frame_park). */
uint32_t smb_async_create(struct smb_req *r, const struct vol_lock_key *key, uint64_t group);
void smb_async_attach(struct smb_async *a, struct smb_frame *f);
/* The loop's periodic turn: CREATEs whose break timed out go on. */
void smb_async_tick(struct smb_srv *srv);
/* smb_notify.c: CHANGE_NOTIFY (MS-SMB2 3.3.5.19). collect: o's queued
 * changes as FILE_NOTIFY_INFORMATION records (MS-FSCC 2.4.42) appended to
 * recs: STATUS_SUCCESS, STATUS_NOTIFY_ENUM_DIR (changes lost, or more than
 * output_len bytes of them), STATUS_DELETE_PENDING (the directory was
 * removed), or STATUS_PENDING (none yet). */
uint32_t smb_notify_change(struct smb_req *r);
/* Whether an open on the server has the folder dir open with DELETE
 * access: a rename into it is then a sharing violation (what Windows and
 * Samba answer; smbtorture smb2.oplock.batch19). */
bool smb_open_dir_delete_held(struct smb_srv *srv, const struct vol_obj *dir);
/* smb_lease.c: the oplock or lease of a CREATE (after the open has its
 * file and reservation): rsp's OplockLevel and, for a lease, its context
 * (written into ctx_buf and *ctx); STATUS_INVALID_PARAMETER for a lease
 * key of another file or a bad context. */
/* Before a CREATE of an existing file touches it: o->group set, and the
 * breaks its open makes in other groups' caching (W; with overwrite R and
 * W; share_conflict: H alone, a sharing violation standing only while
 * another client caches the handle: W goes when an open succeeds). STATUS_SUCCESS to go on,
 * STATUS_PENDING when the CREATE waits (smb_async_create), or an error. */
uint32_t smb_lease_contend(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			   bool overwrite, bool share_conflict);
/* Whether another group caches o's file's handle (H): a sharing violation
 * is then broken first. */
bool smb_lease_handle_cached(struct smb_srv *srv, const struct smb_open *o);
/* How o's data-changing operations present themselves to the table. */
void smb_lease_by(const struct smb_open *o, struct vol_lease_by *by);
/* Before o's file is renamed: the clients of other groups caching its
 * handle (H) give it back first: STATUS_SUCCESS to go on, STATUS_PENDING
 * when the SET_INFO waits (smb_async_create), or an error. A SET_INFO that
 * is not the last message of its compound does not wait (the holders are
 * told, the rename goes on). */
uint32_t smb_lease_rename(struct smb_req *r, struct smb_open *o);
/* Before o's file is marked delete-pending (SET_INFO disposition): NFSv4.1
 * delegations on it are recalled (VOL_LEASE_OPEN_W) and waited for, as for
 * smb_lease_rename (SMB leases are untouched: their H goes at the delete). */
uint32_t smb_lease_delete(struct smb_req *r, struct smb_open *o);
/* o took a byte-range lock (at once, or a waited one when it is granted,
 * smb_async.c): Level II oplocks and R leases on its file (o's own Level II
 * too) are broken to none (no acknowledgment), RH leases of other groups to
 * none with an acknowledgment nobody waits for; the loop sends the breaks. */
void smb_lease_lock(struct smb_srv *srv, const struct smb_open *o);
/* A SET_INFO allocation size that leaves o's file as it is: the read
 * caches of other groups (and o's own Level II) go, as a write's would. */
void smb_lease_alloc(struct smb_req *r, const struct smb_open *o);
/* smb_alloc.c: an open's allocation size and the capacity it holds.
 * hold: o's AllocationSize becomes size, the bytes past its file's end held
 *   on the volume (more: STATUS_DISK_FULL when they do not fit, nothing
 *   changed; less: given back). set: SET_INFO FileAllocationInformation
 *   (the caller checked FILE_WRITE_DATA: smb_info_set; under the end of
 *   file cuts the file). fill: before a
 *   WRITE or end-of-file change of o reaching end, the held part it fills
 *   is given back. drop: everything o holds given back. */
uint32_t smb_alloc_hold(struct smb_open *o, uint64_t size);
uint32_t smb_alloc_set(struct smb_req *r, struct smb_open *o, uint64_t size);
void smb_alloc_fill(struct smb_open *o, uint64_t end);
void smb_alloc_drop(struct smb_open *o);
uint32_t smb_lease_grant(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			 struct smb_wire_create_rsp *rsp, struct ut_buf *ctx_buf, struct smb_wire_create_rsp_ctx *ctx);
/* smb_durable.c: durable handles v1 and v2 (MS-SMB2 3.3.5.9.6/7/10/12),
 * kept in the agent's memory only. grant: after the oplock/lease of a
 * CREATE, answer a DHnQ or DH2Q context (into ctx[rsp->ctx_count], data in
 * buf, at least 8 bytes) when the open holds a BATCH oplock or a lease with
 * H: STATUS_INVALID_PARAMETER for both DHnQ and DH2Q. reconnect: a CREATE
 * with DHnC or DH2C: the disconnected open back in r's session, answered
 * into r->out, or STATUS_OBJECT_NAME_NOT_FOUND (none, another CreateGuid,
 * share or lease key), STATUS_ACCESS_DENIED (another user),
 * STATUS_INSUFFICIENT_RESOURCES (r's session holds its cap of opens: the
 * open stays kept).
 * conn_gone: c drops: its durable opens are kept (their locks, share
 * reservations and grants stay in the store) for their timeout; returns
 * how many. run: a kept open whose grant must be broken with an ack (it
 * cannot ack) or whose timeout passed is closed (the loop). free_all: close
 * every kept open (the server stops). */
uint32_t smb_durable_grant(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			   struct smb_wire_create_rsp *rsp, struct smb_wire_create_rsp_ctx *ctx, uint8_t *buf);
bool smb_durable_asked(const struct smb_wire_create_req *q);
/* STATUS_INVALID_PARAMETER for a v2 durable context with another one in q. */
uint32_t smb_durable_check(const struct smb_wire_create_req *q);
uint32_t smb_durable_reconnect(struct smb_req *r, const struct smb_wire_create_req *q);
unsigned smb_durable_conn_gone(struct smb_conn *c);
/* s logs off: its durable opens are kept as when its connection drops. */
unsigned smb_durable_sess_gone(struct smb_conn *c, struct smb_sess *s);
void smb_durable_run(struct smb_srv *srv);
void smb_durable_free_all(struct smb_srv *srv);
/* A session set up with PreviousSessionId prev (MS-SMB2 3.3.5.5.3): the
 * previous session of the same user, on any connection, ends (its requests
 * get USER_SESSION_DELETED), its durable opens kept for a reconnect, its
 * other opens closed. Another user's session, or none: nothing. */
void smb_durable_prev_session(struct smb_req *r, uint64_t prev);
/* APP_INSTANCE_ID (MS-SMB2 3.3.5.9.13; 3.x only, not with DH2C): a CREATE of
 * path on r's share carrying the AppInstanceId of an open of another client
 * (another ClientGuid; live, or kept durable) closes that open first
 * (failover clusters, Hyper-V), unless a 3.1.1 APP_INSTANCE_VERSION says
 * the old open is as new or newer: STATUS_FILE_FORCED_CLOSED, nothing
 * closed. Then o (the new open) takes the id and version. */
uint32_t smb_durable_app(struct smb_req *r, const struct smb_ctx_req *cx, struct smb_open *o);
/* Drop o's grant (before o is freed). */
void smb_lease_open_gone(struct smb_open *o);
/* Send the break of o (of session s on c) that the store flagged; true when sent. */
bool smb_lease_run(struct smb_conn *c, struct smb_sess *s, struct smb_open *o);
/* c is going (its sessions moved to other channels or freed): every break
 * that went out on c and waits for its acknowledgment is sent again, on the
 * connection now holding its open's session (another channel, MS-SMB2
 * 3.3.4.6) or, for a lease, on another connection of the client with an
 * open of it (3.3.4.7), with the same epoch; how many. */
unsigned smb_lease_conn_gone(struct smb_conn *c);
/* OPLOCK_BREAK acknowledgment (both forms). */
uint32_t smb_lease_ack(struct smb_req *r);
uint32_t smb_notify_collect(struct smb_open *o, uint32_t output_len, struct ut_buf *recs);

/* CREATE's contexts, information classes, EAs, security descriptors */
#include "agent/smb/smb_srv_info.h"
/* the FSCTLs served on an open or a tree (interfaces, previous versions,
 * server-side copy, sparse files) */
#include "agent/smb/smb_srv_fsctl.h"

#endif
