/* vol_sd: the Windows security descriptor of an object on a volume whose
 * security style is NTFS (agent/smb enforces it). The store keeps it as
 * it keeps the EA list (vol_ea.c): one opaque blob per object, the
 * extended attribute VOL_SD_ATTR in the trusted.* namespace (NFS neither
 * shows nor sets it), in the object's inode on the shelf, copied by
 * snapshots (snap_fs copies every xattr but the marks), carried by
 * backups (agent/bkp: BKP_XA_SD), counted against capacity, synced
 * before vol_sd_set answers (or, for a caller that defers, on its FLUSH). Who may change it is the descriptor's own
 * business (WRITE_DAC / WRITE_OWNER in its DACL): the front end checks
 * that before it calls; the store checks no POSIX right here. See vol.h.
 */
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_watch.h"

#include <errno.h>

int vol_sd_get(const struct vol_obj *obj, uint8_t *buf, size_t cap, size_t *len)
{
	return vol_xa_get(obj, VOL_SD_ATTR, buf, cap, len);
}

int vol_sd_set(struct vol_obj *obj, const uint8_t *blob, size_t len, const struct vol_cred *cred)
{
	if (obj->fd < 0 || !obj->exp)
		return -EBADF;
	if (obj->snap)
		return -EROFS;
	if (len > VOL_SD_MAX)
		return -E2BIG;
	return vol_xa_set(obj, VOL_SD_ATTR, blob, len, VOL_WATCH_SECURITY, cred);
}
