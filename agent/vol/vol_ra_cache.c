/* vol_ra_cache: the cache side of cross-file read-ahead (vol_ra.h; the
 * locks are in vol_ra_internal.h): the names a lookup or create found (file
 * -> its folder's handle and its name: an NFS READ carries only a handle,
 * and the prediction needs the name), the files prefetched and not yet read
 * to their end (capped per node and per volume), and the hooks the store's
 * read, name and write paths call. vol_ra_fetch.c does the prefetch.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_ra_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct vol_cred ra_root = { 0, 0, 0, { 0 }, 0 };

void vol_store_set_read_ahead(struct vol_store *s, uint64_t node_bytes, uint64_t volume_bytes)
{
	pthread_mutex_lock(&s->ra->mu);
	s->ra->node_cap = node_bytes;
	s->ra->vol_cap = volume_bytes < node_bytes ? volume_bytes : node_bytes;
	pthread_mutex_unlock(&s->ra->mu);
}

void vol_store_set_read_ahead_ramp(struct vol_store *s, bool ramp)
{
	pthread_mutex_lock(&s->ra->mu);
	s->ra->ramp = ramp;
	pthread_mutex_unlock(&s->ra->mu);
}

struct vol_acct *vol_ra_acct(struct vol_ra *ra, uint64_t fsid, struct vol_export **e)
{
	*e = vol_find_fsid(ra->s, fsid);
	return *e ? (*e)->acct : NULL;
}

/* Count what f held unread as wasted, and forget it (mu held). */
static void ra_file_drop(struct vol_ra *ra, struct ra_file *f, bool evict)
{
	struct vol_export *e;
	uint64_t unread = f->bytes > f->hi ? f->bytes - f->hi : 0;

	if (unread && vol_ra_acct(ra, f->fsid, &e)) {
		atomic_fetch_add_explicit(&e->acct->ra_wasted, unread, memory_order_relaxed);
		vol_export_unref(e);
	}
	if (evict && unread) { /* the cap is real: give the page cache back */
		struct vol_obj o;
		bool owned;
		int fd;

		if (vol_fh_open(ra->s, f->fh.data, f->fh.len, &o) == 0) {
			if ((fd = vol_iofd(&o, &ra_root, false, &owned)) >= 0) {
				posix_fadvise(fd, (off_t)f->hi, (off_t)unread, POSIX_FADV_DONTNEED);
				if (owned)
					close(fd);
			}
			vol_obj_cleanup(&o);
		}
	}
	f->valid = false;
}

struct ra_file *vol_ra_file_find(struct vol_ra *ra, uint64_t fsid, uint64_t ino)
{
	for (size_t i = 0; i < RA_FILES; i++)
		if (ra->files[i].valid && ra->files[i].fsid == fsid && ra->files[i].ino == ino)
			return &ra->files[i];
	return NULL;
}

struct ra_file *vol_ra_file_live(struct vol_ra *ra, uint64_t fsid, uint64_t ino)
{
	struct ra_file *f = vol_ra_file_find(ra, fsid, ino);

	if (f && f->done && f->hi >= f->bytes + f->pend) {
		ra_file_drop(ra, f, false); /* read whole: asked for again, it is a replay */
		f = NULL;
	}
	return f;
}

/* Unread bytes in the cache: the node's and fsid's (mu held). */
static void ra_unread(const struct vol_ra *ra, uint64_t fsid, uint64_t *node, uint64_t *vol)
{
	*node = *vol = 0;
	for (size_t i = 0; i < RA_FILES; i++) {
		const struct ra_file *f = &ra->files[i];
		uint64_t held = f->bytes + f->pend;
		uint64_t u = f->valid && held > f->hi ? held - f->hi : 0;

		*node += u;
		if (f->valid && f->fsid == fsid)
			*vol += u;
	}
}

/* Room for len more bytes of fsid (mu held). A volume at its cap waits
 * until its client reads what it has (no own eviction: the nearer files
 * are the ones it needs first). At the node's cap, the volume holding the
 * most unread bytes gives up its oldest file, if it holds more than fsid
 * does (max-min fairness); else there is no room. */
bool vol_ra_make_room(struct vol_ra *ra, uint64_t fsid, uint64_t len)
{
	for (;;) {
		uint64_t node, vol, most = 0, u, un;
		struct ra_file *old = NULL;
		uint64_t big = 0;

		ra_unread(ra, fsid, &node, &vol);
		if (vol + len > ra->vol_cap)
			return false;
		if (node + len <= ra->node_cap)
			return true;
		for (size_t i = 0; i < RA_FILES; i++) {
			const struct ra_file *f = &ra->files[i];

			if (!f->valid || f->fsid == fsid)
				continue;
			ra_unread(ra, f->fsid, &un, &u);
			if (u > most) {
				most = u;
				big = f->fsid;
			}
		}
		if (most <= vol)
			return false;
		for (size_t i = 0; i < RA_FILES; i++) {
			struct ra_file *f = &ra->files[i];

			if (f->valid && f->fsid == big && f->bytes + f->pend > f->hi && (!old || f->seq < old->seq))
				old = f;
		}
		if (!old)
			return false;
		ra_file_drop(ra, old, true);
	}
}

/* A slot for a new cache entry: a free one, else the oldest of those read
 * whole, else the oldest (mu held). */
struct ra_file *vol_ra_file_slot(struct vol_ra *ra)
{
	struct ra_file *old = NULL, *read = NULL;

	for (size_t i = 0; i < RA_FILES; i++) {
		struct ra_file *f = &ra->files[i];

		if (!f->valid)
			return f;
		if (f->done && f->hi >= f->bytes && (!read || f->seq < read->seq))
			read = f;
		if (!old || f->seq < old->seq)
			old = f;
	}
	old = read ? read : old;
	ra_file_drop(ra, old, true);
	return old;
}

/* ---- the hooks of the store's paths ---- */

size_t vol_ra_name_slot(uint64_t fsid, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) ^ fsid) % RA_NAMES;
}

void vol_ra_note(struct vol_obj *dir, const char *nm, const struct vol_obj *file)
{
	struct vol_ra *ra = dir->exp->store->ra;
	struct ra_name *r;
	struct vol_fh fh;
	size_t len = strlen(nm);

	if (dir->exp->cfg.read_ahead.mode != API_INTENT_RA_CROSS_FILE || !S_ISREG(file->st.st_mode) || dir->snap ||
	    len > VOL_RA_NAME_MAX || vol_fh_make(dir->exp->store, dir, &fh) != 0)
		return;
	pthread_mutex_lock(&ra->mu);
	r = &ra->names[vol_ra_name_slot(dir->exp->cfg.fsid, (uint64_t)file->st.st_ino)];
	if (!r->valid || r->fsid != dir->exp->cfg.fsid || r->ino != (uint64_t)file->st.st_ino)
		r->dem_end = r->dem_tick = 0; /* another file: nothing of it was asked for */
	r->valid = true;
	r->fsid = dir->exp->cfg.fsid;
	r->ino = (uint64_t)file->st.st_ino;
	r->dir = fh;
	memcpy(r->name, nm, len + 1);
	pthread_mutex_unlock(&ra->mu);
}

/* How many files a READ of a file with this run asks for: one more than
 * the run, up to depthFiles. A film's first frame (run 0: nothing
 * predicted it) asks for one file, the next for two, ...: the prefetch
 * grows with what the client consumes, so the burst of a stream's start
 * (depthFiles files at once, all competing with the first frame's own
 * reads for the store and the cores) does not delay its first frames;
 * once the run reaches depthFiles, each frame read adds one file at the
 * far end, as before. */
static int ra_depth(int depth_files, unsigned run)
{
	return run + 1 < (unsigned)depth_files ? (int)run + 1 : depth_files;
}

void vol_ra_read(struct vol_obj *obj, int fd, uint64_t off, uint64_t n)
{
	const struct api_intent_read_ahead *mode = &obj->exp->cfg.read_ahead;
	struct vol_ra *ra = obj->exp->store->ra;
	uint64_t fsid = obj->exp->cfg.fsid, ino = (uint64_t)obj->st.st_ino, hit = 0;
	struct ra_file *f;
	struct ra_name *r;

	if (mode->mode == API_INTENT_RA_NONE || obj->snap)
		return;
	if (mode->mode == API_INTENT_RA_AGGRESSIVE) {
		if (fd >= 0 && off + n < (uint64_t)obj->st.st_size)
			posix_fadvise(fd, (off_t)(off + n), VOL_RA_WINDOW, POSIX_FADV_WILLNEED);
		return;
	}
	pthread_mutex_lock(&ra->mu);
	if ((f = vol_ra_file_find(ra, fsid, ino))) {
		hit = off < f->bytes ? (off + n < f->bytes ? n : f->bytes - off) : 0;
		if (off + n > f->hi) /* READs of one file come in any order: the highest end */
			f->hi = off + n;
		/* read whole, it holds nothing unread (no cap counts it) but stays
		 * known, so a later trigger does not fetch it again */
	}
	r = &ra->names[vol_ra_name_slot(fsid, ino)];
	if (r->valid && r->fsid == fsid && r->ino == ino && n)
		vol_ra_asked(ra, r, off, n);
	/* a read from the start (the file is opened), or to the end: the next
	 * files are due, as many as the stream has shown it plays (ra_depth).
	 * A film's first frame starts the prefetch of the second at its first
	 * READ too: its own READs come first at the tier all the same, since
	 * prefetch gives way to demand there (vol_ra_demand_begin). */
	if ((off + n >= (uint64_t)obj->st.st_size || off == 0) && r->valid && r->fsid == fsid && r->ino == ino)
		vol_ra_trigger(ra, r, ra->ramp ? ra_depth(mode->depth_files, f ? f->run : 0) : mode->depth_files,
			       f ? f->run : 0, 0);
	pthread_mutex_unlock(&ra->mu);
	if (hit) {
		/* served by the prefetch, which paid for it: the READ's charge
		 * comes back, so prefetch never counts twice against the limit */
		atomic_fetch_add_explicit(&obj->exp->acct->ra_hits, 1, memory_order_relaxed);
		qos_refund(obj->exp->acct->qos, hit, qos_now(obj->exp->store->qos));
	}
}

/* Whether the folder dir of fsid is being played: a file of it is in the
 * cache, its prefetch going on or not read whole (mu held). */
static bool ra_played(const struct vol_ra *ra, uint64_t fsid, const struct vol_fh *dir)
{
	for (size_t i = 0; i < RA_FILES; i++) {
		const struct ra_file *f = &ra->files[i];

		if (f->valid && f->fsid == fsid && f->dir.len == dir->len && !memcmp(f->dir.data, dir->data, dir->len) &&
		    (!f->done || f->hi < f->bytes + f->pend))
			return true;
	}
	return false;
}

void vol_read_ahead_open(struct vol_obj *file)
{
	const struct api_intent_read_ahead *mode = &file->exp->cfg.read_ahead;
	struct vol_ra *ra = file->exp->store->ra;
	uint64_t fsid = file->exp->cfg.fsid, ino = (uint64_t)file->st.st_ino;
	struct ra_file *f;
	struct ra_name *r;
	unsigned run;

	if (mode->mode != API_INTENT_RA_CROSS_FILE || file->snap || !S_ISREG(file->st.st_mode) || file->st.st_size == 0)
		return;
	pthread_mutex_lock(&ra->mu);
	r = &ra->names[vol_ra_name_slot(fsid, ino)];
	if (r->valid && r->fsid == fsid && r->ino == ino) { /* its name is known (a lookup or create) */
		f = vol_ra_file_find(ra, fsid, ino);
		run = f ? f->run : 0;
		vol_ra_trigger(ra, r, ra->ramp ? ra_depth(mode->depth_files, run) : mode->depth_files, run,
			       RA_T_OPEN | (ra_played(ra, fsid, &r->dir) ? RA_T_PLAYED : 0));
	}
	pthread_mutex_unlock(&ra->mu);
}

void vol_ra_forget(struct vol_export *e, uint64_t ino)
{
	struct vol_ra *ra = e->store->ra;
	struct ra_file *f;

	if (e->cfg.read_ahead.mode != API_INTENT_RA_CROSS_FILE)
		return;
	pthread_mutex_lock(&ra->mu);
	if ((f = vol_ra_file_find(ra, e->cfg.fsid, ino)))
		ra_file_drop(ra, f, false);
	if (ra->names[vol_ra_name_slot(e->cfg.fsid, ino)].ino == ino)
		ra->names[vol_ra_name_slot(e->cfg.fsid, ino)].valid = false;
	pthread_mutex_unlock(&ra->mu);
}
