/* vol: the protocol-neutral volume store; see vol.h for the contract.
 *
 * Objects are O_PATH descriptors. Handle resolution (open_by_handle_at needs
 * CAP_DAC_READ_SEARCH) runs with the process's own credentials; everything a
 * caller asks for runs after vol_become() switched this thread's fs identity.
 * Content access reopens the O_PATH descriptor through /proc/self/fd so the
 * kernel checks the caller's permission on the open.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

/* ---------- refcounting ---------- */

static void vol_acct_unref(struct vol_acct *a)
{
	int i;

	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	for (i = 0; i < VOL_LOCKS; i++) {
		pthread_mutex_destroy(&a->locks[i]);
		pthread_mutex_destroy(&a->dsync[i].mu);
		pthread_cond_destroy(&a->dsync[i].cv);
		pthread_mutex_destroy(&a->fsync[i].mu);
		pthread_cond_destroy(&a->fsync[i].cv);
	}
	qos_vol_unref(a->qos);
	vol_grace_close(a->grace);
	free(a);
}

struct vol_export *vol_export_ref(struct vol_export *e)
{
	if (e)
		atomic_fetch_add(&e->refs, 1);
	return e;
}

void vol_export_unref(struct vol_export *e)
{
	if (!e || atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	if (e->root_fd >= 0)
		close(e->root_fd);
	if (e->logfd >= 0)
		close(e->logfd);
	vol_snap_close(e);
	OPENSSL_cleanse(e->fhkey, sizeof(e->fhkey));
	vol_mackey_cleanup(&e->fhmac);
	vol_acct_unref(e->acct);
	free(e);
}

static void vol_set_unref(struct vol_set *set)
{
	size_t i;

	if (!set || atomic_fetch_sub(&set->refs, 1) != 1)
		return;
	for (i = 0; i < set->n; i++)
		vol_export_unref(set->e[i]);
	vol_index_cleanup(&set->ix);
	free(set);
}

static struct vol_set *vol_set_get(struct vol_store *s)
{
	struct vol_set *set;

	pthread_mutex_lock(&s->mu);
	set = s->cur;
	if (set)
		atomic_fetch_add(&set->refs, 1);
	pthread_mutex_unlock(&s->mu);
	return set;
}

/* ---------- store ---------- */

int vol_store_new(const uint8_t *key, struct vol_store **out)
{
	struct vol_store *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	memcpy(s->key, key, VOL_KEY_LEN);
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->qos_mu, NULL);
	pthread_mutex_init(&s->watch_mu, NULL);
	pthread_mutex_init(&s->lease_mu, NULL);
	pthread_mutex_init(&s->grace_mu, NULL);
	s->grace_s = VOL_GRACE_DEFAULT_S;
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&s->lease_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	s->lease_ms = VOL_LEASE_TIMEOUT_MS;
	s->cur = calloc(1, sizeof(struct vol_set));
	s->fc = calloc(VOL_FCACHE, sizeof(*s->fc));
	s->procfd = -1;
	if (!s->cur || !s->fc || qos_sched_new(NULL, &s->qos) != 0 || vol_lock_new(0, 0, &s->locks) != 0 ||
	    vol_ra_new(s, &s->ra) != 0) {
		vol_ra_free(s->ra);
		qos_sched_free(s->qos);
		vol_lock_free(s->locks);
		free(s->cur);
		free(s->fc);
		free(s);
		return -ENOMEM;
	}
	for (int i = 0; i < VOL_FCACHE; i++) {
		pthread_mutex_init(&s->fc[i].mu, NULL);
		s->fc[i].fd = s->fc[i].iofd = -1;
	}
	atomic_init(&s->cur->refs, 1);
	s->procfd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->procfd < 0) {
		int rc = -errno;

		vol_store_free(s);
		return rc;
	}
	s->xattrat = vol_mark_probe();
	*out = s;
	return 0;
}

struct vol_lock_tab *vol_store_locks(struct vol_store *s)
{
	return s->locks;
}

void vol_lock_key_of(const struct vol_obj *obj, struct vol_lock_key *k)
{
	*k = (struct vol_lock_key){ .fsid = obj->exp->cfg.fsid, .dev = (uint64_t)obj->st.st_dev,
				    .ino = (uint64_t)obj->st.st_ino };
}

void vol_store_free(struct vol_store *s)
{
	if (!s)
		return;
	vol_ra_stop(s->ra);    /* no new charges; QoS hands back the parked jobs */
	qos_sched_stop(s->qos);
	vol_set_unref(s->cur);
	qos_sched_free(s->qos);
	vol_ra_free(s->ra);
	for (int i = 0; i < VOL_FCACHE; i++) {
		if (s->fc[i].fd >= 0)
			close(s->fc[i].fd);
		if (s->fc[i].iofd >= 0)
			close(s->fc[i].iofd);
		pthread_mutex_destroy(&s->fc[i].mu);
	}
	free(s->fc);
	vol_lock_free(s->locks);
	if (s->procfd > 0)
		close(s->procfd);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->qos_mu);
	pthread_mutex_destroy(&s->watch_mu);
	pthread_mutex_destroy(&s->lease_mu);
	pthread_mutex_destroy(&s->grace_mu);
	free(s->notify);
	pthread_cond_destroy(&s->lease_cv);
	OPENSSL_cleanse(s->key, sizeof(s->key));
	free(s);
}

void vol_store_set_tier(struct vol_store *s, const struct vol_tier_ops *ops, void *arg)
{
	s->tier = ops;
	s->tier_arg = arg;
}

/* What the tree below dirfd uses (which this closes): the sizes of regular
 * files (a hard-linked one counts size/nlink per name) plus VOL_NAME_COST
 * per name, staying on one file system and never following symlinks. stamp: give every object
 * without a containment mark e's mark (a volume made before marks). Leftover
 * temporaries of vol_link_replace are removed on the way (vol_link_leftover). */
static uint64_t vol_scan(const struct vol_export *e, int dirfd, int depth, bool stamp, uint64_t *names)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	uint64_t sum = 0, m;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != e->dev)
			continue;
		/* a link's temporary that a kill left (vol_link_replace): gone,
		 * its file keeps its other name; not synced (a crash before the
		 * folder's next sync brings it back for the next walk) */
		if (vol_link_leftover(dirfd, de->d_name, &st, false) && unlinkat(dirfd, de->d_name, 0) == 0)
			continue;
		if (stamp && vol_mark_get(e->store, dirfd, de->d_name, &m) == -ENODATA)
			vol_mark_set(e->store, dirfd, de->d_name, e->cfg.fsid);
		sum += VOL_NAME_COST;
		(*names)++;
		if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) /* SMB EAs (vol_ea.c) */
			sum += vol_ea_size_at(dirfd, de->d_name) / (S_ISREG(st.st_mode) && st.st_nlink ? st.st_nlink : 1);
		if (S_ISREG(st.st_mode)) {
			sum += (uint64_t)st.st_size / (st.st_nlink ? st.st_nlink : 1);
		} else if (S_ISDIR(st.st_mode) && depth < 512) {
			sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sum += vol_scan(e, sub, depth + 1, stamp, names);
		}
	}
	closedir(d);
	return sum;
}

/* Containment marks of e (vol_fh.c): the root gets its mark only once every
 * object below has one, so a root without it (a volume made before marks, or
 * a stamping walk cut short) means: walk and stamp first (*stamp). A file
 * system that takes no extended attributes has no marks; then the root must
 * be its file system's own root (one file system per volume, as on the NVMe
 * shelf), where the device check alone keeps handles inside. A root marked
 * for another fsid is another volume's: refused. */
static int vol_marks_init(struct vol_export *e, bool *stamp)
{
	struct stat up;
	uint64_t m = 0;
	int rc;

	*stamp = false;
	/* a file system's or a btrfs subvolume's own root (a volume's folder
	 * on a btrfs shelf, a clone's with its source's marks): everything
	 * below has its st_dev, which the handle check compares */
	e->marks = false;
	if (fstatat(e->root_fd, "..", &up, 0) == 0 && up.st_dev != e->dev)
		return 0;
	e->marks = true;
	rc = vol_mark_get(e->store, e->root_fd, NULL, &m);
	if (rc == 0)
		return m == e->cfg.fsid ? 0 : -EEXIST;
	if (rc == -ENODATA) {
		*stamp = true;
		return 0;
	}
	if (rc != -EOPNOTSUPP)
		return rc;
	e->marks = false;
	if (fstatat(e->root_fd, "..", &up, 0) != 0)
		return -errno;
	return up.st_dev != e->dev || up.st_ino == e->ino ? 0 : -EOPNOTSUPP;
}

/* Whether the file system under root_fd keeps its metadata in one ordered
 * log, so that the fsync of a new object also makes stable the directory
 * entry made before it (vol_ns.c skips that directory's own fsync). ext4
 * (jbd2 commits transactions in order; without a journal its fsync syncs a
 * new inode's parent) and XFS (a log force reaches every earlier item) do;
 * for any other (btrfs, tmpfs, overlay, NFS...) the directory is synced. */
static bool vol_ordered_meta(int root_fd)
{
	struct statfs sf;

	if (fstatfs(root_fd, &sf) != 0)
		return false;
	return sf.f_type == 0xEF53 /* EXT4_SUPER_MAGIC */ || sf.f_type == 0x58465342 /* XFS_SUPER_MAGIC */;
}

/* Whether the ext4 on block device /dev/name has the fast_commit feature
 * (COMPAT_FAST_COMMIT, 0x400 in s_feature_compat of the superblock at byte
 * 1024; magic 0xEF53 at 0x38), or its superblock cannot be read: either
 * way not one log (vol_one_log). */
static bool vol_ext4_fast_commit(const char *name)
{
	uint8_t sb[1024];
	char path[160];
	int fd;
	bool fc = true;

	snprintf(path, sizeof(path), "/dev/%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return true;
	if (pread(fd, sb, sizeof(sb), 1024) == (ssize_t)sizeof(sb) && sb[0x38] == 0x53 && sb[0x39] == 0xEF)
		fc = (sb[0x5C + 1] & 0x04) != 0; /* le32 at 0x5C: bit 10 is in its second byte */
	close(fd);
	return fc;
}

/* Whether that log holds each change whole and commits in order, so that
 * the fsync of one object a RENAME or LINK changed makes all of it stable
 * (both directories of a RENAME; a LINK's entry with the file's link
 * count): XFS (one transaction per change; a log force reaches every
 * earlier item) and ext4 with a journal (one jbd2 handle per change). ext4
 * without one writes back only what its fsync names (the file, and a new
 * inode's parent), so there every changed directory is synced. The journal
 * is told by jbd2's folder for the device (/proc/fs/jbd2/<name>-8); when
 * that cannot be read the answer is no: the safe side. ext4 with
 * fast_commit is not one log either: an fsync there may write a fast-commit
 * record of the inode it names only, without the jbd2 transaction that
 * holds earlier changes of other inodes, so the log sync (an fsync of the
 * export's unnamed file) would not make them stable; there each object is
 * synced. The feature is read from the device's superblock (the agent runs
 * as root); a superblock that cannot be read counts as fast_commit. */
static bool vol_one_log(int root_fd, dev_t dev)
{
	char path[96], line[128], jbd[160];
	struct statfs sf;
	bool found = false;
	FILE *f;

	if (fstatfs(root_fd, &sf) != 0)
		return false;
	if (sf.f_type == 0x58465342) /* XFS_SUPER_MAGIC */
		return true;
	if (sf.f_type != 0xEF53) /* EXT4_SUPER_MAGIC */
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		line[n] = '\0';
		if (strncmp(line, "DEVNAME=", 8) == 0 && line[8] && !strchr(line + 8, '/')) {
			snprintf(jbd, sizeof(jbd), "/proc/fs/jbd2/%s-8", line + 8);
			found = access(jbd, F_OK) == 0 && !vol_ext4_fast_commit(line + 8);
			break;
		}
	}
	fclose(f);
	return found;
}

static struct vol_acct *vol_acct_new(struct vol_store *s, const struct vol_export_cfg *cfg)
{
	struct vol_acct *a = calloc(1, sizeof(*a));
	int i;

	if (!a)
		return NULL;
	if (qos_vol_new(s->qos, &a->qos) != 0) {
		free(a);
		return NULL;
	}
	atomic_init(&a->refs, 1);
	a->born_ns = qos_now(s->qos);
	snprintf(a->id, sizeof(a->id), "%s", cfg->id);
	for (i = 0; i < VOL_LOCKS; i++) {
		pthread_mutex_init(&a->locks[i], NULL);
		pthread_mutex_init(&a->dsync[i].mu, NULL);
		pthread_cond_init(&a->dsync[i].cv, NULL);
		pthread_mutex_init(&a->fsync[i].mu, NULL);
		pthread_cond_init(&a->fsync[i].cv, NULL);
	}
	atomic_init(&a->used, 0);
	atomic_init(&a->names, 0);
	a->grace = vol_grace_open(s, cfg->lockdir); /* first attached here: grace when holders are recorded */
	return a;
}

static int vol_export_build(struct vol_store *s, const struct vol_export_cfg *cfg,
			    const struct vol_set *old, struct vol_export **out)
{
	struct vol_export *e = calloc(1, sizeof(*e));
	bool fresh = false, stamp = false;
	struct stat st;
	size_t i, at;
	int rc = 0;

	if (!e)
		return -ENOMEM;
	atomic_init(&e->refs, 1);
	e->cfg = *cfg;
	e->root_fd = e->logfd = -1;
	e->store = s;
	if ((rc = vol_snap_open(e)) != 0)
		goto out;
	if (cfg->path[0] != '/' || cfg->nrules > VOL_MAX_RULES || !cfg->id[0]) {
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; i < cfg->nrules; i++) {
		/* the contract's parser and limits (api_intent.h) */
		if (api_intent_clients_parse(cfg->rules[i].clients, "allowedClients", e->nets[i], &e->nnets[i], NULL) != AQ_OK) {
			rc = -EINVAL;
			goto out;
		}
	}
	e->root_fd = open(cfg->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->root_fd < 0 || fstat(e->root_fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->ordered_meta = vol_ordered_meta(e->root_fd);
	e->one_log = e->ordered_meta && vol_one_log(e->root_fd, e->dev);
	if (e->one_log)
		e->logfd = vol_log_open(e->root_fd);
	vol_fh_key(s->key, cfg->fsid, e->fhkey);
	vol_mackey_init(&e->fhmac, e->fhkey);
	if ((rc = vol_marks_init(e, &stamp)) != 0)
		goto out;
	if (old && (at = vol_index_id(old, cfg->id)) != VOL_INDEX_NONE) {
		e->acct = old->e[at]->acct;
		atomic_fetch_add(&e->acct->refs, 1);
		/* a revert replaced the tree: count it again */
		fresh = e->acct->tree_seq != cfg->tree_seq;
	}
	if (!e->acct) {
		if (!(e->acct = vol_acct_new(s, cfg))) {
			rc = -ENOMEM;
			goto out;
		}
		fresh = true;
	}
	e->acct->tree_seq = cfg->tree_seq;
	if (fresh || stamp) {
		int dfd = openat(e->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		uint64_t names = 0, used = dfd >= 0 ? vol_scan(e, dfd, 0, stamp, &names) : 0;

		if (fresh) {
			atomic_store(&e->acct->used, used);
			atomic_store(&e->acct->names, names);
		}
		if (stamp && (rc = vol_mark_set(s, e->root_fd, NULL, cfg->fsid)) != 0)
			goto out;
	}
	*out = e;
	e = NULL;
out:
	vol_export_unref(e);
	return rc;
}

int vol_store_set(struct vol_store *s, const struct vol_export_cfg *cfg, size_t n)
{
	struct vol_set *set = NULL, *old = NULL;
	size_t i;
	int rc = 0;

	set = calloc(1, sizeof(*set) + n * sizeof(set->e[0]));
	if (!set)
		return -ENOMEM;
	atomic_init(&set->refs, 1);
	/* the indexes, and with them the check for a second id, fsid or path */
	if ((rc = vol_index_build(&set->ix, cfg, n)) != 0)
		goto out;
	old = vol_set_get(s);
	for (i = 0; i < n; i++) {
		size_t at = old ? vol_index_id(old, cfg[i].id) : VOL_INDEX_NONE;

		if ((rc = vol_export_build(s, &cfg[i], old, &set->e[i])) != 0)
			goto out;
		set->n++;
		/* whether it clones: the answer it had (same id, same file
		 * system) or the last one's of this set on its file system,
		 * else probed now, off every protocol's loop */
		vol_clone_attach(set->e[i], at != VOL_INDEX_NONE ? old->e[at] : i ? set->e[i - 1] : NULL);
	}
	/* QoS limits change in place, once the new set is certain: a volume
	 * that keeps its id keeps its buckets and parked requests. */
	for (i = 0; i < set->n; i++)
		qos_vol_set(set->e[i]->acct->qos, &set->e[i]->cfg.qos, qos_now(s->qos));
	pthread_mutex_lock(&s->mu);
	vol_set_unref(s->cur);
	s->cur = set;
	atomic_fetch_add(&set->refs, 1); /* ours until out: */
	pthread_mutex_unlock(&s->mu);
	/* A volume detached from this node takes its locks and share
	 * reservations with it (every protocol's): nobody can reach its files
	 * here any more, and its waiters must not wait for ever. */
	for (i = 0; old && i < old->n; i++)
		if (vol_index_fsid(set, old->e[i]->cfg.fsid) == VOL_INDEX_NONE)
			vol_lock_release_fsid(s->locks, old->e[i]->cfg.fsid);
out:
	vol_set_unref(old);
	vol_set_unref(set);
	return rc;
}

/* The export at position pos of set (VOL_INDEX_NONE: none), counted. */
static struct vol_export *vol_take(struct vol_set *set, size_t pos)
{
	struct vol_export *e = NULL;

	if (set && pos < set->n)
		e = vol_export_ref(set->e[pos]);
	vol_set_unref(set);
	return e;
}

struct vol_export *vol_export_by_path(struct vol_store *s, const char *path, size_t len)
{
	struct vol_set *set = vol_set_get(s);

	/* Accept a trailing slash: "/share/" names "/share". */
	while (len > 1 && path[len - 1] == '/')
		len--;
	return vol_take(set, set ? vol_index_path(set, path, len) : VOL_INDEX_NONE);
}

struct vol_export *vol_export_by_prefix(struct vol_store *s, const char *path, size_t len, size_t *rest)
{
	struct vol_set *set = vol_set_get(s);
	size_t at = 0, pos = set ? vol_index_prefix(set, path, len, &at) : VOL_INDEX_NONE;

	if (pos != VOL_INDEX_NONE)
		*rest = at;
	return vol_take(set, pos);
}

struct vol_export *vol_export_at(struct vol_store *s, size_t i)
{
	return vol_take(vol_set_get(s), i);
}

struct vol_export *vol_find_fsid(struct vol_store *s, uint64_t fsid)
{
	struct vol_set *set = vol_set_get(s);

	return vol_take(set, set ? vol_index_fsid(set, fsid) : VOL_INDEX_NONE);
}

const struct vol_export_cfg *vol_export_config(const struct vol_export *e)
{
	return &e->cfg;
}

uint64_t vol_export_fsid(const struct vol_export *e)
{
	return e->cfg.fsid;
}

int vol_store_stats(struct vol_store *s, const char *id, struct vol_stats *out)
{
	struct vol_set *set = vol_set_get(s);
	int rc = -ENOENT;
	size_t i = set ? vol_index_id(set, id) : VOL_INDEX_NONE, k;

	memset(out, 0, sizeof(*out));
	if (i != VOL_INDEX_NONE) {
		struct vol_acct *a = set->e[i]->acct;

		for (k = 0; k < VOL_NOPS; k++) {
			out->ops[k] = atomic_load(&a->ops[k]);
			out->bytes[k] = atomic_load(&a->bytes[k]);
			out->errors[k] = atomic_load(&a->errors[k]);
		}
		for (k = 0; k < VOL_LAT_BUCKETS; k++)
			out->lat_us_hist[k] = atomic_load(&a->lat[k]);
		out->used = atomic_load(&a->used);
		out->dirsyncs = atomic_load(&a->dirsyncs);
		out->filesyncs = atomic_load(&a->filesyncs);
		out->dirsyncs_covered = atomic_load(&a->dirsyncs_covered);
		out->syncs_clean = atomic_load(&a->syncs_clean);
		out->logsyncs = atomic_load(&a->logsyncs);
		out->logsyncs_done = atomic_load(&a->logsyncs_done);
		out->deferred = atomic_load(&a->deferred);
		out->ra_bytes = atomic_load(&a->ra_bytes);
		out->ra_hits = atomic_load(&a->ra_hits);
		out->ra_wasted = atomic_load(&a->ra_wasted);
		out->names = atomic_load(&a->names);
		out->capacity = set->e[i]->cfg.capacity;
		out->age_ms = (qos_now(s->qos) - a->born_ns) / 1000000u;
		qos_vol_stats(a->qos, qos_now(s->qos), &out->qos);
		rc = 0;
	}
	vol_set_unref(set);
	return rc;
}

void vol_export_record(struct vol_export *e, unsigned op, uint64_t bytes, uint64_t ns, bool failed)
{
	uint64_t us = ns / 1000;
	unsigned b = 0;

	if (!e || op >= VOL_NOPS)
		return;
	while (b < VOL_LAT_BUCKETS - 1 && us >= (1ull << b))
		b++;
	atomic_fetch_add_explicit(&e->acct->ops[op], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->acct->bytes[op], bytes, memory_order_relaxed);
	if (failed)
		atomic_fetch_add_explicit(&e->acct->errors[op], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->acct->lat[b], 1, memory_order_relaxed);
}

/* Root squash as knfsd's nfsd_setuser: uid 0 becomes the anonymous uid and,
 * independently, gid 0 the anonymous gid, as primary and as supplementary
 * group (a caller in group 0 must not reach what group 0 may). */
static void vol_squash_root(const struct vol_rule *r, struct vol_cred *c)
{
	uint32_t i;

	if (c->uid == 0)
		c->uid = r->anon_uid;
	if (c->gid == 0)
		c->gid = r->anon_gid;
	for (i = 0; i < c->ngids && i < sizeof(c->gids) / sizeof(c->gids[0]); i++)
		if (c->gids[i] == 0)
			c->gids[i] = r->anon_gid;
}

enum vol_access vol_authorize(const struct vol_export *e, const struct sockaddr *client, enum vol_proto proto,
			      const struct vol_cred *in, struct vol_cred *out)
{
	uint32_t a;
	size_t i, k;

	*out = *in;
	if (client->sa_family == AF_INET) {
		a = ntohl(((const struct sockaddr_in *)(const void *)client)->sin_addr.s_addr);
	} else if (client->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)client;
		const uint8_t *b = s6->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			a = 0x7f000001u;
		else if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
		else
			return VOL_ACCESS_NONE;
	} else {
		return VOL_ACCESS_NONE;
	}
	/* a volume whose protocols do not name this front end's is not served
	 * by it (the bits of enum vol_proto are api_intent's) */
	if (e->cfg.protocols && !(e->cfg.protocols & (unsigned)proto))
		return VOL_ACCESS_NONE;
	for (i = 0; i < e->cfg.nrules; i++) {
		const struct vol_rule *r = &e->cfg.rules[i];

		if (r->not_for & proto)
			continue; /* e.g. nfsv3: false */
		for (k = 0; k < e->nnets[i]; k++) {
			if ((a & e->nets[i][k].mask) != e->nets[i][k].addr)
				continue;
			if (r->squash == VOL_SQUASH_ALL) {
				out->uid = r->anon_uid;
				out->gid = r->anon_gid;
				out->ngids = 0;
			} else if (r->squash == VOL_SQUASH_ROOT) {
				vol_squash_root(r, out);
			}
			return r->access;
		}
	}
	return VOL_ACCESS_NONE;
}

/* ---------- QoS ---------- */

uint64_t vol_io_cost(uint64_t count)
{
	return count < VOL_QOS_IO_MAX ? count : VOL_QOS_IO_MAX;
}

void vol_export_settle(struct vol_export *e, uint64_t count, uint64_t moved)
{
	uint64_t cost = vol_io_cost(count);

	if (e && moved < cost)
		qos_refund(e->acct->qos, cost - moved, qos_now(e->store->qos));
}

enum qos_verdict vol_admit(struct vol_store *s, const uint8_t *fh, size_t len, uint64_t client,
			   enum qos_kind kind, uint64_t bytes, struct qos_item *it)
{
	struct vol_export *e;
	enum qos_verdict v;

	if (!(e = vol_fh_export(s, fh, len)))
		return QOS_ADMIT;
	v = qos_submit(e->acct->qos, client, kind, vol_io_cost(bytes), it, qos_now(s->qos));
	vol_export_unref(e);
	return v;
}

enum qos_verdict vol_admit_export(struct vol_export *e, uint64_t client, enum qos_kind kind, uint64_t bytes,
				  struct qos_item *it)
{
	if (!e)
		return QOS_ADMIT;
	return qos_submit(e->acct->qos, client, kind, bytes, it, qos_now(e->store->qos));
}

/* The timer's one callback: each parked request goes back to its owner. */
static void vol_qos_release(void *arg, struct qos_item *it)
{
	(void)arg;
	it->release(it->release_arg, it);
}

int vol_store_qos_start(struct vol_store *s)
{
	int rc = 0;

	pthread_mutex_lock(&s->qos_mu);
	if (s->qos_users == 0)
		rc = qos_sched_start(s->qos, vol_qos_release, s);
	if (rc == 0)
		s->qos_users++;
	pthread_mutex_unlock(&s->qos_mu);
	return rc;
}

void vol_store_qos_stop(struct vol_store *s)
{
	pthread_mutex_lock(&s->qos_mu);
	if (s->qos_users > 0) {
		qos_sched_stop(s->qos); /* releases every parked request */
		if (--s->qos_users > 0 && qos_sched_start(s->qos, vol_qos_release, s) != 0)
			s->qos_users = 0; /* unthrottled from now on: vol_admit still admits */
	}
	pthread_mutex_unlock(&s->qos_mu);
}

