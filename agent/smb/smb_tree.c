/* smb_tree: TREE_CONNECT / TREE_DISCONNECT (a share is a volume of the
 * session's project; IPC$ is answered so that clients that open it first
 * go on) and IOCTL (VALIDATE_NEGOTIATE_INFO, SRV_ENUMERATE_SNAPSHOTS in
 * smb_prev.c, SRV_REQUEST_RESUME_KEY and SRV_COPYCHUNK(_WRITE) in
 * smb_copy.c, GET/SET_COMPRESSION answered as uncompressed,
 * CREATE_OR_GET_OBJECT_ID / GET_OBJECT_ID from the inode and the volume's
 * fsid; the rest is refused).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

#define SMB_TREE_MAX_PER_SESS 256u
#define SMB_TREE_FULL_ACCESS 0x001F01FFu

void smb_tree_free(struct smb_sess *s, struct smb_tree *t)
{
	struct smb_tree **pp;
	struct smb_open *o, *n;

	/* locks first, so a request waiting only on this tree's is granted */
	for (o = s->opens; o; o = o->next)
		if (o->tree == t)
			smb_lock_open_gone(o);
	for (o = s->opens; o; o = n) {
		n = o->next;
		if (o->tree == t)
			smb_open_free(s, o, true);
	}
	for (pp = &s->trees; *pp && *pp != t; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = t->next;
	if (t->exp)
		vol_export_unref(t->exp);
	free(t);
}

uint32_t smb_tree_connect(struct smb_req *r)
{
	struct smb_wire_tree_connect_req q;
	struct smb_wire_tree_connect_rsp rsp = { .share_type = SMB2_SHARE_TYPE_DISK,
						 .maximal_access = SMB_TREE_FULL_ACCESS };
	struct smb_tree *t = NULL, *x;
	char path[SMB_WIRE_NAME_MAX];
	const char *share;
	size_t count = 0;

	if (smb_wire_tree_connect_req_decode(&r->m, &q) != AQ_OK ||
	    smb_wire_utf16_to_utf8(q.path, q.path_len, path, sizeof(path), NULL) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	/* "\\server\share": the part after the last backslash */
	share = strrchr(path, '\\');
	share = share ? share + 1 : path;
	for (x = r->sess->trees; x; x = x->next)
		count++;
	if (count >= SMB_TREE_MAX_PER_SESS || !(t = calloc(1, sizeof(*t))))
		return STATUS_NO_MEMORY;
	if (strcasecmp(share, "IPC$") == 0) {
		t->ipc = true;
		rsp.share_type = SMB2_SHARE_TYPE_PIPE;
		rsp.maximal_access = 0x001F00A9u;
	} else if (!smb_srv_share(r->c->srv, share, &t->share) ||
		   strcmp(t->share.project, r->sess->user.project) != 0) {
		/* another project's share is as absent as a share that is not */
		UT_INFO("smb_srv", NULL, "%s: %s/%s: no share \"%s\"", r->c->peer, r->sess->user.project,
			r->sess->user.name, share);
		free(t);
		return STATUS_BAD_NETWORK_NAME;
	} else if (!(t->exp = vol_export_by_path(r->c->srv->store, t->share.path, strlen(t->share.path)))) {
		free(t);
		return STATUS_BAD_NETWORK_NAME;
	} else if (t->share.smb_settings & API_INTENT_SMB_ENCRYPT_DATA) {
		if (r->c->cipher == SMB_WIRE_NONE) {
			vol_export_unref(t->exp);
			free(t);
			return STATUS_ACCESS_DENIED; /* the client cannot encrypt */
		}
		t->encrypt = true;
		rsp.share_flags |= SMB2_SHAREFLAG_ENCRYPT_DATA;
	}
	t->id = ++r->sess->next_tree;
	t->next = r->sess->trees;
	r->sess->trees = t;
	r->tree = t;
	r->rsp_tree = t->id;
	smb_wire_tree_connect_rsp_encode(r->out, &rsp);
	return STATUS_SUCCESS;
}

struct vol_cred smb_tree_cred(const struct smb_tree *t, const struct vol_cred *user, bool write_through)
{
	struct vol_cred c = *user;

	if (t && !write_through && !(t->share.smb_settings & API_INTENT_SMB_CONTINUOUSLY_AVAILABLE))
		c.flags |= VOL_CRED_DEFER_SYNC;
	return c;
}

uint32_t smb_tree_disconnect(struct smb_req *r)
{
	if (smb_wire_empty_req_decode(&r->m) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	smb_tree_free(r->sess, r->tree);
	r->tree = NULL;
	smb_wire_empty_rsp_encode(r->out);
	return STATUS_SUCCESS;
}

/* FSCTL_VALIDATE_NEGOTIATE_INFO: what the client says it sent must be
 * what this connection saw (MS-SMB2 3.3.5.15.12); a mismatch ends the
 * connection. */
static uint32_t smb_tree_validate(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_wire_validate_negotiate v;
	struct ut_buf o = { 0 };
	const struct smb_conn *c = r->c;
	uint32_t status = STATUS_INVALID_PARAMETER;

	if (smb_wire_validate_negotiate_decode(q->input, q->input_len, &v) != AQ_OK ||
	    v.capabilities != c->client_caps || memcmp(v.guid, c->client_guid, 16) != 0 ||
	    v.security_mode != c->client_secmode) {
		r->c->closing = true;
		return STATUS_ACCESS_DENIED;
	}
	ut_buf_init(&o, 64);
	smb_wire_validate_negotiate_encode(&o, c->server_caps, c->srv->guid,
					   SMB2_NEGOTIATE_SIGNING_ENABLED | SMB2_NEGOTIATE_SIGNING_REQUIRED, c->dialect);
	if (o.err == AQ_OK) {
		smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, ut_buf_bytes(&o), o.len);
		status = STATUS_SUCCESS;
	}
	ut_buf_cleanup(&o);
	return status;
}

/* FSCTL_GET_COMPRESSION / FSCTL_SET_COMPRESSION (MS-FSCC 2.3.20, 2.3.67):
 * no file is ever compressed (the share does not claim
 * FILE_FILE_COMPRESSION): GET answers COMPRESSION_FORMAT_NONE, SET
 * accepts only NONE and refuses any format with NOT_SUPPORTED. */
static uint32_t smb_tree_compression(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	static const uint8_t none[2] = { 0, 0 };

	if (q->ctl_code == FSCTL_GET_COMPRESSION) {
		if (q->max_output_response < sizeof(none))
			return STATUS_INVALID_PARAMETER;
		smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, none, sizeof(none));
		return STATUS_SUCCESS;
	}
	if (q->input_len < 2)
		return STATUS_INVALID_PARAMETER;
	if (smb_wire_get_u16(q->input) != 0)
		return STATUS_NOT_SUPPORTED;
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, NULL, 0);
	return STATUS_SUCCESS;
}

/* FSCTL_CREATE_OR_GET_OBJECT_ID / FSCTL_GET_OBJECT_ID (MS-FSCC 2.3.6,
 * 2.3.26; MS-FSA 2.1.5.10.1): every file and folder has one, made of what
 * already names it uniquely on the volume and for its life (the inode
 * and the volume's fsid, as QFid answers), so nothing is stored and a
 * rename keeps it: ObjectId and BirthObjectId that pair, BirthVolumeId the
 * fsid, DomainId zero (FILE_OBJECTID_BUFFER, 64 bytes). FILE_ANY_ACCESS:
 * any open may ask. Room for less than the buffer: INVALID_PARAMETER. */
static uint32_t smb_tree_object_id(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	const struct smb_open *o = smb_open_find(r, &q->fid);
	uint64_t ino, fsid;
	uint8_t b[64] = { 0 };

	if (!o)
		return STATUS_FILE_CLOSED;
	if (q->max_output_response < sizeof(b))
		return STATUS_INVALID_PARAMETER;
	ino = (uint64_t)o->obj.st.st_ino;
	fsid = vol_export_fsid(o->obj.exp);
	for (int i = 0; i < 8; i++) {
		b[i] = b[32 + i] = (uint8_t)(ino >> (8 * i));                  /* ObjectId, BirthObjectId */
		b[8 + i] = b[40 + i] = b[16 + i] = (uint8_t)(fsid >> (8 * i)); /* theirs, BirthVolumeId */
	}
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, b, sizeof(b));
	return STATUS_SUCCESS;
}

/* The FSCTLs served on a disk share, each on an open (checked first).
 * FSCTL_DUPLICATE_EXTENTS_TO_FILE(_EX) (block cloning, MS-FSCC 2.3.8) is
 * served where the volume's folder clones (btrfs, XFS with reflink:
 * smb_clone.c), and only there is FILE_SUPPORTS_BLOCK_REFCOUNTING
 * announced; elsewhere (ext4, tmpfs) it answers INVALID_DEVICE_REQUEST,
 * what Windows answers on a file system without block cloning and smbd
 * (vfs_default) on the same ext4 shelf. */
static const struct {
	uint32_t code;
	uint32_t (*fn)(struct smb_req *r, const struct smb_wire_ioctl_req *q);
} smb_tree_fsctls[] = {
	{ FSCTL_SRV_ENUMERATE_SNAPSHOTS, smb_prev_enumerate },
	{ FSCTL_SRV_REQUEST_RESUME_KEY, smb_copy_resume_key },
	{ FSCTL_SRV_COPYCHUNK, smb_copy_chunk },
	{ FSCTL_SRV_COPYCHUNK_WRITE, smb_copy_chunk },
	{ FSCTL_GET_COMPRESSION, smb_tree_compression },
	{ FSCTL_SET_COMPRESSION, smb_tree_compression },
	{ FSCTL_SET_SPARSE, smb_sparse_set },
	{ FSCTL_SET_ZERO_DATA, smb_sparse_zero },
	{ FSCTL_QUERY_ALLOCATED_RANGES, smb_sparse_ranges },
	{ FSCTL_CREATE_OR_GET_OBJECT_ID, smb_tree_object_id },
	{ FSCTL_GET_OBJECT_ID, smb_tree_object_id },
	{ FSCTL_DUPLICATE_EXTENTS_TO_FILE, smb_clone_dup },
	{ FSCTL_DUPLICATE_EXTENTS_TO_FILE_EX, smb_clone_dup },
};

uint32_t smb_tree_ioctl(struct smb_req *r)
{
	struct smb_wire_ioctl_req q;

	if (smb_wire_ioctl_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (q.ctl_code == FSCTL_VALIDATE_NEGOTIATE_INFO)
		return smb_tree_validate(r, &q);
	if (r->tree->ipc)
		return STATUS_NOT_SUPPORTED; /* no named pipes */
	/* QUERY_NETWORK_INTERFACE_INFO names the server, not a file (FileId all
	 * ones): the multichannel addresses (smb_iface.c) */
	if (q.ctl_code == FSCTL_QUERY_NETWORK_INTERFACE_INFO)
		return smb_iface_query(r, &q);
	/* an FSCTL on a file needs its open first (a closed one is FILE_CLOSED
	 * whatever the code) */
	if (!smb_open_find(r, &q.fid))
		return STATUS_FILE_CLOSED;
	for (size_t i = 0; i < sizeof(smb_tree_fsctls) / sizeof(smb_tree_fsctls[0]); i++)
		if (smb_tree_fsctls[i].code == q.ctl_code)
			return smb_tree_fsctls[i].fn(r, &q);
	return STATUS_INVALID_DEVICE_REQUEST;
}
