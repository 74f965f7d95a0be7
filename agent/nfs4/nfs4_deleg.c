/* nfs4_deleg: read and write delegations (RFC 8881 section 10.4): the
 * grant, the conflict checks that recall them, DELEGRETURN, and the
 * backchannel's set-up (CB_NULL probe asked for, BACKCHANNEL_CTL). The
 * backchannel thread that sends the recalls and CB_GETATTRs, revokes late
 * delegations and takes the client's replies is nfs4_recall.c.
 *
 * A delegation is a state entry (kind NFS4_ST_DELEG, its stateid's) holding
 * a grant of R|H in the store's cached-open table (agent/vol/vol_lease.h),
 * group nfs4_deleg_group(client), made with recall_on_open_w: the one table
 * SMB leases live in, so every front end's conflicting access breaks it:
 * a store write or size change from NFSv3, SMB or another v4.1 client
 * (vol_write / vol_setattr break R, which takes the whole grant), an SMB open
 * for writing and a v4.1 OPEN for writing (VOL_LEASE_OPEN_W). The break
 * calls deleg_brk under the table's mutex: it only flags the delegation and
 * wakes the backchannel thread (nfs4_recall.c), which sends a CB_COMPOUND (CB_SEQUENCE on
 * the session's one backchannel slot, then CB_RECALL) on the session's
 * backchannel connection. Breakers wait as for an SMB lease break: NFSv3 and
 * SMB in the store (vol_lease_break; a REMOVE or RENAME of the name from
 * NFSv3, SMB's rename, delete disposition and delete-on-close CREATE too),
 * a v4.1 caller gets NFS4ERR_DELAY (nfs4_deleg_conflict) and retries.
 * Timeouts agree: the revocation comes first. The grant's revoke_ms (two
 * leases and a second) is longer than the lease time after the recall at
 * which this file revokes it, so a waiter in the store (whose own break
 * timeout, 35 s, applies to SMB leases) never gives up before the
 * delegation is revoked, and proceeds as soon as it is. DELEGRETURN
 * drops the grant (the waiters go on). A delegation not returned within the
 * lease time after its recall was sent is revoked: its grant is dropped, its
 * client's SEQUENCE results carry SEQ4_STATUS_RECALLABLE_STATE_REVOKED until
 * it frees the stateid (FREE_STATEID or DELEGRETURN: NFS4ERR_DELEG_REVOKED),
 * and the stateid answers NFS4ERR_DELEG_REVOKED. A grant the store revoked
 * (a waiting NFSv3 or SMB writer's timeout) is noticed by the same thread.
 *
 * Given only when safe: an OPEN for reading only, by a client whose session
 * has a backchannel, of a file nobody else has open for writing (the store's
 * share table) and whose cached opens are not being broken; at most one per
 * client and file; OPEN's want bits may ask for none or say why none was
 * given (nfs4_io.c, WND4_*).
 *
 * Write delegations: the same entry holding R|W|H made with recall_on_access,
 * given to an OPEN for writing (or WANT_WRITE_DELEG) when the file has no
 * other open at all: no reservation of another client or protocol in the
 * share table, no other open owner of this client; and none on a set-uid /
 * set-gid file (nfs4_setid_file, checked by OPEN), whose bits the holder's
 * SETATTR cannot give it without the recall (nfs4_deleg_conflict_setid). Any break of another
 * group takes the whole grant, VOL_LEASE_ACCESS included, which reads pass:
 * nfs4_deleg_conflict_read (another client's OPEN for reading, READ,
 * GETATTR of what the holder caches, a SETATTR), vol_lease_access (NFSv3 and
 * NLM through nfs_call_recall). Recall, waiting and revocation are the read
 * delegation's: this file does not care which kind it recalls. The holder
 * writes back before DELEGRETURN; the DELEGRETURN drops the grant and the
 * waiters go on, then read what it wrote. A GETATTR of another client or
 * NFSv3 asks first (vol_lease_ask -> deleg_ask): the backchannel thread
 * sends a CB_GETATTR of change and size when the session's backchannel slot
 * is free and no recall waits for it (cb_ask_next), and the reply goes to the
 * askers (cb_ask_answer, vol_lease_answer); unanswered within half a lease
 * (CB_ASK_MAX_MS at most), the askers recall. A reply whose CB_SEQUENCE
 * does not echo the call's session, sequence and slot answers nothing: the
 * call failed as a lost one (cb_reply_stray).
 *
 * The backchannel is probed: every backchannel set up or changed
 * (nfs4_deleg_back, BACKCHANNEL_CTL) gets a CB_NULL from the backchannel
 * thread; no answer within half a lease (at most CB_PROBE_MAX_MS), a
 * refusal, or a send that fails marks it down: no delegation is given over
 * it, recalls find no path, SEQUENCE says CB_PATH_DOWN(_SESSION)
 * (nfs4_deleg_seq_flags) until a rebind (which moves a down backchannel even
 * with CDFC4_FORE_OR_BOTH) is probed and answers.
 *
 * Locks: s->mu, then the table's mutex (vol_lease_grant / drop under s->mu);
 * deleg_brk runs under the table's mutex and takes only cb_mu.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/nfs/rpc.h"
#include "util/ut_log.h"

uint64_t nfs4_deleg_group(const struct nfs4_client *c)
{
	return 1ull << 63 | c->id; /* apart from SMB's groups (a counter from 1) */
}

/* Under the table's mutex: flag and wake, nothing more (vol_lease.h). */
static void deleg_brk(struct vol_lease *l, unsigned lost)
{
	struct nfs4_deleg *dl = l->arg;
	struct nfs4_srv *s = dl->srv;

	(void)lost;
	__atomic_store_n(&dl->wanted, true, __ATOMIC_RELEASE);
	nfs4_cb_kick(s);
}

struct nfs4_session *nfs4_deleg_back_session(struct nfs4_client *c)
{
	for (struct nfs4_session *se = c->sessions; se; se = se->next)
		if (se->back && se->cb_prog && se->cb_state != NFS4_CB_DOWN)
			return se;
	return NULL;
}

/* Under the table's mutex: another client or protocol asks the holder of
 * a write delegation for the file's size and change (vol_lease_ask): the
 * backchannel thread sends the CB_GETATTR. Flag and wake only. */
static void deleg_ask(struct vol_lease *l)
{
	struct nfs4_deleg *dl = l->arg;
	struct nfs4_srv *s = dl->srv;

	__atomic_store_n(&dl->ask, true, __ATOMIC_RELEASE);
	nfs4_cb_kick(s);
}

static bool has_deleg(const struct nfs4_client *c, const struct vol_fh *fh)
{
	for (const struct nfs4_open *o = c->opens; o; o = o->next)
		if (o->kind == NFS4_ST_DELEG && o->fh.len == fh->len && !memcmp(o->fh.data, fh->data, fh->len))
			return true;
	return false;
}

/* Whether c has an open of fh other than o (another open owner of it). */
static bool other_open(const struct nfs4_client *c, const struct nfs4_open *o)
{
	for (const struct nfs4_open *x = c->opens; x; x = x->next)
		if (x != o && x->kind == NFS4_ST_OPEN && x->access && x->fh.len == o->fh.len &&
		    !memcmp(x->fh.data, o->fh.data, o->fh.len))
			return true;
	return false;
}

/* Whether c holds a write delegation (not revoked) on k; owner not NULL:
 * one taken by an open owner other than (owner, olen). */
static bool has_wdeleg_of(const struct nfs4_client *c, const struct vol_lock_key *k, const uint8_t *owner,
			  uint32_t olen)
{
	for (const struct nfs4_open *o = c->opens; o; o = o->next)
		if (o->kind == NFS4_ST_DELEG && o->dl && !o->dl->revoked && o->dl->lease.recall_on_access &&
		    o->lkey.fsid == k->fsid && o->lkey.dev == k->dev && o->lkey.ino == k->ino &&
		    (!owner || o->owner_len != olen || memcmp(o->owner, owner, olen) != 0))
			return true;
	return false;
}

static bool has_wdeleg(const struct nfs4_client *c, const struct vol_lock_key *k)
{
	return has_wdeleg_of(c, k, NULL, 0);
}

bool nfs4_deleg_grant(struct nfs4_cx *cx, struct nfs4_open *o, const struct vol_lock_key *k, uint32_t access,
		      bool write, uint64_t change, uint32_t *why, struct nfs4_stateid *sid)
{
	struct nfs4_srv *s = cx->srv;
	struct nfs4_client *c = o->clp;
	struct nfs4_open *d = NULL;
	struct nfs4_deleg *dl = NULL;
	struct vol_lock_owner lo = nfs4_lock_owner(s, o);

	*why = WND4_RESOURCE;
	if ((!write && access != OPEN4_SHARE_ACCESS_READ) || !nfs4_deleg_back_session(c) || !s->store)
		return false;
	*why = WND4_CONTENTION;
	if (has_deleg(c, &o->fh))
		return false;
	/* read: nobody, this client's other opens included (another mount of it
	 * with nosharecache caches apart), has it open for writing; write: no
	 * other open at all, of any client or protocol (RFC 8881 10.4) */
	if (!write && vol_lock_share_held(s->locks, k, 0, UINT64_MAX, VOL_SHARE_WRITE))
		return false;
	if (write && (vol_lock_share_held(s->locks, k, lo.proto, lo.client, VOL_SHARE_READ | VOL_SHARE_WRITE) ||
		      other_open(c, o)))
		return false;
	if (vol_lease_breaking(s->store, k, 0))
		return false;
	*why = WND4_RESOURCE;
	if (!nfs4_cb_start(s, cx->call->srv))
		return false;
	if (!(dl = calloc(1, sizeof(*dl))) ||
	    !(d = nfs4_state_alloc(s, c, NFS4_ST_DELEG, o->owner, o->owner_len, &o->fh)))
		goto fail;
	dl->srv = s;
	dl->store = s->store;
	dl->lease.key = *k;
	dl->lease.group = nfs4_deleg_group(c);
	dl->lease.brk = deleg_brk;
	dl->lease.arg = dl;
	dl->lease.recall_on_open_w = true;
	dl->lease.recall_on_access = write; /* any access of another client or protocol recalls it */
	/* the store's waiters (NFSv3, SMB) wait for our revocation, never give
	 * up before it: it comes a lease after the recall went out, which a
	 * busy backchannel slot may delay by up to a lease; the store revokes
	 * itself only past that (a backstop) */
	dl->lease.revoke_ms = 2u * s->lease_s * 1000u + 5u * NFS4_CB_TICK_MS;
	if (write) { /* a GETATTR of another client asks the holder (CB_GETATTR) before it recalls */
		dl->lease.ask = deleg_ask;
		dl->lease.ask_ms = s->lease_s * 1000u / 2u < NFS4_CB_ASK_MAX_MS ? s->lease_s * 1000u / 2u : NFS4_CB_ASK_MAX_MS;
		dl->change_seen = change;
	}
	d->dl = dl;
	d->lkey = *k;
	/* READ (and, for a write delegation, WRITE) may use its stateid */
	d->access = write ? OPEN4_SHARE_ACCESS_BOTH : OPEN4_SHARE_ACCESS_READ;
	if (vol_lease_grant(s->store, &dl->lease, VOL_LEASE_R | VOL_LEASE_H | (write ? VOL_LEASE_W : 0)) != 0)
		goto fail;
	s->ndelegs++;
	d->seqid = 1;
	nfs4_open_stateid(s, d, sid);
	return true;
fail:
	if (d) {
		d->dl = NULL;
		nfs4_open_release(s, d);
	}
	free(dl);
	return false;
}

uint64_t nfs4_deleg_client_group(struct nfs4_cx *cx)
{
	uint64_t group;

	pthread_mutex_lock(&cx->srv->mu);
	group = cx->sess && cx->sess->clp ? nfs4_deleg_group(cx->sess->clp) : 0;
	pthread_mutex_unlock(&cx->srv->mu);
	return group;
}

void nfs4_deleg_by(struct nfs4_cx *cx, struct vol_lease_by *by)
{
	by->group = nfs4_deleg_client_group(cx);
	by->nowait = true;
}

bool nfs4_deleg_conflict(struct nfs4_cx *cx, const struct vol_lock_key *k, bool open_w)
{
	uint64_t group = 0;

	if (!cx->call->store || !vol_lease_count(cx->call->store))
		return false;
	/* an open for writing (or a REMOVE, a RENAME) recalls the caller's own
	 * delegations too: a client caches per mount (Linux's nosharecache
	 * mounts share one client id), so its own writer would not tell its
	 * own delegated reader; its WRITEs and SETATTRs then come under the
	 * recalled open and need not */
	pthread_mutex_lock(&cx->srv->mu);
	/* ... except its own write delegation: it holds no other delegation on
	 * the file then, and its opens are made under it */
	if (cx->sess && cx->sess->clp && (!open_w || has_wdeleg(cx->sess->clp, k)))
		group = nfs4_deleg_group(cx->sess->clp);
	pthread_mutex_unlock(&cx->srv->mu);
	return vol_lease_contend(cx->call->store, k,
				 open_w ? VOL_LEASE_OPEN_W : VOL_LEASE_R | VOL_LEASE_W, group);
}

bool nfs4_deleg_conflict_owner(struct nfs4_cx *cx, const struct vol_lock_key *k, const uint8_t *owner, uint32_t olen)
{
	bool other = false;

	if (!cx->call->store || !vol_lease_count(cx->call->store))
		return false;
	pthread_mutex_lock(&cx->srv->mu);
	other = cx->sess && cx->sess->clp && has_wdeleg_of(cx->sess->clp, k, owner, olen);
	pthread_mutex_unlock(&cx->srv->mu);
	/* its own write delegation, taken by another open owner: another mount
	 * of the client (nosharecache) caching apart, whose dirty data this open
	 * must see: recalled as another client's would be */
	return other && vol_lease_contend(cx->call->store, k, VOL_LEASE_ACCESS, 0);
}

bool nfs4_setid_file(mode_t mode)
{
	return S_ISREG(mode) && (mode & (S_ISUID | S_ISGID)) != 0;
}

bool nfs4_deleg_conflict_setid(struct nfs4_cx *cx, const struct vol_lock_key *k)
{
	bool own;

	if (!cx->call->store || !vol_lease_count(cx->call->store))
		return false;
	pthread_mutex_lock(&cx->srv->mu);
	own = cx->sess && cx->sess->clp && has_wdeleg(cx->sess->clp, k);
	pthread_mutex_unlock(&cx->srv->mu);
	/* Linux truncates under its write delegation with the delegation's
	 * credential, whoever truncates: the store could not clear set-uid or
	 * set-gid for the user who did (see nfs4_setid_file) */
	return own && vol_lease_contend(cx->call->store, k, VOL_LEASE_ACCESS, 0);
}

bool nfs4_deleg_conflict_read(struct nfs4_cx *cx, const struct vol_lock_key *k)
{
	uint64_t group = 0;

	if (!cx->call->store || !vol_lease_count(cx->call->store))
		return false;
	pthread_mutex_lock(&cx->srv->mu);
	if (cx->sess && cx->sess->clp)
		group = nfs4_deleg_group(cx->sess->clp);
	pthread_mutex_unlock(&cx->srv->mu);
	return vol_lease_contend(cx->call->store, k, VOL_LEASE_ACCESS, group);
}

void nfs4_deleg_release(struct nfs4_srv *s, struct nfs4_open *o)
{
	struct nfs4_deleg *dl = o->dl;

	if (!dl)
		return;
	vol_lease_drop(dl->store, &dl->lease);
	if (!dl->revoked && s->ndelegs)
		s->ndelegs--;
	if (dl->revoked && o->clp && o->clp->nrevoked)
		o->clp->nrevoked--;
	free(dl);
	o->dl = NULL;
}

bool nfs4_deleg_revoked(const struct nfs4_client *c)
{
	return c->nrevoked != 0;
}

uint32_t nfs4_deleg_seq_flags(const struct nfs4_session *se)
{
	uint32_t f = se->clp && se->clp->nrevoked ? SEQ4_STATUS_RECALLABLE_STATE_REVOKED : 0;
	bool down = false;

	if (se->cb_state == NFS4_CB_DOWN)
		f |= SEQ4_STATUS_CB_PATH_DOWN_SESSION;
	if (!se->clp)
		return f;
	for (const struct nfs4_session *x = se->clp->sessions; x; x = x->next) {
		if (x->dead || !x->back)
			continue;
		if (x->cb_state != NFS4_CB_DOWN)
			return f; /* a backchannel that may work */
		down = true;
	}
	return down ? f | SEQ4_STATUS_CB_PATH_DOWN : f;
}

void nfs4_deleg_probe(struct nfs4_cx *cx, struct nfs4_session *se)
{
	struct nfs4_srv *s = cx->srv;

	if (!se->back || !se->cb_prog || se->cb_flavor == UINT32_MAX)
		return;
	se->cb_state = NFS4_CB_PROBE;
	if (nfs4_cb_start(s, cx->call->srv))
		nfs4_cb_kick(s);
}

bool nfs4_deleg_back(struct nfs4_cx *cx, struct nfs4_session *se)
{
	struct nfs_conn *c = nfs_call_conn_hold(cx->call);

	if (!c)
		return false; /* no connection to call back on (not served by an NFS server) */
	nfs_conn_put(se->back);
	se->back = c;
	nfs4_deleg_probe(cx, se); /* a CB_NULL tells whether it works */
	return true;
}

void nfs4_deleg_back_drop(struct nfs4_session *se)
{
	nfs_conn_put(se->back);
	se->back = NULL;
}

void nfs4_cb_sec(struct xdr_cur *in, uint32_t *flavor)
{
	uint32_t n = xdr_u32(in), i, l, k;

	*flavor = UINT32_MAX;
	if (n > 16) {
		in->err = -EBADMSG;
		return;
	}
	for (i = 0; i < n && !in->err; i++) {
		uint32_t f = xdr_u32(in);

		if (f == RPC_AUTH_SYS) {
			(void)xdr_u32(in);
			(void)xdr_opaque(in, RPC_MAX_MACHINE, &l);
			(void)xdr_u64(in);
			k = xdr_u32(in);
			if (k > RPC_MAX_GIDS)
				in->err = -EBADMSG;
			else
				(void)xdr_fixed(in, 4 * (size_t)k);
		} else if (f == 6) { /* RPCSEC_GSS: not spoken on the backchannel yet */
			(void)xdr_u32(in);
			(void)xdr_opaque(in, NFS4_OPAQUE_LIMIT, &l);
			(void)xdr_opaque(in, NFS4_OPAQUE_LIMIT, &l);
			continue;
		} else if (f != RPC_AUTH_NONE) {
			in->err = -EBADMSG;
			return;
		}
		if (*flavor == UINT32_MAX)
			*flavor = f;
	}
}

uint32_t nfs4_op_backchannel_ctl(struct nfs4_cx *cx, struct xdr_cur *in)
{
	uint32_t prog = xdr_u32(in), flavor;

	nfs4_cb_sec(in, &flavor);
	if (in->err)
		return NFS4ERR_BADXDR;
	if (flavor == UINT32_MAX)
		return NFS4ERR_INVAL; /* no flavor we can call back with */
	pthread_mutex_lock(&cx->srv->mu);
	cx->sess->cb_prog = prog;
	cx->sess->cb_flavor = flavor;
	nfs4_deleg_probe(cx, cx->sess); /* with what it names now */
	pthread_mutex_unlock(&cx->srv->mu);
	return NFS4_OK;
}

uint32_t nfs4_op_delegreturn(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_stateid sid;
	struct nfs4_open *o;
	uint32_t st;

	nfs4_get_stateid(in, &sid);
	if (in->err)
		return NFS4ERR_BADXDR;
	if (!cx->cur.set)
		return NFS4ERR_NOFILEHANDLE;
	pthread_mutex_lock(&cx->srv->mu);
	st = cx->sess->clp ? nfs4_open_find(cx->srv, cx->sess->clp, &sid, &o) : NFS4ERR_BADSESSION;
	if (st == NFS4_OK && o->kind != NFS4_ST_DELEG)
		st = NFS4ERR_BAD_STATEID;
	if (st == NFS4_OK) {
		if (o->dl && o->dl->revoked)
			st = NFS4ERR_DELEG_REVOKED; /* RFC 8881 18.30.3: and it is gone now */
		nfs4_open_release(cx->srv, o); /* the grant goes: breakers waiting on it go on */
	}
	pthread_mutex_unlock(&cx->srv->mu);
	return st;
}
