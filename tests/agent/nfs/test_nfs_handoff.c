/* test_nfs_handoff: what a call costs the server in thread hand-offs
 * (agent/nfs/nfs_loop.c, nfs_dispatch.c: the loop role and runs), counted
 * as the voluntary context switches of the nfs_serve process (every thread,
 * /proc/PID/task/TID/status), which load does not change: a thread switches
 * voluntarily only when it waits.
 *
 * Bounds from the design, not from a run:
 * - one connection, one GETATTR at a time: the worker that read a call
 *   serves it and takes the loop role back; the only wait per call is the
 *   loop's epoll_wait for the next one: <= 1 per call (the bound allows
 *   1.5; handing the role on costs 2 per call: the woken follower's and
 *   the old leader's wait on the queue);
 * - one connection, batches of 32 GETATTRs sent at once: one read brings a
 *   run, served in order by one worker, the role handed on once: the
 *   follower's wait, its epoll_wait, the old leader's wait on the queue: 3
 *   per run, one or two runs per batch (<= 6 allowed; a wake per call costs
 *   about 12 per batch of 32);
 * - a connection whose client sends READs one at a time and reads no reply
 *   blocks the worker sending them, which had kept the loop role free: another
 *   connection is still served (the worker wakes one for the role before it
 *   waits), each call within 2 s.
 * The server's background (timers) is measured while idle and allowed on top.
 * Raw sockets only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/agent/nfs/nfs_live.h"
#include "tests/agent/nfs/rpc_sock.h"

#define NCALLS 1000
#define BATCH 32
#define NBATCH 32

static int failures;
static int port;
static pid_t spid;

#define CHECK(c, ...) NFS_LIVE_CHECK(failures, c, __VA_ARGS__)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Voluntary context switches of every thread of the server. */
static long long server_vcs(void)
{
	char path[320], line[256];
	struct dirent *de;
	long long sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)spid);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)spid, de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "voluntary_ctxt_switches:", 24))
				sum += strtoll(line + 24, NULL, 10);
		fclose(f);
	}
	closedir(d);
	return sum;
}

/* An XDR string (length, bytes, zero padding) at a; its length. */
static size_t put_str(uint8_t *a, const char *s)
{
	size_t l = strlen(s), n = rpc_sock_p32(a, (uint32_t)l);

	memcpy(a + n, s, l);
	n += l;
	while (n % 4)
		a[n++] = 0;
	return n;
}

/* Call proc of prog (version 3) with args a on a new connection; its reply
 * (MNT, LOOKUP) starts with status 0 and a handle, which goes into out as
 * the next call's args (length, bytes, padding). Returns their length;
 * exits the test, naming what, when the call fails. */
static size_t handle_call(uint32_t xid, uint32_t prog, uint32_t proc, const uint8_t *a, size_t alen, const char *what,
			  uint8_t *out)
{
	uint8_t b[512], r[512];
	int fd = rpc_sock_dial(port, 0), rc;
	size_t n = rpc_sock_call(b, xid, 2, prog, 3, proc, 0, a, alen), len = 0;
	uint32_t fl;

	rc = rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000);
	close(fd);
	if (rc || len < 32 || rpc_sock_g32(r + 24) != 0 || (fl = rpc_sock_g32(r + 28)) > 64 || len < 32 + fl) {
		fprintf(stderr, "%s failed (%d)\n", what, rc ? rc : (int)len);
		exit(1);
	}
	rpc_sock_p32(out, fl);
	memcpy(out + 4, r + 32, fl);
	while (fl % 4)
		out[4 + fl++] = 0;
	return 4 + fl;
}

/* GETATTR's args (the root's handle) into a; their length. */
static size_t mount_root(uint8_t *a)
{
	uint8_t path[8];

	return handle_call(1, 100005, 1, path, put_str(path, "/a"), "MNT /a", a);
}

/* GETATTR reply: accepted, SUCCESS, NFS3_OK. */
static bool getattr_ok(const uint8_t *r, size_t len, uint32_t xid)
{
	return len >= 28 && rpc_sock_g32(r) == xid && rpc_sock_g32(r + 8) == 0 && rpc_sock_g32(r + 20) == 0 &&
	       rpc_sock_g32(r + 24) == 0;
}

/* Voluntary switches of the idle server per second (its timers). */
static double background_rate(void)
{
	long long v0 = server_vcs();
	double t0 = now();

	usleep(500000);
	return (double)(server_vcs() - v0) / (now() - t0);
}

static void one_at_a_time(const uint8_t *fh, size_t fhl, double bg)
{
	uint8_t b[256], r[512];
	int fd = rpc_sock_dial(port, 0), ok = 0, i;
	long long v0, v;
	double t0, t, allowed;

	for (i = 0; i < 20; i++) { /* warm: threads started, handle cached */
		size_t n = rpc_sock_call(b, 100 + (uint32_t)i, 2, 100003, 3, 1, 0, fh, fhl), len;

		(void)rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000);
	}
	v0 = server_vcs();
	t0 = now();
	for (i = 0; i < NCALLS; i++) {
		uint32_t xid = 1000 + (uint32_t)i;
		size_t n = rpc_sock_call(b, xid, 2, 100003, 3, 1, 0, fh, fhl), len = 0;

		ok += !rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && getattr_ok(r, len, xid);
	}
	v = server_vcs() - v0;
	t = now() - t0;
	allowed = 1.5 * NCALLS + bg * t + 10;
	printf("one at a time: %d GETATTRs in %.3f s, server voluntary switches %lld (%.2f per call), "
	       "allowed %.0f\n", NCALLS, t, v, (double)v / NCALLS, allowed);
	CHECK(ok == NCALLS, "%d of %d GETATTRs answered NFS3_OK", ok, NCALLS);
	CHECK(v >= 0 && (double)v <= allowed, "%lld voluntary switches for %d calls (allowed %.0f)", v, NCALLS,
	      allowed);
	close(fd);
}

static void pipelined(const uint8_t *fh, size_t fhl, double bg)
{
	static uint8_t b[BATCH * 256];
	uint8_t r[512];
	int fd = rpc_sock_dial(port, 0), ok = 0, i, k;
	long long v0, v;
	double t0, t, allowed;

	v0 = server_vcs();
	t0 = now();
	for (k = 0; k < NBATCH; k++) {
		size_t n = 0;
		bool seen[BATCH] = {false};

		for (i = 0; i < BATCH; i++)
			n += rpc_sock_call(b + n, (uint32_t)(k * BATCH + i), 2, 100003, 3, 1, 0, fh, fhl);
		if (rpc_sock_send_all(fd, b, n))
			break;
		for (i = 0; i < BATCH; i++) {
			size_t len = 0;
			int rc = rpc_sock_reply(fd, r, sizeof(r), &len, 5000);
			uint32_t x = !rc && len >= 4 ? rpc_sock_g32(r) - (uint32_t)(k * BATCH) : BATCH;

			if (x < BATCH && !seen[x] && getattr_ok(r, len, rpc_sock_g32(r))) {
				seen[x] = true;
				ok++;
			}
		}
	}
	v = server_vcs() - v0;
	t = now() - t0;
	allowed = 6.0 * NBATCH + bg * t + 10;
	printf("pipelined: %d batches of %d GETATTRs in %.3f s, server voluntary switches %lld "
	       "(%.2f per batch), allowed %.0f\n", NBATCH, BATCH, t, v, (double)v / NBATCH, allowed);
	CHECK(ok == NBATCH * BATCH, "%d of %d GETATTRs answered once each", ok, NBATCH * BATCH);
	CHECK(v >= 0 && (double)v <= allowed, "%lld voluntary switches for %d batches (allowed %.0f)", v, NBATCH,
	      allowed);
	close(fd);
}

/* The handle of name in the directory whose GETATTR args (fh) are given. */
static size_t lookup(const uint8_t *dfh, size_t dfl, const char *name, uint8_t *out)
{
	uint8_t a[256];
	char what[80];

	memcpy(a, dfh, dfl);
	snprintf(what, sizeof(what), "LOOKUP %s", name);
	return handle_call(2, 100003, 3, a, dfl + put_str(a + dfl, name), what, out);
}

/* A client that sends READs of 64 KiB, one at a time (each read of the
 * server brings one quick call: the worker keeps the loop role free), and
 * reads no reply: the worker sending them waits for the socket; another
 * connection is still served (the worker wakes one for the role before it
 * waits, nfs_reply.c send_wait). */
static void stuck_peer(const char *dir, const uint8_t *fh, size_t fhl)
{
	static uint8_t chunk[1 << 16];
	uint8_t b[512], r[512], ffh[128], a[160];
	char path[600];
	int stuck, fd, ok = 0, i;
	size_t ffl, n;
	double worst = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/a/big", dir);
	if (!(f = fopen(path, "w"))) {
		perror(path);
		exit(1);
	}
	for (i = 0; i < 16; i++)
		fwrite(chunk, 1, sizeof(chunk), f);
	fclose(f);
	ffl = lookup(fh, fhl, "big", ffh);
	memcpy(a, ffh, ffl);
	rpc_sock_p32(a + ffl, 0);
	rpc_sock_p32(a + ffl + 4, 0); /* offset 0 */
	rpc_sock_p32(a + ffl + 8, sizeof(chunk));
	n = rpc_sock_call(b, 7, 2, 100003, 3, 6, 0, a, ffl + 12);
	stuck = rpc_sock_dial(port, 2048);
	/* 200 READs of 64 KiB (12.5 MiB of replies), 2 ms apart, none read back */
	for (i = 0; i < 200; i++) {
		if (send(stuck, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
			break;
		usleep(2000);
	}
	fd = rpc_sock_dial(port, 0);
	for (i = 0; i < 20; i++) {
		uint32_t xid = 5000 + (uint32_t)i;
		size_t m = rpc_sock_call(b, xid, 2, 100003, 3, 1, 0, fh, fhl), len = 0;
		double t = now();

		ok += !rpc_sock_ask(fd, b, m, r, sizeof(r), &len, 2000) && getattr_ok(r, len, xid);
		worst = now() - t > worst ? now() - t : worst;
	}
	printf("beside a peer that reads no replies: %d of 20 GETATTRs answered, slowest %.3f s\n", ok, worst);
	CHECK(ok == 20, "only %d of 20 calls answered within 2 s beside a stuck peer", ok);
	close(fd);
	close(stuck);
}

int main(int argc, char **argv)
{
	static const char *const exports[] = {"/a=%D/a", NULL};
	struct nfs_live live;
	uint8_t fh[128];
	size_t fhl;
	double bg;
	int rc;

	(void)argc;
	signal(SIGPIPE, SIG_IGN);
	if ((rc = nfs_live_start(&live, argv[0], exports)) != 0) {
		fprintf(stderr, "cannot start nfs_serve: %d\n", rc);
		return 1;
	}
	port = live.port;
	spid = live.pid;
	fhl = mount_root(fh);
	bg = background_rate();
	printf("idle server: %.1f voluntary switches per second\n", bg);
	one_at_a_time(fh, fhl, bg);
	pipelined(fh, fhl, bg);
	stuck_peer(live.dir, fh, fhl);
	nfs_live_stop(&live);
	printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
