/* s3lite_req: bounded parsers for aq-s3lite's requests (see s3lite_req.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "bench/tier/s3lite_req.h"
#include "util/ut_hex.h"

static int is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int str_ieq(struct s3l_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && strncasecmp(s.p, lit, n) == 0;
}

/* Contains token (case-insensitive) as a ','-separated element. */
static int list_has(struct s3l_str s, const char *tok)
{
	size_t i = 0, n = strlen(tok);

	while (i < s.n) {
		size_t b, e;
		while (i < s.n && (s.p[i] == ' ' || s.p[i] == '\t' || s.p[i] == ','))
			i++;
		b = i;
		while (i < s.n && s.p[i] != ',')
			i++;
		e = i;
		while (e > b && (s.p[e - 1] == ' ' || s.p[e - 1] == '\t'))
			e--;
		if (e - b == n && strncasecmp(s.p + b, tok, n) == 0)
			return 1;
	}
	return 0;
}

static int parse_u64(struct s3l_str s, uint64_t *out)
{
	uint64_t v = 0;

	if (s.n == 0 || s.n > 19)
		return -EINVAL;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s.p[i] - '0');
	}
	*out = v;
	return 0;
}

static const struct {
	const char *name;
	enum s3l_method m;
} s3l_methods[] = {
	{ "GET", S3L_GET }, { "HEAD", S3L_HEAD }, { "PUT", S3L_PUT }, { "DELETE", S3L_DELETE }, { "POST", S3L_POST },
};

/* Request line "METHOD SP TARGET SP HTTP/1.x" in [p, e). */
static int parse_line(const char *p, const char *e, struct s3l_req *r)
{
	const char *sp1, *sp2, *q;

	sp1 = memchr(p, ' ', (size_t)(e - p));
	if (!sp1 || sp1 == p)
		return -EINVAL;
	for (const char *c = p; c < sp1; c++)
		if (!is_tchar((unsigned char)*c))
			return -EINVAL;
	r->method_name = (struct s3l_str){ p, (size_t)(sp1 - p) };
	r->method = S3L_OTHER;
	for (size_t i = 0; i < sizeof s3l_methods / sizeof s3l_methods[0]; i++)
		if (r->method_name.n == strlen(s3l_methods[i].name) &&
		    memcmp(p, s3l_methods[i].name, r->method_name.n) == 0)
			r->method = s3l_methods[i].m;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(e - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1 || sp1[1] != '/')
		return -EINVAL;
	for (const char *c = sp1 + 1; c < sp2; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return -EINVAL;
	q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
	r->path = (struct s3l_str){ sp1 + 1, (size_t)((q ? q : sp2) - sp1 - 1) };
	r->query = q ? (struct s3l_str){ q + 1, (size_t)(sp2 - q - 1) } : (struct s3l_str){ sp2, 0 };
	if (e - sp2 != 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || (sp2[8] != '0' && sp2[8] != '1'))
		return -EINVAL;
	r->minor = sp2[8] - '0';
	return 0;
}

/* One header line [p, e) (no CRLF). */
static int parse_header(const char *p, const char *e, struct s3l_req *r)
{
	const char *colon = memchr(p, ':', (size_t)(e - p)), *v, *ve;
	struct s3l_header *h;

	if (!colon || colon == p)
		return -EINVAL;
	for (const char *c = p; c < colon; c++)
		if (!is_tchar((unsigned char)*c))
			return -EINVAL;
	for (v = colon + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	for (ve = e; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
		;
	for (const char *c = v; c < ve; c++)
		if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
			return -EINVAL;
	if (r->nh == S3L_HEADERS_MAX)
		return -EINVAL;
	h = &r->h[r->nh++];
	h->name = (struct s3l_str){ p, (size_t)(colon - p) };
	h->value = (struct s3l_str){ v, (size_t)(ve - v) };
	if (str_ieq(h->name, "content-length")) {
		uint64_t n;
		if (r->content_length >= 0 || parse_u64(h->value, &n) || n > INT64_MAX)
			return -EINVAL;
		r->content_length = (int64_t)n;
	} else if (str_ieq(h->name, "connection")) {
		if (list_has(h->value, "close"))
			r->keep_alive = 0;
		else if (list_has(h->value, "keep-alive"))
			r->keep_alive = 1;
	} else if (str_ieq(h->name, "expect")) {
		r->expect_continue = str_ieq(h->value, "100-continue");
	} else if (str_ieq(h->name, "transfer-encoding")) {
		r->chunked = 1;
	}
	return 0;
}

int s3l_req_parse(const char *buf, size_t len, struct s3l_req *r)
{
	size_t lim = len < S3L_HEAD_MAX ? len : S3L_HEAD_MAX;
	const char *end = memmem(buf, lim, "\r\n\r\n", 4), *p, *nl;
	int rc;

	if (!end)
		return len >= S3L_HEAD_MAX ? -E2BIG : 0;
	memset(r, 0, sizeof *r);
	r->content_length = -1;
	nl = memmem(buf, (size_t)(end + 2 - buf), "\r\n", 2);
	if ((rc = parse_line(buf, nl, r)) != 0)
		return rc;
	r->keep_alive = r->minor == 1;
	for (p = nl + 2; p < end + 2; p = nl + 2) {
		nl = memmem(p, (size_t)(end + 2 - p), "\r\n", 2);
		if (p[0] == ' ' || p[0] == '\t')
			return -EINVAL;  /* obsolete line folding */
		if ((rc = parse_header(p, nl, r)) != 0)
			return rc;
	}
	return (int)(end + 4 - buf);
}

const struct s3l_str *s3l_req_header(const struct s3l_req *r, const char *name)
{
	for (size_t i = 0; i < r->nh; i++)
		if (str_ieq(r->h[i].name, name))
			return &r->h[i].value;
	return NULL;
}


int s3l_pct_decode(struct s3l_str s, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < s.n; i++) {
		int c = (unsigned char)s.p[i];
		if (c == '%') {
			int hi, lo;
			if (i + 2 >= s.n)
				return -EINVAL;
			hi = ut_hex_value(s.p[i + 1]);
			lo = ut_hex_value(s.p[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0)
			return -EINVAL;
		if (o + 1 >= cap)
			return -E2BIG;
		out[o++] = (char)c;
	}
	if (cap == 0)
		return -E2BIG;
	out[o] = '\0';
	return (int)o;
}

int s3l_query_parse(struct s3l_str q, struct s3l_param *out)
{
	size_t i = 0;
	int n = 0;

	while (i < q.n) {
		size_t b = i, eq;
		const char *amp = memchr(q.p + i, '&', q.n - i);
		size_t e = amp ? (size_t)(amp - q.p) : q.n;
		int rc;

		i = e + 1;
		if (e == b)
			continue;  /* "a&&b" */
		if (n == S3L_QUERY_MAX)
			return -E2BIG;
		for (eq = b; eq < e && q.p[eq] != '='; eq++)
			;
		rc = s3l_pct_decode((struct s3l_str){ q.p + b, eq - b }, out[n].name, sizeof out[n].name);
		if (rc < 0)
			return rc;
		if (eq < e)
			rc = s3l_pct_decode((struct s3l_str){ q.p + eq + 1, e - eq - 1 }, out[n].value, sizeof out[n].value);
		else
			out[n].value[0] = '\0';
		if (rc < 0)
			return rc;
		n++;
	}
	return n;
}

int s3l_range_parse(struct s3l_str v, uint64_t size, uint64_t *first, uint64_t *last)
{
	const char *dash;
	struct s3l_str a, b;
	uint64_t x, y;

	if (v.n < 7 || strncasecmp(v.p, "bytes=", 6) != 0 || memchr(v.p, ',', v.n))
		return 0;
	dash = memchr(v.p + 6, '-', v.n - 6);
	if (!dash)
		return 0;
	a = (struct s3l_str){ v.p + 6, (size_t)(dash - v.p - 6) };
	b = (struct s3l_str){ dash + 1, (size_t)(v.p + v.n - dash - 1) };
	if (a.n == 0) {  /* suffix: the last y bytes */
		if (parse_u64(b, &y))
			return 0;
		if (y == 0 || size == 0)
			return -ERANGE;
		*first = y >= size ? 0 : size - y;
		*last = size - 1;
		return 1;
	}
	if (parse_u64(a, &x))
		return 0;
	if (b.n == 0)
		y = UINT64_MAX;
	else if (parse_u64(b, &y) || y < x)
		return 0;
	if (x >= size)
		return -ERANGE;
	*first = x;
	*last = y >= size ? size - 1 : y;
	return 1;
}

/* "name=value" element of the Authorization header; value up to ',' or end. */
static int auth_field(struct s3l_str v, const char *name, struct s3l_str *out)
{
	size_t n = strlen(name), i = 0;

	while (i < v.n) {
		while (i < v.n && (v.p[i] == ' ' || v.p[i] == ','))
			i++;
		size_t b = i;
		while (i < v.n && v.p[i] != ',')
			i++;
		if (i - b > n && memcmp(v.p + b, name, n) == 0 && v.p[b + n] == '=') {
			*out = (struct s3l_str){ v.p + b + n + 1, i - b - n - 1 };
			return 0;
		}
	}
	return -EINVAL;
}

int s3l_auth_parse(struct s3l_str v, struct s3l_auth *a)
{
	static const char alg[] = "AWS4-HMAC-SHA256 ";
	struct s3l_str cred, rest, *parts[4];
	const char *p, *e;

	memset(a, 0, sizeof *a);
	if (v.n < sizeof alg - 1 || memcmp(v.p, alg, sizeof alg - 1) != 0)
		return -EINVAL;
	rest = (struct s3l_str){ v.p + sizeof alg - 1, v.n - (sizeof alg - 1) };
	if (auth_field(rest, "Credential", &cred) || auth_field(rest, "SignedHeaders", &a->signed_headers) ||
	    auth_field(rest, "Signature", &a->signature))
		return -EINVAL;
	/* AK/DATE/REGION/SERVICE/aws4_request; the access key has no '/' */
	parts[0] = &a->access_key, parts[1] = &a->date, parts[2] = &a->region, parts[3] = &a->service;
	p = cred.p, e = cred.p + cred.n;
	for (int i = 0; i < 4; i++) {
		const char *sl = memchr(p, '/', (size_t)(e - p));
		if (!sl || sl == p)
			return -EINVAL;
		*parts[i] = (struct s3l_str){ p, (size_t)(sl - p) };
		p = sl + 1;
	}
	if ((size_t)(e - p) != 12 || memcmp(p, "aws4_request", 12) != 0 || a->date.n != 8)
		return -EINVAL;
	if (a->signature.n != 64 || a->signed_headers.n == 0)
		return -EINVAL;
	for (size_t i = 0; i < 64; i++)
		if (ut_hex_value(a->signature.p[i]) < 0)
			return -EINVAL;
	for (size_t i = 0; i < a->signed_headers.n; i++) {
		char c = a->signed_headers.p[i];
		if (c != ';' && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' && c != '_' && c != '.')
			return -EINVAL;
	}
	return 0;
}
