/* nsm: the Network Status Monitor v1 (program 100024, XNFS chapter 11) the
 * lock manager needs on the NFS port: NOTIFY from a client's statd after its
 * restart releases every NLM lock, share and wait of that host (as FREE_ALL);
 * STAT answers our state number; MON, UNMON, UNMON_ALL and SIMU_CRASH are a
 * local lock manager's (our own does not need them: it records hosts itself,
 * nlm_block.c) and, as rpc.statd does, are refused to callers that are not
 * on the loopback address. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nlm_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

enum { STAT_SUCC = 0, STAT_FAIL = 1 };

struct nsm_res {
	bool with_stat;    /* sm_stat_res: res_stat before the state */
	uint32_t stat;
	uint32_t state;
};

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

static bool name_eq(const char *s, const struct nlm_obj *o)
{
	return strlen(s) == o->len && !memcmp(s, o->data, o->len);
}

static void nsm_null(struct nfs_call *call, void *a, void *r)
{
	(void)call;
	(void)a;
	(void)r;
}

static uint32_t nsm_state(struct nlm_srv *s)
{
	uint32_t st;

	pthread_mutex_lock(&s->mu);
	st = s->nsm_state;
	pthread_mutex_unlock(&s->mu);
	return st;
}

/* STAT: whether we would monitor the host (any name we can keep). */
static void nsm_stat(struct nfs_call *call, void *a, void *r)
{
	struct nsm_args *x = a;
	struct nsm_res *res = r;

	res->with_stat = true;
	res->stat = x->name.len && !memchr(x->name.data, 0, x->name.len) ? STAT_SUCC : STAT_FAIL;
	res->state = nsm_state(call->ctx);
}

static void nsm_mon(struct nfs_call *call, void *a, void *r)
{
	struct nlm_srv *s = call->ctx;
	struct nsm_args *x = a;
	struct nsm_res *res = r;
	struct nsm_mon *m = NULL;

	res->with_stat = true;
	res->stat = STAT_FAIL;
	pthread_mutex_lock(&s->mu);
	res->state = s->nsm_state;
	if (!loopback(call->peer) || !x->name.len || memchr(x->name.data, 0, x->name.len) ||
	    memchr(x->my_name.data, 0, x->my_name.len))
		goto out;
	for (size_t i = 0; i < s->nmons && !m; i++)
		if (name_eq(s->mons[i].name, &x->name) && name_eq(s->mons[i].my_name, &x->my_name) &&
		    s->mons[i].my_prog == x->my_prog && s->mons[i].my_vers == x->my_vers &&
		    s->mons[i].my_proc == x->my_proc)
			m = &s->mons[i];
	if (!m) {
		if (s->nmons >= NSM_MON_MAX)
			goto out; /* full: STAT_FAIL, nothing changes */
		m = &s->mons[s->nmons++];
	}
	memset(m, 0, sizeof(*m));
	memcpy(m->name, x->name.data, x->name.len);
	memcpy(m->my_name, x->my_name.data, x->my_name.len);
	m->my_prog = x->my_prog;
	m->my_vers = x->my_vers;
	m->my_proc = x->my_proc;
	memcpy(m->priv, x->priv, sizeof(m->priv));
	res->stat = STAT_SUCC;
out:
	pthread_mutex_unlock(&s->mu);
}

/* UNMON (name set) and UNMON_ALL (every registration of my_id). */
static void nsm_unmon_common(struct nfs_call *call, struct nsm_args *x, struct nsm_res *res, bool all)
{
	struct nlm_srv *s = call->ctx;

	pthread_mutex_lock(&s->mu);
	res->state = s->nsm_state;
	if (loopback(call->peer))
		for (size_t i = 0; i < s->nmons;) {
			const struct nsm_mon *m = &s->mons[i];

			if ((all || name_eq(m->name, &x->name)) && name_eq(m->my_name, &x->my_name) &&
			    m->my_prog == x->my_prog && m->my_vers == x->my_vers && m->my_proc == x->my_proc)
				s->mons[i] = s->mons[--s->nmons];
			else
				i++;
		}
	pthread_mutex_unlock(&s->mu);
}

static void nsm_unmon(struct nfs_call *call, void *a, void *r)
{
	nsm_unmon_common(call, a, r, false);
}

static void nsm_unmon_all(struct nfs_call *call, void *a, void *r)
{
	nsm_unmon_common(call, a, r, true);
}

/* SIMU_CRASH: as if we had restarted: a new state number, no registrations. */
static void nsm_simu_crash(struct nfs_call *call, void *a, void *r)
{
	struct nlm_srv *s = call->ctx;

	(void)a;
	(void)r;
	if (!loopback(call->peer))
		return;
	pthread_mutex_lock(&s->mu);
	s->nsm_state += 2;
	s->nmons = 0;
	pthread_mutex_unlock(&s->mu);
}

/* NOTIFY: host mon_name restarted; its locks died with it. */
static void nsm_notify(struct nfs_call *call, void *a, void *r)
{
	struct nsm_args *x = a;

	(void)r;
	nlm_srv_release_host_from(call->ctx, (const char *)x->name.data, x->name.len, call->peer);
}

static void nsm_enc_res(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nsm_res *res = r;

	(void)call;
	if (res->with_stat)
		xdr_put_u32(b, res->stat);
	xdr_put_u32(b, res->state);
}

#define A sizeof(struct nsm_args)
#define R sizeof(struct nsm_res)
static const struct nfs_proc nsm_procs[] = {
	[NSM_NULL] = { .name = "NULL", .decode = nlm_dec_void, .handler = nsm_null, .encode = nlm_enc_void,
		       .args_size = A, .res_size = R },
	[NSM_STAT] = { .name = "STAT", .decode = nsm_dec_name, .handler = nsm_stat, .encode = nsm_enc_res,
		       .args_size = A, .res_size = R },
	[NSM_MON] = { .name = "MON", .decode = nsm_dec_mon, .handler = nsm_mon, .encode = nsm_enc_res,
		      .args_size = A, .res_size = R },
	[NSM_UNMON] = { .name = "UNMON", .decode = nsm_dec_unmon, .handler = nsm_unmon, .encode = nsm_enc_res,
			.args_size = A, .res_size = R },
	[NSM_UNMON_ALL] = { .name = "UNMON_ALL", .decode = nsm_dec_my_id, .handler = nsm_unmon_all,
			    .encode = nsm_enc_res, .args_size = A, .res_size = R },
	[NSM_SIMU_CRASH] = { .name = "SIMU_CRASH", .decode = nlm_dec_void, .handler = nsm_simu_crash,
			     .encode = nlm_enc_void, .args_size = A, .res_size = R },
	[NSM_NOTIFY] = { .name = "NOTIFY", .decode = nsm_dec_notify, .handler = nsm_notify, .encode = nlm_enc_void,
			 .args_size = A, .res_size = R },
};
#undef A
#undef R

const struct nfs_prog nsm_prog = { .prog = NSM_PROG, .vers = NSM_VERS, .procs = nsm_procs,
				   .nprocs = (uint32_t)(sizeof(nsm_procs) / sizeof(nsm_procs[0])) };
