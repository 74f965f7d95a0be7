/* fuzz_cli_hint: libFuzzer harness over cli/cli_hint.c, which reads the
 * message text of aquiferd's error answers (network bytes) and turns the
 * HTTP routes in it into aquifer commands. The input is copied into a
 * NUL-terminated buffer of exactly its size (jansson hands the CLI such a
 * string), so ASan catches any read past the end; the rewrite must never
 * grow the text by more than the commands it names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_hint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct ut_buf out;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ut_buf_init(&out, CLI_BUF_MAX);
	cli_hint_rewrite(text, &out);
	/* each route of at least 9 bytes becomes "aquifer G V ARG": bounded */
	if (!out.err && out.len > 8 * strlen(text) + 64)
		abort();
	ut_buf_cleanup(&out);
	free(text);
	return 0;
}
