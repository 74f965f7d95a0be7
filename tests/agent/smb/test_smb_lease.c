/* test_smb_lease: SMB2 oplocks and leases (agent/smb/smb_lease.c) over the
 * store's cached-open table (agent/vol/vol_lease.c), through the server's
 * own dispatcher as test_smb_notify drives it (smb_harness.h): signed CREATE
 * frames into smb_dispatch_frame on a socketpair connection, the loop's
 * part (eventfd, smb_async_run) played by the test. Changes from "NFS" are
 * the store's own calls (vol_write, vol_setattr), which the NFSv3 and
 * NFSv4.1 front ends make.
 * - grants: BATCH, EXCLUSIVE and II get Level II; a lease (v1 or v2) asking
 *   RWH or RH gets R, its key echoed, a v2 epoch one past the client's;
 *   a directory gets nothing; a lease key reused on another file is
 *   INVALID_PARAMETER;
 * - smbSettings without OPLOCKS: no oplock, no lease context, no grant;
 * - a write or a truncate through the store (as NFS makes it) takes the
 *   grants off the table before it returns, and the holders get an oplock
 *   break to NONE / a lease break R -> NONE without ACK_REQUIRED;
 *   a SMB WRITE of another connection breaks the same way;
 * - acknowledgments: none is expected, so an oplock ack is
 *   INVALID_OPLOCK_PROTOCOL (FILE_CLOSED for an unknown FileId,
 *   INVALID_PARAMETER with the level LEASE), a lease ack
 *   OBJECT_NAME_NOT_FOUND for an unknown key, UNSUCCESSFUL for a held one;
 * - CLOSE drops the grant: a later write breaks nothing.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "api/api_error.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static const struct vol_cred nfs_cred = { .uid = 0, .gid = 0 };

static void setup(void)
{
	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 100, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 1 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	ck_assert_ptr_nonnull(exp0 = vol_export_at(ts.store, 0));
	smbt_srv_new(ts.store, &srv);
}

static void teardown(void)
{
	smbt_conns_free(srv);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0); /* every grant went with its open */
	smbt_srv_free(srv);
	vol_export_unref(exp0);
	aqt_store_cleanup(&ts);
}

/* A connection whose tree is the store's first export (CREATE opens in it). */
static void conn_new(struct smbt_conn *tc, uint64_t key, unsigned settings)
{
	smbt_conn_new(tc, srv, key, settings);
	ck_assert_ptr_nonnull(tc->t->exp = vol_export_at(ts.store, 0));
}

/* Send one request in tc's tree with its next MessageId. */
static void send_msg(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *body, size_t n)
{
	h->tree_id = tc->t->id;
	h->message_id = tc->mid++;
	smbt_send(tc, h, body, n);
}

/* One message from the server (0 when none is waiting). */
struct msg {
	struct smb_wire_hdr h;
	uint8_t body[1024];
	size_t len;
};

static int recv_msg(struct smbt_conn *tc, struct msg *m)
{
	uint8_t buf[2048];
	size_t len;

	if (!smbt_recv(tc, buf, sizeof(buf), &len, &m->h, NULL))
		return 0;
	ck_assert_uint_ge(len, SMB2_HDR_LEN);
	m->len = len - SMB2_HDR_LEN;
	memcpy(m->body, buf + SMB2_HDR_LEN, m->len);
	return 1;
}
#define RWH 0x7u
#define RH 0x3u
#define R 0x1u
#define ON API_INTENT_SMB_OPLOCKS
#define FILE_OPEN_IF_ 3u
#define NONDIR 0x40u
#define DIROPT 0x1u

struct lease_req {
	bool on, v2;
	uint8_t key;       /* the key is 16 times this byte */
	uint32_t state;
	uint16_t epoch;
};

struct create_res {
	uint32_t status;
	uint8_t oplock;
	uint64_t fid;
	bool ctx;          /* a lease context came back */
	uint8_t key[16];
	uint32_t state, flags;
	uint16_t epoch;
	size_t ctx_len;
};

/* CREATE name (ASCII) with OPEN_IF, read/write access, all shared. */
static void create(struct smbt_conn *tc, const char *name, uint8_t oplock, const struct lease_req *l, bool dir,
		   struct create_res *res)
{
	uint8_t body[256] = { 0 };
	size_t nlen = strlen(name) * 2, at = 56, ctx_at;
	struct smb_wire_hdr h = { .command = SMB2_CREATE };
	struct msg m;

	smbt_put16(body, 57);
	body[3] = l && l->on ? 0xFF : oplock;
	smbt_put32(body + 4, 2);                                  /* impersonation */
	smbt_put32(body + 24, dir ? 0x1u : 0x3u | 0x6u << 16);   /* read/write data (+ list dir) */
	smbt_put32(body + 32, 7);                                 /* share all */
	smbt_put32(body + 36, FILE_OPEN_IF_);
	smbt_put32(body + 40, dir ? DIROPT : NONDIR);
	smbt_put16(body + 44, SMB2_HDR_LEN + 56);
	smbt_put16(body + 46, (uint16_t)nlen);
	for (size_t i = 0; name[i]; i++)
		body[at + 2 * i] = (uint8_t)name[i];
	at += nlen;
	ctx_at = (at + 7) & ~(size_t)7;
	if (l && l->on) {
		size_t dlen = l->v2 ? 52 : 32;

		smbt_put32(body + 48, (uint32_t)(SMB2_HDR_LEN + ctx_at));
		smbt_put32(body + 52, (uint32_t)(24 + dlen));
		smbt_put16(body + ctx_at + 4, 16);
		smbt_put16(body + ctx_at + 6, 4);
		smbt_put16(body + ctx_at + 10, 24);
		smbt_put32(body + ctx_at + 12, (uint32_t)dlen);
		memcpy(body + ctx_at + 16, "RqLs", 4);
		memset(body + ctx_at + 24, l->key, 16);
		smbt_put32(body + ctx_at + 40, l->state);
		if (l->v2)
			smbt_put16(body + ctx_at + 24 + 48, l->epoch);
		at = ctx_at + 24 + dlen;
	}
	send_msg(tc, &h, body, at);
	ck_assert_int_eq(recv_msg(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_CREATE);
	memset(res, 0, sizeof(*res));
	res->status = m.h.status;
	if (m.h.status != STATUS_SUCCESS)
		return;
	ck_assert_uint_eq(smb_wire_get_u16(m.body), 89);
	res->oplock = m.body[2];
	res->fid = smb_wire_get_u64(m.body + 64);
	if (smb_wire_get_u32(m.body + 84)) {
		size_t off = smb_wire_get_u32(m.body + 80) - SMB2_HDR_LEN;
		const uint8_t *c = m.body + off, *d;

		ck_assert_mem_eq(c + smb_wire_get_u16(c + 4), "RqLs", 4);
		d = c + smb_wire_get_u16(c + 10);
		res->ctx = true;
		res->ctx_len = smb_wire_get_u32(c + 12);
		memcpy(res->key, d, 16);
		res->state = smb_wire_get_u32(d + 16);
		res->flags = smb_wire_get_u32(d + 20);
		if (res->ctx_len == 52)
			res->epoch = smb_wire_get_u16(d + 48);
	}
}

static uint32_t close_fid(struct smbt_conn *tc, uint64_t fid)
{
	uint8_t body[24] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_CLOSE };
	struct msg m;

	smbt_put16(body, 24);
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	send_msg(tc, &h, body, sizeof(body));
	ck_assert_int_eq(recv_msg(tc, &m), 1);
	return m.h.status;
}

static uint32_t smb_write(struct smbt_conn *tc, uint64_t fid, const char *data)
{
	uint8_t body[64] = { 0 };
	size_t n = strlen(data);
	struct smb_wire_hdr h = { .command = SMB2_WRITE };
	struct msg m;

	smbt_put16(body, 49);
	smbt_put16(body + 2, SMB2_HDR_LEN + 48);
	smbt_put32(body + 4, (uint32_t)n);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	memcpy(body + 48, data, n);
	send_msg(tc, &h, body, 48 + n);
	ck_assert_int_eq(recv_msg(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_WRITE);
	return m.h.status;
}

static uint32_t ack_oplock(struct smbt_conn *tc, uint64_t fid, uint8_t level)
{
	uint8_t body[24] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_OPLOCK_BREAK };
	struct msg m;

	smbt_put16(body, 24);
	body[2] = level;
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	send_msg(tc, &h, body, sizeof(body));
	ck_assert_int_eq(recv_msg(tc, &m), 1);
	return m.h.status;
}

static uint32_t ack_lease(struct smbt_conn *tc, uint8_t key, uint32_t state)
{
	uint8_t body[36] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_OPLOCK_BREAK };
	struct msg m;

	smbt_put16(body, 36);
	memset(body + 8, key, 16);
	smbt_put32(body + 24, state);
	send_msg(tc, &h, body, sizeof(body));
	ck_assert_int_eq(recv_msg(tc, &m), 1);
	return m.h.status;
}

/* What NFS does: a WRITE, or a SETATTR of the size, through the store. */
static void nfs_write(const char *name, bool truncate)
{
	struct vol_obj root, f;
	int committed;

	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_lookup(&root, &nfs_cred, name, strlen(name), &f), 0);
	if (truncate) {
		struct vol_sattr sa = { .set_size = true, .size = 1 };

		ck_assert_int_eq(vol_setattr(&f, &nfs_cred, &sa), 0);
	} else {
		ck_assert_int_eq(vol_write(&f, &nfs_cred, 0, "nfs", 3, 2, &committed), 0);
	}
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
}

static void expect_oplock_break(struct smbt_conn *tc, uint64_t fid)
{
	struct msg m;

	ck_assert_int_eq(recv_msg(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_OPLOCK_BREAK);
	ck_assert_uint_eq(m.h.message_id, UINT64_MAX);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u16(m.body), 24);
	ck_assert_uint_eq(m.body[2], SMB2_OPLOCK_LEVEL_NONE);
	ck_assert_uint_eq(smb_wire_get_u64(m.body + 8), fid);
}

static void expect_lease_break(struct smbt_conn *tc, uint8_t key, uint16_t epoch)
{
	struct msg m;
	uint8_t k[16];

	memset(k, key, 16);
	ck_assert_int_eq(recv_msg(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_OPLOCK_BREAK);
	ck_assert_uint_eq(m.h.message_id, UINT64_MAX);
	ck_assert_uint_eq(smb_wire_get_u16(m.body), 44);
	ck_assert_uint_eq(smb_wire_get_u16(m.body + 2), epoch);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 4), 0); /* no ACK_REQUIRED: only R is lost */
	ck_assert_mem_eq(m.body + 8, k, 16);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 24), R);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 28), 0);
}

static void expect_nothing(struct smbt_conn *tc)
{
	struct msg m;

	ck_assert_int_eq(recv_msg(tc, &m), 0);
}

START_TEST(test_oplock_grant)
{
	struct smbt_conn a;
	struct create_res r;

	conn_new(&a, 1, ON);
	create(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, NULL, false, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_II);
	ck_assert(!r.ctx);
	create(&a, "f1", SMB2_OPLOCK_LEVEL_EXCLUSIVE, NULL, false, &r);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_II);
	create(&a, "f1", SMB2_OPLOCK_LEVEL_II, NULL, false, &r);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_II);
	create(&a, "f1", SMB2_OPLOCK_LEVEL_NONE, NULL, false, &r);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_NONE);
	ck_assert_uint_eq(vol_lease_count(ts.store), 3);
	create(&a, "d1", SMB2_OPLOCK_LEVEL_BATCH, NULL, true, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_NONE); /* directories: nothing */
	ck_assert_uint_eq(vol_lease_count(ts.store), 3);
}
END_TEST

START_TEST(test_lease_grant)
{
	struct smbt_conn a;
	struct create_res r;
	uint8_t k[16];

	conn_new(&a, 1, ON);
	create(&a, "f1", 0, &(struct lease_req){ .on = true, .key = 0x11, .state = RWH }, false, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_LEASE);
	ck_assert(r.ctx);
	ck_assert_uint_eq(r.ctx_len, 32);
	memset(k, 0x11, 16);
	ck_assert_mem_eq(r.key, k, 16);
	ck_assert_uint_eq(r.state, R); /* RWH downgraded to what is granted */
	create(&a, "f2", 0, &(struct lease_req){ .on = true, .v2 = true, .key = 0x22, .state = RH, .epoch = 5 }, false,
	       &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.ctx_len, 52);
	ck_assert_uint_eq(r.state, R);
	ck_assert_uint_eq(r.epoch, 6);
	/* the same key on the same file: the same lease, its epoch */
	create(&a, "f2", 0, &(struct lease_req){ .on = true, .v2 = true, .key = 0x22, .state = RH, .epoch = 9 }, false,
	       &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.epoch, 6);
	/* a lease key names one file */
	create(&a, "f3", 0, &(struct lease_req){ .on = true, .key = 0x11, .state = R }, false, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(vol_lease_count(ts.store), 3);
}
END_TEST

START_TEST(test_oplocks_off)
{
	struct smbt_conn a;
	struct create_res r;

	conn_new(&a, 1, API_INTENT_SMB_CHANGE_NOTIFY);
	create(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, NULL, false, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_NONE);
	create(&a, "f1", 0, &(struct lease_req){ .on = true, .key = 0x11, .state = RWH }, false, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock, SMB2_OPLOCK_LEVEL_NONE);
	ck_assert(!r.ctx);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
}
END_TEST

START_TEST(test_nfs_write_breaks)
{
	struct smbt_conn a, b;
	struct create_res ra, rb, rc;

	conn_new(&a, 1, ON);
	conn_new(&b, 2, ON);
	create(&a, "f1", 0, &(struct lease_req){ .on = true, .v2 = true, .key = 0x11, .state = RWH, .epoch = 1 },
	       false, &ra);
	ck_assert_uint_eq(ra.state, R);
	create(&a, "f1", 0, &(struct lease_req){ .on = true, .v2 = true, .key = 0x11, .state = RWH, .epoch = 1 },
	       false, &rc); /* a second open of the same lease */
	create(&b, "f1", SMB2_OPLOCK_LEVEL_BATCH, NULL, false, &rb);
	ck_assert_uint_eq(rb.oplock, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(vol_lease_count(ts.store), 3);
	nfs_write("f1", false);
	/* gone from the table before the write returned */
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	smbt_loop_turn(srv);
	expect_lease_break(&a, 0x11, 3);
	expect_nothing(&a); /* one break per lease, not per open */
	expect_oplock_break(&b, rb.fid);
	expect_nothing(&b);
	/* a later write finds nothing to break */
	nfs_write("f1", false);
	smbt_loop_turn(srv);
	expect_nothing(&a);
	expect_nothing(&b);
	/* a truncate breaks a new grant too */
	create(&b, "f1", SMB2_OPLOCK_LEVEL_II, NULL, false, &rb);
	ck_assert_uint_eq(rb.oplock, SMB2_OPLOCK_LEVEL_II);
	nfs_write("f1", true);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	smbt_loop_turn(srv);
	expect_oplock_break(&b, rb.fid);
}
END_TEST

START_TEST(test_smb_write_breaks)
{
	struct smbt_conn a, b;
	struct create_res ra, rb;

	conn_new(&a, 1, ON);
	conn_new(&b, 2, ON);
	create(&a, "f1", 0, &(struct lease_req){ .on = true, .key = 0x11, .state = RWH }, false, &ra);
	create(&b, "f1", SMB2_OPLOCK_LEVEL_NONE, NULL, false, &rb);
	ck_assert_uint_eq(smb_write(&b, rb.fid, "smb"), STATUS_SUCCESS);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	smbt_loop_turn(srv);
	expect_lease_break(&a, 0x11, 0); /* v1: no epoch */
	expect_nothing(&b);
}
END_TEST

START_TEST(test_ack_validation)
{
	struct smbt_conn a;
	struct create_res r, rl;

	conn_new(&a, 1, ON);
	create(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, NULL, false, &r);
	create(&a, "f2", 0, &(struct lease_req){ .on = true, .key = 0x11, .state = RWH }, false, &rl);
	ck_assert_uint_eq(ack_oplock(&a, r.fid, SMB2_OPLOCK_LEVEL_NONE), STATUS_INVALID_OPLOCK_PROTOCOL);
	ck_assert_uint_eq(ack_oplock(&a, r.fid, SMB2_OPLOCK_LEVEL_II), STATUS_INVALID_OPLOCK_PROTOCOL);
	ck_assert_uint_eq(ack_oplock(&a, r.fid, SMB2_OPLOCK_LEVEL_LEASE), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(ack_oplock(&a, 999, SMB2_OPLOCK_LEVEL_NONE), STATUS_FILE_CLOSED);
	ck_assert_uint_eq(ack_lease(&a, 0x11, 0), STATUS_UNSUCCESSFUL); /* held, not breaking */
	ck_assert_uint_eq(ack_lease(&a, 0x33, 0), STATUS_OBJECT_NAME_NOT_FOUND);
}
END_TEST

START_TEST(test_close_drops)
{
	struct smbt_conn a;
	struct create_res r;

	conn_new(&a, 1, ON);
	create(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, NULL, false, &r);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
	ck_assert_uint_eq(close_fid(&a, r.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	nfs_write("f1", false);
	smbt_loop_turn(srv);
	expect_nothing(&a);
}
END_TEST

static Suite *smb_lease_suite(void)
{
	Suite *s = suite_create("smb_lease");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_oplock_grant);
	tcase_add_test(tc, test_lease_grant);
	tcase_add_test(tc, test_oplocks_off);
	tcase_add_test(tc, test_nfs_write_breaks);
	tcase_add_test(tc, test_smb_write_breaks);
	tcase_add_test(tc, test_ack_validation);
	tcase_add_test(tc, test_close_drops);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_lease_suite());
}
