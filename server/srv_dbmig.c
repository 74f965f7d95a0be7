/* srv_dbmig: aquiferd db migrate --from URL --to URL (see srv_dbmig.h).
 *
 * Check, then copy: both databases are opened (each brought to this
 * program's schema by db_open), the target must hold no resource, then
 * every resource of the source is read in one statement (one snapshot of
 * it, db_each) and written to the target in one transaction, which commits
 * only when the counts of every kind in it match the source's, so a crash,
 * kill -9 or a source that changed meanwhile leaves the target empty and
 * the copy can simply run again. The source is only read. */
#include "server/srv_dbmig.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

struct dbmig_copy {
	struct db *to;
	int64_t n;
	aq_msg *msg;
};

static int dbmig_row(void *arg, const char *kind, const char *parent, const char *name, const char *text)
{
	struct dbmig_copy *c = arg;
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);
	int rc;

	if (!doc)
		return aq_fail(c->msg, AQ_EIO, "%s in the source is not JSON: %s", name, jerr.text);
	rc = db_put(c->to, kind, parent, name, doc, true);
	json_decref(doc);
	if (rc != AQ_OK)
		return aq_fail(c->msg, rc, "cannot write %s to the target (%s)", name, aq_err_str(rc));
	c->n++;
	return AQ_OK;
}

/* {kind: count} of db */
static void dbmig_count_one(const char *kind, int64_t n, void *arg)
{
	json_object_set_new(arg, kind, json_integer(n));
}

static int dbmig_counts(struct db *db, json_t **out)
{
	json_t *o = json_object();
	int rc;

	if (!o)
		return AQ_ENOMEM;
	if ((rc = db_count_kinds(db, dbmig_count_one, o)) != AQ_OK) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return AQ_OK;
}

static int dbmig_run(const char *from, const char *to, FILE *out, aq_msg *msg)
{
	struct db *src = NULL, *dst = NULL;
	json_t *before = NULL, *after = NULL, *have = NULL;
	struct dbmig_copy c = { .msg = msg };
	int rc;

	if (strcmp(from, to) == 0)
		return aq_fail(msg, AQ_EINVAL, "--from and --to name the same database");
	if ((rc = db_open(from, &src, msg)) != AQ_OK || (rc = db_open(to, &dst, msg)) != AQ_OK)
		goto out;
	if ((rc = dbmig_counts(dst, &have)) != AQ_OK)
		goto out;
	if (json_object_size(have) > 0) {
		rc = aq_fail(msg, AQ_EPRECOND, "the target database already holds resources (%zu kinds); "
			     "migrate only into an empty database", json_object_size(have));
		goto out;
	}
	c.to = dst;
	if ((rc = db_begin(dst)) != AQ_OK)
		goto out;
	if ((rc = db_each(src, dbmig_row, &c, msg)) != AQ_OK)
		goto out;
	/* the source's counts now and the copy's before it commits: a source
	 * that changed since its snapshot shows, and the target stays empty */
	if ((rc = dbmig_counts(src, &before)) != AQ_OK || (rc = dbmig_counts(dst, &after)) != AQ_OK)
		goto out;
	if (!json_equal(before, after)) {
		char *b = json_dumps(before, JSON_COMPACT | JSON_SORT_KEYS), *a = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);

		rc = aq_fail(msg, AQ_EIO, "the copy's counts differ from the source's (was aquiferd writing to it?): "
			     "source %s, copy %s; nothing was written", b ? b : "?", a ? a : "?");
		free(b);
		free(a);
		goto out;
	}
	/* the copy's usage counters (db.h), kept by its triggers as it was
	 * written, agree with its documents */
	if ((rc = db_usage_verify(dst, msg)) != AQ_OK)
		goto out;
	if ((rc = db_commit(dst)) != AQ_OK) {
		aq_fail(msg, rc, "cannot commit the copy (%s)", aq_err_str(rc));
		goto out;
	}
	fprintf(out, "migrated %lld resources of %zu kinds; the counts of every kind match\n", (long long)c.n,
		json_object_size(after));
out:
	db_rollback(dst);
	db_close(src);
	db_close(dst);
	json_decref(before);
	json_decref(after);
	json_decref(have);
	return rc;
}

/* aquiferd db check --db URL: the usage counters against the documents,
 * in one transaction (one snapshot; SQLite holds writers off meanwhile). */
static int dbmig_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = NULL;
	struct db *db = NULL;
	aq_msg msg = { .text = "" };
	int c, rc;

	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'd')
			return 2;
		url = optarg;
	}
	if (!url || optind < argc) {
		fprintf(stderr, "usage: aquiferd db check --db URL\n");
		return 2;
	}
	if ((rc = db_open(url, &db, &msg)) == AQ_OK && (rc = db_begin(db)) == AQ_OK)
		rc = db_usage_verify(db, &msg);
	db_rollback(db);
	db_close(db);
	if (rc != AQ_OK) {
		fprintf(stderr, "aquiferd db check: %s\n", *msg.text ? msg.text : aq_err_str(rc));
		return 1;
	}
	printf("usage counters agree with the volumes and placements\n");
	return 0;
}

int srv_dbmig_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *from = NULL, *to = NULL;
	aq_msg msg = { .text = "" };
	int c;

	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return dbmig_check(argc, argv);
	if (argc < 2 || strcmp(argv[1], "migrate") != 0) {
		fprintf(stderr, "aquiferd db: expected migrate (aquiferd db migrate --from URL --to URL) or check (aquiferd db check --db URL)\n");
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': from = optarg; break;
		case 't': to = optarg; break;
		case 'h':
			printf("usage: aquiferd db migrate --from sqlite:PATH|PATH|postgres://... --to postgres://...|PATH\n"
			       "  copies every resource into an empty database; stop aquiferd first\n");
			return 0;
		default: return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "aquiferd db migrate: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	if (!from || !to) {
		fprintf(stderr, "aquiferd db migrate: --from and --to are required\n");
		return 2;
	}
	if (dbmig_run(from, to, stdout, &msg) != AQ_OK) {
		fprintf(stderr, "aquiferd db migrate: %s\n", msg.text);
		return 1;
	}
	return 0;
}
