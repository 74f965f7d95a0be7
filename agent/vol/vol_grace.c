/* vol_grace: lock holders recorded on the shelf per volume, and the grace
 * period a volume enters on the node that attaches it (vol_grace.h).
 *
 * One struct vol_grace per volume, owned by its accounting (vol_acct): made
 * when the store first attaches the volume (the records read, grace started
 * when they name holders), kept while the volume stays attached across
 * vol_store_set calls, freed when it goes. Why the records are rewritten
 * whole: they are small (a line a holder), change only when a holder comes
 * or goes (not per lock), and a rename is the one atomic update a shared
 * directory shelf offers every node. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/vol/vol_grace.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/vol/vol_internal.h"
#include "util/ut_clock.h"
#include "util/ut_hex.h"
#include "util/ut_log.h"

struct vol_grace_rec {
	uint8_t proto;               /* enum vol_grace_proto */
	bool prev;                   /* in the records when this node attached the volume */
	bool live;                   /* recorded or reclaimed since */
	bool done;                   /* NFSv4.1: RECLAIM_COMPLETE */
	uint16_t len;
	uint8_t *name;
	struct sockaddr_storage addr;
};

struct vol_grace {
	pthread_mutex_t mu;
	char dir[4096];
	uint64_t end_ns;             /* in grace until then; 0: not in grace */
	size_t n, cap;
	struct vol_grace_rec *recs;
};

enum { LINE_MAX_ = 2 * VOL_GRACE_NAME_MAX + 128 };

static const char *proto_name(unsigned p)
{
	return p == VOL_GRACE_NLM ? "nlm" : "nfs4";
}

int vol_grace_parse_line(const char *line, unsigned *proto, uint8_t *name, size_t *len,
			 struct sockaddr_storage *addr)
{
	char p[8], a[INET6_ADDRSTRLEN + 1], hex[2 * VOL_GRACE_NAME_MAX + 2];
	size_t hl;

	memset(addr, 0, sizeof(*addr));
	if (sscanf(line, "%7s %46s %2049s", p, a, hex) != 3)
		return -EINVAL;
	if (!strcmp(p, "nlm"))
		*proto = VOL_GRACE_NLM;
	else if (!strcmp(p, "nfs4"))
		*proto = VOL_GRACE_NFS4;
	else
		return -EINVAL;
	hl = strlen(hex);
	if (hl == 0 || hl % 2 || hl / 2 > VOL_GRACE_NAME_MAX ||
	    ut_hex_decode(hex, hl, name, VOL_GRACE_NAME_MAX, len) != AQ_OK || *len == 0)
		return -EINVAL;
	if (!strcmp(a, "-"))
		addr->ss_family = AF_UNSPEC;
	else if (inet_pton(AF_INET, a, &((struct sockaddr_in *)addr)->sin_addr) == 1)
		addr->ss_family = AF_INET;
	else if (inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)addr)->sin6_addr) == 1)
		addr->ss_family = AF_INET6;
	else
		return -EINVAL;
	return 0;
}

static struct vol_grace_rec *grace_find(struct vol_grace *g, unsigned proto, const void *name, size_t len)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->recs[i].proto == proto && g->recs[i].len == len && !memcmp(g->recs[i].name, name, len))
			return &g->recs[i];
	return NULL;
}

/* Append a record (the caller checked the caps). */
static struct vol_grace_rec *grace_add(struct vol_grace *g, unsigned proto, const void *name, size_t len,
				       const struct sockaddr_storage *addr)
{
	struct vol_grace_rec *r;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		void *p = realloc(g->recs, cap * sizeof(*g->recs));

		if (!p)
			return NULL;
		g->recs = p;
		g->cap = cap;
	}
	r = &g->recs[g->n];
	memset(r, 0, sizeof(*r));
	if (!(r->name = malloc(len)))
		return NULL;
	memcpy(r->name, name, len);
	r->len = (uint16_t)len;
	r->proto = (uint8_t)proto;
	if (addr)
		r->addr = *addr;
	g->n++;
	return r;
}

static void grace_del(struct vol_grace *g, size_t i)
{
	free(g->recs[i].name);
	g->recs[i] = g->recs[--g->n];
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Write the records durably: a temporary file, fsync, rename, fsync of
 * the folder (under g->mu). */
static int grace_save(struct vol_grace *g)
{
	char path[4200], tmp[4210], a[INET6_ADDRSTRLEN];
	char *hex = NULL;
	FILE *f = NULL;
	int rc = 0;

	if (mkdir(g->dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", g->dir, VOL_GRACE_FILE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(hex = malloc(2 * VOL_GRACE_NAME_MAX + 1)))
		return -ENOMEM;
	if (!(f = fopen(tmp, "we"))) {
		rc = -errno;
		goto out;
	}
	fprintf(f, "aquifer-lock-holders 1\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct vol_grace_rec *r = &g->recs[i];
		const void *ip = r->addr.ss_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)&r->addr)->sin6_addr
							       : (const void *)&((const struct sockaddr_in *)&r->addr)->sin_addr;

		if (r->addr.ss_family == AF_UNSPEC || !inet_ntop(r->addr.ss_family, ip, a, sizeof(a)))
			snprintf(a, sizeof(a), "-");
		ut_hex_encode(r->name, r->len, hex, 2 * VOL_GRACE_NAME_MAX + 1);
		fprintf(f, "%s %s %s\n", proto_name(r->proto), a, hex);
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	f = NULL;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc == 0)
		rc = fsync_dir(g->dir);
	if (rc != 0) {
		unlink(tmp);
		UT_WARN("vol_grace", NULL, "cannot write %s: %s", path, strerror(-rc));
	}
out:
	free(hex);
	return rc;
}

/* Read the records (a missing file: none); every one is "prev". */
static void grace_load(struct vol_grace *g)
{
	char path[4200], *line = NULL;
	uint8_t *name = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", g->dir, VOL_GRACE_FILE);
	if (!(f = fopen(path, "re")))
		return;
	if (!(line = malloc(LINE_MAX_)) || !(name = malloc(VOL_GRACE_NAME_MAX)))
		goto out;
	while (fgets(line, LINE_MAX_, f)) {
		struct sockaddr_storage addr;
		struct vol_grace_rec *r;
		unsigned proto;
		size_t len;
		int c;

		if (!strchr(line, '\n') && !feof(f)) { /* too long: skip the rest of it */
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (vol_grace_parse_line(line, &proto, name, &len, &addr) != 0 || grace_find(g, proto, name, len))
			continue;
		if (g->n >= VOL_GRACE_MAX || !(r = grace_add(g, proto, name, len, &addr)))
			break;
		r->prev = true;
	}
out:
	fclose(f);
	free(line);
	free(name);
}

/* Is g in grace at now? Ends it when its time passed: the holders that did
 * not come back are dropped (under g->mu). */
static bool grace_check(struct vol_grace *g, uint64_t now)
{
	size_t before = g->n;

	if (!g->end_ns)
		return false;
	if (now < g->end_ns)
		return true;
	g->end_ns = 0;
	for (size_t i = g->n; i-- > 0;)
		if (g->recs[i].prev && !g->recs[i].live)
			grace_del(g, i);
	for (size_t i = 0; i < g->n; i++)
		g->recs[i].prev = false;
	if (g->n != before)
		(void)grace_save(g); /* best effort: a stale record costs the next node a grace period */
	UT_INFO("vol_grace", NULL, "grace period over for %s: %zu holder(s) kept", g->dir, g->n);
	return false;
}

struct vol_grace *vol_grace_open(struct vol_store *s, const char *dir)
{
	struct vol_grace *g;
	size_t nlm = 0;

	if (!dir || !dir[0] || !(g = calloc(1, sizeof(*g))))
		return NULL;
	pthread_mutex_init(&g->mu, NULL);
	snprintf(g->dir, sizeof(g->dir), "%s", dir);
	grace_load(g);
	if (g->n && s->grace_s) {
		g->end_ns = ut_clock_mono_ns() + (uint64_t)s->grace_s * 1000000000ull;
		pthread_mutex_lock(&s->grace_mu);
		for (size_t i = 0; i < g->n; i++) {
			const struct vol_grace_rec *r = &g->recs[i];
			struct vol_grace_host *h;

			if (r->proto != VOL_GRACE_NLM || r->addr.ss_family == AF_UNSPEC)
				continue;
			nlm++;
			if (!s->notify && !(s->notify = calloc(VOL_GRACE_NOTIFY_MAX, sizeof(*s->notify))))
				break;
			if (s->nnotify >= VOL_GRACE_NOTIFY_MAX)
				break; /* bounded: the rest reclaim when their own statd learns */
			h = &s->notify[s->nnotify++];
			memcpy(h->name, r->name, r->len);
			h->name[r->len] = 0;
			h->addr = r->addr;
		}
		pthread_mutex_unlock(&s->grace_mu);
		UT_INFO("vol_grace", NULL, "%s: %zu holder(s) recorded (%zu NLM host(s) to notify): grace period of %u s",
			dir, g->n, nlm, s->grace_s);
	}
	return g;
}

void vol_grace_close(struct vol_grace *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		free(g->recs[i].name);
	free(g->recs);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void vol_store_set_grace(struct vol_store *s, unsigned grace_s)
{
	s->grace_s = grace_s;
}

static struct vol_grace *grace_of(struct vol_export *e)
{
	return e && e->acct ? e->acct->grace : NULL;
}

int vol_grace_record(struct vol_export *e, unsigned proto, const void *name, size_t len,
		     const struct sockaddr *addr)
{
	struct vol_grace *g = grace_of(e);
	struct sockaddr_storage ss = { .ss_family = AF_UNSPEC };
	struct vol_grace_rec *r;
	int rc = 0;

	if (!g)
		return 0;
	if (len == 0 || len > VOL_GRACE_NAME_MAX || (proto != VOL_GRACE_NLM && proto != VOL_GRACE_NFS4))
		return -EINVAL;
	if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6))
		memcpy(&ss, addr, addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = 0;
	else if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = 0;
	pthread_mutex_lock(&g->mu);
	if ((r = grace_find(g, proto, name, len))) {
		r->live = true;
		if (ss.ss_family != AF_UNSPEC && memcmp(&r->addr, &ss, sizeof(ss)) != 0) {
			r->addr = ss; /* a host that moved is notified where it is now */
			(void)grace_save(g);
		}
		goto out;
	}
	if (g->n >= VOL_GRACE_MAX) {
		rc = -ENOLCK;
		goto out;
	}
	if (!(r = grace_add(g, proto, name, len, &ss))) {
		rc = -ENOMEM;
		goto out;
	}
	r->live = true;
	if ((rc = grace_save(g)) != 0)
		grace_del(g, g->n - 1); /* not on the shelf: not granted */
out:
	pthread_mutex_unlock(&g->mu);
	return rc;
}

bool vol_grace_active(struct vol_export *e)
{
	struct vol_grace *g = grace_of(e);
	bool in;

	if (!g)
		return false;
	pthread_mutex_lock(&g->mu);
	in = grace_check(g, ut_clock_mono_ns());
	pthread_mutex_unlock(&g->mu);
	return in;
}

bool vol_grace_may_reclaim(struct vol_export *e, unsigned proto, const void *name, size_t len)
{
	struct vol_grace *g = grace_of(e);
	struct vol_grace_rec *r;
	bool may = false;

	if (!g)
		return false;
	pthread_mutex_lock(&g->mu);
	if (grace_check(g, ut_clock_mono_ns()) && (r = grace_find(g, proto, name, len)) && r->prev && !r->done)
		may = true;
	pthread_mutex_unlock(&g->mu);
	return may;
}

/* Run fn on the grace state of every attached volume of s. */
static void grace_each(struct vol_store *s, void (*fn)(struct vol_grace *g, unsigned proto, const void *name,
						      size_t len),
		       unsigned proto, const void *name, size_t len)
{
	struct vol_export *e;

	for (size_t i = 0; (e = vol_export_at(s, i)); i++) {
		struct vol_grace *g = grace_of(e);

		if (g) {
			pthread_mutex_lock(&g->mu);
			fn(g, proto, name, len);
			pthread_mutex_unlock(&g->mu);
		}
		vol_export_unref(e);
	}
}

static void done_one(struct vol_grace *g, unsigned proto, const void *name, size_t len)
{
	struct vol_grace_rec *r = grace_find(g, proto, name, len);
	bool all = true;

	if (!r || !grace_check(g, ut_clock_mono_ns()))
		return;
	r->done = true;
	r->live = true;
	/* every holder of the previous node is a v4.1 client done reclaiming: nothing left to wait for */
	for (size_t i = 0; i < g->n && all; i++)
		if (g->recs[i].prev && (g->recs[i].proto != VOL_GRACE_NFS4 || !g->recs[i].done))
			all = false;
	if (all) {
		g->end_ns = 1;
		(void)grace_check(g, ut_clock_mono_ns());
	}
}

void vol_grace_reclaim_done(struct vol_store *s, unsigned proto, const void *name, size_t len)
{
	grace_each(s, done_one, proto, name, len);
}

static void forget_one(struct vol_grace *g, unsigned proto, const void *name, size_t len)
{
	struct vol_grace_rec *r = grace_find(g, proto, name, len);

	if (!r)
		return;
	grace_del(g, (size_t)(r - g->recs));
	(void)grace_save(g); /* best effort: a stale record costs the next node a grace period */
}

void vol_grace_forget(struct vol_store *s, unsigned proto, const void *name, size_t len)
{
	grace_each(s, forget_one, proto, name, len);
}

size_t vol_grace_notify_take(struct vol_store *s, struct vol_grace_host *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&s->grace_mu);
	n = s->nnotify < max ? s->nnotify : max;
	if (n) {
		memcpy(out, s->notify, n * sizeof(*out));
		memmove(s->notify, s->notify + n, (s->nnotify - n) * sizeof(*out));
		s->nnotify -= n;
	}
	pthread_mutex_unlock(&s->grace_mu);
	return n;
}
