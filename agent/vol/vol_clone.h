/* vol_clone: block cloning between two files of one volume (FICLONERANGE:
 * btrfs, XFS with reflink), what SMB's FSCTL_DUPLICATE_EXTENTS_TO_FILE
 * asks for. The clone shares the source's blocks with the target (copy
 * on write), so it costs no data I/O and, where it replaces bytes the
 * target held, no space.
 */
#ifndef AQ_AGENT_VOL_CLONE_H
#define AQ_AGENT_VOL_CLONE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/vol/vol.h"

/* Whether the folder of the volume obj is in can clone blocks: probed as
 * the export was attached (vol_store_set: an unnamed file of the folder
 * cloned onto itself), so this does no I/O (any thread, the SMB loop's
 * too). False on ext4, tmpfs, XFS without reflink. */
bool vol_clone_supported(struct vol_obj *obj);

/* The clone granularity of the volume's file system (its block size). */
uint32_t vol_clone_unit(struct vol_obj *obj);

/* Clone [soff, soff+len) of src onto dst at doff (dst grows when the range
 * reaches past its end). Both regular files of the same volume, dst not in
 * a snapshot; offsets and len multiples of vol_clone_unit, except len may
 * end at src's end. The range must lie within src. Other clients' caches of
 * dst break (except by's), readers' and watchers' views are updated.
 * 0, or -EINVAL (misaligned, past src's end, overlapping in one file),
 * -EXDEV (another volume), -EOPNOTSUPP (no cloning here, or the source
 * range is in the cold tier), -EROFS, -EISDIR, -EACCES, or the shelf's error.
 * len 0 clones nothing. */
int vol_clone(struct vol_obj *src, const struct vol_cred *scred, uint64_t soff, struct vol_obj *dst,
	      const struct vol_cred *dcred, uint64_t doff, uint64_t len, const struct vol_lease_by *by);

#endif
