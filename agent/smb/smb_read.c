/* smb_read: READs that may block, served off the loop thread (issue 23),
 * and the other requests that wait on the disk: a WRITE that syncs
 * (WRITE_THROUGH, or an open made with FILE_WRITE_THROUGH: its fsync and the
 * tier's work before it) or of SMB_WRITE_ASYNC_MIN bytes or more (its copy
 * into the page cache overlaps the loop's receipt of the next ones), a FLUSH, and the cut of a cold file a CREATE
 * overwrites (the tier's work on its cold chunks: smb_open.c finishes the
 * CREATE on the loop when the job ends, smb_frame_resume_call). Those, and
 * a READ inside a compound,
 * park their frame (smb_frame.c): the job has no answer of its own; when it
 * ends the loop resumes the frame with its status and body
 * (smb_frame_resume), no interim is sent, and a CANCEL of a queued one goes
 * through the done list (answered when the CANCEL's frame is done; a WRITE
 * cancelled before a worker took it writes nothing, one that ran answers
 * what it did). What follows is about a lone READ.
 *
 * The loop tries a lone READ (a frame of one message) with vol_read_nowait
 * first: data in the page cache and not in the cold tier, or cold data the
 * tier's chunk cache holds whole (a prefetched frame), is answered there and
 * then. Otherwise (-EAGAIN: a page-cache miss, a cold range not fetched yet,
 * a snapshot's file) the READ becomes a job of a small pool of
 * SMB_READ_WORKERS threads, started with the first such READ. The job holds
 * what the answer needs (MessageId, SessionId, TreeId, the credits asked,
 * whether the request was encrypted), a copy of the open's vol_obj (the
 * worker's fstat writes only its copy) and its open counted (o->nreads): a
 * CLOSE, TREE_DISCONNECT, LOGOFF or dropped connection that frees the open
 * meanwhile leaves the struct and its descriptor to the last job
 * (smb_open_free: o->released), so a worker never reads a closed descriptor.
 * The worker allocates the whole response (header room, READ body, data) and
 * reads into it with vol_read; the loop (smb_read_run, woken through the
 * server's eventfd, like the lock waiters of smb_async.c) writes the header,
 * grants the credits (MS-SMB2 3.3.1.2: what the request asked, within
 * SMB_SRV_CREDITS_MAX; the charge is taken then too), signs or encrypts as
 * the session's other responses and queues it. A job still unanswered
 * SMB_READ_PENDING_MS after it was queued (smb_read_tick, each turn of the
 * loop) gets the interim response (MS-SMB2 3.3.4.2: async, an AsyncId,
 * STATUS_PENDING, the credits; unsigned), and its final answer is then async
 * with CreditResponse 0, as Samba's aio READ after its 500 ms. A READ that
 * ends sooner is answered in the sync form, with no interim at all.
 * - CANCEL (by MessageId, or by AsyncId once the interim went; from the
 *   request's session) of a job still queued
 *   answers STATUS_CANCELLED at once; of one a worker runs, when it ends.
 * - A connection that goes takes its queued jobs with it; running ones end
 *   unanswered (their open released if it was the last reference).
 * Bounds: at most SMB_READ_PER_FILE jobs of one file (device, inode) run at
 * once, so one stalled file cannot hold every worker: its further jobs wait
 * in the queue while other files' jobs pass them. At most SMB_READ_QUEUE_MAX
 * jobs on the node and SMB_READ_FILE_MAX of one file wait or run; past
 * either, the READ is served on the loop as before (counted, logged).
 * Only the loop thread touches a job's c, o and cancelled; the lists are
 * under the pool's mutex; a worker reads only the job's obj, cred and range.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_clock.h"
#include "util/ut_log.h"

enum { JOB_READ, JOB_WRITE, JOB_FLUSH, JOB_TRUNC };

struct smb_read_job {
	struct smb_read_job *next;
	int kind;                    /* JOB_*: a WRITE, FLUSH or TRUNC always has a frame */
	uint16_t command;            /* the request's (SMB2_READ, _WRITE, _FLUSH, _CREATE) */
	bool lone;                   /* a TRUNC: its frame is this one request (an interim may go) */
	smb_frame_cont cont;         /* a TRUNC: what finishes its request (smb_read_queue_trunc) */
	void *cont_arg;
	const uint8_t *data;         /* a WRITE's bytes, in its parked frame's own copy */
	struct vol_lease_by by;      /* who a WRITE is, for the store's breaks */
	bool stable;                 /* a WRITE: file-sync */
	bool ran;                    /* a worker took it (mu) */
	struct smb_conn *c;          /* NULL once its connection went (loop thread) */
	struct smb_open *o;          /* counted in o->nreads */
	struct vol_obj obj;          /* o->obj's copy: the worker's */
	struct vol_cred cred;
	uint64_t off;
	uint32_t len, minimum;
	uint64_t message_id, session_id;
	uint32_t tree_id;
	uint16_t credit_charge, credits_asked;
	bool encrypted, cancelled;
	uint64_t async_id;           /* nonzero once the interim STATUS_PENDING went */
	uint64_t t0_ms;              /* CLOCK_MONOTONIC, when it was queued */
	struct smb_frame *frame;     /* a compound's READ: the frame waiting for it (smb_frame.c) */
	dev_t dev;
	ino_t ino;
	/* the worker's result */
	struct ut_buf out;           /* header room, READ body, data */
	size_t got;
	int rc;
};

struct smb_read_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thr[SMB_READ_WORKERS];
	unsigned nthr;
	bool stop;
	struct smb_read_job *queue, *queue_tail; /* waiting, oldest first */
	struct smb_read_job *running;
	struct smb_read_job *done, *done_tail;   /* for the loop, oldest first */
	unsigned nqueued, nrunning, ndone;
	struct smb_srv *srv;
};

static bool read_same_file(const struct smb_read_job *a, const struct smb_read_job *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* Jobs of j's file in list l. */
static unsigned read_count(const struct smb_read_job *l, const struct smb_read_job *j)
{
	unsigned n = 0;

	for (; l; l = l->next)
		n += read_same_file(l, j);
	return n;
}

/* Take j, whose predecessor in the queue is prev (NULL: the first), off the queue (mu held). */
static void read_unqueue(struct smb_read_pool *p, struct smb_read_job *prev, struct smb_read_job *j)
{
	if (prev)
		prev->next = j->next;
	else
		p->queue = j->next;
	if (p->queue_tail == j)
		p->queue_tail = prev;
	p->nqueued--;
	j->next = NULL;
}

/* The oldest queued job whose file has a running slot free, unlinked (mu held). */
static struct smb_read_job *read_pick(struct smb_read_pool *p)
{
	for (struct smb_read_job *j = p->queue, *prev = NULL; j; prev = j, j = j->next)
		if (read_count(p->running, j) < SMB_READ_PER_FILE) {
			read_unqueue(p, prev, j);
			return j;
		}
	return NULL;
}

/* Read j's range into its response (a worker, no lock held). */
static void read_do(struct smb_read_job *j)
{
	size_t at;
	uint8_t *dst;
	bool eof = false;

	ut_buf_init(&j->out, SMB2_HDR_LEN + 16 + (size_t)j->len);
	ut_buf_put_zero(&j->out, SMB2_HDR_LEN);
	smb_wire_read_rsp_encode(&j->out, 0, 0, 0);
	at = j->out.len;
	if (!(dst = ut_buf_put_room(&j->out, j->len))) { /* filled, then cut to j->got */
		j->rc = -ENOMEM;
		return;
	}
	while (j->got < j->len && !eof) {
		size_t n = j->len - j->got < VOL_IO_MAX ? j->len - j->got : VOL_IO_MAX, one = 0;

		j->rc = vol_read(&j->obj, &j->cred, j->off + j->got, dst + j->got, n, &one, &eof);
		if (j->rc != 0 || one == 0)
			break;
		j->got += one;
	}
	j->out.len = at + j->got;
}

/* A WRITE's bytes, file-sync, or a FLUSH (a worker, no lock held). */
static void read_do_write(struct smb_read_job *j)
{
	int committed;

	if (j->kind == JOB_FLUSH) {
		j->rc = vol_commit(&j->obj, &j->cred);
		return;
	}
	if (j->kind == JOB_TRUNC) {
		struct vol_sattr cut = { .set_size = true, .size = 0 };

		j->rc = vol_setattr_by(&j->obj, &j->cred, &cut, &j->by);
		return;
	}
	/* the whole WRITE (up to SMB_WIRE_IO_MAX) in one call of the store:
	 * one pwrite, one reservation, one fsync when stable (a pwrite of
	 * 8 MiB fills the page cache with less kernel time than 8 of 1 MiB) */
	j->rc = vol_write_by(&j->obj, &j->cred, j->off, j->data, j->len, j->stable ? 2 : 0, &committed, &j->by);
	if (j->rc == 0)
		j->got = j->len;
}

static void read_wake_loop(struct smb_srv *srv)
{
	uint64_t one = 1;

	__atomic_store_n(&srv->async_woken, 1, __ATOMIC_RELEASE);
	if (write(srv->evfd, &one, sizeof(one)) < 0)
		UT_WARN("smb_srv", NULL, "cannot wake the loop for a read: %s", strerror(errno));
}

static void *read_worker(void *arg)
{
	struct smb_read_pool *p = arg;
	struct smb_read_job *j;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		if (!(j = read_pick(p))) {
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		j->next = p->running;
		j->ran = true;
		p->running = j;
		p->nrunning++;
		pthread_mutex_unlock(&p->mu);
		if (j->kind == JOB_READ)
			read_do(j);
		else
			read_do_write(j);
		pthread_mutex_lock(&p->mu);
		for (struct smb_read_job **pp = &p->running; *pp; pp = &(*pp)->next)
			if (*pp == j) {
				*pp = j->next;
				break;
			}
		p->nrunning--;
		j->next = NULL;
		if (p->done_tail)
			p->done_tail->next = j;
		else
			p->done = j;
		p->done_tail = j;
		p->ndone++;
		read_wake_loop(p->srv);
		pthread_cond_broadcast(&p->cv); /* a slot of j's file is free */
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The pool, started at the first job; NULL when it cannot be. */
static struct smb_read_pool *read_pool(struct smb_srv *srv)
{
	struct smb_read_pool *p = srv->reads;

	if (p)
		return p;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->srv = srv;
	for (; p->nthr < SMB_READ_WORKERS; p->nthr++)
		if (pthread_create(&p->thr[p->nthr], NULL, read_worker, p) != 0)
			break;
	if (!p->nthr) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return NULL;
	}
	srv->reads = p;
	return p;
}

/* The open's last job ended: a freed open goes now. */
static void read_open_unref(struct smb_open *o)
{
	if (--o->nreads == 0 && o->released)
		smb_open_release(o);
}

static void read_job_free(struct smb_read_job *j)
{
	smb_frame_free(j->frame); /* still parked: its connection went */
	if (j->o)
		read_open_unref(j->o);
	if (j->cont) /* its request was not finished: it goes unanswered */
		(void)j->cont(NULL, j->cont_arg, 0);
	ut_buf_cleanup(&j->out);
	free(j);
}

/* A job of r on o, its answer's fields filled (NULL: no memory). */
static struct smb_read_job *read_job_new(struct smb_req *r, struct smb_open *o, int kind)
{
	struct smb_read_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->kind = kind;
	j->command = r->m.hdr.command;
	j->o = o;
	j->obj = o->obj;
	j->cred = r->sess->cred;
	j->c = r->c;
	j->message_id = r->m.hdr.message_id;
	j->session_id = r->sess->id;
	j->tree_id = r->tree->id;
	j->credit_charge = r->m.hdr.credit_charge;
	j->credits_asked = r->m.hdr.credits;
	j->encrypted = r->encrypted;
	j->async_id = r->async_final; /* its interim went while QoS held its frame (smb_admit.c): no second one */
	j->t0_ms = ut_clock_mono_ns() / 1000000u;
	j->dev = o->obj.st.st_dev;
	j->ino = o->obj.st.st_ino;
	return j;
}

/* Queue j (of r) within the caps: STATUS_PENDING and r->deferred, or
 * STATUS_INSUFFICIENT_RESOURCES (j freed: the caller serves r on the loop). */
static uint32_t read_enqueue(struct smb_req *r, struct smb_read_pool *p, struct smb_read_job *j)
{
	struct smb_srv *srv = r->c->srv;
	unsigned nfile;

	pthread_mutex_lock(&p->mu);
	nfile = read_count(p->queue, j) + read_count(p->running, j);
	if (p->nqueued + p->nrunning + p->ndone >= SMB_READ_QUEUE_MAX || nfile >= SMB_READ_FILE_MAX) {
		pthread_mutex_unlock(&p->mu);
		srv->reads_inline++;
		UT_DEBUG("smb_srv", NULL, "%s: a request that may block served on the loop: %u jobs on the node, %u of its file",
			 r->c->peer, p->nqueued + p->nrunning + p->ndone, nfile);
		free(j);
		return STATUS_INSUFFICIENT_RESOURCES;
	}
	if (p->queue_tail)
		p->queue_tail->next = j;
	else
		p->queue = j;
	p->queue_tail = j;
	p->nqueued++;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	j->o->nreads++;
	srv->reads_deferred++;
	r->deferred = true;
	r->read_job = j;
	return STATUS_PENDING;
}

uint32_t smb_read_queue(struct smb_req *r, struct smb_open *o, const struct smb_wire_read_req *q)
{
	struct smb_read_pool *p = read_pool(r->c->srv);
	struct smb_read_job *j;

	if (!p || !(j = read_job_new(r, o, JOB_READ)))
		return STATUS_NO_MEMORY; /* the caller reads on the loop */
	j->off = q->offset;
	j->len = q->length;
	j->minimum = q->minimum;
	return read_enqueue(r, p, j);
}

uint32_t smb_read_queue_write(struct smb_req *r, struct smb_open *o, const struct smb_wire_write_req *q, bool stable)
{
	struct smb_read_pool *p = read_pool(r->c->srv);
	struct smb_read_job *j;

	if (!p || !(j = read_job_new(r, o, JOB_WRITE)))
		return STATUS_NO_MEMORY;
	j->off = q->offset;
	j->len = q->data_len;
	j->data = q->data;
	j->stable = stable;
	smb_lease_by(o, &j->by);
	return read_enqueue(r, p, j);
}

uint32_t smb_read_queue_flush(struct smb_req *r, struct smb_open *o)
{
	struct smb_read_pool *p = read_pool(r->c->srv);
	struct smb_read_job *j;

	if (!p || !(j = read_job_new(r, o, JOB_FLUSH)))
		return STATUS_NO_MEMORY;
	return read_enqueue(r, p, j);
}

uint32_t smb_read_queue_trunc(struct smb_req *r, struct smb_open *o, smb_frame_cont fn, void *arg)
{
	struct smb_read_pool *p = read_pool(r->c->srv);
	struct smb_read_job *j;

	if (!p || !(j = read_job_new(r, o, JOB_TRUNC)))
		return STATUS_NO_MEMORY;
	j->cont = fn;
	j->cont_arg = arg;
	j->lone = r->lone;
	smb_lease_by(o, &j->by);
	return read_enqueue(r, p, j);
}

void smb_read_attach(struct smb_read_job *j, struct smb_frame *f)
{
	j->frame = f;
}

/* j's status; on success its READ body (DataLength set) and data follow
 * SMB2_HDR_LEN in j->out (loop thread). */
static uint32_t read_status(struct smb_read_job *j)
{
	uint32_t status = STATUS_SUCCESS;

	if (!j->out.p) { /* never ran (a CANCEL): room for the header and an error body */
		ut_buf_init(&j->out, SMB2_HDR_LEN + 16);
		ut_buf_put_zero(&j->out, SMB2_HDR_LEN);
	}
	if (j->cancelled)
		status = STATUS_CANCELLED;
	else if (j->rc != 0 && j->got == 0)
		status = smb_status_from_errno(j->rc);
	else if ((j->got == 0 && j->len != 0) || j->got < j->minimum)
		status = STATUS_END_OF_FILE;
	else if (j->out.err != AQ_OK)
		status = STATUS_NO_MEMORY;
	if (status == STATUS_SUCCESS) {
		ut_buf_set_le32(&j->out, SMB2_HDR_LEN + 4, (uint32_t)j->got); /* DataLength */
		if (!j->o->released)
			j->o->position = j->off + j->got;
	}
	return status;
}

/* A WRITE's or FLUSH's status (a CANCEL before a worker took it:
 * CANCELLED, nothing written; after: what was done) and answer body. */
static uint32_t read_write_status(struct smb_read_job *j, struct ut_buf *body)
{
	if (j->cancelled && !j->ran)
		return STATUS_CANCELLED;
	if (j->rc != 0)
		return smb_status_from_errno(j->rc);
	if (j->kind == JOB_FLUSH) {
		smb_wire_empty_rsp_encode(body);
	} else {
		smb_wire_write_rsp_encode(body, (uint32_t)j->got);
		if (!j->o->released)
			j->o->position = j->off + j->got; /* the current byte offset moves past what was written */
	}
	return STATUS_SUCCESS;
}

/* A job whose frame waits for it ended: the frame goes on (loop thread). */
static void read_resume(struct smb_read_job *j)
{
	struct smb_frame *f = j->frame;
	struct ut_buf body;
	uint32_t status;

	j->frame = NULL; /* the frame's now: answered, or parked on a later job */
	if (j->kind == JOB_TRUNC) {
		smb_frame_cont fn = j->cont;

		/* the request's open is the continuation's now (it may free it) */
		j->o->nreads--;
		j->o = NULL;
		j->cont = NULL;
		smb_frame_resume_call(f, fn, j->cont_arg, j->cancelled && !j->ran ? -ECANCELED : j->rc, j->async_id);
		return;
	}
	if (j->kind == JOB_READ) {
		status = read_status(j);
		smb_frame_resume(f, status, ut_buf_bytes(&j->out) + SMB2_HDR_LEN,
				 status == STATUS_SUCCESS ? j->out.len - SMB2_HDR_LEN : 0);
		return;
	}
	ut_buf_init(&body, 64);
	status = read_write_status(j, &body);
	smb_frame_resume(f, status, ut_buf_bytes(&body), status == STATUS_SUCCESS ? body.len : 0);
	ut_buf_cleanup(&body);
}

/* j's answer, queued on its connection (loop thread). */
static void read_reply(struct smb_read_job *j)
{
	struct smb_conn *c = j->c;
	struct smb_sess *s = smb_sess_find(c, j->session_id);
	struct smb_wire_hdr rh = { 0 };
	struct ut_buf hb;
	uint32_t status;

	if (j->frame) {
		read_resume(j);
		return;
	}
	if (!s || s->state != SMB_SESS_VALID || c->freeing) {
		UT_DEBUG("smb_srv", NULL, "%s: a READ ends without its session", c->peer);
		return;
	}
	if ((status = read_status(j)) != STATUS_SUCCESS) {
		j->out.len = SMB2_HDR_LEN;
		j->out.err = AQ_OK;
		smb_wire_error_rsp_encode(&j->out);
	}
	rh.credit_charge = j->credit_charge;
	rh.status = status;
	rh.command = SMB2_READ;
	rh.flags = SMB2_FLAGS_SERVER_TO_REDIR;
	if (j->async_id) { /* after an interim: async, its credits went with it (3.3.4.2) */
		rh.flags |= SMB2_FLAGS_ASYNC_COMMAND;
		rh.async_id = j->async_id;
	} else {
		rh.credits = smb_dispatch_credits(c, j->credit_charge, j->credits_asked);
	}
	rh.message_id = j->message_id;
	rh.session_id = j->session_id;
	rh.tree_id = j->tree_id;
	ut_buf_init(&hb, SMB2_HDR_LEN);
	smb_wire_hdr_encode(&hb, &rh);
	if (hb.err == AQ_OK && j->out.len >= SMB2_HDR_LEN)
		memcpy(ut_buf_bytes(&j->out), ut_buf_bytes(&hb), SMB2_HDR_LEN);
	else
		j->out.err = AQ_EINVAL;
	ut_buf_cleanup(&hb);
	if (j->out.err != AQ_OK) {
		c->closing = true;
	} else if (j->encrypted || s->encrypt) {
		smb_dispatch_send_encrypted(c, s, &j->out);
	} else {
		smb_dispatch_sign(c, s, &j->out, 0, j->out.len);
		smb_conn_send_buf(c, &j->out); /* may take j->out's buffer */
	}
	smb_conn_kick(c);
}

/* The interim response of j (MS-SMB2 3.3.4.2): async, STATUS_PENDING, the
 * credits the request earns, an ERROR body; not signed, encrypted when the
 * request was (loop thread). */
static void read_interim(struct smb_read_job *j)
{
	struct smb_wire_hdr q = { .command = j->command, .credit_charge = j->credit_charge, .credits = j->credits_asked,
				  .message_id = j->message_id, .session_id = j->session_id };

	j->async_id = smb_dispatch_interim(j->c, &q, j->encrypted); /* smb_dispatch.c, shared with QoS's parked frames */
}

void smb_read_tick(struct smb_srv *srv)
{
	struct smb_read_pool *p = srv->reads;
	struct smb_read_job *late[64];
	size_t n = 0;
	uint64_t now = ut_clock_mono_ns() / 1000000u;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	for (int l = 0; l < 2; l++)
		for (struct smb_read_job *j = l ? p->running : p->queue; j && n < 64; j = j->next)
			if (j->c && (!j->frame || j->lone) && !j->async_id && !j->cancelled &&
			    now - j->t0_ms >= SMB_READ_PENDING_MS)
				late[n++] = j;
	pthread_mutex_unlock(&p->mu);
	/* a worker may move one to the done list meanwhile, but only this
	 * thread frees jobs and answers them: the final answer comes after */
	for (size_t i = 0; i < n; i++)
		read_interim(late[i]);
}

bool smb_read_busy(const struct smb_srv *srv)
{
	return srv->reads && srv->reads_deferred != srv->reads_ended;
}

void smb_read_run(struct smb_srv *srv)
{
	struct smb_read_pool *p = srv->reads;
	struct smb_read_job *j, *nx;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	j = p->done;
	p->done = p->done_tail = NULL;
	p->ndone = 0;
	pthread_mutex_unlock(&p->mu);
	for (; j; j = nx) {
		nx = j->next;
		if (j->kind == JOB_READ) {
			vol_export_settle(j->obj.exp, j->len, j->got);
			vol_export_record(j->obj.exp, 6 /* NFS READ's slot, as smb_open_read */, j->got, 0, j->rc != 0);
		} else if (j->kind == JOB_WRITE && j->ran) {
			vol_export_record(j->obj.exp, 7 /* NFS WRITE's slot, as smb_open_write */, j->got, 0, j->rc != 0);
		}
		if (j->c)
			read_reply(j);
		read_job_free(j);
		srv->reads_ended++;
	}
}

/* Whether a CANCEL of s on c (by AsyncId when async, else by MessageId) names j. */
static bool read_named(const struct smb_read_job *j, const struct smb_conn *c, const struct smb_sess *s, bool async,
		       uint64_t id)
{
	if (j->c != c || j->session_id != s->id)
		return false;
	return async ? j->async_id != 0 && j->async_id == id : j->message_id == id;
}

bool smb_read_cancel(struct smb_conn *c, const struct smb_sess *s, bool async, uint64_t id)
{
	struct smb_read_pool *p = c->srv->reads;
	struct smb_read_job *j, *found = NULL;
	bool queued = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->mu);
	for (struct smb_read_job *prev = NULL; (j = prev ? prev->next : p->queue); prev = j)
		if (read_named(j, c, s, async, id)) {
			read_unqueue(p, prev, j);
			found = j;
			queued = true;
			break;
		}
	for (j = p->running; !found && j; j = j->next)
		if (read_named(j, c, s, async, id))
			found = j;
	if (found)
		found->cancelled = true;
	if (queued && found->frame) {
		/* a compound's: it goes on once this frame is done
		 * (smb_dispatch_frame's smb_async_run), not inside it */
		if (p->done_tail)
			p->done_tail->next = found;
		else
			p->done = found;
		p->done_tail = found;
		p->ndone++;
		queued = false;
		__atomic_store_n(&c->srv->async_woken, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&p->mu);
	if (queued) { /* no worker has it: answered now */
		read_reply(found);
		read_job_free(found);
		c->srv->reads_ended++;
	}
	return found != NULL;
}

void smb_read_conn_gone(struct smb_conn *c)
{
	struct smb_read_pool *p = c->srv->reads;
	struct smb_read_job *j, *gone = NULL;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	for (struct smb_read_job *prev = NULL; (j = prev ? prev->next : p->queue);) {
		if (j->c != c) {
			prev = j;
			continue;
		}
		read_unqueue(p, prev, j);
		j->next = gone;
		gone = j;
	}
	for (j = p->running; j; j = j->next)
		if (j->c == c)
			j->c = NULL;
	for (j = p->done; j; j = j->next)
		if (j->c == c)
			j->c = NULL;
	pthread_mutex_unlock(&p->mu);
	while ((j = gone)) {
		gone = j->next;
		read_job_free(j);
		c->srv->reads_ended++;
	}
}

void smb_read_stop(struct smb_srv *srv)
{
	struct smb_read_pool *p = srv->reads;
	struct smb_read_job *j;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nthr; i++)
		pthread_join(p->thr[i], NULL);
	/* what the workers finished, and what none took: their connections are gone */
	smb_read_run(srv);
	while ((j = p->queue)) {
		p->queue = j->next;
		read_job_free(j);
		srv->reads_ended++;
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
	srv->reads = NULL;
}
