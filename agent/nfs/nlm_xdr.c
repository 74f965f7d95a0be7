/* nlm_xdr: the NLM v4 and NSM argument decoders and result encoders (XNFS,
 * RFC 1813 appendix II) on the bounded cursor: every string and netobj is
 * checked against its cap (NLM_NAME_MAX, NLM_OBJ_MAX, NLM_FH_MAX) before it
 * is looked at; nothing is copied or allocated, the decoded arguments point
 * into the record. */
#include "agent/nfs/nlm_internal.h"

#include <errno.h>
#include <string.h>

static void obj(struct xdr_cur *c, struct nlm_obj *o, size_t cap)
{
	o->data = xdr_opaque(c, cap, &o->len);
}

static void lock4(struct xdr_cur *c, struct nlm4_lock *l)
{
	obj(c, &l->caller, NLM_NAME_MAX);
	obj(c, &l->fh, NLM_FH_MAX);
	obj(c, &l->oh, NLM_OBJ_MAX);
	l->svid = xdr_u32(c);
	l->off = xdr_u64(c);
	l->len = xdr_u64(c);
}

static int done(const struct xdr_cur *c)
{
	return c->err ? -EBADMSG : 0;
}

int nlm_dec_void(struct xdr_cur *c, void *a)
{
	(void)a;
	return done(c);
}

int nlm_dec_test(struct xdr_cur *c, void *a)
{
	struct nlm_args *x = a;

	obj(c, &x->cookie, NLM_OBJ_MAX);
	x->excl = xdr_bool(c);
	lock4(c, &x->lock);
	return done(c);
}

int nlm_dec_lock(struct xdr_cur *c, void *a)
{
	struct nlm_args *x = a;

	obj(c, &x->cookie, NLM_OBJ_MAX);
	x->block = xdr_bool(c);
	x->excl = xdr_bool(c);
	lock4(c, &x->lock);
	x->reclaim = xdr_bool(c);
	x->state = xdr_u32(c);
	return done(c);
}

int nlm_dec_cancel(struct xdr_cur *c, void *a)
{
	struct nlm_args *x = a;

	obj(c, &x->cookie, NLM_OBJ_MAX);
	x->block = xdr_bool(c);
	x->excl = xdr_bool(c);
	lock4(c, &x->lock);
	return done(c);
}

int nlm_dec_unlock(struct xdr_cur *c, void *a)
{
	struct nlm_args *x = a;

	obj(c, &x->cookie, NLM_OBJ_MAX);
	lock4(c, &x->lock);
	return done(c);
}

int nlm_dec_res(struct xdr_cur *c, void *a)
{
	struct nlm_args *x = a;

	obj(c, &x->cookie, NLM_OBJ_MAX);
	x->stat = xdr_u32(c);
	return done(c);
}

int nlm_dec_share(struct xdr_cur *c, void *a)
{
	struct nlm_args *x = a;

	obj(c, &x->cookie, NLM_OBJ_MAX);
	obj(c, &x->lock.caller, NLM_NAME_MAX);
	obj(c, &x->lock.fh, NLM_FH_MAX);
	obj(c, &x->lock.oh, NLM_OBJ_MAX);
	x->mode = xdr_u32(c);
	x->access = xdr_u32(c);
	x->reclaim = xdr_bool(c);
	return done(c);
}

int nlm_dec_notify(struct xdr_cur *c, void *a)
{
	struct nlm_args *x = a;

	obj(c, &x->lock.caller, NLM_NAME_MAX);
	x->state = xdr_u32(c);
	return done(c);
}

void nlm_enc_void(struct ut_buf *b, void *r, struct nfs_call *call)
{
	(void)b;
	(void)r;
	(void)call;
}

/* nlm4_res, nlm4_testres (the holder after DENIED), nlm4_shareres. */
void nlm_enc_res(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nlm_res *res = r;

	(void)call;
	xdr_put_opaque(b, res->cookie.data, res->cookie.len);
	xdr_put_u32(b, res->stat);
	if (res->test && res->stat == NLM4_DENIED) {
		const char *oh = res->oh ? res->oh : "";

		xdr_put_u32(b, res->excl);
		xdr_put_u32(b, res->svid);
		xdr_put_opaque(b, oh, (uint32_t)strlen(oh));
		xdr_put_u64(b, res->off);
		xdr_put_u64(b, res->len);
	}
	if (res->share)
		xdr_put_u32(b, 0); /* sequence: unused */
}

/* An nlm4_lock (GRANTED's argument). */
void nlm_put_lock(struct ut_buf *b, const char *caller, const uint8_t *fh, uint32_t fh_len, const uint8_t *oh,
		  uint32_t oh_len, uint32_t svid, uint64_t off, uint64_t len)
{
	xdr_put_opaque(b, caller, (uint32_t)strlen(caller));
	xdr_put_opaque(b, fh, fh_len);
	xdr_put_opaque(b, oh, oh_len);
	xdr_put_u32(b, svid);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
}

/* ---- NSM ---- */

static void my_id(struct xdr_cur *c, struct nsm_args *x)
{
	obj(c, &x->my_name, NLM_NAME_MAX);
	x->my_prog = xdr_u32(c);
	x->my_vers = xdr_u32(c);
	x->my_proc = xdr_u32(c);
}

int nsm_dec_name(struct xdr_cur *c, void *a)
{
	struct nsm_args *x = a;

	obj(c, &x->name, NLM_NAME_MAX);
	return done(c);
}

int nsm_dec_unmon(struct xdr_cur *c, void *a)
{
	struct nsm_args *x = a;

	obj(c, &x->name, NLM_NAME_MAX);
	my_id(c, x);
	return done(c);
}

int nsm_dec_mon(struct xdr_cur *c, void *a)
{
	struct nsm_args *x = a;
	const uint8_t *p;

	obj(c, &x->name, NLM_NAME_MAX);
	my_id(c, x);
	if ((p = xdr_fixed(c, sizeof(x->priv))))
		memcpy(x->priv, p, sizeof(x->priv));
	return done(c);
}

int nsm_dec_my_id(struct xdr_cur *c, void *a)
{
	my_id(c, a);
	return done(c);
}

int nsm_dec_notify(struct xdr_cur *c, void *a)
{
	struct nsm_args *x = a;

	obj(c, &x->name, NLM_NAME_MAX);
	x->state = xdr_u32(c);
	return done(c);
}
