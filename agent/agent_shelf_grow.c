/* agent_shelf_grow: growing a mounted volume's ext4 file system online to
 * what its block device now holds (agent_shelf.h: agent_shelf_fs_size,
 * agent_shelf_fs_grow). The NVMe-oF backend calls it after the namespace
 * grew (provision= resize, then a rescan); resize2fs grows a mounted ext4
 * while it serves, so clients keep writing through the resize. Nothing
 * here shrinks: ext4 cannot shrink online, and aquiferd refuses a
 * capacity below what the volume uses.
 */
#include "agent/agent_shelf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define GROW_SB_OFF 1024          /* the ext4 superblock */
#define GROW_SB_MAGIC_OFF 0x38    /* s_magic, 0xEF53 */
#define GROW_SB_BLOCKS_LO 0x04    /* s_blocks_count_lo */
#define GROW_SB_LOG_BSIZE 0x18    /* s_log_block_size: block = 1024 << it */
#define GROW_SB_FEAT_INCOMPAT 0x60
#define GROW_SB_BLOCKS_HI 0x150   /* s_blocks_count_hi (INCOMPAT_64BIT) */
#define GROW_INCOMPAT_64BIT 0x80

static uint32_t grow_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int agent_shelf_fs_size(const char *dev, uint64_t *dev_bytes, uint64_t *fs_bytes, uint32_t *block)
{
	unsigned char sb[1024];
	uint64_t size = 0, blocks;
	uint32_t log;
	int rc = 0, fd = open(dev, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKGETSIZE64, &size) != 0) {
		rc = -errno;
		goto out;
	}
	if (pread(fd, sb, sizeof(sb), GROW_SB_OFF) != (ssize_t)sizeof(sb)) {
		rc = -EIO;
		goto out;
	}
	log = grow_le32(sb + GROW_SB_LOG_BSIZE);
	if (sb[GROW_SB_MAGIC_OFF] != 0x53 || sb[GROW_SB_MAGIC_OFF + 1] != 0xef || log > 6) {
		rc = -EMEDIUMTYPE; /* not ext2/3/4 */
		goto out;
	}
	blocks = grow_le32(sb + GROW_SB_BLOCKS_LO);
	if (grow_le32(sb + GROW_SB_FEAT_INCOMPAT) & GROW_INCOMPAT_64BIT)
		blocks |= (uint64_t)grow_le32(sb + GROW_SB_BLOCKS_HI) << 32;
	*dev_bytes = size;
	*fs_bytes = blocks * (1024u << log);
	if (block)
		*block = 1024u << log;
out:
	close(fd);
	return rc;
}

static const char *grow_resize2fs(void)
{
	return access("/usr/sbin/resize2fs", X_OK) == 0 ? "/usr/sbin/resize2fs" : "/sbin/resize2fs";
}

int agent_shelf_fs_grow(const char *dev, uint64_t limit_bytes, char *why, size_t cap)
{
	uint64_t dev_bytes = 0, fs_bytes = 0, want, after = 0;
	uint32_t block = 4096;
	char count[32];
	int rc, st;
	pid_t pid;

	if ((rc = agent_shelf_fs_size(dev, &dev_bytes, &fs_bytes, &block)) != 0) {
		snprintf(why, cap, "%s: cannot read its size or ext4 superblock: %s", dev, strerror(-rc));
		return rc;
	}
	want = limit_bytes && limit_bytes < dev_bytes ? limit_bytes : dev_bytes;
	want -= want % block;
	if (want <= fs_bytes)
		return 0; /* already as large (ext4 never shrinks here) */
	snprintf(count, sizeof(count), "%lluK", (unsigned long long)(want / 1024));
	if ((pid = fork()) < 0) {
		rc = -errno;
		snprintf(why, cap, "fork: %s", strerror(errno));
		return rc;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execl(grow_resize2fs(), "resize2fs", dev, count, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(why, cap, "resize2fs %s %s failed (exit %d); the file system stays at %llu bytes", dev, count,
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1, (unsigned long long)fs_bytes);
		return -EIO;
	}
	if ((rc = agent_shelf_fs_size(dev, &dev_bytes, &after, NULL)) != 0 || after < want) {
		snprintf(why, cap, "resize2fs %s %s left the file system at %llu bytes", dev, count,
			 (unsigned long long)after);
		return rc ? rc : -EIO;
	}
	return 0;
}
