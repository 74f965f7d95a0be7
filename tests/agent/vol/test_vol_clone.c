/* test_vol_clone: block cloning in the store (agent/vol/vol_clone.c).
 * On a btrfs loop file system made here (root and mkfs.btrfs; skipped with
 * a note otherwise): the probe says the folder clones; a cloned range reads
 * as the source's bytes, grows the target past its end, shares the blocks
 * (the file system's used space barely moves); misaligned offsets, a range
 * past the source's end and overlapping ranges of one file are -EINVAL,
 * the target unchanged. On the test's own folder (tmpfs or ext4 here): the
 * probe says no, and a clone is -EOPNOTSUPP, nothing changed. Either way
 * the probe ran as vol_store_set attached the export (no I/O at the first
 * question, which the SMB loop asks); the next set keeps a volume's answer
 * (same id, same file system) and probes again one it could not make.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_clone.h"
#include "agent/vol/vol_internal.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define BTRFS_MAGIC_ 0x9123683Eu
#define K64 65536u

static struct aqt_store ts;
static const struct vol_cred root = {0, 0, 0, {0}, 0};
/* The btrfs loop file system: made and mounted once by the parent (an
 * unchecked fixture). lp.top[0] == 0: none could be made here. */
static struct aqt_loop lp;

static void loop_up(void)
{
	aqt_loop_up(&lp, "vol-clone", "256M", "command -v mkfs.btrfs >/dev/null && mkfs.btrfs -q -f");
}

static void loop_down(void)
{
	aqt_loop_down(&lp);
}

static void setup_with(bool btrfs)
{
	aqt_store_init(&ts, 1,
		       &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 310, .capacity = 1ull << 30,
						 .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 7 });
	if (btrfs)
		aqt_loop_export(&lp, &ts, 0);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
}

static void setup_plain(void)
{
	setup_with(false);
}

static void setup_btrfs(void)
{
	setup_with(true);
}

static void teardown(void)
{
	aqt_store_cleanup(&ts);
}

static struct vol_obj root_of(void)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	struct vol_obj o;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &o), 0);
	vol_export_unref(e);
	return o;
}

/* A new file name of the root holding len bytes of c (len 0: empty). */
static struct vol_obj file(struct vol_obj *r, const char *name, char c, size_t len)
{
	struct vol_obj f;
	char *b = malloc(len ? len : 1);
	int committed;

	ck_assert_ptr_nonnull(b);
	memset(b, c, len);
	ck_assert_int_eq(vol_create(r, &root, name, strlen(name), false, NULL, NULL, &f), 0);
	if (len)
		ck_assert_int_eq(vol_write(&f, &root, 0, b, len, 2, &committed), 0);
	free(b);
	return f;
}

/* Whether [off, off+len) of f reads as c throughout. */
static bool reads_as(struct vol_obj *f, uint64_t off, size_t len, char c)
{
	char *b = malloc(len);
	size_t got = 0;
	bool eof, ok;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(vol_read(f, &root, off, b, len, &got, &eof), 0);
	ok = got == len;
	for (size_t i = 0; ok && i < len; i++)
		ok = b[i] == c;
	free(b);
	return ok;
}

START_TEST(test_clone_btrfs)
{
	struct vol_obj r, a, b;
	struct statvfs s0, s1;

	if (!lp.top[0]) {
		fprintf(stderr, "# SKIP test_clone_btrfs: no btrfs loop file system here (root and mkfs.btrfs)\n");
		return;
	}
	r = root_of();
	ck_assert(vol_clone_supported(&r));
	ck_assert_uint_eq(vol_clone_unit(&r), 4096);
	a = file(&r, "a", 'a', 8 * K64);
	b = file(&r, "b", 'b', K64);
	ck_assert_int_eq(statvfs(ts.cfg[0].root, &s0), 0);
	/* a's second half over b's end: b grows to 6 x 64 KiB, [0, 2 x 64 KiB) stays */
	ck_assert_int_eq(vol_clone(&a, &root, 4 * K64, &b, &root, 2 * K64, 4 * K64, NULL), 0);
	ck_assert_int_eq(vol_refresh(&b), 0);
	ck_assert_uint_eq((uint64_t)b.st.st_size, 6 * K64);
	ck_assert(reads_as(&b, 0, K64, 'b'));
	ck_assert(reads_as(&b, K64, K64, '\0'));
	ck_assert(reads_as(&b, 2 * K64, 4 * K64, 'a'));
	/* shared blocks: 256 KiB cloned, the file system's used space grows far less */
	sync();
	ck_assert_int_eq(statvfs(ts.cfg[0].root, &s1), 0);
	ck_assert_uint_lt((s0.f_bfree - s1.f_bfree) * s0.f_frsize, 128 * 1024);
	/* refusals change nothing */
	ck_assert_int_eq(vol_clone(&a, &root, 100, &b, &root, 0, 4096, NULL), -EINVAL);
	ck_assert_int_eq(vol_clone(&a, &root, 0, &b, &root, 512, 4096, NULL), -EINVAL);
	ck_assert_int_eq(vol_clone(&a, &root, 0, &b, &root, 0, 4000, NULL), -EINVAL);
	ck_assert_int_eq(vol_clone(&a, &root, 7 * K64, &b, &root, 0, 2 * K64, NULL), -EINVAL);
	ck_assert_int_eq(vol_clone(&a, &root, 0, &a, &root, 4096, K64, NULL), -EINVAL);
	ck_assert_int_eq(vol_refresh(&b), 0);
	ck_assert_uint_eq((uint64_t)b.st.st_size, 6 * K64);
	ck_assert(reads_as(&b, 0, K64, 'b'));
	/* a length to the source's end need not be whole blocks */
	vol_obj_cleanup(&a);
	a = file(&r, "c", 'c', 5000);
	ck_assert_int_eq(vol_clone(&a, &root, 0, &b, &root, 6 * K64, 5000, NULL), 0);
	ck_assert_int_eq(vol_refresh(&b), 0);
	ck_assert_uint_eq((uint64_t)b.st.st_size, 6 * K64 + 5000);
	ck_assert(reads_as(&b, 6 * K64, 5000, 'c'));
	vol_obj_cleanup(&a);
	vol_obj_cleanup(&b);
	vol_obj_cleanup(&r);
}
END_TEST

START_TEST(test_clone_plain)
{
	struct statfs sf;
	struct vol_obj r, a, b;

	ck_assert_int_eq(statfs(ts.cfg[0].root, &sf), 0);
	if ((uint32_t)sf.f_type == BTRFS_MAGIC_) {
		fprintf(stderr, "# SKIP test_clone_plain: the test's folder is btrfs\n");
		return;
	}
	r = root_of();
	ck_assert(!vol_clone_supported(&r));
	a = file(&r, "a", 'a', 2 * K64);
	b = file(&r, "b", 'b', K64);
	ck_assert_int_eq(vol_clone(&a, &root, 0, &b, &root, 0, 2 * K64, NULL), -EOPNOTSUPP);
	ck_assert_int_eq(vol_refresh(&b), 0);
	ck_assert_uint_eq((uint64_t)b.st.st_size, K64);
	ck_assert(reads_as(&b, 0, K64, 'b'));
	vol_obj_cleanup(&a);
	vol_obj_cleanup(&b);
	vol_obj_cleanup(&r);
}
END_TEST

/* The export's answer as it is now (no probe: vol_clone_supported's field). */
static int clone_ok_now(void)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	int ok;

	ck_assert_ptr_nonnull(e);
	ok = atomic_load(&e->clone_ok);
	vol_export_unref(e);
	return ok;
}

static void clone_ok_force(int ok)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));

	ck_assert_ptr_nonnull(e);
	atomic_store(&e->clone_ok, ok);
	vol_export_unref(e);
}

START_TEST(test_probe_at_attach)
{
	struct statfs sf;
	int want;

	ck_assert_int_eq(statfs(ts.cfg[0].root, &sf), 0);
	want = (uint32_t)sf.f_type == BTRFS_MAGIC_ ? 1 : -1;
	/* decided by vol_store_set, before anything asked */
	ck_assert_int_eq(clone_ok_now(), want);
	/* the next set keeps the volume's answer: not probed again (a
	 * planted answer survives) */
	clone_ok_force(-want);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
	ck_assert_int_eq(clone_ok_now(), -want);
	/* one whose probe could not be made is probed again */
	clone_ok_force(-2);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
	ck_assert_int_eq(clone_ok_now(), want);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_clone");
	TCase *tp = tcase_create("plain"), *tb = tcase_create("btrfs");

	if (geteuid() != 0) {
		fprintf(stderr, "test_vol_clone needs root (open_by_handle_at)\n");
		return 77;
	}
	tcase_add_checked_fixture(tp, setup_plain, teardown);
	tcase_add_test(tp, test_clone_plain);
	tcase_add_test(tp, test_probe_at_attach);
	suite_add_tcase(s, tp);
	tcase_add_unchecked_fixture(tb, loop_up, loop_down);
	tcase_add_checked_fixture(tb, setup_btrfs, teardown);
	tcase_set_timeout(tb, 60);
	tcase_add_test(tb, test_clone_btrfs);
	suite_add_tcase(s, tb);
	return aqt_run(s);
}
