/* ut_hostport: the HOST:PORT parser (see ut_hostport.h). It reads the text
 * once, left to right, with every length checked before a copy, so it is
 * safe on anything a peer or a config file holds (fuzz/fuzz_ut_hostport.c). */
#include "util/ut_hostport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#define HP_NAME_MAX 253

static bool hp_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.' || c == '_';
}

/* PORT: 1-5 digits, within range. */
static int hp_port(const char *text, const char *p, unsigned flags, uint16_t *port, aq_msg *msg)
{
	size_t n = strspn(p, "0123456789");
	unsigned long v = 0;

	if (n == 0 || p[n] != '\0' || n > 5)
		goto bad;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(p[i] - '0');
	if (v > 65535 || (v == 0 && !(flags & UT_HP_PORT0)))
		goto bad;
	*port = (uint16_t)v;
	return AQ_OK;
bad:
	return aq_fail(msg, AQ_EINVAL, "\"%.300s\": the port must be a number from %d to 65535, got \"%.20s\"", text,
		       (flags & UT_HP_PORT0) ? 0 : 1, p);
}

int ut_hostport_parse(const char *text, uint16_t default_port, unsigned flags, struct ut_hostport *out,
		      aq_msg *msg)
{
	struct ut_hostport hp = { .port = default_port };
	const char *h = text, *rest;
	size_t hl;

	if (text[0] == '[') {
		struct in6_addr a6;
		const char *close = strchr(text, ']');

		if (!close)
			return aq_fail(msg, AQ_EINVAL, "\"%.300s\": expected [IPV6]:PORT, the ']' is missing", text);
		h = text + 1;
		hl = (size_t)(close - h);
		if (hl == 0 || hl >= sizeof(hp.host))
			return aq_fail(msg, AQ_EINVAL, "\"%.300s\": expected an IPv6 address in the brackets", text);
		memcpy(hp.host, h, hl);
		hp.host[hl] = '\0';
		if (inet_pton(AF_INET6, hp.host, &a6) != 1)
			return aq_fail(msg, AQ_EINVAL, "\"%.300s\": \"%s\" is not an IPv6 address", text, hp.host);
		hp.v6 = true;
		rest = close + 1;
		if (*rest != '\0' && *rest != ':')
			return aq_fail(msg, AQ_EINVAL, "\"%.300s\": expected ':PORT' after the ']'", text);
	} else {
		hl = strcspn(text, ":");
		rest = text + hl;
		if (hl == 0)
			return aq_fail(msg, AQ_EINVAL, "\"%.300s\": expected HOST:PORT, the host is empty", text);
		if (*rest == ':' && strchr(rest + 1, ':'))
			return aq_fail(msg, AQ_EINVAL, "\"%.300s\": an IPv6 address goes in brackets: [ADDRESS]:PORT",
				       text);
		if (hl > HP_NAME_MAX)
			return aq_fail(msg, AQ_EINVAL, "\"%.60s...\": the host is longer than %d bytes", text,
				       HP_NAME_MAX);
		for (size_t i = 0; i < hl; i++)
			if (!hp_name_char(text[i]))
				return aq_fail(msg, AQ_EINVAL,
					       "\"%.300s\": the host may hold letters, digits, '-', '.' and '_' only",
					       text);
		memcpy(hp.host, text, hl);
		hp.host[hl] = '\0';
	}
	if (*rest == ':') {
		if (hp_port(text, rest + 1, flags, &hp.port, msg) != AQ_OK)
			return AQ_EINVAL;
	} else if (default_port == 0) {
		return aq_fail(msg, AQ_EINVAL, "\"%.300s\": expected HOST:PORT, the port is missing", text);
	}
	*out = hp;
	return AQ_OK;
}

int ut_hostport_sockaddr(const struct ut_hostport *hp, struct sockaddr_storage *ss, socklen_t *len,
			 aq_msg *msg)
{
	struct sockaddr_storage s = { 0 };

	if (hp->v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)(void *)&s;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(hp->port);
		if (inet_pton(AF_INET6, hp->host, &s6->sin6_addr) != 1)
			goto bad;
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)(void *)&s;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(hp->port);
		if (inet_pton(AF_INET, strcmp(hp->host, "localhost") == 0 ? "127.0.0.1" : hp->host, &s4->sin_addr) != 1)
			goto bad;
		*len = sizeof(*s4);
	}
	*ss = s;
	return AQ_OK;
bad:
	return aq_fail(msg, AQ_EINVAL, "\"%s\" is not an IPv4 or [IPv6] address", hp->host);
}

int ut_hostport_format(const struct ut_hostport *hp, char *out, size_t cap)
{
	int n = snprintf(out, cap, hp->v6 ? "[%s]:%u" : "%s:%u", hp->host, (unsigned)hp->port);

	if (n >= 0 && (size_t)n < cap)
		return AQ_OK;
	if (cap)
		out[0] = '\0';
	return AQ_ETOOBIG;
}
