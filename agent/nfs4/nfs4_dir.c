/* nfs4_dir: the namespace operations: ACCESS, CREATE (directories,
 * symlinks, FIFOs and sockets; device nodes are NFS4ERR_PERM as on NFSv3,
 * regular files are OPEN's: NFS4ERR_BADTYPE), REMOVE (files and
 * directories), RENAME and LINK (saved handle -> current handle, within one
 * export: NFS4ERR_XDEV otherwise), READDIR and READLINK.
 *
 * READDIR cookies are the store's (getdents64 d_off, stable while entries
 * come and go: vol.h), never 0, 1 or 2 (those name no entry: "." and ".."
 * are not listed); the cookie verifier is always zero and not checked, as
 * the cookies need none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	ACCESS4_READ = 0x1, ACCESS4_LOOKUP = 0x2, ACCESS4_MODIFY = 0x4, ACCESS4_EXTEND = 0x8,
	ACCESS4_DELETE = 0x10, ACCESS4_EXECUTE = 0x20,
};

static void put_cinfo(struct ut_buf *b, uint64_t before, uint64_t after)
{
	xdr_put_u32(b, 0);
	xdr_put_u64(b, before);
	xdr_put_u64(b, after);
}

uint32_t nfs4_op_access(struct nfs4_cx *cx, struct xdr_cur *in)
{
	uint32_t want = xdr_u32(in), sup, got = 0;
	struct vol_obj *o = &cx->cur.obj;
	int allowed = 0, rc;
	bool dir;

	if (in->err)
		return NFS4ERR_BADXDR;
	sup = want & (ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND | ACCESS4_DELETE |
		      ACCESS4_EXECUTE);
	if (cx->cur.pseudo) {
		got = sup & (ACCESS4_READ | ACCESS4_LOOKUP);
		goto out;
	}
	dir = S_ISDIR(o->st.st_mode);
	if ((rc = vol_access(o, &cx->cur.ecred, R_OK | W_OK | X_OK, &allowed)) != 0)
		return nfs4_status(rc);
	if (allowed & R_OK)
		got |= ACCESS4_READ;
	if (allowed & X_OK)
		got |= dir ? ACCESS4_LOOKUP : ACCESS4_EXECUTE;
	if ((allowed & W_OK) && cx->cur.access == VOL_ACCESS_RW && !o->snap)
		got |= ACCESS4_MODIFY | ACCESS4_EXTEND | (dir ? ACCESS4_DELETE : 0);
	got &= sup;
out:
	xdr_put_u32(cx->out, sup);
	xdr_put_u32(cx->out, got);
	return NFS4_OK;
}

uint32_t nfs4_op_create(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj obj = { .fd = -1 }, *dir = &cx->cur.obj;
	struct vol_sattr sa;
	uint32_t type = xdr_u32(in), tlen = 0, nlen, st, set[3] = { 0 };
	const uint8_t *target = NULL;
	const char *name;
	uint64_t before;
	int rc;

	if (type == NF4LNK) {
		target = xdr_opaque(in, 4096, &tlen);
	} else if (type == NF4BLK || type == NF4CHR) {
		(void)xdr_u32(in);
		(void)xdr_u32(in);
	} else if (type != NF4DIR && type != NF4SOCK && type != NF4FIFO) {
		return in->err ? NFS4ERR_BADXDR : NFS4ERR_BADTYPE;
	}
	if ((st = nfs4_name(in, &name, &nlen)) != NFS4_OK)
		return st;
	if ((st = nfs4_fattr_decode(in, &sa, set)) != NFS4_OK)
		return st;
	if (!S_ISDIR(dir->st.st_mode))
		return S_ISLNK(dir->st.st_mode) ? NFS4ERR_SYMLINK : NFS4ERR_NOTDIR;
	if (type == NF4LNK && (tlen == 0 || memchr(target, '\0', tlen)))
		return NFS4ERR_INVAL;
	before = nfs4_change(&dir->st);
	if (type == NF4DIR)
		rc = vol_mkdir(dir, &cx->cur.ecred, name, nlen, &sa, &obj);
	else if (type == NF4LNK)
		rc = vol_symlink(dir, &cx->cur.ecred, name, nlen, (const char *)target, tlen, &sa, &obj);
	else
		rc = vol_mknod(dir, &cx->cur.ecred, name, nlen,
			       type == NF4FIFO ? S_IFIFO : type == NF4SOCK ? S_IFSOCK : type == NF4CHR ? S_IFCHR : S_IFBLK,
			       &sa, &obj);
	if (rc != 0)
		return nfs4_status(rc);
	(void)vol_refresh(dir);
	put_cinfo(cx->out, before, nfs4_change(&dir->st));
	nfs4_put_bitmap(cx->out, set, 3);
	vol_obj_cleanup(&cx->cur.obj);
	cx->cur.obj = obj; /* the new object is the current handle */
	return NFS4_OK;
}

/* Is the file name names in dir delegated to another client (its recall
 * then starts)? REMOVE and RENAME answer NFS4ERR_DELAY meanwhile: the
 * holder may have opens to tell before its name goes (RFC 8881 10.4.2).
 * Costs one atomic load when nothing is cached on the store. */
static bool name_delegated(struct nfs4_cx *cx, struct vol_obj *dir, const char *name, uint32_t nlen)
{
	struct vol_obj o = { .fd = -1 };
	struct vol_lock_key k;
	bool held = false;

	if (!vol_lease_count(cx->call->store))
		return false;
	if (vol_lookup(dir, &cx->cur.ecred, name, nlen, &o) == 0 && S_ISREG(o.st.st_mode)) {
		vol_lock_key_of(&o, &k);
		held = nfs4_deleg_conflict(cx, &k, true);
	}
	vol_obj_cleanup(&o);
	return held;
}

uint32_t nfs4_op_remove(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj *dir = &cx->cur.obj;
	const char *name;
	uint32_t nlen, st = nfs4_name(in, &name, &nlen);
	uint64_t before;
	int rc;

	if (st != NFS4_OK)
		return st;
	if (!S_ISDIR(dir->st.st_mode))
		return NFS4ERR_NOTDIR;
	if (name_delegated(cx, dir, name, nlen))
		return NFS4ERR_DELAY;
	before = nfs4_change(&dir->st);
	rc = vol_remove(dir, &cx->cur.ecred, name, nlen);
	if (rc == -EISDIR || rc == -EPERM) {
		struct vol_obj o = { .fd = -1 };

		/* a directory: unlink refuses it (EISDIR; EPERM on some file systems) */
		if (vol_lookup(dir, &cx->cur.ecred, name, nlen, &o) == 0 && S_ISDIR(o.st.st_mode))
			rc = vol_rmdir(dir, &cx->cur.ecred, name, nlen);
		vol_obj_cleanup(&o);
	}
	if (rc != 0)
		return nfs4_status(rc);
	(void)vol_refresh(dir);
	put_cinfo(cx->out, before, nfs4_change(&dir->st));
	return NFS4_OK;
}

/* The saved handle as the source of RENAME and LINK. */
static uint32_t saved_check(const struct nfs4_cx *cx)
{
	if (!cx->saved.set)
		return NFS4ERR_NOFILEHANDLE;
	if (cx->saved.pseudo)
		return NFS4ERR_ROFS;
	if (vol_export_fsid(cx->saved.obj.exp) != vol_export_fsid(cx->cur.obj.exp) || cx->saved.obj.snap != cx->cur.obj.snap)
		return NFS4ERR_XDEV;
	return NFS4_OK;
}

uint32_t nfs4_op_rename(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj *from = &cx->saved.obj, *to = &cx->cur.obj;
	const char *on, *nn;
	uint32_t ol, nl, st = nfs4_name(in, &on, &ol);
	uint64_t fb, tb;
	int rc;

	if (st == NFS4_OK)
		st = nfs4_name(in, &nn, &nl);
	if (st != NFS4_OK)
		return st;
	if ((st = saved_check(cx)) != NFS4_OK)
		return st;
	if (!S_ISDIR(from->st.st_mode) || !S_ISDIR(to->st.st_mode))
		return NFS4ERR_NOTDIR;
	if (name_delegated(cx, from, on, ol) | name_delegated(cx, to, nn, nl))
		return NFS4ERR_DELAY; /* the file renamed, or the one the new name replaces */
	fb = nfs4_change(&from->st);
	tb = nfs4_change(&to->st);
	if ((rc = vol_rename(from, on, ol, to, nn, nl, &cx->cur.ecred)) != 0)
		return nfs4_status(rc);
	(void)vol_refresh(from);
	(void)vol_refresh(to);
	put_cinfo(cx->out, fb, nfs4_change(&from->st));
	put_cinfo(cx->out, tb, nfs4_change(&to->st));
	return NFS4_OK;
}

uint32_t nfs4_op_link(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct vol_obj *dir = &cx->cur.obj;
	struct vol_lock_key k;
	const char *name;
	uint32_t nlen, st = nfs4_name(in, &name, &nlen);
	uint64_t before;
	int rc;

	if (st != NFS4_OK)
		return st;
	if ((st = saved_check(cx)) != NFS4_OK)
		return st;
	if (!S_ISDIR(dir->st.st_mode))
		return NFS4ERR_NOTDIR;
	if (S_ISDIR(cx->saved.obj.st.st_mode))
		return NFS4ERR_ISDIR;
	/* a new name of a file another client holds a write delegation of:
	 * recalled first (its holder may have it open under the delegation
	 * alone), as knfsd breaks delegations in vfs_link */
	vol_lock_key_of(&cx->saved.obj, &k);
	if (nfs4_deleg_conflict_read(cx, &k))
		return NFS4ERR_DELAY;
	before = nfs4_change(&dir->st);
	if ((rc = vol_link(&cx->saved.obj, dir, name, nlen, &cx->cur.ecred)) != 0)
		return nfs4_status(rc);
	(void)vol_refresh(dir);
	put_cinfo(cx->out, before, nfs4_change(&dir->st));
	return NFS4_OK;
}

struct rd_ctx {
	struct nfs4_cx *cx;
	size_t start;
	uint32_t maxcount;
	const uint32_t *req;
	uint32_t nreq;
	uint32_t n;
	uint32_t st;
	bool full;
};

static int rd_entry(void *arg, const char *name, size_t nlen, uint64_t ino, uint64_t cookie)
{
	struct rd_ctx *r = arg;
	struct nfs4_cx *cx = r->cx;
	struct ut_buf *out = cx->out;
	struct nfs4_fhc f = { .set = true, .ecred = cx->cur.ecred, .access = cx->cur.access };
	size_t mark = out->len;
	int rc;

	(void)ino;
	if ((nlen == 1 && name[0] == '.') || (nlen == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	rc = vol_lookup(&cx->cur.obj, &cx->cur.ecred, name, nlen, &f.obj);
	if (rc == -ENOENT)
		return 0; /* gone meanwhile */
	xdr_put_u32(out, 1);
	xdr_put_u64(out, cookie);
	xdr_put_opaque(out, name, (uint32_t)nlen);
	if (rc == 0) {
		(void)nfs4_fattr_encode(cx, &f, r->req, r->nreq, out);
		vol_obj_cleanup(&f.obj);
	} else if (r->nreq && (r->req[0] & (1u << 11))) {
		uint32_t m[1] = { 1u << 11 };

		nfs4_put_bitmap(out, m, 1); /* only rdattr_error, as asked */
		xdr_put_u32(out, 4);
		xdr_put_u32(out, nfs4_status(rc));
	} else {
		ut_buf_rewind(out, mark);
		r->st = nfs4_status(rc);
		return 1;
	}
	if (out->err || out->len - r->start + 8 > r->maxcount) {
		ut_buf_rewind(out, mark);
		out->err = 0;
		r->full = true;
		return 1;
	}
	r->n++;
	return 0;
}

uint32_t nfs4_op_readdir(struct nfs4_cx *cx, struct xdr_cur *in)
{
	uint32_t req[8], n, maxcount;
	uint64_t cookie = xdr_u64(in);
	struct rd_ctx r = { .cx = cx };
	bool eof = false;
	int rc;

	(void)xdr_fixed(in, 8); /* cookieverf */
	(void)xdr_u32(in);      /* dircount: a hint */
	maxcount = xdr_u32(in);
	if (!nfs4_get_bitmap(in, req, 8, &n))
		return NFS4ERR_BADXDR;
	if (cookie == 1 || cookie == 2)
		return NFS4ERR_BAD_COOKIE;
	if (maxcount > NFS4_REP_MAX - 1024)
		maxcount = NFS4_REP_MAX - 1024;
	if (cx->cur.pseudo)
		return nfs4_pseudo_readdir(cx, cookie, maxcount, req, n);
	if (!S_ISDIR(cx->cur.obj.st.st_mode))
		return NFS4ERR_NOTDIR;
	r.start = cx->out->len;
	r.maxcount = maxcount;
	r.req = req;
	r.nreq = n;
	r.st = NFS4_OK;
	xdr_put_fixed(cx->out, "\0\0\0\0\0\0\0\0", 8);
	rc = vol_readdir(&cx->cur.obj, &cx->cur.ecred, cookie, rd_entry, &r, &eof);
	if (rc != 0)
		return nfs4_status(rc);
	if (r.st != NFS4_OK)
		return r.st;
	if (r.full && r.n == 0)
		return NFS4ERR_TOOSMALL;
	xdr_put_u32(cx->out, 0);
	xdr_put_u32(cx->out, eof && !r.full);
	return NFS4_OK;
}

uint32_t nfs4_op_readlink(struct nfs4_cx *cx, struct xdr_cur *in)
{
	char buf[4096];
	size_t len = 0;
	int rc;

	(void)in;
	if (!S_ISLNK(cx->cur.obj.st.st_mode))
		return NFS4ERR_INVAL;
	if ((rc = vol_readlink(&cx->cur.obj, &cx->cur.ecred, buf, sizeof(buf), &len)) != 0)
		return nfs4_status(rc);
	xdr_put_opaque(cx->out, buf, (uint32_t)len);
	return NFS4_OK;
}
