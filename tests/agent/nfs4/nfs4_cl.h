/* nfs4_cl: a small NFSv4.1 test client on the project's XDR (agent/nfs/xdr.h):
 * builds RPC calls with AUTH_SYS and COMPOUNDs operation by operation,
 * sends them on a TCP connection and hands back the reply, decoded with the
 * same bounded cursor. Only what the suites need; no state of its own
 * beyond the connection, the session id and the next xid. The connection,
 * the backchannel and the session are in nfs4_cl.c, the operations'
 * arguments and results in nfs4_cl_ops.c. */
#ifndef AQ_TESTS_NFS4_CL_H
#define AQ_TESTS_NFS4_CL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/nfs/xdr.h"

struct nfs4_cl {
	int fd;
	uint32_t xid;
	uint32_t uid, gid;
	uint64_t clientid;
	uint32_t cs_seq;
	uint8_t sess[16];
	uint8_t *rep;           /* the last reply record */
	size_t rep_len;
	uint32_t cs_flags;      /* CREATE_SESSION's csr_flags */
	uint8_t *cb;            /* the last call the server sent us (backchannel) */
	size_t cb_len;
	unsigned ncb;           /* calls received */
	unsigned nnull;         /* CB_NULL probes received (answered unless mute_null; never kept in cb) */
	bool mute_null;         /* leave CB_NULL probes unanswered (a broken backchannel) */
};


struct nfs4_sid {
	uint32_t seqid;
	uint8_t other[12];
};

/* A CB_COMPOUND call as sent: CB_SEQUENCE then CB_RECALLs, or one
 * CB_GETATTR (ngetattr 1: its handle in fh[0], its bitmap's first word in
 * ga_req). */
struct nfs4_cl_cb {
	uint32_t xid, prog, vers, proc, flavor, minor;
	uint8_t sess[16];
	uint32_t seq, slot, nrecalls, ngetattr;
	struct nfs4_sid recall[8];
	uint8_t fh[8][128];
	uint32_t fhlen[8];
	uint32_t ga_req;
};

int nfs4_cl_dial(struct nfs4_cl *c, int port);
void nfs4_cl_close(struct nfs4_cl *c);
/* Start a call of procedure proc of program 100003 version vers into b. */
void nfs4_cl_call_begin(struct nfs4_cl *c, struct ut_buf *b, uint32_t vers, uint32_t proc);
/* Start a COMPOUND of minor version minor with nops operations. */
void nfs4_cl_begin(struct nfs4_cl *c, struct ut_buf *b, uint32_t minor, uint32_t nops);
/* Send b; receive the reply. Returns the accept status (0 SUCCESS) or -1, and
 * points cur at the procedure's result. */
int nfs4_cl_send(struct nfs4_cl *c, struct ut_buf *b, struct xdr_cur *cur);
/* The halves of nfs4_cl_send: send b (0 or -1); receive the next reply.
 * Calls the server sends meanwhile (the backchannel) are kept in c->cb. */
int nfs4_cl_post(struct nfs4_cl *c, struct ut_buf *b);
int nfs4_cl_recv(struct nfs4_cl *c, struct xdr_cur *cur);
/* Wait up to timeout_ms for a call from the server: 1 (in c->cb), 0 none, -1
 * a reply or an error came instead. */
int nfs4_cl_wait_cb(struct nfs4_cl *c, int timeout_ms);
/* Decode c->cb (a CB_COMPOUND): 0 or -1. */
int nfs4_cl_cb_parse(const struct nfs4_cl *c, struct nfs4_cl_cb *out);
/* Answer cb: status 0: CB_SEQUENCE and every CB_RECALL NFS4_OK; else
 * CB_SEQUENCE fails with it. */
int nfs4_cl_cb_reply(struct nfs4_cl *c, const struct nfs4_cl_cb *cb, uint32_t status);
/* Answer cb (one CB_GETATTR): CB_SEQUENCE OK, CB_GETATTR OK with a fattr4
 * of change and size. */
int nfs4_cl_cb_reply_getattr(struct nfs4_cl *c, const struct nfs4_cl_cb *cb, uint64_t change, uint64_t size);
/* The COMPOUND result header: status, tag, *nres. */
uint32_t nfs4_cl_res(struct xdr_cur *cur, uint32_t *nres);
/* One operation's result: its number must be op; returns its status. */
uint32_t nfs4_cl_op(struct xdr_cur *cur, uint32_t op);

/* operations (arguments) */
void nfs4_cl_sequence(struct ut_buf *b, const struct nfs4_cl *c, uint32_t slot, uint32_t seqid, bool cache);
void nfs4_cl_putrootfh(struct ut_buf *b);
void nfs4_cl_putfh(struct ut_buf *b, const uint8_t *fh, uint32_t len);
void nfs4_cl_lookup(struct ut_buf *b, const char *name);
void nfs4_cl_getfh(struct ut_buf *b);
void nfs4_cl_savefh(struct ut_buf *b);
void nfs4_cl_getattr(struct ut_buf *b, uint32_t w0, uint32_t w1);
void nfs4_cl_mkdir(struct ut_buf *b, const char *name);
void nfs4_cl_remove(struct ut_buf *b, const char *name);
void nfs4_cl_open_create(struct ut_buf *b, const char *owner, const char *name, uint32_t mode);
/* OPEN4_CREATE for reading and writing, createattrs the size (an existing
 * file is cut to it) and, with set_mode, the mode: UNCHECKED4 when verf is
 * NULL, else EXCLUSIVE4_1 with verf (8 bytes). */
void nfs4_cl_open_sized(struct ut_buf *b, const char *owner, const char *name, const uint8_t *verf, uint64_t size,
			bool set_mode, uint32_t mode);
/* OPEN4_CREATE UNCHECKED4 of name with share_access and share_deny,
 * createattrs the size alone (0: an existing file is cut, O_TRUNC). */
void nfs4_cl_open_trunc(struct ut_buf *b, const char *owner, const char *name, uint32_t access, uint32_t deny,
			uint64_t size);
void nfs4_cl_open_nocreate(struct ut_buf *b, const char *owner, const char *name, uint32_t access);
void nfs4_cl_write(struct ut_buf *b, const struct nfs4_sid *sid, uint64_t off, const void *data, uint32_t len);
void nfs4_cl_read(struct ut_buf *b, const struct nfs4_sid *sid, uint64_t off, uint32_t count);
void nfs4_cl_close_op(struct ut_buf *b, const struct nfs4_sid *sid);
void nfs4_cl_readdir(struct ut_buf *b, uint64_t cookie, uint32_t maxcount);
void nfs4_cl_rename(struct ut_buf *b, const char *from, const char *to);

/* LOCK of type (1 READ_LT, 2 WRITE_LT): new_owner set: a new lock owner
 * under open stateid sid; NULL: sid is the owner's lock stateid. */
void nfs4_cl_lock(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, uint64_t off, uint64_t len,
		  const struct nfs4_sid *sid, const char *new_owner);
/* The same with reclaim set as asked (a reclaim in grace). */
void nfs4_cl_lock_ex(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, bool reclaim, uint64_t off,
		     uint64_t len, const struct nfs4_sid *sid, const char *new_owner);
/* OPEN of the current file with CLAIM_PREVIOUS (a reclaim), no create. */
void nfs4_cl_open_previous(struct ut_buf *b, const char *owner, uint32_t access);
/* OPEN of name with share_access and share_deny, no create (CLAIM_NULL). */
void nfs4_cl_open_deny(struct ut_buf *b, const char *owner, const char *name, uint32_t access, uint32_t deny);
/* OPEN_DOWNGRADE of open stateid sid to access and deny. */
void nfs4_cl_open_downgrade(struct ut_buf *b, const struct nfs4_sid *sid, uint32_t access, uint32_t deny);
/* VERIFY (op 37) or NVERIFY (op 17) of a fattr4: the bitmap words and the values as encoded. */
void nfs4_cl_verify(struct ut_buf *b, uint32_t op, const uint32_t *words, uint32_t nwords, const void *vals,
		    uint32_t len);
/* RECLAIM_COMPLETE (rca_one_fs false). */
void nfs4_cl_reclaim_complete(struct ut_buf *b);
void nfs4_cl_lockt(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, uint64_t off, uint64_t len,
		   const char *owner);
void nfs4_cl_locku(struct ut_buf *b, uint32_t type, const struct nfs4_sid *sid, uint64_t off, uint64_t len);
void nfs4_cl_free_stateid(struct ut_buf *b, const struct nfs4_sid *sid);

void nfs4_cl_delegreturn(struct ut_buf *b, const struct nfs4_sid *sid);
/* TEST_STATEID of one stateid. */
void nfs4_cl_test_stateid(struct ut_buf *b, const struct nfs4_sid *sid);
/* BIND_CONN_TO_SESSION of c's session, direction dir (1 fore, 2 back, 3 fore or both, 7 back or both). */
void nfs4_cl_bind_conn(struct ut_buf *b, const struct nfs4_cl *c, uint32_t dir);

/* results */
/* After SEQUENCE's status: its result; returns sr_status_flags. */
uint32_t nfs4_cl_sequence_flags(struct xdr_cur *cur);
/* LOCK4denied, after LOCK's or LOCKT's NFS4ERR_DENIED. */
struct nfs4_cl_denied {
	uint64_t off, len, clientid;
	uint32_t type;
	char owner[128];
};
void nfs4_cl_denied(struct xdr_cur *cur, struct nfs4_cl_denied *d);
void nfs4_cl_get_sid(struct xdr_cur *cur, struct nfs4_sid *sid);
/* After an OPEN's status: its stateid, the rest skipped. */
void nfs4_cl_open_res(struct xdr_cur *cur, struct nfs4_sid *sid);
/* The same, with the delegation: *dtype 0 none, 1 read, 2 write (its stateid in *dsid). */
void nfs4_cl_open_res_deleg(struct xdr_cur *cur, struct nfs4_sid *sid, uint32_t *dtype, struct nfs4_sid *dsid);
/* The same, every arm: *dtype 2 (OPEN_DELEGATE_WRITE) with its space limit
 * in *limit (bytes; 0 when none given; may be NULL), 3 (OPEN_DELEGATE_NONE_EXT)
 * with its why_no_delegation4 read into *why (UINT32_MAX otherwise; why NULL:
 * left unread, at the cursor, as nfs4_cl_open_res_deleg leaves it). */
void nfs4_cl_open_res_wdeleg(struct xdr_cur *cur, struct nfs4_sid *sid, uint32_t *dtype, struct nfs4_sid *dsid,
			     uint64_t *limit, uint32_t *why);
/* After SEQUENCE's status: skip its result. */
void nfs4_cl_sequence_res(struct xdr_cur *cur);
/* A session on c: EXCHANGE_ID with owner, CREATE_SESSION asking slots;
 * *got: the slots granted. 0 or the failing status. */
uint32_t nfs4_cl_session(struct nfs4_cl *c, const char *owner, uint32_t slots, uint32_t *got);
/* The same with csa_flags (2: CONN_BACK_CHAN); the answer's in c->cs_flags. */
uint32_t nfs4_cl_session_ex(struct nfs4_cl *c, const char *owner, uint32_t slots, uint32_t *got, uint32_t flags);

#endif
