/* test_vol_grant: an open's content descriptor (vol_obj_grant, agent/vol/
 * vol_fh.c): an object granted read and write at its open keeps reading and
 * writing after its file's mode became 000 (the store checks nothing per I/O
 * for it), while an object of the same file opened afterwards is refused; an
 * access not granted is checked per I/O as before; cached (from a handle)
 * and uncached (looked up) objects alike; the descriptor goes with the
 * object; grants holding a descriptor of their own are capped. Needs root (setfsuid, open_by_handle_at). */
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

#define USER 4242

static struct aqt_store ts;
static const struct vol_cred user = { USER, USER, 0, { 0 }, 0 };
static char path[128];

static void setup(void)
{
	int fd;

	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "grant", .fsid = 300, .capacity = 1 << 20,
							 .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 9 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
	snprintf(path, sizeof(path), "%s/v0", ts.dir);
	ck_assert_int_eq(chmod(path, 0755), 0); /* the user looks f up */
	snprintf(path, sizeof(path), "%s/v0/f", ts.dir);
	ck_assert_int_ge(fd = open(path, O_CREAT | O_WRONLY, 0600), 0);
	ck_assert_int_eq(write(fd, "hello", 5), 5);
	close(fd);
	ck_assert_int_eq(chown(path, USER, USER), 0);
}

static void teardown(void)
{
	aqt_store_cleanup(&ts);
}

/* The file as the user sees it: looked up (uncached), or from its handle
 * (the store's open-file cache). */
static struct vol_obj file_obj(bool cached)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	struct vol_obj r, o;
	struct vol_fh fh;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &r), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_lookup(&r, &user, "f", 1, &o), 0);
	vol_obj_cleanup(&r);
	ck_assert_ptr_null(o.grant);
	if (!cached)
		return o;
	ck_assert_int_eq(vol_fh_make(ts.store, &o, &fh), 0);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0);
	ck_assert_ptr_nonnull(o.fent);
	ck_assert_ptr_null(o.grant);
	return o;
}

static int rd(struct vol_obj *o, char *buf)
{
	size_t got = 0;
	bool eof = false;
	int rc = vol_read(o, &user, 0, buf, 5, &got, &eof);

	return rc == 0 && got != 5 ? -EIO : rc;
}

static int wr(struct vol_obj *o, const char *data)
{
	int committed;

	return vol_write(o, &user, 0, data, 5, 0, &committed);
}

static void outlives_mode(bool cached)
{
	uint64_t before = vol_grant_count();
	struct vol_obj o = file_obj(cached), later, copy;
	char buf[8] = { 0 };

	ck_assert_int_eq(vol_obj_grant(&o, &user, true, true), 0);
	ck_assert_int_eq(vol_grant_count(), before + 1);
	ck_assert_int_eq(vol_obj_grant(&o, &user, true, true), -EEXIST);
	ck_assert_int_eq(chmod(path, 0), 0);
	/* the open granted at its start keeps reading and writing, a copy of it too */
	ck_assert_int_eq(wr(&o, "world"), 0);
	ck_assert_int_eq(rd(&o, buf), 0);
	ck_assert_str_eq(buf, "world");
	copy = o;
	ck_assert_int_eq(rd(&copy, buf), 0);
	/* a new open is refused: per I/O and at its grant */
	later = file_obj(cached);
	ck_assert_int_eq(rd(&later, buf), -EACCES);
	ck_assert_int_eq(wr(&later, "again"), -EACCES);
	ck_assert_int_eq(vol_obj_grant(&later, &user, true, true), -EACCES);
	ck_assert_ptr_null(later.grant);
	vol_obj_cleanup(&later);
	vol_obj_cleanup(&o);
	ck_assert_ptr_null(o.grant);
	ck_assert_int_eq(vol_grant_count(), before);
}

START_TEST(test_uncached_outlives_mode)
{
	outlives_mode(false);
}
END_TEST

START_TEST(test_cached_outlives_mode)
{
	outlives_mode(true);
}
END_TEST

/* A read-only open's WRITE is not granted: checked per I/O, refused once the
 * mode forbids it, while its READs go on. */
static void read_only(bool cached)
{
	struct vol_obj o = file_obj(cached);
	char buf[8] = { 0 };

	ck_assert_int_eq(vol_obj_grant(&o, &user, true, false), 0);
	ck_assert_int_eq(chmod(path, 0400), 0);
	ck_assert_int_eq(wr(&o, "world"), -EACCES);
	ck_assert_int_eq(chmod(path, 0), 0);
	ck_assert_int_eq(wr(&o, "world"), -EACCES);
	ck_assert_int_eq(rd(&o, buf), 0);
	ck_assert_str_eq(buf, "hello");
	vol_obj_cleanup(&o);
}

START_TEST(test_uncached_read_only)
{
	read_only(false);
}
END_TEST

START_TEST(test_cached_read_only)
{
	read_only(true);
}
END_TEST

/* A grant checks as the caller: a file it may only read is granted read
 * alone; one it may not touch, nothing; a folder cannot be granted. */
START_TEST(test_grant_checks_caller)
{
	struct vol_obj o = file_obj(false), r;
	struct vol_export *e;
	char buf[8] = { 0 };

	ck_assert_int_eq(chmod(path, 0400), 0);
	ck_assert_int_eq(vol_obj_grant(&o, &user, true, true), 0);
	ck_assert_int_eq(chmod(path, 0), 0);
	ck_assert_int_eq(rd(&o, buf), 0);
	ck_assert_int_eq(wr(&o, "world"), -EACCES);
	vol_obj_cleanup(&o);
	o = file_obj(false);
	ck_assert_int_eq(vol_obj_grant(&o, &user, true, true), -EACCES);
	vol_obj_cleanup(&o);
	e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	ck_assert_int_eq(vol_root(e, &r), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_obj_grant(&r, &user, true, false), -EINVAL);
	vol_obj_cleanup(&r);
}
END_TEST

/* Past the cap on own descriptors an uncached object gets no grant (and is
 * checked per I/O); a cached one needs none; a grant gone frees its place. */
START_TEST(test_grant_cap)
{
	struct vol_obj a = file_obj(false), b = file_obj(false), c = file_obj(true);
	char buf[8] = { 0 };

	vol_grant_set_max(1);
	ck_assert_int_eq(vol_obj_grant(&a, &user, true, true), 0);
	ck_assert_int_eq(vol_obj_grant(&b, &user, true, true), -EMFILE);
	ck_assert_ptr_null(b.grant);
	ck_assert_int_eq(rd(&b, buf), 0);
	ck_assert_int_eq(vol_obj_grant(&c, &user, true, true), 0);
	vol_obj_cleanup(&a);
	ck_assert_int_eq(vol_obj_grant(&b, &user, true, true), 0);
	vol_grant_set_max(0);
	vol_obj_cleanup(&b);
	vol_obj_cleanup(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_grant");
	TCase *tc = tcase_create("core");

	if (geteuid() != 0) {
		fprintf(stderr, "test_vol_grant needs root (setfsuid, open_by_handle_at)\n");
		return 77;
	}
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_uncached_outlives_mode);
	tcase_add_test(tc, test_cached_outlives_mode);
	tcase_add_test(tc, test_uncached_read_only);
	tcase_add_test(tc, test_cached_read_only);
	tcase_add_test(tc, test_grant_checks_caller);
	tcase_add_test(tc, test_grant_cap);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
