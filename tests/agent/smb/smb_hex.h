/* smb_hex: decode the hex strings the SMB test vectors are written in. */
#ifndef AQ_TESTS_SMB_HEX_H
#define AQ_TESTS_SMB_HEX_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Hex (spaces allowed) into out[cap]; returns the byte count. Aborts the
 * test on a bad digit or overflow. */
static inline size_t smb_hex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;

		if (*hex == ' ')
			continue;
		if (*hex >= '0' && *hex <= '9')
			v = *hex - '0';
		else if (*hex >= 'a' && *hex <= 'f')
			v = *hex - 'a' + 10;
		else if (*hex >= 'A' && *hex <= 'F')
			v = *hex - 'A' + 10;
		else
			ck_abort_msg("bad hex digit %c", *hex);
		if (hi < 0) {
			hi = v;
			continue;
		}
		ck_assert_uint_lt(n, cap);
		out[n++] = (uint8_t)(hi << 4 | v);
		hi = -1;
	}
	ck_assert_int_lt(hi, 0);
	return n;
}

#define ck_assert_hex_eq(buf, len, hex)                                               \
	do {                                                                          \
		uint8_t want_[4096];                                                  \
		size_t wn_ = smb_hex(hex, want_, sizeof(want_));                      \
		ck_assert_uint_eq((len), wn_);                                        \
		ck_assert_msg(!memcmp((buf), want_, wn_), "bytes differ from %s", #hex); \
	} while (0)

#endif
