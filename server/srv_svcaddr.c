/* srv_svcaddr: a location's service addresses, given to placements and
 * handed to the node that serves them (see srv_svcaddr.h). */
#include "server/srv_svcaddr.h"

#include <stdio.h>
#include <string.h>

#include "api/api_schema.h"
#include "api/api_svcaddr.h"
#include "db/db.h"

int srv_svcaddr_location_check(struct db *db, const char *loc_id, const json_t *doc, aq_msg *msg)
{
	const json_t *sa = json_object_get(doc, "serviceAddresses");
	struct api_svcaddr_range mine, other;
	json_t *locs = NULL, *l;
	size_t i;
	int rc;

	if (!sa)
		return AQ_OK;
	if ((rc = api_svcaddr_range_check(sa, &mine, msg)) != AQ_OK)
		return rc;
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "location", .parent = "" }, &locs, msg)) != AQ_OK)
		return rc;
	json_array_foreach(locs, i, l) {
		const json_t *osa = json_object_get(l, "serviceAddresses");

		if (!osa || strcmp(api_json_str(l, "locationId", ""), loc_id) == 0 ||
		    api_svcaddr_range_check(osa, &other, NULL) != AQ_OK)
			continue;
		if (api_svcaddr_overlap(&mine, &other)) {
			rc = aq_fail(msg, AQ_EINVAL, "serviceAddresses.range %s overlaps location %s's range %s",
				     api_json_str(sa, "range", ""), api_json_str(l, "locationId", ""),
				     api_json_str(osa, "range", ""));
			break;
		}
	}
	json_decref(locs);
	return rc;
}

/* Every service address placements of location loc_id hold, as strings. */
static int used_addresses(struct db *db, const char *loc_id, json_t *used)
{
	char parent[200];
	json_t *nodes = NULL, *n;
	size_t i;
	int rc;

	snprintf(parent, sizeof(parent), "locations/%s", loc_id);
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "node", .parent = parent }, &nodes, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(nodes, i, n) {
		json_t *pls = NULL, *pl;
		size_t j;

		if ((rc = db_list_all(db, &(struct db_query){ .kind = "placement", .parent = api_json_str(n, "name", "") },
				      &pls, NULL)) != AQ_OK)
			break;
		json_array_foreach(pls, j, pl) {
			const char *a = api_json_str(json_object_get(pl, API_SVCADDR_KEY), "address", NULL);

			if (a)
				json_array_append_new(used, json_string(a));
		}
		json_decref(pls);
	}
	json_decref(nodes);
	return rc;
}

int srv_svcaddr_assign(struct db *db, const char *loc_id, const json_t *seen, json_t *pl, aq_msg *msg)
{
	struct api_svcaddr_range r;
	struct api_svcaddr s;
	json_t *read = NULL, *used = json_array(), *e;
	const json_t *loc = seen;
	char name[200];
	int rc = AQ_OK;

	snprintf(name, sizeof(name), "locations/%s", loc_id);
	if (!loc && (rc = db_get(db, name, &read)) == AQ_OK)
		loc = read;
	if (rc != AQ_OK || !json_object_get(loc, "serviceAddresses")) {
		rc = rc == AQ_ENOENT ? AQ_OK : rc;
		goto out;
	}
	if ((rc = api_svcaddr_range_check(json_object_get(loc, "serviceAddresses"), &r, msg)) != AQ_OK ||
	    (rc = used_addresses(db, loc_id, used)) != AQ_OK || (rc = api_svcaddr_pick(&r, used, &s.addr, msg)) != AQ_OK)
		goto out;
	s.prefix = r.prefix;
	s.port = r.port;
	if (!(e = api_svcaddr_encode(&s))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	json_object_set_new(pl, API_SVCADDR_KEY, e);
out:
	json_decref(read);
	json_decref(used);
	return rc;
}

static bool reports(const json_t *node, const char *addr)
{
	json_t *held = json_object_get(node, "serviceAddresses"), *h;
	size_t i;

	json_array_foreach(held, i, h)
		if (json_is_string(h) && strcmp(json_string_value(h), addr) == 0)
			return true;
	return false;
}

bool srv_svcaddr_held(const json_t *node, const json_t *pl)
{
	const char *a = api_json_str(json_object_get(pl, API_SVCADDR_KEY), "address", NULL);

	return !a || reports(node, a);
}

int srv_svcaddr_intent(struct db *db, const json_t *node, const json_t *pl, json_t **out)
{
	const json_t *sa = json_object_get(pl, API_SVCADDR_KEY);
	const char *a = api_json_str(sa, "address", NULL), *nn = api_json_str(node, "name", "");
	char parent[200];
	json_t *nodes = NULL, *n;
	bool taken = false;
	size_t i;
	int rc;

	*out = NULL;
	/* the owner that holds it already keeps it (a node back from DOWN
	 * that still reports it loses it with its next intent) */
	if (!a || reports(node, a))
		goto give;
	snprintf(parent, sizeof(parent), "locations/%s", api_json_str(node, "location", ""));
	if ((rc = db_list_all(db, &(struct db_query){ .kind = "node", .parent = parent }, &nodes, NULL)) != AQ_OK)
		return rc;
	json_array_foreach(nodes, i, n)
		if (strcmp(api_json_str(n, "name", ""), nn) != 0 && strcmp(api_json_str(n, "state", ""), "DOWN") != 0 &&
		    reports(n, a))
			taken = true;
	json_decref(nodes);
	if (taken)
		return AQ_OK;
give:
	if (a && !(*out = json_deep_copy(sa)))
		return AQ_ENOMEM;
	return AQ_OK;
}

int64_t srv_svcaddr_lease_ms(int node_down_ms)
{
	return node_down_ms / 2;
}

int srv_svcaddr_applied_wait(struct db *db, const json_t *node, const json_t *pl, const char *action, json_t *vol,
			     const char *vparent, bool *waits)
{
	const char *a = api_json_str(json_object_get(pl, API_SVCADDR_KEY), "address", NULL);
	const char *nn = api_json_str(node, "name", ""), *id = strchr(nn, '/') ? strchr(nn, '/') + 1 : nn;
	const char *from = api_json_str(pl, "from", ""), *fid = strchr(from, '/') ? strchr(from, '/') + 1 : from;
	char text[600];

	*waits = false;
	if ((strcmp(action, "create") != 0 && strcmp(action, "move") != 0) || srv_svcaddr_held(node, pl))
		return AQ_OK;
	*waits = true;
	if (strcmp(action, "move") == 0)
		snprintf(text, sizeof(text), "moving from node %s to node %s: %s applied it, but its service address %s "
			 "is not served until %s holds it", fid, id, id, a, id);
	else
		snprintf(text, sizeof(text), "created on node %s: its service address %s is not served until %s holds it",
			 id, a, id);
	if (strcmp(api_json_str(vol, "stateDetails", ""), text) == 0)
		return AQ_OK;
	json_object_set_new(vol, "stateDetails", json_string(text));
	return db_put(db, "volume", vparent, api_json_str(vol, "name", ""), vol, false);
}
