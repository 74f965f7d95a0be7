/* vol_sparse: holes in a file's data, for every protocol alike. Zeroing a
 * range deallocates it (fallocate PUNCH_HOLE, the size kept), so NFS's
 * READ, SEEK_DATA on the shelf and SMB's allocated ranges see the same
 * holes (or, for a caller keeping the blocks, zeroes them in place); the
 * allocated ranges are the file's SEEK_DATA/SEEK_HOLE extents.
 * A tiered file's cold chunks are holes on the shelf too: zeroing brings
 * them back first (as a write does), and a range touching cold data is
 * reported allocated whole, so that no client copying only the allocated
 * ranges skips data that is merely cold. See vol.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "agent/vol/vol_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define VOL_ZERO_CHUNK 65536u /* the fallback's zeroes per pwrite */

/* Zeroes over [off, end) by writing them (a file system without PUNCH_HOLE). */
static int vol_zero_write(int fd, uint64_t off, uint64_t end)
{
	static const char zeroes[VOL_ZERO_CHUNK];

	while (off < end) {
		size_t n = end - off < VOL_ZERO_CHUNK ? (size_t)(end - off) : VOL_ZERO_CHUNK;
		ssize_t k = pwrite(fd, zeroes, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		off += (uint64_t)k;
	}
	return 0;
}

int vol_zero_range(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, uint64_t len, bool dealloc,
		   const struct vol_lease_by *by)
{
	const struct vol_tier_ops *tier = obj->exp->store->tier;
	uint64_t end;
	bool owned = false, tiered = false;
	size_t tlen = 0;
	int fd, rc = 0;

	if (obj->snap)
		return -EROFS;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	if (off + len < off)
		return -EINVAL;
	if (len == 0)
		return 0;
	fd = vol_iofd(obj, cred, true, &owned);
	if (fd < 0)
		return fd;
	/* what other clients cache of the data goes first, as for a write */
	vol_lease_break(obj, VOL_LEASE_R | VOL_LEASE_W, by);
	if (fstat(fd, &obj->st) != 0) {
		rc = -errno;
		goto out;
	}
	/* nothing past the end is zeroed: the size stays (MS-FSCC 2.3.67) */
	end = off + len < (uint64_t)obj->st.st_size ? off + len : (uint64_t)obj->st.st_size;
	if (off >= end)
		goto out;
	tlen = end - off > SIZE_MAX ? SIZE_MAX : (size_t)(end - off);
	if (tier && (rc = tier->write_begin(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, tlen)) != 0)
		goto out;
	tiered = tier != NULL;
	if (fallocate(fd, (dealloc ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE) | FALLOC_FL_KEEP_SIZE, (off_t)off,
		      (off_t)(end - off)) != 0) {
		rc = -errno;
		if (rc == -EOPNOTSUPP)
			rc = vol_zero_write(fd, off, end);
	}
	if (tiered)
		tier->write_end(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, tlen);
	if (rc == 0) {
		vol_ra_forget(obj->exp, (uint64_t)obj->st.st_ino);
		vol_watch_note_obj(obj, VOL_WATCH_MODIFIED, VOL_WATCH_LAST_WRITE);
	}
out:
	vol_dirty(obj);
	fstat(fd, &obj->st);
	if (owned)
		close(fd);
	return rc;
}

/* Append [off, end) to out (merged with the last range when adjacent). */
static void vol_range_add(struct vol_range *out, size_t cap, size_t *n, bool *more, uint64_t off, uint64_t end)
{
	if (*n && out[*n - 1].off + out[*n - 1].len == off) {
		out[*n - 1].len += end - off;
		return;
	}
	if (*n == cap) {
		*more = true;
		return;
	}
	out[*n].off = off;
	out[*n].len = end - off;
	(*n)++;
}

int vol_alloc_ranges(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, uint64_t len,
		     struct vol_range *out, size_t cap, size_t *n, bool *more)
{
	const struct vol_tier_ops *tier = obj->exp->store->tier;
	uint64_t end, pos;
	bool owned = false;
	int fd, rc = 0;

	*n = 0;
	*more = false;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	if (off + len < off)
		return -EINVAL;
	fd = vol_iofd(obj, cred, false, &owned);
	if (fd < 0)
		return fd;
	if (fstat(fd, &obj->st) != 0) {
		rc = -errno;
		goto out;
	}
	end = off + len < (uint64_t)obj->st.st_size ? off + len : (uint64_t)obj->st.st_size;
	if (off >= end)
		goto out;
	if (tier && tier->cold(obj->exp->store->tier_arg, obj->exp->cfg.fsid, &obj->st, off,
			       end - off > SIZE_MAX ? SIZE_MAX : (size_t)(end - off)) == 1) {
		vol_range_add(out, cap, n, more, off, end);
		goto out;
	}
	for (pos = off; pos < end && !*more;) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;

		if (d < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (d < 0) {
			rc = -errno;
			goto out;
		}
		if ((uint64_t)d >= end)
			break;
		if ((h = lseek(fd, d, SEEK_HOLE)) < 0) {
			rc = -errno;
			goto out;
		}
		if (h <= d) {
			rc = -EIO;
			goto out;
		}
		vol_range_add(out, cap, n, more, (uint64_t)d, (uint64_t)h < end ? (uint64_t)h : end);
		pos = (uint64_t)h;
	}
out:
	if (rc != 0)
		*n = 0;
	if (owned)
		close(fd);
	return rc;
}
