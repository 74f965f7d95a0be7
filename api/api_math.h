/* api_math: the throughput and capacity math of Aquifer, as pure functions.
 *
 * Every figure comes from one parameter table (struct api_math_params). The
 * defaults are GCNV's published figures (shared/reference/gcnv.md §2); a
 * deployment overrides single entries from its config file with
 * api_math_set("premium.mibps_per_tib", "64"). Nothing here does I/O.
 *
 * Units: capacities in GiB (int64), throughput in MiB/s (double), IOPS int64.
 * 1 TiB = 1024 GiB. "rate" = MiB/s per TiB of capacity.
 *
 * Check functions return AQ_OK or a negative aq_err code and, on failure, write
 * a message saying what was wrong and what is allowed into msg (may be NULL).
 */
#ifndef AQ_API_MATH_H
#define AQ_API_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api_error.h"

/* Values are GCNV's ServiceLevel enum numbers. */
enum api_level {
	API_LEVEL_UNSPECIFIED = 0,
	API_LEVEL_PREMIUM = 1,
	API_LEVEL_EXTREME = 2,
	API_LEVEL_STANDARD = 3,
	API_LEVEL_FLEX = 4,
	API_LEVEL_COUNT
};

enum api_qos { API_QOS_AUTO = 0, API_QOS_MANUAL = 1 };

struct api_level_params {
	double mibps_per_tib;       /* STANDARD 16, PREMIUM 64, EXTREME 128, FLEX 16 (per TiB of pool) */
	double max_vol_mibps;       /* STANDARD 1600, PREMIUM/EXTREME 4608; FLEX: pool cap 1600 */
	double max_large_vol_mibps; /* PREMIUM/EXTREME 30720; others 0 (no large volumes) */
	int64_t pool_min_gib;       /* STANDARD 2048, PREMIUM/EXTREME 2048, FLEX 1024 */
	int64_t pool_max_gib;       /* STANDARD 204800, PREMIUM/EXTREME 10485760 (10 PiB), FLEX 307200 */
	int64_t vol_min_gib;        /* 100, FLEX 1 */
	int64_t vol_max_gib;        /* 102400 (100 TiB), FLEX 307200 */
	bool pool_can_shrink;       /* FLEX: grow only */
	bool manual_qos;            /* STANDARD/PREMIUM/EXTREME yes, FLEX no */
	bool tiering;               /* PREMIUM/EXTREME/FLEX yes, STANDARD no */
	bool large_volumes;         /* PREMIUM/EXTREME yes */
};

struct api_math_params {
	struct api_level_params level[API_LEVEL_COUNT];
	int64_t large_vol_min_gib;      /* 15360 (15 TiB) */
	int64_t large_vol_max_gib;      /* 3145728 (3 PiB) */
	double cold_kibps_per_gib;      /* 2 */
	int64_t flex_iops_per_tib;      /* 1024 (default performance) */
	int64_t flex_max_iops;          /* 60000 (default performance) */
	double custom_min_mibps;        /* 64 */
	double custom_max_mibps;        /* 5120 */
	int64_t custom_iops_per_mibps;  /* 16 */
	int64_t custom_max_iops;        /* 160000 */
	int tiering_min_days;           /* 2 */
	int tiering_max_days;           /* 183 */
	int tiering_default_days;       /* 31 */
};

/* The defaults, immutable. Copy them, then api_math_set() entries. */
extern const struct api_math_params api_math_defaults;

/* Set one parameter by name: "<level>.<field>" with level one of standard,
 * premium, extreme, flex and field one of the api_level_params member names
 * (mibps_per_tib, max_vol_mibps, ...), or a top-level member name
 * (cold_kibps_per_gib, custom_max_iops, ...). AQ_EINVAL for an unknown key or
 * a value that does not parse or is negative. Numbers are decimal (the whole
 * string, no blanks, finite); bool members take "true" or "false". On failure
 * *p is unchanged. */
int api_math_set(struct api_math_params *p, const char *key, const char *value,
		 aq_msg *msg);

/* Name <-> enum: "PREMIUM" <-> API_LEVEL_PREMIUM. Parsing is exact (upper
 * case, GCNV enum names); unknown -> API_LEVEL_UNSPECIFIED. api_level_name()
 * of UNSPECIFIED or an out-of-range value is "SERVICE_LEVEL_UNSPECIFIED". */
const char *api_level_name(enum api_level level);
enum api_level api_level_parse(const char *name);

/* The pool facts the math needs. */
struct api_pool_math {
	enum api_level level;
	int64_t capacity_gib;
	enum api_qos qos;
	bool custom_performance;    /* FLEX only */
	double total_mibps;         /* custom performance: totalThroughputMibps */
	int64_t total_iops;         /* custom performance: totalIops, 0 = derive */
	bool allow_tiering;
};

/* The volume facts the math needs. */
struct api_vol_math {
	int64_t capacity_gib;
	bool large_capacity;
	double throughput_mibps;    /* MANUAL QoS: the volume's own setting */
	bool tiering_enabled;       /* tieringPolicy.tierAction == ENABLED */
	int64_t cold_gib;           /* capacity currently on the cold tier */
};

/* A pool's throughput budget in MiB/s: capacity TiB x rate for
 * STANDARD/PREMIUM/EXTREME (no cap: it bounds the sum of MANUAL volumes);
 * FLEX default: capacity TiB x 16 capped at the FLEX max_vol_mibps (1600);
 * FLEX custom: total_mibps. Premium 40 TiB -> 2560. */
double api_math_pool_mibps(const struct api_math_params *p, const struct api_pool_math *pool);

/* A pool's IOPS budget: FLEX default capacity TiB x 1024 capped at 60000;
 * FLEX custom: total_iops if set else total_mibps x 16, capped at 160000
 * (128 MiB/s -> 2048). Non-FLEX pools: 0 (no IOPS limit). */
int64_t api_math_pool_iops(const struct api_math_params *p, const struct api_pool_math *pool);

/* A volume's throughput limit in MiB/s.
 * AUTO: hot GiB x rate/1024 + cold GiB x cold_kibps_per_gib/1024, capped at
 *   max_vol_mibps (max_large_vol_mibps for large volumes). Without tiering
 *   cold_gib is ignored. Premium 1500 GiB -> 93.75; Extreme 4 TiB -> 512;
 *   Extreme 100 TiB -> 4608.
 * MANUAL: vol->throughput_mibps.
 * FLEX: the pool's budget (the volumes share it). */
double api_math_vol_mibps(const struct api_math_params *p, const struct api_pool_math *pool,
			  const struct api_vol_math *vol);

/* Pool checks. */
/* capacity within [pool_min_gib, pool_max_gib] for the level. */
int api_math_check_pool_capacity(const struct api_math_params *p, enum api_level level,
				 int64_t capacity_gib, aq_msg *msg);
/* A new pool as a whole: level set, capacity, MANUAL only where allowed,
 * custom performance only on FLEX with total_mibps in [64, 5120] and
 * total_iops (0 = derive) in [total_mibps x 16, 160000]; tiering only where
 * the level allows it. total_mibps/total_iops are ignored unless
 * custom_performance is set. */
int api_math_check_pool(const struct api_math_params *p, const struct api_pool_math *pool,
			aq_msg *msg);
/* A change from old to new pool: capacity rules (FLEX grow only), not below
 * vol_capacity_gib (sum of its volumes' capacities), MANUAL: new budget not
 * below manual_sum_mibps (sum of volumes' throughputMibps); qos AUTO->MANUAL
 * allowed, MANUAL->AUTO refused; allow_tiering true->false refused; then
 * api_math_check_pool(new). The service level is immutable: a change of
 * level is refused first. */
int api_math_check_pool_change(const struct api_math_params *p, const struct api_pool_math *old,
			       const struct api_pool_math *new_pool, int64_t vol_capacity_gib,
			       double manual_sum_mibps, aq_msg *msg);

/* Volume checks. */
/* The volume against its pool: capacity within the level's volume bounds
 * (large-capacity: [large_vol_min_gib, large_vol_max_gib], only where the
 * level allows); other_capacity_gib (sum of the pool's other volumes) +
 * capacity <= pool capacity; tiering only if pool->allow_tiering; MANUAL
 * pools: throughput_mibps > 0, <= the volume cap (max_vol_mibps, or
 * max_large_vol_mibps for large volumes), and other_mibps + it <= pool budget,
 * else AQ_EINVAL with a message naming the MiB/s still available;
 * AUTO/FLEX pools: a throughput_mibps != 0 is refused (AQ_EINVAL). A sum
 * within 1e-6 MiB/s of the budget counts as equal (double rounding). */
int api_math_check_volume(const struct api_math_params *p, const struct api_pool_math *pool,
			  const struct api_vol_math *vol, int64_t other_capacity_gib,
			  double other_mibps, aq_msg *msg);
/* coolingThresholdDays within [tiering_min_days, tiering_max_days]. */
int api_math_check_cooling_days(const struct api_math_params *p, int64_t days, aq_msg *msg);

/* Resource IDs: lowercase letters, digits and hyphens, first a letter, last a
 * letter or digit, 1..63 characters (GCNV's ^[a-z]([-a-z0-9]*[a-z0-9])?$).
 * what names the parameter ("volumeId"). */
int api_id_check(const char *id, const char *what, aq_msg *msg);

/* The location ID of a resource name (projects/P/locations/L/...: L, up to
 * the next '/') into out (cap bytes, truncated to fit); "" when name has no
 * "/locations/". */
void api_name_location(const char *name, char *out, size_t cap);

/* One label (Google Cloud's rule): key 1..63 characters, value 0..63, both
 * of lowercase letters, digits, '_', '-' or international characters; the
 * key starts with a lowercase letter or an international character. where
 * names the field in the message ("storagePool.labels"). */
int api_label_check(const char *key, const char *value, const char *where, aq_msg *msg);

#endif
