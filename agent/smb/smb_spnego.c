/* smb_spnego: SPNEGO NegTokenInit/NegTokenResp over a bounded DER reader;
 * see smb_spnego.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_spnego.h"

#include <string.h>

#include "api/api_error.h"

/* The DER contents of the OIDs (after tag and length). */
static const uint8_t smb_spnego_oid[] = { 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02 };

static const struct {
	unsigned bit;
	uint8_t len;
	uint8_t der[10];
} smb_spnego_mechs[] = {
	{ .bit = SMB_SPNEGO_NTLMSSP, .len = 10, .der = { 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a } },
	{ .bit = SMB_SPNEGO_KRB5, .len = 9, .der = { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02 } },
	{ .bit = SMB_SPNEGO_MS_KRB5, .len = 9, .der = { 0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02 } },
	{ .bit = SMB_SPNEGO_NEGOEX, .len = 10, .der = { 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x1e } },
};
#define SMB_SPNEGO_NMECHS (sizeof(smb_spnego_mechs) / sizeof(smb_spnego_mechs[0]))

/* ---- DER reader ---------------------------------------------------------- */

/* One element at the cursor: *tag, and its contents as a cursor. Sets
 * c->err on a high tag number, an indefinite or over-long length, or a
 * length past what is left. */
static void smb_spnego_tl(struct smb_wire_cur *c, uint8_t *tag, struct smb_wire_cur *in)
{
	uint8_t l;
	size_t n = 0;
	const uint8_t *p;

	*tag = smb_wire_u8(c);
	l = smb_wire_u8(c);
	if (!c->err && (*tag & 0x1f) == 0x1f)
		c->err = AQ_EINVAL;
	if (!c->err && l & 0x80) {
		unsigned k = l & 0x7f, i;

		if (k == 0 || k > 4)
			c->err = AQ_EINVAL;
		for (i = 0; i < k && !c->err; i++)
			n = n << 8 | smb_wire_u8(c);
	} else {
		n = l;
	}
	p = smb_wire_bytes(c, n);
	smb_wire_cur_init(in, p, c->err ? 0 : n);
	if (c->err)
		in->err = c->err;
}

/* The next element must have tag want; its contents in *in. */
static void smb_spnego_expect(struct smb_wire_cur *c, uint8_t want, struct smb_wire_cur *in)
{
	uint8_t tag;

	smb_spnego_tl(c, &tag, in);
	if (!c->err && tag != want)
		c->err = in->err = AQ_EINVAL;
}

/* Peek at the next tag (0 at the end or on error). */
static uint8_t smb_spnego_peek(const struct smb_wire_cur *c)
{
	return smb_wire_left(c) ? c->p[c->pos] : 0;
}

static unsigned smb_spnego_mech_bit(const uint8_t *der, size_t len)
{
	size_t i;

	for (i = 0; i < SMB_SPNEGO_NMECHS; i++)
		if (len == smb_spnego_mechs[i].len && !memcmp(der, smb_spnego_mechs[i].der, len))
			return smb_spnego_mechs[i].bit;
	return SMB_SPNEGO_OTHER;
}

/* An [n] { OCTET STRING } field. */
static void smb_spnego_octets(struct smb_wire_cur *c, uint8_t ctx_tag, const uint8_t **p, size_t *n)
{
	struct smb_wire_cur f, o;

	smb_spnego_expect(c, ctx_tag, &f);
	smb_spnego_expect(&f, 0x04, &o);
	if (f.err || smb_wire_left(&f)) {
		c->err = AQ_EINVAL;
		return;
	}
	*n = o.len;
	*p = o.len ? o.p : NULL;
}

int smb_spnego_init_decode(const uint8_t *blob, size_t len, struct smb_spnego_init *r)
{
	struct smb_wire_cur c, app, oid, ctx, seq, f, list, m;
	size_t start;

	memset(r, 0, sizeof(*r));
	if (len > SMB_SPNEGO_MAX)
		return AQ_ETOOBIG;
	smb_wire_cur_init(&c, blob, len);
	smb_spnego_expect(&c, 0x60, &app);
	smb_spnego_expect(&app, 0x06, &oid);
	if (app.err || oid.len != sizeof(smb_spnego_oid) || memcmp(oid.p, smb_spnego_oid, oid.len))
		return AQ_EINVAL;
	smb_spnego_expect(&app, 0xa0, &ctx);
	smb_spnego_expect(&ctx, 0x30, &seq);
	if (app.err || ctx.err)
		return AQ_EINVAL;
	/* [0] mechTypes, required */
	smb_spnego_expect(&seq, 0xa0, &f);
	start = f.pos;
	smb_spnego_expect(&f, 0x30, &list);
	if (seq.err || f.err || smb_wire_left(&f))
		return AQ_EINVAL;
	r->mech_list = f.p + start;
	r->mech_list_len = f.len - start;
	while (smb_wire_left(&list)) {
		unsigned bit;

		smb_spnego_expect(&list, 0x06, &m);
		if (list.err)
			return AQ_EINVAL;
		bit = smb_spnego_mech_bit(m.p, m.len);
		if (!r->mechs)
			r->first = bit;
		r->mechs |= bit;
	}
	/* [1] reqFlags (ignored), [2] mechToken, [3] mechListMIC (or, from a
	 * server, negHints, which a client does not send), in order */
	if (smb_spnego_peek(&seq) == 0xa1)
		smb_spnego_expect(&seq, 0xa1, &f);
	if (smb_spnego_peek(&seq) == 0xa2)
		smb_spnego_octets(&seq, 0xa2, &r->token, &r->token_len);
	if (smb_spnego_peek(&seq) == 0xa3)
		smb_spnego_octets(&seq, 0xa3, &r->mic, &r->mic_len);
	if (seq.err || smb_wire_left(&seq) || smb_wire_left(&ctx) || smb_wire_left(&app) || smb_wire_left(&c))
		return AQ_EINVAL;
	return AQ_OK;
}

int smb_spnego_resp_decode(const uint8_t *blob, size_t len, struct smb_spnego_resp *r)
{
	struct smb_wire_cur c, ctx, seq, f, v;

	memset(r, 0, sizeof(*r));
	r->state = SMB_SPNEGO_STATE_NONE;
	if (len > SMB_SPNEGO_MAX)
		return AQ_ETOOBIG;
	smb_wire_cur_init(&c, blob, len);
	smb_spnego_expect(&c, 0xa1, &ctx);
	smb_spnego_expect(&ctx, 0x30, &seq);
	if (c.err || ctx.err || smb_wire_left(&ctx))
		return AQ_EINVAL;
	if (smb_spnego_peek(&seq) == 0xa0) {
		smb_spnego_expect(&seq, 0xa0, &f);
		smb_spnego_expect(&f, 0x0a, &v);
		if (f.err || v.len != 1 || smb_wire_left(&f) || v.p[0] > SMB_SPNEGO_REQUEST_MIC)
			return AQ_EINVAL;
		r->state = v.p[0];
	}
	if (smb_spnego_peek(&seq) == 0xa1) {
		smb_spnego_expect(&seq, 0xa1, &f);
		smb_spnego_expect(&f, 0x06, &v);
		if (f.err || smb_wire_left(&f))
			return AQ_EINVAL;
		r->mech = smb_spnego_mech_bit(v.p, v.len);
	}
	if (smb_spnego_peek(&seq) == 0xa2)
		smb_spnego_octets(&seq, 0xa2, &r->token, &r->token_len);
	if (smb_spnego_peek(&seq) == 0xa3)
		smb_spnego_octets(&seq, 0xa3, &r->mic, &r->mic_len);
	if (seq.err || smb_wire_left(&seq) || smb_wire_left(&c))
		return AQ_EINVAL;
	return AQ_OK;
}

/* ---- DER writer: lengths are known before the contents are written ---- */

static size_t smb_spnego_lsize(size_t n)
{
	return n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 4;
}

/* Size of a whole element with n content bytes. */
static size_t smb_spnego_el(size_t n)
{
	return 1 + smb_spnego_lsize(n) + n;
}

static void smb_spnego_put_tl(struct ut_buf *b, uint8_t tag, size_t n)
{
	smb_wire_put_u8(b, tag);
	if (n < 0x80) {
		smb_wire_put_u8(b, (uint8_t)n);
	} else if (n < 0x100) {
		smb_wire_put_u8(b, 0x81);
		smb_wire_put_u8(b, (uint8_t)n);
	} else if (n < 0x10000) {
		smb_wire_put_u8(b, 0x82);
		smb_wire_put_u8(b, (uint8_t)(n >> 8));
		smb_wire_put_u8(b, (uint8_t)n);
	} else {
		smb_wire_put_u8(b, 0x83);
		smb_wire_put_u8(b, (uint8_t)(n >> 16));
		smb_wire_put_u8(b, (uint8_t)(n >> 8));
		smb_wire_put_u8(b, (uint8_t)n);
	}
}

static int smb_spnego_mech_index(unsigned bit)
{
	size_t i;

	for (i = 0; i < SMB_SPNEGO_NMECHS; i++)
		if (smb_spnego_mechs[i].bit == bit)
			return (int)i;
	return -1;
}

int smb_spnego_init2_encode(struct ut_buf *b, unsigned mechs)
{
	size_t oids = 0, s_list, f0, seq, i;

	if (!mechs || mechs & ~0x0fu)
		return AQ_EINVAL;
	for (i = 0; i < SMB_SPNEGO_NMECHS; i++)
		if (mechs & smb_spnego_mechs[i].bit)
			oids += smb_spnego_el(smb_spnego_mechs[i].len);
	s_list = smb_spnego_el(oids); /* SEQUENCE OF MechType */
	f0 = smb_spnego_el(s_list);   /* [0] mechTypes */
	seq = smb_spnego_el(f0);      /* NegTokenInit SEQUENCE */
	smb_spnego_put_tl(b, 0x60, smb_spnego_el(sizeof(smb_spnego_oid)) + smb_spnego_el(seq));
	smb_spnego_put_tl(b, 0x06, sizeof(smb_spnego_oid));
	smb_wire_put_bytes(b, smb_spnego_oid, sizeof(smb_spnego_oid));
	smb_spnego_put_tl(b, 0xa0, seq);
	smb_spnego_put_tl(b, 0x30, f0);
	smb_spnego_put_tl(b, 0xa0, s_list);
	smb_spnego_put_tl(b, 0x30, oids);
	for (i = 0; i < SMB_SPNEGO_NMECHS; i++) {
		if (!(mechs & smb_spnego_mechs[i].bit))
			continue;
		smb_spnego_put_tl(b, 0x06, smb_spnego_mechs[i].len);
		smb_wire_put_bytes(b, smb_spnego_mechs[i].der, smb_spnego_mechs[i].len);
	}
	return b->err;
}

int smb_spnego_resp_encode(struct ut_buf *b, int state, unsigned mech, const uint8_t *token, size_t token_len,
			   const uint8_t *mic, size_t mic_len)
{
	int mi = mech ? smb_spnego_mech_index(mech) : -1;
	size_t f0 = 0, f1 = 0, f2 = 0, f3 = 0, seq;

	if ((mech && mi < 0) || state > SMB_SPNEGO_REQUEST_MIC || token_len > SMB_SPNEGO_MAX ||
	    mic_len > SMB_SPNEGO_MAX)
		return AQ_EINVAL;
	if (state >= 0)
		f0 = smb_spnego_el(smb_spnego_el(1));
	if (mi >= 0)
		f1 = smb_spnego_el(smb_spnego_el(smb_spnego_mechs[mi].len));
	if (token)
		f2 = smb_spnego_el(smb_spnego_el(token_len));
	if (mic)
		f3 = smb_spnego_el(smb_spnego_el(mic_len));
	seq = f0 + f1 + f2 + f3;
	smb_spnego_put_tl(b, 0xa1, smb_spnego_el(seq));
	smb_spnego_put_tl(b, 0x30, seq);
	if (state >= 0) {
		smb_spnego_put_tl(b, 0xa0, 3);
		smb_spnego_put_tl(b, 0x0a, 1);
		smb_wire_put_u8(b, (uint8_t)state);
	}
	if (mi >= 0) {
		smb_spnego_put_tl(b, 0xa1, smb_spnego_el(smb_spnego_mechs[mi].len));
		smb_spnego_put_tl(b, 0x06, smb_spnego_mechs[mi].len);
		smb_wire_put_bytes(b, smb_spnego_mechs[mi].der, smb_spnego_mechs[mi].len);
	}
	if (token) {
		smb_spnego_put_tl(b, 0xa2, smb_spnego_el(token_len));
		smb_spnego_put_tl(b, 0x04, token_len);
		smb_wire_put_bytes(b, token, token_len);
	}
	if (mic) {
		smb_spnego_put_tl(b, 0xa3, smb_spnego_el(mic_len));
		smb_spnego_put_tl(b, 0x04, mic_len);
		smb_wire_put_bytes(b, mic, mic_len);
	}
	return b->err;
}
