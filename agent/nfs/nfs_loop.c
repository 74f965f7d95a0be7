/* nfs_loop: the server loop and connection handling: epoll over the
 * sockets, accept under the connection limits (nfs_limits.h), RPC record
 * reassembly.
 *
 * Leader/follower: the loop is a role, not a thread. One worker at a time
 * holds it (srv->leading, under srv->wq.mu) and runs nfs_loop_lead; when its
 * reads complete calls it keeps the first, queues the others, hands the
 * role to an idle worker and serves its call itself, so a call is served by
 * the thread that read it, with its bytes still in that CPU's cache, and no
 * hand-off sits between the read and the reply (before, every call crossed
 * from the loop thread to a worker, and under load waited for a CPU there).
 * The calls one read of a connection brings are one run (nfs_req.run_next):
 * one queue entry, one wake-up, served in order by one worker. When the
 * leader's run is the only one and is one quick call (NFS_F_QUICK),
 * nobody is woken: the role is free and the leader takes it again when it
 * is done, so a single connection's calls cost no hand-off at all; before
 * any wait (a call that is not quick, a blocked send) the serving worker
 * wakes an idle one to take the role (nfs_dispatch_cover).
 * Only the holder of the role touches the loop's state (record assemblers,
 * limits, graveyard, srv->batch), and it never does disk I/O while it holds
 * it: the handler runs after the hand-off.
 *
 * Ownership: the role owns every connection's read side (its record
 * assembler) and the list of connections. Each queued request holds a
 * reference on its connection; the descriptor is closed only when the last
 * reference goes, so a worker never writes to a reused descriptor. A
 * connection closed while other events of the same epoll batch may still
 * name it is only released after the batch (the loop's graveyard).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs_srv_internal.h"

/* ---------- connections ---------- */

void nfs_conn_unref(struct nfs_conn *c)
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
	atomic_store(&c->dead, true); /* for those who hold it (nfs_conn_usable) */
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
		nfs_conn_unref(c);
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
		rpc_rec_budget(&c->rec, &srv->rec_ahead, NFS_SRV_REC_AHEAD);
		pthread_mutex_init(&c->mu, NULL);
		pthread_mutex_init(&c->omu, NULL);
		ev.data.ptr = c;
		if (nfs_limits_add(&srv->lim, &c->lim, &ss, ut_clock_mono_ns()) != 0) {
			nfs_conn_unref(c);
			continue;
		}
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			nfs_limits_del(&srv->lim, &c->lim);
			nfs_conn_unref(c);
			continue;
		}
	}
}

/* A whole record arrived: onto the batch the leader hands off (or serves
 * itself, nfs_loop_lead). Returns false when the
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
	nfs_limits_call(&srv->lim, &c->lim, ut_clock_mono_ns());
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
	/* calls of one read form a run, served in order by one worker */
	if (srv->run_tail)
		srv->run_tail->run_next = r;
	else
		ut_fifo_push(&srv->batch, &r->node);
	srv->run_tail = r;
	return more;
}

/* Read what is there (bounded per wake-up for fairness). */
static void conn_read(struct nfs_srv *srv, struct nfs_conn *c)
{
	uint8_t buf[16384];
	size_t budget = 4u * NFS_SRV_READ_CHUNK;
	ssize_t last = -1;
	bool short_read = false;

	nfs_limits_seen(&srv->lim, &c->lim, ut_clock_mono_ns());
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

/* Stopping: close every connection; the role is never taken again. */
static void loop_end(struct nfs_srv *srv)
{
	for (struct nfs_limits_node *nd; (nd = nfs_limits_any(&srv->lim));)
		conn_close(srv, lim_conn(nd));
	conn_reap(srv);
	pthread_mutex_lock(&srv->wq.mu);
	srv->loop_done = true;
	pthread_cond_broadcast(&srv->done_cv);
	pthread_mutex_unlock(&srv->wq.mu);
}

struct nfs_req *nfs_loop_lead(struct nfs_srv *srv)
{
	struct epoll_event evs[64];

	while (!atomic_load(&srv->stopping)) {
		int n = epoll_wait(srv->epfd, evs, 64, 1000), i;
		bool kicked = false;
		uint64_t now;

		for (i = 0; i < n; i++) {
			struct nfs_conn *c = evs[i].data.ptr;

			if (c == NULL) {
				conn_accept(srv);
				continue;
			}
			if ((void *)c == (void *)&srv->evfd) {
				uint64_t v;

				/* cleared first: a push after it writes again */
				atomic_store(&srv->kicked, false);
				if (read(srv->evfd, &v, sizeof(v)) < 0) {
					/* EAGAIN: drained by an earlier batch */
				}
				kicked = true;
				continue;
			}
			if (c->closed)
				continue;
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
				srv->run_tail = NULL;
				conn_read(srv, c);
				srv->run_tail = NULL;
			}
		}
		if ((now = ut_clock_mono_ns()) - srv->swept_ns >= 1000000000ull) {
			nfs_limits_sweep(&srv->lim, now, &lim_ops, srv);
			srv->swept_ns = now;
		}
		conn_reap(srv);
		if (!ut_fifo_empty(&srv->batch))
			return UT_FIFO_ENTRY(ut_fifo_pop(&srv->batch), struct nfs_req, node);
		if (kicked || n <= 0)
			return NULL; /* queued work and nobody idle (or a quiet
				      * second): the caller looks at the queue */
	}
	loop_end(srv);
	return NULL;
}
