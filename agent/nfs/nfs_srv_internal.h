/* nfs_srv_internal: what the files of the NFS server share (nfs_srv.c,
 * nfs_loop.c, nfs_dispatch.c, nfs_reply.c, nfs_drc.c): the server, connection,
 * request and reply structs and the functions one file offers the others.
 * Not part of the contract (nfs_srv.h).
 */
#ifndef AQ_AGENT_NFS_SRV_INTERNAL_H
#define AQ_AGENT_NFS_SRV_INTERNAL_H

#include "agent/nfs/nfs_srv.h"
#include "util/ut_clock.h"
#include "util/ut_fifo.h"
#include "util/ut_hash.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "agent/nfs/mnt.h"
#include "agent/nfs/nfs3.h"
#include "agent/nfs/nfs_limits.h"
#include "agent/nfs/nfs_prog.h"
#include "agent/nfs/rpc.h"

#define NFS_SRV_READ_CHUNK (256u * 1024u)
#define NFS_SRV_SEND_TIMEOUT_MS 15000
#define NFS_SRV_REPLY_MAX (NFS3_DIRMAX + 8192u)
#define DRC_SIZE 4096
#define DRC_HASH 1024
#define MNT_LIST_MAX 256
/* Bytes of received calls queued or being served, over all connections;
 * above it, the connection that adds more pauses until its calls drain. */
#define NFS_SRV_QUEUE_BYTES (256u << 20)
/* Room taken for large fragments before their bytes came, over all
 * connections (rpc_rec_budget): 64 records of 1 MiB arrive with no copy;
 * peers that stall mid-record pin at most this. */
#define NFS_SRV_REC_AHEAD (64u << 20)
/* glibc malloc: allocations below this come from the heap (M_MMAP_THRESHOLD),
 * and up to this much free heap stays unreturned (M_TRIM_THRESHOLD). */
#define NFS_SRV_MMAP_THRESHOLD (4u << 20)
#define NFS_SRV_TRIM_THRESHOLD (64u << 20)
/* Threads serving deferred cold READs: bounds the cold reads waiting for the
 * store at once (Little's law: 64 per store round trip). */
#define NFS_SRV_COLD_WORKERS 64

struct nfs_conn {
	atomic_int refs;
	int fd;
	struct sockaddr_storage peer;
	struct rpc_rec rec;            /* loop role only */
	pthread_mutex_t mu;            /* inflight, paused */
	pthread_mutex_t omu;           /* outq, sending */
	struct ut_fifo outq;           /* of struct nfs_reply */
	bool sending;                  /* a worker is writing; others only queue */
	atomic_bool dead;              /* closed, or a send failed: drop further replies */
	int inflight;
	bool paused;
	bool closed;                   /* loop role only */
	struct nfs_limits_node lim;    /* loop role: limits and time-outs */
	struct nfs_conn *dead_next;    /* the loop's graveyard */
};

/* Where a deferred call stopped: everything serve() had built for it. */
struct nfs_job {
	struct rpc_call rc;            /* points into the request's record */
	struct ut_buf out;            /* the reply buffer, record mark slot reserved */
	struct nfs_call call;          /* resolved object, credentials, access verdict */
	const struct nfs_srv_prog *prog;
	const struct nfs_proc *p;
	void *args, *res;              /* decoded arguments, the result being built */
	int slot;                      /* DRC slot, -1 if none */
	uint64_t t0;                   /* when the call was first served (latency) */
};

struct nfs_req {
	struct nfs_conn *conn;
	uint8_t *rec;
	size_t len;
	struct ut_fifo_node node;      /* in the work queue or the cold pool's */
	/* The calls one read of a connection brought after this one (a run):
	 * the worker that takes the first serves them in order (work_run). */
	struct nfs_req *run_next;
	bool admitted;                 /* QoS charged it already (was parked) */
	bool cold;                     /* on the cold pool: serve it, may block */
	struct nfs_job *job;           /* a deferred call's state, resumed by the cold pool */
	struct qos_item qi;
};

/* A reply on its way to the socket; owns everything it sends. */
struct nfs_reply {
	struct ut_fifo_node node;      /* in its connection's outq */
	struct ut_buf buf;            /* 4-byte mark + encoded header */
	void *data_owner;
	const void *data;
	size_t dlen;
	int file_fd;
	uint64_t file_off;
	bool file_owned;
	struct vol_obj obj;            /* keeps a cached file descriptor open */
};

struct drc_entry {
	uint8_t addr[16];
	uint32_t xid, prog, proc;
	uint64_t sum;
	int state;                     /* 0 free, 1 in progress, 2 done */
	uint8_t *reply;
	size_t reply_len;
	int hnext;                     /* chain in the hash bucket, -1 = end */
};

struct mnt_entry {
	char host[64];
	char path[256];
};

struct nfs_srv_prog {
	const struct nfs_prog *prog;
	void *ctx;
};

struct nfs_srv {
	struct nfs_srv_prog progs[NFS_SRV_MAX_PROGS]; /* set before start, read-only after */
	size_t nprogs;
	struct ut_hostport listen;     /* as given (port 0: the kernel picks) */
	uint16_t port;                 /* the port bound */
	unsigned nworkers;
	struct vol_store *store;
	uint8_t wverf[8];
	int lfd, epfd, evfd;
	bool started;
	atomic_bool stopping;
	pthread_t *workers;
	/* The workers are one leader/follower pool (nfs_loop.c): wq.mu guards
	 * the queue, the role and the counts below. */
	struct ut_fifo_wq wq;          /* calls waiting for a worker */
	bool leading;                  /* a worker holds the loop role */
	/* a worker was woken and has not run yet: it takes the role if the
	 * queue is empty, so nfs_dispatch_cover wakes no second one */
	bool role_called;
	bool loop_done;                /* stopping: the loop closed every connection */
	unsigned idle;                 /* workers waiting on wq.cv */
	pthread_cond_t done_cv;        /* nfs_srv_stop waits here for loop_done */
	atomic_bool kicked;            /* evfd written for queued work, not yet read */
	struct ut_fifo batch;          /* loop role only: runs read, not yet handed off */
	struct nfs_req *run_tail;      /* loop role only: last call of the read in progress */
	struct ut_fifo_wq cold_wq;     /* the cold pool's (deferred cold READs) */
	pthread_t cold[NFS_SRV_COLD_WORKERS];
	unsigned ncold;
	_Atomic size_t queued_bytes;
	_Atomic size_t rec_ahead;      /* rpc_rec_budget of every connection */
	/* connections (loop role) */
	struct nfs_srv_limits limits;
	struct nfs_limits lim;
	struct nfs_conn *dead;         /* closed this batch, released after it */
	int spare_fd;                  /* given up to accept-and-close at EMFILE */
	uint64_t swept_ns;
	/* duplicate-request cache */
	pthread_mutex_t drc_mu;
	struct drc_entry drc[DRC_SIZE];
	int drc_head[DRC_HASH];
	int drc_next;                  /* ring position for eviction */
	/* MOUNT's list of mounts (DUMP) */
	pthread_mutex_t mnt_mu;
	struct mnt_entry mounts[MNT_LIST_MAX];
	size_t nmounts;
};

/* nfs_loop.c */
void nfs_conn_unref(struct nfs_conn *c);
/* The loop role, held by one worker at a time (srv->leading): wait for
 * events, accept, read, sweep. Returns the first whole call read, for the
 * caller to serve once it handed the role and the rest of srv->batch on
 * (nfs_dispatch_worker); NULL when work was queued for the pool (evfd),
 * after a second without events, or when stopping (every connection closed, srv->loop_done set). */
struct nfs_req *nfs_loop_lead(struct nfs_srv *srv);

/* nfs_drc.c: nfs_drc_begin answers one of these */
enum { DRC_NEW = 0, DRC_BUSY = 1, DRC_REPLAY = 2 };
void nfs_drc_addr(const struct sockaddr_storage *ss, uint8_t out[16]);
int nfs_drc_begin(struct nfs_srv *srv, const uint8_t addr[16], uint32_t xid, uint32_t prog,
	uint32_t proc, uint64_t sum, int *slot, uint8_t **reply, size_t *len);
void nfs_drc_end(struct nfs_srv *srv, int slot, uint32_t xid, const uint8_t *reply, size_t len);

/* nfs_reply.c */
void nfs_reply_send(struct nfs_srv *srv, struct nfs_conn *c, struct nfs_reply *r);

/* nfs_dispatch.c */
void nfs_dispatch_release(void *arg, struct qos_item *it);
void nfs_dispatch_push(struct nfs_srv *srv, struct nfs_req *r);
/* Before a worker may wait (a send that blocks, a call that is not quick):
 * when nobody holds the loop role, wake an idle worker to take it. */
void nfs_dispatch_cover(struct nfs_srv *srv);
void nfs_conn_inflight_done(struct nfs_srv *srv, struct nfs_conn *c);
void *nfs_dispatch_worker(void *arg);
void *nfs_dispatch_cold(void *arg);

#endif
