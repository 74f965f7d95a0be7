/* test_smb_spnego: SPNEGO wrapping (agent/smb/smb_spnego.c) against the
 * four security blobs of the Windows 10 / Server 2016 session in
 * smb_vectors.h ([PAI311]: NegTokenInit2 in the NEGOTIATE response,
 * NegTokenInit, NegTokenResp with a CHALLENGE, NegTokenResp with an
 * AUTHENTICATE and a mechListMIC), and malformed DER. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_spnego.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_hex.h"
#include "tests/agent/smb/smb_vectors.h"
#include "tests/lib/aqt.h"

/* The security blob of a message: SESSION_SETUP's offset/length at body
 * +4/+6 (request at +12/+14), NEGOTIATE response's at +56/+58. */
static const uint8_t *blob_of(const char *hex, uint8_t *f, size_t cap, size_t off_at, size_t *len)
{
	size_t n = smb_hex(hex, f, cap), off = smb_wire_get_u16(f + 64 + off_at);

	*len = smb_wire_get_u16(f + 64 + off_at + 2);
	ck_assert_uint_le(off + *len, n);
	return f + off;
}

START_TEST(test_init_client)
{
	uint8_t f[1024];
	size_t n;
	const uint8_t *b = blob_of(SMB_VEC_SS_REQ1, f, sizeof(f), 12, &n);
	struct smb_spnego_init r;

	ck_assert_int_eq(smb_spnego_init_decode(b, n, &r), AQ_OK);
	ck_assert_uint_eq(r.mechs, SMB_SPNEGO_NTLMSSP);
	ck_assert_uint_eq(r.first, SMB_SPNEGO_NTLMSSP);
	ck_assert_uint_eq(r.token_len, 0x28);
	ck_assert_int_eq(memcmp(r.token, "NTLMSSP\0\1", 9), 0);
	ck_assert_ptr_null(r.mic);
	ck_assert_uint_eq(r.mech_list_len, 14);
	ck_assert_uint_eq(r.mech_list[0], 0x30);
	/* every truncation is refused */
	for (size_t cut = 0; cut < n; cut++)
		ck_assert_int_ne(smb_spnego_init_decode(b, cut, &r), AQ_OK);
	/* a byte after the outer element is refused: the blob is exact */
	ck_assert_int_eq(smb_spnego_init_decode(b, n + 1, &r), AQ_EINVAL);
}
END_TEST

START_TEST(test_init_windows_server)
{
	uint8_t f[1024];
	size_t n;
	const uint8_t *b = blob_of(SMB_VEC_NEG_RSP, f, sizeof(f), 56, &n);
	struct smb_spnego_init r;

	ck_assert_uint_eq(n, 0x140);
	ck_assert_int_eq(smb_spnego_init_decode(b, n, &r), AQ_OK);
	ck_assert_uint_eq(r.mechs, SMB_SPNEGO_NEGOEX | SMB_SPNEGO_NTLMSSP);
	ck_assert_uint_eq(r.first, SMB_SPNEGO_NEGOEX);
	ck_assert_uint_eq(r.token_len, 0x108);
	ck_assert_int_eq(memcmp(r.token, "NEGOEXTS", 8), 0);
}
END_TEST

START_TEST(test_resp_windows)
{
	uint8_t f[1024];
	size_t n;
	const uint8_t *b = blob_of(SMB_VEC_SS_RSP1, f, sizeof(f), 4, &n);
	struct smb_spnego_resp r;
	struct ut_buf w;

	ck_assert_int_eq(smb_spnego_resp_decode(b, n, &r), AQ_OK);
	ck_assert_int_eq(r.state, SMB_SPNEGO_ACCEPT_INCOMPLETE);
	ck_assert_uint_eq(r.mech, SMB_SPNEGO_NTLMSSP);
	ck_assert_uint_eq(r.token_len, 0x94);
	ck_assert_ptr_null(r.mic);
	/* our encoder writes Windows' bytes */
	ut_buf_init(&w, 4096);
	ck_assert_int_eq(smb_spnego_resp_encode(&w, SMB_SPNEGO_ACCEPT_INCOMPLETE, SMB_SPNEGO_NTLMSSP, r.token,
					       r.token_len, NULL, 0),
			 AQ_OK);
	ck_assert_uint_eq(w.len, n);
	ck_assert_int_eq(memcmp(ut_buf_bytes(&w), b, n), 0);
	ut_buf_cleanup(&w);

	b = blob_of(SMB_VEC_SS_REQ2, f, sizeof(f), 12, &n);
	ck_assert_int_eq(smb_spnego_resp_decode(b, n, &r), AQ_OK);
	ck_assert_int_eq(r.state, SMB_SPNEGO_ACCEPT_INCOMPLETE);
	ck_assert_uint_eq(r.mech, 0);
	ck_assert_uint_eq(r.token_len, 0x1A6);
	ck_assert_int_eq(memcmp(r.token, "NTLMSSP\0\3", 9), 0);
	ck_assert_uint_eq(r.mic_len, 16);
	ck_assert_hex_eq(r.mic, 16, "0100000063775A9A5FD97F0600000000");
	for (size_t cut = 0; cut < n; cut++)
		ck_assert_int_ne(smb_spnego_resp_decode(b, cut, &r), AQ_OK);
}
END_TEST

START_TEST(test_encode_roundtrip)
{
	struct ut_buf w;
	struct smb_spnego_init i;
	struct smb_spnego_resp r;
	uint8_t big[300];

	ut_buf_init(&w, 4096);
	ck_assert_int_eq(smb_spnego_init2_encode(&w, SMB_SPNEGO_NTLMSSP), AQ_OK);
	/* RFC 4178 NegTokenInit with mechTypes { NTLMSSP }, as Windows lays it */
	ck_assert_hex_eq(ut_buf_bytes(&w), w.len, "601c 0606 2b0601050502 a012 3010 a00e 300c 060a 2b06010401823702020a");
	ck_assert_int_eq(smb_spnego_init_decode(ut_buf_bytes(&w), w.len, &i), AQ_OK);
	ck_assert_uint_eq(i.mechs, SMB_SPNEGO_NTLMSSP);
	ck_assert_ptr_null(i.token);
	w.len = 0;
	ck_assert_int_eq(smb_spnego_init2_encode(&w, SMB_SPNEGO_NTLMSSP | SMB_SPNEGO_KRB5 | SMB_SPNEGO_MS_KRB5), AQ_OK);
	ck_assert_int_eq(smb_spnego_init_decode(ut_buf_bytes(&w), w.len, &i), AQ_OK);
	ck_assert_uint_eq(i.mechs, SMB_SPNEGO_NTLMSSP | SMB_SPNEGO_KRB5 | SMB_SPNEGO_MS_KRB5);
	ck_assert_uint_eq(i.first, SMB_SPNEGO_NTLMSSP);
	ck_assert_int_eq(smb_spnego_init2_encode(&w, 0), AQ_EINVAL);
	ck_assert_int_eq(smb_spnego_init2_encode(&w, SMB_SPNEGO_OTHER), AQ_EINVAL);

	/* accept-completed with a 300-byte token (two length bytes) and a MIC */
	memset(big, 0x5a, sizeof(big));
	w.len = 0;
	ck_assert_int_eq(smb_spnego_resp_encode(&w, SMB_SPNEGO_ACCEPT_COMPLETED, 0, big, sizeof(big), big, 16), AQ_OK);
	ck_assert_int_eq(smb_spnego_resp_decode(ut_buf_bytes(&w), w.len, &r), AQ_OK);
	ck_assert_int_eq(r.state, SMB_SPNEGO_ACCEPT_COMPLETED);
	ck_assert_uint_eq(r.token_len, sizeof(big));
	ck_assert_uint_eq(r.mic_len, 16);
	/* reject, nothing else: the final answer to a wrong password */
	w.len = 0;
	ck_assert_int_eq(smb_spnego_resp_encode(&w, SMB_SPNEGO_REJECT, 0, NULL, 0, NULL, 0), AQ_OK);
	ck_assert_hex_eq(ut_buf_bytes(&w), w.len, "a107 3005 a003 0a01 02");
	ck_assert_int_eq(smb_spnego_resp_encode(&w, 4, 0, NULL, 0, NULL, 0), AQ_EINVAL);
	ck_assert_int_eq(smb_spnego_resp_encode(&w, 0, SMB_SPNEGO_OTHER, NULL, 0, NULL, 0), AQ_EINVAL);
	ut_buf_cleanup(&w);
}
END_TEST

START_TEST(test_der_malformed)
{
	uint8_t b[64];
	size_t n;
	struct smb_spnego_init i;
	struct smb_spnego_resp r;
	static const char *const bad_init[] = {
		/* indefinite length */
		"6080 0606 2b0601050502 0000",
		/* five length bytes */
		"6085 0000000010 0606 2b0601050502",
		/* a length past the end */
		"601c 0606 2b0601050502 a013 3010 a00e 300c 060a 2b06010401823702020a",
		/* not SPNEGO's OID (Kerberos's) */
		"601d 0609 2a864886f712010202 a010 300e a00c 300a 0608 2a864886f7120102",
		/* high tag number form */
		"601c 0606 2b0601050502 bf12 3010 a00e 300c 060a 2b06010401823702020a",
		/* mechTypes not a SEQUENCE */
		"601c 0606 2b0601050502 a012 3010 a00e 310c 060a 2b06010401823702020a",
		/* an unknown field [5] inside NegTokenInit */
		"6020 0606 2b0601050502 a016 3014 a00e 300c 060a 2b06010401823702020a a502 0400",
		/* a mechToken that is not an OCTET STRING */
		"6020 0606 2b0601050502 a016 3014 a00e 300c 060a 2b06010401823702020a a202 0500",
		/* a 4-byte length of 0xffffffff */
		"6084 ffffffff 0606 2b0601050502",
	};
	static const char *const bad_resp[] = {
		"a107 3005 a003 0a01 07",         /* negState out of range */
		"a108 3006 a004 0a02 0001",       /* negState two bytes */
		"a107 3005 a003 0a01 02 00",      /* a trailing byte after the element */
		"a109 3005 a003 0a01 02 0000",    /* bytes after the SEQUENCE inside [1] */
		"a105 3003 a401 00",              /* [4] */
		"a004 3002 0400",                 /* [0]: a NegTokenInit where a Resp is expected */
	};

	for (size_t k = 0; k < sizeof(bad_init) / sizeof(bad_init[0]); k++) {
		n = smb_hex(bad_init[k], b, sizeof(b));
		ck_assert_msg(smb_spnego_init_decode(b, n, &i) == AQ_EINVAL, "init case %zu", k);
	}
	for (size_t k = 0; k < sizeof(bad_resp) / sizeof(bad_resp[0]); k++) {
		n = smb_hex(bad_resp[k], b, sizeof(b));
		ck_assert_msg(smb_spnego_resp_decode(b, n, &r) == AQ_EINVAL, "resp case %zu", k);
	}
	/* unknown mechanisms are counted, not refused */
	n = smb_hex("601b 0606 2b0601050502 a011 300f a00d 300b 0603 2a0304 0604 2b060102", b, sizeof(b));
	ck_assert_int_eq(smb_spnego_init_decode(b, n, &i), AQ_OK);
	ck_assert_uint_eq(i.mechs, SMB_SPNEGO_OTHER);
	ck_assert_int_eq(smb_spnego_init_decode(b, SMB_SPNEGO_MAX + 1, &i), AQ_ETOOBIG);
}
END_TEST

static Suite *smb_spnego_suite(void)
{
	Suite *s = suite_create("smb_spnego");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_init_client);
	tcase_add_test(tc, test_init_windows_server);
	tcase_add_test(tc, test_resp_windows);
	tcase_add_test(tc, test_encode_roundtrip);
	tcase_add_test(tc, test_der_malformed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_spnego_suite());
}
