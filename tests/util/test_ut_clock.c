/* Unit tests for util/ut_clock.c: known instants formatted, digits, small
 * buffers, monotonic order, deadlines normalised. */
#include "util/ut_clock.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_error.h"
#include "tests/lib/aqt.h"

START_TEST(test_format_known)
{
	char out[UT_CLOCK_TEXT_MAX];
	/* 2026-12-01T12:00:00Z is 1796126400 s after the epoch */
	int64_t t = 1796126400LL * 1000000000LL + 123456789;

	ck_assert_int_eq(ut_clock_format(t, 3, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "2026-12-01T12:00:00.123Z");
	ck_assert_int_eq(ut_clock_format(t, 9, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "2026-12-01T12:00:00.123456789Z");
	ck_assert_int_eq(ut_clock_format(t, 0, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "2026-12-01T12:00:00Z");
	ck_assert_int_eq(ut_clock_format(t, 12, out, sizeof(out)), AQ_OK); /* taken as 9 */
	ck_assert_str_eq(out, "2026-12-01T12:00:00.123456789Z");
	ck_assert_int_eq(ut_clock_format(0, 3, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "1970-01-01T00:00:00.000Z");
	ck_assert_int_eq(ut_clock_format(-1000000, 3, out, sizeof(out)), AQ_OK); /* 1 ms before */
	ck_assert_str_eq(out, "1969-12-31T23:59:59.999Z");
}
END_TEST

START_TEST(test_format_small)
{
	char out[25];

	ck_assert_int_eq(ut_clock_format(0, 3, out, sizeof(out) - 1), AQ_ETOOBIG); /* needs 25 */
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(ut_clock_format(0, 3, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "1970-01-01T00:00:00.000Z");
}
END_TEST

START_TEST(test_mono_and_real)
{
	uint64_t a = ut_clock_mono_ns(), b = ut_clock_mono_ns();
	int64_t r = ut_clock_real_ms();

	ck_assert_uint_le(a, b);
	ck_assert_uint_le(ut_clock_mono_ms(), ut_clock_mono_ns() / 1000000u);
	ck_assert_int_gt(r, 1700000000000LL); /* after 2023: a real clock, not boot time */
	ck_assert_int_le(ut_clock_real_ns() / 1000000, ut_clock_real_ms());
}
END_TEST

START_TEST(test_deadline)
{
	struct timespec now, d;

	clock_gettime(CLOCK_REALTIME, &now);
	ut_clock_deadline(&d, 2999);
	ck_assert_int_lt(d.tv_nsec, 1000000000L);
	ck_assert_int_ge(d.tv_nsec, 0);
	/* 2.999 s ahead, give or take the time between the two reads */
	ck_assert_int_ge((int64_t)(d.tv_sec - now.tv_sec) * 1000 + (d.tv_nsec - now.tv_nsec) / 1000000, 2999);
	ck_assert_int_le((int64_t)(d.tv_sec - now.tv_sec) * 1000 + (d.tv_nsec - now.tv_nsec) / 1000000, 2999 + 1000);
}
END_TEST

/* now_text: nanoseconds, UTC, and between the real time before and after */
START_TEST(test_now_text)
{
	char out[UT_CLOCK_TEXT_MAX], lo[UT_CLOCK_TEXT_MAX], hi[UT_CLOCK_TEXT_MAX];
	int64_t before = ut_clock_real_ns(), after;

	ck_assert_int_eq(ut_clock_now_text(out, sizeof(out)), AQ_OK);
	after = ut_clock_real_ns();
	ck_assert_uint_eq(strlen(out), strlen("2026-12-01T12:00:00.123456789Z"));
	ck_assert_int_eq(out[19], '.');
	ck_assert_int_eq(out[29], 'Z');
	ut_clock_format(before, 9, lo, sizeof(lo));
	ut_clock_format(after, 9, hi, sizeof(hi));
	ck_assert_str_le(lo, out); /* same width: text order is time order */
	ck_assert_str_ge(hi, out);
	ck_assert_int_eq(ut_clock_now_text(out, 30), AQ_ETOOBIG); /* no room for the NUL */
	ck_assert_str_eq(out, "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_clock");
	TCase *tc = tcase_create("clock");

	tcase_add_test(tc, test_format_known);
	tcase_add_test(tc, test_format_small);
	tcase_add_test(tc, test_mono_and_real);
	tcase_add_test(tc, test_deadline);
	tcase_add_test(tc, test_now_text);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
