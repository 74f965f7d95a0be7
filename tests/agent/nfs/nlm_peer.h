/* nlm_peer: the peers of tests/agent/nfs/test_nlm.c.
 *
 * fake: a fake NFSv3 client host on a loopback TCP port (fake.port), served
 * by a thread between fake_start and fake_stop: its portmapper answers
 * GETPORT with fake.port (0 when fake.reachable is false), its lock manager
 * counts NLM4_GRANTED calls (fake.granted, the lock's svid, offset and
 * length) and answers fake.answer, its status monitor counts SM_NOTIFY
 * (fake.notified, the mon_name and state). wait_for polls a counter.
 *
 * v4: an NFSv4.1 client (nfs4_cl.c) with a session and export a's file f
 * open for reading and writing (v4_open on the server's port); v4_lock takes
 * (first: as a new lock owner) or releases a write lock, answering the
 * operation's status and filling *d on NFS4ERR_DENIED. */
#ifndef AQ_TESTS_NLM_PEER_H
#define AQ_TESTS_NLM_PEER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include "tests/agent/nfs4/nfs4_cl.h"

enum { GRANTED = 0, DENIED = 1, NOLOCKS = 2, BLOCKED = 3, GRACE = 4, ROFS = 6, STALE = 7, FBIG = 8, FAILED = 9 };

struct nlm_fake {
	int lfd, port;
	pthread_t thr;
	atomic_bool stop;
	atomic_bool reachable;   /* GETPORT answers our port, else 0 */
	atomic_uint answer;      /* what GRANTED answers */
	atomic_int granted, notified;
	atomic_uint g_svid;
	atomic_ullong g_off, g_len;
	char notify_name[64];
	atomic_uint notify_state;
};
extern struct nlm_fake fake;

void fake_start(void);
void fake_stop(void);
/* Wait up to ms for *v to reach at least want. */
bool wait_for(atomic_int *v, int want, int ms);

struct v4 {
	struct nfs4_cl c;
	uint32_t seq;
	uint8_t fh[128];
	uint32_t fhlen;
	struct nfs4_sid open, lock;
	struct ut_buf b;
	struct xdr_cur cur;
};
void v4_open(struct v4 *l, int port);
uint32_t v4_lock(struct v4 *l, bool unlock, bool first, uint64_t off, uint64_t len, struct nfs4_cl_denied *d);

/* Does the file at path contain needle (within its first 8 KiB)? */
bool file_has(const char *path, const char *needle);

#endif
