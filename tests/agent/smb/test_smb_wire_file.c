/* test_smb_wire_file: the SMB2 bodies of the commands on an open
 * (agent/smb/smb_wire_create.c, smb_wire_file.c): CREATE and its contexts,
 * READ, WRITE, LOCK, IOCTL, QUERY_DIRECTORY, QUERY_INFO, SET_INFO,
 * CHANGE_NOTIFY, CLOSE, FLUSH, OPLOCK_BREAK, against the Windows messages
 * of the "Encryption in SMB 3.0" blog (see test_smb_crypto.c) and bodies
 * laid out from MS-SMB2 2.2.13 to 2.2.26, with malformed variants. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_wire.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_hex.h"
#include "tests/agent/smb/smb_testmsg.h"
#include "tests/lib/aqt.h"

/* A CREATE body (2.2.13) for name "a\b" with the given context blob. */
static size_t create_req(uint8_t *f, size_t cap, const uint8_t *ctx, size_t ctx_len)
{
	uint8_t body[512] = { 57, 0, 0, SMB2_OPLOCK_LEVEL_LEASE };
	size_t n = 56;

	body[24] = 0x89, body[25] = 0x00, body[26] = 0x12;       /* DesiredAccess 0x00120089 */
	body[32] = 7;                                             /* ShareAccess RWD */
	body[36] = 1;                                             /* FILE_OPEN */
	body[40] = 0x40;                                          /* NON_DIRECTORY_FILE */
	body[44] = 120, body[46] = 6;                             /* NameOffset, NameLength */
	memcpy(body + n, "a\0\\\0b\0", 6);
	n += 6;
	n = (n + 7) & ~(size_t)7; /* contexts 8-aligned: 64 + 64 = 128 */
	if (ctx_len) {
		body[48] = (uint8_t)(SMB2_HDR_LEN + n);
		body[52] = (uint8_t)ctx_len;
		memcpy(body + n, ctx, ctx_len);
		n += ctx_len;
	}
	return build(f, cap, SMB2_CREATE, 0, body, n);
}

/* One create context (2.2.13.2): name at 16, data 8-aligned after it. */
static size_t ctx_put(uint8_t *p, uint32_t next, const char *name, const uint8_t *data, size_t dlen)
{
	size_t nlen = strlen(name), doff = (16 + nlen + 7) & ~(size_t)7;

	memset(p, 0, doff + dlen);
	p[0] = (uint8_t)next;
	p[4] = 16;
	p[6] = (uint8_t)nlen;
	p[10] = dlen ? (uint8_t)doff : 0;
	p[12] = (uint8_t)dlen;
	memcpy(p + 16, name, nlen);
	if (dlen)
		memcpy(p + doff, data, dlen);
	return doff + dlen;
}

START_TEST(test_create_contexts)
{
	uint8_t ctx[256] = { 0 }, f[512], lease[52] = { 0 }, dh2q[32] = { 0 };
	size_t n1, n2, n;
	struct smb_wire_msg m;
	struct smb_wire_create_req r;
	struct smb_wire_lease l;
	struct smb_wire_durable_v2 d;
	const struct smb_wire_create_ctx *c;

	memset(lease, 0x11, 16);
	lease[16] = SMB2_LEASE_READ_CACHING | SMB2_LEASE_HANDLE_CACHING;
	memset(lease + 32, 0x22, 16);
	lease[48] = 3; /* epoch */
	dh2q[0] = 0x60, dh2q[1] = 0xea; /* 60 s */
	dh2q[4] = 2;                    /* persistent */
	memset(dh2q + 16, 0x33, 16);
	n1 = ctx_put(ctx, 0, "RqLs", lease, sizeof(lease));
	ck_assert_uint_eq(n1, 76);
	n1 = 80; /* the next context 8-aligned */
	ctx[0] = (uint8_t)n1;
	n2 = ctx_put(ctx + n1, 0, "DH2Q", dh2q, sizeof(dh2q));
	n = ctx_put(ctx + n1 + n2, 0, "MxAc", NULL, 0);
	ctx[n1] = (uint8_t)n2;
	n += n1 + n2;

	msg_of(f, create_req(f, sizeof(f), ctx, n), &m);
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_OK);
	ck_assert_uint_eq(r.desired_access, 0x00120089);
	ck_assert_uint_eq(r.share_access, 7);
	ck_assert_uint_eq(r.disposition, 1);
	ck_assert_uint_eq(r.options, 0x40);
	ck_assert_uint_eq(r.name_len, 6);
	ck_assert_uint_eq(r.ctx_count, 3);
	ck_assert_ptr_nonnull(c = smb_wire_create_ctx_find(&r, "RqLs"));
	ck_assert_int_eq(smb_wire_lease_decode(c, &l), AQ_OK);
	ck_assert(l.v2);
	ck_assert_uint_eq(l.state, 3);
	ck_assert_uint_eq(l.epoch, 3);
	ck_assert_uint_eq(l.parent_key[15], 0x22);
	ck_assert_ptr_nonnull(c = smb_wire_create_ctx_find(&r, "DH2Q"));
	ck_assert_int_eq(smb_wire_durable_decode(c, &d), AQ_OK);
	ck_assert_uint_eq(d.timeout, 60000);
	ck_assert_uint_eq(d.flags, 2);
	ck_assert_uint_eq(d.create_guid[0], 0x33);
	ck_assert_ptr_nonnull(c = smb_wire_create_ctx_find(&r, "MxAc"));
	ck_assert_uint_eq(c->data_len, 0);
	ck_assert_ptr_null(smb_wire_create_ctx_find(&r, "QFid"));
	ck_assert_int_eq(smb_wire_lease_decode(c, &l), AQ_EINVAL); /* no payload */
	ck_assert_int_eq(smb_wire_durable_decode(c, &d), AQ_EINVAL);

	/* Next not 8-aligned; Next past the blob; Next pointing back at itself
	 * (0 ends the chain, so a loop needs Next < 16: refused) */
	ctx[0] = 70;
	msg_of(f, create_req(f, sizeof(f), ctx, n), &m);
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	ctx[0] = 248;
	msg_of(f, create_req(f, sizeof(f), ctx, n), &m);
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	ctx[0] = 8;
	msg_of(f, create_req(f, sizeof(f), ctx, n), &m);
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	ctx[0] = (uint8_t)n1;
	/* a name past its context; data past its context */
	ctx[6] = 60;
	msg_of(f, create_req(f, sizeof(f), ctx, n), &m);
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	ctx[6] = 4;
	ctx[12] = 57; /* 24 + 57 > 80 */
	msg_of(f, create_req(f, sizeof(f), ctx, n), &m);
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	ctx[12] = 52;
	/* a duplicate: the second context renamed RqLs */
	memcpy(ctx + n1 + 16, "RqLs", 4);
	msg_of(f, create_req(f, sizeof(f), ctx, n), &m);
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	memcpy(ctx + n1 + 16, "DH2Q", 4);
	/* the blob announced longer than the message */
	n = create_req(f, sizeof(f), ctx, n);
	msg_of(f, n, &m);
	f[64 + 52] = 0xff;
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 52] = (uint8_t)(n - 128);
	/* the name: odd, past the message, inside the fixed part */
	f[64 + 46] = 5;
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 46] = 6;
	f[64 + 44] = 100;
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 44] = 0xfe, f[64 + 45] = 0xff;
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 44] = 120, f[64 + 45] = 0;
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_OK);
}
END_TEST

START_TEST(test_create_ctx_cap)
{
	uint8_t ctx[1024], f[1200];
	size_t n = 0, i;
	struct smb_wire_msg m;
	struct smb_wire_create_req r;

	for (i = 0; i < SMB_WIRE_CREATE_CTX_MAX + 1; i++) {
		char name[5] = { 'C', 'x', (char)('A' + i / 10), (char)('0' + i % 10), 0 };
		size_t k = ctx_put(ctx + n, 0, name, NULL, 0);

		if (i < SMB_WIRE_CREATE_CTX_MAX)
			ctx[n] = (uint8_t)k;
		n += k;
	}
	/* ctx_put for 17 contexts of 24 bytes: the last one's Next stays 0 */
	ck_assert_uint_le(n, 255 * 2);
	{
		uint8_t body[1100] = { 57 };
		size_t bn = 64;

		body[44] = 128;
		body[48] = 128;
		body[52] = (uint8_t)n, body[53] = (uint8_t)(n >> 8);
		memcpy(body + bn, ctx, n);
		bn += n;
		msg_of(f, build(f, sizeof(f), SMB2_CREATE, 0, body, bn), &m);
	}
	ck_assert_int_eq(smb_wire_create_req_decode(&m, &r), AQ_ETOOBIG);
}
END_TEST

START_TEST(test_create_rsp)
{
	struct ut_buf b;
	struct smb_wire_lease l = { .state = 7, .epoch = 4, .v2 = true };
	struct ut_buf lb;
	struct smb_wire_create_rsp_ctx cx[2];
	struct smb_wire_create_rsp r = { .oplock_level = SMB2_OPLOCK_LEVEL_LEASE, .action = 2,
					 .attrs = { .eof = 5, .attributes = 0x80 }, .fid = { 1, 2 }, .ctx_count = 2,
					 .ctx = cx };
	struct smb_wire_hdr h = { .command = SMB2_CREATE };
	struct smb_wire_create_ctx back;
	struct smb_wire_lease l2;

	memset(l.key, 0xab, 16);
	ut_buf_init(&lb, 64);
	smb_wire_lease_encode(&lb, &l);
	ck_assert_uint_eq(lb.len, 52);
	cx[0] = (struct smb_wire_create_rsp_ctx){ .name = "RqLs", .data = ut_buf_bytes(&lb), .data_len = lb.len };
	cx[1] = (struct smb_wire_create_rsp_ctx){ .name = "MxAc", .data = (const uint8_t *)"\0\0\0\0\xff\x01\x1f\x00",
						  .data_len = 8 };
	ut_buf_init(&b, 4096);
	ut_buf_put_zero(&b, 8); /* the header need not start at 0 */
	smb_wire_hdr_encode(&b, &h);
	smb_wire_create_rsp_encode(&b, 8, &r);
	ck_assert_int_eq(b.err, AQ_OK);
	/* 88 fixed bytes, contexts at 64 + 88 = 152 */
	ck_assert_uint_eq(smb_wire_get_u16(ut_buf_bytes(&b) + 8 + 64), 89);
	ck_assert_uint_eq(smb_wire_get_u64(ut_buf_bytes(&b) + 8 + 64 + 48), 5);     /* EndofFile */
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 8 + 64 + 56), 0x80);  /* FileAttributes */
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 8 + 64 + 80), 152);
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 8 + 64 + 84), 80 + 32);
	/* first context: Next 80 (76 rounded up), name at 16, data at 24 */
	ck_assert_hex_eq(ut_buf_bytes(&b) + 8 + 152, 24, "50000000 1000 0400 0000 1800 34000000 52714c73 00000000");
	back = (struct smb_wire_create_ctx){ .name = ut_buf_bytes(&b) + 8 + 152 + 16, .name_len = 4, .data = ut_buf_bytes(&b) + 8 + 152 + 24,
					     .data_len = 52 };
	ck_assert_int_eq(smb_wire_lease_decode(&back, &l2), AQ_OK);
	ck_assert_int_eq(memcmp(&l, &l2, sizeof(l)), 0);
	ck_assert_hex_eq(ut_buf_bytes(&b) + 8 + 152 + 80, 32, "00000000 1000 0400 0000 1800 08000000 4d784163 00000000"
						  "00000000 ff011f00");
	ck_assert_uint_eq(b.len, 8 + 152 + 80 + 32);
	ut_buf_cleanup(&b);
	ut_buf_cleanup(&lb);
}
END_TEST

/* The blog's WRITE and READ requests (Encryption in SMB 3.0, see
 * test_smb_crypto.c), decoded. */
START_TEST(test_read_write_windows)
{
	uint8_t buf[512];
	struct smb_wire_msg m;
	struct smb_wire_write_req w;
	struct smb_wire_read_req rd;
	struct ut_buf b;

	one_msg("FE534D4240000100000000000900400008000000000000000400000000000000"
		"FFFE0000010000001100001400E4080000000000000000000000000000000000"
		"3100700017000000000000000000000015010000390000020100000039020000"
		"00000000000000007000000000000000536D623320656E6372797074696F6E20"
		"74657374696E67",
		buf, sizeof(buf), &m);
	ck_assert_int_eq(smb_wire_write_req_decode(&m, &w), AQ_OK);
	ck_assert_uint_eq(w.offset, 0);
	ck_assert_uint_eq(w.fid.persistent, 0x0200003900000115ull);
	ck_assert_uint_eq(w.fid.volatile_, 0x0000023900000001ull);
	ck_assert_uint_eq(w.data_len, 23);
	ck_assert_int_eq(memcmp(w.data, "Smb3 encryption testing", 23), 0);
	buf[64 + 4] = 24; /* Length one past the message */
	ck_assert_int_eq(smb_wire_write_req_decode(&m, &w), AQ_EINVAL);
	buf[64 + 4] = 0xff, buf[64 + 7] = 0xff; /* huge Length */
	ck_assert_int_eq(smb_wire_write_req_decode(&m, &w), AQ_EINVAL);
	buf[64 + 4] = 23, buf[64 + 7] = 0;
	buf[64 + 2] = 0x60; /* DataOffset inside the fixed part */
	ck_assert_int_eq(smb_wire_write_req_decode(&m, &w), AQ_EINVAL);
	buf[64 + 2] = 0x70;
	buf[64 + 32] = 1; /* Channel RDMA_V1 */
	ck_assert_int_eq(smb_wire_write_req_decode(&m, &w), AQ_EINVAL);

	one_msg("FE534D4240000100000000000800400008000000000000000500000000000000"
		"FFFE0000010000001100001400E4080000000000000000000000000000000000"
		"3100000017000000000000000000000015010000390000020100000039020000"
		"0000000000000000000000000000000000",
		buf, sizeof(buf), &m);
	ck_assert_int_eq(smb_wire_read_req_decode(&m, &rd), AQ_OK);
	ck_assert_uint_eq(rd.length, 23);
	ck_assert_uint_eq(rd.offset, 0);
	ck_assert_uint_eq(rd.fid.persistent, 0x0200003900000115ull);
	buf[64 + 4] = 0x01, buf[64 + 5] = 0x00, buf[64 + 6] = 0x80; /* 8 MiB + 1 */
	ck_assert_int_eq(smb_wire_read_req_decode(&m, &rd), AQ_ETOOBIG);
	buf[64 + 4] = 0x00;
	ck_assert_int_eq(smb_wire_read_req_decode(&m, &rd), AQ_OK); /* 8 MiB exactly */
	ck_assert_uint_eq(rd.length, SMB_WIRE_IO_MAX);
	buf[64 + 4] = 23, buf[64 + 6] = 0;
	/* The server's READ response to it (decrypted in the same blog): */
	ut_buf_init(&b, 64);
	smb_wire_read_rsp_encode(&b, 0, 23, 0);
	ck_assert_hex_eq(ut_buf_bytes(&b), b.len, "11005000170000000000000000000000");
	ut_buf_cleanup(&b);
	ut_buf_init(&b, 64);
	smb_wire_write_rsp_encode(&b, 23);
	ck_assert_hex_eq(ut_buf_bytes(&b), b.len, "11000000170000000000000000000000");
	ut_buf_cleanup(&b);
	m.body_len = 47; /* truncated fixed part */
	ck_assert_int_eq(smb_wire_read_req_decode(&m, &rd), AQ_EINVAL);
}
END_TEST

START_TEST(test_lock)
{
	uint8_t body[24 + 24 * 3] = { 48, 0, 2 }, f[256];
	struct smb_wire_msg m;
	struct smb_wire_lock_req r;
	size_t n;

	body[4] = 0x11;       /* LockSequence */
	body[8] = 0x5;        /* FileId */
	body[24 + 0] = 0x10;  /* lock 0: offset 16 */
	body[24 + 8] = 0x08;  /*   length 8 */
	body[24 + 16] = SMB2_LOCKFLAG_EXCLUSIVE | SMB2_LOCKFLAG_FAIL_IMMEDIATELY;
	body[48 + 16] = SMB2_LOCKFLAG_UNLOCK;
	n = build(f, sizeof(f), SMB2_LOCK, 0, body, 72);
	msg_of(f, n, &m);
	ck_assert_int_eq(smb_wire_lock_req_decode(&m, &r), AQ_OK);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_uint_eq(r.sequence, 0x11);
	ck_assert_uint_eq(r.fid.persistent, 5);
	ck_assert_uint_eq(r.locks[0].offset, 16);
	ck_assert_uint_eq(r.locks[0].length, 8);
	ck_assert_uint_eq(r.locks[0].flags, 0x12);
	ck_assert_uint_eq(r.locks[1].flags, SMB2_LOCKFLAG_UNLOCK);
	f[64 + 2] = 3; /* one more than present */
	ck_assert_int_eq(smb_wire_lock_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 2] = 0;
	ck_assert_int_eq(smb_wire_lock_req_decode(&m, &r), AQ_EINVAL);
	f[64 + 2] = 0xff, f[64 + 3] = 0xff;
	ck_assert_int_eq(smb_wire_lock_req_decode(&m, &r), AQ_ETOOBIG);
}
END_TEST

START_TEST(test_ioctl_validate)
{
	/* IOCTL (2.2.31) carrying VALIDATE_NEGOTIATE_INFO (2.2.31.4) */
	uint8_t body[56 + 32] = { 57 }, f[256];
	struct smb_wire_msg m;
	struct smb_wire_ioctl_req r;
	struct smb_wire_validate_negotiate v;
	struct ut_buf b;
	struct smb_wire_fid all = { SMB_WIRE_FID_RELATED, SMB_WIRE_FID_RELATED };
	uint32_t code = FSCTL_VALIDATE_NEGOTIATE_INFO;
	uint8_t guid[16];
	size_t n;

	memcpy(body + 4, &(uint8_t[4]){ (uint8_t)code, (uint8_t)(code >> 8), (uint8_t)(code >> 16), 0 }, 4);
	memset(body + 8, 0xff, 16);
	body[24] = 120;        /* InputOffset */
	body[28] = 32;         /* InputCount */
	body[44] = 24;         /* MaxOutputResponse */
	body[48] = SMB2_0_IOCTL_IS_FSCTL;
	body[56] = 0x7f;       /* Capabilities */
	memset(body + 60, 0x42, 16);
	body[76] = 1;          /* SecurityMode */
	body[78] = 4;          /* DialectCount */
	body[80] = 0x02, body[81] = 0x02, body[82] = 0x10, body[83] = 0x02;
	body[84] = 0x00, body[85] = 0x03, body[86] = 0x02, body[87] = 0x03;
	n = build(f, sizeof(f), SMB2_IOCTL, 0, body, sizeof(body));
	msg_of(f, n, &m);
	ck_assert_int_eq(smb_wire_ioctl_req_decode(&m, &r), AQ_OK);
	ck_assert_uint_eq(r.ctl_code, FSCTL_VALIDATE_NEGOTIATE_INFO);
	ck_assert_uint_eq(r.fid.persistent, SMB_WIRE_FID_RELATED);
	ck_assert_uint_eq(r.flags, SMB2_0_IOCTL_IS_FSCTL);
	ck_assert_uint_eq(r.max_output_response, 24);
	ck_assert_int_eq(smb_wire_validate_negotiate_decode(r.input, r.input_len, &v), AQ_OK);
	ck_assert_uint_eq(v.capabilities, 0x7f);
	ck_assert_uint_eq(v.dialect_count, 4);
	ck_assert_uint_eq(v.dialects[3], SMB2_DIALECT_302);
	ck_assert_int_eq(smb_wire_validate_negotiate_decode(r.input, r.input_len - 1, &v), AQ_EINVAL);
	ck_assert_int_eq(smb_wire_validate_negotiate_decode(r.input, 23, &v), AQ_EINVAL);
	f[64 + 28] = 33;
	ck_assert_int_eq(smb_wire_ioctl_req_decode(&m, &r), AQ_EINVAL);

	memset(guid, 0x24, 16);
	ut_buf_init(&b, 256);
	{
		struct ut_buf out;

		ut_buf_init(&out, 24);
		smb_wire_validate_negotiate_encode(&out, 0x2f, guid, 1, SMB2_DIALECT_302);
		ck_assert_uint_eq(out.len, 24);
		smb_wire_ioctl_rsp_encode(&b, 0, code, &all, ut_buf_bytes(&out), out.len);
		ut_buf_cleanup(&out);
	}
	ck_assert_uint_eq(b.len, 48 + 24);
	ck_assert_uint_eq(smb_wire_get_u16(ut_buf_bytes(&b)), 49);
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 32), 112); /* OutputOffset */
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 36), 24);
	ck_assert_uint_eq(smb_wire_get_u16(ut_buf_bytes(&b) + 48 + 22), SMB2_DIALECT_302);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_info_dir_notify)
{
	uint8_t f[256];
	struct smb_wire_msg m;
	size_t n;

	{ /* QUERY_DIRECTORY: class 0x25, RESTART, pattern "*" */
		uint8_t body[34] = { 33, 0, 0x25, SMB2_RESTART_SCANS };
		struct smb_wire_query_dir_req r;

		body[24] = 96, body[26] = 2, body[28] = 0, body[29] = 0, body[30] = 1; /* OutputBufferLength 64 KiB */
		body[32] = '*';
		n = build(f, sizeof(f), SMB2_QUERY_DIRECTORY, 0, body, sizeof(body));
		msg_of(f, n, &m);
		ck_assert_int_eq(smb_wire_query_dir_req_decode(&m, &r), AQ_OK);
		ck_assert_uint_eq(r.info_class, 0x25);
		ck_assert_uint_eq(r.flags, SMB2_RESTART_SCANS);
		ck_assert_uint_eq(r.output_len, 65536);
		ck_assert_uint_eq(r.pattern_len, 2);
		ck_assert_uint_eq(r.pattern[0], '*');
		f[64 + 26] = 4;
		ck_assert_int_eq(smb_wire_query_dir_req_decode(&m, &r), AQ_EINVAL);
	}
	{ /* QUERY_INFO: security, with no input buffer (offset 0 length 0) */
		uint8_t body[40] = { 41, 0, SMB2_0_INFO_SECURITY, 0, 0, 0x10 };
		struct smb_wire_query_info_req r;

		body[16] = 7; /* OWNER|GROUP|DACL */
		n = build(f, sizeof(f), SMB2_QUERY_INFO, 0, body, sizeof(body));
		msg_of(f, n, &m);
		ck_assert_int_eq(smb_wire_query_info_req_decode(&m, &r), AQ_OK);
		ck_assert_uint_eq(r.info_type, SMB2_0_INFO_SECURITY);
		ck_assert_uint_eq(r.output_len, 0x1000);
		ck_assert_uint_eq(r.additional, 7);
		ck_assert_ptr_null(r.input);
		f[64 + 12] = 1; /* InputBufferLength 1 past the end */
		ck_assert_int_eq(smb_wire_query_info_req_decode(&m, &r), AQ_EINVAL);
	}
	{ /* SET_INFO: FileEndOfFileInformation (20), 8 bytes */
		uint8_t body[40] = { 33, 0, SMB2_0_INFO_FILE, 20, 8, 0, 0, 0, 96 };
		struct smb_wire_set_info_req r;

		body[32] = 0x00, body[33] = 0x10;
		n = build(f, sizeof(f), SMB2_SET_INFO, 0, body, sizeof(body));
		msg_of(f, n, &m);
		ck_assert_int_eq(smb_wire_set_info_req_decode(&m, &r), AQ_OK);
		ck_assert_uint_eq(r.info_class, 20);
		ck_assert_uint_eq(r.data_len, 8);
		ck_assert_uint_eq(smb_wire_get_u64(r.data), 0x1000);
		f[64 + 4] = 9;
		ck_assert_int_eq(smb_wire_set_info_req_decode(&m, &r), AQ_EINVAL);
		f[64 + 4] = 0xff, f[64 + 7] = 0xff; /* 0xff0000ff: offset + length overflows 32 bits */
		ck_assert_int_eq(smb_wire_set_info_req_decode(&m, &r), AQ_EINVAL);
	}
	{ /* CHANGE_NOTIFY */
		uint8_t body[32] = { 32, 0, SMB2_WATCH_TREE, 0, 0, 0x10 };
		struct smb_wire_notify_req r;

		body[24] = 0x17;
		n = build(f, sizeof(f), SMB2_CHANGE_NOTIFY, 0, body, sizeof(body));
		msg_of(f, n, &m);
		ck_assert_int_eq(smb_wire_notify_req_decode(&m, &r), AQ_OK);
		ck_assert_uint_eq(r.flags, SMB2_WATCH_TREE);
		ck_assert_uint_eq(r.output_len, 0x1000);
		ck_assert_uint_eq(r.filter, 0x17);
		m.body_len = 31;
		ck_assert_int_eq(smb_wire_notify_req_decode(&m, &r), AQ_EINVAL);
	}
	{
		struct ut_buf b;

		ut_buf_init(&b, 64);
		smb_wire_output_rsp_encode(&b, 0, NULL, 0);
		ck_assert_hex_eq(ut_buf_bytes(&b), b.len, "0900 4800 00000000 00");
		smb_wire_set_info_rsp_encode(&b);
		smb_wire_error_rsp_encode(&b);
		ck_assert_hex_eq(ut_buf_bytes(&b) + 9, b.len - 9, "0200 0900 0000 00000000 00");
		ut_buf_cleanup(&b);
	}
}
END_TEST

START_TEST(test_close_flush_empty)
{
	uint8_t body[24] = { 24, 0, SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB }, f[128];
	struct smb_wire_msg m;
	struct smb_wire_close_req r;
	struct smb_wire_fid fid;
	struct ut_buf b;
	struct smb_wire_close_rsp rsp = { .flags = 1, .attrs = { .last_write = 0x01d0aecbadf5a1a1ull, .eof = 23,
							       .attributes = 0x20 } };
	static const uint8_t echo[4] = { 4, 0, 0, 0 }, bad[4] = { 5, 0, 0, 0 };

	body[8] = 9, body[16] = 10;
	msg_of(f, build(f, sizeof(f), SMB2_CLOSE, 0, body, sizeof(body)), &m);
	ck_assert_int_eq(smb_wire_close_req_decode(&m, &r), AQ_OK);
	ck_assert_uint_eq(r.flags, 1);
	ck_assert_uint_eq(r.fid.persistent, 9);
	ck_assert_uint_eq(r.fid.volatile_, 10);
	ck_assert_int_eq(smb_wire_flush_req_decode(&m, &fid), AQ_OK);
	ck_assert_uint_eq(fid.persistent, 9);
	msg_of(f, build(f, sizeof(f), SMB2_ECHO, 0, echo, 4), &m);
	ck_assert_int_eq(smb_wire_empty_req_decode(&m), AQ_OK);
	msg_of(f, build(f, sizeof(f), SMB2_ECHO, 0, bad, 4), &m);
	ck_assert_int_eq(smb_wire_empty_req_decode(&m), AQ_EINVAL);
	msg_of(f, build(f, sizeof(f), SMB2_ECHO, 0, echo, 0), &m);
	ck_assert_int_eq(smb_wire_empty_req_decode(&m), AQ_EINVAL);

	ut_buf_init(&b, 128);
	smb_wire_close_rsp_encode(&b, &rsp);
	ck_assert_uint_eq(b.len, 60);
	ck_assert_uint_eq(smb_wire_get_u64(ut_buf_bytes(&b) + 24), 0x01d0aecbadf5a1a1ull);
	ck_assert_uint_eq(smb_wire_get_u64(ut_buf_bytes(&b) + 48), 23);
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 56), 0x20);
	smb_wire_empty_rsp_encode(&b);
	ck_assert_hex_eq(ut_buf_bytes(&b) + 60, 4, "04000000");
	/* without POSTQUERY_ATTRIB the attributes are zeros (2.2.16) */
	b.len = 0;
	rsp.flags = 0;
	smb_wire_close_rsp_encode(&b, &rsp);
	for (size_t i = 8; i < 60; i++)
		ck_assert_uint_eq(ut_buf_bytes(&b)[i], 0);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_oplock_break)
{
	uint8_t ack[24] = { 24, 0, SMB2_OPLOCK_LEVEL_II }, lack[36] = { 36 }, f[128];
	struct smb_wire_msg m;
	struct smb_wire_break_ack a;
	struct ut_buf b;
	struct smb_wire_fid fid = { 3, 4 };
	uint8_t key[16];

	ack[8] = 3;
	msg_of(f, build(f, sizeof(f), SMB2_OPLOCK_BREAK, 0, ack, sizeof(ack)), &m);
	ck_assert_int_eq(smb_wire_break_ack_decode(&m, &a), AQ_OK);
	ck_assert(!a.lease);
	ck_assert_uint_eq(a.oplock_level, SMB2_OPLOCK_LEVEL_II);
	ck_assert_uint_eq(a.fid.persistent, 3);
	memset(lack + 8, 0x77, 16);
	lack[24] = SMB2_LEASE_READ_CACHING;
	msg_of(f, build(f, sizeof(f), SMB2_OPLOCK_BREAK, 0, lack, sizeof(lack)), &m);
	ck_assert_int_eq(smb_wire_break_ack_decode(&m, &a), AQ_OK);
	ck_assert(a.lease);
	ck_assert_uint_eq(a.lease_key[15], 0x77);
	ck_assert_uint_eq(a.lease_state, SMB2_LEASE_READ_CACHING);
	m.body_len = 30; /* a lease ack cut short */
	ck_assert_int_eq(smb_wire_break_ack_decode(&m, &a), AQ_EINVAL);

	memset(key, 0x77, 16);
	ut_buf_init(&b, 256);
	smb_wire_oplock_break_encode(&b, SMB2_OPLOCK_LEVEL_NONE, &fid);
	ck_assert_uint_eq(b.len, 24);
	smb_wire_lease_break_encode(&b, 2, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, key, 7, 1);
	ck_assert_uint_eq(b.len, 24 + 44);
	ck_assert_hex_eq(ut_buf_bytes(&b) + 24, 8, "2c000200 01000000");
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 24 + 24), 7);
	ck_assert_uint_eq(smb_wire_get_u32(ut_buf_bytes(&b) + 24 + 28), 1);
	smb_wire_lease_ack_rsp_encode(&b, key, 1);
	ck_assert_uint_eq(b.len, 24 + 44 + 36);
	ut_buf_cleanup(&b);
}
END_TEST

/* DUPLICATE_EXTENTS_DATA (MS-FSCC 2.3.8) and _EX (2.3.9): fields in
 * order, short inputs and a wrong EX StructureSize refused. */
START_TEST(test_dup_extents)
{
	uint8_t in[64] = { 0 };
	struct smb_wire_dup d;

	for (int i = 0; i < 8; i++) {
		in[i] = (uint8_t)(0x11 * (i + 1));       /* persistent */
		in[8 + i] = (uint8_t)(0x10 + i);        /* volatile */
	}
	in[16 + 1] = 0x10; /* SourceFileOffset 0x1000 */
	in[24 + 2] = 0x02; /* TargetFileOffset 0x20000 */
	in[32 + 1] = 0x30; /* ByteCount 0x3000 */
	ck_assert_int_eq(smb_wire_dup_decode(in, SMB_WIRE_DUP_LEN, false, &d), AQ_OK);
	ck_assert_uint_eq(d.src.persistent, 0x8877665544332211ull);
	ck_assert_uint_eq(d.src.volatile_, 0x1716151413121110ull);
	ck_assert_uint_eq(d.src_off, 0x1000);
	ck_assert_uint_eq(d.dst_off, 0x20000);
	ck_assert_uint_eq(d.len, 0x3000);
	ck_assert_int_eq(smb_wire_dup_decode(in, SMB_WIRE_DUP_LEN - 1, false, &d), AQ_EINVAL);
	/* the EX form: StructureSize, the same, Flags, Reserved */
	memmove(in + 8, in, SMB_WIRE_DUP_LEN);
	memset(in, 0, 8);
	in[0] = 0x38;
	in[48] = 1; /* DUPLICATE_EXTENTS_DATA_EX_SOURCE_ATOMIC */
	ck_assert_int_eq(smb_wire_dup_decode(in, SMB_WIRE_DUP_EX_LEN, true, &d), AQ_OK);
	ck_assert_uint_eq(d.src.persistent, 0x8877665544332211ull);
	ck_assert_uint_eq(d.len, 0x3000);
	ck_assert_uint_eq(d.flags, 1);
	ck_assert_int_eq(smb_wire_dup_decode(in, SMB_WIRE_DUP_EX_LEN - 1, true, &d), AQ_EINVAL);
	in[0] = 0x30;
	ck_assert_int_eq(smb_wire_dup_decode(in, SMB_WIRE_DUP_EX_LEN, true, &d), AQ_EINVAL);
}
END_TEST

static Suite *smb_wire_file_suite(void)
{
	Suite *s = suite_create("smb_wire_file");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_create_contexts);
	tcase_add_test(tc, test_create_ctx_cap);
	tcase_add_test(tc, test_create_rsp);
	tcase_add_test(tc, test_read_write_windows);
	tcase_add_test(tc, test_lock);
	tcase_add_test(tc, test_ioctl_validate);
	tcase_add_test(tc, test_info_dir_notify);
	tcase_add_test(tc, test_close_flush_empty);
	tcase_add_test(tc, test_oplock_break);
	tcase_add_test(tc, test_dup_extents);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_wire_file_suite());
}
