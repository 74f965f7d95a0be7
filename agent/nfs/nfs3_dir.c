/* nfs3_dir: NFSv3 procedures on directories: LOOKUP, CREATE, MKDIR,
 * SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK, READDIR, READDIRPLUS.
 *
 * READDIR cookies are getdents64 d_off values (see vol_readdir): they stay
 * valid while the directory changes, so the cookie verifier does not need to
 * change with the directory; it is derived from the directory's identity
 * (inode number) and checked only when the client sends a non-zero one. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs3.h"

#include <errno.h>
#include <string.h>

/* Make the handle and attributes of a new or found object. */
static int nfs3_child(struct nfs_call *call, struct vol_obj *o, struct vol_fh *fh,
		      struct nfs3_attr *attr)
{
	int rc = vol_fh_make(call->store, o, fh);

	if (attr)
		nfs3_attr_of(attr, o);
	return rc;
}

void nfs3_lookup(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_dirop_args *args = a;
	struct nfs3_lookup_res *res = r;
	struct vol_obj child = {.fd = -1};
	int rc;

	rc = vol_lookup(&call->obj, &call->ecred, args->name.s, args->name.len, &child);
	if (rc == 0)
		rc = nfs3_child(call, &child, &res->fh, &res->obj);
	if (rc == 0)
		vol_read_ahead_open(&child); /* NFSv3 has no OPEN: a LOOKUP is the client's open */
	res->status = nfs3_status(rc);
	nfs3_attr_of(&res->dir, &call->obj);
	vol_obj_cleanup(&child);
}

/* Shared tail of CREATE, MKDIR, SYMLINK, MKNOD. */
static void nfs3_made(struct nfs_call *call, int rc, struct vol_obj *child, struct nfs3_create_res *res)
{
	if (rc == 0 && nfs3_child(call, child, &res->fh.fh, &res->attr) == 0)
		res->fh.present = true;
	res->status = nfs3_status(rc);
	nfs3_wcc_post(&res->dir, &call->obj);
	vol_obj_cleanup(child);
}

void nfs3_create(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_create_args *args = a;
	struct nfs3_create_res *res = r;
	struct vol_obj child = {.fd = -1};
	int rc;

	nfs3_wcc_pre(&res->dir, &call->obj);
	rc = vol_create(&call->obj, &call->ecred, args->name.s, args->name.len, args->mode == 1,
			args->mode == 2 ? args->verf : NULL, &args->sa, &child);
	nfs3_made(call, rc, &child, res);
}

void nfs3_mkdir(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_mkdir_args *args = a;
	struct nfs3_create_res *res = r;
	struct vol_obj child = {.fd = -1};
	int rc;

	nfs3_wcc_pre(&res->dir, &call->obj);
	rc = vol_mkdir(&call->obj, &call->ecred, args->name.s, args->name.len, &args->sa, &child);
	nfs3_made(call, rc, &child, res);
}

void nfs3_symlink(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_symlink_args *args = a;
	struct nfs3_create_res *res = r;
	struct vol_obj child = {.fd = -1};
	int rc;

	nfs3_wcc_pre(&res->dir, &call->obj);
	rc = vol_symlink(&call->obj, &call->ecred, args->name.s, args->name.len, args->target.s,
			 args->target.len, &args->sa, &child);
	nfs3_made(call, rc, &child, res);
}

/* FIFOs and sockets are made (clients bind unix sockets and mkfifo on
 * volumes); device nodes answer NFS3ERR_PERM, as knfsd does for a caller
 * without CAP_MKNOD (every caller here: a device node on a shared shelf would
 * open the host's devices to whoever reaches the node); REG, DIR, LNK and
 * other types are not MKNOD's (BADTYPE, as knfsd). */
void nfs3_mknod(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_mknod_args *args = a;
	struct nfs3_create_res *res = r;
	struct vol_obj child = {.fd = -1};
	mode_t type;
	int rc;

	nfs3_wcc_pre(&res->dir, &call->obj);
	switch (args->type) {
	case 7: type = S_IFIFO; break;   /* NF3FIFO */
	case 6: type = S_IFSOCK; break;  /* NF3SOCK */
	case 3: case 4: type = S_IFCHR; break; /* NF3CHR, NF3BLK: refused by vol_mknod */
	default:
		res->status = NFS3ERR_BADTYPE;
		nfs3_wcc_post(&res->dir, &call->obj);
		return;
	}
	rc = vol_mknod(&call->obj, &call->ecred, args->name.s, args->name.len, type, &args->sa, &child);
	nfs3_made(call, rc, &child, res);
}

void nfs3_remove(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_dirop_args *args = a;
	struct nfs3_wcc_res *res = r;

	nfs3_wcc_pre(&res->wcc, &call->obj);
	res->status = nfs3_status(vol_remove(&call->obj, &call->ecred, args->name.s, args->name.len));
	nfs3_wcc_post(&res->wcc, &call->obj);
}

void nfs3_rmdir(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_dirop_args *args = a;
	struct nfs3_wcc_res *res = r;

	nfs3_wcc_pre(&res->wcc, &call->obj);
	res->status = nfs3_status(vol_rmdir(&call->obj, &call->ecred, args->name.s, args->name.len));
	nfs3_wcc_post(&res->wcc, &call->obj);
}

/* Resolve the second handle of RENAME/LINK; it must be in the same export. */
static int nfs3_second(struct nfs_call *call, const struct nfs_fh3 *fh, struct vol_obj *out)
{
	int rc = vol_fh_open(call->store, fh->data, fh->len, out);

	if (rc == 0 && vol_export_fsid(out->exp) != vol_export_fsid(call->obj.exp))
		rc = -EXDEV;
	return rc;
}

void nfs3_rename(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_rename_args *args = a;
	struct nfs3_rename_res *res = r;
	struct vol_obj to = {.fd = -1};
	int rc;

	nfs3_wcc_pre(&res->from, &call->obj);
	if ((rc = nfs3_second(call, &args->tofh, &to)) == 0) {
		nfs3_wcc_pre(&res->to, &to);
		rc = vol_rename(&call->obj, args->name.s, args->name.len, &to, args->toname.s,
				args->toname.len, &call->ecred);
		nfs3_wcc_post(&res->to, &to);
	}
	res->status = nfs3_status(rc);
	nfs3_wcc_post(&res->from, &call->obj);
	vol_obj_cleanup(&to);
}

void nfs3_link(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_link_args *args = a;
	struct nfs3_link_res *res = r;
	struct vol_obj dir = {.fd = -1};
	int rc;

	if ((rc = nfs3_second(call, &args->dirfh, &dir)) == 0) {
		nfs3_wcc_pre(&res->dir, &dir);
		rc = vol_link(&call->obj, &dir, args->name.s, args->name.len, &call->ecred);
		nfs3_wcc_post(&res->dir, &dir);
	}
	res->status = nfs3_status(rc);
	nfs3_attr_of(&res->attr, &call->obj);
	vol_obj_cleanup(&dir);
}

/* ---- READDIR / READDIRPLUS ---- */

struct nfs3_rd {
	struct nfs_call *call;
	struct ut_buf *out;
	bool plus;
	size_t dir_budget;   /* dircount: names + ids + cookies */
	size_t max_budget;   /* maxcount minus the fixed part of the reply */
	size_t dir_used;
	size_t n;
};

static int nfs3_rd_entry(void *arg, const char *name, size_t nlen, uint64_t ino, uint64_t cookie)
{
	struct nfs3_rd *rd = arg;
	struct vol_obj child = {.fd = -1};
	struct nfs3_attr attr = {0};
	struct vol_fh fh = {0};
	bool have_fh = false;
	size_t mark = rd->out->len, dsz = 8 + 4 + XDR_PAD(nlen) + 8;

	if (rd->plus && vol_lookup(&rd->call->obj, &rd->call->ecred, name, nlen, &child) == 0) {
		have_fh = vol_fh_make(rd->call->store, &child, &fh) == 0;
		nfs3_attr_of(&attr, &child);
		vol_obj_cleanup(&child);
	}
	xdr_put_u32(rd->out, 1);
	xdr_put_u64(rd->out, ino);
	xdr_put_opaque(rd->out, name, (uint32_t)nlen);
	xdr_put_u64(rd->out, cookie);
	if (rd->plus) {
		nfs3_put_attr(rd->out, &attr);
		xdr_put_u32(rd->out, have_fh);
		if (have_fh)
			nfs3_put_fh(rd->out, &fh);
	}
	if (rd->out->err || rd->out->len > rd->max_budget ||
	    (rd->plus && rd->dir_used + dsz > rd->dir_budget)) {
		ut_buf_rewind(rd->out, mark);
		return 1; /* stop; this entry goes in the next reply */
	}
	rd->dir_used += dsz;
	rd->n++;
	return 0;
}

static void nfs3_readdir_common(struct nfs_call *call, struct nfs3_readdir_args *args,
				struct nfs3_readdir_res *res, bool plus)
{
	struct nfs3_rd rd = {.call = call, .out = &res->entries, .plus = plus};
	uint64_t verf = (uint64_t)call->obj.st.st_ino ^ 0x6171756966657200ull;
	uint32_t maxcount = args->maxcount > NFS3_DIRMAX ? NFS3_DIRMAX : args->maxcount;
	size_t fixed = 4 + 4 + 84 + 8 + 8; /* status, attr, verf, end + eof */
	bool eof = false;
	int rc, i;

	nfs3_attr_of(&res->attr, &call->obj);
	for (i = 0; i < 8; i++)
		res->verf[i] = (uint8_t)(verf >> (56 - 8 * i));
	if (!S_ISDIR(call->obj.st.st_mode)) {
		res->status = NFS3ERR_NOTDIR;
		return;
	}
	if (args->cookie != 0 && memcmp(args->verf, "\0\0\0\0\0\0\0\0", 8) &&
	    memcmp(args->verf, res->verf, 8)) {
		res->status = NFS3ERR_BAD_COOKIE;
		return;
	}
	if (maxcount <= fixed + 24) {
		res->status = NFS3ERR_TOOSMALL;
		return;
	}
	rd.max_budget = maxcount - fixed;
	rd.dir_budget = args->dircount ? args->dircount : maxcount;
	ut_buf_init(&res->entries, rd.max_budget);
	rc = vol_readdir(&call->obj, &call->ecred, args->cookie, nfs3_rd_entry, &rd, &eof);
	if (rc == 0 && rd.n == 0 && !eof)
		rc = -EOVERFLOW;
	res->status = rc == -EOVERFLOW ? NFS3ERR_TOOSMALL
		    : rc == -EINVAL ? NFS3ERR_BAD_COOKIE : nfs3_status(rc);
	res->eof = eof;
}

void nfs3_readdir(struct nfs_call *call, void *a, void *r)
{
	nfs3_readdir_common(call, a, r, false);
}

void nfs3_readdirplus(struct nfs_call *call, void *a, void *r)
{
	nfs3_readdir_common(call, a, r, true);
}

void nfs3_free_readdir(void *r)
{
	struct nfs3_readdir_res *res = r;

	ut_buf_cleanup(&res->entries);
}
