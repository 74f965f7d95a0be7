/* nfs_srv: the embedded NFSv3 server of the agent: NFS v3 (100003), MOUNT v3
 * (100005) and PORTMAP v2 GETPORT (100000) on one TCP port.
 *
 * A pool of worker threads, leader/follower: one of them at a time holds the
 * loop role (epoll over the sockets, accept, RPC record reassembly); when it
 * has read a whole call it hands the role to an idle worker and serves that
 * call itself: decodes, runs the procedure against the volume store
 * (agent/vol/vol.h) and sends the reply (other calls read in the same batch
 * go to the queue of the pool). A connection may have up to
 * NFS_SRV_INFLIGHT requests outstanding (reading pauses beyond that, and when
 * all connections together have 256 MiB of calls queued); replies
 * may go out of order, each as one whole record, writes on one socket are
 * serialized. Non-idempotent NFS calls (CREATE, REMOVE, RENAME, ...) go through
 * a bounded duplicate-request cache keyed by (client address, xid, program,
 * procedure, checksum of the arguments).
 *
 * The server is one front end of a volume store it is handed: the caller
 * creates the store (vol_store_new), sets its exports and reads its counters
 * (vol_store_set, vol_store_stats), and frees it after the server. While
 * started, the server runs the store's QoS timer (vol_store_qos_start) so
 * that parked requests come back to its own queue.
 *
 * Connections are bounded (struct nfs_srv_limits): in all and per client
 * address; at either limit a new connection closes the oldest idle one in
 * that scope (one that never sent a whole call first, then the one longest
 * without traffic and with nothing outstanding) and is refused only when
 * there is none. A connection must deliver its first whole call within
 * record_s seconds of its accept, a call once begun must not pause longer
 * than record_s, and a connection with nothing outstanding that received
 * nothing for idle_s seconds is closed (clients reconnect when they need to).
 *
 * Large calls (1 MiB WRITEs) are received straight into a buffer of their
 * whole record (rpc_rec_budget: up to 64 MiB of room taken ahead of bytes
 * over all connections), and nfs_srv_start sets the process's glibc malloc
 * to keep such buffers on the heap for reuse (M_MMAP_THRESHOLD 4 MiB,
 * M_TRIM_THRESHOLD 64 MiB: up to 64 MiB of freed heap stays with the
 * process) instead of mapping and faulting in each one.
 *
 * A program may also call its clients on their own connections (the
 * NFSv4.1 backchannel, nfs_prog.h: nfs_conn_send_call); the REPLY records
 * that come back on a connection go to the programs' reply hooks.
 *
 * All functions are thread-safe. Errors are negative errno values. The
 * process must ignore SIGPIPE (the agent does): READ data goes out with
 * sendfile, which has no MSG_NOSIGNAL, and a peer may close meanwhile.
 */
#ifndef AQ_AGENT_NFS_SRV_H
#define AQ_AGENT_NFS_SRV_H

#include <stddef.h>
#include <stdint.h>

#include "agent/vol/vol.h"

#define NFS_SRV_INFLIGHT 64       /* outstanding requests per connection */
#define NFS_SRV_MAX_PROGS 8       /* RPC programs (and versions) one port serves */

struct nfs_srv_limits {
	unsigned max_conns;       /* connections at once */
	unsigned per_ip;          /* connections from one client address */
	unsigned record_s;        /* first whole call after accept; pause inside a call */
	unsigned idle_s;          /* silence, nothing outstanding (knfsd: 6 min) */
};

#define NFS_SRV_LIMITS_DEFAULT { .max_conns = 4096, .per_ip = 64, .record_s = 10, .idle_s = 360 }

struct nfs_srv;

/* Create a server that will listen on "HOST:PORT" (IPv4 literal or "[v6]";
 * port 0 picks a free one) and serve store (borrowed: it must outlive the
 * server; -EINVAL when NULL). workers: the threads that take the loop role
 * in turn and serve calls (0 = 8; 1 works: that thread does both).
 * Nothing is bound until nfs_srv_start(). */
int nfs_srv_new(const char *listen, struct vol_store *store, unsigned workers, struct nfs_srv **out);
/* Connection limits (the defaults above until called); before nfs_srv_start.
 * -EINVAL when a field is 0, -EBUSY once started. */
int nfs_srv_set_limits(struct nfs_srv *srv, const struct nfs_srv_limits *l);
/* Serve one more RPC program on the port (agent/nfs/nfs_prog.h: a table of
 * procedures; the NFSv4 front end, agent/nfs4/, registers program 100003
 * version 4 here), before nfs_srv_start. Calls of (prog, vers) reach its
 * handlers with call->ctx = ctx; a known program asked for another version
 * answers PROG_MISMATCH with the lowest and highest served. -EBUSY once
 * started, -EEXIST for a (prog, vers) served already, -ENOSPC past
 * NFS_SRV_MAX_PROGS. */
struct nfs_prog;
int nfs_srv_add_prog(struct nfs_srv *srv, const struct nfs_prog *prog, void *ctx);
/* Bind, listen and start the threads. */
int nfs_srv_start(struct nfs_srv *srv);
/* The bound port (after start). */
uint16_t nfs_srv_port(const struct nfs_srv *srv);
/* Stop serving: close the listener and every connection, join the threads.
 * Idempotent; nfs_srv_free calls it. */
void nfs_srv_stop(struct nfs_srv *srv);
/* Name of NFSv3 procedure number proc ("READ"), or NULL. */
const char *nfs_srv_proc_name(unsigned proc);
/* Stop and release; accepts NULL. */
void nfs_srv_free(struct nfs_srv *srv);

#endif
