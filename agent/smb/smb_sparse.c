/* smb_sparse: sparse files over SMB (MS-FSCC 2.3.64 FSCTL_SET_SPARSE,
 * 2.3.67 FSCTL_SET_ZERO_DATA, 2.3.33 FSCTL_QUERY_ALLOCATED_RANGES), what
 * Windows, robocopy and the Linux client (fallocate PUNCH_HOLE, SEEK_DATA)
 * use. The sparse flag is the DOS attribute FILE_ATTRIBUTE_SPARSE_FILE kept
 * in the store (vol_dos); zeroing and the allocated ranges go through the
 * store (vol_zero_range, vol_alloc_ranges) so that NFS sees the same holes.
 * As in Windows and Samba: a file not marked sparse keeps its blocks when
 * zeroed and answers its whole range allocated; a sparse one gets holes
 * and answers its real extents. Access: SET_SPARSE needs WRITE_DATA,
 * APPEND_DATA or WRITE_ATTRIBUTES, ZERO_DATA WRITE_DATA, ALLOCATED_RANGES
 * READ_DATA (ACCESS_DENIED); a malformed input is INVALID_PARAMETER and
 * changes nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

/* Ranges one ALLOCATED_RANGES answer carries at most (64 KiB of output):
 * a client asking with a larger buffer gets BUFFER_OVERFLOW and those,
 * and asks again from past the last (MS-FSCC 2.3.34). */
#define SMB_SPARSE_RANGES_MAX 4096u

uint32_t smb_sparse_set(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_open *o = smb_open_find(r, &q->fid);
	uint32_t dos, want;
	int rc;

	if (!o)
		return STATUS_FILE_CLOSED;
	if (!smb_open_may(o, SMB_FILE_WRITE_DATA) && !smb_open_may(o, SMB_FILE_APPEND_DATA) &&
	    !smb_open_may(o, SMB_FILE_WRITE_ATTRIBUTES))
		return STATUS_ACCESS_DENIED;
	if (o->dir)
		return STATUS_INVALID_PARAMETER;
	/* FILE_SET_SPARSE_BUFFER is optional: none (or a nonzero first byte) sets */
	dos = smb_open_dos(o);
	want = q->input_len >= 1 && q->input[0] == 0 ? dos & ~FILE_ATTRIBUTE_SPARSE_FILE
						      : dos | FILE_ATTRIBUTE_SPARSE_FILE;
	if (want != dos && (rc = vol_dos_set(&o->obj, &r->sess->cred, want)) != 0)
		return smb_status_from_errno(rc);
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, NULL, 0);
	return STATUS_SUCCESS;
}

uint32_t smb_sparse_zero(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_open *o = smb_open_find(r, &q->fid);
	struct vol_lease_by by;
	uint64_t off, beyond;
	uint32_t status;
	int rc;

	if (!o)
		return STATUS_FILE_CLOSED;
	if (!smb_open_may(o, SMB_FILE_WRITE_DATA))
		return STATUS_ACCESS_DENIED;
	if (smb_wire_range_decode(q->input, q->input_len, &off, &beyond) != AQ_OK || beyond < off)
		return STATUS_INVALID_PARAMETER;
	if (o->dir)
		return STATUS_INVALID_PARAMETER;
	if (beyond > off) {
		if ((status = smb_lock_io(o, off, beyond - off, true)) != STATUS_SUCCESS)
			return status;
		smb_lease_by(o, &by);
		rc = vol_zero_range(&o->obj, &r->sess->cred, off, beyond - off,
				    (smb_open_dos(o) & FILE_ATTRIBUTE_SPARSE_FILE) != 0, &by);
		if (rc != 0)
			return smb_status_from_errno(rc);
	}
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, NULL, 0);
	return STATUS_SUCCESS;
}

uint32_t smb_sparse_ranges(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_open *o = smb_open_find(r, &q->fid);
	struct vol_range *rg = NULL;
	struct ut_buf b;
	uint64_t off, len, end;
	uint32_t status = STATUS_SUCCESS;
	size_t cap, n = 0;
	bool more = false;
	int rc;

	ut_buf_init(&b, (size_t)SMB_SPARSE_RANGES_MAX * SMB_WIRE_RANGE_LEN);
	if (!o)
		return STATUS_FILE_CLOSED;
	if (!smb_open_may(o, SMB_FILE_READ_DATA))
		return STATUS_ACCESS_DENIED;
	if (smb_wire_range_decode(q->input, q->input_len, &off, &len) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (o->dir)
		return STATUS_INVALID_PARAMETER;
	if ((rc = vol_refresh(&o->obj)) != 0)
		return smb_status_from_errno(rc);
	if (len == 0 || off >= (uint64_t)o->obj.st.st_size)
		goto answer; /* nothing allocated there: no ranges */
	if (off + len < off)
		return STATUS_INVALID_PARAMETER;
	end = off + len < (uint64_t)o->obj.st.st_size ? off + len : (uint64_t)o->obj.st.st_size;
	cap = q->max_output_response / SMB_WIRE_RANGE_LEN;
	if (cap > SMB_SPARSE_RANGES_MAX)
		cap = SMB_SPARSE_RANGES_MAX;
	/* one slot at least: whether a buffer too small for any range is too small */
	if (!(rg = calloc(cap ? cap : 1, sizeof(*rg))))
		return STATUS_NO_MEMORY;
	if (!(smb_open_dos(o) & FILE_ATTRIBUTE_SPARSE_FILE)) {
		/* not sparse: all of it counts allocated (Windows, Samba) */
		rg[0].off = off;
		rg[0].len = end - off;
		n = 1;
	} else if ((rc = vol_alloc_ranges(&o->obj, &r->sess->cred, off, end - off, rg, cap ? cap : 1, &n, &more)) != 0) {
		status = smb_status_from_errno(rc);
		goto out;
	}
	if (n > cap || (more && cap < SMB_SPARSE_RANGES_MAX)) {
		status = STATUS_BUFFER_TOO_SMALL; /* the client's buffer is the limit (Samba) */
		goto out;
	}
	if (more)
		status = STATUS_BUFFER_OVERFLOW; /* ours is: these, then ask on */
answer:
	for (size_t i = 0; i < n; i++) {
		smb_wire_put_u64(&b, rg[i].off);
		smb_wire_put_u64(&b, rg[i].len);
	}
	if (b.err) {
		status = STATUS_NO_MEMORY;
		goto out;
	}
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, ut_buf_bytes(&b), b.len);
out:
	ut_buf_cleanup(&b);
	free(rg);
	return status;
}
