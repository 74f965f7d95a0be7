/* Unit tests for agent/vol/vol_ra.c: the name predictor of cross-file
 * read-ahead (issue 23, acceptance 1): decimal, zero-padded, hex, mixed
 * case, gaps, no match, 255-byte names, names that overflow their digit
 * width. The folder is a list of names. */
#include "agent/vol/vol_ra.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "tests/lib/aqt.h"

static const char *const *dir_names;

static bool in_dir(void *arg, const char *name)
{
	(void)arg;
	for (size_t i = 0; dir_names[i]; i++)
		if (strcmp(dir_names[i], name) == 0)
			return true;
	return false;
}

/* next(name, base) is want (NULL: -ENOENT) */
static void next_is(const char *name, int base, bool upper, const char *want)
{
	char out[VOL_RA_NAME_MAX + 1];
	int rc = vol_ra_next(name, base, upper, out, sizeof(out));

	if (!want) {
		ck_assert_msg(rc == -ENOENT, "%s: %d %s", name, rc, rc ? "" : out);
		return;
	}
	ck_assert_msg(rc == 0, "%s: %d", name, rc);
	ck_assert_str_eq(out, want);
}

START_TEST(test_decimal)
{
	next_is("frame000123.dpx", 10, false, "frame000124.dpx");
	next_is("frame000129.dpx", 10, false, "frame000130.dpx");
	next_is("frame0099.exr", 10, false, "frame0100.exr");
	next_is("take_7", 10, false, "take_8");                     /* no extension */
	next_is("shot.0042", 10, false, "shot.0043");               /* digits after the dot: the counter */
	next_is("a.tar.gz7", 10, false, NULL);                      /* digits inside an extension: not a counter */
	next_is("f1.v2.raw", 10, false, "f1.v3.raw");               /* the run just before the extension */
	next_is("12.dpx", 10, false, "13.dpx");
	next_is("0", 10, false, "1");
}
END_TEST

START_TEST(test_overflow_width)
{
	/* carrying past the width grows the run: unpadded counts go on */
	next_is("frame999.dpx", 10, false, "frame1000.dpx");
	next_is("frame0999.dpx", 10, false, "frame1000.dpx");       /* padded: stays in width */
	next_is("9", 10, false, "10");
	next_is("frame00ff", 16, false, "frame0100");
	next_is("x_ff.raw", 16, false, "x_100.raw");
	/* 40 digits: no integer arithmetic, no overflow */
	next_is("f9999999999999999999999999999999999999999.dpx", 10, false,
		"f10000000000000000000000000000000000000000.dpx");
}
END_TEST

START_TEST(test_hex_and_case)
{
	next_is("frame0009.dpx", 16, false, "frame000a.dpx");
	next_is("frame0009.dpx", 16, true, "frame000A.dpx");
	next_is("frame00af.dpx", 16, false, "frame00b0.dpx");
	next_is("FRAME00AF.DPX", 16, false, "FRAME00B0.DPX");       /* case of the run's letters wins */
	next_is("frame00Af.dpx", 16, false, "frame00b0.dpx");       /* mixed: the last letter's case */
	next_is("frame00aF.dpx", 16, false, "frame00B0.dpx");
	next_is("x_0Ab.raw", 16, false, "x_0Ac.raw");               /* unchanged digits keep their case */
	next_is("frame_00e.dpx", 16, false, "frame_00f.dpx");
	next_is("frame0009", 16, true, "frame000A");                /* the stem's 'e' is not the count's case */
	next_is("abcd", 16, true, "abce");                          /* letters only: their own case */
	next_is("frame_00f.dpx", 10, false, NULL);                  /* no decimal run before the extension */
}
END_TEST

START_TEST(test_no_match)
{
	next_is("README", 10, false, NULL);
	next_is("notes.txt", 10, false, NULL);
	next_is("x_.raw", 16, false, NULL);
	next_is(".42", 10, false, ".43");                           /* a dot file: the whole name is the stem */
	next_is("", 10, false, NULL);
}
END_TEST

START_TEST(test_long_names)
{
	char name[VOL_RA_NAME_MAX + 2], want[VOL_RA_NAME_MAX + 2], out[VOL_RA_NAME_MAX + 2];

	/* 255 bytes: its successor fits */
	memset(name, 'a', VOL_RA_NAME_MAX);
	memcpy(name + VOL_RA_NAME_MAX - 8, "0001.dpx", 8);
	name[VOL_RA_NAME_MAX] = '\0';
	memcpy(want, name, sizeof(name));
	want[VOL_RA_NAME_MAX - 5] = '2';
	next_is(name, 10, false, want);
	/* 255 bytes whose successor needs 256: not made */
	memcpy(name + VOL_RA_NAME_MAX - 8, "9999.dpx", 8);
	ck_assert_int_eq(vol_ra_next(name, 10, false, out, sizeof(out)), -ENAMETOOLONG);
	/* 256 bytes: not a name */
	memset(name, 'a', VOL_RA_NAME_MAX + 1);
	name[VOL_RA_NAME_MAX] = '1';
	name[VOL_RA_NAME_MAX + 1] = '\0';
	ck_assert_int_eq(vol_ra_next(name, 10, false, out, sizeof(out)), -ENAMETOOLONG);
	/* a small buffer is never overrun */
	ck_assert_int_eq(vol_ra_next("frame0001.dpx", 10, false, out, 13), -ENAMETOOLONG);
	ck_assert_int_eq(vol_ra_next("frame0001.dpx", 10, false, out, 14), 0);
}
END_TEST

START_TEST(test_predict)
{
	static const char *const film[] = { "f0001.dpx", "f0002.dpx", "f0003.dpx", "f0004.dpx", "f0006.dpx",
					    "f0007.dpx", "notes.txt", NULL };
	static const char *const hexfilm[] = { "h_0009.raw", "h_000a.raw", "h_000b.raw", NULL };
	static const char *const hexupper[] = { "H_0009.RAW", "H_000A.RAW", "H_000B.RAW", NULL };
	static const char *const far[] = { "g0001", "g0007", NULL };
	static const char *const dec_over_hex[] = { "d0009", "d0010", "d000a", NULL };
	char out[16][VOL_RA_NAME_MAX + 1];

	dir_names = film;
	ck_assert_uint_eq(vol_ra_predict("f0001.dpx", 2, in_dir, NULL, out, 16), 2);
	ck_assert_str_eq(out[0], "f0002.dpx");
	ck_assert_str_eq(out[1], "f0003.dpx");
	/* a gap (f0005 missing) is stepped over */
	ck_assert_uint_eq(vol_ra_predict("f0003.dpx", 3, in_dir, NULL, out, 16), 3);
	ck_assert_str_eq(out[0], "f0004.dpx");
	ck_assert_str_eq(out[1], "f0006.dpx");
	ck_assert_str_eq(out[2], "f0007.dpx");
	/* the end of the film: what there is */
	ck_assert_uint_eq(vol_ra_predict("f0006.dpx", 8, in_dir, NULL, out, 16), 1);
	ck_assert_str_eq(out[0], "f0007.dpx");
	ck_assert_uint_eq(vol_ra_predict("f0007.dpx", 8, in_dir, NULL, out, 16), 0);
	/* depth is capped by max and 0 asks for nothing */
	ck_assert_uint_eq(vol_ra_predict("f0001.dpx", 16, in_dir, NULL, out, 2), 2);
	ck_assert_uint_eq(vol_ra_predict("f0001.dpx", 0, in_dir, NULL, out, 16), 0);
	ck_assert_uint_eq(vol_ra_predict("notes.txt", 4, in_dir, NULL, out, 16), 0);
	/* hex when the decimal successors do not exist, in the folder's case */
	dir_names = hexfilm;
	ck_assert_uint_eq(vol_ra_predict("h_0009.raw", 4, in_dir, NULL, out, 16), 2);
	ck_assert_str_eq(out[0], "h_000a.raw");
	ck_assert_str_eq(out[1], "h_000b.raw");
	dir_names = hexupper;
	ck_assert_uint_eq(vol_ra_predict("H_0009.RAW", 4, in_dir, NULL, out, 16), 2);
	ck_assert_str_eq(out[0], "H_000A.RAW");
	/* decimal first when both exist */
	dir_names = dec_over_hex;
	ck_assert_uint_eq(vol_ra_predict("d0009", 1, in_dir, NULL, out, 16), 1);
	ck_assert_str_eq(out[0], "d0010");
	/* more than VOL_RA_GAP_MAX missing in a row: the walk stops, nothing */
	dir_names = far;
	ck_assert_uint_eq(vol_ra_predict("g0001", 4, in_dir, NULL, out, 16), 0);
}
END_TEST

static Suite *ra_suite(void)
{
	Suite *s = suite_create("vol_ra");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_decimal);
	tcase_add_test(tc, test_overflow_width);
	tcase_add_test(tc, test_hex_and_case);
	tcase_add_test(tc, test_no_match);
	tcase_add_test(tc, test_long_names);
	tcase_add_test(tc, test_predict);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(ra_suite());
}
