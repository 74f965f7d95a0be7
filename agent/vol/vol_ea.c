/* vol_ea: the extended attributes (EAs) of an object, as SMB clients set
 * them (FileFullEaInformation, the ExtA create context). The store keeps
 * them opaque: one blob per object, the extended attribute VOL_EA_ATTR in
 * the trusted.* namespace next to the DOS attributes (no NFS client can
 * read or set it), so they live in the object's inode on the shelf: every
 * node serving the volume sees them, a snapshot copies them (snap_fs
 * copies every xattr but the marks), a kill -9 of the agent loses nothing
 * the kernel took, and vol_ea_set syncs the object (file or folder) before
 * it answers. vol_xa_get / vol_xa_set are the same for any such blob
 * (vol_sd.c keeps the security descriptor with them). The blob's bytes count against the volume's capacity like file data (the
 * scan, vol_remove and a rename over the last name see them). See vol.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* O_PATH descriptors take no f*xattr calls: the object through its
 * /proc/self/fd link (which lands on the object itself). */
static void vol_ea_path(int fd, const char *name, char *out, size_t cap)
{
	if (name)
		snprintf(out, cap, "/proc/self/fd/%d/%s", fd, name);
	else
		snprintf(out, cap, "/proc/self/fd/%d", fd);
}

uint64_t vol_ea_size_at(int dirfd, const char *name)
{
	char path[32 + VOL_NAME_MAX + 1];
	uint64_t sum;
	ssize_t n;

	vol_ea_path(dirfd, name, path, sizeof(path));
	n = lgetxattr(path, VOL_EA_ATTR, NULL, 0);
	sum = n > 0 ? (uint64_t)n : 0;
	/* the security descriptor (vol_sd.c) counts the same way */
	n = lgetxattr(path, VOL_SD_ATTR, NULL, 0);
	return sum + (n > 0 ? (uint64_t)n : 0);
}

int vol_xa_get(const struct vol_obj *obj, const char *attr, uint8_t *buf, size_t cap, size_t *len)
{
	char path[32];
	ssize_t n;

	if (obj->fd < 0 || !obj->exp)
		return -EBADF;
	vol_ea_path(obj->fd, NULL, path, sizeof(path));
	n = getxattr(path, attr, buf, cap);
	if (n < 0) {
		if (errno == ENODATA || errno == ENOTSUP) {
			*len = 0; /* none set, or a file system without xattrs */
			return 0;
		}
		return -errno;
	}
	*len = (size_t)n;
	return 0;
}

int vol_ea_get(const struct vol_obj *obj, uint8_t *buf, size_t cap, size_t *len)
{
	return vol_xa_get(obj, VOL_EA_ATTR, buf, cap, len);
}

int vol_xa_set(struct vol_obj *obj, const char *attr, const uint8_t *blob, size_t len, unsigned watch,
	       const struct vol_cred *cred)
{
	char path[32];
	pthread_mutex_t *mu;
	ssize_t had;
	uint64_t old;
	int rc = 0;

	if (obj->fd < 0 || !obj->exp)
		return -EBADF;
	if (obj->snap)
		return -EROFS;
	vol_ea_path(obj->fd, NULL, path, sizeof(path));
	mu = vol_lock_of(obj); /* the size read and the set, one at a time per file */
	pthread_mutex_lock(mu);
	had = getxattr(path, attr, NULL, 0);
	old = had > 0 ? (uint64_t)had : 0;
	if (len > old && (rc = vol_reserve(obj->exp, len - old)) != 0)
		goto out;
	if (len == 0)
		rc = removexattr(path, attr) == 0 || errno == ENODATA ? 0 : -errno;
	else
		rc = setxattr(path, attr, blob, len, 0) == 0 ? 0 : -errno;
	if (rc == -ENOTSUP)
		rc = -EOPNOTSUPP;
	/* the shelf's file system holds less than the blob's cap (ext4 without
	 * ea_inode: what is left of one block): the list is too large there */
	if (rc == -ENOSPC || rc == -ERANGE)
		rc = -E2BIG;
	if (rc != 0) {
		if (len > old)
			vol_adjust(obj->exp, -(int64_t)(len - old));
		goto out;
	}
	if (len < old)
		vol_adjust(obj->exp, -(int64_t)(old - len));
out:
	pthread_mutex_unlock(mu);
	if (rc != 0)
		return rc;
	vol_dirty(obj); /* so a file sync below cannot take it for clean */
	/* acknowledged means kept: the inode's change reaches the disk first,
	 * a folder's as a file's (vol_sync: the volume's log sync where the
	 * file system has one, else the object's own group-committed fsync) */
	if ((rc = vol_sync_as(obj, cred)) != 0)
		return rc;
	vol_watch_note_obj(obj, VOL_WATCH_MODIFIED, watch);
	return 0;
}

int vol_ea_set(struct vol_obj *obj, const struct vol_cred *cred, const uint8_t *blob, size_t len)
{
	int rc;

	if (obj->fd < 0 || !obj->exp)
		return -EBADF;
	if (obj->snap)
		return -EROFS;
	if (len > VOL_EA_MAX)
		return -E2BIG;
	/* the caller's right, checked as the caller (owner, or may write it);
	 * the attribute itself is written with the server's identity */
	if ((rc = vol_may_set_attr(obj, cred)) != 0)
		return rc;
	return vol_xa_set(obj, VOL_EA_ATTR, blob, len, VOL_WATCH_EA, cred);
}
