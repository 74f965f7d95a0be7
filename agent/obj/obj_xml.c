/* obj_xml: bounded scanner for S3's XML answers (see obj_xml.h).
 *
 * xml_walk() runs over the bytes once with a cursor that never passes
 * `end`, and tells a visitor about each start tag and end tag. When the
 * visitor's start() hands back a buffer, the element's text is decoded into
 * it (entities resolved, at most cap-1 bytes, NUL-terminated) and the next
 * markup must be that element's end tag; anything else there (a child,
 * CDATA) is -EIO, as is text that does not fit when the visitor says so.
 */
#include <errno.h>
#include <string.h>

#include "agent/obj/obj_xml.h"
#include "util/ut_hex.h"

#define XML_NAME_MAX 64

struct xml_field {
	char *out;
	size_t cap;      /* bytes of out, incl. the NUL */
	int must_fit;    /* overflow is -EIO rather than truncation */
};

struct xml_visitor {
	/* May set *f to capture the element's text. Non-zero return stops. */
	int (*start)(void *ctx, const char *name, struct xml_field *f);
	/* After the end tag (and after the text, if captured). */
	int (*end)(void *ctx, const char *name);
	void *ctx;
};

struct xml_cur {
	const char *p, *end;
};

/* Advances past the first occurrence of lit; -EIO if absent. */
static int skip_past(struct xml_cur *c, const char *lit)
{
	size_t n = strlen(lit);

	while ((size_t)(c->end - c->p) >= n) {
		if (memcmp(c->p, lit, n) == 0) {
			c->p += n;
			return 0;
		}
		c->p++;
	}
	return -EIO;
}

static int starts(const struct xml_cur *c, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(c->end - c->p) >= n && memcmp(c->p, lit, n) == 0;
}

static int name_char(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '_' || ch == '-' || ch == '.' || ch == ':';
}

/* One entity at c->p (just past '&'): writes its character to *ch. */
static int entity(struct xml_cur *c, char *ch)
{
	static const struct { const char *name; char ch; } named[] = {
		{ "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' }, { "quot;", '"' }, { "apos;", '\'' },
	};

	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (starts(c, named[i].name)) {
			c->p += strlen(named[i].name);
			*ch = named[i].ch;
			return 0;
		}
	if (c->p >= c->end || *c->p != '#')
		return -EIO;
	c->p++;
	int hex = c->p < c->end && (*c->p == 'x' || *c->p == 'X');
	if (hex)
		c->p++;
	unsigned v = 0, digits = 0;
	while (c->p < c->end && *c->p != ';') {
		char d = *c->p;
		int dv = hex ? ut_hex_value(d) : d >= '0' && d <= '9' ? d - '0' : -1;
		if (dv < 0)
			return -EIO;
		v = v * (hex ? 16u : 10u) + (unsigned)dv;
		if (++digits > 8 || v > 0x7f)
			return -EIO;  /* ASCII only */
		c->p++;
	}
	if (c->p >= c->end || digits == 0 || v == 0)
		return -EIO;
	c->p++;  /* ';' */
	*ch = (char)v;
	return 0;
}

/* Decodes text up to the next '<' into f (or drops it when f->out is NULL). */
static int text(struct xml_cur *c, const struct xml_field *f)
{
	size_t n = 0;
	int over = 0;

	while (c->p < c->end && *c->p != '<') {
		char ch = *c->p++;
		if (ch == '&' && entity(c, &ch) != 0)
			return -EIO;
		if (!f->out)
			continue;
		if (n + 1 < f->cap)
			f->out[n++] = ch;
		else
			over = 1;
	}
	if (f->out)
		f->out[n] = '\0';
	return over && f->must_fit ? -EIO : 0;
}

/* Reads a tag name at c->p into name; -EIO if empty or too long. */
static int tag_name(struct xml_cur *c, char *name)
{
	size_t n = 0;

	while (c->p < c->end && name_char(*c->p)) {
		if (n + 1 >= XML_NAME_MAX)
			return -EIO;
		name[n++] = *c->p++;
	}
	name[n] = '\0';
	return n ? 0 : -EIO;
}

/* Skips attributes to the tag's '>' (quotes respected); *empty for "/>". */
static int tag_rest(struct xml_cur *c, int *empty)
{
	char quote = 0;

	*empty = 0;
	while (c->p < c->end) {
		char ch = *c->p++;
		if (quote) {
			if (ch == quote)
				quote = 0;
		} else if (ch == '"' || ch == '\'') {
			quote = ch;
		} else if (ch == '>') {
			*empty = c->p[-2] == '/';  /* "<" and a name char precede */
			return 0;
		} else if (ch == '<') {
			return -EIO;
		}
	}
	return -EIO;
}

static int xml_walk(const char *buf, size_t len, const struct xml_visitor *v)
{
	struct xml_cur c = { buf, buf + len };
	static const struct xml_field drop = { NULL, 0, 0 };
	char name[XML_NAME_MAX];
	int rc, empty;

	if (len > OBJ_XML_BODY_MAX)
		return -EIO;
	while (c.p < c.end) {
		if (*c.p != '<') {
			if ((rc = text(&c, &drop)) != 0)
				return rc;
			continue;
		}
		if (starts(&c, "<?")) {
			if ((rc = skip_past(&c, "?>")) != 0)
				return rc;
		} else if (starts(&c, "<!--")) {
			if ((rc = skip_past(&c, "-->")) != 0)
				return rc;
		} else if (starts(&c, "<![CDATA[")) {
			if ((rc = skip_past(&c, "]]>")) != 0)
				return rc;
		} else if (starts(&c, "<!")) {
			return -EIO;  /* DOCTYPE and friends: S3 never sends them */
		} else if (starts(&c, "</")) {
			c.p += 2;
			if ((rc = tag_name(&c, name)) != 0 || (rc = tag_rest(&c, &empty)) != 0)
				return rc;
			if ((rc = v->end(v->ctx, name)) != 0)
				return rc;
		} else {
			struct xml_field f = { NULL, 0, 0 };
			c.p++;
			if ((rc = tag_name(&c, name)) != 0 || (rc = tag_rest(&c, &empty)) != 0)
				return rc;
			if ((rc = v->start(v->ctx, name, &f)) != 0)
				return rc;
			if (empty) {
				if (f.out && f.cap)
					f.out[0] = '\0';
				if ((rc = v->end(v->ctx, name)) != 0)
					return rc;
				continue;
			}
			if (!f.out)
				continue;
			if (f.cap == 0 || (rc = text(&c, &f)) != 0)
				return -EIO;
			/* A captured field holds text only: its end tag comes next. */
			char close[XML_NAME_MAX];
			if (!starts(&c, "</"))
				return -EIO;
			c.p += 2;
			if (tag_name(&c, close) != 0 || strcmp(close, name) != 0 || tag_rest(&c, &empty) != 0)
				return -EIO;
			if ((rc = v->end(v->ctx, name)) != 0)
				return rc;
		}
	}
	return 0;
}

/* ---- ListObjectsV2 ---- */

struct list_ctx {
	obj_list_cb cb;
	void *arg;
	struct obj_xml_page *page;
	int in_contents, have_key, have_size;
	char key[OBJ_KEY_MAX + 1];
	char size[32];
	char truncated[8];
};

static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EIO;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EIO;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static int list_start(void *ctx, const char *name, struct xml_field *f)
{
	struct list_ctx *l = ctx;

	if (strcmp(name, "Contents") == 0) {
		if (l->in_contents)
			return -EIO;
		l->in_contents = 1;
		l->have_key = l->have_size = 0;
	} else if (l->in_contents && strcmp(name, "Key") == 0) {
		*f = (struct xml_field){ l->key, sizeof l->key, 1 };
		l->have_key = 1;
	} else if (l->in_contents && strcmp(name, "Size") == 0) {
		*f = (struct xml_field){ l->size, sizeof l->size, 1 };
		l->have_size = 1;
	} else if (!l->in_contents && strcmp(name, "IsTruncated") == 0) {
		*f = (struct xml_field){ l->truncated, sizeof l->truncated, 0 };
	} else if (!l->in_contents && strcmp(name, "NextContinuationToken") == 0) {
		*f = (struct xml_field){ l->page->token, sizeof l->page->token, 1 };
	}
	return 0;
}

static int list_end(void *ctx, const char *name)
{
	struct list_ctx *l = ctx;
	uint64_t size;

	if (strcmp(name, "IsTruncated") == 0 && !l->in_contents) {
		l->page->truncated = strcmp(l->truncated, "true") == 0;
		return 0;
	}
	if (strcmp(name, "Contents") != 0 || !l->in_contents)
		return 0;
	l->in_contents = 0;
	if (!l->have_key || !l->have_size || parse_u64(l->size, &size) != 0)
		return -EIO;
	l->page->keys++;
	return l->cb(l->arg, l->key, size);
}

int obj_xml_list(const char *buf, size_t len, obj_list_cb cb, void *arg, struct obj_xml_page *page)
{
	struct list_ctx l = { .cb = cb, .arg = arg, .page = page };
	struct xml_visitor v = { list_start, list_end, &l };
	int rc;

	page->truncated = false;
	page->token[0] = '\0';
	page->keys = 0;
	rc = xml_walk(buf, len, &v);
	if (rc == 0 && l.in_contents)
		rc = -EIO;
	if (rc == 0 && page->truncated && page->token[0] == '\0')
		rc = -EIO;  /* more pages but no way to ask for them */
	return rc;
}

/* ---- error bodies ---- */

static int err_start(void *ctx, const char *name, struct xml_field *f)
{
	struct obj_xml_error *e = ctx;

	if (strcmp(name, "Code") == 0)
		*f = (struct xml_field){ e->code, sizeof e->code, 0 };
	else if (strcmp(name, "Message") == 0)
		*f = (struct xml_field){ e->message, sizeof e->message, 0 };
	return 0;
}

static int err_end(void *ctx, const char *name)
{
	return 0;
}

int obj_xml_error(const char *buf, size_t len, struct obj_xml_error *err)
{
	struct xml_visitor v = { err_start, err_end, err };
	int rc;

	err->code[0] = err->message[0] = '\0';
	rc = xml_walk(buf, len, &v);
	if (rc != 0 || err->code[0] == '\0') {
		err->code[0] = err->message[0] = '\0';
		return -EIO;
	}
	return 0;
}
