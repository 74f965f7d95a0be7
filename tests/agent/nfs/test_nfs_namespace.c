/* test_nfs_namespace: names and attributes the kernel client found broken
 * (issue 15 items 18-20, issue 25), on a live nfs_serve through libnfs raw
 * RPC: LINK by a caller other than root, MKNOD of FIFOs and sockets (device
 * nodes refused), MOUNT of a subdirectory of an export, SETATTR of a
 * symlink's own times, truncation past the largest file size. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/agent/nfs/nfs_live.h"
#include "tests/agent/nfs/raw_rpc.h"

static struct nfs_live live;

static void as(uint32_t uid, uint32_t gid)
{
	if (raw_rpc)
		rpc_destroy_context(raw_rpc);
	raw_rpc = raw_connect(live.port, uid, gid, 0, NULL);
}

static uint32_t mknod3(const struct raw_fh *dir, const char *name, ftype3 type, uint32_t mode, struct raw_fh *out)
{
	MKNOD3args m;

	memset(&m, 0, sizeof(m));
	m.where.dir = raw_wire(dir);
	m.where.name = (char *)(uintptr_t)name;
	m.what.type = type;
	if (type == NF3CHR || type == NF3BLK) {
		devicedata3 *d = type == NF3CHR ? &m.what.mknoddata3_u.chr_device : &m.what.mknoddata3_u.blk_device;

		d->dev_attributes.mode.set_it = 1;
		d->dev_attributes.mode.set_mode3_u.mode = mode;
		d->spec.specdata1 = 1;
		d->spec.specdata2 = 1;
	} else if (type == NF3SOCK || type == NF3FIFO) {
		sattr3 *a = type == NF3SOCK ? &m.what.mknoddata3_u.sock_attributes : &m.what.mknoddata3_u.pipe_attributes;

		a->mode.set_it = 1;
		a->mode.set_mode3_u.mode = mode;
	}
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_mknod_async(raw_rpc, raw_cb, &m, RAW_PD));
	if (out && raw_R.st == NFS3_OK)
		*out = raw_R.fh;
	return raw_R.st;
}

static uint32_t symlink3(const struct raw_fh *dir, const char *name, const char *target, struct raw_fh *out)
{
	SYMLINK3args s;

	memset(&s, 0, sizeof(s));
	s.where.dir = raw_wire(dir);
	s.where.name = (char *)(uintptr_t)name;
	s.symlink.symlink_data = (char *)(uintptr_t)target;
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_symlink_async(raw_rpc, raw_cb, &s, RAW_PD));
	if (out && raw_R.st == NFS3_OK)
		*out = raw_R.fh;
	return raw_R.st;
}

/* Issue 15 item 18: LINK as any caller; the caller's rights on the target
 * directory still decide. */
static void link_not_root(void)
{
	struct raw_fh root = {0}, f = {0}, sqroot = {0};
	fattr3 at;
	char path[512];

	snprintf(path, sizeof(path), "%s/a/locked", live.dir);
	if (mkdir(path, 0755) != 0)
		exit(1);
	as(1000, 1000);
	CHECK(raw_mnt("/a", &root) == 0, "MNT /a as 1000");
	CHECK(raw_create(&root, "mine", GUARDED, NULL, &f) == NFS3_OK, "CREATE mine as 1000");
	CHECK(raw_link3(&f, &root, "mine2") == NFS3_OK, "LINK as uid 1000 -> %u", raw_R.st);
	CHECK(raw_getattr(&f, &at) == NFS3_OK && at.nlink == 2 && at.uid == 1000, "nlink %u after LINK", at.nlink);
	CHECK(raw_lookup(&root, "mine2", NULL) == NFS3_OK, "the new name resolves");
	{
		struct raw_fh locked = {0};

		CHECK(raw_lookup(&root, "locked", &locked) == NFS3_OK, "LOOKUP locked");
		CHECK(raw_link3(&f, &locked, "x") == NFS3ERR_ACCES, "LINK into root's 0755 directory -> %u", raw_R.st);
	}
	as(0, 0);
	CHECK(raw_mnt("/sq", &sqroot) == 0, "MNT /sq as squashed root");
	CHECK(raw_create(&sqroot, "sqf", GUARDED, NULL, &f) == NFS3_OK && raw_link3(&f, &sqroot, "sqf2") == NFS3_OK,
	      "LINK as squashed root -> %u", raw_R.st);
}

/* Issue 15 item 19: FIFOs and sockets are made as the caller with the mode
 * asked for; device nodes are NFS3ERR_PERM; other types BADTYPE. */
static void mknod_types(void)
{
	struct raw_fh root = {0}, o = {0};
	fattr3 at;
	struct stat st;
	char path[512];

	as(1000, 1000);
	CHECK(raw_mnt("/a", &root) == 0, "MNT /a");
	CHECK(mknod3(&root, "fifo", NF3FIFO, 0640, &o) == NFS3_OK, "MKNOD FIFO -> %u", raw_R.st);
	CHECK(raw_getattr(&o, &at) == NFS3_OK && at.type == NF3FIFO && (at.mode & 07777) == 0640 && at.uid == 1000,
	      "a FIFO of 1000, mode %o", at.mode);
	snprintf(path, sizeof(path), "%s/a/fifo", live.dir);
	CHECK(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode), "a FIFO on the shelf");
	CHECK(mknod3(&root, "sock", NF3SOCK, 0755, &o) == NFS3_OK, "MKNOD SOCK -> %u", raw_R.st);
	CHECK(raw_getattr(&o, &at) == NFS3_OK && at.type == NF3SOCK && (at.mode & 07777) == 0755, "a socket");
	CHECK(mknod3(&root, "fifo", NF3FIFO, 0640, NULL) == NFS3ERR_EXIST, "MKNOD over a name -> %u", raw_R.st);
	CHECK(mknod3(&root, "chr", NF3CHR, 0666, NULL) == NFS3ERR_PERM, "MKNOD CHR -> %u", raw_R.st);
	CHECK(mknod3(&root, "blk", NF3BLK, 0666, NULL) == NFS3ERR_PERM, "MKNOD BLK -> %u", raw_R.st);
	as(0, 0);
	CHECK(mknod3(&root, "chr", NF3CHR, 0666, NULL) == NFS3ERR_PERM, "MKNOD CHR as root -> %u", raw_R.st);
	CHECK(mknod3(&root, "reg", NF3REG, 0666, NULL) == NFS3ERR_BADTYPE, "MKNOD REG -> %u", raw_R.st);
	snprintf(path, sizeof(path), "%s/a/chr", live.dir);
	CHECK(lstat(path, &st) != 0, "no device node on the shelf");
	CHECK(raw_remove3(&root, "fifo") == NFS3_OK && raw_remove3(&root, "sock") == NFS3_OK, "REMOVE them");
}

/* Issue 15 item 20: MNT of a directory below an export. */
static void mount_subdir(void)
{
	struct raw_fh root = {0}, sub = {0}, m = {0}, up = {0};
	fattr3 at, rat;

	as(0, 0);
	CHECK(raw_mnt("/a", &root) == 0 && raw_getattr(&root, &rat) == NFS3_OK, "MNT /a");
	CHECK(raw_mkdir3(&root, "sub", &sub) == NFS3_OK && raw_mkdir3(&sub, "deeper", NULL) == NFS3_OK, "MKDIR sub/deeper");
	CHECK(raw_create(&sub, "file", GUARDED, NULL, NULL) == NFS3_OK, "CREATE sub/file");
	CHECK(symlink3(&root, "tosub", "sub", NULL) == NFS3_OK, "SYMLINK tosub");
	CHECK(raw_getattr(&sub, &at) == NFS3_OK, "GETATTR sub");
	CHECK(raw_mnt("/a/sub", &m) == MNT3_OK, "MNT /a/sub -> %u", raw_R.st);
	{
		fattr3 mt;

		CHECK(raw_getattr(&m, &mt) == NFS3_OK && mt.fileid == at.fileid && mt.type == NF3DIR,
		      "its handle is the subdirectory's");
		CHECK(raw_lookup(&m, "file", NULL) == NFS3_OK, "and sees its files");
		CHECK(raw_lookup(&m, "..", &up) == NFS3_OK && raw_getattr(&up, &mt) == NFS3_OK && mt.fileid == rat.fileid,
		      "'..' of the mounted subdirectory is the export root (same export)");
	}
	CHECK(raw_mnt("/a/sub/deeper/", NULL) == MNT3_OK, "MNT /a/sub/deeper/ -> %u", raw_R.st);
	CHECK(raw_mnt("/a//sub/./deeper", NULL) == MNT3_OK, "empty and '.' components are skipped -> %u", raw_R.st);
	CHECK(raw_mnt("/a/sub/..", NULL) == MNT3ERR_ACCES, "'..' refused -> %u", raw_R.st);
	CHECK(raw_mnt("/a/../b", NULL) == MNT3ERR_ACCES, "'..' out of the export refused -> %u", raw_R.st);
	CHECK(raw_mnt("/a/nope", NULL) == MNT3ERR_NOENT, "missing -> %u", raw_R.st);
	CHECK(raw_mnt("/a/sub/file", NULL) == MNT3ERR_NOTDIR, "a file -> %u", raw_R.st);
	CHECK(raw_mnt("/a/tosub", NULL) == MNT3ERR_NOTDIR, "a symlink is not followed -> %u", raw_R.st);
	CHECK(raw_mnt("/asub", NULL) == MNT3ERR_NOENT, "a name that only starts like the export -> %u", raw_R.st);
	CHECK(raw_mnt("/deny/sub", NULL) == MNT3ERR_ACCES, "the parent export's rules apply -> %u", raw_R.st);
	RAW_RUN(K_DUMP, &raw_R, rpc_mount3_dump_async(raw_rpc, raw_cb, RAW_PD));
	CHECK(raw_has_name(&raw_R, "/a/sub"), "DUMP lists the mounted subdirectory");
}

/* Issue 25: SETATTR of atime/mtime on a symlink sets the symlink's own
 * times (touch -h), never its target's. */
static void symlink_times(void)
{
	struct raw_fh root = {0}, l = {0}, t = {0};
	SETATTR3args s;
	fattr3 at, tt;

	as(0, 0);
	CHECK(raw_mnt("/a", &root) == 0, "MNT /a");
	CHECK(raw_create(&root, "target", GUARDED, NULL, &t) == NFS3_OK && raw_getattr(&t, &tt) == NFS3_OK, "target");
	CHECK(symlink3(&root, "lnk", "target", &l) == NFS3_OK, "SYMLINK lnk");
	memset(&s, 0, sizeof(s));
	s.object = raw_wire(&l);
	s.new_attributes.atime.set_it = SET_TO_CLIENT_TIME;
	s.new_attributes.atime.set_atime_u.atime.seconds = 1000000;
	s.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
	s.new_attributes.mtime.set_mtime_u.mtime.seconds = 2000000;
	s.new_attributes.mtime.set_mtime_u.mtime.nseconds = 5;
	RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
	CHECK(raw_R.st == NFS3_OK, "SETATTR times of a symlink -> %u", raw_R.st);
	CHECK(raw_getattr(&l, &at) == NFS3_OK && at.mtime.seconds == 2000000 && at.mtime.nseconds == 5 &&
	      at.atime.seconds == 1000000, "the symlink's own times: mtime %u", at.mtime.seconds);
	CHECK(raw_getattr(&t, &at) == NFS3_OK && at.mtime.seconds == tt.mtime.seconds, "the target's unchanged");
}

/* Issue 25: a size past the largest file (128 TiB, GCNV's limit) is FBIG,
 * as FSINFO's maxfilesize says; within it, the volume's capacity decides. */
static void file_size_limit(void)
{
	struct raw_fh root = {0}, f = {0};

	as(0, 0);
	CHECK(raw_mnt("/a", &root) == 0, "MNT /a");
	{
		FSINFO3args a = {.fsroot = raw_wire(&root)};

		RAW_RUN(K_FSINFO, &raw_R, rpc_nfs3_fsinfo_async(raw_rpc, raw_cb, &a, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && raw_R.maxfilesize == 128ull << 40, "FSINFO maxfilesize %llu",
		      (unsigned long long)raw_R.maxfilesize);
	}
	CHECK(raw_create(&root, "huge", GUARDED, NULL, &f) == NFS3_OK, "CREATE huge");
	CHECK(raw_setsize(&f, 999999999999999ull) == NFS3ERR_FBIG, "truncate to 999999999999999 -> %u", raw_R.st);
	CHECK(raw_setsize(&f, (128ull << 40) + 1) == NFS3ERR_FBIG, "one byte past 128 TiB -> %u", raw_R.st);
	CHECK(raw_setsize(&f, 128ull << 40) == NFS3ERR_DQUOT, "128 TiB on a 1 TiB volume -> %u", raw_R.st);
	CHECK(raw_write3(&f, 128ull << 40, "x", 1, UNSTABLE) == NFS3ERR_FBIG, "WRITE past 128 TiB -> %u", raw_R.st);
	CHECK(raw_setsize(&f, 1ull << 30) == NFS3_OK, "a sparse GiB within capacity");
}

int main(int argc, char **argv)
{
	static const char *const exports[] = {
		"/a=%D/a", "/sq=%D/sq,squash=root,anonuid=4242,anongid=4243",
		"/deny=%D/deny,clients=10.9.9.9", NULL};
	int rc;

	(void)argc;
	if ((rc = nfs_live_start(&live, argv[0], exports)) != 0) {
		fprintf(stderr, "cannot start nfs_serve: %d\n", rc);
		return 1;
	}
	link_not_root();
	mknod_types();
	mount_subdir();
	symlink_times();
	file_size_limit();
	if (raw_rpc)
		rpc_destroy_context(raw_rpc);
	nfs_live_stop(&live);
	fprintf(stderr, "%d checks, %d failures\n", raw_checks, raw_failures);
	return raw_failures ? 1 : 0;
}
