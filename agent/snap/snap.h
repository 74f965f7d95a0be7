/* snap: volume snapshots on the shelf (issue 20): create, delete, list,
 * revert, clone, and what each one holds alone.
 *
 * Layout (all on the shelf, outside every export root, so any node mounting
 * the shelf finds the same snapshots and every object in them keeps its
 * kernel handle across failover):
 *   <shelf>/.snapshots/<name>/<id>       the snapshot roots of volume <name>
 *                                        (the last part of its dir, the fsid);
 *                                        this folder is what /.snapshot serves
 *   <shelf>/.snapshots/<name>.meta/<id>  its manifest: "uid=U\ncreate=T\n",
 *                                        plus "error=TEXT\n" for a snapshot
 *                                        that could not be made (state ERROR)
 *   <shelf>/.snapshots/<name>.meta/.revert  the last revert seq applied
 *   <shelf>/.snapshots/.work/            temporary names, emptied at start
 *
 * Mechanism, per volume (snap_mech): SNAP_BTRFS when the volume's folder is
 * a btrfs subvolume (snap_volume_make makes every new folder one on a btrfs
 * shelf): a snapshot is a read-only btrfs snapshot, O(1) in data and files,
 * sharing every extent; a clone or a revert is a writable snapshot of it.
 * SNAP_COPY anywhere else: the tree is cloned file by file (FICLONE where the
 * file system shares extents, e.g. XFS; else copy_file_range), O(files) with
 * reflink, O(data) without. Copies carry no containment mark of the live
 * volume (VOL_MARK, vol.h): a snapshot's objects carry VOL_SNAP_MARK = fsid
 * instead, a clone's or a revert's get their volume's mark when it is
 * attached. (A btrfs snapshot needs neither: it is a subvolume with an
 * st_dev of its own, which vol's handle check compares.)
 *
 * Crash safety: a snapshot exists iff its root has its final name. Create:
 * manifest (durable) -> a btrfs snapshot straight under its name (one ioctl,
 * committed whole), or a copy under .work -> syncfs -> rename into place ->
 * fsync the folder. Delete: the subvolume in one ioctl, or rename the copy
 * into .work (durable) and remove it; then drop the manifest. Revert: writable copy under .work ->
 * renameat2(RENAME_EXCHANGE) with the live folder -> seq (durable) -> remove
 * the old tree. Clone: writable copy under .work -> rename to the volume's
 * folder. snap_shelf_init removes what .work holds and manifests without a
 * root, so kill -9 at any step leaves each snapshot whole or absent and the
 * live volume either its old or its new content, whole.
 *
 * Errors: negative errno, with a message for the log in *msg where given.
 * Thread-safe for different volumes; calls for one volume are serialized by
 * the caller (the agent applies intents one at a time).
 */
#ifndef AQ_AGENT_SNAP_H
#define AQ_AGENT_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api_error.h"
#include "api/api_intent.h"

#define SNAP_DIR ".snapshots"

enum snap_mech { SNAP_COPY = 1, SNAP_BTRFS = 2 };

struct snap_info {
	struct api_intent_snap snap;
	bool ready;                    /* false: the create failed (detail says why) */
	char detail[API_INTENT_SNAP_DETAIL_LEN + 1];
	int64_t create_unix;
};

/* Make <shelf>/.snapshots and its .work, empty .work (a crash's leftovers),
 * drop manifests without a root; *mech: what new volumes on this shelf get. */
int snap_shelf_init(const char *shelf, enum snap_mech *mech, aq_msg *msg);
const char *snap_mech_name(enum snap_mech m);
/* The mechanism of the volume whose folder is root. */
enum snap_mech snap_mech_of(const char *root);
/* Make a volume's folder path (mode applied exactly): a btrfs subvolume on a
 * btrfs shelf, else a directory. -EEXIST when it exists. */
int snap_volume_make(const char *path, unsigned mode);
/* Remove a tree for good (subvolumes included); gone already is fine. */
int snap_tree_remove(const char *path);

/* The folder /.snapshot serves for volume name (may not exist yet). */
void snap_dir_of(const char *shelf, const char *name, char *out, size_t cap);
/* Snapshot root of the live folder root as snapshot s of volume name,
 * marked for fsid. -EEXIST when it exists already. A failure is recorded
 * (snap_list reports it with state ERROR and its reason). */
int snap_create(const char *shelf, const char *name, const char *root, uint64_t fsid,
		const struct api_intent_snap *s, aq_msg *msg);
/* Delete snapshot id (gone already is 0); uid must match when given. */
int snap_delete(const char *shelf, const char *name, const struct api_intent_snap *s, aq_msg *msg);
/* Every snapshot of volume name (at most cap), in no order. */
int snap_list(const char *shelf, const char *name, struct snap_info *out, size_t cap, size_t *n);
/* Whether snapshot s (id and uid) exists (ready or failed); whether any
 * snapshot has that id. */
bool snap_exists(const char *shelf, const char *name, const struct api_intent_snap *s);
bool snap_id_used(const char *shelf, const char *name, const char *id);
/* What a clone runs over its staged copy before the copy gets its final
 * name: fn(arg, dirfd, name) with the copy at name in dirfd; non-zero
 * (-errno) fails the clone and nothing is left at dst. The tier fills the
 * holes where the snapshot's chunks were cold (tier_snap_fill). */
struct snap_fill {
	int (*fn)(void *arg, int dirfd, const char *name);
	void *arg;
};
/* The live folder root becomes snapshot s's content, once per seq: 0 when
 * done (or seq was applied already). fill (may be NULL) runs over the staged
 * copy before the exchange. */
int snap_revert(const char *shelf, const char *name, const char *root, const struct api_intent_snap *s,
		uint64_t seq, const struct snap_fill *fill, aq_msg *msg);
uint64_t snap_revert_seq(const char *shelf, const char *name);
/* Make the folder dst (which must not exist) a writable copy of snapshot s
 * of volume src_name; fill (may be NULL) runs over the copy first. */
int snap_clone(const char *shelf, const char *src_name, const struct api_intent_snap *s, const char *dst,
	       const struct snap_fill *fill, aq_msg *msg);
/* Volume name was deleted: all its snapshots and manifests go. */
int snap_destroy_volume(const char *shelf, const char *name);

/* Bytes snapshot id of volume name holds alone: extents shared with nothing
 * else (FIEMAP_EXTENT_SHARED) of its regular files; slow (walks the tree):
 * call it off the request path. */
int snap_used_bytes(const char *shelf, const char *name, const char *id, uint64_t *bytes);

#endif
