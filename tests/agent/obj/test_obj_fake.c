/* test_obj_fake: the part of test_obj (tests/agent/obj/test_obj.c) that runs
 * the S3 backend against a scripted HTTP server in this process: how answers
 * map to errors (503 SlowDown, 500, 400, 403, bad lengths, malformed XML), a
 * store that ignores Range, the paged list's continuation token on the wire,
 * and an independent SigV4 check (every kind of request signed right, the
 * signature recomputed here as S3 does it; s3rver does not verify them).
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
#include "util/ut_hex.h"

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

	ck_assert_int_eq(obj_list(s, "p/", test_obj_count_cb, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(obj_list(s, "p/", test_obj_count_cb, &n), -EIO);
	fake_close(&f, s);
	ck_assert_str_eq(f.requests[0], "GET /bkt?list-type=2&max-keys=1000&prefix=p%2F HTTP/1.1");
	ck_assert_str_eq(f.requests[1],
			 "GET /bkt?continuation-token=a%2Bb%2F%3D%26&list-type=2&max-keys=1000&prefix=p%2F HTTP/1.1");
}
END_TEST

/* ---- an independent SigV4 check (s3rver does not verify signatures) ---- */

static void sha256_hex(const void *b, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned len = 0;
	EVP_Digest(b, n, md, &len, EVP_sha256(), NULL);
	ut_hex_encode(md, 32, out, 65);
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
	ut_hex_encode(k, 32, want_sig, sizeof want_sig);
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
	ck_assert_int_eq(obj_list(s, "sig/a", test_obj_count_cb, &n), 0);
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

void test_obj_fake_add(TCase *tc)
{
	tcase_add_test(tc, s3_answers_map_to_errors);
	tcase_add_test(tc, s3_range_answers_checked);
	tcase_add_test(tc, s3_list_pages_and_tokens);
	tcase_add_test(tc, s3_sigv4_verified);
}
