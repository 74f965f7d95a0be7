/* vol_fh: file handles (MAC, resolution), the open-file cache, switching a
 * thread's fs identity, and content descriptors; see vol.h for the contract.
 *
 * Objects are O_PATH descriptors. Handle resolution (open_by_handle_at needs
 * CAP_DAC_READ_SEARCH) runs with the process's own credentials; everything a
 * caller asks for runs after vol_become() switched this thread's fs identity.
 * Content access reopens the O_PATH descriptor through /proc/self/fd so the
 * kernel checks the caller's permission on the open, or (a cached object)
 * checks it with faccessat2 and uses the cache's shared descriptor; an open
 * granted its access once (vol_obj_grant, an SMB open) skips both.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_internal.h"
#include "util/ut_hash.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ---------- handles ---------- */

/* Version 2 handles are MACed with their export's own key; version 1 (before
 * per-export keys) with the location key itself: still accepted, so mounts
 * survive an upgrade, but never minted. Both pass the containment check. */
#define VOL_FH_V1 1
#define VOL_FH_V2 2
#define VOL_FH_V3 3 /* a snapshot object's (vol_snap.c) */
#define VOL_FH_INFO "aquifer file handle key v2"

/* HMAC-SHA256 (RFC 2104) with the key's padded blocks hashed once: HMAC()
 * fetches "HMAC" and "SHA256" from OpenSSL's providers by name on every
 * call, under a lock every worker shares, and hashes the key twice again;
 * every call with a handle pays a MAC (1.44 us a MAC one-shot, 0.29 us from
 * the saved states, measured on this machine). */
void vol_mackey_init(struct vol_mackey *k, const uint8_t *key)
{
	EVP_MD_CTX *in = EVP_MD_CTX_new(), *out = EVP_MD_CTX_new();
	uint8_t ipad[64], opad[64];
	int i;

	k->in = k->out = NULL;
	for (i = 0; i < 64; i++) { /* a key shorter than the block is padded with zeros */
		uint8_t b = i < VOL_KEY_LEN ? key[i] : 0;

		ipad[i] = b ^ 0x36;
		opad[i] = b ^ 0x5c;
	}
	if (in && out && EVP_DigestInit_ex(in, EVP_sha256(), NULL) == 1 && EVP_DigestUpdate(in, ipad, 64) == 1 &&
	    EVP_DigestInit_ex(out, EVP_sha256(), NULL) == 1 && EVP_DigestUpdate(out, opad, 64) == 1) {
		k->in = in;
		k->out = out;
		in = out = NULL;
	}
	OPENSSL_cleanse(ipad, sizeof(ipad));
	OPENSSL_cleanse(opad, sizeof(opad));
	EVP_MD_CTX_free(in);
	EVP_MD_CTX_free(out);
}

void vol_mackey_cleanup(struct vol_mackey *k)
{
	EVP_MD_CTX_free(k->in);
	EVP_MD_CTX_free(k->out);
	k->in = k->out = NULL;
}

/* The first VOL_MAC_LEN bytes of HMAC-SHA256(key, data): from mk's states
 * when it has them (shared by every thread: only copied from), else (or if
 * that fails) with HMAC(). */
static void vol_mac(const uint8_t *key, const struct vol_mackey *mk, const uint8_t *data, size_t len, uint8_t *mac)
{
	EVP_MD_CTX *c = mk && mk->in ? EVP_MD_CTX_new() : NULL;
	uint8_t full[EVP_MAX_MD_SIZE];
	unsigned int flen = 0;

	if (!c || EVP_MD_CTX_copy_ex(c, mk->in) != 1 || EVP_DigestUpdate(c, data, len) != 1 ||
	    EVP_DigestFinal_ex(c, full, &flen) != 1 || EVP_MD_CTX_copy_ex(c, mk->out) != 1 ||
	    EVP_DigestUpdate(c, full, flen) != 1 || EVP_DigestFinal_ex(c, full, &flen) != 1)
		HMAC(EVP_sha256(), key, VOL_KEY_LEN, data, len, full, &flen);
	EVP_MD_CTX_free(c);
	memcpy(mac, full, VOL_MAC_LEN);
}

uint64_t vol_get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void vol_put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* HKDF-Expand (RFC 5869) of one block: the location key is already uniformly
 * random (32 bytes from aquiferd), so it serves as the PRK without Extract;
 * info = VOL_FH_INFO || fsid (big-endian), T(1) = HMAC(PRK, info || 0x01). */
void vol_fh_key(const uint8_t *lockey, uint64_t fsid, uint8_t *out)
{
	uint8_t info[sizeof(VOL_FH_INFO) - 1 + 8 + 1];
	unsigned int len = 0;

	memcpy(info, VOL_FH_INFO, sizeof(VOL_FH_INFO) - 1);
	vol_put64(info + sizeof(VOL_FH_INFO) - 1, fsid);
	info[sizeof(info) - 1] = 1;
	HMAC(EVP_sha256(), lockey, VOL_KEY_LEN, info, sizeof(info), out, &len);
}

/* Bytes 0..14+n of a version 2 handle (3: a snapshot object's) plus the MAC
 * under ekey (mk: its saved states, or NULL). */
static int vol_fh_seal(const uint8_t *ekey, const struct vol_mackey *mk, uint8_t version, uint64_t fsid,
		       uint32_t ktype, const uint8_t *kbytes, size_t klen, struct vol_fh *out)
{
	if (klen > VOL_FH_MAX - VOL_FH_HDR - VOL_MAC_LEN)
		return -EOVERFLOW;
	out->data[0] = version;
	out->data[1] = (uint8_t)klen;
	out->data[2] = (uint8_t)(ktype >> 24);
	out->data[3] = (uint8_t)(ktype >> 16);
	out->data[4] = (uint8_t)(ktype >> 8);
	out->data[5] = (uint8_t)ktype;
	vol_put64(out->data + 6, fsid);
	memcpy(out->data + VOL_FH_HDR, kbytes, klen);
	vol_mac(ekey, mk, out->data, VOL_FH_HDR + klen, out->data + VOL_FH_HDR + klen);
	out->len = (uint32_t)(VOL_FH_HDR + klen + VOL_MAC_LEN);
	return 0;
}

int vol_fh_encode(const uint8_t *lockey, bool snap, uint64_t fsid, uint32_t ktype, const uint8_t *kbytes,
		  size_t klen, struct vol_fh *out)
{
	uint8_t ekey[VOL_KEY_LEN];
	int rc;

	vol_fh_key(lockey, fsid, ekey);
	rc = vol_fh_seal(ekey, NULL, snap ? VOL_FH_V3 : VOL_FH_V2, fsid, ktype, kbytes, klen, out);
	OPENSSL_cleanse(ekey, sizeof(ekey));
	return rc;
}

/* Check a handle's form and MAC: 0 with *out the export it names (counted),
 * VOL_EBADHANDLE, or -ESTALE when the MAC is right but the export is gone. */
static int vol_fh_check(struct vol_store *s, const uint8_t *fh, size_t len, struct vol_export **out)
{
	uint8_t mac[VOL_MAC_LEN], ekey[VOL_KEY_LEN];
	struct vol_export *e = NULL;
	const struct vol_mackey *mk = NULL;
	const uint8_t *key;
	uint64_t fsid;
	size_t n;
	int rc = 0;

	*out = NULL;
	if (len < VOL_FH_HDR + VOL_MAC_LEN || len > VOL_FH_MAX || (fh[0] != VOL_FH_V2 && fh[0] != VOL_FH_V1 && fh[0] != VOL_FH_V3))
		return VOL_EBADHANDLE;
	n = fh[1];
	if (len != VOL_FH_HDR + n + VOL_MAC_LEN)
		return VOL_EBADHANDLE;
	fsid = vol_get64(fh + 6);
	e = vol_find_fsid(s, fsid);
	if (fh[0] == VOL_FH_V1) {
		key = s->key;
	} else if (e) {
		key = e->fhkey;
		mk = &e->fhmac;
	} else { /* derive it to tell a forged handle from one of a removed export */
		vol_fh_key(s->key, fsid, ekey);
		key = ekey;
	}
	vol_mac(key, mk, fh, VOL_FH_HDR + n, mac);
	if (CRYPTO_memcmp(mac, fh + VOL_FH_HDR + n, VOL_MAC_LEN) != 0)
		rc = VOL_EBADHANDLE;
	else if (!e)
		rc = -ESTALE;
	OPENSSL_cleanse(ekey, sizeof(ekey));
	if (rc == 0) {
		*out = e;
		e = NULL;
	}
	vol_export_unref(e);
	return rc;
}

int vol_fh_verify(struct vol_store *s, const uint8_t *fh, size_t len)
{
	struct vol_export *e = NULL;
	int rc = vol_fh_check(s, fh, len, &e);

	vol_export_unref(e);
	return rc == -ESTALE ? 0 : rc;
}

struct vol_export *vol_fh_export(struct vol_store *s, const uint8_t *fh, size_t len)
{
	struct vol_export *e = NULL;

	return vol_fh_check(s, fh, len, &e) == 0 ? e : NULL;
}

/* The kernel handle of name in dirfd ("" with AT_EMPTY_PATH: dirfd itself). */
static int vol_khandle(int dirfd, const char *name, int flags, uint32_t *type, uint8_t *bytes, size_t *n)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	int mnt;

	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dirfd, name, &u.fh, &mnt, flags) != 0)
		return -errno;
	if (u.fh.handle_bytes > VOL_FH_MAX - VOL_FH_HDR - VOL_MAC_LEN)
		return -EOVERFLOW;
	*type = (uint32_t)u.fh.handle_type;
	*n = u.fh.handle_bytes;
	memcpy(bytes, u.fh.f_handle, *n);
	return 0;
}

int vol_fh_make(struct vol_store *s, const struct vol_obj *obj, struct vol_fh *out)
{
	uint8_t kb[VOL_FH_MAX];
	uint32_t t;
	size_t n;
	int rc;

	(void)s; /* the export's key lives in the export */
	if ((rc = vol_khandle(obj->fd, "", AT_EMPTY_PATH, &t, kb, &n)) != 0)
		return rc;
	return vol_fh_seal(obj->exp->fhkey, &obj->exp->fhmac, obj->snap ? VOL_FH_V3 : VOL_FH_V2, obj->exp->cfg.fsid, t,
			   kb, n, out);
}

/* ---------- containment marks ---------- */

/* Every object of a volume carries VOL_MARK = its fsid (8 bytes, big-endian),
 * set when the store creates it (or adopts it: a name found in a directory of
 * the volume), so a MAC-valid handle can only resolve to an object of its own
 * export, whatever the kernel handle inside names. trusted.* needs
 * CAP_SYS_ADMIN, which switching fsuid keeps, and no NFS client can set it.
 * O_PATH descriptors take no f*xattr calls: the object itself is reached
 * through /proc/self/fd/N (the magic link lands on the object, a symlink
 * included), a name relative to its directory with AT_SYMLINK_NOFOLLOW;
 * getxattrat/setxattrat (Linux 6.13) do both without the path walk. */
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#define SYS_getxattrat 464
#endif

struct vol_xattr_args {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

bool vol_mark_probe(void)
{
	struct vol_xattr_args a = {0, 0, 0};

	/* a name nobody sets: anything but ENOSYS means the call exists */
	return syscall(SYS_getxattrat, AT_FDCWD, "/", 0, "trusted.aquifer.probe", &a, sizeof(a)) == 0 ||
	       errno != ENOSYS;
}

long vol_mark_sys(const struct vol_store *s, const char *attr, int fd, const char *name, bool set, uint8_t *v)
{
	struct vol_xattr_args a = {.value = (uint64_t)(uintptr_t)v, .size = 8};
	char path[64];

	if (s->xattrat) {
		char num[16];

		if (!name)
			snprintf(num, sizeof(num), "%d", fd);
		return syscall(set ? SYS_setxattrat : SYS_getxattrat, name ? fd : s->procfd, name ? name : num,
			       name ? AT_SYMLINK_NOFOLLOW : 0, attr, &a, sizeof(a));
	}
	if (name) {
		char full[32 + VOL_NAME_MAX + 1];

		snprintf(full, sizeof(full), "/proc/self/fd/%d/%s", fd, name);
		return set ? lsetxattr(full, attr, v, 8, 0) : lgetxattr(full, attr, v, 8);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return set ? setxattr(path, attr, v, 8, 0) : getxattr(path, attr, v, 8);
}

int vol_mark_get(const struct vol_store *s, int fd, const char *name, uint64_t *fsid)
{
	return vol_xmark_get(s, VOL_MARK, fd, name, fsid);
}

int vol_xmark_get(const struct vol_store *s, const char *attr, int fd, const char *name, uint64_t *fsid)
{
	uint8_t v[8];
	long r = vol_mark_sys(s, attr, fd, name, false, v);

	if (r < 0)
		return errno == ENOTSUP ? -EOPNOTSUPP : -errno;
	if (r != 8)
		return -EINVAL; /* not ours */
	*fsid = vol_get64(v);
	return 0;
}

int vol_mark_set(const struct vol_store *s, int fd, const char *name, uint64_t fsid)
{
	uint8_t v[8];

	vol_put64(v, fsid);
	if (vol_mark_sys(s, VOL_MARK, fd, name, true, v) != 0)
		return errno == ENOTSUP ? -EOPNOTSUPP : -errno;
	return 0;
}

int vol_mark_adopt(struct vol_obj *dir, const char *name)
{
	const struct vol_export *e = dir->exp;
	uint64_t m = 0;
	int rc;

	if (!e->marks)
		return 0;
	rc = vol_mark_get(e->store, dir->fd, name, &m);
	if (rc == -ENODATA) /* reached by name from inside: it is the volume's */
		return vol_mark_set(e->store, dir->fd, name, e->cfg.fsid) == 0 ? 0 : -EACCES;
	return rc == 0 && m == e->cfg.fsid ? 0 : -EACCES;
}

/* Close an entry's descriptors; caller holds fe->mu and fe->refs == 0. */
static void vol_fent_close(struct vol_fent *fe)
{
	if (fe->fd >= 0)
		close(fe->fd);
	if (fe->iofd >= 0)
		close(fe->iofd);
	fe->fd = fe->iofd = -1;
	fe->valid = false;
	fe->klen = 0;
}

static void vol_fent_put(struct vol_fent *fe)
{
	pthread_mutex_lock(&fe->mu);
	if (--fe->refs == 0 && !fe->valid)
		vol_fent_close(fe);
	pthread_mutex_unlock(&fe->mu);
}

static struct vol_fent *vol_fent_slot(struct vol_store *s, const uint8_t *key, size_t klen)
{
	return &s->fc[ut_hash_fnv64(key, klen) % VOL_FCACHE];
}

/* Forget the cached object with this key (it was removed). */
static void vol_fent_drop(struct vol_store *s, const uint8_t *key, size_t klen)
{
	struct vol_fent *fe = vol_fent_slot(s, key, klen);

	pthread_mutex_lock(&fe->mu);
	if (fe->valid && fe->klen == klen && !memcmp(fe->key, key, klen)) {
		fe->valid = false;
		if (fe->refs == 0)
			vol_fent_close(fe);
	}
	pthread_mutex_unlock(&fe->mu);
}

void vol_store_forget_dev(struct vol_store *s, dev_t dev)
{
	size_t i;

	for (i = 0; i < VOL_FCACHE; i++) {
		struct vol_fent *fe = &s->fc[i];
		struct stat st;

		pthread_mutex_lock(&fe->mu);
		if (fe->valid && fe->fd >= 0 && fstat(fe->fd, &st) == 0 && st.st_dev == dev) {
			fe->valid = false;
			if (fe->refs == 0)
				vol_fent_close(fe);
		}
		pthread_mutex_unlock(&fe->mu);
	}
}

static void vol_grant_free(struct vol_grant *g);

void vol_obj_cleanup(struct vol_obj *obj)
{
	vol_grant_free(obj->grant);
	obj->grant = NULL;
	if (obj->fent)
		vol_fent_put(obj->fent);
	else if (obj->fd >= 0)
		close(obj->fd);
	obj->fent = NULL;
	obj->fd = -1;
	vol_export_unref(obj->exp);
	obj->exp = NULL;
}

int vol_refresh(struct vol_obj *obj)
{
	return fstat(obj->fd, &obj->st) == 0 ? 0 : -errno;
}

int vol_obj_adopt(struct vol_export *e, int fd, struct vol_obj *out)
{
	if (fstat(fd, &out->st) != 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	out->fd = fd;
	out->exp = e;
	out->fent = NULL;
	out->grant = NULL;
	out->snap = false;
	atomic_fetch_add(&e->refs, 1);
	return 0;
}

int vol_root(struct vol_export *e, struct vol_obj *out)
{
	int fd = openat(e->root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return vol_obj_adopt(e, fd, out);
}

/* Stale if unlinked (but still held by a cache) or on another fs. */
static bool vol_gone(const struct vol_obj *o)
{
	return o->st.st_dev != o->exp->dev || o->st.st_nlink == 0;
}

int vol_fh_open(struct vol_store *s, const uint8_t *fh, size_t len, struct vol_obj *out)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	struct vol_export *e = NULL;
	uint64_t mark = 0;
	struct vol_fent *fe;
	const uint8_t *key = fh + 1;
	size_t n, klen;
	bool snap;
	int rc, fd;

	out->fd = -1;
	out->exp = NULL;
	out->fent = NULL;
	out->grant = NULL;
	out->snap = false;
	if ((rc = vol_fh_check(s, fh, len, &e)) != 0)
		return rc;
	snap = fh[0] == VOL_FH_V3;
	n = fh[1];
	klen = VOL_FH_HDR - 1 + n;
	fe = vol_fent_slot(s, key, klen);
	pthread_mutex_lock(&fe->mu);
	if (fe->valid && fe->snap == snap && fe->klen == klen && !memcmp(fe->key, key, klen)) {
		fe->refs++;
		out->fd = fe->fd;
		out->fent = fe;
		out->exp = e;
		out->snap = snap;
		e = NULL;
		pthread_mutex_unlock(&fe->mu);
		if (fstat(out->fd, &out->st) != 0 || (snap ? out->st.st_nlink == 0 || (out->exp->snap_fd < 0)
							 : vol_gone(out))) {
			vol_fent_drop(s, key, klen);
			vol_obj_cleanup(out);
			rc = -ESTALE;
		}
		goto out;
	}
	pthread_mutex_unlock(&fe->mu);
	u.fh.handle_bytes = (unsigned)n;
	u.fh.handle_type = (int)((uint32_t)fh[2] << 24 | (uint32_t)fh[3] << 16 | (uint32_t)fh[4] << 8 | fh[5]);
	memcpy(u.fh.f_handle, fh + VOL_FH_HDR, n);
	fd = open_by_handle_at(e->root_fd, &u.fh, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = (errno == ESTALE || errno == ENOENT) ? -ESTALE : -errno;
		goto out;
	}
	if ((rc = vol_obj_adopt(e, fd, out)) != 0)
		goto out;
	out->snap = snap;
	/* Containment: the MAC says who minted the handle, not where its
	 * kernel handle points; the object must carry this export's mark (a
	 * directory's read as "." below it: no /proc walk), or lie in this
	 * export's own snapshots for a snapshot handle (vol_snap.c). */
	if (snap ? !vol_snap_contained(out->exp, out)
		 : vol_gone(out) || (out->exp->marks && (vol_mark_get(s, out->fd, S_ISDIR(out->st.st_mode) ? "." : NULL,
									 &mark) != 0 || mark != out->exp->cfg.fsid))) {
		vol_obj_cleanup(out);
		rc = -ESTALE;
		goto out;
	}
	/* Cache it unless the slot is borrowed by another object. */
	pthread_mutex_lock(&fe->mu);
	if (fe->refs == 0) {
		vol_fent_close(fe);
		memcpy(fe->key, key, klen);
		fe->klen = (uint32_t)klen;
		fe->fd = out->fd;
		fe->snap = snap;
		fe->valid = true;
		fe->refs = 1;
		out->fent = fe;
	}
	pthread_mutex_unlock(&fe->mu);
out:
	vol_export_unref(e);
	return rc;
}

/* ---------- credentials ---------- */

void vol_become(const struct vol_cred *c)
{
	if (c->uid == 0 && c->gid == 0)
		return;
	syscall(SYS_setgroups, (size_t)c->ngids, c->gids);
	setfsgid(c->gid);
	setfsuid(c->uid);
}

void vol_unbecome(const struct vol_cred *c)
{
	if (c->uid == 0 && c->gid == 0)
		return;
	setfsuid(0);
	setfsgid(0);
	syscall(SYS_setgroups, (size_t)0, NULL);
}

int vol_may_set_attr(const struct vol_obj *obj, const struct vol_cred *cred)
{
	int rc = 0;

	vol_become(cred);
	if (cred->uid != 0 && obj->st.st_uid != cred->uid &&
	    syscall(SYS_faccessat2, obj->fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) != 0)
		rc = -EACCES;
	vol_unbecome(cred);
	return rc;
}

int vol_reopen(const struct vol_obj *obj, int flags)
{
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", obj->fd);
	fd = open(p, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* ---------- grants ---------- */

/* What an open was granted (vol_obj_grant). */
struct vol_grant {
	int fd;                   /* content, opened as the holder; -1: the fent's shared one */
	bool read, write;
};

static atomic_uint_fast64_t vol_grants;
static atomic_uint_fast64_t vol_grant_fds; /* grants' own descriptors */
static atomic_uint_fast64_t vol_grant_fds_max = VOL_GRANT_FDS_MAX;

uint64_t vol_grant_count(void)
{
	return atomic_load(&vol_grants);
}

void vol_grant_set_max(uint64_t fds)
{
	atomic_store(&vol_grant_fds_max, fds ? fds : VOL_GRANT_FDS_MAX);
}

static void vol_grant_free(struct vol_grant *g)
{
	if (!g)
		return;
	if (g->fd >= 0) {
		close(g->fd);
		atomic_fetch_sub(&vol_grant_fds, 1);
	}
	free(g);
	atomic_fetch_sub(&vol_grants, 1);
}

static bool vol_may(const struct vol_obj *obj, int mode)
{
	return syscall(SYS_faccessat2, obj->fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

/* An uncached object's descriptor for what g asks, opened as the caller
 * (switched): read-write, else the one access that opens; g keeps what it got. */
static void vol_grant_open(const struct vol_obj *obj, struct vol_grant *g)
{
	if (g->read && g->write && (g->fd = vol_reopen(obj, O_RDWR)) >= 0)
		return;
	if (g->read && (g->fd = vol_reopen(obj, O_RDONLY)) >= 0) {
		g->write = false;
		return;
	}
	g->read = false;
	if (g->write && (g->fd = vol_reopen(obj, O_WRONLY)) < 0)
		g->write = false;
}

int vol_obj_grant(struct vol_obj *obj, const struct vol_cred *cred, bool read, bool write)
{
	struct vol_grant *g;

	if (obj->grant)
		return -EEXIST;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	/* an uncached object's grant opens a descriptor: past the cap, none (checked per I/O) */
	if (!obj->fent && atomic_fetch_add(&vol_grant_fds, 1) >= atomic_load(&vol_grant_fds_max)) {
		atomic_fetch_sub(&vol_grant_fds, 1);
		return -EMFILE;
	}
	if (!(g = malloc(sizeof(*g)))) {
		if (!obj->fent)
			atomic_fetch_sub(&vol_grant_fds, 1);
		return -ENOMEM;
	}
	*g = (struct vol_grant){ .fd = -1, .read = read, .write = write && !obj->snap };
	vol_become(cred);
	if (obj->fent) { /* the shared descriptor, opened as root: the caller's check now */
		g->read = g->read && vol_may(obj, R_OK);
		g->write = g->write && vol_may(obj, W_OK);
	} else {
		vol_grant_open(obj, g);
	}
	vol_unbecome(cred);
	if (!obj->fent && g->fd < 0)
		atomic_fetch_sub(&vol_grant_fds, 1);
	if (!g->read && !g->write) {
		free(g);
		return -EACCES;
	}
	atomic_fetch_add(&vol_grants, 1);
	obj->grant = g;
	return 0;
}

/* A descriptor for the object's content. Cached objects share one opened
 * as root; the caller's permission is checked first as the caller (the same
 * check open() would make), unless the holder's open was granted the access
 * (vol_obj_grant). *owned says whether the caller must close it. */
int vol_iofd(struct vol_obj *obj, const struct vol_cred *cred, bool write, bool *owned)
{
	struct vol_fent *fe = obj->fent;
	const struct vol_grant *g = obj->grant;
	bool granted = g && (write ? g->write : g->read);
	int fd = -1, mode = write ? W_OK : R_OK;

	*owned = false;
	if (write && obj->snap)
		return -EROFS;
	if (granted && g->fd >= 0)
		return g->fd;
	if (fe && !granted && (cred->uid != 0 || cred->gid != 0)) {
		long ok;

		vol_become(cred);
		ok = syscall(SYS_faccessat2, obj->fd, "", mode, AT_EMPTY_PATH | AT_EACCESS);
		vol_unbecome(cred);
		if (ok != 0)
			return -errno;
	}
	if (fe) {
		pthread_mutex_lock(&fe->mu);
		if (fe->iofd < 0) {
			char p[64];

			snprintf(p, sizeof(p), "/proc/self/fd/%d", fe->fd);
			fe->iofd = fe->snap ? -1 : open(p, O_RDWR | O_CLOEXEC);
			fe->iorw = fe->iofd >= 0;
			if (fe->iofd < 0)
				fe->iofd = open(p, O_RDONLY | O_CLOEXEC);
		}
		if (fe->iofd >= 0 && (fe->iorw || !write))
			fd = fe->iofd;
		pthread_mutex_unlock(&fe->mu);
		if (fd >= 0)
			return fd;
	}
	vol_become(cred);
	fd = vol_reopen(obj, write ? O_WRONLY : O_RDONLY);
	vol_unbecome(cred);
	*owned = fd >= 0;
	return fd;
}

/* The cache key (handle bytes 1..14+n) of name in dir, for dropping it. */
void vol_drop_name(struct vol_obj *dir, const char *nm, struct vol_store *s)
{
	uint8_t key[VOL_FKEY_MAX];
	uint32_t t;
	size_t n;

	if (!s || vol_khandle(dir->fd, nm, 0, &t, key + VOL_FH_HDR - 1, &n) != 0)
		return;
	key[0] = (uint8_t)n;
	key[1] = (uint8_t)(t >> 24);
	key[2] = (uint8_t)(t >> 16);
	key[3] = (uint8_t)(t >> 8);
	key[4] = (uint8_t)t;
	vol_put64(key + 5, dir->exp->cfg.fsid);
	vol_fent_drop(s, key, VOL_FH_HDR - 1 + n);
}
