/* xdr: bounded XDR (RFC 4506) cursor for decoding and a bounded buffer for
 * encoding, both with a sticky error.
 *
 * Decoding: every read past the end, and every length above the cap the
 * caller passes, sets cur->err and turns all later reads into no-ops that
 * yield zeros / NULL. Decode a whole structure, then check cur->err once.
 * Variable-length data is returned as pointers into the cursor's buffer: it
 * is never copied and lives as long as that buffer.
 *
 * Encoding: the xdr_put_* writers append big-endian XDR to util's capped
 * buffer (struct ut_buf, see util/ut_buf.h: ut_buf_init with the user's cap,
 * ut_buf_put_zero to reserve, ut_buf_set_be32 to patch a word written
 * earlier); going past the cap sets the buffer's sticky error (AQ_ETOOBIG)
 * and later writes are no-ops.
 */
#ifndef AQ_AGENT_XDR_H
#define AQ_AGENT_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/ut_buf.h"

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

void xdr_put_u32(struct ut_buf *buf, uint32_t v);
void xdr_put_u64(struct ut_buf *buf, uint64_t v);
void xdr_put_fixed(struct ut_buf *buf, const void *data, size_t n);
void xdr_put_opaque(struct ut_buf *buf, const void *data, uint32_t n);

#define XDR_PAD(n) (((n) + 3u) & ~(size_t)3u)

#endif
