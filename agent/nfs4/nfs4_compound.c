/* nfs4_compound: program 100003 version 4 (NULL and COMPOUND), the
 * operation table, and what every operation shares: the order rules of
 * sessions (SEQUENCE first, or one of the operations that may stand alone),
 * the current and saved file handles, read-only exports, errno ->
 * nfsstat4, counters, and the slot reply cache around the whole COMPOUND.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_clock.h"

enum nfs4_op_flags {
	F_FH = 1u << 0,      /* needs a current file handle: NOFILEHANDLE */
	F_MOD = 1u << 1,     /* changes the object: ROFS on read-only access and on the pseudo root */
	F_ALONE = 1u << 2,   /* may be a COMPOUND's only operation, without SEQUENCE */
	F_REAL = 1u << 3,    /* meaningless on the pseudo root: INVAL there */
};

struct nfs4_opdesc {
	const char *name;
	nfs4_op_fn fn;
	unsigned flags;
	unsigned vop;        /* the store's counter slot (the NFSv3 procedure doing the same), 0: none */
};

/* Operations not listed answer NFS4ERR_NOTSUPP: DELEGPURGE, WANT_DELEGATION, directory delegations,
 * pNFS, named attributes, and the v4.0 ones v4.1 forbids. */
static const struct nfs4_opdesc nfs4_ops[OP_MAX + 1] = {
	[OP_ACCESS] = { "ACCESS", nfs4_op_access, F_FH, 4 },
	[OP_CLOSE] = { "CLOSE", nfs4_op_close, F_FH | F_REAL, 0 },
	[OP_COMMIT] = { "COMMIT", nfs4_op_commit, F_FH | F_MOD | F_REAL, 21 },
	[OP_CREATE] = { "CREATE", nfs4_op_create, F_FH | F_MOD, 9 },
	[OP_GETATTR] = { "GETATTR", nfs4_op_getattr, F_FH, 1 },
	[OP_GETFH] = { "GETFH", nfs4_op_getfh, F_FH, 0 },
	[OP_LINK] = { "LINK", nfs4_op_link, F_FH | F_MOD, 15 },
	[OP_LOCK] = { "LOCK", nfs4_op_lock, F_FH | F_REAL, 0 },
	[OP_LOCKT] = { "LOCKT", nfs4_op_lockt, F_FH | F_REAL, 0 },
	[OP_LOCKU] = { "LOCKU", nfs4_op_locku, F_FH | F_REAL, 0 },
	[OP_LOOKUP] = { "LOOKUP", nfs4_op_lookup, F_FH, 3 },
	[OP_LOOKUPP] = { "LOOKUPP", nfs4_op_lookupp, F_FH, 3 },
	[OP_OPEN] = { "OPEN", nfs4_op_open, F_FH, 0 },
	[OP_OPEN_DOWNGRADE] = { "OPEN_DOWNGRADE", nfs4_op_open_downgrade, F_FH | F_REAL, 0 },
	[OP_VERIFY] = { "VERIFY", nfs4_op_verify, F_FH, 1 },
	[OP_NVERIFY] = { "NVERIFY", nfs4_op_nverify, F_FH, 1 },
	[OP_PUTFH] = { "PUTFH", nfs4_op_putfh, 0, 0 },
	[OP_PUTPUBFH] = { "PUTPUBFH", nfs4_op_putrootfh, 0, 0 },
	[OP_PUTROOTFH] = { "PUTROOTFH", nfs4_op_putrootfh, 0, 0 },
	[OP_READ] = { "READ", nfs4_op_read, F_FH | F_REAL, 6 },
	[OP_READDIR] = { "READDIR", nfs4_op_readdir, F_FH, 16 },
	[OP_READLINK] = { "READLINK", nfs4_op_readlink, F_FH | F_REAL, 5 },
	[OP_REMOVE] = { "REMOVE", nfs4_op_remove, F_FH | F_MOD, 12 },
	[OP_RENAME] = { "RENAME", nfs4_op_rename, F_FH | F_MOD, 14 },
	[OP_RESTOREFH] = { "RESTOREFH", nfs4_op_restorefh, 0, 0 },
	[OP_SAVEFH] = { "SAVEFH", nfs4_op_savefh, F_FH, 0 },
	[OP_SECINFO] = { "SECINFO", nfs4_op_secinfo, F_FH, 0 },
	[OP_SETATTR] = { "SETATTR", nfs4_op_setattr, F_FH | F_MOD, 2 },
	[OP_WRITE] = { "WRITE", nfs4_op_write, F_FH | F_MOD | F_REAL, 7 },
	[OP_BIND_CONN_TO_SESSION] = { "BIND_CONN_TO_SESSION", nfs4_op_bind_conn, F_ALONE, 0 },
	[OP_EXCHANGE_ID] = { "EXCHANGE_ID", nfs4_op_exchange_id, F_ALONE, 0 },
	[OP_CREATE_SESSION] = { "CREATE_SESSION", nfs4_op_create_session, F_ALONE, 0 },
	[OP_DESTROY_SESSION] = { "DESTROY_SESSION", nfs4_op_destroy_session, F_ALONE, 0 },
	[OP_FREE_STATEID] = { "FREE_STATEID", nfs4_op_free_stateid, 0, 0 },
	[OP_DELEGRETURN] = { "DELEGRETURN", nfs4_op_delegreturn, F_FH | F_REAL, 0 },
	[OP_BACKCHANNEL_CTL] = { "BACKCHANNEL_CTL", nfs4_op_backchannel_ctl, 0, 0 },
	[OP_SECINFO_NO_NAME] = { "SECINFO_NO_NAME", nfs4_op_secinfo_no_name, F_FH, 0 },
	[OP_SEQUENCE] = { "SEQUENCE", nfs4_op_sequence, 0, 0 },
	[OP_TEST_STATEID] = { "TEST_STATEID", nfs4_op_test_stateid, 0, 0 },
	[OP_DESTROY_CLIENTID] = { "DESTROY_CLIENTID", nfs4_op_destroy_clientid, F_ALONE, 0 },
	[OP_RECLAIM_COMPLETE] = { "RECLAIM_COMPLETE", nfs4_op_reclaim_complete, 0, 0 },
};

uint32_t nfs4_status(int rc)
{
	static const struct { int err; uint32_t st; } map[] = {
		{ 0, NFS4_OK }, { -EPERM, NFS4ERR_PERM }, { -ENOENT, NFS4ERR_NOENT }, { -EIO, NFS4ERR_IO },
		{ -ENXIO, NFS4ERR_NXIO }, { -EACCES, NFS4ERR_ACCESS }, { -EEXIST, NFS4ERR_EXIST },
		{ -EXDEV, NFS4ERR_XDEV }, { -ENOTDIR, NFS4ERR_NOTDIR }, { -EISDIR, NFS4ERR_ISDIR },
		{ -EINVAL, NFS4ERR_INVAL }, { -EFBIG, NFS4ERR_FBIG }, { -ENOSPC, NFS4ERR_NOSPC },
		{ -EROFS, NFS4ERR_ROFS }, { -EMLINK, NFS4ERR_MLINK }, { -ENAMETOOLONG, NFS4ERR_NAMETOOLONG },
		{ -ENOTEMPTY, NFS4ERR_NOTEMPTY }, { -EDQUOT, NFS4ERR_DQUOT }, { -ESTALE, NFS4ERR_STALE },
		{ VOL_EBADHANDLE, NFS4ERR_BADHANDLE }, { -ENOTSUP, NFS4ERR_NOTSUPP },
		{ -ETIMEDOUT, NFS4ERR_DELAY }, { -ELOOP, NFS4ERR_SYMLINK }, { -ENOMEM, NFS4ERR_RESOURCE },
		{ -EBADF, NFS4ERR_STALE },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].err == rc)
			return map[i].st;
	return NFS4ERR_SERVERFAULT;
}

void nfs4_fhc_clear(struct nfs4_fhc *f)
{
	if (f->set && !f->pseudo)
		vol_obj_cleanup(&f->obj);
	memset(f, 0, sizeof(*f));
	f->obj.fd = -1;
}

uint64_t nfs4_change(const struct stat *st)
{
	return (uint64_t)st->st_ctim.tv_sec * 1000000000ull + (uint64_t)st->st_ctim.tv_nsec;
}

bool nfs4_get_bitmap(struct xdr_cur *in, uint32_t *w, uint32_t max, uint32_t *n)
{
	uint32_t i;

	*n = xdr_u32(in);
	memset(w, 0, max * sizeof(*w));
	if (*n > max) {
		in->err = -EBADMSG;
		return false;
	}
	for (i = 0; i < *n; i++)
		w[i] = xdr_u32(in);
	return !in->err;
}

void nfs4_put_bitmap(struct ut_buf *b, const uint32_t *w, uint32_t n)
{
	uint32_t i;

	while (n > 0 && w[n - 1] == 0)
		n--;
	xdr_put_u32(b, n);
	for (i = 0; i < n; i++)
		xdr_put_u32(b, w[i]);
}

uint32_t nfs4_name(struct xdr_cur *in, const char **name, uint32_t *len)
{
	const uint8_t *p = xdr_opaque(in, NFS4_OPAQUE_LIMIT, len);

	*name = (const char *)p;
	if (in->err)
		return NFS4ERR_BADXDR;
	if (*len == 0)
		return NFS4ERR_INVAL;
	if (*len > VOL_NAME_MAX)
		return NFS4ERR_NAMETOOLONG;
	if (memchr(p, '/', *len) || memchr(p, '\0', *len) || (*len == 1 && p[0] == '.') ||
	    (*len == 2 && p[0] == '.' && p[1] == '.'))
		return NFS4ERR_BADNAME;
	return NFS4_OK;
}

/* May the operation run on the current handle? */
static uint32_t nfs4_op_check(const struct nfs4_cx *cx, const struct nfs4_opdesc *d)
{
	if ((d->flags & F_FH) && !cx->cur.set)
		return NFS4ERR_NOFILEHANDLE;
	if (!(d->flags & F_FH))
		return NFS4_OK;
	if (cx->cur.pseudo)
		return (d->flags & F_MOD) ? NFS4ERR_ROFS : (d->flags & F_REAL) ? NFS4ERR_INVAL : NFS4_OK;
	if ((d->flags & F_MOD) && cx->cur.access != VOL_ACCESS_RW)
		return NFS4ERR_ROFS;
	return NFS4_OK;
}

struct nfs4_res {
	struct ut_buf buf;           /* the whole COMPOUND4res */
};

struct nfs4_args {
	const uint8_t *p;            /* the raw arguments: operations decode as they run */
	size_t len;
};

static int nfs4_dec_args(struct xdr_cur *cur, void *args)
{
	struct nfs4_args *a = args;

	a->p = cur->p + cur->pos;
	a->len = xdr_left(cur);
	return 0;
}

static int nfs4_dec_void(struct xdr_cur *cur, void *args)
{
	(void)cur;
	(void)args;
	return 0;
}

static void nfs4_null(struct nfs_call *call, void *args, void *res)
{
	(void)call;
	(void)args;
	(void)res;
}

static void nfs4_enc_void(struct ut_buf *buf, void *res, struct nfs_call *call)
{
	(void)buf;
	(void)res;
	(void)call;
}

/* Run the operations of one COMPOUND (RFC 8881 section 16.2), the result
 * into res->buf: status, tag, the results of the operations run. */
static void nfs4_compound(struct nfs_call *call, void *args, void *resp)
{
	const struct nfs4_args *a = args;
	struct nfs4_res *res = resp;
	struct ut_buf *out = &res->buf;
	struct nfs4_cx cx = { .call = call, .srv = call->ctx, .out = out };
	struct xdr_cur in;
	const uint8_t *tag;
	uint32_t taglen, minor, nops, i, status = NFS4_OK, nres = 0;
	size_t st_off, n_off;

	ut_buf_init(out, NFS4_REP_MAX);
	if (!cx.srv->store) { /* the one store the server serves: its volumes' holder records */
		pthread_mutex_lock(&cx.srv->mu);
		cx.srv->store = call->store;
		pthread_mutex_unlock(&cx.srv->mu);
	}
	nfs4_fhc_clear(&cx.cur);
	nfs4_fhc_clear(&cx.saved);
	xdr_cur_init(&in, a->p, a->len);
	tag = xdr_opaque(&in, NFS4_TAG_MAX, &taglen);
	minor = xdr_u32(&in);
	nops = xdr_u32(&in);
	st_off = out->len;
	xdr_put_u32(out, 0);
	xdr_put_opaque(out, tag, taglen);
	n_off = out->len;
	xdr_put_u32(out, 0);
	if (in.err) {
		status = NFS4ERR_BADXDR;
		goto done;
	}
	if (minor != NFS4_MINOR) {
		status = NFS4ERR_MINOR_VERS_MISMATCH;
		goto done;
	}
	for (i = 0; i < nops && status == NFS4_OK; i++) {
		uint32_t op = xdr_u32(&in);
		const struct nfs4_opdesc *d = op <= OP_MAX && nfs4_ops[op].fn ? &nfs4_ops[op] : NULL;
		uint64_t t0 = ut_clock_mono_ns(), io0 = call->io_bytes;
		size_t s_off;

		if (in.err) {
			status = NFS4ERR_BADXDR;
			break;
		}
		xdr_put_u32(out, op <= OP_MAX && op >= OP_ACCESS ? op : OP_ILLEGAL);
		s_off = out->len;
		xdr_put_u32(out, 0);
		nres++;
		cx.op = op;
		if (i == 0 && nops > NFS4_MAX_OPS)
			status = NFS4ERR_TOO_MANY_OPS;
		else if (op < OP_ACCESS || op > OP_MAX)
			status = NFS4ERR_OP_ILLEGAL;
		else if (!d)
			status = NFS4ERR_NOTSUPP;
		else if (op == OP_SEQUENCE && i > 0)
			status = NFS4ERR_SEQUENCE_POS;
		else if (i == 0 && op != OP_SEQUENCE && !(d->flags & F_ALONE))
			status = NFS4ERR_OP_NOT_IN_SESSION;
		else if (i == 0 && op != OP_SEQUENCE && nops > 1)
			status = NFS4ERR_NOT_ONLY_OP;
		else if ((status = nfs4_op_check(&cx, d)) == NFS4_OK) {
			status = d->fn(&cx, &in);
			if (in.err)
				status = NFS4ERR_BADXDR;
		}
		if (cx.replay) {
			/* SEQUENCE found this request answered already: its reply goes out again */
			ut_buf_rewind(out, 0);
			xdr_put_fixed(out, cx.replay, cx.replay_len);
			goto out;
		}
		if (status == NFS4ERR_DENIED && (op == OP_LOCK || op == OP_LOCKT) && out->len > s_off + 4) {
			/* LOCK4denied: the body the operation wrote stays */
		} else if (status != NFS4_OK) {
			ut_buf_rewind(out, s_off + 4); /* failed results carry nothing... */
			if (op == OP_SETATTR)
				xdr_put_u32(out, 0); /* ...but SETATTR's attrsset (none: all or nothing) */
		}
		ut_buf_set_be32(out, s_off, status);
		if (d && d->vop && cx.cur.set && !cx.cur.pseudo && cx.cur.obj.exp)
			vol_export_record(cx.cur.obj.exp, d->vop, call->io_bytes - io0, ut_clock_mono_ns() - t0,
					  status != NFS4_OK);
	}
done:
	ut_buf_set_be32(out, st_off, status);
	ut_buf_set_be32(out, n_off, nres);
	if (cx.sess)
		nfs4_sequence_done(&cx, out->err ? NULL : ut_buf_bytes(out), out->len);
out:
	free(cx.replay_owned);
	if (cx.sess)
		nfs4_sequence_done(&cx, NULL, 0);
	nfs4_fhc_clear(&cx.cur);
	nfs4_fhc_clear(&cx.saved);
}

static void nfs4_enc_compound(struct ut_buf *buf, void *resp, struct nfs_call *call)
{
	struct nfs4_res *res = resp;

	(void)call;
	if (res->buf.err) {
		buf->err = res->buf.err; /* the server answers SYSTEM_ERR */
		return;
	}
	xdr_put_fixed(buf, ut_buf_bytes(&res->buf), res->buf.len);
}

static void nfs4_free_compound(void *resp)
{
	ut_buf_cleanup(&((struct nfs4_res *)resp)->buf);
}

/* QoS (vol_admit) before anything is served: the handle of the first PUTFH
 * and, when a READ or WRITE follows it, its bytes. Reads only the
 * operations it can skip exactly (SEQUENCE, PUTFH, READ, WRITE): others
 * stop it, charging what it found. */
static bool nfs4_qos(uint32_t proc, const uint8_t *args, size_t len, struct nfs_qos_charge *out)
{
	struct xdr_cur in;
	uint32_t n, i, fl;

	if (proc != 1)
		return false;
	memset(out, 0, sizeof(*out));
	out->kind = QOS_META;
	xdr_cur_init(&in, args, len);
	(void)xdr_opaque(&in, NFS4_TAG_MAX, &n);
	if (xdr_u32(&in) != NFS4_MINOR)
		return false;
	n = xdr_u32(&in);
	for (i = 0; i < n && i < NFS4_MAX_OPS && !in.err; i++) {
		uint32_t op = xdr_u32(&in);

		if (op == OP_SEQUENCE) {
			(void)xdr_fixed(&in, NFS4_SESSIONID + 16);
		} else if (op == OP_PUTFH && !out->fh) {
			out->fh = xdr_opaque(&in, NFS4_FH_MAX, &fl);
			out->fh_len = fl;
		} else if ((op == OP_READ || op == OP_WRITE) && out->fh) {
			(void)xdr_fixed(&in, 16 + 8);
			if (op == OP_WRITE)
				(void)xdr_u32(&in);
			out->kind = op == OP_READ ? QOS_READ : QOS_WRITE;
			out->bytes = xdr_u32(&in);
			break;
		} else {
			break;
		}
	}
	return out->fh != NULL && !in.err;
}

struct nfs4_none { char unused; };

static const struct nfs_proc nfs4_procs[2] = {
	[0] = { .name = "NULL", .decode = nfs4_dec_void, .handler = nfs4_null, .encode = nfs4_enc_void,
		.args_size = sizeof(struct nfs4_none), .res_size = sizeof(struct nfs4_none) },
	[1] = { .name = "COMPOUND", .decode = nfs4_dec_args, .handler = nfs4_compound,
		.encode = nfs4_enc_compound, .free = nfs4_free_compound,
		.args_size = sizeof(struct nfs4_args), .res_size = sizeof(struct nfs4_res) },
};

const struct nfs_prog nfs4_prog = { .prog = NFS4_PROG, .vers = NFS4_VERS, .procs = nfs4_procs, .nprocs = 2,
				    .qos = nfs4_qos, .reply = nfs4_cb_reply, .stop = nfs4_cb_stop };
