/* Unit tests for util/ut_buf.c: the cap reached exactly, one byte past it,
 * the sticky error, formatted appends that cross the cap, steal and reset. */
#include "util/ut_buf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define TEST_CAP 100

START_TEST(test_empty)
{
	struct ut_buf b;

	ut_buf_init(&b, TEST_CAP);
	ck_assert_str_eq(ut_buf_str(&b), "");
	ck_assert_uint_eq(ut_buf_len(&b), 0);
	ck_assert_int_eq(ut_buf_err(&b), AQ_OK);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_cap_exactly_reached)
{
	char fill[TEST_CAP];
	struct ut_buf b;

	memset(fill, 'x', sizeof(fill));
	ut_buf_init(&b, TEST_CAP);
	ck_assert_int_eq(ut_buf_add(&b, fill, TEST_CAP - 1), AQ_OK);
	ck_assert_int_eq(ut_buf_add(&b, "y", 1), AQ_OK); /* exactly the cap */
	ck_assert_uint_eq(ut_buf_len(&b), TEST_CAP);
	ck_assert_int_eq(ut_buf_str(&b)[TEST_CAP - 1], 'y');
	ck_assert_int_eq(ut_buf_str(&b)[TEST_CAP], '\0');
	ck_assert_uint_le(b.cap, TEST_CAP + 1); /* never allocated past the cap */
	ck_assert_int_eq(ut_buf_add(&b, "", 0), AQ_OK); /* nothing more is fine */
	ck_assert_int_eq(ut_buf_add(&b, "z", 1), AQ_ETOOBIG);
	ck_assert_uint_eq(ut_buf_len(&b), TEST_CAP); /* the failed append added nothing */
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_sticky)
{
	struct ut_buf b;

	ut_buf_init(&b, 4);
	ck_assert_int_eq(ut_buf_adds(&b, "abcde"), AQ_ETOOBIG);
	ck_assert_str_eq(ut_buf_str(&b), "");
	/* fits, but the error stays until a reset */
	ck_assert_int_eq(ut_buf_adds(&b, "a"), AQ_ETOOBIG);
	ck_assert_int_eq(ut_buf_addf(&b, "%d", 1), AQ_ETOOBIG);
	ck_assert_uint_eq(ut_buf_len(&b), 0);
	ck_assert_ptr_null(ut_buf_steal(&b, NULL));
	ck_assert_int_eq(ut_buf_err(&b), AQ_OK); /* steal empties, error included */
	ut_buf_reset(&b);
	ck_assert_int_eq(ut_buf_adds(&b, "abcd"), AQ_OK);
	ck_assert_str_eq(ut_buf_str(&b), "abcd");
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_addf_crosses_cap)
{
	struct ut_buf b;

	ut_buf_init(&b, 10);
	ck_assert_int_eq(ut_buf_addf(&b, "%s-%d", "abc", 12345), AQ_OK); /* 9 bytes */
	ck_assert_str_eq(ut_buf_str(&b), "abc-12345");
	ck_assert_int_eq(ut_buf_addf(&b, "%d", 7), AQ_OK); /* 10: the cap */
	ck_assert_int_eq(ut_buf_addf(&b, "%d", 8), AQ_ETOOBIG);
	ck_assert_str_eq(ut_buf_str(&b), "abc-123457");
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_growth_and_binary)
{
	struct ut_buf b;
	size_t len = 0;
	char *p;

	ut_buf_init(&b, 1u << 20);
	for (int i = 0; i < 10000; i++)
		ck_assert_int_eq(ut_buf_add(&b, "a\0b", 3), AQ_OK);
	ck_assert_uint_eq(ut_buf_len(&b), 30000);
	ck_assert_int_eq(memcmp(ut_buf_str(&b) + 29997, "a\0b", 3), 0);
	p = ut_buf_steal(&b, &len);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(len, 30000);
	ck_assert_uint_eq(ut_buf_len(&b), 0);
	ck_assert_str_eq(ut_buf_str(&b), "");
	free(p);
	p = ut_buf_steal(&b, &len); /* an empty buffer steals as "" */
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, "");
	ck_assert_uint_eq(len, 0);
	free(p);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_zero_cap)
{
	struct ut_buf b;

	ut_buf_init(&b, 0);
	ck_assert_int_eq(ut_buf_add(&b, "", 0), AQ_OK);
	ck_assert_int_eq(ut_buf_adds(&b, "x"), AQ_ETOOBIG);
	ut_buf_cleanup(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_buf");
	TCase *tc = tcase_create("buf");

	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_cap_exactly_reached);
	tcase_add_test(tc, test_sticky);
	tcase_add_test(tc, test_addf_crosses_cap);
	tcase_add_test(tc, test_growth_and_binary);
	tcase_add_test(tc, test_zero_cap);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
