/* smb_prev: previous versions of a share's files over its snapshots
 * (issue 20): FSCTL_SRV_ENUMERATE_SNAPSHOTS (MS-SMB2 3.3.5.15.1) lists the
 * snapshot times, and a CREATE names one with the SMB2_CREATE_TIMEWARP_TOKEN
 * context ("TWrp", 2.2.13.2.7) or with an "@GMT-YYYY.MM.DD-HH.MM.SS"
 * component in its path (as Samba's shadow_copy2 takes them); the open then
 * walks that snapshot's tree, read-only (the store answers every change
 * with EROFS: STATUS_MEDIA_WRITE_PROTECTED).
 *
 * The snapshots are the export's snapshot folder (vol_snap_root), whether
 * or not .snapshot is shown; the agent sets that folder when the volume has
 * snapshotDirectory or SHOW_PREVIOUS_VERSIONS. A snapshot's time is the
 * birth time of its root folder (statx btime: when the btrfs snapshot or the
 * copy's folder was made; the change time where a file system has none), in
 * whole seconds UTC, which the list and the lookup both use, so a token the
 * list gave always finds its snapshot. The list is listed only with
 * SHOW_PREVIOUS_VERSIONS; a token is honoured whenever the folder is set.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/smb/smb_srv_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SMB_PREV_TOKEN_LEN 24    /* "@GMT-YYYY.MM.DD-HH.MM.SS" */
#define SMB_PREV_ENTRY_BYTES 50  /* the token in UTF-16 with its NUL */

struct smb_prev_snap {
	time_t when;
	char name[VOL_NAME_MAX + 1];
};

static int smb_prev_cmp(const void *a, const void *b)
{
	const struct smb_prev_snap *x = a, *y = b;

	return x->when < y->when ? 1 : x->when > y->when ? -1 : strcmp(x->name, y->name);
}

/* The snapshots of t's export, newest first, up to cap (of *n found). */
static int smb_prev_list(struct smb_tree *t, struct smb_prev_snap *out, size_t cap, size_t *n)
{
	struct vol_obj root;
	struct dirent *de;
	DIR *d;
	int fd, rc;

	*n = 0;
	if ((rc = vol_snap_root(t->exp, &root)) != 0)
		return rc;
	fd = openat(root.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	vol_obj_cleanup(&root);
	if (fd < 0 || !(d = fdopendir(fd))) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while (*n < cap && (de = readdir(d)) != NULL) {
		struct statx sx;

		if (de->d_name[0] == '.' || strlen(de->d_name) > VOL_NAME_MAX ||
		    statx(dirfd(d), de->d_name, AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_CTIME, &sx) != 0 ||
		    !S_ISDIR(sx.stx_mode))
			continue;
		out[*n].when = (sx.stx_mask & STATX_BTIME) ? (time_t)sx.stx_btime.tv_sec : (time_t)sx.stx_ctime.tv_sec;
		snprintf(out[*n].name, sizeof(out[*n].name), "%s", de->d_name);
		(*n)++;
	}
	closedir(d);
	qsort(out, *n, sizeof(*out), smb_prev_cmp);
	return 0;
}

static void smb_prev_token(time_t when, char out[SMB_PREV_TOKEN_LEN + 1])
{
	struct tm tm;

	gmtime_r(&when, &tm);
	snprintf(out, SMB_PREV_TOKEN_LEN + 1, "@GMT-%04d.%02d.%02d-%02d.%02d.%02d", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* "@GMT-YYYY.MM.DD-HH.MM.SS", exactly len bytes at s: its time, or -1. */
static time_t smb_prev_parse(const char *s, size_t len)
{
	struct tm tm = { 0 };
	char buf[SMB_PREV_TOKEN_LEN + 1], check[SMB_PREV_TOKEN_LEN + 1];
	time_t when;

	if (len != SMB_PREV_TOKEN_LEN || strncmp(s, "@GMT-", 5) != 0)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (sscanf(buf, "@GMT-%4d.%2d.%2d-%2d.%2d.%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if ((when = timegm(&tm)) < 0)
		return -1;
	smb_prev_token(when, check); /* no field out of range, no sign, no space */
	return strcmp(check, buf) == 0 ? when : -1;
}

int smb_prev_strip(char *path, int64_t *when)
{
	char *p = path;

	while (*p) {
		char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		time_t t;

		if (n >= 5 && strncmp(p, "@GMT-", 5) == 0) {
			if ((t = smb_prev_parse(p, n)) < 0)
				return -EINVAL;
			if (*when >= 0 && *when != t)
				return -EINVAL; /* two different times in one name */
			*when = t;
			/* drop the component and one separator next to it */
			if (slash) {
				memmove(p, slash + 1, strlen(slash + 1) + 1);
				continue;
			}
			*(p > path ? p - 1 : p) = '\0';
			break;
		}
		if (!slash)
			break;
		p = slash + 1;
	}
	return 0;
}

int smb_prev_twrp(const struct smb_wire_create_req *q, int64_t *when)
{
	const struct smb_wire_create_ctx *c = smb_wire_create_ctx_find(q, SMB2_CREATE_TIMEWARP_TOKEN);
	uint64_t ft = 0;
	int64_t t;

	if (!c)
		return 0;
	if (c->data_len != 8)
		return -EINVAL;
	for (int i = 7; i >= 0; i--)
		ft = ft << 8 | c->data[i];
	if (ft < 116444736000000000ull)
		return -EINVAL; /* before 1970: no snapshot of ours */
	t = (int64_t)((ft - 116444736000000000ull) / 10000000ull);
	if (*when >= 0 && *when != t)
		return -EINVAL;
	*when = t;
	return 0;
}

int smb_prev_open(struct smb_tree *t, const struct vol_cred *cred, int64_t when, struct vol_obj *out)
{
	struct smb_prev_snap *snaps = calloc(SMB_PREV_MAX, sizeof(*snaps));
	struct vol_obj root;
	size_t n = 0, i;
	int rc;

	if (!snaps)
		return -ENOMEM;
	if ((rc = smb_prev_list(t, snaps, SMB_PREV_MAX, &n)) != 0)
		goto out;
	for (i = 0; i < n && snaps[i].when != (time_t)when; i++)
		;
	if (i == n) {
		rc = -ENOENT;
		goto out;
	}
	if ((rc = vol_snap_root(t->exp, &root)) != 0)
		goto out;
	rc = vol_lookup(&root, cred, snaps[i].name, strlen(snaps[i].name), out);
	vol_obj_cleanup(&root);
out:
	free(snaps);
	return rc;
}

uint32_t smb_prev_enumerate(struct smb_req *r, const struct smb_wire_ioctl_req *q)
{
	struct smb_prev_snap *snaps = NULL;
	struct smb_open *o = smb_open_find(r, &q->fid);
	struct ut_buf b = { 0 };
	uint32_t status = STATUS_NO_MEMORY;
	size_t n = 0, size;

	if (q->max_output_response < 16)
		return STATUS_INVALID_PARAMETER;
	if (!o)
		return STATUS_FILE_CLOSED;
	if (!(snaps = calloc(SMB_PREV_MAX, sizeof(*snaps))))
		goto out;
	/* without SHOW_PREVIOUS_VERSIONS (or with no snapshot folder) the
	 * share has no previous versions to show */
	if ((o->tree->share.smb_settings & API_INTENT_SMB_SHOW_PREVIOUS_VERSIONS) &&
	    smb_prev_list(o->tree, snaps, SMB_PREV_MAX, &n) != 0)
		n = 0;
	size = n ? n * SMB_PREV_ENTRY_BYTES + 2 : 0;
	ut_buf_init(&b, 16 + size);
	if (!ut_buf_put_zero(&b, 12))
		goto out;
	ut_buf_set_le32(&b, 0, (uint32_t)n);
	ut_buf_set_le32(&b, 8, (uint32_t)size);
	if (n && 12 + size <= q->max_output_response) {
		ut_buf_set_le32(&b, 4, (uint32_t)n);
		for (size_t i = 0; i < n; i++) {
			char tok[SMB_PREV_TOKEN_LEN + 1];
			size_t wl;

			smb_prev_token(snaps[i].when, tok);
			smb_wire_put_utf16(&b, tok, SMB_PREV_TOKEN_LEN, &wl);
			ut_buf_put_zero(&b, 2);
		}
		ut_buf_put_zero(&b, 2);
	} else {
		ut_buf_put_zero(&b, 4); /* counts only: the 16 bytes a client asks first */
	}
	if (ut_buf_err(&b) != AQ_OK)
		goto out;
	smb_wire_ioctl_rsp_encode(r->out, r->hdr_off, q->ctl_code, &q->fid, ut_buf_bytes(&b), ut_buf_len(&b));
	status = STATUS_SUCCESS;
out:
	ut_buf_cleanup(&b);
	free(snaps);
	return status;
}
