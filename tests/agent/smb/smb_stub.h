/* smb_stub: the cold tier stub the SMB suites share (test_smb_read,
 * test_smb_frame, test_smb_ra_open, test_smb_trunc). Installed on a store
 * (vol_store_set_tier(store, &smbt_stub_ops, NULL)), it says the files
 * smbt_stub.cold_ino[] are cold (so the loop's vol_read_nowait refuses
 * them) and holds the calling thread in every read, write's tier work and
 * truncate of smbt_stub.stall_ino until smbt_stub_release() (or
 * SMBT_STUB_HOLD_S pass: a server that waited on its loop fails the test's
 * checks instead of hanging). Every byte stays in the file: the store
 * reads it after the stub. One stub per test program (static state);
 * smbt_stub_reset() before each case.
 */
#ifndef AQ_TESTS_SMB_STUB_H
#define AQ_TESTS_SMB_STUB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/vol/vol.h"

#define SMBT_STUB_HOLD_S 8

struct smbt_stub {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	ino_t cold_ino[2];
	ino_t stall_ino;
	bool go;
	unsigned inside, max_inside, ended; /* threads held now, at most, released */
	unsigned cold_reads;                /* reads of a cold file asked of the stub */
	unsigned truncs;                    /* truncates of a cold file asked of the stub */
	unsigned writes;                    /* write_begin calls (a store write each) */
	size_t write_len_max;               /* the longest range one of them named */
};

extern struct smbt_stub smbt_stub;
extern const struct vol_tier_ops smbt_stub_ops;

/* Nothing cold, nothing stalled, the counters at 0. */
void smbt_stub_reset(void);
/* smbt_export_up (smb_harness.h) with the stub installed as the store's
 * tier and reset: a case's setup. Undo with smbt_stub_down, which lets what
 * still waits in the stub go first, then smbt_export_down. */
struct aqt_store;
struct smb_srv;
void smbt_stub_up(struct aqt_store *ts, struct smb_srv **srv, struct vol_export **exp0);
void smbt_stub_down(struct aqt_store *ts, struct smb_srv *srv, struct vol_export *exp0);
/* Let every held thread go (and the later ones pass). */
void smbt_stub_release(void);
/* A field of smbt_stub read under its mutex. */
unsigned smbt_stub_get(const unsigned *field);
/* Wait (up to 5 s) until the stub holds n threads; fails the test if not. */
void smbt_stub_wait_inside(unsigned n);
/* CLOCK_MONOTONIC in seconds. */
double smbt_now_s(void);
/* Byte i of the content smbt_file_make gives name. */
uint8_t smbt_pattern(const char *name, uint64_t i);
/* Create name in e's root through the store with len bytes of its pattern:
 * its inode. */
ino_t smbt_file_make(struct vol_export *e, const char *name, size_t len);

#endif
