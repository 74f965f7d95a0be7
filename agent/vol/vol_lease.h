/* vol_lease: the volume store's cached-open table (SMB oplocks and leases,
 * NFSv4.1 read delegations: R|H grants made with recall_on_open_w, and
 * write delegations: R|W|H grants made with recall_on_access, which any
 * access of another group takes whole), protocol-neutral, so that
 * access to a file through any front end breaks what another front end
 * granted on it.
 *
 * A grant (struct vol_lease, the holder's memory) names a file by its
 * identity in the store (struct vol_lock_key, as vol_lock.h), the caching
 * it allows (VOL_LEASE_* bits: R alone, RH, RW or RWH), the holder's group
 * (the grants of one cache: an SMB lease key on one connection, or one
 * oplock; an operation made for that group breaks none of them) and the
 * bits the holder loses together (an oplock's H and W: `tied`).
 *
 * Breaks: every store operation that changes a file's data (vol_write, and
 * vol_setattr of the size), whichever front end called it, breaks R and W
 * of every grant of another group on that file (losing R loses all: a
 * cache that cannot be read from holds nothing), and calls the grant's
 * brk(l, lost) on the caller's thread with the table's mutex held: brk
 * must only flag and signal (the SMB server sets a flag and writes its
 * loop's eventfd, then sends the break notification).
 * - A break that takes only R is done at once: the grant's state drops,
 *   and a grant left with nothing is off the table.
 * - A break that takes H or W needs the holder's acknowledgment (it may
 *   have dirty data or handles to close): the grant stays on the table,
 *   `breaking` with `breaking_to`, until vol_lease_ack, vol_lease_drop, or
 *   the grant's revoke time revokes it: the store's break timeout
 *   (vol_lease_set_timeout, 35 s by default as Windows), or the grant's own
 *   revoke_ms when its holder has a longer one (an NFSv4.1 delegation is
 *   revoked by its front end at the lease time after its recall went out,
 *   and sets revoke_ms past that): a waiter never gives up before the holder
 *   is revoked. A revoked tied grant (an oplock) drops to breaking_next
 *   without the holder; one made with recall_on_open_w, or untied (an SMB
 *   lease: Windows takes the whole lease, smbtorture smb2.lease.timeout),
 *   goes whole, an untied one's brk told what it lost.
 *   The caller of vol_write / vol_setattr waits for that, on a condition
 *   variable, holding no other store lock (the break is the first thing the
 *   operation does), unless its vol_lease_by says nowait (a front end's
 *   event loop, which must never block: the SMB server, whose own writes
 *   never need an acknowledgment of another group, since a CREATE of
 *   another client broke W before it could write).
 * A rename or unlink of a file (vol_rename, vol_remove: the name a client
 * caches a handle to changes) breaks H of every grant of another group on
 * it and waits the same way (vol_rename_by / vol_remove_by: a front end's
 * own group, nowait).
 * Front ends that open files (SMB CREATE) contend with vol_lease_contend,
 * which starts the breaks and never waits: the front end waits itself
 * (vol_lease_breaking) and asks the store to revoke at its timeout
 * (vol_lease_revoke, which revokes only the grants whose revoke time has
 * passed: the front end waits on for the others).
 *
 * A reader of attributes only (NFSv3 GETATTR, another v4.1 client's
 * GETATTR) may ask a recall_on_access grant's holder instead of recalling
 * it (vol_lease_ask): the grant's ask hook flags and signals, the holder's
 * front end asks (NFSv4.1 CB_GETATTR) and calls vol_lease_answer; the
 * reader waits at most the grant's ask_ms, then recalls.
 *
 * Cost: with no grant on the store an operation pays one atomic load.
 * Bounds: VOL_LEASE_MAX grants per store (-ENOSPC past it: the front end
 * grants nothing, which is always allowed). Thread-safe (one mutex).
 */
#ifndef AQ_AGENT_VOL_LEASE_H
#define AQ_AGENT_VOL_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/vol/vol_lock.h"

#define VOL_LEASE_R 0x1u   /* read caching (the SMB lease bits' values) */
#define VOL_LEASE_H 0x2u   /* handle caching */
#define VOL_LEASE_W 0x4u   /* write caching */
/* Not a caching bit: what an open for writing passes to vol_lease_contend
 * to break, besides what it names, every grant made with recall_on_open_w
 * (an NFSv4.1 read delegation: a writer's open recalls it, RFC 8881 10.4.2),
 * whole and waiting for its return. */
#define VOL_LEASE_OPEN_W 0x8u
/* Not a caching bit: what an opener passes to vol_lease_contend to break
 * only grants with tied bits (oplocks), no lease or delegation: an SMB open
 * for attributes and READ_CONTROL only (smbd's lease stat open). */
#define VOL_LEASE_TIED_ONLY 0x10u
/* Not a caching bit either: what a read of a file's data or attributes
 * passes (vol_lease_access, vol_lease_contend) to recall every grant made
 * with recall_on_access (an NFSv4.1 write delegation: the holder's cached
 * writes and size must reach the store before anyone else looks, RFC 8881
 * 10.4.3); other grants lose nothing by it. */
#define VOL_LEASE_ACCESS 0x20u
#define VOL_LEASE_MAX 65536u
#define VOL_LEASE_TIMEOUT_MS 35000u /* the default break timeout (Windows' OplockBreakWait) */

struct vol_store;
struct vol_obj;
struct stat;

/* What a write delegation's holder says of its file when asked
 * (vol_lease_ask; NFSv4.1 CB_GETATTR): the size it caches, and since when
 * its cached writes changed the file (CLOCK_REALTIME ns: the time the
 * front end first heard of the change; 0: none since the grant). */
struct vol_lease_attr {
	uint64_t size;
	uint64_t mtime_ns;
};

struct vol_lease {
	struct vol_lease *next;            /* the table's */
	struct vol_lock_key key;           /* set by the caller */
	uint64_t group;                    /* set by the caller: nonzero, its cache */
	unsigned tied;                     /* set by the caller: bits lost together (0 or H|W) */
	void (*brk)(struct vol_lease *l, unsigned lost); /* set by the caller: flag and signal only */
	void *arg;                         /* the caller's */
	bool recall_on_open_w;             /* set by the caller: VOL_LEASE_OPEN_W breaks it whole */
	bool recall_on_access;             /* set by the caller: any break of another group (any lost bit,
					    * VOL_LEASE_ACCESS included) takes it whole: no other access
					    * at all may go by it (an NFSv4.1 write delegation) */
	unsigned revoke_ms;                /* set by the caller: how long a break of it may wait before
					    * the store revokes it (0: the store's break timeout) */
	void (*ask)(struct vol_lease *l);  /* set by the caller, may be NULL: a recall_on_access grant whose
					    * holder can be asked for the file's size and change instead of
					    * being recalled (vol_lease_ask): flag and signal only, as brk;
					    * the holder's answer comes with vol_lease_answer */
	unsigned ask_ms;                   /* set by the caller with ask: how long an asker waits */
	uint64_t asked_ns, answered_ns;    /* the table's: the last ask and answer (CLOCK_MONOTONIC) */
	bool answer_ok;                    /* the table's: the last answer came with attributes */
	struct vol_lease_attr answer;      /* the table's: they */
	unsigned state;                    /* the table's: VOL_LEASE_* held, 0 once broken or dropped */
	unsigned breaking_to;              /* the table's: while breaking, what the ack may keep */
	unsigned breaking_next;            /* the table's: what breaks since then leave (within breaking_to) */
	bool breaking;                     /* the table's: a break waits for the holder's ack */
	uint64_t break_ns;                 /* the table's: when the break began (CLOCK_MONOTONIC) */
};

/* Who makes a data-changing operation: grants of `group` are not broken;
 * nowait: the caller never waits for an acknowledgment. */
struct vol_lease_by {
	uint64_t group;
	bool nowait;
};

/* Grant state (R, RH, RW or RWH) on l->key: 0, -EINVAL (another state, no
 * group, or l already held), -ENOSPC (VOL_LEASE_MAX). Whether the caching
 * is compatible with other opens is the front end's decision. */
int vol_lease_grant(struct vol_store *s, struct vol_lease *l, unsigned state);
/* Raise held l, not breaking, to state, a superset of what it holds (a
 * cache of several grants grew: each holds what the cache holds, so that
 * the one left when others close still carries it): 0, or -EINVAL (not
 * held, breaking, not a superset, not a valid state; nothing changes). */
int vol_lease_upgrade(struct vol_store *s, struct vol_lease *l, unsigned state);
/* Take l off the table (its holder closes); nothing when not held. brk is
 * never called on l after; a breaker waiting on it goes on. */
void vol_lease_drop(struct vol_store *s, struct vol_lease *l);
/* Whether l is still held (not broken to nothing, not dropped). */
bool vol_lease_held(struct vol_store *s, const struct vol_lease *l);
/* l's state, and (when breaking) what its break leaves, under the mutex. */
unsigned vol_lease_state(struct vol_store *s, const struct vol_lease *l, bool *breaking, unsigned *breaking_to);
/* The holder acknowledges l's break keeping `state`: 0, -EINVAL when l is
 * not breaking, -EPERM when state is not within breaking_to (nothing
 * changes). A state of 0 takes l off the table. Waiting breakers go on.
 * Breaks that came while l was breaking lowered what it may keep
 * (breaking_next): an ack keeping more starts the next break at once
 * (brk is called again, from the acknowledging thread); an untied grant
 * without recall_on_open_w (an SMB lease) that keeps H or W steps through
 * R: breaking_to is R then, and R goes at the next ack (Windows). */
int vol_lease_ack(struct vol_store *s, struct vol_lease *l, unsigned state);
/* How many grants the store holds (tests, metrics). */
unsigned vol_lease_count(struct vol_store *s);
/* The break timeout in milliseconds (1 .. 3600000; -EINVAL otherwise). */
int vol_lease_set_timeout(struct vol_store *s, unsigned ms);
unsigned vol_lease_timeout(struct vol_store *s);

/* An open of key by group: break `lost` of every grant of another group
 * (as a write does, but never waiting). Returns whether a grant of another
 * group on key is breaking (the opener must wait for it). */
bool vol_lease_contend(struct vol_store *s, const struct vol_lock_key *key, unsigned lost, uint64_t group);
/* Whether a grant of another group than `group` on key is breaking. */
bool vol_lease_breaking(struct vol_store *s, const struct vol_lock_key *key, uint64_t group);
/* Whether an opener of key (group) that has just contended `lost` waits
 * for a break: a grant of another group on key is breaking and either
 * still holds one of `bits` (what this opener waits for: an SMB CREATE the
 * share modes allow W, one they refuse H; MS-SMB2 3.3.4.7), or holds
 * nothing `lost` takes (the break is another's: the opener waits for its
 * end), or was made with recall_on_open_w (a recall is always waited for).
 * An opener whose break takes only what it does not wait for goes on
 * (smbtorture smb2.lease.breaking4: an overwrite and RH). */
bool vol_lease_waits(struct vol_store *s, const struct vol_lock_key *key, uint64_t group, unsigned lost, unsigned bits);
/* Every breaking grant on key whose revoke time passed (the store's break
 * timeout, or its revoke_ms) drops to its breaking_next without the
 * holder's ack when tied (an oplock), else goes whole (a recall_on_open_w
 * grant; an untied one, an SMB lease, with brk called with what it lost);
 * the others go on breaking (vol_lease_breaking still says so). */
void vol_lease_revoke(struct vol_store *s, const struct vol_lock_key *key);

/* The hook the store's data-changing operations call (vol_io.c): break
 * the lost caching (VOL_LEASE_* bits) of every grant on obj's file not of
 * by's group (by NULL: all), and wait (unless by->nowait) for the breaks
 * that need an acknowledgment, at most each one's revoke time. Front ends never
 * call it. */
void vol_lease_break(struct vol_obj *obj, unsigned lost, const struct vol_lease_by *by);
/* The same for the file `name` (a checked name, not a folder) in dir:
 * what the store's rename and unlink call (vol_ns.c) before the name
 * changes, with H: a client caching a handle to the file closes it or
 * gives H back first, as a CREATE that the share modes refuse waits for
 * (MS-SMB2 3.3.4.7; smbtorture smb2.lease.rename_wait). Nothing when the
 * name is gone or a folder. Front ends never call it. */
void vol_lease_break_name(struct vol_obj *dir, const char *name, unsigned lost, const struct vol_lease_by *by);
/* A read of obj's data or attributes, or a byte-range lock, from a front
 * end (NFSv3 READ, GETATTR, SETATTR, WRITE; NLM) made by by's group (by
 * NULL: none): recall every grant on obj's file made with
 * recall_on_access not of that group, and (unless by->nowait) wait for it
 * to be returned or revoked, as vol_lease_break. Returns whether one was
 * breaking when the call began: the caller refreshes what it read of the
 * file after waiting; with nowait it knows that it would wait (an event
 * loop hands its role on first, then calls again without nowait). */
bool vol_lease_access(struct vol_obj *obj, const struct vol_lease_by *by);
/* A read of obj's attributes only (NFSv3 GETATTR, another v4.1 client's
 * GETATTR of size or change) made by by's group (by NULL: none): when a
 * recall_on_access grant of another group with an ask hook is on obj's
 * file, ask its holder (l->ask) for the size and change it caches instead
 * of recalling it (RFC 8881 10.4.3), and wait at most the grant's ask_ms
 * for vol_lease_answer. Returns 0 when no such grant is in the way (the
 * store's attributes are current), 1 with the holder's answer in *out
 * (vol_lease_attr_apply puts it on a stat), -EAGAIN when by->nowait and
 * the caller would wait (nothing asked: an event loop hands its role on,
 * then calls again without nowait), and -EBUSY (a grant without ask hook,
 * or being recalled), -ETIMEDOUT (no answer in time) or -EIO (the holder
 * could not answer): the caller recalls instead (vol_lease_access). */
int vol_lease_ask(struct vol_obj *obj, const struct vol_lease_by *by, struct vol_lease_attr *out);
/* The holder of l answers the last ask: with a (NULL: it could not). */
void vol_lease_answer(struct vol_store *s, struct vol_lease *l, const struct vol_lease_attr *a);
/* Put an answer on a file's stat: its size, and when the holder changed
 * the file, mtime and ctime no earlier than then (the change attribute
 * that other clients compare moves on). */
void vol_lease_attr_apply(const struct vol_lease_attr *a, struct stat *st);
/* A byte-range lock on key by group (0: any): every grant holding R alone
 * (a Level II oplock, an R lease) of another group loses it, at once and
 * without acknowledgment, as Windows breaks Level II on a lock (smbtorture
 * smb2.oplock.brl1/3); an SMB lease holding RH (untied, not
 * recall_on_open_w) is broken to nothing and that break acknowledged
 * (smb2.lease.lock1). Nothing waits. A Level II holder's own lock breaks its own. */
void vol_lease_contend_shared(struct vol_store *s, const struct vol_lock_key *key, uint64_t group);

#endif
