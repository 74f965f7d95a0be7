/* loadgen: an NFSv3 load generator on libnfs's async API, with data
 * verification. Four phases on one file: sequential 1 MiB writes at depth 8
 * (then COMMIT), sequential 1 MiB reads at depth 8, random 4 KiB writes at
 * depth 32, random 4 KiB reads at depth 32. Every 4 KiB page carries
 * (magic, offset) and an offset-derived pattern; reads check all of it.
 *
 *   loadgen [-s MiB] [-n ops] [-p PHASES] [-k] [-R SECS] [-c CONNS]
 *           'nfs://127.0.0.1/export?nfsport=P&mountport=P' file
 *
 * -p picks phases from "WSwrF" (seq-write, seq-read, rand-write, rand-read;
 * default the first four; F: small files, one at a time: create, 4 KiB
 * write, close, then remove them all; each namespace change is stable
 * before its reply on aquifer, so this is where that costs). -k keeps the file: it is not removed, and opened as it
 * is when no phase writes it from scratch (bench/tier reads a file that
 * went cold between runs). -R retries a failed I/O (e.g. NFS3ERR_JUKEBOX
 * from a cold tier whose store is away) for up to SECS seconds; retries are
 * counted, not errors. -c opens CONNS connections (own mounts of the same
 * export, one poll loop: the Linux client's nconnect pattern) and spreads the
 * I/O phases over them, each at the phase's depth (so CONNS x depth in
 * flight); COMMIT and the small-file phase use the first one.
 *
 * -P PID counts what each phase cost the server process PID (every thread):
 * context switches (voluntary + involuntary, /proc/PID/task/TID/status), CPU
 * time (schedstat), and, where tracepoints can be counted (perf_event_open,
 * root or perf_event_paranoid <= 1), futex calls and all system calls.
 * Counters are read right before a phase's first call and after its last
 * reply, so the figures belong to that phase alone; -1 where unavailable.
 *
 * Prints one line per phase: "phase MiB/s ops/s seconds", and with -P
 * "... calls N cs N cpu-us N futex N syscalls N vcs N" (vcs: the voluntary
 * ones among cs; calls: the phase's NFS
 * READ/WRITE calls, COMMIT included; small-file: its ops). Exit 1 on any
 * error or bad page.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/time.h>

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <nfsc/libnfs.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define MAGIC 0x41515546u /* "AQUF" */
#define MAXCONN 64

struct lg {
	struct nfs_context *nfs;     /* connection 0: setup, COMMIT, small files */
	struct nfsfh *fh;
	struct nfs_context *conn[MAXCONN];
	struct nfsfh *cfh[MAXCONN];
	int cinflight[MAXCONN];
	int nconn;
	uint64_t size;       /* file size in bytes */
	uint32_t block;
	int depth;
	int inflight;
	uint64_t next;       /* next sequential offset */
	uint64_t issued, done, target;
	bool random, write;
	uint64_t rng;
	uint64_t bad, errors;
	double retry_until;  /* -R: retry failed I/O until then (0: never) */
	double retry_secs;
	uint64_t retries;
};

struct io {
	struct lg *lg;
	int conn;
	uint64_t off;
	uint32_t len;
	uint8_t *buf;
};

static void fill(uint8_t *p, uint64_t off, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i += PAGE) {
		uint64_t o = off + i;
		uint32_t w[PAGE / 4], k;

		w[0] = MAGIC;
		w[1] = (uint32_t)(o >> 32);
		w[2] = (uint32_t)o;
		for (k = 3; k < PAGE / 4; k++)
			w[k] = (uint32_t)(o * 2654435761u) ^ k;
		memcpy(p + i, w, PAGE);
	}
}

static uint64_t check(const uint8_t *p, uint64_t off, uint32_t len)
{
	static __thread uint8_t want[PAGE];
	uint64_t bad = 0;
	uint32_t i;

	for (i = 0; i + PAGE <= len; i += PAGE) {
		fill(want, off + i, PAGE);
		if (memcmp(want, p + i, PAGE))
			bad++;
	}
	return bad;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(struct lg *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static void issue(struct lg *g);
static void issue_one(struct lg *g, struct io *io);
static double now(void);
static void cb(int err, struct nfs_context *nfs, void *data, void *priv);

static int submit(struct lg *g, struct io *io)
{
	if (g->write)
		return nfs_pwrite_async(g->conn[io->conn], g->cfh[io->conn], io->off, io->len, io->buf, cb, io);
	return nfs_pread_async(g->conn[io->conn], g->cfh[io->conn], io->off, io->len, cb, io);
}

static void cb(int err, struct nfs_context *nfs, void *data, void *priv)
{
	struct io *io = priv;
	struct lg *g = io->lg;

	(void)nfs;
	if (err < 0 && g->retry_secs > 0) {
		if (!g->retry_until)
			g->retry_until = now() + g->retry_secs;
		if (now() < g->retry_until) {
			g->retries++;
			usleep(100000);
			if (submit(g, io) == 0)
				return;
		}
	}
	g->inflight--;
	g->cinflight[io->conn]--;
	g->done++;
	if (err < 0 || (uint32_t)err != io->len) {
		if (g->errors++ < 5)
			fprintf(stderr, "io at %llu: %d %s\n", (unsigned long long)io->off, err,
				err < 0 ? (char *)data : "short");
	} else if (!g->write) {
		g->bad += check(data, io->off, io->len);
	}
	free(io->buf);
	free(io);
	issue(g);
}

static void issue(struct lg *g)
{
	int c;

	for (c = 0; c < g->nconn; c++) {
		while (g->cinflight[c] < g->depth && g->issued < g->target) {
			struct io *io = calloc(1, sizeof(*io));

			io->lg = g;
			io->conn = c;
			issue_one(g, io);
		}
	}
}

static void issue_one(struct lg *g, struct io *io)
{
	int rc;

	io->len = g->block;
	if (g->random) {
		io->off = (rnd(g) % (g->size / g->block)) * g->block;
	} else {
		io->off = g->next;
		g->next += g->block;
	}
	if (g->write) {
		io->buf = malloc(io->len);
		fill(io->buf, io->off, io->len);
	}
	rc = submit(g, io);
	if (rc) {
		fprintf(stderr, "queue: %s\n", nfs_get_error(g->conn[io->conn]));
		exit(1);
	}
	g->inflight++;
	g->cinflight[io->conn]++;
	g->issued++;
}

static void cost_start(void);

static double run(struct lg *g, bool write, bool random, uint32_t block, int depth, uint64_t ops)
{
	double t0 = now();

	cost_start();
	g->write = write;
	g->random = random;
	g->block = block;
	g->depth = depth;
	g->next = 0;
	g->issued = g->done = 0;
	g->target = ops;
	issue(g);
	while (g->done < g->target) {
		struct pollfd p[MAXCONN];
		int c;

		for (c = 0; c < g->nconn; c++)
			p[c] = (struct pollfd){.fd = nfs_get_fd(g->conn[c]), .events = (short)nfs_which_events(g->conn[c])};
		if (poll(p, (nfds_t)g->nconn, 1000) < 0) {
			perror("poll");
			exit(1);
		}
		for (c = 0; c < g->nconn; c++) {
			if (p[c].revents && nfs_service(g->conn[c], p[c].revents) < 0) {
				fprintf(stderr, "service: %s\n", nfs_get_error(g->conn[c]));
				exit(1);
			}
		}
	}
	return now() - t0;
}

/* Phase F: n files of 4 KiB created in a fresh directory, then removed;
 * every file's page verified on the way (read back before the remove). */
static double small_files(struct lg *g, const char *dir, uint64_t n, uint64_t *ops)
{
	uint8_t page[PAGE], back[PAGE];
	char path[512];
	double t0 = now();
	uint64_t i;

	cost_start();
	nfs_mkdir(g->nfs, dir);
	for (i = 0; i < n; i++) {
		struct nfsfh *fh;

		snprintf(path, sizeof(path), "%s/f%llu", dir, (unsigned long long)i);
		fill(page, i * PAGE, PAGE);
		if (nfs_creat(g->nfs, path, 0644, &fh) != 0) {
			g->errors++;
			continue;
		}
		if (nfs_write(g->nfs, fh, PAGE, page) != (int)PAGE)
			g->errors++;
		nfs_close(g->nfs, fh);
	}
	for (i = 0; i < n; i++) {
		struct nfsfh *fh;

		snprintf(path, sizeof(path), "%s/f%llu", dir, (unsigned long long)i);
		if (i % 64 == 0 && nfs_open(g->nfs, path, O_RDONLY, &fh) == 0) {
			if (nfs_read(g->nfs, fh, PAGE, back) != (int)PAGE || check(back, i * PAGE, PAGE))
				g->bad++;
			nfs_close(g->nfs, fh);
		}
		if (nfs_unlink(g->nfs, path) != 0)
			g->errors++;
	}
	nfs_rmdir(g->nfs, dir);
	*ops = 2 * n;
	return now() - t0;
}


/* ---------- -P: what a phase cost the server ---------- */

#define MAXTASK 1024

struct cost {
	long long cs, vcs, cpu_ns, futex, sys;
};

static int spid;                 /* -P */
static int tp_fd[2][MAXTASK];    /* futex, raw syscalls: one counter per thread */
static int ntp;

static long long tp_id(const char *ev)
{
	char path[160], b[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", ev);
	if (!(f = fopen(path, "r")))
		return -1;
	if (!fgets(b, sizeof(b), f))
		b[0] = 0;
	fclose(f);
	return b[0] ? strtoll(b, NULL, 10) : -1;
}

/* Tracepoint counters on every thread of spid (inherit: threads they start
 * later count too). Without permission the futex and syscall figures are -1. */
static void cost_open(void)
{
	const char *evs[2] = {"syscalls/sys_enter_futex", "raw_syscalls/sys_enter"};
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", spid);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d)) && ntp < MAXTASK) {
		int tid = (int)strtol(de->d_name, NULL, 10), e;

		if (tid <= 0)
			continue;
		for (e = 0; e < 2; e++) {
			struct perf_event_attr a = {.type = PERF_TYPE_TRACEPOINT, .size = sizeof(a), .inherit = 1};
			long long id = tp_id(evs[e]);

			a.config = (unsigned long long)id;
			tp_fd[e][ntp] = id < 0 ? -1 : (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, 0);
		}
		ntp++;
	}
	closedir(d);
}

static void cost_read(struct cost *c)
{
	char path[320], line[256];
	struct dirent *de;
	DIR *d;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/proc/%d/task", spid);
	if (!(d = opendir(path))) {
		c->cs = c->vcs = c->cpu_ns = -1;
	} else {
		while ((de = readdir(d))) {
			FILE *f;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%s/status", spid, de->d_name);
			if ((f = fopen(path, "r"))) {
				while (fgets(line, sizeof(line), f)) {
					if (!strncmp(line, "voluntary_ctxt_switches:", 24)) {
						c->cs += strtoll(line + 24, NULL, 10);
						c->vcs += strtoll(line + 24, NULL, 10);
					}
					else if (!strncmp(line, "nonvoluntary_ctxt_switches:", 27))
						c->cs += strtoll(line + 27, NULL, 10);
				}
				fclose(f);
			}
			snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", spid, de->d_name);
			if ((f = fopen(path, "r"))) {
				if (fgets(line, sizeof(line), f))
					c->cpu_ns += strtoll(line, NULL, 10);
				fclose(f);
			}
		}
		closedir(d);
	}
	for (int e = 0; e < 2; e++) {
		long long *v = e ? &c->sys : &c->futex;

		for (int i = 0; i < ntp && *v >= 0; i++) {
			uint64_t n = 0;

			if (tp_fd[e][i] < 0 || read(tp_fd[e][i], &n, sizeof(n)) != (ssize_t)sizeof(n))
				*v = -1;
			else
				*v += (long long)n;
		}
		if (ntp == 0)
			*v = -1;
	}
}

static struct cost cost0;

static void cost_start(void)
{
	if (spid)
		cost_read(&cost0);
}

/* " calls N cs N cpu-us N futex N syscalls N vcs N": the phase's cost (since
 * cost_start); vcs: the voluntary switches among cs (a thread waited). */
static void cost_print(uint64_t calls)
{
	struct cost c;

	if (!spid)
		return;
	cost_read(&c);
	printf(" calls %llu cs %lld cpu-us %lld futex %lld syscalls %lld vcs %lld", (unsigned long long)calls,
	       c.cs < 0 ? -1 : c.cs - cost0.cs, c.cpu_ns < 0 ? -1 : (c.cpu_ns - cost0.cpu_ns) / 1000,
	       c.futex < 0 || cost0.futex < 0 ? -1 : c.futex - cost0.futex,
	       c.sys < 0 || cost0.sys < 0 ? -1 : c.sys - cost0.sys, c.vcs < 0 ? -1 : c.vcs - cost0.vcs);
}

static void report(const char *name, uint64_t ops, uint32_t block, double secs, uint64_t calls)
{
	printf("%-10s %10.1f MiB/s %10.0f ops/s %8.3f s", name, (double)ops * block / 1048576.0 / secs,
	       (double)ops / secs, secs);
	cost_print(calls);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct lg g = {.rng = 0x9e3779b97f4a7c15ull};
	struct nfs_url *url;
	uint64_t mib = 256, nops = 20000;
	const char *phases = "WSwr";
	bool keep = false;
	double t;
	int opt;

	g.nconn = 1;
	while ((opt = getopt(argc, argv, "s:n:p:kR:c:P:")) != -1) {
		if (opt == 's')
			mib = strtoull(optarg, NULL, 10);
		else if (opt == 'n')
			nops = strtoull(optarg, NULL, 10);
		else if (opt == 'p')
			phases = optarg;
		else if (opt == 'k')
			keep = true;
		else if (opt == 'R')
			g.retry_secs = strtod(optarg, NULL);
		else if (opt == 'c')
			g.nconn = (int)strtol(optarg, NULL, 10);
		else if (opt == 'P')
			spid = (int)strtol(optarg, NULL, 10);
		else
			return 2;
	}
	if (argc - optind != 2 || mib == 0 || strspn(phases, "WSwrF") != strlen(phases) || g.nconn < 1 ||
	    g.nconn > MAXCONN) {
		fprintf(stderr, "usage: loadgen [-s MiB] [-n ops] [-p WSwrF] [-k] [-R secs] [-c 1-%d] [-P PID] URL file\n", MAXCONN);
		return 2;
	}
	if (spid)
		cost_open();
	g.size = mib << 20;
	g.nfs = nfs_init_context();
	url = nfs_parse_url_dir(g.nfs, argv[optind]);
	if (!url || nfs_mount(g.nfs, url->server, url->path) != 0) {
		fprintf(stderr, "mount: %s\n", nfs_get_error(g.nfs));
		return 1;
	}
	if (strchr(phases, 'W') || !keep) {
		nfs_unlink(g.nfs, argv[optind + 1]);
		if (nfs_creat(g.nfs, argv[optind + 1], 0644, &g.fh) != 0) {
			fprintf(stderr, "creat: %s\n", nfs_get_error(g.nfs));
			return 1;
		}
	} else if (nfs_open(g.nfs, argv[optind + 1], O_RDWR, &g.fh) != 0) {
		fprintf(stderr, "open: %s\n", nfs_get_error(g.nfs));
		return 1;
	}
	g.conn[0] = g.nfs;
	g.cfh[0] = g.fh;
	for (int c = 1; c < g.nconn; c++) {
		struct nfs_url *u;

		/* the URL's options (nfsport, mountport, version) are set on the context that parses it */
		g.conn[c] = nfs_init_context();
		u = nfs_parse_url_dir(g.conn[c], argv[optind]);
		if (!u || nfs_mount(g.conn[c], u->server, u->path) != 0 ||
		    nfs_open(g.conn[c], argv[optind + 1], O_RDWR, &g.cfh[c]) != 0) {
			fprintf(stderr, "connection %d: %s\n", c, nfs_get_error(g.conn[c]));
			return 1;
		}
		nfs_destroy_url(u);
	}
	if (strchr(phases, 'W')) {
		t = run(&g, true, false, 1u << 20, 8, mib);
		if (nfs_fsync(g.nfs, g.fh) != 0)
			g.errors++;
		report("seq-write", mib, 1u << 20, t, mib + 1); /* cost: COMMIT included */
	}
	if (strchr(phases, 'S')) {
		t = run(&g, false, false, 1u << 20, 8, mib);
		report("seq-read", mib, 1u << 20, t, mib);
	}
	if (strchr(phases, 'w')) {
		t = run(&g, true, true, PAGE, 32, nops);
		report("rand-write", nops, PAGE, t, nops);
	}
	if (strchr(phases, 'r')) {
		t = run(&g, false, true, PAGE, 32, nops);
		report("rand-read", nops, PAGE, t, nops);
	}
	if (strchr(phases, 'F')) {
		char dir[300];
		uint64_t ops;

		snprintf(dir, sizeof(dir), "%s.small", argv[optind + 1]);
		t = small_files(&g, dir, nops / 10, &ops);
		report("small-file", ops, PAGE, t, ops);
	}
	printf("errors %llu bad-pages %llu retries %llu\n", (unsigned long long)g.errors, (unsigned long long)g.bad,
	       (unsigned long long)g.retries);
	for (int c = 1; c < g.nconn; c++) {
		nfs_close(g.conn[c], g.cfh[c]);
		nfs_destroy_context(g.conn[c]);
	}
	nfs_close(g.nfs, g.fh);
	if (!keep)
		nfs_unlink(g.nfs, argv[optind + 1]);
	nfs_destroy_url(url);
	nfs_destroy_context(g.nfs);
	return g.errors || g.bad ? 1 : 0;
}
