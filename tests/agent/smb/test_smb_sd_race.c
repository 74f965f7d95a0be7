/* test_smb_sd_race: two writers race SET_INFO SECURITY on one file of an
 * NTFS-style volume (agent/vol/vol_sd.c, checked by agent/smb/smb_acl.c).
 * The SMB server serves every connection from its one loop thread, so
 * two clients' SET_INFOs reach the store one after the other; the store's
 * callers on other threads (a backup or a snapshot reading the blob, a
 * second protocol) do not. So the race is played on the store: two
 * threads, each with its own open of the file (as two SMB opens), set
 * their own descriptor ROUNDS x SETS times while a third reads it back:
 * - every read, during and after, is exactly one of the two blobs (byte
 *   for byte, never a mix of both nor a short one) and decodes;
 * - after each round the stored descriptor decides the access as its
 *   own DACL says: A lets alice read and write and keeps bob out, B
 *   denies alice READ_DATA and lets bob read.
 * Through the dispatcher too (one thread, as the server): alice's and
 * bob's connections to an NTFS share, each with the file open for
 * WRITE_DAC, set their own DACL in a shuffled order; after each SET the
 * other connection's QUERY_INFO reads back exactly the last one set, and a
 * new CREATE for READ_DATA is granted to whom that DACL lets read only.
 * Needs root (trusted.* extended attributes want CAP_SYS_ADMIN). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/smb/smb_acl.h"
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ROUNDS 10
#define SETS 300

static struct aqt_store ts;
static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
static struct smb_acl_token alice, bob;
static uint8_t blob[2][1024];
static size_t blob_len[2];

struct racer {
	struct vol_obj o;
	int which;       /* the writer's blob; -1: the reader */
	int *stop;       /* the reader's end: set by the test (atomic) */
	unsigned reads, bad, fails;
};

static void ace(struct smb_sd *sd, uint8_t type, uint32_t mask, const char *sid)
{
	struct smb_sd_ace *a = &sd->dacl.ace[sd->dacl.count++];

	memset(a, 0, sizeof(*a));
	a->type = type;
	a->mask = mask;
	ck_assert_int_eq(smb_sd_sid_from_str(sid, &a->sid), 0);
}

/* Descriptor i (0: A, 1: B) encoded into blob[i]; of different lengths,
 * so a torn one shows in the length too. */
static void make_blob(int i)
{
	static struct smb_sd sd; /* large: off the stack */
	struct ut_buf b;

	memset(&sd, 0, sizeof(sd));
	sd.control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	sd.has_owner = sd.has_group = sd.has_dacl = true;
	smb_sd_sid_unix_user(1000, &sd.owner);
	smb_sd_sid_unix_group(1000, &sd.group);
	sd.dacl.revision = 2;
	if (i == 0) {
		ace(&sd, SMB_SD_ACCESS_ALLOWED, SMB_FILE_ALL_ACCESS, "S-1-22-1-1000");
	} else {
		ace(&sd, SMB_SD_ACCESS_DENIED, SMB_FILE_READ_DATA, "S-1-22-1-1000");
		ace(&sd, SMB_SD_ACCESS_ALLOWED, SMB_FILE_GENERIC_READ, "S-1-22-1-2000");
		ace(&sd, SMB_SD_ACCESS_ALLOWED, SMB_FILE_READ_ATTRIBUTES, "S-1-1-0");
	}
	ut_buf_init(&b, sizeof(blob[i]));
	ck_assert_int_eq(smb_sd_encode(&b, &sd, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL), AQ_OK);
	ck_assert_uint_le(ut_buf_len(&b), sizeof(blob[i]));
	blob_len[i] = ut_buf_len(&b);
	memcpy(blob[i], ut_buf_bytes(&b), blob_len[i]);
	ut_buf_cleanup(&b);
}

/* Which blob buf[0..n) is: 0, 1, or -1 (neither). */
static int which_blob(const uint8_t *buf, size_t n)
{
	for (int i = 0; i < 2; i++)
		if (n == blob_len[i] && memcmp(buf, blob[i], n) == 0)
			return i;
	return -1;
}

static void setup(void)
{
	static const uint32_t none = 0;

	aqt_store_init(&ts, 1,
		       &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 321, .capacity = 1ull << 30,
						 .clients = "127.0.0.0/8", .anon = 65534, .key_byte = 5 });
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
	smb_acl_token_init(&alice, 1000, 1000, &none, 0);
	smb_acl_token_init(&bob, 2000, 2000, &none, 0);
	make_blob(0);
	make_blob(1);
	ck_assert_uint_ne(blob_len[0], blob_len[1]);
}

static void teardown(void)
{
	aqt_store_cleanup(&ts);
}

/* An open of the file f of the export's root into *o. */
static void open_f(struct vol_obj *o)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[0].path, strlen(ts.cfg[0].path));
	struct vol_obj r;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &r), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_lookup(&r, &root, "f", 1, o), 0);
	vol_obj_cleanup(&r);
}

static void *writer(void *arg)
{
	struct racer *w = arg;

	for (int k = 0; k < SETS; k++)
		if (vol_sd_set(&w->o, blob[w->which], blob_len[w->which], NULL) != 0)
			w->fails++;
	return NULL;
}

static void *reader(void *arg)
{
	struct racer *rd = arg;
	uint8_t buf[2048];
	size_t n;

	while (!__atomic_load_n(rd->stop, __ATOMIC_ACQUIRE)) {
		if (vol_sd_get(&rd->o, buf, sizeof(buf), &n) != 0)
			rd->fails++;
		else if (which_blob(buf, n) < 0)
			rd->bad++;
		rd->reads++;
	}
	return NULL;
}

START_TEST(test_race_set)
{
	static struct smb_sd sd;
	struct racer w[2], rd;
	pthread_t tw[2], tr;
	char p[300];
	int fd, stop = 0, seen[2] = { 0, 0 };
	uint8_t buf[2048];
	size_t n;

	snprintf(p, sizeof(p), "%s/f", ts.cfg[0].root);
	ck_assert_int_ge(fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0600), 0);
	ck_assert_int_eq(close(fd), 0);
	memset(w, 0, sizeof(w));
	memset(&rd, 0, sizeof(rd));
	for (int i = 0; i < 2; i++) {
		open_f(&w[i].o);
		w[i].which = i;
	}
	open_f(&rd.o);
	rd.which = -1;
	rd.stop = &stop;
	ck_assert_int_eq(vol_sd_set(&w[0].o, blob[0], blob_len[0], NULL), 0); /* none yet is no blob */
	ck_assert_int_eq(pthread_create(&tr, NULL, reader, &rd), 0);
	for (int round = 0; round < ROUNDS; round++) {
		uint32_t g;
		int got;

		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(pthread_create(&tw[i], NULL, writer, &w[i]), 0);
		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(pthread_join(tw[i], NULL), 0);
		ck_assert_int_eq(vol_sd_get(&rd.o, buf, sizeof(buf), &n), 0);
		ck_assert_int_ge(got = which_blob(buf, n), 0);
		seen[got]++;
		ck_assert_int_eq(smb_sd_decode(buf, n, &sd), AQ_OK);
		/* the access follows the descriptor that won */
		ck_assert(smb_acl_check(&sd, &alice, SMB_FILE_READ_DATA, 0, &g) == (got == 0));
		ck_assert(smb_acl_check(&sd, &alice, SMB_FILE_WRITE_DATA, 0, &g) == (got == 0));
		ck_assert(smb_acl_check(&sd, &bob, SMB_FILE_READ_DATA, 0, &g) == (got == 1));
		ck_assert(!smb_acl_check(&sd, &bob, SMB_FILE_WRITE_DATA, 0, &g));
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(tr, NULL), 0);
	fprintf(stderr, "test_race_set: %d rounds of 2 x %d sets: A won %d, B won %d; %u reads, %u torn, %u failed\n",
		ROUNDS, SETS, seen[0], seen[1], rd.reads, rd.bad, rd.fails);
	ck_assert_uint_eq(w[0].fails + w[1].fails, 0);
	ck_assert_uint_eq(rd.fails, 0);
	ck_assert_uint_eq(rd.bad, 0);
	ck_assert_uint_gt(rd.reads, 0);
	/* a set after the race: exactly that one, the other gone */
	ck_assert_int_eq(vol_sd_set(&w[1].o, blob[1], blob_len[1], NULL), 0);
	ck_assert_int_eq(vol_sd_get(&w[0].o, buf, sizeof(buf), &n), 0);
	ck_assert_int_eq(which_blob(buf, n), 1);
	for (int i = 0; i < 2; i++)
		vol_obj_cleanup(&w[i].o);
	vol_obj_cleanup(&rd.o);
}
END_TEST

/* --- through the dispatcher ---------------------------------------------- */

#define SHUFFLED 200

static struct smb_srv *srv;
static struct vol_export *exp0;

static void setup_share(void)
{
	static const uint32_t none = 0;

	smbt_export_up(&ts, &srv, &exp0);
	ck_assert_int_eq(chmod(ts.cfg[0].root, 0777), 0);
	smb_acl_token_init(&alice, 1000, 1000, &none, 0);
	smb_acl_token_init(&bob, 2000, 2000, &none, 0);
}

static void teardown_share(void)
{
	smbl_export_down(&ts, srv, exp0);
}

/* A DACL that lets `full` do all and `other` only read and change the
 * descriptor (so both connections may set it), owner alice, encoded into
 * blob[i]. */
static void make_share_blob(int i, const char *full, const char *other)
{
	static struct smb_sd sd;
	struct ut_buf b;

	memset(&sd, 0, sizeof(sd));
	sd.control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	sd.has_owner = sd.has_group = sd.has_dacl = true;
	smb_sd_sid_unix_user(1000, &sd.owner);
	smb_sd_sid_unix_group(1000, &sd.group);
	sd.dacl.revision = 2;
	ace(&sd, SMB_SD_ACCESS_ALLOWED, SMB_FILE_ALL_ACCESS, full);
	ace(&sd, SMB_SD_ACCESS_ALLOWED, SMB_FILE_READ_ATTRIBUTES | 0x20000u | 0x40000u, other);
	ut_buf_init(&b, sizeof(blob[i]));
	ck_assert_int_eq(smb_sd_encode(&b, &sd, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL), AQ_OK);
	blob_len[i] = ut_buf_len(&b);
	memcpy(blob[i], ut_buf_bytes(&b), blob_len[i]);
	ut_buf_cleanup(&b);
}

/* SET_INFO SECURITY (DACL) of blob i on fid: its status. */
static uint32_t set_sec(struct smbt_conn *tc, uint64_t fid, int i)
{
	return smbl_set_sec(tc, fid, SMB_SD_DACL, blob[i], blob_len[i]);
}

/* QUERY_INFO SECURITY (owner, group, DACL) of fid into out: its length. */
static size_t query_sec(struct smbt_conn *tc, uint64_t fid, uint8_t *out, size_t cap)
{
	size_t n;

	ck_assert_uint_eq(smbl_query_sec(tc, fid, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL, out, cap, &n),
			  STATUS_SUCCESS);
	return n;
}

/* Whether tc may open f.txt for READ_DATA now (the open closed again). */
static bool may_read(struct smbt_conn *tc)
{
	uint64_t fid;
	uint32_t got, st = smbl_open(tc, "f.txt", false, 0x1u, 0, 0, &fid, &got);

	ck_assert(st == STATUS_SUCCESS || st == STATUS_ACCESS_DENIED);
	if (st == STATUS_SUCCESS)
		ck_assert_uint_eq(smbl_close(tc, fid), STATUS_SUCCESS);
	return st == STATUS_SUCCESS;
}

START_TEST(test_race_dispatcher)
{
	struct smbt_conn c[2];
	uint64_t fid[2];
	uint8_t canon[2][1024], buf[1024];
	size_t canon_len[2] = { 0, 0 }, n;
	uint32_t got, rnd = 12345;
	int last = -1, sets[2] = { 0, 0 };

	/* blob 0: alice's (alice all, bob read the descriptor); 1: bob's */
	make_share_blob(0, "S-1-22-1-1000", "S-1-22-1-2000");
	make_share_blob(1, "S-1-22-1-2000", "S-1-22-1-1000");
	for (int i = 0; i < 2; i++) {
		smbt_conn_export(&c[i], srv, &ts, (uint64_t)i + 1, 0);
		c[i].t->share.security = API_INTENT_SEC_NTFS;
		c[i].s->cred = (struct vol_cred){ .uid = i ? 2000u : 1000u, .gid = i ? 2000u : 1000u };
	}
	/* alice makes the file and gives bob WRITE_DAC (her DACL); both open
	 * it to change the descriptor */
	ck_assert_uint_eq(smbl_open(&c[0], "f.txt", false, 0x1u | 0x2u | 0x20000u | 0x40000u, 0, 0, &fid[0], &got),
			  STATUS_SUCCESS);
	ck_assert_uint_eq(set_sec(&c[0], fid[0], 0), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&c[1], "f.txt", false, 0x20000u | 0x40000u, 0, 0, &fid[1], &got),
			  STATUS_SUCCESS);
	for (int k = 0; k < SHUFFLED; k++) {
		int w;

		rnd = rnd * 1103515245u + 12345u;
		w = (int)((rnd >> 16) & 1u);
		ck_assert_uint_eq(set_sec(&c[w], fid[w], w), STATUS_SUCCESS);
		sets[w]++;
		last = w;
		/* the other connection reads back exactly the last one set */
		n = query_sec(&c[!w], fid[!w], buf, sizeof(buf));
		if (!canon_len[w]) {
			memcpy(canon[w], buf, n);
			canon_len[w] = n;
		}
		ck_assert_uint_eq(n, canon_len[w]);
		ck_assert_int_eq(memcmp(buf, canon[w], n), 0);
		/* and decides a new open's access: only its `full` user reads */
		ck_assert(may_read(&c[0]) == (last == 0));
		ck_assert(may_read(&c[1]) == (last == 1));
	}
	ck_assert_int_gt(sets[0], 0);
	ck_assert_int_gt(sets[1], 0);
	ck_assert(canon_len[0] != canon_len[1] || memcmp(canon[0], canon[1], canon_len[0]) != 0);
	for (int i = 0; i < 2; i++)
		ck_assert_uint_eq(smbl_close(&c[i], fid[i]), STATUS_SUCCESS);
}
END_TEST

static Suite *smb_sd_race_suite(void)
{
	Suite *s = suite_create("smb_sd_race");
	TCase *tc = tcase_create("race");
	TCase *td = tcase_create("dispatcher");

	tcase_add_checked_fixture(td, setup_share, teardown_share);
	tcase_add_test(td, test_race_dispatcher);
	suite_add_tcase(s, td);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_race_set);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_sd_race_suite());
}
