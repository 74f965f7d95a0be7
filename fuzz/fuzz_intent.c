/* fuzz_intent: libFuzzer harness over the agent's intent decoders
 * (api/api_intent.c, api_intent_backup.c): arbitrary bytes as a volume
 * entry, its snapshot fields (restoreSource included), a delete entry, a
 * backup job and a backup report, and an allowedClients list. A decoded
 * entry must be within every limit of api_intent.h and encode back into an
 * entry that decodes to the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_intent.h"
#include "api/api_intent_backup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct api_intent_volume v, w;
	static struct api_intent_snapset ss;
	struct api_intent_backup b, c;
	struct api_intent_backup_state st;
	struct api_intent_delete d;
	struct api_intent_net nets[API_INTENT_MAX_CLIENTS];
	char text[API_INTENT_CLIENTS_LEN + 64];
	json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL), *out;
	size_t n = 0;

	if (in && api_intent_volume_decode(in, &v, NULL) == AQ_OK) {
		if (v.nrules > API_INTENT_MAX_RULES || strlen(v.share) > API_INTENT_SHARE_LEN)
			abort();
		out = api_intent_volume_encode(&v);
		if (!out || api_intent_volume_decode(out, &w, NULL) != AQ_OK || memcmp(&v, &w, sizeof(v)) != 0)
			abort(); /* what the agent keeps must survive a round trip */
		json_decref(out);
	}
	if (in)
		api_intent_delete_decode(in, &d, NULL);
	if (in && api_intent_snapset_decode(in, &ss, NULL) == AQ_OK &&
	    (ss.nsnaps > API_INTENT_MAX_SNAPSHOTS || ss.ndeletes > API_INTENT_MAX_SNAPSHOTS ||
	     (ss.restore && (strlen(ss.restore_id) != 16 || strlen(ss.restore_key) != 64 || ss.clone))))
		abort();
	if (in && api_intent_backup_decode(in, &b, NULL) == AQ_OK) {
		out = api_intent_backup_encode(&b);
		if (!out || api_intent_backup_decode(out, &c, NULL) != AQ_OK || memcmp(&b, &c, sizeof(b)) != 0)
			abort();
		json_decref(out);
	}
	if (in && api_intent_backup_state_decode(in, &st, NULL) == AQ_OK && st.bytes_done > st.bytes_total)
		abort();
	json_decref(in);
	if (size < sizeof(text)) {
		memcpy(text, data, size);
		text[size] = '\0';
		if (api_intent_clients_parse(text, "c", nets, &n, NULL) == AQ_OK && n > API_INTENT_MAX_CLIENTS)
			abort();
	}
	return 0;
}
