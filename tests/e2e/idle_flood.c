/* idle_flood: hold many idle or half-open connections against one server, for
 * tests/e2e/test_security_idle.sh. Loopback only, bounded in count and time,
 * and it stops by itself:
 *
 *   idle_flood --to 127.0.0.1:PORT --from 127.0.0.2[,127.0.0.3...] --count N
 *              --hold SECONDS --mode MODE [--body BYTES] [--request "METHOD PATH"]
 *              [--auth HEADER]
 *
 * opens N connections from each --from address (bound to it, so that per-IP
 * limits see distinct clients; Linux routes all of 127/8 locally), sends what
 * MODE says and holds them until SECONDS have passed since the start:
 *   idle   nothing at all
 *   http   the first bytes of a request head, never finished
 *   tls    the first bytes of a TLS ClientHello record, never finished
 *   rpc    an RPC record mark announcing 1 MiB and the first bytes of a call
 *   body   a request (--request "PUT /v1/intent", the default) with
 *          Content-Length BYTES (default 16 MiB) and as much of the body as
 *          the server reads, with the header --auth HEADER if given
 * A connection the server closes stays closed (no reconnect). When every
 * connect has finished (or after 5 s) it prints one line "ready"; at the end
 * (SECONDS passed, or SIGTERM/SIGINT) "tried T opened O held H closed C
 * failed F peak P" (held: still open at the end; peak: most open at once)
 * and exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FLOOD_MAX 20000
#define FLOOD_FROM_MAX 32

enum { S_CONNECTING, S_SENDING, S_HOLDING, S_CLOSED };

struct slot {
	int fd;
	int state;
	size_t sent;
};

static const char *mode = "idle";
static size_t body_bytes = 16u << 20;
static const char *auth;
static const char *request = "PUT /v1/intent";
static volatile sig_atomic_t told_to_stop;

static void on_stop(int sig)
{
	(void)sig;
	told_to_stop = 1;
}
static char head[1024];
static size_t head_len;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool loopback(const struct in_addr *a)
{
	return (ntohl(a->s_addr) >> 24) == 127;
}

/* The bytes MODE sends first (body mode: the head; the body follows). */
static void make_head(void)
{
	static const unsigned char tls[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03 };
	static const unsigned char rpc[] = { 0x80, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00 };
	int n = 0;

	if (strcmp(mode, "http") == 0)
		n = snprintf(head, sizeof(head), "GET /v1/projects HTTP/1.1\r\nHost: x\r\nUser-Ag");
	else if (strcmp(mode, "tls") == 0)
		memcpy(head, tls, (size_t)(n = sizeof(tls)));
	else if (strcmp(mode, "rpc") == 0)
		memcpy(head, rpc, (size_t)(n = sizeof(rpc)));
	else if (strcmp(mode, "body") == 0)
		n = snprintf(head, sizeof(head),
			     "%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
			     "%s%sContent-Length: %zu\r\n\r\n",
			     request, auth ? auth : "", auth ? "\r\n" : "", body_bytes);
	head_len = n > 0 ? (size_t)n : 0;
}

/* Push what the slot still has to send; false when the peer is gone. */
static bool pump(struct slot *s)
{
	static char zeros[65536];
	size_t total = head_len + (strcmp(mode, "body") == 0 ? body_bytes : 0);

	while (s->sent < total) {
		const char *p = s->sent < head_len ? head + s->sent : zeros;
		size_t n = s->sent < head_len ? head_len - s->sent : total - s->sent;
		ssize_t w;

		if (n > sizeof(zeros))
			n = sizeof(zeros);
		w = send(s->fd, p, n, MSG_NOSIGNAL);
		if (w < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		s->sent += (size_t)w;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET }, from[FLOOD_FROM_MAX];
	int nfrom = 0, count = 0, hold = 0, ep, opened = 0, closed = 0, failed = 0, held = 0, peak = 0, total, pending;
	struct rlimit rl;
	struct slot *slots;
	double t0 = now_s();
	bool ready = false;

	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (strcmp(k, "--to") == 0) {
			char host[64];
			const char *c = strrchr(v, ':');

			if (!c || (size_t)(c - v) >= sizeof(host))
				goto usage;
			snprintf(host, sizeof(host), "%.*s", (int)(c - v), v);
			to.sin_port = htons((uint16_t)strtoul(c + 1, NULL, 10));
			if (inet_pton(AF_INET, host, &to.sin_addr) != 1 || !loopback(&to.sin_addr))
				goto usage;
		} else if (strcmp(k, "--from") == 0) {
			for (const char *t = v; *t;) {
				const char *e = strchr(t, ',');
				size_t len = e ? (size_t)(e - t) : strlen(t);
				char one[64];

				if (nfrom == FLOOD_FROM_MAX || len >= sizeof(one))
					goto usage;
				snprintf(one, sizeof(one), "%.*s", (int)len, t);
				from[nfrom] = (struct sockaddr_in){ .sin_family = AF_INET };
				if (inet_pton(AF_INET, one, &from[nfrom].sin_addr) != 1 || !loopback(&from[nfrom].sin_addr))
					goto usage;
				nfrom++;
				t += len + (e ? 1 : 0);
			}
		} else if (strcmp(k, "--count") == 0) {
			count = (int)strtol(v, NULL, 10);
		} else if (strcmp(k, "--hold") == 0) {
			hold = (int)strtol(v, NULL, 10);
		} else if (strcmp(k, "--mode") == 0) {
			mode = v;
		} else if (strcmp(k, "--body") == 0) {
			body_bytes = (size_t)strtoull(v, NULL, 10);
		} else if (strcmp(k, "--request") == 0) {
			request = v;
		} else if (strcmp(k, "--auth") == 0) {
			auth = v;
		} else {
			goto usage;
		}
	}
	total = count * nfrom;
	if (!to.sin_port || nfrom == 0 || count < 1 || total > FLOOD_MAX || hold < 1 || hold > 600 ||
	    body_bytes > (1u << 30) || (strcmp(mode, "idle") && strcmp(mode, "http") && strcmp(mode, "tls") &&
					strcmp(mode, "rpc") && strcmp(mode, "body")))
		goto usage;
	make_head();
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!(slots = calloc((size_t)total, sizeof(*slots))) || (ep = epoll_create1(0)) < 0)
		return 1;
	for (int i = 0; i < total; i++) {
		struct slot *s = &slots[i];
		struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = s };
		int one = 1;

		s->state = S_CLOSED;
		if ((s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0) {
			failed++;
			continue;
		}
		/* the port is chosen at connect: 127.0.0.x each have the whole range */
		setsockopt(s->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(s->fd, (struct sockaddr *)&from[i % nfrom], sizeof(from[0])) != 0 ||
		    (connect(s->fd, (struct sockaddr *)&to, sizeof(to)) != 0 && errno != EINPROGRESS) ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev) != 0) {
			close(s->fd);
			failed++;
			continue;
		}
		s->state = S_CONNECTING;
	}
	while (now_s() - t0 < hold && !told_to_stop) {
		struct epoll_event evs[256];
		int n = epoll_wait(ep, evs, 256, 200);

		for (int i = 0; i < n; i++) {
			struct slot *s = evs[i].data.ptr;
			int err = 0;
			socklen_t el = sizeof(err);

			if (s->state == S_CONNECTING) {
				getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err) {
					failed++;
					goto drop;
				}
				opened++;
				held++;
				peak = held > peak ? held : peak;
				s->state = S_SENDING;
			}
			if (evs[i].events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP))
				goto gone;
			if (evs[i].events & EPOLLIN) {
				char buf[4096];

				if (recv(s->fd, buf, sizeof(buf), 0) <= 0)
					goto gone;
			}
			if (s->state == S_SENDING) {
				struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = s };
				size_t want = head_len + (strcmp(mode, "body") == 0 ? body_bytes : 0);

				if (!pump(s))
					goto gone;
				if (s->sent == want) {
					s->state = S_HOLDING;
					epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
				} else {
					ev.events |= EPOLLOUT;
					epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
				}
			}
			continue;
gone:
			closed++;
			held--;
drop:
			close(s->fd);
			s->state = S_CLOSED;
		}
		pending = 0;
		for (int i = 0; i < total; i++)
			pending += slots[i].state == S_CONNECTING;
		if (!ready && (pending == 0 || now_s() - t0 > 5)) {
			printf("ready\n");
			fflush(stdout);
			ready = true;
		}
	}
	for (int i = 0; i < total; i++)
		if (slots[i].state != S_CLOSED)
			close(slots[i].fd);
	printf("tried %d opened %d held %d closed %d failed %d peak %d\n", total, opened, held, closed, failed, peak);
	free(slots);
	return 0;
usage:
	fprintf(stderr, "usage: idle_flood --to 127.x.x.x:PORT --from 127.x.x.x[,...] --count N --hold SECONDS\n"
			"                  --mode idle|http|tls|rpc|body [--body BYTES] [--request \"METHOD PATH\"]\n"
			"                  [--auth HEADER]\n"
			"(loopback only; count x addresses <= %d; hold <= 600 s)\n", FLOOD_MAX);
	return 2;
}
