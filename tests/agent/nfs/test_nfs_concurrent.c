/* test_nfs_concurrent: the nconnect pattern against a live nfs_serve: 16
 * libnfs connections, each with 16 async WRITEs then 16 async READs in
 * flight over its own region of one shared file (64 KiB and 1 MiB blocks),
 * every byte verified; replies come back out of order on each connection. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/time.h>

#include <fcntl.h>
#include <nfsc/libnfs.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/agent/nfs/nfs_live.h"

#define CONNS 16
#define DEPTH 16
#define REGION (4u << 20)

struct conn {
	struct nfs_context *nfs;
	struct nfsfh *fh;
	uint64_t base, next, end;
	uint32_t block;
	int inflight;
	bool writing;
	uint64_t done, bad, errors;
};

struct io {
	struct conn *c;
	uint64_t off;
	uint32_t len;
	uint8_t *buf;
};

static uint8_t byte_at(uint64_t off)
{
	return (uint8_t)((off * 2654435761u) >> 13);
}

static void issue(struct conn *c);

static void cb(int err, struct nfs_context *nfs, void *data, void *priv)
{
	struct io *io = priv;
	struct conn *c = io->c;
	uint32_t i;

	(void)nfs;
	c->inflight--;
	if (err < 0 || (uint32_t)err != io->len) {
		c->errors++;
	} else if (!c->writing) {
		const uint8_t *p = data;

		for (i = 0; i < io->len; i++)
			if (p[i] != byte_at(io->off + i)) {
				c->bad++;
				break;
			}
	}
	c->done++;
	free(io->buf);
	free(io);
	issue(c);
}

static void issue(struct conn *c)
{
	while (c->inflight < DEPTH && c->next < c->end) {
		struct io *io = calloc(1, sizeof(*io));
		uint32_t i;
		int rc;

		io->c = c;
		io->off = c->next;
		io->len = c->block;
		c->next += c->block;
		if (c->writing) {
			io->buf = malloc(io->len);
			for (i = 0; i < io->len; i++)
				io->buf[i] = byte_at(io->off + i);
			rc = nfs_pwrite_async(c->nfs, c->fh, io->off, io->len, io->buf, cb, io);
		} else {
			rc = nfs_pread_async(c->nfs, c->fh, io->off, io->len, cb, io);
		}
		if (rc) {
			c->errors++;
			free(io->buf);
			free(io);
			return;
		}
		c->inflight++;
	}
}

static int phase(struct conn *cs, bool writing, uint32_t block)
{
	struct pollfd pf[CONNS];
	int i, busy = 1;

	for (i = 0; i < CONNS; i++) {
		cs[i].writing = writing;
		cs[i].block = block;
		cs[i].next = cs[i].base;
		cs[i].end = cs[i].base + REGION;
		issue(&cs[i]);
	}
	while (busy) {
		busy = 0;
		for (i = 0; i < CONNS; i++) {
			pf[i].fd = nfs_get_fd(cs[i].nfs);
			pf[i].events = (short)nfs_which_events(cs[i].nfs);
			pf[i].revents = 0;
		}
		if (poll(pf, CONNS, 10000) <= 0)
			return -1;
		for (i = 0; i < CONNS; i++) {
			if (pf[i].revents && nfs_service(cs[i].nfs, pf[i].revents) < 0)
				return -1;
			if (cs[i].inflight || cs[i].next < cs[i].end)
				busy = 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const exports[] = {"/a=%D/a", NULL};
	static struct conn cs[CONNS];
	struct nfs_live live;
	char url[256];
	uint64_t bad = 0, errors = 0, done = 0;
	int i, rc, failures = 0;

	(void)argc;
	if ((rc = nfs_live_start(&live, argv[0], exports)) != 0) {
		fprintf(stderr, "cannot start nfs_serve: %d\n", rc);
		return 1;
	}
	snprintf(url, sizeof(url), "nfs://127.0.0.1/a?nfsport=%d&mountport=%d", live.port, live.port);
	for (i = 0; i < CONNS; i++) {
		struct nfs_url *u;

		cs[i].nfs = nfs_init_context();
		u = nfs_parse_url_dir(cs[i].nfs, url);
		if (!u || nfs_mount(cs[i].nfs, u->server, u->path) != 0) {
			fprintf(stderr, "mount %d: %s\n", i, nfs_get_error(cs[i].nfs));
			return 1;
		}
		nfs_destroy_url(u);
		if ((i == 0 ? nfs_creat(cs[i].nfs, "/shared", 0644, &cs[i].fh)
			    : nfs_open(cs[i].nfs, "/shared", O_RDWR, &cs[i].fh)) != 0) {
			fprintf(stderr, "open %d: %s\n", i, nfs_get_error(cs[i].nfs));
			return 1;
		}
		cs[i].base = (uint64_t)i * REGION;
	}
	if (phase(cs, true, 65536) || phase(cs, false, 65536) || phase(cs, true, 1u << 20) ||
	    phase(cs, false, 1u << 20)) {
		fprintf(stderr, "event loop failed\n");
		failures++;
	}
	for (i = 0; i < CONNS; i++) {
		bad += cs[i].bad;
		errors += cs[i].errors;
		done += cs[i].done;
		nfs_close(cs[i].nfs, cs[i].fh);
		nfs_destroy_context(cs[i].nfs);
	}
	nfs_live_stop(&live);
	if (bad || errors || done != CONNS * (2 * REGION / 65536 + 2 * REGION / (1u << 20)))
		failures++;
	fprintf(stderr, "%d connections: %llu I/Os, %llu errors, %llu bad blocks\n", CONNS,
		(unsigned long long)done, (unsigned long long)errors, (unsigned long long)bad);
	return failures ? 1 : 0;
}
