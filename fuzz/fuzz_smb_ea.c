/* fuzz_smb_ea: libFuzzer harness over the extended attribute lists a client
 * sends (agent/smb/smb_ea.c): the input is checked as a
 * FILE_FULL_EA_INFORMATION list (SET_INFO, ExtA) and walked as a
 * FILE_GET_EA_INFORMATION list (a QUERY_INFO's names); a list that checks
 * is merged into itself and into nothing (the SET path), the result must
 * check again and hold within SMB_EA_LIST_MAX; every name it holds is
 * found in it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_ea.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[SMB_EA_LIST_MAX], again[SMB_EA_LIST_MAX];
	struct smb_ea_iter it;
	struct smb_ea e, f;
	const uint8_t *name;
	uint8_t nlen;
	size_t len = 0, len2 = 0, n = 0;
	int rc;

	smb_ea_iter_init(&it, data, size);
	while ((rc = smb_ea_get_next(&it, &name, &nlen)) == 1)
		if (name < data || name + nlen >= data + size)
			abort();
	if (smb_ea_check(data, size, &n) != STATUS_SUCCESS)
		return 0;
	(void)smb_ea_any_needed(data, size);
	rc = smb_ea_merge(NULL, 0, data, size, out, sizeof(out), &len);
	if (rc == AQ_OK) {
		if (len > SMB_EA_LIST_MAX || (len && smb_ea_check(out, len, NULL) != STATUS_SUCCESS))
			abort(); /* what we keep, we read */
		smb_ea_iter_init(&it, out, len);
		while (smb_ea_next(&it, &e) == 1)
			if (!smb_ea_find(out, len, e.name, e.name_len, &f))
				abort();
		if (len && smb_ea_merge(out, len, data, size, again, sizeof(again), &len2) != AQ_OK)
			abort(); /* the same SET twice: the same list, which fits */
		if (len && (len2 != len || memcmp(out, again, len) != 0))
			abort();
	} else if (rc != AQ_ETOOBIG) {
		abort();
	}
	return 0;
}
