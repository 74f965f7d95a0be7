/* smb_alloc: an open's allocation size (MS-FSCC 2.4.4
 * FileAllocationInformation; the AlSi create context, MS-SMB2 2.2.13.2.6)
 * and the volume capacity it holds.
 *
 * SET_INFO FileAllocationInformation smaller than the end of file cuts the
 * file there (MS-FSA 2.1.5.14.1); one at or past it is reserved: the bytes
 * between the end of file and the allocation size are held in the volume's
 * used bytes (vol_hold) while the open lives, so vol_fsstat (FS size
 * classes, the NFS FSSTAT) shows them taken and another writer cannot take
 * them; a size that does not fit is STATUS_DISK_FULL and changes nothing.
 * The open then reports that AllocationSize while its file's blocks are
 * fewer. A CREATE that makes or overwrites a file with AlSi holds the same
 * way (its room was checked before the file was made, smb_ctx_room). The
 * hold is given back as the open's own WRITEs (and end-of-file changes)
 * fill it, before their growth is charged, so a client filling what it
 * allocated never runs into its own hold; all of it at close (or when a
 * kept durable open expires). Held bytes are the agent's: a restart
 * recounts the volume from its files (no file's data depends on a hold).
 * The blocks themselves are not preallocated on the shelf (the volume's
 * capacity is what the agent enforces; the shelf is shared).
 */
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"

uint32_t smb_alloc_hold(struct smb_open *o, uint64_t size)
{
	uint64_t fsize, want;
	int rc;

	if ((rc = vol_refresh(&o->obj)) != 0)
		return smb_status_from_errno(rc);
	fsize = (uint64_t)o->obj.st.st_size;
	want = size > fsize ? size - fsize : 0;
	if (want > o->held) {
		if ((rc = vol_hold(&o->obj, want - o->held)) != 0)
			return smb_status_from_errno(rc); /* -EDQUOT: DISK_FULL, nothing held */
	} else {
		vol_unhold(&o->obj, o->held - want);
	}
	o->held = want;
	o->alloc_size = size;
	return STATUS_SUCCESS;
}

void smb_alloc_fill(struct smb_open *o, uint64_t end)
{
	uint64_t fsize, covered, give;

	if (!o->held || vol_refresh(&o->obj) != 0)
		return;
	fsize = (uint64_t)o->obj.st.st_size;
	covered = end < o->alloc_size ? end : o->alloc_size;
	if (covered <= fsize)
		return;
	give = covered - fsize < o->held ? covered - fsize : o->held;
	vol_unhold(&o->obj, give);
	o->held -= give;
}

void smb_alloc_drop(struct smb_open *o)
{
	vol_unhold(&o->obj, o->held);
	o->held = 0;
}

uint32_t smb_alloc_set(struct smb_req *r, struct smb_open *o, uint64_t size)
{
	struct vol_sattr sa = { .set_size = true, .size = size };
	struct vol_lease_by by;
	int rc;

	if (o->dir)
		return STATUS_INVALID_PARAMETER;
	if (size > (uint64_t)INT64_MAX)
		return STATUS_INVALID_PARAMETER;
	if ((rc = vol_refresh(&o->obj)) != 0)
		return smb_status_from_errno(rc);
	if (size >= (uint64_t)o->obj.st.st_size) {
		uint32_t st = smb_alloc_hold(o, size);

		/* read caches break all the same, as Windows and smbd
		 * (smbtorture smb2.oplock.batch12) */
		if (st == STATUS_SUCCESS)
			smb_lease_alloc(r, o);
		return st;
	}
	smb_lease_by(o, &by); /* the open's own cache is not broken */
	if ((rc = vol_setattr_by(&o->obj, &r->sess->cred, &sa, &by)) != 0)
		return smb_status_from_errno(rc);
	return smb_alloc_hold(o, size); /* nothing past the new end: all given back */
}
