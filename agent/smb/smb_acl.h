/* smb_acl: what an NTFS-style share does with a security descriptor
 * (smb_sd.h): the access check (MS-DTYP 2.5.3.2) of a caller's token
 * against an object's descriptor, and the descriptor a new object inherits
 * from its parent (MS-DTYP 2.5.3.4, for files and folders). Pure: no
 * store, no I/O (smb_acl_open.c applies them to opens).
 *
 * Token: the Unix SIDs of the session user (S-1-22-1-<uid>), of its
 * primary and supplementary groups (S-1-22-2-<gid>), Everyone (S-1-1-0)
 * and Authenticated Users (S-1-5-11). uid 0 bypasses every check (as the
 * kernel lets root, and as a UNIX-style share does).
 *
 * Access check: generic rights in the desired mask and in every ACE are
 * mapped to the file rights (FILE_GENERIC_READ/WRITE/EXECUTE,
 * FILE_ALL_ACCESS); the DACL's ACEs whose SID is in the token are taken in
 * order (INHERIT_ONLY ones skipped): an ALLOW grants the bits no earlier
 * ACE denied, a DENY denies the bits no earlier ACE granted (the same
 * answer as 2.5.3.2's "remaining bits" walk, for any order of ACEs). The
 * owner holds READ_CONTROL and WRITE_DAC whatever the DACL says, unless
 * the DACL has an OWNER RIGHTS (S-1-3-4) ACE: then those ACEs say what the
 * owner holds. A NULL DACL (or none) grants everything, an empty DACL
 * nothing but the owner's two rights. DELETE is also granted by
 * FILE_DELETE_CHILD on the parent, FILE_READ_ATTRIBUTES by
 * FILE_LIST_DIRECTORY on it.
 * ACCESS_SYSTEM_SECURITY is a privilege: root's only. MAXIMUM_ALLOWED asks
 * for nothing and is answered with everything granted.
 *
 * Inheritance: from the parent's DACL, for a file the OBJECT_INHERIT
 * ACEs, for a folder the CONTAINER_INHERIT ones (effective, still
 * inheritable unless NO_PROPAGATE) and the OBJECT_INHERIT-only ones
 * (INHERIT_ONLY, for the files below, unless NO_PROPAGATE); each marked
 * INHERITED and the new DACL SE_DACL_AUTO_INHERITED when the parent's DACL
 * is SE_DACL_AUTO_INHERITED (takes part in automatic inheritance, as
 * Windows creates files under it), else neither (the ACEs then look as if
 * set by hand). CREATOR OWNER (S-1-3-0) and CREATOR GROUP (S-1-3-1) become
 * the new object's owner and group in the effective ACE (a folder keeps
 * an INHERIT_ONLY copy with the creator SID for what is made below; an
 * ACE with generic rights the same, its effective copy mapped). The
 * owner is the creator, the group its primary group. The SACL is not
 * inherited (only root could read it).
 *
 * SET_INFO: the parts named replace the object's; the control bits of a
 * DACL (or SACL) set: PROTECTED as given, AUTO_INHERITED only when given
 * together with AUTO_INHERIT_REQ, REQ itself never kept (MS-DTYP 2.4.6);
 * a part not named keeps its bits (setting the owner leaves the DACL and
 * its flags as they were).
 */
#ifndef AQ_AGENT_SMB_ACL_H
#define AQ_AGENT_SMB_ACL_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/smb/smb_sd.h"

#define SMB_ACL_TOKEN_MAX 20u /* user, primary group, 16 more groups, Everyone, Authenticated Users */
#define SMB_ACCESS_SYSTEM_SECURITY 0x01000000u
#define SMB_FILE_LIST_DIRECTORY 0x00000001u   /* FILE_READ_DATA on a folder */
#define SMB_FILE_ADD_FILE 0x00000002u         /* FILE_WRITE_DATA on a folder */
#define SMB_FILE_ADD_SUBDIRECTORY 0x00000004u /* FILE_APPEND_DATA on a folder */

struct smb_acl_token {
	bool root;
	unsigned n;
	struct smb_sd_sid sid[SMB_ACL_TOKEN_MAX]; /* [0] the user, [1] the primary group */
};

/* The token of uid, gid and its first min(ngids, 16) supplementary gids. */
void smb_acl_token_init(struct smb_acl_token *t, uint32_t uid, uint32_t gid, const uint32_t *gids, unsigned ngids);
bool smb_acl_token_has(const struct smb_acl_token *t, const struct smb_sd_sid *s);
/* mask with GENERIC_* replaced by the file rights they stand for. */
uint32_t smb_acl_map(uint32_t mask);
/* GENERIC_* mapped in the ACEs of acl that apply to the object only (no
 * OBJECT_INHERIT, CONTAINER_INHERIT or INHERIT_ONLY): what a descriptor
 * set or inherited keeps, as Windows does. */
void smb_acl_map_acl(struct smb_sd_acl *acl);
/* What sd grants t (without what the parent adds). */
uint32_t smb_acl_granted(const struct smb_sd *sd, const struct smb_acl_token *t);
/* Whether t may open an object of descriptor sd for desired, given what
 * the parent grants t (parent_granted: 0 when there is no parent, the
 * share root): true and *granted (the open's access: desired mapped, or
 * with MAXIMUM_ALLOWED all that is granted), or false (ACCESS_DENIED). */
bool smb_acl_check(const struct smb_sd *sd, const struct smb_acl_token *t, uint32_t desired, uint32_t parent_granted,
		   uint32_t *granted);
/* The descriptor of a new object (a folder when dir) made by the token's
 * user under parent: owner, group and the inherited DACL in *child.
 * Returns the number of ACEs inherited (0: none; the caller picks a
 * default). */
unsigned smb_acl_inherit(const struct smb_sd *parent, bool dir, const struct smb_acl_token *t, struct smb_sd *child);
/* SET_INFO: the parts of in that what names (SMB_SD_OWNER | GROUP | DACL
 * | SACL) into cur, with their control bits as above (an owner or group
 * part absent from in is left as it was; a DACL part absent is the NULL
 * DACL); generic rights of the object's own ACEs mapped. Who may set what
 * is the caller's check. */
void smb_acl_merge(struct smb_sd *cur, const struct smb_sd *in, uint32_t what);
/* CREATE's SecD context (MS-SMB2 2.2.13.2.2): the new object's descriptor
 * in *out, in merged over an empty one as SET_INFO would store it
 * (smb_acl_merge: AUTO_INHERIT_REQ never kept, AUTO_INHERITED only beside
 * it, PROTECTED as given; a DACL or SACL part in leaves out stays out),
 * the owner and group the token's where in names none. */
void smb_acl_given(const struct smb_sd *in, const struct smb_acl_token *t, struct smb_sd *out);
/* A new object's descriptor when the CREATE gave none and its parent
 * hands nothing down (MS-DTYP 2.5.3.4: the creator token's default DACL;
 * Windows', and smbd's with acl_xattr "default acl style = windows" and
 * "ignore system acls"): owner and group the token's, a DACL of two ALLOW
 * ACEs without inheritance flags, the owner and SYSTEM (S-1-5-18) with
 * FILE_ALL_ACCESS; control SELF_RELATIVE | DACL_PRESENT only. */
void smb_acl_default(const struct smb_acl_token *t, struct smb_sd *sd);
/* The descriptor an NTFS volume's root shows and enforces while none is
 * stored on it (smb_acl_open.c), what Azure NetApp Files and Google Cloud
 * NetApp Volumes give a new NTFS volume's root, so that the users of the
 * share can work with each other's files until an admin narrows it:
 * owner and group as given (the root's), a DACL of one ALLOW ACE,
 * Everyone (S-1-1-0) FILE_ALL_ACCESS with OBJECT_INHERIT |
 * CONTAINER_INHERIT; control SELF_RELATIVE | DACL_PRESENT |
 * DACL_AUTO_INHERITED (what is made in the root inherits it marked
 * INHERITED, as Windows makes it). A descriptor SET_INFO stores on the
 * root replaces it. */
void smb_acl_root_default(const struct smb_sd_sid *owner, const struct smb_sd_sid *group, struct smb_sd *sd);

#endif
