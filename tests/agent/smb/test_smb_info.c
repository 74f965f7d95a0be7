/* test_smb_info: QUERY_INFO and FSCTL answers (agent/smb/smb_info.c,
 * agent/smb/smb_tree.c) through the server's own dispatcher:
 * - FilePositionInformation: what SET_INFO set is what QUERY_INFO and
 *   FileAllInformation answer, a WRITE moves it past what it wrote; past
 *   INT64_MAX: INVALID_PARAMETER;
 * - FileNormalizedNameInformation: the path, on 3.1.1 only;
 * - buffer sizes: under a class's fixed part INFO_LENGTH_MISMATCH, the
 *   fixed part but not the whole answer BUFFER_OVERFLOW (truncated);
 * - FileAlternateNameInformation: an 8.3 name (the name itself
 *   uppercased, or a mangled one with '~'); FileCompressionInformation:
 *   uncompressed;
 * - FSCTL_GET_COMPRESSION: NONE; FSCTL_SET_COMPRESSION: NONE accepted,
 *   a format NOT_SUPPORTED, a short input INVALID_PARAMETER;
 * - the access a class needs (MS-SMB2 3.3.5.20.1/3): basic, all,
 *   network-open and attribute-tag FILE_READ_ATTRIBUTES, the EA list
 *   FILE_READ_EA (then NO_EAS_ON_FILE: none are kept), a descriptor's
 *   owner/group/DACL READ_CONTROL and its SACL ACCESS_SYSTEM_SECURITY,
 *   else ACCESS_DENIED; standard, internal and access need nothing;
 * - the access a SET_INFO class needs (MS-SMB2 3.3.5.21.1): basic
 *   FILE_WRITE_ATTRIBUTES (times or none: the class, not its values),
 *   disposition DELETE (to set or clear), rename DELETE, else
 *   ACCESS_DENIED and nothing changes; granted, each takes effect;
 * - FSCTL_CREATE_OR_GET_OBJECT_ID and FSCTL_GET_OBJECT_ID: a 64-byte
 *   FILE_OBJECTID_BUFFER, ObjectId and BirthObjectId the file's inode
 *   (FileInternalInformation) and the volume's fsid, BirthVolumeId the
 *   fsid, DomainId zero; the same on every call and after a rename; less
 *   room than 64 bytes: INVALID_PARAMETER (MS-FSA 2.1.5.10.1);
 * - a folder with a file open below it (however deep) is not renamed:
 *   ACCESS_DENIED, nothing moves (a folder whose name only starts with its
 *   name is not below it); once that open closed, it is;
 * - FileLinkInformation (MS-FSA 2.1.5.14.6): a second name for the file
 *   (same inode on disk), NumberOfLinks (FileStandardInformation) 2; an
 *   existing name COLLISION without ReplaceIfExists, with it ACCESS_DENIED
 *   while that file is open or when it is a folder, else replaced; a
 *   folder is not linked (FILE_IS_A_DIRECTORY); a short buffer or a name
 *   past its end INVALID_PARAMETER; nothing changes when refused.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_watch.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define FileBasicInformation 4u
#define FilePositionInformation 14u
#define FileAllInformation 18u
#define FileAlternateNameInformation 21u
#define FileCompressionInformation 28u
#define FileNormalizedNameInformation 48u
#define A_R FILE_ATTRIBUTE_READONLY
#define A_H FILE_ATTRIBUTE_HIDDEN
#define A_S FILE_ATTRIBUTE_SYSTEM
#define A_A FILE_ATTRIBUTE_ARCHIVE
#define RW_ACCESS (0x3u | 0x80u | 0x100u | 0x10000u) /* read/write data and attributes, delete */
#define READ_ACCESS (0x1u | 0x80u)

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

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

START_TEST(test_position_and_sizes)
{
	struct smbt_conn a;
	uint64_t fid;
	uint32_t got;
	uint8_t out[512], pos[8] = { 10 };
	size_t n;

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "bufsize.txt", false, RW_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_set_info(&a, fid, FilePositionInformation, pos, 8), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FilePositionInformation, 8, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u64(out), 10);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileAllInformation, 4096, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u64(out + 40 + 24 + 8 + 4 + 4), 10);
	/* a WRITE moves it past what it wrote */
	ck_assert_uint_eq(smbl_write(&a, fid, "0123456789ab"), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FilePositionInformation, 8, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u64(out), 12);
	pos[7] = 0x80;
	ck_assert_uint_eq(smbl_set_info(&a, fid, FilePositionInformation, pos, 8), STATUS_INVALID_PARAMETER);
	/* sizes: basic is all fixed; all has a name past its 104 fixed bytes */
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileBasicInformation, 39, out, &n), STATUS_INFO_LENGTH_MISMATCH);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileBasicInformation, 40, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileAllInformation, 103, out, &n), STATUS_INFO_LENGTH_MISMATCH);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileAllInformation, 104, out, &n), STATUS_BUFFER_OVERFLOW);
	ck_assert_uint_eq(n, 104);
	teardown();
}
END_TEST

START_TEST(test_alt_name_and_compression)
{
	struct smbt_conn a;
	uint64_t fid, lid;
	uint32_t got;
	uint8_t out[512], in[2] = { 1, 0 };
	struct smbt_fsctl_rsp r;
	size_t n;
	char name[32] = { 0 };

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "short.txt", false, RW_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileAlternateNameInformation, 512, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u32(out), 18);
	for (size_t i = 0; i < 9; i++)
		name[i] = (char)out[4 + 2 * i];
	ck_assert_str_eq(name, "SHORT.TXT");
	ck_assert_uint_eq(smbl_open(&a, "a long name.text", false, RW_ACCESS, 0, 0, &lid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, lid, FileAlternateNameInformation, 512, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u32(out), 24); /* ALONG~XY.TEX */
	ck_assert_uint_eq(out[4 + 2 * 5], '~');
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileCompressionInformation, 512, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(n, 16);
	ck_assert_uint_eq(smb_wire_get_u16(out + 8), 0);
	/* the normalized name: 3.1.1 only */
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileNormalizedNameInformation, 512, out, &n), STATUS_NOT_SUPPORTED);
	a.c->dialect = SMB2_DIALECT_311;
	ck_assert_uint_eq(smbl_query_info(&a, fid, FileNormalizedNameInformation, 512, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smb_wire_get_u32(out), 18);
	ck_assert_uint_eq(out[4], 's');
	/* FSCTLs: never compressed */
	smbt_fsctl(&a, fid, FSCTL_GET_COMPRESSION, NULL, 0, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.out_len, 2);
	ck_assert_uint_eq(smb_wire_get_u16(r.out), 0);
	smbt_fsctl(&a, fid, FSCTL_SET_COMPRESSION, in, 2, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_NOT_SUPPORTED);
	in[0] = 0;
	smbt_fsctl(&a, fid, FSCTL_SET_COMPRESSION, in, 2, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	smbt_fsctl(&a, fid, FSCTL_SET_COMPRESSION, in, 1, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_INVALID_PARAMETER);
	teardown();
}
END_TEST

/* QUERY_INFO of the security descriptor parts `additional` of fid: its status. */
static uint32_t query_sec(struct smbt_conn *tc, uint64_t fid, uint32_t additional)
{
	uint8_t out[1024];
	size_t n;

	return smbl_query_sec(tc, fid, additional, out, sizeof(out), &n);
}

START_TEST(test_class_access)
{
	static const uint8_t attr_classes[] = { 4 /* basic */, 18 /* all */, 34 /* network open */, 35 /* tag */ };
	struct smbt_conn a;
	uint8_t out[512];
	uint64_t data_only, attrs, ea, ctl;
	uint32_t got;
	size_t n;

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "acc.txt", false, RW_ACCESS, 0, 0, &data_only, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "acc.txt", false, 0x1u, 0, 0, &data_only, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "acc.txt", false, 0x80u, 0, 0, &attrs, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "acc.txt", false, 0x8u, 0, 0, &ea, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "acc.txt", false, 0x20000u, 0, 0, &ctl, &got), STATUS_SUCCESS);
	for (size_t i = 0; i < sizeof(attr_classes); i++) {
		ck_assert_uint_eq(smbl_query_info(&a, data_only, attr_classes[i], 512, out, &n), STATUS_ACCESS_DENIED);
		ck_assert_uint_eq(smbl_query_info(&a, attrs, attr_classes[i], 512, out, &n), STATUS_SUCCESS);
	}
	/* standard (5), internal (6), access (8): no access needed */
	ck_assert_uint_eq(smbl_query_info(&a, data_only, 5, 512, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, data_only, 6, 512, out, &n), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, data_only, 8, 512, out, &n), STATUS_SUCCESS);
	/* the EA list (15) */
	ck_assert_uint_eq(smbl_query_info(&a, data_only, 15, 512, out, &n), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_query_info(&a, ea, 15, 512, out, &n), STATUS_NO_EAS_ON_FILE);
	/* owner (1), DACL (4), SACL (8) */
	ck_assert_uint_eq(query_sec(&a, data_only, 0x1u), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(query_sec(&a, data_only, 0x4u), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(query_sec(&a, ctl, 0x1u | 0x4u), STATUS_SUCCESS);
	ck_assert_uint_eq(query_sec(&a, ctl, 0x8u), STATUS_ACCESS_DENIED);
	teardown();
}
END_TEST

/* The modification time (seconds) of name on disk, -1 when it is gone. */
static long long disk_mtime(const char *name)
{
	char p[300];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	return stat(p, &st) == 0 ? (long long)st.st_mtim.tv_sec : -1;
}

/* FileBasicInformation: ChangeTime..LastWriteTime, FileAttributes 0. */
static uint32_t set_write_time(struct smbt_conn *a, uint64_t fid, uint64_t ft)
{
	uint8_t b[40] = { 0 };

	smbt_put64(b + 16, ft);
	return smbl_set_info(a, fid, FileBasicInformation, b, sizeof(b));
}

START_TEST(test_set_class_access)
{
	/* 2001-09-09 01:46:40 UTC as a FILETIME: 1000000000 s after 1970 */
	const uint64_t ft = 116444736000000000ull + 1000000000ull * 10000000u;
	struct smbt_conn a;
	uint64_t rw, rd, wa, del;
	uint32_t got;
	uint8_t yes = 1, no = 0, zero[40] = { 0 };

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "set.txt", false, RW_ACCESS, 0, 0, &rw, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "set.txt", false, READ_ACCESS, 0, 0, &rd, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "set.txt", false, 0x100u, 0, 0, &wa, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "set.txt", false, 0x10000u, 0, 0, &del, &got), STATUS_SUCCESS);
	ck_assert_int_ne(disk_mtime("set.txt"), 1000000000);
	/* basic: FILE_WRITE_ATTRIBUTES, whatever it carries */
	ck_assert_uint_eq(set_write_time(&a, rd, ft), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(set_write_time(&a, del, ft), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_set_info(&a, rd, FileBasicInformation, zero, sizeof(zero)), STATUS_ACCESS_DENIED);
	ck_assert_int_ne(disk_mtime("set.txt"), 1000000000);
	ck_assert_uint_eq(set_write_time(&a, wa, ft), STATUS_SUCCESS);
	ck_assert_int_eq(disk_mtime("set.txt"), 1000000000);
	/* disposition: DELETE, to set it or to clear it */
	ck_assert_uint_eq(smbl_set_info(&a, rd, 13, &yes, 1), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_set_info(&a, wa, 13, &no, 1), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(smbl_close(&a, rd), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, wa), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, rw), STATUS_SUCCESS);
	ck_assert_int_eq(disk_mtime("set.txt"), 1000000000); /* still there */
	ck_assert_uint_eq(smbl_set_info(&a, del, 13, &yes, 1), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, del), STATUS_SUCCESS);
	ck_assert_int_eq(disk_mtime("set.txt"), -1); /* deleted at its last close */
	teardown();
}
END_TEST

/* FileRenameInformation (ReplaceIfExists 0, RootDirectory 0) to "to". */
static uint32_t rename_to(struct smbt_conn *a, uint64_t fid, const char *to)
{
	uint8_t d[128] = { 0 };
	size_t n = strlen(to);

	smbt_put32(d + 16, (uint32_t)(2 * n));
	for (size_t i = 0; i < n; i++)
		d[20 + 2 * i] = (uint8_t)to[i];
	return smbl_set_info(a, fid, 10, d, 20 + 2 * n);
}

/* A rename needs DELETE on the open being renamed (MS-SMB2 3.3.5.21.1,
 * MS-FSA 2.1.5.14.11): an open with every other right of RW_ACCESS, or
 * with reading alone, is refused and the name stays; one with DELETE
 * renames it. */
START_TEST(test_rename_needs_delete)
{
	struct smbt_conn a;
	uint64_t rd, nodel, del;
	uint32_t got;

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "ren.txt", false, RW_ACCESS, 0, 0, &del, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "ren.txt", false, READ_ACCESS, 0, 0, &rd, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "ren.txt", false, RW_ACCESS & ~0x10000u, 0, 0, &nodel, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&a, rd, "new.txt"), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(rename_to(&a, nodel, "new.txt"), STATUS_ACCESS_DENIED);
	ck_assert_int_ne(disk_mtime("ren.txt"), -1);
	ck_assert_int_eq(disk_mtime("new.txt"), -1);
	ck_assert_uint_eq(smbl_close(&a, rd), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, nodel), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&a, del, "new.txt"), STATUS_SUCCESS);
	ck_assert_int_eq(disk_mtime("ren.txt"), -1);
	ck_assert_int_ne(disk_mtime("new.txt"), -1);
	ck_assert_uint_eq(smbl_close(&a, del), STATUS_SUCCESS);
	teardown();
}
END_TEST

START_TEST(test_rename_dir_open_below)
{
	struct smbt_conn a;
	uint64_t d, sub, f;
	uint32_t got;

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "dir", true, RW_ACCESS, 0, 0, &d, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "dir/sub", true, RW_ACCESS, 0, 0, &sub, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, sub), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_open(&a, "dir/sub/f.txt", false, READ_ACCESS, 0, 0, &f, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&a, d, "dir2"), STATUS_ACCESS_DENIED);
	ck_assert_int_ne(disk_mtime("dir/sub/f.txt"), -1);
	ck_assert_int_eq(disk_mtime("dir2"), -1);
	/* a folder beside it whose name it starts with is not below it */
	ck_assert_uint_eq(smbl_open(&a, "dirx", true, RW_ACCESS, 0, 0, &sub, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&a, sub, "diry"), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, sub), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, f), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&a, d, "dir2"), STATUS_SUCCESS);
	ck_assert_int_ne(disk_mtime("dir2/sub/f.txt"), -1);
	ck_assert_uint_eq(smbl_close(&a, d), STATUS_SUCCESS);
	teardown();
}
END_TEST

START_TEST(test_object_id)
{
	struct smbt_conn a;
	struct smbt_fsctl_rsp r, r2;
	uint64_t fid, ino, fsid;
	uint32_t got;
	uint8_t out[64];
	size_t n;

	setup();
	conn_new(&a);
	fsid = vol_export_fsid(exp0);
	ck_assert_uint_ne(fsid, 0);
	ck_assert_uint_eq(smbl_open(&a, "oid.txt", false, READ_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_query_info(&a, fid, 6 /* FileInternalInformation */, 8, out, &n), STATUS_SUCCESS);
	ino = smb_wire_get_u64(out);
	smbt_fsctl(&a, fid, FSCTL_CREATE_OR_GET_OBJECT_ID, NULL, 0, 64, &r);
	ck_assert_uint_eq(r.status, STATUS_SUCCESS);
	ck_assert_uint_eq(r.out_len, 64);
	ck_assert_uint_eq(smb_wire_get_u64(r.out), ino);       /* ObjectId */
	ck_assert_uint_eq(smb_wire_get_u64(r.out + 8), fsid);
	ck_assert_uint_eq(smb_wire_get_u64(r.out + 16), fsid); /* BirthVolumeId */
	ck_assert_uint_eq(smb_wire_get_u64(r.out + 24), 0);
	ck_assert_mem_eq(r.out + 32, r.out, 16);               /* BirthObjectId */
	for (int i = 48; i < 64; i++)                          /* DomainId */
		ck_assert_uint_eq(r.out[i], 0);
	smbt_fsctl(&a, fid, FSCTL_GET_OBJECT_ID, NULL, 0, 64, &r2);
	ck_assert_uint_eq(r2.status, STATUS_SUCCESS);
	ck_assert_mem_eq(r2.out, r.out, 64);
	smbt_fsctl(&a, fid, FSCTL_CREATE_OR_GET_OBJECT_ID, NULL, 0, 63, &r2);
	ck_assert_uint_eq(r2.status, STATUS_INVALID_PARAMETER);
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	/* a rename keeps it */
	ck_assert_uint_eq(smbl_open(&a, "oid.txt", false, RW_ACCESS, 0, 0, &fid, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(rename_to(&a, fid, "oid2.txt"), STATUS_SUCCESS);
	smbt_fsctl(&a, fid, FSCTL_CREATE_OR_GET_OBJECT_ID, NULL, 0, 64, &r2);
	ck_assert_uint_eq(r2.status, STATUS_SUCCESS);
	ck_assert_mem_eq(r2.out, r.out, 64);
	ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	teardown();
}
END_TEST

/* FileLinkInformation (11) of fid to "to", ReplaceIfExists replace. */
static uint32_t link_to(struct smbt_conn *a, uint64_t fid, const char *to, uint8_t replace)
{
	uint8_t d[128] = { 0 };
	size_t n = strlen(to);

	d[0] = replace;
	smbt_put32(d + 16, (uint32_t)(2 * n));
	for (size_t i = 0; i < n; i++)
		d[20 + 2 * i] = (uint8_t)to[i];
	return smbl_set_info(a, fid, 11, d, 20 + 2 * n);
}

/* The inode of name on disk, 0 when it is gone. */
static unsigned long long disk_ino(const char *name)
{
	char p[300];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ts.cfg[0].root, name);
	return stat(p, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* FileStandardInformation's NumberOfLinks of fid. */
static uint32_t nlinks(struct smbt_conn *a, uint64_t fid)
{
	uint8_t out[64];
	size_t n;

	ck_assert_uint_eq(smbl_query_info(a, fid, 5, sizeof(out), out, &n), STATUS_SUCCESS);
	ck_assert_uint_ge(n, 20);
	return smb_wire_get_u32(out + 16);
}

START_TEST(test_link)
{
	struct smbt_conn a;
	uint64_t f, o, d;
	uint32_t got;
	uint8_t bad[20] = { 0 };

	setup();
	conn_new(&a);
	ck_assert_uint_eq(smbl_open(&a, "l.txt", false, READ_ACCESS, 0, 0, &f, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(nlinks(&a, f), 1);
	ck_assert_uint_eq(link_to(&a, f, "l2.txt", 0), STATUS_SUCCESS);
	ck_assert_uint_ne(disk_ino("l.txt"), 0);
	ck_assert_uint_eq(disk_ino("l2.txt"), disk_ino("l.txt"));
	ck_assert_uint_eq(nlinks(&a, f), 2);
	/* an existing name: a collision, a replace of an open file or a folder refused */
	ck_assert_uint_eq(link_to(&a, f, "l2.txt", 0), STATUS_OBJECT_NAME_COLLISION);
	ck_assert_uint_eq(smbl_open(&a, "o.txt", false, READ_ACCESS, 0, 0, &o, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(link_to(&a, f, "o.txt", 0), STATUS_OBJECT_NAME_COLLISION);
	ck_assert_uint_eq(link_to(&a, f, "o.txt", 1), STATUS_ACCESS_DENIED);
	ck_assert_uint_ne(disk_ino("o.txt"), disk_ino("l.txt"));
	ck_assert_uint_eq(smbl_open(&a, "ld", true, RW_ACCESS, 0, 0, &d, &got), STATUS_SUCCESS);
	ck_assert_uint_eq(link_to(&a, f, "ld", 1), STATUS_ACCESS_DENIED);
	ck_assert_uint_eq(link_to(&a, d, "ld2", 0), STATUS_FILE_IS_A_DIRECTORY);
	ck_assert_uint_eq(disk_ino("ld2"), 0);
	ck_assert_uint_eq(nlinks(&a, f), 2);
	/* bounded: a buffer short of the name length, a name past its end */
	ck_assert_uint_eq(smbl_set_info(&a, f, 11, bad, 19), STATUS_INVALID_PARAMETER);
	smbt_put32(bad + 16, 2);
	ck_assert_uint_eq(smbl_set_info(&a, f, 11, bad, 20), STATUS_INVALID_PARAMETER);
	/* the other file closed: replaced */
	ck_assert_uint_eq(smbl_close(&a, o), STATUS_SUCCESS);
	ck_assert_uint_eq(link_to(&a, f, "o.txt", 1), STATUS_SUCCESS);
	ck_assert_uint_eq(disk_ino("o.txt"), disk_ino("l.txt"));
	ck_assert_uint_eq(nlinks(&a, f), 3);
	ck_assert_uint_eq(smbl_close(&a, d), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, f), STATUS_SUCCESS);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_info");
	TCase *tc = tcase_create("info");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_position_and_sizes);
	tcase_add_test(tc, test_alt_name_and_compression);
	tcase_add_test(tc, test_class_access);
	tcase_add_test(tc, test_set_class_access);
	tcase_add_test(tc, test_rename_needs_delete);
	tcase_add_test(tc, test_object_id);
	tcase_add_test(tc, test_rename_dir_open_below);
	tcase_add_test(tc, test_link);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
