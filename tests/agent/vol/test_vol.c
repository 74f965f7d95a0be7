/* test_vol: the volume store (agent/vol/vol.c): handle MAC (known answer,
 * shared by threads) and forgery,
 * cross-export handles, export-set replacement, export rules, confinement to
 * the export, capacity accounting and counters. Needs root (open_by_handle_at). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "agent/vol/vol.h"
#include "tests/lib/aqt.h"
#include "tests/lib/aqt_store.h"

static struct aqt_store ts; /* tmp folder, cfg[2], store, location key */
static const struct vol_cred root = {0, 0, 0, {0}, 0};

static void setup(void)
{
	char p[128];

	aqt_store_init(&ts, 2,
		       &(struct aqt_store_spec){ .id_prefix = "vol", .fsid = 100, .capacity = 1 << 20,
						 .clients = "127.0.0.0/8, 10.1.2.3", .anon = 65534, .key_byte = 7 });
	snprintf(p, sizeof(p), "%s/v0/pre", ts.dir);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	truncate(p, 1000);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
}

static void teardown(void)
{
	aqt_store_cleanup(&ts);
}

/* What an attacker holding the location key builds (aqt_store_forge). */
static struct vol_fh forge(uint64_t fsid, const char *path)
{
	return aqt_store_forge(ts.key, false, fsid, path);
}

/* The same handle in the format before per-export keys (version 1: MACed
 * with the location key itself). */
static struct vol_fh as_v1(struct vol_fh fh)
{
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	fh.data[0] = 1;
	HMAC(EVP_sha256(), ts.key, VOL_KEY_LEN, fh.data, fh.len - 16, mac, &n);
	memcpy(fh.data + fh.len - 16, mac, 16);
	return fh;
}

static struct vol_obj root_of(int i)
{
	struct vol_export *e = vol_export_by_path(ts.store, ts.cfg[i].path, strlen(ts.cfg[i].path));
	struct vol_obj o;

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(vol_root(e, &o), 0);
	vol_export_unref(e);
	return o;
}

START_TEST(test_handle_roundtrip_and_forgery)
{
	struct vol_obj r = root_of(0), o;
	struct vol_fh fh, bad;
	size_t i;

	ck_assert_int_eq(vol_fh_make(ts.store, &r, &fh), 0);
	ck_assert_uint_le(fh.len, VOL_FH_MAX);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0);
	ck_assert_uint_eq(o.st.st_ino, r.st.st_ino);
	vol_obj_cleanup(&o);
	/* any single flipped bit fails the MAC */
	for (i = 0; i < fh.len; i++) {
		bad = fh;
		bad.data[i] ^= 0x10;
		ck_assert_int_eq(vol_fh_open(ts.store, bad.data, bad.len, &o), VOL_EBADHANDLE);
	}
	ck_assert_int_eq(vol_fh_verify(ts.store, fh.data, fh.len - 1), VOL_EBADHANDLE);
	ck_assert_int_eq(vol_fh_verify(ts.store, fh.data, 0), VOL_EBADHANDLE);
	/* another key does not accept it */
	{
		uint8_t k2[VOL_KEY_LEN];
		struct vol_store *s2;

		memset(k2, 8, sizeof(k2));
		ck_assert_int_eq(vol_store_new(k2, &s2), 0);
		ck_assert_int_eq(vol_fh_verify(s2, fh.data, fh.len), VOL_EBADHANDLE);
		vol_store_free(s2);
	}
	vol_obj_cleanup(&r);
}
END_TEST

/* The MAC of a handle is HMAC-SHA256 under the export's key (HKDF-Expand of
 * the location key), whichever way vol_fh.c computes it (issue 25: from
 * saved states): checked here against OpenSSL's one-shot HMAC(). */
static void expect_mac(const struct vol_fh *fh, uint64_t fsid)
{
	static const char info[] = "aquifer file handle key v2";
	uint8_t in[sizeof(info) - 1 + 9], ekey[EVP_MAX_MD_SIZE], mac[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int i;

	memcpy(in, info, sizeof(info) - 1);
	for (i = 0; i < 8; i++)
		in[sizeof(info) - 1 + i] = (uint8_t)(fsid >> (56 - 8 * i));
	in[sizeof(in) - 1] = 1;
	HMAC(EVP_sha256(), ts.key, VOL_KEY_LEN, in, sizeof(in), ekey, &n);
	HMAC(EVP_sha256(), ekey, VOL_KEY_LEN, fh->data, fh->len - 16, mac, &n);
	ck_assert_mem_eq(fh->data + fh->len - 16, mac, 16);
}

struct verify_arg {
	const struct vol_fh *fh;
	int ok, refused;
};

static void *verify_many(void *p)
{
	struct verify_arg *a = p;
	struct vol_fh bad = *a->fh;
	int i;

	bad.data[bad.len - 1] ^= 1;
	for (i = 0; i < 2000; i++) {
		a->ok += vol_fh_verify(ts.store, a->fh->data, a->fh->len) == 0;
		a->refused += vol_fh_verify(ts.store, bad.data, bad.len) == VOL_EBADHANDLE;
	}
	return NULL;
}

START_TEST(test_handle_mac_known_answer)
{
	struct vol_obj r = root_of(0), f;
	struct vol_fh fh, ff;
	struct verify_arg a[4];
	pthread_t t[4];
	int i;

	ck_assert_int_eq(vol_fh_make(ts.store, &r, &fh), 0);
	expect_mac(&fh, ts.cfg[0].fsid);
	ck_assert_int_eq(vol_create(&r, &root, "kat", 3, false, NULL, NULL, &f), 0);
	ck_assert_int_eq(vol_fh_make(ts.store, &f, &ff), 0);
	expect_mac(&ff, ts.cfg[0].fsid);
	/* the saved states are shared by every worker: only copied from */
	for (i = 0; i < 4; i++) {
		a[i] = (struct verify_arg){&ff, 0, 0};
		ck_assert_int_eq(pthread_create(&t[i], NULL, verify_many, &a[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(a[i].ok, 2000);
		ck_assert_int_eq(a[i].refused, 2000);
	}
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r);
}
END_TEST

START_TEST(test_confinement)
{
	struct vol_obj r = root_of(0), o, l;

	ck_assert_int_eq(vol_lookup(&r, &root, "..", 2, &o), 0);
	ck_assert_uint_eq(o.st.st_ino, r.st.st_ino); /* '..' at the root is the root */
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_lookup(&r, &root, "../v1", 5, &o), -EINVAL);
	ck_assert_int_eq(vol_lookup(&r, &root, "", 0, &o), -EINVAL);
	ck_assert_int_eq(vol_lookup(&r, &root, "a\0b", 3, &o), -EINVAL);
	{
		char big[300];

		memset(big, 'x', sizeof(big));
		ck_assert_int_eq(vol_lookup(&r, &root, big, 256, &o), -ENAMETOOLONG);
	}
	/* a symlink is an object, never a path to follow */
	ck_assert_int_eq(vol_symlink(&r, &root, "up", 2, "/etc", 4, NULL, &l), 0);
	ck_assert(S_ISLNK(l.st.st_mode));
	ck_assert_int_eq(vol_lookup(&l, &root, "passwd", 6, &o), -ENOTDIR);
	vol_obj_cleanup(&l);
	vol_obj_cleanup(&r);
}
END_TEST

START_TEST(test_set_exports_stale)
{
	struct vol_obj r1 = root_of(1), o;
	struct vol_fh fh;

	ck_assert_int_eq(vol_fh_make(ts.store, &r1, &fh), 0);
	vol_obj_cleanup(&r1);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0); /* v1 removed */
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), -ESTALE);
	ck_assert_ptr_null(vol_export_by_path(ts.store, "/v1", 3));
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0); /* back: handles work again */
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0);
	vol_obj_cleanup(&o);
	/* invalid sets change nothing */
	ts.cfg[1].fsid = ts.cfg[0].fsid;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), -EINVAL);
	{
		struct vol_export *e = vol_export_at(ts.store, 1);

		ck_assert_ptr_nonnull(e);
		vol_export_unref(e);
	}
}
END_TEST

/* Descriptors this process holds on files under dir. */
static int fds_under(const char *dir)
{
	char fdp[64], target[512];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
		if ((len = readlink(fdp, target, sizeof(target) - 1)) <= 0)
			continue;
		target[len] = 0;
		n += strncmp(target, dir, strlen(dir)) == 0;
	}
	return n;
}

/* vol_store_forget_dev (issue 24): the open-file cache lets go of a file
 * system, so a volume's own file system (the NVMe-oF shelf) can be unmounted
 * once the volume left; a borrowed entry goes when its borrower is done. */
START_TEST(test_forget_dev)
{
	struct vol_obj r0 = root_of(0), f, o;
	struct vol_fh fh;
	struct stat st;
	char pre[160];

	snprintf(pre, sizeof(pre), "%s/v0/pre", ts.dir);
	ck_assert_int_eq(vol_lookup(&r0, &root, "pre", 3, &f), 0);
	ck_assert_int_eq(vol_fh_make(ts.store, &f, &fh), 0);
	vol_obj_cleanup(&f);
	vol_obj_cleanup(&r0);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0); /* cached */
	vol_obj_cleanup(&o);
	ck_assert_int_ge(fds_under(pre), 1);
	ck_assert_int_eq(stat(ts.dir, &st), 0);
	vol_store_forget_dev(ts.store, st.st_dev + 1); /* another file system: kept */
	ck_assert_int_ge(fds_under(pre), 1);
	vol_store_forget_dev(ts.store, st.st_dev);
	ck_assert_int_eq(fds_under(pre), 0);

	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0); /* borrowed while forgotten */
	vol_store_forget_dev(ts.store, st.st_dev);
	ck_assert_int_ge(fds_under(pre), 1);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(fds_under(pre), 0);
}
END_TEST

/* A volume whose protocols lack the front end's is not served by
 * it (NFS answers MNT3ERR_ACCES / NFS3ERR_ACCES); no protocols set is NFSv3. */
START_TEST(test_protocols)
{
	struct vol_export_cfg c[2];
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct vol_cred in = {0, 0, 0, {0}, 0}, out;
	struct vol_export *e;

	memcpy(c, ts.cfg, sizeof(c));
	inet_pton(AF_INET, "127.0.0.9", &a.sin_addr);
	c[0].protocols = API_INTENT_SMB;
	ck_assert_int_eq(vol_store_set(ts.store, c, 2), 0);
	e = vol_export_by_path(ts.store, "/v0", 3);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out), VOL_ACCESS_NONE);
	vol_export_unref(e);
	c[0].protocols = API_INTENT_SMB | API_INTENT_NFSV3;
	ck_assert_int_eq(vol_store_set(ts.store, c, 2), 0);
	e = vol_export_by_path(ts.store, "/v0", 3);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out), VOL_ACCESS_RW);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV4, &in, &out), VOL_ACCESS_NONE);
	vol_export_unref(e);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
}
END_TEST

START_TEST(test_rules)
{
	struct vol_export *e = vol_export_by_path(ts.store, "/v0/", 4);
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct vol_cred in = {0, 0, 0, {0}, 0}, out;

	ck_assert_ptr_nonnull(e);
	inet_pton(AF_INET, "127.0.0.9", &a.sin_addr);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out), VOL_ACCESS_RW);
	ck_assert_uint_eq(out.uid, 0);
	inet_pton(AF_INET, "10.1.2.4", &a.sin_addr);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out), VOL_ACCESS_NONE);
	vol_export_unref(e);

	/* rules change without restart: root squash + read-only */
	ts.cfg[0].rules[0].squash = VOL_SQUASH_ROOT;
	ts.cfg[0].rules[0].access = VOL_ACCESS_RO;
	ts.cfg[0].rules[0].anon_uid = 77;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	e = vol_export_by_path(ts.store, "/v0", 3);
	inet_pton(AF_INET, "10.1.2.3", &a.sin_addr);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out), VOL_ACCESS_RO);
	ck_assert_uint_eq(out.uid, 77);
	ck_assert_uint_eq(out.gid, 65534); /* gid 0 squashed too */
	in.uid = 5;
	vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out);
	ck_assert_uint_eq(out.uid, 5);
	/* issue 15 item 7: as knfsd, gid 0 is squashed for any uid, primary and
	 * supplementary; other groups stay */
	ck_assert_uint_eq(out.gid, 65534);
	in.gid = 7;
	in.ngids = 3;
	in.gids[0] = 9;
	in.gids[1] = 0;
	in.gids[2] = 11;
	vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out);
	ck_assert_uint_eq(out.gid, 7);
	ck_assert_uint_eq(out.ngids, 3);
	ck_assert_uint_eq(out.gids[0], 9);
	ck_assert_uint_eq(out.gids[1], 65534);
	ck_assert_uint_eq(out.gids[2], 11);
	in.uid = 0;
	vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out);
	ck_assert_uint_eq(out.uid, 77);
	ck_assert_uint_eq(out.gids[1], 65534);
	ck_assert_uint_eq(out.gids[0], 9);
	memset(&in, 0, sizeof(in));
	vol_export_unref(e);

	/* a rule not for NFSv3 (nfsv3: false) is skipped for NFSv3 callers:
	 * the next rule decides, and without one there is no access */
	ts.cfg[0].rules[0].not_for = VOL_PROTO_NFSV3;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	e = vol_export_by_path(ts.store, "/v0", 3);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out), VOL_ACCESS_NONE);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV4, &in, &out), VOL_ACCESS_RO);
	vol_export_unref(e);
	ts.cfg[0].nrules = 2;
	ts.cfg[0].rules[1] = ts.cfg[0].rules[0];
	ts.cfg[0].rules[1].not_for = 0;
	ts.cfg[0].rules[1].access = VOL_ACCESS_RW;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	e = vol_export_by_path(ts.store, "/v0", 3);
	ck_assert_int_eq(vol_authorize(e, (struct sockaddr *)&a, VOL_PROTO_NFSV3, &in, &out), VOL_ACCESS_RW);
	vol_export_unref(e);
	ts.cfg[0].nrules = 1;
	ts.cfg[0].rules[0].not_for = 0;
	snprintf(ts.cfg[0].rules[0].clients, sizeof(ts.cfg[0].rules[0].clients), "300.1.1.1");
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), -EINVAL);
}
END_TEST

START_TEST(test_capacity)
{
	struct vol_obj r = root_of(0), f;
	struct vol_stats st;
	struct vol_fsstat fs;
	static char data[1 << 19];
	int committed;

	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &st), 0);
	ck_assert_uint_eq(st.used, 1000 + VOL_NAME_COST); /* scanned at start: "pre" and its name */
	ck_assert_int_eq(vol_create(&r, &root, "f", 1, true, NULL, NULL, &f), 0);
	ck_assert_int_eq(vol_write(&f, &root, 0, data, sizeof(data), 0, &committed), 0);
	ck_assert_int_eq(vol_write(&f, &root, 0, data, sizeof(data), 0, &committed), 0); /* overwrite: free */
	ck_assert_int_eq(vol_write(&f, &root, sizeof(data), data, sizeof(data), 0, &committed), -EDQUOT);
	ck_assert_int_eq(vol_write(&f, &root, sizeof(data), data, sizeof(data) - 1000 - 2 * VOL_NAME_COST, 0,
				   &committed), 0);
	vol_store_stats(ts.store, "vol0", &st);
	ck_assert_uint_eq(st.used, 1u << 20);
	ck_assert_int_eq(vol_fsstat(&r, &fs), 0);
	ck_assert_uint_eq(fs.tbytes, 1u << 20);
	ck_assert_uint_eq(fs.fbytes, 0);
	vol_obj_cleanup(&f);
	ck_assert_int_eq(vol_remove(&r, &root, "f", 1), 0);
	vol_store_stats(ts.store, "vol0", &st);
	ck_assert_uint_eq(st.used, 1000 + VOL_NAME_COST);
	/* capacity change applies without restart */
	ts.cfg[0].capacity = 500;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	vol_obj_cleanup(&r);
	r = root_of(0);
	ck_assert_int_eq(vol_create(&r, &root, "g", 1, true, NULL, NULL, &f), -EDQUOT);
	vol_export_record(r.exp, 6, 4096, 1500, false);
	vol_store_stats(ts.store, "vol0", &st);
	ck_assert_uint_eq(st.ops[6], 1);
	ck_assert_uint_eq(st.bytes[6], 4096);
	ck_assert_int_eq(vol_store_stats(ts.store, "nope", &st), -ENOENT);
	vol_obj_cleanup(&r);
}
END_TEST

/* Issue 15 item 6: metadata is charged. Every name (directory, symlink,
 * empty file, hard link) costs VOL_NAME_COST; a volume refuses names past
 * its capacity with -EDQUOT and gives them back when they go; FSSTAT's file
 * counts follow; the attach scan counts them the same way. */
START_TEST(test_capacity_metadata)
{
	struct vol_obj r, d, o;
	struct vol_stats st;
	struct vol_fsstat fs;
	char n[16];
	int i;

	ts.cfg[1].capacity = 16 * VOL_NAME_COST; /* 16 names */
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	r = root_of(1);
	ck_assert_int_eq(vol_fsstat(&r, &fs), 0);
	ck_assert_uint_eq(fs.tfiles, 16);
	ck_assert_uint_eq(fs.ffiles, 16);
	ck_assert_int_eq(vol_mkdir(&r, &root, "d", 1, NULL, &d), 0);
	ck_assert_int_eq(vol_symlink(&d, &root, "l", 1, "target", 6, NULL, &o), 0);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_create(&d, &root, "e", 1, true, NULL, NULL, &o), 0);
	ck_assert_int_eq(vol_link(&o, &r, "e2", 2, &root), 0);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol1", &st), 0);
	ck_assert_uint_eq(st.used, 4 * VOL_NAME_COST);
	ck_assert_uint_eq(st.names, 4);
	ck_assert_int_eq(vol_fsstat(&r, &fs), 0);
	ck_assert_uint_eq(fs.ffiles, 12);
	ck_assert_uint_eq(fs.afiles, 12);
	for (i = 0; i < 12; i++) {
		snprintf(n, sizeof(n), "x%d", i);
		ck_assert_int_eq(vol_mkdir(&d, &root, n, strlen(n), NULL, &o), 0);
		vol_obj_cleanup(&o);
	}
	ck_assert_int_eq(vol_mkdir(&d, &root, "full", 4, NULL, &o), -EDQUOT);
	ck_assert_int_eq(vol_create(&d, &root, "full", 4, false, NULL, NULL, &o), -EDQUOT);
	ck_assert_int_eq(vol_symlink(&d, &root, "full", 4, "t", 1, NULL, &o), -EDQUOT);
	ck_assert_int_eq(vol_lookup(&d, &root, "e", 1, &o), 0);
	ck_assert_int_eq(vol_link(&o, &d, "full", 4, &root), -EDQUOT);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_fsstat(&r, &fs), 0);
	ck_assert_uint_eq(fs.ffiles, 0);
	ck_assert_uint_eq(fs.fbytes, 0);
	/* an UNCHECKED create of an existing name costs nothing more */
	ck_assert_int_eq(vol_rmdir(&d, &root, "x0", 2), 0);
	ck_assert_int_eq(vol_create(&d, &root, "e", 1, false, NULL, NULL, &o), 0);
	vol_obj_cleanup(&o);
	vol_store_stats(ts.store, "vol1", &st);
	ck_assert_uint_eq(st.used, 15 * VOL_NAME_COST);
	/* rename over a name gives one back; removing gives back the rest */
	ck_assert_int_eq(vol_rename(&d, "x1", 2, &d, "x2", 2, &root), 0);
	vol_store_stats(ts.store, "vol1", &st);
	ck_assert_uint_eq(st.used, 14 * VOL_NAME_COST);
	ck_assert_int_eq(vol_remove(&r, &root, "e2", 2), 0);
	ck_assert_int_eq(vol_remove(&d, &root, "l", 1), 0);
	vol_store_stats(ts.store, "vol1", &st);
	ck_assert_uint_eq(st.used, 12 * VOL_NAME_COST);
	/* a fresh scan (the volume attached elsewhere) finds the same figure */
	vol_obj_cleanup(&d);
	vol_obj_cleanup(&r);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 1), 0);
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol1", &st), 0);
	ck_assert_uint_eq(st.used, 12 * VOL_NAME_COST);
	ck_assert_uint_eq(st.names, 12);
}
END_TEST

START_TEST(test_exclusive_create)
{
	struct vol_obj r = root_of(0), a, b;
	static const uint8_t v1[8] = {1, 2, 3, 4, 5, 6, 7, 8}, v2[8] = {9};

	ck_assert_int_eq(vol_create(&r, &root, "x", 1, false, v1, NULL, &a), 0);
	ck_assert_int_eq(vol_create(&r, &root, "x", 1, false, v1, NULL, &b), 0);
	ck_assert_uint_eq(a.st.st_ino, b.st.st_ino);
	vol_obj_cleanup(&b);
	ck_assert_int_eq(vol_create(&r, &root, "x", 1, false, v2, NULL, &b), -EEXIST);
	ck_assert_int_eq(vol_create(&r, &root, "x", 1, true, NULL, NULL, &b), -EEXIST);
	vol_obj_cleanup(&a);
	vol_obj_cleanup(&r);
}
END_TEST


/* Issue 15 item 2: a MAC-valid handle never resolves outside its export. */
START_TEST(test_handle_containment)
{
	struct vol_obj r0 = root_of(0), r1 = root_of(1), f0, f1, o;
	struct vol_fh fh;
	char p[160], q[160];
	uint8_t mark[8];

	ck_assert_int_eq(vol_create(&r0, &root, "mine", 4, true, NULL, NULL, &f0), 0);
	ck_assert_int_eq(vol_create(&r1, &root, "theirs", 6, true, NULL, NULL, &f1), 0);
	vol_obj_cleanup(&f0);
	vol_obj_cleanup(&f1);
	/* the legitimate handle, and the same object forged by the key holder */
	snprintf(p, sizeof(p), "%s/v0/mine", ts.dir);
	fh = forge(ts.cfg[0].fsid, p);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0);
	vol_obj_cleanup(&o);
	/* (a) another volume's file under this volume's fsid */
	snprintf(p, sizeof(p), "%s/v1/theirs", ts.dir);
	fh = forge(ts.cfg[0].fsid, p);
	ck_assert_int_eq(vol_fh_verify(ts.store, fh.data, fh.len), 0); /* the MAC is right... */
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), -ESTALE); /* ...and still no */
	fh = as_v1(fh);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), -ESTALE);
	/* (b) a file outside every export (a server secret next to the shelf),
	 * and the shelf directory above the export roots */
	snprintf(p, sizeof(p), "%s/secret.key", ts.dir);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	fh = forge(ts.cfg[0].fsid, p);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), -ESTALE);
	ck_assert_int_eq(vol_fh_open(ts.store, as_v1(fh).data, fh.len, &o), -ESTALE);
	fh = forge(ts.cfg[1].fsid, ts.dir);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), -ESTALE);
	/* the location key alone no longer MACs a version 2 handle */
	snprintf(p, sizeof(p), "%s/v0/mine", ts.dir);
	fh = as_v1(forge(ts.cfg[0].fsid, p));
	fh.data[0] = 2;
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), VOL_EBADHANDLE);
	/* handles minted before per-export keys still resolve inside */
	fh.data[0] = 1;
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0);
	vol_obj_cleanup(&o);
	/* (c) what existed before marks was stamped when the volume was attached:
	 * its handle resolves without a lookup first */
	snprintf(p, sizeof(p), "%s/v0/pre", ts.dir);
	fh = forge(ts.cfg[0].fsid, p);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(getxattr(ts.cfg[0].root, "trusted.aquifer.vol", mark, sizeof(mark)), 8);
	ck_assert_int_eq(getxattr(p, "trusted.aquifer.vol", mark, sizeof(mark)), 8);
	ck_assert_uint_eq(mark[7], ts.cfg[0].fsid & 0xff);
	/* a file put in the volume behind the store's back is adopted by LOOKUP
	 * (found by name inside); another volume's file linked in is not */
	snprintf(p, sizeof(p), "%s/v0/late", ts.dir);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	fh = forge(ts.cfg[0].fsid, p);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), -ESTALE);
	ck_assert_int_eq(vol_lookup(&r0, &root, "late", 4, &o), 0);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_fh_open(ts.store, fh.data, fh.len, &o), 0);
	vol_obj_cleanup(&o);
	snprintf(p, sizeof(p), "%s/v1/theirs", ts.dir);
	snprintf(q, sizeof(q), "%s/v0/linked", ts.dir);
	ck_assert_int_eq(link(p, q), 0);
	ck_assert_int_eq(vol_lookup(&r0, &root, "linked", 6, &o), -EACCES);
	vol_obj_cleanup(&r0);
	vol_obj_cleanup(&r1);
}
END_TEST

/* A root marked for another fsid is another volume's: not served. */
START_TEST(test_root_of_other_volume)
{
	ts.cfg[1].fsid = 999;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), -EEXIST);
	ts.cfg[1].fsid = 101;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
}
END_TEST

/* Issue 15 item 5: a READ's count is charged up to what one READ moves. */
START_TEST(test_qos_charge_capped)
{
	struct qos_item it1, it2;
	struct vol_stats st;
	struct vol_obj r;
	struct vol_fh fh;

	ts.cfg[0].qos.bytes_per_s = 80u << 20; /* the bucket holds 8 MiB */
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	r = root_of(0);
	ck_assert_int_eq(vol_fh_make(ts.store, &r, &fh), 0);
	ck_assert_uint_eq(vol_io_cost(0xffffffffu), VOL_QOS_IO_MAX);
	ck_assert_int_eq(vol_admit(ts.store, fh.data, fh.len, 1, QOS_READ, 0xffffffffu, &it1), QOS_ADMIT);
	/* uncapped, the first READ would owe 4 GiB (400 s at this rate) */
	ck_assert_int_eq(vol_admit(ts.store, fh.data, fh.len, 2, QOS_READ, 4096, &it2), QOS_ADMIT);
	ck_assert_int_eq(vol_store_stats(ts.store, "vol0", &st), 0);
	ck_assert_uint_eq(st.qos.admitted_bytes, VOL_QOS_IO_MAX + 4096);
	vol_export_settle(r.exp, 0xffffffffu, 100); /* it moved 100 bytes */
	vol_obj_cleanup(&r);
}
END_TEST

/* Issue 15 item 10: every namespace change syncs its directory before it
 * returns, and concurrent changes of one directory share syncs (group
 * commit) without losing any. (tests/agent/nfs/test_nfs_durable shows the
 * changes survive a crash.) */
struct dsync_arg {
	struct vol_obj *dir;
	int id, failed;
};

static void *dsync_worker(void *p)
{
	struct dsync_arg *a = p;
	struct vol_obj o;
	char n[32];
	int i;

	for (i = 0; i < 25; i++) {
		snprintf(n, sizeof(n), "t%d-%d", a->id, i);
		if (vol_create(a->dir, &root, n, strlen(n), true, NULL, NULL, &o) != 0)
			a->failed++;
		else
			vol_obj_cleanup(&o);
	}
	return NULL;
}

START_TEST(test_namespace_synced)
{
	struct vol_obj r = root_of(0), d, o;
	struct vol_stats a, b;
	struct dsync_arg args[8];
	pthread_t th[8];
	struct statfs sf;
	uint64_t own; /* directory syncs a new object's own fsync replaces: 1 on ext4/XFS, else 0 */
	uint64_t log; /* ...and one of a LINK's and one of a RENAME's: 1 on XFS and journalled ext4 */
	int i;

	ck_assert_int_eq(statfs(ts.dir, &sf), 0);
	own = sf.f_type == 0xEF53 || sf.f_type == 0x58465342;
	log = aqt_store_one_log(ts.dir);
	fprintf(stderr, "# %s: new object covers its entry %d, one log %d\n", ts.dir, (int)own, (int)log);
	ts.cfg[0].capacity = 1ull << 30;
	ck_assert_int_eq(vol_store_set(ts.store, ts.cfg, 2), 0);
	vol_obj_cleanup(&r);
	r = root_of(0);
	vol_store_stats(ts.store, "vol0", &a);
	ck_assert_int_eq(vol_mkdir(&r, &root, "d", 1, NULL, &d), 0);
	vol_store_stats(ts.store, "vol0", &b);
	ck_assert_uint_eq(b.dirsyncs, a.dirsyncs + 1 - own);
	ck_assert_uint_eq(b.dirsyncs_covered, a.dirsyncs_covered + own);
	ck_assert_int_eq(vol_create(&d, &root, "f", 1, true, NULL, NULL, &o), 0);
	ck_assert_int_eq(vol_link(&o, &d, "g", 1, &root), 0);
	vol_obj_cleanup(&o);
	ck_assert_int_eq(vol_rename(&d, "g", 1, &r, "h", 1, &root), 0); /* two directories */
	ck_assert_int_eq(vol_remove(&r, &root, "h", 1), 0);
	ck_assert_int_eq(vol_symlink(&d, &root, "s", 1, "t", 1, NULL, &o), 0); /* cannot be opened: dir synced */
	vol_obj_cleanup(&o);
	vol_store_stats(ts.store, "vol0", &a);
	ck_assert_uint_eq(a.dirsyncs, b.dirsyncs + 6 - own - 2 * log);
	ck_assert_uint_eq(a.dirsyncs_covered, b.dirsyncs_covered + own + 2 * log);
	ck_assert_int_eq(vol_create(&d, &root, "f", 1, false, NULL, NULL, &o), 0); /* there already: no change */
	vol_obj_cleanup(&o);
	vol_store_stats(ts.store, "vol0", &b);
	ck_assert_uint_eq(b.dirsyncs, a.dirsyncs);
	ck_assert_uint_eq(b.dirsyncs_covered, a.dirsyncs_covered);
	for (i = 0; i < 8; i++) {
		args[i] = (struct dsync_arg){.dir = &d, .id = i};
		ck_assert_int_eq(pthread_create(&th[i], NULL, dsync_worker, &args[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].failed, 0);
	}
	vol_store_stats(ts.store, "vol0", &a);
	if (own) { /* every create's own fsync made its name stable */
		ck_assert_uint_eq(a.dirsyncs, b.dirsyncs);
		ck_assert_uint_eq(a.dirsyncs_covered - b.dirsyncs_covered, 200);
	} else {
		ck_assert_uint_ge(a.dirsyncs - b.dirsyncs, 1);
		ck_assert_uint_le(a.dirsyncs - b.dirsyncs, 200);
	}
	fprintf(stderr, "# 200 concurrent creates in one directory: %llu directory syncs, %llu covered\n",
		(unsigned long long)(a.dirsyncs - b.dirsyncs),
		(unsigned long long)(a.dirsyncs_covered - b.dirsyncs_covered));
	vol_obj_cleanup(&d);
	vol_obj_cleanup(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol");
	TCase *tc = tcase_create("core");

	if (geteuid() != 0) {
		fprintf(stderr, "test_vol needs root (open_by_handle_at)\n");
		return 77;
	}
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_handle_roundtrip_and_forgery);
	tcase_add_test(tc, test_handle_mac_known_answer);
	tcase_add_test(tc, test_confinement);
	tcase_add_test(tc, test_set_exports_stale);
	tcase_add_test(tc, test_forget_dev);
	tcase_add_test(tc, test_rules);
	tcase_add_test(tc, test_capacity);
	tcase_add_test(tc, test_capacity_metadata);
	tcase_add_test(tc, test_exclusive_create);
	tcase_add_test(tc, test_handle_containment);
	tcase_add_test(tc, test_root_of_other_volume);
	tcase_add_test(tc, test_qos_charge_capped);
	tcase_add_test(tc, test_namespace_synced);
	tcase_add_test(tc, test_protocols);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
