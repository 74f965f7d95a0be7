/* test_smb_crypto: SMB 3.x key derivation, preauth hash, signing and
 * transform encryption (agent/smb/smb_crypto.c).
 *
 * Where the vectors come from:
 * - [ENC30] "Encryption in SMB 3.0: A protocol perspective", Microsoft Open
 *   Specifications blog, 2012-10-05: a Windows 8 client and a Windows
 *   Server 2012 server; session key, the four derived keys, a WRITE and a
 *   READ encrypted with AES-128-CCM both ways.
 * - [ENC311] "SMB 3.1.1 Encryption in Windows 10", same blog, 2015-09-09:
 *   session key and preauth hash, the derived cipher keys, a WRITE and its
 *   response encrypted with AES-128-GCM.
 * - [PAI311] "SMB 3.1.1 Pre-authentication integrity in Windows 10", same
 *   blog, 2015-08-11: the messages of smb_vectors.h, the hash after each
 *   and the signing key derived from the last.
 * - [RFC4493] AES-CMAC example 4; [GCM] the NIST GCM specification's test
 *   case 2 (McGrew and Viega, "The Galois/Counter Mode of Operation"): they
 *   pin the independent implementation (Nettle) that then computes the
 *   expected signatures of SMB messages, which no published vector covers.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/cmac.h>
#include <nettle/gcm.h>
#include <nettle/hmac.h>

#include "agent/smb/smb_crypto.h"
#include "agent/smb/smb_wire.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_hex.h"
#include "tests/agent/smb/smb_vectors.h"
#include "tests/lib/aqt.h"

#define ENC30_SESSION_KEY "B4546771B515F766A86735532DD6C4F0"

/* [ENC30] the WRITE request as the client sent it, and transformed */
#define ENC30_WRITE_PLAIN                                                                                  \
	"FE534D4240000100000000000900400008000000000000000400000000000000"                                 \
	"FFFE0000010000001100001400E4080000000000000000000000000000000000"                                 \
	"3100700017000000000000000000000015010000390000020100000039020000"                                 \
	"00000000000000007000000000000000536D623320656E6372797074696F6E20"                                 \
	"74657374696E67"
#define ENC30_WRITE_FRAME                                                                                  \
	"FD534D4281A286535415445DAE393921E44FA42E66E69A111892584FB5ED524A"                                 \
	"744DA3EE87000000000001001100001400E4080025C8FEE16605A437832D1CD5"                                 \
	"2DA9F4645333482A175FE5384563F45FCDAFAEF38BC62BA4D5C62897996625A4"                                 \
	"4C29BE5658DE2E6117585779E7B59FFD971278D08580D7FA899E410E910EABF5"                                 \
	"AA1DB43050B33B49182637759AC15D84BFCDF5B6B238993C0F4CF4D6012023F6"                                 \
	"C627297075D84B7803912D0A9639634453595EF3E33FFE4E7AC2AB"
/* [ENC30] the server's READ response, transformed and plain */
#define ENC30_READ_RSP_FRAME                                                                               \
	"FD534D42ABD518B68C2F04D7879F482B689EB83F870000000000000011000014"                                 \
	"00E4080067000000000001001100001400E40800493D6FE2BDBEB435CF5F5469"                                 \
	"70C7BB57BF20E713C75A3D045507E0D68E5C0346659D6FFB8AC1504A786CA2BB"                                 \
	"89C9E7FE4F313E910A04180D2D0EA7DF636329E5A3285984500EF86FE9D55DA4"                                 \
	"FAB9531CFDD4C551D47F3C73124BB4590A45052B694048B991CCF5"
#define ENC30_READ_RSP_PLAIN                                                                               \
	"FE534D4240000100000000000800210009000000000000000500000000000000"                                 \
	"FFFE0000010000001100001400E4080000000000000000000000000000000000"                                 \
	"11005000170000000000000000000000536D623320656E6372797074696F6E20"                                 \
	"74657374696E67"

#define ENC311_SESSION_KEY "419FDDF34C1E001909D362AE7FB6AF79"
#define ENC311_PREAUTH                                                                                     \
	"B23F3CBFD69487D9832B79B1594A367CDD950909B774C3A4C412B4FCEA9EDDDBA7DB256BA2EA30E9"                 \
	"77F11F9B113247578E0E915C6D2A513B8F2FCA5707DC8770"
#define ENC311_WRITE_FRAME                                                                                 \
	"FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000"                 \
	"0000010025000000001000006ECDD2A7AFC7B47763057A041B8FD4DAFFE990B70C9E09D36C084E02"                 \
	"D14EF247F8BDE38ACF6256F8B1D3B56F77FBDEB312FEA5E92CBCC1ED8FB2EBBFAA75E49A4A394BB4"                 \
	"4576545567C24D4C014D47C9FBDFDAFD2C4F9B72F8D256452620A299F48E29E53D6B61D1C13A19E9"                 \
	"1AF013F00D17E3ABC2FC3D36C8C1B6B93973253852DBD442E46EE8"
#define ENC311_WRITE_PLAIN                                                                                 \
	"FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000"                 \
	"25000000001000000000000000000000000000000000000031007000170000000000000000000000"                 \
	"0600000004000000010000000400000000000000000000007000000000000000536D623320656E63"                 \
	"72797074696F6E2074657374696E67"
#define ENC311_WRITE_RSP_FRAME                                                                             \
	"FD534D42ACBE1CB7ED343ADF1725EF144D90D4B0E06831DD2E8EB7B4000000000000000050000000"                 \
	"00000100250000000010000026BBBF949983A6C1C796559D0F2C510CB651D1F7B6AC8DED32A2A0B8"                 \
	"F2D793A815C6F6B848D69767A215841A42D400AE6DDB5F0B44173A014973321FDD7950DA6179159B"                 \
	"82E03C9E18A050FF0EA1C967"
#define ENC311_WRITE_RSP_PLAIN                                                                             \
	"FE534D4240000100000000000900010001000000000000000500000000000000FFFE000001000000"                 \
	"25000000001000000000000000000000000000000000000011000000170000000000000000000000"

START_TEST(test_kdf_30)
{
	uint8_t sk[16];
	struct smb_crypto_keys k;

	smb_hex(ENC30_SESSION_KEY, sk, sizeof(sk));
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_300, SMB2_ENCRYPTION_AES128_CCM, sk, 16, NULL, &k), AQ_OK);
	ck_assert_hex_eq(k.signing, 16, "F773CD23C18FD1E08EE510CADA7CF852");
	/* The client's EncryptionKey is what the server decrypts with. */
	ck_assert_hex_eq(k.dec, 16, "261B72350558F2E9DCF613070383EDBF");
	ck_assert_hex_eq(k.enc, 16, "8FE2B57EC34D2DB5B1A9727F526BBDB5");
	ck_assert_hex_eq(k.app, 16, "77432F808CE99156B5BC6A3676D730D1");
	ck_assert_uint_eq(k.cipher_key_len, 16);
	/* 3.0.2 derives the same way */
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_302, SMB2_ENCRYPTION_AES128_CCM, sk, 16, NULL, &k), AQ_OK);
	ck_assert_hex_eq(k.signing, 16, "F773CD23C18FD1E08EE510CADA7CF852");
	/* A session key longer than 16 bytes: only the first 16 count (3.3.5.5.3). */
	{
		uint8_t longer[24];

		memcpy(longer, sk, 16);
		memset(longer + 16, 0xee, 8);
		ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_300, SMB2_ENCRYPTION_AES128_CCM, longer, 24, NULL, &k),
				 AQ_OK);
		ck_assert_hex_eq(k.signing, 16, "F773CD23C18FD1E08EE510CADA7CF852");
	}
	/* 2.x: the session key signs as is */
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_210, 0, sk, 16, NULL, &k), AQ_OK);
	ck_assert_hex_eq(k.signing, 16, ENC30_SESSION_KEY);
	/* refused: AES-256 with 3.0, an unknown dialect, an empty key */
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_300, SMB2_ENCRYPTION_AES256_GCM, sk, 16, NULL, &k), AQ_EINVAL);
	ck_assert_int_eq(smb_crypto_derive(0x0222, SMB2_ENCRYPTION_AES128_CCM, sk, 16, NULL, &k), AQ_EINVAL);
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_300, SMB2_ENCRYPTION_AES128_CCM, sk, 0, NULL, &k), AQ_EINVAL);
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_311, 9, sk, 16, NULL, &k), AQ_EINVAL);
	/* 3.1.1 without a preauth hash */
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES128_GCM, sk, 16, NULL, &k), AQ_EINVAL);
}
END_TEST

START_TEST(test_kdf_311)
{
	uint8_t sk[16], pa[64];
	struct smb_crypto_keys k;

	smb_hex(ENC311_SESSION_KEY, sk, sizeof(sk));
	smb_hex(ENC311_PREAUTH, pa, sizeof(pa));
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES128_GCM, sk, 16, pa, &k), AQ_OK);
	ck_assert_hex_eq(k.dec, 16, "A2F5E80E5D59103034F32E52F698E5EC");
	ck_assert_hex_eq(k.enc, 16, "748C50868C90F302962A5C35F5F9A8BF");

	smb_hex(SMB_VEC_311_SESSION_KEY, sk, sizeof(sk));
	smb_hex(SMB_VEC_PAE5, pa, sizeof(pa));
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES128_CCM, sk, 16, pa, &k), AQ_OK);
	ck_assert_hex_eq(k.signing, 16, SMB_VEC_311_SIGNING_KEY);
}
END_TEST

/* AES-256: the KDF with L = 256 over the full session key (3.3.5.5.3). No
 * published SMB vector exists; the KDF itself is SP800-108 counter mode
 * with HMAC-SHA256, so the 32-byte output is the first HMAC block, which
 * Nettle computes here over the fixed input laid out from MS-SMB2. */
START_TEST(test_kdf_311_aes256)
{
	uint8_t sk[32], pa[64], in[4 + 16 + 1 + 64 + 4], want[32];
	struct hmac_sha256_ctx h;
	struct smb_crypto_keys k;
	size_t n = 0;

	for (size_t i = 0; i < 32; i++)
		sk[i] = (uint8_t)i;
	smb_hex(SMB_VEC_PAE5, pa, sizeof(pa));
	memcpy(in, "\0\0\0\1", 4), n = 4;
	memcpy(in + n, "SMBC2SCipherKey", 16), n += 16; /* with its NUL */
	in[n++] = 0;
	memcpy(in + n, pa, 64), n += 64;
	memcpy(in + n, "\0\0\1\0", 4), n += 4; /* L = 256 */
	hmac_sha256_set_key(&h, 32, sk);
	hmac_sha256_update(&h, n, in);
	hmac_sha256_digest(&h, 32, want);
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES256_GCM, sk, 32, pa, &k), AQ_OK);
	ck_assert_uint_eq(k.cipher_key_len, 32);
	ck_assert_int_eq(memcmp(k.dec, want, 32), 0);
}
END_TEST

START_TEST(test_preauth_chain)
{
	static const char *const msgs[] = { SMB_VEC_NEG_REQ, SMB_VEC_NEG_RSP, SMB_VEC_SS_REQ1, SMB_VEC_SS_RSP1,
					    SMB_VEC_SS_REQ2 };
	static const char *const want[] = { SMB_VEC_PAE1, SMB_VEC_PAE2, SMB_VEC_PAE3, SMB_VEC_PAE4, SMB_VEC_PAE5 };
	uint8_t h[SMB_CRYPTO_PREAUTH_LEN], m[1024];
	size_t i;

	smb_crypto_preauth_init(h);
	for (i = 0; i < 5; i++) {
		size_t n = smb_hex(msgs[i], m, sizeof(m));

		ck_assert_int_eq(smb_crypto_preauth_update(h, m, n), AQ_OK);
		ck_assert_hex_eq(h, sizeof(h), want[i]);
	}
}
END_TEST

START_TEST(test_ccm_30)
{
	uint8_t sk[16], f[512], plain[512], want[512], hdr[52];
	struct smb_crypto_keys k;
	size_t n, pn;

	smb_hex(ENC30_SESSION_KEY, sk, sizeof(sk));
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_300, SMB2_ENCRYPTION_AES128_CCM, sk, 16, NULL, &k), AQ_OK);
	/* decrypt what the client sent */
	n = smb_hex(ENC30_WRITE_FRAME, f, sizeof(f));
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_CCM, k.dec, f, n, plain), AQ_OK);
	ck_assert_hex_eq(plain, n - 52, ENC30_WRITE_PLAIN);
	/* in place too */
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_CCM, k.dec, f, n, f + 52), AQ_OK);
	ck_assert_hex_eq(f + 52, n - 52, ENC30_WRITE_PLAIN);
	/* a flipped ciphertext bit, a flipped AAD bit, the wrong key */
	n = smb_hex(ENC30_WRITE_FRAME, f, sizeof(f));
	f[60] ^= 1;
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_CCM, k.dec, f, n, plain), AQ_EACCES);
	f[60] ^= 1;
	f[44] ^= 1; /* SessionId */
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_CCM, k.dec, f, n, plain), AQ_EACCES);
	f[44] ^= 1;
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_CCM, k.enc, f, n, plain), AQ_EACCES);
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_CCM, k.dec, f, 51, plain), AQ_EINVAL);

	/* encrypt the server's READ response as the server did */
	n = smb_hex(ENC30_READ_RSP_FRAME, want, sizeof(want));
	pn = smb_hex(ENC30_READ_RSP_PLAIN, plain, sizeof(plain));
	ck_assert_uint_eq(pn, n - 52);
	memcpy(hdr, want, 52);
	memset(hdr + 4, 0, 16);
	ck_assert_int_eq(smb_crypto_encrypt(SMB2_ENCRYPTION_AES128_CCM, k.enc, hdr, plain, pn, f + 52), AQ_OK);
	memcpy(f, hdr, 52);
	ck_assert_int_eq(memcmp(f, want, n), 0);
}
END_TEST

START_TEST(test_gcm_311)
{
	uint8_t sk[16], pa[64], f[512], plain[512], want[512], hdr[52];
	struct smb_crypto_keys k;
	size_t n, pn;

	smb_hex(ENC311_SESSION_KEY, sk, sizeof(sk));
	smb_hex(ENC311_PREAUTH, pa, sizeof(pa));
	ck_assert_int_eq(smb_crypto_derive(SMB2_DIALECT_311, SMB2_ENCRYPTION_AES128_GCM, sk, 16, pa, &k), AQ_OK);
	n = smb_hex(ENC311_WRITE_FRAME, f, sizeof(f));
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_GCM, k.dec, f, n, plain), AQ_OK);
	ck_assert_hex_eq(plain, n - 52, ENC311_WRITE_PLAIN);
	f[n - 1] ^= 0x80;
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_GCM, k.dec, f, n, plain), AQ_EACCES);
	f[n - 1] ^= 0x80;
	f[4] ^= 1; /* the tag itself */
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_GCM, k.dec, f, n, plain), AQ_EACCES);
	/* the cipher the frame was not made with */
	f[4] ^= 1;
	ck_assert_int_eq(smb_crypto_decrypt(SMB2_ENCRYPTION_AES128_CCM, k.dec, f, n, plain), AQ_EACCES);
	ck_assert_int_eq(smb_crypto_decrypt(7, k.dec, f, n, plain), AQ_EINVAL);

	n = smb_hex(ENC311_WRITE_RSP_FRAME, want, sizeof(want));
	pn = smb_hex(ENC311_WRITE_RSP_PLAIN, plain, sizeof(plain));
	memcpy(hdr, want, 52);
	memset(hdr + 4, 0, 16);
	ck_assert_int_eq(smb_crypto_encrypt(SMB2_ENCRYPTION_AES128_GCM, k.enc, hdr, plain, pn, f + 52), AQ_OK);
	memcpy(f, hdr, 52);
	ck_assert_int_eq(memcmp(f, want, n), 0);
}
END_TEST

/* The AES-256 ciphers round-trip and refuse a tampered frame; with a
 * 32-byte key the 128-bit ciphertext must differ (no silent truncation). */
START_TEST(test_aes256_roundtrip)
{
	static const uint16_t ciphers[] = { SMB2_ENCRYPTION_AES256_CCM, SMB2_ENCRYPTION_AES256_GCM };
	uint8_t key[32], plain[200], f[52 + 200], back[200];
	static const uint8_t fixed[4] = { 1, 2, 3, 4 };

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0xa0 + i);
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)i;
	for (size_t c = 0; c < 2; c++) {
		memset(f, 0, 52);
		memcpy(f, "\xfdSMB", 4);
		smb_crypto_nonce(ciphers[c], 0x0102030405060708ull, fixed, f + 20);
		ck_assert_uint_eq(f[20], 0x08);
		ck_assert_uint_eq(f[28], 1);
		ck_assert_uint_eq(f[20 + (c ? 11 : 10)], c ? 4 : 3); /* 11 (CCM) or 12 (GCM) nonce bytes */
		ck_assert_uint_eq(f[20 + (c ? 12 : 11)], 0);
		f[36] = sizeof(plain);
		f[42] = 1;
		ck_assert_int_eq(smb_crypto_encrypt(ciphers[c], key, f, plain, sizeof(plain), f + 52), AQ_OK);
		ck_assert_int_ne(memcmp(f + 52, plain, sizeof(plain)), 0);
		ck_assert_int_eq(smb_crypto_decrypt(ciphers[c], key, f, sizeof(f), back), AQ_OK);
		ck_assert_int_eq(memcmp(back, plain, sizeof(plain)), 0);
		f[100] ^= 4;
		ck_assert_int_eq(smb_crypto_decrypt(ciphers[c], key, f, sizeof(f), back), AQ_EACCES);
		f[100] ^= 4;
		key[31] ^= 1; /* the last key byte matters: the key is 256 bits */
		ck_assert_int_eq(smb_crypto_decrypt(ciphers[c], key, f, sizeof(f), back), AQ_EACCES);
		key[31] ^= 1;
	}
}
END_TEST

/* Pin Nettle, the oracle, with published vectors first. */
START_TEST(test_oracle_kat)
{
	uint8_t k[16], m[64], t[16], iv[12];
	struct cmac_aes128_ctx c;
	struct gcm_aes128_ctx g;

	smb_hex("2b7e151628aed2a6abf7158809cf4f3c", k, sizeof(k));
	smb_hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
		"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
		m, sizeof(m));
	cmac_aes128_set_key(&c, k);
	cmac_aes128_update(&c, 64, m);
	cmac_aes128_digest(&c, 16, t);
	ck_assert_hex_eq(t, 16, "51f0bebf7e3b9d92fc49741779363cfe"); /* RFC 4493 example 4 */
	memset(k, 0, 16);
	memset(iv, 0, 12);
	memset(m, 0, 16);
	gcm_aes128_set_key(&g, k);
	gcm_aes128_set_iv(&g, 12, iv);
	gcm_aes128_encrypt(&g, 16, m, m);
	gcm_aes128_digest(&g, 16, t);
	ck_assert_hex_eq(m, 16, "0388dace60b6a392f328c2b971b2fe78"); /* GCM test case 2 */
	ck_assert_hex_eq(t, 16, "ab6e47d42cec13bdf53a67b21257bddf");
}
END_TEST

/* A signed-looking response: header with a garbage signature, then a body. */
static size_t sample_msg(uint8_t *m, uint16_t command, uint32_t flags)
{
	size_t i;

	for (i = 0; i < 64 + 37; i++)
		m[i] = (uint8_t)(i * 7 + 3);
	memcpy(m, "\xfeSMB\x40\x00", 6);
	m[12] = (uint8_t)command, m[13] = 0;
	m[16] = (uint8_t)flags, m[17] = m[18] = m[19] = 0;
	return 64 + 37;
}

START_TEST(test_sign_cmac_hmac)
{
	uint8_t key[16], m[128], z[128], sig[16], want[32];
	size_t n = sample_msg(m, SMB2_READ, SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_SIGNED);
	struct cmac_aes128_ctx c;
	struct hmac_sha256_ctx h;

	smb_hex(SMB_VEC_311_SIGNING_KEY, key, sizeof(key));
	memcpy(z, m, n);
	memset(z + 48, 0, 16); /* 3.1.4.1: computed with the signature zeroed */
	cmac_aes128_set_key(&c, key);
	cmac_aes128_update(&c, n, z);
	cmac_aes128_digest(&c, 16, want);
	ck_assert_int_eq(smb_crypto_sign(SMB2_SIGNING_AES_CMAC, key, m, n, sig), AQ_OK);
	ck_assert_int_eq(memcmp(sig, want, 16), 0);
	ck_assert_int_eq(smb_crypto_verify(SMB2_SIGNING_AES_CMAC, key, m, n), AQ_EACCES);
	memcpy(m + 48, sig, 16);
	ck_assert_int_eq(smb_crypto_verify(SMB2_SIGNING_AES_CMAC, key, m, n), AQ_OK);
	m[n - 1] ^= 1; /* the padding of a compound is covered */
	ck_assert_int_eq(smb_crypto_verify(SMB2_SIGNING_AES_CMAC, key, m, n), AQ_EACCES);
	m[n - 1] ^= 1;

	hmac_sha256_set_key(&h, 16, key);
	hmac_sha256_update(&h, n, z);
	hmac_sha256_digest(&h, 32, want);
	ck_assert_int_eq(smb_crypto_sign(SMB2_SIGNING_HMAC_SHA256, key, m, n, sig), AQ_OK);
	ck_assert_int_eq(memcmp(sig, want, 16), 0);
	ck_assert_int_eq(smb_crypto_sign(SMB2_SIGNING_HMAC_SHA256, key, m, 63, sig), AQ_EINVAL);
	ck_assert_int_eq(smb_crypto_sign(9, key, m, n, sig), AQ_EINVAL);
}
END_TEST

/* AES-GMAC: RFC 4543 with the nonce of 3.1.4.1: MessageId, then bit 0 for
 * the server, bit 1 for a CANCEL request. */
START_TEST(test_sign_gmac)
{
	static const struct {
		uint16_t command;
		uint32_t flags;
		uint8_t role;
	} cases[] = {
		{ SMB2_WRITE, 0, 0 },
		{ SMB2_WRITE, SMB2_FLAGS_SERVER_TO_REDIR, 1 },
		{ SMB2_CANCEL, 0, 2 },
		{ SMB2_CANCEL, SMB2_FLAGS_SERVER_TO_REDIR, 1 },
	};
	uint8_t key[16], m[128], z[128], sig[16], want[16], iv[12];
	struct gcm_aes128_ctx g;

	smb_hex(SMB_VEC_311_SIGNING_KEY, key, sizeof(key));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = sample_msg(m, cases[i].command, cases[i].flags);

		memcpy(z, m, n);
		memset(z + 48, 0, 16);
		memcpy(iv, m + 24, 8);
		iv[8] = cases[i].role, iv[9] = iv[10] = iv[11] = 0;
		gcm_aes128_set_key(&g, key);
		gcm_aes128_set_iv(&g, 12, iv);
		gcm_aes128_update(&g, n, z);
		gcm_aes128_digest(&g, 16, want);
		ck_assert_int_eq(smb_crypto_sign(SMB2_SIGNING_AES_GMAC, key, m, n, sig), AQ_OK);
		ck_assert_msg(!memcmp(sig, want, 16), "case %zu", i);
		memcpy(m + 48, sig, 16);
		ck_assert_int_eq(smb_crypto_verify(SMB2_SIGNING_AES_GMAC, key, m, n), AQ_OK);
		m[24] ^= 1; /* MessageId is in the nonce and the data */
		ck_assert_int_eq(smb_crypto_verify(SMB2_SIGNING_AES_GMAC, key, m, n), AQ_EACCES);
	}
}
END_TEST

/* A message of session s, number i: lengths, MessageIds, flags and bytes
 * change from one to the next (and a CANCEL now and then: GMAC's nonce). */
static size_t many_msg(uint8_t *m, size_t cap, unsigned s, unsigned i)
{
	size_t n = 64 + (i * 131u + s * 17u) % (cap - 64), k;

	for (k = 0; k < n; k++)
		m[k] = (uint8_t)(k * 13u + i * 7u + s);
	memcpy(m, "\xfeSMB\x40\x00", 6);
	m[12] = i % 5 == 0 ? SMB2_CANCEL : SMB2_WRITE, m[13] = 0;
	m[16] = i % 2 ? SMB2_FLAGS_SERVER_TO_REDIR : 0, m[17] = m[18] = m[19] = 0;
	for (k = 0; k < 8; k++)
		m[24 + k] = (uint8_t)((uint64_t)(i + 1000u * s) >> (8 * k)); /* MessageId */
	return n;
}

/* Many messages through two sessions' kept contexts, interleaved, each
 * against a one-shot computation: a context that carries anything from
 * the message before (MAC state, the nonce, the other session's key) or
 * misses a key change gives another signature. A forged message in the
 * middle is refused and the next ones still verify. */
START_TEST(test_ctx_sign_many)
{
	static const uint16_t algs[] = { SMB2_SIGNING_HMAC_SHA256, SMB2_SIGNING_AES_CMAC, SMB2_SIGNING_AES_GMAC };
	struct smb_crypto_ctx x[2] = { { 0 }, { 0 } };
	uint8_t key[2][16], m[600], sig[16], want[16];

	for (size_t k = 0; k < 16; k++)
		key[0][k] = (uint8_t)(0x10 + k), key[1][k] = (uint8_t)(0x80 + 3 * k);
	for (unsigned a = 0; a < 3; a++) {
		for (unsigned i = 0; i < 300; i++) {
			unsigned s = (i / 3 + i) % 2; /* runs of one session, then switches */
			size_t n = many_msg(m, sizeof(m), s, i);

			if (i == 150)
				key[0][5] ^= 0x5a; /* session 0 re-authenticated: new key, same context */
			ck_assert_int_eq(smb_crypto_ctx_sign(&x[s], algs[a], key[s], m, n, sig), AQ_OK);
			ck_assert_int_eq(smb_crypto_sign(algs[a], key[s], m, n, want), AQ_OK);
			ck_assert_msg(!memcmp(sig, want, 16), "alg %u message %u session %u", algs[a], i, s);
			memcpy(m + 48, sig, 16);
			if (i % 11 == 0) {
				m[n - 1] ^= 1;
				ck_assert_int_eq(smb_crypto_ctx_verify(&x[s], algs[a], key[s], m, n), AQ_EACCES);
				m[n - 1] ^= 1;
			}
			ck_assert_int_eq(smb_crypto_ctx_verify(&x[s], algs[a], key[s], m, n), AQ_OK);
		}
	}
	smb_crypto_ctx_cleanup(&x[0]);
	smb_crypto_ctx_cleanup(&x[1]);
	ck_assert_ptr_null(x[0].mac);
	ck_assert_ptr_null(x[0].gmac);
}
END_TEST

/* The same for sealing with each cipher: two sessions' contexts encrypt
 * and decrypt in turn, each frame equal to the one-shot one; a frame with
 * a flipped byte is refused (its context dropped) and the next decrypts. */
START_TEST(test_ctx_seal_many)
{
	static const uint16_t ciphers[] = { SMB2_ENCRYPTION_AES128_CCM, SMB2_ENCRYPTION_AES128_GCM,
					    SMB2_ENCRYPTION_AES256_CCM, SMB2_ENCRYPTION_AES256_GCM };
	static const uint8_t fixed[2][4] = { { 1, 2, 3, 4 }, { 9, 8, 7, 6 } };
	struct smb_crypto_ctx x[2] = { { 0 }, { 0 } };
	uint8_t key[2][32], plain[700], f[52 + 700], g[52 + 700], back[700];

	for (size_t k = 0; k < 32; k++)
		key[0][k] = (uint8_t)(0x40 + k), key[1][k] = (uint8_t)(0xc0 - 5 * k);
	for (unsigned c = 0; c < 4; c++) {
		for (unsigned i = 0; i < 200; i++) {
			unsigned s = (i / 3 + i) % 2;
			size_t n = 1 + (i * 97u + s * 31u) % (sizeof(plain) - 1);

			for (size_t k = 0; k < n; k++)
				plain[k] = (uint8_t)(k * 5u + i + s);
			memset(f, 0, 52);
			memcpy(f, "\xfdSMB", 4);
			smb_crypto_nonce(ciphers[c], i + 1, fixed[s], f + 20);
			f[36] = (uint8_t)n, f[37] = (uint8_t)(n >> 8);
			f[42] = 1;
			f[44] = (uint8_t)(s + 1); /* SessionId */
			memcpy(g, f, 52);
			ck_assert_int_eq(smb_crypto_ctx_encrypt(&x[s], ciphers[c], key[s], f, plain, n, f + 52), AQ_OK);
			ck_assert_int_eq(smb_crypto_encrypt(ciphers[c], key[s], g, plain, n, g + 52), AQ_OK);
			ck_assert_msg(!memcmp(f, g, 52 + n), "cipher %u frame %u session %u", ciphers[c], i, s);
			if (i % 7 == 0) {
				f[52 + n / 2] ^= 0x20;
				ck_assert_int_eq(smb_crypto_ctx_decrypt(&x[s], ciphers[c], key[s], f, 52 + n, back),
						 AQ_EACCES);
				f[52 + n / 2] ^= 0x20;
			}
			memset(back, 0, sizeof(back));
			ck_assert_int_eq(smb_crypto_ctx_decrypt(&x[s], ciphers[c], key[s], f, 52 + n, back), AQ_OK);
			ck_assert_msg(!memcmp(back, plain, n), "cipher %u frame %u session %u", ciphers[c], i, s);
		}
		/* a frame with no message: refused (CCM would take any tag) */
		ck_assert_int_eq(smb_crypto_ctx_decrypt(&x[0], ciphers[c], key[0], f, 52, back), AQ_EINVAL);
		ck_assert_int_eq(smb_crypto_decrypt(ciphers[c], key[0], f, 52, back), AQ_EINVAL);
	}
	smb_crypto_ctx_cleanup(&x[0]);
	smb_crypto_ctx_cleanup(&x[1]);
	ck_assert_ptr_null(x[1].aead[0]);
	ck_assert_ptr_null(x[1].aead[1]);
}
END_TEST

START_TEST(test_kdf_bounds)
{
	uint8_t out[32], ki[16] = { 0 }, big[80] = { 0 };

	ck_assert_int_eq(smb_crypto_kdf(ki, 16, "a", 2, "b", 2, out, 24), AQ_EINVAL);
	ck_assert_int_eq(smb_crypto_kdf(ki, 16, big, 65, "b", 2, out, 16), AQ_EINVAL);
	ck_assert_int_eq(smb_crypto_kdf(ki, 16, "a", 2, big, 65, out, 16), AQ_EINVAL);
	ck_assert_int_eq(smb_crypto_kdf(ki, 16, big, 64, big, 64, out, 32), AQ_OK);
}
END_TEST

static Suite *smb_crypto_suite(void)
{
	Suite *s = suite_create("smb_crypto");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_kdf_30);
	tcase_add_test(tc, test_kdf_311);
	tcase_add_test(tc, test_kdf_311_aes256);
	tcase_add_test(tc, test_preauth_chain);
	tcase_add_test(tc, test_ccm_30);
	tcase_add_test(tc, test_gcm_311);
	tcase_add_test(tc, test_aes256_roundtrip);
	tcase_add_test(tc, test_oracle_kat);
	tcase_add_test(tc, test_sign_cmac_hmac);
	tcase_add_test(tc, test_sign_gmac);
	tcase_add_test(tc, test_kdf_bounds);
	tcase_add_test(tc, test_ctx_sign_many);
	tcase_add_test(tc, test_ctx_seal_many);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_crypto_suite());
}
