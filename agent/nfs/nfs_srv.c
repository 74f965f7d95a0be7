/* nfs_srv: sockets, record reassembly, worker pool, dispatch and the
 * duplicate-request cache of the embedded NFS server; see nfs_srv.h.
 *
 * Ownership: the loop thread owns every connection's read side (its record
 * assembler) and the list of connections. Each queued request holds a
 * reference on its connection; the descriptor is closed only when the last
 * reference goes, so a worker never writes to a reused descriptor.
 *
 * Cold reads: a READ whose range touches the cold tier would hold a worker
 * for an object-store round trip (10 ms and more). The worker defers it
 * instead, like a QoS-parked request: the request goes to the cold pool
 * (NFS_SRV_COLD_WORKERS threads that may block on the store, each serving
 * one deferred request at a time, and only those) and the worker moves on.
 * The cold pool serves it again from the start and sends the reply when the
 * data arrived, so hot calls never wait behind cold ones.
 *
 * Connection limits (issue 15): the loop thread asks nfs_limits.h at every
 * accept (room, or the oldest idle connection closed for it), tells it of
 * every read and whole call, and sweeps its time-outs once a second. A
 * connection closed while other events of the same epoll batch may still
 * name it is only released after the batch (the loop's graveyard).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs_srv.h"

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
/* Threads serving deferred cold READs: bounds the cold reads waiting for the
 * store at once (Little's law: 64 per store round trip). */
#define NFS_SRV_COLD_WORKERS 64

struct nfs_conn {
	atomic_int refs;
	int fd;
	struct sockaddr_storage peer;
	struct rpc_rec rec;            /* loop thread only */
	pthread_mutex_t mu;            /* inflight, paused */
	pthread_mutex_t omu;           /* outq, sending */
	struct nfs_reply *outq, *outq_tail;
	bool sending;                  /* a worker is writing; others only queue */
	atomic_bool dead;              /* a send failed: drop further replies */
	int inflight;
	bool paused;
	bool closed;                   /* loop thread only */
	struct nfs_limits_node lim;    /* loop thread: limits and time-outs */
	struct nfs_conn *dead_next;    /* loop thread's graveyard */
};

struct nfs_req {
	struct nfs_conn *conn;
	uint8_t *rec;
	size_t len;
	struct nfs_req *next;
	bool admitted;                 /* QoS charged it already (was parked) */
	bool cold;                     /* on the cold pool: serve it, may block */
	struct qos_item qi;
};

/* A reply on its way to the socket; owns everything it sends. */
struct nfs_reply {
	struct nfs_reply *next;
	struct xdr_buf buf;            /* 4-byte mark + encoded header */
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

struct nfs_srv {
	char host[128];
	uint16_t port;
	unsigned nworkers;
	struct vol_store *store;
	uint8_t wverf[8];
	int lfd, epfd, evfd;
	bool started;
	atomic_bool stopping;
	pthread_t loop;
	pthread_t *workers;
	/* work queue */
	pthread_mutex_t qmu;
	pthread_cond_t qcv;
	struct nfs_req *qhead, *qtail;
	bool qstop;
	/* cold pool (deferred cold READs) */
	pthread_mutex_t cmu;
	pthread_cond_t ccv;
	struct nfs_req *chead, *ctail;
	bool cstop;
	pthread_t cold[NFS_SRV_COLD_WORKERS];
	unsigned ncold;
	_Atomic size_t queued_bytes;
	/* connections (loop thread) */
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

/* ---------- connections ---------- */

static uint64_t now_ns(void);

static void conn_unref(struct nfs_conn *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	close(c->fd);
	rpc_rec_cleanup(&c->rec);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->omu);
	free(c);
}

/* Stop reading c and drop the loop's hold on it; it is released after the
 * current epoll batch (conn_reap), which may still name it. */
static void conn_close(struct nfs_srv *srv, struct nfs_conn *c)
{
	if (c->closed)
		return;
	c->closed = true;
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	shutdown(c->fd, SHUT_RDWR);
	nfs_limits_del(&srv->lim, &c->lim);
	c->dead_next = srv->dead;
	srv->dead = c;
}

static void conn_reap(struct nfs_srv *srv)
{
	while (srv->dead) {
		struct nfs_conn *c = srv->dead;

		srv->dead = c->dead_next;
		conn_unref(c);
	}
}

/* What nfs_limits asks of a connection. */
static struct nfs_conn *lim_conn(struct nfs_limits_node *nd)
{
	return (struct nfs_conn *)(void *)((char *)nd - offsetof(struct nfs_conn, lim));
}

static bool lim_busy(struct nfs_limits_node *nd)
{
	struct nfs_conn *c = lim_conn(nd);
	bool busy;

	pthread_mutex_lock(&c->mu);
	busy = c->inflight > 0;
	pthread_mutex_unlock(&c->mu);
	return busy;
}

static bool lim_started(struct nfs_limits_node *nd)
{
	return rpc_rec_started(&lim_conn(nd)->rec);
}

static void lim_close(struct nfs_limits_node *nd, void *srv)
{
	conn_close(srv, lim_conn(nd));
}

static const struct nfs_limits_ops lim_ops = {
	.busy = lim_busy,
	.started = lim_started,
	.close = lim_close,
};

/* Out of descriptors: accept the next connection with the spare one and
 * close it at once, so that it leaves the backlog (a level-triggered
 * listener would wake the loop for it forever). */
static void conn_refuse_nofd(struct nfs_srv *srv)
{
	int fd;

	if (srv->spare_fd < 0)
		return;
	close(srv->spare_fd);
	if ((fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(fd);
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void conn_accept(struct nfs_srv *srv)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(srv->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct nfs_conn *c;
		struct epoll_event ev = {.events = EPOLLIN};
		int one = 1;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				conn_refuse_nofd(srv);
			return;
		}
		/* at a limit the oldest idle connection in its scope makes room */
		if (!nfs_limits_admit(&srv->lim, &ss, &lim_ops, srv) || !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		atomic_init(&c->refs, 1);
		c->fd = fd;
		c->peer = ss;
		rpc_rec_init(&c->rec, RPC_REC_MAX);
		pthread_mutex_init(&c->mu, NULL);
		pthread_mutex_init(&c->omu, NULL);
		ev.data.ptr = c;
		if (nfs_limits_add(&srv->lim, &c->lim, &ss, now_ns()) != 0) {
			conn_unref(c);
			continue;
		}
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			nfs_limits_del(&srv->lim, &c->lim);
			conn_unref(c);
			continue;
		}
	}
}

static void queue_push(struct nfs_srv *srv, struct nfs_req *r)
{
	pthread_mutex_lock(&srv->qmu);
	r->next = NULL;
	if (srv->qtail)
		srv->qtail->next = r;
	else
		srv->qhead = r;
	srv->qtail = r;
	pthread_cond_signal(&srv->qcv);
	pthread_mutex_unlock(&srv->qmu);
}

/* A whole record arrived: hand it to the workers. Returns false when the
 * connection has as many requests in flight as allowed (reading pauses). */
static bool conn_dispatch(struct nfs_srv *srv, struct nfs_conn *c)
{
	struct nfs_req *r = calloc(1, sizeof(*r));
	bool more = true;
	size_t queued;

	if (!r) {
		size_t l;

		free(rpc_rec_take(&c->rec, &l));
		return true;
	}
	r->rec = rpc_rec_take(&c->rec, &r->len);
	r->conn = c;
	nfs_limits_call(&srv->lim, &c->lim, now_ns());
	atomic_fetch_add(&c->refs, 1);
	queued = atomic_fetch_add(&srv->queued_bytes, r->len) + r->len;
	pthread_mutex_lock(&c->mu);
	if (++c->inflight >= NFS_SRV_INFLIGHT || queued > NFS_SRV_QUEUE_BYTES) {
		struct epoll_event ev = {.events = 0, .data.ptr = c};

		c->paused = true;
		epoll_ctl(srv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		more = false;
	}
	pthread_mutex_unlock(&c->mu);
	queue_push(srv, r);
	return more;
}

/* Read what is there (bounded per wake-up for fairness). */
static void conn_read(struct nfs_srv *srv, struct nfs_conn *c)
{
	uint8_t buf[16384];
	size_t budget = 4u * NFS_SRV_READ_CHUNK;
	ssize_t last = -1;
	bool short_read = false;

	nfs_limits_seen(&srv->lim, &c->lim, now_ns());
	while (budget > 0) {
		size_t room = 0;
		uint8_t *direct = rpc_rec_direct(&c->rec, &room);
		ssize_t n;
		int rc;

		if (direct && room >= sizeof(buf)) {
			/* Large fragment body: read straight into the record. */
			size_t want = room > NFS_SRV_READ_CHUNK ? NFS_SRV_READ_CHUNK : room;

			n = recv(c->fd, direct, want, 0);
			if ((last = n) <= 0)
				goto eof;
			budget -= (size_t)n > budget ? budget : (size_t)n;
			if (rpc_rec_advance(&c->rec, (size_t)n) == RPC_REC_DONE && !conn_dispatch(srv, c))
				return;
			if ((size_t)n < want)
				return; /* drained; level-triggered epoll calls again */
			continue;
		}
		n = recv(c->fd, buf, sizeof(buf), 0);
		if ((last = n) <= 0)
			goto eof;
		short_read = (size_t)n < sizeof(buf);
		budget -= (size_t)n > budget ? budget : (size_t)n;
		{
			size_t off = 0;

			while (off < (size_t)n) {
				size_t used = 0;

				rc = rpc_rec_feed(&c->rec, buf + off, (size_t)n - off, &used);
				off += used;
				if (rc < 0) {
					conn_close(srv, c); /* oversized record: drop the peer */
					return;
				}
				if (rc == RPC_REC_DONE)
					conn_dispatch(srv, c);
			}
		}
		pthread_mutex_lock(&c->mu);
		if (c->paused) {
			pthread_mutex_unlock(&c->mu);
			return;
		}
		pthread_mutex_unlock(&c->mu);
		if (short_read)
			return; /* drained; level-triggered epoll calls again */
	}
	return;
eof:
	/* recv() == 0 is the end of the stream; -1 with EAGAIN means drained. */
	if (last == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		conn_close(srv, c);
}

static void *loop_main(void *arg)
{
	struct nfs_srv *srv = arg;
	struct epoll_event evs[64];

	while (!atomic_load(&srv->stopping)) {
		int n = epoll_wait(srv->epfd, evs, 64, 1000), i;
		uint64_t now;

		for (i = 0; i < n; i++) {
			struct nfs_conn *c = evs[i].data.ptr;

			if (c == NULL) {
				conn_accept(srv);
				continue;
			}
			if ((void *)c == (void *)&srv->evfd)
				continue;
			if (c->closed)
				continue;
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				conn_read(srv, c);
		}
		if ((now = now_ns()) - srv->swept_ns >= 1000000000ull) {
			nfs_limits_sweep(&srv->lim, now, &lim_ops, srv);
			srv->swept_ns = now;
		}
		conn_reap(srv);
	}
	for (struct nfs_limits_node *nd; (nd = nfs_limits_any(&srv->lim));)
		conn_close(srv, lim_conn(nd));
	conn_reap(srv);
	return NULL;
}

/* ---------- duplicate-request cache ---------- */

static uint64_t drc_sum(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

static void drc_addr(const struct sockaddr_storage *ss, uint8_t out[16])
{
	memset(out, 0, 16);
	if (ss->ss_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)(const void *)ss)->sin_addr, 4);
	else if (ss->ss_family == AF_INET6)
		memcpy(out, &((const struct sockaddr_in6 *)(const void *)ss)->sin6_addr, 16);
}

static unsigned drc_bucket(const uint8_t addr[16], uint32_t xid)
{
	return (unsigned)((drc_sum(addr, 16) ^ xid) % DRC_HASH);
}

static void drc_unlink(struct nfs_srv *srv, int idx)
{
	struct drc_entry *e = &srv->drc[idx];
	int *pp = &srv->drc_head[drc_bucket(e->addr, e->xid)];

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

enum { DRC_NEW = 0, DRC_BUSY = 1, DRC_REPLAY = 2 };

/* Look the call up. DRC_NEW: inserted as in progress (*slot set);
 * DRC_BUSY: the original is still running, drop this one; DRC_REPLAY:
 * reply and len receive a copy of the original reply. */
static int drc_begin(struct nfs_srv *srv, const uint8_t addr[16], uint32_t xid, uint32_t prog,
		     uint32_t proc, uint64_t sum, int *slot, uint8_t **reply, size_t *len)
{
	unsigned b = drc_bucket(addr, xid);
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
		drc_unlink(srv, i);
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
static void drc_end(struct nfs_srv *srv, int slot, uint32_t xid, const uint8_t *reply, size_t len)
{
	struct drc_entry *e = &srv->drc[slot];

	pthread_mutex_lock(&srv->drc_mu);
	if (e->state == 1 && e->xid == xid) {
		if (reply && (e->reply = malloc(len)) != NULL) {
			memcpy(e->reply, reply, len);
			e->reply_len = len;
			e->state = 2;
		} else {
			drc_unlink(srv, slot);
		}
	}
	pthread_mutex_unlock(&srv->drc_mu);
}

/* ---------- mount list ---------- */

void nfs_srv_mount_add(struct nfs_srv *srv, const char *host, const char *path)
{
	size_t i;

	pthread_mutex_lock(&srv->mnt_mu);
	for (i = 0; i < srv->nmounts; i++)
		if (!strcmp(srv->mounts[i].host, host) && !strcmp(srv->mounts[i].path, path))
			goto out;
	if (srv->nmounts < MNT_LIST_MAX) {
		snprintf(srv->mounts[srv->nmounts].host, sizeof(srv->mounts[0].host), "%s", host);
		snprintf(srv->mounts[srv->nmounts].path, sizeof(srv->mounts[0].path), "%s", path);
		srv->nmounts++;
	}
out:
	pthread_mutex_unlock(&srv->mnt_mu);
}

static void mount_del_if(struct nfs_srv *srv, const char *host, const char *path)
{
	size_t i = 0;

	pthread_mutex_lock(&srv->mnt_mu);
	while (i < srv->nmounts) {
		if (!strcmp(srv->mounts[i].host, host) && (!path || !strcmp(srv->mounts[i].path, path)))
			srv->mounts[i] = srv->mounts[--srv->nmounts];
		else
			i++;
	}
	pthread_mutex_unlock(&srv->mnt_mu);
}

void nfs_srv_mount_del(struct nfs_srv *srv, const char *host, const char *path)
{
	mount_del_if(srv, host, path);
}

void nfs_srv_mount_del_host(struct nfs_srv *srv, const char *host)
{
	mount_del_if(srv, host, NULL);
}

void nfs_srv_mount_encode(struct nfs_srv *srv, struct xdr_buf *buf)
{
	size_t i;

	pthread_mutex_lock(&srv->mnt_mu);
	for (i = 0; i < srv->nmounts; i++) {
		xdr_put_u32(buf, 1);
		xdr_put_opaque(buf, srv->mounts[i].host, (uint32_t)strlen(srv->mounts[i].host));
		xdr_put_opaque(buf, srv->mounts[i].path, (uint32_t)strlen(srv->mounts[i].path));
	}
	pthread_mutex_unlock(&srv->mnt_mu);
	xdr_put_u32(buf, 0);
}

/* ---------- replies ---------- */

/* Wait until the socket can take more, or give up. */
static bool send_wait(int fd)
{
	struct pollfd pf = {.fd = fd, .events = POLLOUT};

	return poll(&pf, 1, NFS_SRV_SEND_TIMEOUT_MS) > 0;
}

/* Send iovecs completely (bases/lens, k entries). 0 or -1. */
static int send_iov(int fd, const void *const *bases, const size_t *lens, int k, bool more)
{
	size_t total = 0, sent = 0;
	int i;

	for (i = 0; i < k; i++)
		total += lens[i];
	while (sent < total) {
		struct iovec iov[3];
		struct msghdr mh = {0};
		size_t skip = sent;
		int m = 0;
		ssize_t n;

		for (i = 0; i < k; i++) {
			if (skip >= lens[i]) {
				skip -= lens[i];
				continue;
			}
			iov[m].iov_base = (void *)((uintptr_t)bases[i] + skip);
			iov[m].iov_len = lens[i] - skip;
			skip = 0;
			m++;
		}
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)m;
		n = sendmsg(fd, &mh, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
		if (n > 0)
			sent += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && send_wait(fd))
			continue;
		else
			return -1;
	}
	return 0;
}

/* len bytes of file_fd at off with sendfile; if the file came up short
 * (truncated meanwhile), zeros keep the record's framing intact. */
static int send_file(int fd, int file_fd, uint64_t off, size_t len)
{
	static const uint8_t zeros[65536];
	off_t o = (off_t)off;

	while (len > 0) {
		ssize_t n = sendfile(fd, file_fd, &o, len);

		if (n > 0) {
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!send_wait(fd))
				return -1;
			continue;
		}
		break; /* end of file or an error on the file side */
	}
	while (len > 0) {
		const void *b[1] = {zeros};
		size_t l[1] = {len < sizeof(zeros) ? len : sizeof(zeros)};

		if (send_iov(fd, b, l, 1, true) != 0)
			return -1;
		len -= l[0];
	}
	return 0;
}

/* Send one whole record: mark + header, then dlen bytes of data (from
 * memory, or from file_fd when >= 0), then padding. 0 or -1. */
static int send_one(int fd, struct nfs_reply *r)
{
	static const uint8_t zeros[4];
	size_t dlen = r->dlen, pad = XDR_PAD(dlen) - dlen, total = r->buf.len + dlen + pad;
	uint32_t mark = 0x80000000u | (uint32_t)(total - 4);
	int rc;

	r->buf.p[0] = (uint8_t)(mark >> 24);
	r->buf.p[1] = (uint8_t)(mark >> 16);
	r->buf.p[2] = (uint8_t)(mark >> 8);
	r->buf.p[3] = (uint8_t)mark;
	if (r->file_fd >= 0 && dlen > 0) {
		const void *b[1] = {r->buf.p};
		size_t l[1] = {r->buf.len};
		const void *pb[1] = {zeros};
		size_t pl[1] = {pad};

		rc = send_iov(fd, b, l, 1, true);
		if (rc == 0)
			rc = send_file(fd, r->file_fd, r->file_off, dlen);
		if (rc == 0 && pad)
			rc = send_iov(fd, pb, pl, 1, false);
	} else {
		const void *b[3] = {r->buf.p, r->data, zeros};
		size_t l[3] = {r->buf.len, r->data ? dlen : 0, r->data ? pad : 0};

		rc = send_iov(fd, b, l, 3, false);
	}
	return rc;
}

static void reply_free(struct nfs_reply *r)
{
	xdr_buf_cleanup(&r->buf);
	free(r->data_owner);
	if (r->file_owned)
		close(r->file_fd);
	vol_obj_cleanup(&r->obj);
	free(r);
}

static void conn_inflight_done(struct nfs_srv *srv, struct nfs_conn *c);

/* Queue r on the connection. The first worker to find nobody sending
 * becomes the sender and writes queued replies one whole record at a time
 * until the queue is empty; everybody else just queues and moves on, so a
 * client that does not read its replies holds at most one worker. A reply
 * counts as in flight until it left (or was dropped). */
static void conn_send(struct nfs_srv *srv, struct nfs_conn *c, struct nfs_reply *r)
{
	pthread_mutex_lock(&c->omu);
	r->next = NULL;
	if (c->outq_tail)
		c->outq_tail->next = r;
	else
		c->outq = r;
	c->outq_tail = r;
	if (c->sending) {
		pthread_mutex_unlock(&c->omu);
		return;
	}
	c->sending = true;
	while ((r = c->outq) != NULL) {
		c->outq = r->next;
		if (!c->outq)
			c->outq_tail = NULL;
		pthread_mutex_unlock(&c->omu);
		if (!atomic_load(&c->dead) && send_one(c->fd, r) != 0) {
			atomic_store(&c->dead, true);
			shutdown(c->fd, SHUT_RDWR); /* the loop thread sees the end */
		}
		reply_free(r);
		conn_inflight_done(srv, c);
		pthread_mutex_lock(&c->omu);
	}
	c->sending = false;
	pthread_mutex_unlock(&c->omu);
}

static const struct nfs_prog *find_prog(uint32_t prog, bool *found)
{
	static const struct nfs_prog *const progs[] = {&nfs3_prog, &mnt_prog, &pmap_prog};
	size_t i;

	*found = false;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (progs[i]->prog == prog) {
			*found = true;
			return progs[i];
		}
	}
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Central checks of NFS_F_FH procedures: resolve, authorize, read-only. */
static uint32_t nfs_precheck(struct nfs_call *call, const struct nfs_proc *p, const void *args)
{
	const struct nfs_fh3 *fh = args;
	int rc = vol_fh_open(call->store, fh->data, fh->len, &call->obj);

	if (rc != 0)
		return nfs3_status(rc);
	call->access = vol_authorize(call->obj.exp, call->peer, VOL_PROTO_NFSV3, &call->cred, &call->ecred);
	if (call->access == VOL_ACCESS_NONE)
		return NFS3ERR_ACCES;
	if ((p->flags & NFS_F_MODIFIES) && call->access != VOL_ACCESS_RW)
		return NFS3ERR_ROFS;
	return NFS3_OK;
}

/* Serve one call; true if a reply was handed to conn_send. */
static bool serve(struct nfs_srv *srv, struct nfs_req *req)
{
	struct nfs_reply *reply = NULL;
	bool replied = false;
	struct rpc_call rc;
	struct xdr_buf out = {0};
	struct xdr_cur cur;
	struct nfs_call call;
	const struct nfs_prog *prog;
	const struct nfs_proc *p = NULL;
	void *args = NULL, *res = NULL;
	uint8_t addr[16], *cached = NULL;
	size_t clen = 0;
	int slot = -1, st;
	bool found;
	uint64_t t0 = now_ns();

	memset(&call, 0, sizeof(call));
	call.obj.fd = -1;
	call.file_fd = -1;
	call.may_defer = !req->cold;
	if (xdr_buf_init(&out, 512, NFS_SRV_REPLY_MAX) != 0)
		goto out;
	xdr_put_raw(&out, 4); /* record mark */
	st = rpc_call_parse(req->rec, req->len, &rc);
	switch (st) {
	case RPC_PARSE_OK:
		break;
	case RPC_PARSE_RPC_MISMATCH:
		rpc_reply_rpc_mismatch(&out, rc.xid);
		goto send;
	case RPC_PARSE_BADCRED:
		rpc_reply_auth_error(&out, rc.xid, RPC_AUTH_BADCRED);
		goto send;
	case RPC_PARSE_TOOWEAK:
		rpc_reply_auth_error(&out, rc.xid, RPC_AUTH_TOOWEAK);
		goto send;
	default:
		goto out; /* not a call: nothing to answer */
	}
	prog = find_prog(rc.prog, &found);
	if (!found) {
		rpc_reply_accepted(&out, rc.xid, RPC_PROG_UNAVAIL);
		goto send;
	}
	if (rc.vers != prog->vers) {
		rpc_reply_prog_mismatch(&out, rc.xid, prog->vers, prog->vers);
		goto send;
	}
	if (rc.proc >= prog->nprocs || !prog->procs[rc.proc].handler) {
		rpc_reply_accepted(&out, rc.xid, RPC_PROC_UNAVAIL);
		goto send;
	}
	p = &prog->procs[rc.proc];

	call.srv = srv;
	call.store = srv->store;
	call.peer = (const struct sockaddr *)&req->conn->peer;
	call.port = srv->port;
	call.wverf = srv->wverf;
	call.rcred = rc.cred;
	if (rc.cred.flavor == RPC_AUTH_SYS) {
		call.cred.uid = rc.cred.uid;
		call.cred.gid = rc.cred.gid;
		call.cred.ngids = rc.cred.ngids;
		memcpy(call.cred.gids, rc.cred.gids, sizeof(call.cred.gids));
	} else {
		call.cred.uid = call.cred.gid = 65534;
	}

	if (p->flags & NFS_F_NOT_IDEMPOTENT) {
		drc_addr(&req->conn->peer, addr);
		switch (drc_begin(srv, addr, rc.xid, rc.prog, rc.proc, drc_sum(rc.args, rc.args_len),
				  &slot, &cached, &clen)) {
		case DRC_BUSY:
			goto out;
		case DRC_REPLAY:
			out.len = 4; /* keep the mark slot */
			xdr_put_fixed(&out, cached, clen);
			goto send;
		default:
			break;
		}
	}
	args = calloc(1, p->args_size);
	res = calloc(1, p->res_size);
	if (!args || !res) {
		rpc_reply_accepted(&out, rc.xid, RPC_SYSTEM_ERR);
		goto send;
	}
	xdr_cur_init(&cur, rc.args, rc.args_len);
	if (p->decode(&cur, args) != 0) {
		rpc_reply_accepted(&out, rc.xid, RPC_GARBAGE_ARGS);
		goto send;
	}
	if (p->flags & NFS_F_FH) {
		uint32_t status = nfs_precheck(&call, p, args);

		if (status != NFS3_OK)
			*(uint32_t *)res = status; /* encoders write the failure arm */
		else
			p->handler(&call, args, res);
	} else {
		p->handler(&call, args, res);
	}
	if (call.deferred) {
		req->cold = true; /* worker_main hands it to the cold pool */
		goto out;
	}
	rpc_reply_accepted(&out, rc.xid, RPC_SUCCESS);
	p->encode(&out, res, &call);
	if (out.err) {
		/* Result did not fit or no memory: answer SYSTEM_ERR. */
		xdr_buf_cleanup(&out);
		if (xdr_buf_init(&out, 64, 64) != 0)
			goto out;
		xdr_put_raw(&out, 4);
		rpc_reply_accepted(&out, rc.xid, RPC_SYSTEM_ERR);
		free(call.data_owner);
		call.data_owner = NULL;
		call.data = NULL;
		call.data_len = 0;
		if (call.file_owned)
			close(call.file_fd);
		call.file_fd = -1;
		call.file_owned = false;
	}
	if (prog == &nfs3_prog && call.obj.exp)
		vol_export_record(call.obj.exp, rc.proc, call.io_bytes, now_ns() - t0,
				  *(uint32_t *)res != NFS3_OK);
send:
	if (out.err)
		goto out;
	if (slot >= 0) {
		drc_end(srv, slot, rc.xid, out.p + 4, out.len - 4);
		slot = -1;
	}
	if (!(reply = calloc(1, sizeof(*reply))))
		goto out;
	/* The reply takes over the buffer, the data and the object. */
	reply->buf = out;
	memset(&out, 0, sizeof(out));
	reply->data_owner = call.data_owner;
	reply->data = call.data;
	reply->dlen = call.data_len;
	reply->file_fd = call.file_fd;
	reply->file_off = call.file_off;
	reply->file_owned = call.file_owned;
	reply->obj = call.obj;
	call.data_owner = NULL;
	call.file_owned = false;
	call.obj.fd = -1;
	call.obj.fent = NULL;
	call.obj.exp = NULL;
	conn_send(srv, req->conn, reply);
	replied = true;
out:
	if (slot >= 0)
		drc_end(srv, slot, rc.xid, NULL, 0);
	if (p && p->free && res)
		p->free(res);
	free(args);
	free(res);
	free(cached);
	free(call.data_owner);
	if (call.file_owned)
		close(call.file_fd);
	vol_obj_cleanup(&call.obj);
	xdr_buf_cleanup(&out);
	return replied;
}

/* QoS before any work (issue 5): an NFSv3 call on a file handle is charged
 * to its volume and, when the volume (or its FLEX pool) has no tokens left,
 * parked there instead of served: the worker moves on to other requests and
 * the QoS timer puts this one back on the queue when it is due. Connections
 * are the fairness key. true if parked. */
static bool qos_gate(struct nfs_srv *srv, struct nfs_req *req)
{
	const struct nfs_proc *p;
	struct rpc_call rc;
	struct xdr_cur cur;
	void *args = NULL;
	enum qos_kind kind = QOS_META;
	uint64_t bytes = 0;
	bool parked = false;

	if (req->admitted || rpc_call_parse(req->rec, req->len, &rc) != RPC_PARSE_OK ||
	    rc.prog != nfs3_prog.prog || rc.vers != nfs3_prog.vers || rc.proc >= nfs3_prog.nprocs)
		return false;
	p = &nfs3_prog.procs[rc.proc];
	if (!p->handler || !(p->flags & NFS_F_FH) || !(args = calloc(1, p->args_size)))
		return false;
	xdr_cur_init(&cur, rc.args, rc.args_len);
	if (p->decode(&cur, args) != 0)
		goto out; /* GARBAGE_ARGS is answered by serve() */
	if (rc.proc == NFS3_READ) {
		kind = QOS_READ;
		bytes = ((const struct nfs3_read_args *)args)->count;
	} else if (rc.proc == NFS3_WRITE) {
		kind = QOS_WRITE;
		bytes = ((const struct nfs3_write_args *)args)->len;
	}
	parked = vol_admit(srv->store, ((const struct nfs_fh3 *)args)->data,
			   ((const struct nfs_fh3 *)args)->len, (uint64_t)(uintptr_t)req->conn, kind, bytes,
			   &req->qi) == QOS_PARKED;
out:
	free(args);
	return parked;
}

/* The QoS timer releases a parked request: back to the workers. */
static void qos_release(void *arg, struct qos_item *it)
{
	struct nfs_req *req = (struct nfs_req *)(void *)((char *)it - offsetof(struct nfs_req, qi));

	req->admitted = true;
	queue_push(arg, req);
}

static void conn_inflight_done(struct nfs_srv *srv, struct nfs_conn *c)
{
	pthread_mutex_lock(&c->mu);
	c->inflight--;
	if (c->paused && c->inflight < NFS_SRV_INFLIGHT / 2) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

		c->paused = false;
		epoll_ctl(srv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	}
	pthread_mutex_unlock(&c->mu);
}

/* The worker is done with req; its reply (if any) counts in flight until
 * conn_send wrote it. */
static void req_done(struct nfs_srv *srv, struct nfs_req *req, bool replied)
{
	struct nfs_conn *c = req->conn;

	if (!replied)
		conn_inflight_done(srv, c);
	atomic_fetch_sub(&srv->queued_bytes, req->len);
	conn_unref(c);
	free(req->rec);
	free(req);
}

static void cold_push(struct nfs_srv *srv, struct nfs_req *r)
{
	pthread_mutex_lock(&srv->cmu);
	r->next = NULL;
	if (srv->ctail)
		srv->ctail->next = r;
	else
		srv->chead = r;
	srv->ctail = r;
	pthread_cond_signal(&srv->ccv);
	pthread_mutex_unlock(&srv->cmu);
}

static void *worker_main(void *arg)
{
	struct nfs_srv *srv = arg;

	for (;;) {
		struct nfs_req *r;
		bool replied;

		pthread_mutex_lock(&srv->qmu);
		while (!srv->qhead && !srv->qstop)
			pthread_cond_wait(&srv->qcv, &srv->qmu);
		r = srv->qhead;
		if (r) {
			srv->qhead = r->next;
			if (!srv->qhead)
				srv->qtail = NULL;
		}
		pthread_mutex_unlock(&srv->qmu);
		if (!r)
			break; /* stopping and drained */
		if (qos_gate(srv, r))
			continue; /* parked: qos_release queues it again */
		replied = serve(srv, r);
		if (r->cold && !replied) {
			cold_push(srv, r); /* deferred: cold data */
			continue;
		}
		req_done(srv, r, replied);
	}
	return NULL;
}

/* The cold pool: serves deferred READs, waiting for the store. */
static void *cold_main(void *arg)
{
	struct nfs_srv *srv = arg;

	for (;;) {
		struct nfs_req *r;

		pthread_mutex_lock(&srv->cmu);
		while (!srv->chead && !srv->cstop)
			pthread_cond_wait(&srv->ccv, &srv->cmu);
		r = srv->chead;
		if (r) {
			srv->chead = r->next;
			if (!srv->chead)
				srv->ctail = NULL;
		}
		pthread_mutex_unlock(&srv->cmu);
		if (!r)
			break; /* stopping and drained */
		req_done(srv, r, serve(srv, r));
	}
	return NULL;
}

/* ---------- public API ---------- */

static int parse_listen(const char *listen, char *host, size_t hcap, uint16_t *port)
{
	const char *colon = strrchr(listen, ':');
	const char *h = listen;
	size_t hl;
	char *end;
	long p;

	if (!colon)
		return -EINVAL;
	hl = (size_t)(colon - listen);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0 || hl >= hcap)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || p < 0 || p > 65535)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

int nfs_srv_new(const char *listen, struct vol_store *store, unsigned workers, struct nfs_srv **out)
{
	struct nfs_srv *srv;
	int rc, i;

	if (!store)
		return -EINVAL;
	if (!(srv = calloc(1, sizeof(*srv))))
		return -ENOMEM;
	srv->lfd = srv->epfd = srv->evfd = srv->spare_fd = -1;
	srv->limits = (struct nfs_srv_limits)NFS_SRV_LIMITS_DEFAULT;
	if ((rc = parse_listen(listen, srv->host, sizeof(srv->host), &srv->port)) != 0)
		goto out;
	srv->store = store;
	srv->nworkers = workers ? workers : 8;
	/* A fresh write verifier per server run: clients that see it change
	 * resend their uncommitted writes. */
	if (getrandom(srv->wverf, sizeof(srv->wverf), 0) != (ssize_t)sizeof(srv->wverf)) {
		uint64_t t = now_ns() ^ (uint64_t)getpid();

		memcpy(srv->wverf, &t, 8);
	}
	pthread_mutex_init(&srv->qmu, NULL);
	pthread_cond_init(&srv->qcv, NULL);
	pthread_mutex_init(&srv->cmu, NULL);
	pthread_cond_init(&srv->ccv, NULL);
	pthread_mutex_init(&srv->drc_mu, NULL);
	pthread_mutex_init(&srv->mnt_mu, NULL);
	for (i = 0; i < DRC_HASH; i++)
		srv->drc_head[i] = -1;
	for (i = 0; i < DRC_SIZE; i++)
		srv->drc[i].hnext = -1;
	*out = srv;
	srv = NULL;
out:
	free(srv);
	return rc;
}

int nfs_srv_set_limits(struct nfs_srv *srv, const struct nfs_srv_limits *l)
{
	if (srv->started)
		return -EBUSY;
	if (!l->max_conns || !l->per_ip || !l->record_s || !l->idle_s)
		return -EINVAL;
	srv->limits = *l;
	return 0;
}

int nfs_srv_start(struct nfs_srv *srv)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	struct epoll_event ev = {.events = EPOLLIN};
	int one = 1, rc = 0;
	unsigned i;

	if (srv->started)
		return -EALREADY;
	if (inet_pton(AF_INET, srv->host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(srv->port);
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, srv->host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(srv->port);
		sl = sizeof(*s6);
	} else {
		return -EINVAL;
	}
	srv->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->lfd < 0)
		return -errno;
	setsockopt(srv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(srv->lfd, (struct sockaddr *)&ss, sl) != 0 || listen(srv->lfd, SOMAXCONN) != 0) {
		rc = -errno;
		goto fail;
	}
	sl = sizeof(ss);
	getsockname(srv->lfd, (struct sockaddr *)&ss, &sl);
	srv->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv->epfd < 0 || srv->evfd < 0) {
		rc = -errno;
		goto fail;
	}
	ev.data.ptr = NULL;
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev);
	ev.data.ptr = &srv->evfd;
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->evfd, &ev);
	nfs_limits_init(&srv->lim, &srv->limits);
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	srv->workers = calloc(srv->nworkers, sizeof(pthread_t));
	if (!srv->workers) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < srv->nworkers; i++)
		pthread_create(&srv->workers[i], NULL, worker_main, srv);
	srv->cstop = false;
	for (srv->ncold = 0; srv->ncold < NFS_SRV_COLD_WORKERS; srv->ncold++)
		if (pthread_create(&srv->cold[srv->ncold], NULL, cold_main, srv) != 0)
			break;
	if ((rc = vol_store_qos_start(srv->store, qos_release, srv)) != 0)
		fprintf(stderr, "nfs: QoS timer did not start (%s): limits not enforced\n", strerror(-rc));
	rc = 0;
	pthread_create(&srv->loop, NULL, loop_main, srv);
	srv->started = true;
	return 0;
fail:
	if (srv->lfd >= 0)
		close(srv->lfd);
	if (srv->epfd >= 0)
		close(srv->epfd);
	if (srv->evfd >= 0)
		close(srv->evfd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	srv->lfd = srv->epfd = srv->evfd = srv->spare_fd = -1;
	return rc;
}

uint16_t nfs_srv_port(const struct nfs_srv *srv)
{
	return srv->port;
}

void nfs_srv_stop(struct nfs_srv *srv)
{
	uint64_t one = 1;
	unsigned i;

	if (!srv || !srv->started)
		return;
	atomic_store(&srv->stopping, true);
	if (write(srv->evfd, &one, sizeof(one)) < 0) {
		/* the loop also wakes up every second */
	}
	pthread_join(srv->loop, NULL);
	vol_store_qos_stop(srv->store); /* parked requests go back to the queue */
	pthread_mutex_lock(&srv->qmu);
	srv->qstop = true;
	pthread_cond_broadcast(&srv->qcv);
	pthread_mutex_unlock(&srv->qmu);
	for (i = 0; i < srv->nworkers; i++)
		pthread_join(srv->workers[i], NULL);
	/* The workers are gone: nothing is deferred any more. */
	pthread_mutex_lock(&srv->cmu);
	srv->cstop = true;
	pthread_cond_broadcast(&srv->ccv);
	pthread_mutex_unlock(&srv->cmu);
	for (i = 0; i < srv->ncold; i++)
		pthread_join(srv->cold[i], NULL);
	srv->ncold = 0;
	free(srv->workers);
	srv->workers = NULL;
	close(srv->lfd);
	close(srv->epfd);
	close(srv->evfd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	nfs_limits_cleanup(&srv->lim);
	srv->lfd = srv->epfd = srv->evfd = srv->spare_fd = -1;
	srv->started = false;
}

const char *nfs_srv_proc_name(unsigned proc)
{
	return proc < nfs3_prog.nprocs ? nfs3_prog.procs[proc].name : NULL;
}

void nfs_srv_free(struct nfs_srv *srv)
{
	int i;

	if (!srv)
		return;
	nfs_srv_stop(srv);
	for (i = 0; i < DRC_SIZE; i++)
		free(srv->drc[i].reply);
	pthread_mutex_destroy(&srv->qmu);
	pthread_cond_destroy(&srv->qcv);
	pthread_mutex_destroy(&srv->cmu);
	pthread_cond_destroy(&srv->ccv);
	pthread_mutex_destroy(&srv->drc_mu);
	pthread_mutex_destroy(&srv->mnt_mu);
	free(srv);
}
