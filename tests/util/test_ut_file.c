/* Unit tests for util/ut_file.c: the new content replaces the old whole and
 * private (0600 whatever the umask); every failure leaves the old content and
 * no temporary (a write cut short by RLIMIT_FSIZE, a rename onto a folder, a
 * folder that cannot be written); create-once; remove; and kill -9 of a
 * writer in the middle leaves the old or the new content, never a mix. */
#include "util/ut_file.h"

#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ut_file_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "chmod -R u+w %s; rm -rf %s", dir, dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void path_of(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

/* The whole content of path (malloc'd, NUL-terminated) or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	p = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return p;
}

/* Files in dir: only the expected ones, never a temporary left behind. */
static int count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void assert_content(const char *path, const char *want)
{
	char *got = slurp(path, NULL);

	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_write_replaces_private)
{
	char p[128];
	struct stat st;
	aq_msg msg = { .text = "" };

	path_of(p, sizeof(p), "cred.json");
	umask(0);
	ck_assert_int_eq(ut_file_write(p, "old", 3, &msg), AQ_OK);
	ck_assert_int_eq(chmod(p, 0644), 0);
	ck_assert_int_eq(ut_file_write(p, "new text", 8, &msg), AQ_OK);
	assert_content(p, "new text");
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600); /* private again, whatever was there */
	ck_assert_int_eq(count_files(), 1);
	ck_assert_int_eq(ut_file_write(p, "", 0, &msg), AQ_OK); /* empty is a content too */
	assert_content(p, "");
	umask(022);
}
END_TEST

START_TEST(test_cut_write_keeps_old)
{
	char p[128];
	pid_t pid;
	int status;

	path_of(p, sizeof(p), "key");
	ck_assert_int_eq(ut_file_write(p, "the old key", 11, NULL), AQ_OK);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) { /* a writer whose disk "fills" after 4 KiB */
		static char big[1 << 20];
		struct rlimit rl = { .rlim_cur = 4096, .rlim_max = 4096 };
		aq_msg msg = { .text = "" };
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		memset(big, 'n', sizeof(big));
		setrlimit(RLIMIT_FSIZE, &rl);
		rc = ut_file_write(p, big, sizeof(big), &msg);
		_exit(rc == AQ_EIO && strstr(msg.text, "cannot write") ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	assert_content(p, "the old key"); /* the partial temporary never replaced it */
	ck_assert_int_eq(count_files(), 1);      /* and it is gone */
}
END_TEST

START_TEST(test_failed_rename_keeps_old)
{
	char p[128], inside[160];
	aq_msg msg = { .text = "" };

	path_of(p, sizeof(p), "sub");
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(inside, sizeof(inside), "%s/x", p);
	ck_assert_int_eq(ut_file_write(inside, "x", 1, NULL), AQ_OK); /* a non-empty folder */
	ck_assert_int_eq(ut_file_write(p, "data", 4, &msg), AQ_EIO);
	ck_assert_ptr_nonnull(strstr(msg.text, "cannot rename"));
	assert_content(inside, "x");
	ck_assert_int_eq(count_files(), 1); /* only "sub": no temporary beside it */
}
END_TEST

START_TEST(test_unwritable_folder)
{
	char p[128];
	aq_msg msg = { .text = "" };

	if (geteuid() == 0)
		return; /* root writes anyway: nothing to check */
	path_of(p, sizeof(p), "f");
	ck_assert_int_eq(ut_file_write(p, "old", 3, NULL), AQ_OK);
	ck_assert_int_eq(chmod(dir, 0500), 0);
	ck_assert_int_eq(ut_file_write(p, "new", 3, &msg), AQ_EIO);
	ck_assert_ptr_nonnull(strstr(msg.text, "cannot write"));
	chmod(dir, 0700);
	assert_content(p, "old");
}
END_TEST

START_TEST(test_create_once)
{
	char p[128];
	struct stat st;
	aq_msg msg = { .text = "" };

	path_of(p, sizeof(p), "server.key");
	ck_assert_int_eq(ut_file_create(p, "first", 5, &msg), AQ_OK);
	ck_assert_int_eq(ut_file_create(p, "second", 6, &msg), AQ_EEXIST);
	ck_assert_ptr_nonnull(strstr(msg.text, "exists already"));
	assert_content(p, "first");
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(count_files(), 1);
}
END_TEST

START_TEST(test_remove)
{
	char p[128];
	aq_msg msg = { .text = "" };

	path_of(p, sizeof(p), "state.json");
	ck_assert_int_eq(ut_file_write(p, "{}", 2, NULL), AQ_OK);
	ck_assert_int_eq(ut_file_remove(p, &msg), AQ_OK);
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(ut_file_remove(p, &msg), AQ_OK); /* already gone is fine */
}
END_TEST

START_TEST(test_long_path)
{
	char p[UT_FILE_PATH_MAX + 10];
	aq_msg msg = { .text = "" };

	memset(p, 'a', sizeof(p) - 1);
	p[sizeof(p) - 1] = '\0';
	ck_assert_int_eq(ut_file_write(p, "x", 1, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "too long"));
}
END_TEST

START_TEST(test_read)
{
	char p[128], *got = NULL;
	size_t len = 99;
	aq_msg msg = { .text = "" };

	path_of(p, sizeof(p), "pem");
	ck_assert_int_eq(ut_file_write(p, "abcd", 4, NULL), AQ_OK);
	ck_assert_int_eq(ut_file_read(p, 4, &got, &len, &msg), AQ_OK); /* exactly the cap */
	ck_assert_uint_eq(len, 4);
	ck_assert_str_eq(got, "abcd"); /* NUL-terminated */
	free(got);
	ck_assert_int_eq(ut_file_read(p, 3, &got, &len, &msg), AQ_ETOOBIG);
	ck_assert_ptr_null(got);
	ck_assert_ptr_nonnull(strstr(msg.text, "is larger than 3 bytes"));
	ck_assert_int_eq(ut_file_read(dir, 100, &got, NULL, &msg), AQ_EIO); /* a folder */
	ck_assert_ptr_null(got);
	path_of(p, sizeof(p), "none");
	ck_assert_int_eq(ut_file_read(p, 100, &got, NULL, &msg), AQ_ENOENT);
	ck_assert_ptr_nonnull(strstr(msg.text, "does not exist"));
	ck_assert_ptr_null(got);
}
END_TEST

/* kill -9 a process that rewrites the file with one of two 2 MiB contents,
 * over and over, at a few points in time: what is on disk is one of them. */
START_TEST(test_kill9_old_or_new)
{
	static char a[2 << 20], b[2 << 20];
	char p[128];

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	path_of(p, sizeof(p), "big");
	ck_assert_int_eq(ut_file_write(p, a, sizeof(a), NULL), AQ_OK);
	for (int round = 0; round < 5; round++) {
		pid_t pid = fork();
		size_t len;
		char *got;

		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			for (int i = 0;; i++)
				ut_file_write(p, i % 2 ? a : b, sizeof(a), NULL);
		usleep(20000 + 15000 * (useconds_t)round);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		got = slurp(p, &len);
		ck_assert_ptr_nonnull(got);
		ck_assert_uint_eq(len, sizeof(a));
		ck_assert(memcmp(got, a, len) == 0 || memcmp(got, b, len) == 0);
		free(got);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_file");
	TCase *tc = tcase_create("file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_write_replaces_private);
	tcase_add_test(tc, test_cut_write_keeps_old);
	tcase_add_test(tc, test_failed_rename_keeps_old);
	tcase_add_test(tc, test_unwritable_folder);
	tcase_add_test(tc, test_create_once);
	tcase_add_test(tc, test_remove);
	tcase_add_test(tc, test_long_path);
	tcase_add_test(tc, test_read);
	tcase_add_test(tc, test_kill9_old_or_new);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
