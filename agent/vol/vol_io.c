/* vol_io: attributes, capacity and file data of the volume store: ACCESS,
 * SETATTR (truncate charged against capacity), READLINK, READ (copy, zero-copy
 * descriptor, cold tier), WRITE (exact capacity for concurrent extending
 * writes), COMMIT, FSSTAT. See vol.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "agent/vol/vol_watch.h"
#include "util/ut_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int vol_access(struct vol_obj *obj, const struct vol_cred *cred, int mask, int *allowed)
{
	static const int bits[] = {R_OK, W_OK, X_OK};
	size_t i;

	*allowed = 0;
	vol_become(cred);
	for (i = 0; i < 3; i++) {
		if (!(mask & bits[i]) || (obj->snap && bits[i] == W_OK)) /* snapshots are read-only */
			continue;
		if (syscall(SYS_faccessat2, obj->fd, "", bits[i], AT_EMPTY_PATH | AT_EACCESS) == 0)
			*allowed |= bits[i];
	}
	vol_unbecome(cred);
	return 0;
}

pthread_mutex_t *vol_lock_of(struct vol_obj *obj)
{
	return &obj->exp->acct->locks[obj->st.st_ino % VOL_LOCKS];
}

int vol_reserve(struct vol_export *e, uint64_t growth)
{
	uint64_t cur = atomic_load(&e->acct->used);

	do {
		if (growth > e->cfg.capacity || cur > e->cfg.capacity - growth)
			return -EDQUOT;
	} while (!atomic_compare_exchange_weak(&e->acct->used, &cur, cur + growth));
	return 0;
}

void vol_adjust(struct vol_export *e, int64_t delta)
{
	if (delta >= 0) {
		atomic_fetch_add(&e->acct->used, (uint64_t)delta);
	} else {
		uint64_t cur = atomic_load(&e->acct->used), nv;

		do {
			nv = cur > (uint64_t)-delta ? cur + (uint64_t)delta : 0;
		} while (!atomic_compare_exchange_weak(&e->acct->used, &cur, nv));
	}
}

int vol_name_charge(struct vol_export *e)
{
	int rc = vol_reserve(e, VOL_NAME_COST);

	if (rc == 0)
		atomic_fetch_add(&e->acct->names, 1);
	return rc;
}

void vol_name_refund(struct vol_export *e)
{
	uint64_t cur = atomic_load(&e->acct->names);

	while (cur && !atomic_compare_exchange_weak(&e->acct->names, &cur, cur - 1))
		;
	vol_adjust(e, -(int64_t)VOL_NAME_COST);
}

/* Truncate under the inode lock, charging or refunding capacity. */
static int vol_truncate(struct vol_obj *obj, uint64_t size)
{
	const struct vol_tier_ops *tier = obj->exp->store->tier;
	bool tiered = false;
	pthread_mutex_t *mu = vol_lock_of(obj);
	struct stat st;
	int fd, rc = 0;

	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (size > VOL_FILE_MAX)
		return -EFBIG;
	fd = vol_reopen(obj, O_WRONLY);
	if (fd < 0)
		return fd;
	if (tier && fstat(fd, &st) == 0) {
		if ((rc = tier->truncate(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &st, size)) != 0) {
			close(fd);
			return rc;
		}
		tiered = true;
	}
	pthread_mutex_lock(mu);
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (size > (uint64_t)st.st_size && (rc = vol_reserve(obj->exp, size - (uint64_t)st.st_size)) != 0)
		goto out;
	if (ftruncate(fd, (off_t)size) != 0) {
		rc = -errno;
		if (size > (uint64_t)st.st_size)
			vol_adjust(obj->exp, -(int64_t)(size - (uint64_t)st.st_size));
		goto out;
	}
	if (size < (uint64_t)st.st_size)
		vol_adjust(obj->exp, -(int64_t)((uint64_t)st.st_size - size));
out:
	pthread_mutex_unlock(mu);
	if (rc == 0)
		vol_ra_forget(obj->exp, (uint64_t)st.st_ino);
	if (tiered)
		tier->truncate_end(obj->exp->store->tier_arg, obj->exp->cfg.fsid, &st);
	close(fd);
	return rc;
}

/* The times of sa (0 keep, 1 the server's clock, 2 the client's), on the
 * object itself, a symlink included (touch -h). */
static int vol_set_times(struct vol_obj *obj, const struct vol_sattr *sa)
{
	struct timespec ts[2];

	if (!sa->atime_how && !sa->mtime_how)
		return 0;
	ts[0] = sa->atime;
	ts[1] = sa->mtime;
	if (sa->atime_how != 2)
		ts[0].tv_nsec = sa->atime_how == 1 ? UTIME_NOW : UTIME_OMIT;
	if (sa->mtime_how != 2)
		ts[1].tv_nsec = sa->mtime_how == 1 ? UTIME_NOW : UTIME_OMIT;
	return utimensat(obj->fd, "", ts, AT_EMPTY_PATH) == 0 ? 0 : -errno;
}

int vol_setattr_nocred(struct vol_obj *obj, const struct vol_sattr *sa)
{
	return vol_setattr_nocred_by(obj, sa, NULL);
}

static int vol_setattr_apply(struct vol_obj *obj, const struct vol_sattr *sa, const struct vol_lease_by *by)
{
	char p[64];
	int rc = 0;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", obj->fd);
	if (sa->set_size) /* cached reads and writes of any protocol go first */
		vol_lease_break(obj, VOL_LEASE_R | VOL_LEASE_W, by);
	if (sa->set_size && (rc = vol_truncate(obj, sa->size)) != 0)
		return rc;
	if ((sa->set_uid || sa->set_gid) &&
	    fchownat(obj->fd, "", sa->set_uid ? sa->uid : (uid_t)-1, sa->set_gid ? sa->gid : (gid_t)-1,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (sa->set_mode && !S_ISLNK(obj->st.st_mode) && chmod(p, sa->mode & 07777) != 0)
		return -errno;
	return vol_set_times(obj, sa);
}

int vol_setattr_nocred_by(struct vol_obj *obj, const struct vol_sattr *sa, const struct vol_lease_by *by)
{
	int rc = vol_setattr_apply(obj, sa, by);

	vol_dirty(obj); /* after the change, made or partly made */
	return rc;
}

/* Times set to the server's clock only (the Linux client's truncate by
 * another user: size + mtime "now"; touch -m): as knfsd, write access is
 * enough. utimensat would demand ownership as soon as one time is "now"
 * and the other left alone (ATTR_TIMES_SET), failing a truncation the
 * caller may make; so the caller's right is checked here, as the caller,
 * and the times are then set with the server's own identity. */
static bool vol_only_now(const struct vol_sattr *sa)
{
	return (sa->atime_how == 1 || sa->mtime_how == 1) && sa->atime_how != 2 && sa->mtime_how != 2;
}

int vol_setattr(struct vol_obj *obj, const struct vol_cred *cred, const struct vol_sattr *sa)
{
	return vol_setattr_by(obj, cred, sa, NULL);
}

int vol_setattr_by(struct vol_obj *obj, const struct vol_cred *cred, const struct vol_sattr *sa,
		   const struct vol_lease_by *by)
{
	struct vol_sattr rest = *sa;
	bool now = vol_only_now(sa) && (cred->uid != 0 || cred->gid != 0);
	int rc;

	if (obj->snap)
		return -EROFS;
	if (now)
		rest.atime_how = rest.mtime_how = 0;
	vol_become(cred);
	rc = vol_setattr_nocred_by(obj, &rest, by);
	if (rc == 0 && now && obj->st.st_uid != cred->uid &&
	    syscall(SYS_faccessat2, obj->fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) != 0)
		rc = -EACCES;
	vol_unbecome(cred);
	if (rc == 0 && now) {
		rc = vol_set_times(obj, sa);
		vol_dirty(obj);
	}
	if (rc == 0)
		rc = vol_refresh(obj);
	if (rc == 0) {
		unsigned what = (sa->set_mode ? VOL_WATCH_ATTRIBUTES : 0) |
				(sa->set_uid || sa->set_gid ? VOL_WATCH_SECURITY : 0) |
				(sa->set_size ? VOL_WATCH_SIZE | VOL_WATCH_LAST_WRITE : 0) |
				(sa->mtime_how ? VOL_WATCH_LAST_WRITE : 0) | (sa->atime_how ? VOL_WATCH_LAST_ACCESS : 0);

		if (what)
			vol_watch_note_obj(obj, VOL_WATCH_MODIFIED, what);
	}
	return rc;
}

int vol_readlink(struct vol_obj *obj, const struct vol_cred *cred, char *buf, size_t cap, size_t *len)
{
	ssize_t n;

	*len = 0;
	if (!S_ISLNK(obj->st.st_mode))
		return -EINVAL;
	vol_become(cred);
	n = readlinkat(obj->fd, "", buf, cap);
	vol_unbecome(cred);
	if (n < 0)
		return -errno;
	*len = (size_t)n;
	return 0;
}

/* The opening every read shares: a descriptor for a regular file's content
 * (vol_iofd: *owned says whether the caller closes it), or -EISDIR,
 * -EINVAL for any other type, or vol_iofd's error. */
static int read_open(struct vol_obj *obj, const struct vol_cred *cred, bool *owned)
{
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	return vol_iofd(obj, cred, false, owned);
}

/* How many of count bytes at off a file of size bytes holds. */
static size_t read_len(uint64_t size, uint64_t off, size_t count)
{
	return off >= size ? 0 : (size - off < count ? (size_t)(size - off) : count);
}

static int read_at(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
		   size_t *got, bool *eof, void **swap)
{
	ssize_t n = 0;
	bool owned = false;
	int fd, rc = 0;

	*got = 0;
	*eof = false;
	fd = read_open(obj, cred, &owned);
	if (fd < 0)
		return fd;
	if (obj->exp->store->tier && fstat(fd, &obj->st) == 0) {
		const struct vol_store *s = obj->exp->store;
		uint64_t size = (uint64_t)obj->st.st_size;
		size_t want = read_len(size, off, count);
		size_t g = 0;
		char snap[API_INTENT_SNAP_ID_LEN + 1];

		if (!want)
			rc = 1;
		else if (obj->snap) /* what was cold when the snapshot was made */
			rc = s->tier->snap_read && vol_snap_id(obj, fd, snap, sizeof(snap)) == 0
				     ? s->tier->snap_read(s->tier_arg, obj->exp->cfg.fsid, snap, fd, &obj->st, off, buf,
							  want, &g)
				     : 1;
		else {
			vol_ra_demand_begin(obj, off, want);
			rc = s->tier->read(s->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, buf, want, &g, swap);
			vol_ra_demand_end(obj);
		}
		if (rc <= 0) {
			if (rc == 0) {
				*got = g;
				*eof = off + g >= size;
				vol_ra_read(obj, fd, off, g);
			}
			goto out;
		}
		rc = 0;
	}
	while ((size_t)n < count) {
		ssize_t k = pread(fd, (char *)buf + n, count - (size_t)n, (off_t)(off + (uint64_t)n));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			goto out;
		}
		if (k == 0)
			break;
		n += k;
	}
	*got = (size_t)n;
	if (fstat(fd, &obj->st) == 0)
		*eof = off + (uint64_t)n >= (uint64_t)obj->st.st_size;
	vol_ra_read(obj, fd, off, (uint64_t)n);
out:
	if (owned)
		close(fd);
	return rc;
}

/* One I/O the store issued to the shelf (vol_store_shelf_io); t0_ns 0: not
 * timed. */
static void shelf_io_add(struct vol_store *s, bool write, uint64_t bytes, uint64_t t0_ns)
{
	uint64_t us = t0_ns ? (ut_clock_mono_ns() - t0_ns) / 1000 : 0;

	if (write) {
		__atomic_fetch_add(&s->io.write_bytes, bytes, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->io.write_ops, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->io.write_us, us, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&s->io.read_bytes, bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->io.read_ops, 1, __ATOMIC_RELAXED);
	if (t0_ns) {
		__atomic_fetch_add(&s->io.read_timed_ops, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->io.read_us, us, __ATOMIC_RELAXED);
	}
}

void vol_store_shelf_io(struct vol_store *s, struct vol_shelf_io *out)
{
	out->read_bytes = __atomic_load_n(&s->io.read_bytes, __ATOMIC_RELAXED);
	out->read_ops = __atomic_load_n(&s->io.read_ops, __ATOMIC_RELAXED);
	out->read_timed_ops = __atomic_load_n(&s->io.read_timed_ops, __ATOMIC_RELAXED);
	out->read_us = __atomic_load_n(&s->io.read_us, __ATOMIC_RELAXED);
	out->write_bytes = __atomic_load_n(&s->io.write_bytes, __ATOMIC_RELAXED);
	out->write_ops = __atomic_load_n(&s->io.write_ops, __ATOMIC_RELAXED);
	out->write_us = __atomic_load_n(&s->io.write_us, __ATOMIC_RELAXED);
}

int vol_read(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
	     size_t *got, bool *eof)
{
	uint64_t t0 = ut_clock_mono_ns();
	int rc = read_at(obj, cred, off, buf, count, got, eof, NULL);

	if (rc == 0)
		shelf_io_add(obj->exp->store, false, *got, t0);
	return rc;
}

bool vol_cold(const struct vol_obj *obj)
{
	const struct vol_store *s = obj->exp->store;

	return s->tier && !obj->snap && S_ISREG(obj->st.st_mode) && obj->st.st_size > 0 &&
	       s->tier->cold(s->tier_arg, obj->exp->cfg.fsid, &obj->st, 0, (size_t)obj->st.st_size) != 0;
}

/* The opening of the no-wait reads: obj's descriptor (*owned: the caller
 * closes it), its stat as of now and how many of count bytes from off it
 * holds. A descriptor, or -errno (none left open). */
static int read_open_stat(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, size_t count,
			  bool *owned, struct stat *st, size_t *want)
{
	int fd = read_open(obj, cred, owned), rc;

	if (fd < 0)
		return fd;
	if (fstat(fd, st) != 0) {
		rc = -errno;
		if (*owned)
			close(fd);
		*owned = false;
		return rc;
	}
	*want = read_len((uint64_t)st->st_size, off, count);
	return fd;
}

int vol_read_nowait(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
		    size_t *got, bool *eof)
{
	const struct vol_store *s = obj->exp->store;
	struct stat st;
	uint64_t size;
	size_t want, n = 0;
	bool owned = false;
	int fd, rc = 0;

	*got = 0;
	*eof = false;
	if ((fd = read_open_stat(obj, cred, off, count, &owned, &st, &want)) < 0)
		return fd;
	size = (uint64_t)st.st_size;
	/* a snapshot's file: the tier reads it (what was cold then), and may wait */
	if (want && s->tier && obj->snap) {
		rc = -EAGAIN;
		goto out;
	}
	/* a cold range: answered here only from the tier's chunk cache (a
	 * prefetched frame: no worker hand-off), else the tier reads it, and
	 * may wait */
	if (want && s->tier && (rc = s->tier->cold(s->tier_arg, obj->exp->cfg.fsid, &st, off, want)) != 0) {
		if (rc < 0 || !s->tier->read_cached ||
		    s->tier->read_cached(s->tier_arg, obj->exp->cfg.fsid, &st, off, buf, want) != 0) {
			rc = -EAGAIN;
			goto out;
		}
		rc = 0;
		n = want;
	}
	while (n < want) {
		struct iovec iov = { .iov_base = (char *)buf + n, .iov_len = want - n };
		ssize_t k = preadv2(fd, &iov, 1, (off_t)(off + n), RWF_NOWAIT);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) { /* not cached (EAGAIN), or no RWF_NOWAIT here: a worker reads it */
			rc = errno == EAGAIN || errno == EOPNOTSUPP ? -EAGAIN : -errno;
			goto out;
		}
		if (k == 0)
			break; /* it shrank */
		n += (size_t)k;
	}
	*got = n;
	*eof = off + n >= size;
	vol_ra_read(obj, fd, off, n);
	shelf_io_add(obj->exp->store, false, n, 0);
out:
	if (owned)
		close(fd);
	return rc;
}

int vol_read_cached(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
		    size_t *got, bool *eof)
{
	const struct vol_store *s = obj->exp->store;
	struct stat st;
	uint64_t size;
	size_t want;
	bool owned = false;
	int fd, rc = 0;

	*got = 0;
	*eof = false;
	if (!s->tier || !s->tier->read_cached || obj->snap)
		return -EAGAIN;
	if ((fd = read_open_stat(obj, cred, off, count, &owned, &st, &want)) < 0)
		return fd;
	size = (uint64_t)st.st_size;
	if (want && s->tier->read_cached(s->tier_arg, obj->exp->cfg.fsid, &st, off, buf, want) != 0) {
		rc = -EAGAIN;
		goto out;
	}
	*got = want;
	*eof = off + want >= size;
	vol_ra_read(obj, fd, off, want);
	shelf_io_add(obj->exp->store, false, want, 0);
out:
	if (owned)
		close(fd);
	return rc;
}

int vol_read_swap(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void **buf, size_t count,
		  size_t *got, bool *eof)
{
	uint64_t t0 = ut_clock_mono_ns();
	int rc = read_at(obj, cred, off, *buf, count, got, eof, buf);

	if (rc == 0)
		shelf_io_add(obj->exp->store, false, *got, t0);
	return rc;
}

int vol_read_fd(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, size_t count,
		int *fd, size_t *n, bool *eof, bool *owned)
{
	uint64_t size;
	int rc;

	*fd = -1;
	*n = 0;
	*eof = false;
	*owned = false;
	*fd = read_open(obj, cred, owned);
	if (*fd < 0) {
		rc = *fd;
		*fd = -1;
		return rc;
	}
	/* obj->st was read when the handle was resolved, moments ago. */
	size = (uint64_t)obj->st.st_size;
	*n = read_len(size, off, count);
	*eof = off + *n >= size;
	/* a snapshot's file: the tier reads it (read_at), it knows what was cold */
	if (*n && obj->exp->store->tier &&
	    (rc = obj->snap ? 1
			    : obj->exp->store->tier->cold(obj->exp->store->tier_arg, obj->exp->cfg.fsid, &obj->st, off,
							 *n)) != 0) {
		if (*owned)
			close(*fd);
		*fd = -1;
		*owned = false;
		*n = 0;
		return rc > 0 ? VOL_ECOLD : rc;
	}
	vol_ra_read(obj, *fd, off, *n);
	shelf_io_add(obj->exp->store, false, *n, 0);
	return 0;
}

static bool vol_in_group(const struct vol_cred *c, gid_t g)
{
	uint32_t i;

	if (c->gid == g)
		return true;
	for (i = 0; i < c->ngids && i < sizeof(c->gids) / sizeof(c->gids[0]); i++)
		if (c->gids[i] == g)
			return true;
	return false;
}

/* Before a write by a caller without CAP_FSETID (anyone but an unsquashed
 * root, the file's owner included), clear set-uid, and set-gid when
 * group-exec is set or the caller is not in the file's group: what the
 * kernel's file_remove_privs does for a local writer. The data path writes
 * through descriptors opened as root, for which the kernel would not. */
static int vol_kill_privs(struct vol_obj *obj, const struct vol_cred *cred)
{
	mode_t m = obj->st.st_mode, kill = 0;
	char p[64];

	if (!S_ISREG(m) || cred->uid == 0)
		return 0;
	if (m & S_ISUID)
		kill |= S_ISUID;
	if ((m & S_ISGID) && ((m & S_IXGRP) || !vol_in_group(cred, obj->st.st_gid)))
		kill |= S_ISGID;
	if (!kill)
		return 0;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", obj->fd);
	if (chmod(p, (m & 07777) & ~kill) != 0)
		return -errno;
	return vol_refresh(obj);
}

/* Extending writes: growth is charged exactly against the larger of the
 * file size and the end of writes to the same inode still in flight
 * (struct vol_pend, one per lock stripe), so concurrent sequential writes
 * need the stripe lock only around the bookkeeping, not around the I/O.
 * Two inodes in flight on one stripe: the second holds the lock across its
 * write instead. */
int vol_write(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, const void *data,
	      size_t len, int stable, int *committed)
{
	return vol_write_by(obj, cred, off, data, len, stable, committed, NULL);
}

static int write_by(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, const void *data,
		    size_t len, int stable, int *committed, const struct vol_lease_by *by);

int vol_write_by(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, const void *data,
		 size_t len, int stable, int *committed, const struct vol_lease_by *by)
{
	uint64_t t0 = ut_clock_mono_ns();
	int rc = write_by(obj, cred, off, data, len, stable, committed, by);

	if (rc == 0)
		shelf_io_add(obj->exp->store, true, len, t0);
	return rc;
}

static int write_by(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, const void *data,
		    size_t len, int stable, int *committed, const struct vol_lease_by *by)
{
	const struct vol_tier_ops *tier;
	pthread_mutex_t *mu = NULL;
	struct vol_pend *pd = NULL;
	uint64_t end = off + len, reserved = 0, base = 0, before = (uint64_t)obj->st.st_size;
	bool held = false, pending = false, owned = false, noted = false;
	size_t done = 0;
	struct stat st;
	int fd, rc = 0;

	if (obj->snap)
		return -EROFS;

	*committed = stable;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	if (end < off || end > VOL_FILE_MAX)
		return -EFBIG;
	/* cached reads and writes of any protocol go first: a holder caching
	 * writes flushes them and acknowledges before this write is made */
	vol_lease_break(obj, VOL_LEASE_R | VOL_LEASE_W, by);
	fd = vol_iofd(obj, cred, true, &owned);
	if (fd < 0)
		return fd;
	if ((rc = vol_kill_privs(obj, cred)) != 0)
		goto out;
	tier = obj->exp->store->tier;
	if (tier && len && (rc = tier->write_begin(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, len)) != 0)
		goto out;
	/* obj->st is fresh from resolving the handle; an extending write
	 * re-reads the size under the lock. */
	if (end > (uint64_t)obj->st.st_size) {
		size_t i = obj->st.st_ino % VOL_LOCKS;

		mu = &obj->exp->acct->locks[i];
		pd = &obj->exp->acct->pend[i];
		pthread_mutex_lock(mu);
		if (fstat(fd, &st) != 0) {
			rc = -errno;
			pthread_mutex_unlock(mu);
			mu = NULL;
			goto out_end;
		}
		base = (uint64_t)st.st_size;
		if (pd->count && pd->ino == st.st_ino && pd->end > base)
			base = pd->end;
		held = pd->count && pd->ino != st.st_ino;
		reserved = end > base ? end - base : 0;
		if (reserved && (rc = vol_reserve(obj->exp, reserved)) != 0) {
			pthread_mutex_unlock(mu);
			mu = NULL;
			goto out_end;
		}
		if (!held) {
			pd->ino = st.st_ino;
			pd->count++;
			if (end > pd->end)
				pd->end = end;
			pending = true;
			pthread_mutex_unlock(mu);
		}
	}
	while (done < len) {
		ssize_t k = pwrite(fd, (const char *)data + done, len - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = k < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)k;
	}
	if (tier && len)
		tier->write_end(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, len);
	if (mu) {
		if (pending)
			pthread_mutex_lock(mu);
		/* A short write refunds what it did not grow, unless other writes
		 * to the file are in flight (then the charge stays: conservative). */
		if (reserved && done < len && (!pending || pd->count == 1)) {
			uint64_t got = off + done > base ? off + done - base : 0;

			vol_adjust(obj->exp, -(int64_t)(reserved - (got < reserved ? got : reserved)));
		}
		if (pending && --pd->count == 0)
			pd->end = 0;
		pthread_mutex_unlock(mu);
	}
	if (rc == 0 && stable == 1 && fdatasync(fd) != 0)
		rc = -errno;
	if (rc == 0 && stable == 2) {
		/* notes the change, and that this fsync covered it: a COMMIT
		 * after a FILE_SYNC write has nothing to sync */
		rc = vol_dirty_synced(obj, fd);
		noted = true;
	}
	goto out;
out_end:
	if (tier && len)
		tier->write_end(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, len);
out:
	if (!noted)
		vol_dirty(obj); /* whatever reached the file, the next COMMIT syncs */
	fstat(fd, &obj->st);
	if (rc == 0)
		vol_ra_forget(obj->exp, (uint64_t)obj->st.st_ino);
	if (rc == 0 && len)
		vol_watch_note_obj(obj, VOL_WATCH_MODIFIED,
				   VOL_WATCH_LAST_WRITE | ((uint64_t)obj->st.st_size > before ? VOL_WATCH_SIZE : 0));
	if (owned)
		close(fd);
	return rc;
}

int vol_hold(struct vol_obj *obj, uint64_t bytes)
{
	if (obj->snap)
		return -EROFS;
	return bytes ? vol_reserve(obj->exp, bytes) : 0;
}

void vol_unhold(struct vol_obj *obj, uint64_t bytes)
{
	if (bytes)
		vol_adjust(obj->exp, -(int64_t)bytes);
}

int vol_fsstat(struct vol_obj *obj, struct vol_fsstat *out)
{
	uint64_t used = atomic_load(&obj->exp->acct->used), cap = obj->exp->cfg.capacity;

	memset(out, 0, sizeof(*out));
	out->tbytes = cap;
	out->fbytes = out->abytes = used < cap ? cap - used : 0;
	/* Every name costs VOL_NAME_COST: the volume holds that many more, like
	 * its bytes, whatever the shared shelf has left. */
	out->tfiles = cap / VOL_NAME_COST;
	out->ffiles = out->afiles = out->fbytes / VOL_NAME_COST;
	return 0;
}
