/* Unit tests for util/ut_hex.c: round trips, odd and non-hex input, exact
 * and short buffers, fixed-width checks. */
#include "util/ut_hex.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_error.h"
#include "tests/lib/aqt.h"

START_TEST(test_encode)
{
	const unsigned char in[] = { 0x00, 0x01, 0xab, 0xff, 0x10 };
	char out[11];

	ck_assert_int_eq(ut_hex_encode(in, sizeof(in), out, sizeof(out)), AQ_OK); /* exactly 2n + 1 */
	ck_assert_str_eq(out, "0001abff10");
	ck_assert_int_eq(ut_hex_encode(in, sizeof(in), out, sizeof(out) - 1), AQ_ETOOBIG);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(ut_hex_encode(in, 0, out, 1), AQ_OK);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(ut_hex_encode(in, 0, out, 0), AQ_ETOOBIG); /* no room for the NUL */
}
END_TEST

START_TEST(test_decode)
{
	unsigned char out[4] = { 0 };
	size_t n = 99;

	ck_assert_int_eq(ut_hex_decode("00aBfF10", 8, out, sizeof(out), &n), AQ_OK);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(memcmp(out, "\x00\xab\xff\x10", 4), 0);
	ck_assert_int_eq(ut_hex_decode("abc", 3, out, sizeof(out), &n), AQ_EINVAL); /* odd */
	ck_assert_int_eq(ut_hex_decode("abcd", 3, out, sizeof(out), &n), AQ_EINVAL); /* odd, never reads past len */
	ck_assert_int_eq(ut_hex_decode("0g", 2, out, sizeof(out), &n), AQ_EINVAL);
	ck_assert_int_eq(ut_hex_decode(" 1", 2, out, sizeof(out), &n), AQ_EINVAL);
	ck_assert_int_eq(ut_hex_decode("0x", 2, out, sizeof(out), &n), AQ_EINVAL);
	ck_assert_int_eq(ut_hex_decode("0102030405", 10, out, sizeof(out), &n), AQ_ETOOBIG);
	ck_assert_int_eq(ut_hex_decode("", 0, out, sizeof(out), &n), AQ_OK);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_round_trip)
{
	unsigned char in[256], back[256];
	char text[513];
	size_t n;

	for (int i = 0; i < 256; i++)
		in[i] = (unsigned char)i;
	ck_assert_int_eq(ut_hex_encode(in, sizeof(in), text, sizeof(text)), AQ_OK);
	ck_assert_uint_eq(strlen(text), 512);
	ck_assert_int_eq(ut_hex_decode(text, 512, back, sizeof(back), &n), AQ_OK);
	ck_assert_uint_eq(n, 256);
	ck_assert_int_eq(memcmp(in, back, 256), 0);
}
END_TEST

START_TEST(test_value_and_valid)
{
	ck_assert_int_eq(ut_hex_value('0'), 0);
	ck_assert_int_eq(ut_hex_value('9'), 9);
	ck_assert_int_eq(ut_hex_value('a'), 10);
	ck_assert_int_eq(ut_hex_value('F'), 15);
	ck_assert_int_eq(ut_hex_value('g'), -1);
	ck_assert_int_eq(ut_hex_value('\0'), -1);
	ck_assert(ut_hex_valid("0123456789abcdef", 16));
	ck_assert(ut_hex_valid("0123456789ABCDEF", 16));
	ck_assert(!ut_hex_valid("0123456789abcde", 16));   /* short */
	ck_assert(!ut_hex_valid("0123456789abcdef0", 16)); /* long */
	ck_assert(!ut_hex_valid("0123456789abcdeg", 16));
	ck_assert(!ut_hex_valid("", 0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_hex");
	TCase *tc = tcase_create("hex");

	tcase_add_test(tc, test_encode);
	tcase_add_test(tc, test_decode);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_value_and_valid);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
