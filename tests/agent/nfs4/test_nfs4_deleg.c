/* test_nfs4_deleg: NFSv4.1 read delegations and their recall over the
 * backchannel (agent/nfs4/nfs4_deleg.c, nfs4_recall.c, nfs4_cb.c; issue 19, acceptance 2
 * "delegation recall"). One store with one export served by an in-process
 * NFS server (NFSv3 and NFSv4.1, lease 3 s) and by the SMB dispatcher of
 * tests/agent/smb/smb_harness.h (the fixture of nfs4_harness.h). Client P
 * asks for a backchannel (CREATE_SESSION with CONN_BACK_CHAN) and gets a
 * read delegation with an OPEN for reading; Q has none and gets none. A
 * conflicting access from each protocol recalls it with a CB_COMPOUND
 * (CB_SEQUENCE + CB_RECALL) on P's connection: a v4.1 OPEN for writing
 * (NFS4ERR_DELAY until the DELEGRETURN), an NFSv3 WRITE (waits in the store,
 * answered after the DELEGRETURN), an SMB CREATE for writing
 * (STATUS_PENDING, then served). A delegation not returned within the lease
 * time is revoked: the writer gets in, P's SEQUENCE flags
 * RECALLABLE_STATE_REVOKED and its stateid answers DELEG_REVOKED until
 * FREE_STATEID. A CB_SEQUENCE answered with an error does not advance the
 * backchannel slot's sequence (DELAY: the recall again; SEQ_MISORDERED: the
 * backchannel faulty). Also: no delegation while someone has the file open for
 * writing, BIND_CONN_TO_SESSION moves the backchannel, and the decoder of CB
 * replies refuses what does not decode. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "agent/nfs4/nfs4_internal.h"
#include "agent/smb/smb_srv_internal.h"
#include "tests/agent/nfs4/nfs4_harness.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"
#include "util/ut_clock.h"

enum { OK4 = 0, DELAY4 = 10008, BAD_STATEID4 = 10025, DELEG_REVOKED4 = 10087, SEQ_MISORDERED4 = 10063, RD = 1,
       WR = 2, BOTH = 3, REVOKED_FLAG = 0x40 };
#define FILE_READ_DATA_ 0x1u
#define FILE_WRITE_DATA_ 0x2u
#define SHARE_ALL_ 7u

static struct aqt_store ts;
static struct nfs_srv *nsrv;
static struct nfs4_srv *v4;
static struct smb_srv *ssrv;
static struct smbt_conn sc;

static struct nfs4t_cl P, Q;

static uint32_t c4_test(struct nfs4t_cl *x, const struct nfs4_sid *sid)
{
	uint32_t st;

	nfs4t_begin(x, 1);
	nfs4_cl_test_stateid(&x->b, sid);
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 55), 0);
	ck_assert_uint_eq(xdr_u32(&x->cur), 1);
	st = xdr_u32(&x->cur);
	ck_assert_int_eq(x->cur.err, 0);
	return st;
}

/* REMOVE v0/f: its status. */
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

/* ---------- NFSv3 and SMB ---------- */

/* An NFSv3 WRITE (FILE_SYNC) of data at 0 on conn, sent, not waited for. */
static void v3_write_post(struct nfs4_cl *conn, const uint8_t *fh, uint32_t fhlen, const char *data)
{
	struct ut_buf b;

	nfs4_cl_call_begin(conn, &b, 3, 7);
	xdr_put_opaque(&b, fh, fhlen);
	xdr_put_u64(&b, 0);
	xdr_put_u32(&b, (uint32_t)strlen(data));
	xdr_put_u32(&b, 2);
	xdr_put_opaque(&b, data, (uint32_t)strlen(data));
	ck_assert_int_eq(nfs4_cl_post(conn, &b), 0);
}

/* SMB2 CREATE of "f" (FILE_OPEN, sharing everything) sent; its first answer's header in *h. */
static void smb_create_post(uint32_t access, struct smb_wire_hdr *h, uint64_t *mid)
{
	*mid = nfs4t_smb_create(&sc, access, SHARE_ALL_, h, NULL);
}

/* ---------- fixture ---------- */

static void setup(void)
{
	nfs4t_srv_up(&(struct nfs4t_spec){ .fsid = 400, .key_byte = 4, .threads = 4, .lease_s = 3 }, &ts, &nsrv, &v4,
		     &ssrv);
	nfs4t_cl_up(&P, nfs_srv_port(nsrv), "client-p", 2); /* CREATE_SESSION4_FLAG_CONN_BACK_CHAN */
	nfs4t_cl_up(&Q, nfs_srv_port(nsrv), "client-q", 0);
}

static void teardown(void)
{
	nfs4_cl_close(&P.c);
	nfs4_cl_close(&Q.c);
	nfs4t_srv_down(&ts, nsrv, v4, ssrv);
}

/* ---------- tests ---------- */

/* A v4.1 OPEN for writing by another client recalls the delegation and is
 * told to wait until it is returned. */
START_TEST(test_recall_v4_open)
{
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);                  /* OPEN_DELEGATE_READ */
	ck_assert_uint_eq(vol_lease_count(ts.store), 1); /* in the store's table */
	ck_assert_uint_eq(nfs4t_fh_op(&P, 25, nfs4t_build_read, &P.deleg), OK4); /* READ with its stateid */
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), OK4);        /* readers share it, */
	ck_assert_uint_eq(Q.dtype, 0);                  /* Q has no backchannel: none for Q */
	nfs4t_expect_no_call(&P, 300);                        /* and nothing is recalled */
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), DELAY4);   /* a writer waits */
	nfs4t_expect_recall(&P, 1, true);
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), DELAY4);   /* answered, not returned yet */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), OK4);
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), BAD_STATEID4); /* gone */
	ck_assert_uint_eq(nfs4t_close(&Q), OK4);
	/* the holder's own open for writing (another open owner: another mount of
	 * the same client caches apart) recalls it too */
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);
	P.owner = "other-owner";
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), DELAY4);
	nfs4t_expect_recall(&P, 2, true);
	P.owner = NULL;
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	P.owner = "other-owner";
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4);
	P.owner = NULL;
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), OK4);
	/* no delegation while another client has the file open for writing */
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 0);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
}
END_TEST

/* An NFSv3 WRITE recalls it and waits in the store for the return. */
START_TEST(test_recall_v3_write)
{
	struct nfs4_cl w;
	struct xdr_cur cur;
	char p[200], got[16] = { 0 };
	int fd;

	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	v3_write_post(&w, P.fh, P.fhlen, "v3");      /* the same handles as v4.1 */
	nfs4t_expect_recall(&P, 1, true);
	ck_assert(!nfs4t_readable_within(w.fd, 300));       /* the WRITE waits for the return */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert(nfs4t_readable_within(w.fd, 20000));
	ck_assert_int_eq(nfs4_cl_recv(&w, &cur), 0);
	ck_assert_uint_eq(xdr_u32(&cur), 0);          /* NFS3_OK */
	nfs4_cl_close(&w);
	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(read(fd, got, 4), 4);
	close(fd);
	ck_assert_str_eq(got, "v323");
}
END_TEST

/* An SMB CREATE for writing recalls it and is pending until the return;
 * one for reading recalls nothing. */
START_TEST(test_recall_smb_open)
{
	struct smb_wire_hdr h;
	uint8_t buf[2048];
	uint64_t mid, aid;
	size_t len;

	smbt_conn_new(&sc, ssrv, 9, 0);
	ck_assert_ptr_nonnull(sc.t->exp = vol_export_at(ts.store, 0));
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);
	smb_create_post(FILE_READ_DATA_, &h, &mid);
	ck_assert_uint_eq(h.status, STATUS_SUCCESS);
	nfs4t_expect_no_call(&P, 300);
	smb_create_post(FILE_READ_DATA_ | FILE_WRITE_DATA_, &h, &mid);
	aid = smbt_check_pending(&h, mid);
	nfs4t_expect_recall(&P, 1, true);
	smb_async_tick(ssrv);
	ck_assert_int_eq(smbt_recv(&sc, buf, sizeof(buf), &len, &h, NULL), 0); /* still waiting */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	nfs4t_smb_create_final(ssrv, &sc, mid, aid);
}
END_TEST

/* Not returned within the lease time: revoked. The writer gets in; P is
 * told (SEQUENCE flags) and its stateid answers DELEG_REVOKED until freed. */
START_TEST(test_revoke)
{
	uint32_t st = DELAY4;
	uint64_t t0;
	int i;

	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), DELAY4);
	nfs4t_expect_recall(&P, 1, false);                  /* P neither answers nor returns */
	t0 = ut_clock_mono_ns();                      /* the recall went out before this */
	ck_assert_uint_eq(nfs4t_ping(&P) & REVOKED_FLAG, 0);
	for (i = 0; i < 150 && st == DELAY4; i++) {
		(void)nfs4t_ping(&P);                    /* P's lease stays alive meanwhile */
		usleep(200000);
		st = nfs4t_open(&Q, WR, 0);
	}
	ck_assert_uint_eq(st, OK4);
	ck_assert_uint_ge(ut_clock_mono_ns() - t0, 2500000000ull); /* not before the lease time (3 s) */
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	ck_assert_uint_eq(nfs4t_ping(&P) & REVOKED_FLAG, REVOKED_FLAG);
	ck_assert_uint_eq(c4_test(&P, &P.deleg), DELEG_REVOKED4);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 25, nfs4t_build_read, &P.deleg), DELEG_REVOKED4);
	ck_assert_uint_eq(nfs4t_fh_op(&P, 45, nfs4_cl_free_stateid, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_ping(&P) & REVOKED_FLAG, 0);
	ck_assert_uint_eq(c4_test(&P, &P.deleg), BAD_STATEID4);
}
END_TEST

/* A new connection *conn bound to session sess (BIND_CONN_TO_SESSION)
 * asking for direction dir (CDFC4_*): the direction answered (CDFS4_*). */
static uint32_t bind_conn(struct nfs4_cl *conn, const uint8_t sess[16], uint32_t dir)
{
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t n;

	ck_assert_int_eq(nfs4_cl_dial(conn, nfs_srv_port(nsrv)), 0);
	memcpy(conn->sess, sess, 16);
	nfs4_cl_begin(conn, &b, 1, 1);
	nfs4_cl_bind_conn(&b, conn, dir);
	ck_assert_int_eq(nfs4_cl_send(conn, &b, &cur), 0);
	ck_assert_uint_eq(nfs4_cl_res(&cur, &n), 0);
	ck_assert_uint_eq(nfs4_cl_op(&cur, 41), 0);
	(void)xdr_fixed(&cur, 16);
	return xdr_u32(&cur);
}

/* A session created without a backchannel gets one bound from another
 * connection (BIND_CONN_TO_SESSION, CDFC4_BACK_OR_BOTH); recalls go there. */
START_TEST(test_bind_back)
{
	struct nfs4t_cl R;
	struct nfs4_cl back;

	nfs4t_cl_up(&R, nfs_srv_port(nsrv), "client-r", 0);
	ck_assert_uint_eq(nfs4t_open(&R, RD, 0), OK4);
	ck_assert_uint_eq(R.dtype, 0);                /* no backchannel: no delegation */
	ck_assert_uint_eq(bind_conn(&back, R.c.sess, 7), 3); /* CDFC4_BACK_OR_BOTH: CDFS4_BOTH */
	{ /* another connection with CDFC4_FORE_OR_BOTH (Linux's nconnect): the fore channel only */
		struct nfs4_cl more;

		ck_assert_uint_eq(bind_conn(&more, R.c.sess, 3), 1); /* CDFS4_FORE: the backchannel stays */
		nfs4_cl_close(&more);
	}
	ck_assert_uint_eq(nfs4t_open(&R, RD, 0), OK4);      /* the same open again: now delegated */
	ck_assert_uint_eq(R.dtype, 1);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), DELAY4);
	{
		struct nfs4t_cl tmp = R; /* the recall arrives on the bound connection */

		tmp.c = back;
		nfs4t_expect_recall(&tmp, 1, true);
		back = tmp.c;
	}
	nfs4t_expect_no_call(&R, 100);
	ck_assert_uint_eq(nfs4t_delegreturn(&R, &R.deleg), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), OK4);
	nfs4_cl_close(&back);
	nfs4_cl_close(&R.c);
}
END_TEST

/* A v4.1 REMOVE or RENAME of a delegated name by another client recalls it
 * and waits; the name stays until the return. */
START_TEST(test_recall_remove_rename)
{
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);
	nfs4t_begin(&Q, 4); /* RENAME v0/f to v0/g */
	nfs4_cl_putrootfh(&Q.b);
	nfs4_cl_lookup(&Q.b, "v0");
	nfs4_cl_savefh(&Q.b);
	nfs4_cl_rename(&Q.b, "f", "g");
	nfs4t_send(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 24), 0);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 15), 0);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 32), 0);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 29), DELAY4);
	nfs4t_expect_recall(&P, 1, true);
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);        /* delegated again */
	ck_assert_uint_eq(P.dtype, 1);
	ck_assert_uint_eq(c4_remove_f(&Q), DELAY4);
	nfs4t_expect_recall(&P, 2, true);                     /* the next backchannel sequence */
	ck_assert_uint_eq(nfs4t_fh_op(&P, 25, nfs4t_build_read, &P.deleg), OK4); /* not gone meanwhile */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(c4_remove_f(&Q), OK4);
}
END_TEST

/* A CB_SEQUENCE that fails leaves the backchannel slot's sequence where it
 * was (RFC 8881 20.9.3, knfsd's nfsd4_cb_sequence_done): NFS4ERR_DELAY
 * brings the same recall again with the same sequenceid, and the one after
 * its answer takes the next. NFS4ERR_SEQ_MISORDERED says the client and we
 * disagree on the slot: the session's backchannel is faulty, and SEQUENCE
 * tells the client (CB_PATH_DOWN_SESSION). */
START_TEST(test_cb_seq_error)
{
	struct nfs4_cl_cb cb;

	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), DELAY4);
	ck_assert_int_eq(nfs4_cl_wait_cb(&P.c, 20000), 1);
	ck_assert_int_eq(nfs4_cl_cb_parse(&P.c, &cb), 0);
	free(P.c.cb);
	P.c.cb = NULL;
	ck_assert_uint_eq(cb.seq, 1);
	ck_assert_uint_eq(cb.nrecalls, 1);
	ck_assert_int_eq(nfs4_cl_cb_reply(&P.c, &cb, DELAY4), 0);
	nfs4t_expect_recall(&P, 1, true);                     /* again, on the same sequenceid */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), OK4);
	ck_assert_uint_eq(nfs4t_close(&Q), OK4);
	ck_assert_uint_eq(nfs4t_ping(&P) & SEQ4_STATUS_CB_PATH_DOWN_SESSION, 0);
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);        /* delegated again */
	ck_assert_uint_eq(P.dtype, 1);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), DELAY4);
	ck_assert_int_eq(nfs4_cl_wait_cb(&P.c, 20000), 1);
	ck_assert_int_eq(nfs4_cl_cb_parse(&P.c, &cb), 0);
	free(P.c.cb);
	P.c.cb = NULL;
	ck_assert_uint_eq(cb.seq, 2);                         /* past the one answered */
	ck_assert_int_eq(nfs4_cl_cb_reply(&P.c, &cb, SEQ_MISORDERED4), 0);
	nfs4t_expect_no_call(&P, 300);                        /* not sent again on a faulty slot */
	ck_assert_uint_eq(nfs4t_ping(&P) & SEQ4_STATUS_CB_PATH_DOWN_SESSION, SEQ4_STATUS_CB_PATH_DOWN_SESSION);
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), OK4);
}
END_TEST

/* The CB reply decoder: a whole reply decodes; every truncation of it, a
 * count past its cap and a call instead of a reply are refused. */
START_TEST(test_cb_decode)
{
	struct ut_buf b;
	struct nfs4_cb_res r;
	const uint32_t words[] = { 77, 1, 0, 0, 0, 0, 0, 0, 2, 11, 0 };
	uint8_t sess[16] = { 1, 2, 3 };
	size_t full;

	ut_buf_init(&b, 1024);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		xdr_put_u32(&b, words[i]);
	xdr_put_fixed(&b, sess, 16);
	xdr_put_u32(&b, 5);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 4);  /* CB_RECALL */
	xdr_put_u32(&b, 0);
	full = b.len;
	ck_assert_int_eq(nfs4_cb_decode(ut_buf_bytes(&b), full, &r), 0);
	ck_assert_uint_eq(r.xid, 77);
	ck_assert(r.accepted);
	ck_assert(r.seq_ok);
	ck_assert_uint_eq(r.seq, 5);
	ck_assert_uint_eq(r.nres, 2);
	ck_assert_int_eq(memcmp(r.sess, sess, 16), 0);
	for (size_t l = 0; l < full; l += 4)
		ck_assert_int_eq(nfs4_cb_decode(ut_buf_bytes(&b), l, &r), -EBADMSG);
	ut_buf_set_be32(&b, 32, 1000); /* result count past NFS4_CB_MAX_RES */
	ck_assert_int_eq(nfs4_cb_decode(ut_buf_bytes(&b), full, &r), -EBADMSG);
	ut_buf_set_be32(&b, 32, 2);
	ut_buf_set_be32(&b, 4, 0);     /* a CALL */
	ck_assert_int_eq(nfs4_cb_decode(ut_buf_bytes(&b), full, &r), -EBADMSG);
	ut_buf_cleanup(&b);
	/* whole, but one result more than NFS4_CB_MAX_RES: refused, nothing written past the caps */
	ut_buf_init(&b, 1024);
	for (size_t i = 0; i < 8; i++)
		xdr_put_u32(&b, words[i]);
	xdr_put_u32(&b, NFS4_CB_MAX_RES + 1);
	for (size_t i = 0; i < NFS4_CB_MAX_RES + 1; i++) {
		xdr_put_u32(&b, 4);
		xdr_put_u32(&b, 0);
	}
	ck_assert_int_eq(nfs4_cb_decode(ut_buf_bytes(&b), b.len, &r), -EBADMSG);
	ut_buf_set_be32(&b, 32, NFS4_CB_MAX_RES); /* at the cap (the last result left out): decoded */
	ck_assert_int_eq(nfs4_cb_decode(ut_buf_bytes(&b), b.len - 8, &r), 0);
	ck_assert_uint_eq(r.nres, NFS4_CB_MAX_RES);
	ut_buf_cleanup(&b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_deleg");
	TCase *tc = tcase_create("deleg");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_recall_v4_open);
	tcase_add_test(tc, test_recall_v3_write);
	tcase_add_test(tc, test_recall_smb_open);
	tcase_add_test(tc, test_revoke);
	tcase_add_test(tc, test_bind_back);
	tcase_add_test(tc, test_recall_remove_rename);
	tcase_add_test(tc, test_cb_seq_error);
	tcase_add_test(tc, test_cb_decode);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
