/* aqt_store: the temporary volume store of the suites (see aqt_store.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tests/lib/aqt_store.h"

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

void aqt_store_init(struct aqt_store *t, int n, const struct aqt_store_spec *spec)
{
	ck_assert_int_le(n, AQT_STORE_MAX);
	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/aqt-store-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	t->n = n;
	for (int i = 0; i < n; i++) {
		struct vol_export_cfg *c = &t->cfg[i];

		snprintf(c->id, sizeof(c->id), "%s%d", spec->id_prefix, i);
		snprintf(c->path, sizeof(c->path), "/v%d", i);
		snprintf(c->root, sizeof(c->root), "%s/v%d", t->dir, i);
		ck_assert_int_eq(mkdir(c->root, 0777), 0);
		c->fsid = spec->fsid + (uint64_t)i;
		c->capacity = spec->capacity;
		c->nrules = 1;
		snprintf(c->rules[0].clients, sizeof(c->rules[0].clients), "%s", spec->clients);
		c->rules[0].access = VOL_ACCESS_RW;
		c->rules[0].anon_uid = c->rules[0].anon_gid = spec->anon;
	}
	memset(t->key, spec->key_byte, sizeof(t->key));
	ck_assert_int_eq(vol_store_new(t->key, &t->store), 0);
}

struct vol_fh aqt_store_forge(const uint8_t *key, bool snap, uint64_t fsid, const char *path)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	struct vol_fh out;
	int mnt;

	u.fh.handle_bytes = MAX_HANDLE_SZ;
	ck_assert_int_eq(name_to_handle_at(AT_FDCWD, path, &u.fh, &mnt, 0), 0);
	ck_assert_int_eq(vol_fh_encode(key, snap, fsid, (uint32_t)u.fh.handle_type, u.fh.f_handle,
				       u.fh.handle_bytes, &out), 0);
	return out;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void aqt_store_cleanup(struct aqt_store *t)
{
	vol_store_free(t->store);
	t->store = NULL;
	if (t->dir[0])
		ck_assert_int_eq(nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	t->dir[0] = '\0';
}

/* Whether the ext4 on /dev/name has fast_commit (or an unreadable
 * superblock): the store's vol_ext4_fast_commit, read the same way. */
static bool ext4_fast_commit(const char *name)
{
	unsigned char sb[1024];
	char path[160];
	bool fc = true;
	int fd;

	snprintf(path, sizeof(path), "/dev/%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return true;
	if (pread(fd, sb, sizeof(sb), 1024) == (ssize_t)sizeof(sb) && sb[0x38] == 0x53 && sb[0x39] == 0xEF)
		fc = (sb[0x5D] & 0x04) != 0;
	close(fd);
	return fc;
}

/* Whether dir's file system logs each change whole (the store's
 * vol_one_log, told here the same way): XFS, or ext4 with a jbd2 journal
 * and without fast_commit. */
bool aqt_store_one_log(const char *dir)
{
	char path[96], line[128], jbd[160];
	struct statfs sf;
	struct stat st;
	bool found = false;
	FILE *f;

	if (statfs(dir, &sf) != 0 || stat(dir, &st) != 0)
		return false;
	if (sf.f_type == 0x58465342)
		return true;
	if (sf.f_type != 0xEF53)
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(st.st_dev), minor(st.st_dev));
	if (!(f = fopen(path, "r")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "DEVNAME=", 8) == 0) {
			snprintf(jbd, sizeof(jbd), "/proc/fs/jbd2/%s-8", line + 8);
			found = access(jbd, F_OK) == 0 && !ext4_fast_commit(line + 8);
			break;
		}
	}
	fclose(f);
	return found;
}

void aqt_store_put(const struct aqt_store *t, int v, const char *name, size_t len)
{
	char p[192];
	char *b = calloc(1, len ? len : 1);
	int fd;

	ck_assert_ptr_nonnull(b);
	ck_assert_uint_lt((size_t)snprintf(p, sizeof(p), "%s/v%d/%s", t->dir, v, name), sizeof(p));
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b, len), (ssize_t)len);
	close(fd);
	free(b);
}

void aqt_store_read(const struct aqt_store *t, int v, const char *name, uint64_t off, size_t len)
{
	static const struct vol_cred root = { 0, 0, 0, { 0 }, 0 };
	struct vol_export *e = vol_export_by_path(t->store, t->cfg[v].path, strlen(t->cfg[v].path));
	struct vol_obj dir, f;
	char *b = malloc(len ? len : 1);
	size_t got;
	bool eof;

	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(vol_root(e, &dir), 0);
	vol_export_unref(e);
	ck_assert_int_eq(vol_lookup(&dir, &root, name, strlen(name), &f), 0);
	ck_assert_int_eq(vol_read(&f, &root, off, b, len, &got, &eof), 0);
	ck_assert_uint_eq(got, len);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&dir);
	free(b);
}

struct vol_stats aqt_store_stats(const struct aqt_store *t, int v)
{
	struct vol_stats st;

	ck_assert_int_eq(vol_store_stats(t->store, t->cfg[v].id, &st), 0);
	return st;
}

uint64_t aqt_ra_wait(const struct aqt_store *t, int v, uint64_t want)
{
	for (int i = 0; i < 1000 && aqt_store_stats(t, v).ra_bytes < want; i++)
		usleep(10000);
	usleep(want ? 200000 : 1000000);
	return aqt_store_stats(t, v).ra_bytes;
}

void aqt_loop_up(struct aqt_loop *l, const char *tag, const char *size, const char *mkfs)
{
	char cmd[600];

	snprintf(l->top, sizeof(l->top), "/tmp/aq-%s-XXXXXX", tag);
	if (!mkdtemp(l->top)) {
		l->top[0] = '\0';
		return;
	}
	snprintf(l->mnt, sizeof(l->mnt), "%s/mnt", l->top);
	snprintf(cmd, sizeof(cmd),
		 "mkdir '%s' && truncate -s %s '%s/img' && %s '%s/img' >/dev/null 2>&1 && "
		 "mount -o loop '%s/img' '%s' 2>/dev/null",
		 l->mnt, size, l->top, mkfs, l->top, l->top, l->mnt);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", l->top);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", l->top);
		l->top[0] = '\0';
	}
}

void aqt_loop_down(struct aqt_loop *l)
{
	char cmd[300];

	if (!l->top[0])
		return;
	snprintf(cmd, sizeof(cmd), "umount '%s' && rm -rf '%s'", l->mnt, l->top);
	if (system(cmd) != 0)
		fprintf(stderr, "could not unmount and remove %s\n", l->top);
}

void aqt_loop_export(const struct aqt_loop *l, struct aqt_store *t, int v)
{
	if (!l->top[0])
		return;
	snprintf(t->cfg[v].root, sizeof(t->cfg[v].root), "%s/XXXXXX", l->mnt);
	ck_assert_ptr_nonnull(mkdtemp(t->cfg[v].root));
}
