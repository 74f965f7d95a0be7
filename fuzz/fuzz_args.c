/* fuzz_args: libFuzzer harness over every NFSv3, MOUNT v3 and PORTMAP
 * argument decoder. The first byte picks the program and procedure, the rest
 * is the argument body. Decoded names and data must lie inside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nfs/mnt.h"
#include "agent/nfs/nfs3.h"

static void within(const void *p, size_t n, const uint8_t *base, size_t size)
{
	const uint8_t *q = p;

	if (p && (q < base || q + n > base + size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct nfs_prog *const progs[] = {&nfs3_prog, &mnt_prog, &pmap_prog};
	const struct nfs_prog *prog;
	const struct nfs_proc *p;
	struct xdr_cur cur;
	void *args;
	unsigned sel;

	if (size < 1)
		return 0;
	sel = data[0];
	prog = progs[sel % 3];
	p = &prog->procs[(sel / 3) % prog->nprocs];
	if (!p->decode)
		return 0;
	args = calloc(1, p->args_size);
	if (!args)
		return 0;
	xdr_cur_init(&cur, data + 1, size - 1);
	if (p->decode(&cur, args) == 0 && prog == &nfs3_prog && p->flags & NFS_F_FH) {
		const struct nfs_fh3 *fh = args;

		if (fh->len > NFS3_FHSIZE)
			abort();
		within(fh->data, fh->len, data + 1, size - 1);
		if (p->decode == nfs3_dec_write) {
			const struct nfs3_write_args *w = args;

			if (w->len > NFS3_MAXDATA)
				abort();
			within(w->data, w->len, data + 1, size - 1);
		}
		if (p->decode == nfs3_dec_dirop) {
			const struct nfs3_dirop_args *d = args;

			within(d->name.s, d->name.len, data + 1, size - 1);
		}
	}
	free(args);
	return 0;
}
