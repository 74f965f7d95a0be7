/* fuzz_smb_spnego: libFuzzer harness over the SPNEGO DER decoders: the
 * input is tried as a NegTokenInit and a NegTokenResp, and the inner
 * token of either is handed to the NTLMSSP decoders, as SESSION_SETUP
 * would. */
#include <stdint.h>

#include "agent/smb/smb_ntlm.h"
#include "agent/smb/smb_spnego.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smb_spnego_init i;
	struct smb_spnego_resp r;
	struct smb_ntlm_auth a;
	uint32_t flags;

	if (smb_spnego_init_decode(data, size, &i) == 0 && i.token)
		(void)smb_ntlm_negotiate_decode(i.token, i.token_len, &flags);
	if (smb_spnego_resp_decode(data, size, &r) == 0 && r.token)
		(void)smb_ntlm_auth_decode(r.token, r.token_len, &a);
	return 0;
}
