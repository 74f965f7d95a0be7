/* tb_addr: see tb_addr.h. The parsing is util/ut_hostport's; this keeps
 * the fixtures' IPv4 sockaddr_in. */
#include "bench/tier/tb_addr.h"

#include <string.h>

#include "util/ut_hostport.h"

int tb_parse_addr(const char *s, struct sockaddr_in *a)
{
	struct ut_hostport hp;
	struct sockaddr_storage ss;
	socklen_t len;

	if (ut_hostport_parse(s, 0, 0, &hp, NULL) != AQ_OK || ut_hostport_sockaddr(&hp, &ss, &len, NULL) != AQ_OK ||
	    ss.ss_family != AF_INET)
		return -1;
	memcpy(a, &ss, sizeof(*a));
	return 0;
}
