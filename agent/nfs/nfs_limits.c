/* nfs_limits: admission, eviction and time-outs of NFS connections; see
 * nfs_limits.h. */
#include "agent/nfs/nfs_limits.h"
#include "util/ut_hash.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* A client address: family and address bytes (the port is not part of it). */
struct nfs_limits_ip {
	uint8_t key[17];
	unsigned n;
	struct nfs_limits_ip *next;
};

static void ip_key(const struct sockaddr_storage *ss, uint8_t key[17])
{
	memset(key, 0, 17);
	key[0] = (uint8_t)ss->ss_family;
	if (ss->ss_family == AF_INET)
		memcpy(key + 1, &((const struct sockaddr_in *)(const void *)ss)->sin_addr, 4);
	else if (ss->ss_family == AF_INET6)
		memcpy(key + 1, &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr, 16);
}

static unsigned ip_hash(const uint8_t key[17])
{
	return ut_hash_fnv32(key, 17) % NFS_LIMITS_HASH;
}

static struct nfs_limits_ip *ip_find(const struct nfs_limits *l, const uint8_t key[17])
{
	struct nfs_limits_ip *e;

	for (e = l->tab[ip_hash(key)]; e; e = e->next)
		if (memcmp(e->key, key, 17) == 0)
			return e;
	return NULL;
}

static void list_unlink(struct nfs_limits_list *ls, struct nfs_limits_node *nd)
{
	if (nd->prev)
		nd->prev->next = nd->next;
	else
		ls->head = nd->next;
	if (nd->next)
		nd->next->prev = nd->prev;
	else
		ls->tail = nd->prev;
	nd->prev = nd->next = NULL;
}

static void list_push(struct nfs_limits_list *ls, struct nfs_limits_node *nd)
{
	nd->prev = NULL;
	nd->next = ls->head;
	if (ls->head)
		ls->head->prev = nd;
	else
		ls->tail = nd;
	ls->head = nd;
}

void nfs_limits_init(struct nfs_limits *l, const struct nfs_srv_limits *cfg)
{
	memset(l, 0, sizeof(*l));
	l->cfg = *cfg;
}

void nfs_limits_cleanup(struct nfs_limits *l)
{
	for (int i = 0; i < NFS_LIMITS_HASH; i++) {
		while (l->tab[i]) {
			struct nfs_limits_ip *e = l->tab[i];

			l->tab[i] = e->next;
			free(e);
		}
	}
}

/* The oldest idle connection (of ip when not NULL), or NULL. */
static struct nfs_limits_node *victim(const struct nfs_limits *l, const struct nfs_limits_ip *ip,
				      const struct nfs_limits_ops *ops)
{
	struct nfs_limits_node *nd;

	for (nd = l->fresh.tail; nd; nd = nd->prev)
		if (!ip || nd->ip == ip)
			return nd;
	for (nd = l->live.tail; nd; nd = nd->prev)
		if ((!ip || nd->ip == ip) && !ops->busy(nd))
			return nd;
	return NULL;
}

bool nfs_limits_admit(struct nfs_limits *l, const struct sockaddr_storage *peer, const struct nfs_limits_ops *ops,
		      void *ctx)
{
	uint8_t key[17];
	struct nfs_limits_ip *ip;
	struct nfs_limits_node *nd = NULL;

	ip_key(peer, key);
	ip = ip_find(l, key);
	if (ip && ip->n >= l->cfg.per_ip) {
		if (!(nd = victim(l, ip, ops)))
			return false;
	} else if (l->n >= l->cfg.max_conns) {
		if (!(nd = victim(l, NULL, ops)))
			return false;
	}
	if (nd)
		ops->close(nd, ctx);
	return true;
}

int nfs_limits_add(struct nfs_limits *l, struct nfs_limits_node *nd, const struct sockaddr_storage *peer,
		   uint64_t now)
{
	uint8_t key[17];
	struct nfs_limits_ip *ip;

	ip_key(peer, key);
	if (!(ip = ip_find(l, key))) {
		unsigned b = ip_hash(key);

		if (!(ip = calloc(1, sizeof(*ip))))
			return -ENOMEM;
		memcpy(ip->key, key, sizeof(key));
		ip->next = l->tab[b];
		l->tab[b] = ip;
	}
	ip->n++;
	memset(nd, 0, sizeof(*nd));
	nd->ip = ip;
	nd->born_ns = nd->last_ns = now;
	list_push(&l->fresh, nd);
	l->n++;
	return 0;
}

void nfs_limits_del(struct nfs_limits *l, struct nfs_limits_node *nd)
{
	struct nfs_limits_ip **pp;

	list_unlink(nd->proven ? &l->live : &l->fresh, nd);
	l->n--;
	if (--nd->ip->n > 0)
		return;
	for (pp = &l->tab[ip_hash(nd->ip->key)]; *pp != nd->ip; pp = &(*pp)->next)
		;
	*pp = nd->ip->next;
	free(nd->ip);
	nd->ip = NULL;
}

void nfs_limits_seen(struct nfs_limits *l, struct nfs_limits_node *nd, uint64_t now)
{
	nd->last_ns = now;
	if (nd->proven && l->live.head != nd) {
		list_unlink(&l->live, nd);
		list_push(&l->live, nd);
	}
}

void nfs_limits_call(struct nfs_limits *l, struct nfs_limits_node *nd, uint64_t now)
{
	if (!nd->proven) {
		list_unlink(&l->fresh, nd);
		nd->proven = true;
		list_push(&l->live, nd);
	}
	nfs_limits_seen(l, nd, now);
}

void nfs_limits_sweep(struct nfs_limits *l, uint64_t now, const struct nfs_limits_ops *ops, void *ctx)
{
	uint64_t rec = (uint64_t)l->cfg.record_s * 1000000000ull, idle = (uint64_t)l->cfg.idle_s * 1000000000ull;
	struct nfs_limits_node *nd, *prev;

	while ((nd = l->fresh.tail) && now - nd->born_ns >= rec)
		ops->close(nd, ctx);
	/* least recently active first; nothing younger than both time-outs
	 * can be due, so the walk ends there */
	for (nd = l->live.tail; nd && now - nd->last_ns >= (rec < idle ? rec : idle); nd = prev) {
		prev = nd->prev;
		if (ops->busy(nd))
			nfs_limits_seen(l, nd, now); /* its idle time starts when it is done */
		else if (now - nd->last_ns >= idle || (now - nd->last_ns >= rec && ops->started(nd)))
			ops->close(nd, ctx);
	}
}

struct nfs_limits_node *nfs_limits_any(const struct nfs_limits *l)
{
	return l->fresh.tail ? l->fresh.tail : l->live.tail;
}
