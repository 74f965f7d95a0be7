/* agent_state: the agent's persistent files, written atomically. */
#include "agent/agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int agent_state_write(const char *dir, const char *name, const json_t *doc, aq_msg *msg)
{
	char path[1200], tmp[1300];
	char *text = json_dumps(doc, JSON_COMPACT);
	size_t len, off = 0;
	int fd = -1, dfd = -1, rc = AQ_OK;

	if (!text)
		return AQ_ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	len = strlen(text);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = aq_fail(msg, AQ_EIO, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = aq_fail(msg, AQ_EIO, "cannot write %s: %s", tmp, strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		fd = -1;
		rc = aq_fail(msg, AQ_EIO, "cannot sync %s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = aq_fail(msg, AQ_EIO, "cannot rename %s: %s", tmp, strerror(errno));
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) != 0)
		rc = aq_fail(msg, AQ_EIO, "cannot sync folder %s: %s", dir, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(text);
	return rc;
}

int agent_state_read(const char *dir, const char *name, json_t **doc, aq_msg *msg)
{
	char path[1200];
	json_error_t err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (access(path, F_OK) != 0)
		return AQ_ENOENT;
	*doc = json_load_file(path, 0, &err);
	if (!*doc)
		return aq_fail(msg, AQ_EIO, "%s: %s (line %d)", path, err.text, err.line);
	return AQ_OK;
}
