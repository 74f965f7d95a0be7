/* nfs3_attr: NFSv3 procedures about attributes and file systems: NULL,
 * GETATTR, SETATTR, ACCESS, FSSTAT, FSINFO, PATHCONF. The object is resolved
 * and authorized centrally (nfs_srv) before these run. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs3.h"

#include <unistd.h>

void nfs3_null(struct nfs_call *call, void *a, void *r)
{
	(void)call;
	(void)a;
	(void)r;
}

void nfs3_getattr(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_getattr_res *res = r;

	(void)a;
	nfs3_attr_of(&res->attr, &call->obj);
}

void nfs3_setattr(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_setattr_args *args = a;
	struct nfs3_wcc_res *res = r;

	nfs3_wcc_pre(&res->wcc, &call->obj);
	if (args->guard && (args->guard_ctime.tv_sec != call->obj.st.st_ctim.tv_sec ||
			    args->guard_ctime.tv_nsec != call->obj.st.st_ctim.tv_nsec)) {
		res->status = NFS3ERR_NOT_SYNC;
		goto out;
	}
	/* stable before the reply, like a namespace change */
	res->status = nfs3_status(vol_setattr_stable(&call->obj, &call->ecred, &args->sa, NULL));
out:
	nfs3_wcc_post(&res->wcc, &call->obj);
}

void nfs3_access(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_access_args *args = a;
	struct nfs3_access_res *res = r;
	bool dir = S_ISDIR(call->obj.st.st_mode);
	int mask = 0, ok = 0;
	uint32_t want = args->access, got = 0;

	if (want & 0x1)
		mask |= R_OK;
	if (want & (0x2 | 0x20))
		mask |= X_OK;
	if (want & (0x4 | 0x8 | 0x10))
		mask |= W_OK;
	vol_access(&call->obj, &call->ecred, mask, &ok);
	if (ok & R_OK)
		got |= want & 0x1;
	if (ok & X_OK)
		got |= want & (dir ? 0x2 : 0x20);
	if ((ok & W_OK) && call->access == VOL_ACCESS_RW)
		got |= want & (0x4 | 0x8 | (dir ? 0x10 : 0));
	res->access = got;
	nfs3_attr_of(&res->attr, &call->obj);
}

void nfs3_fsstat(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_fsstat_res *res = r;

	(void)a;
	res->status = nfs3_status(vol_fsstat(&call->obj, &res->fs));
	nfs3_attr_of(&res->attr, &call->obj);
}

void nfs3_fsinfo(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_fsinfo_res *res = r;

	(void)a;
	nfs3_attr_of(&res->attr, &call->obj);
}

void nfs3_pathconf(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_pathconf_res *res = r;

	(void)a;
	nfs3_attr_of(&res->attr, &call->obj);
}
