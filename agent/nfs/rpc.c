/* rpc: record marking, call header parse and reply headers (RFC 5531). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/rpc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void rpc_rec_init(struct rpc_rec *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
}

void rpc_rec_budget(struct rpc_rec *r, _Atomic size_t *ahead, size_t ahead_max)
{
	r->ahead = ahead;
	r->ahead_max = ahead_max;
}

/* Give back what the record charged to the shared budget. */
static void rpc_rec_unhold(struct rpc_rec *r)
{
	if (r->held)
		atomic_fetch_sub(r->ahead, r->held);
	r->held = 0;
}

/* Charge n bytes of room ahead of arrival to the budget; false past it. */
static bool rpc_rec_hold(struct rpc_rec *r, size_t n)
{
	size_t cur;

	if (!r->ahead)
		return false;
	cur = atomic_load(r->ahead);
	do {
		if (n > r->ahead_max || cur > r->ahead_max - n)
			return false;
	} while (!atomic_compare_exchange_weak(r->ahead, &cur, cur + n));
	r->held += n;
	return true;
}

void rpc_rec_cleanup(struct rpc_rec *r)
{
	rpc_rec_unhold(r);
	free(r->buf);
	r->buf = NULL;
	r->len = r->cap = 0;
}

/* Room for the fragment's next bytes: what is allocated past len, grown
 * (doubling, from RPC_REC_STEP) when it ran out, never past what the
 * fragment still lacks; with a budget, once RPC_REC_STEP bytes came, the
 * whole rest of the fragment at once (one realloc, no doubling copies).
 * 0 when out of memory. */
static size_t rpc_rec_room(struct rpc_rec *r)
{
	size_t want = r->len + r->frag_left, cap;
	uint8_t *nb;

	if (r->cap > r->len)
		return (r->cap < want ? r->cap : want) - r->len;
	cap = r->cap * 2 > r->len + RPC_REC_STEP ? r->cap * 2 : r->len + RPC_REC_STEP;
	if (cap > want)
		cap = want;
	else if (r->cap >= RPC_REC_STEP && rpc_rec_hold(r, want - cap))
		cap = want; /* (on failure the charge goes back with the record) */
	if (!(nb = realloc(r->buf, cap)))
		return 0;
	r->buf = nb;
	r->cap = cap;
	return cap - r->len;
}

/* A whole mark arrived: check the announced length against the cap; room
 * comes as the bytes do (rpc_rec_room). */
static int rpc_rec_start_frag(struct rpc_rec *r)
{
	uint32_t m = (uint32_t)r->mark[0] << 24 | (uint32_t)r->mark[1] << 16 |
		     (uint32_t)r->mark[2] << 8 | r->mark[3];
	size_t flen = m & 0x7fffffffu;

	r->last = (m & 0x80000000u) != 0;
	r->mark_have = 0;
	if (flen > r->max || r->len > r->max - flen)
		return RPC_REC_TOOBIG;
	r->frag_left = flen;
	r->in_body = true;
	if (flen == 0) {
		r->in_body = false;
		if (r->last)
			return RPC_REC_DONE;
	}
	return RPC_REC_MORE;
}

int rpc_rec_advance(struct rpc_rec *r, size_t n)
{
	r->len += n;
	r->frag_left -= n;
	if (r->frag_left == 0) {
		r->in_body = false;
		if (r->last)
			return RPC_REC_DONE;
	}
	return RPC_REC_MORE;
}

uint8_t *rpc_rec_direct(struct rpc_rec *r, size_t *room)
{
	if (!r->in_body || r->frag_left == 0 || (*room = rpc_rec_room(r)) == 0)
		return NULL;
	return r->buf + r->len;
}

int rpc_rec_feed(struct rpc_rec *r, const uint8_t *data, size_t n, size_t *used)
{
	size_t off = 0;
	int rc = RPC_REC_MORE;

	while (off < n) {
		if (!r->in_body) {
			size_t k = 4 - r->mark_have;

			if (k > n - off)
				k = n - off;
			memcpy(r->mark + r->mark_have, data + off, k);
			r->mark_have += k;
			off += k;
			if (r->mark_have < 4)
				break;
			rc = rpc_rec_start_frag(r);
			if (rc != RPC_REC_MORE)
				break;
		} else {
			size_t k = rpc_rec_room(r);

			if (k == 0) {
				rc = -ENOMEM;
				break;
			}
			if (k > n - off)
				k = n - off;
			memcpy(r->buf + r->len, data + off, k);
			off += k;
			rc = rpc_rec_advance(r, k);
			if (rc != RPC_REC_MORE)
				break;
		}
	}
	*used = off;
	return rc;
}

uint8_t *rpc_rec_take(struct rpc_rec *r, size_t *len)
{
	uint8_t *b = r->buf;

	*len = r->len;
	rpc_rec_unhold(r);
	r->buf = NULL;
	r->len = r->cap = 0;
	r->in_body = false;
	r->mark_have = 0;
	r->frag_left = 0;
	r->last = false;
	return b;
}

bool rpc_rec_started(const struct rpc_rec *r)
{
	return r->mark_have > 0 || r->in_body || r->len > 0;
}

/* AUTH_SYS body (RFC 5531 appendix A), bounded. */
static int rpc_parse_sys(const uint8_t *body, uint32_t blen, struct rpc_cred *cred)
{
	struct xdr_cur c;
	const uint8_t *name;
	uint32_t nlen, i;

	xdr_cur_init(&c, body, blen);
	(void)xdr_u32(&c); /* stamp */
	name = xdr_opaque(&c, RPC_MAX_MACHINE, &nlen);
	cred->uid = xdr_u32(&c);
	cred->gid = xdr_u32(&c);
	cred->ngids = xdr_u32(&c);
	if (c.err || cred->ngids > RPC_MAX_GIDS)
		return RPC_PARSE_BADCRED;
	for (i = 0; i < cred->ngids; i++)
		cred->gids[i] = xdr_u32(&c);
	if (c.err)
		return RPC_PARSE_BADCRED;
	memcpy(cred->machine, name, nlen);
	cred->machine[nlen] = '\0';
	return RPC_PARSE_OK;
}

int rpc_call_parse(const uint8_t *rec, size_t len, struct rpc_call *call)
{
	struct xdr_cur c;
	uint32_t mtype, cflav, clen, vflav, vlen;
	const uint8_t *cbody;
	int rc = RPC_PARSE_OK;

	memset(call, 0, sizeof(*call));
	xdr_cur_init(&c, rec, len);
	call->xid = xdr_u32(&c);
	mtype = xdr_u32(&c);
	if (c.err || mtype != RPC_MSG_CALL)
		return RPC_PARSE_GARBAGE;
	call->rpcvers = xdr_u32(&c);
	if (c.err)
		return RPC_PARSE_GARBAGE;
	if (call->rpcvers != 2)
		return RPC_PARSE_RPC_MISMATCH;
	call->prog = xdr_u32(&c);
	call->vers = xdr_u32(&c);
	call->proc = xdr_u32(&c);
	cflav = xdr_u32(&c);
	cbody = xdr_opaque(&c, RPC_MAX_AUTH_BYTES, &clen);
	vflav = xdr_u32(&c);
	(void)xdr_opaque(&c, RPC_MAX_AUTH_BYTES, &vlen);
	(void)vflav;
	if (c.err)
		return RPC_PARSE_BADCRED;
	call->cred.flavor = cflav;
	if (cflav == RPC_AUTH_SYS)
		rc = rpc_parse_sys(cbody, clen, &call->cred);
	else if (cflav != RPC_AUTH_NONE)
		rc = RPC_PARSE_TOOWEAK;
	if (rc != RPC_PARSE_OK)
		return rc;
	call->args = rec + c.pos;
	call->args_len = len - c.pos;
	return RPC_PARSE_OK;
}

static void rpc_reply_head(struct ut_buf *buf, uint32_t xid, uint32_t stat)
{
	xdr_put_u32(buf, xid);
	xdr_put_u32(buf, RPC_MSG_REPLY);
	xdr_put_u32(buf, stat); /* MSG_ACCEPTED 0 / MSG_DENIED 1 */
}

void rpc_reply_accepted(struct ut_buf *buf, uint32_t xid, enum rpc_accept_stat st)
{
	rpc_reply_head(buf, xid, 0);
	xdr_put_u32(buf, RPC_AUTH_NONE); /* verifier */
	xdr_put_u32(buf, 0);
	xdr_put_u32(buf, (uint32_t)st);
}

void rpc_reply_prog_mismatch(struct ut_buf *buf, uint32_t xid, uint32_t lo, uint32_t hi)
{
	rpc_reply_accepted(buf, xid, RPC_PROG_MISMATCH);
	xdr_put_u32(buf, lo);
	xdr_put_u32(buf, hi);
}

void rpc_reply_rpc_mismatch(struct ut_buf *buf, uint32_t xid)
{
	rpc_reply_head(buf, xid, 1);
	xdr_put_u32(buf, 0); /* RPC_MISMATCH */
	xdr_put_u32(buf, 2);
	xdr_put_u32(buf, 2);
}

void rpc_reply_auth_error(struct ut_buf *buf, uint32_t xid, enum rpc_auth_stat st)
{
	rpc_reply_head(buf, xid, 1);
	xdr_put_u32(buf, 1); /* AUTH_ERROR */
	xdr_put_u32(buf, (uint32_t)st);
}
