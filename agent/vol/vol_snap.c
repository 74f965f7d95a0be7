/* vol_snap: /.snapshot at an export root (issue 20), read-only.
 *
 * An export whose cfg.snapdir is set serves that folder (the volume's
 * snapshot roots, agent/snap/snap.h) as ".snapshot" in its root: a LOOKUP of
 * the name there gives it, its READDIR lists the snapshot ids, a LOOKUP of
 * an id gives that snapshot's root. Every object reached that way is a
 * snapshot object (vol_obj.snap): its handles are version 3 (the MAC covers
 * the version, so a live handle can never be turned into one or back), and
 * every change to it is -EROFS before anything is touched. ".." climbs from
 * a snapshot root to .snapshot and from .snapshot to the export root.
 *
 * Containment of a snapshot handle (vol_snap_contained): the object is the
 * export's own .snapshot folder, or lies in one of its snapshots: a btrfs
 * snapshot is its own subvolume, with an st_dev of its own, so the object's
 * st_dev must be one of this export's snapshot roots' (the set is read from
 * the folder again when an st_dev is not in it: a snapshot made since); a
 * copy's objects carry VOL_SNAP_MARK = the export's fsid. A live handle never
 * resolves into a snapshot (a btrfs snapshot has another st_dev, a copy's
 * objects carry no VOL_MARK), nor a snapshot handle into the live tree or
 * into another volume's snapshots.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/xattr.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VOL_SNAP_NAME ".snapshot"

int vol_snap_open(struct vol_export *e)
{
	struct stat st;

	e->snap_fd = -1;
	pthread_mutex_init(&e->snap_mu, NULL);
	if (!e->cfg.snapdir[0])
		return 0;
	e->snap_fd = open(e->cfg.snapdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->snap_fd < 0 || fstat(e->snap_fd, &st) != 0)
		return -errno;
	e->snap_dev = st.st_dev;
	e->snap_ino = st.st_ino;
	return 0;
}

void vol_snap_close(struct vol_export *e)
{
	if (e->snap_fd >= 0)
		close(e->snap_fd);
	e->snap_fd = -1;
	pthread_mutex_destroy(&e->snap_mu);
}

static bool vol_snap_is_dir(const struct vol_export *e, const struct stat *st)
{
	return e->snap_fd >= 0 && st->st_dev == e->snap_dev && st->st_ino == e->snap_ino;
}

/* The st_dev of every snapshot root of e that has one of its own. */
static void vol_snap_devs(struct vol_export *e)
{
	int fd = openat(e->snap_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	e->nsnap_devs = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL && e->nsnap_devs < VOL_SNAP_DEVS) {
		struct stat st;

		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && st.st_dev != e->snap_dev && st.st_dev != e->dev) {
			snprintf(e->snap_names[e->nsnap_devs], sizeof(e->snap_names[0]), "%s", de->d_name);
			e->snap_devs[e->nsnap_devs++] = st.st_dev;
		}
	}
	closedir(d);
}

/* The index of st_dev among e's snapshot roots (read again on a miss), or -1. */
static int vol_snap_find_dev(struct vol_export *e, dev_t dev)
{
	int at = -1;

	pthread_mutex_lock(&e->snap_mu);
	for (int pass = 0; pass < 2 && at < 0; pass++) {
		if (pass == 1)
			vol_snap_devs(e); /* a snapshot made since the set was read */
		for (size_t i = 0; i < e->nsnap_devs && at < 0; i++)
			if (e->snap_devs[i] == dev)
				at = (int)i;
	}
	pthread_mutex_unlock(&e->snap_mu);
	return at;
}

int vol_snap_id(const struct vol_obj *o, int fd, char *id, size_t cap)
{
	struct vol_export *e = o->exp;
	ssize_t n;
	int at;

	if (e->snap_fd < 0 || vol_snap_is_dir(e, &o->st))
		return -ENOENT;
	if (o->st.st_dev != e->snap_dev && o->st.st_dev != e->dev) {
		if ((at = vol_snap_find_dev(e, o->st.st_dev)) < 0)
			return -ENOENT;
		pthread_mutex_lock(&e->snap_mu);
		snprintf(id, cap, "%s", e->snap_names[at]);
		pthread_mutex_unlock(&e->snap_mu);
		return 0;
	}
	if ((n = fgetxattr(fd, VOL_SNAP_ID, id, cap - 1)) <= 0)
		return -ENOENT;
	id[n] = '\0';
	return 0;
}

bool vol_snap_contained(struct vol_export *e, const struct vol_obj *o)
{
	uint64_t m = 0;

	if (e->snap_fd < 0 || o->st.st_nlink == 0)
		return false;
	if (vol_snap_is_dir(e, &o->st))
		return true;
	if (o->st.st_dev != e->snap_dev && o->st.st_dev != e->dev)
		return vol_snap_find_dev(e, o->st.st_dev) >= 0;
	return vol_xmark_get(e->store, VOL_SNAP_MARK, o->fd, S_ISDIR(o->st.st_mode) ? "." : NULL, &m) == 0 &&
	       m == e->cfg.fsid;
}

bool vol_obj_is_snap_root(const struct vol_obj *obj)
{
	struct stat up;

	return obj->exp && obj->snap && obj->fd >= 0 && S_ISDIR(obj->st.st_mode) && !vol_snap_is_dir(obj->exp, &obj->st) &&
	       fstatat(obj->fd, "..", &up, 0) == 0 && vol_snap_is_dir(obj->exp, &up);
}

bool vol_snap_reserved(const struct vol_obj *dir, const char *nm)
{
	return dir->exp->snap_fd >= 0 && !dir->snap && dir->st.st_ino == dir->exp->ino &&
	       dir->st.st_dev == dir->exp->dev && !strcmp(nm, VOL_SNAP_NAME);
}

/* The snapshot object for the descriptor fd (taken). */
static int vol_snap_adopt(struct vol_export *e, int fd, struct vol_obj *out)
{
	int rc;

	if (fd < 0)
		return -errno;
	if ((rc = vol_obj_adopt(e, fd, out)) == 0)
		out->snap = true;
	return rc;
}

int vol_snap_root(struct vol_export *e, struct vol_obj *out)
{
	if (e->snap_fd < 0)
		return -ENOENT;
	return vol_snap_adopt(e, openat(e->snap_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC), out);
}

int vol_snap_lookup(struct vol_obj *dir, const char *nm, struct vol_obj *out)
{
	struct vol_export *e = dir->exp;
	struct stat up;

	if (vol_snap_reserved(dir, nm))
		return e->cfg.snapdir_hidden ? -ENOENT : vol_snap_root(e, out);
	if (!dir->snap)
		return 1;
	if (!strcmp(nm, "..")) {
		if (vol_snap_is_dir(e, &dir->st))
			return vol_root(e, out);
		if (fstatat(dir->fd, "..", &up, 0) == 0 && vol_snap_is_dir(e, &up))
			return vol_snap_root(e, out);
	}
	/* below .snapshot: a plain lookup, whose result is a snapshot object
	 * too (no containment mark adopted: nothing is written there) */
	return vol_snap_adopt(e, openat(dir->fd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC), out);
}
