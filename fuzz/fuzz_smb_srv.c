/* fuzz_smb_srv: libFuzzer harness over the SMB server's request path
 * (issue 18): the input is a sequence of direct-TCP frames (4-byte length
 * prefix each) served in order on one connection, as the epoll loop would:
 * the frame-length check, SMB1 detection, the compound splitter, the
 * session / signature / tree checks and every handler reachable before and
 * after NEGOTIATE and SESSION_SETUP (SPNEGO and NTLMSSP blobs included),
 * SMB2 CANCEL (sync and async headers) against the waiting requests.
 * No socket: replies pile up in the connection's output queue. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"

static struct vol_store *store;
static struct smb_srv *srv;

static void setup(void)
{
	static const uint8_t key[VOL_KEY_LEN] = { 1 };
	struct smb_srv_user u = { .project = "p", .name = "alice", .uid = 1000, .gid = 1000 };

	if (srv)
		return;
	if (vol_store_new(key, &store) != 0 || smb_srv_new("127.0.0.1:0", store, &srv) != 0)
		abort();
	memset(u.nt_hash, 0x11, sizeof(u.nt_hash));
	smb_srv_set_config(srv, NULL, 0, &u, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smb_conn c = { .fd = -1, .credits = 1, .key = 1 };
	size_t off = 0;

	setup();
	c.srv = srv;
	snprintf(c.peer, sizeof(c.peer), "fuzz");
	while (off + 4 <= size && !c.closing) {
		uint32_t len;
		uint8_t *frame;

		if (smb_wire_frame_len(data + off, c.authed ? SMB_WIRE_FRAME_MAX : SMB_WIRE_FRAME_MAX_PREAUTH, &len) != AQ_OK ||
		    len > size - off - 4)
			break;
		/* the loop hands each frame over in its own allocation */
		if (!(frame = malloc(len)))
			break;
		memcpy(frame, data + off + 4, len);
		smb_dispatch_frame(&c, frame, len);
		free(frame);
		off += 4 + len;
	}
	c.freeing = true; /* as smb_conn_free: waiters go unanswered */
	while (c.sessions)
		smb_sess_free(&c, c.sessions);
	smb_async_conn_gone(&c);
	free(c.out);
	return 0;
}
