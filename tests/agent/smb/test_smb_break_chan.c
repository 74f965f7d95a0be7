/* test_smb_break_chan: a break whose connection goes before it is
 * acknowledged is sent again on another (agent/smb/smb_lease.c
 * smb_lease_conn_gone, MS-SMB2 3.3.4.6/3.3.4.7), through the server's own
 * dispatcher (smb_harness.h, requests from smb_leasemsg.h):
 * - a lease held on two connections of one ClientGuid: its break went out
 *   on one, which drops; the break comes again on the other, with the same
 *   epoch and states, and its acknowledgment there lets the waiting CREATE
 *   go on at once (not at the break timeout);
 * - a BATCH oplock of a session with a second channel: the break went out
 *   on the session's first connection, which drops; the session goes on on
 *   the channel, the break comes again there, and its acknowledgment lets
 *   the waiting CREATE go on;
 * - a lease's break goes to its client's oldest connection, wherever its
 *   opens are (Windows, smbtorture smb2.lease.v2_complex1);
 * - a break already acknowledged is not sent again when its connection goes,
 *   nor one that went out on a connection that lives.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "api/api_error.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

#define ON API_INTENT_SMB_OPLOCKS

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
	/* a lost break must come again at once, not when the timeout revokes it */
	ck_assert_int_eq(vol_lease_set_timeout(ts.store, 3600000), 0);
}

static void teardown(void)
{
	smbt_conns_free(srv);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	smbt_export_down(&ts, srv, exp0);
}

static void conn_new(struct smbt_conn *tc, uint64_t key)
{
	smbt_conn_export(tc, srv, &ts, key, ON);
}

/* The lease break message m: key byte, epoch, flags, current, new. */
static void check_lease_break(const struct smbl_msg *m, uint8_t key, uint16_t epoch, uint32_t cur, uint32_t to)
{
	uint8_t k[16];

	memset(k, key, 16);
	ck_assert_uint_eq(m->h.command, SMB2_OPLOCK_BREAK);
	ck_assert_uint_eq(smb_wire_get_u16(m->body), 44);
	ck_assert_uint_eq(smb_wire_get_u16(m->body + 2), epoch);
	ck_assert_uint_eq(smb_wire_get_u32(m->body + 4), SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED);
	ck_assert(!memcmp(m->body + 8, k, 16));
	ck_assert_uint_eq(smb_wire_get_u32(m->body + 24), cur);
	ck_assert_uint_eq(smb_wire_get_u32(m->body + 28), to);
}

START_TEST(test_lease_break_again_on_client_conn)
{
	struct smbt_conn a, b, w;
	struct smbt_conn *got, *other;
	struct smbl_create ra, rb, q = { .name = "g" };
	struct smbl_msg m;
	uint16_t epoch;

	conn_new(&a, 1);
	conn_new(&b, 2);
	conn_new(&w, 3);
	memset(a.c->client_guid, 0xc1, 16);
	memset(b.c->client_guid, 0xc1, 16);
	ra = smbl_open_lease(&a, "g", (struct smbl_lease){ .v2 = true, .key = 0x55, .state = SMBL_RWH });
	ck_assert_uint_eq(ra.state, SMBL_RWH);
	rb = smbl_open_lease(&b, "g", (struct smbl_lease){ .v2 = true, .key = 0x55, .state = SMBL_RWH });
	ck_assert_uint_eq(rb.state, SMBL_RWH);
	smbl_create(&w, &q); /* another client takes W: the lease's break, once */
	ck_assert_uint_eq(q.status, STATUS_PENDING);
	smbt_loop_turn(srv);
	if (smbl_recv(&a, &m)) {
		got = &a, other = &b;
	} else {
		ck_assert_int_eq(smbl_recv(&b, &m), 1);
		got = &b, other = &a;
	}
	epoch = smb_wire_get_u16(m.body + 2);
	check_lease_break(&m, 0x55, epoch, SMBL_RWH, SMBL_RH);
	smbl_expect_nothing(other);
	/* that connection drops before the client read it */
	smb_conn_free(got->c);
	smbt_loop_turn(srv);
	ck_assert_int_eq(smbl_recv(other, &m), 1);
	check_lease_break(&m, 0x55, epoch, SMBL_RWH, SMBL_RH); /* the same break, its epoch */
	smbl_expect_nothing(&w);
	ck_assert_uint_eq(smbl_ack_lease(other, 0x55, SMBL_RH, NULL), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	smbl_create_final(&w, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	smbl_expect_nothing(other);
}
END_TEST

START_TEST(test_oplock_break_again_on_channel)
{
	struct smbt_conn a, b, w, bs;
	struct smbl_create r = { .name = "f", .oplock = SMB2_OPLOCK_LEVEL_BATCH }, q = { .name = "f" };
	struct smb_chan *ch = calloc(1, sizeof(*ch));
	uint8_t level = 0;

	ck_assert_ptr_nonnull(ch);
	conn_new(&a, 1);
	conn_new(&b, 2);
	conn_new(&w, 3);
	smbl_create(&a, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	/* a's session gets a second channel, on b's connection */
	ch->sess = a.s;
	ch->conn = b.c;
	ch->bound = true;
	memset(ch->signing, 7, sizeof(ch->signing)); /* the harness's key: the channel signs as the session */
	ch->next = a.s->chans;
	a.s->chans = ch;
	a.s->nchans++;
	ch->cnext = b.c->chans;
	b.c->chans = ch;
	smbl_create(&w, &q);
	ck_assert_uint_eq(q.status, STATUS_PENDING);
	smbt_loop_turn(srv);
	smbl_expect_oplock_break(&a, r.fid, SMB2_OPLOCK_LEVEL_II);
	smbl_expect_nothing(&b);
	/* the first connection drops: the session goes on on the channel, and so does the break */
	smb_conn_free(a.c);
	ck_assert_ptr_eq(ch->sess->conn, b.c);
	smbt_loop_turn(srv);
	smbl_expect_oplock_break(&b, r.fid, SMB2_OPLOCK_LEVEL_II);
	smbl_expect_nothing(&w);
	bs = (struct smbt_conn){ .c = b.c, .peer = b.peer, .s = ch->sess, .t = a.t, .mid = b.mid };
	ck_assert_uint_eq(smbl_ack_oplock(&bs, r.fid, SMB2_OPLOCK_LEVEL_II, &level), STATUS_SUCCESS);
	ck_assert_uint_eq(level, SMB2_OPLOCK_LEVEL_II);
	b.mid = bs.mid;
	smbt_loop_turn(srv);
	smbl_create_final(&w, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	smbl_expect_nothing(&b);
}
END_TEST

/* A lease's break goes to its client's oldest connection, whichever
 * connection its opens came on and in which order (Windows; smbtorture
 * smb2.lease.v2_complex1), also for a lease open only on a later one. */
START_TEST(test_lease_break_on_first_conn)
{
	struct smbt_conn a, b, w;
	struct smbt_conn *first[2] = { &a, &b }, *second[2] = { &b, &a };
	const char *name[2] = { "g1", "g2" };
	struct smbl_msg m;
	struct smbl_create r3, q3 = { .name = "g3" };

	conn_new(&a, 1);
	conn_new(&b, 2);
	conn_new(&w, 3);
	memset(a.c->client_guid, 0xc1, 16);
	memset(b.c->client_guid, 0xc1, 16);
	for (int i = 0; i < 2; i++) {
		uint8_t key = (uint8_t)(0x70 + i);
		struct smbl_create r1, r2, q = { .name = name[i] };

		r1 = smbl_open_lease(first[i], name[i], (struct smbl_lease){ .v2 = true, .key = key, .state = SMBL_RWH });
		r2 = smbl_open_lease(second[i], name[i], (struct smbl_lease){ .v2 = true, .key = key, .state = SMBL_RWH });
		ck_assert_uint_eq(r2.state, SMBL_RWH);
		smbl_create(&w, &q);
		ck_assert_uint_eq(q.status, STATUS_PENDING);
		smbt_loop_turn(srv);
		smbl_expect_nothing(&b);
		ck_assert_int_eq(smbl_recv(&a, &m), 1); /* a is the client's oldest connection */
		check_lease_break(&m, key, (uint16_t)(r1.epoch + 1), SMBL_RWH, SMBL_RH);
		ck_assert_uint_eq(smbl_ack_lease(second[i], key, SMBL_RH, NULL), STATUS_SUCCESS);
		smbt_loop_turn(srv);
		smbl_create_final(&w, &q);
		ck_assert_uint_eq(q.status, STATUS_SUCCESS);
		(void)first;
	}
	/* a lease open on b alone breaks on a too */
	r3 = smbl_open_lease(&b, "g3", (struct smbl_lease){ .v2 = true, .key = 0x73, .state = SMBL_RWH });
	ck_assert_uint_eq(r3.state, SMBL_RWH);
	smbl_create(&w, &q3);
	ck_assert_uint_eq(q3.status, STATUS_PENDING);
	smbt_loop_turn(srv);
	smbl_expect_nothing(&b);
	ck_assert_int_eq(smbl_recv(&a, &m), 1);
	check_lease_break(&m, 0x73, (uint16_t)(r3.epoch + 1), SMBL_RWH, SMBL_RH);
	ck_assert_uint_eq(smbl_ack_lease(&b, 0x73, SMBL_RH, NULL), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	smbl_create_final(&w, &q3);
	ck_assert_uint_eq(q3.status, STATUS_SUCCESS);
}
END_TEST

START_TEST(test_nothing_again)
{
	struct smbt_conn a, b, w, x;
	struct smbl_create ra, rb, q = { .name = "g" }, q2 = { .name = "h" };
	struct smbl_create rh = { .name = "h", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_msg m;
	struct smbt_conn *got, *other;

	conn_new(&a, 1);
	conn_new(&b, 2);
	conn_new(&w, 3);
	conn_new(&x, 4);
	memset(a.c->client_guid, 0xc1, 16);
	memset(b.c->client_guid, 0xc1, 16);
	ra = smbl_open_lease(&a, "g", (struct smbl_lease){ .v2 = true, .key = 0x66, .state = SMBL_RWH });
	rb = smbl_open_lease(&b, "g", (struct smbl_lease){ .v2 = true, .key = 0x66, .state = SMBL_RWH });
	ck_assert_uint_eq(rb.state, SMBL_RWH);
	smbl_create(&w, &q);
	ck_assert_uint_eq(q.status, STATUS_PENDING);
	smbt_loop_turn(srv);
	if (smbl_recv(&a, &m)) {
		got = &a, other = &b;
	} else {
		ck_assert_int_eq(smbl_recv(&b, &m), 1);
		got = &b, other = &a;
	}
	/* acknowledged, then the connection goes: nothing comes again */
	ck_assert_uint_eq(smbl_ack_lease(got, 0x66, SMBL_RH, NULL), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	smbl_create_final(&w, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	/* x's BATCH on h, broken by w; then an unrelated connection (a's or b's) goes */
	smbl_create(&x, &rh);
	ck_assert_uint_eq(rh.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	smbl_create(&w, &q2);
	ck_assert_uint_eq(q2.status, STATUS_PENDING);
	smbt_loop_turn(srv);
	smbl_expect_oplock_break(&x, rh.fid, SMB2_OPLOCK_LEVEL_II);
	smb_conn_free(got->c);
	smbt_loop_turn(srv);
	smbl_expect_nothing(other);
	smbl_expect_nothing(&x); /* its break went out on a live connection: not again */
	ck_assert_uint_eq(smbl_ack_oplock(&x, rh.fid, SMB2_OPLOCK_LEVEL_II, NULL), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	smbl_create_final(&w, &q2);
	ck_assert_uint_eq(q2.status, STATUS_SUCCESS);
	(void)ra;
}
END_TEST

static Suite *smb_break_chan_suite(void)
{
	Suite *s = suite_create("smb_break_chan");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_lease_break_again_on_client_conn);
	tcase_add_test(tc, test_oplock_break_again_on_channel);
	tcase_add_test(tc, test_lease_break_on_first_conn);
	tcase_add_test(tc, test_nothing_again);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_break_chan_suite());
}
