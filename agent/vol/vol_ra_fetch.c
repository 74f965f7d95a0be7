/* vol_ra_fetch: the prefetch of cross-file read-ahead and its per-node
 * cache accounting (vol_ra.h has the contract, vol_internal.h the hooks the
 * store's read, write and name paths call).
 *
 * Three bounded tables under one mutex: the names a lookup or create found
 * (file -> its folder's handle and its name: an NFS READ carries only a
 * handle, and the prediction needs the name), the files prefetched and not
 * yet read to their end (the cache, capped per node and per volume), and
 * the jobs: one per trigger, holding the files it will prefetch in order.
 * One worker thread, started with the first job, takes a job, charges one
 * VOL_RA_CHUNK to the volume's QoS and reads it ahead, then puts the job
 * back at the tail: volumes and streams take turns chunk by chunk. A charge
 * that has to wait parks the job in the QoS queue (never the thread); the
 * QoS timer hands it back through ra_release.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/vol/vol_ra.h"
#include "util/ut_fifo.h"

#define RA_NAMES 1024          /* remembered names (direct-mapped by inode) */
#define RA_FILES 256           /* files in the cache */
#define RA_JOBS 64             /* jobs alive (queued, running or parked) */
#define RA_FLOW 0x7261ull      /* the QoS flow prefetch is charged to ("ra") */

struct ra_name {
	bool valid;
	uint64_t fsid, ino;
	struct vol_fh dir;
	char name[VOL_RA_NAME_MAX + 1];
};

struct ra_file {
	bool valid, done;      /* done: its prefetch ended (bytes is final) */
	uint64_t fsid, ino, seq;
	uint64_t bytes;        /* prefetched from offset 0 */
	uint64_t hi;           /* highest end a client READ reached */
	struct vol_fh fh;
};

struct ra_job {
	struct ut_fifo_node node;
	struct qos_item it;
	struct vol_ra *ra;
	uint64_t fsid;
	bool predicted, charged;
	struct vol_fh dir;     /* before prediction: the trigger's folder ... */
	char name[VOL_RA_NAME_MAX + 1]; /* ... and name */
	int depth;
	size_t nfiles, cur;    /* after: the files, in order */
	struct vol_fh fh[API_READ_AHEAD_MAX_DEPTH];
	uint64_t ino[API_READ_AHEAD_MAX_DEPTH], size[API_READ_AHEAD_MAX_DEPTH];
	uint64_t off, len;     /* the chunk charged */
};

struct vol_ra {
	struct vol_store *s;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ut_fifo q;
	bool started, stop;
	pthread_t th;
	size_t njobs;
	uint64_t node_cap, vol_cap, seq;
	uint8_t *buf;          /* the worker's: a cold chunk goes through it */
	struct ra_name names[RA_NAMES];
	struct ra_file files[RA_FILES];
};

static const struct vol_cred ra_root = { 0, 0, 0, { 0 } };

int vol_ra_new(struct vol_store *s, struct vol_ra **out)
{
	struct vol_ra *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return -ENOMEM;
	ra->s = s;
	ra->node_cap = VOL_RA_NODE_BYTES;
	ra->vol_cap = VOL_RA_VOLUME_BYTES;
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
	ut_fifo_init(&ra->q);
	*out = ra;
	return 0;
}

void vol_ra_stop(struct vol_ra *ra)
{
	struct ut_fifo_node *n;

	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = true;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	if (ra->started)
		pthread_join(ra->th, NULL);
	ra->started = false;
	pthread_mutex_lock(&ra->mu);
	while ((n = ut_fifo_pop(&ra->q))) {
		free(UT_FIFO_ENTRY(n, struct ra_job, node));
		ra->njobs--;
	}
	pthread_mutex_unlock(&ra->mu);
}

void vol_ra_free(struct vol_ra *ra)
{
	if (!ra)
		return;
	vol_ra_stop(ra);
	pthread_mutex_destroy(&ra->mu);
	pthread_cond_destroy(&ra->cv);
	free(ra->buf);
	free(ra);
}

void vol_store_set_read_ahead(struct vol_store *s, uint64_t node_bytes, uint64_t volume_bytes)
{
	pthread_mutex_lock(&s->ra->mu);
	s->ra->node_cap = node_bytes;
	s->ra->vol_cap = volume_bytes < node_bytes ? volume_bytes : node_bytes;
	pthread_mutex_unlock(&s->ra->mu);
}

static struct vol_acct *ra_acct(struct vol_ra *ra, uint64_t fsid, struct vol_export **e)
{
	*e = vol_find_fsid(ra->s, fsid);
	return *e ? (*e)->acct : NULL;
}

/* Count what f held unread as wasted, and forget it (mu held). */
static void ra_file_drop(struct vol_ra *ra, struct ra_file *f, bool evict)
{
	struct vol_export *e;
	uint64_t unread = f->bytes > f->hi ? f->bytes - f->hi : 0;

	if (unread && ra_acct(ra, f->fsid, &e)) {
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

static struct ra_file *ra_file_find(struct vol_ra *ra, uint64_t fsid, uint64_t ino)
{
	for (size_t i = 0; i < RA_FILES; i++)
		if (ra->files[i].valid && ra->files[i].fsid == fsid && ra->files[i].ino == ino)
			return &ra->files[i];
	return NULL;
}

/* Unread bytes in the cache: the node's and fsid's (mu held). */
static void ra_unread(const struct vol_ra *ra, uint64_t fsid, uint64_t *node, uint64_t *vol)
{
	*node = *vol = 0;
	for (size_t i = 0; i < RA_FILES; i++) {
		const struct ra_file *f = &ra->files[i];
		uint64_t u = f->valid && f->bytes > f->hi ? f->bytes - f->hi : 0;

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
static bool ra_make_room(struct vol_ra *ra, uint64_t fsid, uint64_t len)
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

			if (f->valid && f->fsid == big && f->bytes > f->hi && (!old || f->seq < old->seq))
				old = f;
		}
		if (!old)
			return false;
		ra_file_drop(ra, old, true);
	}
}

/* A slot for a new cache entry: a free one, else the oldest of those read
 * whole, else the oldest (mu held). */
static struct ra_file *ra_file_slot(struct vol_ra *ra)
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

static void ra_push(struct vol_ra *ra, struct ra_job *j)
{
	pthread_mutex_lock(&ra->mu);
	if (ra->stop) {
		ra->njobs--;
		free(j);
	} else {
		ut_fifo_push(&ra->q, &j->node);
		pthread_cond_signal(&ra->cv);
	}
	pthread_mutex_unlock(&ra->mu);
}

/* The QoS timer gives a parked job back (charged now). */
static void ra_release(void *arg, struct qos_item *it)
{
	struct ra_job *j = arg;

	(void)it;
	j->charged = true;
	ra_push(j->ra, j);
}

struct ra_dir {
	int fd;
};

static bool ra_exists(void *arg, const char *name)
{
	struct stat st;

	return fstatat(((struct ra_dir *)arg)->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Turn a trigger into its files: the predicted names that exist and are
 * not cached yet. false: nothing to fetch. */
static bool ra_predict(struct vol_ra *ra, struct ra_job *j)
{
	char (*names)[VOL_RA_NAME_MAX + 1] = malloc(API_READ_AHEAD_MAX_DEPTH * sizeof(*names));
	struct vol_obj dir;
	struct ra_dir d;
	size_t n = 0;

	j->predicted = true;
	if (!names || vol_fh_open(ra->s, j->dir.data, j->dir.len, &dir) != 0) {
		free(names);
		return false;
	}
	d.fd = dir.fd;
	n = vol_ra_predict(j->name, j->depth, ra_exists, &d, names, API_READ_AHEAD_MAX_DEPTH);
	for (size_t i = 0; i < n; i++) {
		struct vol_obj o;
		bool cached;

		if (vol_lookup(&dir, &ra_root, names[i], strlen(names[i]), &o) != 0)
			continue;
		pthread_mutex_lock(&ra->mu);
		cached = ra_file_find(ra, j->fsid, (uint64_t)o.st.st_ino) != NULL;
		pthread_mutex_unlock(&ra->mu);
		if (!cached && S_ISREG(o.st.st_mode) && vol_fh_make(ra->s, &o, &j->fh[j->nfiles]) == 0) {
			j->ino[j->nfiles] = (uint64_t)o.st.st_ino;
			j->size[j->nfiles++] = (uint64_t)o.st.st_size;
		}
		vol_obj_cleanup(&o);
	}
	vol_obj_cleanup(&dir);
	free(names);
	return j->nfiles > 0;
}

/* Read the charged chunk of the job's current file ahead: through the
 * cold tier's read hook when it lies there, else into the page cache. */
static void ra_read_chunk(struct vol_ra *ra, struct ra_job *j)
{
	const struct vol_store *s = ra->s;
	struct vol_obj o;
	bool owned = false;
	int fd;

	if (vol_fh_open(ra->s, j->fh[j->cur].data, j->fh[j->cur].len, &o) != 0)
		return;
	if ((fd = vol_iofd(&o, &ra_root, false, &owned)) >= 0) {
		if (s->tier && s->tier->cold(s->tier_arg, o.exp->cfg.fsid, &o.st, j->off, (size_t)j->len) > 0) {
			size_t got = 0;

			if (!ra->buf)
				ra->buf = malloc(VOL_RA_CHUNK);
			if (ra->buf)
				s->tier->read(s->tier_arg, o.exp->cfg.fsid, fd, &o.st, j->off, ra->buf, (size_t)j->len,
					      &got, NULL);
		} else if (readahead(fd, (off64_t)j->off, (size_t)j->len) != 0) {
			posix_fadvise(fd, (off_t)j->off, (off_t)j->len, POSIX_FADV_WILLNEED);
		}
		if (owned)
			close(fd);
	}
	atomic_fetch_add_explicit(&o.exp->acct->ra_bytes, j->len, memory_order_relaxed);
	vol_obj_cleanup(&o);
}

enum ra_next { RA_DONE, RA_AGAIN, RA_PARKED };

/* One step of a job: RA_DONE (the caller frees it), RA_AGAIN (its next
 * turn), RA_PARKED (QoS owns it: the caller must not touch it). */
static enum ra_next ra_step(struct vol_ra *ra, struct ra_job *j)
{
	struct vol_export *e;
	struct ra_file *f;
	bool room;

	if (!j->predicted && !ra_predict(ra, j))
		return RA_DONE;
	while (j->cur < j->nfiles && j->off >= j->size[j->cur]) {
		pthread_mutex_lock(&ra->mu);
		if ((f = ra_file_find(ra, j->fsid, j->ino[j->cur])))
			f->done = true;
		pthread_mutex_unlock(&ra->mu);
		j->cur++;
		j->off = 0;
	}
	if (j->cur >= j->nfiles)
		return RA_DONE;
	if (!j->charged) {
		uint64_t left = j->size[j->cur] - j->off;

		j->len = left < VOL_RA_CHUNK ? left : VOL_RA_CHUNK;
		pthread_mutex_lock(&ra->mu);
		f = ra_file_find(ra, j->fsid, j->ino[j->cur]);
		if (!f && j->off == 0 && (f = ra_file_slot(ra))) {
			*f = (struct ra_file){ .valid = true, .fsid = j->fsid, .ino = j->ino[j->cur], .seq = ++ra->seq,
					       .fh = j->fh[j->cur] };
		}
		room = f && f->bytes == j->off && ra_make_room(ra, j->fsid, j->len);
		if (f && !room && f->bytes == j->off) { /* its prefetch ends here */
			f->done = true;
			f->valid = f->bytes > 0;
		}
		pthread_mutex_unlock(&ra->mu);
		if (!room) /* full, or the file was forgotten (written) meanwhile */
			return RA_DONE;
		if (!ra_acct(ra, j->fsid, &e))
			return RA_DONE;
		pthread_mutex_lock(&ra->s->qos_mu);
		room = ra->s->qos_users > 0;
		pthread_mutex_unlock(&ra->s->qos_mu);
		if (!room) { /* no front end serves: nothing releases a parked charge */
			vol_export_unref(e);
			return RA_DONE;
		}
		j->it.release = ra_release;
		j->it.release_arg = j;
		if (qos_submit(e->acct->qos, RA_FLOW, QOS_READ, j->len, &j->it, qos_now(ra->s->qos)) == QOS_PARKED) {
			vol_export_unref(e);
			return RA_PARKED; /* ra_release brings it back */
		}
		vol_export_unref(e);
	}
	ra_read_chunk(ra, j);
	j->charged = false;
	pthread_mutex_lock(&ra->mu);
	if ((f = ra_file_find(ra, j->fsid, j->ino[j->cur])) && f->bytes == j->off)
		f->bytes += j->len;
	pthread_mutex_unlock(&ra->mu);
	j->off += j->len;
	return RA_AGAIN;
}

static void *ra_worker(void *arg)
{
	struct vol_ra *ra = arg;

	pthread_mutex_lock(&ra->mu);
	while (!ra->stop) {
		struct ut_fifo_node *n = ut_fifo_pop(&ra->q);
		enum ra_next next;
		struct ra_job *j;

		if (!n) {
			pthread_cond_wait(&ra->cv, &ra->mu);
			continue;
		}
		j = UT_FIFO_ENTRY(n, struct ra_job, node);
		pthread_mutex_unlock(&ra->mu);
		next = ra_step(ra, j);
		pthread_mutex_lock(&ra->mu);
		if (next == RA_AGAIN && !ra->stop) {
			ut_fifo_push(&ra->q, &j->node); /* behind the other jobs */
		} else if (next != RA_PARKED) {
			ra->njobs--;
			free(j);
		}
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

/* ---- the hooks of the store's paths ---- */

static size_t ra_name_slot(uint64_t fsid, uint64_t ino)
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
	r = &ra->names[ra_name_slot(dir->exp->cfg.fsid, (uint64_t)file->st.st_ino)];
	r->valid = true;
	r->fsid = dir->exp->cfg.fsid;
	r->ino = (uint64_t)file->st.st_ino;
	r->dir = fh;
	memcpy(r->name, nm, len + 1);
	pthread_mutex_unlock(&ra->mu);
}

/* A trigger: a job for the files after r's (mu held). */
static void ra_trigger(struct vol_ra *ra, const struct ra_name *r, int depth)
{
	struct ra_job *j;

	if (ra->stop || ra->njobs >= RA_JOBS || !(j = calloc(1, sizeof(*j))))
		return;
	j->ra = ra;
	j->fsid = r->fsid;
	j->dir = r->dir;
	memcpy(j->name, r->name, sizeof(j->name));
	j->depth = depth;
	if (!ra->started) {
		if (pthread_create(&ra->th, NULL, ra_worker, ra) != 0) {
			free(j);
			return;
		}
		ra->started = true;
	}
	ra->njobs++;
	ut_fifo_push(&ra->q, &j->node);
	pthread_cond_signal(&ra->cv);
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
	if ((f = ra_file_find(ra, fsid, ino))) {
		hit = off < f->bytes ? (off + n < f->bytes ? n : f->bytes - off) : 0;
		if (off + n > f->hi) /* READs of one file come in any order: the highest end */
			f->hi = off + n;
		/* read whole, it holds nothing unread (no cap counts it) but stays
		 * known, so a later trigger does not fetch it again */
	}
	r = &ra->names[ra_name_slot(fsid, ino)];
	/* a read from the start, or to the end: the next files are due */
	if ((off == 0 || off + n >= (uint64_t)obj->st.st_size) && r->valid && r->fsid == fsid && r->ino == ino)
		ra_trigger(ra, r, mode->depth_files);
	pthread_mutex_unlock(&ra->mu);
	if (hit) {
		/* served by the prefetch, which paid for it: the READ's charge
		 * comes back, so prefetch never counts twice against the limit */
		atomic_fetch_add_explicit(&obj->exp->acct->ra_hits, 1, memory_order_relaxed);
		qos_refund(obj->exp->acct->qos, hit, qos_now(obj->exp->store->qos));
	}
}

void vol_ra_forget(struct vol_export *e, uint64_t ino)
{
	struct vol_ra *ra = e->store->ra;
	struct ra_file *f;

	if (e->cfg.read_ahead.mode != API_INTENT_RA_CROSS_FILE)
		return;
	pthread_mutex_lock(&ra->mu);
	if ((f = ra_file_find(ra, e->cfg.fsid, ino)))
		ra_file_drop(ra, f, false);
	if (ra->names[ra_name_slot(e->cfg.fsid, ino)].ino == ino)
		ra->names[ra_name_slot(e->cfg.fsid, ino)].valid = false;
	pthread_mutex_unlock(&ra->mu);
}
