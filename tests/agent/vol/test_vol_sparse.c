/* test_vol_sparse: holes in the volume store (agent/vol/vol_sparse.c):
 * - vol_zero_range with dealloc punches a hole: the bytes read as zeroes,
 *   the size stays, and the shelf file itself has the hole (SEEK_HOLE, what
 *   the NFS server and the kernel see); vol_alloc_ranges answers the
 *   extents around it, merged and clipped to the size, at most cap of them;
 * - without dealloc the zeroes stay allocated;
 * - a range past the end zeroes nothing there and keeps the size;
 * - bad input changes nothing: an overflowing range (-EINVAL), a folder
 *   (-EISDIR), a user without write access (-EACCES), a snapshot-free
 *   empty range (0, nothing done).
 * Needs root (the store's handles and marks). */
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
#include <unistd.h>

#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define K64 65536u

static struct aqt_store ts;
static struct vol_export *e;
static struct vol_obj root;
static const struct vol_cred cred = { 0, 0, 0, { 0 }, 0 };
static const struct vol_cred nobody = { 65534, 65534, 0, { 0 }, 0 };

static void setup(void)
{
	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "s", .fsid = 310, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 5 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	ck_assert_ptr_nonnull(e = vol_export_at(ts.store, 0));
	ck_assert_int_eq(vol_root(e, &root), 0);
}

static void teardown(void)
{
	vol_obj_cleanup(&root);
	vol_export_unref(e);
	aqt_store_cleanup(&ts);
}

/* "f": 3 x 64 KiB of 'x', mode 0644 (root's). */
static void make_file(struct vol_obj *f)
{
	static char data[3 * K64];
	int committed;

	memset(data, 'x', sizeof(data));
	ck_assert_int_eq(vol_create(&root, &cred, "f", 1, true, NULL, NULL, f), 0);
	ck_assert_int_eq(vol_write(f, &cred, 0, data, sizeof(data), 2, &committed), 0);
}

static blkcnt_t blocks; /* of "f", at the last shelf_view() */

/* The shelf's own view of "f": its size and where its first hole starts. */
static void shelf_view(off_t *size, off_t *hole)
{
	char p[128];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*size = st.st_size;
	*hole = lseek(fd, 0, SEEK_HOLE);
	blocks = st.st_blocks;
	close(fd);
}

/* Whether f's bytes [off, off+len) are all c. */
static bool bytes_are(struct vol_obj *f, uint64_t off, size_t len, char c)
{
	static char buf[3 * K64];
	size_t got = 0;
	bool eof;

	ck_assert_uint_le(len, sizeof(buf));
	ck_assert_int_eq(vol_read(f, &cred, off, buf, len, &got, &eof), 0);
	ck_assert_uint_eq(got, len);
	for (size_t i = 0; i < len; i++)
		if (buf[i] != c)
			return false;
	return true;
}

START_TEST(test_punch_and_ranges)
{
	struct vol_obj f;
	struct vol_range rg[4];
	size_t n = 9;
	bool more = true;
	off_t size, hole;

	setup();
	make_file(&f);
	ck_assert_int_eq(vol_alloc_ranges(&f, &cred, 0, 1 << 20, rg, 4, &n, &more), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(!more);
	ck_assert_uint_eq(rg[0].off, 0);
	ck_assert_uint_eq(rg[0].len, 3 * K64); /* clipped to the size */
	ck_assert_int_eq(vol_zero_range(&f, &cred, K64, K64, true, NULL), 0);
	ck_assert(bytes_are(&f, 0, K64, 'x'));
	ck_assert(bytes_are(&f, K64, K64, 0));
	ck_assert(bytes_are(&f, 2 * K64, K64, 'x'));
	shelf_view(&size, &hole);
	ck_assert_int_eq(size, 3 * K64);
	ck_assert_int_eq(hole, K64); /* the shelf file has the hole: NFS sees it */
	ck_assert_int_lt(blocks, 3 * K64 / 512);
	ck_assert_int_eq(vol_alloc_ranges(&f, &cred, 0, 1 << 20, rg, 4, &n, &more), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert(!more);
	ck_assert_uint_eq(rg[0].off, 0);
	ck_assert_uint_eq(rg[0].len, K64);
	ck_assert_uint_eq(rg[1].off, 2 * K64);
	ck_assert_uint_eq(rg[1].len, K64);
	/* a window inside: clipped to it */
	ck_assert_int_eq(vol_alloc_ranges(&f, &cred, 100, K64, rg, 4, &n, &more), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(rg[0].off, 100);
	ck_assert_uint_eq(rg[0].len, K64 - 100);
	/* one slot for two ranges: the first, and more */
	ck_assert_int_eq(vol_alloc_ranges(&f, &cred, 0, 1 << 20, rg, 1, &n, &more), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(more);
	ck_assert_uint_eq(rg[0].len, K64);
	/* the hole alone: nothing allocated */
	ck_assert_int_eq(vol_alloc_ranges(&f, &cred, K64, K64, rg, 4, &n, &more), 0);
	ck_assert_uint_eq(n, 0);
	vol_obj_cleanup(&f);
	teardown();
}
END_TEST

START_TEST(test_keep_allocated_and_eof)
{
	struct vol_obj f;
	off_t size, hole;

	setup();
	make_file(&f);
	/* zeroes kept allocated: no hole */
	ck_assert_int_eq(vol_zero_range(&f, &cred, 0, K64, false, NULL), 0);
	ck_assert(bytes_are(&f, 0, K64, 0));
	ck_assert(bytes_are(&f, K64, 2 * K64, 'x'));
	shelf_view(&size, &hole);
	ck_assert_int_ge(blocks, 3 * K64 / 512); /* allocated (SEEK_HOLE may see ext4's unwritten extents) */
	/* a range running past the end: zeroed up to it, the size stays */
	ck_assert_int_eq(vol_zero_range(&f, &cred, 2 * K64, 1 << 20, true, NULL), 0);
	shelf_view(&size, &hole);
	ck_assert_int_eq(size, 3 * K64);
	ck_assert(bytes_are(&f, 2 * K64, K64, 0));
	ck_assert(bytes_are(&f, K64, K64, 'x'));
	/* wholly past the end: nothing */
	ck_assert_int_eq(vol_zero_range(&f, &cred, 1 << 20, K64, true, NULL), 0);
	shelf_view(&size, &hole);
	ck_assert_int_eq(size, 3 * K64);
	vol_obj_cleanup(&f);
	teardown();
}
END_TEST

START_TEST(test_bad_input_changes_nothing)
{
	struct vol_obj f, d;
	struct vol_range rg[2];
	size_t n = 7;
	bool more;
	off_t size, hole;

	setup();
	make_file(&f);
	ck_assert_int_eq(vol_zero_range(&f, &cred, K64, UINT64_MAX, true, NULL), -EINVAL);
	ck_assert_int_eq(vol_zero_range(&f, &cred, K64, 0, true, NULL), 0);
	ck_assert_int_eq(vol_zero_range(&f, &nobody, 0, K64, true, NULL), -EACCES);
	ck_assert(bytes_are(&f, 0, 3 * K64, 'x'));
	shelf_view(&size, &hole);
	ck_assert_int_eq(size, 3 * K64);
	ck_assert_int_eq(hole, 3 * K64);
	ck_assert_int_eq(vol_alloc_ranges(&f, &cred, 1, UINT64_MAX, rg, 2, &n, &more), -EINVAL);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(vol_mkdir(&root, &cred, "d", 1, NULL, &d), 0);
	ck_assert_int_eq(vol_zero_range(&d, &cred, 0, K64, true, NULL), -EISDIR);
	ck_assert_int_eq(vol_alloc_ranges(&d, &cred, 0, K64, rg, 2, &n, &more), -EISDIR);
	vol_obj_cleanup(&d);
	vol_obj_cleanup(&f);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_sparse");
	TCase *tc = tcase_create("sparse");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_punch_and_ranges);
	tcase_add_test(tc, test_keep_allocated_and_eof);
	tcase_add_test(tc, test_bad_input_changes_nothing);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
