/* test_nfs4_grace: lock holders recorded on the shelf per volume and the
 * grace period a volume enters on the node that takes it over
 * (agent/vol/vol_grace.h, with NLM in agent/nfs/nlm.c and NFSv4.1 in
 * agent/nfs4/): two in-process "nodes" (a store, an NFS server with NFSv4.1
 * and NLM each) over one shelf folder with the same location key, as two
 * agents of a location share a shelf. An NLM host and an NFSv4.1 client lock
 * on node 1 (recorded in <shelf>/.aquifer-locks/a/holders before the
 * grant); the volume moves to node 2 (node 1 detaches it, node 2 attaches
 * it, as a drain or a failover does); node 2 sends SM_NOTIFY to the
 * recorded NLM host and refuses new locks from anyone else (NLM
 * DENIED_GRACE_PERIOD, NFS4ERR_GRACE; CLAIM_PREVIOUS of an unrecorded client
 * NFS4ERR_NO_GRACE; an OPEN with share deny NFS4ERR_GRACE) while the holders reclaim (NLM reclaim, OPEN
 * CLAIM_PREVIOUS + LOCK reclaim, RECLAIM_COMPLETE); after the grace period
 * the reclaimed locks hold, new ones are granted, and a holder that did not
 * come back is dropped from the records. Also: grace ends early
 * when only NFSv4.1 clients were recorded and all sent RECLAIM_COMPLETE; a
 * host that released everything (FREE_ALL) is not waited for; records that
 * cannot be written refuse the lock; the records file's parser. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/nfs/nfs_srv.h"
#include "agent/nfs/nlm.h"
#include "agent/nfs4/nfs4.h"
#include "agent/vol/vol_grace.h"
#include "api/api_intent.h"
#include "tests/agent/nfs/nlm_peer.h"
#include "tests/agent/nfs4/nfs4_cl.h"
#include "tests/lib/aqt.h"
#include "util/ut_hex.h"

enum { OK4 = 0, DENIED4 = 10010, GRACE4 = 10013, NO_GRACE4 = 10033, SERVERFAULT4 = 10006 };

struct node {
	struct vol_store *store;
	struct nfs_srv *srv;
	struct nfs4_srv *v4;
	struct nlm_srv *nlm;
	struct nfs4_cl rpc;        /* raw NLM calls */
	int port;
};

static char dir[256], holders[400];
static struct node n1, n2;
static struct vol_export_cfg cfg;
static struct vol_fh fa;      /* the NFSv3 handle of a/f (NLM) */

static void node_up(struct node *n, unsigned grace_s, bool attach)
{
	struct nlm_cfg nc = { .pmap_port = (uint16_t)fake.port, .cb_timeout_ms = 500, .my_name = "aquifer-test" };
	uint8_t key[VOL_KEY_LEN];

	memset(key, 0x11, sizeof(key)); /* the location's key: every node's */
	ck_assert_int_eq(vol_store_new(key, &n->store), 0);
	vol_store_set_grace(n->store, grace_s);
	if (attach)
		ck_assert_int_eq(vol_store_set(n->store, &cfg, 1), 0);
	ck_assert_int_eq(nfs_srv_new("127.0.0.1:0", n->store, 2, &n->srv), 0);
	ck_assert_int_eq(nfs4_srv_new(&(struct nfs4_cfg){ 0 }, &n->v4), 0);
	ck_assert_int_eq(nfs_srv_add_prog(n->srv, &nfs4_prog, n->v4), 0);
	ck_assert_int_eq(nlm_srv_new(&nc, n->store, &n->nlm), 0);
	ck_assert_int_eq(nfs_srv_add_prog(n->srv, &nlm_prog, n->nlm), 0);
	ck_assert_int_eq(nfs_srv_add_prog(n->srv, &nsm_prog, n->nlm), 0);
	ck_assert_int_eq(nfs_srv_start(n->srv), 0);
	n->port = nfs_srv_port(n->srv);
	ck_assert_int_eq(nfs4_cl_dial(&n->rpc, n->port), 0);
}

static void node_down(struct node *n)
{
	if (!n->store)
		return;
	nfs4_cl_close(&n->rpc);
	nfs_srv_free(n->srv);
	nfs4_srv_free(n->v4);
	nlm_srv_free(n->nlm);
	vol_store_free(n->store);
	memset(n, 0, sizeof(*n));
}

/* The volume moves from node 1 to node 2 (a drain; a failover is the same
 * on node 2, node 1 being gone). */
static void move_volume(void)
{
	ck_assert_int_eq(vol_store_set(n1.store, NULL, 0), 0);
	ck_assert_int_eq(vol_store_set(n2.store, &cfg, 1), 0);
}

static bool in_grace(struct node *n)
{
	struct vol_export *e = vol_export_by_path(n->store, "/a", 2);
	bool in = e && vol_grace_active(e);

	vol_export_unref(e);
	return in;
}

static void setup_with(unsigned grace1, unsigned grace2)
{
	char d[300];
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/test_nfs4_grace.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	chmod(dir, 0755);
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.id, sizeof(cfg.id), "a");
	snprintf(cfg.path, sizeof(cfg.path), "/a");
	snprintf(cfg.root, sizeof(cfg.root), "%s/volumes/a", dir);
	snprintf(d, sizeof(d), "%s/volumes", dir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
	ck_assert_int_eq(mkdir(cfg.root, 0777), 0);
	snprintf(d, sizeof(d), "%s/.aquifer-locks", dir);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	snprintf(cfg.lockdir, sizeof(cfg.lockdir), "%s/.aquifer-locks/a", dir);
	snprintf(holders, sizeof(holders), "%s/%s", cfg.lockdir, VOL_GRACE_FILE);
	cfg.fsid = 0x1061;
	cfg.capacity = 1ull << 30;
	cfg.protocols = API_INTENT_NFSV3 | API_INTENT_NFSV4;
	cfg.nrules = 1;
	snprintf(cfg.rules[0].clients, sizeof(cfg.rules[0].clients), "0.0.0.0/0");
	cfg.rules[0].access = VOL_ACCESS_RW;
	cfg.rules[0].anon_uid = cfg.rules[0].anon_gid = 65534;
	snprintf(d, sizeof(d), "%s/f", cfg.root);
	ck_assert_int_ge(fd = open(d, O_CREAT | O_WRONLY, 0666), 0);
	close(fd);
	fake_start();
	node_up(&n1, grace1, true);
	node_up(&n2, grace2, false);
	{
		struct vol_export *e = vol_export_by_path(n1.store, "/a", 2);
		struct vol_obj root = { .fd = -1 }, obj = { .fd = -1 };
		struct vol_cred cred = { 0 };

		ck_assert_int_eq(vol_root(e, &root), 0);
		ck_assert_int_eq(vol_lookup(&root, &cred, "f", 1, &obj), 0);
		ck_assert_int_eq(vol_fh_make(n1.store, &obj, &fa), 0);
		vol_obj_cleanup(&obj);
		vol_obj_cleanup(&root);
		vol_export_unref(e);
	}
}

static void setup(void)
{
	setup_with(3, 3);
}

static void setup_long(void)
{
	setup_with(30, 30);
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
	node_down(&n1);
	node_down(&n2);
	fake_stop();
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---------- NLM raw calls ---------- */

struct own {
	const char *host;
	uint32_t svid;
	const char *oh;
};

static const struct own A = { "host-a", 101, "101@host-a" };
static const struct own B = { "host-b", 201, "201@host-b" };
static const struct own C = { "host-c", 301, "301@host-c" };

static void begin(struct nfs4_cl *c, struct ut_buf *b, uint32_t proc)
{
	ut_buf_init(b, 1u << 16);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, ++c->xid);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, NLM_PROG);
	xdr_put_u32(b, 4);
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

static void put_lock(struct ut_buf *b, const struct own *o, uint64_t off, uint64_t len)
{
	put_str(b, o->host);
	xdr_put_opaque(b, fa.data, fa.len);
	put_str(b, o->oh);
	xdr_put_u32(b, o->svid);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
}

static uint32_t nlm_run(struct nfs4_cl *c, struct ut_buf *b)
{
	struct xdr_cur cur;
	const uint8_t *ck;
	uint32_t l;

	if (nfs4_cl_send(c, b, &cur) != 0)
		return 0xdead;
	ck = xdr_opaque(&cur, 1024, &l);
	ck_assert(ck && l == 2 && !memcmp(ck, "ck", 2));
	return xdr_u32(&cur);
}

static uint32_t nlm_lock(struct node *n, const struct own *o, uint64_t off, uint64_t len, bool reclaim)
{
	struct ut_buf b;

	begin(&n->rpc, &b, NLM4_LOCK);
	put_str(&b, "ck");
	xdr_put_u32(&b, 0); /* block */
	xdr_put_u32(&b, 1); /* exclusive */
	put_lock(&b, o, off, len);
	xdr_put_u32(&b, reclaim);
	xdr_put_u32(&b, 3);
	return nlm_run(&n->rpc, &b);
}

static uint32_t nlm_test(struct node *n, const struct own *o, uint64_t off, uint64_t len)
{
	struct ut_buf b;

	begin(&n->rpc, &b, NLM4_TEST);
	put_str(&b, "ck");
	xdr_put_u32(&b, 1);
	put_lock(&b, o, off, len);
	return nlm_run(&n->rpc, &b);
}

static void nlm_free_all(struct node *n, const char *host)
{
	struct ut_buf b;
	struct xdr_cur cur;

	begin(&n->rpc, &b, NLM4_FREE_ALL);
	put_str(&b, host);
	xdr_put_u32(&b, 1);
	ck_assert_int_eq(nfs4_cl_send(&n->rpc, &b, &cur), 0);
}

/* ---------- an NFSv4.1 client ---------- */

struct cl4 {
	struct nfs4_cl c;
	uint32_t seq;
	struct nfs4_sid open, lock;
	uint8_t fh[128];
	uint32_t fhlen;
	struct ut_buf b;
	struct xdr_cur cur;
};

static struct cl4 X, Y;

static void c4_up(struct cl4 *x, struct node *n, const char *owner)
{
	uint32_t got;

	nfs4_cl_close(&x->c);
	memset(&x->c, 0, sizeof(x->c));
	ck_assert_int_eq(nfs4_cl_dial(&x->c, n->port), 0);
	x->seq = 1;
	ck_assert_uint_eq(nfs4_cl_session(&x->c, owner, 4, &got), 0);
}

/* SEQUENCE and nops more operations follow. */
static void c4_begin(struct cl4 *x, uint32_t nops)
{
	nfs4_cl_begin(&x->c, &x->b, 1, nops + 1);
	nfs4_cl_sequence(&x->b, &x->c, 0, x->seq++, false);
}

static void c4_send(struct cl4 *x)
{
	uint32_t n;

	ck_assert_int_eq(nfs4_cl_send(&x->c, &x->b, &x->cur), 0);
	(void)nfs4_cl_res(&x->cur, &n);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 53), 0);
	nfs4_cl_sequence_res(&x->cur);
}

/* OPEN a/f for reading and writing: by name (CLAIM_NULL), or the handle
 * known from before with CLAIM_PREVIOUS (a reclaim). */
static uint32_t c4_open(struct cl4 *x, bool previous)
{
	uint32_t st;

	if (previous) {
		c4_begin(x, 2);
		nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
		nfs4_cl_open_previous(&x->b, "open-owner", 3);
		c4_send(x);
		ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
		if ((st = nfs4_cl_op(&x->cur, 18)) == OK4)
			nfs4_cl_open_res(&x->cur, &x->open);
		return st;
	}
	c4_begin(x, 4);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "a");
	nfs4_cl_open_nocreate(&x->b, "open-owner", "f", 3);
	nfs4_cl_getfh(&x->b);
	c4_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 24), 0);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 15), 0);
	if ((st = nfs4_cl_op(&x->cur, 18)) == OK4) {
		const uint8_t *p;

		nfs4_cl_open_res(&x->cur, &x->open);
		ck_assert_uint_eq(nfs4_cl_op(&x->cur, 10), 0);
		ck_assert_ptr_nonnull(p = xdr_opaque(&x->cur, 128, &x->fhlen));
		memcpy(x->fh, p, x->fhlen);
	}
	return st;
}

/* OPEN a/f for reading, denying writers (a share reservation): the status. */
static uint32_t c4_open_deny(struct cl4 *x)
{
	c4_begin(x, 3);
	nfs4_cl_putrootfh(&x->b);
	nfs4_cl_lookup(&x->b, "a");
	nfs4_cl_open_deny(&x->b, "open-owner", "f", 1, 2); /* an upgrade of its open */
	c4_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 24), 0);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 15), 0);
	return nfs4_cl_op(&x->cur, 18);
}

/* A write lock as a new lock owner under the open. */
static uint32_t c4_lock(struct cl4 *x, bool reclaim, uint64_t off, uint64_t len)
{
	uint32_t st;

	c4_begin(x, 2);
	nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
	nfs4_cl_lock_ex(&x->b, &x->c, 2, reclaim, off, len, &x->open, "lock-owner");
	c4_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
	if ((st = nfs4_cl_op(&x->cur, 12)) == OK4)
		nfs4_cl_get_sid(&x->cur, &x->lock);
	return st;
}

static uint32_t c4_lockt(struct cl4 *x, uint64_t off, uint64_t len)
{
	c4_begin(x, 2);
	nfs4_cl_putfh(&x->b, x->fh, x->fhlen);
	nfs4_cl_lockt(&x->b, &x->c, 2, off, len, "probe");
	c4_send(x);
	ck_assert_uint_eq(nfs4_cl_op(&x->cur, 22), 0);
	return nfs4_cl_op(&x->cur, 13);
}

static uint32_t c4_reclaim_complete(struct cl4 *x)
{
	c4_begin(x, 1);
	nfs4_cl_reclaim_complete(&x->b);
	c4_send(x);
	return nfs4_cl_op(&x->cur, 58);
}

static void c4_down(struct cl4 *x)
{
	nfs4_cl_close(&x->c);
	memset(x, 0, sizeof(*x));
	x->c.fd = -1;
}

static bool recorded(const char *proto, const char *name)
{
	char hex[300], line[400];

	ut_hex_encode(name, strlen(name), hex, sizeof(hex));
	snprintf(line, sizeof(line), "%s %s %s", proto, !strcmp(proto, "nlm") ? "127.0.0.1" : "-", hex);
	return file_has(holders, line);
}

static void wait_grace_over(struct node *n)
{
	for (int i = 0; i < 200 && in_grace(n); i++)
		usleep(50000);
	ck_assert(!in_grace(n));
}

/* ---------- tests ---------- */

/* An NLM host and a v4.1 client lock on node 1; the volume moves; node 2
 * keeps it in grace for them, they reclaim, then everyone locks again. */
START_TEST(test_failover_reclaim)
{
	X.c.fd = Y.c.fd = -1;
	ck_assert(!in_grace(&n1)); /* nothing recorded yet: no grace on node 1 */
	ck_assert_uint_eq(nlm_lock(&n1, &A, 0, 10, false), GRANTED);
	ck_assert(recorded("nlm", "host-a"));
	ck_assert_uint_eq(nlm_lock(&n1, &B, 30, 10, false), GRANTED); /* B never comes back */
	c4_up(&X, &n1, "client-x");
	ck_assert_uint_eq(c4_open(&X, false), OK4);
	ck_assert(recorded("nfs4", "client-x"));
	ck_assert_uint_eq(c4_lock(&X, false, 100, 10), OK4);

	move_volume();
	ck_assert(in_grace(&n2));
	/* node 2 tells the recorded NLM host to reclaim */
	ck_assert(wait_for(&fake.notified, 2, 5000)); /* A and B */
	ck_assert_str_eq(fake.notify_name, "aquifer-test");

	/* meanwhile nobody else gets a lock */
	ck_assert_uint_eq(nlm_lock(&n2, &C, 0, 10, false), GRACE);
	ck_assert_uint_eq(nlm_lock(&n2, &C, 50, 10, false), GRACE); /* not even a free range */
	ck_assert_uint_eq(nlm_test(&n2, &C, 0, 10), GRACE);
	c4_up(&Y, &n2, "client-y");
	ck_assert_uint_eq(c4_open(&Y, false), OK4); /* an open without share deny conflicts with no reclaim */
	ck_assert_uint_eq(c4_open_deny(&Y), GRACE4);  /* one with a deny could */
	ck_assert_uint_eq(c4_lock(&Y, false, 200, 10), GRACE4);
	ck_assert_uint_eq(c4_lockt(&Y, 200, 10), GRACE4);
	ck_assert_uint_eq(c4_open(&Y, true), NO_GRACE4); /* Y held nothing before: no reclaim */
	ck_assert_uint_eq(c4_lock(&Y, true, 200, 10), NO_GRACE4);

	/* the holders reclaim */
	ck_assert_uint_eq(nlm_lock(&n2, &A, 0, 10, true), GRANTED);
	c4_up(&X, &n2, "client-x"); /* its session died with node 1: a new one, the same owner */
	ck_assert_uint_eq(c4_open(&X, true), OK4);
	ck_assert_uint_eq(c4_lock(&X, true, 100, 10), OK4);
	ck_assert_uint_eq(c4_reclaim_complete(&X), OK4);
	ck_assert_uint_eq(c4_open(&X, true), NO_GRACE4); /* done reclaiming */
	ck_assert(in_grace(&n2)); /* the NLM host says no "complete": the whole period runs */
	ck_assert_uint_eq(nlm_lock(&n2, &C, 50, 10, false), GRACE);

	wait_grace_over(&n2);
	ck_assert_uint_eq(nlm_lock(&n2, &C, 0, 10, false), DENIED);  /* A's reclaimed lock */
	ck_assert_uint_eq(nlm_lock(&n2, &C, 100, 10, false), DENIED); /* X's reclaimed lock */
	ck_assert_uint_eq(nlm_lock(&n2, &C, 50, 10, false), GRANTED);
	ck_assert_uint_eq(c4_lock(&Y, false, 100, 10), DENIED4);
	ck_assert_uint_eq(c4_lock(&Y, false, 200, 10), OK4);
	ck_assert_uint_eq(c4_open_deny(&Y), 10015); /* after grace: X writes, so SHARE_DENIED */
	ck_assert(recorded("nlm", "host-a") && recorded("nfs4", "client-x"));
	ck_assert(recorded("nlm", "host-c") && recorded("nfs4", "client-y"));
	ck_assert(!recorded("nlm", "host-b")); /* did not reclaim: dropped when grace ended */
	ck_assert_uint_eq(nlm_lock(&n2, &C, 30, 10, false), GRANTED); /* and its lock is no more */
	c4_down(&X);
	c4_down(&Y);
}
END_TEST

/* Only v4.1 clients were recorded: grace ends once they all sent
 * RECLAIM_COMPLETE, long before its time; a holder that never comes back
 * is dropped from the records when grace ends. */
START_TEST(test_early_end)
{
	X.c.fd = Y.c.fd = -1;
	c4_up(&X, &n1, "client-x");
	ck_assert_uint_eq(c4_open(&X, false), OK4);
	ck_assert_uint_eq(c4_lock(&X, false, 0, 10), OK4);
	move_volume();
	ck_assert(in_grace(&n2));
	c4_up(&Y, &n2, "client-y");
	ck_assert_uint_eq(c4_open(&Y, false), OK4);
	ck_assert_uint_eq(c4_lock(&Y, false, 20, 10), GRACE4);
	c4_up(&X, &n2, "client-x");
	ck_assert_uint_eq(c4_open(&X, true), OK4);
	ck_assert_uint_eq(c4_lock(&X, true, 0, 10), OK4);
	ck_assert(in_grace(&n2));
	ck_assert_uint_eq(c4_reclaim_complete(&X), OK4);
	ck_assert(!in_grace(&n2)); /* 30 s grace, over at once */
	ck_assert_uint_eq(c4_lock(&Y, false, 20, 10), OK4);
	ck_assert_uint_eq(c4_lockt(&Y, 0, 10), DENIED4);
	c4_down(&X);
	c4_down(&Y);
}
END_TEST

/* A host that released everything (FREE_ALL) leaves the records: moving the
 * volume then waits for no one. */
START_TEST(test_released_not_waited)
{
	ck_assert_uint_eq(nlm_lock(&n1, &A, 0, 10, false), GRANTED);
	ck_assert(recorded("nlm", "host-a"));
	nlm_free_all(&n1, "host-a");
	ck_assert(!recorded("nlm", "host-a"));
	move_volume();
	ck_assert(!in_grace(&n2));
	ck_assert_uint_eq(nlm_lock(&n2, &C, 0, 10, false), GRANTED);
}
END_TEST

/* A holder that cannot be put on the shelf gets nothing: the records are
 * written before the grant. */
START_TEST(test_unrecorded_not_granted)
{
	int fd;

	X.c.fd = -1;
	/* the volume's records folder is a file: nothing can be written there */
	ck_assert_int_ge(fd = open(cfg.lockdir, O_CREAT | O_WRONLY, 0600), 0);
	close(fd);
	ck_assert_uint_eq(nlm_lock(&n1, &A, 0, 10, false), NOLOCKS);
	c4_up(&X, &n1, "client-x");
	ck_assert_uint_eq(c4_open(&X, false), SERVERFAULT4);
	ck_assert_uint_eq(vol_lock_count(vol_store_locks(n1.store), NULL), 0);
	/* once it can be written, the same requests are granted */
	ck_assert_int_eq(unlink(cfg.lockdir), 0);
	ck_assert_uint_eq(nlm_lock(&n1, &A, 0, 10, false), GRANTED);
	ck_assert_uint_eq(c4_open(&X, false), OK4);
	ck_assert(recorded("nlm", "host-a") && recorded("nfs4", "client-x"));
	c4_down(&X);
}
END_TEST

/* The records file: lines that do not parse are skipped, a valid one puts
 * the volume in grace when it is attached. */
START_TEST(test_records_file)
{
	uint8_t name[VOL_GRACE_NAME_MAX];
	struct sockaddr_storage ss;
	unsigned proto;
	size_t len;
	char *longline;
	FILE *f;

	ck_assert_int_eq(vol_grace_parse_line("nlm 10.0.0.5 686f7374\n", &proto, name, &len, &ss), 0);
	ck_assert_uint_eq(proto, VOL_GRACE_NLM);
	ck_assert_uint_eq(len, 4);
	ck_assert(!memcmp(name, "host", 4));
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_int_eq(vol_grace_parse_line("nfs4 - 78\n", &proto, name, &len, &ss), 0);
	ck_assert_uint_eq(proto, VOL_GRACE_NFS4);
	ck_assert_int_eq(ss.ss_family, AF_UNSPEC);
	ck_assert_int_eq(vol_grace_parse_line("smb - 78\n", &proto, name, &len, &ss), -EINVAL);
	ck_assert_int_eq(vol_grace_parse_line("nlm 10.0.0.5 7\n", &proto, name, &len, &ss), -EINVAL);
	ck_assert_int_eq(vol_grace_parse_line("nlm 10.0.0.5 zz\n", &proto, name, &len, &ss), -EINVAL);
	ck_assert_int_eq(vol_grace_parse_line("nlm nowhere 78\n", &proto, name, &len, &ss), -EINVAL);
	ck_assert_int_eq(vol_grace_parse_line("nlm 10.0.0.5\n", &proto, name, &len, &ss), -EINVAL);
	ck_assert_int_eq(vol_grace_parse_line("", &proto, name, &len, &ss), -EINVAL);

	/* only junk (and an overlong line): no holder, no grace */
	ck_assert_int_eq(vol_store_set(n1.store, NULL, 0), 0);
	ck_assert_int_eq(mkdir(cfg.lockdir, 0700), 0);
	ck_assert_ptr_nonnull(longline = malloc(8192));
	memset(longline, 'a', 8191);
	longline[8191] = 0;
	ck_assert_ptr_nonnull(f = fopen(holders, "w"));
	fprintf(f, "aquifer-lock-holders 1\nnfs4 - zz\n%s\nnfs4 - 7878\n", longline);
	fclose(f);
	free(longline);
	/* "nfs4 - 7878" follows the long line: it alone is a holder */
	ck_assert_int_eq(vol_store_set(n2.store, &cfg, 1), 0);
	ck_assert(in_grace(&n2));
	ck_assert_int_eq(vol_store_set(n2.store, NULL, 0), 0);
	ck_assert_ptr_nonnull(f = fopen(holders, "w"));
	fprintf(f, "aquifer-lock-holders 1\nnfs4 - zz\nnlm 1.2.3.4\n");
	fclose(f);
	ck_assert_int_eq(vol_store_set(n2.store, &cfg, 1), 0);
	ck_assert(!in_grace(&n2));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nfs4_grace");
	TCase *tc = tcase_create("failover");
	TCase *tl = tcase_create("long");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_failover_reclaim);
	tcase_add_test(tc, test_released_not_waited);
	tcase_add_test(tc, test_unrecorded_not_granted);
	tcase_add_test(tc, test_records_file);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tl, setup_long, teardown);
	tcase_set_timeout(tl, 60);
	tcase_add_test(tl, test_early_end);
	suite_add_tcase(s, tl);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
