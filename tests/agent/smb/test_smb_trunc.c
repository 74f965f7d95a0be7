/* test_smb_trunc: a CREATE that overwrites a cold file is cut by a worker,
 * not on the loop (agent/smb/smb_open.c create_park, agent/smb/smb_read.c
 * JOB_TRUNC, agent/smb/smb_frame.c smb_frame_resume_call; issue 23),
 * through the server's own dispatcher (smb_harness.h) with the shared cold
 * tier stub (smb_stub.h) holding the truncate of the "stalled" file.
 * - a lone CREATE with FILE_OVERWRITE_IF of the stalled cold file: the
 *   dispatch returns at once with the cut held at the tier; another
 *   connection's CREATE meanwhile is answered; SMB_READ_PENDING_MS after it
 *   came it gets one interim STATUS_PENDING (async, an AsyncId); let go, its
 *   final answer (async, that AsyncId, CreditResponse 0, signed) says
 *   FILE_OVERWRITTEN, EndOfFile 0, and the file is empty;
 * - the same with FILE_SUPERSEDE and CLOSE related to it in one compound:
 *   both answered once the cut ends (SUPERSEDED, then the CLOSE of that
 *   open);
 * - CANCEL of such a CREATE still queued (the stalled file's READs hold
 *   SMB_READ_PER_FILE workers): STATUS_CANCELLED, and nothing is cut;
 * - a hot file's overwrite is not handed to a worker;
 * - the connection dropped while the cut runs: the CREATE ends unanswered,
 *   its open gone (ASan: nothing leaks).
 */
#include <check.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/agent/smb/smb_stub.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define FILE_LEN (256u << 10)
#define FILE_SUPERSEDE_ 0u
#define FILE_OVERWRITE_IF_ 5u
#define NON_DIRECTORY 0x40u

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

static void setup(void)
{
	smbt_stub_up(&ts, &srv, &exp0);
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_file_make(exp0, "hot", FILE_LEN);
}

static void teardown(void)
{
	smbt_stub_down(&ts, srv, exp0);
}

struct ans {
	struct smb_wire_hdr h;
	uint8_t buf[8192];
	size_t len;
	bool sig_ok;
};

/* The next frame on tc, turning the loop (the workers' wakes) for up to 5 s: 1, or 0. */
static int ans_wait(struct smbt_conn *tc, struct ans *a)
{
	double end = smbt_now_s() + 5;

	do {
		smb_read_tick(srv); /* the interim's clock */
		if (smbt_recv(tc, a->buf, sizeof(a->buf), &a->len, &a->h, &a->sig_ok))
			return 1;
		smbt_loop_turn(srv);
		usleep(1000);
	} while (smbt_now_s() < end);
	return 0;
}

/* The CREATE of name with disposition, as its own frame: its MessageId. */
static uint64_t create_send(struct smbt_conn *tc, const char *name, uint32_t disposition)
{
	uint8_t body[128];
	struct smb_wire_hdr h = { .command = SMB2_CREATE };
	size_t n = smbl_create_body(body, name, ALL_ACCESS, 0, NON_DIRECTORY, disposition);

	smbl_send(tc, &h, body, n);
	return h.message_id;
}

static uint64_t size_of(const char *name)
{
	char p[160];
	struct stat st;

	snprintf(p, sizeof(p), "%s/v0/%s", ts.dir, name);
	ck_assert_int_eq(stat(p, &st), 0);
	return (uint64_t)st.st_size;
}

/* a: the CREATE answer at b (SMB2 header first) says action and EndOfFile 0. */
static void check_cut(const uint8_t *b, uint32_t action)
{
	ck_assert_uint_eq(smb_wire_get_u32(b + SMB2_HDR_LEN + 4), action); /* CreateAction */
	ck_assert_uint_eq(smb_wire_get_u64(b + SMB2_HDR_LEN + 48), 0);     /* EndofFile */
}

START_TEST(test_overwrite_off_loop)
{
	struct smbt_conn a, b;
	struct ans r;
	uint64_t mid, fid, aid;
	uint32_t attrs;
	double t0 = smbt_now_s();

	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	mid = create_send(&a, "stalled", FILE_OVERWRITE_IF_);
	ck_assert(smbt_now_s() - t0 < 5.0);                      /* the dispatch did not wait SMBT_STUB_HOLD_S */
	smbt_stub_wait_inside(1);                                /* a worker holds the cut at the tier */
	ck_assert_uint_eq(smbl_open(&b, "hot", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	ck_assert_uint_eq(smbt_recv(&a, r.buf, sizeof(r.buf), &r.len, &r.h, NULL), 0); /* not answered yet */
	ck_assert_uint_eq(size_of("stalled"), FILE_LEN);
	ck_assert_int_eq(ans_wait(&a, &r), 1);                   /* held past SMB_READ_PENDING_MS: the interim */
	ck_assert_uint_eq(r.h.command, SMB2_CREATE);
	aid = smbt_check_pending(&r.h, mid);
	ck_assert_uint_eq(r.h.credits, 1);
	smbt_stub_release();
	ck_assert_int_eq(ans_wait(&a, &r), 1);
	smbt_check_final(&r.h, SMB2_CREATE, mid, aid, STATUS_SUCCESS);
	ck_assert_uint_eq(r.h.credits, 0);                       /* they went with the interim */
	ck_assert(r.sig_ok);
	check_cut(r.buf, 3 /* FILE_OVERWRITTEN */);
	ck_assert_uint_eq(size_of("stalled"), 0);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.truncs), 1);
	ck_assert_uint_eq(smbl_close(&a, smb_wire_get_u64(r.buf + SMB2_HDR_LEN + 64)), STATUS_SUCCESS);
	smbt_conns_free(srv);
}
END_TEST

START_TEST(test_supersede_compound)
{
	struct smbt_conn a;
	struct ans r;
	uint8_t cbody[128], close_body[24] = { 0 };
	const uint8_t *bodies[2] = { cbody, close_body };
	size_t n[2];
	struct smb_wire_hdr h[2];
	uint32_t next;

	smbt_conn_export(&a, srv, &ts, 1, 0);
	h[0] = (struct smb_wire_hdr){ .command = SMB2_CREATE, .message_id = a.mid++, .tree_id = a.t->id };
	h[1] = (struct smb_wire_hdr){ .command = SMB2_CLOSE, .message_id = a.mid++, .tree_id = a.t->id,
				      .flags = SMB2_FLAGS_RELATED_OPERATIONS };
	n[0] = smbl_create_body(cbody, "stalled", ALL_ACCESS, 0, NON_DIRECTORY, FILE_SUPERSEDE_);
	smbt_put16(close_body, 24);
	memset(close_body + 8, 0xff, 16);                        /* the related FileId */
	n[1] = sizeof(close_body);
	smbt_send_chain(&a, h, bodies, n, 2);
	smbt_stub_wait_inside(1);
	smbt_stub_release();
	ck_assert_int_eq(ans_wait(&a, &r), 1);
	ck_assert_uint_eq(r.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.h.command, SMB2_CREATE);
	check_cut(r.buf, 0 /* FILE_SUPERSEDED */);
	next = r.h.next_command;
	ck_assert_uint_gt(next, 0);
	ck_assert_uint_eq(smb_wire_get_u16(r.buf + next + 12), SMB2_CLOSE);
	ck_assert_uint_eq(smb_wire_get_u32(r.buf + next + 8), STATUS_SUCCESS);
	ck_assert_uint_eq(size_of("stalled"), 0);
	smbt_conns_free(srv);
}
END_TEST

/* A lone READ of len bytes at off on fid: its MessageId. */
static uint64_t read_send(struct smbt_conn *tc, uint64_t fid, uint64_t off, uint32_t len)
{
	uint8_t body[49] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_READ };

	smbt_put16(body, 49);
	smbt_put32(body + 4, len);
	smbt_put64(body + 8, off);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	smbl_send(tc, &h, body, sizeof(body));
	return h.message_id;
}

START_TEST(test_cancel_queued)
{
	struct smbt_conn a, b;
	struct ans r;
	uint64_t fid, mid;
	uint32_t attrs;
	unsigned answered = 0;

	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	ck_assert_uint_eq(smbl_open(&a, "stalled", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	for (unsigned i = 0; i < SMB_READ_PER_FILE; i++)
		read_send(&a, fid, (uint64_t)i * 4096, 4096);
	smbt_stub_wait_inside(SMB_READ_PER_FILE);                /* the file's workers are taken */
	mid = create_send(&b, "stalled", FILE_OVERWRITE_IF_);    /* its cut waits in the queue */
	smbt_cancel(&b, false, mid);
	ck_assert_int_eq(ans_wait(&b, &r), 1);
	ck_assert_uint_eq(r.h.message_id, mid);
	ck_assert_uint_eq(r.h.command, SMB2_CREATE);
	ck_assert_uint_eq(r.h.status, STATUS_CANCELLED);
	smbt_stub_release();
	while (answered < SMB_READ_PER_FILE && ans_wait(&a, &r) == 1)
		answered += r.h.command == SMB2_READ && r.h.status == STATUS_SUCCESS;
	ck_assert_uint_eq(answered, SMB_READ_PER_FILE);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.truncs), 0);  /* nothing was cut */
	ck_assert_uint_eq(size_of("stalled"), FILE_LEN);
	smbt_conns_free(srv);
}
END_TEST

START_TEST(test_hot_and_dropped)
{
	struct smbt_conn a;
	struct ans r;
	uint64_t before = srv->reads_deferred;

	smbt_conn_export(&a, srv, &ts, 1, 0);
	create_send(&a, "hot", FILE_OVERWRITE_IF_);              /* hot: cut on the loop, answered now */
	ck_assert_int_eq(smbt_recv(&a, r.buf, sizeof(r.buf), &r.len, &r.h, NULL), 1);
	check_cut(r.buf, 3);
	ck_assert_uint_eq(srv->reads_deferred, before);
	create_send(&a, "stalled", FILE_OVERWRITE_IF_);
	smbt_stub_wait_inside(1);
	smbt_conns_free(srv);                                    /* dropped while the cut runs */
	smbt_stub_release();
	for (double end = smbt_now_s() + 5; smbt_stub_get(&smbt_stub.ended) < 1 && smbt_now_s() < end;)
		usleep(2000);
	usleep(50000);
	smbt_loop_turn(srv);                                     /* the ended job finds no connection */
	ck_assert_uint_eq(srv->reads_deferred, srv->reads_ended);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("smb_trunc");
	TCase *tc = tcase_create("trunc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_overwrite_off_loop);
	tcase_add_test(tc, test_supersede_compound);
	tcase_add_test(tc, test_cancel_queued);
	tcase_add_test(tc, test_hot_and_dropped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
