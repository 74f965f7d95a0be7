/* nfs4_attr: fattr4 (RFC 8881 section 5): the attributes GETATTR and
 * READDIR answer, and the ones SETATTR, CREATE and OPEN set.
 *
 * owner and owner_group are the numeric ids as decimal strings ("1000"):
 * what the Linux client sends and takes under AUTH_SYS without idmapping;
 * any other owner string is NFS4ERR_BADOWNER (user@domain comes with a
 * configured domain). change is the ctime in nanoseconds; fsid is the
 * export's 64-bit fsid (major) and 0 (minor), the pseudo root's (0, 0), so
 * the client sees each export as its own file system below the root.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs4/nfs4_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

enum {
	A_SUPPORTED = 0, A_TYPE = 1, A_FH_EXPIRE = 2, A_CHANGE = 3, A_SIZE = 4, A_LINK_SUPPORT = 5,
	A_SYMLINK_SUPPORT = 6, A_NAMED_ATTR = 7, A_FSID = 8, A_UNIQUE = 9, A_LEASE = 10, A_RDATTR_ERROR = 11,
	A_CANSETTIME = 15, A_CASE_INSENSITIVE = 16, A_CASE_PRESERVING = 17, A_CHOWN_RESTRICTED = 18,
	A_FILEHANDLE = 19, A_FILEID = 20, A_FILES_AVAIL = 21, A_FILES_FREE = 22, A_FILES_TOTAL = 23,
	A_MAXFILESIZE = 27, A_MAXLINK = 28, A_MAXNAME = 29, A_MAXREAD = 30, A_MAXWRITE = 31,
	A_MODE = 33, A_NO_TRUNC = 34, A_NUMLINKS = 35, A_OWNER = 36, A_OWNER_GROUP = 37, A_RAWDEV = 41,
	A_SPACE_AVAIL = 42, A_SPACE_FREE = 43, A_SPACE_TOTAL = 44, A_SPACE_USED = 45, A_TIME_ACCESS = 47,
	A_TIME_ACCESS_SET = 48, A_TIME_DELTA = 51, A_TIME_METADATA = 52, A_TIME_MODIFY = 53,
	A_TIME_MODIFY_SET = 54, A_MOUNTED_ON_FILEID = 55, A_SUPPATTR_EXCLCREAT = 75,
	A_WORDS = 3,
};

#define BIT(a) (1u << ((a) % 32))

/* What GETATTR answers (bit order is the encoding order). */
static const uint32_t nfs4_supported[A_WORDS] = {
	BIT(A_SUPPORTED) | BIT(A_TYPE) | BIT(A_FH_EXPIRE) | BIT(A_CHANGE) | BIT(A_SIZE) | BIT(A_LINK_SUPPORT) |
		BIT(A_SYMLINK_SUPPORT) | BIT(A_NAMED_ATTR) | BIT(A_FSID) | BIT(A_UNIQUE) | BIT(A_LEASE) |
		BIT(A_RDATTR_ERROR) | BIT(A_CANSETTIME) | BIT(A_CASE_INSENSITIVE) | BIT(A_CASE_PRESERVING) |
		BIT(A_CHOWN_RESTRICTED) | BIT(A_FILEHANDLE) | BIT(A_FILEID) | BIT(A_FILES_AVAIL) |
		BIT(A_FILES_FREE) | BIT(A_FILES_TOTAL) | BIT(A_MAXFILESIZE) | BIT(A_MAXLINK) | BIT(A_MAXNAME) |
		BIT(A_MAXREAD) | BIT(A_MAXWRITE),
	BIT(A_MODE) | BIT(A_NO_TRUNC) | BIT(A_NUMLINKS) | BIT(A_OWNER) | BIT(A_OWNER_GROUP) | BIT(A_RAWDEV) |
		BIT(A_SPACE_AVAIL) | BIT(A_SPACE_FREE) | BIT(A_SPACE_TOTAL) | BIT(A_SPACE_USED) |
		BIT(A_TIME_ACCESS) | BIT(A_TIME_ACCESS_SET) | BIT(A_TIME_DELTA) | BIT(A_TIME_METADATA) |
		BIT(A_TIME_MODIFY) | BIT(A_TIME_MODIFY_SET) | BIT(A_MOUNTED_ON_FILEID),
	BIT(A_SUPPATTR_EXCLCREAT),
};

/* What SETATTR (and CREATE, OPEN) sets. */
static const uint32_t nfs4_settable[A_WORDS] = {
	BIT(A_SIZE),
	BIT(A_MODE) | BIT(A_OWNER) | BIT(A_OWNER_GROUP) | BIT(A_TIME_ACCESS_SET) | BIT(A_TIME_MODIFY_SET),
	0,
};

/* What an EXCLUSIVE4_1 create sets (suppattr_exclcreat): not the times,
 * which hold the verifier (vol_create); the client sets them after. */
static const uint32_t nfs4_exclcreat[A_WORDS] = {
	BIT(A_SIZE),
	BIT(A_MODE) | BIT(A_OWNER) | BIT(A_OWNER_GROUP),
	0,
};

static bool has(const uint32_t *m, unsigned a)
{
	return (m[a / 32] & BIT(a)) != 0;
}

static uint32_t ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR: return NF4DIR;
	case S_IFLNK: return NF4LNK;
	case S_IFBLK: return NF4BLK;
	case S_IFCHR: return NF4CHR;
	case S_IFSOCK: return NF4SOCK;
	case S_IFIFO: return NF4FIFO;
	default: return NF4REG;
	}
}

static void put_time(struct ut_buf *b, const struct timespec *t)
{
	xdr_put_u64(b, (uint64_t)(int64_t)t->tv_sec);
	xdr_put_u32(b, (uint32_t)t->tv_nsec);
}

static void put_id(struct ut_buf *b, uint32_t id)
{
	char s[16];
	int n = snprintf(s, sizeof(s), "%" PRIu32, id);

	xdr_put_opaque(b, s, (uint32_t)n);
}

uint32_t nfs4_fattr_encode(struct nfs4_cx *cx, struct nfs4_fhc *f, const uint32_t *req, uint32_t nreq,
			   struct ut_buf *out)
{
	uint32_t m[A_WORDS] = { 0 }, i;
	struct stat st = { 0 };
	struct vol_fsstat fs = { 0 };
	uint64_t fsid = 0, fileid, capacity = 0;
	size_t len_off;
	unsigned a;

	for (i = 0; i < A_WORDS && i < nreq; i++)
		m[i] = req[i] & nfs4_supported[i];
	if (f->pseudo) {
		st.st_mode = S_IFDIR | 0555;
		st.st_nlink = 2;
		st.st_ino = 1;
		st.st_ctim.tv_sec = 1;
	} else {
		st = f->obj.st;
		fsid = vol_export_fsid(f->obj.exp);
		capacity = vol_export_config(f->obj.exp)->capacity;
		if ((m[0] & (BIT(A_FILES_AVAIL) | BIT(A_FILES_FREE) | BIT(A_FILES_TOTAL))) ||
		    (m[1] & (BIT(A_SPACE_AVAIL) | BIT(A_SPACE_FREE) | BIT(A_SPACE_TOTAL))))
			(void)vol_fsstat(&f->obj, &fs);
	}
	(void)capacity;
	fileid = f->pseudo ? 1 : (uint64_t)st.st_ino;
	nfs4_put_bitmap(out, m, A_WORDS);
	len_off = out->len;
	xdr_put_u32(out, 0);
	for (a = 0; a < 32 * A_WORDS; a++) {
		if (!has(m, a))
			continue;
		switch (a) {
		case A_SUPPORTED: nfs4_put_bitmap(out, nfs4_supported, A_WORDS); break;
		case A_TYPE: xdr_put_u32(out, ftype(st.st_mode)); break;
		case A_FH_EXPIRE: xdr_put_u32(out, 0); break; /* FH4_PERSISTENT */
		case A_CHANGE:
			xdr_put_u64(out, nfs4_change(&st));
			break;
		case A_SIZE: xdr_put_u64(out, (uint64_t)st.st_size); break;
		case A_LINK_SUPPORT: case A_SYMLINK_SUPPORT: case A_UNIQUE: case A_CANSETTIME:
		case A_CASE_PRESERVING: case A_CHOWN_RESTRICTED: case A_NO_TRUNC:
			xdr_put_u32(out, 1);
			break;
		case A_NAMED_ATTR: case A_CASE_INSENSITIVE: xdr_put_u32(out, 0); break;
		case A_FSID: xdr_put_u64(out, fsid); xdr_put_u64(out, 0); break;
		case A_LEASE: xdr_put_u32(out, cx->srv->lease_s); break;
		case A_RDATTR_ERROR: xdr_put_u32(out, NFS4_OK); break;
		case A_FILEHANDLE: {
			struct vol_fh fh;

			if (f->pseudo || vol_fh_make(cx->call->store, &f->obj, &fh) != 0) {
				static const uint8_t pfh[8] = { 0x80, 'A', 'Q', '4', 'R', 'O', 'O', 'T' };

				xdr_put_opaque(out, pfh, sizeof(pfh));
			} else {
				xdr_put_opaque(out, fh.data, fh.len);
			}
			break;
		}
		case A_FILEID: xdr_put_u64(out, fileid); break;
		case A_FILES_AVAIL: xdr_put_u64(out, fs.afiles); break;
		case A_FILES_FREE: xdr_put_u64(out, fs.ffiles); break;
		case A_FILES_TOTAL: xdr_put_u64(out, fs.tfiles); break;
		case A_MAXFILESIZE: xdr_put_u64(out, VOL_FILE_MAX); break;
		case A_MAXLINK: xdr_put_u32(out, 65000); break;
		case A_MAXNAME: xdr_put_u32(out, VOL_NAME_MAX); break;
		case A_MAXREAD: case A_MAXWRITE: xdr_put_u64(out, NFS4_IO_MAX); break;
		case A_MODE: xdr_put_u32(out, (uint32_t)st.st_mode & 07777); break;
		case A_NUMLINKS: xdr_put_u32(out, (uint32_t)st.st_nlink); break;
		case A_OWNER: put_id(out, st.st_uid); break;
		case A_OWNER_GROUP: put_id(out, st.st_gid); break;
		case A_RAWDEV: xdr_put_u32(out, major(st.st_rdev)); xdr_put_u32(out, minor(st.st_rdev)); break;
		case A_SPACE_AVAIL: xdr_put_u64(out, fs.abytes); break;
		case A_SPACE_FREE: xdr_put_u64(out, fs.fbytes); break;
		case A_SPACE_TOTAL: xdr_put_u64(out, fs.tbytes); break;
		case A_SPACE_USED: xdr_put_u64(out, (uint64_t)st.st_blocks * 512u); break;
		case A_TIME_ACCESS: put_time(out, &st.st_atim); break;
		case A_TIME_DELTA: { struct timespec d = { 0, 1 }; put_time(out, &d); break; }
		case A_TIME_METADATA: put_time(out, &st.st_ctim); break;
		case A_TIME_MODIFY: put_time(out, &st.st_mtim); break;
		case A_MOUNTED_ON_FILEID:
			/* an export root sits on its entry of the pseudo root */
			xdr_put_u64(out, !f->pseudo && f->obj.exp && S_ISDIR(st.st_mode) &&
						 nfs4_is_export_root(&f->obj)
						 ? nfs4_pseudo_fileid(fsid) : fileid);
			break;
		case A_SUPPATTR_EXCLCREAT: nfs4_put_bitmap(out, nfs4_exclcreat, A_WORDS); break;
		default: break; /* write-only (time_*_set): never answered */
		}
	}
	if (!out->err)
		ut_buf_set_be32(out, len_off, (uint32_t)(out->len - len_off - 4));
	return NFS4_OK;
}

bool nfs4_attr_of_data(const uint32_t *req, uint32_t n)
{
	uint32_t w[2] = { n > 0 ? req[0] : 0, n > 1 ? req[1] : 0 };

	return has(w, A_CHANGE) || has(w, A_SIZE) || has(w, A_SPACE_USED) || has(w, A_TIME_MODIFY);
}

uint32_t nfs4_op_getattr(struct nfs4_cx *cx, struct xdr_cur *in)
{
	uint32_t req[8], n;

	if (!nfs4_get_bitmap(in, req, 8, &n))
		return NFS4ERR_BADXDR;
	if (!cx->cur.pseudo && vol_refresh(&cx->cur.obj) != 0)
		return NFS4ERR_STALE;
	if (!cx->cur.pseudo && S_ISREG(cx->cur.obj.st.st_mode) && nfs4_attr_of_data(req, n)) {
		struct vol_lock_key k;

		/* another client's write delegation caches what these say: its
		 * holder is asked (CB_GETATTR, RFC 8881 10.4.3) and its size and
		 * change answered; it is recalled when it does not answer */
		if (nfs_call_ask(cx->call, &cx->cur.obj, nfs4_deleg_client_group(cx)) < 0) {
			vol_lock_key_of(&cx->cur.obj, &k);
			if (nfs4_deleg_conflict_read(cx, &k))
				return NFS4ERR_DELAY;
			if (vol_refresh(&cx->cur.obj) != 0)
				return NFS4ERR_STALE;
		}
	}
	return nfs4_fattr_encode(cx, &cx->cur, req, n, cx->out);
}

/* utf8str_mixed owner: a decimal id */
static bool get_id(struct xdr_cur *in, uint32_t *id)
{
	uint32_t len, i;
	const uint8_t *p = xdr_opaque(in, NFS4_OPAQUE_LIMIT, &len);
	uint64_t v = 0;

	if (in->err || len == 0 || len > 10)
		return false;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*id = (uint32_t)v;
	return true;
}

static void get_settime(struct xdr_cur *in, int *how, struct timespec *t)
{
	uint32_t h = xdr_u32(in);

	if (h == 1) {
		t->tv_sec = (time_t)(int64_t)xdr_u64(in);
		t->tv_nsec = xdr_u32(in);
		if (t->tv_nsec >= 1000000000)
			in->err = -EBADMSG;
		*how = 2;
	} else if (h == 0) {
		*how = 1;
	} else {
		in->err = -EBADMSG;
	}
}

uint32_t nfs4_fattr_decode(struct xdr_cur *in, struct vol_sattr *sa, uint32_t set[3])
{
	uint32_t w[8], m[A_WORDS] = { 0 }, n, i, vlen;
	const uint8_t *vals;
	struct xdr_cur v;
	bool bad_owner = false;

	memset(sa, 0, sizeof(*sa));
	if (!nfs4_get_bitmap(in, w, 8, &n))
		return NFS4ERR_BADXDR;
	vals = xdr_opaque(in, NFS4_REQ_MAX, &vlen);
	if (in->err)
		return NFS4ERR_BADXDR;
	for (i = A_WORDS; i < 8; i++)
		if (w[i])
			return NFS4ERR_ATTRNOTSUPP;
	memcpy(m, w, sizeof(m));
	for (i = 0; i < A_WORDS; i++) {
		if (m[i] & ~nfs4_supported[i])
			return NFS4ERR_ATTRNOTSUPP;
		if (m[i] & ~nfs4_settable[i])
			return NFS4ERR_INVAL; /* a read-only attribute */
		set[i] = m[i];
	}
	xdr_cur_init(&v, vals, vlen);
	if (has(m, A_SIZE)) {
		sa->set_size = true;
		sa->size = xdr_u64(&v);
	}
	if (has(m, A_MODE)) {
		sa->set_mode = true;
		sa->mode = xdr_u32(&v) & 07777;
	}
	if (has(m, A_OWNER)) {
		sa->set_uid = true;
		bad_owner |= !get_id(&v, &sa->uid);
	}
	if (has(m, A_OWNER_GROUP)) {
		sa->set_gid = true;
		bad_owner |= !get_id(&v, &sa->gid);
	}
	if (has(m, A_TIME_ACCESS_SET))
		get_settime(&v, &sa->atime_how, &sa->atime);
	if (has(m, A_TIME_MODIFY_SET))
		get_settime(&v, &sa->mtime_how, &sa->mtime);
	if (v.err)
		return NFS4ERR_BADXDR;
	if (bad_owner)
		return NFS4ERR_BADOWNER;
	return NFS4_OK;
}

uint32_t nfs4_op_setattr(struct nfs4_cx *cx, struct xdr_cur *in)
{
	struct nfs4_stateid sid;
	struct vol_sattr sa;
	struct vol_lock_key k;
	struct vol_lease_by by;
	uint32_t set[A_WORDS] = { 0 }, st;
	int rc;

	nfs4_get_stateid(in, &sid);
	if ((st = nfs4_fattr_decode(in, &sa, set)) != NFS4_OK)
		return st;
	if (sa.set_size && !S_ISREG(cx->cur.obj.st.st_mode))
		return S_ISDIR(cx->cur.obj.st.st_mode) ? NFS4ERR_ISDIR : NFS4ERR_INVAL;
	vol_lock_key_of(&cx->cur.obj, &k);
	if (sa.set_size && nfs4_deleg_conflict(cx, &k, false))
		return NFS4ERR_DELAY; /* another client's delegation is being recalled */
	if (!sa.set_size && nfs4_deleg_conflict_read(cx, &k))
		return NFS4ERR_DELAY; /* any change of attributes: another's write delegation is */
	if (sa.set_mode && nfs4_setid_file(S_IFREG | sa.mode) && S_ISREG(cx->cur.obj.st.st_mode) &&
	    nfs4_deleg_conflict_setid(cx, &k))
		return NFS4ERR_DELAY; /* set-id bits: the caller's own write delegation is recalled first */
	nfs4_deleg_by(cx, &by);
	/* stable before the reply, as NFSv3's SETATTR (knfsd's
	 * commit_metadata): a crash after the answer keeps the change */
	if ((rc = vol_setattr_stable(&cx->cur.obj, &cx->cur.ecred, &sa, &by)) != 0)
		return nfs4_status(rc);
	(void)vol_refresh(&cx->cur.obj);
	/* a write delegation its client's concurrent OPEN got between the check
	 * above and the change: recalled now (the OPEN saw no set-id bits) */
	if (sa.set_mode && nfs4_setid_file(cx->cur.obj.st.st_mode))
		(void)nfs4_deleg_conflict_setid(cx, &k);
	nfs4_put_bitmap(cx->out, set, A_WORDS);
	return NFS4_OK;
}

/* VERIFY and NVERIFY (RFC 8881 18.31, 18.15): the attributes given are
 * compared with the object's, encoded as GETATTR would (XDR is canonical,
 * so equal values are equal bytes). NFS4ERR_ATTRNOTSUPP for an attribute
 * not supported, INVAL for rdattr_error and the write-only ones; *same
 * says whether every value matched. */
static uint32_t verify_common(struct nfs4_cx *cx, struct xdr_cur *in, bool *same)
{
	uint32_t req[8], n, alen, i, w, mine_len;
	const uint8_t *vals;
	struct ut_buf mine;
	struct xdr_cur c;
	const uint8_t *p;
	uint32_t st;

	if (!nfs4_get_bitmap(in, req, 8, &n))
		return NFS4ERR_BADXDR;
	vals = xdr_opaque(in, NFS4_REQ_MAX, &alen);
	if (in->err)
		return NFS4ERR_BADXDR;
	for (i = 0; i < n; i++)
		if (req[i] & ~(i < A_WORDS ? nfs4_supported[i] : 0))
			return NFS4ERR_ATTRNOTSUPP;
	if ((req[0] & BIT(A_RDATTR_ERROR)) || (n > 1 && (req[1] & (BIT(A_TIME_ACCESS_SET) | BIT(A_TIME_MODIFY_SET)))))
		return NFS4ERR_INVAL;
	if (!cx->cur.pseudo && vol_refresh(&cx->cur.obj) != 0)
		return NFS4ERR_STALE;
	ut_buf_init(&mine, NFS4_REP_MAX);
	if ((st = nfs4_fattr_encode(cx, &cx->cur, req, n, &mine)) != NFS4_OK)
		goto out;
	xdr_cur_init(&c, (const uint8_t *)mine.p, mine.len);
	w = xdr_u32(&c); /* its bitmap: the words, then the values */
	for (i = 0; i < w && !c.err; i++)
		(void)xdr_u32(&c);
	p = xdr_opaque(&c, NFS4_REP_MAX, &mine_len);
	if (c.err || ut_buf_err(&mine) != AQ_OK) {
		st = NFS4ERR_SERVERFAULT;
		goto out;
	}
	*same = mine_len == alen && (alen == 0 || !memcmp(p, vals, alen));
out:
	ut_buf_cleanup(&mine);
	return st;
}

uint32_t nfs4_op_verify(struct nfs4_cx *cx, struct xdr_cur *in)
{
	bool same = false;
	uint32_t st = verify_common(cx, in, &same);

	return st != NFS4_OK ? st : same ? NFS4_OK : NFS4ERR_NOT_SAME;
}

uint32_t nfs4_op_nverify(struct nfs4_cx *cx, struct xdr_cur *in)
{
	bool same = false;
	uint32_t st = verify_common(cx, in, &same);

	return st != NFS4_OK ? st : same ? NFS4ERR_SAME : NFS4_OK;
}
