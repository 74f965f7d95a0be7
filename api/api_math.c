/* api_math: Aquifer's throughput and capacity math (see api_math.h).
 *
 * Every figure is read from a struct api_math_params, never from a literal,
 * so a deployment can change one rate in its config file and every check and
 * limit follows. The defaults below are GCNV's published figures
 * (shared/reference/gcnv.md §2). These are pure functions: no I/O, no state.
 */
#include "api/api_math.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Sums of doubles (volume throughputs) pick up rounding error; a sum within
 * this much of the budget counts as equal to it. Far below the 0.01 MiB/s a
 * client can express in a request. */
#define MATH_MIBPS_EPSILON 1e-6

const struct api_math_params api_math_defaults = {
	.level = {
		[API_LEVEL_STANDARD] = {
			.mibps_per_tib = 16,
			.max_vol_mibps = 1600,
			.max_large_vol_mibps = 0,
			.pool_min_gib = 2048,
			.pool_max_gib = 204800,
			.vol_min_gib = 100,
			.vol_max_gib = 102400,
			.pool_can_shrink = true,
			.manual_qos = true,
			.tiering = false,
			.large_volumes = false,
		},
		[API_LEVEL_PREMIUM] = {
			.mibps_per_tib = 64,
			.max_vol_mibps = 4608,
			.max_large_vol_mibps = 30720,
			.pool_min_gib = 2048,
			.pool_max_gib = 10485760,
			.vol_min_gib = 100,
			.vol_max_gib = 102400,
			.pool_can_shrink = true,
			.manual_qos = true,
			.tiering = true,
			.large_volumes = true,
		},
		[API_LEVEL_EXTREME] = {
			.mibps_per_tib = 128,
			.max_vol_mibps = 4608,
			.max_large_vol_mibps = 30720,
			.pool_min_gib = 2048,
			.pool_max_gib = 10485760,
			.vol_min_gib = 100,
			.vol_max_gib = 102400,
			.pool_can_shrink = true,
			.manual_qos = true,
			.tiering = true,
			.large_volumes = true,
		},
		[API_LEVEL_FLEX] = {
			.mibps_per_tib = 16,
			.max_vol_mibps = 1600,
			.max_large_vol_mibps = 0,
			.pool_min_gib = 1024,
			.pool_max_gib = 307200,
			.vol_min_gib = 1,
			.vol_max_gib = 307200,
			.pool_can_shrink = false,
			.manual_qos = false,
			.tiering = true,
			.large_volumes = false,
		},
	},
	.large_vol_min_gib = 15360,
	.large_vol_max_gib = 3145728,
	.cold_kibps_per_gib = 2,
	.flex_iops_per_tib = 1024,
	.flex_max_iops = 60000,
	.custom_min_mibps = 64,
	.custom_max_mibps = 5120,
	.custom_iops_per_mibps = 16,
	.custom_max_iops = 160000,
	.tiering_min_days = 2,
	.tiering_max_days = 183,
	.tiering_default_days = 31,
};

/* ---- Parameter names ---------------------------------------------------- */

enum math_type { MATH_DOUBLE, MATH_INT64, MATH_INT, MATH_BOOL };

/* MATH_SCOPE_LEVEL fields live in struct api_level_params and are named
 * "<level>.<name>"; MATH_SCOPE_TOP fields live in struct api_math_params. */
enum math_scope { MATH_SCOPE_LEVEL, MATH_SCOPE_TOP };

struct math_field {
	const char *name;
	size_t offset;
	enum math_type type;
	enum math_scope scope;
};

#define MATH_LEVEL_FIELD(name, type) \
	{ #name, offsetof(struct api_level_params, name), type, MATH_SCOPE_LEVEL }
#define MATH_TOP_FIELD(name, type) \
	{ #name, offsetof(struct api_math_params, name), type, MATH_SCOPE_TOP }

static const struct math_field math_fields[] = {
	MATH_LEVEL_FIELD(mibps_per_tib, MATH_DOUBLE),
	MATH_LEVEL_FIELD(max_vol_mibps, MATH_DOUBLE),
	MATH_LEVEL_FIELD(max_large_vol_mibps, MATH_DOUBLE),
	MATH_LEVEL_FIELD(pool_min_gib, MATH_INT64),
	MATH_LEVEL_FIELD(pool_max_gib, MATH_INT64),
	MATH_LEVEL_FIELD(vol_min_gib, MATH_INT64),
	MATH_LEVEL_FIELD(vol_max_gib, MATH_INT64),
	MATH_LEVEL_FIELD(pool_can_shrink, MATH_BOOL),
	MATH_LEVEL_FIELD(manual_qos, MATH_BOOL),
	MATH_LEVEL_FIELD(tiering, MATH_BOOL),
	MATH_LEVEL_FIELD(large_volumes, MATH_BOOL),
	MATH_TOP_FIELD(large_vol_min_gib, MATH_INT64),
	MATH_TOP_FIELD(large_vol_max_gib, MATH_INT64),
	MATH_TOP_FIELD(cold_kibps_per_gib, MATH_DOUBLE),
	MATH_TOP_FIELD(flex_iops_per_tib, MATH_INT64),
	MATH_TOP_FIELD(flex_max_iops, MATH_INT64),
	MATH_TOP_FIELD(custom_min_mibps, MATH_DOUBLE),
	MATH_TOP_FIELD(custom_max_mibps, MATH_DOUBLE),
	MATH_TOP_FIELD(custom_iops_per_mibps, MATH_INT64),
	MATH_TOP_FIELD(custom_max_iops, MATH_INT64),
	MATH_TOP_FIELD(tiering_min_days, MATH_INT),
	MATH_TOP_FIELD(tiering_max_days, MATH_INT),
	MATH_TOP_FIELD(tiering_default_days, MATH_INT),
};

/* Config-file level names (lower case) and GCNV enum names, by enum value. */
static const char *const math_level_keys[API_LEVEL_COUNT] = {
	[API_LEVEL_PREMIUM] = "premium",
	[API_LEVEL_EXTREME] = "extreme",
	[API_LEVEL_STANDARD] = "standard",
	[API_LEVEL_FLEX] = "flex",
};

static const char *const math_level_names[API_LEVEL_COUNT] = {
	[API_LEVEL_UNSPECIFIED] = "SERVICE_LEVEL_UNSPECIFIED",
	[API_LEVEL_PREMIUM] = "PREMIUM",
	[API_LEVEL_EXTREME] = "EXTREME",
	[API_LEVEL_STANDARD] = "STANDARD",
	[API_LEVEL_FLEX] = "FLEX",
};

static const struct math_field *math_field_find(enum math_scope scope, const char *name,
						size_t len)
{
	for (size_t i = 0; i < sizeof(math_fields) / sizeof(math_fields[0]); i++) {
		const struct math_field *f = &math_fields[i];

		if (f->scope == scope && strlen(f->name) == len && memcmp(f->name, name, len) == 0)
			return f;
	}
	return NULL;
}

static enum api_level math_level_key_find(const char *name, size_t len)
{
	for (int l = API_LEVEL_UNSPECIFIED + 1; l < API_LEVEL_COUNT; l++)
		if (strlen(math_level_keys[l]) == len && memcmp(math_level_keys[l], name, len) == 0)
			return (enum api_level)l;
	return API_LEVEL_UNSPECIFIED;
}

/* Parse value as a finite, non-negative number of the field's type into the
 * storage at dst; dst is written only on success. */
static int math_parse_value(const struct math_field *f, const char *key, const char *value,
			    void *dst, aq_msg *msg)
{
	int rc = AQ_OK;
	char *end = NULL;

	if (value[0] == '\0' || isspace((unsigned char)value[0])) {
		rc = aq_fail(msg, AQ_EINVAL, "%s: value \"%s\" is not a number", key, value);
		goto out;
	}
	switch (f->type) {
	case MATH_DOUBLE: {
		double d;

		errno = 0;
		d = strtod(value, &end);
		if (*end != '\0' || errno == ERANGE || !isfinite(d)) {
			rc = aq_fail(msg, AQ_EINVAL, "%s: value \"%s\" is not a finite number",
				     key, value);
			goto out;
		}
		if (d < 0) {
			rc = aq_fail(msg, AQ_EINVAL, "%s: value %s is negative; it must be 0 or more",
				     key, value);
			goto out;
		}
		*(double *)dst = d;
		break;
	}
	case MATH_INT64:
	case MATH_INT: {
		long long n;

		errno = 0;
		n = strtoll(value, &end, 10);
		if (*end != '\0' || errno == ERANGE ||
		    (f->type == MATH_INT && n > INT_MAX)) {
			rc = aq_fail(msg, AQ_EINVAL, "%s: value \"%s\" is not an integer in range",
				     key, value);
			goto out;
		}
		if (n < 0) {
			rc = aq_fail(msg, AQ_EINVAL, "%s: value %s is negative; it must be 0 or more",
				     key, value);
			goto out;
		}
		if (f->type == MATH_INT)
			*(int *)dst = (int)n;
		else
			*(int64_t *)dst = (int64_t)n;
		break;
	}
	case MATH_BOOL:
		if (strcmp(value, "true") == 0) {
			*(bool *)dst = true;
		} else if (strcmp(value, "false") == 0) {
			*(bool *)dst = false;
		} else {
			rc = aq_fail(msg, AQ_EINVAL, "%s: value \"%s\" must be true or false",
				     key, value);
			goto out;
		}
		break;
	}
out:
	return rc;
}

int api_math_set(struct api_math_params *p, const char *key, const char *value, aq_msg *msg)
{
	int rc = AQ_OK;
	const struct math_field *f = NULL;
	const char *dot;
	char *base;

	if (!p || !key || !value) {
		rc = aq_fail(msg, AQ_EINVAL, "parameter key and value are required");
		goto out;
	}
	dot = strchr(key, '.');
	if (dot) {
		enum api_level level = math_level_key_find(key, (size_t)(dot - key));

		if (level == API_LEVEL_UNSPECIFIED) {
			rc = aq_fail(msg, AQ_EINVAL,
				     "unknown parameter \"%s\": the level must be one of "
				     "standard, premium, extreme, flex", key);
			goto out;
		}
		f = math_field_find(MATH_SCOPE_LEVEL, dot + 1, strlen(dot + 1));
		base = (char *)&p->level[level];
	} else {
		f = math_field_find(MATH_SCOPE_TOP, key, strlen(key));
		base = (char *)p;
	}
	if (!f) {
		rc = aq_fail(msg, AQ_EINVAL, "unknown parameter \"%s\"", key);
		goto out;
	}
	rc = math_parse_value(f, key, value, base + f->offset, msg);
out:
	return rc;
}

const char *api_level_name(enum api_level level)
{
	if (level < API_LEVEL_UNSPECIFIED || level >= API_LEVEL_COUNT)
		level = API_LEVEL_UNSPECIFIED;
	return math_level_names[level];
}

enum api_level api_level_parse(const char *name)
{
	if (!name)
		return API_LEVEL_UNSPECIFIED;
	for (int l = API_LEVEL_UNSPECIFIED + 1; l < API_LEVEL_COUNT; l++)
		if (strcmp(math_level_names[l], name) == 0)
			return (enum api_level)l;
	return API_LEVEL_UNSPECIFIED;
}

/* ---- Limits ------------------------------------------------------------- */

/* The level's row, or NULL for UNSPECIFIED and values outside the enum. */
static const struct api_level_params *math_level(const struct api_math_params *p,
						 enum api_level level)
{
	if (level <= API_LEVEL_UNSPECIFIED || level >= API_LEVEL_COUNT)
		return NULL;
	return &p->level[level];
}

static double math_tib(int64_t gib)
{
	return gib > 0 ? (double)gib / 1024.0 : 0.0;
}

double api_math_pool_mibps(const struct api_math_params *p, const struct api_pool_math *pool)
{
	const struct api_level_params *lp = math_level(p, pool->level);
	double mibps;

	if (!lp)
		return 0;
	if (pool->level == API_LEVEL_FLEX && pool->custom_performance)
		return pool->total_mibps;
	mibps = math_tib(pool->capacity_gib) * lp->mibps_per_tib;
	if (pool->level == API_LEVEL_FLEX && mibps > lp->max_vol_mibps)
		mibps = lp->max_vol_mibps;
	return mibps;
}

int64_t api_math_pool_iops(const struct api_math_params *p, const struct api_pool_math *pool)
{
	double iops;
	double cap;

	if (pool->level != API_LEVEL_FLEX)
		return 0;
	/* In double so that no client-sent figure can overflow an int64. */
	if (pool->custom_performance) {
		cap = (double)p->custom_max_iops;
		iops = pool->total_iops > 0 ? (double)pool->total_iops
					    : pool->total_mibps * (double)p->custom_iops_per_mibps;
	} else {
		cap = (double)p->flex_max_iops;
		iops = math_tib(pool->capacity_gib) * (double)p->flex_iops_per_tib;
	}
	if (!(iops > 0))
		return 0;
	if (iops > cap)
		iops = cap;
	return (int64_t)iops;
}

double api_math_vol_mibps(const struct api_math_params *p, const struct api_pool_math *pool,
			  const struct api_vol_math *vol)
{
	const struct api_level_params *lp = math_level(p, pool->level);
	int64_t cold = 0;
	double mibps;
	double cap;

	if (!lp)
		return 0;
	if (pool->level == API_LEVEL_FLEX)
		return api_math_pool_mibps(p, pool);
	if (pool->qos == API_QOS_MANUAL)
		return vol->throughput_mibps;
	if (vol->capacity_gib <= 0)
		return 0;
	if (vol->tiering_enabled && vol->cold_gib > 0)
		cold = vol->cold_gib < vol->capacity_gib ? vol->cold_gib : vol->capacity_gib;
	mibps = (double)(vol->capacity_gib - cold) * lp->mibps_per_tib / 1024.0 +
		(double)cold * p->cold_kibps_per_gib / 1024.0;
	cap = vol->large_capacity && lp->large_volumes ? lp->max_large_vol_mibps : lp->max_vol_mibps;
	return mibps > cap ? cap : mibps;
}

/* ---- Pool checks -------------------------------------------------------- */

int api_math_check_pool_capacity(const struct api_math_params *p, enum api_level level,
				 int64_t capacity_gib, aq_msg *msg)
{
	const struct api_level_params *lp = math_level(p, level);

	if (!lp)
		return aq_fail(msg, AQ_EINVAL,
			       "serviceLevel must be one of STANDARD, PREMIUM, EXTREME, FLEX");
	if (capacity_gib < lp->pool_min_gib || capacity_gib > lp->pool_max_gib)
		return aq_fail(msg, AQ_EINVAL,
			       "capacityGib %" PRId64 " is out of range: a %s pool holds %" PRId64
			       " to %" PRId64 " GiB",
			       capacity_gib, api_level_name(level), lp->pool_min_gib,
			       lp->pool_max_gib);
	return AQ_OK;
}

int api_math_check_pool(const struct api_math_params *p, const struct api_pool_math *pool,
			aq_msg *msg)
{
	const struct api_level_params *lp = math_level(p, pool->level);
	const char *name = api_level_name(pool->level);
	int rc;

	if ((rc = api_math_check_pool_capacity(p, pool->level, pool->capacity_gib, msg)) != AQ_OK)
		return rc;
	if (pool->qos != API_QOS_AUTO && pool->qos != API_QOS_MANUAL)
		return aq_fail(msg, AQ_EINVAL, "qosType must be AUTO or MANUAL");
	if (pool->qos == API_QOS_MANUAL && !lp->manual_qos)
		return aq_fail(msg, AQ_EINVAL,
			       "qosType MANUAL is not available on %s pools; use AUTO", name);
	if (pool->allow_tiering && !lp->tiering)
		return aq_fail(msg, AQ_EINVAL,
			       "allowAutoTiering is not available on %s pools", name);
	if (!pool->custom_performance)
		return AQ_OK;
	if (pool->level != API_LEVEL_FLEX)
		return aq_fail(msg, AQ_EINVAL,
			       "customPerformanceEnabled is only available on FLEX pools, not %s",
			       name);
	/* Written as !(in range) so that NaN is refused too. */
	if (!(pool->total_mibps >= p->custom_min_mibps && pool->total_mibps <= p->custom_max_mibps))
		return aq_fail(msg, AQ_EINVAL,
			       "totalThroughputMibps %.10g is out of range: %.10g to %.10g MiB/s",
			       pool->total_mibps, p->custom_min_mibps, p->custom_max_mibps);
	if (pool->total_iops != 0) {
		double min_iops = pool->total_mibps * (double)p->custom_iops_per_mibps;

		if ((double)pool->total_iops < min_iops || pool->total_iops > p->custom_max_iops)
			return aq_fail(msg, AQ_EINVAL,
				       "totalIops %" PRId64 " is out of range: with %.10g MiB/s it "
				       "must be %.10g to %" PRId64 " (or 0 to derive it)",
				       pool->total_iops, pool->total_mibps, min_iops,
				       p->custom_max_iops);
	}
	return AQ_OK;
}

int api_math_check_pool_change(const struct api_math_params *p, const struct api_pool_math *old,
			       const struct api_pool_math *new_pool, int64_t vol_capacity_gib,
			       double manual_sum_mibps, aq_msg *msg)
{
	const struct api_level_params *lp;
	int rc;

	if (new_pool->level != old->level)
		return aq_fail(msg, AQ_EINVAL, "serviceLevel cannot be changed (%s to %s)",
			       api_level_name(old->level), api_level_name(new_pool->level));
	if ((rc = api_math_check_pool_capacity(p, new_pool->level, new_pool->capacity_gib, msg)) !=
	    AQ_OK)
		return rc;
	lp = math_level(p, new_pool->level);
	if (new_pool->capacity_gib < old->capacity_gib && !lp->pool_can_shrink)
		return aq_fail(msg, AQ_EINVAL,
			       "capacityGib cannot shrink on %s pools (%" PRId64 " to %" PRId64
			       " GiB); it can only grow",
			       api_level_name(new_pool->level), old->capacity_gib,
			       new_pool->capacity_gib);
	if (new_pool->capacity_gib < vol_capacity_gib)
		return aq_fail(msg, AQ_EINVAL,
			       "capacityGib %" PRId64 " is below the %" PRId64
			       " GiB allocated to the pool's volumes",
			       new_pool->capacity_gib, vol_capacity_gib);
	if (old->qos == API_QOS_MANUAL && new_pool->qos != API_QOS_MANUAL)
		return aq_fail(msg, AQ_EINVAL, "qosType cannot change from MANUAL back to AUTO");
	if (old->allow_tiering && !new_pool->allow_tiering)
		return aq_fail(msg, AQ_EINVAL,
			       "allowAutoTiering cannot be turned off once it is on");
	if (new_pool->qos == API_QOS_MANUAL) {
		double budget = api_math_pool_mibps(p, new_pool);

		if (manual_sum_mibps > budget + MATH_MIBPS_EPSILON)
			return aq_fail(msg, AQ_EINVAL,
				       "the pool's throughput would be %.10g MiB/s, below the %.10g MiB/s "
				       "its volumes have; lower their throughputMibps first",
				       budget, manual_sum_mibps);
	}
	return api_math_check_pool(p, new_pool, msg);
}

/* ---- Volume checks ------------------------------------------------------ */

static int math_check_vol_capacity(const struct api_math_params *p,
				   const struct api_pool_math *pool,
				   const struct api_level_params *lp, const struct api_vol_math *vol,
				   int64_t other_capacity_gib, aq_msg *msg)
{
	int64_t min = lp->vol_min_gib;
	int64_t max = lp->vol_max_gib;
	int64_t pool_gib = pool->capacity_gib > 0 ? pool->capacity_gib : 0;
	int64_t free_gib;

	if (vol->large_capacity) {
		if (!lp->large_volumes)
			return aq_fail(msg, AQ_EINVAL,
				       "largeCapacity volumes are not available in %s pools",
				       api_level_name(pool->level));
		min = p->large_vol_min_gib;
		max = p->large_vol_max_gib;
	}
	if (vol->capacity_gib < min || vol->capacity_gib > max)
		return aq_fail(msg, AQ_EINVAL,
			       "capacityGib %" PRId64 " is out of range: a %s%s volume holds %" PRId64
			       " to %" PRId64 " GiB",
			       vol->capacity_gib, api_level_name(pool->level),
			       vol->large_capacity ? " large-capacity" : "", min, max);
	/* By subtraction of non-negative figures: other_capacity_gib + capacity
	 * could overflow. */
	free_gib = pool_gib - (other_capacity_gib > 0 ? other_capacity_gib : 0);
	if (vol->capacity_gib > free_gib)
		return aq_fail(msg, AQ_EINVAL,
			       "capacityGib %" PRId64 " does not fit in the pool: %" PRId64
			       " of its %" PRId64 " GiB are free",
			       vol->capacity_gib, free_gib > 0 ? free_gib : 0, pool_gib);
	return AQ_OK;
}

int api_math_check_volume(const struct api_math_params *p, const struct api_pool_math *pool,
			  const struct api_vol_math *vol, int64_t other_capacity_gib,
			  double other_mibps, aq_msg *msg)
{
	const struct api_level_params *lp = math_level(p, pool->level);
	double budget;
	double available;
	double cap;
	int rc;

	if (!lp)
		return aq_fail(msg, AQ_EINVAL,
			       "the pool's serviceLevel must be one of STANDARD, PREMIUM, EXTREME, FLEX");
	if ((rc = math_check_vol_capacity(p, pool, lp, vol, other_capacity_gib, msg)) != AQ_OK)
		return rc;
	if (vol->tiering_enabled && !pool->allow_tiering)
		return aq_fail(msg, AQ_EINVAL,
			       "tieringPolicy ENABLED needs a pool with allowAutoTiering");
	if (pool->level == API_LEVEL_FLEX || pool->qos != API_QOS_MANUAL) {
		if (vol->throughput_mibps != 0)
			return aq_fail(msg, AQ_EINVAL,
				       "throughputMibps can only be set in MANUAL QoS pools; "
				       "this pool's volumes follow its %s",
				       pool->level == API_LEVEL_FLEX ? "shared throughput"
								     : "AUTO QoS");
		return AQ_OK;
	}
	cap = vol->large_capacity ? lp->max_large_vol_mibps : lp->max_vol_mibps;
	if (!(vol->throughput_mibps > 0 && vol->throughput_mibps <= cap))
		return aq_fail(msg, AQ_EINVAL,
			       "throughputMibps %.10g is out of range: a %s%s volume takes more than 0"
			       " and at most %.10g MiB/s",
			       vol->throughput_mibps, api_level_name(pool->level),
			       vol->large_capacity ? " large-capacity" : "", cap);
	budget = api_math_pool_mibps(p, pool);
	available = budget - other_mibps;
	if (available < 0)
		available = 0;
	if (other_mibps + vol->throughput_mibps > budget + MATH_MIBPS_EPSILON)
		return aq_fail(msg, AQ_EINVAL,
			       "throughputMibps %.10g exceeds the pool's available throughput: "
			       "%.10g MiB/s available of %.10g MiB/s",
			       vol->throughput_mibps, available, budget);
	return AQ_OK;
}

int api_math_check_cooling_days(const struct api_math_params *p, int64_t days, aq_msg *msg)
{
	if (days < p->tiering_min_days || days > p->tiering_max_days)
		return aq_fail(msg, AQ_EINVAL,
			       "coolingThresholdDays %" PRId64 " is out of range: %d to %d days",
			       days, p->tiering_min_days, p->tiering_max_days);
	return AQ_OK;
}
