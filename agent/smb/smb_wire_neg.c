/* smb_wire_neg: the bodies of connection and session set-up: NEGOTIATE
 * with its 3.1.1 negotiate contexts, SESSION_SETUP, TREE_CONNECT, the
 * 4-byte bodies (LOGOFF, TREE_DISCONNECT, ECHO, CANCEL) and the ERROR
 * response; see smb_wire.h and smb_wire_msg.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_wire.h"

#include <string.h>

#include "api/api_error.h"

/* Record the known ids of an algorithm list in the client's order. */
static void smb_wire_ids(struct smb_wire_cur *c, uint16_t n, uint16_t min_id, uint16_t max_id, uint16_t *out,
			 uint8_t *count, size_t cap)
{
	uint16_t i;

	for (i = 0; i < n && !c->err; i++) {
		uint16_t id = smb_wire_u16(c);
		size_t k;
		bool dup = false;

		for (k = 0; k < *count; k++)
			dup |= out[k] == id;
		if (!c->err && id >= min_id && id <= max_id && !dup && *count < cap)
			out[(*count)++] = id;
	}
}

/* One negotiate context's data (2.2.3.1.x), c bounded to DataLength. */
static int smb_wire_neg_ctx(struct smb_wire_cur *c, uint16_t type, struct smb_wire_negotiate_req *r)
{
	uint16_t n, salt, i;

	switch (type) {
	case SMB2_PREAUTH_INTEGRITY_CAPABILITIES:
		if (r->has_preauth)
			return AQ_EINVAL;
		r->has_preauth = true;
		n = smb_wire_u16(c);
		salt = smb_wire_u16(c);
		if (n == 0)
			return AQ_EINVAL;
		for (i = 0; i < n && !c->err; i++)
			r->sha512 |= smb_wire_u16(c) == SMB2_PREAUTH_INTEGRITY_SHA512;
		smb_wire_skip(c, salt);
		break;
	case SMB2_ENCRYPTION_CAPABILITIES:
		if (r->has_encryption)
			return AQ_EINVAL;
		r->has_encryption = true;
		n = smb_wire_u16(c);
		if (n == 0)
			return AQ_EINVAL;
		smb_wire_ids(c, n, SMB2_ENCRYPTION_AES128_CCM, SMB2_ENCRYPTION_AES256_GCM, r->ciphers, &r->cipher_count, 4);
		break;
	case SMB2_SIGNING_CAPABILITIES:
		if (r->has_signing)
			return AQ_EINVAL;
		r->has_signing = true;
		n = smb_wire_u16(c);
		if (n == 0)
			return AQ_EINVAL;
		smb_wire_ids(c, n, SMB2_SIGNING_HMAC_SHA256, SMB2_SIGNING_AES_GMAC, r->signing, &r->signing_count, 3);
		break;
	case SMB2_COMPRESSION_CAPABILITIES:
		/* Not offered back: the connection stays uncompressed. */
		if (r->has_compression)
			return AQ_EINVAL;
		r->has_compression = true;
		break;
	default:
		/* NETNAME, TRANSPORT, RDMA_TRANSFORM and unknown ones: ignored. */
		break;
	}
	return c->err;
}

int smb_wire_negotiate_req_decode(const struct smb_wire_msg *m, struct smb_wire_negotiate_req *r)
{
	struct smb_wire_cur c, all;
	uint32_t ctx_off;
	uint16_t ctx_count, i;
	const uint8_t *g;
	bool has311 = false;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 36, &c)) != AQ_OK)
		return rc;
	r->dialect_count = smb_wire_u16(&c);
	r->security_mode = smb_wire_u16(&c);
	smb_wire_skip(&c, 2);
	r->capabilities = smb_wire_u32(&c);
	g = smb_wire_bytes(&c, 16);
	ctx_off = smb_wire_u32(&c);
	ctx_count = smb_wire_u16(&c);
	smb_wire_skip(&c, 2);
	if (c.err || r->dialect_count == 0)
		return AQ_EINVAL;
	if (r->dialect_count > SMB_WIRE_DIALECT_MAX)
		return AQ_ETOOBIG;
	memcpy(r->client_guid, g, 16);
	for (i = 0; i < r->dialect_count; i++) {
		r->dialects[i] = smb_wire_u16(&c);
		has311 |= r->dialects[i] == SMB2_DIALECT_311;
	}
	if (c.err)
		return c.err;
	if (!has311 || ctx_count == 0)
		return AQ_OK;
	/* Contexts: 8-aligned, after the dialects, offsets from the header. */
	if (ctx_off & 7 || ctx_off < SMB2_HDR_LEN + 36 + 2u * r->dialect_count)
		return AQ_EINVAL;
	smb_wire_cur_init(&all, m->p, m->len);
	smb_wire_seek(&all, ctx_off);
	for (i = 0; i < ctx_count && !all.err; i++) {
		uint16_t type, dlen;
		const uint8_t *data;
		struct smb_wire_cur d;

		if (i)
			smb_wire_align8(&all);
		type = smb_wire_u16(&all);
		dlen = smb_wire_u16(&all);
		smb_wire_skip(&all, 4);
		data = smb_wire_bytes(&all, dlen);
		if (all.err)
			break;
		smb_wire_cur_init(&d, data, dlen);
		if ((rc = smb_wire_neg_ctx(&d, type, r)) != AQ_OK)
			return rc;
	}
	return all.err;
}

static const uint16_t smb_wire_dialect_bits[] = {
	SMB2_DIALECT_202, SMB2_DIALECT_210, SMB2_DIALECT_300, SMB2_DIALECT_302, SMB2_DIALECT_311,
};

uint16_t smb_wire_negotiate_pick_dialect(const struct smb_wire_negotiate_req *r, unsigned mask)
{
	uint16_t best = 0, i;
	size_t k;

	for (i = 0; i < r->dialect_count; i++)
		for (k = 0; k < sizeof(smb_wire_dialect_bits) / sizeof(smb_wire_dialect_bits[0]); k++)
			if (r->dialects[i] == smb_wire_dialect_bits[k] && mask & 1u << k && r->dialects[i] > best)
				best = r->dialects[i];
	return best;
}

uint16_t smb_wire_negotiate_pick(const uint16_t *ids, unsigned n, unsigned ours)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (ids[i] < 16 && ours & 1u << ids[i])
			return ids[i];
	return SMB_WIRE_NONE;
}

/* Append one negotiate context header; returns the offset of DataLength. */
static size_t smb_wire_neg_ctx_start(struct ut_buf *buf, size_t hdr_off, uint16_t type)
{
	size_t at;

	smb_wire_pad(buf, hdr_off, 8);
	smb_wire_put_u16(buf, type);
	at = buf->len;
	smb_wire_put_u16(buf, 0);
	smb_wire_put_u32(buf, 0);
	return at;
}

static void smb_wire_neg_ctx_end(struct ut_buf *buf, size_t at)
{
	ut_buf_set_le16(buf, at, (uint16_t)(buf->len - at - 6));
}

void smb_wire_negotiate_rsp_encode(struct ut_buf *buf, size_t hdr_off, const struct smb_wire_negotiate_rsp *r)
{
	bool ctx = r->dialect == SMB2_DIALECT_311;
	uint16_t n = 1 + (r->cipher != SMB_WIRE_NONE) + (r->signing != SMB_WIRE_NONE);
	size_t ctx_off_at, at;

	smb_wire_put_u16(buf, 65);
	smb_wire_put_u16(buf, r->security_mode);
	smb_wire_put_u16(buf, r->dialect);
	smb_wire_put_u16(buf, ctx ? n : 0);
	smb_wire_put_bytes(buf, r->server_guid, 16);
	smb_wire_put_u32(buf, r->capabilities);
	smb_wire_put_u32(buf, r->max_transact);
	smb_wire_put_u32(buf, r->max_read);
	smb_wire_put_u32(buf, r->max_write);
	smb_wire_put_u64(buf, r->system_time);
	smb_wire_put_u64(buf, r->start_time);
	smb_wire_put_u16(buf, SMB2_HDR_LEN + 64);
	smb_wire_put_u16(buf, (uint16_t)r->sec_len);
	ctx_off_at = buf->len;
	smb_wire_put_u32(buf, 0);
	smb_wire_put_bytes(buf, r->sec_blob, r->sec_len);
	if (!ctx)
		return;
	smb_wire_pad(buf, hdr_off, 8);
	ut_buf_set_le32(buf, ctx_off_at, (uint32_t)(buf->len - hdr_off));
	at = smb_wire_neg_ctx_start(buf, hdr_off, SMB2_PREAUTH_INTEGRITY_CAPABILITIES);
	smb_wire_put_u16(buf, 1);
	smb_wire_put_u16(buf, SMB_WIRE_SALT_LEN);
	smb_wire_put_u16(buf, SMB2_PREAUTH_INTEGRITY_SHA512);
	smb_wire_put_bytes(buf, r->salt, SMB_WIRE_SALT_LEN);
	smb_wire_neg_ctx_end(buf, at);
	if (r->cipher != SMB_WIRE_NONE) {
		at = smb_wire_neg_ctx_start(buf, hdr_off, SMB2_ENCRYPTION_CAPABILITIES);
		smb_wire_put_u16(buf, 1);
		smb_wire_put_u16(buf, r->cipher);
		smb_wire_neg_ctx_end(buf, at);
	}
	if (r->signing != SMB_WIRE_NONE) {
		at = smb_wire_neg_ctx_start(buf, hdr_off, SMB2_SIGNING_CAPABILITIES);
		smb_wire_put_u16(buf, 1);
		smb_wire_put_u16(buf, r->signing);
		smb_wire_neg_ctx_end(buf, at);
	}
}

int smb_wire_session_setup_req_decode(const struct smb_wire_msg *m, struct smb_wire_session_setup_req *r)
{
	struct smb_wire_cur c;
	uint16_t off, len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 25, &c)) != AQ_OK)
		return rc;
	r->flags = smb_wire_u8(&c);
	r->security_mode = smb_wire_u8(&c);
	r->capabilities = smb_wire_u32(&c);
	smb_wire_skip(&c, 4); /* Channel: MUST be 0 */
	off = smb_wire_u16(&c);
	len = smb_wire_u16(&c);
	r->previous_session_id = smb_wire_u64(&c);
	if (c.err)
		return c.err;
	r->blob_len = len;
	return smb_wire_slice(m, off, len, SMB2_HDR_LEN + 24, &r->blob);
}

void smb_wire_session_setup_rsp_encode(struct ut_buf *buf, size_t hdr_off, uint16_t session_flags,
				       const uint8_t *blob, size_t blob_len)
{
	(void)hdr_off;
	smb_wire_put_u16(buf, 9);
	smb_wire_put_u16(buf, session_flags);
	smb_wire_put_u16(buf, SMB2_HDR_LEN + 8);
	smb_wire_put_u16(buf, (uint16_t)blob_len);
	smb_wire_put_bytes(buf, blob, blob_len);
}

int smb_wire_empty_req_decode(const struct smb_wire_msg *m)
{
	struct smb_wire_cur c;

	return smb_wire_body(m, 4, &c);
}

void smb_wire_empty_rsp_encode(struct ut_buf *buf)
{
	smb_wire_put_u16(buf, 4);
	smb_wire_put_u16(buf, 0);
}

int smb_wire_tree_connect_req_decode(const struct smb_wire_msg *m, struct smb_wire_tree_connect_req *r)
{
	struct smb_wire_cur c;
	uint16_t off, len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 9, &c)) != AQ_OK)
		return rc;
	r->flags = smb_wire_u16(&c);
	off = smb_wire_u16(&c);
	len = smb_wire_u16(&c);
	if (c.err)
		return c.err;
	if (r->flags & SMB2_TREE_CONNECT_FLAG_EXTENSION_PRESENT)
		return AQ_EUNIMPL;
	if (len & 1 || len == 0)
		return AQ_EINVAL;
	if (len > SMB_WIRE_NAME_MAX)
		return AQ_ETOOBIG;
	r->path_len = len;
	return smb_wire_slice(m, off, len, SMB2_HDR_LEN + 8, &r->path);
}

void smb_wire_tree_connect_rsp_encode(struct ut_buf *buf, const struct smb_wire_tree_connect_rsp *r)
{
	smb_wire_put_u16(buf, 16);
	smb_wire_put_u8(buf, r->share_type);
	smb_wire_put_u8(buf, 0);
	smb_wire_put_u32(buf, r->share_flags);
	smb_wire_put_u32(buf, r->capabilities);
	smb_wire_put_u32(buf, r->maximal_access);
}

void smb_wire_error_rsp_encode(struct ut_buf *buf)
{
	smb_wire_put_u16(buf, 9);
	smb_wire_put_u8(buf, 0); /* ErrorContextCount */
	smb_wire_put_u8(buf, 0);
	smb_wire_put_u32(buf, 0); /* ByteCount */
	smb_wire_put_u8(buf, 0);  /* ErrorData: one byte when ByteCount is 0 */
}
