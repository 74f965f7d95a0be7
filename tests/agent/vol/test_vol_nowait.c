/* test_vol_nowait: vol_read_nowait (agent/vol/vol_io.c), the event loop's
 * first try of a READ (agent/smb/smb_read.c):
 * - a file in the page cache is read whole, as vol_read reads it, with eof;
 * - a file dropped from the page cache (fsync, POSIX_FADV_DONTNEED) answers
 *   -EAGAIN with nothing read; vol_read then reads it;
 * - past the end: 0 bytes, eof; a directory: -EISDIR.
 * Skipped where the file system keeps the pages (nothing to check). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define LEN (256u << 10)

static struct aqt_store ts;
static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };

/* Pages of path resident in the page cache. */
static size_t resident(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t n = 0, pages = (LEN + 4095) / 4096;
	unsigned char vec[(LEN + 4095) / 4096];
	void *m;

	ck_assert_int_ge(fd, 0);
	m = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mincore(m, LEN, vec), 0);
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(m, LEN);
	close(fd);
	return n;
}

START_TEST(test_nowait)
{
	struct vol_export *e;
	struct vol_obj dir, f;
	uint8_t *data = malloc(LEN), *got = malloc(LEN);
	char path[256];
	size_t n = 1;
	bool eof = false;
	int fd;

	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(got);
	aqt_store_init(&ts, 1, &(struct aqt_store_spec){ .id_prefix = "nw", .fsid = 100, .capacity = 1 << 30,
						       .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 3 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
	for (size_t i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 13u + (i >> 12));
	snprintf(path, sizeof(path), "%s/v0/f", ts.dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, LEN), (ssize_t)LEN);
	close(fd);
	ck_assert_ptr_nonnull(e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path)));
	ck_assert_int_eq(vol_root(e, &dir), 0);
	ck_assert_int_eq(vol_lookup(&dir, &root, "f", 1, &f), 0);
	/* cached (just written): read whole */
	ck_assert_int_eq(vol_read_nowait(&f, &root, 0, got, LEN, &n, &eof), 0);
	ck_assert_uint_eq(n, LEN);
	ck_assert(eof);
	ck_assert_int_eq(memcmp(got, data, LEN), 0);
	/* past the end; a directory */
	ck_assert_int_eq(vol_read_nowait(&f, &root, LEN + 1, got, 10, &n, &eof), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert(eof);
	ck_assert_int_eq(vol_read_nowait(&dir, &root, 0, got, 10, &n, &eof), -EISDIR);
	/* dropped from the page cache: -EAGAIN, nothing read; vol_read reads it */
	fd = open(path, O_RDONLY);
	ck_assert_int_eq(fdatasync(fd), 0);
	ck_assert_int_eq(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
	if (resident(path) != 0) {
		fprintf(stderr, "SKIP: the file system keeps the pages\n");
	} else {
		memset(got, 0, LEN);
		n = 1;
		ck_assert_int_eq(vol_read_nowait(&f, &root, 4096, got, LEN - 4096, &n, &eof), -EAGAIN);
		ck_assert_uint_eq(n, 0);
		ck_assert_int_eq(vol_read(&f, &root, 4096, got, LEN - 4096, &n, &eof), 0);
		ck_assert_uint_eq(n, LEN - 4096);
		ck_assert_int_eq(memcmp(got, data + 4096, LEN - 4096), 0);
	}
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&dir);
	vol_export_unref(e);
	aqt_store_cleanup(&ts);
	free(data);
	free(got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_nowait");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_nowait);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
