/* cli_local: the commands that run without the server: config, auth and
 * completion. Each is a cli_local_fn named in the command table (cli_cmd.c)
 * and returns a process exit status (CLI_EXIT_*). */
#ifndef AQ_CLI_LOCAL_H
#define AQ_CLI_LOCAL_H

#include "cli/cli_cmd.h"

int cli_local_config_set(struct cli_ctx *ctx, const struct cli_args *a);
int cli_local_config_get(struct cli_ctx *ctx, const struct cli_args *a);
int cli_local_config_list(struct cli_ctx *ctx, const struct cli_args *a);
int cli_local_config_unset(struct cli_ctx *ctx, const struct cli_args *a);
int cli_local_auth_print_token(struct cli_ctx *ctx, const struct cli_args *a);
int cli_local_auth_login(struct cli_ctx *ctx, const struct cli_args *a);
int cli_local_completion_bash(struct cli_ctx *ctx, const struct cli_args *a);

#endif
