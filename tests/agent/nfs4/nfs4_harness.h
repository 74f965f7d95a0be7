/* nfs4_harness: the in-process fixture of the suites that drive the NFSv4.1
 * front end next to the other protocols over one store (test_nfs4_share,
 * test_nfs4_deleg, test_nfs4_deleg2). One store with one export (v0, its
 * root holding file "f" = "0123456789", NFSv3 + NFSv4.1 + SMB) served by
 * an in-process NFS server carrying NFSv4.1 and by the SMB dispatcher of
 * tests/agent/smb/smb_harness.h; v4.1 clients (nfs4t_cl) on the NFS port,
 * each with its own session, that build COMPOUNDs led by a SEQUENCE. Every
 * helper fails the running Check test (ck_assert) on anything unexpected
 * instead of returning an error; the NFS status a helper returns is the one
 * of the operation under test.
 *
 * A suite that had private copies of these helpers switches by renaming:
 * struct cl4 -> struct nfs4t_cl, c4_up -> nfs4t_cl_up, c4_up_ex ->
 * nfs4t_cl_up_ex, c4_begin -> nfs4t_begin, c4_send -> nfs4t_send, c4_open
 * -> nfs4t_open (deny 0 for the old two-argument one), c4_fh_op ->
 * nfs4t_fh_op, c4_close / c4_close_all -> nfs4t_close, build_read ->
 * nfs4t_build_read, c4_delegreturn -> nfs4t_delegreturn, c4_ping ->
 * nfs4t_ping, expect_recall -> nfs4t_expect_recall, expect_no_call ->
 * nfs4t_expect_no_call, readable_within -> nfs4t_readable_within, setup's
 * server part -> nfs4t_srv_up, teardown's -> nfs4t_srv_down.
 */
#ifndef AQ_TESTS_NFS4_HARNESS_H
#define AQ_TESTS_NFS4_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/smb/smb_srv_internal.h"
#include "tests/agent/nfs4/nfs4_cl.h"
#include "tests/agent/smb/smb_harness.h"

struct aqt_store;
struct nfs_srv;
struct nfs4_srv;
struct nlm_srv;

/* ---- the servers ---- */

/* What differs between the suites' servers. */
struct nfs4t_spec {
	uint32_t fsid;     /* the export's */
	uint8_t key_byte;  /* its handle key's bytes */
	unsigned threads;  /* the NFS server's workers */
	uint32_t lease_s;  /* the v4.1 lease time; 0: nfs4's default */
	struct nlm_srv **nlm; /* not NULL: NLM v4 served too (no host records), the lock
			       * manager in *nlm (undo with nfs4t_srv_down_nlm) */
};

/* A fresh temporary store *ts with the export above, set live; an NFS
 * server on 127.0.0.1 (any port: nfs_srv_port) over it carrying NFSv4.1 in
 * *nsrv and *v4, started; an SMB server over it in *ssrv (smbt_srv_new).
 * Undo with nfs4t_srv_down. */
void nfs4t_srv_up(const struct nfs4t_spec *spec, struct aqt_store *ts, struct nfs_srv **nsrv, struct nfs4_srv **v4,
		  struct smb_srv **ssrv);

/* Free what nfs4t_srv_up made: ssrv, nsrv, v4, then ts. */
void nfs4t_srv_down(struct aqt_store *ts, struct nfs_srv *nsrv, struct nfs4_srv *v4, struct smb_srv *ssrv);
/* The same when spec.nlm made a lock manager: freed after nsrv, before ts. */
void nfs4t_srv_down_nlm(struct aqt_store *ts, struct nfs_srv *nsrv, struct nfs4_srv *v4, struct smb_srv *ssrv,
			struct nlm_srv *nlm);

/* ---- a v4.1 client ---- */

/* One client: its connection and session, its next SEQUENCE number (slot
 * 0), the COMPOUND being built (b) and the reply being read (cur), and what
 * its last nfs4t_open kept. */
struct nfs4t_cl {
	struct nfs4_cl c;
	uint32_t seq;
	struct nfs4_sid open;    /* the open stateid */
	struct nfs4_sid deleg;   /* the delegation's stateid (dtype 1 or 2) */
	uint32_t dtype;          /* the delegation: 0 none, 1 OPEN_DELEGATE_READ, 2 OPEN_DELEGATE_WRITE,
				  * 3 OPEN_DELEGATE_NONE_EXT */
	uint64_t space_limit;    /* dtype 2: its space limit (NFS_LIMIT_SIZE bytes) */
	uint32_t why;            /* dtype 3: its why_no_delegation4 (WND4_*); otherwise UINT32_MAX */
	uint8_t fh[128];         /* the file's handle */
	uint32_t fhlen;
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t flags;          /* the last SEQUENCE's status flags */
	const char *owner;       /* the open owner of nfs4t_open (NULL: "open-owner") */
	const char *name;        /* the file of v0 nfs4t_open opens (NULL: "f") */
};

/* Zero x, connect it to 127.0.0.1:port and create its session as owner (4
 * slots) with CREATE_SESSION flags csflags; the backchannel
 * (CREATE_SESSION4_FLAG_CONN_BACK_CHAN, 2) must be granted as asked. Close
 * with nfs4_cl_close(&x->c). */
void nfs4t_cl_up(struct nfs4t_cl *x, uint16_t port, const char *owner, uint32_t csflags);
/* The same; with mute_null the client's backchannel never answers a
 * CB_NULL probe (a backchannel that is down). */
void nfs4t_cl_up_ex(struct nfs4t_cl *x, uint16_t port, const char *owner, uint32_t csflags, bool mute_null);

/* Start a COMPOUND of a SEQUENCE and nops more operations in x->b. */
void nfs4t_begin(struct nfs4t_cl *x, uint32_t nops);

/* Send x->b; the reply in x->cur, read past its SEQUENCE (which must be OK;
 * its status flags in x->flags), at the next operation's result. */
void nfs4t_send(struct nfs4t_cl *x);

/* OPEN v0/f (v0/x->name when set; no create) as x->owner with access and deny (OPEN4_SHARE_*
 * bits, access may carry OPEN4_SHARE_WANT_* bits), then GETFH: the OPEN's
 * status; when OK, the open stateid, the delegation (with
 * OPEN_DELEGATE_NONE_EXT its reason in x->why; a CONTENTION or RESOURCE
 * reason must come with ond_server_will_push_deleg / _signal_avail false)
 * and the handle kept in x. */
uint32_t nfs4t_open(struct nfs4t_cl *x, uint32_t access, uint32_t deny);

/* PUTFH of x's handle, then operation op as build puts it (with sid): the
 * status of op, its result left at x->cur. */
uint32_t nfs4t_fh_op(struct nfs4t_cl *x, uint32_t op, void (*build)(struct ut_buf *, const struct nfs4_sid *),
		     const struct nfs4_sid *sid);

/* CLOSE of x's open stateid: its status. */
uint32_t nfs4t_close(struct nfs4t_cl *x);

/* A builder for nfs4t_fh_op: READ of 4 bytes at 0 with sid. */
void nfs4t_build_read(struct ut_buf *b, const struct nfs4_sid *sid);

/* DELEGRETURN of sid on x's handle: its status. */
uint32_t nfs4t_delegreturn(struct nfs4t_cl *x, const struct nfs4_sid *sid);

/* A SEQUENCE alone (renews x's lease): the SEQUENCE's status flags. */
uint32_t nfs4t_ping(struct nfs4t_cl *x);

/* The recall of x's delegation: a CB_COMPOUND on x's connection within
 * 20 s (it is sent at once; the bound is for a loaded machine), CB_SEQUENCE
 * on slot 0 with sequence seq, one CB_RECALL of x->deleg and x's handle;
 * answered (CB_SEQUENCE and CB_RECALL OK) when answer. */
void nfs4t_expect_recall(struct nfs4t_cl *x, uint32_t seq, bool answer);

/* Nothing from the server on x's connection for ms. */
void nfs4t_expect_no_call(struct nfs4t_cl *x, int ms);

/* Whether fd becomes readable within ms (an answer that waited arrived). */
bool nfs4t_readable_within(int fd, int ms);

/* ---- SMB ---- */

/* Send on sc an SMB2 CREATE of "f" (FILE_OPEN, FILE_NON_DIRECTORY_FILE,
 * impersonation) with DesiredAccess access and ShareAccess share, in sc's
 * tree; its first answer's header in *h, and, when fid is not NULL and the
 * answer is STATUS_SUCCESS, its FileId in fid. Returns the request's
 * MessageId (an interim STATUS_PENDING answer comes first for a CREATE
 * that waits). */
uint64_t nfs4t_smb_create(struct smbt_conn *sc, uint32_t access, uint32_t share, struct smb_wire_hdr *h,
			  uint8_t fid[16]);
/* The final answer of sc's CREATE that waits (MessageId mid, AsyncId aid),
 * ssrv's clock turned until it comes (up to 1 s): it must be SUCCESS. */
void nfs4t_smb_create_final(struct smb_srv *ssrv, struct smbt_conn *sc, uint64_t mid, uint64_t aid);

#endif
