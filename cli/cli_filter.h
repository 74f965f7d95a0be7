/* cli_filter: client-side --filter and --sort-by of list commands, with
 * gcloud's syntax (`gcloud topic filters`).
 *
 * A filter is terms joined by AND (or a blank), OR, NOT (or a leading '-'),
 * and parentheses; AND and OR are not mixed without parentheses (gcloud
 * refuses that too). A term is FIELD OP VALUE, FIELD as in cli_project.h
 * (transforms allowed), VALUE bare or quoted:
 *   FIELD:VALUE   has: contains VALUE, any case; FIELD:* is "is set"
 *   FIELD=VALUE   equals, any case;  FIELD!=VALUE  does not equal
 *   FIELD<VALUE, <=, >, >=   numbers compare as numbers (capacityGib is a
 *                 string of digits: it counts as a number), else as text
 * A list field matches when one of its items does. A "name" VALUE without '/'
 * is compared with the last part of the name (gcloud's habit for names).
 *
 * --sort-by is FIELD[,FIELD...], ~FIELD descending. A key that is a column
 * of the table shown (its key, "name", or its header, "NAME") sorts by what
 * the column shows (name.basename() then); numbers compare as numbers.
 */
#ifndef AQ_CLI_FILTER_H
#define AQ_CLI_FILTER_H

#include <jansson.h>
#include <stdbool.h>

#include "api/api_error.h"
#include "cli/cli_project.h"

struct cli_filter;

/* Parse text; *out is a new filter (cli_filter_free). AQ_EINVAL with msg. */
int cli_filter_new(const char *text, struct cli_filter **out, aq_msg *msg);
void cli_filter_free(struct cli_filter *f);
bool cli_filter_match(const struct cli_filter *f, const json_t *item);
/* Every field the filter names exists (cli_field_check with what "--filter"). */
int cli_filter_check(const struct cli_filter *f, const struct api_field *table, const json_t *doc,
		     bool is_list, aq_msg *msg);
/* Parse filter and keep the items of array matching it: a new array in *out. */
int cli_list_filter(const json_t *array, const char *filter, json_t **out, aq_msg *msg);

#define CLI_SORT_MAX 8

struct cli_sort_key {
	struct cli_fmt_field fld;
	bool desc;
	bool column;                /* bound to a column shown: known */
};

struct cli_sort {
	int nkeys;
	struct cli_sort_key keys[CLI_SORT_MAX];
};

int cli_sort_parse(struct cli_sort *s, const char *text, aq_msg *msg);
/* Bind keys naming one of cols (by key path or header) to that column. */
void cli_sort_bind(struct cli_sort *s, const struct cli_fmt_field *cols, int ncols);
int cli_sort_check(const struct cli_sort *s, const struct api_field *table, const json_t *doc,
		   bool is_list, aq_msg *msg);
/* Sort array in place (stable). */
void cli_sort_apply(const struct cli_sort *s, json_t *array);
/* cli_sort_parse then cli_sort_apply. */
int cli_list_sort(json_t *array, const char *sort_by, aq_msg *msg);

#endif
