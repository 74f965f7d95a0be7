/* cli_labels: gcloud's --update-labels, --remove-labels and --clear-labels
 * of an update command.
 *
 * They do not name the new labels: those are the resource's current labels
 * (a GET before the PATCH) with the flags applied, in gcloud's order:
 * --clear-labels empties them, --update-labels adds or changes keys, then
 * --remove-labels drops keys (absent ones are ignored). The PATCH then sends
 * them whole with updateMask "labels". --clear-labels and --remove-labels
 * together are refused, as gcloud does.
 */
#ifndef AQ_CLI_LABELS_H
#define AQ_CLI_LABELS_H

#include <jansson.h>
#include <stdbool.h>

#include "api/api_error.h"
#include "cli/cli_args.h"

/* Whether a gives one of those flags. */
bool cli_labels_given(const struct cli_args *a);
/* The flags' combination is valid (nothing sent yet). AQ_EINVAL with msg. */
int cli_labels_check(const struct cli_args *a, aq_msg *msg);
/* The new labels from current (the resource's "labels", may be NULL): a new
 * object in *out. */
int cli_labels_apply(const struct cli_args *a, const json_t *current, json_t **out, aq_msg *msg);

#endif
