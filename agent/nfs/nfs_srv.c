/* nfs_srv: the embedded NFS server's public API (nfs_srv.h): create, limits,
 * start, stop, free, and the MOUNT list. The rest of the server lives next
 * to it over nfs_srv_internal.h: nfs_loop.c (epoll loop, connections),
 * nfs_dispatch.c (workers, dispatch, QoS parking, cold pool), nfs_reply.c
 * (sending), nfs_drc.c (duplicate-request cache).
 *
 * Connection limits (issue 15): the loop (a role the workers hold in turn)
 * asks nfs_limits.h at every accept (room, or the oldest idle connection
 * closed for it), tells it of every read and whole call, and sweeps its
 * time-outs once a second.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs_srv_internal.h"

#include <malloc.h>

/* ---------- mount list ---------- */

void nfs_srv_mount_add(struct nfs_srv *srv, const char *host, const char *path)
{
	size_t i;

	pthread_mutex_lock(&srv->mnt_mu);
	for (i = 0; i < srv->nmounts; i++)
		if (!strcmp(srv->mounts[i].host, host) && !strcmp(srv->mounts[i].path, path))
			goto out;
	if (srv->nmounts < MNT_LIST_MAX) {
		snprintf(srv->mounts[srv->nmounts].host, sizeof(srv->mounts[0].host), "%s", host);
		snprintf(srv->mounts[srv->nmounts].path, sizeof(srv->mounts[0].path), "%s", path);
		srv->nmounts++;
	}
out:
	pthread_mutex_unlock(&srv->mnt_mu);
}

static void mount_del_if(struct nfs_srv *srv, const char *host, const char *path)
{
	size_t i = 0;

	pthread_mutex_lock(&srv->mnt_mu);
	while (i < srv->nmounts) {
		if (!strcmp(srv->mounts[i].host, host) && (!path || !strcmp(srv->mounts[i].path, path)))
			srv->mounts[i] = srv->mounts[--srv->nmounts];
		else
			i++;
	}
	pthread_mutex_unlock(&srv->mnt_mu);
}

void nfs_srv_mount_del(struct nfs_srv *srv, const char *host, const char *path)
{
	mount_del_if(srv, host, path);
}

void nfs_srv_mount_del_host(struct nfs_srv *srv, const char *host)
{
	mount_del_if(srv, host, NULL);
}

void nfs_srv_mount_encode(struct nfs_srv *srv, struct ut_buf *buf)
{
	size_t i;

	pthread_mutex_lock(&srv->mnt_mu);
	for (i = 0; i < srv->nmounts; i++) {
		xdr_put_u32(buf, 1);
		xdr_put_opaque(buf, srv->mounts[i].host, (uint32_t)strlen(srv->mounts[i].host));
		xdr_put_opaque(buf, srv->mounts[i].path, (uint32_t)strlen(srv->mounts[i].path));
	}
	pthread_mutex_unlock(&srv->mnt_mu);
	xdr_put_u32(buf, 0);
}

/* ---------- programs (set before start, read-only after) ---------- */

bool nfs_srv_serves(struct nfs_srv *srv, uint32_t prog, uint32_t vers)
{
	for (size_t i = 0; i < srv->nprogs; i++)
		if (srv->progs[i].prog->prog == prog && srv->progs[i].prog->vers == vers)
			return true;
	return false;
}

bool nfs_srv_prog_at(struct nfs_srv *srv, size_t i, uint32_t *prog, uint32_t *vers)
{
	if (i >= srv->nprogs)
		return false;
	*prog = srv->progs[i].prog->prog;
	*vers = srv->progs[i].prog->vers;
	return true;
}

/* ---------- public API ---------- */

int nfs_srv_new(const char *listen, struct vol_store *store, unsigned workers, struct nfs_srv **out)
{
	struct nfs_srv *srv;
	aq_msg why = { .text = "" };
	int rc = 0, i;

	if (!store)
		return -EINVAL;
	if (!(srv = calloc(1, sizeof(*srv))))
		return -ENOMEM;
	srv->lfd = srv->epfd = srv->evfd = srv->spare_fd = -1;
	srv->limits = (struct nfs_srv_limits)NFS_SRV_LIMITS_DEFAULT;
	if (ut_hostport_parse(listen, 0, UT_HP_PORT0, &srv->listen, &why) != AQ_OK) {
		UT_ERROR("nfs_srv", NULL, "%s", why.text);
		rc = -EINVAL;
		goto out;
	}
	srv->port = srv->listen.port;
	srv->store = store;
	srv->nworkers = workers ? workers : 8;
	/* A fresh write verifier per server run: clients that see it change
	 * resend their uncommitted writes. */
	if (getrandom(srv->wverf, sizeof(srv->wverf), 0) != (ssize_t)sizeof(srv->wverf)) {
		uint64_t t = ut_clock_mono_ns() ^ (uint64_t)getpid();

		memcpy(srv->wverf, &t, 8);
	}
	if (ut_fifo_wq_init(&srv->wq) != AQ_OK) {
		rc = -ENOMEM;
		goto out;
	}
	if (ut_fifo_wq_init(&srv->cold_wq) != AQ_OK) {
		ut_fifo_wq_cleanup(&srv->wq);
		rc = -ENOMEM;
		goto out;
	}
	if (pthread_cond_init(&srv->done_cv, NULL) != 0) {
		ut_fifo_wq_cleanup(&srv->wq);
		ut_fifo_wq_cleanup(&srv->cold_wq);
		rc = -ENOMEM;
		goto out;
	}
	ut_fifo_init(&srv->batch);
	pthread_mutex_init(&srv->drc_mu, NULL);
	pthread_mutex_init(&srv->mnt_mu, NULL);
	srv->progs[0] = (struct nfs_srv_prog){ .prog = &nfs3_prog };
	srv->progs[1] = (struct nfs_srv_prog){ .prog = &mnt_prog };
	srv->progs[2] = (struct nfs_srv_prog){ .prog = &pmap_prog };
	srv->nprogs = 3;
	for (i = 0; i < DRC_HASH; i++)
		srv->drc_head[i] = -1;
	for (i = 0; i < DRC_SIZE; i++)
		srv->drc[i].hnext = -1;
	*out = srv;
	srv = NULL;
out:
	free(srv);
	return rc;
}

int nfs_srv_add_prog(struct nfs_srv *srv, const struct nfs_prog *prog, void *ctx)
{
	size_t i;

	if (srv->started)
		return -EBUSY;
	for (i = 0; i < srv->nprogs; i++)
		if (srv->progs[i].prog->prog == prog->prog && srv->progs[i].prog->vers == prog->vers)
			return -EEXIST;
	if (srv->nprogs == NFS_SRV_MAX_PROGS)
		return -ENOSPC;
	srv->progs[srv->nprogs++] = (struct nfs_srv_prog){ .prog = prog, .ctx = ctx };
	return 0;
}

int nfs_srv_set_limits(struct nfs_srv *srv, const struct nfs_srv_limits *l)
{
	if (srv->started)
		return -EBUSY;
	if (!l->max_conns || !l->per_ip || !l->record_s || !l->idle_s)
		return -EINVAL;
	srv->limits = *l;
	return 0;
}

int nfs_srv_start(struct nfs_srv *srv)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	struct epoll_event ev = {.events = EPOLLIN};
	aq_msg why = { .text = "" };
	int one = 1, rc = 0;
	unsigned i;

	if (srv->started)
		return -EALREADY;
	if (ut_hostport_sockaddr(&srv->listen, &ss, &sl, &why) != AQ_OK) {
		UT_ERROR("nfs_srv", NULL, "%s", why.text);
		return -EINVAL;
	}
	srv->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->lfd < 0)
		return -errno;
	setsockopt(srv->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(srv->lfd, (struct sockaddr *)&ss, sl) != 0 || listen(srv->lfd, SOMAXCONN) != 0) {
		rc = -errno;
		goto fail;
	}
	sl = sizeof(ss);
	getsockname(srv->lfd, (struct sockaddr *)&ss, &sl);
	srv->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv->epfd < 0 || srv->evfd < 0) {
		rc = -errno;
		goto fail;
	}
	ev.data.ptr = NULL;
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev);
	ev.data.ptr = &srv->evfd;
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->evfd, &ev);
	nfs_limits_init(&srv->lim, &srv->limits);
	/* Record buffers of up to RPC_REC_MAX come and go with every large
	 * call: kept on the heap and reused, not mapped, faulted in, zeroed and
	 * unmapped each time (glibc maps >= 128 KiB and trims free heap tops
	 * by default). Process-wide, see nfs_srv.h. */
	mallopt(M_MMAP_THRESHOLD, NFS_SRV_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, NFS_SRV_TRIM_THRESHOLD);
	srv->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	srv->workers = calloc(srv->nworkers, sizeof(pthread_t));
	if (!srv->workers) {
		rc = -ENOMEM;
		goto fail;
	}
	srv->leading = srv->loop_done = srv->role_called = false;
	atomic_store(&srv->kicked, false);
	for (i = 0; i < srv->nworkers; i++)
		if (pthread_create(&srv->workers[i], NULL, nfs_dispatch_worker, srv) != 0)
			break;
	if (i == 0) { /* nobody would take the loop role */
		free(srv->workers);
		srv->workers = NULL;
		rc = -EAGAIN;
		goto fail;
	}
	srv->nworkers = i; /* fewer than asked still serve: each takes the role in turn */
	for (srv->ncold = 0; srv->ncold < NFS_SRV_COLD_WORKERS; srv->ncold++)
		if (pthread_create(&srv->cold[srv->ncold], NULL, nfs_dispatch_cold, srv) != 0)
			break;
	if ((rc = vol_store_qos_start(srv->store)) != 0)
		UT_ERROR("nfs_srv", NULL, "QoS timer did not start (%s): limits not enforced", strerror(-rc));
	rc = 0;
	srv->started = true;
	return 0;
fail:
	if (srv->lfd >= 0)
		close(srv->lfd);
	if (srv->epfd >= 0)
		close(srv->epfd);
	if (srv->evfd >= 0)
		close(srv->evfd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	srv->lfd = srv->epfd = srv->evfd = srv->spare_fd = -1;
	return rc;
}

uint16_t nfs_srv_port(const struct nfs_srv *srv)
{
	return srv->port;
}

void nfs_srv_stop(struct nfs_srv *srv)
{
	uint64_t one = 1;
	unsigned i;

	if (!srv || !srv->started)
		return;
	/* programs that send calls to clients stop first (nfs_prog.stop) */
	for (i = 0; i < srv->nprogs; i++)
		if (srv->progs[i].prog->stop)
			srv->progs[i].prog->stop(srv->progs[i].ctx);
	atomic_store(&srv->stopping, true);
	if (write(srv->evfd, &one, sizeof(one)) < 0) {
		/* the loop also wakes up every second */
	}
	/* The next worker in the loop role closes every connection (one busy
	 * with a call takes the role when it is done). */
	pthread_mutex_lock(&srv->wq.mu);
	while (!srv->loop_done)
		pthread_cond_wait(&srv->done_cv, &srv->wq.mu);
	pthread_mutex_unlock(&srv->wq.mu);
	vol_store_qos_stop(srv->store); /* parked requests go back to the queue */
	ut_fifo_wq_stop(&srv->wq);
	for (i = 0; i < srv->nworkers; i++)
		pthread_join(srv->workers[i], NULL);
	/* The workers are gone: nothing is deferred any more. */
	ut_fifo_wq_stop(&srv->cold_wq);
	for (i = 0; i < srv->ncold; i++)
		pthread_join(srv->cold[i], NULL);
	srv->ncold = 0;
	free(srv->workers);
	srv->workers = NULL;
	close(srv->lfd);
	close(srv->epfd);
	close(srv->evfd);
	if (srv->spare_fd >= 0)
		close(srv->spare_fd);
	nfs_limits_cleanup(&srv->lim);
	srv->lfd = srv->epfd = srv->evfd = srv->spare_fd = -1;
	srv->started = false;
}

const char *nfs_srv_proc_name(unsigned proc)
{
	return proc < nfs3_prog.nprocs ? nfs3_prog.procs[proc].name : NULL;
}

void nfs_srv_free(struct nfs_srv *srv)
{
	int i;

	if (!srv)
		return;
	nfs_srv_stop(srv);
	for (i = 0; i < DRC_SIZE; i++)
		free(srv->drc[i].reply);
	ut_fifo_wq_cleanup(&srv->wq);
	ut_fifo_wq_cleanup(&srv->cold_wq);
	pthread_cond_destroy(&srv->done_cv);
	pthread_mutex_destroy(&srv->drc_mu);
	pthread_mutex_destroy(&srv->mnt_mu);
	free(srv);
}
