/* test_vol_link: vol_link_replace (agent/vol/vol_ns.c), a hard link over an
 * existing name in one step (SMB FileLinkInformation with ReplaceIfExists):
 * - a reader looking the name up while it is replaced many times finds the
 *   old file or the new one every time, never nothing;
 * - the capacity counts the name once, and the replaced file's data go
 *   with its last link;
 * - a failed replace (the name is a folder) leaves the old object and no
 *   temporary name behind, and charges nothing;
 * - a name that already is the file stays as it is, both names kept;
 * - a temporary a kill left (".aq-link.<pid>.<n>" of another process, a
 *   second link of its file) is never listed (vol_readdir) and is gone
 *   after the store attaches the volume again, in the root and below; kept:
 *   one of this process (it may be in use), a user's file named like it
 *   but with one link, a folder named like it, a name that only starts so.
 * Needs root (the store's handles).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static struct vol_obj root;
static const struct vol_cred cred = { 0 };

static void setup(void)
{
	struct vol_export *e;

	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "lk", .fsid = 400, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 5 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	ck_assert_ptr_nonnull(e = vol_export_at(ts.store, 0));
	ck_assert_int_eq(vol_root(e, &root), 0);
	vol_export_unref(e);
}

static void teardown(void)
{
	vol_obj_cleanup(&root);
	aqt_store_cleanup(&ts);
}

/* A new file of size bytes (its size tells it apart). */
static void file_at(const char *name, uint64_t size, struct vol_obj *out)
{
	struct vol_sattr sa = { .set_size = true, .size = size };

	ck_assert_int_eq(vol_create(&root, &cred, name, strlen(name), true, NULL, &sa, out), 0);
}

/* Names in the volume's root folder starting with prefix. */
static int names_like(const char *prefix)
{
	char p[128];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(p, sizeof(p), "%s/v0", ts.dir);
	ck_assert_ptr_nonnull(d = opendir(p));
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static uint64_t used(uint64_t *names)
{
	struct vol_stats st;

	ck_assert_int_eq(vol_store_stats(ts.store, "lk0", &st), 0);
	if (names)
		*names = st.names;
	return st.used;
}

struct reader {
	volatile int stop;
	long looks, misses, others;
};

static void *reader_run(void *arg)
{
	struct reader *rd = arg;
	struct vol_obj o;

	while (!rd->stop) {
		int rc = vol_lookup(&root, &cred, "t", 1, &o);

		rd->looks++;
		if (rc == 0) {
			rd->others += o.st.st_size != 1000 && o.st.st_size != 3000;
			vol_obj_cleanup(&o);
		} else {
			rd->misses++;
		}
	}
	return NULL;
}

START_TEST(test_replace_never_missing)
{
	struct vol_obj a, b, t;
	struct reader rd = { 0 };
	pthread_t th;
	uint64_t names, u0;
	int i;

	file_at("a", 1000, &a);
	file_at("b", 3000, &b);
	ck_assert_int_eq(vol_link(&a, &root, "t", 1, &cred), 0);
	u0 = used(&names);
	ck_assert_uint_eq(names, 3); /* a, b, t */
	ck_assert_int_eq(pthread_create(&th, NULL, reader_run, &rd), 0);
	for (i = 0; i < 400; i++)
		ck_assert_int_eq(vol_link_replace(i % 2 ? &a : &b, &root, "t", 1, &cred, NULL), 0);
	rd.stop = 1;
	pthread_join(th, NULL);
	fprintf(stderr, "# 400 replaces: %ld lookups, %ld missing\n", rd.looks, rd.misses);
	ck_assert_int_gt(rd.looks, 0);
	ck_assert_int_eq(rd.misses, 0);
	ck_assert_int_eq(rd.others, 0);
	/* the last replace (i = 399) linked a: t is a, b has one link again */
	ck_assert_int_eq(vol_lookup(&root, &cred, "t", 1, &t), 0);
	ck_assert_uint_eq(t.st.st_ino, a.st.st_ino);
	ck_assert_uint_eq(t.st.st_nlink, 2);
	vol_obj_cleanup(&t);
	ck_assert_int_eq(names_like(".aq-link"), 0);
	ck_assert_uint_eq(used(&names), u0);
	ck_assert_uint_eq(names, 3);
	/* over b's last name: b's data go */
	ck_assert_int_eq(vol_link_replace(&a, &root, "b", 1, &cred, NULL), 0);
	ck_assert_uint_eq(used(&names), u0 - 3000);
	ck_assert_uint_eq(names, 3);
	/* over no name at all: one name more */
	ck_assert_int_eq(vol_link_replace(&a, &root, "n", 1, &cred, NULL), 0);
	ck_assert_uint_eq(used(&names), u0 - 3000 + VOL_NAME_COST);
	vol_obj_cleanup(&a);
	vol_obj_cleanup(&b);
}
END_TEST

START_TEST(test_replace_failed_leaves_old)
{
	struct vol_obj a, d, o;
	uint64_t names, u0;

	file_at("a", 1000, &a);
	ck_assert_int_eq(vol_mkdir(&root, &cred, "d", 1, NULL, &d), 0);
	u0 = used(&names);
	ck_assert_int_eq(vol_link_replace(&a, &root, "d", 1, &cred, NULL), -EISDIR);
	ck_assert_int_eq(vol_lookup(&root, &cred, "d", 1, &o), 0);
	ck_assert(S_ISDIR(o.st.st_mode));
	ck_assert_uint_eq(o.st.st_ino, d.st.st_ino);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(names_like(".aq-link"), 0);
	ck_assert_uint_eq(used(NULL), u0);
	vol_refresh(&a);
	ck_assert_uint_eq(a.st.st_nlink, 1);
	/* a name that already is the file: both names stay, nothing charged */
	ck_assert_int_eq(vol_link(&a, &root, "t", 1, &cred), 0);
	u0 = used(&names);
	ck_assert_int_eq(vol_link_replace(&a, &root, "t", 1, &cred, NULL), 0);
	ck_assert_int_eq(names_like(".aq-link"), 0);
	ck_assert_uint_eq(used(NULL), u0);
	ck_assert_int_eq(vol_lookup(&root, &cred, "a", 1, &o), 0);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_lookup(&root, &cred, "t", 1, &o), 0);
	ck_assert_uint_eq(o.st.st_nlink, 2);
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&a);
	vol_obj_cleanup(&d);
}
END_TEST

/* Names vol_readdir lists in dir, joined with '/' into out. */
static int list_cb(void *arg, const char *name, size_t nlen, uint64_t ino, uint64_t cookie)
{
	char *out = arg;

	(void)ino;
	(void)cookie;
	strncat(out, name, nlen);
	strcat(out, "/");
	return 0;
}

static void listed(struct vol_obj *dir, char *out)
{
	bool eof = false;

	out[0] = '/';
	out[1] = '\0';
	ck_assert_int_eq(vol_readdir(dir, &cred, 0, list_cb, out, &eof), 0);
	ck_assert(eof);
}

static bool exists(const char *rel)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/v0/%s", ts.dir, rel);
	return lstat(p, &st) == 0;
}

START_TEST(test_leftover_swept)
{
	char p[256], q[256], mine[64], list[4096];
	struct vol_store *s2 = NULL;
	struct vol_obj sub;
	struct stat st;
	int fd;

	/* f and sub/g, each with a leftover temporary of a dead agent (pid
	 * 4194305 is above any pid_max), f also one of this process */
	snprintf(p, sizeof(p), "%s/v0/sub", ts.dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/v0/.aq-link.4194305.0d", ts.dir);
	ck_assert_int_eq(mkdir(p, 0755), 0); /* a folder: never a temporary */
	snprintf(p, sizeof(p), "%s/v0/.aq-link.4194305.9", ts.dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	const char *files[] = { "f", "sub/g", ".aq-link.4194305.8", ".aq-link.x.1" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/v0/%s", ts.dir, files[i]);
		ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0644), 0);
		ck_assert_int_eq(write(fd, "data", 4), 4);
		close(fd);
	}
	snprintf(mine, sizeof(mine), ".aq-link.%ld.1", (long)getpid());
	const char *links[][2] = { { "f", ".aq-link.4194305.1" }, { "sub/g", "sub/.aq-link.4194305.2" }, { "f", mine },
				   { "f", ".aq-link.4194305" }, { "f", ".aq-link.4194305.3x" } };
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(p, sizeof(p), "%s/v0/%s", ts.dir, links[i][0]);
		snprintf(q, sizeof(q), "%s/v0/%s", ts.dir, links[i][1]);
		ck_assert_int_eq(link(p, q), 0);
	}
	/* listings never show a temporary, ours or not */
	listed(&root, list);
	ck_assert_ptr_null(strstr(list, "/.aq-link.4194305.1/"));
	ck_assert_ptr_null(strstr(list, mine));
	ck_assert_ptr_nonnull(strstr(list, "/.aq-link.4194305.8/")); /* one link: a user's file */
	ck_assert_ptr_nonnull(strstr(list, "/.aq-link.4194305.9/")); /* a folder */
	ck_assert_ptr_nonnull(strstr(list, "/.aq-link.4194305/"));
	ck_assert_ptr_nonnull(strstr(list, "/.aq-link.4194305.3x/"));
	ck_assert_ptr_nonnull(strstr(list, "/.aq-link.x.1/"));
	ck_assert_int_eq(vol_lookup(&root, &cred, "sub", 3, &sub), 0);
	listed(&sub, list);
	ck_assert_ptr_nonnull(strstr(list, "/g/"));
	ck_assert_ptr_null(strstr(list, ".aq-link"));
	vol_obj_cleanup(&sub);
	/* the volume attached again (an agent started after the kill) */
	ck_assert_int_eq(vol_store_new(ts.key, &s2), 0);
	ck_assert_int_eq(vol_store_set(s2, ts.cfg, ts.n), 0);
	vol_store_free(s2);
	ck_assert(!exists(".aq-link.4194305.1"));
	ck_assert(!exists("sub/.aq-link.4194305.2"));
	ck_assert(exists(mine));
	ck_assert(exists(".aq-link.4194305.8"));
	ck_assert(exists(".aq-link.4194305.9"));
	ck_assert(exists(".aq-link.4194305.0d"));
	ck_assert(exists(".aq-link.4194305"));
	ck_assert(exists(".aq-link.4194305.3x"));
	ck_assert(exists(".aq-link.x.1"));
	snprintf(p, sizeof(p), "%s/v0/f", ts.dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 4); /* f, mine, .aq-link.4194305, .aq-link.4194305.3x */
	snprintf(p, sizeof(p), "%s/v0/sub/g", ts.dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_nlink, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_link");
	TCase *tc = tcase_create("core");

	if (geteuid() != 0) {
		fprintf(stderr, "test_vol_link needs root\n");
		return 77;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_replace_never_missing);
	tcase_add_test(tc, test_replace_failed_leaves_old);
	tcase_add_test(tc, test_leftover_swept);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
