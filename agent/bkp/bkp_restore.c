/* bkp_restore: a backup (whole, or selected paths) into a folder. Every
 * path is walked from the target's descriptor one component at a time with
 * O_NOFOLLOW, so neither the manifest nor a symlink already in the target can
 * make a write land outside it. A file is written under a temporary name,
 * given its owner, mode and times, then renamed over its name; folders get
 * their attributes last, deepest first (making their content changes their
 * times). Every chunk is authenticated and its name recomputed from the
 * plaintext before it is written; all-zero chunks stay holes. Durability:
 * each file is fsynced before its rename, each folder after (not syncfs:
 * the shelf holds every volume of the node, their dirty data is not ours). Folders and
 * symlinks are made in walk order; files are then written by `parallel`
 * workers (a store's cost is per object), hard links last.
 */
#define _GNU_SOURCE
#include "agent/bkp/bkp_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/crypto.h>

/* Files (and hard links) are restored after every folder exists: files by
 * parallel workers, each with its own buffers, then links. */
struct rs_job {
	size_t idx, src; /* the entry, and the file entry whose data it gets */
	char *rel;
	bool link;       /* a hard link to where src was restored */
};

struct rs_jobs {
	pthread_mutex_t mu;
	struct rs_job *v;
	size_t n, cap, next;
	uint64_t done;        /* bytes, for progress */
	int err;              /* the first failure of a worker */
	aq_msg msg;
	struct bkp_stats st;  /* the workers' counts */
};

struct rs {
	struct bkp_vault *v;
	const struct bkp_restore_opts *o;
	struct bkp_mf m;
	int dstfd;
	char **done;   /* per entry: where a REG is restored (for its hard links) */
	size_t *dirs;  /* DIR entries restored, in walk order */
	char **dirrel;
	size_t ndirs;
	struct bkp_stats st;
	uint64_t total;
	uint8_t *ct, *pt;
	aq_msg *msg;
	struct rs_jobs *jobs;
};

static void rs_progress(struct rs *r, uint64_t add)
{
	pthread_mutex_lock(&r->jobs->mu);
	r->jobs->done += add;
	if (r->o->progress)
		r->o->progress(r->o->progress_arg, r->jobs->done, r->total);
	pthread_mutex_unlock(&r->jobs->mu);
}

/* The folder holding rel (a descriptor the caller closes) and rel's last
 * component, walking from the target without following symlinks. */
static int rs_parent(struct rs *r, const char *rel, int *pfd, const char **name)
{
	char comp[256];
	const char *p = rel, *slash;
	int fd = dup(r->dstfd);

	if (fd < 0)
		return aq_fail(r->msg, -errno, "dup: %s", strerror(errno));
	while ((slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);
		int nfd;

		if (n == 0 || n >= sizeof comp) {
			close(fd);
			return aq_fail(r->msg, -EINVAL, "bad path %s", rel);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0)
			return aq_fail(r->msg, errno == ELOOP || errno == ENOTDIR ? -EINVAL : -errno,
				       "%s in the target is not a folder (%s)", rel, strerror(errno));
		fd = nfd;
		p = slash + 1;
	}
	*pfd = fd;
	*name = p;
	return 0;
}

static int rs_chunk(struct rs *r, const struct bkp_cref *c, size_t len)
{
	char key[BKP_CHUNK_KEY_LEN + 1];
	uint8_t id[BKP_ID_LEN];
	size_t got = 0;
	int rc;

	bkp_chunk_key(c->id, key);
	/* one byte more than it should hold: a longer object is caught too */
	if ((rc = obj_get(r->v->store, key, 0, r->ct, len + BKP_SEAL_OVERHEAD + 1, &got)) != 0)
		return aq_fail(r->msg, rc == -ENOENT ? -EBADMSG : rc, "chunk %s: %s", key,
			       rc == -ENOENT ? "missing from the vault" : obj_strerror(rc));
	if (got != len + BKP_SEAL_OVERHEAD)
		return aq_fail(r->msg, -EBADMSG, "chunk %s has the wrong size", key);
	if (bkp_open_sealed(r->v->keys.chunk, key, r->ct, got, r->pt) != 0)
		return aq_fail(r->msg, -EBADMSG, "chunk %s does not authenticate", key);
	if (bkp_chunk_id(&r->v->keys, r->pt, len, id) != 0 || CRYPTO_memcmp(id, c->id, BKP_ID_LEN) != 0)
		return aq_fail(r->msg, -EBADMSG, "chunk %s does not match its name", key);
	r->st.bytes_read += len;
	return 0;
}

static void rs_times(const struct bkp_ent *e, struct timespec ts[2])
{
	ts[0] = (struct timespec){ e->atime_ns / 1000000000, e->atime_ns % 1000000000 };
	ts[1] = (struct timespec){ e->mtime_ns / 1000000000, e->mtime_ns % 1000000000 };
}

/* The carried xattrs of an open file or folder as the entry has them: set,
 * or removed when the entry has none (a folder that was there keeps no
 * stale EA list or DOS attributes). */
static int rs_xattrs(struct rs *r, int fd, const struct bkp_ent *e, const char *rel)
{
	for (unsigned x = 0; x < BKP_XA_N; x++) {
		/* none to put and none there (or none this process may see): nothing to do */
		if (!e->xa[x] && fgetxattr(fd, bkp_xa_name[x], NULL, 0) < 0)
			continue;
		if (e->xa[x] ? fsetxattr(fd, bkp_xa_name[x], e->xa[x], e->xa_len[x], 0) == 0
			     : fremovexattr(fd, bkp_xa_name[x]) == 0 || errno == ENODATA)
			continue;
		return aq_fail(r->msg, -errno, "%s of /%s: %s", bkp_xa_name[x], rel, strerror(errno));
	}
	return 0;
}

/* Owner, mode, xattrs, times of an open file or folder. */
static int rs_attrs(struct rs *r, int fd, const struct bkp_ent *e, const char *rel)
{
	struct timespec ts[2];
	int rc;

	rs_times(e, ts);
	if ((!r->o->no_owner && fchown(fd, e->uid, e->gid) != 0) || fchmod(fd, e->mode) != 0)
		return aq_fail(r->msg, -errno, "attributes of /%s: %s", rel, strerror(errno));
	if ((rc = rs_xattrs(r, fd, e, rel)) != 0)
		return rc;
	if (futimens(fd, ts) != 0)
		return aq_fail(r->msg, -errno, "attributes of /%s: %s", rel, strerror(errno));
	return 0;
}

static int rs_file(struct rs *r, const struct bkp_ent *e, int pfd, const char *tmp, const char *rel)
{
	uint32_t cs = r->m.chunk_size;
	int fd, rc = 0;

	if ((fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		return aq_fail(r->msg, -errno, "create /%s: %s", rel, strerror(errno));
	for (uint32_t i = 0; i < e->nchunks && rc == 0; i++) {
		uint64_t off = (uint64_t)i * cs;
		size_t len = (size_t)(e->size - off < cs ? e->size - off : cs), put = 0;

		if (!e->chunks[i].zero) {
			if ((rc = rs_chunk(r, &e->chunks[i], len)) != 0)
				break;
			while (put < len && rc == 0) {
				ssize_t w = pwrite(fd, r->pt + put, len - put, (off_t)(off + put));
				if (w < 0 && errno != EINTR)
					rc = aq_fail(r->msg, -errno, "write /%s: %s", rel, strerror(errno));
				put += w > 0 ? (size_t)w : 0;
			}
		}
		rs_progress(r, len);
	}
	if (rc == 0 && ftruncate(fd, (off_t)e->size) != 0)
		rc = aq_fail(r->msg, -errno, "truncate /%s: %s", rel, strerror(errno));
	if (rc == 0)
		rc = rs_attrs(r, fd, e, rel);
	if (rc == 0 && fsync(fd) != 0) /* durable before it takes its name */
		rc = aq_fail(r->msg, -errno, "fsync /%s: %s", rel, strerror(errno));
	close(fd);
	if (rc == 0) {
		r->st.files++;
		r->st.logical_bytes += e->size;
	}
	return rc;
}

static int rs_symlink(struct rs *r, const struct bkp_ent *e, int pfd, const char *tmp, const char *rel)
{
	struct timespec ts[2];

	rs_times(e, ts);
	if (symlinkat(e->target, pfd, tmp) != 0 ||
	    (!r->o->no_owner && fchownat(pfd, tmp, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) != 0) ||
	    utimensat(pfd, tmp, ts, AT_SYMLINK_NOFOLLOW) != 0)
		return aq_fail(r->msg, -errno, "symlink /%s: %s", rel, strerror(errno));
	r->st.symlinks++;
	return 0;
}

static int rs_link(struct rs *r, const struct bkp_ent *t, const char *to, int pfd, const char *tmp, const char *rel)
{
	const char *tname;
	int tfd = -1, rc;

	if ((rc = rs_parent(r, to, &tfd, &tname)) != 0)
		return rc;
	if (linkat(tfd, tname, pfd, tmp, 0) != 0)
		rc = aq_fail(r->msg, -errno, "link /%s: %s", rel, strerror(errno));
	close(tfd);
	if (rc == 0) {
		r->st.hardlinks++;
		rs_progress(r, t->size);
	}
	return rc;
}

static int rs_dir(struct rs *r, size_t idx, int pfd, const char *name, const char *rel)
{
	struct stat sb;
	char *copy = strdup(rel);

	if (!copy)
		return aq_fail(r->msg, -ENOMEM, "out of memory");
	if (rel[0] && mkdirat(pfd, name, 0700) != 0 &&
	    (errno != EEXIST || fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(sb.st_mode))) {
		free(copy);
		return aq_fail(r->msg, errno == EEXIST ? -EEXIST : -errno, "folder /%s: %s", rel,
			       errno == EEXIST ? "exists and is not a folder" : strerror(errno));
	}
	r->dirs[r->ndirs] = idx;
	r->dirrel[r->ndirs++] = copy;
	r->st.dirs++;
	return 0;
}

static int rs_job_add(struct rs *r, size_t idx, size_t src, const char *rel, bool link)
{
	struct rs_jobs *j = r->jobs;
	char *copy;

	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 256;
		void *p = realloc(j->v, cap * sizeof *j->v);

		if (!p)
			return aq_fail(r->msg, -ENOMEM, "out of memory");
		j->v = p;
		j->cap = cap;
	}
	if (!(copy = strdup(rel)))
		return aq_fail(r->msg, -ENOMEM, "out of memory");
	j->v[j->n++] = (struct rs_job){ .idx = idx, .src = src, .rel = copy, .link = link };
	return 0;
}

/* A file or a hard link, under a temporary name renamed into place. */
static int rs_named(struct rs *r, const struct rs_job *jb)
{
	const char *name;
	char tmp[64];
	int pfd = -1, rc;

	if ((rc = rs_parent(r, jb->rel, &pfd, &name)) != 0)
		return rc;
	snprintf(tmp, sizeof tmp, ".aqbkp.%d.%zu.tmp", (int)getpid(), jb->idx);
	unlinkat(pfd, tmp, 0); /* a crashed restore's */
	if (jb->link)
		rc = rs_link(r, &r->m.ents[jb->src], r->done[jb->src], pfd, tmp, jb->rel);
	else
		rc = rs_file(r, &r->m.ents[jb->src], pfd, tmp, jb->rel);
	if (rc == 0 && renameat(pfd, tmp, pfd, name) != 0)
		rc = aq_fail(r->msg, -errno, "rename into /%s: %s", jb->rel, strerror(errno));
	if (rc != 0)
		unlinkat(pfd, tmp, 0);
	close(pfd);
	return rc;
}

/* Entry idx restored at rel (relative to the target): folders and symlinks
 * now, files and hard links queued. */
static int rs_entry(struct rs *r, size_t idx, const char *rel)
{
	const struct bkp_ent *e = &r->m.ents[idx];
	const char *name;
	char tmp[64];
	int pfd = -1, rc;

	if (!rel[0] && e->type == BKP_T_DIR)
		return rs_dir(r, idx, r->dstfd, "", "");
	if (e->type == BKP_T_LINK && r->done[e->link])
		return rs_job_add(r, idx, e->link, rel, true);
	if (e->type == BKP_T_REG || e->type == BKP_T_LINK) {
		size_t src = e->type == BKP_T_LINK ? e->link : idx; /* its first name was not selected */

		if (!(r->done[src] = strdup(rel)))
			return aq_fail(r->msg, -ENOMEM, "out of memory");
		return rs_job_add(r, idx, src, rel, false);
	}
	if ((rc = rs_parent(r, rel, &pfd, &name)) != 0)
		return rc;
	if (e->type == BKP_T_DIR) {
		rc = rs_dir(r, idx, pfd, name, rel);
		goto out;
	}
	snprintf(tmp, sizeof tmp, ".aqbkp.%d.%zu.tmp", (int)getpid(), idx);
	unlinkat(pfd, tmp, 0); /* a crashed restore's */
	rc = rs_symlink(r, e, pfd, tmp, rel);
	if (rc == 0 && renameat(pfd, tmp, pfd, name) != 0)
		rc = aq_fail(r->msg, -errno, "rename into /%s: %s", rel, strerror(errno));
	if (rc != 0)
		unlinkat(pfd, tmp, 0);
out:
	close(pfd);
	return rc;
}

static void rs_stats_add(struct bkp_stats *to, const struct bkp_stats *s)
{
	to->files += s->files;
	to->logical_bytes += s->logical_bytes;
	to->bytes_read += s->bytes_read;
}

/* A worker: its own buffers, message and counts over a copy of r. */
static void *rs_worker(void *arg)
{
	const struct rs *shared = arg;
	struct rs w = *shared; /* borrowed: never cleaned up */
	struct rs_jobs *j = shared->jobs;
	aq_msg msg = { .text = "" };
	int rc = 0;

	w.msg = &msg;
	memset(&w.st, 0, sizeof w.st);
	w.ct = malloc(w.m.chunk_size + BKP_SEAL_OVERHEAD + 1);
	w.pt = malloc(w.m.chunk_size + BKP_SEAL_OVERHEAD + 1);
	if (!w.ct || !w.pt)
		rc = aq_fail(&msg, -ENOMEM, "out of memory");
	for (;;) {
		const struct rs_job *jb = NULL;

		pthread_mutex_lock(&j->mu);
		if (rc != 0 && j->err == 0) {
			j->err = rc;
			j->msg = msg;
		}
		while (j->err == 0 && j->next < j->n && !jb)
			if (!j->v[j->next++].link)
				jb = &j->v[j->next - 1];
		pthread_mutex_unlock(&j->mu);
		if (!jb)
			break;
		rc = rs_named(&w, jb);
	}
	pthread_mutex_lock(&j->mu);
	rs_stats_add(&j->st, &w.st);
	pthread_mutex_unlock(&j->mu);
	free(w.ct);
	free(w.pt);
	return NULL;
}

/* The queued files on workers, then the hard links here. */
static int rs_run_jobs(struct rs *r)
{
	struct rs_jobs *j = r->jobs;
	unsigned n = r->o->parallel ? r->o->parallel : BKP_PARALLEL_DEFAULT, started = 0;
	pthread_t th[BKP_PARALLEL_MAX];
	int rc = 0;

	if (n > BKP_PARALLEL_MAX)
		return aq_fail(r->msg, -EINVAL, "parallel 1..%d", BKP_PARALLEL_MAX);
	for (; started < n && started < j->n; started++)
		if (pthread_create(&th[started], NULL, rs_worker, r) != 0)
			break;
	if (started == 0 && j->n > 0)
		rs_worker(r); /* no thread: this one */
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	rs_stats_add(&r->st, &j->st);
	if (j->err != 0) {
		*r->msg = j->msg;
		return j->err;
	}
	for (size_t i = 0; i < j->n && rc == 0; i++)
		if (j->v[i].link)
			rc = rs_named(r, &j->v[i]);
	return rc;
}

/* Folders' attributes, deepest first. */
static int rs_dir_attrs(struct rs *r, bool root_too)
{
	int rc = 0;

	for (size_t i = r->ndirs; i-- > 0 && rc == 0;) {
		const char *rel = r->dirrel[i], *name;
		int pfd, fd;

		if (!rel[0]) {
			rc = root_too ? rs_attrs(r, r->dstfd, &r->m.ents[r->dirs[i]], rel) : 0;
			if (rc == 0 && fsync(r->dstfd) != 0)
				rc = aq_fail(r->msg, -errno, "fsync the target: %s", strerror(errno));
			continue;
		}
		if ((rc = rs_parent(r, rel, &pfd, &name)) != 0)
			break;
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(pfd);
		if (fd < 0)
			return aq_fail(r->msg, -errno, "folder /%s: %s", rel, strerror(errno));
		rc = rs_attrs(r, fd, &r->m.ents[r->dirs[i]], rel);
		if (rc == 0 && fsync(fd) != 0) /* its entries (the renames) durable */
			rc = aq_fail(r->msg, -errno, "fsync /%s: %s", rel, strerror(errno));
		close(fd);
	}
	return rc;
}

/* The target of a whole restore: made if missing, refused unless empty. */
static int rs_open_empty(struct rs *r, const char *dst)
{
	DIR *d;
	struct dirent *de;
	int fd;

	if (mkdir(dst, 0700) != 0 && errno != EEXIST)
		return aq_fail(r->msg, -errno, "target %s: %s", dst, strerror(errno));
	if ((r->dstfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return aq_fail(r->msg, -errno, "target %s: %s", dst, strerror(errno));
	if ((fd = dup(r->dstfd)) < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return aq_fail(r->msg, -errno, "target %s: %s", dst, strerror(errno));
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			closedir(d);
			return aq_fail(r->msg, -ENOTEMPTY, "target %s is not empty", dst);
		}
	closedir(d);
	return 0;
}

/* A selected path as the manifest spells it ("/a/b/" -> "a/b", "/" -> ""). */
static int rs_norm(const char *in, char *out, size_t cap)
{
	size_t n;

	while (*in == '/')
		in++;
	n = strlen(in);
	while (n > 0 && in[n - 1] == '/')
		n--;
	if (n >= cap || bkp_path_check(in, n) != 0)
		return -EINVAL;
	memcpy(out, in, n);
	out[n] = '\0';
	return 0;
}

static void rs_cleanup(struct rs *r)
{
	for (size_t i = 0; r->done && i < r->m.n; i++)
		free(r->done[i]);
	for (size_t i = 0; i < r->ndirs; i++)
		free(r->dirrel[i]);
	free(r->done);
	free(r->dirs);
	free(r->dirrel);
	free(r->ct);
	free(r->pt);
	if (r->dstfd >= 0)
		close(r->dstfd);
	bkp_mf_cleanup(&r->m);
}

int bkp_restore(struct bkp_vault *v, const char *id, const char *dst, const char *const *paths, size_t npaths,
		const struct bkp_restore_opts *o, struct bkp_stats *st, aq_msg *msg)
{
	static const struct bkp_restore_opts none;
	static const char *const whole[] = { "" };
	struct rs_jobs jobs = { .err = 0 };
	struct rs r = { .v = v, .o = o ? o : &none, .dstfd = -1, .msg = msg, .jobs = &jobs };
	char (*sel)[BKP_PATH_MAX + 1] = NULL;
	size_t *sel_idx = NULL;
	int rc;

	bkp_mf_init(&r.m);
	pthread_mutex_init(&jobs.mu, NULL);
	if (!paths) {
		paths = whole;
		npaths = 1;
	}
	if (npaths == 0 || npaths > 4096 || !(sel = calloc(npaths, sizeof *sel)) ||
	    !(sel_idx = calloc(npaths, sizeof *sel_idx))) {
		rc = aq_fail(msg, npaths ? -ENOMEM : -EINVAL, "no paths to restore, or too many");
		goto out;
	}
	for (size_t i = 0; i < npaths; i++)
		if (rs_norm(paths[i], sel[i], sizeof sel[i]) != 0) {
			rc = aq_fail(msg, -EINVAL, "path %.200s: not a clean path inside the volume", paths[i]);
			goto out;
		}
	if ((rc = bkp_mf_load(v, id, &r.m, msg)) != 0)
		goto out;
	for (size_t i = 0; i < npaths; i++) {
		const char *base = strrchr(sel[i], '/') ? strrchr(sel[i], '/') + 1 : sel[i];
		size_t k = 0;

		while (k < r.m.n && strcmp(r.m.ents[k].path, sel[i]) != 0)
			k++;
		if (k == r.m.n) {
			rc = aq_fail(msg, -ENOENT, "/%s is not in backup %s", sel[i], id);
			goto out;
		}
		sel_idx[i] = k;
		for (size_t j = 0; j < i; j++) {
			const char *bj = strrchr(sel[j], '/') ? strrchr(sel[j], '/') + 1 : sel[j];
			size_t li = strlen(sel[i]), lj = strlen(sel[j]), l = li < lj ? li : lj;

			if (l == 0 || (strncmp(sel[i], sel[j], l) == 0 && (sel[i][l] == '/' || sel[j][l] == '/' || li == lj))) {
				rc = aq_fail(msg, -EINVAL, "/%s and /%s overlap", sel[j], sel[i]);
				goto out;
			}
			if (strcmp(base, bj) == 0) {
				rc = aq_fail(msg, -EINVAL, "/%s and /%s would both restore as %s", sel[j], sel[i], base);
				goto out;
			}
		}
	}
	if (!(r.done = calloc(r.m.n, sizeof *r.done)) || !(r.dirs = calloc(r.m.n, sizeof *r.dirs)) ||
	    !(r.dirrel = calloc(r.m.n, sizeof *r.dirrel)) || !(r.ct = malloc(r.m.chunk_size + BKP_SEAL_OVERHEAD + 1)) ||
	    !(r.pt = malloc(r.m.chunk_size + BKP_SEAL_OVERHEAD + 1))) {
		rc = aq_fail(msg, -ENOMEM, "out of memory");
		goto out;
	}
	if (paths == whole)
		rc = rs_open_empty(&r, dst);
	else if ((r.dstfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = aq_fail(msg, -errno, "target %s: %s", dst, strerror(errno));
	if (rc != 0)
		goto out;
	/* the total for progress, then the entries, in manifest order (folders first) */
	for (int pass = 0; pass < 2 && rc == 0; pass++)
		for (size_t k = 0; k < r.m.n && rc == 0; k++) {
			const char *p = r.m.ents[k].path;

			for (size_t i = 0; i < npaths && rc == 0; i++) {
				size_t sl = strlen(sel[i]);
				const char *base = strrchr(sel[i], '/') ? strrchr(sel[i], '/') + 1 : sel[i];
				char rel[2 * BKP_PATH_MAX + 2];

				if (sl && (strncmp(p, sel[i], sl) != 0 || (p[sl] != '\0' && p[sl] != '/')))
					continue;
				if (pass == 0) {
					const struct bkp_ent *e = &r.m.ents[k];
					r.total += e->type == BKP_T_REG ? e->size
						   : e->type == BKP_T_LINK ? r.m.ents[e->link].size : 0;
					continue;
				}
				snprintf(rel, sizeof rel, "%s%s", sl ? base : "", sl ? p + sl : p);
				if (strlen(rel) > BKP_PATH_MAX)
					rc = aq_fail(msg, -ENAMETOOLONG, "restored path too long");
				else
					rc = rs_entry(&r, k, rel);
			}
		}
	if (rc == 0)
		rc = rs_run_jobs(&r);
	if (rc == 0)
		rc = rs_dir_attrs(&r, paths == whole);
	/* files were fsynced before their rename, restored folders after their
	 * attributes; the target holds the selected names */
	if (rc == 0 && fsync(r.dstfd) != 0)
		rc = aq_fail(msg, -errno, "fsync %s: %s", dst, strerror(errno));
	if (rc == 0 && st)
		*st = r.st;
out:
	free(sel);
	free(sel_idx);
	rs_cleanup(&r);
	for (size_t i = 0; i < jobs.n; i++)
		free(jobs.v[i].rel);
	free(jobs.v);
	pthread_mutex_destroy(&jobs.mu);
	return rc;
}
