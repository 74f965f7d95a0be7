/* smb_clone: block cloning, FSCTL_DUPLICATE_EXTENTS_TO_FILE (MS-FSCC
 * 2.3.8, MS-SMB2 3.3.5.15) and its _EX (2.3.9), served where the volume's
 * folder clones (vol_clone.h: btrfs, XFS with reflink), so only where
 * FileFsAttributeInformation announces FILE_SUPPORTS_BLOCK_REFCOUNTING
 * (smb_info.c); elsewhere INVALID_DEVICE_REQUEST, what Windows answers on a
 * file system without block cloning. The IOCTL names the target open; the
 * source is an open of the same session (its FileId in the request), as
 * on Windows. The checks are those of a READ of the source and a WRITE of
 * the target (access, byte-range locks, capacity: the growth past the
 * target's end must fit the volume's free space), and offsets must be
 * multiples of the cluster (the shelf's block; the length too unless it
 * ends at the source's end): else INVALID_PARAMETER, nothing changed.
 */
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_clone.h"
#include "api/api_error.h"

#include <errno.h>

#define STATUS_INVALID_HANDLE 0xC0000008u

/* Room on dst's volume for what a clone ending at end makes it grow. */
static uint32_t smb_clone_room(struct smb_open *dst, uint64_t end)
{
	struct vol_fsstat fs;
	uint64_t size;
	int rc;

	if ((rc = vol_refresh(&dst->obj)) != 0 || (rc = vol_fsstat(&dst->obj, &fs)) != 0)
		return smb_status_from_errno(rc);
	size = (uint64_t)dst->obj.st.st_size;
	return end > size && end - size > fs.abytes ? STATUS_DISK_FULL : STATUS_SUCCESS;
}

uint32_t smb_clone_dup(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_wire_dup d;
	struct smb_open *dst, *src;
	struct vol_lease_by by;
	uint32_t status, unit;
	int rc;

	if (!(dst = smb_open_find(r, &q->fid)))
		return STATUS_FILE_CLOSED;
	if (!vol_clone_supported(&dst->obj))
		return STATUS_INVALID_DEVICE_REQUEST;
	if (smb_wire_dup_decode(q->input, q->input_len, q->ctl_code == FSCTL_DUPLICATE_EXTENTS_TO_FILE_EX, &d) !=
	    AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(src = smb_open_find(r, &d.src)))
		return STATUS_INVALID_HANDLE;
	if (dst->dir || src->dir)
		return STATUS_INVALID_PARAMETER;
	if (!smb_open_may(dst, SMB_FILE_WRITE_DATA) || !smb_open_may_read(src))
		return STATUS_ACCESS_DENIED;
	unit = vol_clone_unit(&dst->obj);
	if (d.src_off % unit || d.dst_off % unit || d.src_off > UINT64_MAX - d.len || d.dst_off > UINT64_MAX - d.len)
		return STATUS_INVALID_PARAMETER;
	if (d.len > 0) {
		if ((status = smb_lock_io(src, d.src_off, d.len, false)) != STATUS_SUCCESS ||
		    (status = smb_lock_io(dst, d.dst_off, d.len, true)) != STATUS_SUCCESS ||
		    (status = smb_clone_room(dst, d.dst_off + d.len)) != STATUS_SUCCESS)
			return status;
		smb_lease_by(dst, &by); /* the target open's own cache is not broken */
		rc = vol_clone(&src->obj, &r->sess->cred, d.src_off, &dst->obj, &r->sess->cred, d.dst_off, d.len, &by);
		vol_export_record(dst->obj.exp, 7 /* NFS WRITE's slot */, 0, 0, rc != 0);
		if (rc == -EOPNOTSUPP)
			return STATUS_INVALID_DEVICE_REQUEST;
		if (rc != 0)
			return smb_status_from_errno(rc);
	}
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, NULL, 0);
	return STATUS_SUCCESS;
}
