/* bkp_crypt: the vault's keys (HKDF-SHA256 from the caller's key), chunk
 * names (HMAC-SHA256 of the plaintext) and sealing (AES-256-GCM, a random
 * 96-bit nonce per object, the object's key as additional data).
 *
 * Sealed object: "AQB1" | nonce (12) | ciphertext | tag (16). The magic is
 * part of the additional data too. Random nonces are safe for well under 2^32
 * objects per key, which is far more chunks than one vault holds.
 */
#include "agent/bkp/bkp_internal.h"

#include <errno.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include "util/ut_hex.h"

#define BKP_HKDF_SALT "aquifer-bkp-v1"

static int bkp_hkdf(const uint8_t key[BKP_KEY_LEN], const char *info, uint8_t out[32])
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t n = 32;
	int rc = -EIO;

	if (!c)
		return -ENOMEM;
	if (EVP_PKEY_derive_init(c) <= 0 || EVP_PKEY_CTX_set_hkdf_md(c, EVP_sha256()) <= 0 ||
	    EVP_PKEY_CTX_set1_hkdf_salt(c, (const unsigned char *)BKP_HKDF_SALT, sizeof BKP_HKDF_SALT - 1) <= 0 ||
	    EVP_PKEY_CTX_set1_hkdf_key(c, key, BKP_KEY_LEN) <= 0 ||
	    EVP_PKEY_CTX_add1_hkdf_info(c, (const unsigned char *)info, (int)strlen(info)) <= 0 ||
	    EVP_PKEY_derive(c, out, &n) <= 0 || n != 32)
		goto out;
	rc = 0;
out:
	EVP_PKEY_CTX_free(c);
	return rc;
}

int bkp_keys_derive(const uint8_t key[BKP_KEY_LEN], struct bkp_keys *k)
{
	int rc;

	if ((rc = bkp_hkdf(key, "chunk name", k->id)) != 0 || (rc = bkp_hkdf(key, "chunk seal", k->chunk)) != 0 ||
	    (rc = bkp_hkdf(key, "manifest seal", k->meta)) != 0)
		return rc;
	return 0;
}

int bkp_chunk_id(const struct bkp_keys *k, const void *buf, size_t len, uint8_t id[BKP_ID_LEN])
{
	unsigned n = 0;

	if (!HMAC(EVP_sha256(), k->id, sizeof k->id, buf, len, id, &n) || n != BKP_ID_LEN)
		return -EIO;
	return 0;
}

void bkp_chunk_key(const uint8_t id[BKP_ID_LEN], char out[BKP_CHUNK_KEY_LEN + 1])
{
	char hex[2 * BKP_ID_LEN + 1];

	ut_hex_encode(id, BKP_ID_LEN, hex, sizeof hex);
	out[0] = 'c';
	out[1] = '/';
	out[2] = hex[0];
	out[3] = hex[1];
	out[4] = '/';
	memcpy(out + 5, hex, 2 * BKP_ID_LEN + 1);
}

/* The additional data: magic and the object's key. */
static int bkp_aad(EVP_CIPHER_CTX *c, const char *aad)
{
	int n = 0;

	return EVP_CipherUpdate(c, NULL, &n, (const unsigned char *)BKP_SEAL_MAGIC, 4) > 0 &&
	       EVP_CipherUpdate(c, NULL, &n, (const unsigned char *)aad, (int)strlen(aad)) > 0;
}

int bkp_seal(const uint8_t key[32], const char *aad, const void *pt, size_t len, uint8_t *out)
{
	EVP_CIPHER_CTX *c = NULL;
	uint8_t *nonce = out + 4, *ct = out + 4 + BKP_NONCE_LEN;
	int n = 0, f = 0, rc = -EIO;

	if (len > (size_t)BKP_MF_MAX)
		return -E2BIG;
	memcpy(out, BKP_SEAL_MAGIC, 4);
	if (RAND_bytes(nonce, BKP_NONCE_LEN) != 1)
		return -EIO;
	if (!(c = EVP_CIPHER_CTX_new()))
		return -ENOMEM;
	if (EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, nonce) <= 0 || !bkp_aad(c, aad) ||
	    EVP_EncryptUpdate(c, ct, &n, pt, (int)len) <= 0 || EVP_EncryptFinal_ex(c, ct + n, &f) <= 0 ||
	    (size_t)(n + f) != len || EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, BKP_TAG_LEN, ct + len) <= 0)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	return rc;
}

int bkp_open_sealed(const uint8_t key[32], const char *aad, const uint8_t *in, size_t len, uint8_t *out)
{
	EVP_CIPHER_CTX *c = NULL;
	uint8_t tag[BKP_TAG_LEN];
	size_t ctlen;
	int n = 0, f = 0, rc = -EBADMSG;

	if (len < BKP_SEAL_OVERHEAD || len - BKP_SEAL_OVERHEAD > (size_t)BKP_MF_MAX || memcmp(in, BKP_SEAL_MAGIC, 4) != 0)
		return -EBADMSG;
	ctlen = len - BKP_SEAL_OVERHEAD;
	memcpy(tag, in + len - BKP_TAG_LEN, BKP_TAG_LEN); /* the API takes a non-const tag */
	if (!(c = EVP_CIPHER_CTX_new()))
		return -ENOMEM;
	if (EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), NULL, key, in + 4) <= 0 || !bkp_aad(c, aad) ||
	    EVP_DecryptUpdate(c, out, &n, in + 4 + BKP_NONCE_LEN, (int)ctlen) <= 0 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, BKP_TAG_LEN, tag) <= 0 ||
	    EVP_DecryptFinal_ex(c, out + n, &f) <= 0)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	if (rc != 0 && ctlen > 0)
		memset(out, 0, ctlen); /* publish nothing that did not authenticate */
	return rc;
}
