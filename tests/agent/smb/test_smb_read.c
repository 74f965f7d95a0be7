/* test_smb_read: READs that may block served off the loop thread
 * (agent/smb/smb_read.c) through the server's own dispatcher
 * (smb_harness.h). A cold tier stub on the store marks files cold (so the
 * loop's vol_read_nowait refuses them) and holds the reads of one "stalled"
 * file in the stub until the test lets them go (or 8 s pass: a server that
 * still read on the loop fails the checks instead of hanging).
 * - while a READ of the stalled file waits, another connection's READ of a
 *   hot file, and of a cold file not stalled, is answered within 2 s; the
 *   stalled one then completes, signed, with its credits and the right bytes;
 * - CLOSE of the open during its READ is answered at once; the READ still
 *   completes with the right bytes (the open's descriptor outlived the CLOSE);
 * - the connection dropped during a READ: the read ends unanswered, nothing
 *   leaks (ASan);
 * - a READ still running SMB_READ_PENDING_MS after it came gets one interim
 *   STATUS_PENDING (async, AsyncId, its credit, unsigned), then its final
 *   answer async with CreditResponse 0; CANCEL by that AsyncId ends it
 *   STATUS_CANCELLED;
 * - one stalled file takes at most SMB_READ_PER_FILE workers: the rest of
 *   its READs queue while another file's READ passes them; CANCEL of a
 *   queued one answers STATUS_CANCELLED at once; the others then complete.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define FILE_LEN (256u << 10)
#define READ_LEN (16u << 10)
#define STUB_HOLD_S 8

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static const struct vol_cred root_cred = { .uid = 0, .gid = 0 };

/* The tier stub: files cold_ino[] are cold; reads of stall_ino wait for `go`. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	ino_t cold_ino[2];
	ino_t stall_ino;
	bool go;
	unsigned inside, max_inside, ended;
} stub = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int stub_cold(void *arg, uint64_t fsid, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)off, (void)len;
	return st->st_ino == stub.cold_ino[0] || st->st_ino == stub.cold_ino[1];
}

static int stub_read(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, void *buf, size_t len,
		     size_t *got, void **swap)
{
	struct timespec until;

	(void)arg, (void)fsid, (void)fd, (void)off, (void)buf, (void)len, (void)got, (void)swap;
	if (st->st_ino != stub.stall_ino)
		return 1; /* the file holds every byte: the store reads it */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STUB_HOLD_S;
	pthread_mutex_lock(&stub.mu);
	if (++stub.inside > stub.max_inside)
		stub.max_inside = stub.inside;
	while (!stub.go && pthread_cond_timedwait(&stub.cv, &stub.mu, &until) == 0)
		;
	stub.inside--;
	stub.ended++;
	pthread_mutex_unlock(&stub.mu);
	return 1;
}

static int stub_zero(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)fd, (void)st, (void)off, (void)len;
	return 0;
}

static void stub_void(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t off, size_t len)
{
	(void)arg, (void)fsid, (void)fd, (void)st, (void)off, (void)len;
}

static int stub_trunc(void *arg, uint64_t fsid, int fd, const struct stat *st, uint64_t size)
{
	(void)arg, (void)fsid, (void)fd, (void)st, (void)size;
	return 0;
}

static void stub_st(void *arg, uint64_t fsid, const struct stat *st)
{
	(void)arg, (void)fsid, (void)st;
}

static const struct vol_tier_ops stub_ops = {
	.read = stub_read, .cold = stub_cold, .write_begin = stub_zero, .write_end = stub_void,
	.truncate = stub_trunc, .truncate_end = stub_st, .unlinked = stub_st,
};

static void stub_release(void)
{
	pthread_mutex_lock(&stub.mu);
	stub.go = true;
	pthread_cond_broadcast(&stub.cv);
	pthread_mutex_unlock(&stub.mu);
}

static unsigned stub_get(const unsigned *field)
{
	unsigned v;

	pthread_mutex_lock(&stub.mu);
	v = *field;
	pthread_mutex_unlock(&stub.mu);
	return v;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wait (up to 5 s) until the stub holds n reads. */
static void stub_wait_inside(unsigned n)
{
	double end = now_s() + 5;

	while (stub_get(&stub.inside) < n && now_s() < end)
		usleep(2000);
	ck_assert_uint_eq(stub_get(&stub.inside), n);
}

static uint8_t pattern(const char *name, uint64_t i)
{
	return (uint8_t)(name[0] * 31u + i * 7u + (i >> 9));
}

/* Create name through the store with FILE_LEN bytes of its pattern: its inode. */
static ino_t file_make(const char *name)
{
	struct vol_obj root, f;
	struct vol_sattr sa = { 0 };
	uint8_t *data = malloc(FILE_LEN);
	ino_t ino;
	int committed;

	ck_assert_ptr_nonnull(data);
	for (uint64_t i = 0; i < FILE_LEN; i++)
		data[i] = pattern(name, i);
	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_create(&root, &root_cred, name, strlen(name), false, NULL, &sa, &f), 0);
	for (size_t off = 0; off < FILE_LEN; off += VOL_IO_MAX)
		ck_assert_int_eq(vol_write(&f, &root_cred, off, data + off,
					   FILE_LEN - off < VOL_IO_MAX ? FILE_LEN - off : VOL_IO_MAX, 0, &committed), 0);
	ino = f.st.st_ino;
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
	free(data);
	return ino;
}

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
	vol_store_set_tier(ts.store, &stub_ops, NULL);
	stub.cold_ino[0] = stub.cold_ino[1] = stub.stall_ino = 0;
	stub.go = false;
	stub.inside = stub.max_inside = stub.ended = 0;
}

static void teardown(void)
{
	stub_release(); /* whatever still waits in the stub */
	smbt_export_down(&ts, srv, exp0);
}

static uint64_t open_file(struct smbt_conn *tc, const char *name)
{
	uint64_t fid = 0;
	uint32_t attrs;

	ck_assert_uint_eq(smbl_open(tc, name, false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	return fid;
}

/* A READ of len bytes at off on fid; its MessageId. */
static uint64_t read_send(struct smbt_conn *tc, uint64_t fid, uint64_t off, uint32_t len)
{
	uint8_t body[49] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_READ, .message_id = tc->mid++, .tree_id = tc->t->id };

	smbt_put16(body, 49);
	smbt_put32(body + 4, len);
	smbt_put64(body + 8, off);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	smbt_send(tc, &h, body, sizeof(body));
	return h.message_id;
}

struct rsp {
	struct smb_wire_hdr h;
	bool sig_ok;
	uint8_t buf[SMB2_HDR_LEN + 64 + READ_LEN];
	size_t len;
};

/* The next answer on tc, turning the loop (the workers' wakes) for up to
 * `within` seconds: 1, or 0 when none came. */
static int rsp_wait(struct smbt_conn *tc, struct rsp *r, double within)
{
	double end = now_s() + within;

	do {
		if (smbt_recv(tc, r->buf, sizeof(r->buf), &r->len, &r->h, &r->sig_ok))
			return 1;
		smbt_loop_turn(srv);
		usleep(1000);
	} while (now_s() < end);
	return smbt_recv(tc, r->buf, sizeof(r->buf), &r->len, &r->h, &r->sig_ok);
}

/* r is the successful answer to mid (aid 0: sync; else the final async one
 * after that interim) with len bytes of name's data from off. */
static void rsp_check_data_async(const struct rsp *r, uint64_t mid, uint64_t aid, const char *name, uint64_t off,
				 uint32_t len)
{
	const uint8_t *b = r->buf + SMB2_HDR_LEN;
	uint32_t doff, dlen;

	if (aid) {
		smbt_check_final(&r->h, SMB2_READ, mid, aid, STATUS_SUCCESS);
		ck_assert_uint_eq(r->h.credits, 0); /* they went with the interim */
	} else {
		smbt_check_sync(&r->h, mid, STATUS_SUCCESS);
		ck_assert_uint_eq(r->h.credits, 1); /* what the request asked */
	}
	ck_assert_uint_eq(r->h.command, SMB2_READ);
	ck_assert(r->sig_ok);
	ck_assert_uint_eq(smb_wire_get_u16(b), 17);
	doff = b[2];
	dlen = smb_wire_get_u32(b + 4);
	ck_assert_uint_eq(dlen, len);
	ck_assert_uint_le(doff + dlen, r->len);
	for (uint32_t i = 0; i < len; i++)
		if (r->buf[doff + i] != pattern(name, off + i))
			ck_abort_msg("byte %u of %s at %llu differs", i, name, (unsigned long long)off);
}

static void rsp_check_data(const struct rsp *r, uint64_t mid, const char *name, uint64_t off, uint32_t len)
{
	rsp_check_data_async(r, mid, 0, name, off, len);
}

/* The loop's turns (the interim tick included) for `s` seconds; whether tc got an answer. */
static int turn_for(struct smbt_conn *tc, struct rsp *r, double s)
{
	double end = now_s() + s;

	do {
		smb_read_tick(srv);
		if (smbt_recv(tc, r->buf, sizeof(r->buf), &r->len, &r->h, &r->sig_ok))
			return 1;
		smbt_loop_turn(srv);
		usleep(5000);
	} while (now_s() < end);
	return 0;
}

START_TEST(test_interim_after_threshold)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t fa, m1, m2, a1, a2;
	double t0;

	setup();
	stub.stall_ino = stub.cold_ino[0] = file_make("stalled");
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "stalled");
	t0 = now_s();
	m1 = read_send(&a, fa, 0, READ_LEN);
	m2 = read_send(&a, fa, READ_LEN, READ_LEN);
	stub_wait_inside(2);
	/* nothing before the threshold (less the time the checks took) */
	ck_assert_int_eq(turn_for(&a, &r, SMB_READ_PENDING_MS / 1000.0 - (now_s() - t0) - 0.1), 0);
	/* then one interim each: async, an AsyncId, the credit, unsigned */
	a1 = a2 = 0;
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(turn_for(&a, &r, 3.0), 1);
		ck_assert(r.h.message_id == m1 || r.h.message_id == m2);
		*(r.h.message_id == m1 ? &a1 : &a2) = smbt_check_pending(&r.h, r.h.message_id);
		ck_assert_uint_eq(r.h.credits, 1);
		ck_assert(!(r.h.flags & SMB2_FLAGS_SIGNED));
	}
	ck_assert(a1 && a2 && a1 != a2);
	ck_assert_int_eq(turn_for(&a, &r, 0.3), 0); /* once */
	/* CANCEL by AsyncId of a running one: CANCELLED when it ends */
	smbt_cancel(&a, true, a2);
	stub_release();
	ck_assert_int_eq(rsp_wait(&a, &r, 5.0), 1);
	if (r.h.message_id == m2) {
		smbt_check_final(&r.h, SMB2_READ, m2, a2, STATUS_CANCELLED);
		ck_assert_int_eq(rsp_wait(&a, &r, 5.0), 1);
		rsp_check_data_async(&r, m1, a1, "stalled", 0, READ_LEN);
	} else {
		rsp_check_data_async(&r, m1, a1, "stalled", 0, READ_LEN);
		ck_assert_int_eq(rsp_wait(&a, &r, 5.0), 1);
		smbt_check_final(&r.h, SMB2_READ, m2, a2, STATUS_CANCELLED);
	}
	ck_assert(r.sig_ok);
	teardown();
}
END_TEST

START_TEST(test_stalled_and_hot)
{
	struct smbt_conn a, b;
	struct rsp r;
	uint64_t fa, fh, fc, mid, mh, mc;
	double t0;

	setup();
	stub.stall_ino = stub.cold_ino[0] = file_make("stalled");
	stub.cold_ino[1] = file_make("cold");
	file_make("hot");
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fa = open_file(&a, "stalled");
	fh = open_file(&b, "hot");
	fc = open_file(&b, "cold");
	mid = read_send(&a, fa, 4096, READ_LEN);
	stub_wait_inside(1);
	ck_assert_int_eq(smbt_recv(&a, r.buf, sizeof(r.buf), &r.len, &r.h, NULL), 0); /* not answered yet */
	/* the other connection is served meanwhile: a hot file and a cold one */
	t0 = now_s();
	mh = read_send(&b, fh, 100, READ_LEN);
	ck_assert_int_eq(rsp_wait(&b, &r, 2.0), 1);
	rsp_check_data(&r, mh, "hot", 100, READ_LEN);
	mc = read_send(&b, fc, 8192, READ_LEN);
	ck_assert_int_eq(rsp_wait(&b, &r, 2.0), 1);
	rsp_check_data(&r, mc, "cold", 8192, READ_LEN);
	ck_assert(now_s() - t0 < 2.0); /* the stalled read is held for STUB_HOLD_S */
	ck_assert_uint_eq(stub_get(&stub.inside), 1); /* still held */
	ck_assert_int_eq(smbt_recv(&a, r.buf, sizeof(r.buf), &r.len, &r.h, NULL), 0);
	stub_release();
	ck_assert_int_eq(rsp_wait(&a, &r, 5.0), 1);
	rsp_check_data(&r, mid, "stalled", 4096, READ_LEN);
	ck_assert_uint_ge(srv->reads_deferred, 2); /* the stalled and the cold one went to a worker */
	/* past the end: END_OF_FILE, through a worker too */
	mid = read_send(&a, fa, FILE_LEN + 10, READ_LEN);
	ck_assert_int_eq(rsp_wait(&a, &r, 5.0), 1);
	smbt_check_sync(&r.h, mid, STATUS_END_OF_FILE);
	teardown();
}
END_TEST

START_TEST(test_close_during_read)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t fa, mid;

	setup();
	stub.stall_ino = stub.cold_ino[0] = file_make("stalled");
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "stalled");
	mid = read_send(&a, fa, 0, READ_LEN);
	stub_wait_inside(1);
	ck_assert_uint_eq(smbl_close(&a, fa), STATUS_SUCCESS); /* answered at once */
	ck_assert_ptr_null(a.s->opens);
	stub_release();
	ck_assert_int_eq(rsp_wait(&a, &r, 5.0), 1);
	rsp_check_data(&r, mid, "stalled", 0, READ_LEN);
	/* the open is gone for the client */
	mid = read_send(&a, fa, 0, READ_LEN);
	ck_assert_int_eq(rsp_wait(&a, &r, 2.0), 1);
	smbt_check_sync(&r.h, mid, STATUS_FILE_CLOSED);
	teardown();
}
END_TEST

START_TEST(test_conn_dropped_during_read)
{
	struct smbt_conn a, b;
	struct rsp r;
	uint64_t fa, fb, mid;
	double end;

	setup();
	stub.stall_ino = stub.cold_ino[0] = file_make("stalled");
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fa = open_file(&a, "stalled");
	fb = open_file(&b, "stalled");
	read_send(&a, fa, 0, READ_LEN);
	read_send(&a, fa, READ_LEN, READ_LEN);
	read_send(&a, fa, 2 * READ_LEN, READ_LEN); /* queued: the file's slots are taken */
	stub_wait_inside(SMB_READ_PER_FILE);
	smb_conn_free(a.c);
	stub_release();
	end = now_s() + 5;
	while (stub_get(&stub.ended) < SMB_READ_PER_FILE && now_s() < end)
		usleep(2000);
	ck_assert_uint_eq(stub_get(&stub.ended), SMB_READ_PER_FILE); /* the queued one never ran */
	smbt_loop_turn(srv); /* the ended jobs find no connection */
	/* the other connection's open of the file reads on */
	mid = read_send(&b, fb, 0, READ_LEN);
	ck_assert_int_eq(rsp_wait(&b, &r, 5.0), 1);
	rsp_check_data(&r, mid, "stalled", 0, READ_LEN);
	teardown();
}
END_TEST

START_TEST(test_per_file_cap_and_cancel)
{
	struct smbt_conn a, b;
	struct rsp r;
	uint64_t fa, fc, mids[6], mc;
	unsigned answered = 0;
	bool seen[6] = { false };

	setup();
	stub.stall_ino = stub.cold_ino[0] = file_make("stalled");
	stub.cold_ino[1] = file_make("cold");
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fa = open_file(&a, "stalled");
	fc = open_file(&b, "cold");
	for (unsigned i = 0; i < 6; i++)
		mids[i] = read_send(&a, fa, (uint64_t)i * READ_LEN, READ_LEN);
	stub_wait_inside(SMB_READ_PER_FILE);
	usleep(200000); /* no more of them get a worker */
	ck_assert_uint_eq(stub_get(&stub.inside), SMB_READ_PER_FILE);
	ck_assert_uint_eq(stub_get(&stub.max_inside), SMB_READ_PER_FILE);
	/* another file's READ passes the stalled file's queue */
	mc = read_send(&b, fc, 0, READ_LEN);
	ck_assert_int_eq(rsp_wait(&b, &r, 2.0), 1);
	rsp_check_data(&r, mc, "cold", 0, READ_LEN);
	/* CANCEL of a queued one (the last sent) is answered now */
	smbt_cancel(&a, false, mids[5]);
	ck_assert_int_eq(rsp_wait(&a, &r, 2.0), 1);
	smbt_check_sync(&r.h, mids[5], STATUS_CANCELLED);
	ck_assert(r.sig_ok);
	seen[5] = true;
	stub_release();
	while (answered < 5 && rsp_wait(&a, &r, 5.0) == 1) {
		unsigned i = (unsigned)(r.h.message_id - mids[0]);

		ck_assert_uint_lt(i, 5);
		ck_assert(!seen[i]);
		seen[i] = true;
		rsp_check_data(&r, mids[i], "stalled", (uint64_t)i * READ_LEN, READ_LEN);
		answered++;
	}
	ck_assert_uint_eq(answered, 5);
	ck_assert_uint_le(stub_get(&stub.max_inside), SMB_READ_PER_FILE);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_read");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stalled_and_hot);
	tcase_add_test(tc, test_close_during_read);
	tcase_add_test(tc, test_conn_dropped_during_read);
	tcase_add_test(tc, test_per_file_cap_and_cancel);
	tcase_add_test(tc, test_interim_after_threshold);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
