/* test_smb_acl: the access check and inheritance of NTFS-style shares
 * (agent/smb/smb_acl.c, MS-DTYP 2.5.3.2 and 2.5.3.4).
 * Users: alice uid 1000 (groups 1000 and 50), bob uid 2000 (group 2000),
 * root. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_acl.h"
#include "tests/lib/aqt.h"

#define RW (SMB_FILE_GENERIC_READ | SMB_FILE_GENERIC_WRITE)

static struct smb_acl_token alice, bob, root;
static struct smb_sd sd, child;

static void setup(void)
{
	static const uint32_t staff = 50;

	smb_acl_token_init(&alice, 1000, 1000, &staff, 1);
	smb_acl_token_init(&bob, 2000, 2000, NULL, 0);
	smb_acl_token_init(&root, 0, 0, NULL, 0);
	memset(&sd, 0, sizeof(sd));
	sd.control = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	sd.has_owner = sd.has_group = sd.has_dacl = true;
	smb_sd_sid_unix_user(1000, &sd.owner);
	smb_sd_sid_unix_group(1000, &sd.group);
	sd.dacl.revision = 2;
}

static void ace(uint8_t type, uint8_t flags, uint32_t mask, const char *sid)
{
	struct smb_sd_ace *a = &sd.dacl.ace[sd.dacl.count++];

	memset(a, 0, sizeof(*a));
	a->type = type;
	a->flags = flags;
	a->mask = mask;
	ck_assert_int_eq(smb_sd_sid_from_str(sid, &a->sid), 0);
}

static bool may(const struct smb_acl_token *t, uint32_t desired)
{
	uint32_t g = 0;

	return smb_acl_check(&sd, t, desired, 0, &g);
}

/* A DENY for bob before an ALLOW for Everyone keeps bob out and lets
 * alice (and root) in; the order matters: after the ALLOW the DENY is too
 * late for what the ALLOW granted. */
START_TEST(test_deny_first)
{
	ace(SMB_SD_ACCESS_DENIED, 0, SMB_FILE_READ_DATA, "S-1-22-1-2000");
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_GENERIC_READ, "S-1-1-0");
	ck_assert(may(&alice, SMB_FILE_READ_DATA));
	ck_assert(!may(&bob, SMB_FILE_READ_DATA));
	ck_assert(!may(&bob, SMB_GENERIC_READ));
	ck_assert(may(&bob, SMB_FILE_READ_ATTRIBUTES)); /* only READ_DATA is denied */
	ck_assert(may(&root, SMB_FILE_READ_DATA | SMB_DELETE));
	/* the other order: granted first, the DENY changes nothing */
	sd.dacl.ace[0].type = SMB_SD_ACCESS_ALLOWED, sd.dacl.ace[0].mask = SMB_FILE_GENERIC_READ;
	sd.dacl.ace[1].type = SMB_SD_ACCESS_DENIED, sd.dacl.ace[1].mask = SMB_FILE_READ_DATA;
	ck_assert(may(&bob, SMB_FILE_READ_DATA));
	ck_assert(!may(&alice, SMB_FILE_READ_DATA));
}
END_TEST

/* Groups (primary and supplementary), Authenticated Users; INHERIT_ONLY
 * ACEs count for nothing here; generic rights in an ACE are mapped. */
START_TEST(test_token_sids)
{
	ace(SMB_SD_ACCESS_ALLOWED, SMB_SD_INHERIT_ONLY | SMB_SD_OBJECT_INHERIT, SMB_FILE_ALL_ACCESS, "S-1-1-0");
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_GENERIC_WRITE, "S-1-22-2-50");
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_FILE_READ_DATA, "S-1-5-11");
	ck_assert(may(&alice, SMB_FILE_WRITE_DATA | SMB_FILE_APPEND_DATA | SMB_FILE_READ_DATA));
	ck_assert(may(&bob, SMB_FILE_READ_DATA));
	ck_assert(!may(&bob, SMB_FILE_WRITE_DATA));
	ck_assert(!may(&bob, SMB_FILE_EXECUTE));
}
END_TEST

/* MAXIMUM_ALLOWED: the granted mask; the owner's implicit READ_CONTROL
 * and WRITE_DAC even with an empty DACL and against a DENY; a NULL DACL
 * grants all; ACCESS_SYSTEM_SECURITY is root's. */
START_TEST(test_maximum_owner_null)
{
	uint32_t g = 0;

	ck_assert(smb_acl_check(&sd, &alice, SMB_MAXIMUM_ALLOWED, 0, &g));
	ck_assert_uint_eq(g, SMB_READ_CONTROL | SMB_WRITE_DAC);
	ck_assert(smb_acl_check(&sd, &bob, SMB_MAXIMUM_ALLOWED, 0, &g));
	ck_assert_uint_eq(g, 0);
	ck_assert(!may(&bob, SMB_READ_CONTROL));
	ace(SMB_SD_ACCESS_DENIED, 0, SMB_FILE_ALL_ACCESS, "S-1-1-0");
	ck_assert(may(&alice, SMB_WRITE_DAC | SMB_READ_CONTROL));
	ck_assert(!may(&alice, SMB_FILE_READ_DATA));
	sd.dacl.count = 0;
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_FILE_GENERIC_READ, "S-1-22-1-2000");
	ck_assert(smb_acl_check(&sd, &bob, SMB_MAXIMUM_ALLOWED | SMB_FILE_READ_DATA, 0, &g));
	ck_assert_uint_eq(g, SMB_FILE_GENERIC_READ);
	ck_assert(smb_acl_check(&sd, &bob, SMB_FILE_READ_DATA, 0, &g));
	ck_assert_uint_eq(g, SMB_FILE_READ_DATA);
	sd.has_dacl = false; /* NULL DACL */
	ck_assert(may(&bob, SMB_GENERIC_ALL));
	ck_assert(!may(&bob, SMB_ACCESS_SYSTEM_SECURITY));
	ck_assert(may(&root, SMB_ACCESS_SYSTEM_SECURITY));
}
END_TEST

/* DELETE from the object's DACL or from DELETE_CHILD on the parent. */
START_TEST(test_delete_child)
{
	uint32_t g = 0;

	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_FILE_GENERIC_READ, "S-1-1-0");
	ck_assert(!may(&bob, SMB_DELETE));
	ck_assert(!smb_acl_check(&sd, &bob, SMB_DELETE, SMB_FILE_WRITE_DATA, &g));
	ck_assert(smb_acl_check(&sd, &bob, SMB_DELETE, SMB_FILE_DELETE_CHILD, &g));
	ck_assert_uint_eq(g, SMB_DELETE);
	/* FILE_LIST_DIRECTORY on the parent: FILE_READ_ATTRIBUTES */
	sd.dacl.count = 0;
	ck_assert(!may(&bob, SMB_FILE_READ_ATTRIBUTES));
	ck_assert(smb_acl_check(&sd, &bob, SMB_FILE_READ_ATTRIBUTES, SMB_FILE_READ_DATA, &g));
}
END_TEST

/* OWNER RIGHTS (S-1-3-4): its ACEs say what the owner holds, in place of
 * the implicit READ_CONTROL|WRITE_DAC; they mean nothing to others. */
START_TEST(test_owner_rights)
{
	uint32_t g = 0;

	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_FILE_READ_DATA | SMB_FILE_WRITE_DATA, "S-1-3-4");
	ck_assert(smb_acl_check(&sd, &alice, SMB_MAXIMUM_ALLOWED, 0, &g));
	ck_assert_uint_eq(g, SMB_FILE_READ_DATA | SMB_FILE_WRITE_DATA);
	ck_assert(!may(&alice, SMB_WRITE_DAC));
	ck_assert(!may(&bob, SMB_FILE_READ_DATA));
	/* an INHERIT_ONLY one leaves the implicit rights */
	sd.dacl.ace[0].flags = SMB_SD_INHERIT_ONLY | SMB_SD_OBJECT_INHERIT;
	ck_assert(smb_acl_check(&sd, &alice, SMB_MAXIMUM_ALLOWED, 0, &g));
	ck_assert_uint_eq(g, SMB_READ_CONTROL | SMB_WRITE_DAC);
}
END_TEST

static bool has(const struct smb_sd *s, uint8_t flags, uint32_t mask, const char *sid)
{
	struct smb_sd_sid x;

	ck_assert_int_eq(smb_sd_sid_from_str(sid, &x), 0);
	for (uint16_t i = 0; i < s->dacl.count; i++)
		if (s->dacl.ace[i].flags == flags && s->dacl.ace[i].mask == mask && smb_sd_sid_eq(&s->dacl.ace[i].sid, &x))
			return true;
	return false;
}

/* A file takes the OBJECT_INHERIT ACEs without inheritance flags; a
 * folder the CONTAINER_INHERIT ones (inheritable still, unless
 * NO_PROPAGATE) and the OBJECT_INHERIT-only ones as INHERIT_ONLY; CREATOR
 * OWNER becomes the creator; the owner and group are the creator's. The
 * parent's DACL is AUTO_INHERITED: each ACE marked INHERITED. */
START_TEST(test_inherit)
{
	const uint8_t I = SMB_SD_INHERITED, OI = SMB_SD_OBJECT_INHERIT, CI = SMB_SD_CONTAINER_INHERIT;
	struct smb_sd_sid bob_sid;

	sd.control |= SMB_SD_DACL_AUTO_INHERITED;

	ace(SMB_SD_ACCESS_DENIED, OI | CI, SMB_FILE_READ_DATA, "S-1-22-1-3000");
	ace(SMB_SD_ACCESS_ALLOWED, OI, 0x1, "S-1-22-1-3001");
	ace(SMB_SD_ACCESS_ALLOWED, CI, 0x2, "S-1-22-1-3002");
	ace(SMB_SD_ACCESS_ALLOWED, CI | SMB_SD_NO_PROPAGATE, 0x4, "S-1-22-1-3003");
	ace(SMB_SD_ACCESS_ALLOWED, OI | CI, SMB_GENERIC_ALL, "S-1-3-0");
	ace(SMB_SD_ACCESS_ALLOWED, 0, 0x8, "S-1-22-1-3004"); /* not inheritable */
	ck_assert_uint_eq(smb_acl_inherit(&sd, false, &bob, &child), 2 + 1);
	ck_assert(has(&child, I, SMB_FILE_READ_DATA, "S-1-22-1-3000"));
	ck_assert_uint_eq(child.dacl.ace[0].type, SMB_SD_ACCESS_DENIED); /* the order kept: DENY first */
	ck_assert(has(&child, I, 0x1, "S-1-22-1-3001"));
	ck_assert(has(&child, I, SMB_FILE_ALL_ACCESS, "S-1-22-1-2000")); /* generic rights mapped */
	smb_sd_sid_unix_user(2000, &bob_sid);
	ck_assert(smb_sd_sid_eq(&child.owner, &bob_sid));
	ck_assert(has(&child, I, 0x1, "S-1-22-1-3001"));

	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &bob, &child), 6);
	ck_assert(has(&child, I | OI | CI, SMB_FILE_READ_DATA, "S-1-22-1-3000"));
	ck_assert(has(&child, I | OI | SMB_SD_INHERIT_ONLY, 0x1, "S-1-22-1-3001"));
	ck_assert(has(&child, I | CI, 0x2, "S-1-22-1-3002"));
	ck_assert(has(&child, I, 0x4, "S-1-22-1-3003"));
	ck_assert(has(&child, I, SMB_FILE_ALL_ACCESS, "S-1-22-1-2000"));
	ck_assert(has(&child, I | OI | CI | SMB_SD_INHERIT_ONLY, SMB_GENERIC_ALL, "S-1-3-0"));
	/* the new folder's own check: bob (its creator) has all, 3000 is denied READ_DATA */
	ck_assert(smb_acl_check(&child, &bob, SMB_FILE_ALL_ACCESS, 0, &(uint32_t){ 0 }));
	/* nothing inheritable: 0 (the caller picks a default) */
	sd.dacl.count = 0;
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_FILE_ALL_ACCESS, "S-1-1-0");
	ck_assert_uint_eq(smb_acl_inherit(&sd, false, &bob, &child), 0);
	sd.has_dacl = false;
	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &bob, &child), 0);
}
END_TEST

/* Generic rights: a folder splits an inheritable ACE into an effective
 * copy with the rights mapped and an INHERIT_ONLY copy as it was; an ACE
 * for the object alone is mapped when set (smb_acl_map_acl). */
START_TEST(test_inherit_generic)
{
	const uint8_t I = SMB_SD_INHERITED, OI = SMB_SD_OBJECT_INHERIT, CI = SMB_SD_CONTAINER_INHERIT;

	sd.control |= SMB_SD_DACL_AUTO_INHERITED;

	ace(SMB_SD_ACCESS_ALLOWED, OI | CI, SMB_GENERIC_READ, "S-1-22-1-3005");
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_GENERIC_WRITE, "S-1-22-1-3006");
	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &bob, &child), 2);
	ck_assert(has(&child, I, SMB_FILE_GENERIC_READ, "S-1-22-1-3005"));
	ck_assert(has(&child, I | OI | CI | SMB_SD_INHERIT_ONLY, SMB_GENERIC_READ, "S-1-22-1-3005"));
	smb_acl_map_acl(&sd.dacl);
	ck_assert_uint_eq(sd.dacl.ace[0].mask, SMB_GENERIC_READ);
	ck_assert_uint_eq(sd.dacl.ace[1].mask, SMB_FILE_GENERIC_WRITE);
}
END_TEST

/* A parent DACL without AUTO_INHERITED (set by hand, no AUTO_INHERIT_REQ):
 * its children's ACEs carry no INHERITED flag and their DACL no
 * AUTO_INHERITED (smbtorture smb2.acls.INHERITANCE and INHERITFLAGS, as
 * Windows); with it, both (and PROTECTED is the parent's own, not passed
 * on). The ACEs of smb2.acls.INHERITANCE: CREATOR OWNER WRITE_DATA with
 * the flags of each case, Everyone all rights for the folder alone. */
START_TEST(test_inherit_auto)
{
	const uint8_t OI = SMB_SD_OBJECT_INHERIT, CI = SMB_SD_CONTAINER_INHERIT, IO = SMB_SD_INHERIT_ONLY,
		      NP = SMB_SD_NO_PROPAGATE;

	ace(SMB_SD_ACCESS_ALLOWED, OI | CI, SMB_FILE_WRITE_DATA, "S-1-3-0");
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_FILE_ALL_ACCESS, "S-1-1-0");
	sd.control |= SMB_SD_DACL_PROTECTED;
	ck_assert_uint_eq(smb_acl_inherit(&sd, false, &bob, &child), 1);
	ck_assert(has(&child, 0, SMB_FILE_WRITE_DATA, "S-1-22-1-2000"));
	ck_assert_uint_eq(child.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT);
	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &bob, &child), 2);
	ck_assert(has(&child, 0, SMB_FILE_WRITE_DATA, "S-1-22-1-2000"));
	ck_assert(has(&child, OI | CI | IO, SMB_FILE_WRITE_DATA, "S-1-3-0"));
	ck_assert_uint_eq(child.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT);
	/* NO_PROPAGATE: the folder's own ACE alone; OI | INHERIT_ONLY: kept for the files below */
	sd.dacl.ace[0].flags = CI | NP;
	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &bob, &child), 1);
	ck_assert(has(&child, 0, SMB_FILE_WRITE_DATA, "S-1-22-1-2000"));
	sd.dacl.ace[0].flags = OI | IO;
	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &bob, &child), 1);
	ck_assert(has(&child, OI | IO, SMB_FILE_WRITE_DATA, "S-1-3-0"));
	ck_assert_uint_eq(smb_acl_inherit(&sd, false, &bob, &child), 1);
	ck_assert(has(&child, 0, SMB_FILE_WRITE_DATA, "S-1-22-1-2000"));
	/* the parent takes part in auto-inheritance: INHERITED everywhere */
	sd.control |= SMB_SD_DACL_AUTO_INHERITED;
	sd.dacl.ace[0].flags = OI | CI;
	ck_assert_uint_eq(smb_acl_inherit(&sd, false, &bob, &child), 1);
	ck_assert(has(&child, SMB_SD_INHERITED, SMB_FILE_WRITE_DATA, "S-1-22-1-2000"));
	ck_assert_uint_eq(child.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT | SMB_SD_DACL_AUTO_INHERITED);
	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &bob, &child), 2);
	ck_assert(has(&child, SMB_SD_INHERITED, SMB_FILE_WRITE_DATA, "S-1-22-1-2000"));
	ck_assert(has(&child, SMB_SD_INHERITED | OI | CI | IO, SMB_FILE_WRITE_DATA, "S-1-3-0"));
}
END_TEST

/* SET_INFO's merge (MS-DTYP 2.4.6): a DACL's PROTECTED as given,
 * AUTO_INHERITED only beside AUTO_INHERIT_REQ, REQ never kept; the ACE
 * flags as given (INHERITED too); setting the owner alone leaves the DACL
 * and its control bits (smbtorture smb2.acls.INHERITFLAGS, SDFLAGSVSCHOWN). */
START_TEST(test_merge_control)
{
	static const uint16_t DR = SMB_SD_DACL_AUTO_INHERIT_REQ, DI = SMB_SD_DACL_AUTO_INHERITED,
			      P = SMB_SD_DACL_PROTECTED, BASE = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	struct smb_sd *in = malloc(sizeof(*in));
	struct smb_sd_sid bob_sid;

	ck_assert_ptr_nonnull(in);
	ace(SMB_SD_ACCESS_ALLOWED, SMB_SD_INHERITED, SMB_FILE_WRITE_DATA, "S-1-22-1-1000");
	for (unsigned k = 0; k < 8; k++) {
		uint16_t given = (k & 1 ? DI : 0) | (k & 2 ? DR : 0) | (k & 4 ? P : 0);
		uint16_t want = BASE | (k & 4 ? P : 0) | ((k & 3) == 3 ? DI : 0);

		*in = sd;
		in->control = BASE | given;
		child = sd;
		child.control = BASE | DI | P; /* what was there before does not count */
		smb_acl_merge(&child, in, SMB_SD_DACL);
		ck_assert_uint_eq(child.control, want);
		ck_assert_uint_eq(child.dacl.ace[0].flags, SMB_SD_INHERITED);
		/* the owner alone: the DACL's bits stay */
		*in = sd;
		in->control = SMB_SD_SELF_RELATIVE;
		in->has_dacl = in->has_group = false;
		smb_sd_sid_unix_user(2000, &in->owner);
		smb_acl_merge(&child, in, SMB_SD_OWNER);
		ck_assert_uint_eq(child.control, want);
		smb_sd_sid_unix_user(2000, &bob_sid);
		ck_assert(smb_sd_sid_eq(&child.owner, &bob_sid));
		ck_assert_uint_eq(child.dacl.count, 1);
	}
	/* the SACL's bits the same way, apart from the DACL's */
	*in = sd;
	in->control = SMB_SD_SELF_RELATIVE | SMB_SD_SACL_PRESENT | SMB_SD_SACL_AUTO_INHERITED |
		      SMB_SD_SACL_AUTO_INHERIT_REQ | SMB_SD_SACL_PROTECTED;
	in->has_sacl = true;
	child = sd;
	child.control = BASE;
	smb_acl_merge(&child, in, SMB_SD_SACL);
	ck_assert_uint_eq(child.control, BASE | SMB_SD_SACL_AUTO_INHERITED | SMB_SD_SACL_PROTECTED);
	free(in);
}
END_TEST

/* CREATE's SecD context (smb_acl_given): the control bits as SET_INFO
 * stores them (REQ never, AUTO_INHERITED only beside it, PROTECTED as
 * given), the ACEs as sent, generic rights mapped; an owner and group left
 * out are the creator's; a descriptor without a DACL part stays without. */
START_TEST(test_given_control)
{
	static const uint16_t DR = SMB_SD_DACL_AUTO_INHERIT_REQ, DI = SMB_SD_DACL_AUTO_INHERITED,
			      P = SMB_SD_DACL_PROTECTED, BASE = SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT;
	struct smb_sd *in = malloc(sizeof(*in));

	ck_assert_ptr_nonnull(in);
	ace(SMB_SD_ACCESS_ALLOWED, 0, SMB_GENERIC_ALL, "S-1-22-1-2000");
	for (unsigned k = 0; k < 8; k++) {
		uint16_t given = (k & 1 ? DI : 0) | (k & 2 ? DR : 0) | (k & 4 ? P : 0);

		*in = sd;
		in->control = BASE | given;
		in->has_owner = in->has_group = false;
		smb_acl_given(in, &alice, &child);
		ck_assert_uint_eq(child.control, BASE | (k & 4 ? P : 0) | ((k & 3) == 3 ? DI : 0));
		ck_assert(smb_sd_sid_eq(&child.owner, &alice.sid[0]));
		ck_assert(smb_sd_sid_eq(&child.group, &alice.sid[1]));
		ck_assert_uint_eq(child.dacl.count, 1);
		ck_assert_uint_eq(child.dacl.ace[0].flags, 0);
		ck_assert_uint_eq(child.dacl.ace[0].mask, SMB_FILE_ALL_ACCESS);
	}
	/* the owner given is kept; no DACL part: none stored (not a NULL one) */
	*in = sd;
	in->control = SMB_SD_SELF_RELATIVE | DR | DI;
	in->has_dacl = false;
	smb_acl_given(in, &bob, &child);
	ck_assert(smb_sd_sid_eq(&child.owner, &sd.owner));
	ck_assert(!child.has_dacl);
	ck_assert_uint_eq(child.control, SMB_SD_SELF_RELATIVE);
	free(in);
}
END_TEST

/* Nothing given, nothing handed down (smb_acl_default, MS-DTYP 2.5.3.4):
 * the creator's default DACL as Windows has it, the owner and SYSTEM with
 * full access and nothing for anyone else (no Everyone read). */
START_TEST(test_default_dacl)
{
	struct smb_sd_sid sys;

	ck_assert_int_eq(smb_sd_sid_from_str("S-1-5-18", &sys), 0);
	smb_acl_default(&alice, &child);
	ck_assert_uint_eq(child.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT);
	ck_assert(smb_sd_sid_eq(&child.owner, &alice.sid[0]));
	ck_assert(smb_sd_sid_eq(&child.group, &alice.sid[1]));
	ck_assert_uint_eq(child.dacl.count, 2);
	ck_assert(smb_sd_sid_eq(&child.dacl.ace[0].sid, &alice.sid[0]));
	ck_assert(smb_sd_sid_eq(&child.dacl.ace[1].sid, &sys));
	for (unsigned k = 0; k < 2; k++) {
		ck_assert_uint_eq(child.dacl.ace[k].type, SMB_SD_ACCESS_ALLOWED);
		ck_assert_uint_eq(child.dacl.ace[k].flags, 0);
		ck_assert_uint_eq(child.dacl.ace[k].mask, SMB_FILE_ALL_ACCESS);
	}
	ck_assert_uint_eq(smb_acl_granted(&child, &alice), SMB_FILE_ALL_ACCESS);
	ck_assert_uint_eq(smb_acl_granted(&child, &bob), 0);
}
END_TEST

/* An NTFS volume's root with no descriptor stored (smb_acl_root_default,
 * as ANF and GCNV make it): Everyone FILE_ALL_ACCESS, OI|CI, the DACL
 * AUTO_INHERITED; a file alice makes under it inherits the ACE marked
 * INHERITED, a folder keeps OI|CI too, and bob may do all to both. */
START_TEST(test_root_default)
{
	struct smb_sd_sid o, g;

	smb_sd_sid_unix_user(0, &o);
	smb_sd_sid_unix_group(0, &g);
	smb_acl_root_default(&o, &g, &sd);
	ck_assert_uint_eq(sd.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT | SMB_SD_DACL_AUTO_INHERITED);
	ck_assert(smb_sd_sid_eq(&sd.owner, &o));
	ck_assert(smb_sd_sid_eq(&sd.group, &g));
	ck_assert_uint_eq(sd.dacl.count, 1);
	ck_assert_uint_eq(sd.dacl.ace[0].type, SMB_SD_ACCESS_ALLOWED);
	ck_assert_uint_eq(sd.dacl.ace[0].flags, SMB_SD_OBJECT_INHERIT | SMB_SD_CONTAINER_INHERIT);
	ck_assert_uint_eq(sd.dacl.ace[0].mask, SMB_FILE_ALL_ACCESS);
	ck_assert(smb_sd_sid_eq(&sd.dacl.ace[0].sid, &smb_sd_everyone));
	ck_assert_uint_eq(smb_acl_granted(&sd, &bob), SMB_FILE_ALL_ACCESS);
	ck_assert_uint_eq(smb_acl_inherit(&sd, false, &alice, &child), 1);
	ck_assert_uint_eq(child.dacl.ace[0].flags, SMB_SD_INHERITED);
	ck_assert(child.control & SMB_SD_DACL_AUTO_INHERITED);
	ck_assert(smb_sd_sid_eq(&child.owner, &alice.sid[0]));
	ck_assert_uint_eq(smb_acl_granted(&child, &bob), SMB_FILE_ALL_ACCESS);
	ck_assert_uint_eq(smb_acl_inherit(&sd, true, &alice, &child), 1);
	ck_assert_uint_eq(child.dacl.ace[0].flags,
			  SMB_SD_OBJECT_INHERIT | SMB_SD_CONTAINER_INHERIT | SMB_SD_INHERITED);
	ck_assert_uint_eq(smb_acl_granted(&child, &bob), SMB_FILE_ALL_ACCESS);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("smb_acl");
	TCase *tc = tcase_create("acl");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_deny_first);
	tcase_add_test(tc, test_token_sids);
	tcase_add_test(tc, test_maximum_owner_null);
	tcase_add_test(tc, test_delete_child);
	tcase_add_test(tc, test_owner_rights);
	tcase_add_test(tc, test_inherit);
	tcase_add_test(tc, test_inherit_generic);
	tcase_add_test(tc, test_inherit_auto);
	tcase_add_test(tc, test_merge_control);
	tcase_add_test(tc, test_given_control);
	tcase_add_test(tc, test_default_dacl);
	tcase_add_test(tc, test_root_default);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(suite());
}
