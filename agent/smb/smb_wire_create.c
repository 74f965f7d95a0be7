/* smb_wire_create: the CREATE request with its create-context chain, the
 * context payloads the server acts on (leases, durable handles) and the
 * CREATE response; see smb_wire.h and smb_wire_msg.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_wire.h"

#include <string.h>

#include "api/api_error.h"

#define SMB_WIRE_CREATE_FIXED 56u /* body bytes before the Buffer */
#define SMB_WIRE_CTX_HDR 16u      /* Next .. DataLength */

/* One create context at blob[pos], extent bytes long (2.2.13.2). */
static int smb_wire_create_ctx_one(const uint8_t *blob, size_t extent, struct smb_wire_create_ctx *out)
{
	struct smb_wire_cur c;
	uint16_t noff, nlen, doff;
	uint32_t dlen;

	smb_wire_cur_init(&c, blob, extent);
	smb_wire_skip(&c, 4);
	noff = smb_wire_u16(&c);
	nlen = smb_wire_u16(&c);
	smb_wire_skip(&c, 2);
	doff = smb_wire_u16(&c);
	dlen = smb_wire_u32(&c);
	if (c.err || nlen == 0 || noff < SMB_WIRE_CTX_HDR || noff > extent || nlen > extent - noff)
		return AQ_EINVAL;
	if (dlen && (doff < noff + nlen || doff > extent || dlen > extent - doff))
		return AQ_EINVAL;
	out->name = blob + noff;
	out->name_len = nlen;
	out->data = dlen ? blob + doff : NULL;
	out->data_len = dlen;
	return AQ_OK;
}

static int smb_wire_create_ctx_chain(const uint8_t *blob, size_t len, struct smb_wire_create_req *r)
{
	size_t pos = 0;
	int rc;

	while (pos < len) {
		size_t left = len - pos, extent = left;
		uint32_t next;
		unsigned k;

		if (left < SMB_WIRE_CTX_HDR)
			return AQ_EINVAL;
		next = smb_wire_get_u32(blob + pos);
		if (next) {
			if (next & 7 || next < SMB_WIRE_CTX_HDR || next >= left)
				return AQ_EINVAL;
			extent = next;
		}
		if (r->ctx_count == SMB_WIRE_CREATE_CTX_MAX)
			return AQ_ETOOBIG;
		if ((rc = smb_wire_create_ctx_one(blob + pos, extent, &r->ctx[r->ctx_count])) != AQ_OK)
			return rc;
		for (k = 0; k < r->ctx_count; k++)
			if (r->ctx[k].name_len == r->ctx[r->ctx_count].name_len &&
			    !memcmp(r->ctx[k].name, r->ctx[r->ctx_count].name, r->ctx[k].name_len))
				return AQ_EINVAL;
		r->ctx_count++;
		if (!next)
			break;
		pos += next;
	}
	return AQ_OK;
}

int smb_wire_create_req_decode(const struct smb_wire_msg *m, struct smb_wire_create_req *r)
{
	struct smb_wire_cur c;
	uint16_t noff, nlen;
	uint32_t coff, clen;
	const uint8_t *blob;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = smb_wire_body(m, 57, &c)) != AQ_OK)
		return rc;
	r->security_flags = smb_wire_u8(&c);
	r->oplock_level = smb_wire_u8(&c);
	r->impersonation = smb_wire_u32(&c);
	smb_wire_skip(&c, 16); /* SmbCreateFlags, Reserved */
	r->desired_access = smb_wire_u32(&c);
	r->file_attributes = smb_wire_u32(&c);
	r->share_access = smb_wire_u32(&c);
	r->disposition = smb_wire_u32(&c);
	r->options = smb_wire_u32(&c);
	noff = smb_wire_u16(&c);
	nlen = smb_wire_u16(&c);
	coff = smb_wire_u32(&c);
	clen = smb_wire_u32(&c);
	if (c.err)
		return c.err;
	if (nlen & 1)
		return AQ_EINVAL;
	if (nlen > SMB_WIRE_NAME_MAX)
		return AQ_ETOOBIG;
	r->name_len = nlen;
	if ((rc = smb_wire_slice(m, noff, nlen, SMB2_HDR_LEN + SMB_WIRE_CREATE_FIXED, &r->name)) != AQ_OK)
		return rc;
	if (clen && coff & 7)
		return AQ_EINVAL;
	if ((rc = smb_wire_slice(m, coff, clen, SMB2_HDR_LEN + SMB_WIRE_CREATE_FIXED, &blob)) != AQ_OK)
		return rc;
	return clen ? smb_wire_create_ctx_chain(blob, clen, r) : AQ_OK;
}

const struct smb_wire_create_ctx *smb_wire_create_ctx_find(const struct smb_wire_create_req *r, const char *tag)
{
	size_t n = strlen(tag);
	unsigned k;

	for (k = 0; k < r->ctx_count; k++)
		if (r->ctx[k].name_len == n && !memcmp(r->ctx[k].name, tag, n))
			return &r->ctx[k];
	return NULL;
}

/* SMB2_CREATE_REQUEST_LEASE (32 bytes) and _V2 (52 bytes), 2.2.13.2.8/10. */
int smb_wire_lease_decode(const struct smb_wire_create_ctx *ctx, struct smb_wire_lease *l)
{
	struct smb_wire_cur c;
	const uint8_t *key, *parent = NULL;

	memset(l, 0, sizeof(*l));
	if (ctx->data_len != 32 && ctx->data_len != 52)
		return AQ_EINVAL;
	smb_wire_cur_init(&c, ctx->data, ctx->data_len);
	key = smb_wire_bytes(&c, 16);
	l->state = smb_wire_u32(&c);
	l->flags = smb_wire_u32(&c);
	smb_wire_skip(&c, 8); /* LeaseDuration: reserved */
	if (ctx->data_len == 52) {
		l->v2 = true;
		parent = smb_wire_bytes(&c, 16);
		l->epoch = smb_wire_u16(&c);
	}
	if (c.err)
		return c.err;
	memcpy(l->key, key, 16);
	if (parent)
		memcpy(l->parent_key, parent, 16);
	return AQ_OK;
}

void smb_wire_lease_encode(struct ut_buf *buf, const struct smb_wire_lease *l)
{
	smb_wire_put_bytes(buf, l->key, 16);
	smb_wire_put_u32(buf, l->state);
	smb_wire_put_u32(buf, l->flags);
	smb_wire_put_u64(buf, 0);
	if (!l->v2)
		return;
	smb_wire_put_bytes(buf, l->parent_key, 16);
	smb_wire_put_u16(buf, l->epoch);
	smb_wire_put_u16(buf, 0);
}

/* DH2Q (32 bytes), DH2C (36 bytes), DHnC (16 bytes): 2.2.13.2.4/5/11/12. */
int smb_wire_durable_decode(const struct smb_wire_create_ctx *ctx, struct smb_wire_durable_v2 *d)
{
	struct smb_wire_cur c;
	const uint8_t *guid = NULL;

	memset(d, 0, sizeof(*d));
	smb_wire_cur_init(&c, ctx->data, ctx->data_len);
	if (ctx->name_len != 4)
		return AQ_EINVAL;
	if (!memcmp(ctx->name, "DH2Q", 4) && ctx->data_len == 32) {
		d->timeout = smb_wire_u32(&c);
		d->flags = smb_wire_u32(&c);
		smb_wire_skip(&c, 8);
		guid = smb_wire_bytes(&c, 16);
	} else if (!memcmp(ctx->name, "DH2C", 4) && ctx->data_len == 36) {
		d->fid.persistent = smb_wire_u64(&c);
		d->fid.volatile_ = smb_wire_u64(&c);
		guid = smb_wire_bytes(&c, 16);
		d->flags = smb_wire_u32(&c);
	} else if (!memcmp(ctx->name, "DHnC", 4) && ctx->data_len == 16) {
		d->fid.persistent = smb_wire_u64(&c);
		d->fid.volatile_ = smb_wire_u64(&c);
	} else {
		return AQ_EINVAL;
	}
	if (c.err)
		return c.err;
	if (guid)
		memcpy(d->create_guid, guid, 16);
	return AQ_OK;
}

void smb_wire_create_rsp_encode(struct ut_buf *buf, size_t hdr_off, const struct smb_wire_create_rsp *r)
{
	size_t ctx_at, start = 0, prev = 0;
	unsigned k;

	smb_wire_put_u16(buf, 89);
	smb_wire_put_u8(buf, r->oplock_level);
	smb_wire_put_u8(buf, r->flags);
	smb_wire_put_u32(buf, r->action);
	smb_wire_attrs_encode(buf, &r->attrs);
	smb_wire_put_u32(buf, 0); /* Reserved2 */
	smb_wire_put_u64(buf, r->fid.persistent);
	smb_wire_put_u64(buf, r->fid.volatile_);
	ctx_at = buf->len;
	smb_wire_put_u32(buf, 0);
	smb_wire_put_u32(buf, 0);
	for (k = 0; k < r->ctx_count; k++) {
		const struct smb_wire_create_rsp_ctx *x = &r->ctx[k];
		size_t nlen = strlen(x->name), at;

		smb_wire_pad(buf, hdr_off, 8);
		at = buf->len;
		if (k == 0)
			start = at;
		else
			ut_buf_set_le32(buf, prev, (uint32_t)(at - prev));
		prev = at;
		smb_wire_put_u32(buf, 0);
		smb_wire_put_u16(buf, SMB_WIRE_CTX_HDR);
		smb_wire_put_u16(buf, (uint16_t)nlen);
		smb_wire_put_u16(buf, 0);
		smb_wire_put_u16(buf, x->data_len ? (uint16_t)((SMB_WIRE_CTX_HDR + nlen + 7) & ~7u) : 0);
		smb_wire_put_u32(buf, (uint32_t)x->data_len);
		smb_wire_put_bytes(buf, x->name, nlen);
		if (x->data_len) {
			smb_wire_pad(buf, at, 8);
			smb_wire_put_bytes(buf, x->data, x->data_len);
		}
	}
	if (r->ctx_count) {
		ut_buf_set_le32(buf, ctx_at, (uint32_t)(start - hdr_off));
		ut_buf_set_le32(buf, ctx_at + 4, (uint32_t)(buf->len - start));
	}
}
