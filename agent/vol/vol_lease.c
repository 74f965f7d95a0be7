/* vol_lease: the store's cached-open table (vol_lease.h). The grants of
 * every volume hang on one list of the store under lease_mu; an operation
 * that changes a file's data looks at it only when the store holds a grant
 * (nleases, read without the mutex first), so a store with no oplock or
 * lease pays one atomic load per write.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"

static bool lease_same(const struct vol_lock_key *a, const struct vol_lock_key *b)
{
	return a->fsid == b->fsid && a->dev == b->dev && a->ino == b->ino;
}

int vol_lease_grant(struct vol_store *s, struct vol_lease *l, unsigned state)
{
	int rc = 0;

	if (state != VOL_LEASE_R || l->state)
		return -EINVAL;
	pthread_mutex_lock(&s->lease_mu);
	if (s->nleases >= VOL_LEASE_MAX) {
		rc = -ENOSPC;
		goto out;
	}
	l->state = state;
	l->next = s->leases;
	s->leases = l;
	__atomic_store_n(&s->nleases, s->nleases + 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&s->lease_mu);
	return rc;
}

/* Unlink l (held: it is on the list); the mutex is held. */
static void lease_unlink(struct vol_store *s, struct vol_lease *l)
{
	struct vol_lease **pp;

	for (pp = &s->leases; *pp && *pp != l; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = l->next;
		__atomic_store_n(&s->nleases, s->nleases - 1, __ATOMIC_RELEASE);
	}
	l->next = NULL;
	l->state = 0;
}

void vol_lease_drop(struct vol_store *s, struct vol_lease *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&s->lease_mu);
	if (l->state)
		lease_unlink(s, l);
	pthread_mutex_unlock(&s->lease_mu);
}

bool vol_lease_held(struct vol_store *s, const struct vol_lease *l)
{
	bool held;

	pthread_mutex_lock(&s->lease_mu);
	held = l->state != 0;
	pthread_mutex_unlock(&s->lease_mu);
	return held;
}

unsigned vol_lease_count(struct vol_store *s)
{
	return __atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE);
}

void vol_lease_break(struct vol_obj *obj, unsigned lost)
{
	struct vol_store *s = obj->exp->store;
	struct vol_lock_key k;
	struct vol_lease *l, *nx;

	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE) || !(lost & VOL_LEASE_R))
		return;
	vol_lock_key_of(obj, &k);
	pthread_mutex_lock(&s->lease_mu);
	for (l = s->leases; l; l = nx) {
		nx = l->next;
		if (!lease_same(&l->key, &k))
			continue;
		/* read caching is all that is granted: lost, the grant goes */
		lease_unlink(s, l);
		l->brk(l, VOL_LEASE_R);
	}
	pthread_mutex_unlock(&s->lease_mu);
}
