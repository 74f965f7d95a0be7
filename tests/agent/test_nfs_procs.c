/* test_nfs_procs: every NFSv3, MOUNT v3 and PORTMAP GETPORT procedure of a
 * live nfs_serve, through libnfs's raw RPC API (one connection carries all
 * three programs, as the server serves them on one port), including error
 * cases: wrong types, missing names, stale/forged/cross-volume handles, long
 * names, GUARDED/EXCLUSIVE create, read-only exports, root squash, capacity,
 * and retransmissions answered from the duplicate-request cache. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/time.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
#include <nfsc/libnfs-raw-portmap.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/agent/nfs_live.h"

static int failures, checks;

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		checks++;                                                 \
		if (!(cond)) {                                            \
			failures++;                                       \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
		}                                                         \
	} while (0)

#define MAXE 256

struct fh {
	uint32_t len;
	char data[64];
};

/* What a callback keeps of a reply (reply memory dies with the callback). */
struct res {
	bool done;
	int rpc_status;
	uint32_t st;
	struct fh fh;
	bool has_attr;
	fattr3 attr;
	uint32_t u32, count, eof;
	uint64_t tbytes, fbytes;
	char verf[8];
	char data[4096];
	uint32_t dlen;
	size_t nent;
	char names[MAXE][64];
	uint64_t cookies[MAXE];
	bool ent_fh[MAXE];
	uint64_t last_cookie;
};

static struct rpc_context *rpc;

static void wait_for(struct res *r)
{
	while (!r->done) {
		struct pollfd p = {.fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc)};

		if (poll(&p, 1, 10000) <= 0) {
			fprintf(stderr, "timeout waiting for a reply\n");
			exit(1);
		}
		if (rpc_service(rpc, p.revents) < 0) {
			fprintf(stderr, "rpc_service: %s\n", rpc_get_error(rpc));
			exit(1);
		}
	}
}

static void keep_fh(struct fh *dst, const nfs_fh3 *src)
{
	dst->len = src->data.data_len <= 64 ? src->data.data_len : 64;
	memcpy(dst->data, src->data.data_val, dst->len);
}

static void keep_attr(struct res *r, const post_op_attr *a)
{
	r->has_attr = a->attributes_follow;
	if (a->attributes_follow)
		r->attr = a->post_op_attr_u.attributes;
}

static nfs_fh3 wire(const struct fh *f)
{
	nfs_fh3 w;

	w.data.data_len = f->len;
	w.data.data_val = (char *)(uintptr_t)f->data;
	return w;
}

/* One callback for everything: the proc decides how to read data. */
enum kind { K_STATUS, K_MNT, K_GETPORT, K_GETATTR, K_LOOKUP, K_ACCESS, K_READLINK, K_READ,
	    K_WRITE, K_CREATE, K_READDIR, K_READDIRPLUS, K_FSSTAT, K_COMMIT, K_EXPORT, K_DUMP,
	    K_SETATTR };

struct pending {
	enum kind k;
	struct res *r;
};

static void cb(struct rpc_context *c, int status, void *data, void *priv)
{
	struct pending *p = priv;
	struct res *r = p->r;

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

		for (; e && r->nent < MAXE; e = e->ex_next)
			snprintf(r->names[r->nent++], 64, "%s", e->ex_dir);
		return;
	}
	case K_DUMP: {
		mountlist m = *(mountlist *)data;

		for (; m && r->nent < MAXE; m = m->ml_next)
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

		keep_attr(r, &x->SETATTR3res_u.resok.obj_wcc.after);
		break;
	}
	case K_LOOKUP: {
		LOOKUP3res *x = data;

		if (x->status == NFS3_OK) {
			keep_fh(&r->fh, &x->LOOKUP3res_u.resok.object);
			keep_attr(r, &x->LOOKUP3res_u.resok.obj_attributes);
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
			keep_fh(&r->fh, &x->CREATE3res_u.resok.obj.post_op_fh3_u.handle);
			keep_attr(r, &x->CREATE3res_u.resok.obj_attributes);
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
		for (e = x->READDIR3res_u.resok.reply.entries; e && r->nent < MAXE; e = e->nextentry) {
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
		for (e = x->READDIRPLUS3res_u.resok.reply.entries; e && r->nent < MAXE; e = e->nextentry) {
			snprintf(r->names[r->nent], 64, "%s", e->name);
			r->ent_fh[r->nent] = e->name_handle.handle_follows && e->name_attributes.attributes_follow;
			r->cookies[r->nent++] = e->cookie;
			r->last_cookie = e->cookie;
		}
		break;
	}
	case K_FSSTAT: {
		FSSTAT3res *x = data;

		if (x->status == NFS3_OK) {
			r->tbytes = x->FSSTAT3res_u.resok.tbytes;
			r->fbytes = x->FSSTAT3res_u.resok.fbytes;
		}
		break;
	}
	default:
		break;
	}
}

#define RUN(kind, r, call)                                                \
	do {                                                              \
		struct pending pd_ = {kind, r};                           \
		memset(r, 0, sizeof(*r));                                 \
		if ((call) != 0) {                                        \
			fprintf(stderr, "queueing failed at line %d\n", __LINE__); \
			exit(1);                                          \
		}                                                         \
		wait_for(r);                                              \
	} while (0)
#define PD (&pd_)

static struct res R; /* scratch result; large, so static */

/* ---- wrappers ---- */

static uint32_t mnt(const char *path, struct fh *out)
{
	RUN(K_MNT, &R, rpc_mount3_mnt_async(rpc, cb, (char *)(uintptr_t)path, PD));
	if (out)
		*out = R.fh;
	return R.st;
}

static uint32_t getattr(const struct fh *f, fattr3 *attr)
{
	GETATTR3args a = {.object = wire(f)};

	RUN(K_GETATTR, &R, rpc_nfs3_getattr_async(rpc, cb, &a, PD));
	if (attr)
		*attr = R.attr;
	return R.st;
}

static uint32_t lookup(const struct fh *dir, const char *name, struct fh *out)
{
	LOOKUP3args a = {.what = {.dir = wire(dir), .name = (char *)(uintptr_t)name}};

	RUN(K_LOOKUP, &R, rpc_nfs3_lookup_async(rpc, cb, &a, PD));
	if (out && R.st == NFS3_OK)
		*out = R.fh;
	return R.st;
}

static uint32_t create(const struct fh *dir, const char *name, createmode3 mode, const char *verf,
		       struct fh *out)
{
	CREATE3args a;

	memset(&a, 0, sizeof(a));
	a.where.dir = wire(dir);
	a.where.name = (char *)(uintptr_t)name;
	a.how.mode = mode;
	if (mode == EXCLUSIVE) {
		memcpy(a.how.createhow3_u.verf, verf, 8);
	} else {
		a.how.createhow3_u.obj_attributes.mode.set_it = 1;
		a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
	}
	RUN(K_CREATE, &R, rpc_nfs3_create_async(rpc, cb, &a, PD));
	if (out && R.st == NFS3_OK)
		*out = R.fh;
	return R.st;
}

static uint32_t mkdir3(const struct fh *dir, const char *name, struct fh *out)
{
	MKDIR3args a;

	memset(&a, 0, sizeof(a));
	a.where.dir = wire(dir);
	a.where.name = (char *)(uintptr_t)name;
	a.attributes.mode.set_it = 1;
	a.attributes.mode.set_mode3_u.mode = 0755;
	RUN(K_CREATE, &R, rpc_nfs3_mkdir_async(rpc, cb, &a, PD));
	if (out && R.st == NFS3_OK)
		*out = R.fh;
	return R.st;
}

static uint32_t write3(const struct fh *f, uint64_t off, const void *data, uint32_t len,
		       stable_how how)
{
	WRITE3args a;

	memset(&a, 0, sizeof(a));
	a.file = wire(f);
	a.offset = off;
	a.count = len;
	a.stable = how;
	a.data.data_len = len;
	a.data.data_val = (char *)(uintptr_t)data;
	RUN(K_WRITE, &R, rpc_nfs3_write_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t read3(const struct fh *f, uint64_t off, uint32_t count)
{
	READ3args a = {.file = wire(f), .offset = off, .count = count};

	RUN(K_READ, &R, rpc_nfs3_read_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t setsize(const struct fh *f, uint64_t size)
{
	SETATTR3args a;

	memset(&a, 0, sizeof(a));
	a.object = wire(f);
	a.new_attributes.size.set_it = 1;
	a.new_attributes.size.set_size3_u.size = size;
	RUN(K_SETATTR, &R, rpc_nfs3_setattr_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t remove3(const struct fh *dir, const char *name)
{
	REMOVE3args a = {.object = {.dir = wire(dir), .name = (char *)(uintptr_t)name}};

	RUN(K_STATUS, &R, rpc_nfs3_remove_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t rmdir3(const struct fh *dir, const char *name)
{
	RMDIR3args a = {.object = {.dir = wire(dir), .name = (char *)(uintptr_t)name}};

	RUN(K_STATUS, &R, rpc_nfs3_rmdir_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t rename3(const struct fh *fd, const char *fn, const struct fh *td, const char *tn)
{
	RENAME3args a = {.from = {.dir = wire(fd), .name = (char *)(uintptr_t)fn},
			 .to = {.dir = wire(td), .name = (char *)(uintptr_t)tn}};

	RUN(K_STATUS, &R, rpc_nfs3_rename_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t link3(const struct fh *f, const struct fh *dir, const char *name)
{
	LINK3args a = {.file = wire(f), .link = {.dir = wire(dir), .name = (char *)(uintptr_t)name}};

	RUN(K_STATUS, &R, rpc_nfs3_link_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t readdir3(const struct fh *dir, uint64_t cookie, const char *verf, uint32_t count)
{
	READDIR3args a;

	memset(&a, 0, sizeof(a));
	a.dir = wire(dir);
	a.cookie = cookie;
	if (verf)
		memcpy(a.cookieverf, verf, 8);
	a.count = count;
	RUN(K_READDIR, &R, rpc_nfs3_readdir_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t readdirplus3(const struct fh *dir, uint64_t cookie, const char *verf,
			     uint32_t dircount, uint32_t maxcount)
{
	READDIRPLUS3args a;

	memset(&a, 0, sizeof(a));
	a.dir = wire(dir);
	a.cookie = cookie;
	if (verf)
		memcpy(a.cookieverf, verf, 8);
	a.dircount = dircount;
	a.maxcount = maxcount;
	RUN(K_READDIRPLUS, &R, rpc_nfs3_readdirplus_async(rpc, cb, &a, PD));
	return R.st;
}

static uint32_t fsstat3(const struct fh *f)
{
	FSSTAT3args a = {.fsroot = wire(f)};

	RUN(K_FSSTAT, &R, rpc_nfs3_fsstat_async(rpc, cb, &a, PD));
	return R.st;
}

static bool has_name(const struct res *r, const char *n)
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

static void connect_as(int port, uint32_t uid, uint32_t gid)
{
	int st = 0;

	if (rpc)
		rpc_destroy_context(rpc);
	rpc = rpc_init_context();
	rpc_set_auth(rpc, libnfs_authunix_create("aqtest", uid, gid, 0, NULL));
	if (rpc_connect_async(rpc, "127.0.0.1", port, connect_cb, &st) != 0)
		exit(1);
	while (st == 0) {
		struct pollfd p = {.fd = rpc_get_fd(rpc), .events = (short)rpc_which_events(rpc)};

		if (poll(&p, 1, 10000) <= 0 || rpc_service(rpc, p.revents) < 0)
			exit(1);
	}
	if (st < 0) {
		fprintf(stderr, "connect failed\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const char *const exports[] = {
		"/a=%D/a", "/b=%D/b", "/ro=%D/ro,ro", "/sq=%D/sq,squash=root,anonuid=4242,anongid=4243",
		"/cap=%D/cap,capacity=1073741824", "/deny=%D/deny,clients=10.9.9.9,192.168.0.0/16", NULL};
	struct nfs_live live;
	struct fh ra, rb, rro, rsq, rcap, f1, d1, s1, x, y, fbig;
	fattr3 at;
	char longname[300], path[512], verf[8] = "verf0001", verf2[8] = "verf0002", wv[8];
	int rc, i;
	FILE *f;

	(void)argc;
	if ((rc = nfs_live_start(&live, argv[0], exports)) != 0) {
		fprintf(stderr, "cannot start nfs_serve: %d\n", rc);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ro/existing", live.dir);
	if ((f = fopen(path, "w")) != NULL) {
		fputs("read only data\n", f);
		fclose(f);
	}
	connect_as(live.port, 0, 0);

	/* PORTMAP GETPORT on the same port */
	RUN(K_GETPORT, &R, rpc_pmap2_getport_async(rpc, 100003, 3, 6, cb, PD));
	CHECK(R.u32 == (uint32_t)live.port, "GETPORT nfs %u", R.u32);
	RUN(K_GETPORT, &R, rpc_pmap2_getport_async(rpc, 100005, 3, 6, cb, PD));
	CHECK(R.u32 == (uint32_t)live.port, "GETPORT mount %u", R.u32);
	RUN(K_GETPORT, &R, rpc_pmap2_getport_async(rpc, 100021, 4, 6, cb, PD));
	CHECK(R.u32 == 0, "GETPORT nlm must be 0, got %u", R.u32);

	/* MOUNT */
	RUN(K_STATUS, &R, rpc_mount3_null_async(rpc, cb, PD));
	CHECK(R.rpc_status == RPC_STATUS_SUCCESS, "MOUNT NULL");
	CHECK(mnt("/a", &ra) == MNT3_OK, "MNT /a");
	CHECK(mnt("/b", &rb) == MNT3_OK, "MNT /b");
	CHECK(mnt("/ro", &rro) == MNT3_OK, "MNT /ro");
	CHECK(mnt("/sq", &rsq) == MNT3_OK, "MNT /sq");
	CHECK(mnt("/cap", &rcap) == MNT3_OK, "MNT /cap");
	CHECK(mnt("/nope", NULL) == MNT3ERR_NOENT, "MNT /nope -> %u", R.st);
	CHECK(mnt("/deny", NULL) == MNT3ERR_ACCES, "MNT /deny -> %u", R.st);
	RUN(K_EXPORT, &R, rpc_mount3_export_async(rpc, cb, PD));
	CHECK(R.nent == 6 && has_name(&R, "/a") && has_name(&R, "/deny"), "EXPORT (%zu)", R.nent);
	RUN(K_DUMP, &R, rpc_mount3_dump_async(rpc, cb, PD));
	CHECK(has_name(&R, "/a") && has_name(&R, "/cap"), "DUMP lists mounts (%zu)", R.nent);
	RUN(K_STATUS, &R, rpc_mount3_umnt_async(rpc, cb, (char *)(uintptr_t)"/b", PD));
	RUN(K_DUMP, &R, rpc_mount3_dump_async(rpc, cb, PD));
	CHECK(!has_name(&R, "/b") && has_name(&R, "/a"), "UMNT removes /b");
	RUN(K_STATUS, &R, rpc_mount3_umntall_async(rpc, cb, PD));
	RUN(K_DUMP, &R, rpc_mount3_dump_async(rpc, cb, PD));
	CHECK(R.nent == 0, "UMNTALL empties the list (%zu)", R.nent);

	/* NULL, GETATTR, FSINFO, PATHCONF, FSSTAT */
	RUN(K_STATUS, &R, rpc_nfs3_null_async(rpc, cb, PD));
	CHECK(R.rpc_status == RPC_STATUS_SUCCESS, "NFS NULL");
	CHECK(getattr(&ra, &at) == NFS3_OK && at.type == NF3DIR, "GETATTR root");
	{
		FSINFO3args a = {.fsroot = wire(&ra)};
		PATHCONF3args p = {.object = wire(&ra)};

		RUN(K_STATUS, &R, rpc_nfs3_fsinfo_async(rpc, cb, &a, PD));
		CHECK(R.st == NFS3_OK, "FSINFO");
		RUN(K_STATUS, &R, rpc_nfs3_pathconf_async(rpc, cb, &p, PD));
		CHECK(R.st == NFS3_OK, "PATHCONF");
	}
	CHECK(fsstat3(&rcap) == NFS3_OK && R.tbytes == 1073741824ull && R.fbytes == 1073741824ull,
	      "FSSTAT of the 1 GiB export: %llu/%llu", (unsigned long long)R.tbytes,
	      (unsigned long long)R.fbytes);

	/* CREATE, WRITE, READ, COMMIT */
	CHECK(create(&ra, "f1", UNCHECKED, NULL, &f1) == NFS3_OK, "CREATE f1");
	CHECK(write3(&f1, 0, "hello world", 11, FILE_SYNC) == NFS3_OK && R.count == 11 && R.u32 == FILE_SYNC,
	      "WRITE FILE_SYNC");
	memcpy(wv, R.verf, 8);
	CHECK(write3(&f1, 11, "!", 1, UNSTABLE) == NFS3_OK && !memcmp(R.verf, wv, 8), "WRITE UNSTABLE verf");
	CHECK(write3(&f1, 12, "?", 1, DATA_SYNC) == NFS3_OK, "WRITE DATA_SYNC");
	{
		COMMIT3args c = {.file = wire(&f1), .offset = 0, .count = 0};

		RUN(K_COMMIT, &R, rpc_nfs3_commit_async(rpc, cb, &c, PD));
		CHECK(R.st == NFS3_OK && !memcmp(R.verf, wv, 8), "COMMIT verifier matches WRITE's");
	}
	CHECK(read3(&f1, 0, 100) == NFS3_OK && R.count == 13 && R.eof && !memcmp(R.data, "hello world!?", 13),
	      "READ back (%u)", R.count);
	CHECK(read3(&f1, 6, 5) == NFS3_OK && R.count == 5 && !R.eof && !memcmp(R.data, "world", 5), "READ middle");
	CHECK(read3(&ra, 0, 10) == NFS3ERR_ISDIR, "READ a directory -> %u", R.st);

	/* SETATTR */
	{
		SETATTR3args s;

		memset(&s, 0, sizeof(s));
		s.object = wire(&f1);
		s.new_attributes.mode.set_it = 1;
		s.new_attributes.mode.set_mode3_u.mode = 0600;
		RUN(K_SETATTR, &R, rpc_nfs3_setattr_async(rpc, cb, &s, PD));
		CHECK(R.st == NFS3_OK && (R.attr.mode & 07777) == 0600, "SETATTR mode");
		s.guard.check = 1;
		s.guard.sattrguard3_u.obj_ctime.seconds = 1;
		RUN(K_SETATTR, &R, rpc_nfs3_setattr_async(rpc, cb, &s, PD));
		CHECK(R.st == NFS3ERR_NOT_SYNC, "SETATTR guard mismatch -> %u", R.st);
	}
	CHECK(setsize(&f1, 5) == NFS3_OK && getattr(&f1, &at) == NFS3_OK && at.size == 5, "SETATTR size");

	{
		/* the mode asked for, not filtered by the server's umask */
		CREATE3args a;

		memset(&a, 0, sizeof(a));
		a.where.dir = wire(&ra);
		a.where.name = (char *)(uintptr_t)"m666";
		a.how.mode = GUARDED;
		a.how.createhow3_u.obj_attributes.mode.set_it = 1;
		a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0666;
		RUN(K_CREATE, &R, rpc_nfs3_create_async(rpc, cb, &a, PD));
		CHECK(R.st == NFS3_OK && (R.attr.mode & 07777) == 0666, "CREATE mode 0666 -> %o", R.attr.mode);
	}

	/* LOOKUP and its errors */
	CHECK(lookup(&ra, "f1", &x) == NFS3_OK && R.attr.type == NF3REG, "LOOKUP f1");
	CHECK(lookup(&f1, "x", NULL) == NFS3ERR_NOTDIR, "LOOKUP in a file -> %u", R.st);
	CHECK(lookup(&ra, "missing", NULL) == NFS3ERR_NOENT, "LOOKUP missing -> %u", R.st);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(lookup(&ra, longname, NULL) == NFS3ERR_NAMETOOLONG, "LOOKUP 299-byte name -> %u", R.st);
	CHECK(create(&ra, longname, UNCHECKED, NULL, NULL) == NFS3ERR_NAMETOOLONG, "CREATE long name -> %u", R.st);
	CHECK(getattr(&ra, &at) == NFS3_OK, "root attrs");
	{
		uint64_t rootid = at.fileid;

		CHECK(lookup(&ra, "..", &x) == NFS3_OK && R.attr.fileid == rootid, "'..' at the root stays");
	}
	CHECK(lookup(&ra, "a/../..", NULL) != NFS3_OK, "names with '/' refused");

	/* ACCESS */
	{
		ACCESS3args a = {.object = wire(&f1), .access = ACCESS3_READ | ACCESS3_MODIFY};

		RUN(K_ACCESS, &R, rpc_nfs3_access_async(rpc, cb, &a, PD));
		CHECK(R.st == NFS3_OK && R.u32 == (ACCESS3_READ | ACCESS3_MODIFY), "ACCESS rw (%x)", R.u32);
		a.object = wire(&rro);
		a.access = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_LOOKUP;
		RUN(K_ACCESS, &R, rpc_nfs3_access_async(rpc, cb, &a, PD));
		CHECK(R.st == NFS3_OK && !(R.u32 & ACCESS3_MODIFY) && (R.u32 & ACCESS3_LOOKUP),
		      "ACCESS on read-only export has no MODIFY (%x)", R.u32);
	}

	/* MKDIR, SYMLINK, READLINK, MKNOD */
	CHECK(mkdir3(&ra, "d1", &d1) == NFS3_OK && R.attr.type == NF3DIR, "MKDIR d1");
	CHECK(mkdir3(&ra, "d1", NULL) == NFS3ERR_EXIST, "MKDIR existing -> %u", R.st);
	{
		SYMLINK3args s;
		READLINK3args rl;

		memset(&s, 0, sizeof(s));
		s.where.dir = wire(&ra);
		s.where.name = (char *)(uintptr_t)"s1";
		s.symlink.symlink_data = (char *)(uintptr_t)"../../etc";
		RUN(K_CREATE, &R, rpc_nfs3_symlink_async(rpc, cb, &s, PD));
		CHECK(R.st == NFS3_OK && R.attr.type == NF3LNK, "SYMLINK s1");
		s1 = R.fh;
		rl.symlink = wire(&s1);
		RUN(K_READLINK, &R, rpc_nfs3_readlink_async(rpc, cb, &rl, PD));
		CHECK(R.st == NFS3_OK && !strcmp(R.data, "../../etc"), "READLINK '%s'", R.data);
		rl.symlink = wire(&f1);
		RUN(K_READLINK, &R, rpc_nfs3_readlink_async(rpc, cb, &rl, PD));
		CHECK(R.st == NFS3ERR_INVAL, "READLINK of a file -> %u", R.st);
		CHECK(lookup(&s1, "passwd", NULL) == NFS3ERR_NOTDIR, "a symlink is never followed -> %u", R.st);
	}
	{
		MKNOD3args m;

		memset(&m, 0, sizeof(m));
		m.where.dir = wire(&ra);
		m.where.name = (char *)(uintptr_t)"fifo";
		m.what.type = NF3FIFO;
		RUN(K_CREATE, &R, rpc_nfs3_mknod_async(rpc, cb, &m, PD));
		CHECK(R.st == NFS3ERR_NOTSUPP, "MKNOD -> %u", R.st);
	}

	/* LINK, RENAME */
	CHECK(link3(&f1, &ra, "f1link") == NFS3_OK, "LINK");
	CHECK(getattr(&f1, &at) == NFS3_OK && at.nlink == 2, "nlink 2 after LINK");
	CHECK(link3(&f1, &f1, "bad") == NFS3ERR_NOTDIR, "LINK into a file -> %u", R.st);
	CHECK(rename3(&ra, "f1link", &d1, "f2") == NFS3_OK, "RENAME into d1");
	CHECK(lookup(&ra, "f1link", NULL) == NFS3ERR_NOENT && lookup(&d1, "f2", NULL) == NFS3_OK,
	      "RENAME moved the name");
	CHECK(rename3(&ra, "nothere", &ra, "x") == NFS3ERR_NOENT, "RENAME missing -> %u", R.st);

	/* READDIR / READDIRPLUS */
	CHECK(readdir3(&ra, 0, NULL, 4096) == NFS3_OK && R.eof && has_name(&R, "f1") && has_name(&R, "d1") &&
	      has_name(&R, "s1") && has_name(&R, "."), "READDIR root (%zu)", R.nent);
	CHECK(readdirplus3(&ra, 0, NULL, 4096, 8192) == NFS3_OK && R.eof && has_name(&R, "f1") && R.ent_fh[0],
	      "READDIRPLUS root");
	CHECK(readdir3(&f1, 0, NULL, 4096) == NFS3ERR_NOTDIR, "READDIR of a file -> %u", R.st);
	for (i = 0; i < 60; i++) {
		char n[32];

		snprintf(n, sizeof(n), "entry%02d", i);
		create(&d1, n, GUARDED, NULL, NULL);
	}
	{
		/* Page through with small replies while the directory changes. */
		int seen[60] = {0}, pages = 0, bad = 0;
		uint64_t cookie = 0;
		char cv[8] = {0};
		bool eof = false, plus = false;

		while (!eof && pages < 200) {
			size_t k;
			uint32_t st = plus ? readdirplus3(&d1, cookie, cv, 300, 1200) : readdir3(&d1, cookie, cv, 600);

			if (st != NFS3_OK) {
				bad++;
				break;
			}
			for (k = 0; k < R.nent; k++) {
				int idx;

				if (sscanf(R.names[k], "entry%d", &idx) == 1 && idx >= 0 && idx < 60)
					seen[idx]++;
			}
			eof = R.eof;
			cookie = R.last_cookie;
			memcpy(cv, R.verf, 8);
			if (pages == 1) {
				/* concurrent change: new names and a removed one */
				create(&d1, "late1", GUARDED, NULL, NULL);
				create(&d1, "late2", GUARDED, NULL, NULL);
				remove3(&d1, "entry59");
			}
			plus = !plus;
			pages++;
		}
		for (i = 0; i < 59; i++)
			if (seen[i] != 1)
				bad++;
		CHECK(bad == 0 && pages > 3, "paged READDIR/READDIRPLUS saw each untouched entry once (%d pages)", pages);
	}
	CHECK(readdir3(&d1, 12345, "zzzzzzzz", 4096) == NFS3ERR_BAD_COOKIE, "wrong cookie verifier -> %u", R.st);
	CHECK(readdir3(&d1, 0, NULL, 20) == NFS3ERR_TOOSMALL, "tiny READDIR -> %u", R.st);

	/* REMOVE / RMDIR errors */
	CHECK(rmdir3(&ra, "f1") == NFS3ERR_NOTDIR, "RMDIR a file -> %u", R.st);
	CHECK(remove3(&ra, "d1") == NFS3ERR_ISDIR, "REMOVE a directory -> %u", R.st);
	CHECK(rmdir3(&ra, "d1") == NFS3ERR_NOTEMPTY, "RMDIR non-empty -> %u", R.st);
	CHECK(remove3(&ra, "missing") == NFS3ERR_NOENT, "REMOVE missing -> %u", R.st);
	CHECK(mkdir3(&ra, "empty", NULL) == NFS3_OK && rmdir3(&ra, "empty") == NFS3_OK, "RMDIR empty");

	/* GUARDED / EXCLUSIVE */
	CHECK(create(&ra, "f1", GUARDED, NULL, NULL) == NFS3ERR_EXIST, "GUARDED create of existing -> %u", R.st);
	CHECK(create(&ra, "ex", EXCLUSIVE, verf, &x) == NFS3_OK, "EXCLUSIVE create");
	CHECK(create(&ra, "ex", EXCLUSIVE, verf, &y) == NFS3_OK && x.len == y.len && !memcmp(x.data, y.data, x.len),
	      "EXCLUSIVE retry with the same verifier -> %u", R.st);
	CHECK(create(&ra, "ex", EXCLUSIVE, verf2, NULL) == NFS3ERR_EXIST, "EXCLUSIVE other verifier -> %u", R.st);

	/* Stale and forged handles */
	CHECK(create(&ra, "gone", UNCHECKED, NULL, &x) == NFS3_OK && remove3(&ra, "gone") == NFS3_OK, "make+remove");
	CHECK(getattr(&x, NULL) == NFS3ERR_STALE, "GETATTR of a deleted file -> %u", R.st);
	CHECK(mkdir3(&ra, "gonedir", &y) == NFS3_OK && rmdir3(&ra, "gonedir") == NFS3_OK, "mkdir+rmdir");
	CHECK(getattr(&y, NULL) == NFS3ERR_STALE, "GETATTR of a deleted dir -> %u", R.st);
	/* the same after the handles were used (and cached by the server) */
	CHECK(create(&ra, "gone2", UNCHECKED, NULL, &x) == NFS3_OK && write3(&x, 0, "abc", 3, UNSTABLE) == NFS3_OK &&
	      read3(&x, 0, 3) == NFS3_OK && remove3(&ra, "gone2") == NFS3_OK, "use+remove");
	CHECK(getattr(&x, NULL) == NFS3ERR_STALE && read3(&x, 0, 3) == NFS3ERR_STALE, "used then deleted -> %u", R.st);
	CHECK(mkdir3(&ra, "gonedir2", &y) == NFS3_OK && getattr(&y, NULL) == NFS3_OK, "mkdir+use");
	snprintf(path, sizeof(path), "%s/a/gonedir2", live.dir);
	CHECK(rmdir(path) == 0 && getattr(&y, NULL) == NFS3ERR_STALE, "dir removed behind the server's back -> %u", R.st);
	CHECK(create(&ra, "gone3", UNCHECKED, NULL, &x) == NFS3_OK && getattr(&x, NULL) == NFS3_OK, "create+use");
	snprintf(path, sizeof(path), "%s/a/gone3", live.dir);
	CHECK(unlink(path) == 0 && getattr(&x, NULL) == NFS3ERR_STALE, "file removed behind the server's back -> %u", R.st);
	y = f1;
	y.data[y.len - 1] ^= 1;
	CHECK(getattr(&y, NULL) == NFS3ERR_BADHANDLE, "forged MAC -> %u", R.st);
	y = f1;
	y.data[8] ^= 1; /* fsid byte: another (unknown) export */
	CHECK(getattr(&y, NULL) == NFS3ERR_BADHANDLE, "forged fsid -> %u", R.st);
	y.len = 3;
	CHECK(getattr(&y, NULL) == NFS3ERR_BADHANDLE, "short handle -> %u", R.st);

	/* Cross-volume */
	CHECK(rename3(&ra, "f1", &rb, "f1") == NFS3ERR_XDEV, "RENAME across exports -> %u", R.st);
	CHECK(link3(&f1, &rb, "f1") == NFS3ERR_XDEV, "LINK across exports -> %u", R.st);
	CHECK(lookup(&rb, "f1", NULL) == NFS3ERR_NOENT, "handle of /a does not see into /b");

	/* Read-only export */
	CHECK(create(&rro, "new", UNCHECKED, NULL, NULL) == NFS3ERR_ROFS, "CREATE on RO -> %u", R.st);
	CHECK(lookup(&rro, "existing", &x) == NFS3_OK, "LOOKUP on RO");
	CHECK(write3(&x, 0, "x", 1, FILE_SYNC) == NFS3ERR_ROFS, "WRITE on RO -> %u", R.st);
	CHECK(setsize(&x, 0) == NFS3ERR_ROFS, "SETATTR on RO -> %u", R.st);
	CHECK(remove3(&rro, "existing") == NFS3ERR_ROFS, "REMOVE on RO -> %u", R.st);
	CHECK(read3(&x, 0, 100) == NFS3_OK && R.count == 15, "READ on RO");

	/* Root squash */
	CHECK(create(&rsq, "squashed", UNCHECKED, NULL, &x) == NFS3_OK, "CREATE as root on squash export");
	CHECK(getattr(&x, &at) == NFS3_OK && at.uid == 4242 && at.gid == 4243, "owner squashed to %u:%u",
	      at.uid, at.gid);
	CHECK(create(&ra, "notsquashed", UNCHECKED, NULL, &x) == NFS3_OK && getattr(&x, &at) == NFS3_OK &&
	      at.uid == 0, "no squash on /a: uid %u", at.uid);

	/* Capacity: a 1 GiB volume refuses its second GiB */
	CHECK(create(&rcap, "big", UNCHECKED, NULL, &fbig) == NFS3_OK, "CREATE big");
	CHECK(setsize(&fbig, (1ull << 30) - (1u << 20)) == NFS3_OK, "grow to 1 GiB - 1 MiB");
	{
		static char mib[1 << 20];

		memset(mib, 'c', sizeof(mib));
		CHECK(write3(&fbig, (1ull << 30) - (1u << 20), mib, sizeof(mib), UNSTABLE) == NFS3_OK,
		      "write the last MiB of the first GiB -> %u", R.st);
		CHECK(write3(&fbig, 1ull << 30, "x", 1, UNSTABLE) == NFS3ERR_DQUOT, "a byte more -> %u", R.st);
		CHECK(create(&rcap, "more", UNCHECKED, NULL, &x) == NFS3_OK &&
		      write3(&x, 0, mib, 4096, UNSTABLE) == NFS3ERR_DQUOT, "other file full too -> %u", R.st);
	}
	CHECK(setsize(&fbig, 2ull << 30) == NFS3ERR_DQUOT, "SETATTR to 2 GiB -> %u", R.st);
	CHECK(fsstat3(&rcap) == NFS3_OK && R.fbytes == 0, "FSSTAT full: free %llu", (unsigned long long)R.fbytes);
	CHECK(remove3(&rcap, "big") == NFS3_OK && fsstat3(&rcap) == NFS3_OK && R.fbytes == 1ull << 30,
	      "REMOVE gives the space back: free %llu", (unsigned long long)R.fbytes);

	/* Duplicate-request cache: a retransmission gets the original reply */
	rpc_set_next_xid(rpc, 0x5eed0001);
	CHECK(create(&ra, "dup", GUARDED, NULL, &x) == NFS3_OK, "GUARDED create dup");
	rpc_set_next_xid(rpc, 0x5eed0001);
	CHECK(create(&ra, "dup", GUARDED, NULL, &y) == NFS3_OK && !memcmp(x.data, y.data, x.len),
	      "retransmitted GUARDED create answered from the cache -> %u", R.st);
	rpc_set_next_xid(rpc, 0x5eed0002);
	CHECK(remove3(&ra, "dup") == NFS3_OK, "REMOVE dup");
	rpc_set_next_xid(rpc, 0x5eed0002);
	CHECK(remove3(&ra, "dup") == NFS3_OK, "retransmitted REMOVE answered from the cache -> %u", R.st);
	CHECK(remove3(&ra, "dup") == NFS3ERR_NOENT, "a new REMOVE -> %u", R.st);

	/* Handles survive a reconnect (no per-connection state) */
	connect_as(live.port, 1000, 1000);
	CHECK(getattr(&f1, &at) == NFS3_OK && at.size == 5, "old handle after reconnect");
	CHECK(read3(&f1, 0, 5) == NFS3ERR_ACCES, "mode 0600 root file unreadable for uid 1000 -> %u", R.st);

	rpc_destroy_context(rpc);
	nfs_live_stop(&live);
	fprintf(stderr, "%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
