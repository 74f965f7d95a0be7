/* nfs3_xdr: decoders of NFSv3 arguments and encoders of results (RFC 1813
 * section 3). Decoders read through the sticky-error cursor and check once at
 * the end; every peer length has a cap. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs3.h"

#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

/* ---------- decoding ---------- */

static void dec_fh(struct xdr_cur *c, struct nfs_fh3 *fh)
{
	fh->data = xdr_opaque(c, NFS3_FHSIZE, &fh->len);
}

static void dec_name(struct xdr_cur *c, struct nfs3_name *n, size_t cap)
{
	n->s = (const char *)xdr_opaque(c, cap, &n->len);
}

static void dec_time(struct xdr_cur *c, struct timespec *ts)
{
	ts->tv_sec = xdr_u32(c);
	ts->tv_nsec = xdr_u32(c);
	if (ts->tv_nsec >= 1000000000L)
		c->err = -EBADMSG;
}

static void dec_sattr(struct xdr_cur *c, struct vol_sattr *sa)
{
	memset(sa, 0, sizeof(*sa));
	if ((sa->set_mode = xdr_bool(c)))
		sa->mode = xdr_u32(c);
	if ((sa->set_uid = xdr_bool(c)))
		sa->uid = xdr_u32(c);
	if ((sa->set_gid = xdr_bool(c)))
		sa->gid = xdr_u32(c);
	if ((sa->set_size = xdr_bool(c)))
		sa->size = xdr_u64(c);
	sa->atime_how = (int)xdr_u32(c);
	if (sa->atime_how == 2)
		dec_time(c, &sa->atime);
	sa->mtime_how = (int)xdr_u32(c);
	if (sa->mtime_how == 2)
		dec_time(c, &sa->mtime);
	if (sa->atime_how > 2 || sa->mtime_how > 2)
		c->err = -EBADMSG;
}

static int dec_done(struct xdr_cur *c)
{
	return c->err ? -EBADMSG : 0;
}

int nfs3_dec_void(struct xdr_cur *c, void *a)
{
	(void)a;
	return dec_done(c);
}

int nfs3_dec_fh(struct xdr_cur *c, void *a)
{
	struct nfs3_fh_args *x = a;

	dec_fh(c, &x->fh);
	return dec_done(c);
}

int nfs3_dec_setattr(struct xdr_cur *c, void *a)
{
	struct nfs3_setattr_args *x = a;

	dec_fh(c, &x->fh);
	dec_sattr(c, &x->sa);
	if ((x->guard = xdr_bool(c)))
		dec_time(c, &x->guard_ctime);
	return dec_done(c);
}

int nfs3_dec_dirop(struct xdr_cur *c, void *a)
{
	struct nfs3_dirop_args *x = a;

	dec_fh(c, &x->fh);
	dec_name(c, &x->name, NFS3_NAME_CAP);
	return dec_done(c);
}

int nfs3_dec_access(struct xdr_cur *c, void *a)
{
	struct nfs3_access_args *x = a;

	dec_fh(c, &x->fh);
	x->access = xdr_u32(c);
	return dec_done(c);
}

int nfs3_dec_read(struct xdr_cur *c, void *a)
{
	struct nfs3_read_args *x = a;

	dec_fh(c, &x->fh);
	x->offset = xdr_u64(c);
	x->count = xdr_u32(c);
	return dec_done(c);
}

bool nfs3_io_quick(uint32_t proc, const uint8_t *args, size_t len)
{
	struct xdr_cur c;
	struct nfs_fh3 fh;
	uint32_t count, stable = 0;

	if (proc != NFS3_READ && proc != NFS3_WRITE)
		return false;
	xdr_cur_init(&c, args, len); /* READ3args, WRITE3args: fh, offset, count[, stable] */
	dec_fh(&c, &fh);
	(void)xdr_u64(&c);
	count = xdr_u32(&c);
	if (proc == NFS3_WRITE)
		stable = xdr_u32(&c);
	return !c.err && stable == 0 /* UNSTABLE */ && count <= NFS_QUICK_BYTES;
}

int nfs3_dec_write(struct xdr_cur *c, void *a)
{
	struct nfs3_write_args *x = a;

	dec_fh(c, &x->fh);
	x->offset = xdr_u64(c);
	x->count = xdr_u32(c);
	x->stable = xdr_u32(c);
	x->data = xdr_opaque(c, NFS3_MAXDATA, &x->len);
	if (x->stable > 2 || x->count != x->len)
		c->err = -EBADMSG;
	return dec_done(c);
}

int nfs3_dec_create(struct xdr_cur *c, void *a)
{
	struct nfs3_create_args *x = a;
	const uint8_t *v;

	dec_fh(c, &x->fh);
	dec_name(c, &x->name, NFS3_NAME_CAP);
	x->mode = xdr_u32(c);
	if (x->mode == 0 || x->mode == 1) {
		dec_sattr(c, &x->sa);
	} else if (x->mode == 2) {
		memset(&x->sa, 0, sizeof(x->sa));
		if ((v = xdr_fixed(c, 8)) != NULL)
			memcpy(x->verf, v, 8);
	} else {
		c->err = -EBADMSG;
	}
	return dec_done(c);
}

int nfs3_dec_mkdir(struct xdr_cur *c, void *a)
{
	struct nfs3_mkdir_args *x = a;

	dec_fh(c, &x->fh);
	dec_name(c, &x->name, NFS3_NAME_CAP);
	dec_sattr(c, &x->sa);
	return dec_done(c);
}

int nfs3_dec_symlink(struct xdr_cur *c, void *a)
{
	struct nfs3_symlink_args *x = a;

	dec_fh(c, &x->fh);
	dec_name(c, &x->name, NFS3_NAME_CAP);
	dec_sattr(c, &x->sa);
	dec_name(c, &x->target, NFS3_PATH_CAP);
	return dec_done(c);
}

int nfs3_dec_mknod(struct xdr_cur *c, void *a)
{
	struct nfs3_mknod_args *x = a;

	dec_fh(c, &x->fh);
	dec_name(c, &x->name, NFS3_NAME_CAP);
	x->type = xdr_u32(c);
	memset(&x->sa, 0, sizeof(x->sa));
	switch (x->type) {
	case 3: /* NF3CHR */
	case 4: /* NF3BLK */
		dec_sattr(c, &x->sa);
		x->major = xdr_u32(c);
		x->minor = xdr_u32(c);
		break;
	case 6: /* NF3SOCK */
	case 7: /* NF3FIFO */
		dec_sattr(c, &x->sa);
		break;
	default:
		if (x->type < 1 || x->type > 7)
			c->err = -EBADMSG;
		break;
	}
	return dec_done(c);
}

int nfs3_dec_rename(struct xdr_cur *c, void *a)
{
	struct nfs3_rename_args *x = a;

	dec_fh(c, &x->fh);
	dec_name(c, &x->name, NFS3_NAME_CAP);
	dec_fh(c, &x->tofh);
	dec_name(c, &x->toname, NFS3_NAME_CAP);
	return dec_done(c);
}

int nfs3_dec_link(struct xdr_cur *c, void *a)
{
	struct nfs3_link_args *x = a;

	dec_fh(c, &x->fh);
	dec_fh(c, &x->dirfh);
	dec_name(c, &x->name, NFS3_NAME_CAP);
	return dec_done(c);
}

static void dec_readdir_common(struct xdr_cur *c, struct nfs3_readdir_args *x)
{
	const uint8_t *v;

	dec_fh(c, &x->fh);
	x->cookie = xdr_u64(c);
	if ((v = xdr_fixed(c, 8)) != NULL)
		memcpy(x->verf, v, 8);
}

int nfs3_dec_readdir(struct xdr_cur *c, void *a)
{
	struct nfs3_readdir_args *x = a;

	dec_readdir_common(c, x);
	x->dircount = x->maxcount = xdr_u32(c);
	return dec_done(c);
}

int nfs3_dec_readdirplus(struct xdr_cur *c, void *a)
{
	struct nfs3_readdir_args *x = a;

	dec_readdir_common(c, x);
	x->dircount = xdr_u32(c);
	x->maxcount = xdr_u32(c);
	return dec_done(c);
}

int nfs3_dec_commit(struct xdr_cur *c, void *a)
{
	struct nfs3_commit_args *x = a;

	dec_fh(c, &x->fh);
	x->offset = xdr_u64(c);
	x->count = xdr_u32(c);
	return dec_done(c);
}

/* ---------- encoding ---------- */

static uint32_t ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return 1;
	case S_IFDIR: return 2;
	case S_IFBLK: return 3;
	case S_IFCHR: return 4;
	case S_IFLNK: return 5;
	case S_IFSOCK: return 6;
	case S_IFIFO: return 7;
	default: return 1;
	}
}

static void put_time(struct ut_buf *b, const struct timespec *ts)
{
	xdr_put_u32(b, (uint32_t)ts->tv_sec);
	xdr_put_u32(b, (uint32_t)ts->tv_nsec);
}

/* fattr3 */
static void put_fattr(struct ut_buf *b, const struct nfs3_attr *a)
{
	const struct stat *st = &a->st;

	xdr_put_u32(b, ftype(st->st_mode));
	xdr_put_u32(b, st->st_mode & 07777);
	xdr_put_u32(b, (uint32_t)st->st_nlink);
	xdr_put_u32(b, st->st_uid);
	xdr_put_u32(b, st->st_gid);
	xdr_put_u64(b, (uint64_t)st->st_size);
	xdr_put_u64(b, (uint64_t)st->st_blocks * 512);
	xdr_put_u32(b, major(st->st_rdev));
	xdr_put_u32(b, minor(st->st_rdev));
	xdr_put_u64(b, a->fsid);
	xdr_put_u64(b, st->st_ino);
	put_time(b, &st->st_atim);
	put_time(b, &st->st_mtim);
	put_time(b, &st->st_ctim);
}

/* post_op_attr */
void nfs3_put_attr(struct ut_buf *b, const struct nfs3_attr *a)
{
	xdr_put_u32(b, a->present);
	if (a->present)
		put_fattr(b, a);
}

static void put_wcc(struct ut_buf *b, const struct nfs3_wcc *w)
{
	xdr_put_u32(b, w->pre);
	if (w->pre) {
		xdr_put_u64(b, w->size);
		put_time(b, &w->mtime);
		put_time(b, &w->ctime);
	}
	nfs3_put_attr(b, &w->post);
}

void nfs3_put_fh(struct ut_buf *b, const struct vol_fh *fh)
{
	xdr_put_opaque(b, fh->data, fh->len);
}

void nfs3_attr_of(struct nfs3_attr *a, const struct vol_obj *o)
{
	a->present = o && o->fd >= 0;
	if (!a->present)
		return;
	a->st = o->st;
	a->fsid = vol_export_fsid(o->exp);
}

void nfs3_wcc_pre(struct nfs3_wcc *w, const struct vol_obj *o)
{
	w->pre = true;
	w->size = (uint64_t)o->st.st_size;
	w->mtime = o->st.st_mtim;
	w->ctime = o->st.st_ctim;
}

void nfs3_wcc_post(struct nfs3_wcc *w, struct vol_obj *o)
{
	if (vol_refresh(o) == 0)
		nfs3_attr_of(&w->post, o);
}

void nfs3_enc_void(struct ut_buf *b, void *r, struct nfs_call *call)
{
	(void)b;
	(void)r;
	(void)call;
}

void nfs3_enc_getattr(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_getattr_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	if (x->status == NFS3_OK)
		put_fattr(b, &x->attr);
}

void nfs3_enc_wcc(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_wcc_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	put_wcc(b, &x->wcc);
}

void nfs3_enc_lookup(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_lookup_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	if (x->status == NFS3_OK) {
		nfs3_put_fh(b, &x->fh);
		nfs3_put_attr(b, &x->obj);
	}
	nfs3_put_attr(b, &x->dir);
}

void nfs3_enc_access(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_access_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	if (x->status == NFS3_OK)
		xdr_put_u32(b, x->access);
}

void nfs3_enc_readlink(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_readlink_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	if (x->status == NFS3_OK)
		xdr_put_opaque(b, x->path, x->len);
}

void nfs3_enc_read(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_read_res *x = r;

	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	if (x->status != NFS3_OK)
		return;
	xdr_put_u32(b, x->count);
	xdr_put_u32(b, x->eof);
	xdr_put_u32(b, x->count);
	/* The data goes out after the header (from the file descriptor with
	 * sendfile, or as its own iovec); the server pads it. */
	call->data_len = x->count;
	if (x->fd >= 0) {
		call->file_fd = x->fd;
		call->file_off = x->off;
		call->file_owned = x->owned;
		x->fd = -1;
		x->owned = false;
	} else {
		call->data = x->data;
		call->data_owner = x->data;
		x->data = NULL;
	}
}

void nfs3_enc_write(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_write_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	put_wcc(b, &x->wcc);
	if (x->status == NFS3_OK) {
		xdr_put_u32(b, x->count);
		xdr_put_u32(b, x->committed);
		xdr_put_fixed(b, x->verf, 8);
	}
}

void nfs3_enc_create(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_create_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	if (x->status == NFS3_OK) {
		xdr_put_u32(b, x->fh.present);
		if (x->fh.present)
			nfs3_put_fh(b, &x->fh.fh);
		nfs3_put_attr(b, &x->attr);
	}
	put_wcc(b, &x->dir);
}

void nfs3_enc_rename(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_rename_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	put_wcc(b, &x->from);
	put_wcc(b, &x->to);
}

void nfs3_enc_link(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_link_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	put_wcc(b, &x->dir);
}

void nfs3_enc_readdir(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_readdir_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	if (x->status != NFS3_OK)
		return;
	xdr_put_fixed(b, x->verf, 8);
	if (x->entries.p)
		xdr_put_fixed(b, x->entries.p, x->entries.len);
	xdr_put_u32(b, 0); /* no more entries */
	xdr_put_u32(b, x->eof);
}

void nfs3_enc_fsstat(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_fsstat_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	if (x->status != NFS3_OK)
		return;
	xdr_put_u64(b, x->fs.tbytes);
	xdr_put_u64(b, x->fs.fbytes);
	xdr_put_u64(b, x->fs.abytes);
	xdr_put_u64(b, x->fs.tfiles);
	xdr_put_u64(b, x->fs.ffiles);
	xdr_put_u64(b, x->fs.afiles);
	xdr_put_u32(b, 0); /* invarsec */
}

void nfs3_enc_fsinfo(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_fsinfo_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	if (x->status != NFS3_OK)
		return;
	xdr_put_u32(b, NFS3_MAXDATA); /* rtmax */
	xdr_put_u32(b, NFS3_MAXDATA); /* rtpref */
	xdr_put_u32(b, 4096);         /* rtmult */
	xdr_put_u32(b, NFS3_MAXDATA); /* wtmax */
	xdr_put_u32(b, NFS3_MAXDATA); /* wtpref */
	xdr_put_u32(b, 4096);         /* wtmult */
	xdr_put_u32(b, 65536);        /* dtpref */
	xdr_put_u64(b, VOL_FILE_MAX); /* maxfilesize: clients refuse larger themselves */
	xdr_put_u32(b, 0);            /* time_delta: 1 ns */
	xdr_put_u32(b, 1);
	xdr_put_u32(b, 0x1 | 0x2 | 0x8 | 0x10); /* LINK SYMLINK HOMOGENEOUS CANSETTIME */
}

void nfs3_enc_pathconf(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_pathconf_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	nfs3_put_attr(b, &x->attr);
	if (x->status != NFS3_OK)
		return;
	xdr_put_u32(b, 65000);         /* linkmax */
	xdr_put_u32(b, VOL_NAME_MAX);  /* name_max */
	xdr_put_u32(b, 1);             /* no_trunc */
	xdr_put_u32(b, 1);             /* chown_restricted */
	xdr_put_u32(b, 0);             /* case_insensitive */
	xdr_put_u32(b, 1);             /* case_preserving */
}

void nfs3_enc_commit(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct nfs3_commit_res *x = r;

	(void)call;
	xdr_put_u32(b, x->status);
	put_wcc(b, &x->wcc);
	if (x->status == NFS3_OK)
		xdr_put_fixed(b, x->verf, 8);
}
