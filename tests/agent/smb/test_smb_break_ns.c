/* test_smb_break_ns: breaks caused by renames, deletes and byte-range
 * locks (agent/smb/smb_lease.c over the store's cached-open table,
 * agent/vol/vol_lease.c; the store's vol_rename / vol_remove), through the
 * server's own dispatcher (smb_harness.h, smb_leasemsg.h):
 * - an SMB rename (SET_INFO FileRenameInformation) of a file another client
 *   caches the handle of (a lease with H) is answered STATUS_PENDING, the
 *   holder gets a lease break (RH -> R, ACK_REQUIRED), the name changes only
 *   once the holder acknowledged, and the rename then completes (async),
 *   before the holder's CLOSE or acknowledgment is answered;
 * - an NFS REMOVE (vol_remove, on another thread) of such a file waits in
 *   the store until the holder acknowledged: the file is still there until
 *   then; an NFS RENAME (vol_rename) the same way;
 * - a byte-range lock breaks every Level II oplock on the file to none
 *   (the locker's own too), with no acknowledgment; a BATCH holder's lock
 *   on a file it alone has open breaks nothing;
 * - a file whose delete is pending (SET_INFO FileDispositionInformation) is
 *   STATUS_DELETE_PENDING to another CREATE, which breaks nothing;
 * - a rename into a folder another open holds with DELETE access is
 *   STATUS_SHARING_VIOLATION and changes nothing (Windows, Samba);
 * - a rename that is not the last message of its compound tells the
 *   holder and does not wait.
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

#define FILE_RENAME_INFORMATION 10u
#define FILE_DISPOSITION_INFORMATION 13u
#define ACCESS_RW_DELETE (0x3u | 0x10000u)
#define ACCESS_DIR_ALL 0x001F01FFu /* SEC_RIGHTS_DIR_ALL: DELETE among them */

static const struct vol_cred nfs_cred = { .uid = 0, .gid = 0 };

/* Whether name exists in the volume's root. */
static bool exists(const char *name)
{
	struct vol_obj root, f;
	int rc;

	ck_assert_int_eq(vol_root(smbl_exp0, &root), 0);
	rc = vol_lookup(&root, &nfs_cred, name, strlen(name), &f);
	if (rc == 0)
		vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
	return rc == 0;
}

static uint32_t rename_to(struct smbt_conn *tc, uint64_t fid, const char *to, uint64_t *mid, uint64_t *aid)
{
	uint8_t d[128] = { 0 };
	size_t n = strlen(to);

	smbt_put32(d + 16, (uint32_t)(2 * n));
	for (size_t i = 0; i < n; i++)
		d[20 + 2 * i] = (uint8_t)(to[i] == '/' ? '\\' : to[i]);
	return smbl_set_info_async(tc, fid, FILE_RENAME_INFORMATION, d, 20 + 2 * n, mid, aid);
}

/* The final (async) answer of a waiting SET_INFO. */
static uint32_t setinfo_final(struct smbt_conn *tc, uint64_t mid, uint64_t aid)
{
	struct smbl_msg m;

	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_SET_INFO);
	ck_assert(m.h.flags & SMB2_FLAGS_ASYNC_COMMAND);
	ck_assert_uint_eq(m.h.message_id, mid);
	ck_assert_uint_eq(m.h.async_id, aid);
	return m.h.status;
}

START_TEST(test_smb_rename_waits_for_handle_break)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RH } };
	struct smbl_create rb = { .name = "f1", .access = ACCESS_RW_DELETE };
	uint64_t mid = 0, aid = 0;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RH);
	smbl_create(&b, &rb); /* RH has no W: nothing to break */
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	smbl_expect_nothing(&a);
	ck_assert_uint_eq(rename_to(&b, rb.fid, "f2", &mid, &aid), STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, SMBL_R);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&b); /* the rename waits */
	ck_assert(exists("f1"));
	ck_assert(!exists("f2"));
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_R, NULL), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	ck_assert_uint_eq(setinfo_final(&b, mid, aid), STATUS_SUCCESS);
	ck_assert(!exists("f1"));
	ck_assert(exists("f2"));
	/* the renamer's own lease is not broken by its rename */
	ck_assert_uint_eq(smbl_close(&b, rb.fid), STATUS_SUCCESS);
	rb = (struct smbl_create){ .name = "f2", .access = ACCESS_RW_DELETE,
				   .lease = { .on = true, .key = 0x22, .state = SMBL_RH } };
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, ra.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&b, rb.fid, "f3", &mid, &aid), STATUS_SUCCESS);
	ck_assert(exists("f3"));
	smbl_expect_nothing(&b);
}
END_TEST

/* The rename a CLOSE (or an acknowledgment) lets go on is done before the
 * CLOSE is answered, not at the loop's next turn: a client that opens the
 * new name as soon as its CLOSE is answered finds it (smbtorture
 * smb2.lease.rename_wait failed when the loop read that open first). No
 * smbt_loop_turn between the CLOSE and the checks. */
START_TEST(test_rename_done_when_close_answered)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RH } };
	struct smbl_create rb = { .name = "f1", .access = ACCESS_RW_DELETE };
	uint64_t mid = 0, aid = 0;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rename_to(&b, rb.fid, "f2", &mid, &aid), STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, SMBL_R);
	ck_assert(exists("f1"));
	ck_assert_uint_eq(smbl_close(&a, ra.fid), STATUS_SUCCESS); /* instead of acknowledging */
	ck_assert(!exists("f1"));
	ck_assert(exists("f2"));
	ck_assert_uint_eq(setinfo_final(&b, mid, aid), STATUS_SUCCESS);
	/* the same when the holder acknowledges */
	ra = (struct smbl_create){ .name = "f2", .lease = { .on = true, .key = 0x33, .state = SMBL_RH } };
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RH);
	ck_assert_uint_eq(rename_to(&b, rb.fid, "f3", &mid, &aid), STATUS_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x33, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, SMBL_R);
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x33, SMBL_R, NULL), STATUS_SUCCESS);
	ck_assert(exists("f3"));
	ck_assert_uint_eq(setinfo_final(&b, mid, aid), STATUS_SUCCESS);
}
END_TEST

/* A rename inside a compound that is not its last message (Windows sends
 * CREATE, SET_INFO, CLOSE) cannot go async: the holder is told (the break
 * is sent), the rename is not refused. */
START_TEST(test_compound_rename_does_not_wait)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RH } };
	struct smbl_create rb = { .name = "f1", .access = ACCESS_RW_DELETE };
	struct smb_req r = { 0 };
	struct smb_open *o;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
	for (o = b.s->opens; o && o->id != rb.fid; o = o->next)
		;
	ck_assert_ptr_nonnull(o);
	r.c = b.c;
	r.last = false;
	ck_assert_uint_eq(smb_lease_rename(&r, o), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_srv->ncreates, 0);
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, SMBL_R);
}
END_TEST

/* An NFS REMOVE or RENAME on its own thread (as the NFS server's workers make it). */
struct nfs_op {
	pthread_t thr;
	bool rename;
	int done; /* atomic */
	int rc;
};

static void *nfs_op_thread(void *arg)
{
	struct nfs_op *w = arg;
	struct vol_obj root;

	w->rc = vol_root(smbl_exp0, &root);
	if (w->rc == 0) {
		w->rc = w->rename ? vol_rename(&root, "f1", 2, &root, "g1", 2, &nfs_cred)
				  : vol_remove(&root, &nfs_cred, "f1", 2);
		vol_obj_cleanup(&root);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void nfs_op_waits(bool rename)
{
	struct smbt_conn a;
	struct smbl_create ra = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RH } };
	struct nfs_op w = { .rename = rename };

	smbl_conn(&a, 1);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.state, SMBL_RH);
	ck_assert_int_eq(pthread_create(&w.thr, NULL, nfs_op_thread, &w), 0);
	smbt_wait_msg(&a);
	smbl_expect_lease_break(&a, 0x11, 0, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, SMBL_RH, SMBL_R);
	usleep(200 * 1000);
	ck_assert_int_eq(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	ck_assert(exists("f1")); /* the name stays until the holder gave the handle back */
	ck_assert_uint_eq(smbl_ack_lease(&a, 0x11, SMBL_R, NULL), STATUS_SUCCESS);
	ck_assert_int_eq(pthread_join(w.thr, NULL), 0);
	ck_assert_int_eq(w.rc, 0);
	ck_assert(!exists("f1"));
	ck_assert(exists("g1") == rename);
}

START_TEST(test_nfs_remove_waits_for_ack)
{
	nfs_op_waits(false);
}
END_TEST

START_TEST(test_nfs_rename_waits_for_ack)
{
	nfs_op_waits(true);
}
END_TEST

START_TEST(test_lock_breaks_level2)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_II };
	struct smbl_create rb = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_II };
	struct smbl_create rc = { .name = "f2", .oplock = SMB2_OPLOCK_LEVEL_BATCH };

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(rb.oplock_got, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(smbl_lock(&b, rb.fid, 0), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_oplock_break(&a, ra.fid, SMB2_OPLOCK_LEVEL_NONE);
	smbl_expect_oplock_break(&b, rb.fid, SMB2_OPLOCK_LEVEL_NONE); /* its own, as Windows */
	/* none left: a second lock breaks nothing */
	ck_assert_uint_eq(smbl_lock(&b, rb.fid, 2), STATUS_LOCK_NOT_GRANTED);
	ck_assert_uint_eq(smbl_lock(&a, ra.fid, 8), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
	smbl_expect_nothing(&b);
	/* a BATCH holder alone on its file: its lock breaks nothing */
	smbl_create(&a, &rc);
	ck_assert_uint_eq(rc.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	ck_assert_uint_eq(smbl_lock(&a, rc.fid, 0), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a);
}
END_TEST

START_TEST(test_delete_pending)
{
	struct smbt_conn a, b;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH, .access = ACCESS_RW_DELETE };
	struct smbl_create rb = { .name = "f1", .disposition = 1 /* OPEN */ };
	uint8_t del = 1;
	uint64_t mid = 0, aid = 0;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	ck_assert_uint_eq(smbl_set_info_async(&a, ra.fid, FILE_DISPOSITION_INFORMATION, &del, 1, &mid, &aid), STATUS_SUCCESS);
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_DELETE_PENDING);
	smbt_loop_turn(smbl_srv);
	smbl_expect_nothing(&a); /* no break */
	ck_assert(exists("f1"));
	ck_assert_uint_eq(smbl_close(&a, ra.fid), STATUS_SUCCESS);
	ck_assert(!exists("f1"));
	/* a delete-on-close asked at CREATE is pending only from the close (MS-FSA) */
	ra = (struct smbl_create){ .name = "f2", .access = ACCESS_RW_DELETE };
	smbl_create(&a, &ra);
	ck_assert_uint_eq(ra.status, STATUS_SUCCESS);
	rb = (struct smbl_create){ .name = "f2", .disposition = 1 };
	smbl_create(&b, &rb);
	ck_assert_uint_eq(rb.status, STATUS_SUCCESS);
}
END_TEST

START_TEST(test_rename_into_folder_open_for_delete)
{
	struct smbt_conn a, b;
	struct smbl_create rd = { .name = "d", .dir = true, .access = ACCESS_DIR_ALL, .disposition = 2 /* CREATE */ };
	struct smbl_create rf = { .name = "d/f1", .access = ACCESS_RW_DELETE };
	uint64_t mid = 0, aid = 0;

	smbl_conn(&a, 1);
	smbl_conn(&b, 2);
	smbl_create(&a, &rd);
	ck_assert_uint_eq(rd.status, STATUS_SUCCESS);
	smbl_create(&b, &rf);
	ck_assert_uint_eq(rf.status, STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&b, rf.fid, "d/f2", &mid, &aid), STATUS_SHARING_VIOLATION);
	/* into the root (no open of it with DELETE): allowed */
	ck_assert_uint_eq(rename_to(&b, rf.fid, "f3", &mid, &aid), STATUS_SUCCESS);
	ck_assert(exists("f3"));
	/* once the folder's open is gone, renaming into it is allowed */
	ck_assert_uint_eq(smbl_close(&a, rd.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&b, rf.fid, "d/f2", &mid, &aid), STATUS_SUCCESS);
	ck_assert(!exists("f3"));
}
END_TEST

static Suite *smb_break_ns_suite(void)
{
	Suite *s = suite_create("smb_break_ns");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, smbl_fix_up, smbl_fix_down);
	tcase_add_test(tc, test_smb_rename_waits_for_handle_break);
	tcase_add_test(tc, test_rename_done_when_close_answered);
	tcase_add_test(tc, test_nfs_remove_waits_for_ack);
	tcase_add_test(tc, test_nfs_rename_waits_for_ack);
	tcase_add_test(tc, test_lock_breaks_level2);
	tcase_add_test(tc, test_delete_pending);
	tcase_add_test(tc, test_rename_into_folder_open_for_delete);
	tcase_add_test(tc, test_compound_rename_does_not_wait);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_break_ns_suite());
}
