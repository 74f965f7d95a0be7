/* smb_open: CREATE (dispositions, directory / non-directory options,
 * delete-on-close, share modes: smb_lock.c), CLOSE, READ, WRITE and FLUSH over the volume store,
 * every operation run with the session user's uid/gid. An open keeps the
 * object and its parent directory with the leaf name, for delete and rename.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_grace.h"
#include "api/api_error.h"
#include "util/ut_log.h"

#define FILE_SUPERSEDE 0u
#define FILE_OPEN 1u
#define FILE_CREATE 2u
#define FILE_OPEN_IF 3u
#define FILE_OVERWRITE 4u
#define FILE_OVERWRITE_IF 5u
#define FILE_DIRECTORY_FILE 0x00000001u
#define FILE_WRITE_THROUGH 0x00000002u
#define SMB2_WRITEFLAG_WRITE_THROUGH 0x00000001u
#define FILE_NON_DIRECTORY_FILE 0x00000040u
#define FILE_DELETE_ON_CLOSE 0x00001000u
#define FILE_NO_EA_KNOWLEDGE 0x00000200u
#define FILE_SUPERSEDED 0u
#define FILE_OPENED 1u
#define FILE_CREATED 2u
#define FILE_OVERWRITTEN 3u
#define SECURITY_DELEGATION 3u     /* the highest ImpersonationLevel */
/* what a READONLY file refuses to open for (MS-FSA 2.1.5.1.2.1) */
#define SMB_OPEN_WRITE_ACCESS (0x2u | 0x4u | 0x40000000u | 0x10000000u)
/* FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES, SYNCHRONIZE: an open asking
 * only these is a stat open, which no cached open minds (READ_CONTROL is
 * not one: it breaks, as on Windows and smbd; smbtorture smb2.oplock.statopen1) */
#define SMB_OPEN_STAT_ACCESS (0x80u | 0x100u | 0x100000u)
#define SMB_OPEN_DELETE_ACCESS 0x00010000u
#define SMB_OPEN_GENERIC_ALL 0x10000000u

void smb_open_attrs(const struct smb_open *o, struct smb_wire_attrs *a)
{
	const struct stat *st = &o->obj.st;

	a->creation = smb_filetime(&st->st_mtim) < smb_filetime(&st->st_ctim) ? smb_filetime(&st->st_mtim)
										 : smb_filetime(&st->st_ctim);
	a->last_access = smb_filetime(&st->st_atim);
	a->last_write = smb_filetime(&st->st_mtim);
	a->change = smb_filetime(&st->st_ctim);
	a->eof = S_ISDIR(st->st_mode) ? 0 : (uint64_t)st->st_size;
	a->allocation = S_ISDIR(st->st_mode) ? 0 : (uint64_t)st->st_blocks * 512u;
	if (a->allocation < o->alloc_size && !S_ISDIR(st->st_mode))
		a->allocation = o->alloc_size; /* what its CREATE asked (AlSi), as smbd reports */
	a->attributes = smb_open_dos(o) & ~FILE_ATTRIBUTE_DIRECTORY;
	if (S_ISDIR(st->st_mode))
		a->attributes |= FILE_ATTRIBUTE_DIRECTORY;
	else if (!a->attributes)
		a->attributes = FILE_ATTRIBUTE_NORMAL;
}

bool smb_open_may(const struct smb_open *o, uint32_t bits)
{
	uint32_t a = o->access;

	if (a & (SMB_GENERIC_ALL | SMB_MAXIMUM_ALLOWED))
		return true;
	if (a & SMB_GENERIC_READ)
		a |= SMB_FILE_GENERIC_READ;
	if (a & SMB_GENERIC_WRITE)
		a |= SMB_FILE_GENERIC_WRITE;
	if (a & SMB_GENERIC_EXECUTE)
		a |= SMB_FILE_GENERIC_EXECUTE;
	return (a & bits) == bits;
}

bool smb_open_may_read(const struct smb_open *o)
{
	return smb_open_may(o, SMB_FILE_READ_DATA) || smb_open_may(o, SMB_FILE_EXECUTE);
}

uint32_t smb_open_dos(const struct smb_open *o)
{
	uint32_t dos;

	if (vol_dos_get(&o->obj, &dos) != 0)
		dos = S_ISDIR(o->obj.st.st_mode) ? 0 : FILE_ATTRIBUTE_ARCHIVE;
	return dos;
}

/* The FileAttributes of a CREATE that made or overwrote o: kept (a file
 * also gets ARCHIVE, as Windows gives it) unless they are the default. */
static int smb_open_set_dos(struct smb_open *o, const struct vol_cred *cred, uint32_t attrs, bool dir)
{
	attrs &= SMB_DOS_SETTABLE;
	if (!dir)
		attrs |= FILE_ATTRIBUTE_ARCHIVE;
	if (attrs == (dir ? 0u : FILE_ATTRIBUTE_ARCHIVE) && vol_dos_get(&o->obj, &(uint32_t){ 0 }) == -ENODATA)
		return 0;
	return vol_dos_set(&o->obj, cred, attrs);
}

void smb_open_free(struct smb_sess *s, struct smb_open *o, bool closing)
{
	struct smb_open **pp;

	struct smb_conn *conns[SMB_SESS_MAX_CHANNELS];
	size_t nconns = smb_sess_conns(s, conns, SMB_SESS_MAX_CHANNELS);

	(void)closing;
	/* before its locks go: a waiter granted now is released with it; on
	 * every channel (a request of any of them may wait on o) */
	for (size_t i = 0; i < nconns; i++)
		smb_async_open_gone(conns[i], o);
	vol_watch_remove(o->watch);      /* its CHANGE_NOTIFYs ended NOTIFY_CLEANUP just now */
	for (pp = &s->opens; *pp && *pp != o; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = o->next;
		s->nopens--;
	}
	if (o->delete_on_close && o->parent.fd >= 0) {
		struct vol_cred tc = smb_tree_cred(o->tree, &s->cred, o->write_through);
		struct vol_lease_by by;
		int rc;

		/* other clients caching the handle are told (H), not waited for:
		 * a CLOSE does not go async */
		smb_lease_by(o, &by);
		rc = o->dir ? vol_rmdir(&o->parent, &tc, o->name, strlen(o->name))
			    : vol_remove_by(&o->parent, &tc, o->name, strlen(o->name), &by);

		if (rc != 0)
			UT_INFO("smb_srv", NULL, "delete on close of %s: %s", o->path, strerror(-rc));
	}
	smb_lease_open_gone(o);
	smb_lock_open_gone(o);
	if (o->parent.fd >= 0 || o->parent.exp)
		vol_obj_cleanup(&o->parent);
	smb_open_release(o);
}

void smb_open_release(struct smb_open *o)
{
	if (o->nreads) { /* a worker reads its descriptor: the last READ job releases it */
		o->released = true;
		return;
	}
	smb_alloc_drop(o);
	vol_obj_cleanup(&o->obj);
	if (o->counted)
		o->srv->nopens--;
	free(o);
}

/* Whether an open on the server (a kept durable one too) other than `not`
 * satisfies pred. */
static bool smb_open_any(struct smb_srv *srv, const struct smb_open *not,
			 bool (*pred)(const struct smb_open *o, const struct vol_lock_key *k), const struct vol_lock_key *k)
{
	for (const struct smb_open *x = srv->durable; x; x = x->next)
		if (x != not && pred(x, k))
			return true;
	for (struct smb_conn *c = srv->conns; c; c = c->next)
		for (struct smb_sess *s = c->sessions; s; s = s->next)
			for (const struct smb_open *x = s->opens; x; x = x->next)
				if (x != not && pred(x, k))
					return true;
	return false;
}

static bool smb_open_is(const struct smb_open *o, const struct vol_lock_key *k)
{
	struct vol_lock_key ok;

	if (!o->obj.exp)
		return false;
	vol_lock_key_of(&o->obj, &ok);
	return ok.fsid == k->fsid && ok.dev == k->dev && ok.ino == k->ino;
}

static bool smb_open_pending_delete(const struct smb_open *o, const struct vol_lock_key *k)
{
	return o->delete_pending && smb_open_is(o, k);
}

static bool smb_open_dir_deleter(const struct smb_open *o, const struct vol_lock_key *k)
{
	return o->dir && (o->access & (SMB_OPEN_DELETE_ACCESS | SMB_OPEN_GENERIC_ALL)) && smb_open_is(o, k);
}

bool smb_open_dir_delete_held(struct smb_srv *srv, const struct vol_obj *dir)
{
	struct vol_lock_key k;

	vol_lock_key_of(dir, &k);
	return smb_open_any(srv, NULL, smb_open_dir_deleter, &k);
}

/* Resolve path ('/'-separated, from the share root, or from *start when
 * not NULL: a previous version's root, taken) to its parent directory (in
 * *parent) and leaf name; "" is the root itself (leaf ""). */
int smb_open_walk(struct smb_tree *t, const struct vol_cred *cred, const char *path, struct vol_obj *start,
		  struct vol_obj *parent, char *leaf, size_t leafcap)
{
	const char *p = path, *slash;
	int rc;

	if (start)
		*parent = *start;
	else if ((rc = vol_root(t->exp, parent)) != 0)
		return rc;
	leaf[0] = '\0';
	while (*p) {
		size_t n;

		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || n >= leafcap || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.') ||
		    memchr(p, ':', n)) {
			vol_obj_cleanup(parent);
			return n >= leafcap ? -ENAMETOOLONG : -EINVAL;
		}
		if (!slash) {
			memcpy(leaf, p, n);
			leaf[n] = '\0';
			return 0;
		}
		{
			struct vol_obj next;

			rc = vol_lookup(parent, cred, p, n, &next);
			vol_obj_cleanup(parent);
			if (rc != 0)
				return rc == -ENOENT ? -ENOTDIR : rc; /* a missing folder: PATH_NOT_FOUND */
			*parent = next;
		}
		p = slash + 1;
	}
	return 0;
}

/* A client's UTF-16 path to '/'-separated UTF-8 without leading separators. */
int smb_open_path(const uint8_t *name, size_t len, char *out, size_t cap)
{
	char *p, *q;
	size_t n;

	if (smb_wire_utf16_to_utf8(name, len, out, cap, &n) != AQ_OK)
		return -EINVAL;
	for (p = out; *p; p++)
		if (*p == '\\')
			*p = '/';
	for (p = out; *p == '/'; p++)
		;
	memmove(out, p, strlen(p) + 1);
	for (q = out + strlen(out); q > out && q[-1] == '/'; q--)
		q[-1] = '\0';
	return 0;
}

/* The open's file in the store's lock table, and its share reservation
 * (before anything the open changes: an overwrite truncates only once the
 * share modes allow the open). */
static uint32_t smb_open_reserve(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q)
{
	o->locks = vol_store_locks(r->c->srv->store);
	vol_lock_key_of(&o->obj, &o->lkey);
	return smb_lock_share(o, q->desired_access, q->share_access);
}

/* An existing file: the share reservation, then the breaks of other
 * clients' caching this open makes (smb_lease.c; MS-FSA checks sharing
 * first: a refused open breaks nothing), except that a sharing violation
 * while another client caches the handle (a BATCH oplock, a lease with H)
 * breaks that first and is tried again. An open for attributes only (a
 * stat open) breaks nothing. STATUS_PENDING: the CREATE waits for an
 * acknowledgment (smb_async.c). */
static uint32_t smb_open_existing(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
				  bool overwrite)
{
	uint32_t status;

	/* In the volume's grace period (vol_grace.h) an open that denies others
	 * reading or writing could stand in the way of an NFSv4.1 open or NLM
	 * share still to be reclaimed, as a v4.1 OPEN with deny (NFS4ERR_GRACE)
	 * and NLM SHARE (DENIED_GRACE_PERIOD) are refused. Denying DELETE is no
	 * such conflict (neither protocol reclaims delete access). */
	if (!S_ISDIR(o->obj.st.st_mode) && (~q->share_access & (VOL_SHARE_READ | VOL_SHARE_WRITE)) &&
	    vol_grace_active(o->obj.exp))
		return STATUS_FILE_LOCK_CONFLICT;
	status = smb_open_reserve(r, o, q);
	if (S_ISDIR(o->obj.st.st_mode))
		return status;
	if (status == STATUS_SHARING_VIOLATION && smb_lease_handle_cached(r->c->srv, o)) {
		/* usually waits (then the CREATE is served again); a break with nothing to wait for: again now */
		if ((status = smb_lease_contend(r, o, q, overwrite, true)) != STATUS_SUCCESS)
			return status;
		status = smb_open_reserve(r, o, q);
	}
	if (status != STATUS_SUCCESS || !(q->desired_access & ~SMB_OPEN_STAT_ACCESS))
		return status;
	return smb_lease_contend(r, o, q, overwrite, false);
}

static uint32_t smb_open_status(int rc, bool path)
{
	if (rc == -ENOTDIR && path)
		return STATUS_OBJECT_PATH_NOT_FOUND;
	if (rc == -EINVAL)
		return STATUS_OBJECT_NAME_INVALID;
	return smb_status_from_errno(rc);
}

/* What a CREATE that failed leaves: nothing (its open, reservation and
 * grants go). */
static void create_drop(struct smb_open *o, struct ut_buf *ctx_buf)
{
	ut_buf_cleanup(ctx_buf);
	smb_alloc_drop(o);
	smb_lease_open_gone(o);
	smb_lock_open_gone(o);
	vol_obj_cleanup(&o->obj);
	if (o->parent.fd >= 0)
		vol_obj_cleanup(&o->parent);
	if (o->counted)
		o->srv->nopens--;
	free(o);
}

/* The rest of a CREATE once its object is open and, for an overwrite, its
 * file cut (cut_rc: how that went): the open's flags, grants and contexts,
 * the open joins its session, the answer. The open is dropped on failure. */
static uint32_t create_finish(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			      struct smb_ctx_req *cx, struct smb_wire_create_rsp *rsp, struct ut_buf *ctx_buf,
			      bool overwrite, int cut_rc)
{
	struct smb_wire_create_rsp_ctx ctxs[4];  /* lease, durable handle, MxAc, QFid */
	struct smb_sess *s = r->sess;
	const struct vol_cred *cred = &s->cred;
	uint8_t dh_buf[8];
	uint32_t status;
	int rc = cut_rc;

	if (overwrite) {
		if (rc != 0 || (rc = vol_refresh(&o->obj)) != 0) {
			status = smb_open_status(rc, false);
			goto fail;
		}
		rsp->action = q->disposition == FILE_SUPERSEDE ? FILE_SUPERSEDED : FILE_OVERWRITTEN;
		if ((rc = smb_open_set_dos(o, cred, q->file_attributes, false)) != 0) {
			status = smb_open_status(rc, false);
			goto fail;
		}
	}
	o->dir = S_ISDIR(o->obj.st.st_mode);
	o->write_through = (q->options & FILE_WRITE_THROUGH) != 0; /* every WRITE file-sync (MS-FSA 2.1.5.3) */
	if (q->options & FILE_DELETE_ON_CLOSE) {
		if (o->parent.fd < 0) {
			status = STATUS_ACCESS_DENIED; /* the share root stays */
			goto fail;
		}
		o->delete_on_close = true;
	}
	/* an AlSi the CREATE made or overwrote the file with stays the open's
	 * allocation size while the file's blocks are fewer (smbd's
	 * initial_allocation_size; a durable reconnect keeps it) */
	if (cx->alsi && !o->dir && rsp->action != FILE_OPENED && (status = smb_alloc_hold(o, cx->alloc)) != STATUS_SUCCESS)
		goto fail; /* its room was checked before the file was made: only a race with another writer */
	if ((status = smb_lease_grant(r, o, q, rsp, ctx_buf, &ctxs[0])) != STATUS_SUCCESS ||
	    (status = smb_durable_grant(r, o, q, rsp, ctxs, dh_buf)) != STATUS_SUCCESS)
		goto fail;
	smb_ctx_answer(cx, o, cred, rsp, ctxs);
	/* READ and WRITE check the open's GrantedAccess, not the file's mode
	 * again (MS-SMB2 3.3.5.12, 3.3.5.13): the store checks once here and
	 * keeps the content descriptor for the open's life (a durable one's
	 * reconnects too); what fails here is checked per I/O as before */
	if (!o->dir)
		(void)vol_obj_grant(&o->obj, cred, smb_open_may_read(o),
				    smb_open_may(o, SMB_FILE_WRITE_DATA) || smb_open_may(o, SMB_FILE_APPEND_DATA));
	if (rsp->action == FILE_OPENED && !o->dir && smb_open_may_read(o))
		vol_read_ahead_open(&o->obj); /* a frame's head is on its way before its first READ */
	if (vol_fh_make(r->c->srv->store, &o->obj, &o->fh) != 0)
		o->fh.len = 0;
	o->next = s->opens;
	s->opens = o;
	s->nopens++;
	rsp->fid.persistent = rsp->fid.volatile_ = o->id;
	*r->related = rsp->fid;
	smb_open_attrs(o, &rsp->attrs);
	smb_wire_create_rsp_encode(r->out, r->hdr_off, rsp);
	ut_buf_cleanup(ctx_buf);
	return STATUS_SUCCESS;
fail:
	create_drop(o, ctx_buf);
	return status;
}

/* A CREATE whose overwrite of a cold file a worker makes: what it keeps
 * meanwhile (its request in its parked frame's own bytes). */
struct create_park {
	struct smb_wire_create_req q;
	struct smb_ctx_req cx;
	struct smb_wire_create_rsp rsp;
	struct ut_buf ctx_buf;
	struct smb_open *o;
};

/* The worker's cut ended (smb_read_queue_trunc): the CREATE goes on (loop thread). */
static uint32_t create_resume(struct smb_req *r, void *arg, int rc)
{
	struct create_park *p = arg;
	uint32_t status = STATUS_CANCELLED;

	if (!r || rc == -ECANCELED) /* its session went, or a CANCEL came first: nothing was cut */
		create_drop(p->o, &p->ctx_buf);
	else
		status = create_finish(r, p->o, &p->q, &p->cx, &p->rsp, &p->ctx_buf, true, rc);
	free(p);
	return status;
}

/* Overwrite a cold file off the loop: the tier's work on its cold chunks
 * (and the move it may wait for) would hold every connection. The frame
 * parks (its bytes made its own, the request decoded again from them) and
 * a worker cuts the file; create_resume finishes. false: not parked (the
 * caps, no memory): the caller cuts it here. */
static bool create_park(struct smb_req *r, struct smb_open *o, struct smb_wire_create_rsp *rsp,
			struct ut_buf *ctx_buf)
{
	const struct vol_cred *cred = &r->sess->cred;
	struct create_park *p;

	if (!vol_cold(&o->obj) || !smb_frame_park_ready(r) || !(p = calloc(1, sizeof(*p))))
		return false;
	if (smb_wire_create_req_decode(&r->m, &p->q) != AQ_OK || smb_ctx_check(&p->q, cred, smb_acl_ntfs(r->tree), &p->cx) != STATUS_SUCCESS) {
		free(p);
		return false;
	}
	p->rsp = *rsp;
	p->ctx_buf = *ctx_buf;
	p->o = o;
	if (smb_read_queue_trunc(r, o, create_resume, p) != STATUS_PENDING) {
		free(p);
		return false;
	}
	*ctx_buf = (struct ut_buf){ 0 }; /* the park's now */
	return true;
}

/* The caps (smb_srv_set_open_limits) against the session's and the node's
 * counts, kept where opens join and leave their lists (create_finish,
 * smb_open_free, smb_durable.c), not counted here: a CREATE costs the same
 * whatever the session holds. STATUS_INSUFFICIENT_RESOURCES is MS-SMB2
 * 3.3.5.9's "the server cannot allocate an Open", logged at the first
 * refusal and every 1024th. */
uint32_t smb_open_room(struct smb_req *r, bool counted)
{
	struct smb_srv *srv = r->c->srv;
	unsigned sess_max = __atomic_load_n(&srv->sess_opens_max, __ATOMIC_RELAXED);
	unsigned node_max = __atomic_load_n(&srv->opens_max, __ATOMIC_RELAXED);

	if (r->sess->nopens < sess_max && (counted || srv->nopens < node_max))
		return STATUS_SUCCESS;
	if (srv->opens_refused++ % 1024 == 0)
		UT_WARN("smb_srv", NULL, "%s: %s refused: %s holds %u opens (cap %u), the node %u (cap %u); %llu refused",
			r->c->peer, counted ? "durable reconnect" : "CREATE", r->sess->user.name, r->sess->nopens,
			sess_max, srv->nopens, node_max, (unsigned long long)srv->opens_refused);
	return STATUS_INSUFFICIENT_RESOURCES;
}

uint32_t smb_open_create(struct smb_req *r)
{
	struct smb_wire_create_req q;
	struct smb_wire_create_rsp rsp = { 0 };
	struct smb_ctx_req cx;
	struct ut_buf ctx_buf;
	struct smb_sess *s = r->sess;
	struct vol_cred tc;
	const struct vol_cred *cred = &tc;
	struct smb_open *o;
	struct vol_sattr sa = { .set_mode = true };
	struct vol_obj snap;
	uint32_t status;
	int64_t when = -1;
	bool overwrite = false;
	int rc, cut_rc = 0;

	if (r->tree->ipc)
		return STATUS_OBJECT_NAME_NOT_FOUND; /* no named pipes (no RPC services) */
	ut_buf_init(&ctx_buf, 64);
	if (smb_wire_create_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	/* what this CREATE makes is stable on FLUSH, or now when written through */
	tc = smb_tree_cred(r->tree, &s->cred, (q.options & FILE_WRITE_THROUGH) != 0);
	if ((status = smb_durable_check(&q)) != STATUS_SUCCESS || (status = smb_ctx_check(&q, cred, smb_acl_ntfs(r->tree), &cx)) != STATUS_SUCCESS)
		return status;
	if (smb_durable_asked(&q)) /* DHnC / DH2C: a durable open comes back */
		return smb_durable_reconnect(r, &q);
	if (q.impersonation > SECURITY_DELEGATION)
		return STATUS_BAD_IMPERSONATION_LEVEL;
	/* a name is relative to the share: a leading separator is refused (Windows) */
	if (q.name_len >= 2 && q.name[0] == '\\' && q.name[1] == 0)
		return STATUS_INVALID_PARAMETER;
	if ((q.file_attributes & SMB_DOS_INVALID) ||
	    ((q.options & FILE_DIRECTORY_FILE) && (q.file_attributes & FILE_ATTRIBUTE_TEMPORARY)))
		return STATUS_INVALID_PARAMETER;
	if (q.disposition > FILE_OVERWRITE_IF ||
	    (q.options & (FILE_DIRECTORY_FILE | FILE_NON_DIRECTORY_FILE)) == (FILE_DIRECTORY_FILE | FILE_NON_DIRECTORY_FILE))
		return STATUS_INVALID_PARAMETER;
	if ((status = smb_open_room(r, false)) != STATUS_SUCCESS)
		return status; /* before anything is made: a refused FILE_CREATE leaves no file */
	if (!(o = calloc(1, sizeof(*o))))
		return STATUS_NO_MEMORY;
	o->srv = r->c->srv;
	o->counted = true;
	o->srv->nopens++;
	o->obj.fd = o->parent.fd = -1;
	o->tree = r->tree;
	o->access = q.desired_access;
	o->id = ++r->c->srv->next_open;
	/* the session's, not the channel's: its locks outlive any one channel */
	o->owner = (struct vol_lock_owner){ .proto = VOL_LOCK_SMB, .client = r->sess->client_key, .id = o->id };
	if ((rc = smb_open_path(q.name, q.name_len, o->path, sizeof(o->path))) != 0 ||
	    (rc = smb_prev_strip(o->path, &when)) != 0) {
		status = STATUS_OBJECT_NAME_INVALID;
		goto fail;
	}
	if (smb_prev_twrp(&q, &when) != 0) {
		status = STATUS_INVALID_PARAMETER;
		goto fail;
	}
	/* another client's open of this AppInstanceId goes first, before its
	 * share modes could refuse this one (smb_durable.c) */
	if ((status = smb_durable_app(r, &cx, o)) != STATUS_SUCCESS)
		goto fail;
	/* a previous version: the walk starts at that snapshot's root */
	if (when >= 0 && (rc = smb_prev_open(r->tree, cred, when, &snap)) != 0) {
		status = rc == -ENOENT ? STATUS_OBJECT_PATH_NOT_FOUND : smb_open_status(rc, true);
		goto fail;
	}
	if ((rc = smb_open_walk(r->tree, cred, o->path, when >= 0 ? &snap : NULL, &o->parent, o->name,
				sizeof(o->name))) != 0) {
		status = smb_open_status(rc, true);
		goto fail;
	}
	if (!o->name[0]) { /* the share root */
		o->obj = o->parent;
		o->parent.fd = -1;
		o->parent.exp = NULL;
		rc = 0;
		rsp.action = FILE_OPENED;
	} else {
		rc = vol_lookup(&o->parent, cred, o->name, strlen(o->name), &o->obj);
		if (rc != 0 && rc != -ENOENT) {
			status = smb_open_status(rc, false);
			goto fail;
		}
	}
	if (rc == 0) {
		bool dir = S_ISDIR(o->obj.st.st_mode);
		struct vol_lock_key k;

		vol_lock_key_of(&o->obj, &k);
		if (smb_open_any(r->c->srv, NULL, smb_open_pending_delete, &k)) {
			status = STATUS_DELETE_PENDING; /* MS-FSA 2.1.5.1.2: before any share or oplock check */
			goto fail;
		}
		if (rsp.action != FILE_OPENED && q.disposition == FILE_CREATE) {
			status = STATUS_OBJECT_NAME_COLLISION;
			goto fail;
		}
		if (dir && (q.options & FILE_NON_DIRECTORY_FILE)) {
			status = STATUS_FILE_IS_A_DIRECTORY;
			goto fail;
		}
		if (!dir && (q.options & FILE_DIRECTORY_FILE)) {
			status = STATUS_NOT_A_DIRECTORY;
			goto fail;
		}
		rsp.action = FILE_OPENED;
		overwrite = !dir && (q.disposition == FILE_SUPERSEDE || q.disposition == FILE_OVERWRITE ||
				     q.disposition == FILE_OVERWRITE_IF);
		if (!dir && (smb_open_dos(o) & FILE_ATTRIBUTE_READONLY)) {
			/* a read-only file is opened neither for writing nor to go */
			if (q.options & FILE_DELETE_ON_CLOSE) {
				status = STATUS_CANNOT_DELETE;
				goto fail;
			}
			if ((q.desired_access & SMB_OPEN_WRITE_ACCESS) || overwrite) {
				status = STATUS_ACCESS_DENIED;
				goto fail;
			}
		}
		if ((status = smb_acl_open_allowed(o, cred, q.desired_access, overwrite)) != STATUS_SUCCESS)
			goto fail; /* the DACL on an NTFS-style share, else the POSIX bits */
		/* a client that knows no EAs opens no file that needs one (MS-FSA 2.1.5.1.2.1) */
		if ((q.options & FILE_NO_EA_KNOWLEDGE) && smb_ea_needed(o)) {
			status = STATUS_ACCESS_DENIED;
			goto fail;
		}
		if ((status = smb_open_existing(r, o, &q, overwrite)) != STATUS_SUCCESS ||
		    (overwrite && (status = smb_ctx_room(&cx, &o->obj, false)) != STATUS_SUCCESS))
			goto fail;
		if (overwrite) {
			struct vol_sattr t = { .set_size = true, .size = 0 };
			struct vol_lease_by by;

			/* the EAs first: refused (past what the shelf holds, the
			 * volume full), the file keeps its data */
			if (cx.exta && (status = smb_ea_apply(o, cred, cx.exta, cx.exta_len)) != STATUS_SUCCESS)
				goto fail;
			if (create_park(r, o, &rsp, &ctx_buf))
				return STATUS_PENDING; /* a worker cuts it; create_resume answers */
			smb_lease_by(o, &by);
			cut_rc = vol_setattr_by(&o->obj, cred, &t, &by);
		}
	} else {
		if (q.disposition == FILE_OPEN || q.disposition == FILE_OVERWRITE) {
			status = STATUS_OBJECT_NAME_NOT_FOUND;
			goto fail;
		}
		if ((status = smb_acl_create_allowed(o, cred, (q.options & FILE_DIRECTORY_FILE) != 0)) != STATUS_SUCCESS ||
		    (status = smb_ctx_room(&cx, &o->parent, (q.options & FILE_DIRECTORY_FILE) != 0)) != STATUS_SUCCESS)
			goto fail;
		if (q.options & FILE_DIRECTORY_FILE) { /* NTFS-style: the DACL decides (smb_acl_open.c) */
			sa.mode = smb_acl_ntfs(r->tree) ? 0777 : 0755;
			rc = vol_mkdir(&o->parent, cred, o->name, strlen(o->name), &sa, &o->obj);
		} else {
			sa.mode = smb_acl_ntfs(r->tree) ? 0666 : 0644;
			rc = vol_create(&o->parent, cred, o->name, strlen(o->name), true, NULL, &sa, &o->obj);
		}
		if (rc != 0) {
			status = smb_open_status(rc, false);
			goto fail;
		}
		rsp.action = FILE_CREATED;
		if ((rc = smb_open_set_dos(o, cred, q.file_attributes, S_ISDIR(o->obj.st.st_mode))) != 0) {
			status = smb_open_status(rc, false);
			goto fail;
		}
		if ((status = smb_ctx_apply(&cx, o, cred)) != STATUS_SUCCESS) {
			/* what the contexts asked could not be done (the shelf holds
			 * fewer EAs, a chown the kernel refuses): the object this
			 * CREATE made goes again, so a refused CREATE leaves nothing */
			if (S_ISDIR(o->obj.st.st_mode))
				(void)vol_rmdir(&o->parent, cred, o->name, strlen(o->name));
			else
				(void)vol_remove(&o->parent, cred, o->name, strlen(o->name));
			goto fail;
		}
		if ((status = smb_open_reserve(r, o, &q)) != STATUS_SUCCESS)
			goto fail;
	}
	return create_finish(r, o, &q, &cx, &rsp, &ctx_buf, overwrite, cut_rc);
fail:
	create_drop(o, &ctx_buf);
	return status;
}

uint32_t smb_open_close(struct smb_req *r)
{
	struct smb_wire_close_req q;
	struct smb_wire_close_rsp rsp = { 0 };
	struct smb_open *o;

	if (smb_wire_close_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (q.flags & SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB) {
		vol_refresh(&o->obj);
		rsp.flags = SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB;
		smb_open_attrs(o, &rsp.attrs);
	}
	smb_open_free(r->sess, o, false);
	smb_wire_close_rsp_encode(r->out, &rsp);
	return STATUS_SUCCESS;
}

uint32_t smb_open_read(struct smb_req *r)
{
	struct smb_wire_read_req q;
	struct smb_open *o;
	size_t at, got = 0;
	uint8_t *dst;
	bool eof = false, nowait = r->lone || r->frame;
	uint32_t status;
	int rc = 0;

	if (smb_wire_read_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (o->dir)
		return STATUS_INVALID_DEVICE_REQUEST;
	if (!smb_open_may_read(o))
		return STATUS_ACCESS_DENIED; /* opened without FILE_READ_DATA (or EXECUTE) */
	if ((status = smb_lock_io(o, q.offset, q.length, false)) != STATUS_SUCCESS)
		return status;
	smb_wire_read_rsp_encode(r->out, r->hdr_off, 0, 0);
	at = r->out->len;
	if (!(dst = ut_buf_put_room(r->out, q.length))) /* filled by the reads; cut to what they gave */
		return STATUS_NO_MEMORY;
	/* the store moves at most VOL_IO_MAX a call; a READ first tries what
	 * needs no wait (page cache, not cold) and otherwise goes to a worker
	 * (smb_read.c): a lone READ is answered alone, a compound's frame waits
	 * for it (smb_frame.c); unless their caps are reached */
	while (got < q.length && !eof) {
		size_t n = q.length - got < VOL_IO_MAX ? q.length - got : VOL_IO_MAX, one = 0;
		uint8_t *to = ut_buf_bytes(r->out) + at + got;

		rc = nowait ? vol_read_nowait(&o->obj, &r->sess->cred, q.offset + got, to, n, &one, &eof)
			    : vol_read(&o->obj, &r->sess->cred, q.offset + got, to, n, &one, &eof);
		if (rc == -EAGAIN && nowait) {
			nowait = false;
			if ((r->lone || smb_frame_park_ready(r)) && smb_read_queue(r, o, &q) == STATUS_PENDING) {
				r->out->len = r->hdr_off;
				return STATUS_PENDING;
			}
			continue; /* served here after all, with waits */
		}
		if (rc != 0 || one == 0)
			break;
		got += one;
	}
	vol_export_settle(o->obj.exp, q.length, got);
	vol_export_record(o->obj.exp, 6 /* NFS READ's slot: one counter per kind */, got, 0, rc != 0);
	if (rc != 0 && got == 0)
		return smb_status_from_errno(rc);
	/* a read of nothing succeeds anywhere (MinimumCount 0) */
	if ((got == 0 && q.length != 0) || got < q.minimum)
		return STATUS_END_OF_FILE;
	r->out->len = at + got;
	ut_buf_set_le32(r->out, at - 12, (uint32_t)got);
	o->position = q.offset + got; /* the current byte offset moves past what was read (Windows) */
	return STATUS_SUCCESS;
}

uint32_t smb_open_write(struct smb_req *r)
{
	struct smb_wire_write_req q;
	struct smb_open *o;
	size_t done = 0;
	uint32_t status;
	struct vol_lease_by by;
	int rc = 0, committed;
	bool stable;

	if (smb_wire_write_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (o->dir)
		return STATUS_INVALID_DEVICE_REQUEST;
	if (!smb_open_may(o, SMB_FILE_WRITE_DATA) && !smb_open_may(o, SMB_FILE_APPEND_DATA))
		return STATUS_ACCESS_DENIED; /* opened without FILE_WRITE_DATA or FILE_APPEND_DATA */
	if ((status = smb_lock_io(o, q.offset, q.data_len, true)) != STATUS_SUCCESS)
		return status;
	if (q.data_len)
		smb_alloc_fill(o, q.offset + q.data_len); /* growth into what the open holds */
	/* WRITE_THROUGH (flag 1), or an open made with FILE_WRITE_THROUGH,
	 * asks for stable data: its fsync waits on the disk, so a worker
	 * makes it (smb_read.c) while the frame waits, unless the caps are
	 * reached. A big write goes to a worker too: its copy into the page
	 * cache (and the tier's work, the store's waits) then runs while the
	 * loop receives and checks the next frames (the frame keeps its
	 * receive buffer: no copy) */
	stable = (q.flags & SMB2_WRITEFLAG_WRITE_THROUGH) || o->write_through;
	if ((stable || q.data_len >= SMB_WRITE_ASYNC_MIN) && q.data_len && smb_frame_park_ready(r) &&
	    smb_wire_write_req_decode(&r->m, &q) == AQ_OK &&
	    smb_read_queue_write(r, o, &q, stable) == STATUS_PENDING)
		return STATUS_PENDING;
	while (done < q.data_len) {
		size_t n = q.data_len - done < VOL_IO_MAX ? q.data_len - done : VOL_IO_MAX;

		smb_lease_by(o, &by);
		rc = vol_write_by(&o->obj, &r->sess->cred, q.offset + done, q.data + done, n, stable ? 2 : 0, &committed,
				  &by);
		if (rc != 0)
			break;
		done += n;
	}
	vol_export_record(o->obj.exp, 7 /* NFS WRITE's slot */, done, 0, rc != 0);
	if (rc != 0)
		return smb_status_from_errno(rc);
	o->position = q.offset + done; /* the current byte offset moves past what was written (Windows) */
	smb_wire_write_rsp_encode(r->out, (uint32_t)done);
	return STATUS_SUCCESS;
}

uint32_t smb_open_flush(struct smb_req *r)
{
	struct smb_wire_fid fid;
	struct smb_open *o;
	int rc;

	if (smb_wire_flush_req_decode(&r->m, &fid) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &fid)))
		return STATUS_FILE_CLOSED;
	/* the fsync waits on the disk: a worker makes it, the frame waits */
	if (!o->dir && smb_frame_park_ready(r) && smb_read_queue_flush(r, o) == STATUS_PENDING)
		return STATUS_PENDING;
	if (!o->dir && (rc = vol_commit(&o->obj, &r->sess->cred)) != 0)
		return smb_status_from_errno(rc);
	smb_wire_empty_rsp_encode(r->out);
	return STATUS_SUCCESS;
}
