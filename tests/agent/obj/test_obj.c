/* test_obj: agent/obj/obj.c and its backends, one conformance suite for all.
 *
 * Without environment it runs against the directory backend in a temp
 * folder. tests/agent/tier/test_obj_s3.sh runs it again against s3rver behind
 * aq-latproxy, through these variables:
 *   AQ_OBJ_S3          endpoint to use (the proxy)
 *   AQ_OBJ_S3_PID      s3rver's PID (SIGSTOP/SIGCONT for the timeout case)
 *   AQ_OBJ_PROXY_PID   aq-latproxy's PID (SIGUSR1: down / up)
 *   AQ_OBJ_PROXY_LOG   aq-latproxy's --log file (SigV4 headers)
 *   AQ_OBJ_S3_ACCESS_KEY, AQ_OBJ_S3_SECRET_KEY   credentials (default S3RVER)
 *   AQ_OBJ_S3_VERIFIES_SIGV4=1   the store checks signatures (aq-s3lite, not
 *                      s3rver): a wrong secret must give -EACCES
 * Common cases: whole and ranged reads, reads at and past the end, 64
 * ranges in parallel, head, delete (also of a missing object), paged list
 * with prefix, overwrite, rejected keys and configs, counters. S3 only:
 * -EAGAIN when the store is down or hangs (within the timeout), -EACCES for
 * an unknown access key, SigV4 headers on every request. Directory only:
 * unfinished puts are invisible and stale ones are swept, symlinks are not
 * followed out of the root. Always: the cases against a scripted HTTP server
 * in test_obj_fake.c.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "agent/obj/obj.h"
#include "tests/agent/obj/obj_suite.h"
#include "tests/lib/aqt.h"

static char dir_root[256];
static const char *s3_endpoint;

static struct obj_cfg base_cfg(void)
{
	struct obj_cfg c = { 0 };

	if (s3_endpoint) {
		c.kind = OBJ_S3;
		snprintf(c.endpoint, sizeof c.endpoint, "%s", s3_endpoint);
		snprintf(c.bucket, sizeof c.bucket, "aq-test");
		snprintf(c.access_key, sizeof c.access_key, "%s", getenv("AQ_OBJ_S3_ACCESS_KEY") ? getenv("AQ_OBJ_S3_ACCESS_KEY") : "S3RVER");
		snprintf(c.secret_key, sizeof c.secret_key, "%s", getenv("AQ_OBJ_S3_SECRET_KEY") ? getenv("AQ_OBJ_S3_SECRET_KEY") : "S3RVER");
	} else {
		c.kind = OBJ_DIRECTORY;
		snprintf(c.path, sizeof c.path, "%s/store", dir_root);
	}
	c.timeout_ms = 3000;
	return c;
}

static struct obj_store *open_store(void)
{
	struct obj_cfg c = base_cfg();
	struct obj_store *s = NULL;

	ck_assert_int_eq(obj_open(&c, &s), 0);
	ck_assert_int_eq(obj_ensure_bucket(s), 0);
	return s;
}

/* obj_put, then, against s3rver, wait until a HEAD sees what was put:
 * s3rver answers a PUT of a buffer before its file is written (its
 * filesystem store resolves on writeStream.end(), not on the stream's
 * finish), so a HEAD or GET right after can see an empty object, where S3
 * and aq-s3lite read after write. The wait (at most 2 s) keeps this suite
 * testing our client, not the mock's race. */
static void put_ok(struct obj_store *s, const char *key, const void *buf, size_t len)
{
	uint64_t size = 0;

	ck_assert_int_eq(obj_put(s, key, buf, len), 0);
	if (!getenv("AQ_OBJ_S3_PID"))
		return;
	for (int i = 0; i < 200 && !(obj_head(s, key, &size) == 0 && size == len); i++)
		usleep(10000);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)((i * 7 + seed * 13 + (i >> 8)) & 0xff);
}

int test_obj_count_cb(void *arg, const char *key, uint64_t size)
{
	(*(size_t *)arg)++;
	return 0;
}

static size_t count(struct obj_store *s, const char *prefix)
{
	size_t n = 0;
	ck_assert_int_eq(obj_list(s, prefix, test_obj_count_cb, &n), 0);
	return n;
}

START_TEST(put_get_whole_and_ranged)
{
	struct obj_store *s = open_store();
	unsigned char data[100000], buf[100000];
	size_t got = 1;

	fill(data, sizeof data, 1);
	put_ok(s, "rw/a/obj", data, sizeof data);
	ck_assert_int_eq(obj_get(s, "rw/a/obj", 0, buf, sizeof buf, &got), 0);
	ck_assert_uint_eq(got, sizeof data);
	ck_assert(memcmp(buf, data, sizeof data) == 0);
	/* ranged, in the middle */
	ck_assert_int_eq(obj_get(s, "rw/a/obj", 12345, buf, 4096, &got), 0);
	ck_assert_uint_eq(got, 4096);
	ck_assert(memcmp(buf, data + 12345, 4096) == 0);
	/* across the end: short */
	ck_assert_int_eq(obj_get(s, "rw/a/obj", sizeof data - 10, buf, 4096, &got), 0);
	ck_assert_uint_eq(got, 10);
	ck_assert(memcmp(buf, data + sizeof data - 10, 10) == 0);
	/* at and past the end: empty */
	ck_assert_int_eq(obj_get(s, "rw/a/obj", sizeof data, buf, 10, &got), 0);
	ck_assert_uint_eq(got, 0);
	ck_assert_int_eq(obj_get(s, "rw/a/obj", sizeof data + 5000, buf, 10, &got), 0);
	ck_assert_uint_eq(got, 0);
	/* an empty object */
	put_ok(s, "rw/empty", "", 0);
	ck_assert_int_eq(obj_get(s, "rw/empty", 0, buf, 10, &got), 0);
	ck_assert_uint_eq(got, 0);
	/* missing */
	got = 7;
	ck_assert_int_eq(obj_get(s, "rw/missing", 0, buf, 10, &got), -ENOENT);
	ck_assert_uint_eq(got, 0);
	ck_assert_int_eq(obj_get(s, "nosuchdir/x", 0, buf, 10, &got), -ENOENT);
	obj_close(s);
}
END_TEST

START_TEST(get_many_parallel)
{
	enum { NOBJ = 4, OSIZE = 256 * 1024, NR = 64, RLEN = 16 * 1024 };
	struct obj_store *s = open_store();
	static unsigned char data[NOBJ][OSIZE], out[NR][RLEN];
	struct obj_range r[NR];
	char keys[NOBJ][32];

	for (unsigned i = 0; i < NOBJ; i++) {
		fill(data[i], OSIZE, i + 10);
		snprintf(keys[i], sizeof keys[i], "many/o%u", i);
		put_ok(s, keys[i], data[i], OSIZE);
	}
	for (unsigned k = 0; k < NR; k++)
		r[k] = (struct obj_range){ .key = keys[k % NOBJ], .off = (k / NOBJ) * RLEN, .buf = out[k], .len = RLEN,
					   .got = 99, .rc = 99 };
	/* the last one runs past the end of its object */
	r[NR - 1].off = OSIZE - 100;
	ck_assert_int_eq(obj_get_many(s, r, NR, 16), 0);
	for (unsigned k = 0; k < NR; k++) {
		size_t want = k == NR - 1 ? 100 : RLEN;
		ck_assert_int_eq(r[k].rc, 0);
		ck_assert_uint_eq(r[k].got, want);
		ck_assert_msg(memcmp(out[k], data[k % NOBJ] + r[k].off, want) == 0, "range %u differs", k);
	}
	/* one missing object: its rc, the others still read */
	r[5].key = "many/none";
	ck_assert_int_eq(obj_get_many(s, r, NR, 16), -ENOENT);
	ck_assert_int_eq(r[5].rc, -ENOENT);
	ck_assert_int_eq(r[4].rc, 0);
	ck_assert(memcmp(out[4], data[0] + r[4].off, RLEN) == 0);
	/* a bad key fails the call before any I/O */
	r[6].key = "../x";
	ck_assert_int_eq(obj_get_many(s, r, NR, 16), -EINVAL);
	ck_assert_int_eq(r[6].rc, -EINVAL);
	obj_close(s);
}
END_TEST

START_TEST(head_delete_overwrite)
{
	struct obj_store *s = open_store();
	unsigned char a[5000], b[300], buf[5000];
	uint64_t size = 1;
	size_t got;

	fill(a, sizeof a, 3);
	fill(b, sizeof b, 4);
	ck_assert_int_eq(obj_head(s, "hd/x", &size), -ENOENT);
	put_ok(s, "hd/x", a, sizeof a);
	ck_assert_int_eq(obj_head(s, "hd/x", &size), 0);
	ck_assert_uint_eq(size, sizeof a);
	/* overwrite with a shorter object: no tail of the old one remains */
	put_ok(s, "hd/x", b, sizeof b);
	ck_assert_int_eq(obj_head(s, "hd/x", &size), 0);
	ck_assert_uint_eq(size, sizeof b);
	ck_assert_int_eq(obj_get(s, "hd/x", 0, buf, sizeof buf, &got), 0);
	ck_assert_uint_eq(got, sizeof b);
	ck_assert(memcmp(buf, b, sizeof b) == 0);
	ck_assert_int_eq(obj_delete(s, "hd/x"), 0);
	ck_assert_int_eq(obj_head(s, "hd/x", &size), -ENOENT);
	ck_assert_int_eq(obj_get(s, "hd/x", 0, buf, sizeof buf, &got), -ENOENT);
	ck_assert_int_eq(obj_delete(s, "hd/x"), 0);       /* missing: fine */
	ck_assert_int_eq(obj_delete(s, "hd/never/was"), 0);
	ck_assert_uint_eq(count(s, "hd/"), 0);
	/* the folder a delete emptied can be written again */
	put_ok(s, "hd/x", a, 10);
	ck_assert_uint_eq(count(s, "hd/"), 1);
	obj_close(s);
}
END_TEST

struct seen {
	unsigned char hit[1100];
	size_t n, bad;
};

static int seen_cb(void *arg, const char *key, uint64_t size)
{
	struct seen *sn = arg;
	unsigned i;

	sn->n++;
	if (sscanf(key, "ls/p/k%04u", &i) != 1 || i >= 1100 || size != i % 7 || sn->hit[i]++)
		sn->bad++;
	return 0;
}

static int stop_cb(void *arg, const char *key, uint64_t size)
{
	return ++*(int *)arg == 3 ? 42 : 0;
}

START_TEST(list_prefix_paged)
{
	struct obj_store *s = open_store();
	struct seen sn = { { 0 }, 0, 0 };
	char key[32];
	int calls = 0;

	for (unsigned i = 0; i < 1100; i++) {
		snprintf(key, sizeof key, "ls/p/k%04u", i);
		put_ok(s, key, "0123456", i % 7);
	}
	put_ok(s, "ls/q/other", "x", 1);
	put_ok(s, "ls/pp", "x", 1);
	ck_assert_int_eq(obj_list(s, "ls/p/", seen_cb, &sn), 0);
	ck_assert_uint_eq(sn.bad, 0);
	ck_assert_uint_eq(sn.n, 1100);
	ck_assert_uint_eq(count(s, "ls/p/k000"), 10);
	ck_assert_uint_eq(count(s, "ls/p"), 1101);  /* a partial component matches "ls/pp" too */
	ck_assert_uint_eq(count(s, "ls/"), 1102);
	ck_assert_uint_eq(count(s, "ls/none/"), 0);
	ck_assert_uint_eq(count(s, "zz"), 0);
	ck_assert_int_eq(obj_list(s, "ls/", stop_cb, &calls), 42);
	ck_assert_int_eq(calls, 3);
	ck_assert_int_eq(obj_list(s, "../", test_obj_count_cb, &calls), -EINVAL);
	ck_assert_int_eq(obj_list(s, "/ls", test_obj_count_cb, &calls), -EINVAL);
	obj_close(s);
}
END_TEST

START_TEST(keys_rejected)
{
	struct obj_store *s = open_store();
	static const char *bad[] = { "", "..", ".", "../x", "a/../b", "a/./b", "a/..", "a//b", "/a", "a/",
				     "a b", "a\\b", "a~b", "caf\xc3\xa9", "a\nb", "a?b", "a%2e" };
	char long_key[OBJ_KEY_MAX + 2], ok_key[OBJ_KEY_MAX + 1], buf[4];
	uint64_t size;
	size_t got;

	size_t before = count(s, "");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(obj_put(s, bad[i], "x", 1) == -EINVAL, "put accepted \"%s\"", bad[i]);
		ck_assert_int_eq(obj_get(s, bad[i], 0, buf, 1, &got), -EINVAL);
		ck_assert_int_eq(obj_head(s, bad[i], &size), -EINVAL);
		ck_assert_int_eq(obj_delete(s, bad[i]), -EINVAL);
		ck_assert_int_eq(obj_key_check(bad[i]), -EINVAL);
	}
	memset(long_key, 'k', sizeof long_key - 1);
	long_key[sizeof long_key - 1] = '\0';
	ck_assert_int_eq(obj_put(s, long_key, "x", 1), -EINVAL);
	ck_assert_uint_eq(count(s, ""), before);  /* nothing was written */
	/* 1024 bytes exactly is fine (components short enough for any fs) */
	for (size_t i = 0; i < OBJ_KEY_MAX; i++)
		ok_key[i] = i % 128 == 127 ? '/' : (char)('a' + i % 26);
	ok_key[OBJ_KEY_MAX - 1] = 'z';
	ok_key[OBJ_KEY_MAX] = '\0';
	put_ok(s, ok_key, "xyz", 3);
	ck_assert_int_eq(obj_head(s, ok_key, &size), 0);
	ck_assert_uint_eq(size, 3);
	put_ok(s, "ok/A-Z_a.z-0.9/..x/.y", "1", 1);
	ck_assert_int_eq(obj_head(s, "ok/A-Z_a.z-0.9/..x/.y", &size), 0);
	obj_close(s);
}
END_TEST

START_TEST(config_rejected)
{
	struct obj_store *s = (struct obj_store *)1;
	struct obj_cfg c = { 0 };

	ck_assert_int_eq(obj_open(&c, &s), -EINVAL);
	ck_assert_ptr_null(s);
	c.kind = OBJ_DIRECTORY;
	ck_assert_int_eq(obj_open(&c, &s), -EINVAL);
	snprintf(c.path, sizeof c.path, "relative/path");
	ck_assert_int_eq(obj_open(&c, &s), -EINVAL);
	c = (struct obj_cfg){ .kind = OBJ_S3 };
	snprintf(c.endpoint, sizeof c.endpoint, "http://127.0.0.1:1");
	snprintf(c.access_key, sizeof c.access_key, "k");
	snprintf(c.secret_key, sizeof c.secret_key, "s");
	snprintf(c.bucket, sizeof c.bucket, "Bad_Bucket");
	ck_assert_int_eq(obj_open(&c, &s), -EINVAL);
	snprintf(c.bucket, sizeof c.bucket, "ok-bucket");
	snprintf(c.endpoint, sizeof c.endpoint, "ftp://127.0.0.1:1");
	ck_assert_int_eq(obj_open(&c, &s), -EINVAL);
	snprintf(c.endpoint, sizeof c.endpoint, "http://127.0.0.1:1");
	snprintf(c.region, sizeof c.region, "us east");
	ck_assert_int_eq(obj_open(&c, &s), -EINVAL);
	c.region[0] = '\0';
	c.secret_key[0] = '\0';
	ck_assert_int_eq(obj_open(&c, &s), -EINVAL);
	snprintf(c.secret_key, sizeof c.secret_key, "s");
	/* a valid config opens without any network I/O (nothing listens on :1) */
	ck_assert_int_eq(obj_open(&c, &s), 0);
	ck_assert_str_eq(obj_describe(s), "s3 http://127.0.0.1:1/ok-bucket");
	obj_close(s);
}
END_TEST

START_TEST(counters)
{
	struct obj_store *s = open_store();
	uint64_t put, get;
	char buf[100];
	size_t got;

	obj_counters(s, &put, &get);
	ck_assert_uint_eq(put, 0);
	ck_assert_uint_eq(get, 0);
	put_ok(s, "cnt/a", "0123456789", 10);
	ck_assert_int_eq(obj_get(s, "cnt/a", 2, buf, sizeof buf, &got), 0);
	ck_assert_int_eq(obj_put(s, "../bad", "0123456789", 10), -EINVAL);
	obj_counters(s, &put, &get);
	ck_assert_uint_eq(put, 10);
	ck_assert_uint_eq(get, 8);
	obj_close(s);
}
END_TEST

struct worker {
	struct obj_store *s;
	unsigned id;
	int failures;
};

/* Retries -EAGAIN as the tiering engine does: s3rver answers 500 now and
 * then to deletes running at once (its file store prunes empty folders
 * racily), and 500 is -EAGAIN by contract. */
static int del_retry(struct obj_store *s, const char *key)
{
	int rc;
	for (int i = 0; i < 10 && (rc = obj_delete(s, key)) == -EAGAIN; i++)
		usleep(20000);
	return rc;
}

/* Each thread writes, reads back, lists and deletes its own keys, all on
 * the one shared store. */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned char data[20000], buf[20000];
	char key[64], prefix[32];
	size_t got, n;

	snprintf(prefix, sizeof prefix, "mt/w%u/", w->id);
	for (unsigned i = 0; i < 20; i++) {
		snprintf(key, sizeof key, "mt/w%u/k%u", w->id, i);
		fill(data, sizeof data, w->id * 100 + i);
		if (obj_put(w->s, key, data, sizeof data) != 0 ||
		    obj_get(w->s, key, 0, buf, sizeof buf, &got) != 0 || got != sizeof data ||
		    memcmp(buf, data, sizeof data) != 0)
			w->failures++;
	}
	n = 0;
	int rc = obj_list(w->s, prefix, test_obj_count_cb, &n);
	if (rc != 0 || n != 20) {
		fprintf(stderr, "list %s: rc %d, %zu keys\n", prefix, rc, n);
		w->failures++;
	}
	for (unsigned i = 0; i < 20; i++) {
		snprintf(key, sizeof key, "mt/w%u/k%u", w->id, i);
		if (del_retry(w->s, key) != 0)
			w->failures++;
	}
	return NULL;
}

START_TEST(threads_share_a_store)
{
	struct obj_store *s = open_store();
	struct worker w[8];
	pthread_t t[8];
	uint64_t put, get;

	for (unsigned i = 0; i < 8; i++) {
		w[i] = (struct worker){ s, i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	}
	for (unsigned i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (unsigned i = 0; i < 8; i++) {
		char err[256];
		obj_last_error(s, err, sizeof err);
		ck_assert_msg(w[i].failures == 0, "thread %u: %d failures; last error: %s", i, w[i].failures, err);
	}
	obj_counters(s, &put, &get);
	ck_assert_uint_eq(put, 8 * 20 * 20000);
	ck_assert_uint_eq(get, 8 * 20 * 20000);
	ck_assert_uint_eq(count(s, "mt/"), 0);
	obj_close(s);
}
END_TEST

/* ---- S3 only ---- */

static pid_t env_pid(const char *name)
{
	const char *v = getenv(name);
	return v ? (pid_t)strtol(v, NULL, 10) : 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits (max ~5 s) until the proxy's port accepts (want_open) or refuses. */
static void wait_port(int want_open)
{
	const char *colon = strrchr(s3_endpoint, ':');
	struct sockaddr_in a = { .sin_family = AF_INET };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)strtoul(colon + 1, NULL, 10));
	for (int i = 0; i < 100; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), open_now;
		open_now = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
		close(fd);
		if (open_now == want_open)
			return;
		usleep(50000);
	}
	ck_abort_msg("proxy port never became %s", want_open ? "open" : "closed");
}

START_TEST(s3_down_is_eagain)
{
	pid_t proxy = env_pid("AQ_OBJ_PROXY_PID");
	struct obj_store *s = open_store();
	char buf[16], err[256];
	size_t got;

	ck_assert_int_gt(proxy, 0);
	ck_assert_int_eq(obj_put(s, "down/x", "abc", 3), 0);
	ck_assert_int_eq(kill(proxy, SIGUSR1), 0);  /* down */
	wait_port(0);
	double t0 = now_s();
	ck_assert_int_eq(obj_get(s, "down/x", 0, buf, 3, &got), -EAGAIN);
	ck_assert_int_eq(obj_put(s, "down/y", "abc", 3), -EAGAIN);
	ck_assert_double_lt(now_s() - t0, 3.0);
	obj_last_error(s, err, sizeof err);
	ck_assert_msg(strstr(err, "down/y") != NULL, "last error: %s", err);
	ck_assert_int_eq(kill(proxy, SIGUSR1), 0);  /* up */
	wait_port(1);
	ck_assert_int_eq(obj_get(s, "down/x", 0, buf, 3, &got), 0);
	ck_assert_uint_eq(got, 3);
	obj_close(s);
}
END_TEST

/* Until every thread of pid is stopped (max ~2 s). SIGSTOP stops a
 * multithreaded store (aq-s3lite) only once one of its threads runs the
 * group stop; until then another thread may still answer a request. */
static void wait_stopped(pid_t pid)
{
	char path[64], line[512];

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	for (int i = 0; i < 200; i++) {
		DIR *d = opendir(path);
		struct dirent *de;
		int running = 0;

		ck_assert_ptr_nonnull(d);
		while ((de = readdir(d)) != NULL) {
			char stat[320];
			const char *rp;
			FILE *f;
			if (de->d_name[0] == '.')
				continue;
			snprintf(stat, sizeof stat, "%s/%s/stat", path, de->d_name);
			if (!(f = fopen(stat, "r")))
				continue;  /* thread gone */
			if (fgets(line, sizeof line, f) && (rp = strrchr(line, ')')) != NULL && rp[1] == ' ' && rp[2] != 'T' &&
			    rp[2] != 't')
				running = 1;
			fclose(f);
		}
		closedir(d);
		if (!running)
			return;
		usleep(10000);
	}
	ck_abort_msg("pid %d did not stop", (int)pid);
}

START_TEST(s3_hang_times_out)
{
	pid_t s3 = env_pid("AQ_OBJ_S3_PID");
	struct obj_cfg c = base_cfg();
	struct obj_store *s = NULL;
	char buf[16];
	size_t got;

	ck_assert_int_gt(s3, 0);
	c.timeout_ms = 1000;
	ck_assert_int_eq(obj_open(&c, &s), 0);
	ck_assert_int_eq(obj_ensure_bucket(s), 0);
	ck_assert_int_eq(obj_put(s, "hang/x", "abc", 3), 0);
	ck_assert_int_eq(kill(s3, SIGSTOP), 0);
	wait_stopped(s3);
	double t0 = now_s();
	int rc = obj_get(s, "hang/x", 0, buf, 3, &got);
	double el = now_s() - t0;
	kill(s3, SIGCONT);
	ck_assert_int_eq(rc, -EAGAIN);
	ck_assert_double_ge(el, 0.9);
	ck_assert_double_lt(el, 2.5);
	ck_assert_int_eq(obj_get(s, "hang/x", 0, buf, 3, &got), 0);
	obj_close(s);
}
END_TEST

START_TEST(s3_wrong_key_is_eacces)
{
	struct obj_cfg c = base_cfg();
	struct obj_store *s = NULL;
	char buf[4], err[256];
	size_t got;

	snprintf(c.access_key, sizeof c.access_key, "NOT-THE-KEY");
	ck_assert_int_eq(obj_open(&c, &s), 0);
	ck_assert_int_eq(obj_put(s, "acc/x", "abc", 3), -EACCES);
	ck_assert_int_eq(obj_get(s, "acc/x", 0, buf, 3, &got), -EACCES);
	obj_last_error(s, err, sizeof err);
	ck_assert_msg(strstr(err, "403") != NULL, "last error: %s", err);
	obj_close(s);
}
END_TEST

/* Only against a store that verifies signatures (aq-s3lite): the right
 * access key with a wrong secret is refused (403 SignatureDoesNotMatch),
 * while the right secret works on the same store. */
START_TEST(s3_wrong_secret_is_eacces)
{
	struct obj_cfg c = base_cfg();
	struct obj_store *s = NULL;
	char buf[4], err[256];
	size_t got, n = 0;
	uint64_t size;

	ck_assert_int_eq(obj_open(&c, &s), 0);
	ck_assert_int_eq(obj_ensure_bucket(s), 0);
	ck_assert_int_eq(obj_put(s, "sec/x", "abc", 3), 0);
	obj_close(s);
	s = NULL;
	snprintf(c.secret_key, sizeof c.secret_key, "%s-wrong", base_cfg().secret_key);
	ck_assert_int_eq(obj_open(&c, &s), 0);
	ck_assert_int_eq(obj_put(s, "sec/y", "abc", 3), -EACCES);
	ck_assert_int_eq(obj_get(s, "sec/x", 0, buf, 3, &got), -EACCES);
	ck_assert_int_eq(obj_list(s, "sec/", test_obj_count_cb, &n), -EACCES);
	ck_assert_int_eq(obj_delete(s, "sec/x"), -EACCES);
	obj_last_error(s, err, sizeof err);
	ck_assert_msg(strstr(err, "403") != NULL, "last error: %s", err);
	obj_close(s);
	/* nothing changed: x is still there with its bytes, y never came */
	s = open_store();
	ck_assert_int_eq(obj_get(s, "sec/x", 0, buf, 3, &got), 0);
	ck_assert_uint_eq(got, 3);
	ck_assert_int_eq(memcmp(buf, "abc", 3), 0);
	ck_assert_int_eq(obj_head(s, "sec/y", &size), -ENOENT);
	obj_close(s);
}
END_TEST

START_TEST(s3_requests_are_sigv4)
{
	const char *log = getenv("AQ_OBJ_PROXY_LOG");
	struct obj_store *s = open_store();
	char line[1024];
	size_t n = 0, signed_n = 0, puts = 0;
	FILE *f;

	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(obj_put(s, "sig/x", "abc", 3), 0);
	obj_close(s);
	ck_assert_ptr_nonnull(f = fopen(log, "r"));
	while (fgets(line, sizeof line, f)) {
		n++;
		if (strstr(line, " AWS4-HMAC-SHA256 Credential=") &&
		    strstr(line, "/us-east-1/s3/aws4_request"))
			signed_n++;
		if (strncmp(line, "PUT /aq-test/sig/x ", 19) == 0)
			puts++;
	}
	fclose(f);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(puts, 1);
	ck_assert_uint_eq(signed_n, n);  /* every request carries SigV4 */
}
END_TEST

/* Connections are reused: across obj_get calls and across obj_get_many
 * batches (counted in the proxy's log). */
START_TEST(s3_keeps_connections)
{
	const char *log = getenv("AQ_OBJ_PROXY_LOG");
	struct obj_store *s = open_store();
	static char bufs[32][1024];
	struct obj_range r[32];
	unsigned long conns[256];
	size_t nconn = 0, gets = 0, got;
	char line[1024];
	FILE *f;

	ck_assert_ptr_nonnull(log);
	ck_assert_int_eq(obj_put(s, "ka/o", bufs[0], sizeof bufs[0]), 0);
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(obj_get(s, "ka/o", 0, bufs[0], 10, &got), 0);
	for (int b = 0; b < 4; b++) {
		for (int i = 0; i < 32; i++)
			r[i] = (struct obj_range){ .key = "ka/o", .off = (uint64_t)i, .buf = bufs[i], .len = 100 };
		ck_assert_int_eq(obj_get_many(s, r, 32, 8), 0);
	}
	obj_close(s);
	ck_assert_ptr_nonnull(f = fopen(log, "r"));
	while (fgets(line, sizeof line, f)) {
		const char *c = strstr(line, " conn=");
		if (strncmp(line, "GET /aq-test/ka/o ", 18) != 0 || !c)
			continue;
		unsigned long id = strtoul(c + 6, NULL, 10);
		size_t i;
		gets++;
		for (i = 0; i < nconn && conns[i] != id; i++)
			;
		if (i == nconn && nconn < 256)
			conns[nconn++] = id;
	}
	fclose(f);
	ck_assert_uint_eq(gets, 20 + 4 * 32);
	/* one for the single gets, at most `parallel` for the batches */
	ck_assert_msg(nconn <= 1 + 8, "%zu connections for %zu GETs", nconn, gets);
}
END_TEST

/* ---- directory only ---- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(dir_unfinished_put_invisible)
{
	struct obj_store *s = open_store();
	char path[512], buf[16];
	struct stat st;
	size_t got;

	put_ok(s, "tmp/a/x", "old", 3);
	/* a put of tmp/a/x and one of tmp/a/y killed before their rename */
	snprintf(path, sizeof path, "%s/store/tmp/a/~tmp.999.1", dir_root);
	write_file(path, "new!");
	snprintf(path, sizeof path, "%s/store/tmp/a/~tmp.999.2", dir_root);
	write_file(path, "yyyy");
	ck_assert_int_eq(obj_get(s, "tmp/a/x", 0, buf, sizeof buf, &got), 0);
	ck_assert_uint_eq(got, 3);
	ck_assert(memcmp(buf, "old", 3) == 0);
	ck_assert_int_eq(obj_get(s, "tmp/a/y", 0, buf, sizeof buf, &got), -ENOENT);
	ck_assert_int_eq(obj_get(s, "tmp/a/~tmp.999.2", 0, buf, sizeof buf, &got), -EINVAL);
	ck_assert_uint_eq(count(s, "tmp/"), 1);
	/* a fresh one stays (a put may be running), a stale one is swept */
	struct timespec old[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
	ck_assert_int_eq(utimensat(AT_FDCWD, path, old, 0), 0);
	ck_assert_uint_eq(count(s, "tmp/"), 1);
	ck_assert_int_eq(stat(path, &st), -1);
	snprintf(path, sizeof path, "%s/store/tmp/a/~tmp.999.1", dir_root);
	ck_assert_int_eq(stat(path, &st), 0);
	obj_close(s);
}
END_TEST

START_TEST(dir_never_leaves_root)
{
	struct obj_store *s = open_store();
	char out[512], link[512], buf[16];
	struct stat st;
	uint64_t size;
	size_t got;

	snprintf(out, sizeof out, "%s/outside", dir_root);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(link, sizeof link, "%s/outside/secret", dir_root);
	write_file(link, "secret");
	snprintf(link, sizeof link, "%s/store/esc", dir_root);
	ck_assert_int_eq(symlink(out, link), 0);
	snprintf(link, sizeof link, "%s/store/file-link", dir_root);
	snprintf(out, sizeof out, "%s/outside/secret", dir_root);
	ck_assert_int_eq(symlink(out, link), 0);
	ck_assert_int_eq(obj_get(s, "esc/secret", 0, buf, sizeof buf, &got), -ENOENT);
	ck_assert_int_eq(obj_head(s, "file-link", &size), -ENOENT);
	ck_assert_int_ne(obj_put(s, "esc/new", "x", 1), 0);
	char err[256];
	obj_last_error(s, err, sizeof err);
	ck_assert_msg(strncmp(err, "put esc/new: ", 13) == 0, "last error: %s", err);
	snprintf(out, sizeof out, "%s/outside/new", dir_root);
	ck_assert_int_eq(stat(out, &st), -1);
	ck_assert_int_eq(obj_delete(s, "esc/secret"), 0);
	snprintf(out, sizeof out, "%s/outside/secret", dir_root);
	ck_assert_int_eq(stat(out, &st), 0);
	ck_assert_uint_eq(count(s, "esc"), 0);
	obj_close(s);
}
END_TEST


static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

int main(void)
{
	Suite *su = suite_create(getenv("AQ_OBJ_S3") ? "obj (s3)" : "obj (directory)");
	TCase *tc = tcase_create("conformance");
	int failed;

	s3_endpoint = getenv("AQ_OBJ_S3");
	snprintf(dir_root, sizeof dir_root, "%s/aq-test-obj.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir_root)) {
		perror("mkdtemp");
		return 1;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, put_get_whole_and_ranged);
	tcase_add_test(tc, get_many_parallel);
	tcase_add_test(tc, head_delete_overwrite);
	tcase_add_test(tc, list_prefix_paged);
	tcase_add_test(tc, keys_rejected);
	tcase_add_test(tc, config_rejected);
	tcase_add_test(tc, counters);
	tcase_add_test(tc, threads_share_a_store);
	test_obj_fake_add(tc);
	if (s3_endpoint) {
		tcase_add_test(tc, s3_down_is_eagain);
		tcase_add_test(tc, s3_hang_times_out);
		tcase_add_test(tc, s3_wrong_key_is_eacces);
		if (getenv("AQ_OBJ_S3_VERIFIES_SIGV4") && strcmp(getenv("AQ_OBJ_S3_VERIFIES_SIGV4"), "1") == 0)
			tcase_add_test(tc, s3_wrong_secret_is_eacces);
		tcase_add_test(tc, s3_requests_are_sigv4);
		tcase_add_test(tc, s3_keeps_connections);
	} else {
		tcase_add_test(tc, dir_unfinished_put_invisible);
		tcase_add_test(tc, dir_never_leaves_root);
	}
	suite_add_tcase(su, tc);
	failed = aqt_run(su);
	nftw(dir_root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return failed;
}
