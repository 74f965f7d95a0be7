/* test_smb_ra_open: read-ahead at SMB CREATE (agent/smb/smb_open.c calls
 * vol_read_ahead_open, agent/vol/vol_ra.h "At open"; issue 23), through the
 * server's own dispatcher (smb_harness.h) over a store whose export carries
 * readAhead CROSS_FILE_SEQUENTIAL and whose tier is the shared stub
 * (smb_stub.h) with both frames cold.
 * - a CREATE for attributes only fetches nothing; one asking FILE_READ_DATA
 *   of a frame of a sequence sends its head and the next frame's to the
 *   tier before any READ, nothing wasted;
 * - while that prefetch is held in the tier (the stub stalls the opened
 *   file), the CREATE is answered at once, and another connection's CREATE
 *   and READ of the next frame too (nothing of it waits on the loop).
 */
#include <check.h>
#include <string.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/agent/smb/smb_stub.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FILE_LEN (256u << 10)
#define READ_ATTRIBUTES 0x80u
#define READ_DATA 0x1u

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
	vol_store_set_tier(ts.store, &smbt_stub_ops, NULL);
	smbt_stub_reset();
	ts.cfg[0].read_ahead = (struct api_intent_read_ahead){ .mode = API_INTENT_RA_CROSS_FILE, .depth_files = 4 };
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	ck_assert_int_eq(vol_store_qos_start(ts.store), 0); /* smb_srv_start's: prefetch is charged to QoS */
	smbt_stub.cold_ino[0] = smbt_file_make(exp0, "f0001.bin", FILE_LEN);
	smbt_stub.cold_ino[1] = smbt_file_make(exp0, "f0002.bin", FILE_LEN);
}

static void teardown(void)
{
	smbt_stub_release(); /* whatever still waits in the stub */
	vol_store_qos_stop(ts.store);
	smbt_export_down(&ts, srv, exp0);
}

START_TEST(test_create_fetches_heads)
{
	struct smbt_conn a;
	uint64_t fid;
	uint32_t attrs;

	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "f0001.bin", false, READ_ATTRIBUTES, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);    /* a stat open: nothing */
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.cold_reads), 0);
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "f0001.bin", false, READ_DATA | READ_ATTRIBUTES, 0, 0, &fid, &attrs),
			  STATUS_SUCCESS);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FILE_LEN), 2 * FILE_LEN); /* f0001 and f0002, no READ yet */
	ck_assert_uint_ge(smbt_stub_get(&smbt_stub.cold_reads), 2); /* through the tier: they are cold */
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	ck_assert_uint_eq(aqt_store_stats(&ts, 0).ra_wasted, 0);
	smbt_conns_free(srv);
}
END_TEST

START_TEST(test_create_not_held)
{
	struct smbt_conn a, b;
	uint64_t fa, fb;
	uint32_t attrs;
	double t0;

	smbt_stub.stall_ino = smbt_stub.cold_ino[0];
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	t0 = smbt_now_s();
	ck_assert_uint_eq(smbl_open(&a, "f0001.bin", false, READ_DATA, 0, 0, &fa, &attrs), STATUS_SUCCESS);
	smbt_stub_wait_inside(1);                                /* its head's prefetch is held at the tier */
	ck_assert_uint_eq(smbl_open(&b, "f0002.bin", false, READ_DATA, 0, 0, &fb, &attrs), STATUS_SUCCESS);
	ck_assert(smbt_now_s() - t0 < 5.0);                      /* not SMBT_STUB_HOLD_S: nothing waited */
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.inside), 1);  /* still held */
	smbt_stub_release();
	ck_assert_uint_eq(smbl_close(&a, fa), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&b, fb), STATUS_SUCCESS);
	smbt_conns_free(srv);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("smb_ra_open");
	TCase *tc = tcase_create("open");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_create_fetches_heads);
	tcase_add_test(tc, test_create_not_held);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
