/* smb_wire_file: the bodies of the commands on an open: CLOSE, FLUSH, READ,
 * WRITE, LOCK, IOCTL (with VALIDATE_NEGOTIATE_INFO's input), QUERY_DIRECTORY,
 * CHANGE_NOTIFY, QUERY_INFO, SET_INFO and OPLOCK_BREAK; see smb_wire.h and
 * smb_wire_msg.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_wire.h"

#include <string.h>

#include "api/api_error.h"

static void smb_wire_fid_get(struct smb_wire_cur *c, struct smb_wire_fid *fid)
{
	fid->persistent = smb_wire_u64(c);
	fid->volatile_ = smb_wire_u64(c);
}

static void smb_wire_fid_put(struct ut_buf *buf, const struct smb_wire_fid *fid)
{
	smb_wire_put_u64(buf, fid->persistent);
	smb_wire_put_u64(buf, fid->volatile_);
}

int smb_wire_close_req_decode(const struct smb_wire_msg *m, struct smb_wire_close_req *r)
{
	struct smb_wire_cur c;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 24, &c)) != AQ_OK)
		return rc;
	r->flags = smb_wire_u16(&c);
	smb_wire_skip(&c, 4);
	smb_wire_fid_get(&c, &r->fid);
	return c.err;
}

void smb_wire_attrs_encode(struct ut_buf *buf, const struct smb_wire_attrs *a)
{
	smb_wire_put_u64(buf, a->creation);
	smb_wire_put_u64(buf, a->last_access);
	smb_wire_put_u64(buf, a->last_write);
	smb_wire_put_u64(buf, a->change);
	smb_wire_put_u64(buf, a->allocation);
	smb_wire_put_u64(buf, a->eof);
	smb_wire_put_u32(buf, a->attributes);
}

void smb_wire_close_rsp_encode(struct ut_buf *buf, const struct smb_wire_close_rsp *r)
{
	static const struct smb_wire_attrs none;

	smb_wire_put_u16(buf, 60);
	smb_wire_put_u16(buf, r->flags);
	smb_wire_put_u32(buf, 0);
	smb_wire_attrs_encode(buf, r->flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB ? &r->attrs : &none);
}

int smb_wire_flush_req_decode(const struct smb_wire_msg *m, struct smb_wire_fid *fid)
{
	struct smb_wire_cur c;
	int rc;

	memset(fid, 0, sizeof(*fid));
	if ((rc = smb_wire_body(m, 24, &c)) != AQ_OK)
		return rc;
	smb_wire_skip(&c, 6);
	smb_wire_fid_get(&c, fid);
	return c.err;
}

int smb_wire_read_req_decode(const struct smb_wire_msg *m, struct smb_wire_read_req *r)
{
	struct smb_wire_cur c;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 49, &c)) != AQ_OK)
		return rc;
	smb_wire_skip(&c, 1); /* Padding */
	r->flags = smb_wire_u8(&c);
	r->length = smb_wire_u32(&c);
	r->offset = smb_wire_u64(&c);
	smb_wire_fid_get(&c, &r->fid);
	r->minimum = smb_wire_u32(&c);
	r->channel = smb_wire_u32(&c);
	if (c.err)
		return c.err;
	/* SMB2_CHANNEL_NONE only: RDMA descriptors would need SMB Direct. */
	if (r->channel)
		return AQ_EINVAL;
	return r->length > SMB_WIRE_IO_MAX ? AQ_ETOOBIG : AQ_OK;
}

void smb_wire_read_rsp_encode(struct ut_buf *buf, size_t hdr_off, uint32_t data_len, uint32_t remaining)
{
	(void)hdr_off;
	smb_wire_put_u16(buf, 17);
	smb_wire_put_u8(buf, SMB2_HDR_LEN + 16);
	smb_wire_put_u8(buf, 0);
	smb_wire_put_u32(buf, data_len);
	smb_wire_put_u32(buf, remaining);
	smb_wire_put_u32(buf, 0);
}

int smb_wire_write_req_decode(const struct smb_wire_msg *m, struct smb_wire_write_req *r)
{
	struct smb_wire_cur c;
	uint16_t off;
	uint32_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 49, &c)) != AQ_OK)
		return rc;
	off = smb_wire_u16(&c);
	len = smb_wire_u32(&c);
	r->offset = smb_wire_u64(&c);
	smb_wire_fid_get(&c, &r->fid);
	r->channel = smb_wire_u32(&c);
	smb_wire_skip(&c, 8); /* RemainingBytes, WriteChannelInfoOffset/Length */
	r->flags = smb_wire_u32(&c);
	if (c.err)
		return c.err;
	if (r->channel)
		return AQ_EINVAL;
	r->data_len = len;
	return smb_wire_slice(m, off, len, SMB2_HDR_LEN + 48, &r->data);
}

void smb_wire_write_rsp_encode(struct ut_buf *buf, uint32_t count)
{
	smb_wire_put_u16(buf, 17);
	smb_wire_put_u16(buf, 0);
	smb_wire_put_u32(buf, count);
	smb_wire_put_u32(buf, 0);
	smb_wire_put_u32(buf, 0);
}

int smb_wire_lock_req_decode(const struct smb_wire_msg *m, struct smb_wire_lock_req *r)
{
	struct smb_wire_cur c;
	uint16_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 48, &c)) != AQ_OK)
		return rc;
	r->count = smb_wire_u16(&c);
	r->sequence = smb_wire_u32(&c);
	smb_wire_fid_get(&c, &r->fid);
	if (c.err || r->count == 0)
		return AQ_EINVAL;
	if (r->count > SMB_WIRE_LOCK_MAX)
		return AQ_ETOOBIG;
	for (i = 0; i < r->count; i++) {
		r->locks[i].offset = smb_wire_u64(&c);
		r->locks[i].length = smb_wire_u64(&c);
		r->locks[i].flags = smb_wire_u32(&c);
		smb_wire_skip(&c, 4);
	}
	return c.err;
}

int smb_wire_ioctl_req_decode(const struct smb_wire_msg *m, struct smb_wire_ioctl_req *r)
{
	struct smb_wire_cur c;
	uint32_t in_off, in_len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 57, &c)) != AQ_OK)
		return rc;
	smb_wire_skip(&c, 2);
	r->ctl_code = smb_wire_u32(&c);
	smb_wire_fid_get(&c, &r->fid);
	in_off = smb_wire_u32(&c);
	in_len = smb_wire_u32(&c);
	r->max_input_response = smb_wire_u32(&c);
	smb_wire_skip(&c, 8); /* OutputOffset, OutputCount: MUST be 0 */
	r->max_output_response = smb_wire_u32(&c);
	r->flags = smb_wire_u32(&c);
	if (c.err)
		return c.err;
	r->input_len = in_len;
	return smb_wire_slice(m, in_off, in_len, SMB2_HDR_LEN + 56, &r->input);
}

void smb_wire_ioctl_rsp_encode(struct ut_buf *buf, size_t hdr_off, uint32_t ctl_code,
			       const struct smb_wire_fid *fid, const uint8_t *out, size_t out_len)
{
	(void)hdr_off;
	smb_wire_put_u16(buf, 49);
	smb_wire_put_u16(buf, 0);
	smb_wire_put_u32(buf, ctl_code);
	smb_wire_fid_put(buf, fid);
	smb_wire_put_u32(buf, SMB2_HDR_LEN + 48); /* InputOffset */
	smb_wire_put_u32(buf, 0);
	smb_wire_put_u32(buf, SMB2_HDR_LEN + 48); /* OutputOffset */
	smb_wire_put_u32(buf, (uint32_t)out_len);
	smb_wire_put_u32(buf, 0);
	smb_wire_put_u32(buf, 0);
	smb_wire_put_bytes(buf, out, out_len);
}

int smb_wire_copychunk_decode(const uint8_t *p, size_t len, struct smb_wire_copychunk *cc)
{
	struct smb_wire_cur c;
	const uint8_t *key;

	memset(cc, 0, sizeof(*cc));
	smb_wire_cur_init(&c, p, len);
	key = smb_wire_bytes(&c, SMB_WIRE_RESUME_KEY_LEN);
	cc->count = smb_wire_u32(&c);
	smb_wire_skip(&c, 4);
	if (c.err || !key)
		return AQ_EINVAL;
	memcpy(cc->key, key, SMB_WIRE_RESUME_KEY_LEN);
	if (cc->count > SMB_WIRE_COPYCHUNK_MAX)
		return AQ_ETOOBIG;
	cc->chunks = smb_wire_bytes(&c, (size_t)cc->count * 24u);
	return c.err || (cc->count && !cc->chunks) ? AQ_EINVAL : AQ_OK;
}

void smb_wire_copychunk_chunk(const struct smb_wire_copychunk *cc, uint32_t i, struct smb_wire_chunk *out)
{
	const uint8_t *p = cc->chunks + (size_t)i * 24u;

	out->src_off = smb_wire_get_u64(p);
	out->dst_off = smb_wire_get_u64(p + 8);
	out->len = smb_wire_get_u32(p + 16);
}

int smb_wire_range_decode(const uint8_t *p, size_t len, uint64_t *first, uint64_t *second)
{
	struct smb_wire_cur c;

	smb_wire_cur_init(&c, p, len);
	*first = smb_wire_u64(&c);
	*second = smb_wire_u64(&c);
	return c.err ? AQ_EINVAL : AQ_OK;
}

int smb_wire_dup_decode(const uint8_t *p, size_t len, bool ex, struct smb_wire_dup *out)
{
	struct smb_wire_cur c;
	uint64_t size = 0;

	smb_wire_cur_init(&c, p, len);
	if (ex)
		size = smb_wire_u64(&c);
	out->src.persistent = smb_wire_u64(&c);
	out->src.volatile_ = smb_wire_u64(&c);
	out->src_off = smb_wire_u64(&c);
	out->dst_off = smb_wire_u64(&c);
	out->len = smb_wire_u64(&c);
	out->flags = ex ? smb_wire_u32(&c) : 0;
	if (ex)
		(void)smb_wire_u32(&c); /* Reserved */
	return c.err || (ex && size != SMB_WIRE_DUP_EX_LEN) ? AQ_EINVAL : AQ_OK;
}

/* VALIDATE_NEGOTIATE_INFO request (2.2.31.4). */
int smb_wire_validate_negotiate_decode(const uint8_t *p, size_t len, struct smb_wire_validate_negotiate *v)
{
	struct smb_wire_cur c;
	const uint8_t *g;
	uint16_t i;

	memset(v, 0, sizeof(*v));
	smb_wire_cur_init(&c, p, len);
	v->capabilities = smb_wire_u32(&c);
	g = smb_wire_bytes(&c, 16);
	v->security_mode = smb_wire_u16(&c);
	v->dialect_count = smb_wire_u16(&c);
	if (c.err || v->dialect_count == 0)
		return AQ_EINVAL;
	if (v->dialect_count > SMB_WIRE_DIALECT_MAX)
		return AQ_ETOOBIG;
	memcpy(v->guid, g, 16);
	for (i = 0; i < v->dialect_count; i++)
		v->dialects[i] = smb_wire_u16(&c);
	return c.err;
}

void smb_wire_validate_negotiate_encode(struct ut_buf *buf, uint32_t capabilities, const uint8_t guid[16],
					uint16_t security_mode, uint16_t dialect)
{
	smb_wire_put_u32(buf, capabilities);
	smb_wire_put_bytes(buf, guid, 16);
	smb_wire_put_u16(buf, security_mode);
	smb_wire_put_u16(buf, dialect);
}

int smb_wire_query_dir_req_decode(const struct smb_wire_msg *m, struct smb_wire_query_dir_req *r)
{
	struct smb_wire_cur c;
	uint16_t off, len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 33, &c)) != AQ_OK)
		return rc;
	r->info_class = smb_wire_u8(&c);
	r->flags = smb_wire_u8(&c);
	r->file_index = smb_wire_u32(&c);
	smb_wire_fid_get(&c, &r->fid);
	off = smb_wire_u16(&c);
	len = smb_wire_u16(&c);
	r->output_len = smb_wire_u32(&c);
	if (c.err)
		return c.err;
	if (len & 1)
		return AQ_EINVAL;
	if (len > SMB_WIRE_NAME_MAX)
		return AQ_ETOOBIG;
	r->pattern_len = len;
	return smb_wire_slice(m, off, len, SMB2_HDR_LEN + 32, &r->pattern);
}

void smb_wire_output_rsp_encode(struct ut_buf *buf, size_t hdr_off, const uint8_t *out, size_t out_len)
{
	(void)hdr_off;
	smb_wire_put_u16(buf, 9);
	smb_wire_put_u16(buf, SMB2_HDR_LEN + 8);
	smb_wire_put_u32(buf, (uint32_t)out_len);
	if (out_len)
		smb_wire_put_bytes(buf, out, out_len);
	else
		smb_wire_put_u8(buf, 0); /* the one byte StructureSize 9 counts */
}

int smb_wire_notify_req_decode(const struct smb_wire_msg *m, struct smb_wire_notify_req *r)
{
	struct smb_wire_cur c;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 32, &c)) != AQ_OK)
		return rc;
	r->flags = smb_wire_u16(&c);
	r->output_len = smb_wire_u32(&c);
	smb_wire_fid_get(&c, &r->fid);
	r->filter = smb_wire_u32(&c);
	return c.err;
}

int smb_wire_query_info_req_decode(const struct smb_wire_msg *m, struct smb_wire_query_info_req *r)
{
	struct smb_wire_cur c;
	uint16_t off;
	uint32_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 41, &c)) != AQ_OK)
		return rc;
	r->info_type = smb_wire_u8(&c);
	r->info_class = smb_wire_u8(&c);
	r->output_len = smb_wire_u32(&c);
	off = smb_wire_u16(&c);
	smb_wire_skip(&c, 2);
	len = smb_wire_u32(&c);
	r->additional = smb_wire_u32(&c);
	r->flags = smb_wire_u32(&c);
	smb_wire_fid_get(&c, &r->fid);
	if (c.err)
		return c.err;
	r->input_len = len;
	return smb_wire_slice(m, off, len, SMB2_HDR_LEN + 40, &r->input);
}

int smb_wire_set_info_req_decode(const struct smb_wire_msg *m, struct smb_wire_set_info_req *r)
{
	struct smb_wire_cur c;
	uint16_t off;
	uint32_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 33, &c)) != AQ_OK)
		return rc;
	r->info_type = smb_wire_u8(&c);
	r->info_class = smb_wire_u8(&c);
	len = smb_wire_u32(&c);
	off = smb_wire_u16(&c);
	smb_wire_skip(&c, 2);
	r->additional = smb_wire_u32(&c);
	smb_wire_fid_get(&c, &r->fid);
	if (c.err)
		return c.err;
	r->data_len = len;
	return smb_wire_slice(m, off, len, SMB2_HDR_LEN + 32, &r->data);
}

void smb_wire_set_info_rsp_encode(struct ut_buf *buf)
{
	smb_wire_put_u16(buf, 2);
}

int smb_wire_name_info_decode(const uint8_t *p, size_t len, struct smb_wire_name_info *out)
{
	struct smb_wire_cur c;
	uint32_t n;

	memset(out, 0, sizeof(*out));
	smb_wire_cur_init(&c, p, len);
	out->replace = smb_wire_u8(&c) != 0;
	smb_wire_skip(&c, 7);
	smb_wire_u64(&c); /* RootDirectory */
	n = smb_wire_u32(&c);
	out->name = smb_wire_bytes(&c, n);
	if (c.err || !out->name)
		return AQ_EINVAL;
	out->name_len = n;
	return AQ_OK;
}

int smb_wire_break_ack_decode(const struct smb_wire_msg *m, struct smb_wire_break_ack *a)
{
	struct smb_wire_cur c;
	const uint8_t *key;
	int rc;

	memset(a, 0, sizeof(*a));
	if (m->body_len >= 2 && smb_wire_get_u16(m->body) == 36) {
		if ((rc = smb_wire_body(m, 36, &c)) != AQ_OK)
			return rc;
		a->lease = true;
		smb_wire_skip(&c, 6); /* Reserved, Flags */
		key = smb_wire_bytes(&c, 16);
		a->lease_state = smb_wire_u32(&c);
		if (c.err)
			return c.err;
		memcpy(a->lease_key, key, 16);
		return AQ_OK;
	}
	if ((rc = smb_wire_body(m, 24, &c)) != AQ_OK)
		return rc;
	a->oplock_level = smb_wire_u8(&c);
	smb_wire_skip(&c, 5);
	smb_wire_fid_get(&c, &a->fid);
	return c.err;
}

void smb_wire_oplock_break_encode(struct ut_buf *buf, uint8_t level, const struct smb_wire_fid *fid)
{
	smb_wire_put_u16(buf, 24);
	smb_wire_put_u8(buf, level);
	smb_wire_put_u8(buf, 0);
	smb_wire_put_u32(buf, 0);
	smb_wire_fid_put(buf, fid);
}

void smb_wire_lease_break_encode(struct ut_buf *buf, uint16_t epoch, uint32_t flags, const uint8_t key[16],
				 uint32_t current, uint32_t new_state)
{
	smb_wire_put_u16(buf, 44);
	smb_wire_put_u16(buf, epoch);
	smb_wire_put_u32(buf, flags);
	smb_wire_put_bytes(buf, key, 16);
	smb_wire_put_u32(buf, current);
	smb_wire_put_u32(buf, new_state);
	smb_wire_put_u32(buf, 0); /* BreakReason */
	smb_wire_put_u32(buf, 0); /* AccessMaskHint */
	smb_wire_put_u32(buf, 0); /* ShareMaskHint */
}

void smb_wire_lease_ack_rsp_encode(struct ut_buf *buf, const uint8_t key[16], uint32_t state)
{
	smb_wire_put_u16(buf, 36);
	smb_wire_put_u16(buf, 0);
	smb_wire_put_u32(buf, 0);
	smb_wire_put_bytes(buf, key, 16);
	smb_wire_put_u32(buf, state);
	smb_wire_put_u64(buf, 0);
}
