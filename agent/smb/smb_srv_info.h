/* smb_srv_info: what the SMB server's files share of CREATE's contexts,
 * the information classes (QUERY_INFO / SET_INFO, QUERY_DIRECTORY), the
 * extended attributes and the security descriptors (UNIX-style and
 * NTFS-style shares). Part of smb_srv_internal.h, which includes it at
 * its end (it uses that header's types): include smb_srv_internal.h.
 */
#ifndef AQ_AGENT_SMB_SRV_INFO_H
#define AQ_AGENT_SMB_SRV_INFO_H

/* smb_ctx.c: the create contexts no other module owns (ExtA, SecD, AlSi,
 * MxAc, QFid; see the file's head for what each does). check: every context
 * of q validated against the session user cred before anything changes,
 * what to do kept in *x (caller's storage): STATUS_INVALID_PARAMETER (a bad
 * length or descriptor), STATUS_EAS_NOT_SUPPORTED (ExtA),
 * STATUS_NOT_SUPPORTED (a descriptor with no POSIX equivalent),
 * STATUS_INVALID_OWNER / _PRIMARY_GROUP. room: before a file is made in or
 * overwritten at `in`, STATUS_DISK_FULL when AlSi asks more than the volume
 * has free (dir: never). apply: the descriptor onto o, which the CREATE
 * made. answer: MxAc and QFid answered into ctx[rsp->ctx_count...] (room
 * for two; the data lives in *x). maximal: cred's maximal access to o.
 * in_group: whether gid is cred's group or one of its groups. check and
 * in_group (smb_ctx.c) touch no store: fuzz_smb_wire links them alone;
 * the rest is smb_ctx_open.c. */
struct smb_ctx_req {
	bool ntfs;                   /* the share's security style is NTFS (SecD kept as given) */
	bool secd, alsi, mxac, qfid;
	const uint8_t *secd_raw;     /* NTFS: the SecD descriptor (in the request), its length */
	size_t secd_len;
	bool app, app_ver;           /* APP_INSTANCE_ID / _VERSION (smb_durable_app) */
	uint8_t app_id[16];
	uint64_t app_hi, app_lo;
	const uint8_t *exta;         /* ExtA: the checked EA list (in the request), its length */
	size_t exta_len;
	uint32_t sd_uid, sd_gid, sd_mode;
	unsigned sd_have;            /* SMB_SD_HAVE_* */
	uint64_t alloc;
	uint64_t mxac_time;
	uint8_t mxac_buf[8], qfid_buf[32];
};
uint32_t smb_ctx_check(const struct smb_wire_create_req *q, const struct vol_cred *cred, bool ntfs,
		       struct smb_ctx_req *x);
uint32_t smb_ctx_room(const struct smb_ctx_req *x, struct vol_obj *in, bool dir);
uint32_t smb_ctx_apply(const struct smb_ctx_req *x, struct smb_open *o, const struct vol_cred *cred);
void smb_ctx_answer(struct smb_ctx_req *x, const struct smb_open *o, const struct vol_cred *cred,
		    struct smb_wire_create_rsp *rsp, struct smb_wire_create_rsp_ctx *ctx);
uint32_t smb_ctx_maximal(const struct smb_open *o, const struct vol_cred *cred);
bool smb_ctx_in_group(const struct vol_cred *cred, uint32_t gid);
/* smb_info_ea.c: extended attributes (see there). size: EaSize (the kept
 * list's length, 0 when none or unreadable); needed: an EA of the file has
 * FILE_NEED_EA; apply: a checked list set on the object (SET_INFO, ExtA),
 * nothing changed on error; set_info: the same after the FILE_WRITE_EA
 * check; query: QUERY_INFO FileFullEaInformation into b (within the
 * request's OutputBufferLength). */
uint32_t smb_ea_size(struct smb_open *o);
bool smb_ea_needed(struct smb_open *o);
uint32_t smb_ea_apply(struct smb_open *o, const struct vol_cred *cred, const uint8_t *list, size_t len);
uint32_t smb_ea_set_info(struct smb_req *r, struct smb_open *o, const uint8_t *d, size_t len);
uint32_t smb_ea_query(struct smb_open *o, const struct smb_wire_query_info_req *q, struct ut_buf *b);
/* smb_acl_open.c: NTFS-style shares (see there): whether t's share is
 * one; the CREATE checks of an existing object (open_allowed: on a
 * UNIX-style share smb_open_data_allowed's; sets o->access to what the
 * DACL granted; an overwrite needs FILE_WRITE_DATA too) and of a new one (create_allowed: the parent's right to
 * add it; o->access the CREATE's DesiredAccess); either answers
 * STATUS_PRIVILEGE_NOT_HELD first when DesiredAccess asks
 * ACCESS_SYSTEM_SECURITY of a user without SeSecurityPrivilege (all but
 * uid 0; MS-FSA 2.1.5.1, smbd); the descriptor of an object a CREATE made (made: SecD, else
 * inherited, else a default; o->access from it); the MxAc answer; QUERY
 * and SET_INFO of the descriptor (query: either style). The share's
 * POSIX mode: folders 0777, files 0666 made (see smb_acl_open.c). */
bool smb_acl_ntfs(const struct smb_tree *t);
uint32_t smb_acl_open_allowed(struct smb_open *o, const struct vol_cred *cred, uint32_t desired, bool overwrite);
uint32_t smb_acl_create_allowed(const struct smb_open *o, const struct vol_cred *cred, bool dir);
uint32_t smb_acl_made(const struct smb_ctx_req *x, struct smb_open *o, const struct vol_cred *cred);
uint32_t smb_acl_maximal(const struct smb_open *o, const struct vol_cred *cred);
uint32_t smb_acl_query(struct smb_open *o, uint32_t additional, struct ut_buf *b);
uint32_t smb_acl_set(struct smb_req *r, struct smb_open *o, const struct smb_wire_set_info_req *q);
/* smb_info_sec.c: SET_INFO of a security descriptor onto the POSIX owner,
 * group and mode (see there for what is refused with which status);
 * nothing changes unless it answers STATUS_SUCCESS. */
uint32_t smb_info_sec_set(struct smb_req *r, struct smb_open *o, const struct smb_wire_set_info_req *q);
/* smb_info.c */
uint32_t smb_info_query_dir(struct smb_req *r);
uint32_t smb_info_query(struct smb_req *r);
uint32_t smb_info_set(struct smb_req *r);
/* smb_info_name.c: SET_INFO FileRenameInformation / FileLinkInformation of
 * open o, d/len the class's buffer as sent (decoded bounded here). Rename:
 * o's parent, name and path follow the file; it may wait for cached opens
 * given back (smb_lease_rename, served again). Link: a second name
 * for file o (vol_link); nothing changes on any error. */
uint32_t smb_info_rename(struct smb_req *r, struct smb_open *o, const uint8_t *d, size_t len);
uint32_t smb_info_link(struct smb_req *r, struct smb_open *o, const uint8_t *d, size_t len);


#endif
