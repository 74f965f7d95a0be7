/* db_pg_pipe: db_reads and db_puts_send on PostgreSQL, each in one libpq
 * pipeline.
 *
 * Why: a volume create runs under the process's writer mutex, and on
 * PostgreSQL every statement of it was a round trip to the server: four
 * reads before its three INSERTs (bench/api/REPORT.md). The reads do not
 * depend on one another, so they are sent together (PQenterPipelineMode,
 * PQsendQueryPrepared each, PQpipelineSync) and their results read after:
 * one wait for the server instead of four. Each statement is the one its
 * own call runs (db_pg_int.h), prepared once per connection before the
 * pipeline starts (PQprepare waits for its answer, which a pipeline may
 * not). Inside the caller's transaction the pipeline's sync ends no
 * transaction; a failed statement fails the transaction as it would
 * alone (the ones after it come back aborted), and the first failure is
 * the result. db_puts_send's inserts likewise (the same INSERT ... ON
 * CONFLICT DO NOTHING db_put runs): a volume create's three (the volume,
 * its operation, its placement) were three round trips under the mutex.
 */
#include "db/db_pg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIPE_MAX DB_PUTS_MAX /* >= the 4 reads */

enum pipe_what { PIPE_MANY, PIPE_SHARE, PIPE_FIELDS, PIPE_USAGE };

struct pipe_q {
	enum pipe_what what;
	const char *sql;
	int n;
	const char *params[4];
	PGresult *res;
};

/* Read what the server sends back for nq queries and the sync: q[i].res
 * the result of each (NULL when the connection failed first). Leaves
 * pipeline mode when it can. */
static void pipe_collect(PGconn *c, struct pipe_q *q, int nq)
{
	PGresult *res;

	for (int i = 0; i < nq; i++) {
		if (!(q[i].res = PQgetResult(c)))
			break; /* the connection is gone */
		/* a query's results end with a NULL */
		while ((res = PQgetResult(c)))
			PQclear(res);
	}
	/* the sync's own result; bounded: a lost connection gives NULL */
	for (int guard = 0; guard < PIPE_MAX + 2 && (res = PQgetResult(c)); guard++) {
		bool sync = PQresultStatus(res) == PGRES_PIPELINE_SYNC;

		PQclear(res);
		if (sync)
			break;
	}
	PQexitPipelineMode(c);
}

int db_pg_reads(struct db *db, struct db_reads_engine *e)
{
	struct db_pg *p = (struct db_pg *)db;
	struct pipe_q q[PIPE_MAX];
	char fields_sql[1024], name[PIPE_MAX][16];
	bool prepared[PIPE_MAX];
	int nq = 0, rc = AQ_OK, i;

	memset(q, 0, sizeof(q));
	if (e->names_json)
		q[nq++] = (struct pipe_q){ .what = PIPE_MANY, .sql = DB_PG_SQL_GET_MANY, .n = 1, .params = { e->names_json } };
	if (e->r->share)
		q[nq++] = (struct pipe_q){ .what = PIPE_SHARE, .sql = DB_PG_SQL_SHARE_COUNT, .n = 2, .params = { e->r->share_loc, e->r->share } };
	if (e->r->parent) {
		db_pg_fields_sql(e->r->fields, e->r->nfields, fields_sql, sizeof(fields_sql));
		q[nq++] = (struct pipe_q){ .what = PIPE_FIELDS, .sql = fields_sql, .n = 3, .params = { e->r->kind, e->r->parent, e->r->kind2 } };
	}
	if (e->pool_infix)
		q[nq++] = (struct pipe_q){ .what = PIPE_USAGE, .sql = DB_PG_SQL_USAGE_LOCATION, .n = 2,
					   .params = { e->pool_infix, e->node_parent } };
	if (nq == 0)
		return AQ_OK;
	db_pg_mend(db);
	for (i = 0; i < nq; i++)
		prepared[i] = db_pg_prepare(p, q[i].sql, q[i].n, name[i]);
	if (!PQenterPipelineMode(p->c))
		return db_pg_fail(db, NULL, NULL);
	db_stmt_note_batch((unsigned)nq);
	for (i = 0; i < nq; i++) {
		int sent = prepared[i] ? PQsendQueryPrepared(p->c, name[i], q[i].n, q[i].params, NULL, NULL, 0)
				       : PQsendQueryParams(p->c, q[i].sql, q[i].n, NULL, q[i].params, NULL, NULL, 0);

		if (!sent)
			break;
	}
	if (i < nq || !PQpipelineSync(p->c)) {
		/* the connection failed under us: the transaction fails (a
		 * connection left in pipeline mode is mended, db_pg_mend) */
		rc = db_pg_fail(db, NULL, NULL);
		PQpipelineSync(p->c);
		pipe_collect(p->c, q, i);
		goto out;
	}
	pipe_collect(p->c, q, nq);
	for (i = 0; i < nq && rc == AQ_OK; i++)
		if (PQresultStatus(q[i].res) != PGRES_TUPLES_OK)
			rc = db_pg_fail(db, q[i].res, NULL);
	for (i = 0; rc == AQ_OK && i < nq; i++) {
		switch (q[i].what) {
		case PIPE_MANY:
			rc = db_pg_rows(q[i].res, e->many_fn, e->docs);
			break;
		case PIPE_SHARE:
			e->share_n = PQntuples(q[i].res) == 1 ? strtoll(PQgetvalue(q[i].res, 0, 0), NULL, 10) : 0;
			break;
		case PIPE_FIELDS:
			rc = db_pg_rows(q[i].res, e->fields_fn, e->rows);
			break;
		case PIPE_USAGE:
			db_pg_usage_rows(q[i].res, e->r->usage_fn, e->r->usage_arg);
			break;
		}
	}
out:
	for (i = 0; i < PIPE_MAX; i++)
		PQclear(q[i].res);
	return rc;
}

int db_pg_puts(struct db *db, const struct db_put_q *w, int n, int *failed)
{
	struct db_pg *p = (struct db_pg *)db;
	struct pipe_q q[PIPE_MAX];
	char name[16];
	bool prepared;
	int rc = AQ_OK, i;

	*failed = -1;
	if (n <= 0 || n > PIPE_MAX)
		return n == 0 ? AQ_OK : AQ_EINVAL;
	memset(q, 0, sizeof(q));
	db_pg_mend(db);
	prepared = db_pg_prepare(p, DB_PG_SQL_INSERT, 4, name);
	if (!PQenterPipelineMode(p->c))
		return db_pg_fail(db, NULL, NULL);
	db_stmt_note_batch((unsigned)n);
	for (i = 0; i < n; i++) {
		const char *params[4] = { w[i].name, w[i].kind, w[i].parent, w[i].text };
		int sent = prepared ? PQsendQueryPrepared(p->c, name, 4, params, NULL, NULL, 0)
				    : PQsendQueryParams(p->c, DB_PG_SQL_INSERT, 4, NULL, params, NULL, NULL, 0);

		if (!sent)
			break;
	}
	if (i < n || !PQpipelineSync(p->c)) {
		rc = db_pg_fail(db, NULL, NULL); /* the connection failed under us */
		*failed = i;
		PQpipelineSync(p->c);
		pipe_collect(p->c, q, i);
		goto out;
	}
	pipe_collect(p->c, q, n);
	for (i = 0; i < n && rc == AQ_OK; i++) {
		if (PQresultStatus(q[i].res) != PGRES_COMMAND_OK)
			rc = db_pg_fail(db, q[i].res, NULL);
		else if (strtol(PQcmdTuples(q[i].res), NULL, 10) == 0)
			rc = AQ_EEXIST; /* ON CONFLICT DO NOTHING: the name exists */
		if (rc != AQ_OK)
			*failed = i;
	}
out:
	for (i = 0; i < PIPE_MAX; i++)
		PQclear(q[i].res);
	return rc;
}
