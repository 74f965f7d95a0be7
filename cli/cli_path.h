/* cli_path: the parameters of a path template ({project}, {location},
 * {name}) and their expansion.
 *
 * A NAME may be a short ID (expanded with --project / --location) or a full
 * name, "projects/p/locations/l/storagePools/x": then its "projects/ID" and
 * "locations/ID" pairs set the project and the location, and its last ID is
 * the name.
 */
#ifndef AQ_CLI_PATH_H
#define AQ_CLI_PATH_H

#include "api/api_error.h"
#include "cli/cli_buf.h"

#define CLI_PATH_NO_LOCATION "no location: use --location, AQUIFER_LOCATION or 'aquifer config set location ID'"

/* The parameters a path template names; borrowed strings, or buf. */
struct cli_path_vars {
	const char *project;
	const char *location;
	const char *volume;          /* --volume of a snapshot command */
	const char *backup_vault;    /* --backup-vault of a backup command */
	const char *name;
	char buf[5][256];            /* storage when they come from a full name */
};

/* Fill v from the full name full. AQ_EINVAL with msg when it is not one. */
int cli_path_vars_from_name(struct cli_path_vars *v, const char *full, aq_msg *msg);

/* Append tmpl with v's values (escaped) to b; AQ_EINVAL with a hint saying
 * how to set a parameter that is unset. */
int cli_path_expand(struct ut_buf *b, const char *tmpl, const struct cli_path_vars *v, aq_msg *msg);

#endif
