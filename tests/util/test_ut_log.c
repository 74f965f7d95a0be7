/* Unit tests for util/ut_log.c through a FILE* sink: the line format, level
 * filtering (and arguments not evaluated when filtered), request ids and
 * sources made one token, control bytes escaped, long records cut, the
 * log-level parser, and records of concurrent threads never interleaving. */
#include "util/ut_log.h"

#include <check.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

static FILE *sink;

static void setup(void)
{
	ck_assert_ptr_nonnull(sink = tmpfile());
	ut_log_set_sink(sink);
	ut_log_set_level(UT_LOG_INFO);
}

static void teardown(void)
{
	ut_log_set_sink(NULL);
	fclose(sink);
}

/* Everything written so far, then the sink is emptied. */
static char *drain(void)
{
	static char buf[4 << 20];
	size_t n;

	fflush(sink);
	rewind(sink);
	n = fread(buf, 1, sizeof(buf) - 1, sink);
	ck_assert_uint_lt(n, sizeof(buf) - 1); /* all of it, not a cut */
	buf[n] = '\0';
	ck_assert_int_eq(ftruncate(fileno(sink), 0), 0);
	rewind(sink);
	return buf;
}

static void assert_matches(const char *line, const char *re)
{
	regex_t rx;

	ck_assert_int_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
	ck_assert_msg(regexec(&rx, line, 0, NULL, 0) == 0, "\"%s\" does not match %s", line, re);
	regfree(&rx);
}

#define STAMP "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "

START_TEST(test_format)
{
	UT_INFO("srv_http", "abc123", "volume %s created", "v1");
	assert_matches(drain(), STAMP "info srv_http req=abc123 volume v1 created\n$");
	UT_ERROR("nfs3", "0000002a", "READ failed: %d", -5);
	assert_matches(drain(), STAMP "error nfs3 req=0000002a READ failed: -5\n$");
	UT_WARN("agent_apply", NULL, "no id");
	assert_matches(drain(), STAMP "warn agent_apply req=- no id\n$");
	UT_WARN(NULL, "", "no source");
	assert_matches(drain(), STAMP "warn - req=- no source\n$");
}
END_TEST

static int evaluated;

static const char *count(void)
{
	evaluated++;
	return "x";
}

START_TEST(test_levels)
{
	char *out;

	UT_DEBUG("t", "r", "hidden %s", count());
	ck_assert_str_eq(drain(), "");
	ck_assert_int_eq(evaluated, 0); /* filtered: the arguments cost nothing */
	ck_assert(!ut_log_enabled(UT_LOG_DEBUG));
	ck_assert(ut_log_enabled(UT_LOG_INFO));
	ut_log_set_level(UT_LOG_WARN);
	UT_INFO("t", "r", "hidden");
	UT_WARN("t", "r", "shown w");
	UT_ERROR("t", "r", "shown e");
	out = drain();
	ck_assert_ptr_null(strstr(out, "hidden"));
	ck_assert_ptr_nonnull(strstr(out, " warn t req=r shown w\n"));
	ck_assert_ptr_nonnull(strstr(out, " error t req=r shown e\n"));
	ut_log_set_level(UT_LOG_ERROR);
	UT_WARN("t", "r", "hidden");
	ck_assert_str_eq(drain(), "");
	ut_log_set_level(UT_LOG_DEBUG);
	UT_DEBUG("t", "r", "seen %s", count());
	ck_assert_int_eq(evaluated, 1);
	ck_assert_ptr_nonnull(strstr(drain(), " debug t req=r seen x\n"));
	ck_assert_int_eq(ut_log_get_level(), UT_LOG_DEBUG);
}
END_TEST

START_TEST(test_one_line)
{
	char id[200], *out;

	UT_INFO("src x", "req id\tz", "two\nlines\r and \x1b[31m colour");
	out = drain();
	assert_matches(out, STAMP "info src_x req=req_id_z two\\\\x0alines\\\\x0d and \\\\x1b\\[31m colour\n$");
	memset(id, 'i', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	UT_INFO("s", id, "m");
	out = drain();
	ck_assert_ptr_nonnull(strstr(out, " req=iiii"));
	ck_assert_uint_eq(strspn(strstr(out, "req=") + 4, "i"), UT_LOG_ID_MAX); /* cut at the cap */
}
END_TEST

START_TEST(test_long_record)
{
	static char big[UT_LOG_LINE_MAX * 2];
	char *out;
	size_t n;

	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	UT_INFO("s", "r", "%s", big);
	out = drain();
	n = strlen(out);
	ck_assert_uint_le(n, UT_LOG_LINE_MAX);
	ck_assert_str_eq(out + n - 4, "...\n");
	ck_assert_ptr_eq(strchr(out, '\n'), out + n - 1); /* one line */
	/* escapes that would cross the cap are cut whole, never half written */
	memset(big, '\n', sizeof(big) - 1);
	UT_INFO("s", "r", "%s", big);
	out = drain();
	n = strlen(out);
	ck_assert_uint_le(n, UT_LOG_LINE_MAX);
	ck_assert_str_eq(out + n - 4, "...\n");
	ck_assert_int_eq(memcmp(out + n - 8, "\\x0a...", 7), 0); /* the last escape is whole */
}
END_TEST

START_TEST(test_level_parse)
{
	enum ut_log_level l = UT_LOG_INFO;
	aq_msg m = { .text = "" };

	ck_assert_int_eq(ut_log_level_parse("debug", &l, &m), AQ_OK);
	ck_assert_int_eq(l, UT_LOG_DEBUG);
	ck_assert_int_eq(ut_log_level_parse("error", &l, &m), AQ_OK);
	ck_assert_int_eq(l, UT_LOG_ERROR);
	ck_assert_int_eq(ut_log_level_parse("warn", &l, &m), AQ_OK);
	ck_assert_int_eq(ut_log_level_parse("info", &l, &m), AQ_OK);
	ck_assert_int_eq(l, UT_LOG_INFO);
	ck_assert_int_eq(ut_log_level_parse("verbose", &l, &m), AQ_EINVAL);
	ck_assert_str_eq(m.text, "log-level must be one of error, warn, info, debug, got \"verbose\"");
	ck_assert_int_eq(l, UT_LOG_INFO); /* untouched */
	ck_assert_int_eq(ut_log_level_parse("INFO", &l, &m), AQ_EINVAL);
	ck_assert_int_eq(ut_log_level_parse("", &l, &m), AQ_EINVAL);
	ck_assert_str_eq(ut_log_level_name(UT_LOG_WARN), "warn");
}
END_TEST

#define NTHREADS 4
#define NRECORDS 2000

static void *writer(void *arg)
{
	char req[16];

	snprintf(req, sizeof(req), "t%ld", (long)(intptr_t)arg);
	for (int i = 0; i < NRECORDS; i++)
		UT_INFO("thr", req, "record %d of a text long enough to tear if records interleaved %s", i,
			"................................................................");
	return NULL;
}

START_TEST(test_threads)
{
	pthread_t t[NTHREADS];
	int seen[NTHREADS] = { 0 }, lines = 0;
	char *out, *line, *nl;

	for (long i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, writer, (void *)(intptr_t)i), 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	out = drain();
	for (line = out; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		int th, rec;
		const char *at;

		*nl = '\0';
		at = strstr(line, " req=t");
		ck_assert_msg(at && sscanf(at, " req=t%d record %d", &th, &rec) == 2, "torn: %s", line);
		ck_assert_int_lt(th, NTHREADS);
		ck_assert_int_eq(rec, seen[th]); /* each thread's records whole and in its order */
		ck_assert_ptr_nonnull(strstr(line, "interleaved ................................................................"));
		seen[th]++;
		lines++;
	}
	ck_assert_str_eq(line, ""); /* nothing after the last newline */
	ck_assert_int_eq(lines, NTHREADS * NRECORDS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_log");
	TCase *tc = tcase_create("log");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_levels);
	tcase_add_test(tc, test_one_line);
	tcase_add_test(tc, test_long_record);
	tcase_add_test(tc, test_level_parse);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
