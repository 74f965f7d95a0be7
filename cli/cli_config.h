/* cli_config: the CLI's settings and where they come from.
 *
 * Keys: endpoint, token, project, location, ca_file (the CA that verifies an
 * https:// endpoint). Each resolves from, highest first: a command-line flag
 * (--endpoint, --project, --location, --ca-file), the environment (AQUIFER_ENDPOINT, AQUIFER_TOKEN,
 * AQUIFER_PROJECT, AQUIFER_LOCATION, AQUIFER_CA_FILE), the config file
 * $XDG_CONFIG_HOME/aquifer/config (default ~/.config/aquifer/config).
 *
 * The file holds "key = value" lines; '#' starts a comment. It is written
 * whole to a temporary file created mode 0600 and renamed over the old one;
 * its folder is created mode 0700.
 */
#ifndef AQ_CLI_CONFIG_H
#define AQ_CLI_CONFIG_H

#include <stddef.h>

#include "api/api_error.h"

enum cli_conf_key {
	CLI_CONF_ENDPOINT,
	CLI_CONF_TOKEN,
	CLI_CONF_PROJECT,
	CLI_CONF_LOCATION,
	CLI_CONF_CA_FILE,
	CLI_CONF_COUNT
};

#define CLI_CONF_DEFAULT_ENDPOINT "http://127.0.0.1:8080"

struct cli_conf {
	char *val[CLI_CONF_COUNT];   /* heap strings or NULL */
};

void cli_conf_init(struct cli_conf *c);
void cli_conf_cleanup(struct cli_conf *c);

/* Key by name ("project") or -1; name, environment variable, and the flag
 * that overrides it (NULL if none) by key. */
int cli_conf_key(const char *name);
const char *cli_conf_key_name(int key);
const char *cli_conf_key_env(int key);
const char *cli_conf_key_flag(int key);

/* The config file path into buf. AQ_EINVAL if neither XDG_CONFIG_HOME nor
 * HOME is set, AQ_ETOOBIG if it does not fit. */
int cli_conf_path(char *buf, size_t size, aq_msg *msg);

/* Load path into c (a missing file leaves c empty and is not an error). */
int cli_conf_load(struct cli_conf *c, const char *path, aq_msg *msg);
/* Write c to path (mode 0600, parent folder created 0700). */
int cli_conf_save(const struct cli_conf *c, const char *path, aq_msg *msg);
/* Replace (value NULL: remove) one key. AQ_ENOMEM on failure. */
int cli_conf_set(struct cli_conf *c, int key, const char *value);

#endif
