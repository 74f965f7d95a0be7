/* Unit tests for util/ut_buf.c: the cap reached exactly, one byte past it,
 * the sticky error, formatted appends that cross the cap, steal and reset;
 * the binary side the XDR and SMB encoders use: put_zero, the in-place
 * setters (in range, at the edge, past it, after an error) and rewind. */
#include "util/ut_buf.h"

#include <check.h>
#include <stdint.h>
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

START_TEST(test_put_zero)
{
	struct ut_buf b;
	uint8_t *q;

	ut_buf_init(&b, 8);
	ck_assert_int_eq(ut_buf_adds(&b, "ab"), AQ_OK);
	q = ut_buf_put_zero(&b, 6); /* exactly the cap */
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_eq(q, ut_buf_bytes(&b) + 2);
	for (int i = 0; i < 6; i++)
		ck_assert_uint_eq(q[i], 0);
	ck_assert_uint_eq(ut_buf_len(&b), 8);
	ck_assert_int_eq(ut_buf_str(&b)[8], '\0');
	ck_assert_ptr_null(ut_buf_put_zero(&b, 1)); /* past the cap */
	ck_assert_int_eq(ut_buf_err(&b), AQ_ETOOBIG);
	ck_assert_uint_eq(ut_buf_len(&b), 8);
	ck_assert_ptr_null(ut_buf_put_zero(&b, 0)); /* sticky, even for nothing */
	ut_buf_cleanup(&b);
}
END_TEST

/* put_room: the same growth, cap and sticky error as put_zero; the bytes
 * are the caller's to fill, the NUL after them is there */
START_TEST(test_put_room)
{
	struct ut_buf b;
	uint8_t *q;

	ut_buf_init(&b, 1u << 20);
	q = ut_buf_put_zero(&b, 200000); /* room that held bytes before */
	ck_assert_ptr_nonnull(q);
	memset(q, 'x', 200000);
	ut_buf_reset(&b);
	ck_assert_int_eq(ut_buf_adds(&b, "hdr"), AQ_OK);
	q = ut_buf_put_room(&b, 100000);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_eq(q, ut_buf_bytes(&b) + 3);
	ck_assert_uint_eq(q[1], 'x'); /* left as they were, not zeroed */
	ck_assert_uint_eq(ut_buf_len(&b), 100003);
	ck_assert_int_eq(ut_buf_str(&b)[100003], '\0');
	ck_assert_int_eq(memcmp(ut_buf_str(&b), "hdr", 3), 0); /* what was there stays */
	memset(q, 0x5a, 100000);
	ck_assert_uint_eq(ut_buf_bytes(&b)[100002], 0x5a);
	ck_assert_ptr_null(ut_buf_put_room(&b, (1u << 20) - 100002)); /* one past the cap */
	ck_assert_int_eq(ut_buf_err(&b), AQ_ETOOBIG);
	ck_assert_uint_eq(ut_buf_len(&b), 100003);
	ck_assert_ptr_null(ut_buf_put_room(&b, 0)); /* sticky */
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_setters)
{
	static const uint8_t want[8] = { 0x01, 0x02, 0x03, 0x04, 0x06, 0x05, 0x0a, 0x09 };
	struct ut_buf b;

	ut_buf_init(&b, 64);
	ut_buf_set_be32(&b, 0, 1); /* nothing there yet: no-op, no crash */
	ck_assert_uint_eq(ut_buf_len(&b), 0);
	ck_assert_ptr_nonnull(ut_buf_put_zero(&b, 8));
	ut_buf_set_be32(&b, 0, 0x01020304u);
	ut_buf_set_le16(&b, 4, 0x0506u);
	ut_buf_set_le32(&b, 4, 0x090a0506u); /* the last 4 bytes: at the edge */
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), want, 8), 0);
	ut_buf_set_be32(&b, 5, 0xffffffffu); /* one byte past the content */
	ut_buf_set_le32(&b, 5, 0xffffffffu);
	ut_buf_set_le16(&b, 7, 0xffffu);
	ut_buf_set_le16(&b, SIZE_MAX, 0xffffu); /* off + n overflows */
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), want, 8), 0);
	ck_assert_uint_eq(ut_buf_len(&b), 8);
	ut_buf_set_le16(&b, 6, 0x0b0au); /* ends exactly at the content's end */
	ck_assert_uint_eq(ut_buf_bytes(&b)[7], 0x0b);
	ck_assert_ptr_null(ut_buf_put_zero(&b, 100)); /* error set: setters stop */
	ut_buf_set_be32(&b, 0, 0);
	ck_assert_uint_eq(ut_buf_bytes(&b)[0], 0x01);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_rewind)
{
	struct ut_buf b;

	ut_buf_init(&b, 6);
	ck_assert_int_eq(ut_buf_adds(&b, "abcd"), AQ_OK);
	ck_assert_int_eq(ut_buf_adds(&b, "efg"), AQ_ETOOBIG); /* a record that does not fit */
	ut_buf_rewind(&b, 2);
	ck_assert_int_eq(ut_buf_err(&b), AQ_OK);
	ck_assert_str_eq(ut_buf_str(&b), "ab");
	ut_buf_rewind(&b, 5); /* longer than the content: only the error is cleared */
	ck_assert_str_eq(ut_buf_str(&b), "ab");
	ck_assert_int_eq(ut_buf_adds(&b, "wxyz"), AQ_OK);
	ck_assert_str_eq(ut_buf_str(&b), "abwxyz");
	ut_buf_cleanup(&b);
	ut_buf_rewind(&b, 0); /* an empty, never allocated buffer */
	ck_assert_uint_eq(ut_buf_len(&b), 0);
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
	tcase_add_test(tc, test_put_zero);
	tcase_add_test(tc, test_put_room);
	tcase_add_test(tc, test_setters);
	tcase_add_test(tc, test_rewind);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
