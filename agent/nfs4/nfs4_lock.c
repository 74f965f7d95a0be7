/* nfs4_lock: byte-range locks of NFSv4.1 (RFC 8881 18.10-18.12: LOCK,
 * LOCKT, LOCKU) over the store's protocol-neutral table (vol_lock.h), in its
 * POSIX flavour, so a v4 lock and an SMB byte-range lock (or, later, an NLM
 * lock) on the same range of the same file exclude each other.
 *
 * A lock state (nfs4_state.c, kind NFS4_ST_LOCK) stands for one lock owner
 * of one client on one file, and is made by the first LOCK with
 * open_to_lock_owner4 under an open of that file; its stateid names it
 * afterwards (exist_lock_owner4, LOCKU, READ/WRITE, TEST_STATEID,
 * FREE_STATEID). In the table its locks belong to nfs4_lock_owner(): the
 * client id and the state's index and generation, so two lock owners of one
 * client conflict as two clients do. Locks go with LOCKU, with their state
 * (FREE_STATEID once none is held; CLOSE of the open they came under), and
 * with the client (lease expiry, DESTROY_CLIENTID). A conflict answers
 * NFS4ERR_DENIED with the range, type and owner in the way (an NFSv4
 * holder's own clientid and owner; another protocol's holder as clientid 0
 * and owner "smb" / "nlm"). The blocking types (READW_LT, WRITEW_LT) are
 * answered as the others: the client polls, which RFC 8881 9.6 allows (no
 * CB_NOTIFY_LOCK).
 *
 * Grace (vol_grace.h): a client is put on the records of a volume (on the
 * shelf) before it gets its first open or lock there. While the volume is
 * in grace on this node (it was attached here with holders recorded: a
 * restart, a failover, a drain), LOCK and LOCKT answer NFS4ERR_GRACE except
 * a LOCK with reclaim from a recorded client that has not sent
 * RECLAIM_COMPLETE (under an open it reclaimed with CLAIM_PREVIOUS); any
 * other reclaim, and every reclaim once grace is over, is NFS4ERR_NO_GRACE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <string.h>

enum { READ_LT = 1, WRITE_LT = 2, READW_LT = 3, WRITEW_LT = 4 };

/* The lock table, the file's key in it and the current file's handle. */
static uint32_t lock_file(struct nfs4_cx *cx, struct vol_lock_key *k, struct vol_fh *fh)
{
	if (!S_ISREG(cx->cur.obj.st.st_mode))
		return S_ISDIR(cx->cur.obj.st.st_mode) ? NFS4ERR_ISDIR : NFS4ERR_INVAL;
	if (vol_fh_make(cx->call->store, &cx->cur.obj, fh) != 0)
		return NFS4ERR_STALE;
	vol_lock_key_of(&cx->cur.obj, k);
	pthread_mutex_lock(&cx->srv->mu);
	if (!cx->srv->locks)
		cx->srv->locks = vol_store_locks(cx->call->store);
	pthread_mutex_unlock(&cx->srv->mu);
	return NFS4_OK;
}

/* locktype, offset and length: NFS4ERR_INVAL for a bad type, a zero length
 * or a range past 2^64 (RFC 8881 18.10.3); *flags for the table. */
static uint32_t lock_range(uint32_t type, uint64_t off, uint64_t len, unsigned *flags)
{
	if (type < READ_LT || type > WRITEW_LT || len == 0)
		return NFS4ERR_INVAL;
	if (len != UINT64_MAX && len > UINT64_MAX - off)
		return NFS4ERR_INVAL;
	*flags = VOL_LOCK_F_POSIX | (type == WRITE_LT || type == WRITEW_LT ? VOL_LOCK_F_EXCL : 0);
	return NFS4_OK;
}

static bool same_fh(const struct vol_fh *a, const struct vol_fh *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* LOCK4denied for the lock d in the way (under s->mu). */
static void put_denied(struct nfs4_cx *cx, const struct vol_lock_desc *d)
{
	struct nfs4_open *h = d->owner.proto == VOL_LOCK_NFS4 ? nfs4_state_by_id(cx->srv, d->owner.id) : NULL;
	const char *other = d->owner.proto == VOL_LOCK_SMB ? "smb" : "nlm";

	xdr_put_u64(cx->out, d->start);
	xdr_put_u64(cx->out, d->len);
	xdr_put_u32(cx->out, (d->flags & VOL_LOCK_F_EXCL) ? WRITE_LT : READ_LT);
	if (h && h->clp) {
		xdr_put_u64(cx->out, h->clp->id);
		xdr_put_opaque(cx->out, h->owner, h->owner_len);
	} else {
		xdr_put_u64(cx->out, 0);
		xdr_put_opaque(cx->out, other, (uint32_t)strlen(other));
	}
}

/* The lock state sid names for the current file (under s->mu). */
static uint32_t find_lock_state(struct nfs4_cx *cx, const struct nfs4_stateid *sid, const struct vol_fh *fh,
				struct nfs4_open **out)
{
	uint32_t st;

	if (!cx->sess->clp)
		return NFS4ERR_BADSESSION;
	if ((st = nfs4_open_find(cx->srv, cx->sess->clp, sid, out)) != NFS4_OK)
		return st;
	if ((*out)->kind != NFS4_ST_LOCK || !same_fh(&(*out)->fh, fh))
		return NFS4ERR_BAD_STATEID;
	return NFS4_OK;
}

uint32_t nfs4_op_lock(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_stateid sid;
	struct nfs4_open *o = NULL, *ls = NULL;
	struct vol_lock_owner lo;
	struct vol_lock_desc d;
	struct vol_lock_key k;
	struct vol_fh fh;
	const uint8_t *owner = NULL;
	uint32_t type, olen = 0, st;
	uint64_t off, len;
	bool reclaim, fresh = false;
	unsigned flags = 0;
	int rc;

	type = xdr_u32(in);
	reclaim = xdr_u32(in) != 0;
	off = xdr_u64(in);
	len = xdr_u64(in);
	if (xdr_u32(in)) { /* new_lock_owner: open_to_lock_owner4 */
		(void)xdr_u32(in); /* open_seqid: unused in v4.1 */
		nfs4_get_stateid(in, &sid);
		(void)xdr_u32(in); /* lock_seqid */
		(void)xdr_u64(in); /* lock_owner4.clientid: the session's client is the owner */
		owner = xdr_opaque(in, NFS4_OPAQUE_LIMIT, &olen);
	} else {            /* exist_lock_owner4 */
		nfs4_get_stateid(in, &sid);
		(void)xdr_u32(in);
	}
	if (in->err)
		return NFS4ERR_BADXDR;
	if ((st = lock_range(type, off, len, &flags)) != NFS4_OK)
		return st;
	if (sid.seqid == 1 && !memcmp(sid.other, (uint8_t[NFS4_OTHER]){ 0 }, NFS4_OTHER))
		sid = cx->cur.cur_stateid;
	if ((st = lock_file(cx, &k, &fh)) != NFS4_OK)
		return st;
	if (reclaim ? !nfs4_grace_may_reclaim(cx, &cx->cur.obj) : vol_grace_active(cx->cur.obj.exp))
		return reclaim ? NFS4ERR_NO_GRACE : NFS4ERR_GRACE;
	if ((st = nfs4_grace_record(cx, &cx->cur.obj)) != NFS4_OK)
		return st;
	pthread_mutex_lock(&s->mu);
	nfs4_expire(s); /* an expired client's locks stand in no one's way */
	if (!cx->sess->clp) {
		st = NFS4ERR_BADSESSION;
		goto out;
	}
	if (owner) {
		if ((st = nfs4_open_find(s, cx->sess->clp, &sid, &o)) != NFS4_OK)
			goto out;
		if (o->kind != NFS4_ST_OPEN || !same_fh(&o->fh, &fh)) {
			st = NFS4ERR_BAD_STATEID;
			goto out;
		}
		for (ls = cx->sess->clp->opens; ls; ls = ls->next)
			if (ls->kind == NFS4_ST_LOCK && ls->owner_len == olen && !memcmp(ls->owner, owner, olen) &&
			    same_fh(&ls->fh, &fh))
				break;
		if (!ls) {
			if (!(ls = nfs4_state_alloc(s, cx->sess->clp, NFS4_ST_LOCK, owner, olen, &fh))) {
				st = NFS4ERR_RESOURCE;
				goto out;
			}
			ls->parent = o;
			ls->lkey = k;
			fresh = true;
		}
	} else {
		if ((st = find_lock_state(cx, &sid, &fh, &ls)) != NFS4_OK)
			goto out;
		o = ls->parent;
	}
	/* a write lock needs the file open for writing, a read lock for reading (RFC 8881 18.10.4) */
	if (!(o->access & ((flags & VOL_LOCK_F_EXCL) ? OPEN4_SHARE_ACCESS_WRITE : OPEN4_SHARE_ACCESS_READ))) {
		st = NFS4ERR_OPENMODE;
		goto out;
	}
	lo = nfs4_lock_owner(s, ls);
	rc = vol_lock_lock(s->locks, &k, &lo, off, len, flags, &d);
	if (rc == -EAGAIN) {
		st = NFS4ERR_DENIED;
		put_denied(cx, &d);
	} else if (rc != 0) {
		st = rc == -ENOLCK ? NFS4ERR_DENIED : nfs4_status(rc);
		if (rc == -ENOLCK) /* the table is full: denied with the range asked */
			put_denied(cx, &(struct vol_lock_desc){ .start = off, .len = len, .flags = flags });
	} else {
		ls->seqid++;
		nfs4_open_stateid(s, ls, &sid);
		nfs4_put_stateid(cx->out, &sid);
		fresh = false;
	}
	if (fresh) /* nothing granted: a state made for it goes again */
		nfs4_open_release(s, ls);
out:
	pthread_mutex_unlock(&s->mu);
	return st;
}

uint32_t nfs4_op_lockt(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct vol_lock_owner lo = { .proto = VOL_LOCK_NFS4, .id = UINT64_MAX };
	struct vol_lock_desc d;
	struct vol_lock_key k;
	struct vol_fh fh;
	const uint8_t *owner;
	uint32_t type, olen, st;
	uint64_t off, len;
	unsigned flags = 0;
	int rc;

	type = xdr_u32(in);
	off = xdr_u64(in);
	len = xdr_u64(in);
	(void)xdr_u64(in); /* clientid: the session's */
	owner = xdr_opaque(in, NFS4_OPAQUE_LIMIT, &olen);
	if (in->err)
		return NFS4ERR_BADXDR;
	if ((st = lock_range(type, off, len, &flags)) != NFS4_OK)
		return st;
	if ((st = lock_file(cx, &k, &fh)) != NFS4_OK)
		return st;
	if (vol_grace_active(cx->cur.obj.exp))
		return NFS4ERR_GRACE; /* the locks to test are not all back yet */
	if (nfs4_deleg_conflict_read(cx, &k))
		return NFS4ERR_DELAY; /* a write delegation's holder may lock locally: recalled first */
	pthread_mutex_lock(&s->mu);
	nfs4_expire(s);
	if (!cx->sess->clp) {
		st = NFS4ERR_BADSESSION;
		goto out;
	}
	lo.client = cx->sess->clp->id;
	/* the owner's own locks are no conflict: test as its lock state when it has one */
	for (struct nfs4_open *ls = cx->sess->clp->opens; ls; ls = ls->next)
		if (ls->kind == NFS4_ST_LOCK && ls->owner_len == olen && !memcmp(ls->owner, owner, olen) &&
		    same_fh(&ls->fh, &fh)) {
			lo = nfs4_lock_owner(s, ls);
			break;
		}
	rc = vol_lock_probe(s->locks, &k, &lo, off, len, flags, &d);
	if (rc == -EAGAIN) {
		st = NFS4ERR_DENIED;
		put_denied(cx, &d);
	} else {
		st = nfs4_status(rc);
	}
out:
	pthread_mutex_unlock(&s->mu);
	return st;
}

uint32_t nfs4_op_locku(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_stateid sid;
	struct nfs4_open *ls;
	struct vol_lock_owner lo;
	struct vol_lock_key k;
	struct vol_fh fh;
	uint32_t type, st;
	uint64_t off, len;
	unsigned flags = 0;
	int rc;

	type = xdr_u32(in);
	(void)xdr_u32(in); /* seqid */
	nfs4_get_stateid(in, &sid);
	off = xdr_u64(in);
	len = xdr_u64(in);
	if (in->err)
		return NFS4ERR_BADXDR;
	if ((st = lock_range(type, off, len, &flags)) != NFS4_OK)
		return st;
	if ((st = lock_file(cx, &k, &fh)) != NFS4_OK)
		return st;
	pthread_mutex_lock(&s->mu);
	if ((st = find_lock_state(cx, &sid, &fh, &ls)) != NFS4_OK)
		goto out;
	lo = nfs4_lock_owner(s, ls);
	if ((rc = vol_lock_unlock(s->locks, &k, &lo, off, len, VOL_LOCK_F_POSIX)) != 0) {
		st = rc == -ENOLCK ? NFS4ERR_RESOURCE : nfs4_status(rc); /* a split past the cap */
		goto out;
	}
	ls->seqid++;
	nfs4_open_stateid(s, ls, &sid);
	nfs4_put_stateid(cx->out, &sid);
out:
	pthread_mutex_unlock(&s->mu);
	return st;
}

uint32_t nfs4_lock_free_state(struct nfs4_srv *s, struct nfs4_open *o)
{
	struct vol_lock_owner lo = nfs4_lock_owner(s, o);

	if (s->locks && vol_lock_held(s->locks, &o->lkey, &lo) > 0)
		return NFS4ERR_LOCKS_HELD;
	nfs4_open_release(s, o);
	return NFS4_OK;
}

/* The session's client's co_ownerid, copied under s->mu; 0 when the
 * session lost its client. */
static uint32_t grace_owner(struct nfs4_cx *cx, uint8_t *owner, bool *reclaimed, bool mark)
{
	uint32_t len = 0;

	pthread_mutex_lock(&cx->srv->mu);
	if (cx->sess->clp) {
		len = cx->sess->clp->owner_len;
		memcpy(owner, cx->sess->clp->owner, len);
		*reclaimed = cx->sess->clp->reclaimed;
		if (mark)
			cx->sess->clp->recorded = true;
	}
	pthread_mutex_unlock(&cx->srv->mu);
	return len;
}

uint32_t nfs4_grace_record(struct nfs4_cx *cx, const struct vol_obj *obj)
{
	uint8_t owner[NFS4_OPAQUE_LIMIT];
	bool reclaimed;
	uint32_t len = grace_owner(cx, owner, &reclaimed, true);
	int rc;

	if (len == 0)
		return NFS4ERR_BADSESSION;
	if ((rc = vol_grace_record(obj->exp, VOL_GRACE_NFS4, owner, len, NULL)) != 0)
		return NFS4ERR_SERVERFAULT; /* not on the shelf: not granted (vol_grace logged why) */
	return NFS4_OK;
}

bool nfs4_grace_may_reclaim(struct nfs4_cx *cx, const struct vol_obj *obj)
{
	uint8_t owner[NFS4_OPAQUE_LIMIT];
	bool reclaimed = false;
	uint32_t len = grace_owner(cx, owner, &reclaimed, false);

	return len && !reclaimed && vol_grace_may_reclaim(obj->exp, VOL_GRACE_NFS4, owner, len);
}
