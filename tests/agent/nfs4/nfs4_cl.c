/* nfs4_cl: the NFSv4.1 test client; see nfs4_cl.h. */
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

int nfs4_cl_cb_reply(struct nfs4_cl *c, const struct nfs4_cl_cb *cb, uint32_t status)
{
	struct ut_buf b;

	ut_buf_init(&b, 4096);
	xdr_put_u32(&b, 0); /* record mark */
	xdr_put_u32(&b, cb->xid);
	xdr_put_u32(&b, 1); /* REPLY */
	xdr_put_u32(&b, 0); /* MSG_ACCEPTED */
	xdr_put_u32(&b, 0); /* verifier */
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0); /* SUCCESS */
	xdr_put_u32(&b, status);
	xdr_put_u32(&b, 0); /* tag */
	xdr_put_u32(&b, status ? 1 : 1 + cb->nrecalls);
	xdr_put_u32(&b, 11);
	xdr_put_u32(&b, status);
	if (!status) {
		xdr_put_fixed(&b, cb->sess, 16);
		xdr_put_u32(&b, cb->seq);
		xdr_put_u32(&b, cb->slot);
		xdr_put_u32(&b, 0);
		xdr_put_u32(&b, 0);
		for (uint32_t i = 0; i < cb->nrecalls; i++) {
			xdr_put_u32(&b, 4);
			xdr_put_u32(&b, 0);
		}
	}
	return nfs4_cl_post(c, &b);
}

int nfs4_cl_cb_reply_getattr(struct nfs4_cl *c, const struct nfs4_cl_cb *cb, uint64_t change, uint64_t size)
{
	struct ut_buf b;

	ut_buf_init(&b, 4096);
	xdr_put_u32(&b, 0); /* record mark */
	xdr_put_u32(&b, cb->xid);
	xdr_put_u32(&b, 1); /* REPLY */
	xdr_put_u32(&b, 0); /* MSG_ACCEPTED */
	xdr_put_u32(&b, 0); /* verifier */
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0); /* SUCCESS */
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0); /* tag */
	xdr_put_u32(&b, 2);
	xdr_put_u32(&b, 11);
	xdr_put_u32(&b, 0);
	xdr_put_fixed(&b, cb->sess, 16);
	xdr_put_u32(&b, cb->seq);
	xdr_put_u32(&b, cb->slot);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);
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

static void put_str(struct ut_buf *b, const char *s)
{
	xdr_put_opaque(b, s, (uint32_t)strlen(s));
}

void nfs4_cl_sequence(struct ut_buf *b, const struct nfs4_cl *c, uint32_t slot, uint32_t seqid, bool cache)
{
	xdr_put_u32(b, 53);
	xdr_put_fixed(b, c->sess, 16);
	xdr_put_u32(b, seqid);
	xdr_put_u32(b, slot);
	xdr_put_u32(b, slot);
	xdr_put_u32(b, cache);
}

void nfs4_cl_putrootfh(struct ut_buf *b)
{
	xdr_put_u32(b, 24);
}

void nfs4_cl_putfh(struct ut_buf *b, const uint8_t *fh, uint32_t len)
{
	xdr_put_u32(b, 22);
	xdr_put_opaque(b, fh, len);
}

void nfs4_cl_lookup(struct ut_buf *b, const char *name)
{
	xdr_put_u32(b, 15);
	put_str(b, name);
}

void nfs4_cl_getfh(struct ut_buf *b)
{
	xdr_put_u32(b, 10);
}

void nfs4_cl_savefh(struct ut_buf *b)
{
	xdr_put_u32(b, 32);
}

void nfs4_cl_getattr(struct ut_buf *b, uint32_t w0, uint32_t w1)
{
	xdr_put_u32(b, 9);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, w0);
	xdr_put_u32(b, w1);
}

static void put_mode_attr(struct ut_buf *b, uint32_t mode)
{
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 1u << 1); /* mode (33) */
	xdr_put_u32(b, 4);
	xdr_put_u32(b, mode);
}

void nfs4_cl_mkdir(struct ut_buf *b, const char *name)
{
	xdr_put_u32(b, 6);
	xdr_put_u32(b, 2); /* NF4DIR */
	put_str(b, name);
	put_mode_attr(b, 0755);
}

void nfs4_cl_remove(struct ut_buf *b, const char *name)
{
	xdr_put_u32(b, 28);
	put_str(b, name);
}

static void open_head_deny(struct ut_buf *b, const char *owner, uint32_t access, uint32_t deny)
{
	xdr_put_u32(b, 18);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, access);
	xdr_put_u32(b, deny);
	xdr_put_u64(b, 0);
	put_str(b, owner);
}

static void open_head(struct ut_buf *b, const char *owner, uint32_t access)
{
	open_head_deny(b, owner, access, 0);
}

void nfs4_cl_open_deny(struct ut_buf *b, const char *owner, const char *name, uint32_t access, uint32_t deny)
{
	open_head_deny(b, owner, access, deny);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	put_str(b, name);
}

void nfs4_cl_open_create(struct ut_buf *b, const char *owner, const char *name, uint32_t mode)
{
	open_head(b, owner, 3);
	xdr_put_u32(b, 1); /* OPEN4_CREATE */
	xdr_put_u32(b, 0); /* UNCHECKED4 */
	put_mode_attr(b, mode);
	xdr_put_u32(b, 0); /* CLAIM_NULL */
	put_str(b, name);
}

void nfs4_cl_open_sized(struct ut_buf *b, const char *owner, const char *name, const uint8_t *verf, uint64_t size,
			bool set_mode, uint32_t mode)
{
	open_head(b, owner, 3);
	xdr_put_u32(b, 1);            /* OPEN4_CREATE */
	xdr_put_u32(b, verf ? 3 : 0); /* EXCLUSIVE4_1 : UNCHECKED4 */
	if (verf)
		xdr_put_fixed(b, verf, 8);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 1u << 4);                 /* size (4) */
	xdr_put_u32(b, set_mode ? 1u << 1 : 0); /* mode (33) */
	xdr_put_u32(b, set_mode ? 12 : 8);
	xdr_put_u64(b, size);
	if (set_mode)
		xdr_put_u32(b, mode);
	xdr_put_u32(b, 0); /* CLAIM_NULL */
	put_str(b, name);
}

void nfs4_cl_open_nocreate(struct ut_buf *b, const char *owner, const char *name, uint32_t access)
{
	open_head(b, owner, access);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	put_str(b, name);
}

static void put_sid(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, sid->seqid);
	xdr_put_fixed(b, sid->other, 12);
}

void nfs4_cl_write(struct ut_buf *b, const struct nfs4_sid *sid, uint64_t off, const void *data, uint32_t len)
{
	xdr_put_u32(b, 38);
	put_sid(b, sid);
	xdr_put_u64(b, off);
	xdr_put_u32(b, 2); /* FILE_SYNC4 */
	xdr_put_opaque(b, data, len);
}

void nfs4_cl_read(struct ut_buf *b, const struct nfs4_sid *sid, uint64_t off, uint32_t count)
{
	xdr_put_u32(b, 25);
	put_sid(b, sid);
	xdr_put_u64(b, off);
	xdr_put_u32(b, count);
}

void nfs4_cl_close_op(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 4);
	xdr_put_u32(b, 0);
	put_sid(b, sid);
}

void nfs4_cl_readdir(struct ut_buf *b, uint64_t cookie, uint32_t maxcount)
{
	xdr_put_u32(b, 26);
	xdr_put_u64(b, cookie);
	xdr_put_u64(b, 0);
	xdr_put_u32(b, maxcount);
	xdr_put_u32(b, maxcount);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 1u << 1 | 1u << 20); /* type, fileid */
	xdr_put_u32(b, 0);
}

void nfs4_cl_rename(struct ut_buf *b, const char *from, const char *to)
{
	xdr_put_u32(b, 29);
	put_str(b, from);
	put_str(b, to);
}

void nfs4_cl_get_sid(struct xdr_cur *cur, struct nfs4_sid *sid)
{
	const uint8_t *o;

	sid->seqid = xdr_u32(cur);
	o = xdr_fixed(cur, 12);
	if (o)
		memcpy(sid->other, o, 12);
}

void nfs4_cl_open_res(struct xdr_cur *cur, struct nfs4_sid *sid)
{
	uint32_t dtype;
	struct nfs4_sid dsid;

	nfs4_cl_open_res_deleg(cur, sid, &dtype, &dsid);
}

void nfs4_cl_open_res_deleg(struct xdr_cur *cur, struct nfs4_sid *sid, uint32_t *dtype, struct nfs4_sid *dsid)
{
	nfs4_cl_open_res_wdeleg(cur, sid, dtype, dsid, NULL, NULL);
}

void nfs4_cl_open_res_wdeleg(struct xdr_cur *cur, struct nfs4_sid *sid, uint32_t *dtype, struct nfs4_sid *dsid,
			     uint64_t *limit, uint32_t *why)
{
	uint32_t n, i, l;

	nfs4_cl_get_sid(cur, sid);
	(void)xdr_fixed(cur, 20); /* cinfo */
	(void)xdr_u32(cur);       /* rflags */
	n = xdr_u32(cur);
	for (i = 0; i < n && i < 8; i++)
		(void)xdr_u32(cur);
	*dtype = xdr_u32(cur);
	memset(dsid, 0, sizeof(*dsid));
	if (limit)
		*limit = 0;
	if (why)
		*why = UINT32_MAX;
	if (*dtype == 3 && why) { /* OPEN_DELEGATE_NONE_EXT: why, and for CONTENTION / RESOURCE a bool */
		uint32_t w = xdr_u32(cur);

		if (w == 1 || w == 2)
			(void)xdr_u32(cur);
		if (why)
			*why = w;
	}
	if (*dtype == 1 || *dtype == 2) { /* OPEN_DELEGATE_READ / _WRITE: stateid, recall, (space_limit,) nfsace4 */
		nfs4_cl_get_sid(cur, dsid);
		(void)xdr_u32(cur);
		if (*dtype == 2) { /* nfs_space_limit4: NFS_LIMIT_SIZE filesize, or NFS_LIMIT_BLOCKS */
			uint32_t by = xdr_u32(cur);
			uint64_t v = by == 1 ? xdr_u64(cur) : (uint64_t)xdr_u32(cur) * xdr_u32(cur);

			if (limit)
				*limit = v;
		}
		(void)xdr_u32(cur);
		(void)xdr_u32(cur);
		(void)xdr_u32(cur);
		(void)xdr_opaque(cur, 1024, &l);
	}
}

void nfs4_cl_sequence_res(struct xdr_cur *cur)
{
	(void)xdr_fixed(cur, 16 + 20);
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
	put_str(&b, owner);
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

void nfs4_cl_open_previous(struct ut_buf *b, const char *owner, uint32_t access)
{
	open_head(b, owner, access);
	xdr_put_u32(b, 0); /* OPEN4_NOCREATE */
	xdr_put_u32(b, 1); /* CLAIM_PREVIOUS */
	xdr_put_u32(b, 0); /* OPEN_DELEGATE_NONE */
}

void nfs4_cl_open_downgrade(struct ut_buf *b, const struct nfs4_sid *sid, uint32_t access, uint32_t deny)
{
	xdr_put_u32(b, 21);
	put_sid(b, sid);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, access);
	xdr_put_u32(b, deny);
}

void nfs4_cl_verify(struct ut_buf *b, uint32_t op, const uint32_t *words, uint32_t nwords, const void *vals,
		    uint32_t len)
{
	xdr_put_u32(b, op);
	xdr_put_u32(b, nwords);
	for (uint32_t i = 0; i < nwords; i++)
		xdr_put_u32(b, words[i]);
	xdr_put_opaque(b, vals, len);
}

void nfs4_cl_reclaim_complete(struct ut_buf *b)
{
	xdr_put_u32(b, 58);
	xdr_put_u32(b, 0); /* rca_one_fs */
}

void nfs4_cl_lock(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, uint64_t off, uint64_t len,
		  const struct nfs4_sid *sid, const char *new_owner)
{
	nfs4_cl_lock_ex(b, c, type, false, off, len, sid, new_owner);
}

void nfs4_cl_lock_ex(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, bool reclaim, uint64_t off,
		     uint64_t len, const struct nfs4_sid *sid, const char *new_owner)
{
	xdr_put_u32(b, 12);
	xdr_put_u32(b, type);
	xdr_put_u32(b, reclaim);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
	xdr_put_u32(b, new_owner != NULL);
	if (new_owner) { /* open_to_lock_owner4: sid is the open stateid */
		xdr_put_u32(b, 0);
		put_sid(b, sid);
		xdr_put_u32(b, 0);
		xdr_put_u64(b, c->clientid);
		put_str(b, new_owner);
	} else {         /* exist_lock_owner4: sid is the lock stateid */
		put_sid(b, sid);
		xdr_put_u32(b, 0);
	}
}

void nfs4_cl_lockt(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, uint64_t off, uint64_t len,
		   const char *owner)
{
	xdr_put_u32(b, 13);
	xdr_put_u32(b, type);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
	xdr_put_u64(b, c->clientid);
	put_str(b, owner);
}

void nfs4_cl_locku(struct ut_buf *b, uint32_t type, const struct nfs4_sid *sid, uint64_t off, uint64_t len)
{
	xdr_put_u32(b, 14);
	xdr_put_u32(b, type);
	xdr_put_u32(b, 0);
	put_sid(b, sid);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
}

void nfs4_cl_free_stateid(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 45);
	put_sid(b, sid);
}

void nfs4_cl_denied(struct xdr_cur *cur, struct nfs4_cl_denied *d)
{
	const uint8_t *o;
	uint32_t n = 0;

	d->off = xdr_u64(cur);
	d->len = xdr_u64(cur);
	d->type = xdr_u32(cur);
	d->clientid = xdr_u64(cur);
	o = xdr_opaque(cur, sizeof(d->owner) - 1, &n);
	memset(d->owner, 0, sizeof(d->owner));
	if (o)
		memcpy(d->owner, o, n);
}

void nfs4_cl_delegreturn(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 8);
	put_sid(b, sid);
}

void nfs4_cl_test_stateid(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 55);
	xdr_put_u32(b, 1);
	put_sid(b, sid);
}

void nfs4_cl_bind_conn(struct ut_buf *b, const struct nfs4_cl *c, uint32_t dir)
{
	xdr_put_u32(b, 41);
	xdr_put_fixed(b, c->sess, 16);
	xdr_put_u32(b, dir);
	xdr_put_u32(b, 0); /* not RDMA */
}

uint32_t nfs4_cl_sequence_flags(struct xdr_cur *cur)
{
	(void)xdr_fixed(cur, 16);
	(void)xdr_u32(cur);
	(void)xdr_u32(cur);
	(void)xdr_u32(cur);
	(void)xdr_u32(cur);
	return xdr_u32(cur);
}
