/* smb_sd: SIDs, ACLs and self-relative security descriptors (MS-DTYP),
 * and their POSIX mapping; see smb_sd.h for the contract. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_sd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_error.h"

#define SMB_SD_HDR 20u
#define SMB_SD_ACL_HDR 8u
#define SMB_SD_ACE_HDR 4u

const struct smb_sd_sid smb_sd_everyone = { .revision = 1, .count = 1, .authority = 1, .sub = { 0 } };

/* ---- SIDs (2.4.2) ------------------------------------------------------------ */

int smb_sd_sid_decode(struct smb_wire_cur *c, struct smb_sd_sid *s)
{
	const uint8_t *a;
	unsigned i;

	memset(s, 0, sizeof(*s));
	s->revision = smb_wire_u8(c);
	s->count = smb_wire_u8(c);
	a = smb_wire_bytes(c, 6);
	if (c->err || s->revision != 1)
		return AQ_EINVAL;
	if (s->count > SMB_SD_SUBAUTH_MAX)
		return AQ_EINVAL;
	for (i = 0; i < 6; i++)
		s->authority = s->authority << 8 | a[i]; /* big-endian, unlike the rest */
	for (i = 0; i < s->count; i++)
		s->sub[i] = smb_wire_u32(c);
	return c->err ? AQ_EINVAL : AQ_OK;
}

size_t smb_sd_sid_size(const struct smb_sd_sid *s)
{
	return 8 + 4 * (size_t)s->count;
}

void smb_sd_sid_encode(struct ut_buf *b, const struct smb_sd_sid *s)
{
	int i;

	smb_wire_put_u8(b, 1);
	smb_wire_put_u8(b, s->count);
	for (i = 5; i >= 0; i--)
		smb_wire_put_u8(b, (uint8_t)(s->authority >> (8 * i)));
	for (i = 0; i < s->count && i < (int)SMB_SD_SUBAUTH_MAX; i++)
		smb_wire_put_u32(b, s->sub[i]);
}

bool smb_sd_sid_eq(const struct smb_sd_sid *a, const struct smb_sd_sid *b)
{
	return a->count == b->count && a->authority == b->authority &&
	       !memcmp(a->sub, b->sub, sizeof(a->sub[0]) * a->count);
}

int smb_sd_sid_to_str(const struct smb_sd_sid *s, char *out, size_t cap)
{
	size_t n;
	int k;
	unsigned i;

	if (s->count > SMB_SD_SUBAUTH_MAX)
		return AQ_EINVAL;
	/* 2.4.2.1: the authority in decimal below 2^32, else in hex */
	if (s->authority >> 32)
		k = snprintf(out, cap, "S-1-0x%" PRIX64, s->authority);
	else
		k = snprintf(out, cap, "S-1-%" PRIu64, s->authority);
	if (k < 0 || (size_t)k >= cap)
		return AQ_ETOOBIG;
	n = (size_t)k;
	for (i = 0; i < s->count; i++) {
		k = snprintf(out + n, cap - n, "-%" PRIu32, s->sub[i]);
		if (k < 0 || (size_t)k >= cap - n)
			return AQ_ETOOBIG;
		n += (size_t)k;
	}
	return AQ_OK;
}

/* One unsigned number at *p (decimal, or hex after 0x when hex_ok). */
static int smb_sd_num(const char **p, bool hex_ok, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	char *end;
	int base = 10;

	if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	if (!(*s >= '0' && *s <= '9') && !(base == 16 && ((*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F'))))
		return AQ_EINVAL;
	errno = 0;
	*v = strtoull(s, &end, base);
	if (errno || *v > max)
		return AQ_EINVAL;
	*p = end;
	return AQ_OK;
}

int smb_sd_sid_from_str(const char *str, struct smb_sd_sid *s)
{
	const char *p = str;
	uint64_t v;

	memset(s, 0, sizeof(*s));
	s->revision = 1;
	if (strncmp(p, "S-1-", 4) && strncmp(p, "s-1-", 4))
		return AQ_EINVAL;
	p += 4;
	if (smb_sd_num(&p, true, (1ull << 48) - 1, &s->authority))
		return AQ_EINVAL;
	while (*p == '-') {
		p++;
		if (s->count == SMB_SD_SUBAUTH_MAX || smb_sd_num(&p, false, UINT32_MAX, &v))
			return AQ_EINVAL;
		s->sub[s->count++] = (uint32_t)v;
	}
	return *p ? AQ_EINVAL : AQ_OK;
}

void smb_sd_sid_unix_user(uint32_t uid, struct smb_sd_sid *s)
{
	*s = (struct smb_sd_sid){ .revision = 1, .count = 2, .authority = 22, .sub = { 1, uid } };
}

void smb_sd_sid_unix_group(uint32_t gid, struct smb_sd_sid *s)
{
	*s = (struct smb_sd_sid){ .revision = 1, .count = 2, .authority = 22, .sub = { 2, gid } };
}

/* ---- ACLs (2.4.5) and ACEs (2.4.4) -------------------------------------------- */

/* The ACE types with a mask and a SID; others are kept opaque. */
static bool smb_sd_ace_known(uint8_t type)
{
	return type == SMB_SD_ACCESS_ALLOWED || type == SMB_SD_ACCESS_DENIED || type == SMB_SD_SYSTEM_AUDIT ||
	       type == SMB_SD_SYSTEM_MANDATORY_LABEL;
}

static int smb_sd_ace_decode(struct smb_wire_cur *acl, struct smb_sd_ace *ace)
{
	struct smb_wire_cur c;
	const uint8_t *body;
	uint16_t size;

	memset(ace, 0, sizeof(*ace));
	ace->type = smb_wire_u8(acl);
	ace->flags = smb_wire_u8(acl);
	size = smb_wire_u16(acl);
	if (acl->err || size < SMB_SD_ACE_HDR)
		return AQ_EINVAL;
	body = smb_wire_bytes(acl, size - SMB_SD_ACE_HDR);
	if (acl->err)
		return AQ_EINVAL;
	smb_wire_cur_init(&c, body, size - SMB_SD_ACE_HDR);
	if (smb_sd_ace_known(ace->type)) {
		ace->mask = smb_wire_u32(&c);
		/* The SID must fit in the ACE; padding after it is allowed. */
		return smb_sd_sid_decode(&c, &ace->sid);
	}
	if (c.len > SMB_SD_OPAQUE_MAX)
		return AQ_ETOOBIG;
	ace->opaque_len = c.len;
	if (c.len)
		memcpy(ace->opaque, body, c.len);
	return AQ_OK;
}

static int smb_sd_acl_decode(const uint8_t *p, size_t len, uint32_t off, struct smb_sd_acl *acl)
{
	struct smb_wire_cur c, in;
	uint16_t size, i;
	const uint8_t *body;
	int rc;

	memset(acl, 0, sizeof(*acl));
	if (off < SMB_SD_HDR || off > len)
		return AQ_EINVAL;
	smb_wire_cur_init(&c, p + off, len - off);
	acl->revision = smb_wire_u8(&c);
	smb_wire_skip(&c, 1);
	size = smb_wire_u16(&c);
	acl->count = smb_wire_u16(&c);
	smb_wire_skip(&c, 2);
	/* MS-DTYP names 2 and 4; Windows takes 2..4 (MIN_ACL_REVISION to
	 * MAX_ACL_REVISION), and smbcacls --set sends 3 */
	if (c.err || acl->revision < 2 || acl->revision > 4 || size < SMB_SD_ACL_HDR)
		return AQ_EINVAL;
	if (acl->count > SMB_SD_ACE_MAX)
		return AQ_ETOOBIG;
	body = smb_wire_bytes(&c, size - SMB_SD_ACL_HDR);
	if (c.err)
		return AQ_EINVAL;
	smb_wire_cur_init(&in, body, size - SMB_SD_ACL_HDR);
	for (i = 0; i < acl->count; i++)
		if ((rc = smb_sd_ace_decode(&in, &acl->ace[i])) != AQ_OK)
			return rc;
	return AQ_OK;
}

static size_t smb_sd_ace_size(const struct smb_sd_ace *a)
{
	return smb_sd_ace_known(a->type) ? SMB_SD_ACE_HDR + 4 + smb_sd_sid_size(&a->sid)
					 : SMB_SD_ACE_HDR + a->opaque_len;
}

static int smb_sd_acl_encode(struct ut_buf *b, const struct smb_sd_acl *acl)
{
	size_t size = SMB_SD_ACL_HDR;
	uint16_t i;

	if (acl->count > SMB_SD_ACE_MAX)
		return AQ_ETOOBIG;
	for (i = 0; i < acl->count; i++)
		size += smb_sd_ace_size(&acl->ace[i]);
	if (size > UINT16_MAX)
		return AQ_ETOOBIG;
	smb_wire_put_u8(b, acl->revision ? acl->revision : 2);
	smb_wire_put_u8(b, 0);
	smb_wire_put_u16(b, (uint16_t)size);
	smb_wire_put_u16(b, acl->count);
	smb_wire_put_u16(b, 0);
	for (i = 0; i < acl->count; i++) {
		const struct smb_sd_ace *a = &acl->ace[i];

		smb_wire_put_u8(b, a->type);
		smb_wire_put_u8(b, a->flags);
		smb_wire_put_u16(b, (uint16_t)smb_sd_ace_size(a));
		if (!smb_sd_ace_known(a->type)) {
			smb_wire_put_bytes(b, a->opaque, a->opaque_len);
			continue;
		}
		smb_wire_put_u32(b, a->mask);
		smb_sd_sid_encode(b, &a->sid);
	}
	return b->err;
}

/* ---- descriptors (2.4.6) ------------------------------------------------------------- */

static int smb_sd_sid_at(const uint8_t *p, size_t len, uint32_t off, struct smb_sd_sid *s)
{
	struct smb_wire_cur c;

	if (off < SMB_SD_HDR || off > len)
		return AQ_EINVAL;
	smb_wire_cur_init(&c, p + off, len - off);
	return smb_sd_sid_decode(&c, s);
}

int smb_sd_decode(const uint8_t *p, size_t len, struct smb_sd *sd)
{
	struct smb_wire_cur c;
	uint32_t owner, group, sacl, dacl;
	int rc = AQ_OK;

	memset(sd, 0, sizeof(*sd));
	if (len > SMB_SD_MAX)
		return AQ_ETOOBIG;
	smb_wire_cur_init(&c, p, len);
	if (smb_wire_u8(&c) != 1)
		return AQ_EINVAL;
	smb_wire_skip(&c, 1);
	sd->control = smb_wire_u16(&c);
	owner = smb_wire_u32(&c);
	group = smb_wire_u32(&c);
	sacl = smb_wire_u32(&c);
	dacl = smb_wire_u32(&c);
	if (c.err || !(sd->control & SMB_SD_SELF_RELATIVE))
		return AQ_EINVAL;
	if (owner && (rc = smb_sd_sid_at(p, len, owner, &sd->owner)) != AQ_OK)
		return rc;
	sd->has_owner = owner != 0;
	if (group && (rc = smb_sd_sid_at(p, len, group, &sd->group)) != AQ_OK)
		return rc;
	sd->has_group = group != 0;
	if (sd->control & SMB_SD_SACL_PRESENT && sacl) {
		if ((rc = smb_sd_acl_decode(p, len, sacl, &sd->sacl)) != AQ_OK)
			return rc;
		sd->has_sacl = true;
	}
	if (sd->control & SMB_SD_DACL_PRESENT && dacl) {
		if ((rc = smb_sd_acl_decode(p, len, dacl, &sd->dacl)) != AQ_OK)
			return rc;
		sd->has_dacl = true;
	}
	return AQ_OK;
}

int smb_sd_encode(struct ut_buf *b, const struct smb_sd *sd, uint32_t secinfo)
{
	size_t base = b->len;
	uint16_t control = SMB_SD_SELF_RELATIVE | (sd->control & SMB_SD_KEPT_CONTROL);
	int rc;

	smb_wire_put_u8(b, 1);
	smb_wire_put_u8(b, 0);
	smb_wire_put_u16(b, 0);    /* Control, below */
	ut_buf_put_zero(b, 16);  /* the four offsets, below */
	if (secinfo & SMB_SD_OWNER && sd->has_owner) {
		ut_buf_set_le32(b, base + 4, (uint32_t)(b->len - base));
		smb_sd_sid_encode(b, &sd->owner);
	}
	if (secinfo & SMB_SD_GROUP && sd->has_group) {
		ut_buf_set_le32(b, base + 8, (uint32_t)(b->len - base));
		smb_sd_sid_encode(b, &sd->group);
	}
	if (secinfo & SMB_SD_SACL && sd->has_sacl) {
		control |= SMB_SD_SACL_PRESENT;
		ut_buf_set_le32(b, base + 12, (uint32_t)(b->len - base));
		if ((rc = smb_sd_acl_encode(b, &sd->sacl)) != AQ_OK)
			return rc;
	}
	if (secinfo & SMB_SD_DACL && (sd->has_dacl || sd->control & SMB_SD_DACL_PRESENT)) {
		control |= SMB_SD_DACL_PRESENT;
		if (sd->has_dacl) {
			ut_buf_set_le32(b, base + 16, (uint32_t)(b->len - base));
			if ((rc = smb_sd_acl_encode(b, &sd->dacl)) != AQ_OK)
				return rc;
		}
	}
	ut_buf_set_le16(b, base + 2, control);
	return b->err;
}

/* ---- POSIX ----------------------------------------------------------------------------- */

static uint32_t smb_sd_rwx_mask(uint32_t rwx, bool dir)
{
	uint32_t m = 0;

	if (rwx & 4)
		m |= SMB_FILE_GENERIC_READ;
	if (rwx & 2)
		m |= SMB_FILE_GENERIC_WRITE | (dir ? SMB_FILE_DELETE_CHILD : 0);
	if (rwx & 1)
		m |= SMB_FILE_GENERIC_EXECUTE;
	return m;
}

static void smb_sd_allow(struct smb_sd_acl *acl, uint32_t mask, const struct smb_sd_sid *sid)
{
	struct smb_sd_ace *a = &acl->ace[acl->count++];

	memset(a, 0, sizeof(*a));
	a->type = SMB_SD_ACCESS_ALLOWED;
	a->mask = mask;
	a->sid = *sid;
}

void smb_sd_from_unix(uint32_t uid, uint32_t gid, uint32_t mode, bool dir, struct smb_sd *sd)
{
	static const uint32_t owner_extra = SMB_READ_CONTROL | SMB_WRITE_DAC | SMB_WRITE_OWNER |
					    SMB_FILE_READ_ATTRIBUTES | SMB_FILE_WRITE_ATTRIBUTES | SMB_SYNCHRONIZE;

	memset(sd, 0, sizeof(*sd));
	sd->control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT | SMB_SD_DACL_PROTECTED;
	sd->has_owner = sd->has_group = sd->has_dacl = true;
	smb_sd_sid_unix_user(uid, &sd->owner);
	smb_sd_sid_unix_group(gid, &sd->group);
	sd->dacl.revision = 2;
	smb_sd_allow(&sd->dacl, smb_sd_rwx_mask(mode >> 6 & 7, dir) | owner_extra, &sd->owner);
	smb_sd_allow(&sd->dacl, smb_sd_rwx_mask(mode >> 3 & 7, dir) | SMB_READ_CONTROL | SMB_FILE_READ_ATTRIBUTES |
					SMB_SYNCHRONIZE,
		     &sd->group);
	smb_sd_allow(&sd->dacl, smb_sd_rwx_mask(mode & 7, dir) | SMB_READ_CONTROL | SMB_FILE_READ_ATTRIBUTES |
					SMB_SYNCHRONIZE,
		     &smb_sd_everyone);
}

static uint32_t smb_sd_mask_rwx(uint32_t m)
{
	uint32_t rwx = 0;

	if (m & SMB_GENERIC_ALL)
		return 7;
	if (m & (SMB_FILE_READ_DATA | SMB_GENERIC_READ))
		rwx |= 4;
	if (m & (SMB_FILE_WRITE_DATA | SMB_GENERIC_WRITE))
		rwx |= 2;
	if (m & (SMB_FILE_EXECUTE | SMB_GENERIC_EXECUTE))
		rwx |= 1;
	return rwx;
}

/* The Unix id in a S-1-22-<kind>-<id> SID, or -1. */
static int64_t smb_sd_unix_id(const struct smb_sd_sid *s, uint32_t kind)
{
	if (s->authority != 22 || s->count != 2 || s->sub[0] != kind)
		return -1;
	return s->sub[1];
}

int smb_sd_to_unix(const struct smb_sd *sd, uint32_t *uid, uint32_t *gid, uint32_t *mode, unsigned *have)
{
	int64_t u = -1, g = -1;
	uint32_t m = 0;
	uint16_t i;

	*have = 0;
	if (sd->has_owner && (u = smb_sd_unix_id(&sd->owner, 1)) < 0)
		return AQ_EUNIMPL;
	if (sd->has_group && (g = smb_sd_unix_id(&sd->group, 2)) < 0)
		return AQ_EUNIMPL;
	if (sd->has_dacl) {
		for (i = 0; i < sd->dacl.count; i++) {
			const struct smb_sd_ace *a = &sd->dacl.ace[i];
			int64_t id;

			if (a->type != SMB_SD_ACCESS_ALLOWED || a->flags)
				return AQ_EUNIMPL;
			if (smb_sd_sid_eq(&a->sid, &smb_sd_everyone)) {
				m |= smb_sd_mask_rwx(a->mask);
			} else if ((id = smb_sd_unix_id(&a->sid, 1)) >= 0 && (u < 0 || id == u)) {
				u = id;
				m |= smb_sd_mask_rwx(a->mask) << 6;
			} else if ((id = smb_sd_unix_id(&a->sid, 2)) >= 0 && (g < 0 || id == g)) {
				g = id;
				m |= smb_sd_mask_rwx(a->mask) << 3;
			} else {
				return AQ_EUNIMPL;
			}
		}
		*mode = m;
		*have |= SMB_SD_HAVE_MODE;
	}
	if (sd->has_owner) {
		*uid = (uint32_t)u;
		*have |= SMB_SD_HAVE_UID;
	}
	if (sd->has_group) {
		*gid = (uint32_t)g;
		*have |= SMB_SD_HAVE_GID;
	}
	return AQ_OK;
}
