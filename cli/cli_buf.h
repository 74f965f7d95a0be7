/* cli_buf: a growable string with a sticky error, for building URLs, query
 * strings and messages without sprintf/strcat.
 *
 * Every append is a no-op once b->err is set (out of memory or over the cap),
 * so a caller appends a whole string and checks once:
 *     struct cli_buf b; cli_buf_init(&b);
 *     cli_buf_add(&b, "/v1/"); cli_buf_addf(&b, "%s", name);
 *     if (b.err) ... else use cli_buf_str(&b);
 *     cli_buf_cleanup(&b);
 */
#ifndef AQ_CLI_BUF_H
#define AQ_CLI_BUF_H

#include <stddef.h>

#define CLI_BUF_MAX (64u * 1024u * 1024u)

struct cli_buf {
	char *p;
	size_t len, cap;
	int err;        /* AQ_OK or AQ_ENOMEM / AQ_ETOOBIG, sticky */
};

void cli_buf_init(struct cli_buf *b);
void cli_buf_cleanup(struct cli_buf *b);
void cli_buf_reset(struct cli_buf *b);
/* Append n bytes / a C string / a printf-formatted text. */
void cli_buf_addn(struct cli_buf *b, const char *s, size_t n);
void cli_buf_add(struct cli_buf *b, const char *s);
void cli_buf_addf(struct cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s percent-encoded for a URL path segment or query value: every byte
 * but A-Z a-z 0-9 - . _ ~ becomes %XX. */
void cli_buf_add_escaped(struct cli_buf *b, const char *s);
/* The text so far, always NUL-terminated ("" when empty); borrowed. */
const char *cli_buf_str(const struct cli_buf *b);
/* Hand the heap string to the caller (free()), leaving b empty; NULL on error. */
char *cli_buf_steal(struct cli_buf *b);

#endif
