/* test_nfs_procs: every NFSv3, MOUNT v3 and PORTMAP GETPORT procedure of a
 * live nfs_serve, through libnfs's raw RPC API (one connection carries all
 * three programs, as the server serves them on one port), including error
 * cases: wrong types, missing names, stale/forged/cross-volume handles, long
 * names, GUARDED/EXCLUSIVE create, read-only exports, root squash, capacity,
 * and retransmissions answered from the duplicate-request cache. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/time.h>

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/agent/nfs/nfs_live.h"
#include "tests/agent/nfs/raw_rpc.h"

int main(int argc, char **argv)
{
	static const char *const exports[] = {
		"/a=%D/a", "/b=%D/b", "/ro=%D/ro,ro", "/sq=%D/sq,squash=root,anonuid=4242,anongid=4243",
		"/cap=%D/cap,capacity=1073741824", "/deny=%D/deny,clients=10.9.9.9,192.168.0.0/16", NULL};
	struct nfs_live live;
	struct raw_fh ra, rb, rro, rsq, rcap, f1, d1, s1, x, y, fbig;
	fattr3 at;
	char longname[300], path[512], verf[8] = "verf0001", verf2[8] = "verf0002", wv[8];
	int rc, i;
	FILE *f;

	(void)argc;
	if ((rc = nfs_live_start(&live, argv[0], exports)) != 0) {
		fprintf(stderr, "cannot start nfs_serve: %d\n", rc);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ro/existing", live.dir);
	if ((f = fopen(path, "w")) != NULL) {
		fputs("read only data\n", f);
		fclose(f);
	}
	raw_connect_as(live.port, 0, 0);

	/* PORTMAP GETPORT on the same port */
	RAW_RUN(K_GETPORT, &raw_R, rpc_pmap2_getport_async(raw_rpc, 100003, 3, 6, raw_cb, RAW_PD));
	CHECK(raw_R.u32 == (uint32_t)live.port, "GETPORT nfs %u", raw_R.u32);
	RAW_RUN(K_GETPORT, &raw_R, rpc_pmap2_getport_async(raw_rpc, 100005, 3, 6, raw_cb, RAW_PD));
	CHECK(raw_R.u32 == (uint32_t)live.port, "GETPORT mount %u", raw_R.u32);
	RAW_RUN(K_GETPORT, &raw_R, rpc_pmap2_getport_async(raw_rpc, 100021, 4, 6, raw_cb, RAW_PD));
	CHECK(raw_R.u32 == (uint32_t)live.port, "GETPORT nlm (served on the same port) %u", raw_R.u32);

	/* MOUNT */
	RAW_RUN(K_STATUS, &raw_R, rpc_mount3_null_async(raw_rpc, raw_cb, RAW_PD));
	CHECK(raw_R.rpc_status == RPC_STATUS_SUCCESS, "MOUNT NULL");
	CHECK(raw_mnt("/a", &ra) == MNT3_OK, "MNT /a");
	CHECK(raw_mnt("/b", &rb) == MNT3_OK, "MNT /b");
	CHECK(raw_mnt("/ro", &rro) == MNT3_OK, "MNT /ro");
	CHECK(raw_mnt("/sq", &rsq) == MNT3_OK, "MNT /sq");
	CHECK(raw_mnt("/cap", &rcap) == MNT3_OK, "MNT /cap");
	CHECK(raw_mnt("/nope", NULL) == MNT3ERR_NOENT, "MNT /nope -> %u", raw_R.st);
	CHECK(raw_mnt("/deny", NULL) == MNT3ERR_ACCES, "MNT /deny -> %u", raw_R.st);
	RAW_RUN(K_EXPORT, &raw_R, rpc_mount3_export_async(raw_rpc, raw_cb, RAW_PD));
	CHECK(raw_R.nent == 6 && raw_has_name(&raw_R, "/a") && raw_has_name(&raw_R, "/deny"), "EXPORT (%zu)", raw_R.nent);
	RAW_RUN(K_DUMP, &raw_R, rpc_mount3_dump_async(raw_rpc, raw_cb, RAW_PD));
	CHECK(raw_has_name(&raw_R, "/a") && raw_has_name(&raw_R, "/cap"), "DUMP lists mounts (%zu)", raw_R.nent);
	RAW_RUN(K_STATUS, &raw_R, rpc_mount3_umnt_async(raw_rpc, raw_cb, (char *)(uintptr_t)"/b", RAW_PD));
	RAW_RUN(K_DUMP, &raw_R, rpc_mount3_dump_async(raw_rpc, raw_cb, RAW_PD));
	CHECK(!raw_has_name(&raw_R, "/b") && raw_has_name(&raw_R, "/a"), "UMNT removes /b");
	RAW_RUN(K_STATUS, &raw_R, rpc_mount3_umntall_async(raw_rpc, raw_cb, RAW_PD));
	RAW_RUN(K_DUMP, &raw_R, rpc_mount3_dump_async(raw_rpc, raw_cb, RAW_PD));
	CHECK(raw_R.nent == 0, "UMNTALL empties the list (%zu)", raw_R.nent);

	/* NULL, GETATTR, FSINFO, PATHCONF, FSSTAT */
	RAW_RUN(K_STATUS, &raw_R, rpc_nfs3_null_async(raw_rpc, raw_cb, RAW_PD));
	CHECK(raw_R.rpc_status == RPC_STATUS_SUCCESS, "NFS NULL");
	CHECK(raw_getattr(&ra, &at) == NFS3_OK && at.type == NF3DIR, "GETATTR root");
	{
		FSINFO3args a = {.fsroot = raw_wire(&ra)};
		PATHCONF3args p = {.object = raw_wire(&ra)};

		RAW_RUN(K_STATUS, &raw_R, rpc_nfs3_fsinfo_async(raw_rpc, raw_cb, &a, RAW_PD));
		CHECK(raw_R.st == NFS3_OK, "FSINFO");
		RAW_RUN(K_STATUS, &raw_R, rpc_nfs3_pathconf_async(raw_rpc, raw_cb, &p, RAW_PD));
		CHECK(raw_R.st == NFS3_OK, "PATHCONF");
	}
	CHECK(raw_fsstat3(&rcap) == NFS3_OK && raw_R.tbytes == 1073741824ull && raw_R.fbytes == 1073741824ull,
	      "FSSTAT of the 1 GiB export: %llu/%llu", (unsigned long long)raw_R.tbytes,
	      (unsigned long long)raw_R.fbytes);

	/* CREATE, WRITE, READ, COMMIT */
	CHECK(raw_create(&ra, "f1", UNCHECKED, NULL, &f1) == NFS3_OK, "CREATE f1");
	CHECK(raw_write3(&f1, 0, "hello world", 11, FILE_SYNC) == NFS3_OK && raw_R.count == 11 && raw_R.u32 == FILE_SYNC,
	      "WRITE FILE_SYNC");
	memcpy(wv, raw_R.verf, 8);
	CHECK(raw_write3(&f1, 11, "!", 1, UNSTABLE) == NFS3_OK && !memcmp(raw_R.verf, wv, 8), "WRITE UNSTABLE verf");
	CHECK(raw_write3(&f1, 12, "?", 1, DATA_SYNC) == NFS3_OK, "WRITE DATA_SYNC");
	{
		COMMIT3args c = {.file = raw_wire(&f1), .offset = 0, .count = 0};

		RAW_RUN(K_COMMIT, &raw_R, rpc_nfs3_commit_async(raw_rpc, raw_cb, &c, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && !memcmp(raw_R.verf, wv, 8), "COMMIT verifier matches WRITE's");
	}
	CHECK(raw_read3(&f1, 0, 100) == NFS3_OK && raw_R.count == 13 && raw_R.eof && !memcmp(raw_R.data, "hello world!?", 13),
	      "READ back (%u)", raw_R.count);
	CHECK(raw_read3(&f1, 6, 5) == NFS3_OK && raw_R.count == 5 && !raw_R.eof && !memcmp(raw_R.data, "world", 5), "READ middle");
	CHECK(raw_read3(&ra, 0, 10) == NFS3ERR_ISDIR, "READ a directory -> %u", raw_R.st);

	/* SETATTR */
	{
		SETATTR3args s;

		memset(&s, 0, sizeof(s));
		s.object = raw_wire(&f1);
		s.new_attributes.mode.set_it = 1;
		s.new_attributes.mode.set_mode3_u.mode = 0600;
		RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && (raw_R.attr.mode & 07777) == 0600, "SETATTR mode");
		s.guard.check = 1;
		s.guard.sattrguard3_u.obj_ctime.seconds = 1;
		RAW_RUN(K_SETATTR, &raw_R, rpc_nfs3_setattr_async(raw_rpc, raw_cb, &s, RAW_PD));
		CHECK(raw_R.st == NFS3ERR_NOT_SYNC, "SETATTR guard mismatch -> %u", raw_R.st);
	}
	CHECK(raw_setsize(&f1, 5) == NFS3_OK && raw_getattr(&f1, &at) == NFS3_OK && at.size == 5, "SETATTR size");

	{
		/* the mode asked for, not filtered by the server's umask */
		CREATE3args a;

		memset(&a, 0, sizeof(a));
		a.where.dir = raw_wire(&ra);
		a.where.name = (char *)(uintptr_t)"m666";
		a.how.mode = GUARDED;
		a.how.createhow3_u.obj_attributes.mode.set_it = 1;
		a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0666;
		RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_create_async(raw_rpc, raw_cb, &a, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && (raw_R.attr.mode & 07777) == 0666, "CREATE mode 0666 -> %o", raw_R.attr.mode);
	}

	/* LOOKUP and its errors */
	CHECK(raw_lookup(&ra, "f1", &x) == NFS3_OK && raw_R.attr.type == NF3REG, "LOOKUP f1");
	CHECK(raw_lookup(&f1, "x", NULL) == NFS3ERR_NOTDIR, "LOOKUP in a file -> %u", raw_R.st);
	CHECK(raw_lookup(&ra, "missing", NULL) == NFS3ERR_NOENT, "LOOKUP missing -> %u", raw_R.st);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(raw_lookup(&ra, longname, NULL) == NFS3ERR_NAMETOOLONG, "LOOKUP 299-byte name -> %u", raw_R.st);
	CHECK(raw_create(&ra, longname, UNCHECKED, NULL, NULL) == NFS3ERR_NAMETOOLONG, "CREATE long name -> %u", raw_R.st);
	CHECK(raw_getattr(&ra, &at) == NFS3_OK, "root attrs");
	{
		uint64_t rootid = at.fileid;

		CHECK(raw_lookup(&ra, "..", &x) == NFS3_OK && raw_R.attr.fileid == rootid, "'..' at the root stays");
	}
	CHECK(raw_lookup(&ra, "a/../..", NULL) != NFS3_OK, "names with '/' refused");

	/* ACCESS */
	{
		ACCESS3args a = {.object = raw_wire(&f1), .access = ACCESS3_READ | ACCESS3_MODIFY};

		RAW_RUN(K_ACCESS, &raw_R, rpc_nfs3_access_async(raw_rpc, raw_cb, &a, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && raw_R.u32 == (ACCESS3_READ | ACCESS3_MODIFY), "ACCESS rw (%x)", raw_R.u32);
		a.object = raw_wire(&rro);
		a.access = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_LOOKUP;
		RAW_RUN(K_ACCESS, &raw_R, rpc_nfs3_access_async(raw_rpc, raw_cb, &a, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && !(raw_R.u32 & ACCESS3_MODIFY) && (raw_R.u32 & ACCESS3_LOOKUP),
		      "ACCESS on read-only export has no MODIFY (%x)", raw_R.u32);
	}

	/* MKDIR, SYMLINK, READLINK, MKNOD */
	CHECK(raw_mkdir3(&ra, "d1", &d1) == NFS3_OK && raw_R.attr.type == NF3DIR, "MKDIR d1");
	CHECK(raw_mkdir3(&ra, "d1", NULL) == NFS3ERR_EXIST, "MKDIR existing -> %u", raw_R.st);
	{
		SYMLINK3args s;
		READLINK3args rl;

		memset(&s, 0, sizeof(s));
		s.where.dir = raw_wire(&ra);
		s.where.name = (char *)(uintptr_t)"s1";
		s.symlink.symlink_data = (char *)(uintptr_t)"../../etc";
		RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_symlink_async(raw_rpc, raw_cb, &s, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && raw_R.attr.type == NF3LNK, "SYMLINK s1");
		s1 = raw_R.fh;
		rl.symlink = raw_wire(&s1);
		RAW_RUN(K_READLINK, &raw_R, rpc_nfs3_readlink_async(raw_rpc, raw_cb, &rl, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && !strcmp(raw_R.data, "../../etc"), "READLINK '%s'", raw_R.data);
		rl.symlink = raw_wire(&f1);
		RAW_RUN(K_READLINK, &raw_R, rpc_nfs3_readlink_async(raw_rpc, raw_cb, &rl, RAW_PD));
		CHECK(raw_R.st == NFS3ERR_INVAL, "READLINK of a file -> %u", raw_R.st);
		CHECK(raw_lookup(&s1, "passwd", NULL) == NFS3ERR_NOTDIR, "a symlink is never followed -> %u", raw_R.st);
	}
	{
		MKNOD3args m;

		memset(&m, 0, sizeof(m));
		m.where.dir = raw_wire(&ra);
		m.where.name = (char *)(uintptr_t)"fifo";
		m.what.type = NF3FIFO;
		RAW_RUN(K_CREATE, &raw_R, rpc_nfs3_mknod_async(raw_rpc, raw_cb, &m, RAW_PD));
		CHECK(raw_R.st == NFS3_OK && raw_R.attr.type == NF3FIFO, "MKNOD FIFO -> %u", raw_R.st);
	}

	/* LINK, RENAME */
	CHECK(raw_link3(&f1, &ra, "f1link") == NFS3_OK, "LINK");
	CHECK(raw_getattr(&f1, &at) == NFS3_OK && at.nlink == 2, "nlink 2 after LINK");
	CHECK(raw_link3(&f1, &f1, "bad") == NFS3ERR_NOTDIR, "LINK into a file -> %u", raw_R.st);
	CHECK(raw_rename3(&ra, "f1link", &d1, "f2") == NFS3_OK, "RENAME into d1");
	CHECK(raw_lookup(&ra, "f1link", NULL) == NFS3ERR_NOENT && raw_lookup(&d1, "f2", NULL) == NFS3_OK,
	      "RENAME moved the name");
	CHECK(raw_rename3(&ra, "nothere", &ra, "x") == NFS3ERR_NOENT, "RENAME missing -> %u", raw_R.st);

	/* READDIR / READDIRPLUS */
	CHECK(raw_readdir3(&ra, 0, NULL, 4096) == NFS3_OK && raw_R.eof && raw_has_name(&raw_R, "f1") && raw_has_name(&raw_R, "d1") &&
	      raw_has_name(&raw_R, "s1") && raw_has_name(&raw_R, "."), "READDIR root (%zu)", raw_R.nent);
	CHECK(raw_readdirplus3(&ra, 0, NULL, 4096, 8192) == NFS3_OK && raw_R.eof && raw_has_name(&raw_R, "f1") && raw_R.ent_fh[0],
	      "READDIRPLUS root");
	CHECK(raw_readdir3(&f1, 0, NULL, 4096) == NFS3ERR_NOTDIR, "READDIR of a file -> %u", raw_R.st);
	for (i = 0; i < 60; i++) {
		char n[32];

		snprintf(n, sizeof(n), "entry%02d", i);
		raw_create(&d1, n, GUARDED, NULL, NULL);
	}
	{
		/* Page through with small replies while the directory changes. */
		int seen[60] = {0}, pages = 0, bad = 0;
		uint64_t cookie = 0;
		char cv[8] = {0};
		bool eof = false, plus = false;

		while (!eof && pages < 200) {
			size_t k;
			uint32_t st = plus ? raw_readdirplus3(&d1, cookie, cv, 300, 1200) : raw_readdir3(&d1, cookie, cv, 600);

			if (st != NFS3_OK) {
				bad++;
				break;
			}
			for (k = 0; k < raw_R.nent; k++) {
				int idx;

				if (sscanf(raw_R.names[k], "entry%d", &idx) == 1 && idx >= 0 && idx < 60)
					seen[idx]++;
			}
			eof = raw_R.eof;
			cookie = raw_R.last_cookie;
			memcpy(cv, raw_R.verf, 8);
			if (pages == 1) {
				/* concurrent change: new names and a removed one */
				raw_create(&d1, "late1", GUARDED, NULL, NULL);
				raw_create(&d1, "late2", GUARDED, NULL, NULL);
				raw_remove3(&d1, "entry59");
			}
			plus = !plus;
			pages++;
		}
		for (i = 0; i < 59; i++)
			if (seen[i] != 1)
				bad++;
		CHECK(bad == 0 && pages > 3, "paged READDIR/READDIRPLUS saw each untouched entry once (%d pages)", pages);
	}
	CHECK(raw_readdir3(&d1, 12345, "zzzzzzzz", 4096) == NFS3ERR_BAD_COOKIE, "wrong cookie verifier -> %u", raw_R.st);
	CHECK(raw_readdir3(&d1, 0, NULL, 20) == NFS3ERR_TOOSMALL, "tiny READDIR -> %u", raw_R.st);

	/* REMOVE / RMDIR errors */
	CHECK(raw_rmdir3(&ra, "f1") == NFS3ERR_NOTDIR, "RMDIR a file -> %u", raw_R.st);
	CHECK(raw_remove3(&ra, "d1") == NFS3ERR_ISDIR, "REMOVE a directory -> %u", raw_R.st);
	CHECK(raw_rmdir3(&ra, "d1") == NFS3ERR_NOTEMPTY, "RMDIR non-empty -> %u", raw_R.st);
	CHECK(raw_remove3(&ra, "missing") == NFS3ERR_NOENT, "REMOVE missing -> %u", raw_R.st);
	CHECK(raw_mkdir3(&ra, "empty", NULL) == NFS3_OK && raw_rmdir3(&ra, "empty") == NFS3_OK, "RMDIR empty");

	/* GUARDED / EXCLUSIVE */
	CHECK(raw_create(&ra, "f1", GUARDED, NULL, NULL) == NFS3ERR_EXIST, "GUARDED create of existing -> %u", raw_R.st);
	CHECK(raw_create(&ra, "ex", EXCLUSIVE, verf, &x) == NFS3_OK, "EXCLUSIVE create");
	CHECK(raw_create(&ra, "ex", EXCLUSIVE, verf, &y) == NFS3_OK && x.len == y.len && !memcmp(x.data, y.data, x.len),
	      "EXCLUSIVE retry with the same verifier -> %u", raw_R.st);
	CHECK(raw_create(&ra, "ex", EXCLUSIVE, verf2, NULL) == NFS3ERR_EXIST, "EXCLUSIVE other verifier -> %u", raw_R.st);

	/* Stale and forged handles */
	CHECK(raw_create(&ra, "gone", UNCHECKED, NULL, &x) == NFS3_OK && raw_remove3(&ra, "gone") == NFS3_OK, "make+remove");
	CHECK(raw_getattr(&x, NULL) == NFS3ERR_STALE, "GETATTR of a deleted file -> %u", raw_R.st);
	CHECK(raw_mkdir3(&ra, "gonedir", &y) == NFS3_OK && raw_rmdir3(&ra, "gonedir") == NFS3_OK, "mkdir+rmdir");
	CHECK(raw_getattr(&y, NULL) == NFS3ERR_STALE, "GETATTR of a deleted dir -> %u", raw_R.st);
	/* the same after the handles were used (and cached by the server) */
	CHECK(raw_create(&ra, "gone2", UNCHECKED, NULL, &x) == NFS3_OK && raw_write3(&x, 0, "abc", 3, UNSTABLE) == NFS3_OK &&
	      raw_read3(&x, 0, 3) == NFS3_OK && raw_remove3(&ra, "gone2") == NFS3_OK, "use+remove");
	CHECK(raw_getattr(&x, NULL) == NFS3ERR_STALE && raw_read3(&x, 0, 3) == NFS3ERR_STALE, "used then deleted -> %u", raw_R.st);
	CHECK(raw_mkdir3(&ra, "gonedir2", &y) == NFS3_OK && raw_getattr(&y, NULL) == NFS3_OK, "mkdir+use");
	snprintf(path, sizeof(path), "%s/a/gonedir2", live.dir);
	CHECK(rmdir(path) == 0 && raw_getattr(&y, NULL) == NFS3ERR_STALE, "dir removed behind the server's back -> %u", raw_R.st);
	CHECK(raw_create(&ra, "gone3", UNCHECKED, NULL, &x) == NFS3_OK && raw_getattr(&x, NULL) == NFS3_OK, "create+use");
	snprintf(path, sizeof(path), "%s/a/gone3", live.dir);
	CHECK(unlink(path) == 0 && raw_getattr(&x, NULL) == NFS3ERR_STALE, "file removed behind the server's back -> %u", raw_R.st);
	y = f1;
	y.data[y.len - 1] ^= 1;
	CHECK(raw_getattr(&y, NULL) == NFS3ERR_BADHANDLE, "forged MAC -> %u", raw_R.st);
	y = f1;
	y.data[8] ^= 1; /* fsid byte: another (unknown) export */
	CHECK(raw_getattr(&y, NULL) == NFS3ERR_BADHANDLE, "forged fsid -> %u", raw_R.st);
	y.len = 3;
	CHECK(raw_getattr(&y, NULL) == NFS3ERR_BADHANDLE, "short handle -> %u", raw_R.st);

	/* Cross-volume */
	CHECK(raw_rename3(&ra, "f1", &rb, "f1") == NFS3ERR_XDEV, "RENAME across exports -> %u", raw_R.st);
	CHECK(raw_link3(&f1, &rb, "f1") == NFS3ERR_XDEV, "LINK across exports -> %u", raw_R.st);
	CHECK(raw_lookup(&rb, "f1", NULL) == NFS3ERR_NOENT, "handle of /a does not see into /b");

	/* Read-only export */
	CHECK(raw_create(&rro, "new", UNCHECKED, NULL, NULL) == NFS3ERR_ROFS, "CREATE on RO -> %u", raw_R.st);
	CHECK(raw_lookup(&rro, "existing", &x) == NFS3_OK, "LOOKUP on RO");
	CHECK(raw_write3(&x, 0, "x", 1, FILE_SYNC) == NFS3ERR_ROFS, "WRITE on RO -> %u", raw_R.st);
	CHECK(raw_setsize(&x, 0) == NFS3ERR_ROFS, "SETATTR on RO -> %u", raw_R.st);
	CHECK(raw_remove3(&rro, "existing") == NFS3ERR_ROFS, "REMOVE on RO -> %u", raw_R.st);
	CHECK(raw_read3(&x, 0, 100) == NFS3_OK && raw_R.count == 15, "READ on RO");

	/* Root squash */
	CHECK(raw_create(&rsq, "squashed", UNCHECKED, NULL, &x) == NFS3_OK, "CREATE as root on squash export");
	CHECK(raw_getattr(&x, &at) == NFS3_OK && at.uid == 4242 && at.gid == 4243, "owner squashed to %u:%u",
	      at.uid, at.gid);
	CHECK(raw_create(&ra, "notsquashed", UNCHECKED, NULL, &x) == NFS3_OK && raw_getattr(&x, &at) == NFS3_OK &&
	      at.uid == 0, "no squash on /a: uid %u", at.uid);

	/* Capacity: a 1 GiB volume refuses its second GiB; the name "big" uses
	 * 4 KiB of it (metadata is charged, issue 15 item 6) */
	CHECK(raw_create(&rcap, "big", UNCHECKED, NULL, &fbig) == NFS3_OK, "CREATE big");
	CHECK(raw_setsize(&fbig, (1ull << 30) - (1u << 20) - 4096) == NFS3_OK, "grow to 1 GiB - 1 MiB - 4 KiB");
	{
		static char mib[1 << 20];

		memset(mib, 'c', sizeof(mib));
		CHECK(raw_write3(&fbig, (1ull << 30) - (1u << 20) - 4096, mib, sizeof(mib), UNSTABLE) == NFS3_OK,
		      "write the last MiB of the first GiB -> %u", raw_R.st);
		CHECK(raw_write3(&fbig, (1ull << 30) - 4096, "x", 1, UNSTABLE) == NFS3ERR_DQUOT, "a byte more -> %u",
		      raw_R.st);
		CHECK(raw_create(&rcap, "more", UNCHECKED, NULL, &x) == NFS3ERR_DQUOT, "a new name does not fit either -> %u",
		      raw_R.st);
		CHECK(raw_mkdir3(&rcap, "dir", NULL) == NFS3ERR_DQUOT, "nor a directory -> %u", raw_R.st);
	}
	CHECK(raw_setsize(&fbig, 2ull << 30) == NFS3ERR_DQUOT, "SETATTR to 2 GiB -> %u", raw_R.st);
	CHECK(raw_fsstat3(&rcap) == NFS3_OK && raw_R.fbytes == 0 && raw_R.ffiles == 0,
	      "FSSTAT full: free %llu, %llu files", (unsigned long long)raw_R.fbytes, (unsigned long long)raw_R.ffiles);
	CHECK(raw_remove3(&rcap, "big") == NFS3_OK && raw_fsstat3(&rcap) == NFS3_OK && raw_R.fbytes == 1ull << 30,
	      "REMOVE gives the space back: free %llu", (unsigned long long)raw_R.fbytes);

	/* Duplicate-request cache: a retransmission gets the original reply */
	rpc_set_next_xid(raw_rpc, 0x5eed0001);
	CHECK(raw_create(&ra, "dup", GUARDED, NULL, &x) == NFS3_OK, "GUARDED create dup");
	rpc_set_next_xid(raw_rpc, 0x5eed0001);
	CHECK(raw_create(&ra, "dup", GUARDED, NULL, &y) == NFS3_OK && !memcmp(x.data, y.data, x.len),
	      "retransmitted GUARDED create answered from the cache -> %u", raw_R.st);
	rpc_set_next_xid(raw_rpc, 0x5eed0002);
	CHECK(raw_remove3(&ra, "dup") == NFS3_OK, "REMOVE dup");
	rpc_set_next_xid(raw_rpc, 0x5eed0002);
	CHECK(raw_remove3(&ra, "dup") == NFS3_OK, "retransmitted REMOVE answered from the cache -> %u", raw_R.st);
	CHECK(raw_remove3(&ra, "dup") == NFS3ERR_NOENT, "a new REMOVE -> %u", raw_R.st);

	/* Handles survive a reconnect (no per-connection state) */
	raw_connect_as(live.port, 1000, 1000);
	CHECK(raw_getattr(&f1, &at) == NFS3_OK && at.size == 5, "old handle after reconnect");
	CHECK(raw_read3(&f1, 0, 5) == NFS3ERR_ACCES, "mode 0600 root file unreadable for uid 1000 -> %u", raw_R.st);

	rpc_destroy_context(raw_rpc);
	nfs_live_stop(&live);
	fprintf(stderr, "%d checks, %d failures\n", raw_checks, raw_failures);
	return raw_failures ? 1 : 0;
}
