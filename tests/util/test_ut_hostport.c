/* Unit tests for util/ut_hostport.c: names, IPv4, [IPv6] with and without a
 * port, every bad port (0, 65536, signs, blanks, letters, too many digits),
 * unbracketed IPv6, broken brackets, hosts too long or with stray bytes, the
 * default port, numeric addresses and formatting back. */
#include "util/ut_hostport.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/aqt.h"

#define EXPECT_BAD(in, dflt, flags, needle)                                                       \
	do {                                                                                      \
		struct ut_hostport hp_ = { .host = "untouched", .port = 7 };                      \
		aq_msg m_ = { .text = "" };                                                               \
		ck_assert_int_eq(ut_hostport_parse((in), (dflt), (flags), &hp_, &m_), AQ_EINVAL);  \
		ck_assert_msg(strstr(m_.text, (needle)) != NULL, "%s: message \"%s\" lacks \"%s\"", \
			      (in), m_.text, (needle));                                           \
		ck_assert_str_eq(hp_.host, "untouched"); /* nothing published */                  \
		ck_assert_uint_eq(hp_.port, 7);                                                   \
	} while (0)

static struct ut_hostport ok(const char *text, uint16_t dflt, unsigned flags)
{
	struct ut_hostport hp;
	aq_msg m = { .text = "" };

	ck_assert_msg(ut_hostport_parse(text, dflt, flags, &hp, &m) == AQ_OK, "%s: %s", text, m.text);
	return hp;
}

START_TEST(test_good)
{
	struct ut_hostport hp;

	hp = ok("127.0.0.1:8080", 0, 0);
	ck_assert_str_eq(hp.host, "127.0.0.1");
	ck_assert_uint_eq(hp.port, 8080);
	ck_assert(!hp.v6);
	hp = ok("node-1.example_a.com:1", 0, 0);
	ck_assert_str_eq(hp.host, "node-1.example_a.com");
	ck_assert_uint_eq(hp.port, 1);
	hp = ok("localhost:65535", 0, 0);
	ck_assert_uint_eq(hp.port, 65535);
	hp = ok("[::1]:2049", 0, 0);
	ck_assert_str_eq(hp.host, "::1");
	ck_assert_uint_eq(hp.port, 2049);
	ck_assert(hp.v6);
	hp = ok("[fe80::1:2:3:4]:80", 0, 0);
	ck_assert_str_eq(hp.host, "fe80::1:2:3:4");
	hp = ok("[::ffff:10.0.0.1]:9", 0, 0);
	ck_assert_str_eq(hp.host, "::ffff:10.0.0.1");
	hp = ok("0.0.0.0:0", 0, UT_HP_PORT0);
	ck_assert_uint_eq(hp.port, 0);
	hp = ok("h:08080", 0, 0); /* digits are digits */
	ck_assert_uint_eq(hp.port, 8080);
}
END_TEST

START_TEST(test_default_port)
{
	struct ut_hostport hp;

	hp = ok("10.1.2.3", 2049, 0);
	ck_assert_str_eq(hp.host, "10.1.2.3");
	ck_assert_uint_eq(hp.port, 2049);
	hp = ok("[::1]", 2049, 0);
	ck_assert_str_eq(hp.host, "::1");
	ck_assert_uint_eq(hp.port, 2049);
	hp = ok("10.1.2.3:7", 2049, 0); /* a port given wins */
	ck_assert_uint_eq(hp.port, 7);
	EXPECT_BAD("10.1.2.3", 0, 0, "the port is missing");
	EXPECT_BAD("[::1]", 0, 0, "the port is missing");
	EXPECT_BAD("10.1.2.3:", 2049, 0, "the port must be a number from 1 to 65535");
}
END_TEST

START_TEST(test_bad_ports)
{
	EXPECT_BAD("h:0", 0, 0, "the port must be a number from 1 to 65535, got \"0\"");
	EXPECT_BAD("h:65536", 0, 0, "got \"65536\"");
	EXPECT_BAD("h:99999", 0, UT_HP_PORT0, "from 0 to 65535");
	EXPECT_BAD("h:123456", 0, 0, "got \"123456\"");
	EXPECT_BAD("h:000001", 0, 0, "from 1 to 65535"); /* more than 5 digits */
	EXPECT_BAD("h:-1", 0, 0, "got \"-1\"");
	EXPECT_BAD("h:+80", 0, 0, "got \"+80\"");
	EXPECT_BAD("h: 80", 0, 0, "got \" 80\"");
	EXPECT_BAD("h:80 ", 0, 0, "got \"80 \"");
	EXPECT_BAD("h:http", 0, 0, "got \"http\"");
	EXPECT_BAD("h:80x", 0, 0, "got \"80x\"");
	EXPECT_BAD("h:", 0, 0, "got \"\"");
	EXPECT_BAD("[::1]:0", 0, 0, "from 1 to 65535");
	EXPECT_BAD("[::1]:65536", 0, 0, "from 1 to 65535");
}
END_TEST

START_TEST(test_bad_hosts)
{
	char longhost[300];

	EXPECT_BAD("", 0, 0, "the host is empty");
	EXPECT_BAD(":8080", 0, 0, "the host is empty");
	EXPECT_BAD("::1:2049", 0, 0, "the host is empty");
	EXPECT_BAD("fe80::1:2049", 0, 0, "an IPv6 address goes in brackets");
	EXPECT_BAD("a:b:c", 0, 0, "in brackets");
	EXPECT_BAD("[::1:2049", 0, 0, "the ']' is missing");
	EXPECT_BAD("[]:80", 0, 0, "expected an IPv6 address in the brackets");
	EXPECT_BAD("[10.0.0.1]:80", 0, 0, "is not an IPv6 address");
	EXPECT_BAD("[::1]80", 0, 0, "expected ':PORT' after the ']'");
	EXPECT_BAD("[::1]x:80", 0, 0, "after the ']'");
	EXPECT_BAD("ho st:80", 0, 0, "letters, digits");
	EXPECT_BAD("h/x:80", 0, 0, "letters, digits");
	EXPECT_BAD("user@h:80", 0, 0, "letters, digits");
	EXPECT_BAD("http://h:80", 0, 0, "in brackets");
	memset(longhost, 'a', 254);
	memcpy(longhost + 254, ":80", 4);
	EXPECT_BAD(longhost, 0, 0, "longer than 253 bytes");
	longhost[253] = '\0';
	ck_assert_uint_eq(strlen(ok(longhost, 1, 0).host), 253); /* exactly the cap */
}
END_TEST

START_TEST(test_sockaddr)
{
	struct ut_hostport hp = ok("localhost:8080", 0, 0);
	struct sockaddr_storage ss;
	socklen_t len = 0;
	aq_msg m = { .text = "" };
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)&ss;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)&ss;

	ck_assert_int_eq(ut_hostport_sockaddr(&hp, &ss, &len, &m), AQ_OK);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_uint_eq(len, sizeof(struct sockaddr_in));
	ck_assert_uint_eq(ntohs(s4->sin_port), 8080);
	ck_assert_uint_eq(ntohl(s4->sin_addr.s_addr), 0x7f000001u);
	hp = ok("[::1]:2049", 0, 0);
	ck_assert_int_eq(ut_hostport_sockaddr(&hp, &ss, &len, &m), AQ_OK);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_uint_eq(ntohs(s6->sin6_port), 2049);
	ck_assert(IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr));
	hp = ok("node.example:80", 0, 0);
	ck_assert_int_eq(ut_hostport_sockaddr(&hp, &ss, &len, &m), AQ_EINVAL);
	ck_assert_ptr_nonnull(strstr(m.text, "\"node.example\" is not an IPv4 or [IPv6] address"));
	hp = ok("300.1.1.1:80", 0, 0);
	ck_assert_int_eq(ut_hostport_sockaddr(&hp, &ss, &len, &m), AQ_EINVAL);
}
END_TEST

START_TEST(test_format)
{
	char out[UT_HOSTPORT_TEXT_MAX];
	struct ut_hostport hp = ok("[fe80::1]:2049", 0, 0);

	ck_assert_int_eq(ut_hostport_format(&hp, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "[fe80::1]:2049");
	hp = ok("10.0.0.1:80", 0, 0);
	ck_assert_int_eq(ut_hostport_format(&hp, out, sizeof(out)), AQ_OK);
	ck_assert_str_eq(out, "10.0.0.1:80");
	ck_assert_int_eq(ut_hostport_format(&hp, out, 11), AQ_ETOOBIG); /* needs 12 */
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(ut_hostport_format(&hp, out, 12), AQ_OK);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ut_hostport");
	TCase *tc = tcase_create("hostport");

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_default_port);
	tcase_add_test(tc, test_bad_ports);
	tcase_add_test(tc, test_bad_hosts);
	tcase_add_test(tc, test_sockaddr);
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
