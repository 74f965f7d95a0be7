/* aq-latproxy: a loopback TCP proxy that adds a fixed latency per request,
 * for the cold-tier tests and bench/tier (an object store "10 ms away").
 *
 *   aq-latproxy --listen 127.0.0.1:P --to 127.0.0.1:Q --latency-ms N [--log FILE]
 *
 * Each accepted connection gets its own upstream connection and two
 * threads, one per direction, copying with 256 KiB buffers. A "request" is a
 * client->server burst that begins after the server's previous answer began
 * (or the connection's first burst): its first bytes wait N ms, the rest of
 * it (e.g. a PUT body, also after a "100 Continue") and every answer pass
 * at once. So a keep-alive HTTP
 * client sees N ms more per request, and parallel connections do not wait
 * for each other.
 *
 * --log FILE appends one line per request: "METHOD PATH AUTH conn=N", AUTH
 * being the first 100 characters of the Authorization header
 * (enough for the SigV4 credential scope) ("-" when absent or
 * not in the request's first segment), N the number of the client
 * connection (from 1). Tests grep it for SigV4 headers and count
 * connections to see keep-alive work.
 *
 * SIGUSR1 toggles "down" mode: the listening socket closes (new connections
 * are refused) and every open connection is dropped; the next SIGUSR1 listens
 * again on the same address. It prints "down" / "up" on stderr when done.
 * SIGTERM / SIGINT end it.
 */
#define _GNU_SOURCE
#include "bench/tier/tb_addr.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LP_BUF (256 * 1024)
#define LP_AUTH_LOG 100  /* the whole "AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/s3/aws4_request" */

struct lp_conn {
	struct lp_conn *next, *prev;
	int cfd, sfd;               /* client, server (-1 until connected) */
	unsigned long id;           /* connection number, from 1 */
	atomic_int refs;            /* directions still running */
	atomic_int resp_started;    /* server sent bytes since the last request */
};

static struct sockaddr_in lp_listen_addr, lp_to_addr;
static unsigned lp_latency_ms;
static FILE *lp_log;
static pthread_mutex_t lp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lp_conn *lp_conns;  /* open connections, under lp_lock */
static unsigned long lp_conn_seq;  /* main thread only */

static int listen_on(void)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&lp_listen_addr, sizeof lp_listen_addr) != 0 || listen(fd, 512) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void conn_unref(struct lp_conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	pthread_mutex_lock(&lp_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		lp_conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&lp_lock);
	close(c->cfd);
	if (c->sfd >= 0)
		close(c->sfd);
	free(c);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Logs "METHOD PATH AUTH" from the first segment of a request. */
static void log_request(const char *b, size_t n, unsigned long conn)
{
	char line[600], method[16] = "-", path[400] = "-", auth[LP_AUTH_LOG + 1] = "-";
	size_t i = 0, j;

	for (j = 0; i < n && b[i] != ' ' && b[i] != '\r' && j + 1 < sizeof method; i++)
		method[j++] = b[i];
	if (j)
		method[j] = '\0';
	if (i < n && b[i] == ' ')
		i++;
	for (j = 0; i < n && b[i] != ' ' && b[i] != '\r' && j + 1 < sizeof path; i++)
		path[j++] = b[i];
	if (j)
		path[j] = '\0';
	for (i = 0; i + 17 < n; i++) {
		if (b[i] == '\n' && strncasecmp(b + i + 1, "Authorization:", 14) == 0) {
			size_t k = i + 15;
			while (k < n && b[k] == ' ')
				k++;
			for (j = 0; k < n && b[k] != '\r' && b[k] != '\n' && j < LP_AUTH_LOG; k++)
				auth[j++] = b[k];
			if (j)
				auth[j] = '\0';
			break;
		}
		if (b[i] == '\n' && i + 2 < n && b[i + 1] == '\r' && b[i + 2] == '\n')
			break;  /* end of the headers */
	}
	snprintf(line, sizeof line, "%s %s %s conn=%lu\n", method, path, auth, conn);
	pthread_mutex_lock(&lp_lock);
	fputs(line, lp_log);
	fflush(lp_log);
	pthread_mutex_unlock(&lp_lock);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A "100 Continue" alone is not the answer: the request body follows it. */
static int interim_only(const char *b, size_t n)
{
	return n >= 12 && memcmp(b, "HTTP/1.1 100", 12) == 0 && !memmem(b + 12, n - 12, "HTTP/1.", 7);
}

/* Copies one direction until EOF or an error. */
static void pump(struct lp_conn *c, int from, int to, int is_request)
{
	char *buf = malloc(LP_BUF);
	int fresh = 1;

	while (buf) {
		ssize_t n = recv(from, buf, LP_BUF, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (is_request && (fresh || atomic_exchange(&c->resp_started, 0))) {
			fresh = 0;
			if (lp_log)
				log_request(buf, (size_t)n, c->id);
			if (lp_latency_ms)
				sleep_ms(lp_latency_ms);
		} else if (!is_request && !interim_only(buf, (size_t)n)) {
			atomic_store(&c->resp_started, 1);
		}
		if (write_all(to, buf, (size_t)n) != 0)
			break;
	}
	free(buf);
	/* Half-close forward on EOF; an error ends both directions. */
	shutdown(to, SHUT_WR);
	shutdown(from, SHUT_RD);
}

static void *server_to_client(void *arg)
{
	struct lp_conn *c = arg;

	pump(c, c->sfd, c->cfd, 0);
	conn_unref(c);
	return NULL;
}

static void *client_to_server(void *arg)
{
	struct lp_conn *c = arg;
	pthread_t t;
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&lp_to_addr, sizeof lp_to_addr) == 0) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		c->sfd = fd;
		atomic_fetch_add(&c->refs, 1);
		if (pthread_create(&t, NULL, server_to_client, c) == 0) {
			pthread_detach(t);
			pump(c, c->cfd, c->sfd, 1);
		} else {
			atomic_fetch_sub(&c->refs, 1);
		}
	} else if (fd >= 0) {
		close(fd);
	}
	conn_unref(c);
	return NULL;
}

/* Down mode: drop every open connection (threads end on their own). */
static void drop_all(void)
{
	pthread_mutex_lock(&lp_lock);
	for (struct lp_conn *c = lp_conns; c; c = c->next) {
		shutdown(c->cfd, SHUT_RDWR);
		if (c->sfd >= 0)
			shutdown(c->sfd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&lp_lock);
}

static void accept_one(int lfd)
{
	struct lp_conn *c;
	pthread_t t;
	int one = 1, fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (!(c = calloc(1, sizeof *c))) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	c->cfd = fd;
	c->sfd = -1;
	c->id = ++lp_conn_seq;
	atomic_init(&c->refs, 1);
	pthread_mutex_lock(&lp_lock);
	c->next = lp_conns;
	if (lp_conns)
		lp_conns->prev = c;
	lp_conns = c;
	pthread_mutex_unlock(&lp_lock);
	if (pthread_create(&t, NULL, client_to_server, c) != 0) {
		conn_unref(c);
		return;
	}
	pthread_detach(t);
}

static void usage(void)
{
	fprintf(stderr, "usage: aq-latproxy --listen IP:PORT --to IP:PORT --latency-ms N [--log FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *listen_s = NULL, *to_s = NULL, *log_s = NULL, *lat_s = "0";
	sigset_t set;
	int sfd, lfd;

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--listen") == 0)
			listen_s = argv[++i];
		else if (strcmp(argv[i], "--to") == 0)
			to_s = argv[++i];
		else if (strcmp(argv[i], "--latency-ms") == 0)
			lat_s = argv[++i];
		else if (strcmp(argv[i], "--log") == 0)
			log_s = argv[++i];
		else
			usage();
	}
	char *end;
	unsigned long lat = strtoul(lat_s, &end, 10);
	if (!listen_s || !to_s || *end || lat > 60000 || tb_parse_addr(listen_s, &lp_listen_addr) != 0 ||
	    tb_parse_addr(to_s, &lp_to_addr) != 0)
		usage();
	lp_latency_ms = (unsigned)lat;
	if (log_s && !(lp_log = fopen(log_s, "a"))) {
		perror(log_s);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);  /* before any thread: all inherit it */
	signal(SIGPIPE, SIG_IGN);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0 || (lfd = listen_on()) < 0) {
		perror("aq-latproxy: listen");
		return 1;
	}
	for (;;) {
		struct pollfd p[2] = { { sfd, POLLIN, 0 }, { lfd, POLLIN, 0 } };
		if (poll(p, lfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			return 1;
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) != sizeof si)
				continue;
			if (si.ssi_signo != SIGUSR1)
				break;
			if (lfd >= 0) {
				close(lfd);
				lfd = -1;
				drop_all();
				fprintf(stderr, "aq-latproxy: down\n");
			} else {
				for (int i = 0; i < 50 && (lfd = listen_on()) < 0; i++)
					sleep_ms(100);
				fprintf(stderr, "aq-latproxy: %s\n", lfd >= 0 ? "up" : "cannot listen again");
			}
			continue;
		}
		if (lfd >= 0 && (p[1].revents & POLLIN))
			accept_one(lfd);
	}
	drop_all();
	return 0;
}
