/* nfs4_harness: the in-process fixture of the suites that drive the NFSv4.1
 * front end next to the other protocols over one store (test_nfs4_share,
 * test_nfs4_deleg). One store with one export (v0, its root holding file
 * "f" = "0123456789", NFSv3 + NFSv4.1 + SMB) served by an in-process NFS
 * server carrying NFSv4.1 and by the SMB dispatcher of
 * tests/agent/smb/smb_harness.h; v4.1 clients (nfs4t_cl) on the NFS port,
 * each with its own session, that build COMPOUNDs led by a SEQUENCE. Every
 * helper fails the running Check test (ck_assert) on anything unexpected
 * instead of returning an error; the NFS status a helper returns is the one
 * of the operation under test.
 *
 * A suite that had private copies of these helpers switches by renaming:
 * struct cl4 -> struct nfs4t_cl, c4_up -> nfs4t_cl_up, c4_begin ->
 * nfs4t_begin, c4_send -> nfs4t_send, c4_open -> nfs4t_open (deny 0 for the
 * old two-argument one), c4_fh_op -> nfs4t_fh_op, c4_close /
 * c4_close_all -> nfs4t_close, setup's server part -> nfs4t_srv_up,
 * teardown's -> nfs4t_srv_down.
 */
#ifndef AQ_TESTS_NFS4_HARNESS_H
#define AQ_TESTS_NFS4_HARNESS_H

#include <stdint.h>

#include "agent/smb/smb_srv_internal.h"
#include "tests/agent/nfs4/nfs4_cl.h"
#include "tests/agent/smb/smb_harness.h"

struct aqt_store;
struct nfs_srv;
struct nfs4_srv;

/* ---- the servers ---- */

/* What differs between the suites' servers. */
struct nfs4t_spec {
	uint32_t fsid;     /* the export's */
	uint8_t key_byte;  /* its handle key's bytes */
	unsigned threads;  /* the NFS server's workers */
	uint32_t lease_s;  /* the v4.1 lease time; 0: nfs4's default */
};

/* A fresh temporary store *ts with the export above, set live; an NFS
 * server on 127.0.0.1 (any port: nfs_srv_port) over it carrying NFSv4.1 in
 * *nsrv and *v4, started; an SMB server over it in *ssrv (smbt_srv_new).
 * Undo with nfs4t_srv_down. */
void nfs4t_srv_up(const struct nfs4t_spec *spec, struct aqt_store *ts, struct nfs_srv **nsrv, struct nfs4_srv **v4,
		  struct smb_srv **ssrv);

/* Free what nfs4t_srv_up made: ssrv, nsrv, v4, then ts. */
void nfs4t_srv_down(struct aqt_store *ts, struct nfs_srv *nsrv, struct nfs4_srv *v4, struct smb_srv *ssrv);

/* ---- a v4.1 client ---- */

/* One client: its connection and session, its next SEQUENCE number (slot
 * 0), the COMPOUND being built (b) and the reply being read (cur), and what
 * its last nfs4t_open kept. */
struct nfs4t_cl {
	struct nfs4_cl c;
	uint32_t seq;
	struct nfs4_sid open;    /* the open stateid */
	struct nfs4_sid deleg;   /* the delegation's stateid (dtype 1) */
	uint32_t dtype;          /* the delegation: 0 none, 1 OPEN_DELEGATE_READ */
	uint8_t fh[128];         /* the file's handle */
	uint32_t fhlen;
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t flags;          /* the last SEQUENCE's status flags */
	const char *owner;       /* the open owner of nfs4t_open (NULL: "open-owner") */
};

/* Zero x, connect it to 127.0.0.1:port and create its session as owner (4
 * slots) with CREATE_SESSION flags csflags; the backchannel
 * (CREATE_SESSION4_FLAG_CONN_BACK_CHAN, 2) must be granted as asked. Close
 * with nfs4_cl_close(&x->c). */
void nfs4t_cl_up(struct nfs4t_cl *x, uint16_t port, const char *owner, uint32_t csflags);

/* Start a COMPOUND of a SEQUENCE and nops more operations in x->b. */
void nfs4t_begin(struct nfs4t_cl *x, uint32_t nops);

/* Send x->b; the reply in x->cur, read past its SEQUENCE (which must be OK;
 * its status flags in x->flags), at the next operation's result. */
void nfs4t_send(struct nfs4t_cl *x);

/* OPEN v0/f (no create) as x->owner with access and deny (OPEN4_SHARE_*
 * bits), then GETFH: the OPEN's status; when OK, the open stateid, the
 * delegation and the handle kept in x. */
uint32_t nfs4t_open(struct nfs4t_cl *x, uint32_t access, uint32_t deny);

/* PUTFH of x's handle, then operation op as build puts it (with sid): the
 * status of op, its result left at x->cur. */
uint32_t nfs4t_fh_op(struct nfs4t_cl *x, uint32_t op, void (*build)(struct ut_buf *, const struct nfs4_sid *),
		     const struct nfs4_sid *sid);

/* CLOSE of x's open stateid: its status. */
uint32_t nfs4t_close(struct nfs4t_cl *x);

/* ---- SMB ---- */

/* Send on sc an SMB2 CREATE of "f" (FILE_OPEN, FILE_NON_DIRECTORY_FILE,
 * impersonation) with DesiredAccess access and ShareAccess share, in sc's
 * tree; its first answer's header in *h, and, when fid is not NULL and the
 * answer is STATUS_SUCCESS, its FileId in fid. Returns the request's
 * MessageId (an interim STATUS_PENDING answer comes first for a CREATE
 * that waits). */
uint64_t nfs4t_smb_create(struct smbt_conn *sc, uint32_t access, uint32_t share, struct smb_wire_hdr *h,
			  uint8_t fid[16]);

#endif
