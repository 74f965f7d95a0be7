/* vol_clone: block cloning (FICLONERANGE) between two files of one volume,
 * for SMB's FSCTL_DUPLICATE_EXTENTS_TO_FILE. Whether the volume's folder
 * can clone is probed as the export is attached (vol_store_set, on the
 * agent's apply thread, never the SMB loop: an unnamed file of the folder,
 * one block cloned onto its second), once per file system a set holds and
 * kept across sets for a volume on the same one, on the export: ext4 and tmpfs
 * answer EOPNOTSUPP, btrfs and XFS with reflink clone. A source range in
 * the cold tier is a hole on the shelf: cloning it would clone the hole,
 * so it is refused (the client copies instead). See vol_clone.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_clone.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "agent/vol/vol_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define VOL_CLONE_UNIT_MAX 65536u /* the probe's block, at most */

/* 1: the folder of e clones, -1: its file system does not (the ioctl's
 * answer), -2: no probe could be made (no unnamed file, no room for its
 * block: a full or read-only folder), taken as no and probed again at the
 * next attach. */
static int vol_clone_probe(struct vol_export *e)
{
	struct file_clone_range fcr = { 0 };
	struct stat st;
	char *blk = NULL;
	int fd, ok = -2;

	if ((fd = openat(e->root_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0)
		return errno == EOPNOTSUPP || errno == EISDIR ? -1 : -2; /* no O_TMPFILE: no FICLONERANGE either */
	if (fstat(fd, &st) != 0 || st.st_blksize <= 0 || (unsigned long)st.st_blksize > VOL_CLONE_UNIT_MAX ||
	    !(blk = calloc(1, (size_t)st.st_blksize)))
		goto out;
	if (pwrite(fd, blk, (size_t)st.st_blksize, 0) != (ssize_t)st.st_blksize)
		goto out;
	fcr.src_fd = fd;
	fcr.src_offset = 0;
	fcr.src_length = (uint64_t)st.st_blksize;
	fcr.dest_offset = (uint64_t)st.st_blksize;
	ok = ioctl(fd, FICLONERANGE, &fcr) == 0 ? 1 : -1;
out:
	free(blk);
	close(fd);
	return ok;
}

void vol_clone_attach(struct vol_export *e, const struct vol_export *like)
{
	int ok = like && like->dev == e->dev ? atomic_load(&like->clone_ok) : 0;

	atomic_store(&e->clone_ok, ok == 1 || ok == -1 ? ok : vol_clone_probe(e));
}

bool vol_clone_supported(struct vol_obj *obj)
{
	return atomic_load(&obj->exp->clone_ok) > 0; /* decided at attach: no I/O here */
}

uint32_t vol_clone_unit(struct vol_obj *obj)
{
	struct stat st;

	if (fstat(obj->exp->root_fd, &st) != 0 || st.st_blksize <= 0 || (unsigned long)st.st_blksize > VOL_CLONE_UNIT_MAX)
		return 4096u;
	return (uint32_t)st.st_blksize;
}

/* Every check that needs no I/O: 0 or the refusal. */
static int vol_clone_check(const struct vol_obj *src, const struct vol_obj *dst, uint64_t soff, uint64_t doff,
			   uint64_t len, uint32_t unit)
{
	if (dst->snap)
		return -EROFS;
	if (S_ISDIR(src->st.st_mode) || S_ISDIR(dst->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(src->st.st_mode) || !S_ISREG(dst->st.st_mode))
		return -EINVAL;
	if (src->exp != dst->exp)
		return -EXDEV;
	if (soff > UINT64_MAX - len || doff > UINT64_MAX - len || soff > INT64_MAX - len || doff > INT64_MAX - len)
		return -EINVAL;
	if (soff % unit || doff % unit)
		return -EINVAL;
	if (src->st.st_ino == dst->st.st_ino && src->st.st_dev == dst->st.st_dev && soff < doff + len &&
	    doff < soff + len)
		return -EINVAL;
	return 0;
}

int vol_clone(struct vol_obj *src, const struct vol_cred *scred, uint64_t soff, struct vol_obj *dst,
	      const struct vol_cred *dcred, uint64_t doff, uint64_t len, const struct vol_lease_by *by)
{
	const struct vol_tier_ops *tier = dst->exp->store->tier;
	struct file_clone_range fcr = { 0 };
	uint32_t unit = vol_clone_unit(dst);
	bool sowned = false, downed = false, tiered = false;
	size_t tlen = len > SIZE_MAX ? SIZE_MAX : (size_t)len;
	int sfd = -1, dfd = -1, rc;

	if ((rc = vol_clone_check(src, dst, soff, doff, len, unit)) != 0 || len == 0)
		return rc;
	if (!vol_clone_supported(dst))
		return -EOPNOTSUPP;
	if ((sfd = vol_iofd(src, scred, false, &sowned)) < 0) {
		rc = sfd;
		goto out;
	}
	if ((dfd = vol_iofd(dst, dcred, true, &downed)) < 0) {
		rc = dfd;
		goto out;
	}
	if (fstat(sfd, &src->st) != 0 || fstat(dfd, &dst->st) != 0) {
		rc = -errno;
		goto out;
	}
	/* within the source; a length not a multiple of the unit only to its end */
	if (soff > (uint64_t)src->st.st_size || len > (uint64_t)src->st.st_size - soff ||
	    (len % unit && soff + len != (uint64_t)src->st.st_size)) {
		rc = -EINVAL;
		goto out;
	}
	if (tier && tier->cold(src->exp->store->tier_arg, src->exp->cfg.fsid, &src->st, soff, tlen) == 1) {
		rc = -EOPNOTSUPP;
		goto out;
	}
	vol_lease_break(dst, VOL_LEASE_R | VOL_LEASE_W, by);
	if (tier && (rc = tier->write_begin(dst->exp->store->tier_arg, dst->exp->cfg.fsid, dfd, &dst->st, doff, tlen)) != 0)
		goto out;
	tiered = tier != NULL;
	fcr.src_fd = sfd;
	fcr.src_offset = soff;
	fcr.src_length = len;
	fcr.dest_offset = doff;
	rc = ioctl(dfd, FICLONERANGE, &fcr) == 0 ? 0 : -errno;
	if (rc == -ENOTTY || rc == -ENOSYS)
		rc = -EOPNOTSUPP;
	if (tiered)
		tier->write_end(dst->exp->store->tier_arg, dst->exp->cfg.fsid, dfd, &dst->st, doff, tlen);
	if (rc == 0) {
		vol_ra_forget(dst->exp, (uint64_t)dst->st.st_ino);
		vol_watch_note_obj(dst, VOL_WATCH_MODIFIED, VOL_WATCH_LAST_WRITE);
	}
	vol_dirty(dst);
	fstat(dfd, &dst->st);
out:
	if (sowned)
		close(sfd);
	if (downed)
		close(dfd);
	return rc;
}
