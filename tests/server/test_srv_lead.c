/* Unit tests for server/srv_lead.c's bound on a SQLite file: the lease
 * thread takes the lease; a leader that cannot renew (another connection
 * holds the database) stops leading by itself within the lease; once it
 * can write again it leads again; and a leader
 * that finds another holder in the lease stops within one renew interval. */
#include "server/srv_lead.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "server/srv_internal.h"
#include "tests/lib/aqt.h"
#include "util/ut_clock.h"

#define LEASE_MS 1500
#define RENEW_MS 300

static struct srv srv;
static char path[64];

/* Milliseconds until srv_lead_held(&srv) is want (at most max_ms), or -1. */
static int64_t until_held(bool want, int64_t max_ms)
{
	uint64_t t0 = ut_clock_mono_ms();

	while ((int64_t)(ut_clock_mono_ms() - t0) <= max_ms) {
		if (srv_lead_held(&srv, NULL) == want)
			return (int64_t)(ut_clock_mono_ms() - t0);
		usleep(20000);
	}
	return -1;
}

START_TEST(test_lead_bound)
{
	aq_msg msg = { .text = "" };
	struct db *d = NULL;
	struct db_fence f;
	struct db_lease l;
	int64_t ms;
	json_t *other;
	int fd;

	snprintf(path, sizeof(path), "/tmp/aq-test-lead-XXXXXX");
	ck_assert_int_ge(fd = mkstemp(path), 0);
	close(fd);
	unlink(path);
	srv_cfg_defaults(&srv.cfg);
	snprintf(srv.cfg.db_path, sizeof(srv.cfg.db_path), "%s", path);
	snprintf(srv.cfg.public_url, sizeof(srv.cfg.public_url), "http://127.0.0.1:1");
	srv.cfg.lead_lease_ms = LEASE_MS;
	srv.cfg.lead_renew_ms = RENEW_MS;
	ck_assert_msg(db_open(path, &d, &msg) == AQ_OK, "%s", msg.text);
	ck_assert_int_eq(srv_lead_start(&srv, &msg), AQ_OK);
	ck_assert_int_ge(until_held(true, 3000), 0);
	ck_assert(srv_lead_held(&srv, &f));
	ck_assert_int_eq(f.epoch, 1);

	/* the database held by another writer: no renewal gets through */
	ck_assert_int_eq(db_begin(d), AQ_OK);
	ms = until_held(false, LEASE_MS + 1000);
	ck_assert_msg(ms >= 0 && ms <= LEASE_MS + 100, "stopped leading %lld ms after the database was held (lease %d ms)",
		      (long long)ms, LEASE_MS);
	db_rollback(d);
	/* free again: it leads again (at the same epoch when the renewal that
	 * waited began before the expiry: nobody held it meanwhile) */
	ck_assert_int_ge(until_held(true, 3000), 0);
	ck_assert(srv_lead_held(&srv, &f));
	ck_assert_int_le(f.epoch, 2);
	/* and keeps leading through its renewals, past a whole lease */
	usleep(LEASE_MS * 1000);
	ck_assert(srv_lead_held(&srv, NULL));

	/* another holder at a higher epoch: it follows within a renew interval */
	other = json_pack("{s:s,s:s,s:I,s:I}", "holder", "other", "url", "http://other", "epoch", (json_int_t)9,
			  "expireMs", (json_int_t)(ut_clock_real_ms() + 60000));
	ck_assert_int_eq(db_begin(d), AQ_OK);
	ck_assert_int_eq(db_put(d, "lease", "", SRV_LEAD_LEASE, other, false), AQ_OK);
	ck_assert_int_eq(db_commit(d), AQ_OK);
	json_decref(other);
	ms = until_held(false, RENEW_MS + 1000);
	ck_assert_msg(ms >= 0 && ms <= RENEW_MS + 200, "still leading %lld ms after another holder took the lease", (long long)ms);
	srv_lead_stop(&srv);
	/* a follower's stop gives nothing up */
	ck_assert_int_eq(db_lease_get(d, SRV_LEAD_LEASE, &l), AQ_OK);
	ck_assert_str_eq(l.holder, "other");
	ck_assert_int_eq(l.epoch, 9);
	db_close(d);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_lead");
	TCase *tc = tcase_create("bound");

	tcase_add_test(tc, test_lead_bound);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
