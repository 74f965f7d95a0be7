/* obj_dir: the directory backend of obj.h. A key "a/b/c" is the file
 * <root>/a/b/c. Keys are checked by obj.c, so no path ever leaves the root;
 * every component is opened relative to the root with O_NOFOLLOW as well, so
 * a symlink planted inside the root is not followed either.
 *
 * A put writes "~tmp.<pid>.<n>" next to its target, fsyncs it, renames it
 * over the target and fsyncs the folder (and every folder it had to create),
 * so an acknowledged put survives a crash and an interrupted one never shows:
 * '~' is not in the key alphabet, so get/head can never name a temp file and
 * list skips them (and removes those older than DIR_TMP_STALE_S, left by a
 * crash). Delete removes folders it empties; a put racing with that retries.
 * One file system limit: "a" and "a/b" cannot both exist (put is -EIO).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/obj/obj_be.h"
#include "util/ut_file.h"

#define DIR_TMP_STALE_S 3600
#define DIR_PUT_TRIES 4

struct dir_be {
	int root;            /* O_DIRECTORY fd of the root */
	_Atomic unsigned long seq;
};

static struct dir_be *be_of(struct obj_store *s)
{
	return s->be;
}

static int map_errno(int e)
{
	switch (e) {
	case ENOENT: return -ENOENT;
	case EACCES: case EPERM: return -EACCES;
	case ENAMETOOLONG: return -EINVAL;
	case ENOMEM: return -ENOMEM;
	default: return -EIO;
	}
}

/* mkdir -p of an absolute path. */
static int mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof buf)
		return -EINVAL;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return map_errno(errno);
		buf[i] = c;
	}
	return 0;
}

static int dir_open(struct obj_store *s)
{
	struct dir_be *d;
	int rc;

	if ((rc = mkdir_p(s->cfg.path)) != 0)
		return rc;
	if (!(d = calloc(1, sizeof *d)))
		return -ENOMEM;
	d->root = open(s->cfg.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->root < 0) {
		rc = map_errno(errno);
		free(d);
		return rc;
	}
	s->be = d;
	return 0;
}

static void dir_close(struct obj_store *s)
{
	struct dir_be *d = be_of(s);

	close(d->root);
	free(d);
}

static void close_dir(struct dir_be *d, int fd)
{
	if (fd >= 0 && fd != d->root)
		close(fd);
}

/* Opens the folder holding the last component of the first `len` bytes of
 * path (relative to the root), creating missing folders when `create`.
 * *dfd is the root itself or a new fd (release with close_dir). */
static int walk(struct dir_be *d, const char *path, size_t len, int create, int *dfd)
{
	char comp[256];
	int fd = d->root;
	size_t start = 0;

	*dfd = -1;
	for (size_t i = 0; i < len; i++) {
		if (path[i] != '/')
			continue;
		size_t clen = i - start;
		if (clen >= sizeof comp) {
			close_dir(d, fd);
			return -EINVAL;
		}
		memcpy(comp, path + start, clen);
		comp[clen] = '\0';
		int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) != 0 && errno != EEXIST) {
				int rc = map_errno(errno);
				close_dir(d, fd);
				return rc;
			}
			/* The new folder's name must be durable before the object is. */
			if (fsync(fd) != 0) {
				close_dir(d, fd);
				return -EIO;
			}
			nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int rc = errno == ENOTDIR || errno == ELOOP ? -ENOENT : map_errno(errno);
			close_dir(d, fd);
			return rc;
		}
		close_dir(d, fd);
		fd = nfd;
		start = i + 1;
	}
	*dfd = fd;
	return 0;
}

static const char *leaf_of(const char *key)
{
	const char *p = strrchr(key, '/');
	return p ? p + 1 : key;
}

/* One attempt; -ENOENT when a concurrent delete removed a folder under us. */
static int put_once(struct dir_be *d, const char *key, const void *buf, size_t len)
{
	char tmp[64];
	int dfd = -1, fd = -1, rc;
	const char *leaf = leaf_of(key);

	if ((rc = walk(d, key, strlen(key), 1, &dfd)) != 0)
		return rc == -ENOENT ? -EIO : rc;  /* a file where a folder should be */
	snprintf(tmp, sizeof tmp, "~tmp.%ld.%lu", (long)getpid(), atomic_fetch_add(&d->seq, 1));
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = map_errno(errno);
		goto out;
	}
	if (ut_file_write_all(fd, buf, len) != 0) {
		rc = -EIO;
		goto out;
	}
	if (fsync(fd) != 0) {
		rc = -EIO;
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = -EIO;
		goto out;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, leaf) != 0) {
		rc = errno == EISDIR || errno == ENOTEMPTY ? -EIO : map_errno(errno);
		goto out;
	}
	tmp[0] = '\0';
	if (fsync(dfd) != 0)
		rc = -EIO;
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0] && dfd >= 0)
		unlinkat(dfd, tmp, 0);
	close_dir(d, dfd);
	return rc;
}

static int dir_put(struct obj_store *s, const char *key, const void *buf, size_t len)
{
	int rc = -EIO;

	for (int i = 0; i < DIR_PUT_TRIES; i++)
		if ((rc = put_once(be_of(s), key, buf, len)) != -ENOENT)
			break;
	if (rc == -ENOENT)
		rc = -EIO;
	if (rc == 0)
		atomic_fetch_add(&s->put_bytes, len);
	else
		obj_be_error(s, "put %s: %s", key, strerror(-rc));
	return rc;
}

/* Opens the object's file read-only; -ENOENT unless it is a regular file. */
static int open_obj(struct dir_be *d, const char *key, int *out, uint64_t *size)
{
	struct stat st;
	int dfd, fd, rc;

	*out = -1;
	if ((rc = walk(d, key, strlen(key), 0, &dfd)) != 0)
		return rc;
	fd = openat(dfd, leaf_of(key), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	rc = fd < 0 ? (errno == ELOOP ? -ENOENT : map_errno(errno)) : 0;
	close_dir(d, dfd);
	if (rc != 0)
		return rc;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	*out = fd;
	*size = (uint64_t)st.st_size;
	return 0;
}

static int dir_get(struct obj_store *s, const char *key, uint64_t off, void *buf, size_t len, size_t *got)
{
	uint64_t size;
	size_t done = 0;
	int fd, rc;

	*got = 0;
	if ((rc = open_obj(be_of(s), key, &fd, &size)) != 0) {
		if (rc != -ENOENT)
			obj_be_error(s, "get %s: %s", key, strerror(-rc));
		return rc;
	}
	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -EIO;
			break;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	close(fd);
	if (rc == 0) {
		*got = done;
		atomic_fetch_add(&s->get_bytes, done);
	} else {
		obj_be_error(s, "get %s: %s", key, strerror(-rc));
	}
	return rc;
}

static int dir_get_many(struct obj_store *s, struct obj_range *r, size_t n, unsigned parallel)
{
	for (size_t i = 0; i < n; i++)
		r[i].rc = dir_get(s, r[i].key, r[i].off, r[i].buf, r[i].len, &r[i].got);
	return 0;
}

static int dir_head(struct obj_store *s, const char *key, uint64_t *size)
{
	int fd, rc;

	if ((rc = open_obj(be_of(s), key, &fd, size)) == 0)
		close(fd);
	return rc;
}

static int dir_delete(struct obj_store *s, const char *key)
{
	struct dir_be *d = be_of(s);
	int dfd, rc;
	size_t n;

	if ((rc = walk(d, key, strlen(key), 0, &dfd)) != 0)
		return rc == -ENOENT ? 0 : rc;
	if (unlinkat(dfd, leaf_of(key), 0) != 0)
		rc = errno == ENOENT || errno == EISDIR ? 0 : map_errno(errno);
	else if (fsync(dfd) != 0)
		rc = -EIO;
	close_dir(d, dfd);
	if (rc != 0) {
		obj_be_error(s, "delete %s: %s", key, strerror(-rc));
		return rc;
	}
	/* Remove the folders this emptied, deepest first; a non-empty one stops. */
	char path[OBJ_KEY_MAX + 1];
	snprintf(path, sizeof path, "%s", key);
	while ((n = (size_t)(strrchr(path, '/') ? strrchr(path, '/') - path : 0)) > 0) {
		path[n] = '\0';
		if (unlinkat(d->root, path, AT_REMOVEDIR) != 0)
			break;
	}
	return 0;
}

struct list_ctx {
	struct dir_be *d;
	obj_list_cb cb;
	void *arg;
	const char *leaf_prefix;  /* filter on the first level only */
	size_t leaf_len;
	char key[OBJ_KEY_MAX + 2];
};

/* Lists the folder fd whose key prefix is ctx->key[0..klen). Takes fd. */
static int list_dir(struct list_ctx *c, int fd, size_t klen, int top)
{
	DIR *dir = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!dir) {
		close(fd);
		return map_errno(errno);
	}
	while (rc == 0 && (errno = 0, e = readdir(dir))) {
		const char *name = e->d_name;
		size_t nlen = strlen(name);
		struct stat st;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (top && strncmp(name, c->leaf_prefix, c->leaf_len) != 0)
			continue;
		if (fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;  /* removed meanwhile */
		if (strncmp(name, "~tmp.", 5) == 0) {
			if (S_ISREG(st.st_mode) && st.st_mtime + DIR_TMP_STALE_S < time(NULL))
				unlinkat(dirfd(dir), name, 0);
			continue;
		}
		if (klen + nlen + 1 > OBJ_KEY_MAX)
			continue;
		memcpy(c->key + klen, name, nlen + 1);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(dir), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue;
			c->key[klen + nlen] = '/';
			c->key[klen + nlen + 1] = '\0';
			rc = list_dir(c, sub, klen + nlen + 1, 0);
		} else if (S_ISREG(st.st_mode) && obj_key_check(c->key) == 0) {
			rc = c->cb(c->arg, c->key, (uint64_t)st.st_size);
		}
	}
	if (rc == 0 && errno != 0)
		rc = -EIO;
	closedir(dir);
	return rc;
}

static int dir_list(struct obj_store *s, const char *prefix, obj_list_cb cb, void *arg)
{
	struct list_ctx *c = calloc(1, sizeof *c);
	const char *slash = strrchr(prefix, '/');
	size_t dlen = slash ? (size_t)(slash - prefix) + 1 : 0;
	int dfd, fd, rc;

	if (!c)
		return -ENOMEM;
	c->d = be_of(s);
	c->cb = cb;
	c->arg = arg;
	c->leaf_prefix = prefix + dlen;
	c->leaf_len = strlen(prefix + dlen);
	memcpy(c->key, prefix, dlen);
	c->key[dlen] = '\0';
	/* walk() opens the folder of the last component: give it "a/b/x". */
	if ((rc = walk(c->d, prefix, dlen, 0, &dfd)) != 0) {
		rc = rc == -ENOENT ? 0 : rc;
		goto out;
	}
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close_dir(c->d, dfd);
	if (fd < 0) {
		rc = map_errno(errno);
		goto out;
	}
	rc = list_dir(c, fd, dlen, 1);
out:
	if (rc < 0)
		obj_be_error(s, "list %s: %s", prefix, strerror(-rc));
	free(c);
	return rc;
}

static int dir_ensure_bucket(struct obj_store *s)
{
	return 0;
}

const struct obj_ops obj_dir_ops = {
	.open = dir_open,
	.close = dir_close,
	.ensure_bucket = dir_ensure_bucket,
	.put = dir_put,
	.get = dir_get,
	.get_many = dir_get_many,
	.head = dir_head,
	.del = dir_delete,
	.list = dir_list,
};
