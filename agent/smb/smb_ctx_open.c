/* smb_ctx_open: what the create contexts smb_ctx.c checked do to an open
 * (see smb_ctx.c for each): AlSi's room on the volume before a file is
 * made or overwritten, ExtA's EAs on the object made (smb_open.c sets them
 * on one overwritten too), SecD's owner, group and mode on the object made
 * (on an NTFS-style share its descriptor: smb_acl_made),
 * the MxAc and QFid answers.
 */
#include <string.h>
#include <sys/stat.h>

#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"

uint32_t smb_ctx_room(const struct smb_ctx_req *x, struct vol_obj *in, bool dir)
{
	struct vol_fsstat fs;
	int rc;

	if (!x->alsi || dir || x->alloc == 0)
		return STATUS_SUCCESS;
	if ((rc = vol_fsstat(in, &fs)) != 0)
		return smb_status_from_errno(rc);
	/* an overwrite gives the file's bytes back first */
	if (S_ISREG(in->st.st_mode))
		fs.abytes += (uint64_t)in->st.st_size;
	return x->alloc > fs.abytes ? STATUS_DISK_FULL : STATUS_SUCCESS;
}

uint32_t smb_ctx_apply(const struct smb_ctx_req *x, struct smb_open *o, const struct vol_cred *cred)
{
	struct vol_sattr sa = { 0 };
	uint32_t st;
	int rc;

	/* the EAs first: SecD may take the user's write right away */
	if (x->exta && (st = smb_ea_apply(o, cred, x->exta, x->exta_len)) != STATUS_SUCCESS)
		return st;
	if (x->ntfs) /* every object made gets its descriptor (smb_acl_open.c) */
		return smb_acl_made(x, o, cred);
	if (!x->secd || !x->sd_have)
		return STATUS_SUCCESS;
	sa.set_uid = (x->sd_have & SMB_SD_HAVE_UID) != 0;
	sa.uid = x->sd_uid;
	sa.set_gid = (x->sd_have & SMB_SD_HAVE_GID) != 0;
	sa.gid = x->sd_gid;
	sa.set_mode = (x->sd_have & SMB_SD_HAVE_MODE) != 0;
	sa.mode = x->sd_mode & 0777u;
	if ((rc = vol_setattr(&o->obj, cred, &sa)) != 0 || (rc = vol_refresh(&o->obj)) != 0)
		return smb_status_from_errno(rc);
	return STATUS_SUCCESS;
}

/* Whether cred may unlink a name from dir (POSIX: w and x on it; with the
 * sticky bit only the owner of the file or of dir). */
static bool smb_ctx_may_unlink(const struct stat *dir, const struct stat *st, const struct vol_cred *cred)
{
	unsigned bits = cred->uid == dir->st_uid ? dir->st_mode >> 6 : smb_ctx_in_group(cred, dir->st_gid) ? dir->st_mode >> 3
														: dir->st_mode;

	if ((bits & 3u) != 3u)
		return false;
	return !(dir->st_mode & S_ISVTX) || cred->uid == st->st_uid || cred->uid == dir->st_uid;
}

uint32_t smb_ctx_maximal(const struct smb_open *o, const struct vol_cred *cred)
{
	const struct stat *st = &o->obj.st;
	struct smb_sd sd;
	uint32_t m;

	if (smb_acl_ntfs(o->tree)) {
		m = smb_acl_maximal(o, cred); /* the DACL's answer */
	} else if (cred->uid == 0) {
		m = SMB_FILE_ALL_ACCESS;
	} else {
		/* the synthesized descriptor's ACEs: owner, group, Everyone */
		smb_sd_from_unix(st->st_uid, st->st_gid, st->st_mode & 0777u, S_ISDIR(st->st_mode), &sd);
		m = sd.dacl.ace[cred->uid == st->st_uid ? 0 : smb_ctx_in_group(cred, st->st_gid) ? 1 : 2].mask;
		if (o->parent.fd >= 0 && smb_ctx_may_unlink(&o->parent.st, st, cred))
			m |= SMB_DELETE;
		if (!S_ISDIR(st->st_mode) && (smb_open_dos(o) & FILE_ATTRIBUTE_READONLY))
			m &= ~(SMB_FILE_WRITE_DATA | SMB_FILE_APPEND_DATA | SMB_DELETE);
	}
	/* a previous version changes for nobody (the store answers EROFS) */
	if (o->obj.snap)
		m &= ~(SMB_FILE_WRITE_DATA | SMB_FILE_APPEND_DATA | SMB_FILE_WRITE_EA | SMB_FILE_DELETE_CHILD |
		       SMB_FILE_WRITE_ATTRIBUTES | SMB_DELETE | SMB_WRITE_DAC | SMB_WRITE_OWNER);
	return m;
}

void smb_ctx_answer(struct smb_ctx_req *x, const struct smb_open *o, const struct vol_cred *cred,
		    struct smb_wire_create_rsp *rsp, struct smb_wire_create_rsp_ctx *ctx)
{
	if (x->mxac && x->mxac_time != smb_filetime(&o->obj.st.st_mtim)) {
		uint32_t m = smb_ctx_maximal(o, cred);

		memset(x->mxac_buf, 0, sizeof(x->mxac_buf)); /* QueryStatus STATUS_SUCCESS */
		for (int i = 0; i < 4; i++)
			x->mxac_buf[4 + i] = (uint8_t)(m >> (8 * i));
		ctx[rsp->ctx_count++] = (struct smb_wire_create_rsp_ctx){ .name = "MxAc", .data = x->mxac_buf,
									  .data_len = sizeof(x->mxac_buf) };
	}
	if (x->qfid) {
		uint64_t ino = (uint64_t)o->obj.st.st_ino, fsid = vol_export_fsid(o->obj.exp);

		memset(x->qfid_buf, 0, sizeof(x->qfid_buf)); /* DiskFileId, VolumeId, Reserved */
		for (int i = 0; i < 8; i++) {
			x->qfid_buf[i] = (uint8_t)(ino >> (8 * i));
			x->qfid_buf[8 + i] = (uint8_t)(fsid >> (8 * i));
		}
		ctx[rsp->ctx_count++] = (struct smb_wire_create_rsp_ctx){ .name = "QFid", .data = x->qfid_buf,
									  .data_len = sizeof(x->qfid_buf) };
	}
	rsp->ctx = ctx;
}
