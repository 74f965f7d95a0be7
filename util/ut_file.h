/* ut_file: private files (keys, tokens, credentials, the CLI's config)
 * written so that a crash at any instant leaves either the old content or
 * the new, never a mix, an empty file or a file others can read.
 *
 * Contract:
 * - ut_file_write(path, data, len): writes a fresh temporary file next to
 *   path ("<path>.tmp.XXXXXX", created 0600 whatever the umask), writes all of
 *   data, fsyncs it, renames it over path and fsyncs the folder. AQ_OK once
 *   the new content is durable. On any failure path is untouched (the old
 *   content, or no file), the temporary is removed and AQ_EIO comes with a
 *   message naming the step; only when the last step (the folder's fsync)
 *   fails may path already hold the new content, not yet durable. After a kill -9 a temporary may stay behind;
 *   it is never read and never replaces path.
 * - ut_file_create(path, data, len): the same, but installs the file only if
 *   path does not exist yet (link(), atomic against a concurrent creator):
 *   AQ_EEXIST when it does, leaving it as it was.
 * - ut_file_remove(path): unlinks path (a missing one is fine) and fsyncs the
 *   folder, so the removal is durable before anything written after it.
 * - ut_file_write_all(fd, data, len): write(2) until all is written (EINTR
 *   retried); 0 or -errno. A short write with no error is -EIO.
 * - ut_file_read(path, cap, &data, &len): the whole file, at most cap bytes,
 *   NUL-terminated (so text may be used as a string; *len, may be NULL, does
 *   not count the NUL), malloc'd for the caller. AQ_ENOENT "PATH does not
 *   exist", AQ_ETOOBIG "PATH is larger than CAP bytes", AQ_EIO "cannot open
 *   / read PATH: reason"; *data is NULL on failure.
 * Thread-safe (concurrent writers of one path: the last rename wins whole).
 */
#ifndef AQ_UT_FILE_H
#define AQ_UT_FILE_H

#include <stddef.h>

#include "api/api_error.h"

/* Longest path ut_file_* take (the temporary adds 11 bytes). */
#define UT_FILE_PATH_MAX 1024

int ut_file_write(const char *path, const void *data, size_t len, aq_msg *msg);
int ut_file_create(const char *path, const void *data, size_t len, aq_msg *msg);
int ut_file_remove(const char *path, aq_msg *msg);
int ut_file_write_all(int fd, const void *data, size_t len);
int ut_file_read(const char *path, size_t cap, char **data, size_t *len, aq_msg *msg);

#endif
