/* test_nfs4_wsetid: a write delegation never hides the clearing of
 * set-uid / set-gid (agent/nfs4/nfs4_deleg.c, nfs4_attr.c; issue 19,
 * test_vm_nfs41 check 33 "a truncation by another user clears set-uid").
 *
 * Why: the Linux client sends a SETATTR of the size (truncate(2),
 * ftruncate(2)) made while it holds a write delegation with the
 * delegation's stateid and the delegation's credential (fs/nfs/nfs4proc.c
 * _nfs4_do_setattr: nfs4_copy_delegation_stateid(..., &delegation_cred),
 * msg.rpc_cred = delegation_cred), and it opens the file for any other user
 * of the mount locally under the delegation (no OPEN on the wire). The user
 * who truncates is then unknown to the server: the store sees the
 * delegation's owner (root) truncate, and root keeps set-uid, while the
 * client dropped the mode change of the kernel's ATTR_KILL_SUID expecting
 * the server to clear it. So, as knfsd (nfsd4_verify_setuid_write), no write
 * delegation is given on a file with set-uid or set-gid, and the holder's
 * own SETATTR that gives the file set-uid or set-gid recalls its write
 * delegation first (NFS4ERR_DELAY until DELEGRETURN).
 *
 * The suite plays the Linux client of the VM check: the same rules for
 * which stateid and credential it sends. It also counts the syncs that
 * make a change of attributes stable before the reply: a SETATTR's, and an
 * OPEN UNCHECKED4's that cuts a file that exists (only a size of 0 does;
 * a cut that fails gives the share reservation back); and that an OPEN
 * EXCLUSIVE4_1 sets the attributes its attrset says it set.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs4/nfs4.h"
#include "tests/agent/nfs4/nfs4_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

enum { OK4 = 0, DELAY4 = 10008, RD = 1, WR = 2, BOTH = 3, DT_NONE = 0, DT_WRITE = 2, DT_NONE_EXT = 3,
       WANT_WRITE = 0x200, WANT_NO_DELEG = 0x400, AQU = 1000 };

static struct aqt_store ts;
static struct nfs_srv *nsrv;
static struct nfs4_srv *v4;
static struct smb_srv *ssrv;
static struct nfs4t_cl P;
static uint32_t cbseq;

static const struct nfs4_sid anon_sid;

/* What a SETATTR's GETATTR (change, mode) answered. */
struct post {
	uint64_t change;
	uint32_t mode;
};

static void put_sid(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, sid->seqid);
	xdr_put_fixed(b, sid->other, 12);
}

/* GETATTR of change (word 0 bit 3) and mode (word 1 bit 1) read into *p. */
static void get_post(struct xdr_cur *cur, struct post *p)
{
	uint32_t n, len;

	ck_assert_uint_eq(nfs4_cl_op(cur, 9), OK4);
	n = xdr_u32(cur);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(xdr_u32(cur), 1u << 3);
	ck_assert_uint_eq(xdr_u32(cur), 1u << 1);
	len = xdr_u32(cur);
	ck_assert_uint_eq(len, 12);
	p->change = xdr_u64(cur);
	p->mode = xdr_u32(cur);
	ck_assert_int_eq(cur->err, 0);
}

/* PUTFH, SETATTR (the size when size >= 0, else the mode) with sid as uid,
 * GETATTR of change and mode: SETATTR's status, *p when OK. */
static uint32_t setattr(uint32_t uid, const struct nfs4_sid *sid, int64_t size, uint32_t mode, struct post *p)
{
	uint32_t st;

	P.c.uid = P.c.gid = uid;
	nfs4t_begin(&P, 3);
	nfs4_cl_putfh(&P.b, P.fh, P.fhlen);
	xdr_put_u32(&P.b, 34);
	put_sid(&P.b, sid);
	xdr_put_u32(&P.b, 2);
	if (size >= 0) {
		xdr_put_u32(&P.b, 1u << 4); /* size */
		xdr_put_u32(&P.b, 0);
		xdr_put_u32(&P.b, 8);
		xdr_put_u64(&P.b, (uint64_t)size);
	} else {
		xdr_put_u32(&P.b, 0);
		xdr_put_u32(&P.b, 1u << 1); /* mode */
		xdr_put_u32(&P.b, 4);
		xdr_put_u32(&P.b, mode);
	}
	nfs4_cl_getattr(&P.b, 1u << 3, 1u << 1);
	nfs4t_send(&P);
	P.c.uid = P.c.gid = 0;
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 22), OK4);
	if ((st = nfs4_cl_op(&P.cur, 34)) != OK4)
		return st;
	for (uint32_t i = 0, n = xdr_u32(&P.cur); i < n && i < 8; i++) /* attrsset */
		(void)xdr_u32(&P.cur);
	get_post(&P.cur, p);
	return OK4;
}

/* OPEN of f by open owner owner as uid with access: its status; the
 * delegation kept in P (P.dtype, P.deleg). */
static uint32_t open_as(const char *owner, uint32_t uid, uint32_t access)
{
	uint32_t st;

	P.owner = owner;
	P.c.uid = P.c.gid = uid;
	st = nfs4t_open(&P, access, 0);
	P.c.uid = P.c.gid = 0;
	return st;
}

static mode_t disk_mode(void)
{
	char p[200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_int_eq(stat(p, &st), 0);
	return st.st_mode & 07777;
}

static void disk_chmod(mode_t m)
{
	char p[200];

	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_int_eq(chmod(p, m), 0);
}

/* test_vm_nfs41's t_suid_trunc as the Linux client sends it: root
 * `echo x >f` (an open for writing: a write delegation to root's open
 * owner), `chmod 4777 f` (SETATTR of the mode, the anonymous stateid,
 * root's credential; NFS4ERR_DELAY is retried after the client returned
 * what was recalled), then user aqu `truncate -s 1 f`: under a write
 * delegation still held, a local open and a SETATTR of the size with the
 * delegation's stateid and credential (root's); without one, aqu's OPEN
 * and SETATTR of the size with its open stateid (or its own delegation's)
 * and aqu's credential. The truncation must clear set-uid, on disk and in
 * the mode the SETATTR's GETATTR answers, with a change attribute moved. */
START_TEST(test_linux_suid_trunc)
{
	struct nfs4_sid root_deleg, aqu_sid;
	struct post chm, tr;
	uint32_t st;
	bool held = true;

	ck_assert_uint_eq(open_as("root", 0, WR), OK4);
	ck_assert_uint_eq(P.dtype, DT_WRITE);
	root_deleg = P.deleg;
	ck_assert_uint_eq(nfs4t_close(&P), OK4); /* echo is done: the delegation stays */

	st = setattr(0, &anon_sid, -1, 04777, &chm);
	if (st == DELAY4) { /* the holder's own write delegation is recalled first */
		nfs4t_expect_recall(&P, ++cbseq, true);
		ck_assert_uint_eq(nfs4t_delegreturn(&P, &root_deleg), OK4);
		held = false;
		st = setattr(0, &anon_sid, -1, 04777, &chm);
	}
	ck_assert_uint_eq(st, OK4);
	ck_assert_uint_eq(chm.mode, 04777);
	ck_assert_uint_eq(disk_mode(), 04777);

	if (held) { /* what the client does under the delegation it still holds */
		st = setattr(0, &root_deleg, 1, 0, &tr);
	} else {
		ck_assert_uint_eq(open_as("aqu", AQU, WR), OK4);
		aqu_sid = P.dtype == DT_WRITE ? P.deleg : P.open;
		st = setattr(AQU, &aqu_sid, 1, 0, &tr);
	}
	ck_assert_uint_eq(st, OK4);
	ck_assert_uint_eq(disk_mode(), 0777);
	ck_assert_uint_eq(tr.mode, 0777);
	ck_assert_uint_gt(tr.change, chm.change);
	ck_assert(!held); /* the delegation was recalled at the chmod */
}
END_TEST

/* No write delegation on a file with set-uid or with set-gid (and group
 * execute: the bit the kernel clears), whatever the want; an open for
 * reading may still get a read delegation. */
START_TEST(test_setid_file_no_wdeleg)
{
	static const mode_t modes[] = { 04777, 02777, 06666 };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		disk_chmod(modes[i]);
		ck_assert_uint_eq(open_as("root", 0, BOTH), OK4);
		ck_assert_uint_eq(P.dtype, DT_NONE);
		ck_assert_uint_eq(nfs4t_close(&P), OK4);
		ck_assert_uint_eq(open_as("root", 0, WR | WANT_WRITE), OK4);
		ck_assert_uint_eq(P.dtype, DT_NONE_EXT);
		ck_assert_uint_eq(P.why, 2); /* WND4_RESOURCE */
		ck_assert_uint_eq(nfs4t_close(&P), OK4);
		ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	}
	disk_chmod(0666); /* and the same file without: a write delegation */
	ck_assert_uint_eq(open_as("root", 0, BOTH), OK4);
	ck_assert_uint_eq(P.dtype, DT_WRITE);
}
END_TEST

/* The holder's SETATTR of a mode without set-id bits, and of the size,
 * keeps its delegation (no recall); one with set-gid recalls it. */
START_TEST(test_holder_plain_chmod_keeps)
{
	struct post p;

	ck_assert_uint_eq(open_as("root", 0, BOTH), OK4);
	ck_assert_uint_eq(P.dtype, DT_WRITE);
	ck_assert_uint_eq(setattr(0, &anon_sid, -1, 0755, &p), OK4);
	ck_assert_uint_eq(p.mode, 0755);
	ck_assert_uint_eq(setattr(0, &P.deleg, 4, 0, &p), OK4);
	nfs4t_expect_no_call(&P, 400);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
	ck_assert_uint_eq(setattr(0, &anon_sid, -1, 02775, &p), DELAY4);
	ck_assert_uint_eq(disk_mode(), 0755); /* nothing changed before the return */
	nfs4t_expect_recall(&P, ++cbseq, true);
	ck_assert_uint_eq(nfs4t_delegreturn(&P, &P.deleg), OK4);
	ck_assert_uint_eq(setattr(0, &anon_sid, -1, 02775, &p), OK4);
	ck_assert_uint_eq(p.mode, 02775);
}
END_TEST

/* A SETATTR is stable before its reply (vol_sync): each one answered OK
 * costs the store one file sync, as NFSv3's does. */
START_TEST(test_setattr_synced)
{
	struct vol_stats a, b;
	struct post p;

	ck_assert_uint_eq(open_as("root", 0, BOTH), OK4); /* the file's handle */
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &a), 0);
	ck_assert_uint_eq(setattr(0, &anon_sid, -1, 0750, &p), OK4);
	ck_assert_uint_eq(setattr(0, &P.deleg, 3, 0, &p), OK4);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &b), 0);
	ck_assert_uint_eq(b.filesyncs, a.filesyncs + 2);
	ck_assert_uint_eq(disk_mode(), 0750);
}
END_TEST

/* v0/f on disk holds "0123456789" again; its path in p (cap bytes). */
static void f_reset(char *p, size_t cap)
{
	FILE *f;

	snprintf(p, cap, "%s/f", ts.cfg[0].root);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_int_eq(fputs("0123456789", f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* OPEN UNCHECKED4 of v0/f as owner with access, deny and the size alone in
 * its createattrs: its status; on OK the attrset bitmap's first word in
 * *set0 (the others must be 0). */
static uint32_t open_trunc(const char *owner, uint32_t access, uint32_t deny, uint64_t size, uint32_t *set0)
{
	struct nfs4_sid sid;
	uint32_t st, n;

	nfs4t_begin(&P, 3);
	nfs4_cl_putrootfh(&P.b);
	nfs4_cl_lookup(&P.b, "v0");
	nfs4_cl_open_trunc(&P.b, owner, "f", access, deny, size);
	nfs4t_send(&P);
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 24), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 15), OK4);
	if ((st = nfs4_cl_op(&P.cur, 18)) != OK4)
		return st;
	nfs4_cl_get_sid(&P.cur, &sid);
	(void)xdr_fixed(&P.cur, 20); /* cinfo */
	(void)xdr_u32(&P.cur);       /* rflags */
	n = xdr_u32(&P.cur);
	*set0 = n > 0 ? xdr_u32(&P.cur) : 0;
	for (uint32_t i = 1; i < n && i < 4; i++)
		ck_assert_uint_eq(xdr_u32(&P.cur), 0);
	ck_assert_int_eq(P.cur.err, 0);
	return OK4;
}

/* An OPEN UNCHECKED4 of an existing file with a size of 0 in its
 * createattrs (O_TRUNC) cuts the file as a SETATTR would, and, as a
 * SETATTR's, the cut is stable before the reply (RFC 8881 18.16.3): one
 * file sync of the store. Its attrset lists the size (18.16.4). */
START_TEST(test_open_trunc_synced)
{
	struct vol_stats a, b;
	uint32_t set0;
	char p[200];
	struct stat st;

	f_reset(p, sizeof(p));
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &a), 0);
	ck_assert_uint_eq(open_trunc("root", BOTH, 0, 0, &set0), OK4);
	ck_assert_uint_eq(set0, 1u << 4); /* the size it set, nothing else */
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &b), 0);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_uint_eq(b.filesyncs + b.logsyncs, a.filesyncs + a.logsyncs + 1);
}
END_TEST

/* Any other size of an UNCHECKED4 OPEN of a file that exists is not used,
 * as knfsd: RFC 8881 18.16.3, "the attributes specified by createattrs are
 * not used, except that when createattrs specifies the size attribute with
 * a size of zero, the existing file is truncated". attrset is empty and
 * nothing is synced. */
START_TEST(test_open_size_existing_ignored)
{
	struct vol_stats a, b;
	uint32_t set0;
	char p[200];
	struct stat st;

	f_reset(p, sizeof(p));
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &a), 0);
	ck_assert_uint_eq(open_trunc("root", BOTH, 0, 3, &set0), OK4);
	ck_assert_uint_eq(set0, 0);
	ck_assert_uint_eq(open_trunc("root", BOTH, 0, 100, &set0), OK4);
	ck_assert_uint_eq(set0, 0);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &b), 0);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 10);
	ck_assert_uint_eq(b.filesyncs + b.logsyncs, a.filesyncs + a.logsyncs);
}
END_TEST

/* Make the file at p append-only (on) or not: one the caller may write but
 * not cut (truncate(2): EPERM). */
static void append_only(const char *p, bool on)
{
	int fd, fl = 0;

	ck_assert_int_ge(fd = open(p, O_RDONLY), 0);
	ck_assert_int_eq(ioctl(fd, FS_IOC_GETFLAGS, &fl), 0);
	fl = on ? fl | FS_APPEND_FL : fl & ~FS_APPEND_FL;
	ck_assert_int_eq(ioctl(fd, FS_IOC_SETFLAGS, &fl), 0);
	close(fd);
}

/* A cut that fails after the share reservation was granted gives the
 * reservation back: a new open is released, an open the owner held
 * before goes back to what it held. Another owner may then write. */
START_TEST(test_open_trunc_fail_unshares)
{
	uint32_t set0, st1, st2;
	char p[200];
	struct stat st;

	f_reset(p, sizeof(p));
	/* looked up before it is append-only, when it can still be marked as
	 * the volume's (vol_mark_adopt); no delegation, which the other
	 * owner's OPEN would have to wait for */
	ck_assert_uint_eq(open_trunc("reader", RD | WANT_NO_DELEG, 0, 5, &set0), OK4);
	append_only(p, true);
	st1 = open_trunc("cutter", BOTH, WR, 0, &set0); /* a new open */
	st2 = open_trunc("reader", BOTH, WR, 0, &set0); /* an upgrade of reader's */
	append_only(p, false);
	ck_assert_uint_eq(st1, 1); /* NFS4ERR_PERM */
	ck_assert_uint_eq(st2, 1);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 10);
	/* neither denies anything; reader still reads */
	P.owner = "writer";
	ck_assert_uint_eq(nfs4t_open(&P, WR, 0), OK4);
	ck_assert_uint_eq(nfs4t_open(&P, WR, RD), 10015); /* NFS4ERR_SHARE_DENIED */
}
END_TEST

/* OPEN EXCLUSIVE4_1 of name with verf, mode and size: its status; on OK
 * the attrset bitmap's first two words in set[]. */
static uint32_t open_excl41(const char *name, const uint8_t *verf, uint32_t mode, uint64_t size, uint32_t set[2])
{
	struct nfs4_sid sid;
	uint32_t st, n;

	nfs4t_begin(&P, 3);
	nfs4_cl_putrootfh(&P.b);
	nfs4_cl_lookup(&P.b, "v0");
	nfs4_cl_open_sized(&P.b, "root", name, verf, size, true, mode);
	nfs4t_send(&P);
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 24), OK4);
	ck_assert_uint_eq(nfs4_cl_op(&P.cur, 15), OK4);
	if ((st = nfs4_cl_op(&P.cur, 18)) != OK4)
		return st;
	nfs4_cl_get_sid(&P.cur, &sid);
	(void)xdr_fixed(&P.cur, 20); /* cinfo */
	(void)xdr_u32(&P.cur);       /* rflags */
	n = xdr_u32(&P.cur);
	set[0] = n > 0 ? xdr_u32(&P.cur) : 0;
	set[1] = n > 1 ? xdr_u32(&P.cur) : 0;
	ck_assert_int_eq(P.cur.err, 0);
	return OK4;
}

/* An OPEN EXCLUSIVE4_1 that makes the file gives it the mode and the size
 * of its createattrs (suppattr_exclcreat) and says so in attrset: the
 * Linux client then sends no SETATTR of the mode. A retry with the same
 * verifier finds the file its own (the size set before the verifier went
 * into the times); another verifier is NFS4ERR_EXIST. */
START_TEST(test_open_excl41_attrs)
{
	static const uint8_t v1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, v2[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	uint32_t set[2];
	char p[200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/x", ts.cfg[0].root);
	ck_assert_uint_eq(open_excl41("x", v1, 0640, 5, set), OK4);
	ck_assert_uint_eq(set[0], 1u << 4);
	ck_assert_uint_eq(set[1], 1u << 1);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(st.st_size, 5);
	ck_assert_uint_eq(open_excl41("x", v1, 0640, 5, set), OK4);
	ck_assert_uint_eq(open_excl41("x", v2, 0640, 5, set), 17); /* NFS4ERR_EXIST */
}
END_TEST

/* ---------- fixture ---------- */

static void setup(void)
{
	nfs4t_srv_up(&(struct nfs4t_spec){ .fsid = 431, .key_byte = 9, .threads = 4, .lease_s = 3 }, &ts, &nsrv, &v4,
		     &ssrv);
	nfs4t_cl_up(&P, nfs_srv_port(nsrv), "client-p", 2); /* CREATE_SESSION4_FLAG_CONN_BACK_CHAN */
	cbseq = 0;
}

static void teardown(void)
{
	nfs4_cl_close(&P.c);
	nfs4t_srv_down(&ts, nsrv, v4, ssrv);
}

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_wsetid");
	TCase *tc = tcase_create("wsetid");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_linux_suid_trunc);
	tcase_add_test(tc, test_setid_file_no_wdeleg);
	tcase_add_test(tc, test_holder_plain_chmod_keeps);
	tcase_add_test(tc, test_setattr_synced);
	tcase_add_test(tc, test_open_trunc_synced);
	tcase_add_test(tc, test_open_size_existing_ignored);
	tcase_add_test(tc, test_open_trunc_fail_unshares);
	tcase_add_test(tc, test_open_excl41_attrs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (geteuid() != 0)
		return 77; /* the store switches fsuid to the callers' */
	return aqt_run(suite());
}
