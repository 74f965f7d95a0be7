/* smb_lease: SMB2 oplocks and leases (MS-SMB2 3.3.5.9, 3.3.4.6, 3.3.4.7,
 * 3.3.5.22) over the volume store's cached-open table (vol_lease.h).
 *
 * What is granted: read caching only. A CREATE asking for a Level II,
 * EXCLUSIVE or BATCH oplock gets Level II; a lease context (RqLs v1 or v2)
 * whose state holds R gets R (RH and RWH are downgraded to R, which MS-SMB2
 * allows: the server grants what it can). Handle and write caching need an
 * acknowledged break and a CREATE (or an NFS operation) that waits for it;
 * they are not built, so nothing is ever cached that another open could
 * invalidate without the holder being told. Nothing is granted on
 * directories, on IPC$, or on a share whose volume lacks smbSettings
 * OPLOCKS (as Samba with "oplocks = no").
 *
 * Breaks: every change of the file's data through the store (an SMB WRITE
 * or truncate of any open, an NFSv3/NFSv4.1 WRITE or SETATTR of the size)
 * takes the grant off the table before it proceeds and flags the open
 * (smb_lease_wake, on the writer's thread); the loop thread then sends the
 * notification (smb_lease_run): an oplock break to NONE, or a lease break
 * R -> NONE without SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED, one per
 * lease (the opens sharing a lease key are broken together). Neither asks
 * for an acknowledgment, so no breaker waits.
 *
 * Acknowledgments (3.3.5.22): since no break asks for one, an oplock
 * acknowledgment finds no break in progress: STATUS_INVALID_OPLOCK_PROTOCOL
 * (an unknown FileId: STATUS_FILE_CLOSED, the level LEASE in the oplock
 * form STATUS_INVALID_PARAMETER); a lease acknowledgment naming a
 * lease key this client does not hold is STATUS_OBJECT_NAME_NOT_FOUND,
 * one naming a held lease that is not breaking STATUS_UNSUCCESSFUL.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_intent.h"
#include "util/ut_log.h"

/* The store's break of o's grant: on the writer's thread, the table's
 * mutex held: flag and signal only. */
static void smb_lease_wake(struct vol_lease *l, unsigned lost)
{
	struct smb_open *o = l->arg;
	uint64_t one = 1;

	(void)lost;
	__atomic_store_n(&o->break_woken, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&o->srv->async_woken, 1, __ATOMIC_RELEASE);
	if (write(o->srv->evfd, &one, sizeof(one)) < 0)
		UT_DEBUG("smb_srv", NULL, "lease wake: %s", strerror(errno));
}

/* Another open of c with lease key key: on the same file (same true) or
 * another one. */
static struct smb_open *smb_lease_find(struct smb_conn *c, const uint8_t key[16], const struct smb_open *not)
{
	for (struct smb_sess *s = c->sessions; s; s = s->next)
		for (struct smb_open *o = s->opens; o; o = o->next)
			if (o != not && o->leased && !memcmp(o->lease_key, key, 16))
				return o;
	return NULL;
}

uint32_t smb_lease_grant(struct smb_req *r, struct smb_open *o, const struct smb_wire_create_req *q,
			 struct smb_wire_create_rsp *rsp, struct ut_buf *ctx_buf, struct smb_wire_create_rsp_ctx *ctx)
{
	const struct smb_wire_create_ctx *lc = smb_wire_create_ctx_find(q, "RqLs");
	struct vol_store *store = r->c->srv->store;
	struct smb_wire_lease want, got;
	struct smb_open *same = NULL;
	bool on = (r->tree->share.smb_settings & API_INTENT_SMB_OPLOCKS) && !o->dir && o->locks;

	rsp->oplock_level = SMB2_OPLOCK_LEVEL_NONE;
	if (q->oplock_level == SMB2_OPLOCK_LEVEL_LEASE) {
		if (!lc || r->c->dialect < SMB2_DIALECT_210 || !on)
			return STATUS_SUCCESS; /* no lease: the client caches nothing */
		if (smb_wire_lease_decode(lc, &want) != AQ_OK)
			return STATUS_INVALID_PARAMETER;
		if ((same = smb_lease_find(r->c, want.key, o)) && memcmp(&same->lkey, &o->lkey, sizeof(o->lkey)))
			return STATUS_INVALID_PARAMETER; /* a lease key names one file (3.3.5.9.8) */
		got = want;
		got.state = want.state & SMB2_LEASE_READ_CACHING;
		got.flags = want.v2 ? (want.flags & 0x4u /* PARENT_LEASE_KEY_SET */) : 0;
		got.epoch = same ? same->lease_epoch : (uint16_t)(want.epoch + 1);
		if (!want.v2)
			memset(got.parent_key, 0, sizeof(got.parent_key));
		o->lease.key = o->lkey;
		o->lease.brk = smb_lease_wake;
		o->lease.arg = o;
		o->srv = r->c->srv;
		if (got.state && vol_lease_grant(store, &o->lease, VOL_LEASE_R) != 0)
			got.state = 0; /* the table is full: no caching, still an answer */
		memcpy(o->lease_key, want.key, 16);
		o->leased = true;
		o->lease_v2 = want.v2;
		o->lease_epoch = got.epoch;
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
	/* II, EXCLUSIVE, BATCH: Level II (read caching) is what is granted */
	o->lease.key = o->lkey;
	o->lease.brk = smb_lease_wake;
	o->lease.arg = o;
	o->srv = r->c->srv;
	if (vol_lease_grant(store, &o->lease, VOL_LEASE_R) == 0) {
		o->oplock = SMB2_OPLOCK_LEVEL_II;
		rsp->oplock_level = SMB2_OPLOCK_LEVEL_II;
	}
	return STATUS_SUCCESS;
}

void smb_lease_open_gone(struct smb_open *o)
{
	if (o->srv && o->lease.brk)
		vol_lease_drop(o->srv->store, &o->lease);
}

/* Send c one unsolicited OPLOCK_BREAK (MessageId all ones, no session:
 * MS-SMB2 3.3.4.6/7), encrypted when s encrypts. */
static void smb_lease_send(struct smb_conn *c, struct smb_sess *s, const struct smb_open *o)
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
		smb_wire_lease_break_encode(&out, o->lease_v2 ? (uint16_t)(o->lease_epoch + 1) : 0, 0, o->lease_key,
					    SMB2_LEASE_READ_CACHING, 0);
	else
		smb_wire_oplock_break_encode(&out, SMB2_OPLOCK_LEVEL_NONE, &fid);
	if (out.err != AQ_OK)
		c->closing = true;
	else if (s->encrypt)
		smb_dispatch_send_encrypted(c, s, &out);
	else
		smb_conn_send(c, ut_buf_bytes(&out), out.len);
	ut_buf_cleanup(&out);
}

bool smb_lease_run(struct smb_conn *c, struct smb_sess *s, struct smb_open *o)
{
	if (c->freeing || (!o->leased && o->oplock == SMB2_OPLOCK_LEVEL_NONE))
		return false;
	if (o->leased) {
		/* one notification per lease: its other opens on c were broken with it */
		for (struct smb_sess *s2 = c->sessions; s2; s2 = s2->next)
			for (struct smb_open *x = s2->opens; x; x = x->next)
				if (x != o && x->leased && !memcmp(x->lease_key, o->lease_key, 16)) {
					__atomic_store_n(&x->break_woken, 0, __ATOMIC_RELEASE);
					x->lease_epoch++;
				}
		smb_lease_send(c, s, o);
		o->lease_epoch++;
		return true;
	}
	smb_lease_send(c, s, o);
	o->oplock = SMB2_OPLOCK_LEVEL_NONE;
	return true;
}

uint32_t smb_lease_ack(struct smb_req *r)
{
	struct smb_wire_break_ack a;
	struct smb_open *o;

	if (smb_wire_break_ack_decode(&r->m, &a) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (a.lease) {
		if (!smb_lease_find(r->c, a.lease_key, NULL))
			return STATUS_OBJECT_NAME_NOT_FOUND;
		return STATUS_UNSUCCESSFUL; /* no lease break is in progress (none asks for one) */
	}
	if (a.oplock_level == SMB2_OPLOCK_LEVEL_LEASE)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &a.fid)))
		return STATUS_FILE_CLOSED;
	return STATUS_INVALID_OPLOCK_PROTOCOL; /* no oplock break is in progress */
}
