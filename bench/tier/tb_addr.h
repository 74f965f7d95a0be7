/* tb_addr: "A.B.C.D:PORT" (util/ut_hostport) for the bench tools and test
 * fixtures (aq-bare-mhd, aq-latproxy, aq-s3lite). IPv4 only; port 1..65535.
 * Returns 0 and fills *a, or -1 for anything else. */
#ifndef AQ_BENCH_TIER_TB_ADDR_H
#define AQ_BENCH_TIER_TB_ADDR_H

#include <netinet/in.h>

int tb_parse_addr(const char *s, struct sockaddr_in *a);

#endif
