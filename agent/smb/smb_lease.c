/* smb_lease: SMB2 oplocks and leases (MS-SMB2 3.3.5.9, 3.3.4.6, 3.3.4.7,
 * 3.3.5.22) over the volume store's cached-open table (vol_lease.h).
 *
 * Groups: every open is one group in the table (its oplock), except that
 * the opens of one connection naming one lease key are one group (their
 * lease): a group never breaks itself.
 *
 * What is granted (nothing on directories, on IPC$, or on a share whose
 * volume lacks smbSettings OPLOCKS, as Samba with "oplocks = no"):
 * - oplocks: BATCH (R, W and H, lost together) and EXCLUSIVE (R and W)
 *   when no other open of the file exists; else, and for II, Level II (R),
 *   except beside another group's cache of writes (a stat open meets one:
 *   none) or lease with H (none);
 * - leases (RqLs v1 and v2): what the request asks among R, RH, RW, RWH,
 *   without W when an open of another group exists (stat opens, for
 *   attributes only, do not count unless they hold a lease or oplock;
 *   kept durable opens do), R alone beside another open's oplock; a second open
 *   with the same key (on any connection with the same ClientGuid: the
 *   lease table is the client's) joins the lease (its state grows only to
 *   what it asks when that is a superset the other opens allow, else stays;
 *   a v2 epoch grows with it; the lease's opens on every connection follow,
 *   and one broken to nothing is granted again); a key names one file or folder (another: STATUS_INVALID_PARAMETER); the v2
 *   parent key is echoed (PARENT_LEASE_KEY_SET); a lease being broken is
 *   answered with SMB2_LEASE_FLAG_BREAK_IN_PROGRESS.
 *
 * Breaks (the store decides what each operation takes, vol_lease.h):
 * - a CREATE of another group (smb_lease_contend, before the open changes
 *   anything): W (an oplock: to Level II); an overwrite or supersede: R and
 *   W (the client's cache is stale); and when the share modes refuse the
 *   open while another group caches the handle, H first (3.3.5.9: the
 *   sharing violation is answered only once H was given back, so that a
 *   client that keeps a closed handle open for reuse does not block
 *   others);
 * - a change of the file's data through the store (an SMB WRITE or
 *   truncate of another group, an NFSv3/NFSv4.1 WRITE or SETATTR of the
 *   size): R and W. A Level II holder's own write breaks it too (Windows
 *   breaks every open's Level II); a lease's or a BATCH/EXCLUSIVE holder's
 *   does not.
 * - a rename of the file (SET_INFO, smb_lease_rename; the store's
 *   vol_rename does the same for NFS) or its unlink (the store's
 *   vol_remove): H, waited for like a CREATE's (the rename goes async);
 *   the delete of an SMB delete-on-close open at its close breaks H
 *   without waiting (a CLOSE does not go async); NFSv4.1 delegations are
 *   recalled and waited for before that, when the delete is asked for: a
 *   CREATE with FILE_DELETE_ON_CLOSE (VOL_LEASE_OPEN_W) and a SET_INFO
 *   setting the delete disposition (smb_lease_delete) go async until the
 *   delegation is returned or revoked;
 * - a byte-range lock: every Level II oplock and R lease, at once, and
 *   RH leases of other groups to none, acknowledged, not waited for
 *   (smb_lease_lock; a Level II holder's own lock breaks its own, as
 *   Windows does), when the lock is granted: at once, or for a blocking
 *   lock that waited, on the loop thread when it is (smb_async_run); an allocation size set: R (smb_lease_alloc).
 * A stat open breaks nothing; an open the share modes refuse breaks
 * nothing but H.
 * The store flags the holder (smb_lease_wake, on the breaker's thread);
 * the loop thread sends the notification (smb_lease_run) on the connection
 * holding the open's session (its first channel, or another once that one
 * is gone): an oplock break
 * to II or NONE, or a lease break with the current and new state, one per
 * lease, the new v2 epoch, and SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED
 * when H or W is lost. A break losing only R needs no acknowledgment and
 * is done at once. One losing H or W waits for the acknowledgment: the
 * CREATE that caused it goes async (STATUS_PENDING, smb_async.c) and is
 * served again once the break is acknowledged, the holder's open closed,
 * or the break timeout (the store's, 35 s by default) revoked it; an NFS
 * WRITE waits in the store the same way (without the store's locks).
 * A CREATE waits at its first attempt only for what its open needs given
 * back (W; H when the share modes refuse it) or for a break it adds
 * nothing to; served again, for every break on the file (as smbd). A
 * lease's break goes in steps (vol_lease.h): an ack keeping H or W that a
 * later break took is followed by a break to R, then R to none; those
 * further breaks keep the epoch the break had.
 *
 * A break waiting for its acknowledgment whose connection goes (the
 * client may never have read it) is sent again, with its epoch, on the
 * connection the open's session moved to (another channel, 3.3.4.6) or, for
 * a lease, on any connection of its client with an open of it (3.3.4.7):
 * smb_lease_conn_gone; without one the break waits for its timeout.
 *
 * Acknowledgments (3.3.5.22): an oplock acknowledgment of an open whose
 * break waits sets its level (II when the break left R, else NONE; a
 * higher level: STATUS_INVALID_OPLOCK_PROTOCOL); one with no break in
 * progress STATUS_INVALID_OPLOCK_PROTOCOL (an unknown FileId:
 * STATUS_FILE_CLOSED, the level LEASE in the oplock form
 * STATUS_INVALID_PARAMETER). A lease acknowledgment naming a key this
 * client does not hold is STATUS_OBJECT_NAME_NOT_FOUND, one of a lease
 * that is not breaking STATUS_UNSUCCESSFUL, one keeping more than the break
 * left STATUS_REQUEST_NOT_ACCEPTED (nothing changes).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_intent.h"
#include "util/ut_log.h"

#define SMB_LEASE_RWH (SMB2_LEASE_READ_CACHING | SMB2_LEASE_HANDLE_CACHING | SMB2_LEASE_WRITE_CACHING)
#define SMB2_LEASE_FLAG_BREAK_IN_PROGRESS 0x2u
#define SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET 0x4u
/* FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES, READ_CONTROL, SYNCHRONIZE: a stat open's */
#define SMB_LEASE_STAT_ACCESS (0x80u | 0x100u | 0x20000u | 0x100000u)

/* Wake the loop (any thread). */
static void smb_lease_kick(struct smb_srv *srv)
{
	uint64_t one = 1;

	__atomic_store_n(&srv->async_woken, 1, __ATOMIC_RELEASE);
	if (write(srv->evfd, &one, sizeof(one)) < 0)
		UT_DEBUG("smb_srv", NULL, "lease wake: %s", strerror(errno));
}

/* The store's break of o's grant: on the breaker's thread, the table's
 * mutex held: flag and signal only. */
static void smb_lease_wake(struct vol_lease *l, unsigned lost)
{
	struct smb_open *o = l->arg;

	(void)lost;
	__atomic_store_n(&o->break_woken, 1, __ATOMIC_RELEASE);
	smb_lease_kick(o->srv);
}

/* Another open of c's client with lease key key (on any file). */
/* Whether x is a connection of c's client: the lease table is the
 * ClientGuid's (MS-SMB2 3.3.1.10), so a key names one lease on every
 * connection with the same ClientGuid; a zero one names no client (only
 * its own connection). */
static bool smb_lease_same_client(const struct smb_conn *c, const struct smb_conn *x)
{
	static const uint8_t none[16];

	if (x == c)
		return true;
	return !x->freeing && memcmp(c->client_guid, none, 16) != 0 && memcmp(c->client_guid, x->client_guid, 16) == 0;
}

static struct smb_open *smb_lease_find(struct smb_conn *c, const uint8_t key[16], const struct smb_open *not)
{
	for (struct smb_conn *x = c->srv->conns; x; x = x->next)
		if (smb_lease_same_client(c, x))
			for (struct smb_sess *s = x->sessions; s; s = s->next)
				for (struct smb_open *o = s->opens; o; o = o->next)
					if (o != not && o->leased && !memcmp(o->lease_key, key, 16))
						return o;
	return NULL;
}

static bool smb_lease_same_file(const struct smb_open *a, const struct smb_open *b)
{
	return a->lkey.fsid == b->lkey.fsid && a->lkey.dev == b->lkey.dev && a->lkey.ino == b->lkey.ino;
}

/* Whether x (not o, another group) is an open of o's file that keeps o
 * from caching writes: any but a stat open (attributes only), and a stat
 * open too while it holds a lease or an oplock (smbtorture
 * smb2.lease.statopen: a stat open's RWH lease is broken to RH and the
 * other lease gets RH). */
static bool smb_lease_other(struct smb_srv *srv, const struct smb_open *o, const struct smb_open *x)
{
	if (x == o || x->group == o->group || !x->locks || !smb_lease_same_file(x, o))
		return false;
	return (x->access & ~SMB_LEASE_STAT_ACCESS) || (x->lease.brk && vol_lease_held(srv->store, &x->lease));
}

/* Whether an open of another group than o's is on o's file (any
 * connection); stat opens (attributes only) without caching do not count. */
static bool smb_lease_others(struct smb_srv *srv, const struct smb_open *o)
{
	for (const struct smb_open *x = srv->durable; x; x = x->next) /* kept durable opens too */
		if (x->group != o->group && smb_lease_same_file(x, o))
			return true;
	for (struct smb_conn *c = srv->conns; c; c = c->next)
		for (struct smb_sess *s = c->sessions; s; s = s->next)
			for (struct smb_open *x = s->opens; x; x = x->next)
				if (smb_lease_other(srv, o, x))
					return true;
	return false;
}

/* Whether another open of o's file holds an oplock (not a lease): a lease
 * is then granted R at most, as Windows and smbd do (smbtorture
 * smb2.lease.oplock: BATCH, EXCLUSIVE or Level II held, RH asked: R). */
static bool smb_lease_oplocked(struct smb_srv *srv, const struct smb_open *o)
{
	for (const struct smb_open *x = srv->durable; x; x = x->next)
		if (x != o && !x->leased && x->oplock != SMB2_OPLOCK_LEVEL_NONE && smb_lease_same_file(x, o))
			return true;
	for (struct smb_conn *c = srv->conns; c; c = c->next)
		for (struct smb_sess *s = c->sessions; s; s = s->next)
			for (struct smb_open *x = s->opens; x; x = x->next)
				if (x != o && !x->leased && x->oplock != SMB2_OPLOCK_LEVEL_NONE && x->locks &&
				    smb_lease_same_file(x, o))
					return true;
	return false;
}

bool smb_lease_handle_cached(struct smb_srv *srv, const struct smb_open *o)
{
	for (const struct smb_open *x = srv->durable; x; x = x->next) /* a kept durable open: closed by the break */
		if (x->group != o->group && x->lease.brk && smb_lease_same_file(x, o) &&
		    (vol_lease_state(srv->store, &x->lease, NULL, NULL) & VOL_LEASE_H))
			return true;
	for (struct smb_conn *c = srv->conns; c; c = c->next)
		for (struct smb_sess *s = c->sessions; s; s = s->next)
			for (struct smb_open *x = s->opens; x; x = x->next)
				if (x->group != o->group && x->lease.brk && smb_lease_same_file(x, o) &&
				    (vol_lease_state(srv->store, &x->lease, NULL, NULL) & VOL_LEASE_H))
					return true;
	return false;
}

void smb_lease_by(const struct smb_open *o, struct vol_lease_by *by)
{
	/* a lease, or an oplock caching writes, is not broken by its own
	 * writes; a Level II oplock is, as Windows breaks every open's
	 * (smbtorture smb2.oplock.levelii500) */
	by->group = o->leased || o->oplock == SMB2_OPLOCK_LEVEL_EXCLUSIVE || o->oplock == SMB2_OPLOCK_LEVEL_BATCH
			    ? o->group
			    : 0;
	by->nowait = true; /* the loop never blocks: its breaks are waited for asynchronously */
}

uint32_t smb_lease_rename(struct smb_req *r, struct smb_open *o)
{
	if (!o->locks || o->dir || !vol_lease_contend(r->c->srv->store, &o->lkey, VOL_LEASE_H, o->group))
		return STATUS_SUCCESS;
	/* inside a compound (CREATE, SET_INFO, CLOSE, as Windows renames),
	 * where nothing but the last message may go async: the holders are
	 * told, the rename is not refused */
	if (!r->last && !r->resume)
		return STATUS_SUCCESS;
	return smb_async_create(r, &o->lkey, o->group);
}

uint32_t smb_lease_delete(struct smb_req *r, struct smb_open *o)
{
	if (o->dir || !vol_lease_contend(r->c->srv->store, &o->lkey, VOL_LEASE_OPEN_W, o->group))
		return STATUS_SUCCESS;
	if (!r->last && !r->resume)
		return STATUS_SUCCESS; /* as a rename inside a compound: the holders are told */
	return smb_async_create(r, &o->lkey, o->group);
}

void smb_lease_alloc(struct smb_req *r, const struct smb_open *o)
{
	struct vol_lease_by by;

	smb_lease_by(o, &by);
	/* R lost: every other cache goes at once, nothing to wait for */
	(void)vol_lease_contend(r->c->srv->store, &o->lkey, VOL_LEASE_R | VOL_LEASE_W, by.group);
}

void smb_lease_lock(struct smb_srv *srv, const struct smb_open *o)
{
	struct vol_lease_by by;

	smb_lease_by(o, &by); /* a Level II holder's lock breaks its own (smbtorture smb2.oplock.brl1) */
	vol_lease_contend_shared(srv->store, &o->lkey, by.group);
}

/* o's group: its lease key's on a connection of this client, else a new one. */
static void smb_lease_group(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q)
{
	const struct smb_wire_create_ctx *lc = smb_wire_create_ctx_find(q, "RqLs");
	struct smb_wire_lease want;
	struct smb_open *same;

	if (o->group)
		return;
	if (q->oplock_level == SMB2_OPLOCK_LEVEL_LEASE && lc && smb_wire_lease_decode(lc, &want) == AQ_OK &&
	    (same = smb_lease_find(r->c, want.key, o)) && same->group) {
		o->group = same->group;
		return;
	}
	do
		o->group = ++r->c->srv->next_group;
	while (!o->group);
}

uint32_t smb_lease_contend(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			   bool overwrite, bool share_conflict)
{
	struct vol_store *store = r->c->srv->store;
	/* a sharing violation takes only H (the open fails: nothing of the
	 * holder's data is contended; its W goes when an open succeeds:
	 * smbtorture smb2.lease.break_twice); an oplock loses W with H (tied) */
	unsigned lost = share_conflict ? VOL_LEASE_H : VOL_LEASE_W | (overwrite ? VOL_LEASE_R : 0);
	unsigned wait = share_conflict ? VOL_LEASE_H : VOL_LEASE_W;

	/* an open for writing, or one that deletes the file at its close,
	 * recalls NFSv4.1 delegations (vol_lease.h) */
	if (overwrite || smb_lock_wants_write(q->desired_access) || (q->options & 0x00001000u))
		lost |= VOL_LEASE_OPEN_W;

	/* an open for attributes and READ_CONTROL only breaks oplocks, no lease
	 * (smbd's is_lease_stat_open; smbtorture smb2.lease.statopen4,
	 * smb2.oplock.statopen1) */
	if (!(q->desired_access & ~SMB_LEASE_STAT_ACCESS))
		lost |= VOL_LEASE_TIED_ONLY;
	smb_lease_group(r, o, q);
	/* a first attempt waits for W to be given back (dirty data flushed), or
	 * H when the share modes refuse it, or a break it adds nothing to; a
	 * break taking only H from an open that goes ahead is told and not
	 * waited for (as smbd; smbtorture smb2.lease.breaking4: RH to none by an
	 * overwrite). Served again, it waits while any break on the file goes
	 * on (breaking3). */
	if (!vol_lease_contend(store, &o->lkey, lost, o->group) ||
	    (!r->resume && !vol_lease_waits(store, &o->lkey, o->group, lost, wait)))
		return STATUS_SUCCESS;
	return smb_async_create(r, &o->lkey, o->group);
}

/* The caching a lease request gets on o. */
static unsigned smb_lease_state_for(struct smb_srv *srv, const struct smb_open *o, unsigned want)
{
	unsigned state = want & SMB_LEASE_RWH;

	if (!(state & SMB2_LEASE_READ_CACHING))
		return 0; /* H or W without R is no lease state */
	if ((state & SMB2_LEASE_WRITE_CACHING) && smb_lease_others(srv, o))
		state &= ~SMB2_LEASE_WRITE_CACHING;
	if (state != SMB2_LEASE_READ_CACHING && smb_lease_oplocked(srv, o))
		state = SMB2_LEASE_READ_CACHING;
	return state;
}

/* Whether another group's open of o's file caches writes (W held and not
 * being broken away): no Level II beside it. Only a stat open, which breaks
 * nothing, meets one (smbtorture smb2.oplock.exclusive4, batch9a); one that
 * overwrites has broken it by its truncate (exclusive5, batch13). */
static bool smb_lease_writer(struct smb_srv *srv, const struct smb_open *o)
{
	for (struct smb_conn *c = srv->conns; c; c = c->next)
		for (struct smb_sess *s = c->sessions; s; s = s->next)
			for (struct smb_open *x = s->opens; x; x = x->next) {
				bool breaking = false;
				unsigned to = 0, st;

				if (x == o || x->group == o->group || !x->lease.brk || !smb_lease_same_file(x, o))
					continue;
				st = vol_lease_state(srv->store, &x->lease, &breaking, &to);
				if ((breaking ? to : st) & VOL_LEASE_W)
					return true;
			}
	return false;
}

/* Whether another group's lease on o's file caches the handle (H held and
 * not being broken away): no oplock beside it. An oplock's H does not count
 * (a BATCH an overwrite is breaking: smbtorture smb2.oplock.batch13). */
static bool smb_lease_handle_lease(struct smb_srv *srv, const struct smb_open *o)
{
	for (struct smb_conn *c = srv->conns; c; c = c->next)
		for (struct smb_sess *s = c->sessions; s; s = s->next)
			for (struct smb_open *x = s->opens; x; x = x->next) {
				bool breaking = false;
				unsigned to = 0, st;

				if (x == o || !x->leased || x->group == o->group || !x->lease.brk ||
				    !smb_lease_same_file(x, o))
					continue;
				st = vol_lease_state(srv->store, &x->lease, &breaking, &to);
				if ((breaking ? to : st) & VOL_LEASE_H)
					return true;
			}
	return false;
}

/* What a lease holding `held` becomes when an open asks `want` with its
 * key (3.3.5.9.8; smbtorture smb2.lease.upgrade3): the request when it is
 * a valid state, a strict superset of held, and can be held beside the
 * other groups' opens (no W while another group has the file open);
 * else what it holds. */
static unsigned smb_lease_upgrade_to(struct smb_srv *srv, const struct smb_open *o, unsigned held, unsigned want)
{
	want &= SMB_LEASE_RWH;
	if (!(want & SMB2_LEASE_READ_CACHING) || (want & held) != held || want == held)
		return held;
	if ((want & SMB2_LEASE_WRITE_CACHING) && smb_lease_others(srv, o))
		return held;
	if (smb_lease_oplocked(srv, o))
		return held;
	return want;
}

static void smb_lease_setup(struct smb_req *r, struct smb_open *o, unsigned tied)
{
	o->lease.key = o->lkey;
	o->lease.group = o->group;
	o->lease.tied = tied;
	o->lease.brk = smb_lease_wake;
	o->lease.arg = o;
	o->srv = r->c->srv;
}

/* x, another open of a lease that now holds state (held before) with
 * epoch: its grant follows, so that the open left when others close
 * carries the lease's state. */
static void smb_lease_join(struct smb_srv *srv, struct smb_open *x, unsigned state, unsigned held, uint16_t epoch)
{
	if (state && state != held && x->lease.brk && vol_lease_held(srv->store, &x->lease))
		(void)vol_lease_upgrade(srv->store, &x->lease, state);
	else if (state && !held && x->lease.brk)
		(void)vol_lease_grant(srv->store, &x->lease, state);
	x->lease_state = state;
	x->lease_epoch = epoch;
}

uint32_t smb_lease_grant(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			 struct smb_wire_create_rsp *rsp, struct ut_buf *ctx_buf, struct smb_wire_create_rsp_ctx *ctx)
{
	const struct smb_wire_create_ctx *lc = smb_wire_create_ctx_find(q, "RqLs");
	struct smb_srv *srv = r->c->srv;
	struct smb_wire_lease want, got;
	struct smb_open *same = NULL;
	bool on = (r->tree->share.smb_settings & API_INTENT_SMB_OPLOCKS) && !o->dir && o->locks;
	bool breaking = false;
	unsigned state, held = 0;

	rsp->oplock_level = SMB2_OPLOCK_LEVEL_NONE;
	smb_lease_group(r, o, q);
	if (q->oplock_level == SMB2_OPLOCK_LEVEL_LEASE) {
		if (!lc || r->c->dialect < SMB2_DIALECT_210)
			return STATUS_SUCCESS; /* no lease: the client caches nothing */
		if (smb_wire_lease_decode(lc, &want) != AQ_OK)
			return STATUS_INVALID_PARAMETER;
		if ((same = smb_lease_find(r->c, want.key, o)) && !smb_lease_same_file(same, o))
			return STATUS_INVALID_PARAMETER; /* a lease key names one file (3.3.5.9.8), a folder too */
		if (!on)
			return STATUS_SUCCESS;
		if (same) {
			held = vol_lease_state(srv->store, &same->lease, &breaking, NULL);
			held = held ? same->lease_state : 0;
		}
		/* a lease grows only to a superset of what it holds that the other
		 * opens allow (smbtorture smb2.lease.upgrade*, break) */
		state = held ? smb_lease_upgrade_to(srv, o, held, want.state) : smb_lease_state_for(srv, o, want.state);
		if (breaking)
			state = held; /* nothing grows while a break goes on (smb2.lease.breaking3) */
		got = want;
		got.state = state;
		/* a lease keeps the version its first open gave it: a v1 request
		 * joining a v2 lease is answered v2, and the other way round
		 * (smbtorture smb2.lease.v2_epoch2/3) */
		got.v2 = same ? same->lease_v2 : want.v2;
		got.flags = got.v2 && want.v2 ? (want.flags & SMB2_LEASE_FLAG_PARENT_LEASE_KEY_SET) : 0;
		if (breaking)
			got.flags |= SMB2_LEASE_FLAG_BREAK_IN_PROGRESS;
		got.epoch = same ? same->lease_epoch : (uint16_t)(want.epoch + 1);
		if (same && held && state != held)
			got.epoch++; /* the lease grew: a new epoch (v2) */
		if (!got.v2)
			got.epoch = 0;
		if (!got.v2 || !want.v2)
			memset(got.parent_key, 0, sizeof(got.parent_key));
		smb_lease_setup(r, o, 0);
		/* joining a lease being broken: its state is the breaking open's
		 * (told with BREAK_IN_PROGRESS), no second grant to break apart */
		if (state && !breaking && vol_lease_grant(srv->store, &o->lease, state) != 0)
			got.state = state = 0; /* the table is full: no caching, still an answer */
		memcpy(o->lease_key, want.key, 16);
		o->leased = true;
		o->lease_v2 = got.v2;
		o->lease_epoch = got.epoch;
		o->lease_state = state;
		/* the lease's other opens here hold what it holds now, their grants
		 * too: the open left when others close carries the lease's state
		 * (smbtorture smb2.lease.v2_epoch2/3); one whose grant was broken to
		 * nothing is granted again (smb2.lease.nobreakself: the lease is R
		 * again after its new open closes) */
		for (struct smb_conn *c2 = srv->conns; c2; c2 = c2->next)
			if (smb_lease_same_client(r->c, c2))
				for (struct smb_sess *s = c2->sessions; s; s = s->next)
					for (struct smb_open *x = s->opens; x; x = x->next)
						if (x != o && x->leased && !memcmp(x->lease_key, want.key, 16))
							smb_lease_join(srv, x, state, held, got.epoch);
		smb_wire_lease_encode(ctx_buf, &got);
		if (ctx_buf->err != AQ_OK)
			return STATUS_INSUFFICIENT_RESOURCES;
		*ctx = (struct smb_wire_create_rsp_ctx){ .name = "RqLs", .data = ut_buf_bytes(ctx_buf),
							 .data_len = ctx_buf->len };
		rsp->oplock_level = SMB2_OPLOCK_LEVEL_LEASE;
		rsp->ctx = ctx;
		rsp->ctx_count = 1;
		return STATUS_SUCCESS;
	}
	if (!on || q->oplock_level == SMB2_OPLOCK_LEVEL_NONE)
		return STATUS_SUCCESS;
	/* no oplock beside a lease of another group caching the handle (Windows
	 * and smbd; smbtorture smb2.lease.oplock: RH held, BATCH asked: none) */
	if (smb_lease_handle_lease(srv, o))
		return STATUS_SUCCESS;
	/* BATCH and EXCLUSIVE when the file is o's alone, else Level II */
	if (q->oplock_level == SMB2_OPLOCK_LEVEL_BATCH && !smb_lease_others(srv, o))
		o->oplock = SMB2_OPLOCK_LEVEL_BATCH;
	else if (q->oplock_level == SMB2_OPLOCK_LEVEL_EXCLUSIVE && !smb_lease_others(srv, o))
		o->oplock = SMB2_OPLOCK_LEVEL_EXCLUSIVE;
	else if (smb_lease_writer(srv, o))
		return STATUS_SUCCESS; /* no Level II beside a cache of writes (a stat open's: smb2.oplock.exclusive4, batch9a) */
	else
		o->oplock = SMB2_OPLOCK_LEVEL_II;
	state = o->oplock == SMB2_OPLOCK_LEVEL_BATCH	  ? VOL_LEASE_R | VOL_LEASE_W | VOL_LEASE_H
		: o->oplock == SMB2_OPLOCK_LEVEL_EXCLUSIVE ? VOL_LEASE_R | VOL_LEASE_W
							   : VOL_LEASE_R;
	smb_lease_setup(r, o, VOL_LEASE_H | VOL_LEASE_W);
	if (vol_lease_grant(srv->store, &o->lease, state) != 0)
		o->oplock = SMB2_OPLOCK_LEVEL_NONE;
	rsp->oplock_level = o->oplock;
	return STATUS_SUCCESS;
}

void smb_lease_open_gone(struct smb_open *o)
{
	bool breaking = false;

	if (!o->srv || !o->lease.brk)
		return;
	if (vol_lease_state(o->srv->store, &o->lease, &breaking, NULL) && breaking)
		smb_lease_kick(o->srv); /* a CREATE waiting for this break goes on */
	vol_lease_drop(o->srv->store, &o->lease);
}

/* Send c one unsolicited OPLOCK_BREAK (MessageId all ones, no session:
 * MS-SMB2 3.3.4.6/7), encrypted when s encrypts. */
static void smb_lease_send(struct smb_conn *c, struct smb_sess *s, const struct smb_open *o, uint32_t to, bool ack)
{
	struct smb_wire_hdr h = { 0 };
	struct ut_buf out;
	struct smb_wire_fid fid = { .persistent = o->id, .volatile_ = o->id };

	ut_buf_init(&out, 256);
	h.command = SMB2_OPLOCK_BREAK;
	h.flags = SMB2_FLAGS_SERVER_TO_REDIR;
	h.message_id = UINT64_MAX;
	h.session_id = s->encrypt ? s->id : 0;
	smb_wire_hdr_encode(&out, &h);
	if (o->leased)
		smb_wire_lease_break_encode(&out, o->lease_v2 ? o->lease_epoch : 0,
					    ack ? SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED : 0, o->lease_key,
					    o->lease_state, to);
	else
		smb_wire_oplock_break_encode(&out, (uint8_t)to, &fid);
	if (out.err != AQ_OK)
		c->closing = true;
	else if (s->encrypt)
		smb_dispatch_send_encrypted(c, s, &out);
	else
		smb_conn_send(c, ut_buf_bytes(&out), out.len);
	ut_buf_cleanup(&out);
}

/* Where a lease's break goes: the oldest live connection of o's client
 * (the lowest key among the connections with o's ClientGuid that hold a
 * valid session), as Windows sends it, also for a lease whose opens are all
 * on a later connection (smbtorture smb2.lease.v2_complex1), with o's
 * session when it is there, else that connection's first valid one (whose
 * keys encrypt it); *c and *s are left as they are when none is older. */
static void smb_lease_conn_for(struct smb_conn **c, struct smb_sess **s)
{
	struct smb_conn *from = *c;

	for (struct smb_conn *c2 = from->srv->conns; c2; c2 = c2->next) {
		struct smb_sess *s2 = NULL;

		if (c2->key >= (*c)->key || c2->freeing || c2->closing || !smb_lease_same_client(from, c2))
			continue;
		for (s2 = c2->sessions; s2 && (s2->state != SMB_SESS_VALID || s2->logged_off); s2 = s2->next)
			;
		if (!s2)
			continue;
		*c = c2;
		*s = (*s)->conn == c2 ? *s : s2;
	}
}

bool smb_lease_run(struct smb_conn *c, struct smb_sess *s, struct smb_open *o)
{
	struct smb_conn *home = c;
	bool breaking = false;
	unsigned now, to;

	if (c->freeing || (!o->leased && o->oplock == SMB2_OPLOCK_LEVEL_NONE) || !o->lease.brk)
		return false;
	now = vol_lease_state(c->srv->store, &o->lease, &breaking, &to);
	if (!breaking)
		to = now;
	if (breaking && o->break_sent)
		return false; /* told already (another open of the lease) */
	if (o->leased && !breaking && o->break_sent) {
		/* the store revoked the break nobody acknowledged (the break
		 * timeout): the lease holds what is left (nothing), and the client
		 * is told nothing more (Windows; smbtorture smb2.lease.timeout) */
		o->break_sent = o->break_next = false;
		o->lease_state = now;
		return false;
	}
	if (o->leased) {
		if (to == o->lease_state)
			return false; /* told already (another open of the lease) */
		smb_lease_conn_for(&c, &s);
		if (!o->break_next)
			o->lease_epoch++;
		o->break_next = false;
		o->break_sent = breaking;
		o->break_on = c->key;
		smb_lease_send(c, s, o, to, breaking);
		if (c != home)
			smb_conn_kick(c); /* the caller kicks its own connection */
		/* one notification per lease: its other opens (on any connection
		 * of the client) were broken with it */
		for (struct smb_conn *c2 = c->srv->conns; c2; c2 = c2->next)
			if (smb_lease_same_client(c, c2))
				for (struct smb_sess *s2 = c2->sessions; s2; s2 = s2->next)
					for (struct smb_open *x = s2->opens; x; x = x->next)
						if (x != o && x->leased && !memcmp(x->lease_key, o->lease_key, 16)) {
							__atomic_store_n(&x->break_woken, 0, __ATOMIC_RELEASE);
							x->lease_epoch = o->lease_epoch;
							x->break_sent = breaking;
							x->break_on = c->key;
							x->break_next = false;
							if (!breaking)
								x->lease_state = to;
						}
		if (!breaking)
			o->lease_state = to;
		return true;
	}
	/* an oplock: EXCLUSIVE or BATCH break to II (R left) or NONE, and wait for the ack */
	o->break_sent = breaking;
	o->break_on = c->key;
	smb_lease_send(c, s, o, (to & VOL_LEASE_R) ? SMB2_OPLOCK_LEVEL_II : SMB2_OPLOCK_LEVEL_NONE, breaking);
	if (!breaking)
		o->oplock = SMB2_OPLOCK_LEVEL_NONE;
	return true;
}

unsigned smb_lease_conn_gone(struct smb_conn *c)
{
	unsigned again = 0;

	for (struct smb_conn *x = c->srv->conns; x; x = x->next) {
		if (x == c || x->freeing)
			continue;
		for (struct smb_sess *s = x->sessions; s; s = s->next)
			for (struct smb_open *o = s->opens; o; o = o->next) {
				if (!o->break_sent || o->break_on != c->key)
					continue;
				/* the client may never have read it: once more, as it was
				 * (smb_lease_run sends one per lease; no new epoch) */
				o->break_sent = false;
				o->break_next = true;
				__atomic_store_n(&o->break_woken, 1, __ATOMIC_RELEASE);
				again++;
			}
	}
	if (again) {
		UT_INFO("smb_srv", NULL, "%s: connection gone with %u breaks unacknowledged: sent again on another", c->peer,
			again);
		smb_lease_kick(c->srv);
	}
	return again;
}

/* Acknowledge state for the opens of lease key on x whose break waits:
 * STATUS_SUCCESS when one was, STATUS_REQUEST_NOT_ACCEPTED when state keeps
 * more than the break left, else `status` as it was. */
static uint32_t smb_lease_ack_conn(struct vol_store *store, struct smb_conn *x, const uint8_t key[16],
				   unsigned state, uint32_t status)
{
	for (struct smb_sess *s = x->sessions; s; s = s->next)
		for (struct smb_open *o = s->opens; o; o = o->next) {
			bool breaking = false;
			unsigned to = 0;
			int rc;

			if (!o->leased || memcmp(o->lease_key, key, 16) || !o->lease.brk)
				continue;
			vol_lease_state(store, &o->lease, &breaking, &to);
			if (!breaking)
				continue;
			if ((rc = vol_lease_ack(store, &o->lease, state)) == -EPERM)
				return STATUS_REQUEST_NOT_ACCEPTED;
			if (rc == 0) {
				o->lease_state = state;
				o->break_sent = false;
				/* the ack kept more than later breaks leave: the next step
				 * goes out with the epoch the break had (smb2.lease.v2_breaking3) */
				o->break_next = vol_lease_state(store, &o->lease, &breaking, NULL) != state || breaking;
				status = STATUS_SUCCESS;
			}
		}
	return status;
}

/* The lease acknowledgment: every open of the key whose break waits, on
 * any connection of the client (the break went out on one of them). */
static uint32_t smb_lease_ack_lease(struct smb_req *r, const struct smb_wire_break_ack *a)
{
	struct vol_store *store = r->c->srv->store;
	uint32_t status = STATUS_UNSUCCESSFUL;
	unsigned state = a->lease_state & SMB_LEASE_RWH;

	if (!smb_lease_find(r->c, a->lease_key, NULL))
		return STATUS_OBJECT_NAME_NOT_FOUND;
	if (a->lease_state & ~SMB_LEASE_RWH)
		return STATUS_INVALID_PARAMETER;
	for (struct smb_conn *x = r->c->srv->conns; x && status != STATUS_REQUEST_NOT_ACCEPTED; x = x->next)
		if (smb_lease_same_client(r->c, x))
			status = smb_lease_ack_conn(store, x, a->lease_key, state, status);
	if (status == STATUS_REQUEST_NOT_ACCEPTED)
		return status;
	if (status == STATUS_SUCCESS) {
		smb_lease_kick(r->c->srv); /* the CREATEs that waited go on */
		smb_wire_lease_ack_rsp_encode(r->out, a->lease_key, state);
	}
	return status;
}

uint32_t smb_lease_ack(struct smb_req *r)
{
	struct vol_store *store = r->c->srv->store;
	struct smb_wire_break_ack a;
	struct smb_wire_fid fid;
	struct smb_open *o;
	bool breaking = false;
	unsigned to = 0, keep;

	if (smb_wire_break_ack_decode(&r->m, &a) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (a.lease)
		return smb_lease_ack_lease(r, &a);
	if (a.oplock_level == SMB2_OPLOCK_LEVEL_LEASE)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &a.fid)))
		return STATUS_FILE_CLOSED;
	if (o->leased || !o->lease.brk)
		return STATUS_INVALID_OPLOCK_PROTOCOL;
	vol_lease_state(store, &o->lease, &breaking, &to);
	if (!breaking)
		return STATUS_INVALID_OPLOCK_PROTOCOL; /* no oplock break is in progress */
	if (a.oplock_level == SMB2_OPLOCK_LEVEL_II && (to & VOL_LEASE_R))
		keep = VOL_LEASE_R;
	else if (a.oplock_level == SMB2_OPLOCK_LEVEL_NONE)
		keep = 0;
	else
		return STATUS_INVALID_OPLOCK_PROTOCOL;
	if (vol_lease_ack(store, &o->lease, keep) != 0)
		return STATUS_INVALID_OPLOCK_PROTOCOL;
	o->oplock = keep ? SMB2_OPLOCK_LEVEL_II : SMB2_OPLOCK_LEVEL_NONE;
	o->break_sent = false;
	smb_lease_kick(r->c->srv);
	fid = (struct smb_wire_fid){ .persistent = o->id, .volatile_ = o->id };
	smb_wire_oplock_break_encode(r->out, o->oplock, &fid);
	return STATUS_SUCCESS;
}
