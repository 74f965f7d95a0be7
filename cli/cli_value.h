/* cli_value: one flag's value as typed, checked and turned into what goes
 * on the wire, by the flag's type (enum cli_type in cli_cmd.h): strings,
 * booleans, integers, sizes and rates with units (cli_units.h), seconds,
 * enums and enum lists against the flag's choices, key=value dicts and
 * labels against its keys, networks, files. The parser (cli_args.h) checks
 * every value with it before any request; the request builder and the
 * label editor (cli_labels.h) convert with it. Pure: no I/O but
 * CLI_T_FILE's read of the file it names.
 */
#ifndef AQ_CLI_VALUE_H
#define AQ_CLI_VALUE_H

#include <jansson.h>
#include <stdbool.h>

#include "api/api_error.h"
#include "cli/cli_cmd.h"

/* Check raw against flag f and return its JSON form in *out (new
 * reference). AQ_OK, or AQ_EINVAL with a message naming --FLAG (or the
 * dict key) in msg and *out untouched. */
int cli_value_json(const struct cli_flag *f, const char *raw, json_t **out, aq_msg *msg);

/* A boolean as typed: true/false in any case, yes/no, on/off, 1/0.
 * AQ_OK with *v set, or AQ_EINVAL. */
int cli_value_bool(const char *raw, bool *v);

#endif
