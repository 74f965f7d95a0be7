/* Unit tests for util/ut_hash.c against the published FNV-1a test vectors
 * (the FNV reference's test suite: "", "a", "foobar"), and continuation. */
#include "util/ut_hash.h"

#include <check.h>
#include <stdlib.h>

#include "tests/lib/aqt.h"

START_TEST(test_vectors32)
{
	ck_assert_uint_eq(ut_hash_fnv32_str(""), 0x811c9dc5u);
	ck_assert_uint_eq(ut_hash_fnv32_str("a"), 0xe40c292cu);
	ck_assert_uint_eq(ut_hash_fnv32_str("foobar"), 0xbf9cf968u);
	ck_assert_uint_eq(ut_hash_fnv32("foobar", 6), 0xbf9cf968u);
}
END_TEST

START_TEST(test_vectors64)
{
	ck_assert_uint_eq(ut_hash_fnv64_str(""), 0xcbf29ce484222325ull);
	ck_assert_uint_eq(ut_hash_fnv64_str("a"), 0xaf63dc4c8601ec8cull);
	ck_assert_uint_eq(ut_hash_fnv64_str("foobar"), 0x85944171f73967e8ull);
}
END_TEST

START_TEST(test_continue_and_bytes)
{
	const unsigned char key[3] = { 0, 0xff, 0 };

	ck_assert_uint_eq(ut_hash_fnv32_add(ut_hash_fnv32("foo", 3), "bar", 3), ut_hash_fnv32_str("foobar"));
	ck_assert_uint_eq(ut_hash_fnv64_add(ut_hash_fnv64("fo", 2), "obar", 4), ut_hash_fnv64_str("foobar"));
	/* NUL bytes count: a binary key is not cut short */
	ck_assert_uint_ne(ut_hash_fnv32(key, 3), ut_hash_fnv32(key, 1));
	ck_assert_uint_ne(ut_hash_fnv64(key, 3), ut_hash_fnv64(key, 2));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_hash");
	TCase *tc = tcase_create("hash");

	tcase_add_test(tc, test_vectors32);
	tcase_add_test(tc, test_vectors64);
	tcase_add_test(tc, test_continue_and_bytes);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
