/* fuzz_fh: libFuzzer harness over file-handle verification: arbitrary bytes
 * must never pass the MAC (a pass would be a forgery). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/vol/vol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vol_store *s;
	uint8_t key[VOL_KEY_LEN];

	if (!s) {
		memset(key, 0x5a, sizeof(key));
		if (vol_store_new(key, &s) != 0)
			abort();
	}
	if (vol_fh_verify(s, data, size) == 0)
		abort(); /* forged handle accepted */
	return 0;
}
