/* test_nfs4_session: NFSv4.1 on a live nfs_serve, driven by the suite's own
 * client (nfs4_cl.c): program versions and minor versions, EXCHANGE_ID and
 * CREATE_SESSION (slots negotiated down to the server's 180, its replay),
 * SEQUENCE's slot replay of non-idempotent requests (CREATE and REMOVE
 * retransmitted get the cached reply, not a second effect), misordered
 * sequence ids, a COMPOUND over the operation limit, the pseudo root and the
 * export rules' nfsv4 flag, a file created, written, read, listed and
 * removed, bad and closed stateids, a second connection bound to the
 * session, a read-only export, DESTROY_SESSION and DESTROY_CLIENTID; and
 * byte-range locks between two clients (LOCK, LOCKT, LOCKU, LOCK4denied,
 * FREE_STATEID, release on CLOSE, on DESTROY_CLIENTID and on lease expiry). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/agent/nfs/nfs_live.h"
#include "tests/agent/nfs4/nfs4_cl.h"

static int failures;
static int port;
static struct nfs_live live;

#define CHECK(c, ...) NFS_LIVE_CHECK(failures, c, __VA_ARGS__)

enum {
	OK = 0, NOENT = 2, EXIST = 17, ROFS = 30, BAD_STATEID = 10025, MINOR_VERS_MISMATCH = 10021,
	SEQ_MISORDERED = 10063, TOO_MANY_OPS = 10070, OP_NOT_IN_SESSION = 10071, BADSESSION = 10052,
	OP_SEQUENCE = 53, OP_PUTROOTFH = 24, OP_LOOKUP = 15, OP_CREATE = 6, OP_REMOVE = 28, OP_GETFH = 10,
	OP_OPEN = 18, OP_WRITE = 38, OP_READ = 25, OP_CLOSE = 4, OP_READDIR = 26, OP_PUTFH = 22,
	OP_LOCK = 12, OP_LOCKT = 13, OP_LOCKU = 14, OP_FREE_STATEID = 45, OP_DESTROY_SESSION = 44,
	OP_DESTROY_CLIENTID = 57, INVAL = 22, DENIED = 10010, LOCKS_HELD = 10037, OPENMODE = 10038,
	READ_LT = 1, WRITE_LT = 2,
};

static void dial(struct nfs4_cl *c)
{
	if (nfs4_cl_dial(c, port) != 0) {
		perror("connect");
		nfs_live_stop(&live);
		exit(1);
	}
}

/* NULL, versions 3, 4 and 5, minor versions 0 and 2. */
static void test_versions(void)
{
	struct nfs4_cl c;
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t n, lo, hi;

	dial(&c);
	nfs4_cl_call_begin(&c, &b, 4, 0);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "NULL of version 4");
	nfs4_cl_call_begin(&c, &b, 5, 0);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 2, "version 5 is PROG_MISMATCH");
	lo = xdr_u32(&cur);
	hi = xdr_u32(&cur);
	CHECK(lo == 3 && hi == 4, "versions served %u..%u", lo, hi);
	for (uint32_t minor = 0; minor <= 2; minor += 2) {
		nfs4_cl_begin(&c, &b, minor, 1);
		nfs4_cl_putrootfh(&b);
		CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "COMPOUND minor %u", minor);
		CHECK(nfs4_cl_res(&cur, &n) == MINOR_VERS_MISMATCH && n == 0, "minor %u: no results", minor);
	}
	nfs4_cl_begin(&c, &b, 1, 1);
	nfs4_cl_putrootfh(&b);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "PUTROOTFH alone");
	CHECK(nfs4_cl_res(&cur, &n) == OP_NOT_IN_SESSION, "an operation outside a session");
	nfs4_cl_close(&c);
}

/* slots negotiated; CREATE_SESSION replay; SEQUENCE replay and misorder;
 * the op limit; the pseudo root; a file's life; stateids. */
static void test_session(void)
{
	struct nfs4_cl c, c2;
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t n, got = 0, st, seq = 1, i;
	uint8_t *first = NULL, fh[128];
	size_t first_len = 0;
	uint32_t fhlen = 0;
	struct nfs4_sid sid, bad;
	char path[512];
	struct stat sb;
	static uint8_t data[100000], back[100000];

	dial(&c);
	CHECK((st = nfs4_cl_session(&c, "client-a", 1000, &got)) == 0, "session: %u", st);
	CHECK(got == 180, "1000 slots asked, %u granted (the server's 180)", got);

	/* CREATE dir "d1" on slot 0: the retransmission gets the same reply */
	nfs4_cl_begin(&c, &b, 1, 4);
	nfs4_cl_sequence(&b, &c, 0, seq, true);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_lookup(&b, "vol");
	nfs4_cl_mkdir(&b, "d1");
	for (i = 0; i < 2; i++) {
		struct ut_buf copy;

		ut_buf_init(&copy, 1u << 20);
		ut_buf_add(&copy, ut_buf_bytes(&b), b.len);
		CHECK(nfs4_cl_send(&c, &copy, &cur) == 0, "CREATE send %u", i);
		st = nfs4_cl_res(&cur, &n);
		CHECK(st == OK && n == 4, "CREATE %u: status %u, %u results (a second effect would be EXIST)", i, st, n);
		if (i == 0) {
			first_len = c.rep_len - 4;
			first = malloc(first_len);
			memcpy(first, c.rep + 4, first_len);
		} else {
			CHECK(c.rep_len - 4 == first_len && !memcmp(c.rep + 4, first, first_len),
			      "the retransmission's reply is the cached one");
		}
	}
	ut_buf_cleanup(&b);
	free(first);
	snprintf(path, sizeof(path), "%s/vol/d1", live.dir);
	CHECK(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode), "d1 made once");

	/* REMOVE d1, retransmitted: OK twice (cached), not NOENT */
	seq++;
	for (i = 0; i < 2; i++) {
		nfs4_cl_begin(&c, &b, 1, 4);
		nfs4_cl_sequence(&b, &c, 0, seq, true);
		nfs4_cl_putrootfh(&b);
		nfs4_cl_lookup(&b, "vol");
		nfs4_cl_remove(&b, "d1");
		CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "REMOVE send");
		st = nfs4_cl_res(&cur, &n);
		CHECK(st == OK, "REMOVE %u: %u (a second remove would be NOENT)", i, st);
	}
	CHECK(stat(path, &sb) != 0 && errno == ENOENT, "d1 removed");

	/* misordered: seq + 2 and an old one */
	for (i = 0; i < 2; i++) {
		nfs4_cl_begin(&c, &b, 1, 2);
		nfs4_cl_sequence(&b, &c, 0, i == 0 ? seq + 2 : seq - 1, false);
		nfs4_cl_putrootfh(&b);
		CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
		st = nfs4_cl_res(&cur, &n);
		CHECK(st == SEQ_MISORDERED && n == 1, "misordered seqid: %u", st);
	}

	/* more than 32 operations */
	seq++;
	nfs4_cl_begin(&c, &b, 1, 33);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	for (i = 0; i < 32; i++)
		nfs4_cl_putrootfh(&b);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	st = nfs4_cl_res(&cur, &n);
	CHECK(st == TOO_MANY_OPS, "33 operations: %u", st);
	nfs4_cl_begin(&c, &b, 1, 32);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	for (i = 0; i < 31; i++)
		nfs4_cl_putrootfh(&b);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	st = nfs4_cl_res(&cur, &n);
	CHECK(st == OK && n == 32, "32 operations: %u, %u results", st, n);

	/* the pseudo root lists vol and ro, not hidden (its rule is not for NFSv4) nor v3 (NFSV3 only) */
	seq++;
	nfs4_cl_begin(&c, &b, 1, 3);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_readdir(&b, 0, 8192);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK(nfs4_cl_res(&cur, &n) == OK, "READDIR of the root");
	nfs4_cl_op(&cur, OP_SEQUENCE);
	nfs4_cl_sequence_res(&cur);
	nfs4_cl_op(&cur, OP_PUTROOTFH);
	CHECK(nfs4_cl_op(&cur, OP_READDIR) == OK, "READDIR");
	{
		char names[256] = "";
		uint32_t len;

		(void)xdr_fixed(&cur, 8);
		while (xdr_u32(&cur) == 1 && !cur.err) {
			const uint8_t *nm;

			(void)xdr_u64(&cur);
			nm = xdr_opaque(&cur, 255, &len);
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%.*s ", (int)len, (const char *)nm);
			n = xdr_u32(&cur);
			for (i = 0; i < n; i++)
				(void)xdr_u32(&cur);
			(void)xdr_opaque(&cur, 4096, &len);
		}
		CHECK(!strcmp(names, "vol ro "), "pseudo root lists \"%s\"", names);
	}
	for (i = 0; i < 2; i++) {
		seq++;
		nfs4_cl_begin(&c, &b, 1, 3);
		nfs4_cl_sequence(&b, &c, 0, seq, false);
		nfs4_cl_putrootfh(&b);
		nfs4_cl_lookup(&b, i == 0 ? "hidden" : "v3");
		CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
		st = nfs4_cl_res(&cur, &n);
		CHECK(st == NOENT, "LOOKUP of an export not for NFSv4: %u", st);
	}

	/* every attribute of the export root (what statfs and stat ask) */
	seq++;
	nfs4_cl_begin(&c, &b, 1, 4);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_lookup(&b, "vol");
	nfs4_cl_getattr(&b, 0xffffffffu, 0xffffffffu);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == OK && n == 4, "GETATTR of everything: %u", st);
	nfs4_cl_op(&cur, OP_SEQUENCE);
	nfs4_cl_sequence_res(&cur);
	nfs4_cl_op(&cur, OP_PUTROOTFH);
	nfs4_cl_op(&cur, OP_LOOKUP);
	CHECK(nfs4_cl_op(&cur, 9) == OK, "GETATTR");
	{
		uint32_t w[3] = { 0 }, len;

		n = xdr_u32(&cur);
		for (i = 0; i < n; i++) {
			uint32_t v = xdr_u32(&cur);

			if (i < 3)
				w[i] = v;
		}
		(void)xdr_opaque(&cur, 65536, &len);
		/* space_total (44) and files_total (23) are the export's capacity */
		CHECK(!cur.err && (w[0] & 1u << 23) && (w[1] & 1u << 12) && len > 100 && xdr_left(&cur) == 0,
		      "attributes: words %08x %08x, %u bytes, %zu left", w[0], w[1], len, xdr_left(&cur));
	}

	/* a file: OPEN (create), WRITE, READ, CLOSE */
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	seq++;
	nfs4_cl_begin(&c, &b, 1, 6);
	nfs4_cl_sequence(&b, &c, 0, seq, true);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_lookup(&b, "vol");
	nfs4_cl_open_create(&b, "owner-1", "f", 0644);
	nfs4_cl_getfh(&b);
	{
		struct nfs4_sid cur_sid = { .seqid = 1 }; /* the current stateid */

		nfs4_cl_write(&b, &cur_sid, 0, data, sizeof(data));
	}
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == OK, "OPEN+WRITE: %u", st);
	nfs4_cl_op(&cur, OP_SEQUENCE);
	nfs4_cl_sequence_res(&cur);
	nfs4_cl_op(&cur, OP_PUTROOTFH);
	nfs4_cl_op(&cur, OP_LOOKUP);
	CHECK(nfs4_cl_op(&cur, OP_OPEN) == OK, "OPEN");
	nfs4_cl_open_res(&cur, &sid);
	CHECK(nfs4_cl_op(&cur, OP_GETFH) == OK, "GETFH");
	{
		const uint8_t *p = xdr_opaque(&cur, 128, &fhlen);

		if (p)
			memcpy(fh, p, fhlen);
	}
	CHECK(nfs4_cl_op(&cur, OP_WRITE) == OK, "WRITE with the current stateid");
	CHECK(xdr_u32(&cur) == sizeof(data), "WRITE count");
	snprintf(path, sizeof(path), "%s/vol/f", live.dir);
	CHECK(stat(path, &sb) == 0 && sb.st_size == (off_t)sizeof(data) && (sb.st_mode & 0777) == 0644,
	      "f on the shelf: size %lld mode %o", (long long)sb.st_size, sb.st_mode & 0777);

	seq++;
	nfs4_cl_begin(&c, &b, 1, 3);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_read(&b, &sid, 0, sizeof(back) + 100);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK(nfs4_cl_res(&cur, &n) == OK, "READ");
	nfs4_cl_op(&cur, OP_SEQUENCE);
	nfs4_cl_sequence_res(&cur);
	nfs4_cl_op(&cur, OP_PUTFH);
	CHECK(nfs4_cl_op(&cur, OP_READ) == OK, "READ");
	{
		bool eof = xdr_u32(&cur);
		uint32_t len;
		const uint8_t *p = xdr_opaque(&cur, sizeof(back), &len);

		CHECK(eof && len == sizeof(back) && p && !memcmp(p, data, len), "READ gives what WRITE wrote");
		(void)back;
	}

	/* a stateid not the server's (its last byte changed): BAD_STATEID */
	bad = sid;
	bad.other[11] ^= 0x55;
	seq++;
	nfs4_cl_begin(&c, &b, 1, 3);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_read(&b, &bad, 0, 10);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == BAD_STATEID, "READ with a forged stateid: %u", st);

	/* a second connection bound to the session (nconnect): slot 1 there */
	dial(&c2);
	memcpy(c2.sess, c.sess, 16);
	nfs4_cl_begin(&c2, &b, 1, 1);
	xdr_put_u32(&b, 41);
	xdr_put_fixed(&b, c.sess, 16);
	xdr_put_u32(&b, 3);
	xdr_put_u32(&b, 0);
	CHECK(nfs4_cl_send(&c2, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == OK, "BIND_CONN_TO_SESSION: %u", st);
	nfs4_cl_begin(&c2, &b, 1, 3);
	nfs4_cl_sequence(&b, &c2, 1, 1, false);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_close_op(&b, &sid);
	CHECK(nfs4_cl_send(&c2, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == OK, "CLOSE on the second connection: %u", st);
	nfs4_cl_close(&c2);

	/* the closed stateid is no more */
	seq++;
	nfs4_cl_begin(&c, &b, 1, 3);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_read(&b, &sid, 0, 10);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == BAD_STATEID, "READ with a closed stateid: %u", st);

	/* READDIR lists f; REMOVE f; LOOKUP f is NOENT */
	seq++;
	nfs4_cl_begin(&c, &b, 1, 4);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_lookup(&b, "vol");
	nfs4_cl_readdir(&b, 0, 8192);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK(nfs4_cl_res(&cur, &n) == OK, "READDIR vol");
	CHECK(memmem(c.rep, c.rep_len, "\0\0\0\1f\0\0\0", 8) != NULL, "READDIR lists f");
	seq++;
	nfs4_cl_begin(&c, &b, 1, 5);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_lookup(&b, "vol");
	nfs4_cl_remove(&b, "f");
	nfs4_cl_lookup(&b, "f");
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == NOENT && n == 5, "REMOVE then LOOKUP: %u after %u", st, n);
	CHECK(stat(path, &sb) != 0, "f gone from the shelf");

	/* the read-only export */
	seq++;
	nfs4_cl_begin(&c, &b, 1, 4);
	nfs4_cl_sequence(&b, &c, 0, seq, false);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_lookup(&b, "ro");
	nfs4_cl_mkdir(&b, "x");
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == ROFS, "CREATE on a read-only export: %u", st);

	/* DESTROY_SESSION: SEQUENCE on it is BADSESSION; DESTROY_CLIENTID */
	nfs4_cl_begin(&c, &b, 1, 1);
	xdr_put_u32(&b, 44);
	xdr_put_fixed(&b, c.sess, 16);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == OK, "DESTROY_SESSION: %u", st);
	nfs4_cl_begin(&c, &b, 1, 2);
	nfs4_cl_sequence(&b, &c, 0, seq + 1, false);
	nfs4_cl_putrootfh(&b);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == BADSESSION, "SEQUENCE after DESTROY_SESSION: %u", st);
	nfs4_cl_begin(&c, &b, 1, 1);
	xdr_put_u32(&b, 57);
	xdr_put_u64(&b, c.clientid);
	CHECK(nfs4_cl_send(&c, &b, &cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&cur, &n)) == OK, "DESTROY_CLIENTID: %u", st);
	nfs4_cl_close(&c);
}

/* A lock test's client: its session, the slot 0 sequence, the file's handle. */
struct lk {
	struct nfs4_cl c;
	uint32_t seq;
	uint8_t fh[128];
	uint32_t fhlen;
	struct nfs4_sid open, lock;
	struct ut_buf b;
	struct xdr_cur cur;
};

/* SEQUENCE, PUTFH, then the caller's one operation. */
static struct ut_buf *lk_begin(struct lk *l)
{
	nfs4_cl_begin(&l->c, &l->b, 1, 3);
	nfs4_cl_sequence(&l->b, &l->c, 0, l->seq++, false);
	nfs4_cl_putfh(&l->b, l->fh, l->fhlen);
	return &l->b;
}

/* Send; the status of operation op (the third), l->cur after it. */
static uint32_t lk_run(struct lk *l, uint32_t op)
{
	uint32_t n;

	if (nfs4_cl_send(&l->c, &l->b, &l->cur) != 0)
		return 0xdead;
	(void)nfs4_cl_res(&l->cur, &n);
	if (n < 3 || nfs4_cl_op(&l->cur, OP_SEQUENCE) != OK)
		return 0xbad;
	nfs4_cl_sequence_res(&l->cur);
	(void)nfs4_cl_op(&l->cur, OP_PUTFH);
	return nfs4_cl_op(&l->cur, op);
}

/* A session for owner, the file vol/lk opened (created by the first) for access. */
static void lk_open(struct lk *l, const char *owner, uint32_t access)
{
	uint32_t got, st, n;
	const uint8_t *p;

	dial(&l->c);
	l->seq = 1;
	CHECK((st = nfs4_cl_session(&l->c, owner, 4, &got)) == OK, "%s: session %u", owner, st);
	nfs4_cl_begin(&l->c, &l->b, 1, 5);
	nfs4_cl_sequence(&l->b, &l->c, 0, l->seq++, false);
	nfs4_cl_putrootfh(&l->b);
	nfs4_cl_lookup(&l->b, "vol");
	if (access == 0)
		nfs4_cl_open_create(&l->b, "open-owner", "lk", 0644);
	else
		nfs4_cl_open_nocreate(&l->b, "open-owner", "lk", access);
	nfs4_cl_getfh(&l->b);
	CHECK(nfs4_cl_send(&l->c, &l->b, &l->cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&l->cur, &n)) == OK, "%s: OPEN of vol/lk: %u", owner, st);
	nfs4_cl_op(&l->cur, OP_SEQUENCE);
	nfs4_cl_sequence_res(&l->cur);
	nfs4_cl_op(&l->cur, OP_PUTROOTFH);
	nfs4_cl_op(&l->cur, OP_LOOKUP);
	nfs4_cl_op(&l->cur, OP_OPEN);
	nfs4_cl_open_res(&l->cur, &l->open);
	nfs4_cl_op(&l->cur, OP_GETFH);
	p = xdr_opaque(&l->cur, 128, &l->fhlen);
	if (p)
		memcpy(l->fh, p, l->fhlen);
}

static uint32_t lk_lock(struct lk *l, uint32_t type, uint64_t off, uint64_t len, const char *new_owner)
{
	uint32_t st;

	nfs4_cl_lock(lk_begin(l), &l->c, type, off, len, new_owner ? &l->open : &l->lock, new_owner);
	if ((st = lk_run(l, OP_LOCK)) == OK)
		nfs4_cl_get_sid(&l->cur, &l->lock);
	return st;
}

static void lk_end(struct lk *l)
{
	ut_buf_cleanup(&l->b);
	nfs4_cl_close(&l->c);
}

/* Two clients, A and B, on one file: conflicts, LOCKT, LOCKU, FREE_STATEID,
 * CLOSE and DESTROY_CLIENTID releasing. */
static void test_locks(void)
{
	struct lk a, b, r;
	struct nfs4_cl_denied d;
	struct nfs4_sid old;
	uint32_t st, n;

	lk_open(&a, "lock-a", 0);
	lk_open(&b, "lock-b", 3);
	CHECK((st = lk_lock(&a, WRITE_LT, 0, 100, "owner-a")) == OK, "A: write lock 0-99: %u", st);
	CHECK(a.lock.seqid == 1, "a new lock stateid has seqid 1: %u", a.lock.seqid);

	/* B's overlapping write lock: DENIED naming A's lock */
	CHECK((st = lk_lock(&b, WRITE_LT, 50, 10, "owner-b")) == DENIED, "B: write lock 50-59 over A's: %u", st);
	nfs4_cl_denied(&b.cur, &d);
	CHECK(!b.cur.err && d.off == 0 && d.len == 100 && d.type == WRITE_LT && d.clientid == a.c.clientid &&
		      !strcmp(d.owner, "owner-a"),
	      "LOCK4denied: %llu+%llu type %u client %llx (A's %llx) owner '%s'", (unsigned long long)d.off,
	      (unsigned long long)d.len, d.type, (unsigned long long)d.clientid, (unsigned long long)a.c.clientid,
	      d.owner);
	CHECK((st = lk_lock(&b, READ_LT, 99, 1, "owner-b")) == DENIED, "B: a read lock on A's last byte: %u", st);
	CHECK((st = lk_lock(&b, WRITE_LT, 100, UINT64_MAX, "owner-b")) == OK, "B: write lock 100-EOF: %u", st);

	/* LOCKT: B sees A's holder; A's own owner is no conflict to itself; a free range is OK */
	nfs4_cl_lockt(lk_begin(&b), &b.c, WRITE_LT, 10, 1, "owner-b");
	CHECK((st = lk_run(&b, OP_LOCKT)) == DENIED, "B: LOCKT of byte 10: %u", st);
	nfs4_cl_denied(&b.cur, &d);
	CHECK(d.clientid == a.c.clientid && !strcmp(d.owner, "owner-a") && d.len == 100, "LOCKT names A's lock");
	nfs4_cl_lockt(lk_begin(&a), &a.c, WRITE_LT, 10, 1, "owner-a");
	CHECK((st = lk_run(&a, OP_LOCKT)) == OK, "A: LOCKT over its own lock: %u", st);
	nfs4_cl_lockt(lk_begin(&a), &a.c, READ_LT, 200, 1, "owner-a");
	CHECK((st = lk_run(&a, OP_LOCKT)) == DENIED, "A: LOCKT over B's 100-EOF: %u", st);
	nfs4_cl_lockt(lk_begin(&a), &a.c, WRITE_LT, 0, 0, "owner-a");
	CHECK((st = lk_run(&a, OP_LOCKT)) == INVAL, "LOCKT of length 0: %u", st);
	CHECK((st = lk_lock(&a, WRITE_LT, UINT64_MAX - 5, 10, NULL)) == INVAL, "a range past 2^64: %u", st);

	/* a second lock owner of the same client conflicts too */
	nfs4_cl_lockt(lk_begin(&a), &a.c, WRITE_LT, 10, 1, "owner-a2");
	CHECK((st = lk_run(&a, OP_LOCKT)) == DENIED, "A's second lock owner against its first: %u", st);

	/* LOCKU releases: B's lock is granted then */
	old = a.lock;
	nfs4_cl_locku(lk_begin(&a), WRITE_LT, &a.lock, 0, 100);
	CHECK((st = lk_run(&a, OP_LOCKU)) == OK, "A: LOCKU 0-99: %u", st);
	nfs4_cl_get_sid(&a.cur, &a.lock);
	CHECK(a.lock.seqid == old.seqid + 1 && !memcmp(a.lock.other, old.other, 12), "LOCKU bumps the seqid");
	nfs4_cl_locku(lk_begin(&a), WRITE_LT, &old, 0, 100);
	CHECK((st = lk_run(&a, OP_LOCKU)) == 10024, "LOCKU with the older seqid: OLD_STATEID (%u)", st);
	CHECK((st = lk_lock(&b, WRITE_LT, 50, 10, NULL)) == OK, "B: 50-59 after A's LOCKU: %u", st);

	/* FREE_STATEID: refused while locks are held, done once none is */
	nfs4_cl_free_stateid(lk_begin(&b), &b.lock);
	CHECK((st = lk_run(&b, OP_FREE_STATEID)) == LOCKS_HELD, "B: FREE_STATEID holding locks: %u", st);
	nfs4_cl_free_stateid(lk_begin(&a), &a.lock);
	CHECK((st = lk_run(&a, OP_FREE_STATEID)) == OK, "A: FREE_STATEID of a lock state holding none: %u", st);
	nfs4_cl_locku(lk_begin(&a), WRITE_LT, &a.lock, 0, 100);
	CHECK((st = lk_run(&a, OP_LOCKU)) == BAD_STATEID, "LOCKU with the freed lock stateid: %u", st);

	/* CLOSE releases B's locks */
	CHECK((st = lk_lock(&a, WRITE_LT, 0, UINT64_MAX, "owner-a")) == DENIED, "A: the whole file while B holds: %u", st);
	nfs4_cl_close_op(lk_begin(&b), &b.open);
	CHECK((st = lk_run(&b, OP_CLOSE)) == OK, "B: CLOSE: %u", st);
	CHECK((st = lk_lock(&a, WRITE_LT, 0, UINT64_MAX, "owner-a")) == OK, "A: the whole file after B's CLOSE: %u", st);
	nfs4_cl_locku(lk_begin(&b), WRITE_LT, &b.lock, 50, 10);
	CHECK((st = lk_run(&b, OP_LOCKU)) == BAD_STATEID, "B: its lock stateid after CLOSE: %u", st);

	/* a read-only open gets no write lock */
	lk_open(&r, "lock-r", 1);
	CHECK((st = lk_lock(&r, WRITE_LT, 0, 1, "owner-r")) == 10038, "write lock under a read open: OPENMODE (%u)", st);

	/* DESTROY_SESSION + DESTROY_CLIENTID of A releases its lock: R's read lock is granted */
	CHECK((st = lk_lock(&r, READ_LT, 0, 1, "owner-r")) == DENIED, "R: read lock under A's write lock: %u", st);
	nfs4_cl_begin(&a.c, &a.b, 1, 1);
	xdr_put_u32(&a.b, OP_DESTROY_SESSION);
	xdr_put_fixed(&a.b, a.c.sess, 16);
	CHECK(nfs4_cl_send(&a.c, &a.b, &a.cur) == 0 && nfs4_cl_res(&a.cur, &n) == OK, "A: DESTROY_SESSION");
	nfs4_cl_begin(&a.c, &a.b, 1, 1);
	xdr_put_u32(&a.b, OP_DESTROY_CLIENTID);
	xdr_put_u64(&a.b, a.c.clientid);
	CHECK(nfs4_cl_send(&a.c, &a.b, &a.cur) == 0 && (st = nfs4_cl_res(&a.cur, &n)) == OK, "A: DESTROY_CLIENTID: %u",
	      st);
	CHECK((st = lk_lock(&r, READ_LT, 0, 1, "owner-r")) == OK, "R: read lock after A's DESTROY_CLIENTID: %u", st);
	lk_end(&a);
	lk_end(&b);
	lk_end(&r);
}

/* Lease expiry with a lease of 4 s (a second nfs_serve): A holds a lock and
 * goes silent; B is refused, then granted once A is a tenth of a lease past
 * its lease (B's LOCK drops it), and A's session is gone with it. */
static void test_lock_lease(const char *argv0)
{
	static const char *const exports[] = { "--nfs4-lease-s", "4", "/vol=%D/vol", NULL };
	struct nfs_live l2;
	struct lk a, b;
	uint32_t st, n;
	int saved = port;

	if (nfs_live_start(&l2, argv0, exports) != 0) {
		CHECK(0, "could not start a second nfs_serve");
		return;
	}
	port = l2.port;
	lk_open(&a, "lease-a", 0);
	lk_open(&b, "lease-b", 3);
	CHECK((st = lk_lock(&a, WRITE_LT, 0, UINT64_MAX, "owner-a")) == OK, "A: whole-file lock: %u", st);
	CHECK((st = lk_lock(&b, WRITE_LT, 0, 1, "owner-b")) == DENIED, "B while A's lease runs: %u", st);
	sleep(6); /* A silent past 4 s + 0.4 s; B too, but it holds no lock state (limit 8 s) */
	CHECK((st = lk_lock(&b, WRITE_LT, 0, 1, "owner-b")) == OK, "B after A's lease expired: %u", st);
	nfs4_cl_begin(&a.c, &a.b, 1, 2);
	nfs4_cl_sequence(&a.b, &a.c, 0, a.seq++, false);
	nfs4_cl_putrootfh(&a.b);
	CHECK(nfs4_cl_send(&a.c, &a.b, &a.cur) == 0, "send");
	CHECK((st = nfs4_cl_res(&a.cur, &n)) == BADSESSION, "A's session after its lease expired: %u", st);
	lk_end(&a);
	lk_end(&b);
	port = saved;
	nfs_live_stop(&l2);
}

int main(int argc, char **argv)
{
	static const char *const exports[] = {
		"/vol=%D/vol", "/ro=%D/ro,ro", "/hidden=%D/hidden,nov4rule", "/v3=%D/v3,v3only", NULL,
	};
	char argv0[1024];
	const char *slash = strrchr(argv[0], '/');

	(void)argc;
	/* nfs_serve lives in tests/agent/nfs/, next to this folder */
	snprintf(argv0, sizeof(argv0), "%.*s../nfs/x", slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	if (nfs_live_start(&live, argv0, exports) != 0) {
		fprintf(stderr, "could not start nfs_serve\n");
		return 1;
	}
	port = live.port;
	test_versions();
	test_session();
	test_locks();
	test_lock_lease(argv0);
	nfs_live_stop(&live);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("test_nfs4_session: all passed\n");
	return 0;
}
