/* smb_leasemsg: requests and answers of the oplock and lease suites (smb_leasemsg.h). */
#include "tests/agent/smb/smb_leasemsg.h"

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_lease.h"
#include "api/api_intent.h"
#include "tests/lib/aqt_store.h"

void smbl_export_down(struct aqt_store *ts, struct smb_srv *srv, struct vol_export *exp0)
{
	smbt_conns_free(srv);
	ck_assert_uint_eq(vol_lease_count(ts->store), 0);
	ck_assert_uint_eq(srv->ncreates, 0);
	smbt_export_down(ts, srv, exp0);
}

struct aqt_store smbl_ts;
struct smb_srv *smbl_srv;
struct vol_export *smbl_exp0;

void smbl_fix_up(void)
{
	smbt_export_up(&smbl_ts, &smbl_srv, &smbl_exp0);
}

void smbl_fix_down(void)
{
	smbl_export_down(&smbl_ts, smbl_srv, smbl_exp0);
}

void smbl_conn(struct smbt_conn *tc, uint64_t key)
{
	smbt_conn_export(tc, smbl_srv, &smbl_ts, key, API_INTENT_SMB_OPLOCKS);
}

void smbl_store_down(struct aqt_store *ts, struct smb_srv *srv)
{
	smbt_conns_free(srv);
	ck_assert_uint_eq(srv->ndurable, 0);
	ck_assert_uint_eq(vol_lease_count(ts->store), 0);
	smbt_srv_free(srv);
	aqt_store_cleanup(ts);
}

int smbl_recv(struct smbt_conn *tc, struct smbl_msg *m)
{
	uint8_t buf[2048];
	size_t len;

	if (!smbt_recv(tc, buf, sizeof(buf), &len, &m->h, NULL))
		return 0;
	ck_assert_uint_ge(len, SMB2_HDR_LEN);
	m->len = len - SMB2_HDR_LEN;
	ck_assert_uint_le(m->len, sizeof(m->body));
	memcpy(m->body, buf + SMB2_HDR_LEN, m->len);
	return 1;
}

void smbl_send(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *body, size_t n)
{
	h->tree_id = tc->t->id;
	h->message_id = tc->mid++;
	smbt_send(tc, h, body, n);
}

/* A CREATE response body into q. */
static void smbl_create_parse(struct smbl_create *q, const struct smbl_msg *m)
{
	q->status = m->h.status;
	if (m->h.status != STATUS_SUCCESS)
		return;
	ck_assert_uint_eq(smb_wire_get_u16(m->body), 89);
	q->oplock_got = m->body[2];
	q->fid = smb_wire_get_u64(m->body + 64);
	q->action_got = smb_wire_get_u32(m->body + 4);
	q->alloc_got = smb_wire_get_u64(m->body + 40);
	q->eof_got = smb_wire_get_u64(m->body + 48);
	q->dh_got[0] = '\0';
	if (smb_wire_get_u32(m->body + 84)) {
		size_t off = smb_wire_get_u32(m->body + 80) - SMB2_HDR_LEN;

		for (;;) {
			const uint8_t *c = m->body + off, *d = c + smb_wire_get_u16(c + 10), *name = c + smb_wire_get_u16(c + 4);
			uint32_t next = smb_wire_get_u32(c);

			ck_assert_uint_lt(off + 24, m->len);
			if (!memcmp(name, "RqLs", 4)) {
				q->ctx = true;
				q->ctx_len = smb_wire_get_u32(c + 12);
				memcpy(q->key, d, 16);
				q->state = smb_wire_get_u32(d + 16);
				q->flags = smb_wire_get_u32(d + 20);
				if (q->ctx_len == 52)
					q->epoch = smb_wire_get_u16(d + 48);
			} else {
				ck_assert(!memcmp(name, "DH2Q", 4) || !memcmp(name, "DHnQ", 4));
				memcpy(q->dh_got, name, 4);
				q->dh_got[4] = '\0';
				ck_assert_uint_eq(smb_wire_get_u32(c + 12), 8);
				q->dh_timeout = smb_wire_get_u32(d);
				q->dh_flags = smb_wire_get_u32(d + 4);
			}
			if (!next)
				break;
			off += next;
		}
	}
}

/* Append one create context (tag, data) at body[*at], linking it from the previous one at *prev. */
static void smbl_put_ctx(uint8_t *body, size_t *at, size_t *prev, const char *tag, const uint8_t *data, size_t dlen)
{
	size_t c = (*at + 7) & ~(size_t)7, nlen = strlen(tag), d = 16 + ((nlen + 7) & ~(size_t)7);

	/* a 4-character tag, or a 16-byte GUID name (APP_INSTANCE_ID) */
	if (*prev != SIZE_MAX)
		smbt_put32(body + *prev, (uint32_t)(c - *prev));
	else
		smbt_put32(body + 48, (uint32_t)(SMB2_HDR_LEN + c));
	memset(body + c, 0, d);
	smbt_put16(body + c + 4, 16);
	smbt_put16(body + c + 6, (uint16_t)nlen);
	smbt_put16(body + c + 10, (uint16_t)d);
	smbt_put32(body + c + 12, (uint32_t)dlen);
	memcpy(body + c + 16, tag, nlen);
	memcpy(body + c + d, data, dlen);
	*prev = c;
	*at = c + d + dlen;
}

void smbl_create(struct smbt_conn *tc, struct smbl_create *q)
{
	uint8_t body[384] = { 0 }, ld[52] = { 0 };
	size_t nlen = strlen(q->name) * 2, at = 56, prev = SIZE_MAX, start;
	struct smb_wire_hdr h = { .command = SMB2_CREATE };
	const struct smbl_lease *l = &q->lease;
	struct smbl_msg m;

	smbt_put16(body, 57);
	body[3] = l->on && !q->oplock_as_is ? 0xFF : q->oplock;
	smbt_put32(body + 4, 2);                                     /* impersonation */
	smbt_put32(body + 24, q->access ? q->access : q->dir ? 0x1u : 0x3u | 0x6u << 16); /* read/write data */
	smbt_put32(body + 32, q->share_none ? 0 : q->share ? q->share : SMBL_SHARE_ALL);
	smbt_put32(body + 36, q->disposition ? q->disposition : SMBL_OPEN_IF);
	smbt_put32(body + 40, (q->dir ? 0x1u : 0x40u) | q->options);
	smbt_put16(body + 44, SMB2_HDR_LEN + 56);
	smbt_put16(body + 46, (uint16_t)nlen);
	for (size_t i = 0; q->name[i]; i++)
		body[at + 2 * i] = (uint8_t)q->name[i];
	at += nlen;
	start = (at + 7) & ~(size_t)7;
	if (l->on) {
		memset(ld, l->key, 16);
		smbt_put32(ld + 16, l->state);
		if (l->v2)
			smbt_put16(ld + 48, l->epoch);
		smbl_put_ctx(body, &at, &prev, "RqLs", ld, l->v2 ? 52 : 32);
	}
	if (q->dh)
		smbl_put_ctx(body, &at, &prev, q->dh, q->dh_data, q->dh_len);
	if (q->alsi) {
		uint8_t as[8];

		smbt_put64(as, q->alsi);
		smbl_put_ctx(body, &at, &prev, "AlSi", as, sizeof(as));
	}
	if (q->app) {
		uint8_t ai[20] = { 20 };

		memcpy(ai + 4, q->app, 16);
		smbl_put_ctx(body, &at, &prev, SMB2_CREATE_APP_INSTANCE_ID, ai, sizeof(ai));
	}
	if (q->app_ver) {
		uint8_t av[24] = { 24 };

		smbt_put64(av + 8, q->app_hi);
		smbt_put64(av + 16, q->app_lo);
		smbl_put_ctx(body, &at, &prev, SMB2_CREATE_APP_INSTANCE_VERSION, av, sizeof(av));
	}
	if (q->dh_extra) {
		static const uint8_t zero[16];

		smbl_put_ctx(body, &at, &prev, q->dh_extra, zero, sizeof(zero));
	}
	if (prev != SIZE_MAX)
		smbt_put32(body + 52, (uint32_t)(at - start));
	q->mid = tc->mid;
	smbl_send(tc, &h, body, at);
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_CREATE);
	q->ctx = false;
	q->status = m.h.status;
	if (m.h.status == STATUS_PENDING) {
		q->aid = smbt_check_pending(&m.h, q->mid);
		return;
	}
	smbl_create_parse(q, &m);
}

size_t smbl_create_body(uint8_t *b, const char *name, uint32_t access, uint32_t attrs, uint32_t options,
			uint32_t disposition)
{
	size_t nlen = strlen(name) * 2;

	memset(b, 0, 56 + nlen);
	smbt_put16(b, 57);
	smbt_put32(b + 4, 2);
	smbt_put32(b + 24, access);
	smbt_put32(b + 28, attrs);
	smbt_put32(b + 32, SMBL_SHARE_ALL);
	smbt_put32(b + 36, disposition);
	smbt_put32(b + 40, options);
	smbt_put16(b + 44, SMB2_HDR_LEN + 56);
	smbt_put16(b + 46, (uint16_t)nlen);
	for (size_t i = 0; name[i]; i++)
		b[56 + 2 * i] = (uint8_t)name[i];
	return 56 + nlen;
}

uint32_t smbl_open(struct smbt_conn *tc, const char *name, bool dir, uint32_t access, uint32_t attrs,
		   uint32_t options, uint64_t *fid, uint32_t *attrs_got)
{
	uint8_t body[128];
	struct smb_wire_hdr h = { .command = SMB2_CREATE };
	struct smbl_msg m;
	size_t n;

	ck_assert_uint_le(56 + 2 * strlen(name), sizeof(body));
	n = smbl_create_body(body, name, access, attrs, (dir ? 0x1u : 0x40u) | options, SMBL_OPEN_IF);
	smbl_send(tc, &h, body, n);
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_CREATE);
	if (m.h.status == STATUS_SUCCESS) {
		ck_assert_uint_ge(m.len, 88);
		*attrs_got = smb_wire_get_u32(m.body + 56);
		*fid = smb_wire_get_u64(m.body + 64);
	}
	return m.h.status;
}

struct smbl_create smbl_open_lease(struct smbt_conn *tc, const char *name, struct smbl_lease l)
{
	struct smbl_create q = { .name = name, .lease = l };

	q.lease.on = true;
	smbl_create(tc, &q);
	return q;
}

unsigned smbl_grant_state(const struct smbt_conn *tc, uint64_t fid, bool *breaking)
{
	for (struct smb_open *o = tc->s->opens; o; o = o->next)
		if (o->id == fid)
			return vol_lease_state(tc->c->srv->store, &o->lease, breaking, NULL);
	ck_abort_msg("no open %llu", (unsigned long long)fid);
	return 0;
}

void smbl_create_final(struct smbt_conn *tc, struct smbl_create *q)
{
	struct smbl_msg m;

	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_CREATE);
	ck_assert(m.h.flags & SMB2_FLAGS_ASYNC_COMMAND);
	ck_assert_uint_eq(m.h.message_id, q->mid);
	ck_assert_uint_eq(m.h.async_id, q->aid);
	smbl_create_parse(q, &m);
}

uint32_t smbl_close(struct smbt_conn *tc, uint64_t fid)
{
	uint8_t body[24] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_CLOSE };
	struct smbl_msg m;

	smbt_put16(body, 24);
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	smbl_send(tc, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	return m.h.status;
}

/* A QUERY_INFO of info type type (SMB2_0_INFO_*), class cls, parts what
 * (AdditionalInformation) of fid with OutputBufferLength len: its answer in *m. */
static void info_query(struct smbt_conn *tc, uint8_t type, uint8_t cls, uint32_t what, uint32_t len, uint64_t fid,
		       struct smbl_msg *m)
{
	uint8_t body[41] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_QUERY_INFO };

	smbt_put16(body, 41);
	body[2] = type;
	body[3] = cls;
	smbt_put32(body + 4, len);
	smbt_put32(body + 16, what);
	smbt_put64(body + 24, fid);
	smbt_put64(body + 32, fid);
	smbl_send(tc, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(tc, m), 1);
	ck_assert_uint_eq(m->h.command, SMB2_QUERY_INFO);
}

/* A SET_INFO of info type type, class cls, parts what of fid with
 * data[0..n) (at most 1024; 0 sends one zero byte as the buffer): its MessageId
 * in *mid, its answer in *m. */
static void info_set(struct smbt_conn *tc, uint8_t type, uint8_t cls, uint32_t what, uint64_t fid,
		     const uint8_t *data, size_t n, uint64_t *mid, struct smbl_msg *m)
{
	uint8_t body[32 + 1024] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_SET_INFO };

	ck_assert_uint_le(n, sizeof(body) - 32);
	smbt_put16(body, 33);
	body[2] = type;
	body[3] = cls;
	smbt_put32(body + 4, (uint32_t)n);
	smbt_put16(body + 8, SMB2_HDR_LEN + 32);
	smbt_put32(body + 12, what);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	if (n)
		memcpy(body + 32, data, n);
	*mid = tc->mid;
	smbl_send(tc, &h, body, 32 + (n ? n : 1));
	ck_assert_int_eq(smbl_recv(tc, m), 1);
	ck_assert_uint_eq(m->h.command, SMB2_SET_INFO);
}

uint32_t smbl_query_info(struct smbt_conn *tc, uint64_t fid, uint8_t cls, uint32_t len, uint8_t *out, size_t *n)
{
	struct smbl_msg m;

	info_query(tc, SMB2_0_INFO_FILE, cls, 0, len, fid, &m);
	*n = 0;
	if (m.h.status == STATUS_SUCCESS || m.h.status == STATUS_BUFFER_OVERFLOW) {
		*n = smb_wire_get_u32(m.body + 4);
		ck_assert_uint_le(*n, 512);
		memcpy(out, m.body + 8, *n);
	}
	return m.h.status;
}

uint32_t smbl_set_info_async(struct smbt_conn *tc, uint64_t fid, uint8_t cls, const uint8_t *data, size_t n,
			     uint64_t *mid, uint64_t *aid)
{
	struct smbl_msg m;

	ck_assert_uint_le(n, 224);
	info_set(tc, SMB2_0_INFO_FILE, cls, 0, fid, data, n, mid, &m);
	if (m.h.status == STATUS_PENDING)
		*aid = smbt_check_pending(&m.h, *mid);
	return m.h.status;
}

uint32_t smbl_set_info(struct smbt_conn *tc, uint64_t fid, uint8_t cls, const uint8_t *data, size_t n)
{
	uint64_t mid, aid;

	return smbl_set_info_async(tc, fid, cls, data, n, &mid, &aid);
}

uint32_t smbl_set_sec(struct smbt_conn *tc, uint64_t fid, uint32_t what, const uint8_t *sd, size_t n)
{
	struct smbl_msg m;
	uint64_t mid;

	info_set(tc, SMB2_0_INFO_SECURITY, 0, what, fid, sd, n, &mid, &m);
	return m.h.status;
}

uint32_t smbl_query_sec(struct smbt_conn *tc, uint64_t fid, uint32_t what, uint8_t *out, size_t cap, size_t *n)
{
	struct smbl_msg m;

	ck_assert_uint_le(cap, 1024);
	info_query(tc, SMB2_0_INFO_SECURITY, 0, what, (uint32_t)cap, fid, &m);
	*n = 0;
	if (m.h.status == STATUS_SUCCESS) {
		size_t off = smb_wire_get_u16(m.body + 2);

		*n = smb_wire_get_u32(m.body + 4);
		ck_assert_uint_le(*n, cap);
		ck_assert_uint_ge(off, SMB2_HDR_LEN + 8);
		ck_assert_uint_le(off - SMB2_HDR_LEN + *n, m.len);
		memcpy(out, m.body + off - SMB2_HDR_LEN, *n);
	}
	return m.h.status;
}

uint32_t smbl_write(struct smbt_conn *tc, uint64_t fid, const char *data)
{
	uint8_t body[64] = { 0 };
	size_t n = strlen(data);
	struct smb_wire_hdr h = { .command = SMB2_WRITE };
	struct smbl_msg m;

	smbt_put16(body, 49);
	smbt_put16(body + 2, SMB2_HDR_LEN + 48);
	smbt_put32(body + 4, (uint32_t)n);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, fid);
	memcpy(body + 48, data, n);
	smbl_send(tc, &h, body, 48 + n);
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_WRITE);
	return m.h.status;
}

void smbl_lock_msg(struct smbt_conn *tc, uint64_t fid, uint64_t off, uint32_t flags, struct smbl_msg *m)
{
	uint8_t body[48] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_LOCK };

	smbt_put16(body, 48);
	smbt_put16(body + 2, 1);
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	smbt_put64(body + 24, off);
	smbt_put64(body + 32, 4);
	smbt_put32(body + 40, flags);
	smbl_send(tc, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(tc, m), 1);
	ck_assert_uint_eq(m->h.command, SMB2_LOCK);
}

uint32_t smbl_lock(struct smbt_conn *tc, uint64_t fid, uint64_t off)
{
	struct smbl_msg m;

	smbl_lock_msg(tc, fid, off, SMB2_LOCKFLAG_EXCLUSIVE | SMB2_LOCKFLAG_FAIL_IMMEDIATELY, &m);
	return m.h.status;
}

uint32_t smbl_ack_oplock(struct smbt_conn *tc, uint64_t fid, uint8_t level, uint8_t *got)
{
	uint8_t body[24] = { 0 };
	struct smb_wire_hdr h = { .command = SMB2_OPLOCK_BREAK };
	struct smbl_msg m;

	smbt_put16(body, 24);
	body[2] = level;
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	smbl_send(tc, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_OPLOCK_BREAK);
	if (m.h.status == STATUS_SUCCESS) {
		ck_assert_uint_eq(smb_wire_get_u16(m.body), 24);
		ck_assert_uint_eq(smb_wire_get_u64(m.body + 8), fid);
		if (got)
			*got = m.body[2];
	}
	return m.h.status;
}

uint32_t smbl_ack_lease(struct smbt_conn *tc, uint8_t key, uint32_t state, uint32_t *got)
{
	uint8_t body[36] = { 0 }, k[16];
	struct smb_wire_hdr h = { .command = SMB2_OPLOCK_BREAK };
	struct smbl_msg m;

	smbt_put16(body, 36);
	memset(body + 8, key, 16);
	smbt_put32(body + 24, state);
	smbl_send(tc, &h, body, sizeof(body));
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_OPLOCK_BREAK);
	if (m.h.status == STATUS_SUCCESS) {
		memset(k, key, 16);
		ck_assert_uint_eq(smb_wire_get_u16(m.body), 36);
		ck_assert_mem_eq(m.body + 8, k, 16);
		if (got)
			*got = smb_wire_get_u32(m.body + 24);
	}
	return m.h.status;
}

void smbl_expect_oplock_break(struct smbt_conn *tc, uint64_t fid, uint8_t level)
{
	struct smbl_msg m;

	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_OPLOCK_BREAK);
	ck_assert_uint_eq(m.h.message_id, UINT64_MAX);
	ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u16(m.body), 24);
	ck_assert_uint_eq(m.body[2], level);
	ck_assert_uint_eq(smb_wire_get_u64(m.body + 8), fid);
}

void smbl_expect_lease_break(struct smbt_conn *tc, uint8_t key, uint16_t epoch, uint32_t flags, uint32_t cur,
			     uint32_t new_state)
{
	struct smbl_msg m;
	uint8_t k[16];

	memset(k, key, 16);
	ck_assert_int_eq(smbl_recv(tc, &m), 1);
	ck_assert_uint_eq(m.h.command, SMB2_OPLOCK_BREAK);
	ck_assert_uint_eq(m.h.message_id, UINT64_MAX);
	ck_assert_uint_eq(smb_wire_get_u16(m.body), 44);
	ck_assert_uint_eq(smb_wire_get_u16(m.body + 2), epoch);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 4), flags);
	ck_assert_mem_eq(m.body + 8, k, 16);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 24), cur);
	ck_assert_uint_eq(smb_wire_get_u32(m.body + 28), new_state);
}

void smbl_expect_nothing(struct smbt_conn *tc)
{
	struct smbl_msg m;

	ck_assert_int_eq(smbl_recv(tc, &m), 0);
}

/* q's durable handle context: NAME with LEN bytes of data, zero but for
 * what the caller puts there. */
static void dh_set(struct smbl_create *q, const char *name, size_t len)
{
	q->dh = name;
	q->dh_len = len;
	memset(q->dh_data, 0, sizeof(q->dh_data));
}

void smbl_dhnq(struct smbl_create *q)
{
	dh_set(q, "DHnQ", 16);
}

void smbl_dh2q(struct smbl_create *q, uint32_t timeout, uint32_t flags, const uint8_t guid[16])
{
	dh_set(q, "DH2Q", 32);
	smbt_put32(q->dh_data, timeout);
	smbt_put32(q->dh_data + 4, flags);
	memcpy(q->dh_data + 16, guid, 16);
}

void smbl_dhnc(struct smbl_create *q, uint64_t fid)
{
	dh_set(q, "DHnC", 16);
	smbt_put64(q->dh_data, fid);
	smbt_put64(q->dh_data + 8, fid);
}

void smbl_dh2c(struct smbl_create *q, uint64_t fid, const uint8_t guid[16])
{
	smbl_dhnc(q, fid);
	q->dh = "DH2C";
	q->dh_len = 36;
	memcpy(q->dh_data + 16, guid, 16);
}

void smbl_break_acked(struct smbt_conn *holder, uint8_t key, uint16_t epoch, uint32_t cur, uint32_t new_state,
		      struct smbt_conn *tc, struct smbl_create *q)
{
	smbt_loop_turn(smbl_srv);
	smbl_expect_lease_break(holder, key, epoch, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, cur, new_state);
	ck_assert_uint_eq(smbl_ack_lease(holder, key, new_state, NULL), STATUS_SUCCESS);
	smbt_loop_turn(smbl_srv);
	smbl_create_final(tc, q);
}
