/* smb_ctx: the CREATE contexts (MS-SMB2 2.2.13.2, 3.3.5.9) that no other
 * module owns, so that none a client sends is accepted and then ignored.
 * One table names every context a client may send and who acts on it:
 *  - RqLs (smb_lease.c), DHnQ, DHnC, DH2Q, DH2C (smb_durable.c), TWrp
 *    (smb_prev.c);
 *  - ExtA (extended attributes for the file): the FILE_FULL_EA_INFORMATION
 *    list checked whole (smb_ea_check: malformed or empty
 *    STATUS_INVALID_PARAMETER, a bad name STATUS_INVALID_EA_NAME, a flag
 *    other than FILE_NEED_EA STATUS_INVALID_EA_FLAG) before anything
 *    changes, then set on a file or folder the CREATE made or overwrote
 *    (smb_info_ea.c; as smbd and NTFS, not on one it only opened);
 *  - SecD (a security descriptor for the new object): decoded (malformed:
 *    STATUS_INVALID_PARAMETER, as smbd) and mapped onto the POSIX owner,
 *    group and mode a UNIX-style share keeps (smb_sd_to_unix); a descriptor
 *    with no POSIX equivalent (deny or inherited ACEs, other SIDs, an ACE
 *    for a Unix id that is not the object's owner or group, a SACL, a NULL
 *    DACL) is STATUS_NOT_SUPPORTED, an owner other than
 *    the user STATUS_INVALID_OWNER, a group the user is not in
 *    STATUS_INVALID_PRIMARY_GROUP (root may give any), all before anything
 *    changes; applied to an object the CREATE made (as NTFS: a descriptor
 *    given for an existing object is not applied to it); on an NTFS-style
 *    share it is kept as given (smb_acl_open.c), only an owner other than
 *    the user refused;
 *  - AlSi (allocation size, 8 bytes): for a file the CREATE makes or
 *    overwrites, a size past what the volume has free is STATUS_DISK_FULL
 *    (3.3.5.9.3) before anything changes; then held on the volume while
 *    the open lives (smb_alloc.c);
 *  - APP_INSTANCE_ID (20 bytes) and APP_INSTANCE_VERSION (24 bytes), each
 *    with its StructureSize: an open of another client with that
 *    AppInstanceId on the same path and share is closed first
 *    (smb_durable_app; 3.x only: on 2.x they have no effect, as 3.3.5.9.13
 *    applies to 3.x servers only);
 *  - MxAc (0 or 8 bytes): answered with the session user's maximal access
 *    to the object, from the same POSIX bits the kernel checks (owner,
 *    group or other class, as the synthesized descriptor shows), DELETE
 *    when the parent lets the user unlink it, write and delete taken away
 *    from a READONLY file, every change from a previous version; no
 *    answer when the request's timestamp is the file's LastWriteTime
 *    (smbd);
 *  - QFid (0 bytes): answered with the inode and the volume's fsid;
 *  - anything else (AAPL, the POSIX extensions, SVHDX, unknown tags)
 *    gets no answer context, which is how a
 *    server that does not serve it tells the client (3.3.5.9: contexts a
 *    server does not support are ignored).
 * A context with the wrong length is STATUS_INVALID_PARAMETER. This file is
 * the check (pure: no store, no I/O; fuzz_smb_wire runs it over every
 * decoded CREATE); smb_ctx_open.c acts on what it found.
 */
#include <string.h>

#include "agent/smb/smb_ea.h"
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

#define STATUS_INVALID_OWNER 0xC000005Au
#define STATUS_INVALID_PRIMARY_GROUP 0xC000005Bu

struct smb_ctx_row {
	const char *tag;
	/* NULL: another module acts on it */
	uint32_t (*check)(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x);
};

static uint32_t smb_ctx_exta(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x)
{
	uint32_t st;

	(void)cred;
	if ((st = smb_ea_check(c->data, c->data_len, NULL)) != STATUS_SUCCESS)
		return st;
	x->exta = c->data;
	x->exta_len = c->data_len;
	return STATUS_SUCCESS;
}

bool smb_ctx_in_group(const struct vol_cred *cred, uint32_t gid)
{
	if (cred->gid == gid)
		return true;
	for (uint32_t k = 0; k < cred->ngids && k < 16u; k++)
		if (cred->gids[k] == gid)
			return true;
	return false;
}

/* Whether every ACE of sd's DACL names Everyone, the object's owner-to-be
 * or its group-to-be: without an owner (group) in the descriptor the
 * object is the user's (primary group's), and an ACE for another Unix id
 * would otherwise be read as the owner's (group's) bits. */
static bool smb_ctx_secd_ids(const struct smb_sd *sd, const struct vol_cred *cred, const struct smb_ctx_req *x)
{
	struct smb_sd_sid u, g;

	smb_sd_sid_unix_user((x->sd_have & SMB_SD_HAVE_UID) ? x->sd_uid : cred->uid, &u);
	smb_sd_sid_unix_group((x->sd_have & SMB_SD_HAVE_GID) ? x->sd_gid : cred->gid, &g);
	for (uint16_t i = 0; sd->has_dacl && i < sd->dacl.count; i++) {
		const struct smb_sd_sid *s = &sd->dacl.ace[i].sid;

		if (!smb_sd_sid_eq(s, &smb_sd_everyone) && !smb_sd_sid_eq(s, &u) && !smb_sd_sid_eq(s, &g))
			return false;
	}
	return true;
}

static uint32_t smb_ctx_secd(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x)
{
	struct smb_sd sd;
	int rc;

	if (!c->data_len || c->data_len > SMB_SD_MAX || smb_sd_decode(c->data, c->data_len, &sd) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (x->ntfs) { /* kept as given (smb_acl_made); the owner rule as below */
		struct smb_sd_sid me;

		smb_sd_sid_unix_user(cred->uid, &me);
		if (cred->uid != 0 && sd.has_owner && !smb_sd_sid_eq(&sd.owner, &me))
			return STATUS_INVALID_OWNER;
		x->secd_raw = c->data;
		x->secd_len = c->data_len;
		x->secd = true;
		return STATUS_SUCCESS;
	}
	/* a SACL is kept nowhere; a NULL DACL (no access checks) has no mode */
	if (sd.has_sacl || (sd.control & SMB_SD_SACL_PRESENT) || ((sd.control & SMB_SD_DACL_PRESENT) && !sd.has_dacl))
		return STATUS_NOT_SUPPORTED;
	rc = smb_sd_to_unix(&sd, &x->sd_uid, &x->sd_gid, &x->sd_mode, &x->sd_have);
	if (rc == AQ_EUNIMPL || (rc == AQ_OK && !smb_ctx_secd_ids(&sd, cred, x)))
		return STATUS_NOT_SUPPORTED;
	if (rc != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (cred->uid != 0 && (x->sd_have & SMB_SD_HAVE_UID) && x->sd_uid != cred->uid)
		return STATUS_INVALID_OWNER;
	if (cred->uid != 0 && (x->sd_have & SMB_SD_HAVE_GID) && !smb_ctx_in_group(cred, x->sd_gid))
		return STATUS_INVALID_PRIMARY_GROUP;
	x->secd = true;
	return STATUS_SUCCESS;
}

static uint32_t smb_ctx_alsi(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x)
{
	(void)cred;
	if (c->data_len != 8)
		return STATUS_INVALID_PARAMETER;
	x->alsi = true;
	x->alloc = smb_wire_get_u64(c->data);
	return STATUS_SUCCESS;
}

static uint32_t smb_ctx_mxac(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x)
{
	(void)cred;
	if (c->data_len != 0 && c->data_len != 8)
		return STATUS_INVALID_PARAMETER;
	x->mxac = true;
	x->mxac_time = c->data_len ? smb_wire_get_u64(c->data) : 0;
	return STATUS_SUCCESS;
}

static uint32_t smb_ctx_qfid(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x)
{
	(void)cred;
	if (c->data_len != 0)
		return STATUS_INVALID_PARAMETER;
	x->qfid = true;
	return STATUS_SUCCESS;
}

/* APP_INSTANCE_ID: StructureSize 20 (3.3.5.9.13 lets a server check it). */
static uint32_t smb_ctx_app(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x)
{
	(void)cred;
	if (c->data_len != 20 || smb_wire_get_u16(c->data) != 20)
		return STATUS_INVALID_PARAMETER;
	x->app = true;
	memcpy(x->app_id, c->data + 4, 16);
	return STATUS_SUCCESS;
}

static uint32_t smb_ctx_app_ver(const struct smb_wire_create_ctx *c, const struct vol_cred *cred, struct smb_ctx_req *x)
{
	(void)cred;
	if (c->data_len != 24 || smb_wire_get_u16(c->data) != 24)
		return STATUS_INVALID_PARAMETER;
	x->app_ver = true;
	x->app_hi = smb_wire_get_u64(c->data + 8);
	x->app_lo = smb_wire_get_u64(c->data + 16);
	return STATUS_SUCCESS;
}

static const struct smb_ctx_row smb_ctx_table[] = {
	{ .tag = "RqLs" }, /* smb_lease.c */
	{ .tag = "DHnQ" }, /* smb_durable.c */
	{ .tag = "DHnC" },
	{ .tag = "DH2Q" },
	{ .tag = "DH2C" },
	{ .tag = SMB2_CREATE_TIMEWARP_TOKEN }, /* smb_prev.c */
	{ .tag = "ExtA", .check = smb_ctx_exta },
	{ .tag = "SecD", .check = smb_ctx_secd },
	{ .tag = "AlSi", .check = smb_ctx_alsi },
	{ .tag = "MxAc", .check = smb_ctx_mxac },
	{ .tag = "QFid", .check = smb_ctx_qfid },
	{ .tag = SMB2_CREATE_APP_INSTANCE_ID, .check = smb_ctx_app },          /* smb_durable_app */
	{ .tag = SMB2_CREATE_APP_INSTANCE_VERSION, .check = smb_ctx_app_ver },
};

uint32_t smb_ctx_check(const struct smb_wire_create_req *q, const struct vol_cred *cred, bool ntfs,
		       struct smb_ctx_req *x)
{
	uint32_t status = STATUS_SUCCESS;

	memset(x, 0, sizeof(*x));
	x->ntfs = ntfs;
	for (size_t k = 0; k < sizeof(smb_ctx_table) / sizeof(smb_ctx_table[0]) && status == STATUS_SUCCESS; k++) {
		const struct smb_wire_create_ctx *c = smb_wire_create_ctx_find(q, smb_ctx_table[k].tag);

		if (c && smb_ctx_table[k].check)
			status = smb_ctx_table[k].check(c, cred, x);
	}
	return status;
}
