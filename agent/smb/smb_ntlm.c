/* smb_ntlm: NTLMv2 server side (MS-NLMP); see smb_ntlm.h for the contract.
 * MD4 (for the NT hash) and RC4 (for the key exchange) are here, small and
 * local, because OpenSSL 3 keeps both in its legacy provider, which a
 * distribution may not ship or load; HMAC-MD5 comes from OpenSSL. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_ntlm.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "api/api_error.h"

static const uint8_t smb_ntlm_sig[8] = { 'N', 'T', 'L', 'M', 'S', 'S', 'P', 0 };

/* ---- MD4 (RFC 1320) and RC4 ---------------------------------------------- */

#define SMB_NTLM_ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void smb_ntlm_md4_block(uint32_t st[4], const uint8_t blk[64])
{
	static const uint8_t s1[4] = { 3, 7, 11, 19 }, s2[4] = { 3, 5, 9, 13 }, s3[4] = { 3, 9, 11, 15 };
	static const uint8_t o3[16] = { 0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15 };
	uint32_t x[16], a = st[0], b = st[1], c = st[2], d = st[3], t;
	int i;

	for (i = 0; i < 16; i++)
		x[i] = smb_wire_get_u32(blk + 4 * i);
	for (i = 0; i < 16; i++) {
		t = a + ((b & c) | (~b & d)) + x[i];
		a = d, d = c, c = b, b = SMB_NTLM_ROTL(t, s1[i & 3]);
	}
	for (i = 0; i < 16; i++) {
		t = a + ((b & c) | (b & d) | (c & d)) + x[(i & 3) * 4 + (i >> 2)] + 0x5A827999u;
		a = d, d = c, c = b, b = SMB_NTLM_ROTL(t, s2[i & 3]);
	}
	for (i = 0; i < 16; i++) {
		t = a + (b ^ c ^ d) + x[o3[i]] + 0x6ED9EBA1u;
		a = d, d = c, c = b, b = SMB_NTLM_ROTL(t, s3[i & 3]);
	}
	st[0] += a, st[1] += b, st[2] += c, st[3] += d;
}

/* MD4 of len (< 2^29) bytes. */
static void smb_ntlm_md4(const uint8_t *p, size_t len, uint8_t out[16])
{
	uint32_t st[4] = { 0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u };
	uint8_t tail[128] = { 0 };
	uint64_t bits = (uint64_t)len * 8;
	size_t i, rest, tl;

	for (i = 0; i + 64 <= len; i += 64)
		smb_ntlm_md4_block(st, p + i);
	rest = len - i;
	memcpy(tail, p + i, rest);
	tail[rest] = 0x80;
	tl = rest < 56 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[tl - 8 + i] = (uint8_t)(bits >> (8 * i));
	smb_ntlm_md4_block(st, tail);
	if (tl == 128)
		smb_ntlm_md4_block(st, tail + 64);
	for (i = 0; i < 4; i++) {
		out[4 * i] = (uint8_t)st[i];
		out[4 * i + 1] = (uint8_t)(st[i] >> 8);
		out[4 * i + 2] = (uint8_t)(st[i] >> 16);
		out[4 * i + 3] = (uint8_t)(st[i] >> 24);
	}
	OPENSSL_cleanse(tail, sizeof(tail));
}

/* RC4 of 16 bytes with a 16-byte key: the NTLM key exchange. */
static void smb_ntlm_rc4(const uint8_t key[16], const uint8_t in[16], uint8_t out[16])
{
	uint8_t s[256], t;
	unsigned i, j = 0, k;

	for (i = 0; i < 256; i++)
		s[i] = (uint8_t)i;
	for (i = 0; i < 256; i++) {
		j = (j + s[i] + key[i & 15]) & 0xff;
		t = s[i], s[i] = s[j], s[j] = t;
	}
	for (k = 0, i = 0, j = 0; k < 16; k++) {
		i = (i + 1) & 0xff;
		j = (j + s[i]) & 0xff;
		t = s[i], s[i] = s[j], s[j] = t;
		out[k] = in[k] ^ s[(s[i] + s[j]) & 0xff];
	}
	OPENSSL_cleanse(s, sizeof(s));
}

/* HMAC-MD5 over up to three pieces. */
static int smb_ntlm_hmac_md5(const uint8_t key[16], const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
			     const uint8_t *c, size_t clen, uint8_t out[16])
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	char digest[] = "MD5";
	OSSL_PARAM params[2] = { OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end() };
	size_t n = 0;
	int rc = AQ_EINTERNAL;

	if (ctx && EVP_MAC_init(ctx, key, 16, params) && (!alen || EVP_MAC_update(ctx, a, alen)) &&
	    (!blen || EVP_MAC_update(ctx, b, blen)) && (!clen || EVP_MAC_update(ctx, c, clen)) &&
	    EVP_MAC_final(ctx, out, &n, 16) && n == 16)
		rc = AQ_OK;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return rc;
}

/* ---- hashes ---------------------------------------------------------------- */

/* A password's UTF-16LE form (256 characters). */
#define SMB_NTLM_PASSWORD_UTF16_MAX 512u

int smb_ntlm_nt_hash(const char *password, uint8_t hash[16])
{
	struct ut_buf b;
	int rc;

	/* Allocate the whole cap at once, so that no realloc leaves a copy of
	 * the password behind uncleansed. */
	ut_buf_init(&b, SMB_NTLM_PASSWORD_UTF16_MAX);
	if (!ut_buf_put_zero(&b, SMB_NTLM_PASSWORD_UTF16_MAX))
		return ut_buf_err(&b);
	ut_buf_rewind(&b, 0);
	rc = smb_wire_put_utf16(&b, password, strlen(password), NULL);
	if (rc == AQ_OK)
		smb_ntlm_md4(ut_buf_bytes(&b), ut_buf_len(&b), hash);
	OPENSSL_cleanse(b.p, b.cap);
	ut_buf_cleanup(&b);
	return rc;
}

/* Upper() of one UTF-16 code unit: ASCII and Latin-1 letters. */
static uint16_t smb_ntlm_upper(uint16_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 0xE0 && c <= 0xFE && c != 0xF7))
		return (uint16_t)(c - 0x20);
	if (c == 0xFF)
		return 0x178;
	return c;
}

int smb_ntlm_ntowfv2(const uint8_t nt_hash[16], const uint8_t *user, size_t user_len, const uint8_t *domain,
		     size_t domain_len, uint8_t out[16])
{
	uint8_t up[SMB_NTLM_NAME_MAX];
	size_t i;
	int rc;

	if (user_len & 1 || domain_len & 1)
		return AQ_EINVAL;
	if (user_len > sizeof(up) || domain_len > SMB_NTLM_NAME_MAX)
		return AQ_ETOOBIG;
	for (i = 0; i < user_len; i += 2) {
		uint16_t c = smb_ntlm_upper(smb_wire_get_u16(user + i));

		up[i] = (uint8_t)c;
		up[i + 1] = (uint8_t)(c >> 8);
	}
	rc = smb_ntlm_hmac_md5(nt_hash, up, user_len, domain, domain_len, NULL, 0, out);
	OPENSSL_cleanse(up, sizeof(up));
	return rc;
}

/* ---- messages ---------------------------------------------------------------- */

/* Signature and MessageType. */
static int smb_ntlm_head(struct smb_wire_cur *c, uint32_t type)
{
	const uint8_t *sig = smb_wire_bytes(c, 8);
	uint32_t t = smb_wire_u32(c);

	if (c->err || memcmp(sig, smb_ntlm_sig, 8) || t != type)
		return AQ_EINVAL;
	return AQ_OK;
}

int smb_ntlm_negotiate_decode(const uint8_t *msg, size_t len, uint32_t *flags)
{
	struct smb_wire_cur c;
	int rc;

	*flags = 0;
	if (len > SMB_NTLM_MSG_MAX)
		return AQ_ETOOBIG;
	smb_wire_cur_init(&c, msg, len);
	if ((rc = smb_ntlm_head(&c, 1)) != AQ_OK)
		return rc;
	*flags = smb_wire_u32(&c);
	/* DomainNameFields and WorkstationFields are not used by a server. */
	return c.err;
}

int smb_ntlm_answer_flags(uint32_t client, uint32_t *flags)
{
	static const uint32_t ours = NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN |
				     NTLMSSP_NEGOTIATE_SEAL | NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN |
				     NTLMSSP_NEGOTIATE_EXTENDED_SESSIONSECURITY | NTLMSSP_NEGOTIATE_VERSION |
				     NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_KEY_EXCH | NTLMSSP_NEGOTIATE_56;

	*flags = 0;
	if (!(client & NTLMSSP_NEGOTIATE_UNICODE) || !(client & NTLMSSP_NEGOTIATE_NTLM))
		return AQ_EINVAL;
	*flags = (client & ours) | NTLMSSP_NEGOTIATE_TARGET_INFO | NTLMSSP_TARGET_TYPE_SERVER;
	return AQ_OK;
}

/* One AV pair of a UTF-8 name; the length is patched once known. */
static int smb_ntlm_av_name(struct ut_buf *b, uint16_t id, const char *name)
{
	size_t at, n = 0;
	int rc;

	if (!name)
		return AQ_OK;
	smb_wire_put_u16(b, id);
	at = b->len;
	smb_wire_put_u16(b, 0);
	if ((rc = smb_wire_put_utf16(b, name, strlen(name), &n)) != AQ_OK)
		return rc;
	if (n > SMB_NTLM_NAME_MAX)
		return AQ_ETOOBIG;
	ut_buf_set_le16(b, at, (uint16_t)n);
	return AQ_OK;
}

int smb_ntlm_challenge_encode(struct ut_buf *b, const struct smb_ntlm_challenge *c)
{
	size_t base = b->len, tn = 0, ti_at, ti_len;
	int rc;

	smb_wire_put_bytes(b, smb_ntlm_sig, 8);
	smb_wire_put_u32(b, 2);
	ut_buf_put_zero(b, 8); /* TargetNameFields */
	smb_wire_put_u32(b, c->flags);
	smb_wire_put_bytes(b, c->challenge, 8);
	ut_buf_put_zero(b, 8);  /* Reserved */
	ut_buf_put_zero(b, 8);  /* TargetInfoFields */
	if (c->flags & NTLMSSP_NEGOTIATE_VERSION)
		smb_wire_put_bytes(b, c->version, 8);
	else
		ut_buf_put_zero(b, 8);
	if (b->err)
		return b->err;
	/* TargetName */
	ut_buf_set_le32(b, base + 16, (uint32_t)(b->len - base));
	if ((rc = smb_wire_put_utf16(b, c->target ? c->target : "", c->target ? strlen(c->target) : 0, &tn)))
		return rc;
	if (tn > SMB_NTLM_NAME_MAX)
		return AQ_ETOOBIG;
	ut_buf_set_le16(b, base + 12, (uint16_t)tn);
	ut_buf_set_le16(b, base + 14, (uint16_t)tn);
	/* TargetInfo */
	ti_at = b->len;
	if ((rc = smb_ntlm_av_name(b, MSV_AV_NB_DOMAIN_NAME, c->nb_domain)) ||
	    (rc = smb_ntlm_av_name(b, MSV_AV_NB_COMPUTER_NAME, c->nb_computer)) ||
	    (rc = smb_ntlm_av_name(b, MSV_AV_DNS_DOMAIN_NAME, c->dns_domain)) ||
	    (rc = smb_ntlm_av_name(b, MSV_AV_DNS_COMPUTER_NAME, c->dns_computer)))
		return rc;
	if (c->has_timestamp) {
		smb_wire_put_u16(b, MSV_AV_TIMESTAMP);
		smb_wire_put_u16(b, 8);
		smb_wire_put_u64(b, c->timestamp);
	}
	smb_wire_put_u32(b, 0); /* MsvAvEOL */
	if (b->err)
		return b->err;
	ti_len = b->len - ti_at;
	ut_buf_set_le16(b, base + 40, (uint16_t)ti_len);
	ut_buf_set_le16(b, base + 42, (uint16_t)ti_len);
	ut_buf_set_le32(b, base + 44, (uint32_t)(ti_at - base));
	return b->err;
}

/* A (Len, MaxLen, Offset) field; the payload must lie in the message and
 * not overlap the fixed part (fixed bytes). */
static void smb_ntlm_field(struct smb_wire_cur *c, const uint8_t *msg, size_t len, size_t fixed,
			   const uint8_t **p, size_t *n, size_t *min_off)
{
	uint16_t l = smb_wire_u16(c);
	uint32_t off;

	(void)smb_wire_u16(c);
	off = smb_wire_u32(c);
	*p = NULL;
	*n = 0;
	if (c->err || l == 0)
		return;
	if (off < fixed || off > len || l > len - off) {
		c->err = AQ_EINVAL;
		return;
	}
	*p = msg + off;
	*n = l;
	if (off < *min_off)
		*min_off = off;
}

int smb_ntlm_auth_decode(const uint8_t *msg, size_t len, struct smb_ntlm_auth *a)
{
	struct smb_wire_cur c;
	size_t min_off = len;
	int rc;

	memset(a, 0, sizeof(*a));
	if (len > SMB_NTLM_MSG_MAX)
		return AQ_ETOOBIG;
	smb_wire_cur_init(&c, msg, len);
	if ((rc = smb_ntlm_head(&c, 3)) != AQ_OK)
		return rc;
	/* The fixed part is 64 bytes (fields and flags) before the optional
	 * Version and MIC; payloads may start right after it. */
	smb_ntlm_field(&c, msg, len, 64, &a->lm, &a->lm_len, &min_off);
	smb_ntlm_field(&c, msg, len, 64, &a->nt, &a->nt_len, &min_off);
	smb_ntlm_field(&c, msg, len, 64, &a->domain, &a->domain_len, &min_off);
	smb_ntlm_field(&c, msg, len, 64, &a->user, &a->user_len, &min_off);
	smb_ntlm_field(&c, msg, len, 64, &a->workstation, &a->workstation_len, &min_off);
	smb_ntlm_field(&c, msg, len, 64, &a->enc_key, &a->enc_key_len, &min_off);
	a->flags = smb_wire_u32(&c);
	if (c.err)
		return AQ_EINVAL;
	if (a->domain_len & 1 || a->user_len & 1 || a->workstation_len & 1)
		return AQ_EINVAL;
	if (a->domain_len > SMB_NTLM_NAME_MAX || a->user_len > SMB_NTLM_NAME_MAX ||
	    a->workstation_len > SMB_NTLM_NAME_MAX)
		return AQ_ETOOBIG;
	/* Version (8) and MIC (16) exist when the payload leaves room. */
	if (min_off >= 88 && len >= 88) {
		a->has_mic = true;
		a->mic_off = 72;
	}
	return AQ_OK;
}

int smb_ntlm_av_find(const uint8_t *list, size_t len, uint16_t id, const uint8_t **val, size_t *vlen)
{
	struct smb_wire_cur c;
	const uint8_t *found = NULL;
	size_t found_len = 0;

	*val = NULL;
	*vlen = 0;
	smb_wire_cur_init(&c, list, len);
	/* Walk to MsvAvEOL even past a match: an unterminated list is bad. */
	for (;;) {
		uint16_t k = smb_wire_u16(&c), n = smb_wire_u16(&c);
		const uint8_t *v = smb_wire_bytes(&c, n);

		if (c.err)
			return AQ_EINVAL;
		if (k == MSV_AV_EOL)
			break;
		if (k == id && !found) {
			found = v;
			found_len = n;
		}
	}
	if (!found)
		return id == MSV_AV_EOL ? AQ_OK : AQ_ENOENT;
	*val = found;
	*vlen = found_len;
	return AQ_OK;
}

/* NTLMv2_CLIENT_CHALLENGE (2.2.2.7) after the 16-byte NTProofStr:
 * RespType 1, HiRespType 1, Reserved (6), TimeStamp (8), ChallengeFromClient
 * (8), Reserved (4), then the AV pairs. */
#define SMB_NTLM_BLOB_AV_OFF 28u

static int smb_ntlm_check_blob(const struct smb_ntlm_check *c, const uint8_t *blob, size_t blen, bool *mic_flag)
{
	const uint8_t *v;
	size_t vl;
	uint64_t ts;
	int rc;

	*mic_flag = false;
	if (blen < SMB_NTLM_BLOB_AV_OFF + 4 || blob[0] != 1 || blob[1] != 1)
		return AQ_EINVAL;
	rc = smb_ntlm_av_find(blob + SMB_NTLM_BLOB_AV_OFF, blen - SMB_NTLM_BLOB_AV_OFF, MSV_AV_FLAGS, &v, &vl);
	if (rc == AQ_OK && vl == 4)
		*mic_flag = (smb_wire_get_u32(v) & MSV_AV_FLAG_MIC_PRESENT) != 0;
	else if (rc != AQ_ENOENT && rc != AQ_OK)
		return rc;
	if (c->now == 0)
		return AQ_OK;
	/* The client's clock, or the one we sent it: MS-NLMP 3.2.5.1.2 has the
	 * client copy our MsvAvTimestamp; either must be recent. */
	ts = smb_wire_get_u64(blob + 8);
	if (ts > c->now ? ts - c->now > c->max_skew : c->now - ts > c->max_skew)
		return AQ_EACCES;
	return AQ_OK;
}

int smb_ntlm_auth_check(const struct smb_ntlm_check *c, const struct smb_ntlm_auth *a, uint8_t session_key[16])
{
	uint8_t key[16], proof[16], base[16], exported[16], mic[16];
	uint8_t *zmic = NULL;
	bool mic_flag = false;
	int rc;

	memset(session_key, 0, 16);
	/* anonymous, NTLMv1 / LM (24-byte responses), or too short for v2 */
	if (a->user_len == 0 || a->nt_len <= 16 + SMB_NTLM_BLOB_AV_OFF) {
		rc = AQ_EACCES;
		goto out;
	}
	if ((rc = smb_ntlm_check_blob(c, a->nt + 16, a->nt_len - 16, &mic_flag)) != AQ_OK)
		goto out;
	if ((rc = smb_ntlm_ntowfv2(c->nt_hash, a->user, a->user_len, a->domain, a->domain_len, key)) != AQ_OK)
		goto out;
	if ((rc = smb_ntlm_hmac_md5(key, c->server_challenge, 8, a->nt + 16, a->nt_len - 16, NULL, 0, proof)))
		goto out;
	if (CRYPTO_memcmp(proof, a->nt, 16)) {
		rc = AQ_EACCES;
		goto out;
	}
	/* NTLMv2: KeyExchangeKey = SessionBaseKey = HMAC-MD5(key, NTProofStr) */
	if ((rc = smb_ntlm_hmac_md5(key, proof, 16, NULL, 0, NULL, 0, base)) != AQ_OK)
		goto out;
	if (a->flags & NTLMSSP_NEGOTIATE_KEY_EXCH) {
		if (a->enc_key_len != 16) {
			rc = AQ_EINVAL;
			goto out;
		}
		smb_ntlm_rc4(base, a->enc_key, exported);
	} else {
		memcpy(exported, base, 16);
	}
	if (mic_flag && !a->has_mic) {
		rc = AQ_EINVAL;
		goto out;
	}
	if (mic_flag) {
		/* MIC = HMAC-MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE ||
		 * AUTHENTICATE with the MIC zeroed) */
		if (!(zmic = OPENSSL_malloc(c->authenticate_len))) {
			rc = AQ_ENOMEM;
			goto out;
		}
		memcpy(zmic, c->authenticate, c->authenticate_len);
		memset(zmic + a->mic_off, 0, 16);
		if ((rc = smb_ntlm_hmac_md5(exported, c->negotiate, c->negotiate_len, c->challenge, c->challenge_len,
					    zmic, c->authenticate_len, mic)) != AQ_OK)
			goto out;
		if (CRYPTO_memcmp(mic, c->authenticate + a->mic_off, 16)) {
			rc = AQ_EACCES;
			goto out;
		}
	}
	memcpy(session_key, exported, 16);
	rc = AQ_OK;
out:
	OPENSSL_free(zmic);
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(base, sizeof(base));
	OPENSSL_cleanse(exported, sizeof(exported));
	return rc;
}
