/* smb_info_name: the SET_INFO classes that give a file a name, the rename
 * (FileRenameInformation, MS-FSA 2.1.5.14.11) and the hard link
 * (FileLinkInformation, MS-FSA 2.1.5.14.6), over one reading of the target:
 * FILE_*_INFORMATION_TYPE_2 decoded (smb_wire_name_info_decode, bounded),
 * the name checked as a CREATE's (smb_open_path), its folder walked from
 * the share root with the caller's rights. The link is the store's
 * (vol_link): it charges a name on the volume's capacity, notes
 * FILE_ACTION_ADDED to the watches and answers EROFS in a snapshot.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

/* The target of a rename or link: parsed (pure), then walked. */
struct smb_info_target {
	bool replace;
	struct vol_obj dir; /* the target's folder, once walked */
	char path[SMB_WIRE_NAME_MAX], leaf[VOL_NAME_MAX + 1];
};

static uint32_t smb_info_target_parse(const uint8_t *d, size_t len, struct smb_info_target *t)
{
	struct smb_wire_name_info ni;

	if (smb_wire_name_info_decode(d, len, &ni) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (smb_open_path(ni.name, ni.name_len, t->path, sizeof(t->path)) != 0 || !t->path[0])
		return STATUS_OBJECT_NAME_INVALID;
	t->replace = ni.replace;
	return STATUS_SUCCESS;
}

static uint32_t smb_info_target_walk(struct smb_req *r, struct smb_info_target *t)
{
	int rc = smb_open_walk(r->tree, &r->sess->cred, t->path, NULL, &t->dir, t->leaf, sizeof(t->leaf));

	if (rc != 0)
		return rc == -ENOTDIR ? STATUS_OBJECT_PATH_NOT_FOUND : smb_status_from_errno(rc);
	return STATUS_SUCCESS;
}

/* Whether an open on the server (a kept durable open too) on o's volume has
 * path exactly (below false) or something under folder path (below true). */
static bool smb_info_path_open(const struct smb_srv *srv, const struct vol_export *exp, const char *path, bool below)
{
	size_t n = strlen(path);
	const struct smb_open *x;

#define SMB_INFO_HIT(x)                                                                                       \
	((x)->obj.exp == exp && !strncmp((x)->path, path, n) && (below ? (x)->path[n] == '/' : !(x)->path[n]))
	for (x = srv->durable; x; x = x->next)
		if (SMB_INFO_HIT(x))
			return true;
	for (const struct smb_conn *c = srv->conns; c; c = c->next)
		for (const struct smb_sess *s = c->sessions; s; s = s->next)
			for (x = s->opens; x; x = x->next)
				if (SMB_INFO_HIT(x))
					return true;
#undef SMB_INFO_HIT
	return false;
}

/* A folder with something open below it: Windows and smbd refuse its
 * rename with ACCESS_DENIED (smbtorture smb2.rename.rename_dir_openfile),
 * which also keeps the opens' paths true. */
uint32_t smb_info_rename(struct smb_req *r, struct smb_open *o, const uint8_t *d, size_t len)
{
	struct smb_info_target t;
	struct vol_obj existing;
	struct vol_lease_by by;
	struct vol_cred tc;
	uint32_t st;
	int rc;

	if (o->parent.fd < 0) /* the share root */
		return STATUS_INVALID_PARAMETER;
	if ((st = smb_info_target_parse(d, len, &t)) != STATUS_SUCCESS)
		return st;
	if (o->dir && smb_info_path_open(r->c->srv, o->obj.exp, o->path, true))
		return STATUS_ACCESS_DENIED;
	if ((st = smb_info_target_walk(r, &t)) != STATUS_SUCCESS)
		return st;
	if (!t.replace && vol_lookup(&t.dir, &r->sess->cred, t.leaf, strlen(t.leaf), &existing) == 0) {
		vol_obj_cleanup(&existing);
		st = STATUS_OBJECT_NAME_COLLISION;
		goto out;
	}
	/* the target folder open with DELETE access elsewhere: a sharing
	 * violation; then other clients caching the file's handle give it back
	 * (the SET_INFO may wait, and is served again: smb_lease.c) */
	if (smb_open_dir_delete_held(r->c->srv, &t.dir)) {
		st = STATUS_SHARING_VIOLATION;
		goto out;
	}
	if ((st = smb_lease_rename(r, o)) != STATUS_SUCCESS)
		goto out;
	smb_lease_by(o, &by);
	tc = smb_tree_cred(r->tree, &r->sess->cred, o->write_through);
	rc = vol_rename_by(&o->parent, o->name, strlen(o->name), &t.dir, t.leaf, strlen(t.leaf), &tc, &by);
	if (rc != 0) {
		st = smb_status_from_errno(rc);
		goto out;
	}
	vol_obj_cleanup(&o->parent);
	o->parent = t.dir;
	t.dir = (struct vol_obj){ .fd = -1 }; /* now the open's */
	snprintf(o->name, sizeof(o->name), "%s", t.leaf);
	snprintf(o->path, sizeof(o->path), "%s", t.path);
out:
	vol_obj_cleanup(&t.dir);
	return st;
}

/* MS-FSA 2.1.5.14.6: a folder is not linked (FILE_IS_A_DIRECTORY); an
 * existing target is a collision unless ReplaceIfExists, and then it is
 * replaced in one step (vol_link_replace) unless it is a folder or open
 * (ACCESS_DENIED, as Windows);
 * the target names o's own volume (NOT_SAME_DEVICE otherwise: a compound
 * may name another share's tree). The caller's write on the target folder
 * is the store's check (vol_link, vol_link_replace run as the caller). */
uint32_t smb_info_link(struct smb_req *r, struct smb_open *o, const uint8_t *d, size_t len)
{
	struct smb_info_target t;
	struct vol_obj existing;
	struct vol_cred tc = smb_tree_cred(r->tree, &r->sess->cred, o->write_through);
	uint32_t st;
	int rc;

	if (o->dir)
		return STATUS_FILE_IS_A_DIRECTORY;
	if ((st = smb_info_target_parse(d, len, &t)) != STATUS_SUCCESS)
		return st;
	if ((st = smb_info_target_walk(r, &t)) != STATUS_SUCCESS)
		return st;
	if (t.dir.exp != o->obj.exp) {
		st = STATUS_NOT_SAME_DEVICE;
		goto out;
	}
	if (vol_lookup(&t.dir, &r->sess->cred, t.leaf, strlen(t.leaf), &existing) == 0) {
		bool folder = S_ISDIR(existing.st.st_mode);

		vol_obj_cleanup(&existing);
		if (!t.replace) {
			st = STATUS_OBJECT_NAME_COLLISION;
			goto out;
		}
		if (folder || smb_info_path_open(r->c->srv, o->obj.exp, t.path, false)) {
			st = STATUS_ACCESS_DENIED;
			goto out;
		}
		/* one step: the name is the old file or the new, never missing */
		rc = vol_link_replace(&o->obj, &t.dir, t.leaf, strlen(t.leaf), &tc, NULL);
	} else {
		rc = vol_link(&o->obj, &t.dir, t.leaf, strlen(t.leaf), &tc);
	}
	if (rc != 0)
		st = smb_status_from_errno(rc);
out:
	vol_obj_cleanup(&t.dir);
	return st;
}
