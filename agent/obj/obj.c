/* obj: dispatch of the object-store API (obj.h) to its backends, and the
 * checks every call shares: configuration, keys, prefixes, arguments. A
 * backend only ever sees a valid key, so a bad key is -EINVAL with no I/O. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/obj/obj_be.h"

static int key_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '/';
}

/* Checks the alphabet and the components of s; a key needs a non-empty last
 * component, a prefix may end anywhere. */
static int path_check(const char *s, int is_key)
{
	size_t n = strnlen(s, OBJ_KEY_MAX + 1), start = 0;

	if (n > OBJ_KEY_MAX || (is_key && n == 0))
		return -EINVAL;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && !key_char(s[i]))
			return -EINVAL;
		if (i < n && s[i] != '/')
			continue;
		size_t clen = i - start;
		int last = i == n;
		/* Empty component: leading '/' or "//"; at the end a key's
		 * trailing '/' (a prefix may end in '/'). */
		if (clen == 0 && (!last || is_key))
			return -EINVAL;
		/* "." or ".." as a whole component; a prefix's last partial
		 * component ("a/.") could still grow into ".x", so allow it. */
		if ((!last || is_key) && ((clen == 1 && s[start] == '.') ||
					 (clen == 2 && s[start] == '.' && s[start + 1] == '.')))
			return -EINVAL;
		start = i + 1;
	}
	return 0;
}

int obj_key_check(const char *key)
{
	return key ? path_check(key, 1) : -EINVAL;
}

int obj_prefix_check(const char *prefix)
{
	if (!prefix)
		return -EINVAL;
	if (prefix[0] == '\0')
		return 0;
	return path_check(prefix, 0);
}

static int cfg_str_ok(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n == cap)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] == 0x7f)
			return 0;
	return 1;
}

static int bucket_ok(const char *b)
{
	size_t n = strnlen(b, 64);

	if (n < 3 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '.' || b[i] == '-'))
			return 0;
	return b[0] != '.' && b[0] != '-' && b[n - 1] != '.' && b[n - 1] != '-';
}

/* Validates cfg into *c (normalised: default region and timeout, no trailing
 * '/' on the endpoint or path). */
static int cfg_check(const struct obj_cfg *cfg, struct obj_cfg *c)
{
	*c = *cfg;
	if (c->timeout_ms == 0)
		c->timeout_ms = OBJ_TIMEOUT_MS_DEFAULT;
	if (c->kind == OBJ_DIRECTORY) {
		size_t n = strnlen(c->path, sizeof c->path);
		if (n == 0 || n == sizeof c->path || c->path[0] != '/')
			return -EINVAL;
		while (n > 1 && c->path[n - 1] == '/')
			c->path[--n] = '\0';
		return 0;
	}
	if (c->kind != OBJ_S3)
		return -EINVAL;
	if (!cfg_str_ok(c->endpoint, sizeof c->endpoint) || !bucket_ok(c->bucket) ||
	    !cfg_str_ok(c->region, sizeof c->region) || !cfg_str_ok(c->access_key, sizeof c->access_key) ||
	    !cfg_str_ok(c->secret_key, sizeof c->secret_key) || !cfg_str_ok(c->ca_file, sizeof c->ca_file))
		return -EINVAL;
	if (strncmp(c->endpoint, "http://", 7) != 0 && strncmp(c->endpoint, "https://", 8) != 0)
		return -EINVAL;
	if (strpbrk(c->endpoint, "?#") || c->access_key[0] == '\0' || c->secret_key[0] == '\0')
		return -EINVAL;
	size_t n = strlen(c->endpoint);
	while (n > 0 && c->endpoint[n - 1] == '/')
		c->endpoint[--n] = '\0';
	if (n <= 8)
		return -EINVAL;
	if (c->region[0] == '\0')
		snprintf(c->region, sizeof c->region, "us-east-1");
	for (const char *p = c->region; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return -EINVAL;
	return 0;
}

int obj_open(const struct obj_cfg *cfg, struct obj_store **out)
{
	struct obj_store *s = NULL;
	int rc;

	*out = NULL;
	if (!cfg)
		return -EINVAL;
	if (!(s = calloc(1, sizeof *s)))
		return -ENOMEM;
	pthread_mutex_init(&s->err_lock, NULL);
	if ((rc = cfg_check(cfg, &s->cfg)) != 0)
		goto out;
	if (s->cfg.kind == OBJ_DIRECTORY) {
		s->ops = &obj_dir_ops;
		snprintf(s->desc, sizeof s->desc, "directory %s", s->cfg.path);
	} else {
		s->ops = &obj_s3_ops;
		snprintf(s->desc, sizeof s->desc, "s3 %s/%s", s->cfg.endpoint, s->cfg.bucket);
	}
	if ((rc = s->ops->open(s)) != 0)
		goto out;
	*out = s;
	s = NULL;
out:
	if (s)
		pthread_mutex_destroy(&s->err_lock);
	free(s);
	return rc;
}

void obj_close(struct obj_store *s)
{
	if (!s)
		return;
	s->ops->close(s);
	pthread_mutex_destroy(&s->err_lock);
	free(s);
}

int obj_ensure_bucket(struct obj_store *s)
{
	return s->ops->ensure_bucket(s);
}

int obj_put(struct obj_store *s, const char *key, const void *buf, size_t len)
{
	if (obj_key_check(key) != 0 || (!buf && len))
		return -EINVAL;
	return s->ops->put(s, key, buf, len);
}

int obj_get(struct obj_store *s, const char *key, uint64_t off, void *buf, size_t len, size_t *got)
{
	*got = 0;
	if (obj_key_check(key) != 0 || (!buf && len) || off > INT64_MAX || len > INT64_MAX - off)
		return -EINVAL;
	if (len == 0) {
		uint64_t size;
		return s->ops->head(s, key, &size);
	}
	return s->ops->get(s, key, off, buf, len, got);
}

int obj_get_many(struct obj_store *s, struct obj_range *r, size_t n, unsigned parallel)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		r[i].got = 0;
		r[i].rc = 0;
		if (obj_key_check(r[i].key) != 0 || (!r[i].buf && r[i].len) || r[i].len == 0 ||
		    r[i].off > INT64_MAX || r[i].len > INT64_MAX - r[i].off) {
			r[i].rc = -EINVAL;
			bad = 1;
		}
	}
	if (bad)
		return -EINVAL;
	if (n == 0)
		return 0;
	if (parallel == 0)
		parallel = 1;
	s->ops->get_many(s, r, n, parallel);
	for (size_t i = 0; i < n; i++)
		if (r[i].rc != 0)
			return r[i].rc;
	return 0;
}

int obj_head(struct obj_store *s, const char *key, uint64_t *size)
{
	*size = 0;
	if (obj_key_check(key) != 0)
		return -EINVAL;
	return s->ops->head(s, key, size);
}

int obj_delete(struct obj_store *s, const char *key)
{
	if (obj_key_check(key) != 0)
		return -EINVAL;
	return s->ops->del(s, key);
}

int obj_list(struct obj_store *s, const char *prefix, obj_list_cb cb, void *arg)
{
	if (obj_prefix_check(prefix) != 0 || !cb)
		return -EINVAL;
	return s->ops->list(s, prefix, cb, arg);
}

void obj_counters(struct obj_store *s, uint64_t *put_bytes, uint64_t *get_bytes)
{
	*put_bytes = atomic_load(&s->put_bytes);
	*get_bytes = atomic_load(&s->get_bytes);
}

void obj_be_error(struct obj_store *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->err_lock);
	va_start(ap, fmt);
	vsnprintf(s->last_err, sizeof s->last_err, fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&s->err_lock);
}

void obj_last_error(struct obj_store *s, char *buf, size_t cap)
{
	if (cap == 0)
		return;
	pthread_mutex_lock(&s->err_lock);
	snprintf(buf, cap, "%s", s->last_err);
	pthread_mutex_unlock(&s->err_lock);
}

const char *obj_describe(const struct obj_store *s)
{
	return s->desc;
}

const char *obj_strerror(int rc)
{
	switch (rc) {
	case 0: return "ok";
	case -ENOENT: return "no such object";
	case -EAGAIN: return "store unreachable, timed out or busy";
	case -EACCES: return "credentials refused";
	case -EINVAL: return "invalid configuration or key";
	case -ENOMEM: return "out of memory";
	default: return "store error";
	}
}
