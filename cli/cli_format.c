/* cli_format: the --format printers: table, value, csv, flattened, json and
 * yaml, with or without a projection (see cli_format.h). Field paths and
 * transforms are cli_project.c's; filter and sort are cli_filter.c's. */
#include "cli/cli_format.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli_buf.h"

#define TEXT_MAX 4096

/* What each format takes: fields (table, value, csv: needed), a projection
 * (json, yaml, flattened: optional), the [no-heading] attribute. */
enum { FIELDS_NONE, FIELDS_NEEDED, FIELDS_OPTIONAL };

static const struct fmt_name {
	const char *name;
	enum cli_fmt_kind kind;
	int fields;
	bool heading;               /* takes [no-heading] */
} fmt_names[] = {
	{ "table", CLI_FMT_TABLE, FIELDS_NEEDED, true },
	{ "value", CLI_FMT_VALUE, FIELDS_NEEDED, false },
	{ "csv", CLI_FMT_CSV, FIELDS_NEEDED, true },
	{ "json", CLI_FMT_JSON, FIELDS_OPTIONAL, false },
	{ "yaml", CLI_FMT_YAML, FIELDS_OPTIONAL, false },
	{ "flattened", CLI_FMT_FLATTENED, FIELDS_OPTIONAL, false },
	{ NULL, CLI_FMT_JSON, FIELDS_NONE, false }
};

static int parse_fields(struct cli_fmt *f, const char *s, size_t len, aq_msg *msg)
{
	const char *end = s + len;
	int depth = 0, rc;
	const char *start = s, *q;

	f->nfields = 0;
	/* split at commas outside parentheses: .date('%d, %b') keeps its comma */
	for (q = s; q <= end; q++) {
		if (q < end && *q == '(')
			depth++;
		else if (q < end && *q == ')')
			depth--;
		if (q < end && (*q != ',' || depth > 0))
			continue;
		if (f->nfields >= CLI_FMT_MAX_FIELDS)
			return aq_fail(msg, AQ_EINVAL, "too many --format fields");
		if ((rc = cli_field_parse(&f->fields[f->nfields], start, (size_t)(q - start), true, msg)) !=
		    AQ_OK) {
			char why[sizeof(msg->text)];
			if (strstr(msg->text, "--format"))
				return rc;
			snprintf(why, sizeof(why), "%s", msg->text);
			return aq_fail(msg, rc, "invalid --format: %s", why);
		}
		f->nfields++;
		start = q + 1;
	}
	return AQ_OK;
}

/* "[no-heading]" after the format name. */
static int parse_fmt_attrs(struct cli_fmt *f, const struct fmt_name *n, const char *a, size_t len,
			   aq_msg *msg)
{
	if (n->heading && len == 10 && strncmp(a, "no-heading", 10) == 0) {
		f->no_heading = true;
		return AQ_OK;
	}
	return aq_fail(msg, AQ_EINVAL, "unknown --format attribute [%.*s] for %s%s", (int)len, a, n->name,
		       n->heading ? " (known: no-heading)" : "");
}

int cli_fmt_parse(struct cli_fmt *f, const char *spec, enum cli_fmt_kind fallback,
		  const char *columns, aq_msg *msg)
{
	const struct fmt_name *n;
	const char *paren, *bracket;
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
	nlen = strcspn(spec, "([");
	for (n = fmt_names; n->name; n++)
		if (strlen(n->name) == nlen && strncasecmp(n->name, spec, nlen) == 0)
			break;
	if (n->name == NULL)
		return aq_fail(msg, AQ_EINVAL,
			       "invalid --format '%s' (choose from table, value, csv, flattened, json, yaml; "
			       "FORMAT(FIELD,...) picks fields)",
			       spec);
	f->kind = n->kind;
	f->user = true;
	bracket = spec[nlen] == '[' ? spec + nlen : NULL;
	if (bracket) {
		const char *close = strchr(bracket, ']');
		if (close == NULL)
			return aq_fail(msg, AQ_EINVAL, "invalid --format '%s': missing ']'", spec);
		if ((rc = parse_fmt_attrs(f, n, bracket + 1, (size_t)(close - bracket - 1), msg)) != AQ_OK)
			return rc;
		nlen = (size_t)(close + 1 - spec);
	}
	paren = spec[nlen] == '(' ? spec + nlen : NULL;
	if (paren == NULL && spec[nlen] != '\0')
		return aq_fail(msg, AQ_EINVAL, "invalid --format '%s'", spec);
	if (paren) {
		size_t plen = strlen(paren);
		if (n->fields == FIELDS_NONE || paren[plen - 1] != ')' || plen < 3)
			return aq_fail(msg, AQ_EINVAL, "invalid --format '%s'", spec);
		return parse_fields(f, paren + 1, plen - 2, msg);
	}
	if (n->fields == FIELDS_NEEDED) {
		if (f->kind == CLI_FMT_VALUE || columns == NULL)
			return aq_fail(msg, AQ_EINVAL, "--format=%s needs fields here: %s(FIELD,...)", n->name,
				       n->name);
		f->user = false;       /* the command's own columns */
		if ((rc = parse_fields(f, columns, strlen(columns), msg)) != AQ_OK)
			return rc;
	}
	return AQ_OK;
}

int cli_fmt_check(const struct cli_fmt *f, const struct api_field *table, const json_t *doc,
		  bool is_list, aq_msg *msg)
{
	int i, rc;

	for (i = 0; f->user && i < f->nfields; i++)
		if ((rc = cli_field_check(&f->fields[i], "--format", table, doc, is_list, msg)) != AQ_OK)
			return rc;
	return AQ_OK;
}

static void print_value(FILE *out, const struct cli_fmt *f, const json_t *item)
{
	char text[TEXT_MAX];
	int i;

	for (i = 0; i < f->nfields; i++) {
		cli_field_text(item, &f->fields[i], text, sizeof(text));
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
		width[c] = f->no_heading ? 0 : strlen(f->fields[c].label);
	for (r = 0; r < nrows; r++)
		for (c = 0; c < f->nfields; c++) {
			char text[TEXT_MAX];
			char **cell = &cells[r * (size_t)f->nfields + (size_t)c];
			cli_field_text(json_array_get(items, r), &f->fields[c], text, sizeof(text));
			*cell = strdup(text);
			if (*cell && strlen(*cell) > width[c])
				width[c] = strlen(*cell);
		}
	for (c = 0; c < f->nfields && !f->no_heading; c++)
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

/* csv: a heading (the labels given, else the keys), then one line per
 * resource; a value with a comma, quote, line break or edge blank is quoted. */
static void csv_cell(FILE *out, const char *s)
{
	size_t n = strlen(s);

	if (strpbrk(s, ",\"\r\n") == NULL && !(n && (isspace((unsigned char)s[0]) ||
						    isspace((unsigned char)s[n - 1])))) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void print_csv(FILE *out, const struct cli_fmt *f, const json_t *items)
{
	char text[TEXT_MAX];
	size_t r;
	int i;

	if (!f->no_heading) {
		for (i = 0; i < f->nfields; i++) {
			fputs(i ? "," : "", out);
			csv_cell(out, f->fields[i].labelled ? f->fields[i].label : f->fields[i].path);
		}
		fputc('\n', out);
	}
	for (r = 0; r < json_array_size(items); r++) {
		for (i = 0; i < f->nfields; i++) {
			cli_field_text(json_array_get(items, r), &f->fields[i], text, sizeof(text));
			fputs(i ? "," : "", out);
			csv_cell(out, text);
		}
		fputc('\n', out);
	}
}

/* flattened: one "key.path[0].leaf: value" line per leaf, values aligned. */
static void flatten(const json_t *v, struct ut_buf *key, json_t *pairs)
{
	size_t mark = key->len, i;
	const char *k;
	json_t *sub;
	char text[TEXT_MAX];

	if (json_is_object(v) && json_object_size(v) > 0) {
		json_object_foreach((json_t *)(uintptr_t)v, k, sub) {
			ut_buf_addf(key, "%s%s", mark ? "." : "", k);
			flatten(sub, key, pairs);
			key->len = mark;
			key->p[mark] = '\0';
		}
		return;
	}
	if (json_is_array(v) && json_array_size(v) > 0) {
		for (i = 0; i < json_array_size(v); i++) {
			ut_buf_addf(key, "[%zu]", i);
			flatten(json_array_get(v, i), key, pairs);
			key->len = mark;
			key->p[mark] = '\0';
		}
		return;
	}
	if (json_is_object(v) || json_is_array(v))
		snprintf(text, sizeof(text), "%s", json_is_object(v) ? "{}" : "[]");
	else
		cli_json_text(v, text, sizeof(text));
	json_array_append_new(pairs, json_pack("[ss]", ut_buf_str(key), text));
}

static void print_flattened(FILE *out, const json_t *doc)
{
	json_t *pairs = json_array(), *pair;
	struct ut_buf key;
	size_t width = 0, i;

	ut_buf_init(&key, CLI_BUF_MAX);
	flatten(doc, &key, pairs);
	json_array_foreach(pairs, i, pair)
		if (strlen(json_string_value(json_array_get(pair, 0))) + 1 > width)
			width = strlen(json_string_value(json_array_get(pair, 0))) + 1;
	json_array_foreach(pairs, i, pair) {
		const char *k = json_string_value(json_array_get(pair, 0));
		fprintf(out, "%s:%*s %s\n", k, (int)(width - strlen(k) - 1), "",
			json_string_value(json_array_get(pair, 1)));
	}
	ut_buf_cleanup(&key);
	json_decref(pairs);
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
	char num[64];

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
	cli_json_text(v, num, sizeof(num));
	fputs(num, out);
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

/* The document a json/yaml/flattened format prints: doc, or its projection. */
static json_t *projected(const struct cli_fmt *f, const json_t *doc, bool is_list)
{
	json_t *res;
	size_t i;

	if (f->nfields == 0)
		return json_incref((json_t *)(uintptr_t)doc);
	if (!is_list)
		return cli_project(doc, f->fields, f->nfields);
	res = json_array();
	for (i = 0; i < json_array_size(doc); i++)
		json_array_append_new(res, cli_project(json_array_get(doc, i), f->fields, f->nfields));
	return res;
}

void cli_fmt_print(FILE *out, const struct cli_fmt *f, const json_t *doc, bool is_list)
{
	json_t *one = NULL, *shown = NULL;
	size_t i;

	if (!is_list) {
		one = json_array();
		json_array_append(one, (json_t *)(uintptr_t)doc);
	}
	switch (f->kind) {
	case CLI_FMT_JSON:
		shown = projected(f, doc, is_list);
		json_dumpf(shown, out, JSON_INDENT(2) | JSON_ENCODE_ANY);
		fputc('\n', out);
		break;
	case CLI_FMT_YAML:
	case CLI_FMT_FLATTENED:
		shown = projected(f, is_list ? doc : one, true);
		for (i = 0; i < json_array_size(shown); i++) {
			if (i)
				fputs("---\n", out);
			if (f->kind == CLI_FMT_YAML)
				print_yaml(out, json_array_get(shown, i));
			else
				print_flattened(out, json_array_get(shown, i));
		}
		break;
	case CLI_FMT_VALUE:
		for (i = 0; i < json_array_size(is_list ? doc : one); i++)
			print_value(out, f, json_array_get(is_list ? doc : one, i));
		break;
	case CLI_FMT_CSV:
		print_csv(out, f, is_list ? doc : one);
		break;
	case CLI_FMT_TABLE:
		if (!is_list || json_array_size(doc) > 0)
			print_table(out, f, is_list ? doc : one);
		break;
	}
	json_decref(shown);
	json_decref(one);
}
