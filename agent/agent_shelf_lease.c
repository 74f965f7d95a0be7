/* agent_shelf_lease: the disk leases of fence=lease on the namespaces of an
 * NVMe-oF shelf (contract in agent_shelf_lease.h, algorithm in
 * agent_lease.h). Each held lease keeps its namespace open O_DIRECT (the
 * record must come from the shelf, never from this node's page cache). The
 * renewer thread does the I/O; the watcher thread only looks at the clock,
 * so a volume whose lease lapses is stopped within WATCH_MS of the expiry
 * even while a renewal hangs on the fabric.
 */
#define _GNU_SOURCE /* O_DIRECT */
#include "agent/agent_shelf_lease.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_lease.h"
#include "util/ut_log.h"

#define LEASE_MAX 256     /* volumes one node holds on a shelf */
#define LEASE_IO 4096     /* one O_DIRECT block: the record and zeros */
#define WATCH_MS 200
/* ext4's shutdown ioctl (linux/ext4.h is not a uapi header everywhere) */
#define LEASE_EXT4_IOC_SHUTDOWN _IOR('X', 125, uint32_t)
#define LEASE_EXT4_NOLOGFLUSH 0x2

struct lease_ent {
	char fsid[17];
	char mp[1100];
	int fd;          /* the namespace, O_DIRECT */
	int64_t off;     /* the record's offset */
	uint64_t next;   /* the next renewal (monotonic ms) */
	struct agent_lease l;
};

struct agent_shelf_leases {
	uint64_t me;
	char node[AGENT_LEASE_NAME_MAX + 1];
	unsigned timeout_ms;
	agent_shelf_fenced_fn fenced;
	void *fenced_ctx;
	pthread_mutex_t mu;
	pthread_t renewer, watcher;
	int threads, stop;
	int quit; /* the process is stopping: takers waiting for a lease give up */
	struct lease_ent *ents[LEASE_MAX];
};

static uint64_t lease_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts); /* runs on while the process is stopped */
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void lease_sleep(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int lease_read(int fd, int64_t off, uint8_t *buf)
{
	ssize_t n = pread(fd, buf, LEASE_IO, off);

	return n == LEASE_IO ? 0 : n < 0 ? -errno : -EIO;
}

static int lease_write(int fd, int64_t off, uint8_t *buf)
{
	ssize_t n;

	memset(buf + AGENT_LEASE_REC, 0, LEASE_IO - AGENT_LEASE_REC);
	n = pwrite(fd, buf, LEASE_IO, off);
	return n == LEASE_IO ? 0 : n < 0 ? -errno : -EIO;
}

static int lease_open(const char *dev, int64_t *off, uint64_t *bytes)
{
	uint64_t size = 0;
	int fd = open(dev, O_RDWR | O_DIRECT | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKGETSIZE64, &size) != 0 || (*off = agent_lease_offset(size)) < 0) {
		rc = size ? -ENOSPC : -errno;
		close(fd);
		return rc;
	}
	if (bytes)
		*bytes = size;
	return fd;
}

int agent_shelf_lease_fits(const char *dev, uint64_t *blocks)
{
	uint8_t *buf = NULL;
	int64_t off = 0, fsb;
	int fd, rc = 0;

	if ((fd = lease_open(dev, &off, NULL)) < 0)
		return fd;
	if (posix_memalign((void **)&buf, LEASE_IO, LEASE_IO) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = lease_read(fd, 0, buf)) != 0)
		goto out;
	/* no ext superblock: a new file system of the blocks before the area */
	if ((fsb = agent_lease_ext4_bytes(buf + 1024, 1024)) >= 0 && fsb > off) {
		UT_ERROR("agent_shelf", NULL, "%s: its file system (%lld bytes) reaches into the lease area at %lld "
			 "(made without fence=lease): fence=lease cannot guard it", dev, (long long)fsb, (long long)off);
		rc = -ENOSPC;
		goto out;
	}
	*blocks = (uint64_t)off / 4096u;
out:
	free(buf);
	close(fd);
	return rc;
}

void agent_shelf_lease_fence_mount(struct agent_shelf_leases *ls, const char *mp, const char *fsid, const char *why)
{
	uint32_t flags = LEASE_EXT4_NOLOGFLUSH;
	int fd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		if (ioctl(fd, LEASE_EXT4_IOC_SHUTDOWN, &flags) != 0)
			UT_WARN("agent_shelf", NULL, "volume %s: shutdown of %s: %s", fsid, mp, strerror(errno));
		close(fd);
	}
	if (ls->fenced)
		ls->fenced(ls->fenced_ctx, mp);
	if (umount2(mp, MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
		UT_WARN("agent_shelf", NULL, "volume %s: detach %s: %s", fsid, mp, strerror(errno));
	UT_ERROR("agent_shelf", NULL, "volume %s: fenced: %s; its file system is shut down and detached, this node "
		 "serves it no more", fsid, why);
}

/* The watcher: a lease past its expiry stops its volume at once. */
static void *lease_watch(void *arg)
{
	struct agent_shelf_leases *ls = arg;
	char mp[1100], fsid[17], why[160];
	int i, found;

	for (;;) {
		pthread_mutex_lock(&ls->mu);
		if (ls->stop) {
			pthread_mutex_unlock(&ls->mu);
			return NULL;
		}
		found = 0;
		for (i = 0; i < LEASE_MAX && !found; i++) {
			struct lease_ent *e = ls->ents[i];

			if (!e || agent_lease_valid(&e->l, lease_now()))
				continue;
			if (e->l.lost_to)
				snprintf(why, sizeof(why), "its lease was taken by host %016llx (generation %llu)",
					 (unsigned long long)e->l.lost_to, (unsigned long long)e->l.gen + 1);
			else
				snprintf(why, sizeof(why), "no lease renewal succeeded for %u ms", e->l.expire_ms);
			snprintf(mp, sizeof(mp), "%s", e->mp);
			snprintf(fsid, sizeof(fsid), "%s", e->fsid);
			close(e->fd);
			free(e);
			ls->ents[i] = NULL;
			found = 1;
		}
		pthread_mutex_unlock(&ls->mu);
		if (found)
			agent_shelf_lease_fence_mount(ls, mp, fsid, why);
		else
			lease_sleep(WATCH_MS);
	}
}

/* One renewal of entry i: read, step, write, under the lock only for the
 * state machine (the I/O may hang on a dead fabric). */
static void lease_renew(struct agent_shelf_leases *ls, int i, uint8_t *buf)
{
	struct lease_ent *e;
	uint64_t start = lease_now();
	int fd, rc;
	int64_t off;

	pthread_mutex_lock(&ls->mu);
	e = ls->ents[i];
	if (!e || start < e->next) {
		pthread_mutex_unlock(&ls->mu);
		return;
	}
	fd = e->fd;
	off = e->off;
	e->next = start + e->l.renew_ms;
	pthread_mutex_unlock(&ls->mu);
	rc = lease_read(fd, off, buf);
	pthread_mutex_lock(&ls->mu);
	if (ls->ents[i] != e) { /* given back meanwhile */
		pthread_mutex_unlock(&ls->mu);
		return;
	}
	if (rc == 0)
		rc = agent_lease_renew_step(&e->l, start, buf, LEASE_IO, buf);
	else
		(void)agent_lease_renew_failed(&e->l, lease_now());
	pthread_mutex_unlock(&ls->mu);
	if (rc != AGENT_LEASE_ACT_WRITE)
		return; /* a read error (retried at the next tick), or lost: the watcher acts */
	rc = lease_write(fd, off, buf);
	pthread_mutex_lock(&ls->mu);
	if (ls->ents[i] == e) {
		if (rc == 0)
			(void)agent_lease_renewed(&e->l, start, lease_now());
		else
			(void)agent_lease_renew_failed(&e->l, lease_now());
	}
	pthread_mutex_unlock(&ls->mu);
}

static void *lease_renewer(void *arg)
{
	struct agent_shelf_leases *ls = arg;
	uint8_t *buf = NULL;
	int i, stop;

	if (posix_memalign((void **)&buf, LEASE_IO, LEASE_IO) != 0)
		return NULL; /* the watcher fences every lease at its expiry */
	for (;;) {
		pthread_mutex_lock(&ls->mu);
		stop = ls->stop;
		pthread_mutex_unlock(&ls->mu);
		if (stop)
			break;
		for (i = 0; i < LEASE_MAX; i++)
			lease_renew(ls, i, buf);
		lease_sleep(WATCH_MS);
	}
	free(buf);
	return NULL;
}

struct agent_shelf_leases *agent_shelf_lease_new(uint64_t me, const char *node, unsigned timeout_ms,
						 agent_shelf_fenced_fn fenced, void *ctx)
{
	struct agent_shelf_leases *ls = calloc(1, sizeof(*ls));

	if (!ls)
		return NULL;
	ls->me = me;
	ls->timeout_ms = timeout_ms;
	ls->fenced = fenced;
	ls->fenced_ctx = ctx;
	snprintf(ls->node, sizeof(ls->node), "%s", node);
	pthread_mutex_init(&ls->mu, NULL);
	return ls;
}

void agent_shelf_lease_free(struct agent_shelf_leases *ls)
{
	int i;

	if (!ls)
		return;
	pthread_mutex_lock(&ls->mu);
	ls->stop = 1;
	pthread_mutex_unlock(&ls->mu);
	if (ls->threads) {
		pthread_join(ls->renewer, NULL);
		pthread_join(ls->watcher, NULL);
	}
	for (i = 0; i < LEASE_MAX; i++)
		if (ls->ents[i]) {
			close(ls->ents[i]->fd);
			free(ls->ents[i]);
		}
	pthread_mutex_destroy(&ls->mu);
	free(ls);
}

static int lease_find(struct agent_shelf_leases *ls, const char *fsid)
{
	int i;

	for (i = 0; i < LEASE_MAX; i++)
		if (ls->ents[i] && strcmp(ls->ents[i]->fsid, fsid) == 0)
			return i;
	return -1;
}

int agent_shelf_lease_held(struct agent_shelf_leases *ls, const char *fsid)
{
	int i, ok;

	pthread_mutex_lock(&ls->mu);
	i = lease_find(ls, fsid);
	ok = i >= 0 && agent_lease_valid(&ls->ents[i]->l, lease_now());
	pthread_mutex_unlock(&ls->mu);
	return ok;
}

static int lease_quitting(struct agent_shelf_leases *ls)
{
	int q;

	pthread_mutex_lock(&ls->mu);
	q = ls->quit;
	pthread_mutex_unlock(&ls->mu);
	return q;
}

/* The acquire loop (blocking): agent_lease_acquire_step against the
 * namespace; -ECANCELED once agent_shelf_lease_quit was called (its waits
 * are slept in slices of at most WATCH_MS to see that). */
static int lease_acquire(struct agent_shelf_leases *ls, struct lease_ent *e, uint8_t *buf, const char *dev)
{
	uint64_t start = lease_now(), limit = 3ull * e->l.timeout_ms + e->l.settle_ms;
	unsigned wait = 0;
	int rc, told = 0;

	for (;;) {
		if ((rc = lease_read(e->fd, e->off, buf)) != 0)
			return rc;
		rc = agent_lease_acquire_step(&e->l, lease_now(), buf, LEASE_IO, buf, &wait);
		if (rc == AGENT_LEASE_ACT_DONE || rc < 0)
			return rc < 0 ? rc : 0;
		if (rc == AGENT_LEASE_ACT_WRITE && (rc = lease_write(e->fd, e->off, buf)) != 0)
			return rc;
		if (e->l.phase == AGENT_LEASE_WATCH && !told++)
			UT_WARN("agent_shelf", NULL, "volume %s: %s's lease names host %016llx (%s, generation %llu): "
				"taking it over if it is not renewed for %u ms", e->fsid, dev,
				(unsigned long long)e->l.seen.owner, e->l.seen.name, (unsigned long long)e->l.seen.gen,
				e->l.timeout_ms);
		if (e->l.phase == AGENT_LEASE_WATCH && lease_now() - start > limit) {
			UT_ERROR("agent_shelf", NULL, "volume %s: host %016llx (%s) keeps renewing its lease: not taken",
				 e->fsid, (unsigned long long)e->l.seen.owner, e->l.seen.name);
			return -EBUSY;
		}
		for (;;) {
			unsigned slice = wait < WATCH_MS ? wait : WATCH_MS;

			if (lease_quitting(ls)) {
				UT_WARN("agent_shelf", NULL, "volume %s: stopping: no longer waiting for %s's lease", e->fsid,
					dev);
				return -ECANCELED;
			}
			lease_sleep(slice);
			if ((wait -= slice) == 0)
				break;
		}
	}
}

void agent_shelf_lease_quit(struct agent_shelf_leases *ls)
{
	if (!ls)
		return;
	pthread_mutex_lock(&ls->mu);
	ls->quit = 1;
	pthread_mutex_unlock(&ls->mu);
}

int agent_shelf_lease_take(struct agent_shelf_leases *ls, const char *fsid, const char *dev, const uint8_t id[16],
			   const char *mp)
{
	struct lease_ent *e = NULL;
	uint8_t *buf = NULL;
	uint64_t t0 = lease_now(), gen = 0;
	int rc = 0, i;

	if (agent_shelf_lease_held(ls, fsid))
		return 0;
	if (!(e = calloc(1, sizeof(*e))) || posix_memalign((void **)&buf, LEASE_IO, LEASE_IO) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	e->fd = -1;
	snprintf(e->fsid, sizeof(e->fsid), "%s", fsid);
	snprintf(e->mp, sizeof(e->mp), "%s", mp);
	agent_lease_init(&e->l, ls->me, ls->node, id);
	agent_lease_set_timeout(&e->l, ls->timeout_ms);
	if ((e->fd = lease_open(dev, &e->off, NULL)) < 0) {
		rc = e->fd;
		goto out;
	}
	if ((rc = lease_acquire(ls, e, buf, dev)) != 0) {
		if (rc == -EPROTO || rc == -EXDEV)
			UT_ERROR("agent_shelf", NULL, "volume %s: %s holds %s at %lld, not its lease: refused", fsid, dev,
				 rc == -EPROTO ? "something else" : "another volume's lease", (long long)e->off);
		goto out;
	}
	e->next = lease_now() + e->l.renew_ms;
	gen = e->l.gen;
	pthread_mutex_lock(&ls->mu);
	if ((i = lease_find(ls, fsid)) < 0)
		for (i = 0; i < LEASE_MAX && ls->ents[i]; i++)
			;
	if (i >= LEASE_MAX) {
		rc = -ENFILE;
	} else {
		if (ls->ents[i]) {
			close(ls->ents[i]->fd);
			free(ls->ents[i]);
		}
		ls->ents[i] = e;
		e = NULL;
		if (!ls->threads && pthread_create(&ls->renewer, NULL, lease_renewer, ls) == 0) {
			if (pthread_create(&ls->watcher, NULL, lease_watch, ls) == 0) {
				ls->threads = 1;
			} else {
				ls->stop = 1; /* the renewer alone would renew without a watcher: never */
				rc = -EAGAIN;
			}
		}
	}
	pthread_mutex_unlock(&ls->mu);
	if (rc == 0)
		UT_INFO("agent_shelf", NULL, "volume %s: lease taken on %s (generation %llu) in %llu ms", fsid, dev,
			(unsigned long long)gen, (unsigned long long)(lease_now() - t0));
out:
	if (e && e->fd >= 0)
		close(e->fd);
	free(e);
	free(buf);
	return rc;
}

void agent_shelf_lease_give(struct agent_shelf_leases *ls, const char *fsid)
{
	struct lease_ent *e = NULL;
	uint8_t *buf = NULL;
	int i;

	pthread_mutex_lock(&ls->mu);
	if ((i = lease_find(ls, fsid)) >= 0) {
		e = ls->ents[i];
		ls->ents[i] = NULL;
	}
	pthread_mutex_unlock(&ls->mu);
	if (!e)
		return;
	if (agent_lease_valid(&e->l, lease_now()) && posix_memalign((void **)&buf, LEASE_IO, LEASE_IO) == 0) {
		agent_lease_release_rec(&e->l, buf);
		if (lease_write(e->fd, e->off, buf) == 0)
			UT_INFO("agent_shelf", NULL, "volume %s: lease given back", fsid);
	}
	free(buf);
	close(e->fd);
	free(e);
}
