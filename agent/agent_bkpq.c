/* agent_bkpq: the backup worker thread (see agent_bkpq.h). A fixed table
 * of API_INTENT_MAX_BACKUPS slots under one mutex; the thread takes the
 * oldest queued slot whose retry time has come, runs it unlocked, and
 * publishes the report. */
#include "agent/agent_bkpq.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "agent/agent_backup.h"

enum slot_phase { SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING, SLOT_FINISHED };

struct slot {
	enum slot_phase phase;
	struct api_intent_backup job;
	struct api_intent_backup_state st;
	unsigned tries;
	uint64_t not_before_ms;   /* monotonic: the next try's earliest time */
	uint64_t seq;             /* queue order */
	bool offered;             /* named by the last offer */
	bool forget;              /* dropped by an offer while running */
};

struct agent_bkpq {
	struct agent_bkpq_cfg cfg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool stop;
	uint64_t seq;
	struct slot slots[API_INTENT_MAX_BACKUPS];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The next slot to run, or NULL; *wait_ms how long until one is due. */
static struct slot *next_due(struct agent_bkpq *q, uint64_t now, uint64_t *wait_ms)
{
	struct slot *best = NULL;

	*wait_ms = 60000;
	for (size_t i = 0; i < API_INTENT_MAX_BACKUPS; i++) {
		struct slot *s = &q->slots[i];

		if (s->phase != SLOT_QUEUED)
			continue;
		if (s->not_before_ms > now) {
			if (s->not_before_ms - now < *wait_ms)
				*wait_ms = s->not_before_ms - now;
			continue;
		}
		if (!best || s->seq < best->seq)
			best = s;
	}
	return best;
}

/* The running job's bytes done / total, for the report while it runs. */
struct run_progress {
	struct agent_bkpq *q;
	struct slot *s;
};

static void run_progress(void *arg, uint64_t done, uint64_t total)
{
	struct run_progress *p = arg;

	pthread_mutex_lock(&p->q->mu);
	if (p->s->phase == SLOT_RUNNING) {
		p->s->st.state = API_INTENT_BKP_UPLOADING;
		p->s->st.bytes_total = total;
		p->s->st.bytes_done = done <= total ? done : total;
	}
	pthread_mutex_unlock(&p->q->mu);
}

/* The caller's reader with the job it reads for. */
struct run_read {
	struct agent_bkpq *q;
	const struct api_intent_backup *job;
};

static ssize_t run_read(void *arg, int fd, const char *path, void *buf, size_t len, uint64_t off)
{
	struct run_read *r = arg;

	return r->q->cfg.read_fn(r->q->cfg.arg, r->job, fd, path, buf, len, off);
}

static int run_one(struct agent_bkpq *q, struct slot *s, const struct api_intent_backup *job,
		   struct api_intent_backup_state *st)
{
	struct run_progress p = { .q = q, .s = s };
	struct run_read r = { .q = q, .job = job };
	struct agent_backup_opts o = { .progress = run_progress, .progress_arg = &p,
				       .read = q->cfg.read_fn ? run_read : NULL, .read_arg = &r };
	char src[4096] = "";
	aq_msg why = { .text = "" };
	int rc;

	if (job->op == API_INTENT_BKP_BACKUP || job->op == API_INTENT_BKP_RESTORE_FILES) {
		rc = q->cfg.source_fn(q->cfg.arg, job, src, sizeof(src), &o.strict_ident, &why);
		if (rc != 0) {
			memset(st, 0, sizeof(*st));
			snprintf(st->id, sizeof(st->id), "%s", job->id);
			st->state = rc == -EAGAIN ? API_INTENT_BKP_UPLOADING : API_INTENT_BKP_ERROR;
			snprintf(st->detail, sizeof(st->detail), "%s: %s",
				 job->op == API_INTENT_BKP_BACKUP ? "the source snapshot" : "the destination folder",
				 why.text[0] ? why.text : strerror(-rc));
			return rc;
		}
		o.src = src;
	}
	rc = agent_backup_run(q->cfg.shelf, job, &o, st);
	if (q->cfg.done_fn && job->op == API_INTENT_BKP_BACKUP)
		q->cfg.done_fn(q->cfg.arg, job);
	return rc;
}

static void *worker(void *arg)
{
	struct agent_bkpq *q = arg;

	pthread_mutex_lock(&q->mu);
	while (!q->stop) {
		struct api_intent_backup job;
		struct api_intent_backup_state st;
		uint64_t wait, now = now_ms();
		struct slot *s = next_due(q, now, &wait);
		int rc;

		if (!s) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)(wait / 1000);
			ts.tv_nsec += (long)(wait % 1000) * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&q->cv, &q->mu, &ts);
			continue;
		}
		s->phase = SLOT_RUNNING;
		job = s->job;
		pthread_mutex_unlock(&q->mu);
		rc = run_one(q, s, &job, &st);
		OPENSSL_cleanse(job.key_hex, sizeof(job.key_hex));
		pthread_mutex_lock(&q->mu);
		if (s->forget) {
			memset(s, 0, sizeof(*s));
			continue;
		}
		s->tries++;
		if (rc == -EAGAIN && s->tries < q->cfg.max_tries) {
			unsigned shift = s->tries - 1 < 5 ? s->tries - 1 : 5;

			s->phase = SLOT_QUEUED;
			s->not_before_ms = now_ms() + ((uint64_t)q->cfg.retry_ms << shift);
		} else {
			s->phase = SLOT_FINISHED;
			if (rc == -EAGAIN) {
				char last[sizeof(st.detail)];

				snprintf(last, sizeof(last), "%s", st.detail);
				st.state = API_INTENT_BKP_ERROR;
				snprintf(st.detail, sizeof(st.detail), "gave up after %u attempts: %s", s->tries, last);
			}
		}
		s->st = st;
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int agent_bkpq_new(const struct agent_bkpq_cfg *cfg, struct agent_bkpq **out)
{
	struct agent_bkpq *q = calloc(1, sizeof(*q));

	if (!q)
		return AQ_ENOMEM;
	q->cfg = *cfg;
	if (!q->cfg.retry_ms)
		q->cfg.retry_ms = 1000;
	if (!q->cfg.max_tries)
		q->cfg.max_tries = 10;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	if (pthread_create(&q->thread, NULL, worker, q) != 0) {
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		free(q);
		return AQ_EIO;
	}
	*out = q;
	return AQ_OK;
}

void agent_bkpq_free(struct agent_bkpq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	OPENSSL_cleanse(q->slots, sizeof(q->slots));
	free(q);
}

/* A job is its id and its op: the delete of a backup is a new job. */
static struct slot *find(struct agent_bkpq *q, const struct api_intent_backup *job)
{
	for (size_t i = 0; i < API_INTENT_MAX_BACKUPS; i++)
		if (q->slots[i].phase != SLOT_FREE && q->slots[i].job.op == job->op &&
		    strcmp(q->slots[i].job.id, job->id) == 0)
			return &q->slots[i];
	return NULL;
}

/* A free slot queued with job, or NULL when all are taken (n <= the table
 * size and forgotten slots are freed, so only running forgotten ones can
 * be in the way until they end). */
static struct slot *claim(struct agent_bkpq *q, const struct api_intent_backup *job)
{
	for (size_t i = 0; i < API_INTENT_MAX_BACKUPS; i++) {
		struct slot *s = &q->slots[i];

		if (s->phase != SLOT_FREE)
			continue;
		memset(s, 0, sizeof(*s));
		s->phase = SLOT_QUEUED;
		s->job = *job;
		s->seq = ++q->seq;
		snprintf(s->st.id, sizeof(s->st.id), "%s", job->id);
		s->st.state = API_INTENT_BKP_UPLOADING;
		return s;
	}
	return NULL;
}

int agent_bkpq_offer(struct agent_bkpq *q, const struct api_intent_backup *jobs, size_t n)
{
	if (n > API_INTENT_MAX_BACKUPS)
		return AQ_EINVAL;
	pthread_mutex_lock(&q->mu);
	for (size_t i = 0; i < API_INTENT_MAX_BACKUPS; i++)
		q->slots[i].offered = false;
	for (size_t j = 0; j < n; j++) {
		struct slot *s = find(q, &jobs[j]);

		if (s) {
			s->offered = true;
			s->forget = false;
		}
	}
	/* what the intent no longer names is forgotten (a running job when it
	 * ends), before new jobs take slots */
	for (size_t i = 0; i < API_INTENT_MAX_BACKUPS; i++) {
		struct slot *s = &q->slots[i];

		if (s->phase == SLOT_RUNNING && !s->offered)
			s->forget = true;
		else if (s->phase != SLOT_FREE && s->phase != SLOT_RUNNING && !s->offered)
			memset(s, 0, sizeof(*s));
	}
	for (size_t j = 0; j < n; j++)
		if (!find(q, &jobs[j]))
			claim(q, &jobs[j]);
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return AQ_OK;
}

json_t *agent_bkpq_report(struct agent_bkpq *q)
{
	json_t *out = json_array();

	pthread_mutex_lock(&q->mu);
	for (size_t i = 0; out && i < API_INTENT_MAX_BACKUPS; i++) {
		const struct slot *s = &q->slots[i];

		if (s->phase != SLOT_FREE && !s->forget && json_array_append_new(out, api_intent_backup_state_encode(&s->st)))
			break;
	}
	pthread_mutex_unlock(&q->mu);
	return out;
}
