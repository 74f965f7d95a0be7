/* Unit tests for api/api_math.c: the worked figures of GCNV's docs, every
 * boundary just inside and just outside, and the parameter parser. */
#include "api/api_math.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define TOL 1e-9

/* Each EXPECT_* runs call with a fresh message buffer that call can reach as
 * MSG, so a failure's message is always that call's own. */
#define MSG (&m_)
#define EXPECT_OK(call)                                                              \
	do {                                                                         \
		aq_msg m_ = { .text = { 0 } };                                               \
		int rc_ = (call);                                                    \
		ck_assert_msg(rc_ == AQ_OK, "%s: rc %d (%s)", #call, rc_, m_.text);  \
	} while (0)
#define EXPECT_FAIL_HAS(call, needle)                                                \
	do {                                                                         \
		aq_msg m_ = { .text = { 0 } };                                               \
		int rc_ = (call);                                                    \
		ck_assert_msg(rc_ == AQ_EINVAL, "%s: rc %d, want AQ_EINVAL", #call, rc_); \
		ck_assert_msg(m_.text[0] != '\0', "%s: empty message", #call);       \
		ck_assert_msg(strstr(m_.text, (needle)) != NULL,                     \
			      "%s: message \"%s\" lacks \"%s\"", #call, m_.text, (needle)); \
	} while (0)
#define EXPECT_FAIL(call) EXPECT_FAIL_HAS(call, "")

static struct api_math_params params(void)
{
	return api_math_defaults;
}

static struct api_pool_math pool_of(enum api_level level, int64_t capacity_gib)
{
	struct api_pool_math pool = { .level = level, .capacity_gib = capacity_gib };

	return pool;
}

static struct api_pool_math custom_pool(double mibps, int64_t iops)
{
	struct api_pool_math pool = pool_of(API_LEVEL_FLEX, 10240);

	pool.custom_performance = true;
	pool.total_mibps = mibps;
	pool.total_iops = iops;
	return pool;
}

static struct api_vol_math vol_of(int64_t capacity_gib)
{
	struct api_vol_math vol = { .capacity_gib = capacity_gib };

	return vol;
}

static struct api_vol_math large_vol_of(int64_t capacity_gib)
{
	struct api_vol_math vol = vol_of(capacity_gib);

	vol.large_capacity = true;
	return vol;
}

static struct api_vol_math manual_vol_of(int64_t capacity_gib, double mibps)
{
	struct api_vol_math vol = vol_of(capacity_gib);

	vol.throughput_mibps = mibps;
	return vol;
}

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

/* ---- Pool checks -------------------------------------------------------- */

struct cap_case {
	enum api_level level;
	int64_t min;
	int64_t max;
};

static const struct cap_case pool_caps[] = {
	{ API_LEVEL_STANDARD, 2048, 204800 },
	{ API_LEVEL_PREMIUM, 2048, 10485760 },
	{ API_LEVEL_EXTREME, 2048, 10485760 },
	{ API_LEVEL_FLEX, 1024, 307200 },
};

START_TEST(test_pool_capacity_bounds)
{
	struct api_math_params p = params();
	const struct cap_case *c = &pool_caps[_i];
	struct api_pool_math pool = pool_of(c->level, 0);

	EXPECT_FAIL_HAS(api_math_check_pool_capacity(&p, c->level, c->min - 1, MSG), "capacityGib");
	EXPECT_OK(api_math_check_pool_capacity(&p, c->level, c->min, MSG));
	EXPECT_OK(api_math_check_pool_capacity(&p, c->level, c->max, MSG));
	EXPECT_FAIL_HAS(api_math_check_pool_capacity(&p, c->level, c->max + 1, MSG), "capacityGib");
	EXPECT_FAIL(api_math_check_pool_capacity(&p, c->level, 0, MSG));
	EXPECT_FAIL(api_math_check_pool_capacity(&p, c->level, -1, MSG));

	pool.capacity_gib = c->min - 1;
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));
	pool.capacity_gib = c->min;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool.capacity_gib = c->max;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool.capacity_gib = c->max + 1;
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));
}
END_TEST

START_TEST(test_pool_level_required)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_UNSPECIFIED, 4096);

	EXPECT_FAIL_HAS(api_math_check_pool_capacity(&p, API_LEVEL_UNSPECIFIED, 4096, MSG),
			"serviceLevel");
	EXPECT_FAIL(api_math_check_pool_capacity(&p, API_LEVEL_COUNT, 4096, MSG));
	EXPECT_FAIL(api_math_check_pool_capacity(&p, (enum api_level)-1, 4096, MSG));
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "serviceLevel");
	ck_assert_int_eq(api_math_check_pool(&p, &pool, NULL), AQ_EINVAL);
}
END_TEST

START_TEST(test_pool_qos_and_tiering)
{
	struct api_math_params p = params();
	struct api_pool_math pool;

	pool = pool_of(API_LEVEL_STANDARD, 2048);
	pool.qos = API_QOS_MANUAL;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = pool_of(API_LEVEL_PREMIUM, 2048);
	pool.qos = API_QOS_MANUAL;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = pool_of(API_LEVEL_EXTREME, 2048);
	pool.qos = API_QOS_MANUAL;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = pool_of(API_LEVEL_FLEX, 2048);
	pool.qos = API_QOS_MANUAL;
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "MANUAL");
	pool = pool_of(API_LEVEL_PREMIUM, 2048);
	pool.qos = (enum api_qos)2;
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));

	pool = pool_of(API_LEVEL_STANDARD, 2048);
	pool.allow_tiering = true;
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "allowAutoTiering");
	pool = pool_of(API_LEVEL_PREMIUM, 2048);
	pool.allow_tiering = true;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = pool_of(API_LEVEL_EXTREME, 2048);
	pool.allow_tiering = true;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = pool_of(API_LEVEL_FLEX, 2048);
	pool.allow_tiering = true;
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
}
END_TEST

START_TEST(test_pool_custom_performance)
{
	struct api_math_params p = params();
	struct api_pool_math pool;

	pool = custom_pool(63, 0);
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "totalThroughputMibps");
	pool = custom_pool(63.99, 0);
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(64, 0);
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(5120, 0);
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(5121, 0);
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "totalThroughputMibps");
	pool = custom_pool(0, 0);
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(NAN, 0);
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));

	/* IOPS: at least throughput x 16, at most 160000; 0 derives. */
	pool = custom_pool(128, 2047);
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "totalIops");
	pool = custom_pool(128, 2048);
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(5120, 81919);
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(5120, 81920);
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(128, 160000);
	EXPECT_OK(api_math_check_pool(&p, &pool, MSG));
	pool = custom_pool(128, 160001);
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "160000");
	pool = custom_pool(128, -1);
	EXPECT_FAIL(api_math_check_pool(&p, &pool, MSG));

	/* Custom performance is a FLEX feature. */
	pool = custom_pool(128, 0);
	pool.level = API_LEVEL_PREMIUM;
	pool.capacity_gib = 2048;
	EXPECT_FAIL_HAS(api_math_check_pool(&p, &pool, MSG), "customPerformanceEnabled");
}
END_TEST

/* ---- Pool changes ------------------------------------------------------- */

START_TEST(test_pool_change_qos)
{
	struct api_math_params p = params();
	struct api_pool_math old = pool_of(API_LEVEL_EXTREME, 2048);
	struct api_pool_math new_pool = old;

	/* TF acceptance test: EXTREME 2048 GiB AUTO -> MANUAL, then 3046 GiB. */
	new_pool.qos = API_QOS_MANUAL;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
	old = new_pool;
	new_pool.capacity_gib = 3046;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
	/* One way only. */
	new_pool = old;
	new_pool.qos = API_QOS_AUTO;
	EXPECT_FAIL_HAS(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG), "MANUAL");
	/* AUTO -> MANUAL where MANUAL does not exist. */
	old = pool_of(API_LEVEL_FLEX, 2048);
	new_pool = old;
	new_pool.qos = API_QOS_MANUAL;
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
}
END_TEST

START_TEST(test_pool_change_tiering)
{
	struct api_math_params p = params();
	struct api_pool_math old = pool_of(API_LEVEL_PREMIUM, 2048);
	struct api_pool_math new_pool = old;

	new_pool.allow_tiering = true;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
	old = new_pool;
	new_pool.allow_tiering = false;
	EXPECT_FAIL_HAS(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG),
			"allowAutoTiering");
	/* Turning tiering on where the level has none. */
	old = pool_of(API_LEVEL_STANDARD, 2048);
	new_pool = old;
	new_pool.allow_tiering = true;
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
}
END_TEST

START_TEST(test_pool_change_capacity)
{
	struct api_math_params p = params();
	struct api_pool_math old = pool_of(API_LEVEL_FLEX, 10240);
	struct api_pool_math new_pool = old;

	/* FLEX grows only. */
	new_pool.capacity_gib = 10239;
	EXPECT_FAIL_HAS(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG), "shrink");
	new_pool.capacity_gib = 10240;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
	new_pool.capacity_gib = 10241;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
	new_pool.capacity_gib = 307201;
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));

	/* Other levels shrink, but never below their volumes. */
	old = pool_of(API_LEVEL_STANDARD, 10240);
	new_pool = old;
	new_pool.capacity_gib = 4096;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 4096, 0, MSG));
	EXPECT_FAIL_HAS(api_math_check_pool_change(&p, &old, &new_pool, 4097, 0, MSG), "4097");
	new_pool.capacity_gib = 2047;
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
	/* Nor may a grown pool hold less than its volumes (stale figures). */
	new_pool.capacity_gib = 20480;
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 20481, 0, MSG));
	ck_assert_int_eq(api_math_check_pool_change(&p, &old, &new_pool, 20481, 0, NULL),
			 AQ_EINVAL);
}
END_TEST

START_TEST(test_pool_change_manual_shrink)
{
	struct api_math_params p = params();
	struct api_pool_math old = pool_of(API_LEVEL_PREMIUM, 40960);
	struct api_pool_math new_pool;

	old.qos = API_QOS_MANUAL;
	new_pool = old;
	/* 39 TiB x 64 = 2496 MiB/s. */
	new_pool.capacity_gib = 39936;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 1024, 2496, MSG));
	EXPECT_FAIL_HAS(api_math_check_pool_change(&p, &old, &new_pool, 1024, 2496.01, MSG),
			"2496");
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 1024, 2560, MSG));
	/* Growing with the same sum is fine. */
	new_pool.capacity_gib = 81920;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 1024, 2560, MSG));
	/* AUTO -> MANUAL: the volumes' sum must fit too. */
	old.qos = API_QOS_AUTO;
	new_pool = old;
	new_pool.qos = API_QOS_MANUAL;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 1024, 2560, MSG));
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 1024, 2560.01, MSG));
	/* An AUTO pool has no manual sum to respect. */
	new_pool.qos = API_QOS_AUTO;
	new_pool.capacity_gib = 2048;
	EXPECT_OK(api_math_check_pool_change(&p, &old, &new_pool, 1024, 0, MSG));
}
END_TEST

START_TEST(test_pool_change_level)
{
	struct api_math_params p = params();
	struct api_pool_math old = pool_of(API_LEVEL_PREMIUM, 4096);
	struct api_pool_math new_pool = old;

	new_pool.level = API_LEVEL_EXTREME;
	EXPECT_FAIL_HAS(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG), "serviceLevel");
	new_pool.level = API_LEVEL_UNSPECIFIED;
	EXPECT_FAIL(api_math_check_pool_change(&p, &old, &new_pool, 0, 0, MSG));
}
END_TEST

/* ---- Volume checks ------------------------------------------------------ */

static const struct cap_case vol_caps[] = {
	{ API_LEVEL_STANDARD, 100, 102400 },
	{ API_LEVEL_PREMIUM, 100, 102400 },
	{ API_LEVEL_EXTREME, 100, 102400 },
	{ API_LEVEL_FLEX, 1, 307200 },
};

START_TEST(test_vol_capacity_bounds)
{
	struct api_math_params p = params();
	const struct cap_case *c = &vol_caps[_i];
	/* Each level's largest pool, so only the volume bounds bite. */
	struct api_pool_math pool = pool_of(c->level, pool_caps[_i].max);
	struct api_vol_math vol;

	vol = vol_of(c->min - 1);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "capacityGib");
	vol = vol_of(c->min);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = vol_of(c->max);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = vol_of(c->max + 1);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "capacityGib");
}
END_TEST

START_TEST(test_vol_large_capacity)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 10485760);
	struct api_vol_math vol;

	for (int i = 0; i < 2; i++) {
		pool.level = i == 0 ? API_LEVEL_PREMIUM : API_LEVEL_EXTREME;
		vol = large_vol_of(15359);
		EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "15360");
		vol = large_vol_of(15360);
		EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
		vol = large_vol_of(3145728);
		EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
		vol = large_vol_of(3145729);
		EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "3145728");
	}
	/* No large volumes on STANDARD or FLEX, whatever the size. */
	pool = pool_of(API_LEVEL_STANDARD, 204800);
	vol = large_vol_of(20480);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "largeCapacity");
	pool = pool_of(API_LEVEL_FLEX, 307200);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "largeCapacity");
}
END_TEST

START_TEST(test_vol_fits_pool)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 2048);
	struct api_vol_math vol = vol_of(100);

	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 1948, 0, MSG));
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 1949, 0, MSG), "99");
	vol = vol_of(2049);
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	/* A large volume must fit too. */
	pool.capacity_gib = 20480;
	vol = large_vol_of(15360);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 5120, 0, MSG));
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, 5121, 0, MSG));
	/* No overflow on absurd sums. */
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, INT64_MAX, 0, MSG));
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, INT64_MIN, 0, MSG));
	ck_assert_int_eq(api_math_check_volume(&p, &pool, &vol, INT64_MAX, 0, NULL), AQ_EINVAL);
}
END_TEST

START_TEST(test_vol_tiering)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 2048);
	struct api_vol_math vol = vol_of(100);

	vol.tiering_enabled = true;
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "allowAutoTiering");
	pool.allow_tiering = true;
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	pool = pool_of(API_LEVEL_STANDARD, 2048);
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
}
END_TEST

START_TEST(test_vol_manual_budget)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 40960);
	struct api_vol_math vol;

	pool.qos = API_QOS_MANUAL;
	/* Budget 2560: the sum exactly at it is fine, 0.01 over is not. */
	vol = manual_vol_of(100, 560);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 2000, MSG));
	vol = manual_vol_of(100, 560.01);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 2000, MSG), "560 MiB/s available");
	vol = manual_vol_of(100, 2560);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = manual_vol_of(100, 2560.01);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "2560 MiB/s available");
	/* Fractions that do not add up exactly in binary still fit. */
	vol = manual_vol_of(100, 0.01);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 2559.99, MSG));
	vol = manual_vol_of(100, 0.02);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 2559.99, MSG), "0.01");
	/* A pool already over budget has 0 available. */
	vol = manual_vol_of(100, 1);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 3000, MSG), " 0 MiB/s available");
}
END_TEST

START_TEST(test_vol_manual_range)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_EXTREME, 1048576);
	struct api_vol_math vol;

	pool.qos = API_QOS_MANUAL;
	vol = manual_vol_of(100, 0);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "throughputMibps");
	vol = manual_vol_of(100, -1);
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = manual_vol_of(100, NAN);
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = manual_vol_of(100, 0.01);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = manual_vol_of(100, 4608);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = manual_vol_of(100, 4608.01);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "4608");
	vol = large_vol_of(15360);
	vol.throughput_mibps = 30720;
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol.throughput_mibps = 30720.01;
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "30720");
	/* STANDARD volumes stop at 1600. */
	pool = pool_of(API_LEVEL_STANDARD, 204800);
	pool.qos = API_QOS_MANUAL;
	vol = manual_vol_of(100, 1600);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = manual_vol_of(100, 1600.01);
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
}
END_TEST

START_TEST(test_vol_throughput_outside_manual)
{
	struct api_math_params p = params();
	struct api_pool_math pool = pool_of(API_LEVEL_PREMIUM, 4096);
	struct api_vol_math vol = manual_vol_of(100, 10);

	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "MANUAL");
	pool = pool_of(API_LEVEL_FLEX, 4096);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "MANUAL");
	/* A FLEX pool marked MANUAL (check_pool refuses it) still shares. */
	pool.qos = API_QOS_MANUAL;
	EXPECT_FAIL(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	vol = vol_of(100);
	EXPECT_OK(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG));
	pool = pool_of(API_LEVEL_UNSPECIFIED, 4096);
	EXPECT_FAIL_HAS(api_math_check_volume(&p, &pool, &vol, 0, 0, MSG), "serviceLevel");
}
END_TEST

START_TEST(test_cooling_days)
{
	struct api_math_params p = params();

	EXPECT_FAIL_HAS(api_math_check_cooling_days(&p, 1, MSG), "coolingThresholdDays");
	EXPECT_OK(api_math_check_cooling_days(&p, 2, MSG));
	EXPECT_OK(api_math_check_cooling_days(&p, 31, MSG));
	EXPECT_OK(api_math_check_cooling_days(&p, 183, MSG));
	EXPECT_FAIL_HAS(api_math_check_cooling_days(&p, 184, MSG), "183");
	EXPECT_FAIL(api_math_check_cooling_days(&p, 0, MSG));
	EXPECT_FAIL(api_math_check_cooling_days(&p, -1, MSG));
	EXPECT_FAIL(api_math_check_cooling_days(&p, INT64_MAX, MSG));
	ck_assert_int_eq(api_math_check_cooling_days(&p, 184, NULL), AQ_EINVAL);
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
	tcase_add_loop_test(tc, test_pool_capacity_bounds, 0,
			    (int)(sizeof(pool_caps) / sizeof(pool_caps[0])));
	tcase_add_test(tc, test_pool_level_required);
	tcase_add_test(tc, test_pool_qos_and_tiering);
	tcase_add_test(tc, test_pool_custom_performance);
	tcase_add_test(tc, test_pool_change_qos);
	tcase_add_test(tc, test_pool_change_tiering);
	tcase_add_test(tc, test_pool_change_capacity);
	tcase_add_test(tc, test_pool_change_manual_shrink);
	tcase_add_test(tc, test_pool_change_level);
	tcase_add_loop_test(tc, test_vol_capacity_bounds, 0,
			    (int)(sizeof(vol_caps) / sizeof(vol_caps[0])));
	tcase_add_test(tc, test_vol_large_capacity);
	tcase_add_test(tc, test_vol_fits_pool);
	tcase_add_test(tc, test_vol_tiering);
	tcase_add_test(tc, test_vol_manual_budget);
	tcase_add_test(tc, test_vol_manual_range);
	tcase_add_test(tc, test_vol_throughput_outside_manual);
	tcase_add_test(tc, test_cooling_days);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(math_suite());
}
