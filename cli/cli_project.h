/* cli_project: the fields --format, --filter and --sort-by name, as gcloud
 * spells them, and what they pick out of a resource.
 *
 * A FIELD is a key path into the resource, "capacityGib", "metadata.verb",
 * "mountOptions[0].exportFull", optionally followed by one transform:
 *   .basename()        the last '/'-separated part
 *   .location()        the ID after "locations/" in a resource name
 *   .date([FORMAT])    an RFC 3339 time as strftime FORMAT in the local time
 *                      zone (TZ), default "%Y-%m-%dT%H:%M:%S", as gcloud's date()
 * and, in --format, by attributes: ":label=HEADER" (gcloud's) or ":HEADER".
 * An unknown transform or attribute is an error, never an empty column.
 *
 * Whether a field exists is checked against the resource's field table
 * (api/api_resource.h, and cli_operation_fields for long-running
 * operations), before any request; resources without a table are checked
 * against what the server answered.
 */
#ifndef AQ_CLI_PROJECT_H
#define AQ_CLI_PROJECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/api_error.h"
#include "api/api_schema.h"

enum cli_fmt_xform {
	CLI_XF_NONE,
	CLI_XF_BASENAME,   /* ".basename()" */
	CLI_XF_LOCATION,   /* ".location()" */
	CLI_XF_DATE,       /* ".date()", ".date(FORMAT)", ".date(format=FORMAT)" */
};

struct cli_fmt_field {
	char path[128];             /* the key path, without the transform */
	char label[64];             /* table header: given, or from the key ("EXPORT_FULL") */
	bool labelled;              /* the label was given */
	enum cli_fmt_xform xform;
	char arg[64];               /* .date(FORMAT): FORMAT ("" = the default) */
};

/* google.longrunning.Operation, for what --async prints. */
extern const struct api_field cli_operation_fields[];

/* Parse one field "KEY[.transform()][:label=X]" of len bytes at s (blanks
 * around it are dropped). attrs: whether ":..." attributes are allowed
 * (--format) or not (--filter, --sort-by). AQ_EINVAL with msg naming what is
 * wrong. */
int cli_field_parse(struct cli_fmt_field *fld, const char *s, size_t len, bool attrs, aq_msg *msg);

/* The value at path in doc ("a.b[2].c"), borrowed; NULL if absent. */
const json_t *cli_json_path(const json_t *doc, const char *path);

/* The text of a value as value() prints it, into buf (arrays of scalars
 * joined by ';', objects as compact JSON, null/absent as ""). */
void cli_json_text(const json_t *v, char *buf, size_t size);

/* The text of field fld of item, its transform applied. */
void cli_field_text(const json_t *item, const struct cli_fmt_field *fld, char *buf, size_t size);

/* The value of field fld of item, its transform applied (a string then):
 * a new reference, or NULL when absent. */
json_t *cli_field_value(const json_t *item, const struct cli_fmt_field *fld);

/* Whether path names a field of table: each key is a field (of the nested
 * table for objects), [N] only after a list, any key below labels or an
 * object without a table (metadata). */
bool cli_schema_has(const struct api_field *table, const char *path);

/* Whether path is present in doc (is_list: in at least one of its items). */
bool cli_data_has(const json_t *doc, bool is_list, const char *path);

/* Check a field that names no field: AQ_EINVAL with "unknown field 'P' in
 * WHAT" unless table has it (table given) or, without a table, doc has it
 * (doc NULL: not known yet, passes). */
int cli_field_check(const struct cli_fmt_field *fld, const char *what, const struct api_field *table,
		    const json_t *doc, bool is_list, aq_msg *msg);

/* A copy of item with only the given fields, each at its key path (the
 * transformed value for a field with a transform), as gcloud's json(...) and
 * yaml(...) projections. New reference. */
json_t *cli_project(const json_t *item, const struct cli_fmt_field *fields, int nfields);

#endif
