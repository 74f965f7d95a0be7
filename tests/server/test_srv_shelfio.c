/* Unit tests for server/srv_shelfio.c: which shelf resource a node's
 * reports count on, the ioStats of two report intervals (sums, MiB/s, mean
 * latency), a restarted agent's counters, stale nodes, malformed reports
 * ignored whole, and the /metrics lines. */
#include "server/srv_shelfio.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "tests/lib/aqt.h"
#include "util/ut_buf.h"

#define NQN "nqn.2026-12.io.aquifer:s1"

static json_t *shelves(void)
{
	return json_pack("[{s:s,s:s,s:s},{s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s,s:s},{s:s,s:s,s:s}]",
			 "name", "shelves/east-b", "location", "east", "backend", "directory",
			 "name", "shelves/east-a", "location", "east", /* backend absent: directory */
			 "name", "shelves/west-a", "location", "west", "backend", "directory",
			 "name", "shelves/nv", "location", "east", "backend", "nvmeof", "nqn", NQN,
			 "name", "shelves/nv-west", "location", "west", "backend", "nvmeof");
}

static json_t *report(const char *backend, const char *nqn, long long rb, long long ro, long long rto, long long rus,
		      long long wb, long long wo, long long wus)
{
	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "backend", backend, "transport", "", "nqn", nqn,
			 "readBytes", rb, "readOps", ro, "readTimedOps", rto, "readUs", rus, "writeBytes", wb,
			 "writeOps", wo, "writeUs", wus);
}

static const json_t *find(const json_t *all, const char *name)
{
	const json_t *s;
	size_t i;

	json_array_foreach(all, i, s)
		if (strcmp(json_string_value(json_object_get(s, "name")), name) == 0)
			return s;
	return NULL;
}

START_TEST(test_match)
{
	json_t *all = shelves();

	ck_assert_str_eq(srv_shelfio_match(all, "east", "directory", ""), "shelves/east-a");
	ck_assert_str_eq(srv_shelfio_match(all, "west", "directory", ""), "shelves/west-a");
	ck_assert_str_eq(srv_shelfio_match(all, "east", "nvmeof", NQN), "shelves/nv");
	ck_assert_ptr_null(srv_shelfio_match(all, "east", "nvmeof", "nqn.2026-12.other:x"));
	ck_assert_ptr_null(srv_shelfio_match(all, "west", "nvmeof", NQN)); /* the NQN of another location */
	ck_assert_ptr_null(srv_shelfio_match(all, "north", "directory", ""));
	json_decref(all);
}
END_TEST

START_TEST(test_stats)
{
	struct srv_shelfio *s = NULL;
	json_t *all = shelves(), *r, *io;
	int64_t t = 1800000000000LL;

	ck_assert_int_eq(srv_shelfio_new(&s), AQ_OK);
	ck_assert_ptr_null(srv_shelfio_stats(s, all, find(all, "shelves/east-a"), t)); /* nobody reports */
	/* n1 and n2 on east's directory shelf; n3 on nv */
	r = report("directory", "", 0, 0, 0, 0, 0, 0, 0);
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	srv_shelfio_report(s, "nodes/n2", "east", r, t);
	json_decref(r);
	r = report("nvmeof", NQN, 100, 1, 1, 10, 0, 0, 0);
	srv_shelfio_report(s, "nodes/n3", "east", r, t);
	json_decref(r);
	/* 2 s later: n1 read 4 MiB in 4 timed reads of 1 ms, wrote 2 MiB in 2 writes of 3 ms; n2 read 2 MiB untimed */
	r = report("directory", "", 4 << 20, 4, 4, 4000, 2 << 20, 2, 6000);
	srv_shelfio_report(s, "nodes/n1", "east", r, t + 2000);
	json_decref(r);
	r = report("directory", "", 2 << 20, 2, 0, 0, 0, 0, 0);
	srv_shelfio_report(s, "nodes/n2", "east", r, t + 2000);
	json_decref(r);

	io = srv_shelfio_stats(s, all, find(all, "shelves/east-a"), t + 2500);
	ck_assert_ptr_nonnull(io);
	ck_assert_int_eq(api_json_int64(io, "readBytes", -1), 6 << 20);
	ck_assert_int_eq(api_json_int64(io, "readOps", -1), 6);
	ck_assert_int_eq(api_json_int64(io, "writeBytes", -1), 2 << 20);
	ck_assert_int_eq(api_json_int64(io, "writeOps", -1), 2);
	ck_assert_double_eq_tol(api_json_double(io, "readMibps", -1), 3.0, 1e-9);  /* 6 MiB in 2 s */
	ck_assert_double_eq_tol(api_json_double(io, "writeMibps", -1), 1.0, 1e-9);
	ck_assert_double_eq_tol(api_json_double(io, "readLatencyMs", -1), 1.0, 1e-9); /* untimed reads left out */
	ck_assert_double_eq_tol(api_json_double(io, "writeLatencyMs", -1), 3.0, 1e-9);
	ck_assert_int_eq(json_array_size(json_object_get(io, "nodes")), 2);
	json_decref(io);
	/* the other directory shelf of east and west's get nothing; nv gets n3 */
	ck_assert_ptr_null(srv_shelfio_stats(s, all, find(all, "shelves/east-b"), t + 2500));
	ck_assert_ptr_null(srv_shelfio_stats(s, all, find(all, "shelves/west-a"), t + 2500));
	io = srv_shelfio_stats(s, all, find(all, "shelves/nv"), t + 2500);
	ck_assert_ptr_nonnull(io);
	ck_assert_int_eq(api_json_int64(io, "readBytes", -1), 100);
	ck_assert_ptr_null(json_object_get(io, "readLatencyMs")); /* one report: no interval */
	json_decref(io);

	/* n1's agent restarted: counters below the last start a new series */
	r = report("directory", "", 1 << 20, 1, 1, 500, 0, 0, 0);
	srv_shelfio_report(s, "nodes/n1", "east", r, t + 4000);
	json_decref(r);
	io = srv_shelfio_stats(s, all, find(all, "shelves/east-a"), t + 4000);
	ck_assert_int_eq(api_json_int64(io, "readBytes", -1), (1 << 20) + (2 << 20));
	ck_assert_double_eq_tol(api_json_double(io, "readMibps", -1), 1.0, 1e-9); /* n2's interval only */
	json_decref(io);

	/* past SRV_SHELFIO_STALE_MS a node counts nowhere */
	ck_assert_ptr_null(srv_shelfio_stats(s, all, find(all, "shelves/east-a"), t + 4000 + SRV_SHELFIO_STALE_MS + 1));
	srv_shelfio_free(s);
	json_decref(all);
}
END_TEST

START_TEST(test_malformed)
{
	struct srv_shelfio *s = NULL;
	json_t *all = shelves(), *r;
	int64_t t = 1800000000000LL;

	ck_assert_int_eq(srv_shelfio_new(&s), AQ_OK);
	srv_shelfio_report(s, "nodes/n1", "east", NULL, t);
	r = json_string("x");
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	json_decref(r);
	r = report("directory", "", -1, 0, 0, 0, 0, 0, 0); /* a negative counter */
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	json_decref(r);
	r = report("nvmeof", "shelf1", 1, 1, 1, 1, 1, 1, 1); /* an NQN without nqn. */
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	json_decref(r);
	r = report("directory", NQN, 1, 1, 1, 1, 1, 1, 1); /* a directory with an NQN */
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	json_decref(r);
	r = report("iscsi", "", 1, 1, 1, 1, 1, 1, 1);
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	json_decref(r);
	r = report("directory", "", 1, 1, 1, 1, 1, 1, 1);
	json_object_set_new(r, "writeUs", json_string("5")); /* a counter that is no integer */
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	json_decref(r);
	ck_assert_ptr_null(srv_shelfio_stats(s, all, find(all, "shelves/east-a"), t));
	ck_assert_ptr_null(srv_shelfio_stats(s, all, find(all, "shelves/nv"), t));
	srv_shelfio_free(s);
	json_decref(all);
}
END_TEST

START_TEST(test_metrics)
{
	struct srv_shelfio *s = NULL;
	json_t *all = shelves(), *r;
	struct ut_buf b;
	int64_t t = 1800000000000LL;
	size_t n;
	char *text;

	ck_assert_int_eq(srv_shelfio_new(&s), AQ_OK);
	r = report("directory", "", 4096, 1, 1, 250, 8192, 2, 1000);
	srv_shelfio_report(s, "nodes/n1", "east", r, t);
	json_decref(r);
	ut_buf_init(&b, 1 << 20);
	srv_shelfio_metrics(s, all, &b, t);
	text = ut_buf_steal(&b, &n);
	ck_assert_ptr_nonnull(strstr(text, "aquifer_shelf_read_bytes_total{shelf=\"east-a\",location=\"east\",node=\"n1\",backend=\"directory\"} 4096\n"));
	ck_assert_ptr_nonnull(strstr(text, "aquifer_shelf_write_ops_total{shelf=\"east-a\",location=\"east\",node=\"n1\",backend=\"directory\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(text, "aquifer_shelf_write_latency_seconds_total{shelf=\"east-a\",location=\"east\",node=\"n1\",backend=\"directory\"} 0.001\n"));
	ck_assert_ptr_nonnull(strstr(text, "aquifer_shelf_read_ceiling_mibps{shelf=\"nv\",location=\"east\"}"));
	ck_assert_ptr_nonnull(strstr(text, "# TYPE aquifer_shelf_read_bytes_total counter\n"));
	free(text);
	srv_shelfio_free(s);
	json_decref(all);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_shelfio");
	TCase *tc = tcase_create("srv_shelfio");

	tcase_add_test(tc, test_match);
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_metrics);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
