/* agent_shelf: where volume data lives, behind one small interface.
 *
 * Every node of a location reaches the same shelves. A volume's data is the
 * directory <shelf>/<dir> (dir = "volumes/<fsid>" from the intent), so any
 * node can pick a volume up after failover. Two backends: a directory (a
 * shared mount), and NVMe-oF (agent_shelf_nvme.c, docs/internals/shelf.md):
 * one namespace per volume, found by the NGUID its fsid names, one ext4 file
 * system on it mounted by the serving node only at <path>/<dir>, fenced with
 * an NVMe persistent reservation or a disk lease (fence=lease).
 */
#ifndef AQ_AGENT_SHELF_H
#define AQ_AGENT_SHELF_H

#include <stddef.h>
#include <stdint.h>

#include "api/api_error.h"

struct agent_shelf;

struct agent_shelf_ops {
	const char *name;
	/* Make the volume's data reachable on this node; write its root
	 * directory to root. Idempotent. mode: permissions for a new root;
	 * bytes: the volume's capacity (what a new namespace is given). */
	int (*attach)(struct agent_shelf *s, const char *dir, unsigned mode, uint64_t bytes, char *root, size_t cap);
	/* This node stops serving the volume (another may take it). */
	int (*release)(struct agent_shelf *s, const char *dir);
	/* The volume was deleted: remove its data for good. */
	int (*destroy)(struct agent_shelf *s, const char *dir);
	/* An attached volume's capacity is bytes now: grow what backs it while
	 * it is mounted and served (NULL: the backend has nothing to grow; a
	 * folder takes what the store's quota lets in). 0 when it holds bytes;
	 * else -errno, why says what failed, and *have is what it holds now
	 * (the volume serves on at that size). Never shrinks. */
	int (*grow)(struct agent_shelf *s, const char *dir, uint64_t bytes, uint64_t *have, char *why, size_t cap);
};

struct agent_shelf_nvme;

struct agent_shelf {
	const struct agent_shelf_ops *ops;
	/* nvmeof fence=lease: called (from another thread) with a volume's
	 * mount point when the node lost its lease, before it is detached; set
	 * before agent_shelf_nvme_init. NULL: nobody to tell. */
	void (*fenced)(void *ctx, const char *mp);
	void *fenced_ctx;
	char path[1024];               /* the shelf folder; nvmeof: where volumes are mounted */
	struct agent_shelf_nvme *nvme; /* the nvmeof backend's state, NULL otherwise */
};

/* dir names a volume's folder as aquiferd writes it: "volumes/<1..64 hex>". */
int agent_shelf_dir_ok(const char *dir);

/* The directory backend over path. */
int agent_shelf_dir_init(struct agent_shelf *s, const char *path);

/* The nvmeof backend: spec is --shelf's "nvmeof:tcp|rdma:ADDR:PORT:NQN[,fence=
 * pr|lease|none][,lease=SECONDS][,provision=PROG]" (agent_nvme.h), base a local folder (made) where
 * volumes are mounted, node this node's name (its host NQN, host id and
 * reservation key). AQ_EINVAL with the reason in msg; nothing is connected
 * before the first attach. */
int agent_shelf_nvme_init(struct agent_shelf *s, const char *spec, const char *base, const char *node,
			  aq_msg *msg);
/* The nvmeof backend's state (NULL ok): stops its lease threads. */
void agent_shelf_nvme_free(struct agent_shelf_nvme *n);
/* The nvmeof backend's agent_shelf_quit (n not NULL). */
void agent_shelf_nvme_quit(struct agent_shelf_nvme *n);
/* What the shelf is, as the status report tells aquiferd (which matches it
 * to a /v1/shelves resource, srv_shelfio.h): backend "directory" or
 * "nvmeof"; for nvmeof the transport ("tcp", "rdma") and the subsystem
 * NQN, else both "". Borrowed pointers, valid while s lives. */
void agent_shelf_describe(const struct agent_shelf *s, const char **backend, const char **transport,
			  const char **nqn);
/* Online growth of a mounted ext4 (agent_shelf_grow.c). fs_size: dev's
 * size, its ext4's size in bytes and block size (block may be NULL);
 * -EMEDIUMTYPE when dev holds no ext2/3/4. fs_grow: resize2fs the mounted
 * ext4 on dev up to limit_bytes (0: the whole device), never shrinking; 0
 * when it is that large (or was), else -errno with why. */
int agent_shelf_fs_size(const char *dev, uint64_t *dev_bytes, uint64_t *fs_bytes, uint32_t *block);
int agent_shelf_fs_grow(const char *dev, uint64_t limit_bytes, char *why, size_t cap);
/* Frees what an init allocated (volumes stay mounted: a restart serves on). */
void agent_shelf_cleanup(struct agent_shelf *s);
/* The agent is stopping: an attach waiting for another node's lease gives
 * up (agent_shelf_lease_quit); nothing else changes. Any thread. */
void agent_shelf_quit(struct agent_shelf *s);

#endif
