/* rpc_sock: ONC RPC over a plain TCP socket for the live NFS tests; see
 * rpc_sock.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/agent/nfs/rpc_sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int rpc_sock_dial(int port, int rcvbuf)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (fd >= 0 && rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("connect");
		exit(1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

size_t rpc_sock_p32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
	return 4;
}

uint32_t rpc_sock_g32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

size_t rpc_sock_call(uint8_t *b, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
		     uint32_t proc, uint32_t flavor, const uint8_t *args, size_t alen)
{
	size_t n = 4;

	n += rpc_sock_p32(b + n, xid);
	n += rpc_sock_p32(b + n, 0);
	n += rpc_sock_p32(b + n, rpcvers);
	n += rpc_sock_p32(b + n, prog);
	n += rpc_sock_p32(b + n, vers);
	n += rpc_sock_p32(b + n, proc);
	n += rpc_sock_p32(b + n, flavor);
	n += rpc_sock_p32(b + n, 0);
	n += rpc_sock_p32(b + n, 0);
	n += rpc_sock_p32(b + n, 0);
	if (alen)
		memcpy(b + n, args, alen);
	n += alen;
	rpc_sock_p32(b, 0x80000000u | (uint32_t)(n - 4));
	return n;
}

int rpc_sock_send_all(int fd, const void *b, size_t n)
{
	const uint8_t *p = b;

	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int rpc_sock_recv_all(int fd, uint8_t *b, size_t n, int ms)
{
	while (n) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t k;

		if (poll(&pf, 1, ms) <= 0)
			return -ETIMEDOUT;
		if ((k = recv(fd, b, n, 0)) <= 0)
			return -EPIPE;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int rpc_sock_reply(int fd, uint8_t *b, size_t cap, size_t *len, int ms)
{
	uint8_t m[4];
	uint32_t l;
	int rc = rpc_sock_recv_all(fd, m, 4, ms);

	if (rc)
		return rc;
	l = rpc_sock_g32(m) & 0x7fffffffu;
	if (!(rpc_sock_g32(m) & 0x80000000u) || l > cap)
		return -EPROTO;
	*len = l;
	return rpc_sock_recv_all(fd, b, l, ms);
}

int rpc_sock_ask(int fd, const uint8_t *rec, size_t n, uint8_t *r, size_t cap, size_t *len, int ms)
{
	if (rpc_sock_send_all(fd, rec, n))
		return -1;
	return rpc_sock_reply(fd, r, cap, len, ms);
}
