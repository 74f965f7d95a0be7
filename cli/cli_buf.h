/* cli_buf: the CLI's buffers are util/ut_buf buffers capped at CLI_BUF_MAX
 * (URLs, query strings, messages, answers it prints); this module adds the
 * one thing the CLI builds that util does not: a percent-encoded URL part.
 *
 *     struct ut_buf b; ut_buf_init(&b, CLI_BUF_MAX);
 *     ut_buf_adds(&b, "/v1/"); cli_buf_add_escaped(&b, name);
 *     if (b.err) ... else use ut_buf_str(&b);
 *     ut_buf_cleanup(&b);
 */
#ifndef AQ_CLI_BUF_H
#define AQ_CLI_BUF_H

#include "util/ut_buf.h"

#define CLI_BUF_MAX (64u * 1024u * 1024u)

/* Append s percent-encoded for a URL path segment or query value: every byte
 * but A-Z a-z 0-9 - . _ ~ becomes %XX (uppercase hex, as RFC 3986 prefers). */
void cli_buf_add_escaped(struct ut_buf *b, const char *s);

#endif
