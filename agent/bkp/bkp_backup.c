/* bkp_backup: one backup of a snapshot folder. Two passes: the walk
 * (lstat only: the tree, its attributes and hard links, the total for
 * progress), then the data: each regular file is either taken from the
 * previous manifest by identity (not read) or read in fixed-size chunks, each
 * named by its HMAC and put only when the vault lacks it. The manifest is
 * put last, under the vault's backup lock.
 */
#define _GNU_SOURCE
#include "agent/bkp/bkp_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "util/ut_clock.h"

struct bk_ino {
	uint64_t ino;
	uint32_t idx;
};

struct bk {
	struct bkp_vault *v;
	const struct bkp_opts *o;
	uint32_t cs;
	int rootfd;
	struct bkp_mf m, prev;
	size_t *prev_sorted; /* indices of prev.ents sorted by path */
	struct bkp_set have;
	struct bk_ino *inos; /* regular files with nlink > 1 */
	size_t ninos, capinos;
	struct bkp_stats st;
	uint64_t done, total;
	uint8_t *buf;
	struct bkp_pool pool;
	char lock[OBJ_KEY_MAX + 1];
	time_t refreshed;
	unsigned stale;
	aq_msg *msg;
};

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The inode of a hard-linked file seen before, or -1 (and remembered as idx). */
static int64_t bk_ino_seen(struct bk *b, uint64_t ino, uint32_t idx)
{
	struct bk_ino *p;

	for (size_t i = 0; i < b->ninos; i++) /* few files have several names */
		if (b->inos[i].ino == ino)
			return b->inos[i].idx;
	if (b->ninos == b->capinos) {
		size_t cap = b->capinos ? 2 * b->capinos : 64;

		if (!(p = realloc(b->inos, cap * sizeof *p)))
			return -2;
		b->inos = p;
		b->capinos = cap;
	}
	b->inos[b->ninos++] = (struct bk_ino){ ino, idx };
	return -1;
}

/* The carried xattrs (bkp_xa_name) of name in folder dirfd (NULL: dirfd
 * itself) into e; a file system without xattrs has none to carry. */
static int bk_xattrs(struct bk *b, int dirfd, const char *name, struct bkp_ent *e)
{
	char p[32 + 256];
	ssize_t n;

	if (name)
		snprintf(p, sizeof p, "/proc/self/fd/%d/%s", dirfd, name);
	else
		snprintf(p, sizeof p, "/proc/self/fd/%d", dirfd);
	for (unsigned x = 0; x < BKP_XA_N; x++) {
		if ((n = lgetxattr(p, bkp_xa_name[x], NULL, 0)) < 0 && (errno == ENODATA || errno == ENOTSUP))
			continue;
		if (n == 0)
			continue;
		if (n < 0 || n > (ssize_t)BKP_XA_MAX)
			return aq_fail(b->msg, n < 0 ? -errno : -E2BIG, "%s of /%s: %s", bkp_xa_name[x], e->path,
				       n < 0 ? strerror(errno) : "too large");
		if (!(e->xa[x] = malloc((size_t)n)))
			return aq_fail(b->msg, -ENOMEM, "out of memory");
		/* a snapshot does not change; ERANGE would be a live source changing under us */
		if ((n = lgetxattr(p, bkp_xa_name[x], e->xa[x], (size_t)n)) <= 0)
			return aq_fail(b->msg, n < 0 ? -errno : -ESTALE, "%s of /%s: %s", bkp_xa_name[x], e->path,
				       n < 0 ? strerror(errno) : "changed while read");
		e->xa_len[x] = (uint32_t)n;
	}
	return 0;
}

static int bk_entry(struct bk *b, int dirfd, const char *name, const char *path, const struct stat *sb)
{
	struct bkp_ent *e;
	uint8_t type;
	int64_t seen = -1;
	char target[BKP_PATH_MAX + 2];
	ssize_t tl = 0;
	int rc;

	if (S_ISDIR(sb->st_mode))
		type = BKP_T_DIR;
	else if (S_ISLNK(sb->st_mode))
		type = BKP_T_SYMLINK;
	else if (S_ISREG(sb->st_mode))
		type = BKP_T_REG;
	else {
		b->st.skipped++;
		return 0;
	}
	if (strlen(path) > BKP_PATH_MAX)
		return aq_fail(b->msg, -ENAMETOOLONG, "path too long to back up: %.64s...", path);
	if (type == BKP_T_SYMLINK) {
		if ((tl = readlinkat(dirfd, name, target, sizeof target)) < 0)
			return aq_fail(b->msg, -errno, "readlink %s: %s", path, strerror(errno));
		if (tl == 0 || tl > BKP_PATH_MAX)
			return aq_fail(b->msg, -ENAMETOOLONG, "symlink target of %s too long", path);
		target[tl] = '\0';
	}
	if (type == BKP_T_REG && sb->st_nlink > 1 &&
	    (seen = bk_ino_seen(b, (uint64_t)sb->st_ino, (uint32_t)b->m.n)) == -2)
		return aq_fail(b->msg, -ENOMEM, "out of memory");
	if (seen >= 0)
		type = BKP_T_LINK;
	if (!(e = bkp_mf_add(&b->m, type, path)))
		return aq_fail(b->msg, -ENOMEM, "out of memory (or more than %u entries)", BKP_MF_ENTRIES_MAX);
	e->mode = sb->st_mode & 07777;
	e->uid = sb->st_uid;
	e->gid = sb->st_gid;
	e->atime_ns = ts_ns(&sb->st_atim);
	e->mtime_ns = ts_ns(&sb->st_mtim);
	e->ctime_ns = ts_ns(&sb->st_ctim);
	e->ino = (uint64_t)sb->st_ino;
	e->size = type == BKP_T_DIR ? 0 : (uint64_t)sb->st_size;
	if (type == BKP_T_SYMLINK && !(e->target = strdup(target)))
		return aq_fail(b->msg, -ENOMEM, "out of memory");
	if (type == BKP_T_LINK)
		e->link = (uint32_t)seen;
	if ((type == BKP_T_DIR || type == BKP_T_REG) && (rc = bk_xattrs(b, dirfd, name, e)) != 0)
		return rc;
	b->st.files += type == BKP_T_REG;
	b->st.dirs += type == BKP_T_DIR;
	b->st.symlinks += type == BKP_T_SYMLINK;
	b->st.hardlinks += type == BKP_T_LINK;
	if (type == BKP_T_REG)
		b->total += e->size;
	return 0;
}

/* Entries for what folder dirfd (at path) holds, sorted by name, each folder
 * followed by its own content. Takes dirfd. */
static int bk_walk(struct bk *b, int dfd, const char *path)
{
	DIR *d = NULL;
	struct dirent *de;
	char **names = NULL, child[BKP_PATH_MAX + 258];
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!(d = fdopendir(dfd))) {
		rc = aq_fail(b->msg, -errno, "open folder /%s: %s", path, strerror(errno));
		close(dfd);
		goto out;
	}
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			void *p = realloc(names, (cap = cap ? 2 * cap : 32) * sizeof *names);
			if (!p) {
				rc = aq_fail(b->msg, -ENOMEM, "out of memory");
				goto out;
			}
			names = p;
		}
		if (!(names[n] = strdup(de->d_name))) {
			rc = aq_fail(b->msg, -ENOMEM, "out of memory");
			goto out;
		}
		n++;
	}
	if (errno) {
		rc = aq_fail(b->msg, -errno, "read folder /%s: %s", path, strerror(errno));
		goto out;
	}
	if (n > 1)
		qsort(names, n, sizeof *names, name_cmp);
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct stat sb;

		snprintf(child, sizeof child, "%s%s%s", path, path[0] ? "/" : "", names[i]);
		if (fstatat(dfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = aq_fail(b->msg, -errno, "stat /%s: %s", child, strerror(errno));
			break;
		}
		if ((rc = bk_entry(b, dfd, names[i], child, &sb)) != 0 || !S_ISDIR(sb.st_mode))
			continue;
		int fd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
		if (fd < 0 && errno == EPERM)
			fd = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			rc = aq_fail(b->msg, -errno, "open folder /%s: %s", child, strerror(errno));
		else
			rc = bk_walk(b, fd, child);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (d)
		closedir(d);
	return rc;
}

/* ---- the previous manifest, by path ---- */

static int prev_cmp(const void *a, const void *b, void *arg)
{
	const struct bkp_mf *m = arg;

	return strcmp(m->ents[*(const size_t *)a].path, m->ents[*(const size_t *)b].path);
}

static const struct bkp_ent *bk_prev(const struct bk *b, const char *path)
{
	size_t lo = 0, hi = b->prev.n;

	while (b->prev_sorted && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bkp_ent *p = &b->prev.ents[b->prev_sorted[mid]];
		int c = strcmp(p->path, path);

		if (c == 0)
			return p;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Whether e can take p's chunks without being read. */
static bool bk_same(const struct bk *b, const struct bkp_ent *e, const struct bkp_ent *p)
{
	if (!p || p->type != BKP_T_REG || b->o->ident == BKP_IDENT_NONE || b->prev.chunk_size != b->cs ||
	    p->size != e->size || p->mtime_ns != e->mtime_ns)
		return false;
	if (b->o->ident == BKP_IDENT_STRICT && (p->ino != e->ino || p->ctime_ns != e->ctime_ns))
		return false;
	for (uint32_t i = 0; i < p->nchunks; i++) /* and every chunk is still there */
		if (!p->chunks[i].zero && !bkp_set_has(&b->have, p->chunks[i].id))
			return false;
	return true;
}

static void bk_progress(struct bk *b)
{
	if (b->o->progress)
		b->o->progress(b->o->progress_arg, b->done, b->total);
}

static int bk_chunk(struct bk *b, struct bkp_cref *c, size_t len)
{
	char key[BKP_CHUNK_KEY_LEN + 1];
	uint8_t *out;
	int rc;

	if (b->buf[0] == 0 && (len == 1 || memcmp(b->buf, b->buf + 1, len - 1) == 0)) {
		c->zero = true;
		b->st.chunks_zero++;
		return 0;
	}
	b->st.chunks++;
	if ((rc = bkp_chunk_id(&b->v->keys, b->buf, len, c->id)) != 0)
		return aq_fail(b->msg, rc, "cannot name a chunk");
	if (bkp_set_has(&b->have, c->id))
		return 0;
	bkp_chunk_key(c->id, key);
	if (!(out = bkp_pool_slot(&b->pool, &rc)))
		return aq_fail(b->msg, rc, "cannot store a chunk: %s (%s)", obj_strerror(rc), b->pool.errtext);
	if ((rc = bkp_seal(b->v->keys.chunk, key, b->buf, len, out)) != 0) {
		bkp_pool_submit(&b->pool, out, NULL, 0);
		return aq_fail(b->msg, rc, "cannot seal a chunk");
	}
	bkp_pool_submit(&b->pool, out, key, len + BKP_SEAL_OVERHEAD);
	b->st.bytes_uploaded += len + BKP_SEAL_OVERHEAD;
	b->st.chunks_new++;
	if (bkp_set_add(&b->have, c->id) != 0)
		return aq_fail(b->msg, -ENOMEM, "out of memory");
	return 0;
}

static int bk_file(struct bk *b, struct bkp_ent *e)
{
	const struct bkp_ent *p = bk_prev(b, e->path);
	struct stat sb;
	int fd = -1, rc = 0;

	if (bk_same(b, e, p)) {
		if (p->nchunks && !(e->chunks = malloc(p->nchunks * sizeof *e->chunks)))
			return aq_fail(b->msg, -ENOMEM, "out of memory");
		if (p->nchunks)
			memcpy(e->chunks, p->chunks, p->nchunks * sizeof *e->chunks);
		e->nchunks = p->nchunks;
		for (uint32_t i = 0; i < e->nchunks; i++) {
			b->st.chunks += !e->chunks[i].zero;
			b->st.chunks_zero += e->chunks[i].zero;
		}
		b->st.files_unchanged++;
		b->done += e->size;
		return 0;
	}
	e->nchunks = (uint32_t)(e->size / b->cs + (e->size % b->cs ? 1 : 0));
	if ((uint64_t)e->nchunks * b->cs < e->size)
		return aq_fail(b->msg, -EFBIG, "/%s is too large", e->path);
	if (e->nchunks && !(e->chunks = calloc(e->nchunks, sizeof *e->chunks)))
		return aq_fail(b->msg, -ENOMEM, "out of memory");
	fd = openat(b->rootfd, e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(b->rootfd, e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return aq_fail(b->msg, -errno, "open /%s: %s", e->path, strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != e->size ||
	    ts_ns(&sb.st_mtim) != e->mtime_ns) {
		rc = aq_fail(b->msg, -ESTALE, "/%s changed while it was backed up (not a snapshot?)", e->path);
		goto out;
	}
	for (uint32_t i = 0; i < e->nchunks && rc == 0; i++) {
		uint64_t off = (uint64_t)i * b->cs;
		size_t len = (size_t)(e->size - off < b->cs ? e->size - off : b->cs), got = 0;

		while (got < len) {
			ssize_t r = b->o->read ? b->o->read(b->o->read_arg, fd, e->path, b->buf + got, len - got, off + got)
					       : pread(fd, b->buf + got, len - got, (off_t)(off + got));
			if (r < 0 && !b->o->read) /* the hook returns -errno */
				r = errno == EINTR ? -EINTR : -errno;
			if (r == -EINTR)
				continue;
			if (r <= 0) {
				rc = r < 0 ? aq_fail(b->msg, (int)r, "read /%s: %s", e->path, strerror((int)-r))
					   : aq_fail(b->msg, -ESTALE, "/%s shrank while it was backed up", e->path);
				goto out;
			}
			got += (size_t)r;
		}
		b->st.bytes_read += len;
		if ((rc = bk_chunk(b, &e->chunks[i], len)) != 0)
			goto out;
		b->done += len;
		bk_progress(b);
		if (time(NULL) - b->refreshed > (time_t)b->stale / 3) {
			b->refreshed = time(NULL);
			bkp_lock_refresh(b->v, b->lock); /* a failure shows at the next put */
		}
	}
out:
	close(fd);
	return rc;
}

static void bk_cleanup(struct bk *b)
{
	if (b->rootfd >= 0)
		close(b->rootfd);
	bkp_mf_cleanup(&b->m);
	bkp_mf_cleanup(&b->prev);
	free(b->prev_sorted);
	bkp_set_cleanup(&b->have);
	free(b->inos);
	bkp_pool_finish(&b->pool);
	free(b->buf);
}

int bkp_backup(struct bkp_vault *v, const char *id, const char *src, const struct bkp_opts *o,
	       struct bkp_stats *st, aq_msg *msg)
{
	static const struct bkp_opts none;
	struct bk b = { .v = v, .o = o ? o : &none, .rootfd = -1, .msg = msg };
	char key[8 + BKP_ID_MAX];
	uint64_t size, put = 0;
	struct stat sb;
	struct bkp_ent *root;
	int rc;

	bkp_mf_init(&b.m);
	bkp_mf_init(&b.prev);
	bkp_set_init(&b.have);
	b.cs = b.o->chunk_size ? b.o->chunk_size : BKP_CHUNK_DEFAULT;
	memset(&b.pool, 0, sizeof b.pool);
	b.stale = b.o->lock_stale_sec ? b.o->lock_stale_sec : BKP_LOCK_STALE_DEFAULT;
	if (bkp_id_check(id) != 0 || (b.o->prev_id && bkp_id_check(b.o->prev_id) != 0))
		return aq_fail(msg, -EINVAL, "bad backup id");
	if (b.cs < BKP_CHUNK_MIN || b.cs > BKP_CHUNK_MAX || (b.o->source && strlen(b.o->source) >= sizeof b.m.source))
		return aq_fail(msg, -EINVAL, "chunk size or source label out of range");
	snprintf(key, sizeof key, "m/%s", id);
	if ((rc = obj_head(v->store, key, &size)) != -ENOENT)
		return rc == 0 ? aq_fail(msg, -EEXIST, "backup %s exists already", id)
			       : aq_fail(msg, rc, "cannot reach the vault: %s", obj_strerror(rc));
	/* O_NOATIME (owner or CAP_FOWNER): reading the source changes nothing in it */
	if ((b.rootfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOATIME)) < 0 && errno == EPERM)
		b.rootfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b.rootfd < 0 || fstat(b.rootfd, &sb) != 0) {
		rc = aq_fail(msg, -errno, "source %s: %s", src, strerror(errno));
		goto out;
	}
	if (!(b.buf = malloc(b.cs))) {
		rc = aq_fail(msg, -ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = bkp_pool_start(&b.pool, v, b.o->parallel ? b.o->parallel : BKP_PARALLEL_DEFAULT,
				 b.cs + BKP_SEAL_OVERHEAD)) != 0) {
		aq_fail(msg, rc, "cannot start the upload workers (parallel 1..%d)", BKP_PARALLEL_MAX);
		goto out;
	}
	if ((rc = bkp_lock_acquire(v, "backup", id, b.stale, b.lock, sizeof b.lock, NULL, msg)) != 0) {
		b.lock[0] = '\0';
		goto out;
	}
	b.refreshed = time(NULL);
	if (b.o->prev_id) {
		if ((rc = bkp_mf_load(v, b.o->prev_id, &b.prev, msg)) != 0)
			goto out;
		if (!(b.prev_sorted = malloc(b.prev.n * sizeof *b.prev_sorted))) {
			rc = aq_fail(msg, -ENOMEM, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < b.prev.n; i++)
			b.prev_sorted[i] = i;
		if (b.prev.n > 1)
			qsort_r(b.prev_sorted, b.prev.n, sizeof *b.prev_sorted, prev_cmp, &b.prev);
	}
	if ((rc = bkp_set_load(v, &b.have, msg)) != 0)
		goto out;
	/* pass 1: the tree */
	if (!(root = bkp_mf_add(&b.m, BKP_T_DIR, ""))) {
		rc = aq_fail(msg, -ENOMEM, "out of memory");
		goto out;
	}
	*root = (struct bkp_ent){ .type = BKP_T_DIR, .path = root->path, .mode = sb.st_mode & 07777,
				  .uid = sb.st_uid, .gid = sb.st_gid, .atime_ns = ts_ns(&sb.st_atim),
				  .mtime_ns = ts_ns(&sb.st_mtim), .ctime_ns = ts_ns(&sb.st_ctim),
				  .ino = (uint64_t)sb.st_ino };
	b.st.dirs = 1;
	if ((rc = bk_xattrs(&b, b.rootfd, NULL, root)) != 0)
		goto out;
	int fd = dup(b.rootfd);
	if (fd < 0 || (rc = bk_walk(&b, fd, "")) != 0) {
		rc = fd < 0 ? aq_fail(msg, -errno, "dup: %s", strerror(errno)) : rc;
		goto out;
	}
	bk_progress(&b);
	/* pass 2: the data */
	for (size_t i = 0; i < b.m.n && rc == 0; i++)
		if (b.m.ents[i].type == BKP_T_REG)
			rc = bk_file(&b, &b.m.ents[i]);
	/* every chunk durable before the manifest */
	if (rc == 0 && (rc = bkp_pool_drain(&b.pool)) != 0)
		aq_fail(msg, rc, "cannot store a chunk: %s (%s)", obj_strerror(rc), b.pool.errtext);
	if (rc != 0)
		goto out;
	b.st.logical_bytes = b.total;
	/* last: the manifest; the backup exists from here on */
	b.m.chunk_size = b.cs;
	b.m.create_unix_ns = ut_clock_real_ns();
	b.m.stats = b.st;
	snprintf(b.m.source, sizeof b.m.source, "%s", b.o->source ? b.o->source : "");
	snprintf(b.m.prev_id, sizeof b.m.prev_id, "%s", b.o->prev_id ? b.o->prev_id : "");
	if ((rc = bkp_mf_store(v, id, &b.m, &put, msg)) != 0)
		goto out;
	b.st.bytes_uploaded += put;
	b.st.manifest_bytes = put;
	bk_progress(&b);
	if (st)
		*st = b.st;
out:
	if (b.lock[0])
		bkp_lock_release(v, b.lock);
	bk_cleanup(&b);
	return rc;
}
