/* cli_project: field paths, transforms, the check that a field exists, and
 * json(...)/yaml(...) projections (see cli_project.h). */
#define _GNU_SOURCE /* timegm */
#include "cli/cli_project.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli_buf.h"

#define TEXT_MAX 4096
#define DATE_DEFAULT "%Y-%m-%dT%H:%M:%S"

static const struct api_field op_error_fields[] = {
	{ "code", API_T_INT32, 0, NULL, NULL, 0 },
	{ "message", API_T_STRING, 0, NULL, NULL, 0 },
	{ "details", API_T_OBJECT_LIST, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

/* metadata and response have no table here: any key below them is theirs. */
const struct api_field cli_operation_fields[] = {
	{ "name", API_T_STRING, 0, NULL, NULL, 0 },
	{ "metadata", API_T_OBJECT, 0, NULL, NULL, 0 },
	{ "done", API_T_BOOL, 0, NULL, NULL, 0 },
	{ "error", API_T_OBJECT, 0, NULL, op_error_fields, 0 },
	{ "response", API_T_OBJECT, 0, NULL, NULL, 0 },
	{ NULL, 0, 0, NULL, NULL, 0 },
};

static const struct {
	const char *name;
	enum cli_fmt_xform xform;
	bool takes_arg;
} xforms[] = {
	{ "basename", CLI_XF_BASENAME, false },
	{ "location", CLI_XF_LOCATION, false },
	{ "date", CLI_XF_DATE, true },
	{ NULL, CLI_XF_NONE, false }
};

/* "mountOptions[0].exportFull" -> "EXPORT_FULL" */
static void default_label(const char *path, char *label, size_t size)
{
	const char *start = strrchr(path, '.');
	size_t n = 0;

	start = start ? start + 1 : path;
	for (; *start && *start != '[' && n + 2 < size; start++) {
		if (isupper((unsigned char)*start) && n > 0)
			label[n++] = '_';
		label[n++] = (char)toupper((unsigned char)*start);
	}
	label[n] = '\0';
}

/* The first ':' of s[0..len) outside parentheses and quotes, or NULL. */
static const char *attr_colon(const char *s, size_t len)
{
	int depth = 0;
	char quote = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		char ch = s[i];
		if (quote) {
			if (ch == quote)
				quote = 0;
		} else if (ch == '\'' || ch == '"') {
			quote = ch;
		} else if (ch == '(') {
			depth++;
		} else if (ch == ')') {
			depth--;
		} else if (ch == ':' && depth == 0) {
			return s + i;
		}
	}
	return NULL;
}

/* A key path: names of [A-Za-z0-9_-] joined by '.', each optionally [N]. */
static bool path_ok(const char *p)
{
	for (;;) {
		size_t n = 0;
		while (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '-')
			n++;
		if (n == 0)
			return false;
		p += n;
		while (*p == '[') {
			p++;
			if (!isdigit((unsigned char)*p))
				return false;
			while (isdigit((unsigned char)*p))
				p++;
			if (*p++ != ']')
				return false;
		}
		if (*p == '\0')
			return true;
		if (*p++ != '.')
			return false;
	}
}

/* "date(format='%Y')" args: drop "format=" and one pair of quotes. */
static int xform_arg(struct cli_fmt_field *fld, const char *a, size_t n, aq_msg *msg)
{
	if (n >= 7 && strncmp(a, "format=", 7) == 0) {
		a += 7;
		n -= 7;
	}
	if (n >= 2 && (a[0] == '\'' || a[0] == '"') && a[n - 1] == a[0]) {
		a++;
		n -= 2;
	}
	if (n >= sizeof(fld->arg))
		return aq_fail(msg, AQ_EINVAL, "transform argument too long: '%.*s'", (int)n, a);
	memcpy(fld->arg, a, n);
	fld->arg[n] = '\0';
	return AQ_OK;
}

/* Split key[0..klen) into the path and its transform. */
static int parse_key(struct cli_fmt_field *fld, const char *key, size_t klen, aq_msg *msg)
{
	const char *open = memchr(key, '(', klen), *dot;
	size_t plen = klen, nlen, i;

	if (open) {
		if (key[klen - 1] != ')')
			return aq_fail(msg, AQ_EINVAL, "invalid field '%.*s': a transform ends with ')'",
				       (int)klen, key);
		for (dot = open; dot > key && dot[-1] != '.'; dot--)
			;
		if (dot == key)
			return aq_fail(msg, AQ_EINVAL, "invalid field '%.*s': expected KEY.transform()",
				       (int)klen, key);
		nlen = (size_t)(open - dot);
		for (i = 0; xforms[i].name; i++)
			if (strlen(xforms[i].name) == nlen && strncmp(xforms[i].name, dot, nlen) == 0)
				break;
		if (xforms[i].name == NULL)
			return aq_fail(msg, AQ_EINVAL,
				       "unknown transform '%.*s()' in '%.*s' (known: basename(), date(), location())",
				       (int)nlen, dot, (int)klen, key);
		fld->xform = xforms[i].xform;
		if (!xforms[i].takes_arg && open + 2 != key + klen)
			return aq_fail(msg, AQ_EINVAL, "transform %s() takes no argument", xforms[i].name);
		if (xforms[i].takes_arg &&
		    xform_arg(fld, open + 1, (size_t)(key + klen - open - 2), msg) != AQ_OK)
			return AQ_EINVAL;
		plen = (size_t)(dot - 1 - key);
	}
	if (plen == 0 || plen >= sizeof(fld->path))
		return aq_fail(msg, AQ_EINVAL, "invalid field '%.*s'", (int)klen, key);
	memcpy(fld->path, key, plen);
	fld->path[plen] = '\0';
	if (!path_ok(fld->path))
		return aq_fail(msg, AQ_EINVAL, "invalid field '%.*s'", (int)klen, key);
	return AQ_OK;
}

/* ":label=X" (gcloud) or ":X"; anything else is refused. */
static int parse_attrs(struct cli_fmt_field *fld, const char *s, size_t len, aq_msg *msg)
{
	while (len) {
		const char *next = memchr(s, ':', len);
		size_t n = next ? (size_t)(next - s) : len;
		const char *eq = memchr(s, '=', n);
		const char *val = s;
		size_t vlen = n;

		if (eq) {
			if ((size_t)(eq - s) != 5 || strncmp(s, "label", 5) != 0)
				return aq_fail(msg, AQ_EINVAL,
					       "unknown --format attribute '%.*s' (known: label=HEADER)",
					       (int)(eq - s), s);
			val = eq + 1;
			vlen = n - 6;
		}
		if (vlen == 0 || vlen >= sizeof(fld->label))
			return aq_fail(msg, AQ_EINVAL, "invalid --format label '%.*s'", (int)n, s);
		memcpy(fld->label, val, vlen);
		fld->label[vlen] = '\0';
		fld->labelled = true;
		s += n + (next ? 1 : 0);
		len -= n + (next ? 1 : 0);
	}
	return AQ_OK;
}

int cli_field_parse(struct cli_fmt_field *fld, const char *s, size_t len, bool attrs, aq_msg *msg)
{
	const char *colon;
	size_t klen;

	memset(fld, 0, sizeof(*fld));
	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	colon = attr_colon(s, len);
	klen = colon ? (size_t)(colon - s) : len;
	if (klen == 0)
		return aq_fail(msg, AQ_EINVAL, "invalid field '%.*s'", (int)len, s);
	if (parse_key(fld, s, klen, msg) != AQ_OK)
		return AQ_EINVAL;
	if (colon && !attrs)
		return aq_fail(msg, AQ_EINVAL, "invalid field '%.*s'", (int)len, s);
	if (colon) {
		if (colon + 1 == s + len)
			return aq_fail(msg, AQ_EINVAL, "invalid --format label in '%.*s'", (int)len, s);
		if (parse_attrs(fld, colon + 1, len - klen - 1, msg) != AQ_OK)
			return AQ_EINVAL;
	}
	if (!fld->labelled)
		default_label(fld->path, fld->label, sizeof(fld->label));
	return AQ_OK;
}

const json_t *cli_json_path(const json_t *doc, const char *path)
{
	const json_t *v = doc;
	const char *p = path;
	char key[128];

	while (v && *p) {
		size_t len = strcspn(p, ".[");
		if (len) {
			if (len >= sizeof(key) || !json_is_object(v))
				return NULL;
			memcpy(key, p, len);
			key[len] = '\0';
			v = json_object_get(v, key);
			p += len;
		}
		while (v && *p == '[') {
			char *end = NULL;
			long idx = strtol(p + 1, &end, 10);
			if (end == p + 1 || *end != ']' || idx < 0 || !json_is_array(v))
				return NULL;
			v = json_array_get(v, (size_t)idx);
			p = end + 1;
		}
		if (*p == '.')
			p++;
		else if (*p)
			return NULL;
	}
	return v;
}

static void scalar_text(const json_t *v, struct ut_buf *b)
{
	char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		ut_buf_add(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		ut_buf_addf(b, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_TRUE:
		ut_buf_adds(b, "true");
		break;
	case JSON_FALSE:
		ut_buf_adds(b, "false");
		break;
	case JSON_NULL:
		break;
	default:
		s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
		if (s)
			ut_buf_adds(b, s);
		free(s);
	}
}

static void text_into(const json_t *v, struct ut_buf *b)
{
	size_t i;

	if (v == NULL)
		return;
	if (json_is_array(v)) {
		bool scalars = true;
		for (i = 0; i < json_array_size(v); i++)
			if (json_is_object(json_array_get(v, i)) || json_is_array(json_array_get(v, i)))
				scalars = false;
		if (scalars) {
			for (i = 0; i < json_array_size(v); i++) {
				if (i)
					ut_buf_adds(b, ";");
				scalar_text(json_array_get(v, i), b);
			}
			return;
		}
	}
	if (json_is_object(v) || json_is_array(v)) {
		char *s = json_dumps(v, JSON_COMPACT);
		if (s)
			ut_buf_adds(b, s);
		free(s);
		return;
	}
	scalar_text(v, b);
}

void cli_json_text(const json_t *v, char *buf, size_t size)
{
	struct ut_buf b;

	ut_buf_init(&b, CLI_BUF_MAX);
	text_into(v, &b);
	snprintf(buf, size, "%s", ut_buf_str(&b));
	ut_buf_cleanup(&b);
}

/* strftime with the user's --format date(FORMAT): the format is data here,
 * which is what date() is for (gcloud passes it to strftime too). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static bool format_time(char *buf, size_t size, const char *fmt, const struct tm *tm)
{
	return strftime(buf, size, fmt, tm) > 0;
}
#pragma GCC diagnostic pop

/* Two decimal digits at p (checked by the caller). */
static int two_digits(const char *p)
{
	return (p[0] - '0') * 10 + (p[1] - '0');
}

/* An RFC 3339 time ("2026-12-01T12:57:38.477924064Z", "...+02:00") as
 * strftime fmt in the local time zone, like gcloud's date(); text that is not
 * a time is left as it is. */
static void date_text(char *buf, size_t size, const char *fmt)
{
	struct tm tm, local;
	int y, mo, d, h, mi, s, n = 0, off = 0;
	const char *p;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	if (sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19)
		return;
	p = buf + n;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' && isdigit((unsigned char)p[1]) &&
	    isdigit((unsigned char)p[2]) && isdigit((unsigned char)p[4]) && isdigit((unsigned char)p[5]))
		off = (*p == '-' ? -1 : 1) * (two_digits(p + 1) * 3600 + two_digits(p + 4) * 60);
	else if (!(p[0] == 'Z' && p[1] == '\0'))
		return;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	t = timegm(&tm) - off;
	tzset();                   /* TZ as it is now (localtime_r need not read it) */
	if (localtime_r(&t, &local) == NULL || !format_time(buf, size, *fmt ? fmt : DATE_DEFAULT, &local))
		buf[0] = '\0';
}

void cli_field_text(const json_t *item, const struct cli_fmt_field *fld, char *buf, size_t size)
{
	const char *from = NULL;

	cli_json_text(cli_json_path(item, fld->path), buf, size);
	if (fld->xform == CLI_XF_BASENAME) {
		if ((from = strrchr(buf, '/')) != NULL)
			from++;
	} else if (fld->xform == CLI_XF_LOCATION) {
		if ((from = strstr(buf, "locations/")) != NULL)
			from += strlen("locations/");
		else
			from = buf + strlen(buf);
	} else if (fld->xform == CLI_XF_DATE) {
		date_text(buf, size, fld->arg);
	}
	if (from) {
		size_t n = strcspn(from, fld->xform == CLI_XF_LOCATION ? "/" : "");
		memmove(buf, from, n);
		buf[n] = '\0';
	}
}

json_t *cli_field_value(const json_t *item, const struct cli_fmt_field *fld)
{
	const json_t *v = cli_json_path(item, fld->path);
	char text[TEXT_MAX];

	if (v == NULL)
		return NULL;
	if (fld->xform == CLI_XF_NONE)
		return json_deep_copy(v);
	cli_field_text(item, fld, text, sizeof(text));
	return json_string(text);
}

static bool is_list_type(enum api_ftype t)
{
	return t == API_T_OBJECT_LIST || t == API_T_ENUM_LIST || t == API_T_STRING_LIST;
}

bool cli_schema_has(const struct api_field *table, const char *path)
{
	const char *p = path;
	char key[128];

	while (table) {
		size_t len = strcspn(p, ".[");
		const struct api_field *f;
		if (len == 0 || len >= sizeof(key))
			return false;
		memcpy(key, p, len);
		key[len] = '\0';
		if ((f = api_schema_find(table, key)) == NULL)
			return false;
		p += len;
		if (*p == '[') {
			if (!is_list_type(f->type))
				return false;
			p = strchr(p, ']') + 1;    /* path_ok() checked the brackets */
			if (*p == '[')
				return false;
		}
		if (*p == '\0')
			return true;
		p++;                               /* '.' */
		if (f->type == API_T_LABELS)
			return strcspn(p, ".[") == strlen(p);
		if ((f->type == API_T_OBJECT || f->type == API_T_OBJECT_LIST) && f->sub == NULL)
			return true;
		if (f->type == API_T_OBJECT_LIST && p[-2] != ']')
			return false;              /* a list needs [N] before a key */
		table = f->sub;
	}
	return false;
}

bool cli_data_has(const json_t *doc, bool is_list, const char *path)
{
	size_t i;

	if (!is_list)
		return cli_json_path(doc, path) != NULL;
	for (i = 0; i < json_array_size(doc); i++)
		if (cli_json_path(json_array_get(doc, i), path) != NULL)
			return true;
	return false;
}

int cli_field_check(const struct cli_fmt_field *fld, const char *what, const struct api_field *table,
		    const json_t *doc, bool is_list, aq_msg *msg)
{
	if (table ? cli_schema_has(table, fld->path)
		  : doc == NULL || (is_list && json_array_size(doc) == 0) || cli_data_has(doc, is_list, fld->path))
		return AQ_OK;
	return aq_fail(msg, AQ_EINVAL, "unknown field '%s' in %s", fld->path, what);
}

/* Set v (stolen) at path in obj, creating objects and arrays on the way. */
static void set_at(json_t *obj, const char *path, json_t *v)
{
	json_t *cur = obj;
	const char *p = path;
	char key[128];

	while (*p) {
		size_t len = strcspn(p, ".[");
		json_t *next;
		snprintf(key, sizeof(key), "%.*s", (int)len, p);
		p += len;
		if (*p == '[') {
			size_t idx = strtoul(p + 1, NULL, 10);
			json_t *arr = json_object_get(cur, key);
			if (!json_is_array(arr)) {
				arr = json_array();
				json_object_set_new(cur, key, arr);
			}
			while (json_array_size(arr) <= idx)
				json_array_append_new(arr, json_null());
			p = strchr(p, ']') + 1;
			if (*p == '\0') {
				json_array_set_new(arr, idx, v);
				return;
			}
			if (!json_is_object(next = json_array_get(arr, idx))) {
				next = json_object();
				json_array_set_new(arr, idx, next);
			}
		} else if (*p == '\0') {
			json_object_set_new(cur, key, v);
			return;
		} else if (!json_is_object(next = json_object_get(cur, key))) {
			next = json_object();
			json_object_set_new(cur, key, next);
		}
		cur = next;
		if (*p == '.')
			p++;
	}
	json_decref(v);
}

json_t *cli_project(const json_t *item, const struct cli_fmt_field *fields, int nfields)
{
	json_t *out = json_object();
	int i;

	for (i = 0; i < nfields; i++) {
		json_t *v = cli_field_value(item, &fields[i]);
		if (v)
			set_at(out, fields[i].path, v);
	}
	return out;
}
