/* api_svcaddr: service addresses, the stable IPv4 addresses clients mount
 * (issue 25). A location's cluster admin gives it a range
 * (serviceAddresses {range, prefixLength, port}); each volume placed in the
 * location gets one address of it for its life, and the node serving the
 * volume holds that address on its --service-interface, so a failover moves
 * the address with the volume and a hard-mounted client resumes. Pure code:
 * parsing, checking, picking, and the intent's codec. */
#ifndef AQ_API_SVCADDR_H
#define AQ_API_SVCADDR_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "api/api_error.h"

/* The intent key of a volume entry that carries its service address. */
#define API_SVCADDR_KEY "serviceAddress"
/* The smallest range a location may have (a /16: at most 65536 addresses). */
#define API_SVCADDR_MIN_PREFIX 16
/* The NFS port a range serves when it names none. */
#define API_SVCADDR_PORT 2049

/* One address as a node holds it: host order address, the prefix length
 * of the subnet it is added with, and the NFS port it must answer on. */
struct api_svcaddr {
	uint32_t addr;
	unsigned prefix;
	unsigned port;
};

/* A location's range: first..last usable (network and broadcast excluded
 * for ranges of /30 and wider), the prefix given to each address, port. */
struct api_svcaddr_range {
	uint32_t net, first, last;
	unsigned range_prefix, prefix, port;
};

/* Parse "a.b.c.d" (host order into *out). AQ_EINVAL otherwise. */
int api_svcaddr_parse_ip(const char *s, uint32_t *out);
/* "a.b.c.d" of addr into buf (16 bytes at least). */
void api_svcaddr_format(uint32_t addr, char *buf, size_t cap);

/* A location's serviceAddresses object (normalised by api_schema_check;
 * NULL: none, fine) checked and parsed into *out (may be NULL): range an
 * IPv4 CIDR A.B.C.D/L with L in API_SVCADDR_MIN_PREFIX..32 and no host bits
 * set, not loopback, multicast, link-local or 0/8; prefixLength (default
 * L) at most L and at least 8; port 1..65535 (default API_SVCADDR_PORT).
 * AQ_EINVAL naming the field. */
int api_svcaddr_range_check(const json_t *sa, struct api_svcaddr_range *out, aq_msg *msg);

/* Do two ranges share an address? */
bool api_svcaddr_overlap(const struct api_svcaddr_range *a, const struct api_svcaddr_range *b);

/* The lowest address of r not in used (a JSON array of "a.b.c.d"
 * strings). AQ_EEXHAUSTED when every address is taken. */
int api_svcaddr_pick(const struct api_svcaddr_range *r, const json_t *used, uint32_t *out, aq_msg *msg);

/* The intent's form: {"address": "a.b.c.d", "prefixLength": N, "port": P}
 * (new reference, NULL on ENOMEM); decode checks every field (AQ_EINVAL). */
json_t *api_svcaddr_encode(const struct api_svcaddr *s);
int api_svcaddr_decode(const json_t *in, struct api_svcaddr *out, aq_msg *msg);

#endif
