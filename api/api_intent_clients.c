/* api_intent_clients: the allowedClients parser of the intent contract
 * (api_intent.h), apart from the JSON codecs so that the volume store links
 * it without jansson: the API, the agent and the store parse one way. */
#include "api/api_intent.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

int api_intent_clients_parse(const char *list, const char *where, struct api_intent_net *nets, size_t *n,
			     aq_msg *msg)
{
	const char *s = list;
	size_t count = 0;

	if (!*s)
		return aq_fail(msg, AQ_EINVAL, "%s is empty; give IPv4 addresses or CIDRs, comma-separated", where);
	if (strlen(list) > API_INTENT_CLIENTS_LEN)
		return aq_fail(msg, AQ_EINVAL, "%s is %zu bytes long; at most %d are allowed", where, strlen(list),
			       API_INTENT_CLIENTS_LEN);
	while (*s) {
		size_t k = strcspn(s, ",");
		char item[48], *slash;
		struct in_addr a;
		long bits = 32;

		while (k && *s == ' ')
			s++, k--;
		if (k == 0 || k >= sizeof(item))
			goto bad;
		memcpy(item, s, k);
		item[k] = '\0';
		while (k && item[k - 1] == ' ')
			item[--k] = '\0';
		slash = strchr(item, '/');
		if (slash) {
			char *end;

			*slash++ = '\0';
			bits = strtol(slash, &end, 10);
			if (!*slash || *end || bits < 0 || bits > 32)
				goto bad;
		}
		if (inet_pton(AF_INET, item, &a) != 1)
			goto bad;
		if (count == API_INTENT_MAX_CLIENTS)
			return aq_fail(msg, AQ_EINVAL, "%s lists more than %d addresses or CIDRs; use wider CIDRs or another rule",
				       where, API_INTENT_MAX_CLIENTS);
		if (nets) {
			nets[count].mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
			nets[count].addr = ntohl(a.s_addr) & nets[count].mask;
		}
		count++;
		s += strcspn(s, ",");
		if (*s == ',')
			s++;
	}
	if (n)
		*n = count;
	return AQ_OK;
bad:
	return aq_fail(msg, AQ_EINVAL, "%s: \"%.64s\" is not an IPv4 address or CIDR (e.g. 10.0.0.0/8,192.168.1.5)", where, list);
}
