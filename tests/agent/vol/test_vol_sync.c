/* test_vol_sync: what the store syncs (agent/vol/vol_sync.c, issue 25):
 * a COMMIT with nothing new since the last sync of the file makes no fsync
 * and one after any change (a write, a truncation, a hole, attributes, a
 * change made around the store) makes one, and one after a FILE_SYNC
 * write none (its own fsync covered it); vol_sync (a SETATTR's) syncs a
 * file or a folder once, a symlink through its file system; COMMITs of one
 * file from 8 threads share fsyncs; on a file system that logs
 * every change in order (a journalled ext4 on a loop device, made here),
 * each create and SETATTR forces the log itself, at once, and concurrent
 * ones share journal commits (no file or folder fsync); on an ext4 with
 * fast_commit there is no log sync (a SETATTR syncs its file). Needs root
 * (open_by_handle_at; the loop mount, skipped with a note without it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts; /* tmp folder, cfg[1], store, location key */
static const struct vol_cred root = {0, 0, 0, {0}, 0};
/* The journalled ext4 the "journal" cases export a fresh folder of: made
 * and mounted once by the parent (an unchecked fixture), so a failing test
 * cannot leave it mounted. lp.top[0] == 0: none could be made here. */
static struct aqt_loop lp;

static void loop_up(void)
{
	aqt_loop_up(&lp, "vol-sync", "64M", "mkfs.ext4 -q -F");
}

static void loop_up_fc(void)
{
	aqt_loop_up(&lp, "vol-sync", "64M", "mkfs.ext4 -q -F -O fast_commit");
}

static void loop_down(void)
{
	aqt_loop_down(&lp);
}

static void setup_with(bool journal)
{
	aqt_store_init(&ts, 1,
		       &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 300, .capacity = 1ull << 30,
						 .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 9 });
	if (journal) /* the export's root: a new folder of the journalled ext4 */
		aqt_loop_export(&lp, &ts, 0);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
}

static void setup(void)
{
	setup_with(false);
}

static void setup_journal(void)
{
	setup_with(true);
}

static void teardown(void)
{
	aqt_store_cleanup(&ts); /* a folder on the loop file system goes with it (loop_down) */
}

static struct vol_obj root_of(void)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	struct vol_obj o;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &o), 0);
	vol_export_unref(e);
	return o;
}

static struct vol_stats stats(void)
{
	struct vol_stats s;

	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &s), 0);
	return s;
}

/* COMMIT f and say how many fsyncs it issued (0 or 1: one caller). */
static uint64_t commit_syncs(struct vol_obj *f)
{
	struct vol_stats a = stats(), b;

	ck_assert_int_eq(vol_commit(f, &root), 0);
	b = stats();
	ck_assert_uint_eq(b.filesyncs - a.filesyncs + b.syncs_clean - a.syncs_clean, 1);
	return b.filesyncs - a.filesyncs;
}

START_TEST(test_commit_clean)
{
	struct vol_obj r = root_of(), f;
	struct vol_sattr sa = {0};
	uint8_t page[4096];
	char p[200];
	int committed, fd;

	memset(page, 'x', sizeof(page));
	ck_assert_int_eq(vol_create(&r, &root, "f", 1, true, NULL, NULL, &f), 0);
	ck_assert_uint_eq(commit_syncs(&f), 1); /* nothing known of it yet */
	ck_assert_uint_eq(commit_syncs(&f), 0); /* nothing new */
	ck_assert_uint_eq(commit_syncs(&f), 0);
	ck_assert_int_eq(vol_write(&f, &root, 0, page, sizeof(page), 0, &committed), 0);
	ck_assert_uint_eq(commit_syncs(&f), 1); /* a new UNSTABLE write */
	ck_assert_uint_eq(commit_syncs(&f), 0);
	sa.set_size = true;
	sa.size = 100;
	ck_assert_int_eq(vol_setattr(&f, &root, &sa), 0);
	ck_assert_uint_eq(commit_syncs(&f), 1); /* a truncation */
	ck_assert_int_eq(vol_zero_range(&f, &root, 0, 10, true, NULL), 0);
	ck_assert_uint_eq(commit_syncs(&f), 1); /* a hole */
	ck_assert_uint_eq(commit_syncs(&f), 0);
	/* a change around the store (the ctime moves): not known clean */
	usleep(50 * 1000); /* past the clock tick of the last ctime */
	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_int_ge(fd = open(p, O_WRONLY), 0);
	ck_assert_int_eq(pwrite(fd, page, 10, 0), 10);
	close(fd);
	ck_assert_uint_eq(commit_syncs(&f), 1);
	ck_assert_uint_eq(commit_syncs(&f), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
}
END_TEST

/* A FILE_SYNC write (NFSv3 FILE_SYNC, NFSv4.1 FILE_SYNC4, SMB
 * WRITE_THROUGH: stable 2) is fsync'ed before it returns: the COMMIT the
 * client sends after it has nothing to sync, unless an UNSTABLE write came
 * after it. An UNSTABLE write before it is covered by its fsync too. */
START_TEST(test_commit_after_file_sync)
{
	struct vol_obj r = root_of(), f;
	uint8_t page[4096];
	int committed;

	memset(page, 'y', sizeof(page));
	ck_assert_int_eq(vol_create(&r, &root, "s", 1, true, NULL, NULL, &f), 0);
	ck_assert_int_eq(vol_write(&f, &root, 0, page, sizeof(page), 2, &committed), 0);
	ck_assert_int_eq(committed, 2);
	ck_assert_uint_eq(commit_syncs(&f), 0); /* the write's own fsync covered it */
	ck_assert_int_eq(vol_write(&f, &root, 0, page, sizeof(page), 2, &committed), 0);
	ck_assert_int_eq(vol_write(&f, &root, 4096, page, sizeof(page), 0, &committed), 0);
	ck_assert_uint_eq(commit_syncs(&f), 1); /* an UNSTABLE write after it */
	ck_assert_uint_eq(commit_syncs(&f), 0);
	ck_assert_int_eq(vol_write(&f, &root, 8192, page, sizeof(page), 0, &committed), 0);
	ck_assert_int_eq(vol_write(&f, &root, 0, page, sizeof(page), 2, &committed), 0);
	ck_assert_uint_eq(commit_syncs(&f), 0); /* an UNSTABLE write before it: synced by it */
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
}
END_TEST

/* Concurrent SETATTRs of different files: each thread changes its file's
 * mode and syncs it, 25 times. Each sync forces the log itself, at once
 * (none waits for another's force in flight), and jbd2 joins concurrent
 * forces in one commit: fewer journal commits than syncs. */
#define SA_THREADS 8
#define SA_EACH 25

struct sa_arg {
	struct vol_obj *root;
	int id, failed;
};

static void *sa_worker(void *p)
{
	struct sa_arg *a = p;
	struct vol_obj f;
	struct vol_sattr sa = {0};
	char n[16];
	int i;

	snprintf(n, sizeof(n), "s%d", a->id);
	if (vol_create(a->root, &root, n, strlen(n), true, NULL, NULL, &f) != 0) {
		a->failed = SA_EACH;
		return NULL;
	}
	sa.set_mode = true;
	for (i = 0; i < SA_EACH; i++) {
		sa.mode = i % 2 ? 0600 : 0640;
		if (vol_setattr(&f, &root, &sa) != 0 || vol_sync(&f) != 0)
			a->failed++;
	}
	vol_obj_cleanup(&f);
	return NULL;
}

/* Journal commits of the jbd2 journal under dir so far (its info file:
 * "N transactions (M requested), ..."), or -1 when unknown. */
static long jbd2_commits(const char *dir)
{
	char path[96], line[128], info[160];
	long n = -1;
	struct stat st;
	FILE *f;

	if (stat(dir, &st) != 0)
		return -1;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(st.st_dev), minor(st.st_dev));
	if (!(f = fopen(path, "r")))
		return -1;
	info[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "DEVNAME=", 8) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(info, sizeof(info), "/proc/fs/jbd2/%s-8/info", line + 8);
			break;
		}
	fclose(f);
	if (info[0] && (f = fopen(info, "r"))) {
		if (fscanf(f, "%ld transactions", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

START_TEST(test_setattr_log_shared)
{
	struct vol_obj r = root_of();
	struct sa_arg args[SA_THREADS];
	pthread_t th[SA_THREADS];
	struct vol_stats a, b;
	long c0, c1;
	int i;

	if (!lp.top[0] || !aqt_store_one_log(ts.cfg[0].root)) {
		fprintf(stderr, "# SKIP test_setattr_log_shared: no journalled ext4 on a loop device here\n");
		vol_obj_cleanup(&r);
		return;
	}
	a = stats();
	c0 = jbd2_commits(ts.cfg[0].root);
	for (i = 0; i < SA_THREADS; i++) {
		args[i] = (struct sa_arg){.root = &r, .id = i};
		ck_assert_int_eq(pthread_create(&th[i], NULL, sa_worker, &args[i]), 0);
	}
	for (i = 0; i < SA_THREADS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].failed, 0);
	}
	b = stats();
	c1 = jbd2_commits(ts.cfg[0].root);
	fprintf(stderr, "# %d concurrent creates and %d SETATTRs: %llu log syncs, %ld journal commits, %llu file syncs, "
		"%llu directory syncs\n",
		SA_THREADS, SA_THREADS * SA_EACH, (unsigned long long)(b.logsyncs - a.logsyncs), c1 - c0,
		(unsigned long long)(b.filesyncs - a.filesyncs), (unsigned long long)(b.dirsyncs - a.dirsyncs));
	/* every create and every sync forced the log itself: none waited
	 * for another's force and was covered by the next */
	ck_assert_uint_eq(b.logsyncs - a.logsyncs, SA_THREADS * (SA_EACH + 1));
	ck_assert_uint_eq(b.logsyncs_done, b.logsyncs);
	/* ... and the journal joined them: fewer commits than forces */
	ck_assert_int_ge(c0, 0);
	ck_assert_int_ge(c1 - c0, 1);
	ck_assert_int_lt(c1 - c0, SA_THREADS * (SA_EACH + 1));
	/* no file or folder was fsync'ed: the log holds every change */
	ck_assert_uint_eq(b.filesyncs, a.filesyncs);
	ck_assert_uint_eq(b.dirsyncs, a.dirsyncs);
	vol_obj_cleanup(&r);
}
END_TEST

/* ext4 with fast_commit (a journal, but an fsync may commit only a
 * fast-commit record of the inode it names): no log sync; a SETATTR syncs
 * its own file, as where there is no journal. */
START_TEST(test_fast_commit_no_log)
{
	struct vol_obj r = root_of(), f;
	struct vol_sattr sa = {0};
	struct vol_stats a, b;

	if (!lp.top[0]) {
		fprintf(stderr, "# SKIP test_fast_commit_no_log: no ext4 with fast_commit on a loop device here\n");
		vol_obj_cleanup(&r);
		return;
	}
	ck_assert(!aqt_store_one_log(ts.cfg[0].root));
	ck_assert_int_eq(vol_create(&r, &root, "m", 1, true, NULL, NULL, &f), 0);
	a = stats();
	sa.set_mode = true;
	sa.mode = 0640;
	ck_assert_int_eq(vol_setattr_stable(&f, &root, &sa, NULL), 0);
	b = stats();
	ck_assert_uint_eq(b.logsyncs, a.logsyncs);
	ck_assert_uint_eq(b.filesyncs, a.filesyncs + 1);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
}
END_TEST

/* Issue 25: vol_sync (an NFSv3 SETATTR's) syncs a file or a folder once
 * through the COMMITs' group commit, a symlink through its file system. */
START_TEST(test_sync_attrs)
{
	struct vol_obj r = root_of(), f, s;
	struct vol_stats a, b;

	ck_assert_int_eq(vol_create(&r, &root, "sa", 2, true, NULL, NULL, &f), 0);
	ck_assert_int_eq(vol_symlink(&r, &root, "sl", 2, "sa", 2, NULL, &s), 0);
	vol_store_stats(ts.store, "vol0", &a);
	ck_assert_int_eq(vol_sync(&f), 0);
	ck_assert_int_eq(vol_sync(&r), 0);
	ck_assert_int_eq(vol_sync(&s), 0);
	vol_store_stats(ts.store, "vol0", &b);
	ck_assert_uint_eq(b.filesyncs, a.filesyncs + 3);
	ck_assert_uint_eq(b.dirsyncs, a.dirsyncs);
	vol_obj_cleanup(&s);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
}
END_TEST

/* Issue 25: COMMITs of one file from many connections share fsyncs (the
 * store's capacity, 1 GiB, holds the 200 pages). */
struct commit_arg {
	struct vol_obj *root;
	int id, failed;
};

static void *commit_worker(void *p)
{
	struct commit_arg *a = p;
	struct vol_obj f;
	uint8_t page[4096];
	int i, committed;

	if (vol_lookup(a->root, &root, "c", 1, &f) != 0) {
		a->failed = 25;
		return NULL;
	}
	memset(page, a->id, sizeof(page));
	for (i = 0; i < 25; i++)
		if (vol_write(&f, &root, (uint64_t)(a->id * 25 + i) * sizeof(page), page, sizeof(page), 0,
			      &committed) != 0 || vol_commit(&f, &root) != 0)
			a->failed++;
	vol_obj_cleanup(&f);
	return NULL;
}

START_TEST(test_commit_grouped)
{
	struct vol_obj r = root_of(), o;
	struct vol_stats a, b;
	struct commit_arg args[8];
	pthread_t th[8];
	int i;

	ck_assert_int_eq(vol_create(&r, &root, "c", 1, true, NULL, NULL, &o), 0);
	vol_store_stats(ts.store, "vol0", &a);
	ck_assert_int_eq(vol_commit(&o, &root), 0); /* alone: its own fsync */
	vol_store_stats(ts.store, "vol0", &b);
	ck_assert_uint_eq(b.filesyncs, a.filesyncs + 1);
	for (i = 0; i < 8; i++) {
		args[i] = (struct commit_arg){.root = &r, .id = i};
		ck_assert_int_eq(pthread_create(&th[i], NULL, commit_worker, &args[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].failed, 0);
	}
	vol_store_stats(ts.store, "vol0", &a);
	fprintf(stderr, "# 200 COMMITs of one file from 8 threads: %llu fsyncs\n",
		(unsigned long long)(a.filesyncs - b.filesyncs));
	/* every COMMIT is covered by a sync (>= 1); concurrent ones share (< 200) */
	ck_assert_uint_ge(a.filesyncs - b.filesyncs, 1);
	ck_assert_uint_lt(a.filesyncs - b.filesyncs, 200);
	vol_obj_cleanup(&o);
	vol_obj_cleanup(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_sync");
	TCase *tc = tcase_create("core"), *tj = tcase_create("journal"), *tf = tcase_create("fast_commit");

	if (geteuid() != 0) {
		fprintf(stderr, "test_vol_sync needs root (open_by_handle_at)\n");
		return 77;
	}
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_commit_clean);
	tcase_add_test(tc, test_commit_after_file_sync);
	tcase_add_test(tc, test_sync_attrs);
	tcase_add_test(tc, test_commit_grouped);
	suite_add_tcase(s, tc);
	tcase_add_unchecked_fixture(tj, loop_up, loop_down);
	tcase_add_checked_fixture(tj, setup_journal, teardown);
	tcase_set_timeout(tj, 60);
	tcase_add_test(tj, test_setattr_log_shared);
	tcase_add_test(tj, test_commit_clean); /* the same on the journalled file system */
	tcase_add_test(tj, test_commit_after_file_sync);
	suite_add_tcase(s, tj);
	tcase_add_unchecked_fixture(tf, loop_up_fc, loop_down);
	tcase_add_checked_fixture(tf, setup_journal, teardown);
	tcase_set_timeout(tf, 60);
	tcase_add_test(tf, test_fast_commit_no_log);
	tcase_add_test(tf, test_commit_clean); /* file syncs as elsewhere */
	suite_add_tcase(s, tf);
	return aqt_run(s);
}
