/* srv_reconcile: the control loop that pushes each node its desired state.
 *
 * Level-triggered: for every node the reconciler computes the whole intent
 * (every volume placed on it, with export rules, QoS, tiering; the volumes
 * whose data it must delete; the location's cold store) and hashes it,
 * without the write lock (the node's volumes read in one query). A changed
 * hash bumps the node's generation in a short transaction that reads only
 * the node and the placements the build saw waiting, and gives those still
 * as the build read them the generation, so no placement takes a
 * generation whose intent lacks it; one that changed meanwhile waits for
 * the next build (srv_visit_generation). The intent is pushed (libcurl, the node's push secret)
 * whenever the node has not applied the newest generation, and again every
 * repush_ms, so a missed push heals. Whatever waited for a generation
 * (create, update and delete operations) finishes when the node reports it
 * applied, by the push's answer or by its own status report; a node that
 * answers a generation above its own (an intent.json of an earlier
 * incarnation, a restored database) has applied nothing, and its generation
 * jumps past the answer. Each pass first runs the node lifecycle
 * (srv_drain.c: silent nodes DOWN, volumes of DOWN and DRAINING nodes
 * moved). A pass visits only the nodes whose intent may have changed:
 * those a committed write marked dirty (db.h, db_dirty_list: triggers mark
 * a volume's or placement's node in the write's own transaction, whichever
 * replica wrote it), those a handler rang for (srv_kick.h), those behind on
 * their generation; every sweep_ms every node, a slice of
 * REC_SWEEP_SLICE nodes and REC_SWEEP_BUDGET_NS a pass (so a sweep never
 * holds up a create's node for longer than one short slice), a safety net should a mark ever be missing;
 * after a failover or a new lease every node at once. Pool, snapshot, SMB
 * user and location changes mark the nodes they affect (srv_mark.h). A visited node's
 * mark is deleted only when its intent was built and no write raised the
 * mark since it was read, so a steady-state pass over idle nodes reads the
 * node list and the (empty) marks and builds nothing.
 * The pass runs on its own thread with its own db connection and only
 * decides which nodes to visit: the visits (build, generation, push,
 * applied) run on a pool of pushers, several nodes at once, each node at
 * most once at a time (srv_pusher.h), so a slow or dead node holds no
 * other up; libcurl never runs on the socket thread. With several aquiferd replicas only the
 * holder of the leader lease runs passes (srv_lead.h), and its writes of
 * generations check its epoch in their transaction.
 */
#include "server/srv_reconcile.h"

#include <curl/curl.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_intent.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "api/api_svcaddr.h"
#include "db/db.h"
#include "util/ut_clock.h"
#include "server/srv_drain.h"
#include "server/srv_svcaddr.h"
#include "server/srv_intent.h"
#include "server/srv_internal.h"
#include "server/srv_kick.h"
#include "server/srv_lead.h"
#include "server/srv_metrics.h"
#include "server/srv_node.h"
#include "server/srv_op.h"
#include "server/srv_pusher.h"
#include "tls/tls.h"
#include "util/ut_hex.h"
#include "util/ut_hostport.h"
#include "util/ut_log.h"

/* The reconciler's thread and its pushers; its doorbell is srv_kick.c's. */
struct srv_rec {
	pthread_t thread;
	struct srv_pusher *pushers;
};



/* The sweep (every sweep_ms) visits every node, a slice of this many per
 * pass, so that one pass over 1,000 nodes never holds up the dirty nodes
 * (a create's) for long: they are visited in every pass besides the
 * slice. */
#define REC_SWEEP_SLICE 200
/* ... and at most this long a pass on the slice (at least one node a
 * pass): at 10,000 volumes on a loaded machine 200 nodes took 4-5 s
 * (bench/sim/REPORT.md), which the marked nodes of creates waited for */
#define REC_SWEEP_BUDGET_NS (250 * 1000000ull)
/* Passes start at least this far apart: each reads every node (for the
 * lifecycle step and to find the nodes to visit), which at 1,000 nodes
 * and a create storm ringing for every create was a quarter of aquiferd's
 * CPU (bench/sim/REPORT.md); the rings and marks of the gap are taken by
 * the next pass together, so a change waits at most this much more. */
#define REC_PASS_GAP_NS (50 * 1000000ull)
static void *rec_main(void *arg)
{
	struct srv *srv = arg;
	struct srv_pusher *pu = srv->rec->pushers;
	struct db *db = NULL;
	aq_msg msg = { .text = "" };

	if (db_open(srv->cfg.db_path, &db, &msg) != AQ_OK) {
		UT_ERROR("srv_reconcile", NULL, "reconciler: %s", msg.text);
		return NULL;
	}
	int64_t last_sweep = 0, epoch = -1;
	/* the next slice of the sweep in progress (-1: none): node indexes
	 * [sweep_at, sweep_at + REC_SWEEP_SLICE) of this pass's node list */
	long sweep_at = -1;
	uint64_t pass_t0 = 0;

	for (;;) {
		json_t *nodes = NULL, *n, *dirty, *marks = NULL, *gone = NULL, *m;
		const char *mn;
		struct db_fence fence;
		bool all;
		size_t i;

		uint64_t since = ut_clock_mono_ns() - pass_t0;

		if (pass_t0 && since < REC_PASS_GAP_NS) {
			struct timespec gap = { 0, (long)(REC_PASS_GAP_NS - since) };

			nanosleep(&gap, NULL);
		}
		if (!srv_kick_wait(srv, &dirty, &all))
			break;
		pass_t0 = ut_clock_mono_ns();
		/* only the leader reconciles (srv_lead.h); what it learnt from its
		 * pushes is forgotten when it stops leading */
		if (!srv_lead_held(srv, &fence)) {
			if (epoch != -1)
				srv_pusher_reset(pu, NULL);
			epoch = -1;
			json_decref(dirty);
			continue;
		}
		if (fence.epoch != epoch) {
			srv_pusher_reset(pu, &fence);
			epoch = fence.epoch;
			all = true;
		}
		/* a kick or a dirty mark visits the nodes it names; every
		 * sweep_ms a sweep starts that visits all of them, a slice a
		 * pass; a ring for all (a new leader, a failover) all at once */
		if (sweep_at < 0 && ut_clock_real_ms() - last_sweep >= srv->cfg.sweep_ms) {
			sweep_at = 0;
			last_sweep = ut_clock_real_ms();
		}

		uint64_t t0 = ut_clock_mono_ns();
		int visited = 0;

		/* every node, read once for the lifecycle step and the visits
		 * (again only when the step changed one) */
		if (db_list_all(db, &(struct db_query){ .kind = "node" }, &nodes, NULL) != AQ_OK) {
			json_decref(dirty);
			continue;
		}
		if (srv_drain_pass_nodes(srv, db, nodes, ut_clock_real_ms())) { /* failover, drains (srv_drain.c) */
			all = true;
			json_decref(nodes);
			nodes = NULL;
		}
		if (all) { /* a full pass is a whole sweep */
			sweep_at = -1;
			last_sweep = ut_clock_real_ms();
		}
		/* the marks of the nodes whose intents the pushers built since
		 * the last pass, as the pass that handed them over read them (a
		 * write since keeps its mark), in one transaction; then the
		 * marks: a write after this read keeps its mark */
		if ((gone = srv_pusher_built(pu)) && json_object_size(gone) && db_dirty_clear(db, gone) != AQ_OK)
			UT_DEBUG("srv_reconcile", NULL, "dirty marks not cleared (a concurrent write): the next pass visits them again");
		json_decref(gone);
		gone = NULL;
		if (db_dirty_list(db, &marks) != AQ_OK || !(gone = json_object()) ||
		    (!nodes && db_list_all(db, &(struct db_query){ .kind = "node" }, &nodes, NULL) != AQ_OK)) {
			json_decref(dirty);
			json_decref(marks);
			json_decref(gone);
			json_decref(nodes);
			nodes = NULL;
			continue;
		}
		long slice_next = sweep_at; /* the first slice node not visited */

		json_array_foreach(nodes, i, n) {
			const char *nn = api_json_str(n, "name", "");
			json_t *mark = json_object_get(marks, nn), *rung = json_object_get(dirty, nn);
			bool slice = sweep_at >= 0 && (long)i == slice_next && (long)i < sweep_at + REC_SWEEP_SLICE &&
				     ((long)i == sweep_at || ut_clock_mono_ns() - t0 < REC_SWEEP_BUDGET_NS);

			if (slice)
				slice_next++;
			/* a DOWN node keeps its mark until it is back */
			if (strcmp(api_json_str(n, "state", ""), "DOWN") == 0)
				continue;
			/* behind on its generation: visit it whatever was kicked */
			if (!all && !slice && !mark && !rung && !srv_pusher_behind(pu, n))
				continue;
			/* queued or in flight already: visited again when that ends */
			if (srv_pusher_visit(pu, n, mark, api_json_int64(dirty, nn, 0)))
				visited++;
		}
		if (sweep_at >= 0) {
			UT_DEBUG("srv_reconcile", NULL, "sweep slice: nodes %ld..%ld of %zu", sweep_at, slice_next - 1,
				 json_array_size(nodes));
			sweep_at = slice_next;
			if (sweep_at >= (long)json_array_size(nodes))
				sweep_at = -1; /* done */
		}
		/* the marks of nodes that are gone */
		json_array_foreach(nodes, i, n)
			json_object_del(marks, api_json_str(n, "name", ""));
		json_object_foreach(marks, mn, m)
			json_object_set(gone, mn, m);
		if (json_object_size(gone) && db_dirty_clear(db, gone) != AQ_OK)
			UT_DEBUG("srv_reconcile", NULL, "dirty marks not cleared (a concurrent write): the next pass visits them again");
		json_decref(marks);
		json_decref(gone);
		json_decref(dirty);
		srv_metrics_reconcile(ut_clock_mono_ns() - t0, visited, all, srv_pusher_busy(pu));
		json_decref(nodes);
	}
	db_close(db);
	return NULL;
}

int srv_reconcile_start(struct srv *srv, aq_msg *msg)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc;

	if (!(srv->rec = calloc(1, sizeof(*srv->rec))) || srv_kick_init(srv) != AQ_OK)
		return AQ_ENOMEM;
	if ((rc = srv_pusher_new(srv, srv->cfg.push_workers, &srv->rec->pushers, msg)) != AQ_OK) {
		srv_kick_free(srv);
		return rc;
	}
	if (pthread_create(&srv->rec->thread, NULL, rec_main, srv) != 0) {
		srv_pusher_free(srv->rec->pushers);
		srv->rec->pushers = NULL;
		srv_kick_free(srv);
		return aq_fail(msg, AQ_EINTERNAL, "cannot start the reconciler");
	}
	return AQ_OK;
}

void srv_reconcile_stop(struct srv *srv)
{
	if (!srv->rec || !srv->kick)
		return;
	srv_kick_stop(srv);
	pthread_join(srv->rec->thread, NULL);
	srv_pusher_free(srv->rec->pushers); /* before the doorbell: a pusher rings it */
	srv_kick_free(srv);
	free(srv->rec);
	srv->rec = NULL;
}
