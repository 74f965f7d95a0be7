/* ab_getattr: N NFSv3 GETATTR calls on one open file (libnfs sync API), a fixed
 * metadata workload for bench/ab.sh, which counts the server's instructions
 * per call with callgrind. libnfs's nfs_fstat64 on an open handle is one
 * GETATTR on the wire (no LOOKUP), so the count is exact.
 *
 *   ab_getattr N 'nfs://127.0.0.1/export?nfsport=P&mountport=P' FILE
 *
 * FILE is created when missing. Prints "getattr N seconds"; exit 1 on any error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <nfsc/libnfs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double ab_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct nfs_context *nfs = NULL;
	struct nfs_url *url = NULL;
	struct nfsfh *fh = NULL;
	struct nfs_stat_64 st;
	int rc = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: ab_getattr N URL FILE\n");
		return 2;
	}
	unsigned long n = strtoul(argv[1], NULL, 10);
	if (!(nfs = nfs_init_context()) || !(url = nfs_parse_url_dir(nfs, argv[2])) ||
	    nfs_mount(nfs, url->server, url->path) != 0) {
		fprintf(stderr, "mount: %s\n", nfs ? nfs_get_error(nfs) : "no memory");
		goto out;
	}
	if (nfs_open(nfs, argv[3], O_RDWR, &fh) != 0 && nfs_creat(nfs, argv[3], 0644, &fh) != 0) {
		fprintf(stderr, "open: %s\n", nfs_get_error(nfs));
		goto out;
	}
	double t0 = ab_now();
	for (unsigned long i = 0; i < n; i++) {
		if (nfs_fstat64(nfs, fh, &st) != 0) {
			fprintf(stderr, "getattr %lu: %s\n", i, nfs_get_error(nfs));
			goto out;
		}
	}
	printf("getattr %lu %.3f\n", n, ab_now() - t0);
	rc = 0;
out:
	if (fh)
		nfs_close(nfs, fh);
	if (url)
		nfs_destroy_url(url);
	if (nfs)
		nfs_destroy_context(nfs);
	return rc;
}
