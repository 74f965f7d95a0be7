/* test_nfs4_wrecall: which operations of another client or protocol
 * recall an NFSv4.1 write delegation and which do not (RFC 8881 10.4;
 * knfsd breaks a delegation in vfs_link/unlink/rename/setattr and on a
 * conflicting open, never on a lookup or a readdir of the parent).
 *
 * Recall (the caller waits: a v4.1 NFS4ERR_DELAY until the DELEGRETURN, an
 * NFSv3 call in the server): v4.1 SETATTR of the size, OPEN for writing,
 * OPEN UNCHECKED4 that cuts the file (before it cuts),
 * RENAME and LINK of the file; NFSv3 SETATTR of the size, REMOVE, RENAME
 * and LINK. Do not recall: v4.1 LOOKUP of the name and READDIR of the
 * parent, NFSv3 LOOKUP, ACCESS and READDIRPLUS of the parent. (v4.1
 * READ/WRITE/REMOVE/OPEN for reading, NFSv3 READ/WRITE/GETATTR, NLM and
 * SMB CREATE: test_nfs4_wdeleg.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "tests/agent/nfs4/nfs4_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

enum { OK4 = 0, DELAY4 = 10008, WR = 2, BOTH = 3, DT_WRITE = 2 };
enum { V3_SETATTR = 2, V3_LOOKUP = 3, V3_ACCESS = 4, V3_REMOVE = 12, V3_RENAME = 14, V3_LINK = 15,
       V3_READDIRPLUS = 17 };

static struct aqt_store ts;
static struct nfs_srv *nsrv;
static struct nfs4_srv *v4;
static struct smb_srv *ssrv;
static struct nfs4t_cl P, Q;
static uint32_t cbseq;              /* P's CB_SEQUENCEs so far */
static uint8_t dirfh[128];          /* v0's root */
static uint32_t dirfhlen;

static const struct nfs4_sid anon_sid;

/* P opens f for writing and gets a write delegation. */
static void p_wdeleg(void)
{
	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4);
	ck_assert_uint_eq(P.dtype, DT_WRITE);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
}

/* P's delegation is recalled; P answers and returns it. */
static void p_recalled_returns(void)
{
	nfs4t_expect_recall(&P, ++cbseq, true);
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
}

/* Nothing recalled: no call to P, its grant still held. */
static void p_not_recalled(void)
{
	nfs4t_expect_no_call(&P, 400);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
}

/* ---------- v4.1 ---------- */

/* PUTROOTFH, LOOKUP v0 as x, then n more operations follow. */
static void in_v0(struct nfs4t_cl *x, uint32_t n)
{
	nfs4t_begin(x, 2 + n);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "v0");
}

static void v0_ok(struct nfs4t_cl *x)
{
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 24), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 15), OK4);
}

static void build_setattr_size0(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 34);
	xdr_put_u32(b, sid->seqid);
	xdr_put_fixed(b, sid->other, 12);
	xdr_put_u32(b, 1);
	xdr_put_u32(b, 1u << 4); /* size */
	xdr_put_u32(b, 8);
	xdr_put_u64(b, 0);
}

/* RENAME v0/from to v0/to by x: its status. */
static uint32_t c4_rename(struct nfs4t_cl *x, const char *from, const char *to)
{
	in_v0(x, 2);
	nfs4_cl_savefh(&x->b);
	nfs4_cl_rename(&x->b, from, to);
	nfs4t_send(x);
	v0_ok(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 32), OK4);
	return nfs4_cl_op(&x->cur, 29);
}

/* LINK of P's file as v0/name by x: its status. */
static uint32_t c4_link(struct nfs4t_cl *x, const char *name)
{
	nfs4t_begin(x, 5);
	nfs4_cl_putfh(&x->b, P.fh, P.fhlen);
	nfs4_cl_savefh(&x->b);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "v0");
	xdr_put_u32(&x->b, 11); /* LINK */
	xdr_put_opaque(&x->b, name, (uint32_t)strlen(name));
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 32), OK4);
	v0_ok(x);
	return nfs4_cl_op(&x->cur, 11);
}

/* Another client's LOOKUP of the name and READDIR of the folder (with
 * the entries' attributes) recall nothing. */
START_TEST(test_v4_lookup_readdir_keep)
{
	p_wdeleg();
	in_v0(&Q, 2);
	nfs4_cl_lookup(&Q.b, "f");
	nfs4_cl_getfh(&Q.b);
	nfs4t_send(&Q);
	v0_ok(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 15), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 10), OK4);
	in_v0(&Q, 1);
	nfs4_cl_readdir(&Q.b, 0, 8192);
	nfs4t_send(&Q);
	v0_ok(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 26), OK4);
	p_not_recalled();
}
END_TEST

/* Another client's SETATTR of the size recalls it; it proceeds after the return. */
START_TEST(test_v4_setattr_size_recalls)
{
	p_wdeleg();
	memcpy(Q.fh, P.fh, P.fhlen);
	Q.fhlen = P.fhlen;
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 34, build_setattr_size0, &anon_sid), DELAY4);
	p_recalled_returns();
	ck_assert_uint_eq(nfs4t_fh_op(&Q, 34, build_setattr_size0, &anon_sid), OK4);
}
END_TEST

/* Another client's OPEN for writing (no reading) recalls it. */
START_TEST(test_v4_open_write_recalls)
{
	p_wdeleg();
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), DELAY4);
	p_recalled_returns();
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), OK4);
}
END_TEST

/* Another client's OPEN UNCHECKED4 with size 0 of the file (O_TRUNC)
 * recalls it before it cuts anything: the file keeps its bytes while the
 * holder may still write back under its delegation; after the return the
 * OPEN cuts it. */
START_TEST(test_v4_open_trunc_recalls)
{
	char p[200];
	struct stat st;
	FILE *f;

	p_wdeleg();
	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_int_eq(fputs("0123456789", f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	in_v0(&Q, 1);
	nfs4_cl_open_sized(&Q.b, "q-owner", "f", NULL, 0, false, 0);
	nfs4t_send(&Q);
	v0_ok(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 18), DELAY4);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 10);
	p_recalled_returns();
	in_v0(&Q, 1);
	nfs4_cl_open_sized(&Q.b, "q-owner", "f", NULL, 0, false, 0);
	nfs4t_send(&Q);
	v0_ok(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 18), OK4);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
}
END_TEST

/* Another client's RENAME of the name recalls it. */
START_TEST(test_v4_rename_recalls)
{
	p_wdeleg();
	ck_assert_uint_eq(c4_rename(&Q, "f", "g"), DELAY4);
	p_recalled_returns();
	ck_assert_uint_eq(c4_rename(&Q, "f", "g"), OK4);
}
END_TEST

/* Another client's LINK of the file recalls it. */
START_TEST(test_v4_link_recalls)
{
	p_wdeleg();
	ck_assert_uint_eq(c4_link(&Q, "f2"), DELAY4);
	p_recalled_returns();
	ck_assert_uint_eq(c4_link(&Q, "f2"), OK4);
}
END_TEST

/* ---------- NFSv3 ---------- */

/* Start an NFSv3 call proc into b with dir's handle and, when name, a name. */
static void v3_dirop(struct nfs4_cl *w, struct ut_buf *b, uint32_t proc, const char *name)
{
	nfs4_cl_call_begin(w, b, 3, proc);
	xdr_put_opaque(b, dirfh, dirfhlen);
	if (name)
		xdr_put_opaque(b, name, (uint32_t)strlen(name));
}

/* Send b on w and take the answer's nfsstat3. */
static uint32_t v3_status(struct nfs4_cl *w, struct ut_buf *b)
{
	struct xdr_cur cur;

	ck_assert_int_eq(nfs4_cl_send(w, b, &cur), 0);
	return xdr_u32(&cur);
}

/* b, posted on w, waits for P's return: the recall goes out, no answer
 * until P returns it, then NFS3_OK. */
static void v3_waits(struct nfs4_cl *w, struct ut_buf *b)
{
	struct xdr_cur cur;

	ck_assert_int_eq(nfs4_cl_post(w, b), 0);
	nfs4t_expect_recall(&P, ++cbseq, true);
	ck_assert(!nfs4t_readable_within(w->fd, 300));
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert(nfs4t_readable_within(w->fd, 20000));
	ck_assert_int_eq(nfs4_cl_recv(w, &cur), 0);
	ck_assert_uint_eq(xdr_u32(&cur), 0);
}

/* NFSv3 LOOKUP of the name, ACCESS of the file and READDIRPLUS of the
 * folder recall nothing. */
START_TEST(test_v3_lookup_access_readdir_keep)
{
	struct nfs4_cl w;
	struct ut_buf b;

	p_wdeleg();
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	v3_dirop(&w, &b, V3_LOOKUP, "f");
	ck_assert_uint_eq(v3_status(&w, &b), 0);
	nfs4_cl_call_begin(&w, &b, 3, V3_ACCESS);
	xdr_put_opaque(&b, P.fh, P.fhlen);
	xdr_put_u32(&b, 0x3f);
	ck_assert_uint_eq(v3_status(&w, &b), 0);
	v3_dirop(&w, &b, V3_READDIRPLUS, NULL);
	xdr_put_u64(&b, 0);                /* cookie */
	xdr_put_u64(&b, 0);                /* cookieverf */
	xdr_put_u32(&b, 4096);
	xdr_put_u32(&b, 8192);
	ck_assert_uint_eq(v3_status(&w, &b), 0);
	p_not_recalled();
	nfs4_cl_close(&w);
}
END_TEST

/* NFSv3 SETATTR of the size, REMOVE, RENAME and LINK each wait for the return. */
START_TEST(test_v3_changes_recall)
{
	struct nfs4_cl w;
	struct ut_buf b;

	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	p_wdeleg();
	nfs4_cl_call_begin(&w, &b, 3, V3_SETATTR);
	xdr_put_opaque(&b, P.fh, P.fhlen);
	xdr_put_u32(&b, 0);                /* mode, uid, gid: unset */
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 1);                /* size 3 */
	xdr_put_u64(&b, 3);
	xdr_put_u32(&b, 0);                /* atime, mtime: unchanged */
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);                /* no guard */
	v3_waits(&w, &b);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);

	p_wdeleg();
	nfs4_cl_call_begin(&w, &b, 3, V3_LINK);
	xdr_put_opaque(&b, P.fh, P.fhlen);
	xdr_put_opaque(&b, dirfh, dirfhlen);
	xdr_put_opaque(&b, "f2", 2);
	v3_waits(&w, &b);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);

	p_wdeleg();
	v3_dirop(&w, &b, V3_RENAME, "f");
	xdr_put_opaque(&b, dirfh, dirfhlen);
	xdr_put_opaque(&b, "g", 1);
	v3_waits(&w, &b);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);

	ck_assert_uint_eq(c4_rename(&Q, "g", "f"), OK4); /* back, for P's next open */
	p_wdeleg();
	v3_dirop(&w, &b, V3_REMOVE, "f");
	v3_waits(&w, &b);
	nfs4_cl_close(&w);
}
END_TEST

/* ---------- fixture ---------- */

static void setup(void)
{
	nfs4t_srv_up(&(struct nfs4t_spec){ .fsid = 411, .key_byte = 7, .threads = 4, .lease_s = 3 }, &ts, &nsrv, &v4,
		     &ssrv);
	nfs4t_cl_up(&P, nfs_srv_port(nsrv), "client-p", 2); /* CREATE_SESSION4_FLAG_CONN_BACK_CHAN */
	nfs4t_cl_up(&Q, nfs_srv_port(nsrv), "client-q", 0);
	cbseq = 0;
	in_v0(&Q, 1);
	nfs4_cl_getfh(&Q.b);
	nfs4t_send(&Q);
	v0_ok(&Q);
	ck_assert_uint_eq(nfs4_cl_op(&Q.cur, 10), OK4);
	{
		const uint8_t *p = xdr_opaque(&Q.cur, sizeof(dirfh), &dirfhlen);

		ck_assert_ptr_nonnull(p);
		memcpy(dirfh, p, dirfhlen);
	}
}

static void teardown(void)
{
	nfs4_cl_close(&P.c);
	nfs4_cl_close(&Q.c);
	nfs4t_srv_down(&ts, nsrv, v4, ssrv);
}

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_wrecall");
	TCase *tc = tcase_create("wrecall");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_v4_lookup_readdir_keep);
	tcase_add_test(tc, test_v4_setattr_size_recalls);
	tcase_add_test(tc, test_v4_open_write_recalls);
	tcase_add_test(tc, test_v4_open_trunc_recalls);
	tcase_add_test(tc, test_v4_rename_recalls);
	tcase_add_test(tc, test_v4_link_recalls);
	tcase_add_test(tc, test_v3_lookup_access_readdir_keep);
	tcase_add_test(tc, test_v3_changes_recall);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
