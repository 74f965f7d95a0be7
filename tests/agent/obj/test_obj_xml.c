/* test_obj_xml: agent/obj/obj_xml.c on crafted S3 answers: a ListObjectsV2
 * page (keys, sizes, truncation, token, entities), error bodies, and the
 * malformed or oversized inputs it must refuse with -EIO. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/obj/obj_xml.h"
#include "tests/lib/aqt.h"

struct got {
	char keys[8][64];
	uint64_t sizes[8];
	size_t n;
};

static int got_cb(void *arg, const char *key, uint64_t size)
{
	struct got *g = arg;

	if (g->n < 8) {
		snprintf(g->keys[g->n], sizeof g->keys[0], "%s", key);
		g->sizes[g->n] = size;
	}
	g->n++;
	return 0;
}

static int list(const char *xml, struct got *g, struct obj_xml_page *p)
{
	memset(g, 0, sizeof *g);
	return obj_xml_list(xml, strlen(xml), got_cb, g, p);
}

#define HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"

START_TEST(list_page)
{
	static struct obj_xml_page p;
	struct got g;
	const char *xml = HEAD "<Name>b</Name><IsTruncated>true</IsTruncated>"
		"<NextContinuationToken>tok/+=&amp;</NextContinuationToken>"
		"<Contents><Key>a/b&amp;c&#x41;&#66;&lt;&gt;&quot;&apos;</Key><ETag>&quot;x&quot;</ETag>"
		"<Size>18446744073709551615</Size></Contents>\n"
		"<!-- a comment <Contents> --><Contents><Size>0</Size><Key>a/d</Key><Owner><ID>1</ID></Owner></Contents>"
		"<Contents><Key/><Size>5</Size></Contents></ListBucketResult>";

	ck_assert_int_eq(list(xml, &g, &p), 0);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_uint_eq(p.keys, 3);
	ck_assert_str_eq(g.keys[0], "a/b&cAB<>\"'");
	ck_assert(g.sizes[0] == UINT64_MAX);
	ck_assert_str_eq(g.keys[1], "a/d");
	ck_assert_uint_eq(g.sizes[1], 0);
	ck_assert_str_eq(g.keys[2], "");
	ck_assert(p.truncated);
	ck_assert_str_eq(p.token, "tok/+=&");
	ck_assert_int_eq(list(HEAD "<IsTruncated>false</IsTruncated></ListBucketResult>", &g, &p), 0);
	ck_assert(!p.truncated);
	ck_assert_uint_eq(g.n, 0);
}
END_TEST

static int stop_cb(void *arg, const char *key, uint64_t size)
{
	return 7;
}

START_TEST(list_cb_stops)
{
	static struct obj_xml_page p;
	const char *xml = HEAD "<Contents><Key>a</Key><Size>1</Size></Contents><Contents><Key>b</Key><Size>1</Size></Contents>";

	ck_assert_int_eq(obj_xml_list(xml, strlen(xml), stop_cb, NULL, &p), 7);
	ck_assert_uint_eq(p.keys, 1);
}
END_TEST

START_TEST(list_refused)
{
	static struct obj_xml_page p;
	static const char *bad[] = {
		HEAD "<Contents><Key>a</Key></Contents>",                          /* no Size */
		HEAD "<Contents><Size>1</Size></Contents>",                        /* no Key */
		HEAD "<Contents><Key>a</Key><Size>18446744073709551616</Size></Contents>", /* overflow */
		HEAD "<Contents><Key>a</Key><Size>-1</Size></Contents>",
		HEAD "<Contents><Key>a</Key><Size></Size></Contents>",
		HEAD "<Contents><Key>a&bogus;</Key><Size>1</Size></Contents>",     /* unknown entity */
		HEAD "<Contents><Key>a&#0;</Key><Size>1</Size></Contents>",        /* NUL */
		HEAD "<Contents><Key>a&#233;</Key><Size>1</Size></Contents>",      /* not ASCII */
		HEAD "<Contents><Key>a&#x41</Key><Size>1</Size></Contents>",       /* no ';' */
		HEAD "<Contents><Key><![CDATA[a]]></Key><Size>1</Size></Contents>", /* CDATA in a field */
		HEAD "<Contents><Key>a<b/></Key><Size>1</Size></Contents>",        /* child in a field */
		HEAD "<Contents><Key>a</Size><Size>1</Size></Contents>",           /* wrong end tag */
		HEAD "<Contents><Contents><Key>a</Key><Size>1</Size></Contents></Contents>",
		HEAD "<Contents><Key>a</Key><Size>1</Size>",                       /* unfinished */
		HEAD "<Contents><Key>a</Key><Size>1</Size></Contents",              /* truncated tag */
		HEAD "<IsTruncated>true</IsTruncated>",                            /* more, but no token */
		"<!DOCTYPE x [<!ENTITY e \"boom\">]><ListBucketResult/>",
		"<a x=\"unterminated>",
		"<>",
		"<!-- never closed",
	};
	struct got g;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(list(bad[i], &g, &p) == -EIO, "accepted #%zu: %s", i, bad[i]);
}
END_TEST

START_TEST(list_bounds)
{
	static struct obj_xml_page p;
	size_t cap = OBJ_KEY_MAX + 200 + OBJ_XML_TOKEN_MAX;
	char *xml = malloc(cap), *key = malloc(OBJ_KEY_MAX + 2), *tok = malloc(OBJ_XML_TOKEN_MAX + 2);
	struct got g;

	memset(key, 'k', OBJ_KEY_MAX);
	key[OBJ_KEY_MAX] = '\0';
	snprintf(xml, cap, "<Contents><Key>%s</Key><Size>1</Size></Contents>", key);
	ck_assert_int_eq(list(xml, &g, &p), 0);  /* OBJ_KEY_MAX fits */
	ck_assert_uint_eq(g.n, 1);
	key[OBJ_KEY_MAX] = 'k';
	key[OBJ_KEY_MAX + 1] = '\0';
	snprintf(xml, cap, "<Contents><Key>%s</Key><Size>1</Size></Contents>", key);
	ck_assert_int_eq(list(xml, &g, &p), -EIO);
	memset(tok, 't', OBJ_XML_TOKEN_MAX + 1);
	tok[OBJ_XML_TOKEN_MAX + 1] = '\0';
	snprintf(xml, cap, "<IsTruncated>true</IsTruncated><NextContinuationToken>%s</NextContinuationToken>", tok);
	ck_assert_int_eq(list(xml, &g, &p), -EIO);
	/* the parser stops at len: a key cut by len is unfinished, not read on */
	const char *ok = "<Contents><Key>abc</Key><Size>1</Size></Contents>";
	ck_assert_int_eq(obj_xml_list(ok, strlen(ok) - 1, got_cb, &g, &p), -EIO);
	ck_assert_int_eq(obj_xml_list(ok, 0, got_cb, &g, &p), 0);
	/* a body over OBJ_XML_BODY_MAX is refused before any parsing */
	ck_assert_int_eq(obj_xml_list(ok, (size_t)OBJ_XML_BODY_MAX + 1, got_cb, &g, &p), -EIO);
	free(xml);
	free(key);
	free(tok);
}
END_TEST

START_TEST(error_body)
{
	struct obj_xml_error e;
	const char *xml = "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
			  "<Message>Reduce &lt;rate&gt;</Message><RequestId>1</RequestId></Error>";
	char big[1200];

	ck_assert_int_eq(obj_xml_error(xml, strlen(xml), &e), 0);
	ck_assert_str_eq(e.code, "SlowDown");
	ck_assert_str_eq(e.message, "Reduce <rate>");
	ck_assert_int_eq(obj_xml_error("<Error><Message>m</Message></Error>", 35, &e), -EIO);
	ck_assert_str_eq(e.code, "");
	ck_assert_int_eq(obj_xml_error("not xml at all", 14, &e), -EIO);
	ck_assert_int_eq(obj_xml_error("", 0, &e), -EIO);
	/* a long message is cut to fit, not refused */
	int n = snprintf(big, sizeof big, "<Error><Code>X</Code><Message>");
	memset(big + n, 'm', 1000);
	snprintf(big + n + 1000, sizeof big - (size_t)n - 1000, "</Message></Error>");
	ck_assert_int_eq(obj_xml_error(big, strlen(big), &e), 0);
	ck_assert_uint_eq(strlen(e.message), sizeof e.message - 1);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("obj_xml");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, list_page);
	tcase_add_test(tc, list_cb_stops);
	tcase_add_test(tc, list_refused);
	tcase_add_test(tc, list_bounds);
	tcase_add_test(tc, error_body);
	suite_add_tcase(su, tc);
	return aqt_run(su);
}
