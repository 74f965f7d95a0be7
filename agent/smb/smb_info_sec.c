/* smb_info_sec: SET_INFO of a security descriptor (MS-SMB2 3.3.5.21.3,
 * MS-DTYP 2.4.6) on a UNIX-style share (an NTFS-style share stores it:
 * smb_acl_set), where what an object's descriptor
 * says is its POSIX owner, group and mode (the descriptor QUERY_INFO
 * answers is smb_sd_from_unix of them: the owner S-1-22-1-<uid>, the
 * group S-1-22-2-<gid>, and ALLOW ACEs for them and Everyone). The parts
 * AdditionalInformation names are applied, the others ignored:
 *  - OWNER (WRITE_OWNER on the open): a Unix user SID; anyone but root
 *    may only name themselves (else STATUS_INVALID_OWNER, as Windows
 *    without SeRestorePrivilege);
 *  - GROUP (WRITE_OWNER): a Unix group SID; anyone but root only a group
 *    they are in (else STATUS_INVALID_PRIMARY_GROUP);
 *  - DACL (WRITE_DAC): ALLOW ACEs without inheritance flags for the
 *    object's owner, its group (both after this SET) and Everyone: the
 *    0777 bits (smb_sd_to_unix).
 * What cannot be represented is STATUS_NOT_SUPPORTED (as the SecD create
 * context): a DENY or other ACE type, an inheritance flag, an ACE for any
 * other SID, an owner or group that is not a Unix SID, a NULL DACL (no
 * access checks at all), a SACL or label (no POSIX place to keep them;
 * ACCESS_SYSTEM_SECURITY is checked first). Missing rights on the open are
 * STATUS_ACCESS_DENIED, a malformed descriptor (or one past SMB_SD_MAX)
 * STATUS_INVALID_PARAMETER; the kernel's own refusal (a chown by a
 * non-root user, a chmod by someone not the owner) comes back as
 * STATUS_ACCESS_DENIED. Nothing changes unless everything is accepted; a
 * change is synced (vol_sync) before it is answered.
 */
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

#define STATUS_INVALID_OWNER 0xC000005Au
#define STATUS_INVALID_PRIMARY_GROUP 0xC000005Bu
#define SMB_ACCESS_SYSTEM_SECURITY 0x01000000u
#define SMB_SD_LABEL 0x00000010u /* LABEL_SECURITY_INFORMATION */

/* Whether every ACE of sd's DACL names Everyone, uid or gid. */
static bool smb_info_sec_ids(const struct smb_sd *sd, uint32_t uid, uint32_t gid)
{
	struct smb_sd_sid u, g;

	smb_sd_sid_unix_user(uid, &u);
	smb_sd_sid_unix_group(gid, &g);
	for (uint16_t i = 0; i < sd->dacl.count; i++) {
		const struct smb_sd_sid *s = &sd->dacl.ace[i].sid;

		if (!smb_sd_sid_eq(s, &smb_sd_everyone) && !smb_sd_sid_eq(s, &u) && !smb_sd_sid_eq(s, &g))
			return false;
	}
	return true;
}

/* The check (no change): what to set in *sa. */
static uint32_t smb_info_sec_check(struct smb_req *r, struct smb_open *o, const struct smb_wire_set_info_req *q,
				   struct smb_sd *sd, struct vol_sattr *sa)
{
	const struct vol_cred *cred = &r->sess->cred;
	uint32_t what = q->additional, uid = 0, gid = 0, mode = 0;
	unsigned have = 0;
	int rc;

	if (((what & (SMB_SD_OWNER | SMB_SD_GROUP)) && !smb_open_may(o, SMB_WRITE_OWNER)) ||
	    ((what & SMB_SD_DACL) && !smb_open_may(o, SMB_WRITE_DAC)) ||
	    ((what & SMB_SD_SACL) && !smb_open_may(o, SMB_ACCESS_SYSTEM_SECURITY)))
		return STATUS_ACCESS_DENIED;
	if (q->data_len == 0 || q->data_len > SMB_SD_MAX || smb_sd_decode(q->data, q->data_len, sd) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (what & (SMB_SD_SACL | SMB_SD_LABEL))
		return STATUS_NOT_SUPPORTED;
	/* only what AdditionalInformation names */
	sd->has_owner = sd->has_owner && (what & SMB_SD_OWNER);
	sd->has_group = sd->has_group && (what & SMB_SD_GROUP);
	if (!(what & SMB_SD_DACL))
		sd->has_dacl = false;
	else if (!sd->has_dacl) /* DACL_PRESENT with none: the NULL DACL; or no DACL at all */
		return STATUS_NOT_SUPPORTED;
	sd->has_sacl = false;
	if ((rc = smb_sd_to_unix(sd, &uid, &gid, &mode, &have)) != AQ_OK)
		return rc == AQ_EUNIMPL ? STATUS_NOT_SUPPORTED : STATUS_INVALID_PARAMETER;
	vol_refresh(&o->obj);
	sa->set_uid = (have & SMB_SD_HAVE_UID) != 0;
	sa->uid = sa->set_uid ? uid : o->obj.st.st_uid;
	sa->set_gid = (have & SMB_SD_HAVE_GID) != 0;
	sa->gid = sa->set_gid ? gid : o->obj.st.st_gid;
	if (sd->has_dacl && !smb_info_sec_ids(sd, sa->uid, sa->gid))
		return STATUS_NOT_SUPPORTED;
	if (cred->uid != 0 && sa->set_uid && sa->uid != cred->uid)
		return STATUS_INVALID_OWNER;
	if (cred->uid != 0 && sa->set_gid && !smb_ctx_in_group(cred, sa->gid))
		return STATUS_INVALID_PRIMARY_GROUP;
	sa->set_mode = (have & SMB_SD_HAVE_MODE) != 0;
	/* the bits past 0777 (setuid, setgid, sticky) stay as they are */
	sa->mode = (o->obj.st.st_mode & 07000u) | (mode & 0777u);
	/* unchanged parts are not set again (a chown to oneself needs no right) */
	if (sa->set_uid && sa->uid == o->obj.st.st_uid)
		sa->set_uid = false;
	if (sa->set_gid && sa->gid == o->obj.st.st_gid)
		sa->set_gid = false;
	return STATUS_SUCCESS;
}

uint32_t smb_info_sec_set(struct smb_req *r, struct smb_open *o, const struct smb_wire_set_info_req *q)
{
	static _Thread_local struct smb_sd sd; /* 10 KB: off the stack of the loop */
	struct vol_sattr sa = { 0 };
	struct vol_cred tc;
	uint32_t st;
	int rc;

	if (smb_acl_ntfs(o->tree))
		return smb_acl_set(r, o, q); /* stored as given (smb_acl_open.c) */
	if ((st = smb_info_sec_check(r, o, q, &sd, &sa)) != STATUS_SUCCESS)
		return st;
	if (!sa.set_uid && !sa.set_gid && !sa.set_mode)
		return STATUS_SUCCESS;
	if (o->obj.snap)
		return STATUS_MEDIA_WRITE_PROTECTED;
	if ((rc = vol_setattr(&o->obj, &r->sess->cred, &sa)) != 0)
		return smb_status_from_errno(rc); /* EPERM: ACCESS_DENIED */
	vol_refresh(&o->obj);
	/* acknowledged is kept: the new owner and mode on disk before the
	 * answer, as an EA list's (who may open the object hangs on them) */
	tc = smb_tree_cred(o->tree, &r->sess->cred, o->write_through);
	if ((rc = vol_sync_as(&o->obj, &tc)) != 0)
		return smb_status_from_errno(rc);
	return STATUS_SUCCESS;
}
