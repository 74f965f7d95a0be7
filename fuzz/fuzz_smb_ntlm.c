/* fuzz_smb_ntlm: libFuzzer harness over the NTLMSSP decoders: the input is
 * tried as a NEGOTIATE_MESSAGE and as an AUTHENTICATE_MESSAGE; a decoded
 * AUTHENTICATE is checked (blob, AV pairs, MIC) against a fixed NT hash,
 * as the server would after finding the user. */
#include <stdint.h>
#include <string.h>

#include "agent/smb/smb_ntlm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t hash[16] = { 0xa4, 0xf4, 0x9c, 0x40, 0x65, 0x10, 0xbd, 0xca,
					  0xb6, 0x82, 0x4e, 0xe7, 0xc3, 0x0f, 0xd8, 0x52 };
	static const uint8_t sc[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct smb_ntlm_auth a;
	uint32_t flags;
	uint8_t key[16];

	(void)smb_ntlm_negotiate_decode(data, size, &flags);
	if (smb_ntlm_auth_decode(data, size, &a) == 0) {
		struct smb_ntlm_check c = { .nt_hash = hash, .server_challenge = sc, .negotiate = data,
					    .negotiate_len = size < 40 ? size : 40, .challenge = data,
					    .challenge_len = size, .authenticate = data, .authenticate_len = size,
					    .now = 0x01D0AECBADF5A1A1ull, .max_skew = 3000000000ull };

		(void)smb_ntlm_auth_check(&c, &a, key);
	}
	return 0;
}
