/* test_nfs_security: issue 15 and 25 defects a caller could use against
 * others, on a live nfs_serve through libnfs raw RPC: root squash of gid 0
 * (primary and supplementary), set-uid/set-gid bits a non-root WRITE or
 * truncation must clear, createattrs an UNCHECKED CREATE of an existing file
 * must not apply but the size, QoS debt from one READ of count 0xffffffff, and
 * metadata (directories, symlinks, empty files) charged against capacity. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/agent/nfs/nfs_live.h"
#include "tests/agent/nfs/raw_rpc.h"

static struct nfs_live live;

static void put_file(const char *rel, const char *data, mode_t mode, uid_t uid, gid_t gid)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", live.dir, rel);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
	fputs(data, f);
	fclose(f);
	if (chown(path, uid, gid) != 0 || chmod(path, mode) != 0)
		exit(1);
}

/* Issue 15 item 7: ROOT_SQUASH maps gid 0 too, as knfsd does. */
static void squash_gid0(void)
{
	static const uint32_t grp0[] = {0};
	struct raw_fh root = {0}, f = {0};
	fattr3 at;

	put_file("sq/group0", "for group 0 only\n", 0060, 0, 0);
	put_file("a/group0", "for group 0 only\n", 0060, 0, 0);
	raw_rpc = raw_connect(live.port, 1000, 0, 0, NULL);
	CHECK(raw_mnt("/sq", &root) == 0, "MNT /sq");
	CHECK(raw_create(&root, "made", UNCHECKED, NULL, &f) == NFS3_OK, "CREATE as 1000:0");
	CHECK(raw_getattr(&f, &at) == NFS3_OK && at.uid == 1000 && at.gid == 4243,
	      "primary gid 0 squashed: the new file is %u:%u", at.uid, at.gid);
	CHECK(raw_lookup(&root, "group0", &f) == NFS3_OK, "LOOKUP group0");
	CHECK(raw_read3(&f, 0, 100) == NFS3ERR_ACCES, "primary gid 0 does not read a group-0 file -> %u", raw_R.st);
	rpc_destroy_context(raw_rpc);
	raw_rpc = raw_connect(live.port, 1000, 5, 1, grp0);
	CHECK(raw_read3(&f, 0, 100) == NFS3ERR_ACCES, "supplementary gid 0 does not either -> %u", raw_R.st);
	rpc_destroy_context(raw_rpc);
	raw_rpc = raw_connect(live.port, 0, 0, 0, NULL);
	CHECK(raw_read3(&f, 0, 100) == NFS3ERR_ACCES, "root squashed to 4242:4243 does not -> %u", raw_R.st);
	rpc_destroy_context(raw_rpc);
	raw_rpc = raw_connect(live.port, 0, 0, 0, NULL);
	CHECK(raw_mnt("/a", &root) == 0 && raw_lookup(&root, "group0", &f) == NFS3_OK &&
	      raw_read3(&f, 0, 100) == NFS3_OK && raw_R.count == 17, "without squash root reads it");
	rpc_destroy_context(raw_rpc);
	raw_rpc = NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Issue 15 item 5: one READ of count 0xffffffff on a 10 MiB/s volume must
 * not owe 4 GiB (400 s): another client's READ right after it is served at
 * once. Uncapped, that READ waits minutes and raw_wait_for gives up (the
 * deadline, 20 s, is far above what a loaded machine needs and far below
 * what the debt would take). */
static void qos_one_packet(void)
{
	struct rpc_context *attacker, *victim;
	struct raw_fh root = {0}, f = {0};
	double t0, dt;

	put_file("q/small", "a small file\n", 0644, 0, 0);
	raw_timeout_ms = 20000;
	attacker = raw_connect(live.port, 0, 0, 0, NULL);
	victim = raw_connect(live.port, 1000, 1000, 0, NULL);
	raw_rpc = attacker;
	CHECK(raw_mnt("/q", &root) == 0 && raw_lookup(&root, "small", &f) == NFS3_OK, "LOOKUP q/small");
	CHECK(raw_read3(&f, 0, 0xffffffffu) == NFS3_OK && raw_R.count == 13 && raw_R.eof,
	      "READ of count 0xffffffff answers what the file holds (%u)", raw_R.count);
	raw_rpc = victim;
	t0 = now_s();
	CHECK(raw_read3(&f, 0, 4096) == NFS3_OK && raw_R.count == 13, "the other client's READ");
	dt = now_s() - t0;
	CHECK(dt < 10.0, "the other client's READ took %.3f s", dt);
	fprintf(stderr, "# READ after a 0xffffffff-count READ: %.3f s\n", dt);
	rpc_destroy_context(attacker);
	rpc_destroy_context(victim);
	raw_rpc = NULL;
	raw_timeout_ms = 10000;
}

/* Issue 15 item 6: directories, symlinks and empty files are charged 4 KiB
 * a name: a 40 KiB volume takes 10 names and no more, whatever their kind,
 * and FSSTAT shows the files left. */
static void metadata_capacity(void)
{
	struct raw_fh root = {0}, d = {0};
	char name[32];
	int i, made = 0;

	raw_rpc = raw_connect(live.port, 0, 0, 0, NULL);
	CHECK(raw_mnt("/m", &root) == 0, "MNT /m");
	CHECK(raw_fsstat3(&root) == NFS3_OK && raw_R.tfiles == 10 && raw_R.ffiles == 10 && raw_R.afiles == 10,
	      "FSSTAT of an empty 40 KiB volume: %llu files, %llu free", (unsigned long long)raw_R.tfiles,
	      (unsigned long long)raw_R.ffiles);
	CHECK(raw_mkdir3(&root, "d", &d) == NFS3_OK, "MKDIR d");
	for (i = 0; i < 20; i++) {
		SYMLINK3args s;

		snprintf(name, sizeof(name), "n%02d", i);
		if (i % 2 == 0) {
			if (raw_mkdir3(&d, name, NULL) != NFS3_OK)
				break;
		} else {
			memset(&s, 0, sizeof(s));
			s.where.dir = raw_wire(&d);
			s.where.name = name;
			s.symlink.symlink_data = (char *)(uintptr_t)"target";
			RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_symlink_async(raw_rpc, raw_cb, &s, RAW_PD));
			if (raw_R.st != NFS3_OK)
				break;
		}
		made++;
	}
	CHECK(made == 9 && raw_R.st == NFS3ERR_DQUOT, "9 more names fit, the next is DQUOT (%d, %u)", made, raw_R.st);
	CHECK(raw_create(&d, "empty", GUARDED, NULL, NULL) == NFS3ERR_DQUOT, "an empty file is refused too -> %u",
	      raw_R.st);
	CHECK(raw_fsstat3(&root) == NFS3_OK && raw_R.ffiles == 0 && raw_R.fbytes == 0,
	      "FSSTAT full: %llu files, %llu bytes free", (unsigned long long)raw_R.ffiles,
	      (unsigned long long)raw_R.fbytes);
	CHECK(raw_rmdir3(&d, "n00") == NFS3_OK && raw_fsstat3(&root) == NFS3_OK && raw_R.ffiles == 1 &&
	      raw_R.fbytes == 4096, "RMDIR gives a name back");
	CHECK(raw_create(&d, "empty", GUARDED, NULL, NULL) == NFS3_OK, "which an empty file can take");
	rpc_destroy_context(raw_rpc);
	raw_rpc = NULL;
}

/* SETATTR mode, uid and gid of f (as the current caller). */
static uint32_t chmod_chown(const struct raw_fh *f, uint32_t mode, uint32_t uid, uint32_t gid)
{
	SETATTR3args s;

	memset(&s, 0, sizeof(s));
	s.object = raw_wire(f);
	s.new_attributes.mode.set_it = 1;
	s.new_attributes.mode.set_mode3_u.mode = mode;
	s.new_attributes.uid.set_it = 1;
	s.new_attributes.uid.set_uid3_u.uid = uid;
	s.new_attributes.gid.set_it = 1;
	s.new_attributes.gid.set_gid3_u.gid = gid;
	RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
	return raw_R.st;
}

static uint32_t mode_of(const struct raw_fh *f)
{
	fattr3 at;

	return raw_getattr(f, &at) == NFS3_OK ? at.mode & 07777 : 0xffffffffu;
}

/* Issue 25: a WRITE by anyone but root (the owner included: nobody else has
 * CAP_FSETID) clears set-uid, and set-gid when group-exec is set or the
 * writer is not in the file's group, as the Linux VFS does; so does a
 * truncating SETATTR. Root keeps them. */
static void kill_suid(void)
{
	struct rpc_context *root, *owner, *other;
	struct raw_fh r = {0}, f[6];
	static const char *const names[] = {"suid", "sgid", "sgid_noexec", "by_root", "truncated", "in_group"};
	static const uint32_t modes[] = {04777, 02777, 02766, 06777, 04777, 02766};
	static const uint32_t gids[] = {1000, 1000, 500, 1000, 1000, 1001};
	size_t i;

	memset(f, 0, sizeof(f));
	root = raw_connect(live.port, 0, 0, 0, NULL);
	owner = raw_connect(live.port, 1000, 1000, 0, NULL);
	other = raw_connect(live.port, 1001, 1001, 0, NULL);
	raw_rpc = root;
	CHECK(raw_mnt("/a", &r) == 0, "MNT /a");
	for (i = 0; i < 6; i++)
		CHECK(raw_create(&r, names[i], GUARDED, NULL, &f[i]) == NFS3_OK &&
		      chmod_chown(&f[i], modes[i], 1000, gids[i]) == NFS3_OK && mode_of(&f[i]) == modes[i],
		      "%s: mode %o", names[i], mode_of(&f[i]));
	raw_rpc = owner;
	CHECK(raw_write3(&f[0], 0, "x", 1, FILE_SYNC) == NFS3_OK && mode_of(&f[0]) == 0777,
	      "the owner's WRITE clears set-uid: %o", mode_of(&f[0]));
	raw_rpc = other;
	CHECK(raw_write3(&f[1], 0, "x", 1, UNSTABLE) == NFS3_OK && mode_of(&f[1]) == 0777,
	      "another's WRITE clears set-gid with group-exec: %o", mode_of(&f[1]));
	CHECK(raw_write3(&f[2], 0, "x", 1, UNSTABLE) == NFS3_OK && mode_of(&f[2]) == 0766,
	      "a WRITE from outside the group clears set-gid without group-exec: %o", mode_of(&f[2]));
	CHECK(raw_write3(&f[5], 0, "x", 1, UNSTABLE) == NFS3_OK && mode_of(&f[5]) == 02766,
	      "from inside the group it stays (a locking mark): %o", mode_of(&f[5]));
	raw_rpc = owner;
	CHECK(raw_setsize(&f[4], 0) == NFS3_OK && mode_of(&f[4]) == 0777,
	      "a truncating SETATTR clears set-uid: %o", mode_of(&f[4]));
	{
		/* what the Linux client sends for `truncate` by another user of a
		 * root's 4777 file: the size and mtime to the server's clock */
		struct raw_fh g = {0};
		SETATTR3args s;
		uint32_t st;

		raw_rpc = root;
		CHECK(raw_create(&r, "roots", GUARDED, NULL, &g) == NFS3_OK && chmod_chown(&g, 04777, 0, 0) == NFS3_OK,
		      "a root's 4777 file");
		raw_rpc = other;
		memset(&s, 0, sizeof(s));
		s.object = raw_wire(&g);
		s.new_attributes.size.set_it = 1;
		s.new_attributes.size.set_size3_u.size = 1;
		s.new_attributes.mtime.set_it = SET_TO_SERVER_TIME;
		RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
		st = raw_R.st;
		CHECK(st == NFS3_OK && mode_of(&g) == 0777, "another's truncation (size, mtime now) -> %u, mode %o", st,
		      mode_of(&g));
		/* mtime alone to the server's clock: a writer may, as on knfsd;
		 * someone who may not write may not */
		s.new_attributes.size.set_it = 0;
		RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
		CHECK(raw_R.st == NFS3_OK, "a writer sets mtime to the server's clock -> %u", raw_R.st);
		raw_rpc = root;
		CHECK(chmod_chown(&g, 0644, 0, 0) == NFS3_OK, "chmod 0644");
		raw_rpc = other;
		RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
		CHECK(raw_R.st == NFS3ERR_ACCES, "a reader may not -> %u", raw_R.st);
	}
	raw_rpc = root;
	CHECK(raw_write3(&f[3], 0, "x", 1, UNSTABLE) == NFS3_OK && mode_of(&f[3]) == 06777,
	      "root's WRITE keeps them: %o", mode_of(&f[3]));
	rpc_destroy_context(root);
	rpc_destroy_context(owner);
	rpc_destroy_context(other);
	raw_rpc = NULL;
}

/* CREATE UNCHECKED with createattrs of a name that is there: a regular
 * file gets the size alone (knfsd's nfsd3_create_file: ia_valid &=
 * ATTR_SIZE), its mode, owner and times stay; anything else is EEXIST. */
static void unchecked_existing(void)
{
	struct raw_fh r = {0}, f = {0};
	CREATE3args c;
	char path[512];
	fattr3 at;
	uint32_t st;

	put_file("a/uc", "made by A\n", 0600, 1000, 1000);
	snprintf(path, sizeof(path), "%s/a/ucfifo", live.dir);
	if (mkfifo(path, 0666) != 0)
		exit(1);
	raw_rpc = raw_connect(live.port, 1000, 1000, 0, NULL);
	CHECK(raw_mnt("/a", &r) == 0 && raw_mkdir3(&r, "ucdir", NULL) == NFS3_OK, "MNT /a, MKDIR ucdir");
	memset(&c, 0, sizeof(c));
	c.where.dir = raw_wire(&r);
	c.where.name = (char *)(uintptr_t)"uc";
	c.how.mode = UNCHECKED;
	c.how.createhow3_u.obj_attributes.mode.set_it = 1;
	c.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0777;
	c.how.createhow3_u.obj_attributes.uid.set_it = 1;
	c.how.createhow3_u.obj_attributes.uid.set_uid3_u.uid = 1000;
	c.how.createhow3_u.obj_attributes.size.set_it = 1;
	c.how.createhow3_u.obj_attributes.size.set_size3_u.size = 0;
	c.how.createhow3_u.obj_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
	c.how.createhow3_u.obj_attributes.mtime.set_mtime_u.mtime.seconds = 12345;
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_create_async(raw_rpc, raw_cb, &c, RAW_PD));
	st = raw_R.st;
	f = raw_R.fh;
	CHECK(st == NFS3_OK && raw_getattr(&f, &at) == NFS3_OK, "UNCHECKED of the owner's file -> %u", st);
	CHECK(at.size == 0 && (at.mode & 07777) == 0600 && at.uid == 1000 && at.mtime.seconds != 12345,
	      "only the size applied: size %llu, mode %o, mtime %u", (unsigned long long)at.size, at.mode & 07777,
	      at.mtime.seconds);
	c.how.createhow3_u.obj_attributes.size.set_it = 0;
	c.where.name = (char *)(uintptr_t)"ucdir";
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_create_async(raw_rpc, raw_cb, &c, RAW_PD));
	CHECK(raw_R.st == NFS3ERR_EXIST, "UNCHECKED of a directory -> %u", raw_R.st);
	c.where.name = (char *)(uintptr_t)"ucfifo";
	RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_create_async(raw_rpc, raw_cb, &c, RAW_PD));
	CHECK(raw_R.st == NFS3ERR_EXIST, "UNCHECKED of a FIFO -> %u (not a wait for a reader)", raw_R.st);
	rpc_destroy_context(raw_rpc);
	raw_rpc = NULL;
}

int main(int argc, char **argv)
{
	static const char *const exports[] = {
		"/a=%D/a", "/sq=%D/sq,squash=root,anonuid=4242,anongid=4243", "/q=%D/q,mibps=10",
		"/m=%D/m,capacity=40960",
		NULL};
	int rc;

	(void)argc;
	if ((rc = nfs_live_start(&live, argv[0], exports)) != 0) {
		fprintf(stderr, "cannot start nfs_serve: %d\n", rc);
		return 1;
	}
	squash_gid0();
	qos_one_packet();
	metadata_capacity();
	kill_suid();
	unchecked_existing();
	nfs_live_stop(&live);
	fprintf(stderr, "%d checks, %d failures\n", raw_checks, raw_failures);
	return raw_failures ? 1 : 0;
}
