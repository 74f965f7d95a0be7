/* nfs4_io: opens and data: OPEN (CLAIM_NULL and CLAIM_FH; create
 * UNCHECKED4, GUARDED4, EXCLUSIVE4, EXCLUSIVE4_1), CLOSE, READ, WRITE
 * (stable or not, with the server run's write verifier), COMMIT,
 * TEST_STATEID, FREE_STATEID, and the stateid checks READ, WRITE and
 * SETATTR share.
 *
 * An open is a record (nfs4_state.c) of who opened which file for what; the
 * data path itself needs no descriptor per open (the store's open-file cache
 * serves every protocol). A lock stateid (nfs4_lock.c) does I/O with its
 * open's access; CLOSE drops the open's lock states and their locks, and
 * FREE_STATEID a lock state that holds none (an open: NFS4ERR_LOCKS_HELD) or
 * a delegation. OPEN hands out read and write delegations (the latter with
 * a space limit: open_space_limit) when nfs4_deleg_grant finds it safe and
 * share_access's want bits allow (else OPEN_DELEGATE_NONE_EXT with the
 * WND4_* reason when the client said what it wants); an OPEN for writing, a
 * WRITE or a SETATTR of the size answer NFS4ERR_DELAY while another client's
 * delegation on the file is recalled, and an OPEN for reading and a READ
 * while another client's write delegation is (nfs4_deleg.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CLAIM_NULL = 0, CLAIM_PREVIOUS = 1, CLAIM_FH = 4, CLAIM_DELEG_CUR_FH = 5 };
enum { UNCHECKED4 = 0, GUARDED4 = 1, EXCLUSIVE4 = 2, EXCLUSIVE4_1 = 3 };

void nfs4_get_stateid(struct xdr_cur *in, struct nfs4_stateid *sid)
{
	const uint8_t *o;

	sid->seqid = xdr_u32(in);
	o = xdr_fixed(in, NFS4_OTHER);
	if (o)
		memcpy(sid->other, o, NFS4_OTHER);
	else
		memset(sid->other, 0, NFS4_OTHER);
}

void nfs4_put_stateid(struct ut_buf *b, const struct nfs4_stateid *sid)
{
	xdr_put_u32(b, sid->seqid);
	xdr_put_fixed(b, sid->other, NFS4_OTHER);
}

static bool other_is(const struct nfs4_stateid *sid, uint8_t v)
{
	int i;

	for (i = 0; i < NFS4_OTHER; i++)
		if (sid->other[i] != v)
			return false;
	return true;
}

/* Check a stateid for I/O on the current file: the special anonymous and
 * READ-bypass stateids pass (the caller's permissions decide, as NFSv3),
 * "the current stateid" is the last OPEN's, and an open stateid must be
 * this client's, of this file, and hold need (OPEN4_SHARE_ACCESS_* or 0). */
static uint32_t check_stateid(struct nfs4_cx *cx, struct nfs4_stateid sid, uint32_t need)
{
	struct nfs4_open *o;
	struct vol_fh fh;
	uint32_t st;

	if (sid.seqid == 1 && other_is(&sid, 0))
		sid = cx->cur.cur_stateid; /* the current stateid (RFC 8881 16.2.3.1.2) */
	if ((sid.seqid == 0 && other_is(&sid, 0)) || (sid.seqid == UINT32_MAX && other_is(&sid, 0xff)))
		return NFS4_OK;
	if (vol_fh_make(cx->call->store, &cx->cur.obj, &fh) != 0)
		return NFS4ERR_STALE;
	pthread_mutex_lock(&cx->srv->mu);
	st = cx->sess->clp ? nfs4_open_find(cx->srv, cx->sess->clp, &sid, &o) : NFS4ERR_BADSESSION;
	if (st == NFS4_OK && (o->fh.len != fh.len || memcmp(o->fh.data, fh.data, fh.len)))
		st = NFS4ERR_BAD_STATEID;
	else if (st == NFS4_OK && o->kind == NFS4_ST_DELEG && o->dl && o->dl->revoked)
		st = NFS4ERR_DELEG_REVOKED;
	else if (st == NFS4_OK && need && !((o->kind == NFS4_ST_LOCK ? o->parent : o)->access & need))
		st = NFS4ERR_OPENMODE; /* a lock stateid does I/O with its open's access */
	pthread_mutex_unlock(&cx->srv->mu);
	return st;
}

/* Set open o's share reservation on file k in the store's table, shared
 * with SMB's share modes and NLM's SHARE (under s->mu): access and deny are
 * OPEN4_SHARE_ACCESS_* / OPEN4_SHARE_DENY_* bits, which are VOL_SHARE_READ
 * and VOL_SHARE_WRITE. NFS4ERR_SHARE_DENIED when another owner's reservation
 * conflicts; o is unchanged on failure. */
static uint32_t share(struct nfs4_srv *s, struct nfs4_open *o, const struct vol_lock_key *k, uint32_t access,
		      uint32_t deny)
{
	struct vol_lock_owner lo = nfs4_lock_owner(s, o);
	int rc = vol_lock_share(s->locks, k, &lo, access, deny);

	if (rc != 0)
		return rc == -EBUSY ? NFS4ERR_SHARE_DENIED : rc == -ENOLCK ? NFS4ERR_RESOURCE : nfs4_status(rc);
	o->lkey = *k;
	o->access = access;
	o->deny = deny;
	return NFS4_OK;
}

static uint32_t file_check(const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return NFS4_OK;
	if (S_ISDIR(st->st_mode))
		return NFS4ERR_ISDIR;
	return S_ISLNK(st->st_mode) ? NFS4ERR_SYMLINK : NFS4ERR_WRONG_TYPE;
}

/* The object of a CLAIM_NULL open: looked up or made in the current directory. */
static uint32_t open_name(struct nfs4_cx *cx, const char *name, uint32_t nlen, uint32_t opentype,
			  uint32_t how, const uint8_t *verf, const struct vol_sattr *sa, struct vol_obj *obj,
			  bool *created)
{
	struct vol_obj *dir = &cx->cur.obj;
	int rc;

	*created = false;
	if (!S_ISDIR(dir->st.st_mode))
		return S_ISLNK(dir->st.st_mode) ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR;
	if (opentype == 0 || how == UNCHECKED4) {
		rc = vol_lookup(dir, &cx->cur.ecred, name, nlen, obj);
		if (rc == 0 || opentype == 0)
			return nfs4_status(rc); /* a size for a file that exists: nfs4_op_open cuts it */
		if (rc != -ENOENT)
			return nfs4_status(rc);
	}
	if (cx->cur.access != VOL_ACCESS_RW)
		return NFS4ERR_ROFS;
	/* UNCHECKED4 creates guarded: a file another client made since the
	 * LOOKUP is then opened as one that existed (access checked, only a
	 * size of 0 applied: nfs4_op_open), not as one this OPEN made */
	rc = vol_create(dir, &cx->cur.ecred, name, nlen, how < EXCLUSIVE4,
			how >= EXCLUSIVE4 ? verf : NULL, sa, obj);
	if (rc == -EEXIST && how == UNCHECKED4)
		return nfs4_status(vol_lookup(dir, &cx->cur.ecred, name, nlen, obj));
	*created = rc == 0;
	return nfs4_status(rc);
}

/* share_access's want bits: a known want (NO_PREFERENCE .. CANCEL) and the
 * two flags, which we take but never act on (we neither signal nor push
 * delegations: ond_server_will_* answer false). */
static bool want_valid(uint32_t access)
{
	uint32_t want = access & OPEN4_SHARE_ACCESS_WANT_DELEG_MASK;

	if (access & ~(uint32_t)(OPEN4_SHARE_ACCESS_MASK | OPEN4_SHARE_ACCESS_WANT_DELEG_MASK |
				 OPEN4_SHARE_ACCESS_WANT_SIGNAL_DELEG_WHEN_RESRC_AVAIL |
				 OPEN4_SHARE_ACCESS_WANT_PUSH_DELEG_WHEN_UNCONTENDED))
		return false;
	return want <= OPEN4_SHARE_ACCESS_WANT_CANCEL;
}

/* Whether the want lets OPEN try a delegation, and which (*write: a write
 * delegation: an open for writing with no preference or ANY, or WRITE_DELEG
 * when the caller may write the file: may_write); when not, why. */
static bool open_wants_deleg(uint32_t want, uint32_t access, bool may_write, bool *write, uint32_t *why)
{
	*write = false;
	switch (want) {
	case OPEN4_SHARE_ACCESS_WANT_NO_PREFERENCE:
	case OPEN4_SHARE_ACCESS_WANT_ANY_DELEG:
		*write = (access & OPEN4_SHARE_ACCESS_WRITE) != 0;
		return true;
	case OPEN4_SHARE_ACCESS_WANT_READ_DELEG:
		return true;
	case OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG:
		if (!may_write) {
			*why = WND4_RESOURCE; /* it may not write the file: no write delegation */
			return false;
		}
		*write = true;
		return true;
	case OPEN4_SHARE_ACCESS_WANT_NO_DELEG:
		*why = WND4_NOT_WANTED;
		return false;
	default: /* CANCEL: we keep no wants to cancel */
		*why = WND4_CANCELLED;
		return false;
	}
}

/* A write delegation's nfs_space_limit4 (RFC 8881 10.4.1): the file may
 * grow to its size and the volume's free capacity, what the store would
 * accept now, so the holder flushes before it could meet NFS4ERR_NOSPC on
 * data it told its application was written. Without the volume's figures,
 * the file's size: the holder flushes before growing it. */
static uint64_t open_space_limit(struct vol_obj *file)
{
	struct vol_fsstat fs;

	if (vol_fsstat(file, &fs) != 0)
		return (uint64_t)file->st.st_size;
	return (uint64_t)file->st.st_size + fs.abytes;
}

/* How to take back what open_share granted, when the cut that follows
 * fails: the open (nfs4_lock_owner's id), whether this OPEN made it, its
 * seqid, access and deny as open_share left them and those it had before. */
struct open_undo {
	uint64_t id;
	bool fresh;
	uint32_t seqid, access, deny, old_access, old_deny;
};

/* OPEN's share reservation (under s->mu): owner's open of the file, made
 * when it has none, holds access and deny on top of what it held, in *out;
 * *u says how to take it back (open_unshare). On failure nothing changed:
 * a fresh open is released. */
static uint32_t open_share(struct nfs4_cx *cx, const uint8_t *owner, uint32_t olen, const struct vol_fh *fh,
			   const struct vol_lock_key *k, uint32_t access, uint32_t deny, struct nfs4_open **out,
			   struct open_undo *u)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_open *o;
	uint32_t st;

	if (!s->locks)
		s->locks = vol_store_locks(cx->call->store);
	if (!cx->sess->clp || !(o = nfs4_open_get(s, cx->sess->clp, owner, olen, fh, &u->fresh)))
		return NFS4ERR_RESOURCE;
	u->old_access = o->access;
	u->old_deny = o->deny;
	if ((st = share(s, o, k, o->access | access, o->deny | deny)) != NFS4_OK) {
		if (u->fresh)
			nfs4_open_release(s, o); /* nothing granted */
		return st;
	}
	u->id = nfs4_lock_owner(s, o).id;
	u->seqid = o->seqid;
	u->access = o->access;
	u->deny = o->deny;
	*out = o;
	return NFS4_OK;
}

/* Give back what open_share granted o (under s->mu), unless another OPEN
 * of the same owner and file was granted on it meanwhile: that grant
 * stands. Going back to a subset of a reservation is never refused. */
static void open_unshare(struct nfs4_srv *s, struct nfs4_open *o, const struct open_undo *u)
{
	if (o->seqid != u->seqid || o->access != u->access || o->deny != u->deny)
		return;
	if (u->fresh)
		nfs4_open_release(s, o);
	else
		(void)share(s, o, &o->lkey, u->old_access, u->old_deny);
}

/* The cut of an UNCHECKED4 OPEN of a file that exists: to size 0, stable
 * before the reply as SETATTR's (RFC 8881 18.16.3). */
static uint32_t open_cut(struct nfs4_cx *cx, struct vol_obj *file)
{
	struct vol_sattr t = { .set_size = true, .size = 0 };
	int rc = vol_setattr_stable(file, &cx->cur.ecred, &t, NULL);

	return rc != 0 ? nfs4_status(rc) : NFS4_OK;
}

uint32_t nfs4_op_open(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj obj = { .fd = -1 }, *file;
	struct vol_sattr sa = { 0 };
	struct nfs4_open *o;
	struct nfs4_stateid sid, dsid;
	struct vol_lock_key k;
	struct vol_fh fh;
	bool deleg = false, wdeleg = false, may_write;
	uint64_t limit = 0;
	uint32_t want, why = WND4_RESOURCE, access, deny, olen, opentype, how = 0, claim, nlen = 0, st = NFS4_OK, set[3] = { 0 };
	const uint8_t *owner, *verf = NULL;
	const char *name = NULL;
	uint64_t before = 0, after = 0;
	struct open_undo undo;
	bool created = false, cut = false;
	int allowed = 0, rc;

	(void)xdr_u32(in); /* seqid: unused in v4.1 */
	access = xdr_u32(in);
	deny = xdr_u32(in);
	(void)xdr_u64(in); /* owner's clientid: the session's client is the owner */
	owner = xdr_opaque(in, NFS4_OPAQUE_LIMIT, &olen);
	opentype = xdr_u32(in);
	if (opentype == 1) {
		how = xdr_u32(in);
		if (how == UNCHECKED4 || how == GUARDED4) {
			st = nfs4_fattr_decode(in, &sa, set);
		} else if (how == EXCLUSIVE4 || how == EXCLUSIVE4_1) {
			verf = xdr_fixed(in, 8);
			if (how == EXCLUSIVE4_1)
				st = nfs4_fattr_decode(in, &sa, set);
		} else {
			return NFS4ERR_BADXDR;
		}
	} else if (opentype != 0) {
		return NFS4ERR_BADXDR;
	}
	claim = xdr_u32(in);
	if (claim == CLAIM_NULL) {
		uint32_t nst = nfs4_name(in, &name, &nlen);

		if (st == NFS4_OK)
			st = nst;
	} else if (claim == CLAIM_PREVIOUS) {
		/* delegate_type: a delegation held before is not given back (the
		 * open is reclaimed, OPEN_DELEGATE_NONE; the client writes back what
		 * it cached under a write one) */
		if (xdr_u32(in) > OPEN_DELEGATE_WRITE && !in->err)
			return NFS4ERR_RECLAIM_BAD;
	} else if (claim == CLAIM_DELEG_CUR_FH) {
		/* an open the client made under its delegation, told at the recall:
		 * an open of the current file as CLAIM_FH (the delegation is checked
		 * by the client's own state; its stateid is not needed for that) */
		nfs4_get_stateid(in, &dsid);
		claim = CLAIM_FH;
	} else if (claim != CLAIM_FH) {
		return NFS4ERR_NOTSUPP; /* CLAIM_DELEGATE_CUR / _PREV by name: not served */
	}
	if (in->err)
		return NFS4ERR_BADXDR;
	if (st != NFS4_OK)
		return st;
	if (how >= EXCLUSIVE4 && (sa.atime_how || sa.mtime_how))
		return NFS4ERR_INVAL; /* the times hold the verifier: not in suppattr_exclcreat */
	want = access & OPEN4_SHARE_ACCESS_WANT_DELEG_MASK;
	if ((access & OPEN4_SHARE_ACCESS_MASK) == 0 || !want_valid(access))
		return NFS4ERR_INVAL;
	access &= OPEN4_SHARE_ACCESS_MASK;
	if (deny & ~(uint32_t)OPEN4_SHARE_DENY_MASK)
		return NFS4ERR_INVAL;
	if (cx->cur.pseudo)
		return claim != CLAIM_NULL ? NFS4ERR_ISDIR : opentype ? NFS4ERR_ROFS : NFS4ERR_ISDIR;
	if (claim == CLAIM_PREVIOUS && opentype)
		return NFS4ERR_INVAL; /* a reclaim creates nothing (RFC 8881 18.16.3) */
	if (claim == CLAIM_PREVIOUS && !nfs4_grace_may_reclaim(cx, &cx->cur.obj))
		return NFS4ERR_NO_GRACE;
	if (claim != CLAIM_PREVIOUS && deny && vol_grace_active(cx->cur.obj.exp))
		return NFS4ERR_GRACE; /* a deny could stand in the way of an open still to be reclaimed */
	if ((access & OPEN4_SHARE_ACCESS_WRITE) && cx->cur.access != VOL_ACCESS_RW)
		return NFS4ERR_ROFS;
	if (claim == CLAIM_NULL) {
		before = nfs4_change(&cx->cur.obj.st);
		if ((st = open_name(cx, name, nlen, opentype, how, verf, &sa, &obj, &created)) != NFS4_OK)
			return st;
		(void)vol_refresh(&cx->cur.obj);
		after = nfs4_change(&cx->cur.obj.st);
		file = &obj;
	} else {
		file = &cx->cur.obj;
	}
	if ((st = file_check(&file->st)) != NFS4_OK)
		goto out;
	may_write = cx->cur.access == VOL_ACCESS_RW;
	if (!created) {
		int mask = ((access & OPEN4_SHARE_ACCESS_READ) ? R_OK : 0) |
			   ((access & OPEN4_SHARE_ACCESS_WRITE) ? W_OK : 0);

		/* W_OK asked too: whether WANT_WRITE_DELEG may be honoured */
		if ((rc = vol_access(file, &cx->cur.ecred, mask | W_OK, &allowed)) != 0) {
			st = nfs4_status(rc);
			goto out;
		}
		if ((allowed & mask) != mask) {
			st = NFS4ERR_ACCESS;
			goto out;
		}
		may_write = may_write && (allowed & W_OK);
	}
	if ((rc = vol_fh_make(cx->call->store, file, &fh)) != 0) {
		st = nfs4_status(rc);
		goto out;
	}
	if ((st = nfs4_grace_record(cx, file)) != NFS4_OK) /* on the shelf before any state */
		goto out;
	vol_lock_key_of(file, &k);
	/* UNCHECKED4 of a file that exists applies a size of 0 only, as knfsd
	 * (RFC 8881 18.16.3: createattrs are not used, "except that when
	 * createattrs specifies the size attribute with a size of zero, the
	 * existing file is truncated") */
	cut = claim == CLAIM_NULL && !created && opentype == 1 && how == UNCHECKED4 && sa.set_size && sa.size == 0;
	if (cut && !(access & OPEN4_SHARE_ACCESS_WRITE)) {
		st = NFS4ERR_INVAL; /* a cut is a write: under a read-only open it would pass a DENY_WRITE (knfsd too) */
		goto out;
	}
	if (((access & OPEN4_SHARE_ACCESS_WRITE) || cut ? nfs4_deleg_conflict(cx, &k, true)
							: nfs4_deleg_conflict_read(cx, &k)) ||
	    (claim != CLAIM_DELEG_CUR_FH && claim != CLAIM_PREVIOUS && nfs4_deleg_conflict_owner(cx, &k, owner, olen))) {
		st = NFS4ERR_DELAY; /* another client's delegation is being recalled */
		goto out;
	}
	(void)vol_refresh(file); /* the change a write delegation's holder starts from (CB_GETATTR) */
	pthread_mutex_lock(&cx->srv->mu);
	st = open_share(cx, owner, olen, &fh, &k, access, deny, &o, &undo);
	if (st == NFS4_OK && cut) {
		/* the cut once the reservation is held: an OPEN another owner's
		 * deny refuses leaves the file as it was; out of mu, as it syncs */
		pthread_mutex_unlock(&cx->srv->mu);
		st = open_cut(cx, file);
		(void)vol_refresh(file);
		pthread_mutex_lock(&cx->srv->mu);
		o = nfs4_state_by_id(cx->srv, undo.id);
		if (st != NFS4_OK && o)
			open_unshare(cx->srv, o, &undo); /* a refused cut grants nothing */
		else if (st == NFS4_OK && !o)
			st = NFS4ERR_DELAY; /* a CLOSE of this owner's open raced the OPEN: the client asks again */
	}
	if (st == NFS4_OK) {
		o->seqid++;
		nfs4_open_stateid(cx->srv, o, &sid);
		if (claim != CLAIM_PREVIOUS && open_wants_deleg(want, o->access, may_write, &wdeleg, &why)) {
			if (wdeleg && nfs4_setid_file(file->st.st_mode))
				why = WND4_RESOURCE; /* none on a set-id file (nfs4_setid_file) */
			else
				deleg = nfs4_deleg_grant(cx, o, &k, o->access, wdeleg, nfs4_change(&file->st), &why,
							 &dsid);
		}
	}
	pthread_mutex_unlock(&cx->srv->mu);
	if (st != NFS4_OK)
		goto out;
	if (deleg && wdeleg)
		limit = open_space_limit(file);
	nfs4_put_stateid(cx->out, &sid);
	xdr_put_u32(cx->out, 0); /* cinfo: not atomic */
	xdr_put_u64(cx->out, before);
	xdr_put_u64(cx->out, after);
	xdr_put_u32(cx->out, 4); /* OPEN4_RESULT_LOCKTYPE_POSIX */
	if (!created) { /* of a file that existed: the size when it was cut, nothing else */
		memset(set, 0, sizeof(set));
		set[0] = cut ? 1u << 4 : 0;
	}
	nfs4_put_bitmap(cx->out, set, 3);
	if (deleg) {
		xdr_put_u32(cx->out, wdeleg ? OPEN_DELEGATE_WRITE : OPEN_DELEGATE_READ);
		nfs4_put_stateid(cx->out, &dsid);
		xdr_put_u32(cx->out, 0); /* recall: false */
		if (wdeleg) { /* space_limit: what the holder may write before flushing */
			xdr_put_u32(cx->out, NFS_LIMIT_SIZE);
			xdr_put_u64(cx->out, limit);
		}
		xdr_put_u32(cx->out, 0); /* permissions: ACE4_ACCESS_ALLOWED_ACE_TYPE, */
		xdr_put_u32(cx->out, 0); /* no flags, */
		xdr_put_u32(cx->out, 0); /* no access the client may assume: it asks ACCESS */
		xdr_put_u32(cx->out, 0); /* who: "" */
	} else if (want == OPEN4_SHARE_ACCESS_WANT_NO_PREFERENCE) {
		xdr_put_u32(cx->out, OPEN_DELEGATE_NONE);
	} else { /* the client said what it wants: why it has none */
		xdr_put_u32(cx->out, OPEN_DELEGATE_NONE_EXT);
		xdr_put_u32(cx->out, why);
		if (why == WND4_CONTENTION || why == WND4_RESOURCE)
			xdr_put_u32(cx->out, 0); /* will push / will signal: never */
	}
	if ((access & OPEN4_SHARE_ACCESS_READ) && !created)
		vol_read_ahead_open(file); /* a frame's head is on its way before its first READ */
	if (file == &obj) {
		vol_obj_cleanup(&cx->cur.obj);
		cx->cur.obj = obj; /* the opened file is the current handle now */
		obj.fd = -1;
		obj.fent = NULL;
		obj.exp = NULL;
	}
	cx->cur.cur_stateid = sid;
out:
	vol_obj_cleanup(&obj);
	return st;
}

uint32_t nfs4_op_close(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_stateid sid, gone = { .seqid = UINT32_MAX };
	struct nfs4_open *o;
	uint32_t st;

	(void)xdr_u32(in); /* seqid */
	nfs4_get_stateid(in, &sid);
	if (in->err)
		return NFS4ERR_BADXDR;
	if (sid.seqid == 1 && other_is(&sid, 0))
		sid = cx->cur.cur_stateid;
	if ((st = check_stateid(cx, sid, 0)) != NFS4_OK)
		return st;
	if ((sid.seqid == 0 && other_is(&sid, 0)) || other_is(&sid, 0xff))
		return NFS4ERR_BAD_STATEID; /* special stateids name no open */
	pthread_mutex_lock(&cx->srv->mu);
	st = cx->sess->clp ? nfs4_open_find(cx->srv, cx->sess->clp, &sid, &o) : NFS4ERR_BADSESSION;
	if (st == NFS4_OK && o->kind != NFS4_ST_OPEN)
		st = NFS4ERR_BAD_STATEID; /* a lock stateid is no open */
	if (st == NFS4_OK)
		nfs4_open_release(cx->srv, o); /* with its lock states and their locks */
	pthread_mutex_unlock(&cx->srv->mu);
	if (st == NFS4_OK)
		nfs4_put_stateid(cx->out, &gone); /* the invalid special stateid (RFC 8881 18.2.4) */
	return st;
}

uint32_t nfs4_op_read(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct ut_buf *out = cx->out;
	struct nfs4_stateid sid;
	struct vol_lock_key k;
	uint64_t off;
	uint32_t count, asked, st;
	size_t got = 0, at, room;
	bool eof = false;
	uint8_t *p;
	int rc;

	nfs4_get_stateid(in, &sid);
	off = xdr_u64(in);
	asked = count = xdr_u32(in);
	if (in->err)
		return NFS4ERR_BADXDR;
	if ((st = file_check(&cx->cur.obj.st)) != NFS4_OK)
		return st == NFS4ERR_WRONG_TYPE ? NFS4ERR_INVAL : st;
	if ((st = check_stateid(cx, sid, 0)) != NFS4_OK)
		return st;
	vol_lock_key_of(&cx->cur.obj, &k);
	if (nfs4_deleg_conflict_read(cx, &k))
		return NFS4ERR_DELAY; /* another client's write delegation is being recalled */
	/* the reply must fit one record: a READ gives what fits (a short read) */
	room = out->max > out->len + 256 ? out->max - out->len - 256 : 0;
	if (count > NFS4_IO_MAX)
		count = NFS4_IO_MAX;
	if (count > room)
		count = (uint32_t)room;
	xdr_put_u32(out, 0);
	xdr_put_u32(out, 0);
	at = out->len;
	if (!(p = ut_buf_put_zero(out, XDR_PAD(count))))
		return NFS4ERR_RESOURCE;
	rc = vol_read(&cx->cur.obj, &cx->cur.ecred, off, p, count, &got, &eof);
	vol_export_settle(cx->cur.obj.exp, asked, rc == 0 ? got : 0);
	if (rc != 0)
		return nfs4_status(rc);
	ut_buf_rewind(out, at + XDR_PAD(got));
	ut_buf_set_be32(out, at - 8, eof);
	ut_buf_set_be32(out, at - 4, (uint32_t)got);
	cx->call->io_bytes += got;
	return NFS4_OK;
}

uint32_t nfs4_op_write(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_stateid sid;
	struct vol_lock_key k;
	struct vol_lease_by by;
	uint64_t off;
	uint32_t stable, len, st;
	const uint8_t *data;
	int committed = 0, rc;

	nfs4_get_stateid(in, &sid);
	off = xdr_u64(in);
	stable = xdr_u32(in);
	data = xdr_opaque(in, NFS4_IO_MAX, &len);
	if (in->err)
		return NFS4ERR_BADXDR;
	if (stable > 2)
		return NFS4ERR_INVAL;
	if ((st = file_check(&cx->cur.obj.st)) != NFS4_OK)
		return st == NFS4ERR_WRONG_TYPE ? NFS4ERR_INVAL : st;
	if ((st = check_stateid(cx, sid, OPEN4_SHARE_ACCESS_WRITE)) != NFS4_OK)
		return st;
	vol_lock_key_of(&cx->cur.obj, &k);
	if (nfs4_deleg_conflict(cx, &k, false))
		return NFS4ERR_DELAY; /* another client's delegation is being recalled */
	nfs4_deleg_by(cx, &by);
	if ((rc = vol_write_by(&cx->cur.obj, &cx->cur.ecred, off, data, len, (int)stable, &committed, &by)) != 0)
		return nfs4_status(rc);
	cx->call->io_bytes += len;
	xdr_put_u32(cx->out, len);
	xdr_put_u32(cx->out, (uint32_t)committed);
	xdr_put_fixed(cx->out, cx->call->wverf, 8);
	return NFS4_OK;
}

uint32_t nfs4_op_commit(struct nfs4_cx *cx, struct xdr_cur *in)
{
	uint32_t st;
	int rc;

	(void)xdr_u64(in);
	(void)xdr_u32(in);
	if (in->err)
		return NFS4ERR_BADXDR;
	if ((st = file_check(&cx->cur.obj.st)) != NFS4_OK)
		return st == NFS4ERR_WRONG_TYPE ? NFS4ERR_INVAL : st;
	if ((rc = vol_commit(&cx->cur.obj, &cx->cur.ecred)) != 0)
		return nfs4_status(rc);
	xdr_put_fixed(cx->out, cx->call->wverf, 8);
	return NFS4_OK;
}

uint32_t nfs4_op_test_stateid(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_stateid sids[64];
	struct nfs4_open *o;
	uint32_t n = xdr_u32(in), i;

	if (n > 64)
		return in->err ? NFS4ERR_BADXDR : NFS4ERR_RESOURCE;
	for (i = 0; i < n; i++)
		nfs4_get_stateid(in, &sids[i]);
	if (in->err)
		return NFS4ERR_BADXDR;
	xdr_put_u32(cx->out, n);
	pthread_mutex_lock(&cx->srv->mu);
	for (i = 0; i < n; i++) {
		uint32_t st = cx->sess->clp ? nfs4_open_find(cx->srv, cx->sess->clp, &sids[i], &o) : NFS4ERR_BADSESSION;

		if (st == NFS4_OK && o->kind == NFS4_ST_DELEG && o->dl && o->dl->revoked)
			st = NFS4ERR_DELEG_REVOKED;
		xdr_put_u32(cx->out, st);
	}
	pthread_mutex_unlock(&cx->srv->mu);
	return NFS4_OK;
}

uint32_t nfs4_op_free_stateid(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_stateid sid;
	struct nfs4_open *o;
	uint32_t st;

	nfs4_get_stateid(in, &sid);
	if (in->err)
		return NFS4ERR_BADXDR;
	pthread_mutex_lock(&cx->srv->mu);
	st = cx->sess->clp ? nfs4_open_find(cx->srv, cx->sess->clp, &sid, &o) : NFS4ERR_BADSESSION;
	/* a lock state goes once it holds no lock; an open is freed by CLOSE */
	if (st == NFS4_OK && o->kind == NFS4_ST_DELEG)
		nfs4_open_release(cx->srv, o); /* a delegation's stateid (a revoked one's, usually) */
	else if (st == NFS4_OK)
		st = o->kind == NFS4_ST_LOCK ? nfs4_lock_free_state(cx->srv, o) : NFS4ERR_LOCKS_HELD;
	pthread_mutex_unlock(&cx->srv->mu);
	return st;
}

/* OPEN_DOWNGRADE (RFC 8881 18.18): the open keeps only the access and deny
 * bits asked for, each a subset of what it holds (NFS4ERR_INVAL
 * otherwise; no access at all is INVAL too), and its reservation in the
 * store's table shrinks with it, so what it no longer denies is allowed to
 * others (SMB included) at once. */
uint32_t nfs4_op_open_downgrade(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_stateid sid;
	struct nfs4_open *o;
	uint32_t access, deny, st;

	nfs4_get_stateid(in, &sid);
	(void)xdr_u32(in); /* seqid: unused in v4.1 */
	access = xdr_u32(in);
	deny = xdr_u32(in);
	if (in->err)
		return NFS4ERR_BADXDR;
	if (sid.seqid == 1 && other_is(&sid, 0))
		sid = cx->cur.cur_stateid;
	if ((sid.seqid == 0 && other_is(&sid, 0)) || other_is(&sid, 0xff))
		return NFS4ERR_BAD_STATEID; /* special stateids name no open */
	if ((st = check_stateid(cx, sid, 0)) != NFS4_OK)
		return st;
	if ((access & ~0xff03u) || (access & OPEN4_SHARE_ACCESS_MASK) == 0 || (deny & ~(uint32_t)OPEN4_SHARE_DENY_MASK))
		return NFS4ERR_INVAL;
	access &= OPEN4_SHARE_ACCESS_MASK;
	pthread_mutex_lock(&cx->srv->mu);
	st = cx->sess->clp ? nfs4_open_find(cx->srv, cx->sess->clp, &sid, &o) : NFS4ERR_BADSESSION;
	if (st == NFS4_OK && o->kind != NFS4_ST_OPEN)
		st = NFS4ERR_BAD_STATEID;
	if (st == NFS4_OK && ((access & ~o->access) || (deny & ~o->deny)))
		st = NFS4ERR_INVAL; /* an upgrade is OPEN's business */
	if (st == NFS4_OK && !cx->srv->locks)
		cx->srv->locks = vol_store_locks(cx->call->store);
	if (st == NFS4_OK)
		st = share(cx->srv, o, &o->lkey, access, deny);
	if (st == NFS4_OK) {
		o->seqid++;
		nfs4_open_stateid(cx->srv, o, &sid);
	}
	pthread_mutex_unlock(&cx->srv->mu);
	if (st == NFS4_OK) {
		nfs4_put_stateid(cx->out, &sid);
		cx->cur.cur_stateid = sid;
	}
	return st;
}
