/* agent_shelf_lease: fence=lease of the NVMe-oF shelf, the I/O half (issue
 * 24). The record and the state machine are agent_lease.h's; here they meet
 * the namespace (O_DIRECT reads and writes of its last MiB) and a clock, and
 * two threads per shelf keep the leases this node holds: a renewer (the
 * I/O, every AGENT_LEASE_RENEW_MS) and a watcher (no I/O: a renewal stuck
 * on a dead fabric cannot delay it) that stops serving a volume whose lease
 * is no longer valid: its ext4 is shut down (EXT4_IOC_SHUTDOWN, no log
 * flush: nothing more reaches the namespace, every access fails with EIO)
 * and detached. Design: docs/internals/shelf.md.
 *
 * Return codes: 0 or -errno: -EBUSY another node holds the lease and keeps
 * renewing it, -EPROTO the area holds something that is not a lease,
 * -EXDEV it is another volume's lease, -ENOSPC the file system reaches into
 * the lease area.
 */
#ifndef AQ_AGENT_SHELF_LEASE_H
#define AQ_AGENT_SHELF_LEASE_H

#include <stdint.h>

struct agent_shelf_leases;

/* Called by the watcher thread for a volume it fences, after its file
 * system was shut down and before it is detached (mp still names it): the
 * store lets go of its descriptors there, or the shut-down file system
 * would live on under them and a later mount of the device get it back. */
typedef void (*agent_shelf_fenced_fn)(void *ctx, const char *mp);

/* The leases of host me (named node) on one shelf, with the lease timeout
 * timeout_ms (agent_lease_set_timeout); threads start with the first take.
 * fenced (may be NULL) with ctx: see above. */
struct agent_shelf_leases *agent_shelf_lease_new(uint64_t me, const char *node, unsigned timeout_ms,
						 agent_shelf_fenced_fn fenced, void *ctx);
/* Stop the threads and free (NULL ok). Leases stay written: this node's
 * next agent takes its own back at once. */
void agent_shelf_lease_free(struct agent_shelf_leases *ls);

/* Can dev carry a lease (a file system, if any, ends before the area)?
 * *blocks: the 4 KiB blocks a new file system may span. */
int agent_shelf_lease_fits(const char *dev, uint64_t *blocks);

/* Take the lease of volume fsid (namespace id) on dev before mp is
 * mounted; blocks while another owner's record must be watched (at most 3
 * lease timeouts). Taking a lease this node holds is a no-op. */
int agent_shelf_lease_take(struct agent_shelf_leases *ls, const char *fsid, const char *dev, const uint8_t id[16],
			   const char *mp);
/* The process is stopping (NULL ok): a take waiting for another node's
 * record gives up at once with -ECANCELED, and every later one too, so a
 * SIGTERM never waits up to 3 lease timeouts behind an attach. */
void agent_shelf_lease_quit(struct agent_shelf_leases *ls);
/* Is fsid's lease held and valid now? */
int agent_shelf_lease_held(struct agent_shelf_leases *ls, const char *fsid);
/* Give it back once mp is unmounted (a FREE record: a taker need not wait). */
void agent_shelf_lease_give(struct agent_shelf_leases *ls, const char *fsid);
/* Stop a file system this node may no longer write: shut it down (no log
 * flush), tell the fenced callback, then detach it. */
void agent_shelf_lease_fence_mount(struct agent_shelf_leases *ls, const char *mp, const char *fsid, const char *why);

#endif
