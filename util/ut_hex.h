/* ut_hex: hexadecimal text of bytes and back, always bounded.
 *
 * Contract:
 * - ut_hex_encode: n bytes as 2n lowercase digits and a NUL in out. AQ_OK, or
 *   AQ_ETOOBIG when cap < 2n + 1 (out is then "", if cap > 0).
 * - ut_hex_decode: len digits (either case) into len/2 bytes of out; *n (may
 *   be NULL) gets the count. AQ_EINVAL for an odd len or a byte that is not a
 *   digit; AQ_ETOOBIG when cap < len/2. Nothing is published on failure but
 *   out may hold partial bytes.
 * - ut_hex_value: 0..15 for a digit of either case, -1 otherwise.
 * - ut_hex_valid: whether s holds exactly len digits and nothing else
 *   (len 0 is not valid): for fixed-width ids such as a 16-digit fsid.
 * Pure, thread-safe.
 */
#ifndef AQ_UT_HEX_H
#define AQ_UT_HEX_H

#include <stdbool.h>
#include <stddef.h>

int ut_hex_encode(const void *data, size_t n, char *out, size_t cap);
int ut_hex_decode(const char *hex, size_t len, void *out, size_t cap, size_t *n);
int ut_hex_value(char c);
bool ut_hex_valid(const char *s, size_t len);

#endif
