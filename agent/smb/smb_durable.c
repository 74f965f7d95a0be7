/* smb_durable: durable handles v1 and v2 (MS-SMB2 3.3.5.9.6, 3.3.5.9.7,
 * 3.3.5.9.10, 3.3.5.9.12): an open that survives its TCP connection.
 *
 * Granted (a DHnQ or DH2Q context answered) only to an open holding what
 * lets a client keep a handle it closed: a BATCH oplock or a lease with H
 * (smb_lease.c), not to an open whose delete is pending (SET_INFO
 * disposition; a delete-on-close asked at CREATE is durable, and a kept
 * one deletes its file when it is closed: broken or timed out); persistent handles
 * (SMB2_DHANDLE_FLAG_PERSISTENT, CONTINUOUSLY_AVAILABLE) are not offered:
 * the flag is never echoed. DH2Q's Timeout is honoured up to
 * SMB_DURABLE_MAX_MS (0: SMB_DURABLE_DEFAULT_MS); a v1 handle is kept
 * SMB_DURABLE_V1_MS.
 *
 * When the connection drops or its session logs off (as Windows and Samba:
 * smb2.durable-open.reopen4; not on CLOSE or TREE_DISCONNECT, which close
 * it as any open), or a session set up with PreviousSessionId
 * ends the previous session of the same user while its connection lives
 * (3.3.5.5.3: its requests then get USER_SESSION_DELETED), the open leaves its session and waits on
 * the server's list, with its byte-range locks, share reservation and
 * grant still in the store's tables, so NFS and other SMB clients see them.
 * It ends:
 * - reconnected: a CREATE with DHnC (v1) or DH2C (v2, same CreateGuid)
 *   naming its FileId (its Persistent half, 3.3.5.9.7: the Volatile one is
 *   not compared, nor DH2C's PERSISTENT flag), from the same user (else STATUS_ACCESS_DENIED), on
 *   the same share, with the same lease key when it was leased (else
 *   STATUS_OBJECT_NAME_NOT_FOUND), gets it back in its session: same
 *   FileId, its locks, its file position, the allocation size its CREATE
 *   gave, its oplock or its lease's current state (an oplock's ClientGuid
 *   is not compared: smbtorture's reconnects come with another one, and
 *   Samba takes them; a lease's is, as its lease is the client's, 3.3.5.9.7;
 *   the v1 form takes a v2 handle, the v2 form a v1 handle only with no
 *   CreateGuid);
 * - broken: another open (or an NFS write) breaks caching that needs an
 *   acknowledgment, which a disconnected client cannot give: the open is
 *   closed at once, and the opener goes on (3.3.4.6/3.3.4.7 leave it to the
 *   server; Samba does the same);
 * - expired: its timeout passed (checked each second): closed.
 * - replaced: a CREATE of another client with its AppInstanceId
 *   (smb_durable_app, 3.3.5.9.13) closes it, as it closes a live open.
 * Kept in the agent's memory only: an agent restart or a failover to
 * another node loses them (that is what persistent handles would add).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

#define SMB_DURABLE_V1_MS 60000u       /* a v1 handle is kept a minute (Samba's too) */
#define SMB_DURABLE_DEFAULT_MS 60000u  /* DH2Q Timeout 0 */
#define SMB_DURABLE_MAX_MS 300000u     /* the longest DH2Q Timeout honoured */
#define SMB2_LEASE_HANDLE 0x2u

bool smb_durable_asked(const struct smb_wire_create_req *q)
{
	return smb_wire_create_ctx_find(q, "DHnC") || smb_wire_create_ctx_find(q, "DH2C");
}

uint32_t smb_durable_check(const struct smb_wire_create_req *q)
{
	bool v1 = smb_wire_create_ctx_find(q, "DHnQ") || smb_wire_create_ctx_find(q, "DHnC");
	bool q2 = smb_wire_create_ctx_find(q, "DH2Q"), c2 = smb_wire_create_ctx_find(q, "DH2C");

	/* a v2 context goes with no other durable context (3.3.5.9.10/12); a
	 * v1 reconnect may carry DHnQ too, which it ignores (Samba's client sends both) */
	return (q2 || c2) && (v1 || (q2 && c2)) ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
}

uint32_t smb_durable_grant(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			   struct smb_wire_create_rsp *rsp, struct smb_wire_create_rsp_ctx *ctx, uint8_t *buf)
{
	const struct smb_wire_create_ctx *q1 = smb_wire_create_ctx_find(q, "DHnQ");
	const struct smb_wire_create_ctx *q2 = smb_wire_create_ctx_find(q, "DH2Q");
	struct smb_wire_durable_v2 d = { 0 };
	bool handle = o->oplock == SMB2_OPLOCK_LEVEL_BATCH || (o->leased && (o->lease_state & SMB2_LEASE_HANDLE));

	if (!q1 && !q2)
		return STATUS_SUCCESS;
	if ((q1 && q2) || (q1 && q1->data_len != 16) || (q2 && smb_wire_durable_decode(q2, &d) != AQ_OK))
		return STATUS_INVALID_PARAMETER;
	if (!handle || o->delete_pending || o->dir)
		return STATUS_SUCCESS; /* not durable: no context */
	o->durable = true;
	o->cred = r->sess->cred; /* a delete-on-close open kept is deleted as its user */
	o->durable_v2 = q2 != NULL;
	o->durable_ms = !q2 ? SMB_DURABLE_V1_MS
		      : !d.timeout ? SMB_DURABLE_DEFAULT_MS
		      : d.timeout > SMB_DURABLE_MAX_MS ? SMB_DURABLE_MAX_MS
						       : d.timeout;
	memcpy(o->create_guid, d.create_guid, 16);
	memcpy(o->client_guid, r->c->client_guid, 16); /* a leased one comes back only to its client */
	snprintf(o->owner_project, sizeof(o->owner_project), "%s", r->sess->user.project);
	snprintf(o->owner_name, sizeof(o->owner_name), "%s", r->sess->user.name);
	snprintf(o->share_name, sizeof(o->share_name), "%s", r->tree->share.name);
	memset(buf, 0, 8);
	if (q2) { /* Timeout, Flags (no PERSISTENT) */
		for (int i = 0; i < 4; i++)
			buf[i] = (uint8_t)(o->durable_ms >> (8 * i));
	}
	ctx[rsp->ctx_count] = (struct smb_wire_create_rsp_ctx){ .name = q2 ? "DH2Q" : "DHnQ", .data = buf, .data_len = 8 };
	rsp->ctx = ctx;
	rsp->ctx_count++;
	return STATUS_SUCCESS;
}

/* Close a kept open (off every list already): a delete-on-close one
 * deletes its file first, as its close would have (smbtorture
 * smb2.durable-open.delete_on_close1). */
static void smb_durable_close(struct smb_open *o)
{
	if (o->delete_on_close && o->parent.fd >= 0) {
		struct vol_lease_by by;
		int rc;

		smb_lease_by(o, &by);
		if ((rc = vol_remove_by(&o->parent, &o->cred, o->name, strlen(o->name), &by)) != 0)
			UT_INFO("smb_srv", NULL, "delete on close of kept durable open %s: %s", o->path, strerror(-rc));
	}
	smb_lease_open_gone(o); /* a CREATE waiting on its break goes on */
	smb_lock_open_gone(o);
	vol_watch_remove(o->watch);
	if (o->parent.fd >= 0 || o->parent.exp)
		vol_obj_cleanup(&o->parent);
	smb_open_release(o);
}

/* Keep s's durable opens (off its list) for their owner; how many. */
static unsigned smb_durable_keep(struct smb_conn *c, struct smb_sess *s)
{
	struct smb_srv *srv = c->srv;
	unsigned kept = 0;

	for (struct smb_open **pp = &s->opens, *o; (o = *pp);) {
		if (!o->durable || o->delete_pending) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		s->nopens--;
		smb_async_open_gone(c, o); /* its waiting requests go with the connection */
		o->tree = NULL;
		clock_gettime(CLOCK_MONOTONIC, &o->durable_until);
		o->durable_until.tv_sec += o->durable_ms / 1000u;
		o->durable_until.tv_nsec += (long)(o->durable_ms % 1000u) * 1000000L;
		if (o->durable_until.tv_nsec >= 1000000000L) {
			o->durable_until.tv_sec++;
			o->durable_until.tv_nsec -= 1000000000L;
		}
		o->next = srv->durable;
		srv->durable = o;
		srv->ndurable++;
		kept++;
		UT_INFO("smb_srv", NULL, "%s: durable open %llu of %s kept %u ms", c->peer, (unsigned long long)o->id,
			o->path, o->durable_ms);
	}
	return kept;
}

unsigned smb_durable_sess_gone(struct smb_conn *c, struct smb_sess *s)
{
	return smb_durable_keep(c, s);
}

unsigned smb_durable_conn_gone(struct smb_conn *c)
{
	unsigned kept = 0;

	for (struct smb_sess *s = c->sessions; s; s = s->next)
		kept += smb_durable_keep(c, s);
	return kept;
}

void smb_durable_prev_session(struct smb_req *r, uint64_t prev)
{
	const struct smb_sess *now = r->sess;
	struct smb_sess *s = NULL;
	struct smb_conn *c;

	for (c = r->c->srv->conns; c && !s; c = c->next)
		for (s = c->sessions; s; s = s->next)
			if (s->id == prev && s != now && !s->logged_off && s->state == SMB_SESS_VALID)
				break;
	if (!s || strcmp(s->user.project, now->user.project) || strcmp(s->user.name, now->user.name))
		return; /* none, or another user's: nothing happens (3.3.5.5.3) */
	for (c = r->c->srv->conns; c && c != s->conn; c = c->next)
		;
	if (!c)
		return;
	UT_INFO("smb_srv", NULL, "%s: session reconnect: the previous session %llx ends (%u durable opens kept)", r->c->peer,
		(unsigned long long)prev, smb_durable_keep(c, s));
	for (struct smb_open *o = s->opens; o; o = o->next)
		smb_lock_open_gone(o);
	while (s->opens)
		smb_open_free(s, s->opens, true);
	while (s->trees)
		smb_tree_free(s, s->trees);
	s->logged_off = true; /* its requests now get USER_SESSION_DELETED */
}

void smb_durable_run(struct smb_srv *srv)
{
	struct timespec now;

	if (!srv->ndurable)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct smb_open **pp = &srv->durable, *o; (o = *pp);) {
		bool breaking = false, expired;

		__atomic_store_n(&o->break_woken, 0, __ATOMIC_RELEASE);
		if (o->lease.brk)
			vol_lease_state(srv->store, &o->lease, &breaking, NULL);
		expired = now.tv_sec > o->durable_until.tv_sec ||
			  (now.tv_sec == o->durable_until.tv_sec && now.tv_nsec >= o->durable_until.tv_nsec);
		if (!breaking && !expired) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		srv->ndurable--;
		UT_INFO("smb_srv", NULL, "durable open %llu of %s closed (%s)", (unsigned long long)o->id, o->path,
			breaking ? "its caching is broken" : "timed out");
		smb_durable_close(o);
	}
}

void smb_durable_free_all(struct smb_srv *srv)
{
	while (srv->durable) {
		struct smb_open *o = srv->durable;

		srv->durable = o->next;
		srv->ndurable--;
		smb_durable_close(o);
	}
}

/* Whether kept open o may come back for request r (q): a status. */
static uint32_t smb_durable_match(struct smb_req *r, const struct smb_wire_create_req *q, const struct smb_open *o,
				  bool v2, const struct smb_wire_durable_v2 *d)
{
	const struct smb_wire_create_ctx *lc = smb_wire_create_ctx_find(q, "RqLs");
	struct smb_wire_lease l;
	char path[SMB_WIRE_NAME_MAX];

	/* the v2 form takes a v1 handle only with no CreateGuid (a v1 handle
	 * has none: smbtorture smb2.durable-open.reopen2-lease, durable-v2-open
	 * reopen2c); the v1 form takes a v2 handle too (3.3.5.9.7 compares no
	 * CreateGuid; smbtorture smb2.durable-v2-open.reopen2b) */
	if ((v2 && memcmp(o->create_guid, d->create_guid, 16)) || strcmp(o->share_name, r->tree->share.name))
		return STATUS_OBJECT_NAME_NOT_FOUND;
	/* a leased handle comes back with its key, on a connection of the
	 * client whose lease table holds it (3.3.5.9.7: Lease.LeaseTable's
	 * ClientGuid, smbtorture reopen1a-lease); the RequestedOplockLevel is
	 * not looked at, the lease context alone names the lease (smbd: the
	 * reopen2-lease reconnect with OplockLevel 0x78) */
	if (o->leased) {
		if (!lc || smb_wire_lease_decode(lc, &l) != AQ_OK || memcmp(l.key, o->lease_key, 16) ||
		    memcmp(o->client_guid, r->c->client_guid, 16))
			return STATUS_OBJECT_NAME_NOT_FOUND;
		/* the lease's file by another name (3.3.5.9.7) */
		if (smb_open_path(q->name, q->name_len, path, sizeof(path)) != 0 || strcmp(path, o->path))
			return STATUS_INVALID_PARAMETER;
	} else if (lc) {
		return STATUS_OBJECT_NAME_NOT_FOUND; /* a lease asked of an oplock's handle */
	}
	if (strcmp(o->owner_project, r->sess->user.project) || strcmp(o->owner_name, r->sess->user.name))
		return STATUS_ACCESS_DENIED;
	return STATUS_SUCCESS;
}

uint32_t smb_durable_reconnect(struct smb_req *r, const struct smb_wire_create_req *q)
{
	const struct smb_wire_create_ctx *c1 = smb_wire_create_ctx_find(q, "DHnC");
	const struct smb_wire_create_ctx *c2 = smb_wire_create_ctx_find(q, "DH2C");
	struct smb_srv *srv = r->c->srv;
	struct smb_wire_durable_v2 d;
	struct smb_wire_create_rsp rsp = { 0 };
	struct smb_wire_create_rsp_ctx lctx;
	struct smb_wire_lease got = { 0 };
	struct smb_open **pp, *o;
	struct ut_buf lb;
	uint32_t status;

	if (smb_wire_durable_decode(c2 ? c2 : c1, &d) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	for (pp = &srv->durable; (o = *pp); pp = &o->next)
		if (o->id == d.fid.persistent)
			break;
	if (!o)
		return STATUS_OBJECT_NAME_NOT_FOUND;
	if ((status = smb_durable_match(r, q, o, c2 != NULL, &d)) != STATUS_SUCCESS) {
		UT_INFO("smb_srv", NULL, "%s: reconnect of durable open %llu refused (0x%08x)", r->c->peer,
			(unsigned long long)o->id, status);
		return status;
	}
	/* it joins r's session: under that session's cap like any open (the
	 * node's counts it already); refused, it stays kept for another try */
	if ((status = smb_open_room(r, true)) != STATUS_SUCCESS)
		return status;
	*pp = o->next;
	srv->ndurable--;
	o->tree = r->tree;
	o->next = r->sess->opens;
	r->sess->opens = o;
	r->sess->nopens++;
	vol_refresh(&o->obj);
	ut_buf_init(&lb, 64);
	rsp.action = 1; /* FILE_OPENED */
	rsp.fid.persistent = rsp.fid.volatile_ = o->id;
	rsp.oplock_level = o->leased ? SMB2_OPLOCK_LEVEL_LEASE : o->oplock;
	if (o->leased) {
		memcpy(got.key, o->lease_key, 16);
		got.state = o->lease.brk ? vol_lease_state(srv->store, &o->lease, NULL, NULL) : 0;
		got.v2 = o->lease_v2;
		got.epoch = o->lease_epoch;
		smb_wire_lease_encode(&lb, &got);
		lctx = (struct smb_wire_create_rsp_ctx){ .name = "RqLs", .data = ut_buf_bytes(&lb), .data_len = lb.len };
		rsp.ctx = &lctx;
		rsp.ctx_count = lb.err == AQ_OK ? 1 : 0;
	}
	*r->related = rsp.fid;
	smb_open_attrs(o, &rsp.attrs);
	smb_wire_create_rsp_encode(r->out, r->hdr_off, &rsp);
	ut_buf_cleanup(&lb);
	UT_INFO("smb_srv", NULL, "%s: durable open %llu of %s reconnected", r->c->peer, (unsigned long long)o->id, o->path);
	return STATUS_SUCCESS;
}

/* Whether open x (of client guid, on share xshare) is one a CREATE with cx
 * of path on share must close: its AppInstanceId, path and share, another
 * client. */
static bool smb_durable_app_match(const struct smb_open *x, const uint8_t *guid, const char *xshare,
				  const struct smb_ctx_req *cx, const char *path, const char *share, const uint8_t *my_guid)
{
	return x->app && memcmp(x->app_id, cx->app_id, 16) == 0 && strcmp(x->path, path) == 0 &&
	       strcmp(share, xshare) == 0 && memcmp(guid, my_guid, 16) != 0;
}

/* The 3.1.1 version rule: the old open x is as new as the request or newer. */
static bool smb_durable_app_newer(const struct smb_req *r, const struct smb_ctx_req *cx, const struct smb_open *x)
{
	if (r->c->dialect < SMB2_DIALECT_311 || !cx->app_ver || !x->app_ver || (!x->app_hi && !x->app_lo))
		return false;
	return x->app_hi > cx->app_hi || (x->app_hi == cx->app_hi && x->app_lo >= cx->app_lo);
}

uint32_t smb_durable_app(struct smb_req *r, const struct smb_ctx_req *cx, struct smb_open *o)
{
	struct smb_srv *srv = r->c->srv;
	const char *share = r->tree->share.name;
	bool again = true;

	if (!cx->app || r->c->dialect < SMB2_DIALECT_300)
		return STATUS_SUCCESS; /* 3.x only */
	/* each pass closes one: freeing an open changes the lists walked */
	while (again) {
		again = false;
		for (struct smb_open **pp = &srv->durable, *x; (x = *pp); pp = &x->next)
			if (smb_durable_app_match(x, x->client_guid, x->share_name, cx, o->path, share, r->c->client_guid)) {
				if (smb_durable_app_newer(r, cx, x))
					return STATUS_FILE_FORCED_CLOSED;
				*pp = x->next;
				srv->ndurable--;
				UT_INFO("smb_srv", NULL, "kept open %llu of %s closed: its AppInstanceId came from another client",
					(unsigned long long)x->id, x->path);
				smb_durable_close(x);
				again = true;
				break;
			}
		for (struct smb_conn *c = srv->conns; c && !again; c = c->next)
			for (struct smb_sess *s = c->sessions; s && !again; s = s->next)
				for (struct smb_open *x = s->opens; x; x = x->next) {
					if (!smb_durable_app_match(x, c->client_guid, x->tree->share.name, cx, o->path, share,
								   r->c->client_guid))
						continue;
					if (smb_durable_app_newer(r, cx, x))
						return STATUS_FILE_FORCED_CLOSED;
					UT_INFO("smb_srv", NULL, "open %llu of %s closed: its AppInstanceId came from another client",
						(unsigned long long)x->id, x->path);
					smb_open_free(s, x, true); /* 3.3.4.17: closed, its client told nothing */
					again = true;
					break;
				}
	}
	o->app = true;
	memcpy(o->app_id, cx->app_id, 16);
	o->app_ver = cx->app_ver && r->c->dialect >= SMB2_DIALECT_311;
	o->app_hi = o->app_ver ? cx->app_hi : 0;
	o->app_lo = o->app_ver ? cx->app_lo : 0;
	return STATUS_SUCCESS;
}
