/* smb_acl_open: NTFS-style shares (securityStyle NTFS) over the store.
 * An object's descriptor is the one stored with it (vol_sd.c), or, when
 * none is: for the volume root, the one Azure NetApp Files and GCNV give a
 * new NTFS volume's root (smb_acl_root_default: Everyone FILE_ALL_ACCESS,
 * object and container inherit, so what users make in the root is shared
 * until an admin sets the root's descriptor, which then rules), and the
 * same for a snapshot's root (a previous version of the root: the stored
 * one the snapshot kept, else that default); for
 * anything else not made through SMB, the one a UNIX-style share shows for
 * its owner, group and mode (smb_sd_from_unix).
 *  - CREATE of an existing object: the desired access checked against its
 *    DACL for the session's token (smb_acl.h), DELETE also granted by the
 *    parent's DELETE_CHILD; the open's access is what was granted (with
 *    MAXIMUM_ALLOWED: all of it; an overwrite also needs FILE_WRITE_DATA),
 *    so every later check (smb_open_may)
 *    holds to the DACL. Refused: STATUS_ACCESS_DENIED.
 *  - CREATE of a new object: the parent must grant FILE_ADD_FILE (a file)
 *    or FILE_ADD_SUBDIRECTORY (a folder); the object gets the SecD
 *    context's descriptor (validated, re-encoded self-relative, its control
 *    bits as a SET_INFO would store them: smb_acl_given), else the
 *    parent's inheritable ACEs, else the creator token's default DACL as
 *    Windows gives it (smb_acl_default: the owner and SYSTEM, full
 *    access; no more Everyone read); the creator
 *    gets what it asked (MAXIMUM_ALLOWED: what the new descriptor grants).
 *  - QUERY_INFO security: the parts AdditionalInformation names.
 *  - SET_INFO security: merged into the object's descriptor part by part
 *    (OWNER, GROUP, DACL, SACL as AdditionalInformation names them; a NULL
 *    DACL, DENY ACEs, inheritance flags and any SID kept; generic rights
 *    of the ACEs for the object itself mapped); anyone but root
 *    may only name themselves owner (STATUS_INVALID_OWNER).
 * The POSIX mode does not get in the way: on an NTFS share the SMB server
 * makes folders 0777 and files 0666 (owned by the creator and its primary
 * group), so the kernel lets every user do what the DACL granted; nothing
 * else serves such a volume (the API refuses NFS with NTFS). What still
 * needs the POSIX owner: setting explicit timestamps (SET_INFO basic) on
 * an object someone else made is refused by the kernel (EPERM). uid 0
 * passes every check, as on a UNIX-style share.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/smb/smb_acl.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

#define STATUS_INVALID_OWNER 0xC000005Au
#define STATUS_INVALID_PRIMARY_GROUP 0xC000005Bu
#define SMB_ACL_ALL (SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL | SMB_SD_SACL)

/* Whether cred may open the existing file o for the data access desired
 * names (GENERIC_* mapped; MAXIMUM_ALLOWED alone asks nothing more): its
 * FILE_READ_DATA and FILE_WRITE_DATA / FILE_APPEND_DATA against the
 * descriptor the file shows (smb_ctx_maximal: the owner's, group's or
 * Everyone's bits), as Windows and smbd check a CREATE against the DACL
 * (smbtorture smb2.acls.MXAC-NOT-GRANTED) and as the kernel would refuse
 * the READ or WRITE later. The other rights stay where they are checked
 * now: at the operation (SET_INFO, rename, delete) by the kernel. */
static bool smb_open_data_allowed(const struct smb_open *o, const struct vol_cred *cred, uint32_t desired)
{
	uint32_t want = desired;

	if (cred->uid == 0 || !S_ISREG(o->obj.st.st_mode) || o->obj.snap)
		return true;
	if (desired & SMB_GENERIC_ALL)
		want |= SMB_FILE_ALL_ACCESS;
	if (desired & SMB_GENERIC_READ)
		want |= SMB_FILE_GENERIC_READ;
	if (desired & SMB_GENERIC_WRITE)
		want |= SMB_FILE_GENERIC_WRITE;
	want &= SMB_FILE_READ_DATA | SMB_FILE_WRITE_DATA | SMB_FILE_APPEND_DATA;
	return (want & ~smb_ctx_maximal(o, cred)) == 0;
}

bool smb_acl_ntfs(const struct smb_tree *t)
{
	return t && t->share.security == API_INTENT_SEC_NTFS;
}

static void smb_acl_token_of(const struct vol_cred *cred, struct smb_acl_token *t)
{
	smb_acl_token_init(t, cred->uid, cred->gid, cred->gids, cred->ngids);
}

/* obj's descriptor: the stored one, or the synthesized one. */
static int smb_acl_load(const struct vol_obj *obj, struct smb_sd *sd)
{
	static _Thread_local uint8_t buf[VOL_SD_MAX];
	size_t len = 0;
	int rc;

	if ((rc = vol_sd_get(obj, buf, sizeof(buf), &len)) != 0)
		return rc;
	if (len > 0)
		return smb_sd_decode(buf, len, sd) == AQ_OK ? 0 : -EIO;
	/* Everyone full access, inherited: ANF's and GCNV's; a snapshot's root
	 * (a previous version of the share's root, .snapshot\\<id>) shows what
	 * the root showed, not its mode's */
	if (vol_obj_is_root(obj) || vol_obj_is_snap_root(obj)) {
		struct smb_sd_sid owner, group;

		smb_sd_sid_unix_user(obj->st.st_uid, &owner);
		smb_sd_sid_unix_group(obj->st.st_gid, &group);
		smb_acl_root_default(&owner, &group, sd);
		return 0;
	}
	smb_sd_from_unix(obj->st.st_uid, obj->st.st_gid, obj->st.st_mode & 0777u, S_ISDIR(obj->st.st_mode), sd);
	return 0;
}

/* What the parent of o grants cred (0: no parent, or unreadable). */
static uint32_t smb_acl_parent(const struct smb_open *o, const struct smb_acl_token *t, struct smb_sd *sd)
{
	if (o->parent.fd < 0 || smb_acl_load(&o->parent, sd) != 0)
		return 0;
	return smb_acl_granted(sd, t);
}

static uint32_t smb_acl_store(struct vol_obj *obj, const struct smb_sd *sd, const struct vol_cred *cred)
{
	struct ut_buf b;
	uint32_t st = STATUS_SUCCESS;
	int rc;

	ut_buf_init(&b, VOL_SD_MAX);
	if (smb_sd_encode(&b, sd, SMB_ACL_ALL) != AQ_OK || b.err != AQ_OK || b.len > VOL_SD_MAX)
		st = STATUS_INVALID_PARAMETER;
	else if ((rc = vol_sd_set(obj, ut_buf_bytes(&b), b.len, cred)) != 0)
		st = rc == -EROFS ? STATUS_MEDIA_WRITE_PROTECTED : smb_status_from_errno(rc);
	ut_buf_cleanup(&b);
	return st;
}

/* ACCESS_SYSTEM_SECURITY (the SACL) needs SeSecurityPrivilege, which only
 * uid 0 holds here: without it the open fails STATUS_PRIVILEGE_NOT_HELD
 * before any DACL is read (MS-FSA 2.1.5.1 privilege check; smbd's
 * create_file_unixpath answers the same), on either style of share. */
static uint32_t smb_acl_privileges(const struct vol_cred *cred, uint32_t desired)
{
	return (desired & SMB_ACCESS_SYSTEM_SECURITY) && cred->uid != 0 ? STATUS_PRIVILEGE_NOT_HELD : STATUS_SUCCESS;
}

uint32_t smb_acl_open_allowed(struct smb_open *o, const struct vol_cred *cred, uint32_t desired, bool overwrite)
{
	struct smb_acl_token t;
	struct smb_sd *sd = NULL;
	uint32_t st = STATUS_ACCESS_DENIED, pg, g = 0;

	if ((st = smb_acl_privileges(cred, desired)) != STATUS_SUCCESS)
		return st;
	st = STATUS_ACCESS_DENIED;
	if (!smb_acl_ntfs(o->tree))
		return smb_open_data_allowed(o, cred, desired) ? STATUS_SUCCESS : STATUS_ACCESS_DENIED;
	if (!(sd = malloc(sizeof(*sd))))
		return STATUS_NO_MEMORY;
	smb_acl_token_of(cred, &t);
	pg = smb_acl_parent(o, &t, sd);
	if (smb_acl_load(&o->obj, sd) != 0) {
		st = STATUS_INTERNAL_ERROR;
		goto out;
	}
	/* an overwrite or supersede writes the file's data (as smbd and
	 * Windows check it; smbtorture smb2.acls.OVERWRITE_READ_ONLY_FILE) */
	if (!smb_acl_check(sd, &t, desired | (overwrite ? SMB_FILE_WRITE_DATA : 0), pg, &g))
		goto out;
	o->access = g;
	st = STATUS_SUCCESS;
out:
	free(sd);
	return st;
}

uint32_t smb_acl_create_allowed(const struct smb_open *o, const struct vol_cred *cred, bool dir)
{
	struct smb_acl_token t;
	struct smb_sd *sd;
	uint32_t need = dir ? SMB_FILE_ADD_SUBDIRECTORY : SMB_FILE_ADD_FILE, g;

	if ((g = smb_acl_privileges(cred, o->access)) != STATUS_SUCCESS || !smb_acl_ntfs(o->tree))
		return g;
	if (!(sd = malloc(sizeof(*sd))))
		return STATUS_NO_MEMORY;
	smb_acl_token_of(cred, &t);
	g = o->parent.fd >= 0 && smb_acl_load(&o->parent, sd) == 0 ? smb_acl_granted(sd, &t) : 0;
	free(sd);
	return (g & need) == need ? STATUS_SUCCESS : STATUS_ACCESS_DENIED;
}

uint32_t smb_acl_made(const struct smb_ctx_req *x, struct smb_open *o, const struct vol_cred *cred)
{
	struct smb_acl_token t;
	struct smb_sd *sd = NULL, *parent = NULL;
	uint32_t st = STATUS_NO_MEMORY, want;
	bool dir = S_ISDIR(o->obj.st.st_mode);

	if (!(sd = malloc(sizeof(*sd))) || !(parent = malloc(sizeof(*parent))))
		goto out;
	smb_acl_token_of(cred, &t);
	if (x->secd_raw) {
		/* stored with the control bits a SET_INFO would leave */
		st = smb_sd_decode(x->secd_raw, x->secd_len, parent) == AQ_OK ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
		if (st != STATUS_SUCCESS)
			goto out;
		smb_acl_given(parent, &t, sd);
	} else if (smb_acl_load(&o->parent, parent) != 0 || smb_acl_inherit(parent, dir, &t, sd) == 0) {
		smb_acl_default(&t, sd); /* the creator's and SYSTEM's, as Windows */
	}
	if ((st = smb_acl_store(&o->obj, sd, cred)) != STATUS_SUCCESS)
		goto out;
	/* the creator gets what it asked; MAXIMUM_ALLOWED what it is granted */
	want = o->access;
	o->access = smb_acl_map(want) & ~SMB_MAXIMUM_ALLOWED;
	if (want & SMB_MAXIMUM_ALLOWED)
		o->access |= smb_acl_granted(sd, &t);
out:
	free(sd);
	free(parent);
	return st;
}

uint32_t smb_acl_maximal(const struct smb_open *o, const struct vol_cred *cred)
{
	struct smb_acl_token t;
	struct smb_sd *sd;
	uint32_t m = 0, pg;

	if (!(sd = malloc(sizeof(*sd))))
		return 0;
	smb_acl_token_of(cred, &t);
	pg = smb_acl_parent(o, &t, sd);
	if (smb_acl_load(&o->obj, sd) != 0 || !smb_acl_check(sd, &t, SMB_MAXIMUM_ALLOWED, pg, &m))
		m = 0;
	free(sd);
	return m & ~SMB_ACCESS_SYSTEM_SECURITY;
}

uint32_t smb_acl_query(struct smb_open *o, uint32_t additional, struct ut_buf *b)
{
	struct smb_sd *sd = malloc(sizeof(*sd));
	uint32_t st = STATUS_INTERNAL_ERROR;

	if (!sd)
		return STATUS_NO_MEMORY;
	vol_refresh(&o->obj);
	if (!smb_acl_ntfs(o->tree))
		smb_sd_from_unix(o->obj.st.st_uid, o->obj.st.st_gid, o->obj.st.st_mode & 0777u, o->dir, sd);
	else if (smb_acl_load(&o->obj, sd) != 0)
		goto out;
	st = smb_sd_encode(b, sd, additional) == AQ_OK ? STATUS_SUCCESS : STATUS_INTERNAL_ERROR;
out:
	free(sd);
	return st;
}

uint32_t smb_acl_set(struct smb_req *r, struct smb_open *o, const struct smb_wire_set_info_req *q)
{
	const struct vol_cred *cred = &r->sess->cred;
	/* stable on FLUSH, as the share's other changes (smb_tree_cred) */
	struct vol_cred tc = smb_tree_cred(r->tree, cred, o->write_through);
	struct smb_acl_token t;
	struct smb_sd *in = NULL, *cur = NULL;
	uint32_t what = q->additional, st;

	if (((what & (SMB_SD_OWNER | SMB_SD_GROUP)) && !smb_open_may(o, SMB_WRITE_OWNER)) ||
	    ((what & SMB_SD_DACL) && !smb_open_may(o, SMB_WRITE_DAC)) ||
	    ((what & SMB_SD_SACL) && !smb_open_may(o, SMB_ACCESS_SYSTEM_SECURITY)))
		return STATUS_ACCESS_DENIED;
	st = STATUS_NO_MEMORY;
	if (!(in = malloc(sizeof(*in))) || !(cur = malloc(sizeof(*cur))))
		goto out;
	st = STATUS_INVALID_PARAMETER;
	if (q->data_len == 0 || q->data_len > SMB_SD_MAX || smb_sd_decode(q->data, q->data_len, in) != AQ_OK)
		goto out;
	st = STATUS_INTERNAL_ERROR;
	vol_refresh(&o->obj);
	if (smb_acl_load(&o->obj, cur) != 0)
		goto out;
	smb_acl_token_of(cred, &t);
	st = STATUS_INVALID_OWNER;
	if ((what & SMB_SD_OWNER) && in->has_owner && !t.root && !smb_sd_sid_eq(&in->owner, &t.sid[0]))
		goto out;
	st = STATUS_INVALID_PRIMARY_GROUP;
	/* a Unix group: one the user is in (as a UNIX-style share) */
	if ((what & SMB_SD_GROUP) && in->has_group && !t.root && in->group.authority == 22 && in->group.count == 2 &&
	    !smb_acl_token_has(&t, &in->group))
		goto out;
	smb_acl_merge(cur, in, what);
	st = o->obj.snap ? STATUS_MEDIA_WRITE_PROTECTED : smb_acl_store(&o->obj, cur, &tc);
out:
	free(in);
	free(cur);
	return st;
}
