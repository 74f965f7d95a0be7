/* api_math_fixture: what the two api_math suites share (test_api_math.c:
 * defaults, the parameter parser and the worked figures;
 * test_api_math_check.c: the pool, pool-change and volume checks): the
 * EXPECT_* macros and builders of pool and volume figures. */
#ifndef AQ_TESTS_API_MATH_FIXTURE_H
#define AQ_TESTS_API_MATH_FIXTURE_H

#include <check.h>
#include <string.h>

#include "api/api_math.h"

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

static inline struct api_math_params params(void)
{
	return api_math_defaults;
}

static inline struct api_pool_math pool_of(enum api_level level, int64_t capacity_gib)
{
	struct api_pool_math pool = { .level = level, .capacity_gib = capacity_gib };

	return pool;
}

static inline struct api_pool_math custom_pool(double mibps, int64_t iops)
{
	struct api_pool_math pool = pool_of(API_LEVEL_FLEX, 10240);

	pool.custom_performance = true;
	pool.total_mibps = mibps;
	pool.total_iops = iops;
	return pool;
}

static inline struct api_vol_math vol_of(int64_t capacity_gib)
{
	struct api_vol_math vol = { .capacity_gib = capacity_gib };

	return vol;
}

static inline struct api_vol_math large_vol_of(int64_t capacity_gib)
{
	struct api_vol_math vol = vol_of(capacity_gib);

	vol.large_capacity = true;
	return vol;
}

static inline struct api_vol_math manual_vol_of(int64_t capacity_gib, double mibps)
{
	struct api_vol_math vol = vol_of(capacity_gib);

	vol.throughput_mibps = mibps;
	return vol;
}

#endif
