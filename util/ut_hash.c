/* ut_hash: FNV-1a 32 and 64 (see ut_hash.h). */
#include "util/ut_hash.h"

#include <string.h>

uint32_t ut_hash_fnv32_add(uint32_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

uint64_t ut_hash_fnv64_add(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

uint32_t ut_hash_fnv32(const void *data, size_t n)
{
	return ut_hash_fnv32_add(UT_HASH_FNV32_INIT, data, n);
}

uint64_t ut_hash_fnv64(const void *data, size_t n)
{
	return ut_hash_fnv64_add(UT_HASH_FNV64_INIT, data, n);
}

uint32_t ut_hash_fnv32_str(const char *s)
{
	return ut_hash_fnv32(s, strlen(s));
}

uint64_t ut_hash_fnv64_str(const char *s)
{
	return ut_hash_fnv64(s, strlen(s));
}
