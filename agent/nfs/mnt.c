/* mnt: MOUNT version 3 (RFC 1813 appendix I): NULL, MNT, DUMP, UMNT,
 * UMNTALL, EXPORT. MNT applies the export rules to the caller's address
 * (MNT3ERR_ACCES when no rule allows it) and answers the handle of the
 * export's root or of a directory below it ("/share/sub/dir"). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/mnt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/api_error.h"

/* A DUMP or EXPORT list: the mounts and exports of one agent, far below. */
#define MNT_BLOB_MAX (1u << 20)

int mnt_dec_void(struct xdr_cur *c, void *a)
{
	(void)a;
	return c->err ? -EBADMSG : 0;
}

int mnt_dec_path(struct xdr_cur *c, void *a)
{
	struct mnt_path_args *x = a;

	x->path = (const char *)xdr_opaque(c, MNT_PATH_CAP, &x->len);
	return c->err ? -EBADMSG : 0;
}

/* The caller's address as text (DUMP host names). */
static void mnt_host(const struct sockaddr *sa, char *buf, size_t cap)
{
	const void *addr = sa->sa_family == AF_INET6
		? (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr
		: (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;

	if (!inet_ntop(sa->sa_family, addr, buf, (socklen_t)cap))
		snprintf(buf, cap, "unknown");
}

static void mnt_null(struct nfs_call *call, void *a, void *r)
{
	(void)call;
	(void)a;
	(void)r;
}

/* What a vol_ error means to MOUNT. */
static uint32_t mnt_status(int rc)
{
	switch (rc) {
	case -ENOENT: return MNT3ERR_NOENT;
	case -ENOTDIR: return MNT3ERR_NOTDIR;
	case -EACCES: case -EPERM: return MNT3ERR_ACCES;
	case -ENAMETOOLONG: return MNT3ERR_NAMETOOLONG;
	case -EINVAL: return MNT3ERR_INVAL;
	default: return MNT3ERR_IO;
	}
}

/* Walk the rest of a MNT path below the export root, one component at a
 * time with the caller's (squashed) identity, as LOOKUPs would: "" and "."
 * are skipped, ".." is refused (it could only climb out of the export), a
 * symlink is never followed, and every component must be a directory. */
static uint32_t mnt_walk(struct vol_obj *cur, const struct vol_cred *cred, const char *p, size_t len)
{
	size_t i = 0;

	while (i < len) {
		struct vol_obj next = {.fd = -1};
		size_t n = 0;
		int rc;

		while (i + n < len && p[i + n] != '/')
			n++;
		if (n == 2 && p[i] == '.' && p[i + 1] == '.')
			return MNT3ERR_ACCES;
		if (n > 0 && !(n == 1 && p[i] == '.')) {
			if ((rc = vol_lookup(cur, cred, p + i, n, &next)) != 0)
				return mnt_status(rc);
			vol_obj_cleanup(cur);
			*cur = next;
			if (!S_ISDIR(cur->st.st_mode))
				return MNT3ERR_NOTDIR;
		}
		i += n + 1;
	}
	return MNT3_OK;
}

/* MNT of an export or of a directory below it (knfsd and Ganesha allow
 * both): the export's rules apply, and the handle is the directory's. */
static void mnt_mnt(struct nfs_call *call, void *a, void *r)
{
	struct mnt_path_args *args = a;
	struct mnt_mnt_res *res = r;
	struct vol_export *e = NULL;
	struct vol_obj root = {.fd = -1};
	struct vol_cred eff;
	char host[64], path[MNT_PATH_CAP + 1];
	size_t rest = 0;

	e = vol_export_by_prefix(call->store, args->path, args->len, &rest);
	if (!e) {
		res->status = MNT3ERR_NOENT;
		goto out;
	}
	if (vol_authorize(e, call->peer, VOL_PROTO_NFSV3, &call->cred, &eff) == VOL_ACCESS_NONE) {
		res->status = MNT3ERR_ACCES;
		goto out;
	}
	if (vol_root(e, &root) != 0) {
		res->status = MNT3ERR_SERVERFAULT;
		goto out;
	}
	if ((res->status = mnt_walk(&root, &eff, args->path + rest, args->len - rest)) != MNT3_OK)
		goto out;
	if (vol_fh_make(call->store, &root, &res->fh) != 0) {
		res->status = MNT3ERR_SERVERFAULT;
		goto out;
	}
	res->status = MNT3_OK;
	mnt_host(call->peer, host, sizeof(host));
	memcpy(path, args->path, args->len);
	path[args->len] = '\0';
	nfs_srv_mount_add(call->srv, host, path);
out:
	vol_obj_cleanup(&root);
	vol_export_unref(e);
}

static void mnt_dump(struct nfs_call *call, void *a, void *r)
{
	struct mnt_blob_res *res = r;

	(void)a;
	ut_buf_init(&res->blob, MNT_BLOB_MAX);
	nfs_srv_mount_encode(call->srv, &res->blob);
}

static void mnt_umnt(struct nfs_call *call, void *a, void *r)
{
	struct mnt_path_args *args = a;
	char host[64], path[MNT_PATH_CAP + 1];

	(void)r;
	mnt_host(call->peer, host, sizeof(host));
	memcpy(path, args->path, args->len);
	path[args->len] = '\0';
	nfs_srv_mount_del(call->srv, host, path);
}

static void mnt_umntall(struct nfs_call *call, void *a, void *r)
{
	char host[64];

	(void)a;
	(void)r;
	mnt_host(call->peer, host, sizeof(host));
	nfs_srv_mount_del_host(call->srv, host);
}

static void mnt_export(struct nfs_call *call, void *a, void *r)
{
	struct mnt_blob_res *res = r;
	struct vol_export *e;
	size_t i, k;

	(void)a;
	ut_buf_init(&res->blob, MNT_BLOB_MAX);
	for (i = 0; (e = vol_export_at(call->store, i)) != NULL; i++) {
		const struct vol_export_cfg *cfg = vol_export_config(e);

		xdr_put_u32(&res->blob, 1);
		xdr_put_opaque(&res->blob, cfg->path, (uint32_t)strlen(cfg->path));
		for (k = 0; k < cfg->nrules; k++) {
			const char *p = cfg->rules[k].clients;

			while (*p) {
				size_t n = strcspn(p, ",");

				xdr_put_u32(&res->blob, 1);
				xdr_put_opaque(&res->blob, p, (uint32_t)n);
				p += n;
				if (*p == ',')
					p++;
			}
		}
		xdr_put_u32(&res->blob, 0);
		vol_export_unref(e);
	}
	xdr_put_u32(&res->blob, 0);
}

static void mnt_enc_void(struct ut_buf *b, void *r, struct nfs_call *call)
{
	(void)b;
	(void)r;
	(void)call;
}

static void mnt_enc_mnt(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct mnt_mnt_res *res = r;

	(void)call;
	xdr_put_u32(b, res->status);
	if (res->status == MNT3_OK) {
		xdr_put_opaque(b, res->fh.data, res->fh.len);
		xdr_put_u32(b, 2);        /* auth flavors */
		xdr_put_u32(b, RPC_AUTH_SYS);
		xdr_put_u32(b, RPC_AUTH_NONE);
	}
}

static void mnt_enc_blob(struct ut_buf *b, void *r, struct nfs_call *call)
{
	struct mnt_blob_res *res = r;

	(void)call;
	if (ut_buf_len(&res->blob) == 0 || ut_buf_err(&res->blob) != AQ_OK) {
		xdr_put_u32(b, 0); /* empty list */
		return;
	}
	xdr_put_fixed(b, ut_buf_bytes(&res->blob), ut_buf_len(&res->blob));
}

static void mnt_free_blob(void *r)
{
	struct mnt_blob_res *res = r;

	ut_buf_cleanup(&res->blob);
}

struct mnt_none { char unused; };

static const struct nfs_proc mnt_procs[] = {
	{"NULL", mnt_dec_void, mnt_null, mnt_enc_void, NULL, 0,
	 sizeof(struct mnt_none), sizeof(struct mnt_none)},
	{"MNT", mnt_dec_path, mnt_mnt, mnt_enc_mnt, NULL, 0,
	 sizeof(struct mnt_path_args), sizeof(struct mnt_mnt_res)},
	{"DUMP", mnt_dec_void, mnt_dump, mnt_enc_blob, mnt_free_blob, 0,
	 sizeof(struct mnt_none), sizeof(struct mnt_blob_res)},
	{"UMNT", mnt_dec_path, mnt_umnt, mnt_enc_void, NULL, 0,
	 sizeof(struct mnt_path_args), sizeof(struct mnt_none)},
	{"UMNTALL", mnt_dec_void, mnt_umntall, mnt_enc_void, NULL, 0,
	 sizeof(struct mnt_none), sizeof(struct mnt_none)},
	{"EXPORT", mnt_dec_void, mnt_export, mnt_enc_blob, mnt_free_blob, 0,
	 sizeof(struct mnt_none), sizeof(struct mnt_blob_res)},
};

const struct nfs_prog mnt_prog = { .prog = MNT_PROG, .vers = MNT_VERS, .procs = mnt_procs,
				   .nprocs = (uint32_t)(sizeof(mnt_procs) / sizeof(mnt_procs[0])) };

/* ---- PORTMAP v2 (RFC 1833): GETPORT and DUMP answer our own port for the programs served ---- */

int pmap_dec_mapping(struct xdr_cur *c, void *a)
{
	struct pmap_mapping *m = a;

	m->prog = xdr_u32(c);
	m->vers = xdr_u32(c);
	m->prot = xdr_u32(c);
	m->port = xdr_u32(c);
	return c->err ? -EBADMSG : 0;
}

/* GETPORT: our port for every (program, version) served on it over TCP
 * (NFS 3 and 4, MOUNT 3, PORTMAP 2, NLM 4 and NSM 1 when registered). */
static void pmap_getport(struct nfs_call *call, void *a, void *r)
{
	struct pmap_mapping *m = a;
	uint32_t *port = r;

	*port = m->prot == 6 && nfs_srv_serves(call->srv, m->prog, m->vers) ? call->port : 0;
}

static void pmap_enc_port(struct ut_buf *b, void *r, struct nfs_call *call)
{
	(void)call;
	xdr_put_u32(b, *(uint32_t *)r);
}

static void pmap_enc_dump(struct ut_buf *b, void *r, struct nfs_call *call)
{
	uint32_t prog, vers;

	(void)r;
	for (size_t i = 0; nfs_srv_prog_at(call->srv, i, &prog, &vers); i++) {
		xdr_put_u32(b, 1);
		xdr_put_u32(b, prog);
		xdr_put_u32(b, vers);
		xdr_put_u32(b, 6);
		xdr_put_u32(b, call->port);
	}
	xdr_put_u32(b, 0);
}

static const struct nfs_proc pmap_procs[] = {
	{"NULL", mnt_dec_void, mnt_null, mnt_enc_void, NULL, 0,
	 sizeof(struct mnt_none), sizeof(struct mnt_none)},
	{"SET", NULL, NULL, NULL, NULL, 0, 0, 0},
	{"UNSET", NULL, NULL, NULL, NULL, 0, 0, 0},
	{"GETPORT", pmap_dec_mapping, pmap_getport, pmap_enc_port, NULL, 0,
	 sizeof(struct pmap_mapping), sizeof(uint32_t)},
	{"DUMP", mnt_dec_void, mnt_null, pmap_enc_dump, NULL, 0,
	 sizeof(struct mnt_none), sizeof(struct mnt_none)},
};

const struct nfs_prog pmap_prog = { .prog = PMAP_PROG, .vers = PMAP_VERS, .procs = pmap_procs,
				    .nprocs = (uint32_t)(sizeof(pmap_procs) / sizeof(pmap_procs[0])) };
