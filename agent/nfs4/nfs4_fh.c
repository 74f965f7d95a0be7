/* nfs4_fh: the current and saved file handles (PUTFH, PUTROOTFH,
 * PUTPUBFH, GETFH, SAVEFH, RESTOREFH), LOOKUP and LOOKUPP, SECINFO and
 * SECINFO_NO_NAME, and the pseudo file system above the exports.
 *
 * The pseudo root is a directory the server makes up: its handle is
 * NFS4_PSEUDO_FH (version byte 0x80, which no volume handle has), its
 * entries are the exports the caller may reach over NFSv4 by share name
 * (path "/<shareName>" less its '/'), in the order of the export set, with
 * cookie = position + 3. An export the rules refuse is neither listed nor
 * found. Objects of an export get the export's own handles (vol_fh_make),
 * the very ones NFSv3 uses; every PUTFH checks the export rules again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t nfs4_pseudo_fh[8] = { 0x80, 'A', 'Q', '4', 'R', 'O', 'O', 'T' };

static void fhc_pseudo(struct nfs4_fhc *f)
{
	nfs4_fhc_clear(f);
	f->set = true;
	f->pseudo = true;
}

uint32_t nfs4_fhc_set(struct nfs4_cx *cx, struct nfs4_fhc *f, struct vol_obj *obj)
{
	struct nfs4_fhc n = { .set = true };

	n.access = vol_authorize(obj->exp, cx->call->peer, VOL_PROTO_NFSV4, &cx->call->cred, &n.ecred);
	if (n.access == VOL_ACCESS_NONE) {
		vol_obj_cleanup(obj);
		return NFS4ERR_ACCESS;
	}
	n.obj = *obj;
	obj->fd = -1;
	obj->fent = NULL;
	obj->exp = NULL;
	nfs4_fhc_clear(f);
	*f = n;
	return NFS4_OK;
}

/* dst = src: the object is resolved again from its handle (vol_obj has no
 * duplicate; the open-file cache makes it cheap). */
static uint32_t fhc_copy(struct nfs4_cx *cx, struct nfs4_fhc *dst, const struct nfs4_fhc *src)
{
	struct vol_fh fh;
	struct vol_obj obj = { .fd = -1 };
	int rc;

	if (src->pseudo) {
		fhc_pseudo(dst);
		return NFS4_OK;
	}
	if ((rc = vol_fh_make(cx->call->store, &src->obj, &fh)) != 0 ||
	    (rc = vol_fh_open(cx->call->store, fh.data, fh.len, &obj)) != 0)
		return nfs4_status(rc);
	nfs4_fhc_clear(dst);
	dst->set = true;
	dst->obj = obj;
	dst->ecred = src->ecred;
	dst->access = src->access;
	dst->cur_stateid = src->cur_stateid;
	return NFS4_OK;
}

uint32_t nfs4_op_putfh(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj obj = { .fd = -1 };
	uint32_t len;
	const uint8_t *fh = xdr_opaque(in, NFS4_FH_MAX, &len);
	int rc;

	if (in->err)
		return NFS4ERR_BADXDR;
	if (len == sizeof(nfs4_pseudo_fh) && !memcmp(fh, nfs4_pseudo_fh, len)) {
		fhc_pseudo(&cx->cur);
		return NFS4_OK;
	}
	nfs4_fhc_clear(&cx->cur);
	if ((rc = vol_fh_open(cx->call->store, fh, len, &obj)) != 0)
		return nfs4_status(rc);
	return nfs4_fhc_set(cx, &cx->cur, &obj);
}

uint32_t nfs4_op_putrootfh(struct nfs4_cx *cx, struct xdr_cur *in)
{
	(void)in;
	fhc_pseudo(&cx->cur);
	return NFS4_OK;
}

uint32_t nfs4_op_getfh(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_fh fh;
	int rc;

	(void)in;
	if (cx->cur.pseudo) {
		xdr_put_opaque(cx->out, nfs4_pseudo_fh, sizeof(nfs4_pseudo_fh));
		return NFS4_OK;
	}
	if ((rc = vol_fh_make(cx->call->store, &cx->cur.obj, &fh)) != 0)
		return nfs4_status(rc);
	xdr_put_opaque(cx->out, fh.data, fh.len);
	return NFS4_OK;
}

/* The export named name in the pseudo root, if this caller may reach it. */
static struct vol_export *pseudo_export(struct nfs4_cx *cx, const char *name, uint32_t len)
{
	char path[VOL_NAME_MAX + 2];
	struct vol_export *e;
	struct vol_cred ec;

	snprintf(path, sizeof(path), "/%.*s", (int)len, name);
	if (!(e = vol_export_by_path(cx->call->store, path, len + 1)))
		return NULL;
	if (vol_authorize(e, cx->call->peer, VOL_PROTO_NFSV4, &cx->call->cred, &ec) == VOL_ACCESS_NONE) {
		vol_export_unref(e);
		return NULL;
	}
	return e;
}

static uint32_t dir_check(const struct nfs4_fhc *f)
{
	if (S_ISDIR(f->obj.st.st_mode))
		return NFS4_OK;
	return S_ISLNK(f->obj.st.st_mode) ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR;
}

/* The object name names in the current directory: for the pseudo root, the
 * root of the export of that share name the caller may reach. */
static uint32_t find_name(struct nfs4_cx *cx, const char *name, uint32_t len, struct vol_obj *obj)
{
	struct vol_export *e;
	uint32_t st;
	int rc;

	if (cx->cur.pseudo) {
		if (!(e = pseudo_export(cx, name, len)))
			return NFS4ERR_NOENT;
		rc = vol_root(e, obj);
		vol_export_unref(e);
		return nfs4_status(rc);
	}
	if ((st = dir_check(&cx->cur)) != NFS4_OK)
		return st;
	return nfs4_status(vol_lookup(&cx->cur.obj, &cx->cur.ecred, name, len, obj));
}

uint32_t nfs4_op_lookup(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj obj = { .fd = -1 };
	const char *name;
	uint32_t len, st = nfs4_name(in, &name, &len);

	if (st == NFS4_OK)
		st = find_name(cx, name, len, &obj);
	if (st != NFS4_OK)
		return st;
	if (cx->cur.pseudo)
		return nfs4_fhc_set(cx, &cx->cur, &obj); /* into an export: its rules */
	vol_obj_cleanup(&cx->cur.obj);
	cx->cur.obj = obj;
	memset(&cx->cur.cur_stateid, 0, sizeof(cx->cur.cur_stateid));
	return NFS4_OK;
}

/* Is obj its export's root? */
bool nfs4_is_export_root(struct vol_obj *obj)
{
	struct vol_obj root = { .fd = -1 };
	bool yes;

	if (vol_root(obj->exp, &root) != 0)
		return false;
	yes = root.st.st_dev == obj->st.st_dev && root.st.st_ino == obj->st.st_ino;
	vol_obj_cleanup(&root);
	return yes;
}

uint32_t nfs4_op_lookupp(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj obj = { .fd = -1 };
	uint32_t st;
	int rc;

	(void)in;
	if (cx->cur.pseudo)
		return NFS4ERR_NOENT;
	if ((st = dir_check(&cx->cur)) != NFS4_OK)
		return st;
	if (!cx->cur.obj.snap && nfs4_is_export_root(&cx->cur.obj)) {
		fhc_pseudo(&cx->cur);
		return NFS4_OK;
	}
	if ((rc = vol_lookup(&cx->cur.obj, &cx->cur.ecred, "..", 2, &obj)) != 0)
		return nfs4_status(rc);
	vol_obj_cleanup(&cx->cur.obj);
	cx->cur.obj = obj;
	return NFS4_OK;
}

uint32_t nfs4_op_savefh(struct nfs4_cx *cx, struct xdr_cur *in)
{
	(void)in;
	return fhc_copy(cx, &cx->saved, &cx->cur);
}

uint32_t nfs4_op_restorefh(struct nfs4_cx *cx, struct xdr_cur *in)
{
	(void)in;
	if (!cx->saved.set)
		return NFS4ERR_RESTOREFH;
	return fhc_copy(cx, &cx->cur, &cx->saved);
}

/* AUTH_SYS is the one flavor served (RPCSEC_GSS comes with Kerberos). */
static void put_secinfo(struct nfs4_cx *cx)
{
	xdr_put_u32(cx->out, 1);
	xdr_put_u32(cx->out, 1); /* AUTH_SYS */
}

uint32_t nfs4_op_secinfo(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj obj = { .fd = -1 };
	const char *name;
	uint32_t len, st = nfs4_name(in, &name, &len);

	if (st == NFS4_OK)
		st = find_name(cx, name, len, &obj);
	vol_obj_cleanup(&obj);
	if (st != NFS4_OK)
		return st;
	put_secinfo(cx);
	nfs4_fhc_clear(&cx->cur); /* SECINFO consumes the current handle (RFC 8881 2.6.3.1.1.8) */
	return NFS4_OK;
}

uint32_t nfs4_op_secinfo_no_name(struct nfs4_cx *cx, struct xdr_cur *in)
{
	uint32_t style = xdr_u32(in);

	if (in->err)
		return NFS4ERR_BADXDR;
	if (style > 1)
		return NFS4ERR_INVAL;
	if (style == 1 && cx->cur.pseudo)
		return NFS4ERR_NOENT;
	put_secinfo(cx);
	nfs4_fhc_clear(&cx->cur);
	return NFS4_OK;
}

uint64_t nfs4_pseudo_fileid(uint64_t fsid)
{
	return (fsid | 1ull << 63) ^ 0x5a5a; /* never 1, the pseudo root's */
}

uint32_t nfs4_pseudo_readdir(struct nfs4_cx *cx, uint64_t cookie, uint32_t maxcount, const uint32_t *req,
			     uint32_t nreq)
{
	struct ut_buf *out = cx->out;
	size_t start = out->len, i;
	struct vol_export *e;
	bool eof = true;
	uint32_t n = 0;

	xdr_put_fixed(out, "AQpseudo", 8); /* cookie verifier */
	for (i = cookie >= 3 ? (size_t)cookie - 2 : 0; (e = vol_export_at(cx->call->store, i)); i++) {
		const struct vol_export_cfg *cfg = vol_export_config(e);
		struct nfs4_fhc f = { .set = true };
		struct vol_obj root = { .fd = -1 };
		size_t mark = out->len;
		uint32_t nl = (uint32_t)strlen(cfg->path + 1);

		f.access = vol_authorize(e, cx->call->peer, VOL_PROTO_NFSV4, &cx->call->cred, &f.ecred);
		if (f.access == VOL_ACCESS_NONE || vol_root(e, &root) != 0) {
			vol_export_unref(e);
			continue;
		}
		f.obj = root;
		xdr_put_u32(out, 1);
		xdr_put_u64(out, i + 3);
		xdr_put_opaque(out, cfg->path + 1, nl);
		(void)nfs4_fattr_encode(cx, &f, req, nreq, out);
		vol_obj_cleanup(&f.obj);
		vol_export_unref(e);
		if (out->err || out->len - start + 8 > maxcount) {
			ut_buf_rewind(out, mark);
			out->err = 0;
			eof = false;
			break;
		}
		n++;
	}
	if (n == 0 && !eof)
		return NFS4ERR_TOOSMALL;
	xdr_put_u32(out, 0);
	xdr_put_u32(out, eof);
	return NFS4_OK;
}
