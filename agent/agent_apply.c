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
 */
#include "agent/agent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int apply_volume(struct agent *a, const json_t *v, struct vol_export_cfg *c, aq_msg *msg)
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
	return AQ_OK;
}

int agent_apply(struct agent *a, json_t *intent, aq_msg *msg)
{
	json_t *vols = json_object_get(intent, "volumes"), *dels = json_object_get(intent, "deletes"), *v;
	int64_t gen = api_json_int64(intent, "generation", -1);
	struct vol_export_cfg *cfg = NULL;
	json_t *failed = json_array();
	size_t i, n = json_array_size(vols), used = 0;
	int rc = AQ_OK;

	if (gen < 0 || !json_is_array(vols))
		return aq_fail(msg, AQ_EINVAL, "intent needs generation and volumes[]");
	pthread_mutex_lock(&a->lock);
	if (gen < a->applied)
		goto out; /* a stale push: the newer state stays */
	cfg = calloc(n ? n : 1, sizeof(*cfg));
	if (!cfg) {
		rc = AQ_ENOMEM;
		goto out;
	}
	json_array_foreach(vols, i, v) {
		aq_msg why = { "" };

		if (apply_volume(a, v, &cfg[used], &why) == AQ_OK) {
			used++;
			continue;
		}
		fprintf(stderr, "aquifer-agent: not serving %s: %s\n", api_json_str(v, "name", "?"), why.text);
		json_array_append_new(failed, json_pack("{s:s,s:s}", "name", api_json_str(v, "name", ""), "error", why.text));
	}
	if ((rc = nfs_srv_set_exports(a->nfs, cfg, used)) != 0) {
		rc = aq_fail(msg, AQ_EINVAL, "the NFS server refused the export set: %s", strerror(-rc));
		goto out;
	}
	/* data of deleted volumes goes only once nothing serves it */
	json_array_foreach(dels, i, v) {
		int drc = a->shelf.ops->destroy(&a->shelf, api_json_str(v, "dir", ""));

		if (drc != 0)
			fprintf(stderr, "aquifer-agent: cannot delete %s: %s\n", api_json_str(v, "dir", ""), strerror(-drc));
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
	return rc;
}
