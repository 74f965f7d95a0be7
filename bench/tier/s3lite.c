/* aq-s3lite: a small, fast S3-API server over a directory, on loopback, for
 * the cold-tier tests and bench/tier. Unlike s3rver it VERIFIES AWS SigV4,
 * so a test against it proves the requests are signed right.
 *
 *   aq-s3lite --listen 127.0.0.1:PORT --root DIR --access-key AK --secret-key SK
 *             [--region us-east-1] [--threads N] [--log FILE] [--latency-ms N]
 *
 * Path-style HTTP/1.1 with keep-alive:
 *   PUT /b                  create bucket (409 BucketAlreadyOwnedByYou if it exists)
 *   HEAD /b, DELETE /b      200/404; 204, 409 BucketNotEmpty
 *   GET /b?list-type=2      ListObjectsV2: prefix, max-keys (<= 1000), continuation-token,
 *                           start-after; keys in byte order, paged
 *   PUT /b/k                temp file in DIR/.tmp, fsync, rename, fsync folder; checks
 *                           Content-MD5 (400 BadDigest) and a signed x-amz-content-sha256
 *                           (400 XAmzContentSHA256Mismatch); answers ETag = MD5
 *   GET /b/k, HEAD /b/k     Range "bytes=a-b" / "a-" / "-n": 206 + Content-Range, 416 past
 *                           the end; bodies by sendfile (small ones pread + one writev)
 *   DELETE /b/k             204, also when missing
 * Errors are S3's XML bodies (NoSuchKey, NoSuchBucket, AccessDenied,
 * InvalidAccessKeyId, SignatureDoesNotMatch, ...). Every request must carry
 * "Authorization: AWS4-HMAC-SHA256 ..." for the configured access key,
 * region and service s3, an x-amz-date within 15 minutes, and the signature
 * S3 would compute (canonical request over method, URI-encoded path, sorted
 * query, the signed headers and the payload hash); no presigned URLs.
 *
 * Objects are files DIR/<bucket>/<key> (a key's '/' are folders), so "a"
 * and "a/b" cannot both exist (the second PUT gets 409 KeyConflict). Keys
 * have no empty, "." or ".." component. Bodies are at most 64 MiB.
 *
 * One thread per connection, at most --threads (default 128) at once; more
 * wait in the listen backlog. --log FILE appends "METHOD PATH STATUS BYTES
 * conn=N [ERROR-CODE]" per request (BYTES: body bytes sent). SIGTERM / SIGINT end it (every acknowledged PUT is
 * already on disk). --latency-ms N (0-10000) makes every request wait N ms
 * once its head arrived, before it is served: an object store "N ms away"
 * (bench/tier/run.sh LATENCY=server) without a proxy copying the bytes;
 * connections wait independently, like requests to a remote store. The request-head parsers live in s3lite_req.c
 * (fuzzed by fuzz/fuzz_s3lite_req.c).
 */
#define _GNU_SOURCE
#include "bench/tier/tb_addr.h"
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "bench/tier/s3lite_req.h"
#include "util/ut_buf.h"
#include "util/ut_hex.h"

#define S3L_IN_CAP (S3L_HEAD_MAX + 64 * 1024)  /* head + what arrives behind it */
#define S3L_BODY_BUF (256 * 1024)
#define S3L_BODY_MAX (64LL * 1024 * 1024)
#define S3L_CANON_CAP (96 * 1024)
#define S3L_SMALL_BODY (64 * 1024)             /* up to this: pread + writev instead of sendfile */
#define S3L_KEY_MAX 1024
#define S3L_LIST_MAX 1000
#define S3L_LIST_KEYS_CAP 1000000              /* keys a list walk may collect */
#define S3L_SKEW_S 900
#define S3L_ETAG_XATTR "user.s3lite.etag"

struct s3l_cfg {
	struct sockaddr_in addr;
	const char *root, *ak, *sk, *region;
	int rootfd, tmpfd;
	unsigned threads;
	unsigned latency_ms;
	FILE *log;
};

static struct s3l_cfg cfg;  /* immutable after start-up */
static sem_t s3l_slots;
static atomic_ulong s3l_req_seq;

struct s3l_conn {
	int fd;
	unsigned long id;
	char in[S3L_IN_CAP];
	size_t len;                 /* bytes in in[] */
	size_t head;                /* current request's head length */
	size_t pos;                 /* next unread body byte in in[] */
	int64_t body_left;          /* body bytes not yet read */
	int close;                  /* answer, then close */
	char *body;                 /* S3L_BODY_BUF, allocated on first use */
	char canon[S3L_CANON_CAP];
	unsigned long req_id;
	int status;                 /* of the answer sent, for the log */
	uint64_t sent;              /* body bytes sent */
	const char *code;           /* S3 error code answered, or NULL */
};

/* The request being served, decoded. */
struct s3l_ctx {
	struct s3l_conn *c;
	struct s3l_req r;
	char path[S3L_PATH_MAX];    /* decoded */
	char bucket[64];
	const char *key;            /* into path; "" for bucket requests */
	struct s3l_param q[S3L_QUERY_MAX];
	int nq;
	char payload_hash[80];      /* x-amz-content-sha256, "" when absent */
};

/* ---- answers ---- */

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 416: return "Requested Range Not Satisfiable";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	default: return "Internal Server Error";
	}
}

static int send_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++, n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Status line and headers (extra: more header lines, each ending CRLF) into
 * out; returns its length. */
static size_t head_fmt(struct s3l_conn *c, char *out, size_t cap, int status, const char *extra, uint64_t clen)
{
	int n = snprintf(out, cap,
			 "HTTP/1.1 %d %s\r\nServer: aq-s3lite\r\nx-amz-request-id: %lu\r\n%sContent-Length: %llu\r\n%s\r\n",
			 status, reason(status), c->req_id, extra ? extra : "", (unsigned long long)clen,
			 c->close ? "Connection: close\r\n" : "");
	c->status = status;
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

/* A whole answer with an in-memory body (not sent for HEAD). */
static int answer(struct s3l_ctx *x, int status, const char *extra, const char *body, size_t blen)
{
	char h[1024];
	struct iovec iov[2];
	int send_body = x->r.method != S3L_HEAD && blen > 0;

	iov[0].iov_base = h;
	iov[0].iov_len = head_fmt(x->c, h, sizeof h, status, extra, x->r.method == S3L_HEAD ? 0 : blen);
	iov[1].iov_base = (void *)(uintptr_t)body;
	iov[1].iov_len = blen;
	x->c->sent = send_body ? blen : 0;
	return send_all(x->c->fd, iov, send_body ? 2 : 1);
}

/* Appends s to out (cap) XML-escaped; returns the new length. */
static size_t xml_esc(char *out, size_t o, size_t cap, const char *s)
{
	for (; *s && o + 7 < cap; s++) {
		const char *e = NULL;
		switch (*s) {
		case '&': e = "&amp;"; break;
		case '<': e = "&lt;"; break;
		case '>': e = "&gt;"; break;
		case '"': e = "&quot;"; break;
		case '\'': e = "&apos;"; break;
		}
		if (e) {
			memcpy(out + o, e, strlen(e));
			o += strlen(e);
		} else {
			out[o++] = *s;
		}
	}
	out[o] = '\0';
	return o;
}

static int error_v(struct s3l_ctx *x, int status, const char *extra, const char *code, const char *fmt, va_list ap)
{
	char msg[512], body[4096], hdrs[256];
	size_t o;

	vsnprintf(msg, sizeof msg, fmt, ap);
	x->c->code = code;
	snprintf(hdrs, sizeof hdrs, "Content-Type: application/xml\r\n%s", extra ? extra : "");
	o = (size_t)snprintf(body, sizeof body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>",
			     code);
	o = xml_esc(body, o, sizeof body - 256, msg);
	o += (size_t)snprintf(body + o, sizeof body - o, "</Message><Resource>");
	o = xml_esc(body, o, sizeof body - 64, x->path[0] ? x->path : "/");
	o += (size_t)snprintf(body + o, sizeof body - o, "</Resource><RequestId>%lu</RequestId></Error>", x->c->req_id);
	return answer(x, status, hdrs, body, o);
}

/* An S3 error answer: status, XML body with code and message. */
static int error_xml(struct s3l_ctx *x, int status, const char *code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = error_v(x, status, NULL, code, fmt, ap);
	va_end(ap);
	return rc;
}

static int error_xml_h(struct s3l_ctx *x, int status, const char *extra, const char *code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = error_v(x, status, extra, code, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- bodies ---- */

/* Next chunk of the request body: first what follows the head in in[],
 * then from the socket. Returns 1 with (*p, *n), 0 at the end, -1 when the
 * peer went away (the connection is then closed). */
static int body_next(struct s3l_conn *c, const char **p, size_t *n)
{
	ssize_t r;

	if (c->body_left == 0)
		return 0;
	if (c->pos < c->len) {
		size_t take = c->len - c->pos;
		if ((int64_t)take > c->body_left)
			take = (size_t)c->body_left;
		*p = c->in + c->pos, *n = take;
		c->pos += take;
		c->body_left -= (int64_t)take;
		return 1;
	}
	if (!c->body && !(c->body = malloc(S3L_BODY_BUF))) {
		c->close = 1;
		return -1;
	}
	do
		r = recv(c->fd, c->body, c->body_left < S3L_BODY_BUF ? (size_t)c->body_left : S3L_BODY_BUF, 0);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		c->close = 1;
		return -1;
	}
	*p = c->body, *n = (size_t)r;
	c->body_left -= r;
	return 1;
}

/* out holds 2 * n + 1 bytes */
static void hex(const unsigned char *b, size_t n, char *out)
{
	ut_hex_encode(b, n, out, 2 * n + 1);
}

struct s3l_digests {
	char sha256[65], md5[33];
	unsigned char md5_raw[16];
};

/* Reads the rest of the body into fd (-1: discard), hashing it. 0, or -1
 * when the peer went away or the write failed (errno). */
static int body_read(struct s3l_conn *c, int fd, struct s3l_digests *d)
{
	EVP_MD_CTX *sha = EVP_MD_CTX_new(), *md5 = EVP_MD_CTX_new();
	unsigned char out[EVP_MAX_MD_SIZE];
	const char *p;
	size_t n;
	int rc = -1, more;

	if (!sha || !md5 || !EVP_DigestInit_ex(sha, EVP_sha256(), NULL) || !EVP_DigestInit_ex(md5, EVP_md5(), NULL))
		goto out;
	while ((more = body_next(c, &p, &n)) == 1) {
		EVP_DigestUpdate(sha, p, n);
		EVP_DigestUpdate(md5, p, n);
		while (fd >= 0 && n > 0) {
			ssize_t w = write(fd, p, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				goto out;
			p += w, n -= (size_t)w;
		}
	}
	if (more < 0)
		goto out;
	EVP_DigestFinal_ex(sha, out, NULL);
	hex(out, 32, d->sha256);
	EVP_DigestFinal_ex(md5, d->md5_raw, NULL);
	hex(d->md5_raw, 16, d->md5);
	rc = 0;
out:
	EVP_MD_CTX_free(sha);
	EVP_MD_CTX_free(md5);
	return rc;
}

/* The body's digests against x-amz-content-sha256 (when not unsigned) and
 * Content-MD5. 0, or an error already answered (1). */
static int body_check(struct s3l_ctx *x, const struct s3l_digests *d)
{
	const struct s3l_str *m = s3l_req_header(&x->r, "content-md5");

	if (x->payload_hash[0] && strcmp(x->payload_hash, "UNSIGNED-PAYLOAD") != 0 &&
	    strcasecmp(x->payload_hash, d->sha256) != 0) {
		error_xml(x, 400, "XAmzContentSHA256Mismatch",
			  "The provided 'x-amz-content-sha256' header does not match what was computed.");
		return 1;
	}
	if (m) {
		unsigned char raw[64];
		char b64[64];
		int n;
		if (m->n != 24) {
			error_xml(x, 400, "InvalidDigest", "The Content-MD5 you specified was invalid.");
			return 1;
		}
		memcpy(b64, m->p, 24);
		b64[24] = '\0';
		n = EVP_DecodeBlock(raw, (const unsigned char *)b64, 24);
		if (n != 18 || m->p[22] != '=' || m->p[23] != '=') {
			error_xml(x, 400, "InvalidDigest", "The Content-MD5 you specified was invalid.");
			return 1;
		}
		if (memcmp(raw, d->md5_raw, 16) != 0) {
			error_xml(x, 400, "BadDigest", "The Content-MD5 you specified did not match what we received.");
			return 1;
		}
	}
	return 0;
}

/* ---- SigV4 ---- */

/* AWS URI encoding: all but A-Za-z0-9-._~ (and '/' when keep_slash). */
static size_t uri_enc(char *out, size_t o, size_t cap, const char *s, int keep_slash)
{
	static const char d[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
		    ch == '.' || ch == '_' || ch == '~' || (keep_slash && ch == '/')) {
			if (o + 1 >= cap)
				return cap;
			out[o++] = (char)ch;
		} else {
			if (o + 3 >= cap)
				return cap;
			out[o++] = '%', out[o++] = d[ch >> 4], out[o++] = d[ch & 15];
		}
	}
	return o;
}

static size_t put(char *out, size_t o, size_t cap, const char *s, size_t n)
{
	if (o >= cap || n >= cap - o)
		return cap;
	memcpy(out + o, s, n);
	return o + n;
}

static int param_cmp(const void *a, const void *b)
{
	const struct s3l_param *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->value, y->value);
}

/* Canonical header value: trimmed (done by the parser), inner runs of
 * blanks as one space. */
static size_t canon_value(char *out, size_t o, size_t cap, struct s3l_str v)
{
	for (size_t i = 0; i < v.n && o < cap; i++) {
		if ((v.p[i] == ' ' || v.p[i] == '\t') && i > 0 && (v.p[i - 1] == ' ' || v.p[i - 1] == '\t'))
			continue;
		out[o++] = v.p[i] == '\t' ? ' ' : v.p[i];
	}
	return o;
}

static int hmac(const void *key, size_t klen, const char *msg, size_t mlen, unsigned char out[32])
{
	unsigned len = 32;
	return HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, mlen, out, &len) ? 0 : -1;
}

/* kSigning for a date, cached per thread (credentials are fixed). */
static int signing_key(const char *date8, unsigned char key[32])
{
	static __thread char cached_date[9];
	static __thread unsigned char cached[32];
	char k0[300];
	unsigned char a[32], b[32];

	if (strcmp(cached_date, date8) == 0) {
		memcpy(key, cached, 32);
		return 0;
	}
	snprintf(k0, sizeof k0, "AWS4%s", cfg.sk);
	if (hmac(k0, strlen(k0), date8, 8, a) || hmac(a, 32, cfg.region, strlen(cfg.region), b) ||
	    hmac(b, 32, "s3", 2, a) || hmac(a, 32, "aws4_request", 12, b))
		return -1;
	OPENSSL_cleanse(k0, sizeof k0);
	memcpy(cached, b, 32);
	memcpy(cached_date, date8, 9);
	memcpy(key, b, 32);
	return 0;
}

static int str_is(struct s3l_str s, const char *lit)
{
	return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

/* "host" is one of the ';'-separated signed headers (S3 requires it). */
static int signs_host(struct s3l_str sh)
{
	for (size_t i = 0, b = 0; i <= sh.n; i++)
		if (i == sh.n || sh.p[i] == ';') {
			if (i - b == 4 && memcmp(sh.p + b, "host", 4) == 0)
				return 1;
			b = i + 1;
		}
	return 0;
}

/* Verifies the Authorization header. 0, or an error already answered (1). */
static int sig_check(struct s3l_ctx *x)
{
	const struct s3l_str *av = s3l_req_header(&x->r, "authorization"), *dv;
	struct s3l_auth a;
	char *cr = x->c->canon, amz_date[17], date8[9], sts[256], want[65], hash_hex[65];
	unsigned char key[32], mac[32], h[32];
	size_t o = 0, cap = S3L_CANON_CAP;
	struct tm tm = { 0 };
	time_t t;

	if (!av)
		return error_xml(x, 403, "AccessDenied", "Access Denied (no Authorization header)"), 1;
	if (s3l_auth_parse(*av, &a) != 0)
		return error_xml(x, 400, "AuthorizationHeaderMalformed",
				 "The authorization header is malformed; expected AWS4-HMAC-SHA256 "
				 "Credential=AK/DATE/REGION/s3/aws4_request, SignedHeaders=..., Signature=..."), 1;
	if (!str_is(a.access_key, cfg.ak))
		return error_xml(x, 403, "InvalidAccessKeyId",
				 "The AWS Access Key Id you provided does not exist in our records."), 1;
	if (!str_is(a.region, cfg.region) || !str_is(a.service, "s3"))
		return error_xml(x, 400, "AuthorizationHeaderMalformed",
				 "The authorization header is malformed; the region or service is wrong; expecting '%s' and 's3'.",
				 cfg.region), 1;
	if (!signs_host(a.signed_headers))
		return error_xml(x, 400, "AuthorizationHeaderMalformed", "SignedHeaders must include host"), 1;
	dv = s3l_req_header(&x->r, "x-amz-date");
	if (!dv || dv->n != 16 || dv->p[8] != 'T' || dv->p[15] != 'Z' || memcmp(dv->p, a.date.p, 8) != 0)
		return error_xml(x, 403, "AccessDenied", "x-amz-date is missing, malformed or not the credential's date"), 1;
	memcpy(amz_date, dv->p, 16);
	amz_date[16] = '\0';
	memcpy(date8, amz_date, 8);
	date8[8] = '\0';
	if (!strptime(amz_date, "%Y%m%dT%H%M%SZ", &tm))
		return error_xml(x, 403, "AccessDenied", "x-amz-date is malformed"), 1;
	t = timegm(&tm);
	if (t < time(NULL) - S3L_SKEW_S || t > time(NULL) + S3L_SKEW_S)
		return error_xml(x, 403, "RequestTimeTooSkewed",
				 "The difference between the request time and the current time is too large."), 1;

	/* canonical request */
	o = put(cr, o, cap, x->r.method_name.p, x->r.method_name.n);
	o = put(cr, o, cap, "\n", 1);
	o = uri_enc(cr, o, cap, x->path, 1);
	o = put(cr, o, cap, "\n", 1);
	qsort(x->q, (size_t)x->nq, sizeof x->q[0], param_cmp);  /* in place: param() does not care */
	for (int i = 0; i < x->nq; i++) {
		if (i)
			o = put(cr, o, cap, "&", 1);
		o = uri_enc(cr, o, cap, x->q[i].name, 0);
		o = put(cr, o, cap, "=", 1);
		o = uri_enc(cr, o, cap, x->q[i].value, 0);
	}
	o = put(cr, o, cap, "\n", 1);
	for (size_t i = 0, b = 0; i <= a.signed_headers.n; i++) {
		struct s3l_str name;
		int found = 0;
		if (i < a.signed_headers.n && a.signed_headers.p[i] != ';')
			continue;
		name = (struct s3l_str){ a.signed_headers.p + b, i - b };
		b = i + 1;
		o = put(cr, o, cap, name.p, name.n);
		o = put(cr, o, cap, ":", 1);
		for (size_t k = 0; k < x->r.nh; k++) {
			if (x->r.h[k].name.n != name.n || strncasecmp(x->r.h[k].name.p, name.p, name.n) != 0)
				continue;
			if (found++)
				o = put(cr, o, cap, ",", 1);
			o = canon_value(cr, o, cap, x->r.h[k].value);
		}
		if (!found)
			return error_xml(x, 403, "AccessDenied", "signed header %.*s is not in the request", (int)name.n,
					 name.p), 1;
		o = put(cr, o, cap, "\n", 1);
	}
	o = put(cr, o, cap, "\n", 1);
	o = put(cr, o, cap, a.signed_headers.p, a.signed_headers.n);
	o = put(cr, o, cap, "\n", 1);
	if (x->payload_hash[0]) {
		o = put(cr, o, cap, x->payload_hash, strlen(x->payload_hash));
	} else {
		/* no x-amz-content-sha256: the hash of an empty body (any body must say) */
		if (x->r.content_length > 0)
			return error_xml(x, 400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256"), 1;
		o = put(cr, o, cap, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 64);
	}
	if (o >= cap)
		return error_xml(x, 400, "InvalidRequest", "request too large to sign"), 1;
	if (!EVP_Digest(cr, o, h, NULL, EVP_sha256(), NULL))
		return error_xml(x, 500, "InternalError", "sha256 failed"), 1;
	hex(h, 32, hash_hex);
	snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/s3/aws4_request\n%s", amz_date, date8, cfg.region, hash_hex);
	if (signing_key(date8, key) || hmac(key, 32, sts, strlen(sts), mac))
		return error_xml(x, 500, "InternalError", "hmac failed"), 1;
	hex(mac, 32, want);
	if (CRYPTO_memcmp(want, a.signature.p, 64) != 0)
		return error_xml(x, 403, "SignatureDoesNotMatch",
				 "The request signature we calculated does not match the signature you provided. "
				 "Check your key and signing method."), 1;
	return 0;
}

/* ---- names ---- */

static int bucket_ok(const char *b)
{
	size_t n = strlen(b);
	if (n < 3 || n > 63 || b[0] == '.' || b[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '.' || b[i] == '-'))
			return 0;
	return 1;
}

/* No empty, "." or ".." component: the key is a path under the bucket. */
static int key_ok(const char *k)
{
	const char *p = k;

	if (!*k)
		return 0;
	for (;;) {
		const char *sl = strchr(p, '/');
		size_t n = sl ? (size_t)(sl - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (!sl)
			return 1;
		p = sl + 1;
	}
}

static int bucket_exists(const char *b)
{
	struct stat st;
	return fstatat(cfg.rootfd, b, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

static void etag_of(int fd, const struct stat *st, char out[40])
{
	char v[33];
	ssize_t n = fgetxattr(fd, S3L_ETAG_XATTR, v, 32);

	if (n == 32) {
		v[32] = '\0';
		snprintf(out, 40, "%s", v);
	} else {  /* written behind our back: size and time */
		snprintf(out, 40, "%llx-%llx", (unsigned long long)st->st_size, (unsigned long long)st->st_mtime);
	}
}

/* ---- objects ---- */

static int key_path(struct s3l_ctx *x, char *out, size_t cap)
{
	return (size_t)snprintf(out, cap, "%s/%s", x->bucket, x->key) < cap ? 0 : -1;
}

/* mkdir -p of rel's parent folders under root. */
static int make_parents(char *rel)
{
	for (char *p = strchr(rel, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		int rc = mkdirat(cfg.rootfd, rel, 0755);
		*p = '/';
		if (rc != 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

/* Removes rel's parent folders that became empty, up to the bucket. */
static void prune_parents(char *rel)
{
	char *sl;
	while ((sl = strrchr(rel, '/')) != NULL) {
		*sl = '\0';
		if (!strchr(rel, '/') || unlinkat(cfg.rootfd, rel, AT_REMOVEDIR) != 0)
			return;
	}
}

static int fsync_parent(const char *rel)
{
	char dir[S3L_PATH_MAX];
	const char *sl = strrchr(rel, '/');
	int fd, rc;

	snprintf(dir, sizeof dir, "%.*s", (int)(sl - rel), rel);
	fd = openat(cfg.rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

static int s3l_obj_put(struct s3l_ctx *x)
{
	struct s3l_conn *c = x->c;
	char tmp[64], rel[S3L_PATH_MAX], hdr[128];
	struct s3l_digests d;
	int fd = -1, rc = 0, err = 0;

	if (!bucket_exists(x->bucket)) {
		c->close = c->body_left > 0;
		return error_xml(x, 404, "NoSuchBucket", "The specified bucket does not exist");
	}
	if (key_path(x, rel, sizeof rel))
		return c->close = 1, error_xml(x, 400, "KeyTooLongError", "Your key is too long");
	snprintf(tmp, sizeof tmp, "%lu.%lu", c->id, c->req_id);
	fd = openat(cfg.tmpfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		c->close = 1;
		return error_xml(x, 500, "InternalError", "temp file: %s", strerror(errno));
	}
	if (body_read(c, fd, &d) != 0) {
		if (c->close)  /* peer gone */
			goto out;
		c->close = 1;
		rc = error_xml(x, 500, "InternalError", "write: %s", strerror(errno));
		goto out;
	}
	if (body_check(x, &d))
		goto out;
	if (fsync(fd) != 0) {
		rc = error_xml(x, 500, "InternalError", "fsync: %s", strerror(errno));
		goto out;
	}
	(void)fsetxattr(fd, S3L_ETAG_XATTR, d.md5, 32, 0);  /* else ETags fall back to size-time */
	for (int tries = 0; tries < 5; tries++) {
		/* a concurrent DELETE may prune a folder between mkdir and rename */
		err = make_parents(rel) == 0 && renameat(cfg.tmpfd, tmp, cfg.rootfd, rel) == 0 ? 0 : errno;
		if (err != ENOENT)
			break;
	}
	if (err == EISDIR || err == ENOTDIR || err == EEXIST || err == ENOTEMPTY) {
		rc = error_xml(x, 409, "KeyConflict",
			       "aq-s3lite stores keys as paths: a key cannot be both an object and a prefix of another");
		goto out;
	}
	if (err) {
		rc = error_xml(x, 500, "InternalError", "rename: %s", strerror(err));
		goto out;
	}
	tmp[0] = '\0';  /* renamed */
	if (fsync_parent(rel) != 0) {
		rc = error_xml(x, 500, "InternalError", "fsync folder: %s", strerror(errno));
		goto out;
	}
	snprintf(hdr, sizeof hdr, "ETag: \"%s\"\r\n", d.md5);
	rc = answer(x, 200, hdr, NULL, 0);
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlinkat(cfg.tmpfd, tmp, 0);
	return rc;
}

static int missing(struct s3l_ctx *x)
{
	if (!bucket_exists(x->bucket))
		return error_xml(x, 404, "NoSuchBucket", "The specified bucket does not exist");
	return error_xml(x, 404, "NoSuchKey", "The specified key does not exist.");
}

/* GET and HEAD. */
static int s3l_obj_get(struct s3l_ctx *x)
{
	struct s3l_conn *c = x->c;
	const struct s3l_str *rv = s3l_req_header(&x->r, "range");
	char rel[S3L_PATH_MAX], extra[512], etag[40], lm[64];
	uint64_t first = 0, last = 0, n;
	struct stat st;
	struct tm tm;
	int fd = -1, rc, ranged = 0, status = 200;

	if (key_path(x, rel, sizeof rel))
		return missing(x);
	fd = openat(cfg.rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = missing(x);
		goto out;
	}
	etag_of(fd, &st, etag);
	gmtime_r(&st.st_mtime, &tm);
	strftime(lm, sizeof lm, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (rv) {
		ranged = s3l_range_parse(*rv, (uint64_t)st.st_size, &first, &last);
		if (ranged < 0) {
			char cr[64];
			snprintf(cr, sizeof cr, "Content-Range: bytes */%llu\r\n", (unsigned long long)st.st_size);
			rc = error_xml_h(x, 416, cr, "InvalidRange", "The requested range is not satisfiable");
			goto out;
		}
	}
	if (ranged) {
		status = 206;
		n = last - first + 1;
		snprintf(extra, sizeof extra,
			 "Content-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\nETag: \"%s\"\r\nLast-Modified: %s\r\n"
			 "Content-Range: bytes %llu-%llu/%llu\r\n",
			 etag, lm, (unsigned long long)first, (unsigned long long)last, (unsigned long long)st.st_size);
	} else {
		n = (uint64_t)st.st_size;
		snprintf(extra, sizeof extra,
			 "Content-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\nETag: \"%s\"\r\nLast-Modified: %s\r\n",
			 etag, lm);
	}
	if (x->r.method == S3L_HEAD || n == 0) {
		char h[1024];
		struct iovec iov = { h, head_fmt(c, h, sizeof h, status, extra, n) };
		rc = send_all(c->fd, &iov, 1);
		goto out;
	}
	if (n <= S3L_SMALL_BODY) {
		char h[1024];
		struct iovec iov[2];
		ssize_t r;
		if (!c->body && !(c->body = malloc(S3L_BODY_BUF))) {
			rc = -1;
			goto out;
		}
		r = pread(fd, c->body, (size_t)n, (off_t)first);
		if (r != (ssize_t)n) {  /* shrank under us: the connection cannot recover */
			rc = -1;
			goto out;
		}
		iov[0] = (struct iovec){ h, head_fmt(c, h, sizeof h, status, extra, n) };
		iov[1] = (struct iovec){ c->body, (size_t)n };
		c->sent = n;
		rc = send_all(c->fd, iov, 2);
		goto out;
	} else {
		char h[1024];
		size_t hl = head_fmt(c, h, sizeof h, status, extra, n);
		off_t off = (off_t)first;
		uint64_t left = n;
		if (send(c->fd, h, hl, MSG_MORE | MSG_NOSIGNAL) != (ssize_t)hl) {
			rc = -1;
			goto out;
		}
		while (left > 0) {
			ssize_t w = sendfile(c->fd, fd, &off, left > (1u << 30) ? (1u << 30) : (size_t)left);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -1;
				goto out;
			}
			left -= (uint64_t)w;
			c->sent += (uint64_t)w;
		}
		rc = 0;
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

static int s3l_obj_delete(struct s3l_ctx *x)
{
	char rel[S3L_PATH_MAX];

	if (!bucket_exists(x->bucket))
		return error_xml(x, 404, "NoSuchBucket", "The specified bucket does not exist");
	if (key_path(x, rel, sizeof rel) == 0 && unlinkat(cfg.rootfd, rel, 0) == 0) {
		prune_parents(rel);
		(void)fsync_parent(rel);
	} else if (errno != ENOENT && errno != ENOTDIR && errno != EISDIR) {
		return error_xml(x, 500, "InternalError", "unlink: %s", strerror(errno));
	}
	return answer(x, 204, NULL, NULL, 0);
}

/* ---- buckets ---- */

static int s3l_bucket_put(struct s3l_ctx *x)
{
	char loc[128];

	if (mkdirat(cfg.rootfd, x->bucket, 0755) != 0) {
		if (errno == EEXIST)
			return error_xml(x, 409, "BucketAlreadyOwnedByYou",
					 "Your previous request to create the named bucket succeeded and you already own it.");
		return error_xml(x, 500, "InternalError", "mkdir: %s", strerror(errno));
	}
	fsync(cfg.rootfd);
	snprintf(loc, sizeof loc, "Location: /%s\r\n", x->bucket);
	return answer(x, 200, loc, NULL, 0);
}

static int s3l_bucket_head(struct s3l_ctx *x)
{
	if (!bucket_exists(x->bucket))
		return error_xml(x, 404, "NoSuchBucket", "The specified bucket does not exist");
	return answer(x, 200, NULL, NULL, 0);
}

static int s3l_bucket_delete(struct s3l_ctx *x)
{
	if (unlinkat(cfg.rootfd, x->bucket, AT_REMOVEDIR) == 0)
		return answer(x, 204, NULL, NULL, 0);
	if (errno == ENOENT || errno == ENOTDIR)
		return error_xml(x, 404, "NoSuchBucket", "The specified bucket does not exist");
	if (errno == ENOTEMPTY || errno == EEXIST)
		return error_xml(x, 409, "BucketNotEmpty", "The bucket you tried to delete is not empty");
	return error_xml(x, 500, "InternalError", "rmdir: %s", strerror(errno));
}

struct s3l_ent {
	char *key;
	uint64_t size;
	time_t mtime;
};

struct s3l_list {
	struct s3l_ent *e;
	size_t n, cap;
	const char *prefix;
	size_t plen;
};

/* Collects regular files under dirfd (rel = their key prefix, "" or
 * ending '/') whose key starts with the prefix. Closes dirfd. */
static int list_walk(struct s3l_list *l, int dirfd, char *rel, size_t rlen)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dirfd);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name), cmp;
		struct stat st;
		if (de->d_name[0] == '.' && (nl == 1 || (nl == 2 && de->d_name[1] == '.')))
			continue;
		if (rlen + nl + 2 > S3L_KEY_MAX + 1)
			continue;
		memcpy(rel + rlen, de->d_name, nl + 1);
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			rel[rlen + nl] = '/', rel[rlen + nl + 1] = '\0';
			cmp = rlen + nl + 1 < l->plen ? rlen + nl + 1 : l->plen;
			if (strncmp(rel, l->prefix, cmp) != 0)
				continue;  /* nothing under it can match */
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				rc = list_walk(l, sub, rel, rlen + nl + 1);
		} else if (S_ISREG(st.st_mode) && strncmp(rel, l->prefix, l->plen) == 0) {
			if (l->n == l->cap) {
				size_t nc = l->cap ? l->cap * 2 : 256;
				struct s3l_ent *ne;
				if (nc > S3L_LIST_KEYS_CAP || !(ne = realloc(l->e, nc * sizeof *ne))) {
					rc = -1;
					break;
				}
				l->e = ne, l->cap = nc;
			}
			if (!(l->e[l->n].key = strdup(rel))) {
				rc = -1;
				break;
			}
			l->e[l->n].size = (uint64_t)st.st_size;
			l->e[l->n].mtime = st.st_mtime;
			l->n++;
		}
	}
	rel[rlen] = '\0';
	closedir(d);
	return rc;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct s3l_ent *)a)->key, ((const struct s3l_ent *)b)->key);
}

static const char *param(const struct s3l_ctx *x, const char *name)
{
	for (int i = 0; i < x->nq; i++)
		if (strcmp(x->q[i].name, name) == 0)
			return x->q[i].value;
	return NULL;
}

/* A listing's XML: at most S3L_LIST_MAX entries of an escaped key and their
 * fields, and the envelope. */
#define S3L_LIST_BODY_MAX ((size_t)S3L_LIST_MAX * (S3L_KEY_MAX * 6 + 512) + 4096)

static void buf_esc(struct ut_buf *b, const char *s)
{
	char tmp[S3L_KEY_MAX * 6 + 16];
	size_t n = xml_esc(tmp, 0, sizeof tmp, s);
	ut_buf_add(b, tmp, n);
}

static int s3l_bucket_list(struct s3l_ctx *x)
{
	const char *lt = param(x, "list-type"), *prefix = param(x, "prefix"), *mk = param(x, "max-keys"),
		   *tok = param(x, "continuation-token"), *sa = param(x, "start-after"), *delim = param(x, "delimiter");
	char after[S3L_KEY_MAX + 1] = "", rel[S3L_KEY_MAX + 2] = "", tokhex[2 * S3L_KEY_MAX + 1];
	struct s3l_list l = { 0 };
	struct ut_buf b;
	long max = S3L_LIST_MAX;
	size_t i, start, shown;
	int fd, rc, truncated;

	if (!lt || strcmp(lt, "2") != 0)
		return error_xml(x, 501, "NotImplemented", "aq-s3lite lists with ListObjectsV2 only (list-type=2)");
	if (delim && *delim)
		return error_xml(x, 501, "NotImplemented", "aq-s3lite does not support delimiter");
	if (mk) {
		char *end;
		max = strtol(mk, &end, 10);
		if (!*mk || *end || max < 0)
			return error_xml(x, 400, "InvalidArgument", "max-keys must be a non-negative integer");
		if (max > S3L_LIST_MAX)
			max = S3L_LIST_MAX;
	}
	if (tok) {  /* our tokens: hex of the last key listed */
		size_t tl = strlen(tok), n = 0;
		/* lowercase only (what we hand out), and no NUL byte in the key */
		if (tl == 0 || strspn(tok, "0123456789abcdef") != tl ||
		    ut_hex_decode(tok, tl, after, S3L_KEY_MAX, &n) != AQ_OK || memchr(after, '\0', n))
			return error_xml(x, 400, "InvalidArgument", "The continuation token provided is incorrect");
		after[n] = '\0';
	} else if (sa) {
		snprintf(after, sizeof after, "%s", sa);
	}
	ut_buf_init(&b, S3L_LIST_BODY_MAX);
	l.prefix = prefix ? prefix : "";
	l.plen = strlen(l.prefix);
	fd = openat(cfg.rootfd, x->bucket, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_xml(x, 404, "NoSuchBucket", "The specified bucket does not exist");
	if (list_walk(&l, fd, rel, 0) != 0) {
		rc = error_xml(x, 500, "InternalError", "listing failed (out of memory or over %d keys)", S3L_LIST_KEYS_CAP);
		goto out;
	}
	if (l.n)
		qsort(l.e, l.n, sizeof *l.e, ent_cmp);
	for (start = 0; start < l.n && after[0] && strcmp(l.e[start].key, after) <= 0; start++)
		;
	shown = l.n - start < (size_t)max ? l.n - start : (size_t)max;
	truncated = shown > 0 && start + shown < l.n;  /* max-keys=0: an empty, complete page */
	ut_buf_addf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>%s</Name><Prefix>",
		x->bucket);
	buf_esc(&b, l.prefix);
	ut_buf_addf(&b, "</Prefix><KeyCount>%zu</KeyCount><MaxKeys>%ld</MaxKeys><IsTruncated>%s</IsTruncated>", shown, max,
		truncated ? "true" : "false");
	if (tok) {
		ut_buf_add(&b, "<ContinuationToken>", 19);
		buf_esc(&b, tok);
		ut_buf_add(&b, "</ContinuationToken>", 20);
	}
	if (sa) {
		ut_buf_add(&b, "<StartAfter>", 12);
		buf_esc(&b, sa);
		ut_buf_add(&b, "</StartAfter>", 13);
	}
	if (truncated) {
		const char *last = l.e[start + shown - 1].key;
		hex((const unsigned char *)last, strlen(last), tokhex);
		ut_buf_addf(&b, "<NextContinuationToken>%s</NextContinuationToken>", tokhex);
	}
	for (i = start; i < start + shown; i++) {
		char lm[32], etag[40];
		struct tm tm;
		struct stat st = { .st_size = (off_t)l.e[i].size, .st_mtime = l.e[i].mtime };
		int ofd;
		gmtime_r(&l.e[i].mtime, &tm);
		strftime(lm, sizeof lm, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
		snprintf(rel, sizeof rel, "%s/%s", x->bucket, l.e[i].key);
		ofd = openat(cfg.rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (ofd >= 0) {
			etag_of(ofd, &st, etag);
			close(ofd);
		} else {
			etag_of(-1, &st, etag);
		}
		ut_buf_add(&b, "<Contents><Key>", 15);
		buf_esc(&b, l.e[i].key);
		ut_buf_addf(&b, "</Key><LastModified>%s</LastModified><ETag>&quot;%s&quot;</ETag><Size>%llu</Size>"
			    "<StorageClass>STANDARD</StorageClass></Contents>",
			lm, etag, (unsigned long long)l.e[i].size);
	}
	ut_buf_add(&b, "</ListBucketResult>", 19);
	if (ut_buf_err(&b) != AQ_OK)
		rc = error_xml(x, 500, "InternalError", "%s", ut_buf_err(&b) == AQ_ENOMEM ? "out of memory" : "listing too large");
	else
		rc = answer(x, 200, "Content-Type: application/xml\r\n", ut_buf_str(&b), ut_buf_len(&b));
out:
	for (i = 0; i < l.n; i++)
		free(l.e[i].key);
	free(l.e);
	ut_buf_cleanup(&b);
	return rc;
}

/* ---- dispatch ---- */

#define S3L_F_BODY 1  /* the handler reads the body itself */

static const struct s3l_route {
	enum s3l_method m;
	int object;   /* 1: /bucket/key, 0: /bucket */
	int (*fn)(struct s3l_ctx *x);
	int flags;
} s3l_routes[] = {
	{ S3L_PUT, 0, s3l_bucket_put, 0 },
	{ S3L_HEAD, 0, s3l_bucket_head, 0 },
	{ S3L_GET, 0, s3l_bucket_list, 0 },
	{ S3L_DELETE, 0, s3l_bucket_delete, 0 },
	{ S3L_PUT, 1, s3l_obj_put, S3L_F_BODY },
	{ S3L_GET, 1, s3l_obj_get, 0 },
	{ S3L_HEAD, 1, s3l_obj_get, 0 },
	{ S3L_DELETE, 1, s3l_obj_delete, 0 },
};

/* Decodes the target into x->path / bucket / key. 0, or answered (1). */
static int target(struct s3l_ctx *x)
{
	const struct s3l_str *sha = s3l_req_header(&x->r, "x-amz-content-sha256");
	char *sl;
	int n = s3l_pct_decode(x->r.path, x->path, sizeof x->path);

	if (n == -E2BIG)
		return error_xml(x, 400, "KeyTooLongError", "Your key is too long"), 1;
	if (n < 0)
		return error_xml(x, 400, "InvalidURI", "Couldn't parse the specified URI."), 1;
	x->nq = s3l_query_parse(x->r.query, x->q);
	if (x->nq < 0)
		return error_xml(x, 400, "InvalidArgument", "query string malformed or too long"), 1;
	if (sha) {
		if (sha->n >= sizeof x->payload_hash)
			return error_xml(x, 400, "InvalidArgument", "x-amz-content-sha256 malformed"), 1;
		memcpy(x->payload_hash, sha->p, sha->n);
		x->payload_hash[sha->n] = '\0';
	}
	x->key = "";
	if (x->path[1] == '\0')
		return 0;  /* "/" */
	sl = strchr(x->path + 1, '/');
	n = (int)(sl ? sl - x->path - 1 : (long)strlen(x->path + 1));
	if (n >= (int)sizeof x->bucket)
		return error_xml(x, 400, "InvalidBucketName", "The specified bucket is not valid."), 1;
	memcpy(x->bucket, x->path + 1, (size_t)n);
	x->bucket[n] = '\0';
	if (sl && sl[1])
		x->key = sl + 1;
	return 0;
}

static int dispatch(struct s3l_ctx *x)
{
	const struct s3l_route *rt = NULL;
	struct s3l_conn *c = x->c;
	int obj;

	if (x->r.chunked) {
		c->close = 1;
		return error_xml(x, 501, "NotImplemented", "Transfer-Encoding is not supported; send Content-Length");
	}
	if (x->r.content_length > S3L_BODY_MAX) {
		c->close = 1;
		return error_xml(x, 400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size (64 MiB)");
	}
	if (target(x) || sig_check(x)) {
		c->close |= c->body_left > 0;
		return 0;
	}
	if (!x->bucket[0]) {
		c->close |= c->body_left > 0;
		return error_xml(x, 501, "NotImplemented", "aq-s3lite does not list buckets");
	}
	if (!bucket_ok(x->bucket)) {
		c->close |= c->body_left > 0;
		return error_xml(x, 400, "InvalidBucketName", "The specified bucket is not valid.");
	}
	obj = x->key[0] != '\0';
	if (obj && (strlen(x->key) > S3L_KEY_MAX || !key_ok(x->key))) {
		c->close |= c->body_left > 0;
		return error_xml(x, 400, strlen(x->key) > S3L_KEY_MAX ? "KeyTooLongError" : "InvalidArgument",
				 "aq-s3lite keys are at most 1024 bytes with no empty, '.' or '..' component");
	}
	for (size_t i = 0; i < sizeof s3l_routes / sizeof s3l_routes[0]; i++)
		if (s3l_routes[i].m == x->r.method && s3l_routes[i].object == obj)
			rt = &s3l_routes[i];
	if (!rt) {
		c->close |= c->body_left > 0;
		return error_xml(x, 405, "MethodNotAllowed", "The specified method is not allowed against this resource.");
	}
	if (x->r.expect_continue && c->body_left > 0) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
		if (send(c->fd, cont, sizeof cont - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof cont - 1))
			return -1;
	}
	if (!(rt->flags & S3L_F_BODY) && c->body_left > 0) {
		struct s3l_digests d;
		if (body_read(c, -1, &d) != 0)
			return -1;
		if (body_check(x, &d))
			return 0;
	}
	return rt->fn(x);
}

static void log_req(struct s3l_ctx *x)
{
	if (!cfg.log)
		return;
	flockfile(cfg.log);
	fprintf(cfg.log, "%.*s %.*s%s%.*s %d %llu conn=%lu%s%s\n", (int)x->r.method_name.n, x->r.method_name.p,
		(int)x->r.path.n, x->r.path.p, x->r.query.n ? "?" : "", (int)x->r.query.n, x->r.query.p, x->c->status,
		(unsigned long long)x->c->sent, x->c->id, x->c->code ? " " : "", x->c->code ? x->c->code : "");
	fflush(cfg.log);
	funlockfile(cfg.log);
}

/* Serves requests on one connection until it closes. */
static void serve(struct s3l_conn *c)
{
	struct s3l_ctx *x = malloc(sizeof *x);
	static const char too_big[] = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	static const char bad[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

	if (!x)
		return;
	for (;;) {
		int h = s3l_req_parse(c->in, c->len, &x->r);
		if (h == 0) {
			ssize_t r;
			do
				r = recv(c->fd, c->in + c->len, sizeof c->in - c->len, 0);
			while (r < 0 && errno == EINTR);
			if (r <= 0)
				break;
			c->len += (size_t)r;
			continue;
		}
		if (h < 0) {
			const char *m = h == -E2BIG ? too_big : bad;
			(void)!send(c->fd, m, strlen(m), MSG_NOSIGNAL);
			break;
		}
		x->c = c;
		x->path[0] = '\0';
		x->bucket[0] = '\0';
		x->payload_hash[0] = '\0';
		x->nq = 0;
		c->head = (size_t)h;
		c->pos = (size_t)h;
		c->body_left = x->r.content_length > 0 ? x->r.content_length : 0;
		c->close = !x->r.keep_alive;
		c->req_id = atomic_fetch_add(&s3l_req_seq, 1) + 1;
		c->status = 0;
		c->sent = 0;
		c->code = NULL;
		if (cfg.latency_ms) {
			struct timespec d = {cfg.latency_ms / 1000, (long)(cfg.latency_ms % 1000) * 1000000L};
			while (nanosleep(&d, &d) != 0 && errno == EINTR)
				;
		}
		if (dispatch(x) != 0)
			c->close = 1;
		log_req(x);
		if (c->close || c->body_left > 0)
			break;
		memmove(c->in, c->in + c->pos, c->len - c->pos);
		c->len -= c->pos;
	}
	free(x);
}

static void *conn_main(void *arg)
{
	struct s3l_conn *c = arg;

	serve(c);
	close(c->fd);
	free(c->body);
	free(c);
	sem_post(&s3l_slots);
	return NULL;
}

/* ---- start-up ---- */

static void usage(void)
{
	fprintf(stderr, "usage: aq-s3lite --listen 127.0.0.1:PORT --root DIR --access-key AK --secret-key SK\n"
			"                 [--region us-east-1] [--threads N] [--log FILE] [--latency-ms N]\n");
	exit(2);
}

/* DIR/.tmp: leftovers of PUTs cut short by a crash are never visible; drop them. */
static int tmp_open(void)
{
	DIR *d;
	struct dirent *de;
	int fd;

	if (mkdirat(cfg.rootfd, ".tmp", 0755) != 0 && errno != EEXIST)
		return -1;
	fd = openat(cfg.rootfd, ".tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if ((d = fdopendir(dup(fd))) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.')
				unlinkat(fd, de->d_name, 0);
		closedir(d);
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *listen_s = NULL, *log_path = NULL;
	int lfd, one = 1;
	unsigned long conn_seq = 0;
	pthread_attr_t attr;

	cfg.region = "us-east-1";
	cfg.threads = 128;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			usage();
		if (!strcmp(a, "--listen"))
			listen_s = v;
		else if (!strcmp(a, "--root"))
			cfg.root = v;
		else if (!strcmp(a, "--access-key"))
			cfg.ak = v;
		else if (!strcmp(a, "--secret-key"))
			cfg.sk = v;
		else if (!strcmp(a, "--region"))
			cfg.region = v;
		else if (!strcmp(a, "--log"))
			log_path = v;
		else if (!strcmp(a, "--threads")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);
			if (*end || n == 0 || n > 4096)
				usage();
			cfg.threads = (unsigned)n;
		} else if (!strcmp(a, "--latency-ms")) {
			char *end;
			unsigned long n = strtoul(v, &end, 10);
			if (*end || end == v || n > 10000)
				usage();
			cfg.latency_ms = (unsigned)n;
		} else
			usage();
		i++;
	}
	if (!listen_s || !cfg.root || !cfg.ak || !cfg.sk || !*cfg.ak || !*cfg.sk || strlen(cfg.sk) > 256 ||
	    strchr(cfg.ak, '/') || !*cfg.region || strlen(cfg.region) > 64)
		usage();
	if (tb_parse_addr(listen_s, &cfg.addr) != 0) {
		fprintf(stderr, "aq-s3lite: bad --listen %s (want IPv4:PORT)\n", listen_s);
		return 2;
	}
	if (mkdir(cfg.root, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "aq-s3lite: mkdir %s: %s\n", cfg.root, strerror(errno));
		return 1;
	}
	if ((cfg.rootfd = open(cfg.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || (cfg.tmpfd = tmp_open()) < 0) {
		fprintf(stderr, "aq-s3lite: %s: %s\n", cfg.root, strerror(errno));
		return 1;
	}
	if (log_path && !(cfg.log = fopen(log_path, "a"))) {
		fprintf(stderr, "aq-s3lite: %s: %s\n", log_path, strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(lfd, (struct sockaddr *)&cfg.addr, sizeof cfg.addr) != 0 || listen(lfd, 512) != 0) {
		fprintf(stderr, "aq-s3lite: listen %s: %s\n", listen_s, strerror(errno));
		return 1;
	}
	sem_init(&s3l_slots, 0, cfg.threads);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (;;) {
		struct s3l_conn *c;
		struct timeval tv = { .tv_sec = 120 };
		pthread_t t;
		int fd;

		while (sem_wait(&s3l_slots) != 0)
			;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			sem_post(&s3l_slots);
			if (errno == EMFILE || errno == ENFILE)
				usleep(10000);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (!(c = calloc(1, sizeof *c))) {
			close(fd);
			sem_post(&s3l_slots);
			continue;
		}
		c->fd = fd;
		c->id = ++conn_seq;
		if (pthread_create(&t, &attr, conn_main, c) != 0) {
			close(fd);
			free(c);
			sem_post(&s3l_slots);
		}
	}
}
