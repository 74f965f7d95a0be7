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
 * followed out of the root. Always, against a scripted HTTP server in this
 * process: how answers map to errors (503 SlowDown, 500, 400, 403, bad
 * lengths, malformed XML), a store that ignores Range, and the paged list's
 * continuation token on the wire; and every kind of request is signed
 * right (the signature recomputed here, as S3 does it).
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

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)((i * 7 + seed * 13 + (i >> 8)) & 0xff);
}

static int count_cb(void *arg, const char *key, uint64_t size)
{
	(*(size_t *)arg)++;
	return 0;
}

static size_t count(struct obj_store *s, const char *prefix)
{
	size_t n = 0;
	ck_assert_int_eq(obj_list(s, prefix, count_cb, &n), 0);
	return n;
}

START_TEST(put_get_whole_and_ranged)
{
	struct obj_store *s = open_store();
	unsigned char data[100000], buf[100000];
	size_t got = 1;

	fill(data, sizeof data, 1);
	ck_assert_int_eq(obj_put(s, "rw/a/obj", data, sizeof data), 0);
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
	ck_assert_int_eq(obj_put(s, "rw/empty", "", 0), 0);
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
		ck_assert_int_eq(obj_put(s, keys[i], data[i], OSIZE), 0);
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
	ck_assert_int_eq(obj_put(s, "hd/x", a, sizeof a), 0);
	ck_assert_int_eq(obj_head(s, "hd/x", &size), 0);
	ck_assert_uint_eq(size, sizeof a);
	/* overwrite with a shorter object: no tail of the old one remains */
	ck_assert_int_eq(obj_put(s, "hd/x", b, sizeof b), 0);
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
	ck_assert_int_eq(obj_put(s, "hd/x", a, 10), 0);
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
		ck_assert_int_eq(obj_put(s, key, "0123456", i % 7), 0);
	}
	ck_assert_int_eq(obj_put(s, "ls/q/other", "x", 1), 0);
	ck_assert_int_eq(obj_put(s, "ls/pp", "x", 1), 0);
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
	ck_assert_int_eq(obj_list(s, "../", count_cb, &calls), -EINVAL);
	ck_assert_int_eq(obj_list(s, "/ls", count_cb, &calls), -EINVAL);
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
	ck_assert_int_eq(obj_put(s, ok_key, "xyz", 3), 0);
	ck_assert_int_eq(obj_head(s, ok_key, &size), 0);
	ck_assert_uint_eq(size, 3);
	ck_assert_int_eq(obj_put(s, "ok/A-Z_a.z-0.9/..x/.y", "1", 1), 0);
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
	ck_assert_int_eq(obj_put(s, "cnt/a", "0123456789", 10), 0);
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
	int rc = obj_list(w->s, prefix, count_cb, &n);
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
	ck_assert_int_eq(obj_list(s, "sec/", count_cb, &n), -EACCES);
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

	ck_assert_int_eq(obj_put(s, "tmp/a/x", "old", 3), 0);
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

/* ---- a scripted S3 server: answers each request with the next canned
 * answer and keeps the request lines ---- */

/* One canned answer: status line text, extra header lines, body. */
struct fake_answer {
	const char *status, *headers, *body;
};

struct fake {
	int lfd;
	unsigned port;
	const struct fake_answer *answers;
	size_t n, next;
	char requests[8][512];
	char raw[8][8192];  /* whole requests, NUL-terminated (bodies are text here) */
	size_t raw_len[8];
	pthread_t t;
};

static void *fake_run(void *arg)
{
	struct fake *f = arg;

	for (size_t i = 0; i < f->n; i++) {
		int c = accept(f->lfd, NULL, NULL);
		char req[8192];
		size_t len = 0;
		if (c < 0)
			break;
		/* read the head (bodies here are small and come with it or right after) */
		while (len < sizeof req - 1) {
			ssize_t r = recv(c, req + len, sizeof req - 1 - len, 0);
			if (r <= 0)
				break;
			len += (size_t)r;
			req[len] = '\0';
			char *eoh = strstr(req, "\r\n\r\n");
			if (!eoh)
				continue;
			const char *cl = strcasestr(req, "\ncontent-length:");
			size_t body = cl && cl < eoh ? strtoul(cl + 16, NULL, 10) : 0;
			if (len >= (size_t)(eoh + 4 - req) + body)
				break;
		}
		req[len] = '\0';
		snprintf(f->requests[i], sizeof f->requests[i], "%.*s", (int)strcspn(req, "\r"), req);
		memcpy(f->raw[i], req, len + 1);
		f->raw_len[i] = len;
		const struct fake_answer *a = &f->answers[i];
		char out[4096];
		int olen = snprintf(out, sizeof out, "HTTP/1.1 %s\r\nConnection: close\r\n%sContent-Length: %zu\r\n\r\n%s",
				    a->status, a->headers, strlen(a->body), a->body);
		send(c, out, (size_t)olen, MSG_NOSIGNAL);
		close(c);
	}
	return NULL;
}

static struct obj_store *fake_open(struct fake *f, const struct fake_answer *answers, size_t n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof a;
	struct obj_cfg c = { .kind = OBJ_S3, .timeout_ms = 3000 };
	struct obj_store *s = NULL;

	memset(f, 0, sizeof *f);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(f->lfd = socket(AF_INET, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(f->lfd, 8), 0);
	ck_assert_int_eq(getsockname(f->lfd, (struct sockaddr *)&a, &alen), 0);
	f->port = ntohs(a.sin_port);
	f->answers = answers;
	f->n = n;
	ck_assert_int_eq(pthread_create(&f->t, NULL, fake_run, f), 0);
	snprintf(c.endpoint, sizeof c.endpoint, "http://127.0.0.1:%u", f->port);
	snprintf(c.bucket, sizeof c.bucket, "bkt");
	snprintf(c.access_key, sizeof c.access_key, "AK");
	snprintf(c.secret_key, sizeof c.secret_key, "SK");
	ck_assert_int_eq(obj_open(&c, &s), 0);
	return s;
}

static void fake_close(struct fake *f, struct obj_store *s)
{
	obj_close(s);
	pthread_join(f->t, NULL);
	close(f->lfd);
}

#define ERR(status, code) { status, "", "<Error><Code>" code "</Code><Message>m</Message></Error>" }

START_TEST(s3_answers_map_to_errors)
{
	static const struct fake_answer answers[] = {
		ERR("503 Slow Down", "SlowDown"),
		{ "500 Internal", "", "" },
		ERR("400 Bad Request", "RequestTimeout"),
		ERR("400 Bad Request", "InvalidArgument"),
		ERR("403 Forbidden", "AccessDenied"),
		ERR("404 Not Found", "NoSuchKey"),
		{ "301 Moved", "Location: http://x/\r\n", "" },
	};
	struct fake f;
	struct obj_store *s = fake_open(&f, answers, 7);
	char buf[8], err[256];
	size_t got;

	ck_assert_int_eq(obj_put(s, "k/a", "abc", 3), -EAGAIN);
	obj_last_error(s, err, sizeof err);
	ck_assert_msg(strstr(err, "503") && strstr(err, "SlowDown"), "last error: %s", err);
	ck_assert_int_eq(obj_get(s, "k/a", 0, buf, 3, &got), -EAGAIN);
	ck_assert_int_eq(obj_get(s, "k/a", 0, buf, 3, &got), -EAGAIN);
	ck_assert_int_eq(obj_get(s, "k/a", 0, buf, 3, &got), -EIO);
	ck_assert_int_eq(obj_delete(s, "k/a"), -EACCES);
	ck_assert_int_eq(obj_delete(s, "k/a"), 0);  /* 404 on delete: already gone */
	ck_assert_int_eq(obj_get(s, "k/a", 0, buf, 3, &got), -EIO);  /* redirects are not followed */
	fake_close(&f, s);
	ck_assert_str_eq(f.requests[0], "PUT /bkt/k/a HTTP/1.1");
	ck_assert_str_eq(f.requests[4], "DELETE /bkt/k/a HTTP/1.1");
}
END_TEST

START_TEST(s3_range_answers_checked)
{
	static const struct fake_answer answers[] = {
		/* Range ignored: the whole object; obj cuts out [3, 7) */
		{ "200 OK", "", "0123456789" },
		/* a 206 shorter than its Content-Range says */
		{ "206 Partial Content", "Content-Range: bytes 0-3/10\r\n", "01" },
		/* past the end */
		{ "416 Range Not Satisfiable", "Content-Range: bytes */10\r\n", "" },
		/* more bytes than asked for */
		{ "200 OK", "", "0123456789" },
	};
	struct fake f;
	struct obj_store *s = fake_open(&f, answers, 4);
	char buf[8];
	size_t got;

	ck_assert_int_eq(obj_get(s, "r/x", 3, buf, 4, &got), 0);
	ck_assert_uint_eq(got, 4);
	ck_assert(memcmp(buf, "3456", 4) == 0);
	ck_assert_int_eq(obj_get(s, "r/x", 0, buf, 4, &got), -EIO);
	ck_assert_int_eq(obj_get(s, "r/x", 20, buf, 4, &got), 0);
	ck_assert_uint_eq(got, 0);
	ck_assert_int_eq(obj_get(s, "r/x", 0, buf, 4, &got), 0);
	ck_assert_uint_eq(got, 4);
	ck_assert(memcmp(buf, "0123", 4) == 0);
	fake_close(&f, s);
	ck_assert_str_eq(f.requests[0], "GET /bkt/r/x HTTP/1.1");
}
END_TEST


START_TEST(s3_list_pages_and_tokens)
{
	static const struct fake_answer answers[] = {
		{ "200 OK", "", "<ListBucketResult><IsTruncated>true</IsTruncated>"
		  "<NextContinuationToken>a+b/=&amp;</NextContinuationToken>"
		  "<Contents><Key>p/1</Key><Size>1</Size></Contents></ListBucketResult>" },
		{ "200 OK", "", "<ListBucketResult><IsTruncated>false</IsTruncated>"
		  "<Contents><Key>p/2</Key><Size>22</Size></Contents></ListBucketResult>" },
		{ "200 OK", "", "<ListBucketResult><Contents><Key>p/3<" },
	};
	struct fake f;
	struct obj_store *s = fake_open(&f, answers, 3);
	size_t n = 0;

	ck_assert_int_eq(obj_list(s, "p/", count_cb, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(obj_list(s, "p/", count_cb, &n), -EIO);
	fake_close(&f, s);
	ck_assert_str_eq(f.requests[0], "GET /bkt?list-type=2&max-keys=1000&prefix=p%2F HTTP/1.1");
	ck_assert_str_eq(f.requests[1],
			 "GET /bkt?continuation-token=a%2Bb%2F%3D%26&list-type=2&max-keys=1000&prefix=p%2F HTTP/1.1");
}
END_TEST

/* ---- an independent SigV4 check (s3rver does not verify signatures) ---- */

static void hex(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void sha256_hex(const void *b, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned len = 0;
	EVP_Digest(b, n, md, &len, EVP_sha256(), NULL);
	hex(md, 32, out);
}

static void hmac(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
	unsigned len = 32;
	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

/* Value of header `name` (lower case) in raw, trimmed, into out; 0 if found. */
static int header(const char *raw, const char *name, char *out, size_t cap)
{
	const char *eoh = strstr(raw, "\r\n\r\n");
	size_t n = strlen(name);

	for (const char *p = strstr(raw, "\r\n"); p && p < eoh; p = strstr(p + 2, "\r\n")) {
		if (strncasecmp(p + 2, name, n) != 0 || p[2 + n] != ':')
			continue;
		const char *v = p + 3 + n, *end = strstr(v, "\r\n");
		while (*v == ' ')
			v++;
		while (end > v && end[-1] == ' ')
			end--;
		snprintf(out, cap, "%.*s", (int)(end - v), v);
		return 0;
	}
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Recomputes the request's AWS SigV4 signature as S3 would (canonical
 * request with the query sorted, the signed headers, the payload hash the
 * request declares) and checks it, the payload hash against the body and
 * Content-MD5 when present. NULL when all is well, else what is wrong. */
static const char *sigv4_verify(const char *raw, size_t len, const char *secret, const char *scope_tail)
{
	static char why[256];
	char method[16], target[2048], auth[1024], date[32], payload[80], canon[8192], sts[512], cred[256];
	char signed_hdrs[512], sig[80], body_hash[65], want_sig[65];
	const char *body = strstr(raw, "\r\n\r\n") + 4;
	size_t blen = len - (size_t)(body - raw);

	if (sscanf(raw, "%15s %2047s", method, target) != 2 || header(raw, "authorization", auth, sizeof auth) ||
	    header(raw, "x-amz-date", date, sizeof date) || header(raw, "x-amz-content-sha256", payload, sizeof payload))
		return "missing Authorization, x-amz-date or x-amz-content-sha256";
	if (sscanf(auth, "AWS4-HMAC-SHA256 Credential=%255[^,], SignedHeaders=%511[^,], Signature=%79s", cred,
		   signed_hdrs, sig) != 3)
		return "Authorization is not AWS4-HMAC-SHA256";
	sha256_hex(body, blen, body_hash);
	if (strcmp(payload, body_hash) != 0)
		return "x-amz-content-sha256 is not the body's hash";
	char md5h[64];
	if (header(raw, "content-md5", md5h, sizeof md5h) == 0) {
		unsigned char md[16], b64[32];
		unsigned mlen = 0;
		EVP_Digest(body, blen, md, &mlen, EVP_md5(), NULL);
		EVP_EncodeBlock(b64, md, 16);
		if (strcmp(md5h, (char *)b64) != 0)
			return "Content-MD5 is not the body's";
	}
	/* credential scope: KEY/DATE/REGION/s3/aws4_request */
	const char *scope = strchr(cred, '/');
	if (!scope || strncmp(scope + 1, date, 8) != 0 || strcmp(scope + 10, scope_tail) != 0)
		return "credential scope is not DATE/us-east-1/s3/aws4_request";
	/* canonical query: sorted name=value pairs */
	char path[2048], query[2048] = "", *pairs[64], qcopy[2048];
	size_t np = 0, off;
	char *q = strchr(target, '?');
	snprintf(path, sizeof path, "%.*s", q ? (int)(q - target) : (int)strlen(target), target);
	if (q) {
		snprintf(qcopy, sizeof qcopy, "%s", q + 1);
		for (char *save = NULL, *t = strtok_r(qcopy, "&", &save); t && np < 64; t = strtok_r(NULL, "&", &save))
			pairs[np++] = t;
		qsort(pairs, np, sizeof pairs[0], cmp_str);
		off = 0;
		for (size_t i = 0; i < np; i++)
			off += (size_t)snprintf(query + off, sizeof query - off, "%s%s%s", i ? "&" : "", pairs[i],
						strchr(pairs[i], '=') ? "" : "=");
	}
	off = (size_t)snprintf(canon, sizeof canon, "%s\n%s\n%s\n", method, path, query);
	char hcopy[512];
	snprintf(hcopy, sizeof hcopy, "%s", signed_hdrs);
	for (char *save = NULL, *h = strtok_r(hcopy, ";", &save); h; h = strtok_r(NULL, ";", &save)) {
		char v[1024];
		if (header(raw, h, v, sizeof v) != 0) {
			snprintf(why, sizeof why, "signed header %s not sent", h);
			return why;
		}
		off += (size_t)snprintf(canon + off, sizeof canon - off, "%s:%s\n", h, v);
	}
	snprintf(canon + off, sizeof canon - off, "\n%s\n%s", signed_hdrs, payload);
	if (!strstr(signed_hdrs, "host") || !strstr(signed_hdrs, "x-amz-content-sha256") ||
	    !strstr(signed_hdrs, "x-amz-date"))
		return "host, x-amz-content-sha256 and x-amz-date must be signed";
	char canon_hash[65];
	sha256_hex(canon, strlen(canon), canon_hash);
	snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", date, scope + 1, canon_hash);
	unsigned char k[32], k2[32];
	char kdate[300], day[9];
	snprintf(kdate, sizeof kdate, "AWS4%s", secret);
	snprintf(day, sizeof day, "%.8s", date);
	hmac(kdate, strlen(kdate), day, k);
	hmac(k, 32, "us-east-1", k2);
	hmac(k2, 32, "s3", k);
	hmac(k, 32, "aws4_request", k2);
	hmac(k2, 32, sts, k);
	hex(k, 32, want_sig);
	if (strcmp(sig, want_sig) != 0) {
		snprintf(why, sizeof why, "signature %s, expected %s", sig, want_sig);
		return why;
	}
	return NULL;
}

START_TEST(s3_sigv4_verified)
{
	static const struct fake_answer answers[] = {
		{ "200 OK", "", "" },
		{ "206 Partial Content", "Content-Range: bytes 2-4/10\r\n", "234" },
		{ "200 OK", "", "<ListBucketResult><IsTruncated>true</IsTruncated>"
		  "<NextContinuationToken>t+/=</NextContinuationToken></ListBucketResult>" },
		{ "200 OK", "", "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>" },
		{ "204 No Content", "", "" },
		{ "200 OK", "", "" },
	};
	struct fake f;
	struct obj_store *s = fake_open(&f, answers, 6);
	char buf[8];
	size_t got, n = 0;

	ck_assert_int_eq(obj_put(s, "sig/a-b_c.d", "some bytes\n", 11), 0);
	ck_assert_int_eq(obj_get(s, "sig/a-b_c.d", 2, buf, 3, &got), 0);
	ck_assert_int_eq(obj_list(s, "sig/a", count_cb, &n), 0);
	ck_assert_int_eq(obj_delete(s, "sig/a-b_c.d"), 0);
	ck_assert_int_eq(obj_ensure_bucket(s), 0);  /* HEAD bucket answers 200 */
	fake_close(&f, s);
	for (size_t i = 0; i < 6; i++) {
		const char *why = sigv4_verify(f.raw[i], f.raw_len[i], "SK", "us-east-1/s3/aws4_request");
		ck_assert_msg(why == NULL, "request %zu (%s): %s", i, f.requests[i], why);
	}
	/* a different secret gives a different signature: the check can fail */
	ck_assert_ptr_nonnull(sigv4_verify(f.raw[0], f.raw_len[0], "OTHER", "us-east-1/s3/aws4_request"));
	ck_assert_str_eq(f.requests[3], "GET /bkt?continuation-token=t%2B%2F%3D&list-type=2&max-keys=1000&prefix=sig%2Fa HTTP/1.1");
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
	SRunner *sr;
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
	tcase_add_test(tc, s3_answers_map_to_errors);
	tcase_add_test(tc, s3_range_answers_checked);
	tcase_add_test(tc, s3_list_pages_and_tokens);
	tcase_add_test(tc, s3_sigv4_verified);
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
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	nftw(dir_root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return failed ? 1 : 0;
}
