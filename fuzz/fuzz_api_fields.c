/* fuzz_api_fields: libFuzzer harness over api/api_fields.c, which parses the
 * `fields` query parameter (network bytes) and filters an answer with it.
 * The input is copied into a NUL-terminated buffer of exactly its size, so
 * ASan catches any read past the end; a parsed selection must apply to a
 * document without failing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_fields.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char doc_text[] =
		"{\"name\":\"n\",\"a\":{\"b\":[{\"c\":1,\"d\":[true]},2]},\"volumes\":[{\"name\":\"v\",\"state\":\"READY\"}]}";
	char *spec = malloc(size + 1);
	aq_msg msg = { .text = "" };
	json_t *tree = NULL, *doc, *part;

	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	doc = json_loads(doc_text, 0, NULL);
	if (api_fields_parse(spec, &tree, &msg) == AQ_OK) {
		if (!json_is_object(tree))
			abort();
		part = api_fields_apply(tree, doc);
		if (doc && !part)
			abort();
		json_decref(part);
	} else if (!msg.text[0]) {
		abort(); /* a refusal explains itself */
	}
	json_decref(tree);
	json_decref(doc);
	free(spec);
	return 0;
}
