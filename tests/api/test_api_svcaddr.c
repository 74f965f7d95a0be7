/* Unit tests for api/api_svcaddr.c: service address ranges, picks, the
 * intent's codec (issue 25). */
#include "api/api_svcaddr.h"

#include <check.h>
#include <string.h>

#include "tests/lib/aqt.h"

/* range_check of the JSON text j: rc, and the message holds want. */
static int check(const char *j, const char *want, struct api_svcaddr_range *out)
{
	json_t *sa = json_loads(j, 0, NULL);
	aq_msg msg = { .text = "" };
	int rc;

	ck_assert_ptr_nonnull(sa);
	rc = api_svcaddr_range_check(sa, out, &msg);
	if (want)
		ck_assert_msg(strstr(msg.text, want), "%s: message \"%s\" lacks \"%s\"", j, msg.text, want);
	json_decref(sa);
	return rc;
}

START_TEST(test_range_refused)
{
	ck_assert_int_eq(check("{\"range\":\"10.1.2.3/24\"}", "host bits", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"fd00::/64\"}", "only IPv4", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"10.0.0.0/15\"}", "wider than a /16", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"10.0.0.0/33\"}", "CIDR", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"10.0.0.0\"}", "CIDR", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"10.0.0.256/24\"}", "CIDR", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"010.0.0.0/24\"}", "CIDR", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"127.0.0.0/24\"}", "unicast", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"224.0.0.0/24\"}", "unicast", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"169.254.1.0/24\"}", "unicast", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"10.0.0.0/28\",\"prefixLength\":29}", "prefixLength", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{\"range\":\"10.0.0.0/28\",\"port\":0}", "port", NULL), AQ_EINVAL);
	ck_assert_int_eq(check("{}", "range is required", NULL), AQ_EINVAL);
}
END_TEST

START_TEST(test_range_and_pick)
{
	struct api_svcaddr_range r, o;
	json_t *used = json_array();
	uint32_t a;
	char s[16];

	ck_assert_int_eq(check("{\"range\":\"10.99.0.32/30\",\"prefixLength\":24}", NULL, &r), AQ_OK);
	ck_assert_uint_eq(r.prefix, 24);
	ck_assert_uint_eq(r.port, API_SVCADDR_PORT);
	/* .32 (network) and .35 (broadcast) are nobody's */
	ck_assert_int_eq(api_svcaddr_pick(&r, used, &a, NULL), AQ_OK);
	api_svcaddr_format(a, s, sizeof(s));
	ck_assert_str_eq(s, "10.99.0.33");
	json_array_append_new(used, json_string("10.99.0.33"));
	ck_assert_int_eq(api_svcaddr_pick(&r, used, &a, NULL), AQ_OK);
	api_svcaddr_format(a, s, sizeof(s));
	ck_assert_str_eq(s, "10.99.0.34");
	json_array_append_new(used, json_string("10.99.0.34"));
	ck_assert_int_eq(api_svcaddr_pick(&r, used, &a, NULL), AQ_EEXHAUSTED);
	/* a /32 is one address, used as is */
	ck_assert_int_eq(check("{\"range\":\"10.99.1.7/32\",\"port\":20049}", NULL, &o), AQ_OK);
	ck_assert_int_eq(api_svcaddr_pick(&o, used, &a, NULL), AQ_OK);
	api_svcaddr_format(a, s, sizeof(s));
	ck_assert_str_eq(s, "10.99.1.7");
	ck_assert(!api_svcaddr_overlap(&r, &o));
	ck_assert_int_eq(check("{\"range\":\"10.99.0.0/24\"}", NULL, &o), AQ_OK);
	ck_assert(api_svcaddr_overlap(&r, &o) && api_svcaddr_overlap(&o, &r));
	json_decref(used);
}
END_TEST

START_TEST(test_codec)
{
	struct api_svcaddr in = { .prefix = 24, .port = 2049 }, out;
	json_t *e, *bad;

	ck_assert_int_eq(api_svcaddr_parse_ip("10.99.25.33", &in.addr), AQ_OK);
	e = api_svcaddr_encode(&in);
	ck_assert_int_eq(api_svcaddr_decode(e, &out, NULL), AQ_OK);
	ck_assert(out.addr == in.addr && out.prefix == 24 && out.port == 2049);
	bad = json_pack("{s:s,s:i,s:i}", "address", "10.99.25", "prefixLength", 24, "port", 2049);
	ck_assert_int_eq(api_svcaddr_decode(bad, &out, NULL), AQ_EINVAL);
	json_decref(bad);
	bad = json_pack("{s:s,s:i,s:i}", "address", "10.99.25.33", "prefixLength", 33, "port", 2049);
	ck_assert_int_eq(api_svcaddr_decode(bad, &out, NULL), AQ_EINVAL);
	json_decref(bad);
	json_decref(e);
}
END_TEST

static Suite *svcaddr_suite(void)
{
	Suite *s = suite_create("api_svcaddr");
	TCase *tc = tcase_create("api_svcaddr");

	tcase_add_test(tc, test_range_refused);
	tcase_add_test(tc, test_range_and_pick);
	tcase_add_test(tc, test_codec);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(svcaddr_suite());
}
