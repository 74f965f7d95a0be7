/* bkp_tree: the generated tree and the tree listing of test_bkp and
 * bkp_tool (see bkp_tree.h). */
#define _GNU_SOURCE
#include "tests/agent/bkp/bkp_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "agent/vol/vol.h"
#include "util/ut_buf.h"
#include "util/ut_hex.h"

void bt_fill(uint8_t *buf, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 24);
	}
}

int bt_write(const char *path, uint64_t off, size_t n, uint64_t seed)
{
	uint8_t *b = malloc(n ? n : 1);
	int fd = open(path, O_WRONLY | O_CREAT, 0644), rc = -1;

	if (b && fd >= 0) {
		bt_fill(b, n, seed);
		rc = pwrite(fd, b, n, (off_t)off) == (ssize_t)n ? 0 : -1;
	}
	if (fd >= 0)
		close(fd);
	free(b);
	return rc;
}

static void bt_attr(const char *root, const char *rel, unsigned mode, unsigned uid, long sec)
{
	char p[4096];
	struct timespec ts[2] = { { sec, 123456789 }, { sec + 1000, 987654321 } };
	struct stat sb;

	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (geteuid() == 0 && lchown(p, uid, uid + 1) != 0)
		perror(p);
	if (lstat(p, &sb) == 0 && !S_ISLNK(sb.st_mode) && chmod(p, mode) != 0)
		perror(p);
	if (utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) != 0)
		perror(p);
}

uint64_t bt_gen(const char *root, uint32_t cs)
{
	static const char *dirs[] = { "a", "a/b", "a/b/c", "empty", "f" };
	char p[4096];
	uint64_t total = 0;

	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		mkdir(p, 0755);
	}
#define W(rel, off, n, seed) (snprintf(p, sizeof p, "%s/%s", root, rel), bt_write(p, off, n, seed), total += (n))
	W("e0", 0, 0, 1);
	W("a/s1", 0, 100, 2);
	W("a/b/m", 0, cs, 3);
	W("big", 0, 5 * (size_t)cs + 123, 4);
	for (int i = 0; i < 40; i++) {
		char rel[64];
		snprintf(rel, sizeof rel, "f/f%02d", i);
		W(rel, 0, 1000 + 97 * (size_t)i, 100 + (uint64_t)i);
	}
	/* sparse: data, a whole zero chunk (a hole), data */
	snprintf(p, sizeof p, "%s/a/b/c/sparse", root);
	bt_write(p, 0, cs, 5);
	bt_write(p, 2 * (uint64_t)cs, 1000, 6);
	total += 2 * (uint64_t)cs + 1000;
#undef W
	snprintf(p, sizeof p, "%s/a/link", root);
	if (symlink("../big", p) != 0)
		perror(p);
	snprintf(p, sizeof p, "%s/dangle", root);
	if (symlink("/nonexistent/target", p) != 0)
		perror(p);
	{
		char q[4096];
		snprintf(p, sizeof p, "%s/big", root);
		snprintf(q, sizeof q, "%s/a/b/hl", root);
		if (link(p, q) != 0)
			perror(q);
	}
	/* what the SMB server keeps in trusted.* (root only): an EA list on a
	 * file and a folder, a security descriptor on a file, DOS attributes on a file (with a hard link) and a
	 * folder; set before the times, which they would not change anyway */
	if (geteuid() == 0) {
		static const struct {
			const char *rel, *name, *value;
		} xa[] = { { "a/s1", VOL_EA_ATTR, "\0\0\0\0\0\4\5\0EANAMEvalue" },
			   { "a/b", VOL_EA_ATTR, "\0\0\0\0\x80\3\1\0DIRx" },
			   { "a/s1", VOL_SD_ATTR, "\1\0\4\x80\0\0\0\0SDbytes" },
			   { "big", VOL_DOS_ATTR, "\0\0\0\0\0\0\0\x23" },
			   { "empty", VOL_DOS_ATTR, "\0\0\0\0\0\0\0\x12" } };

		for (size_t i = 0; i < sizeof xa / sizeof *xa; i++) {
			snprintf(p, sizeof p, "%s/%s", root, xa[i].rel);
			if (setxattr(p, xa[i].name, xa[i].value, 8 + strlen(xa[i].value + 8), 0) != 0)
				perror(p);
		}
	}
	bt_attr(root, "e0", 0600, 1001, 1600000000);
	bt_attr(root, "a/s1", 0640, 1002, 1600000100);
	bt_attr(root, "a/b/m", 04755, 0, 1600000200);
	bt_attr(root, "big", 0444, 1003, 1600000300);
	bt_attr(root, "a/b/c/sparse", 0600, 1004, 1600000400);
	bt_attr(root, "a/link", 0777, 1005, 1600000500);
	bt_attr(root, "dangle", 0777, 1006, 1600000600);
	for (int i = 0; i < 40; i++) {
		char rel[64];
		snprintf(rel, sizeof rel, "f/f%02d", i);
		bt_attr(root, rel, 0644, 2000 + (unsigned)i, 1600001000 + i);
	}
	bt_attr(root, "a/b/c", 0700, 1007, 1600000700);
	bt_attr(root, "a/b", 0750, 1008, 1600000800);
	bt_attr(root, "a", 0755, 1009, 1600000900);
	bt_attr(root, "empty", 02770, 1010, 1600001100);
	bt_attr(root, "f", 0711, 1011, 1600001200);
	bt_attr(root, ".", 0755, 1012, 1600001300);
	return total;
}

/* ---- listing ---- */

/* " xa=NAME:HEX..." into out for the xattrs a backup carries of name in
 * dirfd (values of the test tree: short). */
static void bt_xattrs(char *out, size_t cap, int dirfd, const char *name)
{
	static const char *const names[] = { VOL_DOS_ATTR, VOL_EA_ATTR, VOL_SD_ATTR };
	char p[4200];
	uint8_t v[256];
	size_t at = 0;

	out[0] = '\0';
	snprintf(p, sizeof p, "/proc/self/fd/%d/%s", dirfd, name);
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		ssize_t n = lgetxattr(p, names[i], v, sizeof v);

		if (n <= 0 || at + strlen(names[i]) + 6 + 2 * (size_t)n >= cap)
			continue;
		at += (size_t)snprintf(out + at, cap - at, " xa=%s:", names[i]);
		for (ssize_t k = 0; k < n; k++)
			at += (size_t)snprintf(out + at, cap - at, "%02x", v[k]);
	}
}

struct bt_ls {
	struct ut_buf out;
	uint64_t inos[256];
	size_t ninos;
};

static int bt_sha(int dirfd, const char *name, char hex[65])
{
	uint8_t buf[65536], md[32];
	unsigned mdl = 0;
	ssize_t r;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOATIME);
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (fd < 0 || !c)
		return -1;
	EVP_DigestInit_ex(c, EVP_sha256(), NULL);
	while ((r = read(fd, buf, sizeof buf)) > 0)
		EVP_DigestUpdate(c, buf, (size_t)r);
	EVP_DigestFinal_ex(c, md, &mdl);
	EVP_MD_CTX_free(c);
	close(fd);
	ut_hex_encode(md, sizeof md, hex, 65);
	return r < 0 ? -1 : 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int bt_walk(struct bt_ls *l, int dirfd, const char *rel)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!(d = fdopendir(dirfd)))
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
			if (!p) {
				rc = -1;
				break;
			}
			names = p;
		}
		names[n++] = strdup(de->d_name);
	}
	if (n > 1)
		qsort(names, n, sizeof *names, name_cmp);
	for (size_t i = 0; i < n; i++) {
		struct stat sb;
		char child[4096], extra[4200] = "", xa[1200];

		snprintf(child, sizeof child, "%s/%s", rel, names[i]);
		if (fstatat(dirfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) != 0) {
			rc = -1;
			continue;
		}
		xa[0] = '\0';
		if (S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode))
			bt_xattrs(xa, sizeof xa, dirfd, names[i]);
		if (S_ISREG(sb.st_mode)) {
			char hex[65] = "";
			size_t g = 0;
			if (sb.st_nlink > 1) {
				while (g < l->ninos && l->inos[g] != sb.st_ino)
					g++;
				if (g == l->ninos && l->ninos < 256)
					l->inos[l->ninos++] = sb.st_ino;
			}
			bt_sha(dirfd, names[i], hex);
			snprintf(extra, sizeof extra, "size=%lld sha=%s links=%lu group=%zu", (long long)sb.st_size, hex,
				 (unsigned long)sb.st_nlink, sb.st_nlink > 1 ? g + 1 : 0);
		} else if (S_ISLNK(sb.st_mode)) {
			char t[4096];
			struct timespec ts[2] = { sb.st_atim, sb.st_mtim };
			ssize_t tl = readlinkat(dirfd, names[i], t, sizeof t - 1);
			t[tl < 0 ? 0 : tl] = '\0';
			/* readlink sets the atime (no O_NOATIME for it): put it back */
			utimensat(dirfd, names[i], ts, AT_SYMLINK_NOFOLLOW);
			snprintf(extra, sizeof extra, "-> %s", t);
		}
		ut_buf_addf(&l->out, "%s type=%o mode=%o uid=%u gid=%u atime=%lld.%09ld mtime=%lld.%09ld %s%s\n", child,
			    sb.st_mode & S_IFMT, sb.st_mode & 07777, sb.st_uid, sb.st_gid, (long long)sb.st_atim.tv_sec,
			    sb.st_atim.tv_nsec, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, extra, xa);
		if (S_ISDIR(sb.st_mode)) {
			int fd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOATIME);
			if (fd < 0 || bt_walk(l, fd, child) != 0)
				rc = -1;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

char *bt_list(const char *root)
{
	struct bt_ls l = { .ninos = 0 };
	struct stat sb;
	char xa[1200];
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOATIME);
	char *s = NULL;

	ut_buf_init(&l.out, 64u << 20);
	if (fd < 0 || fstat(fd, &sb) != 0) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	bt_xattrs(xa, sizeof xa, fd, ".");
	ut_buf_addf(&l.out, "/ mode=%o uid=%u gid=%u atime=%lld.%09ld mtime=%lld.%09ld%s\n", sb.st_mode & 07777,
		    sb.st_uid, sb.st_gid, (long long)sb.st_atim.tv_sec, sb.st_atim.tv_nsec,
		    (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, xa);
	if (bt_walk(&l, fd, "") == 0)
		s = ut_buf_steal(&l.out, NULL);
out:
	ut_buf_cleanup(&l.out);
	return s;
}

static int bt_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p) != 0 && errno != ENOENT ? 0 : 0;
}

void bt_rm(const char *path)
{
	nftw(path, bt_rm_cb, 32, FTW_DEPTH | FTW_PHYS);
}
