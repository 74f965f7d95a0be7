/* Unit tests for cli/cli_units.c: every unit users may type, and bad input. */
#include "cli/cli_units.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

static void gib_ok(const char *s, int64_t want)
{
	aq_msg msg = { .text = { 0 } };
	int64_t got = -1;
	int rc = cli_parse_gib(s, &got, &msg);

	ck_assert_msg(rc == AQ_OK, "\"%s\": rc %d (%s)", s, rc, msg.text);
	ck_assert_msg(got == want, "\"%s\": got %lld, want %lld", s, (long long)got, (long long)want);
}

static void gib_bad(const char *s)
{
	aq_msg msg = { .text = { 0 } };
	int64_t got = 12345;
	int rc = cli_parse_gib(s, &got, &msg);

	ck_assert_msg(rc == AQ_EINVAL, "\"%s\": rc %d, want AQ_EINVAL", s ? s : "(null)", rc);
	ck_assert_msg(got == 12345, "\"%s\": output changed on error", s ? s : "(null)");
	ck_assert_msg(msg.text[0] != '\0', "\"%s\": no message", s ? s : "(null)");
	ck_assert_int_eq(cli_parse_gib(s, &got, NULL), AQ_EINVAL);
}

static void mibps_ok(const char *s, double want)
{
	aq_msg msg = { .text = { 0 } };
	double got = -1;
	int rc = cli_parse_mibps(s, &got, &msg);

	ck_assert_msg(rc == AQ_OK, "\"%s\": rc %d (%s)", s, rc, msg.text);
	ck_assert_msg(got == want, "\"%s\": got %g, want %g", s, got, want);
}

static void mibps_bad(const char *s)
{
	double got = 7;

	ck_assert_msg(cli_parse_mibps(s, &got, NULL) == AQ_EINVAL, "\"%s\" accepted", s ? s : "(null)");
	ck_assert(got == 7);
}

START_TEST(test_size_units)
{
	gib_ok("2048", 2048);
	gib_ok("1", 1);
	gib_ok("2048GiB", 2048);
	gib_ok("500GiB", 500);
	gib_ok("500gib", 500);
	gib_ok("500G", 500);
	gib_ok("500GB", 500);
	gib_ok("2TiB", 2048);
	gib_ok("3TiB", 3072);
	gib_ok("2tib", 2048);
	gib_ok("2T", 2048);
	gib_ok("2TB", 2048);
	gib_ok("1.5TiB", 1536);
	gib_ok("0.5TiB", 512);
	gib_ok("1PiB", 1048576);
	gib_ok("10PiB", 10485760);
	gib_ok("1P", 1048576);
}
END_TEST

START_TEST(test_size_bad)
{
	gib_bad(NULL);
	gib_bad("");
	gib_bad("abc");
	gib_bad("GiB");
	gib_bad("-1");
	gib_bad("+5");
	gib_bad(" 5");
	gib_bad("5 GiB");
	gib_bad("0");
	gib_bad("0TiB");
	gib_bad("2XiB");
	gib_bad("2MiB");      /* not a whole GiB, and MiB is not a size unit here */
	gib_bad("1.3GiB");    /* not a whole GiB */
	gib_bad("1.");
	gib_bad(".5TiB");
	gib_bad("1e3");
	gib_bad("0x10");
	gib_bad("2TiBs");
	gib_bad("99999999999999999999");
	gib_bad("9999999999PiB");
	gib_bad("nan");
	gib_bad("inf");
}
END_TEST

START_TEST(test_throughput_units)
{
	mibps_ok("128", 128);
	mibps_ok("128MiB/s", 128);
	mibps_ok("128mib/s", 128);
	mibps_ok("128MiBps", 128);
	mibps_ok("128MB/s", 128);
	mibps_ok("128M", 128);
	mibps_ok("93.75", 93.75);
	mibps_ok("1GiB/s", 1024);
	mibps_ok("1gib/s", 1024);
	mibps_ok("1.5GiB/s", 1536);
	mibps_ok("4.5GiBps", 4608);
	mibps_ok("5GB/s", 5120);
	mibps_ok("2G", 2048);
}
END_TEST

START_TEST(test_throughput_bad)
{
	mibps_bad(NULL);
	mibps_bad("");
	mibps_bad("fast");
	mibps_bad("-5");
	mibps_bad("0");
	mibps_bad("0GiB/s");
	mibps_bad("5TiB/s");
	mibps_bad("5MiB/h");
	mibps_bad("1..5");
	mibps_bad("1e2");
}
END_TEST

START_TEST(test_seconds)
{
	int64_t s = 0;

	ck_assert_int_eq(cli_parse_seconds("3600", &s, NULL), AQ_OK);
	ck_assert_int_eq(s, 3600);
	ck_assert_int_eq(cli_parse_seconds("90s", &s, NULL), AQ_OK);
	ck_assert_int_eq(s, 90);
	ck_assert_int_eq(cli_parse_seconds("30m", &s, NULL), AQ_OK);
	ck_assert_int_eq(s, 1800);
	ck_assert_int_eq(cli_parse_seconds("2h", &s, NULL), AQ_OK);
	ck_assert_int_eq(s, 7200);
	ck_assert_int_eq(cli_parse_seconds("7d", &s, NULL), AQ_OK);
	ck_assert_int_eq(s, 604800);
	ck_assert_int_eq(cli_parse_seconds("1.5h", &s, NULL), AQ_EINVAL);
	ck_assert_int_eq(cli_parse_seconds("0", &s, NULL), AQ_EINVAL);
	ck_assert_int_eq(cli_parse_seconds("2w", &s, NULL), AQ_EINVAL);
	ck_assert_int_eq(cli_parse_seconds("", &s, NULL), AQ_EINVAL);
	ck_assert_int_eq(s, 604800);
}
END_TEST

START_TEST(test_int64)
{
	int64_t v = 0;

	ck_assert_int_eq(cli_parse_int64("0", &v, NULL), AQ_OK);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(cli_parse_int64("65534", &v, NULL), AQ_OK);
	ck_assert_int_eq(v, 65534);
	ck_assert_int_eq(cli_parse_int64("9223372036854775807", &v, NULL), AQ_OK);
	ck_assert(v == INT64_MAX);
	ck_assert_int_eq(cli_parse_int64("9223372036854775808", &v, NULL), AQ_EINVAL);
	ck_assert_int_eq(cli_parse_int64("-1", &v, NULL), AQ_EINVAL);
	ck_assert_int_eq(cli_parse_int64("12a", &v, NULL), AQ_EINVAL);
	ck_assert_int_eq(cli_parse_int64("", &v, NULL), AQ_EINVAL);
	ck_assert_int_eq(cli_parse_int64(NULL, &v, NULL), AQ_EINVAL);
}
END_TEST

START_TEST(test_messages)
{
	aq_msg msg = { .text = { 0 } };
	int64_t g;

	cli_parse_gib("2XiB", &g, &msg);
	ck_assert_msg(strstr(msg.text, "unit") != NULL, "%s", msg.text);
	cli_parse_gib("1.3GiB", &g, &msg);
	ck_assert_msg(strstr(msg.text, "whole") != NULL, "%s", msg.text);
	cli_parse_gib("0", &g, &msg);
	ck_assert_msg(strstr(msg.text, "greater than zero") != NULL, "%s", msg.text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_units");
	TCase *tc = tcase_create("cli_units");

	tcase_add_test(tc, test_size_units);
	tcase_add_test(tc, test_size_bad);
	tcase_add_test(tc, test_throughput_units);
	tcase_add_test(tc, test_throughput_bad);
	tcase_add_test(tc, test_seconds);
	tcase_add_test(tc, test_int64);
	tcase_add_test(tc, test_messages);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
