/* test_smb_sess: SESSION_SETUP on a session that exists (agent/smb/smb_sess.c,
 * issue 18), driven through smb_dispatch_frame with a real NTLMv2 exchange
 * (bare NTLMSSP, as the Linux client sends it) computed here from the
 * user's password:
 * - re-authentication (MS-SMB2 3.3.5.5.3): the same user keeps the session,
 *   its tree and its signing key (the answers and a later request verify
 *   with the old key); another user is refused (ACCESS_DENIED) and the
 *   session goes on; a wrong password ends it (LOGON_FAILURE, signed, then
 *   USER_SESSION_DELETED); an unsigned re-authentication changes nothing;
 *   a malformed NTLMv2 response is INVALID_PARAMETER whether the user exists;
 * - binding (SMB2_SESSION_FLAG_BINDING) from a second connection: refused
 *   with the status smbd gives for each fault (dialect before 3.0, another
 *   dialect or cipher, GMAC on one side only, unsigned, bad signature,
 *   unknown session, another ClientGuid, no MULTI_CHANNEL negotiated), the
 *   refusal signed with the session's key and algorithm;
 * - multichannel: a bind that authenticates the session's user gets a
 *   channel with its own signing key (3.0.x labels; 3.1.1 keyed by the
 *   binding connection's preauth hash), whose requests reach the session's
 *   tree and opens; another user, a wrong password, 33 channels refused;
 *   the session lives on when its first connection goes (a break reaches
 *   the survivor) and loses a channel when another goes; LOGOFF on one
 *   channel ends it on all; FSCTL_QUERY_NETWORK_INTERFACE_INFO.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "agent/smb/smb_ntlm.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt_store.h"

/* the harness's session key (smb_harness.c) */
static const uint8_t key7[16] = { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 };

static struct aqt_store ts;
static struct smb_srv *srv;
static struct smbt_conn tc;

static void users_up(void)
{
	struct smb_srv_user u[2] = { { .project = "acme", .name = "alice", .uid = 1001, .gid = 1001 },
				     { .project = "acme", .name = "bob", .uid = 1002, .gid = 1002 } };

	ck_assert_int_eq(smb_ntlm_nt_hash("Secret-1", u[0].nt_hash), AQ_OK);
	ck_assert_int_eq(smb_ntlm_nt_hash("Secret-2", u[1].nt_hash), AQ_OK);
	ck_assert_int_eq(smb_srv_set_config(srv, NULL, 0, u, 2), 0);
}

static void setup(void)
{
	smbt_store_up(&ts, &srv);
	users_up();
	smbt_conn_new(&tc, srv, 1, 0);
	snprintf(tc.s->user.project, sizeof(tc.s->user.project), "acme");
	snprintf(tc.s->user.name, sizeof(tc.s->user.name), "alice");
	tc.s->user.uid = tc.s->cred.uid = 1001;
}

static void teardown(void)
{
	smbt_srv_free(srv);
	aqt_store_cleanup(&ts);
}

/* When set, the preauth hash the SESSION_SETUPs sent and the answers to
 * them (but the last) go into, as a 3.1.1 client keeps it. */
static uint8_t *preauth;

/* One SESSION_SETUP on c for session sid (flags: SMB2_SESSION_FLAG_*),
 * signed with key by alg unless key is NULL, blob as its security buffer. */
static void send_setup(struct smb_conn *c, uint64_t mid, uint64_t sid, uint8_t flags, uint16_t alg,
		       const uint8_t *key, const uint8_t *blob, size_t blen)
{
	struct smb_wire_hdr h = { .command = SMB2_SESSION_SETUP, .message_id = mid, .session_id = sid,
				  .credit_charge = 1, .credits = 1 };
	uint8_t frame[2048], sig[16];
	struct ut_buf b;
	size_t n = SMB2_HDR_LEN + 24 + blen;

	ck_assert_uint_le(n, sizeof(frame));
	if (key)
		h.flags = SMB2_FLAGS_SIGNED;
	ut_buf_init(&b, SMB2_HDR_LEN);
	smb_wire_hdr_encode(&b, &h);
	ck_assert_int_eq(b.err, AQ_OK);
	memcpy(frame, ut_buf_bytes(&b), SMB2_HDR_LEN);
	ut_buf_cleanup(&b);
	memset(frame + SMB2_HDR_LEN, 0, 24);
	smbt_put16(frame + 64, 25);
	frame[66] = flags;
	frame[67] = SMB2_NEGOTIATE_SIGNING_ENABLED;
	smbt_put16(frame + 64 + 12, SMB2_HDR_LEN + 24);
	smbt_put16(frame + 64 + 14, (uint16_t)blen);
	memcpy(frame + SMB2_HDR_LEN + 24, blob, blen);
	memset(frame + SMB2_SIG_OFF, 0, 16);
	if (key) {
		ck_assert_int_eq(smb_crypto_sign(alg, key, frame, n, sig), AQ_OK);
		memcpy(frame + SMB2_SIG_OFF, sig, 16);
	}
	if (preauth) /* 3.1.1: the binding's hash takes each request in */
		ck_assert_int_eq(smb_crypto_preauth_update(preauth, frame, n), AQ_OK);
	smb_dispatch_frame(c, frame, n);
	smb_conn_kick(c);
}

/* The answer waiting on peer: its header, body in buf; whether it verifies with key by alg. */
static size_t recv_one(int peer, uint8_t *buf, size_t cap, struct smb_wire_hdr *h, uint16_t alg,
		       const uint8_t *key, bool *sig_ok)
{
	uint8_t pfx[4];
	size_t len;

	ck_assert_int_eq(recv(peer, pfx, 4, 0), 4);
	len = (size_t)pfx[1] << 16 | (size_t)pfx[2] << 8 | pfx[3];
	ck_assert_uint_le(len, cap);
	ck_assert_int_eq(recv(peer, buf, len, 0), (ssize_t)len);
	ck_assert_int_eq(smb_wire_hdr_decode(buf, len, h), AQ_OK);
	*sig_ok = (h->flags & SMB2_FLAGS_SIGNED) && smb_crypto_verify(alg, key, buf, len) == AQ_OK;
	return len;
}

static void put_field(uint8_t *msg, size_t at, size_t *pay, const uint8_t *v, size_t n)
{
	smbt_put16(msg + at, (uint16_t)n);
	smbt_put16(msg + at + 2, (uint16_t)n);
	smbt_put32(msg + at + 4, (uint32_t)*pay);
	memcpy(msg + *pay, v, n);
	*pay += n;
}

static size_t utf16(const char *s, uint8_t *out)
{
	size_t n = 0;

	for (; *s; s++) {
		out[n++] = (uint8_t)*s;
		out[n++] = 0;
	}
	return n;
}

/* One NTLMv2 exchange as the client runs it: what its legs carry and what
 * it got. */
struct ntlm_ex {
	uint8_t flags;             /* SESSION_SETUP Flags (SMB2_SESSION_FLAG_BINDING) */
	uint16_t alg;              /* the legs' signatures */
	const uint8_t *key;        /* signs both legs (NULL: unsigned) */
	bool malformed;            /* an NTLMv2 response whose AV pairs run past it */
	/* out */
	uint8_t base_key[16];      /* what the exchange yields (no KEY_EXCH: the SessionBaseKey) */
	bool first_ok;             /* the CHALLENGE's answer verified with key by alg */
	bool authenticated;        /* the AUTHENTICATE was sent: last is its answer */
	uint8_t last[1024];        /* the last answer, whole */
	size_t last_len;
};

/* The whole NTLMv2 exchange on session sid of c as user/password: the
 * status the server answers the AUTHENTICATE with (or the NEGOTIATE,
 * when that is not MORE_PROCESSING_REQUIRED). */
static uint32_t ntlm_run(struct smb_conn *c, int peer, uint64_t *mid, uint64_t sid, const char *user,
			 const char *password, struct ntlm_ex *x)
{
	static const uint8_t neg_tpl[32] = { 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1, 0, 0, 0 };
	uint8_t neg[32], rsp[4096], auth[1024], nt[512], hash[16], owf[16], proof[16], uname[64];
	struct smb_wire_hdr h;
	size_t len, ulen, tlen, toff, boff, pay = 64, ntlen;
	unsigned plen = 16;

	memcpy(neg, neg_tpl, sizeof(neg));
	smbt_put32(neg + 12, NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY |
				     NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_SIGN);
	send_setup(c, (*mid)++, sid, x->flags, x->alg, x->key, neg, sizeof(neg));
	len = recv_one(peer, rsp, sizeof(rsp), &h, x->alg, x->key ? x->key : key7, &x->first_ok);
	ck_assert_uint_le(len, sizeof(x->last));
	memcpy(x->last, rsp, len);
	x->last_len = len;
	if (h.status != STATUS_MORE_PROCESSING_REQUIRED)
		return h.status;
	if (preauth) /* the answer as received, signed */
		ck_assert_int_eq(smb_crypto_preauth_update(preauth, rsp, len), AQ_OK);
	/* the CHALLENGE_MESSAGE, bare, as the security buffer of the answer */
	boff = smb_wire_get_u16(rsp + 64 + 4);
	ck_assert_uint_le(boff + 48, len);
	ck_assert_int_eq(memcmp(rsp + boff, "NTLMSSP", 8), 0);
	tlen = smb_wire_get_u16(rsp + boff + 40);
	toff = smb_wire_get_u32(rsp + boff + 44);
	ck_assert_uint_le(boff + toff + tlen, len);
	/* NtChallengeResponse: NTProofStr || 01 01 0000 0000 time client-challenge 0 AV-pairs 0 */
	memset(nt, 0, sizeof(nt));
	nt[16] = nt[17] = 1;
	smbt_put64(nt + 16 + 8, smb_filetime_now());
	memset(nt + 16 + 16, 0x5A, 8);
	ck_assert_uint_le(16 + 28 + tlen + 4, sizeof(nt));
	memcpy(nt + 16 + 28, rsp + boff + toff, tlen);
	if (x->malformed) /* the first AV pair says it runs past the blob (smbtorture's ntlmssp_bug14932) */
		smbt_put16(nt + 16 + 28 + 2, 0x4000);
	ntlen = 16 + 28 + tlen + 4;
	ck_assert_int_eq(smb_ntlm_nt_hash(password, hash), AQ_OK);
	ulen = utf16(user, uname);
	ck_assert_int_eq(smb_ntlm_ntowfv2(hash, uname, ulen, NULL, 0, owf), AQ_OK);
	{
		uint8_t m[600];

		memcpy(m, rsp + boff + 24, 8); /* the server's challenge */
		memcpy(m + 8, nt + 16, ntlen - 16);
		ck_assert_ptr_nonnull(HMAC(EVP_md5(), owf, 16, m, 8 + ntlen - 16, proof, &plen));
	}
	memcpy(nt, proof, 16);
	/* SessionBaseKey = HMAC-MD5(NTOWFv2, NTProofStr) (MS-NLMP 3.3.2) */
	ck_assert_ptr_nonnull(HMAC(EVP_md5(), owf, 16, proof, 16, x->base_key, &plen));
	memset(auth, 0, sizeof(auth));
	memcpy(auth, "NTLMSSP", 8);
	auth[8] = 3;
	put_field(auth, 12, &pay, (const uint8_t[24]){ 0 }, 24); /* LmChallengeResponse, ignored */
	put_field(auth, 20, &pay, nt, ntlen);
	put_field(auth, 28, &pay, (const uint8_t *)"", 0);
	put_field(auth, 36, &pay, uname, ulen);
	put_field(auth, 44, &pay, (const uint8_t *)"", 0);
	put_field(auth, 52, &pay, (const uint8_t *)"", 0);
	smbt_put32(auth + 60, NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_NTLM |
				      NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY | NTLMSSP_NEGOTIATE_128 |
				      NTLMSSP_NEGOTIATE_SIGN);
	send_setup(c, (*mid)++, sid, x->flags, x->alg, x->key, auth, pay);
	{
		bool ignored;

		x->last_len = recv_one(peer, x->last, sizeof(x->last), &h, x->alg, key7, &ignored);
	}
	x->authenticated = true;
	return h.status;
}

/* The whole NTLMv2 exchange on session sid of c as user/password: the
 * status the server answers the AUTHENTICATE with. Both legs signed with
 * key7 (HMAC-SHA256) unless unsigned. */
static uint32_t ntlm_logon2(struct smb_conn *c, int peer, uint64_t *mid, uint64_t sid, const char *user,
			    const char *password, bool sign, bool malformed)
{
	struct ntlm_ex x = { .alg = SMB2_SIGNING_HMAC_SHA256, .key = sign ? key7 : NULL, .malformed = malformed };
	uint32_t status = ntlm_run(c, peer, mid, sid, user, password, &x);

	/* whatever the outcome on a live session, the answer is signed with its key */
	if (x.authenticated)
		ck_assert_msg(smb_crypto_verify(SMB2_SIGNING_HMAC_SHA256, key7, x.last, x.last_len) == AQ_OK,
			      "the answer to a re-authentication verifies with the session's key");
	return status;
}

static uint32_t ntlm_logon(struct smb_conn *c, int peer, uint64_t *mid, uint64_t sid, const char *user,
			   const char *password, bool sign)
{
	return ntlm_logon2(c, peer, mid, sid, user, password, sign, false);
}

/* A FLUSH of a FileId that is not open, signed with key7: FILE_CLOSED
 * while the session lives (and its key verifies), else its status. */
static uint32_t probe(struct smbt_conn *t)
{
	uint8_t body[24] = { 24 }, buf[512];
	struct smb_wire_hdr h = { .command = SMB2_FLUSH, .message_id = t->mid++, .tree_id = 1 }; /* t->t may be gone */
	size_t len;
	bool ok;

	smbt_put64(body + 8, 99);
	smbt_put64(body + 16, 99);
	smbt_send(t, &h, body, sizeof(body));
	ck_assert_int_eq(smbt_recv(t, buf, sizeof(buf), &len, &h, &ok), 1);
	if (h.status == STATUS_FILE_CLOSED)
		ck_assert(ok);
	return h.status;
}

START_TEST(test_reauth_same_user)
{
	struct smb_sess *s = tc.s;

	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
	ck_assert_uint_eq(ntlm_logon(tc.c, tc.peer, &tc.mid, s->id, "alice", "Secret-1", true), STATUS_SUCCESS);
	/* the same session, tree and key (the probe signs with the old one) */
	ck_assert_ptr_eq(tc.c->sessions, s);
	ck_assert_ptr_eq(s->trees, tc.t);
	ck_assert_int_eq(memcmp(s->keys.signing, key7, 16), 0);
	ck_assert(!s->reauth);
	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
	/* and again */
	ck_assert_uint_eq(ntlm_logon(tc.c, tc.peer, &tc.mid, s->id, "ALICE", "Secret-1", true), STATUS_SUCCESS);
	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
}
END_TEST

START_TEST(test_reauth_other_user)
{
	ck_assert_uint_eq(ntlm_logon(tc.c, tc.peer, &tc.mid, tc.s->id, "bob", "Secret-2", true), STATUS_ACCESS_DENIED);
	/* still alice's, still usable with its key */
	ck_assert_str_eq(tc.s->user.name, "alice");
	ck_assert_uint_eq(tc.s->cred.uid, 1001);
	ck_assert(!tc.s->logged_off && !tc.s->reauth);
	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
}
END_TEST

START_TEST(test_reauth_wrong_password)
{
	ck_assert_uint_eq(ntlm_logon(tc.c, tc.peer, &tc.mid, tc.s->id, "alice", "Secret-9", true), STATUS_LOGON_FAILURE);
	ck_assert(tc.s->logged_off);
	ck_assert_ptr_null(tc.s->trees);
	ck_assert_uint_eq(probe(&tc), STATUS_USER_SESSION_DELETED);
}
END_TEST

START_TEST(test_auth_malformed)
{
	/* INVALID_PARAMETER, for a user that exists or not, and the
	 * re-authentication failed: the session ends */
	ck_assert_uint_eq(ntlm_logon2(tc.c, tc.peer, &tc.mid, tc.s->id, _i ? "nobody" : "alice", "Secret-1", true, true),
			  STATUS_INVALID_PARAMETER);
	ck_assert(tc.s->logged_off);
}
END_TEST

START_TEST(test_reauth_unsigned)
{
	uint8_t neg[32] = { 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1 }, buf[512];
	struct smb_wire_hdr h;
	bool ok;

	smbt_put32(neg + 12, NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_NTLM);
	send_setup(tc.c, tc.mid++, tc.s->id, 0, 0, NULL, neg, sizeof(neg));
	recv_one(tc.peer, buf, sizeof(buf), &h, SMB2_SIGNING_HMAC_SHA256, key7, &ok);
	ck_assert_uint_eq(h.status, STATUS_ACCESS_DENIED);
	ck_assert(!tc.s->reauth && tc.s->state == SMB_SESS_VALID && !tc.s->logged_off);
	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
}
END_TEST

/* A second connection's bind of tc's session: the status, and whether the
 * answer verifies with the session's key by its algorithm. */
static uint32_t try_bind(struct smbt_conn *t2, uint64_t sid, uint16_t alg, const uint8_t *key, bool *sig_ok)
{
	uint8_t neg[32] = { 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1 }, buf[512];
	struct smb_wire_hdr h;

	smbt_put32(neg + 12, NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_NEGOTIATE_NTLM);
	send_setup(t2->c, t2->mid++, sid, SMB2_SESSION_FLAG_BINDING, alg, key, neg, sizeof(neg));
	recv_one(t2->peer, buf, sizeof(buf), &h, smb_dispatch_sign_alg(tc.c), key7, sig_ok);
	ck_assert_uint_eq(h.session_id, sid);
	return h.status;
}

static void dialects(struct smb_conn *c, uint16_t dialect, uint16_t signing, uint16_t cipher)
{
	c->dialect = dialect;
	c->signing = signing;
	c->cipher = cipher;
}

START_TEST(test_bind_refused)
{
	struct smbt_conn t2;
	uint16_t cmac = SMB2_SIGNING_AES_CMAC;
	bool ok;

	smbt_conn_new(&t2, srv, 2, 0);
	/* 2.1 on both: binding is 3.x */
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, SMB2_SIGNING_HMAC_SHA256, key7, &ok), STATUS_REQUEST_NOT_ACCEPTED);
	ck_assert_msg(ok, "a refused bind is signed with the session's key");
	/* 3.0 on both, the same ClientGuid: well-formed, refused (MULTI_CHANNEL not negotiated) */
	dialects(tc.c, SMB2_DIALECT_300, SMB_WIRE_NONE, SMB_WIRE_NONE);
	dialects(t2.c, SMB2_DIALECT_300, SMB_WIRE_NONE, SMB_WIRE_NONE);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, key7, &ok), STATUS_REQUEST_NOT_ACCEPTED);
	ck_assert(ok);
	/* another ClientGuid */
	t2.c->client_guid[0] = 1;
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, key7, &ok), STATUS_USER_SESSION_DELETED);
	t2.c->client_guid[0] = 0;
	/* an unknown session */
	ck_assert_uint_eq(try_bind(&t2, tc.s->id + 77, cmac, key7, &ok), STATUS_USER_SESSION_DELETED);
	/* not signed, or signed with another key */
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, NULL, &ok), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, (const uint8_t[16]){ 1 }, &ok), STATUS_ACCESS_DENIED);
	/* the binding connection on 2.1, on 3.1.1, with another cipher */
	dialects(t2.c, SMB2_DIALECT_210, SMB_WIRE_NONE, SMB_WIRE_NONE);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, key7, &ok), STATUS_REQUEST_NOT_ACCEPTED);
	dialects(t2.c, SMB2_DIALECT_311, SMB2_SIGNING_AES_CMAC, SMB_WIRE_NONE);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, key7, &ok), STATUS_INVALID_PARAMETER);
	dialects(t2.c, SMB2_DIALECT_300, SMB_WIRE_NONE, SMB2_ENCRYPTION_AES128_CCM);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, key7, &ok), STATUS_INVALID_PARAMETER);
	/* GMAC on one side only (smbd's order: before the dialect) */
	dialects(tc.c, SMB2_DIALECT_311, SMB2_SIGNING_AES_GMAC, SMB_WIRE_NONE);
	dialects(t2.c, SMB2_DIALECT_311, SMB2_SIGNING_AES_CMAC, SMB_WIRE_NONE);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, SMB2_SIGNING_AES_GMAC, key7, &ok), STATUS_REQUEST_OUT_OF_SEQUENCE);
	ck_assert_msg(ok, "signed with the session's algorithm (GMAC)");
	dialects(tc.c, SMB2_DIALECT_311, SMB2_SIGNING_AES_CMAC, SMB_WIRE_NONE);
	dialects(t2.c, SMB2_DIALECT_311, SMB2_SIGNING_AES_GMAC, SMB_WIRE_NONE);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, cmac, key7, &ok), STATUS_NOT_SUPPORTED);
	ck_assert(ok);
	/* none of it touched the session */
	ck_assert(tc.s->state == SMB_SESS_VALID && !tc.s->logged_off);
	ck_assert_ptr_eq(tc.s->conn, tc.c);
	ck_assert_int_eq(memcmp(tc.s->keys.signing, key7, 16), 0);
}
END_TEST

/* ---- multichannel: sessions over several connections ---- */

static struct vol_export *exp0;

/* Both connections on 3.0.2 (HMAC-SHA256 signing kept, as the harness
 * signs), multichannel negotiated, the same ClientGuid. */
static void mc_conn(struct smbt_conn *t, uint64_t key)
{
	smbt_conn_export(t, srv, &ts, key, API_INTENT_SMB_OPLOCKS);
	t->c->dialect = SMB2_DIALECT_302;
	t->c->signing = SMB2_SIGNING_HMAC_SHA256;
	t->c->cipher = SMB_WIRE_NONE;
	t->c->server_caps = SMB2_GLOBAL_CAP_MULTI_CHANNEL | SMB2_GLOBAL_CAP_LEASING | SMB2_GLOBAL_CAP_LARGE_MTU;
	memset(t->c->client_guid, 0xC1, 16);
}

static void mc_setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
	users_up();
	mc_conn(&tc, 1);
	snprintf(tc.s->user.project, sizeof(tc.s->user.project), "acme");
	snprintf(tc.s->user.name, sizeof(tc.s->user.name), "alice");
	tc.s->user.uid = 1001; /* its cred stays the harness's (root): the test files are made in the export's root */
}

static void mc_teardown(void)
{
	smbl_export_down(&ts, srv, exp0);
}

/* Channel.SigningKey for 3.0.x from the binding's session key (MS-SMB2 3.1.4.2). */
static void chan_key(const uint8_t base[16], uint8_t out[16])
{
	ck_assert_int_eq(smb_crypto_kdf(base, 16, "SMB2AESCMAC", 12, "SmbSign", 8, out, 16), AQ_OK);
}

/* Bind t (its own connection) to tc's session as user/password, both legs
 * signed with the session's key: the status; on success t names the
 * session and its tree and signs with the channel key (in key, which the
 * final answer must verify with, and the session's key must not). */
static uint32_t mc_bind(struct smbt_conn *t, const char *user, const char *password, uint8_t key[16])
{
	struct ntlm_ex x = { .flags = SMB2_SESSION_FLAG_BINDING, .alg = SMB2_SIGNING_HMAC_SHA256, .key = key7 };
	uint32_t status = ntlm_run(t->c, t->peer, &t->mid, tc.s->id, user, password, &x);

	if (x.authenticated) /* (a refused first leg on a bound channel is signed with the channel's key) */
		ck_assert_msg(x.first_ok, "the CHALLENGE of a bind is signed with the session's key");
	if (status != STATUS_SUCCESS) {
		if (x.authenticated)
			ck_assert_msg(smb_crypto_verify(SMB2_SIGNING_HMAC_SHA256, key7, x.last, x.last_len) == AQ_OK,
				      "a refused bind is signed with the session's key");
		return status;
	}
	chan_key(x.base_key, key);
	ck_assert_msg(smb_crypto_verify(SMB2_SIGNING_HMAC_SHA256, key, x.last, x.last_len) == AQ_OK,
		      "the bind's answer is signed with the channel's key");
	ck_assert(smb_crypto_verify(SMB2_SIGNING_HMAC_SHA256, key7, x.last, x.last_len) != AQ_OK);
	t->s = tc.s;
	t->t = tc.t;
	t->key = key;
	return status;
}

START_TEST(test_chan_bind)
{
	struct smbt_conn t2;
	uint8_t k2[16];
	uint64_t fid;
	uint32_t attrs;

	mc_conn(&t2, 2);
	ck_assert_uint_eq(mc_bind(&t2, "alice", "Secret-1", k2), STATUS_SUCCESS);
	ck_assert_uint_eq(tc.s->nchans, 1);
	ck_assert_int_ne(memcmp(k2, key7, 16), 0);
	/* the channel reaches the session's tree, signed with its own key */
	ck_assert_uint_eq(probe(&t2), STATUS_FILE_CLOSED);
	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
	/* an open made on one channel is the session's: closed on the other */
	ck_assert_uint_eq(smbl_open(&t2, "f1", false, 0x3, 0, 0, &fid, &attrs), STATUS_SUCCESS);
	ck_assert_ptr_nonnull(tc.s->opens);
	ck_assert_uint_eq(smbl_close(&tc, fid), STATUS_SUCCESS);
	ck_assert_ptr_null(tc.s->opens);
	/* on the channel, the session's key does not sign */
	t2.key = key7;
	ck_assert_uint_eq(probe(&t2), STATUS_ACCESS_DENIED);
	t2.key = k2;
	/* a second bind of the same connection */
	ck_assert_uint_eq(mc_bind(&t2, "alice", "Secret-1", k2), STATUS_REQUEST_NOT_ACCEPTED);
	ck_assert_uint_eq(probe(&t2), STATUS_FILE_CLOSED);
}
END_TEST

/* 3.1.1: the channel's key is keyed by the binding connection's preauth
 * hash, which takes in its NEGOTIATE exchange, both SESSION_SETUPs and the
 * CHALLENGE's answer as signed (MS-SMB2 3.3.5.5.3). */
START_TEST(test_chan_bind_311)
{
	struct ntlm_ex x = { .flags = SMB2_SESSION_FLAG_BINDING, .alg = SMB2_SIGNING_HMAC_SHA256, .key = key7 };
	struct smbt_conn t2;
	uint8_t h[SMB_CRYPTO_PREAUTH_LEN], k2[16];

	mc_conn(&t2, 2);
	tc.c->dialect = t2.c->dialect = SMB2_DIALECT_311;
	memset(t2.c->preauth, 0x5C, sizeof(t2.c->preauth)); /* as if its NEGOTIATE had been hashed */
	memcpy(h, t2.c->preauth, sizeof(h));
	preauth = h;
	ck_assert_uint_eq(ntlm_run(t2.c, t2.peer, &t2.mid, tc.s->id, "alice", "Secret-1", &x), STATUS_SUCCESS);
	preauth = NULL;
	ck_assert(x.first_ok);
	ck_assert_int_eq(smb_crypto_kdf(x.base_key, 16, "SMBSigningKey", 14, h, sizeof(h), k2, 16), AQ_OK);
	ck_assert_msg(smb_crypto_verify(SMB2_SIGNING_HMAC_SHA256, k2, x.last, x.last_len) == AQ_OK,
		      "the bind's answer is signed with the key of the binding connection's preauth hash");
	t2.s = tc.s;
	t2.t = tc.t;
	t2.key = k2;
	ck_assert_uint_eq(probe(&t2), STATUS_FILE_CLOSED);
}
END_TEST

START_TEST(test_chan_refused)
{
	struct smbt_conn t2;
	uint8_t k2[16];
	bool ok;

	mc_conn(&t2, 2);
	/* another user, a wrong password: refused, no channel, the session as it was */
	ck_assert_uint_eq(mc_bind(&t2, "bob", "Secret-2", k2), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(tc.s->nchans, 0);
	ck_assert_uint_eq(mc_bind(&t2, "alice", "Secret-9", k2), STATUS_LOGON_FAILURE);
	ck_assert_uint_eq(tc.s->nchans, 0);
	ck_assert_ptr_null(t2.c->chans);
	/* unsigned, wrongly signed, an unknown session, another ClientGuid, 2.1 */
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, SMB2_SIGNING_HMAC_SHA256, NULL, &ok), STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, SMB2_SIGNING_HMAC_SHA256, (const uint8_t[16]){ 1 }, &ok),
			  STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(try_bind(&t2, tc.s->id + 77, SMB2_SIGNING_HMAC_SHA256, key7, &ok), STATUS_USER_SESSION_DELETED);
	t2.c->client_guid[0] = 1;
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, SMB2_SIGNING_HMAC_SHA256, key7, &ok), STATUS_USER_SESSION_DELETED);
	t2.c->client_guid[0] = 0xC1;
	t2.c->dialect = SMB2_DIALECT_210;
	ck_assert_uint_eq(try_bind(&t2, tc.s->id, SMB2_SIGNING_HMAC_SHA256, key7, &ok), STATUS_REQUEST_NOT_ACCEPTED);
	t2.c->dialect = SMB2_DIALECT_302;
	ck_assert_uint_eq(tc.s->nchans, 0);
	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
	/* and the right user binds after all that */
	ck_assert_uint_eq(mc_bind(&t2, "alice", "Secret-1", k2), STATUS_SUCCESS);
	ck_assert_uint_eq(probe(&t2), STATUS_FILE_CLOSED);
}
END_TEST

START_TEST(test_chan_limit)
{
	static struct smbt_conn t[SMB_SESS_MAX_CHANNELS];
	static uint8_t k[SMB_SESS_MAX_CHANNELS][16];

	/* 31 more channels (32 with the first), then no more */
	for (unsigned i = 0; i + 1 < SMB_SESS_MAX_CHANNELS; i++) {
		mc_conn(&t[i], 10 + i);
		ck_assert_uint_eq(mc_bind(&t[i], "alice", "Secret-1", k[i]), STATUS_SUCCESS);
	}
	mc_conn(&t[SMB_SESS_MAX_CHANNELS - 1], 100);
	ck_assert_uint_eq(mc_bind(&t[SMB_SESS_MAX_CHANNELS - 1], "alice", "Secret-1", k[0]),
			  STATUS_INSUFFICIENT_RESOURCES);
	ck_assert_uint_eq(tc.s->nchans, SMB_SESS_MAX_CHANNELS - 1);
}
END_TEST

START_TEST(test_chan_first_gone)
{
	struct smbt_conn t2, t3;
	struct smbl_create ra = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smbl_create rc = { .name = "f1", .oplock = SMB2_OPLOCK_LEVEL_BATCH };
	struct smb_sess *s = tc.s;
	uint8_t k2[16], level = 0;

	mc_conn(&t2, 2);
	ck_assert_uint_eq(mc_bind(&t2, "alice", "Secret-1", k2), STATUS_SUCCESS);
	smbl_create(&tc, &ra);
	ck_assert_uint_eq(ra.oplock_got, SMB2_OPLOCK_LEVEL_BATCH);
	/* the first connection drops: the session, its tree and open live on the other */
	close(tc.peer);
	smb_conn_free(tc.c);
	ck_assert_ptr_eq(s->conn, t2.c);
	ck_assert_ptr_nonnull(s->opens);
	ck_assert_uint_eq(probe(&t2), STATUS_FILE_CLOSED);
	/* another client's open breaks the oplock: the break goes out on the live channel */
	mc_conn(&t3, 3);
	memset(t3.c->client_guid, 0xC3, 16);
	smbl_create(&t3, &rc);
	ck_assert_uint_eq(rc.status, STATUS_PENDING);
	smbt_loop_turn(srv);
	smbl_expect_oplock_break(&t2, ra.fid, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(smbl_ack_oplock(&t2, ra.fid, SMB2_OPLOCK_LEVEL_II, &level), STATUS_SUCCESS);
	smbt_loop_turn(srv);
	smbl_create_final(&t3, &rc);
	ck_assert_uint_eq(rc.status, STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&t2, ra.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&t3, rc.fid), STATUS_SUCCESS);
}
END_TEST

START_TEST(test_chan_other_gone)
{
	struct smbt_conn t2;
	uint8_t k2[16];

	mc_conn(&t2, 2);
	ck_assert_uint_eq(mc_bind(&t2, "alice", "Secret-1", k2), STATUS_SUCCESS);
	close(t2.peer);
	smb_conn_free(t2.c);
	ck_assert_uint_eq(tc.s->nchans, 0);
	ck_assert_ptr_eq(tc.s->conn, tc.c);
	ck_assert_uint_eq(probe(&tc), STATUS_FILE_CLOSED);
}
END_TEST

START_TEST(test_chan_logoff)
{
	struct smbt_conn t2;
	struct smb_wire_hdr h = { .command = SMB2_LOGOFF };
	uint8_t k2[16], body[4] = { 4 }, buf[256];
	size_t len;
	bool ok;

	mc_conn(&t2, 2);
	ck_assert_uint_eq(mc_bind(&t2, "alice", "Secret-1", k2), STATUS_SUCCESS);
	h.message_id = t2.mid++;
	smbt_send(&t2, &h, body, sizeof(body));
	ck_assert_int_eq(smbt_recv(&t2, buf, sizeof(buf), &len, &h, &ok), 1);
	ck_assert_uint_eq(h.status, STATUS_SUCCESS);
	ck_assert_msg(ok, "the LOGOFF's answer is signed with the channel's key");
	/* the session is gone on every channel */
	ck_assert_uint_eq(probe(&tc), STATUS_USER_SESSION_DELETED);
	ck_assert_uint_eq(probe(&t2), STATUS_USER_SESSION_DELETED);
}
END_TEST

/* FSCTL_QUERY_NETWORK_INTERFACE_INFO on FileId all ones with MaxOutputResponse max: its status, the output in out. */
static uint8_t iface_fid = 0xFF; /* the FileId's bytes */

static uint32_t query_ifaces(struct smbt_conn *t, uint32_t max, uint8_t *out, size_t *n)
{
	uint8_t body[57] = { 57 }, buf[2048];
	struct smb_wire_hdr h = { .command = SMB2_IOCTL, .tree_id = 1 };
	size_t len;
	bool ok;

	smbt_put32(body + 4, FSCTL_QUERY_NETWORK_INTERFACE_INFO);
	memset(body + 8, iface_fid, 16);
	smbt_put32(body + 24, SMB2_HDR_LEN + 56);
	smbt_put32(body + 36, SMB2_HDR_LEN + 56);
	smbt_put32(body + 44, max);
	smbt_put32(body + 48, 1); /* SMB2_0_IOCTL_IS_FSCTL */
	h.message_id = t->mid++;
	smbt_send(t, &h, body, sizeof(body));
	ck_assert_int_eq(smbt_recv(t, buf, sizeof(buf), &len, &h, &ok), 1);
	*n = 0;
	if (h.status == STATUS_SUCCESS) {
		size_t off = smb_wire_get_u32(buf + SMB2_HDR_LEN + 32), cnt = smb_wire_get_u32(buf + SMB2_HDR_LEN + 36);

		ck_assert(ok);
		ck_assert_uint_le(off + cnt, len);
		memcpy(out, buf + off, cnt);
		*n = cnt;
	}
	return h.status;
}

START_TEST(test_iface_info)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint8_t out[1024];
	size_t n;

	smb_iface_collect(srv, (const struct sockaddr *)&sa);
	ck_assert_uint_eq(srv->nifaces, 1);
	ck_assert_uint_eq(query_ifaces(&tc, 65536, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(n, 152);
	ck_assert_uint_eq(smb_wire_get_u32(out), 0);              /* Next: the last */
	ck_assert_uint_ne(smb_wire_get_u32(out + 4), 0);          /* IfIndex (lo) */
	ck_assert_uint_eq(smb_wire_get_u32(out + 8), 0);          /* neither RSS nor RDMA */
	ck_assert_uint_gt(smb_wire_get_u64(out + 16), 0);         /* LinkSpeed */
	ck_assert_uint_eq(smb_wire_get_u16(out + 24), 0x0002);    /* InterNetwork */
	ck_assert_int_eq(memcmp(out + 28, (const uint8_t[4]){ 127, 0, 0, 1 }, 4), 0);
	/* a buffer too small; a connection without multichannel */
	ck_assert_uint_eq(query_ifaces(&tc, 100, out, &n), STATUS_BUFFER_TOO_SMALL);
	iface_fid = 0x01; /* a FileId: it names the server, not a file */
	ck_assert_uint_eq(query_ifaces(&tc, 65536, out, &n), STATUS_INVALID_PARAMETER);
	iface_fid = 0xFF;
	tc.c->server_caps &= ~SMB2_GLOBAL_CAP_MULTI_CHANNEL;
	ck_assert_uint_eq(query_ifaces(&tc, 65536, out, &n), STATUS_INVALID_DEVICE_REQUEST);
	/* a wildcard listen address: the node's addresses, never the wildcard itself */
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	smb_iface_collect(srv, (const struct sockaddr *)&sa);
	ck_assert_uint_ge(srv->nifaces, 1);
	for (size_t i = 0; i < srv->nifaces; i++)
		ck_assert(srv->ifaces[i].v6 || memcmp(srv->ifaces[i].addr, (const uint8_t[4]){ 0 }, 4) != 0);
}
END_TEST

static Suite *smb_sess_suite(void)
{
	Suite *s = suite_create("smb_sess");
	TCase *tr = tcase_create("reauth"), *tb = tcase_create("bind"), *tm;

	tcase_add_checked_fixture(tr, setup, teardown);
	tcase_add_test(tr, test_reauth_same_user);
	tcase_add_test(tr, test_reauth_other_user);
	tcase_add_test(tr, test_reauth_wrong_password);
	tcase_add_test(tr, test_reauth_unsigned);
	tcase_add_loop_test(tr, test_auth_malformed, 0, 2);
	suite_add_tcase(s, tr);
	tcase_add_checked_fixture(tb, setup, teardown);
	tcase_add_test(tb, test_bind_refused);
	suite_add_tcase(s, tb);
	tm = tcase_create("multichannel");
	tcase_add_checked_fixture(tm, mc_setup, mc_teardown);
	tcase_add_test(tm, test_chan_bind);
	tcase_add_test(tm, test_chan_bind_311);
	tcase_add_test(tm, test_chan_refused);
	tcase_add_test(tm, test_chan_limit);
	tcase_add_test(tm, test_chan_first_gone);
	tcase_add_test(tm, test_chan_other_gone);
	tcase_add_test(tm, test_chan_logoff);
	tcase_add_test(tm, test_iface_info);
	suite_add_tcase(s, tm);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(smb_sess_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
