/* smb_admit: QoS admission of a frame before it is served (the issue 5
 * contract every front end keeps: a request's bytes are charged to its
 * volume before its work is done, and a volume over its limit parks the
 * request instead of holding the loop).
 *
 * Every frame is charged, whatever path serves it: a sealed frame is
 * decrypted first (smb_dispatch_unseal) and admitted on its plain bytes, so
 * an encrypted READ, WRITE or COPYCHUNK costs what an unencrypted one does;
 * a compound's elements are charged together (one admission for the
 * frame, which is served whole or parked whole); the READs and WRITEs a
 * worker serves later (smb_read.c) were charged here with their frame.
 * What each message costs: a READ its Length, a WRITE its data, each capped
 * at what one request moves (vol_io_cost; a READ's unmoved part comes back
 * in smb_open_read), a COPYCHUNK the bytes of all its chunks as written on
 * the destination's volume and as read on the source's (one volume:
 * twice). Each message's volume is its tree's (a related message's tree is
 * the chain's), so a related READ of the open the compound's CREATE makes
 * is charged as a lone READ of that open. A frame on several volumes (a
 * COPYCHUNK whose source is on another share's volume, a compound across
 * trees) is charged on each in turn, in the order it names them: parked on
 * the first one over its limit, and when that one hands it back, charged
 * on the next; it is served once every volume admitted it, so it waits
 * while either volume of a cross-volume copy is over its limit, and the
 * loop serves others meanwhile. Its state (the volumes, each with a
 * counted reference, and the bytes) waits on the connection (c->admit).
 * A message the server will refuse (no session, no tree, a bad body, a
 * copy outside the limits) costs nothing.
 * A parked frame still waiting SMB_READ_PENDING_MS after it parked gets
 * the interim response READs a worker has get (smb_dispatch_interim:
 * async, an AsyncId, STATUS_PENDING,
 * the credits; smb_dispatch_admit_tick, each turn of the loop), so that a
 * client does not time the request out while its volume's limit holds it;
 * its final answer is then async with that AsyncId and CreditResponse 0,
 * signed and encrypted as any (smb_frame.c takes it from c->serve_async;
 * a READ that then goes to a worker keeps it: smb_read.c). In a compound
 * (MS-SMB2 3.3.4.2) the interim names the first message QoS charges (a
 * READ, a WRITE, a copy; the first that blocks, as Windows picks): the
 * compound is then answered whole, that message's answer async with the
 * AsyncId and CreditResponse 0, the others as any. The connection is
 * not read while its frame is parked, so no CANCEL can name it.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_clock.h"

#define SMB_ADMIT_MSGS 64u /* messages of a frame looked at: what smb_frame.c serves */

/* A frame's charge, per volume (a frame names at most SMB_ADMIT_MSGS trees,
 * and a copy's source one more each): counted references; next: the
 * volume to charge next. */
struct smb_admit {
	struct vol_export *exp[2 * SMB_ADMIT_MSGS];
	uint64_t bytes[2 * SMB_ADMIT_MSGS];
	unsigned n, next;
	bool write;
};

void smb_dispatch_admit_free(struct smb_conn *c)
{
	struct smb_admit *a = c->admit;

	if (!a)
		return;
	for (unsigned i = 0; i < a->n; i++)
		vol_export_unref(a->exp[i]);
	free(a);
	c->admit = NULL;
}

/* Charge c's frame on its volumes from the next one: QOS_PARKED on the
 * first over its limit (c->qi), else QOS_ADMIT with the state gone. */
static int smb_admit_step(struct smb_conn *c)
{
	struct smb_admit *a = c->admit;

	/* a server stopping serves what it has: the QoS timer that would hand
	 * a frame parked now back has stopped (smb_srv_stop) */
	while (a && a->next < a->n && !__atomic_load_n(&c->srv->stop, __ATOMIC_ACQUIRE)) {
		unsigned i = a->next++;

		c->qi.release = smb_srv_release;
		c->qi.release_arg = c->srv;
		if (vol_admit_export(a->exp[i], c->key, a->write ? QOS_WRITE : QOS_READ, a->bytes[i], &c->qi) == QOS_PARKED)
			return QOS_PARKED;
	}
	smb_dispatch_admit_free(c);
	return QOS_ADMIT;
}

static void smb_admit_add(struct smb_admit *a, struct vol_export *e, uint64_t bytes)
{
	unsigned i;

	if (!e || !bytes)
		return;
	for (i = 0; i < a->n && a->exp[i] != e; i++)
		;
	if (i == a->n) {
		if (a->n == sizeof(a->exp) / sizeof(a->exp[0]))
			return;
		a->exp[a->n] = vol_export_ref(e);
		a->bytes[a->n++] = 0;
	}
	a->bytes[i] += bytes;
}

/* One message m on tree t of session s. */
static void smb_admit_msg(struct smb_conn *c, struct smb_sess *s, struct smb_tree *t, const struct smb_wire_msg *m,
			  struct smb_admit *a)
{
	struct smb_wire_read_req rd;
	struct smb_wire_write_req wr;
	struct smb_wire_fid fid;
	struct smb_open *src;
	uint64_t total;

	if (!t || !t->exp)
		return;
	switch (m->hdr.command) {
	case SMB2_READ:
		if (smb_wire_read_req_decode(m, &rd) == AQ_OK)
			smb_admit_add(a, t->exp, vol_io_cost(rd.length));
		break;
	case SMB2_WRITE:
		if (smb_wire_write_req_decode(m, &wr) == AQ_OK) {
			smb_admit_add(a, t->exp, vol_io_cost(wr.data_len));
			a->write = true;
		}
		break;
	case SMB2_IOCTL: /* a server-side copy (smb_copy.c) */
		if (!smb_copy_cost(c, m, s, &fid, &total, &src))
			break;
		smb_admit_add(a, t->exp, total);
		if (src && src->tree)
			smb_admit_add(a, src->tree->exp, total);
		a->write = true;
		break;
	default:
		break;
	}
}

int smb_dispatch_admit(struct smb_conn *c, const uint8_t *frame, size_t len)
{
	struct smb_admit *a;
	struct smb_wire_chain ch;
	struct smb_wire_msg m;
	struct smb_sess *s = NULL;
	struct smb_tree *t = NULL;

	smb_dispatch_admit_free(c); /* a frame admitted before, whatever was left */
	if (smb_wire_frame_kind(frame, len) != SMB_WIRE_SMB2 || !(a = calloc(1, sizeof(*a))))
		return QOS_ADMIT;
	smb_wire_chain_init(&ch, frame, len);
	for (unsigned k = 0; k < SMB_ADMIT_MSGS && smb_wire_chain_next(&ch, &m) == 1; k++) {
		/* a related message is on the chain's session and tree, as
		 * smb_dispatch's checks resolve them (3.3.5.2.7.2) */
		if (k == 0 || !(m.hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS)) {
			s = smb_sess_find(c, m.hdr.session_id);
			t = NULL;
		}
		if (!s || s->state != SMB_SESS_VALID || s->logged_off)
			continue;
		if (!t || !(m.hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS))
			t = smb_tree_find(s, m.hdr.tree_id);
		smb_admit_msg(c, s, t, &m, a);
	}
	c->admit = a;
	return smb_admit_step(c);
}

int smb_dispatch_recv(struct smb_conn *c, uint8_t *frame, size_t len)
{
	return smb_dispatch_recv_cap(c, frame, len, len);
}

int smb_dispatch_recv_cap(struct smb_conn *c, uint8_t *frame, size_t len, size_t cap)
{
	struct smb_sess *enc;
	uint8_t *msg = frame, *prev;
	size_t prev_cap;
	bool taken;

	if (smb_dispatch_unseal(c, frame, len, &enc) != 0) {
		free(frame);
		return QOS_ADMIT;
	}
	if (enc) { /* decrypted in place: from here on only the message matters */
		msg = frame + SMB2_TRANSFORM_LEN;
		len -= SMB2_TRANSFORM_LEN;
	}
	if (smb_dispatch_admit(c, msg, len) == QOS_PARKED) {
		if (enc) /* the parked frame is its message, at the buffer's start */
			memmove(frame, msg, len);
		c->parked = frame;
		c->parked_len = len;
		c->parked_sealed = enc != NULL;
		c->parked_enc = enc ? enc->id : 0;
		c->parked_t0_ms = ut_clock_mono_ns() / 1000000u;
		c->parked_async = 0;
		c->is_parked = true;
		return QOS_PARKED;
	}
	/* a frame that parks takes the buffer itself (c->in_lent goes NULL) */
	prev = c->in_lent;
	prev_cap = c->in_lent_cap;
	c->in_lent = frame;
	c->in_lent_cap = cap;
	smb_dispatch_serve(c, msg, len, NULL, enc);
	taken = c->in_lent != frame;
	c->in_lent = prev;
	c->in_lent_cap = prev_cap;
	if (!taken)
		smb_conn_in_keep(c, frame, cap);
	return QOS_ADMIT;
}

void smb_dispatch_resume(struct smb_conn *c)
{
	uint8_t *frame = c->parked;
	struct smb_sess *enc = NULL;

	if (!c->is_parked || !frame)
		return;
	if (c->admit && smb_admit_step(c) == QOS_PARKED)
		return; /* another volume of the frame is over its limit: parked there */
	c->is_parked = false;
	c->parked = NULL;
	c->serve_async = c->parked_async; /* its interim went: that answer is async (smb_frame.c) */
	c->serve_async_mid = c->parked_async_mid;
	c->parked_async = 0;
	if (!c->parked_sealed) {
		smb_dispatch_serve(c, frame, c->parked_len, NULL, NULL);
		free(frame);
		return;
	}
	/* the session that sealed it may have gone while it waited (a LOGOFF
	 * cannot come first on this connection, but a binding's other channel
	 * or a PreviousSessionId can end it): no key could answer it */
	enc = smb_sess_find(c, c->parked_enc);
	if (!enc || enc->state != SMB_SESS_VALID) {
		c->serve_async = 0;
		free(frame);
		return;
	}
	smb_dispatch_serve(c, frame, c->parked_len, frame, enc); /* takes frame */
}

/* The message of c's parked frame its interim names: a lone request, or
 * the first message of a compound QoS charges (a READ, a WRITE, a copy's
 * IOCTL: the first that blocks, as Windows picks), a related one on its
 * chain's session. false: none (a CANCEL, nothing charged, a bad frame). */
static bool smb_admit_interim_hdr(const struct smb_conn *c, struct smb_wire_hdr *out)
{
	struct smb_wire_chain ch;
	struct smb_wire_msg m;
	uint64_t sess = 0;

	smb_wire_chain_init(&ch, c->parked, c->parked_len);
	for (unsigned k = 0; k < SMB_ADMIT_MSGS && smb_wire_chain_next(&ch, &m) == 1; k++) {
		if (k == 0 && m.hdr.next_command == 0) { /* one request */
			*out = m.hdr;
			return m.hdr.command != SMB2_CANCEL;
		}
		if (k == 0 || !(m.hdr.flags & SMB2_FLAGS_RELATED_OPERATIONS))
			sess = m.hdr.session_id;
		if (m.hdr.command == SMB2_READ || m.hdr.command == SMB2_WRITE || m.hdr.command == SMB2_IOCTL) {
			*out = m.hdr;
			out->session_id = sess;
			return true;
		}
	}
	return false;
}

bool smb_dispatch_admit_tick(struct smb_srv *srv)
{
	uint64_t now = ut_clock_mono_ns() / 1000000u;
	bool waiting = false;

	for (struct smb_conn *c = srv->conns; c; c = c->next) {
		struct smb_wire_hdr h;

		if (!c->is_parked || !c->parked || c->parked_async || c->closing || c->freeing)
			continue;
		if (!smb_admit_interim_hdr(c, &h))
			continue;
		if (now - c->parked_t0_ms < SMB_READ_PENDING_MS) {
			waiting = true;
			continue;
		}
		c->parked_async = smb_dispatch_interim(c, &h, c->parked_sealed); /* queued and kicked */
		c->parked_async_mid = h.message_id;
	}
	return waiting;
}
