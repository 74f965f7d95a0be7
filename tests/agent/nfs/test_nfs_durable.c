/* test_nfs_durable: issue 15 item 10. A namespace change (CREATE, MKDIR,
 * SYMLINK, MKNOD, LINK, RENAME, REMOVE, RMDIR) and a SETATTR (issue 25)
 * are on disk before their reply, and so is a CREATE UNCHECKED that
 * cuts a file that exists.
 * nfs_serve exports a directory of a fresh ext4 file system on a loop
 * device, mounted with commit=600 so the journal never commits by itself
 * during the test; after each reply the file system is shut down without
 * flushing its log (EXT4_IOC_SHUTDOWN, NOLOGFLUSH: what a power cut leaves,
 * as xfstests' godown), remounted (journal replay) and checked. One change
 * per round: a later change's sync would commit an earlier one's too. The
 * CREATE asks for a mode, checked after the crash too (the attributes are
 * set after the file is made: its own fsync must cover them).
 * Needs root and loop devices; skips (77) without them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/agent/nfs/nfs_live.h"
#include "tests/agent/nfs/raw_rpc.h"

#define EXT4_IOC_SHUTDOWN _IOR('X', 125, uint32_t)
#define EXT4_GOING_FLAGS_NOLOGFLUSH 0x2

static char top[64], img[128], mnt[128], spec[300];

static int fs_mount(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "mount -o loop,commit=600 '%s' '%s' 2>/dev/null", img, mnt);
	return system(cmd);
}

static void fs_umount(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "umount '%s'", mnt);
	if (system(cmd) != 0)
		fprintf(stderr, "umount %s failed\n", mnt);
}

static void rm_top(void)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", top);
}

/* A power cut: whatever the journal has not committed is gone. */
static void fs_crash(void)
{
	uint32_t flags = EXT4_GOING_FLAGS_NOLOGFLUSH;
	int fd = open(mnt, O_RDONLY | O_DIRECTORY);

	if (fd < 0 || ioctl(fd, EXT4_IOC_SHUTDOWN, &flags) != 0) {
		perror("EXT4_IOC_SHUTDOWN");
		exit(1);
	}
	close(fd);
}

static mode_t on_disk(const char *name)
{
	char p[300];
	struct stat st;

	snprintf(p, sizeof(p), "%s/export/%s", mnt, name);
	return lstat(p, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

static uint32_t mkfifo3(const struct raw_fh *dir, const char *name)
{
	MKNOD3args m;

	memset(&m, 0, sizeof(m));
	m.where.dir = raw_wire(dir);
	m.where.name = (char *)(uintptr_t)name;
	m.what.type = NF3FIFO;
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_mknod_async(raw_rpc, raw_cb, &m, RAW_PD));
	return raw_R.st;
}

/* The permission bits of name on disk, -1 when it is not there. */
static int perm_on_disk(const char *name)
{
	char p[300];
	struct stat st;

	snprintf(p, sizeof(p), "%s/export/%s", mnt, name);
	return lstat(p, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* CREATE (GUARDED) asking for mode: the server sets it exactly after the
 * file is made (its umask applied at open), so the crash check sees
 * whether the file's attributes were made stable with its name. */
static uint32_t create3_mode(const struct raw_fh *dir, const char *name, uint32_t mode)
{
	CREATE3args c;

	memset(&c, 0, sizeof(c));
	c.where.dir = raw_wire(dir);
	c.where.name = (char *)(uintptr_t)name;
	c.how.mode = GUARDED;
	c.how.createhow3_u.obj_attributes.mode.set_it = 1;
	c.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = mode;
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_create_async(raw_rpc, raw_cb, &c, RAW_PD));
	return raw_R.st;
}

static uint32_t symlink3(const struct raw_fh *dir, const char *name)
{
	SYMLINK3args s;

	memset(&s, 0, sizeof(s));
	s.where.dir = raw_wire(dir);
	s.where.name = (char *)(uintptr_t)name;
	s.symlink.symlink_data = (char *)(uintptr_t)"target";
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_symlink_async(raw_rpc, raw_cb, &s, RAW_PD));
	return raw_R.st;
}

/* SETATTR of a mode and a size together (issue 25: attributes are
 * acknowledged stable like names). */
static uint32_t setattr3(const struct raw_fh *f, uint32_t mode, uint64_t size)
{
	SETATTR3args a;

	memset(&a, 0, sizeof(a));
	a.object = raw_wire(f);
	a.new_attributes.mode.set_it = 1;
	a.new_attributes.mode.set_mode3_u.mode = mode;
	a.new_attributes.size.set_it = 1;
	a.new_attributes.size.set_size3_u.size = size;
	RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &a, RAW_PD));
	return raw_R.st;
}

/* CREATE UNCHECKED of a file that exists, with a size: the file is cut
 * to it, and the cut is stable before the reply as a SETATTR's. */
static uint32_t create3_trunc(const struct raw_fh *dir, const char *name, uint64_t size)
{
	CREATE3args c;

	memset(&c, 0, sizeof(c));
	c.where.dir = raw_wire(dir);
	c.where.name = (char *)(uintptr_t)name;
	c.how.mode = UNCHECKED;
	c.how.createhow3_u.obj_attributes.size.set_it = 1;
	c.how.createhow3_u.obj_attributes.size.set_size3_u.size = size;
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_create_async(raw_rpc, raw_cb, &c, RAW_PD));
	return raw_R.st;
}

/* The size of name on disk, -1 when it is not there. */
static long long size_on_disk(const char *name)
{
	char p[300];
	struct stat st;

	snprintf(p, sizeof(p), "%s/export/%s", mnt, name);
	return lstat(p, &st) == 0 ? (long long)st.st_size : -1;
}

enum op { OP_CREATE, OP_MKDIR, OP_SYMLINK, OP_MKNOD, OP_LINK, OP_RENAME, OP_REMOVE, OP_RMDIR, OP_SETATTR, OP_TRUNC, OP_N };
static const char *const op_names[OP_N] = {"CREATE", "MKDIR", "SYMLINK", "MKNOD", "LINK", "RENAME", "REMOVE", "RMDIR",
					   "SETATTR", "CREATE UNCHECKED"};

/* One round: serve, make the change, crash before anything else commits,
 * remount, and say whether the change survived. */
static void round_of(const char *argv0, enum op op)
{
	const char *exports[] = {spec, NULL};
	struct raw_fh root = {0}, f = {0}, d = {0};
	struct nfs_live live;
	uint32_t st = 0;
	bool ok;

	if (fs_mount() != 0 || nfs_live_start(&live, argv0, exports) != 0) {
		fprintf(stderr, "round %s: cannot mount or serve\n", op_names[op]);
		exit(1);
	}
	raw_connect_as(live.port, 0, 0);
	if (raw_mnt("/d", &root) != 0)
		exit(1);
	switch (op) {
	case OP_CREATE: st = create3_mode(&root, "f", 0666); break;
	case OP_MKDIR: /* "gone" is for the RMDIR round */
		st = raw_mkdir3(&root, "dir", NULL) ? raw_R.st : raw_mkdir3(&root, "gone", NULL);
		break;
	case OP_SYMLINK: st = symlink3(&root, "lnk"); break;
	case OP_MKNOD: st = mkfifo3(&root, "fifo"); break;
	case OP_LINK:
		st = raw_lookup(&root, "f", &f) ? raw_R.st : raw_link3(&f, &root, "f2");
		break;
	case OP_RENAME:
		st = raw_lookup(&root, "dir", &d) ? raw_R.st : raw_rename3(&root, "f", &d, "moved");
		break;
	case OP_REMOVE: st = raw_remove3(&root, "f2"); break;
	case OP_RMDIR: st = raw_rmdir3(&root, "gone"); break;
	case OP_SETATTR: /* the file RENAME moved: a mode and a size past its end */
		st = raw_lookup(&root, "dir", &d) ? raw_R.st : raw_lookup(&d, "moved", &f) ? raw_R.st
											  : setattr3(&f, 0604, 12345);
		break;
	case OP_TRUNC: /* the same file, cut by a CREATE UNCHECKED */
		st = raw_lookup(&root, "dir", &d) ? raw_R.st : create3_trunc(&d, "moved", 100);
		break;
	default: break;
	}
	CHECK(st == NFS3_OK, "%s answered %u", op_names[op], st);
	fs_crash();
	rpc_destroy_context(raw_rpc);
	raw_rpc = NULL;
	nfs_live_stop(&live);
	fs_umount();
	if (fs_mount() != 0)
		exit(1);
	switch (op) {
	case OP_CREATE: ok = on_disk("f") == S_IFREG && perm_on_disk("f") == 0666; break;
	case OP_MKDIR: ok = on_disk("dir") == S_IFDIR && on_disk("gone") == S_IFDIR; break;
	case OP_SYMLINK: ok = on_disk("lnk") == S_IFLNK; break;
	case OP_MKNOD: ok = on_disk("fifo") == S_IFIFO; break;
	case OP_LINK: ok = on_disk("f2") == S_IFREG; break;
	case OP_RENAME: ok = on_disk("f") == 0 && on_disk("dir/moved") == S_IFREG; break;
	case OP_REMOVE: ok = on_disk("f2") == 0; break;
	case OP_RMDIR: ok = on_disk("gone") == 0; break;
	case OP_SETATTR: ok = perm_on_disk("dir/moved") == 0604 && size_on_disk("dir/moved") == 12345; break;
	case OP_TRUNC: ok = size_on_disk("dir/moved") == 100; break;
	default: ok = false; break;
	}
	CHECK(ok, "%s is on disk after a crash right after its reply", op_names[op]);
	fs_umount();
}

int main(int argc, char **argv)
{
	char cmd[400];
	int i;

	(void)argc;
	if (geteuid() != 0) {
		fprintf(stderr, "test_nfs_durable needs root (loop mounts)\n");
		return 77;
	}
	snprintf(top, sizeof(top), "/tmp/aqdur-XXXXXX");
	if (!mkdtemp(top))
		return 1;
	snprintf(img, sizeof(img), "%s/fs.img", top);
	snprintf(mnt, sizeof(mnt), "%s/mnt", top);
	snprintf(spec, sizeof(spec), "/d=%s/export", mnt);
	snprintf(cmd, sizeof(cmd), "truncate -s 64M '%s' && mkfs.ext4 -q -F '%s' >/dev/null 2>&1", img, img);
	if (mkdir(mnt, 0755) != 0 || system(cmd) != 0 || fs_mount() != 0) {
		fprintf(stderr, "SKIP: no ext4 on a loop device here\n");
		rm_top();
		return 77;
	}
	snprintf(cmd, sizeof(cmd), "%s/export", mnt);
	if (mkdir(cmd, 0777) != 0 || chmod(cmd, 0777) != 0)
		return 1;
	fs_umount();
	for (i = 0; i < OP_N; i++)
		round_of(argv[0], (enum op)i);
	rm_top();
	fprintf(stderr, "%d checks, %d failures\n", raw_checks, raw_failures);
	return raw_failures ? 1 : 0;
}
