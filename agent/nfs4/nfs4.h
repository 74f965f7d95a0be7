/* nfs4: the NFSv4.1 front end (RFC 8881) over the volume store, served on
 * the NFSv3 server's port as RPC program 100003 version 4.
 *
 * What it is: a COMPOUND procedure (NULL and COMPOUND, procedures 0 and 1)
 * whose operations run one after the other on a current and a saved file
 * handle until one fails. Minor version 1 is served; a COMPOUND of minor
 * version 0 or 2 (or any other) answers NFS4ERR_MINOR_VERS_MISMATCH with no
 * results, as RFC 8881 section 16.2.3 says. At most NFS4_MAX_OPS operations
 * a COMPOUND (NFS4ERR_TOO_MANY_OPS past them, the session's ca_maxoperations
 * says the same), every argument decoded through the bounded cursor of
 * agent/nfs/xdr.h (a short or oversized argument: NFS4ERR_BADXDR).
 *
 * State (nfs4_state.c): clients (EXCHANGE_ID), sessions with their
 * fore-channel slots and per-slot reply cache (exactly once semantics, the
 * v3 DRC does not apply), open stateids, leases of NFS4_LEASE_S renewed by
 * SEQUENCE; locks in the store's protocol-neutral table (nfs4_lock.c).
 * Grace and reclaim per volume (agent/vol/vol_grace.h): a client is
 * recorded on the shelf before its first open or lock on a volume; while a
 * volume is in grace on this node (attached with holders recorded: restart,
 * failover, drain) LOCK and LOCKT answer NFS4ERR_GRACE, and a recorded
 * client reclaims with OPEN CLAIM_PREVIOUS and LOCK reclaim until its
 * RECLAIM_COMPLETE (otherwise NFS4ERR_NO_GRACE). Share reservations (OPEN
 * share_access/share_deny, OPEN_DOWNGRADE) live in the store's table, shared
 * with SMB share modes and NLM SHARE (NFS4ERR_SHARE_DENIED). VERIFY and
 * NVERIFY compare attributes as GETATTR encodes them.
 *
 * Read delegations and the backchannel (nfs4_deleg.c, nfs4_recall.c, nfs4_cb.c): a session
 * created with CREATE_SESSION4_FLAG_CONN_BACK_CHAN and a callback flavor we
 * speak (AUTH_SYS or AUTH_NONE), or given one by BIND_CONN_TO_SESSION
 * (CDFC4_BACK, CDFC4_BACK_OR_BOTH; CDFC4_FORE_OR_BOTH only when the
 * session's backchannel connection is gone), has a backchannel of one slot.
 * OPEN for reading only by such a client, of a file nobody else has open for
 * writing, gets OPEN_DELEGATE_READ: a grant in the store's cached-open table
 * (agent/vol/vol_lease.h) shared with SMB leases. A conflicting access from
 * any front end recalls it with CB_COMPOUND (CB_SEQUENCE, CB_RECALL): a v4.1
 * OPEN for writing, REMOVE or RENAME by any client (the holder's own too: its
 * mounts may cache apart), WRITE or SETATTR of the size by another client
 * answer NFS4ERR_DELAY until DELEGRETURN; none is given while any open
 * writes the file; an NFSv3 WRITE/SETATTR/REMOVE/RENAME (of or onto the
 * name) and SMB writes wait in the store, an SMB CREATE for writing or with
 * FILE_DELETE_ON_CLOSE, an SMB rename and a SET_INFO of the delete
 * disposition are STATUS_PENDING, until the return or the revocation (never
 * less: the store's 35 s break timeout does not apply to a delegation's
 * grant, vol_lease.h revoke_ms). A delegation not returned within the lease time after the
 * recall was sent is revoked (SEQ4_STATUS_RECALLABLE_STATE_REVOKED on the
 * client's SEQUENCE results, NFS4ERR_DELEG_REVOKED for its stateid until
 * FREE_STATEID). CLAIM_DELEG_CUR_FH opens the current file; CLAIM_DELEGATE_CUR
 * and _PREV, WANT_DELEGATION and DELEGPURGE are not served (NFS4ERR_NOTSUPP;
 * OPEN_DELEGATE_NONE).
 *
 * Write delegations (RFC 8881 10.4): an OPEN for writing (no want, or
 * WANT_ANY_DELEG), or any OPEN with WANT_WRITE_DELEG by a caller who may
 * write the file, by a client with a working backchannel, of a file that
 * has no other open at all (of any client, this client's other open owners
 * included, or protocol: the store's share table), gets
 * OPEN_DELEGATE_WRITE: a grant of R|W|H made with recall_on_access in the
 * same table, with an nfs_space_limit4 of NFS_LIMIT_SIZE: the file's size
 * plus the volume's free capacity at the OPEN. Any access by anyone else
 * recalls it, and nobody else proceeds before its DELEGRETURN (the holder
 * writes back its cache first) or its revocation, as for read delegations:
 * another v4.1 client's OPEN (for reading too), READ, WRITE, SETATTR (any),
 * LOCKT, REMOVE, RENAME and LINK answer NFS4ERR_DELAY; NFSv3 SETATTR, READ,
 * WRITE and LINK (NFS_F_RECALL, nfs_prog.h), REMOVE and RENAME, and NLM
 * TEST, LOCK and SHARE wait in the server, then see the file as the holder left it; an
 * SMB CREATE of any access is STATUS_PENDING.
 * CB_GETATTR (RFC 8881 10.4.3, 20.1): another v4.1 client's GETATTR asking
 * change, size, space_used or time_modify, and an NFSv3 GETATTR
 * (NFS_F_ASK), do not recall: the holder is asked with a CB_COMPOUND of
 * CB_SEQUENCE and CB_GETATTR (change and size; vol_lease_ask in the store)
 * and the GETATTR answers the size it reports; when the change it reports
 * differs from the last one heard (at first the file's at the OPEN), its
 * cached writes changed the file, and from then on the file's mtime and
 * ctime, and so the change attribute, are shown as at least that moment.
 * A holder that does not answer within half the lease time (at most 5 s),
 * or answers with an error or no size, is recalled as above (the GETATTR
 * answers NFS4ERR_DELAY, NFSv3 waits); its backchannel slot stays taken
 * until the reply or a lease, so the recall may follow that late. A reply
 * whose CB_SEQUENCE names another session, sequenceid or slot than the
 * call's is no reply (a CB_GETATTR or CB_RECALL so answered failed as a
 * lost one: the askers recall, the slot waits out the lease). Other
 * GETATTRs (mode, owner, ...), LOOKUP, ACCESS, READDIR of the parent and
 * the holder's own accesses neither ask nor recall, except an OPEN by
 * another open owner of its client (CLAIM_NULL / CLAIM_FH): Linux's
 * nosharecache mounts share one client id and cache apart, so another
 * mount's OPEN recalls the write delegation as another client's would
 * (test_vm_nfs41's close-to-open between two mounts). CLAIM_PREVIOUS
 * reclaims an open held under either kind, and gives no delegation back.
 * Set-uid and set-gid (as knfsd's nfsd4_verify_setuid_write): no write
 * delegation is given on a regular file with either bit (an OPEN that
 * would get one: OPEN_DELEGATE_NONE, or NONE_EXT with WND4_RESOURCE for a
 * want), and a SETATTR giving a file either bit by a client holding a
 * write delegation on it recalls that delegation first (NFS4ERR_DELAY
 * until DELEGRETURN): the Linux client sends a SETATTR of the size made
 * under its write delegation (truncate by any user of the mount, opened
 * locally under it) with the delegation's credential, so the store, seeing
 * the holder (root) truncate, would keep the bits the truncating user's
 * truncation clears, and the client, which dropped the kernel's
 * ATTR_KILL_SUID for the server to do, would show them.
 *
 * OPEN's want bits (RFC 8881 18.16.3) are honoured: with none, a write
 * delegation for an open for writing and a read one for an open for
 * reading when safe, else OPEN_DELEGATE_NONE; with WANT_NO_DELEG or
 * WANT_CANCEL no delegation and OPEN_DELEGATE_NONE_EXT with WND4_NOT_WANTED
 * or WND4_CANCELLED; with WANT_WRITE_DELEG a write delegation when safe,
 * else NONE_EXT with WND4_RESOURCE (it may not write the file) or as below;
 * with WANT_READ_DELEG a read delegation, WANT_ANY_DELEG either (as with no
 * want), when safe, else NONE_EXT with WND4_CONTENTION (it holds one,
 * another open writes, or for a write delegation any other open, a break is
 * under way) or WND4_RESOURCE (no working backchannel, WANT_READ_DELEG with
 * an open for writing); the SIGNAL/PUSH flags are taken and
 * never acted on (ond_server_will_* false); other want values
 * NFS4ERR_INVAL. A new backchannel (CREATE_SESSION, BIND_CONN_TO_SESSION,
 * BACKCHANNEL_CTL) is probed with CB_NULL from the backchannel thread; one
 * that does not answer within half a lease (at most 10 s), refuses it, or
 * cannot be sent to is down: no delegation is given over it, recalls find
 * no path (revoked at the lease), and SEQUENCE carries
 * SEQ4_STATUS_CB_PATH_DOWN_SESSION, and SEQ4_STATUS_CB_PATH_DOWN when no
 * session of the client has a backchannel that may work, until one is
 * bound that answers. Until its probe is answered a backchannel is taken
 * to work (as knfsd does for 4.1). A v4.1 REMOVE or RENAME of
 * (or onto) a delegated name recalls it too (NFS4ERR_DELAY meanwhile).
 *
 * The pseudo file system: PUTROOTFH gives a root directory listing the
 * exports the caller may reach with NFSv4 (vol_authorize with
 * VOL_PROTO_NFSV4: the volume's protocols and the rules' nfsv4 flag) by
 * their share names; LOOKUP of a name there enters the export root, LOOKUPP
 * of an export root comes back to it. Everything else reaches the store as
 * NFSv3 does (vol.h): the same handles, credentials, QoS, capacity, root
 * squash, read-only exports.
 */
#ifndef AQ_AGENT_NFS4_H
#define AQ_AGENT_NFS4_H

#include <stdint.h>

#include "agent/nfs/nfs_prog.h"

#define NFS4_PROG 100003u
#define NFS4_VERS 4u
#define NFS4_MINOR 1u             /* the one minor version served */
#define NFS4_MAX_OPS 32u          /* operations in one COMPOUND */
#define NFS4_SLOTS_DEFAULT 180u   /* fore-channel slots a session gets at most, by default */
#define NFS4_SLOTS_MAX 1024u      /* the most a server may be configured with */
#define NFS4_LEASE_S 90u          /* lease time, seconds */

struct nfs4_srv;

struct nfs4_cfg {
	unsigned max_slots;       /* 1..NFS4_SLOTS_MAX; 0 = NFS4_SLOTS_DEFAULT */
	unsigned lease_s;         /* 0 = NFS4_LEASE_S */
};

/* The program to register on an NFS server (nfs_srv_add_prog(srv,
 * &nfs4_prog, the nfs4_srv)). */
extern const struct nfs_prog nfs4_prog;

/* State for one server; -EINVAL for a bad cfg (max_slots above
 * NFS4_SLOTS_MAX). cfg may be NULL (defaults). */
int nfs4_srv_new(const struct nfs4_cfg *cfg, struct nfs4_srv **out);
/* After the NFS server that used it stopped; accepts NULL. */
void nfs4_srv_free(struct nfs4_srv *s);

#endif
