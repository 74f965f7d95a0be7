/* cli_local: config, auth and completion commands (see cli_local.h). They
 * touch only the config file and stdout. */
#include "cli/cli_local.h"

#include <string.h>

#include "cli/cli.h"

static int bad_key(struct cli_ctx *ctx, const char *key)
{
	fprintf(ctx->err, "ERROR: (%s) unknown key '%s' (known: endpoint, token, project, location, "
		"ca_file)\n", ctx->who, key);
	return CLI_EXIT_USAGE;
}

static int no_config(struct cli_ctx *ctx)
{
	if (ctx->conf_path[0])
		return CLI_EXIT_OK;
	fprintf(ctx->err, "ERROR: (%s) cannot find the config file: set HOME or XDG_CONFIG_HOME\n",
		ctx->who);
	return CLI_EXIT_FAIL;
}

/* Set (value) or remove (NULL) key in the file and save it. */
static int store(struct cli_ctx *ctx, int key, const char *value)
{
	aq_msg msg = { .text = "" };
	int rc;

	if ((rc = no_config(ctx)) != CLI_EXIT_OK)
		return rc;
	if (cli_conf_set(&ctx->file, key, value) != AQ_OK ||
	    cli_conf_save(&ctx->file, ctx->conf_path, &msg) != AQ_OK) {
		fprintf(ctx->err, "ERROR: (%s) %s\n", ctx->who, msg.text[0] ? msg.text : "out of memory");
		return CLI_EXIT_FAIL;
	}
	fprintf(ctx->err, "%s property [%s].\n", value ? "Updated" : "Unset", cli_conf_key_name(key));
	return CLI_EXIT_OK;
}

int cli_local_config_set(struct cli_ctx *ctx, const struct cli_args *a)
{
	int key = cli_conf_key(a->pos[0]);

	if (key < 0)
		return bad_key(ctx, a->pos[0]);
	if (key == CLI_CONF_ENDPOINT && !cli_endpoint_ok(a->pos[1])) {
		fprintf(ctx->err, "ERROR: (%s) endpoint must be an http:// or https:// URL\n", ctx->who);
		return CLI_EXIT_USAGE;
	}
	return store(ctx, key, a->pos[1]);
}

int cli_local_config_unset(struct cli_ctx *ctx, const struct cli_args *a)
{
	int key = cli_conf_key(a->pos[0]);

	if (key < 0)
		return bad_key(ctx, a->pos[0]);
	return store(ctx, key, NULL);
}

int cli_local_config_get(struct cli_ctx *ctx, const struct cli_args *a)
{
	int key = cli_conf_key(a->pos[0]);

	if (key < 0)
		return bad_key(ctx, a->pos[0]);
	if (ctx->eff[key] == NULL) {
		fprintf(ctx->err, "(unset)\n");
		return CLI_EXIT_OK;
	}
	fprintf(ctx->out, "%s\n", ctx->eff[key]);
	return CLI_EXIT_OK;
}

int cli_local_config_list(struct cli_ctx *ctx, const struct cli_args *a)
{
	int key;

	(void)a;
	fprintf(ctx->err, "# %s\n", ctx->conf_path[0] ? ctx->conf_path : "(no config file)");
	for (key = 0; key < CLI_CONF_COUNT; key++) {
		const char *v = ctx->file.val[key];
		if (v == NULL)
			continue;
		/* The token is a credential: show that it is set, not what it is. */
		fprintf(ctx->out, "%s = %s\n", cli_conf_key_name(key),
			key == CLI_CONF_TOKEN ? "********" : v);
	}
	return CLI_EXIT_OK;
}

int cli_local_auth_print_token(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *t = ctx->eff[CLI_CONF_TOKEN];

	(void)a;
	if (t == NULL || *t == '\0') {
		fprintf(ctx->err, "ERROR: (%s) no token: run 'aquifer auth login --token TOKEN' or set "
			"AQUIFER_TOKEN\n", ctx->who);
		return CLI_EXIT_FAIL;
	}
	fprintf(ctx->out, "%s\n", t);
	return CLI_EXIT_OK;
}

int cli_local_auth_login(struct cli_ctx *ctx, const struct cli_args *a)
{
	const char *t = cli_args_get(a, "token");
	char line[8192];

	/* --token=- reads it from stdin, keeping it out of the process list. */
	if (t && strcmp(t, "-") == 0) {
		t = fgets(line, sizeof(line), stdin);
		if (t)
			line[strcspn(line, "\r\n")] = '\0';
	}
	if (t == NULL || *t == '\0' || strpbrk(t, " \t\r\n")) {
		fprintf(ctx->err, "ERROR: (%s) --token must be a non-empty token without spaces\n",
			ctx->who);
		return CLI_EXIT_USAGE;
	}
	return store(ctx, CLI_CONF_TOKEN, t);
}

int cli_local_completion_bash(struct cli_ctx *ctx, const struct cli_args *a)
{
	(void)a;
	cli_completion_bash(ctx->out);
	return CLI_EXIT_OK;
}
