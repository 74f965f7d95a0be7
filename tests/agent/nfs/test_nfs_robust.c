/* test_nfs_robust: hostile input on the live port. Truncated, oversized
 * (record length 0x7fffffff), fragmented and random records, bad RPC
 * headers, garbage arguments for every procedure, connection floods and
 * pipelining, while another client keeps issuing calls that must all be
 * answered. Also checks the RPC-level errors (PROG_UNAVAIL, PROG_MISMATCH,
 * PROC_UNAVAIL, GARBAGE_ARGS, RPC_MISMATCH, AUTH_ERROR). Raw sockets only. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/agent/nfs/nfs_live.h"
#include "tests/agent/nfs/rpc_sock.h"

static int failures;
static int port;

#define CHECK(c, ...) NFS_LIVE_CHECK(failures, c, __VA_ARGS__)

/* reply words: [0]xid [1]REPLY [2]accepted? [3]verf flavor or reject_stat ... */
static int accept_stat(const uint8_t *r, size_t len)
{
	if (len < 24 || rpc_sock_g32(r + 8) != 0)
		return -1;
	return (int)rpc_sock_g32(r + 20);
}

/* ---- the client that keeps working ---- */
static atomic_bool stop;
static atomic_int good_ok, good_bad;

static void *good_client(void *arg)
{
	int fd = rpc_sock_dial(port, 0);
	uint32_t xid = 1;

	(void)arg;
	while (!atomic_load(&stop)) {
		uint8_t b[128], r[256];
		size_t n = rpc_sock_call(b, xid, 2, 100003, 3, 0, 0, NULL, 0), len;

		if (rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) || rpc_sock_g32(r) != xid ||
		    accept_stat(r, len) != 0)
			atomic_fetch_add(&good_bad, 1);
		else
			atomic_fetch_add(&good_ok, 1);
		xid++;
	}
	close(fd);
	return NULL;
}

static bool closed_by_server(int fd)
{
	uint8_t b[64];
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	for (;;) {
		ssize_t k;

		if (poll(&pf, 1, 5000) <= 0)
			return false;
		k = recv(fd, b, sizeof(b), 0);
		if (k <= 0)
			return true;
	}
}

int main(int argc, char **argv)
{
	static const char *const exports[] = {"/a=%D/a", NULL};
	static uint8_t big[1 << 16];
	struct nfs_live live;
	pthread_t th;
	uint8_t b[4096], r[4096];
	size_t n, len;
	int fd, i, k, rc;

	(void)argc;
	signal(SIGPIPE, SIG_IGN);
	srand(12345);
	if ((rc = nfs_live_start(&live, argv[0], exports)) != 0) {
		fprintf(stderr, "cannot start nfs_serve: %d\n", rc);
		return 1;
	}
	port = live.port;
	pthread_create(&th, NULL, good_client, NULL);

	/* RPC-level errors on one connection */
	fd = rpc_sock_dial(port, 0);
	n = rpc_sock_call(b, 11, 2, 99, 1, 0, 0, NULL, 0);
	CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && accept_stat(r, len) == 1,
	      "PROG_UNAVAIL");
	/* versions 3 and 4 are served (NFSv4.1: agent/nfs4/) */
	n = rpc_sock_call(b, 12, 2, 100003, 5, 0, 0, NULL, 0);
	CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && accept_stat(r, len) == 2 &&
	      rpc_sock_g32(r + 24) == 3 && rpc_sock_g32(r + 28) == 4, "PROG_MISMATCH 3..4");
	n = rpc_sock_call(b, 13, 2, 100003, 3, 22, 0, NULL, 0);
	CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && accept_stat(r, len) == 3,
	      "PROC_UNAVAIL");
	n = rpc_sock_call(b, 14, 2, 100000, 2, 1, 0, NULL, 0); /* PMAP SET */
	CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && accept_stat(r, len) == 3,
	      "PMAP SET unavailable");
	n = rpc_sock_call(b, 15, 3, 100003, 3, 0, 0, NULL, 0);
	CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && rpc_sock_g32(r + 8) == 1 &&
	      rpc_sock_g32(r + 12) == 0, "RPC_MISMATCH");
	n = rpc_sock_call(b, 16, 2, 100003, 3, 0, 6, NULL, 0);
	CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && rpc_sock_g32(r + 8) == 1 &&
	      rpc_sock_g32(r + 12) == 1 && rpc_sock_g32(r + 16) == 5, "AUTH_ERROR TOOWEAK");
	/* garbage arguments for every NFS and MOUNT procedure */
	for (i = 1; i < 22; i++) {
		uint8_t args[8] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4};

		n = rpc_sock_call(b, 100 + (uint32_t)i, 2, 100003, 3, (uint32_t)i, 0, args, sizeof(args));
		CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && rpc_sock_g32(r) == 100 + (uint32_t)i &&
		      accept_stat(r, len) == 4, "NFS proc %d GARBAGE_ARGS", i);
	}
	for (i = 1; i < 4; i += 2) { /* MNT, UMNT */
		uint8_t args[4] = {0x7f, 0xff, 0xff, 0xff};

		n = rpc_sock_call(b, 200 + (uint32_t)i, 2, 100005, 3, (uint32_t)i, 0, args, sizeof(args));
		CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && accept_stat(r, len) == 4,
		      "MOUNT proc %d GARBAGE_ARGS", i);
	}
	/* a record in three fragments is one call */
	n = rpc_sock_call(b, 300, 2, 100003, 3, 0, 0, NULL, 0);
	{
		uint8_t f[128];
		size_t body = n - 4, m = 0;

		m += rpc_sock_p32(f + m, 10);
		memcpy(f + m, b + 4, 10);
		m += 10;
		m += rpc_sock_p32(f + m, 0);
		m += rpc_sock_p32(f + m, 0x80000000u | (uint32_t)(body - 10));
		memcpy(f + m, b + 14, body - 10);
		m += body - 10;
		CHECK(!rpc_sock_ask(fd, f, m, r, sizeof(r), &len, 5000) && rpc_sock_g32(r) == 300 &&
		      accept_stat(r, len) == 0, "multi-fragment call");
	}
	/* pipelining: 100 calls in one write, 100 replies */
	{
		static uint8_t many[100 * 64];
		size_t m = 0;
		int seen[100] = {0}, got = 0;

		for (i = 0; i < 100; i++)
			m += rpc_sock_call(many + m, 1000 + (uint32_t)i, 2, 100003, 3, 0, 0, NULL, 0);
		CHECK(!rpc_sock_send_all(fd, many, m), "pipelined send");
		for (i = 0; i < 100; i++) {
			if (rpc_sock_reply(fd, r, sizeof(r), &len, 5000))
				break;
			if (rpc_sock_g32(r) >= 1000 && rpc_sock_g32(r) < 1100 && !seen[rpc_sock_g32(r) - 1000]++)
				got++;
		}
		CHECK(got == 100, "100 pipelined replies (%d)", got);
	}
	close(fd);

	/* oversized record length: the server drops the connection */
	fd = rpc_sock_dial(port, 0);
	rpc_sock_p32(b, 0xffffffffu);
	rpc_sock_send_all(fd, b, 4);
	CHECK(closed_by_server(fd), "0x7fffffff record closes the connection");
	close(fd);
	fd = rpc_sock_dial(port, 0);
	rpc_sock_p32(b, 0x80000000u | (2u << 20));
	rpc_sock_send_all(fd, b, 4);
	CHECK(closed_by_server(fd), "2 MiB record closes the connection");
	close(fd);
	/* fragments adding up past the cap */
	fd = rpc_sock_dial(port, 0);
	memset(big, 0, sizeof(big));
	for (i = 0; i < 40; i++) {
		rpc_sock_p32(big, 60000);
		if (rpc_sock_send_all(fd, big, 60004))
			break;
	}
	CHECK(closed_by_server(fd), "fragments past the cap close the connection");
	close(fd);

	/* truncated records, then hang up */
	for (i = 0; i < 50; i++) {
		fd = rpc_sock_dial(port, 0);
		n = rpc_sock_call(b, 400, 2, 100003, 3, 1, 0, (const uint8_t *)"\0\0\0\x40", 4);
		rpc_sock_p32(b, 0x80000000u | 1000);
		rpc_sock_send_all(fd, b, (size_t)(rand() % (int)n));
		close(fd);
	}
	/* random records with valid marks, and pure random bytes */
	for (k = 0; k < 20; k++) {
		fd = rpc_sock_dial(port, 0);
		for (i = 0; i < 100; i++) {
			size_t l = (size_t)(rand() % 600);
			size_t j;

			rpc_sock_p32(b, 0x80000000u | (uint32_t)l);
			for (j = 0; j < l; j++)
				b[4 + j] = (uint8_t)rand();
			if (l >= 8 && (rand() & 1)) {
				rpc_sock_p32(b + 8, 0);          /* CALL */
				rpc_sock_p32(b + 12, 2);
				rpc_sock_p32(b + 16, (rand() & 1) ? 100003 : 100005);
				rpc_sock_p32(b + 20, 3);
				rpc_sock_p32(b + 24, (uint32_t)(rand() % 24));
			}
			if (rpc_sock_send_all(fd, b, 4 + l))
				break;
		}
		close(fd);
		fd = rpc_sock_dial(port, 0);
		for (i = 0; i < (int)sizeof(b); i++)
			b[i] = (uint8_t)rand();
		rpc_sock_send_all(fd, b, sizeof(b));
		close(fd);
	}
	/* a client that asks for 64 MiB of READ replies and never reads them
	 * must not hold up the others (the good client keeps running) */
	{
		char path[512];
		FILE *f;
		uint8_t fh[64], args[128];
		uint32_t fhlen = 0, j;
		int before, base, slow;

		base = atomic_load(&good_ok);
		sleep(1);
		base = atomic_load(&good_ok) - base; /* calls per second, undisturbed */
		before = atomic_load(&good_ok);

		snprintf(path, sizeof(path), "%s/a/big", live.dir);
		f = fopen(path, "w");
		if (f) {
			fseek(f, (1 << 20) - 1, SEEK_SET);
			fputc('x', f);
			fclose(f);
		}
		slow = rpc_sock_dial(port, 0);
		{
			size_t m = 0;

			m += rpc_sock_p32(args + m, 2);
			memcpy(args + m, "/a\0\0", 4);
			m += 4;
			n = rpc_sock_call(b, 900, 2, 100005, 3, 1, 0, args, m);
			CHECK(!rpc_sock_ask(slow, b, n, r, sizeof(r), &len, 5000) && accept_stat(r, len) == 0 &&
			      rpc_sock_g32(r + 24) == 0, "MNT /a");
			fhlen = rpc_sock_g32(r + 28);
			if (fhlen > 64)
				fhlen = 0;
			memcpy(fh, r + 32, fhlen);
		}
		{
			size_t m = 0;

			m += rpc_sock_p32(args + m, fhlen);
			memset(args + m, 0, (fhlen + 3) & ~3u);
			memcpy(args + m, fh, fhlen);
			m += (fhlen + 3) & ~3u;
			m += rpc_sock_p32(args + m, 3);
			memcpy(args + m, "big\0", 4);
			m += 4;
			n = rpc_sock_call(b, 901, 2, 100003, 3, 3, 0, args, m);
			CHECK(!rpc_sock_ask(slow, b, n, r, sizeof(r), &len, 5000) && accept_stat(r, len) == 0 &&
			      rpc_sock_g32(r + 24) == 0, "LOOKUP big");
			fhlen = rpc_sock_g32(r + 28);
			if (fhlen > 64)
				fhlen = 0;
			memcpy(fh, r + 32, fhlen);
		}
		for (j = 0; j < 64; j++) {
			size_t m = 0;

			m += rpc_sock_p32(args + m, fhlen);
			memset(args + m, 0, (fhlen + 3) & ~3u);
			memcpy(args + m, fh, fhlen);
			m += (fhlen + 3) & ~3u;
			m += rpc_sock_p32(args + m, 0);
			m += rpc_sock_p32(args + m, 0);
			m += rpc_sock_p32(args + m, 1u << 20);
			n = rpc_sock_call(b, 1000 + j, 2, 100003, 3, 6, 0, args, m);
			if (rpc_sock_send_all(slow, b, n))
				break;
		}
		sleep(2);
		{
			uint8_t h[64];
			int q = 0;

			ioctl(slow, FIONREAD, &q);
			CHECK(rpc_sock_recv_all(slow, h, 44, 5000) == 0 && rpc_sock_g32(h + 4 + 24) == 0 &&
			      rpc_sock_g32(h + 4 + 28) == 1, "READ replies are real (accept %u status %u, %d bytes waiting)",
			      rpc_sock_g32(h + 4 + 20), rpc_sock_g32(h + 4 + 24), q);
		}
		CHECK(atomic_load(&good_ok) - before > base / 20 && atomic_load(&good_bad) == 0,
		      "others served while a client does not read (%d calls in 2 s, %d/s before)",
		      atomic_load(&good_ok) - before, base);
		close(slow);
	}
	/* a flood of connections */
	{
		int fds[200];

		for (i = 0; i < 200; i++)
			fds[i] = rpc_sock_dial(port, 0);
		for (i = 0; i < 200; i++)
			close(fds[i]);
	}
	/* the server still answers new clients */
	fd = rpc_sock_dial(port, 0);
	n = rpc_sock_call(b, 777, 2, 100003, 3, 0, 0, NULL, 0);
	CHECK(!rpc_sock_ask(fd, b, n, r, sizeof(r), &len, 5000) && rpc_sock_g32(r) == 777, "still serving");
	close(fd);

	atomic_store(&stop, true);
	pthread_join(th, NULL);
	CHECK(atomic_load(&good_bad) == 0 && atomic_load(&good_ok) > 10, "other client: %d ok, %d bad",
	      atomic_load(&good_ok), atomic_load(&good_bad));
	CHECK(waitpid(live.pid, NULL, WNOHANG) == 0, "server alive");
	nfs_live_stop(&live);
	fprintf(stderr, "robustness: %d failures, other client made %d calls\n", failures, atomic_load(&good_ok));
	return failures ? 1 : 0;
}
