/* Unit tests for agent/agent_shelf_grow.c over a loop device: a mounted
 * ext4 grows online to what its (grown) device holds while a writer keeps
 * writing and fsyncing into it, up to a limit when one is given; nothing
 * shrinks; a device without ext4, or a file system the kernel will not
 * grow (mounted read-only), fails with the reason and leaves the size as it
 * was. Needs root and a loop device (as the lease and snapshot suites do);
 * says so and checks nothing without. */
#include "agent/agent_shelf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

#define MIB (1024ull * 1024ull)

struct loopfs {
	char img[64];
	char dev[64];
	char mp[64];
	int mounted;
};

static int sh(const char *cmd)
{
	return system(cmd);
}

/* An image of mib MiB (ext4 on it when fs), on a loop device, mounted
 * (ro: read-only) when fs. 0, or -1 with nothing to undo (no root or loop). */
static int loop_make(struct loopfs *l, unsigned mib, int fs, int ro)
{
	char cmd[300];
	FILE *f;
	int fd;

	memset(l, 0, sizeof(*l));
	snprintf(l->img, sizeof(l->img), "/tmp/aq_grow_img_XXXXXX");
	snprintf(l->mp, sizeof(l->mp), "/tmp/aq_grow_mp_XXXXXX");
	if ((fd = mkstemp(l->img)) < 0)
		return -1;
	ck_assert_int_eq(ftruncate(fd, (off_t)(mib * MIB)), 0);
	close(fd);
	if (fs) {
		snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F -b 4096 -m 0 -E nodiscard %s >/dev/null 2>&1", l->img);
		ck_assert_int_eq(sh(cmd), 0);
	}
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", l->img);
	if ((f = popen(cmd, "r"))) {
		if (!fgets(l->dev, sizeof(l->dev), f))
			l->dev[0] = '\0';
		pclose(f);
	}
	l->dev[strcspn(l->dev, "\n")] = '\0';
	if (!l->dev[0]) {
		unlink(l->img);
		return -1;
	}
	ck_assert_ptr_nonnull(mkdtemp(l->mp));
	if (fs) {
		ck_assert_msg(mount(l->dev, l->mp, "ext4", ro ? MS_RDONLY : 0, NULL) == 0, "mount %s: %s", l->dev,
			      strerror(errno));
		l->mounted = 1;
	}
	return 0;
}

/* The image grows to mib MiB and the loop device learns it (losetup -c). */
static void loop_grow(struct loopfs *l, unsigned mib)
{
	char cmd[200];

	ck_assert_int_eq(truncate(l->img, (off_t)(mib * MIB)), 0);
	snprintf(cmd, sizeof(cmd), "losetup -c %s", l->dev);
	ck_assert_int_eq(sh(cmd), 0);
}

static void loop_free(struct loopfs *l)
{
	char cmd[200];

	if (l->mounted)
		ck_assert_int_eq(umount(l->mp), 0);
	rmdir(l->mp);
	snprintf(cmd, sizeof(cmd), "losetup -d %s", l->dev);
	ck_assert_int_eq(sh(cmd), 0);
	unlink(l->img);
}

static uint64_t df_bytes(const char *mp)
{
	struct statvfs v;

	ck_assert_int_eq(statvfs(mp, &v), 0);
	return (uint64_t)v.f_blocks * v.f_frsize;
}

/* A client of the file system: 256 KiB files, each written and fsynced,
 * until told to stop; any error is kept. */
struct writer {
	const char *mp;
	volatile int stop;
	int files;
	int err;
};

static void fill(unsigned char *b, size_t n, int i)
{
	for (size_t k = 0; k < n; k++)
		b[k] = (unsigned char)(i * 31 + k);
}

static void *writer_main(void *p)
{
	struct writer *w = p;
	static unsigned char buf[256 * 1024];
	char path[128];

	while (!w->stop && !w->err) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%d", w->mp, w->files);
		fill(buf, sizeof(buf), w->files);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
		    write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fsync(fd) != 0)
			w->err = errno ? errno : EIO;
		if (fd >= 0)
			close(fd);
		if (!w->err)
			w->files++;
		if (w->files >= 40) { /* stay within the first size: keep the newest 39 files (~10 MiB) */
			snprintf(path, sizeof(path), "%s/f%d", w->mp, w->files - 40);
			(void)unlink(path);
		}
	}
	return NULL;
}

/* Can this machine grow a mounted ext4 at all? A container without
 * CAP_SYS_RESOURCE cannot (resize2fs: "Permission denied to resize"). */
static int online_resize_permitted(void)
{
	struct loopfs l;
	char cmd[200];
	int ok;

	if (loop_make(&l, 32, 1, 0) != 0)
		return -1;
	loop_grow(&l, 48);
	snprintf(cmd, sizeof(cmd), "resize2fs %s >/dev/null 2>&1", l.dev);
	ok = sh(cmd) == 0;
	loop_free(&l);
	return ok;
}

START_TEST(test_grow_online)
{
	static unsigned char want[256 * 1024], got[256 * 1024];
	struct writer w = { .stop = 0 };
	struct loopfs l;
	uint64_t dev = 0, fs = 0, fs1 = 0, fs2 = 0, fs3 = 0, df0, df1;
	uint32_t block = 0;
	char why[400] = "", why2[400] = "", why3[400] = "", path[128];
	pthread_t th;
	int fd, i, rc1, rc2, rc3, permitted = online_resize_permitted();

	if (permitted < 0 || loop_make(&l, 64, 1, 0) != 0) {
		fprintf(stderr, "test_grow_online: no loop device (not root?): nothing checked\n");
		return;
	}
	if (!permitted)
		fprintf(stderr, "test_grow_online: this machine refuses online ext4 resize (no CAP_SYS_RESOURCE?): "
				"checking the failed resize instead (the file system serves on at its old size)\n");
	ck_assert_int_eq(agent_shelf_fs_size(l.dev, &dev, &fs, &block), 0);
	ck_assert_uint_eq(dev, 64 * MIB);
	ck_assert_uint_eq(fs, 64 * MIB);
	ck_assert_uint_eq(block, 4096);
	/* as large as its device already: nothing to do */
	ck_assert_int_eq(agent_shelf_fs_grow(l.dev, 0, why, sizeof(why)), 0);
	df0 = df_bytes(l.mp);
	w.mp = l.mp;
	ck_assert_int_eq(pthread_create(&th, NULL, writer_main, &w), 0);
	usleep(200 * 1000);
	/* the device grows under the mounted, busy file system */
	loop_grow(&l, 128);
	rc1 = agent_shelf_fs_grow(l.dev, 0, why, sizeof(why));
	(void)agent_shelf_fs_size(l.dev, &dev, &fs1, NULL);
	df1 = df_bytes(l.mp);
	/* a limit below the device: the file system stops there */
	loop_grow(&l, 192);
	rc2 = agent_shelf_fs_grow(l.dev, 160 * MIB + 100, why2, sizeof(why2));
	(void)agent_shelf_fs_size(l.dev, &dev, &fs2, NULL);
	/* a limit below the file system: never a shrink */
	rc3 = agent_shelf_fs_grow(l.dev, 100 * MIB, why3, sizeof(why3));
	(void)agent_shelf_fs_size(l.dev, &dev, &fs3, NULL);
	usleep(200 * 1000);
	w.stop = 1;
	pthread_join(th, NULL);
	ck_assert_uint_eq(dev, 192 * MIB);
	if (permitted) {
		ck_assert_msg(rc1 == 0, "%s", why);
		ck_assert_uint_eq(fs1, 128 * MIB);
		ck_assert_msg(df1 >= df0 + 60 * MIB, "df: %llu before, %llu after", (unsigned long long)df0,
			      (unsigned long long)df1);
		ck_assert_msg(rc2 == 0, "%s", why2);
		ck_assert_uint_eq(fs2, 160 * MIB);
		ck_assert_msg(rc3 == 0, "%s", why3);
		ck_assert_uint_eq(fs3, 160 * MIB);
	} else {
		ck_assert_int_eq(rc1, -EIO);
		ck_assert_msg(strstr(why, "resize2fs") && strstr(why, "stays at 67108864 bytes"), "%s", why);
		ck_assert_uint_eq(fs1, 64 * MIB);
		ck_assert_uint_eq(df1, df0);
		ck_assert_int_eq(rc2, -EIO);
		ck_assert_uint_eq(fs3, 64 * MIB);
	}
	/* either way the client never saw an error, and what it wrote reads back */
	ck_assert_msg(w.err == 0, "the writer failed: %s", strerror(w.err));
	ck_assert_int_gt(w.files, 2);
	for (i = w.files > 39 ? w.files - 38 : 0; i < w.files; i++) {
		snprintf(path, sizeof(path), "%s/f%d", l.mp, i);
		fill(want, sizeof(want), i);
		ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
		ck_assert_int_eq(read(fd, got, sizeof(got)), (ssize_t)sizeof(got));
		close(fd);
		ck_assert_msg(memcmp(want, got, sizeof(got)) == 0, "%s differs", path);
	}
	loop_free(&l);
}
END_TEST

START_TEST(test_grow_refused)
{
	struct loopfs l;
	uint64_t dev = 0, fs = 0;
	char why[400] = "";

	/* no ext4 on the device: said so, nothing run */
	if (loop_make(&l, 16, 0, 0) != 0) {
		fprintf(stderr, "test_grow_refused: no loop device (not root?): nothing checked\n");
		return;
	}
	ck_assert_int_eq(agent_shelf_fs_size(l.dev, &dev, &fs, NULL), -EMEDIUMTYPE);
	ck_assert_int_ne(agent_shelf_fs_grow(l.dev, 0, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "superblock") != NULL, "%s", why);
	loop_free(&l);
	/* mounted read-only: resize2fs cannot grow it; the size stays, the reason is given */
	ck_assert_int_eq(loop_make(&l, 64, 1, 1), 0);
	loop_grow(&l, 96);
	why[0] = '\0';
	ck_assert_int_eq(agent_shelf_fs_grow(l.dev, 0, why, sizeof(why)), -EIO);
	ck_assert_msg(strstr(why, "resize2fs") && strstr(why, "stays at 67108864 bytes"), "%s", why);
	ck_assert_int_eq(agent_shelf_fs_size(l.dev, &dev, &fs, NULL), 0);
	ck_assert_uint_eq(fs, 64 * MIB);
	ck_assert_uint_eq(dev, 96 * MIB);
	loop_free(&l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agent_shelf_grow");
	TCase *tc = tcase_create("grow");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_grow_online);
	tcase_add_test(tc, test_grow_refused);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
