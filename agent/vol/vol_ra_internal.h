/* vol_ra_internal: what the two halves of cross-file read-ahead share:
 * vol_ra_fetch.c (the worker pool, its per-volume queues and the jobs) and
 * vol_ra_cache.c (the tables of names and prefetched files, the caps, and
 * the hooks of the store's read, name and write paths). vol_ra.h has the
 * contract.
 *
 * Locks (no other lock is taken while ra->mu is held, except the export
 * set's read lock inside vol_find_fsid and s->qos_mu, which never take
 * ra->mu; qos_take and qos_refund are called without ra->mu):
 * - ra->mu guards every field of struct vol_ra below it (the tables, the
 *   queues, the counters, nworkers/nstarted, stop), every field of a ra_vq,
 *   and of a job: busy, inflight and its link in a queue.
 * - The rest of a job (its cursor: predicted, cur, off, len, fseq, its
 *   files) belongs to whoever owns it, without a lock: the worker that
 *   popped it from its queue (under ra->mu). So one thread at a time moves
 *   a job's cursor, and each hand-over goes through ra->mu, which orders
 *   the accesses. A worker that handed out a chunk keeps only its own copy
 *   of it (struct vol_ra_chunk) and touches the job again only under ra->mu
 *   (inflight).
 * - A job is freed (vol_ra_job_put) only under ra->mu, when nobody owns
 *   its cursor (!busy) and no chunk of it is being read (!inflight); a
 *   queue slot is reused only when it holds no job and no worker runs one
 *   of its jobs (njobs == 0, running == 0).
 * - The counters in the export's vol_acct are atomics.
 * - ra->dcv (with ra->mu) wakes client READs waiting for a chunk in flight
 *   and workers waiting for demand to leave them room at the tier.
 */
#ifndef AQ_AGENT_VOL_RA_INTERNAL_H
#define AQ_AGENT_VOL_RA_INTERNAL_H

#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_ra.h"
#include "util/ut_fifo.h"

#define RA_NAMES 1024          /* remembered names (direct-mapped by inode) */
#define RA_FILES 256           /* files in the cache */
#define RA_JOBS 256            /* jobs alive in the node (queued, running or parked) */
#define RA_VOL_JOBS 32         /* ... of one volume: no volume takes every slot */
#define RA_VOLS 64             /* volumes with jobs at once (one queue each) */
#define RA_JOB_FILES (API_READ_AHEAD_MAX_DEPTH + 1) /* the next files, and an open's own */

struct ra_name {
	bool valid;
	uint64_t fsid, ino;
	struct vol_fh dir;
	char name[VOL_RA_NAME_MAX + 1];
	uint64_t dem_end;      /* highest end a client READ of it asked for ... */
	uint64_t dem_tick;     /* ... and when (ra->tick; 0: never) */
};

struct ra_file {
	bool valid, done;      /* done: its prefetch ended (bytes is final) */
	uint64_t fsid, ino, seq;
	uint64_t bytes;        /* from offset 0: charged to QoS (a READ below is a hit) */
	uint64_t pend;         /* after bytes: room taken, charge parked in QoS */
	uint64_t hi;           /* highest end a client READ reached */
	uint64_t end;          /* how far its prefetch is to go: the size, or an open's head */
	unsigned run;          /* files of its stream prefetched in a row up to it */
	struct vol_fh fh;
	struct vol_fh dir;     /* its folder (vol_read_ahead_open: a folder being played) */
};

/* One volume's queue of jobs (a slot is used while njobs || running). */
struct ra_vq {
	bool used;
	uint64_t fsid;
	struct ut_fifo q;
	unsigned njobs;        /* its jobs alive */
	unsigned running;      /* workers stepping one of them now */
};

/* A chunk a worker reads now: a client READ that overlaps it waits for it
 * (vol_ra_demand_begin) instead of reading the same bytes a second time.
 * While its worker still waits at the demand gate (gated: its GET has not
 * started, ra_gate_enter) the READ does not wait behind other clients'
 * demand for it: it takes the chunk over (taken) and reads it itself, as
 * demand, and the worker drops it. */
struct ra_busy {
	bool on;
	bool gated;            /* its worker waits at the gate: no GET yet */
	bool taken;            /* a client READ took it over: the worker drops it */
	uint64_t fsid, ino, off, len;
};

struct ra_job {
	struct ut_fifo_node node;
	struct vol_ra *ra;
	struct ra_vq *vq;
	uint64_t fsid;
	bool busy;             /* mu: its cursor is owned (queued or stepped) */
	unsigned inflight;     /* mu: chunks handed out and being read */
	bool predicted;
	bool open;             /* an open's (vol_read_ahead_open): the trigger's own head first, heads only */
	bool played;           /* ... whose folder is being played: its head even with no successor */
	bool self;             /* fh[0] is the trigger's own file (an open's) */
	struct vol_fh dir;     /* before prediction: the trigger's folder ... */
	char name[VOL_RA_NAME_MAX + 1]; /* ... and name */
	int depth;
	uint64_t tick;         /* ra->tick when it was queued */
	unsigned run;          /* the run its new cache entries get (the trigger's + 1) */
	size_t nfiles, cur;    /* after: the files, in order (an open's: the trigger first) */
	struct vol_fh fh[RA_JOB_FILES];
	uint64_t ino[RA_JOB_FILES];
	uint64_t size[RA_JOB_FILES]; /* how far to fetch each: its size, or an open's head */
	uint64_t fseq;         /* the cache entry of the current file (its seq; 0: not begun) */
	uint64_t off, len;     /* the next chunk / the chunk charged */
};

struct vol_ra {
	struct vol_store *s;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	unsigned nworkers;     /* the pool's size (vol_store_set_read_ahead_workers) */
	unsigned nstarted;     /* started with the first job */
	pthread_t th[VOL_RA_WORKERS_MAX];
	size_t njobs, rr;      /* jobs alive; the queue served last */
	uint64_t node_cap, vol_cap, seq;
	bool ramp;             /* depth grows with the stream's run (vol_store_set_read_ahead_ramp) */
	uint64_t tick;         /* orders triggers and client READs */
	unsigned demand;       /* client READs at the tier now (vol_ra_demand_begin) */
	unsigned pf_cold;      /* prefetch reads of cold chunks at the tier now */
	pthread_cond_t dcv;    /* demand, pf_cold or busy went down */
	struct ra_busy busy[VOL_RA_WORKERS_MAX]; /* the chunks the workers read now */
	struct ra_vq vq[RA_VOLS];
	struct ra_name names[RA_NAMES];
	struct ra_file files[RA_FILES];
};

/* vol_ra_cache.c (mu held) */
size_t vol_ra_name_slot(uint64_t fsid, uint64_t ino);
struct vol_acct *vol_ra_acct(struct vol_ra *ra, uint64_t fsid, struct vol_export **e);
struct ra_file *vol_ra_file_find(struct vol_ra *ra, uint64_t fsid, uint64_t ino);
/* The entry of a file a prediction names, if it still holds or will hold
 * what the client has not read; an entry read whole is forgotten (the film
 * is played again: fetch it again, and its READs are no hits). */
struct ra_file *vol_ra_file_live(struct vol_ra *ra, uint64_t fsid, uint64_t ino);
/* A slot for a new cache entry (evicting one when all are taken). */
struct ra_file *vol_ra_file_slot(struct vol_ra *ra);
/* Room for len more unread bytes of fsid within the caps (may evict). */
bool vol_ra_make_room(struct vol_ra *ra, uint64_t fsid, uint64_t len);

/* vol_ra_fetch.c (mu held): a client READ asked for [off, off + len) of
 * r's file (at the tier before it reads, vol_ra_demand_begin; from the
 * page cache once read, vol_ra_read): a job skips what was asked since it
 * was queued (an open's head of a file its client reads already). */
void vol_ra_asked(struct vol_ra *ra, struct ra_name *r, uint64_t off, uint64_t len);
/* vol_ra_fetch.c (mu held): a job for the files after r's, up to depth of
 * them; run: the trigger's own run (0: it was not prefetched); flags:
 * RA_T_OPEN (an open's: r's own head first, then heads only), RA_T_PLAYED
 * (r's folder is being played: its head even when no successor exists). */
#define RA_T_OPEN 1u
#define RA_T_PLAYED 2u
void vol_ra_trigger(struct vol_ra *ra, const struct ra_name *r, int depth, unsigned run, unsigned flags);

#endif
