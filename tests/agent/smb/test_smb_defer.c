/* test_smb_defer: what SMB makes stable and when (agent/vol/vol.h
 * VOL_CRED_DEFER_SYNC, smb_tree_cred), through the server's own dispatcher
 * (smb_harness.h, requests from smb_leasemsg.h), counted by the store's
 * syncs (vol_stats: logsyncs, filesyncs, dirsyncs, deferred).
 * - on a share that is not CONTINUOUSLY_AVAILABLE a CREATE of a new file,
 *   its CLOSE and its removal (delete-on-close) make no sync at all; the
 *   changes are counted as deferred;
 * - a FLUSH of a file makes them stable: the file's own fsync and one log
 *   sync, which covers every deferred change before it (a second FLUSH of
 *   the unchanged file makes neither);
 * - an open made with FILE_WRITE_THROUGH syncs its CREATE as NFS does;
 * - on a CONTINUOUSLY_AVAILABLE share every CREATE and removal syncs;
 * - on an NTFS share the new file's security descriptor is deferred with
 *   its create: still no sync (and a SET_INFO of the descriptor none).
 * The export is a folder of a journalled ext4 loop mount (aqt_loop_up, as
 * test_vol_sync's), where the store's log sync is used. Where none can be
 * made (not root, no mkfs.ext4) and the suite's own folder has no log, a
 * FLUSH makes the deferred changes stable by syncfs (counted as a file
 * sync): the suite says so and checks that.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FILE_CREATE 2u
#define FILE_WRITE_THROUGH 0x2u
#define FILE_DELETE_ON_CLOSE 0x1000u
#define DELETE_ACCESS 0x00010000u
#define RW_ACCESS 0x00000003u

static struct aqt_store ts;
static struct smb_srv *srv;
static bool has_log;
static struct aqt_loop lp; /* the ext4 loop mount; lp.top[0] == 0: none */

static void loop_up(void)
{
	aqt_loop_up(&lp, "smb-defer", "64M", "mkfs.ext4 -q -F");
}

static void loop_down(void)
{
	aqt_loop_down(&lp);
}

static void setup(void)
{
	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 100, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 1 });
	aqt_loop_export(&lp, &ts, 0);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	smbt_srv_new(ts.store, &srv);
	has_log = aqt_store_one_log(ts.cfg[0].root);
	if (!has_log)
		fprintf(stderr, "test_smb_defer: %s has no log sync: FLUSH syncs the file system\n", ts.cfg[0].root);
}

static void teardown(void)
{
	smbl_store_down(&ts, srv);
}

static bool exists(const char *name)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	return stat(p, &st) == 0;
}

/* Every sync the store made (log, file, directory). */
static uint64_t syncs(const struct vol_stats *s)
{
	return s->logsyncs + s->filesyncs + s->dirsyncs;
}

/* CREATE (FILE_CREATE) name with options added: its FileId. */
static uint64_t create(struct smbt_conn *tc, const char *name, uint32_t options, uint32_t access)
{
	struct smbl_create q = { .name = name, .disposition = FILE_CREATE, .options = options, .access = access };

	smbl_create(tc, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	return q.fid;
}

static uint32_t flush(struct smbt_conn *tc, uint64_t fid)
{
	uint8_t body[24] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_FLUSH };
	struct smbl_msg m;

	smbt_put16(body, 24);
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	smbl_send(tc, &h, body, sizeof(body));
	smbt_wait_msg(tc); /* a worker makes the FLUSH (smb_read.c) */
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_FLUSH);
	return m.h.status;
}

/* CREATE, CLOSE, then a delete-on-close open and its CLOSE of name: how
 * many syncs and deferred changes the store counted meanwhile. */
static void create_remove(struct smbt_conn *tc, const char *name, uint32_t options, uint64_t *nsyncs,
			  uint64_t *ndeferred)
{
	struct vol_stats s0 = aqt_store_stats(&ts, 0), s1;
	struct smbl_create q = { .name = name, .disposition = 1 /* FILE_OPEN */,
				 .options = FILE_DELETE_ON_CLOSE | options, .access = DELETE_ACCESS | RW_ACCESS };

	ck_assert_uint_eq(smbl_close(tc, create(tc, name, options, 0)), STATUS_SUCCESS);
	smbl_create(tc, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(tc, q.fid), STATUS_SUCCESS);
	ck_assert(!exists(name));
	s1 = aqt_store_stats(&ts, 0);
	*nsyncs = syncs(&s1) - syncs(&s0);
	*ndeferred = s1.deferred - s0.deferred;
}

START_TEST(test_plain_share_defers)
{
	struct smbt_conn a;
	uint64_t n, d;

	smbt_conn_user(&a, srv, &ts, 1, "alice", "docs");
	create_remove(&a, "f", 0, &n, &d);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(d, 2); /* the create, the removal */
}
END_TEST

START_TEST(test_flush_makes_stable)
{
	struct smbt_conn a;
	struct vol_stats s0, s1, s2;
	uint64_t fid;

	smbt_conn_user(&a, srv, &ts, 1, "alice", "docs");
	s0 = aqt_store_stats(&ts, 0);
	fid = create(&a, "g", 0, 0);
	ck_assert_uint_eq(smbl_write(&a, fid, "data"), STATUS_SUCCESS);
	s1 = aqt_store_stats(&ts, 0);
	ck_assert_uint_eq(syncs(&s1), syncs(&s0));
	ck_assert_uint_eq(flush(&a, fid), STATUS_SUCCESS);
	s2 = aqt_store_stats(&ts, 0);
	if (has_log) {
		ck_assert_uint_eq(s2.filesyncs - s1.filesyncs, 1); /* the data */
		/* the name and attributes: one log sync, finished */
		ck_assert_uint_eq(s2.logsyncs - s1.logsyncs, 1);
		ck_assert_uint_eq(s2.logsyncs_done - s1.logsyncs_done, 1);
	} else {
		ck_assert_uint_eq(s2.filesyncs - s1.filesyncs, 2); /* the data, then syncfs */
	}
	/* nothing new: a second FLUSH syncs nothing */
	ck_assert_uint_eq(flush(&a, fid), STATUS_SUCCESS);
	s1 = aqt_store_stats(&ts, 0);
	ck_assert_uint_eq(syncs(&s1), syncs(&s2));
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	ck_assert(exists("g"));
}
END_TEST

START_TEST(test_write_through_syncs)
{
	struct smbt_conn a;
	uint64_t n, d;

	smbt_conn_user(&a, srv, &ts, 1, "alice", "docs");
	create_remove(&a, "w", FILE_WRITE_THROUGH, &n, &d);
	ck_assert_uint_ge(n, (has_log ? 2 : 1)); /* the create's, the removal's */
	ck_assert_uint_eq(d, 0);
}
END_TEST

START_TEST(test_ca_share_syncs)
{
	struct smbt_conn a;
	uint64_t n, d;

	smbt_conn_user(&a, srv, &ts, 1, "alice", "docs");
	a.t->share.smb_settings |= API_INTENT_SMB_CONTINUOUSLY_AVAILABLE;
	create_remove(&a, "c", 0, &n, &d);
	ck_assert_uint_ge(n, (has_log ? 2 : 1));
	ck_assert_uint_eq(d, 0);
}
END_TEST

START_TEST(test_ntfs_share_defers)
{
	struct smbt_conn a;
	uint64_t n, d;
	uint8_t sd[256];
	size_t len = 0;
	struct vol_obj root, f;
	struct vol_export *e;

	ck_assert_int_eq(chmod(ts.cfg[0].root, 0777), 0); /* as an NTFS root: its descriptor decides */
	smbt_conn_user(&a, srv, &ts, 1, "alice", "docs");
	a.t->share.security = API_INTENT_SEC_NTFS;
	create_remove(&a, "n", 0, &n, &d);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_ge(d, 3); /* the create, its descriptor, the removal */
	/* the descriptor was stored, only its sync deferred */
	ck_assert_uint_eq(smbl_close(&a, create(&a, "m", 0, 0)), STATUS_SUCCESS);
	ck_assert_ptr_nonnull(e = vol_export_at(ts.store, 0));
	ck_assert_int_eq(vol_root(e, &root), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_lookup(&root, &(struct vol_cred){ 0 }, "m", 1, &f), 0);
	ck_assert_int_eq(vol_sd_get(&f, sd, sizeof(sd), &len), 0);
	ck_assert_uint_gt(len, 20);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_defer");
	TCase *tc = tcase_create("sync");

	tcase_set_timeout(tc, 30);
	tcase_add_unchecked_fixture(tc, loop_up, loop_down);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plain_share_defers);
	tcase_add_test(tc, test_flush_makes_stable);
	tcase_add_test(tc, test_write_through_syncs);
	tcase_add_test(tc, test_ca_share_syncs);
	tcase_add_test(tc, test_ntfs_share_defers);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
