/* test_nlm: NLM v4 and NSM (agent/nfs/nlm*.c, nsm.c) on a live in-process
 * server (nfs_srv with NFSv4.1 and NLM over one volume store), driven with
 * raw RPC calls built here: PORTMAP answering for NLM and NSM; TEST, LOCK,
 * UNLOCK, CANCEL with the holder and every nlm4_stat they give (DENIED,
 * FBIG, STALE_FH for a forged handle and for a detached volume's, FAILED for
 * an export rule that refuses the caller, ROFS, DENIED_NOLOCKS at the
 * table's cap and at the cap of blocked locks); a blocking LOCK granted
 * through the client's NLM4_GRANTED (a fake client: portmapper and lock
 * manager in a thread), claimed by a poll when the client cannot be reached,
 * taken back when the client refuses it; FREE_ALL and SM_NOTIFY releasing a
 * host; an NFSv4.1 lock blocking NLM and the reverse; an SMB-flavour lock in
 * the table blocking NLM and the reverse; SHARE/UNSHARE; locks going with a
 * detached volume; and, with a state directory, the host records, the grace
 * period after a restart (reclaims only) and SM_NOTIFY to the recorded
 * hosts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs/nlm.h"
#include "agent/nfs4/nfs4.h"
#include "api/api_intent.h"
#include "tests/agent/nfs/nlm_peer.h"
#include "tests/agent/nfs4/nfs4_cl.h"
#include "tests/lib/aqt.h"
#include "util/ut_hex.h"


static char dir[256];
static struct vol_store *store;
static struct nfs_srv *srv;
static struct nfs4_srv *v4;
static struct nlm_srv *nlm;
static struct nfs4_cl cl;
static struct vol_export_cfg cfg[4];
static struct vol_fh fa, fa2, fb, fro, fdeny;

/* ---------- the server ---------- */

static void export(struct vol_export_cfg *c, const char *name, bool ro, const char *clients)
{
	char d[512];

	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", name);
	snprintf(c->path, sizeof(c->path), "/%s", name);
	snprintf(d, sizeof(d), "%s/%s", dir, name);
	ck_assert_int_eq(mkdir(d, 0777), 0);
	snprintf(c->root, sizeof(c->root), "%s", d);
	c->fsid = 0x1000 + (uint64_t)name[0];
	c->capacity = 1ull << 30;
	c->protocols = API_INTENT_NFSV3 | API_INTENT_NFSV4;
	c->nrules = 1;
	snprintf(c->rules[0].clients, sizeof(c->rules[0].clients), "%s", clients);
	c->rules[0].access = ro ? VOL_ACCESS_RO : VOL_ACCESS_RW;
	c->rules[0].anon_uid = c->rules[0].anon_gid = 65534;
}

static void fh_of(const char *exp, const char *name, struct vol_fh *fh)
{
	struct vol_export *e = vol_export_by_path(store, exp, strlen(exp));
	struct vol_obj root = { .fd = -1 }, obj = { .fd = -1 };
	struct vol_cred cred = { 0 };
	char p[600];
	int fd;

	ck_assert_ptr_nonnull(e);
	snprintf(p, sizeof(p), "%s/%s", vol_export_config(e)->root, name);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_WRONLY, 0666), 0);
	close(fd);
	ck_assert_int_eq(vol_root(e, &root), 0);
	ck_assert_int_eq(vol_lookup(&root, &cred, name, strlen(name), &obj), 0);
	ck_assert_int_eq(vol_fh_make(store, &obj, fh), 0);
	vol_obj_cleanup(&obj);
	vol_obj_cleanup(&root);
	vol_export_unref(e);
}

static void key_of(const struct vol_fh *fh, struct vol_lock_key *k)
{
	struct vol_obj obj = { .fd = -1 };

	ck_assert_int_eq(vol_fh_open(store, fh->data, fh->len, &obj), 0);
	vol_lock_key_of(&obj, k);
	vol_obj_cleanup(&obj);
}

static void serve(const char *state_dir, unsigned grace_s)
{
	struct nlm_cfg nc = { .state_dir = state_dir, .grace_s = grace_s, .pmap_port = (uint16_t)fake.port,
			      .cb_timeout_ms = 500, .my_name = "aquifer-test" };

	ck_assert_int_eq(nfs_srv_new("127.0.0.1:0", store, 2, &srv), 0);
	ck_assert_int_eq(nfs4_srv_new(&(struct nfs4_cfg){ 0 }, &v4), 0);
	ck_assert_int_eq(nfs_srv_add_prog(srv, &nfs4_prog, v4), 0);
	ck_assert_int_eq(nlm_srv_new(&nc, store, &nlm), 0);
	ck_assert_int_eq(nfs_srv_add_prog(srv, &nlm_prog, nlm), 0);
	ck_assert_int_eq(nfs_srv_add_prog(srv, &nsm_prog, nlm), 0);
	ck_assert_int_eq(nfs_srv_start(srv), 0);
	ck_assert_int_eq(nfs4_cl_dial(&cl, nfs_srv_port(srv)), 0);
}

static void unserve(void)
{
	nfs4_cl_close(&cl);
	nfs_srv_free(srv);
	nfs4_srv_free(v4);
	nlm_srv_free(nlm);
	srv = NULL;
	v4 = NULL;
	nlm = NULL;
}

static void setup(void)
{
	uint8_t key[VOL_KEY_LEN];

	snprintf(dir, sizeof(dir), "/tmp/test_nlm.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	chmod(dir, 0755);
	export(&cfg[0], "a", false, "0.0.0.0/0");
	export(&cfg[1], "b", false, "0.0.0.0/0");
	export(&cfg[2], "ro", true, "0.0.0.0/0");
	export(&cfg[3], "deny", false, "10.0.0.0/8");
	memset(key, 0x11, sizeof(key));
	ck_assert_int_eq(vol_store_new(key, &store), 0);
	ck_assert_int_eq(vol_store_set(store, cfg, 4), 0);
	fh_of("/a", "f", &fa);
	fh_of("/a", "g", &fa2);
	fh_of("/b", "f", &fb);
	fh_of("/ro", "f", &fro);
	fh_of("/deny", "f", &fdeny);
	fake_start();
	serve(NULL, 0);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void teardown(void)
{
	unserve();
	fake_stop();
	vol_store_free(store);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---------- raw calls ---------- */

struct own {
	const char *host;
	uint32_t svid;
	const char *oh;
};

static const struct own A = { "host-a", 101, "101@host-a" };
static const struct own A2 = { "host-a", 102, "102@host-a" };
static const struct own B = { "host-b", 201, "201@host-b" };
static const struct own C = { "host-c", 301, "301@host-c" };

static void begin(struct ut_buf *b, uint32_t prog, uint32_t vers, uint32_t proc)
{
	ut_buf_init(b, 1u << 16);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, ++cl.xid);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, prog);
	xdr_put_u32(b, vers);
	xdr_put_u32(b, proc);
	xdr_put_u32(b, 1); /* AUTH_SYS root */
	xdr_put_u32(b, 24);
	xdr_put_u32(b, 0);
	xdr_put_opaque(b, "test", 4);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
}

static void put_str(struct ut_buf *b, const char *s)
{
	xdr_put_opaque(b, s, (uint32_t)strlen(s));
}

static void put_lock(struct ut_buf *b, const struct own *o, const struct vol_fh *fh, uint64_t off, uint64_t len)
{
	put_str(b, o->host);
	xdr_put_opaque(b, fh->data, fh->len);
	put_str(b, o->oh);
	xdr_put_u32(b, o->svid);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
}

struct holder {
	bool excl;
	uint32_t svid;
	char oh[32];
	uint64_t off, len;
};

/* Send; the nlm4_stat after the echoed cookie "ck" (0xdead: RPC failure). */
static uint32_t run(struct ut_buf *b, struct xdr_cur *cur)
{
	uint32_t l;
	const uint8_t *ck;

	if (nfs4_cl_send(&cl, b, cur) != 0)
		return 0xdead;
	ck = xdr_opaque(cur, 1024, &l);
	ck_assert(ck && l == 2 && !memcmp(ck, "ck", 2));
	return xdr_u32(cur);
}

static uint32_t t_test(const struct own *o, const struct vol_fh *fh, bool excl, uint64_t off, uint64_t len,
		       struct holder *h)
{
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t st, l;

	begin(&b, NLM_PROG, 4, NLM4_TEST);
	put_str(&b, "ck");
	xdr_put_u32(&b, excl);
	put_lock(&b, o, fh, off, len);
	if ((st = run(&b, &cur)) == DENIED && h) {
		const uint8_t *p;

		memset(h, 0, sizeof(*h));
		h->excl = xdr_u32(&cur);
		h->svid = xdr_u32(&cur);
		if ((p = xdr_opaque(&cur, sizeof(h->oh) - 1, &l)))
			memcpy(h->oh, p, l);
		h->off = xdr_u64(&cur);
		h->len = xdr_u64(&cur);
		ck_assert(!cur.err);
	}
	return st;
}

static uint32_t t_lock_proc(uint32_t proc, const struct own *o, const struct vol_fh *fh, bool excl, uint64_t off,
			    uint64_t len, bool block, bool reclaim)
{
	struct ut_buf b;
	struct xdr_cur cur;

	begin(&b, NLM_PROG, 4, proc);
	put_str(&b, "ck");
	xdr_put_u32(&b, block);
	xdr_put_u32(&b, excl);
	put_lock(&b, o, fh, off, len);
	xdr_put_u32(&b, reclaim);
	xdr_put_u32(&b, 3);
	return run(&b, &cur);
}

static uint32_t t_lock(const struct own *o, const struct vol_fh *fh, bool excl, uint64_t off, uint64_t len,
		       bool block)
{
	return t_lock_proc(NLM4_LOCK, o, fh, excl, off, len, block, false);
}

static uint32_t t_unlock(const struct own *o, const struct vol_fh *fh, uint64_t off, uint64_t len)
{
	struct ut_buf b;
	struct xdr_cur cur;

	begin(&b, NLM_PROG, 4, NLM4_UNLOCK);
	put_str(&b, "ck");
	put_lock(&b, o, fh, off, len);
	return run(&b, &cur);
}

static uint32_t t_cancel(const struct own *o, const struct vol_fh *fh, bool excl, uint64_t off, uint64_t len)
{
	struct ut_buf b;
	struct xdr_cur cur;

	begin(&b, NLM_PROG, 4, NLM4_CANCEL);
	put_str(&b, "ck");
	xdr_put_u32(&b, 1);
	xdr_put_u32(&b, excl);
	put_lock(&b, o, fh, off, len);
	return run(&b, &cur);
}

static uint32_t t_share(uint32_t proc, const struct own *o, const struct vol_fh *fh, uint32_t mode, uint32_t access)
{
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t st;

	begin(&b, NLM_PROG, 4, proc);
	put_str(&b, "ck");
	put_str(&b, o->host);
	xdr_put_opaque(&b, fh->data, fh->len);
	put_str(&b, o->oh);
	xdr_put_u32(&b, mode);
	xdr_put_u32(&b, access);
	xdr_put_u32(&b, 0);
	st = run(&b, &cur);
	(void)xdr_u32(&cur); /* sequence */
	ck_assert(!cur.err);
	return st;
}

/* A void-result call (FREE_ALL, NOTIFY): the RPC accept status. */
static int t_void(uint32_t prog, uint32_t vers, uint32_t proc, const char *name, uint32_t state)
{
	struct ut_buf b;
	struct xdr_cur cur;

	begin(&b, prog, vers, proc);
	put_str(&b, name);
	xdr_put_u32(&b, state);
	return nfs4_cl_send(&cl, &b, &cur);
}

/* ---------- tests ---------- */

START_TEST(test_portmap)
{
	static const uint32_t progs[][3] = { { NLM_PROG, 4, 1 }, { NSM_PROG, 1, 1 }, { NLM_PROG, 3, 0 },
					     { 100003, 3, 1 }, { 100003, 4, 1 }, { 100099, 1, 0 } };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct ut_buf b;
		struct xdr_cur cur;

		begin(&b, 100000, 2, 3);
		xdr_put_u32(&b, progs[i][0]);
		xdr_put_u32(&b, progs[i][1]);
		xdr_put_u32(&b, 6);
		xdr_put_u32(&b, 0);
		ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 0);
		ck_assert_uint_eq(xdr_u32(&cur), progs[i][2] ? nfs_srv_port(srv) : 0);
	}
	/* NULL of both programs; NLM version 3 is PROG_MISMATCH, an async _MSG procedure PROC_UNAVAIL */
	{
		struct ut_buf b;
		struct xdr_cur cur;

		begin(&b, NLM_PROG, 4, 0);
		ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 0);
		begin(&b, NSM_PROG, 1, 0);
		ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 0);
		begin(&b, NLM_PROG, 3, 0);
		ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 2);
		begin(&b, NLM_PROG, 4, 7);
		ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 3);
	}
}
END_TEST

START_TEST(test_test_lock_unlock)
{
	struct holder h;

	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 100, false), GRANTED);
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 100, false), GRANTED); /* again: POSIX, same owner */
	ck_assert_uint_eq(t_test(&B, &fa, false, 50, 10, &h), DENIED);
	ck_assert(h.excl && h.svid == A.svid && h.off == 0 && h.len == 100 && h.oh[0] == '\0');
	ck_assert_uint_eq(t_test(&A, &fa, true, 50, 10, NULL), GRANTED); /* its own lock */
	/* another owner of the same host conflicts as another host does */
	ck_assert_uint_eq(t_lock(&A2, &fa, false, 99, 1, false), DENIED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 100, 50, false), GRANTED); /* touching, not overlapping */
	ck_assert_uint_eq(t_lock(&B, &fa, true, 10, 1, false), DENIED);
	ck_assert_uint_eq(t_lock(&B, &fa2, true, 10, 1, false), GRANTED);  /* another file */
	ck_assert_uint_eq(t_lock(&B, &fb, true, 10, 1, false), GRANTED);   /* another volume */
	/* unlock part: the rest stays (POSIX split) */
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 50), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 10, 1, false), GRANTED);
	ck_assert_uint_eq(t_lock(&C, &fa, false, 60, 1, false), DENIED);
	ck_assert_uint_eq(t_unlock(&C, &fa, 0, 0), GRANTED); /* nothing held: fine */
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 0), GRANTED); /* len 0: to the end */
	ck_assert_uint_eq(t_lock(&C, &fa, false, 60, 1, false), GRANTED);
	/* shared locks share */
	ck_assert_uint_eq(t_lock(&A, &fa, false, 60, 5, false), GRANTED);
	ck_assert_uint_eq(t_test(&B, &fa, true, 62, 1, &h), DENIED);
	ck_assert(!h.excl);
	/* len 0 covers every offset */
	ck_assert_uint_eq(t_lock(&A, &fa2, true, 1000, 0, false), GRANTED);
	ck_assert_uint_eq(t_test(&C, &fa2, false, 1ull << 62, 1, &h), DENIED);
	ck_assert(h.off == 1000 && h.len == 0 && h.svid == A.svid);
	/* past 2^64: FBIG; the last byte is fine */
	ck_assert_uint_eq(t_lock(&C, &fa2, true, UINT64_MAX - 5, 10, false), FBIG);
	ck_assert_uint_eq(t_test(&C, &fa2, true, UINT64_MAX - 5, 10, NULL), FBIG);
	ck_assert_uint_eq(t_lock(&C, &fa, true, UINT64_MAX - 1, 2, false), GRANTED);
	/* NM_LOCK: the same lock, never blocking */
	ck_assert_uint_eq(t_lock_proc(NLM4_NM_LOCK, &B, &fa2, true, 1000, 1, true, false), DENIED);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
	ck_assert_uint_eq(t_lock_proc(NLM4_NM_LOCK, &B, &fa2, true, 0, 1, true, false), GRANTED);
}
END_TEST

/* The file: forged, detached, refused by the rules, read-only; bad bytes. */
START_TEST(test_file_checks)
{
	struct vol_fh forged = fa;
	struct ut_buf b;
	struct xdr_cur cur;

	forged.data[forged.len - 1] ^= 1;
	ck_assert_uint_eq(t_lock(&A, &forged, true, 0, 1, false), STALE);
	ck_assert_uint_eq(t_test(&A, &forged, true, 0, 1, NULL), STALE);
	ck_assert_uint_eq(t_unlock(&A, &forged, 0, 1), STALE);
	ck_assert_uint_eq(t_lock(&A, &fdeny, true, 0, 1, false), FAILED);
	ck_assert_uint_eq(t_lock(&A, &fro, true, 0, 1, false), ROFS);
	ck_assert_uint_eq(t_lock(&A, &fro, false, 0, 1, false), GRANTED);
	ck_assert_uint_eq(t_share(NLM4_SHARE, &A, &fro, 0, 2), ROFS);
	/* a handle longer than NFSv3's 64 bytes, a cookie past 1024, a cut call: GARBAGE_ARGS */
	begin(&b, NLM_PROG, 4, NLM4_TEST);
	put_str(&b, "ck");
	xdr_put_u32(&b, 1);
	put_str(&b, "h");
	xdr_put_u32(&b, 65);
	xdr_put_fixed(&b, (uint8_t[68]){ 0 }, 68);
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 4);
	begin(&b, NLM_PROG, 4, NLM4_LOCK);
	xdr_put_u32(&b, 1025);
	xdr_put_fixed(&b, (uint8_t[1028]){ 0 }, 1028);
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 4);
	begin(&b, NLM_PROG, 4, NLM4_UNLOCK);
	put_str(&b, "ck");
	put_str(&b, "h");
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 4);
	ck_assert_uint_eq(vol_lock_count(vol_store_locks(store), NULL), 1); /* only fro's shared lock */
	/* the volume goes: its locks go, its handles are STALE */
	ck_assert_uint_eq(t_lock(&A, &fb, true, 0, 1, false), GRANTED);
	ck_assert_uint_eq(vol_lock_count(vol_store_locks(store), NULL), 2);
	ck_assert_int_eq(vol_store_set(store, cfg, 1), 0);
	ck_assert_uint_eq(vol_lock_count(vol_store_locks(store), NULL), 0);
	ck_assert_uint_eq(t_lock(&A, &fb, true, 0, 1, false), STALE);
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 1, false), GRANTED);
}
END_TEST

/* B blocks behind A; A's unlock grants B through its NLM4_GRANTED. */
START_TEST(test_blocking_granted)
{
	struct holder h;

	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 5, 10, true), BLOCKED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 5, 10, true), BLOCKED); /* a poll: still blocked, one wait */
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 1);
	usleep(300000);
	ck_assert_int_eq(fake.granted, 0);
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 10), GRANTED);
	ck_assert(wait_for(&fake.granted, 1, 5000));
	ck_assert_uint_eq(fake.g_svid, B.svid);
	ck_assert(fake.g_off == 5 && fake.g_len == 10);
	for (int i = 0; i < 100 && nlm_srv_blocks(nlm); i++)
		usleep(20000);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
	ck_assert_uint_eq(t_test(&C, &fa, false, 0, 0, &h), DENIED);
	ck_assert(h.svid == B.svid && h.off == 5 && h.len == 10 && h.excl);
}
END_TEST

/* The client cannot be reached: the granted lock waits for its poll. */
START_TEST(test_blocking_unreachable)
{
	fake.reachable = false;
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fa, false, 0, 10, true), BLOCKED);
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 10), GRANTED);
	for (int i = 0; i < 200 && t_test(&C, &fa, true, 0, 1, NULL) != DENIED; i++)
		usleep(25000); /* the callback thread takes it for B */
	ck_assert_int_eq(fake.granted, 0);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 1);           /* granted, unclaimed */
	ck_assert_uint_eq(t_lock(&C, &fa, true, 0, 1, false), DENIED); /* held for B */
	ck_assert_uint_eq(t_lock(&B, &fa, false, 0, 10, true), GRANTED); /* B's poll claims it */
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
	ck_assert_uint_eq(t_lock(&C, &fa, false, 0, 1, false), GRANTED);
}
END_TEST

/* The client answers DENIED (it gave up): the lock is taken back. */
START_TEST(test_blocking_refused)
{
	fake.answer = DENIED;
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 0, 10, true), BLOCKED);
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 10), GRANTED);
	ck_assert(wait_for(&fake.granted, 1, 5000));
	for (int i = 0; i < 100 && nlm_srv_blocks(nlm); i++)
		usleep(20000);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
	ck_assert_uint_eq(t_test(&C, &fa, true, 0, 0, NULL), GRANTED);
}
END_TEST

START_TEST(test_cancel)
{
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 0, 10, true), BLOCKED);
	ck_assert_uint_eq(t_cancel(&B, &fa, false, 0, 10), DENIED); /* not that wait: shared */
	ck_assert_uint_eq(t_cancel(&B, &fa, true, 0, 10), GRANTED);
	ck_assert_uint_eq(t_cancel(&B, &fa, true, 0, 10), DENIED);  /* gone */
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 10), GRANTED);
	usleep(1200000);
	ck_assert_int_eq(fake.granted, 0);
	ck_assert_uint_eq(t_test(&C, &fa, true, 0, 0, NULL), GRANTED);
	/* an UNLOCK of the waiting owner ends its wait too */
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 0, 10, true), BLOCKED);
	ck_assert_uint_eq(t_unlock(&B, &fa, 0, 10), GRANTED);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
}
END_TEST

/* Our connection, from another loopback address (127.0.0.2). */
static void redial_from(const char *src)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(nfs_srv_port(srv)) };
	struct sockaddr_in me = { .sin_family = AF_INET };
	uint32_t xid = cl.xid;

	nfs4_cl_close(&cl);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	inet_pton(AF_INET, src, &me.sin_addr);
	cl.fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(cl.fd, (struct sockaddr *)&me, sizeof(me)), 0);
	ck_assert_int_eq(connect(cl.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cl.xid = xid;
}

/* FREE_ALL and SM_NOTIFY release a host's locks, shares and waits; not when
 * they come from another address than the host's own. */
START_TEST(test_free_all_notify)
{
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&A2, &fa2, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fb, true, 0, 10, false), GRANTED);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 0, 10, true), BLOCKED);
	ck_assert_uint_eq(t_share(NLM4_SHARE, &A, &fb, 0, 3), GRANTED);
	redial_from("127.0.0.2");
	ck_assert_int_eq(t_void(NLM_PROG, 4, NLM4_FREE_ALL, "host-a", 7), 0);
	ck_assert_int_eq(t_void(NSM_PROG, 1, NSM_NOTIFY, "host-a", 7), 0);
	ck_assert_uint_eq(t_test(&C, &fa2, true, 0, 0, NULL), DENIED); /* still A's */
	redial_from("127.0.0.1");
	ck_assert_int_eq(t_void(NLM_PROG, 4, NLM4_FREE_ALL, "host-a", 7), 0);
	ck_assert_uint_eq(t_test(&C, &fa2, true, 0, 0, NULL), GRANTED);
	ck_assert_uint_eq(t_share(NLM4_SHARE, &C, &fb, 3, 3), GRANTED); /* A's share is gone */
	ck_assert(wait_for(&fake.granted, 1, 5000));             /* B got fa */
	ck_assert_uint_eq(t_test(&C, &fb, true, 0, 0, NULL), DENIED); /* B's own lock stays */
	ck_assert_int_eq(t_void(NSM_PROG, 1, NSM_NOTIFY, "host-b", 9), 0);
	ck_assert_uint_eq(t_test(&C, &fb, true, 0, 0, NULL), GRANTED);
	ck_assert_uint_eq(t_test(&C, &fa, true, 0, 0, NULL), GRANTED);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
}
END_TEST

START_TEST(test_nfs4_both_ways)
{
	struct v4 l;
	struct holder h;
	struct nfs4_cl_denied d;

	v4_open(&l, nfs_srv_port(srv));
	ck_assert_uint_eq(v4_lock(&l, false, true, 0, 10, NULL), 0);
	ck_assert_uint_eq(t_lock(&A, &fa, false, 5, 1, false), DENIED);
	ck_assert_uint_eq(t_test(&A, &fa, false, 5, 1, &h), DENIED);
	ck_assert(h.excl && h.svid == 0 && !strcmp(h.oh, "nfs4") && h.off == 0 && h.len == 10);
	/* a blocked NLM lock is granted when the v4 client unlocks */
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 0, true), BLOCKED);
	ck_assert_uint_eq(v4_lock(&l, true, false, 0, 10, NULL), 0);
	ck_assert(wait_for(&fake.granted, 1, 5000));
	ck_assert_uint_eq(fake.g_svid, A.svid);
	/* and the reverse: the NLM lock denies the v4 lock, naming "nlm" */
	ck_assert_uint_eq(v4_lock(&l, false, false, 100, 1, &d), 10010);
	ck_assert(!strcmp(d.owner, "nlm") && d.off == 0 && d.len == UINT64_MAX);
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 0), GRANTED);
	ck_assert_uint_eq(v4_lock(&l, false, false, 100, 1, NULL), 0);
	ut_buf_cleanup(&l.b);
	nfs4_cl_close(&l.c);
}
END_TEST

/* An SMB (Windows-flavour) lock in the table and NLM, both ways. */
START_TEST(test_smb_both_ways)
{
	struct vol_lock_tab *t = vol_store_locks(store);
	struct vol_lock_owner smb = { .proto = VOL_LOCK_SMB, .client = 9, .id = 1 };
	struct vol_lock_key k;
	struct holder h;

	key_of(&fa, &k);
	ck_assert_int_eq(vol_lock_lock(t, &k, &smb, 0, 10, VOL_LOCK_F_EXCL, NULL), 0);
	ck_assert_uint_eq(t_lock(&A, &fa, false, 9, 1, false), DENIED);
	ck_assert_uint_eq(t_test(&A, &fa, false, 9, 1, &h), DENIED);
	ck_assert(h.excl && !strcmp(h.oh, "smb"));
	ck_assert_uint_eq(t_lock(&A, &fa, false, 9, 1, true), BLOCKED);
	vol_lock_release_client(t, VOL_LOCK_SMB, 9); /* the SMB connection goes */
	ck_assert(wait_for(&fake.granted, 1, 5000));
	ck_assert_int_eq(vol_lock_lock(t, &k, &smb, 9, 1, VOL_LOCK_F_EXCL, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &k, &smb, 9, 1, 0, NULL), 0); /* shared with shared */
	ck_assert_uint_eq(t_unlock(&A, &fa, 0, 0), GRANTED);
	ck_assert_int_eq(vol_lock_lock(t, &k, &smb, 0, 100, VOL_LOCK_F_EXCL, NULL), -EAGAIN); /* its own shared one */
	vol_lock_release(t, &smb);
	ck_assert_int_eq(vol_lock_lock(t, &k, &smb, 0, 100, VOL_LOCK_F_EXCL, NULL), 0);
}
END_TEST

/* The table's cap and the cap of blocked locks: DENIED_NOLOCKS, nothing changes. */
START_TEST(test_caps)
{
	struct vol_lock_tab *t = vol_store_locks(store);
	struct vol_lock_owner smb = { .proto = VOL_LOCK_SMB, .client = 9, .id = 1 };
	struct vol_lock_key k;
	unsigned i;

	key_of(&fa, &k);
	ck_assert_uint_eq(t_lock(&A, &fa2, true, 0, 1, false), GRANTED);
	/* fill volume a's share of the table with other files' locks */
	for (i = 0; vol_lock_count(t, &k) < VOL_LOCK_VOL_MAX; i++) {
		struct vol_lock_key o = { .fsid = k.fsid, .dev = k.dev, .ino = 1u << 30 | i };

		ck_assert_int_eq(vol_lock_lock(t, &o, &smb, 0, 1, VOL_LOCK_F_EXCL, NULL), 0);
	}
	ck_assert_uint_eq(t_lock(&B, &fa, true, 0, 1, false), NOLOCKS);
	ck_assert_uint_eq(t_test(&B, &fa, true, 0, 1, NULL), GRANTED);
	ck_assert_uint_eq(vol_lock_count(t, &k), VOL_LOCK_VOL_MAX);
	ck_assert_uint_eq(t_lock(&B, &fb, true, 0, 1, false), GRANTED); /* another volume has room */
	vol_lock_release_client(t, VOL_LOCK_SMB, 9);
	ck_assert_uint_eq(t_lock(&B, &fa, true, 0, 1, false), GRANTED);
	/* blocked locks: NLM_BLOCKS_MAX wait, the next is refused */
	for (i = 0; i < NLM_BLOCKS_MAX; i++) {
		struct own o = { "host-w", 1000 + i, "w" };

		ck_assert_uint_eq(t_lock(&o, &fa2, true, 0, 1, true), BLOCKED);
	}
	ck_assert_uint_eq(t_lock(&C, &fa2, true, 0, 1, true), NOLOCKS);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), NLM_BLOCKS_MAX);
	ck_assert_int_eq(t_void(NLM_PROG, 4, NLM4_FREE_ALL, "host-w", 1), 0);
	ck_assert_uint_eq(nlm_srv_blocks(nlm), 0);
	ck_assert_uint_eq(t_lock(&C, &fa2, true, 0, 1, true), BLOCKED);
}
END_TEST

START_TEST(test_share)
{
	/* mode: deny bits (1 read, 2 write); access: 1 read, 2 write */
	ck_assert_uint_eq(t_share(NLM4_SHARE, &A, &fa, 2, 3), GRANTED);  /* RW, deny W */
	ck_assert_uint_eq(t_share(NLM4_SHARE, &B, &fa, 0, 2), DENIED);   /* W against deny W */
	ck_assert_uint_eq(t_share(NLM4_SHARE, &B, &fa, 1, 1), DENIED);   /* deny R against A's R */
	ck_assert_uint_eq(t_share(NLM4_SHARE, &B, &fa, 0, 1), GRANTED);  /* R, deny none */
	ck_assert_uint_eq(t_share(NLM4_SHARE, &C, &fa, 0, 4), FAILED);   /* no such access */
	ck_assert_uint_eq(t_share(NLM4_UNSHARE, &A, &fa, 2, 3), GRANTED);
	ck_assert_uint_eq(t_share(NLM4_SHARE, &C, &fa, 0, 2), GRANTED);  /* A's deny went */
}
END_TEST

/* With a state directory: hosts recorded; a restart with hosts recorded runs
 * a grace period (reclaims only) and notifies them. */
START_TEST(test_grace_notify)
{
	char sd[300], path[400], hex[64];

	snprintf(sd, sizeof(sd), "%s/state", dir);
	ck_assert_int_eq(mkdir(sd, 0700), 0);
	snprintf(path, sizeof(path), "%s/nlm-hosts", sd);
	unserve();
	serve(sd, 6);
	ck_assert(!nlm_srv_in_grace(nlm)); /* nothing recorded: no grace */
	ck_assert_uint_eq(t_lock(&A, &fa, true, 0, 10, false), GRANTED);
	ut_hex_encode("host-a", 6, hex, sizeof(hex));
	ck_assert(file_has(path, hex));
	ck_assert(file_has(path, "127.0.0.1"));
	ck_assert_uint_eq(t_lock(&B, &fb, true, 0, 10, false), GRANTED);
	ck_assert_int_eq(t_void(NLM_PROG, 4, NLM4_FREE_ALL, "host-b", 1), 0);
	ut_hex_encode("host-b", 6, hex, sizeof(hex));
	ck_assert(!file_has(path, hex));
	/* restart: A's lock is gone with the process, A is told to reclaim */
	unserve();
	ck_assert_uint_eq(vol_lock_count(vol_store_locks(store), NULL), 0);
	serve(sd, 6);
	ck_assert(nlm_srv_in_grace(nlm));
	ck_assert(wait_for(&fake.notified, 1, 5000));
	ck_assert_str_eq(fake.notify_name, "aquifer-test");
	ck_assert_uint_eq(fake.notify_state % 2, 1);
	ck_assert_uint_gt(fake.notify_state, 1);
	ck_assert_uint_eq(t_lock(&C, &fa, true, 0, 10, false), GRACE);
	ck_assert_uint_eq(t_test(&C, &fa, true, 0, 10, NULL), GRACE);
	ck_assert_uint_eq(t_lock_proc(NLM4_LOCK, &A, &fa, true, 0, 10, false, true), GRANTED); /* reclaim */
	ck_assert_uint_eq(t_share(NLM4_SHARE, &C, &fb, 0, 1), GRACE);
	for (int i = 0; i < 200 && nlm_srv_in_grace(nlm); i++)
		usleep(50000);
	ck_assert(!nlm_srv_in_grace(nlm));
	ck_assert_uint_eq(t_lock(&C, &fa, true, 0, 10, false), DENIED); /* A reclaimed it */
	ck_assert_uint_eq(t_lock(&C, &fa, true, 10, 10, false), GRANTED);
}
END_TEST

/* NSM: STAT, MON/UNMON from loopback, SIMU_CRASH moves the state by 2. */
START_TEST(test_nsm)
{
	struct ut_buf b;
	struct xdr_cur cur;
	uint32_t st0;

	begin(&b, NSM_PROG, 1, NSM_STAT);
	put_str(&b, "host-a");
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 0);
	ck_assert_uint_eq(xdr_u32(&cur), 0);
	st0 = xdr_u32(&cur);
	ck_assert_uint_eq(st0 % 2, 1);
	begin(&b, NSM_PROG, 1, NSM_MON);
	put_str(&b, "host-a");
	put_str(&b, "me");
	xdr_put_u32(&b, NLM_PROG);
	xdr_put_u32(&b, 4);
	xdr_put_u32(&b, 16);
	xdr_put_fixed(&b, (uint8_t[16]){ 1 }, 16);
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 0);
	ck_assert_uint_eq(xdr_u32(&cur), 0); /* STAT_SUCC */
	begin(&b, NSM_PROG, 1, NSM_SIMU_CRASH);
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 0);
	begin(&b, NSM_PROG, 1, NSM_UNMON_ALL);
	put_str(&b, "me");
	xdr_put_u32(&b, NLM_PROG);
	xdr_put_u32(&b, 4);
	xdr_put_u32(&b, 16);
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 0);
	ck_assert_uint_eq(xdr_u32(&cur), st0 + 2);
	/* a MON with its priv cut short: GARBAGE_ARGS */
	begin(&b, NSM_PROG, 1, NSM_MON);
	put_str(&b, "host-a");
	put_str(&b, "me");
	xdr_put_u32(&b, NLM_PROG);
	ck_assert_int_eq(nfs4_cl_send(&cl, &b, &cur), 4);
}
END_TEST

static Suite *nlm_suite(void)
{
	Suite *s = suite_create("nlm");
	TCase *tc = tcase_create("nlm");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_portmap);
	tcase_add_test(tc, test_test_lock_unlock);
	tcase_add_test(tc, test_file_checks);
	tcase_add_test(tc, test_blocking_granted);
	tcase_add_test(tc, test_blocking_unreachable);
	tcase_add_test(tc, test_blocking_refused);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_free_all_notify);
	tcase_add_test(tc, test_nfs4_both_ways);
	tcase_add_test(tc, test_smb_both_ways);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_share);
	tcase_add_test(tc, test_grace_notify);
	tcase_add_test(tc, test_nsm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(nlm_suite());
}
