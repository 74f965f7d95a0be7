/* ut_hostport: "HOST:PORT" as the programs take it (--listen, --nfs-listen,
 * an agent's nfsAddress), with IPv6 in brackets: "[::1]:2049".
 *
 * Contract of ut_hostport_parse(text, default_port, flags, out, msg):
 * - HOST is a name or IPv4 address (letters, digits, '-', '.', '_'; 1 to 253
 *   bytes) or, in brackets, an IPv6 address inet_pton accepts. An unbracketed
 *   HOST with a ':' is refused ("an IPv6 address goes in brackets"), as is an
 *   empty one.
 * - PORT is 1 to 5 decimal digits and nothing else, 1..65535; 0 too with
 *   UT_HP_PORT0 (a listener that lets the kernel pick). No ":PORT" is refused,
 *   unless default_port is not 0: then out->port is default_port.
 * - AQ_OK with out filled (host without brackets, v6 set for a bracketed
 *   one); AQ_EINVAL with msg quoting text and saying what is wrong; out is
 *   written only on success.
 * ut_hostport_sockaddr: the numeric address of a parsed HOST:PORT ("localhost"
 * is 127.0.0.1); AQ_EINVAL for a name (this module never resolves names).
 * ut_hostport_format: "host:port" or "[v6]:port" back; AQ_ETOOBIG if cap is
 * too small (out is then "", if cap > 0).
 * Pure (no DNS), thread-safe.
 */
#ifndef AQ_UT_HOSTPORT_H
#define AQ_UT_HOSTPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "api/api_error.h"

#define UT_HOST_MAX 254              /* 253 bytes of a DNS name and the NUL */
#define UT_HOSTPORT_TEXT_MAX (UT_HOST_MAX + 8)

enum ut_hostport_flags {
	UT_HP_PORT0 = 1 << 0, /* port 0 is allowed */
};

struct ut_hostport {
	char host[UT_HOST_MAX];
	uint16_t port;
	bool v6;
};

int ut_hostport_parse(const char *text, uint16_t default_port, unsigned flags, struct ut_hostport *out,
		      aq_msg *msg);
int ut_hostport_sockaddr(const struct ut_hostport *hp, struct sockaddr_storage *ss, socklen_t *len,
			 aq_msg *msg);
int ut_hostport_format(const struct ut_hostport *hp, char *out, size_t cap);

#endif
