/* test_smb_lease_steps: the lease and oplock rules smbd and Windows follow
 * that smbtorture smb2.lease and smb2.oplock check (agent/smb/smb_lease.c,
 * agent/smb/smb_async.c over agent/vol/vol_lease.c), through the server's
 * own dispatcher (smb_harness.h, requests from smb_leasemsg.h), each
 * checking the state a break goes to and the status smbd answers:
 * - grants: a lease asking to grow beside another client's lease grows only
 *   to a state both can hold (RH beside R: yes; RWH: stays R; upgrade3);
 *   a lease beside an oplock gets R at most, an oplock beside another
 *   client's lease with H nothing (lease.oplock); a stat open gets no
 *   Level II oplock beside another's EXCLUSIVE (it breaks nothing), Level II
 *   beside Level II or when it overwrites (oplock.exclusive5, batch13), an open for READ_CONTROL is no stat open and breaks
 *   oplocks, not leases (oplock.exclusive4, statopen1, lease.statopen4); a stat open's lease keeps W from others
 *   and is broken like any (lease.statopen);
 * - a lease broken to nothing and asked again holds what it is granted
 *   after that open closes (lease.nobreakself), and a key grown on another
 *   connection of the client is broken from there (lease.complex1);
 * - a byte-range lock breaks another client's RH lease to nothing,
 *   acknowledged, and answers at once (lease.lock1);
 * - breaks go in steps: an ack keeping H while a later open took R too is
 *   followed by a break to R (ack required, same epoch), then R to nothing
 *   without ack; an open joining meanwhile is told the state with
 *   BREAK_IN_PROGRESS and grows nothing (lease.breaking3, v2_breaking3);
 * - an open the share modes allow waits for W only: an overwrite of a file
 *   under RH is answered at once while RH -> NONE awaits its ack
 *   (lease.breaking4);
 * - an allocation size set past the end, which cuts nothing, breaks
 *   another open's Level II all the same (oplock.batch12).
 */
#include <check.h>
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


#define ACK SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED
#define BREAK_IN_PROGRESS 0x2u
#define STAT_ACCESS (0x80u | 0x100u | 0x100000u) /* read/write attributes, synchronize */
#define READ_CONTROL 0x20000u

START_TEST(test_upgrade_beside_another_lease)
{
	struct smbt_conn a, b;
	struct smbl_create r;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	ck_assert_uint_eq(smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_R }).state, SMBL_R);
	ck_assert_uint_eq(smbl_open_lease(&b, "f1", (struct smbl_lease){ .key = 0x22, .state = SMBL_R }).state, SMBL_R);
	/* W cannot be held beside the other lease: the request changes nothing */
	r = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_RWH });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.state, SMBL_R);
	/* RH can: granted, and the other lease is not broken */
	r = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_RH });
	ck_assert_uint_eq(r.state, SMBL_RH);
	ck_assert_uint_eq(smbl_grant_state(&a, r.fid, NULL), VOL_LEASE_R | VOL_LEASE_H);
	/* nothing else to ask for: what it holds */
	ck_assert_uint_eq(smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = 0 }).state, SMBL_RH);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	smbl_expect_nothing(&b);
}
END_TEST

START_TEST(test_lease_beside_oplock)
{
	struct smbt_conn a, b;
	struct smbl_create r, q = { .name = "f2", .oplock = SMB2_OPLOCK_LEVEL_II };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.oplock_got, SMB2_OPLOCK_LEVEL_II);
	/* a Level II oplock on the file: the lease gets R, not RH */
	r = smbl_open_lease(&b, "f2", (struct smbl_lease){ .key = 0x22, .state = SMBL_RH });
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.state, SMBL_R);
	/* and the other way round: a lease with H held, a BATCH asked: no oplock */
	ck_assert_uint_eq(smbl_open_lease(&a, "f3", (struct smbl_lease){ .key = 0x33, .state = SMBL_RH }).state,
			  SMBL_RH);
	q = (struct smbl_create){ .name = "f3", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_uint_eq(q.oplock_got, SMB2_OPLOCK_LEVEL_NONE);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	smbl_expect_nothing(&b);
}
END_TEST

START_TEST(test_stat_opens_and_oplocks)
{
	struct smbt_conn a, b;
	struct smbl_create qa = { .name = "f4", .oplock = SMB2_OPLOCK_LEVEL_EXCLUSIVE };
	struct smbl_create qs = { .name = "f4", .oplock = SMB2_OPLOCK_LEVEL_EXCLUSIVE, .access = STAT_ACCESS };
	struct smbl_create qc = { .name = "f4", .access = READ_CONTROL };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &qa);
	ck_assert_uint_eq(qa.oplock_got, SMB2_OPLOCK_LEVEL_EXCLUSIVE);
	/* a stat open beside it: no oplock (smbd answers none), no break */
	smbl_create(&b, &qs);
	ck_assert_uint_eq(qs.status, STATUS_SUCCESS);
	ck_assert_uint_eq(qs.oplock_got, SMB2_OPLOCK_LEVEL_NONE);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	/* READ_CONTROL is no stat open: EXCLUSIVE breaks to Level II */
	smbl_create(&b, &qc);
	ck_assert_uint_eq(qc.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, qa.fid, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(smbl_ack_oplock(&a, qa.fid, SMB2_OPLOCK_LEVEL_II, NULL), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &qc);
	ck_assert_uint_eq(qc.status, STATUS_SUCCESS);
	/* a stat open that overwrites gets Level II beside a writer: its truncate breaks it */
	{
		struct smbl_create qx = { .name = "f4c", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
		struct smbl_create qo = { .name = "f4c", .oplock = SMB2_OPLOCK_LEVEL_BATCH, .access = STAT_ACCESS,
					  .disposition = SMBL_OVERWRITE_IF };

		smbl_create(&a, &qx);
		ck_assert_uint_eq(qx.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
		smbl_create(&b, &qo);
		ck_assert_uint_eq(qo.status, STATUS_SUCCESS);
		ck_assert_uint_eq(qo.oplock_got, SMB2_OPLOCK_LEVEL_II);
		smbt_loop_turn(smbl_srv);
		smbl_expect_oplock_break(&a, qx.fid, SMB2_OPLOCK_LEVEL_NONE);
	}
	/* beside Level II only, a stat open gets Level II */
	qs = (struct smbl_create){ .name = "f4", .oplock = SMB2_OPLOCK_LEVEL_II, .access = STAT_ACCESS };
	smbl_create(&b, &qs);
	ck_assert_uint_eq(qs.oplock_got, SMB2_OPLOCK_LEVEL_II);
	/* a lease is not broken by it: answered at once, no break */
	ck_assert_uint_eq(smbl_open_lease(&a, "f4b", (struct smbl_lease){ .key = 0x44, .state = SMBL_RWH }).state,
			  SMBL_RWH);
	qc = (struct smbl_create){ .name = "f4b", .access = READ_CONTROL };
	smbl_create(&b, &qc);
	ck_assert_uint_eq(qc.status, STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
}
END_TEST

START_TEST(test_stat_open_lease_is_broken)
{
	struct smbt_conn a, b;
	struct smbl_create s = { .name = "f5", .access = STAT_ACCESS, .lease = { .on = true, .key = 0x11, .state = SMBL_RWH } };
	struct smbl_create r = { .name = "f5", .lease = { .on = true, .key = 0x22, .state = SMBL_RWH } };
	uint32_t got = 0;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &s);
	ck_assert_uint_eq(s.state, SMBL_RWH);
	/* the stat open holds the lease: the other client's RWH breaks it to RH */
	smbl_create(&b, &r);
	ck_assert_uint_eq(r.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, ACK, SMBL_RWH, SMBL_RH);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(got, SMBL_RH);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.state, SMBL_RH); /* no W beside the stat open's lease */
}
END_TEST

START_TEST(test_lease_granted_again_after_break)
{
	struct smbt_conn a;
	struct smbl_create r1, r2, r3;

	smbl_conn(&a, 1);
	r1 = smbl_open_lease(&a, "f6", (struct smbl_lease){ .key = 0x11, .state = SMBL_R });
	r2 = smbl_open_lease(&a, "f6", (struct smbl_lease){ .key = 0x22, .state = SMBL_R });
	ck_assert_uint_eq(r2.state, SMBL_R);
	ck_assert_uint_eq(smbl_write(&a, r1.fid, "x"), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x22, 0, 0, SMBL_R, 0);
	/* asked again: R, and held after that open closes */
	r3 = smbl_open_lease(&a, "f6", (struct smbl_lease){ .key = 0x22, .state = SMBL_R });
	ck_assert_uint_eq(r3.state, SMBL_R);
	ck_assert_uint_eq(smbl_close(&a, r3.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_grant_state(&a, r2.fid, NULL), VOL_LEASE_R);
	ck_assert_uint_eq(smbl_write(&a, r1.fid, "y"), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x22, 0, 0, SMBL_R, 0);
	smbl_expect_nothing(&a);
}
END_TEST

START_TEST(test_lease_grown_on_another_connection)
{
	struct smbt_conn a, b, w;
	struct smbl_create ra, rb, rw;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_conn(&w, 3);
	memset(a.c->client_guid, 0xc1, 16);
	memset(b.c->client_guid, 0xc1, 16);
	ra = smbl_open_lease(&a, "f7", (struct smbl_lease){ .key = 0x11, .state = SMBL_R });
	rb = smbl_open_lease(&b, "f7", (struct smbl_lease){ .key = 0x11, .state = SMBL_RWH });
	ck_assert_uint_eq(rb.state, SMBL_RWH);
	ck_assert_uint_eq(smbl_close(&b, rb.fid), STATUS_SUCCESS);
	/* the open left on a carries what the lease grew to */
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, NULL), VOL_LEASE_R | VOL_LEASE_H | VOL_LEASE_W);
	rw = smbl_open_lease(&w, "f7", (struct smbl_lease){ .key = 0x33, .state = SMBL_R });
	ck_assert_uint_eq(rw.status, STATUS_PENDING);
	smbl_break_acked(&a, 0x11, 0, SMBL_RWH, SMBL_RH, &w, &rw);
	ck_assert_uint_eq(rw.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rw.state, SMBL_R);
}
END_TEST

START_TEST(test_lock_breaks_handle_lease)
{
	struct smbt_conn a, b;
	struct smbl_create ra, rb;
	bool breaking = false;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	ra = smbl_open_lease(&a, "f8", (struct smbl_lease){ .key = 0x11, .state = SMBL_RH });
	rb = smbl_open_lease(&b, "f8", (struct smbl_lease){ .key = 0x22, .state = SMBL_RH });
	ck_assert_uint_eq(rb.state, SMBL_RH);
	/* answered at once; the other client's RH goes whole, acknowledged */
	ck_assert_uint_eq(smbl_lock(&b, rb.fid, 0), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, ACK, SMBL_RH, 0);
	smbl_expect_nothing(&b);
	/* the locker's own stays */
	ck_assert_uint_eq(smbl_grant_state(&b, rb.fid, &breaking), VOL_LEASE_R | VOL_LEASE_H);
	ck_assert(!breaking);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_R, NULL), STATUS_REQUEST_NOT_ACCEPTED);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, 0, NULL), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, NULL), 0);
}
END_TEST

START_TEST(test_break_in_steps)
{
	struct smbt_conn a, b, c;
	struct smbl_create ra = { .name = "f9", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_RWH, .epoch = 4 } };
	struct smbl_create rb = { .name = "f9" };
	struct smbl_create rc = { .name = "f9", .disposition = SMBL_OVERWRITE_IF };
	struct smbl_create j;
	uint32_t got = 0;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_conn(&c, 3);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.epoch, 5);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 6, ACK, SMBL_RWH, SMBL_RH);
	/* an overwrite while that waits: no second break yet, it waits too */
	smbl_create(&c, &rc);
	ck_assert_uint_eq(rc.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	/* joining meanwhile: the state held, BREAK_IN_PROGRESS */
	j = smbl_open_lease(&a, "f9", (struct smbl_lease){ .v2 = true, .key = 0x11, .state = SMBL_RWH, .epoch = 6 });
	ck_assert_uint_eq(j.state, SMBL_RWH);
	ck_assert_uint_eq(j.flags & BREAK_IN_PROGRESS, BREAK_IN_PROGRESS);
	ck_assert_uint_eq(smbl_close(&a, j.fid), STATUS_SUCCESS);
	/* the ack of RH is taken; H goes next, to R, acknowledged, same epoch */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(got, SMBL_RH);
	smbt_wait_msg(&a);
	smbl_expect_lease_break(&a, 0x11, 6, ACK, SMBL_RH, SMBL_R);
	/* asking RWH meanwhile grows nothing */
	j = smbl_open_lease(&a, "f9", (struct smbl_lease){ .v2 = true, .key = 0x11, .state = SMBL_RWH, .epoch = 6 });
	ck_assert_uint_eq(j.state, SMBL_RH);
	ck_assert_uint_eq(j.flags & BREAK_IN_PROGRESS, BREAK_IN_PROGRESS);
	ck_assert_uint_eq(j.epoch, 6);
	ck_assert_uint_eq(smbl_close(&a, j.fid), STATUS_SUCCESS);
	smbl_expect_nothing(&b);
	smbl_expect_nothing(&c);
	/* more than R: refused; R: taken, then R goes without an ack */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, NULL), STATUS_REQUEST_NOT_ACCEPTED);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_R, NULL), STATUS_SUCCESS);
	smbt_wait_msg(&a);
	smbl_expect_lease_break(&a, 0x11, 6, 0, SMBL_R, 0);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	smbl_create_final(&c, &rc);
	ck_assert_uint_eq(rc.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, NULL), 0);
}
END_TEST

START_TEST(test_overwrite_does_not_wait_for_handle)
{
	struct smbt_conn a, b;
	struct smbl_create ra, j;
	struct smbl_create rb = { .name = "fa", .disposition = SMBL_OVERWRITE_IF };
	bool breaking = false;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	ra = smbl_open_lease(&a, "fa", (struct smbl_lease){ .key = 0x11, .state = SMBL_RH });
	ck_assert_uint_eq(ra.state, SMBL_RH);
	/* answered at once: nothing cached for writing to wait for */
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, ACK, SMBL_RH, 0);
	ck_assert_uint_eq(smbl_close(&b, rb.fid), STATUS_SUCCESS);
	/* again while that break waits: at once, no second break */
	rb = (struct smbl_create){ .name = "fa", .disposition = SMBL_OVERWRITE_IF };
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, &breaking), VOL_LEASE_R | VOL_LEASE_H);
	ck_assert(breaking);
	j = smbl_open_lease(&a, "fa", (struct smbl_lease){ .key = 0x11, .state = 0 });
	ck_assert_uint_eq(j.state, SMBL_RH);
	ck_assert_uint_eq(j.flags & BREAK_IN_PROGRESS, BREAK_IN_PROGRESS);
	ck_assert_uint_eq(smbl_close(&a, j.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, 0, NULL), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, NULL), 0);
}
END_TEST

START_TEST(test_allocation_breaks_level2)
{
	struct smbt_conn a, b;
	struct smbl_create qa = { .name = "fb", .oplock = SMB2_OPLOCK_LEVEL_II };
	struct smbl_create qb = { .name = "fb" };
	uint8_t size[8] = { 0x00, 0x10 }; /* 4096: past the file's end, nothing cut */

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &qa);
	ck_assert_uint_eq(qa.oplock_got, SMB2_OPLOCK_LEVEL_II);
	smbl_create(&b, &qb);
	ck_assert_uint_eq(qb.status, STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	/* FileAllocationInformation (19): Level II goes to none, no ack */
	ck_assert_uint_eq(smbl_set_info(&b, qb.fid, 19, size, sizeof(size)), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, qa.fid, SMB2_OPLOCK_LEVEL_NONE);
	ck_assert_uint_eq(smbl_grant_state(&a, qa.fid, NULL), 0);
}
END_TEST

static Suite *smb_lease_steps_suite(void)
{
	Suite *s = suite_create("smb_lease_steps");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, smbl_fix_up, smbl_fix_down);
	tcase_add_test(tc, test_upgrade_beside_another_lease);
	tcase_add_test(tc, test_lease_beside_oplock);
	tcase_add_test(tc, test_stat_opens_and_oplocks);
	tcase_add_test(tc, test_stat_open_lease_is_broken);
	tcase_add_test(tc, test_lease_granted_again_after_break);
	tcase_add_test(tc, test_lease_grown_on_another_connection);
	tcase_add_test(tc, test_lock_breaks_handle_lease);
	tcase_add_test(tc, test_break_in_steps);
	tcase_add_test(tc, test_overwrite_does_not_wait_for_handle);
	tcase_add_test(tc, test_allocation_breaks_level2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_lease_steps_suite());
}
