/* snap: the layout, the manifests and the crash-safe steps of snap.h. */
#define _GNU_SOURCE
#include "agent/snap/snap_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/ut_file.h"

#define SNAP_WORK ".work"
#define SNAP_REVERT ".revert"
#define SNAP_MANIFEST_MAX 1024

const char *snap_mech_name(enum snap_mech m)
{
	return m == SNAP_BTRFS ? "btrfs snapshots (O(1), shared extents)"
			       : "tree copy (FICLONE where the file system shares extents, else copy_file_range)";
}

static void snap_path(char *out, size_t cap, const char *shelf, const char *a, const char *b)
{
	snprintf(out, cap, "%s/" SNAP_DIR "%s%s%s%s", shelf, a ? "/" : "", a ? a : "", b ? "/" : "", b ? b : "");
}

void snap_dir_of(const char *shelf, const char *name, char *out, size_t cap)
{
	snap_path(out, cap, shelf, name, NULL);
}

static void snap_meta_dir(const char *shelf, const char *name, char *out, size_t cap)
{
	char m[128];

	snprintf(m, sizeof(m), "%s.meta", name);
	snap_path(out, cap, shelf, m, NULL);
}

static int snap_mkdir(const char *path)
{
	return mkdir(path, 0711) == 0 || errno == EEXIST ? 0 : -errno;
}

static int snap_open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Drop the manifests of a volume's meta folder that have no root: a create
 * or a delete cut short. A manifest saying error= stands alone. */
static void snap_sweep_meta(const char *shelf, const char *name)
{
	char meta[1200], dir[1200], p[1400], *text = NULL;
	struct dirent *de;
	DIR *d;

	snap_meta_dir(shelf, name, meta, sizeof(meta));
	snap_dir_of(shelf, name, dir, sizeof(dir));
	if (!(d = opendir(meta)))
		return;
	while ((de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", meta, de->d_name);
		if (ut_file_read(p, SNAP_MANIFEST_MAX, &text, NULL, NULL) == AQ_OK && strstr(text, "\nerror="))
			; /* a failed create's record: kept until the snapshot is deleted */
		else
			ut_file_remove(p, NULL);
		free(text);
		text = NULL;
	}
	closedir(d);
}

int snap_shelf_init(const char *shelf, enum snap_mech *mech, aq_msg *msg)
{
	char top[1100], work[1200];
	struct dirent *de;
	int fd, rc;
	DIR *d;

	snap_path(top, sizeof(top), shelf, NULL, NULL);
	snap_path(work, sizeof(work), shelf, SNAP_WORK, NULL);
	if ((rc = snap_mkdir(top)) != 0 || (rc = snap_mkdir(work)) != 0)
		return aq_fail(msg, AQ_EIO, "cannot make %s: %s", work, strerror(-rc));
	if ((fd = snap_open_dir(work)) < 0)
		return aq_fail(msg, AQ_EIO, "cannot open %s: %s", work, strerror(-fd));
	/* leftovers of steps a crash cut short: never a snapshot's final name */
	if ((d = fdopendir(fd)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				snap_fs_remove(dirfd(d), de->d_name);
		closedir(d);
	} else {
		close(fd);
	}
	if ((d = opendir(top)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			size_t l = strlen(de->d_name);

			if (l > 5 && !strcmp(de->d_name + l - 5, ".meta")) {
				char name[128];

				snprintf(name, sizeof(name), "%.*s", (int)(l - 5), de->d_name);
				snap_sweep_meta(shelf, name);
			}
		}
		closedir(d);
	}
	fd = snap_open_dir(top);
	*mech = fd >= 0 && snap_fs_is_subvol(fd) ? SNAP_BTRFS : SNAP_COPY;
	if (fd >= 0) {
		struct stat st;

		/* a btrfs shelf not at its file system's root still takes subvolumes */
		if (*mech == SNAP_COPY && fstat(fd, &st) == 0) {
			int probe = snap_fs_btrfs_subvol(fd, SNAP_WORK "-probe");

			if (probe == 0 || probe == -EEXIST) {
				*mech = SNAP_BTRFS;
				snap_fs_remove(fd, SNAP_WORK "-probe");
			}
		}
		close(fd);
	}
	return AQ_OK;
}

enum snap_mech snap_mech_of(const char *root)
{
	int fd = snap_open_dir(root);
	enum snap_mech m = fd >= 0 && snap_fs_is_subvol(fd) ? SNAP_BTRFS : SNAP_COPY;

	if (fd >= 0)
		close(fd);
	return m;
}

/* The folder holding path, open, and path's last part in *base. */
static int snap_open_parent(const char *path, const char **base)
{
	char parent[4096];
	const char *slash = strrchr(path, '/');

	if (!slash || (size_t)(slash - path) >= sizeof(parent))
		return -EINVAL;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
	*base = slash + 1;
	return snap_open_dir(parent);
}

int snap_volume_make(const char *path, unsigned mode)
{
	const char *base;
	int fd = snap_open_parent(path, &base), rc;

	if (fd < 0)
		return fd;
	rc = snap_fs_btrfs_subvol(fd, base);
	if (rc != 0 && rc != -EEXIST) /* not btrfs (ENOTTY, EOPNOTSUPP...): a folder */
		rc = mkdirat(fd, base, 0700) == 0 ? 0 : -errno;
	if (rc == 0 && fchmodat(fd, base, mode & 07777, 0) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

int snap_tree_remove(const char *path)
{
	const char *base;
	int fd = snap_open_parent(path, &base), rc;

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	rc = snap_fs_remove(fd, base);
	close(fd);
	return rc;
}

/* ---------- manifests ---------- */

static int snap_manifest_write(const char *shelf, const char *name, const struct snap_info *si, aq_msg *msg)
{
	char meta[1200], p[1400], text[SNAP_MANIFEST_MAX];
	int rc, n;

	snap_meta_dir(shelf, name, meta, sizeof(meta));
	if ((rc = snap_mkdir(meta)) != 0)
		return aq_fail(msg, AQ_EIO, "cannot make %s: %s", meta, strerror(-rc));
	snprintf(p, sizeof(p), "%s/%s", meta, si->snap.id);
	n = snprintf(text, sizeof(text), "uid=%s\ncreate=%" PRId64 "\n%s%s%s", si->snap.uid, si->create_unix,
		     si->ready ? "" : "error=", si->ready ? "" : si->detail, si->ready ? "" : "\n");
	return ut_file_write(p, text, (size_t)n, msg);
}

static int snap_manifest_read(const char *shelf, const char *name, const char *id, struct snap_info *si)
{
	char meta[1200], p[1400], *text = NULL, *e;
	long long t = 0;
	int rc = -ENOENT;

	memset(si, 0, sizeof(*si));
	snap_meta_dir(shelf, name, meta, sizeof(meta));
	snprintf(p, sizeof(p), "%s/%s", meta, id);
	if (ut_file_read(p, SNAP_MANIFEST_MAX, &text, NULL, NULL) != AQ_OK)
		goto out;
	if (sscanf(text, "uid=%16[0-9a-f]\ncreate=%lld\n", si->snap.uid, &t) != 2) {
		rc = -EINVAL;
		goto out;
	}
	snprintf(si->snap.id, sizeof(si->snap.id), "%s", id);
	si->create_unix = t;
	si->ready = true;
	if ((e = strstr(text, "\nerror=")) != NULL) {
		size_t l;

		e += 7;
		l = strcspn(e, "\n");
		si->ready = false;
		snprintf(si->detail, sizeof(si->detail), "%.*s", (int)l, e);
	}
	rc = 0;
out:
	free(text);
	return rc;
}

static void snap_manifest_drop(const char *shelf, const char *name, const char *id)
{
	char meta[1200], p[1400];

	snap_meta_dir(shelf, name, meta, sizeof(meta));
	snprintf(p, sizeof(p), "%s/%s", meta, id);
	ut_file_remove(p, NULL);
}

/* ---------- the operations ---------- */

/* A unique name under .work for one step of volume name. */
static void snap_work_name(char *out, size_t cap, const char *what, const char *name, const char *id)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(out, cap, "%s-%s-%s-%lld.%09ld", what, name, id, (long long)ts.tv_sec, ts.tv_nsec);
}

/* A copy of the tree src (a folder) named wname in .work: a btrfs snapshot
 * when src is a subvolume, else the portable copy. */
static int snap_make_copy(int src, int work, const char *wname, bool rdonly, enum snap_copy_mark mark,
			  uint64_t fsid)
{
	if (snap_fs_is_subvol(src))
		return snap_fs_btrfs_snap(src, work, wname, rdonly);
	return snap_fs_copy(src, work, wname, mark, fsid, NULL);
}

static int snap_create_tree(const char *shelf, const char *name, const char *root, uint64_t fsid, const char *id,
			    aq_msg *msg)
{
	char work[1200], dir[1200], wname[256];
	int src = -1, wfd = -1, dfd = -1, rc;

	snap_path(work, sizeof(work), shelf, SNAP_WORK, NULL);
	snap_dir_of(shelf, name, dir, sizeof(dir));
	snap_work_name(wname, sizeof(wname), "snap", name, id);
	if ((rc = snap_mkdir(dir)) != 0 || (src = rc = snap_open_dir(root)) < 0 || (wfd = rc = snap_open_dir(work)) < 0 ||
	    (dfd = rc = snap_open_dir(dir)) < 0) {
		aq_fail(msg, AQ_EIO, "cannot open the snapshot folders: %s", strerror(-rc));
		goto out;
	}
	if (snap_fs_is_subvol(src)) {
		/* one ioctl, committed whole or not at all, straight under its
		 * name (btrfs refuses to move a read-only subvolume anyway) */
		if ((rc = snap_fs_btrfs_snap(src, dfd, id, true)) != 0 || (rc = fsync(dfd) ? -errno : 0) != 0)
			aq_fail(msg, AQ_EIO, "cannot make the snapshot: %s", strerror(-rc));
		goto out;
	}
	if ((rc = snap_fs_copy(src, wfd, wname, SNAP_COPY_SNAPMARK, fsid, id)) != 0) {
		aq_fail(msg, AQ_EIO, "cannot make the snapshot: %s", strerror(-rc));
		snap_fs_remove(wfd, wname);
		goto out;
	}
	/* the copy is durable before it gets its name (a btrfs snapshot is
	 * committed by its ioctl; syncfs covers the portable copy) */
	if (syncfs(wfd) != 0 || renameat(wfd, wname, dfd, id) != 0 || fsync(dfd) != 0) {
		rc = -errno;
		aq_fail(msg, AQ_EIO, "cannot put the snapshot in place: %s", strerror(-rc));
		snap_fs_remove(wfd, wname);
		goto out;
	}
	rc = 0;
out:
	if (src >= 0)
		close(src);
	if (wfd >= 0)
		close(wfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

int snap_create(const char *shelf, const char *name, const char *root, uint64_t fsid,
		const struct api_intent_snap *s, aq_msg *msg)
{
	struct snap_info si = {.snap = *s, .ready = true, .create_unix = (int64_t)time(NULL)};
	aq_msg why = { .text = "" };
	int rc;

	if (snap_id_used(shelf, name, s->id))
		return -EEXIST; /* this snapshot, or another one under its id */
	if (snap_manifest_write(shelf, name, &si, msg) != AQ_OK)
		return -EIO;
	if ((rc = snap_create_tree(shelf, name, root, fsid, s->id, &why)) != 0) {
		si.ready = false;
		snprintf(si.detail, sizeof(si.detail), "%s", why.text);
		snap_manifest_write(shelf, name, &si, NULL);
		aq_fail(msg, AQ_EIO, "%s", why.text);
	}
	return rc;
}

int snap_delete(const char *shelf, const char *name, const struct api_intent_snap *s, aq_msg *msg)
{
	char work[1200], dir[1200], wname[256];
	struct snap_info si;
	int wfd = -1, dfd = -1, rc = 0;

	if (snap_manifest_read(shelf, name, s->id, &si) == 0 && s->uid[0] && strcmp(si.snap.uid, s->uid) != 0)
		return 0; /* another snapshot under that id now: not the one meant */
	snap_path(work, sizeof(work), shelf, SNAP_WORK, NULL);
	snap_dir_of(shelf, name, dir, sizeof(dir));
	snap_work_name(wname, sizeof(wname), "del", name, s->id);
	if ((dfd = snap_open_dir(dir)) >= 0 && (wfd = rc = snap_open_dir(work)) >= 0) {
		int fd = openat(dfd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		bool subvol = fd >= 0 && snap_fs_is_subvol(fd);

		if (fd >= 0)
			close(fd);
		/* absent from here on: a subvolume goes in one ioctl, a copy's
		 * rename is its delete */
		if (subvol) {
			rc = snap_fs_remove(dfd, s->id);
		} else if (renameat(dfd, s->id, wfd, wname) == 0) {
			fsync(dfd);
			rc = snap_fs_remove(wfd, wname);
		} else if (errno != ENOENT) {
			rc = -errno;
		}
	}
	if (rc < 0) {
		aq_fail(msg, AQ_EIO, "cannot delete snapshot %s: %s", s->id, strerror(-rc));
		goto out;
	}
	snap_manifest_drop(shelf, name, s->id);
	rc = 0;
out:
	if (wfd >= 0)
		close(wfd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

bool snap_exists(const char *shelf, const char *name, const struct api_intent_snap *s)
{
	struct snap_info si;

	return snap_manifest_read(shelf, name, s->id, &si) == 0 && !strcmp(si.snap.uid, s->uid);
}

bool snap_id_used(const char *shelf, const char *name, const char *id)
{
	struct snap_info si;

	return snap_manifest_read(shelf, name, id, &si) == 0;
}

int snap_list(const char *shelf, const char *name, struct snap_info *out, size_t cap, size_t *n)
{
	char meta[1200], dir[1200], p[1400];
	struct dirent *de;
	DIR *d;

	*n = 0;
	snap_meta_dir(shelf, name, meta, sizeof(meta));
	snap_dir_of(shelf, name, dir, sizeof(dir));
	if (!(d = opendir(meta)))
		return errno == ENOENT ? 0 : -errno;
	while (*n < cap && (de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.' || snap_manifest_read(shelf, name, de->d_name, &out[*n]) != 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		/* a ready manifest without its root is a create in progress (or
		 * cut short): not a snapshot yet */
		if (out[*n].ready && lstat(p, &st) != 0)
			continue;
		(*n)++;
	}
	closedir(d);
	return 0;
}

uint64_t snap_revert_seq(const char *shelf, const char *name)
{
	char meta[1200], p[1400], *text = NULL;
	unsigned long long seq = 0;

	snap_meta_dir(shelf, name, meta, sizeof(meta));
	snprintf(p, sizeof(p), "%s/" SNAP_REVERT, meta);
	if (ut_file_read(p, 64, &text, NULL, NULL) == AQ_OK && sscanf(text, "%llu", &seq) != 1)
		seq = 0;
	free(text);
	return seq;
}

/* Stages a writable copy of snapshot S of volume NAME as WNAME in the shelf's
 * work folder (WHAT names the purpose: "revert", "clone"), synced to disk.
 * Returns the open work folder (>= 0) for the caller's rename, or -errno with
 * MSG set; on failure nothing is left in the work folder. */
static int snap_stage(const char *shelf, const char *name, const struct api_intent_snap *s, const char *what,
		      char *wname, size_t wcap, aq_msg *msg)
{
	char work[1200], dir[1200], p[1400];
	int src = -1, wfd = -1, rc;

	if (!snap_exists(shelf, name, s))
		return aq_fail(msg, AQ_ENOENT, "snapshot %s of %s does not exist here", s->id, name), -ENOENT;
	snap_path(work, sizeof(work), shelf, SNAP_WORK, NULL);
	snap_dir_of(shelf, name, dir, sizeof(dir));
	snprintf(p, sizeof(p), "%s/%s", dir, s->id);
	snap_work_name(wname, wcap, what, name, s->id);
	if ((src = rc = snap_open_dir(p)) < 0 || (wfd = rc = snap_open_dir(work)) < 0) {
		aq_fail(msg, AQ_EIO, "cannot open snapshot %s: %s", s->id, strerror(-rc));
		goto out;
	}
	if ((rc = snap_make_copy(src, wfd, wname, false, SNAP_COPY_NOMARK, 0)) != 0 || syncfs(wfd) != 0) {
		rc = rc ? rc : -errno;
		aq_fail(msg, AQ_EIO, "cannot copy snapshot %s: %s", s->id, strerror(-rc));
		snap_fs_remove(wfd, wname);
		goto out;
	}
	rc = wfd;
	wfd = -1;
out:
	if (src >= 0)
		close(src);
	if (wfd >= 0)
		close(wfd);
	return rc;
}

int snap_revert(const char *shelf, const char *name, const char *root, const struct api_intent_snap *s,
		uint64_t seq, const struct snap_fill *fill, aq_msg *msg)
{
	char meta[1200], p[1400], wname[256], text[32];
	int wfd, rc;

	if (seq <= snap_revert_seq(shelf, name))
		return 0;
	if ((wfd = rc = snap_stage(shelf, name, s, "revert", wname, sizeof(wname), msg)) < 0)
		return rc;
	if (fill && (rc = fill->fn(fill->arg, wfd, wname)) != 0) {
		aq_fail(msg, AQ_EIO, "cannot fill the revert to snapshot %s: %s", s->id, strerror(-rc));
		snap_fs_remove(wfd, wname);
		goto out;
	}
	/* one atomic step: the live folder's name now holds the copy */
	if (renameat2(wfd, wname, AT_FDCWD, root, RENAME_EXCHANGE) != 0) {
		rc = -errno;
		aq_fail(msg, AQ_EIO, "cannot exchange the volume with its revert: %s", strerror(-rc));
		snap_fs_remove(wfd, wname);
		goto out;
	}
	fsync(wfd);
	rc = 0;
	snap_meta_dir(shelf, name, meta, sizeof(meta));
	snprintf(p, sizeof(p), "%s/" SNAP_REVERT, meta);
	snprintf(text, sizeof(text), "%llu\n", (unsigned long long)seq);
	if (snap_mkdir(meta) != 0 || ut_file_write(p, text, strlen(text), msg) != AQ_OK)
		rc = -EIO; /* the content is reverted; the seq is not recorded: applied again */
	snap_fs_remove(wfd, wname); /* the old live tree */
out:
	close(wfd);
	return rc;
}

int snap_clone(const char *shelf, const char *src_name, const struct api_intent_snap *s, const char *dst,
	       const struct snap_fill *fill, aq_msg *msg)
{
	char wname[256];
	const char *base;
	int wfd, pfd = -1, rc;

	if ((wfd = rc = snap_stage(shelf, src_name, s, "clone", wname, sizeof(wname), msg)) < 0)
		return rc;
	if (fill && (rc = fill->fn(fill->arg, wfd, wname)) != 0) {
		aq_fail(msg, AQ_EIO, "cannot fill the clone of snapshot %s: %s", s->id, strerror(-rc));
		snap_fs_remove(wfd, wname);
		goto out;
	}
	if ((pfd = rc = snap_open_parent(dst, &base)) < 0 || renameat(wfd, wname, pfd, base) != 0) {
		rc = rc < 0 ? rc : -errno;
		aq_fail(msg, AQ_EIO, "cannot clone snapshot %s: %s", s->id, strerror(-rc));
		snap_fs_remove(wfd, wname);
		goto out;
	}
	/* both folders the rename touched, so the clone survives a power loss */
	fsync(wfd);
	fsync(pfd);
	rc = 0;
out:
	if (pfd >= 0)
		close(pfd);
	close(wfd);
	return rc;
}

int snap_destroy_volume(const char *shelf, const char *name)
{
	char top[1100], meta[128];
	int fd, rc;

	snap_path(top, sizeof(top), shelf, NULL, NULL);
	snprintf(meta, sizeof(meta), "%s.meta", name);
	if ((fd = snap_open_dir(top)) < 0)
		return fd == -ENOENT ? 0 : fd;
	/* the roots first: a manifest without its root is swept at start */
	if ((rc = snap_fs_remove(fd, name)) == 0)
		rc = snap_fs_remove(fd, meta);
	close(fd);
	return rc;
}
