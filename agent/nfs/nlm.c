/* nlm: the NLM v4 procedures (nlm.h) over the store's lock table, their
 * table, and the service's life (new, free, releasing a host).
 *
 * Every procedure on a file resolves the NFSv3 handle as NFSv3's central
 * checks do (vol_fh_open: a forged handle or one of another or a vanished
 * export is STALE; vol_authorize with the caller's address) before it
 * touches the table; the order of checks is knfsd's: grace period, file,
 * range. Locks are the table's POSIX flavour, so an owner's new lock over
 * its own range replaces it and UNLOCK of a range not held is fine. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nlm_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/ut_clock.h"
#include "util/ut_hash.h"
#include "util/ut_log.h"

uint64_t nlm_host_id(const void *name, size_t len)
{
	return ut_hash_fnv64(name, len);
}

bool nlm_grace(struct nlm_srv *s)
{
	return s->grace_end_ns && ut_clock_mono_ns() < s->grace_end_ns;
}

bool nlm_srv_in_grace(struct nlm_srv *s)
{
	return nlm_grace(s);
}

/* The node's grace period after a restart, or the file's volume's since
 * this node attached it (vol_grace.h: a failover, a drain). */
static bool nlm_grace_on(struct nlm_srv *s, const struct vol_obj *obj)
{
	return nlm_grace(s) || vol_grace_active(obj->exp);
}

static struct vol_lock_owner nlm_owner(const struct nlm4_lock *l, bool with_svid)
{
	return (struct vol_lock_owner){ .proto = VOL_LOCK_NLM,
					.client = nlm_host_id(l->caller.data, l->caller.len),
					.id = (uint64_t)ut_hash_fnv32(l->oh.data, l->oh.len) << 32 |
					      (with_svid ? l->svid : 0) };
}

/* The file of l: resolved and authorized as NFSv3 would; its key. */
static uint32_t nlm_file(struct nfs_call *call, const struct nlm4_lock *l, struct vol_obj *obj,
			 struct vol_lock_key *k, enum vol_access *acc, bool recall)
{
	struct vol_cred eff;
	int rc = vol_fh_open(call->store, l->fh.data, l->fh.len, obj);

	if (rc != 0)
		return rc == -ENOMEM || rc == -EIO ? NLM4_FAILED : NLM4_STALE_FH;
	*acc = vol_authorize(obj->exp, call->peer, VOL_PROTO_NFSV3, &call->cred, &eff);
	if (*acc == VOL_ACCESS_NONE)
		return NLM4_FAILED;
	if (recall) /* a v4.1 client writing under a delegation takes no locks with us */
		nfs_call_recall(call, obj);
	vol_lock_key_of(obj, k);
	return NLM4_GRANTED;
}

/* l_offset, l_len -> the table's range; FBIG past 2^64. */
static uint32_t nlm_range(const struct nlm4_lock *l, uint64_t *len)
{
	if (l->len == 0) {
		*len = VOL_LOCK_EOF;
		return NLM4_GRANTED;
	}
	if (l->len - 1 > UINT64_MAX - l->off)
		return NLM4_FBIG;
	*len = l->len;
	return NLM4_GRANTED;
}

/* The opening every request on a lock or share reservation has: when
 * graced (not for a reclaim or an UNSHARE) refused in the node's grace
 * period; the file of l (nlm_file, recall as given) into *obj, *k and *acc;
 * when graced refused in its volume's grace period. */
static uint32_t nlm_open(struct nfs_call *call, const struct nlm4_lock *l, bool graced, bool recall,
			 struct vol_obj *obj, struct vol_lock_key *k, enum vol_access *acc)
{
	struct nlm_srv *s = call->ctx;
	uint32_t st;

	if (graced && nlm_grace(s))
		return NLM4_DENIED_GRACE_PERIOD;
	if ((st = nlm_file(call, l, obj, k, acc, recall)) != NLM4_GRANTED)
		return st;
	return graced && nlm_grace_on(s, obj) ? NLM4_DENIED_GRACE_PERIOD : NLM4_GRANTED;
}

/* nlm_open for TEST, CANCEL and UNLOCK (never reclaims), then the range
 * into *len. */
static uint32_t nlm_open_range(struct nfs_call *call, const struct nlm4_lock *l, bool recall, struct vol_obj *obj,
			       struct vol_lock_key *k, uint64_t *len)
{
	enum vol_access acc;
	uint32_t st = nlm_open(call, l, true, recall, obj, k, &acc);

	return st != NLM4_GRANTED ? st : nlm_range(l, len);
}

static uint32_t nlm_stat_of(int rc)
{
	switch (rc) {
	case 0: return NLM4_GRANTED;
	case -EAGAIN: case -EBUSY: return NLM4_DENIED;
	case -ENOLCK: return NLM4_DENIED_NOLOCKS;
	case -EINVAL: return NLM4_FBIG;
	default: return NLM4_FAILED;
	}
}

static void nlm_null(struct nfs_call *call, void *a, void *r)
{
	(void)call;
	(void)a;
	(void)r;
}

static void nlm_test(struct nfs_call *call, void *a, void *r)
{
	struct nlm_srv *s = call->ctx;
	struct nlm_args *x = a;
	struct nlm_res *res = r;
	struct vol_obj obj = { .fd = -1 };
	struct vol_lock_owner o = nlm_owner(&x->lock, true);
	struct vol_lock_desc d;
	struct vol_lock_key k;
	uint64_t len;
	int rc;

	res->cookie = x->cookie;
	res->test = true;
	if ((res->stat = nlm_open_range(call, &x->lock, true, &obj, &k, &len)) != NLM4_GRANTED)
		goto out;
	rc = vol_lock_probe(s->locks, &k, &o, x->lock.off, len,
			    VOL_LOCK_F_POSIX | (x->excl ? VOL_LOCK_F_EXCL : 0), &d);
	res->stat = nlm_stat_of(rc);
	if (rc == -EAGAIN) {
		res->excl = (d.flags & VOL_LOCK_F_EXCL) != 0;
		res->svid = d.owner.proto == VOL_LOCK_NLM ? (uint32_t)d.owner.id : 0;
		res->oh = d.owner.proto == VOL_LOCK_NLM ? "" : d.owner.proto == VOL_LOCK_SMB ? "smb" : "nfs4";
		res->off = d.start;
		res->len = d.len == VOL_LOCK_EOF ? 0 : d.len;
	}
out:
	vol_obj_cleanup(&obj);
}

/* LOCK and NM_LOCK (monitor false: the host is not recorded for notify). */
static void nlm_lock_common(struct nfs_call *call, struct nlm_args *x, struct nlm_res *res, bool monitor)
{
	struct nlm_srv *s = call->ctx;
	struct vol_obj obj = { .fd = -1 };
	struct vol_lock_owner o = nlm_owner(&x->lock, true);
	struct vol_lock_key k;
	struct nlm_block *b;
	enum vol_access acc;
	unsigned flags = VOL_LOCK_F_POSIX | (x->excl ? VOL_LOCK_F_EXCL : 0);
	uint64_t len;
	int rc;

	res->cookie = x->cookie;
	/* in grace only reclaims; after it a reclaim is an ordinary request */
	if ((res->stat = nlm_open(call, &x->lock, !x->reclaim, true, &obj, &k, &acc)) != NLM4_GRANTED)
		goto out;
	if (x->excl && acc != VOL_ACCESS_RW) {
		res->stat = NLM4_ROFS;
		goto out;
	}
	if ((res->stat = nlm_range(&x->lock, &len)) != NLM4_GRANTED)
		goto out;
	/* on the volume's records (the shelf) before anything is granted, so
	 * the node that takes the volume over knows whom to wait for */
	if (monitor && vol_grace_record(obj.exp, VOL_GRACE_NLM, x->lock.caller.data, x->lock.caller.len, call->peer) != 0) {
		res->stat = NLM4_DENIED_NOLOCKS;
		goto out;
	}
	pthread_mutex_lock(&s->mu);
	b = nlm_block_find(s, &k, &o, x->lock.off, len, flags);
	if (b && b->state == NLM_BL_GRANTED) {
		/* granted while the client waited: its poll claims it */
		nlm_block_drop(s, b);
		res->stat = NLM4_GRANTED;
		goto unlock;
	}
	rc = vol_lock_lock(s->locks, &k, &o, x->lock.off, len, flags, NULL);
	if (rc == 0) {
		if (b)
			nlm_block_drop(s, b);
		res->stat = NLM4_GRANTED;
	} else if (rc == -EAGAIN && x->block) {
		struct nlm_block proto = { .key = k, .owner = o, .start = x->lock.off, .len = len, .flags = flags,
					   .svid = x->lock.svid, .l_off = x->lock.off, .l_len = x->lock.len,
					   .fh_len = x->lock.fh.len, .oh_len = x->lock.oh.len };

		memcpy(proto.fh, x->lock.fh.data, x->lock.fh.len);
		memcpy(proto.oh, x->lock.oh.data, x->lock.oh.len);
		memcpy(proto.caller, x->lock.caller.data, x->lock.caller.len);
		memcpy(&proto.peer, call->peer,
		       call->peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
		res->stat = b ? NLM4_BLOCKED : nlm_block_add(s, &proto);
	} else {
		res->stat = nlm_stat_of(rc);
	}
	if (monitor && (res->stat == NLM4_GRANTED || res->stat == NLM4_BLOCKED))
		nlm_host_record(s, (const char *)x->lock.caller.data, x->lock.caller.len, call->peer);
unlock:
	pthread_mutex_unlock(&s->mu);
out:
	vol_obj_cleanup(&obj);
}

static void nlm_lock(struct nfs_call *call, void *a, void *r)
{
	nlm_lock_common(call, a, r, true);
}

static void nlm_nm_lock(struct nfs_call *call, void *a, void *r)
{
	struct nlm_args *x = a;

	x->block = false; /* NM_LOCK never blocks (XNFS) */
	nlm_lock_common(call, a, r, false);
}

static void nlm_cancel(struct nfs_call *call, void *a, void *r)
{
	struct nlm_srv *s = call->ctx;
	struct nlm_args *x = a;
	struct nlm_res *res = r;
	struct vol_obj obj = { .fd = -1 };
	struct vol_lock_owner o = nlm_owner(&x->lock, true);
	struct vol_lock_key k;
	struct nlm_block *b;
	uint64_t len;

	res->cookie = x->cookie;
	if ((res->stat = nlm_open_range(call, &x->lock, false, &obj, &k, &len)) != NLM4_GRANTED)
		goto out;
	pthread_mutex_lock(&s->mu);
	b = nlm_block_find(s, &k, &o, x->lock.off, len, VOL_LOCK_F_POSIX | (x->excl ? VOL_LOCK_F_EXCL : 0));
	if (!b) {
		res->stat = NLM4_DENIED;
	} else {
		if (b->state == NLM_BL_GRANTED) /* granted, never claimed: take it back */
			(void)vol_lock_unlock(s->locks, &k, &o, b->start, b->len, VOL_LOCK_F_POSIX);
		nlm_block_drop(s, b);
		res->stat = NLM4_GRANTED;
	}
	pthread_mutex_unlock(&s->mu);
out:
	vol_obj_cleanup(&obj);
}

static void nlm_unlock(struct nfs_call *call, void *a, void *r)
{
	struct nlm_srv *s = call->ctx;
	struct nlm_args *x = a;
	struct nlm_res *res = r;
	struct vol_obj obj = { .fd = -1 };
	struct vol_lock_owner o = nlm_owner(&x->lock, true);
	struct vol_lock_key k;
	uint64_t len;

	res->cookie = x->cookie;
	if ((res->stat = nlm_open_range(call, &x->lock, false, &obj, &k, &len)) != NLM4_GRANTED)
		goto out;
	pthread_mutex_lock(&s->mu);
	nlm_block_drop_owner(s, &k, &o); /* an unlock ends the owner's waits there (knfsd) */
	res->stat = nlm_stat_of(vol_lock_unlock(s->locks, &k, &o, x->lock.off, len, VOL_LOCK_F_POSIX));
	pthread_mutex_unlock(&s->mu);
out:
	vol_obj_cleanup(&obj);
}

static void nlm_granted_res(struct nfs_call *call, void *a, void *r)
{
	struct nlm_args *x = a;
	uint64_t id;

	(void)r;
	if (x->cookie.len != sizeof(id))
		return; /* not one of our callbacks */
	memcpy(&id, x->cookie.data, sizeof(id));
	nlm_block_granted_res(call->ctx, id, x->stat);
}

/* SHARE and UNSHARE: DOS share reservations in the table's share modes. */
static void nlm_share_common(struct nfs_call *call, struct nlm_args *x, struct nlm_res *res, bool unshare)
{
	struct nlm_srv *s = call->ctx;
	struct vol_obj obj = { .fd = -1 };
	struct vol_lock_owner o = nlm_owner(&x->lock, false);
	struct vol_lock_key k;
	enum vol_access acc;
	unsigned access, deny;

	res->cookie = x->cookie;
	res->share = true;
	if ((res->stat = nlm_open(call, &x->lock, !x->reclaim && !unshare, !unshare, &obj, &k, &acc)) != NLM4_GRANTED)
		goto out;
	if (x->mode > 3 || x->access > 3) { /* fsh4_mode DN..DRW, fsh4_access NONE..RW */
		res->stat = NLM4_FAILED;
		goto out;
	}
	/* bit 1: read, bit 2: write, in both enums */
	access = (x->access & 1 ? VOL_SHARE_READ : 0) | (x->access & 2 ? VOL_SHARE_WRITE : 0);
	deny = (x->mode & 1 ? VOL_SHARE_READ : 0) | (x->mode & 2 ? VOL_SHARE_WRITE : 0);
	if (unshare) {
		access = deny = 0; /* the table keeps nothing for access 0: the reservation goes */
	} else if ((access & VOL_SHARE_WRITE) && acc != VOL_ACCESS_RW) {
		res->stat = NLM4_ROFS;
		goto out;
	}
	if (!unshare && access &&
	    vol_grace_record(obj.exp, VOL_GRACE_NLM, x->lock.caller.data, x->lock.caller.len, call->peer) != 0) {
		res->stat = NLM4_DENIED_NOLOCKS;
		goto out;
	}
	res->stat = nlm_stat_of(vol_lock_share(s->locks, &k, &o, access, deny));
	if (!unshare && res->stat == NLM4_GRANTED && access) {
		pthread_mutex_lock(&s->mu);
		nlm_host_record(s, (const char *)x->lock.caller.data, x->lock.caller.len, call->peer);
		pthread_mutex_unlock(&s->mu);
	}
out:
	vol_obj_cleanup(&obj);
}

static void nlm_share(struct nfs_call *call, void *a, void *r)
{
	nlm_share_common(call, a, r, false);
}

static void nlm_unshare(struct nfs_call *call, void *a, void *r)
{
	nlm_share_common(call, a, r, true);
}

static void nlm_free_all(struct nfs_call *call, void *a, void *r)
{
	struct nlm_args *x = a;

	(void)r;
	nlm_srv_release_host_from(call->ctx, (const char *)x->lock.caller.data, x->lock.caller.len, call->peer);
}

void nlm_srv_release_host_from(struct nlm_srv *s, const char *name, size_t len, const struct sockaddr *from)
{
	bool may;

	pthread_mutex_lock(&s->mu);
	may = nlm_host_may_release(s, name, len, from);
	pthread_mutex_unlock(&s->mu);
	if (!may) {
		UT_WARN("nlm", NULL, "ignored a release of host %.*s from another address than its own",
			(int)(len > 256 ? 256 : len), name);
		return;
	}
	nlm_srv_release_host(s, name, len);
}

void nlm_srv_release_host(struct nlm_srv *s, const char *name, size_t len)
{
	uint64_t host = nlm_host_id(name, len);

	pthread_mutex_lock(&s->mu);
	nlm_block_drop_host(s, host);
	nlm_host_forget(s, name, len);
	pthread_mutex_unlock(&s->mu);
	vol_lock_release_client(s->locks, VOL_LOCK_NLM, host);
	vol_grace_forget(s->store, VOL_GRACE_NLM, name, len); /* nothing left to reclaim after a failover */
	UT_INFO("nlm", NULL, "released the locks of host %.*s", (int)(len > 256 ? 256 : len), name);
}

#define A sizeof(struct nlm_args)
#define R sizeof(struct nlm_res)
static const struct nfs_proc nlm_procs[] = {
	[NLM4_NULL] = { .name = "NULL", .decode = nlm_dec_void, .handler = nlm_null, .encode = nlm_enc_void,
			.args_size = A, .res_size = R },
	[NLM4_TEST] = { .name = "TEST", .decode = nlm_dec_test, .handler = nlm_test, .encode = nlm_enc_res,
			.args_size = A, .res_size = R },
	[NLM4_LOCK] = { .name = "LOCK", .decode = nlm_dec_lock, .handler = nlm_lock, .encode = nlm_enc_res,
			.args_size = A, .res_size = R },
	[NLM4_CANCEL] = { .name = "CANCEL", .decode = nlm_dec_cancel, .handler = nlm_cancel, .encode = nlm_enc_res,
			  .args_size = A, .res_size = R },
	[NLM4_UNLOCK] = { .name = "UNLOCK", .decode = nlm_dec_unlock, .handler = nlm_unlock, .encode = nlm_enc_res,
			  .args_size = A, .res_size = R },
	[NLM4_GRANTED_RES] = { .name = "GRANTED_RES", .decode = nlm_dec_res, .handler = nlm_granted_res,
			       .encode = nlm_enc_void, .args_size = A, .res_size = R },
	[NLM4_SHARE] = { .name = "SHARE", .decode = nlm_dec_share, .handler = nlm_share, .encode = nlm_enc_res,
			 .args_size = A, .res_size = R },
	[NLM4_UNSHARE] = { .name = "UNSHARE", .decode = nlm_dec_share, .handler = nlm_unshare,
			   .encode = nlm_enc_res, .args_size = A, .res_size = R },
	[NLM4_NM_LOCK] = { .name = "NM_LOCK", .decode = nlm_dec_lock, .handler = nlm_nm_lock,
			   .encode = nlm_enc_res, .args_size = A, .res_size = R },
	[NLM4_FREE_ALL] = { .name = "FREE_ALL", .decode = nlm_dec_notify, .handler = nlm_free_all,
			    .encode = nlm_enc_void, .args_size = A, .res_size = R },
};
#undef A
#undef R

const struct nfs_prog nlm_prog = { .prog = NLM_PROG, .vers = NLM_VERS, .procs = nlm_procs,
				   .nprocs = (uint32_t)(sizeof(nlm_procs) / sizeof(nlm_procs[0])) };

int nlm_srv_new(const struct nlm_cfg *cfg, struct vol_store *store, struct nlm_srv **out)
{
	struct nlm_srv *s;
	int rc;

	if (!store || !cfg)
		return -EINVAL;
	if (!(s = calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->cfg = *cfg;
	if (cfg->state_dir)
		snprintf(s->state_dir, sizeof(s->state_dir), "%s", cfg->state_dir);
	if (cfg->my_name)
		snprintf(s->my_name, sizeof(s->my_name), "%s", cfg->my_name);
	else if (gethostname(s->my_name, sizeof(s->my_name) - 1) != 0)
		snprintf(s->my_name, sizeof(s->my_name), "aquifer");
	s->cfg.state_dir = s->state_dir[0] ? s->state_dir : NULL;
	s->cfg.my_name = s->my_name;
	if (!s->cfg.pmap_port)
		s->cfg.pmap_port = 111;
	if (!s->cfg.cb_timeout_ms)
		s->cfg.cb_timeout_ms = 2000;
	s->store = store;
	s->locks = vol_store_locks(store);
	s->nsm_state = 1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->wmu, NULL);
	pthread_cond_init(&s->cv, NULL);
	nlm_hosts_load(s);
	if ((rc = nlm_cb_start(s)) != 0) {
		nlm_srv_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void nlm_srv_free(struct nlm_srv *s)
{
	if (!s)
		return;
	nlm_cb_stop(s);
	pthread_mutex_lock(&s->mu);
	while (s->blocks)
		nlm_block_drop(s, s->blocks);
	pthread_mutex_unlock(&s->mu);
	vol_lock_release_client_proto(s->locks, VOL_LOCK_NLM);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->wmu);
	pthread_cond_destroy(&s->cv);
	free(s->hosts);
	free(s->notify);
	free(s);
}
