/* nfs_reply: sending replies: one whole record at a time per connection,
 * in completion order, a connection's queued replies batched with
 * MSG_MORE; READ data goes straight from the page cache with sendfile, cold
 * data as its own iovec.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs_srv_internal.h"

/* ---------- replies ---------- */

/* Wait until the socket can take more, or give up. Someone else takes the
 * loop role first if nobody holds it (this worker may have kept it free). */
static bool send_wait(struct nfs_srv *srv, int fd)
{
	struct pollfd pf = {.fd = fd, .events = POLLOUT};

	nfs_dispatch_cover(srv);
	return poll(&pf, 1, NFS_SRV_SEND_TIMEOUT_MS) > 0;
}

/* Send iovecs completely (bases/lens, k entries). 0 or -1. */
static int send_iov(struct nfs_srv *srv, int fd, const void *const *bases, const size_t *lens, int k, bool more)
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
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && send_wait(srv, fd))
			continue;
		else
			return -1;
	}
	return 0;
}

/* len bytes of file_fd at off with sendfile; if the file came up short
 * (truncated meanwhile), zeros keep the record's framing intact. */
static int send_file(struct nfs_srv *srv, int fd, int file_fd, uint64_t off, size_t len)
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
			if (!send_wait(srv, fd))
				return -1;
			continue;
		}
		break; /* end of file or an error on the file side */
	}
	while (len > 0) {
		const void *b[1] = {zeros};
		size_t l[1] = {len < sizeof(zeros) ? len : sizeof(zeros)};

		if (send_iov(srv, fd, b, l, 1, true) != 0)
			return -1;
		len -= l[0];
	}
	return 0;
}

/* Send one whole record: mark + header, then dlen bytes of data (from
 * memory, or from file_fd when >= 0), then padding. more: another reply is
 * queued behind this one and goes out next, so the record's last bytes are
 * sent with MSG_MORE too and replies share segments (the last of a batch is
 * sent without it, which pushes them all). 0 or -1. */
static int send_one(struct nfs_srv *srv, int fd, struct nfs_reply *r, bool more)
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

		rc = send_iov(srv, fd, b, l, 1, true);
		if (rc == 0)
			rc = send_file(srv, fd, r->file_fd, r->file_off, dlen);
		if (rc == 0 && pad)
			rc = send_iov(srv, fd, pb, pl, 1, more);
	} else {
		const void *b[3] = {r->buf.p, r->data, zeros};
		size_t l[3] = {r->buf.len, r->data ? dlen : 0, r->data ? pad : 0};

		rc = send_iov(srv, fd, b, l, 3, more);
	}
	return rc;
}

static void reply_free(struct nfs_reply *r)
{
	ut_buf_cleanup(&r->buf);
	free(r->data_owner);
	if (r->file_owned)
		close(r->file_fd);
	vol_obj_cleanup(&r->obj);
	free(r);
}

/* Queue r on the connection. The first worker to find nobody sending
 * becomes the sender and writes queued replies one whole record at a time
 * until the queue is empty, each but the last with MSG_MORE (one batch of
 * segments, one wake-up of the client, instead of one per reply); everybody
 * else just queues and moves on, so a client that does not read its
 * replies holds at most one worker. A reply
 * counts as in flight until it left (or was dropped). */
void nfs_reply_send(struct nfs_srv *srv, struct nfs_conn *c, struct nfs_reply *r)
{
	struct ut_fifo_node *n;

	pthread_mutex_lock(&c->omu);
	ut_fifo_push(&c->outq, &r->node);
	if (c->sending) {
		pthread_mutex_unlock(&c->omu);
		return;
	}
	c->sending = true;
	while ((n = ut_fifo_pop(&c->outq)) != NULL) {
		bool more = !ut_fifo_empty(&c->outq);

		r = UT_FIFO_ENTRY(n, struct nfs_reply, node);
		pthread_mutex_unlock(&c->omu);
		if (!atomic_load(&c->dead) && send_one(srv, c->fd, r, more) != 0) {
			atomic_store(&c->dead, true);
			shutdown(c->fd, SHUT_RDWR); /* the loop sees the end */
		}
		reply_free(r);
		nfs_conn_inflight_done(srv, c);
		pthread_mutex_lock(&c->omu);
	}
	c->sending = false;
	pthread_mutex_unlock(&c->omu);
}

/* ---------- calls to clients (the NFSv4.1 backchannel) ---------- */

struct nfs_conn *nfs_call_conn_hold(const struct nfs_call *call)
{
	return nfs_conn_hold(call->conn);
}

struct nfs_conn *nfs_conn_hold(struct nfs_conn *c)
{
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

void nfs_conn_put(struct nfs_conn *c)
{
	nfs_conn_unref(c);
}

bool nfs_conn_usable(const struct nfs_conn *c)
{
	return c && !atomic_load(&((struct nfs_conn *)(uintptr_t)c)->dead);
}

uint64_t nfs_conn_id(const struct nfs_conn *c)
{
	return (uint64_t)(uintptr_t)c;
}

int nfs_conn_send_call(struct nfs_srv *srv, struct nfs_conn *c, struct ut_buf *rec)
{
	struct nfs_reply *r;

	if (rec->err || rec->len < 8) {
		ut_buf_cleanup(rec);
		return -ENOMEM;
	}
	if (atomic_load(&c->dead) || atomic_load(&srv->stopping)) {
		ut_buf_cleanup(rec);
		return -EPIPE;
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		ut_buf_cleanup(rec);
		return -ENOMEM;
	}
	r->buf = *rec;
	memset(rec, 0, sizeof(*rec));
	r->file_fd = -1;
	r->obj.fd = -1;
	/* counted in flight as a reply is: nfs_reply_send takes one off when it left */
	pthread_mutex_lock(&c->mu);
	c->inflight++;
	pthread_mutex_unlock(&c->mu);
	nfs_reply_send(srv, c, r);
	return 0;
}
