/* nfs_prog: what an RPC program (NFS v3, MOUNT v3, PORTMAP v2) gives the
 * server: a table of procedures indexed by procedure number, and the
 * per-request context handlers run in. Internal to agent/.
 *
 * The server runs, for every call: decode (failure: GARBAGE_ARGS), the
 * duplicate-request cache for NFS_F_NOT_IDEMPOTENT, then for NFS_F_FH
 * procedures the central checks (args begin with the object's file handle:
 * resolve it -> BADHANDLE/STALE, apply export rules -> ACCES, MODIFIES_DATA
 * on a read-only export -> ROFS), then the handler, encode and free.
 * Results of every NFS_F_FH procedure begin with a uint32_t status, and their
 * encoder writes the failure arm when status != 0, so a central refusal is
 * "zeroed result with status set".
 */
#ifndef AQ_AGENT_NFS_PROG_H
#define AQ_AGENT_NFS_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "agent/nfs/rpc.h"
#include "agent/vol/vol.h"
#include "agent/nfs/xdr.h"

#define NFS_QUICK_BYTES (64u * 1024u)

enum nfs_proc_flags {
	NFS_F_MODIFIES = 1u << 0,       /* refused on read-only exports */
	NFS_F_NOT_IDEMPOTENT = 1u << 1, /* replies kept in the duplicate-request cache */
	NFS_F_FH = 1u << 2,             /* args start with the object's nfs_fh3 */
	/* Answered from memory or the page cache, never waits for a sync: the
	 * worker that read it serves it without handing the loop role on first
	 * (nfs_dispatch.c). READ is quick when it moves at most NFS_QUICK_BYTES,
	 * and so is an UNSTABLE WRITE (nfs3_io_quick): larger ones are worth a
	 * wake-up of another worker, served beside the rest of their run. */
	NFS_F_QUICK = 1u << 3,
	/* Reads or changes the object's data or attributes: after the central
	 * checks, an NFSv4.1 write delegation of another client on the file is
	 * recalled and the call waits for its return or revocation, the loop
	 * role handed on first (nfs_call_recall), so the holder's cached writes
	 * are in the store when the handler looks. */
	NFS_F_RECALL = 1u << 4,
	/* With NFS_F_RECALL, reads only the object's attributes: a write
	 * delegation's holder is asked for the size and change it caches
	 * (nfs_call_ask: NFSv4.1 CB_GETATTR) and the call answers with them;
	 * recalled only when the holder does not answer in time. */
	NFS_F_ASK = 1u << 5,
};

struct nfs_srv;

/* A file handle as it came off the wire (points into the record). */
struct nfs_fh3 {
	uint32_t len;
	const uint8_t *data;
};

struct nfs_call {
	struct nfs_srv *srv;
	struct vol_store *store;
	const struct sockaddr *peer;
	uint16_t port;               /* our listening port (PORTMAP answers it) */
	const uint8_t *wverf;        /* 8-byte write verifier of this server run */
	struct rpc_cred rcred;       /* as sent */
	struct vol_cred cred;        /* raw caller identity (nobody for AUTH_NONE) */
	/* Filled by the central checks for NFS_F_FH procedures: */
	struct vol_obj obj;
	struct vol_cred ecred;       /* after squash */
	enum vol_access access;
	/* Payload sent after the encoded result without copying (READ). */
	const void *data;
	size_t data_len;
	void *data_owner;            /* free()d after the reply went out */
	/* Or: data_len bytes sent from this file descriptor at file_off
	 * (sendfile), closed after the reply when file_owned. */
	int file_fd;
	uint64_t file_off;
	bool file_owned;
	uint64_t io_bytes;           /* for counters */
	/* READ of cold data: when may_defer, the handler sets deferred instead of
	 * waiting for the object store; the server then hands the request to its
	 * cold pool, which resumes it where it stopped (nfs-ganesha's
	 * NFS_REQ_ASYNC_WAIT / resume): the decoded arguments, the resolved
	 * object and the access verdict are kept, and the handler runs once more
	 * with may_defer false and resumed true, so it neither re-checks nor
	 * re-reads what it already learnt (the tier counts each READ once). */
	bool may_defer;
	bool deferred;
	bool resumed;
	/* What the program was registered with (nfs_srv_add_prog), and the
	 * connection the call came on (a key that stays while it is open:
	 * NFSv4.1 binds connections to sessions). */
	void *ctx;
	uint64_t conn_id;
	struct nfs_conn *conn;       /* the same connection, for nfs_call_conn_hold; NULL outside a server */
};

/* A request's QoS charge, when a program's calls have one (nfs_prog.qos):
 * the handle of the object, the kind and the bytes. */
struct nfs_qos_charge {
	const uint8_t *fh;           /* into the call's arguments */
	size_t fh_len;
	enum qos_kind kind;
	uint64_t bytes;
};

struct nfs_proc {
	const char *name;
	int (*decode)(struct xdr_cur *cur, void *args);
	void (*handler)(struct nfs_call *call, void *args, void *res);
	void (*encode)(struct ut_buf *buf, void *res, struct nfs_call *call);
	void (*free)(void *res);
	unsigned flags;
	uint32_t args_size, res_size;
};

/* Before a call reads or changes obj's data or attributes (a flag
 * NFS_F_RECALL procedure's object, an NLM lock's file): recall every write
 * delegation on obj's file (vol_lease_access) and, when one was out, hand
 * the loop role on (its holder's DELEGRETURN comes through the loop), wait
 * for it to be returned or revoked, and refresh obj's attributes. */
void nfs_call_recall(struct nfs_call *call, struct vol_obj *obj);

/* Before a call reads only obj's attributes (an NFS_F_ASK procedure, another
 * v4.1 client's GETATTR; group: the caller's lease group, 0 for none):
 * when a write delegation of another group is on obj's file, hand the loop
 * role on and ask its holder (vol_lease_ask) for the size and change it
 * caches; with its answer obj->st carries them (vol_lease_attr_apply).
 * Returns 0 (no delegation in the way), 1 (answered, obj->st patched), or
 * vol_lease_ask's negative codes: the caller recalls instead. */
int nfs_call_ask(struct nfs_call *call, struct vol_obj *obj, uint64_t group);

struct nfs_prog {
	uint32_t prog, vers;
	const struct nfs_proc *procs;
	uint32_t nprocs;
	/* Optional: what a call of procedure proc costs under QoS, read from
	 * its raw arguments before anything is served (true: charge it). The
	 * built-in programs leave it NULL (NFSv3 is charged by the server). */
	bool (*qos)(uint32_t proc, const uint8_t *args, size_t len, struct nfs_qos_charge *out);
	/* Optional, for a program that sends calls to its clients on their own
	 * connections (the NFSv4.1 backchannel): reply gets every RPC REPLY
	 * record (rec, len: the whole record from its xid) that arrives on a
	 * connection, on a worker thread (a server program's replies are the
	 * only ones a connection carries to us); stop is called once, first
	 * thing in nfs_srv_stop, and must return only when the program will
	 * send nothing more (nfs_conn_send_call). */
	void (*reply)(void *ctx, uint64_t conn_id, const uint8_t *rec, size_t len);
	void (*stop)(void *ctx);
};

/* The backchannel: a hold on the connection a call came on (call->conn),
 * to send calls to the client on it later (NULL when call->conn is);
 * nfs_conn_put lets it go (accepts NULL). A held
 * connection stays allocated (its socket open) after the client or the
 * server closed it; sends on it then fail. */
struct nfs_conn;
struct nfs_conn *nfs_call_conn_hold(const struct nfs_call *call);
/* One more hold on a held connection (returns c; NULL gives NULL). */
struct nfs_conn *nfs_conn_hold(struct nfs_conn *c);
void nfs_conn_put(struct nfs_conn *c);
/* Whether c still carries calls (false once it was closed or broke). */
bool nfs_conn_usable(const struct nfs_conn *c);
/* The conn_id calls on c carry (nfs_call.conn_id). */
uint64_t nfs_conn_id(const struct nfs_conn *c);
/* Queue one RPC record on c, sent whole between replies: rec holds a 4-byte
 * record-mark slot then the message; it is taken over (emptied) whatever
 * the outcome. 0, -EPIPE when c is closed or broken, -ENOMEM. Only while
 * the server runs (before the program's stop hook returned). */
int nfs_conn_send_call(struct nfs_srv *srv, struct nfs_conn *c, struct ut_buf *rec);

/* The three programs every server serves on its port (more: nfs_srv_add_prog). */
extern const struct nfs_prog nfs3_prog;
extern const struct nfs_prog mnt_prog;
extern const struct nfs_prog pmap_prog;

/* NFSv3 status for a vol_/errno code. */
uint32_t nfs3_status(int rc);

/* The programs the server serves on its port (PORTMAP GETPORT and DUMP):
 * whether (prog, vers) is one, and the i-th (false past the last). */
bool nfs_srv_serves(struct nfs_srv *srv, uint32_t prog, uint32_t vers);
bool nfs_srv_prog_at(struct nfs_srv *srv, size_t i, uint32_t *prog, uint32_t *vers);

/* MOUNT bookkeeping the server keeps for DUMP/UMNT (nfs_srv.c). */
void nfs_srv_mount_add(struct nfs_srv *srv, const char *host, const char *path);
void nfs_srv_mount_del(struct nfs_srv *srv, const char *host, const char *path);
void nfs_srv_mount_del_host(struct nfs_srv *srv, const char *host);
/* Encode the mount list (mountlist, RFC 1813 appendix I) into buf. */
void nfs_srv_mount_encode(struct nfs_srv *srv, struct ut_buf *buf);

#endif
