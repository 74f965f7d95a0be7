/* vol_lease: the store's cached-open table (vol_lease.h). The grants of
 * every volume hang on one list of the store under lease_mu; an operation
 * that changes a file's data looks at it only when the store holds a grant
 * (nleases, read without the mutex first), so a store with no oplock or
 * lease pays one atomic load per write. Breakers that wait for an
 * acknowledgment sleep on lease_cv (CLOCK_MONOTONIC), which every ack,
 * drop and revoke broadcasts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/vol/vol.h"
#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_lease.h"
#include "util/ut_log.h"

#define VOL_LEASE_ALL (VOL_LEASE_R | VOL_LEASE_H | VOL_LEASE_W)

static uint64_t lease_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* When l's break (started at break_ns) is revoked by the store. */
static uint64_t lease_due_ns(struct vol_store *s, const struct vol_lease *l)
{
	unsigned ms = l->revoke_ms ? l->revoke_ms : vol_lease_timeout(s);

	return l->break_ns + (uint64_t)ms * 1000000ull;
}

static bool lease_same(const struct vol_lock_key *a, const struct vol_lock_key *b)
{
	return a->fsid == b->fsid && a->dev == b->dev && a->ino == b->ino;
}

static bool lease_valid(unsigned state)
{
	return (state & VOL_LEASE_R) && !(state & ~VOL_LEASE_ALL);
}

int vol_lease_grant(struct vol_store *s, struct vol_lease *l, unsigned state)
{
	int rc = 0;

	if (!lease_valid(state) || !l->group || l->state)
		return -EINVAL;
	pthread_mutex_lock(&s->lease_mu);
	if (s->nleases >= VOL_LEASE_MAX) {
		rc = -ENOSPC;
		goto out;
	}
	l->state = state;
	l->breaking = false;
	l->breaking_to = l->breaking_next = 0;
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
	l->breaking = false;
	l->breaking_to = l->breaking_next = 0;
}

/* l's break is over, keeping state (the mutex is held). */
static void lease_settle(struct vol_store *s, struct vol_lease *l, unsigned state)
{
	l->breaking = false;
	l->breaking_to = l->breaking_next = 0;
	l->state = state;
	if (!state)
		lease_unlink(s, l);
	pthread_cond_broadcast(&s->lease_cv);
}

/* l acknowledged keeping state, but later breaks left it only
 * breaking_next: the next break starts (the mutex is held). */
static void lease_next(struct vol_store *s, struct vol_lease *l, unsigned state)
{
	unsigned to = state & l->breaking_next, lost = state & ~to, step = to;

	l->state = state;
	if (lost & (VOL_LEASE_H | VOL_LEASE_W)) {
		/* an SMB lease breaks in steps, as Windows does: H and W go first,
		 * to R, and R alone after that ack (smbtorture smb2.lease.breaking3);
		 * an oplock (tied) or a delegation goes at once */
		if (!l->tied && !l->recall_on_open_w)
			step |= state & VOL_LEASE_R;
		l->breaking_to = step;
		l->breaking_next = to;
		l->break_ns = lease_now_ns();
		l->brk(l, state & ~step);
		return;
	}
	lease_settle(s, l, to);
	if (l->brk)
		l->brk(l, lost);
}

int vol_lease_upgrade(struct vol_store *s, struct vol_lease *l, unsigned state)
{
	int rc = 0;

	pthread_mutex_lock(&s->lease_mu);
	if (!l->state || l->breaking || !lease_valid(state) || (l->state & ~state))
		rc = -EINVAL;
	else
		l->state = state;
	pthread_mutex_unlock(&s->lease_mu);
	return rc;
}

void vol_lease_drop(struct vol_store *s, struct vol_lease *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&s->lease_mu);
	if (l->state) {
		lease_unlink(s, l);
		pthread_cond_broadcast(&s->lease_cv);
	}
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

unsigned vol_lease_state(struct vol_store *s, const struct vol_lease *l, bool *breaking, unsigned *breaking_to)
{
	unsigned state;

	pthread_mutex_lock(&s->lease_mu);
	state = l->state;
	if (breaking)
		*breaking = l->breaking;
	if (breaking_to)
		*breaking_to = l->breaking_to;
	pthread_mutex_unlock(&s->lease_mu);
	return state;
}

int vol_lease_ack(struct vol_store *s, struct vol_lease *l, unsigned state)
{
	int rc = 0;

	pthread_mutex_lock(&s->lease_mu);
	if (!l->state || !l->breaking)
		rc = -EINVAL;
	else if (state & ~l->breaking_to)
		rc = -EPERM;
	else if (state & ~l->breaking_next)
		lease_next(s, l, state);
	else
		lease_settle(s, l, state);
	pthread_mutex_unlock(&s->lease_mu);
	return rc;
}

unsigned vol_lease_count(struct vol_store *s)
{
	return __atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE);
}

int vol_lease_set_timeout(struct vol_store *s, unsigned ms)
{
	if (ms == 0 || ms > 3600000u)
		return -EINVAL;
	__atomic_store_n(&s->lease_ms, ms, __ATOMIC_RELEASE);
	return 0;
}

unsigned vol_lease_timeout(struct vol_store *s)
{
	return __atomic_load_n(&s->lease_ms, __ATOMIC_ACQUIRE);
}

/* Break `lost` of the grants on k not of group (the mutex is held);
 * whether one of them is left breaking. */
static bool lease_break_locked(struct vol_store *s, const struct vol_lock_key *k, unsigned lost, uint64_t group)
{
	bool wait = false;

	for (struct vol_lease *l = s->leases, *nx; l; l = nx) {
		unsigned eff;

		nx = l->next;
		if (!lease_same(&l->key, k) || (group && l->group == group) ||
		    ((lost & VOL_LEASE_TIED_ONLY) && !l->tied))
			continue;
		if (lost == VOL_LEASE_ACCESS && !l->recall_on_access)
			continue; /* a read: only write delegations are in its way */
		if (l->breaking) {
			/* a second break while the first waits: the ack may keep what the
			 * first announced, and the next break follows it (lease_next) */
			unsigned eff2 = lost & l->breaking_next;

			if (eff2 & l->tied)
				eff2 |= l->tied & l->breaking_next;
			if ((eff2 & VOL_LEASE_R) || ((lost & VOL_LEASE_OPEN_W) && l->recall_on_open_w) ||
			    l->recall_on_access)
				eff2 = l->breaking_next;
			l->breaking_next &= ~eff2;
			wait = true;
			continue;
		}
		eff = lost & l->state;
		if (eff & l->tied)
			eff |= l->tied & l->state;
		if ((eff & VOL_LEASE_R) || ((lost & VOL_LEASE_OPEN_W) && l->recall_on_open_w) ||
		    l->recall_on_access)
			eff = l->state; /* no read caching: nothing; a write delegation: all */
		if (!eff)
			continue;
		if (eff & (VOL_LEASE_H | VOL_LEASE_W)) {
			l->breaking = true;
			l->breaking_to = l->breaking_next = l->state & ~eff;
			l->break_ns = lease_now_ns();
			wait = true;
			l->brk(l, eff);
		} else {
			unsigned to = l->state & ~eff;

			if (!to)
				lease_unlink(s, l);
			else
				l->state = to;
			l->brk(l, eff);
		}
	}
	return wait;
}

static bool lease_breaking_locked(struct vol_store *s, const struct vol_lock_key *k, uint64_t group)
{
	for (struct vol_lease *l = s->leases; l; l = l->next)
		if (l->breaking && lease_same(&l->key, k) && !(group && l->group == group))
			return true;
	return false;
}

/* Revoke the breaking grants on k whose break has waited their revoke
 * time by now (the mutex is held): a grant made with recall_on_open_w (an
 * NFSv4.1 delegation) or untied (an SMB lease) goes whole, a tied one (an
 * oplock) drops to breaking_next. Returns
 * the earliest due time of those left breaking (UINT64_MAX: none). */
static uint64_t lease_revoke_locked(struct vol_store *s, const struct vol_lock_key *k, uint64_t now)
{
	uint64_t next = UINT64_MAX;

	for (struct vol_lease *l = s->leases, *nx; l; l = nx) {
		uint64_t due;
		unsigned was;

		nx = l->next;
		if (!l->breaking || !lease_same(&l->key, k))
			continue;
		if ((due = lease_due_ns(s, l)) > now) {
			if (due < next)
				next = due;
			continue;
		}
		UT_INFO("vol", NULL, "a cached open's break was not acknowledged in time: revoked (%u -> %u)",
			l->state, l->tied ? l->breaking_next : 0u);
		if (l->tied) { /* an oplock: to what the break left (Level II) */
			lease_settle(s, l, l->breaking_next);
			continue;
		}
		/* a delegation, or an SMB lease (untied): whole, as Windows takes
		 * the lease (smbtorture smb2.lease.timeout); the lease's holder is
		 * told (brk with what it lost) so that its front end forgets the
		 * break it sent */
		was = l->state;
		lease_settle(s, l, 0);
		if (!l->recall_on_open_w && l->brk)
			l->brk(l, was);
	}
	return next;
}

bool vol_lease_contend(struct vol_store *s, const struct vol_lock_key *key, unsigned lost, uint64_t group)
{
	bool wait;

	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&s->lease_mu);
	wait = lost ? lease_break_locked(s, key, lost, group) : lease_breaking_locked(s, key, group);
	pthread_mutex_unlock(&s->lease_mu);
	return wait;
}

bool vol_lease_breaking(struct vol_store *s, const struct vol_lock_key *key, uint64_t group)
{
	return vol_lease_contend(s, key, 0, group);
}

bool vol_lease_waits(struct vol_store *s, const struct vol_lock_key *key, uint64_t group, unsigned lost, unsigned bits)
{
	bool wait = false;

	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&s->lease_mu);
	for (struct vol_lease *l = s->leases; l && !wait; l = l->next) {
		unsigned eff;

		if (!l->breaking || !lease_same(&l->key, key) || (group && l->group == group) ||
		    ((lost & VOL_LEASE_TIED_ONLY) && !l->tied))
			continue;
		eff = lost & l->state;
		if (eff & l->tied)
			eff |= l->tied & l->state;
		if ((eff & VOL_LEASE_R) || ((lost & VOL_LEASE_OPEN_W) && l->recall_on_open_w))
			eff = l->state;
		wait = l->recall_on_open_w || !eff || (l->state & bits);
	}
	pthread_mutex_unlock(&s->lease_mu);
	return wait;
}

void vol_lease_revoke(struct vol_store *s, const struct vol_lock_key *key)
{
	pthread_mutex_lock(&s->lease_mu);
	(void)lease_revoke_locked(s, key, lease_now_ns());
	pthread_mutex_unlock(&s->lease_mu);
}

/* Break lost of the grants on k not of by's group, and wait (unless
 * by->nowait) for those that need an acknowledgment, each at most its
 * revoke time (vol_lease.h): whatever is still breaking then is revoked. */
static void lease_break_key(struct vol_store *s, const struct vol_lock_key *k, unsigned lost,
			    const struct vol_lease_by *by)
{
	uint64_t group = by ? by->group : 0, due;
	struct timespec until;

	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE) || !lost)
		return;
	pthread_mutex_lock(&s->lease_mu);
	if (lease_break_locked(s, k, lost, group) && !(by && by->nowait)) {
		while (lease_breaking_locked(s, k, group)) {
			if ((due = lease_revoke_locked(s, k, lease_now_ns())) == UINT64_MAX)
				continue; /* revoked all: breaking no more */
			until.tv_sec = (time_t)(due / 1000000000ull);
			until.tv_nsec = (long)(due % 1000000000ull);
			(void)pthread_cond_timedwait(&s->lease_cv, &s->lease_mu, &until);
		}
	}
	pthread_mutex_unlock(&s->lease_mu);
}

void vol_lease_break(struct vol_obj *obj, unsigned lost, const struct vol_lease_by *by)
{
	struct vol_lock_key k;

	if (!__atomic_load_n(&obj->exp->store->nleases, __ATOMIC_ACQUIRE) || !lost)
		return;
	vol_lock_key_of(obj, &k);
	lease_break_key(obj->exp->store, &k, lost, by);
}

/* Whether a grant made with recall_on_access on k, not of group, is
 * breaking (the mutex is held). */
static bool lease_recalling_locked(struct vol_store *s, const struct vol_lock_key *k, uint64_t group)
{
	for (struct vol_lease *l = s->leases; l; l = l->next)
		if (l->breaking && l->recall_on_access && lease_same(&l->key, k) && !(group && l->group == group))
			return true;
	return false;
}

bool vol_lease_access(struct vol_obj *obj, const struct vol_lease_by *by)
{
	struct vol_store *s = obj->exp->store;
	uint64_t group = by ? by->group : 0, due;
	struct vol_lock_key k;
	struct timespec until;
	bool wait;

	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE))
		return false;
	vol_lock_key_of(obj, &k);
	pthread_mutex_lock(&s->lease_mu);
	wait = lease_break_locked(s, &k, VOL_LEASE_ACCESS, group);
	/* only write delegations are waited for: an SMB lease breaking meanwhile
	 * holds no data a reader misses (its W went when this file was opened) */
	while (wait && !(by && by->nowait) && lease_recalling_locked(s, &k, group)) {
		if ((due = lease_revoke_locked(s, &k, lease_now_ns())) == UINT64_MAX)
			continue;
		until.tv_sec = (time_t)(due / 1000000000ull);
		until.tv_nsec = (long)(due % 1000000000ull);
		(void)pthread_cond_timedwait(&s->lease_cv, &s->lease_mu, &until);
	}
	pthread_mutex_unlock(&s->lease_mu);
	return wait;
}

/* The recall_on_access grant on k not of group (the mutex is held). */
static struct vol_lease *lease_askable_locked(struct vol_store *s, const struct vol_lock_key *k, uint64_t group)
{
	for (struct vol_lease *l = s->leases; l; l = l->next)
		if (l->recall_on_access && lease_same(&l->key, k) && !(group && l->group == group))
			return l;
	return NULL;
}

int vol_lease_ask(struct vol_obj *obj, const struct vol_lease_by *by, struct vol_lease_attr *out)
{
	struct vol_store *s = obj->exp->store;
	uint64_t group = by ? by->group : 0, t0, due = 0;
	struct vol_lock_key k;
	struct timespec until;
	struct vol_lease *l;
	int rc;

	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE))
		return 0;
	vol_lock_key_of(obj, &k);
	t0 = lease_now_ns();
	pthread_mutex_lock(&s->lease_mu);
	/* the grant is looked up again after every wait: its holder may have
	 * returned it (and freed its memory) meanwhile */
	for (;;) {
		if (!(l = lease_askable_locked(s, &k, group))) {
			rc = 0; /* returned: the store holds what it wrote */
			break;
		}
		if (!l->ask || l->breaking) {
			rc = -EBUSY;
			break;
		}
		if (by && by->nowait) {
			rc = -EAGAIN;
			break;
		}
		if (l->answered_ns > t0 && l->answered_ns >= l->asked_ns) {
			rc = l->answer_ok ? 1 : -EIO;
			if (l->answer_ok)
				*out = l->answer;
			break;
		}
		if (!due)
			due = t0 + (uint64_t)l->ask_ms * 1000000ull;
		if (lease_now_ns() >= due) {
			rc = -ETIMEDOUT;
			break;
		}
		if (l->asked_ns <= l->answered_ns) {
			l->asked_ns = lease_now_ns(); /* one ask out at a time: later askers take its answer */
			l->ask(l);
		}
		until.tv_sec = (time_t)(due / 1000000000ull);
		until.tv_nsec = (long)(due % 1000000000ull);
		(void)pthread_cond_timedwait(&s->lease_cv, &s->lease_mu, &until);
	}
	pthread_mutex_unlock(&s->lease_mu);
	return rc;
}

void vol_lease_answer(struct vol_store *s, struct vol_lease *l, const struct vol_lease_attr *a)
{
	pthread_mutex_lock(&s->lease_mu);
	l->answered_ns = lease_now_ns();
	l->answer_ok = a != NULL;
	if (a)
		l->answer = *a;
	pthread_cond_broadcast(&s->lease_cv);
	pthread_mutex_unlock(&s->lease_mu);
}

void vol_lease_attr_apply(const struct vol_lease_attr *a, struct stat *st)
{
	struct timespec m = { .tv_sec = (time_t)(a->mtime_ns / 1000000000ull),
			      .tv_nsec = (long)(a->mtime_ns % 1000000000ull) };

	st->st_size = (off_t)a->size;
	if (!a->mtime_ns)
		return;
	if (m.tv_sec > st->st_mtim.tv_sec || (m.tv_sec == st->st_mtim.tv_sec && m.tv_nsec > st->st_mtim.tv_nsec))
		st->st_mtim = m;
	if (m.tv_sec > st->st_ctim.tv_sec || (m.tv_sec == st->st_ctim.tv_sec && m.tv_nsec > st->st_ctim.tv_nsec))
		st->st_ctim = m;
}

void vol_lease_break_name(struct vol_obj *dir, const char *name, unsigned lost, const struct vol_lease_by *by)
{
	struct vol_store *s = dir->exp->store;
	struct vol_lock_key k;
	struct stat st;

	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE) || !lost)
		return;
	/* the caller checked the name; only its identity is read here */
	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode))
		return;
	k = (struct vol_lock_key){ .fsid = dir->exp->cfg.fsid, .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino };
	lease_break_key(s, &k, lost, by);
}

void vol_lease_contend_shared(struct vol_store *s, const struct vol_lock_key *key, uint64_t group)
{
	if (!__atomic_load_n(&s->nleases, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&s->lease_mu);
	for (struct vol_lease *l = s->leases, *nx; l; l = nx) {
		nx = l->next;
		if (!lease_same(&l->key, key) || (group && l->group == group) || l->breaking ||
		    !(l->state & VOL_LEASE_R) || (l->state & VOL_LEASE_W))
			continue;
		if (l->state != VOL_LEASE_R) {
			/* an SMB lease with H (RH) goes whole too, acknowledged
			 * (smbtorture smb2.lease.lock1); oplocks and delegations keep it */
			if (l->tied || l->recall_on_open_w)
				continue;
			l->breaking = true;
			l->breaking_to = l->breaking_next = 0;
			l->break_ns = lease_now_ns();
			l->brk(l, l->state);
			continue;
		}
		lease_unlink(s, l); /* R alone: nothing to flush, no acknowledgment */
		l->brk(l, VOL_LEASE_R);
	}
	pthread_mutex_unlock(&s->lease_mu);
}
