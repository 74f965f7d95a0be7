/* fuzz_bkp_manifest: libFuzzer harness over agent/bkp/bkp_mf.c, the decoder
 * of a backup's manifest as it comes out of the store after decryption (the
 * tag only proves someone with the vault key wrote it, so the decoder is
 * bounded all the same). The input is copied into a buffer of exactly its
 * size so ASan catches any read past the end. Whatever decodes must satisfy
 * the manifest's rules (paths clean, entry 0 the root, links backwards to a
 * regular file, chunk counts matching sizes, xattrs only on folders and
 * files and within their cap) and encode back to the very
 * same bytes (one canonical encoding). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/bkp/bkp_internal.h"

static void check(const struct bkp_mf *m)
{
	if (m->n == 0 || m->ents[0].type != BKP_T_DIR || m->ents[0].path[0])
		abort();
	for (size_t i = 0; i < m->n; i++) {
		const struct bkp_ent *e = &m->ents[i];

		if (bkp_path_check(e->path, strlen(e->path)) != 0 || (i > 0 && !e->path[0]))
			abort();
		if (e->type == BKP_T_REG && (uint64_t)e->nchunks * m->chunk_size < e->size)
			abort();
		if (e->type == BKP_T_LINK && (e->link >= i || m->ents[e->link].type != BKP_T_REG))
			abort();
		if (e->type == BKP_T_SYMLINK && (!e->target || !e->target[0]))
			abort();
		for (unsigned x = 0; x < BKP_XA_N; x++) /* xattrs: folders and files only, 1..BKP_XA_MAX bytes */
			if (e->xa[x] && (e->type == BKP_T_SYMLINK || e->type == BKP_T_LINK || !e->xa_len[x] ||
					 e->xa_len[x] > BKP_XA_MAX))
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1), *again = NULL;
	struct bkp_mf m;
	size_t len = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (bkp_mf_decode(buf, size, &m) == 0) {
		check(&m);
		if (bkp_mf_encode(&m, &again, &len) != 0 || len != size || memcmp(again, data, size) != 0)
			abort();
		free(again);
		bkp_mf_cleanup(&m);
	}
	free(buf);
	return 0;
}
