/* smb_sd: Windows security descriptors (MS-DTYP 2.4): SIDs in binary and
 * string form, ACLs and ACEs, self-relative descriptors decoded and
 * encoded, and the mapping between a POSIX owner, group and mode and a
 * descriptor for the simple cases (what a UNIX-style share shows and what
 * a client may set on it).
 *
 * Decoding is bounded: every offset and size in a descriptor is checked
 * against the buffer (and an ACE against its ACL) before it is read; ACE
 * types other than ACCESS_ALLOWED, ACCESS_DENIED, SYSTEM_AUDIT and
 * SYSTEM_MANDATORY_LABEL are kept as opaque (type, flags, body) so that a
 * stored descriptor round-trips. No allocation: the structures are fixed
 * size with caps (SMB_SD_ACE_MAX ACEs per ACL).
 *
 * POSIX identities are the Unix SIDs Samba uses: S-1-22-1-<uid> for users,
 * S-1-22-2-<gid> for groups; "other" is Everyone (S-1-1-0).
 *
 * Return codes: AQ_OK, AQ_EINVAL (malformed), AQ_ETOOBIG (over a cap),
 * AQ_EUNIMPL (a descriptor that has no POSIX equivalent: deny ACEs, other
 * SIDs, inheritance), AQ_ENOMEM / AQ_ETOOBIG from the encode buffer.
 */
#ifndef AQ_AGENT_SMB_SD_H
#define AQ_AGENT_SMB_SD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/smb/smb_wire.h"

#define SMB_SD_SUBAUTH_MAX 15u
#define SMB_SD_ACE_MAX 64u
#define SMB_SD_OPAQUE_MAX 64u  /* body bytes kept of an ACE type not parsed */
#define SMB_SD_SID_STR_MAX 192u /* "S-1-" + 48-bit authority + 15 sub-authorities */
#define SMB_SD_MAX (64u << 10)  /* the largest descriptor accepted (SET_INFO) */

/* SECURITY_INFORMATION (AdditionalInformation of QUERY/SET_INFO) */
#define SMB_SD_OWNER 0x00000001u
#define SMB_SD_GROUP 0x00000002u
#define SMB_SD_DACL 0x00000004u
#define SMB_SD_SACL 0x00000008u

/* Control (2.4.6) */
#define SMB_SD_DACL_PRESENT 0x0004u
#define SMB_SD_SACL_PRESENT 0x0010u
#define SMB_SD_DACL_AUTO_INHERIT_REQ 0x0100u /* DR: a SET asks for DI; never kept */
#define SMB_SD_SACL_AUTO_INHERIT_REQ 0x0200u /* SR */
#define SMB_SD_DACL_AUTO_INHERITED 0x0400u   /* DI: the DACL takes part in automatic inheritance */
#define SMB_SD_SACL_AUTO_INHERITED 0x0800u   /* SI */
#define SMB_SD_DACL_PROTECTED 0x1000u
#define SMB_SD_SACL_PROTECTED 0x2000u
/* The control bits a descriptor keeps and shows besides the PRESENT ones */
#define SMB_SD_KEPT_CONTROL                                                                                     \
	(SMB_SD_DACL_AUTO_INHERITED | SMB_SD_SACL_AUTO_INHERITED | SMB_SD_DACL_PROTECTED | SMB_SD_SACL_PROTECTED)
#define SMB_SD_SELF_RELATIVE 0x8000u

/* ACE types and flags (2.4.4.1) */
#define SMB_SD_ACCESS_ALLOWED 0x00u
#define SMB_SD_ACCESS_DENIED 0x01u
#define SMB_SD_SYSTEM_AUDIT 0x02u
#define SMB_SD_SYSTEM_MANDATORY_LABEL 0x11u
#define SMB_SD_OBJECT_INHERIT 0x01u
#define SMB_SD_CONTAINER_INHERIT 0x02u
#define SMB_SD_NO_PROPAGATE 0x04u
#define SMB_SD_INHERIT_ONLY 0x08u
#define SMB_SD_INHERITED 0x10u

/* Access mask bits (2.4.3, MS-SMB2 2.2.13.1.1) */
#define SMB_FILE_READ_DATA 0x00000001u
#define SMB_FILE_WRITE_DATA 0x00000002u
#define SMB_FILE_APPEND_DATA 0x00000004u
#define SMB_FILE_READ_EA 0x00000008u
#define SMB_FILE_WRITE_EA 0x00000010u
#define SMB_FILE_EXECUTE 0x00000020u
#define SMB_FILE_DELETE_CHILD 0x00000040u
#define SMB_FILE_READ_ATTRIBUTES 0x00000080u
#define SMB_FILE_WRITE_ATTRIBUTES 0x00000100u
#define SMB_DELETE 0x00010000u
#define SMB_READ_CONTROL 0x00020000u
#define SMB_WRITE_DAC 0x00040000u
#define SMB_WRITE_OWNER 0x00080000u
#define SMB_SYNCHRONIZE 0x00100000u
#define SMB_MAXIMUM_ALLOWED 0x02000000u
#define SMB_GENERIC_ALL 0x10000000u
#define SMB_GENERIC_EXECUTE 0x20000000u
#define SMB_GENERIC_WRITE 0x40000000u
#define SMB_GENERIC_READ 0x80000000u
/* The generic mapping for files (MS-SMB2 / Windows' FILE_GENERIC_*) */
#define SMB_FILE_GENERIC_READ 0x00120089u
#define SMB_FILE_GENERIC_WRITE 0x00120116u
#define SMB_FILE_GENERIC_EXECUTE 0x001200A0u
#define SMB_FILE_ALL_ACCESS 0x001F01FFu

struct smb_sd_sid {
	uint8_t revision;  /* 1 */
	uint8_t count;
	uint64_t authority; /* 48 bits */
	uint32_t sub[SMB_SD_SUBAUTH_MAX];
};

/* From a cursor (so that a SID inside an ACE is bounded by the ACE). */
int smb_sd_sid_decode(struct smb_wire_cur *c, struct smb_sd_sid *s);
void smb_sd_sid_encode(struct ut_buf *b, const struct smb_sd_sid *s);
size_t smb_sd_sid_size(const struct smb_sd_sid *s);
bool smb_sd_sid_eq(const struct smb_sd_sid *a, const struct smb_sd_sid *b);
/* "S-1-5-32-544"; AQ_ETOOBIG if out[cap] is too small. */
int smb_sd_sid_to_str(const struct smb_sd_sid *s, char *out, size_t cap);
/* The reverse; AQ_EINVAL unless "S-1-" then an authority (decimal, or
 * 0x-hex for 2^32 and above) and up to 15 decimal 32-bit values. */
int smb_sd_sid_from_str(const char *str, struct smb_sd_sid *s);
void smb_sd_sid_unix_user(uint32_t uid, struct smb_sd_sid *s);
void smb_sd_sid_unix_group(uint32_t gid, struct smb_sd_sid *s);
extern const struct smb_sd_sid smb_sd_everyone;

struct smb_sd_ace {
	uint8_t type, flags;
	uint32_t mask;
	struct smb_sd_sid sid;
	size_t opaque_len;                 /* other types: the body after the header */
	uint8_t opaque[SMB_SD_OPAQUE_MAX];
};

struct smb_sd_acl {
	uint8_t revision; /* 2 (3 from smbcacls), or 4 with object ACEs */
	uint16_t count;
	struct smb_sd_ace ace[SMB_SD_ACE_MAX];
};

struct smb_sd {
	uint16_t control;
	bool has_owner, has_group, has_dacl, has_sacl;
	struct smb_sd_sid owner, group;
	struct smb_sd_acl dacl, sacl;
};

/* A self-relative descriptor (2.4.6). A NULL offset means the part is
 * absent; DACL_PRESENT with a zero DACL offset is the NULL DACL (all
 * access): has_dacl false, control keeps the bit. */
int smb_sd_decode(const uint8_t *p, size_t len, struct smb_sd *sd);
/* Append the parts named by secinfo (SMB_SD_OWNER | ...) as a
 * self-relative descriptor: header, owner, group, SACL, DACL; the control
 * the PRESENT bits of the parts written and sd's SMB_SD_KEPT_CONTROL. */
int smb_sd_encode(struct ut_buf *b, const struct smb_sd *sd, uint32_t secinfo);

/* The descriptor a UNIX-style share shows for uid, gid and mode (the 0777
 * bits; dir adds DELETE_CHILD with w): three ALLOW ACEs, owner, group,
 * Everyone, the owner also holding READ_CONTROL, WRITE_DAC, WRITE_OWNER
 * and the attribute bits (POSIX lets the owner chmod and touch). */
void smb_sd_from_unix(uint32_t uid, uint32_t gid, uint32_t mode, bool dir, struct smb_sd *sd);

#define SMB_SD_HAVE_UID 1u
#define SMB_SD_HAVE_GID 2u
#define SMB_SD_HAVE_MODE 4u
/* The reverse for what a client sets: the owner and group when they are
 * Unix SIDs, the 0777 bits when the DACL holds only ALLOW ACEs for the
 * owner, the group and Everyone (r from READ_DATA, w from WRITE_DATA, x
 * from EXECUTE, GENERIC_* expanded). *have says which outputs were set.
 * AQ_EUNIMPL for a DENY ACE, inheritance flags, another SID, or an owner
 * or group that is not a Unix SID. */
int smb_sd_to_unix(const struct smb_sd *sd, uint32_t *uid, uint32_t *gid, uint32_t *mode, unsigned *have);

#endif
