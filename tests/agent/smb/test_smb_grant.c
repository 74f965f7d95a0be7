/* test_smb_grant: an SMB open's READ and WRITE check the access its CREATE
 * was granted, not the file's mode again (MS-SMB2 3.3.5.12, 3.3.5.13; the
 * store's vol_obj_grant, agent/smb/smb_open.c create_finish), through the
 * server's own dispatcher (smb_harness.h), as a user who is not root:
 * - a read-write open keeps writing and reading after the file's mode
 *   became 000, while a new CREATE of the file is ACCESS_DENIED;
 * - a read-only open's WRITE is ACCESS_DENIED, its READ goes on;
 * - each open of a file holds one grant, released on CLOSE and when its
 *   connection goes;
 * - a durable open reconnected after the mode became 000 keeps its grant
 *   (reads and writes), and a kept one's grant goes when it times out.
 * Needs root (setfsuid). */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define USER 4242
#define RW_ACCESS (0x3u | 0x80u | 0x100u) /* read/write data and attributes */
#define READ_ACCESS (0x1u | 0x80u)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

/* A connection whose session is USER's, in an export root USER may write. */
static void conn_user(struct smbt_conn *tc)
{
	smbt_conn_export(tc, srv, &ts, 1, 0);
	tc->s->cred = (struct vol_cred){ .uid = USER, .gid = USER };
}

/* conn_user with oplocks on, user "alice" of project p1 on share "docs"
 * (what a durable reconnect compares). */
static void conn_durable(struct smbt_conn *tc, uint64_t key)
{
	smbt_conn_user(tc, srv, &ts, key, "alice", "docs");
	tc->s->cred = (struct vol_cred){ .uid = USER, .gid = USER };
}

/* READ of len bytes at 0 on fid: its status; the data into out. */
static uint32_t read_at0(struct smbt_conn *tc, uint64_t fid, uint32_t len, char *out)
{
	uint8_t body[49];
	struct smb_wire_hdr h = { .command = SMB2_READ };
	struct smbl_msg m;

	smbl_send(tc, &h, body, smbt_read_body(body, fid, 0, len));
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_READ);
	if (m.h.status == STATUS_SUCCESS)
		memcpy(out, m.body + 16, len);
	return m.h.status;
}

START_TEST(test_open_outlives_mode)
{
	uint64_t before, rw, ro, fid;
	struct smbt_conn a;
	char path[160], buf[8] = { 0 };
	uint32_t attrs;

	smbt_export_up(&ts, &srv, &exp0);
	snprintf(path, sizeof(path), "%s/v0", ts.dir);
	ck_assert_int_eq(chmod(path, 0777), 0);
	before = vol_grant_count();
	conn_user(&a);
	ck_assert_uint_eq(smbl_open(&a, "g", false, RW_ACCESS, 0, 0, &rw, &attrs), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "g", false, READ_ACCESS, 0, 0, &ro, &attrs), STATUS_SUCCESS);
	ck_assert_uint_eq(vol_grant_count(), before + 2);
	ck_assert_uint_eq(smbl_write(&a, rw, "abc"), STATUS_SUCCESS);
	snprintf(path, sizeof(path), "%s/v0/g", ts.dir);
	ck_assert_int_eq(chmod(path, 0), 0);
	/* the opens keep what their CREATE was granted */
	ck_assert_uint_eq(smbl_write(&a, rw, "xyz"), STATUS_SUCCESS);
	ck_assert_uint_eq(read_at0(&a, rw, 3, buf), STATUS_SUCCESS);
	ck_assert_str_eq(buf, "xyz");
	ck_assert_uint_eq(read_at0(&a, ro, 3, buf), STATUS_SUCCESS);
	ck_assert_str_eq(buf, "xyz");
	ck_assert_uint_eq(smbl_write(&a, ro, "no!"), STATUS_ACCESS_DENIED);
	/* a new open is refused */
	ck_assert_uint_eq(smbl_open(&a, "g", false, READ_ACCESS, 0, 0, &fid, &attrs), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_open(&a, "g", false, RW_ACCESS, 0, 0, &fid, &attrs), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(vol_grant_count(), before + 2);
	ck_assert_uint_eq(smbl_close(&a, rw), STATUS_SUCCESS);
	ck_assert_uint_eq(vol_grant_count(), before + 1);
	smbt_conns_free(srv); /* the connection goes: so does its open's grant */
	ck_assert_uint_eq(vol_grant_count(), before);
	ck_assert_int_eq(chmod(path, 0644), 0);
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

START_TEST(test_durable_keeps_grant)
{
	static const uint8_t guid[16] = { 0xB1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	static const uint8_t guid2[16] = { 0xB2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	struct smbl_create q = { .name = "d", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbt_conn a, b, c;
	char path[160], buf[8] = { 0 };
	uint64_t before, fid;

	smbt_store_up(&ts, &srv);
	snprintf(path, sizeof(path), "%s/v0", ts.dir);
	ck_assert_int_eq(chmod(path, 0777), 0);
	before = vol_grant_count();
	conn_durable(&a, 1);
	smbl_dh2q(&q, 30000, 0, guid);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_str_eq(q.dh_got, "DH2Q");
	fid = q.fid;
	ck_assert_uint_eq(smbl_write(&a, fid, "abc"), STATUS_SUCCESS);
	snprintf(path, sizeof(path), "%s/v0/d", ts.dir);
	ck_assert_int_eq(chmod(path, 0), 0);
	smb_conn_free(a.c); /* the TCP connection drops: the open is kept, with its grant */
	ck_assert_uint_eq(srv->ndurable, 1);
	ck_assert_uint_eq(vol_grant_count(), before + 1);
	conn_durable(&b, 2);
	q = (struct smbl_create){ .name = "d", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2c(&q, fid, guid);
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_uint_eq(q.fid, fid);
	ck_assert_uint_eq(smbl_write(&b, fid, "xyz"), STATUS_SUCCESS);
	ck_assert_uint_eq(read_at0(&b, fid, 3, buf), STATUS_SUCCESS);
	ck_assert_str_eq(buf, "xyz");
	ck_assert_uint_eq(smbl_close(&b, fid), STATUS_SUCCESS);
	ck_assert_uint_eq(vol_grant_count(), before);
	/* a kept open that times out takes its grant along */
	ck_assert_int_eq(chmod(path, 0644), 0);
	conn_durable(&c, 3);
	q = (struct smbl_create){ .name = "d", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2q(&q, 300, 0, guid2);
	smbl_create(&c, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	smb_conn_free(c.c);
	ck_assert_uint_eq(vol_grant_count(), before + 1);
	usleep(400 * 1000);
	smb_async_tick(srv);
	ck_assert_uint_eq(srv->ndurable, 0);
	ck_assert_uint_eq(vol_grant_count(), before);
	smbl_store_down(&ts, srv);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_grant");
	TCase *tc = tcase_create("grant");

	if (geteuid() != 0) {
		fprintf(stderr, "test_smb_grant needs root (setfsuid)\n");
		return 77;
	}
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_open_outlives_mode);
	tcase_add_test(tc, test_durable_keeps_grant);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
