/* frames: a frame-playback client for cross-file read-ahead (issue 23),
 * on libnfs's async API. S streams (one NFS connection each) play their own
 * film, folder sK/ of N files frame000000.dpx... of F MiB, at R frames per
 * second: frame i is asked for at t0 + i/R (open, then every 1 MiB READ of
 * it at once, then close) and is due at t0 + (i + 1)/R; one that arrives
 * later, or that could not even be asked for because MAXQ (-q, default 4)
 * frames of its stream were still on their way, is dropped.
 *
 * -p (pre-roll), as a player does: a stream asks for its frame 0 at t0 and
 * starts its clock when that frame is in (its start-up time, the "first"
 * figures below); frame i >= 1 is then asked at a0 + (i - 1)/R and due at
 * a0 + i/R, where a0 is frame 0's arrival. Frame 0 is never counted as
 * dropped then: a player shows it when it comes. Without -p every stream's
 * clock is t0 and frame 0 has the same 1/R slot as the others.
 *
 *   frames -W [-n N] [-f MiB] [-s S] URL        write the films (sync libnfs)
 *   frames [-p] [-n N] [-f MiB] [-r FPS] [-s S] [-q MAXQ] URL  play them
 *
 *   frames -P smb [-p] [-n N] [-f MiB] [-r FPS] [-s S] [-q MAXQ] smb://HOST:PORT/SHARE
 *                                              play them over SMB (libsmbclient)
 *
 * Over SMB (built with libsmbclient) each stream is MAXQ connections, one
 * process each (libsmbclient is synchronous): a frame is handed to an idle
 * one at its ask time (none idle: dropped, as over NFS), which opens it and
 * reads it in 1 MiB smbc_read calls one after the other, as a player using
 * ReadFile would (one call for the whole frame measured slower here). User and password come from FRAMES_SMB_USER / FRAMES_SMB_PASS;
 * the dialects offered are SMB2_02 to SMB3_11 (FRAMES_SMB_PROTO: the
 * highest).
 *
 * Output of a play:
 *   result frames T dropped D lat_p50_ms A lat_p99_ms B mibps M errors E
 *     first_p50_ms F first_max_ms X first_dropped Y
 * (latency: from a frame's ask to its last byte; MiB/s: bytes delivered over
 * the play's wall time; first_*: the first frame of each stream, which no
 * prediction can cover: its latency and whether it came after its slot,
 * counted in "dropped" unless -p). -t FILE writes one line per frame:
 *   STREAM FRAME ASK_MS LAT_MS ok|late|skip|err
 * (ASK_MS from the start of the play; skip: MAXQ frames were on their way).
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef FR_HAVE_SMB
#include <libsmbclient.h>
#endif

#define FR_CHUNK (1u << 20)
#define FR_STREAMS 64
#define FR_MAXQ 4              /* default -q: frames of one stream on their way at once */
#define FR_MAXQ_SMB 16         /* -q cap over SMB: a connection and a process each */

enum fr_status { FR_OK, FR_LATE, FR_SKIP, FR_ERR };
static const char *const fr_status_name[] = { "ok", "late", "skip", "err" };

struct fr_stream;

struct fr_frame {
	struct fr_stream *st;
	struct nfsfh *fh;
	int index, pending;
	double asked, due;
	bool failed;
};

/* One frame's fate, for the trace and the first-frame figures. */
struct fr_rec {
	double ask_ms, lat_ms;
	enum fr_status status;
	bool seen;
};

struct fr_stream {
	struct nfs_context *nfs;
	int k, next, inflight;
	double base;           /* frame i is asked at base + i/R, due at base + (i + 1)/R */
	bool waiting;          /* -p: frame 0 asked, not in yet: nothing more is asked */
};

struct fr {
	int nframes, streams, maxq;
	bool preroll;          /* -p */
	uint64_t frame_bytes;
	double fps, t0;
	double *lat;           /* ms, one per frame that arrived */
	size_t nlat;
	struct fr_rec *rec;    /* [stream * nframes + frame] */
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

/* Record frame `index` of stream k asked at `asked`, due at `due`, ended at
 * t (failed: an I/O error; skipped: never asked for). */
static void fr_record(int k, int index, double asked, double due, double t, bool failed, bool skipped)
{
	struct fr_rec *r = &g.rec[(size_t)k * (size_t)g.nframes + (size_t)index];

	g.done++;
	r->seen = true;
	r->ask_ms = (asked - g.t0) * 1000;
	if (skipped) {
		g.dropped++; /* the player skips it */
		r->status = FR_SKIP;
	} else if (failed) {
		g.errors++;
		r->status = FR_ERR;
	} else {
		r->lat_ms = (t - asked) * 1000;
		g.lat[g.nlat++] = r->lat_ms;
		g.bytes += g.frame_bytes;
		r->status = t > due ? FR_LATE : FR_OK;
		if (t > due && !(g.preroll && index == 0))
			g.dropped++;
	}
	if (g.preroll && index == 0) { /* the player starts: frame 1 is asked now */
		g.st[k].base = t - 1 / g.fps;
		g.st[k].waiting = false;
	}
}

/* When stream s asks for its next frame (1e300: not before frame 0 is in,
 * or nothing left). */
static double fr_next_ask(const struct fr_stream *s)
{
	if (s->next >= g.nframes || (s->waiting && s->next > 0))
		return 1e300;
	return s->base + s->next / g.fps;
}

/* Every stream's clock at t0: -p holds each at its frame 0. */
static void fr_start(void)
{
	g.t0 = fr_now();
	for (int k = 0; k < g.streams; k++) {
		g.st[k].base = g.t0;
		g.st[k].waiting = g.preroll;
	}
}

static void fr_finish(struct fr_frame *f)
{
	f->st->inflight--;
	fr_record(f->st->k, f->index, f->asked, f->due, fr_now(), f->failed, false);
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
	while (fr_next_ask(s) <= now) {
		struct fr_frame *f;
		char path[64];

		if (s->inflight >= g.maxq || !(f = calloc(1, sizeof(*f)))) {
			fr_record(s->k, s->next, now, 0, now, false, true);
			s->next++;
			continue;
		}
		f->st = s;
		f->index = s->next;
		f->asked = now;
		f->due = s->base + (s->next + 1) / g.fps;
		snprintf(path, sizeof(path), "/s%d/frame%06d.dpx", s->k, s->next);
		s->next++;
		if (nfs_open_async(s->nfs, path, O_RDONLY, fr_open_cb, f) != 0) {
			fr_record(s->k, f->index, now, f->due, now, true, false);
			free(f);
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

/* Play over NFS: one libnfs context per stream, one poll loop. */
static int fr_play_nfs(const char *urlstr)
{
	struct pollfd p[FR_STREAMS];

	for (int k = 0; k < g.streams; k++) {
		struct nfs_url *url;

		g.st[k].k = k;
		g.st[k].nfs = nfs_init_context();
		url = nfs_parse_url_dir(g.st[k].nfs, urlstr);
		if (!url || nfs_mount(g.st[k].nfs, url->server, url->path) != 0) {
			fprintf(stderr, "frames: mount: %s\n", nfs_get_error(g.st[k].nfs));
			nfs_destroy_url(url);
			return 1;
		}
		nfs_destroy_url(url);
	}
	fr_start();
	while (g.done < (uint64_t)g.nframes * (uint64_t)g.streams) {
		double now = fr_now(), next = 1e300;
		int ms;

		for (int k = 0; k < g.streams; k++) {
			fr_ask(&g.st[k], now);
			if (fr_next_ask(&g.st[k]) < next)
				next = fr_next_ask(&g.st[k]);
			p[k] = (struct pollfd){ .fd = nfs_get_fd(g.st[k].nfs), .events = (short)nfs_which_events(g.st[k].nfs) };
		}
		ms = next > 1e299 ? 1000 : next <= now ? 0 : (int)((next - now) * 1000) + 1;
		if (poll(p, (nfds_t)g.streams, ms) < 0)
			return 1;
		for (int k = 0; k < g.streams; k++)
			if (nfs_service(g.st[k].nfs, p[k].revents) < 0) {
				fprintf(stderr, "frames: service: %s\n", nfs_get_error(g.st[k].nfs));
				g.errors++;
				return 1;
			}
	}
	return 0;
}

#ifdef FR_HAVE_SMB
/* ---- over SMB: libsmbclient, a connection and a process per frame in flight ----
 * libsmbclient is synchronous and Debian's has no thread set-up
 * (smbc_thread_posix), so each worker is a child process with its own
 * context: the parent writes it a frame number on its pipe and notes the
 * time when the child's answer arrives (the frame's last byte is in). */

struct fr_smb_worker {
	pid_t pid;
	int cmd, res;          /* the parent's ends: frame numbers out, answers in */
	int k;                 /* its stream */
	int index;             /* the frame handed to it, -1: idle */
	double asked, due;
};

/* A worker's answer: the frame and whether it was read whole. */
struct fr_smb_ans {
	int index, ok;
};

static struct {
	char base[256];        /* smb://HOST/SHARE */
	int nw;
	struct fr_smb_worker *w;
} fs;

static void fr_smb_auth(SMBCCTX *c, const char *srv, const char *shr, char *wg, int wglen, char *un, int unlen,
			char *pw, int pwlen)
{
	const char *u = getenv("FRAMES_SMB_USER"), *p = getenv("FRAMES_SMB_PASS");

	(void)c;
	(void)srv;
	(void)shr;
	snprintf(wg, (size_t)wglen, "%s", "WORKGROUP");
	snprintf(un, (size_t)unlen, "%s", u ? u : "guest");
	snprintf(pw, (size_t)pwlen, "%s", p ? p : "");
}

/* A context on port, connected (the share's root stat) before the play. */
static SMBCCTX *fr_smb_ctx(uint16_t port)
{
	const char *proto = getenv("FRAMES_SMB_PROTO");
	SMBCCTX *c = smbc_new_context();
	struct stat st;

	if (!c)
		return NULL;
	smbc_setDebug(c, 0);
	smbc_setPort(c, port);
	smbc_setOptionUseKerberos(c, 0);
	smbc_setOptionFallbackAfterKerberos(c, 1);
	smbc_setOptionNoAutoAnonymousLogin(c, 1);
	smbc_setFunctionAuthDataWithContext(c, fr_smb_auth);
	if (!smbc_init_context(c) || !smbc_setOptionProtocols(c, "SMB2_02", proto ? proto : "SMB3_11") ||
	    smbc_getFunctionStat(c)(c, fs.base, &st) != 0) {
		fprintf(stderr, "frames: smb connect %s: %m\n", fs.base);
		smbc_free_context(c, 1);
		return NULL;
	}
	return c;
}

/* Read frame index of stream k whole through c; false on an error. */
static bool fr_smb_frame(SMBCCTX *c, char *buf, int k, int index)
{
	char path[320];
	SMBCFILE *f;
	uint64_t off = 0;
	bool ok = true;

	snprintf(path, sizeof(path), "%s/s%d/frame%06d.dpx", fs.base, k, index);
	if (!(f = smbc_getFunctionOpen(c)(c, path, O_RDONLY, 0))) {
		fprintf(stderr, "frames: smb open %s: %m\n", path);
		return false;
	}
	while (off < g.frame_bytes) {
		size_t n = g.frame_bytes - off < FR_CHUNK ? (size_t)(g.frame_bytes - off) : FR_CHUNK;
		ssize_t got = smbc_getFunctionRead(c)(c, f, buf, n);

		if (got <= 0) {
			fprintf(stderr, "frames: smb read %s at %llu: %zd %m\n", path, (unsigned long long)off, got);
			ok = false;
			break;
		}
		off += (uint64_t)got;
	}
	smbc_getFunctionClose(c)(c, f);
	return ok;
}

/* A worker process: connect, say ready (frame -1), then read each frame it
 * is handed until its pipe closes. */
static void fr_smb_child(int cmd, int res, int k, uint16_t port)
{
	struct fr_smb_ans a = { -1, 0 };
	char *buf = malloc(FR_CHUNK);
	SMBCCTX *c = buf ? fr_smb_ctx(port) : NULL;
	int index;

	a.ok = c != NULL;
	if (write(res, &a, sizeof(a)) != sizeof(a) || !c)
		_exit(1);
	while (read(cmd, &index, sizeof(index)) == sizeof(index)) {
		a.index = index;
		a.ok = fr_smb_frame(c, buf, k, index);
		if (write(res, &a, sizeof(a)) != sizeof(a))
			break;
	}
	smbc_free_context(c, 1);
	_exit(0);
}

static int fr_smb_spawn(struct fr_smb_worker *w, uint16_t port)
{
	int cp[2], rp[2];

	if (pipe(cp) != 0)
		return -1;
	if (pipe(rp) != 0) {
		close(cp[0]);
		close(cp[1]);
		return -1;
	}
	fflush(NULL);
	if ((w->pid = fork()) == 0) {
		close(cp[1]);
		close(rp[0]);
		for (int i = 0; i < fs.nw; i++) /* not the other workers' pipes: their EOF is their end */
			if (fs.w[i].pid > 0) {
				close(fs.w[i].cmd);
				close(fs.w[i].res);
			}
		fr_smb_child(cp[0], rp[1], w->k, port);
	}
	close(cp[0]);
	close(rp[1]);
	w->cmd = cp[1];
	w->res = rp[0];
	return w->pid > 0 ? 0 : -1;
}

/* Hand every frame due by now to an idle worker of its stream. */
static int fr_smb_ask(double now)
{
	for (int k = 0; k < g.streams; k++)
		while (fr_next_ask(&g.st[k]) <= now) {
			struct fr_smb_worker *idle = NULL;
			int i = g.st[k].next++;

			for (int j = 0; j < g.maxq && !idle; j++)
				if (fs.w[k * g.maxq + j].index < 0)
					idle = &fs.w[k * g.maxq + j];
			if (!idle) {
				fr_record(k, i, now, 0, now, false, true);
				continue;
			}
			idle->asked = now;
			idle->due = g.st[k].base + (i + 1) / g.fps;
			idle->index = i;
			if (write(idle->cmd, &i, sizeof(i)) != sizeof(i))
				return -1;
		}
	return 0;
}

/* The answer waiting on w's pipe; -1 when the worker is gone. */
static int fr_smb_answer(struct fr_smb_worker *w, double now)
{
	struct fr_smb_ans a;

	if (read(w->res, &a, sizeof(a)) != sizeof(a))
		return -1;
	if (a.index >= 0 && a.index == w->index) {
		fr_record(w->k, a.index, w->asked, w->due, now, !a.ok, false);
		w->index = -1;
	}
	return a.ok ? 0 : a.index < 0 ? -1 : 0;
}

/* smb://HOST:PORT/SHARE: S x MAXQ connections, then the play. */
static int fr_play_smb(const char *url)
{
	char host[128], share[96];
	unsigned port = 445;
	struct pollfd *p = NULL;
	int rc = 1;

	if (sscanf(url, "smb://%127[^:/]:%u/%95[^/]", host, &port, share) != 3 &&
	    (port = 445, sscanf(url, "smb://%127[^:/]/%95[^/]", host, share) != 2)) {
		fprintf(stderr, "frames: %s: not smb://HOST[:PORT]/SHARE\n", url);
		return 1;
	}
	if (port == 0 || port > 65535 || g.maxq > FR_MAXQ_SMB) {
		fprintf(stderr, "frames: port %u, or -q above %d over SMB\n", port, FR_MAXQ_SMB);
		return 1;
	}
	snprintf(fs.base, sizeof(fs.base), "smb://%s/%s", host, share);
	fs.nw = g.streams * g.maxq;
	fs.w = calloc((size_t)fs.nw, sizeof(*fs.w));
	p = calloc((size_t)fs.nw, sizeof(*p));
	if (!fs.w || !p)
		goto out;
	for (int i = 0; i < fs.nw; i++) {
		fs.w[i] = (struct fr_smb_worker){ .k = i / g.maxq, .index = -1, .cmd = -1, .res = -1 };
		if (fr_smb_spawn(&fs.w[i], (uint16_t)port) != 0)
			goto out;
	}
	for (int i = 0; i < fs.nw; i++) /* each connected */
		if (fr_smb_answer(&fs.w[i], 0) != 0)
			goto out;
	fr_start();
	while (g.done < (uint64_t)g.nframes * (uint64_t)g.streams) {
		double now = fr_now(), next = 1e300;
		int ms;

		if (fr_smb_ask(now) != 0)
			goto out;
		for (int k = 0; k < g.streams; k++)
			if (fr_next_ask(&g.st[k]) < next)
				next = fr_next_ask(&g.st[k]);
		for (int i = 0; i < fs.nw; i++)
			p[i] = (struct pollfd){ .fd = fs.w[i].res, .events = POLLIN };
		ms = next > 1e299 ? 1000 : next <= now ? 0 : (int)((next - now) * 1000) + 1;
		if (poll(p, (nfds_t)fs.nw, ms) < 0)
			goto out;
		now = fr_now();
		for (int i = 0; i < fs.nw; i++)
			if (p[i].revents && fr_smb_answer(&fs.w[i], now) != 0)
				goto out;
	}
	rc = 0;
out:
	for (int i = 0; fs.w && i < fs.nw; i++) {
		if (fs.w[i].cmd >= 0)
			close(fs.w[i].cmd); /* its end */
		if (fs.w[i].res >= 0)
			close(fs.w[i].res);
		if (fs.w[i].pid > 0)
			waitpid(fs.w[i].pid, NULL, 0);
	}
	free(fs.w);
	free(p);
	return rc;
}
#else
static int fr_play_smb(const char *url)
{
	(void)url;
	fprintf(stderr, "frames: built without libsmbclient: no SMB\n");
	return 1;
}
#endif

static void fr_usage(void)
{
	fprintf(stderr, "usage: frames [-W] [-p] [-P nfs|smb] [-n FRAMES] [-f MiB] [-r FPS] [-s STREAMS] [-q MAXQ] "
			"[-t TRACE] URL\n");
}

/* The figures of the first frame of each stream (no prediction covers it). */
static void fr_first(double *p50, double *max, int *dropped)
{
	double l[FR_STREAMS];
	int n = 0;

	*p50 = *max = 0;
	*dropped = 0;
	for (int k = 0; k < g.streams; k++) {
		const struct fr_rec *r = &g.rec[(size_t)k * (size_t)g.nframes];

		if (r->status == FR_OK || r->status == FR_LATE) {
			l[n++] = r->lat_ms;
			*max = r->lat_ms > *max ? r->lat_ms : *max;
		}
		*dropped += !g.preroll && (r->status == FR_LATE || r->status == FR_SKIP);
	}
	qsort(l, (size_t)n, sizeof(*l), fr_cmp);
	*p50 = n ? l[n / 2] : 0;
}

static int fr_trace(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return 1;
	}
	for (int k = 0; k < g.streams; k++)
		for (int i = 0; i < g.nframes; i++) {
			const struct fr_rec *r = &g.rec[(size_t)k * (size_t)g.nframes + (size_t)i];

			if (r->seen)
				fprintf(f, "%d %d %.1f %.1f %s\n", k, i, r->ask_ms, r->lat_ms, fr_status_name[r->status]);
		}
	return fclose(f) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *trace = NULL;
	bool write = false, smb = false;
	double elapsed, fp50, fmax;
	int opt, rc = 1, fdrop;
	long v;
	char *end;

	g.nframes = 100;
	g.frame_bytes = 8ull << 20;
	g.fps = 24;
	g.streams = 1;
	g.maxq = FR_MAXQ;
	while ((opt = getopt(argc, argv, "WpP:t:n:f:r:s:q:")) != -1) {
		if (opt == 'W' || opt == 'p' || opt == 'P' || opt == 't') {
			if (opt == 'W')
				write = true;
			else if (opt == 'p')
				g.preroll = true;
			else if (opt == 't')
				trace = optarg;
			else if (!strcmp(optarg, "smb") || !strcmp(optarg, "nfs"))
				smb = !strcmp(optarg, "smb");
			else {
				fprintf(stderr, "frames: -P %s: the protocol is nfs or smb\n", optarg);
				return 2;
			}
			continue;
		}
		v = strtol(optarg ? optarg : "", &end, 10);
		if (*end || v <= 0 || v > 1000000) {
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
	if (write) {
		struct nfs_url *url;

		if (smb) {
			fprintf(stderr, "frames: -W writes over NFS only\n");
			return 2;
		}
		g.st[0].nfs = nfs_init_context();
		url = nfs_parse_url_dir(g.st[0].nfs, argv[optind]);
		if (!url || nfs_mount(g.st[0].nfs, url->server, url->path) != 0)
			fprintf(stderr, "frames: mount: %s\n", nfs_get_error(g.st[0].nfs));
		else
			rc = fr_write(g.st[0].nfs);
		nfs_destroy_url(url);
		goto out;
	}
	g.lat = calloc((size_t)g.nframes * (size_t)g.streams, sizeof(*g.lat));
	g.rec = calloc((size_t)g.nframes * (size_t)g.streams, sizeof(*g.rec));
	if (!g.lat || !g.rec)
		goto out;
	if ((smb ? fr_play_smb(argv[optind]) : fr_play_nfs(argv[optind])) != 0)
		goto out;
	elapsed = fr_now() - g.t0;
	qsort(g.lat, g.nlat, sizeof(*g.lat), fr_cmp);
	fr_first(&fp50, &fmax, &fdrop);
	printf("result frames %llu dropped %llu lat_p50_ms %.1f lat_p99_ms %.1f mibps %.2f errors %llu "
	       "first_p50_ms %.1f first_max_ms %.1f first_dropped %d\n",
	       (unsigned long long)g.done, (unsigned long long)g.dropped, g.nlat ? g.lat[g.nlat / 2] : 0,
	       g.nlat ? g.lat[g.nlat * 99 / 100] : 0, (double)g.bytes / 1048576.0 / elapsed,
	       (unsigned long long)g.errors, fp50, fmax, fdrop);
	rc = g.errors ? 1 : 0;
	if (trace && fr_trace(trace) != 0)
		rc = 1;
out:
	for (int k = 0; k < FR_STREAMS; k++)
		if (g.st[k].nfs)
			nfs_destroy_context(g.st[k].nfs);
	free(g.lat);
	free(g.rec);
	return rc;
}
