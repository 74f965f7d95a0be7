/* test_smb_frame: compounds whose READ would block (agent/smb/smb_frame.c,
 * issue 23) through the server's own dispatcher (smb_harness.h). The same
 * cold-tier stub as test_smb_read marks files cold and holds the reads of
 * one "stalled" file until the test lets them go (or 8 s pass: a server
 * that still read a compound's READ on the loop fails the timing checks
 * instead of hanging).
 * - CREATE + READ + CLOSE, related: while the READ waits for its worker,
 *   nothing of the compound is answered, the same connection's lone READ of
 *   a hot file and another connection's are answered within 2 s; then one
 *   frame answers all three in order, each signed, the READ's bytes right,
 *   the CLOSE done on the READ's open (FileId all ones);
 * - unrelated READ(stalled) + READ(hot) + READ(stalled): the frame parks
 *   twice and answers the three in order with their bytes;
 * - CANCEL (by MessageId) of a compound's READ still queued (the stalled
 *   file's worker slots are taken) answers the compound at once: the READ
 *   CANCELLED, the next element served;
 * - the connection dropped while a compound waits (one READ running, one
 *   queued): nothing answered, the parked count back to 0, no leak (ASan),
 *   another connection served after;
 * - a WRITE with WRITE_THROUGH whose store work stalls (the stub holds the
 *   tier's write_begin) goes to a worker: this connection's and another's
 *   READs are answered meanwhile, then the WRITE, its bytes on the file; a
 *   WRITE without the flag stays on the loop; an open made with
 *   FILE_WRITE_THROUGH makes every WRITE go the same way;
 * - a WRITE of 2 MiB without the flag, received as the loop receives
 *   (smb_dispatch_recv_cap), goes to a worker as well (READs answered while
 *   it stalls), its frame keeping the receive buffer (no copy), the worker
 *   writing it in one store call (one write_begin of all 2 MiB), its bytes
 *   on the file; one of SMB_WRITE_ASYNC_MIN bytes goes to a worker, one a
 *   byte shorter stays on the loop;
 * - WRITE_THROUGH + FLUSH + READ in one compound: answered in order as one
 *   frame, the READ seeing the WRITE;
 * - CANCEL of a queued WRITE_THROUGH: CANCELLED, nothing written.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/agent/smb/smb_stub.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define FILE_LEN (256u << 10)
#define READ_LEN (16u << 10)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

static void setup(void)
{
	smbt_stub_up(&ts, &srv, &exp0);
}

static void teardown(void)
{
	smbt_stub_down(&ts, srv, exp0);
}

static uint64_t open_file(struct smbt_conn *tc, const char *name)
{
	uint64_t fid = 0;
	uint32_t attrs;

	ck_assert_uint_eq(smbl_open(tc, name, false, ALL_ACCESS, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	return fid;
}

#define REL SMB2_FLAGS_RELATED_OPERATIONS
#define MSGS 4

/* One compound being built: its messages' headers and bodies. */
struct cmp {
	struct smb_wire_hdr h[MSGS];
	uint8_t b[MSGS][128];
	size_t n[MSGS];
	size_t count;
};

static void cmp_add(struct cmp *x, struct smbt_conn *tc, uint16_t cmd, uint32_t flags)
{
	x->h[x->count] = (struct smb_wire_hdr){ .command = cmd, .flags = flags, .message_id = tc->mid++,
						.tree_id = tc->t->id };
	x->count++;
}

static void cmp_read(struct cmp *x, struct smbt_conn *tc, uint32_t flags, uint64_t fid, uint64_t off, uint32_t len)
{
	uint8_t *b = x->b[x->count];

	x->n[x->count] = smbt_read_body(b, fid, off, len);
	cmp_add(x, tc, SMB2_READ, flags);
}

static void cmp_create(struct cmp *x, struct smbt_conn *tc, const char *name)
{
	x->n[x->count] = smbl_create_body(x->b[x->count], name, ALL_ACCESS, 0, 0x40u, 1 /* FILE_OPEN */);
	cmp_add(x, tc, SMB2_CREATE, 0);
}

static void cmp_close(struct cmp *x, struct smbt_conn *tc, uint32_t flags, uint64_t fid)
{
	uint8_t *b = x->b[x->count];

	memset(b, 0, 24);
	smbt_put16(b, 24);
	smbt_put64(b + 8, fid);
	smbt_put64(b + 16, fid);
	x->n[x->count] = 24;
	cmp_add(x, tc, SMB2_CLOSE, flags);
}

static void cmp_send(struct cmp *x, struct smbt_conn *tc)
{
	const uint8_t *b[MSGS];

	for (size_t i = 0; i < x->count; i++)
		b[i] = x->b[i];
	smbt_send_chain(tc, x->h, b, x->n, x->count);
}

/* The answer of a compound, split. */
struct ans {
	uint8_t frame[MSGS * (READ_LEN + 256)];
	size_t len, count;
	struct smb_wire_msg m[MSGS];
};

/* The next frame on tc (turning the loop up to `within` s) split into its
 * messages, each of whose signature must verify: 1, or 0 when none came. */
static int ans_wait(struct smbt_conn *tc, struct ans *a, double within)
{
	double end = smbt_now_s() + within;
	struct smb_wire_hdr h;
	struct smb_wire_chain ch;
	uint16_t alg;
	struct smb_crypto_ctx *cx; /* the server's: not for this thread */
	const uint8_t *key = smb_sess_signing_key(tc->s, tc->c, &alg, &cx);
	int got;

	while (!(got = smbt_recv(tc, a->frame, sizeof(a->frame), &a->len, &h, NULL)) && smbt_now_s() < end) {
		smbt_loop_turn(srv);
		usleep(1000);
	}
	if (!got)
		return 0;
	a->count = 0;
	smb_wire_chain_init(&ch, a->frame, a->len);
	while (smb_wire_chain_next(&ch, &a->m[a->count]) == 1) {
		ck_assert_uint_lt(a->count, MSGS);
		ck_assert_msg(smb_crypto_verify(alg, key, a->m[a->count].p, a->m[a->count].len) ==
				      AQ_OK, "message %zu of the answer is not signed right", a->count);
		a->count++;
	}
	return 1;
}

/* Message i of a answers x's message i with status. */
static void ans_check(const struct ans *a, const struct cmp *x, size_t i, uint32_t status)
{
	ck_assert_uint_eq(a->m[i].hdr.message_id, x->h[i].message_id);
	ck_assert_uint_eq(a->m[i].hdr.command, x->h[i].command);
	ck_assert_uint_eq(a->m[i].hdr.status, status);
	ck_assert(!(a->m[i].hdr.flags & SMB2_FLAGS_ASYNC_COMMAND));
	ck_assert_uint_eq(a->m[i].hdr.flags & REL, x->h[i].flags & REL);
}

/* Message i of a is a READ answer of len bytes of name from off. */
static void ans_data(const struct ans *a, size_t i, const char *name, uint64_t off, uint32_t len)
{
	const uint8_t *b = a->m[i].body;
	uint32_t doff = b[2], dlen = smb_wire_get_u32(b + 4);

	ck_assert_uint_eq(smb_wire_get_u16(b), 17);
	ck_assert_uint_eq(dlen, len);
	ck_assert_uint_le(doff + dlen, a->m[i].len);
	for (uint32_t k = 0; k < len; k++)
		if (a->m[i].p[doff + k] != smbt_pattern(name, off + k))
			ck_abort_msg("byte %u of %s at %llu differs", k, name, (unsigned long long)off);
}

/* A lone READ on tc answered within 2 s with its bytes (the loop is free). */
static void lone_read_ok(struct smbt_conn *tc, uint64_t fid, const char *name, uint64_t off)
{
	struct cmp x = { 0 };
	struct ans a;
	double t0 = smbt_now_s();

	cmp_read(&x, tc, 0, fid, off, READ_LEN);
	cmp_send(&x, tc);
	ck_assert_int_eq(ans_wait(tc, &a, 2.0), 1);
	ck_assert(smbt_now_s() - t0 < 2.0);
	ck_assert_uint_eq(a.count, 1);
	ans_check(&a, &x, 0, STATUS_SUCCESS);
	ans_data(&a, 0, name, off, READ_LEN);
}

static unsigned opens_of(const struct smbt_conn *tc)
{
	unsigned n = 0;

	for (const struct smb_open *o = tc->s->opens; o; o = o->next)
		n++;
	return n;
}

START_TEST(test_related_compound_waits)
{
	struct smbt_conn a, b;
	struct cmp x = { 0 };
	struct ans an;
	uint64_t fha, fhb;

	setup();
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_file_make(exp0, "hot", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fha = open_file(&a, "hot");
	fhb = open_file(&b, "hot");
	cmp_create(&x, &a, "stalled");
	cmp_read(&x, &a, REL, UINT64_MAX, 4096, READ_LEN);
	cmp_close(&x, &a, REL, UINT64_MAX);
	cmp_send(&x, &a);
	smbt_stub_wait_inside(1);
	ck_assert_uint_eq(srv->nframes, 1);
	ck_assert_int_eq(ans_wait(&a, &an, 0.2), 0); /* nothing of the compound yet */
	/* the loop is free: this connection and another are served meanwhile */
	lone_read_ok(&a, fha, "hot", 100);
	lone_read_ok(&b, fhb, "hot", 8192);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.inside), 1); /* still held */
	smbt_stub_release();
	ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
	ck_assert_uint_eq(an.count, 3); /* one frame */
	ans_check(&an, &x, 0, STATUS_SUCCESS);
	ans_check(&an, &x, 1, STATUS_SUCCESS);
	ans_data(&an, 1, "stalled", 4096, READ_LEN);
	ans_check(&an, &x, 2, STATUS_SUCCESS);
	ck_assert_uint_eq(opens_of(&a), 1); /* the related CLOSE closed the CREATE's open */
	ck_assert_uint_eq(srv->nframes, 0);
	ck_assert_int_eq(ans_wait(&a, &an, 0.2), 0); /* nothing else */
	teardown();
}
END_TEST

START_TEST(test_unrelated_compound_parks_twice)
{
	struct smbt_conn a;
	struct cmp x = { 0 };
	struct ans an;
	uint64_t fs, fh;

	setup();
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_file_make(exp0, "hot", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fs = open_file(&a, "stalled");
	fh = open_file(&a, "hot");
	cmp_read(&x, &a, 0, fs, 0, READ_LEN);
	cmp_read(&x, &a, 0, fh, 512, READ_LEN);
	cmp_read(&x, &a, 0, fs, 3 * READ_LEN, READ_LEN);
	cmp_send(&x, &a);
	smbt_stub_wait_inside(1);
	ck_assert_int_eq(ans_wait(&a, &an, 0.2), 0);
	smbt_stub_release();
	ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
	ck_assert_uint_eq(an.count, 3);
	for (size_t i = 0; i < 3; i++)
		ans_check(&an, &x, i, STATUS_SUCCESS);
	ans_data(&an, 0, "stalled", 0, READ_LEN);
	ans_data(&an, 1, "hot", 512, READ_LEN);
	ans_data(&an, 2, "stalled", 3 * READ_LEN, READ_LEN);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.ended), 2); /* both stalled READs went to the stub, off the loop */
	ck_assert_uint_ge(srv->reads_deferred, 2);
	ck_assert_uint_eq(srv->nframes, 0);
	teardown();
}
END_TEST

START_TEST(test_cancel_queued_compound_read)
{
	struct smbt_conn a;
	struct cmp x = { 0 };
	struct ans an;
	uint64_t fs, fh;
	double t0;

	setup();
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_file_make(exp0, "hot", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fs = open_file(&a, "stalled");
	fh = open_file(&a, "hot");
	for (unsigned i = 0; i < SMB_READ_PER_FILE; i++) { /* the stalled file's worker slots */
		struct cmp l = { 0 };

		cmp_read(&l, &a, 0, fs, (uint64_t)i * READ_LEN, READ_LEN);
		cmp_send(&l, &a);
	}
	smbt_stub_wait_inside(SMB_READ_PER_FILE);
	cmp_read(&x, &a, 0, fs, 5 * READ_LEN, READ_LEN); /* queued behind them */
	cmp_read(&x, &a, 0, fh, 0, READ_LEN);
	cmp_send(&x, &a);
	ck_assert_int_eq(ans_wait(&a, &an, 0.2), 0);
	ck_assert_uint_eq(srv->nframes, 1);
	t0 = smbt_now_s();
	smbt_cancel(&a, false, x.h[0].message_id);
	ck_assert_int_eq(ans_wait(&a, &an, 2.0), 1);
	ck_assert(smbt_now_s() - t0 < 2.0);
	ck_assert_uint_eq(an.count, 2);
	ans_check(&an, &x, 0, STATUS_CANCELLED);
	ans_check(&an, &x, 1, STATUS_SUCCESS);
	ans_data(&an, 1, "hot", 0, READ_LEN);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.inside), SMB_READ_PER_FILE); /* the lone ones still held */
	ck_assert_uint_eq(srv->nframes, 0);
	smbt_stub_release();
	for (unsigned i = 0; i < SMB_READ_PER_FILE; i++) {
		ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
		ck_assert_uint_eq(an.m[0].hdr.status, STATUS_SUCCESS);
	}
	teardown();
}
END_TEST

START_TEST(test_conn_dropped_with_parked_compound)
{
	struct smbt_conn a, b;
	struct cmp x = { 0 }, y = { 0 };
	uint64_t fs, fb;
	double end;

	setup();
	smbt_stub.stall_ino = smbt_stub.cold_ino[0] = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	smbt_conn_export(&b, srv, &ts, 2, 0);
	fs = open_file(&a, "stalled");
	fb = open_file(&b, "stalled");
	cmp_read(&x, &a, 0, fs, 0, READ_LEN);
	cmp_close(&x, &a, REL, UINT64_MAX);
	cmp_send(&x, &a);
	cmp_read(&y, &a, 0, fs, READ_LEN, READ_LEN);
	cmp_read(&y, &a, 0, fs, 2 * READ_LEN, READ_LEN);
	cmp_send(&y, &a);
	smbt_stub_wait_inside(SMB_READ_PER_FILE); /* two parked compounds, one READ each at the stub */
	ck_assert_uint_eq(srv->nframes, 2);
	smb_conn_free(a.c);
	smbt_stub_release();
	end = smbt_now_s() + 5;
	while (smbt_stub_get(&smbt_stub.ended) < SMB_READ_PER_FILE && smbt_now_s() < end)
		usleep(2000);
	/* the ended jobs find no connection: their frames go (a job leaves the
	 * stub a little before it reaches the done list) */
	end = smbt_now_s() + 5;
	do
		smbt_loop_turn(srv);
	while (srv->nframes && smbt_now_s() < end && usleep(2000) == 0);
	ck_assert_uint_eq(srv->nframes, 0);
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.ended), SMB_READ_PER_FILE); /* neither frame went on to its next READ */
	lone_read_ok(&b, fb, "stalled", 0);
	teardown();
}
END_TEST

#define WLEN 64u

/* A WRITE of WLEN bytes of v at off (WRITE_THROUGH when through). */
static void cmp_write(struct cmp *x, struct smbt_conn *tc, uint32_t flags, uint64_t fid, uint64_t off, uint8_t v,
		      bool through)
{
	uint8_t *b = x->b[x->count];

	memset(b, 0, 48);
	smbt_put16(b, 49);
	smbt_put16(b + 2, SMB2_HDR_LEN + 48); /* DataOffset */
	smbt_put32(b + 4, WLEN);
	smbt_put64(b + 8, off);
	smbt_put64(b + 16, fid);
	smbt_put64(b + 24, fid);
	smbt_put32(b + 44, through ? 1u : 0u); /* SMB2_WRITEFLAG_WRITE_THROUGH */
	memset(b + 48, v, WLEN);
	x->n[x->count] = 48 + WLEN;
	cmp_add(x, tc, SMB2_WRITE, flags);
}

static void cmp_flush(struct cmp *x, struct smbt_conn *tc, uint32_t flags, uint64_t fid)
{
	uint8_t *b = x->b[x->count];

	memset(b, 0, 24);
	smbt_put16(b, 24);
	smbt_put64(b + 8, fid);
	smbt_put64(b + 16, fid);
	x->n[x->count] = 24;
	cmp_add(x, tc, SMB2_FLUSH, flags);
}

/* Message i of a is a WRITE answer of WLEN bytes. */
static void ans_written(const struct ans *a, size_t i)
{
	ck_assert_uint_eq(smb_wire_get_u16(a->m[i].body), 17);
	ck_assert_uint_eq(smb_wire_get_u32(a->m[i].body + 4), WLEN);
}

/* The WLEN bytes of fid at off, read through tc, are all v (or, v < 0, name's pattern). */
static void bytes_are(struct smbt_conn *tc, uint64_t fid, uint64_t off, int v, const char *name)
{
	struct cmp x = { 0 };
	struct ans a;
	const uint8_t *p;

	cmp_read(&x, tc, 0, fid, off, WLEN);
	cmp_send(&x, tc);
	ck_assert_int_eq(ans_wait(tc, &a, 5.0), 1);
	ans_check(&a, &x, 0, STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u32(a.m[0].body + 4), WLEN);
	p = a.m[0].p + a.m[0].body[2];
	for (uint32_t k = 0; k < WLEN; k++)
		ck_assert_uint_eq(p[k], v < 0 ? smbt_pattern(name, off + k) : (uint8_t)v);
}

/* Two connections, a on "stalled" (*fa: the stub holds its I/O) and "hot"
 * (*fha), b on "hot" (*fhb). */
static void stalled_pair(struct smbt_conn *a, struct smbt_conn *b, uint64_t *fa, uint64_t *fha, uint64_t *fhb)
{
	setup();
	smbt_stub.stall_ino = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_file_make(exp0, "hot", FILE_LEN);
	smbt_conn_export(a, srv, &ts, 1, 0);
	smbt_conn_export(b, srv, &ts, 2, 0);
	*fa = open_file(a, "stalled");
	*fha = open_file(a, "hot");
	*fhb = open_file(b, "hot");
}

/* While a worker holds a's request, a has no answer and both connections'
 * reads of "hot" are served; then the worker is let go. */
static void held_others_served(struct smbt_conn *a, struct smbt_conn *b, uint64_t fha, uint64_t fhb)
{
	struct ans an;

	smbt_stub_wait_inside(1); /* a worker holds it */
	ck_assert_int_eq(ans_wait(a, &an, 0.2), 0);
	lone_read_ok(a, fha, "hot", 0);
	lone_read_ok(b, fhb, "hot", 4096);
	smbt_stub_release();
}

START_TEST(test_write_through_off_loop)
{
	struct smbt_conn a, b;
	struct cmp x = { 0 }, y = { 0 };
	struct ans an;
	uint64_t fa, fha, fhb, deferred;

	stalled_pair(&a, &b, &fa, &fha, &fhb);
	cmp_write(&x, &a, 0, fa, 1000, 0xAB, true);
	cmp_send(&x, &a);
	held_others_served(&a, &b, fha, fhb);
	ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
	ck_assert_uint_eq(an.count, 1);
	ans_check(&an, &x, 0, STATUS_SUCCESS);
	ans_written(&an, 0);
	bytes_are(&a, fa, 1000, 0xAB, NULL);
	/* a WRITE that does not sync stays on the loop */
	deferred = srv->reads_deferred;
	cmp_write(&y, &a, 0, fa, 2000, 0x5A, false);
	cmp_send(&y, &a);
	ck_assert_int_eq(ans_wait(&a, &an, 2.0), 1);
	ans_check(&an, &y, 0, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->reads_deferred, deferred);
	bytes_are(&a, fa, 2000, 0x5A, NULL);
	ck_assert_uint_eq(srv->nframes, 0);
	teardown();
}
END_TEST

#define BIG_LEN (2u * VOL_IO_MAX)

/* A lone WRITE of len bytes of v at off on fid, received as smb_conn_read
 * hands a frame over (the buffer the server's). */
static void big_write(struct smbt_conn *tc, uint64_t fid, uint64_t off, uint32_t len, uint8_t v, struct cmp *x)
{
	size_t cap = SMB2_HDR_LEN + 48 + (size_t)len + 64, n = 48 + (size_t)len;
	uint8_t *body = malloc(n), *frame = malloc(cap);
	const uint8_t *b[1] = { body };

	ck_assert_ptr_nonnull(body);
	ck_assert_ptr_nonnull(frame);
	memset(body, 0, 48);
	smbt_put16(body, 49);
	smbt_put16(body + 2, SMB2_HDR_LEN + 48); /* DataOffset */
	smbt_put32(body + 4, len);
	smbt_put64(body + 8, off);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	memset(body + 48, v, len);
	x->count = 0;
	cmp_add(x, tc, SMB2_WRITE, 0);
	x->h[0].credit_charge = (uint16_t)((len + 65535u) / 65536u);
	smb_dispatch_recv_cap(tc->c, frame, smbt_chain_build(tc, x->h, b, &n, 1, frame, cap), cap);
	smb_conn_kick(tc->c);
	free(body);
}

START_TEST(test_big_write_off_loop)
{
	struct smbt_conn a, b;
	struct cmp x = { 0 };
	struct ans an;
	uint64_t fa, fha, fhb, deferred, copies;
	unsigned writes;

	stalled_pair(&a, &b, &fa, &fha, &fhb);
	deferred = srv->reads_deferred;
	copies = srv->park_copies;
	writes = smbt_stub_get(&smbt_stub.writes);
	big_write(&a, fa, 0, BIG_LEN, 0xC3, &x);
	held_others_served(&a, &b, fha, fhb);
	ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
	ck_assert_uint_eq(an.count, 1);
	ans_check(&an, &x, 0, STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u32(an.m[0].body + 4), BIG_LEN);
	ck_assert_uint_eq(srv->reads_deferred, deferred + 1);
	ck_assert_uint_eq(srv->park_copies, copies); /* parked in its receive buffer */
	ck_assert_uint_eq(smbt_stub_get(&smbt_stub.writes), writes + 1); /* one store write of it all */
	ck_assert_uint_eq(smbt_stub.write_len_max, BIG_LEN);
	bytes_are(&a, fa, 0, 0xC3, NULL);
	bytes_are(&a, fa, BIG_LEN - WLEN, 0xC3, NULL);
	/* SMB_WRITE_ASYNC_MIN bytes: a worker's too */
	deferred = srv->reads_deferred;
	smbt_stub.stall_ino = 0;
	big_write(&a, fa, 0, SMB_WRITE_ASYNC_MIN, 0x5A, &x);
	ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
	ans_check(&an, &x, 0, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->reads_deferred, deferred + 1);
	bytes_are(&a, fa, SMB_WRITE_ASYNC_MIN - WLEN, 0x5A, NULL);
	/* a byte shorter: on the loop */
	deferred = srv->reads_deferred;
	big_write(&a, fa, 0, SMB_WRITE_ASYNC_MIN - 1, 0x3C, &x);
	ck_assert_int_eq(ans_wait(&a, &an, 2.0), 1);
	ans_check(&an, &x, 0, STATUS_SUCCESS);
	ck_assert_uint_eq(srv->reads_deferred, deferred);
	bytes_are(&a, fa, SMB_WRITE_ASYNC_MIN - 1 - WLEN, 0x3C, NULL);
	ck_assert_uint_eq(srv->nframes, 0);
	teardown();
}
END_TEST

START_TEST(test_create_write_through_option)
{
	struct smbt_conn a;
	struct cmp x = { 0 };
	struct ans an;
	uint64_t fa = 0;
	uint32_t attrs;

	setup();
	smbt_stub.stall_ino = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	ck_assert_uint_eq(smbl_open(&a, "stalled", false, ALL_ACCESS, 0, 0x2u /* FILE_WRITE_THROUGH */, &fa, &attrs),
			  STATUS_SUCCESS);
	cmp_write(&x, &a, 0, fa, 0, 0x77, false); /* no flag: the open makes it file-sync */
	cmp_send(&x, &a);
	smbt_stub_wait_inside(1);
	ck_assert_int_eq(ans_wait(&a, &an, 0.2), 0);
	smbt_stub_release();
	ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
	ans_check(&an, &x, 0, STATUS_SUCCESS);
	ans_written(&an, 0);
	bytes_are(&a, fa, 0, 0x77, NULL);
	teardown();
}
END_TEST

START_TEST(test_compound_write_flush_read)
{
	struct smbt_conn a;
	struct cmp x = { 0 };
	struct ans an;
	uint64_t fa, deferred;

	setup();
	smbt_stub.stall_ino = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "stalled");
	deferred = srv->reads_deferred;
	cmp_write(&x, &a, 0, fa, 0, 0xCD, true);
	cmp_flush(&x, &a, 0, fa);
	cmp_read(&x, &a, 0, fa, 0, WLEN);
	cmp_send(&x, &a);
	smbt_stub_wait_inside(1);
	ck_assert_int_eq(ans_wait(&a, &an, 0.2), 0);
	smbt_stub_release();
	ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
	ck_assert_uint_eq(an.count, 3);
	for (size_t i = 0; i < 3; i++)
		ans_check(&an, &x, i, STATUS_SUCCESS);
	ans_written(&an, 0);
	ck_assert_uint_eq(smb_wire_get_u16(an.m[1].body), 4); /* FLUSH's */
	ck_assert_uint_eq(smb_wire_get_u32(an.m[2].body + 4), WLEN);
	for (uint32_t k = 0; k < WLEN; k++)
		ck_assert_uint_eq(an.m[2].p[an.m[2].body[2] + k], 0xCD); /* after the WRITE, in order */
	ck_assert_uint_ge(srv->reads_deferred, deferred + 2); /* the WRITE and the FLUSH went to workers */
	teardown();
}
END_TEST

START_TEST(test_cancel_queued_write)
{
	struct smbt_conn a;
	struct cmp x = { 0 };
	struct ans an;
	uint64_t fa;

	setup();
	smbt_stub.stall_ino = smbt_file_make(exp0, "stalled", FILE_LEN);
	smbt_conn_export(&a, srv, &ts, 1, 0);
	fa = open_file(&a, "stalled");
	for (unsigned i = 0; i < SMB_READ_PER_FILE; i++) {
		struct cmp l = { 0 };

		cmp_write(&l, &a, 0, fa, (uint64_t)i * WLEN, 0x11, true);
		cmp_send(&l, &a);
	}
	smbt_stub_wait_inside(SMB_READ_PER_FILE);
	cmp_write(&x, &a, 0, fa, 8192, 0xEE, true); /* queued behind them */
	cmp_send(&x, &a);
	ck_assert_int_eq(ans_wait(&a, &an, 0.2), 0);
	smbt_cancel(&a, false, x.h[0].message_id);
	ck_assert_int_eq(ans_wait(&a, &an, 2.0), 1);
	ck_assert_uint_eq(an.count, 1);
	ans_check(&an, &x, 0, STATUS_CANCELLED);
	smbt_stub_release();
	for (unsigned i = 0; i < SMB_READ_PER_FILE; i++) {
		ck_assert_int_eq(ans_wait(&a, &an, 5.0), 1);
		ck_assert_uint_eq(an.m[0].hdr.status, STATUS_SUCCESS);
	}
	bytes_are(&a, fa, 0, 0x11, NULL);
	bytes_are(&a, fa, 8192, -1, "stalled"); /* the cancelled one wrote nothing */
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_frame");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_related_compound_waits);
	tcase_add_test(tc, test_unrelated_compound_parks_twice);
	tcase_add_test(tc, test_cancel_queued_compound_read);
	tcase_add_test(tc, test_conn_dropped_with_parked_compound);
	tcase_add_test(tc, test_write_through_off_loop);
	tcase_add_test(tc, test_big_write_off_loop);
	tcase_add_test(tc, test_create_write_through_option);
	tcase_add_test(tc, test_compound_write_flush_read);
	tcase_add_test(tc, test_cancel_queued_write);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
