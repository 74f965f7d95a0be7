/* db_usage: the usage counters of pools and nodes (db.h, db_usage_get).
 *
 * The engines keep them with triggers (db_migrations.c, step 4) in the
 * transaction of every write of a volume or placement, whoever writes it
 * (a handler, the reconciler, an agent's report, aquiferd db migrate), so a
 * create's pool and placement checks read one row instead of summing over
 * the location. db_usage_verify recomputes them here, in C, from the
 * documents themselves, so that a test (or an operator) can tell a trigger
 * that miscounts from one that does not.
 */
#include "db/db_engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE_EPS 1e-6

int db_usage_get(struct db *db, const char *name, struct db_usage *u)
{
	memset(u, 0, sizeof(*u));
	return db->ops->usage_get(db, name, u);
}

int db_usage_each(struct db *db, const char *prefix, db_usage_fn fn, void *arg)
{
	return db->ops->usage_each(db, prefix ? prefix : "", fn, arg);
}

int db_usage_location(struct db *db, const char *loc, db_usage_fn fn, void *arg)
{
	char infix[256], parent[256];

	if (!loc || !*loc || strchr(loc, '/') || strlen(loc) > 200)
		return AQ_EINVAL;
	snprintf(infix, sizeof(infix), "/locations/%s/storagePools/", loc);
	snprintf(parent, sizeof(parent), "locations/%s", loc);
	return db->ops->usage_location(db, infix, parent, fn, arg);
}

int db_placever(struct db *db, const char *loc, int64_t *v)
{
	char name[256];
	struct db_usage u;
	int rc;

	if (!loc || !*loc || strchr(loc, '/') || strlen(loc) > 200)
		return AQ_EINVAL;
	snprintf(name, sizeof(name), "placever/locations/%s", loc);
	if ((rc = db_usage_get(db, name, &u)) == AQ_OK)
		*v = u.count;
	return rc;
}

/* A JSON field as the engines' sums read it: a number, a boolean as 1/0, a
 * numeric string as its leading number, anything else 0. */
static double usage_num(const json_t *doc, const char *field)
{
	const json_t *v = json_object_get(doc, field);

	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_boolean(v))
		return json_is_true(v) ? 1 : 0;
	if (json_is_string(v))
		return strtod(json_string_value(v), NULL);
	return 0;
}

/* Add one document's share to sums[key] = [n, capacity, mibps, cold, hot]. */
static int usage_add(json_t *sums, const char *key, const double add[5])
{
	json_t *row = json_object_get(sums, key);

	if (!row) {
		row = json_pack("[fffff]", 0.0, 0.0, 0.0, 0.0, 0.0);
		if (!row || json_object_set_new(sums, key, row) != 0)
			return AQ_ENOMEM;
	}
	for (size_t i = 0; i < 5; i++)
		json_array_set_new(row, i, json_real(json_real_value(json_array_get(row, i)) + add[i]));
	return AQ_OK;
}

/* The counters recomputed from every volume and placement. */
static int usage_recompute(struct db *db, json_t *sums, aq_msg *msg)
{
	struct db_query qv = { .kind = "volume" }, qp = { .kind = "placement" };
	json_t *vols = NULL, *pls = NULL, *d;
	size_t i;
	int rc;

	if ((rc = db_list_all(db, &qv, &vols, msg)) != AQ_OK || (rc = db_list_all(db, &qp, &pls, msg)) != AQ_OK)
		goto out;
	json_array_foreach(vols, i, d) {
		const char *name = json_string_value(json_object_get(d, "name"));
		const char *sp = json_string_value(json_object_get(d, "storagePool"));
		const char *cut = name ? strstr(name, "/volumes/") : NULL;
		double add[5] = { 1, usage_num(d, "capacityGib"), usage_num(d, "throughputMibps"),
				  usage_num(d, "coldTierSizeGib"), usage_num(d, "hotTierSizeUsedGib") };
		char key[DB_NAME_MAX * 2];

		if (!cut)
			continue;
		if (sp && strchr(sp, '/'))
			snprintf(key, sizeof(key), "%s", sp);
		else
			snprintf(key, sizeof(key), "%.*s/storagePools/%s", (int)(cut - name), name, sp ? sp : "");
		if ((rc = usage_add(sums, key, add)) != AQ_OK)
			goto out;
	}
	json_array_foreach(pls, i, d) {
		const char *node = json_string_value(json_object_get(d, "node"));
		double add[5] = { 1, 0, usage_num(d, "mibps"), 0, 0 };

		if ((rc = usage_add(sums, node ? node : "", add)) != AQ_OK)
			goto out;
	}
out:
	json_decref(vols);
	json_decref(pls);
	return rc;
}

struct usage_cmp {
	json_t *sums; /* recomputed; each row compared is removed */
	aq_msg *msg;
	int rc;
};

static void usage_cmp_row(void *arg, const char *name, const struct db_usage *u)
{
	struct usage_cmp *c = arg;
	const json_t *row = json_object_get(c->sums, name);
	double want[5] = { 0 }, got[5] = { (double)u->count, u->capacity_gib, u->mibps, u->cold_gib, u->hot_gib };
	static const char *const what[5] = { "count", "capacityGib", "throughputMibps/mibps", "coldTierSizeGib",
					     "hotTierSizeUsedGib" };

	if (c->rc != AQ_OK || strncmp(name, "placever/", 9) == 0)
		return;
	for (size_t i = 0; row && i < 5; i++)
		want[i] = json_real_value(json_array_get(row, i));
	for (size_t i = 0; i < 5; i++)
		if (fabs(want[i] - got[i]) > USAGE_EPS) {
			c->rc = aq_fail(c->msg, AQ_EIO, "usage of %s: stored %s %.6f, recomputed from the documents %.6f",
					name, what[i], got[i], want[i]);
			return;
		}
	json_object_del(c->sums, name);
}

int db_usage_verify(struct db *db, aq_msg *msg)
{
	struct usage_cmp c = { .sums = json_object(), .msg = msg, .rc = AQ_OK };
	const char *key;
	json_t *row;
	int rc;

	if (!c.sums)
		return AQ_ENOMEM;
	if ((rc = usage_recompute(db, c.sums, msg)) != AQ_OK || (rc = db_usage_each(db, "", usage_cmp_row, &c)) != AQ_OK)
		goto out;
	if ((rc = c.rc) != AQ_OK)
		goto out;
	/* what the documents add up to but no row counts */
	json_object_foreach(c.sums, key, row) {
		rc = aq_fail(msg, AQ_EIO, "usage of %s: no stored row, recomputed from the documents count %.0f", key,
			     json_real_value(json_array_get(row, 0)));
		goto out;
	}
out:
	json_decref(c.sums);
	return rc;
}
