/* test_smb_seal: the sealed (TRANSFORM) path of the dispatcher
 * (agent/smb/smb_dispatch.c: smb_dispatch_unseal decrypts a frame in place,
 * smb_dispatch_send_encrypted seals every reply into the connection's kept
 * room c->seal) on the in-process harness (smb_harness.h), issue 18:
 * - on one connection (AES-128-GCM), sealed WRITEs of 1 byte to 1 MiB,
 *   small and big in turn, through smb_dispatch_recv (the loop's path: the
 *   frame's buffer kept as the next one's room), each followed by a sealed
 *   READ of what it wrote through smb_dispatch_frame: every answer opens
 *   with the session's key (its tag verifies), succeeds and READ returns
 *   the bytes written; the sealing room is the same buffer after every
 *   reply unless it had to grow (no fresh one per reply);
 * - a sealed compound WRITE + READ + READ (AES-256-CCM): three answers in
 *   one sealed frame, the READs' bytes those the WRITE wrote;
 * - a sealed frame with one ciphertext byte flipped: refused, nothing
 *   answered, the connection closing (as before);
 * - a frame that decrypts but is no SMB2 message: the connection closes
 *   and the session is not switched to encryption (s->encrypt false).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define BIG (1u << 20)
#define RD_MAX (64u * 1024u) /* a READ's most here: served on the loop */
#define FRAME_CAP (BIG + 4096u)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static uint8_t data[BIG];
static uint8_t frame[FRAME_CAP], sealed[FRAME_CAP], rsp[FRAME_CAP], wbody[48 + BIG];

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
}

/* A WRITE body of len bytes of data (from data + off) at off on fid. */
static size_t write_body(uint8_t *b, uint64_t fid, uint64_t off, uint32_t len)
{
	memset(b, 0, 48);
	smbt_put16(b, 49);
	smbt_put16(b + 2, SMB2_HDR_LEN + 48);
	smbt_put32(b + 4, len);
	smbt_put64(b + 8, off);
	smbt_put64(b + 16, fid);
	smbt_put64(b + 24, fid);
	memcpy(b + 48, data + off, len);
	return 48 + len;
}

/* Seal the chain of count messages and hand it to the server: through
 * smb_dispatch_recv (a heap frame, taken) or smb_dispatch_frame. */
static void send_sealed(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *const *b, const size_t *n,
			size_t count, bool recv_path)
{
	size_t len = smbt_seal(tc, frame, smbt_chain_build(tc, h, b, n, count, frame, sizeof(frame)), sealed,
			       sizeof(sealed));

	if (recv_path) {
		uint8_t *f = malloc(len);

		ck_assert_ptr_nonnull(f);
		memcpy(f, sealed, len);
		ck_assert_int_eq(smb_dispatch_recv(tc->c, f, len), QOS_ADMIT);
	} else {
		smb_dispatch_frame(tc->c, sealed, len);
	}
	smb_conn_kick(tc->c);
}

/* The next sealed answer's messages (opened: the tag verified) into m, their count. */
static size_t recv_sealed(struct smbt_conn *tc, struct smb_wire_msg *m, size_t max)
{
	struct smb_wire_chain ch;
	struct smb_wire_hdr h;
	size_t len, k = 0;

	smbt_wait_msg(tc);
	ck_assert_int_eq(smbt_recv_sealed(tc, rsp, sizeof(rsp), &len, &h), 1);
	smb_wire_chain_init(&ch, rsp, len);
	while (k < max && smb_wire_chain_next(&ch, &m[k]) == 1)
		k++;
	return k;
}

static void check_read(const struct smb_wire_msg *m, uint64_t mid, uint64_t off, uint32_t len)
{
	ck_assert_uint_eq(m->hdr.command, SMB2_READ);
	ck_assert_uint_eq(m->hdr.message_id, mid);
	ck_assert_uint_eq(m->hdr.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u32(m->body + 4), len); /* DataLength */
	ck_assert_mem_eq(m->p + m->body[2], data + off, len);  /* DataOffset from the header */
}

START_TEST(test_sealed_sizes)
{
	static const uint32_t sizes[] = { 1, BIG, 333, 65536, 4097, 300000, 2, BIG, 70000, 17 };
	struct smbt_conn a;
	uint64_t fid = 0;
	uint32_t attrs;
	const char *room = NULL;
	size_t room_cap = 0;

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "f", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	smbt_conn_cipher(&a, SMB2_ENCRYPTION_AES128_GCM);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t off = (i * 4099u) % 8192u;
		uint32_t len = sizes[i] + off > BIG ? BIG - (uint32_t)off : sizes[i];
		uint32_t rlen = len > RD_MAX ? RD_MAX : len;
		struct smb_wire_hdr h = { .command = SMB2_WRITE, .tree_id = a.t->id, .message_id = a.mid++ };
		uint8_t rbody[49];
		const uint8_t *b = wbody;
		size_t n = write_body(wbody, fid, off, len);
		struct smb_wire_msg m[1];

		send_sealed(&a, &h, &b, &n, 1, true);
		ck_assert_uint_eq(recv_sealed(&a, m, 1), 1);
		ck_assert_uint_eq(m[0].hdr.command, SMB2_WRITE);
		ck_assert_uint_eq(m[0].hdr.status, STATUS_SUCCESS);
		ck_assert_uint_eq(smb_wire_get_u32(m[0].body + 4), len); /* Count */
		ck_assert(a.s->encrypt);
		/* the READ back, from its offset (no fresh sealing room) */
		h = (struct smb_wire_hdr){ .command = SMB2_READ, .tree_id = a.t->id, .message_id = a.mid++ };
		b = rbody;
		n = smbt_read_body(rbody, fid, off, rlen);
		send_sealed(&a, &h, &b, &n, 1, false);
		ck_assert_uint_eq(recv_sealed(&a, m, 1), 1);
		check_read(&m[0], h.message_id, off, rlen);
		ck_assert_ptr_nonnull(a.c->seal.p);
		if (a.c->seal.cap == room_cap) /* the same room, reply after reply, unless it grew */
			ck_assert_ptr_eq(a.c->seal.p, room);
		else
			ck_assert_uint_gt(a.c->seal.cap, room_cap);
		room = a.c->seal.p;
		room_cap = a.c->seal.cap;
	}
	ck_assert(!a.c->closing);
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

START_TEST(test_sealed_compound)
{
	struct smbt_conn a;
	uint64_t fid = 0;
	uint32_t attrs;
	uint8_t r1[49], r2[49];
	struct smb_wire_hdr h[3] = { { .command = SMB2_WRITE }, { .command = SMB2_READ }, { .command = SMB2_READ } };
	const uint8_t *b[3] = { wbody, r1, r2 };
	size_t n[3];
	struct smb_wire_msg m[4];

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "f", false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	smbt_conn_cipher(&a, SMB2_ENCRYPTION_AES256_CCM);
	for (int i = 0; i < 3; i++) {
		h[i].tree_id = a.t->id;
		h[i].message_id = a.mid++;
	}
	n[0] = write_body(wbody, fid, 0, 100000);
	n[1] = smbt_read_body(r1, fid, 10, 5000);
	n[2] = smbt_read_body(r2, fid, 60000, 40000);
	send_sealed(&a, h, b, n, 3, true);
	ck_assert_uint_eq(recv_sealed(&a, m, 4), 3);
	ck_assert_uint_eq(m[0].hdr.command, SMB2_WRITE);
	ck_assert_uint_eq(m[0].hdr.status, STATUS_SUCCESS);
	check_read(&m[1], h[1].message_id, 10, 5000);
	check_read(&m[2], h[2].message_id, 60000, 40000);
	ck_assert(!a.c->closing);
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

START_TEST(test_sealed_tampered)
{
	struct smbt_conn a;
	uint8_t body[4] = { 4, 0, 0, 0 };
	struct smb_wire_hdr h = { .command = SMB2_ECHO };
	const uint8_t *b = body;
	size_t n = sizeof(body), len;
	uint8_t *f, got[64];

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_cipher(&a, SMB2_ENCRYPTION_AES128_GCM);
	h.tree_id = a.t->id;
	h.message_id = a.mid++;
	len = smbt_seal(&a, frame, smbt_chain_build(&a, &h, &b, &n, 1, frame, sizeof(frame)), sealed, sizeof(sealed));
	ck_assert_ptr_nonnull(f = malloc(len));
	memcpy(f, sealed, len);
	f[SMB2_TRANSFORM_LEN + 30] ^= 0x01; /* one byte of the ciphertext */
	ck_assert_int_eq(smb_dispatch_recv(a.c, f, len), QOS_ADMIT);
	smb_conn_kick(a.c);
	ck_assert(a.c->closing);
	ck_assert(!a.s->encrypt);
	ck_assert_int_lt(recv(a.peer, got, sizeof(got), MSG_DONTWAIT), 1); /* nothing answered */
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

START_TEST(test_sealed_not_smb2)
{
	struct smbt_conn a;
	uint8_t junk[128], got[64];
	size_t len;

	setup();
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_cipher(&a, SMB2_ENCRYPTION_AES128_GCM);
	memset(junk, 0x41, sizeof(junk)); /* decrypts, but no SMB2 header */
	len = smbt_seal(&a, junk, sizeof(junk), sealed, sizeof(sealed));
	smb_dispatch_frame(a.c, sealed, len);
	smb_conn_kick(a.c);
	ck_assert(a.c->closing);
	ck_assert(!a.s->encrypt); /* its plain requests are not refused for it */
	ck_assert_int_lt(recv(a.peer, got, sizeof(got), MSG_DONTWAIT), 1);
	smbt_export_down(&ts, srv, exp0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_seal");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sealed_sizes);
	tcase_add_test(tc, test_sealed_compound);
	tcase_add_test(tc, test_sealed_tampered);
	tcase_add_test(tc, test_sealed_not_smb2);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
