/* test_smb_async: blocking LOCKs answered asynchronously (agent/smb/smb_async.c)
 * through the server's own dispatcher, driven by smb_harness.h: requests are
 * signed frames handed to smb_dispatch_frame on connections whose socket is
 * one end of a socketpair, responses are read from the other end, and the
 * loop's part (the eventfd a waiter's wake writes, smb_async_run) is played
 * by the test.
 * - a lock that waits gets an interim STATUS_PENDING (ASYNC_COMMAND, a
 *   nonzero AsyncId, credits, unsigned), then the grant after the holder
 *   unlocks (same AsyncId and MessageId, CreditResponse 0, signed), and holds;
 * - SMB2 CANCEL (by AsyncId, and by MessageId) ends it STATUS_CANCELLED and
 *   gets no response of its own; the waiter leaves the store's table;
 * - past SMB_ASYNC_PER_CONN waiting requests a LOCK is refused at once
 *   with STATUS_INSUFFICIENT_RESOURCES, and past SMB_ASYNC_NODE_MAX on the
 *   node (over many connections) too;
 * - a connection that goes frees its waiters (table and node counts);
 * - the open of a waiting lock closing: STATUS_RANGE_NOT_LOCKED; its tree
 *   disconnecting, the holder's open in it too: granted (then released).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

static void conn_new(struct smbt_conn *tc, uint64_t key)
{
	smbt_conn_new(tc, srv, key, 0);
}

/* An open of the one test file (same lock key for every open). */
static struct smb_open *open_new(struct smbt_conn *tc, uint64_t id)
{
	struct smb_open *o = smbt_open_new(tc, id);

	o->locks = vol_store_locks(store);
	o->lkey = (struct vol_lock_key){ .fsid = 1, .dev = 1, .ino = 42 };
	o->owner = (struct vol_lock_owner){ .proto = VOL_LOCK_SMB, .client = tc->c->key, .id = id };
	return o;
}

/* LOCK of one element on open id; returns its MessageId. */
static uint64_t lock_req(struct smbt_conn *tc, uint64_t id, uint64_t off, uint64_t len, uint32_t flags)
{
	uint8_t body[48 + 24] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_LOCK, .message_id = tc->mid++, .tree_id = tc->t->id };

	smbt_put16(body, 48);
	smbt_put16(body + 2, 1);
	smbt_put64(body + 8, id);
	smbt_put64(body + 16, id);
	smbt_put64(body + 24, off);
	smbt_put64(body + 32, len);
	smbt_put32(body + 40, flags);
	smbt_send(tc, &h, body, 48);
	return h.message_id;
}

struct rsp {
	struct smb_wire_hdr h;
	bool sig_ok;
};

/* The next response frame on tc's socket: 1, or 0 when there is none. */
static int recv_rsp(struct smbt_conn *tc, struct rsp *r)
{
	uint8_t buf[4096];
	size_t len;

	return smbt_recv(tc, buf, sizeof(buf), &len, &r->h, &r->sig_ok);
}

static void expect_pending(struct smbt_conn *tc, uint64_t mid, uint64_t *async_id)
{
	struct rsp r;

	ck_assert_int_eq(recv_rsp(tc, &r), 1);
	*async_id = smbt_check_pending(&r.h, mid);
	ck_assert(!(r.h.flags & SMB2_FLAGS_SIGNED)); /* 3.3.4.2: not signed */
	ck_assert_uint_ge(r.h.credits, 1);
}

static void expect_final(struct smbt_conn *tc, uint64_t mid, uint64_t async_id, uint32_t status)
{
	struct rsp r;

	ck_assert_int_eq(recv_rsp(tc, &r), 1);
	smbt_check_final(&r.h, SMB2_LOCK, mid, async_id, status);
	ck_assert_uint_eq(r.h.credits, 0);
	ck_assert(r.sig_ok);
}

static void expect_sync(struct smbt_conn *tc, uint64_t mid, uint32_t status)
{
	struct rsp r;

	ck_assert_int_eq(recv_rsp(tc, &r), 1);
	smbt_check_sync(&r.h, mid, status);
}


#define EXCL SMB2_LOCKFLAG_EXCLUSIVE
#define NOW (SMB2_LOCKFLAG_EXCLUSIVE | SMB2_LOCKFLAG_FAIL_IMMEDIATELY)

START_TEST(test_pending_then_grant)
{
	struct smbt_conn a;
	struct smb_open *o2;
	uint64_t mid, aid;
	struct rsp r;

	setup();
	conn_new(&a, 1);
	open_new(&a, 10);
	o2 = open_new(&a, 11);
	expect_sync(&a, lock_req(&a, 10, 0, 10, EXCL), STATUS_SUCCESS);
	mid = lock_req(&a, 11, 5, 10, EXCL);
	expect_pending(&a, mid, &aid);
	ck_assert_uint_eq(a.c->npending, 1);
	ck_assert_uint_eq(vol_lock_waiters(vol_store_locks(store)), 1);
	ck_assert(!smbt_loop_turn(srv)); /* nothing released: nothing woke */
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	expect_sync(&a, lock_req(&a, 10, 0, 10, SMB2_LOCKFLAG_UNLOCK), STATUS_SUCCESS);
	ck_assert(smbt_loop_turn(srv)); /* the unlock woke the waiter */
	expect_final(&a, mid, aid, STATUS_SUCCESS);
	ck_assert_uint_eq(a.c->npending, 0);
	ck_assert_uint_eq(srv->npending, 0);
	ck_assert_uint_eq(vol_lock_waiters(vol_store_locks(store)), 0);
	/* o2 holds [5, 15) now: o1 cannot take it */
	ck_assert_int_eq(vol_lock_test(o2->locks, &o2->lkey, &(struct vol_lock_owner){ VOL_LOCK_SMB, 1, 10 }, 6, 1, false),
			 -EAGAIN);
	expect_sync(&a, lock_req(&a, 10, 6, 1, NOW), STATUS_LOCK_NOT_GRANTED);
}
END_TEST

START_TEST(test_cancel)
{
	struct smbt_conn a;
	uint64_t mid, aid;
	struct rsp r;

	setup();
	conn_new(&a, 1);
	open_new(&a, 10);
	open_new(&a, 11);
	expect_sync(&a, lock_req(&a, 10, 0, 10, EXCL), STATUS_SUCCESS);
	/* by AsyncId */
	mid = lock_req(&a, 11, 0, 10, EXCL);
	expect_pending(&a, mid, &aid);
	smbt_cancel(&a, true, aid + 1); /* names no request: nothing */
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	ck_assert_uint_eq(a.c->npending, 1);
	smbt_cancel(&a, true, aid);
	expect_final(&a, mid, aid, STATUS_CANCELLED);
	ck_assert_int_eq(recv_rsp(&a, &r), 0); /* the CANCEL itself has no response */
	ck_assert_uint_eq(a.c->npending, 0);
	ck_assert_uint_eq(vol_lock_waiters(vol_store_locks(store)), 0);
	/* by MessageId (a sync CANCEL) */
	mid = lock_req(&a, 11, 0, 10, EXCL);
	expect_pending(&a, mid, &aid);
	smbt_cancel(&a, false, mid);
	expect_final(&a, mid, aid, STATUS_CANCELLED);
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	/* the holder's unlock then grants nothing to anyone */
	expect_sync(&a, lock_req(&a, 10, 0, 10, SMB2_LOCKFLAG_UNLOCK), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
}
END_TEST

START_TEST(test_cap_per_conn)
{
	struct smbt_conn a;
	uint64_t aid;
	unsigned i;

	setup();
	conn_new(&a, 1);
	open_new(&a, 10);
	open_new(&a, 11);
	expect_sync(&a, lock_req(&a, 10, 0, 1000, EXCL), STATUS_SUCCESS);
	for (i = 0; i < SMB_ASYNC_PER_CONN; i++) {
		uint64_t mid = lock_req(&a, 11, i, 1, EXCL);

		expect_pending(&a, mid, &aid);
	}
	ck_assert_uint_eq(a.c->npending, SMB_ASYNC_PER_CONN);
	expect_sync(&a, lock_req(&a, 11, 500, 1, EXCL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert_uint_eq(a.c->npending, SMB_ASYNC_PER_CONN);
	ck_assert_uint_eq(vol_lock_waiters(vol_store_locks(store)), SMB_ASYNC_PER_CONN);
	/* a lock that can be granted still is */
	expect_sync(&a, lock_req(&a, 11, 2000, 1, EXCL), STATUS_SUCCESS);
}
END_TEST

START_TEST(test_cap_per_node)
{
	static struct smbt_conn cs[SMB_ASYNC_NODE_MAX / SMB_ASYNC_PER_CONN + 1];
	const unsigned full = SMB_ASYNC_NODE_MAX / SMB_ASYNC_PER_CONN;
	struct smbt_conn h;
	uint64_t aid;

	setup();
	conn_new(&h, 1);
	open_new(&h, 10);
	expect_sync(&h, lock_req(&h, 10, 0, 1000, EXCL), STATUS_SUCCESS);
	for (unsigned k = 0; k <= full; k++) {
		conn_new(&cs[k], 100 + k);
		open_new(&cs[k], 20);
	}
	for (unsigned k = 0; k < full; k++)
		for (unsigned i = 0; i < SMB_ASYNC_PER_CONN; i++)
			expect_pending(&cs[k], lock_req(&cs[k], 20, i, 1, EXCL), &aid);
	ck_assert_uint_eq(srv->npending, SMB_ASYNC_NODE_MAX);
	/* a connection with nothing waiting is refused: the node is full */
	expect_sync(&cs[full], lock_req(&cs[full], 20, 0, 1, EXCL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert_uint_eq(cs[full].c->npending, 0);
	/* one connection going makes room */
	smb_conn_free(cs[0].c);
	ck_assert_uint_eq(srv->npending, SMB_ASYNC_NODE_MAX - SMB_ASYNC_PER_CONN);
	expect_pending(&cs[full], lock_req(&cs[full], 20, 0, 1, EXCL), &aid);
}
END_TEST

START_TEST(test_disconnect_frees)
{
	struct smbt_conn a, b;
	uint64_t aid;
	struct rsp r;

	setup();
	conn_new(&a, 1);
	conn_new(&b, 2);
	open_new(&a, 10);
	open_new(&b, 20);
	expect_sync(&a, lock_req(&a, 10, 0, 10, EXCL), STATUS_SUCCESS);
	expect_pending(&b, lock_req(&b, 20, 0, 10, EXCL), &aid);
	expect_pending(&b, lock_req(&b, 20, 2, 3, EXCL), &aid);
	ck_assert_uint_eq(srv->npending, 2);
	ck_assert_uint_eq(vol_lock_waiters(vol_store_locks(store)), 2);
	smb_conn_free(b.c);
	ck_assert_uint_eq(srv->npending, 0);
	ck_assert_uint_eq(vol_lock_waiters(vol_store_locks(store)), 0);
	/* the holder's unlock wakes nobody, and b's socket got nothing more */
	expect_sync(&a, lock_req(&a, 10, 0, 10, SMB2_LOCKFLAG_UNLOCK), STATUS_SUCCESS);
	ck_assert(!smbt_loop_turn(srv));
	ck_assert_int_eq(recv_rsp(&b, &r), 0);
}
END_TEST

START_TEST(test_open_closes)
{
	struct smbt_conn a;
	struct smb_open *o2;
	uint64_t mid, aid;

	setup();
	conn_new(&a, 1);
	open_new(&a, 10);
	o2 = open_new(&a, 11);
	expect_sync(&a, lock_req(&a, 10, 0, 10, EXCL), STATUS_SUCCESS);
	mid = lock_req(&a, 11, 0, 10, EXCL);
	expect_pending(&a, mid, &aid);
	smb_open_free(a.s, o2, false); /* what CLOSE does */
	smb_conn_kick(a.c);
	expect_final(&a, mid, aid, STATUS_RANGE_NOT_LOCKED);
	ck_assert_uint_eq(vol_lock_waiters(vol_store_locks(store)), 0);
	/* the tree goes with the holder's open and the waiter's: granted */
	o2 = open_new(&a, 12);
	mid = lock_req(&a, 12, 0, 10, EXCL);
	expect_pending(&a, mid, &aid);
	smb_tree_free(a.s, a.t);
	smb_conn_kick(a.c);
	expect_final(&a, mid, aid, STATUS_SUCCESS);
	ck_assert_uint_eq(vol_lock_count(vol_store_locks(store), NULL), 0);
	ck_assert_uint_eq(a.c->npending, 0);
}
END_TEST

static Suite *smb_async_suite(void)
{
	Suite *s = suite_create("smb_async");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120); /* a loaded CI machine: the node cap sends 1100 frames */

	tcase_add_test(tc, test_pending_then_grant);
	tcase_add_test(tc, test_cancel);
	tcase_add_test(tc, test_cap_per_conn);
	tcase_add_test(tc, test_cap_per_node);
	tcase_add_test(tc, test_disconnect_frees);
	tcase_add_test(tc, test_open_closes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_async_suite());
}
