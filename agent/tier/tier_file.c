/* tier_file: the in-memory file table of a tiered volume: one entry per
 * inode with its chunks' temperature, version and state (v->mu held).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/tier/tier_internal.h"

/* ---------- in-memory file table (v->mu held) ---------- */

struct tier_file *tier_file_find(struct tier_vol *v, uint64_t ino)
{
	struct tier_file *f = v->hash[ino % TIER_HASH];

	while (f && f->ino != ino)
		f = f->next;
	return f;
}

static int tier_file_grow(struct tier_file *f, uint32_t n)
{
	uint32_t m = f->n ? f->n : 16;
	void *a, *b, *c, *d;

	if (n <= f->n)
		return 0;
	while (m < n)
		m *= 2;
	a = realloc(f->day, m * sizeof(*f->day));
	if (a)
		f->day = a;
	b = realloc(f->ver, m * sizeof(*f->ver));
	if (b)
		f->ver = b;
	c = realloc(f->cver, m * sizeof(*f->cver));
	if (c)
		f->cver = c;
	d = realloc(f->state, m);
	if (d)
		f->state = d;
	if (!a || !b || !c || !d)
		return -ENOMEM;
	memset(f->day + f->n, 0, (m - f->n) * sizeof(*f->day));
	memset(f->ver + f->n, 0, (m - f->n) * sizeof(*f->ver));
	memset(f->cver + f->n, 0, (m - f->n) * sizeof(*f->cver));
	memset(f->state + f->n, CH_HOT, m - f->n);
	f->n = m;
	return 0;
}

struct tier_file *tier_file_get(struct tier_vol *v, uint64_t ino, uint32_t nchunks)
{
	struct tier_file *f = tier_file_find(v, ino);

	if (!f) {
		if (!(f = calloc(1, sizeof(*f))))
			return NULL;
		f->ino = ino;
		f->serial = ++v->serial;
		f->next = v->hash[ino % TIER_HASH];
		v->hash[ino % TIER_HASH] = f;
	}
	if (tier_file_grow(f, nchunks) != 0)
		return NULL;
	return f;
}

void tier_file_free(struct tier_file *f)
{
	if (!f)
		return;
	free(f->day);
	free(f->ver);
	free(f->cver);
	free(f->state);
	free(f);
}

void tier_file_unhash(struct tier_vol *v, struct tier_file *f)
{
	struct tier_file **pp = &v->hash[f->ino % TIER_HASH];

	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
}
