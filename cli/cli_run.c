/* cli_run: dispatch of `aquifer` commands: settings, HTTP calls, paging,
 * waiting on long-running operations, printing (see cli.h). */
#include "cli/cli.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_buf.h"
#include "cli/cli_hint.h"
#include "cli/cli_labels.h"
#include "cli/cli_metrics.h"
#include "cli/cli_output.h"
#include "cli/cli_path.h"
#include "util/ut_clock.h"

#define WAIT_MAX_S 7200          /* gcloud's longest wait (pool create) */
#define WAIT_404_GRACE_S 10      /* an operation may not be readable at once */
#define POLL_FIRST_MS 100
#define POLL_MAX_MS 2000
#define LIST_MAX_PAGES 100000

/* google.rpc code -> status name, for an operation's error. */
static const char *const rpc_names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
};

static int usage_error(struct cli_ctx *ctx, const struct cli_args *a, const char *text)
{
	fprintf(ctx->err, "ERROR: (%s) %s\n", ctx->who, text);
	if (a && a->cmd)
		fprintf(ctx->err, "Run 'aquifer %s %s --help' for usage.\n", a->cmd->group, a->cmd->verb);
	else if (a && a->group && cli_group_find(a->group))
		fprintf(ctx->err, "Run 'aquifer %s --help' for usage.\n", a->group);
	else
		fprintf(ctx->err, "Run 'aquifer --help' for usage.\n");
	return CLI_EXIT_USAGE;
}

/* Print the server's error answer; always CLI_EXIT_API. */
static int api_error(struct cli_ctx *ctx, long status, const json_t *resp, const aq_msg *raw)
{
	const json_t *err = json_object_get(resp, "error");
	const char *st = json_string_value(json_object_get(err, "status"));
	const char *text = json_string_value(json_object_get(err, "message"));

	struct ut_buf said;

	/* the server's hints name HTTP routes: say the aquifer command instead */
	ut_buf_init(&said, CLI_BUF_MAX);
	cli_hint_rewrite(text ? text : "", &said);
	if (err && (st || text))
		fprintf(ctx->err, "ERROR: (%s) %s: %s\n", ctx->who, st ? st : "ERROR", ut_buf_str(&said));
	else
		fprintf(ctx->err, "ERROR: (%s) HTTP %ld: %s\n", ctx->who, status,
			raw && raw->text[0] ? raw->text : "(no message)");
	if (status == 401)
		fputs("To use a token, run: aquifer auth login --token=TOKEN (a cluster admin mints one "
		      "with 'aquiferd token --role ROLE'), or set AQUIFER_TOKEN.\n", ctx->err);
	ut_buf_cleanup(&said);
	return CLI_EXIT_API;
}

/* One request; returns an exit status and, on success, *resp (may be NULL). */
static int call(struct cli_ctx *ctx, const char *method, const char *path, const json_t *body,
		long *status, json_t **resp)
{
	aq_msg msg = { .text = "" };
	int rc;

	*resp = NULL;
	rc = cli_http_call(&ctx->http, method, path, body, status, resp, &msg);
	if (rc != AQ_OK) {
		fprintf(ctx->err, "ERROR: (%s) %s\n", ctx->who, msg.text);
		return rc == AQ_EUNAVAIL ? CLI_EXIT_NET : CLI_EXIT_FAIL;
	}
	if (*status >= 400) {
		rc = api_error(ctx, *status, *resp, &msg);
		json_decref(*resp);
		*resp = NULL;
		return rc;
	}
	return CLI_EXIT_OK;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	return (double)ut_clock_mono_ns() / 1e9;
}

static bool is_operation(const json_t *r)
{
	const char *name = json_string_value(json_object_get(r, "name"));

	return json_is_object(r) && json_object_get(r, "done") && name &&
	       strstr(name, "/operations/") != NULL;
}

/* Poll the operation until done. On success *done_op is the finished
 * operation (new reference). Prints errors itself, ending a progress line
 * with "failed." first when one is open. */
static int wait_op(struct cli_ctx *ctx, const json_t *op, bool progress, json_t **done_op)
{
	struct ut_buf path;
	double start = now_s(), first_404 = 0;
	long delay = POLL_FIRST_MS, status = 0;
	json_t *cur = json_incref((json_t *)(uintptr_t)op), *resp = NULL;
	aq_msg msg = { .text = "" };
	int rc = CLI_EXIT_OK;

	ut_buf_init(&path, CLI_BUF_MAX);
	ut_buf_adds(&path, "/v1/");
	ut_buf_adds(&path, json_string_value(json_object_get(op, "name")));
	while (!json_is_true(json_object_get(cur, "done"))) {
		if (now_s() - start > WAIT_MAX_S) {
			if (progress)
				fputs("failed.\n", ctx->err);
			fprintf(ctx->err, "ERROR: (%s) gave up waiting for %s after %d s\n", ctx->who,
				ut_buf_str(&path) + 4, WAIT_MAX_S);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
		sleep_ms(delay);
		delay = delay * 3 / 2 > POLL_MAX_MS ? POLL_MAX_MS : delay * 3 / 2;
		if (cli_http_call(&ctx->http, "GET", ut_buf_str(&path), NULL, &status, &resp, &msg) !=
		    AQ_OK) {
			if (progress)
				fputs("failed.\n", ctx->err);
			fprintf(ctx->err, "ERROR: (%s) %s\n", ctx->who, msg.text);
			rc = CLI_EXIT_NET;
			goto out;
		}
		if (status == 404) {
			if (first_404 == 0)
				first_404 = now_s();
			if (now_s() - first_404 <= WAIT_404_GRACE_S) {
				json_decref(resp);
				resp = NULL;
				continue;
			}
		}
		if (status >= 400) {
			if (progress)
				fputs("failed.\n", ctx->err);
			rc = api_error(ctx, status, resp, &msg);
			goto out;
		}
		json_decref(cur);
		cur = resp;
		resp = NULL;
	}
	*done_op = cur;
	cur = NULL;
out:
	json_decref(cur);
	json_decref(resp);
	ut_buf_cleanup(&path);
	return rc;
}

/* The error of a finished operation, printed; CLI_EXIT_API if there is one. */
static int op_error(struct cli_ctx *ctx, const json_t *op)
{
	const json_t *err = json_object_get(op, "error");
	json_int_t code;
	const char *text;
	struct ut_buf said;

	if (!json_is_object(err))
		return CLI_EXIT_OK;
	code = json_integer_value(json_object_get(err, "code"));
	text = json_string_value(json_object_get(err, "message"));
	ut_buf_init(&said, CLI_BUF_MAX);
	cli_hint_rewrite(text ? text : "", &said);
	fprintf(ctx->err, "ERROR: (%s) %s: %s\n", ctx->who,
		code >= 0 && code < (json_int_t)(sizeof(rpc_names) / sizeof(rpc_names[0]))
			? rpc_names[code] : "UNKNOWN",
		ut_buf_str(&said));
	ut_buf_cleanup(&said);
	return CLI_EXIT_API;
}

/* What became of an operation, in a sentence on stderr (operations cancel):
 * "Operation op-1 (create of volumes/v1) ended CANCELLED: the create was
 * rolled back ...", or that it still runs. */
static void op_outcome(struct cli_ctx *ctx, const json_t *op)
{
	const char *name = json_string_value(json_object_get(op, "name"));
	const json_t *md = json_object_get(op, "metadata"), *err = json_object_get(op, "error");
	const char *verb = json_string_value(json_object_get(md, "verb"));
	const char *target = json_string_value(json_object_get(md, "target"));
	const char *text = json_string_value(json_object_get(err, "message"));
	const char *base = name && strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	json_int_t code = json_integer_value(json_object_get(err, "code"));
	const char *tgt = target && strstr(target, "/locations/") ? strchr(strstr(target, "/locations/") + 11, '/') : NULL;

	fprintf(ctx->err, "Operation %s (%s of %s) ", base ? base : "", verb ? verb : "?",
		tgt ? tgt + 1 : target ? target : "?");
	if (!json_is_true(json_object_get(op, "done")))
		fputs("is still running.\n", ctx->err);
	else if (!json_is_object(err))
		fputs("ended: it succeeded.\n", ctx->err);
	else
		fprintf(ctx->err, "ended %s: %s\n",
			code >= 0 && code < (json_int_t)(sizeof(rpc_names) / sizeof(rpc_names[0])) ? rpc_names[code]
												    : "UNKNOWN",
			text ? text : "");
}

/* Print doc per o; an unknown field is a usage error (exit 2). */
static int print_out(struct cli_ctx *ctx, const struct cli_args *a, const struct cli_out *o,
		     const json_t *doc, bool is_list)
{
	aq_msg msg = { .text = "" };

	if (cli_out_print(o, ctx->out, doc, is_list, &msg) != AQ_OK)
		return usage_error(ctx, a, msg.text);
	return CLI_EXIT_OK;
}

static int run_list(struct cli_ctx *ctx, const struct cli_args *a, const struct cli_out *o,
		    const char *base)
{
	const char *psize = cli_args_get(a, "page-size");
	json_t *all = json_array(), *resp = NULL;
	char *token = NULL;
	struct ut_buf path;
	aq_msg msg = { .text = "" };
	long status = 0;
	int rc = CLI_EXIT_OK, pages;

	ut_buf_init(&path, CLI_BUF_MAX);
	for (pages = 0; pages < LIST_MAX_PAGES; pages++) {
		const json_t *items;
		const char *next;
		size_t i;
		char sep = '?';
		ut_buf_reset(&path);
		ut_buf_adds(&path, base);
		if (psize) {
			ut_buf_addf(&path, "%cpageSize=%s", sep, psize);
			sep = '&';
		}
		if (token) {
			ut_buf_addf(&path, "%cpageToken=", sep);
			cli_buf_add_escaped(&path, token);
		}
		if ((rc = call(ctx, "GET", ut_buf_str(&path), NULL, &status, &resp)) != CLI_EXIT_OK)
			goto out;
		items = json_object_get(resp, a->cmd->items);
		for (i = 0; i < json_array_size(items); i++)
			json_array_append(all, json_array_get(items, i));
		next = json_string_value(json_object_get(resp, "nextPageToken"));
		if (next == NULL || *next == '\0' || (token && strcmp(token, next) == 0))
			break;
		free(token);
		token = strdup(next);
		json_decref(resp);
		resp = NULL;
	}
	if (cli_out_list(o, &all, &msg) != AQ_OK) {
		rc = usage_error(ctx, a, msg.text);
		goto out;
	}
	if (cli_args_bool(a, "uri")) {
		/* gcloud's --uri: the resource's URI, one a line, instead of the table */
		const char *ep = ctx->eff[CLI_CONF_ENDPOINT];
		size_t i, eplen = strcspn(ep, ","); /* of replicas' URLs, the first */
		while (eplen && ep[eplen - 1] == '/')
			eplen--;
		for (i = 0; i < json_array_size(all); i++) {
			const char *name = json_string_value(json_object_get(json_array_get(all, i), "name"));
			if (name)
				fprintf(ctx->out, "%.*s/v1/%s\n", (int)eplen, ep, name);
		}
		goto out;
	}
	if (json_array_size(all) == 0 && o->fmt.kind == CLI_FMT_TABLE)
		fprintf(ctx->err, "Listed 0 items.\n");
	rc = print_out(ctx, a, o, all, true);
out:
	free(token);
	json_decref(all);
	json_decref(resp);
	ut_buf_cleanup(&path);
	return rc;
}

/* After a create or update finished: the resource as the server has it now
 * (the describe command's GET), else what the operation answered. */
static json_t *final_resource(struct cli_ctx *ctx, const struct cli_args *a, const struct cli_path_vars *v,
			      const json_t *op)
{
	const struct cli_cmd *d = cli_cmd_find(a->cmd->group, "describe");
	const json_t *r = json_object_get(op, "response");
	struct ut_buf path;
	json_t *got = NULL;
	long status = 0;
	aq_msg msg = { .text = "" };

	ut_buf_init(&path, CLI_BUF_MAX);
	if (d && cli_path_expand(&path, d->path, v, &msg) == AQ_OK &&
	    cli_http_call(&ctx->http, "GET", ut_buf_str(&path), NULL, &status, &got, &msg) == AQ_OK &&
	    status == 200 && json_is_object(got)) {
		ut_buf_cleanup(&path);
		return got;
	}
	json_decref(got);
	ut_buf_cleanup(&path);
	if (json_is_object(r)) {
		json_t *copy = json_deep_copy(r);
		json_object_del(copy, "@type");
		return copy;
	}
	return NULL;
}

static bool empty_object(const json_t *r)
{
	return r == NULL || (json_is_object(r) && json_object_size(r) == 0);
}

static int run_mutation(struct cli_ctx *ctx, const struct cli_args *a, const struct cli_out *o,
			const struct cli_path_vars *v, const char *path, const json_t *body)
{
	const struct cli_cmd *c = a->cmd;
	bool async = cli_args_bool(a, "async"), dry = cli_args_bool(a, "dry-run");
	json_t *resp = NULL, *done = NULL, *res = NULL;
	long status = 0;
	int rc;

	if ((rc = call(ctx, c->method, path, body, &status, &resp)) != CLI_EXIT_OK)
		goto out;
	if (!is_operation(resp)) {
		/* Synchronous resources (projects, locations) answer directly. */
		if (c->noun && !dry)
			fprintf(ctx->err, "%s %s %s...done.\n", c->gerund, c->noun, v->name ? v->name : "");
		if (!empty_object(resp)) {
			rc = print_out(ctx, a, o, resp, false);
		} else if ((c->opts & CLI_C_REREAD) && !dry) {
			/* say what happened: the resource as it is now */
			char target[1024];
			const char *colon = strrchr(path, ':');

			snprintf(target, sizeof(target), "%.*s", colon ? (int)(colon - path) : (int)strlen(path), path);
			json_decref(resp);
			resp = NULL;
			if ((rc = call(ctx, "GET", target, NULL, &status, &resp)) == CLI_EXIT_OK) {
				if (is_operation(resp))
					op_outcome(ctx, resp);
				rc = print_out(ctx, a, o, resp, false);
			}
		}
		goto out;
	}
	if (async && !dry) {
		rc = print_out(ctx, a, o, resp, false);
		goto out;
	}
	if (c->noun && !dry) {
		fprintf(ctx->err, "%s %s %s...", c->gerund, c->noun, v->name ? v->name : "");
		fflush(ctx->err);
	}
	if ((rc = wait_op(ctx, resp, c->noun && !dry, &done)) != CLI_EXIT_OK)
		goto out;
	if (c->noun && !dry && json_is_object(json_object_get(done, "error")))
		fprintf(ctx->err, "failed.\n");
	if ((rc = op_error(ctx, done)) != CLI_EXIT_OK)
		goto out;
	if (c->noun && !dry)
		fprintf(ctx->err, "done.\n");
	if (dry || c->kind == CLI_K_ACTION) {
		const json_t *r = json_object_get(done, "response");
		if (!empty_object(r)) {
			res = json_deep_copy(r);
			json_object_del(res, "@type");
		}
	} else if (c->kind != CLI_K_DELETE) {
		res = final_resource(ctx, a, v, done);
	}
	if (res)
		rc = print_out(ctx, a, o, res, false);
out:
	json_decref(resp);
	json_decref(done);
	json_decref(res);
	return rc;
}

/* --update-labels, --remove-labels, --clear-labels: the resource's labels
 * now (GET path), changed, go in body with "labels" in the mask. */
static int update_labels(struct cli_ctx *ctx, const char *path, json_t *body, struct ut_buf *mask,
			 const struct cli_args *a)
{
	json_t *cur = NULL, *labels = NULL;
	aq_msg msg = { .text = "" };
	long status = 0;
	int rc;

	if ((rc = call(ctx, "GET", path, NULL, &status, &cur)) != CLI_EXIT_OK)
		return rc;
	if (cli_labels_apply(a, json_object_get(cur, "labels"), &labels, &msg) != AQ_OK) {
		json_decref(cur);
		return usage_error(ctx, a, msg.text);
	}
	json_object_set_new(body, "labels", labels);
	ut_buf_adds(mask, mask->len ? "," : "");
	ut_buf_adds(mask, "labels");
	json_decref(cur);
	return CLI_EXIT_OK;
}

/* CLI_C_NETWORK: GCNV names a pool's network projects/P/global/networks/N;
 * a short name (or none: "default") is expanded with the project, as gcloud
 * does with --network=name=N. */
static void expand_network(json_t *body, const char *project)
{
	const char *net = json_string_value(json_object_get(body, "network"));
	struct ut_buf b;

	if (net && strchr(net, '/'))
		return;
	ut_buf_init(&b, CLI_BUF_MAX);
	ut_buf_addf(&b, "projects/%s/global/networks/%s", project, net ? net : "default");
	if (!b.err)
		json_object_set_new(body, "network", json_string(ut_buf_str(&b)));
	ut_buf_cleanup(&b);
}

/* gcloud's PromptContinue before a delete: asked only when stdin is a
 * terminal and --quiet is not given; Enter or EOF take the default answer
 * (yes), as gcloud's does. With stdin not a terminal gcloud reads the answer
 * from it and takes the default at EOF; we do not read a pipe at all (it may
 * carry something else) and take the same default. CLI_EXIT_OK to go on. */
static int confirm_delete(struct cli_ctx *ctx, const struct cli_args *a, const char *name)
{
	char line[64];

	if (!ctx->tty || cli_args_bool(a, "quiet"))
		return CLI_EXIT_OK;
	fprintf(ctx->err, "You are about to delete %s [%s].\n\nDo you want to continue (Y/n)?  ",
		a->cmd->noun ? a->cmd->noun : "resource", name ? name : "");
	fflush(ctx->err);
	for (;;) {
		size_t n;
		if (fgets(line, sizeof(line), ctx->in) == NULL) {
			fputc('\n', ctx->err);
			return CLI_EXIT_OK;
		}
		n = strcspn(line, " \t\r\n");
		line[n] = '\0';
		if (n == 0 || strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0)
			return CLI_EXIT_OK;
		if (strcasecmp(line, "n") == 0 || strcasecmp(line, "no") == 0) {
			fprintf(ctx->err, "ERROR: (%s) Aborted by user.\n", ctx->who);
			return CLI_EXIT_FAIL;
		}
		fputs("Please enter 'y' or 'n':  ", ctx->err);
		fflush(ctx->err);
	}
}

static int run_remote(struct cli_ctx *ctx, const struct cli_args *a)
{
	const struct cli_cmd *c = a->cmd;
	struct cli_path_vars v;
	struct cli_out o;
	struct ut_buf path, mask, query;
	json_t *body = NULL, *resp = NULL;
	aq_msg msg = { .text = "" };
	long status = 0;
	int rc = CLI_EXIT_OK;
	char sep = '?';

	memset(&v, 0, sizeof(v));
	memset(&o, 0, sizeof(o));
	ut_buf_init(&path, CLI_BUF_MAX);
	ut_buf_init(&mask, CLI_BUF_MAX);
	ut_buf_init(&query, CLI_BUF_MAX);
	/* Check, then proceed: every output flag before any request. */
	if (cli_out_init(&o, a, &msg) != AQ_OK || cli_labels_check(a, &msg) != AQ_OK) {
		rc = usage_error(ctx, a, msg.text);
		goto out;
	}
	v.project = ctx->eff[CLI_CONF_PROJECT];
	v.location = ctx->eff[CLI_CONF_LOCATION];
	v.name = a->npos > 0 ? a->pos[0] : NULL;
	v.volume = cli_args_get(a, "volume");
	v.backup_vault = cli_args_get(a, "backup-vault");
	/* Lists default to every location, like gcloud. */
	if (c->kind == CLI_K_LIST && (v.location == NULL || *v.location == '\0') && !strstr(c->path, "{volume}") &&
	    !strstr(c->path, "{backupVault}"))
		v.location = "-"; /* a volume's snapshots, a vault's backups are in its one location */
	if (v.name && strchr(v.name, '/') && cli_path_vars_from_name(&v, a->pos[0], &msg) != AQ_OK) {
		rc = usage_error(ctx, a, msg.text);
		goto out;
	}
	if (cli_path_expand(&path, c->admin_path && cli_args_bool(a, "cluster") ? c->admin_path : c->path, &v,
		   &msg) != AQ_OK) {
		rc = usage_error(ctx, a, msg.text);
		goto out;
	}
	if (c->kind == CLI_K_LIST) {
		rc = run_list(ctx, a, &o, ut_buf_str(&path));
		goto out;
	}
	/* a describe takes query flags only (metrics --window); its body is unused */
	if (cli_args_request(a, &body, &mask, &query, &msg) != AQ_OK) {
		rc = usage_error(ctx, a, msg.text);
		goto out;
	}
	if (c->opts & CLI_C_LOCATION_BODY) {
		if (v.location == NULL || *v.location == '\0') {
			rc = usage_error(ctx, a, CLI_PATH_NO_LOCATION);
			goto out;
		}
		json_object_set_new(body, "location", json_string(v.location));
	}
	if (c->kind == CLI_K_CREATE) {
		ut_buf_addf(&path, "%c%s=", sep, c->id_param);
		cli_buf_add_escaped(&path, v.name);
		sep = '&';
	}
	if ((c->opts & CLI_C_NETWORK) && v.project)
		expand_network(body, v.project);
	if (c->kind == CLI_K_UPDATE && cli_labels_given(a) &&
	    (rc = update_labels(ctx, ut_buf_str(&path), body, &mask, a)) != CLI_EXIT_OK)
		goto out;
	if (c->kind == CLI_K_UPDATE) {
		if (mask.len == 0) {
			rc = usage_error(ctx, a, "nothing to update: give at least one flag to change");
			goto out;
		}
		ut_buf_addf(&path, "%cupdateMask=", sep);
		cli_buf_add_escaped(&path, ut_buf_str(&mask));
		sep = '&';
	}
	if (cli_args_bool(a, "dry-run")) {
		ut_buf_addf(&path, "%cvalidateOnly=true", sep);
		sep = '&';
	}
	if (query.len) {
		ut_buf_addf(&path, "%c%s", sep, ut_buf_str(&query) + 1);
		sep = '&';
	}
	if (path.err) {
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (c->kind == CLI_K_DESCRIBE) {
		if ((rc = call(ctx, "GET", ut_buf_str(&path), NULL, &status, &resp)) != CLI_EXIT_OK)
			goto out;
		if ((c->opts & CLI_C_METRICS) && !o.fmt.user && cli_args_get(a, "format") == NULL)
			cli_metrics_print(ctx->out, ctx->err, resp);
		else
			rc = print_out(ctx, a, &o, resp, false);
		goto out;
	}
	if (c->kind == CLI_K_DELETE && (rc = confirm_delete(ctx, a, v.name)) != CLI_EXIT_OK)
		goto out;
	/* DELETE carries no body; an action without body flags posts {}. */
	rc = run_mutation(ctx, a, &o, &v, ut_buf_str(&path), c->kind == CLI_K_DELETE ? NULL : body);
out:
	json_decref(body);
	json_decref(resp);
	ut_buf_cleanup(&path);
	ut_buf_cleanup(&mask);
	ut_buf_cleanup(&query);
	cli_out_cleanup(&o);
	return rc;
}

/* Effective settings: flag, then environment, then config file. */
static void resolve(struct cli_ctx *ctx, const struct cli_args *a)
{
	int k;

	for (k = 0; k < CLI_CONF_COUNT; k++) {
		const char *flag = cli_conf_key_flag(k), *v = NULL, *env;
		if (flag)
			v = cli_args_get(a, flag);
		if (v == NULL && (env = getenv(cli_conf_key_env(k))) != NULL && *env)
			v = env;
		if (v == NULL)
			v = ctx->file.val[k];
		ctx->eff[k] = v;
	}
	if (ctx->eff[CLI_CONF_ENDPOINT] == NULL)
		ctx->eff[CLI_CONF_ENDPOINT] = CLI_CONF_DEFAULT_ENDPOINT;
}

bool cli_endpoint_ok(const char *s)
{
	if (!s || !*s)
		return false;
	/* one URL, or the replicas' URLs comma-separated (cli_http.h) */
	for (;;) {
		size_t n = strcspn(s, ",");
		size_t skip = strncmp(s, "http://", 7) == 0 ? 7 : strncmp(s, "https://", 8) == 0 ? 8 : 0;

		if (!skip || n <= skip)
			return false;
		if (!s[n])
			return true;
		s += n + 1;
	}
}

int cli_run(int argc, char **argv, FILE *out, FILE *err)
{
	return cli_run_in(argc, argv, stdin, false, out, err);
}

int cli_run_in(int argc, char **argv, FILE *in, bool tty, FILE *out, FILE *err)
{
	struct cli_ctx ctx;
	struct cli_args a;
	aq_msg msg = { .text = "" };
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	ctx.in = in;
	ctx.tty = tty;
	ctx.out = out;
	ctx.err = err;
	cli_conf_init(&ctx.file);
	snprintf(ctx.who, sizeof(ctx.who), "aquifer");
	if (cli_args_parse(&a, argc, argv, &msg) != AQ_OK) {
		if (argc == 2 && a.group && cli_group_find(a.group)) {
			cli_help_print(err, a.group, NULL);
			rc = CLI_EXIT_USAGE;
			goto out;
		}
		if (argc <= 1) {
			cli_help_print(err, NULL, NULL);
			rc = CLI_EXIT_USAGE;
			goto out;
		}
		if (a.cmd)
			snprintf(ctx.who, sizeof(ctx.who), "aquifer.%s.%s", a.cmd->group, a.cmd->verb);
		rc = usage_error(&ctx, &a, msg.text);
		goto out;
	}
	if (a.routes) {
		cli_routes_print(out);
		rc = CLI_EXIT_OK;
		goto out;
	}
	if (a.help) {
		cli_help_print(out, a.group && cli_group_find(a.group) ? a.group : NULL,
			       a.cmd ? a.verb : NULL);
		rc = CLI_EXIT_OK;
		goto out;
	}
	snprintf(ctx.who, sizeof(ctx.who), "aquifer.%s.%s", a.cmd->group, a.cmd->verb);
	if (cli_conf_path(ctx.conf_path, sizeof(ctx.conf_path), &msg) == AQ_OK &&
	    cli_conf_load(&ctx.file, ctx.conf_path, &msg) != AQ_OK) {
		fprintf(err, "ERROR: (%s) %s\n", ctx.who, msg.text);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	resolve(&ctx, &a);
	if (a.cmd->kind == CLI_K_LOCAL) {
		rc = a.cmd->local(&ctx, &a);
		goto out;
	}
	if (!cli_endpoint_ok(ctx.eff[CLI_CONF_ENDPOINT])) {
		rc = usage_error(&ctx, &a, "endpoint must be an http:// or https:// URL");
		goto out;
	}
	cli_http_init(&ctx.http, ctx.eff[CLI_CONF_ENDPOINT], ctx.eff[CLI_CONF_TOKEN],
		      ctx.eff[CLI_CONF_CA_FILE]);
	if (cli_args_bool(&a, "insecure")) {
		ctx.http.insecure = true;
		fprintf(err, "WARNING: --insecure: the TLS certificate of %s is not verified; the token may go to an impostor\n",
			ctx.eff[CLI_CONF_ENDPOINT]);
	}
	rc = run_remote(&ctx, &a);
	cli_http_cleanup(&ctx.http);
out:
	fflush(out);
	cli_conf_cleanup(&ctx.file);
	return rc;
}

int cli_main(int argc, char **argv)
{
	return cli_run_in(argc, argv, stdin, isatty(STDIN_FILENO) == 1, stdout, stderr);
}
