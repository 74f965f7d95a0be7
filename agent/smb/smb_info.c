/* smb_info: QUERY_DIRECTORY (the MS-FSCC directory classes clients list
 * with, wildcards, restart), QUERY_INFO (file and filesystem classes, the
 * UNIX-style security descriptor) and SET_INFO (basic, end-of-file,
 * allocation, disposition, rename and link (smb_info_name.c), position)
 * over the volume store.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/smb/smb_sd.h"
#include "agent/smb/smb_srv_internal.h"
#include "agent/vol/vol_clone.h"
#include "api/api_error.h"

/* MS-FSCC 2.4 information classes */
#define FileDirectoryInformation 1u
#define FileFullDirectoryInformation 2u
#define FileBothDirectoryInformation 3u
#define FileBasicInformation 4u
#define FileStandardInformation 5u
#define FileInternalInformation 6u
#define FileEaInformation 7u
#define FileAccessInformation 8u
#define FileFullEaInformation 15u
#define FileRenameInformation 10u
#define FileLinkInformation 11u
#define FileNamesInformation 12u
#define FileDispositionInformation 13u
#define FilePositionInformation 14u
#define FileModeInformation 16u
#define FileAlignmentInformation 17u
#define FileAllInformation 18u
#define FileAllocationInformation 19u
#define FileEndOfFileInformation 20u
#define FileAlternateNameInformation 21u
#define FileStreamInformation 22u
#define FileCompressionInformation 28u
#define FileNormalizedNameInformation 48u
#define FileNetworkOpenInformation 34u
#define FileAttributeTagInformation 35u
#define FileIdBothDirectoryInformation 37u
#define FileIdFullDirectoryInformation 38u
/* MS-FSCC 2.5 file system classes */
#define FileFsVolumeInformation 1u
#define FileFsSizeInformation 3u
#define FileFsDeviceInformation 4u
#define FileFsAttributeInformation 5u
#define FileFsFullSizeInformation 7u
#define FileFsSectorSizeInformation 11u

#define SMB_INFO_SECTOR 4096u

static void smb_info_basic(struct ut_buf *b, const struct smb_wire_attrs *a)
{
	smb_wire_put_u64(b, a->creation);
	smb_wire_put_u64(b, a->last_access);
	smb_wire_put_u64(b, a->last_write);
	smb_wire_put_u64(b, a->change);
	smb_wire_put_u32(b, a->attributes);
	smb_wire_put_u32(b, 0);
}

static void smb_info_standard(struct ut_buf *b, const struct smb_open *o, const struct smb_wire_attrs *a)
{
	smb_wire_put_u64(b, a->allocation);
	smb_wire_put_u64(b, a->eof);
	smb_wire_put_u32(b, (uint32_t)o->obj.st.st_nlink);
	smb_wire_put_u8(b, o->delete_on_close);
	smb_wire_put_u8(b, o->dir);
	smb_wire_put_u16(b, 0);
}

/* ---- QUERY_DIRECTORY ---- */
struct smb_dir_fill {
	struct smb_req *r;
	struct smb_open *o;
	struct ut_buf *b;
	uint8_t cls;
	size_t max, last;            /* output cap; where the last entry starts */
	unsigned count;
	bool single, full;
	int err;
};

static int smb_dir_entry(void *arg, const char *name, size_t nlen, uint64_t ino, uint64_t cookie)
{
	struct smb_dir_fill *f = arg;
	struct smb_open tmp = { 0 };
	struct smb_wire_attrs a;
	uint32_t ea;
	char nm[VOL_NAME_MAX + 1];
	size_t start = f->b->len, name_at, ulen = 0;
	struct ut_buf *b = f->b;

	(void)ino;
	if (f->single && f->count)
		return 1;
	if (nlen > VOL_NAME_MAX)
		goto skip;
	memcpy(nm, name, nlen);
	nm[nlen] = '\0';
	if (fnmatch(f->o->pattern, nm, FNM_CASEFOLD) != 0)
		goto skip;
	tmp.obj.fd = -1;
	if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0) {
		tmp.obj.st = f->o->obj.st;
	} else if (vol_lookup(&f->o->obj, &f->r->sess->cred, nm, nlen, &tmp.obj) != 0) {
		goto skip; /* gone meanwhile */
	}
	smb_open_attrs(&tmp, &a);
	ea = tmp.obj.fd >= 0 ? smb_ea_size(&tmp) : 0;
	if (tmp.obj.fd >= 0)
		vol_obj_cleanup(&tmp.obj);
	if (f->count)
		smb_wire_pad(b, 0, 8);
	start = b->len;
	smb_wire_put_u32(b, 0); /* NextEntryOffset */
	smb_wire_put_u32(b, 0); /* FileIndex */
	if (f->cls != FileNamesInformation) {
		smb_wire_put_u64(b, a.creation);
		smb_wire_put_u64(b, a.last_access);
		smb_wire_put_u64(b, a.last_write);
		smb_wire_put_u64(b, a.change);
		smb_wire_put_u64(b, a.eof);
		smb_wire_put_u64(b, a.allocation);
		smb_wire_put_u32(b, a.attributes);
	}
	name_at = b->len;
	smb_wire_put_u32(b, 0); /* FileNameLength */
	if (f->cls != FileDirectoryInformation && f->cls != FileNamesInformation)
		smb_wire_put_u32(b, ea); /* EaSize */
	if (f->cls == FileBothDirectoryInformation || f->cls == FileIdBothDirectoryInformation) {
		smb_wire_put_u8(b, 0); /* no 8.3 names */
		smb_wire_put_u8(b, 0);
		ut_buf_put_zero(b, 24);
	}
	if (f->cls == FileIdBothDirectoryInformation)
		smb_wire_put_u16(b, 0);
	if (f->cls == FileIdFullDirectoryInformation)
		smb_wire_put_u32(b, 0);
	if (f->cls == FileIdBothDirectoryInformation || f->cls == FileIdFullDirectoryInformation)
		smb_wire_put_u64(b, (uint64_t)tmp.obj.st.st_ino);
	if (smb_wire_put_utf16(b, nm, nlen, &ulen) != AQ_OK || b->err != AQ_OK || b->len > f->max) {
		b->len = f->count ? f->last + 0 : 0;
		if (f->count) /* drop the padding too: the last entry ends the buffer */
			b->len = start;
		b->err = AQ_OK;
		f->full = true;
		return 1;
	}
	ut_buf_set_le32(b, name_at, (uint32_t)ulen);
	if (f->count)
		ut_buf_set_le32(b, f->last, (uint32_t)(start - f->last));
	f->last = start;
	f->count++;
skip:
	f->o->cookie = cookie;
	return 0;
}

static void smb_dir_pattern(struct smb_open *o, const uint8_t *p, size_t len)
{
	char pat[256];

	if (!len || smb_wire_utf16_to_utf8(p, len, pat, sizeof(pat), NULL) != AQ_OK)
		snprintf(pat, sizeof(pat), "*");
	/* Windows' "<", ">" and '"' wildcards: treated as '*', '?' and '.' */
	for (char *c = pat; *c; c++)
		*c = *c == '<' ? '*' : *c == '>' ? '?' : *c == '"' ? '.' : *c;
	snprintf(o->pattern, sizeof(o->pattern), "%s", pat);
}

uint32_t smb_info_query_dir(struct smb_req *r)
{
	struct smb_wire_query_dir_req q;
	struct ut_buf b = { 0 };
	struct smb_dir_fill f = { .r = r };
	struct smb_open *o;
	uint32_t status;
	bool eof = false;
	int rc;

	if (smb_wire_query_dir_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (!o->dir)
		return STATUS_INVALID_PARAMETER;
	switch (q.info_class) {
	case FileDirectoryInformation: case FileFullDirectoryInformation: case FileBothDirectoryInformation:
	case FileNamesInformation: case FileIdBothDirectoryInformation: case FileIdFullDirectoryInformation:
		break;
	default:
		return STATUS_INVALID_INFO_CLASS;
	}
	if (!o->dir_started || (q.flags & (SMB2_RESTART_SCANS | SMB2_REOPEN))) {
		o->cookie = 0;
		o->dir_eof = false;
		o->dir_started = true;
		smb_dir_pattern(o, q.pattern, q.pattern_len);
	}
	if (o->dir_eof)
		return STATUS_NO_MORE_FILES;
	f.o = o;
	f.b = &b;
	f.cls = q.info_class;
	f.max = q.output_len < (1u << 20) ? q.output_len : (1u << 20);
	f.single = q.flags & SMB2_RETURN_SINGLE_ENTRY;
	ut_buf_init(&b, f.max + 1024);
	bool first = o->cookie == 0;

	rc = vol_readdir(&o->obj, &r->sess->cred, o->cookie, smb_dir_entry, &f, &eof);
	if (rc != 0) {
		status = smb_status_from_errno(rc);
		goto out;
	}
	if (eof && !f.full)
		o->dir_eof = true;
	if (!f.count) {
		status = f.full ? STATUS_BUFFER_TOO_SMALL : first ? STATUS_NO_SUCH_FILE : STATUS_NO_MORE_FILES;
		goto out;
	}
	smb_wire_output_rsp_encode(r->out, r->hdr_off, ut_buf_bytes(&b), b.len);
	status = STATUS_SUCCESS;
out:
	ut_buf_cleanup(&b);
	return status;
}

/* ---- QUERY_INFO ---- */

/* The 8.3 name a client asking FileAlternateNameInformation gets (none
 * is kept): the name itself, uppercased, when it is one; else the first
 * letters of its stem, '~' and two characters of a hash of the whole name,
 * and its first three extension letters (Samba's mangling, deterministic;
 * like Samba's, two long names may share one). */
static void smb_info_short_name(const struct smb_open *o, char out[13])
{
	static const char b36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	const char *name = o->name[0] ? o->name : ".", *dot = strrchr(name, '.');
	size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name), n = 0, e = 0;
	bool plain = stem <= 8 && (!dot || dot == name || strlen(dot + 1) <= 3);
	uint32_t h = 2166136261u;

	for (const char *c = name; *c; c++) {
		h = (h ^ (uint8_t)*c) * 16777619u;
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      (*c == '.' && c == dot) || *c == '_' || *c == '-'))
			plain = false;
	}
	for (size_t i = 0; i < stem && n < (plain ? 8u : 5u); i++)
		if (name[i] != '.' && name[i] != ' ')
			out[n++] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
	if (!plain) {
		out[n++] = '~';
		out[n++] = b36[h % 36];
		out[n++] = b36[(h / 36) % 36];
	}
	if (dot && dot != name && dot[1]) {
		out[n++] = '.';
		for (const char *c = dot + 1; *c && e < 3; c++, e++)
			out[n++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
	}
	out[n] = '\0';
}

/* The fixed part of a file information class (MS-FSCC 2.4): a buffer
 * smaller than it is INFO_LENGTH_MISMATCH, one that holds it but not the
 * whole answer BUFFER_OVERFLOW (what Windows and Samba answer). */
static size_t smb_info_fixed(uint8_t cls, size_t len)
{
	switch (cls) {
	case FileBasicInformation: return 40;
	case FileStandardInformation: return 24;
	case FileInternalInformation: case FileAlternateNameInformation: case FileAttributeTagInformation: return 8;
	case FileEaInformation: case FileAccessInformation: case FileModeInformation: case FileAlignmentInformation:
		return 4;
	case FilePositionInformation: return 8;
	case FileAllInformation: return 104;
	case FileStreamInformation: return 32;
	case FileCompressionInformation: return 16;
	case FileNetworkOpenInformation: return 56;
	default: return len;
	}
}
static uint32_t smb_info_file(struct smb_req *r, struct smb_open *o, uint8_t cls, struct ut_buf *b)
{
	struct smb_wire_attrs a;
	size_t at;
	size_t ulen = 0;

	vol_refresh(&o->obj);
	smb_open_attrs(o, &a);
	switch (cls) {
	case FileBasicInformation:
		smb_info_basic(b, &a);
		break;
	case FileStandardInformation:
		smb_info_standard(b, o, &a);
		break;
	case FileInternalInformation:
		smb_wire_put_u64(b, (uint64_t)o->obj.st.st_ino);
		break;
	case FileEaInformation:
		smb_wire_put_u32(b, smb_ea_size(o));
		break;
	case FileAccessInformation:
		smb_wire_put_u32(b, o->access);
		break;
	case FilePositionInformation:
		smb_wire_put_u64(b, o->position);
		break;
	case FileModeInformation:
	case FileAlignmentInformation:
		smb_wire_put_u32(b, 0);
		break;
	case FileAllInformation:
		smb_info_basic(b, &a);
		smb_info_standard(b, o, &a);
		smb_wire_put_u64(b, (uint64_t)o->obj.st.st_ino);
		smb_wire_put_u32(b, smb_ea_size(o)); /* EA */
		smb_wire_put_u32(b, o->access); /* access */
		smb_wire_put_u64(b, o->position);
		smb_wire_put_u32(b, 0);         /* mode */
		smb_wire_put_u32(b, 0);         /* alignment */
		at = b->len;
		smb_wire_put_u32(b, 0);
		{
			char name[SMB_WIRE_NAME_MAX + 2];

			snprintf(name, sizeof(name), "\\%s", o->path);
			for (char *c = name; *c; c++)
				*c = *c == '/' ? '\\' : *c;
			smb_wire_put_utf16(b, name, strlen(name), &ulen);
		}
		ut_buf_set_le32(b, at, (uint32_t)ulen);
		break;
	case FileNetworkOpenInformation:
		smb_wire_attrs_encode(b, &a);
		smb_wire_put_u32(b, 0);
		break;
	case FileAttributeTagInformation:
		smb_wire_put_u32(b, a.attributes);
		smb_wire_put_u32(b, 0);
		break;
	case FileStreamInformation:
		if (o->dir)
			break; /* no streams */
		smb_wire_put_u32(b, 0);
		smb_wire_put_u32(b, 14);
		smb_wire_put_u64(b, a.eof);
		smb_wire_put_u64(b, a.allocation);
		smb_wire_put_utf16(b, "::$DATA", 7, NULL);
		break;
	case FileAlternateNameInformation: {
		char shortname[13];

		smb_info_short_name(o, shortname);
		at = b->len;
		smb_wire_put_u32(b, 0);
		smb_wire_put_utf16(b, shortname, strlen(shortname), &ulen);
		ut_buf_set_le32(b, at, (uint32_t)ulen);
		break;
	}
	case FileNormalizedNameInformation: { /* the path from the share root, '\\'-separated (3.1.1 only) */
		char name[SMB_WIRE_NAME_MAX + 1];

		if (r->c->dialect < SMB2_DIALECT_311)
			return STATUS_NOT_SUPPORTED;
		snprintf(name, sizeof(name), "%s", o->path);
		for (char *c = name; *c; c++)
			*c = *c == '/' ? '\\' : *c;
		at = b->len;
		smb_wire_put_u32(b, 0);
		smb_wire_put_utf16(b, name, strlen(name), &ulen);
		ut_buf_set_le32(b, at, (uint32_t)ulen);
		break;
	}
	case FileCompressionInformation: /* never compressed */
		smb_wire_put_u64(b, a.eof);
		smb_wire_put_u16(b, 0);  /* COMPRESSION_FORMAT_NONE */
		ut_buf_put_zero(b, 6);   /* unit, chunk and cluster shifts, reserved */
		break;
	default:
		(void)r;
		return STATUS_INVALID_INFO_CLASS;
	}
	return STATUS_SUCCESS;
}

static uint32_t smb_info_fs(struct smb_req *r, struct smb_open *o, uint8_t cls, struct ut_buf *b)
{
	struct vol_fsstat fs;
	size_t ulen = 0, at;
	int rc;

	switch (cls) {
	case FileFsVolumeInformation:
		smb_wire_put_u64(b, r->c->srv->start_time);
		smb_wire_put_u32(b, (uint32_t)vol_export_fsid(r->tree->exp));
		at = b->len;
		smb_wire_put_u32(b, 0);
		smb_wire_put_u8(b, 0);
		smb_wire_put_u8(b, 0);
		smb_wire_put_utf16(b, r->tree->share.name, strlen(r->tree->share.name), &ulen);
		ut_buf_set_le32(b, at, (uint32_t)ulen);
		return STATUS_SUCCESS;
	case FileFsSizeInformation:
	case FileFsFullSizeInformation:
		if ((rc = vol_fsstat(&o->obj, &fs)) != 0)
			return smb_status_from_errno(rc);
		smb_wire_put_u64(b, fs.tbytes / SMB_INFO_SECTOR);
		smb_wire_put_u64(b, fs.abytes / SMB_INFO_SECTOR);
		if (cls == FileFsFullSizeInformation)
			smb_wire_put_u64(b, fs.fbytes / SMB_INFO_SECTOR);
		smb_wire_put_u32(b, 1);                /* sectors per unit */
		smb_wire_put_u32(b, SMB_INFO_SECTOR);  /* bytes per sector */
		return STATUS_SUCCESS;
	case FileFsDeviceInformation:
		smb_wire_put_u32(b, 0x00000007u); /* FILE_DEVICE_DISK */
		smb_wire_put_u32(b, 0);
		return STATUS_SUCCESS;
	case FileFsAttributeInformation:
		/* case sensitive search and names, case preserved, unicode,
		 * sparse files (smb_sparse.c), extended attributes (smb_info_ea.c),
		 * block cloning where the shelf clones (smb_clone.c) */
		smb_wire_put_u32(b, 0x00800047u | (vol_clone_supported(&o->obj) ? 0x08000000u : 0));
		smb_wire_put_u32(b, VOL_NAME_MAX);
		smb_wire_put_u32(b, 8);
		smb_wire_put_utf16(b, "NTFS", 4, NULL);
		return STATUS_SUCCESS;
	case FileFsSectorSizeInformation:
		for (int i = 0; i < 4; i++)
			smb_wire_put_u32(b, SMB_INFO_SECTOR);
		smb_wire_put_u32(b, 0x3u);        /* aligned device, partition aligned */
		smb_wire_put_u32(b, 0);
		smb_wire_put_u32(b, 0);
		return STATUS_SUCCESS;
	default:
		return STATUS_INVALID_INFO_CLASS;
	}
}

/* What a QUERY_INFO needs of the open's granted access (MS-SMB2
 * 3.3.5.20.1 and 3.3.5.20.3), checked before anything is looked up: the
 * attribute classes FILE_READ_ATTRIBUTES, the EAs FILE_READ_EA; a
 * security descriptor READ_CONTROL for its owner, group, DACL or label
 * and ACCESS_SYSTEM_SECURITY for its SACL. The other classes (standard,
 * internal, EA size, access, position, mode, alignment, name, stream, the
 * file system's) need nothing. */
#define SMB_ACCESS_SYSTEM_SECURITY 0x01000000u
static const struct {
	uint8_t type, cls;
	uint32_t needs;
} smb_info_query_access[] = {
	{ SMB2_0_INFO_FILE, FileBasicInformation, SMB_FILE_READ_ATTRIBUTES },
	{ SMB2_0_INFO_FILE, FileAllInformation, SMB_FILE_READ_ATTRIBUTES },
	{ SMB2_0_INFO_FILE, FileNetworkOpenInformation, SMB_FILE_READ_ATTRIBUTES },
	{ SMB2_0_INFO_FILE, FileAttributeTagInformation, SMB_FILE_READ_ATTRIBUTES },
	{ SMB2_0_INFO_FILE, FileFullEaInformation, SMB_FILE_READ_EA },
};

static bool smb_info_query_allowed(const struct smb_open *o, const struct smb_wire_query_info_req *q)
{
	if (q->info_type == SMB2_0_INFO_SECURITY)
		return (!(q->additional & 0x17u /* OWNER, GROUP, DACL, LABEL */) || smb_open_may(o, SMB_READ_CONTROL)) &&
		       (!(q->additional & 0x08u /* SACL */) || smb_open_may(o, SMB_ACCESS_SYSTEM_SECURITY));
	for (size_t i = 0; i < sizeof(smb_info_query_access) / sizeof(smb_info_query_access[0]); i++)
		if (smb_info_query_access[i].type == q->info_type && smb_info_query_access[i].cls == q->info_class)
			return smb_open_may(o, smb_info_query_access[i].needs);
	return true;
}

uint32_t smb_info_query(struct smb_req *r)
{
	struct smb_wire_query_info_req q;
	struct ut_buf b = { 0 };
	struct smb_open *o;
	uint32_t status;

	if (smb_wire_query_info_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (!smb_info_query_allowed(o, &q))
		return STATUS_ACCESS_DENIED;
	ut_buf_init(&b, 65536);
	if (q.info_type == SMB2_0_INFO_FILE && q.info_class == FileFullEaInformation) {
		status = smb_ea_query(o, &q, &b); /* fits OutputBufferLength */
	} else if (q.info_type == SMB2_0_INFO_FILE) {
		status = smb_info_file(r, o, q.info_class, &b);
	} else if (q.info_type == SMB2_0_INFO_FILESYSTEM) {
		status = smb_info_fs(r, o, q.info_class, &b);
	} else if (q.info_type == SMB2_0_INFO_SECURITY) {
		status = smb_acl_query(o, q.additional, &b); /* stored (NTFS) or synthesized */
	} else {
		status = STATUS_INVALID_INFO_CLASS;
	}
	if (status == STATUS_SUCCESS && b.err != AQ_OK)
		status = STATUS_INTERNAL_ERROR;
	if (status == STATUS_SUCCESS && b.len > q.output_len)
		status = q.info_type == SMB2_0_INFO_SECURITY ? STATUS_BUFFER_OVERFLOW
			 : q.info_type == SMB2_0_INFO_FILE && q.output_len >= smb_info_fixed(q.info_class, b.len)
				 ? STATUS_BUFFER_OVERFLOW
				 : STATUS_INFO_LENGTH_MISMATCH;
	if (status == STATUS_BUFFER_OVERFLOW && q.info_type == SMB2_0_INFO_SECURITY) {
		/* the size it needs, for the client to ask again */
		struct ut_buf n = { 0 };

		ut_buf_init(&n, 4);
		smb_wire_put_u32(&n, (uint32_t)b.len);
		smb_wire_output_rsp_encode(r->out, r->hdr_off, ut_buf_bytes(&n), n.len);
		ut_buf_cleanup(&n);
		status = STATUS_BUFFER_TOO_SMALL;
	} else if (status == STATUS_SUCCESS || status == STATUS_BUFFER_OVERFLOW) {
		smb_wire_output_rsp_encode(r->out, r->hdr_off, ut_buf_bytes(&b), b.len < q.output_len ? b.len : q.output_len);
	}
	ut_buf_cleanup(&b);
	return status;
}

/* ---- SET_INFO ---- */
/* The rename and the hard link: smb_info_name.c. */

/* vol_readdir's callback for smb_info_dir_empty: stops at the first entry
 * that is not "." or "..". */
static int smb_info_any_entry(void *arg, const char *name, size_t nlen, uint64_t ino, uint64_t cookie)
{
	bool *found = arg;

	(void)ino;
	(void)cookie;
	if ((nlen == 1 && name[0] == '.') || (nlen == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	*found = true;
	return 1;
}

/* A delete-pending directory must be empty (MS-FSA 2.1.5.14.3): refused at
 * SET_INFO time with STATUS_DIRECTORY_NOT_EMPTY, as Windows and Samba do.
 * Accepted, the rmdir at CLOSE would fail where no client sees it (a
 * Linux `rmdir` of a non-empty directory reported success). */
static uint32_t smb_info_dir_empty(struct smb_req *r, struct smb_open *o)
{
	bool found = false, eof = false;
	int rc;

	rc = vol_readdir(&o->obj, &r->sess->cred, 0, smb_info_any_entry, &found, &eof);
	if (rc != 0)
		return smb_status_from_errno(rc);
	return found ? STATUS_DIRECTORY_NOT_EMPTY : STATUS_SUCCESS;
}

static int smb_info_time(uint64_t ft, struct timespec *ts, int *how)
{
	if (ft == 0 || ft == UINT64_MAX) /* 0: leave; -1: stop updating (not kept) */
		return 0;
	ft -= 116444736000000000ull;
	ts->tv_sec = (time_t)(ft / 10000000u);
	ts->tv_nsec = (long)(ft % 10000000u) * 100;
	*how = 2;
	return 0;
}

/* FileBasicInformation's FileAttributes (0: left as they are): the DOS
 * attributes kept in the store (SPARSE_FILE stays as FSCTL_SET_SPARSE left
 * it); DIRECTORY on a file and TEMPORARY on a directory are refused, as
 * Windows and Samba do. */
static uint32_t smb_info_set_dos(struct smb_req *r, struct smb_open *o, uint32_t attrs)
{
	uint32_t old;
	int rc;

	if (attrs == 0)
		return STATUS_SUCCESS;
	if ((!o->dir && (attrs & FILE_ATTRIBUTE_DIRECTORY)) || (o->dir && (attrs & FILE_ATTRIBUTE_TEMPORARY)))
		return STATUS_INVALID_PARAMETER;
	old = smb_open_dos(o);
	rc = vol_dos_set(&o->obj, &r->sess->cred, (attrs & SMB_DOS_SETTABLE) | (old & FILE_ATTRIBUTE_SPARSE_FILE));
	return rc == 0 ? STATUS_SUCCESS : smb_status_from_errno(rc);
}

/* What a SET_INFO of a file class needs of the open's granted access
 * (MS-SMB2 3.3.5.21.1, MS-FSA 2.1.5.14; Windows checks it for the class
 * whatever the values, before anything is looked at): the times and DOS
 * attributes FILE_WRITE_ATTRIBUTES, the allocation and the end of file
 * FILE_WRITE_DATA, the delete disposition and a rename DELETE (a rename
 * takes the name away as a delete does; Windows and Samba answer
 * ACCESS_DENIED). The EAs' FILE_WRITE_EA is checked by smb_ea_set_info;
 * the others need nothing here, FileLinkInformation included: Samba
 * checks no access of the linked open for it (a new name takes nothing
 * away), only the caller's on the target's folder (the store's). */
static const struct {
	uint8_t cls;
	uint32_t needs;
} smb_info_set_access[] = {
	{ FileBasicInformation, SMB_FILE_WRITE_ATTRIBUTES },
	{ FileAllocationInformation, SMB_FILE_WRITE_DATA },
	{ FileEndOfFileInformation, SMB_FILE_WRITE_DATA },
	{ FileDispositionInformation, SMB_DELETE },
	{ FileRenameInformation, SMB_DELETE },
};

static bool smb_info_set_allowed(const struct smb_open *o, uint8_t cls)
{
	for (size_t i = 0; i < sizeof(smb_info_set_access) / sizeof(smb_info_set_access[0]); i++)
		if (smb_info_set_access[i].cls == cls)
			return smb_open_may(o, smb_info_set_access[i].needs);
	return true;
}

uint32_t smb_info_set(struct smb_req *r)
{
	struct smb_wire_set_info_req q;
	struct smb_wire_cur c;
	struct vol_sattr sa = { 0 };
	struct smb_open *o;
	uint32_t st;
	int rc;

	if (smb_wire_set_info_req_decode(&r->m, &q) != AQ_OK)
		return STATUS_INVALID_PARAMETER;
	if (!(o = smb_open_find(r, &q.fid)))
		return STATUS_FILE_CLOSED;
	if (q.info_type == SMB2_0_INFO_SECURITY) { /* smb_info_sec.c */
		if ((st = smb_info_sec_set(r, o, &q)) != STATUS_SUCCESS)
			return st;
		smb_wire_set_info_rsp_encode(r->out);
		return STATUS_SUCCESS;
	}
	if (q.info_type != SMB2_0_INFO_FILE)
		return STATUS_NOT_SUPPORTED;
	if (!smb_info_set_allowed(o, q.info_class))
		return STATUS_ACCESS_DENIED;
	smb_wire_cur_init(&c, q.data, q.data_len);
	switch (q.info_class) {
	case FileBasicInformation: {
		uint64_t cr = smb_wire_u64(&c), at = smb_wire_u64(&c), wr = smb_wire_u64(&c);
		uint32_t attrs;

		(void)cr;
		smb_wire_u64(&c);
		attrs = smb_wire_u32(&c);
		if (c.err != AQ_OK)
			return STATUS_INFO_LENGTH_MISMATCH;
		if ((st = smb_info_set_dos(r, o, attrs)) != STATUS_SUCCESS)
			return st;
		smb_info_time(at, &sa.atime, &sa.atime_how);
		smb_info_time(wr, &sa.mtime, &sa.mtime_how);
		if (!sa.atime_how && !sa.mtime_how)
			break;
		rc = vol_setattr(&o->obj, &r->sess->cred, &sa);
		if (rc != 0)
			return smb_status_from_errno(rc);
		break;
	}
	case FileAllocationInformation: { /* smb_alloc.c */
		uint64_t size = smb_wire_u64(&c);

		if (c.err != AQ_OK)
			return STATUS_INFO_LENGTH_MISMATCH;
		if ((st = smb_alloc_set(r, o, size)) != STATUS_SUCCESS)
			return st;
		break;
	}
	case FileEndOfFileInformation: {
		uint64_t size = smb_wire_u64(&c);

		if (c.err != AQ_OK)
			return STATUS_INFO_LENGTH_MISMATCH;
		if (o->dir)
			return STATUS_INVALID_PARAMETER;
		smb_alloc_fill(o, size); /* growth into what the open holds */
		sa.set_size = true;
		sa.size = size;
		{
			struct vol_lease_by by;

			smb_lease_by(o, &by); /* the open's own cache is not broken */
			if ((rc = vol_setattr_by(&o->obj, &r->sess->cred, &sa, &by)) != 0)
				return smb_status_from_errno(rc);
		}
		break;
	}
	case FileDispositionInformation: {
		uint8_t del = smb_wire_u8(&c);

		if (c.err != AQ_OK)
			return STATUS_INFO_LENGTH_MISMATCH;
		if (del && o->parent.fd < 0)
			return STATUS_ACCESS_DENIED;
		if (del && !o->dir && (smb_open_dos(o) & FILE_ATTRIBUTE_READONLY))
			return STATUS_CANNOT_DELETE;
		if (del && o->dir && (st = smb_info_dir_empty(r, o)) != STATUS_SUCCESS)
			return st;
		if (del && (st = smb_lease_delete(r, o)) != STATUS_SUCCESS)
			return st; /* waits for an NFSv4.1 delegation's return */
		o->delete_on_close = o->delete_pending = del != 0;
		break;
	}
	case FileRenameInformation:
		if ((st = smb_info_rename(r, o, q.data, q.data_len)) != STATUS_SUCCESS)
			return st;
		break;
	case FileLinkInformation:
		if ((st = smb_info_link(r, o, q.data, q.data_len)) != STATUS_SUCCESS)
			return st;
		break;
	case FileFullEaInformation:
		if ((st = smb_ea_set_info(r, o, q.data, q.data_len)) != STATUS_SUCCESS)
			return st;
		break;
	case FilePositionInformation: {
		uint64_t pos = smb_wire_u64(&c);

		if (c.err != AQ_OK)
			return STATUS_INFO_LENGTH_MISMATCH;
		if (pos > (uint64_t)INT64_MAX)
			return STATUS_INVALID_PARAMETER;
		o->position = pos; /* kept for the open, as Windows does; READ and WRITE name their offsets */
		break;
	}
	default:
		return STATUS_INVALID_INFO_CLASS;
	}
	smb_wire_set_info_rsp_encode(r->out);
	return STATUS_SUCCESS;
}
