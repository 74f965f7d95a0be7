/* vol_dos: the DOS attributes of an object (READONLY, HIDDEN, SYSTEM,
 * ARCHIVE, SPARSE_FILE), the per-object state SMB clients set with CREATE
 * and SET_INFO. They are kept in the store, as the extended attribute
 * VOL_DOS_ATTR next to the containment mark (same 8-byte form, same
 * trusted.* namespace: no NFS client can reach it), so they travel with
 * the file on the shelf and every node sees them. See vol.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_watch.h"

#include <errno.h>
#include <unistd.h>

int vol_dos_get(const struct vol_obj *obj, uint32_t *attrs)
{
	uint8_t v[8];
	long r;

	if (obj->fd < 0 || !obj->exp)
		return -EBADF;
	r = vol_mark_sys(obj->exp->store, VOL_DOS_ATTR, obj->fd, NULL, false, v);
	if (r < 0)
		return errno == ENOTSUP ? -ENODATA : -errno; /* a file system without xattrs: the default */
	if (r != 8)
		return -ENODATA; /* not ours: as never set */
	*attrs = (uint32_t)vol_get64(v) & VOL_DOS_KEPT;
	return 0;
}

int vol_dos_set(struct vol_obj *obj, const struct vol_cred *cred, uint32_t attrs)
{
	uint8_t v[8] = { 0 };
	uint32_t old = 0;
	bool had;
	int rc = 0;

	if (obj->fd < 0 || !obj->exp)
		return -EBADF;
	if (obj->snap)
		return -EROFS;
	attrs &= VOL_DOS_KEPT;
	had = vol_dos_get(obj, &old) == 0;
	if (had && old == attrs)
		return 0;
	/* the caller's right, checked as the caller; the attribute itself is
	 * written with the server's identity (trusted.* needs it) */
	if ((rc = vol_may_set_attr(obj, cred)) != 0)
		return rc;
	v[4] = (uint8_t)(attrs >> 24);
	v[5] = (uint8_t)(attrs >> 16);
	v[6] = (uint8_t)(attrs >> 8);
	v[7] = (uint8_t)attrs;
	if (vol_mark_sys(obj->exp->store, VOL_DOS_ATTR, obj->fd, NULL, true, v) != 0)
		return errno == ENOTSUP ? -EOPNOTSUPP : -errno;
	vol_dirty(obj); /* in the inode: a FLUSH makes it stable */
	vol_watch_note_obj(obj, VOL_WATCH_MODIFIED, VOL_WATCH_ATTRIBUTES);
	return 0;
}
