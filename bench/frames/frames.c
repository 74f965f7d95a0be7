/* frames: a frame-playback client for cross-file read-ahead (issue 23),
 * on libnfs's async API. S streams (one NFS connection each) play their own
 * film, folder sK/ of N files frame000000.dpx... of F MiB, at R frames per
 * second: frame i is asked for at t0 + i/R (open, then every 1 MiB READ of
 * it at once, then close) and is due at t0 + (i + 1)/R; one that arrives
 * later, or that could not even be asked for because MAXQ (-q, default 4)
 * frames of its stream were still on their way, is dropped.
 *
 *   frames -W [-n N] [-f MiB] [-s S] URL        write the films (sync libnfs)
 *   frames [-n N] [-f MiB] [-r FPS] [-s S] [-q MAXQ] URL  play them
 *
 * Output of a play:
 *   result frames T dropped D lat_p50_ms A lat_p99_ms B mibps M errors E
 * (latency: from a frame's ask to its last byte; MiB/s: bytes delivered over
 * the play's wall time). Exit 1 on any I/O error.
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

#define FR_CHUNK (1u << 20)
#define FR_STREAMS 64
#define FR_MAXQ 4              /* default -q: frames of one stream on their way at once */

struct fr_stream;

struct fr_frame {
	struct fr_stream *st;
	struct nfsfh *fh;
	int index, pending;
	double asked, due;
	bool failed;
};

struct fr_stream {
	struct nfs_context *nfs;
	int k, next, inflight;
};

struct fr {
	int nframes, streams, maxq;
	uint64_t frame_bytes;
	double fps, t0;
	double *lat;           /* ms, one per frame that arrived */
	size_t nlat;
	uint64_t bytes, dropped, errors, done;
	struct fr_stream st[FR_STREAMS];
};

static struct fr g;

static double fr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fr_finish(struct fr_frame *f)
{
	double t = fr_now();

	f->st->inflight--;
	g.done++;
	if (f->failed) {
		g.errors++;
	} else {
		g.lat[g.nlat++] = (t - f->asked) * 1000;
		g.bytes += g.frame_bytes;
		if (t > f->due)
			g.dropped++;
	}
	free(f);
}

static void fr_close_cb(int err, struct nfs_context *nfs, void *data, void *priv)
{
	(void)err;
	(void)nfs;
	(void)data;
	fr_finish(priv);
}

static void fr_read_cb(int err, struct nfs_context *nfs, void *data, void *priv)
{
	struct fr_frame *f = priv;

	(void)data;
	if (err < 0 || (uint32_t)err == 0) {
		if (!f->failed && g.errors < 5)
			fprintf(stderr, "frames: stream %d frame %d: read %d\n", f->st->k, f->index, err);
		f->failed = true;
	}
	if (--f->pending == 0 && nfs_close_async(nfs, f->fh, fr_close_cb, f) != 0)
		fr_finish(f);
}

static void fr_open_cb(int err, struct nfs_context *nfs, void *data, void *priv)
{
	struct fr_frame *f = priv;

	if (err < 0) {
		fprintf(stderr, "frames: stream %d frame %d: open: %s\n", f->st->k, f->index, (const char *)data);
		f->failed = true;
		fr_finish(f);
		return;
	}
	f->fh = data;
	for (uint64_t off = 0; off < g.frame_bytes; off += FR_CHUNK) {
		uint64_t n = g.frame_bytes - off < FR_CHUNK ? g.frame_bytes - off : FR_CHUNK;

		if (nfs_pread_async(nfs, f->fh, off, n, fr_read_cb, f) == 0)
			f->pending++;
		else
			f->failed = true;
	}
	if (f->pending == 0 && nfs_close_async(nfs, f->fh, fr_close_cb, f) != 0)
		fr_finish(f);
}

/* Ask for every frame of s that is due by now. */
static void fr_ask(struct fr_stream *s, double now)
{
	while (s->next < g.nframes && g.t0 + s->next / g.fps <= now) {
		struct fr_frame *f;
		char path[64];

		if (s->inflight >= g.maxq || !(f = calloc(1, sizeof(*f)))) {
			g.dropped++; /* the player skips it */
			g.done++;
			s->next++;
			continue;
		}
		f->st = s;
		f->index = s->next;
		f->asked = now;
		f->due = g.t0 + (s->next + 1) / g.fps;
		snprintf(path, sizeof(path), "/s%d/frame%06d.dpx", s->k, s->next);
		s->next++;
		if (nfs_open_async(s->nfs, path, O_RDONLY, fr_open_cb, f) != 0) {
			free(f);
			g.errors++;
			g.done++;
			continue;
		}
		s->inflight++;
	}
}

static int fr_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int fr_write(struct nfs_context *nfs)
{
	char *buf = malloc(FR_CHUNK), path[64];

	if (!buf)
		return 1;
	for (size_t i = 0; i < FR_CHUNK; i++)
		buf[i] = (char)(i * 2654435761u >> 24);
	for (int k = 0; k < g.streams; k++) {
		snprintf(path, sizeof(path), "/s%d", k);
		nfs_mkdir(nfs, path);
		for (int i = 0; i < g.nframes; i++) {
			struct nfsfh *fh;

			snprintf(path, sizeof(path), "/s%d/frame%06d.dpx", k, i);
			if (nfs_creat(nfs, path, 0644, &fh) != 0) {
				fprintf(stderr, "frames: create %s: %s\n", path, nfs_get_error(nfs));
				free(buf);
				return 1;
			}
			for (uint64_t off = 0; off < g.frame_bytes; off += FR_CHUNK) {
				uint64_t n = g.frame_bytes - off < FR_CHUNK ? g.frame_bytes - off : FR_CHUNK;

				if (nfs_pwrite(nfs, fh, off, n, buf) != (int)n) {
					fprintf(stderr, "frames: write %s: %s\n", path, nfs_get_error(nfs));
					free(buf);
					return 1;
				}
			}
			nfs_close(nfs, fh);
		}
	}
	free(buf);
	return 0;
}

static void fr_usage(void)
{
	fprintf(stderr, "usage: frames [-W] [-n FRAMES] [-f MiB] [-r FPS] [-s STREAMS] [-q MAXQ] URL\n");
}

int main(int argc, char **argv)
{
	struct nfs_url *url = NULL;
	struct pollfd p[FR_STREAMS];
	bool write = false;
	double elapsed;
	int opt, rc = 1;
	long v;
	char *end;

	g.nframes = 100;
	g.frame_bytes = 8ull << 20;
	g.fps = 24;
	g.streams = 1;
	g.maxq = FR_MAXQ;
	while ((opt = getopt(argc, argv, "Wn:f:r:s:q:")) != -1) {
		if (opt == 'W') {
			write = true;
			continue;
		}
		v = strtol(optarg ? optarg : "", &end, 10);
		if (*end || v <= 0) {
			fr_usage();
			return 2;
		}
		switch (opt) {
		case 'n': g.nframes = (int)v; break;
		case 'f': g.frame_bytes = (uint64_t)v << 20; break;
		case 'r': g.fps = (double)v; break;
		case 's': g.streams = v > FR_STREAMS ? FR_STREAMS : (int)v; break;
		case 'q': g.maxq = (int)v; break;
		default: fr_usage(); return 2;
		}
	}
	if (argc - optind != 1) {
		fr_usage();
		return 2;
	}
	for (int k = 0; k < (write ? 1 : g.streams); k++) {
		g.st[k].k = k;
		g.st[k].nfs = nfs_init_context();
		url = nfs_parse_url_dir(g.st[k].nfs, argv[optind]);
		if (!url || nfs_mount(g.st[k].nfs, url->server, url->path) != 0) {
			fprintf(stderr, "frames: mount: %s\n", nfs_get_error(g.st[k].nfs));
			nfs_destroy_url(url);
			goto out;
		}
		nfs_destroy_url(url);
	}
	if (write) {
		rc = fr_write(g.st[0].nfs);
		goto out;
	}
	if (!(g.lat = calloc((size_t)g.nframes * (size_t)g.streams, sizeof(*g.lat))))
		goto out;
	g.t0 = fr_now();
	while (g.done < (uint64_t)g.nframes * (uint64_t)g.streams) {
		double now = fr_now(), next = 1e300;
		int ms;

		for (int k = 0; k < g.streams; k++) {
			fr_ask(&g.st[k], now);
			if (g.st[k].next < g.nframes && g.t0 + g.st[k].next / g.fps < next)
				next = g.t0 + g.st[k].next / g.fps;
			p[k] = (struct pollfd){ .fd = nfs_get_fd(g.st[k].nfs), .events = (short)nfs_which_events(g.st[k].nfs) };
		}
		ms = next > 1e299 ? 1000 : next <= now ? 0 : (int)((next - now) * 1000) + 1;
		if (poll(p, (nfds_t)g.streams, ms) < 0)
			break;
		for (int k = 0; k < g.streams; k++)
			if (nfs_service(g.st[k].nfs, p[k].revents) < 0) {
				fprintf(stderr, "frames: service: %s\n", nfs_get_error(g.st[k].nfs));
				g.errors++;
				goto out;
			}
	}
	elapsed = fr_now() - g.t0;
	qsort(g.lat, g.nlat, sizeof(*g.lat), fr_cmp);
	printf("result frames %llu dropped %llu lat_p50_ms %.1f lat_p99_ms %.1f mibps %.2f errors %llu\n",
	       (unsigned long long)g.done, (unsigned long long)g.dropped, g.nlat ? g.lat[g.nlat / 2] : 0,
	       g.nlat ? g.lat[g.nlat * 99 / 100] : 0, (double)g.bytes / 1048576.0 / elapsed,
	       (unsigned long long)g.errors);
	rc = g.errors ? 1 : 0;
out:
	for (int k = 0; k < FR_STREAMS; k++)
		if (g.st[k].nfs)
			nfs_destroy_context(g.st[k].nfs);
	free(g.lat);
	return rc;
}
