/* vol_fh: file handles (MAC, resolution), the open-file cache, switching a
 * thread's fs identity, and content descriptors; see vol.h for the contract.
 *
 * Objects are O_PATH descriptors. Handle resolution (open_by_handle_at needs
 * CAP_DAC_READ_SEARCH) runs with the process's own credentials; everything a
 * caller asks for runs after vol_become() switched this thread's fs identity.
 * Content access reopens the O_PATH descriptor through /proc/self/fd so the
 * kernel checks the caller's permission on the open.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---------- handles ---------- */

static void vol_mac(const struct vol_store *s, const uint8_t *data, size_t len, uint8_t *mac)
{
	uint8_t full[EVP_MAX_MD_SIZE];
	unsigned int flen = 0;

	HMAC(EVP_sha256(), s->key, VOL_KEY_LEN, data, len, full, &flen);
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

int vol_fh_verify(struct vol_store *s, const uint8_t *fh, size_t len)
{
	uint8_t mac[VOL_MAC_LEN];
	size_t n;

	if (len < VOL_FH_HDR + VOL_MAC_LEN || len > VOL_FH_MAX || fh[0] != 1)
		return VOL_EBADHANDLE;
	n = fh[1];
	if (len != VOL_FH_HDR + n + VOL_MAC_LEN)
		return VOL_EBADHANDLE;
	vol_mac(s, fh, VOL_FH_HDR + n, mac);
	if (CRYPTO_memcmp(mac, fh + VOL_FH_HDR + n, VOL_MAC_LEN) != 0)
		return VOL_EBADHANDLE;
	return 0;
}

int vol_fh_make(struct vol_store *s, const struct vol_obj *obj, struct vol_fh *out)
{
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	int mnt, n;
	uint32_t t;

	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(obj->fd, "", &u.fh, &mnt, AT_EMPTY_PATH) != 0)
		return -errno;
	n = (int)u.fh.handle_bytes;
	if (n > VOL_FH_MAX - VOL_FH_HDR - VOL_MAC_LEN)
		return -EOVERFLOW;
	t = (uint32_t)u.fh.handle_type;
	out->data[0] = 1;
	out->data[1] = (uint8_t)n;
	out->data[2] = (uint8_t)(t >> 24);
	out->data[3] = (uint8_t)(t >> 16);
	out->data[4] = (uint8_t)(t >> 8);
	out->data[5] = (uint8_t)t;
	for (int i = 0; i < 8; i++)
		out->data[6 + i] = (uint8_t)(obj->exp->cfg.fsid >> (56 - 8 * i));
	memcpy(out->data + VOL_FH_HDR, u.fh.f_handle, (size_t)n);
	vol_mac(s, out->data, VOL_FH_HDR + (size_t)n, out->data + VOL_FH_HDR + n);
	out->len = VOL_FH_HDR + (uint32_t)n + VOL_MAC_LEN;
	return 0;
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
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < klen; i++)
		h = (h ^ key[i]) * 1099511628211ull;
	return &s->fc[h % VOL_FCACHE];
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

void vol_obj_cleanup(struct vol_obj *obj)
{
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
	struct vol_fent *fe;
	const uint8_t *key = fh + 1;
	size_t n, klen;
	int rc, fd;

	out->fd = -1;
	out->exp = NULL;
	out->fent = NULL;
	if ((rc = vol_fh_verify(s, fh, len)) != 0)
		return rc;
	n = fh[1];
	klen = VOL_FH_HDR - 1 + n;
	e = vol_find_fsid(s, vol_get64(fh + 6));
	if (!e)
		return -ESTALE;
	fe = vol_fent_slot(s, key, klen);
	pthread_mutex_lock(&fe->mu);
	if (fe->valid && fe->klen == klen && !memcmp(fe->key, key, klen)) {
		fe->refs++;
		out->fd = fe->fd;
		out->fent = fe;
		out->exp = e;
		e = NULL;
		pthread_mutex_unlock(&fe->mu);
		if (fstat(out->fd, &out->st) != 0 || vol_gone(out)) {
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
	if (vol_gone(out)) {
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

int vol_reopen(const struct vol_obj *obj, int flags)
{
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", obj->fd);
	fd = open(p, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A descriptor for the object's content. Cached objects share one opened
 * as root; the caller's permission is checked first as the caller (the same
 * check open() would make). *owned says whether the caller must close it. */
int vol_iofd(struct vol_obj *obj, const struct vol_cred *cred, bool write, bool *owned)
{
	struct vol_fent *fe = obj->fent;
	int fd = -1, mode = write ? W_OK : R_OK;

	*owned = false;
	if (fe && (cred->uid != 0 || cred->gid != 0)) {
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
			fe->iofd = open(p, O_RDWR | O_CLOEXEC);
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
	union {
		struct file_handle fh;
		uint8_t raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	uint8_t key[VOL_FKEY_MAX];
	uint32_t t;
	int mnt, i;

	if (!s)
		return;
	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dir->fd, nm, &u.fh, &mnt, 0) != 0 ||
	    u.fh.handle_bytes > VOL_FKEY_MAX - (VOL_FH_HDR - 1))
		return;
	t = (uint32_t)u.fh.handle_type;
	key[0] = (uint8_t)u.fh.handle_bytes;
	key[1] = (uint8_t)(t >> 24);
	key[2] = (uint8_t)(t >> 16);
	key[3] = (uint8_t)(t >> 8);
	key[4] = (uint8_t)t;
	for (i = 0; i < 8; i++)
		key[5 + i] = (uint8_t)(dir->exp->cfg.fsid >> (56 - 8 * i));
	memcpy(key + VOL_FH_HDR - 1, u.fh.f_handle, u.fh.handle_bytes);
	vol_fent_drop(s, key, VOL_FH_HDR - 1 + u.fh.handle_bytes);
}
