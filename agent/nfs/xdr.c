/* xdr: bounded XDR cursor and encode buffer; see xdr.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/xdr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void xdr_cur_init(struct xdr_cur *cur, const void *data, size_t len)
{
	cur->p = data;
	cur->len = len;
	cur->pos = 0;
	cur->err = 0;
}

size_t xdr_left(const struct xdr_cur *cur)
{
	return cur->err ? 0 : cur->len - cur->pos;
}

/* Take n bytes (already padded by the caller) or fail stickily. */
static const uint8_t *xdr_take(struct xdr_cur *cur, size_t n)
{
	const uint8_t *q;

	if (cur->err || n > cur->len - cur->pos) {
		cur->err = -EBADMSG;
		return NULL;
	}
	q = cur->p + cur->pos;
	cur->pos += n;
	return q;
}

uint32_t xdr_u32(struct xdr_cur *cur)
{
	const uint8_t *q = xdr_take(cur, 4);

	if (!q)
		return 0;
	return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

uint64_t xdr_u64(struct xdr_cur *cur)
{
	uint64_t hi = xdr_u32(cur);

	return hi << 32 | xdr_u32(cur);
}

bool xdr_bool(struct xdr_cur *cur)
{
	uint32_t v = xdr_u32(cur);

	if (v > 1)
		cur->err = -EBADMSG;
	return v == 1 && !cur->err;
}

const uint8_t *xdr_fixed(struct xdr_cur *cur, size_t n)
{
	if (n > SIZE_MAX - 4) {
		cur->err = -EBADMSG;
		return NULL;
	}
	return xdr_take(cur, XDR_PAD(n));
}

const uint8_t *xdr_opaque(struct xdr_cur *cur, size_t cap, uint32_t *lenp)
{
	uint32_t n = xdr_u32(cur);
	const uint8_t *q;

	*lenp = 0;
	if (cur->err)
		return NULL;
	if (n > cap) {
		cur->err = -EBADMSG;
		return NULL;
	}
	q = xdr_fixed(cur, n);
	if (q)
		*lenp = n;
	return q;
}

int xdr_buf_init(struct xdr_buf *buf, size_t hint, size_t max)
{
	buf->len = 0;
	buf->max = max;
	buf->cap = hint < max ? hint : max;
	if (buf->cap < 64)
		buf->cap = 64;
	buf->p = malloc(buf->cap);
	buf->err = buf->p ? 0 : -ENOMEM;
	if (!buf->p)
		buf->cap = 0;
	return buf->err;
}

void xdr_buf_cleanup(struct xdr_buf *buf)
{
	free(buf->p);
	buf->p = NULL;
	buf->len = buf->cap = 0;
}

uint8_t *xdr_put_raw(struct xdr_buf *buf, size_t n)
{
	uint8_t *q;

	if (buf->err)
		return NULL;
	if (n > buf->max || buf->len > buf->max - n) {
		buf->err = -EMSGSIZE;
		return NULL;
	}
	if (buf->len + n > buf->cap) {
		size_t ncap = buf->cap ? buf->cap : 64;
		uint8_t *np;

		while (ncap < buf->len + n)
			ncap *= 2;
		if (ncap > buf->max)
			ncap = buf->max;
		np = realloc(buf->p, ncap);
		if (!np) {
			buf->err = -ENOMEM;
			return NULL;
		}
		buf->p = np;
		buf->cap = ncap;
	}
	q = buf->p + buf->len;
	buf->len += n;
	return q;
}

static void xdr_wr32(uint8_t *q, uint32_t v)
{
	q[0] = (uint8_t)(v >> 24);
	q[1] = (uint8_t)(v >> 16);
	q[2] = (uint8_t)(v >> 8);
	q[3] = (uint8_t)v;
}

void xdr_put_u32(struct xdr_buf *buf, uint32_t v)
{
	uint8_t *q = xdr_put_raw(buf, 4);

	if (q)
		xdr_wr32(q, v);
}

void xdr_put_u64(struct xdr_buf *buf, uint64_t v)
{
	xdr_put_u32(buf, (uint32_t)(v >> 32));
	xdr_put_u32(buf, (uint32_t)v);
}

void xdr_put_fixed(struct xdr_buf *buf, const void *data, size_t n)
{
	uint8_t *q = xdr_put_raw(buf, XDR_PAD(n));

	if (!q)
		return;
	if (n)
		memcpy(q, data, n);
	memset(q + n, 0, XDR_PAD(n) - n);
}

void xdr_put_opaque(struct xdr_buf *buf, const void *data, uint32_t n)
{
	xdr_put_u32(buf, n);
	xdr_put_fixed(buf, data, n);
}

void xdr_set_u32(struct xdr_buf *buf, size_t off, uint32_t v)
{
	if (!buf->err && off + 4 <= buf->len)
		xdr_wr32(buf->p + off, v);
}
