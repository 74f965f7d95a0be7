/* ut_hex: bounded hex encoding and decoding (see ut_hex.h). */
#include "util/ut_hex.h"

#include <string.h>

#include "api/api_error.h"

int ut_hex_encode(const void *data, size_t n, char *out, size_t cap)
{
	static const char digit[] = "0123456789abcdef";
	const unsigned char *p = data;

	if (cap == 0 || n > (cap - 1) / 2) {
		if (cap)
			out[0] = '\0';
		return AQ_ETOOBIG;
	}
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digit[p[i] >> 4];
		out[2 * i + 1] = digit[p[i] & 15];
	}
	out[2 * n] = '\0';
	return AQ_OK;
}

int ut_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ut_hex_decode(const char *hex, size_t len, void *out, size_t cap, size_t *n)
{
	unsigned char *q = out;

	if (len % 2)
		return AQ_EINVAL;
	if (len / 2 > cap)
		return AQ_ETOOBIG;
	for (size_t i = 0; i < len; i += 2) {
		int hi = ut_hex_value(hex[i]), lo = ut_hex_value(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return AQ_EINVAL;
		q[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	if (n)
		*n = len / 2;
	return AQ_OK;
}

bool ut_hex_valid(const char *s, size_t len)
{
	if (len == 0 || strnlen(s, len + 1) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (ut_hex_value(s[i]) < 0)
			return false;
	return true;
}
