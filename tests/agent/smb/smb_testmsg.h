/* smb_testmsg: building and splitting SMB2 messages in the wire suites. */
#ifndef AQ_TESTS_SMB_TESTMSG_H
#define AQ_TESTS_SMB_TESTMSG_H

#include <check.h>
#include <string.h>

#include "agent/smb/smb_wire.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_hex.h"

/* A one-message frame from hex; m points into buf. */
static inline void one_msg(const char *hex, uint8_t *buf, size_t cap, struct smb_wire_msg *m)
{
	struct smb_wire_chain ch;
	struct smb_wire_msg end;
	size_t n = smb_hex(hex, buf, cap);

	smb_wire_chain_init(&ch, buf, n);
	ck_assert_int_eq(smb_wire_chain_next(&ch, m), 1);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &end), 0);
	ck_assert_int_eq(smb_wire_chain_next(&ch, &end), 0);
	ck_assert_ptr_null(end.p);
}

/* A request header for command (64 bytes) followed by body (n bytes). */
static inline size_t build(uint8_t *out, size_t cap, uint16_t command, uint32_t flags, const uint8_t *body, size_t n)
{
	struct ut_buf b;
	struct smb_wire_hdr h = { .command = command, .flags = flags, .message_id = 7, .session_id = 9, .tree_id = 3 };

	ut_buf_init(&b, 1u << 16);
	smb_wire_hdr_encode(&b, &h);
	smb_wire_put_bytes(&b, body, n);
	ck_assert_int_eq(b.err, AQ_OK);
	ck_assert_uint_le(b.len, cap);
	memcpy(out, ut_buf_bytes(&b), b.len);
	n = b.len;
	ut_buf_cleanup(&b);
	return n;
}

static inline void msg_of(const uint8_t *p, size_t n, struct smb_wire_msg *m)
{
	struct smb_wire_chain ch;

	smb_wire_chain_init(&ch, p, n);
	ck_assert_int_eq(smb_wire_chain_next(&ch, m), 1);
}

#endif
