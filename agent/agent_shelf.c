/* agent_shelf: the directory backend of the shelf interface. */
#include "agent/agent_shelf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/snap/snap.h"

/* dir comes from aquiferd ("volumes/<hex>"): refuse anything else, so a
 * wrong intent can never reach outside the shelf. */
int agent_shelf_dir_ok(const char *dir)
{
	const char *p = dir;

	if (strncmp(p, "volumes/", 8) != 0)
		return 0;
	p += 8;
	if (!*p || strlen(p) > 64)
		return 0;
	for (; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

static int dir_attach(struct agent_shelf *s, const char *dir, unsigned mode, uint64_t bytes, char *root, size_t cap)
{
	char vols[1100];
	int rc;

	(void)bytes; /* a folder takes what the store's quota lets in */
	if (!agent_shelf_dir_ok(dir))
		return -EINVAL;
	snprintf(vols, sizeof(vols), "%s/volumes", s->path);
	if (mkdir(vols, 0711) != 0 && errno != EEXIST)
		return -errno;
	snprintf(root, cap, "%s/%s", s->path, dir);
	/* a btrfs subvolume on a btrfs shelf: its snapshots are O(1) (snap.h) */
	rc = snap_volume_make(root, mode);
	return rc == -EEXIST ? 0 : rc;
}

static int dir_release(struct agent_shelf *s, const char *dir)
{
	(void)s;
	return agent_shelf_dir_ok(dir) ? 0 : -EINVAL;
}

static int dir_destroy(struct agent_shelf *s, const char *dir)
{
	char root[1100];

	if (!agent_shelf_dir_ok(dir))
		return -EINVAL;
	snprintf(root, sizeof(root), "%s/%s", s->path, dir);
	return snap_tree_remove(root); /* a subvolume at once */
}

static const struct agent_shelf_ops shelf_dir_ops = {
	.name = "directory",
	.attach = dir_attach,
	.release = dir_release,
	.destroy = dir_destroy,
};

int agent_shelf_dir_init(struct agent_shelf *s, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	s->ops = &shelf_dir_ops;
	s->nvme = NULL;
	snprintf(s->path, sizeof(s->path), "%s", path);
	return 0;
}

void agent_shelf_quit(struct agent_shelf *s)
{
	if (s->nvme)
		agent_shelf_nvme_quit(s->nvme);
}

void agent_shelf_cleanup(struct agent_shelf *s)
{
	agent_shelf_nvme_free(s->nvme);
	s->nvme = NULL;
}
