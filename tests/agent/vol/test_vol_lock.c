/* test_vol_lock: agent/vol/vol_lock.c, the protocol-neutral byte-range lock
 * and share-reservation table: overlaps (points, "to the end", the 2^64
 * edge), Windows stacking and exact unlock, POSIX upgrade/downgrade, split
 * and merge, I/O tests against mandatory locks, share conflicts and
 * replacement, the per-volume and per-node caps, and release of an owner
 * and of a client; waiters: woken by every release on their file (unlock,
 * POSIX unlock, owner and client release, whatever the protocol), not by
 * other files or reservations, never after unwait, capped per node;
 * probing without taking (NFSv4 LOCKT) across an NFSv4 and an SMB owner,
 * and the locks an owner holds.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>

#include "agent/vol/vol_lock.h"
#include "tests/lib/aqt.h"

static struct vol_lock_tab *t;
static const struct vol_lock_key F1 = { .fsid = 7, .dev = 1, .ino = 100 };
static const struct vol_lock_key F2 = { .fsid = 7, .dev = 1, .ino = 101 };
static const struct vol_lock_key G1 = { .fsid = 8, .dev = 1, .ino = 100 };
static const struct vol_lock_owner A = { .proto = VOL_LOCK_SMB, .client = 1, .id = 10 };
static const struct vol_lock_owner B = { .proto = VOL_LOCK_SMB, .client = 1, .id = 11 };
static const struct vol_lock_owner C = { .proto = VOL_LOCK_SMB, .client = 2, .id = 10 };
static const struct vol_lock_owner N = { .proto = VOL_LOCK_NFS4, .client = 1, .id = 10 };

#define X VOL_LOCK_F_EXCL
#define P VOL_LOCK_F_POSIX

static void setup(void)
{
	ck_assert_int_eq(vol_lock_new(0, 0, &t), 0);
}

static void teardown(void)
{
	vol_lock_free(t);
	t = NULL;
}

START_TEST(test_overlaps)
{
	struct vol_lock_desc d;

	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 100, 10, X, NULL), 0);
	/* touching ranges do not overlap; one byte in does */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 110, 5, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 90, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 109, 1, 0, &d), -EAGAIN);
	ck_assert(d.owner.id == A.id && d.start == 100 && d.len == 10 && (d.flags & X));
	/* shared vs shared: fine; shared vs exclusive: not */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 200, 10, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 205, 10, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 209, 1, X, NULL), -EAGAIN);
	/* another file, another volume: independent */
	ck_assert_int_eq(vol_lock_lock(t, &F2, &B, 100, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &B, 100, 10, X, NULL), 0);
	/* a zero-length point conflicts only strictly inside a range */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 100, 0, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 105, 0, X, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 100, 0, X, NULL), 0);  /* points never meet */
	/* "to the end" covers up to 2^64; start + len past 2^64 is refused */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 1000, VOL_LOCK_EOF, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, UINT64_MAX - 1, 1, 0, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, UINT64_MAX, 1, 0, NULL), -EAGAIN);  /* ends at 2^64 exactly */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, UINT64_MAX, 2, 0, NULL), -EINVAL);
	ck_assert_int_eq(vol_lock_lock(t, &F2, &B, 1, UINT64_MAX - 1, 0, NULL), 0);  /* [1, 2^64) */
	/* the same non-zero range always overlaps */
	ck_assert_int_eq(vol_lock_lock(t, &G1, &C, 100, 10, 0, NULL), -EAGAIN);
}
END_TEST

START_TEST(test_windows_stack_and_unlock)
{
	/* a shared lock stacks over its owner's exclusive one; not the reverse,
	 * and not a second exclusive one */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 0, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 0, 10, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 0, 10, X, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 20, 10, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 20, 10, X, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 20, 10, 0, NULL), 0);  /* shared stacks twice */
	ck_assert_uint_eq(vol_lock_count(t, &F1), 4);
	/* unlock names one held entry exactly */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 0, 5, 0), -ENOENT);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &B, 0, 10, 0), -ENOENT);   /* not B's */
	ck_assert_int_eq(vol_lock_unlock(t, &F2, &A, 0, 10, 0), -ENOENT);   /* nothing on F2 */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 20, 10, 0), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 20, 10, 0), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 20, 10, 0), -ENOENT);
	/* the exclusive entry goes first (it was granted first), the shared one stays */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 0, 10, 0), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 0, 10, X, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 0, 10, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &B, 0, 10, 0), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 0, 10, 0), 0);
	ck_assert_uint_eq(vol_lock_count(t, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 0, 10, X, NULL), 0);
}
END_TEST

START_TEST(test_io_test)
{
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 100, 100, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 300, 100, 0, NULL), 0);
	/* the holder of the exclusive lock reads and writes it; others do neither */
	ck_assert_int_eq(vol_lock_test(t, &F1, &A, 150, 10, true), 0);
	ck_assert_int_eq(vol_lock_test(t, &F1, &B, 150, 10, false), -EAGAIN);
	ck_assert_int_eq(vol_lock_test(t, &F1, &B, 0, 101, true), -EAGAIN);
	ck_assert_int_eq(vol_lock_test(t, &F1, &B, 0, 100, true), 0);
	ck_assert_int_eq(vol_lock_test(t, &F1, &B, 150, 0, true), 0);  /* no bytes, no conflict */
	/* a shared lock lets everyone read and no one write, its owner neither */
	ck_assert_int_eq(vol_lock_test(t, &F1, &B, 350, 10, false), 0);
	ck_assert_int_eq(vol_lock_test(t, &F1, &B, 350, 10, true), -EAGAIN);
	ck_assert_int_eq(vol_lock_test(t, &F1, &A, 350, 10, true), -EAGAIN);
	/* POSIX locks are advisory: I/O passes them */
	ck_assert_int_eq(vol_lock_lock(t, &F2, &N, 0, VOL_LOCK_EOF, X | P, NULL), 0);
	ck_assert_int_eq(vol_lock_test(t, &F2, &B, 0, 10, true), 0);
	/* but they conflict with Windows locks as locks */
	ck_assert_int_eq(vol_lock_lock(t, &F2, &B, 5, 1, 0, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 150, 1, P, NULL), -EAGAIN);
}
END_TEST

START_TEST(test_posix_upgrade_downgrade)
{
	struct vol_lock_desc d;

	/* shared [0,100), upgrade [40,60) to exclusive: three entries */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 0, 100, P, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 40, 20, X | P, NULL), 0);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 3);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 10, 10, 0, NULL), 0);      /* shared part */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 50, 1, 0, &d), -EAGAIN);    /* exclusive part */
	ck_assert(d.start == 40 && d.len == 20 && d.owner.proto == VOL_LOCK_NFS4);
	/* an upgrade that meets another owner's lock is refused and changes nothing */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 0, 100, X | P, NULL), -EAGAIN);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 4);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &C, 10, 10, 0), 0);
	/* downgrade [40,60) back: the three merge into one shared [0,100) */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 40, 20, P, NULL), 0);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 1);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 99, 1, X, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 100, 1, X, NULL), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &C, 100, 1, 0), 0);
	/* the whole range exclusive, to the end */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 0, VOL_LOCK_EOF, X | P, NULL), 0);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 1);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, UINT64_MAX - 5, 1, 0, NULL), -EAGAIN);
	/* unlock the middle: a split in two; the hole is free */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 1000, 1000, P), 0);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 2);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 1000, 1000, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 999, 1, 0, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 2000, 1, 0, NULL), -EAGAIN);
	/* POSIX never takes a zero length (NLM's 0 is VOL_LOCK_EOF) */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 5, 0, P, NULL), -EINVAL);
}
END_TEST

START_TEST(test_posix_unlock_not_held)
{
	/* POSIX: unlocking what is not held is fine and changes nothing */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 0, 10, P), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 100, 10, X | P, NULL), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 0, 50, P), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 200, VOL_LOCK_EOF, P), 0);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 1);
	/* one byte off each end */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 100, 1, P), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 109, 1, P), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 100, 1, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 109, 1, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 101, 1, X, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 108, 1, X, NULL), -EAGAIN);
	/* another owner's unlock releases nothing of N's */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &B, 0, VOL_LOCK_EOF, P), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 105, 1, X, NULL), -EAGAIN);
	/* a Windows unlock of a range not held */
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &C, 100, 2, 0), -ENOENT);
}
END_TEST

START_TEST(test_share_conflicts)
{
	/* A reads and lets others read; B may read, not write */
	ck_assert_int_eq(vol_lock_share(t, &F1, &A, VOL_SHARE_READ, VOL_SHARE_WRITE | VOL_SHARE_DELETE), 0);
	ck_assert_int_eq(vol_lock_share(t, &F1, &B, VOL_SHARE_READ, 0), 0);
	ck_assert_int_eq(vol_lock_share(t, &F1, &C, VOL_SHARE_WRITE, 0), -EBUSY);
	ck_assert_int_eq(vol_lock_share(t, &F1, &C, VOL_SHARE_DELETE, 0), -EBUSY);
	/* deny read while A and B read: refused */
	ck_assert_int_eq(vol_lock_share(t, &F1, &C, VOL_SHARE_READ, VOL_SHARE_READ), -EBUSY);
	/* attributes only: never checked, never kept */
	ck_assert_int_eq(vol_lock_share(t, &F1, &C, 0, VOL_SHARE_ALL), 0);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 2);
	/* another file is free */
	ck_assert_int_eq(vol_lock_share(t, &F2, &C, VOL_SHARE_WRITE, VOL_SHARE_ALL), 0);
	/* an owner's new reservation replaces its old one (NFSv4 downgrade):
	 * A stops denying write, C may write */
	ck_assert_int_eq(vol_lock_share(t, &F1, &A, VOL_SHARE_READ, 0), 0);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 3); /* volume 7: two on F1, one on F2 */
	ck_assert_int_eq(vol_lock_share(t, &F1, &C, VOL_SHARE_WRITE, 0), 0);
	/* an upgrade that meets another's deny is refused, the old one stays */
	ck_assert_int_eq(vol_lock_share(t, &F2, &A, VOL_SHARE_READ, 0), -EBUSY);
	ck_assert_int_eq(vol_lock_share(t, &F1, &C, VOL_SHARE_WRITE, VOL_SHARE_READ), -EBUSY);
	ck_assert_int_eq(vol_lock_share(t, &F1, &N, VOL_SHARE_READ, VOL_SHARE_WRITE), -EBUSY); /* C writes */
	vol_lock_release(t, &C);
	ck_assert_int_eq(vol_lock_share(t, &F1, &N, VOL_SHARE_READ, VOL_SHARE_WRITE), 0);
	ck_assert_int_eq(vol_lock_share(t, &F2, &A, VOL_SHARE_READ, 0), 0);
}
END_TEST

START_TEST(test_caps)
{
	struct vol_lock_tab *small;

	vol_lock_free(t);
	ck_assert_int_eq(vol_lock_new(3, 5, &small), 0);
	t = small;
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 0, 1, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F2, &A, 0, 1, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_share(t, &F1, &A, VOL_SHARE_READ, 0), 0);
	/* volume 7 is full: locks and reservations refused, others still served */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 10, 1, 0, NULL), -ENOLCK);
	ck_assert_int_eq(vol_lock_share(t, &F2, &A, VOL_SHARE_READ, 0), -ENOLCK);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 3);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &A, 0, 1, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &A, 5, 1, 0, NULL), 0);
	/* the node is full */
	ck_assert_int_eq(vol_lock_lock(t, &G1, &A, 10, 1, 0, NULL), -ENOLCK);
	ck_assert_uint_eq(vol_lock_count(t, NULL), 5);
	/* replacing a reservation and merging POSIX ranges need no room */
	ck_assert_int_eq(vol_lock_share(t, &F1, &A, VOL_SHARE_WRITE, 0), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &G1, &A, 5, 1, 0), 0);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &N, 100, 10, P, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &N, 110, 10, P, NULL), -ENOLCK); /* would need a 6th first */
	ck_assert_int_eq(vol_lock_lock(t, &G1, &N, 100, 20, P, NULL), 0);        /* covers it: in place */
	/* a POSIX split past the cap is refused and changes nothing */
	ck_assert_int_eq(vol_lock_unlock(t, &G1, &N, 105, 5, P), -ENOLCK);
	/* freed entries are room again */
	vol_lock_release(t, &A);
	ck_assert_uint_eq(vol_lock_count(t, NULL), 1);
	ck_assert_uint_eq(vol_lock_count(t, &F1), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &G1, &N, 105, 5, P), 0);
	ck_assert_uint_eq(vol_lock_count(t, &G1), 2);
}
END_TEST

START_TEST(test_release)
{
	/* A and B on connection 1, C on connection 2 */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 0, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F2, &A, 0, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_share(t, &F1, &A, VOL_SHARE_READ, VOL_SHARE_ALL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 20, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &C, 0, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &N, 20, 10, X | P, NULL), 0);  /* NFS4 client 1: not SMB's */
	ck_assert_uint_eq(vol_lock_count(t, NULL), 6);
	/* the open A goes: all its locks and its reservation, nothing else */
	vol_lock_release(t, &A);
	ck_assert_uint_eq(vol_lock_count(t, NULL), 3);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 0, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F2, &C, 0, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_share(t, &F1, &C, VOL_SHARE_WRITE, 0), 0);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 25, 1, 0, NULL), -EAGAIN);
	/* SMB connection 1 goes: B too; NFS4 client 1 and connection 2 stay */
	vol_lock_release_client(t, VOL_LOCK_SMB, 1);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 25, 1, 0, NULL), 0);
	ck_assert_int_eq(vol_lock_lock(t, &G1, &B, 25, 1, 0, NULL), -EAGAIN);
	ck_assert_uint_eq(vol_lock_count(t, NULL), 6);
	vol_lock_release_client(t, VOL_LOCK_SMB, 2);
	vol_lock_release_client(t, VOL_LOCK_NFS4, 1);
	ck_assert_uint_eq(vol_lock_count(t, NULL), 0);
	ck_assert_uint_eq(vol_lock_count(t, &G1), 0);
}
END_TEST

struct tw {
	struct vol_lock_waiter w;
	int wakes;
};

static void tw_wake(struct vol_lock_waiter *w)
{
	((struct tw *)w->arg)->wakes++;
}

static void tw_init(struct tw *x, const struct vol_lock_key *k)
{
	*x = (struct tw){ .w = { .key = *k, .wake = tw_wake } };
	x->w.arg = x;
}

START_TEST(test_waiters)
{
	static struct tw many[VOL_LOCK_WAIT_MAX];
	struct tw a, b;

	tw_init(&a, &F1);
	tw_init(&b, &F2);
	ck_assert_int_eq(vol_lock_wait(t, &a.w), 0);
	ck_assert_int_eq(vol_lock_wait(t, &a.w), 0); /* registered once */
	ck_assert_int_eq(vol_lock_wait(t, &b.w), 0);
	ck_assert_uint_eq(vol_lock_waiters(t), 2);
	/* a Windows unlock of F1 wakes F1's waiter only; a refused one wakes none */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 0, 10, X, NULL), 0);
	ck_assert_int_eq(a.wakes, 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 0, 9, 0), -ENOENT);
	ck_assert_int_eq(a.wakes, 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 0, 10, 0), 0);
	ck_assert_int_eq(a.wakes, 1);
	ck_assert_int_eq(b.wakes, 0);
	/* another protocol's POSIX unlock wakes it too */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 0, 10, X | P, NULL), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 0, 5, P), 0);
	ck_assert_int_eq(a.wakes, 2);
	/* release of an owner and of a client */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &B, 20, 1, X, NULL), 0);
	vol_lock_release(t, &B);
	ck_assert_int_eq(a.wakes, 3);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &C, 30, 1, X, NULL), 0);
	vol_lock_release_client(t, VOL_LOCK_SMB, 2);
	ck_assert_int_eq(a.wakes, 4);
	/* a reservation going is no lock released */
	ck_assert_int_eq(vol_lock_share(t, &F1, &A, VOL_SHARE_READ, 0), 0);
	vol_lock_release(t, &A);
	ck_assert_int_eq(a.wakes, 4);
	/* after unwait, never again */
	vol_lock_unwait(t, &a.w);
	vol_lock_unwait(t, &a.w);
	ck_assert_uint_eq(vol_lock_waiters(t), 1);
	vol_lock_release(t, &N);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 0, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &A, 0, 10, 0), 0);
	ck_assert_int_eq(a.wakes, 4);
	vol_lock_unwait(t, &b.w);
	/* the per-node cap */
	for (size_t i = 0; i < VOL_LOCK_WAIT_MAX; i++) {
		tw_init(&many[i], &G1);
		ck_assert_int_eq(vol_lock_wait(t, &many[i].w), 0);
	}
	ck_assert_int_eq(vol_lock_wait(t, &a.w), -ENOLCK);
	vol_lock_unwait(t, &many[0].w);
	ck_assert_int_eq(vol_lock_wait(t, &a.w), 0);
	for (size_t i = 1; i < VOL_LOCK_WAIT_MAX; i++)
		vol_lock_unwait(t, &many[i].w);
	vol_lock_unwait(t, &a.w);
	ck_assert_uint_eq(vol_lock_waiters(t), 0);
}
END_TEST

START_TEST(test_probe_held)
{
	static const struct vol_lock_owner N2 = { .proto = VOL_LOCK_NFS4, .client = 2, .id = 20 };
	struct vol_lock_desc d;

	/* an NFSv4 (POSIX) write lock and an SMB (Windows) lock see each other */
	ck_assert_int_eq(vol_lock_lock(t, &F1, &N, 100, 50, X | P, NULL), 0);
	ck_assert_int_eq(vol_lock_probe(t, &F1, &A, 120, 1, 0, &d), -EAGAIN);
	ck_assert(d.owner.proto == VOL_LOCK_NFS4 && d.owner.id == N.id && d.start == 100 && d.len == 50);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 120, 1, 0, NULL), -EAGAIN);
	ck_assert_int_eq(vol_lock_lock(t, &F1, &A, 150, 10, X, NULL), 0);
	ck_assert_int_eq(vol_lock_probe(t, &F1, &N2, 155, 1, P, &d), -EAGAIN);
	ck_assert(d.owner.proto == VOL_LOCK_SMB && d.start == 150 && d.len == 10);
	/* probing takes nothing; its own locks are no conflict to an owner */
	ck_assert_int_eq(vol_lock_probe(t, &F1, &N2, 0, 100, X | P, NULL), 0);
	ck_assert_int_eq(vol_lock_probe(t, &F1, &N, 0, VOL_LOCK_EOF, X | P, NULL), -EAGAIN); /* A's at 150 */
	ck_assert_int_eq(vol_lock_probe(t, &F1, &N, 0, 150, X | P, NULL), 0);
	ck_assert_uint_eq(vol_lock_count(t, NULL), 2);
	ck_assert_int_eq(vol_lock_probe(t, &F1, &N, 0, 0, P, NULL), -EINVAL);
	/* held: locks only, per owner and file */
	ck_assert_int_eq(vol_lock_share(t, &F1, &N2, VOL_SHARE_READ, 0), 0);
	ck_assert_uint_eq(vol_lock_held(t, &F1, &N), 1);
	ck_assert_uint_eq(vol_lock_held(t, &F1, &N2), 0);
	ck_assert_uint_eq(vol_lock_held(t, &F2, &N), 0);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 110, 10, P), 0);  /* split in two */
	ck_assert_uint_eq(vol_lock_held(t, &F1, &N), 2);
	ck_assert_int_eq(vol_lock_unlock(t, &F1, &N, 0, VOL_LOCK_EOF, P), 0);
	ck_assert_uint_eq(vol_lock_held(t, &F1, &N), 0);
	ck_assert_int_eq(vol_lock_probe(t, &F1, &A, 120, 1, X, NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vol_lock");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_overlaps);
	tcase_add_test(tc, test_windows_stack_and_unlock);
	tcase_add_test(tc, test_io_test);
	tcase_add_test(tc, test_posix_upgrade_downgrade);
	tcase_add_test(tc, test_posix_unlock_not_held);
	tcase_add_test(tc, test_share_conflicts);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_release);
	tcase_add_test(tc, test_waiters);
	tcase_add_test(tc, test_probe_held);
	suite_add_tcase(s, tc);
	return aqt_run(s);
}
