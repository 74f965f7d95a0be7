/* snap_used: the bytes a snapshot holds alone, i.e. the space its delete
 * gives back: the extents of its regular files that nothing else shares
 * (FIEMAP_EXTENT_SHARED, which btrfs and XFS report; a file system without
 * shared extents reports none shared, so a portable copy counts whole).
 * Holes (a tiered file's cold chunks) hold nothing. Walks the whole tree:
 * the agent calls it from a background thread, never on a request. */
#define _GNU_SOURCE
#include "agent/snap/snap_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define SNAP_FIEMAP_EXTENTS 128
#define SNAP_USED_DEPTH 512

/* Unshared bytes of the file fd. */
static uint64_t snap_file_unshared(int fd)
{
	size_t sz = sizeof(struct fiemap) + SNAP_FIEMAP_EXTENTS * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(sz);
	uint64_t start = 0, sum = 0;
	bool last = false;

	if (!fm)
		return 0;
	while (!last) {
		memset(fm, 0, sz);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = SNAP_FIEMAP_EXTENTS;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0 || fm->fm_mapped_extents == 0)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *x = &fm->fm_extents[i];

			/* inline data lives in metadata blocks a snapshot shares until changed */
			if (!(x->fe_flags & (FIEMAP_EXTENT_SHARED | FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DATA_INLINE)))
				sum += x->fe_length;
			start = x->fe_logical + x->fe_length;
			last = x->fe_flags & FIEMAP_EXTENT_LAST;
		}
	}
	free(fm);
	return sum;
}

static uint64_t snap_used_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	uint64_t sum = 0;

	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		int sub;

		if (de->d_type != DT_REG && de->d_type != DT_DIR)
			continue;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_DIR && depth >= SNAP_USED_DEPTH)
			continue;
		sub = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (de->d_type == DT_DIR ? O_DIRECTORY : 0));
		if (sub < 0)
			continue;
		if (de->d_type == DT_DIR) {
			sum += snap_used_dir(sub, depth + 1);
		} else {
			sum += snap_file_unshared(sub);
			close(sub);
		}
	}
	closedir(d);
	return sum;
}

int snap_used_bytes(const char *shelf, const char *name, const char *id, uint64_t *bytes)
{
	char dir[1200], p[1400];
	int fd;

	snap_dir_of(shelf, name, dir, sizeof(dir));
	snprintf(p, sizeof(p), "%s/%s", dir, id);
	if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	*bytes = snap_used_dir(fd, 0);
	return 0;
}
