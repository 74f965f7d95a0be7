/* ut_log: the one levelled logger of Aquifer (the shape of redis's
 * serverLogRaw): one sink, one line per record, one format:
 *
 *     2026-12-01T12:00:00.123Z info srv_http req=abc123 volume v1 created
 *
 * time (UTC, milliseconds), level, source (the module: srv_http, nfs3,
 * agent_apply), req= the request id (a server route's request id, an NFS xid
 * as 8 hex digits, "gen-N" for an intent generation; "-" when there is none),
 * then the message.
 *
 * Contract:
 * - Levels, most severe first: error, warn, info, debug. A record is written
 *   when its level is at or above the set level (default info). UT_LOG and its
 *   UT_ERROR.. UT_DEBUG forms test the level before evaluating any argument,
 *   so a debug record costs one atomic load when debug is off.
 * - One record is one line: a control byte in the message becomes "\xNN"
 *   ("\n" included), a source or request id is cut at UT_LOG_ID_MAX bytes and
 *   any byte in it that is not printable ASCII, or is a space, becomes '_'.
 *   A record longer than UT_LOG_LINE_MAX is cut and ends in "...".
 * - Thread-safe: each record is built apart and written whole with one
 *   fwrite under a lock, so records of concurrent threads never interleave.
 * - Global state, by design the only one: the level and the sink (stderr by
 *   default; ut_log_set_sink(NULL) goes back to stderr). The programs set the
 *   level once from their config key `log-level` or flag `--log-level`
 *   (ut_log_level_parse gives the message for a bad value).
 */
#ifndef AQ_UT_LOG_H
#define AQ_UT_LOG_H

#include <stdbool.h>
#include <stdio.h>

#include "api/api_error.h"

#define UT_LOG_ID_MAX 64
#define UT_LOG_LINE_MAX 4096

enum ut_log_level {
	UT_LOG_ERROR = 0,
	UT_LOG_WARN = 1,
	UT_LOG_INFO = 2,
	UT_LOG_DEBUG = 3,
};

/* "error", "warn", "info" or "debug" into *level; AQ_EINVAL with
 * "log-level must be one of error, warn, info, debug, got \"X\"" otherwise. */
int ut_log_level_parse(const char *text, enum ut_log_level *level, aq_msg *msg);
const char *ut_log_level_name(enum ut_log_level level);

void ut_log_set_level(enum ut_log_level level);
enum ut_log_level ut_log_get_level(void);
bool ut_log_enabled(enum ut_log_level level);
/* Where records go from now on; NULL for stderr. The caller keeps f open
 * while it is the sink. */
void ut_log_set_sink(FILE *f);

/* Writes one record (no level test: UT_LOG does it). src and req may be NULL. */
void ut_log_write(enum ut_log_level level, const char *src, const char *req, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define UT_LOG(level, src, req, ...)                                  \
	do {                                                          \
		if (ut_log_enabled(level))                            \
			ut_log_write((level), (src), (req), __VA_ARGS__); \
	} while (0)
#define UT_ERROR(src, req, ...) UT_LOG(UT_LOG_ERROR, src, req, __VA_ARGS__)
#define UT_WARN(src, req, ...) UT_LOG(UT_LOG_WARN, src, req, __VA_ARGS__)
#define UT_INFO(src, req, ...) UT_LOG(UT_LOG_INFO, src, req, __VA_ARGS__)
#define UT_DEBUG(src, req, ...) UT_LOG(UT_LOG_DEBUG, src, req, __VA_ARGS__)

#endif
