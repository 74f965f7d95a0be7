/* Unit tests for api/api_math.c, second half: the checks of pools, pool
 * changes, volumes and cooling days, every boundary just inside and just
 * outside. Defaults, the parser and worked figures are test_api_math.c. */
#include "api/api_math.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/api/api_math_fixture.h"
#include "tests/lib/aqt.h"

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

static Suite *math_check_suite(void)
{
	Suite *s = suite_create("api_math_check");
	TCase *tc = tcase_create("api_math_check");

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
	return aqt_run(math_check_suite());
}
