/* nfs4_cl_ops: the NFSv4.1 test client's COMPOUND operations, the
 * arguments each puts into a call and the decoders of their results; see
 * nfs4_cl.h. The connection and the session are in nfs4_cl.c. */
#include "tests/agent/nfs4/nfs4_cl.h"

#include <string.h>

static void put_str(struct ut_buf *b, const char *s)
{
	xdr_put_opaque(b, s, (uint32_t)strlen(s));
}

void nfs4_cl_sequence(struct ut_buf *b, const struct nfs4_cl *c, uint32_t slot, uint32_t seqid, bool cache)
{
	xdr_put_u32(b, 53);
	xdr_put_fixed(b, c->sess, 16);
	xdr_put_u32(b, seqid);
	xdr_put_u32(b, slot);
	xdr_put_u32(b, slot);
	xdr_put_u32(b, cache);
}

void nfs4_cl_putrootfh(struct ut_buf *b)
{
	xdr_put_u32(b, 24);
}

void nfs4_cl_putfh(struct ut_buf *b, const uint8_t *fh, uint32_t len)
{
	xdr_put_u32(b, 22);
	xdr_put_opaque(b, fh, len);
}

void nfs4_cl_lookup(struct ut_buf *b, const char *name)
{
	xdr_put_u32(b, 15);
	put_str(b, name);
}

void nfs4_cl_getfh(struct ut_buf *b)
{
	xdr_put_u32(b, 10);
}

void nfs4_cl_savefh(struct ut_buf *b)
{
	xdr_put_u32(b, 32);
}

void nfs4_cl_getattr(struct ut_buf *b, uint32_t w0, uint32_t w1)
{
	xdr_put_u32(b, 9);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, w0);
	xdr_put_u32(b, w1);
}

static void put_mode_attr(struct ut_buf *b, uint32_t mode)
{
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 1u << 1); /* mode (33) */
	xdr_put_u32(b, 4);
	xdr_put_u32(b, mode);
}

void nfs4_cl_mkdir(struct ut_buf *b, const char *name)
{
	xdr_put_u32(b, 6);
	xdr_put_u32(b, 2); /* NF4DIR */
	put_str(b, name);
	put_mode_attr(b, 0755);
}

void nfs4_cl_remove(struct ut_buf *b, const char *name)
{
	xdr_put_u32(b, 28);
	put_str(b, name);
}

static void open_head_deny(struct ut_buf *b, const char *owner, uint32_t access, uint32_t deny)
{
	xdr_put_u32(b, 18);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, access);
	xdr_put_u32(b, deny);
	xdr_put_u64(b, 0);
	put_str(b, owner);
}

static void open_head(struct ut_buf *b, const char *owner, uint32_t access)
{
	open_head_deny(b, owner, access, 0);
}

void nfs4_cl_open_deny(struct ut_buf *b, const char *owner, const char *name, uint32_t access, uint32_t deny)
{
	open_head_deny(b, owner, access, deny);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	put_str(b, name);
}

void nfs4_cl_open_create(struct ut_buf *b, const char *owner, const char *name, uint32_t mode)
{
	open_head(b, owner, 3);
	xdr_put_u32(b, 1); /* OPEN4_CREATE */
	xdr_put_u32(b, 0); /* UNCHECKED4 */
	put_mode_attr(b, mode);
	xdr_put_u32(b, 0); /* CLAIM_NULL */
	put_str(b, name);
}

void nfs4_cl_open_sized(struct ut_buf *b, const char *owner, const char *name, const uint8_t *verf, uint64_t size,
			bool set_mode, uint32_t mode)
{
	open_head(b, owner, 3);
	xdr_put_u32(b, 1);            /* OPEN4_CREATE */
	xdr_put_u32(b, verf ? 3 : 0); /* EXCLUSIVE4_1 : UNCHECKED4 */
	if (verf)
		xdr_put_fixed(b, verf, 8);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 1u << 4);                 /* size (4) */
	xdr_put_u32(b, set_mode ? 1u << 1 : 0); /* mode (33) */
	xdr_put_u32(b, set_mode ? 12 : 8);
	xdr_put_u64(b, size);
	if (set_mode)
		xdr_put_u32(b, mode);
	xdr_put_u32(b, 0); /* CLAIM_NULL */
	put_str(b, name);
}

void nfs4_cl_open_trunc(struct ut_buf *b, const char *owner, const char *name, uint32_t access, uint32_t deny,
			uint64_t size)
{
	open_head_deny(b, owner, access, deny);
	xdr_put_u32(b, 1); /* OPEN4_CREATE */
	xdr_put_u32(b, 0); /* UNCHECKED4 */
	xdr_put_u32(b, 1);
	xdr_put_u32(b, 1u << 4); /* size (4) */
	xdr_put_u32(b, 8);
	xdr_put_u64(b, size);
	xdr_put_u32(b, 0); /* CLAIM_NULL */
	put_str(b, name);
}

void nfs4_cl_open_nocreate(struct ut_buf *b, const char *owner, const char *name, uint32_t access)
{
	open_head(b, owner, access);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, 0);
	put_str(b, name);
}

static void put_sid(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, sid->seqid);
	xdr_put_fixed(b, sid->other, 12);
}

void nfs4_cl_write(struct ut_buf *b, const struct nfs4_sid *sid, uint64_t off, const void *data, uint32_t len)
{
	xdr_put_u32(b, 38);
	put_sid(b, sid);
	xdr_put_u64(b, off);
	xdr_put_u32(b, 2); /* FILE_SYNC4 */
	xdr_put_opaque(b, data, len);
}

void nfs4_cl_read(struct ut_buf *b, const struct nfs4_sid *sid, uint64_t off, uint32_t count)
{
	xdr_put_u32(b, 25);
	put_sid(b, sid);
	xdr_put_u64(b, off);
	xdr_put_u32(b, count);
}

void nfs4_cl_close_op(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 4);
	xdr_put_u32(b, 0);
	put_sid(b, sid);
}

void nfs4_cl_readdir(struct ut_buf *b, uint64_t cookie, uint32_t maxcount)
{
	xdr_put_u32(b, 26);
	xdr_put_u64(b, cookie);
	xdr_put_u64(b, 0);
	xdr_put_u32(b, maxcount);
	xdr_put_u32(b, maxcount);
	xdr_put_u32(b, 2);
	xdr_put_u32(b, 1u << 1 | 1u << 20); /* type, fileid */
	xdr_put_u32(b, 0);
}

void nfs4_cl_rename(struct ut_buf *b, const char *from, const char *to)
{
	xdr_put_u32(b, 29);
	put_str(b, from);
	put_str(b, to);
}

void nfs4_cl_get_sid(struct xdr_cur *cur, struct nfs4_sid *sid)
{
	const uint8_t *o;

	sid->seqid = xdr_u32(cur);
	o = xdr_fixed(cur, 12);
	if (o)
		memcpy(sid->other, o, 12);
}

void nfs4_cl_open_res(struct xdr_cur *cur, struct nfs4_sid *sid)
{
	uint32_t dtype;
	struct nfs4_sid dsid;

	nfs4_cl_open_res_deleg(cur, sid, &dtype, &dsid);
}

void nfs4_cl_open_res_deleg(struct xdr_cur *cur, struct nfs4_sid *sid, uint32_t *dtype, struct nfs4_sid *dsid)
{
	nfs4_cl_open_res_wdeleg(cur, sid, dtype, dsid, NULL, NULL);
}

void nfs4_cl_open_res_wdeleg(struct xdr_cur *cur, struct nfs4_sid *sid, uint32_t *dtype, struct nfs4_sid *dsid,
			     uint64_t *limit, uint32_t *why)
{
	uint32_t n, i, l;

	nfs4_cl_get_sid(cur, sid);
	(void)xdr_fixed(cur, 20); /* cinfo */
	(void)xdr_u32(cur);       /* rflags */
	n = xdr_u32(cur);
	for (i = 0; i < n && i < 8; i++)
		(void)xdr_u32(cur);
	*dtype = xdr_u32(cur);
	memset(dsid, 0, sizeof(*dsid));
	if (limit)
		*limit = 0;
	if (why)
		*why = UINT32_MAX;
	if (*dtype == 3 && why) { /* OPEN_DELEGATE_NONE_EXT: why, and for CONTENTION / RESOURCE a bool */
		uint32_t w = xdr_u32(cur);

		if (w == 1 || w == 2)
			(void)xdr_u32(cur);
		if (why)
			*why = w;
	}
	if (*dtype == 1 || *dtype == 2) { /* OPEN_DELEGATE_READ / _WRITE: stateid, recall, (space_limit,) nfsace4 */
		nfs4_cl_get_sid(cur, dsid);
		(void)xdr_u32(cur);
		if (*dtype == 2) { /* nfs_space_limit4: NFS_LIMIT_SIZE filesize, or NFS_LIMIT_BLOCKS */
			uint32_t by = xdr_u32(cur);
			uint64_t v = by == 1 ? xdr_u64(cur) : (uint64_t)xdr_u32(cur) * xdr_u32(cur);

			if (limit)
				*limit = v;
		}
		(void)xdr_u32(cur);
		(void)xdr_u32(cur);
		(void)xdr_u32(cur);
		(void)xdr_opaque(cur, 1024, &l);
	}
}

void nfs4_cl_sequence_res(struct xdr_cur *cur)
{
	(void)xdr_fixed(cur, 16 + 20);
}

void nfs4_cl_open_previous(struct ut_buf *b, const char *owner, uint32_t access)
{
	open_head(b, owner, access);
	xdr_put_u32(b, 0); /* OPEN4_NOCREATE */
	xdr_put_u32(b, 1); /* CLAIM_PREVIOUS */
	xdr_put_u32(b, 0); /* OPEN_DELEGATE_NONE */
}

void nfs4_cl_open_downgrade(struct ut_buf *b, const struct nfs4_sid *sid, uint32_t access, uint32_t deny)
{
	xdr_put_u32(b, 21);
	put_sid(b, sid);
	xdr_put_u32(b, 0);
	xdr_put_u32(b, access);
	xdr_put_u32(b, deny);
}

void nfs4_cl_verify(struct ut_buf *b, uint32_t op, const uint32_t *words, uint32_t nwords, const void *vals,
		    uint32_t len)
{
	xdr_put_u32(b, op);
	xdr_put_u32(b, nwords);
	for (uint32_t i = 0; i < nwords; i++)
		xdr_put_u32(b, words[i]);
	xdr_put_opaque(b, vals, len);
}

void nfs4_cl_reclaim_complete(struct ut_buf *b)
{
	xdr_put_u32(b, 58);
	xdr_put_u32(b, 0); /* rca_one_fs */
}

void nfs4_cl_lock(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, uint64_t off, uint64_t len,
		  const struct nfs4_sid *sid, const char *new_owner)
{
	nfs4_cl_lock_ex(b, c, type, false, off, len, sid, new_owner);
}

void nfs4_cl_lock_ex(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, bool reclaim, uint64_t off,
		     uint64_t len, const struct nfs4_sid *sid, const char *new_owner)
{
	xdr_put_u32(b, 12);
	xdr_put_u32(b, type);
	xdr_put_u32(b, reclaim);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
	xdr_put_u32(b, new_owner != NULL);
	if (new_owner) { /* open_to_lock_owner4: sid is the open stateid */
		xdr_put_u32(b, 0);
		put_sid(b, sid);
		xdr_put_u32(b, 0);
		xdr_put_u64(b, c->clientid);
		put_str(b, new_owner);
	} else {         /* exist_lock_owner4: sid is the lock stateid */
		put_sid(b, sid);
		xdr_put_u32(b, 0);
	}
}

void nfs4_cl_lockt(struct ut_buf *b, const struct nfs4_cl *c, uint32_t type, uint64_t off, uint64_t len,
		   const char *owner)
{
	xdr_put_u32(b, 13);
	xdr_put_u32(b, type);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
	xdr_put_u64(b, c->clientid);
	put_str(b, owner);
}

void nfs4_cl_locku(struct ut_buf *b, uint32_t type, const struct nfs4_sid *sid, uint64_t off, uint64_t len)
{
	xdr_put_u32(b, 14);
	xdr_put_u32(b, type);
	xdr_put_u32(b, 0);
	put_sid(b, sid);
	xdr_put_u64(b, off);
	xdr_put_u64(b, len);
}

void nfs4_cl_free_stateid(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 45);
	put_sid(b, sid);
}

void nfs4_cl_denied(struct xdr_cur *cur, struct nfs4_cl_denied *d)
{
	const uint8_t *o;
	uint32_t n = 0;

	d->off = xdr_u64(cur);
	d->len = xdr_u64(cur);
	d->type = xdr_u32(cur);
	d->clientid = xdr_u64(cur);
	o = xdr_opaque(cur, sizeof(d->owner) - 1, &n);
	memset(d->owner, 0, sizeof(d->owner));
	if (o)
		memcpy(d->owner, o, n);
}

void nfs4_cl_delegreturn(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 8);
	put_sid(b, sid);
}

void nfs4_cl_test_stateid(struct ut_buf *b, const struct nfs4_sid *sid)
{
	xdr_put_u32(b, 55);
	xdr_put_u32(b, 1);
	put_sid(b, sid);
}

void nfs4_cl_bind_conn(struct ut_buf *b, const struct nfs4_cl *c, uint32_t dir)
{
	xdr_put_u32(b, 41);
	xdr_put_fixed(b, c->sess, 16);
	xdr_put_u32(b, dir);
	xdr_put_u32(b, 0); /* not RDMA */
}

uint32_t nfs4_cl_sequence_flags(struct xdr_cur *cur)
{
	(void)xdr_fixed(cur, 16);
	(void)xdr_u32(cur);
	(void)xdr_u32(cur);
	(void)xdr_u32(cur);
	(void)xdr_u32(cur);
	return xdr_u32(cur);
}
