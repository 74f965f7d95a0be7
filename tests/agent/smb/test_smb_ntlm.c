/* test_smb_ntlm: NTLMv2 server side (agent/smb/smb_ntlm.c).
 *
 * Vectors: [NLMP] MS-NLMP section 4.2 (4.2.1 common values: user "User",
 * domain "Domain", password "Password", server challenge 0123456789abcdef,
 * client challenge aa..aa, time 0, random session key 55..55; 4.2.2.1.2
 * NTOWFv1; 4.2.4 NTLMv2: its CHALLENGE_MESSAGE (4.2.4.3) and
 * AUTHENTICATE_MESSAGE (4.2.4.4) in full, 4.2.4.1.1 NTOWFv2, 4.2.4.1.2
 * SessionBaseKey, 4.2.4.2.2 NTProofStr). [PAI311] the Windows 10 session of
 * smb_vectors.h: a CHALLENGE and an AUTHENTICATE with a MIC. Nettle is the
 * independent oracle for the MD4 padding cases and the MIC, which no
 * published vector covers.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/hmac.h>
#include <nettle/md4.h>

#include "agent/smb/smb_ntlm.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_hex.h"
#include "tests/agent/smb/smb_vectors.h"
#include "tests/lib/aqt.h"

#define NLMP_CHALLENGE                                                                                     \
	"4e544c4d53535000020000000c000c003800000033828ae20123456789abcdef"                                 \
	"00000000000000002400240044000000060070170000000f5300650072007600"                                 \
	"6500720002000c0044006f006d00610069006e0001000c005300650072007600"                                 \
	"6500720000000000"
#define NLMP_AUTHENTICATE                                                                                  \
	"4e544c4d5353500003000000180018006c00000054005400840000000c000c00"                                 \
	"480000000800080054000000100010005c00000010001000d8000000358288e2"                                 \
	"0501280a0000000f44006f006d00610069006e00550073006500720043004f00"                                 \
	"4d005000550054004500520086c35097ac9cec102554764a57cccc19aaaaaaaa"                                 \
	"aaaaaaaa68cd0ab851e51c96aabc927bebef6a1c010100000000000000000000"                                 \
	"00000000aaaaaaaaaaaaaaaa0000000002000c0044006f006d00610069006e00"                                 \
	"01000c005300650072007600650072000000000000000000c5dad2544fc97990"                                 \
	"94ce1ce90bc9d03e"

static void utf16(const char *s, uint8_t *out, size_t *n)
{
	size_t i;

	for (i = 0; s[i]; i++)
		out[2 * i] = (uint8_t)s[i], out[2 * i + 1] = 0;
	*n = 2 * i;
}

START_TEST(test_nt_hash)
{
	uint8_t h[16], u[512], want[16];
	char pw[257];
	struct md4_ctx m;

	ck_assert_int_eq(smb_ntlm_nt_hash("Password", h), AQ_OK);
	ck_assert_hex_eq(h, 16, "a4f49c406510bdcab6824ee7c30fd852"); /* [NLMP] 4.2.2.1.2 */
	ck_assert_int_eq(smb_ntlm_nt_hash("", h), AQ_OK);
	ck_assert_hex_eq(h, 16, "31d6cfe0d16ae931b73c59d7e0c089c0"); /* RFC 1320: MD4("") */
	/* every padding case: 0 to 256 characters, against Nettle */
	for (size_t n = 0; n <= 256; n++) {
		size_t ul;

		memset(pw, 'a' + (int)(n % 26), n);
		pw[n] = 0;
		utf16(pw, u, &ul);
		md4_init(&m);
		md4_update(&m, ul, u);
		md4_digest(&m, 16, want);
		ck_assert_int_eq(smb_ntlm_nt_hash(pw, h), AQ_OK);
		ck_assert_msg(!memcmp(h, want, 16), "length %zu", n);
	}
	ck_assert_int_eq(smb_ntlm_nt_hash("\xff", h), AQ_EINVAL);
}
END_TEST

START_TEST(test_ntowfv2)
{
	uint8_t nt[16], u[64], d[64], k[16];
	size_t ul, dl;

	smb_ntlm_nt_hash("Password", nt);
	utf16("User", u, &ul);
	utf16("Domain", d, &dl);
	ck_assert_int_eq(smb_ntlm_ntowfv2(nt, u, ul, d, dl, k), AQ_OK);
	ck_assert_hex_eq(k, 16, "0c868a403bfd7a93a3001ef22ef02e3f"); /* [NLMP] 4.2.4.1.1 */
	utf16("uSeR", u, &ul); /* the user is folded to upper case, the domain is not */
	ck_assert_int_eq(smb_ntlm_ntowfv2(nt, u, ul, d, dl, k), AQ_OK);
	ck_assert_hex_eq(k, 16, "0c868a403bfd7a93a3001ef22ef02e3f");
	utf16("DOMAIN", d, &dl);
	ck_assert_int_eq(smb_ntlm_ntowfv2(nt, u, ul, d, dl, k), AQ_OK);
	ck_assert_int_ne(memcmp(k, "\x0c\x86\x8a\x40", 4), 0);
	ck_assert_int_eq(smb_ntlm_ntowfv2(nt, u, 3, d, dl, k), AQ_EINVAL);
}
END_TEST

/* Our CHALLENGE encoder, given [NLMP] 4.2.4's fields, writes its bytes. */
START_TEST(test_challenge_nlmp)
{
	struct smb_ntlm_challenge c = {
		.flags = 0xe28a8233u,
		.challenge = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef },
		.target = "Server",
		.nb_domain = "Domain",
		.nb_computer = "Server",
		.version = { 0x06, 0x00, 0x70, 0x17, 0x00, 0x00, 0x00, 0x0f },
	};
	struct ut_buf b;

	ut_buf_init(&b, 1024);
	ck_assert_int_eq(smb_ntlm_challenge_encode(&b, &c), AQ_OK);
	ck_assert_hex_eq(ut_buf_bytes(&b), b.len, NLMP_CHALLENGE);
	ut_buf_cleanup(&b);
}
END_TEST

/* ... and given Windows Server 2016's, writes Windows' CHALLENGE. */
START_TEST(test_challenge_windows)
{
	uint8_t f[1024];
	size_t n = smb_hex(SMB_VEC_SS_RSP1, f, sizeof(f));
	const uint8_t *want = f + 64 + 8 + 31; /* blob at 72, NTLMSSP 31 bytes into it */
	struct smb_ntlm_challenge c = {
		.flags = 0xe28a8215u,
		.challenge = { 0x0d, 0x1d, 0x8b, 0xa3, 0x11, 0x79, 0xd0, 0x08 },
		.target = "SUT311",
		.nb_domain = "SUT311",
		.nb_computer = "SUT311",
		.dns_domain = "SUT311",
		.dns_computer = "SUT311",
		.has_timestamp = true,
		.timestamp = 0x01D0AECBADF5A1A1ull,
		.version = { 0x0a, 0x00, 0x92, 0x27, 0x00, 0x00, 0x00, 0x0f },
	};
	struct ut_buf b;

	ck_assert_uint_eq(n - (size_t)(want - f), 0x94);
	ck_assert_int_eq(memcmp(want, "NTLMSSP\0\2", 9), 0);
	ut_buf_init(&b, 1024);
	ck_assert_int_eq(smb_ntlm_challenge_encode(&b, &c), AQ_OK);
	ck_assert_uint_eq(b.len, 0x94);
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), want, b.len), 0);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_negotiate_flags)
{
	/* The NEGOTIATE of the Windows session: SPNEGO's mechToken */
	static const char neg[] = "4E544C4D5353500001000000978208E2000000000000000000000000000000000603802500"
				  "00000F";
	uint8_t m[64];
	size_t n = smb_hex(neg, m, sizeof(m));
	uint32_t fl, ans;

	ck_assert_int_eq(smb_ntlm_negotiate_decode(m, n, &fl), AQ_OK);
	ck_assert_uint_eq(fl, 0xe2088297u);
	ck_assert_int_eq(smb_ntlm_answer_flags(fl, &ans), AQ_OK);
	ck_assert(ans & NTLMSSP_NEGOTIATE_KEY_EXCH);
	ck_assert(ans & NTLMSSP_NEGOTIATE_TARGET_INFO);
	ck_assert(!(ans & NTLMSSP_NEGOTIATE_LM_KEY)); /* never LM */
	ck_assert(!(ans & NTLMSSP_NEGOTIATE_OEM));
	ck_assert_int_eq(smb_ntlm_answer_flags(fl & ~NTLMSSP_NEGOTIATE_UNICODE, &ans), AQ_EINVAL);
	m[8] = 2;
	ck_assert_int_eq(smb_ntlm_negotiate_decode(m, n, &fl), AQ_EINVAL);
	ck_assert_int_eq(smb_ntlm_negotiate_decode(m, 15, &fl), AQ_EINVAL);
}
END_TEST

static void nlmp_check(struct smb_ntlm_check *c, uint8_t nt[16], const uint8_t *auth, size_t alen)
{
	static const uint8_t sc[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

	smb_ntlm_nt_hash("Password", nt);
	*c = (struct smb_ntlm_check){ .nt_hash = nt, .server_challenge = sc, .authenticate = auth,
				      .authenticate_len = alen };
}

START_TEST(test_auth_nlmp)
{
	uint8_t m[512], nt[16], key[16], name[64];
	size_t n = smb_hex(NLMP_AUTHENTICATE, m, sizeof(m)), nl;
	struct smb_ntlm_auth a;
	struct smb_ntlm_check c;

	ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_OK);
	ck_assert_uint_eq(a.flags, 0xe2888235u);
	utf16("User", name, &nl);
	ck_assert_uint_eq(a.user_len, nl);
	ck_assert_int_eq(memcmp(a.user, name, nl), 0);
	ck_assert_uint_eq(a.workstation_len, 16);
	ck_assert_uint_eq(a.nt_len, 0x54);
	ck_assert_uint_eq(a.enc_key_len, 16);
	ck_assert(!a.has_mic); /* payload at 0x48: Version only */
	ck_assert_hex_eq(a.nt, 16, "68cd0ab851e51c96aabc927bebef6a1c");

	nlmp_check(&c, nt, m, n);
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_OK);
	/* KEY_EXCH: the exported key is the client's random session key */
	ck_assert_hex_eq(key, 16, "55555555555555555555555555555555");
	/* without KEY_EXCH the session base key is the key ([NLMP] 4.2.4.1.2) */
	a.flags &= ~NTLMSSP_NEGOTIATE_KEY_EXCH;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_OK);
	ck_assert_hex_eq(key, 16, "8de40ccadbc14a82f15cb0ad0de95ca3");
	a.flags |= NTLMSSP_NEGOTIATE_KEY_EXCH;

	/* wrong password */
	smb_ntlm_nt_hash("password", nt);
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	ck_assert_hex_eq(key, 16, "00000000000000000000000000000000");
	/* another server challenge (a replay) */
	smb_ntlm_nt_hash("Password", nt);
	c.server_challenge = (const uint8_t *)"\1\2\3\4\5\6\7\x08";
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	nlmp_check(&c, nt, m, n);
	/* the blob's time 0 is far from now */
	c.now = 0x01D0AECBADF5A1A1ull;
	c.max_skew = 300 * SMB_NTLM_FILETIME_SEC;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	c.now = 299 * SMB_NTLM_FILETIME_SEC;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_OK);
	c.now = 0;
	/* a flipped blob byte (the client challenge) */
	m[0x84 + 16 + 16] ^= 1;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	m[0x84 + 16 + 16] ^= 1;
}
END_TEST

START_TEST(test_auth_refused)
{
	uint8_t m[512], nt[16], key[16];
	size_t n = smb_hex(NLMP_AUTHENTICATE, m, sizeof(m));
	struct smb_ntlm_auth a;
	struct smb_ntlm_check c;

	nlmp_check(&c, nt, m, n);
	ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_OK);
	/* NTLMv1: a 24-byte NtChallengeResponse */
	a.nt_len = 24;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	/* anonymous: no user, no responses */
	ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_OK);
	a.user_len = 0, a.user = NULL;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	/* KEY_EXCH without a 16-byte key */
	ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_OK);
	a.enc_key_len = 8;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EINVAL);
	/* RespType not 1 */
	ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_OK);
	m[0x84 + 16] = 2;
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EINVAL);
}
END_TEST

START_TEST(test_auth_malformed)
{
	uint8_t base[512], m[512];
	size_t n = smb_hex(NLMP_AUTHENTICATE, base, sizeof(base));
	struct smb_ntlm_auth a;
	static const size_t fields[] = { 12, 20, 28, 36, 44, 52 };

	for (size_t cut = 0; cut < 64; cut++)
		ck_assert_int_eq(smb_ntlm_auth_decode(base, cut, &a), AQ_EINVAL);
	/* every field: offset past the end, length past the end, offset into the fixed part */
	for (size_t i = 0; i < 6; i++) {
		size_t f = fields[i];

		memcpy(m, base, n);
		m[f + 4] = 0xff, m[f + 5] = 0xff;
		ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_EINVAL);
		memcpy(m, base, n);
		m[f] = 0xff, m[f + 1] = 0x01;
		ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_EINVAL);
		memcpy(m, base, n);
		m[f + 4] = 0x10, m[f + 5] = 0;
		ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_EINVAL);
		/* 0xffffffff offset: no wrap-around */
		memcpy(m, base, n);
		memset(m + f + 4, 0xff, 4);
		ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_EINVAL);
	}
	memcpy(m, base, n);
	m[36] = 7; /* odd user name */
	ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_EINVAL);
	memcpy(m, base, n);
	memcpy(m, "NTLMSSQ", 7);
	ck_assert_int_eq(smb_ntlm_auth_decode(m, n, &a), AQ_EINVAL);
	ck_assert_int_eq(smb_ntlm_auth_decode(base, SMB_NTLM_MSG_MAX + 1, &a), AQ_ETOOBIG);
}
END_TEST

START_TEST(test_av_pairs)
{
	uint8_t l[64];
	size_t n = smb_hex("0200 0400 4100 4200 0700 0800 0102030405060708 0000 0000", l, sizeof(l)), vl;
	const uint8_t *v;

	ck_assert_int_eq(smb_ntlm_av_find(l, n, MSV_AV_TIMESTAMP, &v, &vl), AQ_OK);
	ck_assert_uint_eq(vl, 8);
	ck_assert_uint_eq(v[0], 1);
	ck_assert_int_eq(smb_ntlm_av_find(l, n, MSV_AV_FLAGS, &v, &vl), AQ_ENOENT);
	ck_assert_int_eq(smb_ntlm_av_find(l, n - 4, MSV_AV_TIMESTAMP, &v, &vl), AQ_EINVAL); /* no EOL */
	l[2] = 0x40;                                                                         /* a length past the end */
	ck_assert_int_eq(smb_ntlm_av_find(l, n, MSV_AV_TIMESTAMP, &v, &vl), AQ_EINVAL);
	ck_assert_ptr_null(v);
}
END_TEST

/* Windows' AUTHENTICATE: a MIC, MsvAvFlags, the timestamp we sent. The
 * password is not published: the check must fail on the proof, after the
 * blob passed. */
START_TEST(test_auth_windows)
{
	uint8_t f[1024], nt[16], key[16];
	size_t n = smb_hex(SMB_VEC_SS_REQ2, f, sizeof(f));
	const uint8_t *msg = f + 0x58 + 21; /* after SPNEGO's 21 bytes of framing */
	size_t len = 0x1A6;
	struct smb_ntlm_auth a;
	struct smb_ntlm_check c = { .nt_hash = nt, .server_challenge = (const uint8_t *)"\x0d\x1d\x8b\xa3\x11\x79\xd0\x08",
				    .authenticate = msg, .authenticate_len = len,
				    .now = 0x01D0AECBADF5A1A1ull + 10 * SMB_NTLM_FILETIME_SEC,
				    .max_skew = 300 * SMB_NTLM_FILETIME_SEC };
	const uint8_t *v;
	size_t vl;
	char user[64];

	ck_assert_uint_ge(n, 0x58 + 0x1F + len);
	ck_assert_int_eq(smb_ntlm_auth_decode(msg, len, &a), AQ_OK);
	ck_assert(a.has_mic);
	ck_assert_uint_eq(a.mic_off, 72);
	ck_assert_int_eq(smb_wire_utf16_to_utf8(a.user, a.user_len, user, sizeof(user), NULL), AQ_OK);
	ck_assert_str_eq(user, "administrator");
	ck_assert_int_eq(smb_wire_utf16_to_utf8(a.domain, a.domain_len, user, sizeof(user), NULL), AQ_OK);
	ck_assert_str_eq(user, "SUT311");
	ck_assert_int_eq(smb_ntlm_av_find(a.nt + 16 + 28, a.nt_len - 16 - 28, MSV_AV_FLAGS, &v, &vl), AQ_OK);
	ck_assert_uint_eq(smb_wire_get_u32(v), MSV_AV_FLAG_MIC_PRESENT);
	smb_ntlm_nt_hash("not the password", nt);
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
}
END_TEST

/* The MIC: an AUTHENTICATE built here with Nettle from [NLMP]'s values,
 * whose blob carries MsvAvFlags = MIC present. */
START_TEST(test_auth_mic)
{
	uint8_t neg[40] = "NTLMSSP", chal[256], auth[512], nt[16], ntv2[16], key[16], proof[16], mic[16], exported[16];
	uint8_t blob[64], sc[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	size_t cl = smb_hex(NLMP_CHALLENGE, chal, sizeof(chal)), bl = 0, al;
	struct hmac_md5_ctx h;
	struct smb_ntlm_auth a;
	struct smb_ntlm_check c;

	neg[8] = 1;
	bl = smb_hex("0101 000000000000 0000000000000000 aaaaaaaaaaaaaaaa 00000000"
		     "0600 0400 02000000 0000 0000",
		     blob, sizeof(blob));
	smb_hex("0c868a403bfd7a93a3001ef22ef02e3f", ntv2, 16); /* [NLMP] NTOWFv2 */
	hmac_md5_set_key(&h, 16, ntv2);
	hmac_md5_update(&h, 8, sc);
	hmac_md5_update(&h, bl, blob);
	hmac_md5_digest(&h, 16, proof);
	hmac_md5_set_key(&h, 16, ntv2);
	hmac_md5_update(&h, 16, proof);
	hmac_md5_digest(&h, 16, exported); /* session base key; no KEY_EXCH */
	/* AUTHENTICATE: fields at 12.., flags, Version, MIC at 72, payload at 88 */
	memset(auth, 0, sizeof(auth));
	memcpy(auth, "NTLMSSP\0\3\0\0\0", 12);
	al = 88;
	{
		static const char user[] = "U\0s\0e\0r\0", dom[] = "D\0o\0m\0a\0i\0n\0";
		struct {
			size_t field;
			const void *p;
			size_t n;
		} put[] = { { 20, NULL, 16 + bl }, { 28, dom, 12 }, { 36, user, 8 } };

		for (size_t i = 0; i < 3; i++) {
			auth[put[i].field] = (uint8_t)put[i].n;
			auth[put[i].field + 2] = (uint8_t)put[i].n;
			auth[put[i].field + 4] = (uint8_t)al;
			if (put[i].p) {
				memcpy(auth + al, put[i].p, put[i].n);
			} else {
				memcpy(auth + al, proof, 16);
				memcpy(auth + al + 16, blob, bl);
			}
			al += put[i].n;
		}
	}
	auth[60] = 0x35, auth[61] = 0x82, auth[62] = 0x88, auth[63] = 0xa2; /* 0xe2888235 without KEY_EXCH */
	hmac_md5_set_key(&h, 16, exported);
	hmac_md5_update(&h, 40, neg);
	hmac_md5_update(&h, cl, chal);
	hmac_md5_update(&h, al, auth);
	hmac_md5_digest(&h, 16, mic);
	memcpy(auth + 72, mic, 16);

	smb_ntlm_nt_hash("Password", nt);
	c = (struct smb_ntlm_check){ .nt_hash = nt, .server_challenge = sc, .negotiate = neg, .negotiate_len = 40,
				     .challenge = chal, .challenge_len = cl, .authenticate = auth,
				     .authenticate_len = al };
	ck_assert_int_eq(smb_ntlm_auth_decode(auth, al, &a), AQ_OK);
	ck_assert(a.has_mic);
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_OK);
	ck_assert_int_eq(memcmp(key, exported, 16), 0);
	auth[72] ^= 1; /* a bad MIC */
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	auth[72] ^= 1;
	chal[30] ^= 1; /* the CHALLENGE the MIC covers is not ours */
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EACCES);
	chal[30] ^= 1;
	a.has_mic = false; /* MsvAvFlags says MIC but there is no room for one */
	ck_assert_int_eq(smb_ntlm_auth_check(&c, &a, key), AQ_EINVAL);
}
END_TEST

static Suite *smb_ntlm_suite(void)
{
	Suite *s = suite_create("smb_ntlm");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_nt_hash);
	tcase_add_test(tc, test_ntowfv2);
	tcase_add_test(tc, test_challenge_nlmp);
	tcase_add_test(tc, test_challenge_windows);
	tcase_add_test(tc, test_negotiate_flags);
	tcase_add_test(tc, test_auth_nlmp);
	tcase_add_test(tc, test_auth_refused);
	tcase_add_test(tc, test_auth_malformed);
	tcase_add_test(tc, test_av_pairs);
	tcase_add_test(tc, test_auth_windows);
	tcase_add_test(tc, test_auth_mic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_ntlm_suite());
}
