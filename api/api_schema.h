/* api_schema: resource field tables and the generic checks that use them.
 *
 * Each resource (api_pool.c, api_volume.c, ...) describes its JSON fields in
 * a const table: name, type, flags (required, output-only, immutable,
 * input-only) and, for enums, the allowed values. From that one table come:
 * request validation (unknown fields, wrong types, unknown enum values are
 * INVALID_ARGUMENT; output-only fields in a request are dropped, the way
 * Google ignores them), int64 normalisation to JSON strings, updateMask
 * parsing (camelCase and snake_case), and input-only stripping on output.
 */
#ifndef AQ_API_SCHEMA_H
#define AQ_API_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

enum api_ftype {
	API_T_STRING,
	API_T_INT64,    /* JSON string (or integer on input) holding an int64 */
	API_T_INT32,    /* JSON integer */
	API_T_DOUBLE,   /* JSON number */
	API_T_BOOL,
	API_T_ENUM,     /* JSON string, one of field->enums */
	API_T_ENUM_LIST,/* JSON array of enum strings */
	API_T_LABELS,   /* JSON object of string -> string */
	API_T_OBJECT,   /* nested object described by field->sub */
	API_T_OBJECT_LIST, /* array of objects described by field->sub */
	API_T_STRING_LIST,
};

enum api_fflag {
	API_F_REQUIRED = 1 << 0,  /* must be present on create */
	API_F_OUTPUT = 1 << 1,    /* output only: ignored in requests */
	API_F_IMMUTABLE = 1 << 2, /* settable on create, refused in an updateMask */
	API_F_INPUT = 1 << 3,     /* input only: never returned */
};

struct api_field {
	const char *name;                  /* camelCase JSON name */
	enum api_ftype type;
	unsigned flags;
	const char *const *enums;          /* NULL-terminated, for ENUM/ENUM_LIST */
	const struct api_field *sub;       /* {NULL}-terminated, for OBJECT(_LIST) */
	int64_t max_len;                   /* strings: max bytes; lists: max items; 0 = default */
};

/* Check a request body against a field table and return the normalised copy:
 * only known, non-output fields, int64 as strings. what names the resource in
 * messages ("storagePool"). creating: required fields must be present.
 * *out is a new reference on success. */
int api_schema_check(const struct api_field *table, const json_t *in, bool creating,
		     const char *what, json_t **out, aq_msg *msg);

/* One updateMask path, resolved. */
struct api_mask_path {
	char camel[128];                   /* "tieringPolicy.coolingThresholdDays" */
	const struct api_field *field;     /* the top-level field */
};

#define API_MASK_MAX 32

/* Parse "a,b_c,d.e" against table. AQ_EINVAL for an empty mask, an unknown
 * path, or an output-only field; immutable fields are refused with a message
 * naming them. "*" means every mutable field. */
int api_mask_parse(const struct api_field *table, const char *mask, struct api_mask_path *paths,
		   int *npaths, aq_msg *msg);

/* Apply a parsed mask: for each path, copy the value at that path in patch
 * (already normalised) into doc, or remove it from doc when patch lacks it. */
int api_mask_apply(json_t *doc, const json_t *patch, const struct api_mask_path *paths,
		   int npaths);

/* The top-level fields the mask names that doc holds after api_mask_apply,
 * as a new object sharing doc's values (NULL only when out of memory): what
 * a PATCH itself sets, so that a check of what is supported judges the
 * request, not what an older document stored. */
json_t *api_mask_given(const json_t *doc, const struct api_mask_path *paths, int npaths);

/* A PATCH of old: *doc a copy of old with the mask applied (api_mask_apply)
 * and, when given is not NULL, *given what the mask sets (api_mask_given);
 * new references, AQ_OK or AQ_ENOMEM (then both NULL). */
int api_mask_patch(const json_t *old, const json_t *patch, const struct api_mask_path *paths, int npaths,
		   json_t **doc, json_t **given);

/* Remove input-only fields (recursively) before a document leaves the server. */
void api_schema_strip_input(const struct api_field *table, json_t *doc);

/* Find a top-level field by camelCase name. */
const struct api_field *api_schema_find(const struct api_field *table, const char *name);

/* JSON helpers for documents that went through api_schema_check. */
int64_t api_json_int64(const json_t *doc, const char *name, int64_t dflt);
double api_json_double(const json_t *doc, const char *name, double dflt);
bool api_json_bool(const json_t *doc, const char *name, bool dflt);
const char *api_json_str(const json_t *doc, const char *name, const char *dflt);
/* Set an int64 field as a JSON string. */
void api_json_set_int64(json_t *doc, const char *name, int64_t v);

#endif
