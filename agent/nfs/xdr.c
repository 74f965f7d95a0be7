/* xdr: bounded XDR cursor and the XDR writers onto ut_buf; see xdr.h for
 * the contract. */
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

void xdr_put_u32(struct ut_buf *buf, uint32_t v)
{
	if (ut_buf_put_zero(buf, 4))
		ut_buf_set_be32(buf, buf->len - 4, v);
}

void xdr_put_u64(struct ut_buf *buf, uint64_t v)
{
	xdr_put_u32(buf, (uint32_t)(v >> 32));
	xdr_put_u32(buf, (uint32_t)v);
}

void xdr_put_fixed(struct ut_buf *buf, const void *data, size_t n)
{
	uint8_t *q = ut_buf_put_zero(buf, XDR_PAD(n));

	if (!q)
		return;
	if (n)
		memcpy(q, data, n);  /* the padding is zero already */
}

void xdr_put_opaque(struct ut_buf *buf, const void *data, uint32_t n)
{
	xdr_put_u32(buf, n);
	xdr_put_fixed(buf, data, n);
}
