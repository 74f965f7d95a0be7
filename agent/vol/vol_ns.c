/* vol_ns: names in the volume store: LOOKUP, CREATE (EXCLUSIVE verifier in
 * the times), MKDIR, SYMLINK, MKNOD (FIFOs and sockets), REMOVE, RMDIR,
 * RENAME, LINK, READDIR; each change is charged its name against capacity,
 * marked for containment and made stable before it returns. Every name is a
 * single component resolved relative to a directory descriptor, never
 * followed through a symlink. See vol.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "agent/vol/vol_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static int vol_check_name(const char *name, size_t nlen)
{
	if (nlen == 0)
		return -EINVAL;
	if (nlen > VOL_NAME_MAX)
		return -ENAMETOOLONG;
	if (memchr(name, '/', nlen) || memchr(name, '\0', nlen))
		return -EINVAL;
	return 0;
}

static bool vol_is_root(const struct vol_obj *o)
{
	return o->st.st_ino == o->exp->ino && o->st.st_dev == o->exp->dev;
}

bool vol_obj_is_root(const struct vol_obj *obj)
{
	return obj->exp && !obj->snap && vol_is_root(obj);
}

/* Copy a checked name into a C string. */
static int vol_name(const char *name, size_t nlen, char *buf)
{
	int rc = vol_check_name(name, nlen);

	if (rc)
		return rc;
	memcpy(buf, name, nlen);
	buf[nlen] = '\0';
	return 0;
}

/* The start of an operation that yields the object named in dir: out empty
 * (nothing to release on failure), dir a directory, the name checked into nm. */
static int vol_dir_name(const struct vol_obj *dir, const char *name, size_t nlen, char *nm, struct vol_obj *out)
{
	out->fd = -1;
	out->exp = NULL;
	out->snap = false;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	return vol_name(name, nlen, nm);
}

static int vol_lookup_nocred(struct vol_obj *dir, const char *nm, struct vol_obj *out)
{
	int fd;

	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	fd = openat(dir->fd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return vol_obj_adopt(dir->exp, fd, out);
}

int vol_lookup(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	       struct vol_obj *out)
{
	char nm[VOL_NAME_MAX + 1];
	int rc;

	if ((rc = vol_dir_name(dir, name, nlen, nm, out)) != 0)
		return rc;
	if (!strcmp(nm, "..") && vol_is_root(dir) && !dir->snap)
		nm[1] = '\0'; /* ".." at the root is the root: never above it */
	vol_become(cred);
	if ((rc = vol_snap_lookup(dir, nm, out)) != 1) { /* /.snapshot and below */
		vol_unbecome(cred);
		return rc;
	}
	rc = vol_lookup_nocred(dir, nm, out);
	vol_unbecome(cred);
	if (rc == 0 && (rc = vol_mark_adopt(dir, nm)) != 0)
		vol_obj_cleanup(out);
	if (rc == 0)
		vol_ra_note(dir, nm, out); /* a READ names only the file: its name for read-ahead */
	return rc;
}

/* ---------- stable names ---------- */

/* NFSv3 wants a namespace change stable before its reply (knfsd's
 * commit_metadata): the directory it changed is fsync'ed, and a new file or
 * directory itself (its inode got attributes after it was made), through
 * the group commits of vol_sync.c; where the export has a log (one_log)
 * each of those is the volume's log sync, which covers every change made
 * before it. */
static int vol_dirsync(struct vol_obj *dir)
{
	return vol_dir_stable(dir);
}

/* A new object in dir was just fsync'ed (made as one transaction with its
 * directory entry, its attributes after): where the file system orders its
 * metadata in one log (vol_export.ordered_meta: ext4, XFS) that sync made
 * the entry stable too, so dir's own fsync, a second journal flush, is
 * skipped (counted in dirsyncs_covered); elsewhere dir is synced. */
static int vol_dirsync_new(struct vol_obj *dir)
{
	if (dir->exp->ordered_meta && dir->st.st_dev == dir->exp->dev) {
		atomic_fetch_add_explicit(&dir->exp->acct->dirsyncs_covered, 1, memory_order_relaxed);
		return 0;
	}
	return vol_dirsync(dir);
}

/* dir took part in a change whose other object was just fsync'ed (a
 * RENAME's target directory, a LINK's file): where the file system logs
 * that change whole (vol_export.one_log: XFS, ext4 with a journal) the sync
 * made dir's part stable too, and dir's own fsync is skipped (counted in
 * dirsyncs_covered); elsewhere dir is synced. */
static int vol_dirsync_also(struct vol_obj *dir)
{
	if (dir->exp->one_log && dir->st.st_dev == dir->exp->dev) {
		atomic_fetch_add_explicit(&dir->exp->acct->dirsyncs_covered, 1, memory_order_relaxed);
		return 0;
	}
	return vol_dirsync(dir);
}

/* A new object nm in dir is this volume's: give it the containment mark, or
 * undo the creation (an object without its mark could never be resolved). */
static int vol_mark_new(struct vol_obj *dir, const char *nm, bool isdir)
{
	int rc;

	if (!dir->exp->marks || (rc = vol_mark_set(dir->exp->store, dir->fd, nm, dir->exp->cfg.fsid)) == 0)
		return 0;
	unlinkat(dir->fd, nm, isdir ? AT_REMOVEDIR : 0);
	return rc;
}

/* Before a name is made in dir: check it into nm and charge it
 * VOL_NAME_COST of capacity (-EDQUOT when it would not fit: refused before
 * anything changes; the caller gives it back if no name is made). */
static int vol_new_name(struct vol_obj *dir, const char *name, size_t nlen, char *nm, struct vol_obj *out)
{
	int rc;

	if ((rc = vol_dir_name(dir, name, nlen, nm, out)) != 0)
		return rc;
	if (dir->snap)
		return -EROFS;
	if (!strcmp(nm, ".") || !strcmp(nm, "..") || vol_snap_reserved(dir, nm))
		return -EEXIST;
	return vol_name_charge(dir->exp);
}

static void vol_put_verf(const uint8_t *v, struct timespec ts[2])
{
	uint32_t a = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
	uint32_t m = (uint32_t)v[4] << 24 | (uint32_t)v[5] << 16 | (uint32_t)v[6] << 8 | v[7];

	/* Like Linux nfsd: the 8 verifier bytes live in atime/mtime seconds,
	 * masked to 31 bits so they stay valid times. */
	ts[0].tv_sec = a & 0x7fffffff;
	ts[0].tv_nsec = 0;
	ts[1].tv_sec = m & 0x7fffffff;
	ts[1].tv_nsec = 0;
}

/* Whether sa sets anything. */
static bool vol_sattr_any(const struct vol_sattr *sa)
{
	return sa->set_mode || sa->set_uid || sa->set_gid || sa->set_size || sa->atime_how || sa->mtime_how;
}

int vol_create(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	       bool guarded, const uint8_t *excl_verf, const struct vol_sattr *sa,
	       struct vol_obj *out)
{
	char nm[VOL_NAME_MAX + 1];
	int fd = -1, rc, flags = O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
	mode_t mode = sa && sa->set_mode ? (mode_t)(sa->mode & 07777) : 0644;
	struct timespec ts[2];
	bool created, applied = false;

	if ((rc = vol_new_name(dir, name, nlen, nm, out)) != 0)
		return rc;
	vol_become(cred);
	/* Exclusive first, so we know whether this call made the file. */
	fd = openat(dir->fd, nm, flags | O_EXCL, excl_verf ? 0600 : mode);
	created = fd >= 0;
	if (fd < 0 && errno == EEXIST && excl_verf) {
		/* A retried EXCLUSIVE create: same verifier means success. */
		struct stat st;

		vol_put_verf(excl_verf, ts);
		if (fstatat(dir->fd, nm, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_atim.tv_sec != ts[0].tv_sec || st.st_mtim.tv_sec != ts[1].tv_sec)
			rc = -EEXIST;
		else if ((rc = vol_mark_adopt(dir, nm)) == 0)
			rc = vol_lookup_nocred(dir, nm, out);
		goto out;
	}
	if (fd < 0 && errno == EEXIST && !guarded) { /* UNCHECKED: open what is there */
		struct stat st;

		/* only a regular file is opened again (knfsd: anything else is
		 * EEXIST); O_NONBLOCK so a FIFO that slips in is never waited on */
		if (fstatat(dir->fd, nm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = -errno;
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			rc = -EEXIST;
			goto out;
		}
		fd = openat(dir->fd, nm, (flags & ~O_CREAT) | O_NONBLOCK);
	}
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = created ? vol_mark_new(dir, nm, false) : vol_mark_adopt(dir, nm)) != 0) {
		created = false; /* vol_mark_new undid it */
		goto out;
	}
	rc = vol_lookup_nocred(dir, nm, out);
	if (rc == 0 && !created && !S_ISREG(out->st.st_mode))
		rc = -EEXIST; /* replaced between the fstatat and the open */
	if (rc == 0 && sa) {
		struct vol_sattr rest = *sa;

		/* openat applied the process umask; NFS clients apply their own,
		 * so set the mode they asked for exactly. An exclusive create's
		 * times are its verifier's (NFSv4.1 EXCLUSIVE4_1 sets the mode,
		 * owner and size it asks: suppattr_exclcreat). */
		if (!created && !excl_verf) {
			/* UNCHECKED of a file that was there (or another client
			 * made between its LOOKUP and this): only the size, as
			 * knfsd's nfsd3_create_file (ia_valid &= ATTR_SIZE); the
			 * mode, owner and times are the creator's to keep */
			memset(&rest, 0, sizeof(rest));
			rest.set_size = sa->set_size;
			rest.size = sa->size;
		}
		if (rest.set_size && rest.size == (uint64_t)out->st.st_size)
			rest.set_size = false;
		if (excl_verf)
			rest.atime_how = rest.mtime_how = 0;
		applied = !created && vol_sattr_any(&rest);
		rc = vol_setattr_nocred(out, &rest);
	}
	/* the verifier after the size (a cut moves mtime) and after a change
	 * of owner, which only root makes, who may set the times anyway */
	if (rc == 0 && excl_verf) {
		vol_put_verf(excl_verf, ts);
		if (futimens(fd, ts) != 0)
			rc = -errno;
	}
	if (rc == 0)
		rc = vol_refresh(out);
out:
	vol_unbecome(cred);
	if (!created) { /* the name was there already, or is gone again */
		vol_name_refund(dir->exp);
		/* an UNCHECKED create cut or changed the file that was there:
		 * stable before the reply, as a SETATTR's (vol_setattr_stable) */
		if (rc == 0 && applied && !vol_defer(out, cred))
			rc = vol_sync(out);
	} else if (rc == 0 && !vol_defer(dir, cred) && (rc = vol_obj_stable(out, fd)) == 0) {
		rc = vol_dirsync_new(dir);
	}
	if (fd >= 0)
		close(fd);
	if (rc) {
		vol_obj_cleanup(out);
	} else { /* a file made or opened again (maybe cut): read-ahead starts over */
		vol_ra_forget(dir->exp, (uint64_t)out->st.st_ino);
		vol_ra_note(dir, nm, out);
		if (created)
			vol_watch_note(dir, nm, VOL_WATCH_ADDED, VOL_WATCH_FILE_NAME);
	}
	return rc;
}

static int vol_apply_owner(struct vol_obj *o, const struct vol_sattr *sa)
{
	struct vol_sattr rest;

	if (!sa)
		return 0;
	rest = *sa; /* mode again: mkdirat applied the umask */
	rest.set_size = false;
	if (vol_setattr_nocred(o, &rest) == 0)
		return vol_refresh(o);
	return 0; /* the object exists; attribute failure is not fatal */
}

/* What MKDIR, SYMLINK and MKNOD make. */
struct vol_mk {
	mode_t type;               /* S_IFDIR, S_IFLNK, S_IFIFO, S_IFSOCK */
	mode_t mode;
	const char *target;        /* S_IFLNK */
};

/* The name is charged first (vol_new_name); the object is made as the
 * caller, marked, looked up and given the attributes asked for (the mode
 * again, as mkdirat/mknodat applied the umask; a symlink takes none), then
 * made stable. */
static int vol_make(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
		    const struct vol_mk *mk, const struct vol_sattr *sa, struct vol_obj *out)
{
	char nm[VOL_NAME_MAX + 1];
	bool made = false;
	int rc;

	if ((rc = vol_new_name(dir, name, nlen, nm, out)) != 0)
		return rc;
	vol_become(cred);
	if (mk->type == S_IFDIR)
		rc = mkdirat(dir->fd, nm, mk->mode);
	else if (mk->type == S_IFLNK)
		rc = symlinkat(mk->target, dir->fd, nm);
	else
		rc = mknodat(dir->fd, nm, mk->type | mk->mode, 0);
	if (rc != 0) {
		rc = -errno;
	} else if ((rc = vol_mark_new(dir, nm, mk->type == S_IFDIR)) == 0) {
		made = true;
		if ((rc = vol_lookup_nocred(dir, nm, out)) == 0 && mk->type != S_IFLNK)
			rc = vol_apply_owner(out, sa);
	}
	vol_unbecome(cred);
	if (!made)
		vol_name_refund(dir->exp);
	else if (rc == 0 && vol_defer(dir, cred))
		; /* stable at the next vol_commit or log sync */
	else if (rc == 0 && mk->type == S_IFDIR && (rc = vol_obj_stable(out, -1)) == 0)
		rc = vol_dirsync_new(dir);
	else if (rc == 0 && mk->type != S_IFDIR)
		rc = vol_dirsync(dir); /* a FIFO, socket or symlink cannot be opened to sync */
	if (rc)
		vol_obj_cleanup(out);
	else
		vol_watch_note(dir, nm, VOL_WATCH_ADDED, mk->type == S_IFDIR ? VOL_WATCH_DIR_NAME : VOL_WATCH_FILE_NAME);
	return rc;
}

int vol_mkdir(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	      const struct vol_sattr *sa, struct vol_obj *out)
{
	struct vol_mk mk = {.type = S_IFDIR, .mode = sa && sa->set_mode ? (mode_t)(sa->mode & 07777) : 0755};

	return vol_make(dir, cred, name, nlen, &mk, sa, out);
}

int vol_symlink(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
		const char *target, size_t tlen, const struct vol_sattr *sa, struct vol_obj *out)
{
	struct vol_mk mk = {.type = S_IFLNK};
	char *t = NULL;
	int rc;

	out->fd = -1;
	out->exp = NULL;
	if (tlen == 0 || tlen >= PATH_MAX || memchr(target, '\0', tlen))
		return tlen >= PATH_MAX ? -ENAMETOOLONG : -EINVAL;
	if (!(t = malloc(tlen + 1)))
		return -ENOMEM;
	memcpy(t, target, tlen);
	t[tlen] = '\0';
	mk.target = t;
	rc = vol_make(dir, cred, name, nlen, &mk, sa, out);
	free(t);
	return rc;
}

int vol_mknod(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen, mode_t type,
	      const struct vol_sattr *sa, struct vol_obj *out)
{
	struct vol_mk mk = {.type = type, .mode = sa && sa->set_mode ? (mode_t)(sa->mode & 07777) : 0644};
	int rc;

	out->fd = -1;
	out->exp = NULL;
	if (type == S_IFIFO || type == S_IFSOCK)
		return vol_make(dir, cred, name, nlen, &mk, sa, out);
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_check_name(name, nlen)) != 0)
		return rc;
	return -EPERM; /* device nodes: nobody holds CAP_MKNOD on a volume */
}

/* Unlink nm (dir or not) from dir, refunding its name and the data of a
 * last link. */
static int vol_unlink_common(struct vol_obj *dir, const struct vol_cred *cred, const char *name,
			     size_t nlen, bool isdir)
{
	char nm[VOL_NAME_MAX + 1];
	struct stat st;
	int rc;

	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(name, nlen, nm)) != 0)
		return rc;
	if (dir->snap || vol_snap_reserved(dir, nm))
		return -EROFS;
	if (!strcmp(nm, "."))
		return -EINVAL;
	if (!strcmp(nm, ".."))
		return isdir ? -ENOTEMPTY : -EISDIR;
	vol_become(cred);
	if (fstatat(dir->fd, nm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		rc = -errno;
	} else if (!isdir && S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
	} else if (isdir && !S_ISDIR(st.st_mode)) {
		rc = -ENOTDIR;
	} else {
		/* the EAs go with the object's last name (vol_ea.c) */
		uint64_t ea = S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && st.st_nlink == 1)
				      ? vol_ea_size_at(dir->fd, nm) : 0;

		/* Let the open-file cache release the object with its name. */
		vol_drop_name(dir, nm, dir->exp->store);
		if (unlinkat(dir->fd, nm, isdir ? AT_REMOVEDIR : 0) != 0) {
			rc = -errno;
		} else {
			vol_name_refund(dir->exp);
			vol_adjust(dir->exp, -(int64_t)ea);
			if (S_ISREG(st.st_mode) && st.st_nlink == 1)
				vol_adjust(dir->exp, -(int64_t)st.st_size);
			vol_ra_forget(dir->exp, (uint64_t)st.st_ino);
		}
	}
	vol_unbecome(cred);
	if (rc == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && dir->exp->store->tier)
		dir->exp->store->tier->unlinked(dir->exp->store->tier_arg, dir->exp->cfg.fsid, &st);
	if (rc == 0 && !vol_defer(dir, cred))
		rc = vol_dirsync(dir);
	if (rc == 0)
		vol_watch_note(dir, nm, VOL_WATCH_REMOVED, isdir ? VOL_WATCH_DIR_NAME : VOL_WATCH_FILE_NAME);
	return rc;
}

int vol_remove(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen)
{
	return vol_remove_by(dir, cred, name, nlen, NULL);
}

int vol_remove_by(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
		  const struct vol_lease_by *by)
{
	char nm[VOL_NAME_MAX + 1];

	/* a client caching a handle to the file closes it first (vol_lease.h) */
	if (S_ISDIR(dir->st.st_mode) && !dir->snap && vol_name(name, nlen, nm) == 0 && strcmp(nm, ".") &&
	    strcmp(nm, ".."))
		vol_lease_break_name(dir, nm, VOL_LEASE_H, by);
	return vol_unlink_common(dir, cred, name, nlen, false);
}

int vol_rmdir(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen)
{
	return vol_unlink_common(dir, cred, name, nlen, true);
}

int vol_rename(struct vol_obj *fdir, const char *fname, size_t flen, struct vol_obj *tdir,
	       const char *tname, size_t tlen, const struct vol_cred *cred)
{
	return vol_rename_by(fdir, fname, flen, tdir, tname, tlen, cred, NULL);
}

int vol_rename_by(struct vol_obj *fdir, const char *fname, size_t flen, struct vol_obj *tdir,
		  const char *tname, size_t tlen, const struct vol_cred *cred, const struct vol_lease_by *by)
{
	char f[VOL_NAME_MAX + 1], t[VOL_NAME_MAX + 1];
	struct stat st, src;
	bool had = false, gone = false, known = false;
	uint64_t tea;
	int rc;

	if (fdir->exp->acct != tdir->exp->acct)
		return -EXDEV;
	if (!S_ISDIR(fdir->st.st_mode) || !S_ISDIR(tdir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(fname, flen, f)) != 0 || (rc = vol_name(tname, tlen, t)) != 0)
		return rc;
	if (fdir->snap || tdir->snap || vol_snap_reserved(fdir, f) || vol_snap_reserved(tdir, t))
		return -EROFS;
	if (!strcmp(f, ".") || !strcmp(f, "..") || !strcmp(t, ".") || !strcmp(t, ".."))
		return -EINVAL;
	/* clients caching a handle to the file, or to the one it replaces,
	 * close it first (vol_lease.h); no store lock is held while waiting */
	vol_lease_break_name(fdir, f, VOL_LEASE_H, by);
	vol_lease_break_name(tdir, t, VOL_LEASE_H, by);
	vol_become(cred);
	if ((known = fstatat(fdir->fd, f, &src, AT_SYMLINK_NOFOLLOW) == 0)) /* its name changes: read-ahead forgets it */
		vol_ra_forget(fdir->exp, (uint64_t)src.st_ino);
	had = fstatat(tdir->fd, t, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (had)
		vol_ra_forget(tdir->exp, (uint64_t)st.st_ino);
	/* the replaced object's EAs (vol_ea.c) go with its last name */
	tea = had && (S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && st.st_nlink == 1)) ? vol_ea_size_at(tdir->fd, t) : 0;
	if (had)
		vol_drop_name(tdir, t, tdir->exp->store);
	if (renameat(fdir->fd, f, tdir->fd, t) != 0)
		rc = -errno;
	else if (had) {
		struct stat now;

		/* The target's name went (and its data with a last link), unless
		 * source and target were the same file (then nothing moved). */
		if (fstatat(tdir->fd, t, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st.st_ino) {
			gone = S_ISREG(st.st_mode) && st.st_nlink == 1;
			vol_name_refund(tdir->exp);
			vol_adjust(tdir->exp, -(int64_t)tea);
			if (gone)
				vol_adjust(tdir->exp, -(int64_t)st.st_size);
		}
	}
	vol_unbecome(cred);
	if (gone && tdir->exp->store->tier)
		tdir->exp->store->tier->unlinked(tdir->exp->store->tier_arg, tdir->exp->cfg.fsid, &st);
	if (rc == 0 && !vol_defer(tdir, cred)) {
		rc = vol_dirsync(tdir);
		if (rc == 0 && fdir->st.st_ino != tdir->st.st_ino)
			rc = vol_dirsync_also(fdir);
	}
	if (rc == 0 && known) {
		unsigned what = S_ISDIR(src.st_mode) ? VOL_WATCH_DIR_NAME : VOL_WATCH_FILE_NAME;
		bool same = fdir->st.st_ino == tdir->st.st_ino && fdir->st.st_dev == tdir->st.st_dev;

		/* as Windows reports it: a move to another directory is a removal
		 * there and an addition here */
		vol_watch_note(fdir, f, same ? VOL_WATCH_RENAMED_OLD : VOL_WATCH_REMOVED, what);
		vol_watch_note(tdir, t, same ? VOL_WATCH_RENAMED_NEW : VOL_WATCH_ADDED, what);
	}
	return rc;
}

/* What a new link of obj as name in dir must be (the same volume, a folder,
 * no snapshot, not a folder itself, a valid name), the name into nm. */
static int vol_link_check(const struct vol_obj *obj, const struct vol_obj *dir, const char *name, size_t nlen,
			  char *nm)
{
	if (obj->exp->acct != dir->exp->acct)
		return -EXDEV;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if (obj->snap || dir->snap)
		return -EROFS;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	return vol_name(name, nlen, nm);
}

int vol_link(struct vol_obj *obj, struct vol_obj *dir, const char *name, size_t nlen,
	     const struct vol_cred *cred)
{
	char nm[VOL_NAME_MAX + 1], num[16];
	int rc;

	if ((rc = vol_link_check(obj, dir, name, nlen, nm)) != 0)
		return rc;
	if ((rc = vol_name_charge(dir->exp)) != 0)
		return rc;
	/* linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH, which the
	 * switched fsuid drops (every caller but root would get ENOENT): name
	 * the object through its /proc/self/fd link instead, followed once (it
	 * lands on the object itself, a symlink included), so the caller's
	 * rights on dir and protected_hardlinks decide, as for a local ln. */
	snprintf(num, sizeof(num), "%d", obj->fd);
	vol_become(cred);
	if (linkat(dir->exp->store->procfd, num, dir->fd, nm, AT_SYMLINK_FOLLOW) != 0)
		rc = -errno;
	vol_unbecome(cred);
	if (rc != 0) {
		vol_name_refund(dir->exp);
		return rc;
	}
	vol_refresh(obj);
	/* the new name, and the file's link count: where one log holds the
	 * change whole, the file's sync covers its new name */
	if (vol_defer(dir, cred))
		rc = 0;
	else if (S_ISREG(obj->st.st_mode) && (rc = vol_obj_stable(obj, -1)) == 0)
		rc = vol_dirsync_also(dir);
	else if (!S_ISREG(obj->st.st_mode))
		rc = vol_dirsync(dir);
	if (rc == 0)
		vol_watch_note(dir, nm, VOL_WATCH_ADDED, VOL_WATCH_FILE_NAME);
	return rc;
}

/* The pid in a name VOL_LINK_TMP "<pid>.<n>", or 0 when nm is not one. */
static long vol_link_tmp_pid(const char *nm)
{
	const char *p = nm + sizeof(VOL_LINK_TMP) - 1, *dot;
	long pid = 0;

	if (strncmp(nm, VOL_LINK_TMP, sizeof(VOL_LINK_TMP) - 1) != 0 || !(dot = strchr(p, '.')) || dot == p ||
	    dot - p > 10 || !dot[1] || strlen(dot + 1) > 10)
		return 0;
	for (; p < dot; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	for (p = dot + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return pid;
}

bool vol_link_leftover(int dirfd, const char *nm, const struct stat *st, bool any_pid)
{
	long pid = vol_link_tmp_pid(nm);
	struct stat own;

	if (pid <= 0 || (!any_pid && pid == (long)getpid()))
		return false;
	if (!st) {
		if (fstatat(dirfd, nm, &own, AT_SYMLINK_NOFOLLOW) != 0)
			return false;
		st = &own;
	}
	return !S_ISDIR(st->st_mode) && st->st_nlink > 1;
}

/* vol_link over an existing name in one step: the file is linked to a
 * name of its own in the same folder, which then replaces name by rename
 * (atomic in POSIX: name always resolves, to the old object or the new); a
 * failed rename takes the temporary away again. A kill between the link
 * and the rename leaves the temporary: listings never show it
 * (vol_readdir), and the walk of the next attach removes it (vol.c,
 * vol_link_leftover: the file keeps its other name). */
int vol_link_replace(struct vol_obj *obj, struct vol_obj *dir, const char *name, size_t nlen,
		     const struct vol_cred *cred, const struct vol_lease_by *by)
{
	static unsigned seq;
	char nm[VOL_NAME_MAX + 1], tmp[64], num[16];
	struct stat st, now;
	bool had = false, gone = false, same = false;
	uint64_t tea = 0;
	int rc;

	if ((rc = vol_link_check(obj, dir, name, nlen, nm)) != 0)
		return rc;
	if (!strcmp(nm, ".") || !strcmp(nm, "..") || vol_snap_reserved(dir, nm))
		return -EINVAL;
	/* a client caching a handle to the file replaced closes it first */
	vol_lease_break_name(dir, nm, VOL_LEASE_H, by);
	if ((rc = vol_name_charge(dir->exp)) != 0)
		return rc;
	snprintf(tmp, sizeof(tmp), VOL_LINK_TMP "%ld.%u", (long)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	snprintf(num, sizeof(num), "%d", obj->fd);
	vol_become(cred);
	if (linkat(dir->exp->store->procfd, num, dir->fd, tmp, AT_SYMLINK_FOLLOW) != 0) {
		rc = -errno;
		goto out;
	}
	if ((had = fstatat(dir->fd, nm, &st, AT_SYMLINK_NOFOLLOW) == 0)) {
		vol_ra_forget(dir->exp, (uint64_t)st.st_ino);
		tea = S_ISREG(st.st_mode) && st.st_nlink == 1 ? vol_ea_size_at(dir->fd, nm) : 0;
		if (!S_ISDIR(st.st_mode))
			vol_drop_name(dir, nm, dir->exp->store);
	}
	if (renameat(dir->fd, tmp, dir->fd, nm) != 0) {
		rc = -errno;
		unlinkat(dir->fd, tmp, 0);
		goto out;
	}
	/* name already named the file: rename left both names, as POSIX says */
	if (had && fstatat(dir->fd, nm, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st.st_ino &&
	    now.st_dev == st.st_dev) {
		unlinkat(dir->fd, tmp, 0);
		same = true;
	}
out:
	vol_unbecome(cred);
	/* the temporary's name given back, or the replaced one's */
	if (rc != 0 || had)
		vol_name_refund(dir->exp);
	if (rc != 0)
		return rc;
	if (same)
		return 0;
	if (had) {
		gone = S_ISREG(st.st_mode) && st.st_nlink == 1;
		vol_adjust(dir->exp, -(int64_t)tea);
		if (gone)
			vol_adjust(dir->exp, -(int64_t)st.st_size);
		if (gone && dir->exp->store->tier)
			dir->exp->store->tier->unlinked(dir->exp->store->tier_arg, dir->exp->cfg.fsid, &st);
	}
	vol_refresh(obj);
	/* the file's link count, then the folder whose names changed */
	if (!vol_defer(dir, cred)) {
		rc = S_ISREG(obj->st.st_mode) ? vol_obj_stable(obj, -1) : 0;
		if (rc == 0)
			rc = vol_dirsync(dir);
	}
	if (rc == 0 && had)
		vol_watch_note(dir, nm, VOL_WATCH_REMOVED, VOL_WATCH_FILE_NAME);
	if (rc == 0)
		vol_watch_note(dir, nm, VOL_WATCH_ADDED, VOL_WATCH_FILE_NAME);
	return rc;
}

struct vol_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int vol_readdir(struct vol_obj *dir, const struct vol_cred *cred, uint64_t cookie,
		vol_dirent_cb cb, void *arg, bool *eof)
{
	union {
		uint8_t b[16384];
		uint64_t align;
	} buf;
	int fd, rc = 0;

	*eof = false;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	vol_become(cred);
	fd = vol_reopen(dir, O_RDONLY | O_DIRECTORY);
	vol_unbecome(cred);
	if (fd < 0)
		return fd;
	if (cookie && lseek(fd, (off_t)cookie, SEEK_SET) == (off_t)-1) {
		rc = -EINVAL;
		goto out;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf.b, sizeof(buf.b));
		long pos = 0;

		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0) {
			*eof = true;
			goto out;
		}
		while (pos < n) {
			struct vol_dirent64 *d = (struct vol_dirent64 *)(void *)(buf.b + pos);
			size_t nl = strlen(d->d_name);
			uint64_t ino = d->d_ino;

			pos += d->d_reclen;
			/* a link's temporary (vol_link_replace) is nobody's name */
			if (d->d_name[0] == '.' && vol_link_leftover(fd, d->d_name, NULL, true))
				continue;
			if (!strcmp(d->d_name, "..") && vol_is_root(dir))
				ino = dir->st.st_ino;
			if (cb(arg, d->d_name, nl, ino, (uint64_t)d->d_off))
				goto out;
		}
	}
out:
	close(fd);
	return rc;
}

