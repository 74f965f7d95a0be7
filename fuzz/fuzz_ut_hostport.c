/* fuzz_ut_hostport: libFuzzer harness over the HOST:PORT parser
 * (util/ut_hostport.c): arbitrary bytes as --listen text, with and without
 * port 0 and a default port. What parses must be a bounded host of allowed
 * bytes (or an IPv6 literal), a port in range, and must format back into text
 * that parses to the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_hostport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		uint16_t dflt;
		unsigned flags;
	} modes[] = { { 0, 0 }, { 0, UT_HP_PORT0 }, { 2049, 0 } };
	char text[512], back[UT_HOSTPORT_TEXT_MAX];

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct ut_hostport hp, again;
		aq_msg msg = { .text = "" };

		if (ut_hostport_parse(text, modes[i].dflt, modes[i].flags, &hp, &msg) != AQ_OK) {
			if (msg.text[0] == '\0')
				abort(); /* a refusal says why */
			continue;
		}
		if (hp.host[0] == '\0' || strlen(hp.host) >= UT_HOST_MAX || (hp.port == 0 && !(modes[i].flags & UT_HP_PORT0)))
			abort();
		if (!hp.v6 && strspn(hp.host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") !=
				      strlen(hp.host))
			abort();
		if (ut_hostport_format(&hp, back, sizeof(back)) != AQ_OK ||
		    ut_hostport_parse(back, 0, UT_HP_PORT0, &again, &msg) != AQ_OK || strcmp(hp.host, again.host) != 0 ||
		    hp.port != again.port || hp.v6 != again.v6)
			abort();
	}
	return 0;
}
