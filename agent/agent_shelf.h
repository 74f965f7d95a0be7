/* agent_shelf: where volume data lives, behind one small interface.
 *
 * Every node of a location reaches the same shelves. A volume's data is the
 * directory <shelf>/<dir> (dir = "volumes/<fsid>" from the intent), so any
 * node can pick a volume up after failover. Today's backend is a directory
 * (a shared mount); the production backend attaches NVMe-oF namespaces
 * (see agent/README.md) and implements the same three calls.
 */
#ifndef AQ_AGENT_SHELF_H
#define AQ_AGENT_SHELF_H

#include <stddef.h>

struct agent_shelf;

struct agent_shelf_ops {
	const char *name;
	/* Make the volume's data reachable on this node; write its root
	 * directory to root. Idempotent. mode: permissions for a new root. */
	int (*attach)(struct agent_shelf *s, const char *dir, unsigned mode, char *root, size_t cap);
	/* This node stops serving the volume (another may take it). */
	int (*release)(struct agent_shelf *s, const char *dir);
	/* The volume was deleted: remove its data for good. */
	int (*destroy)(struct agent_shelf *s, const char *dir);
};

struct agent_shelf {
	const struct agent_shelf_ops *ops;
	char path[1024];
};

/* The directory backend over path. */
int agent_shelf_dir_init(struct agent_shelf *s, const char *path);

#endif
