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
 *   queued one answers STATUS_CANCELLED at once; the others then complete;
 * - a READ of a cold file that QoS held past SMB_READ_PENDING_MS (its
 *   interim sent then, smb_admit.c) and a worker then reads gets no second
 *   interim: its final answer is async with the AsyncId of the first,
 *   CreditResponse 0, signed, with the data.
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
#include "tests/agent/smb/smb_stub.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define FILE_LEN (256u << 10)
#define READ_LEN (16u << 10)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

/* A lone signed READ of len bytes at off on fid through smb_dispatch_recv
 * (the loop's path, QoS first): what admission said; its MessageId in *mid. */
static int read_recv(struct smbt_conn *tc, uint64_t fid, uint64_t off, uint32_t len, uint64_t *mid)
{
	static uint8_t frame[256];
	uint8_t body[49] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_READ, .message_id = tc->mid++, .tree_id = tc->t->id };
	const uint8_t *b = body;
	size_t n = sizeof(body), flen;
	uint8_t *f;

	smbt_put16(body, 49);
	smbt_put32(body + 4, len);
	smbt_put64(body + 8, off);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	flen = smbt_chain_build(tc, &h, &b, &n, 1, frame, sizeof(frame));
	ck_assert_ptr_nonnull(f = malloc(flen));
	memcpy(f, frame, flen);
	*mid = h.message_id;
	return smb_dispatch_recv(tc->c, f, flen);
}

static void released(void *arg, struct qos_item *it)
{
	(void)it;
	*(int *)arg += 1;
}

static void setup(void)
{
	smbt_stub_up(&ts, &srv, &exp0);
}

static void teardown(void)
{
	smbt_stub_down(&ts, srv, exp0);
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
	double end = smbt_now_s() + within;

	do {
		if (smbt_recv(tc, r->buf, sizeof(r->buf), &r->len, &r->h, &r->sig_ok))
			return 1;
		smbt_loop_turn(srv);
		usleep(1000);
	} while (smbt_now_s() < end);
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
		if (r->buf[doff + i] != smbt_pattern(name, off + i))
			ck_abort_msg("byte %u of %s at %llu differs", i, name, (unsigned long long)off);
}

static void rsp_check_data(const struct rsp *r, uint64_t mid, const char *name, uint64_t off, uint32_t len)
{
	rsp_check_data_async(r, mid, 0, name, off, len);
}

/* The loop's turns (the interim tick included) for `s` seconds; whether tc got an answer. */
static int turn_for(struct smbt_conn *tc, struct rsp *r, double s)
{
	double end = smbt_now_s() + s;

	do {
		smb_read_tick(srv);
		if (smbt_recv(tc, r->buf, sizeof(r->buf), &r->len, &r->h, &r->sig_ok))
			return 1;
		smbt_loop_turn(srv);
		usleep(5000);
	} while (smbt_now_s() < end);
	return 0;
}

START_TEST(test_interim_after_threshold)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t fa, m1, m2, a1, a2;
	double t0;

	setup();
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "stalled");
	t0 = smbt_now_s();
	m1 = read_send(&a, fa, 0, READ_LEN);
	m2 = read_send(&a, fa, READ_LEN, READ_LEN);
	smbt_stub_wait_inside(2);
	/* nothing before the threshold (less the time the checks took) */
	ck_assert_int_eq(turn_for(&a, &r, SMB_READ_PENDING_MS / 1000.0 - (smbt_now_s() - t0) - 0.1), 0);
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
	smbt_stub_release();
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

START_TEST(test_qos_interim_then_worker)
{
	struct qos_limits lim = { .bytes_per_s = 16u << 10 };
	struct smbt_conn a;
	struct rsp r;
	uint64_t fc, mid, aid;
	double t0;
	int rel = 0;

	setup();
	smbt_stub.cold_ino[0] = smbt_file_make(exp0, "cold", FILE_LEN);
	smbt_file_make(exp0, "hot", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fc = open_file(&a, "cold");
	ck_assert_int_eq(qos_vol_set(exp0->acct->qos, &lim, qos_now(ts.store->qos)), 0);
	/* the first goes (the bucket into debt by it) and is read by a worker */
	ck_assert_int_eq(read_recv(&a, fc, 0, READ_LEN, &mid), QOS_ADMIT);
	ck_assert_int_eq(rsp_wait(&a, &r, 5.0), 1);
	rsp_check_data(&r, mid, "cold", 0, READ_LEN);
	/* the second waits about a second: its interim comes from the QoS tick */
	t0 = smbt_now_s();
	ck_assert_int_eq(read_recv(&a, fc, READ_LEN, READ_LEN, &mid), QOS_PARKED);
	while (smbt_now_s() - t0 < SMB_READ_PENDING_MS / 1000.0 + 0.05)
		usleep(10000);
	smb_dispatch_admit_tick(srv);
	ck_assert_int_eq(smbt_recv(&a, r.buf, sizeof(r.buf), &r.len, &r.h, NULL), 1);
	aid = smbt_check_pending(&r.h, mid);
	while (!rel) {
		usleep(1000);
		qos_poll(ts.store->qos, qos_now(ts.store->qos), released, &rel);
	}
	smb_dispatch_resume(a.c);
	/* a worker reads it (a cold file): no second interim, the final async */
	ck_assert_int_eq(turn_for(&a, &r, 5.0), 1);
	rsp_check_data_async(&r, mid, aid, "cold", READ_LEN, READ_LEN);
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
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_stub.cold_ino[1] = smbt_file_make(exp0, "cold", FILE_LEN);
	smbt_file_make(exp0, "hot", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fa = open_file(&a, "stalled");
	fh = open_file(&b, "hot");
	fc = open_file(&b, "cold");
	mid = read_send(&a, fa, 4096, READ_LEN);
	smbt_stub_wait_inside(1);
	ck_assert_int_eq(smbt_recv(&a, r.buf, sizeof(r.buf), &r.len, &r.h, NULL), 0); /* not answered yet */
	/* the other connection is served meanwhile: a hot file and a cold one */
	t0 = smbt_now_s();
	mh = read_send(&b, fh, 100, READ_LEN);
	ck_assert_int_eq(rsp_wait(&b, &r, 2.0), 1);
	rsp_check_data(&r, mh, "hot", 100, READ_LEN);
	mc = read_send(&b, fc, 8192, READ_LEN);
	ck_assert_int_eq(rsp_wait(&b, &r, 2.0), 1);
	rsp_check_data(&r, mc, "cold", 8192, READ_LEN);
	ck_assert(smbt_now_s() - t0 < 2.0); /* the stalled read is held for SMBT_STUB_HOLD_S */
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.inside), 1); /* still held */
	ck_assert_int_eq(smbt_recv(&a, r.buf, sizeof(r.buf), &r.len, &r.h, NULL), 0);
	smbt_stub_release();
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
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "stalled");
	mid = read_send(&a, fa, 0, READ_LEN);
	smbt_stub_wait_inside(1);
	ck_assert_uint_eq(smbl_close(&a, fa), STATUS_SUCCESS); /* answered at once */
	ck_assert_ptr_null(a.s->opens);
	smbt_stub_release();
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
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fa = open_file(&a, "stalled");
	fb = open_file(&b, "stalled");
	read_send(&a, fa, 0, READ_LEN);
	read_send(&a, fa, READ_LEN, READ_LEN);
	read_send(&a, fa, 2 * READ_LEN, READ_LEN); /* queued: the file's slots are taken */
	smbt_stub_wait_inside(SMB_READ_PER_FILE);
	smb_conn_free(a.c);
	smbt_stub_release();
	end = smbt_now_s() + 5;
	while (smbt_stub_get(&smbt_stub.ended) < SMB_READ_PER_FILE && smbt_now_s() < end)
		usleep(2000);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.ended), SMB_READ_PER_FILE); /* the queued one never ran */
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
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_stub.cold_ino[1] = smbt_file_make(exp0, "cold", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fa = open_file(&a, "stalled");
	fc = open_file(&b, "cold");
	for (unsigned i = 0; i < 6; i++)
		mids[i] = read_send(&a, fa, (uint64_t)i * READ_LEN, READ_LEN);
	smbt_stub_wait_inside(SMB_READ_PER_FILE);
	usleep(200000); /* no more of them get a worker */
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.inside), SMB_READ_PER_FILE);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.max_inside), SMB_READ_PER_FILE);
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
	smbt_stub_release();
	while (answered < 5 && rsp_wait(&a, &r, 5.0) == 1) {
		unsigned i = (unsigned)(r.h.message_id - mids[0]);

		ck_assert_uint_lt(i, 5);
		ck_assert(!seen[i]);
		seen[i] = true;
		rsp_check_data(&r, mids[i], "stalled", (uint64_t)i * READ_LEN, READ_LEN);
		answered++;
	}
	ck_assert_uint_eq(answered, 5);
	ck_assert_uint_le(smbt_stub_get(&smbt_stub.max_inside), SMB_READ_PER_FILE);
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
	tcase_add_test(tc, test_qos_interim_then_worker);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
