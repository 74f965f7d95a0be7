/* nfs4_lock_tool: a second NFSv4.1 client for the kernel-client suite
 * (tests/e2e/test_vm_nfs41.sh), on the suite's own client (nfs4_cl.c).
 *
 *   nfs4_lock_tool PORT /EXPORT/PATH HELD DONE
 *
 * Makes a session with the agent on 127.0.0.1:PORT, opens PATH (looked up
 * from the pseudo root) for reading and writing, takes a write lock over the
 * whole file, checks with LOCKT from another lock owner that the server
 * reports it, creates the file HELD, and keeps the lock (renewing the lease
 * with SEQUENCE) until the file DONE appears (at most 600 s); then LOCKU,
 * FREE_STATEID and CLOSE in one COMPOUND. Exit 0 when every step
 * answered NFS4_OK (LOCKT: NFS4ERR_DENIED naming this owner), 1 otherwise,
 * with what failed on stderr. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/agent/nfs4/nfs4_cl.h"

enum { OP_SEQUENCE = 53, OP_PUTROOTFH = 24, OP_LOOKUP = 15, OP_OPEN = 18, OP_PUTFH = 22, OP_GETFH = 10,
       OP_LOCK = 12, OP_LOCKT = 13, OP_LOCKU = 14, OP_CLOSE = 4, OP_FREE_STATEID = 45, DENIED = 10010 };

static struct nfs4_cl cl;
static uint32_t seq = 1;
static uint8_t fh[128];
static uint32_t fhlen;

static void begin(struct ut_buf *b, uint32_t nops)
{
	nfs4_cl_begin(&cl, b, 1, nops + 1);
	nfs4_cl_sequence(b, &cl, 0, seq++, false);
}

/* Send b; the COMPOUND's status, with cur after SEQUENCE's result. */
static uint32_t run(struct ut_buf *b, struct xdr_cur *cur)
{
	uint32_t n, st;

	if (nfs4_cl_send(&cl, b, cur) != 0)
		return 0xdead;
	st = nfs4_cl_res(cur, &n);
	if (nfs4_cl_op(cur, OP_SEQUENCE) != 0)
		return st ? st : 0xdead;
	nfs4_cl_sequence_res(cur);
	return st;
}

static int fail(const char *what, uint32_t st)
{
	fprintf(stderr, "nfs4_lock_tool: %s: status %u\n", what, st);
	return 1;
}

int main(int argc, char **argv)
{
	struct ut_buf b;
	struct xdr_cur cur;
	struct nfs4_sid open_sid, lock_sid;
	struct nfs4_cl_denied d;
	char owner[64], path[512], *p, *name, *last;
	uint32_t st, got = 0;
	time_t t0, renewed;

	if (argc != 5) {
		fprintf(stderr, "usage: nfs4_lock_tool PORT /EXPORT/PATH HELD DONE\n");
		return 2;
	}
	snprintf(owner, sizeof(owner), "aquifer-lock-tool-%d", (int)getpid());
	if (nfs4_cl_dial(&cl, atoi(argv[1])) != 0)
		return fail("connect", 0);
	if ((st = nfs4_cl_session(&cl, owner, 4, &got)) != 0)
		return fail("EXCHANGE_ID / CREATE_SESSION", st);

	/* PUTROOTFH, LOOKUP of each directory, OPEN of the last name, GETFH */
	snprintf(path, sizeof(path), "%s", argv[2]);
	last = strrchr(path, '/');
	if (!last || !last[1])
		return fail("the path names no file", 0);
	*last++ = '\0';
	{
		uint32_t ndirs = 0;

		for (p = path; *p; p++)
			ndirs += *p == '/';
		begin(&b, 3 + ndirs);
		nfs4_cl_putrootfh(&b);
		for (name = strtok(path, "/"); name; name = strtok(NULL, "/"))
			nfs4_cl_lookup(&b, name);
		nfs4_cl_open_nocreate(&b, "tool-open", last, 3);
		nfs4_cl_getfh(&b);
		if ((st = run(&b, &cur)) != 0)
			return fail("PUTROOTFH / LOOKUP / OPEN", st);
		(void)nfs4_cl_op(&cur, OP_PUTROOTFH);
		for (uint32_t i = 0; i < ndirs; i++)
			(void)nfs4_cl_op(&cur, OP_LOOKUP);
		(void)nfs4_cl_op(&cur, OP_OPEN);
		nfs4_cl_open_res(&cur, &open_sid);
		(void)nfs4_cl_op(&cur, OP_GETFH);
		{
			const uint8_t *f = xdr_opaque(&cur, sizeof(fh), &fhlen);

			if (!f || cur.err)
				return fail("GETFH", 0xdead);
			memcpy(fh, f, fhlen);
		}
	}

	begin(&b, 2);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_lock(&b, &cl, 2, 0, UINT64_MAX, &open_sid, "tool-lock");
	if ((st = run(&b, &cur)) != 0)
		return fail("LOCK WRITE_LT 0..EOF", st);
	(void)nfs4_cl_op(&cur, OP_PUTFH);
	(void)nfs4_cl_op(&cur, OP_LOCK);
	nfs4_cl_get_sid(&cur, &lock_sid);

	begin(&b, 2);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_lockt(&b, &cl, 2, 0, 1, "tool-other");
	st = run(&b, &cur);
	(void)nfs4_cl_op(&cur, OP_PUTFH);
	(void)nfs4_cl_op(&cur, OP_LOCKT);
	nfs4_cl_denied(&cur, &d);
	if (st != DENIED || d.clientid != cl.clientid || strcmp(d.owner, "tool-lock") != 0 || d.off != 0 ||
	    d.len != UINT64_MAX || d.type != 2)
		return fail("LOCKT from another owner names the holder", st);

	fclose(fopen(argv[3], "w"));
	printf("held %s\n", argv[2]);
	fflush(stdout);
	t0 = renewed = time(NULL);
	while (access(argv[4], F_OK) != 0) {
		if (time(NULL) - t0 > 600)
			return fail("DONE never came", 0);
		if (time(NULL) - renewed >= 15) {
			begin(&b, 0);
			if ((st = run(&b, &cur)) != 0)
				return fail("SEQUENCE (lease renewal)", st);
			renewed = time(NULL);
		}
		usleep(100000);
	}

	begin(&b, 4);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_locku(&b, 2, &lock_sid, 0, UINT64_MAX);
	lock_sid.seqid = 0; /* FREE_STATEID after LOCKU: seqid 0 names the current one */
	nfs4_cl_free_stateid(&b, &lock_sid);
	nfs4_cl_close_op(&b, &open_sid);
	if ((st = run(&b, &cur)) != 0)
		return fail("LOCKU / FREE_STATEID / CLOSE", st);
	printf("released\n");
	nfs4_cl_close(&cl);
	return 0;
}
