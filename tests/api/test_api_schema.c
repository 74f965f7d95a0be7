/* Unit tests for api/api_schema.c: request validation and normalisation over
 * field tables, updateMask parsing and application. A local table exercises
 * every field type; the real volume table checks the snake_case mask rule. */
#include "api/api_resource.h"
#include "api/api_schema.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

static const char *const t_colors[] = { "RED", "GREEN", NULL };
/* a proto enum: proto order from its X_UNSPECIFIED = 0 */
static const char *const t_shapes[] = { "SHAPE_UNSPECIFIED", "ROUND", "SQUARE", NULL };

/* Nested deep enough to pass the depth limit (4). */
static const struct api_field t_l6[] = {
	{ "x", API_T_INT32, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};
static const struct api_field t_l5[] = {
	{ "x", API_T_INT32, 0, NULL, NULL, 0 },
	{ "d", API_T_OBJECT, 0, NULL, t_l6, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};
static const struct api_field t_l4[] = {
	{ "x", API_T_INT32, 0, NULL, NULL, 0 },
	{ "d", API_T_OBJECT, 0, NULL, t_l5, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};
static const struct api_field t_l3[] = {
	{ "d", API_T_OBJECT, 0, NULL, t_l4, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};
static const struct api_field t_l2[] = {
	{ "d", API_T_OBJECT, 0, NULL, t_l3, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field t_sub[] = {
	{ "a", API_T_STRING, 0, NULL, NULL, 0 },
	{ "b", API_T_INT64, 0, NULL, NULL, 0 },
	{ "req", API_T_STRING, API_F_REQUIRED, NULL, NULL, 0 },
	{ "out", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "imm", API_T_STRING, API_F_IMMUTABLE, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct api_field t_fields[] = {
	{ "str", API_T_STRING, 0, NULL, NULL, 0 },
	{ "short", API_T_STRING, 0, NULL, NULL, 5 },
	{ "i64", API_T_INT64, 0, NULL, NULL, 0 },
	{ "i32", API_T_INT32, 0, NULL, NULL, 0 },
	{ "dbl", API_T_DOUBLE, 0, NULL, NULL, 0 },
	{ "flag", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "color", API_T_ENUM, 0, t_colors, NULL, 0 },
	{ "colors", API_T_ENUM_LIST, 0, t_colors, NULL, 3 },
	{ "shape", API_T_ENUM, 0, t_shapes, NULL, 0 },
	{ "shapes", API_T_ENUM_LIST, 0, t_shapes, NULL, 3 },
	{ "twoWords", API_T_STRING, 0, NULL, NULL, 0 },
	{ "labels", API_T_LABELS, 0, NULL, NULL, 0 },
	{ "obj", API_T_OBJECT, 0, NULL, t_sub, 0 },
	{ "objs", API_T_OBJECT_LIST, 0, NULL, t_sub, 2 },
	{ "strs", API_T_STRING_LIST, 0, NULL, NULL, 0 },
	{ "deep", API_T_OBJECT, 0, NULL, t_l2, 0 },
	{ "must", API_T_STRING, API_F_REQUIRED, NULL, NULL, 0 },
	{ "out", API_T_STRING, API_F_OUTPUT, NULL, NULL, 0 },
	{ "imm", API_T_STRING, API_F_IMMUTABLE, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* Check text (a JSON object) with creating=false; returns rc, *out on success. */
static int check_json(const char *text, bool creating, json_t **out, aq_msg *msg)
{
	json_error_t jerr;
	json_t *in = json_loads(text, JSON_DECODE_ANY, &jerr), *res = NULL;
	int rc;

	ck_assert_msg(in != NULL, "bad test JSON %s: %s", text, jerr.text);
	rc = api_schema_check(t_fields, in, creating, "thing", &res, msg);
	json_decref(in);
	if (out)
		*out = res;
	else
		json_decref(res);
	return rc;
}

static void ok(const char *text)
{
	aq_msg msg = { .text = { 0 } };
	int rc = check_json(text, false, NULL, &msg);

	ck_assert_msg(rc == AQ_OK, "%s: rc %d (%s)", text, rc, msg.text);
}

static void refused(const char *text, const char *needle)
{
	aq_msg msg = { .text = { 0 } };
	json_t *out = (json_t *)1;
	int rc = check_json(text, false, &out, &msg);

	ck_assert_msg(rc == AQ_EINVAL, "%s: rc %d, want AQ_EINVAL", text, rc);
	ck_assert_msg(out == (json_t *)1 || out == NULL, "%s: output published on failure", text);
	if (needle)
		ck_assert_msg(strstr(msg.text, needle) != NULL, "%s: message \"%s\" lacks \"%s\"",
			      text, msg.text, needle);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

START_TEST(test_unknown_and_output)
{
	aq_msg msg = { .text = { 0 } };
	json_t *out = NULL;

	refused("{\"nosuch\": 1}", "Unknown name \"nosuch\"");
	refused("{\"obj\": {\"nosuch\": 1}}", "thing.obj");
	ck_assert_int_eq(check_json("{\"out\": \"x\", \"str\": \"y\", \"obj\": {\"out\": 1}}", false,
				    &out, &msg),
			 AQ_OK);
	ck_assert_ptr_null(json_object_get(out, "out"));
	ck_assert_str_eq(json_string_value(json_object_get(out, "str")), "y");
	ck_assert_ptr_null(json_object_get(json_object_get(out, "obj"), "out"));
	json_decref(out);
	/* an output-only field is dropped whatever its type */
	ok("{\"out\": [1, 2, {}]}");
	/* null means absent */
	ck_assert_int_eq(check_json("{\"str\": null}", false, &out, &msg), AQ_OK);
	ck_assert_int_eq((int)json_object_size(out), 0);
	json_decref(out);
	refused("[]", "must be a JSON object");
	refused("\"x\"", "must be a JSON object");
}
END_TEST

START_TEST(test_string)
{
	char *s4096 = repeat('a', 4096), *s4097 = repeat('a', 4097);
	char buf[5000];

	ok("{\"str\": \"\"}");
	refused("{\"str\": 1}", "thing.str must be a string");
	refused("{\"str\": true}", "must be a string");
	refused("{\"str\": [\"a\"]}", "must be a string");
	refused("{\"str\": {}}", "must be a string");
	ok("{\"short\": \"abcde\"}");
	refused("{\"short\": \"abcdef\"}", "longer than 5 bytes");
	snprintf(buf, sizeof(buf), "{\"str\": \"%s\"}", s4096);
	ok(buf);
	snprintf(buf, sizeof(buf), "{\"str\": \"%s\"}", s4097);
	refused(buf, "longer than 4096");
	free(s4096);
	free(s4097);
}
END_TEST

START_TEST(test_int64)
{
	aq_msg msg = { .text = { 0 } };
	json_t *out = NULL;

	ck_assert_int_eq(check_json("{\"i64\": 42}", false, &out, &msg), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(out, "i64")), "42");
	json_decref(out);
	ck_assert_int_eq(check_json("{\"i64\": \"9223372036854775807\"}", false, &out, &msg), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(out, "i64")), "9223372036854775807");
	json_decref(out);
	ck_assert_int_eq(check_json("{\"i64\": \"-9223372036854775808\"}", false, &out, &msg), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(out, "i64")), "-9223372036854775808");
	json_decref(out);
	/* normalised: leading zeros go */
	ck_assert_int_eq(check_json("{\"i64\": \"007\"}", false, &out, &msg), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(out, "i64")), "7");
	json_decref(out);
	refused("{\"i64\": \"9223372036854775808\"}", "must be an integer");
	refused("{\"i64\": \"-9223372036854775809\"}", "must be an integer");
	refused("{\"i64\": \"\"}", "must be an integer");
	refused("{\"i64\": \"12a\"}", "must be an integer");
	refused("{\"i64\": \"1.5\"}", "must be an integer");
	refused("{\"i64\": \"1e3\"}", "must be an integer");
	refused("{\"i64\": \"0x10\"}", "must be an integer");
	refused("{\"i64\": 1.5}", "must be an integer");
	refused("{\"i64\": true}", "must be an integer");
	refused("{\"i64\": [1]}", "must be an integer");
	/* nested int64 normalised too */
	ck_assert_int_eq(check_json("{\"obj\": {\"b\": 5}}", false, &out, &msg), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(out, "obj"), "b")), "5");
	json_decref(out);
}
END_TEST

START_TEST(test_int32_double_bool)
{
	aq_msg msg = { .text = { 0 } };
	json_t *out = NULL;

	ok("{\"i32\": 2147483647}");
	ok("{\"i32\": -2147483648}");
	refused("{\"i32\": 2147483648}", "32-bit integer");
	refused("{\"i32\": -2147483649}", "32-bit integer");
	ok("{\"i32\": \"5\"}"); /* proto3 JSON: a number may come as a string */
	refused("{\"i32\": \"5x\"}", "32-bit integer");
	refused("{\"i32\": 1.0}", "32-bit integer");
	ck_assert_int_eq(check_json("{\"i32\": 7}", false, &out, &msg), AQ_OK);
	ck_assert(json_is_integer(json_object_get(out, "i32")));
	json_decref(out);

	ck_assert_int_eq(check_json("{\"dbl\": 3}", false, &out, &msg), AQ_OK);
	ck_assert(json_is_real(json_object_get(out, "dbl")));
	ck_assert(json_real_value(json_object_get(out, "dbl")) == 3.0);
	json_decref(out);
	ok("{\"dbl\": -0.5}");
	ok("{\"dbl\": \"1.5\"}");
	refused("{\"dbl\": \"1.5x\"}", "must be a number");
	refused("{\"dbl\": false}", "must be a number");

	ok("{\"flag\": true}");
	ok("{\"flag\": false}");
	refused("{\"flag\": 1}", "true or false");
	refused("{\"flag\": \"true\"}", "true or false");
}
END_TEST

START_TEST(test_enum)
{
	ok("{\"color\": \"RED\"}");
	refused("{\"color\": \"red\"}", "allowed: RED, GREEN");
	refused("{\"color\": \"BLUE\"}", "invalid value \"BLUE\"");
	refused("{\"color\": \"\"}", "allowed");
	refused("{\"color\": 1}", "must be an enum value"); /* not a proto enum: names only */
	ok("{\"colors\": []}");
	ok("{\"colors\": [\"RED\", \"GREEN\", \"RED\"]}");
	refused("{\"colors\": [\"RED\", \"GREEN\", \"RED\", \"GREEN\"]}", "more than 3 items");
	refused("{\"colors\": [\"RED\", \"BLUE\"]}", "thing.colors[1]");
	refused("{\"colors\": [\"RED\", 1]}", "must be an enum value");
	refused("{\"colors\": \"RED\"}", "must be a list");
}
END_TEST

START_TEST(test_labels)
{
	char *k63 = repeat('k', 63), *k64 = repeat('k', 64);
	char buf[4096];
	size_t off;

	ok("{\"labels\": {}}");
	ok("{\"labels\": {\"env\": \"prod\", \"tier\": \"\"}}");
	snprintf(buf, sizeof(buf), "{\"labels\": {\"%s\": \"%s\"}}", k63, k63);
	ok(buf);
	snprintf(buf, sizeof(buf), "{\"labels\": {\"%s\": \"v\"}}", k64);
	refused(buf, "1 to 63 lowercase letters");
	snprintf(buf, sizeof(buf), "{\"labels\": {\"k\": \"%s\"}}", k64);
	refused(buf, "at most 63");
	refused("{\"labels\": {\"\": \"v\"}}", "must not be empty");
	refused("{\"labels\": {\"Env\": \"v\"}}", "lowercase");
	refused("{\"labels\": {\"k\": 1}}", "must be a string");
	refused("{\"labels\": {\"k\": null}}", "must be a string");
	refused("{\"labels\": [\"k\"]}", "object of string values");
	/* 64 entries allowed, 65 not */
	off = (size_t)snprintf(buf, sizeof(buf), "{\"labels\": {");
	for (int i = 0; i < 64; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s\"k%d\": \"v\"", i ? "," : "", i);
	snprintf(buf + off, sizeof(buf) - off, "}}");
	ok(buf);
	snprintf(buf + off, sizeof(buf) - off, ",\"k64\": \"v\"}}");
	refused(buf, "more than 64 entries");
	free(k63);
	free(k64);
}
END_TEST

START_TEST(test_lists_and_nesting)
{
	char buf[8192];
	size_t off;

	ok("{\"objs\": [{\"a\": \"x\"}, {\"b\": \"1\"}]}");
	refused("{\"objs\": [{}, {}, {}]}", "more than 2 items");
	refused("{\"objs\": [{\"a\": 1}]}", "thing.objs[0].a must be a string");
	refused("{\"objs\": [1]}", "thing.objs[0] must be a JSON object");
	refused("{\"objs\": {}}", "must be a list");
	refused("{\"obj\": 5}", "thing.obj must be a JSON object");
	refused("{\"obj\": {\"b\": \"x\"}}", "thing.obj.b must be an integer");
	/* default max 64 items for lists */
	off = (size_t)snprintf(buf, sizeof(buf), "{\"strs\": [");
	for (int i = 0; i < 64; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s\"s\"", i ? "," : "");
	snprintf(buf + off, sizeof(buf) - off, "]}");
	ok(buf);
	snprintf(buf + off, sizeof(buf) - off, ",\"s\"]}");
	refused(buf, "more than 64 items");
	refused("{\"strs\": [1]}", "thing.strs[0] must be a string");
	/* depth: top 0, deep 1, then d 2, 3, 4 allowed; a fifth nested level is refused */
	ok("{\"deep\": {\"d\": {\"d\": {\"d\": {\"x\": 1}}}}}");
	refused("{\"deep\": {\"d\": {\"d\": {\"d\": {\"d\": {\"x\": 1}}}}}}",
		"nests too deeply");
}
END_TEST

START_TEST(test_required_on_create_only)
{
	aq_msg msg = { .text = { 0 } };
	json_t *out = NULL;

	ck_assert_int_eq(check_json("{\"str\": \"x\"}", true, &out, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "thing.must is required"), "%s", msg.text);
	ck_assert_int_eq(check_json("{\"must\": \"x\"}", true, &out, &msg), AQ_OK);
	json_decref(out);
	ck_assert_int_eq(check_json("{\"str\": \"x\"}", false, &out, &msg), AQ_OK);
	json_decref(out);
	/* null does not satisfy a required field */
	ck_assert_int_eq(check_json("{\"must\": null}", true, &out, &msg), AQ_EINVAL);
	/* required fields of nested objects, too */
	ck_assert_int_eq(check_json("{\"must\": \"x\", \"obj\": {}}", true, &out, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "thing.obj.req is required"), "%s", msg.text);
	ck_assert_int_eq(check_json("{\"obj\": {}}", false, &out, &msg), AQ_OK);
	json_decref(out);
}
END_TEST

/* Parse mask against table; return rc and fill paths. */
static int mask(const struct api_field *table, const char *m, struct api_mask_path *paths, int *n,
		aq_msg *msg)
{
	*n = -1;
	return api_mask_parse(table, m, paths, n, msg);
}

START_TEST(test_mask_parse)
{
	struct api_mask_path p[API_MASK_MAX];
	aq_msg msg = { .text = { 0 } };
	int n;

	ck_assert_int_eq(mask(t_fields, "", p, &n, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "updateMask is required"), "%s", msg.text);
	ck_assert_int_eq(mask(t_fields, NULL, p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "nosuch", p, &n, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "\"nosuch\" is not a field"), "%s", msg.text);
	ck_assert_int_eq(mask(t_fields, "str,", p, &n, &msg), AQ_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(mask(t_fields, ",str", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "str,,i64", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "out", p, &n, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "output only"), "%s", msg.text);
	ck_assert_int_eq(mask(t_fields, "imm", p, &n, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "\"imm\" is immutable"), "%s", msg.text);
	ck_assert_int_eq(mask(t_fields, "obj.imm", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "obj.out", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "obj.nosuch", p, &n, &msg), AQ_EINVAL);
	/* nested path into a non-object field */
	ck_assert_int_eq(mask(t_fields, "str.x", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "labels.env", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "objs.a", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(t_fields, "str,i64, obj.a", p, &n, &msg), AQ_OK);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(p[0].camel, "str");
	ck_assert_str_eq(p[2].camel, "obj.a");
	ck_assert_ptr_eq(p[2].field, api_schema_find(t_fields, "obj"));
	/* the path limit */
	{
		char buf[512] = "";
		size_t off = 0;

		for (int i = 0; i < API_MASK_MAX; i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%sstr", i ? "," : "");
		ck_assert_int_eq(mask(t_fields, buf, p, &n, &msg), AQ_OK);
		ck_assert_int_eq(n, API_MASK_MAX);
		snprintf(buf + off, sizeof(buf) - off, ",str");
		ck_assert_int_eq(mask(t_fields, buf, p, &n, &msg), AQ_EINVAL);
	}
	/* "*": every field that is neither output-only nor immutable */
	ck_assert_int_eq(mask(t_fields, "*", p, &n, &msg), AQ_OK);
	ck_assert_int_eq(n, 17);
	for (int i = 0; i < n; i++)
		ck_assert(!(p[i].field->flags & (API_F_OUTPUT | API_F_IMMUTABLE)));
}
END_TEST

START_TEST(test_mask_snake_case_volume)
{
	struct api_mask_path p[API_MASK_MAX];
	aq_msg msg = { .text = { 0 } };
	int n;

	ck_assert_int_eq(mask(api_volume_fields, "tiering_policy.cooling_threshold_days,capacity_gib",
			      p, &n, &msg),
			 AQ_OK);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(p[0].camel, "tieringPolicy.coolingThresholdDays");
	ck_assert_str_eq(p[0].field->name, "tieringPolicy");
	ck_assert_str_eq(p[1].camel, "capacityGib");
	ck_assert_int_eq(mask(api_volume_fields, "tieringPolicy.coolingThresholdDays", p, &n, &msg),
			 AQ_OK);
	ck_assert_int_eq(mask(api_volume_fields, "share_name", p, &n, &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "shareName"), "%s", msg.text);
	ck_assert_int_eq(mask(api_volume_fields, "protocols", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(api_volume_fields, "state", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(api_volume_fields, "used_gib", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(api_volume_fields, "description.x", p, &n, &msg), AQ_EINVAL);
	ck_assert_int_eq(mask(api_volume_fields, "backup_config.backup_chain_bytes", p, &n, &msg),
			 AQ_EINVAL);
	ck_assert_int_eq(mask(api_volume_fields, "*", p, &n, &msg), AQ_OK);
	for (int i = 0; i < n; i++)
		ck_assert_msg(strcmp(p[i].camel, "shareName") && strcmp(p[i].camel, "name"), "%s",
			      p[i].camel);
}
END_TEST

START_TEST(test_mask_apply)
{
	struct api_mask_path p[API_MASK_MAX];
	aq_msg msg = { .text = { 0 } };
	json_t *doc, *patch;
	int n;

	doc = json_loads("{\"str\": \"old\", \"i64\": \"1\", \"flag\": true, \"color\": \"RED\","
			 " \"obj\": {\"a\": \"old\", \"b\": \"2\"}}",
			 0, NULL);
	patch = json_loads("{\"str\": \"new\", \"i64\": \"9\", \"obj\": {\"b\": \"3\"}}", 0, NULL);
	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_nonnull(patch);
	/* str set, flag removed (absent in patch), obj.a removed, obj.b set; i64 and color untouched */
	ck_assert_int_eq(mask(t_fields, "str,flag,obj.a,obj.b", p, &n, &msg), AQ_OK);
	ck_assert_int_eq(api_mask_apply(doc, patch, p, n), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "str")), "new");
	ck_assert_str_eq(json_string_value(json_object_get(doc, "i64")), "1");
	ck_assert_str_eq(json_string_value(json_object_get(doc, "color")), "RED");
	ck_assert_ptr_null(json_object_get(doc, "flag"));
	ck_assert_ptr_null(json_object_get(json_object_get(doc, "obj"), "a"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "obj"), "b")), "3");
	ck_assert_int_eq((int)json_object_size(doc), 4);
	/* a nested path into an object the doc lacks creates it */
	json_object_del(doc, "obj");
	ck_assert_int_eq(mask(t_fields, "obj.b", p, &n, &msg), AQ_OK);
	ck_assert_int_eq(api_mask_apply(doc, patch, p, n), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "obj"), "b")), "3");
	/* a whole-object path replaces the object */
	json_object_set_new(json_object_get(doc, "obj"), "a", json_string("keep?"));
	ck_assert_int_eq(mask(t_fields, "obj", p, &n, &msg), AQ_OK);
	ck_assert_int_eq(api_mask_apply(doc, patch, p, n), AQ_OK);
	ck_assert_ptr_null(json_object_get(json_object_get(doc, "obj"), "a"));
	json_decref(doc);
	json_decref(patch);
}
END_TEST

START_TEST(test_mask_given)
{
	struct api_mask_path p[API_MASK_MAX];
	aq_msg msg = { .text = { 0 } };
	json_t *doc, *given;
	int n;

	doc = json_loads("{\"str\": \"x\", \"i64\": \"1\", \"obj\": {\"a\": \"y\"}}", 0, NULL);
	ck_assert_ptr_nonnull(doc);
	/* flag is named but absent; i64 is present but not named; obj.a names obj */
	ck_assert_int_eq(mask(t_fields, "str,flag,obj.a", p, &n, &msg), AQ_OK);
	given = api_mask_given(doc, p, n);
	ck_assert_ptr_nonnull(given);
	ck_assert_int_eq((int)json_object_size(given), 2);
	ck_assert_ptr_eq(json_object_get(given, "str"), json_object_get(doc, "str"));
	ck_assert_ptr_eq(json_object_get(given, "obj"), json_object_get(doc, "obj"));
	ck_assert_ptr_null(json_object_get(given, "flag"));
	ck_assert_ptr_null(json_object_get(given, "i64"));
	json_decref(given);
	given = api_mask_given(doc, p, 0);
	ck_assert_int_eq((int)json_object_size(given), 0);
	json_decref(given);
	json_decref(doc);
}
END_TEST

START_TEST(test_mask_patch)
{
	struct api_mask_path p[API_MASK_MAX];
	aq_msg msg = { .text = { 0 } };
	json_t *old, *patch, *doc = NULL, *given = NULL;
	int n;

	old = json_loads("{\"str\": \"old\", \"i64\": \"1\"}", 0, NULL);
	patch = json_loads("{\"str\": \"new\", \"i64\": \"9\"}", 0, NULL);
	ck_assert_int_eq(mask(t_fields, "str,flag", p, &n, &msg), AQ_OK);
	ck_assert_int_eq(api_mask_patch(old, patch, p, n, &doc, &given), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(doc, "str")), "new");
	ck_assert_str_eq(json_string_value(json_object_get(doc, "i64")), "1"); /* not in the mask */
	ck_assert_str_eq(json_string_value(json_object_get(old, "str")), "old"); /* old is left alone */
	ck_assert_int_eq((int)json_object_size(given), 1);
	ck_assert_ptr_nonnull(json_object_get(given, "str"));
	json_decref(doc);
	json_decref(given);
	ck_assert_int_eq(api_mask_patch(old, patch, p, n, &doc, NULL), AQ_OK); /* given not wanted */
	ck_assert_str_eq(json_string_value(json_object_get(doc, "str")), "new");
	json_decref(doc);
	json_decref(old);
	json_decref(patch);
}
END_TEST

START_TEST(test_strip_input_and_helpers)
{
	static const struct api_field tin[] = {
		{ "secret", API_T_STRING, API_F_INPUT, NULL, NULL, 0 },
		{ "keep", API_T_STRING, 0, NULL, NULL, 0 },
		{ NULL, 0, 0, NULL, NULL, 0 },
	};
	json_t *doc = json_loads("{\"secret\": \"s\", \"keep\": \"k\", \"n\": \"12\", \"r\": 1.5,"
				 " \"b\": true}",
				 0, NULL);

	api_schema_strip_input(tin, doc);
	ck_assert_ptr_null(json_object_get(doc, "secret"));
	ck_assert_str_eq(api_json_str(doc, "keep", NULL), "k");
	ck_assert_int_eq(api_json_int64(doc, "n", -1), 12);
	ck_assert_int_eq(api_json_int64(doc, "missing", -1), -1);
	ck_assert(api_json_double(doc, "r", 0) == 1.5);
	ck_assert(api_json_double(doc, "n", 0) == 12.0);
	ck_assert(api_json_bool(doc, "b", false));
	ck_assert(api_json_bool(doc, "keep", true));
	api_json_set_int64(doc, "big", INT64_MAX);
	ck_assert_str_eq(api_json_str(doc, "big", ""), "9223372036854775807");
	json_decref(doc);
}
END_TEST

/* proto3 JSON input: enum numbers, X_UNSPECIFIED as "not set", original
 * proto field names, nested too. */
START_TEST(test_proto3_json)
{
	aq_msg msg = { .text = { 0 } };
	json_t *out = NULL;

	ck_assert_int_eq(check_json("{\"shape\": 2, \"shapes\": [1, \"SQUARE\"]}", false, &out, &msg), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(out, "shape")), "SQUARE");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(out, "shapes"), 0)), "ROUND");
	json_decref(out);
	ck_assert_int_eq(check_json("{\"shape\": \"SHAPE_UNSPECIFIED\", \"i32\": 1}", false, &out, &msg), AQ_OK);
	ck_assert_ptr_null(json_object_get(out, "shape"));
	json_decref(out);
	ck_assert_int_eq(check_json("{\"shape\": 0}", false, &out, &msg), AQ_OK);
	ck_assert_ptr_null(json_object_get(out, "shape"));
	json_decref(out);
	refused("{\"shape\": 3}", "invalid value \"3\"");
	refused("{\"shape\": -1}", "invalid value");
	refused("{\"shapes\": [0]}", "thing.shapes[0]");
	refused("{\"shape\": \"BLOB\"}", "allowed: ROUND, SQUARE");
	/* original proto field names, stored under the JSON name */
	ck_assert_int_eq(check_json("{\"two_words\": \"x\"}", false, &out, &msg), AQ_OK);
	ck_assert_str_eq(json_string_value(json_object_get(out, "twoWords")), "x");
	ck_assert_ptr_null(json_object_get(out, "two_words"));
	json_decref(out);
	refused("{\"twoWords\": \"a\", \"two_words\": \"b\"}", "given twice");
	refused("{\"two_words\": \"a\", \"twoWords\": \"b\"}", "given twice");
	refused("{\"no_such\": 1}", "Unknown name \"no_such\"");
}
END_TEST

static Suite *schema_suite(void)
{
	Suite *s = suite_create("api_schema");
	TCase *tc = tcase_create("schema");

	tcase_add_test(tc, test_unknown_and_output);
	tcase_add_test(tc, test_string);
	tcase_add_test(tc, test_int64);
	tcase_add_test(tc, test_int32_double_bool);
	tcase_add_test(tc, test_enum);
	tcase_add_test(tc, test_labels);
	tcase_add_test(tc, test_lists_and_nesting);
	tcase_add_test(tc, test_required_on_create_only);
	tcase_add_test(tc, test_mask_parse);
	tcase_add_test(tc, test_mask_snake_case_volume);
	tcase_add_test(tc, test_mask_apply);
	tcase_add_test(tc, test_mask_given);
	tcase_add_test(tc, test_mask_patch);
	tcase_add_test(tc, test_strip_input_and_helpers);
	tcase_add_test(tc, test_proto3_json);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(schema_suite());
}
