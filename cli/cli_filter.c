/* cli_filter: gcloud-style --filter expressions and --sort-by (see
 * cli_filter.h). The filter is parsed once, before any request, into a small
 * tree of nodes held in one array. */
#include "cli/cli_filter.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TEXT_MAX 4096
#define FILTER_MAX_NODES 64

enum op { OP_HAS, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
enum node_kind { N_CMP, N_NOT, N_AND, N_OR };

struct node {
	enum node_kind kind;
	int a, b;                   /* children (N_NOT: a only) */
	struct cli_fmt_field key;   /* N_CMP */
	enum op op;
	char value[256];
};

struct cli_filter {
	struct node nodes[FILTER_MAX_NODES];
	int n, root;                /* root -1: the empty filter, everything matches */
};

/* The parser: a cursor over the text with a sticky error. */
struct parser {
	const char *p;
	struct cli_filter *f;
	aq_msg *msg;
	int err;
};

static const struct {
	const char *text;
	enum op op;
} ops[] = {
	/* longest first */
	{ "!=", OP_NE }, { "<=", OP_LE }, { ">=", OP_GE }, { ":", OP_HAS }, { "=", OP_EQ },
	{ "<", OP_LT }, { ">", OP_GT }, { NULL, OP_EQ }
};

static int fail(struct parser *ps, const char *why)
{
	if (ps->err == AQ_OK)
		ps->err = aq_fail(ps->msg, AQ_EINVAL, "invalid --filter: %s", why);
	return -1;
}

static void skip_blanks(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static int new_node(struct parser *ps, enum node_kind kind, int a, int b)
{
	struct node *n;

	if (ps->err != AQ_OK || a < 0 || (kind != N_NOT && kind != N_CMP && b < 0))
		return -1;
	if (ps->f->n >= FILTER_MAX_NODES)
		return fail(ps, "too many terms");
	n = &ps->f->nodes[ps->f->n];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->a = a;
	n->b = b;
	return ps->f->n++;
}

/* A word that is an operator: AND, OR, NOT followed by a blank or '('. */
static bool keyword(const char *p, const char *word)
{
	size_t n = strlen(word);

	return strncmp(p, word, n) == 0 && (p[n] == '\0' || isspace((unsigned char)p[n]) || p[n] == '(');
}

static int parse_expr(struct parser *ps);

/* FIELD OP VALUE */
static int parse_cmp(struct parser *ps)
{
	const char *start = ps->p, *q = ps->p;
	struct node *n;
	size_t vlen, i;
	int idx;

	/* the key: up to an operator, a blank or ')', with transform calls "x.f(...)" */
	while (*q && !isspace((unsigned char)*q) && !strchr(":=!<>)", *q)) {
		if (*q == '(') {
			const char *close = strchr(q, ')');
			if (q == start || close == NULL)
				return fail(ps, "unbalanced '('");
			q = close;
		}
		q++;
	}
	if (q == start)
		return fail(ps, "expected FIELD OP VALUE");
	if ((idx = new_node(ps, N_CMP, 0, 0)) < 0)
		return -1;
	n = &ps->f->nodes[idx];
	if (cli_field_parse(&n->key, start, (size_t)(q - start), false, ps->msg) != AQ_OK) {
		ps->err = AQ_EINVAL;
		return -1;
	}
	ps->p = q;
	skip_blanks(ps);
	for (i = 0; ops[i].text; i++)
		if (strncmp(ps->p, ops[i].text, strlen(ops[i].text)) == 0)
			break;
	if (ops[i].text == NULL) {
		char why[200];
		snprintf(why, sizeof(why), "'%.*s' needs an operator and a value (FIELD:VALUE, FIELD=VALUE, ...)",
			 (int)(q - start), start);
		return fail(ps, why);
	}
	n->op = ops[i].op;
	ps->p += strlen(ops[i].text);
	skip_blanks(ps);
	if (*ps->p == '"' || *ps->p == '\'') {
		const char *end = strchr(ps->p + 1, *ps->p);
		if (end == NULL)
			return fail(ps, "unterminated quoted value");
		vlen = (size_t)(end - ps->p - 1);
		start = ps->p + 1;
		ps->p = end + 1;
	} else {
		start = ps->p;
		while (*ps->p && !isspace((unsigned char)*ps->p) && *ps->p != ')' && *ps->p != '(')
			ps->p++;
		vlen = (size_t)(ps->p - start);
		if (*ps->p == '(')
			return fail(ps, "value lists (FIELD:(A B)) are not supported: use OR");
		if (vlen == 0)
			return fail(ps, "missing value after the operator");
	}
	if (vlen >= sizeof(n->value))
		return fail(ps, "value too long");
	memcpy(n->value, start, vlen);
	n->value[vlen] = '\0';
	return idx;
}

/* NOT term | -term | ( expr ) | FIELD OP VALUE */
static int parse_term(struct parser *ps)
{
	int idx;

	skip_blanks(ps);
	if (keyword(ps->p, "NOT")) {
		ps->p += 3;
		return new_node(ps, N_NOT, parse_term(ps), 0);
	}
	if (*ps->p == '-') {
		ps->p++;
		return new_node(ps, N_NOT, parse_term(ps), 0);
	}
	if (*ps->p == '(') {
		ps->p++;
		idx = parse_expr(ps);
		skip_blanks(ps);
		if (*ps->p != ')')
			return fail(ps, "missing ')'");
		ps->p++;
		return idx;
	}
	return parse_cmp(ps);
}

/* term { [AND|OR] term }: one kind of join per level, as gcloud. */
static int parse_expr(struct parser *ps)
{
	int left = parse_term(ps);
	enum node_kind join = N_CMP;   /* none yet */

	for (;;) {
		enum node_kind k = N_AND;
		skip_blanks(ps);
		if (ps->err != AQ_OK || *ps->p == '\0' || *ps->p == ')')
			return left;
		if (keyword(ps->p, "AND")) {
			ps->p += 3;
		} else if (keyword(ps->p, "OR")) {
			ps->p += 2;
			k = N_OR;
		}
		if (join != N_CMP && join != k)
			return fail(ps, "parenthesis grouping is required when AND and OR are combined");
		join = k;
		left = new_node(ps, k, left, parse_term(ps));
	}
}

int cli_filter_new(const char *text, struct cli_filter **out, aq_msg *msg)
{
	struct cli_filter *f = calloc(1, sizeof(*f));
	struct parser ps = { text, f, msg, AQ_OK };

	if (f == NULL)
		return aq_fail(msg, AQ_ENOMEM, "out of memory");
	f->root = -1;
	skip_blanks(&ps);
	if (*ps.p) {
		f->root = parse_expr(&ps);
		skip_blanks(&ps);
		if (ps.err == AQ_OK && *ps.p)
			fail(&ps, "unexpected ')'");
	}
	if (ps.err != AQ_OK) {
		free(f);
		return ps.err;
	}
	*out = f;
	return AQ_OK;
}

void cli_filter_free(struct cli_filter *f)
{
	free(f);
}

static bool as_number(const char *s, double *d)
{
	char *end = NULL;

	if (*s == '\0')
		return false;
	*d = strtod(s, &end);
	return end && *end == '\0';
}

static bool contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return n == 0;
}

/* text (one value of the field) against the term. */
static bool text_match(const struct node *n, const char *text)
{
	const char *cmp = text;
	double a, b;
	int c;

	if (strcmp(n->key.path, "name") == 0 && n->key.xform == CLI_XF_NONE &&
	    strchr(n->value, '/') == NULL && strrchr(text, '/'))
		cmp = strrchr(text, '/') + 1;
	switch (n->op) {
	case OP_HAS:
		return strcmp(n->value, "*") == 0 ? *text != '\0' : contains_nocase(text, n->value);
	case OP_EQ:
		return strcasecmp(cmp, n->value) == 0;
	case OP_NE:
		return strcasecmp(cmp, n->value) != 0;
	default:
		break;
	}
	if (as_number(text, &a) && as_number(n->value, &b))
		c = a < b ? -1 : a > b;
	else
		c = strcmp(text, n->value);
	return n->op == OP_LT ? c < 0 : n->op == OP_LE ? c <= 0 : n->op == OP_GT ? c > 0 : c >= 0;
}

static bool cmp_match(const struct node *n, const json_t *item)
{
	const json_t *v = cli_json_path(item, n->key.path);
	char text[TEXT_MAX];
	size_t i;

	if (json_is_array(v) && n->key.xform == CLI_XF_NONE) {
		/* a list matches when one item does; != when none is equal */
		bool any = false;
		struct node eq = *n;
		if (n->op == OP_NE)
			eq.op = OP_EQ;
		for (i = 0; i < json_array_size(v) && !any; i++) {
			cli_json_text(json_array_get(v, i), text, sizeof(text));
			any = text_match(&eq, text);
		}
		return n->op == OP_NE ? !any : any;
	}
	cli_field_text(item, &n->key, text, sizeof(text));
	return text_match(n, text);
}

static bool node_match(const struct cli_filter *f, int i, const json_t *item)
{
	const struct node *n = &f->nodes[i];

	switch (n->kind) {
	case N_CMP:
		return cmp_match(n, item);
	case N_NOT:
		return !node_match(f, n->a, item);
	case N_AND:
		return node_match(f, n->a, item) && node_match(f, n->b, item);
	case N_OR:
		return node_match(f, n->a, item) || node_match(f, n->b, item);
	}
	return false;
}

bool cli_filter_match(const struct cli_filter *f, const json_t *item)
{
	return f->root < 0 || node_match(f, f->root, item);
}

int cli_filter_check(const struct cli_filter *f, const struct api_field *table, const json_t *doc,
		     bool is_list, aq_msg *msg)
{
	int i, rc;

	for (i = 0; i < f->n; i++)
		if (f->nodes[i].kind == N_CMP &&
		    (rc = cli_field_check(&f->nodes[i].key, "--filter", table, doc, is_list, msg)) != AQ_OK)
			return rc;
	return AQ_OK;
}

int cli_list_filter(const json_t *array, const char *filter, json_t **out, aq_msg *msg)
{
	struct cli_filter *f = NULL;
	json_t *res;
	size_t j;
	int rc;

	if ((rc = cli_filter_new(filter, &f, msg)) != AQ_OK)
		return rc;
	res = json_array();
	for (j = 0; j < json_array_size(array); j++)
		if (cli_filter_match(f, json_array_get(array, j)))
			json_array_append(res, json_array_get(array, j));
	cli_filter_free(f);
	*out = res;
	return AQ_OK;
}

/* Sort */

int cli_sort_parse(struct cli_sort *s, const char *text, aq_msg *msg)
{
	const char *p = text;

	memset(s, 0, sizeof(*s));
	while (*p) {
		size_t len = strcspn(p, ",");
		struct cli_sort_key *k = &s->keys[s->nkeys];
		if (s->nkeys >= CLI_SORT_MAX)
			return aq_fail(msg, AQ_EINVAL, "too many --sort-by fields");
		k->desc = *p == '~';
		if (k->desc) {
			p++;
			len--;
		}
		if (len == 0 || cli_field_parse(&k->fld, p, len, false, msg) != AQ_OK)
			return aq_fail(msg, AQ_EINVAL, "invalid --sort-by '%s'", text);
		s->nkeys++;
		p += len;
		if (*p == ',')
			p++;
	}
	return AQ_OK;
}

void cli_sort_bind(struct cli_sort *s, const struct cli_fmt_field *cols, int ncols)
{
	int i, c;

	for (i = 0; i < s->nkeys; i++) {
		struct cli_sort_key *k = &s->keys[i];
		if (k->fld.xform != CLI_XF_NONE)
			continue;
		for (c = 0; c < ncols; c++)
			if (strcmp(cols[c].path, k->fld.path) == 0 || strcmp(cols[c].label, k->fld.path) == 0) {
				k->fld = cols[c];
				k->column = true;
				break;
			}
	}
}

int cli_sort_check(const struct cli_sort *s, const struct api_field *table, const json_t *doc,
		   bool is_list, aq_msg *msg)
{
	int i, rc;

	for (i = 0; i < s->nkeys; i++)
		if (!s->keys[i].column &&
		    (rc = cli_field_check(&s->keys[i].fld, "--sort-by", table, doc, is_list, msg)) != AQ_OK)
			return rc;
	return AQ_OK;
}

static int item_cmp(const json_t *a, const json_t *b, const struct cli_sort *s)
{
	char ta[TEXT_MAX], tb[TEXT_MAX];
	double da, db;
	int i, c;

	for (i = 0; i < s->nkeys; i++) {
		cli_field_text(a, &s->keys[i].fld, ta, sizeof(ta));
		cli_field_text(b, &s->keys[i].fld, tb, sizeof(tb));
		if (as_number(ta, &da) && as_number(tb, &db))
			c = da < db ? -1 : da > db ? 1 : 0;
		else
			c = strcmp(ta, tb);
		if (c)
			return s->keys[i].desc ? -c : c;
	}
	return 0;
}

void cli_sort_apply(const struct cli_sort *s, json_t *array)
{
	size_t n = json_array_size(array), i, j;
	json_t **items;

	if (n == 0 || s->nkeys == 0 || (items = calloc(n, sizeof(*items))) == NULL)
		return;
	for (i = 0; i < n; i++)
		items[i] = json_incref(json_array_get(array, i));
	/* Insertion sort: stable, and lists are small. */
	for (i = 1; i < n; i++) {
		json_t *cur = items[i];
		for (j = i; j > 0 && item_cmp(items[j - 1], cur, s) > 0; j--)
			items[j] = items[j - 1];
		items[j] = cur;
	}
	json_array_clear(array);
	for (i = 0; i < n; i++)
		json_array_append_new(array, items[i]);
	free(items);
}

int cli_list_sort(json_t *array, const char *sort_by, aq_msg *msg)
{
	struct cli_sort s;
	int rc;

	if ((rc = cli_sort_parse(&s, sort_by, msg)) != AQ_OK)
		return rc;
	cli_sort_apply(&s, array);
	return AQ_OK;
}
