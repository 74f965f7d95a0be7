/* agent_apply: turn a pushed intent into the node's served state.
 *
 * Idempotent and level-triggered: the intent lists every volume the node
 * must serve; the NFS export set is replaced by exactly that list, volumes
 * listed under "deletes" lose their data (after they stopped being served),
 * and the intent is persisted before the new generation is reported. An
 * intent older than the applied generation changes nothing. A volume this
 * node cannot serve (its shelf directory cannot be attached, its rules do
 * not fit) is left out and listed in a->failed, which the answer and the
 * status reports carry, so its operation fails with the reason; the other
 * volumes are served.
 *
 * Cold tier (issue 11): "coldStore" (S3 or a directory; absent = the
 * embedded default <shelf>/.aquifer-cold/<location>) is applied in place when
 * it changed; each volume's "tieringPolicy" goes to the tier engine before
 * the export set changes, so cold data is never served as holes. A volume
 * whose tier map exists keeps being tiered (PAUSED at least): tiering cannot
 * be switched off once on. Its tier map lives in <shelf>/.aquifer-tier/<fsid>.
 */
#include "agent/agent_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_schema.h"

static int apply_rule(const json_t *r, struct vol_rule *out, aq_msg *msg)
{
	const char *clients = api_json_str(r, "allowedClients", "");
	const char *access = api_json_str(r, "accessType", "READ_WRITE");
	const char *squash = api_json_str(r, "squashMode", "NO_ROOT_SQUASH");
	int64_t anon = api_json_int64(r, "anonUid", 65534);

	if (strlen(clients) >= sizeof(out->clients))
		return aq_fail(msg, AQ_EINVAL, "allowedClients is longer than %zu bytes", sizeof(out->clients) - 1);
	snprintf(out->clients, sizeof(out->clients), "%s", clients);
	out->access = strcmp(access, "READ_WRITE") == 0 ? VOL_ACCESS_RW
		      : strcmp(access, "READ_ONLY") == 0 ? VOL_ACCESS_RO : VOL_ACCESS_NONE;
	out->squash = strcmp(squash, "ROOT_SQUASH") == 0 ? VOL_SQUASH_ROOT
		      : strcmp(squash, "ALL_SQUASH") == 0 ? VOL_SQUASH_ALL : VOL_SQUASH_NONE;
	out->anon_uid = (uint32_t)anon;
	out->anon_gid = (uint32_t)anon;
	return AQ_OK;
}

/* "qos": {"mibps", "iops", and for FLEX pools "sharedPool", "sharedMibps",
 * "sharedIops"}; absent or 0 = unlimited. */
static int apply_qos(const json_t *v, struct qos_limits *q, aq_msg *msg)
{
	const json_t *qos = json_object_get(v, "qos");
	double mibps = api_json_double(qos, "mibps", 0), smibps = api_json_double(qos, "sharedMibps", 0);
	int64_t iops = api_json_int64(qos, "iops", 0), siops = api_json_int64(qos, "sharedIops", 0);
	const char *pool = api_json_str(qos, "sharedPool", "");

	memset(q, 0, sizeof(*q));
	if (!qos)
		return AQ_OK;
	if (mibps < 0 || smibps < 0 || iops < 0 || siops < 0 || mibps > 1e9 || smibps > 1e9 ||
	    strlen(pool) >= sizeof(q->pool))
		return aq_fail(msg, AQ_EINVAL, "volume %s: bad qos", api_json_str(v, "name", "?"));
	q->bytes_per_s = (uint64_t)(mibps * 1048576.0);
	q->ops_per_s = (uint64_t)iops;
	snprintf(q->pool, sizeof(q->pool), "%s", pool);
	if (pool[0]) {
		q->pool_bytes_per_s = (uint64_t)(smibps * 1048576.0);
		q->pool_ops_per_s = (uint64_t)siops;
	}
	return AQ_OK;
}

static int copy_field(char *dst, size_t cap, const json_t *o, const char *key, bool need, aq_msg *msg)
{
	const char *s = api_json_str(o, key, "");

	if (strlen(s) >= cap || (need && !*s))
		return aq_fail(msg, AQ_EINVAL, "coldStore: %s is %s", key, *s ? "too long" : "missing");
	snprintf(dst, cap, "%s", s);
	return AQ_OK;
}

/* The intent's "coldStore" as an obj_cfg. */
static int apply_cold_store(struct agent *a, const json_t *intent, struct obj_cfg *c, aq_msg *msg)
{
	const json_t *cs = json_object_get(intent, "coldStore");
	const json_t *s3 = json_object_get(cs, "s3"), *dir = json_object_get(cs, "directory");
	int rc = AQ_OK;

	memset(c, 0, sizeof(*c));
	if (s3) {
		c->kind = OBJ_S3;
		if ((rc = copy_field(c->endpoint, sizeof(c->endpoint), s3, "endpoint", true, msg)) == AQ_OK &&
		    (rc = copy_field(c->bucket, sizeof(c->bucket), s3, "bucket", true, msg)) == AQ_OK &&
		    (rc = copy_field(c->region, sizeof(c->region), s3, "region", false, msg)) == AQ_OK &&
		    (rc = copy_field(c->access_key, sizeof(c->access_key), s3, "accessKeyId", false, msg)) == AQ_OK)
			rc = copy_field(c->secret_key, sizeof(c->secret_key), s3, "secretAccessKey", false, msg);
	} else if (dir) {
		c->kind = OBJ_DIRECTORY;
		rc = copy_field(c->path, sizeof(c->path), dir, "path", true, msg);
	} else {
		char top[1100];

		c->kind = OBJ_DIRECTORY;
		snprintf(top, sizeof(top), "%s/.aquifer-cold", a->cfg.shelf);
		mkdir(top, 0700);
		snprintf(c->path, sizeof(c->path), "%s/%s", top, a->cfg.location);
	}
	return rc;
}

/* "tieringPolicy" (API defaults for missing fields); none = tiering off
 * unless the volume has a tier map already. */
static void apply_tiering(struct agent *a, const json_t *v, uint64_t fsid, const char *root, struct tier_vol_cfg *t)
{
	const json_t *tp = json_object_get(v, "tieringPolicy");
	const char *act = api_json_str(tp, "tierAction", "PAUSED"), *ret = api_json_str(tp, "retrievalPolicy", "DEFAULT");
	char db[4200];

	memset(t, 0, sizeof(*t));
	t->fsid = fsid;
	snprintf(t->root, sizeof(t->root), "%s", root);
	snprintf(t->state_dir, sizeof(t->state_dir), "%s/.aquifer-tier/%016llx", a->cfg.shelf, (unsigned long long)fsid);
	t->action = !tp ? TIER_OFF : strcmp(act, "ENABLED") == 0 ? TIER_ENABLED : TIER_PAUSED;
	snprintf(db, sizeof(db), "%s/tier.db", t->state_dir);
	if (t->action == TIER_OFF && access(db, F_OK) == 0)
		t->action = TIER_PAUSED;
	t->cooling_days = (int)api_json_int64(tp, "coolingThresholdDays", 31);
	if (t->cooling_days < 0)
		t->cooling_days = 31;
	t->bypass = json_is_true(json_object_get(tp, "hotTierBypassModeEnabled"));
	t->retrieval = strcmp(ret, "ON_READ") == 0 ? TIER_RET_ON_READ
		       : strcmp(ret, "NEVER") == 0 ? TIER_RET_NEVER : TIER_RET_DEFAULT;
}

static int apply_volume(struct agent *a, const json_t *v, struct vol_export_cfg *c, struct tier_vol_cfg *t,
			aq_msg *msg)
{
	const char *fsid = api_json_str(v, "fsid", ""), *share = api_json_str(v, "shareName", "");
	const char *perm = api_json_str(v, "unixPermissions", "0770");
	json_t *rules = json_object_get(v, "exportRules"), *r;
	char *end;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	if (strlen(fsid) != 16 || !*share || strlen(share) > 200)
		return aq_fail(msg, AQ_EINVAL, "volume %s: bad fsid or shareName", api_json_str(v, "name", "?"));
	snprintf(c->id, sizeof(c->id), "%s", fsid);
	c->fsid = strtoull(fsid, &end, 16);
	if (*end)
		return aq_fail(msg, AQ_EINVAL, "volume %s: fsid is not hex", api_json_str(v, "name", "?"));
	snprintf(c->path, sizeof(c->path), "/%s", share);
	c->capacity = (uint64_t)api_json_int64(v, "capacityBytes", 0);
	if ((rc = apply_qos(v, &c->qos, msg)) != AQ_OK)
		return rc;
	rc = a->shelf.ops->attach(&a->shelf, api_json_str(v, "dir", ""), (unsigned)strtoul(perm, NULL, 8),
				  c->root, sizeof(c->root));
	if (rc != 0)
		return aq_fail(msg, AQ_EIO, "volume %s: cannot attach %s on the shelf: %s",
			       api_json_str(v, "name", "?"), api_json_str(v, "dir", ""), strerror(-rc));
	if (json_array_size(rules) > VOL_MAX_RULES)
		return aq_fail(msg, AQ_EINVAL, "volume %s: more than %d export rules", api_json_str(v, "name", "?"), VOL_MAX_RULES);
	json_array_foreach(rules, i, r)
		if ((rc = apply_rule(r, &c->rules[c->nrules++], msg)) != AQ_OK)
			return rc;
	apply_tiering(a, v, c->fsid, c->root, t);
	return AQ_OK;
}

int agent_apply(struct agent *a, json_t *intent, aq_msg *msg)
{
	json_t *vols = json_object_get(intent, "volumes"), *dels = json_object_get(intent, "deletes"), *v;
	int64_t gen = api_json_int64(intent, "generation", -1);
	struct vol_export_cfg *cfg = NULL;
	struct tier_vol_cfg *tv = NULL;
	const json_t **vj = NULL;
	int *trc = NULL;
	struct obj_cfg cold;
	aq_msg cwhy = { "" };
	char tdir[1100];
	json_t *failed = json_array();
	size_t i, k, n = json_array_size(vols), used = 0;
	int rc = AQ_OK;

	if (gen < 0 || !json_is_array(vols))
		return aq_fail(msg, AQ_EINVAL, "intent needs generation and volumes[]");
	pthread_mutex_lock(&a->lock);
	if (gen < a->applied)
		goto out; /* a stale push: the newer state stays */
	cfg = calloc(n ? n : 1, sizeof(*cfg));
	tv = calloc(n ? n : 1, sizeof(*tv));
	vj = calloc(n ? n : 1, sizeof(*vj));
	trc = calloc(n ? n : 1, sizeof(*trc));
	if (!cfg || !tv || !vj || !trc) {
		rc = AQ_ENOMEM;
		goto out;
	}
	/* The cold store first: recovery of newly tiered volumes needs it. */
	if (apply_cold_store(a, intent, &cold, &cwhy) != AQ_OK) {
		fprintf(stderr, "aquifer-agent: cold store not changed: %s\n", cwhy.text);
	} else if (memcmp(&cold, &a->cold, sizeof(cold)) != 0 && a->cold.kind && tier_cold_total(a->tier)) {
		/* The records name objects in the store in use: switching now
		 * would leave cold data unreadable. Moving data between stores
		 * is not implemented. */
		fprintf(stderr, "aquifer-agent: cold store change refused: volumes hold data in %s\n",
			a->cold.kind == OBJ_S3 ? a->cold.endpoint : a->cold.path);
		snprintf(a->last_error, sizeof(a->last_error),
			 "cold store change refused: tiered volumes still hold data in the current store");
	} else if (memcmp(&cold, &a->cold, sizeof(cold)) != 0) {
		int crc = tier_set_store(a->tier, &cold);

		if (crc == 0)
			a->cold = cold;
		else
			fprintf(stderr, "aquifer-agent: cold store refused: %s\n", strerror(-crc));
	}
	snprintf(tdir, sizeof(tdir), "%s/.aquifer-tier", a->cfg.shelf);
	mkdir(tdir, 0700);
	json_array_foreach(vols, i, v) {
		aq_msg why = { "" };

		if (apply_volume(a, v, &cfg[used], &tv[used], &why) == AQ_OK) {
			vj[used++] = v;
			continue;
		}
		fprintf(stderr, "aquifer-agent: not serving %s: %s\n", api_json_str(v, "name", "?"), why.text);
		json_array_append_new(failed, json_pack("{s:s,s:s}", "name", api_json_str(v, "name", ""), "error", why.text));
	}
	/* Tiering before exports: a served volume always finds its tier map. */
	tier_set_volumes(a->tier, tv, used, trc);
	for (i = 0, k = 0; i < used; i++) { /* not served without its tier map */
		if (trc[i] != 0) {
			char why[300];

			snprintf(why, sizeof(why), "volume %s: cannot open its tier map in %s: %s",
				 api_json_str(vj[i], "name", "?"), tv[i].state_dir, strerror(-trc[i]));
			fprintf(stderr, "aquifer-agent: not serving %s\n", why);
			json_array_append_new(failed, json_pack("{s:s,s:s}", "name", api_json_str(vj[i], "name", ""), "error", why));
			continue;
		}
		cfg[k++] = cfg[i];
	}
	used = k;
	if ((rc = nfs_srv_set_exports(a->nfs, cfg, used)) != 0) {
		rc = aq_fail(msg, AQ_EINVAL, "the NFS server refused the export set: %s", strerror(-rc));
		goto out;
	}
	/* data of deleted volumes goes only once nothing serves it */
	json_array_foreach(dels, i, v) {
		int drc = a->shelf.ops->destroy(&a->shelf, api_json_str(v, "dir", ""));

		const char *fsid = api_json_str(v, "fsid", "");
		char *end;
		unsigned long long id = strtoull(fsid, &end, 16);

		if (drc != 0)
			fprintf(stderr, "aquifer-agent: cannot delete %s: %s\n", api_json_str(v, "dir", ""), strerror(-drc));
		if (strlen(fsid) == 16 && !*end) { /* its cold objects and tier map */
			char sd[1200];

			snprintf(sd, sizeof(sd), "%s/.aquifer-tier/%016llx", a->cfg.shelf, id);
			if (access(sd, F_OK) == 0)
				tier_destroy_volume(a->tier, id, sd);
		}
	}
	if ((rc = agent_state_write(a->cfg.state_dir, "intent.json", intent, msg)) != AQ_OK)
		goto out;
	json_decref(a->intent);
	a->intent = json_incref(intent);
	a->applied = gen;
	json_decref(a->failed);
	a->failed = failed;
	failed = NULL;
out:
	pthread_mutex_unlock(&a->lock);
	json_decref(failed);
	free(cfg);
	free(tv);
	free(vj);
	free(trc);
	return rc;
}
