/* fuzz_smb_srv: libFuzzer harness over the SMB server's request path
 * (issue 18): the input is a sequence of direct-TCP frames (4-byte length
 * prefix each) served in order on one connection, as the epoll loop would:
 * the frame-length check, SMB1 detection, the compound splitter, the
 * session / signature / tree checks and every handler reachable before and
 * after NEGOTIATE and SESSION_SETUP (SPNEGO and NTLMSSP blobs included),
 * SMB2 CANCEL (sync and async headers) against the waiting requests,
 * and a second connection (a frame whose length prefix starts 0x80) for
 * binds of the first one's sessions (multichannel: channels, their keys,
 * a session moving when its first connection goes).
 * No socket: replies pile up in the connections' output queues. */
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

/* Drop c as smb_conn_free does (no socket): its channels, its sessions
 * (or their move to the other connection), its waiters. */
static void conn_gone(struct smb_conn *c)
{
	c->freeing = true; /* waiters go unanswered */
	smb_read_conn_gone(c); /* first, as smb_conn_free: its jobs and parked frames go */
	(void)smb_sess_conn_gone(c);
	while (c->sessions)
		smb_sess_free(c, c->sessions);
	smb_async_conn_gone(c);
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c->out);
	free(c->in_room); /* a big frame's buffer kept for the next (smb_conn_in_keep) */
	ut_buf_cleanup(&c->rsp);
	ut_buf_cleanup(&c->seal); /* an encrypted reply's room (smb_dispatch_send_encrypted) */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* two connections of the server, so that a SESSION_SETUP binding one
	 * to the other's session (multichannel) is reachable: a frame whose
	 * length prefix starts 0x80 goes to the second */
	struct smb_conn c[2] = { { .fd = -1, .credits = 1, .key = 1 }, { .fd = -1, .credits = 1, .key = 2 } };
	size_t off = 0;

	setup();
	for (int i = 0; i < 2; i++) {
		c[i].srv = srv;
		snprintf(c[i].peer, sizeof(c[i].peer), "fuzz%d", i);
	}
	c[0].next = &c[1];
	c[1].prev = &c[0];
	srv->conns = &c[0];
	while (off + 4 <= size) {
		struct smb_conn *x = &c[data[off] == 0x80];
		uint8_t pfx[4] = { 0, data[off + 1], data[off + 2], data[off + 3] };
		uint32_t len;
		uint8_t *frame;

		if (x->closing ||
		    smb_wire_frame_len(pfx, x->authed ? SMB_WIRE_FRAME_MAX : SMB_WIRE_FRAME_MAX_PREAUTH, &len) != AQ_OK ||
		    (data[off] != 0 && data[off] != 0x80) || len > size - off - 4)
			break;
		/* the loop hands each frame over in its own allocation, through
		 * the path it takes: unsealed, admitted (QoS), served */
		if (!(frame = malloc(len)))
			break;
		memcpy(frame, data + off + 4, len);
		if (smb_dispatch_recv(x, frame, len) == QOS_PARKED)
			smb_dispatch_resume(x); /* takes frame */
		off += 4 + len;
	}
	conn_gone(&c[0]);
	conn_gone(&c[1]);
	return 0;
}
