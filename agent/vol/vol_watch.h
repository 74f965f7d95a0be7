/* vol_watch: change notification of the volume store, protocol-neutral
 * (issue 18: SMB2 CHANGE_NOTIFY; an NFSv4.1 directory delegation could use
 * it too).
 *
 * Every namespace and write operation of the store (vol_create, vol_mkdir,
 * vol_symlink, vol_mknod, vol_link, vol_remove, vol_rmdir, vol_rename,
 * vol_setattr, vol_write), whichever front end called it, reports what it
 * changed to the watches of its volume: a watch names a directory (by its
 * path from the export root, taken when the watch is added), the changes it
 * wants (a mask of VOL_WATCH_*) and whether the directories below it count
 * (tree). A change is reported in the directory that holds the name:
 *   create, mkdir, symlink, mknod, link   ADDED (FILE_NAME, DIR_NAME for a directory)
 *   remove, rmdir                         REMOVED
 *   rename in one directory               RENAMED_OLD then RENAMED_NEW
 *   rename between directories            REMOVED in the old, ADDED in the new
 *   setattr                               MODIFIED (ATTRIBUTES for mode and owner,
 *                                         SIZE, LAST_WRITE, LAST_ACCESS for what was set)
 *   write                                 MODIFIED (LAST_WRITE, SIZE when the file grew)
 * Names are relative to the watched directory, '/'-separated (a tree
 * watch sees "sub/dir/name"). The removal of the watched directory itself
 * marks the watch gone (vol_watch_gone).
 *
 * Queue: the events of a watch wait in it, oldest first, until the owner
 * takes them; past VOL_WATCH_QUEUE_MAX events (or VOL_WATCH_QUEUE_BYTES of
 * names) the queue is dropped and marked overflowed: the owner learns that
 * changes were lost (SMB answers STATUS_NOTIFY_ENUM_DIR), never which.
 * Nothing blocks: a change that finds the queue full costs the same.
 *
 * Cost: with no watch on a volume an operation pays one atomic load. With
 * one, the changed directory's path is read once per operation (its
 * /proc/self/fd link) and matched against the volume's watches under the
 * store's watch mutex.
 *
 * Limits: a watch follows the path its directory had when it was added (a
 * rename of the watched directory itself or of one above it is not
 * followed); VOL_WATCH_MAX watches per store (-ENOSPC past it). Snapshot
 * objects never change. Thread-safe: the wake callback runs on the thread
 * that made the change, with the watch mutex held: it must only flag and
 * signal (never call vol_watch_*).
 */
#ifndef AQ_AGENT_VOL_WATCH_H
#define AQ_AGENT_VOL_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct vol_obj;

/* What changed (the values of MS-FSCC's FILE_NOTIFY_CHANGE_*, which the
 * other protocols' notions map onto). */
#define VOL_WATCH_FILE_NAME 0x001u
#define VOL_WATCH_DIR_NAME 0x002u
#define VOL_WATCH_ATTRIBUTES 0x004u
#define VOL_WATCH_SIZE 0x008u
#define VOL_WATCH_LAST_WRITE 0x010u
#define VOL_WATCH_LAST_ACCESS 0x020u
#define VOL_WATCH_CREATION 0x040u
#define VOL_WATCH_EA 0x080u
#define VOL_WATCH_SECURITY 0x100u
#define VOL_WATCH_ALL 0x1FFu

enum vol_watch_action {
	VOL_WATCH_ADDED = 1,
	VOL_WATCH_REMOVED = 2,
	VOL_WATCH_MODIFIED = 3,
	VOL_WATCH_RENAMED_OLD = 4,
	VOL_WATCH_RENAMED_NEW = 5,
};

/* Bounds: a node holds at most VOL_WATCH_MAX watches, each at most
 * VOL_WATCH_QUEUE_MAX events of at most VOL_WATCH_QUEUE_BYTES of names in
 * all: about 4096 x (32 KiB + 256 x 40 B) = 170 MiB however many clients
 * watch and however fast the volumes change. */
#define VOL_WATCH_QUEUE_MAX 256u            /* events kept per watch between two takes */
#define VOL_WATCH_QUEUE_BYTES (32u << 10)   /* and bytes of their names */
#define VOL_WATCH_MAX 4096u                 /* watches per store */

struct vol_watch_ev {
	struct vol_watch_ev *next;
	enum vol_watch_action action;
	size_t len;                /* of name, without the NUL */
	char name[];               /* from the watched directory, '/'-separated */
};

struct vol_watch;
typedef void (*vol_watch_wake_fn)(void *arg);

/* Watch directory dir (an object of a live export) for the changes of mask
 * (VOL_WATCH_* bits), below it too when tree. wake(arg) runs when the
 * queue gets its first event or overflows. 0, -ENOTDIR, -EINVAL (mask 0 or
 * a snapshot object), -ENOSPC (VOL_WATCH_MAX), -ENOMEM, -errno. */
int vol_watch_add(struct vol_obj *dir, unsigned mask, bool tree, vol_watch_wake_fn wake, void *arg,
		  struct vol_watch **out);
/* Stop watching and free w (NULL: nothing); wake never runs after. */
void vol_watch_remove(struct vol_watch *w);
/* The queued events, oldest first (the caller frees them with
 * vol_watch_ev_free), NULL when none; *overflow: events were lost since
 * the last take (the list is then NULL). The queue is empty after. */
struct vol_watch_ev *vol_watch_take(struct vol_watch *w, bool *overflow);
/* Whether the watched directory itself was removed (rmdir, from any
 * protocol; sticky: nothing below it can change any more). The removal
 * wakes the watch whatever its mask. */
bool vol_watch_gone(struct vol_watch *w);
void vol_watch_ev_free(struct vol_watch_ev *ev);

/* The hooks the store's operations call (vol_ns.c, vol_io.c): name in dir
 * changed; obj itself changed (reported under its current name in its
 * directory). Front ends never call these. */
void vol_watch_note(struct vol_obj *dir, const char *name, enum vol_watch_action action, unsigned what);
void vol_watch_note_obj(struct vol_obj *obj, enum vol_watch_action action, unsigned what);

#endif
