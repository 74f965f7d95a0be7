/* ut_conf: the reader of Aquifer's configuration files, the format that
 * aquiferd --config, aquifer-agent --config and the CLI's config file use:
 *
 *     # a comment: the whole line, '#' first after leading blanks
 *     listen = 0.0.0.0:8080
 *     public-url=https://aq.example.com     blanks around '=' are optional
 *
 * One "key = value" per line, split at the first '='; key and value are
 * trimmed of spaces and tabs (and the line of its CR LF). A blank line or a
 * comment line is skipped. There are no sections, quotes, escapes or trailing
 * comments: "a = b # c" sets a to "b # c", as before.
 *
 * Contract:
 * - ut_conf_parse reads len bytes of text called name (for messages) and
 *   calls fn(arg, key, value, msg) per setting, in order; both strings are
 *   borrowed for the call. The first failure stops the reading:
 *     "NAME:LINE: expected 'key = value'" (no '=', or an empty key),
 *     "NAME:LINE: line is longer than 8192 bytes", "NAME:LINE: holds a NUL byte",
 *     "NAME:LINE: <fn's message>" with fn's return code.
 *   Settings before the failing line were handed to fn already: a caller
 *   that must not apply half a file parses into a scratch copy.
 * - ut_conf_load reads the file at path (ut_file_read: at most
 *   UT_CONF_FILE_MAX bytes, larger is refused) and parses it; a missing file
 *   is "cannot open config file PATH: No such file or directory" (aquiferd's
 *   words, which tests/e2e/test_config.sh checks), or AQ_OK with
 *   UT_CONF_MISSING_OK; any other failure to read says why (ut_file_read's
 *   message).
 * - UT_CONF_DASH: '_' in a key is handed to fn as '-' (tier_day_seconds is
 *   tier-day-seconds), the agent's rule. Not for aquiferd: its math.* keys
 *   hold '_' (math.premium.mibps_per_tib).
 * Pure but for ut_conf_load's read; thread-safe; no state between calls.
 */
#ifndef AQ_UT_CONF_H
#define AQ_UT_CONF_H

#include <stddef.h>

#include "api/api_error.h"

#define UT_CONF_LINE_MAX 8192
#define UT_CONF_FILE_MAX (1024 * 1024)

enum ut_conf_flags {
	UT_CONF_DASH = 1 << 0,       /* '_' in keys reads as '-' */
	UT_CONF_MISSING_OK = 1 << 1, /* ut_conf_load: no file is no setting */
};

/* One setting; AQ_OK to go on, or a code with msg filled. */
typedef int (*ut_conf_fn)(void *arg, const char *key, const char *value, aq_msg *msg);

int ut_conf_parse(const char *name, const char *text, size_t len, unsigned flags, ut_conf_fn fn, void *arg,
		  aq_msg *msg);
int ut_conf_load(const char *path, unsigned flags, ut_conf_fn fn, void *arg, aq_msg *msg);

#endif
