/* srv_pusher: the reconciler's pool of pushers (see srv_pusher.h).
 *
 * Why a pool: a visit is a few database reads and writes around one
 * blocking HTTP round trip to the node's agent (srv_push.h, up to its 5 s
 * timeout). One thread visiting the marked nodes one after another made
 * every create wait for the visits queued before its node's, a slow node's
 * included (bench/sim/REPORT.md: 64-66 s from create to READY on
 * PostgreSQL at 1,000 nodes). Here a FIFO of nodes feeds a fixed number of
 * threads; a node is in the FIFO or in flight at most once (busy), which
 * keeps each node's visits in order and bounds the FIFO by the node count.
 */
#include "server/srv_pusher.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "server/srv_lead.h"
#include "server/srv_metrics.h"
#include "server/srv_node.h"
#include "server/srv_push.h"
#include "server/srv_visit.h"
#include "util/ut_clock.h"
#include "util/ut_log.h"

struct srv_pusher {
	struct srv *srv;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	/* no writer gate: the visits' transactions (a generation, the finish
	 * of what a node applied) are batched (srv_visit.h: one group body,
	 * one read, one fence check for every pusher's and status report's
	 * request queued meanwhile) through db_group_run (db.h). Before, eight pushers each committing crowded out the
	 * creates and the status reports on db.c's one writer mutex, and one
	 * pusher at a time writing made the visits drain at one commit each
	 * (bench/sim/REPORT.md) */
	int nthreads;
	pthread_t *threads;
	/* the current epoch and its fence (epoch -1: not leading) */
	int64_t epoch;
	struct db_fence fence;
	/* [{node, mark, rung, epoch}] waiting for a thread: [0] the nodes a
	 * change marked or rang for (a create's), taken first; [1] the others
	 * (the sweep, a full pass, a node behind), so that a full pass over
	 * 1,000 nodes never queues a create's node behind them */
	json_t *fifo[2];
	json_t *busy;   /* {node name: again (bool)}: queued or in flight */
	json_t *queued; /* {node name: its job}: in a FIFO, not yet taken */
	json_t *built;  /* {node name: mark} of the visits that built the intent,
			 * for the pass to clear in one transaction */
	json_t *pushes; /* {node name: {at, applied, nid}} of this epoch's pushes */
};

/* The newest generation a node is known to have applied: from its status
 * reports (durable) or from the answer to our last push (pushes, in memory,
 * counted only for the node's current incarnation: a node deleted and
 * joined again starts over). Under p->lock. */
static int64_t pu_applied(const struct srv_pusher *p, const json_t *node)
{
	const json_t *e = json_object_get(p->pushes, api_json_str(node, "name", ""));
	int64_t durable = api_json_int64(node, "appliedGeneration", 0);
	int64_t pushed = api_json_int64(e, "applied", 0);

	if (strcmp(api_json_str(e, "nid", ""), api_json_str(json_object_get(node, "internal"), "incarnation", "")) != 0)
		pushed = 0;
	return durable > pushed ? durable : pushed;
}

bool srv_pusher_behind(struct srv_pusher *p, const json_t *node)
{
	bool behind;

	pthread_mutex_lock(&p->lock);
	behind = pu_applied(p, node) < api_json_int64(node, "generation", 0);
	pthread_mutex_unlock(&p->lock);
	return behind;
}

/* Is a push due: not applied, or the last one older than repush_ms? */
static bool pu_due(struct srv_pusher *p, const json_t *node, int64_t gen, int64_t now)
{
	bool due;

	pthread_mutex_lock(&p->lock);
	due = pu_applied(p, node) < gen ||
	      now - api_json_int64(json_object_get(p->pushes, api_json_str(node, "name", "")), "at", 0) >=
		      p->srv->cfg.repush_ms;
	pthread_mutex_unlock(&p->lock);
	return due;
}

/* Remember what a push of epoch learnt (not when the epoch is over). */
static void pu_learnt(struct srv_pusher *p, int64_t epoch, const char *nn, json_t *what)
{
	pthread_mutex_lock(&p->lock);
	if (epoch == p->epoch) {
		if (what)
			json_object_set(p->pushes, nn, what);
		else
			json_object_del(p->pushes, nn);
	}
	pthread_mutex_unlock(&p->lock);
	json_decref(what);
}

/* The node answered a generation above its own (it kept an intent.json of
 * an earlier incarnation, or the database was restored from a backup): it
 * would refuse every push as stale. Its generation jumps past the answer,
 * so the next push is applied; nothing is taken as applied meanwhile. */
struct pu_past {
	const struct db_fence *fence;
	const char *nn;
	int64_t applied;
};

static int pu_push_past_body(struct db *db, void *arg)
{
	const struct pu_past *a = arg;
	json_t *node = NULL;
	int rc;

	if ((rc = srv_lead_fence(db, a->fence)) != AQ_OK || (rc = db_get(db, a->nn, &node)) != AQ_OK)
		goto out;
	if (a->applied >= api_json_int64(node, "generation", 0)) {
		char id[32];

		snprintf(id, sizeof(id), "gen-%lld", (long long)a->applied + 1);
		UT_WARN("srv_reconcile", id, "node %s gen=%lld: it reports generation %lld, above its own %lld: pushing %lld",
			a->nn, (long long)a->applied + 1, (long long)a->applied,
			(long long)api_json_int64(node, "generation", 0), (long long)a->applied + 1);
		json_object_set_new(node, "generation", json_integer(a->applied + 1));
		rc = srv_node_save(db, node);
	}
out:
	json_decref(node);
	return rc;
}

static int pu_push_past(struct db *db, const struct db_fence *fence, const char *nn, int64_t applied)
{
	return db_group_run(db, DB_GROUP_RECON, pu_push_past_body, &(struct pu_past){ .fence = fence, .nn = nn, .applied = applied });
}

/* One visit of node n at epoch with fence: 1 pushed, -1 a push failed, 0
 * none was due, -2 the intent could not be built (a db error: its mark
 * stays). ns[] gets each phase's time (srv_metrics.h). */
static int pu_visit(struct srv_pusher *p, struct db *db, const struct db_fence *fence, int64_t epoch,
		    const json_t *n, uint64_t ns[SRV_VISIT_PHASES])
{
	struct srv *srv = p->srv;
	const char *nn = api_json_str(n, "name", "");
	struct srv_visit_intent ri = { .intent = NULL };
	json_t *payload = NULL, *node = NULL, *failed = NULL;
	char err[512] = "";
	int64_t gen = 0, applied = -1, now = ut_clock_real_ms();
	uint64_t t = ut_clock_mono_ns();
	int pushed = 0, rc;
	bool more = false;

	if (srv_visit_intent_build(&srv->cfg.math, db, n, &ri) != AQ_OK) {
		pushed = -2;
		goto out;
	}
	ns[SRV_VISIT_BUILD] = ut_clock_mono_ns() - t;
	t = ut_clock_mono_ns();
	rc = srv_visit_generation(&srv->cfg.math, db, fence, n, &ri, &gen, &more);
	if (rc != AQ_OK || db_get(db, nn, &node) != AQ_OK) {
		pushed = -2; /* not built: its dirty mark stays */
		goto out;
	}
	ns[SRV_VISIT_GENERATION] = ut_clock_mono_ns() - t;
	UT_DEBUG("srv_reconcile", NULL, "node %s: intent built, %zu volumes, generation %lld", nn,
		 json_array_size(json_object_get(ri.intent, "volumes")), (long long)gen);
	if (more) /* a placement changed while its intent was built: build again */
		srv_kick(srv, nn);
	if (!pu_due(p, node, gen, now))
		goto out;
	payload = json_deep_copy(ri.intent);
	json_object_set_new(payload, "generation", json_integer(gen));
	t = ut_clock_mono_ns();
	if (srv_push_intent(srv, node, payload, &applied, &failed, err, sizeof(err)) != AQ_OK) {
		char id[32];

		ns[SRV_VISIT_PUSH] = ut_clock_mono_ns() - t;
		snprintf(id, sizeof(id), "gen-%lld", (long long)gen);
		UT_WARN("srv_reconcile", id, "node %s gen=%lld: %s", nn, (long long)gen, err);
		pushed = -1;
		goto out;
	}
	ns[SRV_VISIT_PUSH] = ut_clock_mono_ns() - t;
	pushed = 1;
	if (applied > gen) {
		pu_learnt(p, epoch, nn, NULL);
		rc = pu_push_past(db, fence, nn, applied);
		if (rc == AQ_OK)
			srv_kick(srv, nn);
		goto out;
	}
	/* what a push learnt stays in memory: the durable appliedGeneration
	 * comes with the node's own status report */
	pu_learnt(p, epoch, nn,
		  json_pack("{s:I,s:I,s:s}", "at", (json_int_t)now, "applied", (json_int_t)applied, "nid",
			    api_json_str(json_object_get(node, "internal"), "incarnation", "")));
	/* what the node could not serve, and what could not even be sent */
	if (!json_is_array(failed)) {
		json_decref(failed);
		failed = json_array();
	}
	json_array_extend(failed, ri.bad);
	t = ut_clock_mono_ns();
	srv_visit_applied(srv, db, nn, applied, failed);
	ns[SRV_VISIT_APPLIED] = ut_clock_mono_ns() - t;
out:
	srv_visit_intent_cleanup(&ri);
	json_decref(failed);
	json_decref(payload);
	json_decref(node);
	return pushed;
}

/* A thread: take the oldest queued node, visit it, clear its mark, let
 * the node be queued again (and ring for it when a pass asked meanwhile). */
static void *pu_main(void *arg)
{
	struct srv_pusher *p = arg;
	struct db *db = NULL;
	aq_msg msg = { .text = "" };

	if (db_open(p->srv->cfg.db_path, &db, &msg) != AQ_OK)
		UT_ERROR("srv_reconcile", NULL, "pusher: %s", msg.text);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		uint64_t ns[SRV_VISIT_PHASES] = { 0 };
		struct db_fence fence;
		json_t *job;
		const char *nn;
		int64_t epoch, rung;
		bool again;
		int r = -2, q;

		while (!p->stop && json_array_size(p->fifo[0]) == 0 && json_array_size(p->fifo[1]) == 0)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->stop)
			break;
		q = json_array_size(p->fifo[0]) ? 0 : 1;
		job = json_incref(json_array_get(p->fifo[q], 0));
		json_array_remove(p->fifo[q], 0);
		json_object_del(p->queued, api_json_str(json_object_get(job, "node"), "name", ""));
		epoch = api_json_int64(job, "epoch", -1);
		fence = p->fence;
		nn = api_json_str(json_object_get(job, "node"), "name", "");
		if (epoch == p->epoch && db) {
			pthread_mutex_unlock(&p->lock);
			rung = api_json_int64(job, "rung", 0);
			if (rung > 0 && ut_clock_real_ms() > rung)
				ns[SRV_VISIT_WAIT] = (uint64_t)(ut_clock_real_ms() - rung) * 1000000ull;
			r = pu_visit(p, db, &fence, epoch, json_object_get(job, "node"), ns);
			/* its mark as the pass read it (a write since keeps it), for
			 * the next pass to clear with the others in one transaction:
			 * one commit less a visit */
			pthread_mutex_lock(&p->lock);
			if (r != -2 && json_object_get(job, "mark"))
				json_object_set(p->built, nn, json_object_get(job, "mark"));
			pthread_mutex_unlock(&p->lock);
			srv_metrics_visit(ns, rung > 0, r);
			pthread_mutex_lock(&p->lock);
		}
		again = json_is_true(json_object_get(p->busy, nn));
		json_object_del(p->busy, nn);
		if (again && !p->stop) {
			char name[600];

			snprintf(name, sizeof(name), "%s", nn);
			pthread_mutex_unlock(&p->lock);
			srv_kick(p->srv, name);
			pthread_mutex_lock(&p->lock);
		}
		json_decref(job);
	}
	pthread_mutex_unlock(&p->lock);
	db_close(db);
	return NULL;
}

/* The queued (not in flight) job of node nn, or NULL (p->queued: not a
 * search of the FIFOs, which a full pass over many nodes would make
 * quadratic); *q its queue. Under p->lock. */
static json_t *pu_queued(struct srv_pusher *p, const char *nn, int *q)
{
	json_t *job = json_object_get(p->queued, nn);

	if (job)
		*q = (int)api_json_int64(job, "q", 1);
	return job;
}

/* Move a queued job from FIFO q to the end of FIFO to. Under p->lock. */
static void pu_requeue(struct srv_pusher *p, json_t *job, int q, int to)
{
	size_t i;

	for (i = 0; i < json_array_size(p->fifo[q]) && json_array_get(p->fifo[q], i) != job; i++)
		;
	json_object_set_new(job, "q", json_integer(to));
	json_array_append(p->fifo[to], job);
	if (i < json_array_size(p->fifo[q]))
		json_array_remove(p->fifo[q], i);
}

bool srv_pusher_visit(struct srv_pusher *p, const json_t *node, const json_t *mark, int64_t rung_ms)
{
	const char *nn = api_json_str(node, "name", "");
	int urgent = mark || rung_ms > 0 ? 0 : 1, q;
	json_t *job;
	bool queued = false;

	pthread_mutex_lock(&p->lock);
	if (json_object_get(p->busy, nn)) {
		if (!(job = pu_queued(p, nn, &q))) {
			json_object_set_new(p->busy, nn, json_true()); /* in flight: again when it ends */
			goto out;
		}
		/* still queued: that visit reads the node as it is then; it takes
		 * the newer mark, and moves ahead when this ask is urgent */
		json_object_set_new(job, "node", json_deep_copy(node));
		if (mark)
			json_object_set_new(job, "mark", json_deep_copy(mark));
		if (rung_ms > 0 && api_json_int64(job, "rung", 0) == 0)
			json_object_set_new(job, "rung", json_integer(rung_ms));
		if (urgent < q)
			pu_requeue(p, job, q, urgent);
		goto out;
	}
	if (!(job = json_pack("{s:o,s:I,s:I,s:i}", "node", json_deep_copy(node), "rung", (json_int_t)rung_ms, "epoch",
			      (json_int_t)p->epoch, "q", urgent)))
		goto out;
	if (mark)
		json_object_set_new(job, "mark", json_deep_copy(mark));
	if (json_object_set(p->queued, nn, job) != 0 || json_array_append_new(p->fifo[urgent], job) != 0 ||
	    json_object_set_new(p->busy, nn, json_false()) != 0) {
		json_object_del(p->queued, nn);
		goto out;
	}
	pthread_cond_signal(&p->cond);
	queued = true;
out:
	pthread_mutex_unlock(&p->lock);
	return queued;
}

json_t *srv_pusher_built(struct srv_pusher *p)
{
	json_t *built;

	pthread_mutex_lock(&p->lock);
	built = p->built;
	p->built = json_object();
	pthread_mutex_unlock(&p->lock);
	return built;
}

int srv_pusher_busy(struct srv_pusher *p)
{
	int n;

	pthread_mutex_lock(&p->lock);
	n = (int)json_object_size(p->busy);
	pthread_mutex_unlock(&p->lock);
	return n;
}

void srv_pusher_reset(struct srv_pusher *p, const struct db_fence *fence)
{
	pthread_mutex_lock(&p->lock);
	json_object_clear(p->pushes);
	if (fence) {
		p->fence = *fence;
		p->epoch = fence->epoch;
	} else {
		p->epoch = -1;
	}
	pthread_mutex_unlock(&p->lock);
}

int srv_pusher_new(struct srv *srv, int threads, struct srv_pusher **out, aq_msg *msg)
{
	struct srv_pusher *p;
	int rc = AQ_ENOMEM;

	if (threads < 1 || threads > SRV_PUSHER_MAX)
		return aq_fail(msg, AQ_EINVAL, "push-workers must be within 1..%d, got %d", SRV_PUSHER_MAX, threads);
	if (!(p = calloc(1, sizeof(*p))))
		return AQ_ENOMEM;
	p->srv = srv;
	p->epoch = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	if (!(p->fifo[0] = json_array()) || !(p->fifo[1] = json_array()) || !(p->busy = json_object()) || !(p->queued = json_object()) || !(p->built = json_object()) || !(p->pushes = json_object()) ||
	    !(p->threads = calloc((size_t)threads, sizeof(*p->threads))))
		goto out;
	for (; p->nthreads < threads; p->nthreads++)
		if (pthread_create(&p->threads[p->nthreads], NULL, pu_main, p) != 0) {
			rc = aq_fail(msg, AQ_EINTERNAL, "cannot start the reconciler's pushers");
			goto out;
		}
	*out = p;
	p = NULL;
	rc = AQ_OK;
out:
	srv_pusher_free(p);
	return rc;
}

void srv_pusher_free(struct srv_pusher *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	json_decref(p->fifo[0]);
	json_decref(p->fifo[1]);
	json_decref(p->busy);
	json_decref(p->queued);
	json_decref(p->built);
	json_decref(p->pushes);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
