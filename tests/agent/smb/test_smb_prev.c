/* test_smb_prev: the "@GMT-" path tokens of SMB previous versions
 * (agent/smb/smb_prev.c): where a component may stand, what it leaves of the
 * path, which tokens are malformed (out-of-range fields, wrong length, signs
 * and spaces sscanf would take), and two different times in one name.
 * smbclient sends the time as a TWrp context (tests/e2e/test_smb_prev.sh);
 * Windows Explorer and scripts also put it in the path. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "tests/lib/aqt.h"

/* 2026-12-01 10:20:30 UTC */
#define T1 1796120430LL

static int strip(const char *in, char *out, size_t cap, int64_t *when)
{
	snprintf(out, cap, "%s", in);
	*when = -1;
	return smb_prev_strip(out, when);
}

START_TEST(test_token_places)
{
	char p[256];
	int64_t w;

	ck_assert_int_eq(strip("@GMT-2026.12.01-10.20.30/a/f.txt", p, sizeof(p), &w), 0);
	ck_assert_str_eq(p, "a/f.txt");
	ck_assert_int_eq(w, T1);
	ck_assert_int_eq(strip("a/@GMT-2026.12.01-10.20.30/f.txt", p, sizeof(p), &w), 0);
	ck_assert_str_eq(p, "a/f.txt");
	ck_assert_int_eq(w, T1);
	ck_assert_int_eq(strip("a/b/@GMT-2026.12.01-10.20.30", p, sizeof(p), &w), 0);
	ck_assert_str_eq(p, "a/b");
	ck_assert_int_eq(strip("@GMT-2026.12.01-10.20.30", p, sizeof(p), &w), 0);
	ck_assert_str_eq(p, "");
	ck_assert_int_eq(w, T1);
	/* the same time twice is one time */
	ck_assert_int_eq(strip("@GMT-2026.12.01-10.20.30/@GMT-2026.12.01-10.20.30/f", p, sizeof(p), &w), 0);
	ck_assert_str_eq(p, "f");
	/* no token: nothing changes */
	ck_assert_int_eq(strip("a/GMT-x/f.txt", p, sizeof(p), &w), 0);
	ck_assert_str_eq(p, "a/GMT-x/f.txt");
	ck_assert_int_eq(w, -1);
}
END_TEST

START_TEST(test_token_malformed)
{
	static const char *bad[] = {
		"@GMT-2026.13.01-10.20.30/f", "@GMT-2026.12.32-10.20.30/f", "@GMT-2026.12.01-24.00.00/f",
		"@GMT-2026.12.01-10.60.30/f", "@GMT-2026.02.30-10.20.30/f", "@GMT-2026.12.01-10.20.3/f",
		"@GMT-2026.12.01-10.20.301/f", "@GMT- 2026.12.01-10.20.30/f", "@GMT-+026.12.01-10.20.30/f",
		"@GMT-1969.12.31-23.59.59/f", "@GMT-2026.12.01-10.20.30x/f", "@GMT-/f",
		"@GMT-2026.12.01-10.20.30/@GMT-2026.12.01-10.20.31/f",
	};
	char p[256];
	int64_t w;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(strip(bad[i], p, sizeof(p), &w) == -EINVAL, "%s taken", bad[i]);
}
END_TEST

static Suite *smb_prev_suite(void)
{
	Suite *s = suite_create("smb_prev");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_token_places);
	tcase_add_test(tc, test_token_malformed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_prev_suite());
}
