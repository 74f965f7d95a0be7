/* test_vol_link: vol_link_replace (agent/vol/vol_ns.c), a hard link over an
 * existing name in one step (SMB FileLinkInformation with ReplaceIfExists):
 * - a reader looking the name up while it is replaced many times finds the
 *   old file or the new one every time, never nothing;
 * - the capacity counts the name once, and the replaced file's data go
 *   with its last link;
 * - a failed replace (the name is a folder) leaves the old object and no
 *   temporary name behind, and charges nothing;
 * - a name that already is the file stays as it is, both names kept.
 * Needs root (the store's handles).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dirent.h>
#include <errno.h>
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
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
