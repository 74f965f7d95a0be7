/* smb_wire: the cursor, the encode buffer, UTF-16, framing, the SMB2 and
 * transform headers, SMB1 NEGOTIATE detection and the compound splitter;
 * see smb_wire.h for the contract. The bodies are in smb_wire_neg.c,
 * smb_wire_create.c and smb_wire_file.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_wire.h"

#include <stdlib.h>
#include <string.h>

#include "api/api_error.h"

void smb_wire_cur_init(struct smb_wire_cur *cur, const void *data, size_t len)
{
	cur->p = data;
	cur->len = data ? len : 0;
	cur->pos = 0;
	cur->err = AQ_OK;
}

size_t smb_wire_left(const struct smb_wire_cur *cur)
{
	return cur->err ? 0 : cur->len - cur->pos;
}

const uint8_t *smb_wire_bytes(struct smb_wire_cur *cur, size_t n)
{
	const uint8_t *q;

	if (cur->err || n > cur->len - cur->pos) {
		cur->err = AQ_EINVAL;
		return NULL;
	}
	q = cur->p + cur->pos;
	cur->pos += n;
	return q;
}

void smb_wire_skip(struct smb_wire_cur *cur, size_t n)
{
	(void)smb_wire_bytes(cur, n);
}

void smb_wire_seek(struct smb_wire_cur *cur, size_t pos)
{
	if (cur->err || pos > cur->len) {
		cur->err = AQ_EINVAL;
		return;
	}
	cur->pos = pos;
}

void smb_wire_align8(struct smb_wire_cur *cur)
{
	size_t pad = (8 - (cur->pos & 7)) & 7;

	if (cur->err)
		return;
	cur->pos = pad > cur->len - cur->pos ? cur->len : cur->pos + pad;
}

uint16_t smb_wire_get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t smb_wire_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t smb_wire_get_u64(const uint8_t *p)
{
	return (uint64_t)smb_wire_get_u32(p) | (uint64_t)smb_wire_get_u32(p + 4) << 32;
}

uint8_t smb_wire_u8(struct smb_wire_cur *cur)
{
	const uint8_t *q = smb_wire_bytes(cur, 1);

	return q ? q[0] : 0;
}

uint16_t smb_wire_u16(struct smb_wire_cur *cur)
{
	const uint8_t *q = smb_wire_bytes(cur, 2);

	return q ? smb_wire_get_u16(q) : 0;
}

uint32_t smb_wire_u32(struct smb_wire_cur *cur)
{
	const uint8_t *q = smb_wire_bytes(cur, 4);

	return q ? smb_wire_get_u32(q) : 0;
}

uint64_t smb_wire_u64(struct smb_wire_cur *cur)
{
	const uint8_t *q = smb_wire_bytes(cur, 8);

	return q ? smb_wire_get_u64(q) : 0;
}

/* ---- encode writers: each reserves its bytes, then fills them in place ---- */

void smb_wire_put_u8(struct ut_buf *buf, uint8_t v)
{
	uint8_t *q = ut_buf_put_zero(buf, 1);

	if (q)
		q[0] = v;
}

void smb_wire_put_u16(struct ut_buf *buf, uint16_t v)
{
	if (ut_buf_put_zero(buf, 2))
		ut_buf_set_le16(buf, buf->len - 2, v);
}

void smb_wire_put_u32(struct ut_buf *buf, uint32_t v)
{
	if (ut_buf_put_zero(buf, 4))
		ut_buf_set_le32(buf, buf->len - 4, v);
}

void smb_wire_put_u64(struct ut_buf *buf, uint64_t v)
{
	smb_wire_put_u32(buf, (uint32_t)v);
	smb_wire_put_u32(buf, (uint32_t)(v >> 32));
}

void smb_wire_put_bytes(struct ut_buf *buf, const void *data, size_t n)
{
	uint8_t *q = ut_buf_put_zero(buf, n);

	if (q && n)
		memcpy(q, data, n);
}

void smb_wire_pad(struct ut_buf *buf, size_t base, size_t align)
{
	size_t used = buf->len >= base ? buf->len - base : 0;

	(void)ut_buf_put_zero(buf, (align - (used & (align - 1))) & (align - 1));
}

/* ---- strings ---- */

int smb_wire_utf16_to_utf8(const uint8_t *in, size_t inlen, char *out, size_t outcap, size_t *outlen)
{
	size_t i = 0, o = 0;

	if (outlen)
		*outlen = 0;
	if (inlen & 1 || outcap == 0)
		return inlen & 1 ? AQ_EINVAL : AQ_ETOOBIG;
	while (i < inlen) {
		uint32_t c = smb_wire_get_u16(in + i);
		size_t n;

		i += 2;
		if (c >= 0xD800 && c <= 0xDBFF) {
			uint32_t lo;

			if (i + 2 > inlen)
				return AQ_EINVAL;
			lo = smb_wire_get_u16(in + i);
			if (lo < 0xDC00 || lo > 0xDFFF)
				return AQ_EINVAL;
			i += 2;
			c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
		} else if ((c >= 0xDC00 && c <= 0xDFFF) || c == 0) {
			return AQ_EINVAL;
		}
		n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
		if (outcap - o <= n)
			return AQ_ETOOBIG;
		if (n == 1) {
			out[o++] = (char)c;
		} else if (n == 2) {
			out[o++] = (char)(0xC0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 0x3F));
		} else if (n == 3) {
			out[o++] = (char)(0xE0 | c >> 12);
			out[o++] = (char)(0x80 | ((c >> 6) & 0x3F));
			out[o++] = (char)(0x80 | (c & 0x3F));
		} else {
			out[o++] = (char)(0xF0 | c >> 18);
			out[o++] = (char)(0x80 | ((c >> 12) & 0x3F));
			out[o++] = (char)(0x80 | ((c >> 6) & 0x3F));
			out[o++] = (char)(0x80 | (c & 0x3F));
		}
	}
	out[o] = '\0';
	if (outlen)
		*outlen = o;
	return AQ_OK;
}

/* One code point from UTF-8 at s[*i] (n bytes); -1 if malformed, overlong,
 * a surrogate or past U+10FFFF. */
static int32_t smb_wire_utf8_next(const uint8_t *s, size_t n, size_t *i)
{
	uint32_t c = s[*i], min;
	size_t k, more;

	if (c < 0x80) {
		(*i)++;
		return (int32_t)c;
	}
	if ((c & 0xE0) == 0xC0) {
		more = 1, c &= 0x1F, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		more = 2, c &= 0x0F, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		more = 3, c &= 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if (n - *i <= more)
		return -1;
	for (k = 1; k <= more; k++) {
		if ((s[*i + k] & 0xC0) != 0x80)
			return -1;
		c = c << 6 | (s[*i + k] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return -1;
	*i += more + 1;
	return (int32_t)c;
}

int smb_wire_put_utf16(struct ut_buf *buf, const char *utf8, size_t len, size_t *outlen)
{
	const uint8_t *s = (const uint8_t *)utf8;
	size_t i = 0, start = buf->len;

	if (outlen)
		*outlen = 0;
	while (i < len) {
		int32_t c = smb_wire_utf8_next(s, len, &i);

		if (c < 0)
			return AQ_EINVAL;
		if (c >= 0x10000) {
			c -= 0x10000;
			smb_wire_put_u16(buf, (uint16_t)(0xD800 | c >> 10));
			smb_wire_put_u16(buf, (uint16_t)(0xDC00 | (c & 0x3FF)));
		} else {
			smb_wire_put_u16(buf, (uint16_t)c);
		}
	}
	if (buf->err)
		return buf->err;
	if (outlen)
		*outlen = buf->len - start;
	return AQ_OK;
}

/* ---- framing and headers ---- */

int smb_wire_frame_len(const uint8_t prefix[4], size_t max, uint32_t *len)
{
	uint32_t n = (uint32_t)prefix[1] << 16 | (uint32_t)prefix[2] << 8 | prefix[3];

	*len = 0;
	if (prefix[0] != 0 || n < 4)
		return AQ_EINVAL;
	if (n > max)
		return AQ_ETOOBIG;
	*len = n;
	return AQ_OK;
}

enum smb_wire_kind smb_wire_frame_kind(const uint8_t *p, size_t len)
{
	if (len < 4 || p[1] != 'S' || p[2] != 'M' || p[3] != 'B')
		return SMB_WIRE_UNKNOWN;
	switch (p[0]) {
	case 0xFE: return SMB_WIRE_SMB2;
	case 0xFD: return SMB_WIRE_TRANSFORM;
	case 0xFC: return SMB_WIRE_COMPRESSED;
	case 0xFF: return SMB_WIRE_SMB1;
	default: return SMB_WIRE_UNKNOWN;
	}
}

int smb_wire_hdr_decode(const uint8_t *p, size_t len, struct smb_wire_hdr *h)
{
	struct smb_wire_cur c;
	const uint8_t *sig;

	memset(h, 0, sizeof(*h));
	if (smb_wire_frame_kind(p, len) != SMB_WIRE_SMB2)
		return AQ_EINVAL;
	smb_wire_cur_init(&c, p, len);
	smb_wire_skip(&c, 4);
	if (smb_wire_u16(&c) != SMB2_HDR_LEN)
		return AQ_EINVAL;
	h->credit_charge = smb_wire_u16(&c);
	h->status = smb_wire_u32(&c);
	h->command = smb_wire_u16(&c);
	h->credits = smb_wire_u16(&c);
	h->flags = smb_wire_u32(&c);
	h->next_command = smb_wire_u32(&c);
	h->message_id = smb_wire_u64(&c);
	if (h->flags & SMB2_FLAGS_ASYNC_COMMAND) {
		h->async_id = smb_wire_u64(&c);
	} else {
		smb_wire_skip(&c, 4);
		h->tree_id = smb_wire_u32(&c);
	}
	h->session_id = smb_wire_u64(&c);
	sig = smb_wire_bytes(&c, 16);
	if (c.err)
		return c.err;
	memcpy(h->signature, sig, 16);
	return AQ_OK;
}

void smb_wire_hdr_encode(struct ut_buf *buf, const struct smb_wire_hdr *h)
{
	static const uint8_t magic[4] = { 0xFE, 'S', 'M', 'B' };

	smb_wire_put_bytes(buf, magic, 4);
	smb_wire_put_u16(buf, SMB2_HDR_LEN);
	smb_wire_put_u16(buf, h->credit_charge);
	smb_wire_put_u32(buf, h->status);
	smb_wire_put_u16(buf, h->command);
	smb_wire_put_u16(buf, h->credits);
	smb_wire_put_u32(buf, h->flags);
	smb_wire_put_u32(buf, h->next_command);
	smb_wire_put_u64(buf, h->message_id);
	if (h->flags & SMB2_FLAGS_ASYNC_COMMAND) {
		smb_wire_put_u64(buf, h->async_id);
	} else {
		smb_wire_put_u32(buf, 0);
		smb_wire_put_u32(buf, h->tree_id);
	}
	smb_wire_put_u64(buf, h->session_id);
	smb_wire_put_bytes(buf, h->signature, 16);
}

/* Names and request StructureSizes, indexed by command (2.2.x). */
static const struct {
	const char *name;
	uint16_t req_size;
} smb_wire_cmds[SMB2_CMD_COUNT] = {
	[SMB2_NEGOTIATE] = { .name = "NEGOTIATE", .req_size = 36 },
	[SMB2_SESSION_SETUP] = { .name = "SESSION_SETUP", .req_size = 25 },
	[SMB2_LOGOFF] = { .name = "LOGOFF", .req_size = 4 },
	[SMB2_TREE_CONNECT] = { .name = "TREE_CONNECT", .req_size = 9 },
	[SMB2_TREE_DISCONNECT] = { .name = "TREE_DISCONNECT", .req_size = 4 },
	[SMB2_CREATE] = { .name = "CREATE", .req_size = 57 },
	[SMB2_CLOSE] = { .name = "CLOSE", .req_size = 24 },
	[SMB2_FLUSH] = { .name = "FLUSH", .req_size = 24 },
	[SMB2_READ] = { .name = "READ", .req_size = 49 },
	[SMB2_WRITE] = { .name = "WRITE", .req_size = 49 },
	[SMB2_LOCK] = { .name = "LOCK", .req_size = 48 },
	[SMB2_IOCTL] = { .name = "IOCTL", .req_size = 57 },
	[SMB2_CANCEL] = { .name = "CANCEL", .req_size = 4 },
	[SMB2_ECHO] = { .name = "ECHO", .req_size = 4 },
	[SMB2_QUERY_DIRECTORY] = { .name = "QUERY_DIRECTORY", .req_size = 33 },
	[SMB2_CHANGE_NOTIFY] = { .name = "CHANGE_NOTIFY", .req_size = 32 },
	[SMB2_QUERY_INFO] = { .name = "QUERY_INFO", .req_size = 41 },
	[SMB2_SET_INFO] = { .name = "SET_INFO", .req_size = 33 },
	/* 24 for an oplock acknowledgment, 36 for a lease one */
	[SMB2_OPLOCK_BREAK] = { .name = "OPLOCK_BREAK", .req_size = 24 },
};

const char *smb_wire_cmd_name(uint16_t command)
{
	return command < SMB2_CMD_COUNT ? smb_wire_cmds[command].name : "UNKNOWN";
}

uint16_t smb_wire_req_size(uint16_t command)
{
	return command < SMB2_CMD_COUNT ? smb_wire_cmds[command].req_size : 0;
}

int smb_wire_transform_decode(const uint8_t *p, size_t len, struct smb_wire_transform *t)
{
	struct smb_wire_cur c;
	const uint8_t *sig, *nonce;

	memset(t, 0, sizeof(*t));
	if (smb_wire_frame_kind(p, len) != SMB_WIRE_TRANSFORM || len < SMB2_TRANSFORM_LEN + SMB2_HDR_LEN)
		return AQ_EINVAL;
	smb_wire_cur_init(&c, p, len);
	smb_wire_skip(&c, 4);
	sig = smb_wire_bytes(&c, 16);
	nonce = smb_wire_bytes(&c, 16);
	t->orig_size = smb_wire_u32(&c);
	smb_wire_skip(&c, 2);
	t->flags = smb_wire_u16(&c);
	t->session_id = smb_wire_u64(&c);
	if (c.err)
		return c.err;
	memcpy(t->signature, sig, 16);
	memcpy(t->nonce, nonce, 16);
	if (t->flags != SMB2_TRANSFORM_FLAG_ENCRYPTED || t->orig_size != len - SMB2_TRANSFORM_LEN)
		return AQ_EINVAL;
	return AQ_OK;
}

void smb_wire_transform_encode(struct ut_buf *buf, const struct smb_wire_transform *t)
{
	static const uint8_t magic[4] = { 0xFD, 'S', 'M', 'B' };

	smb_wire_put_bytes(buf, magic, 4);
	smb_wire_put_bytes(buf, t->signature, 16);
	smb_wire_put_bytes(buf, t->nonce, 16);
	smb_wire_put_u32(buf, t->orig_size);
	smb_wire_put_u16(buf, 0);
	smb_wire_put_u16(buf, t->flags);
	smb_wire_put_u64(buf, t->session_id);
}

/* SMB1 header (MS-CIFS 2.2.3.1): 32 bytes, then WordCount, ByteCount and
 * the dialect strings, each 0x02 followed by a NUL-terminated name. */
int smb_wire_smb1_negotiate(const uint8_t *p, size_t len, uint16_t *dialect)
{
	struct smb_wire_cur c;
	const uint8_t *bytes;
	uint16_t count;
	size_t i = 0;
	bool wild = false, d202 = false;

	*dialect = 0;
	if (smb_wire_frame_kind(p, len) != SMB_WIRE_SMB1 || len < 35 || p[4] != 0x72 /* SMB_COM_NEGOTIATE */)
		return AQ_EINVAL;
	smb_wire_cur_init(&c, p, len);
	smb_wire_skip(&c, 32);
	if (smb_wire_u8(&c) != 0)
		return AQ_EINVAL;
	count = smb_wire_u16(&c);
	bytes = smb_wire_bytes(&c, count);
	if (c.err)
		return c.err;
	while (i < count) {
		const uint8_t *name, *nul;

		if (bytes[i] != 0x02)
			return AQ_EINVAL;
		name = bytes + i + 1;
		nul = memchr(name, 0, count - i - 1);
		if (!nul)
			return AQ_EINVAL;
		if ((size_t)(nul - name) == 9 && !memcmp(name, "SMB 2.???", 9))
			wild = true;
		if ((size_t)(nul - name) == 9 && !memcmp(name, "SMB 2.002", 9))
			d202 = true;
		i = (size_t)(nul - bytes) + 1;
	}
	if (!wild && !d202)
		return AQ_EUNIMPL;
	*dialect = wild ? SMB2_DIALECT_WILDCARD : SMB2_DIALECT_202;
	return AQ_OK;
}

/* ---- compounds ---- */

void smb_wire_chain_init(struct smb_wire_chain *ch, const uint8_t *frame, size_t len)
{
	ch->p = frame;
	ch->len = len;
	ch->off = 0;
	ch->index = 0;
	ch->done = len == 0;
}

int smb_wire_chain_next(struct smb_wire_chain *ch, struct smb_wire_msg *m)
{
	size_t left = ch->len - ch->off, mlen;
	int rc;

	memset(m, 0, sizeof(*m));
	if (ch->done)
		return 0;
	if ((rc = smb_wire_hdr_decode(ch->p + ch->off, left, &m->hdr)) != AQ_OK)
		goto fail;
	mlen = left;
	if (m->hdr.next_command) {
		/* Each message starts 8-aligned and holds at least a header. */
		if (m->hdr.next_command & 7 || m->hdr.next_command < SMB2_HDR_LEN || m->hdr.next_command >= left) {
			rc = AQ_EINVAL;
			goto fail;
		}
		mlen = m->hdr.next_command;
	}
	m->p = ch->p + ch->off;
	m->len = mlen;
	m->body = m->p + SMB2_HDR_LEN;
	m->body_len = mlen - SMB2_HDR_LEN;
	m->index = ch->index++;
	ch->off += mlen;
	ch->done = m->hdr.next_command == 0;
	return 1;
fail:
	ch->done = true;
	return rc;
}

void smb_wire_chain_link(struct ut_buf *buf, size_t prev_hdr_off)
{
	smb_wire_pad(buf, prev_hdr_off, 8);
	ut_buf_set_le32(buf, prev_hdr_off + 20, (uint32_t)(buf->len - prev_hdr_off));
}

int smb_wire_body(const struct smb_wire_msg *m, uint16_t want, struct smb_wire_cur *cur)
{
	smb_wire_cur_init(cur, m->body, m->body_len);
	if (m->body_len < 2 || smb_wire_get_u16(m->body) != want || m->body_len < (size_t)(want & ~1u)) {
		cur->err = AQ_EINVAL;
		return AQ_EINVAL;
	}
	smb_wire_skip(cur, 2);
	return AQ_OK;
}

int smb_wire_slice(const struct smb_wire_msg *m, uint32_t off, uint32_t len, size_t min_off, const uint8_t **out)
{
	*out = NULL;
	if (len == 0)
		return AQ_OK;
	if (off < min_off || off > m->len || len > m->len - off)
		return AQ_EINVAL;
	*out = m->p + off;
	return AQ_OK;
}
