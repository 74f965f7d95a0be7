/* cli_format: printing API resources, and the client-side list helpers.
 *
 * --format is one of
 *   table                  columns from the command table (gcloud-like)
 *   table(FIELD,...)       chosen columns
 *   json                   the resource, or the list as an array, indented
 *   yaml                   the resource; a list as documents separated by ---
 *   value(FIELD,...)       tab-separated values, one line per resource
 * A FIELD is a path into the resource: "capacityGib", "metadata.verb",
 * "mountOptions[0].exportFull", optionally followed by ".basename()" (the
 * last '/'-separated part) or ".location()" (the ID after "locations/" in a
 * resource name), and by ":LABEL" (the table header).
 */
#ifndef AQ_CLI_FORMAT_H
#define AQ_CLI_FORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "api/api_error.h"

enum cli_fmt_kind { CLI_FMT_TABLE, CLI_FMT_JSON, CLI_FMT_YAML, CLI_FMT_VALUE };

#define CLI_FMT_MAX_FIELDS 32

enum cli_fmt_xform {
	CLI_XF_NONE,
	CLI_XF_BASENAME,   /* ".basename()": the last '/'-separated part */
	CLI_XF_LOCATION,   /* ".location()": the part after "locations/" */
};

struct cli_fmt_field {
	char path[128];
	char label[64];
	enum cli_fmt_xform xform;
};

struct cli_fmt {
	enum cli_fmt_kind kind;
	int nfields;
	struct cli_fmt_field fields[CLI_FMT_MAX_FIELDS];
};

/* Parse spec (NULL: fallback) with default table columns columns (may be
 * NULL: table then falls back to yaml). AQ_EINVAL with msg on a bad spec. */
int cli_fmt_parse(struct cli_fmt *f, const char *spec, enum cli_fmt_kind fallback,
		  const char *columns, aq_msg *msg);

/* Print doc: one resource, or (is_list) an array of resources. */
void cli_fmt_print(FILE *out, const struct cli_fmt *f, const json_t *doc, bool is_list);

/* The value at path in doc ("a.b[2].c"), borrowed; NULL if absent. */
const json_t *cli_json_path(const json_t *doc, const char *path);

/* The text of a scalar as value() prints it, into buf (arrays of scalars
 * joined by ';', objects as compact JSON, null/absent as ""). */
void cli_json_text(const json_t *v, char *buf, size_t size);

/* Keep the items of array matching filter: space-separated terms (an "AND"
 * word is skipped) FIELD=VALUE (case-insensitive equality), FIELD!=VALUE,
 * FIELD:TEXT (contains); all must hold. A "name" value without '/' is matched
 * against the last part of the name. Returns a new array in *out. */
int cli_list_filter(const json_t *array, const char *filter, json_t **out, aq_msg *msg);

/* Sort array in place by comma-separated fields; ~FIELD descends. Numbers
 * (and numeric strings) compare as numbers. Stable. */
int cli_list_sort(json_t *array, const char *sort_by, aq_msg *msg);

#endif
