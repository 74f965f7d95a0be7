/* nlm_peer: what tests/agent/nfs/test_nlm.c talks to besides the server: a
 * fake NFS client host (portmapper, lock manager answering NLM4_GRANTED, status
 * monitor taking SM_NOTIFY) in a thread on a loopback port, an NFSv4.1
 * session holding an open of export a's file f (tests/agent/nfs4/nfs4_cl.c),
 * and a file-content check. See nlm_peer.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/agent/nfs/nlm_peer.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/nfs/nlm.h"

/* ---------- the fake client: portmapper, lock manager, status monitor ---------- */
struct nlm_fake fake;

static int read_full(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = read(fd, (uint8_t *)p + got, n - got);

		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

static void fake_serve(int fd)
{
	static uint8_t rec[65536];
	uint32_t mark, len, xid, prog, proc, l;

	while (read_full(fd, &mark, 4) == 0) {
		struct xdr_cur c;
		struct ut_buf b;

		len = ntohl(mark) & 0x7fffffffu;
		if (len > sizeof(rec) || read_full(fd, rec, len) != 0)
			return;
		xdr_cur_init(&c, rec, len);
		xid = xdr_u32(&c);
		(void)xdr_u32(&c); /* CALL */
		(void)xdr_u32(&c); /* rpcvers */
		prog = xdr_u32(&c);
		(void)xdr_u32(&c);
		proc = xdr_u32(&c);
		(void)xdr_u32(&c);
		(void)xdr_opaque(&c, 400, &l);
		(void)xdr_u32(&c);
		(void)xdr_opaque(&c, 400, &l);
		ut_buf_init(&b, 4096);
		xdr_put_u32(&b, 0);
		xdr_put_u32(&b, xid);
		xdr_put_u32(&b, 1);
		xdr_put_u32(&b, 0);
		xdr_put_u32(&b, 0);
		xdr_put_u32(&b, 0);
		xdr_put_u32(&b, 0); /* SUCCESS */
		if (prog == 100000 && proc == 3) {
			xdr_put_u32(&b, fake.reachable ? (uint32_t)fake.port : 0);
		} else if (prog == NLM_PROG && proc == 5) {
			const uint8_t *ck = xdr_opaque(&c, 1024, &l);
			uint32_t cl_len = l;

			(void)xdr_u32(&c);                  /* exclusive */
			(void)xdr_opaque(&c, 1024, &l);     /* caller_name */
			(void)xdr_opaque(&c, 1024, &l);     /* fh */
			(void)xdr_opaque(&c, 1024, &l);     /* oh */
			fake.g_svid = xdr_u32(&c);
			fake.g_off = xdr_u64(&c);
			fake.g_len = xdr_u64(&c);
			xdr_put_opaque(&b, ck, cl_len);
			xdr_put_u32(&b, fake.answer);
			fake.granted++;
		} else if (prog == NSM_PROG && proc == 6) {
			const uint8_t *n = xdr_opaque(&c, 1024, &l);

			if (n && l < sizeof(fake.notify_name)) {
				memcpy(fake.notify_name, n, l);
				fake.notify_name[l] = '\0';
			}
			fake.notify_state = xdr_u32(&c);
			fake.notified++;
		}
		ut_buf_set_be32(&b, 0, 0x80000000u | (uint32_t)(b.len - 4));
		if (write(fd, ut_buf_bytes(&b), b.len) != (ssize_t)b.len) {
			ut_buf_cleanup(&b);
			return;
		}
		ut_buf_cleanup(&b);
	}
}

static void *fake_main(void *arg)
{
	(void)arg;
	while (!fake.stop) {
		struct pollfd p = { .fd = fake.lfd, .events = POLLIN };
		int fd;

		if (poll(&p, 1, 50) != 1 || (fd = accept(fake.lfd, NULL, NULL)) < 0)
			continue;
		fake_serve(fd);
		close(fd);
	}
	return NULL;
}

void fake_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	fake.lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fake.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fake.lfd, 16), 0);
	getsockname(fake.lfd, (struct sockaddr *)&a, &al);
	fake.port = ntohs(a.sin_port);
	fake.stop = false;
	fake.reachable = true;
	fake.answer = GRANTED;
	fake.granted = fake.notified = 0;
	ck_assert_int_eq(pthread_create(&fake.thr, NULL, fake_main, NULL), 0);
}

void fake_stop(void)
{
	fake.stop = true;
	pthread_join(fake.thr, NULL);
	close(fake.lfd);
}

/* Wait up to ms for *v to reach at least want. */
bool wait_for(atomic_int *v, int want, int ms)
{
	for (int i = 0; i < ms / 20 && *v < want; i++)
		usleep(20000);
	return *v >= want;
}

void v4_open(struct v4 *l, int port)
{
	uint32_t got, n;
	const uint8_t *p;

	ck_assert_int_eq(nfs4_cl_dial(&l->c, port), 0);
	l->seq = 1;
	ck_assert_uint_eq(nfs4_cl_session(&l->c, "v4-client", 4, &got), 0);
	nfs4_cl_begin(&l->c, &l->b, 1, 5);
	nfs4_cl_sequence(&l->b, &l->c, 0, l->seq++, false);
	nfs4_cl_putrootfh(&l->b);
	nfs4_cl_lookup(&l->b, "a");
	nfs4_cl_open_nocreate(&l->b, "open-owner", "f", 3);
	nfs4_cl_getfh(&l->b);
	ck_assert_int_eq(nfs4_cl_send(&l->c, &l->b, &l->cur), 0);
	ck_assert_uint_eq(nfs4_cl_res(&l->cur, &n), 0);
	nfs4_cl_op(&l->cur, 53);
	nfs4_cl_sequence_res(&l->cur);
	nfs4_cl_op(&l->cur, 24);
	nfs4_cl_op(&l->cur, 15);
	nfs4_cl_op(&l->cur, 18);
	nfs4_cl_open_res(&l->cur, &l->open);
	nfs4_cl_op(&l->cur, 10);
	p = xdr_opaque(&l->cur, 128, &l->fhlen);
	ck_assert_ptr_nonnull(p);
	memcpy(l->fh, p, l->fhlen);
}

/* LOCK (new owner when first) or LOCKU: the operation's status. */
uint32_t v4_lock(struct v4 *l, bool unlock, bool first, uint64_t off, uint64_t len, struct nfs4_cl_denied *d)
{
	uint32_t n, st, op = unlock ? 14 : 12;

	nfs4_cl_begin(&l->c, &l->b, 1, 3);
	nfs4_cl_sequence(&l->b, &l->c, 0, l->seq++, false);
	nfs4_cl_putfh(&l->b, l->fh, l->fhlen);
	if (unlock)
		nfs4_cl_locku(&l->b, 2, &l->lock, off, len);
	else
		nfs4_cl_lock(&l->b, &l->c, 2, off, len, first ? &l->open : &l->lock, first ? "lock-owner" : NULL);
	ck_assert_int_eq(nfs4_cl_send(&l->c, &l->b, &l->cur), 0);
	(void)nfs4_cl_res(&l->cur, &n);
	ck_assert_uint_eq(nfs4_cl_op(&l->cur, 53), 0);
	nfs4_cl_sequence_res(&l->cur);
	ck_assert_uint_eq(nfs4_cl_op(&l->cur, 22), 0);
	st = nfs4_cl_op(&l->cur, op);
	if (st == 0)
		nfs4_cl_get_sid(&l->cur, &l->lock);
	else if (st == 10010 && d)
		nfs4_cl_denied(&l->cur, d);
	return st;
}

bool file_has(const char *path, const char *needle)
{
	char buf[8192];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}
