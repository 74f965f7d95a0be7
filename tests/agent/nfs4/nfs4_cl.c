/* nfs4_cl: the NFSv4.1 test client's connection: RPC records on TCP, the
 * backchannel calls the server sends on it, and the session set-up; see
 * nfs4_cl.h. The COMPOUND operations are in nfs4_cl_ops.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/agent/nfs4/nfs4_cl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int nfs4_cl_dial(struct nfs4_cl *c, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1;

	memset(c, 0, sizeof(*c));
	c->xid = 0x4a000000u + (uint32_t)getpid();
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

void nfs4_cl_close(struct nfs4_cl *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->rep);
	c->rep = NULL;
	free(c->cb);
	c->cb = NULL;
}

void nfs4_cl_call_begin(struct nfs4_cl *c, struct ut_buf *b, uint32_t vers, uint32_t proc)
{
	ut_buf_init(b, 2u << 20);
	xdr_put_u32(b, 0); /* record mark */
	xdr_put_u32(b, ++c->xid);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 100003);
	xdr_put_u32(b, vers);
	xdr_put_u32(b, proc);
	xdr_put_u32(b, 1); /* AUTH_SYS */
	xdr_put_u32(b, 4 + 8 + 4 + 4 + 4);
	xdr_put_u32(b, 0);
	xdr_put_opaque(b, "test", 4);
	xdr_put_u32(b, c->uid);
	xdr_put_u32(b, c->gid);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0); /* verifier AUTH_NONE */
	xdr_put_u32(b, 0);
}

void nfs4_cl_begin(struct nfs4_cl *c, struct ut_buf *b, uint32_t minor, uint32_t nops)
{
	nfs4_cl_call_begin(c, b, 4, 1);
	xdr_put_opaque(b, "t", 1);
	xdr_put_u32(b, minor);
	xdr_put_u32(b, nops);
}

static int read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (uint8_t *)p + got, n - got);

		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

int nfs4_cl_post(struct nfs4_cl *c, struct ut_buf *b)
{
	size_t off = 0;
	int rc = -1;

	if (b->err)
		goto out;
	ut_buf_set_be32(b, 0, 0x80000000u | (uint32_t)(b->len - 4));
	while (off < b->len) {
		ssize_t k = write(c->fd, ut_buf_bytes(b) + off, b->len - off);

		if (k <= 0)
			goto out;
		off += (size_t)k;
	}
	rc = 0;
out:
	ut_buf_cleanup(b);
	return rc;
}

/* One whole record into c->rep. */
static int recv_record(struct nfs4_cl *c)
{
	uint8_t mark[4];
	uint32_t len;

	free(c->rep);
	c->rep = NULL;
	c->rep_len = 0;
	for (;;) { /* fragments until the last */
		uint8_t *nr;
		bool last;

		if (read_full(c->fd, mark, 4) != 0)
			return -1;
		len = (uint32_t)mark[0] << 24 | (uint32_t)mark[1] << 16 | (uint32_t)mark[2] << 8 | mark[3];
		last = (len & 0x80000000u) != 0;
		len &= 0x7fffffffu;
		if (!(nr = realloc(c->rep, c->rep_len + len + 1)))
			return -1;
		c->rep = nr;
		if (read_full(c->fd, c->rep + c->rep_len, len) != 0)
			return -1;
		c->rep_len += len;
		if (last)
			return 0;
	}
}

/* Answer the CB_NULL in c->rep (as a client does: accepted, SUCCESS). */
static void answer_null(struct nfs4_cl *c)
{
	struct ut_buf b;
	size_t off = 0;

	ut_buf_init(&b, 64);
	ut_buf_put_zero(&b, 4);
	xdr_put_fixed(&b, c->rep, 4); /* its xid */
	xdr_put_u32(&b, 1);           /* REPLY */
	xdr_put_u32(&b, 0);           /* MSG_ACCEPTED */
	xdr_put_u32(&b, 0);           /* verifier AUTH_NONE */
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);           /* SUCCESS */
	ut_buf_set_be32(&b, 0, 0x80000000u | (uint32_t)(b.len - 4));
	while (off < b.len) {
		ssize_t k = write(c->fd, ut_buf_bytes(&b) + off, b.len - off);

		if (k <= 0)
			break;
		off += (size_t)k;
	}
	ut_buf_cleanup(&b);
}

/* Whether c->rep is a call (the server's, on the backchannel): kept in
 * c->cb, but a CB_NULL probe (procedure 0) answered and dropped. */
static bool stash_call(struct nfs4_cl *c)
{
	if (c->rep_len < 8 || c->rep[4] || c->rep[5] || c->rep[6] || c->rep[7])
		return false;
	if (c->rep_len >= 24 && !c->rep[20] && !c->rep[21] && !c->rep[22] && !c->rep[23]) {
		c->nnull++;
		if (!c->mute_null)
			answer_null(c);
		return true;
	}
	free(c->cb);
	c->cb = c->rep;
	c->cb_len = c->rep_len;
	c->ncb++;
	c->rep = NULL;
	c->rep_len = 0;
	return true;
}

int nfs4_cl_wait_cb(struct nfs4_cl *c, int timeout_ms)
{
	struct pollfd pf = { .fd = c->fd, .events = POLLIN };
	unsigned nnull;

	for (;;) { /* a CB_NULL probe is answered on the way (the wait starts again) */
		if (poll(&pf, 1, timeout_ms) <= 0)
			return 0;
		nnull = c->nnull;
		if (recv_record(c) != 0)
			return -1;
		if (!stash_call(c))
			return -1;
		if (c->nnull == nnull)
			return 1;
	}
}

int nfs4_cl_send(struct nfs4_cl *c, struct ut_buf *b, struct xdr_cur *cur)
{
	return nfs4_cl_post(c, b) != 0 ? -1 : nfs4_cl_recv(c, cur);
}

int nfs4_cl_recv(struct nfs4_cl *c, struct xdr_cur *cur)
{
	uint32_t len, st;
	int rc = -1;

	do
		if (recv_record(c) != 0)
			goto out;
	while (stash_call(c));
	xdr_cur_init(cur, c->rep, c->rep_len);
	(void)xdr_u32(cur); /* xid */
	(void)xdr_u32(cur); /* REPLY */
	if (xdr_u32(cur) != 0) /* MSG_DENIED */
		goto out;
	(void)xdr_u32(cur); /* verifier */
	(void)xdr_opaque(cur, 400, &len);
	st = xdr_u32(cur);
	rc = cur->err ? -1 : (int)st;
out:
	return rc;
}

int nfs4_cl_cb_parse(const struct nfs4_cl *c, struct nfs4_cl_cb *out)
{
	struct xdr_cur cur;
	uint32_t l, nops;

	memset(out, 0, sizeof(*out));
	if (!c->cb)
		return -1;
	xdr_cur_init(&cur, c->cb, c->cb_len);
	out->xid = xdr_u32(&cur);
	(void)xdr_u32(&cur); /* CALL */
	(void)xdr_u32(&cur); /* RPC version */
	out->prog = xdr_u32(&cur);
	out->vers = xdr_u32(&cur);
	out->proc = xdr_u32(&cur);
	out->flavor = xdr_u32(&cur);
	(void)xdr_opaque(&cur, 400, &l);
	(void)xdr_u32(&cur);
	(void)xdr_opaque(&cur, 400, &l);
	(void)xdr_opaque(&cur, 1024, &l); /* tag */
	out->minor = xdr_u32(&cur);
	(void)xdr_u32(&cur); /* callback_ident */
	nops = xdr_u32(&cur);
	if (nops < 1 || nops > 9 || xdr_u32(&cur) != 11) /* CB_SEQUENCE first */
		return -1;
	{
		const uint8_t *p = xdr_fixed(&cur, 16);

		if (p)
			memcpy(out->sess, p, 16);
	}
	out->seq = xdr_u32(&cur);
	out->slot = xdr_u32(&cur);
	(void)xdr_u32(&cur);
	(void)xdr_u32(&cur);
	if (xdr_u32(&cur) != 0) /* referring call lists */
		return -1;
	for (uint32_t i = 0; i < nops - 1; i++) {
		const uint8_t *p;
		uint32_t op = xdr_u32(&cur);

		if (op == 3 && nops == 2) { /* CB_GETATTR, alone */
			out->ngetattr = 1;
			if ((p = xdr_opaque(&cur, 128, &out->fhlen[0])))
				memcpy(out->fh[0], p, out->fhlen[0]);
			if (xdr_u32(&cur) != 1) /* bitmap words */
				return -1;
			out->ga_req = xdr_u32(&cur);
			break;
		}
		if (op != 4) /* CB_RECALL */
			return -1;
		out->nrecalls++;
		out->recall[i].seqid = xdr_u32(&cur);
		if ((p = xdr_fixed(&cur, 12)))
			memcpy(out->recall[i].other, p, 12);
		(void)xdr_u32(&cur); /* truncate */
		if ((p = xdr_opaque(&cur, 128, &out->fhlen[i])))
			memcpy(out->fh[i], p, out->fhlen[i]);
	}
	return cur.err ? -1 : 0;
}

/* Start the reply to cb into b: an accepted RPC reply, a CB_COMPOUND of
 * status with nres results, the first CB_SEQUENCE's: status, and when 0
 * its session, sequence and slot echoed. */
static void cb_reply_head(struct ut_buf *b, const struct nfs4_cl_cb *cb, uint32_t status, uint32_t nres)
{
	ut_buf_init(b, 4096);
	xdr_put_u32(b, 0); /* record mark */
	xdr_put_u32(b, cb->xid);
	xdr_put_u32(b, 1); /* REPLY */
	xdr_put_u32(b, 0); /* MSG_ACCEPTED */
	xdr_put_u32(b, 0); /* verifier */
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0); /* SUCCESS */
	xdr_put_u32(b, status);
	xdr_put_u32(b, 0); /* tag */
	xdr_put_u32(b, nres);
	xdr_put_u32(b, 11);
	xdr_put_u32(b, status);
	if (!status) {
		xdr_put_fixed(b, cb->sess, 16);
		xdr_put_u32(b, cb->seq);
		xdr_put_u32(b, cb->slot);
		xdr_put_u32(b, 0);
		xdr_put_u32(b, 0);
	}
}

int nfs4_cl_cb_reply(struct nfs4_cl *c, const struct nfs4_cl_cb *cb, uint32_t status)
{
	struct ut_buf b;

	cb_reply_head(&b, cb, status, status ? 1 : 1 + cb->nrecalls);
	for (uint32_t i = 0; !status && i < cb->nrecalls; i++) {
		xdr_put_u32(&b, 4);
		xdr_put_u32(&b, 0);
	}
	return nfs4_cl_post(c, &b);
}

int nfs4_cl_cb_reply_getattr(struct nfs4_cl *c, const struct nfs4_cl_cb *cb, uint64_t change, uint64_t size)
{
	struct ut_buf b;

	cb_reply_head(&b, cb, 0, 2);
	xdr_put_u32(&b, 3); /* CB_GETATTR */
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 1); /* fattr4: bitmap of change and size, */
	xdr_put_u32(&b, 1u << 3 | 1u << 4);
	xdr_put_u32(&b, 16); /* their values */
	xdr_put_u64(&b, change);
	xdr_put_u64(&b, size);
	return nfs4_cl_post(c, &b);
}

uint32_t nfs4_cl_res(struct xdr_cur *cur, uint32_t *nres)
{
	uint32_t st = xdr_u32(cur), l;

	(void)xdr_opaque(cur, 1024, &l);
	*nres = xdr_u32(cur);
	return cur->err ? 0xdead : st;
}

uint32_t nfs4_cl_op(struct xdr_cur *cur, uint32_t op)
{
	uint32_t got = xdr_u32(cur), st = xdr_u32(cur);

	if (cur->err || got != op)
		return 0xbad0 + (got & 0xff);
	return st;
}

static void put_chan(struct ut_buf *b, uint32_t slots)
{
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 1u << 20);
	xdr_put_u32(b, 1u << 20);
	xdr_put_u32(b, 8192);
	xdr_put_u32(b, 16);
	xdr_put_u32(b, slots);
	xdr_put_u32(b, 0);
}

uint32_t nfs4_cl_session(struct nfs4_cl *c, const char *owner, uint32_t slots, uint32_t *got)
{
	return nfs4_cl_session_ex(c, owner, slots, got, 0);
}

uint32_t nfs4_cl_session_ex(struct nfs4_cl *c, const char *owner, uint32_t slots, uint32_t *got, uint32_t flags)
{
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t n, st;

	nfs4_cl_begin(c, &b, 1, 1);
	xdr_put_u32(&b, 42);
	xdr_put_fixed(&b, "verifier", 8);
	xdr_put_opaque(&b, owner, (uint32_t)strlen(owner));
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0); /* SP4_NONE */
	xdr_put_u32(&b, 0);
	if (nfs4_cl_send(c, &b, &cur) != 0)
		return 0xdead;
	if ((st = nfs4_cl_res(&cur, &n)) != 0 || (st = nfs4_cl_op(&cur, 42)) != 0)
		return st;
	c->clientid = xdr_u64(&cur);
	c->cs_seq = xdr_u32(&cur);
	nfs4_cl_begin(c, &b, 1, 1);
	xdr_put_u32(&b, 43);
	xdr_put_u64(&b, c->clientid);
	xdr_put_u32(&b, c->cs_seq);
	xdr_put_u32(&b, flags);
	put_chan(&b, slots);
	put_chan(&b, 1);
	xdr_put_u32(&b, 0x40000000);
	xdr_put_u32(&b, 1);
	xdr_put_u32(&b, 0); /* AUTH_NONE */
	if (nfs4_cl_send(c, &b, &cur) != 0)
		return 0xdead;
	if ((st = nfs4_cl_res(&cur, &n)) != 0 || (st = nfs4_cl_op(&cur, 43)) != 0)
		return st;
	{
		const uint8_t *sid = xdr_fixed(&cur, 16);

		if (sid)
			memcpy(c->sess, sid, 16);
	}
	(void)xdr_u32(&cur);
	c->cs_flags = xdr_u32(&cur);
	(void)xdr_fixed(&cur, 20); /* pad, maxreq, maxrep, cached, maxops */
	*got = xdr_u32(&cur);
	return cur.err ? 0xdead : 0;
}
