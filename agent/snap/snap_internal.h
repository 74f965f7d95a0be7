/* snap_internal: what the files of agent/snap share. The contract is snap.h.
 *   snap.c       layout, manifests, create/delete/list/revert/clone
 *   snap_fs.c    the mechanisms: btrfs ioctls, the portable tree copy, removal
 *   snap_used.c  what a snapshot holds alone (FIEMAP)
 */
#ifndef AQ_AGENT_SNAP_INTERNAL_H
#define AQ_AGENT_SNAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/snap/snap.h"

/* What a copy's objects carry: the snapshot mark (a snapshot), or no mark
 * (a clone or a revert: their volume's attach marks them). */
enum snap_copy_mark { SNAP_COPY_SNAPMARK = 1, SNAP_COPY_NOMARK = 2 };

/* Whether the folder fd is a btrfs subvolume's root. */
bool snap_fs_is_subvol(int fd);
/* A snapshot of the subvolume srcfd named name in dirfd (read-only when
 * rdonly): BTRFS_IOC_SNAP_CREATE_V2. */
int snap_fs_btrfs_snap(int srcfd, int dirfd, const char *name, bool rdonly);
/* A new subvolume name in dirfd: BTRFS_IOC_SUBVOL_CREATE. */
int snap_fs_btrfs_subvol(int dirfd, const char *name);
/* Copy the tree below srcfd into a new folder name of dirfd, object by
 * object (FICLONE, else copy_file_range of the data ranges only), keeping
 * owners, modes, times, hard links, extended attributes (but neither mark);
 * with SNAP_COPY_SNAPMARK every object gets VOL_SNAP_MARK = fsid and every
 * regular file VOL_SNAP_ID = snapid (how the cold tier tells its snapshot). */
int snap_fs_copy(int srcfd, int dirfd, const char *name, enum snap_copy_mark mark, uint64_t fsid, const char *snapid);
/* Remove name in dirfd and everything below it (a subvolume at once). */
int snap_fs_remove(int dirfd, const char *name);

#endif
