/* test_smb_opens_max: the caps on SMB opens (agent/smb/smb_open.c
 * smb_open_room, smb_srv_set_open_limits) through the server's own
 * dispatcher (smb_harness.h, requests from smb_leasemsg.h), with small caps
 * set for the test; a dropped TCP connection is smb_conn_free.
 * - a session opens up to its cap; the next CREATE, also a FILE_CREATE of a
 *   new name, answers STATUS_INSUFFICIENT_RESOURCES and makes nothing (the
 *   name does not exist); after a CLOSE one more open works;
 * - a second session still opens under its own cap until the node's, then
 *   is refused until an open of the first closes; a LOGOFF gives the
 *   session's room back;
 * - a dropped connection's plain opens leave the count, its kept durable
 *   open stays counted (a reconnect takes it back without counting it
 *   twice) until its timeout closes it;
 * - a durable reconnect counts against the session that reconnects: past
 *   its cap it answers STATUS_INSUFFICIENT_RESOURCES and the open stays
 *   kept; after a CLOSE it comes back;
 * - the session's count (s->nopens, what smb_open_room reads: no walk)
 *   equals its list of opens after each step, also after a LOGOFF kept
 *   a durable open;
 * - the defaults: 4096 opens a session, the 4097th refused (when this
 *   process's RLIMIT_NOFILE allows the node that many).
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_intent.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FILE_OPEN 1u
#define FILE_CREATE 2u

static struct aqt_store ts;
static struct smb_srv *srv;

static const uint8_t guid_a[16] = { 0xA1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

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

static bool exists(const char *name)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	return stat(p, &st) == 0;
}

/* The session's count equals its list (the counter smb_open_room reads). */
static unsigned sess_opens(const struct smbt_conn *tc)
{
	unsigned n = 0;

	for (const struct smb_open *o = tc->s->opens; o; o = o->next)
		n++;
	ck_assert_uint_eq(tc->s->nopens, n);
	return n;
}

/* CREATE name with disposition (0: OPEN_IF) by tc: its status, its FileId in *fid. */
static uint32_t create(struct smbt_conn *tc, const char *name, uint32_t disposition, uint64_t *fid)
{
	struct smbl_create q = { .name = name, .disposition = disposition };

	smbl_create(tc, &q);
	if (fid)
		*fid = q.fid;
	return q.status;
}

START_TEST(test_session_cap)
{
	struct smbt_conn a;
	uint64_t fid[3];
	char name[16];

	smb_srv_set_open_limits(srv, 3, 100);
	conn_new(&a, 1, "alice");
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ck_assert_uint_eq(create(&a, name, 0, &fid[i]), STATUS_SUCCESS);
	}
	ck_assert_uint_eq(srv->nopens, 3);
	ck_assert_uint_eq(sess_opens(&a), 3);
	ck_assert_uint_eq(create(&a, "f3", 0, NULL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert_uint_eq(create(&a, "new", FILE_CREATE, NULL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert(!exists("f3"));
	ck_assert(!exists("new"));
	ck_assert_uint_eq(srv->nopens, 3);
	ck_assert_uint_eq(srv->opens_refused, 2);
	/* a CLOSE gives room for one more, and only one */
	ck_assert_uint_eq(smbl_close(&a, fid[0]), STATUS_SUCCESS);
	ck_assert_uint_eq(srv->nopens, 2);
	ck_assert_uint_eq(sess_opens(&a), 2);
	ck_assert_uint_eq(create(&a, "new", FILE_OPEN, NULL), STATUS_OBJECT_NAME_NOT_FOUND);
	ck_assert_uint_eq(create(&a, "new", FILE_CREATE, NULL), STATUS_SUCCESS);
	ck_assert(exists("new"));
	ck_assert_uint_eq(create(&a, "f0", 0, NULL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert_uint_eq(srv->nopens, 3);
	/* the connection drops: every open goes (none durable), and the count with it */
	smb_conn_free(a.c);
	ck_assert_uint_eq(srv->nopens, 0);
}
END_TEST

START_TEST(test_node_cap)
{
	struct smbt_conn a, b;
	uint64_t fa[3], fb;
	uint8_t body[4] = { 4, 0, 0, 0 };
	struct smb_wire_hdr h = { .command = SMB2_LOGOFF };
	struct smbl_msg m;

	smb_srv_set_open_limits(srv, 3, 5);
	conn_new(&a, 1, "alice");
	conn_new(&b, 2, "bob");
	ck_assert_uint_eq(create(&a, "a0", 0, &fa[0]), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&a, "a1", 0, &fa[1]), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&a, "a2", 0, &fa[2]), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&a, "a3", 0, NULL), STATUS_INSUFFICIENT_RESOURCES); /* a's own cap */
	ck_assert_uint_eq(create(&b, "b0", 0, NULL), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&b, "b1", 0, NULL), STATUS_SUCCESS);
	/* b holds 2 of its 3, the node 5 of 5 */
	ck_assert_uint_eq(create(&b, "b2", FILE_CREATE, NULL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert(!exists("b2"));
	ck_assert_uint_eq(smbl_close(&a, fa[1]), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&b, "b2", FILE_CREATE, &fb), STATUS_SUCCESS);
	ck_assert(exists("b2"));
	ck_assert_uint_eq(srv->nopens, 5);
	/* a's LOGOFF: its opens leave the count */
	smbl_send(&a, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(&a, &m), 1);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->nopens, 3);
	ck_assert_uint_eq(smbl_close(&b, fb), STATUS_SUCCESS);
	ck_assert_uint_eq(srv->nopens, 2);
}
END_TEST

START_TEST(test_durable_counts)
{
	struct smbt_conn a, b, c;
	struct smbl_create q = { .name = "d1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	uint64_t fid;

	smb_srv_set_open_limits(srv, 4, 2);
	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 60000, 0, guid_a);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_str_eq(q.dh_got, "DH2Q");
	fid = q.fid;
	ck_assert_uint_eq(create(&a, "p1", 0, NULL), STATUS_SUCCESS);
	ck_assert_uint_eq(srv->nopens, 2);
	smb_conn_free(a.c); /* the plain open goes, the durable one is kept and counted */
	ck_assert_uint_eq(srv->ndurable, 1);
	ck_assert_uint_eq(srv->nopens, 1);
	conn_new(&b, 2, "bob");
	ck_assert_uint_eq(create(&b, "b0", 0, NULL), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&b, "b1", FILE_CREATE, NULL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert(!exists("b1"));
	smb_conn_free(b.c);
	ck_assert_uint_eq(srv->nopens, 1);
	/* the reconnect takes the counted open back: not counted twice */
	conn_new(&c, 3, "alice");
	q = (struct smbl_create){ .name = "d1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2c(&q, fid, guid_a);
	smbl_create(&c, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->ndurable, 0);
	ck_assert_uint_eq(srv->nopens, 1);
	ck_assert_uint_eq(sess_opens(&c), 1);
	ck_assert_uint_eq(smbl_close(&c, fid), STATUS_SUCCESS);
	ck_assert_uint_eq(srv->nopens, 0);
	ck_assert_uint_eq(sess_opens(&c), 0);
}
END_TEST

/* A reconnect joins its session under that session's cap: refused past
 * it, the open stays kept (and counted once by the node) for a later try. */
START_TEST(test_durable_reconnect_cap)
{
	struct smbt_conn a, c;
	struct smbl_create q = { .name = "d1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	uint64_t fid, f0, f1;
	uint8_t body[4] = { 4, 0, 0, 0 };
	struct smb_wire_hdr h = { .command = SMB2_LOGOFF };
	struct smbl_msg m;

	smb_srv_set_open_limits(srv, 2, 100);
	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 60000, 0, guid_a);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	fid = q.fid;
	smb_conn_free(a.c);
	ck_assert_uint_eq(srv->ndurable, 1);
	conn_new(&c, 3, "alice");
	ck_assert_uint_eq(create(&c, "c0", 0, &f0), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&c, "c1", 0, &f1), STATUS_SUCCESS);
	ck_assert_uint_eq(sess_opens(&c), 2);
	ck_assert_uint_eq(srv->nopens, 3);
	q = (struct smbl_create){ .name = "d1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2c(&q, fid, guid_a);
	smbl_create(&c, &q);
	ck_assert_uint_eq(q.status, STATUS_INSUFFICIENT_RESOURCES);
	ck_assert_uint_eq(srv->opens_refused, 1);
	ck_assert_uint_eq(srv->ndurable, 1); /* still kept */
	ck_assert_uint_eq(sess_opens(&c), 2);
	ck_assert_uint_eq(srv->nopens, 3);
	ck_assert_uint_eq(smbl_close(&c, f0), STATUS_SUCCESS);
	q = (struct smbl_create){ .name = "d1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	smbl_dh2c(&q, fid, guid_a);
	smbl_create(&c, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->ndurable, 0);
	ck_assert_uint_eq(sess_opens(&c), 2);
	ck_assert_uint_eq(srv->nopens, 2);
	/* a LOGOFF keeps it again: it leaves the session's count (the
	 * logged-off session stays, to sign what its requests get) */
	smbl_send(&c, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(&c, &m), 1);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->ndurable, 1);
	ck_assert_uint_eq(srv->nopens, 1);
	ck_assert_uint_eq(sess_opens(&c), 0);
}
END_TEST

START_TEST(test_durable_expiry)
{
	struct smbt_conn a, b;
	struct smbl_create q = { .name = "d1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };

	smb_srv_set_open_limits(srv, 4, 1);
	conn_new(&a, 1, "alice");
	smbl_dh2q(&q, 300, 0, guid_a);
	smbl_create(&a, &q);
	ck_assert_uint_eq(q.status, STATUS_SUCCESS);
	smb_conn_free(a.c);
	conn_new(&b, 2, "bob");
	smb_async_tick(srv);
	ck_assert_uint_eq(srv->ndurable, 1); /* not yet: it holds the node's one open */
	ck_assert_uint_eq(create(&b, "b0", FILE_CREATE, NULL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert(!exists("b0"));
	usleep(400 * 1000);
	smb_async_tick(srv);
	ck_assert_uint_eq(srv->ndurable, 0);
	ck_assert_uint_eq(srv->nopens, 0);
	ck_assert_uint_eq(create(&b, "b0", FILE_CREATE, NULL), STATUS_SUCCESS);
	ck_assert_uint_eq(srv->nopens, 1);
}
END_TEST

/* Descriptors the process holds now. */
static unsigned fds_open(void)
{
	unsigned n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The defaults: a session holds SMB_SESS_OPENS_MAX opens, the next is
 * refused; the node's cap is a quarter of RLIMIT_NOFILE (at least 64).
 * Prints what the opens cost in time and descriptors. */
START_TEST(test_default_session_cap)
{
	struct smbt_conn a;
	struct rlimit rl;
	struct timespec t0, t1;
	unsigned fd0, fd1;
	char name[16];

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 >= 64)
		ck_assert_uint_eq(srv->opens_max, rl.rlim_cur / 4);
	ck_assert_uint_eq(srv->sess_opens_max, SMB_SESS_OPENS_MAX);
	if (srv->opens_max <= SMB_SESS_OPENS_MAX + 8)
		return; /* this process may not hold that many: the small caps above test the same code */
	conn_new(&a, 1, "alice");
	fd0 = fds_open();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < SMB_SESS_OPENS_MAX; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		ck_assert_uint_eq(create(&a, name, 0, NULL), STATUS_SUCCESS);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fd1 = fds_open();
	ck_assert_uint_eq(create(&a, "last", FILE_CREATE, NULL), STATUS_INSUFFICIENT_RESOURCES);
	ck_assert(!exists("last"));
	printf("%u CREATEs (new files) in %.3f s; descriptors held %u -> %u (%.2f per open)\n", SMB_SESS_OPENS_MAX,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, fd0, fd1,
	       (double)(fd1 - fd0) / SMB_SESS_OPENS_MAX);
	smb_conn_free(a.c);
	ck_assert_uint_eq(srv->nopens, 0);
}
END_TEST

static Suite *smb_opens_max_suite(void)
{
	Suite *s = suite_create("smb_opens_max");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_session_cap);
	tcase_add_test(tc, test_node_cap);
	tcase_add_test(tc, test_durable_counts);
	tcase_add_test(tc, test_durable_reconnect_cap);
	tcase_add_test(tc, test_durable_expiry);
	tcase_add_test(tc, test_default_session_cap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_opens_max_suite());
}
