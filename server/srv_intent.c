/* srv_intent: a node's desired state, built from its placements (see
 * srv_intent.h). Every volume entry goes through the one intent contract
 * (api/api_intent.h), so what the reconciler sends is what the agent
 * checks. Pure over the db: no I/O but reads, no locks. */
#include "server/srv_intent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
#include "api/api_resource.h"
#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_backup.h"
#include "server/srv_location.h"
#include "server/srv_snapshot.h"
#include "server/srv_smbuser.h"
#include "server/srv_svcaddr.h"
#include "api/api_svcaddr.h"

int srv_intent_vol_parent(const char *vn, char *out, size_t cap)
{
	const char *slash = strstr(vn, "/volumes/");

	if (!slash)
		return AQ_EINVAL;
	snprintf(out, cap, "%.*s", (int)(slash - vn), vn);
	return AQ_OK;
}

/* The intent entry of the volume a placement names (api_intent.h), or a
 * reason in bad[] when it cannot be encoded: then its operation fails with
 * that reason once the generation is applied, instead of waiting forever.
 * An error reading its snapshots fails the whole intent (AQ_ENOMEM, db). */
static int intent_volume(const struct api_math_params *p, struct db *db, const json_t *node, const json_t *pl,
			 const json_t *vdocs, json_t *pools, json_t *vols, json_t *bad)
{
	const char *vn = api_json_str(pl, "volume", "");
	char pname[800], parent[600];
	struct api_intent_volume *iv = malloc(sizeof(*iv));
	json_t *vol = json_object_get(vdocs, vn), *pool = NULL;
	aq_msg why = { .text = "" };
	int rc = AQ_OK;

	if (!iv || !vol || srv_intent_vol_parent(vn, parent, sizeof(parent)) != AQ_OK)
		goto out;
	/* a node's volumes share a few pools: each is read once per build */
	snprintf(pname, sizeof(pname), "%s/storagePools/%s", parent, api_volume_pool_id(vol));
	if (!(pool = json_object_get(pools, pname))) {
		if (db_get(db, pname, &pool) != AQ_OK)
			pool = json_null();
		json_object_set_new(pools, pname, pool);
	}
	if (json_is_null(pool))
		pool = NULL;
	if (api_intent_volume_from_api(vol, pool, p, api_json_str(pl, "fsid", ""), api_json_str(pl, "dir", ""), iv,
				       &why) == AQ_OK) {
		json_t *e = api_intent_volume_encode(iv), *sa = NULL;

		/* its snapshots, revert and clone source (srv_snapshot.h); an
		 * intent that could not read them is not sent but built again;
		 * likewise its service address (srv_svcaddr.h) */
		if (!e || (rc = srv_snapshot_intent(db, vol, e)) != AQ_OK)
			rc = e ? rc : AQ_ENOMEM;
		/* a volume created from a backup (srv_backup.h) */
		if (rc == AQ_OK && (rc = srv_backup_restore_intent(db, vol, e)) == AQ_ENOENT) {
			json_array_append_new(bad, json_pack("{s:s,s:s}", "name", vn, "error", "its restoreParameters."
							     "sourceBackup no longer exists"));
			json_decref(e);
			rc = AQ_OK;
			goto out;
		}
		if (rc == AQ_OK && (rc = srv_svcaddr_intent(db, node, pl, &sa)) == AQ_OK && sa)
			json_object_set_new(e, API_SVCADDR_KEY, sa);
		json_array_append_new(vols, e);
	} else {
		json_array_append_new(bad, json_pack("{s:s,s:s}", "name", vn, "error", why.text));
	}
out:
	free(iv);
	return rc;
}

/* The volumes the placements pls serve (not those being deleted), in one
 * query: {name: doc}. */
static int intent_volumes(struct db *db, const json_t *pls, json_t **vdocs)
{
	json_t *names = json_array(), *pl;
	size_t i;
	int rc;

	if (!names)
		return AQ_ENOMEM;
	json_array_foreach(pls, i, pl)
		if (strcmp(api_json_str(pl, "action", ""), "delete") != 0)
			json_array_append_new(names, json_string(api_json_str(pl, "volume", "")));
	rc = db_get_many(db, names, vdocs);
	json_decref(names);
	return rc;
}

/* Note a placement that waits for a generation, as read. */
static void intent_pending(json_t *pending, const json_t *pl)
{
	char pname[800], v[900];

	if (!pending || !*api_json_str(pl, "action", "") || api_json_int64(pl, "pendingGeneration", 0) > 0)
		return;
	snprintf(pname, sizeof(pname), "placements/%s", api_json_str(pl, "volume", ""));
	snprintf(v, sizeof(v), "%s|%s", api_json_str(pl, "op", ""), api_json_str(pl, "action", ""));
	json_object_set_new(pending, pname, json_string(v));
}

int srv_intent_build(const struct api_math_params *srv_math, struct db *db, const json_t *node,
			json_t **out, json_t **bad, json_t *pending)
{
	const char *nn = api_json_str(node, "name", "");
	json_t *pls = NULL, *pl, *vols = json_array(), *dels = json_array(), *key = NULL, *cold;
	json_t *vdocs = NULL, *pools = json_object();
	char kname[200];
	size_t i;
	int rc;

	*bad = json_array();
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "placement", .parent = nn }, &pls, NULL)) != AQ_OK ||
	    (rc = intent_volumes(db, pls, &vdocs)) != AQ_OK)
		goto out;
	json_array_foreach(pls, i, pl) {
		intent_pending(pending, pl);
		if (strcmp(api_json_str(pl, "action", ""), "delete") == 0) {
			struct api_intent_delete d = { .name = "" };

			snprintf(d.name, sizeof(d.name), "%s", api_json_str(pl, "volume", ""));
			snprintf(d.fsid, sizeof(d.fsid), "%s", api_json_str(pl, "fsid", ""));
			snprintf(d.dir, sizeof(d.dir), "%s", api_json_str(pl, "dir", ""));
			json_array_append_new(dels, api_intent_delete_encode(&d));
			continue;
		}
		if ((rc = intent_volume(srv_math, db, node, pl, vdocs, pools, vols, *bad)) != AQ_OK)
			goto out;
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
	/* every SMB user of the location (hashes only), in the hash too */
	if (rc == AQ_OK && json_object_set_new(*out, "smbUsers", srv_smbuser_intent(db, api_json_str(node, "location", ""))))
		rc = AQ_ENOMEM;
	/* the backup jobs this node runs (srv_backup.h) */
	if (rc == AQ_OK)
		rc = srv_backup_intent(db, node, *out);
out:
	json_decref(pls);
	json_decref(vdocs);
	json_decref(pools);
	json_decref(vols);
	json_decref(dels);
	json_decref(key);
	return rc;
}

