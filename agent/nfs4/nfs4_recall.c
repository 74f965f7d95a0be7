/* nfs4_recall: the NFSv4.1 backchannel thread of the delegations
 * (nfs4_deleg.c grants them; nfs4_cb.c is the wire). One thread per server,
 * started at the first grant or backchannel probe (nfs4_cb_start) and woken
 * by a break, an ask or a probe (nfs4_cb_kick), or every NFS4_CB_TICK_MS.
 * Each round, under s->mu: a backchannel set up or changed gets its CB_NULL
 * probe (unanswered within half a lease, at most CB_PROBE_MAX_MS, or
 * refused: down); per client, the delegations whose grant a conflicting
 * access broke are recalled in one CB_COMPOUND (CB_SEQUENCE on the
 * session's one slot, then CB_RECALLs), or, the slot free and no recall
 * waiting, a write delegation's holder is asked CB_GETATTR for its askers
 * (cb_ask_next); a delegation not returned within the lease time after its
 * recall, or whose grant the store revoked, is revoked. The calls go out of
 * s->mu.
 *
 * Replies (nfs4_cb_reply, from the NFS server's connection thread): a
 * probe's answer brings the backchannel up or down; a CB_COMPOUND's frees
 * the slot and answers the askers of a CB_GETATTR. The slot's sequence
 * advances only past a CB_SEQUENCE the client took (RFC 8881 20.9.3): a
 * refusal or a failed CB_SEQUENCE leaves it for the next call; DELAY sends
 * the same recalls again (their revocation clock kept); SEQ_MISORDERED and
 * BADSLOT mark the session's backchannel faulty (down). A reply whose
 * CB_SEQUENCE does not echo the call's session, sequence and slot answers
 * nothing: the call failed as a lost one (cb_reply_stray), and the slot
 * waits out the lease.
 *
 * Locks: s->mu, then cb_mu (the thread's wake-up only).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/nfs/rpc.h"
#include "util/ut_log.h"

#define CB_PROBE_MAX_MS 10000u /* a CB_NULL unanswered this long (or half a lease): the path is down */

static void *cb_main(void *arg);

bool nfs4_cb_start(struct nfs4_srv *s, struct nfs_srv *nsrv)
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

void nfs4_cb_kick(struct nfs4_srv *s)
{
	pthread_mutex_lock(&s->cb_mu);
	s->cb_kick = true;
	pthread_cond_signal(&s->cb_cv);
	pthread_mutex_unlock(&s->cb_mu);
}

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

/* se's CB_COMPOUND in flight, when a CB_GETATTR, failed (under s->mu): its
 * askers recall. */
static void cb_ga_failed(struct nfs4_srv *s, struct nfs4_session *se)
{
	static const struct nfs4_cb_res failed; /* not accepted */

	if (se->cb_ga) {
		se->cb_ga = false;
		cb_ask_answer(s, se, &failed);
	}
}

/* One client's recalls to send and late ones to revoke (under s->mu); a
 * CB_COMPOUND for it into *out when there is one to send. */
static void cb_client(struct nfs4_srv *s, struct nfs4_client *c, uint64_t now, struct cb_out *out)
{
	struct nfs4_cb_recall r[NFS4_CB_MAX_RECALLS];
	struct nfs4_deleg *sent[NFS4_CB_MAX_RECALLS];
	struct nfs4_session *se = nfs4_deleg_back_session(c);
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
		until.tv_nsec += (long)NFS4_CB_TICK_MS * 1000000L;
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
	UT_WARN("nfs4", NULL, "a CB_COMPOUND reply whose CB_SEQUENCE does not match the call: taken as lost");
	cb_ga_failed(s, se);
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
	cb_ga_failed(s, se);
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
