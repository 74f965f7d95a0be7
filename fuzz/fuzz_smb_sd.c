/* fuzz_smb_sd: libFuzzer harness over the security descriptor decoder (a
 * SET_INFO security buffer): a descriptor that decodes is re-encoded with
 * every part, decoded again (it must), and mapped to POSIX; the input is
 * also tried as a SID string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_sd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct smb_sd sd, again; /* 10 KB each: off the stack */
	struct ut_buf b;
	struct smb_sd_sid sid;
	char str[256];
	uint32_t uid, gid, mode;
	unsigned have;

	if (size < sizeof(str)) {
		memcpy(str, data, size);
		str[size] = 0;
		if (smb_sd_sid_from_str(str, &sid) == 0 && smb_sd_sid_to_str(&sid, str, sizeof(str)) != 0)
			abort();
	}
	if (smb_sd_decode(data, size, &sd) != 0)
		return 0;
	(void)smb_sd_to_unix(&sd, &uid, &gid, &mode, &have);
	ut_buf_init(&b, SMB_SD_MAX);
	if (smb_sd_encode(&b, &sd, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL | SMB_SD_SACL) == 0 &&
	    smb_sd_decode(ut_buf_bytes(&b), ut_buf_len(&b), &again) != 0)
		abort(); /* what we write, we read */
	ut_buf_cleanup(&b);
	return 0;
}
