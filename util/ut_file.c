/* ut_file: the atomic private-file writer (see ut_file.h). The temporary is
 * made with mkostemp, so two writers of the same path (threads or
 * processes) never share one, and its 0600 does not depend on the umask. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkostemp */
#endif
#include "util/ut_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ut_file_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The folder of path ("." for a bare name, "/" for one in the root). */
static void file_dir(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, cap, ".");
	else if (slash == path)
		snprintf(dir, cap, "/");
	else
		snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

static int file_sync_dir(const char *path, aq_msg *msg)
{
	char dir[UT_FILE_PATH_MAX];
	int fd, rc = AQ_OK;

	file_dir(path, dir, sizeof(dir));
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || fsync(fd) != 0)
		rc = aq_fail(msg, AQ_EIO, "cannot sync folder %s: %s", dir, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The temporary beside path, durable, mode 0600; its name in tmp. */
static int file_tmp(const char *path, const void *data, size_t len, char *tmp, size_t cap, aq_msg *msg)
{
	int fd, err, rc = AQ_OK;

	if (strlen(path) >= UT_FILE_PATH_MAX || snprintf(tmp, cap, "%s.tmp.XXXXXX", path) >= (int)cap) {
		tmp[0] = '\0';
		return aq_fail(msg, AQ_EINVAL, "path too long: %.100s...", path);
	}
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		rc = aq_fail(msg, AQ_EIO, "cannot write %s: %s", path, strerror(errno));
		tmp[0] = '\0';
		return rc;
	}
	if ((err = ut_file_write_all(fd, data, len)) != 0)
		rc = aq_fail(msg, AQ_EIO, "cannot write %s: %s", tmp, strerror(-err));
	else if (fchmod(fd, 0600) != 0 || fsync(fd) != 0)
		rc = aq_fail(msg, AQ_EIO, "cannot sync %s: %s", tmp, strerror(errno));
	if (close(fd) != 0 && rc == AQ_OK)
		rc = aq_fail(msg, AQ_EIO, "cannot close %s: %s", tmp, strerror(errno));
	return rc;
}

static int file_install(const char *path, const void *data, size_t len, bool replace, aq_msg *msg)
{
	char tmp[UT_FILE_PATH_MAX + 16] = "";
	int rc;

	if ((rc = file_tmp(path, data, len, tmp, sizeof(tmp), msg)) != AQ_OK)
		goto out;
	if (replace && rename(tmp, path) != 0) {
		rc = aq_fail(msg, AQ_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		goto out;
	}
	if (!replace && link(tmp, path) != 0) {
		rc = errno == EEXIST ? aq_fail(msg, AQ_EEXIST, "%s exists already", path)
				     : aq_fail(msg, AQ_EIO, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	if (replace)
		tmp[0] = '\0'; /* renamed: nothing left to remove */
	rc = file_sync_dir(path, msg);
out:
	if (tmp[0])
		unlink(tmp);
	return rc;
}

int ut_file_write(const char *path, const void *data, size_t len, aq_msg *msg)
{
	return file_install(path, data, len, true, msg);
}

int ut_file_create(const char *path, const void *data, size_t len, aq_msg *msg)
{
	return file_install(path, data, len, false, msg);
}

int ut_file_remove(const char *path, aq_msg *msg)
{
	if (strlen(path) >= UT_FILE_PATH_MAX)
		return aq_fail(msg, AQ_EINVAL, "path too long: %.100s...", path);
	if (unlink(path) != 0 && errno != ENOENT)
		return aq_fail(msg, AQ_EIO, "cannot remove %s: %s", path, strerror(errno));
	return file_sync_dir(path, msg);
}

int ut_file_read(const char *path, size_t cap, char **data, size_t *len, aq_msg *msg)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n;
	int rc = AQ_OK;

	*data = NULL;
	if (!f)
		return errno == ENOENT ? aq_fail(msg, AQ_ENOENT, "%s does not exist", path)
				       : aq_fail(msg, AQ_EIO, "cannot open %s: %s", path, strerror(errno));
	if (cap >= SIZE_MAX / 2 || !(buf = malloc(cap + 1))) {
		rc = AQ_ENOMEM;
		goto out;
	}
	n = fread(buf, 1, cap + 1, f);
	if (ferror(f)) {
		rc = aq_fail(msg, AQ_EIO, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	if (n > cap) {
		rc = aq_fail(msg, AQ_ETOOBIG, "%s is larger than %zu bytes", path, cap);
		goto out;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	*data = buf;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return rc;
}
