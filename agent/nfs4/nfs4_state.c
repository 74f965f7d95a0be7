/* nfs4_state: the server's NFSv4.1 state, all under one mutex: clients
 * (by clientid), their sessions (fore-channel slots with the reply of each
 * slot's last request, the connections bound to it) and their opens (a
 * fixed table: a stateid names its entry and the entry's generation, so a
 * lookup costs one index and a stale stateid is told apart from a freed
 * one). Lock states share the table (kind NFS4_ST_LOCK). Leases: a client
 * silent for its lease (plus the same again as slack while it holds no lock
 * states, a tenth when it does: its locks may stand in another's way) is
 * dropped with its sessions, opens and locks at the next EXCHANGE_ID,
 * CREATE_SESSION, LOCK or LOCKT.
 *
 * Nothing here is kept on disk yet: after a restart the clients find their
 * client ids stale and start over (grace and reclaim come with locks).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "util/ut_clock.h"

uint64_t nfs4_now_ns(void)
{
	return ut_clock_mono_ns();
}

int nfs4_srv_new(const struct nfs4_cfg *cfg, struct nfs4_srv **out)
{
	struct nfs4_srv *s;

	if (cfg && cfg->max_slots > NFS4_SLOTS_MAX)
		return -EINVAL;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	if (!(s->opens = calloc(NFS4_MAX_OPENS, sizeof(*s->opens)))) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->cb_mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&s->cb_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	s->max_slots = cfg && cfg->max_slots ? cfg->max_slots : NFS4_SLOTS_DEFAULT;
	s->lease_s = cfg && cfg->lease_s ? cfg->lease_s : NFS4_LEASE_S;
	/* the boot word keeps ids of an earlier run from naming this run's state */
	if (getrandom(&s->boot, sizeof(s->boot), 0) != (ssize_t)sizeof(s->boot))
		s->boot = (uint32_t)(ut_clock_real_ns() ^ (int64_t)getpid());
	s->next_client = 1;
	s->cb_next_xid = s->boot;
	s->next_session = 1;
	memcpy(s->server_owner, "aquifer-nfs4", 12);
	s->open_free = NFS4_MAX_OPENS; /* empty: entries come from open_hwm up */
	*out = s;
	return 0;
}

void nfs4_srv_free(struct nfs4_srv *s)
{
	if (!s)
		return;
	nfs4_cb_stop(s); /* the NFS server stopped it already, when it ran */
	s->store = NULL; /* a stopping server's clients stay on the records: they reclaim at the next start */
	while (s->clients)
		nfs4_client_free(s, s->clients);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->cb_mu);
	pthread_cond_destroy(&s->cb_cv);
	free(s->opens);
	free(s);
}

struct nfs4_client *nfs4_client_find(struct nfs4_srv *s, uint64_t id)
{
	struct nfs4_client *c;

	for (c = s->clients; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void session_free(struct nfs4_srv *s, struct nfs4_session *se)
{
	uint32_t i;

	for (i = 0; i < se->nslots; i++)
		free(se->slots[i].rep);
	nfs4_deleg_back_drop(se);
	s->nsessions--;
	free(se);
}

/* Unlink se from its client; freed now, or by the last request in it. */
void nfs4_session_destroy(struct nfs4_srv *s, struct nfs4_session *se)
{
	struct nfs4_session **pp;

	if (se->dead)
		return;
	for (pp = &se->clp->sessions; *pp; pp = &(*pp)->next)
		if (*pp == se) {
			*pp = se->next;
			break;
		}
	se->dead = true;
	se->clp = NULL;
	nfs4_session_put(s, se);
}

void nfs4_session_put(struct nfs4_srv *s, struct nfs4_session *se)
{
	if (--se->refs == 0)
		session_free(s, se);
}

void nfs4_client_free(struct nfs4_srv *s, struct nfs4_client *c)
{
	struct nfs4_client **pp;

	/* the client let go of everything here (DESTROY_CLIENTID, expiry, a
	 * new incarnation): nothing of it to reclaim after a failover */
	if (s->store && c->recorded)
		vol_grace_forget(s->store, VOL_GRACE_NFS4, c->owner, c->owner_len);
	while (c->sessions)
		nfs4_session_destroy(s, c->sessions);
	while (c->opens)
		nfs4_open_release(s, c->opens);
	for (pp = &s->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	s->nclients--;
	free(c);
}

static bool holds_locks(const struct nfs4_client *c)
{
	for (const struct nfs4_open *o = c->opens; o; o = o->next)
		if (o->kind == NFS4_ST_LOCK)
			return true;
	return false;
}

void nfs4_expire(struct nfs4_srv *s)
{
	uint64_t now = nfs4_now_ns(), limit = 2ull * s->lease_s * 1000000000ull;
	struct nfs4_client *c = s->clients, *next;

	for (; c; c = next) {
		uint64_t idle = now - c->renewed_ns;

		next = c->next;
		if (idle > limit || (!c->confirmed && idle > limit / 2) ||
		    (holds_locks(c) && idle > limit / 2 + limit / 20))
			nfs4_client_free(s, c);
	}
}

struct nfs4_session *nfs4_session_find(struct nfs4_srv *s, const uint8_t id[NFS4_SESSIONID])
{
	struct nfs4_client *c;
	struct nfs4_session *se;

	/* the session id carries its client id in its first 8 bytes */
	uint64_t cid = 0;
	int i;

	for (i = 0; i < 8; i++)
		cid = cid << 8 | id[i];
	if (!(c = nfs4_client_find(s, cid)))
		return NULL;
	for (se = c->sessions; se; se = se->next)
		if (!memcmp(se->id, id, NFS4_SESSIONID))
			return se;
	return NULL;
}

bool nfs4_session_bound(const struct nfs4_session *se, uint64_t conn)
{
	uint32_t i;

	for (i = 0; i < se->nconns; i++)
		if (se->conns[i] == conn)
			return true;
	return false;
}

/* Bind a connection; when all places are taken the oldest gives way (a
 * closed connection's id is never told to us). */
int nfs4_session_bind(struct nfs4_session *se, uint64_t conn)
{
	if (nfs4_session_bound(se, conn))
		return 0;
	if (se->nconns == NFS4_CONNS_PER_SESSION) {
		memmove(se->conns, se->conns + 1, (NFS4_CONNS_PER_SESSION - 1) * sizeof(se->conns[0]));
		se->nconns--;
	}
	se->conns[se->nconns++] = conn;
	return 0;
}

void nfs4_open_stateid(const struct nfs4_srv *s, const struct nfs4_open *o, struct nfs4_stateid *out)
{
	uint32_t idx = (uint32_t)(o - s->opens), w[3] = { s->boot, idx, o->gen };
	int i;

	out->seqid = o->seqid;
	for (i = 0; i < 3; i++) {
		out->other[4 * i] = (uint8_t)(w[i] >> 24);
		out->other[4 * i + 1] = (uint8_t)(w[i] >> 16);
		out->other[4 * i + 2] = (uint8_t)(w[i] >> 8);
		out->other[4 * i + 3] = (uint8_t)w[i];
	}
}

struct nfs4_open *nfs4_state_alloc(struct nfs4_srv *s, struct nfs4_client *c, uint8_t kind, const uint8_t *owner,
				   uint32_t olen, const struct vol_fh *fh)
{
	struct nfs4_open *o;

	if (olen > NFS4_OPAQUE_LIMIT)
		return NULL;
	if (s->open_free < NFS4_MAX_OPENS)
		o = &s->opens[s->open_free];
	else if (s->open_hwm < NFS4_MAX_OPENS)
		o = &s->opens[s->open_hwm];
	else
		return NULL;
	if (!(o->owner = malloc(olen ? olen : 1)))
		return NULL;
	if (o == &s->opens[s->open_hwm])
		s->open_hwm++;
	else
		s->open_free = o->free_next;
	o->used = true;
	o->kind = kind;
	o->parent = NULL;
	o->gen++;
	o->seqid = 0;
	o->clp = c;
	memcpy(o->owner, owner, olen);
	o->owner_len = olen;
	o->fh = *fh;
	o->access = 0;
	o->deny = 0;
	o->next = c->opens;
	c->opens = o;
	return o;
}

struct nfs4_open *nfs4_open_get(struct nfs4_srv *s, struct nfs4_client *c, const uint8_t *owner, uint32_t olen,
				const struct vol_fh *fh, bool *fresh)
{
	struct nfs4_open *o;

	*fresh = false;
	for (o = c->opens; o; o = o->next)
		if (o->kind == NFS4_ST_OPEN && o->owner_len == olen && !memcmp(o->owner, owner, olen) &&
		    o->fh.len == fh->len && !memcmp(o->fh.data, fh->data, fh->len))
			return o;
	if ((o = nfs4_state_alloc(s, c, NFS4_ST_OPEN, owner, olen, fh)))
		*fresh = true;
	return o;
}

struct vol_lock_owner nfs4_lock_owner(const struct nfs4_srv *s, const struct nfs4_open *o)
{
	return (struct vol_lock_owner){ .proto = VOL_LOCK_NFS4, .client = o->clp->id,
					.id = (uint64_t)o->gen << 32 | (uint32_t)(o - s->opens) };
}

struct nfs4_open *nfs4_state_by_id(struct nfs4_srv *s, uint64_t id)
{
	uint32_t idx = (uint32_t)id;
	struct nfs4_open *o;

	if (idx >= NFS4_MAX_OPENS)
		return NULL;
	o = &s->opens[idx];
	return o->used && o->gen == (uint32_t)(id >> 32) ? o : NULL;
}

void nfs4_open_release(struct nfs4_srv *s, struct nfs4_open *o)
{
	struct nfs4_open **pp;

	nfs4_deleg_release(s, o); /* a delegation's grant */
	if (o->kind == NFS4_ST_OPEN) /* its lock states first (RFC 8881 18.2.4: CLOSE releases the locks) */
		for (pp = &o->clp->opens; *pp;) {
			if ((*pp)->kind == NFS4_ST_LOCK && (*pp)->parent == o) {
				nfs4_open_release(s, *pp);
				pp = &o->clp->opens;
			} else {
				pp = &(*pp)->next;
			}
		}
	if (s->locks) { /* a lock state's locks; an open's share reservation */
		struct vol_lock_owner lo = nfs4_lock_owner(s, o);

		vol_lock_release(s->locks, &lo);
	}

	for (pp = &o->clp->opens; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	o->used = false;
	o->kind = NFS4_ST_OPEN;
	o->parent = NULL;
	o->clp = NULL;
	free(o->owner);
	o->owner = NULL;
	o->free_next = s->open_free;
	s->open_free = (uint32_t)(o - s->opens);
}

uint32_t nfs4_open_find(struct nfs4_srv *s, struct nfs4_client *c, const struct nfs4_stateid *sid,
			struct nfs4_open **out)
{
	uint32_t w[3];
	struct nfs4_open *o;
	int i;

	for (i = 0; i < 3; i++)
		w[i] = (uint32_t)sid->other[4 * i] << 24 | (uint32_t)sid->other[4 * i + 1] << 16 |
		       (uint32_t)sid->other[4 * i + 2] << 8 | sid->other[4 * i + 3];
	if (w[0] != s->boot)
		return NFS4ERR_STALE_STATEID;
	if (w[1] >= NFS4_MAX_OPENS)
		return NFS4ERR_BAD_STATEID;
	o = &s->opens[w[1]];
	if (!o->used || o->gen != w[2] || o->clp != c)
		return NFS4ERR_BAD_STATEID;
	/* seqid 0: "the current one" (RFC 8881 8.2.2) */
	if (sid->seqid != 0 && sid->seqid < o->seqid)
		return NFS4ERR_OLD_STATEID;
	if (sid->seqid > o->seqid)
		return NFS4ERR_BAD_STATEID;
	*out = o;
	return NFS4_OK;
}
