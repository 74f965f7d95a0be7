/* test_nfs4_share: NFSv4.1 share reservations (OPEN share_deny), their
 * exclusion against other v4.1 opens and against SMB share modes on the
 * same file (one table: agent/vol/vol_lock.h), OPEN_DOWNGRADE, and
 * VERIFY / NVERIFY (agent/nfs4/nfs4_io.c, nfs4_attr.c). One store with one
 * export served by an in-process NFS server (NFSv4.1) and by the SMB
 * dispatcher of tests/agent/smb/smb_harness.h (signed CREATE frames; the
 * fixture of nfs4_harness.h), so an SMB CREATE goes through SMB's own
 * share-mode check. Also: in the
 * volume's grace period (agent/vol/vol_grace.h) SMB CREATEs that deny
 * others and SMB byte-range locks are refused. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_grace.h"
#include "tests/agent/nfs4/nfs4_harness.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

enum { OK4 = 0, INVAL4 = 22, SAME4 = 10009, SHARE_DENIED4 = 10015, NOT_SAME4 = 10027, ATTRNOTSUPP4 = 10032,
       OPENMODE4 = 10038, GRACE4 = 10013, RD = 1, WR = 2, BOTH = 3 };
#define SHARING_VIOLATION 0xC0000043u
#define FILE_LOCK_CONFLICT 0xC0000054u
#define FILE_READ_DATA_ 0x1u
#define FILE_WRITE_DATA_ 0x2u
#define SHARE_READ_ 1u
#define SHARE_WRITE_ 2u
#define SHARE_DELETE_ 4u

static struct aqt_store ts;
static struct nfs_srv *nsrv;
static struct nfs4_srv *v4;
static struct smb_srv *ssrv;
static struct smbt_conn sc;

static struct nfs4t_cl P, Q;

static uint32_t c4_downgrade(struct nfs4t_cl *x, const struct nfs4_sid *sid, uint32_t access, uint32_t deny)
{
	uint32_t st;

	nfs4t_begin(x, 2);
	nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
	nfs4_cl_open_downgrade(&x->b, sid, access, deny);
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
	if ((st = nfs4_cl_op(&x->cur, 21)) == OK4)
		nfs4_cl_get_sid(&x->cur, &x->open);
	return st;
}

static uint32_t c4_write(struct nfs4t_cl *x, uint64_t off, const char *data)
{
	nfs4t_begin(x, 2);
	nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
	nfs4_cl_write(&x->b, &x->open, off, data, (uint32_t)strlen(data));
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
	return nfs4_cl_op(&x->cur, 38);
}

/* VERIFY or NVERIFY of the file's size (attribute 4) against size. */
static uint32_t c4_verify_size(struct nfs4t_cl *x, uint32_t op, uint64_t size)
{
	uint8_t v[8];
	uint32_t w = 1u << 4;

	for (int i = 0; i < 8; i++)
		v[i] = (uint8_t)(size >> (56 - 8 * i));
	nfs4t_begin(x, 2);
	nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
	nfs4_cl_verify(&x->b, op, &w, 1, v, 8);
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
	return nfs4_cl_op(&x->cur, op);
}

/* OPEN UNCHECKED4 of v0/f as x with access, deny and a size in its
 * createattrs (0: O_TRUNC): the OPEN's status. */
static uint32_t c4_open_trunc(struct nfs4t_cl *x, uint32_t access, uint32_t deny, uint64_t size)
{
	nfs4t_begin(x, 3);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "v0");
	nfs4_cl_open_trunc(&x->b, "open-owner", "f", access, deny, size);
	nfs4t_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 24), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 15), OK4);
	return nfs4_cl_op(&x->cur, 18);
}

/* What v0/f holds on disk (up to 63 bytes). */
static const char *f_data(void)
{
	static char buf[64];
	char p[300];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_ptr_nonnull(f = fopen(p, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	ck_assert_int_eq(fclose(f), 0);
	buf[n] = '\0';
	return buf;
}

/* ---------- SMB ---------- */

static void smb_conn(void)
{
	smbt_conn_new(&sc, ssrv, 7, 0);
	ck_assert_ptr_nonnull(sc.t->exp = vol_export_at(ts.store, 0));
}

/* SMB2 CREATE of "f" (FILE_OPEN) with DesiredAccess and ShareAccess: the status. */
static uint32_t smb_create(uint32_t access, uint32_t share)
{
	struct smb_wire_hdr h;

	(void)nfs4t_smb_create(&sc, access, share, &h, NULL);
	return h.status;
}

/* SMB2 CREATE as smb_create; on success the FileId in fid. */
static uint32_t smb_create_fid(uint32_t access, uint32_t share, uint8_t fid[16])
{
	struct smb_wire_hdr h;

	(void)nfs4t_smb_create(&sc, access, share, &h, fid);
	return h.status;
}

/* SMB2 LOCK of bytes [0, 10) exclusive, fail immediately, on fid: the status. */
static uint32_t smb_lock(const uint8_t fid[16])
{
	uint8_t body[48] = { 0 }, buf[512];
	struct smb_wire_hdr h = { .command = SMB2_LOCK };
	size_t len;

	smbt_put16(body, 48);
	smbt_put16(body + 2, 1);           /* LockCount */
	memcpy(body + 8, fid, 16);
	smbt_put64(body + 24, 0);          /* Offset */
	smbt_put64(body + 32, 10);         /* Length */
	smbt_put32(body + 40, 0x2u | 0x10u); /* EXCLUSIVE | FAIL_IMMEDIATELY */
	h.tree_id = sc.t->id;
	h.message_id = sc.mid++;
	smbt_send(&sc, &h, body, 48);
	ck_assert_int_eq(smbt_recv(&sc, buf, sizeof(buf), &len, &h, NULL), 1);
	ck_assert_uint_eq(h.command, SMB2_LOCK);
	return h.status;
}

/* Is export 0 in its grace period now? */
static bool in_grace(void)
{
	struct vol_export *e = vol_export_at(ts.store, 0);
	bool on;

	ck_assert_ptr_nonnull(e);
	on = vol_grace_active(e);
	vol_export_unref(e);
	return on;
}

/* The volume moves in (detached, attached again) with a holder recorded on
 * its shelf that has not reclaimed: it is in grace for grace_s seconds. */
static void enter_grace(unsigned grace_s)
{
	char p[300];
	FILE *f;

	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 0), 0);
	snprintf(ts.cfg[0].lockdir, sizeof(ts.cfg[0].lockdir), "%s/locks", ts.dir);
	ck_assert_int_eq(mkdir(ts.cfg[0].lockdir, 0700), 0);
	snprintf(p, sizeof(p), "%s/holders", ts.cfg[0].lockdir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fprintf(f, "aquifer-lock-holders 1\nnfs4 - 676f6e65\n"); /* "gone": never comes back */
	ck_assert_int_eq(fclose(f), 0);
	vol_store_set_grace(ts.store, grace_s);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, ts.n), 0);
	ck_assert(in_grace());
}

/* ---------- fixture ---------- */

static void setup(void)
{
	nfs4t_srv_up(&(struct nfs4t_spec){ .fsid = 300, .key_byte = 3, .threads = 2 }, &ts, &nsrv, &v4, &ssrv);
	nfs4t_cl_up(&P, nfs_srv_port(nsrv), "client-p", 0);
	nfs4t_cl_up(&Q, nfs_srv_port(nsrv), "client-q", 0);
}

static void teardown(void)
{
	nfs4_cl_close(&P.c);
	nfs4_cl_close(&Q.c);
	nfs4t_srv_down(&ts, nsrv, v4, ssrv);
}

/* ---------- tests ---------- */

/* share_deny between two v4.1 clients; CLOSE lifts it. */
START_TEST(test_deny_v4)
{
	ck_assert_uint_eq(nfs4t_open(&P, RD, WR), OK4);        /* P reads, denies writers */
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), SHARE_DENIED4);
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, 0), SHARE_DENIED4);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, RD), SHARE_DENIED4); /* P reads: Q cannot deny reading */
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, WR), OK4);         /* an upgrade of Q's open: deny write too */
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	ck_assert_uint_eq(nfs4t_open(&P, WR, 0), SHARE_DENIED4); /* Q's deny holds */
	ck_assert_uint_eq(nfs4t_close(&Q), OK4);
	ck_assert_uint_eq(nfs4t_open(&P, WR, 0), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 3), SHARE_DENIED4); /* P writes */
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 4), INVAL4);        /* no such deny bit */
}
END_TEST

/* The same table decides between v4.1 and SMB, both ways. */
START_TEST(test_deny_smb)
{
	smb_conn();
	/* v4.1 denies writing: an SMB CREATE for writing is a sharing violation */
	ck_assert_uint_eq(nfs4t_open(&P, RD, WR), OK4);
	ck_assert_uint_eq(smb_create(FILE_WRITE_DATA_, SHARE_READ_ | SHARE_WRITE_ | SHARE_DELETE_), SHARING_VIOLATION);
	/* ... and one that does not share reading with P's open too */
	ck_assert_uint_eq(smb_create(FILE_READ_DATA_, SHARE_WRITE_), SHARING_VIOLATION);
	ck_assert_uint_eq(smb_create(FILE_READ_DATA_, SHARE_READ_), STATUS_SUCCESS);
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	/* SMB shares reading only (denies writing): a v4.1 open for writing is refused */
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), SHARE_DENIED4);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, RD), SHARE_DENIED4); /* SMB reads */
	smbt_conns_free(ssrv);                                   /* its opens go */
	ck_assert_uint_eq(nfs4t_open(&Q, BOTH, RD), OK4);
}
END_TEST

/* OPEN_DOWNGRADE: to a subset only; what it no longer holds or denies is
 * free for others at once; I/O needs what is still held. */
START_TEST(test_downgrade)
{
	struct nfs4_sid old;

	ck_assert_uint_eq(nfs4t_open(&P, BOTH, BOTH), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), SHARE_DENIED4);
	old = P.open;
	ck_assert_uint_eq(c4_downgrade(&P, &P.open, RD, WR), OK4);
	ck_assert_uint_eq(P.open.seqid, old.seqid + 1);
	ck_assert_uint_eq(nfs4t_open(&Q, RD, 0), OK4);           /* reading is no longer denied */
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), SHARE_DENIED4);   /* writing still is */
	ck_assert_uint_eq(c4_write(&P, 0, "x"), OPENMODE4);     /* P gave up writing */
	ck_assert_uint_eq(c4_downgrade(&P, &P.open, BOTH, 0), INVAL4); /* not a subset: an upgrade */
	ck_assert_uint_eq(c4_downgrade(&P, &P.open, RD, BOTH), INVAL4);
	ck_assert_uint_eq(c4_downgrade(&P, &P.open, 0, 0), INVAL4);
	ck_assert_uint_eq(c4_downgrade(&P, &old, RD, 0), 10024); /* OLD_STATEID */
	ck_assert_uint_eq(c4_downgrade(&P, &P.open, RD, 0), OK4);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), OK4);
}
END_TEST

/* VERIFY and NVERIFY compare attributes with the file's. */
START_TEST(test_verify)
{
	uint32_t w[2] = { 1u << 11, 0 }, st;

	ck_assert_uint_eq(nfs4t_open(&P, BOTH, 0), OK4);
	ck_assert_uint_eq(c4_verify_size(&P, 37, 10), OK4);
	ck_assert_uint_eq(c4_verify_size(&P, 37, 11), NOT_SAME4);
	ck_assert_uint_eq(c4_verify_size(&P, 17, 10), SAME4);
	ck_assert_uint_eq(c4_verify_size(&P, 17, 11), OK4);
	ck_assert_uint_eq(c4_write(&P, 10, "ab"), OK4);          /* the size moves: so does the answer */
	ck_assert_uint_eq(c4_verify_size(&P, 37, 12), OK4);
	ck_assert_uint_eq(c4_verify_size(&P, 37, 10), NOT_SAME4);
	/* rdattr_error: INVAL; an attribute not supported: ATTRNOTSUPP */
	nfs4t_begin(&P, 2);
	nfs4_cl_putfh(&P.b, P.fh, P.fhlen);
	nfs4_cl_verify(&P.b, 37, w, 1, "\0\0\0\0", 4);
	nfs4t_send(&P);
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 22), 0);
	ck_assert_uint_eq(st = nfs4_cl_op(&P.cur, 37), INVAL4);
	w[0] = 0;
	w[1] = 1u << 31; /* attribute 63: not one of ours */
	nfs4t_begin(&P, 2);
	nfs4_cl_putfh(&P.b, P.fh, P.fhlen);
	nfs4_cl_verify(&P.b, 17, w, 2, "\0\0\0\0", 4);
	nfs4t_send(&P);
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 22), 0);
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 17), ATTRNOTSUPP4);
	/* as a guard: a NOT_SAME VERIFY stops the COMPOUND before the WRITE */
	{
		uint8_t v[8] = { 0, 0, 0, 0, 0, 0, 0, 99 };
		uint32_t sz = 1u << 4, n;

		nfs4t_begin(&P, 3);
		nfs4_cl_putfh(&P.b, P.fh, P.fhlen);
		nfs4_cl_verify(&P.b, 37, &sz, 1, v, 8);
		nfs4_cl_write(&P.b, &P.open, 0, "zz", 2);
		ck_assert_int_eq(nfs4_cl_send(&P.c, &P.b, &P.cur), 0);
		ck_assert_uint_eq(nfs4_cl_res(&P.cur, &n), NOT_SAME4);
		ck_assert_uint_eq(n, 3); /* SEQUENCE, PUTFH, VERIFY: no WRITE */
		ck_assert_uint_eq(c4_verify_size(&P, 37, 12), OK4);
	}
}
END_TEST

/* An OPEN UNCHECKED4 with a size of 0 (O_TRUNC) of a file another owner
 * denies writing is refused and leaves the file as it was: the cut is made
 * only once the share reservation is granted. A size of 0 under an open
 * for reading only is NFS4ERR_INVAL (the cut is a write; knfsd's answer).
 * Once the deny is gone the same OPEN cuts the file. */
START_TEST(test_trunc_after_share)
{
	ck_assert_uint_eq(nfs4t_open(&P, RD, WR), OK4); /* P reads, denies writers */
	ck_assert_uint_eq(c4_open_trunc(&Q, BOTH, 0, 0), SHARE_DENIED4);
	ck_assert_str_eq(f_data(), "0123456789");
	ck_assert_uint_eq(c4_open_trunc(&Q, WR, 0, 0), SHARE_DENIED4);
	ck_assert_str_eq(f_data(), "0123456789");
	ck_assert_uint_eq(c4_open_trunc(&Q, RD, 0, 0), INVAL4);
	ck_assert_str_eq(f_data(), "0123456789");
	ck_assert_uint_eq(nfs4t_close(&P), OK4);
	/* an SMB open that shares reading only refuses it the same way */
	smb_conn();
	ck_assert_uint_eq(smb_create(FILE_READ_DATA_, SHARE_READ_), STATUS_SUCCESS);
	ck_assert_uint_eq(c4_open_trunc(&Q, BOTH, 0, 0), SHARE_DENIED4);
	ck_assert_str_eq(f_data(), "0123456789");
	smbt_conns_free(ssrv);
	ck_assert_uint_eq(c4_open_trunc(&Q, BOTH, 0, 0), OK4);
	ck_assert_str_eq(f_data(), "");
	ck_assert_uint_eq(nfs4t_open(&P, RD, WR), SHARE_DENIED4); /* Q's open writes */
}
END_TEST

/* In a volume's grace period an SMB CREATE that denies others reading or
 * writing, and an SMB byte-range lock, are refused (FILE_LOCK_CONFLICT) as
 * a v4.1 OPEN with deny is (GRACE): either could stand in the way of state
 * still to be reclaimed. A refused CREATE reserves nothing; an open that
 * denies only DELETE is served. After grace all of it is granted. */
START_TEST(test_grace_smb)
{
	uint8_t fid[16];
	int i;

	enter_grace(8); /* long enough for the checks below on a loaded machine */
	smb_conn();
	ck_assert_uint_eq(smb_create_fid(FILE_READ_DATA_, SHARE_READ_ | SHARE_DELETE_, fid), FILE_LOCK_CONFLICT);
	ck_assert_uint_eq(smb_create_fid(FILE_READ_DATA_, SHARE_WRITE_ | SHARE_DELETE_, fid), FILE_LOCK_CONFLICT);
	ck_assert_uint_eq(smb_create_fid(FILE_READ_DATA_, 0, fid), FILE_LOCK_CONFLICT);
	ck_assert_uint_eq(nfs4t_open(&P, RD, WR), GRACE4);          /* as v4.1 already was */
	/* the refused CREATEs hold no reservation: a v4.1 writer (no deny) gets in */
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), OK4);
	ck_assert_uint_eq(nfs4t_close(&Q), OK4);
	/* sharing reading and writing (denying only DELETE): served; its lock is not */
	ck_assert_uint_eq(smb_create_fid(FILE_READ_DATA_ | FILE_WRITE_DATA_, SHARE_READ_ | SHARE_WRITE_, fid),
			  STATUS_SUCCESS);
	ck_assert_uint_eq(smb_lock(fid), FILE_LOCK_CONFLICT);
	ck_assert(in_grace()); /* all of the above ran in grace */
	for (i = 0; i < 400 && in_grace(); i++)
		usleep(50000);
	ck_assert(!in_grace());
	ck_assert_uint_eq(smb_lock(fid), STATUS_SUCCESS);
	smbt_conns_free(ssrv);
	smb_conn();
	ck_assert_uint_eq(smb_create_fid(FILE_READ_DATA_, SHARE_READ_, fid), STATUS_SUCCESS);
	ck_assert_uint_eq(nfs4t_open(&Q, WR, 0), SHARE_DENIED4);     /* the deny now holds */
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_share");
	TCase *tc = tcase_create("share");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_deny_v4);
	tcase_add_test(tc, test_deny_smb);
	tcase_add_test(tc, test_downgrade);
	tcase_add_test(tc, test_verify);
	tcase_add_test(tc, test_trunc_after_share);
	tcase_add_test(tc, test_grace_smb);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
