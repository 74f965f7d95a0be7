/* test_smb_lock: SMB2 LOCK's sequence numbers (agent/smb/smb_lock.c,
 * MS-SMB2 3.3.5.14) through the server's dispatcher (smb_harness.h):
 * - on an SMB 3.x connection that negotiated multichannel, a LOCK resent
 *   with the LockSequence (bucket 1-64, number) that bucket last succeeded
 *   with is answered STATUS_SUCCESS and changes nothing (a resent lock is
 *   not refused as a conflict with itself, a resent unlock does not unlock
 *   what was locked again meanwhile); another number is done, and a
 *   refused one leaves the bucket empty; bucket 0 and 65 are not checked;
 * - a lock that waits (STATUS_PENDING) fills its bucket when it is granted,
 *   so its resend is a replay; one cancelled leaves the bucket empty;
 * - a durable open is checked on a 3.x connection without multichannel;
 * - SMB 2.1, or 3.x without multichannel and not durable: not checked (a
 *   resend is done again).
 */
#include <check.h>
#include <stdlib.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt.h"

static struct vol_store *store;
static struct smb_srv *srv;

static void setup(void)
{
	static const uint8_t key[VOL_KEY_LEN] = { 1 };

	ck_assert_int_eq(vol_store_new(key, &store), 0);
	smbt_srv_new(store, &srv);
}

/* A connection of dialect d (caps: server_caps), one open (FileId 10) of the
 * test file. */
static struct smb_open *conn_open(struct smbt_conn *tc, uint64_t key, uint16_t d, uint32_t caps)
{
	struct smb_open *o;

	smbt_conn_new(tc, srv, key, 0);
	tc->c->dialect = d;
	tc->c->signing = SMB2_SIGNING_HMAC_SHA256; /* as the harness signs */
	tc->c->server_caps = caps;
	o = smbt_open_new(tc, 10);
	o->locks = vol_store_locks(store);
	o->lkey = (struct vol_lock_key){ .fsid = 1, .dev = 1, .ino = 42 };
	o->owner = (struct vol_lock_owner){ .proto = VOL_LOCK_SMB, .client = tc->c->key, .id = 10 };
	return o;
}

/* LOCK of [100, 200) on open 10 with LockSequence seq and flags sent; its
 * MessageId. */
static uint64_t lock_send(struct smbt_conn *tc, uint32_t seq, uint32_t flags)
{
	uint8_t body[48] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_LOCK, .message_id = tc->mid++, .tree_id = tc->t->id };

	smbt_put16(body, 48);
	smbt_put16(body + 2, 1);
	smbt_put32(body + 4, seq);
	smbt_put64(body + 8, 10);
	smbt_put64(body + 16, 10);
	smbt_put64(body + 24, 100);
	smbt_put64(body + 32, 100);
	smbt_put32(body + 40, flags);
	smbt_send(tc, &h, body, sizeof(body));
	return h.message_id;
}

/* The next answer on tc (one must wait): its header. */
static struct smb_wire_hdr next_rsp(struct smbt_conn *tc)
{
	struct smb_wire_hdr rh;
	uint8_t buf[512];
	size_t len;
	bool sig_ok;

	ck_assert_int_eq(smbt_recv(tc, buf, sizeof(buf), &len, &rh, &sig_ok), 1);
	return rh;
}

/* lock_send and its answer: its status (STATUS_PENDING for an interim). */
static uint32_t lock(struct smbt_conn *tc, uint32_t seq, uint32_t flags)
{
	uint64_t mid = lock_send(tc, seq, flags);
	struct smb_wire_hdr rh = next_rsp(tc);

	ck_assert_uint_eq(rh.message_id, mid);
	return rh.status;
}

#define NOW (SMB2_LOCKFLAG_EXCLUSIVE | SMB2_LOCKFLAG_FAIL_IMMEDIATELY)
#define WAIT SMB2_LOCKFLAG_EXCLUSIVE
#define UNLOCK SMB2_LOCKFLAG_UNLOCK

START_TEST(test_replay_multichannel)
{
	struct smbt_conn a;

	setup();
	conn_open(&a, 1, SMB2_DIALECT_311, SMB2_GLOBAL_CAP_MULTI_CHANNEL);
	/* bucket 0: not checked */
	ck_assert_uint_eq(lock(&a, 0x001, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x001, NOW), STATUS_LOCK_NOT_GRANTED);
	ck_assert_uint_eq(lock(&a, 0x001, UNLOCK), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x001, UNLOCK), STATUS_RANGE_NOT_LOCKED);
	/* bucket 1, number 1: its resends (lock or unlock) are done already */
	ck_assert_uint_eq(lock(&a, 0x011, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x011, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x011, UNLOCK), STATUS_SUCCESS);
	/* still locked: another number is done, and refused */
	ck_assert_uint_eq(lock(&a, 0x012, NOW), STATUS_LOCK_NOT_GRANTED);
	ck_assert_uint_eq(lock(&a, 0x012, NOW), STATUS_LOCK_NOT_GRANTED);
	ck_assert_uint_eq(lock(&a, 0x021, NOW), STATUS_LOCK_NOT_GRANTED);
	/* bucket 1 emptied by the refusal: number 1 is done again */
	ck_assert_uint_eq(lock(&a, 0x011, NOW), STATUS_LOCK_NOT_GRANTED);
	/* bucket 65: not checked */
	ck_assert_uint_eq(lock(&a, 0x411, UNLOCK), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x411, UNLOCK), STATUS_RANGE_NOT_LOCKED);
	/* bucket 64: an unlock's resend does not unlock the lock taken since */
	ck_assert_uint_eq(lock(&a, 0x411, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x402, UNLOCK), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x402, UNLOCK), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x402, NOW), STATUS_SUCCESS); /* same number: nothing locked */
	ck_assert_uint_eq(lock(&a, 0x403, UNLOCK), STATUS_RANGE_NOT_LOCKED);
}
END_TEST

START_TEST(test_replay_waited)
{
	struct smbt_conn a, b;
	struct smb_wire_hdr rh;
	uint64_t mid, aid;

	setup();
	conn_open(&a, 1, SMB2_DIALECT_311, SMB2_GLOBAL_CAP_MULTI_CHANNEL);
	conn_open(&b, 2, SMB2_DIALECT_311, SMB2_GLOBAL_CAP_MULTI_CHANNEL);
	/* b holds the range: a's blocking lock (bucket 3, number 1) waits */
	ck_assert_uint_eq(lock(&b, 0, NOW), STATUS_SUCCESS);
	mid = lock_send(&a, 0x031, WAIT);
	rh = next_rsp(&a);
	aid = smbt_check_pending(&rh, mid);
	/* b's unlock wakes it: granted, the bucket holds its number now */
	ck_assert_uint_eq(lock(&b, 0, UNLOCK), STATUS_SUCCESS);
	ck_assert(smbt_loop_turn(srv));
	rh = next_rsp(&a);
	smbt_check_final(&rh, SMB2_LOCK, mid, aid, STATUS_SUCCESS);
	/* its resend is a replay: answered at once, not a second wait on
	 * itself (a lock of the same range on the same open conflicts) */
	ck_assert_uint_eq(lock(&a, 0x031, WAIT), STATUS_SUCCESS);
	ck_assert_uint_eq(a.c->npending, 0);
	ck_assert_uint_eq(lock(&b, 0, NOW), STATUS_LOCK_NOT_GRANTED); /* still a's */
	/* a waiting lock cancelled leaves its bucket empty: its resend is done
	 * again (and refused), not taken for a replay */
	mid = lock_send(&b, 0x041, WAIT);
	rh = next_rsp(&b);
	aid = smbt_check_pending(&rh, mid);
	smbt_cancel(&b, true, aid);
	rh = next_rsp(&b);
	smbt_check_final(&rh, SMB2_LOCK, mid, aid, STATUS_CANCELLED);
	ck_assert_uint_eq(lock(&b, 0x041, NOW), STATUS_LOCK_NOT_GRANTED);
}
END_TEST

START_TEST(test_replay_durable)
{
	struct smbt_conn a;
	struct smb_open *o;

	setup();
	o = conn_open(&a, 1, SMB2_DIALECT_300, 0);
	o->durable = true;
	ck_assert_uint_eq(lock(&a, 0x051, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x051, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x052, NOW), STATUS_LOCK_NOT_GRANTED);
}
END_TEST

START_TEST(test_not_checked)
{
	struct smbt_conn a, b;

	setup();
	/* SMB 2.1 (no resilient handles) */
	conn_open(&a, 1, SMB2_DIALECT_210, 0);
	ck_assert_uint_eq(lock(&a, 0x011, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&a, 0x011, NOW), STATUS_LOCK_NOT_GRANTED);
	ck_assert_uint_eq(lock(&a, 0x011, UNLOCK), STATUS_SUCCESS);
	/* 3.x without multichannel, the open not durable */
	conn_open(&b, 2, SMB2_DIALECT_311, 0);
	ck_assert_uint_eq(lock(&b, 0x011, NOW), STATUS_SUCCESS);
	ck_assert_uint_eq(lock(&b, 0x011, NOW), STATUS_LOCK_NOT_GRANTED);
}
END_TEST

static Suite *smb_lock_suite(void)
{
	Suite *s = suite_create("smb_lock");
	TCase *tc = tcase_create("sequence");

	tcase_add_test(tc, test_replay_multichannel);
	tcase_add_test(tc, test_replay_waited);
	tcase_add_test(tc, test_replay_durable);
	tcase_add_test(tc, test_not_checked);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_lock_suite());
}
