/* smb_async: requests the server answers STATUS_PENDING and completes later
 * (MS-SMB2 3.3.4.2, 3.3.4.3, 3.3.5.16): the blocking LOCK (3.3.5.14: a
 * single element without SMB2_LOCKFLAG_FAIL_IMMEDIATELY that cannot be
 * granted now) and CHANGE_NOTIFY (3.3.5.19, smb_notify.c: no change queued
 * for its directory yet).
 *
 * The request gets an AsyncId (nonzero, unique on the connection), an
 * interim response (SMB2_FLAGS_ASYNC_COMMAND, the AsyncId, STATUS_PENDING,
 * the credits the request earns, not signed: 3.3.4.2's SHOULD NOT; encrypted
 * when the request was) and a struct vol_lock_waiter in the store's table.
 * Whoever releases a lock on that file, on any thread and in any protocol,
 * wakes the waiter: the wake sets a flag and writes the server's eventfd,
 * and the loop thread (smb_async_run) tries the lock again. The final
 * response carries the AsyncId and CreditResponse 0, and is signed and
 * encrypted as the session's other responses are. It ends as:
 * - STATUS_SUCCESS: the lock was granted on a try (the file's read caches
 *   are broken then, as for a lock granted at once: smb_lease_lock);
 * - STATUS_CANCELLED: SMB2 CANCEL named it (by AsyncId when the CANCEL is
 *   async, else by MessageId), from the same session;
 * - STATUS_RANGE_NOT_LOCKED: its open closed (CLOSE, TREE_DISCONNECT,
 *   LOGOFF) while it could still not be granted; a tree disconnect or a
 *   logoff releases every lock of its opens first, so a waiter that was only
 *   waiting on those is granted (then released with its open), as Windows
 *   and Samba answer;
 * - nothing: the connection went (its waiters are freed).
 * A CHANGE_NOTIFY waits on its open's watch in the store (vol_watch.h):
 * the watch's wake flags the open and writes the eventfd; the loop gives
 * the open's oldest waiting CHANGE_NOTIFY the queued changes
 * (STATUS_SUCCESS with FILE_NOTIFY_INFORMATION records, or
 * STATUS_NOTIFY_ENUM_DIR). It ends STATUS_CANCELLED on CANCEL as a lock
 * does, and STATUS_NOTIFY_CLEANUP when its open closes (CLOSE,
 * TREE_DISCONNECT, LOGOFF).
 * A CREATE, or a SET_INFO renaming a file, waits (smb_lease.c) while a
 * break of another client's cached open that it caused needs an
 * acknowledgment: it keeps a copy of its
 * request, and the loop serves it again (same AsyncId, final answer async)
 * once no break of another group on its file waits: acknowledged, the
 * holder's open closed, or the break timeout (the store's) passed, which
 * revokes it (smb_async_tick, each second). CANCEL ends it
 * STATUS_CANCELLED; a closed session or connection drops it.
 * A CREATE that is not the last message of its compound (smbtorture
 * smb2.compound.compound-break: CREATE + related QUERY_INFO breaking the
 * client's own BATCH oplock) parks its frame instead (smb_frame.c, as a
 * compound's READ a worker has): no interim, nothing of the compound
 * answered; when the break is over the frame goes on from the CREATE,
 * served again (async_frame_serve), and the compound is answered whole,
 * sync and signed, as smbd answers it. CANCEL (by MessageId) answers the
 * CREATE CANCELLED and the frame goes on; a dropped connection frees the
 * frame with the request.
 * Bounds: SMB_ASYNC_PER_CONN waiting requests per connection and
 * SMB_ASYNC_NODE_MAX per node, and the table's VOL_LOCK_WAIT_MAX; past any,
 * the LOCK is answered STATUS_INSUFFICIENT_RESOURCES at once (3.3.4.2
 * allows it when resources are constrained). Nothing blocks a thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

struct smb_async {
	struct smb_async *next;
	struct smb_conn *c;
	struct smb_srv *srv;         /* for the wake, which may run on another thread */
	struct smb_open *o;
	uint64_t async_id, message_id, session_id;
	uint16_t credit_charge;
	uint16_t command;            /* SMB2_LOCK, SMB2_CHANGE_NOTIFY, SMB2_CREATE or SMB2_SET_INFO */
	bool encrypted;
	/* LOCK */
	struct smb_wire_lock_elem e;
	struct vol_lock_waiter w;
	int woken;                   /* atomic */
	uint8_t *seq_bucket;         /* o->lock_seq's bucket that gets seq when granted (NULL: none) */
	uint8_t seq;
	/* CHANGE_NOTIFY */
	uint32_t output_len;
	/* CREATE, SET_INFO (a rename): waiting for a break */
	uint8_t *msg;                /* the request message, served again */
	size_t msg_len;
	uint32_t tree_id;
	struct vol_lock_key key;     /* the file whose breaks it waits for */
	uint64_t group;
	struct timespec deadline;    /* CLOCK_MONOTONIC: the break timeout */
	bool in_frame;               /* a compound's CREATE: its frame waits (parked), no interim went */
	struct smb_frame *frame;     /* that frame while it is parked on a */
	bool ready;                  /* its break is over: the frame goes on (async_create_run) */
};

/* The table's wake (its mutex held, any thread): flag it, wake the loop. */
static void async_wake(struct vol_lock_waiter *w)
{
	struct smb_async *a = w->arg;
	uint64_t one = 1;

	__atomic_store_n(&a->woken, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&a->srv->async_woken, 1, __ATOMIC_RELEASE);
	if (write(a->srv->evfd, &one, sizeof(one)) < 0)
		UT_WARN("smb_srv", NULL, "cannot wake the loop for a lock: %s", strerror(errno));
}

/* The final response of a: its header written over out's first
 * SMB2_HDR_LEN bytes, the body after them; signed or encrypted and queued. */
static void async_send(struct smb_async *a, struct smb_sess *s, uint32_t status, struct ut_buf *out)
{
	struct smb_conn *c = a->c;
	struct smb_wire_hdr rh = { 0 };
	struct ut_buf hb;

	rh.credit_charge = a->credit_charge;
	rh.status = status;
	rh.command = a->command;
	rh.credits = 0;
	rh.flags = SMB2_FLAGS_SERVER_TO_REDIR | SMB2_FLAGS_ASYNC_COMMAND;
	rh.message_id = a->message_id;
	rh.async_id = a->async_id;
	rh.session_id = a->session_id;
	rh.tree_id = a->tree_id;
	ut_buf_init(&hb, SMB2_HDR_LEN);
	smb_wire_hdr_encode(&hb, &rh);
	if (hb.err == AQ_OK && out->len >= SMB2_HDR_LEN)
		memcpy(ut_buf_bytes(out), ut_buf_bytes(&hb), SMB2_HDR_LEN);
	else
		out->err = hb.err != AQ_OK ? hb.err : AQ_EINVAL;
	ut_buf_cleanup(&hb);
	if (out->err != AQ_OK) {
		c->closing = true;
	} else if (a->encrypted || s->encrypt) {
		smb_dispatch_send_encrypted(c, s, out);
	} else {
		smb_dispatch_sign(c, s, out, 0, out->len);
		smb_conn_send(c, ut_buf_bytes(out), out->len);
	}
}

/* a's session, valid, or NULL (nothing to sign an answer with). */
static struct smb_sess *async_sess(struct smb_async *a)
{
	struct smb_sess *s = smb_sess_find(a->c, a->session_id);

	if (a->c->freeing)
		return NULL;
	if (!s || s->state != SMB_SESS_VALID) {
		UT_DEBUG("smb_srv", NULL, "%s: async request %llu ends without its session", a->c->peer,
			 (unsigned long long)a->async_id);
		return NULL;
	}
	return s;
}

/* The final response (3.3.4.3 / 3.3.4.4), queued on the connection;
 * data: a CHANGE_NOTIFY's output (STATUS_SUCCESS). */
static void async_reply(struct smb_async *a, uint32_t status, const uint8_t *data, size_t len)
{
	struct smb_sess *s = async_sess(a);
	struct ut_buf out;

	if (!s)
		return;
	ut_buf_init(&out, 256 + len);
	ut_buf_put_zero(&out, SMB2_HDR_LEN);
	if (status == STATUS_SUCCESS && a->command == SMB2_CHANGE_NOTIFY)
		smb_wire_output_rsp_encode(&out, 0, data, len);
	else if (status == STATUS_SUCCESS)
		smb_wire_empty_rsp_encode(&out);
	else
		smb_wire_error_rsp_encode(&out);
	async_send(a, s, status, &out);
	ut_buf_cleanup(&out);
}

/* Take a off its connection and the table, and free it. */
static void async_free(struct smb_async *a)
{
	struct smb_conn *c = a->c;
	struct smb_async **pp;

	if (a->command == SMB2_LOCK)
		vol_lock_unwait(a->o->locks, &a->w);
	else if (a->command == SMB2_CREATE || a->command == SMB2_SET_INFO)
		c->srv->ncreates--;
	else
		a->o->nnotify--;
	for (pp = &c->pending; *pp && *pp != a; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = a->next;
	c->npending--;
	c->srv->npending--;
	smb_frame_free(a->frame); /* still parked: its connection goes (no answer) */
	free(a->msg);
	free(a);
}

/* Give a its AsyncId and put it on its connection. */
static void async_queue(struct smb_req *r, struct smb_async *a)
{
	struct smb_conn *c = r->c;

	do
		a->async_id = ++c->next_async;
	while (a->async_id == 0);
	a->next = c->pending;
	c->pending = a;
	c->npending++;
	c->srv->npending++;
	r->async_id = a->async_id;
}

/* A waiting request for r (what its answer needs), within the bounds:
 * NULL (logged as what, refused) when the connection or the node has too
 * many waiting, or no memory. Not queued yet (async_queue). */
static struct smb_async *async_new(struct smb_req *r, uint16_t command, const char *what)
{
	struct smb_conn *c = r->c;
	struct smb_async *a;

	if (c->npending >= SMB_ASYNC_PER_CONN || c->srv->npending >= SMB_ASYNC_NODE_MAX) {
		UT_INFO("smb_srv", NULL, "%s: %s refused: %u requests wait on the connection, %u on the node", c->peer,
			what, c->npending, c->srv->npending);
		return NULL;
	}
	if (!(a = calloc(1, sizeof(*a))))
		return NULL;
	a->c = c;
	a->srv = c->srv;
	a->command = command;
	a->message_id = r->m.hdr.message_id;
	a->session_id = r->sess->id;
	a->credit_charge = r->m.hdr.credit_charge;
	a->encrypted = r->encrypted;
	return a;
}

uint32_t smb_async_lock(struct smb_req *r, struct smb_open *o, const struct smb_wire_lock_elem *e, uint8_t *bucket,
			uint8_t seq)
{
	struct smb_async *a;
	int rc;

	if (!(a = async_new(r, SMB2_LOCK, "a blocking lock")))
		return STATUS_INSUFFICIENT_RESOURCES;
	a->o = o;
	a->e = *e;
	a->seq_bucket = bucket;
	a->seq = seq;
	a->w.key = o->lkey;
	a->w.wake = async_wake;
	a->w.arg = a;
	if (vol_lock_wait(o->locks, &a->w) != 0) {
		free(a);
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	/* a release between the first try and the registration woke no one */
	if ((rc = smb_lock_try(o, e)) != -EAGAIN) {
		vol_lock_unwait(o->locks, &a->w);
		free(a);
		return smb_lock_status(rc);
	}
	async_queue(r, a);
	return STATUS_PENDING;
}

uint32_t smb_async_notify(struct smb_req *r, struct smb_open *o, uint32_t output_len)
{
	struct smb_async *a;

	if (!(a = async_new(r, SMB2_CHANGE_NOTIFY, "a CHANGE_NOTIFY")))
		return STATUS_INSUFFICIENT_RESOURCES;
	a->o = o;
	a->output_len = output_len;
	o->nnotify++;
	async_queue(r, a);
	return STATUS_PENDING;
}

/* The break timeout from now. */
static void async_deadline(struct smb_srv *srv, struct timespec *ts)
{
	unsigned ms = vol_lease_timeout(srv->store);

	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000u;
	ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

uint32_t smb_async_create(struct smb_req *r, const struct vol_lock_key *key, uint64_t group)
{
	struct smb_conn *c = r->c;
	struct smb_async *a;

	if (r->resume) { /* served again and still waiting (a new break): wait on */
		r->resume->key = *key;
		r->resume->group = group;
		async_deadline(c->srv, &r->resume->deadline);
		r->async_id = r->resume->async_id;
		if (r->resume->in_frame) { /* its frame parks again */
			r->deferred = r->park = true;
			r->wait = r->resume;
		}
		return STATUS_PENDING;
	}
	/* inside a compound only a CREATE waits (smb_lease.c tells a rename's
	 * or a delete's holders and goes on), and only by parking its frame:
	 * the rest of the compound is served once it is done, as smbd does for
	 * an open that breaks an oplock (MS-SMB2 3.3.5.2.7 note: only such an
	 * open, or the last message, goes async) */
	if (!r->last && (r->m.hdr.command != SMB2_CREATE || !smb_frame_park_ready(r)))
		return STATUS_NOT_SUPPORTED;
	/* SMB2_CREATE or SMB2_SET_INFO */
	if (!(a = async_new(r, r->m.hdr.command, "a CREATE or rename")) || !(a->msg = malloc(r->m.len))) {
		free(a);
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	memcpy(a->msg, r->m.p, r->m.len);
	a->msg_len = r->m.len;
	a->tree_id = r->tree->id;
	a->key = *key;
	a->group = group;
	async_deadline(c->srv, &a->deadline);
	c->srv->ncreates++;
	async_queue(r, a);
	if (!r->last) {
		a->in_frame = true;
		r->deferred = true; /* r->park: smb_frame_park_ready above */
		r->wait = a;
	}
	return STATUS_PENDING;
}

void smb_async_attach(struct smb_async *a, struct smb_frame *f)
{
	a->frame = f;
}

/* A parked compound's CREATE served again (smb_frame_resume_call): its
 * answer goes where it stood, sync and signed as the frame's others. */
static uint32_t async_frame_serve(struct smb_req *r, void *arg, int rc)
{
	struct smb_async *a = arg;

	(void)rc;
	if (!r)
		return STATUS_SUCCESS; /* its session or tree went: the frame answers that */
	r->resume = a;
	r->async_id = 0; /* no interim went: the answer is not async (and is signed) */
	r->deferred = r->park = false;
	return a->command == SMB2_SET_INFO ? smb_info_set(r) : smb_open_create(r);
}

/* Serve a waiting CREATE or SET_INFO again; true when it ended (answered
 * or dropped). */
static bool async_create_resume(struct smb_async *a)
{
	struct smb_sess *s = async_sess(a);
	struct smb_wire_fid related = { 0 };
	struct smb_wire_chain ch;
	struct ut_buf out;
	struct smb_req r;
	uint32_t status;

	if (!s)
		return true;
	memset(&r, 0, sizeof(r));
	smb_wire_chain_init(&ch, a->msg, a->msg_len);
	if (smb_wire_chain_next(&ch, &r.m) != 1)
		return true; /* cannot be: it decoded the first time */
	ut_buf_init(&out, 4096);
	ut_buf_put_zero(&out, SMB2_HDR_LEN);
	r.c = a->c;
	r.out = &out;
	r.sess = s;
	r.tree = smb_tree_find(s, a->tree_id);
	r.encrypted = a->encrypted;
	r.related = &related;
	r.last = true;
	r.resume = a;
	if (!r.tree)
		status = STATUS_NETWORK_NAME_DELETED;
	else
		status = a->command == SMB2_SET_INFO ? smb_info_set(&r) : smb_open_create(&r);
	if (status == STATUS_PENDING) {
		ut_buf_cleanup(&out);
		return false;
	}
	if (status != STATUS_SUCCESS) {
		out.len = SMB2_HDR_LEN;
		out.err = AQ_OK;
		smb_wire_error_rsp_encode(&out);
	}
	async_send(a, s, status, &out);
	ut_buf_cleanup(&out);
	return true;
}

static bool async_expired(const struct smb_async *a, const struct timespec *now)
{
	return now->tv_sec > a->deadline.tv_sec ||
	       (now->tv_sec == a->deadline.tv_sec && now->tv_nsec >= a->deadline.tv_nsec);
}

/* c's waiting CREATEs whose breaks are over (or timed out: revoked) are
 * served again; whether one was answered. */
static bool async_create_run(struct smb_conn *c)
{
	struct vol_store *store = c->srv->store;
	struct timespec now;
	bool sent = false;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct smb_async *a = c->pending, *nx; a; a = nx) {
		nx = a->next;
		if (a->command != SMB2_CREATE && a->command != SMB2_SET_INFO)
			continue;
		if (vol_lease_breaking(store, &a->key, a->group)) {
			if (!async_expired(a, &now))
				continue;
			vol_lease_revoke(store, &a->key);
		}
		if (a->frame) { /* below: its frame may change this list */
			a->ready = true;
			continue;
		}
		if (async_create_resume(a)) {
			async_free(a);
			sent = true;
		}
	}
	/* a compound's CREATE: its frame goes on from it (the rest of the
	 * compound may close opens, log off, wait: the list is looked at again
	 * after each); it is answered, or parked on a again (a->frame set) */
	for (;;) {
		struct smb_async *a;
		struct smb_frame *f;

		for (a = c->pending; a && !(a->ready && a->frame); a = a->next)
			;
		if (!a)
			break;
		a->ready = false;
		f = a->frame;
		a->frame = NULL;
		smb_frame_resume_call(f, async_frame_serve, a, 0, 0);
		if (!a->frame)
			async_free(a);
		sent = true;
	}
	return sent;
}

void smb_async_tick(struct smb_srv *srv)
{
	smb_durable_run(srv); /* kept durable opens past their timeout close */
	if (!srv->ncreates)
		return;
	__atomic_store_n(&srv->async_woken, 1, __ATOMIC_RELEASE);
	smb_async_run(srv);
}

void smb_async_cancel(struct smb_conn *c, const struct smb_wire_msg *m, bool encrypted)
{
	const struct smb_wire_hdr *h = &m->hdr;
	bool async = h->flags & SMB2_FLAGS_ASYNC_COMMAND;
	struct smb_sess *s = smb_sess_find(c, h->session_id);
	struct smb_async *a;
	struct smb_crypto_ctx *cx;
	const uint8_t *key;
	uint16_t alg;

	/* a CANCEL has no response; one that is not its session's is ignored */
	if (!s || s->state != SMB_SESS_VALID || s->logged_off)
		return;
	key = smb_sess_signing_key(s, c, &alg, &cx); /* c's channel's */
	if (!encrypted &&
	    (!(h->flags & SMB2_FLAGS_SIGNED) || smb_crypto_ctx_verify(cx, alg, key, m->p, m->len) != AQ_OK))
		return;
	for (a = c->pending; a; a = a->next)
		if (a->session_id == s->id && (async ? a->async_id == h->async_id : a->message_id == h->message_id))
			break;
	if (!a) {
		smb_read_cancel(c, s, async, async ? h->async_id : h->message_id); /* a READ a worker has (smb_read.c) */
		return;
	}
	if (a->frame) { /* a compound's CREATE: the frame goes on from its CANCELLED */
		struct smb_frame *f = a->frame;

		a->frame = NULL;
		async_free(a);
		smb_frame_resume(f, STATUS_CANCELLED, NULL, 0);
		return;
	}
	async_reply(a, STATUS_CANCELLED, NULL, 0);
	async_free(a);
}

void smb_async_open_gone(struct smb_conn *c, struct smb_open *o)
{
	for (struct smb_async *a = c->pending, *nx; a; a = nx) {
		nx = a->next;
		if (a->o != o)
			continue;
		if (c->freeing)
			;
		else if (a->command == SMB2_CHANGE_NOTIFY)
			async_reply(a, STATUS_NOTIFY_CLEANUP, NULL, 0);
		else
			async_reply(a, smb_lock_try(o, &a->e) == 0 ? STATUS_SUCCESS : STATUS_RANGE_NOT_LOCKED, NULL, 0);
		async_free(a);
	}
}

void smb_async_conn_gone(struct smb_conn *c)
{
	while (c->pending)
		async_free(c->pending);
}

/* o's watch has changes: its oldest waiting CHANGE_NOTIFY gets them (the
 * others wait on); with none waiting they stay queued for the next. */
static bool async_notify_run(struct smb_conn *c, struct smb_open *o)
{
	struct smb_async *oldest = NULL;
	struct ut_buf recs;
	uint32_t status;

	for (struct smb_async *a = c->pending; a; a = a->next)
		if (a->command == SMB2_CHANGE_NOTIFY && a->o == o)
			oldest = a; /* the list is newest first */
	if (!oldest)
		return false;
	ut_buf_init(&recs, oldest->output_len);
	status = smb_notify_collect(o, oldest->output_len, &recs);
	if (status != STATUS_PENDING) {
		async_reply(oldest, status, ut_buf_bytes(&recs), status == STATUS_SUCCESS ? recs.len : 0);
		async_free(oldest);
	}
	ut_buf_cleanup(&recs);
	return status != STATUS_PENDING;
}

void smb_async_run(struct smb_srv *srv)
{
	if (!__atomic_exchange_n(&srv->async_woken, 0, __ATOMIC_ACQ_REL))
		return;
	smb_read_run(srv); /* READs the workers finished (their wake set the flag too) */
	smb_durable_run(srv); /* first: a kept durable open whose break waits closes, its breaker goes on */
	for (struct smb_conn *c = srv->conns; c; c = c->next) {
		bool sent = false;

		for (struct smb_async *a = c->pending, *nx; a; a = nx) {
			int rc;

			nx = a->next;
			if (a->command != SMB2_LOCK || !__atomic_exchange_n(&a->woken, 0, __ATOMIC_ACQ_REL))
				continue;
			if ((rc = smb_lock_try(a->o, &a->e)) == -EAGAIN)
				continue;
			if (rc == 0 && a->seq_bucket) /* granted: a resend of it is a replay (smb_lock.c) */
				*a->seq_bucket = a->seq;
			if (rc == 0) /* read caches of the file go, as for one granted at once */
				smb_lease_lock(srv, a->o);
			async_reply(a, smb_lock_status(rc), NULL, 0);
			async_free(a);
			sent = true;
		}
		if (srv->ncreates)
			sent |= async_create_run(c);
		for (struct smb_sess *s = c->sessions; s; s = s->next)
			for (struct smb_open *o = s->opens; o; o = o->next)
			{
				if (__atomic_exchange_n(&o->notify_woken, 0, __ATOMIC_ACQ_REL))
					sent |= async_notify_run(c, o);
				if (__atomic_exchange_n(&o->break_woken, 0, __ATOMIC_ACQ_REL))
					sent |= smb_lease_run(c, s, o);
			}
		if (sent)
			smb_conn_kick(c);
	}
}
