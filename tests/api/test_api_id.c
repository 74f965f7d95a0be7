/* Unit tests for api/api_id.c: the resource ID rule. */
#include "api/api_math.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

/* The ID is refused, and the message names the parameter and states the rule. */
static void expect_refused(const char *id)
{
	aq_msg msg = { .text = { 0 } };
	int rc = api_id_check(id, "volumeId", &msg);

	ck_assert_msg(rc == AQ_EINVAL, "\"%s\": rc %d, want AQ_EINVAL", id ? id : "(null)", rc);
	ck_assert_msg(strstr(msg.text, "volumeId") != NULL, "message \"%s\" lacks the name",
		      msg.text);
	ck_assert_msg(strstr(msg.text, "starting with a letter") != NULL,
		      "message \"%s\" lacks the rule", msg.text);
	ck_assert_int_eq(api_id_check(id, "volumeId", NULL), AQ_EINVAL);
}

static void expect_accepted(const char *id)
{
	aq_msg msg = { .text = { 0 } };
	int rc = api_id_check(id, "volumeId", &msg);

	ck_assert_msg(rc == AQ_OK, "\"%s\": rc %d (%s)", id, rc, msg.text);
}

START_TEST(test_id_accepted)
{
	expect_accepted("a");
	expect_accepted("abc");
	expect_accepted("a1");
	expect_accepted("vol-1");
	expect_accepted("a--b");
	expect_accepted("my-volume-2024");
}
END_TEST

START_TEST(test_id_refused)
{
	expect_refused("");
	expect_refused(NULL);
	expect_refused("1abc");
	expect_refused("A");
	expect_refused("Abc");
	expect_refused("my-Volume-2024");
	expect_refused("-abc");
	expect_refused("abc-");
	expect_refused("a-");
	expect_refused("-");
	expect_refused("1");
	expect_refused("ab_c");
	expect_refused("ab.c");
	expect_refused("ab c");
	expect_refused(" abc");
	expect_refused("abc\n");
	expect_refused("ab/c");
	expect_refused("caf\xc3\xa9");
	expect_refused("\xc3\xa9t\xc3\xa9");
}
END_TEST

START_TEST(test_id_length)
{
	char id[80];
	aq_msg msg = { .text = { 0 } };

	memset(id, 'a', sizeof(id));
	id[63] = '\0';
	expect_accepted(id);
	id[62] = '9';
	expect_accepted(id);
	id[62] = 'a';
	id[63] = 'a';
	id[64] = '\0';
	expect_refused(id);
	ck_assert_int_eq(api_id_check(id, "volumeId", &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "63") != NULL, "message \"%s\" lacks the limit", msg.text);
	id[64] = 'a';
	id[79] = '\0';
	expect_refused(id);
}
END_TEST

START_TEST(test_id_messages)
{
	aq_msg msg = { .text = { 0 } };

	ck_assert_int_eq(api_id_check("ab_c", "storagePoolId", &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "storagePoolId") != NULL, "%s", msg.text);
	ck_assert_msg(strstr(msg.text, "position 3") != NULL, "%s", msg.text);
	ck_assert_int_eq(api_id_check("1abc", "snapshotId", &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "snapshotId \"1abc\" does not start with a letter") != NULL,
		      "%s", msg.text);
	ck_assert_int_eq(api_id_check("abc-", "snapshotId", &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "ends with a hyphen") != NULL, "%s", msg.text);
	/* An unnamed parameter still has a message. */
	msg.text[0] = '\0';
	ck_assert_int_eq(api_id_check("", NULL, &msg), AQ_EINVAL);
	ck_assert(msg.text[0] != '\0');
	/* Success leaves msg alone. */
	memcpy(msg.text, "untouched", sizeof("untouched"));
	ck_assert_int_eq(api_id_check("ok", "volumeId", &msg), AQ_OK);
	ck_assert_str_eq(msg.text, "untouched");
}
END_TEST

START_TEST(test_labels)
{
	aq_msg msg = { .text = { 0 } };
	char long_key[80];

	ck_assert_int_eq(api_label_check("env", "prod", "labels", &msg), AQ_OK);
	ck_assert_int_eq(api_label_check("goog-terraform-provisioned", "true", "labels", &msg), AQ_OK);
	ck_assert_int_eq(api_label_check("a_b-1", "", "labels", &msg), AQ_OK);
	ck_assert_int_eq(api_label_check("\xc3\xa9t\xc3\xa9", "caf\xc3\xa9", "labels", &msg), AQ_OK);
	ck_assert_int_eq(api_label_check("Env", "x", "labels", &msg), AQ_EINVAL);
	ck_assert_msg(strstr(msg.text, "Env") != NULL, "%s", msg.text);
	ck_assert_int_eq(api_label_check("1env", "x", "labels", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_label_check("_env", "x", "labels", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_label_check("", "x", "labels", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_label_check("env", "Prod", "labels", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_label_check("env", "a b", "labels", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_label_check("env", "a.b", "labels", &msg), AQ_EINVAL);
	memset(long_key, 'a', sizeof(long_key));
	long_key[63] = '\0';
	ck_assert_int_eq(api_label_check(long_key, long_key, "labels", &msg), AQ_OK);
	long_key[63] = 'a';
	long_key[64] = '\0';
	ck_assert_int_eq(api_label_check(long_key, "x", "labels", &msg), AQ_EINVAL);
	ck_assert_int_eq(api_label_check("k", long_key, "labels", &msg), AQ_EINVAL);
}
END_TEST

static Suite *id_suite(void)
{
	Suite *s = suite_create("api_id");
	TCase *tc = tcase_create("api_id");

	tcase_add_test(tc, test_id_accepted);
	tcase_add_test(tc, test_id_refused);
	tcase_add_test(tc, test_id_length);
	tcase_add_test(tc, test_id_messages);
	tcase_add_test(tc, test_labels);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(id_suite());
}
