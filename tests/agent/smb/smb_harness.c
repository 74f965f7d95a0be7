/* smb_harness: the in-process SMB server shared by the dispatcher suites
 * (see smb_harness.h for the contract). */
#include "tests/agent/smb/smb_harness.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/api_error.h"
#include "tests/lib/aqt_store.h"

static const uint8_t sign_key[16] = { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 };

void smbt_srv_new(struct vol_store *store, struct smb_srv **srv)
{
	ck_assert_int_eq(smb_srv_new("127.0.0.1:0", store, srv), 0);
	(*srv)->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge((*srv)->evfd, 0);
}

void smbt_conns_free(struct smb_srv *srv)
{
	while (srv->conns)
		smb_conn_free(srv->conns);
	smb_durable_free_all(srv); /* what a dropped connection left durable */
}

void smbt_srv_free(struct smb_srv *srv)
{
	smbt_conns_free(srv);
	close(srv->evfd);
	srv->evfd = -1;
	smb_srv_free(srv);
}

void smbt_conn_new(struct smbt_conn *tc, struct smb_srv *srv, uint64_t key, unsigned settings)
{
	int sv[2];
	struct smb_conn *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	c->fd = sv[0];
	c->srv = srv;
	c->key = key;
	c->credits = 100;
	c->negotiated = c->authed = true;
	c->dialect = SMB2_DIALECT_210; /* HMAC-SHA256 signing */
	snprintf(c->peer, sizeof(c->peer), "test%llu", (unsigned long long)key);
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	srv->nconns++;
	tc->s = calloc(1, sizeof(*tc->s));
	tc->t = calloc(1, sizeof(*tc->t));
	ck_assert_ptr_nonnull(tc->s);
	ck_assert_ptr_nonnull(tc->t);
	tc->s->id = key << 24 | 1;
	tc->s->state = SMB_SESS_VALID;
	tc->s->conn = c;
	tc->s->client_key = key; /* as smb_sess_setup: its opens' lock owner */
	memcpy(tc->s->keys.signing, sign_key, 16);
	tc->t->id = 1;
	tc->t->share.smb_settings = settings;
	tc->s->trees = tc->t;
	c->sessions = tc->s;
	tc->c = c;
	tc->peer = sv[1];
	tc->mid = 1;
	tc->key = NULL;
}

struct smb_open *smbt_open_new(struct smbt_conn *tc, uint64_t id)
{
	struct smb_open *o = calloc(1, sizeof(*o));

	ck_assert_ptr_nonnull(o);
	o->id = id;
	o->tree = tc->t;
	o->obj.fd = o->parent.fd = -1;
	o->next = tc->s->opens;
	tc->s->opens = o;
	tc->s->nopens++; /* the session's count follows its list (smb_open_free takes it out) */
	return o;
}

void smbt_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void smbt_put32(uint8_t *p, uint32_t v)
{
	smbt_put16(p, (uint16_t)v);
	smbt_put16(p + 2, (uint16_t)(v >> 16));
}

void smbt_put64(uint8_t *p, uint64_t v)
{
	smbt_put32(p, (uint32_t)v);
	smbt_put32(p + 4, (uint32_t)(v >> 32));
}

size_t smbt_read_body(uint8_t *b, uint64_t fid, uint64_t off, uint32_t len)
{
	memset(b, 0, 49);
	smbt_put16(b, 49);
	smbt_put32(b + 4, len);
	smbt_put64(b + 8, off);
	smbt_put64(b + 16, fid);
	smbt_put64(b + 24, fid);
	return 49;
}

void smbt_send(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *body, size_t n)
{
	struct ut_buf b;
	uint8_t sig[16], *frame;

	h->session_id = tc->s->id;
	h->flags |= SMB2_FLAGS_SIGNED;
	h->credit_charge = 1;
	h->credits = 1;
	ut_buf_init(&b, SMB2_HDR_LEN + n);
	smb_wire_hdr_encode(&b, h);
	ck_assert_int_eq(b.err, AQ_OK);
	frame = malloc(SMB2_HDR_LEN + n);
	ck_assert_ptr_nonnull(frame);
	memcpy(frame, ut_buf_bytes(&b), SMB2_HDR_LEN);
	memcpy(frame + SMB2_HDR_LEN, body, n);
	memset(frame + SMB2_SIG_OFF, 0, 16);
	ck_assert_int_eq(smb_crypto_sign(SMB2_SIGNING_HMAC_SHA256, tc->key ? tc->key : sign_key, frame, SMB2_HDR_LEN + n, sig), AQ_OK);
	memcpy(frame + SMB2_SIG_OFF, sig, 16);
	smb_dispatch_frame(tc->c, frame, SMB2_HDR_LEN + n);
	smb_conn_kick(tc->c);
	free(frame);
	ut_buf_cleanup(&b);
}

size_t smbt_chain_build(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *const *body, const size_t *n,
			size_t count, uint8_t *frame, size_t cap)
{
	uint8_t sig[16];
	size_t off = 0, at[16];

	ck_assert_uint_le(count, 16);
	for (size_t i = 0; i < count; i++) {
		struct ut_buf b;
		size_t len = SMB2_HDR_LEN + n[i], pad = i + 1 < count ? (8 - len % 8) % 8 : 0;

		ck_assert_uint_le(off + len + pad, cap);
		h[i].session_id = tc->s->id;
		h[i].flags |= SMB2_FLAGS_SIGNED;
		h[i].credit_charge = 1;
		h[i].credits = 1;
		h[i].next_command = i + 1 < count ? (uint32_t)(len + pad) : 0;
		ut_buf_init(&b, SMB2_HDR_LEN);
		smb_wire_hdr_encode(&b, &h[i]);
		ck_assert_int_eq(b.err, AQ_OK);
		memcpy(frame + off, ut_buf_bytes(&b), SMB2_HDR_LEN);
		ut_buf_cleanup(&b);
		memcpy(frame + off + SMB2_HDR_LEN, body[i], n[i]);
		memset(frame + off + len, 0, pad);
		at[i] = off;
		off += len + pad;
	}
	for (size_t i = 0; i < count; i++) { /* each message signed with its padding */
		size_t end = i + 1 < count ? at[i + 1] : off;

		memset(frame + at[i] + SMB2_SIG_OFF, 0, 16);
		ck_assert_int_eq(smb_crypto_sign(SMB2_SIGNING_HMAC_SHA256, tc->key ? tc->key : sign_key, frame + at[i], end - at[i], sig), AQ_OK);
		memcpy(frame + at[i] + SMB2_SIG_OFF, sig, 16);
	}
	return off;
}

void smbt_send_chain(struct smbt_conn *tc, struct smb_wire_hdr *h, const uint8_t *const *body, const size_t *n,
		     size_t count)
{
	uint8_t frame[8192];

	smb_dispatch_frame(tc->c, frame, smbt_chain_build(tc, h, body, n, count, frame, sizeof(frame)));
	smb_conn_kick(tc->c);
}

/* The keys the harness's sealed session uses: the client encrypts with the
 * server's decryption key and opens what the server encrypts. */
static const uint8_t c2s_key[32] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 9, 10, 11, 12, 13, 14, 15, 16,
				     17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };
static const uint8_t s2c_key[32] = { 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x99,
				     1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

void smbt_conn_cipher(struct smbt_conn *tc, uint16_t cipher)
{
	tc->c->dialect = SMB2_DIALECT_311;
	tc->c->signing = SMB2_SIGNING_HMAC_SHA256; /* unsealed requests still verify as the harness signs */
	tc->c->cipher = cipher;
	tc->s->keys.cipher_key_len = cipher == SMB2_ENCRYPTION_AES256_CCM || cipher == SMB2_ENCRYPTION_AES256_GCM ? 32 : 16;
	memcpy(tc->s->keys.dec, c2s_key, sizeof(c2s_key));
	memcpy(tc->s->keys.enc, s2c_key, sizeof(s2c_key));
	memset(tc->s->nonce_fixed, 0x5a, sizeof(tc->s->nonce_fixed));
}

size_t smbt_seal(struct smbt_conn *tc, const uint8_t *plain, size_t len, uint8_t *out, size_t cap)
{
	static const uint8_t fixed[4] = { 0xc1, 0x1e, 0x47, 0x00 };
	struct smb_wire_transform t = { .orig_size = (uint32_t)len, .flags = SMB2_TRANSFORM_FLAG_ENCRYPTED,
					.session_id = tc->s->id };
	struct ut_buf b;

	ck_assert_uint_le(len + SMB2_TRANSFORM_LEN, cap);
	smb_crypto_nonce(tc->c->cipher, ++tc->nonce, fixed, t.nonce);
	ut_buf_init(&b, SMB2_TRANSFORM_LEN);
	smb_wire_transform_encode(&b, &t);
	ck_assert_int_eq(b.err, AQ_OK);
	memcpy(out, ut_buf_bytes(&b), SMB2_TRANSFORM_LEN);
	ut_buf_cleanup(&b);
	ck_assert_int_eq(smb_crypto_encrypt(tc->c->cipher, c2s_key, out, plain, len, out + SMB2_TRANSFORM_LEN), AQ_OK);
	return len + SMB2_TRANSFORM_LEN;
}

size_t smbt_unseal(const struct smbt_conn *tc, uint8_t *frame, size_t len)
{
	struct smb_wire_transform t;

	ck_assert_int_eq(smb_wire_transform_decode(frame, len, &t), AQ_OK);
	ck_assert_uint_eq(t.session_id, tc->s->id);
	ck_assert_int_eq(smb_crypto_decrypt(tc->c->cipher, s2c_key, frame, len, frame + SMB2_TRANSFORM_LEN), AQ_OK);
	memmove(frame, frame + SMB2_TRANSFORM_LEN, len - SMB2_TRANSFORM_LEN);
	return len - SMB2_TRANSFORM_LEN;
}

int smbt_recv_sealed(const struct smbt_conn *tc, uint8_t *buf, size_t cap, size_t *len, struct smb_wire_hdr *h)
{
	uint8_t pfx[4];
	ssize_t n = recv(tc->peer, pfx, 4, MSG_DONTWAIT);

	if (n <= 0)
		return 0;
	ck_assert_int_eq(n, 4);
	*len = (size_t)pfx[1] << 16 | (size_t)pfx[2] << 8 | pfx[3];
	ck_assert_uint_le(*len, cap);
	for (size_t got = 0; got < *len;) { /* a big answer comes in parts */
		n = recv(tc->peer, buf + got, *len - got, 0);
		if (n < 0) {
			smb_conn_kick(tc->c);
			continue;
		}
		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	*len = smbt_unseal(tc, buf, *len);
	ck_assert_int_eq(smb_wire_hdr_decode(buf, *len, h), AQ_OK);
	return 1;
}

void smbt_cancel(struct smbt_conn *tc, bool async, uint64_t id)
{
	uint8_t body[4] = { 4, 0, 0, 0 };
	struct smb_wire_hdr h = { .command = SMB2_CANCEL, .tree_id = tc->t->id };

	if (async) {
		h.flags = SMB2_FLAGS_ASYNC_COMMAND;
		h.async_id = id;
	} else {
		h.message_id = id;
	}
	smbt_send(tc, &h, body, sizeof(body));
}

void smbt_fsctl(struct smbt_conn *tc, uint64_t fid, uint32_t code, const uint8_t *in, size_t in_len,
		uint32_t max_out, struct smbt_fsctl_rsp *rsp)
{
	static uint8_t body[56 + SMBT_FSCTL_IN_MAX];
	uint8_t buf[2048];
	struct smb_wire_hdr h = { .command = SMB2_IOCTL, .tree_id = tc->t->id, .message_id = tc->mid++ };
	const uint8_t *rb = buf + SMB2_HDR_LEN;
	size_t len, rlen;

	ck_assert_uint_le(in_len, SMBT_FSCTL_IN_MAX);
	memset(body, 0, 56);
	smbt_put16(body, 57);
	smbt_put32(body + 4, code);
	smbt_put64(body + 8, fid);
	smbt_put64(body + 16, fid);
	smbt_put32(body + 24, SMB2_HDR_LEN + 56);
	smbt_put32(body + 28, (uint32_t)in_len);
	smbt_put32(body + 44, max_out);
	smbt_put32(body + 48, 1); /* SMB2_0_IOCTL_IS_FSCTL */
	if (in_len)
		memcpy(body + 56, in, in_len);
	smbt_send(tc, &h, body, 56 + in_len);
	ck_assert_int_eq(smbt_recv(tc, buf, sizeof(buf), &len, &h, NULL), 1);
	ck_assert_uint_ge(len, SMB2_HDR_LEN);
	ck_assert_uint_eq(h.command, SMB2_IOCTL);
	rlen = len - SMB2_HDR_LEN;
	rsp->status = h.status;
	rsp->out_len = 0;
	if (rlen >= 48 && smb_wire_get_u16(rb) == 49) {
		uint32_t off = smb_wire_get_u32(rb + 32), n = smb_wire_get_u32(rb + 36);

		ck_assert_uint_ge(off, SMB2_HDR_LEN + 48);
		ck_assert_uint_le(off - SMB2_HDR_LEN + n, rlen);
		ck_assert_uint_le(n, sizeof(rsp->out));
		memcpy(rsp->out, rb + off - SMB2_HDR_LEN, n);
		rsp->out_len = n;
	}
}

int smbt_recv(const struct smbt_conn *tc, uint8_t *buf, size_t cap, size_t *len, struct smb_wire_hdr *h,
	      bool *sig_ok)
{
	uint8_t pfx[4];
	ssize_t n = recv(tc->peer, pfx, 4, 0);

	if (n <= 0)
		return 0;
	ck_assert_int_eq(n, 4);
	*len = (size_t)pfx[1] << 16 | (size_t)pfx[2] << 8 | pfx[3];
	ck_assert_uint_le(*len, cap);
	ck_assert_int_eq(recv(tc->peer, buf, *len, 0), (ssize_t)*len);
	ck_assert_int_eq(smb_wire_hdr_decode(buf, *len, h), AQ_OK);
	if (sig_ok)
		*sig_ok = smb_crypto_verify(SMB2_SIGNING_HMAC_SHA256, tc->key ? tc->key : sign_key, buf, *len) == AQ_OK;
	return 1;
}

bool smbt_loop_turn(struct smb_srv *srv)
{
	uint64_t v;
	bool woken = read(srv->evfd, &v, sizeof(v)) == sizeof(v);

	smb_async_run(srv);
	return woken;
}

void smbt_wait_msg(const struct smbt_conn *tc)
{
	for (int i = 0; i < 500; i++) {
		uint8_t b;

		smbt_loop_turn(tc->c->srv);
		if (recv(tc->peer, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1)
			return;
		usleep(10 * 1000);
	}
	ck_abort_msg("no message came");
}

uint64_t smbt_check_pending(const struct smb_wire_hdr *h, uint64_t mid)
{
	ck_assert_uint_eq(h->status, STATUS_PENDING);
	ck_assert_uint_eq(h->message_id, mid);
	ck_assert(h->flags & SMB2_FLAGS_ASYNC_COMMAND);
	ck_assert_uint_ne(h->async_id, 0);
	return h->async_id;
}

void smbt_check_final(const struct smb_wire_hdr *h, uint16_t command, uint64_t mid, uint64_t aid, uint32_t status)
{
	ck_assert_uint_eq(h->status, status);
	ck_assert_uint_eq(h->command, command);
	ck_assert_uint_eq(h->message_id, mid);
	ck_assert(h->flags & SMB2_FLAGS_ASYNC_COMMAND);
	ck_assert_uint_eq(h->async_id, aid);
}

void smbt_check_sync(const struct smb_wire_hdr *h, uint64_t mid, uint32_t status)
{
	ck_assert_uint_eq(h->status, status);
	ck_assert_uint_eq(h->message_id, mid);
	ck_assert(!(h->flags & SMB2_FLAGS_ASYNC_COMMAND));
}

void smbt_store_up(struct aqt_store *ts, struct smb_srv **srv)
{
	aqt_store_init(ts, 1, &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 100, .capacity = 1ull << 30,
							.clients = "0.0.0.0/0", .key_byte = 1 });
	ck_assert_int_eq(vol_store_set(ts->store, ts->cfg, ts->n), 0);
	smbt_srv_new(ts->store, srv);
}

void smbt_export_up(struct aqt_store *ts, struct smb_srv **srv, struct vol_export **exp0)
{
	smbt_store_up(ts, srv);
	ck_assert_ptr_nonnull(*exp0 = vol_export_at(ts->store, 0));
}

void smbt_export_down(struct aqt_store *ts, struct smb_srv *srv, struct vol_export *exp0)
{
	smbt_srv_free(srv);
	vol_export_unref(exp0);
	aqt_store_cleanup(ts);
}

uint64_t smbt_free_bytes(struct vol_export *exp)
{
	struct vol_obj root;
	struct vol_fsstat fs;

	ck_assert_int_eq(vol_root(exp, &root), 0);
	ck_assert_int_eq(vol_fsstat(&root, &fs), 0);
	vol_obj_cleanup(&root);
	return fs.abytes;
}

void smbt_conn_export(struct smbt_conn *tc, struct smb_srv *srv, const struct aqt_store *ts, uint64_t key,
		      unsigned settings)
{
	smbt_conn_new(tc, srv, key, settings);
	ck_assert_ptr_nonnull(tc->t->exp = vol_export_at(ts->store, 0));
}

void smbt_conn_user(struct smbt_conn *tc, struct smb_srv *srv, const struct aqt_store *ts, uint64_t key,
		    const char *user, const char *share)
{
	smbt_conn_export(tc, srv, ts, key, API_INTENT_SMB_OPLOCKS);
	snprintf(tc->s->user.name, sizeof(tc->s->user.name), "%s", user);
	snprintf(tc->s->user.project, sizeof(tc->s->user.project), "p1");
	snprintf(tc->t->share.name, sizeof(tc->t->share.name), "%s", share);
}
