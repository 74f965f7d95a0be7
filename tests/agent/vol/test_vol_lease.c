/* test_vol_lease: the cached-open table's write-delegation grants
 * (recall_on_access, VOL_LEASE_ACCESS, vol_lease_access; agent/vol/vol_lease.h):
 * - a read's vol_lease_access recalls a recall_on_access grant of another
 *   group whole (brk told, the grant breaking), and none of the caller's own
 *   group; it leaves an ordinary grant (an SMB RWH lease) alone;
 * - any break of another group (an SMB open's W, a rename's H) takes such a
 *   grant whole, where an ordinary grant keeps what was not asked, and a
 *   read does not wait for an ordinary grant's break;
 * - without nowait, vol_lease_access waits until the holder drops the
 *   grant (DELEGRETURN), and no longer;
 * - a store with no grant answers false at once.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"
#include "util/ut_clock.h"

static struct aqt_store ts;
static struct vol_export *e;
static struct vol_obj root, file;
static const struct vol_cred cred = { 0 };
static unsigned brk_lost[2];
static int brk_calls[2];

static void on_brk(struct vol_lease *l, unsigned lost)
{
	int i = (int)(uintptr_t)l->arg;

	brk_lost[i] |= lost;
	brk_calls[i]++;
}

static void setup(void)
{
	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "l", .fsid = 310, .capacity = 1ull << 30,
							 .clients = "0.0.0.0/0", .key_byte = 5 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	ck_assert_ptr_nonnull(e = vol_export_at(ts.store, 0));
	ck_assert_int_eq(vol_root(e, &root), 0);
	ck_assert_int_eq(vol_create(&root, &cred, "f", 1, true, NULL, NULL, &file), 0);
	memset(brk_lost, 0, sizeof(brk_lost));
	memset(brk_calls, 0, sizeof(brk_calls));
}

static void teardown(void)
{
	vol_obj_cleanup(&file);
	vol_obj_cleanup(&root);
	vol_export_unref(e);
	aqt_store_cleanup(&ts);
}

/* A grant on the file: group, slot i of brk's record, a write delegation or not. */
static void grant(struct vol_lease *l, uint64_t group, int i, bool wdeleg, unsigned state)
{
	memset(l, 0, sizeof(*l));
	vol_lock_key_of(&file, &l->key);
	l->group = group;
	l->brk = on_brk;
	l->arg = (void *)(uintptr_t)i;
	l->recall_on_open_w = wdeleg;
	l->recall_on_access = wdeleg;
	l->revoke_ms = 60000;
	ck_assert_int_eq(vol_lease_grant(ts.store, l, state), 0);
}

START_TEST(test_access_recalls_only_wdeleg)
{
	struct vol_lease w, smb;
	struct vol_lease_by own = { .group = 7, .nowait = true }, other = { .group = 9, .nowait = true };
	bool breaking;

	ck_assert(!vol_lease_access(&file, &other)); /* nothing granted: nothing to do */
	grant(&w, 7, 0, true, VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	grant(&smb, 8, 1, false, VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	ck_assert(!vol_lease_access(&file, &own));   /* the holder's own read */
	ck_assert_int_eq(brk_calls[0], 0);
	ck_assert(vol_lease_access(&file, &other));  /* another's: recalled, it would wait */
	ck_assert_int_eq(brk_calls[0], 1);
	ck_assert_uint_eq(brk_lost[0], VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	ck_assert_uint_eq(vol_lease_state(ts.store, &w, &breaking, NULL), VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	ck_assert(breaking);
	ck_assert_int_eq(brk_calls[1], 0);           /* the SMB lease is no write delegation */
	ck_assert_uint_eq(vol_lease_state(ts.store, &smb, &breaking, NULL), VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	ck_assert(!breaking);
	vol_lease_drop(ts.store, &w);
	ck_assert(!vol_lease_access(&file, &other));  /* returned: nothing in the way */
	vol_lease_drop(ts.store, &smb);
}
END_TEST

START_TEST(test_any_break_takes_all)
{
	struct vol_lease w, smb;
	unsigned to;

	grant(&w, 7, 0, true, VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	ck_assert(vol_lease_contend(ts.store, &w.key, VOL_LEASE_H, 9)); /* a rename's H */
	ck_assert_uint_eq(brk_lost[0], VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	(void)vol_lease_state(ts.store, &w, NULL, &to);
	ck_assert_uint_eq(to, 0);                    /* an ack may keep nothing */
	ck_assert_int_eq(vol_lease_ack(ts.store, &w, VOL_LEASE_R), -EPERM);
	vol_lease_drop(ts.store, &w);
	grant(&smb, 8, 1, false, VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	ck_assert(vol_lease_contend(ts.store, &smb.key, VOL_LEASE_H, 9));
	(void)vol_lease_state(ts.store, &smb, NULL, &to);
	ck_assert_uint_eq(to, VOL_LEASE_R | VOL_LEASE_W); /* an ordinary grant keeps RW */
	/* a read does not wait for an ordinary grant's break under way */
	ck_assert(!vol_lease_access(&file, &(struct vol_lease_by){ .group = 9, .nowait = true }));
	vol_lease_drop(ts.store, &smb);
}
END_TEST

static struct vol_lease wt;

static void *returner(void *arg)
{
	(void)arg;
	usleep(300000);
	vol_lease_drop(ts.store, &wt); /* the DELEGRETURN */
	return NULL;
}

START_TEST(test_access_waits_for_return)
{
	pthread_t t;
	uint64_t t0;

	grant(&wt, 7, 0, true, VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H);
	ck_assert_int_eq(pthread_create(&t, NULL, returner, NULL), 0);
	t0 = ut_clock_mono_ns();
	ck_assert(vol_lease_access(&file, NULL));     /* waits */
	ck_assert_uint_ge(ut_clock_mono_ns() - t0, 250000000ull);
	ck_assert_uint_lt(ut_clock_mono_ns() - t0, 30000000000ull);
	ck_assert(!vol_lease_held(ts.store, &wt));
	pthread_join(t, NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vol_lease");
	TCase *tc = tcase_create("wdeleg");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_access_recalls_only_wdeleg);
	tcase_add_test(tc, test_any_break_takes_all);
	tcase_add_test(tc, test_access_waits_for_return);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
