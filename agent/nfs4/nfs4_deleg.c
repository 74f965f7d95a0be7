/* nfs4_deleg: read and write delegations (RFC 8881 section 10.4) and the
 * backchannel that recalls them.
 *
 * A delegation is a state entry (kind NFS4_ST_DELEG, its stateid's) holding
 * a grant of R|H in the store's cached-open table (agent/vol/vol_lease.h),
 * group nfs4_deleg_group(client), made with recall_on_open_w: the one table
 * SMB leases live in, so every front end's conflicting access breaks it:
 * a store write or size change from NFSv3, SMB or another v4.1 client
 * (vol_write / vol_setattr break R, which takes the whole grant), an SMB open
 * for writing and a v4.1 OPEN for writing (VOL_LEASE_OPEN_W). The break
 * calls deleg_brk under the table's mutex: it only flags the delegation and
 * wakes the backchannel thread, which sends a CB_COMPOUND (CB_SEQUENCE on
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

#define CB_TICK_MS 200u /* the backchannel thread looks at recalls this often */
#define CB_PROBE_MAX_MS 10000u /* a CB_NULL unanswered this long (or half a lease): the path is down */
#define CB_ASK_MAX_MS 5000u    /* a CB_GETATTR unanswered this long (or half a lease): recalled instead */

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
	pthread_mutex_lock(&s->cb_mu);
	s->cb_kick = true;
	pthread_cond_signal(&s->cb_cv);
	pthread_mutex_unlock(&s->cb_mu);
}

/* A session of c whose backchannel may work (its probe not found it down). */
static struct nfs4_session *back_session(struct nfs4_client *c)
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
	pthread_mutex_lock(&s->cb_mu);
	s->cb_kick = true;
	pthread_cond_signal(&s->cb_cv);
	pthread_mutex_unlock(&s->cb_mu);
}

static bool has_deleg(const struct nfs4_client *c, const struct vol_fh *fh)
{
	for (const struct nfs4_open *o = c->opens; o; o = o->next)
		if (o->kind == NFS4_ST_DELEG && o->fh.len == fh->len && !memcmp(o->fh.data, fh->data, fh->len))
			return true;
	return false;
}

static void *cb_main(void *arg);

/* Start the backchannel thread once (under s->mu). */
static bool cb_start(struct nfs4_srv *s, struct nfs_srv *nsrv)
{
	bool ok;

	pthread_mutex_lock(&s->cb_mu);
	if (!s->cb_started && !s->cb_stopped) {
		s->nsrv = nsrv;
		s->cb_started = pthread_create(&s->cb_thr, NULL, cb_main, s) == 0;
	}
	ok = s->cb_started && !s->cb_stopped;
	pthread_mutex_unlock(&s->cb_mu);
	return ok;
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

/* Whether c holds a write delegation (not revoked) on k. */
static bool has_wdeleg(const struct nfs4_client *c, const struct vol_lock_key *k)
{
	for (const struct nfs4_open *o = c->opens; o; o = o->next)
		if (o->kind == NFS4_ST_DELEG && o->dl && !o->dl->revoked && o->dl->lease.recall_on_access &&
		    o->lkey.fsid == k->fsid && o->lkey.dev == k->dev && o->lkey.ino == k->ino)
			return true;
	return false;
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
	if ((!write && access != OPEN4_SHARE_ACCESS_READ) || !back_session(c) || !s->store)
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
	if (!cb_start(s, cx->call->srv))
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
	dl->lease.revoke_ms = 2u * s->lease_s * 1000u + 5u * CB_TICK_MS;
	if (write) { /* a GETATTR of another client asks the holder (CB_GETATTR) before it recalls */
		dl->lease.ask = deleg_ask;
		dl->lease.ask_ms = s->lease_s * 1000u / 2u < CB_ASK_MAX_MS ? s->lease_s * 1000u / 2u : CB_ASK_MAX_MS;
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
	if (cx->sess && cx->sess->clp)
		for (const struct nfs4_open *o = cx->sess->clp->opens; o && !other; o = o->next)
			other = o->kind == NFS4_ST_DELEG && o->dl && !o->dl->revoked && o->dl->lease.recall_on_access &&
				o->lkey.fsid == k->fsid && o->lkey.dev == k->dev && o->lkey.ino == k->ino &&
				(o->owner_len != olen || memcmp(o->owner, owner, olen) != 0);
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
	if (!cb_start(s, cx->call->srv))
		return;
	pthread_mutex_lock(&s->cb_mu);
	s->cb_kick = true;
	pthread_cond_signal(&s->cb_cv);
	pthread_mutex_unlock(&s->cb_mu);
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

/* ---------- the backchannel thread ---------- */

struct cb_out {
	struct nfs_conn *conn;       /* held */
	struct ut_buf rec;
	uint32_t probe_xid;          /* a CB_NULL probe's (0: a CB_COMPOUND) */
};

/* The probe time: a backchannel that has not answered its CB_NULL in it is down. */
static uint64_t probe_ns(const struct nfs4_srv *s)
{
	uint64_t ms = (uint64_t)s->lease_s * 1000u / 2u;

	return (ms < CB_PROBE_MAX_MS ? ms : CB_PROBE_MAX_MS) * 1000000ull;
}

/* One session's probe (under s->mu): a CB_NULL into *out to send, or a
 * probe that went unanswered found down. Whether *out was filled. */
static bool cb_probe(struct nfs4_srv *s, struct nfs4_session *se, uint64_t now, struct cb_out *out)
{
	if (se->cb_state == NFS4_CB_PROBING && now - se->cb_null_ns > probe_ns(s)) {
		UT_WARN("nfs4", NULL, "a client's backchannel did not answer CB_NULL: down (CB_PATH_DOWN)");
		se->cb_state = NFS4_CB_DOWN;
	}
	if (se->cb_state != NFS4_CB_PROBE || !se->back)
		return false;
	se->cb_state = NFS4_CB_PROBING;
	se->cb_null_ns = now;
	se->cb_null_xid = s->cb_next_xid++;
	if (!se->cb_null_xid) /* 0 marks a CB_COMPOUND in cb_out */
		se->cb_null_xid = s->cb_next_xid++;
	ut_buf_init(&out->rec, 512);
	nfs4_cb_encode_null(&out->rec, se->cb_null_xid, se->cb_prog, se->cb_flavor);
	out->conn = nfs_conn_hold(se->back);
	out->probe_xid = se->cb_null_xid;
	return true;
}

/* A probe could not be sent: its session's backchannel is down. */
static void cb_probe_failed(struct nfs4_srv *s, uint32_t xid)
{
	pthread_mutex_lock(&s->mu);
	for (struct nfs4_client *c = s->clients; c; c = c->next)
		for (struct nfs4_session *se = c->sessions; se; se = se->next)
			if (se->cb_state == NFS4_CB_PROBING && se->cb_null_xid == xid)
				se->cb_state = NFS4_CB_DOWN;
	pthread_mutex_unlock(&s->mu);
}

/* Revoke o's delegation (under s->mu): the grant goes, the stateid stays
 * for its client to free. */
static void deleg_revoke(struct nfs4_srv *s, struct nfs4_open *o, const char *why)
{
	struct nfs4_deleg *dl = o->dl;

	UT_WARN("nfs4", NULL, "a delegation was revoked: %s", why);
	vol_lease_drop(dl->store, &dl->lease);
	dl->revoked = true;
	o->clp->nrevoked++;
	if (s->ndelegs)
		s->ndelegs--;
}

/* The write delegation of c whose holder is to be asked for its
 * attributes (the ask taken), its stateid kept in se for the answer; NULL
 * when none (under s->mu). Asks of delegations being recalled are dropped:
 * their askers recall. */
static struct nfs4_open *cb_ask_next(struct nfs4_srv *s, struct nfs4_client *c, struct nfs4_session *se)
{
	for (struct nfs4_open *o = c->opens; o; o = o->next) {
		struct nfs4_deleg *dl = o->dl;

		if (o->kind != NFS4_ST_DELEG || !dl || dl->revoked || !__atomic_load_n(&dl->ask, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&dl->ask, false, __ATOMIC_RELEASE);
		if (dl->recalling)
			continue;
		nfs4_open_stateid(s, o, &se->cb_ga_sid);
		return o;
	}
	return NULL;
}

/* The holder's answer to a CB_GETATTR sent in se (under s->mu): to the
 * askers waiting in the store. A change attribute other than the last one
 * heard means its cached writes changed the file: from now on the file's
 * mtime and ctime are at least now (other clients see a new change). */
static void cb_ask_answer(struct nfs4_srv *s, struct nfs4_session *se, const struct nfs4_cb_res *r)
{
	struct nfs4_open *o;
	struct nfs4_deleg *dl;
	struct vol_lease_attr a;
	struct timespec now;

	if (!se->clp || nfs4_open_find(s, se->clp, &se->cb_ga_sid, &o) != NFS4_OK || !(dl = o->dl) || dl->revoked)
		return; /* returned meanwhile: its askers read the store */
	if (!r->accepted || r->status != NFS4_OK || !r->ga_ok || !r->ga_size) {
		UT_INFO("nfs4", NULL, "CB_GETATTR not answered with a size (status %u): the askers recall", r->status);
		vol_lease_answer(dl->store, &dl->lease, NULL);
		return;
	}
	if (r->ga_change && r->change != dl->change_seen) {
		dl->change_seen = r->change;
		clock_gettime(CLOCK_REALTIME, &now);
		dl->mod_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	}
	a.size = r->size;
	a.mtime_ns = dl->mod_ns;
	vol_lease_answer(dl->store, &dl->lease, &a);
}

/* One client's recalls to send and late ones to revoke (under s->mu); a
 * CB_COMPOUND for it into *out when there is one to send. */
static void cb_client(struct nfs4_srv *s, struct nfs4_client *c, uint64_t now, struct cb_out *out)
{
	struct nfs4_cb_recall r[NFS4_CB_MAX_RECALLS];
	struct nfs4_deleg *sent[NFS4_CB_MAX_RECALLS];
	struct nfs4_session *se = back_session(c);
	uint64_t lease_ns = (uint64_t)s->lease_s * 1000000000ull;
	struct nfs4_open *ga = NULL;
	uint32_t n = 0;

	if (se && se->cb_busy && now - se->cb_sent_ns > lease_ns)
		se->cb_busy = se->cb_ga = false; /* no reply in a lease: the slot is free again */
	for (struct nfs4_open *o = c->opens; o; o = o->next) {
		struct nfs4_deleg *dl = o->dl;

		if (o->kind != NFS4_ST_DELEG || !dl || dl->revoked)
			continue;
		if (dl->recalling && now - dl->recall_ns > lease_ns) {
			deleg_revoke(s, o, "not returned within the lease time of its recall");
			continue;
		}
		if (!vol_lease_held(dl->store, &dl->lease)) {
			deleg_revoke(s, o, "a writer's wait for its return timed out");
			continue;
		}
		if (dl->recalling ? !dl->resend : !__atomic_load_n(&dl->wanted, __ATOMIC_ACQUIRE))
			continue;
		if (!se) { /* nowhere to send it: revoked when the lease time passed */
			if (!dl->recalling)
				dl->recall_ns = now;
			dl->recalling = true;
			dl->resend = false;
			continue;
		}
		if (se->cb_busy || n == NFS4_CB_MAX_RECALLS)
			continue; /* the next round */
		if (!dl->recalling) /* a resend keeps the first recall's clock */
			dl->recall_ns = now;
		dl->recalling = true;
		dl->resend = false;
		nfs4_open_stateid(s, o, &r[n].sid);
		r[n].fh = o->fh;
		sent[n++] = dl;
	}
	if (!n && (!se || se->cb_busy || !(ga = cb_ask_next(s, c, se))))
		return;
	se->cb_busy = true;
	se->cb_ga = !n;
	se->cb_sent_ns = now;
	if (!se->cb_seq_keep)
		se->cb_seq++;
	se->cb_seq_keep = false;
	se->cb_xid = s->cb_next_xid++;
	for (uint32_t i = 0; i < n; i++)
		sent[i]->cb_xid = se->cb_xid;
	ut_buf_init(&out->rec, 4096 + (n ? n : 1) * (NFS4_FH_MAX + 64));
	nfs4_cb_encode(&out->rec, se->cb_xid, se->cb_prog, se->cb_flavor, se->id, se->cb_seq, r, n,
		       n ? NULL : &ga->fh);
	out->conn = nfs_conn_hold(se->back);
}

/* One round: recalls out, late ones revoked. */
static void cb_round(struct nfs4_srv *s)
{
	struct cb_out outs[32];
	size_t nout = 0, i;
	uint64_t now = nfs4_now_ns();

	pthread_mutex_lock(&s->mu);
	for (struct nfs4_client *c = s->clients; c && nout < 32; c = c->next)
		for (struct nfs4_session *se = c->sessions; se && nout < 32; se = se->next) {
			memset(&outs[nout], 0, sizeof(outs[nout]));
			if (cb_probe(s, se, now, &outs[nout]))
				nout++;
		}
	if (s->store)
		for (struct nfs4_client *c = s->clients; c && nout < 32; c = c->next) {
			memset(&outs[nout], 0, sizeof(outs[nout]));
			cb_client(s, c, now, &outs[nout]);
			if (outs[nout].conn)
				nout++;
		}
	pthread_mutex_unlock(&s->mu);
	for (i = 0; i < nout; i++) {
		int rc = nfs_conn_send_call(s->nsrv, outs[i].conn, &outs[i].rec);

		if (rc != 0 && outs[i].probe_xid) {
			UT_WARN("nfs4", NULL, "a CB_NULL could not be sent (%d): the backchannel is down", rc);
			cb_probe_failed(s, outs[i].probe_xid);
		} else if (rc != 0) {
			UT_WARN("nfs4", NULL, "a CB_RECALL could not be sent (%d): revoked at the lease time", rc);
		}
		nfs_conn_put(outs[i].conn);
	}
}

static void *cb_main(void *arg)
{
	struct nfs4_srv *s = arg;
	struct timespec until;

	pthread_mutex_lock(&s->cb_mu);
	while (!s->cb_stopped) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += (long)CB_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!s->cb_kick && !s->cb_stopped)
			if (pthread_cond_timedwait(&s->cb_cv, &s->cb_mu, &until) == ETIMEDOUT)
				break;
		if (s->cb_stopped)
			break;
		s->cb_kick = false;
		pthread_mutex_unlock(&s->cb_mu);
		cb_round(s);
		pthread_mutex_lock(&s->cb_mu);
	}
	pthread_mutex_unlock(&s->cb_mu);
	return NULL;
}

void nfs4_cb_stop(void *ctx)
{
	struct nfs4_srv *s = ctx;
	bool join;

	pthread_mutex_lock(&s->cb_mu);
	join = s->cb_started && !s->cb_stopped;
	s->cb_stopped = true;
	pthread_cond_signal(&s->cb_cv);
	pthread_mutex_unlock(&s->cb_mu);
	if (join)
		pthread_join(s->cb_thr, NULL);
}

/* The answer to a CB_NULL probe, when rec is one (under s->mu). */
static bool cb_probe_reply(struct nfs4_srv *s, uint64_t conn_id, const uint8_t *rec, size_t len)
{
	uint32_t xid;
	bool ok;

	if (len < 4)
		return false;
	xid = (uint32_t)rec[0] << 24 | (uint32_t)rec[1] << 16 | (uint32_t)rec[2] << 8 | rec[3];
	for (struct nfs4_client *c = s->clients; c; c = c->next)
		for (struct nfs4_session *se = c->sessions; se; se = se->next)
			/* a late answer (found down meanwhile) still brings it up */
			if ((se->cb_state == NFS4_CB_PROBING || se->cb_state == NFS4_CB_DOWN) && se->cb_null_xid == xid &&
			    se->cb_null_xid && se->back &&
			    nfs_conn_id(se->back) == conn_id) {
				if (nfs4_cb_decode_null(rec, len, &xid, &ok) != 0 || !ok) {
					UT_WARN("nfs4", NULL, "a client refused CB_NULL: its backchannel is down");
					se->cb_state = NFS4_CB_DOWN;
				} else {
					se->cb_state = NFS4_CB_UP;
				}
				return true;
			}
	return false;
}

/* A reply to se's CB_COMPOUND whose CB_SEQUENCE names another session,
 * sequence or slot (under s->mu): not the answer to the call, which failed
 * as a lost one does. A CB_GETATTR's askers recall at once; the slot is
 * not freed by it (the client's view of it is unknown): it waits out the
 * lease as a lost call's, and a true reply meanwhile still frees it. */
static void cb_reply_stray(struct nfs4_srv *s, struct nfs4_session *se)
{
	static const struct nfs4_cb_res failed; /* not accepted */

	UT_WARN("nfs4", NULL, "a CB_COMPOUND reply whose CB_SEQUENCE does not match the call: taken as lost");
	if (se->cb_ga) {
		se->cb_ga = false;
		cb_ask_answer(s, se, &failed);
	}
}

/* A CB_SEQUENCE answered NFS4ERR_SEQ_MISORDERED or NFS4ERR_BADSLOT (under
 * s->mu): the client and we disagree on the backchannel's slot, so the
 * session's backchannel is faulty (RFC 8881 2.10.6.1, knfsd's
 * nfsd4_mark_cb_fault): down (CB_PATH_DOWN_SESSION, no delegation over it)
 * until a rebind's probe answers; the call failed as a lost one. */
static void cb_faulty(struct nfs4_srv *s, struct nfs4_session *se, uint32_t st)
{
	UT_WARN("nfs4", NULL, "a CB_SEQUENCE answered %u: the session's backchannel is faulty (down)", st);
	se->cb_state = NFS4_CB_DOWN;
	if (se->cb_ga) {
		static const struct nfs4_cb_res failed; /* not accepted */

		se->cb_ga = false;
		cb_ask_answer(s, se, &failed);
	}
}

/* A CB_SEQUENCE answered NFS4ERR_DELAY (under s->mu): the recalls the
 * call carried go again (with the same sequenceid: cb_seq_keep); their
 * revocation still counts from the first recall. */
static void cb_resend(struct nfs4_session *se, uint32_t xid)
{
	if (!se->clp)
		return;
	for (struct nfs4_open *o = se->clp->opens; o; o = o->next)
		if (o->kind == NFS4_ST_DELEG && o->dl && !o->dl->revoked && o->dl->recalling && o->dl->cb_xid == xid)
			o->dl->resend = true;
}

void nfs4_cb_reply(void *ctx, uint64_t conn_id, const uint8_t *rec, size_t len)
{
	struct nfs4_srv *s = ctx;
	struct nfs4_cb_res r;
	uint32_t seq_st;
	bool probe;

	pthread_mutex_lock(&s->mu);
	probe = cb_probe_reply(s, conn_id, rec, len);
	pthread_mutex_unlock(&s->mu);
	if (probe)
		return;
	if (nfs4_cb_decode(rec, len, &r) != 0) {
		UT_WARN("nfs4", NULL, "a backchannel reply that does not decode: ignored");
		return;
	}
	pthread_mutex_lock(&s->mu);
	for (struct nfs4_client *c = s->clients; c; c = c->next)
		for (struct nfs4_session *se = c->sessions; se; se = se->next)
			if (se->cb_busy && se->cb_xid == r.xid && se->back && nfs_conn_id(se->back) == conn_id) {
				/* the slot's sequence advances only past a CB_SEQUENCE
				 * the client took (RFC 8881 20.9.3: a failed one leaves
				 * the slot as it was) */
				se->cb_seq_keep = !r.seq_ok;
				if (!nfs4_cb_res_ours(&r, se->id, se->cb_seq)) {
					cb_reply_stray(s, se);
					goto out;
				}
				seq_st = nfs4_cb_res_seq_status(&r);
				if (seq_st == NFS4ERR_SEQ_MISORDERED || seq_st == NFS4ERR_BADSLOT) {
					cb_faulty(s, se, seq_st);
					goto out;
				}
				se->cb_busy = false; /* the slot is free for the next CB_COMPOUND */
				if (seq_st == NFS4ERR_DELAY)
					cb_resend(se, r.xid);
				if (se->cb_ga) {
					se->cb_ga = false;
					cb_ask_answer(s, se, &r);
				}
				if (!r.accepted || r.status != NFS4_OK)
					UT_INFO("nfs4", NULL, "CB_COMPOUND answered %s, status %u",
						r.accepted ? "accepted" : "refused", r.status);
				goto out;
			}
out:
	pthread_mutex_unlock(&s->mu);
}
