/* smb_crypto: SMB 3.x key derivation, preauth hash, signing and transform
 * encryption over OpenSSL 3; see smb_crypto.h for the contract.
 *
 * The algorithms are fetched once for the process (smb_crypto_algs, under
 * pthread_once): OpenSSL 3 otherwise looks each up in its provider store,
 * under a lock, at every EVP_MAC_fetch and at every init with a static
 * EVP_aes_*() (an implicit fetch). A struct smb_crypto_ctx keeps its
 * contexts keyed; a message then costs an init with the nonce, or for the
 * MACs a reset to the key already set. Any failure drops the context it
 * used, so a context left half-way by an error is never used again. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_crypto.h"

#include <pthread.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "agent/smb/smb_wire.h"
#include "api/api_error.h"

/* The algorithms, fetched once; never freed (the process's life). */
struct smb_crypto_algs {
	EVP_MAC *hmac, *cmac;
	EVP_MD *sha512;
	EVP_CIPHER *aes128_ccm, *aes128_gcm, *aes256_ccm, *aes256_gcm;
};

static struct smb_crypto_algs smb_crypto_algs_v;
static bool smb_crypto_algs_ok;
static pthread_once_t smb_crypto_algs_once = PTHREAD_ONCE_INIT;

static void smb_crypto_algs_fetch(void)
{
	struct smb_crypto_algs *a = &smb_crypto_algs_v;

	a->hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	a->cmac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	a->sha512 = EVP_MD_fetch(NULL, "SHA512", NULL);
	a->aes128_ccm = EVP_CIPHER_fetch(NULL, "AES-128-CCM", NULL);
	a->aes128_gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	a->aes256_ccm = EVP_CIPHER_fetch(NULL, "AES-256-CCM", NULL);
	a->aes256_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	smb_crypto_algs_ok = a->hmac && a->cmac && a->sha512 && a->aes128_ccm && a->aes128_gcm && a->aes256_ccm &&
			     a->aes256_gcm;
}

/* The fetched algorithms, or NULL when OpenSSL has not got them all. */
static const struct smb_crypto_algs *smb_crypto_algs(void)
{
	if (pthread_once(&smb_crypto_algs_once, smb_crypto_algs_fetch) != 0 || !smb_crypto_algs_ok)
		return NULL;
	return &smb_crypto_algs_v;
}

int smb_crypto_kdf(const uint8_t *ki, size_t ki_len, const void *label, size_t label_len, const void *context,
		   size_t context_len, uint8_t *out, size_t out_len)
{
	/* i (4) || Label || 0x00 || Context || L (4), all big-endian counters */
	uint8_t in[4 + 64 + 1 + SMB_CRYPTO_PREAUTH_LEN + 4], mac[32];
	uint32_t bits = (uint32_t)out_len * 8;
	unsigned int mlen = 0;
	size_t n = 0;

	if ((out_len != 16 && out_len != 32) || label_len > 64 || context_len > SMB_CRYPTO_PREAUTH_LEN)
		return AQ_EINVAL;
	memcpy(in, "\0\0\0\1", 4);
	n = 4;
	memcpy(in + n, label, label_len);
	n += label_len;
	in[n++] = 0;
	memcpy(in + n, context, context_len);
	n += context_len;
	in[n++] = (uint8_t)(bits >> 24);
	in[n++] = (uint8_t)(bits >> 16);
	in[n++] = (uint8_t)(bits >> 8);
	in[n++] = (uint8_t)bits;
	/* One HMAC-SHA256 block gives 32 bytes: enough for both lengths. */
	if (!HMAC(EVP_sha256(), ki, (int)ki_len, in, n, mac, &mlen) || mlen != 32)
		return AQ_EINTERNAL;
	memcpy(out, mac, out_len);
	OPENSSL_cleanse(mac, sizeof(mac));
	return AQ_OK;
}

#define SMB_CRYPTO_L(s) s, sizeof(s) /* a label with its NUL, as MS-SMB2 counts it */

int smb_crypto_derive(uint16_t dialect, uint16_t cipher, const uint8_t *session_key, size_t key_len,
		      const uint8_t preauth[SMB_CRYPTO_PREAUTH_LEN], struct smb_crypto_keys *k)
{
	uint8_t key16[16] = { 0 }, full[32] = { 0 };
	size_t clen = cipher == SMB2_ENCRYPTION_AES256_CCM || cipher == SMB2_ENCRYPTION_AES256_GCM ? 32 : 16;
	const uint8_t *ckey = key16;
	size_t ckey_len = 16;
	int rc = AQ_OK;

	memset(k, 0, sizeof(*k));
	if (key_len == 0 || (dialect >= SMB2_DIALECT_300 &&
			     (cipher < SMB2_ENCRYPTION_AES128_CCM || cipher > SMB2_ENCRYPTION_AES256_GCM)))
		return AQ_EINVAL;
	memcpy(key16, session_key, key_len < 16 ? key_len : 16);
	memcpy(full, session_key, key_len < 32 ? key_len : 32);
	if (clen == 32) {
		ckey = full;
		ckey_len = key_len < 32 ? key_len : 32;
	}
	k->cipher_key_len = clen;
	switch (dialect) {
	case SMB2_DIALECT_202:
	case SMB2_DIALECT_210:
		memcpy(k->signing, key16, 16);
		break;
	case SMB2_DIALECT_300:
	case SMB2_DIALECT_302:
		if (clen != 16) {
			rc = AQ_EINVAL;
			break;
		}
		/* the first failure stops the chain; rc carries it */
		(void)((rc = smb_crypto_kdf(key16, 16, SMB_CRYPTO_L("SMB2AESCMAC"), SMB_CRYPTO_L("SmbSign"), k->signing,
					    16)) ||
		       (rc = smb_crypto_kdf(key16, 16, SMB_CRYPTO_L("SMB2AESCCM"), SMB_CRYPTO_L("ServerOut"), k->enc, 16)) ||
		       (rc = smb_crypto_kdf(key16, 16, SMB_CRYPTO_L("SMB2AESCCM"), SMB_CRYPTO_L("ServerIn "), k->dec, 16)) ||
		       (rc = smb_crypto_kdf(key16, 16, SMB_CRYPTO_L("SMB2APP"), SMB_CRYPTO_L("SmbRpc"), k->app, 16)));
		break;
	case SMB2_DIALECT_311:
		if (!preauth) {
			rc = AQ_EINVAL;
			break;
		}
		(void)((rc = smb_crypto_kdf(key16, 16, SMB_CRYPTO_L("SMBSigningKey"), preauth, SMB_CRYPTO_PREAUTH_LEN,
					    k->signing, 16)) ||
		       (rc = smb_crypto_kdf(ckey, ckey_len, SMB_CRYPTO_L("SMBS2CCipherKey"), preauth,
					    SMB_CRYPTO_PREAUTH_LEN, k->enc, clen)) ||
		       (rc = smb_crypto_kdf(ckey, ckey_len, SMB_CRYPTO_L("SMBC2SCipherKey"), preauth,
					    SMB_CRYPTO_PREAUTH_LEN, k->dec, clen)) ||
		       (rc = smb_crypto_kdf(key16, 16, SMB_CRYPTO_L("SMBAppKey"), preauth, SMB_CRYPTO_PREAUTH_LEN,
					    k->app, 16)));
		break;
	default:
		rc = AQ_EINVAL;
	}
	OPENSSL_cleanse(key16, sizeof(key16));
	OPENSSL_cleanse(full, sizeof(full));
	if (rc)
		OPENSSL_cleanse(k, sizeof(*k));
	return rc;
}

void smb_crypto_preauth_init(uint8_t h[SMB_CRYPTO_PREAUTH_LEN])
{
	memset(h, 0, SMB_CRYPTO_PREAUTH_LEN);
}

int smb_crypto_preauth_update(uint8_t h[SMB_CRYPTO_PREAUTH_LEN], const uint8_t *msg, size_t len)
{
	const struct smb_crypto_algs *a = smb_crypto_algs();
	EVP_MD_CTX *ctx = a ? EVP_MD_CTX_new() : NULL;
	unsigned int n = 0;
	int rc = AQ_EINTERNAL;

	if (ctx && EVP_DigestInit_ex2(ctx, a->sha512, NULL) && EVP_DigestUpdate(ctx, h, SMB_CRYPTO_PREAUTH_LEN) &&
	    EVP_DigestUpdate(ctx, msg, len) && EVP_DigestFinal_ex(ctx, h, &n) && n == SMB_CRYPTO_PREAUTH_LEN)
		rc = AQ_OK;
	EVP_MD_CTX_free(ctx);
	return rc;
}

void smb_crypto_ctx_cleanup(struct smb_crypto_ctx *x)
{
	if (!x)
		return;
	EVP_MAC_CTX_free(x->mac);
	EVP_CIPHER_CTX_free(x->gmac);
	EVP_CIPHER_CTX_free(x->aead[0]);
	EVP_CIPHER_CTX_free(x->aead[1]);
	OPENSSL_cleanse(x, sizeof(*x));
}

static void smb_crypto_mac_drop(struct smb_crypto_ctx *x)
{
	EVP_MAC_CTX_free(x->mac);
	x->mac = NULL;
	x->mac_alg = 0;
	OPENSSL_cleanse(x->mac_key, sizeof(x->mac_key));
}

/* HMAC-SHA256 or AES-128-CMAC over the header with a zero signature, then
 * the rest of the message. x->mac is reset to its key when it holds alg
 * and key already, else made or keyed anew. */
static int smb_crypto_mac(struct smb_crypto_ctx *x, uint16_t alg, const uint8_t key[16], const uint8_t *hdr,
			  const uint8_t *rest, size_t rest_len, uint8_t sig[SMB_CRYPTO_SIG_LEN])
{
	const struct smb_crypto_algs *a = smb_crypto_algs();
	OSSL_PARAM params[2];
	char cmac_cipher[] = "AES-128-CBC", hmac_digest[] = "SHA256";
	uint8_t out[32];
	size_t n = 0;
	int rc = AQ_EINTERNAL;

	if (!a)
		goto out;
	if (x->mac && x->mac_alg == alg && !CRYPTO_memcmp(x->mac_key, key, 16)) {
		if (!EVP_MAC_init(x->mac, NULL, 0, NULL))
			goto out;
	} else {
		if (x->mac && x->mac_alg != alg)
			smb_crypto_mac_drop(x);
		if (!x->mac && !(x->mac = EVP_MAC_CTX_new(alg == SMB2_SIGNING_AES_CMAC ? a->cmac : a->hmac)))
			goto out;
		if (alg == SMB2_SIGNING_AES_CMAC)
			params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cmac_cipher, 0);
		else
			params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, hmac_digest, 0);
		params[1] = OSSL_PARAM_construct_end();
		x->mac_alg = alg;
		memcpy(x->mac_key, key, 16);
		if (!EVP_MAC_init(x->mac, key, 16, params))
			goto out;
	}
	if (EVP_MAC_update(x->mac, hdr, SMB2_HDR_LEN) && EVP_MAC_update(x->mac, rest, rest_len) &&
	    EVP_MAC_final(x->mac, out, &n, sizeof(out)) && n >= 16) {
		memcpy(sig, out, SMB_CRYPTO_SIG_LEN);
		rc = AQ_OK;
	}
out:
	if (rc != AQ_OK)
		smb_crypto_mac_drop(x);
	OPENSSL_cleanse(out, sizeof(out));
	return rc;
}

static void smb_crypto_gmac_drop(struct smb_crypto_ctx *x)
{
	EVP_CIPHER_CTX_free(x->gmac);
	x->gmac = NULL;
	OPENSSL_cleanse(x->gmac_key, sizeof(x->gmac_key));
}

/* AES-128-GMAC (RFC 4543): GCM with the message as AAD and nothing to
 * encrypt; nonce = MessageId, then the role bits of 3.1.4.1. x->gmac keeps
 * the key; each message sets its nonce. */
static int smb_crypto_gmac(struct smb_crypto_ctx *x, const uint8_t key[16], const uint8_t *hdr,
			   const uint8_t *rest, size_t rest_len, uint8_t sig[SMB_CRYPTO_SIG_LEN])
{
	const struct smb_crypto_algs *a = smb_crypto_algs();
	uint8_t nonce[12];
	uint32_t flags = smb_wire_get_u32(hdr + 16), role = 0;
	int n = 0, rc = AQ_EINTERNAL;

	memcpy(nonce, hdr + 24, 8);
	if (flags & SMB2_FLAGS_SERVER_TO_REDIR)
		role |= 1;
	if (smb_wire_get_u16(hdr + 12) == SMB2_CANCEL && !(flags & SMB2_FLAGS_SERVER_TO_REDIR))
		role |= 2;
	nonce[8] = (uint8_t)role;
	nonce[9] = nonce[10] = nonce[11] = 0;
	if (!a)
		goto out;
	if (!x->gmac || CRYPTO_memcmp(x->gmac_key, key, 16)) {
		if (!x->gmac && !(x->gmac = EVP_CIPHER_CTX_new()))
			goto out;
		memcpy(x->gmac_key, key, 16);
		if (!EVP_EncryptInit_ex2(x->gmac, a->aes128_gcm, NULL, NULL, NULL) ||
		    !EVP_CIPHER_CTX_ctrl(x->gmac, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) ||
		    !EVP_EncryptInit_ex2(x->gmac, NULL, key, NULL, NULL))
			goto out;
	}
	if (EVP_EncryptInit_ex2(x->gmac, NULL, NULL, nonce, NULL) &&
	    EVP_EncryptUpdate(x->gmac, NULL, &n, hdr, SMB2_HDR_LEN) &&
	    (rest_len == 0 || EVP_EncryptUpdate(x->gmac, NULL, &n, rest, (int)rest_len)) &&
	    EVP_EncryptFinal_ex(x->gmac, NULL, &n) && EVP_CIPHER_CTX_ctrl(x->gmac, EVP_CTRL_GCM_GET_TAG, 16, sig))
		rc = AQ_OK;
out:
	if (rc != AQ_OK)
		smb_crypto_gmac_drop(x);
	return rc;
}

int smb_crypto_ctx_sign(struct smb_crypto_ctx *x, uint16_t alg, const uint8_t key[16], const uint8_t *msg,
			size_t len, uint8_t sig[SMB_CRYPTO_SIG_LEN])
{
	uint8_t hdr[SMB2_HDR_LEN];

	if (len < SMB2_HDR_LEN || len > INT32_MAX)
		return AQ_EINVAL;
	memcpy(hdr, msg, SMB2_HDR_LEN);
	memset(hdr + SMB2_SIG_OFF, 0, SMB_CRYPTO_SIG_LEN);
	switch (alg) {
	case SMB2_SIGNING_HMAC_SHA256:
	case SMB2_SIGNING_AES_CMAC:
		return smb_crypto_mac(x, alg, key, hdr, msg + SMB2_HDR_LEN, len - SMB2_HDR_LEN, sig);
	case SMB2_SIGNING_AES_GMAC:
		return smb_crypto_gmac(x, key, hdr, msg + SMB2_HDR_LEN, len - SMB2_HDR_LEN, sig);
	default:
		return AQ_EINVAL;
	}
}

int smb_crypto_ctx_verify(struct smb_crypto_ctx *x, uint16_t alg, const uint8_t key[16], const uint8_t *msg,
			  size_t len)
{
	uint8_t sig[SMB_CRYPTO_SIG_LEN];
	int rc = smb_crypto_ctx_sign(x, alg, key, msg, len, sig);

	if (rc)
		return rc;
	return CRYPTO_memcmp(sig, msg + SMB2_SIG_OFF, SMB_CRYPTO_SIG_LEN) ? AQ_EACCES : AQ_OK;
}

int smb_crypto_sign(uint16_t alg, const uint8_t key[16], const uint8_t *msg, size_t len,
		    uint8_t sig[SMB_CRYPTO_SIG_LEN])
{
	struct smb_crypto_ctx x = { 0 };
	int rc = smb_crypto_ctx_sign(&x, alg, key, msg, len, sig);

	smb_crypto_ctx_cleanup(&x);
	return rc;
}

int smb_crypto_verify(uint16_t alg, const uint8_t key[16], const uint8_t *msg, size_t len)
{
	struct smb_crypto_ctx x = { 0 };
	int rc = smb_crypto_ctx_verify(&x, alg, key, msg, len);

	smb_crypto_ctx_cleanup(&x);
	return rc;
}

static bool smb_crypto_is_ccm(uint16_t cipher)
{
	return cipher == SMB2_ENCRYPTION_AES128_CCM || cipher == SMB2_ENCRYPTION_AES256_CCM;
}

static const EVP_CIPHER *smb_crypto_cipher(const struct smb_crypto_algs *a, uint16_t cipher)
{
	switch (cipher) {
	case SMB2_ENCRYPTION_AES128_CCM: return a->aes128_ccm;
	case SMB2_ENCRYPTION_AES128_GCM: return a->aes128_gcm;
	case SMB2_ENCRYPTION_AES256_CCM: return a->aes256_ccm;
	case SMB2_ENCRYPTION_AES256_GCM: return a->aes256_gcm;
	default: return NULL;
	}
}

void smb_crypto_nonce(uint16_t cipher, uint64_t counter, const uint8_t fixed[4], uint8_t nonce[16])
{
	size_t i, n = smb_crypto_is_ccm(cipher) ? 11 : 12;

	memset(nonce, 0, 16);
	for (i = 0; i < 8; i++)
		nonce[i] = (uint8_t)(counter >> (8 * i));
	memcpy(nonce + 8, fixed, n - 8);
}

static void smb_crypto_aead_drop(struct smb_crypto_ctx *x, int enc)
{
	EVP_CIPHER_CTX_free(x->aead[enc]);
	x->aead[enc] = NULL;
	x->aead_cipher[enc] = 0;
	OPENSSL_cleanse(x->aead_key[enc], sizeof(x->aead_key[enc]));
}

/* x->aead[enc] keyed with cipher and key: kept when it is, else made or
 * keyed anew (nonce length and, for CCM, tag length set first). */
static int smb_crypto_aead_key(struct smb_crypto_ctx *x, const EVP_CIPHER *c, uint16_t cipher, const uint8_t *key,
			       int enc)
{
	bool ccm = smb_crypto_is_ccm(cipher);
	size_t klen = (size_t)EVP_CIPHER_get_key_length(c);
	EVP_CIPHER_CTX *ctx;

	if (x->aead[enc] && x->aead_cipher[enc] == cipher && !CRYPTO_memcmp(x->aead_key[enc], key, klen))
		return AQ_OK;
	if (!x->aead[enc] && !(x->aead[enc] = EVP_CIPHER_CTX_new()))
		return AQ_EINTERNAL;
	ctx = x->aead[enc];
	x->aead_cipher[enc] = cipher;
	memcpy(x->aead_key[enc], key, klen);
	if (!EVP_CipherInit_ex2(ctx, c, NULL, NULL, enc, NULL) ||
	    !EVP_CIPHER_CTX_ctrl(ctx, ccm ? EVP_CTRL_CCM_SET_IVLEN : EVP_CTRL_GCM_SET_IVLEN, ccm ? 11 : 12, NULL) ||
	    (ccm && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_CCM_SET_TAG, 16, NULL)) ||
	    !EVP_CipherInit_ex2(ctx, NULL, key, NULL, enc, NULL))
		return AQ_EINTERNAL;
	return AQ_OK;
}

/* One AEAD pass: enc 1 encrypts and writes the tag, enc 0 checks tag. */
static int smb_crypto_aead(struct smb_crypto_ctx *x, uint16_t cipher, const uint8_t *key, const uint8_t *aad,
			   const uint8_t *nonce, const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag, int enc)
{
	const struct smb_crypto_algs *a = smb_crypto_algs();
	const EVP_CIPHER *c = a ? smb_crypto_cipher(a, cipher) : NULL;
	EVP_CIPHER_CTX *ctx = NULL;
	bool ccm = smb_crypto_is_ccm(cipher);
	int n = 0, rc = AQ_EINTERNAL;

	if (!a)
		return AQ_EINTERNAL;
	if (!c || len > INT32_MAX)
		return AQ_EINVAL;
	if ((rc = smb_crypto_aead_key(x, c, cipher, key, enc)) != AQ_OK)
		goto out;
	rc = AQ_EINTERNAL;
	ctx = x->aead[enc];
	if (!EVP_CipherInit_ex2(ctx, NULL, NULL, nonce, enc, NULL))
		goto out;
	if (ccm && !enc && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_CCM_SET_TAG, 16, tag))
		goto out;
	/* CCM needs the total length before the AAD. */
	if (ccm && !EVP_CipherUpdate(ctx, NULL, &n, NULL, (int)len))
		goto out;
	if (!EVP_CipherUpdate(ctx, NULL, &n, aad, SMB2_TRANSFORM_AAD_LEN))
		goto out;
	if (!enc && !ccm && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag))
		goto out;
	if (len && !EVP_CipherUpdate(ctx, out, &n, in, (int)len)) {
		rc = enc ? AQ_EINTERNAL : AQ_EACCES; /* CCM checks the tag here */
		goto out;
	}
	if (!ccm && !EVP_CipherFinal_ex(ctx, out + len, &n)) {
		rc = enc ? AQ_EINTERNAL : AQ_EACCES;
		goto out;
	}
	if (enc && !EVP_CIPHER_CTX_ctrl(ctx, ccm ? EVP_CTRL_CCM_GET_TAG : EVP_CTRL_GCM_GET_TAG, 16, tag))
		goto out;
	rc = AQ_OK;
out:
	if (rc != AQ_OK)
		smb_crypto_aead_drop(x, enc);
	if (rc == AQ_EACCES)
		OPENSSL_cleanse(out, len);
	return rc;
}

int smb_crypto_ctx_encrypt(struct smb_crypto_ctx *x, uint16_t cipher, const uint8_t *key, uint8_t hdr[52],
			   const uint8_t *plain, size_t len, uint8_t *out)
{
	return smb_crypto_aead(x, cipher, key, hdr + SMB2_TRANSFORM_AAD_OFF, hdr + 20, plain, len, out, hdr + 4, 1);
}

int smb_crypto_ctx_decrypt(struct smb_crypto_ctx *x, uint16_t cipher, const uint8_t *key, const uint8_t *frame,
			   size_t len, uint8_t *out)
{
	uint8_t tag[16];

	/* nothing after the header is no message; and CCM checks its tag only
	 * over data: an empty one would pass with any tag */
	if (len <= SMB2_TRANSFORM_LEN)
		return AQ_EINVAL;
	memcpy(tag, frame + 4, 16);
	return smb_crypto_aead(x, cipher, key, frame + SMB2_TRANSFORM_AAD_OFF, frame + 20, frame + SMB2_TRANSFORM_LEN,
			       len - SMB2_TRANSFORM_LEN, out, tag, 0);
}

int smb_crypto_encrypt(uint16_t cipher, const uint8_t *key, uint8_t hdr[52], const uint8_t *plain, size_t len,
		       uint8_t *out)
{
	struct smb_crypto_ctx x = { 0 };
	int rc = smb_crypto_ctx_encrypt(&x, cipher, key, hdr, plain, len, out);

	smb_crypto_ctx_cleanup(&x);
	return rc;
}

int smb_crypto_decrypt(uint16_t cipher, const uint8_t *key, const uint8_t *frame, size_t len, uint8_t *out)
{
	struct smb_crypto_ctx x = { 0 };
	int rc = smb_crypto_ctx_decrypt(&x, cipher, key, frame, len, out);

	smb_crypto_ctx_cleanup(&x);
	return rc;
}
