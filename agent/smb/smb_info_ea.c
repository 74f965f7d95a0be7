/* smb_info_ea: extended attributes over SMB (MS-FSCC 2.4.15, MS-SMB2
 * 3.3.5.20.1, 3.3.5.21.1; MS-FSA 2.1.5.11.x), kept by the store as one list
 * per object (vol_ea_get / vol_ea_set) in smb_ea.h's form:
 *  - QUERY_INFO FileFullEaInformation: with an EA name list (its
 *    InputBuffer), the named EAs in that order (one not set answers an
 *    empty value); without one, the file's EAs from the open's position
 *    (SL_RESTART_SCAN starts over, SL_RETURN_SINGLE_ENTRY answers one),
 *    as many whole entries as OutputBufferLength holds, the position moving
 *    past them: STATUS_BUFFER_OVERFLOW when some are left,
 *    STATUS_BUFFER_TOO_SMALL when not even one fits, STATUS_NO_MORE_EAS at
 *    the end, STATUS_NO_EAS_ON_FILE when there are none. SL_INDEX_SPECIFIED
 *    (an SMB2 request carries no index) is STATUS_NOT_SUPPORTED.
 *  - SET_INFO FileFullEaInformation and the ExtA create context: the list
 *    is checked whole (smb_ea_check) before anything changes; each entry
 *    sets its EA, an empty value removes it; a file's list past
 *    SMB_EA_LIST_MAX is STATUS_EA_TOO_LARGE, past the volume's capacity
 *    STATUS_DISK_FULL. SET_INFO needs FILE_WRITE_EA on the open.
 *  - EaSize (FileEaInformation, FileAllInformation): the kept list's length.
 *  - FILE_NO_EA_KNOWLEDGE: an existing file holding an EA flagged
 *    FILE_NEED_EA is STATUS_ACCESS_DENIED to such a CREATE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_ea.h"
#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

#define SL_RESTART_SCAN 0x01u
#define SL_RETURN_SINGLE_ENTRY 0x02u
#define SL_INDEX_SPECIFIED 0x04u

/* The object's kept list into a new buffer of SMB_EA_LIST_MAX bytes. A
 * list the store holds that does not read back is an I/O error. */
static uint32_t smb_ea_load(struct smb_open *o, uint8_t **buf, size_t *len)
{
	int rc;

	if (!(*buf = malloc(SMB_EA_LIST_MAX)))
		return STATUS_NO_MEMORY;
	if ((rc = vol_ea_get(&o->obj, *buf, SMB_EA_LIST_MAX, len)) != 0 ||
	    (*len && smb_ea_check(*buf, *len, NULL) != STATUS_SUCCESS)) {
		free(*buf);
		*buf = NULL;
		return rc ? smb_status_from_errno(rc) : STATUS_UNEXPECTED_IO_ERROR;
	}
	return STATUS_SUCCESS;
}

uint32_t smb_ea_size(struct smb_open *o)
{
	size_t len = 0;

	/* the length is all we need: no buffer */
	return vol_ea_get(&o->obj, NULL, 0, &len) == 0 ? (uint32_t)len : 0;
}

bool smb_ea_needed(struct smb_open *o)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	bool need;

	if (smb_ea_load(o, &buf, &len) != STATUS_SUCCESS)
		return false;
	need = smb_ea_any_needed(buf, len);
	free(buf);
	return need;
}

uint32_t smb_ea_apply(struct smb_open *o, const struct vol_cred *cred, const uint8_t *list, size_t len)
{
	uint8_t *old = NULL, *out = NULL;
	size_t old_len = 0, out_len = 0;
	uint32_t st;
	int rc;

	if ((st = smb_ea_check(list, len, NULL)) != STATUS_SUCCESS)
		return st;
	if ((st = smb_ea_load(o, &old, &old_len)) != STATUS_SUCCESS)
		goto out;
	if (!(out = malloc(SMB_EA_LIST_MAX))) {
		st = STATUS_NO_MEMORY;
		goto out;
	}
	rc = smb_ea_merge(old, old_len, list, len, out, SMB_EA_LIST_MAX, &out_len);
	if (rc != AQ_OK) {
		st = rc == AQ_ETOOBIG ? STATUS_EA_TOO_LARGE : STATUS_INVALID_PARAMETER;
		goto out;
	}
	rc = vol_ea_set(&o->obj, cred, out, out_len);
	st = rc == 0 ? STATUS_SUCCESS
	     : rc == -E2BIG ? STATUS_EA_TOO_LARGE
	     : rc == -EOPNOTSUPP ? STATUS_EAS_NOT_SUPPORTED
			       : smb_status_from_errno(rc);
out:
	free(old);
	free(out);
	return st;
}

uint32_t smb_ea_set_info(struct smb_req *r, struct smb_open *o, const uint8_t *d, size_t len)
{
	struct vol_cred tc = smb_tree_cred(r->tree, &r->sess->cred, o->write_through);

	if (!smb_open_may(o, SMB_FILE_WRITE_EA))
		return STATUS_ACCESS_DENIED;
	return smb_ea_apply(o, &tc, d, len);
}

/* The entries named by the FILE_GET_EA_INFORMATION list q->input. */
static uint32_t smb_ea_query_named(const struct smb_wire_query_info_req *q, const uint8_t *kept, size_t kept_len,
				   uint8_t *out, size_t cap, size_t *n)
{
	struct smb_ea_iter it;
	struct smb_ea e;
	const uint8_t *name;
	uint8_t nlen;
	size_t last = 0;
	int rc;

	smb_ea_iter_init(&it, q->input, q->input_len);
	while ((rc = smb_ea_get_next(&it, &name, &nlen)) == 1) {
		if (!smb_ea_find(kept, kept_len, name, nlen, &e))
			e = (struct smb_ea){ .name = name, .name_len = nlen };
		if (smb_ea_add(out, cap, n, &last, &e) != AQ_OK)
			return *n ? STATUS_BUFFER_OVERFLOW : STATUS_BUFFER_TOO_SMALL;
		if (q->flags & SL_RETURN_SINGLE_ENTRY)
			break;
	}
	return rc < 0 ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
}

/* The kept entries from the open's position on. */
static uint32_t smb_ea_query_scan(struct smb_open *o, const struct smb_wire_query_info_req *q, const uint8_t *kept,
				  size_t kept_len, uint8_t *out, size_t cap, size_t *n)
{
	struct smb_ea_iter it;
	struct smb_ea e;
	size_t last = 0;
	uint32_t i = 0, next;

	if (q->flags & SL_RESTART_SCAN)
		o->ea_next = 0;
	if (kept_len == 0)
		return STATUS_NO_EAS_ON_FILE;
	next = o->ea_next;
	smb_ea_iter_init(&it, kept, kept_len);
	while (smb_ea_next(&it, &e) == 1) {
		if (i++ < o->ea_next)
			continue;
		if (smb_ea_add(out, cap, n, &last, &e) != AQ_OK) {
			o->ea_next = next;
			return *n ? STATUS_BUFFER_OVERFLOW : STATUS_BUFFER_TOO_SMALL;
		}
		next++;
		if (q->flags & SL_RETURN_SINGLE_ENTRY)
			break;
	}
	o->ea_next = next;
	return *n ? STATUS_SUCCESS : STATUS_NO_MORE_EAS;
}

uint32_t smb_ea_query(struct smb_open *o, const struct smb_wire_query_info_req *q, struct ut_buf *b)
{
	uint8_t *kept = NULL, *out = NULL;
	size_t kept_len = 0, n = 0, cap = q->output_len < SMB_EA_LIST_MAX ? q->output_len : SMB_EA_LIST_MAX;
	uint32_t st;

	if (q->flags & SL_INDEX_SPECIFIED)
		return STATUS_NOT_SUPPORTED;
	if (q->input_len > SMB_EA_LIST_MAX)
		return STATUS_INVALID_PARAMETER;
	if ((st = smb_ea_load(o, &kept, &kept_len)) != STATUS_SUCCESS)
		return st;
	if (!(out = malloc(cap ? cap : 1))) {
		st = STATUS_NO_MEMORY;
		goto out;
	}
	if (q->input_len)
		st = smb_ea_query_named(q, kept, kept_len, out, cap, &n);
	else
		st = smb_ea_query_scan(o, q, kept, kept_len, out, cap, &n);
	if ((st == STATUS_SUCCESS || st == STATUS_BUFFER_OVERFLOW) && ut_buf_add(b, out, n) != AQ_OK)
		st = STATUS_INTERNAL_ERROR;
out:
	free(kept);
	free(out);
	return st;
}
