/* db_puts: a transaction's inserts held, then written at once through the
 * engine's puts op (on PostgreSQL a libpq pipeline, db_pg_pipe.c) or one
 * after another through put (SQLite). Why: see db.h. Each insert becomes
 * a pending write for the cache (db.c) only once the engine made it. */
#include "db/db_engine.h"

#include <stdlib.h>
#include <string.h>

static void puts_free(struct db_puts *b)
{
	for (int i = 0; i < b->n; i++) {
		free(b->q[i].kind);
		free(b->q[i].parent);
		free(b->q[i].name);
		free(b->q[i].text);
	}
	free(b);
}

int db_puts_start(struct db *db)
{
	if (!db->in_tx || db->puts)
		return AQ_EINVAL;
	return (db->puts = calloc(1, sizeof(*db->puts))) ? AQ_OK : AQ_ENOMEM;
}

void db_puts_drop(struct db *db)
{
	if (db->puts)
		puts_free(db->puts);
	db->puts = NULL;
}

int db_puts_add(struct db *db, const char *kind, const char *parent, const char *name, char *text)
{
	struct db_puts *b = db->puts;
	struct db_put_q *q;

	if (b->n == DB_PUTS_MAX) {
		free(text);
		return AQ_EINVAL;
	}
	q = &b->q[b->n++];
	*q = (struct db_put_q){ .kind = strdup(kind), .parent = strdup(parent), .name = strdup(name), .text = text };
	if (!q->kind || !q->parent || !q->name)
		return AQ_ENOMEM; /* freed with the batch; the caller rolls back */
	return AQ_OK;
}

int db_puts_send(struct db *db, int *failed)
{
	struct db_puts *b = db->puts;
	int rc = AQ_OK, bad = -1, i;

	if (!b)
		return AQ_OK;
	db->puts = NULL; /* closed: the puts below are the engine's own */
	for (i = 0; i < b->n; i++)
		if (!b->q[i].kind || !b->q[i].parent || !b->q[i].name) {
			rc = AQ_ENOMEM; /* db_puts_add's failure: nothing is sent */
			bad = i;
			goto out;
		}
	if (db->ops->puts && b->n > 0) {
		rc = db->ops->puts(db, b->q, b->n, &bad);
	} else {
		/* one after another, as the pipeline sends them */
		for (i = 0; i < b->n && rc == AQ_OK; i++)
			if ((rc = db->ops->put(db, b->q[i].kind, b->q[i].parent, b->q[i].name, b->q[i].text, true)) != AQ_OK)
				bad = i;
	}
	/* the inserts made, for the cache at the commit */
	for (i = 0; i < (rc == AQ_OK ? b->n : bad); i++)
		db_pending_add(db, b->q[i].name, b->q[i].text);
out:
	if (failed)
		*failed = bad;
	puts_free(b);
	return rc;
}
