/* cli_args: command-line parsing against the command table (see cli_args.h). */
#include "cli/cli_args.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli_value.h"

/* The global flag called name, or NULL. */
static const struct cli_flag *global_flag(const char *name)
{
	const struct cli_flag *f;

	for (f = cli_global_flags; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* The flag called name for a->cmd, or among the global ones while no
 * command is known. */
static const struct cli_flag *find_flag(const struct cli_args *a, const char *name)
{
	return a->cmd ? cli_cmd_flag(a->cmd, name) : global_flag(name);
}

/* Global flags that take a value, for finding the group and verb before the
 * command is known. */
static bool global_takes_value(const char *tok)
{
	const struct cli_flag *f;

	if (strncmp(tok, "--", 2) != 0 || strchr(tok, '='))
		return false;
	f = global_flag(tok + 2);
	return f && !cli_type_is_bool(f->type);
}

static int add_val(struct cli_args *a, const struct cli_flag *f, const char *raw, aq_msg *msg)
{
	json_t *v = NULL;
	int rc;

	if (a->nvals >= CLI_ARGS_MAX_VALS)
		return aq_fail(msg, AQ_EINVAL, "too many flags");
	if ((rc = cli_value_json(f, raw, &v, msg)) != AQ_OK)
		return rc;
	json_decref(v);
	a->vals[a->nvals].flag = f;
	a->vals[a->nvals].raw = raw;
	a->nvals++;
	if (strcmp(f->name, "help") == 0)
		a->help = cli_args_bool(a, "help");
	return AQ_OK;
}

/* Parse one "--name[=value]" token at argv[*i] for a->cmd (or the global
 * flags only when no command is known). */
static int parse_flag(struct cli_args *a, int argc, char **argv, int *i, aq_msg *msg)
{
	const char *tok = argv[*i] + 2, *eq = strchr(tok, '='), *raw;
	char name[64];
	size_t len = eq ? (size_t)(eq - tok) : strlen(tok);
	const struct cli_flag *f = NULL;
	bool negated = false;

	if (len == 0 || len >= sizeof(name))
		return aq_fail(msg, AQ_EINVAL, "unrecognized argument: %s", argv[*i]);
	memcpy(name, tok, len);
	name[len] = '\0';
	f = find_flag(a, name);
	if (f == NULL && strncmp(name, "no-", 3) == 0 && !eq) {
		/* --no-FLAG: a boolean set to false */
		f = find_flag(a, name + 3);
		negated = f && cli_type_is_bool(f->type);
		if (!negated)
			f = NULL;
	}
	if (f == NULL)
		return aq_fail(msg, AQ_EINVAL, "unrecognized flag: --%s", name);
	if (negated)
		raw = "false";
	else if (eq)
		raw = eq + 1;
	else if (cli_type_is_bool(f->type))
		raw = "true";
	else if (*i + 1 < argc)
		raw = argv[++*i];
	else
		return aq_fail(msg, AQ_EINVAL, "flag --%s needs a value", name);
	return add_val(a, f, raw, msg);
}

static int check_required(const struct cli_args *a, aq_msg *msg)
{
	const struct cli_flag *f;
	const struct cli_cmd *c = a->cmd;

	if (c->kind == CLI_K_UPDATE)
		return AQ_OK;
	for (f = c->flags; f && f->name; f++)
		if ((f->opts & CLI_O_REQUIRED) && cli_flag_applies(f, c) && !cli_args_get(a, f->name))
			return aq_fail(msg, AQ_EINVAL, "missing required flag: --%s", f->name);
	return AQ_OK;
}

int cli_args_parse(struct cli_args *a, int argc, char **argv, aq_msg *msg)
{
	int i, words = 0, w[3] = { -1, -1, -1 }, gi, si = -1, vi, rc = AQ_OK;
	const struct cli_group *sub;
	bool dashdash = false;
	char two[128];

	memset(a, 0, sizeof(*a));
	/* Pass 1: the group and the verb are the first two words, or three
	 * for a group of two words ("volumes snapshots create"). */
	for (i = 1; i < argc && words < 3; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (argv[i][0] == '-') {
			if (global_takes_value(argv[i]))
				i++;
			continue;
		}
		w[words++] = i;
	}
	gi = w[0];
	vi = w[1];
	if (w[1] > 0 && (size_t)snprintf(two, sizeof(two), "%s %s", argv[w[0]], argv[w[1]]) < sizeof(two) &&
	    (sub = cli_group_find(two))) {
		si = w[1];
		vi = w[2];
	} else {
		sub = NULL;
	}
	if (gi > 0 && strcmp(argv[gi], "__routes") == 0) {
		a->routes = true;
		return AQ_OK;
	}
	if (gi > 0) {
		a->group = sub ? sub->name : argv[gi];
		if (cli_group_find(a->group) == NULL)
			rc = aq_fail(msg, AQ_EINVAL, "unknown command group: %s", a->group);
	}
	if (rc == AQ_OK && vi > 0) {
		a->verb = argv[vi];
		if ((a->cmd = cli_cmd_find(a->group, a->verb)) == NULL)
			rc = aq_fail(msg, AQ_EINVAL, "unknown command: %s %s", a->group, a->verb);
	}
	/* Pass 2: flags and positionals. */
	for (i = 1; i < argc; i++) {
		const char *tok = argv[i];
		if (i == gi || i == si || i == vi)
			continue;
		if (!dashdash && strcmp(tok, "--") == 0) {
			dashdash = true;
			continue;
		}
		if (!dashdash && (strcmp(tok, "-h") == 0 || strcmp(tok, "--help") == 0)) {
			a->help = true;
			continue;
		}
		if (rc != AQ_OK)
			continue;
		if (!dashdash && tok[0] == '-' && tok[1] == '-') {
			rc = parse_flag(a, argc, argv, &i, msg);
			continue;
		}
		if (!dashdash && strcmp(tok, "-q") == 0) {
			/* gcloud's short form of --quiet */
			const struct cli_flag *q = find_flag(a, "quiet");
			rc = q ? add_val(a, q, "true", msg) : aq_fail(msg, AQ_EINVAL, "unrecognized flag: -q");
			continue;
		}
		if (!dashdash && tok[0] == '-' && tok[1] != '\0') {
			rc = aq_fail(msg, AQ_EINVAL, "unrecognized flag: %s", tok);
			continue;
		}
		if (a->cmd == NULL || a->npos >= a->cmd->max_args || a->npos >= CLI_ARGS_MAX_POS) {
			rc = aq_fail(msg, AQ_EINVAL, "unexpected argument: %s", tok);
			continue;
		}
		a->pos[a->npos++] = tok;
	}
	if (a->help)
		return AQ_OK;
	if (rc != AQ_OK)
		return rc;
	if (a->group == NULL)
		return aq_fail(msg, AQ_EINVAL, "missing command group");
	if (a->cmd == NULL)
		return aq_fail(msg, AQ_EINVAL, "missing command after %s", a->group);
	if (a->npos < a->cmd->min_args)
		return aq_fail(msg, AQ_EINVAL, "missing argument %s", a->cmd->args ? a->cmd->args : "");
	return check_required(a, msg);
}

const char *cli_args_get(const struct cli_args *a, const char *name)
{
	int i;

	for (i = a->nvals - 1; i >= 0; i--)
		if (strcmp(a->vals[i].flag->name, name) == 0)
			return a->vals[i].raw;
	return NULL;
}

bool cli_args_bool(const struct cli_args *a, const char *name)
{
	const char *raw = cli_args_get(a, name);
	bool v = false;

	return raw && cli_value_bool(raw, &v) == AQ_OK && v;
}

/* Set obj[path] (dotted) = v, creating intermediate objects; steals v. */
static int set_path(json_t *obj, const char *path, json_t *v)
{
	const char *dot;
	char part[128];

	while ((dot = strchr(path, '.')) != NULL) {
		json_t *next;
		size_t len = (size_t)(dot - path);
		if (len >= sizeof(part)) {
			json_decref(v);
			return AQ_EINVAL;
		}
		memcpy(part, path, len);
		part[len] = '\0';
		if ((next = json_object_get(obj, part)) == NULL || !json_is_object(next)) {
			next = json_object();
			json_object_set_new(obj, part, next);
		}
		obj = next;
		path = dot + 1;
	}
	return json_object_set_new(obj, path, v) == 0 ? AQ_OK : AQ_ENOMEM;
}

static void query_add(struct ut_buf *q, const char *name, const json_t *v)
{
	char num[32];
	const char *s = num;

	if (json_is_string(v))
		s = json_string_value(v);
	else if (json_is_integer(v))
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		s = json_is_true(v) ? "true" : "false";
	else
		return;
	ut_buf_adds(q, "&");
	ut_buf_adds(q, name);
	ut_buf_adds(q, "=");
	cli_buf_add_escaped(q, s);
}

int cli_args_request(const struct cli_args *a, json_t **body, struct ut_buf *mask,
		     struct ut_buf *query, aq_msg *msg)
{
	const struct cli_flag *f;
	json_t *doc = json_object(), *v = NULL, *arr = NULL;
	int rc = AQ_OK, i;

	for (f = a->cmd->flags; f && f->name; f++) {
		const char *raw;
		if (!cli_flag_applies(f, a->cmd) || (raw = cli_args_get(a, f->name)) == NULL ||
		    (f->opts & (CLI_O_LABELS | CLI_O_PATH)))
			continue;
		if (f->opts & CLI_O_REPEAT) {
			arr = json_array();
			for (i = 0; i < a->nvals; i++) {
				if (a->vals[i].flag != f)
					continue;
				if ((rc = cli_value_json(f, a->vals[i].raw, &v, msg)) != AQ_OK)
					goto out;
				json_array_append_new(arr, v);
				v = NULL;
			}
			v = arr;
			arr = NULL;
		} else if ((rc = cli_value_json(f, raw, &v, msg)) != AQ_OK) {
			goto out;
		}
		if (f->opts & CLI_O_QUERY) {
			query_add(query, f->field, v);
			json_decref(v);
		} else if (f->type == CLI_T_NETWORK) {
			/* its keys are fields of the body's root */
			const char *k;
			json_t *m;
			json_object_foreach(v, k, m) {
				json_object_set(doc, k, m);
				ut_buf_adds(mask, mask->len ? "," : "");
				ut_buf_adds(mask, k);
			}
			json_decref(v);
		} else {
			rc = set_path(doc, f->field, v);   /* steals v, even on failure */
			v = NULL;
			if (rc == AQ_OK && (f->opts & CLI_O_ENABLE)) {
				char top[128];

				snprintf(top, sizeof(top), "%.*s.enabled", (int)strcspn(f->field, "."), f->field);
				rc = set_path(doc, top, json_true());
			}
			if (rc != AQ_OK)
				goto out;
			if (mask->len)
				ut_buf_adds(mask, ",");
			ut_buf_adds(mask, f->mask ? f->mask : f->field);
		}
		v = NULL;
	}
	if (mask->err || query->err) {
		rc = AQ_ENOMEM;
		goto out;
	}
	*body = doc;
	doc = NULL;
out:
	json_decref(arr);
	json_decref(v);
	json_decref(doc);
	return rc;
}
