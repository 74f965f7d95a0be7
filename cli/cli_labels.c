/* cli_labels: the new labels of an update from the current ones (see
 * cli_labels.h). */
#include "cli/cli_labels.h"

#include <stdint.h>
#include <string.h>

#include "cli/cli_value.h"

bool cli_labels_given(const struct cli_args *a)
{
	int i;

	for (i = 0; i < a->nvals; i++)
		if (a->vals[i].flag->opts & CLI_O_LABELS)
			return true;
	return false;
}

int cli_labels_check(const struct cli_args *a, aq_msg *msg)
{
	if (cli_args_bool(a, "clear-labels") && cli_args_get(a, "remove-labels"))
		return aq_fail(msg, AQ_EINVAL, "--clear-labels and --remove-labels cannot be used together");
	return AQ_OK;
}

/* Apply every value of flag name (it may repeat) with fn. */
static int each_value(const struct cli_args *a, const char *name, json_t *labels,
		      void (*fn)(json_t *labels, const json_t *v), aq_msg *msg)
{
	json_t *v = NULL;
	int i, rc;

	for (i = 0; i < a->nvals; i++) {
		if (strcmp(a->vals[i].flag->name, name) != 0)
			continue;
		if ((rc = cli_value_json(a->vals[i].flag, a->vals[i].raw, &v, msg)) != AQ_OK)
			return rc;
		fn(labels, v);
		json_decref(v);
		v = NULL;
	}
	return AQ_OK;
}

static void update_keys(json_t *labels, const json_t *v)
{
	json_object_update(labels, (json_t *)(uintptr_t)v);
}

static void remove_keys(json_t *labels, const json_t *v)
{
	size_t i;

	for (i = 0; i < json_array_size(v); i++)
		json_object_del(labels, json_string_value(json_array_get(v, i)));
}

int cli_labels_apply(const struct cli_args *a, const json_t *current, json_t **out, aq_msg *msg)
{
	json_t *labels = json_is_object(current) && !cli_args_bool(a, "clear-labels")
				 ? json_deep_copy(current) : json_object();
	int rc;

	if ((rc = each_value(a, "update-labels", labels, update_keys, msg)) != AQ_OK ||
	    (rc = each_value(a, "remove-labels", labels, remove_keys, msg)) != AQ_OK) {
		json_decref(labels);
		return rc;
	}
	*out = labels;
	return AQ_OK;
}
