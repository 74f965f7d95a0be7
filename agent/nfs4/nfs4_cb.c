/* nfs4_cb: the wire of the NFSv4.1 backchannel (RFC 8881 section 20,
 * program csa_cb_program version 1): the CB_COMPOUND call a recall sends
 * (CB_SEQUENCE on the session's one backchannel slot, then CB_RECALLs) or
 * a write delegation's CB_GETATTR (change and size, section 20.1), the
 * CB_NULL that probes a new backchannel, and the bounded decoders of the
 * client's replies to both, with the check that a reply's CB_SEQUENCE
 * answers the call it came for. The reply comes from the
 * network: every length is checked against its cap before it is used, the
 * cursor's error is sticky and checked once, and nothing is allocated.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <string.h>

#include "agent/nfs/rpc.h"

enum { CB_NULL = 0, CB_COMPOUND = 1, OP_CB_GETATTR = 3, OP_CB_RECALL = 4, OP_CB_SEQUENCE = 11, CB_VERS = 1, CB_MINOR = 1,
       CB_AUTH_MAX = 400, CB_FATTR_WORDS = 8, CB_FATTR_MAX = 1024, FATTR4_CHANGE = 3, FATTR4_SIZE = 4 };

/* The RPC call header of procedure proc of the callback program, with the
 * credential of flavor. */
static void cb_call_head(struct ut_buf *b, uint32_t xid, uint32_t prog, uint32_t flavor, uint32_t proc)
{
	static const char machine[] = "aquifer";

	ut_buf_put_zero(b, 4); /* record mark */
	xdr_put_u32(b, xid);
	xdr_put_u32(b, 0); /* CALL */
	xdr_put_u32(b, 2); /* RPC version */
	xdr_put_u32(b, prog);
	xdr_put_u32(b, CB_VERS);
	xdr_put_u32(b, proc);
	if (flavor == RPC_AUTH_SYS) {
		/* stamp, machine name, uid 0, gid 0, no groups: the server speaks as root */
		xdr_put_u32(b, RPC_AUTH_SYS);
		xdr_put_u32(b, (uint32_t)(4 + 4 + XDR_PAD(sizeof(machine) - 1) + 4 + 4 + 4));
		xdr_put_u32(b, 0);
		xdr_put_opaque(b, machine, (uint32_t)(sizeof(machine) - 1));
		xdr_put_u32(b, 0);
		xdr_put_u32(b, 0);
		xdr_put_u32(b, 0);
	} else {
		xdr_put_u32(b, RPC_AUTH_NONE);
		xdr_put_u32(b, 0);
	}
	xdr_put_u32(b, RPC_AUTH_NONE); /* verifier */
	xdr_put_u32(b, 0);
}

void nfs4_cb_encode_null(struct ut_buf *b, uint32_t xid, uint32_t prog, uint32_t flavor)
{
	cb_call_head(b, xid, prog, flavor, CB_NULL);
}

int nfs4_cb_decode_null(const uint8_t *rec, size_t len, uint32_t *xid, bool *ok)
{
	struct xdr_cur c;
	uint32_t l, x, stat = 1;

	xdr_cur_init(&c, rec, len);
	x = xdr_u32(&c);
	if (xdr_u32(&c) != 1 || c.err) /* REPLY */
		return -EBADMSG;
	if (xdr_u32(&c) == 0) {        /* MSG_ACCEPTED: verifier, accept_stat */
		(void)xdr_u32(&c);
		(void)xdr_opaque(&c, CB_AUTH_MAX, &l);
		stat = xdr_u32(&c);
	}
	if (c.err)
		return -EBADMSG;
	*xid = x;
	*ok = stat == 0;               /* SUCCESS: CB_NULL has no results */
	return 0;
}

void nfs4_cb_encode(struct ut_buf *b, uint32_t xid, uint32_t prog, uint32_t flavor, const uint8_t sess[NFS4_SESSIONID],
		    uint32_t seq, const struct nfs4_cb_recall *r, uint32_t n, const struct vol_fh *ga)
{
	cb_call_head(b, xid, prog, flavor, CB_COMPOUND);
	xdr_put_u32(b, 0);             /* tag: empty */
	xdr_put_u32(b, CB_MINOR);
	xdr_put_u32(b, 0);             /* callback_ident: unused in 4.1 */
	xdr_put_u32(b, 1 + (n ? n : ga != NULL));
	xdr_put_u32(b, OP_CB_SEQUENCE);
	xdr_put_fixed(b, sess, NFS4_SESSIONID);
	xdr_put_u32(b, seq);
	xdr_put_u32(b, 0);             /* slot */
	xdr_put_u32(b, 0);             /* highest slot */
	xdr_put_u32(b, 0);             /* cachethis: false */
	xdr_put_u32(b, 0);             /* referring call lists: none */
	for (uint32_t i = 0; i < n; i++) {
		xdr_put_u32(b, OP_CB_RECALL);
		nfs4_put_stateid(b, &r[i].sid);
		xdr_put_u32(b, 0);     /* truncate: false */
		xdr_put_opaque(b, r[i].fh.data, r[i].fh.len);
	}
	if (!n && ga) {
		xdr_put_u32(b, OP_CB_GETATTR);
		xdr_put_opaque(b, ga->data, ga->len);
		xdr_put_u32(b, 1);     /* bitmap4: one word, */
		xdr_put_u32(b, 1u << FATTR4_CHANGE | 1u << FATTR4_SIZE); /* what a writer caches */
	}
}

/* CB_GETATTR4resok's fattr4 into r: change and size, which come first in
 * the attribute list (ascending order); any attribute below them that we
 * never asked for makes the reply undecodable. */
static void cb_getattr_res(struct xdr_cur *c, struct nfs4_cb_res *r)
{
	uint32_t w[CB_FATTR_WORDS], n, l;
	const uint8_t *vals;
	struct xdr_cur v;

	if (!nfs4_get_bitmap(c, w, CB_FATTR_WORDS, &n) || !(vals = xdr_opaque(c, CB_FATTR_MAX, &l)))
		return;
	if (w[0] & ((1u << FATTR4_CHANGE) - 1u)) {
		c->err = -EBADMSG;
		return;
	}
	xdr_cur_init(&v, vals, l);
	r->ga_change = (w[0] >> FATTR4_CHANGE) & 1u;
	r->ga_size = (w[0] >> FATTR4_SIZE) & 1u;
	if (r->ga_change)
		r->change = xdr_u64(&v);
	if (r->ga_size)
		r->size = xdr_u64(&v);
	if (v.err)
		c->err = -EBADMSG;
	else
		r->ga_ok = true;
}

int nfs4_cb_decode(const uint8_t *rec, size_t len, struct nfs4_cb_res *out)
{
	struct nfs4_cb_res r;
	struct xdr_cur c;
	uint32_t l, i;

	memset(&r, 0, sizeof(r));
	xdr_cur_init(&c, rec, len);
	r.xid = xdr_u32(&c);
	if (xdr_u32(&c) != 1 || c.err) /* REPLY */
		return -EBADMSG;
	if (xdr_u32(&c) != 0) {        /* MSG_DENIED: nothing more we use */
		if (c.err)
			return -EBADMSG;
		*out = r;
		return 0;
	}
	(void)xdr_u32(&c);             /* verifier */
	(void)xdr_opaque(&c, CB_AUTH_MAX, &l);
	if (xdr_u32(&c) != 0 || c.err) { /* accept_stat other than SUCCESS */
		if (c.err)
			return -EBADMSG;
		*out = r;
		return 0;
	}
	r.accepted = true;
	r.status = xdr_u32(&c);
	(void)xdr_opaque(&c, NFS4_TAG_MAX, &l);
	r.nres = xdr_u32(&c);
	if (c.err || r.nres > NFS4_CB_MAX_RES)
		return -EBADMSG;
	for (i = 0; i < r.nres && !c.err; i++) {
		r.ops[i] = xdr_u32(&c);
		r.stats[i] = xdr_u32(&c);
		if (r.ops[i] == OP_CB_SEQUENCE && r.stats[i] == NFS4_OK) {
			const uint8_t *sid = xdr_fixed(&c, NFS4_SESSIONID);

			if (sid)
				memcpy(r.sess, sid, NFS4_SESSIONID);
			r.seq = xdr_u32(&c);
			r.slot = xdr_u32(&c);
			(void)xdr_u32(&c); /* highest slot */
			(void)xdr_u32(&c); /* target highest slot */
			r.seq_ok = i == 0 && !c.err;
		} else if (r.ops[i] == OP_CB_GETATTR && r.stats[i] == NFS4_OK) {
			cb_getattr_res(&c, &r);
		} else if (r.ops[i] != OP_CB_RECALL && r.ops[i] != OP_CB_SEQUENCE && r.stats[i] == NFS4_OK) {
			return -EBADMSG; /* a result we never asked for */
		}
		/* a failed operation ends the results; CB_RECALL's result is its status */
		if (r.stats[i] != NFS4_OK) {
			i++;
			break;
		}
	}
	if (c.err || i != r.nres)
		return -EBADMSG;
	*out = r;
	return 0;
}

bool nfs4_cb_res_ours(const struct nfs4_cb_res *r, const uint8_t sess[NFS4_SESSIONID], uint32_t seq)
{
	/* refused, or CB_SEQUENCE failed: the client's answer, a failed callback */
	if (!r->accepted || (r->nres > 0 && r->ops[0] == OP_CB_SEQUENCE && r->stats[0] != NFS4_OK))
		return true;
	/* a CB_SEQUENCE that succeeded echoes the call's session, sequence and
	 * slot (RFC 8881 20.9.3, csr_*): anything else answers another call */
	return r->seq_ok && !memcmp(r->sess, sess, NFS4_SESSIONID) && r->seq == seq && r->slot == 0;
}

uint32_t nfs4_cb_res_seq_status(const struct nfs4_cb_res *r)
{
	return r->accepted && r->nres > 0 && r->ops[0] == OP_CB_SEQUENCE ? r->stats[0] : NFS4_OK;
}
