/* test_smb_send: the connection's send path (agent/smb/smb_srv.c,
 * smb_conn_send, issue 23): a reply that the socket takes whole goes out
 * from the caller's buffer (nothing is queued, so nothing was copied into
 * the connection's output buffer); a reply the socket takes in part has
 * the rest queued; a reply sent while an earlier one is still queued goes
 * after it; a reply sent when the queue can be written out first goes
 * from the caller's buffer; a big reply queued behind a full socket keeps
 * its own buffer (smb_conn_send_buf); several encrypted replies' rooms
 * queued at once are all kept once written (c->seal, c->seal_spare); the peer reads every frame whole and
 * in order. The receive side (smb_conn_read): a big frame's buffer, once
 * served, is the next frame's room (no fresh allocation per 1 MiB WRITE);
 * a frame bigger than the room gets its own, the room kept. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static struct smb_srv *srv;
static struct smbt_conn tc;

static void setup(void)
{
	smbt_store_up(&ts, &srv);
	smbt_conn_new(&tc, srv, 1, 0);
}

static void teardown(void)
{
	close(tc.peer);
	smbt_srv_free(srv);
	aqt_store_cleanup(&ts);
}

static uint8_t *pattern(size_t n, unsigned seed)
{
	uint8_t *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31u + seed + (i >> 12));
	return p;
}

/* Read n bytes from the client's end, flushing the server's queue while
 * the socket has room (the loop's part). */
static void drain(uint8_t *dst, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k;

		smb_conn_kick(tc.c);
		ck_assert(!tc.c->closing);
		k = recv(tc.peer, dst + got, n - got, MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			poll(&(struct pollfd){ .fd = tc.peer, .events = POLLIN }, 1, 10);
			continue;
		}
		ck_assert_int_gt(k, 0);
		got += (size_t)k;
	}
}

/* The frame of payload p (n bytes): its length prefix, then the bytes. */
static void expect_frame(const uint8_t *p, size_t n)
{
	uint8_t pfx[4], *got = malloc(n);

	ck_assert_ptr_nonnull(got);
	drain(pfx, 4);
	ck_assert_uint_eq(pfx[0], 0);
	ck_assert_uint_eq((size_t)pfx[1] << 16 | (size_t)pfx[2] << 8 | pfx[3], n);
	drain(got, n);
	ck_assert_int_eq(memcmp(got, p, n), 0);
	free(got);
}

/* Fill the server's socket to its last byte (the client reading none of
 * it): how many bytes it holds. */
static size_t fill_socket(void)
{
	uint8_t junk[4096];
	size_t fill = 0;
	ssize_t k;

	memset(junk, 0xee, sizeof(junk));
	while ((k = send(tc.c->fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
		fill += (size_t)k;
	while ((k = send(tc.c->fd, junk, 1, MSG_DONTWAIT)) > 0)
		fill += (size_t)k;
	return fill;
}

/* Read n bytes from the client's end without the loop's part: no flush of
 * the server's queue (the test decides when that happens). */
static void recv_all(uint8_t *dst, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = recv(tc.peer, dst + got, n - got, 0);

		ck_assert_int_gt(k, 0);
		got += (size_t)k;
	}
}

/* Read back the fill bytes fill_socket put in (with drain: the loop flushing). */
static void drain_fill(size_t fill)
{
	uint8_t *got = malloc(fill);

	ck_assert_ptr_nonnull(got);
	drain(got, fill);
	free(got);
}

/* the socket has room: the reply goes out at once, nothing is queued */
START_TEST(test_direct)
{
	uint8_t *a = pattern(32768, 1);

	smb_conn_send(tc.c, a, 32768);
	ck_assert_uint_eq(tc.c->out_len - tc.c->out_off, 0);
	ck_assert_uint_eq(tc.c->out_cap, 0);                   /* no output buffer was made */
	expect_frame(a, 32768);
	free(a);
}
END_TEST

/* 4 MiB: more than the socket takes; the rest is queued, the next reply
 * waits behind it, and both arrive whole and in order */
START_TEST(test_partial_then_queued)
{
	size_t na = 4u << 20, nb = 1000;
	uint8_t *a = pattern(na, 2), *b = pattern(nb, 3), *head, *tail;

	smb_conn_send(tc.c, a, na);
	ck_assert(!tc.c->closing);
	ck_assert_uint_gt(tc.c->out_len - tc.c->out_off, 0);   /* the socket did not take it all */
	ck_assert_uint_lt(tc.c->out_len - tc.c->out_off, na + 4);
	/* the client reads a little: the socket has room again, but the rest
	 * of a is still queued, so b must not go first */
	head = malloc(65536);
	ck_assert_ptr_nonnull(head);
	recv_all(head, 65536);
	smb_conn_send(tc.c, b, nb);
	ck_assert_uint_eq(head[0], 0);
	ck_assert_uint_eq((size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3], na);
	ck_assert_int_eq(memcmp(head + 4, a, 65536 - 4), 0);
	tail = malloc(na - (65536 - 4));
	ck_assert_ptr_nonnull(tail);
	drain(tail, na - (65536 - 4));
	ck_assert_int_eq(memcmp(tail, a + 65536 - 4, na - (65536 - 4)), 0);
	expect_frame(b, nb);
	free(head);
	free(tail);
	ck_assert_uint_eq(tc.c->out_len - tc.c->out_off, 0);
	free(a);
	free(b);
}
END_TEST

/* a full socket: the whole frame, prefix and payload, is queued, and goes
 * out after what the socket held */
START_TEST(test_full_socket)
{
	size_t nb = 70000, fill = fill_socket();
	uint8_t *b = pattern(nb, 4);

	smb_conn_send(tc.c, b, nb);                             /* the socket is full: all of it queued */
	ck_assert_uint_eq(tc.c->out_len - tc.c->out_off, nb + 4);
	drain_fill(fill);
	expect_frame(b, nb);
	free(b);
}
END_TEST

/* a reply queued behind a full socket; the client then reads all the
 * socket held, without the loop flushing: the next reply writes the
 * queued one first and, the queue being empty then, goes out itself from
 * the caller's buffer, nothing of it copied; both arrive whole, in order */
START_TEST(test_queued_then_direct)
{
	size_t nb = 70000, nc = 1000, fill = fill_socket();
	uint8_t *b = pattern(nb, 5), *cc = pattern(nc, 6), *got;

	ck_assert_uint_gt(fill, 2 * (nb + 4 + nc + 4)); /* room for both once read */
	got = malloc(fill);
	ck_assert_ptr_nonnull(got);
	smb_conn_send(tc.c, b, nb);
	ck_assert_uint_eq(tc.c->out_len - tc.c->out_off, nb + 4); /* queued whole */
	recv_all(got, fill); /* the client reads the socket empty; no kick */
	smb_conn_send(tc.c, cc, nc);
	ck_assert(!tc.c->closing);
	ck_assert_uint_eq(tc.c->out_len - tc.c->out_off, 0); /* b went out, then c, not queued */
	expect_frame(b, nb);
	expect_frame(cc, nc);
	free(got);
	free(b);
	free(cc);
}
END_TEST

/* a 1 MiB reply in a frame's buffer behind a full socket: its buffer is
 * taken into the queue, not copied (c->out never made); a reply sent
 * after it is queued behind it; both arrive whole and in order, and the
 * taken buffer, once written, is the room of the next reply (c->rsp) */
START_TEST(test_taken_not_copied)
{
	size_t na = 1u << 20, nb = 1000, fill = fill_socket();
	uint8_t *a = pattern(na, 7), *b = pattern(nb, 8);
	struct ut_buf ob;

	ut_buf_init(&ob, SMB_WIRE_FRAME_MAX);
	ck_assert_int_eq(ut_buf_add(&ob, a, na), AQ_OK);
	ut_buf_cleanup(&tc.c->rsp);
	smb_conn_send_buf(tc.c, &ob);
	ck_assert(!tc.c->closing);
	ck_assert_ptr_null(ob.p);                               /* taken */
	ck_assert_uint_eq(ob.len, 0);
	ck_assert_uint_eq(tc.c->out_cap, 0);                    /* nothing copied */
	ck_assert_uint_eq(tc.c->segs_bytes, na + 4);
	smb_conn_send(tc.c, b, nb);                             /* behind it */
	ck_assert_uint_eq(tc.c->segs_bytes, na + 4 + nb + 4);
	drain_fill(fill);
	expect_frame(a, na);
	expect_frame(b, nb);
	ck_assert_uint_eq(tc.c->segs_bytes, 0);
	ck_assert_ptr_null(tc.c->segs);
	ck_assert_ptr_nonnull(tc.c->rsp.p);                     /* a's room, kept for the next reply */
	ck_assert_uint_eq(tc.c->rsp.len, 0);
	free(a);
	free(b);
}
END_TEST

/* three encrypted replies' rooms (SMB_SRV_SEAL_MAX) and more queued at
 * once behind a full socket, as pipelined sealed READs are: once written,
 * c->seal and every spare keep one, not freed, so the next sealed replies
 * write into pages they have; those beyond the spares are freed */
START_TEST(test_seal_rooms_kept)
{
	size_t na = 256u << 10, fill = fill_socket();
	uint8_t *a[SMB_SRV_SEAL_SPARES + 2];
	unsigned n = SMB_SRV_SEAL_SPARES + 2, kept = 0;

	ut_buf_cleanup(&tc.c->seal);
	for (unsigned i = 0; i < n; i++) {
		struct ut_buf ob;

		a[i] = pattern(na, 20 + i);
		ut_buf_init(&ob, SMB_SRV_SEAL_MAX);
		ck_assert_int_eq(ut_buf_add(&ob, a[i], na), AQ_OK);
		smb_conn_send_buf(tc.c, &ob);
		ck_assert_ptr_null(ob.p); /* taken into the queue */
	}
	drain_fill(fill);
	for (unsigned i = 0; i < n; i++) {
		expect_frame(a[i], na);
		free(a[i]);
	}
	ck_assert_ptr_null(tc.c->segs);
	ck_assert_ptr_nonnull(tc.c->seal.p);
	ck_assert_uint_eq(tc.c->seal.len, 0);
	for (unsigned i = 0; i < SMB_SRV_SEAL_SPARES; i++)
		kept += tc.c->seal_spare[i].p != NULL;
	ck_assert_uint_eq(kept, SMB_SRV_SEAL_SPARES);
}
END_TEST

/* a small reply in a buffer: what the socket leaves of it is copied as
 * before (the buffer stays the caller's) */
START_TEST(test_small_buf_copied)
{
	size_t nb = 1000, fill = fill_socket();
	uint8_t *b = pattern(nb, 9);
	struct ut_buf ob;

	ut_buf_init(&ob, SMB_WIRE_FRAME_MAX);
	ck_assert_int_eq(ut_buf_add(&ob, b, nb), AQ_OK);
	smb_conn_send_buf(tc.c, &ob);
	ck_assert_ptr_nonnull(ob.p);                            /* still the caller's */
	ck_assert_ptr_null(tc.c->segs);
	ck_assert_uint_eq(tc.c->out_len - tc.c->out_off, nb + 4);
	ut_buf_cleanup(&ob);
	drain_fill(fill);
	expect_frame(b, nb);
	free(b);
}
END_TEST

/* An ECHO of n body bytes (its StructureSize, then zeros), signed, with
 * its length prefix: 4 + *len bytes, the caller's to free. */
static uint8_t *echo_frame(size_t n, size_t *len)
{
	struct smb_wire_hdr h = { .command = SMB2_ECHO, .message_id = tc.mid++ };
	uint8_t *body = calloc(1, n), *f = malloc(4 + SMB2_HDR_LEN + n);
	const uint8_t *bodies[1] = { body };

	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_nonnull(f);
	smbt_put16(body, 4);
	*len = smbt_chain_build(&tc, &h, bodies, &n, 1, f + 4, SMB2_HDR_LEN + n);
	f[0] = 0;
	f[1] = (uint8_t)(*len >> 16);
	f[2] = (uint8_t)(*len >> 8);
	f[3] = (uint8_t)*len;
	free(body);
	return f;
}

/* Write p[0..n) to the server's socket, the server reading as the loop
 * would (smb_conn_read) whenever the socket is full, and once after. */
static void feed(const uint8_t *p, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t k = send(tc.peer, p + put, n - put, MSG_DONTWAIT);

		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			k = 0;
		ck_assert_int_ge(k, 0);
		put += (size_t)k;
		ck_assert_int_eq(smb_conn_read(tc.c), 0);
	}
	ck_assert_int_eq(smb_conn_read(tc.c), 0);
	ck_assert(!tc.c->closing);
}

/* The ECHO answer is the next frame on the client's socket. */
static void expect_echo(void)
{
	uint8_t buf[256];
	struct smb_wire_hdr h;
	size_t len;

	smb_conn_kick(tc.c);
	ck_assert_int_eq(smbt_recv(&tc, buf, sizeof(buf), &len, &h, NULL), 1);
	ck_assert_uint_eq(h.command, SMB2_ECHO);
	ck_assert_uint_eq(h.status, 0);
}

START_TEST(test_frame_room_kept)
{
	size_t n = SMB_SRV_IN_KEEP + 4096, la, lb, lc, ls;
	uint8_t *a = echo_frame(n, &la), *b = echo_frame(n, &lb), *big = echo_frame(2 * n, &lc),
		*small = echo_frame(100, &ls), *room;

	ck_assert_ptr_null(tc.c->in_room);
	feed(a, 4 + la);
	expect_echo();
	room = tc.c->in_room; /* the served frame's buffer, kept */
	ck_assert_ptr_nonnull(room);
	ck_assert_uint_ge(tc.c->in_cap, la);
	/* the next frame, half sent: it is being received into that room */
	feed(b, 4 + lb / 2);
	ck_assert_ptr_eq(tc.c->frame, room);
	ck_assert_ptr_null(tc.c->in_room);
	feed(b + 4 + lb / 2, lb - lb / 2);
	expect_echo();
	ck_assert_ptr_eq(tc.c->in_room, room); /* and kept again */
	/* a bigger frame does not fit: its own buffer, the room left alone */
	feed(big, 4 + lc / 2);
	ck_assert_ptr_ne(tc.c->frame, room);
	ck_assert_ptr_eq(tc.c->in_room, room);
	feed(big + 4 + lc / 2, lc - lc / 2);
	expect_echo();
	ck_assert_ptr_eq(tc.c->in_room, room); /* one room: the bigger buffer was freed */
	/* a small frame fits the room and gives it back */
	feed(small, 4 + ls);
	expect_echo();
	ck_assert_ptr_eq(tc.c->in_room, room);
	free(a);
	free(b);
	free(big);
	free(small);
}
END_TEST

static Suite *send_suite(void)
{
	Suite *s = suite_create("smb_send");
	TCase *tc_core = tcase_create("core");

	tcase_add_checked_fixture(tc_core, setup, teardown);
	tcase_set_timeout(tc_core, 60);
	tcase_add_test(tc_core, test_direct);
	tcase_add_test(tc_core, test_partial_then_queued);
	tcase_add_test(tc_core, test_full_socket);
	tcase_add_test(tc_core, test_queued_then_direct);
	tcase_add_test(tc_core, test_taken_not_copied);
	tcase_add_test(tc_core, test_seal_rooms_kept);
	tcase_add_test(tc_core, test_small_buf_copied);
	tcase_add_test(tc_core, test_frame_room_kept);
	suite_add_tcase(s, tc_core);
	return s;
}

int main(void)
{
	return aqt_run(send_suite());
}
