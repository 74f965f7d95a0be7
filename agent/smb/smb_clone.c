/* smb_clone: block cloning, FSCTL_DUPLICATE_EXTENTS_TO_FILE (MS-FSCC
 * 2.3.8, MS-SMB2 3.3.5.15) and its _EX (2.3.9), served where the volume's
 * folder clones (vol_clone.h: btrfs, XFS with reflink), so only where
 * FileFsAttributeInformation announces FILE_SUPPORTS_BLOCK_REFCOUNTING
 * (smb_info.c); elsewhere INVALID_DEVICE_REQUEST, what Windows answers on a
 * file system without block cloning. The IOCTL names the target open; the
 * source is an open of the same session (its FileId in the request), as
 * on Windows. Access as for a READ of the source and a WRITE of the
 * target; byte-range locks do not apply (Windows clones a locked range:
 * smbtorture's dup_extents_src_lock and _dest_lock); offsets must be
 * multiples of the cluster (the shelf's block; the length too unless it
 * ends at the source's end), else INVALID_PARAMETER; a sparse source into
 * a file not sparse, a range past the source's end and overlapping ranges
 * of one file are NOT_SUPPORTED (MS-FSCC 2.3.8), nothing changed. The
 * target never grows: the part of the range past its end is not cloned
 * (Windows requires the target extended first, and the Linux cifs client
 * extends it before it asks), so the clone needs no room on the volume.
 */
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_clone.h"
#include "api/api_error.h"

#include <errno.h>


/* Whether two opens are of one file. */
static bool smb_clone_same(const struct smb_open *a, const struct smb_open *b)
{
	return a->obj.st.st_ino == b->obj.st.st_ino && a->obj.st.st_dev == b->obj.st.st_dev;
}

/* What Windows refuses with NOT_SUPPORTED (MS-FSCC 2.3.8): a sparse source
 * into a file not sparse, a source range past the source's end, ranges
 * overlapping in one file. src and dst refreshed. */
static bool smb_clone_refused(const struct smb_open *src, const struct smb_open *dst, const struct smb_wire_dup *d)
{
	uint64_t ssize = (uint64_t)src->obj.st.st_size;

	if ((smb_open_dos(src) & FILE_ATTRIBUTE_SPARSE_FILE) && !(smb_open_dos(dst) & FILE_ATTRIBUTE_SPARSE_FILE))
		return true;
	if (d->src_off > ssize || d->len > ssize - d->src_off)
		return true;
	return smb_clone_same(src, dst) && d->src_off < d->dst_off + d->len && d->dst_off < d->src_off + d->len;
}

uint32_t smb_clone_dup(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_wire_dup d;
	struct smb_open *dst, *src;
	struct vol_lease_by by;
	uint64_t size, len;
	uint32_t unit;
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
	if ((rc = vol_refresh(&src->obj)) != 0 || (rc = vol_refresh(&dst->obj)) != 0)
		return smb_status_from_errno(rc);
	if (smb_clone_refused(src, dst, &d))
		return STATUS_NOT_SUPPORTED;
	/* the target's size does not change: what lies past its end is not
	 * cloned (a client extends the target first, as Windows requires) */
	size = (uint64_t)dst->obj.st.st_size;
	len = d.dst_off >= size ? 0 : d.len < size - d.dst_off ? d.len : size - d.dst_off;
	if (len > 0) {
		smb_lease_by(dst, &by); /* the target open's own cache is not broken */
		rc = vol_clone(&src->obj, &r->sess->cred, d.src_off, &dst->obj, &r->sess->cred, d.dst_off, len, &by);
		vol_export_record(dst->obj.exp, 7 /* NFS WRITE's slot */, 0, 0, rc != 0);
		if (rc == -EOPNOTSUPP)
			return STATUS_INVALID_DEVICE_REQUEST;
		if (rc != 0)
			return smb_status_from_errno(rc);
	}
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, NULL, 0);
	return STATUS_SUCCESS;
}
