/* test_nfs4_ra_open: read-ahead at NFSv4.1 OPEN (agent/nfs4/nfs4_io.c
 * calls vol_read_ahead_open, agent/vol/vol_ra.h "At open"; issue 23). On a
 * CROSS_FILE_SEQUENTIAL volume an OPEN for reading of a frame of a
 * sequence fetches its head and the next frame's before any READ; an OPEN
 * for writing only fetches nothing; the READs that follow are hits. The
 * in-process NFS server with NFSv4.1 (nfs4_harness.h) over a store whose
 * export carries readAhead. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "agent/smb/smb_srv_internal.h"
#include "tests/agent/nfs4/nfs4_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FRAME (256u << 10)
#define RD 1u /* OPEN4_SHARE_ACCESS_READ */
#define WR 2u /* OPEN4_SHARE_ACCESS_WRITE */

static struct aqt_store ts;
static struct nfs_srv *nsrv;
static struct nfs4_srv *v4;
static struct smb_srv *ssrv;
static struct nfs4t_cl P;

static void file_put(const char *name)
{
	char p[160];
	char *b = calloc(1, FRAME);
	int fd;

	ck_assert_ptr_nonnull(b);
	snprintf(p, sizeof(p), "%s/v0/%s", ts.dir, name);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0666), 0);
	ck_assert_int_eq(write(fd, b, FRAME), (ssize_t)FRAME);
	close(fd);
	free(b);
}

static void setup(void)
{
	nfs4t_srv_up(&(struct nfs4t_spec){ .fsid = 310, .key_byte = 5, .threads = 2 }, &ts, &nsrv, &v4, &ssrv);
	file_put("f0001.bin");
	file_put("f0002.bin");
	file_put("f0003.bin");
	ts.cfg[0].read_ahead = (struct api_intent_read_ahead){ .mode = API_INTENT_RA_CROSS_FILE, .depth_files = 4 };
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	nfs4t_cl_up(&P, nfs_srv_port(nsrv), "client-p", 0);
	P.name = "f0001.bin";
}

static void teardown(void)
{
	nfs4_cl_close(&P.c);
	nfs4t_srv_down(&ts, nsrv, v4, ssrv);
}

START_TEST(test_open_read_fetches_heads)
{
	ck_assert_uint_eq(nfs4t_open(&P, WR, 0), 0);             /* for writing only: nothing */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 0), 0);
	ck_assert_uint_eq(nfs4t_close(&P), 0);
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), 0);             /* f0001's head and f0002's (the ramp's one) */
	ck_assert_uint_eq(aqt_ra_wait(&ts, 0, 2 * FRAME), 2 * FRAME);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 25, nfs4t_build_read, &P.open), 0); /* READ: a hit */
	ck_assert_uint_ge(aqt_store_stats(&ts, 0).ra_hits, 1);
	ck_assert_uint_eq(nfs4t_close(&P), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_ra_open");
	TCase *tc = tcase_create("open");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_open_read_fetches_heads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
