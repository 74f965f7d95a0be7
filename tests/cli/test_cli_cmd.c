/* Unit tests for cli/cli_cmd.c: the command table is consistent with itself
 * (every row well formed, flags typed, columns parse, routes unique), and
 * help and completion are generated for every group and verb. */
#include "cli/cli.h"
#include "cli/cli_format.h"
#include "api/api_resource.h"
#include "cli/cli_hint.h"

#include <check.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

static const char *const methods[] = { "GET", "POST", "PATCH", "DELETE", NULL };
static const char *const params[] = { "{project}", "{location}", "{volume}", "{backupVault}", "{name}", NULL };

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static void check_flag_name(const char *name)
{
	const char *p;

	ck_assert_msg(name[0] != '\0' && islower((unsigned char)name[0]), "flag '%s'", name);
	for (p = name; *p; p++)
		ck_assert_msg(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-',
			      "flag '%s' is not lower-case-with-hyphens", name);
}

static void check_choices(const char *what, const char *const *choices)
{
	const char *const *c;
	const char *p;

	ck_assert_msg(choices && choices[0], "%s: enum without choices", what);
	for (c = choices; *c; c++)
		for (p = *c; *p; p++)
			ck_assert_msg(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_',
				      "%s: choice '%s' is not an upper-case enum name", what, *c);
}

static void check_flags(const struct cli_cmd *c, const struct cli_flag *flags, bool global)
{
	const struct cli_flag *f, *g;

	for (f = flags; f && f->name; f++) {
		check_flag_name(f->name);
		ck_assert_msg(f->field != NULL, "--%s has no field", f->name);
		ck_assert_msg(f->help && *f->help, "--%s has no help", f->name);
		if (f->type == CLI_T_ENUM || f->type == CLI_T_ENUM_LIST)
			check_choices(f->name, f->choices);
		if (f->type == CLI_T_DICT) {
			const struct cli_key *k;
			ck_assert_msg(f->keys && f->keys[0].name, "--%s: dict without keys", f->name);
			for (k = f->keys; k->name; k++) {
				check_flag_name(k->name);
				ck_assert_msg(k->field != NULL, "--%s %s: no field", f->name, k->name);
				if (k->type == CLI_T_ENUM)
					check_choices(k->name, k->choices);
			}
		}
		if (!cli_flag_applies(f, c))
			continue;
		if (!global) {
			/* A resource flag never shadows a global one. */
			for (g = cli_global_flags; g->name; g++)
				ck_assert_msg(!(strcmp(g->name, f->name) == 0 && cli_flag_applies(g, c)),
					      "%s %s: --%s is also global", c->group, c->verb, f->name);
			/* Resolving by name finds this very flag. */
			ck_assert_msg(cli_cmd_flag(c, f->name) == f, "%s %s: --%s is defined twice",
				      c->group, c->verb, f->name);
		}
	}
}

START_TEST(test_rows)
{
	const struct cli_cmd *c, *d;
	const struct cli_group *g;
	int nremote = 0;

	for (c = cli_cmds; c->group; c++) {
		const char *p;
		ck_assert_msg(cli_group_find(c->group) != NULL, "%s: no such group", c->group);
		ck_assert_msg(cli_cmd_find(c->group, c->verb) == c, "%s %s twice", c->group, c->verb);
		ck_assert_msg(c->help && *c->help, "%s %s: no help", c->group, c->verb);
		ck_assert_msg(c->min_args <= c->max_args && c->max_args <= CLI_ARGS_MAX_POS, "%s %s",
			      c->group, c->verb);
		ck_assert_msg((c->max_args == 0) == (c->args == NULL), "%s %s: args usage", c->group,
			      c->verb);
		check_flags(c, c->flags, false);
		if (c->kind == CLI_K_LOCAL) {
			ck_assert_msg(c->local && !c->method && !c->path, "%s %s", c->group, c->verb);
			continue;
		}
		nremote++;
		ck_assert_msg(!c->local, "%s %s: remote with a handler", c->group, c->verb);
		ck_assert_msg(c->method && in_list(methods, c->method), "%s %s: method", c->group,
			      c->verb);
		ck_assert_msg(c->path && strncmp(c->path, "/v1/", 4) == 0, "%s %s: path", c->group,
			      c->verb);
		for (p = c->path; (p = strchr(p, '{')) != NULL; p++) {
			char param[32];
			size_t n = strcspn(p, "}") + 1;
			ck_assert_msg(n < sizeof(param) && p[n - 1] == '}', "%s %s: bad template %s",
				      c->group, c->verb, c->path);
			memcpy(param, p, n);
			param[n] = '\0';
			ck_assert_msg(in_list(params, param), "%s %s: unknown parameter %s", c->group,
				      c->verb, param);
		}
		/* NAME is a positional exactly when the path names it. */
		ck_assert_msg((strstr(c->path, "{name}") != NULL) == (c->min_args == 1) ||
			      c->kind == CLI_K_CREATE,
			      "%s %s: {name} vs positional", c->group, c->verb);
		switch (c->kind) {
		case CLI_K_CREATE:
			ck_assert_msg(strcmp(c->method, "POST") == 0 && c->id_param && c->min_args == 1,
				      "%s %s", c->group, c->verb);
			break;
		case CLI_K_UPDATE:
			ck_assert_msg(strcmp(c->method, "PATCH") == 0, "%s %s", c->group, c->verb);
			break;
		case CLI_K_DELETE:
			ck_assert_msg(strcmp(c->method, "DELETE") == 0, "%s %s", c->group, c->verb);
			break;
		case CLI_K_LIST:
			ck_assert_msg(strcmp(c->method, "GET") == 0 && c->items && c->columns, "%s %s",
				      c->group, c->verb);
			break;
		case CLI_K_DESCRIBE:
			ck_assert_msg(strcmp(c->method, "GET") == 0, "%s %s", c->group, c->verb);
			break;
		case CLI_K_ACTION:
			ck_assert_msg(strcmp(c->method, "POST") == 0 && strchr(c->path, ':'), "%s %s",
				      c->group, c->verb);
			break;
		default:
			ck_abort_msg("%s %s: bad kind", c->group, c->verb);
		}
		ck_assert_msg(!c->noun == !c->gerund, "%s %s: noun and gerund go together", c->group,
			      c->verb);
		/* Creates and updates can show the result: a describe exists. */
		if (c->kind == CLI_K_CREATE || c->kind == CLI_K_UPDATE)
			ck_assert_msg(cli_cmd_find(c->group, "describe") != NULL, "%s: no describe",
				      c->group);
		/* No two commands share a route. */
		for (d = cli_cmds; d < c; d++)
			ck_assert_msg(!(d->method && strcmp(d->method, c->method) == 0 &&
					strcmp(d->path, c->path) == 0),
				      "%s %s and %s %s share a route", d->group, d->verb, c->group,
				      c->verb);
	}
	ck_assert_int_gt(nremote, 20);
	check_flags(cli_cmds, cli_global_flags, true);
	for (g = cli_groups; g->name; g++) {
		bool any = false;
		for (c = cli_cmds; c->group; c++)
			any = any || strcmp(c->group, g->name) == 0;
		ck_assert_msg(any, "group %s has no verbs", g->name);
	}
}
END_TEST

START_TEST(test_columns_parse)
{
	const struct cli_cmd *c;
	struct cli_fmt f;
	aq_msg msg = { .text = { 0 } };

	for (c = cli_cmds; c->group; c++) {
		if (c->kind != CLI_K_LIST)
			continue;
		ck_assert_msg(cli_fmt_parse(&f, NULL, CLI_FMT_TABLE, c->columns, &msg) == AQ_OK,
			      "%s %s: %s", c->group, c->verb, msg.text);
		ck_assert_int_eq(f.kind, CLI_FMT_TABLE);
		ck_assert_int_gt(f.nfields, 0);
	}
}
END_TEST

START_TEST(test_issue_contract)
{
	/* Names the issue fixes. */
	static const char *const need[][2] = {
		{ "projects", "create" }, { "projects", "list" }, { "projects", "describe" },
		{ "projects", "delete" }, { "locations", "list" }, { "locations", "describe" },
		{ "storage-pools", "create" }, { "storage-pools", "describe" },
		{ "storage-pools", "list" }, { "storage-pools", "update" },
		{ "storage-pools", "delete" }, { "volumes", "create" }, { "volumes", "describe" },
		{ "volumes", "list" }, { "volumes", "update" }, { "volumes", "delete" },
		{ "operations", "describe" }, { "operations", "list" }, { "operations", "cancel" },
		{ "nodes", "list" }, { "nodes", "describe" }, { "nodes", "drain" }, { "nodes", "undrain" },
		{ "nodes", "join-token" }, { "shelves", "list" }, { "shelves", "describe" },
		{ "shelves", "create" },
		{ "config", "set" }, { "config", "get" }, { "config", "list" }, { "config", "unset" },
		{ "auth", "print-token" }, { "auth", "login" }, { "completion", "bash" },
	};
	static const char *const pool_flags[] = { "capacity", "service-level", "qos-type",
		"allow-auto-tiering", "custom-performance-enabled", "total-throughput", "total-iops",
		"description", "labels", "network", "async", "dry-run", "format", "project",
		"location", NULL };
	static const char *const vol_flags[] = { "storage-pool", "capacity", "protocols",
		"share-name", "export-policy", "throughput-mibps", "tiering-policy",
		"unix-permissions", "large-capacity", NULL };
	/* issue 17: update offers what can be updated, labels by gcloud's three flags */
	static const char *const pool_update_flags[] = { "capacity", "qos-type", "allow-auto-tiering",
		"total-throughput", "total-iops", "description", "update-labels", "remove-labels",
		"clear-labels", "async", "dry-run", "format", NULL };
	static const char *const pool_not_update[] = { "service-level", "custom-performance-enabled",
		"network", "labels", NULL };
	static const char *const vol_update_flags[] = { "storage-pool", "capacity", "export-policy",
		"throughput-mibps", "tiering-policy", "unix-permissions", "description", "update-labels",
		"remove-labels", "clear-labels", NULL };
	static const char *const vol_not_update[] = { "protocols", "share-name", "large-capacity",
		"labels", NULL };
	static const char *const list_flags[] = { "filter", "sort-by", "limit", "page-size",
		"format", NULL };
	const struct cli_cmd *c;
	size_t i;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		ck_assert_msg(cli_cmd_find(need[i][0], need[i][1]) != NULL, "missing %s %s", need[i][0],
			      need[i][1]);
	c = cli_cmd_find("storage-pools", "create");
	for (i = 0; pool_flags[i]; i++)
		ck_assert_msg(cli_cmd_flag(c, pool_flags[i]), "storage-pools create --%s", pool_flags[i]);
	c = cli_cmd_find("volumes", "create");
	for (i = 0; vol_flags[i]; i++)
		ck_assert_msg(cli_cmd_flag(c, vol_flags[i]), "volumes create --%s", vol_flags[i]);
	c = cli_cmd_find("volumes", "update");
	for (i = 0; vol_update_flags[i]; i++)
		ck_assert_msg(cli_cmd_flag(c, vol_update_flags[i]), "volumes update --%s", vol_update_flags[i]);
	for (i = 0; vol_not_update[i]; i++)
		ck_assert_msg(!cli_cmd_flag(c, vol_not_update[i]), "volumes update --%s", vol_not_update[i]);
	c = cli_cmd_find("storage-pools", "update");
	for (i = 0; pool_update_flags[i]; i++)
		ck_assert_msg(cli_cmd_flag(c, pool_update_flags[i]), "storage-pools update --%s",
			      pool_update_flags[i]);
	for (i = 0; pool_not_update[i]; i++)
		ck_assert_msg(!cli_cmd_flag(c, pool_not_update[i]), "storage-pools update --%s",
			      pool_not_update[i]);
	ck_assert_ptr_nonnull(cli_cmd_flag(cli_cmd_find("volumes", "delete"), "force"));
	for (c = cli_cmds; c->group; c++)
		for (i = 0; c->kind == CLI_K_LIST && list_flags[i]; i++)
			ck_assert_msg(cli_cmd_flag(c, list_flags[i]), "%s list --%s", c->group,
				      list_flags[i]);
}
END_TEST

/* update --help offers only what can be updated: no flag of an update
 * command lands in a field the API table marks immutable or output-only. */
START_TEST(test_update_flags_mutable)
{
	static const struct {
		const char *group;
		const struct api_field *table;
	} res[] = {
		{ "locations", api_location_fields },
		{ "storage-pools", api_pool_fields },
		{ "volumes", api_volume_fields },
	};
	size_t i;

	for (i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		const struct cli_cmd *c = cli_cmd_find(res[i].group, "update");
		const struct cli_flag *f;
		ck_assert_ptr_nonnull(c);
		for (f = c->flags; f->name; f++) {
			char top[128];
			const struct api_field *af;
			if (!cli_flag_applies(f, c) || (f->opts & CLI_O_QUERY))
				continue;
			snprintf(top, sizeof(top), "%.*s", (int)strcspn(f->mask ? f->mask : f->field, "."),
				 f->mask ? f->mask : f->field);
			af = api_schema_find(res[i].table, top);
			ck_assert_msg(af != NULL, "%s update --%s: no field %s", res[i].group, f->name, top);
			ck_assert_msg(!(af->flags & (API_F_IMMUTABLE | API_F_OUTPUT)),
				      "%s update offers --%s, but %s cannot be updated", res[i].group, f->name, top);
		}
	}
}
END_TEST

/* Error hints name aquifer commands: routes a row sends become its command. */
static void hint_is(const char *text, const char *want)
{
	struct ut_buf b;

	ut_buf_init(&b, CLI_BUF_MAX);
	cli_hint_rewrite(text, &b);
	ck_assert_str_eq(ut_buf_str(&b), want);
	ut_buf_cleanup(&b);
}

START_TEST(test_hints)
{
	/* aquiferd's own messages (server/srv_drain.c, srv_project.c, srv_common.c) */
	hint_is("node \"n1\" is READY and holds 2 volumes; drain it (POST /v1/nodes/n1:drain) or stop its agent first",
		"node \"n1\" is READY and holds 2 volumes; drain it (aquifer nodes drain n1) or stop its agent first");
	hint_is("location \"l\" still has 2 storage nodes; drain and delete them first (DELETE /v1/nodes/NAME)",
		"location \"l\" still has 2 storage nodes; drain and delete them first (aquifer nodes delete NAME)");
	hint_is("location \"x\" not found (a cluster admin creates locations with POST /v1/locations?locationId=ID)",
		"location \"x\" not found (a cluster admin creates locations with aquifer locations create ID)");
	hint_is("see GET /v1/projects/p/locations/l/volumes/v1.",
		"see aquifer volumes describe v1.");
	hint_is("undrain: POST /v1/nodes/n2:undrain, then retry", "undrain: aquifer nodes undrain n2, then retry");
	/* what no command sends stays, and so does text that only looks like a route */
	hint_is("POST /v1/agent/status is for agents", "POST /v1/agent/status is for agents");
	hint_is("GET /v2/x and XPOST /v1/nodes/n1:drain", "GET /v2/x and XPOST /v1/nodes/n1:drain");
	hint_is("", "");
}
END_TEST

static char *capture_help(const char *group, const char *verb)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cli_help_print(out, group, verb);
	fclose(out);
	return buf;
}

START_TEST(test_help_everywhere)
{
	const struct cli_cmd *c;
	const struct cli_group *g;
	const struct cli_flag *f;
	char *h, want[96];

	h = capture_help(NULL, NULL);
	for (g = cli_groups; g->name; g++)
		ck_assert_msg(strstr(h, g->name) != NULL, "top help lacks %s", g->name);
	free(h);
	for (g = cli_groups; g->name; g++) {
		h = capture_help(g->name, NULL);
		for (c = cli_cmds; c->group; c++)
			if (strcmp(c->group, g->name) == 0)
				ck_assert_msg(strstr(h, c->verb) != NULL, "%s help lacks %s", g->name,
					      c->verb);
		free(h);
	}
	for (c = cli_cmds; c->group; c++) {
		h = capture_help(c->group, c->verb);
		snprintf(want, sizeof(want), "Usage: aquifer %s %s", c->group, c->verb);
		ck_assert_msg(strstr(h, want) != NULL, "%s", h);
		for (f = c->flags; f && f->name; f++) {
			if (!cli_flag_applies(f, c))
				continue;
			snprintf(want, sizeof(want), "--%s", f->name);
			ck_assert_msg(strstr(h, want) != NULL, "%s %s help lacks %s", c->group, c->verb,
				      want);
		}
		free(h);
	}
}
END_TEST

START_TEST(test_completion)
{
	const struct cli_cmd *c;
	char *buf = NULL, want[128];
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cli_completion_bash(out);
	fclose(out);
	ck_assert_msg(strstr(buf, "complete -F _aquifer aquifer") != NULL, "%s", buf);
	for (c = cli_cmds; c->group; c++) {
		snprintf(want, sizeof(want), "\"%s %s\")", c->group, c->verb);
		ck_assert_msg(strstr(buf, want) != NULL, "completion lacks %s", want);
	}
	ck_assert(strstr(buf, "\"storage-pools create --service-level\") choices=\"standard premium "
			      "extreme flex\"") != NULL);
	ck_assert(strstr(buf, "--capacity=") != NULL);
	free(buf);
}
END_TEST

START_TEST(test_routes_list)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cli_routes_print(out);
	fclose(out);
	ck_assert(strstr(buf, "POST /v1/projects/*/locations/*/storagePools\n") != NULL);
	ck_assert(strstr(buf, "PATCH /v1/projects/*/locations/*/volumes/*\n") != NULL);
	ck_assert(strstr(buf, "POST /v1/nodes/*:drain\n") != NULL);
	ck_assert(strstr(buf, "POST /v1/nodes/*:undrain\n") != NULL);
	ck_assert(strstr(buf, "GET /v1/locations/*\n") != NULL);
	ck_assert(strstr(buf, "{") == NULL);
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli_cmd");
	TCase *tc = tcase_create("cli_cmd");

	tcase_add_test(tc, test_rows);
	tcase_add_test(tc, test_columns_parse);
	tcase_add_test(tc, test_issue_contract);
	tcase_add_test(tc, test_update_flags_mutable);
	tcase_add_test(tc, test_hints);
	tcase_add_test(tc, test_help_everywhere);
	tcase_add_test(tc, test_completion);
	tcase_add_test(tc, test_routes_list);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
