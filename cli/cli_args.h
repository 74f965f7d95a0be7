/* cli_args: the command line of `aquifer`, parsed against the command table.
 *
 * cli_args_parse() finds the group and verb (flags may come before, between
 * or after them), checks every flag against what the command accepts, checks
 * each value (cli_value.h: units, enums, key=value dicts) and the required
 * flags. It stores
 * borrowed pointers into argv; argv must outlive the result.
 *
 * cli_args_request() then turns the resource flags into what goes on the
 * wire: a JSON body, an updateMask (exactly the flags given, in table order)
 * and extra query parameters.
 */
#ifndef AQ_CLI_ARGS_H
#define AQ_CLI_ARGS_H

#include <jansson.h>
#include <stdbool.h>

#include "api/api_error.h"
#include "cli/cli_buf.h"
#include "cli/cli_cmd.h"

#define CLI_ARGS_MAX_VALS 64
#define CLI_ARGS_MAX_POS 4

struct cli_val {
	const struct cli_flag *flag;
	const char *raw;            /* the value as typed; "true"/"false" for bools */
};

struct cli_args {
	const char *group;          /* as typed; NULL if none */
	const char *verb;
	const struct cli_cmd *cmd;  /* NULL when only a group (or nothing) was given */
	const char *pos[CLI_ARGS_MAX_POS];
	int npos;
	struct cli_val vals[CLI_ARGS_MAX_VALS];   /* resource and global flags, in order */
	int nvals;
	bool help;
	bool routes;                /* the hidden `aquifer __routes` */
};

/* Parse argv[1..argc-1]. AQ_OK, or AQ_EINVAL with a usage message in msg.
 * With --help, parsing stops checking required flags and positionals. An
 * unknown group or verb is an error, except when help was asked for. */
int cli_args_parse(struct cli_args *a, int argc, char **argv, aq_msg *msg);

/* The last value given for flag name (NULL if absent). */
const char *cli_args_get(const struct cli_args *a, const char *name);
/* Whether a boolean flag was given as true. */
bool cli_args_bool(const struct cli_args *a, const char *name);

/* The request parts from a's resource flags: *body (new object, {} if no
 * body flag), mask gets the comma-separated updateMask paths, query gets
 * "&name=value" pairs for CLI_O_QUERY flags (escaped). */
int cli_args_request(const struct cli_args *a, json_t **body, struct ut_buf *mask,
		     struct ut_buf *query, aq_msg *msg);

#endif
