/* vol_watch: the store's change notification (contract: vol_watch.h). The
 * watches of every volume hang on one list of the store under watch_mu; a
 * volume's count of watches (its acct, which survives export-set changes)
 * lets an operation on an unwatched volume return after one atomic load.
 * A changed object is placed by the path of its descriptor
 * (/proc/self/fd), relative to its export root's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/vol/vol_internal.h"
#include "agent/vol/vol_watch.h"

struct vol_watch {
	struct vol_watch *next;
	struct vol_store *store;
	struct vol_export *exp;    /* counted: keeps the acct the watch is counted in */
	unsigned mask;
	bool tree;
	vol_watch_wake_fn wake;
	void *arg;
	struct vol_watch_ev *head, *tail;
	unsigned n;
	size_t bytes;
	bool overflow;
	bool gone;                 /* the watched directory was removed */
	char path[];               /* the watched directory from the export root ("" = root) */
};

/* The path of descriptor fd ("/proc/self/fd/N"): 0 or -errno. */
static int watch_fd_path(const struct vol_store *s, int fd, char *out, size_t cap)
{
	char num[16];
	ssize_t n;

	snprintf(num, sizeof(num), "%d", fd);
	if ((n = readlinkat(s->procfd, num, out, cap - 1)) < 0)
		return -errno;
	if ((size_t)n >= cap - 1)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

/* o's path from its export root, without a leading '/' ("" = the root):
 * 0, -ENOENT (o was deleted), -EXDEV (not below the root), -errno. */
static int watch_rel(const struct vol_obj *o, char *out, size_t cap)
{
	static const char deleted[] = " (deleted)";
	char root[PATH_MAX], p[PATH_MAX];
	size_t rl, pl;
	int rc;

	if ((rc = watch_fd_path(o->exp->store, o->exp->root_fd, root, sizeof(root))) != 0 ||
	    (rc = watch_fd_path(o->exp->store, o->fd, p, sizeof(p))) != 0)
		return rc;
	pl = strlen(p);
	if (pl >= sizeof(deleted) && !strcmp(p + pl - (sizeof(deleted) - 1), deleted))
		return -ENOENT;
	rl = strcmp(root, "/") ? strlen(root) : 0;
	if (strncmp(p, root, rl) || (p[rl] != '/' && p[rl] != '\0'))
		return -EXDEV;
	rl += p[rl] == '/';
	if (pl - rl >= cap)
		return -ENAMETOOLONG;
	memcpy(out, p + rl, pl - rl + 1);
	return 0;
}

int vol_watch_add(struct vol_obj *dir, unsigned mask, bool tree, vol_watch_wake_fn wake, void *arg,
		  struct vol_watch **out)
{
	struct vol_store *s = dir->exp->store;
	char rel[PATH_MAX];
	struct vol_watch *w = NULL;
	int rc;

	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if (dir->snap || !(mask & VOL_WATCH_ALL) || !wake)
		return -EINVAL;
	if ((rc = watch_rel(dir, rel, sizeof(rel))) != 0)
		return rc;
	if (!(w = calloc(1, sizeof(*w) + strlen(rel) + 1)))
		return -ENOMEM;
	memcpy(w->path, rel, strlen(rel) + 1);
	w->store = s;
	w->exp = dir->exp;
	w->mask = mask & VOL_WATCH_ALL;
	w->tree = tree;
	w->wake = wake;
	w->arg = arg;
	pthread_mutex_lock(&s->watch_mu);
	if (s->nwatches >= VOL_WATCH_MAX) {
		pthread_mutex_unlock(&s->watch_mu);
		free(w);
		return -ENOSPC;
	}
	atomic_fetch_add(&w->exp->refs, 1);
	atomic_fetch_add(&w->exp->acct->watchers, 1);
	w->next = s->watches;
	s->watches = w;
	s->nwatches++;
	pthread_mutex_unlock(&s->watch_mu);
	*out = w;
	return 0;
}

void vol_watch_ev_free(struct vol_watch_ev *ev)
{
	while (ev) {
		struct vol_watch_ev *nx = ev->next;

		free(ev);
		ev = nx;
	}
}

void vol_watch_remove(struct vol_watch *w)
{
	struct vol_store *s;
	struct vol_watch **pp;

	if (!w)
		return;
	s = w->store;
	pthread_mutex_lock(&s->watch_mu);
	for (pp = &s->watches; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = w->next;
		s->nwatches--;
	}
	atomic_fetch_sub(&w->exp->acct->watchers, 1);
	pthread_mutex_unlock(&s->watch_mu);
	vol_watch_ev_free(w->head);
	vol_export_unref(w->exp);
	free(w);
}

struct vol_watch_ev *vol_watch_take(struct vol_watch *w, bool *overflow)
{
	struct vol_watch_ev *ev;

	pthread_mutex_lock(&w->store->watch_mu);
	ev = w->head;
	*overflow = w->overflow;
	w->head = w->tail = NULL;
	w->n = 0;
	w->bytes = 0;
	w->overflow = false;
	pthread_mutex_unlock(&w->store->watch_mu);
	return ev;
}

bool vol_watch_gone(struct vol_watch *w)
{
	bool gone;

	pthread_mutex_lock(&w->store->watch_mu);
	gone = w->gone;
	pthread_mutex_unlock(&w->store->watch_mu);
	return gone;
}

/* Queue one event on w (watch_mu held); sub: the directory below w's. */
static void watch_queue(struct vol_watch *w, const char *sub, const char *name, enum vol_watch_action action)
{
	size_t sl = strlen(sub), nl = strlen(name), len = sl + (sl ? 1 : 0) + nl;
	bool was_empty = !w->head && !w->overflow;
	struct vol_watch_ev *ev;

	if (w->overflow)
		return;
	if (w->n >= VOL_WATCH_QUEUE_MAX || w->bytes + len > VOL_WATCH_QUEUE_BYTES ||
	    !(ev = malloc(sizeof(*ev) + len + 1))) {
		vol_watch_ev_free(w->head);
		w->head = w->tail = NULL;
		w->n = 0;
		w->bytes = 0;
		w->overflow = true;
		w->wake(w->arg); /* again, if it already had events: harmless */
		return;
	}
	ev->next = NULL;
	ev->action = action;
	ev->len = len;
	if (sl) {
		memcpy(ev->name, sub, sl);
		ev->name[sl] = '/';
		memcpy(ev->name + sl + 1, name, nl + 1);
	} else {
		memcpy(ev->name, name, nl + 1);
	}
	if (w->tail)
		w->tail->next = ev;
	else
		w->head = ev;
	w->tail = ev;
	w->n++;
	w->bytes += len;
	if (was_empty)
		w->wake(w->arg);
}

/* Deliver the change of name in the directory at dirrel (of acct's volume)
 * to the watches that want it. */
static void watch_deliver(struct vol_store *s, const struct vol_acct *acct, const char *dirrel, const char *name,
			  enum vol_watch_action action, unsigned what)
{
	size_t dl = strlen(dirrel);

	pthread_mutex_lock(&s->watch_mu);
	for (struct vol_watch *w = s->watches; w; w = w->next) {
		size_t wl = strlen(w->path);
		const char *sub;

		if (w->exp->acct != acct)
			continue;
		/* the watched directory itself removed: dirrel/name is its path */
		if (action == VOL_WATCH_REMOVED && (what & VOL_WATCH_DIR_NAME) && !w->gone &&
		    (dl ? wl > dl && !strncmp(w->path, dirrel, dl) && w->path[dl] == '/' && !strcmp(w->path + dl + 1, name)
			: !strcmp(w->path, name))) {
			w->gone = true;
			w->wake(w->arg);
			continue;
		}
		if (!(w->mask & what))
			continue;
		if (!strcmp(dirrel, w->path))
			sub = "";
		else if (w->tree && wl == 0 && dirrel[0])
			sub = dirrel;
		else if (w->tree && wl && !strncmp(dirrel, w->path, wl) && dirrel[wl] == '/')
			sub = dirrel + wl + 1;
		else
			continue;
		watch_queue(w, sub, name, action);
	}
	pthread_mutex_unlock(&s->watch_mu);
}

void vol_watch_note(struct vol_obj *dir, const char *name, enum vol_watch_action action, unsigned what)
{
	char rel[PATH_MAX];

	if (dir->snap || !atomic_load_explicit(&dir->exp->acct->watchers, memory_order_relaxed))
		return;
	if (watch_rel(dir, rel, sizeof(rel)) == 0)
		watch_deliver(dir->exp->store, dir->exp->acct, rel, name, action, what);
}

void vol_watch_note_obj(struct vol_obj *obj, enum vol_watch_action action, unsigned what)
{
	char rel[PATH_MAX], *slash;

	if (obj->snap || !atomic_load_explicit(&obj->exp->acct->watchers, memory_order_relaxed))
		return;
	if (watch_rel(obj, rel, sizeof(rel)) != 0 || !rel[0])
		return; /* deleted, or the root (which has no directory in the volume) */
	if ((slash = strrchr(rel, '/'))) {
		*slash = '\0';
		watch_deliver(obj->exp->store, obj->exp->acct, rel, slash + 1, action, what);
	} else {
		watch_deliver(obj->exp->store, obj->exp->acct, "", rel, action, what);
	}
}
