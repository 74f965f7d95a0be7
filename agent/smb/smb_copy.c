/* smb_copy: server-side copy (MS-SMB2 3.3.5.15.6 and 3.3.5.15.7), what
 * Windows Explorer and robocopy use to copy a file without moving its bytes
 * over the wire. FSCTL_SRV_REQUEST_RESUME_KEY names an open (its FileId and
 * 16 random bytes kept on the open); FSCTL_SRV_COPYCHUNK and _WRITE copy
 * chunks from the open a key names into the open the IOCTL names, each
 * chunk a READ and a WRITE through the volume store, so byte-range locks,
 * capacity, the caches (leases) of other clients and change notify apply
 * as they do to a client's own READ and WRITE. The source must be an open
 * of the same user (any of its sessions and shares on this server); the
 * request is bounded by SMB_WIRE_COPYCHUNK_* before anything is allocated.
 * QoS: smb_dispatch_admit (smb_admit.c) charges a COPYCHUNK before it is
 * served, lone, sealed or in a compound, as READs and WRITEs are
 * (smb_copy_cost): all its chunks' bytes as written on the destination's
 * volume and as read on the source's, so a copy waits for its volume's
 * budget like the READs and WRITEs it replaces. Capacity: the growth the chunks make on the
 * destination must fit the volume's free space before anything is copied
 * (STATUS_DISK_FULL, nothing copied).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

#define SMB_COPY_RSP_LEN 12u /* SRV_COPYCHUNK_RESPONSE */
#define SMB_COPY_KEY_RSP_LEN 32u /* SRV_REQUEST_RESUME_KEY: key, ContextLength, 4 bytes of Context */

uint32_t smb_copy_resume_key(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	uint8_t out[SMB_COPY_KEY_RSP_LEN] = { 0 };
	struct smb_open *o;

	if (!(o = smb_open_find(r, &q->fid)))
		return STATUS_FILE_CLOSED;
	if (q->max_output_response < sizeof(out))
		return STATUS_INVALID_PARAMETER;
	if (!o->has_resume_key) {
		if (RAND_bytes(o->resume_key, sizeof(o->resume_key)) != 1)
			return STATUS_INTERNAL_ERROR;
		o->has_resume_key = true;
	}
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(o->id >> (8 * i));
	memcpy(out + 8, o->resume_key, sizeof(o->resume_key));
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, out, sizeof(out));
	return STATUS_SUCCESS;
}

/* The open a resume key names, if it belongs to the user of session me
 * (on srv); its session in *sess. */
static struct smb_open *smb_copy_source(struct smb_srv *srv, const struct smb_sess *me, const uint8_t *key,
					struct smb_sess **sess)
{
	uint64_t id = smb_wire_get_u64(key);

	for (struct smb_conn *c = srv->conns; c; c = c->next)
		for (struct smb_sess *s = c->sessions; s; s = s->next) {
			if (s->state != SMB_SESS_VALID || s->logged_off ||
			    strcmp(s->user.project, me->user.project) != 0 ||
			    strcmp(s->user.name, me->user.name) != 0)
				continue;
			for (struct smb_open *o = s->opens; o; o = o->next)
				if (o->id == id && o->has_resume_key &&
				    CRYPTO_memcmp(o->resume_key, key + 8, sizeof(o->resume_key)) == 0) {
					*sess = s;
					return o;
				}
		}
	return NULL;
}

/* The SRV_COPYCHUNK_RESPONSE, kept with whatever status the copy ends. */
static uint32_t smb_copy_answer(struct smb_req *r, const struct smb_wire_ioctl_req *q, uint32_t status,
				uint32_t chunks, uint32_t chunk_bytes, uint32_t total)
{
	uint8_t out[SMB_COPY_RSP_LEN];

	for (int i = 0; i < 4; i++) {
		out[i] = (uint8_t)(chunks >> (8 * i));
		out[4 + i] = (uint8_t)(chunk_bytes >> (8 * i));
		out[8 + i] = (uint8_t)(total >> (8 * i));
	}
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, out, sizeof(out));
	r->keep_body = true;
	return status;
}

/* Every chunk within the limits (none empty): else INVALID_PARAMETER,
 * answered with the limits (3.3.5.15.6). *total: the bytes of all chunks;
 * *end: the furthest destination byte a chunk reaches. */
static bool smb_copy_within(const struct smb_wire_copychunk *cc, uint64_t *total, uint64_t *end)
{
	uint64_t sum = 0, far = 0;
	struct smb_wire_chunk ch;

	for (uint32_t i = 0; i < cc->count; i++) {
		smb_wire_copychunk_chunk(cc, i, &ch);
		if (ch.len == 0 || ch.len > SMB_WIRE_COPYCHUNK_LEN_MAX || ch.dst_off > UINT64_MAX - ch.len)
			return false;
		sum += ch.len;
		if (ch.dst_off + ch.len > far)
			far = ch.dst_off + ch.len;
	}
	*total = sum;
	*end = far;
	return sum <= SMB_WIRE_COPYCHUNK_TOTAL_MAX;
}

/* Room on the destination's volume for what the copy makes it grow,
 * before a byte is copied (each WRITE checks again). */
static uint32_t smb_copy_room(struct smb_open *dst, uint64_t end)
{
	struct vol_fsstat fs;
	uint64_t size;
	int rc;

	if ((rc = vol_refresh(&dst->obj)) != 0 || (rc = vol_fsstat(&dst->obj, &fs)) != 0)
		return smb_status_from_errno(rc);
	size = (uint64_t)dst->obj.st.st_size;
	return end > size && end - size > fs.abytes ? STATUS_DISK_FULL : STATUS_SUCCESS;
}

bool smb_copy_cost(struct smb_conn *c, const struct smb_wire_msg *m, struct smb_sess *s, struct smb_wire_fid *fid,
		   uint64_t *total, struct smb_open **src)
{
	struct smb_wire_ioctl_req q;
	struct smb_wire_copychunk cc;
	struct smb_sess *ss;
	uint64_t end;

	if (smb_wire_ioctl_req_decode(m, &q) != AQ_OK ||
	    (q.ctl_code != FSCTL_SRV_COPYCHUNK && q.ctl_code != FSCTL_SRV_COPYCHUNK_WRITE) ||
	    smb_wire_copychunk_decode(q.input, q.input_len, &cc) != AQ_OK || !smb_copy_within(&cc, total, &end))
		return false; /* anything the handler refuses is not charged */
	*fid = q.fid;
	*src = smb_copy_source(c->srv, s, cc.key, &ss);
	return true;
}

/* One chunk from src to dst: STATUS_SUCCESS, FILE_LOCK_CONFLICT (a lock
 * of another open), INVALID_VIEW_SIZE (past the source's end), or the
 * store's error. */
static uint32_t smb_copy_one(struct smb_req *r, struct smb_open *src, struct smb_sess *ss, struct smb_open *dst,
			     const struct smb_wire_chunk *ch, uint8_t *buf)
{
	struct vol_lease_by by;
	uint32_t status;
	size_t got = 0;
	bool eof = false;
	int rc, committed;

	if ((status = smb_lock_io(src, ch->src_off, ch->len, false)) != STATUS_SUCCESS ||
	    (status = smb_lock_io(dst, ch->dst_off, ch->len, true)) != STATUS_SUCCESS)
		return status;
	if ((rc = vol_refresh(&src->obj)) != 0)
		return smb_status_from_errno(rc);
	if (ch->src_off > (uint64_t)src->obj.st.st_size || ch->len > (uint64_t)src->obj.st.st_size - ch->src_off)
		return STATUS_INVALID_VIEW_SIZE;
	rc = vol_read(&src->obj, &ss->cred, ch->src_off, buf, ch->len, &got, &eof);
	vol_export_record(src->obj.exp, 6 /* NFS READ's slot */, got, 0, rc != 0);
	if (rc != 0)
		return smb_status_from_errno(rc);
	if (got != ch->len)
		return STATUS_INVALID_VIEW_SIZE; /* cut short meanwhile */
	smb_lease_by(dst, &by); /* the destination open's own cache is not broken */
	rc = vol_write_by(&dst->obj, &r->sess->cred, ch->dst_off, buf, ch->len, 0, &committed, &by);
	vol_export_record(dst->obj.exp, 7 /* NFS WRITE's slot */, rc == 0 ? ch->len : 0, 0, rc != 0);
	return rc == 0 ? STATUS_SUCCESS : smb_status_from_errno(rc);
}

uint32_t smb_copy_chunk(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_wire_copychunk cc;
	struct smb_wire_chunk ch;
	struct smb_open *dst, *src;
	struct smb_sess *ss = NULL;
	uint32_t status = STATUS_SUCCESS, chunks = 0, total = 0;
	uint64_t want, end;
	uint8_t *buf;
	int rc;

	if (!(dst = smb_open_find(r, &q->fid)))
		return STATUS_FILE_CLOSED;
	if (q->max_output_response < SMB_COPY_RSP_LEN)
		return STATUS_INVALID_PARAMETER;
	if (dst->dir)
		return STATUS_INVALID_DEVICE_REQUEST;
	/* COPYCHUNK reads the destination too (3.3.5.15.6: FILE_READ_DATA
	 * itself); COPYCHUNK_WRITE does not. The source reads with
	 * FILE_READ_DATA or FILE_EXECUTE (Windows, Samba). */
	if (!smb_open_may(dst, SMB_FILE_WRITE_DATA) ||
	    (q->ctl_code == FSCTL_SRV_COPYCHUNK && !smb_open_may(dst, SMB_FILE_READ_DATA)))
		return STATUS_ACCESS_DENIED;
	rc = smb_wire_copychunk_decode(q->input, q->input_len, &cc);
	if (rc == AQ_EINVAL)
		return STATUS_INVALID_PARAMETER;
	if (rc == AQ_ETOOBIG || !smb_copy_within(&cc, &want, &end))
		return smb_copy_answer(r, q, STATUS_INVALID_PARAMETER, SMB_WIRE_COPYCHUNK_MAX, SMB_WIRE_COPYCHUNK_LEN_MAX,
				       SMB_WIRE_COPYCHUNK_TOTAL_MAX);
	if (!(src = smb_copy_source(r->c->srv, r->sess, cc.key, &ss)))
		return STATUS_OBJECT_NAME_NOT_FOUND;
	if (src->dir || !smb_open_may_read(src))
		return STATUS_ACCESS_DENIED;
	if ((status = smb_copy_room(dst, end)) != STATUS_SUCCESS)
		return smb_copy_answer(r, q, status, 0, 0, 0);
	if (!(buf = malloc(SMB_WIRE_COPYCHUNK_LEN_MAX)))
		return STATUS_NO_MEMORY;
	for (uint32_t i = 0; i < cc.count; i++) {
		smb_wire_copychunk_chunk(&cc, i, &ch);
		if ((status = smb_copy_one(r, src, ss, dst, &ch, buf)) != STATUS_SUCCESS)
			break;
		chunks++;
		total += ch.len;
	}
	free(buf);
	return smb_copy_answer(r, q, status, chunks, 0, total);
}
