/* smb_srv: the agent's SMB2/3 server (issue 18), the second layer over
 * libaqsmb.a: direct TCP on one port, one epoll thread that reassembles
 * frames, runs each request against the volume store (agent/vol/vol.h) and
 * queues the reply, never blocking on a socket (a slow or silent client
 * stalls only its own connection); a READ that would wait for the disk or
 * the cold tier goes to a pool of 8 read threads (smb_read.c), started with
 * the first one and joined by smb_srv_stop. A reply goes to the socket at once from
 * the buffer it was built in when nothing is queued before it (one
 * sendmsg, no copy); only what the socket does not take is queued. A busy
 * connection keeps the room of its last reply and of its output queue for
 * the next ones (a stream of 8 MiB READs reuses its pages instead of
 * faulting in fresh ones at every READ) and gives it back after
 * SMB_SRV_RSP_IDLE_S idle seconds; epoll is asked again only when the
 * events a connection waits for change.
 *
 * The server is a front end of a store it is handed (as nfs_srv is): the
 * caller creates the store, sets its exports, and gives the server the SMB
 * shares (which export each share name is, which project owns it, its
 * smbSettings) and the users (per project, NT hash, uid/gid) with
 * smb_srv_set_config, which replaces both atomically while serving.
 *
 * A user of project P reaches only the shares of P's volumes; every
 * operation on a share runs with that user's uid/gid, so NFS sees the same
 * owner. All functions are thread-safe; errors are negative errno values.
 */
#ifndef AQ_AGENT_SMB_SRV_H
#define AQ_AGENT_SMB_SRV_H

#include <stddef.h>
#include <stdint.h>

#include "agent/vol/vol.h"
#include "api/api_intent.h"

#define SMB_SRV_PORT 445
#define SMB_SRV_MAX_CONNS 4096u /* connections at once (one descriptor each) */
#define SMB_SRV_OPEN_FDS 3u     /* descriptors an open may hold: its file's, its parent's, a grant's */

struct smb_srv_share {
	char name[API_INTENT_SHARE_LEN + 1];      /* the volume's shareName */
	char project[API_INTENT_PROJECT_LEN + 1]; /* from the volume name projects/P/... */
	char path[256];                           /* the store export path ("/<shareName>") */
	unsigned smb_settings;                    /* API_INTENT_SMB_* bits */
	enum api_intent_security security;
};

struct smb_srv_user {
	char project[API_INTENT_PROJECT_LEN + 1];
	char name[API_INTENT_SMB_USER_LEN + 1];
	uint8_t nt_hash[16];
	uint32_t uid, gid;
};

/* The smbSettings this server honours; the others are refused upstream. */
/* NON_BROWSABLE holds because no share list is served at all (no srvsvc on IPC$);
 * SHOW_PREVIOUS_VERSIONS lists the snapshots to FSCTL_SRV_ENUMERATE_SNAPSHOTS;
 * CHANGE_NOTIFY serves SMB2 CHANGE_NOTIFY from the store's change watches
 * (smb_notify.c; without it the share answers STATUS_NOT_IMPLEMENTED, as
 * Samba with "change notify = no"); OPLOCKS grants oplocks (II, EXCLUSIVE,
 * BATCH) and leases (R, RH, RW, RWH) with acknowledged breaks (smb_lease.c;
 * without it none, as Samba with "oplocks = no"). */
#define SMB_SRV_SETTINGS \
	(API_INTENT_SMB_ENCRYPT_DATA | API_INTENT_SMB_NON_BROWSABLE | API_INTENT_SMB_SHOW_PREVIOUS_VERSIONS | \
	 API_INTENT_SMB_CHANGE_NOTIFY | API_INTENT_SMB_OPLOCKS)

struct smb_srv;

/* A server for "HOST:PORT" over store (borrowed, must outlive it). */
int smb_srv_new(const char *listen, struct vol_store *store, struct smb_srv **out);
/* Replace the shares and users (copied). */
int smb_srv_set_config(struct smb_srv *srv, const struct smb_srv_share *shares, size_t nshares,
		       const struct smb_srv_user *users, size_t nusers);
/* The caps on opens (0 keeps one): how many one session may hold (default
 * SMB_SESS_OPENS_MAX, 4096), and the node (every session's, kept durable
 * ones included; default a quarter of RLIMIT_NOFILE when the server was
 * made, at least 64; the agent sets what its descriptor budget leaves,
 * SMB_SRV_OPEN_FDS per open). A CREATE past either answers
 * STATUS_INSUFFICIENT_RESOURCES and makes nothing; a durable reconnect
 * brings back an open the node counts already, under the cap of the
 * session it joins (refused past it: STATUS_INSUFFICIENT_RESOURCES). */
void smb_srv_set_open_limits(struct smb_srv *srv, unsigned sess_max, unsigned node_max);
int smb_srv_start(struct smb_srv *srv);
uint16_t smb_srv_port(const struct smb_srv *srv);
void smb_srv_stop(struct smb_srv *srv);
void smb_srv_free(struct smb_srv *srv);

#endif
