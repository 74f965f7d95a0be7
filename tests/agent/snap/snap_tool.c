/* snap_tool: data sets and their digests over NFS (libnfs), for the snapshot
 * suites (tests/agent/snap/, bench/snap/). Content is a function of (name,
 * block, seed), so a digest says exactly which generation each file holds.
 *
 *   snap_tool fill URL DIR N SIZE SEED [EVERY]
 *       make DIR (if missing) and write files f000000.. f<N-1> of SIZE bytes
 *       with content of SEED; with EVERY, only the files i % EVERY == 0
 *       (EVERY 2: half of them, rewritten in place)
 *   snap_tool big URL PATH MIB SEED [EVERY]
 *       write PATH as MIB 1 MiB blocks of SEED (EVERY: only blocks i % EVERY == 0)
 *   snap_tool sum URL PATH
 *       print "sha256 files bytes" over the tree at PATH (names sorted,
 *       each name, size and content): equal trees give equal lines
 * URL: nfs://HOST/EXPORT?nfsport=P&mountport=P (the export root). Exit 0 on
 * success, 1 on any NFS error (printed).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <inttypes.h>
#include <nfsc/libnfs.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BLOCK (1u << 20)

static struct nfs_context *nfs;

static int fail(const char *what, const char *path)
{
	fprintf(stderr, "snap_tool: %s %s: %s\n", what, path, nfs_get_error(nfs));
	return 1;
}

/* Bytes [off, off + len) of the content of name under seed. */
static void content(const char *name, uint64_t seed, uint64_t off, uint8_t *buf, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ seed;

	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	for (size_t i = 0; i < len; i++) {
		uint64_t x = h ^ ((off + i) / 8 * 0x9e3779b97f4a7c15ull);

		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ull;
		buf[i] = (uint8_t)(x >> (8 * ((off + i) % 8)));
	}
}

static int write_file(const char *path, const char *name, uint64_t size, uint64_t seed, unsigned every,
		      uint8_t *buf)
{
	struct nfsfh *fh;
	uint64_t off;
	unsigned blk = 0;

	if (nfs_open(nfs, path, O_WRONLY, &fh) != 0 && nfs_creat(nfs, path, 0644, &fh) != 0)
		return fail("create", path);
	for (off = 0; off < size; off += BLOCK, blk++) {
		size_t n = size - off < BLOCK ? (size_t)(size - off) : BLOCK;

		if (every > 1 && blk % every != 0)
			continue;
		content(name, seed, off, buf, n);
		if (nfs_pwrite(nfs, fh, off, n, buf) != (int)n) {
			nfs_close(nfs, fh);
			return fail("write", path);
		}
	}
	if (nfs_fsync(nfs, fh) != 0) {
		nfs_close(nfs, fh);
		return fail("commit", path);
	}
	nfs_close(nfs, fh);
	return 0;
}

static int cmd_fill(const char *dir, unsigned n, uint64_t size, uint64_t seed, unsigned every)
{
	uint8_t *buf = malloc(BLOCK);
	char path[4096], name[32];
	int rc = 0;

	if (!buf)
		return 1;
	if (nfs_mkdir(nfs, dir) != 0 && !strstr(nfs_get_error(nfs), "EXIST"))
		rc = fail("mkdir", dir);
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		if (every > 1 && i % every != 0)
			continue;
		snprintf(name, sizeof(name), "f%06u", i);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		rc = write_file(path, name, size, seed, 1, buf);
	}
	free(buf);
	return rc;
}

static int cmd_big(const char *path, uint64_t mib, uint64_t seed, unsigned every)
{
	uint8_t *buf = malloc(BLOCK);
	const char *name = strrchr(path, '/');
	int rc;

	if (!buf)
		return 1;
	rc = write_file(path, name ? name + 1 : path, mib << 20, seed, every, buf);
	free(buf);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct sum {
	EVP_MD_CTX *md;
	uint64_t files, bytes;
	uint8_t *buf;
};

static int sum_tree(struct sum *s, const char *path, const char *name, int depth)
{
	struct nfs_stat_64 st;
	char line[600];
	int rc = 0;

	if (nfs_lstat64(nfs, path, &st) != 0)
		return fail("stat", path);
	snprintf(line, sizeof(line), "%s %o %" PRIu64 "\n", name, (unsigned)(st.nfs_mode & 0170777),
		 S_ISDIR(st.nfs_mode) ? 0 : (uint64_t)st.nfs_size);
	EVP_DigestUpdate(s->md, line, strlen(line));
	if (S_ISREG(st.nfs_mode)) {
		struct nfsfh *fh;
		uint64_t off = 0;

		if (nfs_open(nfs, path, O_RDONLY, &fh) != 0)
			return fail("open", path);
		while (off < st.nfs_size) {
			int k = nfs_pread(nfs, fh, off, BLOCK, s->buf);

			if (k <= 0) {
				nfs_close(nfs, fh);
				return fail("read", path);
			}
			EVP_DigestUpdate(s->md, s->buf, (size_t)k);
			off += (uint64_t)k;
		}
		nfs_close(nfs, fh);
		s->files++;
		s->bytes += st.nfs_size;
	} else if (S_ISDIR(st.nfs_mode) && depth < 64) {
		struct nfsdir *d;
		struct nfsdirent *de;
		char **names = NULL;
		size_t n = 0, cap = 0;

		if (nfs_opendir(nfs, path, &d) != 0)
			return fail("opendir", path);
		while ((de = nfs_readdir(nfs, d)) != NULL) {
			if (!strcmp(de->name, ".") || !strcmp(de->name, ".."))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				names = realloc(names, cap * sizeof(*names));
			}
			names[n++] = strdup(de->name);
		}
		nfs_closedir(nfs, d);
		qsort(names, n, sizeof(*names), by_name);
		for (size_t i = 0; i < n; i++) {
			char sub[4096];

			snprintf(sub, sizeof(sub), "%s/%s", strcmp(path, "/") ? path : "", names[i]);
			if (rc == 0)
				rc = sum_tree(s, sub, names[i], depth + 1);
			free(names[i]);
		}
		free(names);
	}
	return rc;
}

static int cmd_sum(const char *path)
{
	struct sum s = {.md = EVP_MD_CTX_new(), .buf = malloc(BLOCK)};
	uint8_t dig[32];
	unsigned len = 0;
	int rc;

	EVP_DigestInit_ex(s.md, EVP_sha256(), NULL);
	rc = sum_tree(&s, path, "", 0);
	EVP_DigestFinal_ex(s.md, dig, &len);
	if (rc == 0) {
		for (unsigned i = 0; i < len; i++)
			printf("%02x", dig[i]);
		printf(" %" PRIu64 " %" PRIu64 "\n", s.files, s.bytes);
	}
	EVP_MD_CTX_free(s.md);
	free(s.buf);
	return rc;
}

int main(int argc, char **argv)
{
	struct nfs_url *url;
	int rc = 2;

	if (argc < 4) {
		fprintf(stderr, "usage: snap_tool fill URL DIR N SIZE SEED [EVERY]\n"
				"       snap_tool big URL PATH MIB SEED [EVERY]\n"
				"       snap_tool sum URL PATH\n");
		return 2;
	}
	if (!(nfs = nfs_init_context()) || !(url = nfs_parse_url_dir(nfs, argv[2])) ||
	    nfs_mount(nfs, url->server, url->path) != 0) {
		fprintf(stderr, "snap_tool: mount %s: %s\n", argv[2], nfs ? nfs_get_error(nfs) : "no memory");
		return 1;
	}
	if (!strcmp(argv[1], "fill") && argc >= 7)
		rc = cmd_fill(argv[3], (unsigned)strtoul(argv[4], NULL, 10), strtoull(argv[5], NULL, 10),
			      strtoull(argv[6], NULL, 10), argc > 7 ? (unsigned)strtoul(argv[7], NULL, 10) : 1);
	else if (!strcmp(argv[1], "big") && argc >= 6)
		rc = cmd_big(argv[3], strtoull(argv[4], NULL, 10), strtoull(argv[5], NULL, 10),
			     argc > 6 ? (unsigned)strtoul(argv[6], NULL, 10) : 1);
	else if (!strcmp(argv[1], "sum"))
		rc = cmd_sum(argv[3]);
	nfs_destroy_url(url);
	nfs_destroy_context(nfs);
	return rc;
}
