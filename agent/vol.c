/* vol: the protocol-neutral volume store; see vol.h for the contract.
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
#include "agent/vol.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#define VOL_MAC_LEN 16
#define VOL_FH_HDR 14
#define VOL_LOCKS 64

/* Accounting that survives export-set replacement (keyed by export id). */
struct vol_acct {
	atomic_int refs;
	char id[128];
	_Atomic uint64_t used;
	_Atomic uint64_t ops[VOL_NOPS], bytes[VOL_NOPS], errors[VOL_NOPS];
	_Atomic uint64_t lat[VOL_LAT_BUCKETS];
	/* Size-changing operations on one inode are serialized so growth is
	 * computed exactly; different inodes proceed in parallel. */
	pthread_mutex_t locks[VOL_LOCKS];
	struct vol_pend {
		uint64_t ino;
		uint64_t end;      /* highest end of in-flight writes */
		int count;         /* writes in flight on this inode */
	} pend[VOL_LOCKS];
	struct qos_vol *qos;       /* limits updated in place on every set */
	uint64_t born_ns;          /* qos_now() when the counters began (the export appeared) */
};

struct vol_export {
	atomic_int refs;
	struct vol_export_cfg cfg;
	int root_fd;               /* O_RDONLY|O_DIRECTORY: mount_fd for handles */
	dev_t dev;
	ino_t ino;
	size_t nnets[VOL_MAX_RULES];
	struct api_intent_net nets[VOL_MAX_RULES][VOL_MAX_NETS]; /* host order */
	struct vol_acct *acct;
	struct vol_store *store;   /* not counted: the store outlives its exports' use */
};

struct vol_set {
	atomic_int refs;
	size_t n;
	struct vol_export *e[];
};

/* Open-file cache: direct-mapped by handle. An entry keeps the object's
 * O_PATH descriptor and, once asked for, a content descriptor opened as root
 * (O_RDWR, else O_RDONLY), so a READ or WRITE on a known handle costs no
 * open/close. Objects borrow an entry (refs); an entry is replaced or closed
 * only when nobody borrows it. A deleted object is dropped on REMOVE/RENAME
 * and at its next use (nlink 0). */
#define VOL_FCACHE 1024
#define VOL_FKEY_MAX (VOL_FH_MAX - VOL_MAC_LEN)

struct vol_fent {
	pthread_mutex_t mu;
	int refs;
	bool valid;
	uint32_t klen;
	uint8_t key[VOL_FKEY_MAX];  /* handle bytes 1..14+n: size, type, fsid, kernel handle */
	int fd;                     /* O_PATH */
	int iofd;                   /* content, -1 until needed */
	bool iorw;                  /* iofd is O_RDWR */
};

struct vol_store {
	uint8_t key[VOL_KEY_LEN];
	pthread_mutex_t mu;        /* guards cur */
	struct vol_set *cur;
	struct vol_fent *fc;       /* VOL_FCACHE entries */
	struct qos_sched *qos;
	const struct vol_tier_ops *tier;  /* cold tier hooks, or NULL */
	void *tier_arg;
};

/* ---------- refcounting ---------- */

static void vol_acct_unref(struct vol_acct *a)
{
	int i;

	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	for (i = 0; i < VOL_LOCKS; i++)
		pthread_mutex_destroy(&a->locks[i]);
	qos_vol_unref(a->qos);
	free(a);
}

void vol_export_unref(struct vol_export *e)
{
	if (!e || atomic_fetch_sub(&e->refs, 1) != 1)
		return;
	if (e->root_fd >= 0)
		close(e->root_fd);
	vol_acct_unref(e->acct);
	free(e);
}

static void vol_set_unref(struct vol_set *set)
{
	size_t i;

	if (!set || atomic_fetch_sub(&set->refs, 1) != 1)
		return;
	for (i = 0; i < set->n; i++)
		vol_export_unref(set->e[i]);
	free(set);
}

static struct vol_set *vol_set_get(struct vol_store *s)
{
	struct vol_set *set;

	pthread_mutex_lock(&s->mu);
	set = s->cur;
	if (set)
		atomic_fetch_add(&set->refs, 1);
	pthread_mutex_unlock(&s->mu);
	return set;
}

/* ---------- store ---------- */

int vol_store_new(const uint8_t *key, struct vol_store **out)
{
	struct vol_store *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	memcpy(s->key, key, VOL_KEY_LEN);
	pthread_mutex_init(&s->mu, NULL);
	s->cur = calloc(1, sizeof(struct vol_set));
	s->fc = calloc(VOL_FCACHE, sizeof(*s->fc));
	if (!s->cur || !s->fc || qos_sched_new(NULL, &s->qos) != 0) {
		qos_sched_free(s->qos);
		free(s->cur);
		free(s->fc);
		free(s);
		return -ENOMEM;
	}
	for (int i = 0; i < VOL_FCACHE; i++) {
		pthread_mutex_init(&s->fc[i].mu, NULL);
		s->fc[i].fd = s->fc[i].iofd = -1;
	}
	atomic_init(&s->cur->refs, 1);
	*out = s;
	return 0;
}

void vol_store_free(struct vol_store *s)
{
	if (!s)
		return;
	qos_sched_stop(s->qos);
	vol_set_unref(s->cur);
	qos_sched_free(s->qos);
	for (int i = 0; i < VOL_FCACHE; i++) {
		if (s->fc[i].fd >= 0)
			close(s->fc[i].fd);
		if (s->fc[i].iofd >= 0)
			close(s->fc[i].iofd);
		pthread_mutex_destroy(&s->fc[i].mu);
	}
	free(s->fc);
	pthread_mutex_destroy(&s->mu);
	OPENSSL_cleanse(s->key, sizeof(s->key));
	free(s);
}

void vol_store_set_tier(struct vol_store *s, const struct vol_tier_ops *ops, void *arg)
{
	s->tier = ops;
	s->tier_arg = arg;
}

/* Sum the sizes of regular files below dirfd (which this closes), staying
 * on one file system and never following symlinks. */
static uint64_t vol_scan(int dirfd, dev_t dev, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	uint64_t sum = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev)
			continue;
		if (S_ISREG(st.st_mode)) {
			sum += (uint64_t)st.st_size / (st.st_nlink ? st.st_nlink : 1);
		} else if (S_ISDIR(st.st_mode) && depth < 512) {
			sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sum += vol_scan(sub, dev, depth + 1);
		}
	}
	closedir(d);
	return sum;
}

static struct vol_acct *vol_acct_new(struct vol_store *s, const struct vol_export_cfg *cfg)
{
	struct vol_acct *a = calloc(1, sizeof(*a));
	int i;

	if (!a)
		return NULL;
	if (qos_vol_new(s->qos, &a->qos) != 0) {
		free(a);
		return NULL;
	}
	atomic_init(&a->refs, 1);
	a->born_ns = qos_now(s->qos);
	snprintf(a->id, sizeof(a->id), "%s", cfg->id);
	for (i = 0; i < VOL_LOCKS; i++)
		pthread_mutex_init(&a->locks[i], NULL);
	atomic_init(&a->used, 0);
	return a;
}

static int vol_export_build(struct vol_store *s, const struct vol_export_cfg *cfg,
			    const struct vol_set *old, struct vol_export **out)
{
	struct vol_export *e = calloc(1, sizeof(*e));
	struct stat st;
	size_t i;
	int rc = 0;

	if (!e)
		return -ENOMEM;
	atomic_init(&e->refs, 1);
	e->cfg = *cfg;
	e->root_fd = -1;
	e->store = s;
	if (cfg->path[0] != '/' || cfg->nrules > VOL_MAX_RULES || !cfg->id[0]) {
		rc = -EINVAL;
		goto out;
	}
	for (i = 0; i < cfg->nrules; i++) {
		/* the contract's parser and limits (api_intent.h) */
		if (api_intent_clients_parse(cfg->rules[i].clients, "allowedClients", e->nets[i], &e->nnets[i], NULL) != AQ_OK) {
			rc = -EINVAL;
			goto out;
		}
	}
	e->root_fd = open(cfg->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e->root_fd < 0 || fstat(e->root_fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	for (i = 0; old && i < old->n; i++) {
		if (strcmp(old->e[i]->cfg.id, cfg->id) == 0) {
			e->acct = old->e[i]->acct;
			atomic_fetch_add(&e->acct->refs, 1);
			break;
		}
	}
	if (!e->acct) {
		int dfd;

		if (!(e->acct = vol_acct_new(s, cfg))) {
			rc = -ENOMEM;
			goto out;
		}
		dfd = openat(e->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0)
			atomic_store(&e->acct->used, vol_scan(dfd, e->dev, 0));
	}
	*out = e;
	e = NULL;
out:
	vol_export_unref(e);
	return rc;
}

int vol_store_set(struct vol_store *s, const struct vol_export_cfg *cfg, size_t n)
{
	struct vol_set *set = NULL, *old = NULL;
	size_t i, j;
	int rc = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(cfg[i].id, cfg[j].id) || cfg[i].fsid == cfg[j].fsid ||
			    !strcmp(cfg[i].path, cfg[j].path))
				return -EINVAL;
	set = calloc(1, sizeof(*set) + n * sizeof(set->e[0]));
	if (!set)
		return -ENOMEM;
	atomic_init(&set->refs, 1);
	old = vol_set_get(s);
	for (i = 0; i < n; i++) {
		if ((rc = vol_export_build(s, &cfg[i], old, &set->e[i])) != 0)
			goto out;
		set->n++;
	}
	/* QoS limits change in place, once the new set is certain: a volume
	 * that keeps its id keeps its buckets and parked requests. */
	for (i = 0; i < set->n; i++)
		qos_vol_set(set->e[i]->acct->qos, &set->e[i]->cfg.qos, qos_now(s->qos));
	pthread_mutex_lock(&s->mu);
	vol_set_unref(s->cur);
	s->cur = set;
	set = NULL;
	pthread_mutex_unlock(&s->mu);
out:
	vol_set_unref(old);
	vol_set_unref(set);
	return rc;
}

static struct vol_export *vol_find(struct vol_store *s, uint64_t fsid, const char *path,
				   size_t plen, size_t idx, int how)
{
	struct vol_set *set = vol_set_get(s);
	struct vol_export *e = NULL;
	size_t i;

	for (i = 0; set && i < set->n; i++) {
		struct vol_export *x = set->e[i];

		if ((how == 0 && x->cfg.fsid == fsid) ||
		    (how == 1 && strlen(x->cfg.path) == plen && !memcmp(x->cfg.path, path, plen)) ||
		    (how == 2 && i == idx)) {
			e = x;
			atomic_fetch_add(&e->refs, 1);
			break;
		}
	}
	vol_set_unref(set);
	return e;
}

struct vol_export *vol_export_by_path(struct vol_store *s, const char *path, size_t len)
{
	/* Accept a trailing slash: "/share/" names "/share". */
	while (len > 1 && path[len - 1] == '/')
		len--;
	return vol_find(s, 0, path, len, 0, 1);
}

struct vol_export *vol_export_at(struct vol_store *s, size_t i)
{
	return vol_find(s, 0, NULL, 0, i, 2);
}

const struct vol_export_cfg *vol_export_config(const struct vol_export *e)
{
	return &e->cfg;
}

uint64_t vol_export_fsid(const struct vol_export *e)
{
	return e->cfg.fsid;
}

int vol_store_stats(struct vol_store *s, const char *id, struct vol_stats *out)
{
	struct vol_set *set = vol_set_get(s);
	int rc = -ENOENT;
	size_t i, k;

	memset(out, 0, sizeof(*out));
	for (i = 0; set && i < set->n; i++) {
		struct vol_acct *a = set->e[i]->acct;

		if (strcmp(set->e[i]->cfg.id, id))
			continue;
		for (k = 0; k < VOL_NOPS; k++) {
			out->ops[k] = atomic_load(&a->ops[k]);
			out->bytes[k] = atomic_load(&a->bytes[k]);
			out->errors[k] = atomic_load(&a->errors[k]);
		}
		for (k = 0; k < VOL_LAT_BUCKETS; k++)
			out->lat_us_hist[k] = atomic_load(&a->lat[k]);
		out->used = atomic_load(&a->used);
		out->capacity = set->e[i]->cfg.capacity;
		out->age_ms = (qos_now(s->qos) - a->born_ns) / 1000000u;
		qos_vol_stats(a->qos, qos_now(s->qos), &out->qos);
		rc = 0;
		break;
	}
	vol_set_unref(set);
	return rc;
}

void vol_export_record(struct vol_export *e, unsigned op, uint64_t bytes, uint64_t ns, bool failed)
{
	uint64_t us = ns / 1000;
	unsigned b = 0;

	if (!e || op >= VOL_NOPS)
		return;
	while (b < VOL_LAT_BUCKETS - 1 && us >= (1ull << b))
		b++;
	atomic_fetch_add_explicit(&e->acct->ops[op], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->acct->bytes[op], bytes, memory_order_relaxed);
	if (failed)
		atomic_fetch_add_explicit(&e->acct->errors[op], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&e->acct->lat[b], 1, memory_order_relaxed);
}

enum vol_access vol_authorize(const struct vol_export *e, const struct sockaddr *client, enum vol_proto proto,
			      const struct vol_cred *in, struct vol_cred *out)
{
	uint32_t a;
	size_t i, k;

	*out = *in;
	if (client->sa_family == AF_INET) {
		a = ntohl(((const struct sockaddr_in *)(const void *)client)->sin_addr.s_addr);
	} else if (client->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)client;
		const uint8_t *b = s6->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			a = 0x7f000001u;
		else if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			a = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
		else
			return VOL_ACCESS_NONE;
	} else {
		return VOL_ACCESS_NONE;
	}
	for (i = 0; i < e->cfg.nrules; i++) {
		const struct vol_rule *r = &e->cfg.rules[i];

		if (r->not_for & proto)
			continue; /* e.g. nfsv3: false */
		for (k = 0; k < e->nnets[i]; k++) {
			if ((a & e->nets[i][k].mask) != e->nets[i][k].addr)
				continue;
			if (r->squash == VOL_SQUASH_ALL || (r->squash == VOL_SQUASH_ROOT && in->uid == 0)) {
				out->uid = r->anon_uid;
				out->gid = r->anon_gid;
				out->ngids = 0;
			}
			return r->access;
		}
	}
	return VOL_ACCESS_NONE;
}

/* ---------- QoS ---------- */

static uint64_t vol_get64(const uint8_t *p);

enum qos_verdict vol_admit(struct vol_store *s, const uint8_t *fh, size_t len, uint64_t client,
			   enum qos_kind kind, uint64_t bytes, struct qos_item *it)
{
	struct vol_export *e;
	enum qos_verdict v;

	if (vol_fh_verify(s, fh, len) != 0)
		return QOS_ADMIT;
	if (!(e = vol_find(s, vol_get64(fh + 6), NULL, 0, 0, 0)))
		return QOS_ADMIT;
	v = qos_submit(e->acct->qos, client, kind, bytes, it, qos_now(s->qos));
	vol_export_unref(e);
	return v;
}

int vol_store_qos_start(struct vol_store *s, qos_release_fn cb, void *arg)
{
	return qos_sched_start(s->qos, cb, arg);
}

void vol_store_qos_stop(struct vol_store *s)
{
	qos_sched_stop(s->qos);
}

/* ---------- handles ---------- */

static void vol_mac(const struct vol_store *s, const uint8_t *data, size_t len, uint8_t *mac)
{
	uint8_t full[EVP_MAX_MD_SIZE];
	unsigned int flen = 0;

	HMAC(EVP_sha256(), s->key, VOL_KEY_LEN, data, len, full, &flen);
	memcpy(mac, full, VOL_MAC_LEN);
}

static uint64_t vol_get64(const uint8_t *p)
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

/* Adopt fd as an object of e (takes a new reference on e). */
static int vol_obj_adopt(struct vol_export *e, int fd, struct vol_obj *out)
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
	e = vol_find(s, vol_get64(fh + 6), NULL, 0, 0, 0);
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

static void vol_become(const struct vol_cred *c)
{
	if (c->uid == 0 && c->gid == 0)
		return;
	syscall(SYS_setgroups, (size_t)c->ngids, c->gids);
	setfsgid(c->gid);
	setfsuid(c->uid);
}

static void vol_unbecome(const struct vol_cred *c)
{
	if (c->uid == 0 && c->gid == 0)
		return;
	setfsuid(0);
	setfsgid(0);
	syscall(SYS_setgroups, (size_t)0, NULL);
}

/* Open the object's content with flags, as the current fs identity. */
static int vol_reopen(const struct vol_obj *obj, int flags)
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
static int vol_iofd(struct vol_obj *obj, const struct vol_cred *cred, bool write, bool *owned)
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
static void vol_drop_name(struct vol_obj *dir, const char *nm, struct vol_store *s)
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

static int vol_check_name(const char *name, size_t nlen)
{
	if (nlen == 0)
		return -EINVAL;
	if (nlen > VOL_NAME_MAX)
		return -ENAMETOOLONG;
	if (memchr(name, '/', nlen) || memchr(name, '\0', nlen))
		return -EINVAL;
	return 0;
}

static bool vol_is_root(const struct vol_obj *o)
{
	return o->st.st_ino == o->exp->ino && o->st.st_dev == o->exp->dev;
}

/* Copy a checked name into a C string. */
static int vol_name(const char *name, size_t nlen, char *buf)
{
	int rc = vol_check_name(name, nlen);

	if (rc)
		return rc;
	memcpy(buf, name, nlen);
	buf[nlen] = '\0';
	return 0;
}

static int vol_lookup_nocred(struct vol_obj *dir, const char *nm, struct vol_obj *out)
{
	int fd;

	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if (!strcmp(nm, "..") && vol_is_root(dir))
		nm = ".";
	fd = openat(dir->fd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return vol_obj_adopt(dir->exp, fd, out);
}

int vol_lookup(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	       struct vol_obj *out)
{
	char nm[VOL_NAME_MAX + 1];
	int rc;

	out->fd = -1;
	out->exp = NULL;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(name, nlen, nm)) != 0)
		return rc;
	vol_become(cred);
	rc = vol_lookup_nocred(dir, nm, out);
	vol_unbecome(cred);
	return rc;
}

int vol_access(struct vol_obj *obj, const struct vol_cred *cred, int mask, int *allowed)
{
	static const int bits[] = {R_OK, W_OK, X_OK};
	size_t i;

	*allowed = 0;
	vol_become(cred);
	for (i = 0; i < 3; i++) {
		if (!(mask & bits[i]))
			continue;
		if (syscall(SYS_faccessat2, obj->fd, "", bits[i], AT_EMPTY_PATH | AT_EACCESS) == 0)
			*allowed |= bits[i];
	}
	vol_unbecome(cred);
	return 0;
}

static pthread_mutex_t *vol_lock_of(struct vol_obj *obj)
{
	return &obj->exp->acct->locks[obj->st.st_ino % VOL_LOCKS];
}

/* Reserve growth bytes of capacity (lock-free, exact). */
static int vol_reserve(struct vol_export *e, uint64_t growth)
{
	uint64_t cur = atomic_load(&e->acct->used);

	do {
		if (growth > e->cfg.capacity || cur > e->cfg.capacity - growth)
			return -EDQUOT;
	} while (!atomic_compare_exchange_weak(&e->acct->used, &cur, cur + growth));
	return 0;
}

static void vol_adjust(struct vol_export *e, int64_t delta)
{
	if (delta >= 0) {
		atomic_fetch_add(&e->acct->used, (uint64_t)delta);
	} else {
		uint64_t cur = atomic_load(&e->acct->used), nv;

		do {
			nv = cur > (uint64_t)-delta ? cur + (uint64_t)delta : 0;
		} while (!atomic_compare_exchange_weak(&e->acct->used, &cur, nv));
	}
}

/* Truncate under the inode lock, charging or refunding capacity. */
static int vol_truncate(struct vol_obj *obj, uint64_t size)
{
	const struct vol_tier_ops *tier = obj->exp->store->tier;
	bool tiered = false;
	pthread_mutex_t *mu = vol_lock_of(obj);
	struct stat st;
	int fd, rc = 0;

	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (size > INT64_MAX)
		return -EFBIG;
	fd = vol_reopen(obj, O_WRONLY);
	if (fd < 0)
		return fd;
	if (tier && fstat(fd, &st) == 0) {
		if ((rc = tier->truncate(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &st, size)) != 0) {
			close(fd);
			return rc;
		}
		tiered = true;
	}
	pthread_mutex_lock(mu);
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (size > (uint64_t)st.st_size && (rc = vol_reserve(obj->exp, size - (uint64_t)st.st_size)) != 0)
		goto out;
	if (ftruncate(fd, (off_t)size) != 0) {
		rc = -errno;
		if (size > (uint64_t)st.st_size)
			vol_adjust(obj->exp, -(int64_t)(size - (uint64_t)st.st_size));
		goto out;
	}
	if (size < (uint64_t)st.st_size)
		vol_adjust(obj->exp, -(int64_t)((uint64_t)st.st_size - size));
out:
	pthread_mutex_unlock(mu);
	if (tiered)
		tier->truncate_end(obj->exp->store->tier_arg, obj->exp->cfg.fsid, &st);
	close(fd);
	return rc;
}

static int vol_setattr_nocred(struct vol_obj *obj, const struct vol_sattr *sa)
{
	char p[64];
	int rc = 0;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", obj->fd);
	if (sa->set_size && (rc = vol_truncate(obj, sa->size)) != 0)
		return rc;
	if ((sa->set_uid || sa->set_gid) &&
	    fchownat(obj->fd, "", sa->set_uid ? sa->uid : (uid_t)-1, sa->set_gid ? sa->gid : (gid_t)-1,
		     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (sa->set_mode && !S_ISLNK(obj->st.st_mode) && chmod(p, sa->mode & 07777) != 0)
		return -errno;
	if ((sa->atime_how || sa->mtime_how) && !S_ISLNK(obj->st.st_mode)) {
		struct timespec ts[2];

		ts[0] = sa->atime;
		ts[1] = sa->mtime;
		if (sa->atime_how != 2)
			ts[0].tv_nsec = sa->atime_how == 1 ? UTIME_NOW : UTIME_OMIT;
		if (sa->mtime_how != 2)
			ts[1].tv_nsec = sa->mtime_how == 1 ? UTIME_NOW : UTIME_OMIT;
		if (utimensat(AT_FDCWD, p, ts, 0) != 0)
			return -errno;
	}
	return 0;
}

int vol_setattr(struct vol_obj *obj, const struct vol_cred *cred, const struct vol_sattr *sa)
{
	int rc;

	vol_become(cred);
	rc = vol_setattr_nocred(obj, sa);
	vol_unbecome(cred);
	if (rc == 0)
		rc = vol_refresh(obj);
	return rc;
}

int vol_readlink(struct vol_obj *obj, const struct vol_cred *cred, char *buf, size_t cap, size_t *len)
{
	ssize_t n;

	*len = 0;
	if (!S_ISLNK(obj->st.st_mode))
		return -EINVAL;
	vol_become(cred);
	n = readlinkat(obj->fd, "", buf, cap);
	vol_unbecome(cred);
	if (n < 0)
		return -errno;
	*len = (size_t)n;
	return 0;
}

static int read_at(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
		   size_t *got, bool *eof, void **swap)
{
	ssize_t n = 0;
	bool owned = false;
	int fd, rc = 0;

	*got = 0;
	*eof = false;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	fd = vol_iofd(obj, cred, false, &owned);
	if (fd < 0)
		return fd;
	if (obj->exp->store->tier && fstat(fd, &obj->st) == 0) {
		const struct vol_store *s = obj->exp->store;
		uint64_t size = (uint64_t)obj->st.st_size;
		size_t want = off >= size ? 0 : (size - off < count ? (size_t)(size - off) : count);
		size_t g = 0;

		rc = want ? s->tier->read(s->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, buf, want, &g, swap)
			  : 1;
		if (rc <= 0) {
			if (rc == 0) {
				*got = g;
				*eof = off + g >= size;
			}
			goto out;
		}
		rc = 0;
	}
	while ((size_t)n < count) {
		ssize_t k = pread(fd, (char *)buf + n, count - (size_t)n, (off_t)(off + (uint64_t)n));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			goto out;
		}
		if (k == 0)
			break;
		n += k;
	}
	*got = (size_t)n;
	if (fstat(fd, &obj->st) == 0)
		*eof = off + (uint64_t)n >= (uint64_t)obj->st.st_size;
out:
	if (owned)
		close(fd);
	return rc;
}

int vol_read(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void *buf, size_t count,
	     size_t *got, bool *eof)
{
	return read_at(obj, cred, off, buf, count, got, eof, NULL);
}

int vol_read_swap(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, void **buf, size_t count,
		  size_t *got, bool *eof)
{
	return read_at(obj, cred, off, *buf, count, got, eof, buf);
}

int vol_read_fd(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, size_t count,
		int *fd, size_t *n, bool *eof, bool *owned)
{
	uint64_t size;
	int rc;

	*fd = -1;
	*n = 0;
	*eof = false;
	*owned = false;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	*fd = vol_iofd(obj, cred, false, owned);
	if (*fd < 0) {
		rc = *fd;
		*fd = -1;
		return rc;
	}
	/* obj->st was read when the handle was resolved, moments ago. */
	size = (uint64_t)obj->st.st_size;
	*n = off >= size ? 0 : (size - off < count ? (size_t)(size - off) : count);
	*eof = off + *n >= size;
	if (*n && obj->exp->store->tier &&
	    (rc = obj->exp->store->tier->cold(obj->exp->store->tier_arg, obj->exp->cfg.fsid, &obj->st, off, *n)) != 0) {
		if (*owned)
			close(*fd);
		*fd = -1;
		*owned = false;
		*n = 0;
		return rc > 0 ? VOL_ECOLD : rc;
	}
	return 0;
}

/* Extending writes: growth is charged exactly against the larger of the
 * file size and the end of writes to the same inode still in flight
 * (struct vol_pend, one per lock stripe), so concurrent sequential writes
 * need the stripe lock only around the bookkeeping, not around the I/O.
 * Two inodes in flight on one stripe: the second holds the lock across its
 * write instead. */
int vol_write(struct vol_obj *obj, const struct vol_cred *cred, uint64_t off, const void *data,
	      size_t len, int stable, int *committed)
{
	const struct vol_tier_ops *tier;
	pthread_mutex_t *mu = NULL;
	struct vol_pend *pd = NULL;
	uint64_t end = off + len, reserved = 0, base = 0;
	bool held = false, pending = false, owned = false;
	size_t done = 0;
	struct stat st;
	int fd, rc = 0;

	*committed = stable;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if (!S_ISREG(obj->st.st_mode))
		return -EINVAL;
	if (end < off || end > INT64_MAX)
		return -EFBIG;
	fd = vol_iofd(obj, cred, true, &owned);
	if (fd < 0)
		return fd;
	tier = obj->exp->store->tier;
	if (tier && len && (rc = tier->write_begin(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, len)) != 0)
		goto out;
	/* obj->st is fresh from resolving the handle; an extending write
	 * re-reads the size under the lock. */
	if (end > (uint64_t)obj->st.st_size) {
		size_t i = obj->st.st_ino % VOL_LOCKS;

		mu = &obj->exp->acct->locks[i];
		pd = &obj->exp->acct->pend[i];
		pthread_mutex_lock(mu);
		if (fstat(fd, &st) != 0) {
			rc = -errno;
			pthread_mutex_unlock(mu);
			mu = NULL;
			goto out_end;
		}
		base = (uint64_t)st.st_size;
		if (pd->count && pd->ino == st.st_ino && pd->end > base)
			base = pd->end;
		held = pd->count && pd->ino != st.st_ino;
		reserved = end > base ? end - base : 0;
		if (reserved && (rc = vol_reserve(obj->exp, reserved)) != 0) {
			pthread_mutex_unlock(mu);
			mu = NULL;
			goto out_end;
		}
		if (!held) {
			pd->ino = st.st_ino;
			pd->count++;
			if (end > pd->end)
				pd->end = end;
			pending = true;
			pthread_mutex_unlock(mu);
		}
	}
	while (done < len) {
		ssize_t k = pwrite(fd, (const char *)data + done, len - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = k < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)k;
	}
	if (tier && len)
		tier->write_end(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, len);
	if (mu) {
		if (pending)
			pthread_mutex_lock(mu);
		/* A short write refunds what it did not grow, unless other writes
		 * to the file are in flight (then the charge stays: conservative). */
		if (reserved && done < len && (!pending || pd->count == 1)) {
			uint64_t got = off + done > base ? off + done - base : 0;

			vol_adjust(obj->exp, -(int64_t)(reserved - (got < reserved ? got : reserved)));
		}
		if (pending && --pd->count == 0)
			pd->end = 0;
		pthread_mutex_unlock(mu);
	}
	if (rc == 0 && stable == 1 && fdatasync(fd) != 0)
		rc = -errno;
	if (rc == 0 && stable == 2 && fsync(fd) != 0)
		rc = -errno;
	goto out;
out_end:
	if (tier && len)
		tier->write_end(obj->exp->store->tier_arg, obj->exp->cfg.fsid, fd, &obj->st, off, len);
out:
	fstat(fd, &obj->st);
	if (owned)
		close(fd);
	return rc;
}

int vol_commit(struct vol_obj *obj, const struct vol_cred *cred)
{
	int fd, rc = 0;

	if (!S_ISREG(obj->st.st_mode))
		return S_ISDIR(obj->st.st_mode) ? -EISDIR : -EINVAL;
	static const struct vol_cred as_root = {0, 0, 0, {0}};
	bool owned = false;

	(void)cred; /* fsync needs no access right */
	fd = vol_iofd(obj, &as_root, false, &owned);
	if (fd < 0)
		return fd;
	if (fsync(fd) != 0)
		rc = -errno;
	if (owned)
		close(fd);
	return rc;
}

static void vol_put_verf(const uint8_t *v, struct timespec ts[2])
{
	uint32_t a = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
	uint32_t m = (uint32_t)v[4] << 24 | (uint32_t)v[5] << 16 | (uint32_t)v[6] << 8 | v[7];

	/* Like Linux nfsd: the 8 verifier bytes live in atime/mtime seconds,
	 * masked to 31 bits so they stay valid times. */
	ts[0].tv_sec = a & 0x7fffffff;
	ts[0].tv_nsec = 0;
	ts[1].tv_sec = m & 0x7fffffff;
	ts[1].tv_nsec = 0;
}

int vol_create(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	       bool guarded, const uint8_t *excl_verf, const struct vol_sattr *sa,
	       struct vol_obj *out)
{
	char nm[VOL_NAME_MAX + 1];
	int fd = -1, rc, flags = O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
	mode_t mode = sa && sa->set_mode ? (mode_t)(sa->mode & 07777) : 0644;
	struct timespec ts[2];

	out->fd = -1;
	out->exp = NULL;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(name, nlen, nm)) != 0)
		return rc;
	if (!strcmp(nm, ".") || !strcmp(nm, ".."))
		return -EEXIST;
	if (guarded || excl_verf)
		flags |= O_EXCL;
	vol_become(cred);
	fd = openat(dir->fd, nm, flags, excl_verf ? 0600 : mode);
	if (fd < 0 && errno == EEXIST && excl_verf) {
		/* A retried EXCLUSIVE create: same verifier means success. */
		struct stat st;

		vol_put_verf(excl_verf, ts);
		if (fstatat(dir->fd, nm, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_atim.tv_sec == ts[0].tv_sec && st.st_mtim.tv_sec == ts[1].tv_sec)
			rc = vol_lookup_nocred(dir, nm, out);
		else
			rc = -EEXIST;
		goto out;
	}
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (excl_verf) {
		vol_put_verf(excl_verf, ts);
		if (futimens(fd, ts) != 0) {
			rc = -errno;
			goto out;
		}
	}
	rc = vol_lookup_nocred(dir, nm, out);
	if (rc == 0 && sa && !excl_verf) {
		struct vol_sattr rest = *sa;

		/* openat applied the process umask; NFS clients apply their own,
		 * so set the mode they asked for exactly. */
		if (rest.set_size && rest.size == (uint64_t)out->st.st_size)
			rest.set_size = false;
		rc = vol_setattr_nocred(out, &rest);
		if (rc == 0)
			rc = vol_refresh(out);
	}
out:
	vol_unbecome(cred);
	if (fd >= 0)
		close(fd);
	if (rc)
		vol_obj_cleanup(out);
	return rc;
}

static int vol_apply_owner(struct vol_obj *o, const struct vol_sattr *sa)
{
	struct vol_sattr rest;

	if (!sa)
		return 0;
	rest = *sa; /* mode again: mkdirat applied the umask */
	rest.set_size = false;
	if (vol_setattr_nocred(o, &rest) == 0)
		return vol_refresh(o);
	return 0; /* the object exists; attribute failure is not fatal */
}

int vol_mkdir(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
	      const struct vol_sattr *sa, struct vol_obj *out)
{
	char nm[VOL_NAME_MAX + 1];
	int rc;

	out->fd = -1;
	out->exp = NULL;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(name, nlen, nm)) != 0)
		return rc;
	if (!strcmp(nm, ".") || !strcmp(nm, ".."))
		return -EEXIST;
	vol_become(cred);
	if (mkdirat(dir->fd, nm, sa && sa->set_mode ? (mode_t)(sa->mode & 07777) : 0755) != 0)
		rc = -errno;
	else if ((rc = vol_lookup_nocred(dir, nm, out)) == 0)
		rc = vol_apply_owner(out, sa);
	vol_unbecome(cred);
	return rc;
}

int vol_symlink(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen,
		const char *target, size_t tlen, const struct vol_sattr *sa, struct vol_obj *out)
{
	char nm[VOL_NAME_MAX + 1];
	char *t = NULL;
	int rc;

	out->fd = -1;
	out->exp = NULL;
	(void)sa;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(name, nlen, nm)) != 0)
		return rc;
	if (tlen == 0 || tlen >= PATH_MAX || memchr(target, '\0', tlen))
		return tlen >= PATH_MAX ? -ENAMETOOLONG : -EINVAL;
	if (!(t = malloc(tlen + 1)))
		return -ENOMEM;
	memcpy(t, target, tlen);
	t[tlen] = '\0';
	vol_become(cred);
	if (symlinkat(t, dir->fd, nm) != 0)
		rc = -errno;
	else
		rc = vol_lookup_nocred(dir, nm, out);
	vol_unbecome(cred);
	free(t);
	return rc;
}

/* Unlink nm (dir or not) from dir, refunding capacity of a last link. */
static int vol_unlink_common(struct vol_obj *dir, const struct vol_cred *cred, const char *name,
			     size_t nlen, bool isdir)
{
	char nm[VOL_NAME_MAX + 1];
	struct stat st;
	int rc;

	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(name, nlen, nm)) != 0)
		return rc;
	if (!strcmp(nm, "."))
		return -EINVAL;
	if (!strcmp(nm, ".."))
		return isdir ? -ENOTEMPTY : -EISDIR;
	vol_become(cred);
	if (fstatat(dir->fd, nm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		rc = -errno;
	} else if (!isdir && S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
	} else if (isdir && !S_ISDIR(st.st_mode)) {
		rc = -ENOTDIR;
	} else {
		/* Let the open-file cache release the object with its name. */
		vol_drop_name(dir, nm, dir->exp->store);
		if (unlinkat(dir->fd, nm, isdir ? AT_REMOVEDIR : 0) != 0)
			rc = -errno;
		else if (S_ISREG(st.st_mode) && st.st_nlink == 1)
			vol_adjust(dir->exp, -(int64_t)st.st_size);
	}
	vol_unbecome(cred);
	if (rc == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && dir->exp->store->tier)
		dir->exp->store->tier->unlinked(dir->exp->store->tier_arg, dir->exp->cfg.fsid, &st);
	return rc;
}

int vol_remove(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen)
{
	return vol_unlink_common(dir, cred, name, nlen, false);
}

int vol_rmdir(struct vol_obj *dir, const struct vol_cred *cred, const char *name, size_t nlen)
{
	return vol_unlink_common(dir, cred, name, nlen, true);
}

int vol_rename(struct vol_obj *fdir, const char *fname, size_t flen, struct vol_obj *tdir,
	       const char *tname, size_t tlen, const struct vol_cred *cred)
{
	char f[VOL_NAME_MAX + 1], t[VOL_NAME_MAX + 1];
	struct stat st;
	bool had = false, gone = false;
	int rc;

	if (fdir->exp->acct != tdir->exp->acct)
		return -EXDEV;
	if (!S_ISDIR(fdir->st.st_mode) || !S_ISDIR(tdir->st.st_mode))
		return -ENOTDIR;
	if ((rc = vol_name(fname, flen, f)) != 0 || (rc = vol_name(tname, tlen, t)) != 0)
		return rc;
	if (!strcmp(f, ".") || !strcmp(f, "..") || !strcmp(t, ".") || !strcmp(t, ".."))
		return -EINVAL;
	vol_become(cred);
	had = fstatat(tdir->fd, t, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (had)
		vol_drop_name(tdir, t, tdir->exp->store);
	if (renameat(fdir->fd, f, tdir->fd, t) != 0)
		rc = -errno;
	else if (had && S_ISREG(st.st_mode) && st.st_nlink == 1) {
		struct stat now;

		/* Unless source and target were the same file. */
		if (fstatat(tdir->fd, t, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st.st_ino) {
			vol_adjust(tdir->exp, -(int64_t)st.st_size);
			gone = true;
		}
	}
	vol_unbecome(cred);
	if (gone && tdir->exp->store->tier)
		tdir->exp->store->tier->unlinked(tdir->exp->store->tier_arg, tdir->exp->cfg.fsid, &st);
	return rc;
}

int vol_link(struct vol_obj *obj, struct vol_obj *dir, const char *name, size_t nlen,
	     const struct vol_cred *cred)
{
	char nm[VOL_NAME_MAX + 1];
	int rc;

	if (obj->exp->acct != dir->exp->acct)
		return -EXDEV;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if (S_ISDIR(obj->st.st_mode))
		return -EISDIR;
	if ((rc = vol_name(name, nlen, nm)) != 0)
		return rc;
	vol_become(cred);
	if (linkat(obj->fd, "", dir->fd, nm, AT_EMPTY_PATH) != 0)
		rc = -errno;
	vol_unbecome(cred);
	if (rc == 0)
		vol_refresh(obj);
	return rc;
}

struct vol_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int vol_readdir(struct vol_obj *dir, const struct vol_cred *cred, uint64_t cookie,
		vol_dirent_cb cb, void *arg, bool *eof)
{
	union {
		uint8_t b[16384];
		uint64_t align;
	} buf;
	int fd, rc = 0;

	*eof = false;
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	vol_become(cred);
	fd = vol_reopen(dir, O_RDONLY | O_DIRECTORY);
	vol_unbecome(cred);
	if (fd < 0)
		return fd;
	if (cookie && lseek(fd, (off_t)cookie, SEEK_SET) == (off_t)-1) {
		rc = -EINVAL;
		goto out;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf.b, sizeof(buf.b));
		long pos = 0;

		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0) {
			*eof = true;
			goto out;
		}
		while (pos < n) {
			struct vol_dirent64 *d = (struct vol_dirent64 *)(void *)(buf.b + pos);
			size_t nl = strlen(d->d_name);
			uint64_t ino = d->d_ino;

			pos += d->d_reclen;
			if (!strcmp(d->d_name, "..") && vol_is_root(dir))
				ino = dir->st.st_ino;
			if (cb(arg, d->d_name, nl, ino, (uint64_t)d->d_off))
				goto out;
		}
	}
out:
	close(fd);
	return rc;
}

int vol_fsstat(struct vol_obj *obj, struct vol_fsstat *out)
{
	struct statvfs sv;
	uint64_t used = atomic_load(&obj->exp->acct->used), cap = obj->exp->cfg.capacity;

	memset(out, 0, sizeof(*out));
	out->tbytes = cap;
	out->fbytes = out->abytes = used < cap ? cap - used : 0;
	if (fstatvfs(obj->fd, &sv) == 0) {
		out->tfiles = sv.f_files;
		out->ffiles = sv.f_ffree;
		out->afiles = sv.f_favail;
	}
	return 0;
}
