/* nfs4_session: the operations of NFSv4.1 sessions (RFC 8881 section 18):
 * EXCHANGE_ID, CREATE_SESSION (its own replay by csa_sequence), SEQUENCE
 * with the slot table's exactly-once semantics (a retransmission of a
 * slot's last request gets that request's reply again, a sequence id
 * neither the last one nor the next is NFS4ERR_SEQ_MISORDERED),
 * DESTROY_SESSION, DESTROY_CLIENTID, BIND_CONN_TO_SESSION (several
 * connections per session: nconnect) and RECLAIM_COMPLETE.
 *
 * The backchannel (nfs4_deleg.c): CREATE_SESSION grants
 * CREATE_SESSION4_FLAG_CONN_BACK_CHAN (one backchannel slot) when asked with
 * a callback flavor we speak (AUTH_SYS, AUTH_NONE), on the creating
 * connection; BIND_CONN_TO_SESSION with CDFC4_BACK / _BOTH moves it to the
 * binding connection, BACKCHANNEL_CTL changes its program and flavor. SEQUENCE's status flags
 * carry SEQ4_STATUS_RECALLABLE_STATE_REVOKED while a delegation of the
 * client is revoked and not yet freed. Only SP4_NONE state protection
 * (what a client with AUTH_SYS asks); SP4_MACH_CRED and SP4_SSV answer
 * NFS4ERR_NOTSUPP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs/rpc.h"

/* nfs_impl_id4<1>: decoded and ignored */
static void skip_impl_id(struct xdr_cur *in)
{
	uint32_t n = xdr_u32(in), l;

	if (n > 1) {
		in->err = -EBADMSG;
		return;
	}
	if (n == 1) {
		(void)xdr_opaque(in, NFS4_OPAQUE_LIMIT, &l);
		(void)xdr_opaque(in, NFS4_OPAQUE_LIMIT, &l);
		(void)xdr_u64(in);
		(void)xdr_u32(in);
	}
}

uint32_t nfs4_op_exchange_id(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_client *c, *old = NULL;
	const uint8_t *verf, *owner;
	uint32_t olen, flags, how, st = NFS4_OK;
	bool confirmed = false;

	verf = xdr_fixed(in, 8);
	owner = xdr_opaque(in, NFS4_OPAQUE_LIMIT, &olen);
	flags = xdr_u32(in);
	how = xdr_u32(in);
	if (how != SP4_NONE)
		return in->err ? NFS4ERR_BADXDR : NFS4ERR_NOTSUPP;
	skip_impl_id(in);
	if (in->err)
		return NFS4ERR_BADXDR;
	if (flags & ~(uint32_t)(EXCHGID4_FLAG_SUPP_MOVED_REFER | EXCHGID4_FLAG_SUPP_MOVED_MIGR |
				EXCHGID4_FLAG_BIND_PRINC_STATEID | EXCHGID4_FLAG_MASK_PNFS |
				EXCHGID4_FLAG_UPD_CONFIRMED_REC_A))
		return NFS4ERR_INVAL;
	pthread_mutex_lock(&s->mu);
	nfs4_expire(s);
	for (c = s->clients; c; c = c->next)
		if (c->owner_len == olen && !memcmp(c->owner, owner, olen))
			break;
	if (c && c->confirmed && !memcmp(c->verf, verf, 8)) {
		confirmed = true; /* the same client again: its record stands */
	} else if (flags & EXCHGID4_FLAG_UPD_CONFIRMED_REC_A) {
		st = c ? NFS4ERR_NOT_SAME : NFS4ERR_NOENT; /* an update of a record we do not have */
		goto out;
	} else {
		/* new, or restarted (another verifier): a new record replaces the old one */
		old = c;
		if (s->nclients >= NFS4_MAX_CLIENTS) {
			st = NFS4ERR_RESOURCE;
			goto out;
		}
		if (!(c = calloc(1, sizeof(*c)))) {
			st = NFS4ERR_RESOURCE;
			goto out;
		}
		if (old)
			nfs4_client_free(s, old);
		c->id = (uint64_t)s->boot << 32 | (uint32_t)s->next_client++;
		memcpy(c->owner, owner, olen);
		c->owner_len = olen;
		memcpy(c->verf, verf, 8);
		c->cs_seq = 1;
		c->next = s->clients;
		s->clients = c;
		s->nclients++;
	}
	c->renewed_ns = nfs4_now_ns();
	xdr_put_u64(cx->out, c->id);
	xdr_put_u32(cx->out, c->cs_seq);
	xdr_put_u32(cx->out, EXCHGID4_FLAG_USE_NON_PNFS | (confirmed ? EXCHGID4_FLAG_CONFIRMED_R : 0));
	xdr_put_u32(cx->out, SP4_NONE);
	xdr_put_u64(cx->out, 0);                           /* so_minor_id */
	xdr_put_opaque(cx->out, s->server_owner, 12);      /* so_major_id */
	xdr_put_opaque(cx->out, s->server_owner, 12);      /* eir_server_scope */
	xdr_put_u32(cx->out, 0);                           /* no implementation id */
out:
	pthread_mutex_unlock(&s->mu);
	return st;
}

struct chan_attrs {
	uint32_t pad, maxreq, maxrep, maxcached, maxops, maxreqs, nird, ird;
};

static void get_chan(struct xdr_cur *in, struct chan_attrs *a)
{
	a->pad = xdr_u32(in);
	a->maxreq = xdr_u32(in);
	a->maxrep = xdr_u32(in);
	a->maxcached = xdr_u32(in);
	a->maxops = xdr_u32(in);
	a->maxreqs = xdr_u32(in);
	a->nird = xdr_u32(in);
	if (a->nird > 1)
		in->err = -EBADMSG;
	a->ird = a->nird ? xdr_u32(in) : 0;
}

static void put_chan(struct ut_buf *b, const struct chan_attrs *a)
{
	xdr_put_u32(b, a->pad);
	xdr_put_u32(b, a->maxreq);
	xdr_put_u32(b, a->maxrep);
	xdr_put_u32(b, a->maxcached);
	xdr_put_u32(b, a->maxops);
	xdr_put_u32(b, a->maxreqs);
	xdr_put_u32(b, a->nird);
	if (a->nird)
		xdr_put_u32(b, a->ird);
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}


uint32_t nfs4_op_create_session(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_client *c;
	struct nfs4_session *se;
	struct chan_attrs fore, back;
	uint64_t cid;
	uint32_t seq, flags, st = NFS4_OK, n, i, cb_prog, cb_flavor;
	size_t start = cx->out->len;

	cid = xdr_u64(in);
	seq = xdr_u32(in);
	flags = xdr_u32(in);
	get_chan(in, &fore);
	get_chan(in, &back);
	cb_prog = xdr_u32(in);
	nfs4_cb_sec(in, &cb_flavor);
	if (in->err)
		return NFS4ERR_BADXDR;
	pthread_mutex_lock(&s->mu);
	nfs4_expire(s);
	if (!(c = nfs4_client_find(s, cid))) {
		st = NFS4ERR_STALE_CLIENTID;
		goto out;
	}
	if (seq + 1 == c->cs_seq && c->cs_rep_len) {
		xdr_put_fixed(cx->out, c->cs_rep, c->cs_rep_len); /* the same request again */
		goto out;
	}
	if (seq != c->cs_seq) {
		st = NFS4ERR_SEQ_MISORDERED;
		goto out;
	}
	if (fore.maxreqs == 0 || fore.maxops < 2) {
		st = NFS4ERR_INVAL;
		goto out;
	}
	n = min_u32(fore.maxreqs, s->max_slots);
	if (s->nsessions >= NFS4_MAX_SESSIONS || !(se = calloc(1, sizeof(*se) + n * sizeof(se->slots[0])))) {
		st = NFS4ERR_RESOURCE;
		goto out;
	}
	se->clp = c;
	se->nslots = n;
	se->refs = 1;
	for (i = 0; i < 8; i++)
		se->id[i] = (uint8_t)(c->id >> (56 - 8 * i));
	for (i = 0; i < 8; i++)
		se->id[8 + i] = (uint8_t)(s->next_session >> (56 - 8 * i));
	s->next_session++;
	se->next = c->sessions;
	c->sessions = se;
	s->nsessions++;
	nfs4_session_bind(se, cx->call->conn_id);
	se->cb_prog = cb_prog;
	se->cb_flavor = cb_flavor;
	/* the backchannel on this connection, when asked for with a flavor we speak */
	if (!(flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN) || cb_flavor == UINT32_MAX || back.maxreqs == 0 ||
	    !nfs4_deleg_back(cx, se))
		flags &= ~(uint32_t)CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
	c->confirmed = true;
	c->renewed_ns = nfs4_now_ns();
	fore.pad = 0;
	fore.maxreq = min_u32(fore.maxreq, NFS4_REQ_MAX);
	fore.maxrep = min_u32(fore.maxrep, NFS4_REP_MAX);
	fore.maxcached = min_u32(fore.maxcached, NFS4_CACHED_MAX);
	fore.maxops = min_u32(fore.maxops, NFS4_MAX_OPS);
	fore.maxreqs = n;
	fore.nird = 0;
	back.nird = 0;
	back.maxreqs = 1;   /* one backchannel slot */
	back.maxops = min_u32(back.maxops, 2 + NFS4_CB_MAX_RECALLS);
	xdr_put_fixed(cx->out, se->id, NFS4_SESSIONID);
	xdr_put_u32(cx->out, seq);
	xdr_put_u32(cx->out, flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN); /* no persistent reply cache */
	put_chan(cx->out, &fore);
	put_chan(cx->out, &back);
	c->cs_seq++;
	c->cs_rep_len = 0;
	if (!cx->out->err && cx->out->len - start <= sizeof(c->cs_rep)) {
		memcpy(c->cs_rep, ut_buf_bytes(cx->out) + start, cx->out->len - start);
		c->cs_rep_len = cx->out->len - start;
	}
out:
	pthread_mutex_unlock(&s->mu);
	return st;
}

uint32_t nfs4_op_sequence(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_session *se;
	struct nfs4_slot *sl;
	const uint8_t *sid = xdr_fixed(in, NFS4_SESSIONID);
	uint32_t seq = xdr_u32(in), slot = xdr_u32(in), st = NFS4_OK;

	(void)xdr_u32(in); /* sa_highest_slotid */
	cx->cachethis = xdr_bool(in);
	if (in->err)
		return NFS4ERR_BADXDR;
	pthread_mutex_lock(&s->mu);
	if (!(se = nfs4_session_find(s, sid)) || se->dead) {
		st = NFS4ERR_BADSESSION;
		goto out;
	}
	if (slot >= se->nslots) {
		st = NFS4ERR_BADSLOT;
		goto out;
	}
	sl = &se->slots[slot];
	if (sl->busy) {
		st = NFS4ERR_DELAY; /* the same request, still being served */
		goto out;
	}
	if (seq == sl->seqid && seq != 0) {
		if (!sl->cached) {
			st = NFS4ERR_RETRY_UNCACHED_REP;
			goto out;
		}
		if (!(cx->replay_owned = malloc(sl->rep_len))) {
			st = NFS4ERR_DELAY;
			goto out;
		}
		memcpy(cx->replay_owned, sl->rep, sl->rep_len);
		cx->replay = cx->replay_owned;
		cx->replay_len = sl->rep_len;
		se->clp->renewed_ns = nfs4_now_ns();
		goto out;
	}
	if (seq != sl->seqid + 1) {
		st = NFS4ERR_SEQ_MISORDERED;
		goto out;
	}
	/* a SP4_NONE client's connection is bound by its first SEQUENCE on it */
	nfs4_session_bind(se, cx->call->conn_id);
	sl->seqid = seq;
	sl->busy = true;
	sl->cached = false;
	se->refs++;
	se->clp->renewed_ns = nfs4_now_ns();
	cx->sess = se;
	cx->slot = slot;
	xdr_put_fixed(cx->out, sid, NFS4_SESSIONID);
	xdr_put_u32(cx->out, seq);
	xdr_put_u32(cx->out, slot);
	xdr_put_u32(cx->out, se->nslots - 1); /* highest slot */
	xdr_put_u32(cx->out, se->nslots - 1); /* target highest slot */
	/* status flags: a delegation of the client was revoked (it frees the
	 * stateid), a backchannel did not answer its probe */
	xdr_put_u32(cx->out, nfs4_deleg_seq_flags(se));
out:
	pthread_mutex_unlock(&s->mu);
	return st;
}

void nfs4_sequence_done(struct nfs4_cx *cx, const uint8_t *rep, size_t len)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_session *se = cx->sess;
	struct nfs4_slot *sl = &se->slots[cx->slot];

	pthread_mutex_lock(&s->mu);
	free(sl->rep);
	sl->rep = NULL;
	sl->rep_len = 0;
	sl->cached = false;
	/* every reply that fits the cache is kept, cachethis or not: a
	 * retransmission then never runs twice */
	if (rep && len <= NFS4_CACHED_MAX && (sl->rep = malloc(len ? len : 1))) {
		memcpy(sl->rep, rep, len);
		sl->rep_len = len;
		sl->cached = true;
	}
	sl->busy = false;
	nfs4_session_put(s, se);
	cx->sess = NULL;
	pthread_mutex_unlock(&s->mu);
}

uint32_t nfs4_op_destroy_session(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_session *se;
	const uint8_t *sid = xdr_fixed(in, NFS4_SESSIONID);
	uint32_t st = NFS4_OK;

	if (in->err)
		return NFS4ERR_BADXDR;
	pthread_mutex_lock(&s->mu);
	if (!(se = nfs4_session_find(s, sid)) || se->dead)
		st = NFS4ERR_BADSESSION;
	else if (!cx->sess && !nfs4_session_bound(se, cx->call->conn_id))
		st = NFS4ERR_CONN_NOT_BOUND_TO_SESSION;
	else
		nfs4_session_destroy(s, se);
	pthread_mutex_unlock(&s->mu);
	return st;
}

uint32_t nfs4_op_destroy_clientid(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_client *c;
	uint64_t id = xdr_u64(in);
	uint32_t st = NFS4_OK;

	if (in->err)
		return NFS4ERR_BADXDR;
	pthread_mutex_lock(&s->mu);
	if (!(c = nfs4_client_find(s, id)))
		st = NFS4ERR_STALE_CLIENTID;
	else if (c->sessions)
		st = NFS4ERR_CLIENTID_BUSY;
	else
		nfs4_client_free(s, c);
	pthread_mutex_unlock(&s->mu);
	return st;
}

uint32_t nfs4_op_bind_conn(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_session *se;
	const uint8_t *sid = xdr_fixed(in, NFS4_SESSIONID);
	uint32_t dir = xdr_u32(in), st = NFS4_OK;
	bool rdma = xdr_bool(in);

	if (in->err)
		return NFS4ERR_BADXDR;
	/* CDFC4_FORE 1, CDFC4_BACK 2, CDFC4_FORE_OR_BOTH 3, CDFC4_BACK_OR_BOTH 7 */
	if (rdma || (dir != 1 && dir != 2 && dir != 3 && dir != 7))
		return NFS4ERR_INVAL; /* no RDMA */
	pthread_mutex_lock(&s->mu);
	if (!(se = nfs4_session_find(s, sid)) || se->dead) {
		st = NFS4ERR_BADSESSION;
	} else {
		uint32_t got = 0;

		if (dir != 2) {
			nfs4_session_bind(se, cx->call->conn_id);
			got |= 1; /* CDFS4_FORE */
		}
		/* the backchannel moves here when asked for it (CDFC4_BACK, _BACK_OR_BOTH);
		 * with CDFC4_FORE_OR_BOTH (Linux binds every nconnect connection so,
		 * and rebinds so on CB_PATH_DOWN) only when the session has none that
		 * works: gone, or its CB_NULL probe found it down */
		if ((dir == 2 || dir == 7 ||
		     (dir == 3 && (!nfs_conn_usable(se->back) || se->cb_state == NFS4_CB_DOWN))) &&
		    se->cb_flavor != UINT32_MAX && nfs4_deleg_back(cx, se))
			got |= 2; /* CDFS4_BACK */
		if (!got) {
			st = NFS4ERR_INVAL;
			goto out;
		}
		se->clp->renewed_ns = nfs4_now_ns();
		xdr_put_fixed(cx->out, sid, NFS4_SESSIONID);
		xdr_put_u32(cx->out, got);
		xdr_put_u32(cx->out, 0); /* not RDMA */
	}
out:
	pthread_mutex_unlock(&s->mu);
	return st;
}

uint32_t nfs4_op_reclaim_complete(struct nfs4_cx *cx, struct xdr_cur *in)
{
	bool one_fs = xdr_bool(in);
	uint8_t owner[NFS4_OPAQUE_LIMIT];
	uint32_t st = NFS4_OK, olen = 0;

	if (in->err)
		return NFS4ERR_BADXDR;
	if (one_fs)
		return cx->cur.set ? NFS4_OK : NFS4ERR_NOFILEHANDLE;
	pthread_mutex_lock(&cx->srv->mu);
	if (!cx->sess->clp) {
		st = NFS4ERR_BADSESSION; /* destroyed earlier in this COMPOUND */
	} else if (cx->sess->clp->reclaimed) {
		st = NFS4ERR_COMPLETE_ALREADY;
	} else {
		cx->sess->clp->reclaimed = true;
		olen = cx->sess->clp->owner_len;
		memcpy(owner, cx->sess->clp->owner, olen);
	}
	pthread_mutex_unlock(&cx->srv->mu);
	/* its volumes' grace periods wait for it no more (they end once no one is left) */
	if (st == NFS4_OK && olen)
		vol_grace_reclaim_done(cx->call->store, VOL_GRACE_NFS4, owner, olen);
	return st;
}
