/* test_smb_qos: QoS admission of every SMB frame (agent/smb/smb_admit.c)
 * through the server's receive path (smb_dispatch_recv, the path the
 * loop's reads take) on the in-process harness (smb_harness.h):
 * - a stream of encrypted (AES-128-GCM TRANSFORM) WRITEs on a volume
 *   limited to 2 MiB/s moves no more than the limit allows over a second
 *   of wall time (plus the 100 ms bucket and the one request a bucket may
 *   go into debt by), frames past the budget parked and served when the
 *   scheduler hands them back, every WRITE answered sealed and successful;
 * - the same for a stream of encrypted compounds of two unrelated READs
 *   (AES-128-CCM), each READ charged;
 * - an unencrypted compound CREATE+WRITE (related: the FileId of the open
 *   the CREATE makes) is charged its WRITE on the tree's volume;
 * - a lone signed WRITE parked past SMB_READ_PENDING_MS (a volume limited
 *   to 64 KiB/s, the bucket in debt by a first WRITE of 64 KiB) gets one
 *   interim STATUS_PENDING (async, an AsyncId, its credit) from the loop's
 *   tick, none before; its final answer is async with that AsyncId,
 *   CreditResponse 0, signed, and says what it wrote;
 * - a compound CREATE + READ (unrelated) parked so gets one interim, for
 *   its READ (the message QoS charges; MS-SMB2 3.3.4.2), then the whole
 *   compound: the CREATE sync with its credits, the READ async with that
 *   AsyncId, CreditResponse 0, and the bytes written before.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
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
#define IO (64u * 1024u)           /* one READ or WRITE */
#define RATE (2ull << 20)          /* the volume's limit, bytes/s */
#define RUN_NS 1000000000ull       /* how long a stream runs */

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static uint8_t data[IO];
static uint8_t frame[4 * IO], sealed[4 * IO], rsp[4 * IO];

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t admitted(void)
{
	struct qos_stats st;

	qos_vol_stats(exp0->acct->qos, qos_now(ts.store->qos), &st);
	return st.admitted_bytes;
}

static void limit(uint64_t rate)
{
	struct qos_limits lim = { .bytes_per_s = rate };

	ck_assert_int_eq(qos_vol_set(exp0->acct->qos, &lim, qos_now(ts.store->qos)), 0);
}

/* A READ body of IO bytes at off on fid (49 bytes). */
static size_t read_body(uint8_t *b, uint64_t fid, uint64_t off)
{
	return smbt_read_body(b, fid, off, IO);
}

/* A WRITE body of data at off on fid. */
static size_t write_body(uint8_t *b, uint64_t fid, uint64_t off)
{
	memset(b, 0, 48);
	smbt_put16(b, 49);
	smbt_put16(b + 2, SMB2_HDR_LEN + 48);
	smbt_put32(b + 4, IO);
	smbt_put64(b + 8, off);
	smbt_put64(b + 16, fid);
	smbt_put64(b + 24, fid);
	memcpy(b + 48, data, IO);
	return 48 + IO;
}

static void released(void *arg, struct qos_item *it)
{
	(void)it;
	*(int *)arg += 1;
}

/* The sealed answers waiting on tc: each a success of command; their count. */
static unsigned drain(struct smbt_conn *tc, uint16_t command)
{
	struct smb_wire_hdr h;
	size_t len;
	unsigned n = 0;

	smb_conn_kick(tc->c);
	while (smbt_recv_sealed(tc, rsp, sizeof(rsp), &len, &h)) {
		struct smb_wire_chain ch;
		struct smb_wire_msg m;

		smb_wire_chain_init(&ch, rsp, len);
		while (smb_wire_chain_next(&ch, &m) == 1) {
			ck_assert_uint_eq(m.hdr.command, command);
			ck_assert_uint_eq(m.hdr.status, STATUS_SUCCESS);
			n++;
		}
		smb_conn_kick(tc->c);
	}
	return n;
}

/* Send sealed frames of `per` READs or WRITEs of IO bytes for RUN_NS of
 * wall time through smb_dispatch_recv, a parked frame waited for (the
 * scheduler polled every ms) and served; the bytes answered, the frames
 * parked in *parked, the time taken in *ns. Stops early past four times
 * what the limit allows (an unlimited stream). */
static uint64_t stream(struct smbt_conn *tc, uint64_t fid, uint16_t command, unsigned per, unsigned *parked,
		       uint64_t *ns)
{
	static uint8_t body[2][48 + IO];
	uint64_t t0 = mono_ns(), moved = 0, off = 0;

	*parked = 0;
	while (mono_ns() - t0 < RUN_NS && moved < 4 * RATE) {
		struct smb_wire_hdr h[2] = { 0 };
		const uint8_t *b[2] = { body[0], body[1] };
		size_t n[2], len;

		for (unsigned i = 0; i < per; i++, off = (off + IO) % (16u * IO)) {
			h[i].command = command;
			h[i].tree_id = tc->t->id;
			h[i].message_id = tc->mid++;
			n[i] = command == SMB2_READ ? read_body(body[i], fid, off) : write_body(body[i], fid, off);
		}
		len = smbt_seal(tc, frame, smbt_chain_build(tc, h, b, n, per, frame, sizeof(frame)), sealed, sizeof(sealed));
		uint8_t *f = malloc(len);

		ck_assert_ptr_nonnull(f);
		memcpy(f, sealed, len);
		if (smb_dispatch_recv(tc->c, f, len) == QOS_PARKED) {
			int rel = 0;

			(*parked)++;
			ck_assert(tc->c->is_parked);
			ck_assert_uint_eq(drain(tc, command), 0); /* nothing of it served yet */
			while (!rel) {
				usleep(1000);
				qos_poll(ts.store->qos, qos_now(ts.store->qos), released, &rel);
			}
			smb_dispatch_resume(tc->c);
		}
		ck_assert(!tc->c->is_parked);
		ck_assert_uint_eq(drain(tc, command), per);
		moved += (uint64_t)per * IO;
	}
	*ns = mono_ns() - t0;
	return moved;
}

/* What a stream may move in ns at RATE: the rate, the 100 ms bucket and
 * the one frame a bucket goes into debt by. */
static void held(uint64_t moved, uint64_t ns, unsigned per, unsigned parked)
{
	uint64_t allowed = RATE * ns / 1000000000ull + RATE * QOS_BURST_NS / 1000000000ull + (uint64_t)per * IO;

	ck_assert_uint_gt(parked, 0);
	ck_assert_uint_le(moved, allowed);
	ck_assert_uint_ge(moved, RATE * ns / 1000000000ull / 2); /* and it does move */
}

START_TEST(test_sealed_write_stream)
{
	struct smbt_conn a;
	uint64_t fid = 0, moved, ns;
	uint32_t attrs;
	unsigned parked;

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "f", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	smbt_conn_cipher(&a, SMB2_ENCRYPTION_AES128_GCM);
	limit(RATE);
	moved = stream(&a, fid, SMB2_WRITE, 1, &parked, &ns);
	held(moved, ns, 1, parked);
	teardown();
}
END_TEST

START_TEST(test_sealed_read_compound_stream)
{
	struct smbt_conn a;
	uint64_t fid = 0, moved, ns, before;
	uint32_t attrs;
	unsigned parked;

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "f", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	smbt_conn_cipher(&a, SMB2_ENCRYPTION_AES128_CCM);
	/* 16 IOs of data to read, written sealed while unlimited: charged too */
	before = admitted();
	for (unsigned i = 0; i < 16; i++) {
		static uint8_t body[48 + IO];
		struct smb_wire_hdr h = { .command = SMB2_WRITE, .tree_id = a.t->id, .message_id = a.mid++ };
		const uint8_t *b = body;
		size_t n = write_body(body, fid, (uint64_t)i * IO), len;
		uint8_t *f;

		len = smbt_seal(&a, frame, smbt_chain_build(&a, &h, &b, &n, 1, frame, sizeof(frame)), sealed, sizeof(sealed));
		ck_assert_ptr_nonnull(f = malloc(len));
		memcpy(f, sealed, len);
		ck_assert_int_eq(smb_dispatch_recv(a.c, f, len), QOS_ADMIT);
		ck_assert_uint_eq(drain(&a, SMB2_WRITE), 1);
	}
	ck_assert_uint_eq(admitted() - before, 16ull * IO);
	limit(RATE);
	moved = stream(&a, fid, SMB2_READ, 2, &parked, &ns);
	held(moved, ns, 2, parked);
	teardown();
}
END_TEST

/* An unencrypted compound CREATE + related WRITE: the WRITE is charged on
 * the tree's volume before the frame is served (the open does not exist
 * yet when the frame is admitted). */
START_TEST(test_compound_create_write)
{
	struct smbt_conn a;
	static uint8_t wbody[48 + IO];
	uint8_t cbody[256];
	struct smb_wire_hdr h[2] = { { .command = SMB2_CREATE }, { .command = SMB2_WRITE } };
	const uint8_t *b[2] = { cbody, wbody };
	size_t n[2], len;
	uint64_t before;

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	n[0] = smbl_create_body(cbody, "c", ALL_ACCESS, 0, 0x40u, 3u /* OPEN_IF */);
	n[1] = write_body(wbody, SMB_WIRE_FID_RELATED, 0);
	h[0].tree_id = h[1].tree_id = a.t->id;
	h[0].message_id = a.mid++;
	h[1].message_id = a.mid++;
	h[1].flags = SMB2_FLAGS_RELATED_OPERATIONS;
	len = smbt_chain_build(&a, h, b, n, 2, frame, sizeof(frame));
	before = admitted();
	ck_assert_int_eq(smb_dispatch_admit(a.c, frame, len), QOS_ADMIT);
	ck_assert_uint_eq(admitted() - before, IO);
	teardown();
}
END_TEST

/* A lone signed WRITE of IO bytes at off through smb_dispatch_recv (the
 * loop's receive path): what admission said; its MessageId in *mid. */
static int lone_write(struct smbt_conn *tc, uint64_t fid, uint64_t off, uint64_t *mid)
{
	static uint8_t body[48 + IO];
	struct smb_wire_hdr h = { .command = SMB2_WRITE, .tree_id = tc->t->id, .message_id = tc->mid++ };
	const uint8_t *b = body;
	size_t n = write_body(body, fid, off), len = smbt_chain_build(tc, &h, &b, &n, 1, frame, sizeof(frame));
	uint8_t *f = malloc(len);

	ck_assert_ptr_nonnull(f);
	memcpy(f, frame, len);
	*mid = h.message_id;
	return smb_dispatch_recv(tc->c, f, len);
}

START_TEST(test_parked_interim)
{
	struct smbt_conn a;
	struct smb_wire_hdr h;
	uint64_t fid = 0, mid, aid, t0;
	uint32_t attrs;
	size_t len;
	bool sig_ok = false;
	int rel = 0;

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "f", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	limit(64u << 10);
	/* the first goes (the bucket into debt by it), answered at once, sync */
	ck_assert_int_eq(lone_write(&a, fid, 0, &mid), QOS_ADMIT);
	smb_conn_kick(a.c);
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 1);
	smbt_check_sync(&h, mid, STATUS_SUCCESS);
	/* the second waits about a second for the debt */
	t0 = mono_ns();
	ck_assert_int_eq(lone_write(&a, fid, IO, &mid), QOS_PARKED);
	ck_assert(smb_dispatch_admit_tick(srv)); /* it waits for its interim */
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 0);
	while (mono_ns() - t0 < (SMB_READ_PENDING_MS + 50) * 1000000ull)
		usleep(10000);
	smb_dispatch_admit_tick(srv);
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 1);
	aid = smbt_check_pending(&h, mid);
	ck_assert_uint_eq(h.command, SMB2_WRITE);
	ck_assert_uint_ge(h.credits, 1); /* the request's credit goes with the interim */
	ck_assert(!smb_dispatch_admit_tick(srv)); /* one interim, not one a turn */
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 0);
	ck_assert(a.c->is_parked);
	while (!rel) {
		usleep(1000);
		qos_poll(ts.store->qos, qos_now(ts.store->qos), released, &rel);
	}
	smb_dispatch_resume(a.c);
	ck_assert(!a.c->is_parked);
	smb_conn_kick(a.c);
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, &sig_ok), 1);
	smbt_check_final(&h, SMB2_WRITE, mid, aid, STATUS_SUCCESS);
	ck_assert_uint_eq(h.credits, 0);
	ck_assert(sig_ok);
	ck_assert_uint_eq(smb_wire_get_u32(rsp + SMB2_HDR_LEN + 4), IO); /* Count */
	teardown();
}
END_TEST

START_TEST(test_parked_compound_interim)
{
	struct smbt_conn a;
	struct smb_wire_hdr h, hh[2] = { { .command = SMB2_CREATE }, { .command = SMB2_READ } };
	struct smb_wire_chain ch;
	struct smb_wire_msg m;
	uint8_t cbody[256], rbody[64];
	const uint8_t *b[2] = { cbody, rbody };
	size_t n[2], len;
	uint64_t fid = 0, mid, aid, t0;
	uint32_t attrs;
	uint8_t *f;
	int rel = 0;

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "f", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	limit(64u << 10);
	/* the first goes (the bucket into debt by it) */
	ck_assert_int_eq(lone_write(&a, fid, 0, &mid), QOS_ADMIT);
	smb_conn_kick(a.c);
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 1);
	smbt_check_sync(&h, mid, STATUS_SUCCESS);
	/* CREATE of another file + READ of f's IO bytes, unrelated */
	n[0] = smbl_create_body(cbody, "g", ALL_ACCESS, 0, 0x40u, 3u /* OPEN_IF */);
	n[1] = read_body(rbody, fid, 0);
	hh[0].tree_id = hh[1].tree_id = a.t->id;
	hh[0].message_id = a.mid++;
	hh[1].message_id = mid = a.mid++;
	len = smbt_chain_build(&a, hh, b, n, 2, frame, sizeof(frame));
	ck_assert_ptr_nonnull(f = malloc(len));
	memcpy(f, frame, len);
	t0 = mono_ns();
	ck_assert_int_eq(smb_dispatch_recv(a.c, f, len), QOS_PARKED);
	ck_assert(smb_dispatch_admit_tick(srv)); /* it waits for its interim */
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 0);
	while (mono_ns() - t0 < (SMB_READ_PENDING_MS + 50) * 1000000ull)
		usleep(10000);
	smb_dispatch_admit_tick(srv);
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 1);
	aid = smbt_check_pending(&h, mid); /* the READ's, alone */
	ck_assert_uint_eq(h.command, SMB2_READ);
	ck_assert_uint_eq(h.next_command, 0);
	ck_assert_uint_ge(h.credits, 1);
	ck_assert(!smb_dispatch_admit_tick(srv)); /* one interim */
	while (!rel) {
		usleep(1000);
		qos_poll(ts.store->qos, qos_now(ts.store->qos), released, &rel);
	}
	smb_dispatch_resume(a.c);
	ck_assert(!a.c->is_parked);
	smb_conn_kick(a.c);
	ck_assert_int_eq(smbt_recv(&a, rsp, sizeof(rsp), &len, &h, NULL), 1);
	smb_wire_chain_init(&ch, rsp, len);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &m), 1);
	smbt_check_sync(&m.hdr, hh[0].message_id, STATUS_SUCCESS);
	ck_assert_uint_eq(m.hdr.command, SMB2_CREATE);
	ck_assert_uint_ge(m.hdr.credits, 1);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &m), 1);
	smbt_check_final(&m.hdr, SMB2_READ, mid, aid, STATUS_SUCCESS);
	ck_assert_uint_eq(m.hdr.credits, 0);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 4), IO); /* DataLength */
	ck_assert_mem_eq(m.p + m.body[2], data, IO); /* DataOffset from the header */
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_qos");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sealed_write_stream);
	tcase_add_test(tc, test_sealed_read_compound_stream);
	tcase_add_test(tc, test_compound_create_write);
	tcase_add_test(tc, test_parked_interim);
	tcase_add_test(tc, test_parked_compound_interim);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
