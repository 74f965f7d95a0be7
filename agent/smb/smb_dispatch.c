/* smb_dispatch: one frame through the server: decryption of a transform,
 * then (smb_frame.c: the compound split, the answers signed, linked,
 * encrypted when the request was and queued) per message the session,
 * signature, encryption and tree checks run once before the command
 * table's handler, the credits and the answer's header. Also the errno ->
 * NTSTATUS table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

/* What a command needs before its handler runs. */
enum {
	SMB_F_SESS = 1 << 0,  /* a valid session */
	SMB_F_TREE = 1 << 1,  /* a tree of that session */
};

static uint32_t smb_echo(struct smb_req *r)
{
	if (smb_wire_empty_req_decode(&r->m) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	smb_wire_empty_rsp_encode(r->out);
	return STATUS_SUCCESS;
}

static const struct {
	smb_handler_fn fn;
	unsigned flags;
} smb_cmds[SMB2_CMD_COUNT] = {
	[SMB2_NEGOTIATE] = { .fn = smb_sess_negotiate },
	[SMB2_SESSION_SETUP] = { .fn = smb_sess_setup },
	[SMB2_LOGOFF] = { .fn = smb_sess_logoff, .flags = SMB_F_SESS },
	[SMB2_TREE_CONNECT] = { .fn = smb_tree_connect, .flags = SMB_F_SESS },
	[SMB2_TREE_DISCONNECT] = { .fn = smb_tree_disconnect, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_CREATE] = { .fn = smb_open_create, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_CLOSE] = { .fn = smb_open_close, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_FLUSH] = { .fn = smb_open_flush, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_OPLOCK_BREAK] = { .fn = smb_lease_ack, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_READ] = { .fn = smb_open_read, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_WRITE] = { .fn = smb_open_write, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_LOCK] = { .fn = smb_lock_lock, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_IOCTL] = { .fn = smb_tree_ioctl, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_ECHO] = { .fn = smb_echo },
	[SMB2_QUERY_DIRECTORY] = { .fn = smb_info_query_dir, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_CHANGE_NOTIFY] = { .fn = smb_notify_change, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_QUERY_INFO] = { .fn = smb_info_query, .flags = SMB_F_SESS | SMB_F_TREE },
	[SMB2_SET_INFO] = { .fn = smb_info_set, .flags = SMB_F_SESS | SMB_F_TREE },
};

static const struct {
	int err;
	uint32_t status;
} smb_errno_table[] = {
	{ ENOENT, STATUS_OBJECT_NAME_NOT_FOUND },
	{ EEXIST, STATUS_OBJECT_NAME_COLLISION },
	{ ENOTDIR, STATUS_NOT_A_DIRECTORY },
	{ EISDIR, STATUS_FILE_IS_A_DIRECTORY },
	{ ENOTEMPTY, STATUS_DIRECTORY_NOT_EMPTY },
	{ EACCES, STATUS_ACCESS_DENIED },
	{ EPERM, STATUS_ACCESS_DENIED },
	{ EROFS, STATUS_MEDIA_WRITE_PROTECTED },
	{ EDQUOT, STATUS_DISK_FULL },
	{ ENOSPC, STATUS_DISK_FULL },
	{ EFBIG, STATUS_DISK_FULL },
	{ ENAMETOOLONG, STATUS_OBJECT_NAME_INVALID },
	{ EXDEV, STATUS_NOT_SAME_DEVICE },
	{ ESTALE, STATUS_FILE_CLOSED },
	{ -VOL_EBADHANDLE, STATUS_FILE_CLOSED },
	{ EINVAL, STATUS_INVALID_PARAMETER },
	{ ENOTSUP, STATUS_NOT_SUPPORTED },
	{ ELOOP, STATUS_OBJECT_NAME_INVALID },
	{ EIO, STATUS_UNEXPECTED_IO_ERROR },
	{ ENOMEM, STATUS_NO_MEMORY },
};

uint32_t smb_status_from_errno(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(smb_errno_table) / sizeof(smb_errno_table[0]); i++)
		if (smb_errno_table[i].err == err)
			return smb_errno_table[i].status;
	return STATUS_INTERNAL_ERROR;
}

struct smb_sess *smb_sess_find(struct smb_conn *c, uint64_t id)
{
	struct smb_sess *s;

	for (s = c->sessions; s && s->id != id; s = s->next)
		;
	if (!s) /* a session set up elsewhere, bound here */
		for (const struct smb_chan *ch = c->chans; ch && !s; ch = ch->cnext)
			if (ch->bound && ch->sess->id == id)
				s = ch->sess;
	return s;
}

struct smb_tree *smb_tree_find(struct smb_sess *s, uint32_t id)
{
	struct smb_tree *t;

	for (t = s ? s->trees : NULL; t && t->id != id; t = t->next)
		;
	return t;
}

struct smb_open *smb_open_find(struct smb_req *r, const struct smb_wire_fid *fid)
{
	struct smb_wire_fid f = *fid;
	struct smb_open *o;

	if (f.persistent == SMB_WIRE_FID_RELATED && f.volatile_ == SMB_WIRE_FID_RELATED && r->chained && r->related)
		f = *r->related; /* none yet: FileId 0, which no open has */
	for (o = r->sess ? r->sess->opens : NULL; o; o = o->next)
		if (o->id == f.persistent && o->id == f.volatile_ && o->tree == r->tree) {
			/* the chain's FileId is the one the previous operation
			 * used, not only a CREATE's (3.3.5.2.7.2): FLUSH then a
			 * related CLOSE (smbtorture smb2.compound_async) */
			if (r->related)
				*r->related = f;
			return o;
		}
	return NULL;
}

uint16_t smb_dispatch_sign_alg(const struct smb_conn *c)
{
	if (c->dialect < SMB2_DIALECT_300)
		return SMB2_SIGNING_HMAC_SHA256;
	return c->signing == SMB_WIRE_NONE ? SMB2_SIGNING_AES_CMAC : c->signing;
}

/* The session, tree and signature checks; STATUS_SUCCESS to go on. */
static uint32_t smb_check(struct smb_req *r, unsigned flags)
{
	const struct smb_wire_hdr *h = &r->m.hdr;
	bool related = r->chained;

	if (!(flags & SMB_F_SESS) && h->command != SMB2_SESSION_SETUP)
		return STATUS_SUCCESS;
	/* a related request is on the previous request's session, whatever
	 * its header says; none (the first request, or the previous one's
	 * session not found) is INVALID_PARAMETER (3.3.5.2.7.2, Samba) */
	if (!related)
		r->sess = smb_sess_find(r->c, h->session_id);
	if (h->command == SMB2_SESSION_SETUP)
		return STATUS_SUCCESS; /* its handler knows new, pending and bound sessions */
	if (related && !r->sess)
		return STATUS_INVALID_PARAMETER;
	if (!r->sess || r->sess->state != SMB_SESS_VALID || r->sess->logged_off)
		return STATUS_USER_SESSION_DELETED;
	r->rsp_session = r->sess->id;
	if (!r->encrypted) {
		if (!(h->flags & SMB2_FLAGS_SIGNED))
			return STATUS_ACCESS_DENIED; /* signing is required */
		uint16_t alg;
		struct smb_crypto_ctx *cx;
		const uint8_t *key = smb_sess_signing_key(r->sess, r->c, &alg, &cx);

		if (smb_crypto_ctx_verify(cx, alg, key, r->m.p, r->m.len) != AQ_OK)
			return STATUS_ACCESS_DENIED;
	}
	if (r->sess->encrypt && !r->encrypted)
		return STATUS_ACCESS_DENIED;
	if (!(flags & SMB_F_TREE))
		return STATUS_SUCCESS;
	if (!related || !r->tree)
		r->tree = smb_tree_find(r->sess, h->tree_id);
	if (!r->tree)
		return STATUS_NETWORK_NAME_DELETED;
	r->rsp_tree = r->tree->id;
	if (r->tree->encrypt && !r->encrypted)
		return STATUS_ACCESS_DENIED;
	return STATUS_SUCCESS;
}

uint16_t smb_dispatch_credits(struct smb_conn *c, uint16_t charge, uint16_t asked)
{
	uint16_t grant = asked ? asked : 1;

	if (!charge)
		charge = 1;
	/* what the client asks, within what it may hold */
	c->credits = c->credits > charge ? c->credits - charge : 0;
	if (grant > SMB_SRV_CREDITS_MAX - c->credits)
		grant = (uint16_t)(SMB_SRV_CREDITS_MAX - c->credits);
	if (grant == 0 && c->credits == 0)
		grant = 1;
	c->credits += grant;
	return grant;
}

void smb_dispatch_msg_end(struct smb_req *r, uint32_t status, size_t body_at)
{
	const struct smb_wire_hdr *h = &r->m.hdr;
	struct smb_wire_hdr rh = { 0 };
	struct ut_buf hb;
	uint16_t grant;

	if (status == STATUS_FILE_CLOSED && r->chained && r->chain_err)
		status = r->chain_err; /* the chain's open is the CREATE that failed */
	r->status = status;
	/* errors carry the ERROR body; so do warnings (NO_MORE_FILES) that
	 * wrote none, while MORE_PROCESSING_REQUIRED, BUFFER_OVERFLOW and an
	 * error whose handler asks it (SRV_COPYCHUNK's counts) keep theirs */
	if ((((status & 0xC0000000u) == 0xC0000000u && status != STATUS_MORE_PROCESSING_REQUIRED && !r->keep_body) ||
	     (status != STATUS_SUCCESS && r->out->len == body_at))) {
		r->out->len = body_at;
		r->out->err = r->out->err == AQ_ETOOBIG ? AQ_OK : r->out->err;
		smb_wire_error_rsp_encode(r->out);
	}
	if (r->deferred) { /* a worker's READ: its answer (and credits) come when it ends (smb_read.c) */
		r->out->len = r->hdr_off;
		return;
	}
	/* a final answer after an interim: its credits went with the interim */
	grant = r->async_final ? 0 : smb_dispatch_credits(r->c, h->credit_charge, h->credits);
	rh.credit_charge = h->credit_charge;
	rh.status = status;
	rh.command = h->command;
	rh.credits = grant;
	rh.flags = SMB2_FLAGS_SERVER_TO_REDIR | (h->flags & SMB2_FLAGS_RELATED_OPERATIONS);
	rh.message_id = h->message_id;
	rh.tree_id = r->rsp_tree;
	if (status == STATUS_PENDING && r->async_id) { /* the interim response (3.3.4.2) */
		rh.flags |= SMB2_FLAGS_ASYNC_COMMAND;
		rh.async_id = r->async_id;
	} else if (r->async_final) {
		rh.flags |= SMB2_FLAGS_ASYNC_COMMAND;
		rh.async_id = r->async_final;
	}
	rh.session_id = r->rsp_session;
	ut_buf_init(&hb, SMB2_HDR_LEN);
	smb_wire_hdr_encode(&hb, &rh);
	if (hb.err == AQ_OK && r->out->len >= r->hdr_off + SMB2_HDR_LEN)
		memcpy(ut_buf_bytes(r->out) + r->hdr_off, ut_buf_bytes(&hb), SMB2_HDR_LEN);
	ut_buf_cleanup(&hb);
	/* 3.1.1: the preauth hash takes in each NEGOTIATE and SESSION_SETUP
	 * response but the final one (whose signature it keys) */
	if (r->c->dialect == SMB2_DIALECT_311 && r->out->err == AQ_OK) {
		if (h->command == SMB2_NEGOTIATE && status == STATUS_SUCCESS)
			smb_crypto_preauth_update(r->c->preauth, ut_buf_bytes(r->out) + r->hdr_off, r->out->len - r->hdr_off);
		else if (h->command == SMB2_SESSION_SETUP && status == STATUS_MORE_PROCESSING_REQUIRED && r->sess &&
			 !r->bind_chan) /* a binding's: once signed (smb_dispatch_frame) */
			smb_crypto_preauth_update(r->sess->preauth, ut_buf_bytes(r->out) + r->hdr_off, r->out->len - r->hdr_off);
	}
}

void smb_dispatch_msg(struct smb_req *r)
{
	const struct smb_wire_hdr *h = &r->m.hdr;
	uint32_t status;
	size_t body_at;

	r->hdr_off = r->out->len;
	r->rsp_session = h->session_id;
	r->rsp_tree = h->tree_id;
	ut_buf_put_zero(r->out, SMB2_HDR_LEN);
	body_at = r->out->len;
	if (h->command >= SMB2_CMD_COUNT || !smb_cmds[h->command].fn)
		status = STATUS_INVALID_PARAMETER; /* not a command (3.3.5.2.6) */
	else if (h->command != SMB2_NEGOTIATE && !r->c->negotiated)
		status = STATUS_INVALID_PARAMETER;
	else if ((status = smb_check(r, smb_cmds[h->command].flags)) == STATUS_SUCCESS)
		status = smb_cmds[h->command].fn(r);
	smb_dispatch_msg_end(r, status, body_at);
}

void smb_dispatch_sign(struct smb_conn *c, struct smb_sess *s, struct ut_buf *out, size_t off, size_t end)
{
	uint8_t sig[SMB_CRYPTO_SIG_LEN];
	uint32_t flags = smb_wire_get_u32(ut_buf_bytes(out) + off + 16) | SMB2_FLAGS_SIGNED;

	ut_buf_set_le32(out, off + 16, flags);
	memset(ut_buf_bytes(out) + off + SMB2_SIG_OFF, 0, SMB_CRYPTO_SIG_LEN);
	uint16_t alg;
	struct smb_crypto_ctx *cx;
	/* c's channel key by c's algorithm; elsewhere (a bind refused or under
	 * way) the session's key by its algorithm */
	const uint8_t *key = smb_sess_signing_key(s, c, &alg, &cx);

	if (smb_crypto_ctx_sign(cx, alg, key, ut_buf_bytes(out) + off, end - off, sig) == AQ_OK)
		memcpy(ut_buf_bytes(out) + off + SMB2_SIG_OFF, sig, SMB_CRYPTO_SIG_LEN);
}

void smb_dispatch_send_encrypted(struct smb_conn *c, struct smb_sess *s, const struct ut_buf *out)
{
	struct smb_wire_transform t = { .orig_size = (uint32_t)out->len, .flags = SMB2_TRANSFORM_FLAG_ENCRYPTED,
					.session_id = s->id };
	struct ut_buf *fb = &c->seal;

	/* the connection's kept room (smb_conn_send_buf may take it into the
	 * queue: the next reply then starts a new one) */
	for (unsigned i = 0; !fb->p && i < SMB_SRV_SEAL_SPARES; i++)
		if (c->seal_spare[i].p) { /* a sent one's room (conn_seg_free) */
			*fb = c->seal_spare[i];
			c->seal_spare[i] = (struct ut_buf){ 0 };
		}
	if (fb->p)
		ut_buf_reset(fb);
	else
		ut_buf_init(fb, SMB_SRV_SEAL_MAX);
	smb_crypto_nonce(c->cipher, ++s->nonce_ctr, s->nonce_fixed, t.nonce);
	smb_wire_transform_encode(fb, &t);
	ut_buf_put_room(fb, out->len);
	if (fb->err != AQ_OK ||
	    smb_crypto_ctx_encrypt(&s->cx, c->cipher, s->keys.enc, ut_buf_bytes(fb), ut_buf_bytes(out), out->len,
				   ut_buf_bytes(fb) + SMB2_TRANSFORM_LEN) != AQ_OK)
		c->closing = true;
	else
		smb_conn_send_buf(c, fb);
	if (fb->p)
		ut_buf_reset(fb);
}

int smb_dispatch_unseal(struct smb_conn *c, uint8_t *frame, size_t len, struct smb_sess **enc)
{
	struct smb_wire_transform t;
	struct smb_sess *s;

	*enc = NULL;
	switch (smb_wire_frame_kind(frame, len)) {
	case SMB_WIRE_SMB1:
		if (c->negotiated || smb_sess_smb1(c, frame, len) != 0)
			c->closing = true; /* SMB1 only as the first multi-protocol NEGOTIATE */
		return -1;
	case SMB_WIRE_SMB2:
		return 0;
	case SMB_WIRE_TRANSFORM:
		break;
	default:
		c->closing = true;
		return -1;
	}
	if (smb_wire_transform_decode(frame, len, &t) != AQ_OK || !(s = smb_sess_find(c, t.session_id)) ||
	    s->state != SMB_SESS_VALID || c->cipher == SMB_WIRE_NONE) {
		c->closing = true;
		return -1;
	}
	/* in place: the message is frame + SMB2_TRANSFORM_LEN */
	if (smb_crypto_ctx_decrypt(&s->cx, c->cipher, s->keys.dec, frame, len, frame + SMB2_TRANSFORM_LEN) != AQ_OK ||
	    smb_wire_frame_kind(frame + SMB2_TRANSFORM_LEN, len - SMB2_TRANSFORM_LEN) != SMB_WIRE_SMB2) {
		UT_INFO("smb_srv", NULL, "%s: a transform that does not decrypt to SMB2, connection closed", c->peer);
		c->closing = true;
		return -1;
	}
	s->encrypt = true; /* from now on its plain requests are refused */
	*enc = s;
	return 0;
}

uint64_t smb_dispatch_interim(struct smb_conn *c, const struct smb_wire_hdr *q, bool encrypted)
{
	struct smb_sess *s = smb_sess_find(c, q->session_id);
	struct smb_wire_hdr rh = { 0 };
	struct ut_buf out;

	if (!s || s->state != SMB_SESS_VALID || c->freeing)
		return 0;
	do
		rh.async_id = ++c->next_async;
	while (rh.async_id == 0);
	rh.credit_charge = q->credit_charge;
	rh.status = STATUS_PENDING;
	rh.command = q->command;
	rh.credits = smb_dispatch_credits(c, q->credit_charge, q->credits);
	rh.flags = SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND;
	rh.message_id = q->message_id;
	rh.session_id = q->session_id;
	ut_buf_init(&out, SMB2_HDR_LEN + 16);
	smb_wire_hdr_encode(&out, &rh);
	smb_wire_error_rsp_encode(&out);
	if (out.err != AQ_OK)
		c->closing = true;
	else if (encrypted || s->encrypt)
		smb_dispatch_send_encrypted(c, s, &out);
	else
		smb_conn_send(c, ut_buf_bytes(&out), out.len);
	ut_buf_cleanup(&out);
	smb_conn_kick(c);
	return rh.async_id;
}

void smb_dispatch_serve(struct smb_conn *c, const uint8_t *p, size_t len, uint8_t *plain, struct smb_sess *enc)
{
	smb_frame_serve(c, p, len, plain, enc); /* takes plain */
	/* what this frame woke (a CLOSE or an acknowledgment that lets a
	 * waiting CREATE or rename go on) is served now, before the loop reads
	 * another request: a client that has the CLOSE answered finds the
	 * rename done (smbtorture smb2.lease.rename_wait raced the eventfd) */
	smb_async_run(c->srv);
}

void smb_dispatch_frame(struct smb_conn *c, uint8_t *frame, size_t len)
{
	struct smb_sess *enc;

	if (smb_dispatch_unseal(c, frame, len, &enc) != 0)
		return;
	if (enc)
		smb_dispatch_serve(c, frame + SMB2_TRANSFORM_LEN, len - SMB2_TRANSFORM_LEN, NULL, enc);
	else
		smb_dispatch_serve(c, frame, len, NULL, NULL);
}
