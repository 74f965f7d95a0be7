/* snap_fs: the two snapshot mechanisms of snap.h on the file system itself.
 *
 * btrfs: a volume's folder is a subvolume, a snapshot one ioctl. Anywhere
 * else the tree is copied object by object, sharing extents where the file
 * system can (FICLONE) and copying only the data ranges of sparse files
 * (SEEK_DATA/SEEK_HOLE: a tiered file's cold chunks are holes, and stay so).
 */
#define _GNU_SOURCE
#include "agent/snap/snap_internal.h"
#include "agent/vol/vol.h" /* the mark names */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#define SNAP_FS_DEPTH 512
#define SNAP_BTRFS_ROOT_INO 256 /* BTRFS_FIRST_FREE_OBJECTID: every subvolume's root */

bool snap_fs_is_subvol(int fd)
{
	struct statfs sf;
	struct stat st;

	return fstatfs(fd, &sf) == 0 && sf.f_type == BTRFS_SUPER_MAGIC && fstat(fd, &st) == 0 &&
	       S_ISDIR(st.st_mode) && st.st_ino == SNAP_BTRFS_ROOT_INO;
}

int snap_fs_btrfs_snap(int srcfd, int dirfd, const char *name, bool rdonly)
{
	struct btrfs_ioctl_vol_args_v2 a;

	memset(&a, 0, sizeof(a));
	if (strlen(name) >= sizeof(a.name))
		return -ENAMETOOLONG;
	a.fd = srcfd;
	a.flags = rdonly ? BTRFS_SUBVOL_RDONLY : 0;
	snprintf(a.name, sizeof(a.name), "%s", name);
	return ioctl(dirfd, BTRFS_IOC_SNAP_CREATE_V2, &a) == 0 ? 0 : -errno;
}

int snap_fs_btrfs_subvol(int dirfd, const char *name)
{
	struct btrfs_ioctl_vol_args a;

	memset(&a, 0, sizeof(a));
	if (strlen(name) >= sizeof(a.name))
		return -ENAMETOOLONG;
	snprintf(a.name, sizeof(a.name), "%s", name);
	return ioctl(dirfd, BTRFS_IOC_SUBVOL_CREATE, &a) == 0 ? 0 : -errno;
}

/* ---------- removal ---------- */

static int snap_rm_below(int fd, int depth);

static int snap_rm_at(int dirfd, const char *name, int depth)
{
	struct btrfs_ioctl_vol_args a;
	struct stat st;
	int fd, rc;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT ? 0 : -errno;
	if (depth > SNAP_FS_DEPTH)
		return -ELOOP;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (snap_fs_is_subvol(fd)) { /* the whole subvolume at once (as root) */
		close(fd);
		memset(&a, 0, sizeof(a));
		snprintf(a.name, sizeof(a.name), "%s", name);
		return ioctl(dirfd, BTRFS_IOC_SNAP_DESTROY, &a) == 0 ? 0 : -errno;
	}
	rc = snap_rm_below(fd, depth + 1); /* closes fd */
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
		rc = -errno;
	return rc;
}

/* Remove everything in the folder fd (closed here). */
static int snap_rm_below(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc = snap_rm_at(dirfd(d), de->d_name, depth);
	}
	closedir(d);
	return rc;
}

int snap_fs_remove(int dirfd, const char *name)
{
	return snap_rm_at(dirfd, name, 0);
}

/* ---------- the portable copy ---------- */

/* Hard links met so far: (inode of the source) -> path below the copy's root. */
struct snap_link {
	ino_t ino;
	char *path;
};

struct snap_copy {
	dev_t dev;                     /* the source tree's: never crossed */
	int droot;                     /* the copy's root folder */
	enum snap_copy_mark mark;
	uint8_t fsid[8];
	const char *snapid;
	struct snap_link *links;
	size_t nlinks, cap;
};

/* The path of an object for the *xattr calls: never follows a symlink. */
static void snap_proc(char *out, size_t cap, int dirfd, const char *name)
{
	snprintf(out, cap, "/proc/self/fd/%d/%s", dirfd, name);
}

/* Extended attributes of src onto dst (both paths; l*xattr, so a symlink's
 * own, unless follow: a /proc/self/fd/N link itself), neither mark; then the
 * snapshot mark when asked. */
static int snap_xattrs(const struct snap_copy *c, const char *src, const char *dst, bool follow, bool reg)
{
	ssize_t (*list)(const char *, char *, size_t) = follow ? listxattr : llistxattr;
	ssize_t (*get)(const char *, const char *, void *, size_t) = follow ? getxattr : lgetxattr;
	int (*set)(const char *, const char *, const void *, size_t, int) = follow ? setxattr : lsetxattr;
	char names[4096], val[65536];
	ssize_t n = list(src, names, sizeof(names)), v;
	size_t off;

	if (n < 0)
		n = 0; /* a file system without xattrs: nothing to copy */
	for (off = 0; off < (size_t)n; off += strlen(names + off) + 1) {
		const char *nm = names + off;

		if (!strcmp(nm, VOL_MARK) || !strcmp(nm, VOL_SNAP_MARK) || !strcmp(nm, VOL_SNAP_ID))
			continue;
		if ((v = get(src, nm, val, sizeof(val))) < 0)
			continue;
		if (set(dst, nm, val, (size_t)v, 0) != 0 && errno != ENOTSUP && errno != EPERM)
			return -errno;
	}
	if (c->mark == SNAP_COPY_SNAPMARK && set(dst, VOL_SNAP_MARK, c->fsid, 8, 0) != 0 && errno != ENOTSUP)
		return -errno;
	if (c->mark == SNAP_COPY_SNAPMARK && reg && set(dst, VOL_SNAP_ID, c->snapid, strlen(c->snapid), 0) != 0 &&
	    errno != ENOTSUP)
		return -errno;
	return 0;
}

/* The data of sfd into dfd: shared extents when the file system can,
 * else the data ranges only (holes stay holes). */
static int snap_data(int sfd, int dfd, off_t size)
{
	off_t pos = 0, end;

	if (ioctl(dfd, FICLONE, sfd) == 0)
		return 0;
	while (pos < size) {
		if ((pos = lseek(sfd, pos, SEEK_DATA)) < 0)
			break; /* ENXIO: only a hole is left */
		if ((end = lseek(sfd, pos, SEEK_HOLE)) < 0)
			end = size;
		while (pos < end) {
			loff_t in = pos, out = pos;
			ssize_t k = copy_file_range(sfd, &in, dfd, &out, (size_t)(end - pos), 0);

			if (k < 0)
				return -errno;
			if (k == 0)
				return -EIO;
			pos += k;
		}
	}
	return ftruncate(dfd, size) == 0 ? 0 : -errno;
}

static int snap_attrs(const struct snap_copy *c, int sdir, int ddir, const char *name, const struct stat *st)
{
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	char sp[64 + NAME_MAX], dp[64 + NAME_MAX];
	int rc;

	snap_proc(sp, sizeof(sp), sdir, name);
	snap_proc(dp, sizeof(dp), ddir, name);
	if (fchownat(ddir, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (!S_ISLNK(st->st_mode) && fchmodat(ddir, name, st->st_mode & 07777, 0) != 0)
		return -errno;
	if ((rc = snap_xattrs(c, sp, dp, false, S_ISREG(st->st_mode))) != 0)
		return rc;
	return utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

/* A second name of a file already copied: link it there. 1 when done. */
static int snap_hardlink(struct snap_copy *c, const struct stat *st, int ddir, const char *name,
			 const char *rel)
{
	size_t i;

	for (i = 0; i < c->nlinks; i++)
		if (c->links[i].ino == st->st_ino)
			return linkat(c->droot, c->links[i].path, ddir, name, 0) == 0 ? 1 : -errno;
	if (c->nlinks == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct snap_link *l = realloc(c->links, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		c->links = l;
		c->cap = cap;
	}
	if (!(c->links[c->nlinks].path = strdup(rel)))
		return -ENOMEM;
	c->links[c->nlinks++].ino = st->st_ino;
	return 0;
}

static int snap_copy_dir(struct snap_copy *c, int sfd, int dfd, const char *rel, int depth);

static int snap_copy_one(struct snap_copy *c, int sdir, int ddir, const char *name, const char *rel, int depth)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct stat st;
	int sfd = -1, dfd = -1, rc = 0;
	ssize_t n;

	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -errno; /* gone meanwhile */
	if (st.st_dev != c->dev)
		return 0; /* a mount below the volume: not its data */
	snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name);
	if (S_ISREG(st.st_mode)) {
		if (st.st_nlink > 1 && (rc = snap_hardlink(c, &st, ddir, name, path)) != 0)
			return rc < 0 ? rc : 0;
		if ((sfd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return errno == ENOENT ? 0 : -errno;
		if ((dfd = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
			rc = -errno;
			goto out;
		}
		if ((rc = snap_data(sfd, dfd, st.st_size)) != 0)
			goto out;
	} else if (S_ISDIR(st.st_mode)) {
		if (depth > SNAP_FS_DEPTH)
			return -ELOOP;
		if (mkdirat(ddir, name, 0700) != 0)
			return -errno;
		if ((sfd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		    (dfd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rc = -errno;
			goto out;
		}
		if ((rc = snap_copy_dir(c, sfd, dfd, path, depth + 1)) != 0)
			goto out;
	} else if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(sdir, name, target, sizeof(target) - 1)) < 0)
			return -errno;
		target[n] = '\0';
		if (symlinkat(target, ddir, name) != 0)
			return -errno;
	} else if (mknodat(ddir, name, st.st_mode & (S_IFMT | 0700), st.st_rdev) != 0) {
		return -errno;
	}
	rc = snap_attrs(c, sdir, ddir, name, &st);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static int snap_copy_dir(struct snap_copy *c, int sfd, int dfd, const char *rel, int depth)
{
	int fd = dup(sfd), rc = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc = snap_copy_one(c, sfd, dfd, de->d_name, rel, depth);
	}
	closedir(d);
	return rc;
}

int snap_fs_copy(int srcfd, int dirfd, const char *name, enum snap_copy_mark mark, uint64_t fsid, const char *snapid)
{
	struct snap_copy c = {.mark = mark, .droot = -1, .snapid = snapid ? snapid : ""};
	struct stat st;
	size_t i;
	int rc;

	for (i = 0; i < 8; i++)
		c.fsid[i] = (uint8_t)(fsid >> (56 - 8 * i));
	if (fstat(srcfd, &st) != 0)
		return -errno;
	c.dev = st.st_dev;
	if (mkdirat(dirfd, name, 0700) != 0)
		return -errno;
	if ((c.droot = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = snap_copy_dir(&c, srcfd, c.droot, "", 0)) != 0)
		goto out;
	/* the root's own attributes, as the other folders' */
	{
		struct timespec ts[2] = {st.st_atim, st.st_mtim};
		char sp[64], dp[64];

		snprintf(sp, sizeof(sp), "/proc/self/fd/%d", srcfd);
		snprintf(dp, sizeof(dp), "/proc/self/fd/%d", c.droot);
		if (fchown(c.droot, st.st_uid, st.st_gid) != 0 || fchmod(c.droot, st.st_mode & 07777) != 0 ||
		    (rc = snap_xattrs(&c, sp, dp, true, false)) != 0 || futimens(c.droot, ts) != 0)
			rc = rc ? rc : -errno;
	}
out:
	if (c.droot >= 0)
		close(c.droot);
	for (i = 0; i < c.nlinks; i++)
		free(c.links[i].path);
	free(c.links);
	return rc;
}
