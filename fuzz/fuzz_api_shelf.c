/* fuzz_api_shelf: libFuzzer harness over a /v1/shelves body (network
 * bytes): the JSON through the Shelf field table (api_schema_check) and
 * api_shelf_check (portal addresses, NQN, ceilings), as srv_shelf.c runs
 * them. The input is copied into a buffer of exactly its size (ASan catches
 * any read past the end); a refusal must explain itself, and an accepted
 * nvmeof shelf's NQN must be one the agent's --shelf parser takes too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_resource.h"
#include "api/api_shelf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	aq_msg msg = { .text = "" };
	json_t *in, *doc = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	in = json_loadb(text, size, 0, NULL);
	if (in && api_schema_check(api_shelf_fields, in, true, "shelf", &doc, &msg) == AQ_OK) {
		if (api_shelf_check(NULL, doc, &msg) == AQ_OK) {
			const char *nqn = api_json_str(doc, "nqn", NULL);

			if (strcmp(api_json_str(doc, "backend", ""), "nvmeof") == 0 &&
			    (!nqn || !api_shelf_nqn_ok(nqn, strlen(nqn))))
				abort();
		} else if (!msg.text[0]) {
			abort(); /* a refusal explains itself */
		}
	}
	json_decref(doc);
	json_decref(in);
	free(text);
	return 0;
}
