/* fuzz_ut_conf: libFuzzer harness over the configuration reader
 * (util/ut_conf.c): arbitrary bytes as a config file, with and without the
 * agent's '_' to '-' rule. Every key handed over must be non-empty, trimmed,
 * free of '=' and LF (a CR inside a line stays, as fgets kept it), and key and value must fit a line; a refusal
 * must explain itself with NAME:LINE:. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/ut_conf.h"

static int check_kv(void *arg, const char *key, const char *value, aq_msg *msg)
{
	size_t kl = strlen(key), vl = strlen(value);
	unsigned flags = *(const unsigned *)arg;

	if (kl == 0 || kl + vl >= UT_CONF_LINE_MAX || strchr(key, '=') || strchr(key, '\n') ||
	    strchr(value, '\n') || key[0] == ' ' || key[0] == '\t' || key[kl - 1] == ' ' ||
	    key[kl - 1] == '\t' || key[0] == '#' || (vl && (strchr(" \t", value[0]) || strchr(" \t", value[vl - 1]))))
		abort();
	if ((flags & UT_CONF_DASH) && strchr(key, '_'))
		abort();
	if (strcmp(key, "refuse") == 0) /* the callback's own refusal travels out */
		return aq_fail(msg, AQ_EINVAL, "refused");
	return AQ_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = { 0, UT_CONF_DASH };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		aq_msg msg = { .text = "" };
		unsigned flags = modes[i];
		int rc = ut_conf_parse("f", (const char *)data, size, flags, check_kv, &flags, &msg);

		if (rc != AQ_OK && (rc != AQ_EINVAL || strncmp(msg.text, "f:", 2) != 0))
			abort();
	}
	return 0;
}
