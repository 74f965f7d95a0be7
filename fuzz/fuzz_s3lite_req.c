/* fuzz_s3lite_req: libFuzzer harness over tests/fixtures/s3lite_req.c, the
 * parsers aq-s3lite runs on client bytes: the request head, then on what it
 * yields the query string, the path's percent-decoding, the Range header
 * (against a size taken from the input) and the Authorization header. The
 * input is copied into a buffer of exactly its size, so ASan catches any
 * read past the end; every result must lie inside the input and respect
 * the caps. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fixtures/s3lite_req.h"

static void inside(const char *buf, size_t size, struct s3l_str s)
{
	if (s.n && (s.p < buf || s.p + s.n > buf + size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct s3l_req r;
	static struct s3l_param q[S3L_QUERY_MAX];
	static char path[S3L_PATH_MAX];
	char *buf = malloc(size ? size : 1);
	const struct s3l_str *v;
	struct s3l_auth a;
	uint64_t first, last, osize = 0;
	int h, n;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	h = s3l_req_parse(buf, size, &r);
	if (h > 0) {
		if ((size_t)h > size || h > S3L_HEAD_MAX || r.nh > S3L_HEADERS_MAX || r.path.n == 0 || r.path.p[0] != '/')
			abort();
		inside(buf, size, r.path);
		inside(buf, size, r.query);
		for (size_t i = 0; i < r.nh; i++) {
			inside(buf, size, r.h[i].name);
			inside(buf, size, r.h[i].value);
		}
		n = s3l_pct_decode(r.path, path, sizeof path);
		if (n >= 0 && (n >= (int)sizeof path || strlen(path) != (size_t)n))
			abort();
		n = s3l_query_parse(r.query, q);
		if (n > S3L_QUERY_MAX)
			abort();
		for (int i = 0; i < n; i++)
			if (strnlen(q[i].name, sizeof q[i].name) >= sizeof q[i].name ||
			    strnlen(q[i].value, sizeof q[i].value) >= sizeof q[i].value)
				abort();
		for (size_t i = 0; i < 8 && i < size; i++)
			osize = osize << 8 | data[size - 1 - i];
		osize &= (1ULL << 40) - 1;
		if ((v = s3l_req_header(&r, "range")) != NULL) {
			int rc = s3l_range_parse(*v, osize, &first, &last);
			if (rc == 1 && (first > last || last >= osize))
				abort();
			if (rc != 1 && rc != 0 && rc != -ERANGE)
				abort();
		}
		if ((v = s3l_req_header(&r, "authorization")) != NULL && s3l_auth_parse(*v, &a) == 0) {
			inside(buf, size, a.access_key);
			inside(buf, size, a.signed_headers);
			if (a.signature.n != 64 || a.date.n != 8)
				abort();
		}
	} else if (h != 0 && h != -E2BIG && h != -EINVAL) {
		abort();
	}
	free(buf);
	return 0;
}
