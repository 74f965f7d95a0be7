/* test_smb_sparse: sparse files over SMB (agent/smb/smb_sparse.c) through
 * the server's own dispatcher (smb_harness.h):
 * - FSCTL_SET_SPARSE with no buffer sets FILE_ATTRIBUTE_SPARSE_FILE (kept
 *   in the store, answered by the next CREATE), a buffer of 0 clears it; a
 *   folder is INVALID_PARAMETER, an open without write access
 *   ACCESS_DENIED, the flag unchanged;
 * - FSCTL_SET_ZERO_DATA on a sparse file punches a hole in the store's
 *   file, and FSCTL_QUERY_ALLOCATED_RANGES answers the extents around it;
 *   a file not sparse answers its whole range, and keeps its size when the
 *   range runs past the end;
 * - bad input changes nothing: a reversed range or a short input
 *   (INVALID_PARAMETER), no write access (ACCESS_DENIED); ranges that do
 *   not fit MaxOutputResponse are BUFFER_TOO_SMALL (what smbd answers),
 *   an empty input or an overflowing range INVALID_PARAMETER, no read
 *   access ACCESS_DENIED.
 */
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

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define READ_ONLY (0x1u | 0x80u)
#define ATTRS_ONLY (0x80u | 0x100u) /* READ_ATTRIBUTES | WRITE_ATTRIBUTES */
#define K64 65536u

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static const struct vol_cred root_cred = { .uid = 0, .gid = 0 };

/* A FILE_ZERO_DATA_INFORMATION / FILE_ALLOCATED_RANGE_BUFFER. */
static const uint8_t *range(uint8_t in[16], uint64_t a, uint64_t b)
{
	smbt_put64(in, a);
	smbt_put64(in + 8, b);
	return in;
}

static uint64_t open_file(struct smbt_conn *tc, const char *name, uint32_t access, uint32_t *attrs)
{
	uint64_t fid = 0;
	uint32_t got = 0;

	ck_assert_uint_eq(smbl_open(tc, name, false, access, 0, 0, &fid, &got), STATUS_SUCCESS);
	if (attrs)
		*attrs = got;
	return fid;
}

/* The store's file "f": 3 x 64 KiB of 'x' written as root. */
static void fill(void)
{
	static char data[3 * K64];
	struct vol_obj r, f;
	int committed;

	memset(data, 'x', sizeof(data));
	ck_assert_int_eq(vol_root(exp0, &r), 0);
	ck_assert_int_eq(vol_lookup(&r, &root_cred, "f", 1, &f), 0);
	ck_assert_int_eq(vol_write(&f, &root_cred, 0, data, sizeof(data), 2, &committed), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
}

/* The shelf's view of "f": its size, its first hole, and whether its
 * bytes [off, off+len) are all c. */
static blkcnt_t blocks; /* of "f", at the last shelf() */

static bool shelf(off_t *size, off_t *hole, off_t off, size_t len, char c)
{
	char p[128], buf[K64];
	struct stat st;
	bool same = true;
	int fd;

	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*size = st.st_size;
	*hole = lseek(fd, 0, SEEK_HOLE);
	blocks = st.st_blocks;
	ck_assert_uint_le(len, sizeof(buf));
	ck_assert_int_eq(pread(fd, buf, len, off), (ssize_t)len);
	for (size_t i = 0; i < len; i++)
		same = same && buf[i] == c;
	close(fd);
	return same;
}

START_TEST(test_set_sparse)
{
	struct smbt_conn a;
	struct smbt_fsctl_rsp r;
	uint8_t zero = 0;
	uint32_t attrs = 0;
	uint64_t fid, dir = 0;

	smbt_export_up(&ts, &srv, &exp0);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fid = open_file(&a, "f", ALL_ACCESS, &attrs);
	ck_assert_uint_eq(attrs & FILE_ATTRIBUTE_SPARSE_FILE, 0);
	smbt_fsctl(&a, fid, FSCTL_SET_SPARSE, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	open_file(&a, "f", ALL_ACCESS, &attrs);
	ck_assert_uint_eq(attrs & FILE_ATTRIBUTE_SPARSE_FILE, FILE_ATTRIBUTE_SPARSE_FILE);
	/* no write access: refused, still sparse */
	smbt_fsctl(&a, open_file(&a, "f", READ_ONLY, NULL), FSCTL_SET_SPARSE, &zero, 1, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_ACCESS_DENIED);
	open_file(&a, "f", ALL_ACCESS, &attrs);
	ck_assert_uint_eq(attrs & FILE_ATTRIBUTE_SPARSE_FILE, FILE_ATTRIBUTE_SPARSE_FILE);
	/* WRITE_ATTRIBUTES is enough; a buffer of 0 clears */
	smbt_fsctl(&a, open_file(&a, "f", ATTRS_ONLY, NULL), FSCTL_SET_SPARSE, &zero, 1, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	open_file(&a, "f", ALL_ACCESS, &attrs);
	ck_assert_uint_eq(attrs & FILE_ATTRIBUTE_SPARSE_FILE, 0);
	ck_assert_uint_eq(smbl_open(&a, "d", true, ALL_ACCESS, 0, 0, &dir, &attrs), STATUS_SUCCESS);
	smbt_fsctl(&a, dir, FSCTL_SET_SPARSE, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

START_TEST(test_zero_and_ranges)
{
	struct smbt_conn a;
	struct smbt_fsctl_rsp r;
	uint8_t in[16];
	uint64_t fid;
	off_t size, hole;

	smbt_export_up(&ts, &srv, &exp0);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fid = open_file(&a, "f", ALL_ACCESS, NULL);
	fill();
	/* not sparse: zeroed in place, the whole range allocated, the size kept past the end */
	smbt_fsctl(&a, fid, FSCTL_SET_ZERO_DATA, range(in, 2 * K64, 1 << 20), 16, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert(shelf(&size, &hole, 2 * K64, K64, 0));
	ck_assert_int_eq(size, 3 * K64);
	ck_assert_int_ge(blocks, 3 * K64 / 512); /* still allocated (SEEK_HOLE may see unwritten extents) */
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, range(in, 0, 1 << 20), 16, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.out_len, 16);
	ck_assert_uint_eq(smb_wire_get_u64(r.out), 0);
	ck_assert_uint_eq(smb_wire_get_u64(r.out + 8), 3 * K64);
	/* sparse: a hole in the store's file, the extents around it */
	smbt_fsctl(&a, fid, FSCTL_SET_SPARSE, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	smbt_fsctl(&a, fid, FSCTL_SET_ZERO_DATA, range(in, K64, 2 * K64), 16, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert(shelf(&size, &hole, K64, K64, 0));
	ck_assert(shelf(&size, &hole, 0, K64, 'x'));
	ck_assert_int_eq(hole, K64);
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, range(in, 0, 1 << 20), 16, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.out_len, 32);
	ck_assert_uint_eq(smb_wire_get_u64(r.out), 0);
	ck_assert_uint_eq(smb_wire_get_u64(r.out + 8), K64);
	ck_assert_uint_eq(smb_wire_get_u64(r.out + 16), 2 * K64);
	ck_assert_uint_eq(smb_wire_get_u64(r.out + 24), K64);
	/* past the end, or an empty range: no ranges */
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, range(in, 3 * K64, K64), 16, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.out_len, 0);
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

START_TEST(test_bad_input)
{
	struct smbt_conn a;
	struct smbt_fsctl_rsp r;
	uint8_t in[16];
	uint64_t fid;
	off_t size, hole;

	smbt_export_up(&ts, &srv, &exp0);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fid = open_file(&a, "f", ALL_ACCESS, NULL);
	fill();
	smbt_fsctl(&a, fid, FSCTL_SET_SPARSE, NULL, 0, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	/* zero data: reversed, short, without write access: nothing changes */
	smbt_fsctl(&a, fid, FSCTL_SET_ZERO_DATA, range(in, 2 * K64, K64), 16, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	smbt_fsctl(&a, fid, FSCTL_SET_ZERO_DATA, range(in, 0, K64), 15, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	smbt_fsctl(&a, open_file(&a, "f", READ_ONLY, NULL), FSCTL_SET_ZERO_DATA, range(in, 0, K64), 16, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_ACCESS_DENIED);
	ck_assert(shelf(&size, &hole, 0, K64, 'x'));
	ck_assert(shelf(&size, &hole, K64, K64, 'x'));
	ck_assert(shelf(&size, &hole, 2 * K64, K64, 'x'));
	ck_assert_int_eq(size, 3 * K64);
	ck_assert_int_eq(hole, 3 * K64);
	/* allocated ranges: no room for the one range, room for one of two */
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, range(in, 0, K64), 16, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_BUFFER_TOO_SMALL);
	ck_assert_uint_eq(r.out_len, 0);
	smbt_fsctl(&a, fid, FSCTL_SET_ZERO_DATA, range(in, K64, 2 * K64), 16, 0, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, range(in, 0, 1 << 20), 16, 31, &r);
	ck_assert_uint_eq(r.status, STATUS_BUFFER_TOO_SMALL);
	ck_assert_uint_eq(r.out_len, 0);
	/* an empty or short input, an overflowing range, no read access */
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, NULL, 0, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, range(in, 0, K64), 8, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	smbt_fsctl(&a, fid, FSCTL_QUERY_ALLOCATED_RANGES, range(in, 1, UINT64_MAX), 16, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	smbt_fsctl(&a, open_file(&a, "f", 0x2u | 0x80u, NULL), FSCTL_QUERY_ALLOCATED_RANGES, range(in, 0, K64), 16, 64,
		   &r);
	ck_assert_uint_eq(r.status, STATUS_ACCESS_DENIED);
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_sparse");
	TCase *tc = tcase_create("sparse");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_set_sparse);
	tcase_add_test(tc, test_zero_and_ranges);
	tcase_add_test(tc, test_bad_input);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
