/* srv_reconcile: the control loop that pushes each node its desired state.
 *
 * Level-triggered: for every node the reconciler computes the whole intent
 * (every volume placed on it, with export rules, QoS, tiering; the volumes
 * whose data it must delete; the location's cold store) and hashes it. A changed hash bumps the
 * node's generation. The intent is pushed (libcurl, the node's push secret)
 * whenever the node has not applied the newest generation, and again every
 * repush_ms, so a missed push heals. Whatever waited for a generation
 * (create, update and delete operations) finishes when the node reports it
 * applied, by the push's answer or by its own status report; a node that
 * answers a generation above its own (an intent.json of an earlier
 * incarnation, a restored database) has applied nothing, and its generation
 * jumps past the answer. Each pass first runs the node lifecycle
 * (srv_drain.c: silent nodes DOWN, volumes of DOWN and DRAINING nodes
 * moved). It runs on its own thread with its own db connection; libcurl
 * never runs on the socket thread.
 */
#include "server/srv_node.h"

#include <curl/curl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_resource.h"
#include "api/api_schema.h"
#include "server/srv_ca.h"
#include "tls/tls.h"

#define VOL_TYPE "type.googleapis.com/google.cloud.netapp.v1.Volume"
#define EMPTY_TYPE "type.googleapis.com/google.protobuf.Empty"

static int64_t rec_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void srv_reconcile_kick(struct srv *srv, const char *node)
{
	if (!srv->rec_running)
		return;
	pthread_mutex_lock(&srv->rec_lock);
	if (!node)
		srv->rec_all_dirty = true;
	else if (srv->rec_dirty || (srv->rec_dirty = json_object()))
		json_object_set_new(srv->rec_dirty, node, json_true());
	srv->rec_kick = true;
	pthread_cond_signal(&srv->rec_cond);
	pthread_mutex_unlock(&srv->rec_lock);
}

/* All documents of kind under parent (NULL: everywhere). */
static int list_all(struct db *db, const char *kind, const char *parent, json_t **out)
{
	struct db_query q = { .kind = kind, .parent = parent };

	return db_list_all(db, &q, out, NULL);
}

static json_t *mount_options(const json_t *vol, const json_t *node)
{
	const char *nfs = api_json_str(node, "nfsAddress", "");
	const char *share = api_json_str(vol, "shareName", "");
	const char *colon = strrchr(nfs, ':');
	char ip[80], exp[120], full[200], instr[600];
	long port = colon ? strtol(colon + 1, NULL, 10) : 2049;

	snprintf(ip, sizeof(ip), "%.*s", colon ? (int)(colon - nfs) : (int)strlen(nfs), nfs);
	snprintf(exp, sizeof(exp), "/%s", share);
	snprintf(full, sizeof(full), "%s:%s", ip, exp);
	snprintf(instr, sizeof(instr),
		 "mount -t nfs -o vers=3,proto=tcp,port=%ld,mountport=%ld %s /mnt/%s"
		 " (libnfs: nfs://%s%s?version=3&nfsport=%ld&mountport=%ld)",
		 port, port, full, share, ip, exp, port, port);
	return json_pack("[{s:s,s:s,s:s,s:s,s:s,s:I}]", "export", exp, "exportFull", full, "protocol",
			 "NFSV3", "instructions", instr, "ipAddress", ip, "port", (json_int_t)port);
}

static int vol_parent(const char *vn, char *out, size_t cap)
{
	const char *slash = strstr(vn, "/volumes/");

	if (!slash)
		return AQ_EINVAL;
	snprintf(out, cap, "%.*s", (int)(slash - vn), vn);
	return AQ_OK;
}

static int op_finish_any(struct db *db, const char *op, const json_t *resp, int err, const char *m)
{
	int rc = op && *op ? srv_op_finish(db, op, resp, err, m) : AQ_OK;

	return rc == AQ_ENOENT ? AQ_OK : rc; /* the operation was deleted by its owner */
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
	if ((rc = vol_parent(vn, vparent, sizeof(vparent))) != AQ_OK || (rc = db_get(db, vn, &vol)) != AQ_OK)
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
		rc = op_finish_any(db, op, NULL, AQ_EINTERNAL, text);
out:
	json_decref(vol);
	return rc;
}

int srv_node_applied(struct srv *srv, struct db *db, const char *node_name, int64_t g,
		     const json_t *failed)
{
	json_t *pls = NULL, *pl, *node = NULL;
	size_t i;
	int rc;

	(void)srv;
	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	if ((rc = db_get(db, node_name, &node)) != AQ_OK || (rc = list_all(db, "placement", node_name, &pls)) != AQ_OK)
		goto out;
	json_array_foreach(pls, i, pl) {
		char op[800], action[16];
		const char *vn = api_json_str(pl, "volume", "");
		int64_t pg = api_json_int64(pl, "pendingGeneration", 0);
		char pname[800], vparent[600];
		json_t *vol = NULL, *resp = NULL;

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
		if (vol_parent(vn, vparent, sizeof(vparent)) != AQ_OK)
			continue;
		if (strcmp(action, "delete") == 0) {
			resp = json_pack("{s:s}", "@type", EMPTY_TYPE);
			if ((rc = db_delete(db, vn)) != AQ_OK && rc != AQ_ENOENT)
				goto next;
			if ((rc = db_delete(db, pname)) != AQ_OK || (rc = op_finish_any(db, op, resp, AQ_OK, NULL)) != AQ_OK)
				goto next;
		} else {
			if ((rc = db_get(db, vn, &vol)) != AQ_OK)
				goto next;
			json_object_set_new(vol, "state", json_string("READY"));
			json_object_set_new(vol, "stateDetails", json_string(""));
			json_object_set_new(vol, "mountOptions", mount_options(vol, node));
			if ((rc = db_put(db, "volume", vparent, vn, vol, false)) != AQ_OK)
				goto next;
			resp = json_deep_copy(vol);
			json_object_set_new(resp, "@type", json_string(VOL_TYPE));
			json_object_del(pl, "op");
			json_object_set_new(pl, "action", json_string(""));
			json_object_set_new(pl, "pendingGeneration", json_integer(0));
			if ((rc = db_put(db, "placement", node_name, pname, pl, false)) != AQ_OK ||
			    (rc = op_finish_any(db, op, resp, AQ_OK, NULL)) != AQ_OK)
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
	json_decref(node);
	return rc;
}

/* The intent entry of one volume. */
static json_t *intent_volume(const json_t *vol, const json_t *pl)
{
	json_t *rules = json_array(), *r, *e;
	json_t *src = json_object_get(json_object_get(vol, "exportPolicy"), "rules");
	size_t i;

	json_array_foreach(src, i, r) {
		const char *squash = api_json_str(r, "squashMode", NULL);
		const char *root = api_json_str(r, "hasRootAccess", "true");

		if (!squash)
			squash = strcmp(root, "false") == 0 ? "ROOT_SQUASH" : "NO_ROOT_SQUASH";
		json_array_append_new(rules, json_pack("{s:s,s:s,s:s,s:I}", "allowedClients",
						       api_json_str(r, "allowedClients", ""), "accessType",
						       api_json_str(r, "accessType", "READ_WRITE"),
						       "squashMode", squash, "anonUid",
						       (json_int_t)api_json_int64(r, "anonUid", 65534)));
	}
	e = json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:o}", "name", api_json_str(vol, "name", ""), "fsid",
		      api_json_str(pl, "fsid", ""), "shareName", api_json_str(vol, "shareName", ""),
		      "dir", api_json_str(pl, "dir", ""), "capacityBytes",
		      (json_int_t)(api_json_int64(vol, "capacityGib", 0) << 30), "throughputMibps",
		      api_json_double(vol, "throughputMibps", 0), "exportRules", rules);
	if (e && json_object_get(vol, "tieringPolicy"))
		json_object_set(e, "tieringPolicy", json_object_get(vol, "tieringPolicy"));
	if (e && json_object_get(vol, "unixPermissions"))
		json_object_set(e, "unixPermissions", json_object_get(vol, "unixPermissions"));
	return e;
}

/* QoS of a volume entry: its own limit (throughputMibps, MiB/s) and, in
 * FLEX pools, the pool-wide budget its volumes on a node share:
 * "qos": {"mibps", "iops" (0 = none), "sharedPool", "sharedMibps", "sharedIops"}. */
static void intent_qos(const struct api_math_params *p, struct db *db, const json_t *vol, json_t *e)
{
	char pname[800], parent[600];
	const char *vn = api_json_str(vol, "name", "");
	json_t *pool = NULL, *qos;
	struct api_pool_math pm;

	if (!e || vol_parent(vn, parent, sizeof(parent)) != AQ_OK)
		return;
	snprintf(pname, sizeof(pname), "%s/storagePools/%s", parent, api_json_str(vol, "storagePool", ""));
	qos = json_pack("{s:f,s:I}", "mibps", api_json_double(vol, "throughputMibps", 0), "iops", (json_int_t)0);
	if (qos && db_get(db, pname, &pool) == AQ_OK) {
		api_pool_math_from(pool, &pm);
		if (pm.level == API_LEVEL_FLEX) {
			json_object_set_new(qos, "sharedPool", json_string(pname));
			json_object_set_new(qos, "sharedMibps", json_real(api_math_pool_mibps(p, &pm)));
			json_object_set_new(qos, "sharedIops", json_integer(api_math_pool_iops(p, &pm)));
		}
	}
	json_object_set_new(e, "qos", qos);
	json_decref(pool);
}

/* Build a node's intent body (without generation) from its placements. */
static int intent_build(const struct api_math_params *srv_math, struct db *db, const json_t *node,
			json_t **out)
{
	const char *nn = api_json_str(node, "name", "");
	json_t *pls = NULL, *pl, *vols = json_array(), *dels = json_array(), *key = NULL, *cold;
	char kname[200];
	size_t i;
	int rc;

	if ((rc = list_all(db, "placement", nn, &pls)) != AQ_OK)
		goto out;
	json_array_foreach(pls, i, pl) {
		json_t *vol = NULL;

		if (strcmp(api_json_str(pl, "action", ""), "delete") == 0) {
			json_array_append_new(dels, json_pack("{s:s,s:s,s:s}", "name", api_json_str(pl, "volume", ""),
							      "fsid", api_json_str(pl, "fsid", ""), "dir",
							      api_json_str(pl, "dir", "")));
			continue;
		}
		if (db_get(db, api_json_str(pl, "volume", ""), &vol) != AQ_OK)
			continue;
		json_array_append_new(vols, intent_volume(vol, pl));
		intent_qos(srv_math, db, vol, json_array_get(vols, json_array_size(vols) - 1));
		json_decref(vol);
	}
	snprintf(kname, sizeof(kname), "locsecrets/%s", api_json_str(node, "location", ""));
	if ((rc = db_get(db, kname, &key)) != AQ_OK)
		goto out;
	*out = json_pack("{s:s,s:s,s:s,s:O,s:O}", "node", nn, "location", api_json_str(node, "location", ""),
			 "handleKey", api_json_str(key, "handleKey", ""), "volumes", vols, "deletes", dels);
	rc = *out ? AQ_OK : AQ_ENOMEM;
	/* the location's cold store (absent: the agent's default on the shelf);
	 * part of the hash, so a changed store is pushed at once */
	if (rc == AQ_OK && (cold = srv_cold_store_intent(db, api_json_str(node, "location", ""))))
		json_object_set_new(*out, "coldStore", cold);
out:
	json_decref(pls);
	json_decref(vols);
	json_decref(dels);
	json_decref(key);
	return rc;
}

static size_t curl_sink(char *p, size_t sz, size_t n, void *arg)
{
	json_t **acc = arg;
	const char *old = json_string_value(*acc);
	size_t ol = old ? strlen(old) : 0, add = sz * n;
	char *buf;

	if (ol + add > 65536)
		return 0;
	buf = malloc(ol + add + 1);
	if (!buf)
		return 0;
	memcpy(buf, old ? old : "", ol);
	memcpy(buf + ol, p, add);
	buf[ol + add] = '\0';
	json_decref(*acc);
	*acc = json_string(buf);
	free(buf);
	return add;
}

/* PUT the intent to the node's agent; *applied is what it reports. */
static int push(const struct srv *srv, const json_t *node, const json_t *intent, int64_t *applied,
		json_t **failed, char *err, size_t errcap)
{
	const char *secret = api_json_str(json_object_get(node, "internal"), "pushSecret", "");
	char url[600], authz[200], cerr[CURL_ERROR_SIZE] = "";
	const char *nn = api_json_str(node, "name", ""), *id = strchr(nn, '/') ? strchr(nn, '/') + 1 : nn;
	char *body = json_dumps(intent, JSON_COMPACT);
	struct curl_slist *h = NULL;
	json_t *acc = NULL, *reply = NULL;
	CURL *c = curl_easy_init();
	long code = 0;
	CURLcode cc;
	int rc = AQ_EUNAVAIL;

	if (!c || !body)
		goto out;
	snprintf(url, sizeof(url), "%s/v1/intent", api_json_str(node, "address", ""));
	snprintf(authz, sizeof(authz), "Authorization: Bearer %s", secret);
	h = curl_slist_append(h, authz);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, curl_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &acc);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	if (strncmp(url, "https://", 8) == 0)
		srv_ca_curl(srv, c, id); /* the agent's certificate: cluster CA, node name */
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (cc != CURLE_OK) {
		aq_msg m = { "" };

		tls_curl_fail((int)cc, cerr, url, "the agent's certificate must come from the cluster CA and name the node", &m);
		snprintf(err, errcap, "push to node %s refused or failed: %s", id, m.text);
		goto out;
	}
	reply = acc ? json_loads(json_string_value(acc), 0, NULL) : NULL;
	if (code != 200 || !reply) {
		snprintf(err, errcap, "push to %s: HTTP %ld %s", url, code, acc ? json_string_value(acc) : "");
		rc = AQ_EIO;
		goto out;
	}
	*applied = api_json_int64(reply, "appliedGeneration", 0);
	*failed = json_incref(json_object_get(reply, "failed"));
	rc = AQ_OK;
out:
	curl_slist_free_all(h);
	if (c)
		curl_easy_cleanup(c);
	free(body);
	json_decref(acc);
	json_decref(reply);
	return rc;
}

/* Give pending placements the generation that carries them; bump the
 * generation when the intent changed. Returns the generation to push. */
static int rec_generation(struct db *db, const char *nn, const char *hash, int64_t *gen)
{
	json_t *node = NULL, *pls = NULL, *pl, *internal;
	bool dirty = false;
	size_t i;
	int rc;

	/* look first, without the write lock: usually nothing changed */
	if ((rc = db_get(db, nn, &node)) != AQ_OK || (rc = list_all(db, "placement", nn, &pls)) != AQ_OK)
		goto out;
	dirty = strcmp(api_json_str(json_object_get(node, "internal"), "intentHash", ""), hash) != 0;
	json_array_foreach(pls, i, pl)
		if (*api_json_str(pl, "action", "") && api_json_int64(pl, "pendingGeneration", 0) <= 0)
			dirty = true;
	if (!dirty) {
		*gen = api_json_int64(node, "generation", 0);
		goto out;
	}
	json_decref(node);
	json_decref(pls);
	node = pls = NULL;
	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	if ((rc = db_get(db, nn, &node)) != AQ_OK || (rc = list_all(db, "placement", nn, &pls)) != AQ_OK)
		goto out;
	internal = json_object_get(node, "internal");
	*gen = api_json_int64(node, "generation", 0);
	if (strcmp(api_json_str(internal, "intentHash", ""), hash) != 0) {
		(*gen)++;
		json_object_set_new(node, "generation", json_integer(*gen));
		json_object_set_new(internal, "intentHash", json_string(hash));
		if ((rc = srv_node_save(db, node)) != AQ_OK)
			goto out;
	}
	json_array_foreach(pls, i, pl) {
		char pname[800];

		if (!*api_json_str(pl, "action", "") || api_json_int64(pl, "pendingGeneration", 0) > 0)
			continue;
		snprintf(pname, sizeof(pname), "placements/%s", api_json_str(pl, "volume", ""));
		json_object_set_new(pl, "pendingGeneration", json_integer(*gen));
		if ((rc = db_put(db, "placement", nn, pname, pl, false)) != AQ_OK)
			goto out;
	}
	rc = db_commit(db);
out:
	db_rollback(db);
	json_decref(node);
	json_decref(pls);
	return rc;
}

/* The newest generation a node is known to have applied: from its status
 * reports (durable) or from the answer to our last push (pushes, in memory,
 * counted only for the node's current incarnation: a node deleted and
 * joined again starts over). */
static int64_t rec_applied(const json_t *node, const json_t *pushes)
{
	const json_t *p = json_object_get(pushes, api_json_str(node, "name", ""));
	int64_t durable = api_json_int64(node, "appliedGeneration", 0);
	int64_t pushed = api_json_int64(p, "applied", 0);

	if (strcmp(api_json_str(p, "nid", ""), api_json_str(json_object_get(node, "internal"), "incarnation", "")) != 0)
		pushed = 0;
	return durable > pushed ? durable : pushed;
}

/* The node answered a generation above its own (it kept an intent.json of
 * an earlier incarnation, or the database was restored from a backup): it
 * would refuse every push as stale. Its generation jumps past the answer,
 * so the next push is applied; nothing is taken as applied meanwhile. */
static int rec_push_past(struct db *db, const char *nn, int64_t applied)
{
	json_t *node = NULL;
	int rc;

	if ((rc = db_begin(db)) != AQ_OK || (rc = db_get(db, nn, &node)) != AQ_OK)
		goto out;
	if (applied >= api_json_int64(node, "generation", 0)) {
		fprintf(stderr, "aquiferd: node %s reports generation %lld, above its own %lld: pushing %lld\n", nn,
			(long long)applied, (long long)api_json_int64(node, "generation", 0), (long long)applied + 1);
		json_object_set_new(node, "generation", json_integer(applied + 1));
		if ((rc = srv_node_save(db, node)) != AQ_OK)
			goto out;
	}
	rc = db_commit(db);
out:
	db_rollback(db);
	json_decref(node);
	return rc;
}

/* Returns 1 when it pushed, -1 when a push failed, 0 when none was due. */
static int rec_node(struct srv *srv, struct db *db, const json_t *n, json_t *pushes)
{
	const char *nn = api_json_str(n, "name", "");
	json_t *intent = NULL, *payload = NULL, *node = NULL, *failed = NULL;
	unsigned char sum[SHA256_DIGEST_LENGTH];
	char hash[SHA256_DIGEST_LENGTH * 2 + 1], err[512] = "";
	char *text = NULL;
	int64_t gen = 0, applied = -1, now = rec_now_ms();
	int pushed = 0;

	if (intent_build(&srv->cfg.math, db, n, &intent) != AQ_OK || !(text = json_dumps(intent, JSON_COMPACT | JSON_SORT_KEYS)))
		goto out;
	SHA256((const unsigned char *)text, strlen(text), sum);
	for (size_t i = 0; i < sizeof(sum); i++)
		snprintf(hash + i * 2, 3, "%02x", sum[i]);
	if (rec_generation(db, nn, hash, &gen) != AQ_OK || db_get(db, nn, &node) != AQ_OK)
		goto out;
	if (rec_applied(node, pushes) >= gen &&
	    now - api_json_int64(json_object_get(pushes, nn), "at", 0) < srv->cfg.repush_ms)
		goto out;
	payload = json_deep_copy(intent);
	json_object_set_new(payload, "generation", json_integer(gen));
	if (push(srv, node, payload, &applied, &failed, err, sizeof(err)) != AQ_OK) {
		fprintf(stderr, "aquiferd: %s\n", err);
		pushed = -1;
		goto out;
	}
	pushed = 1;
	if (applied > gen) {
		json_object_del(pushes, nn);
		if (rec_push_past(db, nn, applied) == AQ_OK)
			srv_reconcile_kick(srv, nn);
		goto out;
	}
	/* what a push learnt stays in memory: the durable appliedGeneration
	 * comes with the node's own status report */
	json_object_set_new(pushes, nn, json_pack("{s:I,s:I,s:s}", "at", (json_int_t)now, "applied", (json_int_t)applied,
						  "nid", api_json_str(json_object_get(node, "internal"), "incarnation", "")));
	srv_node_applied(srv, db, nn, applied, failed);
out:
	free(text);
	json_decref(failed);
	json_decref(intent);
	json_decref(payload);
	json_decref(node);
	return pushed;
}

static void *rec_main(void *arg)
{
	struct srv *srv = arg;
	struct db *db = NULL;
	aq_msg msg = { "" };

	if (db_open(srv->cfg.db_path, &db, &msg) != AQ_OK) {
		fprintf(stderr, "aquiferd: reconciler: %s\n", msg.text);
		return NULL;
	}
	int64_t last_full = 0;
	json_t *pushes = json_object(); /* node -> {at, applied} of our last push */

	for (;;) {
		json_t *nodes = NULL, *n, *dirty;
		struct timespec until;
		bool all;
		size_t i;

		pthread_mutex_lock(&srv->rec_lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		while (!srv->rec_kick && !srv->rec_stop)
			if (pthread_cond_timedwait(&srv->rec_cond, &srv->rec_lock, &until) != 0)
				break;
		srv->rec_kick = false;
		if (srv->rec_stop) {
			pthread_mutex_unlock(&srv->rec_lock);
			break;
		}
		/* a kick visits the nodes it names; every repush_ms, all of them */
		dirty = srv->rec_dirty;
		srv->rec_dirty = NULL;
		all = srv->rec_all_dirty || rec_now_ms() - last_full >= srv->cfg.repush_ms;
		srv->rec_all_dirty = false;
		pthread_mutex_unlock(&srv->rec_lock);
		if (all)
			last_full = rec_now_ms();

		uint64_t t0 = srv_now_ns();
		int pushed = 0, failed = 0, visited = 0;

		if (srv_drain_pass(srv, db, rec_now_ms())) /* failover and pending drains (srv_drain.c) */
			all = true;
		if (list_all(db, "node", NULL, &nodes) != AQ_OK) {
			json_decref(dirty);
			continue;
		}
		json_array_foreach(nodes, i, n) {
			const char *nn = api_json_str(n, "name", "");

			if (strcmp(api_json_str(n, "state", ""), "DOWN") == 0)
				continue;
			/* behind on its generation: visit it whatever was kicked */
			if (!all && !json_object_get(dirty, nn) &&
			    rec_applied(n, pushes) >= api_json_int64(n, "generation", 0))
				continue;
			visited++;
			switch (rec_node(srv, db, n, pushes)) {
			case 1: pushed++; break;
			case -1: failed++; break;
			default: break;
			}
		}
		json_decref(dirty);
		srv_metrics_reconcile(srv_now_ns() - t0, visited, pushed, failed, all);
		json_decref(nodes);
	}
	json_decref(pushes);
	db_close(db);
	return NULL;
}

int srv_reconcile_start(struct srv *srv, aq_msg *msg)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pthread_mutex_init(&srv->rec_lock, NULL);
	pthread_cond_init(&srv->rec_cond, NULL);
	if (pthread_create(&srv->rec_thread, NULL, rec_main, srv) != 0)
		return aq_fail(msg, AQ_EINTERNAL, "cannot start the reconciler");
	srv->rec_running = true;
	return AQ_OK;
}

void srv_reconcile_stop(struct srv *srv)
{
	if (!srv->rec_running)
		return;
	pthread_mutex_lock(&srv->rec_lock);
	srv->rec_stop = true;
	pthread_cond_signal(&srv->rec_cond);
	pthread_mutex_unlock(&srv->rec_lock);
	pthread_join(srv->rec_thread, NULL);
	srv->rec_running = false;
}
