/* nfs3: NFS version 3 (RFC 1813) argument and result types, their XDR codecs
 * (nfs3_xdr.c) and the procedure table (nfs3.c). Handlers live one group per
 * file: nfs3_attr.c, nfs3_dir.c, nfs3_io.c. Internal to agent/.
 *
 * Argument structs point into the request record (names, data, handles);
 * decoders never allocate, so arguments need no free. Results own what their
 * proc's free function releases.
 */
#ifndef AQ_AGENT_NFS3_H
#define AQ_AGENT_NFS3_H

#include "agent/nfs/nfs_prog.h"

enum {
	NFS3_PROG = 100003,
	NFS3_VERS = 3,
	NFS3_FHSIZE = 64,
	NFS3_NAME_CAP = 1024,        /* decoded; > 255 answers NAMETOOLONG */
	NFS3_PATH_CAP = 4096,
	NFS3_MAXDATA = VOL_IO_MAX,   /* rtmax / wtmax */
	NFS3_DIRMAX = 1u << 20,      /* READDIR(PLUS) reply cap */
};

enum nfs3_stat {
	NFS3_OK = 0, NFS3ERR_PERM = 1, NFS3ERR_NOENT = 2, NFS3ERR_IO = 5, NFS3ERR_NXIO = 6,
	NFS3ERR_ACCES = 13, NFS3ERR_EXIST = 17, NFS3ERR_XDEV = 18, NFS3ERR_NODEV = 19,
	NFS3ERR_NOTDIR = 20, NFS3ERR_ISDIR = 21, NFS3ERR_INVAL = 22, NFS3ERR_FBIG = 27,
	NFS3ERR_NOSPC = 28, NFS3ERR_ROFS = 30, NFS3ERR_MLINK = 31, NFS3ERR_NAMETOOLONG = 63,
	NFS3ERR_NOTEMPTY = 66, NFS3ERR_DQUOT = 69, NFS3ERR_STALE = 70, NFS3ERR_REMOTE = 71,
	NFS3ERR_BADHANDLE = 10001, NFS3ERR_NOT_SYNC = 10002, NFS3ERR_BAD_COOKIE = 10003,
	NFS3ERR_NOTSUPP = 10004, NFS3ERR_TOOSMALL = 10005, NFS3ERR_SERVERFAULT = 10006,
	NFS3ERR_BADTYPE = 10007, NFS3ERR_JUKEBOX = 10008,
};

enum nfs3_proc_num {
	NFS3_NULL = 0, NFS3_GETATTR, NFS3_SETATTR, NFS3_LOOKUP, NFS3_ACCESS, NFS3_READLINK,
	NFS3_READ, NFS3_WRITE, NFS3_CREATE, NFS3_MKDIR, NFS3_SYMLINK, NFS3_MKNOD, NFS3_REMOVE,
	NFS3_RMDIR, NFS3_RENAME, NFS3_LINK, NFS3_READDIR, NFS3_READDIRPLUS, NFS3_FSSTAT,
	NFS3_FSINFO, NFS3_PATHCONF, NFS3_COMMIT, NFS3_NPROCS
};

struct nfs3_name {
	uint32_t len;
	const char *s;
};

/* ---- building blocks of results ---- */
struct nfs3_attr {       /* post_op_attr */
	bool present;
	uint64_t fsid;
	struct stat st;
};
struct nfs3_wcc {        /* wcc_data */
	bool pre;
	uint64_t size;
	struct timespec mtime, ctime;
	struct nfs3_attr post;
};
struct nfs3_pfh {        /* post_op_fh3 */
	bool present;
	struct vol_fh fh;
};

/* ---- arguments ---- */
struct nfs3_fh_args { struct nfs_fh3 fh; };                          /* GETATTR, READLINK, FSSTAT, FSINFO, PATHCONF */
struct nfs3_setattr_args { struct nfs_fh3 fh; struct vol_sattr sa; bool guard; struct timespec guard_ctime; };
struct nfs3_dirop_args { struct nfs_fh3 fh; struct nfs3_name name; };   /* LOOKUP, REMOVE, RMDIR */
struct nfs3_access_args { struct nfs_fh3 fh; uint32_t access; };
struct nfs3_read_args { struct nfs_fh3 fh; uint64_t offset; uint32_t count; };
struct nfs3_write_args { struct nfs_fh3 fh; uint64_t offset; uint32_t count; uint32_t stable; uint32_t len; const uint8_t *data; };
struct nfs3_create_args { struct nfs_fh3 fh; struct nfs3_name name; uint32_t mode; struct vol_sattr sa; uint8_t verf[8]; };
struct nfs3_mkdir_args { struct nfs_fh3 fh; struct nfs3_name name; struct vol_sattr sa; };
struct nfs3_symlink_args { struct nfs_fh3 fh; struct nfs3_name name; struct vol_sattr sa; struct nfs3_name target; };
struct nfs3_mknod_args { struct nfs_fh3 fh; struct nfs3_name name; uint32_t type; struct vol_sattr sa; uint32_t major, minor; };
struct nfs3_rename_args { struct nfs_fh3 fh; struct nfs3_name name; struct nfs_fh3 tofh; struct nfs3_name toname; };
struct nfs3_link_args { struct nfs_fh3 fh; struct nfs_fh3 dirfh; struct nfs3_name name; };
struct nfs3_readdir_args { struct nfs_fh3 fh; uint64_t cookie; uint8_t verf[8]; uint32_t dircount; uint32_t maxcount; };
struct nfs3_commit_args { struct nfs_fh3 fh; uint64_t offset; uint32_t count; };

/* ---- results (status first) ---- */
struct nfs3_getattr_res { uint32_t status; struct nfs3_attr attr; };
struct nfs3_wcc_res { uint32_t status; struct nfs3_wcc wcc; };          /* SETATTR, REMOVE, RMDIR */
struct nfs3_lookup_res { uint32_t status; struct vol_fh fh; struct nfs3_attr obj; struct nfs3_attr dir; };
struct nfs3_access_res { uint32_t status; struct nfs3_attr attr; uint32_t access; };
struct nfs3_readlink_res { uint32_t status; struct nfs3_attr attr; uint32_t len; char path[NFS3_PATH_CAP]; };
struct nfs3_read_res {
	uint32_t status; struct nfs3_attr attr; uint32_t count; bool eof;
	uint8_t *data;             /* copied data, or: */
	int fd; uint64_t off; bool owned; /* zero-copy source (fd >= 0) */
};
struct nfs3_write_res { uint32_t status; struct nfs3_wcc wcc; uint32_t count; uint32_t committed; uint8_t verf[8]; };
struct nfs3_create_res { uint32_t status; struct nfs3_pfh fh; struct nfs3_attr attr; struct nfs3_wcc dir; }; /* CREATE MKDIR SYMLINK MKNOD */
struct nfs3_rename_res { uint32_t status; struct nfs3_wcc from; struct nfs3_wcc to; };
struct nfs3_link_res { uint32_t status; struct nfs3_attr attr; struct nfs3_wcc dir; };
struct nfs3_readdir_res { uint32_t status; struct nfs3_attr attr; uint8_t verf[8]; struct ut_buf entries; bool eof; };
struct nfs3_fsstat_res { uint32_t status; struct nfs3_attr attr; struct vol_fsstat fs; };
struct nfs3_fsinfo_res { uint32_t status; struct nfs3_attr attr; };
struct nfs3_pathconf_res { uint32_t status; struct nfs3_attr attr; };
struct nfs3_commit_res { uint32_t status; struct nfs3_wcc wcc; uint8_t verf[8]; };

/* ---- codecs (nfs3_xdr.c) ---- */
int nfs3_dec_void(struct xdr_cur *c, void *a);
int nfs3_dec_fh(struct xdr_cur *c, void *a);
int nfs3_dec_setattr(struct xdr_cur *c, void *a);
int nfs3_dec_dirop(struct xdr_cur *c, void *a);
int nfs3_dec_access(struct xdr_cur *c, void *a);
int nfs3_dec_read(struct xdr_cur *c, void *a);
int nfs3_dec_write(struct xdr_cur *c, void *a);
/* Whether a READ, or an UNSTABLE WRITE, (args, len: bytes of the network)
 * moves at most NFS_QUICK_BYTES (a quick call, nfs_prog.h); false for other
 * procedures. Reads only the header fields, bounded by len. */
bool nfs3_io_quick(uint32_t proc, const uint8_t *args, size_t len);
int nfs3_dec_create(struct xdr_cur *c, void *a);
int nfs3_dec_mkdir(struct xdr_cur *c, void *a);
int nfs3_dec_symlink(struct xdr_cur *c, void *a);
int nfs3_dec_mknod(struct xdr_cur *c, void *a);
int nfs3_dec_rename(struct xdr_cur *c, void *a);
int nfs3_dec_link(struct xdr_cur *c, void *a);
int nfs3_dec_readdir(struct xdr_cur *c, void *a);
int nfs3_dec_readdirplus(struct xdr_cur *c, void *a);
int nfs3_dec_commit(struct xdr_cur *c, void *a);

void nfs3_enc_void(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_getattr(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_wcc(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_lookup(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_access(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_readlink(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_read(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_write(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_create(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_rename(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_link(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_readdir(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_fsstat(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_fsinfo(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_pathconf(struct ut_buf *b, void *r, struct nfs_call *call);
void nfs3_enc_commit(struct ut_buf *b, void *r, struct nfs_call *call);

/* Building blocks shared with READDIRPLUS entry encoding. */
void nfs3_put_attr(struct ut_buf *b, const struct nfs3_attr *a);
void nfs3_put_fh(struct ut_buf *b, const struct vol_fh *fh);
/* Fill a post_op_attr / wcc from an object. */
void nfs3_attr_of(struct nfs3_attr *a, const struct vol_obj *o);
void nfs3_wcc_pre(struct nfs3_wcc *w, const struct vol_obj *o);
void nfs3_wcc_post(struct nfs3_wcc *w, struct vol_obj *o);

/* ---- handlers ---- */
void nfs3_null(struct nfs_call *call, void *a, void *r);
void nfs3_getattr(struct nfs_call *call, void *a, void *r);
void nfs3_setattr(struct nfs_call *call, void *a, void *r);
void nfs3_lookup(struct nfs_call *call, void *a, void *r);
void nfs3_access(struct nfs_call *call, void *a, void *r);
void nfs3_readlink(struct nfs_call *call, void *a, void *r);
void nfs3_read(struct nfs_call *call, void *a, void *r);
void nfs3_write(struct nfs_call *call, void *a, void *r);
void nfs3_create(struct nfs_call *call, void *a, void *r);
void nfs3_mkdir(struct nfs_call *call, void *a, void *r);
void nfs3_symlink(struct nfs_call *call, void *a, void *r);
void nfs3_mknod(struct nfs_call *call, void *a, void *r);
void nfs3_remove(struct nfs_call *call, void *a, void *r);
void nfs3_rmdir(struct nfs_call *call, void *a, void *r);
void nfs3_rename(struct nfs_call *call, void *a, void *r);
void nfs3_link(struct nfs_call *call, void *a, void *r);
void nfs3_readdir(struct nfs_call *call, void *a, void *r);
void nfs3_readdirplus(struct nfs_call *call, void *a, void *r);
void nfs3_fsstat(struct nfs_call *call, void *a, void *r);
void nfs3_fsinfo(struct nfs_call *call, void *a, void *r);
void nfs3_pathconf(struct nfs_call *call, void *a, void *r);
void nfs3_commit(struct nfs_call *call, void *a, void *r);

void nfs3_free_read(void *r);
void nfs3_free_readdir(void *r);

#endif
