/* ut_log: the levelled logger (see ut_log.h). A record is formatted into a
 * stack buffer, made one line, then written with a single fwrite while the
 * sink lock is held; the level is an atomic so that the test in UT_LOG needs
 * no lock. */
#include "util/ut_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

#include "util/ut_clock.h"

static const char *const log_names[] = {
	[UT_LOG_ERROR] = "error",
	[UT_LOG_WARN] = "warn",
	[UT_LOG_INFO] = "info",
	[UT_LOG_DEBUG] = "debug",
};

static atomic_int log_level = UT_LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_sink; /* NULL: stderr; guarded by log_lock */

int ut_log_level_parse(const char *text, enum ut_log_level *level, aq_msg *msg)
{
	for (size_t i = 0; i < sizeof(log_names) / sizeof(log_names[0]); i++)
		if (strcmp(text, log_names[i]) == 0) {
			*level = (enum ut_log_level)i;
			return AQ_OK;
		}
	return aq_fail(msg, AQ_EINVAL, "log-level must be one of error, warn, info, debug, got \"%.64s\"", text);
}

const char *ut_log_level_name(enum ut_log_level level)
{
	return (unsigned)level < sizeof(log_names) / sizeof(log_names[0]) ? log_names[level] : "?";
}

void ut_log_set_level(enum ut_log_level level)
{
	atomic_store(&log_level, (int)level);
}

enum ut_log_level ut_log_get_level(void)
{
	return (enum ut_log_level)atomic_load(&log_level);
}

bool ut_log_enabled(enum ut_log_level level)
{
	return (int)level <= atomic_load_explicit(&log_level, memory_order_relaxed);
}

void ut_log_set_sink(FILE *f)
{
	pthread_mutex_lock(&log_lock);
	log_sink = f;
	pthread_mutex_unlock(&log_lock);
}

/* A source or request id as one token: printable, no space, bounded. */
static size_t log_id(char *out, const char *id)
{
	size_t n = 0;

	if (!id || !*id)
		id = "-";
	for (; id[n] && n < UT_LOG_ID_MAX; n++)
		out[n] = (id[n] > ' ' && id[n] < 0x7f) ? id[n] : '_';
	return n;
}

void ut_log_write(enum ut_log_level level, const char *src, const char *req, const char *fmt, ...)
{
	char text[UT_LOG_LINE_MAX], line[UT_LOG_LINE_MAX + 8];
	size_t n = 0, cap = UT_LOG_LINE_MAX - 4; /* room for "...\n" */
	va_list ap;
	bool cut;
	int tn;

	if (ut_clock_format(ut_clock_real_ns(), 3, line, sizeof(line)) == AQ_OK)
		n = strlen(line);
	n += (size_t)snprintf(line + n, sizeof(line) - n, " %s ", ut_log_level_name(level));
	n += log_id(line + n, src);
	memcpy(line + n, " req=", 5);
	n += 5;
	n += log_id(line + n, req);
	line[n++] = ' ';
	va_start(ap, fmt);
	tn = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cut = tn < 0 || (size_t)tn >= sizeof(text);
	if (tn < 0)
		text[0] = '\0';
	for (const char *p = text; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (n + 4 > cap) {
			cut = true;
			break;
		}
		if (c < ' ' || c == 0x7f)
			n += (size_t)snprintf(line + n, 5, "\\x%02x", c);
		else
			line[n++] = (char)c;
	}
	if (cut) { /* n <= cap here: the "..." and the newline fit */
		memcpy(line + n, "...", 3);
		n += 3;
	}
	line[n++] = '\n';
	pthread_mutex_lock(&log_lock);
	fwrite(line, 1, n, log_sink ? log_sink : stderr);
	fflush(log_sink ? log_sink : stderr);
	pthread_mutex_unlock(&log_lock);
}
