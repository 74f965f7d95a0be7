/* agent_backup: one backup job of the intent (api/api_intent_backup.h) run
 * against its vault with the backup engine (agent/bkp/bkp.h): the vault's
 * directory store at <shelf>/<store path>, the 32-byte key from the job.
 * Issue 21: the agent's backup worker runs it (agent_bkpq.h) for the jobs
 * aquiferd puts in the intent; a caller runs it off the event loop (it reads the
 * whole source and writes the store).
 *
 * Outcome in *st (the job's report), and the return code:
 *   AQ_OK         backup: READY, the manifest stored (a re-run of a
 *                 finished id is READY from bkp_info: idempotent after a
 *                 crash); delete: DELETED (the manifest gone, absent already
 *                 counts; the gc that frees chunks runs after, -EBUSY from a
 *                 running backup leaves it for the next delete);
 *                 restoreFiles: READY, every path restored into opts.src
 *                 (bkp_restore with paths: the first path the backup does
 *                 not hold fails it, ERROR naming that path)
 *   -EAGAIN       the store is down: UPLOADING, stateDetails the reason;
 *                 run the same job again later (chunks already stored are
 *                 not uploaded twice)
 *   other < 0     ERROR, stateDetails the reason (never the key)
 * A backup whose prevId the vault no longer holds runs as a full one (the
 * chunks dedup: only changed data is uploaded). */
#ifndef AQ_AGENT_BACKUP_H
#define AQ_AGENT_BACKUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "api/api_error.h"
#include "api/api_intent_backup.h"

struct agent_backup_opts {
	const char *src;        /* backup: the snapshot folder to back up; restoreFiles:
				 * the live volume's folder the files go into */
	bool strict_ident;      /* a btrfs snapshot (inode and ctime are kept) */
	/* progress while the backup runs (from the calling thread): done/total bytes */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
	/* the source's reader (bkp_opts.read: a tiered volume's snapshot reads
	 * its cold ranges from the tier); NULL: pread */
	ssize_t (*read)(void *arg, int fd, const char *path, void *buf, size_t len, uint64_t off);
	void *read_arg;
};

int agent_backup_run(const char *shelf, const struct api_intent_backup *job, const struct agent_backup_opts *o,
		     struct api_intent_backup_state *st);

/* A volume created from a backup (a restore job, api_intent_backup.h): the
 * whole backup restored into the folder dst, which must not exist. It is
 * restored into <dst>.restoring (made with snap_volume_make, emptied first:
 * a crash's leftovers) and renamed to dst when every file is in place, so dst
 * exists only whole; on failure nothing is left. AQ_OK, or a negative code
 * with the reason in msg (never the key). Runs in the calling thread. */
int agent_backup_restore(const char *shelf, const struct api_intent_backup *job, const char *dst, aq_msg *msg);

#endif
