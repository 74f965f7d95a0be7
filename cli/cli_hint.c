/* cli_hint: HTTP routes in the server's messages become aquifer commands
 * (see cli_hint.h), found through the command table. */
#include "cli/cli_hint.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "cli/cli_cmd.h"

static const char *const methods[] = { "GET", "POST", "PATCH", "DELETE", NULL };

/* Whether path segment seg[0..n) matches template segment t[0..tn): a
 * literal, or a {param} (taking any non-empty text; its value in *val for
 * {name}). A ":verb" suffix must be the same on both. */
static bool seg_match(const char *t, size_t tn, const char *seg, size_t n, const char **val,
		      size_t *vlen)
{
	const char *tc = memchr(t, ':', tn), *sc = memchr(seg, ':', n);
	size_t tb = tc ? (size_t)(tc - t) : tn, sb = sc ? (size_t)(sc - seg) : n;

	if ((tc == NULL) != (sc == NULL) || (tc && (tn - tb != n - sb || memcmp(tc, sc, tn - tb) != 0)))
		return false;
	if (tb >= 2 && t[0] == '{' && t[tb - 1] == '}') {
		if (sb == 0)
			return false;
		if (tb == 6 && memcmp(t, "{name}", 6) == 0) {
			*val = seg;
			*vlen = sb;
		}
		return true;
	}
	return tb == sb && memcmp(t, seg, sb) == 0;
}

/* The command sending method path (path[0..plen), without the query);
 * NULL if none. */
static const struct cli_cmd *route_cmd(const char *method, const char *path, size_t plen,
				       const char **val, size_t *vlen)
{
	const struct cli_cmd *c;

	for (c = cli_cmds; c->group; c++) {
		const char *t = c->path, *p = path, *pend = path + plen;
		if (c->method == NULL || t == NULL || strcmp(c->method, method) != 0)
			continue;
		*val = NULL;
		*vlen = 0;
		while (*t && p < pend) {
			size_t tn = strcspn(t + 1, "/") + 1, n = 1;
			while (p + n < pend && p[n] != '/')
				n++;
			if (!seg_match(t + 1, tn - 1, p + 1, n - 1, val, vlen))
				break;
			t += tn;
			p += n;
		}
		if (*t == '\0' && p == pend)
			return c;
	}
	return NULL;
}

/* The value of query parameter name in q[0..qlen) ("a=1&b=2"). */
static bool query_value(const char *q, size_t qlen, const char *name, const char **val, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *end = q + qlen;

	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q));
		size_t n = amp ? (size_t)(amp - q) : (size_t)(end - q);
		if (n > nl && memcmp(q, name, nl) == 0 && q[nl] == '=') {
			*val = q + nl + 1;
			*vlen = n - nl - 1;
			return true;
		}
		q += n + 1;
	}
	return false;
}

/* A route at p ("POST /v1/..."): its length in *len and the command in out. */
static bool rewrite_one(const char *p, size_t *len, struct ut_buf *out)
{
	const struct cli_cmd *c;
	const char *path, *q, *val = NULL;
	size_t plen, n, vlen = 0;
	char method[8];
	int i;

	for (i = 0; methods[i]; i++) {
		size_t ml = strlen(methods[i]);
		if (strncmp(p, methods[i], ml) == 0 && strncmp(p + ml, " /v1/", 5) == 0)
			break;
	}
	if (methods[i] == NULL)
		return false;
	snprintf(method, sizeof(method), "%s", methods[i]);
	path = p + strlen(method) + 1;
	for (n = 0; path[n] && !isspace((unsigned char)path[n]) && !strchr("),;'\"", path[n]); n++)
		;
	if (n > 0 && path[n - 1] == '.')
		n--;          /* the end of a sentence */
	q = memchr(path, '?', n);
	plen = q ? (size_t)(q - path) : n;
	if ((c = route_cmd(method, path, plen, &val, &vlen)) == NULL)
		return false;
	if (c->kind == CLI_K_CREATE && q && c->id_param)
		query_value(q + 1, n - plen - 1, c->id_param, &val, &vlen);
	ut_buf_addf(out, "aquifer %s %s", c->group, c->verb);
	if (val && vlen) {
		ut_buf_adds(out, " ");
		ut_buf_add(out, val, vlen);
	}
	*len = (size_t)(path + n - p);
	return true;
}

void cli_hint_rewrite(const char *text, struct ut_buf *out)
{
	const char *p = text;

	while (*p) {
		size_t len = 0;
		if ((p == text || !isalnum((unsigned char)p[-1])) && rewrite_one(p, &len, out)) {
			p += len;
			continue;
		}
		ut_buf_add(out, p, 1);
		p++;
	}
}
