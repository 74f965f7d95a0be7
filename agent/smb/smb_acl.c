/* smb_acl: the access check and inheritance of NTFS-style shares
 * (MS-DTYP 2.5.3.2, 2.5.3.4); see smb_acl.h for the contract. */
#include "agent/smb/smb_acl.h"

#include <string.h>

static const struct smb_sd_sid smb_acl_auth_users = { .revision = 1, .count = 1, .authority = 5, .sub = { 11 } };
static const struct smb_sd_sid smb_acl_creator_owner = { .revision = 1, .count = 1, .authority = 3, .sub = { 0 } };
static const struct smb_sd_sid smb_acl_creator_group = { .revision = 1, .count = 1, .authority = 3, .sub = { 1 } };
static const struct smb_sd_sid smb_acl_owner_rights = { .revision = 1, .count = 1, .authority = 3, .sub = { 4 } };
static const struct smb_sd_sid smb_acl_system = { .revision = 1, .count = 1, .authority = 5, .sub = { 18 } };

void smb_acl_token_init(struct smb_acl_token *t, uint32_t uid, uint32_t gid, const uint32_t *gids, unsigned ngids)
{
	memset(t, 0, sizeof(*t));
	t->root = uid == 0;
	smb_sd_sid_unix_user(uid, &t->sid[t->n++]);
	smb_sd_sid_unix_group(gid, &t->sid[t->n++]);
	for (unsigned k = 0; k < ngids && k < 16u; k++)
		smb_sd_sid_unix_group(gids[k], &t->sid[t->n++]);
	t->sid[t->n++] = smb_sd_everyone;
	t->sid[t->n++] = smb_acl_auth_users;
}

bool smb_acl_token_has(const struct smb_acl_token *t, const struct smb_sd_sid *s)
{
	for (unsigned k = 0; k < t->n; k++)
		if (smb_sd_sid_eq(&t->sid[k], s))
			return true;
	return false;
}

uint32_t smb_acl_map(uint32_t mask)
{
	uint32_t m = mask & ~(SMB_GENERIC_ALL | SMB_GENERIC_READ | SMB_GENERIC_WRITE | SMB_GENERIC_EXECUTE);

	if (mask & SMB_GENERIC_ALL)
		m |= SMB_FILE_ALL_ACCESS;
	if (mask & SMB_GENERIC_READ)
		m |= SMB_FILE_GENERIC_READ;
	if (mask & SMB_GENERIC_WRITE)
		m |= SMB_FILE_GENERIC_WRITE;
	if (mask & SMB_GENERIC_EXECUTE)
		m |= SMB_FILE_GENERIC_EXECUTE;
	return m;
}

/* Whether a DACL speaks for the owner itself (an effective OWNER RIGHTS ACE). */
static bool smb_acl_has_owner_rights(const struct smb_sd_acl *acl)
{
	for (uint16_t i = 0; i < acl->count; i++)
		if (!(acl->ace[i].flags & SMB_SD_INHERIT_ONLY) && smb_sd_sid_eq(&acl->ace[i].sid, &smb_acl_owner_rights))
			return true;
	return false;
}

uint32_t smb_acl_granted(const struct smb_sd *sd, const struct smb_acl_token *t)
{
	uint32_t granted = 0, denied = 0;
	bool owner;

	if (t->root)
		return SMB_FILE_ALL_ACCESS | SMB_ACCESS_SYSTEM_SECURITY;
	owner = sd->has_owner && smb_acl_token_has(t, &sd->owner);
	if (!sd->has_dacl) /* the NULL DACL, or none at all */
		return SMB_FILE_ALL_ACCESS;
	/* the owner's implicit rights first (no DENY takes them away), unless
	 * an OWNER RIGHTS ACE says what the owner has */
	if (owner && !smb_acl_has_owner_rights(&sd->dacl))
		granted |= SMB_READ_CONTROL | SMB_WRITE_DAC;
	for (uint16_t i = 0; i < sd->dacl.count; i++) {
		const struct smb_sd_ace *a = &sd->dacl.ace[i];
		uint32_t m;

		if (a->flags & SMB_SD_INHERIT_ONLY)
			continue;
		if (a->type != SMB_SD_ACCESS_ALLOWED && a->type != SMB_SD_ACCESS_DENIED)
			continue;
		if (!smb_acl_token_has(t, &a->sid) && !(owner && smb_sd_sid_eq(&a->sid, &smb_acl_owner_rights)))
			continue;
		m = smb_acl_map(a->mask) & ~SMB_MAXIMUM_ALLOWED;
		if (a->type == SMB_SD_ACCESS_ALLOWED)
			granted |= m & ~denied;
		else
			denied |= m & ~granted;
	}
	return granted & ~SMB_ACCESS_SYSTEM_SECURITY;
}

bool smb_acl_check(const struct smb_sd *sd, const struct smb_acl_token *t, uint32_t desired, uint32_t parent_granted,
		   uint32_t *granted)
{
	uint32_t g = smb_acl_granted(sd, t), want = smb_acl_map(desired) & ~SMB_MAXIMUM_ALLOWED;

	if (parent_granted & SMB_FILE_DELETE_CHILD)
		g |= SMB_DELETE;
	/* who may list the folder may read the attributes of what is in it
	 * (MS-FSA 2.1.5.1.2; smbd does the same) */
	if (parent_granted & SMB_FILE_LIST_DIRECTORY)
		g |= SMB_FILE_READ_ATTRIBUTES;
	if (want & ~g)
		return false;
	*granted = desired & SMB_MAXIMUM_ALLOWED ? g : want;
	return true;
}

/* Append a copy of a with flags and sid to acl (bounded by SMB_SD_ACE_MAX). */
static void smb_acl_add(struct smb_sd_acl *acl, const struct smb_sd_ace *a, uint8_t flags, const struct smb_sd_sid *sid)
{
	struct smb_sd_ace *n;

	if (acl->count >= SMB_SD_ACE_MAX)
		return;
	n = &acl->ace[acl->count++];
	*n = *a;
	n->flags = flags;
	n->sid = *sid;
	if (!(flags & (SMB_SD_OBJECT_INHERIT | SMB_SD_CONTAINER_INHERIT | SMB_SD_INHERIT_ONLY)))
		n->mask = smb_acl_map(n->mask); /* effective here only: the rights it stands for */
}

void smb_acl_map_acl(struct smb_sd_acl *acl)
{
	for (uint16_t i = 0; i < acl->count; i++)
		if ((acl->ace[i].type == SMB_SD_ACCESS_ALLOWED || acl->ace[i].type == SMB_SD_ACCESS_DENIED) &&
		    !(acl->ace[i].flags & (SMB_SD_OBJECT_INHERIT | SMB_SD_CONTAINER_INHERIT | SMB_SD_INHERIT_ONLY)))
			acl->ace[i].mask = smb_acl_map(acl->ace[i].mask);
}

unsigned smb_acl_inherit(const struct smb_sd *parent, bool dir, const struct smb_acl_token *t, struct smb_sd *child)
{
	static const uint8_t inh = SMB_SD_OBJECT_INHERIT | SMB_SD_CONTAINER_INHERIT;
	/* auto-inheritance: only from a DACL that takes part in it */
	bool aut = parent->has_dacl && (parent->control & SMB_SD_DACL_AUTO_INHERITED);
	const uint8_t mark = aut ? SMB_SD_INHERITED : 0;

	memset(child, 0, sizeof(*child));
	child->control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT | (aut ? SMB_SD_DACL_AUTO_INHERITED : 0);
	child->has_owner = child->has_group = child->has_dacl = true;
	child->owner = t->sid[0];
	child->group = t->sid[1];
	child->dacl.revision = 2;
	for (uint16_t i = 0; parent->has_dacl && i < parent->dacl.count; i++) {
		const struct smb_sd_ace *a = &parent->dacl.ace[i];
		bool oi = a->flags & SMB_SD_OBJECT_INHERIT, ci = a->flags & SMB_SD_CONTAINER_INHERIT;
		bool np = a->flags & SMB_SD_NO_PROPAGATE;
		const struct smb_sd_sid *sid = &a->sid;
		bool creator = false;

		if (a->type != SMB_SD_ACCESS_ALLOWED && a->type != SMB_SD_ACCESS_DENIED)
			continue; /* audit and opaque ACEs live in the SACL or are not ours to copy */
		if (smb_sd_sid_eq(sid, &smb_acl_creator_owner))
			sid = &child->owner, creator = true;
		else if (smb_sd_sid_eq(sid, &smb_acl_creator_group))
			sid = &child->group, creator = true;
		if (!dir) {
			if (oi)
				smb_acl_add(&child->dacl, a, mark, sid);
			continue;
		}
		if (ci) {
			/* effective here; still inherited below unless NO_PROPAGATE
			 * (a creator SID or generic rights: an effective copy names
			 * the creator with the rights mapped, an INHERIT_ONLY copy
			 * keeps the ACE as it was for below, as Windows splits it) */
			if (np || creator || smb_acl_map(a->mask) != a->mask) {
				smb_acl_add(&child->dacl, a, mark, sid);
				if (!np)
					smb_acl_add(&child->dacl, a, (uint8_t)((a->flags & inh) | SMB_SD_INHERIT_ONLY | mark), &a->sid);
			} else {
				smb_acl_add(&child->dacl, a, (uint8_t)((a->flags & inh) | mark), sid);
			}
		} else if (oi && !np) {
			smb_acl_add(&child->dacl, a, SMB_SD_OBJECT_INHERIT | SMB_SD_INHERIT_ONLY | mark, &a->sid);
		}
	}
	return child->dacl.count;
}

/* The control bits of one ACL part (the DACL's or the SACL's) set from
 * in: PROTECTED as given, AUTO_INHERITED only beside AUTO_INHERIT_REQ,
 * which is not kept (MS-DTYP 2.4.6, DR and DI; SR and SI). */
static uint16_t smb_acl_part_control(uint16_t cur, uint16_t in, uint16_t prot, uint16_t di, uint16_t dr)
{
	cur &= (uint16_t)~(prot | di | dr);
	cur |= in & prot;
	if ((in & (di | dr)) == (di | dr))
		cur |= di;
	return cur;
}

void smb_acl_merge(struct smb_sd *cur, const struct smb_sd *in, uint32_t what)
{
	if ((what & SMB_SD_OWNER) && in->has_owner)
		cur->owner = in->owner, cur->has_owner = true;
	if ((what & SMB_SD_GROUP) && in->has_group)
		cur->group = in->group, cur->has_group = true;
	if (what & SMB_SD_DACL) {
		/* the DACL as given: a NULL DACL (present, no offset) or none */
		cur->has_dacl = in->has_dacl;
		cur->dacl = in->dacl;
		smb_acl_map_acl(&cur->dacl);
		cur->control = smb_acl_part_control(cur->control, in->control, SMB_SD_DACL_PROTECTED,
						    SMB_SD_DACL_AUTO_INHERITED, SMB_SD_DACL_AUTO_INHERIT_REQ);
		cur->control = (uint16_t)((cur->control & ~SMB_SD_DACL_PRESENT) | (in->control & SMB_SD_DACL_PRESENT));
		if (!in->has_dacl && !(in->control & SMB_SD_DACL_PRESENT))
			cur->control |= SMB_SD_DACL_PRESENT; /* no DACL part at all: an empty ask, kept as NULL */
	}
	if (what & SMB_SD_SACL) {
		cur->has_sacl = in->has_sacl;
		cur->sacl = in->sacl;
		cur->control = smb_acl_part_control(cur->control, in->control, SMB_SD_SACL_PROTECTED,
						    SMB_SD_SACL_AUTO_INHERITED, SMB_SD_SACL_AUTO_INHERIT_REQ);
	}
}

void smb_acl_given(const struct smb_sd *in, const struct smb_acl_token *t, struct smb_sd *out)
{
	uint32_t what = SMB_SD_OWNER | SMB_SD_GROUP;

	memset(out, 0, sizeof(*out));
	out->control = SMB_SD_SELF_RELATIVE;
	/* a part the descriptor leaves out stays out (no DACL is not a NULL one) */
	if (in->has_dacl || (in->control & SMB_SD_DACL_PRESENT))
		what |= SMB_SD_DACL;
	if (in->has_sacl || (in->control & SMB_SD_SACL_PRESENT))
		what |= SMB_SD_SACL;
	smb_acl_merge(out, in, what);
	if (!out->has_owner) /* what the descriptor leaves out is the creator's */
		out->has_owner = true, out->owner = t->sid[0];
	if (!out->has_group)
		out->has_group = true, out->group = t->sid[1];
}

void smb_acl_default(const struct smb_acl_token *t, struct smb_sd *sd)
{
	const struct smb_sd_sid *who[] = { &t->sid[0], &smb_acl_system };

	memset(sd, 0, sizeof(*sd));
	sd->control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	sd->has_owner = sd->has_group = sd->has_dacl = true;
	sd->owner = t->sid[0];
	sd->group = t->sid[1];
	sd->dacl.revision = 2;
	for (unsigned k = 0; k < 2; k++) {
		struct smb_sd_ace *a = &sd->dacl.ace[sd->dacl.count++];

		a->type = SMB_SD_ACCESS_ALLOWED;
		a->mask = SMB_FILE_ALL_ACCESS; /* GENERIC_ALL, mapped */
		a->sid = *who[k];
	}
}

void smb_acl_root_default(const struct smb_sd_sid *owner, const struct smb_sd_sid *group, struct smb_sd *sd)
{
	struct smb_sd_ace *a;

	memset(sd, 0, sizeof(*sd));
	sd->control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT | SMB_SD_DACL_AUTO_INHERITED;
	sd->has_owner = sd->has_group = sd->has_dacl = true;
	sd->owner = *owner;
	sd->group = *group;
	sd->dacl.revision = 2;
	a = &sd->dacl.ace[sd->dacl.count++];
	a->type = SMB_SD_ACCESS_ALLOWED;
	a->flags = SMB_SD_OBJECT_INHERIT | SMB_SD_CONTAINER_INHERIT;
	a->mask = SMB_FILE_ALL_ACCESS;
	a->sid = smb_sd_everyone;
}
