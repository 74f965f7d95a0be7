/* fuzz_rpc: libFuzzer harness over the RPC record reassembler (fed in
 * input-chosen chunk sizes), the call-header parser, the argument decoder
 * of whichever program/procedure the header names, and the dispatcher's
 * peek at a READ's or WRITE's size (nfs3_io_quick). */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs/mnt.h"
#include "agent/nfs/nfs3.h"
#include "agent/nfs/rpc.h"

static void decode_args(const struct rpc_call *c)
{
	static const struct nfs_prog *const progs[] = {&nfs3_prog, &mnt_prog, &pmap_prog};
	size_t i;

	for (i = 0; i < 3; i++) {
		const struct nfs_proc *p;
		struct xdr_cur cur;
		void *args;

		if (progs[i]->prog != c->prog || c->proc >= progs[i]->nprocs)
			continue;
		p = &progs[i]->procs[c->proc];
		if (!p->decode)
			return;
		args = calloc(1, p->args_size);
		if (!args)
			return;
		xdr_cur_init(&cur, c->args, c->args_len);
		(void)p->decode(&cur, args);
		free(args);
	}
}

/* data[0]: the feed's chunk size (0: all at once); data[1]: how many times
 * the rest is fed in a row (1-1021), so that records past RPC_REC_STEP (the
 * room taken ahead of bytes, the budget's end) are reached from inputs of a
 * few KiB. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_rec r;
	_Atomic size_t ahead = 0;
	size_t start = size > 2 ? 2 : size, reps = size > 1 ? 1 + 4u * data[1] : 1;
	uint8_t chunk = size ? data[0] : 1;
	bool stop = false;

	/* a cap past RPC_REC_STEP and a budget below it */
	rpc_rec_init(&r, 1u << 18);
	rpc_rec_budget(&r, &ahead, 1u << 17);
	for (size_t k = 0; k < reps && !stop; k++) {
		size_t off = start;

		while (off < size) {
			size_t n = size - off, used = 0, len;
			int rc;

			if (chunk && n > chunk)
				n = chunk;
			rc = rpc_rec_feed(&r, data + off, n, &used);
			off += used;
			if (rc < 0) {
				stop = true;
				break;
			}
			if (rc == RPC_REC_DONE) {
				uint8_t *rec = rpc_rec_take(&r, &len);
				struct rpc_call c;

				if (rpc_call_parse(rec, len, &c) == RPC_PARSE_OK) {
					decode_args(&c);
					(void)nfs3_io_quick(c.proc, c.args, c.args_len); /* nfs_dispatch's peek */
				}
				free(rec);
			}
		}
	}
	rpc_rec_cleanup(&r);
	if (atomic_load(&ahead) != 0)
		abort(); /* a charge not given back */
	return 0;
}
