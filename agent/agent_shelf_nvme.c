/* agent_shelf_nvme: the NVMe-oF backend of the shelf interface (agent_shelf.h).
 *
 * One namespace per volume on the shelf's subsystem, found by the NGUID (or
 * UUID) derived from the volume's fsid; one ext4 per namespace, made on the
 * first attach and mounted by the serving node only at <base>/volumes/<fsid>.
 * The controller is connected through the kernel's /dev/nvme-fabrics (no
 * nvme-cli), once for all volumes, and disconnected when the last volume
 * goes. Before mounting, the node registers its key and takes (or preempts)
 * a Write Exclusive persistent reservation, so a node that lost the volume
 * cannot write to it again (fence=pr, the default), or takes the volume's
 * disk lease in the namespace's last MiB (fence=lease, agent_shelf_lease.h:
 * for shelves without reservations). A namespace the shelf
 * lacks is made by the provision= program when one is named. Design and
 * failure cases: docs/internals/shelf.md.
 */
#include "agent/agent_shelf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_lease.h"
#include "agent/agent_nvme.h"
#include "agent/agent_shelf_lease.h"
#include "util/ut_log.h"

#define NVME_FIND_MS 15000 /* how long a namespace may take to appear after a connect or a provision */

struct agent_shelf_nvme {
	struct agent_nvme_spec spec;
	char hostnqn[AGENT_NVME_NQN_MAX + 1];
	char hostid[40];
	uint64_t key;       /* this node's reservation key */
	int instance;       /* /dev/nvme<instance>, -1: not connected */
	struct agent_shelf_leases *leases; /* fence=lease: the leases held here */
};

/* Read a small sysfs file into buf (NUL-terminated). Length or -errno. */
static ssize_t nvme_read_file(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n < 0 ? 0 : n] = 0;
	return n;
}

static int nvme_write_file(const char *path, const char *text)
{
	int rc = 0, fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static void nvme_sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Run argv (no shell); 0 when it exits 0. */
static int nvme_run(const char *const argv[])
{
	/* execv's argv is char *const[] for history's sake; it writes nothing */
	union {
		const char *const *c;
		char *const *m;
	} args = { .c = argv };
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execv(argv[0], args.m);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* Does the sysfs file path (a controller's hostnqn) name another host
 * than hostnqn? A missing file (a namespace head, an old kernel) does not. */
static int nvme_other_host(const char *path, const char *hostnqn)
{
	char buf[300];
	size_t n = strlen(hostnqn);

	if (nvme_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strncmp(buf, hostnqn, n) != 0 || (buf[n] != '\n' && buf[n] != 0);
}

/* Is /sys/class/nvme/nvme<i> a live controller of our subsystem at our
 * address, connected as this node (another agent on the same machine, a
 * test's second node, has its own)? */
static int nvme_ctrl_ours(const struct agent_shelf_nvme *n, int i)
{
	char path[128], buf[512];

	snprintf(path, sizeof(path), "/sys/class/nvme/nvme%d/hostnqn", i);
	if (nvme_other_host(path, n->hostnqn))
		return 0;

	snprintf(path, sizeof(path), "/sys/class/nvme/nvme%d/subsysnqn", i);
	if (nvme_read_file(path, buf, sizeof(buf)) <= 0 || strncmp(buf, n->spec.nqn, strlen(n->spec.nqn)) != 0 ||
	    (buf[strlen(n->spec.nqn)] != '\n' && buf[strlen(n->spec.nqn)] != 0))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/nvme/nvme%d/transport", i);
	if (nvme_read_file(path, buf, sizeof(buf)) <= 0 ||
	    strncmp(buf, agent_nvme_transport_name(n->spec.transport), strlen(agent_nvme_transport_name(n->spec.transport))) != 0)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/nvme/nvme%d/address", i);
	if (nvme_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return agent_nvme_address_match(buf, strlen(buf), &n->spec) == 1;
}

/* Connect to the shelf's subsystem unless a controller of ours is there. */
static int nvme_connect(struct agent_shelf_nvme *n)
{
	char opts[1024], reply[128];
	struct dirent *de;
	DIR *d;
	ssize_t got;
	int fd, rc = 0, inst;

	if (n->instance >= 0 && nvme_ctrl_ours(n, n->instance))
		return 0;
	n->instance = -1;
	if ((d = opendir("/sys/class/nvme"))) {
		while ((de = readdir(d)) && n->instance < 0)
			if (sscanf(de->d_name, "nvme%d", &inst) == 1 && nvme_ctrl_ours(n, inst))
				n->instance = inst;
		closedir(d);
	}
	if (n->instance >= 0)
		return 0;
	if (agent_nvme_connect_string(&n->spec, n->hostnqn, n->hostid, opts, sizeof(opts)) != 0)
		return -ENAMETOOLONG;
	if ((fd = open("/dev/nvme-fabrics", O_RDWR | O_CLOEXEC)) < 0) {
		rc = -errno;
		UT_ERROR("agent_shelf", NULL, "cannot open /dev/nvme-fabrics (modprobe nvme-%s): %s",
			 agent_nvme_transport_name(n->spec.transport), strerror(errno));
		return rc;
	}
	if (write(fd, opts, strlen(opts)) < 0) {
		rc = -errno;
		UT_ERROR("agent_shelf", NULL, "connect to %s at %s:%u over %s failed: %s", n->spec.nqn, n->spec.addr,
			 n->spec.port, agent_nvme_transport_name(n->spec.transport), strerror(errno));
		goto out;
	}
	got = read(fd, reply, sizeof(reply) - 1);
	if (got <= 0 || agent_nvme_connect_reply(reply, (size_t)got, &inst) != 0) {
		rc = -EPROTO;
		UT_ERROR("agent_shelf", NULL, "/dev/nvme-fabrics answered no instance");
		goto out;
	}
	n->instance = inst;
	UT_INFO("agent_shelf", NULL, "connected nvme%d to %s at %s:%u over %s", inst, n->spec.nqn, n->spec.addr,
		n->spec.port, agent_nvme_transport_name(n->spec.transport));
out:
	close(fd);
	return rc;
}

/* The block device (/dev/nvmeXnY) whose NGUID or UUID is id, seen through
 * a controller of this node (a multipath head has no host of its own). 0, or -ENOENT. */
static int nvme_find_ns(const struct agent_shelf_nvme *n, const uint8_t id[16], char *dev, size_t cap)
{
	static const char *const files[] = { "nguid", "uuid" };
	char path[300], buf[64];
	uint8_t got[16];
	struct dirent *de;
	int rc = -ENOENT, x, y, len;
	size_t f;
	DIR *d = opendir("/sys/block");

	if (!d)
		return -errno;
	while (rc != 0 && (de = readdir(d))) {
		/* nvme0n1 (a namespace head), never nvme0c0n1 (one path of it) */
		if (sscanf(de->d_name, "nvme%dn%d%n", &x, &y, &len) != 2 || de->d_name[len])
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/device/hostnqn", de->d_name);
		if (nvme_other_host(path, n->hostnqn))
			continue;
		for (f = 0; f < sizeof(files) / sizeof(files[0]) && rc != 0; f++) {
			ssize_t got_len;

			snprintf(path, sizeof(path), "/sys/block/%s/%s", de->d_name, files[f]);
			if ((got_len = nvme_read_file(path, buf, sizeof(buf))) > 0 &&
			    agent_nvme_id_parse(buf, (size_t)got_len, got) == 0 &&
			    memcmp(got, id, 16) == 0) {
				snprintf(dev, cap, "/dev/%s", de->d_name);
				rc = 0;
			}
		}
	}
	closedir(d);
	return rc;
}

/* Wait up to NVME_FIND_MS for the namespace, asking the controller to rescan. */
static int nvme_wait_ns(const struct agent_shelf_nvme *n, const uint8_t id[16], char *dev, size_t cap)
{
	char path[128];
	unsigned waited;

	for (waited = 0; waited <= NVME_FIND_MS; waited += 200) {
		if (nvme_find_ns(n, id, dev, cap) == 0)
			return 0;
		if (waited % 2000 == 0) {
			snprintf(path, sizeof(path), "/sys/class/nvme/nvme%d/rescan_controller", n->instance);
			(void)nvme_write_file(path, "1");
		}
		nvme_sleep_ms(200);
	}
	return -ENOENT;
}

/* One NVMe I/O command on the namespace; the NVMe status (0 success), or -errno. */
static int nvme_io(int fd, const struct agent_nvme_cmd *c, void *data, uint32_t len)
{
	struct nvme_passthru_cmd pt;
	int nsid = ioctl(fd, NVME_IOCTL_ID);

	if (nsid < 0)
		return -errno;
	memset(&pt, 0, sizeof(pt));
	pt.opcode = c->opcode;
	pt.nsid = (__u32)nsid;
	pt.cdw10 = c->cdw10;
	pt.cdw11 = c->cdw11;
	pt.addr = (__u64)(uintptr_t)data;
	pt.data_len = len;
	if ((nsid = ioctl(fd, NVME_IOCTL_IO_CMD, &pt)) < 0)
		return -errno;
	return nsid; /* the command's NVMe status */
}

static int nvme_cmd(int fd, struct agent_nvme_cmd *c)
{
	int st = nvme_io(fd, c, c->data, c->data_len);

	/* ioctl answers the status field: SC in 7:0, SCT in 10:8, DNR/M above */
	return st > 0 ? st & 0x7ff : st;
}

/* Register this node and hold the Write Exclusive reservation, preempting
 * whoever held it: aquiferd moved the volume here, the old owner is fenced. */
static int nvme_fence(const struct agent_shelf_nvme *n, const char *dev)
{
	uint8_t rep[AGENT_NVME_RESV_BUF];
	struct agent_nvme_resv r;
	struct agent_nvme_cmd c;
	int fd, st, rc = 0;

	if ((fd = open(dev, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	agent_nvme_cmd_register(&c, AGENT_NVME_REGISTER, 0, 0, n->key);
	if ((st = nvme_cmd(fd, &c)) == AGENT_NVME_SC_RESV_CONFLICT) { /* registered with another key */
		agent_nvme_cmd_register(&c, AGENT_NVME_REPLACE, 1, 0, n->key);
		st = nvme_cmd(fd, &c);
	}
	if (st != 0) {
		UT_ERROR("agent_shelf", NULL, "%s: reservation register failed (status 0x%x%s)", dev, (unsigned)st,
			 st == 1 || st == 2 ? ": the shelf does not support reservations; fence=none runs unfenced" : "");
		rc = st == 1 || st == 2 ? -EOPNOTSUPP : -EIO;
		goto out;
	}
	memset(rep, 0, sizeof(rep));
	agent_nvme_cmd_report(&c, sizeof(rep));
	if ((st = nvme_io(fd, &c, rep, sizeof(rep))) != 0 || agent_nvme_resv_parse(rep, sizeof(rep), &r) != 0) {
		UT_ERROR("agent_shelf", NULL, "%s: reservation report unreadable (status 0x%x)", dev, (unsigned)st);
		rc = -EIO;
		goto out;
	}
	if (r.holder_key == n->key)
		goto out;
	agent_nvme_cmd_acquire(&c, r.holder_key ? AGENT_NVME_PREEMPT : AGENT_NVME_ACQUIRE, n->key, r.holder_key);
	if ((st = nvme_cmd(fd, &c)) != 0) {
		UT_ERROR("agent_shelf", NULL, "%s: reservation %s failed (status 0x%x)", dev,
			 r.holder_key ? "preempt" : "acquire", (unsigned)st);
		rc = -EIO;
		goto out;
	}
	if (r.holder_key)
		UT_WARN("agent_shelf", NULL, "%s: preempted the reservation of key %016llx (the volume's last node)", dev,
			(unsigned long long)r.holder_key);
out:
	close(fd);
	return rc;
}

static void nvme_unfence(const struct agent_shelf_nvme *n, const char *dev)
{
	struct agent_nvme_cmd c;
	int fd = open(dev, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	agent_nvme_cmd_release(&c, n->key);
	(void)nvme_cmd(fd, &c);
	agent_nvme_cmd_register(&c, AGENT_NVME_UNREGISTER, 0, n->key, 0);
	(void)nvme_cmd(fd, &c);
	close(fd);
}

/* Does dev carry an ext2/3/4 superblock (magic 0xEF53 at byte 1080)? */
static int nvme_has_fs(const char *dev)
{
	unsigned char b[2];
	int fd = open(dev, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = pread(fd, b, 2, 1080) == 2 ? (b[0] == 0x53 && b[1] == 0xef) : -EIO;
	close(fd);
	return rc;
}

static const char *nvme_mkfs_path(void)
{
	return access("/usr/sbin/mkfs.ext4", X_OK) == 0 ? "/usr/sbin/mkfs.ext4" : "/sbin/mkfs.ext4";
}

/* Is mp a mount point of dev? 1 yes, 0 nothing mounted there, -EBUSY another device. */
static int nvme_mounted(const char *mp, const char *dev)
{
	struct stat a, b, d;
	char parent[1100];

	snprintf(parent, sizeof(parent), "%s/..", mp);
	if (stat(mp, &a) != 0 || stat(parent, &b) != 0 || a.st_dev == b.st_dev)
		return 0;
	if (!dev || stat(dev, &d) != 0)
		return 1;
	return d.st_rdev == a.st_dev ? 1 : -EBUSY;
}

static int nvme_provision(const struct agent_shelf_nvme *n, const char *verb, const char *fsid, const char *idtext,
			  uint64_t bytes)
{
	char size[24];
	const char *argv[] = { n->spec.provision, verb, fsid, idtext, size, NULL };

	snprintf(size, sizeof(size), "%llu", (unsigned long long)bytes);
	return nvme_run(argv);
}

static int nvme_attach(struct agent_shelf *s, const char *dir, unsigned mode, uint64_t bytes, char *root, size_t cap)
{
	struct agent_shelf_nvme *n = s->nvme;
	const char *fsid = dir + 8;
	char mp[1100], dev[64], idtext[40], label[17], nblocks[24];
	uint64_t blocks = 0;
	uint8_t id[16];
	int rc, fresh = 0;

	if (!agent_shelf_dir_ok(dir) || agent_nvme_nsid_of_fsid(fsid, id) != 0)
		return -EINVAL;
	agent_nvme_id_text(id, idtext, sizeof(idtext));
	snprintf(mp, sizeof(mp), "%s/%s", s->path, dir);
	if ((rc = nvme_connect(n)) != 0)
		goto out;
	if (nvme_find_ns(n, id, dev, sizeof(dev)) != 0 && nvme_wait_ns(n, id, dev, sizeof(dev)) != 0) {
		if (!n->spec.provision[0]) {
			UT_ERROR("agent_shelf", NULL, "no namespace %s on %s (provision it on the shelf, or name a provision= program)",
				 idtext, n->spec.nqn);
			rc = -ENOENT;
			goto out;
		}
		if ((rc = nvme_provision(n, "create", fsid, idtext, bytes)) != 0) {
			UT_ERROR("agent_shelf", NULL, "%s create %s failed", n->spec.provision, fsid);
			goto out;
		}
		if ((rc = nvme_wait_ns(n, id, dev, sizeof(dev))) != 0) {
			UT_ERROR("agent_shelf", NULL, "namespace %s did not appear on nvme%d", idtext, n->instance);
			goto out;
		}
	}
	if ((rc = nvme_mounted(mp, dev)) == 1) {
		/* mounted by this node's last agent: only with the lease (its own record is taken back at once) */
		if (n->leases && (rc = agent_shelf_lease_take(n->leases, fsid, dev, id, mp)) != 0) {
			agent_shelf_lease_fence_mount(n->leases, mp, fsid, "mounted here, but its lease is not this node's");
			goto out;
		}
		goto done; /* already ours and mounted */
	}
	if (rc < 0)
		goto out;
	if (n->spec.fence == AGENT_NVME_FENCE_PR && (rc = nvme_fence(n, dev)) != 0)
		goto out;
	if (n->leases && ((rc = agent_shelf_lease_fits(dev, &blocks)) != 0 ||
			  (rc = agent_shelf_lease_take(n->leases, fsid, dev, id, mp)) != 0))
		goto out;
	if ((rc = nvme_has_fs(dev)) < 0)
		goto out;
	if (rc == 0) {
		/* fence=lease: the file system ends before the lease area (-b 4096, BLOCKS) */
		const char *argv[] = { nvme_mkfs_path(), "-q", "-F", "-U", idtext, "-L", label, "-m", "0", "-E",
				 "nodiscard,lazy_itable_init=1,lazy_journal_init=1", "-b", "4096", dev,
				 n->leases ? nblocks : NULL, NULL };

		snprintf(label, sizeof(label), "aq%.14s", fsid);
		snprintf(nblocks, sizeof(nblocks), "%llu", (unsigned long long)blocks);
		if ((rc = nvme_run(argv)) != 0) {
			UT_ERROR("agent_shelf", NULL, "%s: mkfs.ext4 failed", dev);
			goto out;
		}
		fresh = 1;
	}
	if (mkdir(mp, 0700) != 0 && errno != EEXIST) {
		rc = -errno;
		goto out;
	}
	/* errors=remount-ro: writes the shelf refuses (fenced) stop the file system */
	if (mount(dev, mp, "ext4", MS_NOATIME, "errors=remount-ro") != 0) {
		rc = -errno;
		UT_ERROR("agent_shelf", NULL, "mount %s on %s: %s", dev, mp, strerror(errno));
		if (n->leases)
			agent_shelf_lease_give(n->leases, fsid);
		goto out;
	}
	if (fresh) {
		char lf[1200];

		snprintf(lf, sizeof(lf), "%s/lost+found", mp);
		(void)rmdir(lf); /* not part of the volume's namespace; e2fsck makes it again when it needs it */
		(void)chmod(mp, mode & 07777);
	}
	UT_INFO("agent_shelf", NULL, "volume %s: %s mounted on %s%s", fsid, dev, mp, fresh ? " (new file system)" : "");
done:
	snprintf(root, cap, "%s", mp);
	rc = 0;
out:
	return rc;
}

/* The volume's capacity grew to bytes: its namespace grows first (the
 * provision= program's resize, then a rescan until the kernel sees the new
 * size), then its mounted ext4 (resize2fs online). A namespace already as
 * large (grown by hand, or a resize2fs that failed last time) only has its
 * file system grown. fence=lease keeps its lease in the namespace's last
 * MiB, which a growth would move under a live lease: refused by name. */
static int nvme_grow(struct agent_shelf *s, const char *dir, uint64_t bytes, uint64_t *have, char *why, size_t cap)
{
	struct agent_shelf_nvme *n = s->nvme;
	char dev[64], idtext[40], path[128];
	uint64_t dev_bytes = 0, fs_bytes = 0, blocks = 0;
	unsigned waited;
	uint8_t id[16];
	int rc;

	*have = 0;
	if (!agent_shelf_dir_ok(dir) || agent_nvme_nsid_of_fsid(dir + 8, id) != 0)
		return -EINVAL;
	agent_nvme_id_text(id, idtext, sizeof(idtext));
	if ((rc = nvme_find_ns(n, id, dev, sizeof(dev))) != 0 ||
	    (rc = agent_shelf_fs_size(dev, &dev_bytes, &fs_bytes, NULL)) != 0) {
		snprintf(why, cap, "namespace %s: cannot read its size: %s", idtext, strerror(-rc));
		return rc;
	}
	*have = fs_bytes;
	if (dev_bytes < bytes) {
		if (n->leases) {
			snprintf(why, cap, "online resize is not offered with fence=lease (the lease lives in the namespace's last MiB); the volume serves at %llu bytes",
				 (unsigned long long)fs_bytes);
			return -EOPNOTSUPP;
		}
		if (!n->spec.provision[0]) {
			snprintf(why, cap, "namespace %s holds %llu bytes, less than %llu: grow it on the shelf (no provision= program)",
				 idtext, (unsigned long long)dev_bytes, (unsigned long long)bytes);
			return -ENOSPC;
		}
		if (nvme_provision(n, "resize", dir + 8, idtext, bytes) != 0) {
			snprintf(why, cap, "%s resize %s %llu failed; the volume serves at %llu bytes", n->spec.provision,
				 dir + 8, (unsigned long long)bytes, (unsigned long long)fs_bytes);
			return -EIO;
		}
		for (waited = 0; dev_bytes < bytes && waited <= NVME_FIND_MS; waited += 200) {
			if (waited % 2000 == 0) {
				snprintf(path, sizeof(path), "/sys/class/nvme/nvme%d/rescan_controller", n->instance);
				(void)nvme_write_file(path, "1");
			}
			nvme_sleep_ms(200);
			(void)agent_shelf_fs_size(dev, &dev_bytes, &fs_bytes, NULL);
		}
		if (dev_bytes < bytes) {
			snprintf(why, cap, "namespace %s still shows %llu bytes %u s after its resize to %llu", idtext,
				 (unsigned long long)dev_bytes, NVME_FIND_MS / 1000, (unsigned long long)bytes);
			return -ETIMEDOUT;
		}
	}
	if (n->leases && (rc = agent_shelf_lease_fits(dev, &blocks)) != 0) {
		snprintf(why, cap, "namespace %s: no room for its lease", idtext);
		return rc;
	}
	if ((rc = agent_shelf_fs_grow(dev, blocks * 4096, why, cap)) != 0)
		return rc;
	(void)agent_shelf_fs_size(dev, &dev_bytes, have, NULL);
	if (*have > fs_bytes)
		UT_INFO("agent_shelf", NULL, "volume %s: %s grew online from %llu to %llu bytes", dir + 8, dev,
			(unsigned long long)fs_bytes, (unsigned long long)*have);
	return 0;
}

/* Any volume still mounted under <base>/volumes? */
static int nvme_any_mounted(const struct agent_shelf *s)
{
	char vols[1100], mp[1400];
	struct dirent *de;
	int any = 0;
	DIR *d;

	snprintf(vols, sizeof(vols), "%s/volumes", s->path);
	if (!(d = opendir(vols)))
		return 0;
	while (!any && (de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(mp, sizeof(mp), "%s/%s", vols, de->d_name);
			any = nvme_mounted(mp, NULL) == 1;
		}
	closedir(d);
	return any;
}

/* Unmount mp if mounted, retrying 2 s while requests in flight hold it;
 * then detach it (lazy) when detach is set, else fail -EBUSY. */
static int nvme_unmount(const char *mp, const char *fsid, int detach)
{
	int tries = 0, rc;

	if (nvme_mounted(mp, NULL) != 1)
		return 0;
	while ((rc = umount2(mp, 0)) != 0 && errno == EBUSY && ++tries < 20)
		nvme_sleep_ms(100);
	if (rc == 0) {
		UT_INFO("agent_shelf", NULL, "volume %s: unmounted %s", fsid, mp);
		return 0;
	}
	rc = -errno;
	UT_WARN("agent_shelf", NULL, "unmount %s: %s%s", mp, strerror(-rc), detach ? "; detaching it" : "");
	if (detach && umount2(mp, MNT_DETACH) != 0)
		return -errno;
	return detach ? 0 : rc;
}

/* Unmount, let the reservation go; disconnect when nothing else is mounted. */
static int nvme_release(struct agent_shelf *s, const char *dir)
{
	struct agent_shelf_nvme *n = s->nvme;
	char mp[1100], dev[64], path[128];
	uint8_t id[16];
	int have_dev, rc;

	if (!agent_shelf_dir_ok(dir) || agent_nvme_nsid_of_fsid(dir + 8, id) != 0)
		return -EINVAL;
	snprintf(mp, sizeof(mp), "%s/%s", s->path, dir);
	have_dev = nvme_find_ns(n, id, dev, sizeof(dev)) == 0;
	if ((rc = nvme_unmount(mp, dir + 8, 1)) != 0)
		return rc;
	(void)rmdir(mp);
	if (have_dev && n->spec.fence == AGENT_NVME_FENCE_PR)
		nvme_unfence(n, dev);
	if (n->leases)
		agent_shelf_lease_give(n->leases, dir + 8);
	if (n->instance >= 0 && !nvme_any_mounted(s)) {
		snprintf(path, sizeof(path), "/sys/class/nvme/nvme%d/delete_controller", n->instance);
		if (nvme_ctrl_ours(n, n->instance) && nvme_write_file(path, "1") == 0)
			UT_INFO("agent_shelf", NULL, "disconnected nvme%d: no volume of %s left here", n->instance, n->spec.nqn);
		n->instance = -1;
	}
	return 0;
}

/* The volume was deleted: its namespace goes (provision=), or its file
 * system is wiped so nothing of it can be mounted again. */
static int nvme_destroy(struct agent_shelf *s, const char *dir)
{
	static const char zero[65536];
	struct agent_shelf_nvme *n = s->nvme;
	char dev[64], idtext[40], mp[1100], gone[1100];
	uint8_t id[16];
	int rc, fd, i;

	if (!agent_shelf_dir_ok(dir) || agent_nvme_nsid_of_fsid(dir + 8, id) != 0)
		return -EINVAL;
	agent_nvme_id_text(id, idtext, sizeof(idtext));
	snprintf(mp, sizeof(mp), "%s/%s", s->path, dir);
	/* a delete is pushed until aquiferd sees it done: once is enough */
	snprintf(gone, sizeof(gone), "%s/.destroyed/%s", s->path, dir + 8);
	if (access(gone, F_OK) == 0)
		return 0;
	if ((rc = nvme_connect(n)) != 0)
		return rc;
	if ((rc = nvme_unmount(mp, dir + 8, 0)) != 0)
		return rc; /* still in use: never wipe under a live file system; the next push's delete tries again */
	/* after a fresh connect the namespaces appear as the controller scans */
	if (nvme_wait_ns(n, id, dev, sizeof(dev)) == 0 && (fd = open(dev, O_WRONLY | O_CLOEXEC)) >= 0) {
		for (i = 0; i < 16 && rc == 0; i++) /* the first MiB: the superblock and group descriptors */
			if (pwrite(fd, zero, sizeof(zero), (off_t)i * (off_t)sizeof(zero)) != (ssize_t)sizeof(zero))
				rc = -errno;
		if (fsync(fd) != 0 && rc == 0)
			rc = -errno;
		close(fd);
	}
	(void)nvme_release(s, dir);
	if (rc == 0 && n->spec.provision[0] && nvme_provision(n, "delete", dir + 8, idtext, 0) != 0) {
		UT_ERROR("agent_shelf", NULL, "%s delete %s failed: the namespace stays on the shelf", n->spec.provision,
			 dir + 8);
		rc = -EIO;
	}
	if (rc == 0 && (fd = open(gone, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) >= 0)
		close(fd);
	return rc;
}

static const struct agent_shelf_ops shelf_nvme_ops = {
	.name = "nvmeof",
	.attach = nvme_attach,
	.release = nvme_release,
	.destroy = nvme_destroy,
	.grow = nvme_grow,
};

int agent_shelf_nvme_init(struct agent_shelf *s, const char *spec, const char *base, const char *node, aq_msg *msg)
{
	struct agent_shelf_nvme *n = NULL;
	char vols[1100], gone[1100];
	uint8_t hid[16];
	uint64_t k2;
	int rc = AQ_OK, i;

	if (!(n = calloc(1, sizeof(*n)))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	if ((rc = agent_nvme_spec_parse(spec, &n->spec, msg)) != AQ_OK)
		goto out;
	snprintf(gone, sizeof(gone), "%s/.destroyed", base);
	if (snprintf(vols, sizeof(vols), "%s/volumes", base) >= (int)sizeof(s->path) ||
	    (mkdir(base, 0711) != 0 && errno != EEXIST) || (mkdir(vols, 0711) != 0 && errno != EEXIST) ||
	    (mkdir(gone, 0700) != 0 && errno != EEXIST)) {
		rc = aq_fail(msg, AQ_EINVAL, "--shelf: cannot make %s", vols);
		goto out;
	}
	snprintf(n->hostnqn, sizeof(n->hostnqn), "nqn.2026-01.org.aquifer:node:%.64s", node);
	/* a stable host id per node name: reservations follow the host */
	n->key = agent_nvme_key_of_node(node);
	k2 = agent_nvme_key_of_node(n->hostnqn);
	for (i = 0; i < 8; i++) {
		hid[i] = (uint8_t)(n->key >> (8 * i));
		hid[8 + i] = (uint8_t)(k2 >> (8 * i));
	}
	agent_nvme_id_text(hid, n->hostid, sizeof(n->hostid));
	n->instance = -1;
	if (n->spec.fence == AGENT_NVME_FENCE_LEASE &&
	    !(n->leases = agent_shelf_lease_new(n->key, node, n->spec.lease_s * 1000u, s->fenced, s->fenced_ctx))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	s->ops = &shelf_nvme_ops;
	snprintf(s->path, sizeof(s->path), "%s", base);
	s->nvme = n;
	n = NULL;
out:
	agent_shelf_nvme_free(n);
	return rc;
}

void agent_shelf_nvme_quit(struct agent_shelf_nvme *n)
{
	agent_shelf_lease_quit(n->leases);
}

void agent_shelf_nvme_free(struct agent_shelf_nvme *n)
{
	if (!n)
		return;
	agent_shelf_lease_free(n->leases);
	free(n);
}

void agent_shelf_describe(const struct agent_shelf *s, const char **backend, const char **transport,
			  const char **nqn)
{
	*backend = s->nvme ? "nvmeof" : "directory";
	*transport = s->nvme ? agent_nvme_transport_name(s->nvme->spec.transport) : "";
	*nqn = s->nvme ? s->nvme->spec.nqn : "";
}
