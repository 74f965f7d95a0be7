/* test_nfs4_wdeleg: NFSv4.1 write delegations (agent/nfs4/nfs4_deleg.c,
 * the store's recall_on_access grants of agent/vol/vol_lease.h; issue 19).
 * The fixture of nfs4_harness.h (one store, NFSv3 + NFSv4.1 + NLM on one
 * port, lease 3 s, the SMB dispatcher): client P has a backchannel and gets
 * OPEN_DELEGATE_WRITE with an OPEN for writing of a file nobody else has
 * open, with a space limit of the file's size and the volume's free
 * capacity; Q has none and gets none. Any access of another client or
 * protocol recalls it: a v4.1 OPEN (for reading too), READ, WRITE, SETATTR,
 * LOCKT, REMOVE, GETATTR of size or change (recalled, not CB_GETATTR) answer NFS4ERR_DELAY
 * until DELEGRETURN; NFSv3 GETATTR, READ, SETATTR, WRITE and NLM TEST wait
 * in the server, an SMB CREATE (for reading too) is pending; the holder's
 * writes made before its DELEGRETURN are what the other caller sees. The
 * holder's own accesses recall nothing. Not returned within the lease time:
 * revoked, and the waiting caller goes on. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs/nlm.h"
#include "agent/nfs4/nfs4.h"
#include "agent/nfs4/nfs4_internal.h"
#include "agent/smb/smb_srv_internal.h"
#include "tests/agent/nfs4/nfs4_harness.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"
#include "util/ut_clock.h"

enum { OK4 = 0, DELAY4 = 10008, DELEG_REVOKED4 = 10087, RD = 1, WR = 2, BOTH = 3, WANT_WRITE = 0x200,
       WANT_READ = 0x100, WANT_NONE = 0x400, REVOKED_FLAG = 0x40, DT_NONE = 0, DT_READ = 1, DT_WRITE = 2, DT_NONE_EXT = 3 };
#define FILE_READ_DATA_ 0x1u
#define SHARE_ALL_ 7u

static struct aqt_store ts;
static struct nfs_srv *nsrv;
static struct nfs4_srv *v4;
static struct smb_srv *ssrv;
static struct nlm_srv *nlm;
static struct smbt_conn sc;
static struct nfs4t_cl P, Q;

/* ---------- v4.1 helpers ---------- */

static uint32_t c4_delegreturn(struct nfs4t_cl *x, const struct nfs4_sid *sid)
{
	return nfs4t_fh_op(x, 8, nfs4_cl_delegreturn, sid);
}

static uint32_t c4_ping(struct nfs4t_cl *x)
{
	nfs4t_begin(x, 0);
	nfs4t_send(x);
	return x->flags;
}

static void build_read(struct ut_buf *b, const struct nfs4_sid *sid)
{
	nfs4_cl_read(b, sid, 0, 64);
}

static void build_write_q(struct ut_buf *b, const struct nfs4_sid *sid)
{
	nfs4_cl_write(b, sid, 0, "QQ", 2);
}

static void build_write_p(struct ut_buf *b, const struct nfs4_sid *sid)
{
	nfs4_cl_write(b, sid, 8, "held-data", 9); /* past the end: the size changes */
}

static void build_getattr_size(struct ut_buf *b, const struct nfs4_sid *sid)
{
	(void)sid;
	nfs4_cl_getattr(b, 1u << 4, 0); /* size */
}

static void build_getattr_change(struct ut_buf *b, const struct nfs4_sid *sid)
{
	(void)sid;
	nfs4_cl_getattr(b, 1u << 3, 0); /* change */
}

static void build_getattr_mode(struct ut_buf *b, const struct nfs4_sid *sid)
{
	(void)sid;
	nfs4_cl_getattr(b, 0, 1u << 1); /* mode (33) */
}

/* SETATTR of mode 0644 with sid. */
static void build_setattr_mode(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 34);
	xdr_put_u32(b, sid->seqid);
	xdr_put_fixed(b, sid->other, 12);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 1u << 1);
	xdr_put_u32(b, 4);
	xdr_put_u32(b, 0644);
}

static const struct nfs4_sid anon_sid; /* the anonymous stateid: all zeros */

/* The file's size as Q's GETATTR sees it (which must be served). */
static uint64_t q_size(void)
{
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 9, build_getattr_size, NULL), OK4);
	ck_assert_uint_eq(xdr_u32(&Q.cur), 1);        /* bitmap words */
	ck_assert_uint_eq(xdr_u32(&Q.cur), 1u << 4);
	ck_assert_uint_eq(xdr_u32(&Q.cur), 8);        /* attr_vals length */
	return xdr_u64(&Q.cur);
}

/* P's recall: one CB_RECALL of its delegation on its connection within
 * 20 s, answered OK. */
static void expect_recall(struct nfs4t_cl *x, bool answer)
{
	struct nfs4_cl_cb cb;

	if (!x->c.cb)
		ck_assert_int_eq(nfs4_cl_wait_cb(&x->c, 20000), 1);
	ck_assert_int_eq(nfs4_cl_cb_parse(&x->c, &cb), 0);
	ck_assert_uint_eq(cb.nrecalls, 1);
	ck_assert_int_eq(memcmp(cb.recall[0].other, x->deleg.other, 12), 0);
	ck_assert_uint_eq(cb.fhlen[0], x->fhlen);
	ck_assert_int_eq(memcmp(cb.fh[0], x->fh, x->fhlen), 0);
	if (answer)
		ck_assert_int_eq(nfs4_cl_cb_reply(&x->c, &cb, 0), 0);
	free(x->c.cb);
	x->c.cb = NULL;
}

/* x is asked for its attributes: one CB_GETATTR of its file, of change and
 * size, on its connection within 20 s; answered with change and size when
 * answer. */
static void expect_getattr(struct nfs4t_cl *x, bool answer, uint64_t change, uint64_t size)
{
	struct nfs4_cl_cb cb;

	if (!x->c.cb)
		ck_assert_int_eq(nfs4_cl_wait_cb(&x->c, 20000), 1);
	ck_assert_int_eq(nfs4_cl_cb_parse(&x->c, &cb), 0);
	ck_assert_uint_eq(cb.nrecalls, 0);
	ck_assert_uint_eq(cb.ngetattr, 1);
	ck_assert_uint_eq(cb.ga_req, 1u << 3 | 1u << 4);      /* change, size */
	ck_assert_uint_eq(cb.fhlen[0], x->fhlen);
	ck_assert_int_eq(memcmp(cb.fh[0], x->fh, x->fhlen), 0);
	if (answer)
		ck_assert_int_eq(nfs4_cl_cb_reply_getattr(&x->c, &cb, change, size), 0);
	free(x->c.cb);
	x->c.cb = NULL;
}

static void expect_no_call(struct nfs4t_cl *x, int ms)
{
	ck_assert_ptr_null(x->c.cb);
	ck_assert_int_eq(nfs4_cl_wait_cb(&x->c, ms), 0);
}

/* x's GETATTR of change and size of P's file, posted: answered by
 * getattr_recv (a CB_GETATTR to P may come first). */
static void getattr_post(struct nfs4t_cl *x)
{
	memcpy(x->fh, P.fh, P.fhlen);
	x->fhlen = P.fhlen;
	nfs4t_begin(x, 2);
	nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
	nfs4_cl_getattr(&x->b, 1u << 3 | 1u << 4, 0);
	ck_assert_int_eq(nfs4_cl_post(&x->c, &x->b), 0);
}

/* The answer to getattr_post: GETATTR's status, with change and size. */
static uint32_t getattr_recv(struct nfs4t_cl *x, uint64_t *change, uint64_t *size)
{
	uint32_t n, st;

	ck_assert_int_eq(nfs4_cl_recv(&x->c, &x->cur), 0);
	(void)nfs4_cl_res(&x->cur, &n);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 53), 0);
	(void)nfs4_cl_sequence_flags(&x->cur);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
	if ((st = nfs4_cl_op(&x->cur, 9)) != 0)
		return st;
	ck_assert_uint_eq(xdr_u32(&x->cur), 1);
	ck_assert_uint_eq(xdr_u32(&x->cur), 1u << 3 | 1u << 4);
	ck_assert_uint_eq(xdr_u32(&x->cur), 16);
	*change = xdr_u64(&x->cur);
	*size = xdr_u64(&x->cur);
	ck_assert_int_eq(x->cur.err, 0);
	return 0;
}

/* P opens f for writing and gets a write delegation. */
static void p_wdeleg(void)
{
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_WRITE);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
}

/* The holder flushes what it cached (a WRITE under its delegation), then
 * returns it. */
static void p_flush_return(void)
{
	ck_assert_uint_eq(nfs4t_fh_op(&P, 38, build_write_p, &P.deleg), OK4);
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
}

/* ---------- NFSv3, NLM ---------- */

static bool readable_within(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, ms) == 1;
}

/* An NFSv3 call proc on fh (GETATTR 1, SETATTR 2, READ 6, WRITE 7) posted on conn. */
static void v3_post(struct nfs4_cl *conn, uint32_t proc)
{
	struct ut_buf b;

	nfs4_cl_call_begin(conn, &b, 3, proc);
	xdr_put_opaque(&b, P.fh, P.fhlen);
	if (proc == 2) {                  /* sattr3: mode 0600, nothing else; no guard */
		xdr_put_u32(&b, 1);
		xdr_put_u32(&b, 0600);
		for (int i = 0; i < 5; i++)
			xdr_put_u32(&b, 0);
		xdr_put_u32(&b, 0);
	} else if (proc == 6) {           /* offset 0, count 64 */
		xdr_put_u64(&b, 0);
		xdr_put_u32(&b, 64);
	} else if (proc == 7) {           /* "v3" at 0, FILE_SYNC */
		xdr_put_u64(&b, 0);
		xdr_put_u32(&b, 2);
		xdr_put_u32(&b, 2);
		xdr_put_opaque(&b, "v3", 2);
	}
	ck_assert_int_eq(nfs4_cl_post(conn, &b), 0);
}

/* An NLM4 TEST (exclusive, the whole file) on f posted on conn. */
static void nlm_test_post(struct nfs4_cl *conn)
{
	struct ut_buf b;

	nfs4_cl_call_begin(conn, &b, 4, 1);
	ut_buf_set_be32(&b, 16, 100021);  /* NLM_PROG instead of NFS */
	xdr_put_opaque(&b, "ck", 2);      /* cookie */
	xdr_put_u32(&b, 1);               /* exclusive */
	xdr_put_opaque(&b, "host-w", 6);  /* caller_name */
	xdr_put_opaque(&b, P.fh, P.fhlen);
	xdr_put_opaque(&b, "oh", 2);
	xdr_put_u32(&b, 7);               /* svid */
	xdr_put_u64(&b, 0);
	xdr_put_u64(&b, 0);               /* to the end */
	ck_assert_int_eq(nfs4_cl_post(conn, &b), 0);
}

/* A call posted on w by another protocol waits for P's return: the recall
 * goes out, nothing is answered until P flushes and returns; then the
 * answer comes (left at *cur, past its status, which is checked to be 0). */
static void v3_waits_for_return(struct nfs4_cl *w, struct xdr_cur *cur)
{
	expect_recall(&P, true);
	ck_assert(!readable_within(w->fd, 300));      /* waits for the return */
	p_flush_return();
	ck_assert(readable_within(w->fd, 20000));
	ck_assert_int_eq(nfs4_cl_recv(w, cur), 0);
	ck_assert_uint_eq(xdr_u32(cur), 0);           /* NFS3_OK / NLM4_GRANTED (after the cookie) */
}

/* ---------- fixture ---------- */

static void setup(void)
{
	nfs4t_srv_up(&(struct nfs4t_spec){ .fsid = 410, .key_byte = 6, .threads = 4, .lease_s = 3, .nlm = &nlm }, &ts,
		     &nsrv, &v4, &ssrv);
	nfs4t_cl_up(&P, nfs_srv_port(nsrv), "client-p", 2); /* CREATE_SESSION4_FLAG_CONN_BACK_CHAN */
	nfs4t_cl_up(&Q, nfs_srv_port(nsrv), "client-q", 0);
}

static void teardown(void)
{
	nfs4_cl_close(&P.c);
	nfs4_cl_close(&Q.c);
	nfs4t_srv_down_nlm(&ts, nsrv, v4, ssrv, nlm);
	nlm = NULL;
}

/* ---------- tests ---------- */

/* Who gets one: an OPEN for writing by a client with a backchannel, of a
 * file nobody else has open, with a space limit of its size plus the
 * volume's free capacity; WANT_WRITE_DELEG on an open for reading too. Not
 * with another open of the file (another client's, or another open owner
 * of the same client), not without a backchannel, not when the client asks
 * for a read delegation with an open for writing. */
START_TEST(test_grant_rules)
{
	struct nfs4_sid open, deleg;

	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), OK4);
	ck_assert_uint_eq(Q.dtype, DT_NONE);                   /* no backchannel */
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_NONE);                   /* Q has it open */
	ck_assert_uint_eq(nfs4t_open(&P, BOTH | WANT_WRITE, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_NONE_EXT);
	ck_assert_uint_eq(P.why, 1);                           /* WND4_CONTENTION */
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	ck_assert_uint_eq(nfs4t_close(&Q), OK4);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);

	p_wdeleg();                                            /* alone now */
	ck_assert_uint_gt(P.space_limit, (1ull << 30) - (64u << 10));
	ck_assert_uint_le(P.space_limit, (1ull << 30) + 10);
	open = P.open;
	deleg = P.deleg;
	ck_assert_uint_eq(nfs4t_close(&P), OK4);               /* the delegation outlives the open */
	P.owner = "other-owner";                               /* its other mount (nosharecache) caches apart: */
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), DELAY4);      /* recalled (test_vm_nfs41 close-to-open) */
	P.deleg = deleg;
	expect_recall(&P, true);
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_READ);                   /* alone again: a read one */
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	P.owner = NULL;
	(void)open;

	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_WRITE, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_WRITE);                  /* asked, and it may write */
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	ck_assert_uint_eq(nfs4t_open(&P, BOTH | WANT_READ, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_NONE_EXT);
	ck_assert_uint_eq(P.why, 2);                           /* WND4_RESOURCE: a read one for a writer */
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	P.owner = "owner-2";
	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_NONE, 0), OK4); /* another open owner of P, no delegation */
	P.owner = NULL;
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_NONE);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
}
END_TEST

/* The holder's own READ, WRITE, GETATTR and SETATTR recall nothing. */
START_TEST(test_holder_own_access)
{
	p_wdeleg();
	ck_assert_uint_eq(nfs4t_fh_op(&P, 38, build_write_p, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 25, build_read, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 9, build_getattr_size, NULL), OK4);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 34, build_setattr_mode, &P.open), OK4);
	expect_no_call(&P, 300);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
}
END_TEST

/* Another client's OPEN for reading recalls it (NFS4ERR_DELAY until the
 * return) and then reads what the holder wrote before returning it. */
START_TEST(test_recall_v4_open_read)
{
	p_wdeleg();
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), DELAY4);
	expect_recall(&P, true);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), DELAY4);      /* answered, not returned */
	p_flush_return();
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), OK4);
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 25, build_read, &Q.open), OK4);
	ck_assert_uint_eq(xdr_u32(&Q.cur), 1);                 /* eof */
	ck_assert_uint_eq(xdr_u32(&Q.cur), 17);
	ck_assert_int_eq(memcmp(xdr_fixed(&Q.cur, 17), "01234567held-data", 17), 0);
}
END_TEST

/* Another client's READ, WRITE, SETATTR (not of the size) and GETATTR of
 * the size (when the holder leaves its CB_GETATTR unanswered for half a
 * lease), each with no open (the anonymous stateid), recall it; a GETATTR
 * of the mode alone does not ask the holder. */
START_TEST(test_recall_v4_io)
{
	p_wdeleg();
	memcpy(Q.fh, P.fh, P.fhlen);
	Q.fhlen = P.fhlen;
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 9, build_getattr_mode, NULL), OK4);
	expect_no_call(&P, 300);
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 25, build_read, &anon_sid), DELAY4);
	expect_recall(&P, true);
	p_flush_return();
	ck_assert_uint_eq(q_size(), 17);                       /* what the holder wrote */

	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	p_wdeleg();
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 9, build_getattr_size, NULL), DELAY4); /* asked, no answer: recalled */
	expect_getattr(&P, false, 0, 0);
	expect_recall(&P, true);
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);

	p_wdeleg();
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 38, build_write_q, &anon_sid), DELAY4);
	expect_recall(&P, true);
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 38, build_write_q, &anon_sid), OK4);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);

	p_wdeleg();
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 34, build_setattr_mode, &anon_sid), DELAY4);
	expect_recall(&P, true);
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 34, build_setattr_mode, &anon_sid), OK4);
}
END_TEST

/* Another client's LOCKT (it holds no open: its lock owner tests the file)
 * recalls it: the holder may have locked locally under it. */
START_TEST(test_recall_v4_lockt)
{
	p_wdeleg();
	memcpy(Q.fh, P.fh, P.fhlen);
	Q.fhlen = P.fhlen;
	nfs4t_begin(&Q, 2);
	nfs4_cl_putfh(&Q.b, Q.fh, Q.fhlen);
	nfs4_cl_lockt(&Q.b, &Q.c, 2, 0, UINT64_MAX, "q-lock-owner");
	nfs4t_send(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 22), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 13), DELAY4);
	expect_recall(&P, true);
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
	nfs4t_begin(&Q, 2);
	nfs4_cl_putfh(&Q.b, Q.fh, Q.fhlen);
	nfs4_cl_lockt(&Q.b, &Q.c, 2, 0, UINT64_MAX, "q-lock-owner");
	nfs4t_send(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 22), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 13), OK4);       /* no lock held on the server */
}
END_TEST

/* REMOVE v0/f by x: its status. */
static uint32_t c4_remove_f(struct nfs4t_cl *x)
{
	nfs4t_begin(x, 3);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "v0");
	nfs4_cl_remove(&x->b, "f");
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 24), 0);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 15), 0);
	return nfs4_cl_op(&x->cur, 28);
}

/* Another client's REMOVE of the name recalls it; the file goes after the
 * return. */
START_TEST(test_recall_v4_remove)
{
	p_wdeleg();
	ck_assert_uint_eq(c4_remove_f(&Q), DELAY4);
	expect_recall(&P, true);
	ck_assert_uint_eq(c4_remove_f(&Q), DELAY4);
	p_flush_return();
	ck_assert_uint_eq(c4_remove_f(&Q), OK4);
	ck_assert_uint_eq(c4_remove_f(&Q), 2);                /* NFS4ERR_NOENT: gone */
}
END_TEST

/* CB_GETATTR (RFC 8881 10.4.3): another v4.1 client's GETATTR of size
 * and change, and an NFSv3 GETATTR, ask the holder and answer what it
 * caches, without recalling: its size, and the change it reports as is
 * while it reports the change it was given, a later one (mtime, ctime and
 * change moved on, and then stable) once its cached writes changed the
 * file. */
START_TEST(test_cb_getattr)
{
	uint64_t c0, c1, c2, size;
	struct nfs4_cl w;
	struct xdr_cur cur;
	time_t t0 = time(NULL);

	p_wdeleg();
	ck_assert_uint_eq(nfs4t_fh_op(&P, 9, build_getattr_change, NULL), OK4); /* the holder's own: the store's */
	ck_assert_uint_eq(xdr_u32(&P.cur), 1);
	ck_assert_uint_eq(xdr_u32(&P.cur), 1u << 3);
	ck_assert_uint_eq(xdr_u32(&P.cur), 8);
	c0 = xdr_u64(&P.cur);

	getattr_post(&Q);                              /* unchanged so far, the holder says */
	expect_getattr(&P, true, c0, 1234);
	ck_assert_uint_eq(getattr_recv(&Q, &c1, &size), OK4);
	ck_assert_uint_eq(size, 1234);
	ck_assert_uint_eq(c1, c0);

	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	v3_post(&w, 1);                                /* NFSv3: changed now */
	expect_getattr(&P, true, c0 + 1, 4321);
	ck_assert(nfs4t_readable_within(w.fd, 20000));
	ck_assert_int_eq(nfs4_cl_recv(&w, &cur), 0);
	ck_assert_uint_eq(xdr_u32(&cur), 0);           /* NFS3_OK */
	(void)xdr_fixed(&cur, 5 * 4);                  /* type, mode, nlink, uid, gid */
	ck_assert_uint_eq(xdr_u64(&cur), 4321);        /* size: the holder's */
	(void)xdr_fixed(&cur, 8 + 8 + 8 + 8 + 8);      /* used, rdev, fsid, fileid, atime */
	ck_assert_uint_ge(xdr_u32(&cur), (uint32_t)t0); /* mtime: since the holder's change */
	(void)xdr_u32(&cur);
	ck_assert_uint_ge(xdr_u32(&cur), (uint32_t)t0); /* ctime too */
	ck_assert_int_eq(cur.err, 0);
	nfs4_cl_close(&w);

	getattr_post(&Q);                              /* the same change reported again */
	expect_getattr(&P, true, c0 + 1, 4321);
	ck_assert_uint_eq(getattr_recv(&Q, &c1, &size), OK4);
	ck_assert_uint_eq(size, 4321);
	ck_assert_uint_gt(c1, c0);
	getattr_post(&Q);
	expect_getattr(&P, true, c0 + 1, 4321);
	ck_assert_uint_eq(getattr_recv(&Q, &c2, &size), OK4);
	ck_assert_uint_eq(c2, c1);                     /* stable while nothing changes */

	expect_no_call(&P, 300);                       /* never recalled */
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
	ck_assert_uint_eq(c4_delegreturn(&P, &P.deleg), OK4);
}
END_TEST

/* How a reply's CB_SEQUENCE may not match the call it answers. */
enum { BAD_SEQ, BAD_SESS, BAD_SLOT };

/* The call cb as a CB_SEQUENCE reply to another call would echo it: the
 * next sequenceid, another session or slot 1. */
static struct nfs4_cl_cb cb_mismatched(const struct nfs4_cl_cb *cb, int how)
{
	struct nfs4_cl_cb bad = *cb;

	if (how == BAD_SEQ)
		bad.seq++;
	else if (how == BAD_SESS)
		bad.sess[0] ^= 0xff;
	else
		bad.slot = 1;
	return bad;
}

/* The next call on x's backchannel, within 20 s, parsed into *cb and taken off x. */
static void next_cb(struct nfs4t_cl *x, struct nfs4_cl_cb *cb)
{
	ck_assert_int_eq(nfs4_cl_wait_cb(&x->c, 20000), 1);
	ck_assert_int_eq(nfs4_cl_cb_parse(&x->c, cb), 0);
	free(x->c.cb);
	x->c.cb = NULL;
}

/* A CB_GETATTR answer whose CB_SEQUENCE names another sequenceid, session
 * or slot than the call's answers nothing (RFC 8881 20.9.3): the NFSv3
 * GETATTR that asked is not given the size it claims; the call failed as
 * a lost one, so the holder is recalled (once the slot has waited out the
 * lease) and the GETATTR answers the size the holder's writes made. */
START_TEST(test_cb_getattr_mismatch)
{
	struct nfs4_cl_cb cb, bad;
	struct nfs4_cl w;
	struct xdr_cur cur;

	for (int how = BAD_SEQ; how <= BAD_SLOT; how++) {
		p_wdeleg();
		ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
		v3_post(&w, 1);
		next_cb(&P, &cb);
		ck_assert_uint_eq(cb.ngetattr, 1);
		bad = cb_mismatched(&cb, how);
		ck_assert_int_eq(nfs4_cl_cb_reply_getattr(&P.c, &bad, 0, 999), 0);
		ck_assert_msg(!readable_within(w.fd, 500), "mismatch %d: the GETATTR took the answer", how);
		v3_waits_for_return(&w, &cur);
		(void)xdr_fixed(&cur, 5 * 4);          /* type, mode, nlink, uid, gid */
		ck_assert_uint_eq(xdr_u64(&cur), 17);  /* size: the holder's write, not 999 */
		ck_assert_int_eq(cur.err, 0);
		nfs4_cl_close(&w);
	}
}
END_TEST

/* A CB_RECALL answer with another sequenceid is no answer either: it does
 * not free the backchannel's slot, so the next recall (of P's delegation
 * of g) waits as after a lost reply (the lease, 3 s), then comes. */
START_TEST(test_cb_recall_mismatch)
{
	struct nfs4_cl_cb cb, bad;
	struct nfs4_sid gdeleg;
	char p[300];
	FILE *f;

	snprintf(p, sizeof(p), "%s/g", ts.cfg[0].root);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_int_eq(fclose(f), 0);
	P.name = "g";
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_WRITE);
	gdeleg = P.deleg;
	P.name = NULL;
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4); /* and f */
	ck_assert_uint_eq(P.dtype, DT_WRITE);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), DELAY4);
	next_cb(&P, &cb);
	ck_assert_uint_eq(cb.nrecalls, 1);
	ck_assert_int_eq(memcmp(cb.recall[0].other, P.deleg.other, 12), 0);
	bad = cb_mismatched(&cb, BAD_SEQ);
	ck_assert_int_eq(nfs4_cl_cb_reply(&P.c, &bad, 0), 0);
	Q.name = "g";
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), DELAY4);
	expect_no_call(&P, 1500);                     /* the slot is still taken */
	next_cb(&P, &cb);
	ck_assert_uint_eq(cb.nrecalls, 1);
	ck_assert_int_eq(memcmp(cb.recall[0].other, gdeleg.other, 12), 0);
	ck_assert_uint_eq(cb.seq, bad.seq);           /* the next call on the slot */
	ck_assert_int_eq(nfs4_cl_cb_reply(&P.c, &cb, 0), 0);
}
END_TEST

/* An NFSv3 GETATTR whose CB_GETATTR the holder leaves unanswered (half a
 * lease) recalls it, waits in the server for the return, and answers the
 * size the holder's writes made. */
START_TEST(test_recall_v3_getattr)
{
	struct nfs4_cl w;
	struct xdr_cur cur;

	p_wdeleg();
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	v3_post(&w, 1);
	expect_getattr(&P, false, 0, 0);
	v3_waits_for_return(&w, &cur);
	(void)xdr_fixed(&cur, 5 * 4);                 /* type, mode, nlink, uid, gid */
	ck_assert_uint_eq(xdr_u64(&cur), 17);         /* size: the holder's write is in */
	ck_assert_int_eq(cur.err, 0);
	nfs4_cl_close(&w);
}
END_TEST

/* An NFSv3 READ waits, and reads the holder's data. */
START_TEST(test_recall_v3_read)
{
	struct nfs4_cl w;
	struct xdr_cur cur;
	uint32_t n;
	const uint8_t *d;

	p_wdeleg();
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	v3_post(&w, 6);
	v3_waits_for_return(&w, &cur);
	if (xdr_u32(&cur))                            /* post_op_attr */
		(void)xdr_fixed(&cur, 84);
	ck_assert_uint_eq(xdr_u32(&cur), 17);         /* count */
	(void)xdr_u32(&cur);                          /* eof */
	ck_assert_ptr_nonnull(d = xdr_opaque(&cur, 64, &n));
	ck_assert_uint_eq(n, 17);
	ck_assert_int_eq(memcmp(d, "01234567held-data", 17), 0);
	nfs4_cl_close(&w);
}
END_TEST

/* NFSv3 SETATTR (of the mode) and WRITE wait for the return too. */
START_TEST(test_recall_v3_setattr_write)
{
	struct nfs4_cl w;
	struct xdr_cur cur;

	p_wdeleg();
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	v3_post(&w, 2);
	v3_waits_for_return(&w, &cur);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	p_wdeleg();
	v3_post(&w, 7);
	v3_waits_for_return(&w, &cur);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), OK4);
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 25, build_read, &Q.open), OK4);
	(void)xdr_u32(&Q.cur);
	ck_assert_uint_eq(xdr_u32(&Q.cur), 17);
	ck_assert_int_eq(memcmp(xdr_fixed(&Q.cur, 17), "v3234567held-data", 17), 0);
	nfs4_cl_close(&w);
}
END_TEST

/* An NLM TEST (a lock) waits for the return. */
START_TEST(test_recall_nlm)
{
	struct nfs4_cl w;
	struct xdr_cur cur;
	uint32_t n;

	p_wdeleg();
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	nlm_test_post(&w);
	expect_recall(&P, true);
	ck_assert(!readable_within(w.fd, 300));
	p_flush_return();
	ck_assert(readable_within(w.fd, 20000));
	ck_assert_int_eq(nfs4_cl_recv(&w, &cur), 0);
	ck_assert_ptr_nonnull(xdr_opaque(&cur, 64, &n)); /* the cookie */
	ck_assert_uint_eq(xdr_u32(&cur), 0);             /* NLM4_GRANTED */
	nfs4_cl_close(&w);
}
END_TEST

/* An SMB CREATE, for reading only, recalls it and is pending until the
 * return. */
START_TEST(test_recall_smb_create)
{
	struct smb_wire_hdr h;
	uint8_t buf[2048];
	uint64_t mid, aid;
	size_t len;

	smbt_conn_new(&sc, ssrv, 9, 0);
	ck_assert_ptr_nonnull(sc.t->exp = vol_export_at(ts.store, 0));
	p_wdeleg();
	mid = nfs4t_smb_create(&sc, FILE_READ_DATA_, SHARE_ALL_, &h, NULL);
	aid = smbt_check_pending(&h, mid);
	expect_recall(&P, true);
	smb_async_tick(ssrv);
	ck_assert_int_eq(smbt_recv(&sc, buf, sizeof(buf), &len, &h, NULL), 0); /* still waiting */
	p_flush_return();
	nfs4t_smb_create_final(ssrv, &sc, mid, aid);
}
END_TEST

/* Not returned within the lease time: revoked. The waiting reader gets in;
 * P is told and its stateid answers DELEG_REVOKED (a WRITE with it too). */
START_TEST(test_revoke)
{
	uint32_t st = DELAY4;
	uint64_t t0;
	int i;

	p_wdeleg();
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), DELAY4);
	expect_recall(&P, false);                     /* P neither answers nor returns */
	t0 = ut_clock_mono_ns();
	for (i = 0; i < 150 && st == DELAY4; i++) {
		(void)c4_ping(&P);
		usleep(200000);
		st = nfs4t_open(&Q, RD, 0);
	}
	ck_assert_uint_eq(st, OK4);
	ck_assert_uint_ge(ut_clock_mono_ns() - t0, 2500000000ull); /* not before the lease time (3 s) */
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	ck_assert_uint_eq(c4_ping(&P) & REVOKED_FLAG, REVOKED_FLAG);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 38, build_write_p, &P.deleg), DELEG_REVOKED4);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 45, nfs4_cl_free_stateid, &P.deleg), OK4);
	ck_assert_uint_eq(c4_ping(&P) & REVOKED_FLAG, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_wdeleg");
	TCase *tc = tcase_create("wdeleg");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_grant_rules);
	tcase_add_test(tc, test_holder_own_access);
	tcase_add_test(tc, test_recall_v4_open_read);
	tcase_add_test(tc, test_recall_v4_io);
	tcase_add_test(tc, test_recall_v4_lockt);
	tcase_add_test(tc, test_recall_v4_remove);
	tcase_add_test(tc, test_cb_getattr);
	tcase_add_test(tc, test_cb_getattr_mismatch);
	tcase_add_test(tc, test_cb_recall_mismatch);
	tcase_add_test(tc, test_recall_v3_getattr);
	tcase_add_test(tc, test_recall_v3_read);
	tcase_add_test(tc, test_recall_v3_setattr_write);
	tcase_add_test(tc, test_recall_nlm);
	tcase_add_test(tc, test_recall_smb_create);
	tcase_add_test(tc, test_revoke);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
