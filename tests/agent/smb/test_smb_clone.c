/* test_smb_clone: FSCTL_DUPLICATE_EXTENTS_TO_FILE over SMB (agent/smb/smb_clone.c)
 * through the server's own dispatcher (smb_harness.h):
 * - on a btrfs loop file system (root and mkfs.btrfs; skipped with a note
 *   otherwise): a range of one open cloned into another reads as the
 *   source's bytes, the rest of the target kept; the part past the
 *   target's end is not cloned (its size stays); misaligned offsets are
 *   INVALID_PARAMETER, overlapping ranges of one file and a range past the
 *   source's end NOT_SUPPORTED, a source FileId not open INVALID_HANDLE, a
 *   target open without write access ACCESS_DENIED, the target unchanged;
 * - on the test's own folder (ext4 or tmpfs): INVALID_DEVICE_REQUEST, as before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_clone.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define READ_ONLY (0x1u | 0x80u)
#define K64 65536u

static struct aqt_store ts;
static struct smb_srv *srv;
static const struct vol_cred root_cred = { .uid = 0, .gid = 0 };
static struct aqt_loop lp; /* the btrfs loop mount; lp.top[0] == 0: none */

static void loop_up(void)
{
	aqt_loop_up(&lp, "smb-clone", "256M", "command -v mkfs.btrfs >/dev/null && mkfs.btrfs -q -f");
}

static void loop_down(void)
{
	aqt_loop_down(&lp);
}

/* The store over a folder of the btrfs mount (btrfs) or the test's own. */
static void up(bool btrfs)
{
	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 100, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 1 });
	if (btrfs)
		aqt_loop_export(&lp, &ts, 0);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	smbt_srv_new(ts.store, &srv);
}

static void down(void)
{
	smbt_srv_free(srv);
	aqt_store_cleanup(&ts);
}

/* The store's file name: len bytes of c, written as root. */
static void put(const char *name, char c, size_t len)
{
	struct vol_export *e = vol_export_at(ts.store, 0);
	struct vol_obj r, f;
	char *data = malloc(len);
	int committed;

	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(data);
	memset(data, c, len);
	ck_assert_int_eq(vol_root(e, &r), 0);
	ck_assert_int_eq(vol_create(&r, &root_cred, name, strlen(name), false, NULL, NULL, &f), 0);
	ck_assert_int_eq(vol_write(&f, &root_cred, 0, data, len, 2, &committed), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
	vol_export_unref(e);
	free(data);
}

/* Whether [off, off+len) of the store's file name reads as c, and its size. */
static bool reads_as(const char *name, uint64_t off, size_t len, char c, uint64_t *size)
{
	struct vol_export *e = vol_export_at(ts.store, 0);
	struct vol_obj r, f;
	char *b = malloc(len);
	size_t got = 0;
	bool eof, ok;

	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(vol_root(e, &r), 0);
	ck_assert_int_eq(vol_lookup(&r, &root_cred, name, strlen(name), &f), 0);
	ck_assert_int_eq(vol_read(&f, &root_cred, off, b, len, &got, &eof), 0);
	ok = got == len;
	for (size_t i = 0; ok && i < len; i++)
		ok = b[i] == c;
	*size = (uint64_t)f.st.st_size;
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
	vol_export_unref(e);
	free(b);
	return ok;
}

/* FSCTL_DUPLICATE_EXTENTS_TO_FILE on dst from src: its status. */
static uint32_t dup_ext(struct smbt_conn *tc, uint64_t dst, uint64_t src, uint64_t soff, uint64_t doff, uint64_t len)
{
	uint8_t in[40];
	struct smbt_fsctl_rsp r;

	smbt_put64(in, src);
	smbt_put64(in + 8, src);
	smbt_put64(in + 16, soff);
	smbt_put64(in + 24, doff);
	smbt_put64(in + 32, len);
	smbt_fsctl(tc, dst, FSCTL_DUPLICATE_EXTENTS_TO_FILE, in, sizeof(in), 0, &r);
	return r.status;
}

static uint64_t open_file(struct smbt_conn *tc, const char *name, uint32_t access)
{
	uint64_t fid = 0;
	uint32_t got = 0;

	ck_assert_uint_eq(smbl_open(tc, name, false, access, 0, 0, &fid, &got), STATUS_SUCCESS);
	return fid;
}

/* Whether the store's folder clones (vol_clone_supported on its root). */
static bool clones(void)
{
	struct vol_export *e = vol_export_at(ts.store, 0);
	struct vol_obj r;
	bool yes;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &r), 0);
	yes = vol_clone_supported(&r);
	vol_obj_cleanup(&r);
	vol_export_unref(e);
	return yes;
}

START_TEST(test_clone_btrfs)
{
	struct smbt_conn a;
	uint64_t fa, fb, ro, size;

	if (!lp.top[0]) {
		fprintf(stderr, "# SKIP test_clone_btrfs: no btrfs loop file system here (root and mkfs.btrfs)\n");
		return;
	}
	up(true);
	put("a", 'a', 2 * K64);
	put("b", 'b', 2 * K64);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "a", ALL_ACCESS);
	fb = open_file(&a, "b", ALL_ACCESS);
	ck_assert_uint_eq(dup_ext(&a, fb, fa, K64, 0, K64), STATUS_SUCCESS);
	ck_assert(reads_as("b", 0, K64, 'a', &size));
	ck_assert(reads_as("b", K64, K64, 'b', &size));
	/* past the target's end: not cloned, the size stays */
	ck_assert_uint_eq(dup_ext(&a, fb, fa, 0, K64, 2 * K64), STATUS_SUCCESS);
	ck_assert(reads_as("b", K64, K64, 'a', &size));
	ck_assert_uint_eq(size, 2 * K64);
	/* refusals change nothing */
	put("c", 'c', 2 * K64);
	fb = open_file(&a, "c", ALL_ACCESS);
	ck_assert_uint_eq(dup_ext(&a, fb, fa, 512, 0, 4096), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(dup_ext(&a, fb, fa, 0, 0, 3 * K64), STATUS_NOT_SUPPORTED);
	ck_assert_uint_eq(dup_ext(&a, fa, fa, 0, 4096, K64), STATUS_NOT_SUPPORTED);
	ck_assert_uint_eq(dup_ext(&a, fb, 0x7777, 0, 0, K64), STATUS_INVALID_HANDLE);
	ro = open_file(&a, "c", READ_ONLY);
	ck_assert_uint_eq(dup_ext(&a, ro, fa, 0, 0, K64), STATUS_ACCESS_DENIED);
	ck_assert(reads_as("c", 0, 2 * K64, 'c', &size));
	ck_assert(reads_as("a", 0, 2 * K64, 'a', &size));
	down();
}
END_TEST

START_TEST(test_clone_plain)
{
	struct smbt_conn a;
	uint64_t fa, fb, size;

	up(false);
	if (clones()) {
		fprintf(stderr, "# SKIP test_clone_plain: the test's folder clones\n");
		down();
		return;
	}
	put("a", 'a', K64);
	put("b", 'b', K64);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "a", ALL_ACCESS);
	fb = open_file(&a, "b", ALL_ACCESS);
	ck_assert_uint_eq(dup_ext(&a, fb, fa, 0, 0, K64), STATUS_INVALID_DEVICE_REQUEST);
	ck_assert(reads_as("b", 0, K64, 'b', &size));
	down();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_clone");
	TCase *tp = tcase_create("plain"), *tb = tcase_create("btrfs");

	if (geteuid() != 0) {
		fprintf(stderr, "test_smb_clone needs root (open_by_handle_at, the loop mount)\n");
		return 77;
	}
	tcase_set_timeout(tp, 30);
	tcase_add_test(tp, test_clone_plain);
	suite_add_tcase(s, tp);
	tcase_add_unchecked_fixture(tb, loop_up, loop_down);
	tcase_set_timeout(tb, 60);
	tcase_add_test(tb, test_clone_btrfs);
	suite_add_tcase(s, tb);
	return aqt_run(s);
}
