/* test_smb_ctx: the create contexts agent/smb/smb_ctx.c owns, through the
 * server's own dispatcher:
 * - ExtA: the EAs set on the file the CREATE made or overwrote, not on one
 *   it opened; a bad name INVALID_EA_NAME, a malformed list
 *   INVALID_PARAMETER, nothing created;
 * - QFid: the inode and the volume's fsid; with data INVALID_PARAMETER;
 * - MxAc: root's FILE_ALL_ACCESS; a user's from the POSIX class bits (owner
 *   of a 0644 file: read, write, attributes, control, delete; "other" on
 *   root's 0644 file: read only, plus delete from a 0777 folder; none of
 *   write or delete on a READONLY file; no change at all to a previous
 *   version, root's neither); no answer when the request's
 *   timestamp is the file's LastWriteTime; a bad length INVALID_PARAMETER;
 * - SecD: the owner, group and mode of the descriptor on the file made;
 *   a malformed one INVALID_PARAMETER; a DENY ACE, a SACL, a NULL DACL, an
 *   ACE for a Unix user that is not the owner-to-be NOT_SUPPORTED; another
 *   owner INVALID_OWNER (a user); each creating nothing; an existing file
 *   keeps its mode;
 * - AlSi: past the volume's free space DISK_FULL (a new file is not made,
 *   an overwrite keeps the data; the overwritten file's bytes count as
 *   free), within it success, a directory ignores it, a bad length
 *   INVALID_PARAMETER.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "agent/smb/smb_ea.h"
#include "agent/smb/smb_sd.h"
#include "agent/vol/vol.h"
#include "agent/smb/smb_srv_internal.h"
#include "api/api_error.h"
#include "tests/agent/smb/smb_harness.h"
#include "tests/agent/smb/smb_leasemsg.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

#define RW_ACCESS (0x3u | 0x80u | 0x100u | 0x10000u)
#define FILE_OPEN 1u
#define FILE_CREATE 2u
#define FILE_OVERWRITE_IF 5u
#define STATUS_INVALID_OWNER 0xC000005Au
#define USER 4321u

static struct aqt_store ts;
static struct smb_srv *srv;
static struct vol_export *exp0;

struct ctxin {
	const char *tag;
	const uint8_t *data;
	size_t len;
};

/* The answer of a CREATE: status, FileId, and its contexts' data by tag. */
struct answer {
	uint32_t status;
	uint64_t fid;
	struct smbl_msg m;
};

static void setup(struct smbt_conn *a, uint32_t uid)
{
	smbt_export_up(&ts, &srv, &exp0);
	smbt_conn_export(a, srv, &ts, 1, 0);
	ck_assert_int_eq(chmod(ts.cfg[0].root, 0777), 0);
	a->s->cred = (struct vol_cred){ .uid = uid, .gid = uid };
}

static void teardown(void)
{
	smbt_export_down(&ts, srv, exp0);
}

static void path_of(const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", ts.cfg[0].root, name);
}

static bool exists(const char *name)
{
	char p[4200];
	struct stat st;

	path_of(name, p, sizeof(p));
	return stat(p, &st) == 0;
}

static uint32_t create(struct smbt_conn *tc, uint32_t access, const char *name, uint32_t disposition, uint32_t options,
		       const struct ctxin *cx, size_t ncx, struct answer *ans)
{
	static uint8_t body[8192];
	struct smb_wire_hdr h = { .command = SMB2_CREATE };
	size_t n = smbl_create_body(body, name, access, 0, options, disposition), start, prev = 0;

	while (n % 8)
		body[n++] = 0;
	start = n;
	for (size_t k = 0; k < ncx; k++) {
		size_t at = n;

		ck_assert_uint_lt(at + 24 + cx[k].len + 8, sizeof(body));
		if (k)
			smbt_put32(body + prev, (uint32_t)(at - prev));
		prev = at;
		memset(body + at, 0, 24);
		smbt_put16(body + at + 4, 16);
		smbt_put16(body + at + 6, 4);
		smbt_put16(body + at + 10, cx[k].len ? 24 : 0);
		smbt_put32(body + at + 12, (uint32_t)cx[k].len);
		memcpy(body + at + 16, cx[k].tag, 4);
		n = at + 24;
		if (cx[k].len)
			memcpy(body + n, cx[k].data, cx[k].len);
		n += cx[k].len;
		while (n % 8)
			body[n++] = 0;
	}
	if (ncx) {
		smbt_put32(body + 48, (uint32_t)(SMB2_HDR_LEN + start));
		smbt_put32(body + 52, (uint32_t)(n - start));
	}
	smbl_send(tc, &h, body, n);
	ck_assert_int_eq(smbl_recv(tc, &ans->m), 1);
	ck_assert_uint_eq(ans->m.h.command, SMB2_CREATE);
	ans->status = ans->m.h.status;
	ans->fid = ans->status == STATUS_SUCCESS ? smb_wire_get_u64(ans->m.body + 64) : 0;
	return ans->status;
}

/* The data of the answer's context tag (NULL: none), its length in *len. */
static const uint8_t *answered(const struct answer *ans, const char *tag, size_t *len)
{
	size_t off;

	if (ans->status != STATUS_SUCCESS || !smb_wire_get_u32(ans->m.body + 84))
		return NULL;
	off = smb_wire_get_u32(ans->m.body + 80) - SMB2_HDR_LEN;
	for (;;) {
		const uint8_t *c = ans->m.body + off;
		uint32_t next = smb_wire_get_u32(c);

		ck_assert_uint_le(off + 24, ans->m.len);
		if (!memcmp(c + smb_wire_get_u16(c + 4), tag, 4)) {
			*len = smb_wire_get_u32(c + 12);
			return c + smb_wire_get_u16(c + 10);
		}
		if (!next)
			return NULL;
		off += next;
	}
}

/* The first bytes of name on the shelf (its size in *len). */
static void file_data(const char *name, uint8_t *buf, size_t cap, size_t *len)
{
	char p[4200];
	FILE *f;

	path_of(name, p, sizeof(p));
	f = fopen(p, "rb");
	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, cap, f);
	fclose(f);
}

/* The EA list kept for name on the shelf (trusted.aquifer.ea): its length, -1 none. */
static ssize_t kept_eas(const char *name, uint8_t *buf, size_t cap)
{
	char p[4200];

	path_of(name, p, sizeof(p));
	return getxattr(p, VOL_EA_ATTR, buf, cap);
}

START_TEST(test_exta)
{
	struct smbt_conn a;
	struct answer r;
	uint8_t kept[64];
	/* one FILE_FULL_EA_INFORMATION: "A" = "b" */
	static const uint8_t ea[] = { 0, 0, 0, 0, 0, 1, 1, 0, 'A', 0, 'b' };
	static const uint8_t ea2[] = { 0, 0, 0, 0, 0, 1, 1, 0, 'C', 0, 'd' };
	static const uint8_t bad_name[] = { 0, 0, 0, 0, 0, 1, 1, 0, '?', 0, 'b' };
	static const uint8_t no_nul[] = { 0, 0, 0, 0, 0, 1, 1, 0, 'A', 'x', 'b' };

	setup(&a, 0);
	/* set on the file the CREATE makes */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "ea.txt", FILE_CREATE, 0x40, &(struct ctxin){ "ExtA", ea, sizeof(ea) }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_int_eq(kept_eas("ea.txt", kept, sizeof(kept)), (ssize_t)sizeof(ea));
	ck_assert_mem_eq(kept, ea, sizeof(ea));
	/* not on one it only opens; on one it overwrites (added to what it has) */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "ea.txt", FILE_OPEN, 0x40, &(struct ctxin){ "ExtA", ea2, sizeof(ea2) }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_int_eq(kept_eas("ea.txt", kept, sizeof(kept)), (ssize_t)sizeof(ea));
	ck_assert_uint_eq(create(&a, RW_ACCESS, "ea.txt", FILE_OVERWRITE_IF, 0x40,
				 &(struct ctxin){ "ExtA", ea2, sizeof(ea2) }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_int_eq(kept_eas("ea.txt", kept, sizeof(kept)), 12 + (ssize_t)sizeof(ea2));
	ck_assert_uint_eq(kept[12 + 8], 'C');
	/* a list the shelf cannot hold (ext4 without ea_inode: about a block;
	 * XFS, btrfs and tmpfs take it): refused, and the file made goes again */
	{
		static uint8_t big[8 + 2 + 6000];
		uint32_t st;

		big[5] = 1;
		big[6] = (uint8_t)(6000 & 0xff);
		big[7] = (uint8_t)(6000 >> 8);
		big[8] = 'B';
		memset(big + 10, 'v', 6000);
		st = create(&a, RW_ACCESS, "big.txt", FILE_CREATE, 0x40, &(struct ctxin){ "ExtA", big, sizeof(big) }, 1, &r);
		if (st == STATUS_EA_TOO_LARGE) {
			struct answer w;
			uint8_t data[16];
			size_t len = 0;

			ck_assert(!exists("big.txt"));
			/* an overwrite with it: refused before the file loses its data */
			ck_assert_uint_eq(create(&a, RW_ACCESS, "keep.txt", FILE_CREATE, 0x40, NULL, 0, &w), STATUS_SUCCESS);
			ck_assert_uint_eq(smbl_write(&a, w.fid, "precious"), STATUS_SUCCESS);
			ck_assert_uint_eq(create(&a, RW_ACCESS, "keep.txt", FILE_OVERWRITE_IF, 0x40,
						 &(struct ctxin){ "ExtA", big, sizeof(big) }, 1, &r),
					  STATUS_EA_TOO_LARGE);
			file_data("keep.txt", data, sizeof(data), &len);
			ck_assert_uint_eq(len, 8);
		} else {
			ck_assert_uint_eq(st, STATUS_SUCCESS);
		}
	}
	/* refused before anything is made */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "bad.txt", FILE_CREATE, 0x40,
				 &(struct ctxin){ "ExtA", bad_name, sizeof(bad_name) }, 1, &r),
			  STATUS_INVALID_EA_NAME);
	ck_assert(!exists("bad.txt"));
	ck_assert_uint_eq(create(&a, RW_ACCESS, "bad.txt", FILE_CREATE, 0x40,
				 &(struct ctxin){ "ExtA", no_nul, sizeof(no_nul) }, 1, &r),
			  STATUS_INVALID_PARAMETER);
	ck_assert(!exists("bad.txt"));
	teardown();
}
END_TEST

START_TEST(test_qfid)
{
	struct smbt_conn a;
	struct answer r;
	struct stat st;
	char p[4200];
	const uint8_t *d;
	size_t len = 0;
	uint8_t one = 1;

	setup(&a, 0);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "q.txt", FILE_CREATE, 0x40, &(struct ctxin){ "QFid", NULL, 0 }, 1, &r),
			  STATUS_SUCCESS);
	path_of("q.txt", p, sizeof(p));
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_ptr_nonnull(d = answered(&r, "QFid", &len));
	ck_assert_uint_eq(len, 32);
	ck_assert_uint_eq(smb_wire_get_u64(d), (uint64_t)st.st_ino);
	ck_assert_uint_eq(smb_wire_get_u64(d + 8), 100);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	/* without it, none is answered */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "q.txt", FILE_OPEN, 0x40, NULL, 0, &r), STATUS_SUCCESS);
	ck_assert_ptr_null(answered(&r, "QFid", &len));
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "q2.txt", FILE_CREATE, 0x40, &(struct ctxin){ "QFid", &one, 1 }, 1, &r),
			  STATUS_INVALID_PARAMETER);
	ck_assert(!exists("q2.txt"));
	teardown();
}
END_TEST

static uint32_t mxac_of(struct smbt_conn *a, const char *name, uint32_t disposition)
{
	struct answer r;
	const uint8_t *d;
	size_t len = 0;

	ck_assert_uint_eq(create(a, 0x80u /* FILE_READ_ATTRIBUTES */, name, disposition, 0x40, &(struct ctxin){ "MxAc", NULL, 0 }, 1, &r), STATUS_SUCCESS);
	ck_assert_ptr_nonnull(d = answered(&r, "MxAc", &len));
	ck_assert_uint_eq(len, 8);
	ck_assert_uint_eq(smb_wire_get_u32(d), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(a, r.fid), STATUS_SUCCESS);
	return smb_wire_get_u32(d + 4);
}

START_TEST(test_mxac_root)
{
	struct smbt_conn a;
	struct answer r;
	const uint8_t *d;
	size_t len;
	uint8_t stamp[8], four[4] = { 0 };

	setup(&a, 0);
	ck_assert_uint_eq(mxac_of(&a, "m.txt", FILE_CREATE), SMB_FILE_ALL_ACCESS);
	/* the timestamp of the file's last write: nothing new to tell */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "m.txt", FILE_OPEN, 0x40, NULL, 0, &r), STATUS_SUCCESS);
	memcpy(stamp, r.m.body + 24, 8); /* LastWriteTime */
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "m.txt", FILE_OPEN, 0x40, &(struct ctxin){ "MxAc", stamp, 8 }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_ptr_null(answered(&r, "MxAc", &len));
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	stamp[0] ^= 1;
	ck_assert_uint_eq(create(&a, RW_ACCESS, "m.txt", FILE_OPEN, 0x40, &(struct ctxin){ "MxAc", stamp, 8 }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_ptr_nonnull(d = answered(&r, "MxAc", &len));
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "m2.txt", FILE_CREATE, 0x40, &(struct ctxin){ "MxAc", four, 4 }, 1, &r),
			  STATUS_INVALID_PARAMETER);
	ck_assert(!exists("m2.txt"));
	teardown();
}
END_TEST

START_TEST(test_mxac_user)
{
	struct smbt_conn a;
	char p[4200];
	FILE *f;
	uint32_t m;

	setup(&a, USER);
	/* its own file (0644): read, write, attributes, control, delete; no execute */
	m = mxac_of(&a, "mine.txt", FILE_CREATE);
	ck_assert_uint_eq(m & (SMB_FILE_GENERIC_READ | SMB_FILE_GENERIC_WRITE | SMB_WRITE_DAC | SMB_WRITE_OWNER | SMB_DELETE),
			  SMB_FILE_GENERIC_READ | SMB_FILE_GENERIC_WRITE | SMB_WRITE_DAC | SMB_WRITE_OWNER | SMB_DELETE);
	ck_assert_uint_eq(m & SMB_FILE_EXECUTE, 0);
	/* root's 0644 file: "other" reads; the 0777 folder lets it go */
	path_of("roots.txt", p, sizeof(p));
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	ck_assert_int_eq(chmod(p, 0644), 0);
	m = mxac_of(&a, "roots.txt", FILE_OPEN);
	ck_assert_uint_eq(m & SMB_FILE_GENERIC_READ, SMB_FILE_GENERIC_READ);
	ck_assert_uint_eq(m & (SMB_FILE_WRITE_DATA | SMB_FILE_APPEND_DATA | SMB_WRITE_DAC), 0);
	ck_assert_uint_eq(m & SMB_DELETE, SMB_DELETE);
	/* with the sticky bit on the folder, not another's file */
	ck_assert_int_eq(chmod(ts.cfg[0].root, 01777), 0);
	m = mxac_of(&a, "roots.txt", FILE_OPEN);
	ck_assert_uint_eq(m & SMB_DELETE, 0);
	/* READONLY: neither write nor delete */
	{
		uint64_t fid;
		uint32_t got;

		ck_assert_uint_eq(smbl_open(&a, "ro.txt", false, RW_ACCESS, FILE_ATTRIBUTE_READONLY, 0, &fid, &got),
				  STATUS_SUCCESS);
		ck_assert_uint_eq(smbl_close(&a, fid), STATUS_SUCCESS);
	}
	m = mxac_of(&a, "ro.txt", FILE_OPEN);
	ck_assert_uint_eq(m & (SMB_FILE_WRITE_DATA | SMB_FILE_APPEND_DATA | SMB_DELETE), 0);
	ck_assert_uint_eq(m & SMB_FILE_READ_DATA, SMB_FILE_READ_DATA);
	teardown();
}
END_TEST

enum { SD_PLAIN, SD_DENY, SD_SACL, SD_NULL_DACL, SD_NO_OWNER };

/* A previous version (obj.snap) changes for nobody, root included. */
START_TEST(test_mxac_snapshot)
{
	struct smb_open o;
	const struct vol_cred root = { 0 }, user = { .uid = USER, .gid = USER };
	const uint32_t change = SMB_FILE_WRITE_DATA | SMB_FILE_APPEND_DATA | SMB_FILE_WRITE_EA | SMB_FILE_DELETE_CHILD |
				SMB_FILE_WRITE_ATTRIBUTES | SMB_DELETE | SMB_WRITE_DAC | SMB_WRITE_OWNER;

	memset(&o, 0, sizeof(o));
	o.obj.fd = o.parent.fd = -1;
	o.obj.st.st_mode = S_IFREG | 0644;
	o.obj.st.st_uid = o.obj.st.st_gid = USER;
	ck_assert_uint_eq(smb_ctx_maximal(&o, &root), SMB_FILE_ALL_ACCESS);
	ck_assert_uint_ne(smb_ctx_maximal(&o, &user) & SMB_FILE_WRITE_DATA, 0);
	o.obj.snap = true;
	ck_assert_uint_eq(smb_ctx_maximal(&o, &root), SMB_FILE_ALL_ACCESS & ~change);
	ck_assert_uint_eq(smb_ctx_maximal(&o, &user) & change, 0);
	ck_assert_uint_ne(smb_ctx_maximal(&o, &user) & SMB_FILE_READ_DATA, 0);
}
END_TEST

/* A self-relative descriptor of uid, gid and mode, or one spoilt as how says. */
static size_t sd_blob(uint8_t *out, size_t cap, uint32_t uid, uint32_t gid, uint32_t mode, int how)
{
	struct smb_sd sd;
	struct ut_buf b;
	uint32_t parts = SMB_SD_OWNER | SMB_SD_GROUP | SMB_SD_DACL;
	size_t n;

	smb_sd_from_unix(uid, gid, mode, false, &sd);
	if (how == SD_DENY)
		sd.dacl.ace[2].type = SMB_SD_ACCESS_DENIED;
	if (how == SD_SACL) {
		sd.has_sacl = true;
		sd.control |= SMB_SD_SACL_PRESENT;
		sd.sacl.revision = 2;
		parts |= SMB_SD_SACL;
	}
	if (how == SD_NULL_DACL)
		sd.has_dacl = false; /* DACL_PRESENT stays: the NULL DACL */
	if (how == SD_NO_OWNER)
		parts = SMB_SD_DACL; /* the DACL's user ACE then names someone else than the creator */
	ut_buf_init(&b, 4096);
	ck_assert_int_eq(smb_sd_encode(&b, &sd, parts), AQ_OK);
	n = b.len;
	ck_assert_uint_le(n, cap);
	memcpy(out, ut_buf_bytes(&b), n);
	ut_buf_cleanup(&b);
	return n;
}

START_TEST(test_secd_root)
{
	struct smbt_conn a;
	struct answer r;
	uint8_t sd[512], junk[8] = { 1, 0, 4, 0x80, 0xff, 0xff, 0, 0 };
	size_t n;
	char p[4200];
	struct stat st;

	setup(&a, 0);
	n = sd_blob(sd, sizeof(sd), USER, USER + 1, 0640, SD_PLAIN);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "sd.txt", FILE_CREATE, 0x40, &(struct ctxin){ "SecD", sd, n }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	path_of("sd.txt", p, sizeof(p));
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_uid, USER);
	ck_assert_uint_eq(st.st_gid, USER + 1);
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
	/* an existing file is opened, its descriptor kept */
	n = sd_blob(sd, sizeof(sd), 0, 0, 0600, SD_PLAIN);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "sd.txt", FILE_OPEN, 0x40, &(struct ctxin){ "SecD", sd, n }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_uid, USER);
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
	/* malformed, or with no POSIX equivalent: refused, nothing made */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "bad.txt", FILE_CREATE, 0x40, &(struct ctxin){ "SecD", junk, sizeof(junk) }, 1, &r),
			  STATUS_INVALID_PARAMETER);
	n = sd_blob(sd, sizeof(sd), USER, USER, 0644, SD_DENY);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "bad.txt", FILE_CREATE, 0x40, &(struct ctxin){ "SecD", sd, n }, 1, &r),
			  STATUS_NOT_SUPPORTED);
	for (int how = SD_SACL; how <= SD_NO_OWNER; how++) {
		n = sd_blob(sd, sizeof(sd), USER, USER, 0644, how);
		ck_assert_uint_eq(create(&a, RW_ACCESS, "bad.txt", FILE_CREATE, 0x40, &(struct ctxin){ "SecD", sd, n }, 1,
					 &r),
				  STATUS_NOT_SUPPORTED);
	}
	/* the same DACL without an owner, as root's own: the owner's ACE names root */
	n = sd_blob(sd, sizeof(sd), 0, 0, 0604, SD_NO_OWNER);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "noowner.txt", FILE_CREATE, 0x40, &(struct ctxin){ "SecD", sd, n }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	path_of("noowner.txt", p, sizeof(p));
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0604);
	ck_assert(!exists("bad.txt"));
	teardown();
}
END_TEST

START_TEST(test_secd_user)
{
	struct smbt_conn a;
	struct answer r;
	uint8_t sd[512];
	size_t n;
	char p[4200];
	struct stat st;

	setup(&a, USER);
	n = sd_blob(sd, sizeof(sd), USER, USER, 0600, SD_PLAIN);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "own.txt", FILE_CREATE, 0x40, &(struct ctxin){ "SecD", sd, n }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	path_of("own.txt", p, sizeof(p));
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* a user gives a file to nobody else */
	n = sd_blob(sd, sizeof(sd), USER + 7, USER, 0600, SD_PLAIN);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "given.txt", FILE_CREATE, 0x40, &(struct ctxin){ "SecD", sd, n }, 1, &r),
			  STATUS_INVALID_OWNER);
	ck_assert(!exists("given.txt"));
	teardown();
}
END_TEST

START_TEST(test_alsi)
{
	struct smbt_conn a;
	struct answer r;
	uint8_t big[8] = { 0, 0, 0, 0, 1, 0, 0, 0 }; /* 4 GiB, the volume has 1 GiB */
	uint8_t small[8] = { 0, 0x10, 0, 0, 0, 0, 0, 0 };
	char p[4200];
	struct stat st;
	uint64_t fid;
	uint32_t got;

	setup(&a, 0);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "big.bin", FILE_CREATE, 0x40, &(struct ctxin){ "AlSi", big, 8 }, 1, &r),
			  STATUS_DISK_FULL);
	ck_assert(!exists("big.bin"));
	ck_assert_uint_eq(create(&a, RW_ACCESS, "small.bin", FILE_CREATE, 0x40, &(struct ctxin){ "AlSi", small, 8 }, 1, &r),
			  STATUS_SUCCESS);
	/* the 4096 bytes asked are held while the open lives (as a SET_INFO
	 * FileAllocationInformation's, smb_alloc.c), the WRITE fills them */
	{
		uint64_t f1 = smbt_free_bytes(exp0), f2;

		ck_assert_uint_eq(smbl_write(&a, r.fid, "keep"), STATUS_SUCCESS);
		ck_assert_uint_eq(smbt_free_bytes(exp0), f1);
		ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
		f2 = smbt_free_bytes(exp0);
		ck_assert_uint_eq(f2 - f1, 4096 - 4);
	}
	/* an overwrite asking too much keeps the data */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "small.bin", FILE_OVERWRITE_IF, 0x40, &(struct ctxin){ "AlSi", big, 8 }, 1, &r),
			  STATUS_DISK_FULL);
	path_of("small.bin", p, sizeof(p));
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 4);
	/* 900 MiB of the volume's 1 GiB used by one file: 500 MiB fits an
	 * overwrite of that file (its bytes go first), not a new file */
	{
		uint8_t eof[8] = { 0, 0, 0, 0x38, 0, 0, 0, 0 }, half[8] = { 0, 0, 0, 0x1f, 0, 0, 0, 0 };

		ck_assert_uint_eq(create(&a, RW_ACCESS, "fat.bin", FILE_CREATE, 0x40, NULL, 0, &r), STATUS_SUCCESS);
		ck_assert_uint_eq(smbl_set_info(&a, r.fid, 20 /* FileEndOfFileInformation */, eof, 8), STATUS_SUCCESS);
		ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
		ck_assert_uint_eq(create(&a, RW_ACCESS, "half.bin", FILE_CREATE, 0x40, &(struct ctxin){ "AlSi", half, 8 }, 1,
					 &r),
				  STATUS_DISK_FULL);
		ck_assert(!exists("half.bin"));
		ck_assert_uint_eq(create(&a, RW_ACCESS, "fat.bin", FILE_OVERWRITE_IF, 0x40,
					 &(struct ctxin){ "AlSi", half, 8 }, 1, &r),
				  STATUS_SUCCESS);
		ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
		path_of("fat.bin", p, sizeof(p));
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert_int_eq(st.st_size, 0);
	}
	/* a directory has no allocation: ignored */
	ck_assert_uint_eq(create(&a, RW_ACCESS, "dir", FILE_CREATE, 0x1, &(struct ctxin){ "AlSi", big, 8 }, 1, &r), STATUS_SUCCESS);
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "short.bin", FILE_CREATE, 0x40, &(struct ctxin){ "AlSi", small, 4 }, 1, &r),
			  STATUS_INVALID_PARAMETER);
	ck_assert(!exists("short.bin"));
	(void)fid;
	(void)got;
	teardown();
}
END_TEST

START_TEST(test_unknown_ignored)
{
	struct smbt_conn a;
	struct answer r;
	size_t len;
	static const uint8_t aapl[24] = { 1 }; /* server query */

	setup(&a, 0);
	ck_assert_uint_eq(create(&a, RW_ACCESS, "mac.txt", FILE_CREATE, 0x40, &(struct ctxin){ "AAPL", aapl, sizeof(aapl) }, 1, &r),
			  STATUS_SUCCESS);
	ck_assert_ptr_null(answered(&r, "AAPL", &len));
	ck_assert_uint_eq(smbl_close(&a, r.fid), STATUS_SUCCESS);
	teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb_ctx");
	TCase *tc = tcase_create("ctx");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_exta);
	tcase_add_test(tc, test_qfid);
	tcase_add_test(tc, test_mxac_root);
	tcase_add_test(tc, test_mxac_user);
	tcase_add_test(tc, test_mxac_snapshot);
	tcase_add_test(tc, test_secd_root);
	tcase_add_test(tc, test_secd_user);
	tcase_add_test(tc, test_alsi);
	tcase_add_test(tc, test_unknown_ignored);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
