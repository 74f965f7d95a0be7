/* cli_output: what a command prints, decided before anything is sent.
 *
 * cli_out_init() parses and checks --format, --filter, --sort-by, --limit
 * and --page-size of a command line, and checks every field they name
 * against the table of the resource the command prints (projects, locations,
 * storage pools, volumes; operations for --async and the operations group),
 * so a bad one is a usage error while nothing has been sent. Resources with
 * no table in api/ (nodes, shelves, metrics, join tokens) have their fields
 * checked against the server's answer instead, by cli_out_list() and
 * cli_out_print().
 */
#ifndef AQ_CLI_OUTPUT_H
#define AQ_CLI_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "api/api_error.h"
#include "cli/cli_args.h"
#include "cli/cli_filter.h"
#include "cli/cli_format.h"

struct cli_out {
	struct cli_fmt fmt;
	struct cli_filter *filter;        /* NULL: no --filter */
	struct cli_sort sort;             /* nkeys 0: no --sort-by */
	const struct api_field *schema;   /* NULL: fields are checked against the answer */
	long limit;                       /* -1: no --limit */
};

/* AQ_OK, or AQ_EINVAL with msg; o is usable (and must be cleaned up) either way. */
int cli_out_init(struct cli_out *o, const struct cli_args *a, aq_msg *msg);
void cli_out_cleanup(struct cli_out *o);

/* A list as fetched: check fields against it (no schema), then filter,
 * sort and cut to --limit; *items is replaced. */
int cli_out_list(const struct cli_out *o, json_t **items, aq_msg *msg);

/* Check fields against doc (no schema), then print it to out. */
int cli_out_print(const struct cli_out *o, FILE *out, const json_t *doc, bool is_list, aq_msg *msg);

#endif
