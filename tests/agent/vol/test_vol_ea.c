/* test_vol_ea: who may set an object's extended attributes
 * (agent/vol/vol_ea.c, vol_ea_set): its owner (whatever its mode), a
 * caller the mode lets write it (as other or through its group), root.
 * Another user who may not write it is refused with -EACCES, a removal
 * too, and nothing changes: the blob, the volume's free bytes, no sync.
 * Needs root (objects of other owners; the store takes the callers'
 * fsuid to check). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
static const struct vol_cred alice = { 1000, 1000, 0, { 0 }, 0 };
static const struct vol_cred bob = { 2000, 2000, 0, { 0 }, 0 };

static void setup(void)
{
	aqt_store_init(&ts, 1,
		       &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 320, .capacity = 1ull << 30,
						 .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 4 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
}

static void teardown(void)
{
	aqt_store_cleanup(&ts);
}

/* name in the export's root, made (a folder when dir) owned by uid:gid
 * with mode, and looked up into *o. */
static void make(const char *name, bool dir, uid_t uid, gid_t gid, mode_t mode, struct vol_obj *o)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	struct vol_obj r;
	char p[300];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	if (dir) {
		ck_assert_int_eq(mkdir(p, 0700), 0);
	} else {
		ck_assert_int_ge(fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0600), 0);
		ck_assert_int_eq(close(fd), 0);
	}
	ck_assert_int_eq(chown(p, uid, gid), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &r), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_lookup(&r, &root, name, strlen(name), o), 0);
	vol_obj_cleanup(&r);
}

static void set_mode(const char *name, mode_t mode)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	ck_assert_int_eq(chmod(p, mode), 0);
}

/* o's blob is want (len bytes). */
static void blob_is(const struct vol_obj *o, const char *want, size_t len)
{
	uint8_t buf[64];
	size_t got = 99;

	ck_assert_int_eq(vol_ea_get(o, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, len);
	ck_assert_int_eq(memcmp(buf, want, len), 0);
}

/* bob, who may not write o, is refused setting or removing its blob, and
 * nothing moves: the blob stays want, the volume's free bytes and syncs
 * stay as they were. */
static void bob_refused(struct vol_obj *o, const char *want, size_t len)
{
	struct vol_fsstat a, b;
	struct vol_stats sa, sb;

	ck_assert_int_eq(vol_fsstat(o, &a), 0);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &sa), 0);
	ck_assert_int_eq(vol_ea_set(o, &bob, (const uint8_t *)"bob's list, longer", 18), -EACCES);
	ck_assert_int_eq(vol_ea_set(o, &bob, NULL, 0), -EACCES);
	ck_assert_int_eq(vol_fsstat(o, &b), 0);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &sb), 0);
	blob_is(o, want, len);
	ck_assert_uint_eq(b.abytes, a.abytes);
	ck_assert_uint_eq(sb.filesyncs + sb.logsyncs, sa.filesyncs + sa.logsyncs);
}

START_TEST(test_ea_set_other_user_file)
{
	struct vol_obj f;

	make("f", false, 1000, 1000, 0644, &f);
	ck_assert_int_eq(vol_ea_set(&f, &alice, (const uint8_t *)"abc", 3), 0); /* the owner */
	bob_refused(&f, "abc", 3);
	set_mode("f", 0444);
	ck_assert_int_eq(vol_ea_set(&f, &alice, (const uint8_t *)"ab", 2), 0); /* the owner, whatever the mode */
	bob_refused(&f, "ab", 2);
	set_mode("f", 0646);
	ck_assert_int_eq(vol_ea_set(&f, &bob, (const uint8_t *)"bo", 2), 0); /* others may write it */
	blob_is(&f, "bo", 2);
	ck_assert_int_eq(vol_ea_set(&f, &root, (const uint8_t *)"r", 1), 0);
	blob_is(&f, "r", 1);
	vol_obj_cleanup(&f);
}
END_TEST

START_TEST(test_ea_set_other_user_folder)
{
	struct vol_obj d;

	make("d", true, 1000, 2000, 0755, &d);
	ck_assert_int_eq(vol_ea_set(&d, &alice, (const uint8_t *)"xyz", 3), 0);
	bob_refused(&d, "xyz", 3);
	set_mode("d", 0775); /* bob's group may write it */
	ck_assert_int_eq(vol_ea_set(&d, &bob, NULL, 0), 0);
	blob_is(&d, "", 0);
	vol_obj_cleanup(&d);
}
END_TEST

/* The security descriptor blob (vol_sd.c): stored and read back, its
 * bytes taken from the volume's free bytes and given back when removed,
 * synced before the answer; past VOL_SD_MAX -E2BIG and nothing moves.
 * No POSIX right is checked (the SMB layer checks the DACL first): a
 * file of mode 0000 owned by alice takes it. */
START_TEST(test_sd_store)
{
	static uint8_t big[VOL_SD_MAX + 1];
	struct vol_fsstat a, b, c;
	struct vol_stats sa, sb;
	struct vol_obj f;
	uint8_t buf[64];
	size_t got = 99;

	make("f", false, 1000, 1000, 0000, &f);
	ck_assert_int_eq(vol_sd_get(&f, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, 0);
	ck_assert_int_eq(vol_fsstat(&f, &a), 0);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &sa), 0);
	ck_assert_int_eq(vol_sd_set(&f, (const uint8_t *)"descriptor-bytes", 16, NULL), 0);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &sb), 0);
	ck_assert_uint_gt(sb.filesyncs + sb.logsyncs, sa.filesyncs + sa.logsyncs);
	ck_assert_int_eq(vol_fsstat(&f, &b), 0);
	ck_assert_uint_eq(a.abytes - b.abytes, 16);
	ck_assert_int_eq(vol_sd_get(&f, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, 16);
	ck_assert_mem_eq(buf, "descriptor-bytes", 16);
	blob_is(&f, "", 0); /* the EA list is another blob */
	ck_assert_int_eq(vol_sd_set(&f, big, sizeof(big), NULL), -E2BIG);
	ck_assert_int_eq(vol_fsstat(&f, &c), 0);
	ck_assert_uint_eq(c.abytes, b.abytes);
	ck_assert_int_eq(vol_sd_get(&f, buf, sizeof(buf), &got), 0);
	ck_assert_uint_eq(got, 16);
	ck_assert_int_eq(vol_sd_set(&f, NULL, 0, NULL), 0);
	ck_assert_int_eq(vol_fsstat(&f, &c), 0);
	ck_assert_uint_eq(c.abytes, a.abytes);
	vol_obj_cleanup(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("vol_ea");
	TCase *tc = tcase_create("ea");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_ea_set_other_user_file);
	tcase_add_test(tc, test_ea_set_other_user_folder);
	tcase_add_test(tc, test_sd_store);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (geteuid() != 0)
		return 77; /* objects of other owners */
	return aqt_run(suite());
}
