/* Unit tests for api/api_math.c, first half: the defaults and level names,
 * the parameter parser (api_math_set) and the worked figures of GCNV's docs.
 * The checks (pools, pool changes, volumes) are test_api_math_check.c. */
#include "api/api_math.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/api/api_math_fixture.h"
#include "tests/lib/aqt.h"

/* ---- Defaults and names ------------------------------------------------- */

START_TEST(test_defaults)
{
	const struct api_math_params *p = &api_math_defaults;
	const struct api_level_params *std = &p->level[API_LEVEL_STANDARD];
	const struct api_level_params *prem = &p->level[API_LEVEL_PREMIUM];
	const struct api_level_params *ext = &p->level[API_LEVEL_EXTREME];
	const struct api_level_params *flex = &p->level[API_LEVEL_FLEX];

	ck_assert_double_eq(std->mibps_per_tib, 16);
	ck_assert_double_eq(prem->mibps_per_tib, 64);
	ck_assert_double_eq(ext->mibps_per_tib, 128);
	ck_assert_double_eq(flex->mibps_per_tib, 16);
	ck_assert_double_eq(std->max_vol_mibps, 1600);
	ck_assert_double_eq(prem->max_vol_mibps, 4608);
	ck_assert_double_eq(ext->max_vol_mibps, 4608);
	ck_assert_double_eq(flex->max_vol_mibps, 1600);
	ck_assert_double_eq(prem->max_large_vol_mibps, 30720);
	ck_assert_double_eq(ext->max_large_vol_mibps, 30720);
	ck_assert_double_eq(std->max_large_vol_mibps, 0);
	ck_assert_double_eq(flex->max_large_vol_mibps, 0);
	ck_assert(std->pool_can_shrink && prem->pool_can_shrink && ext->pool_can_shrink);
	ck_assert(!flex->pool_can_shrink);
	ck_assert(std->manual_qos && prem->manual_qos && ext->manual_qos && !flex->manual_qos);
	ck_assert(!std->tiering && prem->tiering && ext->tiering && flex->tiering);
	ck_assert(!std->large_volumes && prem->large_volumes && ext->large_volumes &&
		  !flex->large_volumes);
	ck_assert_double_eq(p->cold_kibps_per_gib, 2);
	ck_assert_int_eq(p->flex_iops_per_tib, 1024);
	ck_assert_int_eq(p->flex_max_iops, 60000);
	ck_assert_double_eq(p->custom_min_mibps, 64);
	ck_assert_double_eq(p->custom_max_mibps, 5120);
	ck_assert_int_eq(p->custom_iops_per_mibps, 16);
	ck_assert_int_eq(p->custom_max_iops, 160000);
	ck_assert_int_eq(p->tiering_min_days, 2);
	ck_assert_int_eq(p->tiering_max_days, 183);
	ck_assert_int_eq(p->tiering_default_days, 31);
}
END_TEST

START_TEST(test_level_names)
{
	ck_assert_str_eq(api_level_name(API_LEVEL_STANDARD), "STANDARD");
	ck_assert_str_eq(api_level_name(API_LEVEL_PREMIUM), "PREMIUM");
	ck_assert_str_eq(api_level_name(API_LEVEL_EXTREME), "EXTREME");
	ck_assert_str_eq(api_level_name(API_LEVEL_FLEX), "FLEX");
	ck_assert_str_eq(api_level_name(API_LEVEL_UNSPECIFIED), "SERVICE_LEVEL_UNSPECIFIED");
	ck_assert_str_eq(api_level_name((enum api_level)99), "SERVICE_LEVEL_UNSPECIFIED");
	ck_assert_int_eq(api_level_parse("STANDARD"), API_LEVEL_STANDARD);
	ck_assert_int_eq(api_level_parse("PREMIUM"), API_LEVEL_PREMIUM);
	ck_assert_int_eq(api_level_parse("EXTREME"), API_LEVEL_EXTREME);
	ck_assert_int_eq(api_level_parse("FLEX"), API_LEVEL_FLEX);
	ck_assert_int_eq(api_level_parse("premium"), API_LEVEL_UNSPECIFIED);
	ck_assert_int_eq(api_level_parse("PREMIUM "), API_LEVEL_UNSPECIFIED);
	ck_assert_int_eq(api_level_parse(""), API_LEVEL_UNSPECIFIED);
	ck_assert_int_eq(api_level_parse("SERVICE_LEVEL_UNSPECIFIED"), API_LEVEL_UNSPECIFIED);
	ck_assert_int_eq(api_level_parse(NULL), API_LEVEL_UNSPECIFIED);
}
END_TEST

/* ---- api_math_set ------------------------------------------------------- */

START_TEST(test_set_level_fields)
{
	struct api_math_params p = params();

	EXPECT_OK(api_math_set(&p, "premium.mibps_per_tib", "80", MSG));
	ck_assert_double_eq(p.level[API_LEVEL_PREMIUM].mibps_per_tib, 80);
	ck_assert_double_eq(p.level[API_LEVEL_EXTREME].mibps_per_tib, 128);
	EXPECT_OK(api_math_set(&p, "extreme.max_vol_mibps", "5120.5", MSG));
	ck_assert_double_eq(p.level[API_LEVEL_EXTREME].max_vol_mibps, 5120.5);
	EXPECT_OK(api_math_set(&p, "standard.pool_max_gib", "409600", MSG));
	ck_assert_int_eq(p.level[API_LEVEL_STANDARD].pool_max_gib, 409600);
	EXPECT_OK(api_math_set(&p, "flex.vol_min_gib", "0", MSG));
	ck_assert_int_eq(p.level[API_LEVEL_FLEX].vol_min_gib, 0);
	EXPECT_OK(api_math_set(&p, "flex.pool_can_shrink", "true", MSG));
	ck_assert(p.level[API_LEVEL_FLEX].pool_can_shrink);
	EXPECT_OK(api_math_set(&p, "standard.tiering", "true", MSG));
	ck_assert(p.level[API_LEVEL_STANDARD].tiering);
	EXPECT_OK(api_math_set(&p, "premium.manual_qos", "false", MSG));
	ck_assert(!p.level[API_LEVEL_PREMIUM].manual_qos);
	EXPECT_OK(api_math_set(&p, "extreme.large_volumes", "false", MSG));
	ck_assert(!p.level[API_LEVEL_EXTREME].large_volumes);
	EXPECT_OK(api_math_set(&p, "premium.max_large_vol_mibps", "22528", MSG));
	ck_assert_double_eq(p.level[API_LEVEL_PREMIUM].max_large_vol_mibps, 22528);
	EXPECT_OK(api_math_set(&p, "premium.vol_max_gib", "131072", MSG));
	ck_assert_int_eq(p.level[API_LEVEL_PREMIUM].vol_max_gib, 131072);
	EXPECT_OK(api_math_set(&p, "premium.pool_min_gib", "1024", MSG));
	ck_assert_int_eq(p.level[API_LEVEL_PREMIUM].pool_min_gib, 1024);
}
END_TEST

START_TEST(test_set_top_fields)
{
	struct api_math_params p = params();

	EXPECT_OK(api_math_set(&p, "cold_kibps_per_gib", "3.5", MSG));
	ck_assert_double_eq(p.cold_kibps_per_gib, 3.5);
	EXPECT_OK(api_math_set(&p, "custom_max_iops", "750000", MSG));
	ck_assert_int_eq(p.custom_max_iops, 750000);
	EXPECT_OK(api_math_set(&p, "large_vol_min_gib", "4915", MSG));
	ck_assert_int_eq(p.large_vol_min_gib, 4915);
	EXPECT_OK(api_math_set(&p, "large_vol_max_gib", "20971520", MSG));
	ck_assert_int_eq(p.large_vol_max_gib, 20971520);
	EXPECT_OK(api_math_set(&p, "flex_iops_per_tib", "2048", MSG));
	ck_assert_int_eq(p.flex_iops_per_tib, 2048);
	EXPECT_OK(api_math_set(&p, "flex_max_iops", "80000", MSG));
	ck_assert_int_eq(p.flex_max_iops, 80000);
	EXPECT_OK(api_math_set(&p, "custom_min_mibps", "32", MSG));
	ck_assert_double_eq(p.custom_min_mibps, 32);
	EXPECT_OK(api_math_set(&p, "custom_max_mibps", "22528", MSG));
	ck_assert_double_eq(p.custom_max_mibps, 22528);
	EXPECT_OK(api_math_set(&p, "custom_iops_per_mibps", "20", MSG));
	ck_assert_int_eq(p.custom_iops_per_mibps, 20);
	EXPECT_OK(api_math_set(&p, "tiering_min_days", "7", MSG));
	ck_assert_int_eq(p.tiering_min_days, 7);
	EXPECT_OK(api_math_set(&p, "tiering_max_days", "365", MSG));
	ck_assert_int_eq(p.tiering_max_days, 365);
	EXPECT_OK(api_math_set(&p, "tiering_default_days", "14", MSG));
	ck_assert_int_eq(p.tiering_default_days, 14);
}
END_TEST

START_TEST(test_set_unknown_keys)
{
	struct api_math_params p = params();

	EXPECT_FAIL_HAS(api_math_set(&p, "gold.mibps_per_tib", "1", MSG), "gold.mibps_per_tib");
	EXPECT_FAIL(api_math_set(&p, "PREMIUM.mibps_per_tib", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "unspecified.mibps_per_tib", "1", MSG));
	EXPECT_FAIL_HAS(api_math_set(&p, "premium.nope", "1", MSG), "premium.nope");
	EXPECT_FAIL(api_math_set(&p, "premium.", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, ".mibps_per_tib", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "premium.mibps_per_tib.x", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "premiummibps_per_tib", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "mibps_per_tib", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "premium.cold_kibps_per_gib", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "level", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, NULL, "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "cold_kibps_per_gib", NULL, MSG));
	ck_assert_int_eq(api_math_set(&p, "nope", "1", NULL), AQ_EINVAL);
	ck_assert(memcmp(&p, &api_math_defaults, sizeof(p)) == 0);
}
END_TEST

START_TEST(test_set_bad_values)
{
	struct api_math_params p = params();
	static const char *const bad_numbers[] = {
		"", " 5", "5 ", "\t5", "abc", "12x", "1e400", "nan", "inf", "-inf", "-1", "-0.5",
	};
	static const char *const bad_ints[] = {
		"", " 5", "5 ", "1.5", "1e3", "0x10", "abc", "-1", "99999999999999999999",
	};

	for (size_t i = 0; i < sizeof(bad_numbers) / sizeof(bad_numbers[0]); i++) {
		EXPECT_FAIL(api_math_set(&p, "premium.mibps_per_tib", bad_numbers[i], MSG));
		EXPECT_FAIL(api_math_set(&p, "cold_kibps_per_gib", bad_numbers[i], MSG));
	}
	for (size_t i = 0; i < sizeof(bad_ints) / sizeof(bad_ints[0]); i++) {
		EXPECT_FAIL(api_math_set(&p, "premium.pool_max_gib", bad_ints[i], MSG));
		EXPECT_FAIL(api_math_set(&p, "custom_max_iops", bad_ints[i], MSG));
		EXPECT_FAIL(api_math_set(&p, "tiering_max_days", bad_ints[i], MSG));
	}
	EXPECT_FAIL_HAS(api_math_set(&p, "premium.mibps_per_tib", "-1", MSG), "negative");
	EXPECT_FAIL_HAS(api_math_set(&p, "tiering_max_days", "-1", MSG), "negative");
	/* int fields refuse what does not fit an int. */
	EXPECT_FAIL(api_math_set(&p, "tiering_max_days", "3000000000", MSG));
	EXPECT_FAIL(api_math_set(&p, "flex.pool_can_shrink", "yes", MSG));
	EXPECT_FAIL(api_math_set(&p, "flex.pool_can_shrink", "1", MSG));
	EXPECT_FAIL(api_math_set(&p, "flex.pool_can_shrink", "TRUE", MSG));
	EXPECT_FAIL(api_math_set(&p, "flex.pool_can_shrink", "", MSG));
	/* Nothing changed: a failed set leaves the parameters as they were. */
	ck_assert(memcmp(&p, &api_math_defaults, sizeof(p)) == 0);

	/* Zero is not negative. */
	EXPECT_OK(api_math_set(&p, "cold_kibps_per_gib", "0", MSG));
	ck_assert_double_eq(p.cold_kibps_per_gib, 0);
	EXPECT_OK(api_math_set(&p, "tiering_max_days", "2147483647", MSG));
	ck_assert_int_eq(p.tiering_max_days, 2147483647);
}
END_TEST

START_TEST(test_set_changes_math)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 4096);
	struct api_vol_math vol = vol_of(1500);

	EXPECT_OK(api_math_set(&p, "premium.mibps_per_tib", "32", MSG));
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &pool, &vol), 46.875, TOL);
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 128, TOL);
	EXPECT_OK(api_math_set(&p, "tiering_min_days", "7", MSG));
	EXPECT_FAIL(api_math_check_cooling_days(&p, 6, MSG));
	EXPECT_OK(api_math_check_cooling_days(&p, 7, MSG));
}
END_TEST

/* ---- Worked figures ----------------------------------------------------- */

START_TEST(test_vol_mibps_worked)
{
	struct api_math_params p = params();
	struct api_pool_math prem = pool_of(API_LEVEL_PREMIUM, 10485760);
	struct api_pool_math ext = pool_of(API_LEVEL_EXTREME, 10485760);
	struct api_pool_math std = pool_of(API_LEVEL_STANDARD, 204800);
	struct api_vol_math vol;

	vol = vol_of(1500);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &prem, &vol), 93.75, TOL);
	vol = vol_of(4096);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &ext, &vol), 512, TOL);
	vol = vol_of(102400);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &ext, &vol), 4608, TOL);
	vol = large_vol_of(1048576);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &ext, &vol), 30720, TOL);
	/* A large volume below the large cap follows its capacity. */
	vol = large_vol_of(102400);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &ext, &vol), 12800, TOL);
	vol = vol_of(204800);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &std, &vol), 1600, TOL);
	vol = vol_of(102400);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &std, &vol), 1600, TOL);
	vol = vol_of(51200);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &std, &vol), 800, TOL);
	vol = vol_of(0);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &prem, &vol), 0, TOL);
}
END_TEST

START_TEST(test_vol_mibps_tiered)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 4096);
	struct api_vol_math vol = vol_of(2048);

	pool.allow_tiering = true;
	vol.tiering_enabled = true;
	vol.cold_gib = 1024;
	/* 1024 hot GiB x 64/1024 + 1024 cold GiB x 2 KiB/s / 1024 = 64 + 2. */
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &pool, &vol), 66, TOL);
	/* Without tiering the cold figure is ignored: all 2048 GiB earn 64/TiB. */
	vol.tiering_enabled = false;
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &pool, &vol), 128, TOL);
	/* All cold. */
	vol.tiering_enabled = true;
	vol.cold_gib = 2048;
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &pool, &vol), 4, TOL);
	/* A stale cold figure above the capacity counts as all cold, never less. */
	vol.cold_gib = 4096;
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &pool, &vol), 4, TOL);
	vol.cold_gib = -5;
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &pool, &vol), 128, TOL);
}
END_TEST

START_TEST(test_vol_mibps_manual_and_flex)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 40960);
	struct api_pool_math flex = pool_of(API_LEVEL_FLEX, 10240);
	struct api_pool_math none = pool_of(API_LEVEL_UNSPECIFIED, 10240);
	struct api_vol_math vol = manual_vol_of(100, 250.5);

	pool.qos = API_QOS_MANUAL;
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &pool, &vol), 250.5, TOL);
	vol = vol_of(100);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &flex, &vol), 160, TOL);
	flex = custom_pool(128, 0);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &flex, &vol), 128, TOL);
	ck_assert_double_eq_tol(api_math_vol_mibps(&p, &none, &vol), 0, TOL);
}
END_TEST

START_TEST(test_pool_budget_worked)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 40960);

	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 2560, TOL);
	pool.qos = API_QOS_MANUAL;
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 2560, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 0);
	/* No cap on non-FLEX budgets: they bound the sum of MANUAL volumes. */
	pool = pool_of(API_LEVEL_EXTREME, 1048576);
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 131072, TOL);
	pool = pool_of(API_LEVEL_STANDARD, 204800);
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 3200, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 0);
	pool = pool_of(API_LEVEL_UNSPECIFIED, 204800);
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 0, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 0);
}
END_TEST

START_TEST(test_flex_worked)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_FLEX, 10240);

	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 160, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 10240);
	pool.capacity_gib = 307200;
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 1600, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 60000);
	/* Just below both caps: 100 TiB -> 1600 exactly, 58 TiB -> 59392 IOPS. */
	pool.capacity_gib = 102400;
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 1600, TOL);
	pool.capacity_gib = 59392;
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 59392);
	pool.capacity_gib = 1024;
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 16, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 1024);

	pool = custom_pool(128, 0);
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 128, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 2048);
	pool = custom_pool(64, 0);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 1024);
	pool = custom_pool(5120, 0);
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 5120, TOL);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 81920);
	pool = custom_pool(128, 5000);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 5000);
	pool = custom_pool(128, 160001);
	ck_assert_int_eq(api_math_pool_iops(&p, &pool), 160000);
	/* The custom figures, not capacity, decide. */
	pool.capacity_gib = 307200;
	ck_assert_double_eq_tol(api_math_pool_mibps(&p, &pool), 128, TOL);
}
END_TEST

static Suite *math_suite(void)
{
	Suite *s = suite_create("api_math");
	TCase *tc = tcase_create("api_math");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_level_names);
	tcase_add_test(tc, test_set_level_fields);
	tcase_add_test(tc, test_set_top_fields);
	tcase_add_test(tc, test_set_unknown_keys);
	tcase_add_test(tc, test_set_bad_values);
	tcase_add_test(tc, test_set_changes_math);
	tcase_add_test(tc, test_vol_mibps_worked);
	tcase_add_test(tc, test_vol_mibps_tiered);
	tcase_add_test(tc, test_vol_mibps_manual_and_flex);
	tcase_add_test(tc, test_pool_budget_worked);
	tcase_add_test(tc, test_flex_worked);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(math_suite());
}
