/* test_smb_durable: durable handles v1 and v2 (agent/smb/smb_durable.c)
 * through the server's own dispatcher (smb_harness.h, requests from
 * smb_leasemsg.h); a dropped TCP connection is smb_conn_free, as the loop
 * does when the peer goes.
 * - granted (DH2Q answered with its Timeout, 0 -> 60 s, capped at 300 s,
 *   never PERSISTENT; DHnQ answered) to a BATCH oplock or a lease with H,
 *   not to Level II or an R lease;
 * - the connection drops: the open is kept with its grant and its
 *   byte-range lock (another open still conflicts); a DH2C from the same
 *   user with the CreateGuid gets the same FileId back, with its oplock,
 *   and can write through it; closed, its lock goes;
 * - refused: another CreateGuid, an unknown FileId, a leased handle from
 *   a connection of another ClientGuid (OBJECT_NAME_NOT_FOUND), another
 *   user (ACCESS_DENIED), a leased
 *   v1 handle without its lease key (OBJECT_NAME_NOT_FOUND), a leased
 *   handle under another file name (INVALID_PARAMETER); a v2 durable
 *   context with another one in one CREATE is INVALID_PARAMETER, while a
 *   v1 reconnect may carry DHnQ too;
 * - taken back whatever the OplockLevel of the reconnect (the lease
 *   context names the lease), by the v1 form for a v2 handle; with the
 *   allocation size its CREATE asked (AlSi) and its file position;
 * - its timeout passes: closed (grant and locks gone), a reconnect finds
 *   nothing;
 * - another client's open that must break its caching closes it at once
 *   (it cannot acknowledge) and goes on, also one that its share modes
 *   refuse (the kept BATCH caches the handle);
 * - a CLOSE is final: nothing is kept when the connection drops after;
 * - a DHnC is looked up by FileId.Persistent alone (3.3.5.9.7): one the
 *   client holds no kept open by is OBJECT_NAME_NOT_FOUND, any Volatile
 *   goes; no persistent handles are offered (not in NEGOTIATE's
 *   Capabilities), so the PERSISTENT flag of DH2Q and DH2C is ignored.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static const uint8_t guid_a[16] = { 0xA1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
static const uint8_t guid_b[16] = { 0xB2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

static void setup(void)
{
	smbt_store_up(&ts, &srv);
}

static void teardown(void)
{
	smbl_store_down(&ts, srv);
}

/* A connection of user `user` (project p1) on share "docs". */
static void conn_new(struct smbt_conn *tc, uint64_t key, const char *user)
{
	smbt_conn_user(tc, srv, &ts, key, user, "docs");
}

/* The durable open q (its DHnQ or DH2Q context set) by tc: SUCCESS, and
 * the durable context it asked answered. */
static void open_durable(struct smbt_conn *tc, struct smbl_create *q)
{
	smbl_create(tc, q);
	ck_assert_uint_eq(q->status, STATUS_SUCCESS);
	ck_assert_str_eq(q->dh_got, q->dh);
}

/* open_durable, then tc's TCP connection drops. Its FileId. */
static uint64_t open_and_drop(struct smbt_conn *tc, struct smbl_create *q)
{
	open_durable(tc, q);
	smb_conn_free(tc->c);
	return q->fid;
}

/* The reconnect q (its durable context set) by tc takes the kept open fid
 * back: SUCCESS with the same FileId. */
static void reconnect_ok(struct smbt_conn *tc, struct smbl_create *q, uint64_t fid)
{
	smbl_create(tc, q);
	ck_assert_uint_eq(q->status, STATUS_SUCCESS);
	ck_assert_uint_eq(q->fid, fid);
}

/* reconnect_ok for the last kept open, a BATCH oplock's: the oplock comes
 * back with it and nothing stays kept. */
static void reconnect_batch(struct smbt_conn *tc, struct smbl_create *q, uint64_t fid)
{
	reconnect_ok(tc, q, fid);
	ck_assert_uint_eq(q->oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	ck_assert_uint_eq(srv->ndurable, 0);
}

/* rb by tc must break the caching of a kept open, which cannot acknowledge
 * it: PENDING, the kept open closed at the next turn of the loop, then rb
 * goes on to SUCCESS. */
static void open_closes_kept(struct smbt_conn *tc, struct smbl_create *rb)
{
	smbl_create(tc, rb);
	ck_assert_uint_eq(rb->status, STATUS_PENDING);
	smbt_loop_turn(srv);
	ck_assert_uint_eq(srv->ndurable, 0);
	smbt_loop_turn(srv);
	smbl_create_final(tc, rb);
	ck_assert_uint_eq(rb->status, STATUS_SUCCESS);
}

/* A foreign open on f1's file (a lock owner of another client), or NULL. */
static struct smb_open *find_open(struct smbt_conn *tc, uint64_t fid)
{
	for (struct smb_open *o = tc->s->opens; o; o = o->next)
		if (o->id == fid)
			return o;
	return NULL;
}

START_TEST(test_grant)
{
	struct smbt_conn a;
	struct smbl_create q;

	conn_new(&a, 1, "alice");
	q = (struct smbl_create){ .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2q(&q, 30000, 0, guid_a);
	open_durable(&a, &q);
	ck_assert_uint_eq(q.dh_timeout, 30000);
	ck_assert_uint_eq(q.dh_flags, 0);
	ck_assert_uint_eq(smbl_close(&a, q.fid), STATUS_SUCCESS);
	/* PERSISTENT is not offered; Timeout 0 is the default, a huge one the cap */
	q = (struct smbl_create){ .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2q(&q, 0, 0x2u, guid_a);
	open_durable(&a, &q);
	ck_assert_uint_eq(q.dh_timeout, 60000);
	ck_assert_uint_eq(q.dh_flags, 0);
	ck_assert_uint_eq(smbl_close(&a, q.fid), STATUS_SUCCESS);
	q = (struct smbl_create){ .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2q(&q, 1000000000u, 0, guid_a);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.dh_timeout, 300000);
	ck_assert_uint_eq(smbl_close(&a, q.fid), STATUS_SUCCESS);
	/* Level II and an R lease cannot keep a handle: not durable */
	q = (struct smbl_create){ .name = "f2", .oplock = SMB2_OPLOCK_LEVEL_II };
	smbl_dh2q(&q, 0, 0, guid_a);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_str_eq(q.dh_got, "");
	q = (struct smbl_create){ .name = "f3", .lease = { .on = true, .key = 0x33, .state = SMBL_R } };
	smbl_dhnq(&q);
	smbl_create(&a, &q);
	ck_assert_str_eq(q.dh_got, "");
	q = (struct smbl_create){ .name = "f4", .lease = { .on = true, .key = 0x44, .state = SMBL_RH } };
	smbl_dhnq(&q);
	open_durable(&a, &q);
	/* a v2 durable context with another one (a reconnect and a v1 request) */
	q = (struct smbl_create){ .name = "f6", .oplock = SMB2_OPLOCK_LEVEL_BATCH, .dh_extra = "DHnQ" };
	smbl_dh2c(&q, 12345, guid_a);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_INVALID_PARAMETER);
	/* a DHnQ of the wrong size */
	q = (struct smbl_create){ .name = "f5", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	q.dh = "DHnQ";
	q.dh_len = 8;
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_INVALID_PARAMETER);
}
END_TEST

START_TEST(test_reconnect_keeps_locks)
{
	struct smbt_conn a, b, x;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smb_wire_lock_elem e = { .offset = 0, .length = 10, .flags = SMB2_LOCKFLAG_EXCLUSIVE };
	struct smb_open *o, *other;
	uint64_t fid;

	conn_new(&a, 1, "alice");
	conn_new(&x, 9, "xavier");
	smbl_dh2q(&q, 30000, 0, guid_a);
	open_durable(&a, &q);
	fid = q.fid;
	ck_assert_ptr_nonnull(o = find_open(&a, fid));
	ck_assert_int_eq(smb_lock_try(o, &e), 0);
	/* another client's lock owner on the same file */
	other = smbt_open_new(&x, 999);
	other->locks = o->locks;
	other->lkey = o->lkey;
	other->owner = (struct vol_lock_owner){ .proto = VOL_LOCK_SMB, .client = 9, .id = 999 };
	smb_conn_free(a.c); /* the TCP connection drops */
	ck_assert_uint_eq(srv->ndurable, 1);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1);
	ck_assert_int_eq(smb_lock_try(other, &e), -EAGAIN); /* its lock stands */
	conn_new(&b, 2, "alice");
	q = (struct smbl_create){ .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2c(&q, fid, guid_a);
	reconnect_batch(&b, &q, fid);
	ck_assert_uint_eq(smbl_write(&b, fid, "back"), STATUS_SUCCESS);
	ck_assert_int_eq(smb_lock_try(other, &e), -EAGAIN);
	ck_assert_uint_eq(smbl_close(&b, fid), STATUS_SUCCESS);
	ck_assert_int_eq(smb_lock_try(other, &e), 0); /* closed: its lock went */
	vol_lock_release(other->locks, &other->owner);
}
END_TEST

START_TEST(test_reconnect_refused)
{
	struct smbt_conn a, b, c, d;
	struct smbl_create q = { .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_RWH } };
	uint64_t fid;

	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 30000, 0, guid_a);
	fid = open_and_drop(&a, &q);
	conn_new(&b, 2, "alice");
	conn_new(&c, 3, "bob");
	conn_new(&d, 4, "alice");
	memset(d.c->client_guid, 0xD4, 16);
	q = (struct smbl_create){ .name = "f1", .lease = { .on = true, .v2 = true, .key = 0x11, .state = SMBL_RWH } };
	smbl_dh2c(&q, fid, guid_b); /* another CreateGuid */
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
	smbl_dh2c(&q, fid + 100, guid_a); /* another FileId */
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
	smbl_dh2c(&q, fid, guid_a); /* right but from another client: the lease is its client's */
	smbl_create(&d, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
	q.lease.key = 0x12; /* another lease key */
	smbl_dh2c(&q, fid, guid_a);
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
	q.lease.key = 0x11;
	q.name = "f2"; /* the lease's file by another name */
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_INVALID_PARAMETER);
	q.name = "f1";
	smbl_create(&c, &q); /* another user */
	ck_assert_uint_eq(q.status, STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(srv->ndurable, 1);
	reconnect_ok(&b, &q, fid);
	ck_assert(q.ctx);
	ck_assert_uint_eq(q.state, SMBL_RWH);
}
END_TEST

START_TEST(test_v1_reconnect)
{
	struct smbt_conn a, b;
	struct smbl_create q = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RWH } };
	uint64_t fid;

	conn_new(&a, 1, "alice");
	smbl_dhnq(&q);
	fid = open_and_drop(&a, &q);
	conn_new(&b, 2, "alice");
	q = (struct smbl_create){ .name = "f1" };
	smbl_dhnc(&q, fid); /* a leased handle without its lease */
	q.dh_extra = "DHnQ"; /* Samba's client sends DHnQ with DHnC: ignored */
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
	q = (struct smbl_create){ .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RWH } };
	smbl_dhnc(&q, fid);
	q.dh_extra = "DHnQ";
	reconnect_ok(&b, &q, fid);
	ck_assert_uint_eq(q.state, SMBL_RWH);
}
END_TEST

START_TEST(test_timeout_closes)
{
	struct smbt_conn a, b;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	uint64_t fid;

	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 300, 0, guid_a);
	fid = open_and_drop(&a, &q);
	ck_assert_uint_eq(q.dh_timeout, 300);
	smb_async_tick(srv);
	ck_assert_uint_eq(srv->ndurable, 1); /* not yet */
	usleep(400 * 1000);
	smb_async_tick(srv);
	ck_assert_uint_eq(srv->ndurable, 0);
	ck_assert_uint_eq(vol_lease_count(ts.store), 0);
	conn_new(&b, 2, "alice");
	q = (struct smbl_create){ .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2c(&q, fid, guid_a);
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
}
END_TEST

START_TEST(test_conflict_closes_disconnected)
{
	struct smbt_conn a, b;
	struct smbl_create q = { .name = "f1", .lease = { .on = true, .key = 0x11, .state = SMBL_RWH } };
	struct smbl_create rb = { .name = "f1", .lease = { .on = true, .key = 0x22, .state = SMBL_RWH } };

	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 60000, 0, guid_a);
	open_and_drop(&a, &q);
	conn_new(&b, 2, "bob");
	open_closes_kept(&b, &rb); /* W must be broken: the holder cannot ack, so the kept open is closed */
	ck_assert_uint_eq(rb.state, SMBL_RWH); /* the file is b's alone */
}
END_TEST

START_TEST(test_share_conflict_closes_disconnected)
{
	struct smbt_conn a, b;
	struct smbl_create q = { .name = "f1", .share_none = true, .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_create rb = { .name = "f1" };

	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 60000, 0, guid_a);
	open_and_drop(&a, &q);
	conn_new(&b, 2, "bob");
	open_closes_kept(&b, &rb); /* its share mode refuses b, but it only kept the handle cached */
}
END_TEST

/* The size of name in the volume's root, -1 when it is not there. */
static long file_size(const char *name)
{
	struct vol_export *e = vol_export_at(ts.store, 0);
	const struct vol_cred cred = { 0 };
	struct vol_obj root, f;
	long size = -1;

	ck_assert_int_eq(vol_root(e, &root), 0);
	if (vol_lookup(&root, &cred, name, strlen(name), &f) == 0) {
		size = (long)f.st.st_size;
		vol_obj_cleanup(&f);
	}
	vol_obj_cleanup(&root);
	vol_export_unref(e);
	return size;
}

#define FILE_DELETE_ON_CLOSE 0x1000u

/* A delete-on-close open may be durable; kept, it deletes its file when it
 * is closed (here: broken by another open), as its close would have
 * (smbtorture smb2.durable-open.delete_on_close1); reconnected, its close
 * deletes it (delete_on_close2). */
START_TEST(test_delete_on_close_durable)
{
	struct smbt_conn a, b, c;
	struct smbl_create q = { .name = "f1", .share_none = true, .oplock = SMB2_OPLOCK_LEVEL_BATCH,
				 .options = FILE_DELETE_ON_CLOSE, .access = 0x3u | 0x10000u };
	struct smbl_create rb = q;

	conn_new(&a, 1, "alice");
	smbl_dhnq(&q);
	open_durable(&a, &q);
	ck_assert_uint_eq(smbl_write(&a, q.fid, "x"), STATUS_SUCCESS);
	smb_conn_free(a.c);
	ck_assert_uint_eq(srv->ndurable, 1);
	ck_assert_int_eq(file_size("f1"), 1); /* kept: not deleted yet */
	conn_new(&b, 2, "alice");
	open_closes_kept(&b, &rb); /* the kept BATCH must go: closed, and its file with it */
	ck_assert_int_eq(file_size("f1"), 0); /* a new file: the byte went with the old one */
	ck_assert_uint_eq(smbl_close(&b, rb.fid), STATUS_SUCCESS);
	ck_assert_int_eq(file_size("f1"), -1);
	/* reconnected, its close deletes it */
	q = (struct smbl_create){ .name = "f2", .share_none = true, .oplock = SMB2_OPLOCK_LEVEL_BATCH,
				  .options = FILE_DELETE_ON_CLOSE, .access = 0x3u | 0x10000u };
	smbl_dh2q(&q, 60000, 0, guid_a);
	open_and_drop(&b, &q);
	ck_assert_int_eq(file_size("f2"), 0);
	conn_new(&c, 3, "alice");
	rb = (struct smbl_create){ .name = "f2" };
	smbl_dh2c(&rb, q.fid, guid_a);
	reconnect_ok(&c, &rb, q.fid);
	ck_assert_int_eq(file_size("f2"), 0);
	ck_assert_uint_eq(smbl_close(&c, rb.fid), STATUS_SUCCESS);
	ck_assert_int_eq(file_size("f2"), -1);
}
END_TEST

/* A reconnect names the lease by its context alone (smbtorture
 * smb2.durable-open.reopen2-lease sends OplockLevel 0x78), and the v1 form
 * takes a v2 handle (durable-v2-open.reopen2b); an oplock's handle asked
 * back with a lease context is not found. */
START_TEST(test_reconnect_forms)
{
	struct smbt_conn a, b, c;
	struct smbl_create q = { .name = "f1", .lease = { .on = true, .key = 0x21, .state = SMBL_RWH } };
	struct smbl_create p = { .name = "f2", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	uint64_t fid;

	conn_new(&a, 1, "alice");
	smbl_dhnq(&q);
	open_durable(&a, &q);
	fid = q.fid;
	smbl_dh2q(&p, 0, 0, guid_a);
	open_durable(&a, &p);
	smb_conn_free(a.c);
	ck_assert_uint_eq(srv->ndurable, 2);
	conn_new(&b, 2, "alice");
	q = (struct smbl_create){ .name = "f1", .oplock = 0x78, .oplock_as_is = true,
				  .lease = { .on = true, .key = 0x21, .state = 0 } };
	smbl_dhnc(&q, fid);
	reconnect_ok(&b, &q, fid);
	ck_assert_uint_eq(q.oplock_got, 0xFF);
	ck_assert_uint_eq(q.state, SMBL_RWH); /* what it holds, not what it asked */
	ck_assert_uint_eq(q.action_got, 1);   /* FILE_OPENED */
	/* the BATCH handle with a lease context: not found, still kept */
	q = (struct smbl_create){ .name = "f2", .lease = { .on = true, .key = 0x22, .state = SMBL_RWH } };
	smbl_dh2c(&q, p.fid, guid_a);
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
	ck_assert_uint_eq(srv->ndurable, 1);
	/* the v1 form for the v2 handle (an oplock's: any client) */
	conn_new(&c, 3, "alice");
	memset(c.c->client_guid, 0xC3, 16);
	q = (struct smbl_create){ .name = "f2" };
	smbl_dhnc(&q, p.fid);
	reconnect_batch(&c, &q, p.fid);
}
END_TEST

/* What the open holds comes back with it (smbtorture
 * smb2.durable-open.alloc-size, file-position): the AllocationSize its CREATE
 * asked (AlSi), answered while the file has fewer blocks, and the
 * FilePositionInformation the client set. */
START_TEST(test_reconnect_keeps_alloc_and_position)
{
	struct smbt_conn a, b, x;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH, .alsi = 65536 };
	struct smbl_create y = { .name = "f1", .alsi = 1 << 20 };
	uint8_t pos[8], out[64];
	size_t n = 0;
	uint64_t fid;

	conn_new(&a, 1, "alice");
	conn_new(&x, 9, "xavier");
	smbl_dh2q(&q, 0, 0, guid_a);
	open_durable(&a, &q);
	ck_assert_uint_eq(q.alloc_got, 65536);
	ck_assert_uint_eq(q.eof_got, 0);
	fid = q.fid;
	smbt_put64(pos, 0x1000);
	ck_assert_uint_eq(smbl_set_info(&a, fid, 14, pos, sizeof(pos)), STATUS_SUCCESS); /* FilePositionInformation */
	smb_conn_free(a.c);
	conn_new(&b, 2, "alice");
	q = (struct smbl_create){ .name = "f1" };
	smbl_dh2c(&q, fid, guid_a);
	reconnect_ok(&b, &q, fid);
	ck_assert_uint_eq(q.alloc_got, 65536);
	ck_assert_uint_eq(smbl_query_info(&b, fid, 14, 8, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(smb_wire_get_u64(out), 0x1000);
	ck_assert_uint_eq(smbl_query_info(&b, fid, 5, 24, out, &n), STATUS_SUCCESS); /* FileStandardInformation */
	ck_assert_uint_eq(smb_wire_get_u64(out), 65536);
	ck_assert_uint_eq(smbl_close(&b, fid), STATUS_SUCCESS);
	/* an open the CREATE did not make (its AlSi ignored) answers the blocks: none */
	smbl_create(&x, &y);
	ck_assert_uint_eq(y.status, STATUS_SUCCESS);
	ck_assert_uint_eq(y.action_got, 1);
	ck_assert_uint_eq(y.alloc_got, 0);
	ck_assert_uint_eq(smbl_close(&x, y.fid), STATUS_SUCCESS);
}
END_TEST

/* A session set up with PreviousSessionId (smbtorture
 * smb2.durable-open.reopen1a): the previous session of the same user ends
 * (its requests are USER_SESSION_DELETED) with its durable opens kept, its
 * other opens closed; a reconnect gets the open back; another user's
 * session is left alone. */
START_TEST(test_previous_session_ends)
{
	struct smbt_conn a, b, m;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_create o2 = { .name = "f2" };
	struct smbl_create rb = { .name = "f1" };
	struct smb_req r = { 0 };
	static struct smb_tree gone;

	conn_new(&a, 1, "alice");
	conn_new(&m, 3, "mallory");
	memset(a.c->client_guid, 0xA1, 16);
	smbl_dhnq(&q);
	open_durable(&a, &q);
	smbl_create(&a, &o2); /* not durable: closed with the session */
	ck_assert_uint_eq(o2.status, STATUS_SUCCESS);
	/* another user naming alice's session: nothing happens */
	r.c = m.c;
	r.sess = m.s;
	smb_durable_prev_session(&r, a.s->id);
	ck_assert(!a.s->logged_off);
	/* alice from another client */
	conn_new(&b, 2, "alice");
	memset(b.c->client_guid, 0xB2, 16);
	r.c = b.c;
	r.sess = b.s;
	gone.id = a.t->id; /* the session's trees go with it: a's requests still name it */
	smb_durable_prev_session(&r, a.s->id);
	a.t = &gone;
	ck_assert(a.s->logged_off);
	ck_assert_ptr_null(a.s->opens);
	ck_assert_uint_eq(srv->ndurable, 1);
	rb = (struct smbl_create){ .name = "f3" };
	smbl_create(&a, &rb);
	ck_assert_uint_eq(rb.status, STATUS_USER_SESSION_DELETED);
	ck_assert(file_size("f2") == 0); /* closed, not deleted */
	rb = (struct smbl_create){ .name = "f1" };
	smbl_dhnc(&rb, q.fid);
	reconnect_batch(&b, &rb, q.fid);
}
END_TEST

/* A LOGOFF keeps the session's durable opens, closes the others (smbtorture
 * smb2.durable-open.reopen4); the v2 reconnect form takes a v1 handle when
 * it names no CreateGuid (reopen2-lease). */
START_TEST(test_logoff_keeps_durable)
{
	struct smbt_conn a, b;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_create o2 = { .name = "f2", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	static const uint8_t none[16];
	uint8_t body[4] = { 4, 0, 0, 0 };
	struct smb_wire_hdr h = { .command = SMB2_LOGOFF };
	struct smbl_msg m;
	uint64_t fid;

	conn_new(&a, 1, "alice");
	smbl_dhnq(&q);
	open_durable(&a, &q);
	smbl_create(&a, &o2); /* not durable */
	ck_assert_uint_eq(o2.status, STATUS_SUCCESS);
	smbl_send(&a, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(&a, &m), 1);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->ndurable, 1);
	ck_assert_uint_eq(vol_lease_count(ts.store), 1); /* f2's BATCH went with its open */
	conn_new(&b, 2, "alice");
	fid = srv->durable->id;
	q = (struct smbl_create){ .name = "f1" };
	smbl_dh2c(&q, fid, none); /* the v2 form, no CreateGuid, for the v1 handle */
	reconnect_batch(&b, &q, fid);
}
END_TEST

/* A DHnC names the kept open by its FileId.Persistent (MS-SMB2 3.3.5.9.7:
 * "look up an existing open in the GlobalOpenTable by doing a lookup with
 * the FileId.Persistent portion"; 2.2.14.1: the Volatile half "can be
 * changed when an open is reconnected"). A Persistent the client holds no
 * kept open by (one never given, 0, another user's live open) is
 * OBJECT_NAME_NOT_FOUND, the right one from another user ACCESS_DENIED,
 * each leaving the open kept; the right one with any Volatile takes it
 * back, answered with the server's FileId, which then works. */
START_TEST(test_v1_reconnect_fileid)
{
	struct smbt_conn a, b, c, x;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_create o = { .name = "f2", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	uint64_t fid, bad[3];

	conn_new(&a, 1, "alice");
	smbl_dhnq(&q);
	fid = open_and_drop(&a, &q);
	conn_new(&x, 4, "carol");
	smbl_create(&x, &o); /* live, not kept */
	ck_assert_uint_eq(o.status, STATUS_SUCCESS);
	conn_new(&b, 2, "alice");
	conn_new(&c, 3, "bob");
	bad[0] = fid + 1000;
	bad[1] = 0;
	bad[2] = o.fid;
	for (int i = 0; i < 3; i++) {
		q = (struct smbl_create){ .name = "f1" };
		smbl_dhnc(&q, bad[i]);
		smbl_create(&b, &q);
		ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
		ck_assert_uint_eq(srv->ndurable, 1);
	}
	q = (struct smbl_create){ .name = "f1" };
	smbl_dhnc(&q, fid);
	smbl_create(&c, &q);
	ck_assert_uint_eq(q.status, STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(srv->ndurable, 1);
	q = (struct smbl_create){ .name = "f1" };
	smbl_dhnc(&q, fid);
	smbt_put64(q.dh_data + 8, fid ^ 0x5A5Au); /* another Volatile */
	reconnect_batch(&b, &q, fid);
	ck_assert_uint_eq(smbl_close(&b, fid), STATUS_SUCCESS);
}
END_TEST

/* We offer no persistent handles (no SMB2_GLOBAL_CAP_PERSISTENT_HANDLES,
 * even to a client that offers it; no continuously available share), so
 * SMB2_DHANDLE_FLAG_PERSISTENT is ignored, as 3.3.5.9.10 and 3.3.5.9.12
 * act on it only with both: a DH2Q asking it (with bits not defined) gets
 * a durable handle whose Flags are 0; a DH2C asking it for an unknown
 * FileId is OBJECT_NAME_NOT_FOUND (no lookup by its CreateGuid), and for
 * the kept handle takes it back. */
START_TEST(test_dh2_persistent_flag)
{
	struct smbt_conn a, b, n;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smb_wire_hdr h = { .command = SMB2_NEGOTIATE };
	uint8_t neg[42] = { 0 };
	struct smbl_msg m;
	uint64_t fid;

	/* NEGOTIATE (3.0.2) with every capability offered */
	conn_new(&n, 5, "alice");
	n.c->negotiated = false;
	smbt_put16(neg, 36);
	smbt_put16(neg + 2, 3);          /* DialectCount */
	smbt_put16(neg + 4, 1);          /* SIGNING_ENABLED */
	smbt_put32(neg + 8, 0x7Fu);      /* Capabilities: all of 2.2.3 */
	memcpy(neg + 12, guid_b, 16);
	smbt_put16(neg + 36, SMB2_DIALECT_210);
	smbt_put16(neg + 38, SMB2_DIALECT_300);
	smbt_put16(neg + 40, SMB2_DIALECT_302);
	smbl_send(&n, &h, neg, sizeof(neg));
	ck_assert_int_eq(smbl_recv(&n, &m), 1);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u16(m.body + 4), SMB2_DIALECT_302);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 24) & SMB2_GLOBAL_CAP_PERSISTENT_HANDLES, 0);
	ck_assert_uint_ne(smb_wire_get_u32(m.body + 24) & SMB2_GLOBAL_CAP_LEASING, 0); /* the field read is Capabilities */

	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 0, 0x2u | 0x1u | 0x80000000u, guid_a);
	open_durable(&a, &q);
	ck_assert_uint_eq(q.dh_flags, 0);
	ck_assert_uint_eq(q.dh_timeout, 60000);
	fid = q.fid;
	smb_conn_free(a.c);
	conn_new(&b, 2, "alice");
	q = (struct smbl_create){ .name = "f1" };
	smbl_dh2c(&q, fid + 1000, guid_a);
	smbt_put32(q.dh_data + 32, 0x2u); /* SMB2_DHANDLE_FLAG_PERSISTENT */
	smbl_create(&b, &q);
	ck_assert_uint_eq(q.status, STATUS_OBJECT_NAME_NOT_FOUND);
	ck_assert_uint_eq(srv->ndurable, 1);
	q = (struct smbl_create){ .name = "f1" };
	smbl_dh2c(&q, fid, guid_a);
	smbt_put32(q.dh_data + 32, 0x2u);
	reconnect_batch(&b, &q, fid);
}
END_TEST

START_TEST(test_close_is_final)
{
	struct smbt_conn a;
	struct smbl_create q = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };

	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 60000, 0, guid_a);
	open_durable(&a, &q);
	ck_assert_uint_eq(smbl_close(&a, q.fid), STATUS_SUCCESS);
	smb_conn_free(a.c);
	ck_assert_uint_eq(srv->ndurable, 0);
}
END_TEST

static Suite *smb_durable_suite(void)
{
	Suite *s = suite_create("smb_durable");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_grant);
	tcase_add_test(tc, test_reconnect_keeps_locks);
	tcase_add_test(tc, test_reconnect_refused);
	tcase_add_test(tc, test_v1_reconnect);
	tcase_add_test(tc, test_reconnect_forms);
	tcase_add_test(tc, test_reconnect_keeps_alloc_and_position);
	tcase_add_test(tc, test_timeout_closes);
	tcase_add_test(tc, test_conflict_closes_disconnected);
	tcase_add_test(tc, test_share_conflict_closes_disconnected);
	tcase_add_test(tc, test_close_is_final);
	tcase_add_test(tc, test_delete_on_close_durable);
	tcase_add_test(tc, test_previous_session_ends);
	tcase_add_test(tc, test_logoff_keeps_durable);
	tcase_add_test(tc, test_v1_reconnect_fileid);
	tcase_add_test(tc, test_dh2_persistent_flag);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_durable_suite());
}
