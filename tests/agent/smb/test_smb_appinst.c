/* test_smb_appinst: SMB2_CREATE_APP_INSTANCE_ID and _VERSION
 * (agent/smb/smb_durable.c smb_durable_app, MS-SMB2 3.3.5.9.13) through the
 * server's dispatcher (smb_harness.h, smb_leasemsg.h):
 * - a CREATE from another client (ClientGuid) with the AppInstanceId of a
 *   live exclusive open of the same file and share closes that open (its
 *   FileId is then FILE_CLOSED) and succeeds, where it would be a sharing
 *   violation; the same client, or another AppInstanceId: a sharing
 *   violation, the old open kept;
 * - 3.1.1 versions: an old open as new or newer than the request's
 *   version: STATUS_FILE_FORCED_CLOSED, the old open kept; a newer one
 *   closes it;
 * - a kept durable open (its connection dropped) is closed by a stat open
 *   of another client with its AppInstanceId (which would break nothing),
 *   so its own client cannot reconnect it any more;
 * - on 2.1 the context has no effect (3.x only).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_lease.h"
#include "api/api_error.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define STATUS_SHARING_VIOLATION 0xC0000043u
#define READ_ATTRIBUTES 0x80u

static struct aqt_store ts;
static struct smb_srv *srv;

static const uint8_t guid_a[16] = { 0xA1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static const uint8_t guid_b[16] = { 0xB2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static const uint8_t app_x[16] = { 0x58, 0x58, 0x58, 0x58, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static const uint8_t app_y[16] = { 0x59, 0x59, 0x59, 0x59, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

static void setup(void)
{
	smbt_store_up(&ts, &srv);
}

static void teardown(void)
{
	smbl_store_down(&ts, srv);
}

/* A connection of client guid at dialect on share "vms" (user u, project p1). */
static void conn_new(struct smbt_conn *tc, uint64_t key, const uint8_t guid[16], uint16_t dialect)
{
	smbt_conn_user(tc, srv, &ts, key, "u", "vms");
	tc->c->dialect = dialect;
	tc->c->signing = SMB2_SIGNING_HMAC_SHA256; /* the harness signs so */
	memcpy(tc->c->client_guid, guid, 16);
}

/* An exclusive (ShareAccess 0) read/write CREATE of name with AppInstanceId
 * app (NULL: none) and, when ver, version hi.lo: its status, FileId in *fid. */
static uint32_t open_app(struct smbt_conn *tc, const char *name, const uint8_t *app, bool ver, uint64_t hi,
			 uint64_t lo, uint64_t *fid)
{
	struct smbl_create q = { .name = name, .share_none = true, .app = app, .app_ver = ver, .app_hi = hi,
				 .app_lo = lo };

	smbl_create(tc, &q);
	*fid = q.fid;
	return q.status;
}

START_TEST(test_live_open_closed)
{
	struct smbt_conn a, b, b2;
	uint64_t fa, fb, fx;

	setup();
	conn_new(&a, 1, guid_a, SMB2_DIALECT_311);
	conn_new(&b, 2, guid_b, SMB2_DIALECT_300);
	conn_new(&b2, 3, guid_b, SMB2_DIALECT_311);
	ck_assert_uint_eq(open_app(&a, "vm.vhdx", app_x, false, 0, 0, &fa), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_write(&a, fa, "disk"), STATUS_SUCCESS);
	/* another AppInstanceId: the share modes hold */
	ck_assert_uint_eq(open_app(&b, "vm.vhdx", app_y, false, 0, 0, &fx), STATUS_SHARING_VIOLATION);
	ck_assert_uint_eq(open_app(&b, "vm.vhdx", NULL, false, 0, 0, &fx), STATUS_SHARING_VIOLATION);
	ck_assert_uint_eq(smbl_write(&a, fa, "disk"), STATUS_SUCCESS);
	/* the same AppInstanceId from another client: the old open goes */
	ck_assert_uint_eq(open_app(&b, "vm.vhdx", app_x, false, 0, 0, &fb), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_write(&a, fa, "late"), STATUS_FILE_CLOSED);
	ck_assert_uint_eq(smbl_write(&b, fb, "disk"), STATUS_SUCCESS);
	/* the same client (ClientGuid) again: not closed */
	ck_assert_uint_eq(open_app(&b2, "vm.vhdx", app_x, false, 0, 0, &fx), STATUS_SHARING_VIOLATION);
	ck_assert_uint_eq(smbl_write(&b, fb, "disk"), STATUS_SUCCESS);
	teardown();
}
END_TEST

START_TEST(test_versions)
{
	struct smbt_conn a, b;
	uint64_t fa, fb;

	setup();
	conn_new(&a, 1, guid_a, SMB2_DIALECT_311);
	conn_new(&b, 2, guid_b, SMB2_DIALECT_311);
	ck_assert_uint_eq(open_app(&a, "v", app_x, true, 5, 0, &fa), STATUS_SUCCESS);
	ck_assert_uint_eq(open_app(&b, "v", app_x, true, 4, 9, &fb), STATUS_FILE_FORCED_CLOSED);
	ck_assert_uint_eq(open_app(&b, "v", app_x, true, 5, 0, &fb), STATUS_FILE_FORCED_CLOSED);
	ck_assert_uint_eq(smbl_write(&a, fa, "mine"), STATUS_SUCCESS);
	ck_assert_uint_eq(open_app(&b, "v", app_x, true, 5, 1, &fb), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_write(&a, fa, "late"), STATUS_FILE_CLOSED);
	teardown();
}
END_TEST

START_TEST(test_kept_durable_closed)
{
	struct smbt_conn a, a2, b;
	struct smbl_create q = { .name = "k", .oplock = SMB2_OPLOCK_LEVEL_BATCH, .app = app_x };
	struct smbl_create s = { .name = "k", .access = READ_ATTRIBUTES, .app = app_x };
	struct smbl_create r = { .name = "k", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	static const uint8_t cg[16] = { 0xC6, 1 };
	uint64_t fid;

	setup();
	conn_new(&a, 1, guid_a, SMB2_DIALECT_311);
	conn_new(&b, 2, guid_b, SMB2_DIALECT_311);
	smbl_dh2q(&q, 0, 0, cg);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_str_eq(q.dh_got, "DH2Q");
	fid = q.fid;
	smb_conn_free(a.c); /* the TCP connection drops: the open is kept */
	ck_assert_uint_eq(srv->ndurable, 1);
	/* a stat open breaks nothing; its AppInstanceId closes the kept open */
	smbl_create(&b, &s);
	ck_assert_uint_eq(s.status, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->ndurable, 0);
	/* its own client comes back too late */
	conn_new(&a2, 4, guid_a, SMB2_DIALECT_311);
	smbl_dh2c(&r, fid, cg);
	smbl_create(&a2, &r);
	ck_assert_uint_eq(r.status, STATUS_OBJECT_NAME_NOT_FOUND);
	teardown();
}
END_TEST

START_TEST(test_smb2_no_effect)
{
	struct smbt_conn a, b;
	uint64_t fa, fb;

	setup();
	conn_new(&a, 1, guid_a, SMB2_DIALECT_210);
	conn_new(&b, 2, guid_b, SMB2_DIALECT_210);
	ck_assert_uint_eq(open_app(&a, "old", app_x, false, 0, 0, &fa), STATUS_SUCCESS);
	ck_assert_uint_eq(open_app(&b, "old", app_x, false, 0, 0, &fb), STATUS_SHARING_VIOLATION);
	ck_assert_uint_eq(smbl_write(&a, fa, "kept"), STATUS_SUCCESS);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_appinst");
	TCase *tc = tcase_create("app_instance");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_live_open_closed);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_kept_durable_closed);
	tcase_add_test(tc, test_smb2_no_effect);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
