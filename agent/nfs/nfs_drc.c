/* nfs_drc: the duplicate-request cache: non-idempotent calls keyed by
 * (client address, xid, program, procedure, checksum of the arguments), so
 * a retransmission gets the first reply instead of running twice.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs_srv_internal.h"

/* ---------- duplicate-request cache ---------- */

void nfs_drc_addr(const struct sockaddr_storage *ss, uint8_t out[16])
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)(const void *)ss)->sin_addr, 4);
	else if (ss->ss_family == AF_INET6)
		memcpy(out, &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr, 16);
}

static unsigned nfs_drc_bucket(const uint8_t addr[16], uint32_t xid)
{
	return (unsigned)((ut_hash_fnv64(addr, 16) ^ xid) % DRC_HASH);
}

static void nfs_drc_unlink(struct nfs_srv *srv, int idx)
{
	struct drc_entry *e = &srv->drc[idx];
	int *pp = &srv->drc_head[nfs_drc_bucket(e->addr, e->xid)];

	while (*pp != -1) {
		if (*pp == idx) {
			*pp = e->hnext;
			break;
		}
		pp = &srv->drc[*pp].hnext;
	}
	free(e->reply);
	memset(e, 0, sizeof(*e));
	e->hnext = -1;
}

/* Look the call up. DRC_NEW: inserted as in progress (*slot set);
 * DRC_BUSY: the original is still running, drop this one; DRC_REPLAY:
 * reply and len receive a copy of the original reply. */
int nfs_drc_begin(struct nfs_srv *srv, const uint8_t addr[16], uint32_t xid, uint32_t prog,
		     uint32_t proc, uint64_t sum, int *slot, uint8_t **reply, size_t *len)
{
	unsigned b = nfs_drc_bucket(addr, xid);
	int i, rc = DRC_NEW;

	pthread_mutex_lock(&srv->drc_mu);
	for (i = srv->drc_head[b]; i != -1; i = srv->drc[i].hnext) {
		struct drc_entry *e = &srv->drc[i];

		if (e->xid == xid && e->prog == prog && e->proc == proc && e->sum == sum &&
		    !memcmp(e->addr, addr, 16)) {
			rc = e->state == 1 ? DRC_BUSY : DRC_REPLAY;
			if (rc == DRC_REPLAY) {
				*reply = malloc(e->reply_len);
				if (*reply) {
					memcpy(*reply, e->reply, e->reply_len);
					*len = e->reply_len;
				} else {
					rc = DRC_BUSY;
				}
			}
			goto out;
		}
	}
	i = srv->drc_next;
	srv->drc_next = (srv->drc_next + 1) % DRC_SIZE;
	if (srv->drc[i].state)
		nfs_drc_unlink(srv, i);
	memcpy(srv->drc[i].addr, addr, 16);
	srv->drc[i].xid = xid;
	srv->drc[i].prog = prog;
	srv->drc[i].proc = proc;
	srv->drc[i].sum = sum;
	srv->drc[i].state = 1;
	srv->drc[i].hnext = srv->drc_head[b];
	srv->drc_head[b] = i;
	*slot = i;
out:
	pthread_mutex_unlock(&srv->drc_mu);
	return rc;
}

/* Store the reply (or forget the entry when reply is NULL). */
void nfs_drc_end(struct nfs_srv *srv, int slot, uint32_t xid, const uint8_t *reply, size_t len)
{
	struct drc_entry *e = &srv->drc[slot];

	pthread_mutex_lock(&srv->drc_mu);
	if (e->state == 1 && e->xid == xid) {
		if (reply && (e->reply = malloc(len)) != NULL) {
			memcpy(e->reply, reply, len);
			e->reply_len = len;
			e->state = 2;
		} else {
			nfs_drc_unlink(srv, slot);
		}
	}
	pthread_mutex_unlock(&srv->drc_mu);
}
