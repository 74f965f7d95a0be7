/* nfs_limits: which NFS connections may stay (issue 15): the connection
 * limits of nfs_srv (struct nfs_srv_limits) as a pure module on a clock the
 * caller passes, so that its choices can be tested without sockets.
 *
 * Each connection embeds a struct nfs_limits_node. The module keeps two
 * lists: new connections that have not delivered a whole call yet (by accept
 * time) and proven ones (least recently active last), and a count per
 * client address. Its choices:
 *   - admission: at the per-address or the total limit, the oldest idle
 *     connection in that scope is closed to make room: one that never
 *     delivered a call first, else the proven one longest without traffic
 *     that has nothing outstanding; with none, the new one is refused;
 *   - time-outs: a new connection gets record_s seconds to deliver its first
 *     whole call; a proven one whose call is partly received is closed after
 *     record_s seconds without a byte, one with nothing outstanding after
 *     idle_s. Busy connections (calls outstanding) never time out.
 * The caller closes through ops->close, which must call nfs_limits_del.
 * Not thread-safe: nfs_srv calls it from the holder of its loop role only (one thread at a time).
 */
#ifndef AQ_AGENT_NFS_LIMITS_H
#define AQ_AGENT_NFS_LIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "agent/nfs/nfs_srv.h"

#define NFS_LIMITS_HASH 1024

struct nfs_limits_ip;

struct nfs_limits_node {
	struct nfs_limits_node *prev, *next;
	struct nfs_limits_ip *ip;
	uint64_t born_ns, last_ns;
	bool proven;
};

struct nfs_limits_list {
	struct nfs_limits_node *head, *tail;
};

struct nfs_limits {
	struct nfs_srv_limits cfg;
	struct nfs_limits_list fresh, live;
	unsigned n;
	struct nfs_limits_ip *tab[NFS_LIMITS_HASH];
};

/* What the module asks of the connections it tracks. */
struct nfs_limits_ops {
	bool (*busy)(struct nfs_limits_node *nd);     /* calls outstanding */
	bool (*started)(struct nfs_limits_node *nd);  /* a call partly received */
	void (*close)(struct nfs_limits_node *nd, void *ctx);
};

/* Caller's storage; cfg is copied. */
void nfs_limits_init(struct nfs_limits *l, const struct nfs_srv_limits *cfg);
/* Frees the per-address counts; every node must be deleted first. */
void nfs_limits_cleanup(struct nfs_limits *l);
/* Make room for a connection from peer, closing one idle connection if a
 * limit is reached. false: refuse it. */
bool nfs_limits_admit(struct nfs_limits *l, const struct sockaddr_storage *peer, const struct nfs_limits_ops *ops,
		      void *ctx);
/* Track nd (a connection from peer accepted at now). -ENOMEM, or 0. */
int nfs_limits_add(struct nfs_limits *l, struct nfs_limits_node *nd, const struct sockaddr_storage *peer,
		   uint64_t now);
void nfs_limits_del(struct nfs_limits *l, struct nfs_limits_node *nd);
/* Bytes arrived on nd at now. */
void nfs_limits_seen(struct nfs_limits *l, struct nfs_limits_node *nd, uint64_t now);
/* A whole call arrived on nd at now. */
void nfs_limits_call(struct nfs_limits *l, struct nfs_limits_node *nd, uint64_t now);
/* Close (ops->close) every connection whose time ran out at now. */
void nfs_limits_sweep(struct nfs_limits *l, uint64_t now, const struct nfs_limits_ops *ops, void *ctx);
/* Some tracked connection, or NULL when there is none (to close them all). */
struct nfs_limits_node *nfs_limits_any(const struct nfs_limits *l);

#endif
