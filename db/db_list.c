/* db_list: listing, the engine-neutral half of db.h's db_list and
 * db_list_all (split out of db.c, which keeps connections, transactions,
 * single documents and the aggregates): a filter's text parsed into
 * struct db_filter (db_engine.h) with every path checked (db_path_ok),
 * page tokens made and checked (hex of the last name and a checksum of the
 * query, so a token of another query is refused), and the engine's rows
 * gathered into one page, or every page at once. The engines run the SQL
 * (db_ops.list). */
#define _GNU_SOURCE /* memmem */
#include "db/db_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_hex.h"

bool db_path_ok(const char *path)
{
	size_t n = strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");

	return n > 0 && n < 80 && path[n] == '\0' && path[0] != '.' && path[n - 1] != '.' &&
	       !strstr(path, "..");
}

static const char *db_skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int db_filter_parse(const char *text, struct db_filter *f, aq_msg *msg)
{
	const char *s = text;

	memset(f, 0, sizeof(*f));
	if (!text)
		return AQ_OK;
	for (s = db_skip_ws(s); *s; s = db_skip_ws(s)) {
		size_t n = 0;

		if (f->n == DB_MAX_FILTER_TERMS)
			return aq_fail(msg, AQ_EINVAL, "filter has more than %d terms", DB_MAX_FILTER_TERMS);
		if (f->n > 0) {
			if (strncmp(s, "AND ", 4) != 0)
				return aq_fail(msg, AQ_EINVAL, "filter terms must be joined with AND: %s", text);
			s = db_skip_ws(s + 4);
		}
		while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		       (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '.')
			n++;
		if (n == 0 || n >= sizeof(f->path[0]) || s[0] == '.' || s[n - 1] == '.' ||
		    memmem(s, n, "..", 2))
			return aq_fail(msg, AQ_EINVAL, "filter must be field=value[ AND field=value]: %s", text);
		memcpy(f->path[f->n], s, n);
		s = db_skip_ws(s + n);
		if (*s != '=')
			return aq_fail(msg, AQ_EINVAL, "filter supports only field=value equality: %s", text);
		s = db_skip_ws(s + 1);
		n = 0;
		if (*s == '"') {
			f->quoted[f->n] = true;
			s++;
			while (s[n] && s[n] != '"')
				n++;
			if (s[n] != '"')
				return aq_fail(msg, AQ_EINVAL, "unterminated quote in filter: %s", text);
		} else {
			while (s[n] && s[n] != ' ' && s[n] != '\t')
				n++;
		}
		if (n >= sizeof(f->value[0]))
			return aq_fail(msg, AQ_EINVAL, "filter value too long");
		memcpy(f->value[f->n], s, n);
		/* JSON booleans compare as 1/0, as SQLite's json_extract gives them */
		if (!f->quoted[f->n] && (strcmp(f->value[f->n], "true") == 0 || strcmp(f->value[f->n], "false") == 0))
			snprintf(f->value[f->n], sizeof(f->value[0]), "%d", f->value[f->n][0] == 't');
		s += n + (s[n] == '"');
		f->n++;
	}
	return AQ_OK;
}

/* Page tokens are hex of "<last name>\n<checksum of the query>". */
static unsigned long db_query_sum(const struct db_query *q)
{
	unsigned long h = 5381;
	const char *parts[4] = { q->kind, q->parent ? q->parent : "", q->filter ? q->filter : "",
				 q->parent_prefix ? q->parent_prefix : "" };

	for (int i = 0; i < 4; i++)
		for (const char *c = parts[i]; *c; c++)
			h = h * 33 + (unsigned char)*c;
	return h * 2 + (q->order_desc ? 1 : 0);
}

static char *db_token_make(const struct db_query *q, const char *last)
{
	char plain[600];
	int n = snprintf(plain, sizeof(plain), "%s\n%lx", last, db_query_sum(q));
	char *hex;

	if (n < 0 || (size_t)n >= sizeof(plain))
		return NULL;
	hex = malloc((size_t)n * 2 + 1);
	if (!hex)
		return NULL;
	ut_hex_encode(plain, (size_t)n, hex, (size_t)n * 2 + 1);
	return hex;
}

static int db_token_parse(const struct db_query *q, const char *token, char *last, size_t cap,
			  aq_msg *msg)
{
	char plain[600], sum[32];
	size_t n;
	char *nl;

	if (ut_hex_decode(token, strlen(token), plain, sizeof(plain) - 1, &n) != AQ_OK)
		goto bad;
	plain[n] = '\0';
	nl = strchr(plain, '\n');
	if (!nl || (size_t)(nl - plain) >= cap)
		goto bad;
	*nl = '\0';
	snprintf(sum, sizeof(sum), "%lx", db_query_sum(q));
	if (strcmp(nl + 1, sum) != 0)
		goto bad;
	memcpy(last, plain, (size_t)(nl - plain) + 1);
	return AQ_OK;
bad:
	return aq_fail(msg, AQ_EINVAL, "invalid pageToken (it must come from a previous call with the same filter and orderBy)");
}

/* One page being gathered from the engine's rows. */
struct db_page {
	json_t *items;
	int limit, count;
	bool more;
	char last[DB_NAME_MAX];
};

static int db_page_row(void *arg, const char *name, const char *doc)
{
	struct db_page *pg = arg;
	json_t *j;

	if (pg->count == pg->limit) {
		pg->more = true;
		return 1;
	}
	if (!(j = json_loads(doc, 0, NULL)))
		return AQ_EIO;
	json_array_append_new(pg->items, j);
	snprintf(pg->last, sizeof(pg->last), "%s", name);
	pg->count++;
	return AQ_OK;
}

int db_list(struct db *db, const struct db_query *q, json_t **items, char **next_token,
	    aq_msg *msg)
{
	struct db_filter f;
	struct db_page pg = {
		.items = json_array(),
		.limit = q->page_size <= 0 || q->page_size > DB_MAX_PAGE ? DB_MAX_PAGE : q->page_size,
	};
	char after[DB_NAME_MAX] = "";
	int rc;

	*next_token = NULL;
	if (!pg.items)
		return AQ_ENOMEM;
	if ((rc = db_filter_parse(q->filter, &f, msg)) != AQ_OK)
		goto out;
	if (q->page_token && *q->page_token &&
	    (rc = db_token_parse(q, q->page_token, after, sizeof(after), msg)) != AQ_OK)
		goto out;
	/* one row past the page says whether another page follows */
	if ((rc = db->ops->list(db, q, &f, after, pg.limit + 1, db_page_row, &pg, msg)) != AQ_OK)
		goto out;
	if (pg.more && pg.count && !(*next_token = db_token_make(q, pg.last))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	*items = pg.items;
	pg.items = NULL;
out:
	json_decref(pg.items);
	return rc;
}

int db_list_all(struct db *db, const struct db_query *q, json_t **items, aq_msg *msg)
{
	struct db_query page_q = *q;
	json_t *all = json_array(), *page = NULL;
	char *tok = NULL, *next = NULL;
	int rc = AQ_OK;

	if (!all)
		return AQ_ENOMEM;
	page_q.page_size = 0;
	do {
		page_q.page_token = tok;
		if ((rc = db_list(db, &page_q, &page, &next, msg)) != AQ_OK)
			break;
		json_array_extend(all, page);
		json_decref(page);
		page = NULL;
		free(tok);
		tok = next;
		next = NULL;
	} while (tok);
	free(tok);
	if (rc != AQ_OK) {
		json_decref(all);
		return rc;
	}
	*items = all;
	return AQ_OK;
}
