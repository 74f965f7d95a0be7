/* test_rpc: record marking and call-header parsing (agent/nfs/rpc.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs/rpc.h"
#include "tests/lib/aqt.h"

static size_t put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return 4;
}

START_TEST(test_single_fragment_bytewise)
{
	uint8_t in[12];
	struct rpc_rec r;
	size_t used, i, len;
	int rc = RPC_REC_MORE;
	uint8_t *rec;

	put32(in, 0x80000008u);
	memcpy(in + 4, "abcdefgh", 8);
	rpc_rec_init(&r, 64);
	for (i = 0; i < sizeof(in); i++) {
		rc = rpc_rec_feed(&r, in + i, 1, &used);
		ck_assert_uint_eq(used, 1);
		if (i + 1 < sizeof(in))
			ck_assert_int_eq(rc, RPC_REC_MORE);
	}
	ck_assert_int_eq(rc, RPC_REC_DONE);
	rec = rpc_rec_take(&r, &len);
	ck_assert_uint_eq(len, 8);
	ck_assert_int_eq(memcmp(rec, "abcdefgh", 8), 0);
	free(rec);
	rpc_rec_cleanup(&r);
}
END_TEST

START_TEST(test_multi_fragment_and_pipelined)
{
	uint8_t in[64];
	size_t n = 0, used, len, off = 0;
	struct rpc_rec r;
	uint8_t *rec;
	int rc;

	n += put32(in + n, 3);
	memcpy(in + n, "abc", 3);
	n += 3;
	n += put32(in + n, 0); /* empty middle fragment */
	n += put32(in + n, 0x80000002u);
	memcpy(in + n, "de", 2);
	n += 2;
	n += put32(in + n, 0x80000001u); /* a second record right behind */
	in[n++] = 'z';
	rpc_rec_init(&r, 64);
	rc = rpc_rec_feed(&r, in, n, &used);
	ck_assert_int_eq(rc, RPC_REC_DONE);
	off += used;
	rec = rpc_rec_take(&r, &len);
	ck_assert_uint_eq(len, 5);
	ck_assert_int_eq(memcmp(rec, "abcde", 5), 0);
	free(rec);
	rc = rpc_rec_feed(&r, in + off, n - off, &used);
	ck_assert_int_eq(rc, RPC_REC_DONE);
	ck_assert_uint_eq(off + used, n);
	rec = rpc_rec_take(&r, &len);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(rec[0], 'z');
	free(rec);
	rpc_rec_cleanup(&r);
}
END_TEST

START_TEST(test_oversized_refused)
{
	uint8_t in[8];
	struct rpc_rec r;
	size_t used;

	put32(in, 0xffffffffu); /* last fragment of 0x7fffffff bytes */
	rpc_rec_init(&r, RPC_REC_MAX);
	ck_assert_int_eq(rpc_rec_feed(&r, in, 4, &used), RPC_REC_TOOBIG);
	ck_assert_ptr_null(r.buf); /* nothing allocated */
	rpc_rec_cleanup(&r);

	/* many fragments adding up past the cap */
	rpc_rec_init(&r, 16);
	put32(in, 10);
	memset(in + 4, 'x', 4);
	ck_assert_int_eq(rpc_rec_feed(&r, in, 4, &used), RPC_REC_MORE);
	{
		uint8_t body[10] = {0};

		ck_assert_int_eq(rpc_rec_feed(&r, body, 10, &used), RPC_REC_MORE);
	}
	put32(in, 0x80000008u);
	ck_assert_int_eq(rpc_rec_feed(&r, in, 4, &used), RPC_REC_TOOBIG);
	rpc_rec_cleanup(&r);
}
END_TEST

START_TEST(test_direct)
{
	uint8_t in[4];
	struct rpc_rec r;
	size_t used, room = 0, len;
	uint8_t *p, *rec;

	put32(in, 0x80000006u);
	rpc_rec_init(&r, 64);
	ck_assert_ptr_null(rpc_rec_direct(&r, &room));
	ck_assert_int_eq(rpc_rec_feed(&r, in, 4, &used), RPC_REC_MORE);
	p = rpc_rec_direct(&r, &room);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(room, 6);
	memcpy(p, "123", 3);
	ck_assert_int_eq(rpc_rec_advance(&r, 3), RPC_REC_MORE);
	p = rpc_rec_direct(&r, &room);
	ck_assert_uint_eq(room, 3);
	memcpy(p, "456", 3);
	ck_assert_int_eq(rpc_rec_advance(&r, 3), RPC_REC_DONE);
	rec = rpc_rec_take(&r, &len);
	ck_assert_int_eq(memcmp(rec, "123456", 6), 0);
	free(rec);
	rpc_rec_cleanup(&r);
}
END_TEST

/* Memory follows the bytes that came, not the length a mark announced. */
START_TEST(test_room_follows_bytes)
{
	static uint8_t body[RPC_REC_STEP * 3];
	uint8_t in[4];
	struct rpc_rec r;
	size_t used, room, len, got = 0;
	uint8_t *p, *rec;

	put32(in, 0x80000000u | (uint32_t)sizeof(body));
	rpc_rec_init(&r, RPC_REC_MAX);
	ck_assert_int_eq(rpc_rec_feed(&r, in, 4, &used), RPC_REC_MORE);
	ck_assert_uint_eq(r.cap, 0);
	ck_assert_int_eq(rpc_rec_feed(&r, (const uint8_t *)"abcd", 4, &used), RPC_REC_MORE);
	ck_assert_uint_le(r.cap, RPC_REC_STEP);
	ck_assert(rpc_rec_started(&r));
	got = 4;
	memcpy(body, "abcd", 4);
	for (size_t i = 4; i < sizeof(body); i++)
		body[i] = (uint8_t)i;
	while ((p = rpc_rec_direct(&r, &room)) != NULL) {
		size_t n = room < 1000 ? room : 1000;

		ck_assert_uint_le(r.cap, 2 * (got + RPC_REC_STEP));
		memcpy(p, body + got, n);
		got += n;
		if (rpc_rec_advance(&r, n) == RPC_REC_DONE)
			break;
	}
	ck_assert_uint_eq(got, sizeof(body));
	rec = rpc_rec_take(&r, &len);
	ck_assert_uint_eq(len, sizeof(body));
	ck_assert_int_eq(memcmp(rec, body, len), 0);
	ck_assert(!rpc_rec_started(&r));
	free(rec);
	rpc_rec_cleanup(&r);
}
END_TEST

/* With a budget, a fragment that filled its first RPC_REC_STEP gets the
 * room for all the rest at once (no doubling copies), charged to the budget
 * until the record is taken; past the budget, room follows the bytes again. */
static size_t fill_direct(struct rpc_rec *r, const uint8_t *body, size_t got, size_t until, size_t *grows)
{
	uint8_t *p;
	size_t room, cap = r->cap;

	while (got < until && (p = rpc_rec_direct(r, &room)) != NULL) {
		size_t n = room < until - got ? room : until - got;

		if (r->cap != cap)
			(*grows)++;
		cap = r->cap;
		memcpy(p, body + got, n);
		got += n;
		if (rpc_rec_advance(r, n) == RPC_REC_DONE)
			break;
	}
	return got;
}

START_TEST(test_room_budget)
{
	static uint8_t body[RPC_REC_STEP * 16];
	_Atomic size_t ahead = 0;
	uint8_t in[4];
	struct rpc_rec r, s;
	size_t used, len, got, grows = 0;
	uint8_t *rec;

	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 7);
	put32(in, 0x80000000u | (uint32_t)sizeof(body));
	rpc_rec_init(&r, RPC_REC_MAX);
	rpc_rec_budget(&r, &ahead, 2 * sizeof(body));
	ck_assert_int_eq(rpc_rec_feed(&r, in, 4, &used), RPC_REC_MORE);
	got = fill_direct(&r, body, 0, RPC_REC_STEP, &grows);
	ck_assert_uint_eq(got, RPC_REC_STEP);
	ck_assert_uint_le(r.cap, RPC_REC_STEP); /* nothing ahead before a step came */
	ck_assert_uint_eq(atomic_load(&ahead), 0);
	got = fill_direct(&r, body, got, got + 1, &grows);
	ck_assert_uint_eq(r.cap, sizeof(body)); /* the rest of the fragment at once */
	ck_assert_uint_gt(atomic_load(&ahead), 0);
	grows = 0;
	got = fill_direct(&r, body, got, sizeof(body), &grows);
	ck_assert_uint_eq(grows, 0);
	ck_assert_uint_eq(got, sizeof(body));
	rec = rpc_rec_take(&r, &len);
	ck_assert_uint_eq(atomic_load(&ahead), 0); /* the charge went back */
	ck_assert_uint_eq(len, sizeof(body));
	ck_assert_int_eq(memcmp(rec, body, len), 0);
	free(rec);

	/* Budget held by a stalled record: the next grows by doubling. */
	ck_assert_int_eq(rpc_rec_feed(&r, in, 4, &used), RPC_REC_MORE);
	got = fill_direct(&r, body, 0, RPC_REC_STEP + 1, &grows);
	ck_assert_uint_eq(r.cap, sizeof(body));
	rpc_rec_init(&s, RPC_REC_MAX);
	rpc_rec_budget(&s, &ahead, sizeof(body)); /* what r holds leaves too little */
	ck_assert_int_eq(rpc_rec_feed(&s, in, 4, &used), RPC_REC_MORE);
	got = fill_direct(&s, body, 0, RPC_REC_STEP + 1, &grows);
	ck_assert_uint_le(s.cap, 2 * (got + RPC_REC_STEP));
	ck_assert_uint_lt(s.cap, sizeof(body));
	rpc_rec_cleanup(&r); /* a record dropped unfinished gives its charge back too */
	ck_assert_uint_eq(atomic_load(&ahead), 0);
	got = fill_direct(&s, body, got, sizeof(body), &grows);
	ck_assert_uint_eq(got, sizeof(body));
	rec = rpc_rec_take(&s, &len);
	ck_assert_int_eq(memcmp(rec, body, len), 0);
	free(rec);
	rpc_rec_cleanup(&s);
}
END_TEST

/* A call header with AUTH_SYS credentials. */
static size_t make_call(uint8_t *b, uint32_t rpcvers, uint32_t flavor, uint32_t ngids)
{
	size_t n = 0, credlen_at, i;

	n += put32(b + n, 0x1234);  /* xid */
	n += put32(b + n, 0);       /* CALL */
	n += put32(b + n, rpcvers);
	n += put32(b + n, 100003);
	n += put32(b + n, 3);
	n += put32(b + n, 1);
	n += put32(b + n, flavor);
	credlen_at = n;
	n += 4;
	n += put32(b + n, 99);      /* stamp */
	n += put32(b + n, 4);
	memcpy(b + n, "host", 4);
	n += 4;
	n += put32(b + n, 1000);
	n += put32(b + n, 100);
	n += put32(b + n, ngids);
	for (i = 0; i < ngids && i < 20; i++)
		n += put32(b + n, (uint32_t)(2000 + i));
	put32(b + credlen_at, (uint32_t)(n - credlen_at - 4));
	n += put32(b + n, 0);       /* verifier AUTH_NONE */
	n += put32(b + n, 0);
	n += put32(b + n, 0xabcdef);/* args */
	return n;
}

START_TEST(test_call_parse)
{
	uint8_t b[256];
	struct rpc_call c;
	size_t n = make_call(b, 2, RPC_AUTH_SYS, 2);

	ck_assert_int_eq(rpc_call_parse(b, n, &c), RPC_PARSE_OK);
	ck_assert_uint_eq(c.xid, 0x1234);
	ck_assert_uint_eq(c.prog, 100003);
	ck_assert_uint_eq(c.cred.uid, 1000);
	ck_assert_uint_eq(c.cred.gid, 100);
	ck_assert_uint_eq(c.cred.ngids, 2);
	ck_assert_uint_eq(c.cred.gids[1], 2001);
	ck_assert_str_eq(c.cred.machine, "host");
	ck_assert_uint_eq(c.args_len, 4);

	n = make_call(b, 3, RPC_AUTH_SYS, 0);
	ck_assert_int_eq(rpc_call_parse(b, n, &c), RPC_PARSE_RPC_MISMATCH);
	ck_assert_uint_eq(c.xid, 0x1234);
	n = make_call(b, 2, RPC_AUTH_SYS, 17); /* too many groups */
	ck_assert_int_eq(rpc_call_parse(b, n, &c), RPC_PARSE_BADCRED);
	n = make_call(b, 2, 6, 0);             /* RPCSEC_GSS */
	ck_assert_int_eq(rpc_call_parse(b, n, &c), RPC_PARSE_TOOWEAK);
	n = make_call(b, 2, RPC_AUTH_SYS, 1);
	ck_assert_int_eq(rpc_call_parse(b, 6, &c), RPC_PARSE_GARBAGE);
	ck_assert_int_eq(rpc_call_parse(b, 30, &c), RPC_PARSE_BADCRED); /* truncated cred */
	b[7] = 1;                              /* a REPLY, not a CALL */
	ck_assert_int_eq(rpc_call_parse(b, n, &c), RPC_PARSE_GARBAGE);
}
END_TEST

START_TEST(test_reply_headers)
{
	struct ut_buf b;
	struct xdr_cur c;

	ut_buf_init(&b, 256);
	rpc_reply_prog_mismatch(&b, 7, 3, 3);
	xdr_cur_init(&c, ut_buf_bytes(&b), b.len);
	ck_assert_uint_eq(xdr_u32(&c), 7);
	ck_assert_uint_eq(xdr_u32(&c), RPC_MSG_REPLY);
	ck_assert_uint_eq(xdr_u32(&c), 0);   /* accepted */
	ck_assert_uint_eq(xdr_u32(&c), 0);   /* verf flavor */
	ck_assert_uint_eq(xdr_u32(&c), 0);   /* verf len */
	ck_assert_uint_eq(xdr_u32(&c), RPC_PROG_MISMATCH);
	ck_assert_uint_eq(xdr_u32(&c), 3);
	ck_assert_uint_eq(xdr_u32(&c), 3);
	ck_assert_uint_eq(xdr_left(&c), 0);
	b.len = 0;
	rpc_reply_auth_error(&b, 8, RPC_AUTH_TOOWEAK);
	ck_assert_uint_eq(b.len, 20);
	ut_buf_cleanup(&b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rpc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_single_fragment_bytewise);
	tcase_add_test(tc, test_multi_fragment_and_pipelined);
	tcase_add_test(tc, test_oversized_refused);
	tcase_add_test(tc, test_direct);
	tcase_add_test(tc, test_room_follows_bytes);
	tcase_add_test(tc, test_room_budget);
	tcase_add_test(tc, test_call_parse);
	tcase_add_test(tc, test_reply_headers);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
