/* smb_srv: the SMB server's transport (smb_srv.h): the listener, the epoll
 * loop, direct-TCP frame reassembly with the caps of smb_wire.h checked on
 * the 4-byte length before any allocation, non-blocking output queues,
 * connection caps and set-up/idle timeouts, QoS parking, and the shares and
 * users the agent pushes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

#define SMB_SRV_LISTEN_TAG ((void *)1)
#define SMB_SRV_EVENT_TAG ((void *)2)

uint64_t smb_filetime(const struct timespec *ts)
{
	return ((uint64_t)ts->tv_sec + 11644473600ull) * 10000000ull + (uint64_t)ts->tv_nsec / 100u;
}

uint64_t smb_filetime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return smb_filetime(&ts);
}

/* The node's default cap on opens: its share of RLIMIT_NOFILE as it is now
 * (the agent raised it before making the server). */
static unsigned smb_srv_opens_default(void)
{
	struct rlimit rl;
	unsigned long n;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return SMB_SRV_OPENS_MIN;
	n = (unsigned long)rl.rlim_cur / SMB_SRV_OPENS_NOFILE_DIV;
	if (n > UINT32_MAX / 2)
		n = UINT32_MAX / 2;
	return n > SMB_SRV_OPENS_MIN ? (unsigned)n : SMB_SRV_OPENS_MIN;
}

void smb_srv_set_open_limits(struct smb_srv *srv, unsigned sess_max, unsigned node_max)
{
	if (sess_max)
		__atomic_store_n(&srv->sess_opens_max, sess_max, __ATOMIC_RELAXED);
	if (node_max)
		__atomic_store_n(&srv->opens_max, node_max, __ATOMIC_RELAXED);
}

int smb_srv_new(const char *listen, struct vol_store *store, struct smb_srv **out)
{
	struct smb_srv *srv;
	struct ut_hostport hp;
	aq_msg msg = { .text = "" };

	*out = NULL;
	if (!store || !listen || ut_hostport_parse(listen, SMB_SRV_PORT, UT_HP_PORT0, &hp, &msg) != AQ_OK)
		return -EINVAL;
	if (!(srv = calloc(1, sizeof(*srv))))
		return -ENOMEM;
	snprintf(srv->listen, sizeof(srv->listen), "%s", listen);
	srv->store = store;
	srv->lfd = srv->epfd = srv->evfd = -1;
	pthread_mutex_init(&srv->cfg_lock, NULL);
	pthread_mutex_init(&srv->rel_lock, NULL);
	RAND_bytes(srv->guid, sizeof(srv->guid));
	srv->start_time = smb_filetime_now();
	srv->sess_opens_max = SMB_SESS_OPENS_MAX;
	srv->opens_max = smb_srv_opens_default();
	*out = srv;
	return 0;
}

static void smb_cfg_clear(struct smb_cfg *c)
{
	free(c->shares);
	free(c->users);
	memset(c, 0, sizeof(*c));
}

int smb_srv_set_config(struct smb_srv *srv, const struct smb_srv_share *shares, size_t nshares,
		       const struct smb_srv_user *users, size_t nusers)
{
	struct smb_cfg n = { 0 };

	n.shares = calloc(nshares ? nshares : 1, sizeof(*n.shares));
	n.users = calloc(nusers ? nusers : 1, sizeof(*n.users));
	if (!n.shares || !n.users) {
		smb_cfg_clear(&n);
		return -ENOMEM;
	}
	if (nshares)
		memcpy(n.shares, shares, nshares * sizeof(*shares));
	if (nusers)
		memcpy(n.users, users, nusers * sizeof(*users));
	n.nshares = nshares;
	n.nusers = nusers;
	pthread_mutex_lock(&srv->cfg_lock);
	smb_cfg_clear(&srv->cfg);
	srv->cfg = n;
	pthread_mutex_unlock(&srv->cfg_lock);
	return 0;
}

size_t smb_srv_users(struct smb_srv *srv, const char *name, struct smb_srv_user *out, size_t cap)
{
	size_t i, n = 0;

	pthread_mutex_lock(&srv->cfg_lock);
	for (i = 0; i < srv->cfg.nusers && n < cap; i++)
		if (strcasecmp(srv->cfg.users[i].name, name) == 0)
			out[n++] = srv->cfg.users[i];
	pthread_mutex_unlock(&srv->cfg_lock);
	return n;
}

bool smb_srv_share(struct smb_srv *srv, const char *name, struct smb_srv_share *out)
{
	bool found = false;
	size_t i;

	pthread_mutex_lock(&srv->cfg_lock);
	for (i = 0; i < srv->cfg.nshares && !found; i++) {
		if (strcasecmp(srv->cfg.shares[i].name, name) == 0) {
			*out = srv->cfg.shares[i];
			found = true;
		}
	}
	pthread_mutex_unlock(&srv->cfg_lock);
	return found;
}

/* ---- connections ---- */
static void smb_conn_update(struct smb_conn *c)
{
	struct epoll_event ev = { .data.ptr = c };
	size_t queued = c->out_len - c->out_off + c->segs_bytes;
	bool reading = !c->is_parked && queued < SMB_SRV_OUT_PAUSE && !c->closing;

	ev.events = (reading ? EPOLLIN : 0u) | (queued ? EPOLLOUT : 0u) | EPOLLRDHUP;
	c->reading = reading;
	/* unchanged (a READ answered whole, the socket still readable): no
	 * syscall per request */
	if (c->ev_set && c->ev_mask == ev.events)
		return;
	c->ev_set = epoll_ctl(c->srv->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0;
	c->ev_mask = ev.events;
}

static void conn_seg_free(struct smb_conn *c, struct smb_out_seg *g);

void smb_conn_free(struct smb_conn *c)
{
	struct smb_srv *srv = c->srv;
	unsigned kept;
	size_t i;

	c->freeing = true;      /* its waiting requests go unanswered */
	smb_read_conn_gone(c);  /* first: its queued READs let go of their opens */
	kept = smb_sess_conn_gone(c); /* a session with another channel lives on there, with its locks */
	kept += smb_durable_conn_gone(c); /* durable opens stay, with their locks */
	while (c->sessions)
		smb_sess_free(c, c->sessions);
	smb_lease_conn_gone(c); /* breaks it carried go out again on another channel or connection of the client */
	smb_async_conn_gone(c);
	if (!kept)
		smb_lock_conn_gone(c);  /* nothing is left; a safety net */
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->nconns--;
	pthread_mutex_lock(&srv->rel_lock);
	for (i = 0; i < srv->nreleased; i++)
		if (srv->released[i] == c)
			srv->released[i] = NULL;
	pthread_mutex_unlock(&srv->rel_lock);
	UT_DEBUG("smb_srv", NULL, "connection %llu from %s closed", (unsigned long long)c->key, c->peer);
	free(c->frame);
	free(c->in_room);
	free(c->parked);
	smb_dispatch_admit_free(c);
	free(c->out);
	while (c->segs) {
		struct smb_out_seg *g = c->segs;

		c->segs = g->next;
		conn_seg_free(c, g); /* c->freeing: freed */
	}
	ut_buf_cleanup(&c->rsp);
	ut_buf_cleanup(&c->seal);
	for (i = 0; i < SMB_SRV_SEAL_SPARES; i++)
		ut_buf_cleanup(&c->seal_spare[i]);
	free(c);
}

static int smb_conn_flush(struct smb_conn *c);

static size_t conn_queued(const struct smb_conn *c)
{
	return c->out_len - c->out_off + c->segs_bytes;
}

/* g written (or dropped): its buffer is the next reply's room when that is
 * free and g's was a frame's; else freed. */
static void conn_seg_free(struct smb_conn *c, struct smb_out_seg *g)
{
	if (!c->freeing && !c->closing && !c->rsp.p && g->b.p && g->b.max == SMB_WIRE_FRAME_MAX) {
		ut_buf_reset(&g->b);
		c->rsp = g->b;
	} else if (!c->freeing && !c->closing && g->b.p && g->b.max == SMB_SRV_SEAL_MAX) {
		/* an encrypted reply's: the next one's room, or a spare (with
		 * pipelined READs several are queued at once: each freed one
		 * would be a new buffer's page faults for the next) */
		struct ut_buf *to = c->seal.p ? NULL : &c->seal;

		for (unsigned i = 0; !to && i < SMB_SRV_SEAL_SPARES; i++)
			if (!c->seal_spare[i].p)
				to = &c->seal_spare[i];
		ut_buf_reset(&g->b);
		if (to)
			*to = g->b;
		else
			ut_buf_cleanup(&g->b);
	} else {
		ut_buf_cleanup(&g->b);
	}
	free(g);
}

/* Queue the rest of a frame, sent bytes of its prefix and payload already
 * written, as a segment: in own's buffer (taken) or a copy of payload. */
static void conn_seg_add(struct smb_conn *c, const uint8_t pfx[4], const uint8_t *payload, size_t len, size_t sent,
			 struct ut_buf *own)
{
	struct smb_out_seg *g = calloc(1, sizeof(*g));

	if (!g) {
		c->closing = true;
		return;
	}
	memcpy(g->pfx, pfx, 4);
	g->off = sent;
	if (own) {
		g->b = *own;
		ut_buf_init(own, own->max);
	} else if (ut_buf_init(&g->b, len), ut_buf_add(&g->b, payload, len) != AQ_OK) {
		ut_buf_cleanup(&g->b);
		free(g);
		c->closing = true;
		return;
	}
	if (c->segs_tail)
		c->segs_tail->next = g;
	else
		c->segs = g;
	c->segs_tail = g;
	c->segs_bytes += 4 + len - sent;
}

/* Append one direct-TCP frame (length prefix and payload). Replies queued
 * before go first: what the socket takes of them now is written. With
 * nothing queued then, the socket gets it at once from the caller's buffer
 * (one sendmsg, no copy); only what the socket does not take now is queued:
 * copied into c->out, or (own, its rest SMB_SRV_OUT_TAKE or more, or replies
 * queued as segments already) as a segment of its own. */
static void conn_send(struct smb_conn *c, const uint8_t *payload, size_t len, struct ut_buf *own)
{
	uint8_t pfx[4] = { 0, (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len };
	size_t need, sent = 0;

	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	/* with a client that pipelines its READs the queue is seldom empty
	 * when the next reply is ready */
	if (conn_queued(c) && !c->closing && smb_conn_flush(c) != 0) {
		c->closing = true;
		return;
	}
	if (conn_queued(c) == 0 && !c->closing) {
		struct iovec iov[2] = { { pfx, 4 }, { (void *)(uintptr_t)payload, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		ssize_t n;

		do
			n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			c->closing = true;
			return;
		}
		sent = n > 0 ? (size_t)n : 0;
		if (sent == 4 + len)
			return;
	}
	if (c->segs || (own && 4 + len - sent >= SMB_SRV_OUT_TAKE)) {
		conn_seg_add(c, pfx, payload, len, sent, own);
		return;
	}
	if (sent < 4) { /* the prefix, or what the socket left of it */
		need = c->out_len + 4 - sent + len;
	} else {
		payload += sent - 4;
		len -= sent - 4;
		need = c->out_len + len;
	}
	if (need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 65536;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		if (!(p = realloc(c->out, cap))) {
			c->closing = true;
			return;
		}
		c->out = p;
		c->out_cap = cap;
	}
	if (sent < 4) {
		memcpy(c->out + c->out_len, pfx + sent, 4 - sent);
		c->out_len += 4 - sent;
	}
	memcpy(c->out + c->out_len, payload, len);
	c->out_len += len;
}

void smb_conn_send(struct smb_conn *c, const uint8_t *payload, size_t len)
{
	conn_send(c, payload, len, NULL);
}

void smb_conn_send_buf(struct smb_conn *c, struct ut_buf *b)
{
	conn_send(c, ut_buf_bytes(b), b->len, b);
}

/* Write what the socket takes now: c->out, then the segments. -1: the
 * connection is gone. */
static int smb_conn_flush(struct smb_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c->out_off += (size_t)n;
	}
	/* its room stays for the next replies (the sweep gives it back) */
	c->out_off = c->out_len = 0;
	while (c->segs) {
		struct smb_out_seg *g = c->segs;
		size_t at = g->off < 4 ? 0 : g->off - 4;
		struct iovec iov[2] = { { g->pfx + (g->off < 4 ? g->off : 4), g->off < 4 ? 4 - g->off : 0 },
					{ ut_buf_bytes(&g->b) + at, g->b.len - at } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
		ssize_t n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		g->off += (size_t)n;
		c->segs_bytes -= (size_t)n;
		if (g->off == 4 + g->b.len) {
			if (!(c->segs = g->next))
				c->segs_tail = NULL;
			conn_seg_free(c, g);
		}
	}
	return 0;
}

void smb_conn_kick(struct smb_conn *c)
{
	if (!c->closing && smb_conn_flush(c) != 0)
		c->closing = true;
	smb_conn_update(c);
}

void smb_conn_in_keep(struct smb_conn *c, uint8_t *buf, size_t cap)
{
	if (buf && cap >= SMB_SRV_IN_KEEP && !c->in_room && !c->closing && !c->freeing) {
		c->in_room = buf;
		c->in_cap = cap;
		return;
	}
	free(buf);
}

/* Read what is there; -1: close. */
int smb_conn_read(struct smb_conn *c)
{
	for (int rounds = 0; rounds < 64 && !c->is_parked && !c->closing; rounds++) {
		ssize_t n;

		if (c->pfx_got < 4) {
			uint32_t flen;
			size_t max = c->authed ? SMB_WIRE_FRAME_MAX : SMB_WIRE_FRAME_MAX_PREAUTH;

			n = recv(c->fd, c->pfx + c->pfx_got, 4 - c->pfx_got, 0);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return 0;
			if (n <= 0)
				return -1;
			c->pfx_got += (size_t)n;
			if (c->pfx_got < 4)
				continue;
			if (smb_wire_frame_len(c->pfx, max, &flen) != AQ_OK) {
				UT_INFO("smb_srv", NULL, "%s: frame length refused, connection closed", c->peer);
				return -1;
			}
			if (c->in_room && c->in_cap >= flen) { /* the last big frame's pages */
				c->frame = c->in_room;
				c->frame_cap = c->in_cap;
				c->in_room = NULL;
			} else if (!(c->frame = malloc(flen))) {
				return -1;
			} else {
				c->frame_cap = flen;
			}
			c->frame_len = flen;
			c->frame_got = 0;
			continue;
		}
		n = recv(c->fd, c->frame + c->frame_got, c->frame_len - c->frame_got, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0)
			return -1;
		c->frame_got += (uint32_t)n;
		c->last = time(NULL);
		if (c->frame_got == c->frame_len) {
			uint8_t *f = c->frame;

			c->frame = NULL;
			c->pfx_got = 0;
			smb_dispatch_recv_cap(c, f, c->frame_len, c->frame_cap); /* served, or parked until QoS admits it */
		}
	}
	return 0;
}

static void smb_srv_accept(struct smb_srv *srv)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
		struct smb_conn *c, *o;
		unsigned same = 0, preauth = 0;
		int one = 1, fd = accept4(srv->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (!(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->srv = srv;
		c->key = ++srv->next_key;
		c->credits = 1;
		c->accepted = c->last = time(NULL);
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&ss;

			c->peer_ip = in->sin_addr.s_addr;
			inet_ntop(AF_INET, &in->sin_addr, c->peer, sizeof(c->peer));
		} else {
			snprintf(c->peer, sizeof(c->peer), "v6");
		}
		/* from one address: SMB_SRV_PER_IP not yet authenticated (a
		 * flood), more once they are (a multichannel client binds up
		 * to SMB_SESS_MAX_CHANNELS per session) */
		for (o = srv->conns; o; o = o->next)
			if (o->peer_ip == c->peer_ip) {
				same++;
				preauth += !o->authed;
			}
		if (srv->nconns >= SMB_SRV_MAX_CONNS || preauth >= SMB_SRV_PER_IP || same >= SMB_SRV_PER_IP_ALL) {
			UT_WARN("smb_srv", NULL, "%s: connection refused (limit)", c->peer);
			close(fd);
			free(c);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		ev.data.ptr = c;
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			free(c);
			continue;
		}
		c->reading = true;
		c->next = srv->conns;
		if (srv->conns)
			srv->conns->prev = c;
		srv->conns = c;
		srv->nconns++;
	}
}

/* The QoS timer hands a parked frame back (its own thread). */
void smb_srv_release(void *arg, struct qos_item *it)
{
	struct smb_conn *c = (struct smb_conn *)((char *)it - offsetof(struct smb_conn, qi));
	struct smb_srv *srv = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&srv->rel_lock);
	if (srv->nreleased == srv->released_cap) {
		size_t cap = srv->released_cap ? srv->released_cap * 2 : 16;
		struct smb_conn **p = realloc(srv->released, cap * sizeof(*p));

		if (p) {
			srv->released = p;
			srv->released_cap = cap;
		}
	}
	if (srv->nreleased < srv->released_cap)
		srv->released[srv->nreleased++] = c;
	pthread_mutex_unlock(&srv->rel_lock);
	if (write(srv->evfd, &one, sizeof(one)) < 0)
		UT_WARN("smb_srv", NULL, "cannot wake the loop: %s", strerror(errno));
}

static void smb_srv_released(struct smb_srv *srv)
{
	uint64_t v;

	if (read(srv->evfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&srv->rel_lock);
	while (srv->nreleased) {
		struct smb_conn *c = srv->released[--srv->nreleased];

		pthread_mutex_unlock(&srv->rel_lock);
		if (c && c->is_parked) {
			smb_dispatch_resume(c);
			if (smb_conn_flush(c) != 0)
				c->closing = true;
			smb_conn_update(c);
		}
		pthread_mutex_lock(&srv->rel_lock);
	}
	pthread_mutex_unlock(&srv->rel_lock);
}

/* Set-up and idle timeouts (a connection with a request waiting is not idle). */
static void smb_srv_sweep(struct smb_srv *srv)
{
	time_t now = time(NULL);
	struct smb_conn *c, *n;

	for (c = srv->conns; c; c = n) {
		n = c->next;
		if (c->is_parked)
			continue;
		if (now - c->last >= SMB_SRV_RSP_IDLE_S) { /* idle: give the rooms of big replies back */
			ut_buf_cleanup(&c->rsp);
			ut_buf_cleanup(&c->seal);
			for (unsigned i = 0; i < SMB_SRV_SEAL_SPARES; i++)
				ut_buf_cleanup(&c->seal_spare[i]);
			free(c->in_room);
			c->in_room = NULL;
			if (c->out_len == c->out_off && c->out_cap > (1u << 20)) {
				free(c->out);
				c->out = NULL;
				c->out_cap = 0;
				c->out_off = c->out_len = 0;
			}
		}
		if ((!c->authed && now - c->accepted > SMB_SRV_SETUP_S) ||
		    (now - c->last > SMB_SRV_IDLE_S && c->out_len == c->out_off && !c->segs && !c->npending)) {
			UT_INFO("smb_srv", NULL, "%s: connection closed (%s)", c->peer, c->authed ? "idle" : "set-up timeout");
			smb_conn_free(c);
		}
	}
}

static void *smb_srv_loop(void *arg)
{
	struct smb_srv *srv = arg;
	time_t swept = time(NULL);

	while (!__atomic_load_n(&srv->stop, __ATOMIC_ACQUIRE)) {
		struct epoll_event ev[64];
		int i, n = epoll_wait(srv->epfd, ev, 64,
				      smb_read_busy(srv) || srv->admit_waiting ? SMB_READ_TICK_MS : 1000);

		for (i = 0; i < n; i++) {
			struct smb_conn *c = ev[i].data.ptr;

			if (!c)
				continue; /* freed earlier in this batch */

			if (ev[i].data.ptr == SMB_SRV_LISTEN_TAG) {
				smb_srv_accept(srv);
				continue;
			}
			if (ev[i].data.ptr == SMB_SRV_EVENT_TAG) {
				smb_srv_released(srv);
				smb_async_run(srv);
				continue;
			}
			if ((ev[i].events & EPOLLIN) && smb_conn_read(c) != 0)
				c->closing = true;
			else if ((ev[i].events & (EPOLLERR | EPOLLHUP)) && !(ev[i].events & EPOLLIN))
				c->closing = true;
			if (!c->closing && smb_conn_flush(c) != 0)
				c->closing = true;
			if (c->closing && !c->is_parked) {
				/* what is queued for a peer we close is dropped */
				smb_conn_free(c);
				/* a later event of this batch may name it: drop those */
				for (int j = i + 1; j < n; j++)
					if (ev[j].data.ptr == c)
						ev[j].data.ptr = NULL;
				continue;
			}
			smb_conn_update(c);
		}
		smb_read_tick(srv); /* READs a worker has for long get their interim response */
		srv->admit_waiting = smb_dispatch_admit_tick(srv); /* and frames QoS holds */
		if (time(NULL) != swept) {
			swept = time(NULL);
			smb_srv_sweep(srv);
			smb_async_tick(srv);
		}
	}
	return NULL;
}

int smb_srv_start(struct smb_srv *srv)
{
	struct ut_hostport hp;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct epoll_event ev = { .events = EPOLLIN };
	aq_msg msg = { .text = "" };
	int one = 1, rc;

	if (srv->started)
		return -EBUSY;
	if (ut_hostport_parse(srv->listen, SMB_SRV_PORT, UT_HP_PORT0, &hp, &msg) != AQ_OK ||
	    ut_hostport_sockaddr(&hp, &ss, &sl, &msg) != AQ_OK)
		return -EINVAL;
	srv->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->lfd < 0)
		return -errno;
	setsockopt(srv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(srv->lfd, (struct sockaddr *)&ss, sl) != 0 || listen(srv->lfd, 128) != 0)
		goto fail;
	sl = sizeof(ss);
	getsockname(srv->lfd, (struct sockaddr *)&ss, &sl);
	srv->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	smb_iface_collect(srv, (const struct sockaddr *)&ss);
	if ((srv->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (srv->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		goto fail;
	ev.data.ptr = SMB_SRV_LISTEN_TAG;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev) != 0)
		goto fail;
	ev.data.ptr = SMB_SRV_EVENT_TAG;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->evfd, &ev) != 0)
		goto fail;
	if ((rc = vol_store_qos_start(srv->store)) != 0) {
		errno = -rc;
		goto fail;
	}
	if ((rc = pthread_create(&srv->thr, NULL, smb_srv_loop, srv)) != 0) {
		vol_store_qos_stop(srv->store);
		errno = rc;
		goto fail;
	}
	srv->started = true;
	UT_INFO("smb_srv", NULL, "SMB server listening on port %u", (unsigned)srv->port);
	return 0;
fail:
	rc = -errno;
	if (srv->lfd >= 0)
		close(srv->lfd);
	if (srv->epfd >= 0)
		close(srv->epfd);
	if (srv->evfd >= 0)
		close(srv->evfd);
	srv->lfd = srv->epfd = srv->evfd = -1;
	return rc;
}

uint16_t smb_srv_port(const struct smb_srv *srv)
{
	return srv->port;
}

void smb_srv_stop(struct smb_srv *srv)
{
	if (!srv || !srv->started)
		return;
	/* parked frames come back through the release callback first */
	vol_store_qos_stop(srv->store);
	__atomic_store_n(&srv->stop, true, __ATOMIC_RELEASE);
	pthread_join(srv->thr, NULL);
	smb_srv_released(srv);
	while (srv->conns)
		smb_conn_free(srv->conns);
	smb_read_stop(srv);
	close(srv->lfd);
	close(srv->epfd);
	close(srv->evfd);
	srv->lfd = srv->epfd = srv->evfd = -1;
	srv->started = false;
}

void smb_srv_free(struct smb_srv *srv)
{
	if (!srv)
		return;
	smb_srv_stop(srv);
	smb_read_stop(srv);      /* a harness's server has workers but was never started */
	smb_durable_free_all(srv);
	smb_cfg_clear(&srv->cfg);
	free(srv->released);
	pthread_mutex_destroy(&srv->cfg_lock);
	pthread_mutex_destroy(&srv->rel_lock);
	free(srv);
}
