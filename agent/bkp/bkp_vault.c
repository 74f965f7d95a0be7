/* bkp_vault: a vault over an object store: opening it (the key check), the
 * manifests as objects, the set of stored chunks, the locks that keep gc
 * and backups apart, and list / info / delete / gc.
 *
 * Why locks and not a grace time: obj_list reports no object times, and a
 * lock is exact. A backup writes l/backup-<random> and then lists l/: a live
 * gc lock makes it back off (-EBUSY). A gc writes l/gc-<random> and lists
 * l/: any other live lock makes it back off. Whichever lists second sees the
 * other (the directory backend and S3 both list what a finished put wrote),
 * so a gc never runs while a backup decides which chunks the vault already
 * holds. A lock holds its writer's clock in seconds; a backup refreshes it,
 * and one older than the stale time is a dead process's (gc removes it). A
 * backup's lock is named after the backup (l/backup-<id>), so the retry of a
 * backup that failed with the store down (and could not delete its lock)
 * takes the same lock over and removes it at the end.
 */
#define _GNU_SOURCE
#include "agent/bkp/bkp_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "util/ut_hex.h"

#define BKP_VAULT_KEY "vault"
#define BKP_VAULT_TEXT "aquifer backup vault v1"
#define BKP_LOCK_MAX 64 /* bytes of a lock object */

static int bkp_store_fail(aq_msg *msg, struct bkp_vault *v, int rc, const char *what)
{
	char last[256];

	obj_last_error(v->store, last, sizeof last);
	return aq_fail(msg, rc, "%s: %s (%s)", what, obj_strerror(rc), last);
}

int bkp_put(struct bkp_vault *v, const char *key, const void *buf, size_t len)
{
	int rc;

	if (v->put_hook && (rc = v->put_hook(v->put_hook_arg, key)) != 0)
		return rc;
	return obj_put(v->store, key, buf, len);
}

void bkp_vault_set_put_hook(struct bkp_vault *v, int (*fn)(void *arg, const char *key), void *arg)
{
	v->put_hook = fn;
	v->put_hook_arg = arg;
}

/* Reads a whole sealed object of at most cap bytes and opens it. */
static int bkp_get_sealed(struct bkp_vault *v, const uint8_t key[32], const char *okey, size_t cap, uint8_t **out,
			  size_t *len)
{
	uint64_t size = 0;
	uint8_t *ct = NULL, *pt = NULL;
	size_t got = 0;
	int rc;

	if ((rc = obj_head(v->store, okey, &size)) != 0)
		goto out;
	if (size < BKP_SEAL_OVERHEAD || size > cap) {
		rc = -EBADMSG;
		goto out;
	}
	if (!(ct = malloc((size_t)size)) || !(pt = malloc((size_t)size - BKP_SEAL_OVERHEAD + 1))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = obj_get(v->store, okey, 0, ct, (size_t)size, &got)) != 0)
		goto out;
	if (got != size) {
		rc = -EBADMSG;
		goto out;
	}
	if ((rc = bkp_open_sealed(key, okey, ct, (size_t)size, pt)) != 0)
		goto out;
	*out = pt;
	*len = (size_t)size - BKP_SEAL_OVERHEAD;
	pt = NULL;
out:
	free(ct);
	free(pt);
	return rc;
}

int bkp_vault_open(const struct obj_cfg *cfg, const uint8_t key[BKP_KEY_LEN], struct bkp_vault **out, aq_msg *msg)
{
	struct bkp_vault *v = calloc(1, sizeof *v);
	uint8_t *pt = NULL, sealed[sizeof BKP_VAULT_TEXT - 1 + BKP_SEAL_OVERHEAD];
	size_t len = 0;
	int rc;

	if (!v)
		return aq_fail(msg, -ENOMEM, "out of memory");
	if ((rc = obj_open(cfg, &v->store)) != 0) {
		aq_fail(msg, rc, "vault store: bad configuration");
		goto out;
	}
	if ((rc = bkp_keys_derive(key, &v->keys)) != 0) {
		aq_fail(msg, rc, "cannot derive the vault keys");
		goto out;
	}
	if ((rc = obj_ensure_bucket(v->store)) != 0) {
		bkp_store_fail(msg, v, rc, "vault store");
		goto out;
	}
	rc = bkp_get_sealed(v, v->keys.meta, BKP_VAULT_KEY, sizeof sealed, &pt, &len);
	if (rc == -ENOENT) { /* a new vault: this key becomes its key */
		if ((rc = bkp_seal(v->keys.meta, BKP_VAULT_KEY, BKP_VAULT_TEXT, sizeof BKP_VAULT_TEXT - 1, sealed)) == 0 &&
		    (rc = bkp_put(v, BKP_VAULT_KEY, sealed, sizeof sealed)) != 0)
			bkp_store_fail(msg, v, rc, "cannot write the vault's key check");
		goto out;
	}
	if (rc == -EBADMSG || (rc == 0 && (len != sizeof BKP_VAULT_TEXT - 1 || memcmp(pt, BKP_VAULT_TEXT, len) != 0))) {
		rc = aq_fail(msg, -EKEYREJECTED, "the key is not this vault's (key check does not authenticate)");
		goto out;
	}
	if (rc != 0)
		bkp_store_fail(msg, v, rc, "cannot read the vault's key check");
out:
	free(pt);
	if (rc != 0) {
		bkp_vault_close(v);
		return rc;
	}
	*out = v;
	return 0;
}

void bkp_vault_close(struct bkp_vault *v)
{
	if (!v)
		return;
	obj_close(v->store);
	OPENSSL_cleanse(&v->keys, sizeof v->keys);
	free(v);
}

/* ---- manifests ---- */

static void bkp_mf_key(const char *id, char *out, size_t cap)
{
	snprintf(out, cap, "m/%s", id);
}

int bkp_mf_load(struct bkp_vault *v, const char *id, struct bkp_mf *m, aq_msg *msg)
{
	char key[8 + BKP_ID_MAX];
	uint8_t *pt = NULL;
	size_t len = 0;
	int rc;

	if (bkp_id_check(id) != 0)
		return aq_fail(msg, -EINVAL, "bad backup id");
	bkp_mf_key(id, key, sizeof key);
	if ((rc = bkp_get_sealed(v, v->keys.meta, key, BKP_MF_MAX, &pt, &len)) != 0) {
		if (rc == -ENOENT)
			return aq_fail(msg, rc, "backup %s does not exist", id);
		if (rc == -EBADMSG)
			return aq_fail(msg, rc, "manifest of backup %s does not authenticate", id);
		return bkp_store_fail(msg, v, rc, "cannot read a manifest");
	}
	if ((rc = bkp_mf_decode(pt, len, m)) != 0)
		aq_fail(msg, rc, "manifest of backup %s is malformed", id);
	free(pt);
	return rc;
}

int bkp_mf_store(struct bkp_vault *v, const char *id, const struct bkp_mf *m, uint64_t *put, aq_msg *msg)
{
	char key[8 + BKP_ID_MAX];
	uint8_t *pt = NULL, *ct = NULL;
	size_t len = 0;
	int rc;

	bkp_mf_key(id, key, sizeof key);
	if ((rc = bkp_mf_encode(m, &pt, &len)) != 0) {
		aq_fail(msg, rc, "cannot encode the manifest");
		goto out;
	}
	if (!(ct = malloc(len + BKP_SEAL_OVERHEAD))) {
		rc = aq_fail(msg, -ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = bkp_seal(v->keys.meta, key, pt, len, ct)) != 0) {
		aq_fail(msg, rc, "cannot seal the manifest");
		goto out;
	}
	if ((rc = bkp_put(v, key, ct, len + BKP_SEAL_OVERHEAD)) != 0) {
		bkp_store_fail(msg, v, rc, "cannot write the manifest");
		goto out;
	}
	*put = len + BKP_SEAL_OVERHEAD;
out:
	free(pt);
	free(ct);
	return rc;
}

/* ---- the set of chunk names ---- */

void bkp_set_init(struct bkp_set *s)
{
	memset(s, 0, sizeof *s);
}

void bkp_set_cleanup(struct bkp_set *s)
{
	free(s->slot);
	free(s->used);
	bkp_set_init(s);
}

static size_t bkp_set_pos(const struct bkp_set *s, const uint8_t id[BKP_ID_LEN])
{
	uint64_t h;

	memcpy(&h, id, sizeof h); /* the name is an HMAC: its bytes are uniform */
	for (size_t i = (size_t)h & (s->cap - 1);; i = (i + 1) & (s->cap - 1))
		if (!s->used[i] || memcmp(s->slot[i], id, BKP_ID_LEN) == 0)
			return i;
}

bool bkp_set_has(const struct bkp_set *s, const uint8_t id[BKP_ID_LEN])
{
	return s->cap && s->used[bkp_set_pos(s, id)];
}

int bkp_set_add(struct bkp_set *s, const uint8_t id[BKP_ID_LEN])
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct bkp_set g = { .cap = s->cap ? 2 * s->cap : 1024 };

		if (!(g.slot = malloc(g.cap * BKP_ID_LEN)) || !(g.used = calloc(g.cap, 1))) {
			bkp_set_cleanup(&g);
			return -ENOMEM;
		}
		for (size_t k = 0; k < s->cap; k++)
			if (s->used[k]) {
				i = bkp_set_pos(&g, s->slot[k]);
				memcpy(g.slot[i], s->slot[k], BKP_ID_LEN);
				g.used[i] = 1;
				g.n++;
			}
		bkp_set_cleanup(s);
		*s = g;
	}
	i = bkp_set_pos(s, id);
	if (!s->used[i]) {
		memcpy(s->slot[i], id, BKP_ID_LEN);
		s->used[i] = 1;
		s->n++;
	}
	return 0;
}

/* The chunk name of a key "c/hh/<64 hex>"; -1 for anything else. */
static int bkp_key_chunk(const char *key, uint8_t id[BKP_ID_LEN])
{
	if (strlen(key) != BKP_CHUNK_KEY_LEN || strncmp(key, "c/", 2) != 0 || key[4] != '/' ||
	    key[2] != key[5] || key[3] != key[6])
		return -1;
	return ut_hex_decode(key + 5, 2 * BKP_ID_LEN, id, BKP_ID_LEN, NULL) == 0 ? 0 : -1;
}

static int bkp_set_cb(void *arg, const char *key, uint64_t size)
{
	uint8_t id[BKP_ID_LEN];

	(void)size;
	if (bkp_key_chunk(key, id) != 0)
		return 0;
	return bkp_set_add(arg, id);
}

int bkp_set_load(struct bkp_vault *v, struct bkp_set *s, aq_msg *msg)
{
	int rc = obj_list(v->store, "c/", bkp_set_cb, s);

	if (rc == -ENOMEM)
		return aq_fail(msg, rc, "out of memory");
	if (rc != 0)
		return bkp_store_fail(msg, v, rc, "cannot list the vault's chunks");
	return 0;
}

/* ---- locks ---- */

struct bkp_lock_scan {
	struct bkp_vault *v;
	const char *self, *kind;
	int64_t now, stale;
	bool gc;            /* the scanner is a gc: removes stale locks */
	bool busy;
	uint64_t stale_removed;
	char other[OBJ_KEY_MAX + 1];
};

static int bkp_lock_cb(void *arg, const char *key, uint64_t size)
{
	struct bkp_lock_scan *ls = arg;
	char buf[BKP_LOCK_MAX + 1];
	size_t got = 0;
	long long t = 0;

	if (strcmp(key, ls->self) == 0 || size > BKP_LOCK_MAX)
		return 0;
	if (obj_get(ls->v->store, key, 0, buf, BKP_LOCK_MAX, &got) != 0)
		return 0; /* gone meanwhile */
	buf[got] = '\0';
	if (sscanf(buf, "%lld", &t) != 1 || ls->now - t > ls->stale) {
		if (ls->gc && obj_delete(ls->v->store, key) == 0)
			ls->stale_removed++;
		return 0;
	}
	/* a backup yields only to a gc; a gc to anyone */
	if (ls->gc || strncmp(key, "l/gc-", 5) == 0) {
		ls->busy = true;
		snprintf(ls->other, sizeof ls->other, "%s", key);
	}
	return 0;
}

static int bkp_lock_write(struct bkp_vault *v, const char *name)
{
	char text[32];
	int n = snprintf(text, sizeof text, "%lld\n", (long long)time(NULL));

	return bkp_put(v, name, text, (size_t)n);
}

int bkp_lock_acquire(struct bkp_vault *v, const char *kind, const char *who, unsigned stale_sec, char *name,
		     size_t cap, uint64_t *stale_removed, aq_msg *msg)
{
	struct bkp_lock_scan ls = { .v = v, .kind = kind, .now = time(NULL),
				    .stale = stale_sec ? stale_sec : BKP_LOCK_STALE_DEFAULT,
				    .gc = strcmp(kind, "gc") == 0 };
	uint8_t r[8];
	char hex[17];
	int rc;

	if (RAND_bytes(r, sizeof r) != 1)
		return aq_fail(msg, -EIO, "no random bytes");
	ut_hex_encode(r, sizeof r, hex, sizeof hex);
	snprintf(name, cap, "l/%s-%s", kind, who ? who : hex);
	ls.self = name;
	if ((rc = bkp_lock_write(v, name)) != 0)
		return bkp_store_fail(msg, v, rc, "cannot write the vault lock");
	if ((rc = obj_list(v->store, "l/", bkp_lock_cb, &ls)) != 0) {
		bkp_lock_release(v, name);
		return bkp_store_fail(msg, v, rc, "cannot list the vault locks");
	}
	if (stale_removed)
		*stale_removed = ls.stale_removed;
	if (ls.busy) {
		bkp_lock_release(v, name);
		return aq_fail(msg, -EBUSY, "vault is busy: %s %s holds it", ls.gc ? "lock" : "a gc", ls.other);
	}
	return 0;
}

int bkp_lock_refresh(struct bkp_vault *v, const char *name)
{
	return bkp_lock_write(v, name);
}

void bkp_lock_release(struct bkp_vault *v, const char *name)
{
	obj_delete(v->store, name); /* best effort: a lost lock goes stale */
}

/* ---- list, info, delete ---- */

struct bkp_list_arg {
	int (*cb)(void *arg, const char *id);
	void *arg;
};

static int bkp_list_cb(void *arg, const char *key, uint64_t size)
{
	struct bkp_list_arg *la = arg;

	(void)size;
	if (strncmp(key, "m/", 2) != 0 || bkp_id_check(key + 2) != 0)
		return 0;
	return la->cb(la->arg, key + 2);
}

int bkp_list(struct bkp_vault *v, int (*cb)(void *arg, const char *id), void *arg, aq_msg *msg)
{
	struct bkp_list_arg la = { cb, arg };
	int rc = obj_list(v->store, "m/", bkp_list_cb, &la);

	if (rc != 0)
		aq_fail(msg, rc, "listing the vault's backups stopped: %s", obj_strerror(rc));
	return rc;
}

int bkp_info(struct bkp_vault *v, const char *id, struct bkp_info *out, aq_msg *msg)
{
	struct bkp_mf m;
	char key[8 + BKP_ID_MAX];
	uint64_t size = 0;
	int rc;

	bkp_mf_init(&m);
	if ((rc = bkp_mf_load(v, id, &m, msg)) != 0)
		return rc;
	bkp_mf_key(id, key, sizeof key);
	obj_head(v->store, key, &size);
	memset(out, 0, sizeof *out);
	out->stats = m.stats;
	out->stats.manifest_bytes = size;
	out->create_unix_ns = m.create_unix_ns;
	out->chunk_size = m.chunk_size;
	snprintf(out->source, sizeof out->source, "%s", m.source);
	snprintf(out->prev_id, sizeof out->prev_id, "%s", m.prev_id);
	bkp_mf_cleanup(&m);
	return 0;
}

int bkp_delete(struct bkp_vault *v, const char *id, aq_msg *msg)
{
	char key[8 + BKP_ID_MAX];
	uint64_t size;
	int rc;

	if (bkp_id_check(id) != 0)
		return aq_fail(msg, -EINVAL, "bad backup id");
	bkp_mf_key(id, key, sizeof key);
	if ((rc = obj_head(v->store, key, &size)) != 0)
		return rc == -ENOENT ? aq_fail(msg, rc, "backup %s does not exist", id)
				     : bkp_store_fail(msg, v, rc, "cannot delete a backup");
	if ((rc = obj_delete(v->store, key)) != 0)
		return bkp_store_fail(msg, v, rc, "cannot delete a backup");
	return 0;
}
