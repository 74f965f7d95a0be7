/* nfs3: the NFSv3 procedure table (RFC 1813), indexed by procedure number,
 * and the errno -> nfsstat3 mapping. Flags are checked centrally by nfs_srv:
 * NFS_F_MODIFIES procedures get NFS3ERR_ROFS on read-only exports before
 * their handler runs; NFS_F_NOT_IDEMPOTENT replies go to the duplicate
 * request cache; NFS_F_RECALL ones (GETATTR, SETATTR, READ, WRITE, LINK of
 * the file: its first handle) recall
 * an NFSv4.1 write delegation of the file first and wait for its return,
 * except that GETATTR (NFS_F_ASK) first asks the holder with CB_GETATTR and
 * answers with its size and change. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs3.h"

#include <errno.h>

#define P(nm, dec, h, enc, fr, fl, at, rt) \
	{ nm, dec, h, enc, fr, fl, (uint32_t)sizeof(at), (uint32_t)sizeof(rt) }
#define M NFS_F_MODIFIES
#define NI NFS_F_NOT_IDEMPOTENT
#define FH NFS_F_FH
#define Q NFS_F_QUICK
#define RC NFS_F_RECALL
#define AS NFS_F_ASK

struct nfs3_none { char unused; };

static const struct nfs_proc nfs3_procs[NFS3_NPROCS] = {
	[NFS3_NULL] = P("NULL", nfs3_dec_void, nfs3_null, nfs3_enc_void, NULL, Q,
			struct nfs3_none, struct nfs3_none),
	[NFS3_GETATTR] = P("GETATTR", nfs3_dec_fh, nfs3_getattr, nfs3_enc_getattr, NULL, FH | Q | RC | AS,
			   struct nfs3_fh_args, struct nfs3_getattr_res),
	[NFS3_SETATTR] = P("SETATTR", nfs3_dec_setattr, nfs3_setattr, nfs3_enc_wcc, NULL, FH | M | RC,
			   struct nfs3_setattr_args, struct nfs3_wcc_res),
	[NFS3_LOOKUP] = P("LOOKUP", nfs3_dec_dirop, nfs3_lookup, nfs3_enc_lookup, NULL, FH | Q,
			  struct nfs3_dirop_args, struct nfs3_lookup_res),
	[NFS3_ACCESS] = P("ACCESS", nfs3_dec_access, nfs3_access, nfs3_enc_access, NULL, FH | Q,
			  struct nfs3_access_args, struct nfs3_access_res),
	[NFS3_READLINK] = P("READLINK", nfs3_dec_fh, nfs3_readlink, nfs3_enc_readlink, NULL, FH | Q,
			    struct nfs3_fh_args, struct nfs3_readlink_res),
	[NFS3_READ] = P("READ", nfs3_dec_read, nfs3_read, nfs3_enc_read, nfs3_free_read, FH | Q | RC,
			struct nfs3_read_args, struct nfs3_read_res),
	[NFS3_WRITE] = P("WRITE", nfs3_dec_write, nfs3_write, nfs3_enc_write, NULL, FH | M | RC,
			 struct nfs3_write_args, struct nfs3_write_res),
	[NFS3_CREATE] = P("CREATE", nfs3_dec_create, nfs3_create, nfs3_enc_create, NULL, FH | M | NI,
			  struct nfs3_create_args, struct nfs3_create_res),
	[NFS3_MKDIR] = P("MKDIR", nfs3_dec_mkdir, nfs3_mkdir, nfs3_enc_create, NULL, FH | M | NI,
			 struct nfs3_mkdir_args, struct nfs3_create_res),
	[NFS3_SYMLINK] = P("SYMLINK", nfs3_dec_symlink, nfs3_symlink, nfs3_enc_create, NULL, FH | M | NI,
			   struct nfs3_symlink_args, struct nfs3_create_res),
	[NFS3_MKNOD] = P("MKNOD", nfs3_dec_mknod, nfs3_mknod, nfs3_enc_create, NULL, FH | M | NI,
			 struct nfs3_mknod_args, struct nfs3_create_res),
	[NFS3_REMOVE] = P("REMOVE", nfs3_dec_dirop, nfs3_remove, nfs3_enc_wcc, NULL, FH | M | NI,
			  struct nfs3_dirop_args, struct nfs3_wcc_res),
	[NFS3_RMDIR] = P("RMDIR", nfs3_dec_dirop, nfs3_rmdir, nfs3_enc_wcc, NULL, FH | M | NI,
			 struct nfs3_dirop_args, struct nfs3_wcc_res),
	[NFS3_RENAME] = P("RENAME", nfs3_dec_rename, nfs3_rename, nfs3_enc_rename, NULL, FH | M | NI,
			  struct nfs3_rename_args, struct nfs3_rename_res),
	[NFS3_LINK] = P("LINK", nfs3_dec_link, nfs3_link, nfs3_enc_link, NULL, FH | M | NI | RC,
			struct nfs3_link_args, struct nfs3_link_res),
	[NFS3_READDIR] = P("READDIR", nfs3_dec_readdir, nfs3_readdir, nfs3_enc_readdir, nfs3_free_readdir,
			      FH | Q, struct nfs3_readdir_args, struct nfs3_readdir_res),
	[NFS3_READDIRPLUS] = P("READDIRPLUS", nfs3_dec_readdirplus, nfs3_readdirplus, nfs3_enc_readdir,
			       nfs3_free_readdir, FH | Q, struct nfs3_readdir_args, struct nfs3_readdir_res),
	[NFS3_FSSTAT] = P("FSSTAT", nfs3_dec_fh, nfs3_fsstat, nfs3_enc_fsstat, NULL, FH | Q,
			  struct nfs3_fh_args, struct nfs3_fsstat_res),
	[NFS3_FSINFO] = P("FSINFO", nfs3_dec_fh, nfs3_fsinfo, nfs3_enc_fsinfo, NULL, FH | Q,
			  struct nfs3_fh_args, struct nfs3_fsinfo_res),
	[NFS3_PATHCONF] = P("PATHCONF", nfs3_dec_fh, nfs3_pathconf, nfs3_enc_pathconf, NULL, FH | Q,
			    struct nfs3_fh_args, struct nfs3_pathconf_res),
	[NFS3_COMMIT] = P("COMMIT", nfs3_dec_commit, nfs3_commit, nfs3_enc_commit, NULL, FH | M,
			  struct nfs3_commit_args, struct nfs3_commit_res),
};

const struct nfs_prog nfs3_prog = { .prog = NFS3_PROG, .vers = NFS3_VERS, .procs = nfs3_procs, .nprocs = NFS3_NPROCS };

uint32_t nfs3_status(int rc)
{
	switch (rc) {
	case 0: return NFS3_OK;
	case -EPERM: return NFS3ERR_PERM;
	case -ENOENT: return NFS3ERR_NOENT;
	case -ENXIO: return NFS3ERR_NXIO;
	case -EACCES: return NFS3ERR_ACCES;
	case -EEXIST: return NFS3ERR_EXIST;
	case -EXDEV: return NFS3ERR_XDEV;
	case -ENODEV: return NFS3ERR_NODEV;
	case -ENOTDIR: return NFS3ERR_NOTDIR;
	case -EISDIR: return NFS3ERR_ISDIR;
	case -EINVAL: return NFS3ERR_INVAL;
	case -EFBIG: return NFS3ERR_FBIG;
	case -ENOSPC: return NFS3ERR_NOSPC;
	case -EROFS: return NFS3ERR_ROFS;
	case -EMLINK: return NFS3ERR_MLINK;
	case -ENAMETOOLONG: return NFS3ERR_NAMETOOLONG;
	case -ENOTEMPTY: return NFS3ERR_NOTEMPTY;
	case -EDQUOT: return NFS3ERR_DQUOT;
	case -ESTALE: return NFS3ERR_STALE;
	case VOL_EBADHANDLE: return NFS3ERR_BADHANDLE;
	case -ENOTSUP: return NFS3ERR_NOTSUPP;
	case -ELOOP: return NFS3ERR_INVAL; /* a symlink where a directory was expected */
	case -ENOMEM: return NFS3ERR_JUKEBOX;
	case -ETIMEDOUT: return NFS3ERR_JUKEBOX; /* the cold tier could not answer in time */
	default: return NFS3ERR_IO;
	}
}
