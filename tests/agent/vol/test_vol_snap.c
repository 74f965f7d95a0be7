/* test_vol_snap: /.snapshot in the volume store (agent/vol/vol_snap.c) on
 * the ordinary file system, with snapshots as the portable copy lays them
 * out (objects marked VOL_SNAP_MARK, not VOL_MARK): reached by LOOKUP only,
 * read-only, version 3 handles that resolve only inside the export's own
 * snapshots, ".." back up, and nothing of it with cfg.snapdir empty.
 * Needs root (open_by_handle_at, trusted.* marks). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static char tmp[64];
static struct vol_store *S;
static struct vol_export_cfg cfg[2];
static const struct vol_cred root = {0, 0, 0, {0}, 0};
static uint8_t loc_key[VOL_KEY_LEN];

static void mark(const char *path, const char *attr, uint64_t fsid)
{
	uint8_t v[8];

	for (int i = 0; i < 8; i++)
		v[i] = (uint8_t)(fsid >> (56 - 8 * i));
	ck_assert_int_eq(lsetxattr(path, attr, v, 8, 0), 0);
}

/* <tmp>/snaps/vI/s1/f.txt: volume I's snapshot s1, as a copy */
static void make_snap(int i)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/snaps/v%d/s1", tmp, i);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	mark(p, VOL_SNAP_MARK, cfg[i].fsid);
	snprintf(p, sizeof(p), "%s/snaps/v%d/s1/f.txt", tmp, i);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs("old", f);
	fclose(f);
	mark(p, VOL_SNAP_MARK, cfg[i].fsid);
}

static void setup(void)
{
	char p[256];

	snprintf(tmp, sizeof(tmp), "/tmp/aqvsnap-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(p, sizeof(p), "%s/snaps", tmp);
	mkdir(p, 0711);
	for (int i = 0; i < 2; i++) {
		memset(&cfg[i], 0, sizeof(cfg[i]));
		snprintf(cfg[i].id, sizeof(cfg[i].id), "vol%d", i);
		snprintf(cfg[i].path, sizeof(cfg[i].path), "/v%d", i);
		snprintf(cfg[i].root, sizeof(cfg[i].root), "%s/v%d", tmp, i);
		snprintf(cfg[i].snapdir, sizeof(cfg[i].snapdir), "%s/snaps/v%d", tmp, i);
		mkdir(cfg[i].root, 0777);
		mkdir(cfg[i].snapdir, 0711);
		cfg[i].fsid = 200 + (uint64_t)i;
		cfg[i].capacity = 1 << 20;
		cfg[i].nrules = 1;
		snprintf(cfg[i].rules[0].clients, sizeof(cfg[i].rules[0].clients), "127.0.0.0/8");
		cfg[i].rules[0].access = VOL_ACCESS_RW;
		make_snap(i);
	}
	memset(loc_key, 9, sizeof(loc_key));
	ck_assert_int_eq(vol_store_new(loc_key, &S), 0);
	ck_assert_int_eq(vol_store_set(S, cfg, 2), 0);
}

static void teardown(void)
{
	char cmd[128];

	vol_store_free(S);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

static struct vol_obj root_of(int i)
{
	struct vol_export *e = vol_export_by_path(S, cfg[i].path, strlen(cfg[i].path));
	struct vol_obj o;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &o), 0);
	vol_export_unref(e);
	return o;
}

static struct vol_fh forge(bool snap, uint64_t fsid, const char *path)
{
	return aqt_store_forge(loc_key, snap, fsid, path);
}

START_TEST(test_snapshot_dir_read_only)
{
	struct vol_obj r = root_of(0), sd, s1, f, up, o;
	struct vol_sattr sa = {.set_mode = true, .mode = 0600};
	char buf[16];
	size_t got;
	bool eof;
	int allowed = 0, committed;

	ck_assert_int_eq(vol_lookup(&r, &root, ".snapshot", 9, &sd), 0);
	ck_assert(sd.snap);
	ck_assert_int_eq(vol_lookup(&sd, &root, "s1", 2, &s1), 0);
	ck_assert(s1.snap);
	ck_assert_int_eq(vol_lookup(&s1, &root, "f.txt", 5, &f), 0);
	ck_assert(f.snap);
	ck_assert_int_eq(vol_read(&f, &root, 0, buf, sizeof(buf), &got, &eof), 0);
	ck_assert_uint_eq(got, 3);
	/* every change is EROFS, before anything is touched */
	ck_assert_int_eq(vol_write(&f, &root, 0, "new", 3, 2, &committed), -EROFS);
	ck_assert_int_eq(vol_setattr(&f, &root, &sa), -EROFS);
	ck_assert_int_eq(vol_sd_set(&f, (const uint8_t *)"sd", 2, NULL), -EROFS);
	ck_assert_int_eq(vol_sd_set(&s1, NULL, 0, NULL), -EROFS);
	ck_assert_int_eq(vol_create(&s1, &root, "g", 1, false, NULL, NULL, &o), -EROFS);
	ck_assert_int_eq(vol_mkdir(&sd, &root, "s2", 2, NULL, &o), -EROFS);
	ck_assert_int_eq(vol_remove(&s1, &root, "f.txt", 5), -EROFS);
	ck_assert_int_eq(vol_rmdir(&sd, &root, "s1", 2), -EROFS);
	ck_assert_int_eq(vol_rename(&s1, "f.txt", 5, &r, "x", 1, &root), -EROFS);
	ck_assert_int_eq(vol_link(&f, &r, "x", 1, &root), -EROFS);
	ck_assert_int_eq(vol_access(&f, &root, W_OK | R_OK, &allowed), 0);
	ck_assert_int_eq(allowed, R_OK);
	/* the root's .snapshot name cannot be made or removed */
	ck_assert_int_eq(vol_mkdir(&r, &root, ".snapshot", 9, NULL, &o), -EEXIST);
	ck_assert_int_eq(vol_rmdir(&r, &root, ".snapshot", 9), -EROFS);
	/* ".." climbs: snapshot root -> .snapshot -> export root */
	ck_assert_int_eq(vol_lookup(&s1, &root, "..", 2, &up), 0);
	ck_assert(up.snap);
	ck_assert_uint_eq(up.st.st_ino, sd.st.st_ino);
	vol_obj_cleanup(&up);
	ck_assert_int_eq(vol_lookup(&sd, &root, "..", 2, &up), 0);
	ck_assert(!up.snap);
	ck_assert_uint_eq(up.st.st_ino, r.st.st_ino);
	vol_obj_cleanup(&up);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&s1);
	vol_obj_cleanup(&sd);
	vol_obj_cleanup(&r);
}
END_TEST

START_TEST(test_snapshot_handles_contained)
{
	struct vol_obj r = root_of(0), sd, s1, f, o;
	struct vol_fh fh, bad;
	char p[256];

	ck_assert_int_eq(vol_lookup(&r, &root, ".snapshot", 9, &sd), 0);
	ck_assert_int_eq(vol_lookup(&sd, &root, "s1", 2, &s1), 0);
	ck_assert_int_eq(vol_lookup(&s1, &root, "f.txt", 5, &f), 0);
	ck_assert_int_eq(vol_fh_make(S, &f, &fh), 0);
	ck_assert_uint_eq(fh.data[0], 3);
	ck_assert_int_eq(vol_fh_open(S, fh.data, fh.len, &o), 0);
	ck_assert(o.snap);
	ck_assert_int_eq(vol_write(&o, &root, 0, "x", 1, 2, &(int){0}), -EROFS);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_fh_make(S, &sd, &fh), 0);
	ck_assert_int_eq(vol_fh_open(S, fh.data, fh.len, &o), 0);
	ck_assert(o.snap);
	vol_obj_cleanup(&o);
	/* the same object as a live handle (version 2): not the volume's */
	snprintf(p, sizeof(p), "%s/snaps/v0/s1/f.txt", tmp);
	bad = forge(false, cfg[0].fsid, p);
	ck_assert_int_eq(vol_fh_open(S, bad.data, bad.len, &o), -ESTALE);
	/* volume 1's snapshot handle into volume 0's snapshots */
	bad = forge(true, cfg[1].fsid, p);
	ck_assert_int_eq(vol_fh_open(S, bad.data, bad.len, &o), -ESTALE);
	/* a snapshot handle into the live tree */
	close(open(cfg[0].root, O_RDONLY));
	bad = forge(true, cfg[0].fsid, cfg[0].root);
	ck_assert_int_eq(vol_fh_open(S, bad.data, bad.len, &o), -ESTALE);
	/* its own forged snapshot handle works (the attack surface is its own) */
	bad = forge(true, cfg[0].fsid, p);
	ck_assert_int_eq(vol_fh_open(S, bad.data, bad.len, &o), 0);
	vol_obj_cleanup(&o);
	/* snapshotDirectory off: .snapshot is not there, its handles are stale */
	cfg[0].snapdir[0] = '\0';
	ck_assert_int_eq(vol_store_set(S, cfg, 2), 0);
	vol_obj_cleanup(&r);
	r = root_of(0);
	ck_assert_int_eq(vol_lookup(&r, &root, ".snapshot", 9, &o), -ENOENT);
	ck_assert_int_eq(vol_fh_make(S, &f, &fh), 0); /* minted before, still version 3 */
	ck_assert_int_eq(vol_fh_open(S, fh.data, fh.len, &o), -ESTALE);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&s1);
	vol_obj_cleanup(&sd);
	vol_obj_cleanup(&r);
}
END_TEST

static Suite *vol_snap_suite(void)
{
	Suite *s = suite_create("vol_snap");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_snapshot_dir_read_only);
	tcase_add_test(tc, test_snapshot_handles_contained);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(vol_snap_suite());
}
