/* vol_ra_fetch: the prefetch of cross-file read-ahead (vol_ra.h has the
 * contract, vol_ra_internal.h the shared state and what each lock guards,
 * vol_ra_cache.c the cache tables and the store's hooks).
 *
 * A READ that triggers read-ahead queues a job on its volume's queue: the
 * job predicts the next files, then hands out their chunks (VOL_RA_CHUNK
 * each) strictly in order, nearest file first, so the caps give room to the
 * frames due first. A pool of nworkers threads (vol_store_set_read_ahead_
 * workers, default VOL_RA_WORKERS) serves the queues round-robin: a worker
 * takes the next job of the next volume that has one, takes room in the
 * cache for the job's next chunk and charges it to the volume's QoS, puts
 * the job back at the tail of its volume's queue and only then reads the
 * chunk. So several chunks of one job (of one file, or of the next files)
 * are read at once by several workers, and a volume with a long queue gets
 * one turn per round, like every other volume: a second volume's job is
 * taken by the next worker that comes free. A cold chunk is read through
 * the tier's read hook (its ranged GET and chunk cache, plus the tier's own
 * read-ahead of the next chunks); with the workers, up to nworkers such
 * GETs are in flight. A chunk is charged only with the tokens the volume's
 * clients leave (qos_take): when a client waits for tokens, or the bucket
 * is empty, the job ends there and gives its room back (the film's next
 * READ starts one again). A prefetch that waited in the QoS queue took the
 * tokens a client's own READs waited for: a film asked at 1.5x its limit
 * got 0.75-0.84x the limit with read-ahead on (bench/frames/qos.sh).
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

/* A chunk a worker reads, copied out of its job (which moves on). */
struct ra_chunk {
	struct vol_fh fh;
	uint64_t fsid, ino, off, len;
};

int vol_ra_new(struct vol_store *s, struct vol_ra **out)
{
	struct vol_ra *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return -ENOMEM;
	ra->s = s;
	ra->node_cap = VOL_RA_NODE_BYTES;
	ra->vol_cap = VOL_RA_VOLUME_BYTES;
	ra->nworkers = VOL_RA_WORKERS;
	ra->ramp = true;
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
	pthread_cond_init(&ra->dcv, NULL);
	*out = ra;
	return 0;
}

int vol_store_set_read_ahead_workers(struct vol_store *s, unsigned n)
{
	int rc = 0;

	if (n < 1 || n > VOL_RA_WORKERS_MAX)
		return -EINVAL;
	pthread_mutex_lock(&s->ra->mu);
	if (s->ra->nstarted)
		rc = -EBUSY;
	else
		s->ra->nworkers = n;
	pthread_mutex_unlock(&s->ra->mu);
	return rc;
}

/* The queue slot of fsid, taking a free one (NULL: all taken) (mu held). */
static struct ra_vq *ra_vq_get(struct vol_ra *ra, uint64_t fsid)
{
	struct ra_vq *free_vq = NULL;

	for (size_t i = 0; i < RA_VOLS; i++) {
		if (ra->vq[i].used && ra->vq[i].fsid == fsid)
			return &ra->vq[i];
		if (!ra->vq[i].used && !free_vq)
			free_vq = &ra->vq[i];
	}
	if (free_vq) {
		*free_vq = (struct ra_vq){ .used = true, .fsid = fsid };
		ut_fifo_init(&free_vq->q);
	}
	return free_vq;
}

static void ra_vq_put(struct ra_vq *vq)
{
	if (vq->njobs == 0 && vq->running == 0)
		vq->used = false;
}

/* Free j if nobody owns it and none of its chunks is being read (mu held). */
static void ra_job_put(struct vol_ra *ra, struct ra_job *j)
{
	struct ra_vq *vq = j->vq;

	if (j->busy || j->inflight)
		return;
	vq->njobs--;
	ra->njobs--;
	free(j);
	ra_vq_put(vq);
}

/* The next job, round-robin over the volumes' queues (mu held). */
static struct ra_job *ra_pick(struct vol_ra *ra)
{
	for (size_t k = 1; k <= RA_VOLS; k++) {
		size_t i = (ra->rr + k) % RA_VOLS;
		struct ut_fifo_node *n;

		if (ra->vq[i].used && (n = ut_fifo_pop(&ra->vq[i].q))) {
			ra->rr = i;
			ra->vq[i].running++;
			return UT_FIFO_ENTRY(n, struct ra_job, node);
		}
	}
	return NULL;
}

void vol_ra_stop(struct vol_ra *ra)
{
	unsigned n;

	if (!ra)
		return;
	pthread_mutex_lock(&ra->mu);
	ra->stop = true;
	n = ra->nstarted;
	pthread_cond_broadcast(&ra->cv);
	pthread_cond_broadcast(&ra->dcv);
	pthread_mutex_unlock(&ra->mu);
	for (unsigned i = 0; i < n; i++) /* each ends its chunk first: no inflight after */
		pthread_join(ra->th[i], NULL);
	pthread_mutex_lock(&ra->mu);
	ra->nstarted = 0;
	for (size_t i = 0; i < RA_VOLS; i++) {
		struct ut_fifo_node *nd;

		while (ra->vq[i].used && (nd = ut_fifo_pop(&ra->vq[i].q))) {
			struct ra_job *j = UT_FIFO_ENTRY(nd, struct ra_job, node);

			j->busy = false;
			ra_job_put(ra, j);
		}
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
	pthread_cond_destroy(&ra->dcv);
	free(ra);
}

struct ra_dir {
	int fd;
};

static bool ra_exists(void *arg, const char *name)
{
	struct stat st;

	return fstatat(((struct ra_dir *)arg)->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Add the file nm of dir to j's files: up to its size, or an open's head.
 * Whether it is cached is looked at when the job comes to it (ra_begin). */
static void ra_add(struct vol_ra *ra, struct ra_job *j, struct vol_obj *dir, const char *nm)
{
	struct vol_obj o;

	if (j->nfiles >= RA_JOB_FILES || vol_lookup(dir, &ra_root, nm, strlen(nm), &o) != 0)
		return;
	if (S_ISREG(o.st.st_mode) && o.st.st_size > 0 && vol_fh_make(ra->s, &o, &j->fh[j->nfiles]) == 0) {
		uint64_t size = (uint64_t)o.st.st_size;

		j->ino[j->nfiles] = (uint64_t)o.st.st_ino;
		j->size[j->nfiles++] = j->open && size > VOL_RA_OPEN_HEAD ? VOL_RA_OPEN_HEAD : size;
	}
	vol_obj_cleanup(&o);
}

/* Turn a trigger into its files: the predicted names that exist, and for
 * an open the trigger's own file first when it is a frame of a sequence
 * (a successor exists) or its folder is being played. false: nothing to
 * fetch. */
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
	if (j->open && (n > 0 || j->played)) {
		ra_add(ra, j, &dir, j->name);
		j->self = j->nfiles > 0;
	}
	for (size_t i = 0; i < n; i++)
		ra_add(ra, j, &dir, names[i]);
	vol_obj_cleanup(&dir);
	free(names);
	return j->nfiles > 0;
}

/* Demand first at the tier: while client READs are at the tier
 * (ra->demand), a worker starts a cold chunk only when fewer than
 * VOL_RA_DEMAND_SHARE prefetch reads are there, so a client READ does not
 * queue at the store behind the prefetch of files it will ask for later;
 * with no client READ there, every worker reads. b: the chunk's busy slot
 * (NULL: none); while the worker waits here it is gated, and a client READ
 * of it takes it over (vol_ra_demand_begin): false, the worker drops it. */
static bool ra_gate_enter(struct vol_ra *ra, struct ra_busy *b)
{
	bool go;

	pthread_mutex_lock(&ra->mu);
	if (b) { /* a client READ already waiting for it may take it over now */
		b->gated = true;
		pthread_cond_broadcast(&ra->dcv);
	}
	while (!ra->stop && !(b && b->taken) && ra->demand && ra->pf_cold >= VOL_RA_DEMAND_SHARE)
		pthread_cond_wait(&ra->dcv, &ra->mu);
	go = !(b && b->taken);
	if (b)
		b->gated = false;
	if (go)
		ra->pf_cold++;
	pthread_mutex_unlock(&ra->mu);
	return go;
}

static void ra_gate_leave(struct vol_ra *ra)
{
	pthread_mutex_lock(&ra->mu);
	ra->pf_cold--;
	pthread_cond_broadcast(&ra->dcv);
	pthread_mutex_unlock(&ra->mu);
}

/* Read a chunk ahead: through the cold tier's read hook when it lies
 * there (into the worker's *buf), else into the page cache. b: its busy
 * slot (ra_gate_enter). */
static void ra_read_chunk(struct vol_ra *ra, const struct ra_chunk *c, struct ra_busy *b, uint8_t **buf)
{
	const struct vol_store *s = ra->s;
	struct vol_obj o;
	bool owned = false;
	int fd;

	if (vol_fh_open(ra->s, c->fh.data, c->fh.len, &o) != 0)
		return;
	if ((fd = vol_iofd(&o, &ra_root, false, &owned)) >= 0) {
		if (s->tier && s->tier->cold(s->tier_arg, o.exp->cfg.fsid, &o.st, c->off, (size_t)c->len) > 0) {
			size_t got = 0;

			if (!*buf)
				*buf = malloc(VOL_RA_CHUNK);
			if (!ra_gate_enter(ra, b)) { /* a client READ reads it: not prefetched */
				if (owned)
					close(fd);
				vol_obj_cleanup(&o);
				return;
			}
			if (*buf && s->tier->read_ahead)
				s->tier->read_ahead(s->tier_arg, o.exp->cfg.fsid, fd, &o.st, c->off, *buf,
						    (size_t)c->len, &got);
			else if (*buf)
				s->tier->read(s->tier_arg, o.exp->cfg.fsid, fd, &o.st, c->off, *buf, (size_t)c->len,
					      &got, NULL);
			ra_gate_leave(ra);
		} else if (readahead(fd, (off64_t)c->off, (size_t)c->len) != 0) {
			posix_fadvise(fd, (off_t)c->off, (off_t)c->len, POSIX_FADV_WILLNEED);
		}
		if (owned)
			close(fd);
	}
	atomic_fetch_add_explicit(&o.exp->acct->ra_bytes, c->len, memory_order_relaxed);
	vol_obj_cleanup(&o);
}

/* The cache entry of the job's current file, if it is still the one the
 * job started (mu held). */
static struct ra_file *ra_job_file(struct vol_ra *ra, const struct ra_job *j)
{
	struct ra_file *f = j->fseq ? vol_ra_file_find(ra, j->fsid, j->ino[j->cur]) : NULL;

	return f && f->seq == j->fseq ? f : NULL;
}

/* How far the job fetches its current file: its entry's end (a later
 * READ's job may have moved an open's head to the size), else its own. */
static uint64_t ra_target(struct vol_ra *ra, const struct ra_job *j)
{
	const struct ra_file *f = ra_job_file(ra, j);

	return f ? f->end : j->size[j->cur];
}

/* The job comes to a file it has not begun (mu held): true when it
 * fetches it, from j->off. A file nobody fetched gets a new entry
 * (ra_take_room); one whose prefetch ended short of what the job wants (an
 * open's head) is taken on from where it ended; one being fetched is left
 * to its job, which now goes as far as this one wants. */
static bool ra_begin(struct vol_ra *ra, struct ra_job *j)
{
	struct ra_file *f = vol_ra_file_live(ra, j->fsid, j->ino[j->cur]);
	uint64_t want = j->size[j->cur];

	j->off = 0;
	if (!f)
		return true;
	if (f->end < want)
		f->end = want;
	if (!f->done || f->pend || f->bytes >= f->end)
		return false; /* another job fetches it (as far as want now), or it is cached */
	f->done = false;
	j->fseq = f->seq;
	j->off = f->bytes;
	return true;
}

enum ra_next { RA_DONE, RA_CHUNK };

/* Whether a client READ asked for the job's next chunk since the job was
 * queued (mu held): the client has it or is reading it, so fetching it
 * again would be a second read of the same bytes (a second GET on the cold
 * tier, whose chunk cache hands a chunk a stream read over to it). The job
 * goes on with the next file. */
static bool ra_overtaken(struct vol_ra *ra, const struct ra_job *j)
{
	const struct ra_name *r = &ra->names[vol_ra_name_slot(j->fsid, j->ino[j->cur])];
	uint64_t left = ra_target(ra, j) - j->off;
	uint64_t end = j->off + (left < VOL_RA_CHUNK ? left : VOL_RA_CHUNK);

	return r->valid && r->fsid == j->fsid && r->ino == j->ino[j->cur] && r->dem_tick > j->tick &&
	       r->dem_end >= end;
}

/* Room for the job's next chunk, in order (mu held): false when the cap
 * is reached (its prefetch ends here) or the file went (written). */
static bool ra_take_room(struct vol_ra *ra, struct ra_job *j)
{
	struct ra_file *f;
	uint64_t left = ra_target(ra, j) - j->off;

	j->len = left < VOL_RA_CHUNK ? left : VOL_RA_CHUNK;
	if (!j->fseq) {
		if (!(f = vol_ra_file_slot(ra)))
			return false;
		/* an open's own file keeps the run it had (what predicted it) */
		*f = (struct ra_file){ .valid = true, .fsid = j->fsid, .ino = j->ino[j->cur], .seq = ++ra->seq,
				       .end = j->size[j->cur], .run = j->self && j->cur == 0 ? j->run - 1 : j->run,
				       .fh = j->fh[j->cur], .dir = j->dir };
		j->fseq = f->seq;
	} else if (!(f = ra_job_file(ra, j)) || f->bytes + f->pend != j->off) {
		return false;
	}
	if (!vol_ra_make_room(ra, j->fsid, j->len)) {
		f->done = true; /* its prefetch ends here */
		f->valid = f->bytes + f->pend > 0;
		return false;
	}
	f->pend += j->len;
	return true;
}

/* One step of a job (its owner, without mu): RA_CHUNK (*c is charged and
 * room is taken for it: the caller reads it; the job's cursor moved past
 * it), RA_DONE (no chunk is left, or none may be charged now). */
static enum ra_next ra_step(struct vol_ra *ra, struct ra_job *j, struct ra_chunk *c)
{
	struct vol_export *e;
	struct ra_file *f;
	bool room, charged;

	if (!j->predicted && !ra_predict(ra, j))
		return RA_DONE;
	pthread_mutex_lock(&ra->mu);
	for (;;) {
		while (j->cur < j->nfiles && j->fseq && j->off >= ra_target(ra, j)) {
			if ((f = ra_job_file(ra, j)))
				f->done = true;
			j->cur++;
			j->fseq = 0;
		}
		if (j->cur < j->nfiles && !j->fseq && !ra_begin(ra, j)) {
			j->cur++; /* cached, or another job fetches it: the next */
			continue;
		}
		if (j->cur < j->nfiles && ra_overtaken(ra, j)) {
			if ((f = ra_job_file(ra, j)))
				f->done = true; /* the client reads the rest itself */
			j->cur++;
			j->fseq = 0;
			continue;
		}
		break;
	}
	room = j->cur < j->nfiles && ra_take_room(ra, j);
	pthread_mutex_unlock(&ra->mu);
	if (!room) /* no file left, full, or the file was forgotten (written) meanwhile */
		return RA_DONE;
	pthread_mutex_lock(&ra->s->qos_mu);
	room = ra->s->qos_users > 0;
	pthread_mutex_unlock(&ra->s->qos_mu);
	charged = room && vol_ra_acct(ra, j->fsid, &e);
	if (charged) {
		charged = qos_take(e->acct->qos, j->len, qos_now(ra->s->qos));
		vol_export_unref(e);
	}
	if (!charged) {
		/* no front end serves (no QoS for the volume), the volume went,
		 * or its clients use every token (one waits, or the bucket is
		 * empty): give the room back; the film's next READ starts a job
		 * again */
		pthread_mutex_lock(&ra->mu);
		if ((f = ra_job_file(ra, j)) && f->pend >= j->len) {
			f->pend -= j->len;
			f->valid = f->bytes + f->pend > 0; /* an empty entry would stop a later prediction */
		}
		pthread_mutex_unlock(&ra->mu);
		return RA_DONE;
	}
	pthread_mutex_lock(&ra->mu);
	if ((f = ra_job_file(ra, j)) && f->pend >= j->len) { /* charged: READs of it are hits now */
		f->pend -= j->len;
		f->bytes += j->len;
	}
	pthread_mutex_unlock(&ra->mu);
	c->fh = j->fh[j->cur];
	c->fsid = j->fsid;
	c->ino = j->ino[j->cur];
	c->off = j->off;
	c->len = j->len;
	j->off += j->len;
	return RA_CHUNK;
}

static void *ra_worker(void *arg)
{
	struct vol_ra *ra = arg;
	uint8_t *buf = NULL; /* this worker's: a cold chunk goes through it */

	pthread_mutex_lock(&ra->mu);
	while (!ra->stop) {
		struct ra_job *j = ra_pick(ra);
		enum ra_next next;
		struct ra_chunk c;
		struct ra_vq *vq;

		if (!j) {
			pthread_cond_wait(&ra->cv, &ra->mu);
			continue;
		}
		vq = j->vq; /* j may be gone once it parks; its slot is not (running) */
		pthread_mutex_unlock(&ra->mu);
		next = ra_step(ra, j, &c);
		pthread_mutex_lock(&ra->mu);
		if (next == RA_CHUNK) {
			struct ra_busy *b = NULL;

			/* back in its queue before the read: the next worker takes
			 * its next chunk, or another volume's turn */
			j->inflight++;
			for (size_t i = 0; i < VOL_RA_WORKERS_MAX && !b; i++)
				if (!ra->busy[i].on)
					b = &ra->busy[i];
			if (b) /* one per worker: always one free */
				*b = (struct ra_busy){ .on = true, .fsid = c.fsid, .ino = c.ino, .off = c.off,
						       .len = c.len };
			if (ra->stop) {
				j->busy = false;
			} else {
				ut_fifo_push(&vq->q, &j->node);
				pthread_cond_signal(&ra->cv);
			}
			pthread_mutex_unlock(&ra->mu);
			ra_read_chunk(ra, &c, b, &buf);
			pthread_mutex_lock(&ra->mu);
			if (b) {
				b->on = false;
				pthread_cond_broadcast(&ra->dcv);
			}
			j->inflight--;
		} else if (next == RA_DONE) {
			j->busy = false;
		}
		ra_job_put(ra, j);
		vq->running--;
		ra_vq_put(vq);
	}
	pthread_mutex_unlock(&ra->mu);
	free(buf);
	return NULL;
}

void vol_ra_trigger(struct vol_ra *ra, const struct ra_name *r, int depth, unsigned run, unsigned flags)
{
	struct ra_vq *vq;
	struct ra_job *j;

	if (ra->stop || ra->njobs >= RA_JOBS || !(vq = ra_vq_get(ra, r->fsid)))
		return;
	if (vq->njobs >= RA_VOL_JOBS || !(j = calloc(1, sizeof(*j)))) {
		ra_vq_put(vq);
		return;
	}
	while (ra->nstarted < ra->nworkers && pthread_create(&ra->th[ra->nstarted], NULL, ra_worker, ra) == 0)
		ra->nstarted++;
	if (!ra->nstarted) {
		free(j);
		ra_vq_put(vq);
		return;
	}
	j->ra = ra;
	j->vq = vq;
	j->busy = true;
	j->fsid = r->fsid;
	j->dir = r->dir;
	memcpy(j->name, r->name, sizeof(j->name));
	j->depth = depth;
	j->open = (flags & RA_T_OPEN) != 0;
	j->played = (flags & RA_T_PLAYED) != 0;
	j->tick = ++ra->tick;
	j->run = run + 1;
	ra->njobs++;
	vq->njobs++;
	ut_fifo_push(&vq->q, &j->node);
	pthread_cond_signal(&ra->cv);
}

/* Whether a worker reads a chunk of ino that overlaps [off, off + len) now
 * (mu held). One whose worker still waits at the gate is taken over
 * instead (the client READ fetches it, as demand): waiting for it would
 * hold the READ behind the other clients' demand that holds the gate. */
static bool ra_busy_on(struct vol_ra *ra, uint64_t fsid, uint64_t ino, uint64_t off, uint64_t len)
{
	bool wait = false;

	for (size_t i = 0; i < VOL_RA_WORKERS_MAX; i++) {
		struct ra_busy *b = &ra->busy[i];

		if (!b->on || b->taken || b->fsid != fsid || b->ino != ino || b->off >= off + len ||
		    off >= b->off + b->len)
			continue;
		if (b->gated) {
			b->taken = true;
			pthread_cond_broadcast(&ra->dcv); /* its worker drops it */
		} else {
			wait = true;
		}
	}
	return wait;
}

void vol_ra_asked(struct vol_ra *ra, struct ra_name *r, uint64_t off, uint64_t len)
{
	/* from the start: a new play of the file, what an earlier one asked
	 * for does not count */
	if (off == 0 || off + len > r->dem_end)
		r->dem_end = off + len;
	r->dem_tick = ++ra->tick;
}

void vol_ra_demand_begin(struct vol_obj *obj, uint64_t off, uint64_t len)
{
	struct vol_ra *ra = obj->exp->store->ra;
	uint64_t fsid = obj->exp->cfg.fsid, ino = (uint64_t)obj->st.st_ino;
	struct ra_name *r;

	pthread_mutex_lock(&ra->mu);
	r = &ra->names[vol_ra_name_slot(fsid, ino)];
	if (!obj->snap && r->valid && r->fsid == fsid && r->ino == ino)
		vol_ra_asked(ra, r, off, len);
	/* a prefetch of these bytes is on its way: wait for it, then read
	 * what it brought (the page cache, or the tier's chunk cache) */
	while (!obj->snap && !ra->stop && len && ra_busy_on(ra, fsid, ino, off, len))
		pthread_cond_wait(&ra->dcv, &ra->mu);
	/* counted only now: the chunk waited for is not held at the gate */
	ra->demand++;
	pthread_mutex_unlock(&ra->mu);
}

void vol_ra_demand_end(struct vol_obj *obj)
{
	struct vol_ra *ra = obj->exp->store->ra;

	pthread_mutex_lock(&ra->mu);
	ra->demand--;
	pthread_cond_broadcast(&ra->dcv);
	pthread_mutex_unlock(&ra->mu);
}
