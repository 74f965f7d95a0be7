/* obj: a protocol-neutral object store for the cold tier (issue 11).
 *
 * Two backends behind one API: OBJ_DIRECTORY (a folder on a local or
 * mounted file system) and OBJ_S3 (any S3-API store over libcurl, AWS SigV4,
 * path-style URLs). Used only by the tiering engine; every function is
 * thread-safe. The contract is section 1 of /work/notes/tier-contract.md.
 *
 * Errors are negative errno:
 *   -ENOENT  no such object
 *   -EAGAIN  store unreachable, timed out, 5xx or throttled: retry later
 *   -EACCES  credentials refused (403)
 *   -EIO     anything else, including a verification failure
 *   -EINVAL  bad configuration or a key obj does not accept
 *
 * Keys are '/'-separated ASCII from [A-Za-z0-9._-/], 1..OBJ_KEY_MAX bytes,
 * with no empty component (no leading, trailing or doubled '/'), and no "."
 * or ".." component; anything else is -EINVAL and touches nothing. So a key
 * maps 1:1 to a relative path and the directory backend never leaves its
 * root.
 */
#ifndef AQ_AGENT_OBJ_H
#define AQ_AGENT_OBJ_H

#include <stddef.h>
#include <stdint.h>

#define OBJ_KEY_MAX 1024
#define OBJ_TIMEOUT_MS_DEFAULT 5000u

enum obj_kind { OBJ_DIRECTORY = 1, OBJ_S3 = 2 };

struct obj_cfg {
	enum obj_kind kind;
	char path[4096];              /* OBJ_DIRECTORY: root folder (created if missing) */
	char endpoint[512];           /* OBJ_S3: "http://127.0.0.1:9000" or https URL; path-style addressing */
	char bucket[256], region[64]; /* region default "us-east-1" when empty */
	char access_key[256], secret_key[256];
	char ca_file[4096];           /* optional, for https endpoints */
	unsigned timeout_ms;          /* per request; 0 = default 5000 */
};

struct obj_store;

/* Checks cfg and builds a store. No network I/O; the directory backend
 * creates its root folder. -EINVAL for a bad cfg (unknown kind, relative or
 * empty path, endpoint not http(s)://, bad bucket name). */
int obj_open(const struct obj_cfg *cfg, struct obj_store **out);
/* Frees s (NULL is fine). No call may be in flight. */
void obj_close(struct obj_store *s);

/* S3: creates the bucket (PUT bucket) unless it exists already and is ours.
 * Directory: 0 (the root exists since obj_open). Call once before first use. */
int obj_ensure_bucket(struct obj_store *s);

/* Durable once it returns 0 (directory: write temp + fsync + rename + fsync
 * dir; S3: 200 from PUT with Content-MD5 so the store verifies the bytes).
 * Overwrites. A put that fails or is interrupted leaves the previous object
 * (or none) visible, never a partial one. */
int obj_put(struct obj_store *s, const char *key, const void *buf, size_t len);

/* Ranged read of [off, off+len); *got < len only at the object's end (0 when
 * off is at or past the end). */
int obj_get(struct obj_store *s, const char *key, uint64_t off, void *buf, size_t len, size_t *got);

struct obj_range {
	const char *key;
	uint64_t off;
	void *buf;
	size_t len;
	size_t got; /* out */
	int rc;     /* out */
};
/* Many ranged reads run in parallel (S3: one curl multi handle, up to
 * `parallel` at once; directory: pread). Returns 0 when every r[i].rc is 0,
 * else the first failing rc (lowest i); each r[i].rc and r[i].got is set. */
int obj_get_many(struct obj_store *s, struct obj_range *r, size_t n, unsigned parallel);

/* Size of an object; -ENOENT when missing. */
int obj_head(struct obj_store *s, const char *key, uint64_t *size);

/* Deleting a missing object is 0. */
int obj_delete(struct obj_store *s, const char *key);

/* Calls cb(arg, key, size) for every object whose key starts with prefix
 * (S3: ListObjectsV2, paged; directory: walk). "" lists everything. A
 * non-zero cb return stops and is returned. Objects whose names are not
 * valid keys (written by someone else) are skipped; so are unfinished puts.
 * The order is unspecified. The prefix uses the key alphabet (-EINVAL
 * otherwise). */
typedef int (*obj_list_cb)(void *arg, const char *key, uint64_t size);
int obj_list(struct obj_store *s, const char *prefix, obj_list_cb cb, void *arg);

/* Counters for metrics: bytes put / got since open. */
void obj_counters(struct obj_store *s, uint64_t *put_bytes, uint64_t *get_bytes);

/* Human description of the store for logs and tierDetails, e.g.
 * "s3 http://127.0.0.1:9000/bucket" or "directory /srv/cold". Borrowed. */
const char *obj_describe(const struct obj_store *s);

/* A short static sentence for an obj error code ("store unreachable or
 * timed out", "credentials refused", ...). */
const char *obj_strerror(int rc);

/* Copies the text of the last failure the store saw (any thread), e.g.
 * "PUT a/b: Couldn't connect to server" or "GET a/b: HTTP 503 SlowDown", or
 * "" if none yet, into buf. For logs and tierDetails. */
void obj_last_error(struct obj_store *s, char *buf, size_t cap);

/* 0 when key is acceptable (see above), else -EINVAL. */
int obj_key_check(const char *key);

#endif
