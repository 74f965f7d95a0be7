/* db_reads: the engines' reads one after another, or all at once through
 * the engine's reads op (on PostgreSQL a libpq pipeline, db_pg_pipe.c).
 * Why: see db.h. Every input is checked as its own call checks it before
 * anything runs; outputs are published only when every read succeeded. */
#include "db/db_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int db_reads(struct db *db, struct db_reads *r)
{
	struct db_reads_engine e = { .r = r, .many_fn = db_many_row, .fields_fn = db_fields_row };
	char infix[256], uparent[256];
	int rc = AQ_ENOMEM;

	r->docs = r->rows = NULL;
	r->share_n = 0;
	/* every input checked as its own call checks it, before anything runs */
	if ((r->parent && (!r->kind || !r->kind2 || !db_fields_ok(r->fields, r->nfields))) ||
	    (r->share && !r->share_loc) || (r->usage_loc && (!r->usage_fn || !*r->usage_loc ||
							 strchr(r->usage_loc, '/') || strlen(r->usage_loc) > 200)))
		return AQ_EINVAL;
	if (r->usage_loc) {
		snprintf(infix, sizeof(infix), "/locations/%s/storagePools/", r->usage_loc);
		snprintf(uparent, sizeof(uparent), "locations/%s", r->usage_loc);
		e.pool_infix = infix;
		e.node_parent = uparent;
	}
	if ((r->names && (!(e.names_json = json_dumps(r->names, JSON_COMPACT)) || !(e.docs = json_object()))) ||
	    (r->parent && !(e.rows = json_array())))
		goto out;
	if (db->ops->reads) {
		rc = db->ops->reads(db, &e);
	} else {
		/* one after another, in the order the pipeline sends them */
		rc = AQ_OK;
		if (e.names_json)
			rc = db->ops->get_many(db, e.names_json, db_many_row, e.docs);
		if (rc == AQ_OK && r->share)
			rc = db->ops->share_count(db, r->share_loc, r->share, &e.share_n);
		if (rc == AQ_OK && r->parent)
			rc = db->ops->fields(db, r->kind, r->kind2, r->parent, r->fields, r->nfields, db_fields_row, e.rows);
		if (rc == AQ_OK && e.pool_infix)
			rc = db->ops->usage_location(db, e.pool_infix, e.node_parent, r->usage_fn, r->usage_arg);
	}
	if (rc == AQ_OK) {
		r->docs = e.docs;
		r->rows = e.rows;
		r->share_n = e.share_n;
		e.docs = e.rows = NULL;
	}
out:
	free(e.names_json);
	json_decref(e.docs);
	json_decref(e.rows);
	return rc;
}
