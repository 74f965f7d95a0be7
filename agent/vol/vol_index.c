/* vol_index: the export set's hash indexes (issue 22 follow-up).
 *
 * A node serves tens of thousands of volumes; each NFS request resolves its
 * handle's fsid, each SMB TREE_CONNECT a path, each status report every
 * volume's counters by id, and each apply looks every new volume up in the
 * set before. A set is immutable once published (vol_store_set replaces it
 * whole), so its indexes are built once, with it, and read without a lock:
 * three open-addressing tables (fsid, id, path) of positions in the set,
 * linear probing, at most half full. Building them is also the set's
 * duplicate check: a second id, fsid or path is refused (-EINVAL).
 *
 * Paths are keyed without trailing slashes ("/share/" is "/share"; "/"
 * stays), the form every lookup compares (vol_export_by_path, _by_prefix).
 */
#include "agent/vol/vol_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_hash.h"

/* cfg.path's length without trailing slashes (the root "/" keeps its one). */
static size_t vol_path_len(const char *p, size_t len)
{
	while (len > 1 && p[len - 1] == '/')
		len--;
	return len;
}

static size_t vol_hash_fsid(uint64_t fsid)
{
	return (size_t)ut_hash_fnv64(&fsid, sizeof(fsid));
}

static size_t vol_hash_id(const char *id)
{
	return (size_t)ut_hash_fnv64_str(id);
}

static size_t vol_hash_path(const char *p, size_t len)
{
	return (size_t)ut_hash_fnv64(p, len);
}

static bool vol_same_path(const struct vol_export_cfg *c, const char *p, size_t len)
{
	return vol_path_len(c->path, strlen(c->path)) == len && memcmp(c->path, p, len) == 0;
}

/* Insert position pos (cfg[pos]) into tab at the first free slot from h;
 * false when a slot on the way already holds an equal key (which).
 * The table is at most half full, so the probe ends. */
static bool vol_index_put(uint32_t *tab, size_t mask, size_t h, const struct vol_export_cfg *cfg, size_t pos, int which)
{
	const struct vol_export_cfg *c = &cfg[pos];
	size_t i;

	for (i = h & mask; tab[i]; i = (i + 1) & mask) {
		const struct vol_export_cfg *o = &cfg[tab[i] - 1];

		if ((which == 0 && o->fsid == c->fsid) || (which == 1 && strcmp(o->id, c->id) == 0) ||
		    (which == 2 && vol_same_path(o, c->path, vol_path_len(c->path, strlen(c->path)))))
			return false;
	}
	tab[i] = (uint32_t)pos + 1;
	return true;
}

int vol_index_build(struct vol_index *ix, const struct vol_export_cfg *cfg, size_t n)
{
	size_t slots = 16, i;
	uint32_t *tab;

	memset(ix, 0, sizeof(*ix));
	if (n >= UINT32_MAX / 4)
		return -E2BIG;
	while (slots < 2 * n)
		slots *= 2;
	if (!(tab = calloc(3 * slots, sizeof(*tab))))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct vol_export_cfg *c = &cfg[i];

		if (!vol_index_put(tab, slots - 1, vol_hash_fsid(c->fsid), cfg, i, 0) ||
		    !vol_index_put(tab + slots, slots - 1, vol_hash_id(c->id), cfg, i, 1) ||
		    !vol_index_put(tab + 2 * slots, slots - 1, vol_hash_path(c->path, vol_path_len(c->path, strlen(c->path))),
				   cfg, i, 2)) {
			free(tab);
			return -EINVAL;
		}
	}
	ix->mask = slots - 1;
	ix->fsid = tab;
	ix->id = tab + slots;
	ix->path = tab + 2 * slots;
	return 0;
}

void vol_index_cleanup(struct vol_index *ix)
{
	free(ix->fsid); /* the one allocation of the three */
	memset(ix, 0, sizeof(*ix));
}

size_t vol_index_fsid(const struct vol_set *set, uint64_t fsid)
{
	size_t i;

	if (!set->ix.fsid)
		return VOL_INDEX_NONE;
	for (i = vol_hash_fsid(fsid) & set->ix.mask; set->ix.fsid[i]; i = (i + 1) & set->ix.mask)
		if (set->e[set->ix.fsid[i] - 1]->cfg.fsid == fsid)
			return set->ix.fsid[i] - 1;
	return VOL_INDEX_NONE;
}

size_t vol_index_id(const struct vol_set *set, const char *id)
{
	size_t i;

	if (!set->ix.id)
		return VOL_INDEX_NONE;
	for (i = vol_hash_id(id) & set->ix.mask; set->ix.id[i]; i = (i + 1) & set->ix.mask)
		if (strcmp(set->e[set->ix.id[i] - 1]->cfg.id, id) == 0)
			return set->ix.id[i] - 1;
	return VOL_INDEX_NONE;
}

size_t vol_index_path(const struct vol_set *set, const char *path, size_t len)
{
	size_t i;

	if (!set->ix.path)
		return VOL_INDEX_NONE;
	for (i = vol_hash_path(path, len) & set->ix.mask; set->ix.path[i]; i = (i + 1) & set->ix.mask)
		if (vol_same_path(&set->e[set->ix.path[i] - 1]->cfg, path, len))
			return set->ix.path[i] - 1;
	return VOL_INDEX_NONE;
}

size_t vol_index_prefix(const struct vol_set *set, const char *path, size_t len, size_t *rest)
{
	size_t k = len + 1, pos;

	/* path itself, then each prefix ending before a '/', longest first;
	 * the root "/" last (it is a prefix of every absolute path) */
	while (k-- > 1) {
		if (k < len && path[k] != '/')
			continue;
		if ((pos = vol_index_path(set, path, k)) != VOL_INDEX_NONE) {
			*rest = k;
			return pos;
		}
	}
	if (len > 0 && path[0] == '/' && (pos = vol_index_path(set, path, 1)) != VOL_INDEX_NONE) {
		*rest = 1;
		return pos;
	}
	return VOL_INDEX_NONE;
}
