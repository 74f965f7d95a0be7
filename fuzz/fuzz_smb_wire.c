/* fuzz_smb_wire: libFuzzer harness over the SMB2/3 wire decoders: the input
 * is one direct-TCP payload; it is tried as an SMB1 NEGOTIATE and as a
 * transform header, then split as a compound and every message handed to
 * the decoder of its command, with the create-context payloads, the
 * VALIDATE_NEGOTIATE_INFO and SRV_COPYCHUNK inputs and the names converted
 * from UTF-16 (a SET_INFO's rename or link target too); a CREATE's contexts also go through smb_ctx_check (ExtA,
 * SecD, AlSi, MxAc, QFid: agent/smb/smb_ctx.c), as a user and as root. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/smb/smb_wire.h"

static void fuzz_name(const uint8_t *p, size_t n)
{
	char out[SMB_WIRE_NAME_MAX * 2 + 1];

	if (p)
		(void)smb_wire_utf16_to_utf8(p, n, out, sizeof(out), NULL);
}

static void fuzz_create(const struct smb_wire_msg *m)
{
	static const struct vol_cred user = { .uid = 1000, .gid = 1000, .ngids = 1, .gids = { 20 } }, root = { 0 };
	struct smb_wire_create_req r;
	struct smb_ctx_req x;
	unsigned k;

	if (smb_wire_create_req_decode(m, &r))
		return;
	fuzz_name(r.name, r.name_len);
	(void)smb_ctx_check(&r, &user, false, &x);
	(void)smb_ctx_check(&r, &user, true, &x);
	(void)smb_ctx_check(&r, &root, false, &x);
	for (k = 0; k < r.ctx_count; k++) {
		struct smb_wire_lease l;
		struct smb_wire_durable_v2 d;

		(void)smb_wire_lease_decode(&r.ctx[k], &l);
		(void)smb_wire_durable_decode(&r.ctx[k], &d);
	}
}

static void fuzz_msg(const struct smb_wire_msg *m)
{
	union {
		struct smb_wire_negotiate_req neg;
		struct smb_wire_session_setup_req ss;
		struct smb_wire_tree_connect_req tc;
		struct smb_wire_close_req close;
		struct smb_wire_fid fid;
		struct smb_wire_read_req rd;
		struct smb_wire_write_req wr;
		struct smb_wire_lock_req lock;
		struct smb_wire_ioctl_req ioctl;
		struct smb_wire_query_dir_req qd;
		struct smb_wire_notify_req nt;
		struct smb_wire_query_info_req qi;
		struct smb_wire_set_info_req si;
		struct smb_wire_break_ack ack;
	} u;
	struct smb_wire_validate_negotiate v;
	struct smb_wire_name_info ni;

	switch (m->hdr.command) {
	case SMB2_NEGOTIATE:
		if (!smb_wire_negotiate_req_decode(m, &u.neg))
			(void)smb_wire_negotiate_pick_dialect(&u.neg, 0x1f);
		break;
	case SMB2_SESSION_SETUP: (void)smb_wire_session_setup_req_decode(m, &u.ss); break;
	case SMB2_TREE_CONNECT:
		if (!smb_wire_tree_connect_req_decode(m, &u.tc))
			fuzz_name(u.tc.path, u.tc.path_len);
		break;
	case SMB2_CREATE: fuzz_create(m); break;
	case SMB2_CLOSE: (void)smb_wire_close_req_decode(m, &u.close); break;
	case SMB2_FLUSH: (void)smb_wire_flush_req_decode(m, &u.fid); break;
	case SMB2_READ: (void)smb_wire_read_req_decode(m, &u.rd); break;
	case SMB2_WRITE: (void)smb_wire_write_req_decode(m, &u.wr); break;
	case SMB2_LOCK: (void)smb_wire_lock_req_decode(m, &u.lock); break;
	case SMB2_IOCTL:
		if (!smb_wire_ioctl_req_decode(m, &u.ioctl) && u.ioctl.input) {
			struct smb_wire_copychunk cc;
			struct smb_wire_chunk ch;
			struct smb_wire_dup d;
			uint64_t a, b;

			(void)smb_wire_validate_negotiate_decode(u.ioctl.input, u.ioctl.input_len, &v);
			(void)smb_wire_range_decode(u.ioctl.input, u.ioctl.input_len, &a, &b);
			(void)smb_wire_dup_decode(u.ioctl.input, u.ioctl.input_len, false, &d);
			(void)smb_wire_dup_decode(u.ioctl.input, u.ioctl.input_len, true, &d);
			if (smb_wire_copychunk_decode(u.ioctl.input, u.ioctl.input_len, &cc) == 0)
				for (uint32_t i = 0; i < cc.count; i++)
					smb_wire_copychunk_chunk(&cc, i, &ch);
		}
		break;
	case SMB2_QUERY_DIRECTORY:
		if (!smb_wire_query_dir_req_decode(m, &u.qd))
			fuzz_name(u.qd.pattern, u.qd.pattern_len);
		break;
	case SMB2_CHANGE_NOTIFY: (void)smb_wire_notify_req_decode(m, &u.nt); break;
	case SMB2_QUERY_INFO: (void)smb_wire_query_info_req_decode(m, &u.qi); break;
	case SMB2_SET_INFO:
		/* the rename's and link's target, whatever the class says */
		if (!smb_wire_set_info_req_decode(m, &u.si) && u.si.data &&
		    !smb_wire_name_info_decode(u.si.data, u.si.data_len, &ni))
			fuzz_name(ni.name, ni.name_len);
		break;
	case SMB2_OPLOCK_BREAK: (void)smb_wire_break_ack_decode(m, &u.ack); break;
	default: (void)smb_wire_empty_req_decode(m); break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smb_wire_chain ch;
	struct smb_wire_msg m;
	struct smb_wire_transform t;
	uint16_t dialect;
	uint32_t len;

	if (size >= 4)
		(void)smb_wire_frame_len(data, SMB_WIRE_FRAME_MAX, &len);
	(void)smb_wire_smb1_negotiate(data, size, &dialect);
	(void)smb_wire_transform_decode(data, size, &t);
	smb_wire_chain_init(&ch, data, size);
	while (smb_wire_chain_next(&ch, &m) == 1)
		fuzz_msg(&m);
	return 0;
}
