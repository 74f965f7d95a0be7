/* cli_format: table/json/yaml/value output and client-side filter and sort
 * (see cli_format.h). */
#include "cli/cli_format.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli_buf.h"

#define TEXT_MAX 4096

struct fmt_name {
	const char *name;
	enum cli_fmt_kind kind;
	bool takes_fields;
};

static const struct fmt_name fmt_names[] = {
	{ "table", CLI_FMT_TABLE, true },
	{ "json", CLI_FMT_JSON, false },
	{ "yaml", CLI_FMT_YAML, false },
	{ "value", CLI_FMT_VALUE, true },
	{ NULL, CLI_FMT_JSON, false }
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

static const struct {
	const char *suffix;
	enum cli_fmt_xform xform;
} xforms[] = {
	{ ".basename()", CLI_XF_BASENAME },
	{ ".location()", CLI_XF_LOCATION },
	{ NULL, CLI_XF_NONE }
};

static int parse_field(struct cli_fmt_field *fld, const char *s, size_t len, aq_msg *msg)
{
	const char *colon = memchr(s, ':', len);
	size_t plen = colon ? (size_t)(colon - s) : len;

	while (plen && isspace((unsigned char)*s)) {
		s++;
		plen--;
		len--;
	}
	while (plen && isspace((unsigned char)s[plen - 1]))
		plen--;
	fld->xform = CLI_XF_NONE;
	for (int i = 0; xforms[i].suffix; i++) {
		size_t sl = strlen(xforms[i].suffix);
		if (plen > sl && strncmp(s + plen - sl, xforms[i].suffix, sl) == 0) {
			fld->xform = xforms[i].xform;
			plen -= sl;
			break;
		}
	}
	if (plen == 0 || plen >= sizeof(fld->path))
		return aq_fail(msg, AQ_EINVAL, "invalid --format field '%.*s'", (int)len, s);
	memcpy(fld->path, s, plen);
	fld->path[plen] = '\0';
	if (colon) {
		size_t llen = len - (size_t)(colon - s) - 1;
		if (llen == 0 || llen >= sizeof(fld->label))
			return aq_fail(msg, AQ_EINVAL, "invalid --format label in '%.*s'", (int)len, s);
		memcpy(fld->label, colon + 1, llen);
		fld->label[llen] = '\0';
	} else {
		default_label(fld->path, fld->label, sizeof(fld->label));
	}
	return AQ_OK;
}

static int parse_fields(struct cli_fmt *f, const char *s, size_t len, aq_msg *msg)
{
	const char *end = s + len;
	int rc;

	f->nfields = 0;
	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		size_t flen = comma ? (size_t)(comma - s) : (size_t)(end - s);
		if (f->nfields >= CLI_FMT_MAX_FIELDS)
			return aq_fail(msg, AQ_EINVAL, "too many --format fields");
		if ((rc = parse_field(&f->fields[f->nfields], s, flen, msg)) != AQ_OK)
			return rc;
		f->nfields++;
		s += flen + (comma ? 1 : 0);
	}
	return AQ_OK;
}

int cli_fmt_parse(struct cli_fmt *f, const char *spec, enum cli_fmt_kind fallback,
		  const char *columns, aq_msg *msg)
{
	const struct fmt_name *n;
	const char *paren;
	size_t nlen;
	int rc;

	memset(f, 0, sizeof(*f));
	if (spec == NULL || *spec == '\0') {
		f->kind = fallback;
		if (fallback == CLI_FMT_TABLE && columns == NULL)
			f->kind = CLI_FMT_YAML;
		if (f->kind == CLI_FMT_TABLE)
			return parse_fields(f, columns, strlen(columns), msg);
		return AQ_OK;
	}
	paren = strchr(spec, '(');
	nlen = paren ? (size_t)(paren - spec) : strlen(spec);
	for (n = fmt_names; n->name; n++)
		if (strlen(n->name) == nlen && strncasecmp(n->name, spec, nlen) == 0)
			break;
	if (n->name == NULL)
		return aq_fail(msg, AQ_EINVAL,
			       "invalid --format '%s' (choose from table, json, yaml, value(FIELD,...))",
			       spec);
	f->kind = n->kind;
	if (paren) {
		size_t plen = strlen(paren);
		if (!n->takes_fields || paren[plen - 1] != ')' || plen < 3)
			return aq_fail(msg, AQ_EINVAL, "invalid --format '%s'", spec);
		return parse_fields(f, paren + 1, plen - 2, msg);
	}
	if (f->kind == CLI_FMT_VALUE)
		return aq_fail(msg, AQ_EINVAL, "--format=value needs fields: value(FIELD,...)");
	if (f->kind == CLI_FMT_TABLE) {
		if (columns == NULL)
			return aq_fail(msg, AQ_EINVAL, "--format=table needs fields here: table(FIELD,...)");
		if ((rc = parse_fields(f, columns, strlen(columns), msg)) != AQ_OK)
			return rc;
	}
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

static void scalar_text(const json_t *v, struct cli_buf *b)
{
	char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		cli_buf_addn(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		cli_buf_addf(b, "%lld", (long long)json_integer_value(v));
		break;
	case JSON_TRUE:
		cli_buf_add(b, "true");
		break;
	case JSON_FALSE:
		cli_buf_add(b, "false");
		break;
	case JSON_NULL:
		break;
	default:
		s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
		if (s)
			cli_buf_add(b, s);
		free(s);
	}
}

static void text_into(const json_t *v, struct cli_buf *b)
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
					cli_buf_add(b, ";");
				scalar_text(json_array_get(v, i), b);
			}
			return;
		}
	}
	if (json_is_object(v) || json_is_array(v)) {
		char *s = json_dumps(v, JSON_COMPACT);
		if (s)
			cli_buf_add(b, s);
		free(s);
		return;
	}
	scalar_text(v, b);
}

void cli_json_text(const json_t *v, char *buf, size_t size)
{
	struct cli_buf b;

	cli_buf_init(&b);
	text_into(v, &b);
	snprintf(buf, size, "%s", cli_buf_str(&b));
	cli_buf_cleanup(&b);
}

/* The text of one field of one resource, with .basename() applied. */
static void field_text(const json_t *item, const struct cli_fmt_field *fld, char *buf, size_t size)
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
	}
	if (from) {
		size_t n = strcspn(from, fld->xform == CLI_XF_LOCATION ? "/" : "");
		memmove(buf, from, n);
		buf[n] = '\0';
	}
}

static void print_value(FILE *out, const struct cli_fmt *f, const json_t *item)
{
	char text[TEXT_MAX];
	int i;

	for (i = 0; i < f->nfields; i++) {
		field_text(item, &f->fields[i], text, sizeof(text));
		fprintf(out, "%s%s", i ? "\t" : "", text);
	}
	fputc('\n', out);
}

static void print_table(FILE *out, const struct cli_fmt *f, const json_t *items)
{
	size_t nrows = json_array_size(items), r;
	size_t width[CLI_FMT_MAX_FIELDS];
	char **cells = NULL;
	int c;

	if (nrows > 0 && (cells = calloc(nrows * (size_t)f->nfields, sizeof(*cells))) == NULL)
		goto out;
	for (c = 0; c < f->nfields; c++)
		width[c] = strlen(f->fields[c].label);
	for (r = 0; r < nrows; r++)
		for (c = 0; c < f->nfields; c++) {
			char text[TEXT_MAX];
			char **cell = &cells[r * (size_t)f->nfields + (size_t)c];
			field_text(json_array_get(items, r), &f->fields[c], text, sizeof(text));
			*cell = strdup(text);
			if (*cell && strlen(*cell) > width[c])
				width[c] = strlen(*cell);
		}
	for (c = 0; c < f->nfields; c++)
		fprintf(out, "%-*s%s", c + 1 < f->nfields ? (int)width[c] : 0, f->fields[c].label,
			c + 1 < f->nfields ? "  " : "\n");
	for (r = 0; r < nrows; r++)
		for (c = 0; c < f->nfields; c++) {
			const char *cell = cells[r * (size_t)f->nfields + (size_t)c];
			fprintf(out, "%-*s%s", c + 1 < f->nfields ? (int)width[c] : 0, cell ? cell : "",
				c + 1 < f->nfields ? "  " : "\n");
		}
out:
	for (r = 0; cells && r < nrows * (size_t)f->nfields; r++)
		free(cells[r]);
	free(cells);
}

/* YAML */

static bool yaml_plain_ok(const char *s)
{
	static const char *const special[] = { "true", "false", "yes", "no", "on", "off", "null",
					       "y", "n", "~", NULL };
	const char *p;
	size_t i, len = strlen(s);

	if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '/'))
		return false;
	if (s[len - 1] == ' ' || s[len - 1] == ':')
		return false;
	for (i = 0; special[i]; i++)
		if (strcasecmp(s, special[i]) == 0)
			return false;
	for (p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (isalnum(ch) || strchr(" _./@+=-:,()", ch) != NULL)
			continue;
		return false;
	}
	return strstr(s, ": ") == NULL && strstr(s, " #") == NULL;
}

static void yaml_string(FILE *out, const char *s)
{
	const char *p;
	char *dumped;
	json_t *tmp;

	if (yaml_plain_ok(s)) {
		fputs(s, out);
		return;
	}
	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			break;
	if (*p == '\0') {
		fputc('\'', out);
		for (p = s; *p; p++) {
			if (*p == '\'')
				fputc('\'', out);
			fputc(*p, out);
		}
		fputc('\'', out);
		return;
	}
	/* Control characters: a JSON string is a valid YAML double-quoted scalar. */
	tmp = json_string(s);
	dumped = tmp ? json_dumps(tmp, JSON_ENCODE_ANY) : NULL;
	fputs(dumped ? dumped : "''", out);
	free(dumped);
	json_decref(tmp);
}

static bool yaml_inline(const json_t *v)
{
	return !(json_is_object(v) && json_object_size(v) > 0) &&
	       !(json_is_array(v) && json_array_size(v) > 0);
}

static void yaml_scalar(FILE *out, const json_t *v)
{
	struct cli_buf b;

	if (json_is_string(v)) {
		yaml_string(out, json_string_value(v));
		return;
	}
	if (json_is_object(v)) {
		fputs("{}", out);
		return;
	}
	if (json_is_array(v)) {
		fputs("[]", out);
		return;
	}
	if (json_is_null(v)) {
		fputs("null", out);
		return;
	}
	cli_buf_init(&b);
	scalar_text(v, &b);
	fputs(cli_buf_str(&b), out);
	cli_buf_cleanup(&b);
}

static void yaml_block(FILE *out, const json_t *v, int indent, bool first_inline);

static void yaml_object(FILE *out, const json_t *obj, int indent, bool first_inline)
{
	const char *key;
	json_t *v;
	bool first = true;

	json_object_foreach((json_t *)(uintptr_t)obj, key, v) {
		if (!(first && first_inline))
			fprintf(out, "%*s", indent, "");
		first = false;
		yaml_string(out, key);
		fputc(':', out);
		if (yaml_inline(v)) {
			fputc(' ', out);
			yaml_scalar(out, v);
			fputc('\n', out);
		} else {
			fputc('\n', out);
			yaml_block(out, v, json_is_object(v) ? indent + 2 : indent, false);
		}
	}
}

static void yaml_array(FILE *out, const json_t *arr, int indent)
{
	size_t i;

	for (i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);
		fprintf(out, "%*s- ", indent, "");
		if (yaml_inline(v)) {
			yaml_scalar(out, v);
			fputc('\n', out);
		} else if (json_is_object(v)) {
			yaml_object(out, v, indent + 2, true);
		} else {
			fputc('\n', out);
			yaml_block(out, v, indent + 2, false);
		}
	}
}

static void yaml_block(FILE *out, const json_t *v, int indent, bool first_inline)
{
	if (json_is_object(v))
		yaml_object(out, v, indent, first_inline);
	else if (json_is_array(v))
		yaml_array(out, v, indent);
	else {
		fprintf(out, "%*s", indent, "");
		yaml_scalar(out, v);
		fputc('\n', out);
	}
}

static void print_yaml(FILE *out, const json_t *doc)
{
	if (yaml_inline(doc)) {
		yaml_scalar(out, doc);
		fputc('\n', out);
		return;
	}
	yaml_block(out, doc, 0, false);
}

void cli_fmt_print(FILE *out, const struct cli_fmt *f, const json_t *doc, bool is_list)
{
	size_t i;

	switch (f->kind) {
	case CLI_FMT_JSON:
		json_dumpf(doc, out, JSON_INDENT(2) | JSON_ENCODE_ANY);
		fputc('\n', out);
		break;
	case CLI_FMT_YAML:
		if (!is_list) {
			print_yaml(out, doc);
			break;
		}
		for (i = 0; i < json_array_size(doc); i++) {
			if (i)
				fputs("---\n", out);
			print_yaml(out, json_array_get(doc, i));
		}
		break;
	case CLI_FMT_VALUE:
		if (!is_list) {
			print_value(out, f, doc);
			break;
		}
		for (i = 0; i < json_array_size(doc); i++)
			print_value(out, f, json_array_get(doc, i));
		break;
	case CLI_FMT_TABLE:
		if (is_list) {
			if (json_array_size(doc) > 0)
				print_table(out, f, doc);
		} else {
			json_t *one = json_array();
			json_array_append(one, (json_t *)(uintptr_t)doc);
			print_table(out, f, one);
			json_decref(one);
		}
		break;
	}
}

/* Filter */

struct term {
	char key[128];
	char value[256];
	enum { T_EQ, T_NE, T_HAS } op;
};

static int term_parse(struct term *t, const char *s, size_t len, aq_msg *msg)
{
	size_t k = strcspn(s, "=:!");
	size_t vstart;

	if (k >= len || k == 0 || k >= sizeof(t->key))
		return aq_fail(msg, AQ_EINVAL, "invalid --filter term '%.*s' (expected FIELD=VALUE)",
			       (int)len, s);
	memcpy(t->key, s, k);
	t->key[k] = '\0';
	if (s[k] == '!' && k + 1 < len && s[k + 1] == '=') {
		t->op = T_NE;
		vstart = k + 2;
	} else if (s[k] == '=') {
		t->op = T_EQ;
		vstart = k + 1;
	} else if (s[k] == ':') {
		t->op = T_HAS;
		vstart = k + 1;
	} else {
		return aq_fail(msg, AQ_EINVAL, "invalid --filter term '%.*s'", (int)len, s);
	}
	if (len - vstart >= sizeof(t->value))
		return aq_fail(msg, AQ_EINVAL, "--filter value too long");
	memcpy(t->value, s + vstart, len - vstart);
	t->value[len - vstart] = '\0';
	/* Strip one pair of quotes. */
	if ((t->value[0] == '"' || t->value[0] == '\'') && strlen(t->value) >= 2 &&
	    t->value[strlen(t->value) - 1] == t->value[0]) {
		size_t vl = strlen(t->value);
		memmove(t->value, t->value + 1, vl - 2);
		t->value[vl - 2] = '\0';
	}
	return AQ_OK;
}

static bool contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return n == 0;
}

static bool term_match(const struct term *t, const json_t *item)
{
	char text[TEXT_MAX];
	const char *cmp = text;
	bool eq;

	cli_json_text(cli_json_path(item, t->key), text, sizeof(text));
	if (strcmp(t->key, "name") == 0 && strchr(t->value, '/') == NULL && strrchr(text, '/'))
		cmp = strrchr(text, '/') + 1;
	if (t->op == T_HAS)
		return contains_nocase(text, t->value);
	eq = strcasecmp(cmp, t->value) == 0;
	return t->op == T_EQ ? eq : !eq;
}

int cli_list_filter(const json_t *array, const char *filter, json_t **out, aq_msg *msg)
{
	struct term terms[16];
	int nterms = 0, i, rc = AQ_OK;
	const char *p = filter;
	json_t *res = NULL;
	size_t j;

	while (*p) {
		size_t len;
		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (len == 0)
			break;
		if (!(len == 3 && strncmp(p, "AND", 3) == 0)) {
			if (nterms >= (int)(sizeof(terms) / sizeof(terms[0]))) {
				rc = aq_fail(msg, AQ_EINVAL, "too many --filter terms");
				goto out;
			}
			if ((rc = term_parse(&terms[nterms], p, len, msg)) != AQ_OK)
				goto out;
			nterms++;
		}
		p += len;
	}
	res = json_array();
	for (j = 0; j < json_array_size(array); j++) {
		json_t *item = json_array_get(array, j);
		for (i = 0; i < nterms && term_match(&terms[i], item); i++)
			;
		if (i == nterms)
			json_array_append(res, item);
	}
	*out = res;
	res = NULL;
out:
	json_decref(res);
	return rc;
}

/* Sort */

struct sort_key {
	char path[128];
	bool desc;
};

static bool as_number(const char *s, double *d)
{
	char *end = NULL;

	if (*s == '\0')
		return false;
	*d = strtod(s, &end);
	return end && *end == '\0';
}

static int item_cmp(const json_t *a, const json_t *b, const struct sort_key *keys, int nkeys)
{
	char ta[TEXT_MAX], tb[TEXT_MAX];
	double da, db;
	int i, c;

	for (i = 0; i < nkeys; i++) {
		cli_json_text(cli_json_path(a, keys[i].path), ta, sizeof(ta));
		cli_json_text(cli_json_path(b, keys[i].path), tb, sizeof(tb));
		if (as_number(ta, &da) && as_number(tb, &db))
			c = da < db ? -1 : da > db ? 1 : 0;
		else
			c = strcmp(ta, tb);
		if (c)
			return keys[i].desc ? -c : c;
	}
	return 0;
}

int cli_list_sort(json_t *array, const char *sort_by, aq_msg *msg)
{
	struct sort_key keys[8];
	int nkeys = 0, rc = AQ_OK;
	const char *p = sort_by;
	size_t n = json_array_size(array), i, j;
	json_t **items = NULL;

	while (*p) {
		size_t len = strcspn(p, ",");
		struct sort_key *k = &keys[nkeys];
		if (nkeys >= (int)(sizeof(keys) / sizeof(keys[0]))) {
			rc = aq_fail(msg, AQ_EINVAL, "too many --sort-by fields");
			goto out;
		}
		k->desc = *p == '~';
		if (k->desc) {
			p++;
			len--;
		}
		if (len == 0 || len >= sizeof(k->path)) {
			rc = aq_fail(msg, AQ_EINVAL, "invalid --sort-by '%s'", sort_by);
			goto out;
		}
		memcpy(k->path, p, len);
		k->path[len] = '\0';
		nkeys++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (n == 0)
		goto out;
	if ((items = calloc(n, sizeof(*items))) == NULL) {
		rc = AQ_ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		items[i] = json_incref(json_array_get(array, i));
	/* Insertion sort: stable, and lists are small. */
	for (i = 1; i < n; i++) {
		json_t *cur = items[i];
		for (j = i; j > 0 && item_cmp(items[j - 1], cur, keys, nkeys) > 0; j--)
			items[j] = items[j - 1];
		items[j] = cur;
	}
	json_array_clear(array);
	for (i = 0; i < n; i++)
		json_array_append_new(array, items[i]);
out:
	free(items);
	return rc;
}
