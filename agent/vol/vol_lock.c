/* vol_lock: the byte-range lock and share-reservation table (vol_lock.h).
 *
 * One mutex over a hash of files; a file holds one array of entries (locks
 * and reservations) in the order they were granted, which is the order a
 * Windows unlock searches. Per-volume counts live in a small array (a node
 * holds few volumes). Releasing an owner walks every file: owners go away
 * far less often than locks are taken, and the table is bounded.
 */
#include "agent/vol/vol_lock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define VL_BUCKETS 1024u

typedef unsigned __int128 vl_u128;

struct vl_ent {
	struct vol_lock_owner o;
	bool share;              /* a reservation, else a lock */
	uint64_t start, len;     /* lock */
	unsigned flags;
	unsigned access, deny;   /* reservation */
};

struct vl_file {
	struct vl_file *next;
	struct vol_lock_key k;
	struct vl_ent *e;
	size_t n, cap;
};

struct vl_vol {
	uint64_t fsid;
	size_t n;
};

struct vol_lock_tab {
	pthread_mutex_t mu;
	size_t per_vol, per_node, n;
	struct vl_file *b[VL_BUCKETS];
	struct vl_vol *vols;
	size_t nvols, vols_cap;
	struct vol_lock_waiter *waiters;
	size_t nwaiters;
};

/* Something of k was released: wake its waiters (mutex held). */
static void wake_file(struct vol_lock_tab *t, const struct vol_lock_key *k)
{
	for (struct vol_lock_waiter *w = t->waiters; w; w = w->next_)
		if (w->key.fsid == k->fsid && w->key.dev == k->dev && w->key.ino == k->ino)
			w->wake(w);
}

int vol_lock_wait(struct vol_lock_tab *t, struct vol_lock_waiter *w)
{
	int rc = 0;

	pthread_mutex_lock(&t->mu);
	if (w->linked_)
		goto out;
	if (t->nwaiters >= VOL_LOCK_WAIT_MAX) {
		rc = -ENOLCK;
		goto out;
	}
	w->prev_ = NULL;
	w->next_ = t->waiters;
	if (t->waiters)
		t->waiters->prev_ = w;
	t->waiters = w;
	w->linked_ = true;
	t->nwaiters++;
out:
	pthread_mutex_unlock(&t->mu);
	return rc;
}

void vol_lock_unwait(struct vol_lock_tab *t, struct vol_lock_waiter *w)
{
	pthread_mutex_lock(&t->mu);
	if (w->linked_) {
		if (w->prev_)
			w->prev_->next_ = w->next_;
		else
			t->waiters = w->next_;
		if (w->next_)
			w->next_->prev_ = w->prev_;
		w->next_ = w->prev_ = NULL;
		w->linked_ = false;
		t->nwaiters--;
	}
	pthread_mutex_unlock(&t->mu);
}

size_t vol_lock_waiters(struct vol_lock_tab *t)
{
	size_t n;

	pthread_mutex_lock(&t->mu);
	n = t->nwaiters;
	pthread_mutex_unlock(&t->mu);
	return n;
}

int vol_lock_new(size_t per_vol, size_t per_node, struct vol_lock_tab **out)
{
	struct vol_lock_tab *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->mu, NULL);
	t->per_vol = per_vol ? per_vol : VOL_LOCK_VOL_MAX;
	t->per_node = per_node ? per_node : VOL_LOCK_NODE_MAX;
	*out = t;
	return 0;
}

void vol_lock_free(struct vol_lock_tab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < VL_BUCKETS; i++)
		for (struct vl_file *f = t->b[i], *nx; f; f = nx) {
			nx = f->next;
			free(f->e);
			free(f);
		}
	free(t->vols);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

static size_t bucket(const struct vol_lock_key *k)
{
	uint64_t h = k->fsid * 0x9E3779B97F4A7C15ull ^ k->dev * 0xC2B2AE3D27D4EB4Full ^ k->ino;

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return (size_t)(h ^ (h >> 32)) % VL_BUCKETS;
}

static bool key_eq(const struct vol_lock_key *a, const struct vol_lock_key *b)
{
	return a->fsid == b->fsid && a->dev == b->dev && a->ino == b->ino;
}

static bool owner_eq(const struct vol_lock_owner *a, const struct vol_lock_owner *b)
{
	return a->proto == b->proto && a->client == b->client && a->id == b->id;
}

static struct vl_file *file_find(struct vol_lock_tab *t, const struct vol_lock_key *k, bool create)
{
	struct vl_file **head = &t->b[bucket(k)], *f;

	for (f = *head; f; f = f->next)
		if (key_eq(&f->k, k))
			return f;
	if (!create || !(f = calloc(1, sizeof(*f))))
		return NULL;
	f->k = *k;
	f->next = *head;
	*head = f;
	return f;
}

static void file_drop_if_empty(struct vol_lock_tab *t, struct vl_file *f)
{
	struct vl_file **p = &t->b[bucket(&f->k)];

	if (f->n)
		return;
	while (*p != f)
		p = &(*p)->next;
	*p = f->next;
	free(f->e);
	free(f);
}

static struct vl_vol *vol_count(struct vol_lock_tab *t, uint64_t fsid, bool create)
{
	for (size_t i = 0; i < t->nvols; i++)
		if (t->vols[i].fsid == fsid)
			return &t->vols[i];
	if (!create)
		return NULL;
	if (t->nvols == t->vols_cap) {
		size_t cap = t->vols_cap ? t->vols_cap * 2 : 8;
		struct vl_vol *v = realloc(t->vols, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->vols = v;
		t->vols_cap = cap;
	}
	t->vols[t->nvols] = (struct vl_vol){ .fsid = fsid };
	return &t->vols[t->nvols++];
}

/* Room for delta more entries of f (delta may be 0 or negative). */
static int room(struct vol_lock_tab *t, struct vl_file *f, long delta)
{
	struct vl_vol *v = vol_count(t, f->k.fsid, true);

	if (!v)
		return -ENOMEM;
	if (delta <= 0)
		return 0;
	if (v->n + (size_t)delta > t->per_vol || t->n + (size_t)delta > t->per_node)
		return -ENOLCK;
	if (f->n + (size_t)delta > f->cap) {
		size_t cap = f->cap ? f->cap : 4;
		struct vl_ent *e;

		while (cap < f->n + (size_t)delta)
			cap *= 2;
		if (!(e = realloc(f->e, cap * sizeof(*e))))
			return -ENOMEM;
		f->e = e;
		f->cap = cap;
	}
	return 0;
}

static void counted(struct vol_lock_tab *t, uint64_t fsid, long delta)
{
	struct vl_vol *v = vol_count(t, fsid, false);

	t->n = (size_t)((long)t->n + delta);
	if (v)
		v->n = (size_t)((long)v->n + delta);
}

static void ent_remove(struct vl_file *f, size_t i)
{
	memmove(&f->e[i], &f->e[i + 1], (f->n - i - 1) * sizeof(f->e[0]));
	f->n--;
}

static vl_u128 end_of(uint64_t start, uint64_t len)
{
	return len == VOL_LOCK_EOF ? (vl_u128)1 << 64 : (vl_u128)start + len;
}

/* The len of [s, e): a range up to 2^64 is "to the end". */
static uint64_t len_of(vl_u128 s, vl_u128 e)
{
	return e == (vl_u128)1 << 64 ? VOL_LOCK_EOF : (uint64_t)(e - s);
}

/* Windows' overlap (Samba brl_overlap): see the header for points. */
static bool overlap(uint64_t s1, uint64_t l1, uint64_t s2, uint64_t l2)
{
	if (l1 && s1 == s2 && l1 == l2)
		return true;
	return !((vl_u128)s1 >= end_of(s2, l2) || (vl_u128)s2 >= end_of(s1, l1));
}

static bool range_ok(uint64_t start, uint64_t len)
{
	return len == VOL_LOCK_EOF || end_of(start, len) <= (vl_u128)1 << 64;
}

/* Does held lock h stand in the way of lock request (o, start, len, flags)? */
static bool lock_conflict(const struct vl_ent *h, const struct vol_lock_owner *o, uint64_t start, uint64_t len,
			  unsigned flags)
{
	bool same = owner_eq(&h->o, o);

	if (!(h->flags & VOL_LOCK_F_EXCL) && !(flags & VOL_LOCK_F_EXCL))
		return false;
	if (same && (flags & VOL_LOCK_F_POSIX))
		return false;  /* replaced below */
	if (same && (h->flags & VOL_LOCK_F_EXCL) && !(flags & VOL_LOCK_F_EXCL))
		return false;  /* a shared lock stacks over its owner's exclusive one */
	return overlap(h->start, h->len, start, len);
}

static void describe(const struct vl_ent *h, struct vol_lock_desc *d)
{
	if (d)
		*d = (struct vol_lock_desc){ .owner = h->o, .start = h->start, .len = h->len, .flags = h->flags };
}

/* The entries o's POSIX [start, end) leaves of its own locks, as a count
 * change: +1 for each of o's locks the range splits in two, -1 for each it
 * covers whole. */
static long posix_delta(const struct vl_file *f, const struct vol_lock_owner *o, uint64_t start, uint64_t len)
{
	vl_u128 s = start, e = end_of(start, len);
	long d = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct vl_ent *h = &f->e[i];
		vl_u128 hs = h->start, he = end_of(h->start, h->len);

		if (h->share || !owner_eq(&h->o, o) || he <= s || hs >= e)
			continue;
		if (hs < s && he > e)
			d++;
		else if (hs >= s && he <= e)
			d--;
	}
	return d;
}

/* Cut [start, start+len) out of o's POSIX locks; room was made for splits. */
static void posix_cut(struct vl_file *f, const struct vol_lock_owner *o, uint64_t start, uint64_t len)
{
	vl_u128 s = start, e = end_of(start, len);

	for (size_t i = 0; i < f->n;) {
		struct vl_ent *h = &f->e[i];
		vl_u128 hs = h->start, he = end_of(h->start, h->len);

		if (h->share || !owner_eq(&h->o, o) || he <= s || hs >= e) {
			i++;
			continue;
		}
		if (hs >= s && he <= e) {
			ent_remove(f, i);
			continue;
		}
		if (hs < s && he > e) {  /* split: the right part goes at the end */
			struct vl_ent right = *h;

			right.start = (uint64_t)e;
			right.len = len_of(e, he);
			h->len = len_of(hs, s);
			f->e[f->n++] = right;
		} else if (hs < s) {
			h->len = len_of(hs, s);
		} else {
			h->len = len_of(e, he);
			h->start = (uint64_t)e;
		}
		i++;
	}
}

/* Merge o's POSIX locks of one type that touch or overlap; returns how
 * many entries went. */
static long posix_merge(struct vl_file *f, const struct vol_lock_owner *o)
{
	long gone = 0;

	for (size_t i = 0; i < f->n; i++) {
		struct vl_ent *a = &f->e[i];

		if (a->share || !owner_eq(&a->o, o))
			continue;
		for (size_t j = i + 1; j < f->n;) {
			struct vl_ent *b = &f->e[j];
			vl_u128 as = a->start, ae = end_of(a->start, a->len), bs = b->start, be = end_of(b->start, b->len);

			if (b->share || !owner_eq(&b->o, o) || b->flags != a->flags || bs > ae || as > be) {
				j++;
				continue;
			}
			as = as < bs ? as : bs;
			ae = ae > be ? ae : be;
			a->start = (uint64_t)as;
			a->len = len_of(as, ae);
			ent_remove(f, j);
			gone++;
			j = i + 1;  /* a grew: look again */
		}
	}
	return gone;
}

int vol_lock_lock(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		  uint64_t start, uint64_t len, unsigned flags, struct vol_lock_desc *conflict)
{
	bool posix = flags & VOL_LOCK_F_POSIX;
	struct vl_file *f;
	long delta = 1;
	int rc = 0;

	if (!range_ok(start, len) || (posix && len == 0))
		return -EINVAL;
	pthread_mutex_lock(&t->mu);
	if (!(f = file_find(t, k, true))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < f->n; i++)
		if (!f->e[i].share && lock_conflict(&f->e[i], o, start, len, flags)) {
			describe(&f->e[i], conflict);
			rc = -EAGAIN;
			goto out;
		}
	if (posix)
		delta += posix_delta(f, o, start, len);
	if ((rc = room(t, f, delta)) != 0)
		goto out;
	if (posix)
		posix_cut(f, o, start, len);
	f->e[f->n++] = (struct vl_ent){ .o = *o, .start = start, .len = len,
					.flags = flags & (VOL_LOCK_F_EXCL | VOL_LOCK_F_POSIX) };
	counted(t, k->fsid, delta - (posix ? posix_merge(f, o) : 0));
out:
	if (f)
		file_drop_if_empty(t, f);
	pthread_mutex_unlock(&t->mu);
	return rc;
}

int vol_lock_probe(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		   uint64_t start, uint64_t len, unsigned flags, struct vol_lock_desc *conflict)
{
	struct vl_file *f;
	int rc = 0;

	if (!range_ok(start, len) || ((flags & VOL_LOCK_F_POSIX) && len == 0))
		return -EINVAL;
	pthread_mutex_lock(&t->mu);
	if ((f = file_find(t, k, false)))
		for (size_t i = 0; i < f->n; i++)
			if (!f->e[i].share && lock_conflict(&f->e[i], o, start, len, flags)) {
				describe(&f->e[i], conflict);
				rc = -EAGAIN;
				break;
			}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

size_t vol_lock_held(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o)
{
	struct vl_file *f;
	size_t n = 0;

	pthread_mutex_lock(&t->mu);
	if ((f = file_find(t, k, false)))
		for (size_t i = 0; i < f->n; i++)
			n += !f->e[i].share && owner_eq(&f->e[i].o, o);
	pthread_mutex_unlock(&t->mu);
	return n;
}

int vol_lock_unlock(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		    uint64_t start, uint64_t len, unsigned flags)
{
	bool posix = flags & VOL_LOCK_F_POSIX;
	struct vl_file *f;
	long delta;
	int rc = posix ? 0 : -ENOENT;

	if (!range_ok(start, len) || (posix && len == 0))
		return -EINVAL;
	pthread_mutex_lock(&t->mu);
	if (!(f = file_find(t, k, false)))
		goto out;
	if (posix) {
		delta = posix_delta(f, o, start, len);
		if ((rc = room(t, f, delta)) != 0)
			goto out;
		posix_cut(f, o, start, len);
		counted(t, k->fsid, delta);
		wake_file(t, k);
		goto out;
	}
	for (size_t i = 0; i < f->n; i++) {
		const struct vl_ent *h = &f->e[i];

		if (!h->share && !(h->flags & VOL_LOCK_F_POSIX) && owner_eq(&h->o, o) && h->start == start &&
		    h->len == len) {
			ent_remove(f, i);
			counted(t, k->fsid, -1);
			wake_file(t, k);
			rc = 0;
			break;
		}
	}
out:
	if (f)
		file_drop_if_empty(t, f);
	pthread_mutex_unlock(&t->mu);
	return rc;
}

int vol_lock_test(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		  uint64_t start, uint64_t len, bool write)
{
	struct vl_file *f;
	int rc = 0;

	if (len == 0)
		return 0;
	if (!range_ok(start, len))
		len = VOL_LOCK_EOF;  /* I/O past 2^64 cannot happen; test up to it */
	pthread_mutex_lock(&t->mu);
	if (!(f = file_find(t, k, false)))
		goto out;
	for (size_t i = 0; i < f->n; i++) {
		const struct vl_ent *h = &f->e[i];
		bool excl = h->flags & VOL_LOCK_F_EXCL;

		if (h->share || (h->flags & VOL_LOCK_F_POSIX) || !overlap(h->start, h->len, start, len))
			continue;
		/* another owner's exclusive lock stops both; a shared lock stops
		 * a write, even its owner's (Windows) */
		if ((excl && !owner_eq(&h->o, o)) || (!excl && write)) {
			rc = -EAGAIN;
			break;
		}
	}
out:
	pthread_mutex_unlock(&t->mu);
	return rc;
}

int vol_lock_share(struct vol_lock_tab *t, const struct vol_lock_key *k, const struct vol_lock_owner *o,
		   unsigned access, unsigned deny)
{
	struct vl_file *f;
	size_t mine = SIZE_MAX;
	int rc = 0;

	access &= VOL_SHARE_ALL;
	deny &= VOL_SHARE_ALL;
	pthread_mutex_lock(&t->mu);
	if (!(f = file_find(t, k, true))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < f->n; i++) {
		const struct vl_ent *h = &f->e[i];

		if (!h->share)
			continue;
		if (owner_eq(&h->o, o)) {
			mine = i;
			continue;
		}
		if (access && ((access & h->deny) || (h->access & deny))) {
			rc = -EBUSY;
			goto out;
		}
	}
	if (!access) {  /* attributes only: holds nothing */
		if (mine != SIZE_MAX) {
			ent_remove(f, mine);
			counted(t, k->fsid, -1);
		}
		goto out;
	}
	if (mine == SIZE_MAX) {
		if ((rc = room(t, f, 1)) != 0)
			goto out;
		mine = f->n++;
		counted(t, k->fsid, 1);
	}
	f->e[mine] = (struct vl_ent){ .o = *o, .share = true, .access = access, .deny = deny };
out:
	if (f)
		file_drop_if_empty(t, f);
	pthread_mutex_unlock(&t->mu);
	return rc;
}

bool vol_lock_share_held(struct vol_lock_tab *t, const struct vol_lock_key *k, uint32_t proto, uint64_t client,
			 unsigned access)
{
	struct vl_file *f;
	bool held = false;

	pthread_mutex_lock(&t->mu);
	if ((f = file_find(t, k, false)) != NULL)
		for (size_t i = 0; i < f->n && !held; i++) {
			const struct vl_ent *h = &f->e[i];

			held = h->share && (h->access & access) && !(h->o.proto == proto && h->o.client == client);
		}
	pthread_mutex_unlock(&t->mu);
	return held;
}

enum vl_scope { VL_OWNER, VL_CLIENT, VL_PROTO, VL_FSID };

static bool in_scope(const struct vl_file *f, const struct vol_lock_owner *h, const struct vol_lock_owner *o,
		     enum vl_scope scope)
{
	switch (scope) {
	case VL_OWNER: return owner_eq(h, o);
	case VL_CLIENT: return h->proto == o->proto && h->client == o->client;
	case VL_PROTO: return h->proto == o->proto;
	default: return f->k.fsid == o->id;
	}
}

/* Drop every entry of o, of every owner of o's (proto, client), of every
 * owner of o's proto, or of volume o->id. */
static void release_where(struct vol_lock_tab *t, const struct vol_lock_owner *o, enum vl_scope scope)
{
	pthread_mutex_lock(&t->mu);
	for (size_t b = 0; b < VL_BUCKETS; b++)
		for (struct vl_file *f = t->b[b], *nx; f; f = nx) {
			bool dropped = false;

			nx = f->next;
			for (size_t i = 0; i < f->n;) {
				if (in_scope(f, &f->e[i].o, o, scope)) {
					dropped |= !f->e[i].share;
					ent_remove(f, i);
					counted(t, f->k.fsid, -1);
				} else {
					i++;
				}
			}
			if (dropped)
				wake_file(t, &f->k);
			file_drop_if_empty(t, f);
		}
	pthread_mutex_unlock(&t->mu);
}

void vol_lock_release(struct vol_lock_tab *t, const struct vol_lock_owner *o)
{
	release_where(t, o, VL_OWNER);
}

void vol_lock_release_client(struct vol_lock_tab *t, uint32_t proto, uint64_t client)
{
	struct vol_lock_owner o = { .proto = proto, .client = client };

	release_where(t, &o, VL_CLIENT);
}

void vol_lock_release_client_proto(struct vol_lock_tab *t, uint32_t proto)
{
	struct vol_lock_owner o = { .proto = proto };

	release_where(t, &o, VL_PROTO);
}

void vol_lock_release_fsid(struct vol_lock_tab *t, uint64_t fsid)
{
	struct vol_lock_owner o = { .id = fsid };

	release_where(t, &o, VL_FSID);
}

size_t vol_lock_count(struct vol_lock_tab *t, const struct vol_lock_key *k)
{
	size_t n;

	pthread_mutex_lock(&t->mu);
	if (k) {
		const struct vl_vol *v = vol_count(t, k->fsid, false);

		n = v ? v->n : 0;
	} else {
		n = t->n;
	}
	pthread_mutex_unlock(&t->mu);
	return n;
}
