/* bkp_tree: what test_bkp and bkp_tool share: a generated tree with every
 * kind of object the backup carries, and a listing of a tree (type, mode,
 * owner, times in ns, size, content SHA-256, symlink target, hard-link
 * groups) to compare a restore with its source. Both read with O_NOATIME and
 * put a symlink's atime back after readlink, so that listing a tree changes
 * no atime (a symlink's ctime does change). */
#ifndef AQ_TESTS_BKP_TREE_H
#define AQ_TESTS_BKP_TREE_H

#include <stddef.h>
#include <stdint.h>

/* Deterministic incompressible bytes (seeded). */
void bt_fill(uint8_t *buf, size_t n, uint64_t seed);
/* Writes n bytes of seeded data at off in path (created 0644 if missing). */
int bt_write(const char *path, uint64_t off, size_t n, uint64_t seed);
/* The test tree under root (which exists): nested folders, files of sizes
 * 0, small, exactly one chunk (cs) and several chunks plus a tail, a sparse
 * file with a whole zero chunk, a symlink and a dangling one, a hard link,
 * modes, owners (when root) and fixed ns times. Returns the sum of the
 * regular files' sizes (hard links once). */
uint64_t bt_gen(const char *root, uint32_t cs);
/* The listing of root, one line per object in sorted walk order; the caller
 * frees it. NULL on error. */
char *bt_list(const char *root);
/* Recursive rm -rf. */
void bt_rm(const char *path);

#endif
