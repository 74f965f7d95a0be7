/* smb_crypto: the cryptography of SMB 2.x and 3.x over OpenSSL (MS-SMB2
 * 3.1.4): the SP800-108 counter-mode KDF with HMAC-SHA256 and the keys a
 * session derives from its session key per dialect (3.0/3.0.2 fixed labels,
 * 3.1.1 with the preauth integrity hash), the SHA-512 preauth hash chain,
 * message signing (HMAC-SHA256 for 2.x, AES-128-CMAC for 3.x, AES-128-GMAC
 * when 3.1.1 negotiates it) and the transform header's encryption with
 * AES-128/256-CCM or -GCM.
 *
 * The one-shot functions are pure functions of their arguments, thread-safe.
 * A session keeps its OpenSSL contexts in a struct smb_crypto_ctx and signs
 * and seals through the smb_crypto_ctx_* forms (the same results), so that a
 * message costs an init with its nonce, not an allocation, a key schedule
 * and an algorithm look-up (the algorithms are fetched once per process).
 * Algorithm ids are the wire's (SMB2_SIGNING_*, SMB2_ENCRYPTION_*). Every
 * function returns AQ_OK, AQ_EINVAL (unknown algorithm or bad length),
 * AQ_EACCES (a signature or tag that does not verify) or AQ_EINTERNAL
 * (OpenSSL failed).
 */
#ifndef AQ_AGENT_SMB_CRYPTO_H
#define AQ_AGENT_SMB_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/types.h>

#define SMB_CRYPTO_PREAUTH_LEN 64u
#define SMB_CRYPTO_SIG_LEN 16u

/* SP800-108 KDF in counter mode, PRF HMAC-SHA256, r = 32, one or two
 * blocks: out_len is 16 or 32. label and context are passed with the
 * lengths MS-SMB2 gives (the labels' trailing NUL included). */
int smb_crypto_kdf(const uint8_t *ki, size_t ki_len, const void *label, size_t label_len, const void *context,
		   size_t context_len, uint8_t *out, size_t out_len);

/* A session's keys as the server uses them: enc encrypts what the server
 * sends, dec decrypts what the client sends. */
struct smb_crypto_keys {
	uint8_t signing[16];
	uint8_t enc[32];
	uint8_t dec[32];
	uint8_t app[16];
	size_t cipher_key_len; /* 16, or 32 for the AES-256 ciphers */
};

/* Derive k from the session key (key_len bytes; the first 16 bytes, zero
 * padded, are the SessionKey; the AES-256 ciphers use up to 32) for dialect
 * (SMB2_DIALECT_*). preauth is the session's preauth hash for 3.1.1 (NULL:
 * AQ_EINVAL) and ignored otherwise; cipher selects the cipher key length
 * (any 128-bit one for 3.0/3.0.2). For 2.x only k->signing is set (the session key). */
int smb_crypto_derive(uint16_t dialect, uint16_t cipher, const uint8_t *session_key, size_t key_len,
		      const uint8_t preauth[SMB_CRYPTO_PREAUTH_LEN], struct smb_crypto_keys *k);

/* The preauth integrity hash chain (3.3.5.4, 3.3.5.5): start at zeros,
 * then h = SHA-512(h || message) for each NEGOTIATE and SESSION_SETUP
 * request and response (whole SMB2 message, header included). */
void smb_crypto_preauth_init(uint8_t h[SMB_CRYPTO_PREAUTH_LEN]);
int smb_crypto_preauth_update(uint8_t h[SMB_CRYPTO_PREAUTH_LEN], const uint8_t *msg, size_t len);

/* The signature of one SMB2 message (header and body, padding included),
 * computed as if its signature field were zero; msg is not modified.
 * alg: SMB2_SIGNING_HMAC_SHA256 (2.x), _AES_CMAC, _AES_GMAC (nonce from the
 * header's MessageId, its SERVER_TO_REDIR flag and whether it is a CANCEL). */
int smb_crypto_sign(uint16_t alg, const uint8_t key[16], const uint8_t *msg, size_t len,
		    uint8_t sig[SMB_CRYPTO_SIG_LEN]);
/* AQ_OK if msg's signature field holds its signature, else AQ_EACCES. */
int smb_crypto_verify(uint16_t alg, const uint8_t key[16], const uint8_t *msg, size_t len);

/* The OpenSSL contexts of one signer and sealer (a session, a channel),
 * each made at its first use and kept keyed with the key it was last used
 * with (a copy here): a call with another key or algorithm re-keys it, so
 * the caller never has to say that a key changed. A failed call frees the
 * context it used. Zeroed storage (calloc, = { 0 }) is an empty one;
 * smb_crypto_ctx_cleanup frees the contexts and wipes the key copies, and
 * leaves x empty. Not locked: one thread at a time (the SMB server's loop). */
struct smb_crypto_ctx {
	EVP_MAC_CTX *mac;        /* HMAC-SHA256 or AES-128-CMAC signing */
	uint16_t mac_alg;
	uint8_t mac_key[16];
	EVP_CIPHER_CTX *gmac;    /* AES-128-GMAC signing */
	uint8_t gmac_key[16];
	EVP_CIPHER_CTX *aead[2]; /* [1] encrypts, [0] decrypts */
	uint16_t aead_cipher[2];
	uint8_t aead_key[2][32];
};
void smb_crypto_ctx_cleanup(struct smb_crypto_ctx *x);

/* smb_crypto_sign, _verify, _encrypt and _decrypt through x's contexts. */
int smb_crypto_ctx_sign(struct smb_crypto_ctx *x, uint16_t alg, const uint8_t key[16], const uint8_t *msg,
			size_t len, uint8_t sig[SMB_CRYPTO_SIG_LEN]);
int smb_crypto_ctx_verify(struct smb_crypto_ctx *x, uint16_t alg, const uint8_t key[16], const uint8_t *msg,
			  size_t len);
int smb_crypto_ctx_encrypt(struct smb_crypto_ctx *x, uint16_t cipher, const uint8_t *key, uint8_t hdr[52],
			   const uint8_t *plain, size_t len, uint8_t *out);
int smb_crypto_ctx_decrypt(struct smb_crypto_ctx *x, uint16_t cipher, const uint8_t *key, const uint8_t *frame,
			   size_t len, uint8_t *out);

/* A nonce that is never reused within a session: the 64-bit counter the
 * session keeps and 4 bytes fixed per session, in the 11 (CCM) or 12 (GCM)
 * bytes the cipher uses; the rest of the 16 is zero. */
void smb_crypto_nonce(uint16_t cipher, uint64_t counter, const uint8_t fixed[4], uint8_t nonce[16]);

/* Encrypt len bytes of plain into out (may be the same buffer); hdr is the
 * 52-byte transform header with Nonce, OriginalMessageSize (= len), Flags
 * and SessionId already written: its Signature is filled in. */
int smb_crypto_encrypt(uint16_t cipher, const uint8_t *key, uint8_t hdr[52], const uint8_t *plain, size_t len,
		       uint8_t *out);
/* Decrypt a whole transform frame (header and ciphertext, len bytes) into
 * out (len - 52 bytes; may be frame + 52). AQ_EACCES if the tag does not
 * verify; out then holds nothing usable. AQ_EINVAL for a frame of 52 bytes
 * or less (no message in it). */
int smb_crypto_decrypt(uint16_t cipher, const uint8_t *key, const uint8_t *frame, size_t len, uint8_t *out);

#endif
