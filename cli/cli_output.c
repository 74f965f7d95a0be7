/* cli_output: parsing and checking the output flags once, before any request,
 * and applying them to what the server answered (see cli_output.h). */
#include "cli/cli_output.h"

#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"

/* The table of the resource each group prints. */
static const struct {
	const char *group;
	const struct api_field *table;
} group_schemas[] = {
	{ "projects", api_project_fields },
	{ "locations", api_location_fields },
	{ "storage-pools", api_pool_fields },
	{ "volumes", api_volume_fields },
	{ "operations", cli_operation_fields },
	{ NULL, NULL }
};

/* What a's command prints: the operation with --async, nothing known for
 * metrics and for groups without a table. */
static const struct api_field *schema_for(const struct cli_args *a)
{
	const struct cli_cmd *c = a->cmd;
	int i;

	if (c->kind != CLI_K_LIST && c->kind != CLI_K_DESCRIBE && cli_args_bool(a, "async") &&
	    !cli_args_bool(a, "dry-run"))
		return cli_operation_fields;
	if (strcmp(c->verb, "metrics") == 0 || c->kind == CLI_K_ACTION)
		return strcmp(c->group, "operations") == 0 ? cli_operation_fields : NULL;
	for (i = 0; group_schemas[i].group; i++)
		if (strcmp(group_schemas[i].group, c->group) == 0)
			return group_schemas[i].table;
	return NULL;
}

static int positive(const char *flag, const char *v, aq_msg *msg)
{
	if (v && strtol(v, NULL, 10) < 1)
		return aq_fail(msg, AQ_EINVAL, "invalid value for --%s: must be 1 or more", flag);
	return AQ_OK;
}

int cli_out_init(struct cli_out *o, const struct cli_args *a, aq_msg *msg)
{
	const struct cli_cmd *c = a->cmd;
	const char *filter = cli_args_get(a, "filter"), *sort = cli_args_get(a, "sort-by");
	const char *limit = cli_args_get(a, "limit");
	bool list = c->kind == CLI_K_LIST;
	int rc;

	memset(o, 0, sizeof(*o));
	o->limit = limit ? strtol(limit, NULL, 10) : -1;
	if (cli_args_bool(a, "uri") && cli_args_get(a, "format"))
		return aq_fail(msg, AQ_EINVAL, "--uri prints URIs: it does not take --format");
	o->schema = schema_for(a);
	if ((rc = cli_fmt_parse(&o->fmt, cli_args_get(a, "format"), list ? CLI_FMT_TABLE : CLI_FMT_YAML,
				list ? c->columns : NULL, msg)) != AQ_OK ||
	    (filter && (rc = cli_filter_new(filter, &o->filter, msg)) != AQ_OK) ||
	    (sort && (rc = cli_sort_parse(&o->sort, sort, msg)) != AQ_OK) ||
	    (rc = positive("limit", limit, msg)) != AQ_OK ||
	    (rc = positive("page-size", cli_args_get(a, "page-size"), msg)) != AQ_OK)
		return rc;
	/* --sort-by a column sorts by what the column shows */
	if (o->fmt.kind == CLI_FMT_TABLE || o->fmt.kind == CLI_FMT_VALUE || o->fmt.kind == CLI_FMT_CSV)
		cli_sort_bind(&o->sort, o->fmt.fields, o->fmt.nfields);
	if (o->schema == NULL)
		return AQ_OK;
	if ((rc = cli_fmt_check(&o->fmt, o->schema, NULL, false, msg)) != AQ_OK ||
	    (o->filter && (rc = cli_filter_check(o->filter, o->schema, NULL, false, msg)) != AQ_OK) ||
	    (rc = cli_sort_check(&o->sort, o->schema, NULL, false, msg)) != AQ_OK)
		return rc;
	return AQ_OK;
}

void cli_out_cleanup(struct cli_out *o)
{
	cli_filter_free(o->filter);
	o->filter = NULL;
}

int cli_out_list(const struct cli_out *o, json_t **items, aq_msg *msg)
{
	json_t *kept;
	size_t i;
	int rc;

	if (o->schema == NULL &&
	    ((rc = cli_fmt_check(&o->fmt, NULL, *items, true, msg)) != AQ_OK ||
	     (o->filter && (rc = cli_filter_check(o->filter, NULL, *items, true, msg)) != AQ_OK) ||
	     (rc = cli_sort_check(&o->sort, NULL, *items, true, msg)) != AQ_OK))
		return rc;
	if (o->filter) {
		kept = json_array();
		for (i = 0; i < json_array_size(*items); i++)
			if (cli_filter_match(o->filter, json_array_get(*items, i)))
				json_array_append(kept, json_array_get(*items, i));
		json_decref(*items);
		*items = kept;
	}
	cli_sort_apply(&o->sort, *items);
	while (o->limit >= 0 && json_array_size(*items) > (size_t)o->limit)
		json_array_remove(*items, json_array_size(*items) - 1);
	return AQ_OK;
}

int cli_out_print(const struct cli_out *o, FILE *out, const json_t *doc, bool is_list, aq_msg *msg)
{
	int rc;

	if (o->schema == NULL && (rc = cli_fmt_check(&o->fmt, NULL, doc, is_list, msg)) != AQ_OK)
		return rc;
	cli_fmt_print(out, &o->fmt, doc, is_list);
	return AQ_OK;
}
