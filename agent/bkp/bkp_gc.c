/* bkp_gc: mark and sweep. Under the gc lock (no backup runs meanwhile, see
 * bkp_vault.c), every remaining manifest is read and verified and the chunks
 * it names are marked; then every chunk object not marked is deleted. If any
 * manifest cannot be read or verified, nothing is swept: a chunk is only
 * garbage when the gc knows every backup that could name it.
 */
#include "agent/bkp/bkp_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_hex.h"

struct gc_names {
	char **v;
	uint64_t *size;
	size_t n, cap;
};

static int gc_names_add(struct gc_names *g, const char *s, uint64_t size)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		char **v = realloc(g->v, cap * sizeof *v);
		uint64_t *sz;

		if (!v)
			return -ENOMEM;
		g->v = v;
		if (!(sz = realloc(g->size, cap * sizeof *sz)))
			return -ENOMEM;
		g->size = sz;
		g->cap = cap;
	}
	if (!(g->v[g->n] = strdup(s)))
		return -ENOMEM;
	g->size[g->n++] = size;
	return 0;
}

static void gc_names_free(struct gc_names *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i]);
	free(g->v);
	free(g->size);
}

static int gc_id_cb(void *arg, const char *id)
{
	return gc_names_add(arg, id, 0);
}

struct gc_sweep {
	const struct bkp_set *marked;
	struct gc_names dead;
	struct bkp_gc_stats *st;
};

static int gc_chunk_cb(void *arg, const char *key, uint64_t size)
{
	struct gc_sweep *g = arg;
	uint8_t id[BKP_ID_LEN];

	if (strlen(key) != BKP_CHUNK_KEY_LEN || strncmp(key, "c/", 2) != 0 ||
	    ut_hex_decode(key + 5, 2 * BKP_ID_LEN, id, sizeof id, NULL) != 0)
		return 0; /* not ours: leave it */
	if (bkp_set_has(g->marked, id)) {
		g->st->chunks_kept++;
		g->st->bytes_kept += size;
		return 0;
	}
	return gc_names_add(&g->dead, key, size);
}

int bkp_gc(struct bkp_vault *v, unsigned lock_stale_sec, struct bkp_gc_stats *out, aq_msg *msg)
{
	struct bkp_gc_stats st = { 0 };
	struct gc_names ids = { 0 };
	struct gc_sweep sw = { .st = &st };
	struct bkp_set marked;
	char lock[OBJ_KEY_MAX + 1] = "";
	int rc;

	bkp_set_init(&marked);
	sw.marked = &marked;
	if ((rc = bkp_lock_acquire(v, "gc", NULL, lock_stale_sec, lock, sizeof lock, &st.stale_locks, msg)) != 0) {
		lock[0] = '\0';
		goto out;
	}
	if ((rc = bkp_list(v, gc_id_cb, &ids, msg)) != 0)
		goto out;
	for (size_t i = 0; i < ids.n; i++) { /* mark */
		struct bkp_mf m;

		bkp_mf_init(&m);
		if ((rc = bkp_mf_load(v, ids.v[i], &m, msg)) != 0) {
			if (rc == -ENOENT) { /* deleted meanwhile: its chunks are garbage too */
				rc = 0;
				continue;
			}
			goto out; /* sweep nothing on partial knowledge */
		}
		for (size_t e = 0; e < m.n && rc == 0; e++)
			for (uint32_t c = 0; c < m.ents[e].nchunks && rc == 0; c++)
				if (!m.ents[e].chunks[c].zero)
					rc = bkp_set_add(&marked, m.ents[e].chunks[c].id);
		bkp_mf_cleanup(&m);
		if (rc != 0) {
			rc = aq_fail(msg, rc, "out of memory");
			goto out;
		}
		st.manifests++;
	}
	if ((rc = obj_list(v->store, "c/", gc_chunk_cb, &sw)) != 0) {
		aq_fail(msg, rc, "cannot list the vault's chunks: %s", obj_strerror(rc));
		goto out;
	}
	for (size_t i = 0; i < sw.dead.n; i++) { /* sweep */
		if ((rc = obj_delete(v->store, sw.dead.v[i])) != 0) {
			aq_fail(msg, rc, "cannot delete a chunk: %s", obj_strerror(rc));
			goto out;
		}
		st.chunks_swept++;
		st.bytes_swept += sw.dead.size[i];
	}
out:
	if (lock[0])
		bkp_lock_release(v, lock);
	if (out)
		*out = st;
	gc_names_free(&ids);
	gc_names_free(&sw.dead);
	bkp_set_cleanup(&marked);
	return rc;
}
