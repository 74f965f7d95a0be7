/* cli_buf: growable strings with a sticky error (see cli_buf.h). */
#include "cli/cli_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_error.h"

void cli_buf_init(struct cli_buf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
	b->err = AQ_OK;
}

void cli_buf_cleanup(struct cli_buf *b)
{
	free(b->p);
	cli_buf_init(b);
}

void cli_buf_reset(struct cli_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	b->err = AQ_OK;
}

/* Make room for n more bytes plus the NUL. */
static int buf_reserve(struct cli_buf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (b->err)
		return b->err;
	if (n > CLI_BUF_MAX || b->len + n + 1 > CLI_BUF_MAX)
		return b->err = AQ_ETOOBIG;
	want = b->len + n + 1;
	if (want <= b->cap)
		return AQ_OK;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL)
		return b->err = AQ_ENOMEM;
	b->p = p;
	b->cap = cap;
	return AQ_OK;
}

void cli_buf_addn(struct cli_buf *b, const char *s, size_t n)
{
	if (buf_reserve(b, n) != AQ_OK)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void cli_buf_add(struct cli_buf *b, const char *s)
{
	cli_buf_addn(b, s, strlen(s));
}

void cli_buf_addf(struct cli_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->err = AQ_EINVAL;
		return;
	}
	if (buf_reserve(b, (size_t)n) != AQ_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void cli_buf_add_escaped(struct cli_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char enc[3];

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			cli_buf_addn(b, s, 1);
			continue;
		}
		enc[0] = '%';
		enc[1] = hex[c >> 4];
		enc[2] = hex[c & 15];
		cli_buf_addn(b, enc, 3);
	}
}

const char *cli_buf_str(const struct cli_buf *b)
{
	return b->p ? b->p : "";
}

char *cli_buf_steal(struct cli_buf *b)
{
	char *p = NULL;

	if (!b->err)
		p = b->p ? b->p : strdup("");
	if (b->err || p != b->p)
		free(b->p);
	cli_buf_init(b);
	return p;
}
