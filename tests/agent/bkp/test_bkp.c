/* test_bkp: the backup engine (agent/bkp/) end to end over an object store:
 * a directory store in a temp folder, or S3 when AQ_BKP_S3 names an
 * endpoint (tests/agent/bkp/test_bkp_s3lite.sh runs it against aq-s3lite,
 * with AQ_BKP_S3_ACCESS_KEY / AQ_BKP_S3_SECRET_KEY). Every check of the store
 * goes through obj_ (list, get, put), so both backends run the same cases.
 *
 * Cases: a generated tree backs up and restores exactly (content, modes,
 * owners, ns times, symlinks, hard links, holes) and the backup leaves the
 * source as it was; an incremental after a ~1% change uploads within a bound
 * derived from the change and reads only changed files; the identity modes;
 * deleting the first of three + gc keeps the other two restorable; a flipped
 * byte in a chunk or manifest, or a chunk swapped for another, is caught;
 * a wrong key is refused; a store failing mid-way leaves no manifest and the
 * re-run completes without re-uploading; no 64-byte run of plaintext is in
 * any object; selected paths restore into an existing tree, and escapes are
 * refused; the locks keep gc and backups apart; progress ends at the total.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "agent/bkp/bkp.h"
#include "agent/bkp/bkp_internal.h"
#include "tests/agent/bkp/bkp_tree.h"
#include "tests/lib/aqt.h"
#include "util/ut_hex.h"

#define CS (64u << 10) /* chunk size of these tests */

static char tmp[256];
static int seq;
static const uint8_t key1[BKP_KEY_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
static const uint8_t key2[BKP_KEY_LEN] = { 2, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

/* A fresh vault per test: its own folder, or its own bucket on S3. */
static struct obj_cfg vault_cfg(void)
{
	struct obj_cfg c = { 0 };
	const char *s3 = getenv("AQ_BKP_S3");

	if (s3) {
		c.kind = OBJ_S3;
		snprintf(c.endpoint, sizeof c.endpoint, "%s", s3);
		snprintf(c.bucket, sizeof c.bucket, "bkp-%d", seq);
		snprintf(c.access_key, sizeof c.access_key, "%s", getenv("AQ_BKP_S3_ACCESS_KEY"));
		snprintf(c.secret_key, sizeof c.secret_key, "%s", getenv("AQ_BKP_S3_SECRET_KEY"));
		c.timeout_ms = 5000;
	} else {
		c.kind = OBJ_DIRECTORY;
		snprintf(c.path, sizeof c.path, "%s/vault%d", tmp, seq);
	}
	return c;
}

static char *dir(const char *name)
{
	char *p = NULL;

	ck_assert_int_gt(asprintf(&p, "%s/%s%d", tmp, name, seq), 0);
	return p;
}

static struct bkp_vault *open_vault(const uint8_t *key)
{
	struct obj_cfg c = vault_cfg();
	struct bkp_vault *v = NULL;
	aq_msg m = { .text = "" };

	ck_assert_msg(bkp_vault_open(&c, key, &v, &m) == 0, "open: %s", m.text);
	return v;
}

static struct bkp_stats backup(struct bkp_vault *v, const char *id, const char *src, const char *prev)
{
	struct bkp_opts o = { .prev_id = prev, .chunk_size = CS, .source = "snap" };
	struct bkp_stats st;
	aq_msg m = { .text = "" };
	int rc = bkp_backup(v, id, src, &o, &st, &m);

	ck_assert_msg(rc == 0, "backup %s: %d %s", id, rc, m.text);
	return st;
}

/* Two listings equal, else the first line that differs (Check caps messages). */
static void list_eq(const char *got, const char *want)
{
	size_t line = 1;

	while (*got && *want) {
		size_t lg = strcspn(got, "\n"), lw = strcspn(want, "\n");

		ck_assert_msg(lg == lw && memcmp(got, want, lg) == 0, "line %zu: got %.300s\nwant %.300s", line, got, want);
		got += lg + (got[lg] == '\n');
		want += lw + (want[lw] == '\n');
		line++;
	}
	ck_assert_msg(!*got && !*want, "listing lengths differ at line %zu: %.200s | %.200s", line, got, want);
}

/* Restores id whole into a new folder and checks it lists as want. */
static void restore_equals(struct bkp_vault *v, const char *id, const char *want)
{
	char *dst = dir(id);
	aq_msg m = { .text = "" };
	char *got;
	int rc;

	bt_rm(dst);
	rc = bkp_restore(v, id, dst, NULL, 0, NULL, NULL, &m);
	ck_assert_msg(rc == 0, "restore %s: %d %s", id, rc, m.text);
	got = bt_list(dst);
	ck_assert_ptr_nonnull(got);
	list_eq(got, want);
	free(got);
	free(dst);
}

/* Each test its own folders and vault (a forked child each, or one process). */
static void setup(void)
{
	static int n;

	seq = (int)getpid() * 100 + ++n;
}

/* ---- store helpers (through obj_, so S3 runs them too) ---- */

struct keys {
	char k[4096][80];
	size_t n;
};

static int keys_cb(void *arg, const char *key, uint64_t size)
{
	struct keys *ks = arg;

	(void)size;
	if (ks->n < 4096 && strlen(key) < 80)
		snprintf(ks->k[ks->n++], 80, "%s", key);
	return 0;
}

static struct keys *store_keys(struct bkp_vault *v, const char *prefix)
{
	struct keys *ks = calloc(1, sizeof *ks);

	ck_assert_int_eq(obj_list(v->store, prefix, keys_cb, ks), 0);
	return ks;
}

static uint8_t *store_get(struct bkp_vault *v, const char *key, size_t *len)
{
	uint64_t size = 0;
	uint8_t *b;

	ck_assert_int_eq(obj_head(v->store, key, &size), 0);
	b = malloc(size + 1);
	ck_assert_int_eq(obj_get(v->store, key, 0, b, size, len), 0);
	return b;
}

static void store_flip(struct bkp_vault *v, const char *key, size_t off)
{
	size_t len = 0;
	uint8_t *b = store_get(v, key, &len);

	b[off % len] ^= 0x40;
	ck_assert_int_eq(obj_put(v->store, key, b, len), 0);
	free(b);
}

/* ---- cases ---- */

START_TEST(t_roundtrip)
{
	char *src = dir("src"), *before;
	uint64_t total;
	struct bkp_vault *v = open_vault(key1);
	struct bkp_stats st;
	struct bkp_info info;
	struct stat sb, sb2, sb3;
	char sparse[512];
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	total = bt_gen(src, CS);
	before = bt_list(src);
	snprintf(sparse, sizeof sparse, "%s/a/b/c/sparse", src);
	ck_assert_int_eq(stat(sparse, &sb), 0);
	ck_assert_int_eq(stat(src, &sb2), 0);
	st = backup(v, "b1", src, NULL);
	/* O_NOATIME: reading files and folders left their atimes (readlink cannot) */
	ck_assert_int_eq(stat(sparse, &sb3), 0);
	ck_assert_int_eq(sb3.st_atim.tv_sec, sb.st_atim.tv_sec);
	ck_assert_int_eq(stat(src, &sb3), 0);
	ck_assert_int_eq(sb3.st_atim.tv_nsec, sb2.st_atim.tv_nsec);
	ck_assert_uint_eq(st.logical_bytes, total);
	ck_assert_uint_eq(st.files, 45);     /* e0 s1 m big (first name) sparse + 40 */
	ck_assert_uint_eq(st.hardlinks, 1);
	ck_assert_uint_eq(st.symlinks, 2);
	ck_assert_uint_eq(st.dirs, 6);
	ck_assert_uint_eq(st.chunks_zero, 1); /* the sparse file's middle chunk */
	ck_assert_uint_eq(st.bytes_read, total);
	ck_assert_uint_eq(st.chunks_new, st.chunks); /* all distinct data */
	/* everything but the hole, sealed, and the manifest */
	ck_assert_uint_eq(st.bytes_uploaded, total - CS + st.chunks_new * BKP_SEAL_OVERHEAD + st.manifest_bytes);
	restore_equals(v, "b1", before);
	/* the hole stays a hole */
	snprintf(sparse, sizeof sparse, "%s/b1%d/a/b/c/sparse", tmp, seq);
	ck_assert_int_eq(stat(sparse, &sb), 0);
	ck_assert_int_lt((long long)sb.st_blocks * 512, (long long)sb.st_size);
	ck_assert_int_eq(bkp_info(v, "b1", &info, &m), 0);
	ck_assert_uint_eq(info.stats.logical_bytes, total);
	ck_assert_uint_eq(info.chunk_size, CS);
	ck_assert_str_eq(info.source, "snap");
	ck_assert_uint_gt(info.stats.manifest_bytes, 0);
	/* the same id twice is refused; a whole restore into a non-empty folder too */
	struct bkp_opts o = { .chunk_size = CS };
	ck_assert_int_eq(bkp_backup(v, "b1", src, &o, NULL, &m), -EEXIST);
	ck_assert_int_eq(bkp_restore(v, "b1", src, NULL, 0, NULL, NULL, &m), -ENOTEMPTY);
	ck_assert_int_eq(bkp_restore(v, "nope", src, NULL, 0, NULL, NULL, &m), -ENOENT);
	ck_assert_int_eq(bkp_backup(v, "../x", src, &o, NULL, &m), -EINVAL);
	free(before);
	free(src);
	bkp_vault_close(v);
}
END_TEST

/* Chunks of [off, off+n) in a file: what a change there may upload. */
static uint64_t chunks_over(uint64_t off, uint64_t n)
{
	return (off + n + CS - 1) / CS - off / CS;
}

START_TEST(t_incremental)
{
	char *src = dir("src"), *l1, *l2, p[512];
	struct bkp_vault *v = open_vault(key1);
	struct bkp_stats s1, s2;
	uint64_t total, changed, bound, big = 5 * (uint64_t)CS + 123;

	mkdir(src, 0755);
	total = bt_gen(src, CS);
	l1 = bt_list(src);
	s1 = backup(v, "b1", src, NULL);
	/* ~1%: 3000 bytes rewritten inside big (across a chunk boundary), one new file */
	snprintf(p, sizeof p, "%s/big", src);
	ck_assert_int_eq(bt_write(p, CS - 1000, 3000, 77), 0);
	snprintf(p, sizeof p, "%s/a/new", src);
	ck_assert_int_eq(bt_write(p, 0, 1500, 78), 0);
	changed = 3000 + 1500;
	ck_assert_uint_lt(changed * 100, total * 2); /* the change is about 1% of the data */
	l2 = bt_list(src);
	s2 = backup(v, "b2", src, "b1");
	/* the bound comes from the change: the chunks it touches, sealed, plus the manifest */
	bound = (chunks_over(CS - 1000, 3000) + chunks_over(0, 1500)) * (CS + BKP_SEAL_OVERHEAD) + s2.manifest_bytes;
	ck_assert_uint_le(s2.bytes_uploaded, bound);
	ck_assert_uint_eq(s2.chunks_new, chunks_over(CS - 1000, 3000) + 1);
	/* unchanged files are not read: only big and the new file */
	ck_assert_uint_eq(s2.bytes_read, big + 1500);
	ck_assert_uint_eq(s2.files_unchanged, s1.files - 1);
	ck_assert_uint_eq(s2.logical_bytes, total + 1500);
	fprintf(stderr, "incremental: first %llu B up, second %llu B up (bound %llu), read %llu B, logical %llu B\n",
		(unsigned long long)s1.bytes_uploaded, (unsigned long long)s2.bytes_uploaded,
		(unsigned long long)bound, (unsigned long long)s2.bytes_read, (unsigned long long)s2.logical_bytes);
	restore_equals(v, "b2", l2);
	restore_equals(v, "b1", l1);
	free(l1);
	free(l2);
	free(src);
	bkp_vault_close(v);
}
END_TEST

/* A change that keeps size and mtime: STRICT sees the ctime, MTIME trusts
 * the file (the documented hazard), NONE reads everything. */
START_TEST(t_identity)
{
	char *src = dir("src"), p[512];
	struct bkp_vault *v = open_vault(key1);
	struct bkp_opts o = { .chunk_size = CS };
	struct bkp_stats st;
	struct stat sb;
	struct timespec ts[2];
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	bt_gen(src, CS);
	backup(v, "b1", src, NULL);
	snprintf(p, sizeof p, "%s/a/s1", src);
	ck_assert_int_eq(stat(p, &sb), 0);
	ck_assert_int_eq(bt_write(p, 0, 100, 999), 0);
	ts[0] = sb.st_atim;
	ts[1] = sb.st_mtim;
	ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	o.prev_id = "b1";
	o.ident = BKP_IDENT_MTIME;
	ck_assert_int_eq(bkp_backup(v, "b2", src, &o, &st, &m), 0);
	ck_assert_uint_eq(st.bytes_read, 0);
	ck_assert_uint_eq(st.chunks_new, 0);
	o.ident = BKP_IDENT_STRICT;
	ck_assert_int_eq(bkp_backup(v, "b3", src, &o, &st, &m), 0);
	ck_assert_uint_eq(st.bytes_read, 100);
	ck_assert_uint_eq(st.chunks_new, 1);
	o.ident = BKP_IDENT_NONE;
	ck_assert_int_eq(bkp_backup(v, "b4", src, &o, &st, &m), 0);
	ck_assert_uint_eq(st.bytes_read, st.logical_bytes);
	ck_assert_uint_eq(st.chunks_new, 0);
	free(src);
	bkp_vault_close(v);
}
END_TEST

/* A reader standing in for the cold tier: the sparse file's hole holds
 * data that lives elsewhere (0x5a bytes). */
static ssize_t cold_read(void *arg, int fd, const char *path, void *buf, size_t len, uint64_t off)
{
	ssize_t r = pread(fd, buf, len, (off_t)off);

	(*(int *)arg)++;
	if (r < 0)
		return -errno;
	if (strcmp(path, "a/b/c/sparse") == 0)
		for (size_t i = 0; i < (size_t)r; i++)
			if (off + i >= CS && off + i < 2 * (uint64_t)CS)
				((uint8_t *)buf)[i] = 0x5a;
	return r;
}

START_TEST(t_read_hook)
{
	char *src = dir("src"), *dst = dir("dst"), p[512];
	struct bkp_vault *v = open_vault(key1);
	int calls = 0;
	struct bkp_opts o = { .chunk_size = CS, .read = cold_read, .read_arg = &calls };
	struct bkp_stats st;
	uint8_t b[16];
	aq_msg m = { .text = "" };
	int fd;

	mkdir(src, 0755);
	bt_gen(src, CS);
	ck_assert_int_eq(bkp_backup(v, "b1", src, &o, &st, &m), 0);
	ck_assert_int_gt(calls, 0);
	ck_assert_uint_eq(st.chunks_zero, 0); /* the "cold" range is data now */
	ck_assert_int_eq(bkp_restore(v, "b1", dst, NULL, 0, NULL, NULL, &m), 0);
	snprintf(p, sizeof p, "%s/a/b/c/sparse", dst);
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(pread(fd, b, sizeof b, CS + 100), sizeof b);
	close(fd);
	for (size_t i = 0; i < sizeof b; i++)
		ck_assert_uint_eq(b[i], 0x5a);
	free(src);
	free(dst);
	bkp_vault_close(v);
}
END_TEST

START_TEST(t_delete_gc)
{
	char *src = dir("src"), *l2, *l3, p[512];
	struct bkp_vault *v = open_vault(key1);
	struct bkp_gc_stats g;
	struct keys *ks;
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	bt_gen(src, CS);
	backup(v, "b1", src, NULL);
	snprintf(p, sizeof p, "%s/big", src);
	ck_assert_int_eq(bt_write(p, 0, 2000, 201), 0); /* b1's first chunk of big is now b1's alone */
	snprintf(p, sizeof p, "%s/f/f07", src);
	ck_assert_int_eq(unlink(p), 0); /* and f07's only chunk */
	l2 = bt_list(src);
	backup(v, "b2", src, "b1");
	snprintf(p, sizeof p, "%s/a/s1", src);
	ck_assert_int_eq(bt_write(p, 0, 100, 202), 0);
	l3 = bt_list(src);
	backup(v, "b3", src, "b2");
	ck_assert_int_eq(bkp_delete(v, "b1", &m), 0);
	ck_assert_int_eq(bkp_delete(v, "b1", &m), -ENOENT);
	ck_assert_int_eq(bkp_gc(v, 0, &g, &m), 0);
	ck_assert_uint_eq(g.manifests, 2);
	ck_assert_uint_eq(g.chunks_swept, 2); /* big's old first chunk and f07 */
	ks = store_keys(v, "c/");
	ck_assert_uint_eq(ks->n, g.chunks_kept);
	free(ks);
	restore_equals(v, "b2", l2);
	restore_equals(v, "b3", l3);
	ck_assert_int_eq(bkp_gc(v, 0, &g, &m), 0);
	ck_assert_uint_eq(g.chunks_swept, 0);
	/* a manifest that does not verify stops the gc before any sweep */
	ck_assert_int_eq(bkp_delete(v, "b3", &m), 0);
	store_flip(v, "m/b2", 40);
	ks = store_keys(v, "c/");
	ck_assert_int_eq(bkp_gc(v, 0, &g, &m), -EBADMSG);
	ck_assert_uint_eq(g.chunks_swept, 0);
	{
		struct keys *ks2 = store_keys(v, "c/");
		ck_assert_uint_eq(ks2->n, ks->n);
		free(ks2);
	}
	free(ks);
	free(l2);
	free(l3);
	free(src);
	bkp_vault_close(v);
}
END_TEST

START_TEST(t_tamper)
{
	char *src = dir("src"), *dst;
	struct bkp_vault *v = open_vault(key1);
	struct keys *ks;
	struct bkp_info info;
	uint8_t *a, *b;
	size_t la = 0, lb = 0;
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	bt_gen(src, CS);
	backup(v, "b1", src, NULL);
	ks = store_keys(v, "c/");
	ck_assert_uint_gt(ks->n, 2);
	/* two whole chunks (same size) */
	size_t full[2], nf = 0;
	for (size_t i = 0; i < ks->n && nf < 2; i++) {
		uint64_t size = 0;
		ck_assert_int_eq(obj_head(v->store, ks->k[i], &size), 0);
		if (size == CS + BKP_SEAL_OVERHEAD)
			full[nf++] = i;
	}
	ck_assert_uint_eq(nf, 2);
	/* a chunk put under another chunk's name: the name is its additional data */
	a = store_get(v, ks->k[full[0]], &la);
	b = store_get(v, ks->k[full[1]], &lb);
	ck_assert_int_eq(obj_put(v->store, ks->k[full[1]], a, la), 0);
	dst = dir("r1");
	ck_assert_int_eq(bkp_restore(v, "b1", dst, NULL, 0, NULL, NULL, &m), -EBADMSG);
	ck_assert_msg(strstr(m.text, "does not authenticate"), "%s", m.text);
	free(dst);
	/* sealed right under its name (by someone with the key) but other data */
	{
		uint8_t *pt = calloc(1, CS), *ct = malloc(CS + BKP_SEAL_OVERHEAD);
		ck_assert_int_eq(bkp_seal(v->keys.chunk, ks->k[full[1]], pt, CS, ct), 0);
		ck_assert_int_eq(obj_put(v->store, ks->k[full[1]], ct, CS + BKP_SEAL_OVERHEAD), 0);
		free(pt);
		free(ct);
	}
	dst = dir("r1b");
	ck_assert_int_eq(bkp_restore(v, "b1", dst, NULL, 0, NULL, NULL, &m), -EBADMSG);
	ck_assert_msg(strstr(m.text, "does not match its name"), "%s", m.text);
	ck_assert_int_eq(obj_put(v->store, ks->k[full[1]], b, lb), 0);
	free(dst);
	/* one flipped byte in a chunk's ciphertext */
	store_flip(v, ks->k[full[0]], 100);
	dst = dir("r2");
	ck_assert_int_eq(bkp_restore(v, "b1", dst, NULL, 0, NULL, NULL, &m), -EBADMSG);
	ck_assert_msg(strstr(m.text, "does not authenticate"), "%s", m.text);
	free(dst);
	/* one flipped byte in the manifest */
	store_flip(v, "m/b1", 77);
	ck_assert_int_eq(bkp_info(v, "b1", &info, &m), -EBADMSG);
	dst = dir("r3");
	ck_assert_int_eq(bkp_restore(v, "b1", dst, NULL, 0, NULL, NULL, &m), -EBADMSG);
	free(dst);
	free(a);
	free(b);
	free(ks);
	free(src);
	bkp_vault_close(v);
}
END_TEST

START_TEST(t_wrong_key)
{
	struct obj_cfg c = vault_cfg();
	struct bkp_vault *v = open_vault(key1), *w = NULL;
	struct keys *before, *after;
	aq_msg m = { .text = "" };

	before = store_keys(v, "");
	ck_assert_int_eq(bkp_vault_open(&c, key2, &w, &m), -EKEYREJECTED);
	ck_assert_ptr_null(w);
	after = store_keys(v, "");
	ck_assert_uint_eq(before->n, after->n); /* nothing written */
	free(before);
	free(after);
	bkp_vault_close(v);
}
END_TEST

struct fail_after {
	int left, puts;
};

/* Puts run on the backup's workers: the hook counts under a lock. */
static int fail_hook(void *arg, const char *key)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct fail_after *f = arg;
	int rc = 0;

	pthread_mutex_lock(&mu);
	f->puts++;
	if (strncmp(key, "c/", 2) == 0 && f->left-- <= 0)
		rc = -EAGAIN;
	pthread_mutex_unlock(&mu);
	return rc;
}

START_TEST(t_store_fails)
{
	char *src = dir("src"), *l;
	struct bkp_vault *v = open_vault(key1);
	struct fail_after f = { .left = 10 };
	struct bkp_opts o = { .chunk_size = CS };
	struct bkp_stats st;
	struct bkp_info info;
	struct keys *ks;
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	bt_gen(src, CS);
	l = bt_list(src);
	bkp_vault_set_put_hook(v, fail_hook, &f);
	ck_assert_int_eq(bkp_backup(v, "b1", src, &o, &st, &m), -EAGAIN);
	ck_assert_int_eq(bkp_info(v, "b1", &info, &m), -ENOENT); /* no manifest: no backup */
	ks = store_keys(v, "m/");
	ck_assert_uint_eq(ks->n, 0);
	free(ks);
	ks = store_keys(v, "l/");
	ck_assert_uint_eq(ks->n, 0); /* the lock went too */
	free(ks);
	bkp_vault_set_put_hook(v, NULL, NULL);
	free(l);
	l = bt_list(src); /* the failed run's readlink set the symlinks' atimes */
	ck_assert_int_eq(bkp_backup(v, "b1", src, &o, &st, &m), 0);
	ck_assert_uint_eq(st.chunks_new, st.chunks - 10); /* the 10 stored before the failure are skipped */
	restore_equals(v, "b1", l);
	free(l);
	free(src);
	bkp_vault_close(v);
}
END_TEST

START_TEST(t_ciphertext)
{
	char *src = dir("src"), p[512];
	struct bkp_vault *v = open_vault(key1);
	struct keys *ks;
	uint8_t *known = malloc(5 * (size_t)CS + 123), md[32];
	char hex[65];
	unsigned mdl = 0;
	int fd;

	mkdir(src, 0755);
	bt_gen(src, CS);
	backup(v, "b1", src, NULL);
	snprintf(p, sizeof p, "%s/big", src);
	fd = open(p, O_RDONLY);
	ck_assert_int_eq(read(fd, known, 5 * (size_t)CS + 123), 5 * (ssize_t)CS + 123);
	close(fd);
	/* the plain SHA-256 of a chunk names no object */
	EVP_Digest(known, CS, md, &mdl, EVP_sha256(), NULL);
	ut_hex_encode(md, sizeof md, hex, sizeof hex);
	ks = store_keys(v, "");
	ck_assert_uint_gt(ks->n, 40);
	for (size_t i = 0; i < ks->n; i++) {
		size_t len = 0;
		uint8_t *b = store_get(v, ks->k[i], &len);

		ck_assert_ptr_null(strstr(ks->k[i], hex));
		for (size_t off = 0; off + 64 <= 5 * (size_t)CS; off += 64)
			ck_assert_msg(!memmem(b, len, known + off, 64), "plaintext of big at %zu in %s", off, ks->k[i]);
		ck_assert_ptr_null(memmem(b, len, "a/b/c/sparse", 12)); /* names too */
		free(b);
	}
	free(ks);
	free(known);
	free(src);
	bkp_vault_close(v);
}
END_TEST

START_TEST(t_selected)
{
	char *src = dir("src"), *dst = dir("dst"), *out = dir("outside"), p[512], q[512];
	struct bkp_vault *v = open_vault(key1);
	const char *sel[] = { "/a/s1", "/big", "/a/b/" };
	const char *overlap[] = { "/a", "/a/b/m" };
	const char *esc1[] = { "/a/../../etc" }, *esc2[] = { "../x" }, *missing[] = { "/nope" };
	struct stat s1, s2;
	char *la, *lb;
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	bt_gen(src, CS);
	backup(v, "b1", src, NULL);
	mkdir(dst, 0755);
	mkdir(out, 0755);
	snprintf(p, sizeof p, "%s/s1", dst);
	ck_assert_int_eq(bt_write(p, 0, 5000, 31), 0); /* replaced by the restore */
	ck_assert_int_eq(bkp_restore(v, "b1", dst, sel, 3, NULL, NULL, &m), 0);
	snprintf(p, sizeof p, "%s/a/s1", src);
	snprintf(q, sizeof q, "%s/s1", dst);
	ck_assert_int_eq(lstat(p, &s1), 0);
	ck_assert_int_eq(lstat(q, &s2), 0);
	ck_assert_int_eq(s2.st_size, 100);
	ck_assert_int_eq(s2.st_mode, s1.st_mode);
	ck_assert_int_eq(s2.st_mtim.tv_nsec, s1.st_mtim.tv_nsec);
	/* the folder with its subtree, hard link to the restored big included */
	snprintf(p, sizeof p, "%s/a/b", src);
	snprintf(q, sizeof q, "%s/b", dst);
	la = bt_list(p);
	lb = bt_list(q);
	list_eq(lb, la);
	free(la);
	free(lb);
	snprintf(p, sizeof p, "%s/big", dst);
	ck_assert_int_eq(stat(p, &s1), 0);
	snprintf(q, sizeof q, "%s/b/hl", dst);
	ck_assert_int_eq(stat(q, &s2), 0);
	ck_assert_uint_eq(s1.st_ino, s2.st_ino);
	/* refused: overlap, escapes, a missing path */
	ck_assert_int_eq(bkp_restore(v, "b1", dst, overlap, 2, NULL, NULL, &m), -EINVAL);
	ck_assert_int_eq(bkp_restore(v, "b1", dst, esc1, 1, NULL, NULL, &m), -EINVAL);
	ck_assert_int_eq(bkp_restore(v, "b1", dst, esc2, 1, NULL, NULL, &m), -EINVAL);
	ck_assert_int_eq(bkp_restore(v, "b1", dst, missing, 1, NULL, NULL, &m), -ENOENT);
	/* a folder of the target that is a symlink out of it is not followed */
	bt_rm(dst);
	mkdir(dst, 0755);
	snprintf(p, sizeof p, "%s/b", dst);
	ck_assert_int_eq(symlink(out, p), 0);
	ck_assert_int_ne(bkp_restore(v, "b1", dst, sel + 2, 1, NULL, NULL, &m), 0);
	la = bt_list(out);
	ck_assert_str_eq(strchr(la, '\n') + 1, ""); /* nothing but its own line */
	free(la);
	free(src);
	free(dst);
	free(out);
	bkp_vault_close(v);
}
END_TEST

/* A manifest written with the key (so it authenticates) that puts a symlink
 * out of the target and then a file beneath it: the restore must not write
 * through the symlink. */
START_TEST(t_manifest_escape)
{
	char *dst = dir("dst"), *out = dir("outside");
	struct bkp_vault *v = open_vault(key1);
	struct bkp_mf mf;
	struct bkp_ent *e;
	uint64_t put = 0;
	char *l;
	aq_msg m = { .text = "" };

	mkdir(out, 0755);
	bkp_mf_init(&mf);
	mf.chunk_size = CS;
	ck_assert_ptr_nonnull(e = bkp_mf_add(&mf, BKP_T_DIR, ""));
	e->mode = 0755;
	ck_assert_ptr_nonnull(e = bkp_mf_add(&mf, BKP_T_SYMLINK, "x"));
	e->target = strdup(out);
	ck_assert_ptr_nonnull(e = bkp_mf_add(&mf, BKP_T_REG, "x/evil"));
	e->mode = 0644;
	ck_assert_int_eq(bkp_mf_store(v, "evil", &mf, &put, &m), 0);
	bkp_mf_cleanup(&mf);
	ck_assert_int_eq(bkp_restore(v, "evil", dst, NULL, 0, NULL, NULL, &m), -EINVAL);
	l = bt_list(out);
	ck_assert_str_eq(strchr(l, '\n') + 1, "");
	free(l);
	free(dst);
	free(out);
	bkp_vault_close(v);
}
END_TEST

START_TEST(t_locks)
{
	char *src = dir("src"), name[256], key[64];
	struct bkp_vault *v = open_vault(key1);
	struct bkp_gc_stats g;
	struct bkp_opts o = { .chunk_size = CS };
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	bt_gen(src, CS);
	/* a live backup lock: gc backs off and leaves it */
	ck_assert_int_eq(bkp_lock_acquire(v, "backup", "other", 0, name, sizeof name, NULL, &m), 0);
	ck_assert_int_eq(bkp_gc(v, 0, &g, &m), -EBUSY);
	/* two backups may run side by side */
	ck_assert_int_eq(bkp_backup(v, "b1", src, &o, NULL, &m), 0);
	bkp_lock_release(v, name);
	/* a live gc lock: a backup backs off */
	ck_assert_int_eq(bkp_lock_acquire(v, "gc", NULL, 0, name, sizeof name, NULL, &m), 0);
	ck_assert_int_eq(bkp_backup(v, "b2", src, &o, NULL, &m), -EBUSY);
	bkp_lock_release(v, name);
	/* a dead process's lock (an old time) is stale: gc removes it and runs */
	snprintf(key, sizeof key, "l/backup-%s", "0123456789abcdef");
	ck_assert_int_eq(obj_put(v->store, key, "1000\n", 5), 0);
	ck_assert_int_eq(bkp_gc(v, 60, &g, &m), 0);
	ck_assert_uint_eq(g.stale_locks, 1);
	ck_assert_int_eq(obj_head(v->store, key, &(uint64_t){ 0 }), -ENOENT);
	free(src);
	bkp_vault_close(v);
}
END_TEST

struct prog {
	uint64_t last, total, calls;
	int backwards;
};

static void prog_cb(void *arg, uint64_t done, uint64_t total)
{
	struct prog *p = arg;

	p->backwards |= done < p->last || done > total;
	p->last = done;
	p->total = total;
	p->calls++;
}

START_TEST(t_progress)
{
	char *src = dir("src"), *dst = dir("dst");
	struct bkp_vault *v = open_vault(key1);
	struct prog pb = { 0 }, pr = { 0 };
	struct bkp_opts o = { .chunk_size = CS, .progress = prog_cb, .progress_arg = &pb };
	struct bkp_restore_opts ro = { .progress = prog_cb, .progress_arg = &pr };
	uint64_t total;
	aq_msg m = { .text = "" };

	mkdir(src, 0755);
	total = bt_gen(src, CS);
	ck_assert_int_eq(bkp_backup(v, "b1", src, &o, NULL, &m), 0);
	ck_assert_int_eq(pb.backwards, 0);
	ck_assert_uint_eq(pb.total, total);
	ck_assert_uint_eq(pb.last, total);
	ck_assert_uint_gt(pb.calls, 10);
	ck_assert_int_eq(bkp_restore(v, "b1", dst, NULL, 0, &ro, NULL, &m), 0);
	ck_assert_int_eq(pr.backwards, 0);
	ck_assert_uint_eq(pr.last, pr.total);
	ck_assert_uint_eq(pr.total, total + 5 * (uint64_t)CS + 123); /* the hard link counts as a name */
	free(src);
	free(dst);
	bkp_vault_close(v);
}
END_TEST

static Suite *bkp_suite(void)
{
	Suite *s = suite_create(getenv("AQ_BKP_S3") ? "bkp (s3)" : "bkp (directory)");
	TCase *tc = tcase_create("bkp");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_roundtrip);
	tcase_add_test(tc, t_incremental);
	tcase_add_test(tc, t_identity);
	tcase_add_test(tc, t_read_hook);
	tcase_add_test(tc, t_delete_gc);
	tcase_add_test(tc, t_tamper);
	tcase_add_test(tc, t_wrong_key);
	tcase_add_test(tc, t_store_fails);
	tcase_add_test(tc, t_ciphertext);
	tcase_add_test(tc, t_selected);
	tcase_add_test(tc, t_manifest_escape);
	tcase_add_test(tc, t_locks);
	tcase_add_test(tc, t_progress);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int rc;

	snprintf(tmp, sizeof tmp, "%s/aq-test-bkp.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp))
		return 99;
	rc = aqt_run(bkp_suite());
	bt_rm(tmp);
	return rc;
}
