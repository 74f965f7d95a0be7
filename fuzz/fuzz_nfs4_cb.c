/* fuzz_nfs4_cb: libFuzzer harness over the decoder of the replies an
 * NFSv4.1 client sends on the backchannel (agent/nfs4/nfs4_cb.c,
 * nfs4_cb_decode: RPC reply header, CB_COMPOUND4res with CB_SEQUENCE,
 * CB_RECALL and CB_GETATTR results, the last with its fattr4), the decoder of a CB_NULL probe's reply
 * (nfs4_cb_decode_null), and over the server's reply hook (nfs4_cb_reply:
 * the probe match, the decoder, then the lookup of the session the reply
 * answers). The input is one record from its xid. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdlib.h>

#include "agent/nfs4/nfs4.h"
#include "agent/nfs4/nfs4_internal.h"

static struct nfs4_srv *srv;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct nfs4_cb_res r;
	uint32_t xid;
	bool ok;

	if (!srv && nfs4_srv_new(NULL, &srv) != 0)
		abort();
	if (nfs4_cb_decode(data, len, &r) == 0 && (r.nres > NFS4_CB_MAX_RES || (r.seq_ok && !r.accepted)))
		abort(); /* a decoded reply is within its caps */
	if (nfs4_cb_decode(data, len, &r) == 0 && r.ga_ok && !r.accepted)
		abort(); /* CB_GETATTR's attributes come only in an accepted reply */
	if (nfs4_cb_decode_null(data, len, &xid, &ok) == 0 && len < 12)
		abort(); /* a reply header is at least xid, REPLY, reply_stat */
	nfs4_cb_reply(srv, 1, data, len);
	return 0;
}
