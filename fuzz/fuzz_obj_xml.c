/* fuzz_obj_xml: libFuzzer harness over agent/obj/obj_xml.c, the parser of the
 * XML an S3 store sends (ListObjectsV2 pages and error bodies). The input is
 * copied into a buffer of exactly its size, so ASan catches any read past
 * the end; every key handed to the callback must be NUL-terminated within
 * OBJ_KEY_MAX, the token within OBJ_XML_TOKEN_MAX. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/obj/obj_xml.h"

static int key_cb(void *arg, const char *key, uint64_t size)
{
	if (strnlen(key, OBJ_KEY_MAX + 1) > OBJ_KEY_MAX)
		abort();
	return ++*(size_t *)arg > 100000 ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct obj_xml_page page;
	struct obj_xml_error err;
	char *buf = malloc(size ? size : 1);
	size_t n = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (obj_xml_list(buf, size, key_cb, &n, &page) == 0) {
		if (strnlen(page.token, sizeof page.token) >= sizeof page.token)
			abort();
		if (page.keys < n || (page.truncated && !page.token[0]))
			abort();
	}
	if (obj_xml_error(buf, size, &err) == 0 && (!err.code[0] || strnlen(err.code, sizeof err.code) >= sizeof err.code))
		abort();
	free(buf);
	return 0;
}
