/* obj_s3: the S3 backend of obj.h, over libcurl.
 *
 * Path-style URLs (<endpoint>/<bucket>/<key>), signed by libcurl's AWS SigV4
 * ("aws:amz:<region>:s3") with x-amz-content-sha256 set to the payload's
 * hash; PUT carries Content-MD5 so the store verifies the bytes before it
 * answers 200. Keys use an alphabet that needs no percent-encoding in a
 * path; query values (prefix, continuation token) are percent-encoded and
 * the query is built in sorted order, as the canonical request wants.
 *
 * Easy handles are pooled (curl_easy_reset keeps their connections, so
 * requests reuse keep-alive connections); obj_get_many drives up to
 * `parallel` transfers on a pooled multi handle. Every transfer has the
 * store's timeout. Answers map to obj errors in one place (s3_result):
 * connect failures, timeouts, 5xx, 429 and SlowDown/RequestTimeout are
 * -EAGAIN, 403 -EACCES, 404 -ENOENT, others -EIO. XML answers go through
 * obj_xml (bounded). No function here logs; the last failure is kept for
 * obj_last_error().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "agent/obj/obj_be.h"
#include "agent/obj/obj_xml.h"
#include "api/api_error.h"
#include "util/ut_buf.h"
#include "util/ut_hex.h"

#define S3_POOL_MAX 64      /* idle easy handles kept */
#define S3_MULTI_MAX 8      /* idle multi handles kept */
#define S3_MULTI_CONNS 64   /* idle connections a multi handle keeps */
#define S3_ERRBODY_MAX 4096 /* bytes of an error answer we read */
#define S3_URL_MAX (512 + 256 + 3 * OBJ_XML_TOKEN_MAX + 3 * OBJ_KEY_MAX + 128)
#define S3_LIST_PAGE 1000

struct s3_be {
	pthread_mutex_t lock;
	CURL *easy[S3_POOL_MAX];
	size_t n_easy;
	CURLM *multi[S3_MULTI_MAX];
	size_t n_multi;
	char sigv4[128];
};

/* One request and where its answer goes. */
struct s3_req {
	CURL *h;
	struct curl_slist *hdrs;
	const char *what;      /* "GET", "PUT", ... for error texts */
	const char *key;       /* or the bucket, for error texts */
	/* 2xx body: a caller buffer (GET) or, with grow, list (list). */
	char *buf;
	size_t cap, len;
	int grow;              /* the body goes to list, up to OBJ_XML_BODY_MAX */
	struct ut_buf list;
	int full;              /* the caller's buffer filled and more came */
	int too_big;           /* growable body went over its cap */
	uint64_t off;          /* ranged GET: where the range starts */
	uint64_t skip;         /* 200 to a ranged GET: bytes to drop first */
	size_t slot;           /* get_many: index of the range */
	int64_t range_total;   /* total of "Content-Range: bytes a-b/total", -1 if none */
	char err[S3_ERRBODY_MAX];
	size_t err_len;
	char curl_err[CURL_ERROR_SIZE];
	char url[S3_URL_MAX];
};

static struct s3_be *be_of(struct obj_store *s)
{
	return s->be;
}

static pthread_once_t s3_once = PTHREAD_ONCE_INIT;
static CURLcode s3_init_rc;

/* curl_global_init is not thread-safe before 7.84: run it once. */
static void s3_global_init(void)
{
	s3_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- handle pools ---- */

static CURL *easy_take(struct s3_be *b)
{
	CURL *h = NULL;

	pthread_mutex_lock(&b->lock);
	if (b->n_easy > 0)
		h = b->easy[--b->n_easy];
	pthread_mutex_unlock(&b->lock);
	return h ? h : curl_easy_init();
}

static void easy_give(struct s3_be *b, CURL *h)
{
	if (!h)
		return;
	curl_easy_reset(h);  /* keeps the connection cache: keep-alive */
	pthread_mutex_lock(&b->lock);
	if (b->n_easy < S3_POOL_MAX) {
		b->easy[b->n_easy++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&b->lock);
	if (h)
		curl_easy_cleanup(h);
}

static CURLM *multi_take(struct s3_be *b)
{
	CURLM *m = NULL;

	pthread_mutex_lock(&b->lock);
	if (b->n_multi > 0)
		m = b->multi[--b->n_multi];
	pthread_mutex_unlock(&b->lock);
	if (!m && (m = curl_multi_init()))
		/* Keep connections between calls: by default the cache shrinks
		 * with the number of handles added, which is 0 between calls. */
		curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)S3_MULTI_CONNS);
	return m;
}

static void multi_give(struct s3_be *b, CURLM *m)
{
	pthread_mutex_lock(&b->lock);
	if (b->n_multi < S3_MULTI_MAX) {
		b->multi[b->n_multi++] = m;
		m = NULL;
	}
	pthread_mutex_unlock(&b->lock);
	if (m)
		curl_multi_cleanup(m);
}

/* ---- digests ---- */

static int digest(const EVP_MD *md, const void *buf, size_t len, unsigned char *out, unsigned *olen)
{
	return EVP_Digest(buf, len, out, olen, md, NULL) == 1 ? 0 : -EIO;
}

/* Header "x-amz-content-sha256: <hex>" of buf. */
static int sha256_header(const void *buf, size_t len, char *hdr, size_t cap)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	int off;

	if (digest(EVP_sha256(), buf ? buf : "", len, md, &n) != 0)
		return -EIO;
	off = snprintf(hdr, cap, "x-amz-content-sha256: ");
	if (off < 0 || (size_t)off >= cap)
		return -EOVERFLOW;
	return ut_hex_encode(md, n, hdr + off, cap - (size_t)off) == AQ_OK ? 0 : -EOVERFLOW;
}

/* Header "Content-MD5: <base64>" of buf. */
static int md5_header(const void *buf, size_t len, char *hdr, size_t cap)
{
	unsigned char md[EVP_MAX_MD_SIZE], b64[64];
	unsigned n = 0;

	if (digest(EVP_md5(), buf ? buf : "", len, md, &n) != 0)
		return -EIO;
	EVP_EncodeBlock(b64, md, (int)n);
	snprintf(hdr, cap, "Content-MD5: %s", (const char *)b64);
	return 0;
}

/* ---- one request ---- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct s3_req *r = arg;
	size_t n = size * nmemb, take;
	long code = 0;

	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 300) {
		take = n < sizeof r->err - 1 - r->err_len ? n : sizeof r->err - 1 - r->err_len;
		memcpy(r->err + r->err_len, data, take);
		r->err_len += take;
		return n;
	}
	if (r->skip) {
		take = r->skip < n ? (size_t)r->skip : n;
		r->skip -= take;
		data += take;
		n -= take;
		if (n == 0)
			return size * nmemb;
	}
	if (r->grow) {
		if (ut_buf_add(&r->list, data, n) == AQ_OK)
			return size * nmemb;
		r->too_big = 1;
		return 0;
	}
	take = n < r->cap - r->len ? n : r->cap - r->len;
	if (take)
		memcpy(r->buf + r->len, data, take);
	r->len += take;
	if (take < n) {
		r->full = 1;  /* more than we asked for: stop the transfer */
		return 0;
	}
	return size * nmemb;
}

/* Picks the object's total size out of a Content-Range header. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct s3_req *r = arg;
	size_t n = size * nmemb;
	static const char name[] = "content-range:";
	char line[128];

	/* A store that ignores Range answers 200 with the whole object: drop
	 * the bytes before the range (each status line, e.g. after a 100). */
	if (n > 12 && memcmp(data, "HTTP/", 5) == 0) {
		const char *sp = memchr(data, ' ', n);
		r->skip = sp && (size_t)(sp - data) + 4 <= n && memcmp(sp + 1, "200", 3) == 0 ? r->off : 0;
		return n;
	}
	if (n < sizeof name || n >= sizeof line || strncasecmp(data, name, sizeof name - 1) != 0)
		return n;
	memcpy(line, data, n);
	line[n] = '\0';
	const char *slash = strchr(line, '/');
	char *end;
	if (slash && slash[1] >= '0' && slash[1] <= '9') {
		unsigned long long v = strtoull(slash + 1, &end, 10);
		if (v <= INT64_MAX && (*end == '\r' || *end == '\n' || *end == '\0'))
			r->range_total = (int64_t)v;
	}
	/* s3rver answers a range of an empty object with "206, Content-Length:
	 * 1, Content-Range: bytes 0-0/0" and never sends the byte (S3 says
	 * 416). Nothing to read: stop here rather than wait for the timeout. */
	return r->range_total == 0 ? 0 : n;
}

/* Sets up r->h for method on url-path `path` (already encoded, starting with
 * '/'; may hold a query) with body (PUT) and extra headers. */
static int req_init(struct obj_store *s, struct s3_req *r, const char *method, const char *path,
		    const void *body, size_t body_len, const char *const *extra)
{
	struct s3_be *b = be_of(s);
	char hdr[128];
	CURL *h;

	r->what = method;
	if ((size_t)snprintf(r->url, sizeof r->url, "%s%s", s->cfg.endpoint, path) >= sizeof r->url)
		return -EINVAL;
	if (!(h = r->h = easy_take(b)))
		return -ENOMEM;
	if (sha256_header(body, body_len, hdr, sizeof hdr) != 0 || !(r->hdrs = curl_slist_append(NULL, hdr)))
		return -ENOMEM;
	for (; extra && *extra; extra++) {
		struct curl_slist *n = curl_slist_append(r->hdrs, *extra);
		if (!n)
			return -ENOMEM;
		r->hdrs = n;
	}
	curl_easy_setopt(h, CURLOPT_URL, r->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, b->sigv4);
	curl_easy_setopt(h, CURLOPT_USERNAME, s->cfg.access_key);
	curl_easy_setopt(h, CURLOPT_PASSWORD, s->cfg.secret_key);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)s->cfg.timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)s->cfg.timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->curl_err);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_PRIVATE, r);
	r->range_total = -1;
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	if (s->cfg.ca_file[0])
		curl_easy_setopt(h, CURLOPT_CAINFO, s->cfg.ca_file);
	if (strcmp(method, "HEAD") == 0) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (strcmp(method, "PUT") == 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
		/* No wait for "100 Continue" (a round trip per PUT). Not removed
		 * with an empty "Expect:" header: libcurl would sign that header
		 * and then not send it, and S3 would refuse the signature. */
		curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdrs);
	return 0;
}

static void req_done(struct obj_store *s, struct s3_req *r)
{
	easy_give(be_of(s), r->h);
	r->h = NULL;
	curl_slist_free_all(r->hdrs);
	r->hdrs = NULL;
	if (r->grow)
		ut_buf_cleanup(&r->list);
}

/* The obj error for a finished transfer; *status is the HTTP status (0 if
 * none). Records the failure text. */
static int s3_result(struct obj_store *s, struct s3_req *r, CURLcode cc, long *status)
{
	struct obj_xml_error xe;
	int rc;

	*status = 0;
	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, status);
	if (cc == CURLE_WRITE_ERROR && r->full)
		cc = CURLE_OK;  /* we stopped it: the caller's buffer is full */
	if (cc != CURLE_OK) {
		switch (cc) {
		case CURLE_COULDNT_CONNECT: case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_RESOLVE_PROXY:
		case CURLE_OPERATION_TIMEDOUT: case CURLE_SEND_ERROR: case CURLE_RECV_ERROR:
		case CURLE_GOT_NOTHING: case CURLE_PARTIAL_FILE: case CURLE_SSL_CONNECT_ERROR:
			rc = -EAGAIN;
			break;
		case CURLE_OUT_OF_MEMORY:
			rc = -ENOMEM;
			break;
		default:
			rc = -EIO;
		}
		obj_be_error(s, "%s %s: %s", r->what, r->key,
			     r->curl_err[0] ? r->curl_err : curl_easy_strerror(cc));
		return rc;
	}
	if (*status >= 200 && *status < 300)
		return r->too_big ? -EIO : 0;
	if (obj_xml_error(r->err, r->err_len, &xe) != 0)
		xe.code[0] = xe.message[0] = '\0';
	if (*status == 404)
		rc = -ENOENT;
	else if (*status == 403)
		rc = -EACCES;
	else if (*status >= 500 || *status == 429 || strcmp(xe.code, "SlowDown") == 0 ||
		 strcmp(xe.code, "RequestTimeout") == 0)
		rc = -EAGAIN;
	else
		rc = -EIO;
	if (rc != -ENOENT && *status != 416)  /* 416: an empty read to get_finish */
		obj_be_error(s, "%s %s: HTTP %ld %s%s%s", r->what, r->key, *status, xe.code,
			     xe.message[0] ? ": " : "", xe.message);
	return rc;
}

static int req_perform(struct obj_store *s, struct s3_req *r, long *status)
{
	return s3_result(s, r, curl_easy_perform(r->h), status);
}

/* "/<bucket>/<key>"; keys need no encoding (see obj.h's alphabet). */
static int obj_path(struct obj_store *s, const char *key, char *out, size_t cap)
{
	return (size_t)snprintf(out, cap, "/%s/%s", s->cfg.bucket, key) < cap ? 0 : -EINVAL;
}

/* ---- operations ---- */

static int s3_open(struct obj_store *s)
{
	struct s3_be *b;

	pthread_once(&s3_once, s3_global_init);
	if (s3_init_rc != CURLE_OK)
		return -EIO;
	if (!(b = calloc(1, sizeof *b)))
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	snprintf(b->sigv4, sizeof b->sigv4, "aws:amz:%s:s3", s->cfg.region);
	s->be = b;
	return 0;
}

static void s3_close(struct obj_store *s)
{
	struct s3_be *b = be_of(s);

	for (size_t i = 0; i < b->n_easy; i++)
		curl_easy_cleanup(b->easy[i]);
	for (size_t i = 0; i < b->n_multi; i++)
		curl_multi_cleanup(b->multi[i]);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

static int s3_ensure_bucket(struct obj_store *s)
{
	struct s3_req *r = calloc(1, sizeof *r);
	char path[300], body[256];
	const char *extra[] = { "Content-Type: application/xml", NULL };
	size_t blen = 0;
	long status;
	int rc;

	if (!r)
		return -ENOMEM;
	r->key = s->cfg.bucket;
	snprintf(path, sizeof path, "/%s", s->cfg.bucket);
	if ((rc = req_init(s, r, "HEAD", path, NULL, 0, NULL)) != 0)
		goto out;
	rc = req_perform(s, r, &status);
	req_done(s, r);
	if (rc != -ENOENT)
		goto out;  /* 0: exists and is ours; or a real failure */
	/* us-east-1 is the one region where the body must be absent. */
	if (strcmp(s->cfg.region, "us-east-1") != 0)
		blen = (size_t)snprintf(body, sizeof body,
					"<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
					"<LocationConstraint>%s</LocationConstraint></CreateBucketConfiguration>",
					s->cfg.region);
	memset(r, 0, sizeof *r);
	r->key = s->cfg.bucket;
	if ((rc = req_init(s, r, "PUT", path, blen ? body : NULL, blen, extra)) != 0)
		goto out;
	rc = req_perform(s, r, &status);
	if (rc == -EIO && status == 409) {
		struct obj_xml_error xe;
		if (obj_xml_error(r->err, r->err_len, &xe) == 0 && strcmp(xe.code, "BucketAlreadyOwnedByYou") == 0)
			rc = 0;  /* created meanwhile by another of our agents */
	}
out:
	req_done(s, r);
	free(r);
	return rc;
}

static int s3_put(struct obj_store *s, const char *key, const void *buf, size_t len)
{
	struct s3_req *r = calloc(1, sizeof *r);
	char path[OBJ_KEY_MAX + 300], md5[64];
	const char *extra[] = { md5, "Content-Type: application/octet-stream", NULL };
	long status;
	int rc;

	if (!r)
		return -ENOMEM;
	r->key = key;
	if ((rc = obj_path(s, key, path, sizeof path)) != 0 || (rc = md5_header(buf, len, md5, sizeof md5)) != 0)
		goto out;
	if ((rc = req_init(s, r, "PUT", path, buf, len, extra)) != 0)
		goto out;
	if ((rc = req_perform(s, r, &status)) == 0)
		atomic_fetch_add(&s->put_bytes, len);
out:
	req_done(s, r);
	free(r);
	return rc;
}

/* Prepares a ranged GET of [off, off+len) into buf. */
static int get_init(struct obj_store *s, struct s3_req *r, const char *key, uint64_t off, void *buf, size_t len)
{
	char path[OBJ_KEY_MAX + 300], range[80];
	const char *extra[] = { range, NULL };

	r->key = key;
	r->buf = buf;
	r->cap = len;
	r->off = off;
	snprintf(range, sizeof range, "Range: bytes=%llu-%llu", (unsigned long long)off,
		 (unsigned long long)(off + len - 1));
	if (obj_path(s, key, path, sizeof path) != 0)
		return -EINVAL;
	return req_init(s, r, "GET", path, NULL, 0, extra);
}

/* Result of a finished ranged GET: 416 (range starts at or past the end)
 * is an empty read; a 200 (range ignored) was cut to the range by on_header
 * and on_body. */
static int get_finish(struct obj_store *s, struct s3_req *r, CURLcode cc, uint64_t off, size_t *got)
{
	long status;
	int rc;

	*got = 0;
	if (cc == CURLE_WRITE_ERROR && r->range_total == 0 && r->len == 0)
		return 0;  /* an empty object (see on_header) */
	rc = s3_result(s, r, cc, &status);
	if (rc == -EIO && status == 416)
		return 0;
	if (rc != 0)
		return rc;
	/* A 206 must hold exactly the part of [off, off+len) the object has. */
	if (status == 206 && r->range_total >= 0) {
		uint64_t total = (uint64_t)r->range_total;
		uint64_t want = off >= total ? 0 : total - off < r->cap ? total - off : r->cap;
		if (r->len != want) {
			obj_be_error(s, "GET %s: %zu bytes for a range of %llu", r->key, r->len,
				     (unsigned long long)want);
			return -EIO;
		}
	}
	*got = r->len;
	atomic_fetch_add(&s->get_bytes, r->len);
	return 0;
}

static int s3_get(struct obj_store *s, const char *key, uint64_t off, void *buf, size_t len, size_t *got)
{
	struct s3_req *r = calloc(1, sizeof *r);
	int rc;

	*got = 0;
	if (!r)
		return -ENOMEM;
	if ((rc = get_init(s, r, key, off, buf, len)) == 0)
		rc = get_finish(s, r, curl_easy_perform(r->h), off, got);
	req_done(s, r);
	free(r);
	return rc;
}

/* Up to `parallel` requests in flight on one multi handle; a slot is
 * reused as soon as its transfer ends. */
static int s3_get_many(struct obj_store *s, struct obj_range *rg, size_t n, unsigned parallel)
{
	struct s3_be *b = be_of(s);
	size_t nslots = n < parallel ? n : parallel, next = 0, done = 0, active = 0;
	struct s3_req *slots = calloc(nslots, sizeof *slots), **free_slots = calloc(nslots, sizeof *free_slots);
	CURLM *m = multi_take(b);
	size_t nfree = nslots;
	int rc = 0;

	if (!slots || !free_slots || !m) {
		for (size_t i = 0; i < n; i++)
			rg[i].rc = -ENOMEM;
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nslots; i++)
		free_slots[i] = &slots[i];
	while (done < n) {
		while (nfree > 0 && next < n) {
			struct s3_req *r = free_slots[--nfree];
			memset(r, 0, sizeof *r);
			r->slot = next;
			int irc = get_init(s, r, rg[next].key, rg[next].off, rg[next].buf, rg[next].len);
			if (irc == 0 && curl_multi_add_handle(m, r->h) != CURLM_OK)
				irc = -ENOMEM;
			if (irc != 0) {
				rg[next].rc = irc;
				req_done(s, r);
				free_slots[nfree++] = r;
				done++;
			} else {
				active++;
			}
			next++;
		}
		int running = 0;
		curl_multi_perform(m, &running);
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			struct s3_req *r = NULL;
			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			CURLcode cc = msg->data.result;
			curl_multi_remove_handle(m, r->h);
			rg[r->slot].rc = get_finish(s, r, cc, rg[r->slot].off, &rg[r->slot].got);
			req_done(s, r);
			free_slots[nfree++] = r;
			active--;
			done++;
		}
		if (done < n && active > 0)
			curl_multi_poll(m, NULL, 0, 100, NULL);
	}
out:
	if (m)
		multi_give(b, m);
	free(slots);
	free(free_slots);
	return rc;
}

static int s3_head(struct obj_store *s, const char *key, uint64_t *size)
{
	struct s3_req *r = calloc(1, sizeof *r);
	char path[OBJ_KEY_MAX + 300];
	curl_off_t cl = -1;
	long status;
	int rc;

	if (!r)
		return -ENOMEM;
	r->key = key;
	if ((rc = obj_path(s, key, path, sizeof path)) != 0 || (rc = req_init(s, r, "HEAD", path, NULL, 0, NULL)) != 0)
		goto out;
	if ((rc = req_perform(s, r, &status)) != 0)
		goto out;
	if (curl_easy_getinfo(r->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) != CURLE_OK || cl < 0) {
		obj_be_error(s, "HEAD %s: no Content-Length", key);
		rc = -EIO;
		goto out;
	}
	*size = (uint64_t)cl;
out:
	req_done(s, r);
	free(r);
	return rc;
}

static int s3_delete(struct obj_store *s, const char *key)
{
	struct s3_req *r = calloc(1, sizeof *r);
	char path[OBJ_KEY_MAX + 300];
	long status;
	int rc;

	if (!r)
		return -ENOMEM;
	r->key = key;
	if ((rc = obj_path(s, key, path, sizeof path)) == 0 && (rc = req_init(s, r, "DELETE", path, NULL, 0, NULL)) == 0)
		rc = req_perform(s, r, &status);
	if (rc == -ENOENT)
		rc = 0;
	req_done(s, r);
	free(r);
	return rc;
}

struct list_filter {
	const char *prefix;
	obj_list_cb cb;
	void *arg;
};

/* Passes on keys obj could have written: valid and under the prefix. */
static int list_filter_cb(void *arg, const char *key, uint64_t size)
{
	struct list_filter *f = arg;

	if (obj_key_check(key) != 0 || strncmp(key, f->prefix, strlen(f->prefix)) != 0)
		return 0;
	return f->cb(f->arg, key, size);
}

static int s3_list(struct obj_store *s, const char *prefix, obj_list_cb cb, void *arg)
{
	struct s3_req *r = calloc(1, sizeof *r);
	struct obj_xml_page *page = calloc(1, sizeof *page);
	struct list_filter f = { prefix, cb, arg };
	char *path = malloc(S3_URL_MAX), *etok = NULL, *epre = NULL;
	long status;
	int rc = 0;

	if (!r || !page || !path) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		memset(r, 0, sizeof *r);
		r->key = prefix[0] ? prefix : s->cfg.bucket;
		r->grow = 1;
		ut_buf_init(&r->list, OBJ_XML_BODY_MAX);
		if (!(r->h = easy_take(be_of(s)))) {
			rc = -ENOMEM;
			goto out;
		}
		/* Query parameters in sorted order, values percent-encoded. */
		curl_free(etok);
		curl_free(epre);
		etok = curl_easy_escape(r->h, page->token, 0);
		epre = curl_easy_escape(r->h, prefix, 0);
		easy_give(be_of(s), r->h);
		r->h = NULL;
		if (!etok || !epre) {
			rc = -ENOMEM;
			goto out;
		}
		if ((size_t)snprintf(path, S3_URL_MAX, "/%s?%s%s%slist-type=2&max-keys=%d&prefix=%s", s->cfg.bucket,
				     page->token[0] ? "continuation-token=" : "", page->token[0] ? etok : "",
				     page->token[0] ? "&" : "", S3_LIST_PAGE, epre) >= S3_URL_MAX) {
			rc = -EIO;
			goto out;
		}
		if ((rc = req_init(s, r, "GET", path, NULL, 0, NULL)) != 0)
			goto out;
		rc = req_perform(s, r, &status);
		/* Parse after giving the handle back: cb may call obj itself. */
		size_t len = 0;
		char *body = rc == 0 ? ut_buf_steal(&r->list, &len) : NULL;
		req_done(s, r);
		if (rc == 0 && !body)
			rc = -ENOMEM;
		if (rc == 0 && (rc = obj_xml_list(body, len, list_filter_cb, &f, page)) == -EIO)
			obj_be_error(s, "LIST %s: malformed answer", prefix);
		free(body);
		if (rc != 0 || !page->truncated)
			break;
	}
out:
	if (r)
		req_done(s, r);
	curl_free(etok);
	curl_free(epre);
	free(path);
	free(page);
	free(r);
	return rc;
}

const struct obj_ops obj_s3_ops = {
	.open = s3_open,
	.close = s3_close,
	.ensure_bucket = s3_ensure_bucket,
	.put = s3_put,
	.get = s3_get,
	.get_many = s3_get_many,
	.head = s3_head,
	.del = s3_delete,
	.list = s3_list,
};
