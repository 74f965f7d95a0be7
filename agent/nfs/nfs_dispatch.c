/* nfs_dispatch: the worker pool (leader/follower: the loop role passes
 * between the workers, nfs_loop.c) and dispatch: parse the call, consult the
 * DRC, decode, run the central checks and the handler, encode, count and
 * reply; QoS parking and the cold pool.
 *
 * Cold reads: a READ whose range touches the cold tier would hold a worker
 * for an object-store round trip (10 ms and more). Unless the tier's chunk
 * cache holds the range whole (a prefetched frame: nfs3_read copies it
 * out on the spot, vol_read_cached), the worker defers it instead, like a QoS-parked request: the request goes to the cold pool
 * (NFS_SRV_COLD_WORKERS threads that may block on the store, each serving
 * one deferred request at a time, and only those) and the worker moves on.
 * The cold pool resumes it where it stopped (struct nfs_job: decoded
 * arguments, resolved object and access verdict kept; the handler runs once
 * more) and sends the reply when the data arrived, so hot calls never wait
 * behind cold ones and the tier sees each READ once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs_srv_internal.h"
#include "agent/vol/vol_lease.h"

/* The program serving (prog, vers); NULL when none does. *known tells
 * whether some version of prog is served, *lo and *hi its lowest and highest
 * (for PROG_MISMATCH). */
static const struct nfs_srv_prog *find_prog(const struct nfs_srv *srv, uint32_t prog, uint32_t vers, bool *known,
					    uint32_t *lo, uint32_t *hi)
{
	const struct nfs_srv_prog *hit = NULL;
	size_t i;

	*known = false;
	*lo = UINT32_MAX;
	*hi = 0;
	for (i = 0; i < srv->nprogs; i++) {
		const struct nfs_prog *p = srv->progs[i].prog;

		if (p->prog != prog)
			continue;
		*known = true;
		*lo = p->vers < *lo ? p->vers : *lo;
		*hi = p->vers > *hi ? p->vers : *hi;
		if (p->vers == vers)
			hit = &srv->progs[i];
	}
	return hit;
}

/* Central checks of NFS_F_FH procedures: resolve, authorize, read-only. */
static uint32_t nfs_precheck(struct nfs_call *call, const struct nfs_proc *p, const void *args)
{
	const struct nfs_fh3 *fh = args;
	int rc = vol_fh_open(call->store, fh->data, fh->len, &call->obj);

	if (rc != 0)
		return nfs3_status(rc);
	call->access = vol_authorize(call->obj.exp, call->peer, VOL_PROTO_NFSV3, &call->cred, &call->ecred);
	if (call->access == VOL_ACCESS_NONE)
		return NFS3ERR_ACCES;
	if ((p->flags & NFS_F_MODIFIES) && call->access != VOL_ACCESS_RW)
		return NFS3ERR_ROFS;
	return NFS3_OK;
}

void nfs_call_recall(struct nfs_call *call, struct vol_obj *obj)
{
	struct vol_lease_by peek = { .nowait = true };

	if (!vol_lease_access(obj, &peek))
		return;
	if (call->srv)
		nfs_dispatch_cover(call->srv); /* the holder's DELEGRETURN comes through the loop */
	(void)vol_lease_access(obj, NULL);
	(void)vol_refresh(obj); /* its flushed writes and size */
}

int nfs_call_ask(struct nfs_call *call, struct vol_obj *obj, uint64_t group)
{
	struct vol_lease_by by = { .group = group, .nowait = true };
	struct vol_lease_attr a;
	int rc;

	if ((rc = vol_lease_ask(obj, &by, &a)) == -EAGAIN) {
		if (call->srv)
			nfs_dispatch_cover(call->srv); /* the holder's CB_GETATTR answer comes through the loop */
		by.nowait = false;
		rc = vol_lease_ask(obj, &by, &a);
	}
	if (rc == 1)
		vol_lease_attr_apply(&a, &obj->st);
	return rc;
}

/* A record that is no call: when it is an RPC REPLY (xid, msg_type 1), the
 * programs that send calls to clients (nfs_prog.reply) get it. */
static void hand_reply(struct nfs_srv *srv, const struct nfs_req *req)
{
	const uint8_t *p = req->rec;

	if (req->len < 8 || p[4] || p[5] || p[6] || p[7] != 1)
		return;
	for (size_t i = 0; i < srv->nprogs; i++)
		if (srv->progs[i].prog->reply)
			srv->progs[i].prog->reply(srv->progs[i].ctx, (uint64_t)(uintptr_t)req->conn, req->rec,
						  req->len);
}

/* Serve one call; true if a reply was handed to nfs_reply_send. */
static bool serve(struct nfs_srv *srv, struct nfs_req *req)
{
	struct nfs_reply *reply = NULL;
	bool replied = false;
	struct rpc_call rc;
	struct ut_buf out = {0};
	struct xdr_cur cur;
	struct nfs_call call;
	const struct nfs_srv_prog *sp = NULL;
	const struct nfs_prog *prog;
	const struct nfs_proc *p = NULL;
	void *args = NULL, *res = NULL;
	uint8_t addr[16], *cached = NULL;
	size_t clen = 0;
	int slot = -1, st;
	uint32_t lo, hi;
	bool found;
	uint64_t t0 = ut_clock_mono_ns();

	memset(&call, 0, sizeof(call));
	call.obj.fd = -1;
	call.file_fd = -1;
	call.may_defer = !req->cold;
	if (req->job) {
		/* The cold pool resumes a deferred call where it stopped. */
		struct nfs_job *j = req->job;

		req->job = NULL;
		rc = j->rc;
		out = j->out;
		call = j->call;
		sp = j->prog;
		prog = sp->prog;
		p = j->p;
		args = j->args;
		res = j->res;
		slot = j->slot;
		t0 = j->t0;
		free(j);
		call.may_defer = false;
		call.deferred = false;
		call.resumed = true;
		goto handle;
	}
	ut_buf_init(&out, NFS_SRV_REPLY_MAX);
	ut_buf_put_zero(&out, 4); /* record mark */
	st = rpc_call_parse(req->rec, req->len, &rc);
	switch (st) {
	case RPC_PARSE_OK:
		break;
	case RPC_PARSE_RPC_MISMATCH:
		rpc_reply_rpc_mismatch(&out, rc.xid);
		goto send;
	case RPC_PARSE_BADCRED:
		rpc_reply_auth_error(&out, rc.xid, RPC_AUTH_BADCRED);
		goto send;
	case RPC_PARSE_TOOWEAK:
		rpc_reply_auth_error(&out, rc.xid, RPC_AUTH_TOOWEAK);
		goto send;
	default:
		hand_reply(srv, req); /* not a call: a reply to one of ours, or nothing to answer */
		goto out;
	}
	sp = find_prog(srv, rc.prog, rc.vers, &found, &lo, &hi);
	if (!found) {
		rpc_reply_accepted(&out, rc.xid, RPC_PROG_UNAVAIL);
		goto send;
	}
	if (!sp) {
		rpc_reply_prog_mismatch(&out, rc.xid, lo, hi);
		goto send;
	}
	prog = sp->prog;
	if (rc.proc >= prog->nprocs || !prog->procs[rc.proc].handler) {
		rpc_reply_accepted(&out, rc.xid, RPC_PROC_UNAVAIL);
		goto send;
	}
	p = &prog->procs[rc.proc];

	call.srv = srv;
	call.store = srv->store;
	call.peer = (const struct sockaddr *)&req->conn->peer;
	call.port = srv->port;
	call.wverf = srv->wverf;
	call.rcred = rc.cred;
	call.ctx = sp->ctx;
	call.conn_id = (uint64_t)(uintptr_t)req->conn;
	call.conn = req->conn;
	if (rc.cred.flavor == RPC_AUTH_SYS) {
		call.cred.uid = rc.cred.uid;
		call.cred.gid = rc.cred.gid;
		call.cred.ngids = rc.cred.ngids;
		memcpy(call.cred.gids, rc.cred.gids, sizeof(call.cred.gids));
	} else {
		call.cred.uid = call.cred.gid = 65534;
	}

	if (p->flags & NFS_F_NOT_IDEMPOTENT) {
		nfs_drc_addr(&req->conn->peer, addr);
		switch (nfs_drc_begin(srv, addr, rc.xid, rc.prog, rc.proc, ut_hash_fnv64(rc.args, rc.args_len),
				  &slot, &cached, &clen)) {
		case DRC_BUSY:
			goto out;
		case DRC_REPLAY:
			ut_buf_rewind(&out, 4); /* keep the mark slot */
			xdr_put_fixed(&out, cached, clen);
			goto send;
		default:
			break;
		}
	}
	args = calloc(1, p->args_size);
	res = calloc(1, p->res_size);
	if (!args || !res) {
		rpc_reply_accepted(&out, rc.xid, RPC_SYSTEM_ERR);
		goto send;
	}
	xdr_cur_init(&cur, rc.args, rc.args_len);
	if (p->decode(&cur, args) != 0) {
		rpc_reply_accepted(&out, rc.xid, RPC_GARBAGE_ARGS);
		goto send;
	}
	if (p->flags & NFS_F_FH) {
		uint32_t status = nfs_precheck(&call, p, args);

		if (status != NFS3_OK) {
			*(uint32_t *)res = status; /* encoders write the failure arm */
			goto handled;
		}
		/* a GETATTR asks a write delegation's holder first (CB_GETATTR),
		 * and recalls only when it does not answer */
		if ((p->flags & NFS_F_RECALL) && !((p->flags & NFS_F_ASK) && nfs_call_ask(&call, &call.obj, 0) >= 0))
			nfs_call_recall(&call, &call.obj);
	}
handle:
	p->handler(&call, args, res);
handled:
	if (call.deferred) {
		/* nfs_dispatch_worker hands it to the cold pool, which resumes it
		 * here; without memory for the job it serves the call anew. */
		struct nfs_job *j = malloc(sizeof(*j));

		req->cold = true;
		if (j) {
			*j = (struct nfs_job){ .rc = rc, .out = out, .call = call, .prog = sp, .p = p,
					       .args = args, .res = res, .slot = slot, .t0 = t0 };
			req->job = j;
			memset(&out, 0, sizeof(out));
			memset(&call, 0, sizeof(call));
			call.obj.fd = -1;
			call.file_fd = -1;
			args = res = NULL;
			slot = -1;
		}
		goto out;
	}
	rpc_reply_accepted(&out, rc.xid, RPC_SUCCESS);
	p->encode(&out, res, &call);
	if (out.err) {
		/* Result did not fit or no memory: answer SYSTEM_ERR. */
		ut_buf_cleanup(&out);
		ut_buf_init(&out, 64);
		ut_buf_put_zero(&out, 4);
		rpc_reply_accepted(&out, rc.xid, RPC_SYSTEM_ERR);
		free(call.data_owner);
		call.data_owner = NULL;
		call.data = NULL;
		call.data_len = 0;
		if (call.file_owned)
			close(call.file_fd);
		call.file_fd = -1;
		call.file_owned = false;
	}
	if (prog == &nfs3_prog && call.obj.exp)
		vol_export_record(call.obj.exp, rc.proc, call.io_bytes, ut_clock_mono_ns() - t0,
				  *(uint32_t *)res != NFS3_OK);
	if (ut_log_enabled(UT_LOG_DEBUG)) { /* one record per call, by xid */
		char xid[9];

		snprintf(xid, sizeof(xid), "%08x", rc.xid);
		if (prog == &nfs3_prog && call.obj.exp)
			ut_log_write(UT_LOG_DEBUG, "nfs_dispatch", xid, "NFSv3 procedure %u: status %u", rc.proc,
				     *(uint32_t *)res);
		else
			ut_log_write(UT_LOG_DEBUG, "nfs_dispatch", xid, "program %u procedure %u", rc.prog, rc.proc);
	}
send:
	if (out.err)
		goto out;
	if (slot >= 0) {
		nfs_drc_end(srv, slot, rc.xid, ut_buf_bytes(&out) + 4, out.len - 4);
		slot = -1;
	}
	if (!(reply = calloc(1, sizeof(*reply))))
		goto out;
	/* The reply takes over the buffer, the data and the object. */
	reply->buf = out;
	memset(&out, 0, sizeof(out));
	reply->data_owner = call.data_owner;
	reply->data = call.data;
	reply->dlen = call.data_len;
	reply->file_fd = call.file_fd;
	reply->file_off = call.file_off;
	reply->file_owned = call.file_owned;
	reply->obj = call.obj;
	call.data_owner = NULL;
	call.file_owned = false;
	call.obj.fd = -1;
	call.obj.fent = NULL;
	call.obj.exp = NULL;
	nfs_reply_send(srv, req->conn, reply);
	replied = true;
out:
	if (slot >= 0)
		nfs_drc_end(srv, slot, rc.xid, NULL, 0);
	if (p && p->free && res)
		p->free(res);
	free(args);
	free(res);
	free(cached);
	free(call.data_owner);
	if (call.file_owned)
		close(call.file_fd);
	vol_obj_cleanup(&call.obj);
	ut_buf_cleanup(&out);
	return replied;
}

/* QoS before any work (issue 5): an NFSv3 call on a file handle is charged
 * to its volume and, when the volume (or its FLEX pool) has no tokens left,
 * parked there instead of served: the worker moves on to other requests and
 * the QoS timer puts this one back on the queue when it is due. Connections
 * are the fairness key. true if parked. */
static bool qos_gate(struct nfs_srv *srv, struct nfs_req *req)
{
	const struct nfs_srv_prog *sp;
	const struct nfs_proc *p;
	struct rpc_call rc;
	struct xdr_cur cur;
	struct nfs_qos_charge ch = { .kind = QOS_META };
	void *args = NULL;
	uint32_t lo, hi;
	bool parked = false, known;

	if (req->admitted || rpc_call_parse(req->rec, req->len, &rc) != RPC_PARSE_OK ||
	    !(sp = find_prog(srv, rc.prog, rc.vers, &known, &lo, &hi)) || rc.proc >= sp->prog->nprocs)
		return false;
	if (sp->prog->qos) {
		/* a program that reads its own charge (NFSv4 COMPOUND) */
		if (!sp->prog->qos(rc.proc, rc.args, rc.args_len, &ch))
			return false;
		goto admit;
	}
	if (sp->prog != &nfs3_prog)
		return false;
	p = &nfs3_prog.procs[rc.proc];
	if (!p->handler || !(p->flags & NFS_F_FH) || !(args = calloc(1, p->args_size)))
		return false;
	xdr_cur_init(&cur, rc.args, rc.args_len);
	if (p->decode(&cur, args) != 0)
		goto out; /* GARBAGE_ARGS is answered by serve() */
	if (rc.proc == NFS3_READ) {
		ch.kind = QOS_READ;
		ch.bytes = ((const struct nfs3_read_args *)args)->count;
	} else if (rc.proc == NFS3_WRITE) {
		ch.kind = QOS_WRITE;
		ch.bytes = ((const struct nfs3_write_args *)args)->len;
	}
	ch.fh = ((const struct nfs_fh3 *)args)->data;
	ch.fh_len = ((const struct nfs_fh3 *)args)->len;
admit:
	req->qi.release = nfs_dispatch_release;
	req->qi.release_arg = srv;
	parked = vol_admit(srv->store, ch.fh, ch.fh_len, (uint64_t)(uintptr_t)req->conn, ch.kind, ch.bytes,
			   &req->qi) == QOS_PARKED;
out:
	free(args);
	return parked;
}

/* Whether r is quick (NFS_F_QUICK; READ and UNSTABLE WRITE of at most
 * NFS_QUICK_BYTES): served without a wait, so the worker that read it
 * may serve it before anyone takes the loop role. A call that is no call of
 * ours is answered at once (serve): quick too. */
static bool req_quick(const struct nfs_srv *srv, const struct nfs_req *r)
{
	const struct nfs_srv_prog *sp;
	struct rpc_call rc;
	uint32_t lo, hi;
	bool known;

	if (rpc_call_parse(r->rec, r->len, &rc) != RPC_PARSE_OK ||
	    !(sp = find_prog(srv, rc.prog, rc.vers, &known, &lo, &hi)) || rc.proc >= sp->prog->nprocs)
		return true;
	if (sp->prog == &nfs3_prog && (rc.proc == NFS3_READ || rc.proc == NFS3_WRITE))
		return nfs3_io_quick(rc.proc, rc.args, rc.args_len);
	return sp->prog->procs[rc.proc].flags & NFS_F_QUICK;
}

void nfs_dispatch_cover(struct nfs_srv *srv)
{
	pthread_mutex_lock(&srv->wq.mu);
	if (!srv->leading && !srv->role_called && !srv->loop_done && srv->idle > 0) {
		srv->role_called = true;
		pthread_cond_signal(&srv->wq.cv);
	}
	pthread_mutex_unlock(&srv->wq.mu);
}

/* Queue r for the pool: an idle worker takes it; when none is idle, the
 * leader is woken out of epoll_wait (evfd, once until it read it) to give
 * up the loop role and serve the queue. */
void nfs_dispatch_push(struct nfs_srv *srv, struct nfs_req *r)
{
	bool kick = false;

	pthread_mutex_lock(&srv->wq.mu);
	ut_fifo_push(&srv->wq.q, &r->node);
	if (srv->idle > 0)
		pthread_cond_signal(&srv->wq.cv);
	else if (srv->leading && !srv->loop_done)
		kick = !atomic_exchange(&srv->kicked, true);
	pthread_mutex_unlock(&srv->wq.mu);
	if (kick) {
		uint64_t one = 1;

		if (write(srv->evfd, &one, sizeof(one)) < 0) {
			/* the counter is full: the leader is woken anyway */
		}
	}
}

/* The QoS timer releases a parked request: back to the workers. */
void nfs_dispatch_release(void *arg, struct qos_item *it)
{
	struct nfs_req *req = (struct nfs_req *)(void *)((char *)it - offsetof(struct nfs_req, qi));

	req->admitted = true;
	nfs_dispatch_push(arg, req);
}

void nfs_conn_inflight_done(struct nfs_srv *srv, struct nfs_conn *c)
{
	pthread_mutex_lock(&c->mu);
	c->inflight--;
	if (c->paused && c->inflight < NFS_SRV_INFLIGHT / 2) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};

		c->paused = false;
		epoll_ctl(srv->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	}
	pthread_mutex_unlock(&c->mu);
}

/* The worker is done with req; its reply (if any) counts in flight until
 * nfs_reply_send wrote it. */
static void req_done(struct nfs_srv *srv, struct nfs_req *req, bool replied)
{
	struct nfs_conn *c = req->conn;

	if (!replied)
		nfs_conn_inflight_done(srv, c);
	atomic_fetch_sub(&srv->queued_bytes, req->len);
	nfs_conn_unref(c);
	free(req->rec);
	free(req);
}

/* Serve one request taken from the queue or read by this worker. */
static void work(struct nfs_srv *srv, struct nfs_req *r)
{
	bool replied;

	if (qos_gate(srv, r))
		return; /* parked: nfs_dispatch_release queues it again */
	replied = serve(srv, r);
	if (r->cold && !replied) {
		ut_fifo_wq_push(&srv->cold_wq, &r->node); /* deferred: cold data */
		return;
	}
	req_done(srv, r, replied);
}

/* Serve a run (the calls one read of a connection brought) in order. A
 * call that is not quick may wait: the rest of the run goes back on the
 * queue to be served beside it, and someone takes the loop role first. */
static void work_run(struct nfs_srv *srv, struct nfs_req *r, bool quick)
{
	while (r) {
		struct nfs_req *next = r->run_next;

		r->run_next = NULL;
		if (!quick) {
			if (next)
				nfs_dispatch_push(srv, next);
			next = NULL;
			nfs_dispatch_cover(srv);
		}
		work(srv, r);
		if ((r = next))
			quick = req_quick(srv, r);
	}
}

/* The loop role ends: the runs of the batch but the leader's own go on the
 * queue and the role is free again; one idle worker is woken per queued
 * run, and one more to take the role while the old leader serves, unless
 * the leader's run is all there is and is one quick call (keep): then the old
 * leader takes the role back itself when it is done (no hand-off on one
 * connection), and wakes someone only before a wait (work_run). */
static void lead_handoff(struct nfs_srv *srv, bool keep)
{
	size_t k;

	pthread_mutex_lock(&srv->wq.mu);
	k = ut_fifo_len(&srv->batch);
	ut_fifo_concat(&srv->wq.q, &srv->batch);
	if (!srv->loop_done) {
		srv->leading = false;
		if (!keep || !ut_fifo_empty(&srv->wq.q))
			k++;
	}
	k = k < srv->idle ? k : srv->idle;
	srv->role_called = srv->role_called || k > 0;
	for (; k > 0; k--)
		pthread_cond_signal(&srv->wq.cv);
	pthread_mutex_unlock(&srv->wq.mu);
}

/* A worker of the leader/follower pool: queued calls first (QoS releases,
 * calls a leader read beyond its own), else the loop role when nobody holds
 * it, else wait. Ends when stopped and the queue is drained. */
void *nfs_dispatch_worker(void *arg)
{
	struct nfs_srv *srv = arg;
	struct ut_fifo_wq *wq = &srv->wq;

	for (;;) {
		struct ut_fifo_node *n;
		struct nfs_req *r;
		bool lead = false;

		pthread_mutex_lock(&wq->mu);
		while (!(n = ut_fifo_pop(&wq->q)) && !wq->stop) {
			if (!srv->leading) {
				srv->leading = lead = true;
				srv->role_called = false;
				break;
			}
			srv->idle++;
			pthread_cond_wait(&wq->cv, &wq->mu);
			srv->idle--;
			srv->role_called = false; /* a wake was taken: the next may be needed */
		}
		pthread_mutex_unlock(&wq->mu);
		if (lead) {
			bool quick;

			r = nfs_loop_lead(srv);
			quick = r && req_quick(srv, r);
			/* keep the role free for ourselves when nothing was read, or one
			 * quick call alone (a client waiting for its reply: nothing to
			 * read meanwhile); a run of several means a pipelining client
			 * whose next calls another worker reads while we serve */
			lead_handoff(srv, r ? quick && !r->run_next : true);
			if (r)
				work_run(srv, r, quick);
			continue;
		}
		if (!n)
			return NULL; /* stopped and drained */
		r = UT_FIFO_ENTRY(n, struct nfs_req, node);
		work_run(srv, r, req_quick(srv, r));
	}
}

/* The cold pool: serves deferred READs, waiting for the store. */
void *nfs_dispatch_cold(void *arg)
{
	struct nfs_srv *srv = arg;
	struct ut_fifo_node *n;

	while ((n = ut_fifo_wq_pop(&srv->cold_wq))) { /* NULL: stopping and drained */
		struct nfs_req *r = UT_FIFO_ENTRY(n, struct nfs_req, node);

		req_done(srv, r, serve(srv, r));
	}
	return NULL;
}
