/* vol_sync: what makes the store's changes stable (issues 15 and 25; the
 * table is in docs/internals/vol.md, "Durability"). Object syncs go through
 * one group commit per inode stripe: a change registers a ticket once it is
 * made, and a sync covers every ticket registered before it started, so a
 * caller waits for the sync in flight only to run (or join) the next one.
 * Two users: directories after namespace changes (vol_ns.c), and files for
 * COMMIT, which also remember what is already stable so that a COMMIT with
 * nothing new makes no fsync. The log sync of namespace and attribute
 * changes, where the file system logs every change in order, takes no turn
 * of ours: the file system's log groups concurrent ones (vol_logsync).
 * A change made with VOL_CRED_DEFER_SYNC (SMB on a share that is not
 * continuously available) skips its log sync and is counted instead
 * (vol_defer); the next log sync of the volume covers it, and vol_commit
 * and a FILE_SYNC write force one (without a log: a syncfs) when a
 * deferred change is not yet covered (vol_sync_deferred). See vol.h for
 * the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct vol_cred vol_as_root = {0, 0, 0, {0}, 0};
static int vol_sync_deferred(struct vol_obj *o);

int vol_fsync_obj(struct vol_obj *o)
{
	bool owned = false;
	int fd = vol_iofd(o, &vol_as_root, false, &owned), rc;

	if (fd < 0)
		return fd;
	rc = fsync(fd) == 0 ? 0 : -errno;
	if (owned)
		close(fd);
	return rc;
}

/* The log sync (one_log): a change of the export's unnamed log file, then
 * its fsync. The change is made after every change registered before this
 * sync returned from its system call, so it is in the same journal
 * transaction (jbd2) or a later log item (XFS) than each of them; the
 * fsync commits the log up to it, and the log is committed in order. The
 * times differ at every sync (logstamp), so no file system can skip the
 * change. */
static int vol_log_force(struct vol_obj *o)
{
	struct vol_acct *a = o->exp->acct;
	struct timespec ts[2];

	ts[0].tv_sec = ts[1].tv_sec = (time_t)atomic_fetch_add(&a->logstamp, 1);
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	if (futimens(o->exp->logfd, ts) != 0 || fsync(o->exp->logfd) != 0)
		return -errno;
	atomic_fetch_add_explicit(&a->logsyncs_done, 1, memory_order_relaxed);
	return 0;
}

int vol_log_open(int root_fd)
{
	return openat(root_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
}

static bool vol_same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* The group commit on stripe d. keyed: d batches one object at a time
 * (dev, ino), taken when idle (a busy stripe is not waited for: the caller
 * syncs alone); clean_ok: return at once when the stripe knows nothing of
 * the object changed since a finished sync (gen == synced, same ctime). */
static int vol_group(struct vol_obj *o, struct vol_dsync *d, bool keyed, bool clean_ok,
		     int (*sync)(struct vol_obj *), _Atomic uint64_t *count)
{
	struct timespec tc = {0, -1}; /* matches no ctime */
	struct stat st;
	uint64_t my, target, tgen;
	bool have = clean_ok && fstat(o->fd, &st) == 0;
	int rc = 0;

	pthread_mutex_lock(&d->mu);
	if (keyed && (d->ino != (uint64_t)o->st.st_ino || d->dev != (uint64_t)o->st.st_dev)) {
		if (d->running || d->waiters) {
			pthread_mutex_unlock(&d->mu);
			atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
			return sync(o);
		}
		d->ino = (uint64_t)o->st.st_ino;
		d->dev = (uint64_t)o->st.st_dev;
		d->ticket = d->done = d->synced = 0;
		d->gen = 1;
	}
	if (have && d->synced == d->gen && vol_same_time(&d->ctime, &st.st_ctim)) {
		pthread_mutex_unlock(&d->mu);
		atomic_fetch_add_explicit(&o->exp->acct->syncs_clean, 1, memory_order_relaxed);
		return 0;
	}
	my = ++d->ticket;
	d->waiters++;
	while (d->done < my && rc == 0) {
		if (d->running) {
			pthread_cond_wait(&d->cv, &d->mu);
			continue;
		}
		d->running = true;
		target = d->ticket;
		tgen = d->gen;
		pthread_mutex_unlock(&d->mu);
		atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
		/* the ctime before the sync: a later change shows as another */
		tc = (struct timespec){0, -1};
		if (keyed && fstat(o->fd, &st) == 0)
			tc = st.st_ctim;
		rc = sync(o);
		pthread_mutex_lock(&d->mu);
		d->running = false;
		if (rc == 0 && target > d->done)
			d->done = target;
		if (rc == 0 && tgen >= d->synced) {
			d->synced = tgen;
			d->ctime = tc;
		}
		pthread_cond_broadcast(&d->cv);
	}
	d->waiters--;
	pthread_mutex_unlock(&d->mu);
	return rc;
}

int vol_groupsync(struct vol_obj *o, struct vol_dsync *stripes, _Atomic uint64_t *count)
{
	return vol_group(o, &stripes[o->st.st_ino % VOL_LOCKS], true, false, vol_fsync_obj, count);
}

void vol_dirty(struct vol_obj *o)
{
	struct vol_dsync *d = &o->exp->acct->fsync[o->st.st_ino % VOL_LOCKS];

	pthread_mutex_lock(&d->mu);
	if (d->ino == (uint64_t)o->st.st_ino && d->dev == (uint64_t)o->st.st_dev)
		d->gen++;
	pthread_mutex_unlock(&d->mu);
}

int vol_dirty_synced(struct vol_obj *o, int fd)
{
	struct vol_dsync *d = &o->exp->acct->fsync[o->st.st_ino % VOL_LOCKS];
	struct timespec tc = {0, -1};
	struct stat st;
	uint64_t tgen = 0;
	bool mine;
	int rc;

	pthread_mutex_lock(&d->mu);
	mine = d->ino == (uint64_t)o->st.st_ino && d->dev == (uint64_t)o->st.st_dev;
	if (!mine && !d->running && !d->waiters) { /* taken when idle, as vol_group does */
		d->ino = (uint64_t)o->st.st_ino;
		d->dev = (uint64_t)o->st.st_dev;
		d->ticket = d->done = d->synced = 0;
		d->gen = 1; /* what came before: the fsync below covers it too */
		mine = true;
	}
	if (mine)
		tgen = ++d->gen; /* this write */
	pthread_mutex_unlock(&d->mu);
	/* the ctime after the write, before the fsync: a change made around
	 * the store after it shows as another, as in vol_group */
	if (mine && fstat(fd, &st) == 0)
		tc = st.st_ctim;
	rc = fsync(fd) == 0 ? 0 : -errno;
	if (rc == 0)
		rc = vol_sync_deferred(o); /* a write-through write: the names too */
	if (rc != 0 || !mine)
		return rc;
	pthread_mutex_lock(&d->mu);
	/* a change noted since (another write, unstable) moved gen past tgen:
	 * the file stays unsynced for the next COMMIT */
	if (d->ino == (uint64_t)o->st.st_ino && d->dev == (uint64_t)o->st.st_dev && tgen >= d->synced &&
	    tc.tv_nsec >= 0) {
		d->synced = tgen;
		d->ctime = tc;
	}
	pthread_mutex_unlock(&d->mu);
	return rc;
}

/* A file's (or a folder's) own fsync through its stripe, nothing when
 * nothing changed since the last. */
static int vol_file_sync(struct vol_obj *o)
{
	struct vol_acct *a = o->exp->acct;

	return vol_group(o, &a->fsync[o->st.st_ino % VOL_LOCKS], true, true, vol_fsync_obj, &a->filesyncs);
}

int vol_commit(struct vol_obj *obj, const struct vol_cred *cred)
{
	int rc;

	if (!S_ISREG(obj->st.st_mode))
		return S_ISDIR(obj->st.st_mode) ? -EISDIR : -EINVAL;
	(void)cred; /* fsync needs no access right */
	if ((rc = vol_file_sync(obj)) != 0)
		return rc;
	return vol_sync_deferred(obj);
}

/* Whether o's changes of metadata are made stable by the volume's log sync. */
static bool vol_has_log(const struct vol_obj *o)
{
	return o->exp->logfd >= 0 && o->st.st_dev == o->exp->dev;
}

/* Each caller forces the log itself, at once, even while another's force
 * is in flight: jbd2 joins concurrent fsyncs to the transaction their
 * changes are in (one commit for all of them, or the next one when that one
 * is already committing), as the XFS log force does. A turn of ours (one
 * force at a time, the others waiting for it and then forcing again) made
 * a caller whose change was still in the open transaction wait for a second
 * commit, and four clients' creates, renames and SETATTRs queue behind one
 * another (bench/nfs/mail.sh, 4 clients: 0.81x of per-object fsyncs). */
static int vol_logsync(struct vol_obj *o)
{
	struct vol_acct *a = o->exp->acct;
	/* the deferred changes counted before the force: it covers them */
	uint64_t d = atomic_load_explicit(&a->deferred, memory_order_acquire), was;
	int rc;

	atomic_fetch_add_explicit(&a->logsyncs, 1, memory_order_relaxed);
	if ((rc = vol_log_force(o)) != 0)
		return rc;
	was = atomic_load_explicit(&a->deferred_stable, memory_order_relaxed);
	while (was < d && !atomic_compare_exchange_weak(&a->deferred_stable, &was, d))
		;
	return 0;
}

bool vol_defer(struct vol_obj *o, const struct vol_cred *cred)
{
	if (!cred || !(cred->flags & VOL_CRED_DEFER_SYNC) || o->snap || o->st.st_dev != o->exp->dev)
		return false;
	atomic_fetch_add_explicit(&o->exp->acct->deferred, 1, memory_order_release);
	return true;
}

/* Make the export's deferred changes stable when one counted is not
 * covered yet: a log sync where the file system has one, else syncfs of
 * the export's file system (counted in filesyncs, as vol_sync's), which
 * writes whatever it holds; else nothing. */
static int vol_sync_deferred(struct vol_obj *o)
{
	struct vol_acct *a = o->exp->acct;
	uint64_t d = atomic_load_explicit(&a->deferred, memory_order_acquire), was;

	if (d == atomic_load_explicit(&a->deferred_stable, memory_order_acquire))
		return 0;
	if (o->exp->logfd >= 0)
		return vol_logsync(o);
	atomic_fetch_add_explicit(&a->filesyncs, 1, memory_order_relaxed);
	if (syncfs(o->exp->root_fd) != 0)
		return -errno;
	was = atomic_load_explicit(&a->deferred_stable, memory_order_relaxed);
	while (was < d && !atomic_compare_exchange_weak(&a->deferred_stable, &was, d))
		;
	return 0;
}

int vol_obj_stable(struct vol_obj *o, int fd)
{
	if (vol_has_log(o))
		return vol_logsync(o);
	if (fd >= 0)
		return fsync(fd) == 0 ? 0 : -errno;
	return vol_fsync_obj(o);
}

int vol_dir_stable(struct vol_obj *dir)
{
	if (vol_has_log(dir))
		return vol_logsync(dir);
	return vol_groupsync(dir, dir->exp->acct->dsync, &dir->exp->acct->dirsyncs);
}

int vol_sync(struct vol_obj *obj)
{
	struct vol_acct *a = obj->exp->acct;

	if (obj->snap)
		return 0; /* nothing below /.snapshot changes */
	/* attributes only: the log, shared by the volume's callers */
	if (vol_has_log(obj))
		return vol_logsync(obj);
	if (S_ISREG(obj->st.st_mode) || S_ISDIR(obj->st.st_mode))
		return vol_file_sync(obj);
	/* a symlink, FIFO or socket has no descriptor fsync takes (O_PATH):
	 * the whole file system is synced, through the export root (rare) */
	atomic_fetch_add_explicit(&a->filesyncs, 1, memory_order_relaxed);
	return syncfs(obj->exp->root_fd) == 0 ? 0 : -errno;
}

int vol_sync_as(struct vol_obj *obj, const struct vol_cred *cred)
{
	return vol_defer(obj, cred) ? 0 : vol_sync(obj);
}

int vol_setattr_stable(struct vol_obj *obj, const struct vol_cred *cred, const struct vol_sattr *sa,
		       const struct vol_lease_by *by)
{
	int rc = vol_setattr_by(obj, cred, sa, by);

	return rc == 0 ? vol_sync(obj) : rc;
}
