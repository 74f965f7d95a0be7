/* api_fields: Google's `fields` system parameter (partial responses).
 *
 * ?fields=name,state,mountOptions(export,protocol),tieringPolicy.tierAction
 * keeps only those members of a JSON answer. A selection is a comma list of
 * paths; a path is member names joined by '.' or '/'; a path may end in a
 * parenthesised sub-selection. Lists are selected through: `volumes.name`
 * keeps the name of every volume. Names the answer does not have select
 * nothing. The text comes from the query string: the parser is bounded
 * (length and depth) and fuzzed (fuzz/fuzz_api_fields.c).
 */
#ifndef AQ_API_FIELDS_H
#define AQ_API_FIELDS_H

#include <jansson.h>

#include "api/api_error.h"

#define API_FIELDS_MAX_LEN 2048
#define API_FIELDS_MAX_DEPTH 8

/* Parse spec into a selection tree (*tree: a new reference; an object whose
 * members are null for "all of it" or a sub-tree). AQ_EINVAL with a message
 * naming the position for a syntax error, an empty name or a spec over the
 * limits. */
int api_fields_parse(const char *spec, json_t **tree, aq_msg *msg);

/* The part of doc that tree selects: a new reference (NULL only when out of
 * memory). Arrays are selected element by element; scalars are kept. */
json_t *api_fields_apply(const json_t *tree, const json_t *doc);

#endif
