/* test_smb_compound: compounded requests (MS-SMB2 3.3.5.2.7) and the
 * access an open was granted, through the server's own dispatcher
 * (smb_harness.h, smbt_send_chain):
 * - related: CREATE then CLOSE of FileId all ones closes the new open;
 * - unrelated: FileId all ones names nothing (FILE_CLOSED), and an
 *   unrelated request ends the chain (a later related one has no open);
 * - the first request related, and the related ones after it:
 *   INVALID_PARAMETER (no previous session), flagged SIGNED with a zero
 *   signature (no session signs them; clients that sign accept that);
 * - a CREATE of the chain that failed is what its related requests answer;
 * - a related request after a FLUSH names the FLUSH's open (FLUSH, FLUSH,
 *   CLOSE: all succeed, the open closed);
 * - a command number that is no command: INVALID_PARAMETER;
 * - READ on an open without FILE_READ_DATA/EXECUTE, WRITE on one without
 *   FILE_WRITE_DATA/APPEND_DATA: ACCESS_DENIED, nothing written;
 * - an FSCTL on a closed FileId: FILE_CLOSED before its code is looked at,
 *   but QUERY_NETWORK_INTERFACE_INFO (FileId all ones) INVALID_DEVICE_REQUEST;
 * - CREATE, a related FSCTL_CREATE_OR_GET_OBJECT_ID and a related CLOSE
 *   (smbtorture smb2.compound.related3): all three succeed, the IOCTL
 *   answers 64 bytes, the open is closed.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define ALL_ACCESS 0x001F01FFu
#define REL SMB2_FLAGS_RELATED_OPERATIONS

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;
static uint32_t got_flags[8]; /* the Flags of chain()'s last answers */

static void setup(void)
{
	smbt_export_up(&ts, &srv, &exp0);
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

static void conn_new(struct smbt_conn *tc)
{
	smbt_conn_export(tc, srv, &ts, 1, 0);
}

/* A CREATE body of name (disposition, access) into b; its length. */
static size_t create_body(uint8_t *b, const char *name, uint32_t disposition, uint32_t access)
{
	return smbl_create_body(b, name, access, 0, 0x40u, disposition);
}

static size_t close_body(uint8_t *b, uint64_t fid)
{
	memset(b, 0, 24);
	smbt_put16(b, 24);
	smbt_put64(b + 8, fid);
	smbt_put64(b + 16, fid);
	return 24;
}

/* Send count messages (commands cmd[i], flags fl[i]) as one frame; the
 * statuses answered into st[], the CREATE's FileId (if any) into *fid. */
static void chain(struct smbt_conn *tc, const uint16_t *cmd, const uint32_t *fl, uint8_t (*bodies)[128],
		  const size_t *n, size_t count, uint32_t *st, uint64_t *fid)
{
	struct smb_wire_hdr h[8];
	const uint8_t *b[8];
	uint8_t frame[8192];
	struct smb_wire_chain ch;
	struct smb_wire_msg m;
	struct smb_wire_hdr rh;
	size_t len, got = 0;

	for (size_t i = 0; i < count; i++) {
		h[i] = (struct smb_wire_hdr){ .command = cmd[i], .flags = fl[i], .message_id = tc->mid++,
					      .tree_id = tc->t->id };
		b[i] = bodies[i];
	}
	smbt_send_chain(tc, h, b, n, count);
	smbt_wait_msg(tc); /* a FLUSH is answered once a worker made it (smb_read.c) */
	ck_assert_int_eq(smbt_recv(tc, frame, sizeof(frame), &len, &rh, NULL), 1);
	smb_wire_chain_init(&ch, frame, len);
	while (smb_wire_chain_next(&ch, &m) == 1) {
		ck_assert_uint_lt(got, count);
		ck_assert_uint_eq(m.hdr.message_id, h[got].message_id);
		st[got] = m.hdr.status;
		got_flags[got] = m.hdr.flags;
		if (m.hdr.command == SMB2_CREATE && m.hdr.status == STATUS_SUCCESS && fid)
			*fid = smb_wire_get_u64(m.p + SMB2_HDR_LEN + 64);
		got++;
	}
	ck_assert_uint_eq(got, count);
}

START_TEST(test_related_and_unrelated)
{
	struct smbt_conn a;
	uint8_t b[3][128];
	size_t n[3];
	uint32_t st[3];
	uint64_t fid = 0;
	const uint16_t cc[3] = { SMB2_CREATE, SMB2_CLOSE, SMB2_CLOSE };

	setup();
	conn_new(&a);
	/* related: the CLOSE closes what the CREATE opened; a second one finds nothing */
	n[0] = create_body(b[0], "f", SMBL_OPEN_IF, ALL_ACCESS);
	n[1] = close_body(b[1], UINT64_MAX);
	n[2] = close_body(b[2], UINT64_MAX);
	chain(&a, cc, (const uint32_t[]){ 0, REL, REL }, b, n, 3, st, &fid);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	ck_assert_uint_eq(st[1], STATUS_SUCCESS);
	ck_assert_uint_eq(st[2], STATUS_FILE_CLOSED);
	ck_assert_ptr_null(a.s->opens);
	/* unrelated: all ones names no open, the CREATE's open stays */
	chain(&a, cc, (const uint32_t[]){ 0, 0, 0 }, b, n, 3, st, &fid);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	ck_assert_uint_eq(st[1], STATUS_FILE_CLOSED);
	ck_assert_uint_eq(st[2], STATUS_FILE_CLOSED);
	ck_assert_ptr_nonnull(a.s->opens);
	/* an unrelated request ends the chain: the related one after it has no open */
	chain(&a, cc, (const uint32_t[]){ 0, 0, REL }, b, n, 3, st, &fid);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	ck_assert_uint_eq(st[1], STATUS_FILE_CLOSED);
	ck_assert_uint_eq(st[2], STATUS_FILE_CLOSED);
	teardown();
}
END_TEST

/* A related request names the FileId the previous one used, whatever
 * made it (3.3.5.2.7.2; smbtorture smb2.compound_async.flush_close). */
START_TEST(test_related_after_flush)
{
	struct smbt_conn a;
	uint8_t b[3][128];
	size_t n[3];
	uint32_t st[3];
	uint64_t fid = 0;

	setup();
	conn_new(&a);
	n[0] = create_body(b[0], "g", SMBL_OPEN_IF, ALL_ACCESS);
	chain(&a, (const uint16_t[]){ SMB2_CREATE }, (const uint32_t[]){ 0 }, b, n, 1, st, &fid);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	/* FLUSH of the open, then a related FLUSH and CLOSE of all ones */
	n[0] = close_body(b[0], fid); /* a FLUSH body has the CLOSE's shape: 24 bytes, FileId at 8 */
	n[1] = close_body(b[1], UINT64_MAX);
	n[2] = close_body(b[2], UINT64_MAX);
	chain(&a, (const uint16_t[]){ SMB2_FLUSH, SMB2_FLUSH, SMB2_CLOSE }, (const uint32_t[]){ 0, REL, REL }, b, n, 3,
	      st, NULL);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(st[i], STATUS_SUCCESS);
	ck_assert_ptr_null(a.s->opens);
	teardown();
}
END_TEST

START_TEST(test_related_object_id)
{
	struct smbt_conn a;
	uint8_t b[3][128] = { { 0 } };
	size_t n[3];
	uint32_t st[3];

	setup();
	conn_new(&a);
	n[0] = create_body(b[0], "oid", SMBL_OPEN_IF, ALL_ACCESS);
	/* IOCTL (MS-SMB2 2.2.31): FileId all ones, no input, 64 bytes out, an FSCTL */
	smbt_put16(b[1], 57);
	smbt_put32(b[1] + 4, FSCTL_CREATE_OR_GET_OBJECT_ID);
	smbt_put64(b[1] + 8, UINT64_MAX);
	smbt_put64(b[1] + 16, UINT64_MAX);
	smbt_put32(b[1] + 24, SMB2_HDR_LEN + 56);
	smbt_put32(b[1] + 44, 64);
	smbt_put32(b[1] + 48, 1);
	n[1] = 56;
	n[2] = close_body(b[2], UINT64_MAX);
	chain(&a, (const uint16_t[]){ SMB2_CREATE, SMB2_IOCTL, SMB2_CLOSE }, (const uint32_t[]){ 0, REL, REL }, b, n, 3,
	      st, NULL);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	ck_assert_uint_eq(st[1], STATUS_SUCCESS);
	ck_assert_uint_eq(st[2], STATUS_SUCCESS);
	ck_assert_ptr_null(a.s->opens);
	teardown();
}
END_TEST

START_TEST(test_invalid_chains)
{
	struct smbt_conn a;
	uint8_t b[3][128];
	size_t n[3];
	uint32_t st[3];
	const uint16_t cc[3] = { SMB2_CREATE, SMB2_CLOSE, SMB2_CLOSE };

	setup();
	conn_new(&a);
	/* the first request related: no previous session, nor for the next related one */
	n[0] = create_body(b[0], "f", SMBL_OPEN_IF, ALL_ACCESS);
	n[1] = close_body(b[1], UINT64_MAX);
	n[2] = close_body(b[2], UINT64_MAX);
	chain(&a, cc, (const uint32_t[]){ REL, REL, 0 }, b, n, 3, st, NULL);
	ck_assert_uint_eq(st[0], STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(st[1], STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(st[2], STATUS_FILE_CLOSED);
	ck_assert_ptr_null(a.s->opens);
	/* no session signs those two, yet they say SIGNED (what signing clients accept) */
	ck_assert(got_flags[0] & SMB2_FLAGS_SIGNED);
	ck_assert(got_flags[1] & SMB2_FLAGS_SIGNED);
	/* a CREATE that fails: its related requests answer its status */
	n[0] = create_body(b[0], "missing", 1 /* FILE_OPEN */, ALL_ACCESS);
	chain(&a, cc, (const uint32_t[]){ 0, REL, REL }, b, n, 3, st, NULL);
	ck_assert_uint_eq(st[0], STATUS_OBJECT_NAME_NOT_FOUND);
	ck_assert_uint_eq(st[1], STATUS_OBJECT_NAME_NOT_FOUND);
	ck_assert_uint_eq(st[2], STATUS_OBJECT_NAME_NOT_FOUND);
	/* a command number that is no command */
	{
		uint8_t body[128] = { 4, 0 };

		memcpy(b[1], body, sizeof(body));
		n[1] = 4;
		chain(&a, (const uint16_t[]){ SMB2_CREATE, 0xFF }, (const uint32_t[]){ 0, REL }, b, n, 2, st, NULL);
		ck_assert_uint_eq(st[1], STATUS_INVALID_PARAMETER);
	}
	teardown();
}
END_TEST

START_TEST(test_access_enforced)
{
	struct smbt_conn a;
	uint8_t b[2][128];
	size_t n[2];
	uint32_t st[2];
	uint64_t ro = 0, wo = 0;
	struct smbl_msg m;

	setup();
	conn_new(&a);
	n[0] = create_body(b[0], "f", SMBL_OPEN_IF, 0x1u | 0x80u); /* read data and attributes */
	chain(&a, (const uint16_t[]){ SMB2_CREATE }, (const uint32_t[]){ 0 }, b, n, 1, st, &ro);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	n[0] = create_body(b[0], "f", SMBL_OPEN_IF, 0x2u | 0x100u); /* write data and attributes */
	chain(&a, (const uint16_t[]){ SMB2_CREATE }, (const uint32_t[]){ 0 }, b, n, 1, st, &wo);
	ck_assert_uint_eq(st[0], STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_write(&a, ro, "x"), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_write(&a, wo, "xyz"), STATUS_SUCCESS);
	{ /* READ of 3 bytes */
		uint8_t body[49] = { 0 };
		struct smb_wire_hdr h = { .command = SMB2_READ };

		smbt_put16(body, 49);
		smbt_put32(body + 4, 3);
		smbt_put64(body + 16, wo);
		smbt_put64(body + 24, wo);
		smbl_send(&a, &h, body, sizeof(body));
		ck_assert_int_eq(smbl_recv(&a, &m), 1);
		ck_assert_uint_eq(m.h.status, STATUS_ACCESS_DENIED);
		smbt_put64(body + 16, ro);
		smbt_put64(body + 24, ro);
		smbl_send(&a, &h, body, sizeof(body));
		ck_assert_int_eq(smbl_recv(&a, &m), 1);
		ck_assert_uint_eq(m.h.status, STATUS_SUCCESS);
		ck_assert_int_eq(memcmp(m.body + 16, "xyz", 3), 0);
	}
	{ /* an FSCTL nobody serves, on a closed FileId: FILE_CLOSED first */
		uint8_t body[56] = { 0 };
		struct smb_wire_hdr h = { .command = SMB2_IOCTL };

		smbt_put16(body, 57);
		smbt_put32(body + 4, 0x00090098u); /* FSCTL_SET_OBJECT_ID */
		smbt_put64(body + 8, 999);
		smbt_put64(body + 16, 999);
		smbt_put32(body + 24, SMB2_HDR_LEN + 56);
		smbt_put32(body + 48, 1);
		smbl_send(&a, &h, body, sizeof(body));
		ck_assert_int_eq(smbl_recv(&a, &m), 1);
		ck_assert_uint_eq(m.h.status, STATUS_FILE_CLOSED);
		smbt_put64(body + 8, ro);
		smbt_put64(body + 16, ro);
		smbl_send(&a, &h, body, sizeof(body));
		ck_assert_int_eq(smbl_recv(&a, &m), 1);
		ck_assert_uint_eq(m.h.status, STATUS_INVALID_DEVICE_REQUEST);
		/* QUERY_NETWORK_INTERFACE_INFO on FileId all ones (what the Linux
		 * client sends at mount): "not supported", not FILE_CLOSED */
		smbt_put32(body + 4, 0x001401FCu);
		smbt_put64(body + 8, UINT64_MAX);
		smbt_put64(body + 16, UINT64_MAX);
		smbl_send(&a, &h, body, sizeof(body));
		ck_assert_int_eq(smbl_recv(&a, &m), 1);
		ck_assert_uint_eq(m.h.status, STATUS_INVALID_DEVICE_REQUEST);
	}
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_compound");
	TCase *tc = tcase_create("compound");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_related_and_unrelated);
	tcase_add_test(tc, test_invalid_chains);
	tcase_add_test(tc, test_related_after_flush);
	tcase_add_test(tc, test_related_object_id);
	tcase_add_test(tc, test_access_enforced);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
