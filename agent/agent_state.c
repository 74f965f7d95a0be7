/* agent_state: the agent's persistent files, written atomically (the one
 * private-file writer of tls/tls.h: temp file, fsync, rename, fsync of the
 * folder; mode 0600). */
#include "agent/agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tls/tls.h"
#include "util/ut_file.h"

int agent_state_write(const char *dir, const char *name, const json_t *doc, aq_msg *msg)
{
	char path[1200];
	char *text = json_dumps(doc, JSON_COMPACT);
	int rc;

	if (!text)
		return AQ_ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = ut_file_write(path, text, strlen(text), msg); /* 0600, temp + fsync + rename */
	free(text);
	return rc;
}

int agent_state_remove(const char *dir, const char *name, aq_msg *msg)
{
	char path[1200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* the removal is durable before anything written after it */
	return ut_file_remove(path, msg);
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
