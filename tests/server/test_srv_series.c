/* Unit tests for server/srv_series.c: deltas from cumulative reports, the
 * baseline rule, counter resets, pool sums, quantiles, the partial slot,
 * window parsing. */
#include "server/srv_series.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_error.h"
#include "tests/lib/aqt.h"

#define VOL "projects/p/locations/l/volumes/v"
#define POOL "projects/p/locations/l/storagePools/sp"
#define T0 1700000000000LL

static json_t *entry(const char *name, long long rb, long long wb, long long lat_bucket10)
{
	json_t *hist = json_array();

	for (int k = 0; k < SRV_SERIES_LAT_BUCKETS; k++)
		json_array_append_new(hist, json_integer(k == 10 ? lat_bucket10 : 0));
	return json_pack("{s:s,s:s,s:f,s:I,s:I,s:I,s:I,s:I,s:o}", "name", name, "pool", POOL, "limitMibps", 100.0,
			 "readBytes", (json_int_t)rb, "writeBytes", (json_int_t)wb, "readOps", (json_int_t)(rb / 1000),
			 "writeOps", (json_int_t)(wb / 1000), "usedBytes", (json_int_t)4096, "latUsHist", hist);
}

static void report(struct srv_series *s, const char *node, json_t *e, int64_t ms)
{
	json_t *fed = json_array();

	json_array_append_new(fed, e);
	srv_series_report(s, node, "l", 1000, fed, ms);
	json_decref(fed);
}

static long long sum(json_t *points, const char *field)
{
	long long n = 0;
	size_t i;
	json_t *p;

	json_array_foreach(points, i, p)
		n += strtoll(json_string_value(json_object_get(p, field)), NULL, 10);
	return n;
}

START_TEST(test_deltas)
{
	struct srv_series *s = NULL;
	json_t *pts;

	ck_assert_int_eq(srv_series_new(T0 - 60000, &s), AQ_OK);
	report(s, "nodes/n1", entry(VOL, 5000, 7000, 3), T0);          /* baseline only */
	report(s, "nodes/n1", entry(VOL, 6000, 9000, 5), T0 + 2000);   /* +1000, +2000 */
	report(s, "nodes/n1", entry(VOL, 6000, 19000, 9), T0 + 12000); /* next slot: +10000 */
	report(s, "nodes/n1", entry(VOL, 100, 19000, 9), T0 + 14000);  /* reset: +100 */
	pts = srv_series_points(s, SRV_SERIES_VOLUME, VOL, 600, T0 + 15000);
	ck_assert_ptr_nonnull(pts);
	ck_assert_int_eq(sum(pts, "readBytes"), 1100);
	ck_assert_int_eq(sum(pts, "writeBytes"), 12000);
	ck_assert_int_eq(json_real_value(json_object_get(json_array_get(pts, 0), "throughputLimitMibps")), 100);
	/* the slot still filling at T0 + 15000 (the second) is marked partial, the finished one not */
	ck_assert_int_eq(json_array_size(pts), 2);
	ck_assert_ptr_null(json_object_get(json_array_get(pts, 0), "partial"));
	ck_assert(json_is_true(json_object_get(json_array_get(pts, 1), "partial")));
	json_decref(pts);
	/* once it ended, no point is partial */
	pts = srv_series_points(s, SRV_SERIES_VOLUME, VOL, 600, T0 + 20000);
	ck_assert_int_eq(json_array_size(pts), 2);
	ck_assert_ptr_null(json_object_get(json_array_get(pts, 1), "partial"));
	/* 2 operations in bucket 10 ([512, 1024) us): p50 within it */
	{
		double p50 = json_real_value(json_object_get(json_array_get(pts, 0), "latencyP50Ms"));

		ck_assert(p50 >= 0.512 && p50 <= 1.024);
	}
	json_decref(pts);
	/* pool = sum of its volumes; node = sum of what it served */
	report(s, "nodes/n1", entry("projects/p/locations/l/volumes/w", 0, 0, 0), T0 + 14500);
	report(s, "nodes/n1", entry("projects/p/locations/l/volumes/w", 0, 500, 0), T0 + 14600);
	pts = srv_series_points(s, SRV_SERIES_POOL, POOL, 600, T0 + 15000);
	ck_assert_int_eq(sum(pts, "writeBytes"), 12500);
	json_decref(pts);
	pts = srv_series_points(s, SRV_SERIES_NODE, "nodes/n1", 600, T0 + 15000);
	ck_assert_int_eq(sum(pts, "writeBytes"), 12500);
	json_decref(pts);
	/* the volume moves: the new node's first report is a baseline */
	report(s, "nodes/n2", entry(VOL, 999999, 999999, 0), T0 + 16000);
	pts = srv_series_points(s, SRV_SERIES_VOLUME, VOL, 600, T0 + 17000);
	ck_assert_int_eq(sum(pts, "readBytes"), 1100);
	json_decref(pts);
	/* a window older than the data holds no points */
	pts = srv_series_points(s, SRV_SERIES_VOLUME, VOL, 10, T0 + 600000);
	ck_assert_int_eq(json_array_size(pts), 0);
	json_decref(pts);
	srv_series_free(s);
	srv_series_free(NULL);
}
END_TEST

START_TEST(test_totals)
{
	struct srv_series *s = NULL;
	json_t *t, *e;
	size_t i;
	int seen = 0;

	ck_assert_int_eq(srv_series_new(T0 - 60000, &s), AQ_OK);
	report(s, "nodes/n1", entry(VOL, 0, 0, 0), T0);
	report(s, "nodes/n1", entry(VOL, 300, 700, 0), T0 + 2000);
	t = srv_series_totals(s, T0 + 3000);
	json_array_foreach(t, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "kind")), "volume") != 0)
			continue;
		seen++;
		ck_assert_int_eq(json_integer_value(json_object_get(e, "writeBytes")), 700);
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "labels"), "pool")), "sp");
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "labels"), "volume")), "v");
	}
	ck_assert_int_eq(seen, 1);
	json_decref(t);
	t = srv_series_totals(s, T0 + 2000 + SRV_SERIES_STALE_MS + 1);
	ck_assert_int_eq(json_array_size(t), 0);
	json_decref(t);
	srv_series_free(s);
}
END_TEST


/* The cold tier: tieredBytes is a gauge (the last report), coldTierRead/
 * WriteByteCount per-slot deltas of cumulative coldReadBytes/coldWriteBytes,
 * pools sum their volumes; totals carry counters since the start. */
static json_t *cold_entry(const char *name, long long cold, long long crb, long long cwb)
{
	json_t *e = entry(name, 0, 0, 0);

	json_object_set_new(e, "coldBytes", json_integer(cold));
	json_object_set_new(e, "coldReadBytes", json_integer(crb));
	json_object_set_new(e, "coldWriteBytes", json_integer(cwb));
	return e;
}

START_TEST(test_cold_tier)
{
	struct srv_series *s = NULL;
	json_t *pts, *t, *e;
	size_t i;
	int seen = 0;

	ck_assert_int_eq(srv_series_new(T0 - 60000, &s), AQ_OK);
	report(s, "nodes/n1", cold_entry(VOL, 0, 100, 1000), T0);                 /* baseline */
	report(s, "nodes/n1", cold_entry(VOL, 4096, 600, 5000), T0 + 2000);       /* +500, +4000 */
	report(s, "nodes/n1", cold_entry(VOL, 8192, 700, 5000), T0 + 12000);      /* next slot: +100 */
	report(s, "nodes/n1", cold_entry("projects/p/locations/l/volumes/w", 1024, 0, 0), T0 + 12500);
	pts = srv_series_points(s, SRV_SERIES_VOLUME, VOL, 600, T0 + 15000);
	ck_assert_int_eq(json_array_size(pts), 2);
	ck_assert_int_eq(sum(pts, "coldTierReadByteCount"), 600);
	ck_assert_int_eq(sum(pts, "coldTierWriteByteCount"), 4000);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(pts, 0), "tieredBytes")), "4096");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(pts, 1), "tieredBytes")), "8192");
	json_decref(pts);
	pts = srv_series_points(s, SRV_SERIES_POOL, POOL, 600, T0 + 15000);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(pts, 1), "tieredBytes")), "9216");
	json_decref(pts);
	t = srv_series_totals(s, T0 + 15000);
	json_array_foreach(t, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "name")), VOL) != 0)
			continue;
		seen++;
		ck_assert_int_eq(json_integer_value(json_object_get(e, "tieredBytes")), 8192);
		ck_assert_int_eq(json_integer_value(json_object_get(e, "coldReadBytes")), 600);
		ck_assert_int_eq(json_integer_value(json_object_get(e, "coldWriteBytes")), 4000);
	}
	ck_assert_int_eq(seen, 1);
	json_decref(t);
	srv_series_free(s);
}
END_TEST

/* A volume first seen whose agent says its counters began after aquiferd
 * started counts from zero (traffic right after a create); counters older
 * than aquiferd's start, or of unknown age, only set the baseline. */
static json_t *aged(json_t *e, long long age_ms)
{
	json_object_set_new(e, "countersAgeMs", json_integer(age_ms));
	return e;
}

START_TEST(test_fresh_counters)
{
	struct srv_series *s = NULL;
	json_t *pts;

	ck_assert_int_eq(srv_series_new(T0, &s), AQ_OK);
	/* created 1.5 s ago, after the start: the first report's bytes count */
	report(s, "nodes/n1", aged(entry(VOL, 3000, 5000, 2), 1500), T0 + 20000);
	report(s, "nodes/n1", aged(entry(VOL, 3500, 5000, 2), 3500), T0 + 22000);
	pts = srv_series_points(s, SRV_SERIES_VOLUME, VOL, 600, T0 + 23000);
	ck_assert_int_eq(sum(pts, "readBytes"), 3500);
	ck_assert_int_eq(sum(pts, "writeBytes"), 5000);
	json_decref(pts);
	/* it moves: n2's export began 1 s ago, so its first report counts too */
	report(s, "nodes/n2", aged(entry(VOL, 100, 0, 0), 1000), T0 + 24000);
	pts = srv_series_points(s, SRV_SERIES_VOLUME, VOL, 600, T0 + 25000);
	ck_assert_int_eq(sum(pts, "readBytes"), 3600);
	json_decref(pts);
	/* counters that began before aquiferd started: baseline only */
	report(s, "nodes/n1", aged(entry("projects/p/locations/l/volumes/old", 7000, 0, 0), 30000), T0 + 26000);
	pts = srv_series_points(s, SRV_SERIES_VOLUME, "projects/p/locations/l/volumes/old", 600, T0 + 27000);
	ck_assert_int_eq(sum(pts, "readBytes"), 0);
	json_decref(pts);
	/* no age given (an older agent): baseline only */
	report(s, "nodes/n1", entry("projects/p/locations/l/volumes/quiet", 9000, 0, 0), T0 + 26000);
	pts = srv_series_points(s, SRV_SERIES_VOLUME, "projects/p/locations/l/volumes/quiet", 600, T0 + 27000);
	ck_assert_int_eq(sum(pts, "readBytes"), 0);
	json_decref(pts);
	srv_series_free(s);
}
END_TEST

START_TEST(test_window)
{
	int w = 0;

	ck_assert_int_eq(srv_series_window("15m", &w), AQ_OK);
	ck_assert_int_eq(w, 900);
	ck_assert_int_eq(srv_series_window("1h", &w), AQ_OK);
	ck_assert_int_eq(w, 3600);
	ck_assert_int_eq(srv_series_window("90", &w), AQ_OK);
	ck_assert_int_eq(w, 90);
	ck_assert_int_eq(srv_series_window("30s", &w), AQ_OK);
	ck_assert_int_eq(w, 30);
	ck_assert_int_eq(srv_series_window("2h", &w), AQ_EINVAL);
	ck_assert_int_eq(srv_series_window("3601", &w), AQ_EINVAL);
	ck_assert_int_eq(srv_series_window("0m", &w), AQ_EINVAL);
	ck_assert_int_eq(srv_series_window("-5m", &w), AQ_EINVAL);
	ck_assert_int_eq(srv_series_window("m", &w), AQ_EINVAL);
	ck_assert_int_eq(srv_series_window("5d", &w), AQ_EINVAL);
	ck_assert_int_eq(srv_series_window("", &w), AQ_EINVAL);
	ck_assert_int_eq(srv_series_window(NULL, &w), AQ_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_series");
	TCase *tc = tcase_create("srv_series");

	tcase_add_test(tc, test_deltas);
	tcase_add_test(tc, test_fresh_counters);
	tcase_add_test(tc, test_totals);
	tcase_add_test(tc, test_window);
	tcase_add_test(tc, test_cold_tier);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
