/* cli: the `aquifer` command, top level.
 *
 * cli_main() parses the command line against the command table (cli_cmd.h),
 * resolves settings (cli_config.h), runs the command and returns the process
 * exit status. Output goes to ctx->out (resources) and ctx->err (progress
 * lines, errors).
 *
 * Exit statuses are distinct per failure class, so scripts can tell them
 * apart: 2 the command line was wrong (nothing was sent), 3 the server
 * answered with an error (its status and message are on stderr), 4 the
 * server could not be reached, 1 anything else (a local file, a timeout).
 */
#ifndef AQ_CLI_H
#define AQ_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/cli_args.h"
#include "cli/cli_config.h"
#include "cli/cli_http.h"

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,
	CLI_EXIT_USAGE = 2,
	CLI_EXIT_API = 3,
	CLI_EXIT_NET = 4,
};

/* What a running command sees. */
struct cli_ctx {
	FILE *in;                             /* answers to a confirmation prompt */
	bool tty;                             /* in is a terminal: deletes ask first */
	FILE *out;
	FILE *err;
	char conf_path[4096];
	struct cli_conf file;                 /* the config file as loaded */
	const char *eff[CLI_CONF_COUNT];      /* effective settings, borrowed */
	struct cli_http http;
	char who[128];                        /* "aquifer.volumes.create", for messages */
};

int cli_main(int argc, char **argv);
/* cli_main with chosen streams (tests); stdin is not a terminal. */
int cli_run(int argc, char **argv, FILE *out, FILE *err);
/* cli_run where in stands for stdin and tty says whether it is a terminal
 * (a delete then asks "Do you want to continue (Y/n)?" first, as gcloud). */
int cli_run_in(int argc, char **argv, FILE *in, bool tty, FILE *out, FILE *err);

/* Whether s looks like an endpoint: "http://..." or "https://...". */
bool cli_endpoint_ok(const char *s);

/* Help, generated from the command table: the top level (group NULL), a
 * group (verb NULL), or one command. */
void cli_help_print(FILE *out, const char *group, const char *verb);
/* The bash completion script. */
void cli_completion_bash(FILE *out);

#endif
