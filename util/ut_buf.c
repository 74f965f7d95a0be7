/* ut_buf: the capped growable buffer (see ut_buf.h). Growth doubles from
 * UT_BUF_FIRST, clipped to the cap, so a buffer that stays small costs one
 * small allocation and one that hits its cap never holds more than it. */
#include "util/ut_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define UT_BUF_FIRST 64
#define UT_BUF_MAX (SIZE_MAX / 4) /* a cap above is taken as this one */

void ut_buf_init(struct ut_buf *b, size_t max)
{
	*b = (struct ut_buf){ .max = max > UT_BUF_MAX ? UT_BUF_MAX : max, .err = AQ_OK };
}

void ut_buf_cleanup(struct ut_buf *b)
{
	free(b->p);
	ut_buf_init(b, b->max);
}

void ut_buf_reset(struct ut_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	b->err = AQ_OK;
}

/* Room for n more bytes of content and the NUL, or the sticky error. */
static int buf_reserve(struct ut_buf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (b->err != AQ_OK)
		return b->err;
	if (n > b->max - b->len)
		return b->err = AQ_ETOOBIG;
	want = b->len + n + 1;
	if (want <= b->cap)
		return AQ_OK;
	cap = b->cap ? b->cap : UT_BUF_FIRST;
	while (cap < want)
		cap *= 2;  /* no overflow: want <= max + 1 <= SIZE_MAX / 2 + 1 */
	if (cap > b->max + 1)
		cap = b->max + 1;
	if (!(p = realloc(b->p, cap)))
		return b->err = AQ_ENOMEM;
	b->p = p;
	b->cap = cap;
	return AQ_OK;
}

int ut_buf_add(struct ut_buf *b, const void *data, size_t n)
{
	if (buf_reserve(b, n) != AQ_OK)
		return b->err;
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return AQ_OK;
}

int ut_buf_adds(struct ut_buf *b, const char *s)
{
	return ut_buf_add(b, s, strlen(s));
}

int ut_buf_addf(struct ut_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err != AQ_OK)
		return b->err;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return b->err = AQ_EINVAL;
	if (buf_reserve(b, (size_t)n) != AQ_OK)
		return b->err;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return AQ_OK;
}

void *ut_buf_put_zero(struct ut_buf *b, size_t n)
{
	char *q;

	if (buf_reserve(b, n) != AQ_OK)
		return NULL;
	q = b->p + b->len;
	memset(q, 0, n + 1);  /* the bytes and the NUL after them */
	b->len += n;
	return q;
}

void *ut_buf_put_room(struct ut_buf *b, size_t n)
{
	char *q;

	if (buf_reserve(b, n) != AQ_OK)
		return NULL;
	q = b->p + b->len;
	b->len += n;
	b->p[b->len] = '\0';
	return q;
}

/* The n bytes at off lie inside the content of an error-free buffer. */
static int buf_has(const struct ut_buf *b, size_t off, size_t n)
{
	return b->err == AQ_OK && off <= b->len && b->len - off >= n;
}

void ut_buf_set_be32(struct ut_buf *b, size_t off, uint32_t v)
{
	uint8_t *q;

	if (!buf_has(b, off, 4))
		return;
	q = (uint8_t *)b->p + off;
	q[0] = (uint8_t)(v >> 24);
	q[1] = (uint8_t)(v >> 16);
	q[2] = (uint8_t)(v >> 8);
	q[3] = (uint8_t)v;
}

void ut_buf_set_le16(struct ut_buf *b, size_t off, uint16_t v)
{
	uint8_t *q;

	if (!buf_has(b, off, 2))
		return;
	q = (uint8_t *)b->p + off;
	q[0] = (uint8_t)v;
	q[1] = (uint8_t)(v >> 8);
}

void ut_buf_set_le32(struct ut_buf *b, size_t off, uint32_t v)
{
	if (!buf_has(b, off, 4))
		return;
	ut_buf_set_le16(b, off, (uint16_t)v);
	ut_buf_set_le16(b, off + 2, (uint16_t)(v >> 16));
}

void ut_buf_rewind(struct ut_buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->p[len] = '\0';
	}
	b->err = AQ_OK;
}

uint8_t *ut_buf_bytes(const struct ut_buf *b)
{
	return (uint8_t *)b->p;
}

const char *ut_buf_str(const struct ut_buf *b)
{
	return b->p ? b->p : "";
}

size_t ut_buf_len(const struct ut_buf *b)
{
	return b->len;
}

int ut_buf_err(const struct ut_buf *b)
{
	return b->err;
}

char *ut_buf_steal(struct ut_buf *b, size_t *len)
{
	char *p = NULL;

	if (b->err == AQ_OK) {
		p = b->p ? b->p : calloc(1, 1);
		if (p && len)
			*len = b->len;
		b->p = NULL;
	}
	ut_buf_cleanup(b);
	return p;
}
