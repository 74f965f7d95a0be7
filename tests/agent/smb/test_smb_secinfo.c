/* test_smb_secinfo: SET_INFO of a security descriptor (agent/smb/smb_info_sec.c)
 * on a UNIX-style share, through the server's own dispatcher:
 * - a DACL of ALLOW ACEs for the owner, the group and Everyone sets the
 *   0777 bits (the shelf file's mode), and QUERY_INFO answers them back;
 *   parts AdditionalInformation does not name are ignored;
 * - an owner: a user may name only themselves (INVALID_OWNER), root anyone;
 *   a group only one the user is in (INVALID_PRIMARY_GROUP);
 * - no POSIX equivalent: a DENY ACE, an ACE for another Unix user, an
 *   inheritance flag, a Windows SID, a NULL DACL: NOT_SUPPORTED;
 *   malformed: INVALID_PARAMETER; no WRITE_DAC / WRITE_OWNER /
 *   ACCESS_SYSTEM_SECURITY on the open: ACCESS_DENIED; each changing nothing;
 * - a change is answered without a sync (SMB makes it stable on FLUSH:
 *   VOL_CRED_DEFER_SYNC, one change counted in vol_stats.deferred, no
 *   vol_stats.filesyncs), a SET that changes nothing or is refused counts
 *   neither;
 * - the DACL decides a CREATE's data access: READ_DATA or WRITE_DATA (also
 *   beside MAXIMUM_ALLOWED, or as GENERIC_*) that the user's class (owner,
 *   group, Everyone) lacks is ACCESS_DENIED; MAXIMUM_ALLOWED alone and the
 *   non-data rights open.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define USER 4321u
#define ALL_ACCESS (0x3u | 0x80u | 0x100u | 0x20000u | 0x40000u | 0x80000u) /* data, attrs, control, DAC, owner */
#define NO_DAC (0x3u | 0x80u | 0x100u | 0x20000u)
#define STATUS_INVALID_OWNER 0xC000005Au
#define STATUS_INVALID_PRIMARY_GROUP 0xC000005Bu

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static struct smb_sd sd; /* 10 KB: off the stack */

static void setup(struct smbt_conn *a, uint32_t uid)
{
	smbt_export_up(&ts, &srv, &exp0);
	smbt_conn_export(a, srv, &ts, 1, 0);
	ck_assert_int_eq(chmod(ts.cfg[0].root, 0777), 0);
	a->s->cred = (struct vol_cred){ .uid = uid, .gid = uid };
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

static struct stat st_of(const char *name)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	ck_assert_int_eq(stat(p, &st), 0);
	return st;
}

/* The mode QUERY_INFO SECURITY answers for fid (its DACL mapped back). */
static uint32_t queried_mode(struct smbt_conn *tc, uint64_t fid, uint32_t *uid)
{
	uint8_t buf[1024];
	uint32_t u = 0, g = 0, mode = 0;
	unsigned have = 0;
	size_t n;

	ck_assert_uint_eq(smbl_query_sec(tc, fid, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL, buf, sizeof(buf), &n),
			  STATUS_SUCCESS);
	ck_assert_int_eq(smb_sd_decode(buf, n, &sd), AQ_OK);
	ck_assert_int_eq(smb_sd_to_unix(&sd, &u, &g, &mode, &have), AQ_OK);
	*uid = u;
	return mode;
}

/* The descriptor a UNIX share shows for uid, gid, mode, encoded into out. */
static size_t sd_bytes(uint8_t *out, size_t cap, const struct smb_sd *d)
{
	struct ut_buf b;
	size_t n;

	ut_buf_init(&b, cap);
	ck_assert_int_eq(smb_sd_encode(&b, d, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL), AQ_OK);
	n = ut_buf_len(&b);
	memcpy(out, ut_buf_bytes(&b), n);
	ut_buf_cleanup(&b);
	return n;
}

static size_t sd_unix(uint8_t *out, size_t cap, uint32_t uid, uint32_t gid, uint32_t mode)
{
	smb_sd_from_unix(uid, gid, mode, false, &sd);
	return sd_bytes(out, cap, &sd);
}

START_TEST(test_dacl_mode)
{
	struct smbt_conn a;
	uint8_t buf[1024];
	uint64_t fid, nodac;
	uint32_t got, uid;
	struct vol_stats s0, s1;
	size_t n;

	setup(&a, USER);
	ck_assert_uint_eq(smbl_open(&a, "m.txt", false, ALL_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(st_of("m.txt").st_mode & 0777, 0644);
	n = sd_unix(buf, sizeof(buf), USER, USER, 0640);
	ck_assert_int_eq(vol_store_stats(ts.store, ts.cfg[0].id, &s0), 0);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_SUCCESS);
	ck_assert_int_eq(vol_store_stats(ts.store, ts.cfg[0].id, &s1), 0);
	ck_assert_uint_eq(s1.filesyncs, s0.filesyncs); /* stable on FLUSH, not before the answer */
	ck_assert_uint_eq(s1.deferred, s0.deferred + 1);
	ck_assert_uint_eq(st_of("m.txt").st_mode & 0777, 0640);
	ck_assert_uint_eq(queried_mode(&a, fid, &uid), 0640);
	ck_assert_uint_eq(uid, USER);
	/* the DACL is not named: nothing changes */
	n = sd_unix(buf, sizeof(buf), USER, USER, 0600);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_OWNER, buf, n), STATUS_SUCCESS);
	ck_assert_uint_eq(st_of("m.txt").st_mode & 0777, 0640);
	/* GENERIC_ALL for Everyone */
	smb_sd_from_unix(USER, USER, 0600, false, &sd);
	sd.dacl.ace[2].mask = SMB_GENERIC_ALL;
	n = sd_bytes(buf, sizeof(buf), &sd);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_SUCCESS);
	ck_assert_uint_eq(st_of("m.txt").st_mode & 0777, 0607);
	/* no WRITE_DAC on this open */
	ck_assert_uint_eq(smbl_open(&a, "m.txt", false, NO_DAC, 0, 0, &nodac, &got), STATUS_SUCCESS);
	n = sd_unix(buf, sizeof(buf), USER, USER, 0600);
	ck_assert_uint_eq(smbl_set_sec(&a, nodac, SMB_SD_DACL, buf, n), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_set_sec(&a, nodac, SMB_SD_OWNER, buf, n), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_SACL, buf, n), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(st_of("m.txt").st_mode & 0777, 0607);
	/* the same mode again changes nothing and syncs nothing */
	ck_assert_int_eq(vol_store_stats(ts.store, ts.cfg[0].id, &s0), 0);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_OWNER, buf, n), STATUS_SUCCESS);
	ck_assert_int_eq(vol_store_stats(ts.store, ts.cfg[0].id, &s1), 0);
	ck_assert_uint_eq(s1.filesyncs, s0.filesyncs);
	ck_assert_uint_eq(s1.deferred, s0.deferred);
	teardown();
}
END_TEST

START_TEST(test_refused)
{
	struct smbt_conn a;
	uint8_t buf[1024];
	uint64_t fid;
	uint32_t got;
	size_t n;
	struct stat before;

	setup(&a, USER);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, ALL_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	before = st_of("r.txt");
	/* another owner, a group the user is not in */
	n = sd_unix(buf, sizeof(buf), USER + 1, USER, 0644);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_OWNER, buf, n), STATUS_INVALID_OWNER);
	n = sd_unix(buf, sizeof(buf), USER, USER + 1, 0644);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_GROUP, buf, n), STATUS_INVALID_PRIMARY_GROUP);
	/* a DENY ACE */
	smb_sd_from_unix(USER, USER, 0600, false, &sd);
	sd.dacl.ace[2].type = SMB_SD_ACCESS_DENIED;
	n = sd_bytes(buf, sizeof(buf), &sd);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_NOT_SUPPORTED);
	/* an ACE for another Unix user (not the owner) */
	smb_sd_from_unix(USER, USER, 0600, false, &sd);
	smb_sd_sid_unix_user(USER + 7, &sd.dacl.ace[2].sid);
	n = sd_bytes(buf, sizeof(buf), &sd);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_NOT_SUPPORTED);
	/* the owner's ACE for another Unix user (read as the owner's bits were it let through) */
	smb_sd_from_unix(USER, USER, 0600, false, &sd);
	smb_sd_sid_unix_user(USER + 7, &sd.dacl.ace[0].sid);
	n = sd_bytes(buf, sizeof(buf), &sd);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_NOT_SUPPORTED);
	/* an inheritance flag */
	smb_sd_from_unix(USER, USER, 0600, false, &sd);
	sd.dacl.ace[0].flags = SMB_SD_OBJECT_INHERIT;
	n = sd_bytes(buf, sizeof(buf), &sd);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_NOT_SUPPORTED);
	/* a Windows SID as owner (BUILTIN\Administrators) */
	smb_sd_from_unix(USER, USER, 0600, false, &sd);
	ck_assert_int_eq(smb_sd_sid_from_str("S-1-5-32-544", &sd.owner), AQ_OK);
	n = sd_bytes(buf, sizeof(buf), &sd);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_OWNER | SMB_SD_DACL, buf, n), STATUS_NOT_SUPPORTED);
	/* a NULL DACL: DACL_PRESENT, no DACL */
	smb_sd_from_unix(USER, USER, 0600, false, &sd);
	sd.has_dacl = false;
	n = sd_bytes(buf, sizeof(buf), &sd);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_NOT_SUPPORTED);
	/* malformed: cut short, empty */
	n = sd_unix(buf, sizeof(buf), USER, USER, 0600);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, 10), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, 0), STATUS_INVALID_PARAMETER);
	/* nothing changed */
	ck_assert_uint_eq(st_of("r.txt").st_mode, before.st_mode);
	ck_assert_uint_eq(st_of("r.txt").st_uid, USER);
	ck_assert_uint_eq(st_of("r.txt").st_gid, USER);
	teardown();
}
END_TEST

START_TEST(test_root_owner)
{
	struct smbt_conn a;
	uint8_t buf[1024];
	uint64_t fid;
	uint32_t got, uid;
	size_t n;

	setup(&a, 0);
	ck_assert_uint_eq(smbl_open(&a, "o.txt", false, ALL_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	n = sd_unix(buf, sizeof(buf), USER + 5, USER + 6, 0660);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL, buf, n), STATUS_SUCCESS);
	ck_assert_uint_eq(st_of("o.txt").st_uid, USER + 5);
	ck_assert_uint_eq(st_of("o.txt").st_gid, USER + 6);
	ck_assert_uint_eq(st_of("o.txt").st_mode & 0777, 0660);
	ck_assert_uint_eq(queried_mode(&a, fid, &uid), 0660);
	ck_assert_uint_eq(uid, USER + 5);
	teardown();
}
END_TEST

#define MAX_ALLOWED 0x02000000u

START_TEST(test_dacl_enforced)
{
	struct smbt_conn a;
	uint8_t buf[1024];
	uint64_t fid, f2;
	uint32_t got;
	size_t n;

	setup(&a, USER);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, ALL_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	/* the owner may read, not write; Everyone may read; the group nothing */
	n = sd_unix(buf, sizeof(buf), USER, USER, 0404);
	ck_assert_uint_eq(smbl_set_sec(&a, fid, SMB_SD_DACL, buf, n), STATUS_SUCCESS);
	ck_assert_uint_eq(st_of("r.txt").st_mode & 0777, 0404);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, 0x2u, 0, 0, &f2, &got), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, 0x4u, 0, 0, &f2, &got), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, MAX_ALLOWED | 0x2u, 0, 0, &f2, &got), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, SMB_GENERIC_WRITE, 0, 0, &f2, &got), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, SMB_GENERIC_ALL, 0, 0, &f2, &got), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, MAX_ALLOWED, 0, 0, &f2, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, 0x1u | 0x20000u, 0, 0, &f2, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, 0x80u | 0x40000u, 0, 0, &f2, &got), STATUS_SUCCESS);
	/* someone else: Everyone's read; in the file's group: nothing */
	a.s->cred = (struct vol_cred){ .uid = USER + 1, .gid = USER + 1 };
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, SMB_GENERIC_READ, 0, 0, &f2, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, 0x2u, 0, 0, &f2, &got), STATUS_ACCESS_DENIED);
	a.s->cred = (struct vol_cred){ .uid = USER + 2, .gid = USER };
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, 0x1u, 0, 0, &f2, &got), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "r.txt", false, 0x80u, 0, 0, &f2, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(st_of("r.txt").st_mode & 0777, 0404); /* refusals change nothing */
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_secinfo");
	TCase *tc = tcase_create("secinfo");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_dacl_mode);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_root_owner);
	tcase_add_test(tc, test_dacl_enforced);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
