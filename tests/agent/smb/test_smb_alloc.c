/* test_smb_alloc: SET_INFO FileAllocationInformation (agent/smb/smb_alloc.c,
 * MS-FSCC 2.4.4) through the server's dispatcher (smb_harness.h):
 * - past the end of file: FileStandardInformation reports that
 *   AllocationSize (the end of file unchanged) and the volume's free space
 *   (vol_fsstat, what FS size classes and NFS FSSTAT answer) drops by the
 *   bytes held; growing the file into it (end of file, WRITE) does not
 *   count them twice; CLOSE gives the rest back;
 * - the whole free space allocated, then filled by the open itself:
 *   succeeds (its own hold is given back before the growth is charged);
 * - more than the volume's free space: STATUS_DISK_FULL, nothing changed;
 * - under the end of file: the file is cut there;
 * - an open without FILE_WRITE_DATA: STATUS_ACCESS_DENIED, nothing changed;
 *   the same for FileEndOfFileInformation (MS-SMB2 3.3.5.21.1), which an
 *   open granted FILE_WRITE_DATA alone may set.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define READ_ONLY (0x1u | 0x80u)
#define WRITE_DATA 0x2u
#define FileStandardInformation 5u
#define FileEndOfFileInformation 20u
#define FileAllocationInformation 19u

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static struct smbt_conn a;

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
	smbt_conn_export(&a, srv, &ts, 1, 0);
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

static uint32_t set_u64(uint64_t fid, uint8_t cls, uint64_t v)
{
	uint8_t b[8];

	smbt_put64(b, v);
	return smbl_set_info(&a, fid, cls, b, sizeof(b));
}

/* FileStandardInformation of fid: AllocationSize and EndOfFile. */
static void standard(uint64_t fid, uint64_t *alloc, uint64_t *eof)
{
	uint8_t out[512];
	size_t n = 0;

	ck_assert_uint_eq(smbl_query_info(&a, fid, FileStandardInformation, 24, out, &n), STATUS_SUCCESS);
	ck_assert_uint_ge(n, 16);
	*alloc = smb_wire_get_u64(out);
	*eof = smb_wire_get_u64(out + 8);
}

static uint64_t open_file(const char *name, uint32_t access)
{
	uint64_t fid = 0;
	uint32_t attrs;

	ck_assert_uint_eq(smbl_open(&a, name, false, access, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	return fid;
}

START_TEST(test_grow_holds)
{
	uint64_t fid, f0, al, eof;

	setup();
	fid = open_file("f", ALL_ACCESS);
	ck_assert_uint_eq(smbl_write(&a, fid, "0123456789"), STATUS_SUCCESS);
	f0 = smbt_free_bytes(exp0);
	ck_assert_uint_eq(set_u64(fid, FileAllocationInformation, 1u << 20), STATUS_SUCCESS);
	standard(fid, &al, &eof);
	ck_assert_uint_eq(al, 1u << 20);
	ck_assert_uint_eq(eof, 10);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0 - ((1u << 20) - 10));
	/* the file grows into what it holds: counted once */
	ck_assert_uint_eq(set_u64(fid, FileEndOfFileInformation, 512u << 10), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0 - ((1u << 20) - 10));
	standard(fid, &al, &eof);
	ck_assert_uint_eq(al, 1u << 20);
	ck_assert_uint_eq(eof, 512u << 10);
	/* a smaller allocation, still past the end: part given back */
	ck_assert_uint_eq(set_u64(fid, FileAllocationInformation, 768u << 10), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0 - ((768u << 10) - 10));
	/* CLOSE gives the rest back: only the file's bytes stay used */
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0 - ((512u << 10) - 10));
	teardown();
}
END_TEST

START_TEST(test_fill_own_hold)
{
	uint64_t fid, g, f0;

	setup();
	fid = open_file("f", ALL_ACCESS);
	g = open_file("g", ALL_ACCESS); /* a name costs room too: made first */
	f0 = smbt_free_bytes(exp0);
	ck_assert_uint_gt(f0, 0);
	ck_assert_uint_eq(set_u64(fid, FileAllocationInformation, f0), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), 0);
	/* another file cannot take it */
	ck_assert_uint_eq(smbl_write(&a, g, "x"), STATUS_DISK_FULL);
	/* the open itself fills what it allocated: a WRITE, then the end of file */
	ck_assert_uint_eq(smbl_write(&a, fid, "abcd"), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), 0);
	ck_assert_uint_eq(set_u64(fid, FileEndOfFileInformation, f0), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), 0);
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), 0);
	teardown();
}
END_TEST

START_TEST(test_disk_full)
{
	uint64_t fid, f0, al0, eof0, al, eof;

	setup();
	fid = open_file("f", ALL_ACCESS);
	ck_assert_uint_eq(smbl_write(&a, fid, "0123456789"), STATUS_SUCCESS);
	standard(fid, &al0, &eof0);
	f0 = smbt_free_bytes(exp0);
	ck_assert_uint_eq(set_u64(fid, FileAllocationInformation, f0 + 11), STATUS_DISK_FULL);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0);
	standard(fid, &al, &eof);
	ck_assert_uint_eq(al, al0);
	ck_assert_uint_eq(eof, 10);
	/* exactly what is free (past the end): fits */
	ck_assert_uint_eq(set_u64(fid, FileAllocationInformation, f0 + 10), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_free_bytes(exp0), 0);
	teardown();
}
END_TEST

START_TEST(test_cut_and_access)
{
	uint64_t fid, ro, al, eof, f0;

	setup();
	fid = open_file("f", ALL_ACCESS);
	ck_assert_uint_eq(smbl_write(&a, fid, "0123456789"), STATUS_SUCCESS);
	ro = open_file("f", READ_ONLY);
	f0 = smbt_free_bytes(exp0);
	ck_assert_uint_eq(set_u64(ro, FileAllocationInformation, 1u << 20), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(set_u64(ro, FileAllocationInformation, 2), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0);
	standard(fid, &al, &eof);
	ck_assert_uint_eq(eof, 10);
	ck_assert_uint_eq(set_u64(fid, FileAllocationInformation, 4), STATUS_SUCCESS);
	standard(fid, &al, &eof);
	ck_assert_uint_eq(eof, 4);
	ck_assert_uint_ge(al, 4);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0 + 6);
	teardown();
}
END_TEST

/* FileEndOfFileInformation needs FILE_WRITE_DATA: an open for reading
 * (and its attributes) gets STATUS_ACCESS_DENIED, cutting or growing, and
 * neither the end of file nor the volume's free space moves; an open
 * granted FILE_WRITE_DATA alone sets it. */
START_TEST(test_eof_access)
{
	uint64_t fid, ro, wd, al, eof, f0;

	setup();
	fid = open_file("f", ALL_ACCESS);
	ck_assert_uint_eq(smbl_write(&a, fid, "0123456789"), STATUS_SUCCESS);
	ro = open_file("f", READ_ONLY);
	wd = open_file("f", WRITE_DATA);
	f0 = smbt_free_bytes(exp0);
	ck_assert_uint_eq(set_u64(ro, FileEndOfFileInformation, 2), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(set_u64(ro, FileEndOfFileInformation, 1u << 20), STATUS_ACCESS_DENIED);
	standard(fid, &al, &eof);
	ck_assert_uint_eq(eof, 10);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0);
	ck_assert_uint_eq(set_u64(wd, FileEndOfFileInformation, 4), STATUS_SUCCESS);
	standard(fid, &al, &eof);
	ck_assert_uint_eq(eof, 4);
	ck_assert_uint_eq(smbt_free_bytes(exp0), f0 + 6);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_alloc");
	TCase *tc = tcase_create("allocation");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_grow_holds);
	tcase_add_test(tc, test_fill_own_hold);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_cut_and_access);
	tcase_add_test(tc, test_eof_access);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
