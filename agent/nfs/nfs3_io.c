/* nfs3_io: NFSv3 procedures that move file data: READ, WRITE, COMMIT,
 * READLINK. READ data is read into its own buffer and sent as a separate
 * iovec after the encoded header, so it is never copied in user space. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "agent/nfs/nfs3.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void nfs3_readlink(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_readlink_res *res = r;
	size_t len = 0;
	int rc;

	(void)a;
	rc = vol_readlink(&call->obj, &call->ecred, res->path, sizeof(res->path), &len);
	res->len = (uint32_t)len;
	res->status = nfs3_status(rc);
	nfs3_attr_of(&res->attr, &call->obj);
}

/* READ sends hot file data straight from the page cache (sendfile) after
 * the encoded header; nothing is copied in user space. A range that touches
 * the cold tier is read into a buffer instead: copied from the tier's chunk
 * cache on the spot when it holds the range whole (vol_read_cached: a
 * prefetched frame, no wait), else only on the server's cold pool
 * (call->may_defer false): a normal worker defers the call, and the cold
 * pool resumes it (call->resumed) knowing the range is cold, so the volume
 * store and the tier see one read, not a second vol_read_fd first. */
void nfs3_read(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_read_args *args = a;
	struct nfs3_read_res *res = r;
	uint32_t count = args->count > NFS3_MAXDATA ? NFS3_MAXDATA : args->count;
	size_t n = 0;
	bool eof = false;
	int rc;

	res->fd = -1;
	rc = call->resumed ? VOL_ECOLD
			   : vol_read_fd(&call->obj, &call->ecred, args->offset, count, &res->fd, &n, &eof, &res->owned);
	if (rc == VOL_ECOLD && call->may_defer) {
		/* What the chunk cache holds is answered here (no hand-off to the
		 * cold pool and back). Else do not hold an NFS worker for a store
		 * round trip: the server serves this call again from its cold pool. */
		void *buf = malloc(count ? count : 1);

		rc = buf ? vol_read_cached(&call->obj, &call->ecred, args->offset, buf, count, &n, &eof) : -EAGAIN;
		if (rc == -EAGAIN) {
			free(buf);
			call->deferred = true;
			return;
		}
		res->data = buf;
	}
	if (rc == VOL_ECOLD) {
		/* Cold data comes from the tier in a buffer (sent as an iovec):
		 * a whole chunk from the chunk cache is handed over, not copied. */
		void *buf = malloc(count ? count : 1);

		rc = buf ? vol_read_swap(&call->obj, &call->ecred, args->offset, &buf, count, &n, &eof) : -ENOMEM;
		res->data = buf;
	}
	res->status = nfs3_status(rc);
	res->count = (uint32_t)n;
	res->eof = eof;
	res->off = args->offset;
	call->io_bytes = n;
	/* QoS charged the count asked for (vol_admit, before the handler):
	 * charge what is moved. */
	vol_export_settle(call->obj.exp, args->count, n);
	nfs3_attr_of(&res->attr, &call->obj);
}

void nfs3_free_read(void *r)
{
	struct nfs3_read_res *res = r;

	free(res->data);
	res->data = NULL;
	if (res->owned && res->fd >= 0)
		close(res->fd);
	res->fd = -1;
	res->owned = false;
}

void nfs3_write(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_write_args *args = a;
	struct nfs3_write_res *res = r;
	int committed = 0, rc;

	nfs3_wcc_pre(&res->wcc, &call->obj);
	rc = vol_write(&call->obj, &call->ecred, args->offset, args->data, args->len,
		       (int)args->stable, &committed);
	res->status = nfs3_status(rc);
	res->count = args->len;
	res->committed = (uint32_t)committed;
	memcpy(res->verf, call->wverf, 8);
	call->io_bytes = rc == 0 ? args->len : 0;
	nfs3_attr_of(&res->wcc.post, &call->obj); /* vol_write refreshed st */
}

void nfs3_commit(struct nfs_call *call, void *a, void *r)
{
	struct nfs3_commit_res *res = r;

	(void)a;
	nfs3_wcc_pre(&res->wcc, &call->obj);
	res->status = nfs3_status(vol_commit(&call->obj, &call->ecred));
	memcpy(res->verf, call->wverf, 8);
	nfs3_wcc_post(&res->wcc, &call->obj);
}
