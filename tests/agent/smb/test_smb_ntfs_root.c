/* test_smb_ntfs_root: the root of an NTFS-style volume while no descriptor
 * is stored on it (agent/smb/smb_acl_open.c, smb_acl_root_default), through
 * the server's own dispatcher, alice (uid 1000) and bob (uid 2000):
 * - QUERY_INFO of the root shows owner and group the root folder's and a
 *   DACL of one ACE, Everyone FILE_ALL_ACCESS with OBJECT_INHERIT |
 *   CONTAINER_INHERIT, control DACL_AUTO_INHERITED (as Azure NetApp Files
 *   and GCNV make a new NTFS volume's root);
 * - a file alice makes in the root inherits it (Everyone FILE_ALL_ACCESS,
 *   INHERITED), a folder too (with OI|CI still), so bob opens alice's file
 *   for reading and writing, and makes a file in her folder;
 * - once root SET_INFOs a DACL on the root (alice only), that one rules:
 *   bob may no longer add a file to the root, and alice's next file is not
 *   bob's to read;
 * - a UNIX-style share's root still shows its mode bits (no Everyone
 *   FILE_ALL_ACCESS, no inheritance flags);
 * - a snapshot's root (a previous version of the root by its @GMT token,
 *   or .snapshot\<id>) shows what the root showed: the root default when
 *   the snapshot kept no descriptor (not its 0770 mode's, which would
 *   also refuse alice the open), the stored one when it kept one; a
 *   folder below a snapshot's root still shows its mode's;
 * - a CREATE asking ACCESS_SYSTEM_SECURITY of a user without
 *   SeSecurityPrivilege (alice) answers STATUS_PRIVILEGE_NOT_HELD (as smbd),
 *   of an existing object or a new one (not made), on either style of
 *   share; root (uid 0) gets the open.
 * Needs root (trusted.* extended attributes want CAP_SYS_ADMIN). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "agent/smb/smb_acl.h"
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define READ_WRITE (0x1u | 0x2u)
#define ALL_ACCESS (0x3u | 0x80u | 0x100u | 0x20000u | 0x40000u | 0x80000u)
#define OICI (SMB_SD_OBJECT_INHERIT | SMB_SD_CONTAINER_INHERIT)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static struct smb_sd sd; /* 10 KB: off the stack */
static struct smbt_conn alice, bob;

static void up(uint8_t security)
{
	smbt_export_up(&ts, &srv, &exp0);
	/* as the agent makes a volume's root: 0777 on NTFS (agent_apply.c),
	 * the volume's unixPermissions (here 0755) otherwise */
	ck_assert_int_eq(chmod(ts.cfg[0].root, security == API_INTENT_SEC_NTFS ? 0777 : 0755), 0);
	smbt_conn_export(&alice, srv, &ts, 1, 0);
	smbt_conn_export(&bob, srv, &ts, 2, 0);
	alice.t->share.security = bob.t->share.security = security;
	alice.s->cred = (struct vol_cred){ .uid = 1000, .gid = 1000 };
	bob.s->cred = (struct vol_cred){ .uid = 2000, .gid = 2000 };
}

static void down(void)
{
	smbl_export_down(&ts, srv, exp0);
}

/* QUERY_INFO SECURITY (owner, group, DACL) of name, decoded into sd. */
static void query(struct smbt_conn *tc, const char *name, bool dir)
{
	uint8_t body[41] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_QUERY_INFO };
	struct smbl_msg m;
	uint64_t fid;
	uint32_t got;

	ck_assert_uint_eq(smbl_open(tc, name, dir, 0x20000u, 0, 0, &fid, &got), STATUS_SUCCESS);
	smbt_put16(body, 41);
	body[2] = SMB2_0_INFO_SECURITY;
	smbt_put32(body + 4, 4096);
	smbt_put32(body + 16, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL);
	smbt_put64(body + 24, fid);
	smbt_put64(body + 32, fid);
	smbl_send(tc, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_int_eq(smb_sd_decode(m.body + smb_wire_get_u16(m.body + 2) - SMB2_HDR_LEN,
				       smb_wire_get_u32(m.body + 4), &sd), AQ_OK);
	ck_assert_uint_eq(smbl_close(tc, fid), STATUS_SUCCESS);
}

/* The status of tc's open of name for access (closed again). */
static uint32_t try_open(struct smbt_conn *tc, const char *name, bool dir, uint32_t access)
{
	uint64_t fid;
	uint32_t got, st = smbl_open(tc, name, dir, access, 0, 0, &fid, &got);

	if (st == STATUS_SUCCESS)
		ck_assert_uint_eq(smbl_close(tc, fid), STATUS_SUCCESS);
	return st;
}

/* sd's DACL is one ALLOW ACE for Everyone, FILE_ALL_ACCESS, flags. */
static void everyone_all(uint8_t flags)
{
	ck_assert(sd.has_dacl);
	ck_assert_uint_eq(sd.dacl.count, 1);
	ck_assert_uint_eq(sd.dacl.ace[0].type, SMB_SD_ACCESS_ALLOWED);
	ck_assert_uint_eq(sd.dacl.ace[0].flags, flags);
	ck_assert_uint_eq(sd.dacl.ace[0].mask, SMB_FILE_ALL_ACCESS);
	ck_assert(smb_sd_sid_eq(&sd.dacl.ace[0].sid, &smb_sd_everyone));
}

START_TEST(test_root_shared)
{
	struct smb_sd_sid u, g;
	struct stat st;

	up(API_INTENT_SEC_NTFS);
	ck_assert_int_eq(stat(ts.cfg[0].root, &st), 0);
	query(&alice, "", true);
	smb_sd_sid_unix_user(st.st_uid, &u);
	smb_sd_sid_unix_group(st.st_gid, &g);
	ck_assert(smb_sd_sid_eq(&sd.owner, &u));
	ck_assert(smb_sd_sid_eq(&sd.group, &g));
	ck_assert(sd.control & SMB_SD_DACL_AUTO_INHERITED);
	everyone_all(OICI);
	/* alice's file and folder inherit it */
	ck_assert_uint_eq(try_open(&alice, "a.txt", false, READ_WRITE), STATUS_SUCCESS);
	ck_assert_uint_eq(try_open(&alice, "d", true, 0x1u), STATUS_SUCCESS);
	query(&alice, "a.txt", false);
	everyone_all(SMB_SD_INHERITED);
	ck_assert(sd.control & SMB_SD_DACL_AUTO_INHERITED);
	query(&alice, "d", true);
	everyone_all(OICI | SMB_SD_INHERITED);
	/* bob works with them */
	ck_assert_uint_eq(try_open(&bob, "a.txt", false, READ_WRITE), STATUS_SUCCESS);
	ck_assert_uint_eq(try_open(&bob, "d\\b.txt", false, READ_WRITE), STATUS_SUCCESS);
	ck_assert_uint_eq(try_open(&bob, "b.txt", false, READ_WRITE), STATUS_SUCCESS);
	down();
}
END_TEST

START_TEST(test_root_set_rules)
{
	static struct smb_sd set;
	struct smbt_conn admin;
	uint8_t body[32 + 1024] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_SET_INFO };
	struct smbl_msg m;
	struct ut_buf b;
	uint64_t fid;
	uint32_t got;
	size_t n;

	up(API_INTENT_SEC_NTFS);
	smbt_conn_export(&admin, srv, &ts, 3, 0);
	admin.t->share.security = API_INTENT_SEC_NTFS;
	admin.s->cred = (struct vol_cred){ .uid = 0, .gid = 0 };
	/* the admin narrows the root: alice full access, inherited */
	memset(&set, 0, sizeof(set));
	set.control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	set.has_dacl = true;
	set.dacl.revision = 2;
	set.dacl.count = 1;
	set.dacl.ace[0] = (struct smb_sd_ace){ .type = SMB_SD_ACCESS_ALLOWED, .flags = OICI, .mask = SMB_FILE_ALL_ACCESS };
	smb_sd_sid_unix_user(1000, &set.dacl.ace[0].sid);
	ut_buf_init(&b, 1024);
	ck_assert_int_eq(smb_sd_encode(&b, &set, SMB_SD_DACL), AQ_OK);
	n = ut_buf_len(&b);
	ck_assert_uint_eq(smbl_open(&admin, "", true, 0x40000u, 0, 0, &fid, &got), STATUS_SUCCESS);
	smbt_put16(body, 33);
	body[2] = SMB2_0_INFO_SECURITY;
	smbt_put32(body + 4, (uint32_t)n);
	smbt_put16(body + 8, SMB2_HDR_LEN + 32);
	smbt_put32(body + 12, SMB_SD_DACL);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	memcpy(body + 32, ut_buf_bytes(&b), n);
	ut_buf_cleanup(&b);
	smbl_send(&admin, &h, body, 32 + n);
	ck_assert_int_eq(smbl_recv(&admin, &m), 1);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&admin, fid), STATUS_SUCCESS);
	/* it reads back and rules */
	query(&alice, "", true);
	ck_assert_uint_eq(sd.dacl.count, 1);
	ck_assert(!smb_sd_sid_eq(&sd.dacl.ace[0].sid, &smb_sd_everyone));
	ck_assert_uint_eq(try_open(&bob, "b.txt", false, READ_WRITE), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(try_open(&alice, "a.txt", false, READ_WRITE), STATUS_SUCCESS);
	ck_assert_uint_eq(try_open(&bob, "a.txt", false, 0x1u), STATUS_ACCESS_DENIED);
	down();
}
END_TEST

START_TEST(test_unix_root_unchanged)
{
	up(API_INTENT_SEC_UNIX);
	query(&alice, "", true);
	ck_assert_uint_eq(sd.dacl.count, 3);
	ck_assert(smb_sd_sid_eq(&sd.dacl.ace[2].sid, &smb_sd_everyone));
	ck_assert_uint_eq(sd.dacl.ace[2].flags, 0);
	ck_assert_uint_ne(sd.dacl.ace[2].mask & SMB_FILE_ALL_ACCESS, SMB_FILE_ALL_ACCESS);
	ck_assert_uint_eq(try_open(&bob, "b.txt", false, READ_WRITE), STATUS_ACCESS_DENIED);
	down();
}
END_TEST

/* The export's snapshot folder <root>.snaps with three snapshots of the
 * root as copies leave them: s1 (0770, no descriptor: a root made before
 * session 41), s2 (0770, a stored DACL: alice full access) and s3 (0777,
 * a folder "sub" 0755 in it); the store set again with it and alice's tree
 * on the new export. */
static void snaps_up(char *dir, size_t cap)
{
	static struct smb_sd kept;
	struct ut_buf b;
	char p[4200];

	snprintf(dir, cap, "%s.snaps", ts.cfg[0].root);
	ck_assert_int_eq(mkdir(dir, 0711), 0);
	snprintf(p, sizeof(p), "%s/s1", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, 0770), 0);
	snprintf(p, sizeof(p), "%s/s3", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, 0777), 0);
	snprintf(p, sizeof(p), "%s/s3/sub", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/s2", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(chmod(p, 0770), 0);
	memset(&kept, 0, sizeof(kept));
	kept.control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	kept.has_dacl = true;
	kept.dacl.revision = 2;
	kept.dacl.count = 1;
	kept.dacl.ace[0] = (struct smb_sd_ace){ .type = SMB_SD_ACCESS_ALLOWED, .flags = OICI, .mask = SMB_FILE_ALL_ACCESS };
	smb_sd_sid_unix_user(1000, &kept.dacl.ace[0].sid);
	smb_sd_sid_unix_user(0, &kept.owner);
	smb_sd_sid_unix_group(0, &kept.group);
	ut_buf_init(&b, 1024);
	ck_assert_int_eq(smb_sd_encode(&b, &kept, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL), AQ_OK);
	ck_assert_int_eq(setxattr(p, VOL_SD_ATTR, ut_buf_bytes(&b), ut_buf_len(&b), 0), 0);
	ut_buf_cleanup(&b);
	snprintf(ts.cfg[0].snapdir, sizeof(ts.cfg[0].snapdir), "%s", dir);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	vol_export_unref(alice.t->exp);
	ck_assert_ptr_nonnull(alice.t->exp = vol_export_at(ts.store, 0));
}

START_TEST(test_snapshot_root)
{
	char dir[4100], tok[40], cmd[4200];
	struct statx sx;
	struct tm tm;
	time_t when;

	up(API_INTENT_SEC_NTFS);
	snaps_up(dir, sizeof(dir));
	/* a previous version of the root: s1, by its time (s2 and s3 made in
	 * the same second sort after it) */
	snprintf(cmd, sizeof(cmd), "%s/s1", dir);
	ck_assert_int_eq(statx(AT_FDCWD, cmd, 0, STATX_BTIME | STATX_CTIME, &sx), 0);
	when = (sx.stx_mask & STATX_BTIME) ? (time_t)sx.stx_btime.tv_sec : (time_t)sx.stx_ctime.tv_sec;
	gmtime_r(&when, &tm);
	snprintf(tok, sizeof(tok), "@GMT-%04d.%02d.%02d-%02d.%02d.%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		 tm.tm_hour, tm.tm_min, tm.tm_sec);
	query(&alice, tok, true);
	ck_assert(sd.control & SMB_SD_DACL_AUTO_INHERITED);
	everyone_all(OICI);
	query(&alice, ".snapshot\\s1", true);
	everyone_all(OICI);
	/* the one a snapshot kept */
	query(&alice, ".snapshot\\s2", true);
	ck_assert(sd.has_dacl);
	ck_assert_uint_eq(sd.dacl.count, 1);
	ck_assert(!smb_sd_sid_eq(&sd.dacl.ace[0].sid, &smb_sd_everyone));
	/* below a snapshot's root: its mode's (owner, group, Everyone) */
	query(&alice, ".snapshot\\s3\\sub", true);
	ck_assert_uint_eq(sd.dacl.count, 3);
	ck_assert_uint_eq(sd.dacl.ace[2].flags, 0);
	down();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

#define SYSTEM_SECURITY 0x01000000u

START_TEST(test_system_security)
{
	struct smbt_conn admin;
	char p[4200];

	for (int style = 0; style < 2; style++) {
		uint8_t sec = style ? API_INTENT_SEC_UNIX : API_INTENT_SEC_NTFS;

		up(sec);
		smbt_conn_export(&admin, srv, &ts, 3, 0);
		admin.t->share.security = sec;
		admin.s->cred = (struct vol_cred){ .uid = 0, .gid = 0 };
		ck_assert_uint_eq(try_open(&admin, "a.txt", false, READ_WRITE), STATUS_SUCCESS);
		/* an existing file, the root folder, a new file: refused, nothing made */
		ck_assert_uint_eq(try_open(&alice, "a.txt", false, SYSTEM_SECURITY | 0x20000u), STATUS_PRIVILEGE_NOT_HELD);
		ck_assert_uint_eq(try_open(&alice, "", true, SYSTEM_SECURITY | 0x20000u), STATUS_PRIVILEGE_NOT_HELD);
		ck_assert_uint_eq(try_open(&alice, "new.txt", false, SYSTEM_SECURITY | READ_WRITE), STATUS_PRIVILEGE_NOT_HELD);
		snprintf(p, sizeof(p), "%s/new.txt", ts.cfg[0].root);
		ck_assert_int_eq(access(p, F_OK), -1);
		/* without it she opens them as before; root holds the privilege */
		ck_assert_uint_eq(try_open(&alice, "a.txt", false, 0x20000u), STATUS_SUCCESS);
		ck_assert_uint_eq(try_open(&admin, "a.txt", false, SYSTEM_SECURITY | 0x20000u), STATUS_SUCCESS);
		ck_assert_uint_eq(try_open(&admin, "new.txt", false, SYSTEM_SECURITY | READ_WRITE), STATUS_SUCCESS);
		ck_assert_int_eq(access(p, F_OK), 0);
		down();
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_ntfs_root");
	TCase *tc = tcase_create("root");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_root_shared);
	tcase_add_test(tc, test_root_set_rules);
	tcase_add_test(tc, test_unix_root_unchanged);
	tcase_add_test(tc, test_snapshot_root);
	tcase_add_test(tc, test_system_security);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
