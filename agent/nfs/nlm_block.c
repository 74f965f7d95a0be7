/* nlm_block: blocked NLM LOCKs and the lock manager's callback thread (the
 * only thread here that talks to clients on its own): it takes a waiting
 * lock when a release wakes it, calls the client's NLM4_GRANTED, takes back
 * what the client refuses or never claims (NLM_GRANT_UNCLAIMED_S), and
 * after a restart sends SM_NOTIFY to the hosts recorded in the state
 * directory's "nlm-hosts" file (kept here too). Every network step is
 * bounded by cfg.cb_timeout_ms and runs with no mutex held, so a client that
 * does not answer delays nothing but its own callback. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nlm_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/ut_clock.h"
#include "util/ut_hex.h"
#include "util/ut_log.h"

#define NLM_CB_RETRY_NS (10ull * 1000000000ull) /* GRANTED again after an unreachable call */
#define NLM_CB_JOBS 16                          /* callbacks per round */
#define NLM_CB_REPLY_MAX 4096u
#define NS 1000000000ull

/* ---------- blocks (under s->mu) ---------- */

static void block_wake(struct vol_lock_waiter *w)
{
	struct nlm_srv *s = w->arg;

	/* under the table's mutex: only the thread's own flag */
	pthread_mutex_lock(&s->wmu);
	s->kick = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->wmu);
}

static bool same_owner(const struct vol_lock_owner *a, const struct vol_lock_owner *b)
{
	return a->proto == b->proto && a->client == b->client && a->id == b->id;
}

static bool same_key(const struct vol_lock_key *a, const struct vol_lock_key *b)
{
	return a->fsid == b->fsid && a->dev == b->dev && a->ino == b->ino;
}

uint32_t nlm_block_add(struct nlm_srv *s, const struct nlm_block *proto)
{
	struct nlm_block *b, **tail;

	if (s->nblocks >= NLM_BLOCKS_MAX || !(b = malloc(sizeof(*b))))
		return NLM4_DENIED_NOLOCKS;
	*b = *proto;
	b->next = NULL;
	b->srv = s;
	b->id = ++s->next_id;
	b->state = NLM_BL_WAIT;
	b->calling = false;
	memset(&b->w, 0, sizeof(b->w));
	b->w.key = b->key;
	b->w.wake = block_wake;
	b->w.arg = s;
	if (vol_lock_wait(s->locks, &b->w) != 0) {
		free(b);
		return NLM4_DENIED_NOLOCKS;
	}
	/* the holder may have gone between the caller's try and the wait */
	if (vol_lock_lock(s->locks, &b->key, &b->owner, b->start, b->len, b->flags, NULL) == 0) {
		vol_lock_unwait(s->locks, &b->w);
		free(b);
		return NLM4_GRANTED;
	}
	for (tail = &s->blocks; *tail; tail = &(*tail)->next) /* FIFO: first come, first granted */
		;
	*tail = b;
	s->nblocks++;
	return NLM4_BLOCKED;
}

struct nlm_block *nlm_block_find(struct nlm_srv *s, const struct vol_lock_key *k, const struct vol_lock_owner *o,
				 uint64_t start, uint64_t len, unsigned flags)
{
	for (struct nlm_block *b = s->blocks; b; b = b->next)
		if (same_key(&b->key, k) && same_owner(&b->owner, o) && b->start == start && b->len == len &&
		    b->flags == flags)
			return b;
	return NULL;
}

void nlm_block_drop(struct nlm_srv *s, struct nlm_block *b)
{
	for (struct nlm_block **p = &s->blocks; *p; p = &(*p)->next)
		if (*p == b) {
			*p = b->next;
			s->nblocks--;
			break;
		}
	vol_lock_unwait(s->locks, &b->w);
	free(b);
}

void nlm_block_drop_host(struct nlm_srv *s, uint64_t host)
{
	for (struct nlm_block *b = s->blocks, *nx; b; b = nx) {
		nx = b->next;
		if (b->owner.client == host)
			nlm_block_drop(s, b);
	}
}

void nlm_block_drop_owner(struct nlm_srv *s, const struct vol_lock_key *k, const struct vol_lock_owner *o)
{
	for (struct nlm_block *b = s->blocks, *nx; b; b = nx) {
		nx = b->next;
		if (!same_key(&b->key, k) || !same_owner(&b->owner, o))
			continue;
		if (b->state == NLM_BL_GRANTED)
			(void)vol_lock_unlock(s->locks, &b->key, &b->owner, b->start, b->len, VOL_LOCK_F_POSIX);
		nlm_block_drop(s, b);
	}
}

static struct nlm_block *block_by_id(struct nlm_srv *s, uint64_t id)
{
	for (struct nlm_block *b = s->blocks; b; b = b->next)
		if (b->id == id)
			return b;
	return NULL;
}

/* The client answered our GRANTED (synchronously or by GRANTED_RES). */
static void granted_answer(struct nlm_srv *s, struct nlm_block *b, uint32_t stat)
{
	if (b->state != NLM_BL_GRANTED)
		return;
	if (stat == NLM4_DENIED_GRACE_PERIOD)
		return; /* the client is in its own grace period: call again later */
	if (stat != NLM4_GRANTED) /* it gave up meanwhile: take the lock back */
		(void)vol_lock_unlock(s->locks, &b->key, &b->owner, b->start, b->len, VOL_LOCK_F_POSIX);
	nlm_block_drop(s, b);
}

void nlm_block_granted_res(struct nlm_srv *s, uint64_t id, uint32_t stat)
{
	struct nlm_block *b;

	pthread_mutex_lock(&s->mu);
	if ((b = block_by_id(s, id)))
		granted_answer(s, b, stat);
	pthread_mutex_unlock(&s->mu);
}

size_t nlm_srv_blocks(struct nlm_srv *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->nblocks;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ---------- a small bounded RPC client over TCP ---------- */

static int cb_dial(const struct sockaddr_storage *peer, uint16_t port, unsigned ms)
{
	struct sockaddr_storage a = *peer;
	socklen_t alen = a.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	struct pollfd pfd;
	int fd, err = 0;
	socklen_t elen = sizeof(err);

	if (a.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&a)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&a)->sin_port = htons(port);
	if ((fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, alen) != 0 && errno != EINPROGRESS)
		goto fail;
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&pfd, 1, (int)ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err)
		goto fail;
	return fd;
fail:
	close(fd);
	return -ETIMEDOUT;
}

static int cb_io(int fd, void *p, size_t n, bool out, uint64_t deadline)
{
	size_t done = 0;

	while (done < n) {
		uint64_t now = ut_clock_mono_ns();
		struct pollfd pfd = { .fd = fd, .events = out ? POLLOUT : POLLIN };
		ssize_t k;

		if (now >= deadline || poll(&pfd, 1, (int)((deadline - now) / 1000000 + 1)) != 1)
			return -ETIMEDOUT;
		k = out ? send(fd, (uint8_t *)p + done, n - done, MSG_NOSIGNAL) : recv(fd, (uint8_t *)p + done, n - done, 0);
		if (k <= 0)
			return -EIO;
		done += (size_t)k;
	}
	return 0;
}

/* Call (prog, vers, proc) with args (after the header) on fd; the result's
 * bytes land in rep (at most NLM_CB_REPLY_MAX, one fragment) and *res points
 * at them. 0 or a negative errno. */
static int cb_call(int fd, uint32_t prog, uint32_t vers, uint32_t proc, const struct ut_buf *args, unsigned ms,
		   uint8_t *rep, struct xdr_cur *res)
{
	static _Atomic uint32_t xids = 0x4e4c0000u;
	uint64_t deadline = ut_clock_mono_ns() + (uint64_t)ms * 1000000ull;
	uint32_t xid = atomic_fetch_add(&xids, 1), mark, len, olen;
	struct ut_buf b;
	int rc;

	ut_buf_init(&b, NLM_CB_REPLY_MAX * 2);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, xid);
	xdr_put_u32(&b, RPC_MSG_CALL);
	xdr_put_u32(&b, 2);
	xdr_put_u32(&b, prog);
	xdr_put_u32(&b, vers);
	xdr_put_u32(&b, proc);
	xdr_put_u32(&b, RPC_AUTH_NONE);
	xdr_put_u32(&b, 0);
	xdr_put_u32(&b, RPC_AUTH_NONE);
	xdr_put_u32(&b, 0);
	if (args)
		xdr_put_fixed(&b, ut_buf_bytes(args), ut_buf_len(args));
	if (ut_buf_err(&b) != AQ_OK) {
		rc = -ENOMEM;
		goto out;
	}
	ut_buf_set_be32(&b, 0, 0x80000000u | (uint32_t)(ut_buf_len(&b) - 4));
	if ((rc = cb_io(fd, (void *)ut_buf_bytes(&b), ut_buf_len(&b), true, deadline)) != 0 ||
	    (rc = cb_io(fd, &mark, 4, false, deadline)) != 0)
		goto out;
	len = ntohl(mark);
	if (!(len & 0x80000000u) || (len &= 0x7fffffffu) > NLM_CB_REPLY_MAX) { /* one bounded fragment */
		rc = -EPROTO;
		goto out;
	}
	if ((rc = cb_io(fd, rep, len, false, deadline)) != 0)
		goto out;
	xdr_cur_init(res, rep, len);
	if (xdr_u32(res) != xid || xdr_u32(res) != RPC_MSG_REPLY || xdr_u32(res) != 0 /* MSG_ACCEPTED */) {
		rc = -EPROTO;
		goto out;
	}
	(void)xdr_u32(res);                /* verifier flavor */
	(void)xdr_opaque(res, RPC_MAX_AUTH_BYTES, &olen);
	rc = xdr_u32(res) == RPC_SUCCESS && !res->err ? 0 : -EPROTO;
out:
	ut_buf_cleanup(&b);
	return rc;
}

/* Ask the portmapper at addr for (prog, vers) over TCP: its port, or 0. */
static uint16_t cb_getport(struct nlm_srv *s, const struct sockaddr_storage *addr, uint32_t prog, uint32_t vers)
{
	uint8_t rep[NLM_CB_REPLY_MAX];
	struct xdr_cur res;
	struct ut_buf a;
	uint32_t port = 0;
	int fd = cb_dial(addr, s->cfg.pmap_port, s->cfg.cb_timeout_ms);

	if (fd < 0)
		return 0;
	ut_buf_init(&a, 64);
	xdr_put_u32(&a, prog);
	xdr_put_u32(&a, vers);
	xdr_put_u32(&a, 6); /* IPPROTO_TCP */
	xdr_put_u32(&a, 0);
	if (cb_call(fd, 100000, 2, 3, &a, s->cfg.cb_timeout_ms, rep, &res) == 0) {
		port = xdr_u32(&res);
		if (res.err || port > 65535)
			port = 0;
	}
	ut_buf_cleanup(&a);
	close(fd);
	return (uint16_t)port;
}

/* What the thread needs to call GRANTED, copied out of the block. */
struct cb_job {
	uint64_t id;
	struct nlm_block b;
};

/* NLM4_GRANTED to the block's client: its nlm4_stat, or -1 unreachable. */
static int cb_granted(struct nlm_srv *s, const struct cb_job *j)
{
	uint8_t rep[NLM_CB_REPLY_MAX];
	struct xdr_cur res;
	struct ut_buf a;
	uint16_t port = cb_getport(s, &j->b.peer, NLM_PROG, NLM_VERS);
	uint32_t clen, st;
	int fd, out = -1;

	if (!port || (fd = cb_dial(&j->b.peer, port, s->cfg.cb_timeout_ms)) < 0)
		return -1;
	ut_buf_init(&a, 8192);
	xdr_put_opaque(&a, &j->id, sizeof(j->id)); /* cookie: GRANTED_RES names the block by it */
	xdr_put_u32(&a, (j->b.flags & VOL_LOCK_F_EXCL) != 0);
	nlm_put_lock(&a, s->my_name, j->b.fh, j->b.fh_len, j->b.oh, j->b.oh_len, j->b.svid, j->b.l_off,
		     j->b.l_len);
	if (cb_call(fd, NLM_PROG, NLM_VERS, NLM4_GRANTED_P, &a, s->cfg.cb_timeout_ms, rep, &res) == 0) {
		(void)xdr_opaque(&res, NLM_OBJ_MAX, &clen);
		st = xdr_u32(&res);
		if (!res.err)
			out = (int)st;
	}
	ut_buf_cleanup(&a);
	close(fd);
	return out;
}

/* SM_NOTIFY to a host's status monitor: we restarted, reclaim. */
static void cb_notify(struct nlm_srv *s, const struct nlm_host_rec *h)
{
	uint8_t rep[NLM_CB_REPLY_MAX];
	struct xdr_cur res;
	struct ut_buf a;
	uint16_t port = cb_getport(s, &h->addr, NSM_PROG, NSM_VERS);
	int fd, rc = -1;

	if (port && (fd = cb_dial(&h->addr, port, s->cfg.cb_timeout_ms)) >= 0) {
		ut_buf_init(&a, 2048);
		xdr_put_opaque(&a, s->my_name, (uint32_t)strlen(s->my_name));
		xdr_put_u32(&a, s->nsm_state);
		rc = cb_call(fd, NSM_PROG, NSM_VERS, NSM_NOTIFY, &a, s->cfg.cb_timeout_ms, rep, &res);
		ut_buf_cleanup(&a);
		close(fd);
	}
	UT_INFO("nlm", NULL, "SM_NOTIFY to %.64s: %s", h->name, rc == 0 ? "sent" : "unreachable");
}

/* ---------- the thread ---------- */

/* One pass over the blocks: grant what the table now allows, take back what
 * was never claimed, and call GRANTED for what is due (outside s->mu). */
static void cb_round(struct nlm_srv *s)
{
	static struct cb_job jobs[NLM_CB_JOBS]; /* the one callback thread's */
	size_t njobs = 0;
	uint64_t now = ut_clock_mono_ns();

	pthread_mutex_lock(&s->mu);
	for (struct nlm_block *b = s->blocks, *nx; b; b = nx) {
		nx = b->next;
		if (b->state == NLM_BL_WAIT &&
		    vol_lock_lock(s->locks, &b->key, &b->owner, b->start, b->len, b->flags, NULL) == 0) {
			vol_lock_unwait(s->locks, &b->w);
			b->state = NLM_BL_GRANTED;
			b->granted_ns = b->next_call_ns = now;
		}
		if (b->state != NLM_BL_GRANTED || b->calling)
			continue;
		if (now - b->granted_ns > (uint64_t)NLM_GRANT_UNCLAIMED_S * NS) {
			granted_answer(s, b, NLM4_DENIED); /* nobody claimed it: it goes back */
			continue;
		}
		if (now >= b->next_call_ns && njobs < NLM_CB_JOBS) {
			b->calling = true;
			b->next_call_ns = now + NLM_CB_RETRY_NS;
			jobs[njobs].id = b->id;
			jobs[njobs++].b = *b;
		}
	}
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < njobs; i++) {
		int st = cb_granted(s, &jobs[i]);
		struct nlm_block *b;

		pthread_mutex_lock(&s->mu);
		if ((b = block_by_id(s, jobs[i].id))) {
			b->calling = false;
			if (st >= 0)
				granted_answer(s, b, (uint32_t)st);
		}
		pthread_mutex_unlock(&s->mu);
	}
}

/* SM_NOTIFY to the NLM hosts recorded on the volumes this node took over
 * (vol_grace.h: failover, drain), so their lock managers reclaim here. */
static void cb_takeover(struct nlm_srv *s)
{
	struct vol_grace_host hs[4];
	size_t n;

	while ((n = vol_grace_notify_take(s->store, hs, 4)) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct nlm_host_rec h;
			bool stop;

			pthread_mutex_lock(&s->wmu);
			stop = s->stop;
			pthread_mutex_unlock(&s->wmu);
			if (stop)
				return;
			snprintf(h.name, sizeof(h.name), "%s", hs[i].name);
			h.addr = hs[i].addr;
			cb_notify(s, &h);
		}
	}
}

static void *cb_main(void *arg)
{
	struct nlm_srv *s = arg;

	for (;;) {
		struct timespec ts;
		struct nlm_host_rec *notify;
		size_t n;
		bool stop;

		pthread_mutex_lock(&s->wmu);
		if (!s->kick && !s->stop) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 1; /* the sweep: unclaimed grants, callbacks due */
			pthread_cond_timedwait(&s->cv, &s->wmu, &ts);
		}
		stop = s->stop;
		s->kick = false;
		pthread_mutex_unlock(&s->wmu);
		if (stop)
			break;
		pthread_mutex_lock(&s->mu);
		notify = s->notify;
		n = s->nnotify;
		s->notify = NULL;
		s->nnotify = 0;
		pthread_mutex_unlock(&s->mu);
		for (size_t i = 0; i < n; i++) {
			pthread_mutex_lock(&s->wmu);
			stop = s->stop;
			pthread_mutex_unlock(&s->wmu);
			if (stop)
				break;
			cb_notify(s, &notify[i]);
		}
		free(notify);
		cb_takeover(s);
		cb_round(s);
	}
	return NULL;
}

int nlm_cb_start(struct nlm_srv *s)
{
	pthread_condattr_t ca;
	int rc;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&s->cv);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = pthread_create(&s->thr, NULL, cb_main, s)) != 0)
		return -rc;
	s->thr_started = true;
	return 0;
}

void nlm_cb_stop(struct nlm_srv *s)
{
	if (!s->thr_started)
		return;
	pthread_mutex_lock(&s->wmu);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->wmu);
	pthread_join(s->thr, NULL);
	s->thr_started = false;
}

/* ---------- host records: "<state_dir>/nlm-hosts" ----------
 * "state N" then one "host ADDR HEXNAME" per host (names come from the
 * network: hex keeps any byte out of the file's syntax). */

static void hosts_save(struct nlm_srv *s)
{
	char path[1100], tmp[1110], addr[INET6_ADDRSTRLEN], hex[2 * NLM_NAME_MAX + 1];
	FILE *f;
	int fd;

	if (!s->cfg.state_dir)
		return;
	snprintf(path, sizeof(path), "%s/nlm-hosts", s->cfg.state_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w"))) {
		UT_WARN("nlm", NULL, "cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f, "state %u\n", s->nsm_state);
	for (size_t i = 0; i < s->nhosts; i++) {
		const struct nlm_host_rec *h = &s->hosts[i];
		const void *ip = h->addr.ss_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)&h->addr)->sin6_addr
							       : (const void *)&((const struct sockaddr_in *)&h->addr)->sin_addr;

		if (!inet_ntop(h->addr.ss_family, ip, addr, sizeof(addr)))
			continue;
		ut_hex_encode(h->name, strlen(h->name), hex, sizeof(hex));
		fprintf(f, "host %s %s\n", addr, hex);
	}
	fflush(f);
	fd = fileno(f);
	if (fsync(fd) != 0 || fclose(f) != 0 || rename(tmp, path) != 0)
		UT_WARN("nlm", NULL, "cannot write %s: %s", path, strerror(errno));
}

void nlm_host_record(struct nlm_srv *s, const char *name, size_t len, const struct sockaddr *addr)
{
	struct nlm_host_rec *h;
	size_t alen = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	if (len > NLM_NAME_MAX || memchr(name, 0, len))
		return;
	for (size_t i = 0; i < s->nhosts; i++) {
		h = &s->hosts[i];
		if (strlen(h->name) == len && !memcmp(h->name, name, len)) {
			if (memcmp(&h->addr, addr, alen) != 0) {
				memcpy(&h->addr, addr, alen);
				hosts_save(s);
			}
			return;
		}
	}
	if (s->nhosts >= NLM_HOSTS_MAX)
		return; /* bounded: a host past the cap is not notified after a restart */
	if (!s->hosts && !(s->hosts = calloc(NLM_HOSTS_MAX, sizeof(*s->hosts))))
		return;
	h = &s->hosts[s->nhosts++];
	memset(h, 0, sizeof(*h));
	memcpy(h->name, name, len);
	memcpy(&h->addr, addr, alen);
	hosts_save(s);
}

static bool same_ip(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, sizeof(struct in6_addr));
	return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
}

bool nlm_host_may_release(struct nlm_srv *s, const char *name, size_t len, const struct sockaddr *from)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (strlen(s->hosts[i].name) == len && !memcmp(s->hosts[i].name, name, len))
			return same_ip(&s->hosts[i].addr, from);
	return true;
}

void nlm_host_forget(struct nlm_srv *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (strlen(s->hosts[i].name) == len && !memcmp(s->hosts[i].name, name, len)) {
			s->hosts[i] = s->hosts[--s->nhosts];
			hosts_save(s);
			return;
		}
}

static bool parse_host(const char *line, struct nlm_host_rec *h)
{
	char addr[INET6_ADDRSTRLEN + 1], hex[2 * NLM_NAME_MAX + 2];
	size_t n;

	memset(h, 0, sizeof(*h));
	if (sscanf(line, "host %46s %2049s", addr, hex) != 2 || (n = strlen(hex)) % 2 || n / 2 > NLM_NAME_MAX ||
	    ut_hex_decode(hex, n, (uint8_t *)h->name, NLM_NAME_MAX, NULL) != AQ_OK || memchr(h->name, 0, n / 2))
		return false;
	if (inet_pton(AF_INET, addr, &((struct sockaddr_in *)&h->addr)->sin_addr) == 1)
		h->addr.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&h->addr)->sin6_addr) == 1)
		h->addr.ss_family = AF_INET6;
	else
		return false;
	return true;
}

void nlm_hosts_load(struct nlm_srv *s)
{
	char path[1100], line[2 * NLM_NAME_MAX + 128];
	unsigned state = 0;
	FILE *f;

	if (!s->cfg.state_dir)
		return;
	snprintf(path, sizeof(path), "%s/nlm-hosts", s->cfg.state_dir);
	if ((f = fopen(path, "r"))) {
		while (fgets(line, sizeof(line), f)) {
			struct nlm_host_rec h;

			if (sscanf(line, "state %u", &state) == 1)
				continue;
			if (s->nhosts >= NLM_HOSTS_MAX || !parse_host(line, &h))
				continue;
			if (!s->hosts && !(s->hosts = calloc(NLM_HOSTS_MAX, sizeof(*s->hosts))))
				break;
			s->hosts[s->nhosts++] = h;
		}
		fclose(f);
	}
	s->nsm_state = (state | 1u) + 2u; /* odd while up, larger than the last run's */
	if (s->nhosts) {
		if ((s->notify = malloc(s->nhosts * sizeof(*s->notify)))) {
			memcpy(s->notify, s->hosts, s->nhosts * sizeof(*s->notify));
			s->nnotify = s->nhosts;
			s->kick = true; /* the thread's first pass notifies them */
		}
		if (s->cfg.grace_s)
			s->grace_end_ns = ut_clock_mono_ns() + (uint64_t)s->cfg.grace_s * NS;
		UT_INFO("nlm", NULL, "%zu host(s) held locks before the restart: grace period of %u s, notifying them",
			s->nhosts, s->cfg.grace_s);
	}
	hosts_save(s);
}
