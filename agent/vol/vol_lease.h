/* vol_lease: the volume store's cached-open table (SMB oplocks and leases
 * now, an NFSv4.1 read delegation could use it too), protocol-neutral, so
 * that access to a file through any front end breaks what another front end
 * granted on it.
 *
 * A grant (struct vol_lease, the holder's memory) names a file by its
 * identity in the store (struct vol_lock_key, as vol_lock.h) and the caching
 * it allows (VOL_LEASE_* bits). Today only read caching is granted
 * (VOL_LEASE_R: SMB Level II oplocks and R leases): its break needs no
 * acknowledgment, so nothing ever waits on a holder. Handle and write
 * caching (which need an acknowledged break and a bounded wait of the
 * breaker) are refused with -EINVAL until they are built.
 *
 * Breaks: every store operation that changes a file's data (vol_write, and
 * vol_setattr of the size), whichever front end called it, takes every
 * read grant on that file off the table before it proceeds, and calls the
 * grant's brk(l, lost) on the caller's thread with the table's mutex held:
 * brk must only flag and signal (the SMB server sets a flag and writes its
 * loop's eventfd, then sends the break notification). The writer's own
 * grants are broken too (Windows breaks Level II oplocks of every open; a
 * lease holder that writes only re-reads). After the break the grant is
 * not held (vol_lease_held is false) and vol_lease_drop is a no-op on it.
 *
 * Cost: with no grant on the store an operation pays one atomic load.
 * Bounds: VOL_LEASE_MAX grants per store (-ENOSPC past it: the front end
 * grants nothing, which is always allowed). Thread-safe (one mutex).
 */
#ifndef AQ_AGENT_VOL_LEASE_H
#define AQ_AGENT_VOL_LEASE_H

#include <stdbool.h>

#include "agent/vol/vol_lock.h"

#define VOL_LEASE_R 0x1u   /* read caching (the SMB lease bits' values) */
#define VOL_LEASE_H 0x2u   /* handle caching: not granted yet */
#define VOL_LEASE_W 0x4u   /* write caching: not granted yet */
#define VOL_LEASE_MAX 65536u

struct vol_store;
struct vol_obj;

struct vol_lease {
	struct vol_lease *next;            /* the table's */
	struct vol_lock_key key;           /* set by the caller */
	void (*brk)(struct vol_lease *l, unsigned lost); /* set by the caller: flag and signal only */
	void *arg;                         /* the caller's */
	unsigned state;                    /* the table's: VOL_LEASE_* held, 0 once broken or dropped */
};

/* Grant state (VOL_LEASE_R only) on l->key: 0, -EINVAL (another state, or
 * l already held), -ENOSPC (VOL_LEASE_MAX). */
int vol_lease_grant(struct vol_store *s, struct vol_lease *l, unsigned state);
/* Take l off the table (its holder closes); nothing when not held. brk is
 * never called on l after. */
void vol_lease_drop(struct vol_store *s, struct vol_lease *l);
/* Whether l is still held (not broken, not dropped). */
bool vol_lease_held(struct vol_store *s, const struct vol_lease *l);
/* How many grants the store holds (tests, metrics). */
unsigned vol_lease_count(struct vol_store *s);

/* The hook the store's data-changing operations call (vol_io.c): break
 * the lost caching (VOL_LEASE_* bits) of every grant on obj's file.
 * Front ends never call it. */
void vol_lease_break(struct vol_obj *obj, unsigned lost);

#endif
