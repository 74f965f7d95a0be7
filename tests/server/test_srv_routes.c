/* Unit tests for the router in server/srv_routes.c: segment matching,
 * parameters, custom verbs ("*:verb"), 404 vs 405, and paths that are not
 * paths (no leading '/', empty and trailing segments, too many segments). */
#include "server/srv_routes.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_error.h"
#include "tests/lib/aqt.h"

static int match(const char *method, const char *path, char params[][256], int *np)
{
	int idx = -1;
	int rc = srv_route_match(method, path, &idx, params, np);

	if (rc == AQ_OK) {
		ck_assert_int_ge(idx, 0);
		ck_assert_int_lt(idx, srv_nroutes);
		ck_assert_str_eq(srv_routes[idx].method, method);
	}
	return rc;
}

START_TEST(test_params)
{
	char p[SRV_MAX_PARAMS][256];
	int np = -1;

	ck_assert_int_eq(match("GET", "/v1/projects/acme/locations/east/volumes/v1", p, &np), AQ_OK);
	ck_assert_int_eq(np, 3);
	ck_assert_str_eq(p[0], "acme");
	ck_assert_str_eq(p[1], "east");
	ck_assert_str_eq(p[2], "v1");
	ck_assert_int_eq(match("GET", "/v1/projects", p, &np), AQ_OK);
	ck_assert_int_eq(np, 0);
}
END_TEST

START_TEST(test_verbs)
{
	char p[SRV_MAX_PARAMS][256];
	int np = -1;

	ck_assert_int_eq(match("POST", "/v1/locations/east:joinToken", p, &np), AQ_OK);
	ck_assert_int_eq(np, 1);
	ck_assert_str_eq(p[0], "east");
	/* a plain segment never matches a verb template, nor a verb a plain one */
	ck_assert_int_ne(match("POST", "/v1/locations/east:other", p, &np), AQ_OK);
	ck_assert_int_eq(match("GET", "/v1/locations/east:joinToken", p, &np), AQ_ENOMETHOD);
	ck_assert_int_eq(match("POST", "/v1/locations/:joinToken", p, &np), AQ_ENOENT);
}
END_TEST

START_TEST(test_method_and_missing)
{
	char p[SRV_MAX_PARAMS][256];
	int np;

	ck_assert_int_eq(match("PUT", "/v1/projects/acme", p, &np), AQ_ENOMETHOD);
	ck_assert_int_eq(match("GET", "/v1/nothing", p, &np), AQ_ENOENT);
	ck_assert_int_eq(match("GET", "/v1/projects/acme/", p, &np), AQ_ENOENT);
	ck_assert_int_eq(match("GET", "/v1/projects//locations", p, &np), AQ_ENOENT);
	ck_assert_int_eq(match("GET", "v1/projects", p, &np), AQ_ENOENT);
	ck_assert_int_eq(match("GET", "", p, &np), AQ_ENOENT);
	ck_assert_int_eq(match("GET", "/", p, &np), AQ_ENOENT);
	ck_assert_int_eq(match("GET", "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s", p, &np), AQ_ENOENT);
}
END_TEST

START_TEST(test_long_segment)
{
	char p[SRV_MAX_PARAMS][256], path[400];
	int np;

	/* a parameter must fit its 256-byte slot with its terminator */
	snprintf(path, sizeof(path), "/v1/projects/%0256d", 7);
	ck_assert_int_eq(match("GET", path, p, &np), AQ_ENOENT);
	snprintf(path, sizeof(path), "/v1/projects/%0255d", 7);
	ck_assert_int_eq(match("GET", path, p, &np), AQ_OK);
	ck_assert_uint_eq(strlen(p[0]), 255);
}
END_TEST

/* Row i's path with each "*" replaced by a value of its own ("p0", "p1",
 * ...; a "*:verb" segment keeps its verb). */
static void route_example(int i, char *path, size_t cap)
{
	size_t o = 0;
	int n = 0;

	for (const char *t = srv_routes[i].path; *t && o + 4 < cap; t++) {
		if (*t != '*') {
			path[o++] = *t;
			continue;
		}
		o += (size_t)snprintf(path + o, cap - o, "p%d", n++);
	}
	path[o] = '\0';
}

/* Each row is reached by a path of its own shape, and the route matched is
 * that row itself with its parameters in order: a row that an earlier row
 * shadows (same method, a pattern that takes the later row's paths, or a
 * duplicate) fails here. */
START_TEST(test_every_route_matches_itself)
{
	char p[SRV_MAX_PARAMS][256], path[512], want[8];
	int np, idx;

	ck_assert_int_gt(srv_nroutes, 0);
	for (int i = 0; i < srv_nroutes; i++) {
		int stars = 0;

		for (const char *t = srv_routes[i].path; *t; t++)
			stars += *t == '*';
		route_example(i, path, sizeof(path));
		idx = -1;
		ck_assert_msg(srv_route_match(srv_routes[i].method, path, &idx, p, &np) == AQ_OK, "%s %s",
			      srv_routes[i].method, path);
		ck_assert_msg(idx == i, "%s %s (row %d) is taken by row %d, %s %s", srv_routes[i].method,
			      srv_routes[i].path, i, idx, srv_routes[idx].method, srv_routes[idx].path);
		ck_assert_int_eq(np, stars);
		for (int k = 0; k < np; k++) {
			snprintf(want, sizeof(want), "p%d", k);
			ck_assert_str_eq(p[k], want);
		}
	}
}
END_TEST

/* No two rows share a method and a path. */
START_TEST(test_no_duplicate_rows)
{
	for (int i = 0; i < srv_nroutes; i++)
		for (int j = i + 1; j < srv_nroutes; j++)
			ck_assert_msg(strcmp(srv_routes[i].method, srv_routes[j].method) != 0 ||
					      strcmp(srv_routes[i].path, srv_routes[j].path) != 0,
				      "rows %d and %d are both %s %s", i, j, srv_routes[i].method, srv_routes[i].path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("srv_routes");
	TCase *tc = tcase_create("srv_routes");

	tcase_add_test(tc, test_params);
	tcase_add_test(tc, test_verbs);
	tcase_add_test(tc, test_method_and_missing);
	tcase_add_test(tc, test_long_segment);
	tcase_add_test(tc, test_every_route_matches_itself);
	tcase_add_test(tc, test_no_duplicate_rows);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
