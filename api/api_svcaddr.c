/* api_svcaddr: service address ranges, picks and the intent's codec (see
 * api_svcaddr.h). IPv4 only: an IPv6 range is refused by name (NDP's
 * unsolicited neighbour advertisements are not sent yet). */
#include "api/api_svcaddr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_schema.h"

int api_svcaddr_parse_ip(const char *s, uint32_t *out)
{
	unsigned long part;
	uint32_t v = 0;
	char *end;

	for (int i = 0; i < 4; i++) {
		if (*s < '0' || *s > '9')
			return AQ_EINVAL;
		part = strtoul(s, &end, 10);
		if (part > 255 || end - s > 3 || (end - s > 1 && *s == '0'))
			return AQ_EINVAL;
		v = (v << 8) | (uint32_t)part;
		s = end;
		if (i < 3 && *s++ != '.')
			return AQ_EINVAL;
	}
	if (*s)
		return AQ_EINVAL;
	*out = v;
	return AQ_OK;
}

void api_svcaddr_format(uint32_t a, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static uint32_t mask_of(unsigned len)
{
	return len ? ~(uint32_t)0 << (32 - len) : 0;
}

int api_svcaddr_range_check(const json_t *sa, struct api_svcaddr_range *out, aq_msg *msg)
{
	const char *range = api_json_str(sa, "range", NULL), *slash;
	struct api_svcaddr_range r = { .port = API_SVCADDR_PORT };
	char host[32];
	unsigned long len;
	char *end;

	if (!sa)
		return AQ_OK;
	if (!range)
		return aq_fail(msg, AQ_EINVAL, "serviceAddresses.range is required, e.g. 10.99.0.32/27");
	if (strchr(range, ':'))
		return aq_fail(msg, AQ_EINVAL, "serviceAddresses.range \"%.64s\": only IPv4 ranges are supported", range);
	slash = strchr(range, '/');
	if (!slash || (size_t)(slash - range) >= sizeof(host))
		return aq_fail(msg, AQ_EINVAL, "serviceAddresses.range \"%.64s\" must be an IPv4 CIDR A.B.C.D/LEN", range);
	snprintf(host, sizeof(host), "%.*s", (int)(slash - range), range);
	len = strtoul(slash + 1, &end, 10);
	if (api_svcaddr_parse_ip(host, &r.net) != AQ_OK || *end || end == slash + 1 || len > 32)
		return aq_fail(msg, AQ_EINVAL, "serviceAddresses.range \"%.64s\" must be an IPv4 CIDR A.B.C.D/LEN", range);
	if (len < API_SVCADDR_MIN_PREFIX)
		return aq_fail(msg, AQ_EINVAL, "serviceAddresses.range \"%.64s\" is wider than a /%d", range,
			       API_SVCADDR_MIN_PREFIX);
	if (r.net & ~mask_of((unsigned)len))
		return aq_fail(msg, AQ_EINVAL, "serviceAddresses.range \"%.64s\" has host bits set", range);
	if ((r.net >> 24) == 0 || (r.net >> 24) == 127 || (r.net >> 28) >= 14 || (r.net >> 16) == 0xa9fe)
		return aq_fail(msg, AQ_EINVAL, "serviceAddresses.range \"%.64s\" is not a unicast range hosts can hold "
			       "(loopback, link-local, multicast, 0/8 and 240/4 are refused)", range);
	r.range_prefix = (unsigned)len;
	r.first = r.net;
	r.last = r.net | ~mask_of((unsigned)len);
	if (len <= 30) { /* network and broadcast addresses are nobody's */
		r.first++;
		r.last--;
	}
	r.prefix = (unsigned)len;
	if (json_object_get(sa, "prefixLength")) {
		int64_t p = api_json_int64(sa, "prefixLength", -1);

		if (p < 8 || p > (int64_t)len)
			return aq_fail(msg, AQ_EINVAL, "serviceAddresses.prefixLength must be 8..%lu (the subnet the range "
				       "lies in, no longer than the range's /%lu)", len, len);
		r.prefix = (unsigned)p;
	}
	if (json_object_get(sa, "port")) {
		int64_t p = api_json_int64(sa, "port", -1);

		if (p < 1 || p > 65535)
			return aq_fail(msg, AQ_EINVAL, "serviceAddresses.port must be 1..65535");
		r.port = (unsigned)p;
	}
	if (out)
		*out = r;
	return AQ_OK;
}

bool api_svcaddr_overlap(const struct api_svcaddr_range *a, const struct api_svcaddr_range *b)
{
	uint32_t ae = a->net | ~mask_of(a->range_prefix), be = b->net | ~mask_of(b->range_prefix);

	return a->net <= be && b->net <= ae;
}

static bool used_has(const json_t *used, uint32_t a)
{
	char s[16];
	json_t *u;
	size_t i;

	api_svcaddr_format(a, s, sizeof(s));
	json_array_foreach(used, i, u)
		if (json_is_string(u) && strcmp(json_string_value(u), s) == 0)
			return true;
	return false;
}

int api_svcaddr_pick(const struct api_svcaddr_range *r, const json_t *used, uint32_t *out, aq_msg *msg)
{
	for (uint64_t a = r->first; a <= r->last; a++)
		if (!used_has(used, (uint32_t)a)) {
			*out = (uint32_t)a;
			return AQ_OK;
		}
	return aq_fail(msg, AQ_EEXHAUSTED, "every service address of the location's range is taken (%zu volumes); "
		       "widen serviceAddresses.range", json_array_size(used));
}

json_t *api_svcaddr_encode(const struct api_svcaddr *s)
{
	char ip[16];

	api_svcaddr_format(s->addr, ip, sizeof(ip));
	return json_pack("{s:s,s:i,s:i}", "address", ip, "prefixLength", (int)s->prefix, "port", (int)s->port);
}

int api_svcaddr_decode(const json_t *in, struct api_svcaddr *out, aq_msg *msg)
{
	const json_t *p = json_object_get(in, "prefixLength"), *port = json_object_get(in, "port");
	const char *ip = api_json_str(in, "address", "");
	struct api_svcaddr s;

	if (!json_is_object(in) || api_svcaddr_parse_ip(ip, &s.addr) != AQ_OK)
		return aq_fail(msg, AQ_EINVAL, "serviceAddress.address must be an IPv4 address");
	if (!json_is_integer(p) || json_integer_value(p) < 8 || json_integer_value(p) > 32)
		return aq_fail(msg, AQ_EINVAL, "serviceAddress.prefixLength must be 8..32");
	if (!json_is_integer(port) || json_integer_value(port) < 1 || json_integer_value(port) > 65535)
		return aq_fail(msg, AQ_EINVAL, "serviceAddress.port must be 1..65535");
	s.prefix = (unsigned)json_integer_value(p);
	s.port = (unsigned)json_integer_value(port);
	*out = s;
	return AQ_OK;
}
