/* test_smb_sd: SIDs, ACLs, self-relative descriptors and their POSIX
 * mapping (agent/smb/smb_sd.c).
 *
 * Vectors: [DTYP] MS-DTYP 2.4.2.4 well-known SIDs (S-1-1-0 Everyone,
 * S-1-5-18 LocalSystem, S-1-5-32-544 BUILTIN\Administrators) laid out per
 * 2.4.2.2; [SAMBA] the descriptor "O:BAD:(A;;0xf01ff;;;WD)" in the binary
 * form Samba's Kerberos claims tests use for msDS-GroupMSAMembership.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "agent/smb/smb_sd.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_hex.h"
#include "tests/lib/aqt.h"

#define SAMBA_SD                                                                                           \
	"0100048014000000000000000000000024000000"                                                         \
	"01020000000000052000000020020000"                                                                 \
	"02001c000100000000001400ff010f000101000000000001" "00000000"

START_TEST(test_sid_wellknown)
{
	static const struct {
		const char *str, *hex;
	} v[] = {
		{ "S-1-1-0", "010100000000000100000000" },
		{ "S-1-5-18", "010100000000000512000000" },
		{ "S-1-5-32-544", "01020000000000052000000020020000" },
		{ "S-1-22-1-1000", "0102000000000016" "01000000e8030000" },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t bin[64];
		size_t n = smb_hex(v[i].hex, bin, sizeof(bin));
		struct smb_wire_cur c;
		struct smb_sd_sid s, t;
		struct ut_buf b;
		char str[SMB_SD_SID_STR_MAX];

		smb_wire_cur_init(&c, bin, n);
		ck_assert_int_eq(smb_sd_sid_decode(&c, &s), AQ_OK);
		ck_assert_uint_eq(smb_wire_left(&c), 0);
		ck_assert_uint_eq(smb_sd_sid_size(&s), n);
		ck_assert_int_eq(smb_sd_sid_to_str(&s, str, sizeof(str)), AQ_OK);
		ck_assert_str_eq(str, v[i].str);
		ck_assert_int_eq(smb_sd_sid_from_str(v[i].str, &t), AQ_OK);
		ck_assert(smb_sd_sid_eq(&s, &t));
		ut_buf_init(&b, 64);
		smb_sd_sid_encode(&b, &t);
		ck_assert_int_eq(memcmp(ut_buf_bytes(&b), bin, n), 0);
		ck_assert_uint_eq(b.len, n);
		ut_buf_cleanup(&b);
		smb_wire_cur_init(&c, bin, n - 1); /* truncated */
		ck_assert_int_eq(smb_sd_sid_decode(&c, &s), AQ_EINVAL);
	}
	{
		struct smb_sd_sid s;

		smb_sd_sid_unix_group(100, &s);
		ck_assert(smb_sd_sid_eq(&s, &(struct smb_sd_sid){ .revision = 1, .count = 2, .authority = 22,
								   .sub = { 2, 100 } }));
		ck_assert(smb_sd_sid_eq(&smb_sd_everyone, &(struct smb_sd_sid){ .count = 1, .authority = 1 }));
	}
}
END_TEST

START_TEST(test_sid_strings)
{
	struct smb_sd_sid s;
	char str[SMB_SD_SID_STR_MAX], tiny[8];
	static const char *const bad[] = {
		"S-1-", "S-2-5", "S-1-5-", "S-1-5--1", "S-1-5-x", "S-1-5-4294967296", "S-1-281474976710656",
		"S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16", "S-1-5 ", "S-1--5", "S-1-0x",
	};

	/* [DTYP] 2.4.2.1: an authority of 2^32 or more is written in hex */
	ck_assert_int_eq(smb_sd_sid_from_str("S-1-0x123456789ABC-7", &s), AQ_OK);
	ck_assert_uint_eq(s.authority, 0x123456789ABCull);
	ck_assert_int_eq(smb_sd_sid_to_str(&s, str, sizeof(str)), AQ_OK);
	ck_assert_str_eq(str, "S-1-0x123456789ABC-7");
	ck_assert_int_eq(smb_sd_sid_from_str("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-4294967295", &s), AQ_OK);
	ck_assert_uint_eq(s.count, 15);
	ck_assert_int_eq(smb_sd_sid_to_str(&s, tiny, sizeof(tiny)), AQ_ETOOBIG);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(smb_sd_sid_from_str(bad[i], &s) == AQ_EINVAL, "%s", bad[i]);
}
END_TEST

START_TEST(test_sd_samba)
{
	uint8_t bin[128];
	size_t n = smb_hex(SAMBA_SD, bin, sizeof(bin));
	struct smb_sd sd;
	struct smb_sd_sid ba;
	struct ut_buf b;

	ck_assert_int_eq(smb_sd_decode(bin, n, &sd), AQ_OK);
	ck_assert_uint_eq(sd.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT);
	smb_sd_sid_from_str("S-1-5-32-544", &ba);
	ck_assert(sd.has_owner && smb_sd_sid_eq(&sd.owner, &ba));
	ck_assert(!sd.has_group && !sd.has_sacl && sd.has_dacl);
	ck_assert_uint_eq(sd.dacl.count, 1);
	ck_assert_uint_eq(sd.dacl.ace[0].type, SMB_SD_ACCESS_ALLOWED);
	ck_assert_uint_eq(sd.dacl.ace[0].mask, 0x000f01ff);
	ck_assert(smb_sd_sid_eq(&sd.dacl.ace[0].sid, &smb_sd_everyone));
	ut_buf_init(&b, 4096);
	ck_assert_int_eq(smb_sd_encode(&b, &sd, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL), AQ_OK);
	ck_assert_uint_eq(b.len, n);
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), bin, n), 0);
	/* only what AdditionalInformation asks for */
	b.len = 0;
	ck_assert_int_eq(smb_sd_encode(&b, &sd, SMB_SD_OWNER), AQ_OK);
	ck_assert_hex_eq(ut_buf_bytes(&b), b.len, "0100008014000000000000000000000000000000 01020000000000052000000020020000");
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_sd_malformed)
{
	uint8_t base[128], m[128];
	size_t n = smb_hex(SAMBA_SD, base, sizeof(base));
	struct smb_sd sd;
	static const struct {
		size_t at;
		uint8_t v;
	} bad[] = {
		{ 0, 2 },     /* Revision */
		{ 3, 0x00 },  /* not self-relative */
		{ 4, 0x10 },  /* owner offset inside the header */
		{ 4, 0x40 },  /* owner offset at the end: SID truncated */
		{ 4, 0x80 },  /* owner offset past the end */
		{ 7, 0x80 },  /* owner offset huge */
		{ 16, 0x0c }, /* DACL inside the header */
		{ 16, 0x41 }, /* DACL past the end */
		{ 21, 0x10 }, /* owner SubAuthorityCount 16 */
		{ 36, 1 },    /* ACL revision below 2 */
		{ 36, 5 },    /* ACL revision above 4 */
		{ 38, 0x1d }, /* AclSize past the end */
		{ 38, 0x04 }, /* AclSize below its header */
		{ 40, 2 },    /* AceCount past the ACL */
		{ 40, 0xff }, /* AceCount over the cap */
		{ 46, 0x15 }, /* AceSize past the ACL */
		{ 46, 0x02 }, /* AceSize below its header */
		{ 46, 0x0c }, /* AceSize too small for its SID */
		{ 53, 2 },    /* the ACE's SID count past the ACE */
	};

	for (size_t cut = 0; cut < n; cut++)
		ck_assert_msg(smb_sd_decode(base, cut, &sd) != AQ_OK, "cut %zu", cut);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;

		memcpy(m, base, n);
		m[bad[i].at] = bad[i].v;
		rc = smb_sd_decode(m, n, &sd);
		ck_assert_msg(rc == AQ_EINVAL || rc == AQ_ETOOBIG, "case %zu: %d", i, rc);
	}
	/* an owner offset into the header where the bytes look like a SID:
	 * the unused SACL offset made 1, the owner pointed at it */
	memcpy(m, base, n);
	m[12] = 1;
	ck_assert_int_eq(smb_sd_decode(m, n, &sd), AQ_OK); /* SACL_PRESENT clear: ignored */
	m[4] = 12;
	ck_assert_int_eq(smb_sd_decode(m, n, &sd), AQ_EINVAL);
	ck_assert_int_eq(smb_sd_decode(base, SMB_SD_MAX + 1, &sd), AQ_ETOOBIG);
	/* ACL revision 3 (what smbcacls --set sends; Windows takes 2..4) */
	memcpy(m, base, n);
	m[36] = 3;
	ck_assert_int_eq(smb_sd_decode(m, n, &sd), AQ_OK);
	ck_assert_uint_eq(sd.dacl.revision, 3);
	ck_assert_uint_eq(sd.dacl.count, 1);
	/* a NULL DACL: present, no offset */
	memcpy(m, base, n);
	m[16] = 0;
	ck_assert_int_eq(smb_sd_decode(m, n, &sd), AQ_OK);
	ck_assert(!sd.has_dacl);
	ck_assert(sd.control & SMB_SD_DACL_PRESENT);
}
END_TEST

START_TEST(test_opaque_ace)
{
	/* DACL with an ACCESS_ALLOWED_OBJECT ACE (type 5): kept as bytes */
	uint8_t bin[128];
	size_t n = smb_hex("01000480 00000000 00000000 00000000 14000000"
			   "0200 2400 0100 0000 05 02 1c00 ff010f00 01000000"
			   "00112233445566778899aabbccddeeff",
			   bin, sizeof(bin));
	struct smb_sd sd;
	struct ut_buf b;

	ck_assert_uint_eq(n, 20 + 36);
	ck_assert_int_eq(smb_sd_decode(bin, n, &sd), AQ_OK);
	ck_assert_uint_eq(sd.dacl.ace[0].type, 5);
	ck_assert_uint_eq(sd.dacl.ace[0].opaque_len, 24);
	ut_buf_init(&b, 4096);
	ck_assert_int_eq(smb_sd_encode(&b, &sd, SMB_SD_DACL), AQ_OK);
	ck_assert_uint_eq(b.len, n);
	ck_assert_int_eq(memcmp(ut_buf_bytes(&b), bin, n), 0);
	ut_buf_cleanup(&b);
}
END_TEST

START_TEST(test_unix_descriptor)
{
	struct smb_sd sd, back;
	struct ut_buf b;
	uint32_t uid = 0, gid = 0, mode = 0;
	unsigned have;

	smb_sd_from_unix(1000, 100, 0750, false, &sd);
	ck_assert_uint_eq(sd.dacl.count, 3);
	/* rwx + the owner's extras: FILE_GENERIC_READ|WRITE|EXECUTE, WRITE_DAC,
	 * WRITE_OWNER, the attributes */
	ck_assert_uint_eq(sd.dacl.ace[0].mask, 0x001201BFu | 0x000C0000u);
	ck_assert_uint_eq(sd.dacl.ace[1].mask, 0x001200A9u); /* r-x */
	ck_assert_uint_eq(sd.dacl.ace[2].mask, 0x00120080u); /* ---: read control and attributes only */
	ck_assert(smb_sd_sid_eq(&sd.dacl.ace[2].sid, &smb_sd_everyone));
	ut_buf_init(&b, 4096);
	ck_assert_int_eq(smb_sd_encode(&b, &sd, SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL), AQ_OK);
	ck_assert_int_eq(smb_sd_decode(ut_buf_bytes(&b), b.len, &back), AQ_OK);
	ck_assert_uint_eq(back.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT | SMB_SD_DACL_PROTECTED);
	ck_assert_int_eq(smb_sd_to_unix(&back, &uid, &gid, &mode, &have), AQ_OK);
	/* the auto-inheritance bits are kept (MS-DTYP 2.4.6: DI, SI, PS), the
	 * requests for them (DR, SR) are not */
	ut_buf_cleanup(&b);
	ut_buf_init(&b, 4096);
	sd.control |= SMB_SD_DACL_AUTO_INHERITED | SMB_SD_SACL_AUTO_INHERITED | SMB_SD_SACL_PROTECTED |
		      SMB_SD_DACL_AUTO_INHERIT_REQ | SMB_SD_SACL_AUTO_INHERIT_REQ;
	ck_assert_int_eq(smb_sd_encode(&b, &sd, SMB_SD_OWNER | SMB_SD_DACL), AQ_OK);
	ck_assert_int_eq(smb_sd_decode(ut_buf_bytes(&b), b.len, &back), AQ_OK);
	ck_assert_uint_eq(back.control, SMB_SD_SELF_RELATIVE | SMB_SD_DACL_PRESENT | SMB_SD_DACL_PROTECTED |
						SMB_SD_DACL_AUTO_INHERITED | SMB_SD_SACL_AUTO_INHERITED |
						SMB_SD_SACL_PROTECTED);
	ck_assert_uint_eq(have, SMB_SD_HAVE_UID | SMB_SD_HAVE_GID | SMB_SD_HAVE_MODE);
	ck_assert_uint_eq(uid, 1000);
	ck_assert_uint_eq(gid, 100);
	ck_assert_uint_eq(mode, 0750);
	ut_buf_cleanup(&b);
	/* every mode, files and directories */
	for (uint32_t m = 0; m < 01000; m++) {
		smb_sd_from_unix(7, 8, m, m & 1, &sd);
		ck_assert_int_eq(smb_sd_to_unix(&sd, &uid, &gid, &mode, &have), AQ_OK);
		ck_assert_uint_eq(mode, m);
		ck_assert(!(m & 0200) == !(sd.dacl.ace[0].mask & SMB_FILE_WRITE_DATA));
		ck_assert(!((m & 0200) && (m & 1)) == !(sd.dacl.ace[0].mask & SMB_FILE_DELETE_CHILD));
	}
}
END_TEST

START_TEST(test_unix_refused)
{
	struct smb_sd sd;
	uint32_t uid, gid, mode;
	unsigned have;

	/* GENERIC_ALL for Everyone alone, no owner or group: mode only */
	memset(&sd, 0, sizeof(sd));
	sd.has_dacl = true;
	sd.dacl.count = 1;
	sd.dacl.ace[0] = (struct smb_sd_ace){ .type = SMB_SD_ACCESS_ALLOWED, .mask = SMB_GENERIC_ALL,
					      .sid = smb_sd_everyone };
	ck_assert_int_eq(smb_sd_to_unix(&sd, &uid, &gid, &mode, &have), AQ_OK);
	ck_assert_uint_eq(have, SMB_SD_HAVE_MODE);
	ck_assert_uint_eq(mode, 07);
	/* a DENY ACE, an inheritable ACE, a Windows group, a Windows owner */
	sd.dacl.ace[0].type = SMB_SD_ACCESS_DENIED;
	ck_assert_int_eq(smb_sd_to_unix(&sd, &uid, &gid, &mode, &have), AQ_EUNIMPL);
	sd.dacl.ace[0].type = SMB_SD_ACCESS_ALLOWED;
	sd.dacl.ace[0].flags = SMB_SD_OBJECT_INHERIT;
	ck_assert_int_eq(smb_sd_to_unix(&sd, &uid, &gid, &mode, &have), AQ_EUNIMPL);
	sd.dacl.ace[0].flags = 0;
	smb_sd_sid_from_str("S-1-5-32-544", &sd.dacl.ace[0].sid);
	ck_assert_int_eq(smb_sd_to_unix(&sd, &uid, &gid, &mode, &have), AQ_EUNIMPL);
	sd.dacl.count = 0;
	sd.has_owner = true;
	smb_sd_sid_from_str("S-1-5-21-1-2-3-500", &sd.owner);
	ck_assert_int_eq(smb_sd_to_unix(&sd, &uid, &gid, &mode, &have), AQ_EUNIMPL);
	/* a user ACE for a uid other than the owner's */
	smb_sd_sid_unix_user(5, &sd.owner);
	sd.dacl.count = 1;
	smb_sd_sid_unix_user(6, &sd.dacl.ace[0].sid);
	ck_assert_int_eq(smb_sd_to_unix(&sd, &uid, &gid, &mode, &have), AQ_EUNIMPL);
}
END_TEST

static Suite *smb_sd_suite(void)
{
	Suite *s = suite_create("smb_sd");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sid_wellknown);
	tcase_add_test(tc, test_sid_strings);
	tcase_add_test(tc, test_sd_samba);
	tcase_add_test(tc, test_sd_malformed);
	tcase_add_test(tc, test_opaque_ace);
	tcase_add_test(tc, test_unix_descriptor);
	tcase_add_test(tc, test_unix_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return aqt_run(smb_sd_suite());
}
