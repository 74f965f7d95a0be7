/* cli_format: printing API resources (--format), as gcloud.
 *
 * --format is one of
 *   table                  columns from the command table (gcloud-like)
 *   table(FIELD,...)       chosen columns; table[no-heading](...) without headers
 *   value(FIELD,...)       tab-separated values, one line per resource
 *   csv(FIELD,...)         comma-separated, with a heading (the labels given,
 *                          else the keys); csv[no-heading](...) without it
 *   json, yaml, flattened  the whole resource (a list: a JSON array, YAML
 *                          documents separated by ---); flattened prints one
 *                          "key.path[0].leaf: value" line per leaf
 *   json(FIELD,...), yaml(FIELD,...), flattened(FIELD,...)
 *                          only those fields, each at its key path
 * FIELD is cli_project.h's: a key path, one transform (.basename(),
 * .location(), .date()), and ":label=HEADER" (or ":HEADER").
 */
#ifndef AQ_CLI_FORMAT_H
#define AQ_CLI_FORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "api/api_error.h"
#include "cli/cli_project.h"

enum cli_fmt_kind {
	CLI_FMT_TABLE,
	CLI_FMT_JSON,
	CLI_FMT_YAML,
	CLI_FMT_VALUE,
	CLI_FMT_CSV,
	CLI_FMT_FLATTENED,
};

#define CLI_FMT_MAX_FIELDS 32

struct cli_fmt {
	enum cli_fmt_kind kind;
	bool user;                  /* the fields come from --format: cli_fmt_check them */
	bool no_heading;            /* table[no-heading], csv[no-heading] */
	int nfields;
	struct cli_fmt_field fields[CLI_FMT_MAX_FIELDS];
};

/* Parse spec (NULL: fallback) with default table columns columns (may be
 * NULL: table then falls back to yaml). AQ_EINVAL with msg on a bad spec, an
 * unknown transform or attribute. */
int cli_fmt_parse(struct cli_fmt *f, const char *spec, enum cli_fmt_kind fallback,
		  const char *columns, aq_msg *msg);

/* Every field --format names exists (cli_field_check): against table when
 * given (before any request), else against doc (what the server answered). */
int cli_fmt_check(const struct cli_fmt *f, const struct api_field *table, const json_t *doc,
		  bool is_list, aq_msg *msg);

/* Print doc: one resource, or (is_list) an array of resources. */
void cli_fmt_print(FILE *out, const struct cli_fmt *f, const json_t *doc, bool is_list);

#endif
