/* fuzz_nfs4_compound: libFuzzer harness over the NFSv4.1 COMPOUND path
 * (agent/nfs4/): the QoS peek at the raw arguments, then the whole
 * COMPOUND handler and encoder against a store with one export in a scratch
 * folder. The first byte picks a mode: odd, the input is a COMPOUND's
 * arguments as they come; even, the harness puts a valid SEQUENCE of its own
 * session first (next sequence id of slot byte1 % 4) and the rest of the
 * input as further operations, so the fuzzer reaches every operation
 * behind the session checks. Files it makes stay under the export's 64 MiB. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs4/nfs4_internal.h"

static struct vol_store *store;
static struct nfs4_srv *v4;
static uint8_t sess[NFS4_SESSIONID];
static uint32_t slot_seq[4];
static const uint8_t wverf[8];
static char scratch[] = "/tmp/aqfuzz-nfs4-XXXXXX";

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* the scratch folder goes with the process */
static void cleanup(void)
{
	nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void run(const uint8_t *args, size_t len)
{
	const struct nfs_proc *p = &nfs4_prog.procs[1];
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	struct nfs_call call = { .store = store, .ctx = v4, .peer = (const struct sockaddr *)&peer,
				 .wverf = wverf, .conn_id = 1, .file_fd = -1 };
	struct nfs_qos_charge ch;
	struct xdr_cur cur;
	struct ut_buf out;
	void *a = calloc(1, p->args_size), *r = calloc(1, p->res_size);

	call.obj.fd = -1;
	(void)nfs4_prog.qos(1, args, len, &ch);
	xdr_cur_init(&cur, args, len);
	if (a && r && p->decode(&cur, a) == 0) {
		p->handler(&call, a, r);
		ut_buf_init(&out, 2u << 20);
		p->encode(&out, r, &call);
		ut_buf_cleanup(&out);
	}
	if (r)
		p->free(r);
	free(a);
	free(r);
}

static void setup(void)
{
	static const uint8_t key[VOL_KEY_LEN] = { 7 };
	static struct vol_export_cfg cfg;
	struct ut_buf b;

	if (v4)
		return;
	if (!mkdtemp(scratch) || vol_store_new(key, &store) != 0 || nfs4_srv_new(NULL, &v4) != 0)
		abort();
	atexit(cleanup);
	snprintf(cfg.id, sizeof(cfg.id), "vol");
	snprintf(cfg.path, sizeof(cfg.path), "/vol");
	snprintf(cfg.root, sizeof(cfg.root), "%s", scratch);
	cfg.fsid = 0x1234;
	cfg.capacity = 64u << 20;
	cfg.nrules = 1;
	snprintf(cfg.rules[0].clients, sizeof(cfg.rules[0].clients), "0.0.0.0/0");
	cfg.rules[0].access = VOL_ACCESS_RW;
	cfg.protocols = API_INTENT_NFSV3 | API_INTENT_NFSV4;
	if (vol_store_set(store, &cfg, 1) != 0)
		abort();
	/* a client and a session the inputs may use */
	ut_buf_init(&b, 4096);
	xdr_put_opaque(&b, "", 0);
	xdr_put_u32(&b, 1);
	xdr_put_u32(&b, 1);
	xdr_put_u32(&b, OP_EXCHANGE_ID);
	xdr_put_fixed(&b, "verifier", 8);
	xdr_put_opaque(&b, "fuzz", 4);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, 0);
	run(ut_buf_bytes(&b), b.len);
	ut_buf_cleanup(&b);
	pthread_mutex_lock(&v4->mu);
	if (v4->clients) {
		struct nfs4_client *c = v4->clients;
		struct nfs4_session *se = calloc(1, sizeof(*se) + 4 * sizeof(se->slots[0]));

		if (!se)
			abort();
		se->clp = c;
		se->nslots = 4;
		se->refs = 1;
		for (int i = 0; i < 8; i++)
			se->id[i] = (uint8_t)(c->id >> (56 - 8 * i));
		se->id[15] = 1;
		c->sessions = se;
		c->confirmed = true;
		v4->nsessions++;
		memcpy(sess, se->id, sizeof(sess));
	}
	pthread_mutex_unlock(&v4->mu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ut_buf b;
	uint32_t slot;

	setup();
	if (size < 2)
		return 0;
	if (data[0] & 1) {
		run(data + 1, size - 1);
		return 0;
	}
	slot = data[1] % 4;
	ut_buf_init(&b, 8192);
	xdr_put_opaque(&b, "", 0);
	xdr_put_u32(&b, 1);
	xdr_put_u32(&b, 1u + data[0] / 2 % 40); /* sometimes past NFS4_MAX_OPS */
	xdr_put_u32(&b, OP_SEQUENCE);
	xdr_put_fixed(&b, sess, sizeof(sess));
	xdr_put_u32(&b, ++slot_seq[slot]);
	xdr_put_u32(&b, slot);
	xdr_put_u32(&b, 3);
	xdr_put_u32(&b, 1);
	xdr_put_fixed(&b, data + 2, size - 2);
	if (!b.err)
		run(ut_buf_bytes(&b), b.len);
	ut_buf_cleanup(&b);
	return 0;
}
