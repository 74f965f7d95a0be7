/* smb_ea: FILE_FULL_EA_INFORMATION and FILE_GET_EA_INFORMATION lists, read
 * with a bounded walker (every entry checked against the buffer and its
 * own NextEntryOffset before a byte of it is read), and the merge a SET
 * does. Pure: no store, no allocation (see smb_ea.h).
 */
#include <string.h>

#include "agent/smb/smb_ea.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

static uint32_t smb_ea_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void smb_ea_iter_init(struct smb_ea_iter *it, const uint8_t *p, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->p = p;
	it->len = len;
	it->done = len == 0;
}

/* The bounds of the entry at it->off: its NextEntryOffset in *next (0:
 * last) once the fixed part of hdr bytes and then body bytes fit the
 * buffer and, for one that is not last, its next offset. */
static int smb_ea_bound(struct smb_ea_iter *it, size_t hdr, size_t body, uint32_t *next)
{
	size_t room = it->len - it->off;

	*next = smb_ea_le32(it->p + it->off);
	if (hdr + body > room)
		return AQ_EINVAL;
	if (*next != 0 && (*next % 4u != 0 || *next < hdr + body || *next >= room))
		return AQ_EINVAL;
	return AQ_OK;
}

/* Before the entry at it->off, whose fixed part is hdr bytes: 1 when one
 * is there to read, 0 when the walk is done, or the walk's error (a fixed
 * part cut short is AQ_EINVAL, kept in it->err). */
static int smb_ea_head(struct smb_ea_iter *it, size_t hdr)
{
	if (it->err != AQ_OK)
		return it->err;
	if (it->done)
		return 0;
	if (it->len - it->off < hdr) {
		it->err = AQ_EINVAL;
		return it->err;
	}
	return 1;
}

/* After an entry that smb_ea_bound passed, nul being the byte after its
 * name: the name must end there (else AQ_EINVAL, kept in it->err); then
 * step to the next entry, or end the walk after the last, and return 1. */
static int smb_ea_step(struct smb_ea_iter *it, uint8_t nul, uint32_t next)
{
	if (nul != 0) {
		it->err = AQ_EINVAL;
		return it->err;
	}
	if (next == 0)
		it->done = true;
	else
		it->off += next;
	return 1;
}

int smb_ea_next(struct smb_ea_iter *it, struct smb_ea *ea)
{
	const uint8_t *e;
	uint32_t next;
	int rc;

	if ((rc = smb_ea_head(it, SMB_EA_HDR)) != 1)
		return rc;
	e = it->p + it->off;
	ea->flags = e[4];
	ea->name_len = e[5];
	ea->value_len = (uint16_t)(e[6] | e[7] << 8);
	if ((it->err = smb_ea_bound(it, SMB_EA_HDR, (size_t)ea->name_len + 1 + ea->value_len, &next)) != AQ_OK)
		return it->err;
	ea->name = e + SMB_EA_HDR;
	ea->value = ea->name + ea->name_len + 1;
	return smb_ea_step(it, ea->name[ea->name_len], next);
}

int smb_ea_get_next(struct smb_ea_iter *it, const uint8_t **name, uint8_t *nlen)
{
	const uint8_t *e;
	uint32_t next;
	int rc;

	if ((rc = smb_ea_head(it, 5)) != 1)
		return rc;
	e = it->p + it->off;
	*nlen = e[4];
	if ((it->err = smb_ea_bound(it, 5, (size_t)*nlen + 1, &next)) != AQ_OK)
		return it->err;
	*name = e + 5;
	return smb_ea_step(it, e[5 + *nlen], next);
}

/* What Windows and smbd refuse in an EA name. */
static bool smb_ea_name_ok(const uint8_t *name, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (name[i] < 0x20 || strchr("\"*+,/:;<=>?[\\]|", name[i]))
			return false;
	return true;
}

uint32_t smb_ea_check(const uint8_t *p, size_t len, size_t *count)
{
	struct smb_ea_iter it;
	struct smb_ea e;
	size_t n = 0;
	int rc;

	if (len == 0 || len > SMB_EA_LIST_MAX)
		return STATUS_INVALID_PARAMETER;
	smb_ea_iter_init(&it, p, len);
	while ((rc = smb_ea_next(&it, &e)) == 1) {
		if (!smb_ea_name_ok(e.name, e.name_len))
			return STATUS_INVALID_EA_NAME;
		if (e.flags & ~SMB_EA_NEED_EA)
			return STATUS_INVALID_EA_FLAG;
		n++;
	}
	if (rc != 0)
		return STATUS_INVALID_PARAMETER;
	if (count)
		*count = n;
	return STATUS_SUCCESS;
}

size_t smb_ea_entry_size(const struct smb_ea *e, bool last)
{
	size_t n = SMB_EA_HDR + (size_t)e->name_len + 1 + e->value_len;

	return last ? n : (n + 3u) & ~(size_t)3u;
}

void smb_ea_put(uint8_t *out, const struct smb_ea *e, bool last)
{
	size_t n = smb_ea_entry_size(e, last), body = SMB_EA_HDR + (size_t)e->name_len + 1 + e->value_len;
	uint32_t next = last ? 0 : (uint32_t)n;

	for (int i = 0; i < 4; i++)
		out[i] = (uint8_t)(next >> (8 * i));
	out[4] = e->flags;
	out[5] = e->name_len;
	out[6] = (uint8_t)e->value_len;
	out[7] = (uint8_t)(e->value_len >> 8);
	if (e->name_len) /* an entry may have no value (NULL): no copy of nothing */
		memmove(out + SMB_EA_HDR, e->name, e->name_len);
	out[SMB_EA_HDR + e->name_len] = 0;
	if (e->value_len)
		memmove(out + SMB_EA_HDR + e->name_len + 1, e->value, e->value_len);
	memset(out + body, 0, n - body);
}

static bool smb_ea_same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++) {
		uint8_t x = a[i], y = b[i];

		if (x >= 'a' && x <= 'z')
			x = (uint8_t)(x - 32);
		if (y >= 'a' && y <= 'z')
			y = (uint8_t)(y - 32);
		if (x != y)
			return false;
	}
	return true;
}

int smb_ea_find(const uint8_t *list, size_t len, const uint8_t *name, size_t nlen, struct smb_ea *e)
{
	struct smb_ea_iter it;

	smb_ea_iter_init(&it, list, len);
	while (smb_ea_next(&it, e) == 1)
		if (smb_ea_same(e->name, e->name_len, name, nlen))
			return 1;
	return 0;
}

bool smb_ea_any_needed(const uint8_t *list, size_t len)
{
	struct smb_ea_iter it;
	struct smb_ea e;

	smb_ea_iter_init(&it, list, len);
	while (smb_ea_next(&it, &e) == 1)
		if (e.flags & SMB_EA_NEED_EA)
			return true;
	return false;
}

/* Whether a later entry of upd than the one at off names the same EA (then
 * that one decides). */
static bool smb_ea_later(const uint8_t *upd, size_t upd_len, size_t off, const struct smb_ea *e)
{
	struct smb_ea_iter it;
	struct smb_ea x;

	smb_ea_iter_init(&it, upd, upd_len);
	it.off = off;
	it.done = off >= upd_len;
	while (smb_ea_next(&it, &x) == 1)
		if (smb_ea_same(x.name, x.name_len, e->name, e->name_len))
			return true;
	return false;
}

int smb_ea_add(uint8_t *out, size_t cap, size_t *len, size_t *last_off, const struct smb_ea *e)
{
	size_t at = *len, prev = 0, padded = 0;

	if (at > 0) {
		prev = at - *last_off;
		padded = (prev + 3u) & ~(size_t)3u;
		at = *last_off + padded;
	}
	if (at > cap || smb_ea_entry_size(e, true) > cap - at)
		return AQ_ETOOBIG;
	if (*len > 0) {
		memset(out + *len, 0, padded - prev);
		for (int i = 0; i < 4; i++)
			out[*last_off + (size_t)i] = (uint8_t)(padded >> (8 * i));
	}
	smb_ea_put(out + at, e, true);
	*last_off = at;
	*len = at + smb_ea_entry_size(e, true);
	return AQ_OK;
}

int smb_ea_merge(const uint8_t *old, size_t old_len, const uint8_t *upd, size_t upd_len, uint8_t *out,
		 size_t cap, size_t *len)
{
	struct smb_ea_iter it, u;
	struct smb_ea e, x;
	size_t n = 0, last = 0;
	int rc;

	if (cap < SMB_EA_LIST_MAX || (old_len && smb_ea_check(old, old_len, NULL) != STATUS_SUCCESS) ||
	    smb_ea_check(upd, upd_len, NULL) != STATUS_SUCCESS)
		return AQ_EINVAL;
	/* the kept entries that upd leaves, in their order */
	smb_ea_iter_init(&it, old, old_len);
	while ((rc = smb_ea_next(&it, &e)) == 1) {
		bool named = false;

		smb_ea_iter_init(&u, upd, upd_len);
		while (!named && smb_ea_next(&u, &x) == 1)
			named = smb_ea_same(x.name, x.name_len, e.name, e.name_len);
		if (!named && (rc = smb_ea_add(out, SMB_EA_LIST_MAX, &n, &last, &e)) != AQ_OK)
			return rc;
	}
	/* then upd's, each name once (its last entry decides), no empty value */
	smb_ea_iter_init(&u, upd, upd_len);
	while (smb_ea_next(&u, &x) == 1) {
		size_t after = u.done ? upd_len : u.off;

		if (x.value_len == 0 || smb_ea_later(upd, upd_len, after, &x))
			continue;
		if ((rc = smb_ea_add(out, SMB_EA_LIST_MAX, &n, &last, &x)) != AQ_OK)
			return rc;
	}
	*len = n;
	return AQ_OK;
}
