/* qosload: a time-based NFSv3 load generator for QoS measurements (libnfs
 * async API, one connection). Keeps `depth` requests of `block` bytes in
 * flight on one file for warm-up + duration seconds and reports what the
 * server delivered in windows of the measured part:
 *
 *   qosload [-m read|write|randread|randwrite] [-b BYTES] [-d DEPTH]
 *           [-w WARMUP_S] [-t SECONDS] [-i WINDOW_MS] [-s FILE_MiB] [-r MiB/s] URL FILE
 *
 * -r paces the offered load (open loop: one request every block/rate
 * seconds, at most DEPTH in flight) instead of keeping DEPTH busy.
 * The file is created sparse with SETATTR size (reads return full blocks of
 * zeros without a slow, throttled fill). Output, one line per window then a
 * summary:
 *   window N MiB/s ops/s
 *   result median_mibps M median_iops I mean_mibps X mean_iops Y lat_p50_us L lat_p99_us L99 errors E
 * Exit 1 on any I/O error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <nfsc/libnfs.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QL_WIN_MAX 4096
#define QL_LAT_MAX (1u << 20)

struct ql {
	struct nfs_context *nfs;
	struct nfsfh *fh;
	uint64_t size, next, rng;
	uint32_t block;
	int depth, inflight;
	bool write, random;
	uint8_t *wbuf;
	double t_start, t_meas, t_end, win_s;
	double pace_s, next_t;         /* -r: seconds between issues, next issue */
	uint64_t win_bytes[QL_WIN_MAX], win_ops[QL_WIN_MAX];
	size_t nwin;
	uint32_t *lat_us;
	size_t nlat;
	uint64_t errors;
	bool stop;
};

struct ql_io {
	struct ql *g;
	double t0;
};

static double ql_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t ql_rnd(struct ql *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static void ql_issue(struct ql *g);

static void ql_cb(int err, struct nfs_context *nfs, void *data, void *priv)
{
	struct ql_io *io = priv;
	struct ql *g = io->g;
	double t = ql_now();

	(void)nfs;
	g->inflight--;
	if (err < 0 || (uint32_t)err != g->block) {
		if (g->errors++ < 5)
			fprintf(stderr, "qosload: I/O error %d %s\n", err, err < 0 ? (const char *)data : "short");
	} else if (t >= g->t_meas && t < g->t_end) {
		size_t w = (size_t)((t - g->t_meas) / g->win_s);

		if (w < QL_WIN_MAX) {
			g->win_bytes[w] += g->block;
			g->win_ops[w]++;
		}
		if (g->nlat < QL_LAT_MAX)
			g->lat_us[g->nlat++] = (uint32_t)((t - io->t0) * 1e6);
	}
	free(io);
	if (t >= g->t_end)
		g->stop = true;
	else if (g->pace_s <= 0)
		ql_issue(g);
}

static void ql_issue(struct ql *g)
{
	while (!g->stop && g->inflight < g->depth) {
		struct ql_io *io;
		uint64_t off;
		int rc;

		if (g->pace_s > 0) {
			double t = ql_now();

			if (t >= g->t_end) {
				g->stop = true;
				return;
			}
			if (t < g->next_t)
				return;
			g->next_t += g->pace_s;
			if (g->next_t < t - 0.1) /* fell behind by more than 100 ms: no catch-up storm */
				g->next_t = t;
		}
		if (!(io = calloc(1, sizeof(*io)))) {
			g->stop = true;
			return;
		}
		if (g->random) {
			off = (ql_rnd(g) % (g->size / g->block)) * g->block;
		} else {
			off = g->next;
			g->next = (g->next + g->block) % g->size;
		}
		io->g = g;
		io->t0 = ql_now();
		rc = g->write ? nfs_pwrite_async(g->nfs, g->fh, off, g->block, g->wbuf, ql_cb, io)
			      : nfs_pread_async(g->nfs, g->fh, off, g->block, ql_cb, io);
		if (rc != 0) {
			fprintf(stderr, "qosload: queue: %s\n", nfs_get_error(g->nfs));
			free(io);
			g->errors++;
			g->stop = true;
			return;
		}
		g->inflight++;
	}
}

static int ql_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int ql_cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void ql_usage(void)
{
	fprintf(stderr, "usage: qosload [-m read|write|randread|randwrite] [-b BYTES] [-d DEPTH] [-w S] [-t S] "
			"[-i MS] [-s MiB] URL FILE\n");
}

int main(int argc, char **argv)
{
	static struct ql g;
	struct nfs_url *url = NULL;
	double warm = 1, dur = 6, mib_mean, iops_mean, mibs[QL_WIN_MAX], iops[QL_WIN_MAX];
	const char *mode = "read";
	long v;
	size_t i;
	int opt, rc = 1;
	char *end;

	g.block = 1 << 20;
	g.depth = 8;
	g.size = 256ull << 20;
	g.win_s = 1;
	g.rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	while ((opt = getopt(argc, argv, "m:b:d:w:t:i:s:r:")) != -1) {
		v = strtol(optarg ? optarg : "", &end, 10);
		if (opt != 'm' && (*end || v <= 0)) {
			ql_usage();
			return 2;
		}
		switch (opt) {
		case 'm': mode = optarg; break;
		case 'b': g.block = (uint32_t)v; break;
		case 'd': g.depth = (int)v; break;
		case 'w': warm = (double)v; break;
		case 't': dur = (double)v; break;
		case 'i': g.win_s = (double)v / 1000; break;
		case 's': g.size = (uint64_t)v << 20; break;
		case 'r': g.pace_s = 1; g.next_t = (double)v; break; /* MiB/s, turned into seconds below */
		default: ql_usage(); return 2;
		}
	}
	if (argc - optind != 2 || g.size < g.block) {
		ql_usage();
		return 2;
	}
	if (g.pace_s > 0)
		g.pace_s = (double)g.block / (g.next_t * 1048576.0);
	g.write = strstr(mode, "write") != NULL;
	g.random = strncmp(mode, "rand", 4) == 0;
	g.lat_us = calloc(QL_LAT_MAX, sizeof(*g.lat_us));
	g.wbuf = malloc(g.block);
	if (!g.lat_us || !g.wbuf)
		return 1;
	memset(g.wbuf, 0x5a, g.block);
	g.nfs = nfs_init_context();
	url = nfs_parse_url_dir(g.nfs, argv[optind]);
	if (!url || nfs_mount(g.nfs, url->server, url->path) != 0) {
		fprintf(stderr, "qosload: mount: %s\n", nfs_get_error(g.nfs));
		goto out;
	}
	if (nfs_open(g.nfs, argv[optind + 1], O_RDWR, &g.fh) != 0 &&
	    nfs_creat(g.nfs, argv[optind + 1], 0644, &g.fh) != 0) {
		fprintf(stderr, "qosload: open: %s\n", nfs_get_error(g.nfs));
		goto out;
	}
	if (nfs_ftruncate(g.nfs, g.fh, g.size) != 0) {
		fprintf(stderr, "qosload: truncate: %s\n", nfs_get_error(g.nfs));
		goto out;
	}
	g.t_start = ql_now();
	g.t_meas = g.t_start + warm;
	g.t_end = g.t_meas + dur;
	g.nwin = (size_t)(dur / g.win_s);
	if (g.nwin > QL_WIN_MAX)
		g.nwin = QL_WIN_MAX;
	g.next_t = g.t_start;
	ql_issue(&g);
	while (g.inflight > 0 || (g.pace_s > 0 && !g.stop)) {
		struct pollfd p = {.fd = nfs_get_fd(g.nfs), .events = (short)nfs_which_events(g.nfs)};
		int ms = 1000;

		if (g.pace_s > 0 && !g.stop) {
			double wait = g.next_t - ql_now();

			ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
		}
		if (poll(&p, 1, ms) < 0 || nfs_service(g.nfs, p.revents) < 0) {
			fprintf(stderr, "qosload: service: %s\n", nfs_get_error(g.nfs));
			g.errors++;
			break;
		}
		if (g.pace_s > 0)
			ql_issue(&g);
	}
	mib_mean = iops_mean = 0;
	for (i = 0; i < g.nwin; i++) {
		mibs[i] = (double)g.win_bytes[i] / 1048576.0 / g.win_s;
		iops[i] = (double)g.win_ops[i] / g.win_s;
		mib_mean += mibs[i] / (double)g.nwin;
		iops_mean += iops[i] / (double)g.nwin;
		printf("window %zu %.2f %.1f\n", i, mibs[i], iops[i]);
	}
	qsort(mibs, g.nwin, sizeof(mibs[0]), ql_cmp_dbl);
	qsort(iops, g.nwin, sizeof(iops[0]), ql_cmp_dbl);
	qsort(g.lat_us, g.nlat, sizeof(g.lat_us[0]), ql_cmp_u32);
	printf("result median_mibps %.2f median_iops %.1f mean_mibps %.2f mean_iops %.1f lat_p50_us %u "
	       "lat_p99_us %u errors %llu\n",
	       g.nwin ? mibs[g.nwin / 2] : 0, g.nwin ? iops[g.nwin / 2] : 0, mib_mean, iops_mean,
	       g.nlat ? g.lat_us[g.nlat / 2] : 0, g.nlat ? g.lat_us[g.nlat * 99 / 100] : 0,
	       (unsigned long long)g.errors);
	rc = g.errors ? 1 : 0;
out:
	if (g.fh)
		nfs_close(g.nfs, g.fh);
	nfs_destroy_url(url);
	nfs_destroy_context(g.nfs);
	free(g.lat_us);
	free(g.wbuf);
	return rc;
}
