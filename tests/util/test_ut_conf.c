/* Unit tests for util/ut_conf.c: the key = value format of aquiferd's
 * --config (comments, blanks, CR LF, '=' in values, no trailing comments),
 * every refusal with its line number, the callback's failure, caps, and the
 * shipped example deploy/aquiferd.conf.in read as aquiferd reads it. */
#include "util/ut_conf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/aqt.h"

#define MAXKV 64

struct kv {
	int n;
	char key[MAXKV][64], val[MAXKV][256];
	const char *refuse; /* a key the callback refuses */
};

static int collect(void *arg, const char *key, const char *value, aq_msg *msg)
{
	struct kv *kv = arg;

	if (kv->refuse && strcmp(key, kv->refuse) == 0)
		return aq_fail(msg, AQ_EINVAL, "%s must be a number, got \"%s\"", key, value);
	ck_assert_int_lt(kv->n, MAXKV);
	snprintf(kv->key[kv->n], sizeof(kv->key[0]), "%s", key);
	snprintf(kv->val[kv->n], sizeof(kv->val[0]), "%s", value);
	kv->n++;
	return AQ_OK;
}

static int parse(const char *text, unsigned flags, struct kv *kv, aq_msg *msg)
{
	memset(kv->key, 0, sizeof(kv->key));
	kv->n = 0;
	return ut_conf_parse("t.conf", text, strlen(text), flags, collect, kv, msg);
}

START_TEST(test_format)
{
	struct kv kv = { 0 };
	aq_msg msg = { .text = "" };
	const char *text = "# a comment\n"
			   "\n"
			   "   \t\n"
			   "listen = 127.0.0.1:8080\n"
			   "  # an indented comment\n"
			   "db=/var/lib/aq.db\r\n"
			   "\tpublic-url \t=\t https://x:1/a=b \n"
			   "empty =\n"
			   "note = a # not a comment\n"
			   "last = no newline";

	ck_assert_int_eq(parse(text, 0, &kv, &msg), AQ_OK);
	ck_assert_int_eq(kv.n, 6);
	ck_assert_str_eq(kv.key[0], "listen");
	ck_assert_str_eq(kv.val[0], "127.0.0.1:8080");
	ck_assert_str_eq(kv.key[1], "db");
	ck_assert_str_eq(kv.val[1], "/var/lib/aq.db"); /* CR gone */
	ck_assert_str_eq(kv.key[2], "public-url");
	ck_assert_str_eq(kv.val[2], "https://x:1/a=b"); /* split at the first '=' */
	ck_assert_str_eq(kv.key[3], "empty");
	ck_assert_str_eq(kv.val[3], "");
	ck_assert_str_eq(kv.val[4], "a # not a comment");
	ck_assert_str_eq(kv.key[5], "last");
	ck_assert_str_eq(kv.val[5], "no newline");
}
END_TEST

START_TEST(test_missing_equals)
{
	struct kv kv = { 0 };
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(parse("a = 1\n# c\nlisten 127.0.0.1:8080\nb = 2\n", 0, &kv, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "t.conf:3: expected 'key = value'");
	ck_assert_int_eq(kv.n, 1); /* stopped there: b never handed over */
	ck_assert_int_eq(parse("\n\n = value\n", 0, &kv, &msg), AQ_EINVAL); /* no key */
	ck_assert_str_eq(msg.text, "t.conf:3: expected 'key = value'");
	ck_assert_int_eq(parse("\r\r\r = v\n", 0, &kv, &msg), AQ_EINVAL); /* a key of CRs only (found by fuzz_ut_conf) */
	ck_assert_str_eq(msg.text, "t.conf:1: expected 'key = value'");
	ck_assert_int_eq(parse("=\n", 0, &kv, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "t.conf:1: expected 'key = value'");
}
END_TEST

START_TEST(test_callback_refuses)
{
	struct kv kv = { .refuse = "workers" };
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(parse("a = 1\r\n\r\nworkers = many\nb = 2\n", 0, &kv, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "t.conf:3: workers must be a number, got \"many\"");
	ck_assert_int_eq(kv.n, 1);
}
END_TEST

START_TEST(test_dash)
{
	struct kv kv = { 0 };
	aq_msg msg = { .text = "" };

	ck_assert_int_eq(parse("tier_day_seconds = 86_400\n", UT_CONF_DASH, &kv, &msg), AQ_OK);
	ck_assert_str_eq(kv.key[0], "tier-day-seconds");
	ck_assert_str_eq(kv.val[0], "86_400"); /* values are not touched */
	ck_assert_int_eq(parse("tier_day_seconds = 1\n", 0, &kv, &msg), AQ_OK);
	ck_assert_str_eq(kv.key[0], "tier_day_seconds");
}
END_TEST

START_TEST(test_caps_and_nul)
{
	static char text[UT_CONF_LINE_MAX + 64];
	struct kv kv = { 0 };
	aq_msg msg = { .text = "" };

	/* a line of exactly UT_CONF_LINE_MAX bytes is read */
	memset(text, ' ', UT_CONF_LINE_MAX);
	memcpy(text, "k = v", 5);
	text[UT_CONF_LINE_MAX] = '\n';
	text[UT_CONF_LINE_MAX + 1] = '\0';
	ck_assert_int_eq(parse(text, 0, &kv, &msg), AQ_OK);
	ck_assert_str_eq(kv.val[0], "v");
	/* one byte more is refused, not cut into two lines */
	memset(text, ' ', UT_CONF_LINE_MAX + 1);
	memcpy(text, "k = v", 5);
	memcpy(text + UT_CONF_LINE_MAX + 1, "\nx = 1\n", 8);
	ck_assert_int_eq(parse(text, 0, &kv, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "t.conf:1: line is longer than 8192 bytes");
	ck_assert_int_eq(kv.n, 0);
	ck_assert_int_eq(ut_conf_parse("t.conf", "a = 1\nb = x\0y\n", 14, 0, collect, &kv, &msg), AQ_EINVAL);
	ck_assert_str_eq(msg.text, "t.conf:2: holds a NUL byte");
}
END_TEST

START_TEST(test_load)
{
	char path[] = "/tmp/ut_conf_XXXXXX";
	int fd = mkstemp(path);
	struct kv kv = { 0 };
	aq_msg msg = { .text = "" };
	FILE *f;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "# x\nworkers = 4\nbad\n", 20), 20);
	close(fd);
	ck_assert_int_eq(ut_conf_load(path, 0, collect, &kv, &msg), AQ_EINVAL);
	ck_assert_int_eq(kv.n, 1);
	ck_assert_ptr_nonnull(strstr(msg.text, ":3: expected 'key = value'"));
	ck_assert_int_eq(strncmp(msg.text, path, strlen(path)), 0); /* PATH:LINE: */
	/* larger than the file cap: refused whole */
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	for (int i = 0; i < UT_CONF_FILE_MAX / 16 + 1; i++)
		fputs("# padding line.\n", f);
	fclose(f);
	kv.n = 0;
	ck_assert_int_eq(ut_conf_load(path, 0, collect, &kv, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "larger than"));
	unlink(path);
	ck_assert_int_eq(ut_conf_load(path, 0, collect, &kv, &msg), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(msg.text, "cannot open config file /tmp/ut_conf_"));
	ck_assert_int_eq(ut_conf_load(path, UT_CONF_MISSING_OK, collect, &kv, &msg), AQ_OK);
	ck_assert_int_eq(kv.n, 0);
}
END_TEST

/* The example aquiferd ships: its two settings, and every commented-out
 * "# key = value" line, uncommented, is a setting too. */
START_TEST(test_shipped_example)
{
	FILE *f = fopen(UT_TOP_SRCDIR "/deploy/aquiferd.conf.in", "r");
	char line[1024], text[16384];
	size_t off = 0;
	int nset = 0;
	struct kv kv = { 0 };
	aq_msg msg = { .text = "" };

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ut_conf_load(UT_TOP_SRCDIR "/deploy/aquiferd.conf.in", 0, collect, &kv, &msg), AQ_OK);
	ck_assert_int_eq(kv.n, 2);
	ck_assert_str_eq(kv.key[0], "listen");
	ck_assert_str_eq(kv.val[0], "127.0.0.1:8080");
	ck_assert_str_eq(kv.key[1], "db");
	while (fgets(line, sizeof(line), f)) {
		size_t k = strspn(line + 2, "abcdefghijklmnopqrstuvwxyz.-"), n;

		if (strncmp(line, "# ", 2) != 0 || k == 0 || strncmp(line + 2 + k, " = ", 3) != 0)
			continue; /* prose, not a commented-out setting */
		n = strlen(line + 2);
		ck_assert_uint_lt(off + n, sizeof(text));
		memcpy(text + off, line + 2, n);
		off += n;
		nset++;
	}
	fclose(f);
	ck_assert_int_eq(ut_conf_parse("example", text, off, 0, collect, &kv, &msg), AQ_OK);
	ck_assert_int_gt(nset, 10);
	ck_assert_int_eq(kv.n, 2 + nset); /* each commented-out line is one setting */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_conf");
	TCase *tc = tcase_create("conf");

	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_missing_equals);
	tcase_add_test(tc, test_callback_refuses);
	tcase_add_test(tc, test_dash);
	tcase_add_test(tc, test_caps_and_nul);
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_shipped_example);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
