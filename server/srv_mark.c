/* srv_mark: the nodes a pool, snapshot, SMB user or location change
 * affects, marked dirty in the change's own transaction (see srv_mark.h).
 * Before, such handlers rang for every node, which rebuilt every node's
 * intent in memory on this process only (a follower's ring reached no
 * leader: the change waited for the next full sweep). */
#include "server/srv_mark.h"

#include <stdio.h>
#include <string.h>

#include "api/api_schema.h"
#include "db/db.h"
#include "server/srv_kick.h"

/* Mark the node of each placement doc in docs ({name: placement}). */
static int mark_placements(struct db *db, json_t *docs, json_t *nodes)
{
	const char *pn;
	json_t *pl;
	int rc = AQ_OK;

	json_object_foreach(docs, pn, pl) {
		const char *node = api_json_str(pl, "node", "");

		if (!*node || json_object_get(nodes, node))
			continue;
		if ((rc = db_dirty_mark(db, node)) != AQ_OK || json_object_set_new(nodes, node, json_true()) != 0)
			return rc != AQ_OK ? rc : AQ_ENOMEM;
	}
	return rc;
}

int srv_mark_volume(struct db *db, const char *volume, json_t *nodes)
{
	json_t *names = json_array(), *docs = NULL;
	int rc;

	if (!names || json_array_append_new(names, json_sprintf("placements/%s", volume)) != 0) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = db_get_many(db, names, &docs)) != AQ_OK)
		goto out;
	rc = mark_placements(db, docs, nodes);
out:
	json_decref(names);
	json_decref(docs);
	return rc;
}

/* A volume's storagePool (an ID or a full name, as stored) names pool. */
static bool in_pool(const char *parent, const char *sp, const char *pool)
{
	size_t n = strlen(parent);

	if (strchr(sp, '/'))
		return strcmp(sp, pool) == 0;
	return strncmp(pool, parent, n) == 0 && strncmp(pool + n, "/storagePools/", 14) == 0 &&
	       strcmp(pool + n + 14, sp) == 0;
}

int srv_mark_volumes_of(struct db *db, const char *parent, const char *pool, json_t *nodes)
{
	static const char *const fields[] = { "storagePool" };
	json_t *vols = NULL, *names = json_array(), *docs = NULL, *v;
	size_t i;
	int rc;

	if (!names) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = db_list_fields(db, "volume", parent, fields, 1, &vols)) != AQ_OK)
		goto out;
	json_array_foreach(vols, i, v) {
		if (pool && !in_pool(parent, api_json_str(v, "storagePool", ""), pool))
			continue;
		if (json_array_append_new(names, json_sprintf("placements/%s", api_json_str(v, "name", ""))) != 0) {
			rc = AQ_ENOMEM;
			goto out;
		}
	}
	if (json_array_size(names) == 0)
		goto out;
	if ((rc = db_get_many(db, names, &docs)) != AQ_OK)
		goto out;
	rc = mark_placements(db, docs, nodes);
out:
	json_decref(vols);
	json_decref(names);
	json_decref(docs);
	return rc;
}

int srv_mark_location(struct db *db, const char *location, json_t *nodes)
{
	static const char *const fields[] = { "state" };
	json_t *list = NULL, *n;
	size_t i;
	int rc;

	if ((rc = db_list_fields(db, "node", location, fields, 1, &list)) != AQ_OK)
		return rc;
	json_array_foreach(list, i, n) {
		const char *node = api_json_str(n, "name", "");

		if ((rc = db_dirty_mark(db, node)) != AQ_OK)
			break;
		if (json_object_set_new(nodes, node, json_true()) != 0) {
			rc = AQ_ENOMEM;
			break;
		}
	}
	json_decref(list);
	return rc;
}

void srv_mark_ring(struct srv *srv, json_t *nodes)
{
	const char *node;
	json_t *v;

	json_object_foreach(nodes, node, v)
		srv_kick(srv, node);
}
