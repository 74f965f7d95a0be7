/* agent_bkpq: the agent's backup worker (issue 21, phase 2; the agent starts
 * it, agent_bkjob.c): one thread that runs the intent's backup
 * and delete jobs (api/api_intent_backup.h) with agent_backup_run, off the
 * apply path and one at a time, and keeps each job's latest report for the
 * status.
 *
 * - agent_bkpq_offer hands it the jobs of an intent (a job is its id and
 *   its op: a backup's delete is another job): one it has not seen
 *   is queued; an id it has stays as it is (a job finished READY, DELETED or
 *   ERROR is not run again while the intent keeps offering it); an id the
 *   intent no longer names is forgotten (its report goes). So a job re-runs
 *   after an agent restart, which the engine makes idempotent.
 * - A job is run with the source the caller's source_fn prepares (the
 *   snapshot folder, or a temporary snapshot it makes), and done_fn is
 *   called after every run (to remove a temporary snapshot).
 * - -EAGAIN (the store down, or source_fn's) retries the job with backoff
 *   (retry_ms, doubling, at most 32 x retry_ms between tries) while it
 *   reports UPLOADING with the reason; after max_tries the job is ERROR
 *   naming the attempts and the last reason.
 * - While a backup runs, its report carries the engine's bytes done/total.
 * Thread-safe: offer and report may be called from any thread. */
#ifndef AQ_AGENT_BKPQ_H
#define AQ_AGENT_BKPQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "api/api_intent_backup.h"

struct agent_bkpq;

struct agent_bkpq_cfg {
	const char *shelf;
	unsigned retry_ms;      /* first pause after -EAGAIN; 0 = 1000 */
	unsigned max_tries;     /* 0 = 10 */
	/* Prepare job's source folder into src (cap bytes); *strict: a btrfs
	 * snapshot; for a restoreFiles job the live folder the files go into.
	 * Not called for deletes. A negative errno fails the run
	 * (-EAGAIN: retried). */
	int (*source_fn)(void *arg, const struct api_intent_backup *job, char *src, size_t cap, bool *strict,
			 aq_msg *msg);
	void (*done_fn)(void *arg, const struct api_intent_backup *job); /* may be NULL */
	/* Reads len bytes at off of the source file open as fd (path relative
	 * to the source) of job: the count, or -errno (agent_backup_opts.read);
	 * may be NULL (pread). Called from the worker's backup threads. */
	ssize_t (*read_fn)(void *arg, const struct api_intent_backup *job, int fd, const char *path, void *buf, size_t len,
			   uint64_t off);
	void *arg;
};

/* Starts the thread. AQ_ENOMEM / AQ_EIO. */
int agent_bkpq_new(const struct agent_bkpq_cfg *cfg, struct agent_bkpq **out);
/* Stops after the running job and joins; NULL is fine. */
void agent_bkpq_free(struct agent_bkpq *q);
/* The intent's jobs (n <= API_INTENT_MAX_BACKUPS, else AQ_EINVAL). */
int agent_bkpq_offer(struct agent_bkpq *q, const struct api_intent_backup *jobs, size_t n);
/* Every known job's report (api_intent_backup_state_encode), a new array;
 * a queued job reports UPLOADING with bytes 0. NULL on ENOMEM. */
json_t *agent_bkpq_report(struct agent_bkpq *q);

#endif
