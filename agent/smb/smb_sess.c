/* smb_sess: NEGOTIATE (and the SMB1 multi-protocol form), SESSION_SETUP
 * over SPNEGO/NTLMSSP NTLMv2 against the pushed users, key derivation per
 * dialect with the 3.1.1 preauth hash, re-authentication of a live session
 * (same user only; keys kept), multichannel: binding a channel on another
 * connection of the same client (its own signing key; faulty binds refused
 * with smbd's statuses), a session living on while any channel does,
 * LOGOFF. Anonymous and guest sessions are refused (smb_ntlm refuses the
 * anonymous form; an unknown user is a logon failure, never a guest). The
 * mechanism is behind smb_sess_token / smb_sess_challenge /
 * smb_sess_verify: Kerberos would be another branch there, with nothing of
 * the re-authentication or binding logic changed.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/rand.h>

#include "agent/smb/smb_ntlm.h"
#include "agent/smb/smb_spnego.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

#define SMB_SESS_MAX_PER_CONN 64u
#define SMB_SESS_SKEW (300ull * SMB_NTLM_FILETIME_SEC)
/* dialect mask of smb_wire_negotiate_pick_dialect: 2.0.2 to 3.1.1 */
#define SMB_SESS_DIALECTS 0x1Fu

static void smb_neg_fill(struct smb_conn *c, struct smb_wire_negotiate_rsp *n, struct ut_buf *blob)
{
	memset(n, 0, sizeof(*n));
	n->security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED | SMB2_NEGOTIATE_SIGNING_REQUIRED;
	memcpy(n->server_guid, c->srv->guid, 16);
	n->max_transact = 1u << 20;
	n->max_read = n->max_write = SMB_WIRE_IO_MAX;
	n->system_time = smb_filetime_now();
	n->start_time = 0;
	smb_spnego_init2_encode(blob, SMB_SPNEGO_NTLMSSP);
	n->sec_blob = ut_buf_bytes(blob);
	n->sec_len = blob->len;
	n->cipher = n->signing = SMB_WIRE_NONE;
}

/* An SMB1 NEGOTIATE offering SMB2: answered with an SMB2 NEGOTIATE
 * response naming the wildcard (or 2.0.2); the client then negotiates again. */
int smb_sess_smb1(struct smb_conn *c, const uint8_t *frame, size_t len)
{
	struct smb_wire_negotiate_rsp n;
	struct smb_wire_hdr h = { .command = SMB2_NEGOTIATE, .credits = 1, .flags = SMB2_FLAGS_SERVER_TO_REDIR };
	struct ut_buf blob = { 0 }, out = { 0 };
	uint16_t dialect;
	int rc = -1;

	if (smb_wire_smb1_negotiate(frame, len, &dialect) != AQ_OK) {
		UT_INFO("smb_srv", NULL, "%s: SMB1-only client refused", c->peer);
		return -1;
	}
	ut_buf_init(&blob, 1024);
	ut_buf_init(&out, 4096);
	smb_neg_fill(c, &n, &blob);
	n.dialect = dialect;
	smb_wire_hdr_encode(&out, &h);
	smb_wire_negotiate_rsp_encode(&out, 0, &n);
	if (out.err != AQ_OK || blob.err != AQ_OK)
		goto out;
	smb_conn_send(c, ut_buf_bytes(&out), out.len);
	rc = 0;
out:
	ut_buf_cleanup(&blob);
	ut_buf_cleanup(&out);
	return rc;
}

uint32_t smb_sess_negotiate(struct smb_req *r)
{
	struct smb_conn *c = r->c;
	struct smb_wire_negotiate_req q;
	struct smb_wire_negotiate_rsp n;
	struct ut_buf blob = { 0 };
	uint32_t status = STATUS_INVALID_PARAMETER;

	if (c->negotiated) {
		c->closing = true; /* a second NEGOTIATE: MS-SMB2 3.3.5.3 */
		return STATUS_INVALID_PARAMETER;
	}
	ut_buf_init(&blob, 1024);
	if (smb_wire_negotiate_req_decode(&r->m, &q) != AQ_OK)
		goto out;
	smb_neg_fill(c, &n, &blob);
	if (!(n.dialect = smb_wire_negotiate_pick_dialect(&q, SMB_SESS_DIALECTS))) {
		status = STATUS_NOT_SUPPORTED;
		goto out;
	}
	c->dialect = n.dialect;
	c->client_caps = q.capabilities;
	c->client_secmode = q.security_mode;
	memcpy(c->client_guid, q.client_guid, 16);
	c->cipher = c->signing = SMB_WIRE_NONE;
	if (n.dialect >= SMB2_DIALECT_210)
		n.capabilities |= SMB2_GLOBAL_CAP_LARGE_MTU | SMB2_GLOBAL_CAP_LEASING;
	/* multichannel (smb_sess_bind) for 3.x clients that offer it, as smbd */
	if (n.dialect >= SMB2_DIALECT_300 && (q.capabilities & SMB2_GLOBAL_CAP_MULTI_CHANNEL))
		n.capabilities |= SMB2_GLOBAL_CAP_MULTI_CHANNEL;
	else
		n.max_read = n.max_write = n.max_transact = 65536;
	if (n.dialect == SMB2_DIALECT_300 || n.dialect == SMB2_DIALECT_302) {
		if (q.capabilities & SMB2_GLOBAL_CAP_ENCRYPTION) {
			n.capabilities |= SMB2_GLOBAL_CAP_ENCRYPTION;
			c->cipher = SMB2_ENCRYPTION_AES128_CCM;
		}
	}
	if (n.dialect == SMB2_DIALECT_311) {
		if (!q.has_preauth || !q.sha512)
			goto out;
		RAND_bytes(n.salt, sizeof(n.salt));
		if (q.has_encryption)
			c->cipher = n.cipher = smb_wire_negotiate_pick(q.ciphers, q.cipher_count, 0x1Eu);
		if (q.has_signing)
			c->signing = n.signing = smb_wire_negotiate_pick(q.signing, q.signing_count,
									 (1u << SMB2_SIGNING_HMAC_SHA256) |
									 (1u << SMB2_SIGNING_AES_CMAC) |
									 (1u << SMB2_SIGNING_AES_GMAC));
		/* an empty choice is answered as none (the client then uses its default) */
		if (n.signing == SMB_WIRE_NONE && q.has_signing)
			n.signing = c->signing = SMB2_SIGNING_AES_CMAC;
		smb_crypto_preauth_init(c->preauth);
		smb_crypto_preauth_update(c->preauth, r->m.p, r->m.len);
	}
	smb_wire_negotiate_rsp_encode(r->out, r->hdr_off, &n);
	c->server_caps = n.capabilities;
	c->negotiated = true;
	status = STATUS_SUCCESS;
out:
	ut_buf_cleanup(&blob);
	return status;
}

static void smb_auth_drop(struct smb_auth *a)
{
	free(a->ntlm_neg);
	free(a->ntlm_chal);
	a->ntlm_neg = a->ntlm_chal = NULL;
}

static void smb_sess_drop_ntlm(struct smb_sess *s)
{
	smb_auth_drop(&s->auth);
}

/* Unlink ch from its session and its connection, and free it. */
static void smb_chan_free(struct smb_chan *ch)
{
	struct smb_chan **pp;

	for (pp = &ch->sess->chans; *pp && *pp != ch; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = ch->next;
		ch->sess->nchans--;
	}
	for (pp = &ch->conn->chans; *pp && *pp != ch; pp = &(*pp)->cnext)
		;
	if (*pp)
		*pp = ch->cnext;
	smb_auth_drop(&ch->auth);
	OPENSSL_cleanse(ch->signing, sizeof(ch->signing));
	smb_crypto_ctx_cleanup(&ch->cx);
	free(ch);
}

static struct smb_chan *smb_chan_of(const struct smb_sess *s, const struct smb_conn *c)
{
	struct smb_chan *ch;

	for (ch = s->chans; ch && ch->conn != c; ch = ch->next)
		;
	return ch;
}

uint16_t smb_sess_sign_alg(const struct smb_sess *s)
{
	return s->alg_kept ? s->sign_alg : smb_dispatch_sign_alg(s->conn);
}

const uint8_t *smb_sess_signing_key(struct smb_sess *s, const struct smb_conn *c, uint16_t *alg,
				    struct smb_crypto_ctx **cx)
{
	struct smb_chan *ch = smb_chan_of(s, c);

	if (ch && ch->bound) {
		*alg = smb_dispatch_sign_alg(c); /* a channel signs by its connection's algorithm */
		*cx = &ch->cx;
		return ch->signing;
	}
	*alg = smb_sess_sign_alg(s);
	*cx = &s->cx;
	return s->keys.signing;
}

size_t smb_sess_conns(const struct smb_sess *s, struct smb_conn **out, size_t cap)
{
	size_t n = 0;

	if (cap)
		out[n++] = s->conn;
	for (const struct smb_chan *ch = s->chans; ch && n < cap; ch = ch->next)
		if (ch->conn != s->conn)
			out[n++] = ch->conn;
	return n;
}

unsigned smb_sess_conn_gone(struct smb_conn *c)
{
	struct smb_sess **pp = &c->sessions;
	unsigned moved = 0;

	while (c->chans) /* its channels of sessions of other connections */
		if (c->chans->sess->conn == c)
			c->chans = c->chans->cnext; /* one of c's own sessions' (moved here before): below */
		else
			smb_chan_free(c->chans);
	while (*pp) {
		struct smb_sess *s = *pp;
		struct smb_chan *to;

		for (to = s->chans; to && (!to->bound || to->conn == c || to->conn->freeing); to = to->next)
			;
		if (!to || s->logged_off) {
			pp = &s->next;
			continue;
		}
		/* the session lives on: its home is now to's connection (its
		 * own key keeps the algorithm it was made with) */
		*pp = s->next;
		s->sign_alg = smb_sess_sign_alg(s);
		s->alg_kept = true;
		for (struct smb_chan *ch = s->chans, *nx; ch; ch = nx) {
			nx = ch->next;
			if (ch->conn == c)
				smb_chan_free(ch);
		}
		s->conn = to->conn;
		s->next = to->conn->sessions;
		to->conn->sessions = s;
		UT_INFO("smb_srv", NULL, "%s: connection gone, session %016llx goes on on %s", c->peer,
			(unsigned long long)s->id, to->conn->peer);
		moved++;
	}
	return moved;
}

/* Close every open of s, their locks released first: a request waiting
 * only on locks of this session is granted before its own open goes. */
static void smb_sess_close_opens(struct smb_sess *s)
{
	for (struct smb_open *o = s->opens; o; o = o->next)
		smb_lock_open_gone(o);
	while (s->opens)
		smb_open_free(s, s->opens, true);
}

/* End s as LOGOFF does: its durable opens kept for a reconnect, the
 * others closed, its trees gone; s itself stays (keys only) so that what
 * still names it is answered USER_SESSION_DELETED, signed. */
static void smb_sess_end(struct smb_conn *c, struct smb_sess *s)
{
	smb_durable_sess_gone(c, s);
	smb_sess_close_opens(s);
	while (s->trees)
		smb_tree_free(s, s->trees);
	smb_sess_drop_ntlm(s);
	s->reauth = false;
	s->logged_off = true;
}

void smb_sess_free(struct smb_conn *c, struct smb_sess *s)
{
	struct smb_sess **pp;

	for (pp = &c->sessions; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = s->next;
	smb_sess_close_opens(s); /* with its channels still there: their waiters on its opens go */
	while (s->trees)
		smb_tree_free(s, s->trees);
	while (s->chans)
		smb_chan_free(s->chans);
	smb_sess_drop_ntlm(s);
	OPENSSL_cleanse(&s->keys, sizeof(s->keys));
	smb_crypto_ctx_cleanup(&s->cx);
	free(s);
}

/* The inner NTLMSSP token of a SESSION_SETUP blob (SPNEGO init, resp or
 * raw); *raw says it was bare NTLMSSP, as the Linux kernel client sends
 * (sec=ntlmssp) and wants back: it refuses a SPNEGO-wrapped challenge
 * ("blob signature incorrect"), as Samba and Windows answer in the
 * client's form. */
static int smb_sess_token(const uint8_t *blob, size_t len, const uint8_t **tok, size_t *tlen, bool *raw)
{
	struct smb_spnego_init in;
	struct smb_spnego_resp rp;

	*raw = len >= 8 && memcmp(blob, "NTLMSSP", 8) == 0;
	if (*raw) {
		*tok = blob;
		*tlen = len;
		return AQ_OK;
	}
	if (len && blob[0] == 0x60) {
		if (smb_spnego_init_decode(blob, len, &in) != AQ_OK || !(in.mechs & SMB_SPNEGO_NTLMSSP) ||
		    in.first != SMB_SPNEGO_NTLMSSP || !in.token)
			return AQ_EINVAL;
		*tok = in.token;
		*tlen = in.token_len;
		return AQ_OK;
	}
	if (smb_spnego_resp_decode(blob, len, &rp) != AQ_OK || !rp.token)
		return AQ_EINVAL;
	*tok = rp.token;
	*tlen = rp.token_len;
	return AQ_OK;
}

/* The mechanism's first leg: a's CHALLENGE answered into r->out
 * (MORE_PROCESSING_REQUIRED), what the MIC needs kept in a. */
static uint32_t smb_sess_challenge(struct smb_req *r, struct smb_auth *a, const uint8_t *tok, size_t tlen)
{
	struct smb_ntlm_challenge ch = { .target = "AQUIFER", .nb_domain = "AQUIFER", .nb_computer = "AQUIFER",
					 .dns_domain = "aquifer", .dns_computer = "aquifer" };
	struct ut_buf nt = { 0 }, sp = { 0 };
	uint32_t cflags, status = STATUS_LOGON_FAILURE;

	if (smb_ntlm_negotiate_decode(tok, tlen, &cflags) != AQ_OK || smb_ntlm_answer_flags(cflags, &ch.flags) != AQ_OK)
		goto out;
	/* No MsvAvTimestamp: clients then send no MIC and SPNEGO needs no
	 * mechListMIC (signing the session protects what follows). */
	ch.flags &= ~(NTLMSSP_NEGOTIATE_VERSION);
	RAND_bytes(a->challenge, sizeof(a->challenge));
	memcpy(ch.challenge, a->challenge, 8);
	ut_buf_init(&nt, SMB_NTLM_MSG_MAX);
	ut_buf_init(&sp, SMB_SPNEGO_MAX);
	if (smb_ntlm_challenge_encode(&nt, &ch) != AQ_OK ||
	    (a->raw_ntlmssp ? ut_buf_add(&sp, ut_buf_bytes(&nt), nt.len)
			    : smb_spnego_resp_encode(&sp, SMB_SPNEGO_ACCEPT_INCOMPLETE, SMB_SPNEGO_NTLMSSP,
						     ut_buf_bytes(&nt), nt.len, NULL, 0)) != AQ_OK)
		goto out;
	smb_auth_drop(a);
	if (!(a->ntlm_neg = malloc(tlen)) || !(a->ntlm_chal = malloc(nt.len)))
		goto out;
	memcpy(a->ntlm_neg, tok, tlen);
	a->ntlm_neg_len = tlen;
	memcpy(a->ntlm_chal, ut_buf_bytes(&nt), nt.len);
	a->ntlm_chal_len = nt.len;
	smb_wire_session_setup_rsp_encode(r->out, r->hdr_off, 0, ut_buf_bytes(&sp), sp.len);
	status = STATUS_MORE_PROCESSING_REQUIRED;
out:
	ut_buf_cleanup(&nt);
	ut_buf_cleanup(&sp);
	return status;
}

/* The mechanism's last leg: the user the AUTHENTICATE proves (copied into
 * *who) and the session key it yields (key, 16 bytes): STATUS_SUCCESS,
 * LOGON_FAILURE, or INVALID_PARAMETER for a malformed NTLMv2 response. */
static uint32_t smb_sess_verify(struct smb_req *r, const struct smb_auth *au, const uint8_t *tok, size_t tlen,
				struct smb_srv_user *who, uint8_t key[16])
{
	struct smb_ntlm_auth a;
	struct smb_ntlm_check ck = { .server_challenge = au->challenge, .negotiate = au->ntlm_neg,
				     .negotiate_len = au->ntlm_neg_len, .challenge = au->ntlm_chal,
				     .challenge_len = au->ntlm_chal_len, .authenticate = tok, .authenticate_len = tlen,
				     .now = smb_filetime_now(), .max_skew = SMB_SESS_SKEW };
	static const uint8_t no_hash[16];
	struct smb_srv_user cand[8];
	char user[API_INTENT_SMB_USER_LEN * 4 + 1], domain[256] = "";
	size_t n, i;

	if (!au->ntlm_chal || smb_ntlm_auth_decode(tok, tlen, &a) != AQ_OK || !a.user_len ||
	    smb_wire_utf16_to_utf8(a.user, a.user_len, user, sizeof(user), NULL) != AQ_OK)
		return STATUS_LOGON_FAILURE;
	if (a.domain_len)
		smb_wire_utf16_to_utf8(a.domain, a.domain_len, domain, sizeof(domain), NULL);
	/* a malformed NTLMv2 response (its AV pairs run past the blob) is
	 * INVALID_PARAMETER, as smbd answers it, whoever the user: checked
	 * with a hash no user has, so that the answer says nothing of the
	 * user's existence */
	ck.nt_hash = no_hash;
	if (smb_ntlm_auth_check(&ck, &a, key) == AQ_EINVAL)
		return STATUS_INVALID_PARAMETER;
	n = smb_srv_users(r->c->srv, user, cand, 8);
	/* a domain naming the project picks among users of one name */
	for (i = 0; i < n; i++) {
		if (n > 1 && domain[0] && strcasecmp(domain, cand[i].project) != 0)
			continue;
		ck.nt_hash = cand[i].nt_hash;
		if (smb_ntlm_auth_check(&ck, &a, key) == AQ_OK)
			break;
	}
	if (i == n) {
		UT_INFO("smb_srv", NULL, "%s: logon of \"%s\" refused", r->c->peer, user);
		return STATUS_LOGON_FAILURE;
	}
	*who = cand[i];
	return STATUS_SUCCESS;
}

/* The final answer's security buffer (bare NTLMSSP ends with an empty one). */
static uint32_t smb_sess_done(struct smb_req *r, const struct smb_auth *a)
{
	struct ut_buf sp = { 0 };
	uint32_t status = STATUS_NO_MEMORY;

	ut_buf_init(&sp, 1024);
	if (a->raw_ntlmssp || smb_spnego_resp_encode(&sp, SMB_SPNEGO_ACCEPT_COMPLETED, 0, NULL, 0, NULL, 0) == AQ_OK) {
		smb_wire_session_setup_rsp_encode(r->out, r->hdr_off, 0, ut_buf_bytes(&sp), sp.len);
		status = STATUS_SUCCESS;
	}
	ut_buf_cleanup(&sp);
	return status;
}

static bool smb_sess_same_user(const struct smb_srv_user *a, const struct smb_srv_user *b)
{
	return strcmp(a->project, b->project) == 0 && strcmp(a->name, b->name) == 0;
}

static uint32_t smb_sess_auth(struct smb_req *r, struct smb_sess *s, const uint8_t *tok, size_t tlen)
{
	struct smb_srv_user who;
	uint8_t key[16];
	uint32_t status;

	if ((status = smb_sess_verify(r, &s->auth, tok, tlen, &who, key)) != STATUS_SUCCESS)
		goto out;
	status = STATUS_LOGON_FAILURE;
	if (s->reauth) {
		/* re-authentication (MS-SMB2 3.3.5.5.3): the same user keeps
		 * the session, its opens and its keys; another user is refused
		 * and the session goes on as it was (its opens were made with
		 * the first user's credentials) */
		if (!smb_sess_same_user(&s->user, &who)) {
			UT_INFO("smb_srv", NULL, "%s: re-authentication of session %016llx as \"%s\" refused (it is %s/%s's)",
				r->c->peer, (unsigned long long)s->id, who.name, s->user.project, s->user.name);
			status = STATUS_ACCESS_DENIED;
			goto out;
		}
	} else {
		s->user = who;
		s->cred = (struct vol_cred){ .uid = who.uid, .gid = who.gid };
		/* the preauth hash covers every SESSION_SETUP request, this one included */
		if (smb_crypto_derive(r->c->dialect,
				      r->c->cipher == SMB_WIRE_NONE ? SMB2_ENCRYPTION_AES128_CCM : r->c->cipher, key, 16,
				      s->preauth, &s->keys) != AQ_OK)
			goto out;
		RAND_bytes(s->nonce_fixed, sizeof(s->nonce_fixed));
	}
	if ((status = smb_sess_done(r, &s->auth)) != STATUS_SUCCESS)
		goto out;
	smb_sess_drop_ntlm(s);
	s->state = SMB_SESS_VALID;
	r->c->authed = true;
	r->sign_rsp = true;
	r->sign_sess = s;
	UT_INFO("smb_srv", NULL, "%s: session of %s/%s (uid %u) %s, dialect %04x", r->c->peer, s->user.project,
		s->user.name, s->user.uid, s->reauth ? "re-authenticated" : "set up", r->c->dialect);
	s->reauth = false;
out:
	OPENSSL_cleanse(key, sizeof(key));
	return status;
}

/* A session of the server by id, whichever connection set it up. */
static struct smb_sess *smb_sess_find_any(struct smb_srv *srv, uint64_t id)
{
	struct smb_sess *s = NULL;

	for (struct smb_conn *c = srv->conns; c && !s; c = c->next)
		for (s = c->sessions; s && s->id != id; s = s->next)
			;
	return s;
}

/* The binding's last leg (3.3.5.5.3): the same user as the session's, then
 * Channel.SigningKey from this authentication's session key (3.1.1: with
 * the binding connection's preauth hash, this request included); the
 * answer is signed with it. Another user: ACCESS_DENIED (smbd). */
static uint32_t smb_sess_bind_auth(struct smb_req *r, struct smb_sess *s, struct smb_chan *ch, const uint8_t *tok,
				   size_t tlen)
{
	struct smb_crypto_keys k;
	struct smb_srv_user who;
	uint8_t key[16];
	uint32_t status;

	memset(&k, 0, sizeof(k));
	if ((status = smb_sess_verify(r, &ch->auth, tok, tlen, &who, key)) != STATUS_SUCCESS)
		goto out;
	if (!smb_sess_same_user(&s->user, &who)) {
		UT_INFO("smb_srv", NULL, "%s: binding to session %016llx as \"%s\" refused (it is %s/%s's)", r->c->peer,
			(unsigned long long)s->id, who.name, s->user.project, s->user.name);
		status = STATUS_ACCESS_DENIED;
		goto out;
	}
	status = STATUS_LOGON_FAILURE;
	if (smb_crypto_derive(r->c->dialect, r->c->cipher == SMB_WIRE_NONE ? SMB2_ENCRYPTION_AES128_CCM : r->c->cipher,
			      key, 16, ch->preauth, &k) != AQ_OK)
		goto out;
	if ((status = smb_sess_done(r, &ch->auth)) != STATUS_SUCCESS)
		goto out;
	memcpy(ch->signing, k.signing, sizeof(ch->signing));
	ch->bound = true;
	smb_auth_drop(&ch->auth);
	r->c->authed = true;
	UT_INFO("smb_srv", NULL, "%s: channel %u of session %016llx (%s/%s) bound, dialect %04x", r->c->peer,
		s->nchans + 1, (unsigned long long)s->id, s->user.project, s->user.name, r->c->dialect);
out:
	OPENSSL_cleanse(&k, sizeof(k));
	OPENSSL_cleanse(key, sizeof(key));
	return status;
}

/* SESSION_SETUP with SMB2_SESSION_FLAG_BINDING (MS-SMB2 3.3.5.5.2): a
 * channel on this connection for a session set up on another one of the
 * same client. The faults are refused with the status smbd gives, checked
 * in smbd's order: an algorithm mismatch around GMAC, a dialect before
 * 3.0 (REQUEST_NOT_ACCEPTED), an unsigned request, another dialect or
 * cipher than the session's (INVALID_PARAMETER), a session still being
 * set up or already bound here (REQUEST_NOT_ACCEPTED), another ClientGuid
 * (USER_SESSION_DELETED), a connection that did not negotiate
 * MULTI_CHANNEL (REQUEST_NOT_ACCEPTED), a channel past
 * SMB_SESS_MAX_CHANNELS (INSUFFICIENT_RESOURCES). Every leg is signed with
 * the session's key (the channel has none yet: a bad signature is
 * ACCESS_DENIED) and so are the answers but the last, which the new
 * channel's key signs. A failed authentication drops the channel, never
 * the session. */
static uint32_t smb_sess_bind(struct smb_req *r, const struct smb_wire_session_setup_req *q)
{
	const struct smb_wire_hdr *h = &r->m.hdr;
	struct smb_conn *c = r->c;
	struct smb_sess *s;
	struct smb_chan *ch;
	const uint8_t *tok;
	size_t tlen;
	uint16_t calg = smb_dispatch_sign_alg(c), salg;
	uint32_t status;
	bool sig_ok, raw;

	if (h->session_id == 0)
		return STATUS_INVALID_PARAMETER;
	if (!(s = smb_sess_find_any(c->srv, h->session_id)) || s->logged_off)
		return STATUS_USER_SESSION_DELETED;
	salg = smb_sess_sign_alg(s);
	sig_ok = (h->flags & SMB2_FLAGS_SIGNED) && s->state == SMB_SESS_VALID &&
		 smb_crypto_verify(salg, s->keys.signing, r->m.p, r->m.len) == AQ_OK;
	if ((h->flags & SMB2_FLAGS_SIGNED) && !sig_ok)
		return STATUS_ACCESS_DENIED;
	if (sig_ok) {
		r->sign_rsp = true;
		r->sign_sess = s;
	}
	if (salg == SMB2_SIGNING_AES_GMAC && calg != salg)
		return STATUS_REQUEST_OUT_OF_SEQUENCE;
	if (calg == SMB2_SIGNING_AES_GMAC && salg != calg)
		return STATUS_NOT_SUPPORTED;
	if (c->dialect < SMB2_DIALECT_300)
		return STATUS_REQUEST_NOT_ACCEPTED;
	if (!sig_ok || s->conn->dialect != c->dialect || s->conn->cipher != c->cipher)
		return STATUS_INVALID_PARAMETER;
	ch = smb_chan_of(s, c);
	if (s->conn == c || (ch && ch->bound))
		return STATUS_REQUEST_NOT_ACCEPTED; /* its channel on this connection exists */
	if (memcmp(s->conn->client_guid, c->client_guid, 16) != 0)
		return STATUS_USER_SESSION_DELETED;
	if (!(c->server_caps & SMB2_GLOBAL_CAP_MULTI_CHANNEL)) {
		UT_INFO("smb_srv", NULL, "%s: binding to session %016llx refused: MULTI_CHANNEL not negotiated", c->peer,
			(unsigned long long)s->id);
		return STATUS_REQUEST_NOT_ACCEPTED;
	}
	if (!ch) {
		if (s->nchans + 1 >= SMB_SESS_MAX_CHANNELS)
			return STATUS_INSUFFICIENT_RESOURCES;
		if (!(ch = calloc(1, sizeof(*ch))))
			return STATUS_NO_MEMORY;
		ch->sess = s;
		ch->conn = c;
		memcpy(ch->preauth, c->preauth, sizeof(ch->preauth));
		ch->next = s->chans;
		s->chans = ch;
		s->nchans++;
		ch->cnext = c->chans;
		c->chans = ch;
	}
	r->sess = s;
	r->rsp_session = s->id;
	r->bind_chan = ch;
	if (c->dialect == SMB2_DIALECT_311)
		smb_crypto_preauth_update(ch->preauth, r->m.p, r->m.len);
	if (smb_sess_token(q->blob, q->blob_len, &tok, &tlen, &raw) != AQ_OK || tlen < 12) {
		status = STATUS_LOGON_FAILURE;
	} else if (smb_wire_get_u32(tok + 8) == 1) {
		ch->auth.raw_ntlmssp = raw;
		status = smb_sess_challenge(r, &ch->auth, tok, tlen);
	} else if (smb_wire_get_u32(tok + 8) == 3) {
		status = smb_sess_bind_auth(r, s, ch, tok, tlen);
	} else {
		status = STATUS_LOGON_FAILURE;
	}
	if (status != STATUS_SUCCESS && status != STATUS_MORE_PROCESSING_REQUIRED) {
		r->bind_chan = NULL;
		smb_chan_free(ch); /* the session goes on as it was */
	}
	return status;
}

uint32_t smb_sess_setup(struct smb_req *r)
{
	struct smb_conn *c = r->c;
	struct smb_wire_session_setup_req q;
	struct smb_sess *s = r->sess;
	const uint8_t *tok;
	size_t tlen, count = 0;
	uint32_t status;
	uint16_t alg;
	bool raw, was_valid = false;

	if (smb_wire_session_setup_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (q.flags & SMB2_SESSION_FLAG_BINDING)
		return smb_sess_bind(r, &q);
	if (r->m.hdr.session_id == 0) {
		for (s = c->sessions; s; s = s->next)
			count++;
		if (count >= SMB_SESS_MAX_PER_CONN || !(s = calloc(1, sizeof(*s))))
			return STATUS_NO_MEMORY;
		s->id = ((uint64_t)c->key << 24) | ++c->next_sess;
		s->client_key = c->key;
		s->started = time(NULL);
		s->conn = c;
		memcpy(s->preauth, c->preauth, sizeof(s->preauth));
		s->next = c->sessions;
		c->sessions = s;
	} else if (!s || s->logged_off) {
		return STATUS_USER_SESSION_DELETED;
	} else if (s->state == SMB_SESS_VALID) {
		/* re-authentication: only by who holds the session's key (its
		 * channel's here; a request that is not signed with it changes
		 * nothing) */
		struct smb_crypto_ctx *cx;
		const uint8_t *key = smb_sess_signing_key(s, c, &alg, &cx);

		if (!r->encrypted && (!(r->m.hdr.flags & SMB2_FLAGS_SIGNED) ||
				      smb_crypto_ctx_verify(cx, alg, key, r->m.p, r->m.len) != AQ_OK))
			return STATUS_ACCESS_DENIED;
		was_valid = true;
	}
	r->sess = s;
	r->rsp_session = s->id;
	/* 3.1.1: the hash keys a new session; a re-authentication keeps its keys */
	if (c->dialect == SMB2_DIALECT_311 && !was_valid)
		smb_crypto_preauth_update(s->preauth, r->m.p, r->m.len);
	if (smb_sess_token(q.blob, q.blob_len, &tok, &tlen, &raw) != AQ_OK || tlen < 12) {
		status = STATUS_LOGON_FAILURE;
	} else if (smb_wire_get_u32(tok + 8) == 1) {
		s->auth.raw_ntlmssp = raw;
		s->reauth = was_valid;
		status = smb_sess_challenge(r, &s->auth, tok, tlen);
		if (status == STATUS_MORE_PROCESSING_REQUIRED && !s->reauth)
			s->state = SMB_SESS_NTLM_CHALLENGED; /* a re-authenticating session stays valid meanwhile */
	} else if (smb_wire_get_u32(tok + 8) == 3 && (was_valid ? s->reauth : s->state == SMB_SESS_NTLM_CHALLENGED)) {
		status = smb_sess_auth(r, s, tok, tlen);
	} else {
		status = STATUS_LOGON_FAILURE;
	}
	if (status == STATUS_SUCCESS && q.previous_session_id && q.previous_session_id != s->id && !was_valid)
		smb_durable_prev_session(r, q.previous_session_id); /* a session reconnect (smb_durable.c) */
	if (was_valid && status == STATUS_ACCESS_DENIED) {
		/* another user: refused, the session goes on as it was */
		smb_sess_drop_ntlm(s);
		s->reauth = false;
		r->sign_rsp = true;
		r->sign_sess = s;
	} else if (was_valid && status != STATUS_SUCCESS && status != STATUS_MORE_PROCESSING_REQUIRED) {
		/* a failed re-authentication ends the session (Samba, Windows):
		 * the failure is signed with its key, what follows is
		 * USER_SESSION_DELETED */
		smb_sess_end(c, s);
		r->sign_rsp = true;
		r->sign_sess = s;
	} else if (status != STATUS_SUCCESS && status != STATUS_MORE_PROCESSING_REQUIRED) {
		/* a failed logon ends the session (its id is not reused) */
		r->sess = NULL;
		smb_sess_free(c, s);
	}
	return status;
}

uint32_t smb_sess_logoff(struct smb_req *r)
{
	if (smb_wire_empty_req_decode(&r->m) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	smb_wire_empty_rsp_encode(r->out);
	/* its durable opens are kept for a reconnect (smb_durable.c); the
	 * others close now, so requests waiting on them are answered before
	 * the LOGOFF is (and signed while the session has its keys); the
	 * session is freed once its response is sent (it signs it) */
	smb_sess_end(r->c, r->sess);
	r->sign_rsp = true;
	r->sign_sess = r->sess;
	return STATUS_SUCCESS;
}
