/* test_smb_notify: SMB2 CHANGE_NOTIFY (agent/smb/smb_notify.c) over the
 * store's change watches (agent/vol/vol_watch.c), through the server's own
 * dispatcher as test_smb_async drives it (smb_harness.h): signed frames into
 * smb_dispatch_frame on a socketpair connection, the loop's part (eventfd,
 * smb_async_run) played by the test. The changes are made with the store's
 * own calls (vol_create, vol_mkdir, vol_rename, vol_write, vol_setattr),
 * which is what the NFSv3 and NFSv4.1 front ends call: so an NFS change
 * wakes an SMB watcher.
 * - a request with nothing queued is answered STATUS_PENDING, then the
 *   change as FILE_NOTIFY_INFORMATION (Action, UTF-16 name, signed);
 * - the CompletionFilter: a change it does not name completes nothing;
 * - changes between two requests are kept and answered at once, records
 *   4-byte aligned with NextEntryOffset chaining, renames OLD/NEW;
 * - WATCH_TREE sees "sub\name"; a watch without it does not;
 * - OutputBufferLength too small (the first request's bounds the later
 *   ones), or the queue past VOL_WATCH_QUEUE_MAX: STATUS_NOTIFY_ENUM_DIR;
 * - the watched directory removed (as NFS RMDIR does it): DELETE_PENDING,
 *   whatever the filter, and for every later request;
 * - CANCEL: STATUS_CANCELLED; CLOSE, TREE_DISCONNECT: STATUS_NOTIFY_CLEANUP,
 *   and the volume is unwatched again (its operations pay nothing);
 * - refusals: a file (INVALID_PARAMETER), a share without CHANGE_NOTIFY
 *   (NOT_IMPLEMENTED), a buffer past MaxTransactSize (INVALID_PARAMETER),
 *   an open without FILE_LIST_DIRECTORY (ACCESS_DENIED).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static const struct vol_cred nfs_cred = { .uid = 0, .gid = 0 }; /* what an NFS call runs as (root, unsquashed) */

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

/* An open of path ("" = the root) as CREATE would make it. */
static struct smb_open *open_new(struct smbt_conn *tc, uint64_t id, const char *path, uint32_t access)
{
	struct smb_open *o = smbt_open_new(tc, id);
	struct vol_obj root;

	ck_assert_int_eq(vol_root(exp0, &root), 0);
	o->access = access;
	if (!*path) {
		o->obj = root;
	} else {
		ck_assert_int_eq(vol_lookup(&root, &nfs_cred, path, strlen(path), &o->obj), 0);
		vol_obj_cleanup(&root);
	}
	o->dir = S_ISDIR(o->obj.st.st_mode);
	snprintf(o->path, sizeof(o->path), "%s", path);
	return o;
}

/* CHANGE_NOTIFY on open id; returns its MessageId. */
static uint64_t notify_req(struct smbt_conn *tc, uint64_t id, uint16_t flags, uint32_t out_len, uint32_t filter)
{
	uint8_t body[32] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_CHANGE_NOTIFY, .message_id = tc->mid++, .tree_id = tc->t->id };

	smbt_put16(body, 32);
	smbt_put16(body + 2, flags);
	smbt_put32(body + 4, out_len);
	smbt_put64(body + 8, id);
	smbt_put64(body + 16, id);
	smbt_put32(body + 24, filter);
	smbt_send(tc, &h, body, sizeof(body));
	return h.message_id;
}

struct rsp {
	struct smb_wire_hdr h;
	bool sig_ok;
	uint8_t out[4096];        /* the OutputBuffer */
	size_t out_len;
};

static int recv_rsp(struct smbt_conn *tc, struct rsp *r)
{
	uint8_t buf[8192];
	size_t len;

	if (!smbt_recv(tc, buf, sizeof(buf), &len, &r->h, &r->sig_ok))
		return 0;
	r->out_len = 0;
	if (r->h.status == STATUS_SUCCESS && r->h.command == SMB2_CHANGE_NOTIFY) {
		uint16_t off = smb_wire_get_u16(buf + 66);
		uint32_t olen = smb_wire_get_u32(buf + 68);

		ck_assert_uint_eq(smb_wire_get_u16(buf + 64), 9);
		ck_assert_uint_le((size_t)off + olen, len);
		ck_assert_uint_le(olen, sizeof(r->out));
		memcpy(r->out, buf + off, olen);
		r->out_len = olen;
	}
	return 1;
}

static uint64_t expect_pending(struct smbt_conn *tc, uint64_t mid)
{
	struct rsp r;

	ck_assert_int_eq(recv_rsp(tc, &r), 1);
	return smbt_check_pending(&r.h, mid);
}

/* The final response of an async CHANGE_NOTIFY, into *r. */
static void expect_final(struct smbt_conn *tc, uint64_t mid, uint64_t aid, uint32_t status, struct rsp *r)
{
	ck_assert_int_eq(recv_rsp(tc, r), 1);
	smbt_check_final(&r->h, SMB2_CHANGE_NOTIFY, mid, aid, status);
	ck_assert(r->sig_ok);
}

static void expect_sync(struct smbt_conn *tc, uint64_t mid, uint32_t status, struct rsp *r)
{
	ck_assert_int_eq(recv_rsp(tc, r), 1);
	smbt_check_sync(&r->h, mid, status);
}

/* Record i of r's FILE_NOTIFY_INFORMATION list: its action and name (UTF-8). */
static void record(const struct rsp *r, unsigned i, uint32_t *action, char *name, size_t cap)
{
	size_t off = 0;
	uint32_t nlen;

	for (unsigned k = 0; k < i; k++) {
		uint32_t next = smb_wire_get_u32(r->out + off);

		ck_assert_uint_ne(next, 0);
		ck_assert_uint_eq(next % 4, 0); /* 4-byte aligned */
		off += next;
		ck_assert_uint_lt(off, r->out_len);
	}
	*action = smb_wire_get_u32(r->out + off + 4);
	nlen = smb_wire_get_u32(r->out + off + 8);
	ck_assert_uint_le(off + 12 + nlen, r->out_len);
	ck_assert_int_eq(smb_wire_utf16_to_utf8(r->out + off + 12, nlen, name, cap, NULL), AQ_OK);
}

static unsigned nrecords(const struct rsp *r)
{
	size_t off = 0;
	unsigned n = 1;

	if (!r->out_len)
		return 0;
	while (smb_wire_get_u32(r->out + off)) {
		off += smb_wire_get_u32(r->out + off);
		n++;
	}
	return n;
}

static void expect_record(const struct rsp *r, unsigned i, uint32_t action, const char *name)
{
	char got[512];
	uint32_t a;

	record(r, i, &a, got, sizeof(got));
	ck_assert_uint_eq(a, action);
	ck_assert_str_eq(got, name);
}

/* The store's calls an NFS CREATE / MKDIR / REMOVE makes. */
static void nfs_create(const char *dirpath, const char *name)
{
	struct vol_obj root, dir, f;

	ck_assert_int_eq(vol_root(exp0, &root), 0);
	if (*dirpath) {
		ck_assert_int_eq(vol_lookup(&root, &nfs_cred, dirpath, strlen(dirpath), &dir), 0);
		vol_obj_cleanup(&root);
	} else {
		dir = root;
	}
	ck_assert_int_eq(vol_create(&dir, &nfs_cred, name, strlen(name), true, NULL, NULL, &f), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&dir);
}

static void nfs_mkdir(const char *name)
{
	struct vol_obj root, d;

	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_mkdir(&root, &nfs_cred, name, strlen(name), NULL, &d), 0);
	vol_obj_cleanup(&d);
	vol_obj_cleanup(&root);
}

#define LISTDIR 0x1u
#define F_NAME 0x1u
#define F_DIRNAME 0x2u
#define F_ATTR 0x4u
#define F_SIZE 0x8u
#define F_WRITE 0x10u
#define ON API_INTENT_SMB_CHANGE_NOTIFY

START_TEST(test_pending_then_change)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t mid, aid;
	struct vol_obj root, f;
	struct vol_sattr sa = { .set_mode = true, .mode = 0600 };
	int committed;

	setup();
	smbt_conn_new(&a, srv, 1, ON);
	open_new(&a, 10, "", LISTDIR);
	mid = notify_req(&a, 10, 0, 4096, F_NAME);
	aid = expect_pending(&a, mid);
	ck_assert_uint_eq(a.c->npending, 1);
	ck_assert(!smbt_loop_turn(srv));
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	nfs_create("", "hello.txt"); /* as NFS makes it */
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_SUCCESS, &r);
	ck_assert_uint_eq(r.h.credits, 0);
	ck_assert_uint_eq(nrecords(&r), 1);
	expect_record(&r, 0, 1 /* FILE_ACTION_ADDED */, "hello.txt");
	ck_assert_uint_eq(r.out_len, 12 + 2 * strlen("hello.txt"));
	ck_assert_uint_eq(a.c->npending, 0);
	/* the filter: attributes, a write and a new directory are not FILE_NAME */
	mid = notify_req(&a, 10, 0, 4096, F_NAME);
	aid = expect_pending(&a, mid);
	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_lookup(&root, &nfs_cred, "hello.txt", 9, &f), 0);
	ck_assert_int_eq(vol_setattr(&f, &nfs_cred, &sa), 0);
	ck_assert_int_eq(vol_write(&f, &nfs_cred, 0, "abc", 3, 2, &committed), 0);
	vol_obj_cleanup(&f);
	nfs_mkdir("sub");
	smbt_loop_turn(srv);
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	/* a remove is */
	ck_assert_int_eq(vol_remove(&root, &nfs_cred, "hello.txt", 9), 0);
	vol_obj_cleanup(&root);
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_SUCCESS, &r);
	ck_assert_uint_eq(nrecords(&r), 1);
	expect_record(&r, 0, 2 /* FILE_ACTION_REMOVED */, "hello.txt");
	teardown();
}
END_TEST

START_TEST(test_queued_between_requests)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t mid;
	struct vol_obj root, f;
	int committed;

	setup();
	smbt_conn_new(&a, srv, 1, ON);
	open_new(&a, 10, "", LISTDIR);
	/* the first request makes the watch; cancel it, the watch stays */
	mid = notify_req(&a, 10, 0, 4096, F_NAME | F_WRITE | F_SIZE);
	smbt_cancel(&a, true, expect_pending(&a, mid));
	ck_assert_int_eq(recv_rsp(&a, &r), 1);
	ck_assert_uint_eq(r.h.status, STATUS_CANCELLED);
	nfs_create("", "b");
	nfs_create("", "ccc");
	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_rename(&root, "b", 1, &root, "dd", 2, &nfs_cred), 0);
	ck_assert_int_eq(vol_lookup(&root, &nfs_cred, "ccc", 3, &f), 0);
	ck_assert_int_eq(vol_write(&f, &nfs_cred, 0, "abc", 3, 2, &committed), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
	smbt_loop_turn(srv); /* nobody waits: they stay queued */
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	mid = notify_req(&a, 10, 0, 4096, F_NAME | F_WRITE | F_SIZE);
	expect_sync(&a, mid, STATUS_SUCCESS, &r);
	ck_assert(r.sig_ok);
	ck_assert_uint_eq(nrecords(&r), 5);
	expect_record(&r, 0, 1, "b");
	expect_record(&r, 1, 1, "ccc");
	expect_record(&r, 2, 4 /* RENAMED_OLD_NAME */, "b");
	expect_record(&r, 3, 5 /* RENAMED_NEW_NAME */, "dd");
	expect_record(&r, 4, 3 /* MODIFIED */, "ccc");
	/* "b" is 12 + 2 bytes, padded to 16: the next record starts there */
	ck_assert_uint_eq(smb_wire_get_u32(r.out), 16);
	ck_assert_uint_eq(r.out_len % 4, 2); /* the last record is not padded */
	teardown();
}
END_TEST

START_TEST(test_watch_tree)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t m1, m2, a1, a2;

	setup();
	nfs_mkdir("sub");
	smbt_conn_new(&a, srv, 1, ON);
	open_new(&a, 10, "", LISTDIR);
	open_new(&a, 11, "", LISTDIR);
	m1 = notify_req(&a, 10, SMB2_WATCH_TREE, 4096, F_NAME);
	a1 = expect_pending(&a, m1);
	m2 = notify_req(&a, 11, 0, 4096, F_NAME);
	a2 = expect_pending(&a, m2);
	nfs_create("sub", "deep.txt");
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, m1, a1, STATUS_SUCCESS, &r);
	expect_record(&r, 0, 1, "sub\\deep.txt");
	ck_assert_int_eq(recv_rsp(&a, &r), 0); /* the one-level watch saw nothing */
	/* a watch on the subdirectory itself sees the bare name */
	open_new(&a, 12, "sub", LISTDIR);
	m1 = notify_req(&a, 12, 0, 4096, F_NAME);
	a1 = expect_pending(&a, m1);
	nfs_create("sub", "x");
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, m1, a1, STATUS_SUCCESS, &r);
	expect_record(&r, 0, 1, "x");
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	/* the root's one-level watch: a change in the root */
	nfs_create("", "top");
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, m2, a2, STATUS_SUCCESS, &r);
	expect_record(&r, 0, 1, "top");
	teardown();
}
END_TEST

START_TEST(test_enum_dir)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t mid, aid;
	char nm[32];

	setup();
	smbt_conn_new(&a, srv, 1, ON);
	open_new(&a, 10, "", LISTDIR);
	/* a record that does not fit OutputBufferLength */
	mid = notify_req(&a, 10, 0, 16, F_NAME);
	aid = expect_pending(&a, mid);
	nfs_create("", "a-long-file-name.txt");
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_NOTIFY_ENUM_DIR, &r);
	ck_assert_uint_eq(r.out_len, 0);
	/* the first request's OutputBufferLength bounds the later ones (Windows, Samba) */
	mid = notify_req(&a, 10, 0, 65536, F_NAME);
	aid = expect_pending(&a, mid);
	nfs_create("", "another-long-name.txt");
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_NOTIFY_ENUM_DIR, &r);
	/* the queue past its bound while nobody waits (a second open) */
	open_new(&a, 11, "", LISTDIR);
	mid = notify_req(&a, 11, 0, 65536, F_NAME);
	smbt_cancel(&a, true, expect_pending(&a, mid));
	ck_assert_int_eq(recv_rsp(&a, &r), 1);
	for (unsigned i = 0; i <= VOL_WATCH_QUEUE_MAX; i++) {
		snprintf(nm, sizeof(nm), "f%u", i);
		nfs_create("", nm);
	}
	mid = notify_req(&a, 11, 0, 65536, F_NAME);
	expect_sync(&a, mid, STATUS_NOTIFY_ENUM_DIR, &r);
	/* and the watch goes on afterwards */
	mid = notify_req(&a, 11, 0, 65536, F_NAME);
	aid = expect_pending(&a, mid);
	nfs_create("", "after");
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_SUCCESS, &r);
	expect_record(&r, 0, 1, "after");
	teardown();
}
END_TEST

START_TEST(test_cancel_close_tdis)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t mid, aid;
	struct smb_open *o;

	setup();
	smbt_conn_new(&a, srv, 1, ON);
	o = open_new(&a, 10, "", LISTDIR);
	mid = notify_req(&a, 10, 0, 4096, F_NAME);
	aid = expect_pending(&a, mid);
	smbt_cancel(&a, true, aid + 7); /* names nothing */
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	smbt_cancel(&a, true, aid);
	expect_final(&a, mid, aid, STATUS_CANCELLED, &r);
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	ck_assert_uint_eq(a.c->npending, 0);
	ck_assert_uint_eq(o->nnotify, 0);
	ck_assert_uint_eq(atomic_load(&exp0->acct->watchers), 1);
	/* CLOSE of the directory: NOTIFY_CLEANUP, the watch goes */
	mid = notify_req(&a, 10, 0, 4096, F_NAME);
	aid = expect_pending(&a, mid);
	smb_open_free(a.s, o, false);
	smb_conn_kick(a.c);
	expect_final(&a, mid, aid, STATUS_NOTIFY_CLEANUP, &r);
	ck_assert_uint_eq(atomic_load(&exp0->acct->watchers), 0);
	ck_assert_uint_eq(ts.store->nwatches, 0);
	nfs_create("", "unwatched");
	ck_assert(!smbt_loop_turn(srv)); /* nobody watches: nothing wakes */
	/* TREE_DISCONNECT: two requests on two opens, both NOTIFY_CLEANUP */
	open_new(&a, 11, "", LISTDIR);
	open_new(&a, 12, "", LISTDIR);
	expect_pending(&a, notify_req(&a, 11, 0, 4096, F_NAME));
	expect_pending(&a, notify_req(&a, 12, SMB2_WATCH_TREE, 4096, F_DIRNAME));
	ck_assert_uint_eq(atomic_load(&exp0->acct->watchers), 2);
	smb_tree_free(a.s, a.t);
	smb_conn_kick(a.c);
	ck_assert_int_eq(recv_rsp(&a, &r), 1);
	ck_assert_uint_eq(r.h.status, STATUS_NOTIFY_CLEANUP);
	ck_assert_int_eq(recv_rsp(&a, &r), 1);
	ck_assert_uint_eq(r.h.status, STATUS_NOTIFY_CLEANUP);
	ck_assert_uint_eq(a.c->npending, 0);
	ck_assert_uint_eq(srv->npending, 0);
	ck_assert_uint_eq(atomic_load(&exp0->acct->watchers), 0);
	teardown();
}
END_TEST

START_TEST(test_refusals)
{
	struct smbt_conn a, off;
	struct rsp r;

	setup();
	nfs_create("", "plain");
	smbt_conn_new(&a, srv, 1, ON);
	smbt_conn_new(&off, srv, 2, 0);
	open_new(&a, 10, "plain", LISTDIR);
	open_new(&a, 11, "", 0x80 /* FILE_READ_ATTRIBUTES only */);
	open_new(&a, 12, "", LISTDIR);
	open_new(&off, 20, "", LISTDIR);
	expect_sync(&a, notify_req(&a, 10, 0, 4096, F_NAME), STATUS_INVALID_PARAMETER, &r);
	expect_sync(&a, notify_req(&a, 11, 0, 4096, F_NAME), STATUS_ACCESS_DENIED, &r);
	expect_sync(&a, notify_req(&a, 12, 0, (1u << 20) + 1, F_NAME), STATUS_INVALID_PARAMETER, &r);
	expect_sync(&a, notify_req(&a, 99, 0, 4096, F_NAME), STATUS_FILE_CLOSED, &r);
	expect_sync(&off, notify_req(&off, 20, 0, 4096, F_NAME), STATUS_NOT_IMPLEMENTED, &r);
	/* nothing was set up by any of them */
	ck_assert_uint_eq(atomic_load(&exp0->acct->watchers), 0);
	ck_assert_uint_eq(a.c->npending + off.c->npending, 0);
	teardown();
}
END_TEST

START_TEST(test_attributes_from_store)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t mid, aid;
	struct vol_obj root, f;
	struct vol_sattr sa = { .set_size = true, .size = 100 };
	int committed;

	setup();
	nfs_create("", "data");
	smbt_conn_new(&a, srv, 1, ON);
	open_new(&a, 10, "", LISTDIR);
	mid = notify_req(&a, 10, 0, 4096, F_SIZE);
	aid = expect_pending(&a, mid);
	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_lookup(&root, &nfs_cred, "data", 4, &f), 0);
	ck_assert_int_eq(vol_setattr(&f, &nfs_cred, &sa), 0); /* NFS SETATTR size */
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_SUCCESS, &r);
	expect_record(&r, 0, 3 /* MODIFIED */, "data");
	/* a write inside the file changes no size: SIZE sees nothing */
	mid = notify_req(&a, 10, 0, 4096, F_SIZE);
	aid = expect_pending(&a, mid);
	ck_assert_int_eq(vol_write(&f, &nfs_cred, 0, "xy", 2, 2, &committed), 0);
	smbt_loop_turn(srv);
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	/* one that grows it does */
	ck_assert_int_eq(vol_write(&f, &nfs_cred, 100, "xy", 2, 2, &committed), 0);
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_SUCCESS, &r);
	expect_record(&r, 0, 3, "data");
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&root);
	teardown();
}
END_TEST

START_TEST(test_dir_removed)
{
	struct smbt_conn a;
	struct rsp r;
	uint64_t mid, aid, m2, a2;
	struct vol_obj root;

	setup();
	nfs_mkdir("gone");
	smbt_conn_new(&a, srv, 1, ON);
	open_new(&a, 10, "gone", LISTDIR);
	open_new(&a, 11, "", LISTDIR);
	mid = notify_req(&a, 10, 0, 4096, F_WRITE); /* not a name filter */
	aid = expect_pending(&a, mid);
	m2 = notify_req(&a, 11, 0, 4096, F_WRITE);  /* the parent's watch is not gone */
	a2 = expect_pending(&a, m2);
	ck_assert_int_eq(vol_root(exp0, &root), 0);
	ck_assert_int_eq(vol_rmdir(&root, &nfs_cred, "gone", 4), 0);
	vol_obj_cleanup(&root);
	ck_assert(smbt_loop_turn(srv));
	expect_final(&a, mid, aid, STATUS_DELETE_PENDING, &r);
	ck_assert_int_eq(recv_rsp(&a, &r), 0);
	expect_sync(&a, notify_req(&a, 10, 0, 4096, F_WRITE), STATUS_DELETE_PENDING, &r);
	smbt_cancel(&a, true, a2);
	expect_final(&a, m2, a2, STATUS_CANCELLED, &r);
	teardown();
}
END_TEST

static Suite *smb_notify_suite(void)
{
	Suite *s = suite_create("smb_notify");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_pending_then_change);
	tcase_add_test(tc, test_queued_between_requests);
	tcase_add_test(tc, test_watch_tree);
	tcase_add_test(tc, test_enum_dir);
	tcase_add_test(tc, test_cancel_close_tdis);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_attributes_from_store);
	tcase_add_test(tc, test_dir_removed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_notify_suite());
}
