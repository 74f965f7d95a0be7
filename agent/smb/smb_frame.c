/* smb_frame: one frame's messages served in order and answered as one
 * frame (MS-SMB2 3.3.5.2.7): the compound's state, its answers linked,
 * signed and encrypted together, and the park and resume of a compound
 * whose READ a worker reads (issue 23).
 *
 * A CREATE inside a compound that waits for a break parks the frame the
 * same way (smb_async.c: smb_async_attach), and goes on when the break is
 * over (smb_frame_resume_call) or is cancelled (smb_frame_resume).
 * A READ inside a compound (related or unrelated) that cannot be served
 * without a wait (vol_read_nowait: -EAGAIN) is not read on the loop: the
 * frame parks. smb_frame_park_ready (from smb_open_read, before the job is
 * queued) checks the caps (SMB_FRAME_PARK_PER_CONN parked frames a
 * connection, SMB_FRAME_PARK_MAX the node; past them the READ is read on
 * the loop as before) and makes the frame's bytes the frame's own: the
 * buffer they were received (and decrypted in place) into, which the frame
 * takes from the connection (c->in_lent, smb_dispatch_recv_cap), else a
 * copy, unless they were decrypted into its own buffer. The frame then
 * keeps what its answer needs: the answers so far, who signs each, the
 * chain's FileId, session and tree, and the parked READ's request. The
 * loop goes on serving other connections and this connection's later
 * frames. When the worker's job ends (or a CANCEL names the READ), the
 * loop resumes the frame (smb_frame_resume): the READ's answer goes where
 * it stood, the remaining messages are served in order (a related one on
 * the READ's open, session and tree), and the whole compound goes out as
 * one frame, signed and encrypted as one. No interim STATUS_PENDING is
 * sent for a compound's READ a worker has (3.3.5.2.7 lets a server
 * decline async in a compound; Samba reads a compound's READ
 * synchronously): the compound's answer simply comes when it is done (an
 * interim QoS sent while it held the frame stands: smb_admit.c). A second READ of the frame that
 * would wait parks it again.
 * While parked, whatever a pointer of the frame names (a session, a tree,
 * the session that encrypts) may go with a LOGOFF or TREE_DISCONNECT of a
 * later frame: the frame keeps their ids and looks them up again before
 * using them. A connection that goes frees its parked frames unanswered
 * (smb_read_conn_gone: the job frees its frame).
 */
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

#define SMB_FRAME_MSGS 64u /* messages of one frame served (Samba's limit is lower) */

struct smb_frame {
	struct smb_conn *c;
	struct smb_srv *srv;          /* c's: the frame may outlive c (smb_frame_free) */
	const uint8_t *base;          /* the frame's bytes: the caller's, or own */
	uint8_t *own;                 /* bytes the frame owns (decrypted, or copied to park) */
	uint8_t *lent;                /* or the receive buffer base lies in, taken to park (c->in_lent) */
	size_t lent_cap;
	size_t len;
	struct smb_wire_chain ch;
	int rc;                       /* smb_wire_chain_next's last */
	struct ut_buf out;
	bool encrypted, cancels, deferred, parked;
	bool was_parked;              /* its pointers are checked before use (a frame never parked: no need) */
	struct smb_sess *enc_sess;
	uint64_t enc_id;
	struct smb_wire_fid related;
	uint32_t chain_err;
	struct smb_sess *last_sess;
	struct smb_tree *last_tree;
	uint64_t last_sess_id;
	uint32_t last_tree_id;
	size_t n, offs[SMB_FRAME_MSGS];
	struct smb_sess *signer[SMB_FRAME_MSGS];
	uint64_t signer_id[SMB_FRAME_MSGS];
	struct smb_chan *bind_chan[SMB_FRAME_MSGS];
	bool sign[SMB_FRAME_MSGS], flag_signed[SMB_FRAME_MSGS];
	struct smb_req pr;            /* the parked READ */
	uint64_t pr_sess_id;
	uint32_t pr_tree_id;
};

/* Whether s (of id) is still a session of the server (a parked frame's pointers). */
static bool frame_sess_live(const struct smb_srv *srv, const struct smb_sess *s, uint64_t id)
{
	if (!s)
		return false;
	for (const struct smb_conn *c = srv->conns; c; c = c->next)
		for (const struct smb_sess *x = c->sessions; x; x = x->next)
			if (x == s)
				return x->id == id;
	return false;
}

static bool frame_tree_live(const struct smb_sess *s, const struct smb_tree *t, uint32_t id)
{
	for (const struct smb_tree *x = s ? s->trees : NULL; x; x = x->next)
		if (x == t)
			return x->id == id;
	return false;
}

/* Whether ch is still one of c's channels (a later message of the frame may have dropped it). */
static bool frame_chan_live(const struct smb_conn *c, const struct smb_chan *ch)
{
	for (const struct smb_chan *x = c->chans; x; x = x->cnext)
		if (x == ch)
			return true;
	return false;
}

/* r was answered into f->out: what its signing and the chain need. */
static void frame_took(struct smb_frame *f, const struct smb_req *r)
{
	const struct smb_wire_hdr *h = &r->m.hdr;
	size_t i = f->n;

	if (h->command == SMB2_CREATE)
		f->chain_err = (r->status & 0xC0000000u) == 0xC0000000u ? r->status : STATUS_SUCCESS;
	f->offs[i] = r->hdr_off;
	/* sign what a valid session answers, and the final SESSION_SETUP */
	f->signer[i] = r->sign_rsp ? r->sign_sess : (r->sess && r->sess->state == SMB_SESS_VALID ? r->sess : NULL);
	f->signer_id[i] = f->signer[i] ? f->signer[i]->id : 0;
	/* an interim response is not signed (3.3.4.2) */
	f->sign[i] = f->signer[i] && !f->encrypted && h->command != SMB2_NEGOTIATE && !r->async_id;
	/* an error of a signed request that no session can sign (none
	 * found, or a related one without its previous session) still
	 * says SIGNED, its signature zero, as Samba answers and as
	 * clients that require signing accept for these statuses */
	f->flag_signed[i] = !f->sign[i] && !f->encrypted && (h->flags & SMB2_FLAGS_SIGNED) &&
			    (r->status == STATUS_USER_SESSION_DELETED || r->status == STATUS_INVALID_PARAMETER ||
			     r->status == STATUS_FILE_CLOSED || r->status == STATUS_NETWORK_NAME_DELETED);
	f->bind_chan[i] = r->status == STATUS_MORE_PROCESSING_REQUIRED && f->c->dialect == SMB2_DIALECT_311 ? r->bind_chan
													     : NULL;
	f->last_sess = r->sess;
	f->last_tree = r->tree;
	f->last_sess_id = r->sess ? r->sess->id : 0;
	f->last_tree_id = r->tree ? r->tree->id : 0;
	f->n++;
}

/* Keep f for its READ r, which a worker has (r->read_job), or for its
 * CREATE r waiting for a break (r->wait). */
static void frame_park(struct smb_frame *f, const struct smb_req *r)
{
	f->pr = *r;
	f->pr.out = &f->out;
	f->pr.related = &f->related;
	f->pr.deferred = false;
	f->pr.async_id = 0; /* a waiting CREATE's, never sent: its answer is sync and signed */
	f->pr_sess_id = r->sess ? r->sess->id : 0;
	f->pr_tree_id = r->tree ? r->tree->id : 0;
	f->parked = f->was_parked = true;
	f->c->nframes++;
	f->c->srv->nframes++;
	if (r->read_job)
		smb_read_attach(r->read_job, f);
	else
		smb_async_attach(r->wait, f); /* a CREATE waiting for a break */
}

/* Serve f's messages from where it stands, until the end or a park. */
static void frame_loop(struct smb_frame *f)
{
	struct smb_conn *c = f->c;
	struct smb_wire_msg m;

	while ((f->rc = smb_wire_chain_next(&f->ch, &m)) == 1 && f->n < SMB_FRAME_MSGS) {
		bool rel = (m.hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS) != 0;
		struct smb_req r = { .c = c, .m = m, .out = &f->out, .encrypted = f->encrypted, .related = &f->related,
				     .last = m.hdr.next_command == 0, .chained = rel, .frame = f,
				     .lone = f->n == 0 && !rel && m.hdr.next_command == 0 };

		if (c->serve_async && m.hdr.message_id == c->serve_async_mid) {
			/* its interim went while QoS held the frame (smb_admit.c):
			 * its answer is async, a compound's others are not */
			r.async_final = c->serve_async;
			c->serve_async = 0;
		}

		if (m.hdr.command == SMB2_CANCEL) { /* no response, no credit (3.3.5.16) */
			if (c->negotiated)
				smb_async_cancel(c, &m, f->encrypted);
			f->cancels = true;
			continue;
		}
		if (f->n > 0)
			smb_wire_chain_link(&f->out, f->offs[f->n - 1]);
		if (rel) {
			r.sess = f->last_sess;
			r.tree = f->last_tree;
			r.chain_err = f->chain_err;
		} else { /* an unrelated request starts a new chain */
			memset(&f->related, 0, sizeof(f->related));
			f->chain_err = STATUS_SUCCESS;
		}
		smb_dispatch_msg(&r);
		if (r.deferred && r.park) { /* a worker has it: the frame waits for it */
			frame_park(f, &r);
			return;
		}
		if (r.deferred) { /* a lone READ: smb_read.c answers it alone */
			f->deferred = true;
			continue;
		}
		frame_took(f, &r);
	}
}

/* Sign, link, encrypt and queue f's answers, then free f. */
static void frame_end(struct smb_frame *f)
{
	struct smb_conn *c = f->c;
	size_t i, n = f->n;

	if (f->rc == 0 && n == 0 && (f->cancels || f->deferred))
		goto out; /* only CANCELs, or a READ a worker answers: nothing to answer now */
	if (f->rc < 0 || n == 0 || f->out.err != AQ_OK) {
		if (f->rc < 0 || n == 0)
			UT_INFO("smb_srv", NULL, "%s: malformed frame, connection closed", c->peer);
		else
			UT_WARN("smb_srv", NULL, "%s: a response of %u messages could not be built (%d), connection closed",
				c->peer, (unsigned)n, f->out.err);
		c->closing = true;
		goto out;
	}
	if (f->encrypted && f->was_parked && !frame_sess_live(c->srv, f->enc_sess, f->enc_id)) {
		UT_INFO("smb_srv", NULL, "%s: a compound's session went while it waited, connection closed", c->peer);
		c->closing = true;
		goto out;
	}
	for (i = 0; i < n; i++) {
		size_t end = i + 1 < n ? f->offs[i + 1] : f->out.len;

		if (f->sign[i] && (!f->was_parked || frame_sess_live(c->srv, f->signer[i], f->signer_id[i])))
			smb_dispatch_sign(c, f->signer[i], &f->out, f->offs[i], end);
		else if (f->flag_signed[i])
			ut_buf_set_le32(&f->out, f->offs[i] + 16,
					smb_wire_get_u32(ut_buf_bytes(&f->out) + f->offs[i] + 16) | SMB2_FLAGS_SIGNED);
	}
	/* 3.1.1: a binding's hash takes its answer in as it goes out, signed
	 * with the session's key (the client hashes what it receives) */
	for (i = 0; i < n; i++)
		if (f->bind_chan[i] && frame_chan_live(c, f->bind_chan[i]))
			smb_crypto_preauth_update(f->bind_chan[i]->preauth, ut_buf_bytes(&f->out) + f->offs[i],
						  (i + 1 < n ? f->offs[i + 1] : f->out.len) - f->offs[i]);
	if (f->encrypted)
		smb_dispatch_send_encrypted(c, f->enc_sess, &f->out);
	else
		smb_conn_send_buf(c, &f->out); /* may take f->out's buffer */
	/* a logged-off session (its opens and trees closed at LOGOFF) stays a
	 * while, newest first, so that a request still naming it gets
	 * USER_SESSION_DELETED signed with its key, as clients that sign
	 * expect (Samba's refuses an unsigned answer); older ones go */
	{
		unsigned kept = 0;

		for (struct smb_sess *s = c->sessions, *nx; s; s = nx) {
			nx = s->next;
			if (s->logged_off && ++kept > SMB_SESS_GONE_KEEP)
				smb_sess_free(c, s);
		}
	}
out:
	if (!c->closing && !c->freeing && !c->rsp.p) {
		c->rsp = f->out; /* kept for the next reply */
		f->out = (struct ut_buf){ 0 };
	}
	if (f->lent) { /* the receive buffer it took: the next big frame's room */
		smb_conn_in_keep(c, f->lent, f->lent_cap);
		f->lent = NULL;
	}
	smb_frame_free(f);
}

void smb_frame_serve(struct smb_conn *c, const uint8_t *frame, size_t len, uint8_t *plain, struct smb_sess *enc_sess)
{
	struct smb_frame *f = calloc(1, sizeof(*f));

	if (!f) {
		free(plain);
		c->closing = true;
		return;
	}
	f->c = c;
	f->srv = c->srv;
	f->base = frame;
	f->own = plain;
	f->len = len;
	f->encrypted = enc_sess != NULL;
	f->enc_sess = enc_sess;
	f->enc_id = enc_sess ? enc_sess->id : 0;
	/* the connection's kept room (taken: a nested dispatch gets its own) */
	f->out = c->rsp;
	c->rsp = (struct ut_buf){ 0 };
	if (f->out.p)
		ut_buf_reset(&f->out);
	else
		ut_buf_init(&f->out, SMB_WIRE_FRAME_MAX);
	smb_wire_chain_init(&f->ch, frame, len);
	frame_loop(f);
	if (!f->parked)
		frame_end(f);
}

bool smb_frame_park_ready(struct smb_req *r)
{
	struct smb_frame *f = r->frame;
	uint8_t *own;

	if (!f)
		return false;
	if (f->c->nframes >= SMB_FRAME_PARK_PER_CONN || f->c->srv->nframes >= SMB_FRAME_PARK_MAX) {
		UT_DEBUG("smb_srv", NULL, "%s: a request that may block served on the loop: %u frames wait here, %u on the node",
			 f->c->peer, f->c->nframes, f->c->srv->nframes);
		return false;
	}
	if (f->own || f->lent) {
		r->park = true;
		return true;
	}
	if (f->c->in_lent && f->base >= f->c->in_lent && f->base + f->len <= f->c->in_lent + f->c->in_lent_cap) {
		/* the bytes are in the buffer they were received into: the
		 * frame takes it, no copy (the connection receives the next
		 * frame into another) */
		f->lent = f->c->in_lent;
		f->lent_cap = f->c->in_lent_cap;
		f->c->in_lent = NULL;
		r->park = true;
		return true;
	}
	if (!(own = malloc(f->len)))
		return false;
	memcpy(own, f->base, f->len);
	f->srv->park_copies++;
	/* the cursor and the READ's message now point into the copy */
	r->m.p = own + (r->m.p - f->base);
	r->m.body = own + (r->m.body - f->base);
	f->ch.p = own;
	f->base = f->own = own;
	r->park = true;
	return true;
}

/* The parked request's end (its answer: body, or what fn serves), then the
 * rest of the frame. */
static void frame_resume(struct smb_frame *f, uint32_t status, const uint8_t *body, size_t body_len,
			 smb_frame_cont fn, void *arg, int rc, uint64_t async_id)
{
	struct smb_conn *c = f->c;
	struct smb_req r = f->pr;
	size_t body_at;
	bool live = true;

	f->parked = false;
	c->nframes--;
	c->srv->nframes--;
	/* what went while the READ waited: its session (then no one signs
	 * its answer), its tree */
	if (!frame_sess_live(c->srv, r.sess, f->pr_sess_id) || r.sess->state != SMB_SESS_VALID || r.sess->logged_off) {
		r.sess = NULL;
		r.tree = NULL;
		r.rsp_session = f->pr_sess_id;
		status = STATUS_USER_SESSION_DELETED;
		live = false;
	} else if (!frame_tree_live(r.sess, r.tree, f->pr_tree_id)) {
		r.tree = NULL;
		status = STATUS_NETWORK_NAME_DELETED;
		live = false;
	}
	if (!frame_sess_live(c->srv, f->last_sess, f->last_sess_id)) {
		f->last_sess = NULL;
		f->last_tree = NULL;
	} else if (!frame_tree_live(f->last_sess, f->last_tree, f->last_tree_id)) {
		f->last_tree = NULL;
	}
	f->out.len = r.hdr_off;
	ut_buf_put_zero(&f->out, SMB2_HDR_LEN);
	body_at = f->out.len;
	if (async_id) /* else what it had: an interim QoS sent for its frame (smb_admit.c) */
		r.async_final = async_id;
	if (fn && live)
		status = fn(&r, arg, rc);
	else if (fn)
		(void)fn(NULL, arg, rc);
	else if (status == STATUS_SUCCESS)
		ut_buf_add(&f->out, body, body_len);
	if (r.deferred && r.park) { /* it waits again (a CREATE, a new break: smb_async.c) */
		frame_park(f, &r);
		return;
	}
	if (status != STATUS_SUCCESS)
		f->out.len = body_at; /* msg_end writes the error body */
	smb_dispatch_msg_end(&r, status, body_at);
	frame_took(f, &r);
	frame_loop(f);
	if (!f->parked) {
		frame_end(f);
		smb_conn_kick(c);
	}
}

void smb_frame_resume(struct smb_frame *f, uint32_t status, const uint8_t *body, size_t body_len)
{
	frame_resume(f, status, body, body_len, NULL, NULL, 0, 0);
}

void smb_frame_resume_call(struct smb_frame *f, smb_frame_cont fn, void *arg, int rc, uint64_t async_id)
{
	frame_resume(f, STATUS_SUCCESS, NULL, 0, fn, arg, rc, async_id);
}

void smb_frame_free(struct smb_frame *f)
{
	if (!f)
		return;
	if (f->parked) /* its connection went: no answer */
		f->srv->nframes--;
	ut_buf_cleanup(&f->out);
	free(f->own);
	free(f->lent);
	free(f);
}
