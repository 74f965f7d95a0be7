/* api_schema: generic validation, normalisation and updateMask handling over
 * the field tables described in api_schema.h. */
#include "api/api_schema.h"

#include "api/api_math.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API_STRING_MAX 4096
#define API_LIST_MAX 64
#define API_DEPTH_MAX 4

/* jansson's object iterators take a non-const json_t * even to read; this
 * is the one place a const document is handed to them. */
static json_t *api_unconst(const json_t *v)
{
	return (json_t *)(uintptr_t)v;
}

const struct api_field *api_schema_find(const struct api_field *table, const char *name)
{
	for (const struct api_field *f = table; f && f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

static bool api_enum_ok(const struct api_field *f, const char *v)
{
	for (const char *const *e = f->enums; e && *e; e++)
		if (strcmp(*e, v) == 0)
			return true;
	return false;
}

/* A proto enum's table lists its values in proto order from its
 * X_UNSPECIFIED = 0, so that index and number agree; an Aquifer-only enum
 * has no such first value and takes names only. */
static bool api_enum_proto(const struct api_field *f)
{
	const char *z = f->enums ? f->enums[0] : NULL;
	size_t n = z ? strlen(z) : 0;

	return n > 12 && strcmp(z + n - 12, "_UNSPECIFIED") == 0;
}

static int api_enum_fail(const struct api_field *f, const char *where, const char *v, aq_msg *msg)
{
	char allowed[400] = "";
	size_t off = 0;

	for (const char *const *e = f->enums + (api_enum_proto(f) ? 1 : 0); e && *e && off < sizeof(allowed); e++)
		off += (size_t)snprintf(allowed + off, sizeof(allowed) - off, "%s%s",
					off ? ", " : "", *e);
	return aq_fail(msg, AQ_EINVAL, "invalid value \"%.64s\" for %s; allowed: %s", v, where, allowed);
}

/* One enum value as proto3 JSON gives it: the name, or the number of a
 * proto enum. *name is the canonical name; *unspecified when it is the
 * X_UNSPECIFIED value, which means "not set". */
static int api_enum_value(const struct api_field *f, const json_t *v, const char *where, const char **name,
			  bool *unspecified, aq_msg *msg)
{
	*unspecified = false;
	if (json_is_integer(v) && api_enum_proto(f)) {
		json_int_t n = json_integer_value(v), count = 0;
		char num[32];

		while (f->enums[count])
			count++;
		if (n < 0 || n >= count) {
			snprintf(num, sizeof(num), "%lld", (long long)n);
			return api_enum_fail(f, where, num, msg);
		}
		*name = f->enums[n];
	} else if (json_is_string(v)) {
		*name = json_string_value(v);
		if (!api_enum_ok(f, *name))
			return api_enum_fail(f, where, *name, msg);
	} else {
		return aq_fail(msg, AQ_EINVAL, "%s must be an enum value (its name, or its number)", where);
	}
	*unspecified = api_enum_proto(f) && strcmp(*name, f->enums[0]) == 0;
	return AQ_OK;
}

static int api_check_obj(const struct api_field *table, const json_t *in, bool creating,
			 const char *where, int depth, json_t **out, aq_msg *msg);
static void api_camel(const char *in, size_t n, char *out, size_t cap);

/* Check one value of field f at path where; *out gets the normalised value. */
static int api_check_value(const struct api_field *f, const json_t *v, bool creating,
			   const char *where, int depth, json_t **out, aq_msg *msg)
{
	size_t maxlen = f->max_len > 0 ? (size_t)f->max_len : 0;

	switch (f->type) {
	case API_T_STRING:
		if (!json_is_string(v))
			return aq_fail(msg, AQ_EINVAL, "%s must be a string", where);
		if (json_string_length(v) > (maxlen ? maxlen : API_STRING_MAX))
			return aq_fail(msg, AQ_EINVAL, "%s is longer than %zu bytes", where,
				       maxlen ? maxlen : (size_t)API_STRING_MAX);
		*out = json_deep_copy(v);
		return AQ_OK;
	case API_T_INT64: {
		long long n;
		char *end;
		char buf[32];

		if (json_is_integer(v)) {
			n = json_integer_value(v);
		} else if (json_is_string(v)) {
			const char *s = json_string_value(v);

			errno = 0;
			n = strtoll(s, &end, 10);
			if (!*s || *end || errno)
				return aq_fail(msg, AQ_EINVAL, "%s must be an integer (int64 as a JSON string), got \"%.32s\"", where, s);
		} else {
			return aq_fail(msg, AQ_EINVAL, "%s must be an integer (int64 as a JSON string)", where);
		}
		snprintf(buf, sizeof(buf), "%lld", n);
		*out = json_string(buf);
		return AQ_OK;
	}
	case API_T_INT32: {
		/* proto3 JSON: a number, or a string holding one */
		long long n = 0;
		char *end;

		if (json_is_string(v)) {
			const char *s = json_string_value(v);

			errno = 0;
			n = strtoll(s, &end, 10);
			if (!*s || *end || errno)
				n = (long long)INT32_MAX + 1;
		} else if (json_is_integer(v)) {
			n = json_integer_value(v);
		} else {
			n = (long long)INT32_MAX + 1;
		}
		if (n > INT32_MAX || n < INT32_MIN)
			return aq_fail(msg, AQ_EINVAL, "%s must be a 32-bit integer", where);
		*out = json_integer(n);
		return AQ_OK;
	}
	case API_T_DOUBLE: {
		double d;
		char *end;

		if (json_is_number(v)) {
			d = json_number_value(v);
		} else if (json_is_string(v) && *json_string_value(v)) {
			/* proto3 JSON: a number may come as a string */
			d = strtod(json_string_value(v), &end);
			if (*end || d != d)
				return aq_fail(msg, AQ_EINVAL, "%s must be a number", where);
		} else {
			return aq_fail(msg, AQ_EINVAL, "%s must be a number", where);
		}
		*out = json_real(d);
		return AQ_OK;
	}
	case API_T_BOOL:
		if (!json_is_boolean(v))
			return aq_fail(msg, AQ_EINVAL, "%s must be true or false", where);
		*out = json_deep_copy(v);
		return AQ_OK;
	case API_T_ENUM: {
		const char *name;
		bool unset;
		int rc;

		if ((rc = api_enum_value(f, v, where, &name, &unset, msg)) != AQ_OK)
			return rc;
		/* X_UNSPECIFIED is the proto default: as if the field were left out */
		*out = unset ? NULL : json_string(name);
		return unset || *out ? AQ_OK : AQ_ENOMEM;
	}
	case API_T_ENUM_LIST:
	case API_T_STRING_LIST:
	case API_T_OBJECT_LIST: {
		json_t *arr, *item;
		size_t i;

		if (!json_is_array(v))
			return aq_fail(msg, AQ_EINVAL, "%s must be a list", where);
		if (json_array_size(v) > (maxlen ? maxlen : API_LIST_MAX))
			return aq_fail(msg, AQ_EINVAL, "%s has more than %zu items", where,
				       maxlen ? maxlen : (size_t)API_LIST_MAX);
		if (!(arr = json_array()))
			return AQ_ENOMEM;
		json_array_foreach(v, i, item) {
			char sub[160];
			json_t *o = NULL;
			int rc;

			snprintf(sub, sizeof(sub), "%s[%zu]", where, i);
			if (f->type == API_T_OBJECT_LIST) {
				rc = api_check_obj(f->sub, item, creating, sub, depth + 1, &o, msg);
			} else if (f->type == API_T_ENUM_LIST) {
				const char *name;
				bool unset;

				/* an unspecified item in a list means nothing: refused */
				if ((rc = api_enum_value(f, item, sub, &name, &unset, msg)) == AQ_OK && unset)
					rc = api_enum_fail(f, sub, name, msg);
				if (rc == AQ_OK)
					rc = (o = json_string(name)) ? AQ_OK : AQ_ENOMEM;
			} else if (!json_is_string(item))
				rc = aq_fail(msg, AQ_EINVAL, "%s must be a string", sub);
			else if (json_string_length(item) > API_STRING_MAX)
				rc = aq_fail(msg, AQ_EINVAL, "%s is too long", sub);
			else
				rc = (o = json_copy(item)) ? AQ_OK : AQ_ENOMEM;
			if (rc != AQ_OK) {
				json_decref(arr);
				return rc;
			}
			json_array_append_new(arr, o);
		}
		*out = arr;
		return AQ_OK;
	}
	case API_T_LABELS: {
		const char *k;
		json_t *lv;

		if (!json_is_object(v))
			return aq_fail(msg, AQ_EINVAL, "%s must be an object of string values", where);
		if (json_object_size(v) > 64)
			return aq_fail(msg, AQ_EINVAL, "%s has more than 64 entries", where);
		json_object_foreach(api_unconst(v), k, lv) {
			int rc;

			if (!json_is_string(lv))
				return aq_fail(msg, AQ_EINVAL, "%s: the value of label \"%.64s\" must be a string", where, k);
			if ((rc = api_label_check(k, json_string_value(lv), where, msg)) != AQ_OK)
				return rc;
		}
		*out = json_deep_copy(v);
		return AQ_OK;
	}
	case API_T_OBJECT:
		return api_check_obj(f->sub, v, creating, where, depth + 1, out, msg);
	}
	return AQ_EINTERNAL;
}

static int api_check_obj(const struct api_field *table, const json_t *in, bool creating,
			 const char *where, int depth, json_t **out, aq_msg *msg)
{
	json_t *res = NULL, *v;
	const char *k;
	int rc = AQ_OK;

	if (depth > API_DEPTH_MAX)
		return aq_fail(msg, AQ_EINVAL, "%s nests too deeply", where);
	if (!json_is_object(in))
		return aq_fail(msg, AQ_EINVAL, "%s must be a JSON object", where);
	if (!(res = json_object()))
		return AQ_ENOMEM;
	json_object_foreach(api_unconst(in), k, v) {
		const struct api_field *f = api_schema_find(table, k);
		char path[160], camel[128];
		json_t *o = NULL;

		/* proto3 JSON: the original proto field name ("capacity_gib") too */
		if (!f && strchr(k, '_') && strlen(k) < sizeof(camel)) {
			api_camel(k, strlen(k), camel, sizeof(camel));
			if ((f = api_schema_find(table, camel)) && json_object_get(in, f->name)) {
				snprintf(path, sizeof(path), "%s.%s", where, f->name);
				rc = aq_fail_field(msg, AQ_EINVAL, path, "Invalid JSON payload received. %s is given twice (as \"%s\" and \"%.64s\")",
						   path, f->name, k);
				goto out;
			}
		}
		if (!f) {
			snprintf(path, sizeof(path), "%s.%.64s", where, k);
			rc = aq_fail_field(msg, AQ_EINVAL, path, "Invalid JSON payload received. Unknown name \"%.64s\" at '%s'", k, where);
			goto out;
		}
		if (f->flags & API_F_OUTPUT)
			continue;
		if (json_is_null(v))
			continue;
		snprintf(path, sizeof(path), "%s.%s", where, f->name);
		if ((rc = api_check_value(f, v, creating, path, depth, &o, msg)) != AQ_OK) {
			/* the innermost path that failed is the violation's field */
			if (msg && !msg->field[0])
				snprintf(msg->field, sizeof(msg->field), "%s", path);
			goto out;
		}
		if (o)
			json_object_set_new(res, f->name, o);
	}
	if (creating)
		for (const struct api_field *f = table; f->name; f++)
			if ((f->flags & API_F_REQUIRED) && !json_object_get(res, f->name)) {
				char path[160];

				snprintf(path, sizeof(path), "%s.%s", where, f->name);
				rc = aq_fail_field(msg, AQ_EINVAL, path, "%s is required", path);
				goto out;
			}
	*out = res;
	res = NULL;
out:
	json_decref(res);
	return rc;
}

int api_schema_check(const struct api_field *table, const json_t *in, bool creating,
		     const char *what, json_t **out, aq_msg *msg)
{
	return api_check_obj(table, in, creating, what, 0, out, msg);
}

/* snake_case -> camelCase, in place into out. */
static void api_camel(const char *in, size_t n, char *out, size_t cap)
{
	size_t j = 0;
	bool up = false;

	for (size_t i = 0; i < n && j + 1 < cap; i++) {
		if (in[i] == '_') {
			up = true;
			continue;
		}
		out[j++] = up && in[i] >= 'a' && in[i] <= 'z' ? (char)(in[i] - 'a' + 'A') : in[i];
		up = false;
	}
	out[j] = '\0';
}

int api_mask_parse(const struct api_field *table, const char *mask, struct api_mask_path *paths,
		   int *npaths, aq_msg *msg)
{
	const char *s = mask;
	int n = 0;

	if (!mask || !*mask)
		return aq_fail_field(msg, AQ_EINVAL, "updateMask", "updateMask is required: name the fields to change, e.g. updateMask=capacityGib,description");
	if (strcmp(mask, "*") == 0) {
		for (const struct api_field *f = table; f->name && n < API_MASK_MAX; f++)
			if (!(f->flags & (API_F_OUTPUT | API_F_IMMUTABLE))) {
				snprintf(paths[n].camel, sizeof(paths[n].camel), "%s", f->name);
				paths[n++].field = f;
			}
		*npaths = n;
		return AQ_OK;
	}
	while (*s) {
		size_t len = strcspn(s, ",");
		char top[128], *dot;
		const struct api_field *f, *sub;

		while (len && *s == ' ')
			s++, len--;
		if (n == API_MASK_MAX)
			return aq_fail_field(msg, AQ_EINVAL, "updateMask", "updateMask has more than %d paths", API_MASK_MAX);
		if (len == 0 || len >= sizeof(paths[n].camel))
			return aq_fail_field(msg, AQ_EINVAL, "updateMask", "updateMask has an empty or overlong path");
		api_camel(s, len, paths[n].camel, sizeof(paths[n].camel));
		snprintf(top, sizeof(top), "%s", paths[n].camel);
		if ((dot = strchr(top, '.')))
			*dot = '\0';
		f = api_schema_find(table, top);
		if (!f)
			return aq_fail_field(msg, AQ_EINVAL, "updateMask", "updateMask path \"%.*s\" is not a field of this resource", (int)len, s);
		if (f->flags & API_F_OUTPUT)
			return aq_fail_field(msg, AQ_EINVAL, "updateMask", "updateMask path \"%s\" is output only and cannot be updated", top);
		if (f->flags & API_F_IMMUTABLE)
			return aq_fail_field(msg, AQ_EINVAL, "updateMask", "field \"%s\" is immutable and cannot be updated; create a new resource instead", top);
		if (dot) {
			if (f->type != API_T_OBJECT || !(sub = api_schema_find(f->sub, dot + 1)))
				return aq_fail_field(msg, AQ_EINVAL, "updateMask", "updateMask path \"%s\" is not a field of this resource", paths[n].camel);
			if (sub->flags & (API_F_OUTPUT | API_F_IMMUTABLE))
				return aq_fail_field(msg, AQ_EINVAL, "updateMask", "updateMask path \"%s\" cannot be updated", paths[n].camel);
		}
		paths[n++].field = f;
		s += len;
		if (*s == ',')
			s++;
	}
	*npaths = n;
	return AQ_OK;
}

int api_mask_apply(json_t *doc, const json_t *patch, const struct api_mask_path *paths,
		   int npaths)
{
	for (int i = 0; i < npaths; i++) {
		char top[128], *dot;
		json_t *pv, *dv;

		snprintf(top, sizeof(top), "%s", paths[i].camel);
		dot = strchr(top, '.');
		if (dot)
			*dot++ = '\0';
		pv = json_object_get(patch, top);
		if (!dot) {
			if (pv)
				json_object_set(doc, top, pv);
			else
				json_object_del(doc, top);
			continue;
		}
		dv = json_object_get(doc, top);
		if (!dv) {
			dv = json_object();
			if (!dv)
				return AQ_ENOMEM;
			json_object_set_new(doc, top, dv);
		}
		pv = pv ? json_object_get(pv, dot) : NULL;
		if (pv)
			json_object_set(dv, dot, pv);
		else
			json_object_del(dv, dot);
	}
	return AQ_OK;
}

json_t *api_mask_given(const json_t *doc, const struct api_mask_path *paths, int npaths)
{
	json_t *given = json_object();

	for (int i = 0; given && i < npaths; i++) {
		json_t *v = json_object_get(doc, paths[i].field->name);

		if (v)
			json_object_set(given, paths[i].field->name, v);
	}
	return given;
}

int api_mask_patch(const json_t *old, const json_t *patch, const struct api_mask_path *paths, int npaths,
		   json_t **doc, json_t **given)
{
	json_t *d = json_deep_copy(old), *g = NULL;

	if (!d || api_mask_apply(d, patch, paths, npaths) != AQ_OK || (given && !(g = api_mask_given(d, paths, npaths)))) {
		json_decref(d);
		*doc = NULL;
		if (given)
			*given = NULL;
		return AQ_ENOMEM;
	}
	*doc = d;
	if (given)
		*given = g;
	return AQ_OK;
}

void api_schema_strip_input(const struct api_field *table, json_t *doc)
{
	for (const struct api_field *f = table; f && f->name; f++) {
		json_t *v = json_object_get(doc, f->name);

		if (!v)
			continue;
		if (f->flags & API_F_INPUT)
			json_object_del(doc, f->name);
		else if (f->type == API_T_OBJECT)
			api_schema_strip_input(f->sub, v);
	}
}

int64_t api_json_int64(const json_t *doc, const char *name, int64_t dflt)
{
	json_t *v = json_object_get(doc, name);

	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	if (json_is_integer(v))
		return json_integer_value(v);
	return dflt;
}

double api_json_double(const json_t *doc, const char *name, double dflt)
{
	json_t *v = json_object_get(doc, name);

	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_string(v))
		return strtod(json_string_value(v), NULL);
	return dflt;
}

bool api_json_bool(const json_t *doc, const char *name, bool dflt)
{
	json_t *v = json_object_get(doc, name);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

const char *api_json_str(const json_t *doc, const char *name, const char *dflt)
{
	json_t *v = json_object_get(doc, name);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

void api_json_set_int64(json_t *doc, const char *name, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	json_object_set_new(doc, name, json_string(buf));
}
