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
 * the next build (srv_reconcile_generation). The intent is pushed (libcurl, the node's push secret)
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

#define VOL_TYPE "type.googleapis.com/google.cloud.netapp.v1.Volume"
#define EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"

/* All documents of kind under parent (NULL: everywhere). */
static int list_all(struct db *db, const char *kind, const char *parent, json_t **out)
{
	struct db_query q = { .kind = kind, .parent = parent };

	return db_list_all(db, &q, out, NULL);
}

/* Does the volume's protocols list name proto? */
static bool vol_speaks(const json_t *vol, const char *proto)
{
	json_t *ps = json_object_get(vol, "protocols"), *p;
	size_t i;

	json_array_foreach(ps, i, p)
		if (strcmp(json_string_value(p), proto) == 0)
			return true;
	return false;
}

/* addr's host as a mount command wants it; a wildcard (the agent listens
 * on every address) takes the host of alt. An IPv6 host keeps its
 * brackets, as mount(8) wants "[::1]:/share". */
static void mount_host(const char *addr, const char *alt, uint16_t dport, char *ip, size_t cap, long *port)
{
	struct ut_hostport hp = { .port = dport }, ha = { .port = dport };

	*port = dport;
	if (ut_hostport_parse(addr, dport, 0, &hp, NULL) != AQ_OK) {
		snprintf(ip, cap, "%s", addr);
		return;
	}
	*port = hp.port;
	if ((strcmp(hp.host, "0.0.0.0") == 0 || strcmp(hp.host, "::") == 0) && alt &&
	    ut_hostport_parse(alt, dport, 0, &ha, NULL) == AQ_OK) {
		memcpy(hp.host, ha.host, sizeof(hp.host));
		hp.v6 = ha.v6;
	}
	snprintf(ip, cap, hp.v6 ? "[%s]" : "%s", hp.host);
}

/* mountOptions as GCNV gives them: instructions a user pastes into a shell
 * on the client (prose lines are comments; nolock because the node serves no
 * NLM), plus Aquifer's port and libnfsUrl, the URL libnfs tools (nfs-ls,
 * nfs-cp) take, since they cannot be told the port any other way. A volume
 * with a service address (its placement's, srv_svcaddr.h) is mounted there,
 * on the range's port for NFS and the node's SMB port for SMB, wherever it
 * is served. */
static json_t *mount_options(const json_t *vol, const json_t *node, const json_t *pl)
{
	const json_t *sa = json_object_get(pl, API_SVCADDR_KEY);
	const char *nfs = api_json_str(node, "nfsAddress", "");
	const char *smb = api_json_str(node, API_INTENT_SMB_ADDRESS, "");
	char nfs_svc[UT_HOST_MAX + 8], smb_svc[UT_HOST_MAX + 8];
	struct ut_hostport hp;

	if (sa) {
		snprintf(nfs_svc, sizeof(nfs_svc), "%s:%lld", api_json_str(sa, "address", ""),
			 (long long)api_json_int64(sa, "port", API_SVCADDR_PORT));
		nfs = nfs_svc;
		if (*smb && ut_hostport_parse(smb, API_INTENT_SMB_PORT, 0, &hp, NULL) == AQ_OK) {
			snprintf(smb_svc, sizeof(smb_svc), "%s:%u", api_json_str(sa, "address", ""), (unsigned)hp.port);
			smb = smb_svc;
		}
	}
	const char *share = api_json_str(vol, "shareName", "");
	char ip[UT_HOST_MAX + 2], exp[120], full[200], instr[1024], url[400];
	json_t *out = json_array();
	long port;

	if (!json_object_get(vol, "protocols") || vol_speaks(vol, "NFSV3")) {
		mount_host(nfs, NULL, 2049, ip, sizeof(ip), &port);
		snprintf(exp, sizeof(exp), "/%s", share);
		snprintf(full, sizeof(full), "%s:%s", ip, exp);
		snprintf(instr, sizeof(instr),
			 "# Install the NFS client: sudo apt-get install -y nfs-common (Debian, Ubuntu)"
			 " or sudo yum install -y nfs-utils (Red Hat, SUSE)\n"
			 "# Create a directory to mount the volume on, then mount it:\n"
			 "sudo mkdir -p /mnt/%s\n"
			 "sudo mount -t nfs -o rw,hard,vers=3,tcp,port=%ld,mountport=%ld,nolock %s /mnt/%s",
			 share, port, port, full, share);
		snprintf(url, sizeof(url), "nfs://%s%s?version=3&nfsport=%ld&mountport=%ld", ip, exp, port, port);
		json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:s}", "export", exp, "exportFull", full,
						     "protocol", "NFSV3", "instructions", instr, "ipAddress", ip,
						     "port", (json_int_t)port, "libnfsUrl", url));
	}
	/* NFSv4.1 (agent/nfs4/): the same port, the share under the pseudo root */
	if (vol_speaks(vol, "NFSV4")) {
		mount_host(nfs, NULL, 2049, ip, sizeof(ip), &port);
		snprintf(exp, sizeof(exp), "/%s", share);
		snprintf(full, sizeof(full), "%s:%s", ip, exp);
		snprintf(instr, sizeof(instr),
			 "# Install the NFS client: sudo apt-get install -y nfs-common (Debian, Ubuntu)"
			 " or sudo yum install -y nfs-utils (Red Hat, SUSE)\n"
			 "# Create a directory to mount the volume on, then mount it (add nconnect=N for more connections):\n"
			 "sudo mkdir -p /mnt/%s\n"
			 "sudo mount -t nfs -o rw,hard,vers=4.1,tcp,port=%ld %s /mnt/%s",
			 share, port, full, share);
		json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "export", exp, "exportFull", full,
						     "protocol", "NFSV4", "instructions", instr, "ipAddress", ip,
						     "port", (json_int_t)port));
	}
	/* SMB: where the node's SMB server listens (api_intent.h) */
	if (vol_speaks(vol, "SMB") && *smb) {
		mount_host(smb, nfs, API_INTENT_SMB_PORT, ip, sizeof(ip), &port);
		snprintf(exp, sizeof(exp), "\\\\%s\\%s", ip, share);
		snprintf(full, sizeof(full), "//%s/%s", ip, share);
		snprintf(instr, sizeof(instr),
			 "# Install the SMB client: sudo apt-get install -y cifs-utils smbclient (Debian, Ubuntu)\n"
			 "# USER is one of the project's smbUsers. Mount the share, or browse it with smbclient:\n"
			 "sudo mkdir -p /mnt/%s\n"
			 "sudo mount -t cifs //%s/%s /mnt/%s -o vers=3.1.1,username=USER,port=%ld\n"
			 "smbclient //%s/%s -U USER -p %ld",
			 share, ip, share, share, port, ip, share, port);
		json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "export", exp, "exportFull", full,
						     "protocol", "SMB", "instructions", instr, "ipAddress", ip,
						     "port", (json_int_t)port));
	}
	return out;
}

/* The error a node gave for volume vn, or NULL. */
static const char *failure_of(const json_t *failed, const char *vn)
{
	json_t *f;
	size_t i;

	json_array_foreach(failed, i, f)
		if (strcmp(api_json_str(f, "name", ""), vn) == 0)
			return api_json_str(f, "error", "unknown error");
	return NULL;
}

/* A volume its node could not serve: ERROR with the node's reason; a create
 * gives its placement up (nothing was served), so the next intent no longer
 * carries it and the operation fails. */
static int applied_failed(struct db *db, const char *node_name, json_t *pl, const char *op,
			  const char *action, const char *why)
{
	const char *vn = api_json_str(pl, "volume", "");
	char pname[800], vparent[600], text[700];
	json_t *vol = NULL;
	int rc;

	snprintf(pname, sizeof(pname), "placements/%s", vn);
	snprintf(text, sizeof(text), "node %s could not serve the volume: %s", node_name, why);
	if ((rc = srv_intent_vol_parent(vn, vparent, sizeof(vparent))) != AQ_OK || (rc = db_get(db, vn, &vol)) != AQ_OK)
		goto out;
	json_object_set_new(vol, "state", json_string("ERROR"));
	json_object_set_new(vol, "stateDetails", json_string(text));
	if ((rc = db_put(db, "volume", vparent, vn, vol, false)) != AQ_OK)
		goto out;
	if (strcmp(action, "create") == 0) {
		rc = db_delete(db, pname);
	} else {
		json_object_del(pl, "op");
		json_object_set_new(pl, "action", json_string(""));
		json_object_set_new(pl, "pendingGeneration", json_integer(0));
		rc = db_put(db, "placement", node_name, pname, pl, false);
	}
	if (rc == AQ_OK)
		rc = srv_op_end(db, op, NULL, AQ_EINTERNAL, text);
out:
	json_decref(vol);
	return rc;
}

int srv_reconcile_applied(struct srv *srv, struct db *db, const char *node_name, int64_t g,
		     const json_t *failed)
{
	json_t *pls = NULL, *pl, *node = NULL, *due = NULL, *dn;
	size_t i;
	int rc;

	(void)srv;
	/* which placements wait for a generation up to g, read without the
	 * write lock; the transaction reads those again (O(what finished), not
	 * O(volumes on the node)) and acts on what still waits */
	if ((rc = list_all(db, "placement", node_name, &pls)) != AQ_OK || !(due = json_array()))
		goto out;
	json_array_foreach(pls, i, pl) {
		int64_t pg = api_json_int64(pl, "pendingGeneration", 0);

		if (*api_json_str(pl, "action", "") && pg > 0 && pg <= g)
			json_array_append_new(due, json_sprintf("placements/%s", api_json_str(pl, "volume", "")));
	}
	json_decref(pls);
	pls = NULL;
	if (json_array_size(due) == 0)
		goto out;
	if ((rc = db_begin(db)) != AQ_OK || (rc = db_get(db, node_name, &node)) != AQ_OK ||
	    (rc = db_get_many(db, due, &pls)) != AQ_OK)
		goto out;
	json_array_foreach(due, i, dn) {
		char op[800], action[16], pname[800], vparent[600];
		const char *vn;
		int64_t pg;
		json_t *vol = NULL, *resp = NULL;
		bool waits = false;

		if (!(pl = json_object_get(pls, json_string_value(dn))))
			continue; /* gone since */
		vn = api_json_str(pl, "volume", "");
		pg = api_json_int64(pl, "pendingGeneration", 0);
		/* copies: pl is edited below */
		snprintf(op, sizeof(op), "%s", api_json_str(pl, "op", ""));
		snprintf(action, sizeof(action), "%s", api_json_str(pl, "action", ""));
		if (!*action || pg <= 0 || pg > g)
			continue;
		if (strcmp(action, "delete") != 0 && failure_of(failed, vn)) {
			if ((rc = applied_failed(db, node_name, pl, op, action, failure_of(failed, vn))) != AQ_OK)
				goto out;
			continue;
		}
		snprintf(pname, sizeof(pname), "placements/%s", vn);
		if (srv_intent_vol_parent(vn, vparent, sizeof(vparent)) != AQ_OK)
			continue;
		if (strcmp(action, "delete") == 0) {
			resp = json_pack("{s:s}", "@type", EMPTY_TYPE);
			if ((rc = db_delete(db, vn)) != AQ_OK && rc != AQ_ENOENT)
				goto next;
			if ((rc = db_delete(db, pname)) != AQ_OK || (rc = srv_op_end(db, op, resp, AQ_OK, NULL)) != AQ_OK)
				goto next;
		} else {
			if ((rc = db_get(db, vn, &vol)) != AQ_OK)
				goto next;
			/* nothing serves its share: never READY (api_intent.h) */
			if (vol_speaks(vol, "SMB") && !*api_json_str(node, API_INTENT_SMB_ADDRESS, "")) {
				rc = applied_failed(db, node_name, pl, op, action,
						    "its protocols include SMB and the node's agent serves no SMB "
						    "(it reports no smbAddress: start it with --smb-listen)");
				goto next;
			}
			/* a service address not held yet is not served (srv_svcaddr.h) */
			if ((rc = srv_svcaddr_applied_wait(db, node, pl, action, vol, vparent, &waits)) != AQ_OK || waits)
				goto next;
			json_object_set_new(vol, "state", json_string("READY"));
			json_object_set_new(vol, "stateDetails", json_string(""));
			json_object_set_new(vol, "mountOptions", mount_options(vol, node, pl));
			if ((rc = db_put(db, "volume", vparent, vn, vol, false)) != AQ_OK)
				goto next;
			resp = json_deep_copy(vol);
			json_object_set_new(resp, "@type", json_string(VOL_TYPE));
			json_object_del(pl, "op");
			json_object_set_new(pl, "action", json_string(""));
			json_object_set_new(pl, "pendingGeneration", json_integer(0));
			if ((rc = db_put(db, "placement", node_name, pname, pl, false)) != AQ_OK ||
			    (rc = srv_op_end(db, op, resp, AQ_OK, NULL)) != AQ_OK)
				goto next;
		}
next:
		json_decref(vol);
		json_decref(resp);
		if (rc != AQ_OK)
			goto out;
	}
	rc = db_commit(db);
out:
	db_rollback(db);
	json_decref(pls);
	json_decref(due);
	json_decref(node);
	return rc;
}

void srv_reconcile_intent_cleanup(struct srv_reconcile_intent *ri)
{
	json_decref(ri->intent);
	json_decref(ri->bad);
	json_decref(ri->pending);
	free(ri->text);
	memset(ri, 0, sizeof(*ri));
}

int srv_reconcile_intent_build(const struct api_math_params *math, struct db *db, const json_t *node,
			       struct srv_reconcile_intent *ri)
{
	unsigned char sum[SHA256_DIGEST_LENGTH];
	int rc;

	srv_reconcile_intent_cleanup(ri);
	if (!(ri->pending = json_object()))
		return AQ_ENOMEM;
	if ((rc = srv_intent_build(math, db, node, &ri->intent, &ri->bad, ri->pending)) != AQ_OK)
		return rc;
	if (!(ri->text = json_dumps(ri->intent, JSON_COMPACT | JSON_SORT_KEYS)))
		return AQ_ENOMEM;
	SHA256((const unsigned char *)ri->text, strlen(ri->text), sum);
	ut_hex_encode(sum, sizeof(sum), ri->hash, sizeof(ri->hash));
	return AQ_OK;
}

/* A placement is given generation g only when g's intent carries it as it
 * stands: an intent built before a volume create committed does not carry
 * it, and if the create's placement took that generation, the node's
 * report of it would make the volume READY before any node served it (and
 * a clone's first intent, then no longer CREATING, would carry no
 * cloneSource, so the node would make it empty: issue 20). The intent is
 * built without the write lock (a pass over every volume of the node); the
 * transaction here reads only the node and the placements that build saw
 * waiting, and gives the generation to those still as it read them. */
int srv_reconcile_generation(const struct api_math_params *math, struct db *db, const struct db_fence *fence,
			     const json_t *n, struct srv_reconcile_intent *ri, int64_t *gen, bool *more)
{
	const char *nn = api_json_str(n, "name", "");
	json_t *node = NULL, *pl = NULL, *internal, *seen;
	const char *pname;
	int rc;

	(void)math;
	if (more)
		*more = false;
	/* look first, without the write lock: usually nothing changed */
	if ((rc = db_get(db, nn, &node)) != AQ_OK)
		goto out;
	*gen = api_json_int64(node, "generation", 0);
	if (strcmp(api_json_str(json_object_get(node, "internal"), "intentHash", ""), ri->hash) == 0 &&
	    json_object_size(ri->pending) == 0)
		goto out;
	json_decref(node);
	node = NULL;
	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	if ((rc = srv_lead_fence(db, fence)) != AQ_OK || (rc = db_get(db, nn, &node)) != AQ_OK)
		goto out;
	internal = json_object_get(node, "internal");
	*gen = api_json_int64(node, "generation", 0);
	if (strcmp(api_json_str(internal, "intentHash", ""), ri->hash) != 0) {
		(*gen)++;
		json_object_set_new(node, "generation", json_integer(*gen));
		json_object_set_new(internal, "intentHash", json_string(ri->hash));
		if ((rc = srv_node_save(db, node)) != AQ_OK)
			goto out;
	}
	json_object_foreach(ri->pending, pname, seen) {
		char now[900];

		json_decref(pl);
		pl = NULL;
		if ((rc = db_get(db, pname, &pl)) == AQ_ENOENT) {
			rc = AQ_OK; /* gone since (a failed or cancelled create) */
			continue;
		}
		if (rc != AQ_OK)
			goto out;
		snprintf(now, sizeof(now), "%s|%s", api_json_str(pl, "op", ""), api_json_str(pl, "action", ""));
		if (strcmp(now, json_string_value(seen)) != 0 || strcmp(api_json_str(pl, "node", ""), nn) != 0) {
			if (more && *api_json_str(pl, "action", ""))
				*more = true; /* changed since the build: the next one carries it */
			continue;
		}
		if (api_json_int64(pl, "pendingGeneration", 0) > 0)
			continue;
		json_object_set_new(pl, "pendingGeneration", json_integer(*gen));
		if ((rc = db_put(db, "placement", nn, pname, pl, false)) != AQ_OK)
			goto out;
	}
	rc = db_commit(db);
out:
	db_rollback(db);
	json_decref(node);
	json_decref(pl);
	return rc;
}

/* The sweep (every sweep_ms) visits every node, a slice of this many per
 * pass, so that one pass over 1,000 nodes never holds up the dirty nodes
 * (a create's) for long: they are visited in every pass besides the
 * slice. */
#define REC_SWEEP_SLICE 200
/* ... and at most this long a pass on the slice (at least one node a
 * pass): at 10,000 volumes on a loaded machine 200 nodes took 4-5 s
 * (bench/sim/REPORT.md), which the marked nodes of creates waited for */
#define REC_SWEEP_BUDGET_NS (250 * 1000000ull)

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

	for (;;) {
		json_t *nodes = NULL, *n, *dirty, *marks = NULL, *gone = NULL, *m;
		const char *mn;
		struct db_fence fence;
		bool all;
		size_t i;

		if (!srv_kick_wait(srv, &dirty, &all))
			break;
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

		if (srv_drain_pass(srv, db, ut_clock_real_ms())) /* failover and pending drains (srv_drain.c) */
			all = true;
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
		    list_all(db, "node", NULL, &nodes) != AQ_OK) {
			json_decref(dirty);
			json_decref(marks);
			json_decref(gone);
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
