/* test_nfs4_deleg2: NFSv4.1 delegations recalled by the namespace
 * operations of the other protocols (agent/nfs4/nfs4_deleg.c over
 * agent/vol/vol_lease.c; issue 19), and the waiters' timeout agreeing with
 * the delegation's revocation. The fixture is test_nfs4_deleg.c's
 * (tests/agent/nfs4/nfs4_harness.h): one store, one export served by an
 * in-process NFS server (NFSv3 and NFSv4.1, lease 3 s) and the SMB
 * dispatcher of tests/agent/smb/smb_harness.h; client P holds a read
 * delegation on v0/f, Q has no backchannel.
 * - an NFSv3 REMOVE of f, an NFSv3 RENAME of f and one onto f recall it
 *   and wait in the store: the name is untouched until the DELEGRETURN;
 * - an SMB CREATE with FILE_DELETE_ON_CLOSE, an SMB SET_INFO of the
 *   delete disposition and an SMB rename recall it and wait (STATUS_PENDING) until it is
 *   returned; the file goes at the close;
 * - timeouts agree: with the store's break timeout far below the lease
 *   (300 ms against 3 s), an NFSv3 REMOVE and an SMB CREATE for writing
 *   whose delegation is never returned wait until it is revoked (the lease
 *   after the recall), never less, then proceed; P is told it was revoked;
 * - OPEN's want bits answered with OPEN_DELEGATE_NONE_EXT and the WND4_*
 *   reason (RFC 8881 18.16.3); a new backchannel probed with CB_NULL, and
 *   CB_PATH_DOWN / CB_PATH_DOWN_SESSION when it does not answer; the CB_NULL
 *   reply decoder refuses what does not decode.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "agent/nfs4/nfs4_internal.h"
#include "agent/smb/smb_srv_internal.h"
#include "tests/agent/nfs4/nfs4_cl.h"
#include "tests/agent/nfs4/nfs4_harness.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"
#include "util/ut_clock.h"

enum { OK4 = 0, DELAY4 = 10008, RD = 1, WR = 2, BOTH = 3, REVOKED_FLAG = 0x40, PATH_DOWN = 0x1,
       PATH_DOWN_SESSION = 0x200, WANT_READ_DELEG = 0x100, WANT_WRITE_DELEG = 0x200, WANT_ANY_DELEG = 0x300,
       WANT_NO_DELEG = 0x400, WANT_CANCEL = 0x500, WANT_SIGNAL = 0x10000 };
#define SMB_DELETE_ 0x10000u
#define SMB_READ_DATA_ 0x1u
#define SMB_WRITE_DATA_ 0x2u
#define SMB_DELETE_ON_CLOSE_ 0x1000u
#define SMB_FILE_DISPOSITION_ 13u
#define SMB_FILE_RENAME_ 10u

static struct aqt_store ts;
static struct nfs_srv *nsrv;
static struct nfs4_srv *v4;
static struct smb_srv *ssrv;
static struct smbt_conn sc;

static struct nfs4t_cl P, Q;

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

/* ---------- helpers ---------- */

/* x's handle of the export's folder v0 into fh. */
static void c4_dirfh(struct nfs4t_cl *x, uint8_t *fh, uint32_t *fhlen)
{
	const uint8_t *p;

	nfs4t_begin(x, 3);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "v0");
	nfs4_cl_getfh(&x->b);
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 24), 0);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 15), 0);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 10), 0);
	ck_assert_ptr_nonnull(p = xdr_opaque(&x->cur, 128, fhlen));
	memcpy(fh, p, *fhlen);
}

/* NFSv3 REMOVE (proc 12) of name in dir, or RENAME (14) of name to toname
 * in the same dir when toname: sent on conn, not waited for. */
static void v3_ns_post(struct nfs4_cl *conn, const uint8_t *dir, uint32_t dirlen, const char *name, const char *toname)
{
	struct ut_buf b;

	nfs4_cl_call_begin(conn, &b, 3, toname ? 14 : 12);
	xdr_put_opaque(&b, dir, dirlen);
	xdr_put_opaque(&b, name, (uint32_t)strlen(name));
	if (toname) {
		xdr_put_opaque(&b, dir, dirlen);
		xdr_put_opaque(&b, toname, (uint32_t)strlen(toname));
	}
	ck_assert_int_eq(nfs4_cl_post(conn, &b), 0);
}

/* The NFSv3 status of the answer waiting on conn. */
static uint32_t v3_status(struct nfs4_cl *conn)
{
	struct xdr_cur cur;

	ck_assert_int_eq(nfs4_cl_recv(conn, &cur), 0);
	return xdr_u32(&cur);
}

static bool exists(const char *name)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	return stat(p, &st) == 0;
}

static void put_file(const char *name, const char *data)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0666), 0);
	ck_assert_int_eq(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

/* P opens f for reading and holds a read delegation on it. */
static void p_delegated(void)
{
	ck_assert_uint_eq(nfs4t_open(&P, RD, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
}

static void smb_up(void)
{
	smbt_conn_new(&sc, ssrv, 9, 0);
	ck_assert_ptr_nonnull(sc.t->exp = vol_export_at(ts.store, 0));
}

/* The final answer of the async request mid/aid (command) within 20 s, the
 * loop turned meanwhile. */
static void smb_final(uint16_t command, uint64_t mid, uint64_t aid, struct smbl_msg *m)
{
	int i, got = 0;

	for (i = 0; i < 1000 && !got; i++) {
		smb_async_tick(ssrv);
		if (!(got = smbl_recv(&sc, m)))
			usleep(20000);
	}
	ck_assert_int_eq(got, 1);
	smbt_check_final(&m->h, command, mid, aid, m->h.status);
}

/* ---------- tests ---------- */

/* An NFSv3 REMOVE of the delegated file recalls the delegation and waits
 * in the store: the file is there until the DELEGRETURN, then removed. */
START_TEST(test_v3_remove)
{
	struct nfs4_cl w;
	uint8_t dir[128];
	uint32_t dirlen;

	p_delegated();
	c4_dirfh(&Q, dir, &dirlen);
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	v3_ns_post(&w, dir, dirlen, "f", NULL);
	nfs4t_expect_recall(&P, 1, true);
	ck_assert(!nfs4t_readable_within(w.fd, 300)); /* the REMOVE waits for the return */
	ck_assert(exists("f"));
	ck_assert_uint_eq(nfs4t_fh_op(&P, 25, nfs4t_build_read, &P.deleg), OK4); /* still P's meanwhile */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert(nfs4t_readable_within(w.fd, 20000));
	ck_assert_uint_eq(v3_status(&w), 0);    /* NFS3_OK */
	ck_assert(!exists("f"));
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	nfs4_cl_close(&w);
}
END_TEST

/* An NFSv3 RENAME of the delegated file, and one onto it (the target entry
 * it replaces), recall the delegation and wait for its return. */
START_TEST(test_v3_rename)
{
	struct nfs4_cl w;
	uint8_t dir[128];
	uint32_t dirlen;

	c4_dirfh(&Q, dir, &dirlen);
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	/* the source */
	p_delegated();
	v3_ns_post(&w, dir, dirlen, "f", "h");
	nfs4t_expect_recall(&P, 1, true);
	ck_assert(!nfs4t_readable_within(w.fd, 300));
	ck_assert(exists("f") && !exists("h"));
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert(nfs4t_readable_within(w.fd, 20000));
	ck_assert_uint_eq(v3_status(&w), 0);
	ck_assert(!exists("f") && exists("h"));
	/* the target: g renamed onto a delegated f */
	put_file("f", "0123456789");
	put_file("g", "new");
	p_delegated();
	v3_ns_post(&w, dir, dirlen, "g", "f");
	nfs4t_expect_recall(&P, 2, true);
	ck_assert(!nfs4t_readable_within(w.fd, 300));
	ck_assert(exists("g"));
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert(nfs4t_readable_within(w.fd, 20000));
	ck_assert_uint_eq(v3_status(&w), 0);
	ck_assert(!exists("g") && exists("f"));
	nfs4_cl_close(&w);
}
END_TEST

/* An SMB CREATE with FILE_DELETE_ON_CLOSE recalls the delegation and is
 * pending until the return; the file goes at its close. */
START_TEST(test_smb_delete_on_close)
{
	struct smbl_create q = { .name = "f", .access = SMB_DELETE_ | SMB_READ_DATA_,
				 .options = SMB_DELETE_ON_CLOSE_, .disposition = 1 };
	struct smbl_msg m;

	smb_up();
	p_delegated();
	smbl_create(&sc, &q);
	ck_assert_uint_eq(q.status, STATUS_PENDING);
	nfs4t_expect_recall(&P, 1, true);
	smb_async_tick(ssrv);
	ck_assert_int_eq(smbl_recv(&sc, &m), 0); /* still waiting */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	smb_final(SMB2_CREATE, q.mid, q.aid, &m);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert(exists("f"));
	ck_assert_uint_eq(smbl_close(&sc, smb_wire_get_u64(m.body + 64)), STATUS_SUCCESS);
	ck_assert(!exists("f"));
}
END_TEST

/* An SMB open with DELETE access recalls nothing; its SET_INFO of the
 * delete disposition recalls the delegation and is pending until the
 * return; the file goes at the close. */
START_TEST(test_smb_disposition)
{
	struct smbl_create q = { .name = "f", .access = SMB_DELETE_ | SMB_READ_DATA_, .disposition = 1 };
	struct smbl_msg m;
	uint64_t mid, aid = 0;
	const uint8_t del = 1;

	smb_up();
	p_delegated();
	smbl_create(&sc, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	nfs4t_expect_no_call(&P, 300);
	ck_assert_uint_eq(smbl_set_info_async(&sc, q.fid, SMB_FILE_DISPOSITION_, &del, 1, &mid, &aid), STATUS_PENDING);
	nfs4t_expect_recall(&P, 1, true);
	smb_async_tick(ssrv);
	ck_assert_int_eq(smbl_recv(&sc, &m), 0);
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	smb_final(SMB2_SET_INFO, mid, aid, &m);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert(exists("f"));
	ck_assert_uint_eq(smbl_close(&sc, q.fid), STATUS_SUCCESS);
	ck_assert(!exists("f"));
}
END_TEST

/* An SMB rename (SET_INFO FileRenameInformation) of the delegated file
 * recalls the delegation and is pending until the return. */
START_TEST(test_smb_rename)
{
	struct smbl_create q = { .name = "f", .access = SMB_DELETE_ | SMB_READ_DATA_, .disposition = 1 };
	struct smbl_msg m;
	uint64_t mid, aid = 0;
	uint8_t ren[24] = { 0 };

	smbt_put32(ren + 16, 2);  /* FileNameLength: "h" in UTF-16 */
	ren[20] = 'h';
	smb_up();
	p_delegated();
	smbl_create(&sc, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_set_info_async(&sc, q.fid, SMB_FILE_RENAME_, ren, 22, &mid, &aid), STATUS_PENDING);
	nfs4t_expect_recall(&P, 1, true);
	smb_async_tick(ssrv);
	ck_assert_int_eq(smbl_recv(&sc, &m), 0);
	ck_assert(exists("f") && !exists("h"));
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	smb_final(SMB2_SET_INFO, mid, aid, &m);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert(!exists("f") && exists("h"));
	ck_assert_uint_eq(smbl_close(&sc, q.fid), STATUS_SUCCESS);
}
END_TEST

/* The store's break timeout (300 ms here) is far below the lease (3 s): an
 * NFSv3 REMOVE whose recalled delegation is never returned waits until the
 * delegation is revoked, then proceeds; P learns of the revocation. */
START_TEST(test_wait_agrees_v3)
{
	struct nfs4_cl w;
	uint8_t dir[128];
	uint32_t dirlen;
	uint64_t t0, t1;
	int i;

	ck_assert_int_eq(vol_lease_set_timeout(ts.store, 300), 0);
	p_delegated();
	c4_dirfh(&Q, dir, &dirlen);
	ck_assert_int_eq(nfs4_cl_dial(&w, nfs_srv_port(nsrv)), 0);
	t0 = ut_clock_mono_ns();
	v3_ns_post(&w, dir, dirlen, "f", NULL);
	nfs4t_expect_recall(&P, 1, false);            /* never answered, never returned */
	t1 = ut_clock_mono_ns();                /* the revocation is 3 s after the recall went out: */
	while (ut_clock_mono_ns() - t1 < 1500000000ull) { /* 1.5 s (5 store timeouts) of waiting is safe */
		(void)nfs4t_ping(&P);              /* P's lease stays alive */
		ck_assert(!nfs4t_readable_within(w.fd, 100));
	}
	ck_assert(exists("f"));
	for (i = 0; i < 100 && !nfs4t_readable_within(w.fd, 200); i++)
		(void)nfs4t_ping(&P);
	ck_assert(nfs4t_readable_within(w.fd, 0));
	ck_assert_uint_ge(ut_clock_mono_ns() - t0, 2500000000ull); /* not before the lease time */
	ck_assert_uint_eq(v3_status(&w), 0);
	ck_assert(!exists("f"));
	ck_assert_uint_eq(nfs4t_ping(&P) & REVOKED_FLAG, REVOKED_FLAG);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	nfs4_cl_close(&w);
}
END_TEST

/* The same for an SMB CREATE for writing: pending past the store's timeout
 * until the delegation is revoked, then served. */
START_TEST(test_wait_agrees_smb)
{
	struct smbl_create q = { .name = "f", .disposition = 1 };
	struct smbl_msg m;
	uint64_t t0, t1;
	int i;

	ck_assert_int_eq(vol_lease_set_timeout(ts.store, 300), 0);
	smb_up();
	p_delegated();
	t0 = ut_clock_mono_ns();
	smbl_create(&sc, &q);
	ck_assert_uint_eq(q.status, STATUS_PENDING);
	nfs4t_expect_recall(&P, 1, false);
	t1 = ut_clock_mono_ns();
	while (ut_clock_mono_ns() - t1 < 1500000000ull) { /* 1.5 s: five store timeouts, under the lease */
		(void)nfs4t_ping(&P);
		usleep(100000);
		smb_async_tick(ssrv);
		ck_assert_int_eq(smbl_recv(&sc, &m), 0);
	}
	for (i = 0; i < 100; i++) {
		(void)nfs4t_ping(&P);
		smb_async_tick(ssrv);
		if (smbl_recv(&sc, &m))
			break;
		usleep(200000);
	}
	ck_assert_int_lt(i, 100);
	smbt_check_final(&m.h, SMB2_CREATE, q.mid, q.aid, STATUS_SUCCESS);
	ck_assert_uint_ge(ut_clock_mono_ns() - t0, 2500000000ull);
	ck_assert_uint_eq(nfs4t_ping(&P) & REVOKED_FLAG, REVOKED_FLAG);
}
END_TEST

/* OPEN's want bits (RFC 8881 18.16.3): NO_DELEG and CANCEL get
 * OPEN_DELEGATE_NONE_EXT with their reason, WRITE_DELEG a write delegation
 * (test_nfs4_wdeleg has the rest of their story); READ_DELEG
 * and ANY_DELEG get a read delegation when safe, else NONE_EXT with
 * CONTENTION (held already, another open writes) or RESOURCE (no
 * backchannel); no want keeps the plain OPEN_DELEGATE_NONE; an unknown
 * want is NFS4ERR_INVAL. */
START_TEST(test_want)
{
	struct nfs4_sid d;

	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_NO_DELEG, 0), OK4);
	ck_assert_uint_eq(P.dtype, 3);
	ck_assert_uint_eq(P.why, 0);                   /* WND4_NOT_WANTED */
	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_CANCEL, 0), OK4);
	ck_assert_uint_eq(P.dtype, 3);
	ck_assert_uint_eq(P.why, 7);                   /* WND4_CANCELLED */
	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_WRITE_DELEG, 0), OK4);
	ck_assert_uint_eq(P.dtype, 2);                 /* OPEN_DELEGATE_WRITE (test_nfs4_wdeleg) */
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0); /* nothing granted so far */
	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_READ_DELEG | WANT_SIGNAL, 0), OK4);
	ck_assert_uint_eq(P.dtype, 1);                 /* granted; the signal flag taken, never acted on */
	d = P.deleg;
	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_ANY_DELEG, 0), OK4);
	ck_assert_uint_eq(P.dtype, 3);
	ck_assert_uint_eq(P.why, 1);                   /* WND4_CONTENTION: it holds one */
	ck_assert_uint_eq(nfs4t_open(&Q, RD | WANT_READ_DELEG, 0), OK4);
	ck_assert_uint_eq(Q.dtype, 3);
	ck_assert_uint_eq(Q.why, 2);                   /* WND4_RESOURCE: Q has no backchannel */
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), OK4);
	ck_assert_uint_eq(Q.dtype, 0);                 /* no want: plain NONE */
	ck_assert_uint_eq(nfs4t_open(&Q, RD | 0x600u, 0), 22); /* NFS4ERR_INVAL */
	ck_assert_uint_eq(nfs4t_open(&Q, RD | 0x40000u, 0), 22);
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), DELAY4);  /* recalls P's */
	P.deleg = d;
	nfs4t_expect_recall(&P, 1, true);
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), OK4);     /* Q writes the file now */
	P.owner = "another-owner";
	ck_assert_uint_eq(nfs4t_open(&P, RD | WANT_READ_DELEG, 0), OK4);
	ck_assert_uint_eq(P.dtype, 3);
	ck_assert_uint_eq(P.why, 1);                   /* WND4_CONTENTION: another open writes */
	P.owner = NULL;
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
}
END_TEST

/* A new backchannel is probed with CB_NULL: answered, all is well (no
 * CB_PATH_DOWN, delegations given); unanswered within the probe time
 * (half the 3 s lease), SEQUENCE says CB_PATH_DOWN and
 * CB_PATH_DOWN_SESSION and no delegation is given (NONE_EXT, RESOURCE);
 * another connection bound with CDFC4_FORE_OR_BOTH takes the backchannel
 * found down, is probed, answers, and that clears them. */
START_TEST(test_cb_probe)
{
	struct nfs4t_cl R;
	struct nfs4_cl back;
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t n, f = 0;
	int i;

	for (i = 0; i < 100 && !P.c.nnull; i++) {    /* P's probe, answered by its client */
		(void)nfs4t_ping(&P);
		usleep(50000);
	}
	ck_assert_uint_eq(P.c.nnull, 1);
	ck_assert_uint_eq(nfs4t_ping(&P) & (PATH_DOWN | PATH_DOWN_SESSION), 0);
	ck_assert_uint_eq(Q.c.nnull, 0);             /* Q has no backchannel: no probe */
	ck_assert_uint_eq(nfs4t_ping(&Q) & (PATH_DOWN | PATH_DOWN_SESSION), 0);
	nfs4t_cl_up_ex(&R, nfs_srv_port(nsrv), "client-r", 2, true);           /* a backchannel that never answers */
	for (i = 0; i < 100 && !(f & PATH_DOWN); i++) {
		usleep(100000);
		f = nfs4t_ping(&R);
	}
	ck_assert_uint_eq(f & (PATH_DOWN | PATH_DOWN_SESSION), PATH_DOWN | PATH_DOWN_SESSION);
	ck_assert_uint_ge(R.c.nnull, 1);
	ck_assert_uint_eq(nfs4t_open(&R, RD, 0), OK4);
	ck_assert_uint_eq(R.dtype, 0);               /* no delegation without a path */
	ck_assert_uint_eq(nfs4t_open(&R, RD | WANT_READ_DELEG, 0), OK4);
	ck_assert_uint_eq(R.dtype, 3);
	ck_assert_uint_eq(R.why, 2);                 /* WND4_RESOURCE */
	/* another connection bound with CDFC4_FORE_OR_BOTH (what Linux does on
	 * CB_PATH_DOWN) takes the backchannel found down, and answers */
	ck_assert_int_eq(nfs4_cl_dial(&back, nfs_srv_port(nsrv)), 0);
	memcpy(back.sess, R.c.sess, 16);
	nfs4_cl_begin(&back, &b, 1, 1);
	nfs4_cl_bind_conn(&b, &back, 3);
	ck_assert_int_eq(nfs4_cl_send(&back, &b, &cur), 0);
	ck_assert_uint_eq(nfs4_cl_res(&cur, &n), 0);
	ck_assert_uint_eq(nfs4_cl_op(&cur, 41), 0);
	(void)xdr_fixed(&cur, 16);
	ck_assert_uint_eq(xdr_u32(&cur), 3);         /* CDFS4_BOTH: the backchannel moved */
	for (i = 0; i < 100 && !back.nnull; i++)
		(void)nfs4_cl_wait_cb(&back, 50);    /* answers the probe on the way */
	ck_assert_uint_eq(back.nnull, 1);
	for (i = 0; i < 100 && (f & PATH_DOWN); i++) {
		usleep(50000);
		f = nfs4t_ping(&R);
	}
	ck_assert_uint_eq(f & (PATH_DOWN | PATH_DOWN_SESSION), 0);
	ck_assert_uint_eq(nfs4t_open(&R, RD | WANT_READ_DELEG, 0), OK4);
	ck_assert_uint_eq(R.dtype, 1);
	nfs4_cl_close(&back);
	nfs4_cl_close(&R.c);
}
END_TEST

/* The CB_NULL reply decoder: an accepted SUCCESS decodes ok, an error or a
 * denial decodes not ok, every truncation and a call are refused. */
START_TEST(test_cb_null_decode)
{
	const uint8_t rep[] = { 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	uint8_t bad[sizeof(rep)];
	uint32_t xid = 0;
	bool ok = false;

	ck_assert_int_eq(nfs4_cb_decode_null(rep, sizeof(rep), &xid, &ok), 0);
	ck_assert_uint_eq(xid, 9);
	ck_assert(ok);
	for (size_t l = 0; l < sizeof(rep); l += 4)
		ck_assert_int_eq(nfs4_cb_decode_null(rep, l, &xid, &ok), -EBADMSG);
	memcpy(bad, rep, sizeof(rep));
	bad[23] = 3;                                 /* PROC_UNAVAIL */
	ck_assert_int_eq(nfs4_cb_decode_null(bad, sizeof(bad), &xid, &ok), 0);
	ck_assert(!ok);
	bad[11] = 1;                                 /* MSG_DENIED */
	ck_assert_int_eq(nfs4_cb_decode_null(bad, 16, &xid, &ok), 0);
	ck_assert(!ok);
	bad[7] = 0;                                  /* a CALL */
	ck_assert_int_eq(nfs4_cb_decode_null(bad, sizeof(bad), &xid, &ok), -EBADMSG);
	memcpy(bad, rep, sizeof(rep));
	bad[19] = 0xff;                              /* a verifier longer than the record */
	ck_assert_int_eq(nfs4_cb_decode_null(bad, sizeof(bad), &xid, &ok), -EBADMSG);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_deleg2");
	TCase *tc = tcase_create("deleg2");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_v3_remove);
	tcase_add_test(tc, test_v3_rename);
	tcase_add_test(tc, test_smb_delete_on_close);
	tcase_add_test(tc, test_smb_disposition);
	tcase_add_test(tc, test_smb_rename);
	tcase_add_test(tc, test_wait_agrees_v3);
	tcase_add_test(tc, test_wait_agrees_smb);
	tcase_add_test(tc, test_want);
	tcase_add_test(tc, test_cb_probe);
	tcase_add_test(tc, test_cb_null_decode);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
