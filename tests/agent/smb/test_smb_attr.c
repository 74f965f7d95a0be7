/* test_smb_attr: DOS attributes (agent/vol/vol_dos.c, agent/smb/smb_open.c,
 * agent/smb/smb_info.c) through the server's own dispatcher (smb_harness.h):
 * - CREATE's FileAttributes are kept in the store (HIDDEN|SYSTEM, with
 *   ARCHIVE added for a file), answered by the CREATE and QUERY_INFO;
 *   a file never given any shows ARCHIVE, a directory DIRECTORY;
 * - SET_INFO FileBasicInformation sets them (NORMAL clears them, 0 leaves
 *   them), DIRECTORY on a file or TEMPORARY on a directory is
 *   INVALID_PARAMETER and changes nothing (a CREATE asking VOLUME or a
 *   TEMPORARY directory makes nothing),
 *   an open without FILE_WRITE_ATTRIBUTES is ACCESS_DENIED;
 * - READONLY has its effect: an open for writing ACCESS_DENIED, delete on
 *   close and the disposition CANNOT_DELETE, an open for reading works;
 * - a change of attributes is reported to the store's watches
 *   (CHANGE_NOTIFY's FILE_NOTIFY_CHANGE_ATTRIBUTES);
 * - a snapshot object refuses them (-EROFS is the store's contract: not
 *   reached here), the store drops bits it does not keep.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_watch.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FileBasicInformation 4u
#define FileDispositionInformation 13u
#define A_R FILE_ATTRIBUTE_READONLY
#define A_H FILE_ATTRIBUTE_HIDDEN
#define A_S FILE_ATTRIBUTE_SYSTEM
#define A_A FILE_ATTRIBUTE_ARCHIVE
#define RW_ACCESS (0x3u | 0x80u | 0x100u | 0x10000u) /* read/write data and attributes, delete */
#define READ_ACCESS (0x1u | 0x80u)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static const struct vol_cred root_cred = { .uid = 0, .gid = 0 };

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

static void conn_new(struct smbt_conn *tc)
{
	smbt_conn_export(tc, srv, &ts, 1, 0);
}

/* QUERY_INFO FileBasicInformation: the FileAttributes. */
static uint32_t query_attrs(struct smbt_conn *tc, uint64_t fid)
{
	uint8_t out[512];
	size_t n;

	ck_assert_uint_eq(smbl_query_info(tc, fid, FileBasicInformation, 4096, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(n, 40);
	return smb_wire_get_u32(out + 32);
}

static uint32_t set_attrs(struct smbt_conn *tc, uint64_t fid, uint32_t attrs)
{
	uint8_t basic[40] = { 0 };

	smbt_put32(basic + 32, attrs);
	return smbl_set_info(tc, fid, FileBasicInformation, basic, sizeof(basic));
}

/* What the store keeps for name (-ENODATA: nothing). */
static int stored(const char *name, uint32_t *attrs)
{
	struct vol_obj root, f;
	int rc;

	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_lookup(&root, &root_cred, name, strlen(name), &f), 0);
	rc = vol_dos_get(&f, attrs);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
	return rc;
}

START_TEST(test_create_keeps_attributes)
{
	struct smbt_conn a;
	uint64_t fid, dfid, pfid;
	uint32_t got, st = 0;

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "h.txt", false, RW_ACCESS, A_H | A_S, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(got, A_H | A_S | A_A);
	ck_assert_uint_eq(query_attrs(&a, fid), A_H | A_S | A_A);
	ck_assert_int_eq(stored("h.txt", &st), 0);
	ck_assert_uint_eq(st, A_H | A_S | A_A);
	/* defaults: a plain file ARCHIVE (nothing stored), a directory DIRECTORY */
	ck_assert_uint_eq(smbl_open(&a, "p.txt", false, RW_ACCESS, 0, 0, &pfid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(got, A_A);
	ck_assert_int_eq(stored("p.txt", &st), -ENODATA);
	ck_assert_uint_eq(smbl_open(&a, "d", true, 0x1u | 0x80u | 0x100u, A_H, 0, &dfid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(got, FILE_ATTRIBUTE_DIRECTORY | A_H);
	ck_assert_uint_eq(query_attrs(&a, dfid), FILE_ATTRIBUTE_DIRECTORY | A_H);
	/* TEMPORARY on a directory, VOLUME anywhere: refused, nothing made */
	ck_assert_uint_eq(set_attrs(&a, dfid, FILE_ATTRIBUTE_TEMPORARY), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(smbl_open(&a, "t", true, 0x1u, FILE_ATTRIBUTE_TEMPORARY, 0, &dfid, &got), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(smbl_open(&a, "v", false, RW_ACCESS, 0x8u, 0, &dfid, &got), STATUS_INVALID_PARAMETER);
	ck_assert_int_eq(stored("h.txt", &st), 0); /* (the root still answers) */
	{
		struct vol_obj root, x;

		ck_assert_int_eq(vol_root(exp0, &root), 0);
		ck_assert_int_eq(vol_lookup(&root, &root_cred, "t", 1, &x), -ENOENT);
		ck_assert_int_eq(vol_lookup(&root, &root_cred, "v", 1, &x), -ENOENT);
		vol_obj_cleanup(&root);
	}
	teardown();
}
END_TEST

START_TEST(test_set_info_basic)
{
	struct smbt_conn a;
	uint64_t fid, ro;
	uint32_t got, st = 0;

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "f", false, RW_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(set_attrs(&a, fid, A_H), STATUS_SUCCESS);
	ck_assert_uint_eq(query_attrs(&a, fid), A_H);
	/* 0 leaves them */
	ck_assert_uint_eq(set_attrs(&a, fid, 0), STATUS_SUCCESS);
	ck_assert_uint_eq(query_attrs(&a, fid), A_H);
	/* DIRECTORY on a file: refused, nothing changes */
	ck_assert_uint_eq(set_attrs(&a, fid, FILE_ATTRIBUTE_DIRECTORY | A_S), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(query_attrs(&a, fid), A_H);
	/* NORMAL clears them all */
	ck_assert_uint_eq(set_attrs(&a, fid, FILE_ATTRIBUTE_NORMAL), STATUS_SUCCESS);
	ck_assert_uint_eq(query_attrs(&a, fid), FILE_ATTRIBUTE_NORMAL);
	ck_assert_int_eq(stored("f", &st), 0);
	ck_assert_uint_eq(st, 0);
	/* an open that may not write attributes */
	ck_assert_uint_eq(smbl_open(&a, "f", false, READ_ACCESS, 0, 0, &ro, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(set_attrs(&a, ro, A_S), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(query_attrs(&a, ro), FILE_ATTRIBUTE_NORMAL);
	teardown();
}
END_TEST

START_TEST(test_readonly_enforced)
{
	struct smbt_conn a;
	uint64_t fid, fid2;
	uint32_t got;
	uint8_t del = 1;

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "ro", false, RW_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(set_attrs(&a, fid, A_R), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_set_info(&a, fid, FileDispositionInformation, &del, 1), STATUS_CANNOT_DELETE);
	ck_assert_uint_eq(smbl_open(&a, "ro", false, RW_ACCESS, 0, 0, &fid2, &got), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "ro", false, READ_ACCESS | 0x10000u, 0, 0x1000u /* DELETE_ON_CLOSE */, &fid2, &got),
			  STATUS_CANNOT_DELETE);
	ck_assert_uint_eq(smbl_open(&a, "ro", false, READ_ACCESS, 0, 0, &fid2, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(got, A_R);
	/* cleared, the file opens for writing again */
	ck_assert_uint_eq(set_attrs(&a, fid, FILE_ATTRIBUTE_NORMAL), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "ro", false, RW_ACCESS, 0, 0, &fid2, &got), STATUS_SUCCESS);
	teardown();
}
END_TEST

static void woke(void *arg)
{
	(*(int *)arg)++;
}

START_TEST(test_change_reported)
{
	struct vol_obj root, f;
	struct vol_watch *w;
	struct vol_watch_ev *ev;
	struct vol_sattr sa = { .set_mode = true, .mode = 0644 };
	bool overflow = false;
	int wakes = 0;
	uint32_t st = 0;

	setup();
	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_create(&root, &root_cred, "n", 1, true, NULL, &sa, &f), 0);
	ck_assert_int_eq(vol_watch_add(&root, VOL_WATCH_ATTRIBUTES, false, woke, &wakes, &w), 0);
	ck_assert_int_eq(vol_dos_set(&f, &root_cred, A_H | 0x80000000u), 0);
	ck_assert_int_eq(wakes, 1);
	ck_assert_ptr_nonnull(ev = vol_watch_take(w, &overflow));
	ck_assert_int_eq(ev->action, VOL_WATCH_MODIFIED);
	ck_assert_str_eq(ev->name, "n");
	vol_watch_ev_free(ev);
	/* bits the store does not keep are dropped; the same value again reports nothing */
	ck_assert_int_eq(vol_dos_get(&f, &st), 0);
	ck_assert_uint_eq(st, A_H);
	ck_assert_int_eq(vol_dos_set(&f, &root_cred, A_H), 0);
	ck_assert_ptr_null(vol_watch_take(w, &overflow));
	/* another user without write access may not set them */
	{
		const struct vol_cred other = { .uid = 4242, .gid = 4242 };

		ck_assert_int_eq(vol_dos_set(&f, &other, A_S), -EACCES);
		ck_assert_int_eq(vol_dos_get(&f, &st), 0);
		ck_assert_uint_eq(st, A_H);
	}
	vol_watch_remove(w);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_attr");
	TCase *tc = tcase_create("dos");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_create_keeps_attributes);
	tcase_add_test(tc, test_set_info_basic);
	tcase_add_test(tc, test_readonly_enforced);
	tcase_add_test(tc, test_change_reported);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
