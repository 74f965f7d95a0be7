/* test_xdr: the bounded XDR cursor and encode buffer (agent/nfs/xdr.c). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs/xdr.h"
#include "tests/lib/aqt.h"

START_TEST(test_u32_u64)
{
	static const uint8_t b[] = {0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 2};
	struct xdr_cur c;

	xdr_cur_init(&c, b, sizeof(b));
	ck_assert_uint_eq(xdr_u32(&c), 7);
	ck_assert_uint_eq(xdr_u64(&c), (1ull << 32) | 2);
	ck_assert_int_eq(c.err, 0);
	ck_assert_uint_eq(xdr_left(&c), 0);
}
END_TEST

START_TEST(test_sticky_past_end)
{
	static const uint8_t b[] = {0, 0, 0, 1, 0, 0};
	struct xdr_cur c;

	xdr_cur_init(&c, b, sizeof(b));
	ck_assert_uint_eq(xdr_u32(&c), 1);
	ck_assert_uint_eq(xdr_u32(&c), 0); /* only 2 bytes left */
	ck_assert_int_eq(c.err, -EBADMSG);
	/* later reads are no-ops, even ones that would fit */
	ck_assert_ptr_null(xdr_fixed(&c, 0));
	ck_assert_uint_eq(xdr_u32(&c), 0);
	ck_assert_int_eq(c.err, -EBADMSG);
}
END_TEST

START_TEST(test_opaque_caps)
{
	static const uint8_t ok[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0xff};
	static const uint8_t huge[] = {0x7f, 0xff, 0xff, 0xff, 'x', 0, 0, 0};
	static const uint8_t shortpad[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0};
	struct xdr_cur c;
	const uint8_t *p;
	uint32_t n;

	xdr_cur_init(&c, ok, sizeof(ok));
	p = xdr_opaque(&c, 16, &n);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(memcmp(p, "hello", 5), 0);
	ck_assert_uint_eq(xdr_left(&c), sizeof(ok) - 12);

	xdr_cur_init(&c, ok, sizeof(ok));
	ck_assert_ptr_null(xdr_opaque(&c, 4, &n)); /* over the cap */
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(c.err, -EBADMSG);

	xdr_cur_init(&c, huge, sizeof(huge));
	ck_assert_ptr_null(xdr_opaque(&c, 0xffffffffu, &n)); /* past the end */
	ck_assert_int_eq(c.err, -EBADMSG);

	xdr_cur_init(&c, shortpad, sizeof(shortpad));
	ck_assert_ptr_null(xdr_opaque(&c, 16, &n)); /* padding missing */
	ck_assert_int_eq(c.err, -EBADMSG);
}
END_TEST

START_TEST(test_bool)
{
	static const uint8_t b[] = {0, 0, 0, 1, 0, 0, 0, 2};
	struct xdr_cur c;

	xdr_cur_init(&c, b, sizeof(b));
	ck_assert(xdr_bool(&c));
	ck_assert(!xdr_bool(&c));
	ck_assert_int_eq(c.err, -EBADMSG);
}
END_TEST

START_TEST(test_encode_roundtrip)
{
	struct ut_buf b;
	struct xdr_cur c;
	uint32_t n;
	const uint8_t *p;

	ut_buf_init(&b, 1024);
	xdr_put_u32(&b, 42);
	xdr_put_u64(&b, 0x0102030405060708ull);
	xdr_put_opaque(&b, "abc", 3);
	ck_assert_int_eq(b.err, 0);
	ck_assert_uint_eq(b.len, 4 + 8 + 4 + 4);
	ut_buf_set_be32(&b, 0, 43);
	xdr_cur_init(&c, ut_buf_bytes(&b), b.len);
	ck_assert_uint_eq(xdr_u32(&c), 43);
	ck_assert_uint_eq(xdr_u64(&c), 0x0102030405060708ull);
	p = xdr_opaque(&c, 3, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(memcmp(p, "abc", 3), 0);
	ck_assert_int_eq(ut_buf_bytes(&b)[4 + 8 + 4 + 3], 0); /* zero padding */
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_encode_cap)
{
	struct ut_buf b;

	ut_buf_init(&b, 10);
	xdr_put_u32(&b, 1);
	xdr_put_u32(&b, 2);
	ck_assert_int_eq(b.err, 0);
	xdr_put_u32(&b, 3);
	ck_assert_int_eq(b.err, AQ_ETOOBIG);
	ck_assert_uint_eq(b.len, 8);
	xdr_put_u32(&b, 4); /* sticky */
	ck_assert_uint_eq(b.len, 8);
	ck_assert_ptr_null(ut_buf_put_zero(&b, 1));
	ut_buf_cleanup(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xdr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_u32_u64);
	tcase_add_test(tc, test_sticky_past_end);
	tcase_add_test(tc, test_opaque_caps);
	tcase_add_test(tc, test_bool);
	tcase_add_test(tc, test_encode_roundtrip);
	tcase_add_test(tc, test_encode_cap);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
