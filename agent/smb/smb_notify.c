/* smb_notify: SMB2 CHANGE_NOTIFY (MS-SMB2 3.3.5.19) over the volume store's
 * change watches (agent/vol/vol_watch.h), so that a change made over any
 * protocol (NFSv3, NFSv4.1, SMB itself) completes it.
 *
 * The first CHANGE_NOTIFY on an open directory adds a watch for its
 * CompletionFilter (the FILE_NOTIFY_CHANGE_* bits the store reports; the
 * stream bits name nothing a volume has) and SMB2_WATCH_TREE; later ones
 * keep that watch and, as a cap on their own OutputBufferLength, the first
 * one's, as Windows and Samba do (smbtorture smb2.notify.valid-req: "if the
 * first notify returns NOTIFY_ENUM_DIR, all do"). Changes that come while no
 * request waits stay queued in the watch (bounded: VOL_WATCH_QUEUE_MAX
 * events, past which they are dropped and the next request is answered
 * STATUS_NOTIFY_ENUM_DIR). A request finding changes queued is answered at
 * once; otherwise it waits (smb_async.c: interim STATUS_PENDING, then the
 * changes, STATUS_CANCELLED or STATUS_NOTIFY_CLEANUP; STATUS_DELETE_PENDING
 * once the directory itself was removed, over any protocol, as Windows and
 * Samba answer). The changes go as
 * FILE_NOTIFY_INFORMATION records (MS-FSCC 2.4.42: NextEntryOffset,
 * Action, FileNameLength, the name in UTF-16LE with '\' separators,
 * relative to the watched directory, each record 4-byte aligned); when
 * they do not fit in OutputBufferLength the answer is
 * STATUS_NOTIFY_ENUM_DIR with no records (the client enumerates again).
 *
 * Refused: a file (not a directory): STATUS_INVALID_PARAMETER (Windows,
 * Samba); an open without FILE_LIST_DIRECTORY: STATUS_ACCESS_DENIED; an
 * OutputBufferLength past MaxTransactSize: STATUS_INVALID_PARAMETER; a
 * share whose volume lacks smbSettings CHANGE_NOTIFY: STATUS_NOT_IMPLEMENTED
 * (what Samba answers with "change notify = no"); a CHANGE_NOTIFY that would
 * wait but is not the last message of its compound: STATUS_NOT_SUPPORTED.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "util/ut_log.h"

#define SMB_NOTIFY_OUT_MAX (1u << 20)   /* our MaxTransactSize (2.1 and later) */
#define SMB_NOTIFY_OUT_MAX_202 65536u   /* and 2.0.2's */
#define SMB_NOTIFY_FILE_LIST_DIRECTORY SMB_FILE_READ_DATA

/* The store's wake (its watch mutex held, any thread): flag the open, wake the loop. */
static void notify_wake(void *arg)
{
	struct smb_open *o = arg;
	uint64_t one = 1;

	__atomic_store_n(&o->notify_woken, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&o->srv->async_woken, 1, __ATOMIC_RELEASE);
	if (write(o->srv->evfd, &one, sizeof(one)) < 0)
		UT_WARN("smb_srv", NULL, "cannot wake the loop for a change notify: %s", strerror(errno));
}

uint32_t smb_notify_collect(struct smb_open *o, uint32_t output_len, struct ut_buf *recs)
{
	struct vol_watch_ev *evs;
	char name[PATH_MAX + VOL_NAME_MAX + 2];
	uint32_t status = STATUS_SUCCESS;
	size_t prev = 0;
	bool lost = false;

	if (!o->watch)
		return STATUS_PENDING;
	if (vol_watch_gone(o->watch))
		return STATUS_DELETE_PENDING; /* the directory was removed (smbtorture smb2.notify.rmdir*) */
	evs = vol_watch_take(o->watch, &lost);
	if (lost)
		return STATUS_NOTIFY_ENUM_DIR; /* the list is NULL: nothing to free */
	if (!evs)
		return STATUS_PENDING;
	for (struct vol_watch_ev *ev = evs; ev && status == STATUS_SUCCESS; ev = ev->next) {
		size_t at, n;

		if (ev != evs) {
			ut_buf_put_zero(recs, (4 - recs->len % 4) % 4);
			ut_buf_set_le32(recs, prev, (uint32_t)(recs->len - prev));
		}
		at = recs->len;
		if (ev->len >= sizeof(name)) {
			status = STATUS_NOTIFY_ENUM_DIR;
			break;
		}
		for (size_t i = 0; i <= ev->len; i++)
			name[i] = ev->name[i] == '/' ? '\\' : ev->name[i];
		smb_wire_put_u32(recs, 0);
		smb_wire_put_u32(recs, (uint32_t)ev->action);
		smb_wire_put_u32(recs, 0);
		if (smb_wire_put_utf16(recs, name, ev->len, &n) != AQ_OK) /* past the buffer, or not UTF-8 */
			status = STATUS_NOTIFY_ENUM_DIR;
		ut_buf_set_le32(recs, at + 8, (uint32_t)n);
		prev = at;
	}
	if (recs->err != AQ_OK || recs->len > output_len)
		status = STATUS_NOTIFY_ENUM_DIR;
	if (status != STATUS_SUCCESS)
		ut_buf_rewind(recs, 0);
	vol_watch_ev_free(evs);
	return status;
}

uint32_t smb_notify_change(struct smb_req *r)
{
	struct smb_wire_notify_req q;
	struct smb_open *o;
	uint32_t status, max = r->c->dialect == SMB2_DIALECT_202 ? SMB_NOTIFY_OUT_MAX_202 : SMB_NOTIFY_OUT_MAX;
	unsigned mask;
	int rc;

	if (smb_wire_notify_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (!o->dir)
		return STATUS_INVALID_PARAMETER;
	if (!(r->tree->share.smb_settings & API_INTENT_SMB_CHANGE_NOTIFY))
		return STATUS_NOT_IMPLEMENTED;
	if (!(o->access & SMB_NOTIFY_FILE_LIST_DIRECTORY))
		return STATUS_ACCESS_DENIED;
	if (q.output_len > max)
		return STATUS_INVALID_PARAMETER;
	mask = q.filter & VOL_WATCH_ALL;
	if (!o->notify_set) {
		o->notify_set = true;
		o->notify_max = q.output_len;
	}
	if (q.output_len > o->notify_max)
		q.output_len = o->notify_max;
	if (!o->watch && mask) {
		o->srv = r->c->srv;
		if ((rc = vol_watch_add(&o->obj, mask, q.flags & SMB2_WATCH_TREE, notify_wake, o, &o->watch)) != 0) {
			UT_INFO("smb_srv", NULL, "%s: no change notify on %s: %s", r->c->peer, o->path, strerror(-rc));
			return rc == -ENOSPC ? STATUS_INSUFFICIENT_RESOURCES : smb_status_from_errno(rc);
		}
	}
	/* changes already queued go to the first request that waits, else to this one */
	if (!o->nnotify) {
		struct ut_buf recs;

		ut_buf_init(&recs, q.output_len);
		status = smb_notify_collect(o, q.output_len, &recs);
		if (status == STATUS_SUCCESS)
			smb_wire_output_rsp_encode(r->out, r->hdr_off, ut_buf_bytes(&recs), recs.len);
		ut_buf_cleanup(&recs);
		if (status != STATUS_PENDING)
			return status;
	}
	if (!r->last)
		return STATUS_NOT_SUPPORTED;
	return smb_async_notify(r, o, q.output_len);
}
