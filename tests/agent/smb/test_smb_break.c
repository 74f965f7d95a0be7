/* test_smb_break: breaks that wait for the holder's acknowledgment
 * (agent/smb/smb_lease.c, agent/smb/smb_async.c) over the store's
 * cached-open table (agent/vol/vol_lease.c), through the server's own
 * dispatcher (smb_harness.h, requests from smb_leasemsg.h):
 * - a CREATE of another client on a file under a BATCH oplock is answered
 *   STATUS_PENDING, the holder gets a break to Level II, and the CREATE
 *   completes (async, same AsyncId) only once the holder acknowledged;
 * - a lease RWH (v2): the other client's CREATE breaks it to RH with
 *   ACK_REQUIRED and the next epoch; an ack keeping more than RH is
 *   REQUEST_NOT_ACCEPTED and changes nothing; an ack of RH completes the
 *   CREATE, which gets RH (no W beside another open);
 * - the break timeout revokes a break nobody acknowledges: the CREATE goes
 *   on, an oplock holder is left with what the break left, a lease holder
 *   with nothing (Windows), told nothing more; a late ack is refused;
 * - the holder closing instead of acknowledging ends the wait;
 * - CANCEL of a waiting CREATE answers it STATUS_CANCELLED;
 * - a CREATE the share modes refuse while another client caches the handle
 *   (RH) breaks H first and waits; once the holder closed it is granted;
 * - a break while another waits (an NFS write while a CREATE's break
 *   waits): the ack of what the first announced is taken, the next break (to
 *   NONE) follows, and the write goes on only once that is acknowledged too;
 * - an open the share modes refuse breaks no EXCLUSIVE oplock, a stat open
 *   (attributes only) no BATCH; a Level II holder's own write breaks it to
 *   NONE (an ack of that is INVALID_OPLOCK_PROTOCOL);
 * - a blocking LOCK that waited on a third client's lock breaks, when it is
 *   granted, a Level II oplock and an R lease on the file (to none, no
 *   acknowledgment) as one granted at once does: not while it waits;
 * - an NFS write (vol_write, on another thread) to a file under an RWH lease
 *   waits in the store until the SMB holder acknowledged its break (RWH ->
 *   NONE): until then the file holds the old bytes; with no ack it goes on
 *   after the break timeout;
 * - a compound CREATE + related QUERY_INFO whose CREATE breaks a BATCH
 *   oplock of the same connection (smbtorture smb2.compound.compound-break):
 *   the break goes, the compound waits (no interim, nothing answered), and
 *   once acknowledged both are answered in one frame, sync, signed, both
 *   successful; a CANCEL of such a waiting CREATE answers it CANCELLED and
 *   its related request too.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "api/api_error.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static const struct vol_cred nfs_cred = { .uid = 0, .gid = 0 };


START_TEST(test_batch_break_waits_for_ack)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_create rb = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	uint8_t level = 0xEE;
	bool breaking = false;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING); /* interim, async */
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_II);
	smbl_expect_nothing(&b); /* still waiting */
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, &breaking), VOL_LEASE_R | VOL_LEASE_H | VOL_LEASE_W);
	ck_assert(breaking);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&b);
	ck_assert_uint_eq(smbl_ack_oplock(&a, ra.fid, SMB2_OPLOCK_LEVEL_II, &level), STATUS_SUCCESS);
	ck_assert_uint_eq(level, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, &breaking), VOL_LEASE_R);
	ck_assert(!breaking);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rb.oplock_got, SMB2_OPLOCK_LEVEL_II); /* another open exists */
	smbl_expect_nothing(&a);
	ck_assert_uint_eq(smbl_srv->ncreates, 0);
}
END_TEST

START_TEST(test_lease_break_ack)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_RWH, .epoch = 1 } };
	struct smbl_create rb = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x22, .state = SMBL_RWH } };
	uint32_t got = 0;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RWH);
	ck_assert_uint_eq(ra.epoch, 2);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 3, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RWH, SMBL_RH);
	smbl_expect_nothing(&a);
	/* more than the break left: refused, nothing changes */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RWH, NULL), STATUS_REQUEST_NOT_ACCEPTED);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&b);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(got, SMBL_RH);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rb.state, SMBL_RH); /* no W beside another client's open */
	/* an ack with nothing breaking */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, NULL), STATUS_UNSUCCESSFUL);
}
END_TEST

START_TEST(test_break_timeout_revokes)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_EXCLUSIVE };
	struct smbl_create rb = { .name = "f1" };
	bool breaking = true;

	ck_assert_int_eq(vol_lease_set_timeout(smbl_ts.store, 0), -EINVAL);
	ck_assert_int_eq(vol_lease_set_timeout(smbl_ts.store, 200), 0);
	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_EXCLUSIVE);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_II);
	smb_async_tick(smbl_srv); /* before the timeout: still waiting */
	smbl_expect_nothing(&b);
	usleep(300 * 1000);
	smb_async_tick(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, &breaking), VOL_LEASE_R); /* revoked to what the break left */
	ck_assert(!breaking);
	ck_assert_uint_eq(smbl_ack_oplock(&a, ra.fid, SMB2_OPLOCK_LEVEL_II, NULL), STATUS_INVALID_OPLOCK_PROTOCOL);
}
END_TEST

/* A lease's break nobody acknowledges: at the timeout the whole lease goes
 * (Windows; smbtorture smb2.lease.timeout), the holder is told nothing
 * more, a late ack is UNSUCCESSFUL, a look at the lease (state none asked)
 * answers none without BREAK_IN_PROGRESS, a write through it breaks the
 * other lease, and the lease is granted again (R, then RWH) once asked. */
START_TEST(test_lease_timeout_takes_all)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RWH } };
	struct smbl_create rb = { .name = "f1", .lease = { .on = true, .key = 0x22, .state = SMBL_RWH } };
	struct smbl_create q;
	bool breaking = true;

	ck_assert_int_eq(vol_lease_set_timeout(smbl_ts.store, 200), 0);
	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RWH);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RWH, SMBL_RH);
	usleep(300 * 1000);
	smb_async_tick(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rb.state, SMBL_RH);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a); /* revoked: nothing more is sent */
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, &breaking), 0);
	ck_assert(!breaking);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, NULL), STATUS_UNSUCCESSFUL);
	q = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = 0 });
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_uint_eq(q.state, 0);
	ck_assert_uint_eq(q.flags, 0);
	ck_assert_uint_eq(smbl_close(&a, q.fid), STATUS_SUCCESS);
	/* a write through the lease breaks the other one (RH -> none) */
	ck_assert_uint_eq(smbl_write(&a, ra.fid, "x"), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&b, 0x22, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, 0);
	ck_assert_uint_eq(smbl_ack_lease(&b, 0x22, 0, NULL), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&b, rb.fid), STATUS_SUCCESS);
	q = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_R });
	ck_assert_uint_eq(q.state, SMBL_R);
	ck_assert_uint_eq(q.flags, 0);
	ck_assert_uint_eq(smbl_close(&a, q.fid), STATUS_SUCCESS);
	q = smbl_open_lease(&a, "f1", (struct smbl_lease){ .key = 0x11, .state = SMBL_RWH });
	ck_assert_uint_eq(q.state, SMBL_RWH);
	ck_assert_uint_eq(smbl_close(&a, q.fid), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
}
END_TEST

START_TEST(test_holder_close_ends_wait)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RWH } };
	struct smbl_create rb = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RWH, SMBL_RH);
	ck_assert_uint_eq(smbl_close(&a, ra.fid), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rb.oplock_got, SMB2_OPLOCK_LEVEL_BATCH); /* the file is b's alone now */
}
END_TEST

START_TEST(test_cancel_waiting_create)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_create rb = { .name = "f1" };
	struct smbl_msg m;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbt_cancel(&b, true, rb.aid);
	ck_assert_int_eq(smbl_recv(&b, &m), 1);
	smbt_check_final(&m.h, SMB2_CREATE, rb.mid, rb.aid, STATUS_CANCELLED);
	ck_assert_uint_eq(smbl_srv->ncreates, 0);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_II); /* the break itself stands */
}
END_TEST

START_TEST(test_sharing_violation_breaks_handle)
{
	struct smbt_conn a, b;
	/* a shares read only: b's write access is a sharing violation */
	struct smbl_create ra = { .name = "f1", .share = 1, .lease = { .on = true, .key = 0x11, .state = SMBL_RH } };
	struct smbl_create rb = { .name = "f1" };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RH);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING); /* H is broken before the violation is answered */
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, SMBL_R);
	/* the holder gives the handle back: closes it */
	ck_assert_uint_eq(smbl_close(&a, ra.fid), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	/* the holder keeps its open: the violation is answered after the ack */
	ra = (struct smbl_create){ .name = "f2", .share = 1, .lease = { .on = true, .key = 0x22, .state = SMBL_RH } };
	rb = (struct smbl_create){ .name = "f2" };
	smbl_create(&a, &ra);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbl_break_acked(&a, 0x22, 0, SMBL_RH, SMBL_R, &b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SHARING_VIOLATION);
}
END_TEST

START_TEST(test_no_break_on_refused_or_stat_open)
{
	struct smbt_conn a, b;
	/* EXCLUSIVE, sharing nothing: caches no handle, so a refused open breaks nothing */
	struct smbl_create ra = { .name = "f1", .share_none = true, .oplock = SMB2_OPLOCK_LEVEL_EXCLUSIVE };
	struct smbl_create rb = { .name = "f1" };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_EXCLUSIVE);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SHARING_VIOLATION);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	ck_assert_uint_eq(smbl_close(&a, ra.fid), STATUS_SUCCESS);
	/* a BATCH, and an open for attributes only (a stat open): no break either */
	ra = (struct smbl_create){ .name = "f2", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	rb = (struct smbl_create){ .name = "f2", .access = 0x80u | 0x100000u };
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
}
END_TEST

/* A sharing violation takes H alone (the holder keeps RW), the next open
 * that succeeds W (smbtorture smb2.lease.break_twice). */
START_TEST(test_sharing_violation_takes_handle_only)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_RWH, .epoch = 0x10 } };
	struct smbl_create rb = { .name = "f1", .share = 1, .lease = { .on = true, .v2 = true, .key = 0x22, .state = SMBL_RWH } };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RWH);
	smbl_create(&b, &rb); /* shares read only: a's write access refuses it */
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbl_break_acked(&a, 0x11, 0x12, SMBL_RWH, SMBL_RW, &b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SHARING_VIOLATION);
	rb = (struct smbl_create){ .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x22, .state = SMBL_RWH } };
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbl_break_acked(&a, 0x11, 0x13, SMBL_RW, SMBL_R, &b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rb.state, SMBL_RH);
}
END_TEST

/* A lease is one cache whichever of its opens close (smbtorture
 * smb2.lease.v2_epoch2): the open left holds what the lease grew to. */
START_TEST(test_lease_state_outlives_its_opens)
{
	struct smbt_conn a;
	struct smbl_create r1 = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_R, .epoch = 0x10 } };
	struct smbl_create r2 = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RH } };
	struct smbl_create r3 = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_RWH } };
	struct smbl_create r4 = { .name = "f1" };

	smbl_conn(&a, 1);
	smbl_create(&a, &r1);
	ck_assert_uint_eq(r1.epoch, 0x11);
	smbl_create(&a, &r2);
	ck_assert_uint_eq(r2.state, SMBL_RH);
	ck_assert_uint_eq(r2.epoch, 0x12);
	ck_assert_uint_eq(smbl_close(&a, r1.fid), STATUS_SUCCESS);
	smbl_create(&a, &r3);
	ck_assert_uint_eq(r3.state, SMBL_RWH);
	ck_assert_uint_eq(r3.epoch, 0x13);
	ck_assert_uint_eq(smbl_close(&a, r3.fid), STATUS_SUCCESS); /* r2 is left, with RWH */
	smbl_create(&a, &r4);
	ck_assert_uint_eq(r4.status, STATUS_PENDING);
	smbl_break_acked(&a, 0x11, 0x14, SMBL_RWH, SMBL_RH, &a, &r4);
	ck_assert_uint_eq(r4.status, STATUS_SUCCESS);
}
END_TEST

START_TEST(test_level2_writer_breaks_itself)
{
	struct smbt_conn a;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_II };

	smbl_conn(&a, 1);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(smbl_write(&a, ra.fid, "x"), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_NONE); /* as Windows: every Level II goes */
	/* no ack is expected from II to NONE: one is a protocol error */
	ck_assert_uint_eq(smbl_ack_oplock(&a, ra.fid, SMB2_OPLOCK_LEVEL_NONE, NULL), STATUS_INVALID_OPLOCK_PROTOCOL);
}
END_TEST

START_TEST(test_waited_lock_breaks_read_caches)
{
	struct smbt_conn a, b, c, d;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_II };
	struct smbl_create rb = { .name = "f1" }, rc = { .name = "f1" }, rd;
	struct smbl_msg m;
	uint64_t aid;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_conn(&c, 3);
	smbl_conn(&d, 4);
	smbl_create(&c, &rc);
	ck_assert_uint_eq(smbl_lock(&c, rc.fid, 0), STATUS_SUCCESS); /* before any cache: breaks none */
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_II);
	rd = smbl_open_lease(&d, "f1", (struct smbl_lease){ .key = 0x44, .state = SMBL_R });
	ck_assert_uint_eq(rd.state, SMBL_R);
	smbl_create(&b, &rb);
	smbl_lock_msg(&b, rb.fid, 0, SMB2_LOCKFLAG_EXCLUSIVE, &m); /* blocking: waits on c's */
	ck_assert_uint_eq(m.h.status, STATUS_PENDING);
	aid = m.h.async_id;
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a); /* a lock waiting holds nothing: no break yet */
	smbl_expect_nothing(&d);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, NULL), VOL_LEASE_R);
	smbl_lock_msg(&c, rc.fid, 0, SMB2_LOCKFLAG_UNLOCK, &m);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv); /* b's lock is granted, the breaks queued */
	smbt_loop_turn(smbl_srv);
	ck_assert_int_eq(smbl_recv(&b, &m), 1);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(m.h.async_id, aid);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_NONE);
	smbl_expect_lease_break(&d, 0x44, 0, 0, SMBL_R, 0); /* v1, R only: no ack */
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, NULL), 0);
	ck_assert_uint_eq(smbl_grant_state(&d, rd.fid, NULL), 0);
	smbl_expect_nothing(&a); /* once */
	smbl_expect_nothing(&d);
	smbl_expect_nothing(&b);
}
END_TEST

/* An NFS WRITE on its own thread (as the NFS server's workers make it). */
struct nfs_writer {
	pthread_t thr;
	int done;          /* atomic */
	int rc;
	struct timespec took;
};

static void *nfs_write_thread(void *arg)
{
	struct nfs_writer *w = arg;
	struct vol_obj root, f;
	struct timespec t0, t1;
	int committed;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	w->rc = vol_root(smbl_exp0, &root);
	if (w->rc == 0 && (w->rc = vol_lookup(&root, &nfs_cred, "f1", 2, &f)) == 0) {
		w->rc = vol_write(&f, &nfs_cred, 0, "NFS", 3, 2, &committed);
		vol_obj_cleanup(&f);
	}
	if (root.exp)
		vol_obj_cleanup(&root);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	w->took.tv_sec = t1.tv_sec - t0.tv_sec - (t1.tv_nsec < t0.tv_nsec);
	w->took.tv_nsec = (t1.tv_nsec - t0.tv_nsec + 1000000000L) % 1000000000L;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The file's first three bytes, read through the store. */
static void file_head(char out[4])
{
	struct vol_obj root, f;
	size_t got = 0;
	bool eof;

	ck_assert_int_eq(vol_root(smbl_exp0, &root), 0);
	ck_assert_int_eq(vol_lookup(&root, &nfs_cred, "f1", 2, &f), 0);
	ck_assert_int_eq(vol_read(&f, &nfs_cred, 0, out, 3, &got, &eof), 0);
	out[got] = '\0';
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
}

START_TEST(test_nfs_write_waits_for_ack)
{
	struct smbt_conn a;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RWH } };
	struct nfs_writer w = { 0 };
	char head[4];

	smbl_conn(&a, 1);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RWH);
	ck_assert_uint_eq(smbl_write(&a, ra.fid, "smb"), STATUS_SUCCESS); /* its own cache: no break */
	ck_assert_int_eq(pthread_create(&w.thr, NULL, nfs_write_thread, &w), 0);
	smbt_wait_msg(&a);
	/* R and W are lost (and with R all): the client must flush, so the write waits */
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RWH, 0);
	usleep(200 * 1000);
	ck_assert_int_eq(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	file_head(head);
	ck_assert_str_eq(head, "smb"); /* the NFS bytes are not there before the ack */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_R, NULL), STATUS_REQUEST_NOT_ACCEPTED);
	ck_assert_int_eq(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, 0, NULL), STATUS_SUCCESS);
	ck_assert_int_eq(pthread_join(w.thr, NULL), 0);
	ck_assert_int_eq(w.rc, 0);
	file_head(head);
	ck_assert_str_eq(head, "NFS");
}
END_TEST

START_TEST(test_nfs_write_timeout)
{
	struct smbt_conn a;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct nfs_writer w = { 0 };
	bool breaking = true;

	ck_assert_int_eq(vol_lease_set_timeout(smbl_ts.store, 300), 0);
	smbl_conn(&a, 1);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	ck_assert_int_eq(pthread_create(&w.thr, NULL, nfs_write_thread, &w), 0);
	smbt_wait_msg(&a);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_NONE);
	ck_assert_int_eq(pthread_join(w.thr, NULL), 0); /* nobody acks: the timeout lets it go */
	ck_assert_int_eq(w.rc, 0);
	ck_assert(w.took.tv_sec > 0 || w.took.tv_nsec >= 250 * 1000000L);
	ck_assert_uint_eq(smbl_grant_state(&a, ra.fid, &breaking), 0); /* revoked: nothing cached */
	ck_assert(!breaking);
}
END_TEST

START_TEST(test_second_break_after_ack)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_RWH } };
	struct smbl_create rb = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x22, .state = SMBL_RH } };
	struct nfs_writer w = { 0 };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.epoch, 1);
	smbl_create(&b, &rb); /* breaks W */
	ck_assert_uint_eq(rb.status, STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 2, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RWH, SMBL_RH);
	/* an NFS write while that break waits: everything is to go */
	ck_assert_int_eq(pthread_create(&w.thr, NULL, nfs_write_thread, &w), 0);
	usleep(100 * 1000);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a); /* one break in flight at a time */
	/* the ack of what the first break announced is taken, and the next break
	 * follows in steps, as Windows and smbd (smbtorture smb2.lease.v2_breaking3):
	 * H first, to R, acknowledged, with the epoch the break had */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, NULL), STATUS_SUCCESS);
	smbt_wait_msg(&a);
	smbl_expect_lease_break(&a, 0x11, 2, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, SMBL_R);
	usleep(100 * 1000);
	ck_assert_int_eq(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0); /* a still caches reads: the write waits */
	smbl_expect_nothing(&b);
	/* more than R: refused */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_RH, NULL), STATUS_REQUEST_NOT_ACCEPTED);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_R, NULL), STATUS_SUCCESS);
	/* then R, told without an acknowledgment, same epoch */
	smbt_wait_msg(&a);
	smbl_expect_lease_break(&a, 0x11, 2, 0, SMBL_R, 0);
	ck_assert_int_eq(pthread_join(w.thr, NULL), 0);
	ck_assert_int_eq(w.rc, 0);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
}
END_TEST

/* Send CREATE name (FILE_OPEN, attributes only) + a related QUERY_INFO of
 * FileStreamInformation as one compound on tc; its MessageIds in mid[2]. */
static void create_query_chain(struct smbt_conn *tc, const char *name, uint64_t *mid)
{
	uint8_t cb[512], qb[41] = { 0 };
	struct smb_wire_hdr h[2] = { { .command = SMB2_CREATE }, { .command = SMB2_QUERY_INFO } };
	const uint8_t *b[2] = { cb, qb };
	size_t n[2];

	n[0] = smbl_create_body(cb, name, 0x00100088u /* SYNCHRONIZE, READ_ATTRIBUTES, READ_EA */, 0, 0, 1);
	smbt_put16(qb, 41);
	qb[2] = SMB2_0_INFO_FILE;
	qb[3] = 22; /* FileStreamInformation */
	smbt_put32(qb + 4, 4096);
	smbt_put64(qb + 24, UINT64_MAX);
	smbt_put64(qb + 32, UINT64_MAX);
	n[1] = sizeof(qb);
	for (int i = 0; i < 2; i++) {
		h[i].tree_id = tc->t->id;
		h[i].message_id = mid[i] = tc->mid++;
	}
	h[1].flags = SMB2_FLAGS_RELATED_OPERATIONS;
	smbt_send_chain(tc, h, b, n, 2);
}

/* The compound answer on tc: its statuses into st[2], each sync and
 * signed; the CREATE's FileId into *fid when it succeeded. */
static void chain_answer(struct smbt_conn *tc, const uint64_t *mid, uint32_t *st, uint64_t *fid)
{
	static uint8_t buf[8192];
	struct smb_wire_hdr h;
	struct smb_wire_chain ch;
	struct smb_wire_msg m;
	size_t len, got = 0;
	uint16_t alg;
	struct smb_crypto_ctx *cx; /* the server's: not for this thread */
	const uint8_t *key = smb_sess_signing_key(tc->s, tc->c, &alg, &cx);

	ck_assert_int_eq(smbt_recv(tc, buf, sizeof(buf), &len, &h, NULL), 1);
	smb_wire_chain_init(&ch, buf, len);
	while (smb_wire_chain_next(&ch, &m) == 1) {
		ck_assert_uint_lt(got, 2);
		ck_assert_uint_eq(m.hdr.message_id, mid[got]);
		ck_assert(!(m.hdr.flags & SMB2_FLAGS_ASYNC_COMMAND));
		ck_assert(m.hdr.flags & SMB2_FLAGS_SIGNED);
		ck_assert_int_eq(smb_crypto_verify(alg, key, m.p, m.len), AQ_OK);
		if (m.hdr.command == SMB2_CREATE && m.hdr.status == STATUS_SUCCESS)
			*fid = smb_wire_get_u64(m.p + SMB2_HDR_LEN + 64);
		st[got++] = m.hdr.status;
	}
	ck_assert_uint_eq(got, 2);
}

START_TEST(test_compound_create_waits_for_break)
{
	struct smbt_conn a;
	struct smbl_create ra = { .name = "cb", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	uint64_t mid[2], fid = 0;
	uint32_t st[2];
	uint8_t level;

	smbl_conn(&a, 1);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.status, STATUS_SUCCESS);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	create_query_chain(&a, "cb", mid);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_II);
	smbl_expect_nothing(&a); /* the compound waits, without an interim */
	ck_assert_uint_eq(smbl_ack_oplock(&a, ra.fid, SMB2_OPLOCK_LEVEL_II, &level), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	chain_answer(&a, mid, st, &fid);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	ck_assert_uint_eq(st[1], STATUS_SUCCESS);
	smbl_expect_nothing(&a);
	ck_assert_uint_eq(smbl_srv->ncreates, 0);
	/* once more, cancelled while it waits: the related request answers the CREATE's status */
	ck_assert_uint_eq(smbl_close(&a, ra.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	smbl_expect_nothing(&a);
	ra.fid = 0;
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	create_query_chain(&a, "cb", mid);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_II);
	smbt_cancel(&a, false, mid[0]);
	chain_answer(&a, mid, st, &fid);
	ck_assert_uint_eq(st[0], STATUS_CANCELLED);
	ck_assert_uint_eq(st[1], STATUS_CANCELLED);
	ck_assert_uint_eq(smbl_srv->ncreates, 0);
	ck_assert_uint_eq(smbl_ack_oplock(&a, ra.fid, SMB2_OPLOCK_LEVEL_II, &level), STATUS_SUCCESS);
}
END_TEST

static Suite *smb_break_suite(void)
{
	Suite *s = suite_create("smb_break");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, smbl_fix_up, smbl_fix_down);
	tcase_add_test(tc, test_batch_break_waits_for_ack);
	tcase_add_test(tc, test_lease_break_ack);
	tcase_add_test(tc, test_break_timeout_revokes);
	tcase_add_test(tc, test_lease_timeout_takes_all);
	tcase_add_test(tc, test_holder_close_ends_wait);
	tcase_add_test(tc, test_cancel_waiting_create);
	tcase_add_test(tc, test_sharing_violation_breaks_handle);
	tcase_add_test(tc, test_second_break_after_ack);
	tcase_add_test(tc, test_no_break_on_refused_or_stat_open);
	tcase_add_test(tc, test_level2_writer_breaks_itself);
	tcase_add_test(tc, test_waited_lock_breaks_read_caches);
	tcase_add_test(tc, test_lease_state_outlives_its_opens);
	tcase_add_test(tc, test_sharing_violation_takes_handle_only);
	tcase_add_test(tc, test_nfs_write_waits_for_ack);
	tcase_add_test(tc, test_nfs_write_timeout);
	tcase_add_test(tc, test_compound_create_waits_for_break);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_break_suite());
}
