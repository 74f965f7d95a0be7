/* smb_tree: TREE_CONNECT / TREE_DISCONNECT (a share is a volume of the
 * session's project; IPC$ is answered so that clients that open it first
 * go on) and IOCTL (VALIDATE_NEGOTIATE_INFO, SRV_ENUMERATE_SNAPSHOTS in
 * smb_prev.c, SRV_REQUEST_RESUME_KEY and SRV_COPYCHUNK(_WRITE) in
 * smb_copy.c; the rest is refused).
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

uint32_t smb_tree_disconnect(struct smb_req *r)
{
	if (smb_wire_empty_req_decode(&r->m) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	smb_tree_free(r->sess, r->tree);
	r->tree = NULL;
	smb_wire_empty_rsp_encode(r->out);
	return STATUS_SUCCESS;
}

uint32_t smb_tree_ioctl(struct smb_req *r)
{
	struct smb_wire_ioctl_req q;
	struct smb_wire_validate_negotiate v;
	struct ut_buf o = { 0 };
	const struct smb_conn *c = r->c;
	uint32_t status = STATUS_INVALID_PARAMETER;

	if (smb_wire_ioctl_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (q.ctl_code == FSCTL_SRV_ENUMERATE_SNAPSHOTS && !r->tree->ipc)
		return smb_prev_enumerate(r, &q);
	if (q.ctl_code == FSCTL_SRV_REQUEST_RESUME_KEY && !r->tree->ipc)
		return smb_copy_resume_key(r, &q);
	if ((q.ctl_code == FSCTL_SRV_COPYCHUNK || q.ctl_code == FSCTL_SRV_COPYCHUNK_WRITE) && !r->tree->ipc)
		return smb_copy_chunk(r, &q);
	if (q.ctl_code != FSCTL_VALIDATE_NEGOTIATE_INFO)
		return r->tree->ipc ? STATUS_NOT_SUPPORTED : STATUS_INVALID_DEVICE_REQUEST;
	/* what the client says it sent must be what this connection saw
	 * (MS-SMB2 3.3.5.15.12); a mismatch ends the connection */
	if (smb_wire_validate_negotiate_decode(q.input, q.input_len, &v) != AQ_OK ||
	    v.capabilities != c->client_caps || memcmp(v.guid, c->client_guid, 16) != 0 ||
	    v.security_mode != c->client_secmode) {
		r->c->closing = true;
		return STATUS_ACCESS_DENIED;
	}
	ut_buf_init(&o, 64);
	smb_wire_validate_negotiate_encode(&o, c->server_caps, c->srv->guid,
					   SMB2_NEGOTIATE_SIGNING_ENABLED | SMB2_NEGOTIATE_SIGNING_REQUIRED, c->dialect);
	if (o.err == AQ_OK) {
		smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q.ctl_code, &q.fid, ut_buf_bytes(&o), o.len);
		status = STATUS_SUCCESS;
	}
	ut_buf_cleanup(&o);
	return status;
}
