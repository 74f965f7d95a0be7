/* test_vol_ra_open: read-ahead at open (agent/vol/vol_ra_cache.c
 * vol_read_ahead_open, vol_ra_fetch.c; issue 23). The front ends call the
 * hook at SMB CREATE, NFSv4.1 OPEN and NFSv3 LOOKUP; here the store is
 * driven directly: a lookup by name, then the hook.
 * - a lookup alone prefetches nothing; the open of a frame of a sequence
 *   fetches its own head and the next file's (the ramp's one file), and the
 *   READs of them are hits, every prefetched byte charged to QoS;
 * - a file past VOL_RA_OPEN_HEAD: only its head, and the next file's head;
 *   a READ from the opened file's start then takes the next file on to its
 *   end (the head is not fetched twice);
 * - a name with no successor: nothing, unless its folder is being played;
 * - a volume without readAhead, and an empty file: nothing.
 * Needs root (open_by_handle_at). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_ra.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FRAME (256u << 10)
#define BIG (VOL_RA_OPEN_HEAD + (2u << 20))

static struct aqt_store ts;
static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };

/* export 0 CROSS_FILE_SEQUENTIAL depth 4 (the ramp on, the default),
 * export 1 without readAhead; in each f0001..f0003.bin of FRAME bytes,
 * b0001..b0002.bin of BIG bytes, solo.bin of FRAME bytes, empty.bin */
static void setup(void)
{
	aqt_store_init(&ts, 2,
		       &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 400, .capacity = 64 << 20,
						 .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 7 });
	for (int v = 0; v < 2; v++) {
		aqt_store_put(&ts, v, "f0001.bin", FRAME);
		aqt_store_put(&ts, v, "f0002.bin", FRAME);
		aqt_store_put(&ts, v, "f0003.bin", FRAME);
		aqt_store_put(&ts, v, "b0001.bin", BIG);
		aqt_store_put(&ts, v, "b0002.bin", BIG);
		aqt_store_put(&ts, v, "solo.bin", FRAME);
		aqt_store_put(&ts, v, "empty0001.bin", 0);
		aqt_store_put(&ts, v, "empty0002.bin", FRAME);
	}
	ts.cfg[0].read_ahead = (struct api_intent_read_ahead){ .mode = API_INTENT_RA_CROSS_FILE, .depth_files = 4 };
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	ck_assert_int_eq(vol_store_qos_start(ts.store), 0);
}

static void teardown(void)
{
	vol_store_qos_stop(ts.store);
	aqt_store_cleanup(&ts);
}

/* Look name up in export v's root (as every front end does by name) and,
 * when hook, tell the store it is opened. */
static void open_file(int v, const char *name, bool hook)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[v].path, strlen(ts.cfg[v].path));
	struct vol_obj dir, f;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &dir), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_lookup(&dir, &root, name, strlen(name), &f), 0);
	if (hook)
		vol_read_ahead_open(&f);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&dir);
}

START_TEST(test_open_fetches_heads)
{
	struct vol_stats st;

	open_file(0, "f0001.bin", false);                        /* a lookup alone: nothing */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);
	open_file(0, "f0001.bin", true);                         /* f0001 itself and f0002 (run 0: one) */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 2 * FRAME);
	open_file(0, "f0001.bin", true);                         /* opened again: both cached */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 2 * FRAME);
	aqt_store_read(&ts, 0, "f0001.bin", 0, FRAME);   /* hits; from its start: f0002 is there */
	aqt_store_read(&ts, 0, "f0002.bin", 0, FRAME);
	st = aqt_store_stats(&ts, 0);
	ck_assert_uint_ge(st.ra_hits, 2);
	ck_assert_uint_ge(st.qos.admitted_bytes, st.ra_bytes);   /* every prefetched byte charged */
	ck_assert_uint_eq(st.ra_wasted, 0);
}
END_TEST

START_TEST(test_head_then_rest)
{
	open_file(0, "b0001.bin", true);                         /* heads of b0001 and b0002 */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * VOL_RA_OPEN_HEAD), 2 * VOL_RA_OPEN_HEAD);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 2 * VOL_RA_OPEN_HEAD);
	aqt_store_read(&ts, 0, "b0001.bin", 0, 4096);    /* from its start: b0002 to its end */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, VOL_RA_OPEN_HEAD + BIG), VOL_RA_OPEN_HEAD + BIG);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), VOL_RA_OPEN_HEAD + BIG);
}
END_TEST

START_TEST(test_no_successor_unless_played)
{
	open_file(0, "solo.bin", true);                          /* no successor, folder idle */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);
	open_file(0, "empty0001.bin", true);                     /* empty: nothing to fetch */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);
	open_file(1, "f0001.bin", true);                         /* no readAhead */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 1, 0), 0);
	open_file(0, "f0002.bin", true);                         /* the folder is played now ... */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME);
	open_file(0, "solo.bin", true);                          /* ... so solo.bin's head comes */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 3 * FRAME), 3 * FRAME);
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 3 * FRAME);
}
END_TEST

static Suite *ra_open_suite(void)
{
	Suite *s = suite_create("vol_ra_open");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60); /* a loaded machine, sanitizers */
	tcase_add_test(tc, test_open_fetches_heads);
	tcase_add_test(tc, test_head_then_rest);
	tcase_add_test(tc, test_no_successor_unless_played);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(ra_open_suite());
}
