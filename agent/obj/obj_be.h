/* obj_be: what obj.c (dispatch) and its backends (obj_dir.c, obj_s3.c) share.
 * Not for users of obj.h. obj.c validates keys and arguments, then calls the
 * backend through its ops table; backends may assume valid keys and add the
 * bytes they move to the counters. */
#ifndef AQ_AGENT_OBJ_BE_H
#define AQ_AGENT_OBJ_BE_H

#include <pthread.h>
#include <stdatomic.h>

#include "agent/obj/obj.h"

struct obj_ops {
	int (*open)(struct obj_store *s);  /* sets s->be */
	void (*close)(struct obj_store *s);
	int (*ensure_bucket)(struct obj_store *s);
	int (*put)(struct obj_store *s, const char *key, const void *buf, size_t len);
	int (*get)(struct obj_store *s, const char *key, uint64_t off, void *buf, size_t len, size_t *got);
	int (*get_many)(struct obj_store *s, struct obj_range *r, size_t n, unsigned parallel);
	int (*head)(struct obj_store *s, const char *key, uint64_t *size);
	int (*del)(struct obj_store *s, const char *key);
	int (*list)(struct obj_store *s, const char *prefix, obj_list_cb cb, void *arg);
};

struct obj_store {
	const struct obj_ops *ops;
	struct obj_cfg cfg;
	char desc[1024];
	void *be;  /* backend state */
	_Atomic uint64_t put_bytes, get_bytes;
	pthread_mutex_t err_lock;
	char last_err[256];
};

/* Records the text obj_last_error() returns. */
void obj_be_error(struct obj_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

extern const struct obj_ops obj_dir_ops;
extern const struct obj_ops obj_s3_ops;

/* A key prefix for obj_list: "" or the key alphabet, no "//", no "." or
 * ".." complete component; may end with '/' or a partial component. */
int obj_prefix_check(const char *prefix);

#endif
