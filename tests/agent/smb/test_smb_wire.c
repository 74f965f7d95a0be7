/* test_smb_wire: the SMB2/3 codecs of agent/smb/smb_wire.c and
 * smb_wire_neg.c: the cursor and buffer, UTF-16, framing, the SMB2 and
 * transform headers, compounds, NEGOTIATE, SESSION_SETUP and TREE_CONNECT,
 * against real Windows messages (smb_vectors.h) and
 * hand-built ones laid out from MS-SMB2 section 2.2, with the malformed
 * cases: truncated, offsets outside the message, lengths overflowing. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_wire.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_hex.h"
#include "tests/agent/smb/smb_testmsg.h"
#include "tests/agent/smb/smb_vectors.h"
#include "tests/lib/aqt.h"

START_TEST(test_cursor_sticky)
{
	static const uint8_t b[] = { 1, 2, 3, 4, 5, 6, 7 };
	struct smb_wire_cur c;

	smb_wire_cur_init(&c, b, sizeof(b));
	ck_assert_uint_eq(smb_wire_u16(&c), 0x0201);
	ck_assert_uint_eq(smb_wire_u32(&c), 0x06050403);
	ck_assert_uint_eq(smb_wire_u16(&c), 0); /* one byte left */
	ck_assert_int_eq(c.err, AQ_EINVAL);
	ck_assert_uint_eq(smb_wire_u8(&c), 0); /* would fit, but sticky */
	ck_assert_uint_eq(smb_wire_left(&c), 0);

	smb_wire_cur_init(&c, b, sizeof(b));
	smb_wire_seek(&c, 7);
	ck_assert_int_eq(c.err, AQ_OK);
	smb_wire_seek(&c, 8);
	ck_assert_int_eq(c.err, AQ_EINVAL);

	smb_wire_cur_init(&c, b, sizeof(b));
	smb_wire_skip(&c, 3);
	smb_wire_align8(&c); /* fewer than 5 left: to the end */
	ck_assert_uint_eq(c.pos, 7);
	ck_assert_int_eq(c.err, AQ_OK);
	ck_assert_ptr_null(smb_wire_bytes(&c, SIZE_MAX));
	ck_assert_int_eq(c.err, AQ_EINVAL);
}
END_TEST

START_TEST(test_buf_cap)
{
	struct ut_buf b;

	ut_buf_init(&b, 10);
	smb_wire_put_u64(&b, 0x0807060504030201ull);
	smb_wire_put_u16(&b, 0x0a09);
	ck_assert_int_eq(b.err, AQ_OK);
	ck_assert_hex_eq(ut_buf_bytes(&b), b.len, "0102030405060708090a");
	smb_wire_put_u8(&b, 1);
	ck_assert_int_eq(b.err, AQ_ETOOBIG);
	ck_assert_uint_eq(b.len, 10);
	ck_assert_ptr_null(ut_buf_put_zero(&b, 0));
	ut_buf_cleanup(&b);

	ut_buf_init(&b, 1u << 20);
	ck_assert_ptr_null(ut_buf_put_zero(&b, SIZE_MAX)); /* no overflow */
	ck_assert_int_eq(b.err, AQ_ETOOBIG);
	ut_buf_cleanup(&b);
	ut_buf_cleanup(&b); /* twice is harmless */
}
END_TEST

START_TEST(test_utf16)
{
	/* "a\u00e9\u20ac" and U+1F600 as a surrogate pair */
	static const uint8_t u16[] = { 'a', 0, 0xe9, 0, 0xac, 0x20, 0x3d, 0xd8, 0x00, 0xde };
	static const uint8_t lone[] = { 0x3d, 0xd8, 'a', 0 };
	static const uint8_t nul[] = { 'a', 0, 0, 0 };
	char out[32];
	size_t n;
	struct ut_buf b;

	ck_assert_int_eq(smb_wire_utf16_to_utf8(u16, sizeof(u16), out, sizeof(out), &n), AQ_OK);
	ck_assert_str_eq(out, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	ck_assert_uint_eq(n, 10);
	ck_assert_int_eq(smb_wire_utf16_to_utf8(u16, sizeof(u16), out, 10, &n), AQ_ETOOBIG); /* no room for NUL */
	ck_assert_int_eq(smb_wire_utf16_to_utf8(u16, 3, out, sizeof(out), &n), AQ_EINVAL);   /* odd */
	ck_assert_int_eq(smb_wire_utf16_to_utf8(lone, sizeof(lone), out, sizeof(out), &n), AQ_EINVAL);
	ck_assert_int_eq(smb_wire_utf16_to_utf8(u16, 8, out, sizeof(out), &n), AQ_EINVAL); /* cut pair */
	ck_assert_int_eq(smb_wire_utf16_to_utf8(nul, sizeof(nul), out, sizeof(out), &n), AQ_EINVAL);

	ut_buf_init(&b, 64);
	ck_assert_int_eq(smb_wire_put_utf16(&b, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10, &n), AQ_OK);
	ck_assert_uint_eq(n, sizeof(u16));
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), u16, sizeof(u16)), 0);
	ck_assert_int_eq(smb_wire_put_utf16(&b, "\xc0\x80", 2, &n), AQ_EINVAL);     /* overlong */
	ck_assert_int_eq(smb_wire_put_utf16(&b, "\xed\xa0\x80", 3, &n), AQ_EINVAL); /* surrogate */
	ck_assert_int_eq(smb_wire_put_utf16(&b, "\xe2\x82", 2, &n), AQ_EINVAL);     /* truncated */
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_framing)
{
	static const uint8_t ok[4] = { 0, 0x01, 0x00, 0x00 }, bad[4] = { 0x85, 0, 0, 4 }, tiny[4] = { 0, 0, 0, 3 };
	uint32_t len;

	ck_assert_int_eq(smb_wire_frame_len(ok, 1u << 16, &len), AQ_OK);
	ck_assert_uint_eq(len, 65536);
	ck_assert_int_eq(smb_wire_frame_len(ok, 65535, &len), AQ_ETOOBIG);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(smb_wire_frame_len(bad, 1u << 16, &len), AQ_EINVAL); /* NetBIOS keep-alive etc. */
	ck_assert_int_eq(smb_wire_frame_len(tiny, 1u << 16, &len), AQ_EINVAL);
	ck_assert_int_eq(smb_wire_frame_kind((const uint8_t *)"\xfeSMB", 4), SMB_WIRE_SMB2);
	ck_assert_int_eq(smb_wire_frame_kind((const uint8_t *)"\xfdSMB", 4), SMB_WIRE_TRANSFORM);
	ck_assert_int_eq(smb_wire_frame_kind((const uint8_t *)"\xfcSMB", 4), SMB_WIRE_COMPRESSED);
	ck_assert_int_eq(smb_wire_frame_kind((const uint8_t *)"\xffSMB", 4), SMB_WIRE_SMB1);
	ck_assert_int_eq(smb_wire_frame_kind((const uint8_t *)"\xfeSMC", 4), SMB_WIRE_UNKNOWN);
	ck_assert_int_eq(smb_wire_frame_kind((const uint8_t *)"\xfeSM", 3), SMB_WIRE_UNKNOWN);
}
END_TEST

START_TEST(test_hdr_windows)
{
	uint8_t buf[1024];
	struct smb_wire_msg m;

	one_msg(SMB_VEC_SS_RSP1, buf, sizeof(buf), &m);
	ck_assert_uint_eq(m.hdr.status, 0xC0000016u); /* STATUS_MORE_PROCESSING_REQUIRED */
	ck_assert_uint_eq(m.hdr.command, SMB2_SESSION_SETUP);
	ck_assert_uint_eq(m.hdr.credits, 1);
	ck_assert_uint_eq(m.hdr.flags, SMB2_FLAGS_SERVER_TO_REDIR);
	ck_assert_uint_eq(m.hdr.message_id, 2);
	ck_assert_uint_eq(m.hdr.session_id, 0x0000100000000019ull);
	ck_assert_uint_eq(m.hdr.tree_id, 0);
	ck_assert_str_eq(smb_wire_cmd_name(m.hdr.command), "SESSION_SETUP");
	ck_assert_str_eq(smb_wire_cmd_name(0x13), "UNKNOWN");
	ck_assert_uint_eq(smb_wire_req_size(SMB2_CREATE), 57);
	ck_assert_uint_eq(smb_wire_req_size(0x99), 0);
}
END_TEST

START_TEST(test_hdr_roundtrip_async)
{
	struct smb_wire_hdr h = { .credit_charge = 2, .status = 0x103, .command = SMB2_CHANGE_NOTIFY, .credits = 5,
				  .flags = SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND,
				  .message_id = 0x1122334455667788ull, .async_id = 0xabcdefull, .session_id = 42 },
			    d;
	struct ut_buf b;

	memset(h.signature, 0x5a, 16);
	ut_buf_init(&b, 64);
	smb_wire_hdr_encode(&b, &h);
	ck_assert_uint_eq(b.len, SMB2_HDR_LEN);
	/* AsyncId takes the place of Reserved and TreeId (2.2.1.1) */
	ck_assert_uint_eq(smb_wire_get_u64(ut_buf_bytes(&b) + 32), 0xabcdefull);
	ck_assert_int_eq(smb_wire_hdr_decode(ut_buf_bytes(&b), b.len, &d), AQ_OK);
	ck_assert_int_eq(memcmp(&h, &d, sizeof(h)), 0);
	ck_assert_int_eq(smb_wire_hdr_decode(ut_buf_bytes(&b), 63, &d), AQ_EINVAL);
	ut_buf_bytes(&b)[4] = 63; /* StructureSize */
	ck_assert_int_eq(smb_wire_hdr_decode(ut_buf_bytes(&b), b.len, &d), AQ_EINVAL);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_compound)
{
	uint8_t f[512];
	struct ut_buf b;
	struct smb_wire_hdr h = { .command = SMB2_CREATE };
	struct smb_wire_chain ch;
	struct smb_wire_msg m;
	size_t second;

	ut_buf_init(&b, sizeof(f));
	smb_wire_hdr_encode(&b, &h);
	smb_wire_put_u16(&b, 4);
	smb_wire_put_u16(&b, 0);
	smb_wire_put_u8(&b, 0xaa); /* 69 bytes: the link pads to 72 */
	smb_wire_chain_link(&b, 0);
	second = b.len;
	ck_assert_uint_eq(second, 72);
	h.command = SMB2_CLOSE;
	h.flags = SMB2_FLAGS_RELATED_OPERATIONS;
	smb_wire_hdr_encode(&b, &h);
	smb_wire_put_u32(&b, 0x00000004);
	ck_assert_int_eq(b.err, AQ_OK);
	memcpy(f, ut_buf_bytes(&b), b.len);

	smb_wire_chain_init(&ch, f, b.len);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &m), 1);
	ck_assert_uint_eq(m.index, 0);
	ck_assert_uint_eq(m.len, 72);
	ck_assert_uint_eq(m.body_len, 8);
	ck_assert_int_eq(smb_wire_empty_req_decode(&m), AQ_OK);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &m), 1);
	ck_assert_uint_eq(m.index, 1);
	ck_assert_uint_eq(m.hdr.command, SMB2_CLOSE);
	ck_assert(m.hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS);
	ck_assert_uint_eq(m.body_len, 4);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &m), 0);

	/* NextCommand not 8-aligned, inside the header, at or past the end */
	{
		static const uint32_t bad[] = { 68, 8, 60, 72 + 68, 0xfffffff8u };
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			uint32_t nc = bad[i];

			memcpy(f, ut_buf_bytes(&b), b.len);
			f[20] = (uint8_t)nc, f[21] = (uint8_t)(nc >> 8), f[22] = (uint8_t)(nc >> 16),
			f[23] = (uint8_t)(nc >> 24);
			smb_wire_chain_init(&ch, f, b.len);
			ck_assert_int_eq(smb_wire_chain_next(&ch, &m), AQ_EINVAL);
			ck_assert_int_eq(smb_wire_chain_next(&ch, &m), 0); /* stops */
		}
	}
	/* the second header truncated */
	smb_wire_chain_init(&ch, ut_buf_bytes(&b), second + 40);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &m), 1);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &m), AQ_EINVAL);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_negotiate_windows)
{
	uint8_t buf[1024];
	struct smb_wire_msg m;
	struct smb_wire_negotiate_req r;
	static const unsigned ciphers_ours = 1u << SMB2_ENCRYPTION_AES128_CCM | 1u << SMB2_ENCRYPTION_AES128_GCM;

	one_msg(SMB_VEC_NEG_REQ, buf, sizeof(buf), &m);
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_OK);
	ck_assert_uint_eq(r.dialect_count, 5);
	ck_assert_uint_eq(r.dialects[4], SMB2_DIALECT_311);
	ck_assert_uint_eq(r.capabilities, 0x3f);
	ck_assert_uint_eq(r.client_guid[0], 0xEC);
	ck_assert(r.has_preauth && r.sha512);
	ck_assert(r.has_encryption && !r.has_signing && !r.has_compression);
	ck_assert_uint_eq(r.cipher_count, 2);
	ck_assert_uint_eq(r.ciphers[0], SMB2_ENCRYPTION_AES128_GCM);
	ck_assert_uint_eq(r.ciphers[1], SMB2_ENCRYPTION_AES128_CCM);
	ck_assert_uint_eq(smb_wire_negotiate_pick_dialect(&r, 0x1f), SMB2_DIALECT_311);
	ck_assert_uint_eq(smb_wire_negotiate_pick_dialect(&r, 0x07), SMB2_DIALECT_300);
	ck_assert_uint_eq(smb_wire_negotiate_pick_dialect(&r, 0), 0);
	ck_assert_uint_eq(smb_wire_negotiate_pick(r.ciphers, r.cipher_count, ciphers_ours), SMB2_ENCRYPTION_AES128_GCM);
	ck_assert_uint_eq(smb_wire_negotiate_pick(r.ciphers, r.cipher_count, 1u << 4), SMB_WIRE_NONE);
}
END_TEST

/* Our NEGOTIATE response encoder, given the fields of Windows' response,
 * writes Windows' bytes. */
START_TEST(test_negotiate_rsp_windows)
{
	uint8_t want[1024], sec[512];
	struct smb_wire_msg m;
	struct ut_buf b;
	struct smb_wire_hdr h;
	struct smb_wire_negotiate_rsp r = {
		.security_mode = SMB2_NEGOTIATE_SIGNING_ENABLED,
		.dialect = SMB2_DIALECT_311,
		.capabilities = 0x2f,
		.max_transact = 0x800000,
		.max_read = 0x800000,
		.max_write = 0x800000,
		.system_time = 0x01D0AECBADE5DAD8ull,
		.start_time = 0x01D0AE95B04A0909ull,
		.cipher = SMB2_ENCRYPTION_AES128_GCM,
		.signing = SMB_WIRE_NONE,
	};

	one_msg(SMB_VEC_NEG_RSP, want, sizeof(want), &m);
	memcpy(r.server_guid, m.body + 8, 16);
	ck_assert_uint_eq(smb_wire_get_u16(m.body + 58), 0x140);
	memcpy(sec, m.p + 0x80, 0x140);
	r.sec_blob = sec;
	r.sec_len = 0x140;
	memcpy(r.salt, m.p + 0x1C0 + 8 + 6, 32);
	h = m.hdr;
	ut_buf_init(&b, 4096);
	smb_wire_hdr_encode(&b, &h);
	smb_wire_negotiate_rsp_encode(&b, 0, &r);
	ck_assert_int_eq(b.err, AQ_OK);
	ck_assert_uint_eq(b.len, m.len);
	/* Windows echoes the request's Reserved (0xFEFF) in the header; we
	 * write zero there, as MS-SMB2 says a server should. */
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), m.p, 32), 0);
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b) + 36, m.p + 36, m.len - 36), 0);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_negotiate_malformed)
{
	uint8_t base[1024], f[1024];
	struct smb_wire_msg m;
	struct smb_wire_negotiate_req r;
	size_t n = smb_hex(SMB_VEC_NEG_REQ, base, sizeof(base));

	/* truncated at every length: never OK past the fixed part minus one */
	for (size_t cut = SMB2_HDR_LEN; cut < n; cut++) {
		struct smb_wire_chain ch;

		smb_wire_chain_init(&ch, base, cut);
		if (smb_wire_chain_next(&ch, &m) != 1)
			continue;
		ck_assert_int_ne(smb_wire_negotiate_req_decode(&m, &r), AQ_OK);
	}
	/* DialectCount 0, and over the cap */
	memcpy(f, base, n);
	f[66] = 0, f[67] = 0;
	msg_of(f, n, &m);
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	f[66] = 0xff, f[67] = 0xff;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_ETOOBIG);
	/* context offset pointing into the dialects, not 8-aligned, past the end */
	memcpy(f, base, n);
	f[64 + 28] = 0x60;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 28] = 0x71;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 28] = 0xf8, f[64 + 29] = 0xff;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	/* a context DataLength past the frame */
	memcpy(f, base, n);
	f[0x70 + 2] = 0xff;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	/* more contexts announced than present */
	memcpy(f, base, n);
	f[64 + 32] = 3;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	/* two PREAUTH contexts: the ENCRYPTION one's type rewritten */
	memcpy(f, base, n);
	f[0xA0] = 1;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	/* empty cipher list */
	memcpy(f, base, n);
	f[0xA8] = 0;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	/* the hash list's salt length past the context */
	memcpy(f, base, n);
	f[0x70 + 10] = 0x21;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	/* StructureSize wrong */
	memcpy(f, base, n);
	f[64] = 0x25;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_EINVAL);
	/* unknown context types are skipped */
	memcpy(f, base, n);
	f[0xA0] = 0x77;
	ck_assert_int_eq(smb_wire_negotiate_req_decode(&m, &r), AQ_OK);
	ck_assert(!r.has_encryption);
}
END_TEST

START_TEST(test_smb1_negotiate)
{
	/* SMB1 header (32 bytes) with Command 0x72, WordCount 0, ByteCount,
	 * dialect strings: what smbclient sends first. */
	uint8_t f[128] = { 0xff, 'S', 'M', 'B', 0x72 };
	static const char d[] = "\x02NT LM 0.12\0\x02SMB 2.002\0\x02SMB 2.???";
	size_t dl = sizeof(d); /* with the last NUL */
	uint16_t dialect;

	f[32] = 0;
	f[33] = (uint8_t)dl;
	memcpy(f + 35, d, dl);
	ck_assert_int_eq(smb_wire_smb1_negotiate(f, 35 + dl, &dialect), AQ_OK);
	ck_assert_uint_eq(dialect, SMB2_DIALECT_WILDCARD);
	f[35 + 12 + 9] = '3'; /* "SMB 2.003" */
	f[35 + 23 + 8] = '!'; /* "SMB 2.??!" */
	ck_assert_int_eq(smb_wire_smb1_negotiate(f, 35 + dl, &dialect), AQ_EUNIMPL);
	ck_assert_int_eq(smb_wire_smb1_negotiate(f, 35 + dl - 1, &dialect), AQ_EINVAL); /* ByteCount past end */
	f[33] = (uint8_t)(dl - 1);                                                      /* last name unterminated */
	ck_assert_int_eq(smb_wire_smb1_negotiate(f, 35 + dl, &dialect), AQ_EINVAL);
	f[4] = 0x73;
	ck_assert_int_eq(smb_wire_smb1_negotiate(f, 35 + dl, &dialect), AQ_EINVAL);
}
END_TEST

START_TEST(test_session_setup_windows)
{
	uint8_t buf[1024];
	struct smb_wire_msg m;
	struct smb_wire_session_setup_req r;
	struct ut_buf b;

	one_msg(SMB_VEC_SS_REQ2, buf, sizeof(buf), &m);
	ck_assert_int_eq(smb_wire_session_setup_req_decode(&m, &r), AQ_OK);
	ck_assert_uint_eq(r.security_mode, SMB2_NEGOTIATE_SIGNING_ENABLED);
	ck_assert_uint_eq(r.capabilities, 1);
	ck_assert_uint_eq(r.blob_len, 0x1CF);
	ck_assert_ptr_eq(r.blob, m.p + 0x58);
	ck_assert_uint_eq(r.blob[0], 0xA1); /* NegTokenResp */

	/* the blob one byte past the message; an offset inside the fixed part */
	buf[64 + 14] = 0xD0;
	ck_assert_int_eq(smb_wire_session_setup_req_decode(&m, &r), AQ_EINVAL);
	buf[64 + 14] = 0xCF;
	buf[64 + 12] = 0x50;
	ck_assert_int_eq(smb_wire_session_setup_req_decode(&m, &r), AQ_EINVAL);

	/* our response, given Windows' first response's blob, has its body */
	one_msg(SMB_VEC_SS_RSP1, buf, sizeof(buf), &m);
	ut_buf_init(&b, 4096);
	smb_wire_session_setup_rsp_encode(&b, 0, 0, m.body + 8, m.body_len - 8);
	ck_assert_int_eq(b.err, AQ_OK);
	ck_assert_uint_eq(b.len, m.body_len);
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), m.body, b.len), 0);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_tree_connect)
{
	/* StructureSize 9, Flags 0, PathOffset 72, PathLength 8, "\\s\x" */
	static const uint8_t body[] = { 9, 0, 0, 0, 72, 0, 8, 0, '\\', 0, '\\', 0, 's', 0, 'x', 0 };
	uint8_t f[256];
	size_t n = build(f, sizeof(f), SMB2_TREE_CONNECT, 0, body, sizeof(body));
	struct smb_wire_msg m;
	struct smb_wire_tree_connect_req r;
	struct ut_buf b;
	struct smb_wire_tree_connect_rsp rsp = { .share_type = SMB2_SHARE_TYPE_DISK,
						 .share_flags = SMB2_SHAREFLAG_ENCRYPT_DATA,
						 .maximal_access = 0x001f01ff };

	msg_of(f, n, &m);
	ck_assert_int_eq(smb_wire_tree_connect_req_decode(&m, &r), AQ_OK);
	ck_assert_uint_eq(r.path_len, 8);
	ck_assert_int_eq(memcmp(r.path, body + 8, 8), 0);
	f[64 + 6] = 7; /* odd length */
	ck_assert_int_eq(smb_wire_tree_connect_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 6] = 10; /* past the message */
	ck_assert_int_eq(smb_wire_tree_connect_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 6] = 8;
	f[64 + 2] = SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT;
	ck_assert_int_eq(smb_wire_tree_connect_req_decode(&m, &r), AQ_EUNIMPL);

	ut_buf_init(&b, 64);
	smb_wire_tree_connect_rsp_encode(&b, &rsp);
	ck_assert_hex_eq(ut_buf_bytes(&b), b.len, "1000 01 00 00800000 00000000 ff011f00");
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_transform_hdr)
{
	uint8_t f[52 + 64] = { 0 };
	struct smb_wire_transform t = { .orig_size = 64, .flags = SMB2_TRANSFORM_FLAG_ENCRYPTED, .session_id = 0x25 },
				  d;
	struct ut_buf b;

	memset(t.signature, 1, 16);
	memset(t.nonce, 2, 16);
	ut_buf_init(&b, 64);
	smb_wire_transform_encode(&b, &t);
	ck_assert_uint_eq(b.len, SMB2_TRANSFORM_LEN);
	memcpy(f, ut_buf_bytes(&b), b.len);
	ut_buf_cleanup(&b);
	ck_assert_int_eq(smb_wire_transform_decode(f, sizeof(f), &d), AQ_OK);
	ck_assert_int_eq(memcmp(&t, &d, sizeof(t)), 0);
	ck_assert_int_eq(smb_wire_transform_decode(f, sizeof(f) - 1, &d), AQ_EINVAL); /* size mismatch */
	f[36] = 0xff;                                                                 /* OriginalMessageSize */
	ck_assert_int_eq(smb_wire_transform_decode(f, sizeof(f), &d), AQ_EINVAL);
	f[36] = 64;
	f[42] = 0;
	ck_assert_int_eq(smb_wire_transform_decode(f, sizeof(f), &d), AQ_EINVAL);
	ck_assert_int_eq(smb_wire_transform_decode(f, 52 + 63, &d), AQ_EINVAL); /* no room for a header */
}
END_TEST

static Suite *smb_wire_suite(void)
{
	Suite *s = suite_create("smb_wire");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_cursor_sticky);
	tcase_add_test(tc, test_buf_cap);
	tcase_add_test(tc, test_utf16);
	tcase_add_test(tc, test_framing);
	tcase_add_test(tc, test_hdr_windows);
	tcase_add_test(tc, test_hdr_roundtrip_async);
	tcase_add_test(tc, test_compound);
	tcase_add_test(tc, test_negotiate_windows);
	tcase_add_test(tc, test_negotiate_rsp_windows);
	tcase_add_test(tc, test_negotiate_malformed);
	tcase_add_test(tc, test_smb1_negotiate);
	tcase_add_test(tc, test_session_setup_windows);
	tcase_add_test(tc, test_tree_connect);
	tcase_add_test(tc, test_transform_hdr);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_wire_suite());
}
