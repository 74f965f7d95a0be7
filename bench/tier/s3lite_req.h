/* s3lite_req: the bounded parsers of aq-s3lite (bench/tier/s3lite.c) for
 * the bytes a client sends: the HTTP/1.1 request head, the query string,
 * the Range header, the SigV4 Authorization header and percent-decoding.
 * Pure functions over caller memory, no I/O and no allocation, so
 * fuzz/fuzz_s3lite_req.c links this file alone.
 *
 * Every input is capped (S3L_HEAD_MAX, S3L_HEADERS_MAX, S3L_PATH_MAX,
 * S3L_QUERY_MAX); anything over a cap or malformed is an error, never a
 * truncation.
 */
#ifndef AQ_S3LITE_REQ_H
#define AQ_S3LITE_REQ_H

#include <stddef.h>
#include <stdint.h>

#define S3L_HEAD_MAX (16 * 1024)   /* request line + headers + blank line */
#define S3L_HEADERS_MAX 64
#define S3L_PATH_MAX 2048          /* decoded path, "/bucket/key" */
#define S3L_QUERY_MAX 16           /* query parameters */

struct s3l_str {
	const char *p;
	size_t n;
};

struct s3l_header {
	struct s3l_str name, value;  /* value trimmed of surrounding blanks */
};

enum s3l_method { S3L_GET = 1, S3L_HEAD, S3L_PUT, S3L_DELETE, S3L_POST, S3L_OTHER };

struct s3l_req {
	enum s3l_method method;
	struct s3l_str method_name;
	struct s3l_str path;          /* raw (still percent-encoded), starts with '/' */
	struct s3l_str query;         /* raw, without '?'; n = 0 when none */
	int minor;                    /* HTTP/1.<minor> */
	struct s3l_header h[S3L_HEADERS_MAX];
	size_t nh;
	int64_t content_length;       /* -1 when absent */
	int keep_alive;               /* per version and Connection */
	int expect_continue;          /* Expect: 100-continue */
	int chunked;                  /* Transfer-Encoding present (not supported) */
};

/* Parses the head at the start of buf[0..len). Returns the head's length
 * (through the blank line) when complete, 0 when more bytes are needed
 * (and len < S3L_HEAD_MAX), -E2BIG when no head ends within S3L_HEAD_MAX,
 * -EINVAL when malformed (bad request line, header syntax, duplicate or
 * bad Content-Length, too many headers). r points into buf. */
int s3l_req_parse(const char *buf, size_t len, struct s3l_req *r);

/* The first header named name (case-insensitive), or NULL. */
const struct s3l_str *s3l_req_header(const struct s3l_req *r, const char *name);

/* Percent-decodes s into out (cap bytes, NUL-terminated); '+' stays '+'.
 * Returns the decoded length, -EINVAL for a bad escape or a NUL byte,
 * -E2BIG when it does not fit. */
int s3l_pct_decode(struct s3l_str s, char *out, size_t cap);

struct s3l_param {
	char name[64];
	char value[1100];             /* a key (1024) fits */
};

/* Splits a raw query into decoded name/value pairs ("a" alone = value "").
 * Returns how many (<= S3L_QUERY_MAX), -E2BIG over a cap, -EINVAL on a bad
 * escape. */
int s3l_query_parse(struct s3l_str q, struct s3l_param *out);

/* Range header against an object of `size` bytes: "bytes=a-b", "bytes=a-"
 * or "bytes=-n". Returns 1 and [*first, *last] when satisfiable, 0 when the
 * header is not a single byte range (serve the whole object), -ERANGE when
 * unsatisfiable (416). */
int s3l_range_parse(struct s3l_str v, uint64_t size, uint64_t *first, uint64_t *last);

struct s3l_auth {
	struct s3l_str access_key, date, region, service;  /* from Credential=AK/DATE/REGION/SERVICE/aws4_request */
	struct s3l_str signed_headers;                   /* "host;x-amz-date", lowercase, ';'-separated */
	struct s3l_str signature;                        /* 64 lowercase hex digits */
};

/* Parses "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...".
 * Returns 0, or -EINVAL when it is not that shape. */
int s3l_auth_parse(struct s3l_str v, struct s3l_auth *a);

#endif
