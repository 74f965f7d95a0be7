/* api_fields: the partial-response selector of api_fields.h: a recursive
 * descent parser over a sticky-error cursor, and the filter. */
#include "api/api_fields.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct fields_cur {
	const char *s;
	size_t pos, len;
	int err;             /* sticky: the first failure wins */
	aq_msg *msg;
};

static void fields_fail(struct fields_cur *c, const char *what)
{
	if (c->err == AQ_OK)
		c->err = aq_fail_field(c->msg, AQ_EINVAL, "fields", "fields: %s at position %zu of \"%.64s\"", what,
				       c->pos + 1, c->s);
}

static char fields_peek(const struct fields_cur *c)
{
	return c->err == AQ_OK && c->pos < c->len ? c->s[c->pos] : '\0';
}

static bool fields_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
	       ch == '@' || ch == '-' || ch == '*';
}

static void fields_sel(struct fields_cur *c, json_t *tree, int depth);

/* path ['(' selection ')'] into tree */
static void fields_item(struct fields_cur *c, json_t *tree, int depth)
{
	json_t *node = tree;
	char name[128];

	for (;;) {
		size_t n = 0;
		json_t *next;

		while (fields_name_char(fields_peek(c)) && n + 1 < sizeof(name))
			name[n++] = c->s[c->pos++];
		name[n] = '\0';
		if (n == 0 || fields_name_char(fields_peek(c))) {
			fields_fail(c, n ? "a name longer than 127 characters" : "a field name expected");
			return;
		}
		next = json_object_get(node, name);
		if (fields_peek(c) != '.' && fields_peek(c) != '/' && fields_peek(c) != '(') {
			/* a leaf: the whole member, whatever was selected in it before */
			json_object_set_new(node, name, json_null());
			return;
		}
		if (json_is_null(next))
			return; /* already whole; skip the rest of this path */
		if (!next) {
			if (!(next = json_object()) || json_object_set_new(node, name, next) != 0) {
				c->err = AQ_ENOMEM;
				return;
			}
		}
		if (fields_peek(c) == '(') {
			c->pos++;
			if (depth + 1 > API_FIELDS_MAX_DEPTH) {
				fields_fail(c, "selections nested too deeply");
				return;
			}
			fields_sel(c, next, depth + 1);
			if (fields_peek(c) != ')')
				fields_fail(c, "')' expected");
			else
				c->pos++;
			return;
		}
		c->pos++; /* '.' or '/' */
		node = next;
		if (++depth > API_FIELDS_MAX_DEPTH) {
			fields_fail(c, "a path nested too deeply");
			return;
		}
	}
}

static void fields_sel(struct fields_cur *c, json_t *tree, int depth)
{
	for (;;) {
		while (fields_peek(c) == ' ')
			c->pos++;
		fields_item(c, tree, depth);
		while (fields_peek(c) == ' ')
			c->pos++;
		if (fields_peek(c) != ',')
			return;
		c->pos++;
	}
}

int api_fields_parse(const char *spec, json_t **tree, aq_msg *msg)
{
	struct fields_cur c = { .s = spec, .msg = msg };
	json_t *t;

	*tree = NULL;
	c.len = strnlen(spec, API_FIELDS_MAX_LEN + 1);
	if (c.len > API_FIELDS_MAX_LEN)
		return aq_fail_field(msg, AQ_EINVAL, "fields", "fields is longer than %d characters", API_FIELDS_MAX_LEN);
	if (!(t = json_object()))
		return AQ_ENOMEM;
	fields_sel(&c, t, 0);
	if (c.err == AQ_OK && c.pos != c.len)
		fields_fail(&c, "',' or the end expected");
	if (c.err != AQ_OK) {
		json_decref(t);
		return c.err;
	}
	*tree = t;
	return AQ_OK;
}

json_t *api_fields_apply(const json_t *tree, const json_t *doc)
{
	json_t *out, *v;
	const char *k;
	size_t i;

	if (!tree || json_is_null(tree) || !(json_is_object(doc) || json_is_array(doc)))
		return json_deep_copy(doc);
	if (json_is_array(doc)) {
		if (!(out = json_array()))
			return NULL;
		json_array_foreach(doc, i, v)
			json_array_append_new(out, api_fields_apply(tree, v));
		return out;
	}
	if (!(out = json_object()))
		return NULL;
	/* jansson's iterator takes a non-const tree even to read it */
	json_object_foreach((json_t *)(uintptr_t)tree, k, v) {
		json_t *dv = json_object_get(doc, k);

		if (dv)
			json_object_set_new(out, k, api_fields_apply(v, dv));
	}
	return out;
}
