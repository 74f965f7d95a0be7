/* smb_lock: SMB2 LOCK (MS-SMB2 3.3.5.14), the mandatory byte-range checks
 * of READ and WRITE, and the share modes of CREATE, all over the volume
 * store's lock table (agent/vol/vol_lock.h), so NFSv4 and NLM (when they
 * come) meet the same locks and reservations.
 *
 * An open is one owner in the table ({SMB, connection, FileId}): SMB locks
 * belong to the open, not to the session or the process. Its entries go
 * when the open is freed (CLOSE, LOGOFF, TREE_DISCONNECT, the connection
 * dropping), and a connection's all go with it (smb_lock_conn_gone).
 *
 * Blocking locks (a single element without FAIL_IMMEDIATELY) that cannot
 * be granted now wait (smb_async.c): an interim STATUS_PENDING, the final
 * response when the lock is granted, cancelled or its open closes. A
 * blocking lock inside a compound, not its last message, is answered
 * STATUS_LOCK_NOT_GRANTED at once (the server splits no compound).
 *
 * Lock sequence numbers (3.3.5.14): on an SMB 3.x connection that
 * negotiated multichannel, or on a durable open, a LOCK whose LockSequence
 * names a bucket (1-64) and the number that bucket last succeeded with is
 * a replay (a client resending over another channel): answered
 * STATUS_SUCCESS without touching a lock. Any other number empties the
 * bucket, and it holds the number again only once that LOCK succeeds,
 * at once or, for a lock that waits, when it is granted (smb_async.c; a
 * waiting lock cancelled, refused or ended with its open leaves the bucket
 * empty). Resilient handles are not served (FSCTL_LMR_REQUEST_RESILIENCY
 * is refused).
 */
#include <errno.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_grace.h"
#include "api/api_error.h"

/* Access mask bits (MS-SMB2 2.2.13.1) that read, write or delete data. */
#define FILE_READ_DATA 0x00000001u
#define FILE_WRITE_DATA 0x00000002u
#define FILE_APPEND_DATA 0x00000004u
#define FILE_EXECUTE 0x00000020u
#define DELETE_ACCESS 0x00010000u
#define MAXIMUM_ALLOWED 0x02000000u
#define GENERIC_ALL 0x10000000u
#define GENERIC_EXECUTE 0x20000000u
#define GENERIC_WRITE 0x40000000u
#define GENERIC_READ 0x80000000u

static struct vol_lock_tab *tab(const struct smb_open *o)
{
	return o->locks;
}

/* DesiredAccess as share-reservation access bits; MAXIMUM_ALLOWED as
 * everything (what Windows grants a user with full rights). */
static unsigned share_access(uint32_t desired)
{
	unsigned a = 0;

	if (desired & (FILE_READ_DATA | FILE_EXECUTE | GENERIC_READ | GENERIC_EXECUTE | GENERIC_ALL | MAXIMUM_ALLOWED))
		a |= VOL_SHARE_READ;
	if (desired & (FILE_WRITE_DATA | FILE_APPEND_DATA | GENERIC_WRITE | GENERIC_ALL | MAXIMUM_ALLOWED))
		a |= VOL_SHARE_WRITE;
	if (desired & (DELETE_ACCESS | GENERIC_ALL | MAXIMUM_ALLOWED))
		a |= VOL_SHARE_DELETE;
	return a;
}

bool smb_lock_wants_write(uint32_t desired_access)
{
	return (share_access(desired_access) & VOL_SHARE_WRITE) != 0;
}

uint32_t smb_lock_share(struct smb_open *o, uint32_t desired_access, uint32_t share_mode)
{
	/* FILE_SHARE_READ/WRITE/DELETE are VOL_SHARE_READ/WRITE/DELETE */
	int rc = vol_lock_share(tab(o), &o->lkey, &o->owner, share_access(desired_access),
				~share_mode & VOL_SHARE_ALL);

	if (rc == -EBUSY)
		return STATUS_SHARING_VIOLATION;
	if (rc == -ENOLCK)
		return STATUS_INSUFFICIENT_RESOURCES;
	return rc ? smb_status_from_errno(rc) : STATUS_SUCCESS;
}

uint32_t smb_lock_io(const struct smb_open *o, uint64_t offset, uint64_t length, bool write)
{
	return vol_lock_test(tab(o), &o->lkey, &o->owner, offset, length, write) == 0 ? STATUS_SUCCESS
											 : STATUS_FILE_LOCK_CONFLICT;
}

void smb_lock_open_gone(struct smb_open *o)
{
	if (o->locks)
		vol_lock_release(o->locks, &o->owner);
}

void smb_lock_conn_gone(struct smb_conn *c)
{
	vol_lock_release_client(vol_store_locks(c->srv->store), VOL_LOCK_SMB, c->key);
}

uint32_t smb_lock_status(int rc)
{
	switch (rc) {
	case 0:
		return STATUS_SUCCESS;
	case -EAGAIN:
		return STATUS_LOCK_NOT_GRANTED;
	case -ENOENT:
		return STATUS_RANGE_NOT_LOCKED;
	case -EINVAL:
		return STATUS_INVALID_LOCK_RANGE;
	case -ENOLCK:
		return STATUS_INSUFFICIENT_RESOURCES;
	default:
		return smb_status_from_errno(rc);
	}
}

/* 3.3.5.14.1: unlocks, one by one; the first not held stops the rest
 * (those before it stay unlocked). */
static uint32_t unlock_all(struct smb_open *o, const struct smb_wire_lock_req *q)
{
	for (uint16_t i = 0; i < q->count; i++) {
		const struct smb_wire_lock_elem *e = &q->locks[i];
		int rc;

		if (e->flags != SMB2_LOCKFLAG_UNLOCK)
			return STATUS_INVALID_PARAMETER;
		if ((rc = vol_lock_unlock(tab(o), &o->lkey, &o->owner, e->offset, e->length, 0)) != 0)
			return smb_lock_status(rc);
	}
	return STATUS_SUCCESS;
}

int smb_lock_try(struct smb_open *o, const struct smb_wire_lock_elem *e)
{
	return vol_lock_lock(tab(o), &o->lkey, &o->owner, e->offset, e->length,
			     (e->flags & SMB2_LOCKFLAG_EXCLUSIVE) ? VOL_LOCK_F_EXCL : 0, NULL);
}

/* 3.3.5.14.2: locks, all or none: a refused element undoes those this
 * request took before it. bucket/seq: what a lock that waits records when
 * it is granted (see the top; bucket NULL: nothing). */
static uint32_t lock_all(struct smb_req *r, struct smb_open *o, const struct smb_wire_lock_req *q, uint8_t *bucket,
			 uint8_t seq)
{
	uint16_t i, j;
	int rc = 0;

	for (i = 0; i < q->count; i++) {
		uint32_t f = q->locks[i].flags & ~SMB2_LOCKFLAG_FAIL_IMMEDIATELY;

		if (f != SMB2_LOCKFLAG_SHARED && f != SMB2_LOCKFLAG_EXCLUSIVE)
			return STATUS_INVALID_PARAMETER;
		/* more than one element: each must fail immediately (a SHOULD) */
		if (q->count > 1 && !(q->locks[i].flags & SMB2_LOCKFLAG_FAIL_IMMEDIATELY))
			return STATUS_INVALID_PARAMETER;
	}
	/* grace (vol_grace.h): NLM and NFSv4.1 holders reclaim their locks;
	 * nobody else is granted one meanwhile */
	if (vol_grace_active(o->obj.exp))
		return STATUS_FILE_LOCK_CONFLICT;
	for (i = 0; i < q->count; i++) {
		const struct smb_wire_lock_elem *e = &q->locks[i];

		if ((rc = smb_lock_try(o, e)) != 0)
			break;
	}
	if (rc == 0)
		return STATUS_SUCCESS;
	/* a lone blocking lock waits (the last message of its frame only) */
	if (rc == -EAGAIN && q->count == 1 && !(q->locks[0].flags & SMB2_LOCKFLAG_FAIL_IMMEDIATELY) && r->last)
		return smb_async_lock(r, o, &q->locks[0], bucket, seq);
	for (j = 0; j < i; j++)
		(void)vol_lock_unlock(tab(o), &o->lkey, &o->owner, q->locks[j].offset, q->locks[j].length, 0);
	return smb_lock_status(rc);
}

/* The bucket of o that q's LockSequence names when the open's
 * connection checks them (see the top), else NULL. */
static uint8_t *lock_bucket(const struct smb_req *r, struct smb_open *o, const struct smb_wire_lock_req *q)
{
	uint32_t index = q->sequence >> 4;

	if (r->c->dialect < SMB2_DIALECT_300 ||
	    (!o->durable && !(r->c->server_caps & SMB2_GLOBAL_CAP_MULTI_CHANNEL)))
		return NULL;
	if (index < 1 || index > sizeof(o->lock_seq))
		return NULL;
	return &o->lock_seq[index - 1];
}

uint32_t smb_lock_lock(struct smb_req *r)
{
	struct smb_wire_lock_req q;
	struct smb_open *o;
	uint8_t *bucket, seq;
	uint32_t status;
	int rc;

	if ((rc = smb_wire_lock_req_decode(&r->m, &q)) != AQ_OK)
		return rc == AQ_ETOOBIG ? STATUS_INSUFFICIENT_RESOURCES : STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (o->dir)
		return STATUS_INVALID_DEVICE_REQUEST;
	seq = (uint8_t)((q.sequence & 0xFu) + 1);
	if ((bucket = lock_bucket(r, o, &q))) {
		if (*bucket == seq) {
			smb_wire_empty_rsp_encode(r->out); /* a replay: done already */
			return STATUS_SUCCESS;
		}
		*bucket = 0;
	}
	/* a range whose last byte is past 2^64 - 1 is none (Windows: offset
	 * ~0 length 1 is a lock, length 2 is STATUS_INVALID_LOCK_RANGE) */
	for (uint16_t i = 0; i < q.count; i++)
		if (q.locks[i].length && q.locks[i].length - 1 > UINT64_MAX - q.locks[i].offset)
			return STATUS_INVALID_LOCK_RANGE;
	status = (q.locks[0].flags & SMB2_LOCKFLAG_UNLOCK) ? unlock_all(o, &q) : lock_all(r, o, &q, bucket, seq);
	if (status == STATUS_SUCCESS && !(q.locks[0].flags & SMB2_LOCKFLAG_UNLOCK))
		smb_lease_lock(r->c->srv, o); /* read caches of the file go (smb_lease.c) */
	if (status == STATUS_SUCCESS) {
		if (bucket)
			*bucket = seq;
		smb_wire_empty_rsp_encode(r->out);
	}
	return status;
}
