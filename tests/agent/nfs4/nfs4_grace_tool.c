/* nfs4_grace_tool: an NFSv4.1 client for tests/e2e/test_lock_failover.sh
 * (locks across a drain and a kill -9 of real agents), on the suite's own
 * client (nfs4_cl.c). Every command makes a session on 127.0.0.1:PORT as
 * client OWNER (co_ownerid), AUTH_SYS root.
 *
 *   nfs4_grace_tool lock PORT /SHARE/FILE OWNER OFF LEN
 *       open FILE (created when missing) and take a write lock; prints
 *       "fh HEX" (the file's handle) and exits 0 when granted, else prints
 *       the status and exits 1. The state stays (no unlock, no close).
 *   nfs4_grace_tool try PORT /SHARE/FILE OWNER OFF LEN
 *       the same, printing only the LOCK's status (0, 10010 DENIED,
 *       10013 GRACE); exits 0 when the COMPOUND got an answer.
 *   nfs4_grace_tool reclaim PORT FHHEX OWNER OFF LEN
 *       OPEN CLAIM_PREVIOUS of the handle, LOCK with reclaim, then
 *       RECLAIM_COMPLETE; prints the three statuses; exits 0 when all are 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/agent/nfs4/nfs4_cl.h"
#include "util/ut_hex.h"

enum { OP_SEQUENCE = 53, OP_PUTROOTFH = 24, OP_LOOKUP = 15, OP_OPEN = 18, OP_PUTFH = 22, OP_GETFH = 10,
       OP_LOCK = 12, OP_RECLAIM_COMPLETE = 58, BROKEN = 0xdead };

static struct nfs4_cl cl;
static uint32_t seq = 1;

static void begin(struct ut_buf *b, uint32_t nops)
{
	nfs4_cl_begin(&cl, b, 1, nops + 1);
	nfs4_cl_sequence(b, &cl, 0, seq++, false);
}

static bool run(struct ut_buf *b, struct xdr_cur *cur)
{
	uint32_t n;

	if (nfs4_cl_send(&cl, b, cur) != 0)
		return false;
	(void)nfs4_cl_res(cur, &n);
	if (nfs4_cl_op(cur, OP_SEQUENCE) != 0)
		return false;
	nfs4_cl_sequence_res(cur);
	return !cur->err;
}

/* OPEN (create) of /SHARE/FILE, then LOCK; *fh gets the handle. */
static uint32_t open_lock(const char *path, uint64_t off, uint64_t len, uint8_t *fh, uint32_t *fhlen)
{
	char share[256], *file;
	struct ut_buf b;
	struct xdr_cur cur;
	struct nfs4_sid open;
	const uint8_t *p;
	uint32_t st;

	snprintf(share, sizeof(share), "%s", path[0] == '/' ? path + 1 : path);
	if (!(file = strchr(share, '/')))
		return BROKEN;
	*file++ = 0;
	begin(&b, 5);
	nfs4_cl_putrootfh(&b);
	nfs4_cl_lookup(&b, share);
	nfs4_cl_open_create(&b, "open-owner", file, 0666);
	nfs4_cl_getfh(&b);
	nfs4_cl_lock_ex(&b, &cl, 2, false, off, len, &(struct nfs4_sid){ .seqid = 1 }, "lock-owner");
	if (!run(&b, &cur) || nfs4_cl_op(&cur, OP_PUTROOTFH) || nfs4_cl_op(&cur, OP_LOOKUP))
		return BROKEN;
	if ((st = nfs4_cl_op(&cur, OP_OPEN)) != 0)
		return st;
	nfs4_cl_open_res(&cur, &open);
	if (nfs4_cl_op(&cur, OP_GETFH) || !(p = xdr_opaque(&cur, 128, fhlen)))
		return BROKEN;
	memcpy(fh, p, *fhlen);
	return nfs4_cl_op(&cur, OP_LOCK);
}

static uint32_t reclaim(const uint8_t *fh, uint32_t fhlen, uint64_t off, uint64_t len, uint32_t *lock_st,
			uint32_t *rc_st)
{
	struct ut_buf b;
	struct xdr_cur cur;
	struct nfs4_sid open;
	uint32_t st;

	*lock_st = *rc_st = BROKEN;
	begin(&b, 2);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_open_previous(&b, "open-owner", 3);
	if (!run(&b, &cur) || nfs4_cl_op(&cur, OP_PUTFH))
		return BROKEN;
	if ((st = nfs4_cl_op(&cur, OP_OPEN)) != 0)
		return st;
	nfs4_cl_open_res(&cur, &open);
	begin(&b, 2);
	nfs4_cl_putfh(&b, fh, fhlen);
	nfs4_cl_lock_ex(&b, &cl, 2, true, off, len, &open, "lock-owner");
	if (!run(&b, &cur) || nfs4_cl_op(&cur, OP_PUTFH))
		return 0;
	*lock_st = nfs4_cl_op(&cur, OP_LOCK);
	begin(&b, 1);
	nfs4_cl_reclaim_complete(&b);
	if (run(&b, &cur))
		*rc_st = nfs4_cl_op(&cur, OP_RECLAIM_COMPLETE);
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t fh[128];
	uint32_t fhlen = 0, got, st, lst, cst;
	uint64_t off, len;
	char hex[300];
	size_t n;

	if (argc != 7) {
		fprintf(stderr, "usage: nfs4_grace_tool lock|try|reclaim PORT PATH|FHHEX OWNER OFF LEN\n");
		return 2;
	}
	off = strtoull(argv[5], NULL, 10);
	len = strtoull(argv[6], NULL, 10);
	if (nfs4_cl_dial(&cl, (int)strtol(argv[2], NULL, 10)) != 0 || (st = nfs4_cl_session(&cl, argv[4], 4, &got)) != 0) {
		fprintf(stderr, "nfs4_grace_tool: no session\n");
		return 1;
	}
	if (!strcmp(argv[1], "reclaim")) {
		if (ut_hex_decode(argv[3], strlen(argv[3]), fh, sizeof(fh), &n) != AQ_OK)
			return 2;
		st = reclaim(fh, (uint32_t)n, off, len, &lst, &cst);
		printf("open %u lock %u reclaim_complete %u\n", st, lst, cst);
		return st == 0 && lst == 0 && cst == 0 ? 0 : 1;
	}
	st = open_lock(argv[3], off, len, fh, &fhlen);
	if (!strcmp(argv[1], "try")) {
		printf("%u\n", st);
		return st == BROKEN ? 1 : 0;
	}
	if (st != 0) {
		printf("status %u\n", st);
		return 1;
	}
	ut_hex_encode(fh, fhlen, hex, sizeof(hex));
	printf("fh %s\n", hex);
	nfs4_cl_close(&cl);
	return 0;
}
