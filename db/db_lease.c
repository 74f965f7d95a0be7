/* db_lease: leases with a fencing token (see db.h), on the document calls
 * of db.h only, so they behave alike on both engines: a lease is one
 * document of kind "lease" ({holder, url, epoch, expireMs}), read and
 * written in one transaction. Two takers racing on PostgreSQL conflict in
 * SERIALIZABLE (one gets AQ_EBUSY) or on the name's uniqueness (AQ_EEXIST,
 * reported as AQ_EBUSY); on SQLite the write lock orders them. */
#include "db/db.h"

#include <stdio.h>
#include <string.h>

static const char *lease_str(const json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));

	return s ? s : "";
}

static void lease_read(const json_t *doc, struct db_lease *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->holder, sizeof(out->holder), "%s", lease_str(doc, "holder"));
	snprintf(out->url, sizeof(out->url), "%s", lease_str(doc, "url"));
	out->epoch = json_integer_value(json_object_get(doc, "epoch"));
	out->expire_ms = json_integer_value(json_object_get(doc, "expireMs"));
}

int db_lease_get(struct db *db, const char *name, struct db_lease *out)
{
	json_t *doc = NULL;
	int rc = db_get(db, name, &doc);

	if (rc == AQ_OK)
		lease_read(doc, out);
	json_decref(doc);
	return rc;
}

int db_lease_take(struct db *db, const char *name, const char *holder, const char *url, int64_t now_ms,
		  int64_t ttl_ms, struct db_lease *out)
{
	json_t *doc = NULL;
	struct db_lease cur = { .epoch = 0 };
	bool fresh = false;
	int rc;

	if (!*holder || strlen(holder) >= sizeof(cur.holder) || strlen(url) >= sizeof(cur.url) || ttl_ms <= 0)
		return AQ_EINVAL;
	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	if ((rc = db_get(db, name, &doc)) == AQ_ENOENT) {
		fresh = true;
		rc = AQ_OK;
	} else if (rc == AQ_OK) {
		lease_read(doc, &cur);
	}
	if (rc != AQ_OK)
		goto out;
	if (!fresh && strcmp(cur.holder, holder) != 0 && cur.expire_ms > now_ms) {
		rc = AQ_EPRECOND; /* another holder's, not expired */
		goto out;
	}
	/* free or expired: taken at the next epoch; our own, unexpired: renewed */
	if (fresh || cur.expire_ms <= now_ms || strcmp(cur.holder, holder) != 0)
		cur.epoch++;
	snprintf(cur.holder, sizeof(cur.holder), "%s", holder);
	snprintf(cur.url, sizeof(cur.url), "%s", url);
	cur.expire_ms = now_ms + ttl_ms;
	json_decref(doc);
	if (!(doc = json_pack("{s:s,s:s,s:I,s:I}", "holder", cur.holder, "url", cur.url, "epoch", (json_int_t)cur.epoch,
			      "expireMs", (json_int_t)cur.expire_ms))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = db_put(db, "lease", "", name, doc, fresh)) == AQ_OK)
		rc = db_commit(db);
	if (rc == AQ_EEXIST) /* a concurrent first taker won */
		rc = AQ_EBUSY;
out:
	db_rollback(db);
	json_decref(doc);
	if (out)
		*out = cur;
	return rc;
}

int db_lease_check(struct db *db, const struct db_fence *f, int64_t now_ms)
{
	struct db_lease cur;
	int rc = db_lease_get(db, f->lease, &cur);

	if (rc == AQ_ENOENT)
		return AQ_EPRECOND;
	if (rc != AQ_OK)
		return rc;
	if (strcmp(cur.holder, f->holder) != 0 || cur.epoch != f->epoch || cur.expire_ms <= now_ms)
		return AQ_EPRECOND;
	return AQ_OK;
}

int db_lease_release(struct db *db, const struct db_fence *f)
{
	json_t *doc = NULL;
	int rc;

	if ((rc = db_begin(db)) != AQ_OK)
		return rc;
	if ((rc = db_lease_check(db, f, INT64_MIN)) != AQ_OK || (rc = db_get(db, f->lease, &doc)) != AQ_OK)
		goto out;
	json_object_set_new(doc, "expireMs", json_integer(0));
	if ((rc = db_put(db, "lease", "", f->lease, doc, false)) == AQ_OK)
		rc = db_commit(db);
out:
	db_rollback(db);
	json_decref(doc);
	return rc;
}
