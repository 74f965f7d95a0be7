/* agent_lease: a disk lease on a shelf namespace, the pure half (issue 24).
 *
 * fence=lease guards a volume's namespace with a lease written on the
 * namespace itself, in the manner of sanlock's delta leases: one 512-byte
 * record (agent_lease_rec) in the namespace's last MiB, outside the
 * volume's file system, holding the owner's host id, a generation (one more
 * at every take-over) and a counter the owner bumps at every renewal. No
 * clock is shared between nodes: a taker reads the record, keeps reading it
 * for longer than the lease timeout and takes it only if nothing changed in
 * that time; then it writes its own id, waits, and reads again to confirm
 * that no other taker wrote over it. The owner renews every renew_ms
 * (read, check it is still its record, write the counter + 1) and counts
 * the lease lost, without writing, when expire_ms passed since the start of
 * its last renewal that succeeded: expire_ms < timeout_ms, so a partitioned
 * or stopped owner stops serving before any taker's wait ends.
 *
 * Everything here is pure: the caller reads and writes the record (O_DIRECT
 * on the namespace; a file in the unit tests) and passes its monotonic clock
 * in milliseconds. agent_shelf_lease.c does the I/O. Unit tests:
 * tests/agent/test_agent_lease.c; fuzzed by fuzz/fuzz_agent_nvme.c.
 * Design and timings: docs/internals/shelf.md.
 */
#ifndef AQ_AGENT_LEASE_H
#define AQ_AGENT_LEASE_H

#include <stddef.h>
#include <stdint.h>

#define AGENT_LEASE_REC 512                    /* the record: one sector */
#define AGENT_LEASE_AREA (1024u * 1024u)       /* the area kept at the namespace's end */
#define AGENT_LEASE_NAME_MAX 64                /* the owner's node name, for people */
#define AGENT_LEASE_MAGIC "AQLEASE1"

/* Timings (milliseconds), agent_lease_init's defaults. */
#define AGENT_LEASE_RENEW_MS 2000   /* the owner renews this often */
#define AGENT_LEASE_EXPIRE_MS 6000  /* ...and stops serving when no renewal succeeded for this long */
#define AGENT_LEASE_TIMEOUT_MS 10000 /* a taker waits this long seeing no change */
#define AGENT_LEASE_SETTLE_MS 1000  /* a taker reads again this long after its write */

enum agent_lease_state { AGENT_LEASE_FREE = 0, AGENT_LEASE_HELD = 1 };

/* The record as parsed. blank: the area was never written (all zero). */
struct agent_lease_rec {
	int blank;
	enum agent_lease_state state;
	uint64_t owner;     /* the owner's host id (0: none) */
	uint64_t gen;       /* take-overs of this lease */
	uint64_t counter;   /* renewals by this owner */
	uint64_t wall_ms;   /* the owner's wall clock at the write (for people only) */
	uint32_t timeout_ms; /* the timeout the owner runs with (for people only) */
	char name[AGENT_LEASE_NAME_MAX + 1];
	uint8_t id[16];     /* the volume's namespace id: a record of another volume is refused */
};

/* Parse len bytes (at least AGENT_LEASE_REC read). 0, or -EPROTO: not a
 * lease record (bad magic, version, state, name, checksum) and not blank;
 * -EINVAL: len too short. Nothing past AGENT_LEASE_REC is read. */
int agent_lease_parse(const uint8_t *buf, size_t len, struct agent_lease_rec *out);
/* Encode r into out (AGENT_LEASE_REC bytes). */
void agent_lease_encode(const struct agent_lease_rec *r, uint8_t out[AGENT_LEASE_REC]);

/* Where the lease lives on a namespace of bytes bytes: its last MiB.
 * -ENOSPC when the namespace is smaller than 16 MiB. */
int64_t agent_lease_offset(uint64_t bytes);
/* The bytes an ext2/3/4 file system claims, from its superblock (the 1024
 * bytes at offset 1024 of the device; len bytes of it). -EPROTO: no ext
 * superblock, or a size that overflows. */
int64_t agent_lease_ext4_bytes(const uint8_t *sb, size_t len);

/* One lease, as this node sees it. */
enum agent_lease_phase {
	AGENT_LEASE_IDLE = 0, /* not asked for */
	AGENT_LEASE_WATCH,    /* another node's record: waiting for it to stay unchanged */
	AGENT_LEASE_CONFIRM,  /* our record written: reading it again after settle */
	AGENT_LEASE_OWNED,    /* ours */
	AGENT_LEASE_LOST,     /* was ours; another node took it, or renewal failed too long */
};

struct agent_lease {
	uint64_t me;
	char name[AGENT_LEASE_NAME_MAX + 1];
	uint8_t id[16];
	unsigned renew_ms, expire_ms, timeout_ms, settle_ms;
	enum agent_lease_phase phase;
	struct agent_lease_rec seen; /* the record as last read (WATCH) */
	uint64_t since;   /* WATCH: when seen was first read unchanged; CONFIRM: when written */
	uint64_t ok;      /* OWNED: the start of the last renewal that succeeded */
	uint64_t gen, counter; /* our record (CONFIRM, OWNED) */
	uint64_t lost_to; /* LOST: the owner that took it (0: renewal expired) */
};

/* A lease of volume id for host me (name: for people) with the default timings. */
void agent_lease_init(struct agent_lease *l, uint64_t me, const char *name, const uint8_t id[16]);

/* Every timing from the lease timeout (ms, 1000..600000; the defaults are
 * those of 10 s): renew timeout/5, expire 3*timeout/5, settle timeout/10. */
void agent_lease_set_timeout(struct agent_lease *l, unsigned timeout_ms);

/* What the caller does next. */
enum agent_lease_act {
	AGENT_LEASE_ACT_WAIT = 1,  /* read again after *wait_ms */
	AGENT_LEASE_ACT_WRITE = 2, /* write out, then read again after *wait_ms */
	AGENT_LEASE_ACT_DONE = 3,  /* the lease is ours (OWNED) */
};

/* Acquire: feed the record just read at now (ms, monotonic). Returns an
 * act, or -EBUSY (another taker won the confirm race), -EPROTO (the area
 * holds something that is not a lease: refuse, never overwrite), -EXDEV (a
 * record of another volume). A free or blank record, or our own (this node
 * restarted), is written at once; another owner's is written only after
 * timeout_ms in which it did not change. */
int agent_lease_acquire_step(struct agent_lease *l, uint64_t now, const uint8_t *buf, size_t len,
			     uint8_t out[AGENT_LEASE_REC], unsigned *wait_ms);

/* Renew (OWNED): feed the record just read; start is when this renewal
 * began (before the read). AGENT_LEASE_ACT_WRITE with out filled, or
 * -ESTALE: the lease is lost (LOST): expired since the last success, or the
 * record names another owner or generation; never write then. A record of
 * an older generation than ours is a stale write of a fenced owner: we
 * write ours over it. */
int agent_lease_renew_step(struct agent_lease *l, uint64_t start, const uint8_t *buf, size_t len,
			   uint8_t out[AGENT_LEASE_REC]);
/* The renewal's write completed at now: 0 (ok = start), or -ESTALE (LOST)
 * when it completed past the expiry: it does not count. */
int agent_lease_renewed(struct agent_lease *l, uint64_t start, uint64_t now);
/* A renewal's I/O failed at now: 0 while the lease still holds, -ESTALE (LOST) once expired. */
int agent_lease_renew_failed(struct agent_lease *l, uint64_t now);
/* Is the lease ours at now (OWNED and within expire_ms of the last renewal)? */
int agent_lease_valid(const struct agent_lease *l, uint64_t now);
/* The record that gives the lease back (FREE, our generation): a taker
 * need not wait. */
void agent_lease_release_rec(struct agent_lease *l, uint8_t out[AGENT_LEASE_REC]);

#endif
