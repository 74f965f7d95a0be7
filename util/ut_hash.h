/* ut_hash: FNV-1a, the one non-cryptographic hash of Aquifer, for hash-table
 * slots and cache keys (never for anything a peer could exploit to collide on
 * purpose where that matters: those use a keyed MAC).
 *
 * Contract: FNV-1a as specified (offset basis 2166136261 / 14695981039346656037,
 * primes 16777619 / 1099511628211), over n bytes or a C string without its
 * NUL; the *_add forms continue a hash (start from UT_HASH_FNV32_INIT /
 * UT_HASH_FNV64_INIT) so a key in several parts hashes like their
 * concatenation. Pure, thread-safe.
 */
#ifndef AQ_UT_HASH_H
#define AQ_UT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define UT_HASH_FNV32_INIT 2166136261u
#define UT_HASH_FNV64_INIT 14695981039346656037ull

uint32_t ut_hash_fnv32_add(uint32_t h, const void *data, size_t n);
uint64_t ut_hash_fnv64_add(uint64_t h, const void *data, size_t n);
uint32_t ut_hash_fnv32(const void *data, size_t n);
uint64_t ut_hash_fnv64(const void *data, size_t n);
uint32_t ut_hash_fnv32_str(const char *s);
uint64_t ut_hash_fnv64_str(const char *s);

#endif
