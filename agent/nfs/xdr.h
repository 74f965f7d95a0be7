/* xdr: bounded XDR (RFC 4506) cursor for decoding and a bounded buffer for
 * encoding, both with a sticky error.
 *
 * Decoding: every read past the end, and every length above the cap the
 * caller passes, sets cur->err and turns all later reads into no-ops that
 * yield zeros / NULL. Decode a whole structure, then check cur->err once.
 * Variable-length data is returned as pointers into the cursor's buffer: it
 * is never copied and lives as long as that buffer.
 *
 * Encoding: an xdr_buf grows up to its cap; going past it sets buf->err and
 * later writes are no-ops.
 */
#ifndef AQ_AGENT_XDR_H
#define AQ_AGENT_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xdr_cur {
	const uint8_t *p;
	size_t len;
	size_t pos;
	int err;         /* 0 or -EBADMSG (short / over cap); sticky */
};

void xdr_cur_init(struct xdr_cur *cur, const void *data, size_t len);
uint32_t xdr_u32(struct xdr_cur *cur);
uint64_t xdr_u64(struct xdr_cur *cur);
bool xdr_bool(struct xdr_cur *cur);
/* Fixed-size opaque of n bytes (plus padding); returns a pointer into the
 * buffer or NULL on error. */
const uint8_t *xdr_fixed(struct xdr_cur *cur, size_t n);
/* Variable opaque/string: length word, then data. A length above cap sets
 * err. *lenp receives the length (0 on error). */
const uint8_t *xdr_opaque(struct xdr_cur *cur, size_t cap, uint32_t *lenp);
/* Bytes not yet read. */
size_t xdr_left(const struct xdr_cur *cur);

struct xdr_buf {
	uint8_t *p;
	size_t len;
	size_t cap;      /* allocated */
	size_t max;      /* never grows past this */
	int err;         /* 0, -ENOMEM or -EMSGSIZE; sticky */
};

/* Start an empty buffer that may grow to max bytes; initial allocation is
 * min(hint, max). Release with xdr_buf_cleanup. */
int xdr_buf_init(struct xdr_buf *buf, size_t hint, size_t max);
void xdr_buf_cleanup(struct xdr_buf *buf);
/* Reserve n bytes at the end; returns pointer or NULL (err set). */
uint8_t *xdr_put_raw(struct xdr_buf *buf, size_t n);
void xdr_put_u32(struct xdr_buf *buf, uint32_t v);
void xdr_put_u64(struct xdr_buf *buf, uint64_t v);
void xdr_put_fixed(struct xdr_buf *buf, const void *data, size_t n);
void xdr_put_opaque(struct xdr_buf *buf, const void *data, uint32_t n);
/* Overwrite a u32 already written at offset off. */
void xdr_set_u32(struct xdr_buf *buf, size_t off, uint32_t v);

#define XDR_PAD(n) (((n) + 3u) & ~(size_t)3u)

#endif
