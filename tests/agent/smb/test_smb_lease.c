/* test_smb_lease: SMB2 oplock and lease grants (agent/smb/smb_lease.c) over
 * the store's cached-open table (agent/vol/vol_lease.c), and the breaks
 * that need no acknowledgment, through the server's own dispatcher
 * (smb_harness.h, requests from smb_leasemsg.h). Changes from "NFS" are the
 * store's own calls (vol_write, vol_setattr), which the NFSv3 and NFSv4.1
 * front ends make. The acknowledged breaks are test_smb_break's.
 * - grants: BATCH, EXCLUSIVE and II as asked on a file nobody else has
 *   open; a lease (v1 or v2) gets what it asks among R, RH, RW, RWH (H
 *   alone: nothing), its key echoed, a v2 epoch one past the client's, a
 *   second open of the key joins the lease (which only grows, to a superset,
 *   with a new epoch, and not while another client has the file open; a
 *   stat open does not count); a directory gets nothing; a lease key reused
 *   on another file or folder is INVALID_PARAMETER;
 * - smbSettings without OPLOCKS: no oplock, no lease context, no grant;
 * - a write or a truncate through the store (as NFS makes it) takes read
 *   grants off the table before it returns, and the holders get an oplock
 *   break to NONE / a lease break R -> NONE without ACK_REQUIRED;
 *   a SMB WRITE of another connection breaks the same way, the writer's own
 *   lease (RWH) is not broken;
 * - acknowledgments with no break in progress: an oplock ack is
 *   INVALID_OPLOCK_PROTOCOL (FILE_CLOSED for an unknown FileId,
 *   INVALID_PARAMETER with the level LEASE), a lease ack
 *   OBJECT_NAME_NOT_FOUND for an unknown key, UNSUCCESSFUL for a held one;
 * - CLOSE drops the grant: a later write breaks nothing;
 * - a key on two connections of one ClientGuid is one lease (joined
 *   without a break, broken once, acknowledged on either connection).
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
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static const struct vol_cred nfs_cred = { .uid = 0, .gid = 0 };

#define ON API_INTENT_SMB_OPLOCKS

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
}

static void teardown(void)
{
	smbt_conns_free(srv);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0); /* every grant went with its open */
	smbt_export_down(&ts, srv, exp0);
}

/* A connection whose tree is the store's first export (CREATE opens in it). */
static void conn_new(struct smbt_conn *tc, uint64_t key, unsigned settings)
{
	smbt_conn_export(tc, srv, &ts, key, settings);
}

/* A CREATE of name asking an oplock (or, lease.on, a lease). */
static struct smbl_create open_oplock(struct smbt_conn *tc, const char *name, uint8_t oplock, bool dir)
{
	struct smbl_create q = { .name = name, .oplock = oplock, .dir = dir };

	smbl_create(tc, &q);
	return q;
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

START_TEST(test_oplock_grant)
{
	struct smbt_conn a;
	struct smbl_create r;

	conn_new(&a, 1, ON);
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, false);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	ck_assert(!r.ctx);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_EXCLUSIVE, false);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_EXCLUSIVE);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_II, false);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_II);
	/* another open exists: BATCH is Level II at most */
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, false);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_II);
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_NONE, false);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_NONE);
	ck_assert_uint_eq(vol_lease_count(ts.store), 2);
	r = open_oplock(&a, "d1", SMB2_OPLOCK_LEVEL_BATCH, true);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_NONE); /* directories: nothing */
	ck_assert_uint_eq(vol_lease_count(ts.store), 2);
}
END_TEST

START_TEST(test_lease_grant)
{
	struct smbt_conn a;
	struct smbl_create r;
	uint8_t k[16];

	conn_new(&a, 1, ON);
	r = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_RWH });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_LEASE);
	ck_assert(r.ctx);
	ck_assert_uint_eq(r.ctx_len, 32);
	memset(k, 0x11, 16);
	ck_assert_mem_eq(r.key, k, 16);
	ck_assert_uint_eq(r.state, SMBL_RWH);
	r = smbl_open_lease(&a, "f2", (struct smbl_lease){ .v2 = true, .key = 0x22, .state = SMBL_RH, .epoch = 5 });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.ctx_len, 52);
	ck_assert_uint_eq(r.state, SMBL_RH);
	ck_assert_uint_eq(r.epoch, 6);
	/* the same key on the same file: the same lease, its epoch; it does not shrink */
	r = smbl_open_lease(&a, "f2", (struct smbl_lease){ .v2 = true, .key = 0x22, .state = SMBL_R, .epoch = 9 });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.state, SMBL_RH);
	ck_assert_uint_eq(r.epoch, 6);
	/* it grows (the file is the lease's alone): a new epoch */
	r = smbl_open_lease(&a, "f2", (struct smbl_lease){ .v2 = true, .key = 0x22, .state = SMBL_RWH, .epoch = 9 });
	ck_assert_uint_eq(r.state, SMBL_RWH);
	ck_assert_uint_eq(r.epoch, 7);
	/* H without R is no lease state */
	r = smbl_open_lease(&a, "f4", (struct smbl_lease){ .key = 0x44, .state = 0x2u });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.state, 0);
	/* a lease key names one file */
	r = smbl_open_lease(&a, "f3", (struct smbl_lease){ .key = 0x11, .state = SMBL_R });
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(vol_lease_count(ts.store), 4);
}
END_TEST

START_TEST(test_lease_upgrade_rules)
{
	struct smbt_conn a, b;
	struct smbl_create r, d = { .name = "d9", .dir = true, .lease = { .on = true, .key = 0x55, .state = SMBL_RH } };

	conn_new(&a, 1, ON);
	conn_new(&b, 2, ON);
	/* a lease grows only to a superset of what it holds */
	r = smbl_open_lease(&a, "f5", (struct smbl_lease){ .key = 0x55, .state = SMBL_RH });
	ck_assert_uint_eq(r.state, SMBL_RH);
	r = smbl_open_lease(&a, "f5", (struct smbl_lease){ .key = 0x55, .state = SMBL_RW });
	ck_assert_uint_eq(r.state, SMBL_RH);
	r = smbl_open_lease(&a, "f5", (struct smbl_lease){ .key = 0x55, .state = SMBL_RWH });
	ck_assert_uint_eq(r.state, SMBL_RWH);
	/* a folder with the key of a file: refused too */
	smbl_create(&a, &d);
	ck_assert_uint_eq(d.status, STATUS_INVALID_PARAMETER);
	/* and not at all while another client has the file open */
	r = smbl_open_lease(&a, "f6", (struct smbl_lease){ .key = 0x66, .state = SMBL_R });
	r = smbl_open_lease(&b, "f6", (struct smbl_lease){ .key = 0x77, .state = SMBL_RH });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.state, SMBL_RH);
	r = smbl_open_lease(&a, "f6", (struct smbl_lease){ .key = 0x66, .state = SMBL_RWH });
	ck_assert_uint_eq(r.state, SMBL_R);
	/* a stat open (attributes only) does not keep W from a lease */
	r = (struct smbl_create){ .name = "f7", .access = 0x80u | 0x100000u };
	smbl_create(&b, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	r = smbl_open_lease(&a, "f7", (struct smbl_lease){ .key = 0x88, .state = SMBL_RWH });
	ck_assert_uint_eq(r.state, SMBL_RWH);
}
END_TEST

/* A lease keeps the version its first open gave it (smbtorture
 * smb2.lease.v2_epoch2/3): another version's request joining it is
 * answered in the lease's, a v2 lease's epoch being the lease's own. */
START_TEST(test_lease_version_kept)
{
	struct smbt_conn a;
	struct smbl_create r;

	conn_new(&a, 1, ON);
	r = smbl_open_lease(&a, "f1", (struct smbl_lease){ .v2 = true, .key = 0x11, .state = SMBL_R, .epoch = 0x4711 });
	ck_assert_uint_eq(r.ctx_len, 52);
	ck_assert_uint_eq(r.epoch, 0x4712);
	r = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_RH });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.ctx_len, 52); /* a v1 request, answered v2 */
	ck_assert_uint_eq(r.state, SMBL_RH);
	ck_assert_uint_eq(r.epoch, 0x4713);
	r = smbl_open_lease(&a, "f1", (struct smbl_lease){ .v2 = true, .key = 0x11, .state = SMBL_RWH, .epoch = 0x11 });
	ck_assert_uint_eq(r.ctx_len, 52);
	ck_assert_uint_eq(r.state, SMBL_RWH);
	ck_assert_uint_eq(r.epoch, 0x4714); /* the lease's epoch, not the request's */
	/* a v1 lease: a v2 request joining it is answered v1 */
	r = smbl_open_lease(&a, "f2", (struct smbl_lease){ .key = 0x22, .state = SMBL_R });
	ck_assert_uint_eq(r.ctx_len, 32);
	r = smbl_open_lease(&a, "f2",
			    (struct smbl_lease){ .v2 = true, .key = 0x22, .state = SMBL_RW, .epoch = 0x4711 });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.ctx_len, 32);
	ck_assert_uint_eq(r.state, SMBL_RW);
}
END_TEST

START_TEST(test_oplocks_off)
{
	struct smbt_conn a;
	struct smbl_create r;

	conn_new(&a, 1, API_INTENT_SMB_CHANGE_NOTIFY);
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, false);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_NONE);
	r = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_RWH });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_NONE);
	ck_assert(!r.ctx);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
}
END_TEST

START_TEST(test_nfs_write_breaks)
{
	struct smbt_conn a, b;
	struct smbl_create ra, rb;

	conn_new(&a, 1, ON);
	conn_new(&b, 2, ON);
	ra = smbl_open_lease(&a, "f1", (struct smbl_lease){ .v2 = true, .key = 0x11, .state = SMBL_R, .epoch = 1 });
	ck_assert_uint_eq(ra.state, SMBL_R);
	smbl_open_lease(&a, "f1", (struct smbl_lease){ .v2 = true, .key = 0x11, .state = SMBL_R, .epoch = 1 });
	rb = open_oplock(&b, "f1", SMB2_OPLOCK_LEVEL_II, false);
	ck_assert_uint_eq(rb.oplock_got, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(vol_lease_count(ts.store), 3);
	nfs_write("f1", false);
	/* gone from the table before the write returned */
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	smbt_loop_turn(srv);
	smbl_expect_lease_break(&a, 0x11, 3, 0, SMBL_R, 0); /* no ACK_REQUIRED: only R is lost */
	smbl_expect_nothing(&a);                             /* one break per lease, not per open */
	smbl_expect_oplock_break(&b, rb.fid, SMB2_OPLOCK_LEVEL_NONE);
	smbl_expect_nothing(&b);
	/* a later write finds nothing to break */
	nfs_write("f1", false);
	smbt_loop_turn(srv);
	smbl_expect_nothing(&a);
	smbl_expect_nothing(&b);
	/* a truncate breaks a new grant too */
	rb = open_oplock(&b, "f1", SMB2_OPLOCK_LEVEL_II, false);
	ck_assert_uint_eq(rb.oplock_got, SMB2_OPLOCK_LEVEL_II);
	nfs_write("f1", true);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	smbt_loop_turn(srv);
	smbl_expect_oplock_break(&b, rb.fid, SMB2_OPLOCK_LEVEL_NONE);
}
END_TEST

START_TEST(test_smb_write_breaks)
{
	struct smbt_conn a, b;
	struct smbl_create rb, rw;

	conn_new(&a, 1, ON);
	conn_new(&b, 2, ON);
	smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_R });
	rb = open_oplock(&b, "f1", SMB2_OPLOCK_LEVEL_NONE, false);
	ck_assert_uint_eq(smbl_write(&b, rb.fid, "smb"), STATUS_SUCCESS);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	smbt_loop_turn(srv);
	smbl_expect_lease_break(&a, 0x11, 0, 0, SMBL_R, 0); /* v1: no epoch */
	smbl_expect_nothing(&b);
	/* a writer's own lease caches its writes: nothing is broken */
	rw = smbl_open_lease(&a, "f2", (struct smbl_lease){ .key = 0x22, .state = SMBL_RWH });
	ck_assert_uint_eq(rw.state, SMBL_RWH);
	ck_assert_uint_eq(smbl_write(&a, rw.fid, "own"), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	smbl_expect_nothing(&a);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
}
END_TEST

START_TEST(test_ack_validation)
{
	struct smbt_conn a;
	struct smbl_create r;

	conn_new(&a, 1, ON);
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, false);
	smbl_open_lease(&a, "f2", (struct smbl_lease){ .key = 0x11, .state = SMBL_RWH });
	ck_assert_uint_eq(smbl_ack_oplock(&a, r.fid, SMB2_OPLOCK_LEVEL_NONE, NULL), STATUS_INVALID_OPLOCK_PROTOCOL);
	ck_assert_uint_eq(smbl_ack_oplock(&a, r.fid, SMB2_OPLOCK_LEVEL_II, NULL), STATUS_INVALID_OPLOCK_PROTOCOL);
	ck_assert_uint_eq(smbl_ack_oplock(&a, r.fid, SMB2_OPLOCK_LEVEL_LEASE, NULL), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(smbl_ack_oplock(&a, 999, SMB2_OPLOCK_LEVEL_NONE, NULL), STATUS_FILE_CLOSED);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, 0, NULL), STATUS_UNSUCCESSFUL); /* held, not breaking */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x33, 0, NULL), STATUS_OBJECT_NAME_NOT_FOUND);
}
END_TEST

START_TEST(test_close_drops)
{
	struct smbt_conn a;
	struct smbl_create r;

	conn_new(&a, 1, ON);
	r = open_oplock(&a, "f1", SMB2_OPLOCK_LEVEL_BATCH, false);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	nfs_write("f1", false);
	smbt_loop_turn(srv);
	smbl_expect_nothing(&a);
}
END_TEST

/* The lease table is the client's (MS-SMB2 3.3.1.10): a key used on two
 * connections with one ClientGuid is one lease; its break goes out once
 * and is acknowledged on either. */
START_TEST(test_lease_across_connections)
{
	struct smbt_conn a, b, w;
	struct smbl_create ra, rb, q = { .name = "g" };
	struct smbl_msg m;
	int on_a;

	conn_new(&a, 1, ON);
	conn_new(&b, 2, ON);
	conn_new(&w, 3, ON); /* another client: a zero ClientGuid names only its connection */
	memset(a.c->client_guid, 0xc1, 16);
	memset(b.c->client_guid, 0xc1, 16);
	ra = smbl_open_lease(&a, "g", (struct smbl_lease){ .v2 = true, .key = 0x55, .state = SMBL_RWH });
	ck_assert_uint_eq(ra.state, SMBL_RWH);
	rb = smbl_open_lease(&b, "g", (struct smbl_lease){ .v2 = true, .key = 0x55, .state = SMBL_RWH });
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS); /* joined: nothing to break, nothing to wait for */
	ck_assert_uint_eq(rb.state, SMBL_RWH);
	ck_assert_uint_eq(rb.epoch, ra.epoch);
	smbt_loop_turn(srv);
	smbl_expect_nothing(&a);
	smbl_expect_nothing(&b);
	/* another client's open takes W: one break for the lease, acknowledged on the other connection */
	smbl_create(&w, &q);
	ck_assert_uint_eq(q.status, STATUS_PENDING);
	smbt_loop_turn(srv);
	on_a = smbl_recv(&a, &m);
	if (on_a)
		smbl_expect_nothing(&b);
	else
		ck_assert_int_eq(smbl_recv(&b, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_OPLOCK_BREAK);
	ck_assert_uint_eq(smbl_ack_lease(on_a ? &b : &a, 0x55, SMBL_RH, NULL), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	smbl_create_final(&w, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	smbl_expect_nothing(&a);
	smbl_expect_nothing(&b);
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
	tcase_add_test(tc, test_lease_upgrade_rules);
	tcase_add_test(tc, test_lease_version_kept);
	tcase_add_test(tc, test_oplocks_off);
	tcase_add_test(tc, test_nfs_write_breaks);
	tcase_add_test(tc, test_smb_write_breaks);
	tcase_add_test(tc, test_ack_validation);
	tcase_add_test(tc, test_close_drops);
	tcase_add_test(tc, test_lease_across_connections);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_lease_suite());
}
