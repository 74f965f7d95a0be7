/* test_snap: agent/snap/ on the ordinary shelf of the test machine (the
 * portable copy, unless /tmp is btrfs): create, list, delete, revert, clone,
 * what a copy keeps (modes, owners, times, hard links, symlinks, sparse
 * holes, extended attributes, the snapshot mark instead of the live one),
 * failed creates reported, and the leftovers of a crash swept at start. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "agent/snap/snap.h"
#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"

static char shelf[64], root[128];
static const struct api_intent_snap S1 = {"s1", "1111111111111111"}, S2 = {"s2", "2222222222222222"};

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static char *get(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void setup(void)
{
	enum snap_mech m;
	uint8_t mark[8] = {0, 0, 0, 0, 0, 0, 0, 0xa1};

	snprintf(shelf, sizeof(shelf), "/tmp/aqsnap-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(shelf));
	ck_assert_int_eq(snap_shelf_init(shelf, &m, NULL), AQ_OK);
	snprintf(root, sizeof(root), "%s/volumes", shelf);
	mkdir(root, 0711);
	snprintf(root, sizeof(root), "%s/volumes/a1", shelf);
	ck_assert_int_eq(snap_volume_make(root, 0755), 0);
	put("a.txt", "old a");
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/a.txt", root);
		setxattr(p, VOL_MARK, mark, 8, 0); /* the live mark: not copied */
		setxattr(p, "user.aquifer.fid", "00000000000000f1", 16, 0);
		chmod(p, 0640);
	}
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", shelf);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_create_list_delete)
{
	struct snap_info si[4];
	char p[512], v[32];
	struct stat st;
	size_t n;

	ck_assert_int_eq(snap_create(shelf, "a1", root, 0xa1, &S1, NULL), 0);
	ck_assert_int_eq(snap_create(shelf, "a1", root, 0xa1, &S1, NULL), -EEXIST);
	/* another snapshot under a taken id is refused, the first one untouched */
	ck_assert_int_eq(snap_create(shelf, "a1", root, 0xa1, &(struct api_intent_snap){"s1", "9999999999999999"}, NULL),
			 -EEXIST);
	ck_assert(snap_exists(shelf, "a1", &S1));
	put("a.txt", "new a");
	snprintf(p, sizeof(p), "%s/.snapshots/a1/s1/a.txt", shelf);
	ck_assert_str_eq(get(p), "old a");
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	if (snap_mech_of(root) == SNAP_COPY) {
		uint8_t m[8];

		ck_assert_int_lt(getxattr(p, VOL_MARK, m, 8), 0); /* a copy has no live mark */
		ck_assert_int_eq(getxattr(p, VOL_SNAP_MARK, m, 8), 8);
		ck_assert_uint_eq(m[7], 0xa1);
	}
	ck_assert_int_eq(getxattr(p, "user.aquifer.fid", v, sizeof(v)), 16);
	ck_assert_int_eq(snap_list(shelf, "a1", si, 4, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(si[0].snap.uid, S1.uid);
	ck_assert(si[0].ready);
	ck_assert_int_gt(si[0].create_unix, 0);
	/* a delete naming another uid under the id is not this snapshot's */
	ck_assert_int_eq(snap_delete(shelf, "a1", &(struct api_intent_snap){"s1", "9999999999999999"}, NULL), 0);
	ck_assert(snap_exists(shelf, "a1", &S1));
	ck_assert_int_eq(snap_delete(shelf, "a1", &S1, NULL), 0);
	ck_assert(!snap_exists(shelf, "a1", &S1));
	ck_assert_int_ne(stat(p, &st), 0);
	ck_assert_int_eq(snap_list(shelf, "a1", si, 4, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(snap_delete(shelf, "a1", &S1, NULL), 0); /* gone already */
}
END_TEST

START_TEST(test_copy_keeps_shape)
{
	char p[512], q[512], t[64];
	struct stat a, b;
	int fd;
	ssize_t k;

	snprintf(p, sizeof(p), "%s/d", root);
	ck_assert_int_eq(mkdir(p, 0705), 0);
	put("d/x", "x");
	snprintf(p, sizeof(p), "%s/d/x", root);
	snprintf(q, sizeof(q), "%s/d/y", root);
	ck_assert_int_eq(link(p, q), 0);
	snprintf(q, sizeof(q), "%s/link", root);
	ck_assert_int_eq(symlink("d/x", q), 0);
	snprintf(p, sizeof(p), "%s/sparse", root);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0600), 0);
	ck_assert_int_eq(pwrite(fd, "end", 3, 64 << 20), 3);
	close(fd);
	ck_assert_int_eq(snap_create(shelf, "a1", root, 0xa1, &S1, NULL), 0);
	snprintf(p, sizeof(p), "%s/.snapshots/a1/s1/d/x", shelf);
	snprintf(q, sizeof(q), "%s/.snapshots/a1/s1/d/y", shelf);
	ck_assert_int_eq(stat(p, &a), 0);
	ck_assert_int_eq(stat(q, &b), 0);
	ck_assert_uint_eq(a.st_ino, b.st_ino); /* hard links stay links */
	snprintf(p, sizeof(p), "%s/.snapshots/a1/s1/d", shelf);
	ck_assert_int_eq(stat(p, &a), 0);
	ck_assert_uint_eq(a.st_mode & 07777, 0705);
	snprintf(p, sizeof(p), "%s/.snapshots/a1/s1/link", shelf);
	ck_assert_int_eq(k = readlink(p, t, sizeof(t) - 1), 3);
	t[k] = '\0';
	ck_assert_str_eq(t, "d/x");
	snprintf(p, sizeof(p), "%s/.snapshots/a1/s1/sparse", shelf);
	ck_assert_int_eq(stat(p, &a), 0);
	ck_assert_int_eq(a.st_size, (64 << 20) + 3);
	ck_assert_int_lt(a.st_blocks * 512, 1 << 20); /* the hole stayed a hole */
}
END_TEST

START_TEST(test_revert_and_clone)
{
	char p[512], dst[512];

	ck_assert_int_eq(snap_create(shelf, "a1", root, 0xa1, &S1, NULL), 0);
	put("a.txt", "new a");
	put("b.txt", "born after");
	ck_assert_int_eq(snap_revert(shelf, "a1", root, &S1, 1, NULL, NULL), 0);
	ck_assert_uint_eq(snap_revert_seq(shelf, "a1"), 1);
	snprintf(p, sizeof(p), "%s/a.txt", root);
	ck_assert_str_eq(get(p), "old a");
	snprintf(p, sizeof(p), "%s/b.txt", root);
	ck_assert_ptr_null(get(p));
	put("a.txt", "after revert");
	ck_assert_int_eq(snap_revert(shelf, "a1", root, &S1, 1, NULL, NULL), 0); /* seq applied: nothing */
	snprintf(p, sizeof(p), "%s/a.txt", root);
	ck_assert_str_eq(get(p), "after revert");
	ck_assert_int_eq(snap_revert(shelf, "a1", root, &S2, 2, NULL, NULL), -ENOENT);
	snprintf(dst, sizeof(dst), "%s/volumes/c3", shelf);
	ck_assert_int_eq(snap_clone(shelf, "a1", &S1, dst, NULL, NULL), 0);
	snprintf(p, sizeof(p), "%s/a.txt", dst);
	ck_assert_str_eq(get(p), "old a");
	put("a.txt", "parent again");
	ck_assert_str_eq(get(p), "old a");
	ck_assert_int_eq(snap_clone(shelf, "a1", &S2, dst, NULL, NULL), -ENOENT);
}
END_TEST

START_TEST(test_failed_create_reported)
{
	struct snap_info si[2];
	size_t n;
	char bad[256];

	snprintf(bad, sizeof(bad), "%s/volumes/nonexistent", shelf);
	ck_assert_int_ne(snap_create(shelf, "a1", bad, 0xa1, &S2, NULL), 0);
	ck_assert_int_eq(snap_list(shelf, "a1", si, 2, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(!si[0].ready);
	ck_assert_ptr_nonnull(strstr(si[0].detail, "No such file"));
}
END_TEST

START_TEST(test_crash_leftovers_swept)
{
	enum snap_mech m;
	struct snap_info si[2];
	char p[512];
	size_t n;

	/* a copy cut short under .work, a manifest whose root never came */
	snprintf(p, sizeof(p), "%s/.snapshots/.work/snap-a1-s9-1", shelf);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/.snapshots/.work/snap-a1-s9-1/f", shelf);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/.snapshots/a1.meta", shelf);
	mkdir(p, 0711);
	snprintf(p, sizeof(p), "%s/.snapshots/a1.meta/s9", shelf);
	{
		FILE *f = fopen(p, "w");

		fputs("uid=9999999999999999\ncreate=1\n", f);
		fclose(f);
	}
	ck_assert_int_eq(snap_list(shelf, "a1", si, 2, &n), 0);
	ck_assert_uint_eq(n, 0); /* never listed without its root */
	ck_assert_int_eq(snap_shelf_init(shelf, &m, NULL), AQ_OK);
	ck_assert_int_ne(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/.snapshots/.work/snap-a1-s9-1", shelf);
	ck_assert_int_ne(access(p, F_OK), 0);
}
END_TEST

START_TEST(test_used_bytes)
{
	uint64_t b = 1;

	ck_assert_int_eq(snap_create(shelf, "a1", root, 0xa1, &S1, NULL), 0);
	ck_assert_int_eq(snap_used_bytes(shelf, "a1", "s1", &b), 0);
	if (snap_mech_of(root) == SNAP_COPY) /* a plain copy holds its own blocks */
		ck_assert_uint_gt(b, 0);
	ck_assert_int_eq(snap_used_bytes(shelf, "a1", "nope", &b), -ENOENT);
	ck_assert_int_eq(snap_destroy_volume(shelf, "a1"), 0);
	ck_assert(!snap_exists(shelf, "a1", &S1));
}
END_TEST

static Suite *snap_suite(void)
{
	Suite *s = suite_create("snap");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_create_list_delete);
	tcase_add_test(tc, test_copy_keeps_shape);
	tcase_add_test(tc, test_revert_and_clone);
	tcase_add_test(tc, test_failed_create_reported);
	tcase_add_test(tc, test_crash_leftovers_swept);
	tcase_add_test(tc, test_used_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(snap_suite());
}
