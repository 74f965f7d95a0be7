/* fuzz_nlm: libFuzzer harness over the NLM v4 and NSM decoders (agent/nfs/
 * nlm_xdr.c) and, for what decodes, the procedure's handler and encoder
 * against a store with one export in a scratch folder (handles that do not
 * resolve answer STALE_FH; the export's file "f" has a handle the harness
 * splices in when the input asks, so the lock paths run too). The first
 * byte picks the program and procedure, the second whether to put f's
 * handle at the front of the lock (after cookie, block and exclusive words
 * of the procedure's own layout the input supplies). Callbacks go to a
 * portmapper port nothing listens on. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/nfs/nlm.h"

static struct vol_store *store;
static struct nlm_srv *nlm;
static struct vol_fh fh;
static char scratch[] = "/tmp/aqfuzz-nlm-XXXXXX";

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	nlm_srv_free(nlm);
	vol_store_free(store);
	nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void init(void)
{
	static struct vol_export_cfg cfg;
	uint8_t key[VOL_KEY_LEN] = { 7 };
	struct vol_export *e;
	struct vol_obj root = { .fd = -1 }, obj = { .fd = -1 };
	struct vol_cred cred = { 0 };
	char p[128];
	int fd;

	if (!mkdtemp(scratch))
		abort();
	snprintf(cfg.id, sizeof(cfg.id), "v");
	snprintf(cfg.path, sizeof(cfg.path), "/v");
	snprintf(cfg.root, sizeof(cfg.root), "%s", scratch);
	cfg.fsid = 42;
	cfg.capacity = 64u << 20;
	cfg.nrules = 1;
	snprintf(cfg.rules[0].clients, sizeof(cfg.rules[0].clients), "0.0.0.0/0");
	cfg.rules[0].access = VOL_ACCESS_RW;
	if (vol_store_new(key, &store) != 0 || vol_store_set(store, &cfg, 1) != 0 ||
	    nlm_srv_new(&(struct nlm_cfg){ .pmap_port = 1, .cb_timeout_ms = 10 }, store, &nlm) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/f", scratch);
	if ((fd = open(p, O_CREAT | O_WRONLY, 0644)) >= 0)
		close(fd);
	e = vol_export_by_path(store, "/v", 2);
	if (!e || vol_root(e, &root) != 0 || vol_lookup(&root, &cred, "f", 1, &obj) != 0 ||
	    vol_fh_make(store, &obj, &fh) != 0)
		abort();
	vol_obj_cleanup(&obj);
	vol_obj_cleanup(&root);
	vol_export_unref(e);
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[8192];
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	const struct nfs_prog *prog;
	const struct nfs_proc *p;
	struct nfs_call call;
	struct xdr_cur cur;
	struct ut_buf out;
	void *args, *res;
	size_t len;

	if (!store)
		init();
	if (size < 2)
		return 0;
	prog = data[0] & 0x80 ? &nsm_prog : &nlm_prog;
	p = &prog->procs[(data[0] & 0x7f) % prog->nprocs];
	if (!p->decode)
		return 0;
	/* optionally: a cookie "c", then (words from the input), caller "h", f's handle */
	len = 0;
	if (data[1] & 1) {
		size_t words = (data[1] >> 1) & 3;

		memcpy(buf, "\0\0\0\1c\0\0\0", 8);
		len = 8;
		for (size_t i = 0; i < words && 2 + 4 * (i + 1) <= size; i++, len += 4)
			memcpy(buf + len, data + 2 + 4 * i, 4);
		memcpy(buf + len, "\0\0\0\1h\0\0\0", 8);
		len += 8;
		buf[len++] = 0;
		buf[len++] = 0;
		buf[len++] = 0;
		buf[len++] = (uint8_t)fh.len;
		memcpy(buf + len, fh.data, fh.len);
		len += (fh.len + 3u) & ~3u;
		data += 2 + 4 * words;
		size -= size < 2 + 4 * words ? size : 2 + 4 * words;
	} else {
		data += 2;
		size -= 2;
	}
	if (size > sizeof(buf) - len)
		size = sizeof(buf) - len;
	memcpy(buf + len, data, size);
	len += size;
	args = calloc(1, p->args_size);
	res = calloc(1, p->res_size);
	if (!args || !res)
		goto out;
	xdr_cur_init(&cur, buf, len);
	if (p->decode(&cur, args) != 0)
		goto out;
	memset(&call, 0, sizeof(call));
	call.store = store;
	call.ctx = nlm;
	call.peer = (const struct sockaddr *)&peer;
	call.obj.fd = -1;
	call.file_fd = -1;
	p->handler(&call, args, res);
	ut_buf_init(&out, 65536);
	p->encode(&out, res, &call);
	ut_buf_cleanup(&out);
out:
	if (p->free && res)
		p->free(res);
	free(args);
	free(res);
	return 0;
}
