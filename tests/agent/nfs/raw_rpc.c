/* raw_rpc: the libnfs raw-RPC client of the live NFS tests; see raw_rpc.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/agent/nfs/raw_rpc.h"

#include <poll.h>
#include <string.h>

struct rpc_context *raw_rpc;
struct raw_res raw_R; /* scratch result; large, so static storage */
int raw_failures, raw_checks;
int raw_timeout_ms = 10000;

void raw_wait_for(struct raw_res *r)
{
	while (!r->done) {
		struct pollfd p = {.fd = rpc_get_fd(raw_rpc), .events = (short)rpc_which_events(raw_rpc)};

		if (poll(&p, 1, raw_timeout_ms) <= 0) {
			fprintf(stderr, "timeout: no reply within %d ms\n", raw_timeout_ms);
			exit(1);
		}
		if (rpc_service(raw_rpc, p.revents) < 0) {
			fprintf(stderr, "rpc_service: %s\n", rpc_get_error(raw_rpc));
			exit(1);
		}
	}
}

static void raw_keep_fh(struct raw_fh *dst, const nfs_fh3 *src)
{
	dst->len = src->data.data_len <= 64 ? src->data.data_len : 64;
	memcpy(dst->data, src->data.data_val, dst->len);
}

static void raw_keep_attr(struct raw_res *r, const post_op_attr *a)
{
	r->has_attr = a->attributes_follow;
	if (a->attributes_follow)
		r->attr = a->post_op_attr_u.attributes;
}

nfs_fh3 raw_wire(const struct raw_fh *f)
{
	nfs_fh3 w;

	w.data.data_len = f->len;
	w.data.data_val = (char *)(uintptr_t)f->data;
	return w;
}

void raw_cb(struct rpc_context *c, int status, void *data, void *priv)
{
	struct raw_pending *p = priv;
	struct raw_res *r = p->r;

	(void)c;
	r->done = true;
	r->rpc_status = status;
	if (status != RPC_STATUS_SUCCESS || !data)
		return;
	switch (p->k) {
	case K_GETPORT:
		r->u32 = *(uint32_t *)data;
		return;
	case K_MNT: {
		mountres3 *m = data;

		r->st = m->fhs_status;
		if (m->fhs_status == MNT3_OK) {
			r->fh.len = m->mountres3_u.mountinfo.fhandle.fhandle3_len;
			memcpy(r->fh.data, m->mountres3_u.mountinfo.fhandle.fhandle3_val, r->fh.len);
		}
		return;
	}
	case K_EXPORT: {
		exports e = *(exports *)data;

		for (; e && r->nent < RAW_MAXE; e = e->ex_next)
			snprintf(r->names[r->nent++], 64, "%s", e->ex_dir);
		return;
	}
	case K_DUMP: {
		mountlist m = *(mountlist *)data;

		for (; m && r->nent < RAW_MAXE; m = m->ml_next)
			snprintf(r->names[r->nent++], 64, "%s", m->ml_directory);
		return;
	}
	default:
		break;
	}
	r->st = *(uint32_t *)data;
	switch (p->k) {
	case K_GETATTR: {
		GETATTR3res *x = data;

		if (x->status == NFS3_OK) {
			r->has_attr = true;
			r->attr = x->GETATTR3res_u.resok.obj_attributes;
		}
		break;
	}
	case K_SETATTR: {
		SETATTR3res *x = data;

		raw_keep_attr(r, &x->SETATTR3res_u.resok.obj_wcc.after);
		break;
	}
	case K_LOOKUP: {
		LOOKUP3res *x = data;

		if (x->status == NFS3_OK) {
			raw_keep_fh(&r->fh, &x->LOOKUP3res_u.resok.object);
			raw_keep_attr(r, &x->LOOKUP3res_u.resok.obj_attributes);
		}
		break;
	}
	case K_ACCESS: {
		ACCESS3res *x = data;

		if (x->status == NFS3_OK)
			r->u32 = x->ACCESS3res_u.resok.access;
		break;
	}
	case K_READLINK: {
		READLINK3res *x = data;

		if (x->status == NFS3_OK)
			snprintf(r->data, sizeof(r->data), "%s", x->READLINK3res_u.resok.data);
		break;
	}
	case K_READ: {
		READ3res *x = data;

		if (x->status == NFS3_OK) {
			r->count = x->READ3res_u.resok.count;
			r->eof = x->READ3res_u.resok.eof;
			r->dlen = x->READ3res_u.resok.data.data_len;
			memcpy(r->data, x->READ3res_u.resok.data.data_val,
			       r->dlen < sizeof(r->data) ? r->dlen : sizeof(r->data));
		}
		break;
	}
	case K_WRITE: {
		WRITE3res *x = data;

		if (x->status == NFS3_OK) {
			r->count = x->WRITE3res_u.resok.count;
			r->u32 = x->WRITE3res_u.resok.committed;
			memcpy(r->verf, x->WRITE3res_u.resok.verf, 8);
		}
		break;
	}
	case K_COMMIT: {
		COMMIT3res *x = data;

		if (x->status == NFS3_OK)
			memcpy(r->verf, x->COMMIT3res_u.resok.verf, 8);
		break;
	}
	case K_CREATE: { /* CREATE, MKDIR, SYMLINK, MKNOD share the layout */
		CREATE3res *x = data;

		if (x->status == NFS3_OK && x->CREATE3res_u.resok.obj.handle_follows) {
			raw_keep_fh(&r->fh, &x->CREATE3res_u.resok.obj.post_op_fh3_u.handle);
			raw_keep_attr(r, &x->CREATE3res_u.resok.obj_attributes);
		}
		break;
	}
	case K_READDIR: {
		READDIR3res *x = data;
		entry3 *e;

		if (x->status != NFS3_OK)
			break;
		memcpy(r->verf, x->READDIR3res_u.resok.cookieverf, 8);
		r->eof = x->READDIR3res_u.resok.reply.eof;
		for (e = x->READDIR3res_u.resok.reply.entries; e && r->nent < RAW_MAXE; e = e->nextentry) {
			snprintf(r->names[r->nent], 64, "%s", e->name);
			r->cookies[r->nent++] = e->cookie;
			r->last_cookie = e->cookie;
		}
		break;
	}
	case K_READDIRPLUS: {
		READDIRPLUS3res *x = data;
		entryplus3 *e;

		if (x->status != NFS3_OK)
			break;
		memcpy(r->verf, x->READDIRPLUS3res_u.resok.cookieverf, 8);
		r->eof = x->READDIRPLUS3res_u.resok.reply.eof;
		for (e = x->READDIRPLUS3res_u.resok.reply.entries; e && r->nent < RAW_MAXE; e = e->nextentry) {
			snprintf(r->names[r->nent], 64, "%s", e->name);
			r->ent_fh[r->nent] = e->name_handle.handle_follows && e->name_attributes.attributes_follow;
			r->cookies[r->nent++] = e->cookie;
			r->last_cookie = e->cookie;
		}
		break;
	}
	case K_FSINFO: {
		FSINFO3res *x = data;

		if (x->status == NFS3_OK)
			r->maxfilesize = x->FSINFO3res_u.resok.maxfilesize;
		break;
	}
	case K_FSSTAT: {
		FSSTAT3res *x = data;

		if (x->status == NFS3_OK) {
			r->tbytes = x->FSSTAT3res_u.resok.tbytes;
			r->fbytes = x->FSSTAT3res_u.resok.fbytes;
			r->abytes = x->FSSTAT3res_u.resok.abytes;
			r->tfiles = x->FSSTAT3res_u.resok.tfiles;
			r->ffiles = x->FSSTAT3res_u.resok.ffiles;
			r->afiles = x->FSSTAT3res_u.resok.afiles;
		}
		break;
	}
	default:
		break;
	}
}

/* ---- wrappers ---- */

uint32_t raw_mnt(const char *path, struct raw_fh *out)
{
	RAW_RUN(K_MNT, &raw_R, rpc_mount3_mnt_async(raw_rpc, raw_cb, (char *)(uintptr_t)path, RAW_PD));
	if (out)
		*out = raw_R.fh;
	return raw_R.st;
}

uint32_t raw_getattr(const struct raw_fh *f, fattr3 *attr)
{
	GETATTR3args a = {.object = raw_wire(f)};

	RAW_RUN(K_GETATTR, &raw_R, rpc_nfs3_getattr_async(raw_rpc, raw_cb, &a, RAW_PD));
	if (attr)
		*attr = raw_R.attr;
	return raw_R.st;
}

uint32_t raw_lookup(const struct raw_fh *dir, const char *name, struct raw_fh *out)
{
	LOOKUP3args a = {.what = {.dir = raw_wire(dir), .name = (char *)(uintptr_t)name}};

	RAW_RUN(K_LOOKUP, &raw_R, rpc_nfs3_lookup_async(raw_rpc, raw_cb, &a, RAW_PD));
	if (out && raw_R.st == NFS3_OK)
		*out = raw_R.fh;
	return raw_R.st;
}

uint32_t raw_create(const struct raw_fh *dir, const char *name, createmode3 mode, const char *verf,
		       struct raw_fh *out)
{
	CREATE3args a;

	memset(&a, 0, sizeof(a));
	a.where.dir = raw_wire(dir);
	a.where.name = (char *)(uintptr_t)name;
	a.how.mode = mode;
	if (mode == EXCLUSIVE) {
		memcpy(a.how.createhow3_u.verf, verf, 8);
	} else {
		a.how.createhow3_u.obj_attributes.mode.set_it = 1;
		a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
	}
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_create_async(raw_rpc, raw_cb, &a, RAW_PD));
	if (out && raw_R.st == NFS3_OK)
		*out = raw_R.fh;
	return raw_R.st;
}

uint32_t raw_mkdir3(const struct raw_fh *dir, const char *name, struct raw_fh *out)
{
	MKDIR3args a;

	memset(&a, 0, sizeof(a));
	a.where.dir = raw_wire(dir);
	a.where.name = (char *)(uintptr_t)name;
	a.attributes.mode.set_it = 1;
	a.attributes.mode.set_mode3_u.mode = 0755;
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_mkdir_async(raw_rpc, raw_cb, &a, RAW_PD));
	if (out && raw_R.st == NFS3_OK)
		*out = raw_R.fh;
	return raw_R.st;
}

uint32_t raw_write3(const struct raw_fh *f, uint64_t off, const void *data, uint32_t len,
		       stable_how how)
{
	WRITE3args a;

	memset(&a, 0, sizeof(a));
	a.file = raw_wire(f);
	a.offset = off;
	a.count = len;
	a.stable = how;
	a.data.data_len = len;
	a.data.data_val = (char *)(uintptr_t)data;
	RAW_RUN(K_WRITE, &raw_R, rpc_nfs3_write_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_read3(const struct raw_fh *f, uint64_t off, uint32_t count)
{
	READ3args a = {.file = raw_wire(f), .offset = off, .count = count};

	RAW_RUN(K_READ, &raw_R, rpc_nfs3_read_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_setsize(const struct raw_fh *f, uint64_t size)
{
	SETATTR3args a;

	memset(&a, 0, sizeof(a));
	a.object = raw_wire(f);
	a.new_attributes.size.set_it = 1;
	a.new_attributes.size.set_size3_u.size = size;
	RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_remove3(const struct raw_fh *dir, const char *name)
{
	REMOVE3args a = {.object = {.dir = raw_wire(dir), .name = (char *)(uintptr_t)name}};

	RAW_RUN(K_STATUS, &raw_R, rpc_nfs3_remove_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_rmdir3(const struct raw_fh *dir, const char *name)
{
	RMDIR3args a = {.object = {.dir = raw_wire(dir), .name = (char *)(uintptr_t)name}};

	RAW_RUN(K_STATUS, &raw_R, rpc_nfs3_rmdir_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_rename3(const struct raw_fh *fd, const char *fn, const struct raw_fh *td, const char *tn)
{
	RENAME3args a = {.from = {.dir = raw_wire(fd), .name = (char *)(uintptr_t)fn},
			 .to = {.dir = raw_wire(td), .name = (char *)(uintptr_t)tn}};

	RAW_RUN(K_STATUS, &raw_R, rpc_nfs3_rename_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_link3(const struct raw_fh *f, const struct raw_fh *dir, const char *name)
{
	LINK3args a = {.file = raw_wire(f), .link = {.dir = raw_wire(dir), .name = (char *)(uintptr_t)name}};

	RAW_RUN(K_STATUS, &raw_R, rpc_nfs3_link_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_readdir3(const struct raw_fh *dir, uint64_t cookie, const char *verf, uint32_t count)
{
	READDIR3args a;

	memset(&a, 0, sizeof(a));
	a.dir = raw_wire(dir);
	a.cookie = cookie;
	if (verf)
		memcpy(a.cookieverf, verf, 8);
	a.count = count;
	RAW_RUN(K_READDIR, &raw_R, rpc_nfs3_readdir_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_readdirplus3(const struct raw_fh *dir, uint64_t cookie, const char *verf,
			     uint32_t dircount, uint32_t maxcount)
{
	READDIRPLUS3args a;

	memset(&a, 0, sizeof(a));
	a.dir = raw_wire(dir);
	a.cookie = cookie;
	if (verf)
		memcpy(a.cookieverf, verf, 8);
	a.dircount = dircount;
	a.maxcount = maxcount;
	RAW_RUN(K_READDIRPLUS, &raw_R, rpc_nfs3_readdirplus_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

uint32_t raw_fsstat3(const struct raw_fh *f)
{
	FSSTAT3args a = {.fsroot = raw_wire(f)};

	RAW_RUN(K_FSSTAT, &raw_R, rpc_nfs3_fsstat_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

bool raw_has_name(const struct raw_res *r, const char *n)
{
	size_t i;

	for (i = 0; i < r->nent; i++)
		if (!strcmp(r->names[i], n))
			return true;
	return false;
}

/* ---- the test ---- */

static void connect_cb(struct rpc_context *c, int status, void *data, void *priv)
{
	(void)c;
	(void)data;
	*(int *)priv = status == RPC_STATUS_SUCCESS ? 1 : -1;
}

struct rpc_context *raw_connect(int port, uint32_t uid, uint32_t gid, uint32_t ngids, const uint32_t *gids)
{
	struct rpc_context *c = rpc_init_context();
	int st = 0;

	rpc_set_auth(c, libnfs_authunix_create("aqtest", uid, gid, ngids, (uint32_t *)(uintptr_t)gids));
	if (rpc_connect_async(c, "127.0.0.1", port, connect_cb, &st) != 0)
		exit(1);
	while (st == 0) {
		struct pollfd p = {.fd = rpc_get_fd(c), .events = (short)rpc_which_events(c)};

		if (poll(&p, 1, raw_timeout_ms) <= 0 || rpc_service(c, p.revents) < 0)
			exit(1);
	}
	if (st < 0) {
		fprintf(stderr, "connect failed\n");
		exit(1);
	}
	return c;
}

void raw_connect_as(int port, uint32_t uid, uint32_t gid)
{
	if (raw_rpc)
		rpc_destroy_context(raw_rpc);
	raw_rpc = raw_connect(port, uid, gid, 0, NULL);
}
