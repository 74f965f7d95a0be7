/* mnt: MOUNT v3 (100005/3) and PORTMAP v2 (100000/2) programs, served on the
 * NFS port. Types and decoders are public for the fuzz harnesses. */
#ifndef AQ_AGENT_MNT_H
#define AQ_AGENT_MNT_H

#include "agent/nfs/nfs_prog.h"

enum {
	MNT_PROG = 100005,
	MNT_VERS = 3,
	MNT_PATH_CAP = 1024,      /* MNTPATHLEN: a longer path is GARBAGE_ARGS */
	PMAP_PROG = 100000,
	PMAP_VERS = 2,
	NFS_PROG_NUM = 100003,
};

enum mnt_stat {
	MNT3_OK = 0, MNT3ERR_PERM = 1, MNT3ERR_NOENT = 2, MNT3ERR_IO = 5, MNT3ERR_ACCES = 13,
	MNT3ERR_NOTDIR = 20, MNT3ERR_INVAL = 22, MNT3ERR_NAMETOOLONG = 63,
	MNT3ERR_NOTSUPP = 10004, MNT3ERR_SERVERFAULT = 10006,
};

struct mnt_path_args { uint32_t len; const char *path; };
struct mnt_mnt_res { uint32_t status; struct vol_fh fh; };
struct mnt_blob_res { struct ut_buf blob; };
struct pmap_mapping { uint32_t prog, vers, prot, port; };

int mnt_dec_void(struct xdr_cur *c, void *a);
int mnt_dec_path(struct xdr_cur *c, void *a);
int pmap_dec_mapping(struct xdr_cur *c, void *a);

#endif
