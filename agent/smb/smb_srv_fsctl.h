/* smb_srv_fsctl: what the SMB server's files share of the FSCTLs served
 * on an open or a tree beside smb_tree.c's table: the network interfaces,
 * previous versions, server-side copy and sparse files. Part of
 * smb_srv_internal.h, which includes it at its end (it uses that header's
 * types): include smb_srv_internal.h.
 */
#ifndef AQ_AGENT_SMB_SRV_FSCTL_H
#define AQ_AGENT_SMB_SRV_FSCTL_H

/* smb_iface.c: the addresses FSCTL_QUERY_NETWORK_INTERFACE_INFO answers
 * (MS-SMB2 3.3.5.15.11): collect: from the listen address (a wildcard: the
 * node's interfaces that are up), into srv->ifaces, once at start; query:
 * the IOCTL, served on a connection that negotiated MULTI_CHANNEL
 * (otherwise INVALID_DEVICE_REQUEST); BUFFER_TOO_SMALL when the list does
 * not fit MaxOutputResponse. */
struct sockaddr;
void smb_iface_collect(struct smb_srv *srv, const struct sockaddr *listen_sa);
uint32_t smb_iface_query(struct smb_req *r, const struct smb_wire_ioctl_req *q);
/* smb_prev.c: previous versions. A time is whole seconds UTC, -1 for none.
 * strip: an "@GMT-" component of path is removed and its time set in *when
 * (-EINVAL: malformed, or a second different one); twrp: the same from the
 * TWrp create context; open: the root of the snapshot of that time in *out
 * (-ENOENT: none); enumerate: FSCTL_SRV_ENUMERATE_SNAPSHOTS. */
#define SMB_PREV_MAX 255 /* snapshots a share can have (API_INTENT_MAX_SNAPSHOTS) */
int smb_prev_strip(char *path, int64_t *when);
int smb_prev_twrp(const struct smb_wire_create_req *q, int64_t *when);
int smb_prev_open(struct smb_tree *t, const struct vol_cred *cred, int64_t when, struct vol_obj *out);
uint32_t smb_prev_enumerate(struct smb_req *r, const struct smb_wire_ioctl_req *q);
/* smb_copy.c: server-side copy (MS-SMB2 3.3.5.15.6/7): the resume key of
 * an open, and SRV_COPYCHUNK / SRV_COPYCHUNK_WRITE into q's open from the
 * open the key names (same user), chunk by chunk through the store (byte-
 * range locks, capacity and the caches of other clients apply as to a READ
 * and a WRITE), bounded by SMB_WIRE_COPYCHUNK_*; charged to QoS by
 * smb_dispatch_admit (smb_copy_cost) before it is served, its growth checked against the
 * volume's free space before anything is copied. */
uint32_t smb_copy_resume_key(struct smb_req *r, const struct smb_wire_ioctl_req *q);
uint32_t smb_copy_chunk(struct smb_req *r, const struct smb_wire_ioctl_req *q);
/* Whether IOCTL m of session s is a COPYCHUNK the handler will serve: its
 * destination FileId in *fid (all ones in a related compound), all its
 * chunks' bytes in *total, the open its resume key names in *src (NULL:
 * none, which the handler refuses after the charge). */
bool smb_copy_cost(struct smb_conn *c, const struct smb_wire_msg *m, struct smb_sess *s, struct smb_wire_fid *fid,
		   uint64_t *total, struct smb_open **src);
/* smb_sparse.c: FSCTL_SET_SPARSE (the store's DOS attribute
 * SPARSE_FILE), FSCTL_SET_ZERO_DATA (vol_zero_range: holes in a sparse
 * file, zeroes kept allocated in another; byte-range locks apply as to a
 * WRITE) and FSCTL_QUERY_ALLOCATED_RANGES (vol_alloc_ranges; a file not
 * sparse answers its whole range). Bad input: INVALID_PARAMETER, nothing
 * changed; an output buffer too small for the ranges: BUFFER_TOO_SMALL. */
uint32_t smb_sparse_set(struct smb_req *r, const struct smb_wire_ioctl_req *q);
uint32_t smb_sparse_zero(struct smb_req *r, const struct smb_wire_ioctl_req *q);
uint32_t smb_sparse_ranges(struct smb_req *r, const struct smb_wire_ioctl_req *q);
/* smb_clone.c: FSCTL_DUPLICATE_EXTENTS_TO_FILE(_EX), block cloning where
 * the volume's folder clones (vol_clone.h), else INVALID_DEVICE_REQUEST;
 * bad or misaligned input INVALID_PARAMETER, nothing changed. */
uint32_t smb_clone_dup(struct smb_req *r, const struct smb_wire_ioctl_req *q);

#endif
